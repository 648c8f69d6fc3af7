/*
 * build_create.c
 *	  The mirror of an index that CREATE INDEX or REINDEX just built
 *	  (gpubtree.build_after_create).
 *
 * wait (the default): the mirror is built inside CREATE INDEX, which takes
 * that much longer, so that it answers as soon as the index is there (the
 * first aggregate after pg_restore too).  Where it cannot be, it is built
 * as in background: during REINDEX (and so CLUSTER, VACUUM FULL, table
 * rewrites), where PostgreSQL forbids scanning the index being rebuilt;
 * under CONCURRENTLY; where this transaction wrote before it installed the
 * table's capture trigger, or switched it (gbt_capture_active_for_build());
 * where the service is not running yet, or the build failed.
 *
 * background: ambuild only notes the index; when the transaction that
 * built it commits, a build job is started for it (gbt_build_in_background():
 * the same job and worker as a query's, queued when GBT_MAX_RUNNING_BUILDS
 * already run) and nobody waits for it.  The job cannot start earlier: no
 * other process sees the index, or its new storage, before that commit.  A
 * transaction (or savepoint) that rolls back starts nothing, so no job is
 * ever left waiting for one that will not come.  An index built by CREATE
 * INDEX CONCURRENTLY or REINDEX CONCURRENTLY is not valid yet when it is
 * built: its note is kept over the command's own commits until the one
 * that makes it valid.
 *
 * off: the first scan or aggregate that could use the mirror asks for it
 * (gpubtree.build_on_scan).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "miscadmin.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "backend.h"
#include "build.h"
#include "capture.h"
#include "client.h"
#include "export.h"
#include "keytypes.h"
#include "settings.h"
#include "shmem.h"
#include "pg_compat.h"

/* More indexes than this in one transaction: the rest wait for a query. */
#define GBT_MAX_CREATED 64

typedef struct CreatedIndex
{
	GbtMirrorKey key;
	bool		committed_valid;	/* valid at pre-commit: start at commit */
} CreatedIndex;

static CreatedIndex created[GBT_MAX_CREATED];
static int	ncreated = 0;
static bool callback_registered = false;

/*
 * Mirrors built inside CREATE INDEX by this transaction, with the
 * subtransaction that built each: a rollback takes their indexes away, and
 * gbt_invalidate() has the service drop the mirrors at once instead of
 * leaving them to be evicted.
 */
typedef struct BuiltIndex
{
	Oid			indexrelid;
	SubTransactionId subid;
} BuiltIndex;

static BuiltIndex built[GBT_MAX_CREATED];
static int	nbuilt = 0;

/*
 * Before commit, while the catalogs can be read: which noted indexes are
 * there, with the storage they were built in, and valid?  A rolled-back
 * savepoint took its index (or its new storage) with it; one built
 * concurrently and not valid yet waits for a later commit of its command.
 */
static void
check_created(void)
{
	int			kept = 0;
	int			i;

	for (i = 0; i < ncreated; i++)
	{
		CreatedIndex *ci = &created[i];
		HeapTuple	classtup = SearchSysCache1(RELOID, ObjectIdGetDatum(ci->key.indexrelid));
		HeapTuple	indextup;
		bool		same;

		if (!HeapTupleIsValid(classtup))
			continue;
		same = ((Form_pg_class) GETSTRUCT(classtup))->relfilenode == ci->key.relfilenode;
		ReleaseSysCache(classtup);
		if (!same)
			continue;
		indextup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(ci->key.indexrelid));
		if (!HeapTupleIsValid(indextup))
			continue;
		ci->committed_valid = ((Form_pg_index) GETSTRUCT(indextup))->indisvalid;
		ReleaseSysCache(indextup);
		created[kept++] = *ci;
	}
	ncreated = kept;
}

/* Committed: start the builds of the valid ones; keep the others. */
static void
start_created(void)
{
	int			kept = 0;
	int			i;

	for (i = 0; i < ncreated; i++)
	{
		if (created[i].committed_valid)
			gbt_build_in_background(&created[i].key);
		else
			created[kept++] = created[i];
	}
	ncreated = kept;
}

/* Invalidate the mirrors built in subid or later (any, for Invalid). */
static void
drop_built(SubTransactionId subid)
{
	int			kept = 0;
	int			i;

	for (i = 0; i < nbuilt; i++)
	{
		if (subid == InvalidSubTransactionId || built[i].subid >= subid)
			gbt_invalidate(MyDatabaseId, built[i].indexrelid);
		else
			built[kept++] = built[i];
	}
	nbuilt = kept;
}

