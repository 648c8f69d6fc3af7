/*
 * lookup_plan.c
 *	  Rows of many keys looked up in one batch through the GPU service: the
 *	  "GpubtreeLookup" and "GpubtreeJoin" custom scans, and where the
 *	  planner may use them: the lookup's path here, with what both
 *	  planners share (lookup_plan.h); the join's in join_plan.c.
 *
 * Three shapes of query ask a gpubtree index for many rows at once:
 *
 * - k = ANY(array) on the leading key column, the array a constant of at
 *	 least gpubtree.min_gpu_batch elements or known only when the plan runs
 *	 (a parameter of a generic plan, a PL/pgSQL variable, an InitPlan): the
 *	 GpubtreeLookup scan evaluates the array and asks the service for the
 *	 rows of all its keys in one request.
 *
 * - The rows of a key range (conditions on the key, no array) estimated at
 *	 4 x gpubtree.min_gpu_batch rows or more, all of whose columns the index
 *	 holds, in a query without aggregates: the same scan, with one range.
 *
 * - An inner join on k = expression of the other side: the GpubtreeJoin
 *	 reads the other side once, keeping its rows, looks all their keys up in
 *	 one request, and joins each kept row with its key's rows from a hash
 *	 table: one batched lookup instead of an index descent per outer row,
 *	 and only the matching rows of the table in memory.
 *
 * The service decides which entries the query's snapshot sees (exec_request.c).
 * The lookup makes its rows from the mirror's values when the index holds
 * every column the query needs from the table (key and INCLUDE columns of
 * mirrored types), else reads them from the heap by TID; the join only
 * where the index holds them.  Other conditions are checked on each row.
 * Rows come in no particular order (the paths promise none).
 *
 * At run time, fewer distinct keys than gpubtree.min_gpu_batch, or a
 * service that cannot answer, and nbtree answers: one index scan with the
 * keys as its = ANY array, which is what PostgreSQL's generic plan for such
 * a query does.  For an array known only at run time, the path is costed 2 %
 * under the table's cheapest ordinary path (beyond add_path()'s 1 % fuzz)
 * when that path probes the same index with the array, one descent per key,
 * so that the choice is left to run time; for a constant array and for a
 * join, at the service's cost: a round trip, a small cost per key and per
 * row, and a heap visit per row the mirror cannot decide (or per row, when
 * the rows come from the heap), the join's outer side and its rows kept.
 *
 * Each refusal, and each offer with its cost against the ordinary plan's,
 * is a note for gpubtree_why_not() (built only while it asks).
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_class.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"
#include "parser/parsetree.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "exec_request.h"
#include "exec_why.h"
#include "backend.h"
#include "build.h"
#include "capture.h"
#include "keytypes.h"
#include "lookup.h"
#include "lookup_plan.h"
#include "planning.h"
#include "settings.h"
#include "shmem.h"
#include "pg_compat.h"

/* Service round trip, in cost units, as costing.c prices it. */
#define LOOKUP_ROUND_TRIP_COST (100.0 * cpu_operator_cost)

static set_rel_pathlist_hook_type prev_set_rel_pathlist = NULL;
static CustomPathMethods lookup_path_methods;

/*
 * A key range's rows are worth a request from this many times
 * gpubtree.min_gpu_batch rows (as the planner estimates them): a row of a
 * range costs nbtree's index-only scan less than a key of an array costs
 * its descent (on the CPU engine, 2^24 rows: even at 2,000 rows, 1.5x
 * faster at 8,000; a cached table of 2^18, 3x slower at 2,600).
 */
#define GBT_RANGE_ROWS_PER_KEY 4

/* Path-only private items, after the plan's (lookup.h). */
#define PRIV_LOOKUP_CONDITIONS LOOKUP_PRIV_N	/* the RestrictInfos on the key */
#define PRIV_LOOKUP_BOUNDS (LOOKUP_PRIV_N + 1)	/* and their bounds */

/* Why node is not offered for the table rel (gpubtree_why_not()). */
void
gbt_lookup_note(const char *node, PlannerInfo *root, RelOptInfo *rel,
				const char *reason)
{
	gbt_plan_note(node, planner_rt_fetch(rel->relid, root)->relid, reason);
}

