/*
 * handler.c
 *	  The gpubtree index access method: PostgreSQL's nbtree underneath.
 *
 * Every page of a gpubtree index is an nbtree page, written and WAL-logged by
 * nbtree's own code, so crash safety, replication, VACUUM, unique checks,
 * ordered and backward scans, index-only scans and parallel scans behave
 * exactly as for btree.  The handler copies nbtree's IndexAmRoutine and
 * wraps the callbacks that the GPU mirror intercepts; the wrappers are the
 * only places where gpubtree's behaviour may differ from btree's.
 */
#include "postgres.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/nbtree.h"
#include "catalog/index.h"
#include "catalog/indexing.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "backend.h"
#include "build.h"
#include "capture.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "resync.h"
#include "scan.h"
#include "shmem.h"
#include "vacuum.h"
#include "nodes/pathnodes.h"
#include "optimizer/optimizer.h"
#include "utils/fmgrprotos.h"
#include "utils/index_selfuncs.h"
#include "utils/rel.h"
#include "utils/syscache.h"


PG_FUNCTION_INFO_V1(gpubtree_handler);

/*
 * Rewrite pg_class.relam of an index in the current transaction.
 *
 * nbtree's build sorts with tuplesort_begin_index_btree(), and
 * PrepareSortSupportFromIndexRel() refuses any index whose relam is not
 * BTREE_AM_OID.  For the length of the build the index is therefore labelled
 * as btree in the catalog: the leader's relcache entry is reloaded at the
 * command counter increment, and parallel workers, which share our
 * transaction and command id, read the same row when they open the index.
 * The label is restored before ambuild returns, or rolled back with the
 * transaction if the build fails, so no other session ever sees it.
 */
static void
set_index_relam(Oid indexoid, Oid amoid)
{
	Relation	pg_class;
	HeapTuple	tuple;

	pg_class = table_open(RelationRelationId, RowExclusiveLock);
	tuple = SearchSysCacheCopy1(RELOID, ObjectIdGetDatum(indexoid));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for relation %u", indexoid);
	((Form_pg_class) GETSTRUCT(tuple))->relam = amoid;
	CatalogTupleUpdate(pg_class, &tuple->t_self, tuple);
	heap_freetuple(tuple);
	table_close(pg_class, RowExclusiveLock);

	CommandCounterIncrement();
}

/*
 * Build: nbtree's build, made parallel.  PostgreSQL 15's index_build() asks
 * the planner for parallel workers only when relam is BTREE_AM_OID; nbtree's
 * build itself parallelises whenever ii_ParallelWorkers > 0, so we ask the
 * planner here on the same terms (max_parallel_maintenance_workers, table
 * size, parallel safety of expressions and predicates).
 */
static IndexBuildResult *
gpubtree_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	Oid			gpubtree_am = index->rd_rel->relam;
	IndexBuildResult *result;

	if (indexInfo->ii_ParallelWorkers == 0 && IsNormalProcessingMode())
		indexInfo->ii_ParallelWorkers =
			plan_create_index_workers(RelationGetRelid(heap),
									  RelationGetRelid(index));
	ereport(DEBUG1,
			(errmsg_internal("building gpubtree index \"%s\" with %d parallel workers requested",
							 RelationGetRelationName(index),
							 indexInfo->ii_ParallelWorkers)));

	gbt_capture_ensure(heap, index);
	set_index_relam(RelationGetRelid(index), BTREE_AM_OID);
	result = btbuild(heap, index, indexInfo);
	set_index_relam(RelationGetRelid(index), gpubtree_am);

	/* Rebuilt in place (TRUNCATE of a new table): old mirrors are wrong. */
	gbt_invalidate(MyDatabaseId, RelationGetRelid(index));
	gbt_mirror_after_build(index, result->index_tuples);
	return result;
}

static bool
gpubtree_insert(Relation rel, Datum *values, bool *isnull,
				ItemPointer ht_ctid, Relation heapRel,
				IndexUniqueCheck checkUnique,
				bool indexUnchanged,
				IndexInfo *indexInfo)
{
	bool		result;

	result = btinsert(rel, values, isnull, ht_ctid, heapRel, checkUnique,
					  indexUnchanged, indexInfo);

	/* After nbtree has the entry: see gbt_resync_insert(). */
	gbt_resync_insert(rel, values, isnull, ht_ctid);
	return result;
}

