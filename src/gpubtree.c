/*
 * gpubtree.c
 *	  Module entry point and configuration parameters.
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
#include "utils/guc.h"

#include "backend.h"
#include "build.h"
#include "resync.h"
#include "service.h"
#include "shmem.h"

PG_MODULE_MAGIC;

int			gpubtree_device_mode = GPUBTREE_DEVICE_AUTO;
int			gpubtree_mirror_memory_limit = -1;
int			gpubtree_batch_window = 0;
int			gpubtree_service_timeout = 5000;
int			gpubtree_min_gpu_batch = 1024;
bool		gpubtree_build_on_scan = true;
bool		gpubtree_build_after_create = false;
int			gpubtree_build_wait = 0;
int			gpubtree_debug_build_delay = 0;
bool		gpubtree_enable_aggregate = true;
int			gpubtree_change_log_size = 1 << 18;

static const struct config_enum_entry device_mode_options[] = {
	{"auto", GPUBTREE_DEVICE_AUTO, false},
	{"gpu", GPUBTREE_DEVICE_GPU, false},
	{"cpu", GPUBTREE_DEVICE_CPU, false},
	{"off", GPUBTREE_DEVICE_OFF, false},
	{NULL, 0, false}
};

static object_access_hook_type prev_object_access_hook = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

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
	if (classId == RelationRelationId)
		gbt_invalidate_at_commit(MyDatabaseId, objectId);
	else if (classId == DatabaseRelationId)
		gbt_invalidate(objectId, InvalidOid);
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
	DefineCustomEnumVariable("gpubtree.device",
							 "Where gpubtree answers bulk scans and aggregates.",
							 "auto uses a GPU when one is usable and the CPU engine otherwise; "
							 "gpu prefers the GPU but still falls back; cpu always uses the CPU engine; "
							 "off uses only the on-disk B-tree.",
							 &gpubtree_device_mode,
							 GPUBTREE_DEVICE_AUTO,
							 device_mode_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpubtree.mirror_memory_limit",
							"Memory all mirrors together may use: their bytes in the GPU's memory and in the service's.",
							"-1 (auto): three quarters of the GPU's memory, or a quarter of the server's "
							"when the service runs on the CPU engine.  Least recently used mirrors are evicted "
							"to stay under it; a mirror that cannot fit is never built.",
							&gpubtree_mirror_memory_limit,
							-1, -1, INT_MAX / 2,
							PGC_SIGHUP,
							GUC_UNIT_MB,
							NULL, NULL, NULL);

	/* Sizes shared memory: only settable when preloaded (no log otherwise). */
	if (process_shared_preload_libraries_in_progress)
		DefineCustomIntVariable("gpubtree.change_log_size",
								"Entries the shared change log holds (64 bytes each).",
								"Committed inserts wait there until the service applies them to the mirrors; "
								"when it is full, or a transaction logs more than an eighth of it for one index, "
								"mirrors are invalidated and rebuilt instead.",
								&gpubtree_change_log_size,
								1 << 18, 1 << 12, 1 << 24,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);

	DefineCustomIntVariable("gpubtree.batch_window",
							"How long the service waits for more requests before a launch.",
							"Requests from several sessions within the window share one batched launch.",
							&gpubtree_batch_window,
							0, 0, 100000,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpubtree.service_timeout",
							"How long a scan waits for the service before using nbtree instead.",
							NULL,
							&gpubtree_service_timeout,
							5000, 1, 3600 * 1000,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpubtree.min_gpu_batch",
							"Fewest distinct keys (= ANY elements) for which an = ANY bitmap scan goes to the service.",
							"Smaller batches, and single-key lookups, stay on nbtree, which is faster for them.",
							&gpubtree_min_gpu_batch,
							1024, 1, INT_MAX,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("gpubtree.build_on_scan",
							 "Have a mirror built in the background when a scan or aggregate finds none that is current.",
							 "The query itself is answered by nbtree (or the plan below) meanwhile.",
							 &gpubtree_build_on_scan,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("gpubtree.build_after_create",
							 "Build the mirror right after CREATE INDEX.",
							 "Otherwise the first scan or aggregate that could use it has it built in the background; on, CREATE INDEX takes longer.",
							 &gpubtree_build_after_create,
							 false,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpubtree.build_wait",
							"How long a query waits for the background build of a mirror it asked for.",
							"0 (the default): never; the query is answered without the mirror, and the next "
							"uses it.  For tests and scripts that need the mirror at once.",
							&gpubtree_build_wait,
							0, 0, 3600 * 1000,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpubtree.debug_build_delay",
							"Makes background mirror builds wait this long before they start (for tests).",
							NULL,
							&gpubtree_debug_build_delay,
							0, 0, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("gpubtree.enable_aggregate",
							 "Lets the planner answer range aggregates through the GPU service.",
							 "The GpubtreeAggregate plan node; off, aggregates use the ordinary plans.",
							 &gpubtree_enable_aggregate,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	MarkGUCPrefixReserved("gpubtree");

	/* The service needs shared memory, which only preloading can give. */
	if (process_shared_preload_libraries_in_progress)
	{
		prev_shmem_request_hook = shmem_request_hook;
		shmem_request_hook = gbt_shmem_request;
		prev_shmem_startup_hook = shmem_startup_hook;
		shmem_startup_hook = gbt_shmem_startup;
		gbt_service_register();
		gbt_resync_init();
	}

	prev_object_access_hook = object_access_hook;
	object_access_hook = gbt_object_access;

	gpubtree_btree_label_init();
	gbt_explain_init();
	gbt_plan_init();
	gbt_aggplan_init();
}

const char *
gpubtree_device_mode_name(int mode)
{
	const struct config_enum_entry *e;

	for (e = device_mode_options; e->name != NULL; e++)
		if (e->val == mode)
			return e->name;
	return "unknown";
}