static void
created_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						 SubTransactionId parentSubid, void *arg)
{
	int			i;

	if (nbuilt == 0)
		return;
	if (event == SUBXACT_EVENT_ABORT_SUB)
		drop_built(mySubid);
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
		for (i = 0; i < nbuilt; i++)
			if (built[i].subid == mySubid)
				built[i].subid = parentSubid;
}

static void
created_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		drop_built(InvalidSubTransactionId);
	else if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_PREPARE)
		nbuilt = 0;
	if (ncreated == 0)
		return;
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			check_created();
			break;
		case XACT_EVENT_COMMIT:
			start_created();
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
			/* (a prepared one commits elsewhere: its first query asks) */
			ncreated = 0;
			break;
		default:
			break;
	}
}

static void
register_callbacks(void)
{
	if (!callback_registered)
	{
		RegisterXactCallback(created_xact_callback, NULL);
		RegisterSubXactCallback(created_subxact_callback, NULL);
		callback_registered = true;
	}
}

/* Note index for a build when its transaction commits. */
static void
note_created(Relation index)
{
	GbtMirrorKey key;
	int			i;

	register_callbacks();
	gbt_fill_key(&key, index);
	for (i = 0; i < ncreated; i++)
		if (memcmp(&created[i].key, &key, sizeof(GbtMirrorKey)) == 0)
			return;
	if (ncreated >= GBT_MAX_CREATED)
		return;
	created[ncreated].key = key;
	created[ncreated].committed_valid = false;
	ncreated++;
}

/* Would an export of index now take its stamps from the capture trigger? */
static bool
capture_trusted_now(Relation index)
{
	Relation	heap = table_open(index->rd_index->indrelid, NoLock);
	bool		trusted = gbt_capture_active_for_build(heap, index);

	table_close(heap, NoLock);
	return trusted;
}

/*
 * After ambuild (CREATE INDEX, REINDEX, and what rebuilds indexes) of an
 * index of nentries entries: have the new index's mirror built as
 * gpubtree.build_after_create says.  Never an error: at worst the first
 * query asks for the mirror.
 */
void
gbt_mirror_after_build(Relation index, double nentries)
{
	Oid			keytype;
	const char *engine;
	char		why[GBT_ERRMSG_LEN];

	if (gpubtree_build_after_create == GPUBTREE_BUILD_AFTER_CREATE_OFF ||
		gpubtree_device_mode == GPUBTREE_DEVICE_OFF ||
		gbt_shared == NULL || RecoveryInProgress() || IsBinaryUpgrade ||
		index->rd_rel->relpersistence == RELPERSISTENCE_TEMP ||
		!OidIsValid(keytype = gbt_mirror_key_type(index)))
		return;
	/* A service without an engine builds nothing (it logs why once). */
	engine = gbt_service_engine();
	if (engine != NULL && strcmp(engine, "none") == 0)
		return;

	/*
	 * Its size is judged by the job (the index's is known by then).  Under
	 * wait too where the index cannot be read yet (not valid: CONCURRENTLY;
	 * REINDEX forbids it), or where an export inside this transaction could
	 * not trust the capture trigger's stamps (the mirror would decide by
	 * the visibility map; the job, after the commit, can); and where the
	 * service is not running yet (starting with the server) or the build
	 * here failed.
	 */
	if (gpubtree_build_after_create == GPUBTREE_BUILD_AFTER_CREATE_BACKGROUND ||
		!gbt_service_running() ||
		!index->rd_index->indisvalid ||
		ReindexIsProcessingIndex(RelationGetRelid(index)) ||
		!capture_trusted_now(index))
	{
		note_created(index);
		return;
	}
	if (gbt_mirror_refused_entries(index, (int64) nentries, why, sizeof(why)))
		return;
	/* (past that many, one rolled back is left to be evicted) */
	if (nbuilt < GBT_MAX_CREATED)
	{
		register_callbacks();
		built[nbuilt].indexrelid = RelationGetRelid(index);
		built[nbuilt].subid = GetCurrentSubTransactionId();
		nbuilt++;
	}
	if (!gbt_build_mirror(index, keytype, NULL, NULL, 0, why, sizeof(why)))
	{
		elog(DEBUG1, "gpubtree: the mirror of index \"%s\" was not built inside CREATE INDEX: %s",
			 RelationGetRelationName(index), why);
		note_created(index);
	}
}
