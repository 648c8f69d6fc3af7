/*
 * gpuplan.c
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
 * on the GPU machine, see test/gpu/results/) nothing changes.
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

#include "gpubtree.h"
#include "gpuscan.h"
#include "service.h"

static set_rel_pathlist_hook_type prev_set_rel_pathlist = NULL;

/* Service round trip, in cost units (about 100 operator evaluations). */
#define GBT_ROUND_TRIP_COST (100.0 * cpu_operator_cost)

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
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc2);
			ScalarArrayOpExpr *saop = (ScalarArrayOpExpr *) rinfo->clause;
			Node	   *arr;

			if (!IsA(saop, ScalarArrayOpExpr) || !saop->useOr)
				continue;
			arr = (Node *) lsecond(saop->args);
			if (IsA(arr, Const) && !((Const *) arr)->constisnull)
			{
				ArrayType  *a = DatumGetArrayTypeP(((Const *) arr)->constvalue);

				return ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a));
			}
		}
	}
	return 0;
}

static void
gpubtree_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti,
						  RangeTblEntry *rte)
{
	Oid			gpubtree_am;
	List	   *candidates = NIL;
	ListCell   *lc;

	if (prev_set_rel_pathlist)
		prev_set_rel_pathlist(root, rel, rti, rte);

	if (rel->reloptkind != RELOPT_BASEREL || rte->rtekind != RTE_RELATION ||
		rel->indexlist == NIL || gpubtree_device_mode == GPUBTREE_DEVICE_OFF ||
		!enable_bitmapscan || !gbt_service_running())
		return;
	gpubtree_am = get_index_am_oid("gpubtree", true);
	if (!OidIsValid(gpubtree_am))
		return;

	/* add_path() changes the list, so collect first */
	foreach(lc, rel->pathlist)
	{
		Path	   *path = lfirst(lc);

		if (IsA(path, IndexPath) && ((IndexPath *) path)->indexinfo->relam == gpubtree_am)
			candidates = lappend(candidates, path);
		else if (IsA(path, BitmapHeapPath) &&
				 IsA(((BitmapHeapPath *) path)->bitmapqual, IndexPath) &&
				 ((IndexPath *) ((BitmapHeapPath *) path)->bitmapqual)->indexinfo->relam == gpubtree_am)
			candidates = lappend(candidates, ((BitmapHeapPath *) path)->bitmapqual);
	}

	foreach(lc, candidates)
	{
		IndexPath  *ipath = lfirst(lc);
		IndexPath  *served;
		int			nkeys = service_batch_keys(ipath);
		Cost		service_cost;

		if (nkeys < gpubtree_min_gpu_batch)
			continue;
		service_cost = GBT_ROUND_TRIP_COST + nkeys * cpu_operator_cost +
			ipath->path.rows * cpu_index_tuple_cost * 0.1;
		if (service_cost >= ipath->indextotalcost)
			continue;

		/* The same index scan, costed as the service answers it. */
		served = makeNode(IndexPath);
		memcpy(served, ipath, sizeof(IndexPath));
		served->path.pathtype = T_IndexScan;
		served->indextotalcost = service_cost;
		served->path.startup_cost = 0;
		served->path.total_cost = service_cost;
		add_path(rel, (Path *) create_bitmap_heap_path(root, rel, (Path *) served,
													   PATH_REQ_OUTER((Path *) ipath),
													   1.0, 0));
	}
	list_free(candidates);
}

void
gbt_plan_init(void)
{
	prev_set_rel_pathlist = set_rel_pathlist_hook;
	set_rel_pathlist_hook = gpubtree_set_rel_pathlist;
}