/* Has the table a gpubtree index?  Only then are the nodes noted for it. */
bool
gbt_lookup_has_index(RelOptInfo *rel)
{
	ListCell   *lc;

	foreach(lc, rel->indexlist)
		if (gpubtree_is_gpubtree_indexinfo(lfirst_node(IndexOptInfo, lc)))
			return true;
	return false;
}

/*
 * Can the nodes read this table, with a gpubtree index?  In a SELECT that
 * locks no rows.  NULL if so, else why not.
 */
const char *
gbt_lookup_table_refusal(PlannerInfo *root, RelOptInfo *rel)
{
	if (root->parse->commandType != CMD_SELECT)
		return "not a SELECT (the nodes do not read the rows an UPDATE, DELETE or INSERT changes or inserts)";
	if (root->parse->rowMarks != NIL)
		return "SELECT ... FOR UPDATE or FOR SHARE (the nodes lock no rows)";
	if (gbt_shared == NULL)
		return "the library is not in shared_preload_libraries (no service)";
	if (!gpubtree_enable_lookup)
		return "gpubtree.enable_lookup is off";
	if (gpubtree_device_mode == GPUBTREE_DEVICE_OFF)
		return "gpubtree.device is off";
	return gbt_table_refusal(root, rel);
}

/*
 * An index whose mirror the nodes may probe: no predicate, a plain leading
 * column.  A hypothetical one (an advisor's) is passed over without a note.
 */
bool
gbt_lookup_index_usable(const char *node, PlannerInfo *root, RelOptInfo *rel,
						IndexOptInfo *index)
{
	if (!gpubtree_is_gpubtree_indexinfo(index) || index->hypothetical)
		return false;
	if (index->indpred != NIL || index->indexkeys[0] == 0)
	{
		if (gbt_plan_noting())
			gbt_lookup_note(node, root, rel,
							psprintf("index %s is partial or on an expression",
									 get_rel_name(index->indexoid)));
		return false;
	}
	return true;
}

/* Mirror column of the table column attno in index, or -1. */
static int
mirror_column(IndexOptInfo *index, Oid tableoid, AttrNumber attno)
{
	int			c;

	for (c = 0; c < Min(index->ncolumns, GBT_MAX_COLS); c++)
		if (index->indexkeys[c] == attno &&
			gbt_key_type(get_atttype(tableoid, attno)) != NULL)
			return c;
	return -1;
}

/* The columns of exprs the mirror does not hold, by name (for a note). */
char *
gbt_lookup_columns_not_held(IndexOptInfo *index, Oid tableoid, List *exprs,
							Index relid)
{
	Bitmapset  *attrs = NULL;
	StringInfoData names;
	int			x = -1;

	initStringInfo(&names);
	pull_varattnos((Node *) exprs, relid, &attrs);
	while ((x = bms_next_member(attrs, x)) >= 0)
	{
		AttrNumber	attno = x + FirstLowInvalidHeapAttributeNumber;

		if (attno > 0 && mirror_column(index, tableoid, attno) < 0)
			appendStringInfo(&names, "%s%s", names.len > 0 ? ", " : "",
							 get_attname(tableoid, attno, false));
	}
	return names.data;
}

/* A path's kind, as EXPLAIN names its top node (for a note). */
const char *
gbt_lookup_path_label(Path *path)
{
	switch (path->pathtype)
	{
		case T_SeqScan:
			return "Seq Scan";
		case T_IndexScan:
			return "Index Scan";
		case T_IndexOnlyScan:
			return "Index Only Scan";
		case T_BitmapHeapScan:
			return "Bitmap Heap Scan";
		case T_TidScan:
		case T_TidRangeScan:
			return "Tid Scan";
		case T_Append:
			return "Append";
		case T_MergeAppend:
			return "Merge Append";
		case T_Material:
			return "Materialize";
		case T_Sort:
		case T_IncrementalSort:
			return "Sort";
		case T_CustomScan:
			return "Custom Scan";
		default:
			return "a join or other node";
	}
}

/*
 * Which of the table's columns the node must produce (those of exprs), and
 * whether the mirror holds them all: then attmap[c] names the table column
 * of mirror column c that is needed (0: none).  False if a system column or
 * the whole row is needed.
 */
