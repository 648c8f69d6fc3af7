/*
 * costing.c
 *	  Let the planner choose the GPU service's plan when it pays.
 *
 * gpubtree costs every index path as btree does, which charges one tree
 * descent per = ANY element.  A bitmap scan that the service answers pays
 * one round trip and a batched search instead, but amcostestimate cannot
 * tell a bitmap use of an index path from a plain or index-only one, and
 * only bitmap scans go to the service.  So after the paths of a table are
 * built, for each index path on a gpubtree index whose condition the service
 * takes (= ANY of at least gpubtree.min_gpu_batch constants on the leading
 * column), we add a bitmap heap path over it whose index part is costed as
 * the service's: a fixed round trip plus a small cost per key.  add_path()
 * then keeps it only if it is the cheapest.  Below min_gpu_batch (measured
 * on the GPU machine) nothing changes.  Why no such path was made, or at
 * what cost it was, goes to gpubtree_why_not() (gbt_plan_note_hook).
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "catalog/pg_am.h"
#include "commands/defrem.h"
#include "nodes/pathnodes.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "utils/array.h"
#include "utils/lsyscache.h"

#include "backend.h"
#include "planning.h"
#include "shmem.h"

static set_rel_pathlist_hook_type prev_set_rel_pathlist = NULL;

/* Service round trip, in cost units (about 100 operator evaluations). */
#define GBT_ROUND_TRIP_COST (100.0 * cpu_operator_cost)

/* Elements of a constant = ANY(array) clause, or 0 for any other clause. */
static int
const_any_length(Expr *clause)
{
	ScalarArrayOpExpr *saop = (ScalarArrayOpExpr *) clause;
	Const	   *arr;
	ArrayType  *a;

	if (!IsA(saop, ScalarArrayOpExpr) || !saop->useOr)
		return 0;
	arr = (Const *) lsecond(saop->args);
	if (!IsA(arr, Const) || arr->constisnull)
		return 0;
	a = DatumGetArrayTypeP(arr->constvalue);
	return ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a));
}

/*
 * The number of keys the service would be asked for: the elements of a
 * constant = ANY array on the leading column, or 0.
 */
static int
service_batch_keys(IndexPath *ipath)
{
	ListCell   *lc;

	foreach(lc, ipath->indexclauses)
	{
		IndexClause *iclause = lfirst_node(IndexClause, lc);
		ListCell   *lc2;

		if (iclause->indexcol != 0)
			continue;
		foreach(lc2, iclause->indexquals)
		{
			int			n = const_any_length(lfirst_node(RestrictInfo, lc2)->clause);

			if (n > 0)
				return n;
		}
	}
	return 0;
}

/* Set while we re-plan a table's index paths at the service's costs. */
bool		gbt_plan_service_costing = false;

/* The service's cost for an index path, or -1 if it would not take it. */
Cost
gbt_service_index_cost(IndexPath *ipath)
{
	int			nkeys = service_batch_keys(ipath);

	if (nkeys < gpubtree_min_gpu_batch)
		return -1;
	return GBT_ROUND_TRIP_COST + nkeys * cpu_operator_cost +
		ipath->path.rows * cpu_index_tuple_cost * 0.1;
}

/* Does the table have a gpubtree index? */
static bool
has_gpubtree_index(RelOptInfo *rel, Oid gpubtree_am)
{
	ListCell   *lc;

	foreach(lc, rel->indexlist)
		if (((IndexOptInfo *) lfirst(lc))->relam == gpubtree_am)
			return true;
	return false;
}

/* Has the table a constant = ANY of at least min_gpu_batch elements? */
static bool
may_use_service(RelOptInfo *rel)
{
	ListCell   *lc;

	foreach(lc, rel->baserestrictinfo)
		if (const_any_length(lfirst_node(RestrictInfo, lc)->clause) >= gpubtree_min_gpu_batch)
			return true;
	return false;
}

/* Why no service path is made for the table (the planner's notes). */
static void
note(RangeTblEntry *rte, const char *reason)
{
	if (gbt_plan_note_hook != NULL)
		gbt_plan_note_hook(GBT_NOTE_INDEX_SCAN, rte->relid, reason);
}

/* The table's conditions say why may_use_service() refused it. */
static void
note_no_large_any(RelOptInfo *rel, RangeTblEntry *rte)
{
	ListCell   *lc;
	int			longest = 0;

	foreach(lc, rel->baserestrictinfo)
		longest = Max(longest, const_any_length(lfirst_node(RestrictInfo, lc)->clause));
	if (longest > 0)
		note(rte, psprintf("the longest constant = ANY array has %d elements, fewer than gpubtree.min_gpu_batch (%d): btree's costs",
						   longest, gpubtree_min_gpu_batch));
	else
		note(rte, "no WHERE condition is = ANY of a constant array: btree's costs (a bitmap scan of ranges, if the planner picks one, is still the service's)");
}