static IndexBulkDeleteResult *
gpubtree_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
					IndexBulkDeleteCallback callback, void *callback_state)
{
	GbtSweep	sweep;

	/*
	 * Line pointers freed after this pass may be reused by other keys: the
	 * mirror loses them too, its part running beside nbtree's pass.
	 * (DEBUG1: PostgreSQL passes an index's bulk delete DEBUG2 even under
	 * VERBOSE; client_min_messages = debug1 shows the mirror's part.)
	 */
	gbt_sweep_begin(&sweep, info->index, callback, callback_state);
	PG_TRY();
	{
		stats = btbulkdelete(info, stats, callback, callback_state);
	}
	PG_CATCH();
	{
		gbt_sweep_abandon(&sweep);
		PG_RE_THROW();
	}
	PG_END_TRY();
	gbt_sweep_end(&sweep, info->index, callback, callback_state, DEBUG1);
	return stats;
}

static IndexBulkDeleteResult *
gpubtree_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	stats = btvacuumcleanup(info, stats);

	/* After the heap pass: the visibility map is as VACUUM left it. */
	if (!info->analyze_only)
		gbt_vouch_mirror(info->index, DEBUG1);
	return stats;
}

/*
 * Rescan: for bitmap scans (the only index scans without a heap relation)
 * just keep the keys, and let gpubtree_getbitmap() run nbtree's rescan only
 * if nbtree ends up answering.  nbtree's rescan sorts and de-duplicates
 * = ANY arrays with the operator's comparison function, which for a large
 * array costs more than the whole GPU round trip.
 */
static void
gpubtree_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
				ScanKey orderbys, int norderbys)
{
	if (scan->heapRelation == NULL && norderbys == 0)
	{
		if (scankey && scan->numberOfKeys > 0)
			memmove(scan->keyData, scankey, scan->numberOfKeys * sizeof(ScanKeyData));
		return;
	}
	btrescan(scan, scankey, nscankeys, orderbys, norderbys);
}

static void
gpubtree_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
					  Cost *indexStartupCost, Cost *indexTotalCost,
					  Selectivity *indexSelectivity, double *indexCorrelation,
					  double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;

	/*
	 * The planner reads the tree height only for btree (plancat.c); read it
	 * here too so that our descent costs are btree's.
	 */
	if (index->tree_height < 0)
	{
		Relation	irel = index_open(index->indexoid, NoLock);

		index->tree_height = _bt_getrootheight(irel);
		index_close(irel, NoLock);
	}

	btcostestimate(root, path, loop_count, indexStartupCost, indexTotalCost,
				   indexSelectivity, indexCorrelation, indexPages);

	/* While costing.c plans the service's paths, charge its cost instead. */
	if (gbt_plan_service_costing)
	{
		Cost		service_cost = gbt_service_index_cost(path);

		if (service_cost >= 0 && service_cost < *indexTotalCost)
		{
			*indexStartupCost = 0;
			*indexTotalCost = service_cost;
		}
	}
}

Datum
gpubtree_handler(PG_FUNCTION_ARGS)
{
	LOCAL_FCINFO(btfcinfo, 0);
	IndexAmRoutine *bt;
	IndexAmRoutine *amroutine;

	InitFunctionCallInfoData(*btfcinfo, NULL, 0, InvalidOid, NULL, NULL);
	bt = (IndexAmRoutine *) DatumGetPointer(bthandler(btfcinfo));

	amroutine = makeNode(IndexAmRoutine);
	*amroutine = *bt;
	pfree(bt);

	amroutine->ambuild = gpubtree_build;
	amroutine->aminsert = gpubtree_insert;
	amroutine->ambulkdelete = gpubtree_bulkdelete;
	amroutine->amvacuumcleanup = gpubtree_vacuumcleanup;
	amroutine->amrescan = gpubtree_rescan;
	amroutine->amgetbitmap = gpubtree_getbitmap;
	amroutine->amcostestimate = gpubtree_costestimate;
	gpubtree_record_routine(amroutine);

	PG_RETURN_POINTER(amroutine);
}