bool
gbt_lookup_needed_columns(IndexOptInfo *index, Oid tableoid, List *exprs, Index relid,
						  List **attmap, int *natts, bool *covered)
{
	Bitmapset  *attrs = NULL;
	int			map[GBT_MAX_COLS] = {0};
	int			x = -1;
	int			c;

	pull_varattnos((Node *) exprs, relid, &attrs);
	*natts = 0;
	*covered = true;
	while ((x = bms_next_member(attrs, x)) >= 0)
	{
		AttrNumber	attno = x + FirstLowInvalidHeapAttributeNumber;

		if (attno <= 0)
			return false;
		*natts = Max(*natts, attno);
		c = mirror_column(index, tableoid, attno);
		if (c >= 0)
			map[c] = attno;
		*covered &= c >= 0;
	}
	*attmap = NIL;
	for (c = 0; c < GBT_MAX_COLS; c++)
		*attmap = lappend_int(*attmap, *covered ? map[c] : 0);
	return true;
}

/* The share of rows whose visibility the mirror may leave to the heap. */
double
gbt_lookup_unsure_fraction(RelOptInfo *rel, Oid tableoid)
{
	double		frac = 1.0 - rel->allvisfrac;
	Relation	heap = table_open(tableoid, NoLock);

	if (gbt_capture_enabled(heap))
		frac = Min(frac, 1.0 / GBT_UNKNOWN_ONE_IN);
	table_close(heap, NoLock);
	return frac;
}

/* The service's cost of nkeys keys and rows rows. */
Cost
gbt_lookup_service_cost(double nkeys, double rows, double unsure_frac,
						bool covered)
{
	return LOOKUP_ROUND_TRIP_COST + nkeys * cpu_operator_cost +
		rows * cpu_tuple_cost +
		rows * (covered ? unsure_frac : 1.0) * gbt_agg_unsure_cost();
}

/*
 * The conditions on the index's key that the lookup makes its own: each
 * range, equality and the first = ANY(array) (*any; a second is left to be
 * checked on each row), with their strategies, bounds' types, operators
 * and bounds.
 */
typedef struct KeyConditions
{
	List	   *rinfos;
	List	   *strategies;
	List	   *subtypes;
	List	   *operators;
	List	   *bounds;
	int			array_at;		/* which is = ANY, or -1 */
	RestrictInfo *any;
} KeyConditions;

static void
key_conditions(RelOptInfo *rel, IndexOptInfo *index, KeyConditions *kc)
{
	ListCell   *lc;

	memset(kc, 0, sizeof(KeyConditions));
	kc->array_at = -1;
	foreach(lc, rel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		int			strategy;
		Oid			subtype;
		Oid			opno;
		bool		array;
		Expr	   *bound;

		if (rinfo->pseudoconstant ||
			!gbt_match_condition(rinfo->clause, rel->relid, index, &strategy,
								 &subtype, &opno, &array, &bound) ||
			(array && kc->any != NULL))
			continue;
		if (array)
		{
			kc->any = rinfo;
			kc->array_at = list_length(kc->rinfos);
		}
		kc->rinfos = lappend(kc->rinfos, rinfo);
		kc->strategies = lappend_int(kc->strategies, strategy);
		kc->subtypes = lappend_oid(kc->subtypes, subtype);
		kc->operators = lappend_oid(kc->operators, opno);
		kc->bounds = lappend(kc->bounds, bound);
	}
}

static CustomPath *
make_lookup_path(RelOptInfo *rel, IndexOptInfo *index, KeyConditions *kc,
				 List *attmap, int natts, bool covered)
{
	CustomPath *cpath = makeNode(CustomPath);

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = rel;
	cpath->path.pathtarget = rel->reltarget;
	cpath->path.rows = rel->rows;
	cpath->methods = &lookup_path_methods;
	/* Its scan computes the query's expressions of the row itself. */
	cpath->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	cpath->custom_private = list_make5(makeInteger((int) index->indexoid),
									   kc->strategies, kc->subtypes, kc->operators,
									   makeInteger(kc->array_at));
	cpath->custom_private = lappend(cpath->custom_private, makeInteger(covered));
	cpath->custom_private = lappend(cpath->custom_private, attmap);
	cpath->custom_private = lappend(cpath->custom_private, makeInteger(natts));
	cpath->custom_private = lappend(cpath->custom_private, makeInteger(0));
	cpath->custom_private = lappend(cpath->custom_private, kc->rinfos);
	cpath->custom_private = lappend(cpath->custom_private, kc->bounds);
	return cpath;
}

