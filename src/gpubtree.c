/*
 * gpubtree.c
 *	  Module entry point: defines the settings (settings.c) and installs the
 *	  hooks.
 *
 * Nothing here touches CUDA: this file also runs in the postmaster when the
 * library is in shared_preload_libraries, and a CUDA context must never be
 * created there (it would not survive fork()).
 */
#include "postgres.h"

#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "tcop/utility.h"

#include "agg_node.h"
#include "backend.h"
#include "build.h"
#include "capture.h"
#include "lookup.h"
#include "resync.h"
#include "service.h"
#include "settings.h"
#include "shmem.h"

PG_MODULE_MAGIC;

static object_access_hook_type prev_object_access_hook = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static ProcessUtility_hook_type prev_ProcessUtility_hook = NULL;

void		_PG_init(void);

/*
 * DROP of an index (also through its table) or of a database: make its
 * mirrors unusable, so that the service frees them and no later object that
 * happens to reuse the identifiers can meet them.  An index's at commit,
 * while the DROP's lock still keeps everyone else away: a DROP that rolls
 * back leaves the mirror usable.
 */
static void
gbt_object_access(ObjectAccessType access, Oid classId, Oid objectId,
				  int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access != OAT_DROP || subId != 0)
		return;
	gbt_capture_before_drop(classId, objectId);
	if (classId == RelationRelationId)
		gbt_invalidate_at_commit(MyDatabaseId, objectId);
	else if (classId == DatabaseRelationId)
		gbt_invalidate(objectId, InvalidOid);
}

/* Build workers leave a database that a command needs; capture triggers around each. */
static void
gbt_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					ProcessUtilityContext context, ParamListInfo params,
					QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	gbt_builders_before_utility(pstmt->utilityStmt);
	gbt_capture_before_utility(pstmt->utilityStmt);
	if (prev_ProcessUtility_hook)
		prev_ProcessUtility_hook(pstmt, queryString, readOnlyTree, context, params,
								 queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);
	gbt_capture_after_utility(pstmt->utilityStmt);
}

static void
gbt_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	gbt_service_shmem_request();
	gbt_builder_shmem_request();
}

static void
gbt_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	gbt_service_shmem_startup();
	gbt_builder_shmem_startup();
	LWLockRelease(AddinShmemInitLock);
}

void
_PG_init(void)
{
	gbt_settings_init();

	/* The service needs shared memory, which only preloading can give. */
	if (process_shared_preload_libraries_in_progress)
	{
		prev_shmem_request_hook = shmem_request_hook;
		shmem_request_hook = gbt_shmem_request;
		prev_shmem_startup_hook = shmem_startup_hook;
		shmem_startup_hook = gbt_shmem_startup;
		gbt_service_register();
		gbt_resync_init();
		prev_ProcessUtility_hook = ProcessUtility_hook;
		ProcessUtility_hook = gbt_process_utility;
	}

	prev_object_access_hook = object_access_hook;
	object_access_hook = gbt_object_access;

	gpubtree_btree_label_init();
	gbt_explain_init();
	gbt_plan_init();
	gbt_aggplan_init();
	gbt_lookup_plan_init();
}