/* The cheapest path of the table so far. */
static Path *
cheapest_path(List *paths)
{
	Path	   *best = NULL;
	ListCell   *lc;

	foreach(lc, paths)
		if (best == NULL || ((Path *) lfirst(lc))->total_cost < best->total_cost)
			best = lfirst(lc);
	return best;
}

/*
 * Build the table's index paths again with gpubtree's amcostestimate
 * charging the service's cost (gbt_plan_service_costing), into empty path
 * lists, and keep from them only the bitmap heap paths over gpubtree
 * indexes: the plans the service would answer.  The other index paths are
 * btree's, as planned before.  Plain and index-only scans are disabled
 * meanwhile: at the service's cost they would beat the bitmap paths in the
 * empty list (an index-only scan of an all-visible table always would), and
 * the service never answers them.  A bitmap path's cost comes from the
 * index's own estimate, which disabling does not change.
 */
static void
gpubtree_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti,
						  RangeTblEntry *rte)
{
	Oid			gpubtree_am;
	List	   *saved_paths;
	List	   *saved_partial;
	List	   *service_paths;
	bool		saved_indexscan;
	bool		saved_indexonlyscan;
	ListCell   *lc;
	Path	   *ordinary;
	bool		offered = false;

	if (prev_set_rel_pathlist)
		prev_set_rel_pathlist(root, rel, rti, rte);

	if (rte->rtekind != RTE_RELATION || rel->indexlist == NIL)
		return;
	gpubtree_am = get_index_am_oid("gpubtree", true);
	if (!OidIsValid(gpubtree_am) || !has_gpubtree_index(rel, gpubtree_am))
		return;
	if (rel->reloptkind != RELOPT_BASEREL)
	{
		note(rte, "a partition or inheritance child, read through its parent: btree's costs (a bitmap scan, if the planner picks one, is still the service's)");
		return;
	}
	if (gpubtree_device_mode == GPUBTREE_DEVICE_OFF)
	{
		note(rte, "gpubtree.device is off");
		return;
	}
	if (!enable_bitmapscan)
	{
		note(rte, "enable_bitmapscan is off");
		return;
	}
	if (!gbt_service_running())
	{
		note(rte, "the GPU service is not running");
		return;
	}
	if (!may_use_service(rel))
	{
		if (gbt_plan_note_hook != NULL)
			note_no_large_any(rel, rte);
		return;
	}

	saved_paths = rel->pathlist;
	saved_partial = rel->partial_pathlist;
	saved_indexscan = enable_indexscan;
	saved_indexonlyscan = enable_indexonlyscan;
	rel->pathlist = NIL;
	rel->partial_pathlist = NIL;
	gbt_plan_service_costing = true;
	enable_indexscan = false;
	enable_indexonlyscan = false;
	PG_TRY();
	{
		create_index_paths(root, rel);
	}
	PG_FINALLY();
	{
		gbt_plan_service_costing = false;
		enable_indexscan = saved_indexscan;
		enable_indexonlyscan = saved_indexonlyscan;
		service_paths = rel->pathlist;
		rel->pathlist = saved_paths;
		rel->partial_pathlist = saved_partial;
	}
	PG_END_TRY();

	ordinary = cheapest_path(rel->pathlist);
	foreach(lc, service_paths)
	{
		BitmapHeapPath *bpath = lfirst(lc);

		if (IsA(bpath, BitmapHeapPath) && IsA(bpath->bitmapqual, IndexPath) &&
			((IndexPath *) bpath->bitmapqual)->indexinfo->relam == gpubtree_am &&
			gbt_service_index_cost((IndexPath *) bpath->bitmapqual) >= 0)
		{
			if (gbt_plan_note_hook != NULL)
				note(rte, psprintf("offered a bitmap scan of index %s at cost %.0f, against %.0f for the cheapest ordinary path",
								   get_rel_name(((IndexPath *) bpath->bitmapqual)->indexinfo->indexoid),
								   bpath->path.total_cost,
								   ordinary ? ordinary->total_cost : 0.0));
			offered = true;
			add_path(rel, (Path *) bpath);
		}
	}
	if (!offered)
		note(rte, "no bitmap path of a gpubtree index has the large = ANY on its leading column");
}

void
gbt_plan_init(void)
{
	prev_set_rel_pathlist = set_rel_pathlist_hook;
	set_rel_pathlist_hook = gpubtree_set_rel_pathlist;
}