/* The cheapest unparameterized path of rel so far. */
Path *
gbt_lookup_cheapest_path(RelOptInfo *rel)
{
	Path	   *best = NULL;
	ListCell   *lc;

	foreach(lc, rel->pathlist)
	{
		Path	   *p = lfirst(lc);

		if (p->param_info == NULL && (best == NULL || GBT_PATH_COST(p) < GBT_PATH_COST(best)))
			best = p;
	}
	return best;
}

/*
 * Does path probe index with clause among its conditions, as the ordinary
 * plan of k = ANY($1) does, one descent per key?  Then the lookup may take
 * its place for an array known only at run time; not where another path
 * (say, a selective condition on another index) is the cheapest, which the
 * lookup of a long array could not beat.
 */
static bool
path_probes(Path *path, IndexOptInfo *index, RestrictInfo *clause)
{
	IndexPath  *ipath;
	ListCell   *lc;

	if (IsA(path, BitmapHeapPath))
		path = ((BitmapHeapPath *) path)->bitmapqual;
	if (!IsA(path, IndexPath))
		return false;
	ipath = (IndexPath *) path;
	if (ipath->indexinfo != index)
		return false;
	foreach(lc, ipath->indexclauses)
		if (lfirst_node(IndexClause, lc)->rinfo == clause)
			return true;
	return false;
}

/*
 * Offer the lookup for the rows of a key range, where the index holds
 * every column the query needs and the range is estimated at
 * GBT_RANGE_ROWS_PER_KEY x gpubtree.min_gpu_batch rows or more (below,
 * nbtree's index-only scan beats a request's round trip): at the service's
 * cost, so that nbtree's index-only scan stays where it is cheaper.  False, with a note,
 * where it is not offered.
 */
static bool
cost_range(PlannerInfo *root, RelOptInfo *rel, IndexOptInfo *index, Oid tableoid,
		   KeyConditions *kc, List *needed, bool covered, CustomPath *cpath)
{
	double		range_rows;

	/* An aggregate's rows: GpubtreeAggregate answers it, or its plan below. */
	if (root->parse->hasAggs || root->parse->groupClause != NIL ||
		root->parse->groupingSets != NIL)
	{
		gbt_lookup_note(LOOKUP_NODE, root, rel,
						"rows of a key range for an aggregate or GROUP BY: left to GpubtreeAggregate and its plan below");
		return false;
	}
	if (!covered)
	{
		if (gbt_plan_noting())
			gbt_lookup_note(LOOKUP_NODE, root, rel,
							psprintf("the query needs columns that index %s does not hold (%s): rows of a key range are left to the service-costed bitmap scan",
									 get_rel_name(index->indexoid),
									 gbt_lookup_columns_not_held(index, tableoid, needed, rel->relid)));
		return false;
	}
	range_rows = clamp_row_est(rel->tuples *
							   clauselist_selectivity(root, kc->rinfos, rel->relid,
													  JOIN_INNER, NULL));
	if (range_rows < (double) gpubtree_min_gpu_batch * GBT_RANGE_ROWS_PER_KEY)
	{
		if (gbt_plan_noting())
			gbt_lookup_note(LOOKUP_NODE, root, rel,
							psprintf("a key range of %.0f rows (estimated), fewer than %d x gpubtree.min_gpu_batch (%d)",
									 range_rows, GBT_RANGE_ROWS_PER_KEY, gpubtree_min_gpu_batch));
		return false;
	}
	cpath->path.startup_cost =
		gbt_lookup_service_cost(1, range_rows, gbt_lookup_unsure_fraction(rel, tableoid),
								covered);
	return true;
}

/*
 * The range's rows in the index's order, forward and backward, where the
 * query can use that order (ORDER BY k, a merge join): the same lookup,
 * whose node puts the rows in key order (mostly sorted as they come: a
 * pass, and a sort of the few that are not), at that pass's cost more.
 * Not under a LIMIT (min(k) and max(k) become one too): the lookup reads
 * the whole range before its first row, nbtree's ordered scan stops early.
 */
static void
add_ordered_range_paths(PlannerInfo *root, RelOptInfo *rel, IndexOptInfo *index,
						CustomPath *unordered)
{
	ScanDirection dirs[] = {ForwardScanDirection, BackwardScanDirection};
	IndexOptInfo leading = *index;
	int			d;

	if (root->limit_tuples >= 0 || root->parse->limitCount != NULL)
		return;
	/* The rows come in the mirror's key order: the leading column's alone. */
	leading.nkeycolumns = 1;

	for (d = 0; d < lengthof(dirs); d++)
	{
		List	   *pathkeys = truncate_useless_pathkeys(root, rel,
														 build_index_pathkeys(root, &leading,
																			  dirs[d]));
		CustomPath *cpath;

		if (pathkeys == NIL)
			continue;
		cpath = makeNode(CustomPath);
		memcpy(cpath, unordered, sizeof(CustomPath));
		cpath->path.pathkeys = pathkeys;
		cpath->custom_private = list_copy(unordered->custom_private);
		list_nth_cell(cpath->custom_private, LOOKUP_PRIV_DIRECTION)->ptr_value =
			makeInteger(ScanDirectionIsForward(dirs[d]) ? 1 : -1);
		cpath->path.startup_cost += 2 * cpu_operator_cost * cpath->path.rows;
		cpath->path.total_cost = cpath->path.startup_cost;
		add_path(rel, (Path *) cpath);
	}
}

/*
 * The lookup, on the leading column of a gpubtree index, for k = ANY(array)
 * (with other conditions on the key or not), or for the rows of a key range.
 */
static void
lookup_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti,
						RangeTblEntry *rte)
{
	ListCell   *lc;
	const char *why;

	if (prev_set_rel_pathlist)
		prev_set_rel_pathlist(root, rel, rti, rte);
	if (!gbt_lookup_has_index(rel))
		return;
	if ((why = gbt_lookup_table_refusal(root, rel)) != NULL)
	{
		gbt_lookup_note(LOOKUP_NODE, root, rel, why);
		return;
	}

	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *index = lfirst_node(IndexOptInfo, lc);
		Oid			tableoid = planner_rt_fetch(rel->relid, root)->relid;
		KeyConditions kc;
		List	   *needed;
		List	   *attmap;
		int			natts;
		bool		covered;
		Expr	   *bound;
		ListCell   *lc2;
		CustomPath *cpath;
		Path	   *best;
		double		nkeys = 0;
		ArrayType  *arr;

		if (!gbt_lookup_index_usable(LOOKUP_NODE, root, rel, index))
			continue;
		key_conditions(rel, index, &kc);
		if (kc.rinfos == NIL)
		{
			if (gbt_plan_noting())
				gbt_lookup_note(LOOKUP_NODE, root, rel,
								psprintf("no WHERE condition is = ANY(array) or a range on the key of index %s",
										 get_rel_name(index->indexoid)));
			continue;
		}

		/* The table's columns that the target list and other conditions use. */
		needed = list_copy(rel->reltarget->exprs);
		foreach(lc2, rel->baserestrictinfo)
			if (!list_member_ptr(kc.rinfos, lfirst(lc2)))
				needed = lappend(needed, lfirst_node(RestrictInfo, lc2)->clause);
		if (!gbt_lookup_needed_columns(index, tableoid, needed, rel->relid, &attmap, &natts,
									   &covered))
		{
			gbt_lookup_note(LOOKUP_NODE, root, rel,
									 "the query needs a system column or the whole row of the table");
			return;
		}

		best = gbt_lookup_cheapest_path(rel);
		if (best == NULL)
			return;
		cpath = make_lookup_path(rel, index, &kc, attmap, natts, covered);
		bound = kc.any != NULL ? list_nth(kc.bounds, kc.array_at) : NULL;
		if (kc.any == NULL)
		{
			if (!cost_range(root, rel, index, tableoid, &kc, needed, covered, cpath))
				return;
		}
		else if (IsA(bound, Const))
		{
			/* A constant: below min_gpu_batch, or from the heap, as costing.c has it. */
			if (((Const *) bound)->constisnull)
			{
				gbt_lookup_note(LOOKUP_NODE, root, rel, "= ANY(NULL): no keys to look up");
				return;
			}
			if (!covered)
			{
				if (gbt_plan_noting())
					gbt_lookup_note(LOOKUP_NODE, root, rel,
									psprintf("the query needs columns that index %s does not hold (%s): a constant array is left to the service-costed bitmap scan",
											 get_rel_name(index->indexoid),
											 gbt_lookup_columns_not_held(index, tableoid, needed, rel->relid)));
				return;
			}
			arr = DatumGetArrayTypeP(((Const *) bound)->constvalue);
			nkeys = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
			if (nkeys < gpubtree_min_gpu_batch)
			{
				if (gbt_plan_noting())
					gbt_lookup_note(LOOKUP_NODE, root, rel,
									psprintf("= ANY array of %.0f elements, fewer than gpubtree.min_gpu_batch (%d)",
											 nkeys, gpubtree_min_gpu_batch));
				return;
			}
			cpath->path.startup_cost =
				gbt_lookup_service_cost(nkeys, rel->rows,
										gbt_lookup_unsure_fraction(rel, tableoid), covered);
		}
		else if (path_probes(best, index, kc.any))
			cpath->path.startup_cost = best->total_cost * 0.98;
		else
		{
			if (gbt_plan_noting())
				gbt_lookup_note(LOOKUP_NODE, root, rel,
								psprintf("the array is known only when the plan runs, and the cheapest ordinary path (%s, cost %.0f) does not probe index %s with it",
										 gbt_lookup_path_label(best), best->total_cost,
										 get_rel_name(index->indexoid)));
			return;
		}
		cpath->path.total_cost = cpath->path.startup_cost;
		if (gbt_plan_noting())
			gbt_lookup_note(LOOKUP_NODE, root, rel, kc.any == NULL ?
							psprintf("offered on index %s for the rows of a key range at cost %.0f, against %.0f for the cheapest other path",
									 get_rel_name(index->indexoid),
									 cpath->path.total_cost, best->total_cost) :
							IsA(bound, Const) ?
							psprintf("offered on index %s for %.0f keys at cost %.0f, against %.0f for the cheapest other path",
									 get_rel_name(index->indexoid), nkeys,
									 cpath->path.total_cost, best->total_cost) :
							psprintf("offered on index %s for an array known only when the plan runs, at cost %.0f, 2 %% under the ordinary path that probes the index with it (%.0f); the node decides when it runs",
									 get_rel_name(index->indexoid), cpath->path.total_cost,
									 best->total_cost));
		/* (first: add_path() may free a path it rejects) */
		if (kc.any == NULL)
			add_ordered_range_paths(root, rel, index, cpath);
		add_path(rel, (Path *) cpath);
		return;
	}
}

static Plan *
plan_lookup(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	List	   *priv = best_path->custom_private;
	List	   *conditions = list_nth(priv, PRIV_LOOKUP_CONDITIONS);
	ListCell   *lc;

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.scanrelid = rel->relid;
	cscan->methods = &gbt_lookup_scan_methods;
	cscan->custom_private = list_truncate(list_copy(priv), LOOKUP_PRIV_N);
	cscan->custom_exprs = copyObject(list_nth(priv, PRIV_LOOKUP_BOUNDS));
	/* The conditions on the key are the lookup's own: exact, not rechecked. */
	clauses = list_copy(clauses);
	foreach(lc, conditions)
		clauses = list_delete_ptr(clauses, lfirst(lc));
	cscan->scan.plan.qual = extract_actual_clauses(clauses, false);
	return &cscan->scan.plan;
}

void
gbt_lookup_plan_init(void)
{
	lookup_path_methods.CustomName = LOOKUP_NODE;
	lookup_path_methods.PlanCustomPath = plan_lookup;
	gbt_lookup_node_init();
	gbt_join_node_init();

	prev_set_rel_pathlist = set_rel_pathlist_hook;
	set_rel_pathlist_hook = lookup_set_rel_pathlist;
	gbt_join_plan_init();
}
