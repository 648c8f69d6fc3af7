/*
 * lookup_plan.c
 *	  Rows of many keys looked up in one batch through the GPU service: the
 *	  "GpubtreeLookup" and "GpubtreeJoin" custom scans, and where the
 *	  planner may use them.
 *
 * Two shapes of query probe a gpubtree index with many keys at once:
 *
 * - k = ANY(array) on the leading key column, the array a constant of at
 *	 least gpubtree.min_gpu_batch elements or known only when the plan runs
 *	 (a parameter of a generic plan, a PL/pgSQL variable, an InitPlan): the
 *	 GpubtreeLookup scan evaluates the array and asks the service for the
 *	 rows of all its keys in one request.
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
#include "backend.h"
#include "build.h"
#include "capture.h"
#include "keytypes.h"
#include "lookup.h"
#include "planning.h"
#include "settings.h"
#include "shmem.h"
#include "pg_compat.h"

/* Service round trip, in cost units, as costing.c prices it. */
#define LOOKUP_ROUND_TRIP_COST (100.0 * cpu_operator_cost)

static set_rel_pathlist_hook_type prev_set_rel_pathlist = NULL;
static set_join_pathlist_hook_type prev_set_join_pathlist = NULL;
static CustomPathMethods lookup_path_methods;
static CustomPathMethods join_path_methods;

/* Path-only private items, after the plan's (lookup.h). */
#define PRIV_LOOKUP_ANY LOOKUP_PRIV_N	/* the = ANY RestrictInfo */

/* Can the node read this table?  In a SELECT that locks no rows. */
static bool
table_ok(PlannerInfo *root, RelOptInfo *rel)
{
	return rel->indexlist != NIL && root->parse->commandType == CMD_SELECT &&
		root->parse->rowMarks == NIL && gbt_shared != NULL && gpubtree_enable_lookup &&
		gpubtree_device_mode != GPUBTREE_DEVICE_OFF && gbt_plain_table(root, rel);
}

/*
 * Which of the table's columns the node must produce (those of exprs), and
 * whether the mirror holds them all: then attmap[c] names the table column
 * of mirror column c that is needed (0: none).  False if a system column or
 * the whole row is needed.
 */
static bool
needed_columns(IndexOptInfo *index, Oid tableoid, List *exprs, Index relid,
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
		bool		found = false;

		if (attno <= 0)
			return false;
		*natts = Max(*natts, attno);
		for (c = 0; c < Min(index->ncolumns, GBT_MAX_COLS) && !found; c++)
		{
			if (index->indexkeys[c] == attno &&
				gbt_key_type(get_atttype(tableoid, attno)) != NULL)
			{
				map[c] = attno;
				found = true;
			}
		}
		*covered &= found;
	}
	*attmap = NIL;
	for (c = 0; c < GBT_MAX_COLS; c++)
		*attmap = lappend_int(*attmap, *covered ? map[c] : 0);
	return true;
}

/* The share of rows whose visibility the mirror may leave to the heap. */
static double
unsure_fraction(RelOptInfo *rel, Oid tableoid)
{
	double		frac = 1.0 - rel->allvisfrac;
	Relation	heap = table_open(tableoid, NoLock);

	if (gbt_capture_enabled(heap))
		frac = Min(frac, 1.0 / GBT_UNKNOWN_ONE_IN);
	table_close(heap, NoLock);
	return frac;
}

/* The service's cost of nkeys keys and rows rows. */
static Cost
service_cost(double nkeys, double rows, double unsure_frac, bool covered)
{
	return LOOKUP_ROUND_TRIP_COST + nkeys * cpu_operator_cost +
		rows * cpu_tuple_cost +
		rows * (covered ? unsure_frac : 1.0) * gbt_agg_unsure_cost();
}

static CustomPath *
make_lookup_path(RelOptInfo *rel, IndexOptInfo *index, int subtype, Oid opno,
				 List *attmap, int natts, bool covered)
{
	CustomPath *cpath = makeNode(CustomPath);

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = rel;
	cpath->path.pathtarget = rel->reltarget;
	cpath->path.rows = rel->rows;
	cpath->methods = &lookup_path_methods;
	cpath->custom_private = list_make5(makeInteger((int) index->indexoid),
									   makeInteger((int) subtype),
									   makeInteger((int) opno),
									   makeInteger(covered),
									   attmap);
	cpath->custom_private = lappend(cpath->custom_private, makeInteger(natts));
	return cpath;
}

/* The cheapest unparameterized path of rel so far. */
static Path *
cheapest_path(RelOptInfo *rel)
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

/* k = ANY(array) on the leading column of a gpubtree index. */
static void
lookup_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti,
						RangeTblEntry *rte)
{
	ListCell   *lc;

	if (prev_set_rel_pathlist)
		prev_set_rel_pathlist(root, rel, rti, rte);
	if (!table_ok(root, rel))
		return;

	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *index = lfirst_node(IndexOptInfo, lc);
		RestrictInfo *any = NULL;
		List	   *needed;
		List	   *attmap;
		int			natts;
		bool		covered;
		int			strategy;
		Oid			subtype;
		Oid			opno;
		bool		array;
		Expr	   *bound;
		ListCell   *lc2;
		CustomPath *cpath;
		Path	   *best;
		double		nkeys;
		ArrayType  *arr;

		if (!gpubtree_is_gpubtree_indexinfo(index) || index->indpred != NIL ||
			index->indexkeys[0] == 0 || index->hypothetical)
			continue;
		foreach(lc2, rel->baserestrictinfo)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc2);

			if (!rinfo->pseudoconstant &&
				gbt_match_condition(rinfo->clause, rel->relid, index, &strategy,
									&subtype, &opno, &array, &bound) && array)
			{
				any = rinfo;
				break;
			}
		}
		if (any == NULL)
			continue;

		/* The table's columns that the target list and other conditions use. */
		needed = list_copy(rel->reltarget->exprs);
		foreach(lc2, rel->baserestrictinfo)
			if (lfirst(lc2) != any)
				needed = lappend(needed, lfirst_node(RestrictInfo, lc2)->clause);
		if (!needed_columns(index, planner_rt_fetch(rel->relid, root)->relid, needed,
							rel->relid, &attmap, &natts, &covered))
			return;

		best = cheapest_path(rel);
		if (best == NULL)
			return;
		cpath = make_lookup_path(rel, index, subtype, opno, attmap, natts, covered);
		cpath->custom_private = lappend(cpath->custom_private, any);
		if (IsA(bound, Const))
		{
			/* A constant: below min_gpu_batch, or from the heap, as costing.c has it. */
			if (((Const *) bound)->constisnull || !covered)
				return;
			arr = DatumGetArrayTypeP(((Const *) bound)->constvalue);
			nkeys = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
			if (nkeys < gpubtree_min_gpu_batch)
				return;
			cpath->path.startup_cost =
				service_cost(nkeys, rel->rows,
							 unsure_fraction(rel, planner_rt_fetch(rel->relid, root)->relid),
							 covered);
		}
		else if (path_probes(best, index, any))
			cpath->path.startup_cost = best->total_cost * 0.98;
		else
			return;
		cpath->path.total_cost = cpath->path.startup_cost;
		add_path(rel, (Path *) cpath);
		return;
	}
}

/*
 * The expression of the outer side that an inner-join clause equates with
 * the leading column of the index, and the operator with the index's column
 * on its left; or NULL.
 */
static Expr *
join_key(RestrictInfo *rinfo, RelOptInfo *outerrel, RelOptInfo *innerrel,
		 IndexOptInfo *index, Oid *opno, Oid *subtype)
{
	OpExpr	   *e = (OpExpr *) rinfo->clause;
	Node	   *inner;
	Node	   *outer;
	Oid			op;
	int			strategy;
	Oid			lefttype;
	Oid			righttype;
	Var		   *var;

	if (!IsA(e, OpExpr) || list_length(e->args) != 2 || !rinfo->can_join ||
		!OidIsValid(rinfo->hashjoinoperator))
		return NULL;
	if (bms_is_subset(rinfo->left_relids, innerrel->relids) &&
		bms_is_subset(rinfo->right_relids, outerrel->relids))
	{
		inner = linitial(e->args);
		outer = lsecond(e->args);
		op = e->opno;
	}
	else if (bms_is_subset(rinfo->left_relids, outerrel->relids) &&
			 bms_is_subset(rinfo->right_relids, innerrel->relids))
	{
		inner = lsecond(e->args);
		outer = linitial(e->args);
		op = get_commutator(e->opno);
	}
	else
		return NULL;
	if (IsA(inner, RelabelType))
		inner = (Node *) ((RelabelType *) inner)->arg;
	var = (Var *) inner;
	if (!IsA(var, Var) || var->varno != innerrel->relid || var->varlevelsup != 0 ||
		var->varattno != index->indexkeys[0] || !OidIsValid(op) ||
		!op_in_opfamily(op, index->opfamily[0]) || contain_volatile_functions(outer))
		return NULL;
	get_op_opfamily_properties(op, index->opfamily[0], false, &strategy,
							   &lefttype, &righttype);
	if (strategy != BTEqualStrategyNumber || lefttype != index->opcintype[0] ||
		!gbt_comparable(righttype, lefttype) || exprType(outer) != righttype)
		return NULL;
	*opno = op;
	*subtype = righttype;
	return (Expr *) outer;
}

/* Path-only private items of a GpubtreeJoin path, after the plan's. */
enum
{
	JOIN_PATH_KEY = JOIN_PRIV_N,	/* the outer side's join key */
	JOIN_PATH_OUTER_VARS,		/* the outer columns the join needs */
	JOIN_PATH_INNER_VARS,		/* the inner ones, per JOIN_PRIV_INNER_COLS */
	JOIN_PATH_QUALS				/* every other condition (RestrictInfos) */
};

/*
 * The share of a partial path's rows one process reads: the workers', and
 * the leader's while it has time between theirs (as costsize.c counts it).
 */
static double
parallel_divisor(Path *path)
{
	double		divisor = path->parallel_workers;

	if (parallel_leader_participation && 1.0 - 0.3 * path->parallel_workers > 0)
		divisor += 1.0 - 0.3 * path->parallel_workers;
	return divisor;
}

/*
 * A GpubtreeJoin path over outer (a partial path when divisor > 1: then each
 * process reads, keeps and looks up 1/divisor of the outer_rows, and joins
 * as many of the rows).  Costed as the outer plan, a cost per kept row and
 * per joined row, and the service's cost for its keys and rows.
 */
static CustomPath *
join_path(RelOptInfo *joinrel, Path *outer, double divisor, double outer_rows,
		  double inner_rows, double unsure, int nquals, List *priv)
{
	CustomPath *cpath = makeNode(CustomPath);

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = joinrel;
	cpath->path.pathtarget = joinrel->reltarget;
	cpath->path.parallel_safe = divisor > 1;
	/* (for the workers' runs in the leader's EXPLAIN: exec_node.c) */
	cpath->path.parallel_aware = divisor > 1;
	cpath->path.parallel_workers = divisor > 1 ? outer->parallel_workers : 0;
	cpath->path.rows = clamp_row_est(joinrel->rows / divisor);
	cpath->path.startup_cost = outer->total_cost +
		outer_rows / divisor * cpu_tuple_cost +
		service_cost(outer_rows / divisor, inner_rows / divisor, unsure, true);
	cpath->path.total_cost = cpath->path.startup_cost +
		cpath->path.rows * (cpu_tuple_cost + nquals * cpu_operator_cost);
	cpath->custom_paths = list_make1(outer);
	cpath->methods = &join_path_methods;
	cpath->custom_private = priv;
	return cpath;
}

/*
 * An inner join whose inner side is a table with a gpubtree index on the
 * join key, and whose index holds every inner column the join needs: a
 * GpubtreeJoin over the outer side's cheapest path.
 */
static void
lookup_set_join_pathlist(PlannerInfo *root, RelOptInfo *joinrel,
						 RelOptInfo *outerrel, RelOptInfo *innerrel,
						 JoinType jointype, JoinPathExtraData *extra)
{
	Path	   *outer_path;
	ListCell   *lc;

	if (prev_set_join_pathlist)
		prev_set_join_pathlist(root, joinrel, outerrel, innerrel, jointype, extra);
	if (jointype != JOIN_INNER || !table_ok(root, innerrel) ||
		(outer_path = outerrel->cheapest_total_path) == NULL ||
		outer_path->param_info != NULL || !is_projection_capable_path(outer_path))
		return;
	foreach(lc, list_concat(list_copy(outerrel->reltarget->exprs),
							list_concat(list_copy(innerrel->reltarget->exprs),
										joinrel->reltarget->exprs)))
		if (!IsA(lfirst(lc), Var))
			return;				/* placeholders: not for us */

	foreach(lc, innerrel->indexlist)
	{
		IndexOptInfo *index = lfirst_node(IndexOptInfo, lc);
		Oid			tableoid = planner_rt_fetch(innerrel->relid, root)->relid;
		RestrictInfo *keyclause = NULL;
		Expr	   *key = NULL;
		Oid			opno = InvalidOid;
		Oid			subtype = InvalidOid;
		List	   *needed;
		List	   *attmap;
		List	   *inner_cols = NIL;
		List	   *inner_vars = NIL;
		List	   *quals = NIL;
		List	   *priv;
		int			natts;
		bool		covered;
		double		unsure;
		ListCell   *lc2;
		int			c;
		double		rows;

		if (!gpubtree_is_gpubtree_indexinfo(index) || index->indpred != NIL ||
			index->indexkeys[0] == 0 || index->hypothetical)
			continue;
		foreach(lc2, extra->restrictlist)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc2);

			if (keyclause == NULL &&
				(key = join_key(rinfo, outerrel, innerrel, index, &opno, &subtype)) != NULL)
				keyclause = rinfo;
			else
				quals = lappend(quals, rinfo);
		}
		if (keyclause == NULL)
			continue;

		/* The inner columns: the join's, and those of the table's own conditions. */
		needed = list_copy(innerrel->reltarget->exprs);
		foreach(lc2, innerrel->baserestrictinfo)
			needed = lappend(needed, lfirst_node(RestrictInfo, lc2)->clause);
		if (!needed_columns(index, tableoid, needed, innerrel->relid, &attmap, &natts,
							&covered) || !covered)
			return;
		for (c = 0; c < GBT_MAX_COLS; c++)
		{
			AttrNumber	attno = list_nth_int(attmap, c);
			Oid			typid;
			int32		typmod;
			Oid			collid;

			if (attno == 0)
				continue;
			get_atttypetypmodcoll(tableoid, attno, &typid, &typmod, &collid);
			inner_cols = lappend_int(inner_cols, c);
			inner_vars = lappend(inner_vars, makeVar(innerrel->relid, attno, typid, typmod,
													 collid, 0));
		}
		quals = list_concat(quals, innerrel->baserestrictinfo);

		/*
		 * The outer side read once and kept, its keys looked up, each outer
		 * row joined with its key's rows, which are held in memory: only
		 * for as many rows as one lookup may return.
		 */
		rows = Min(innerrel->rows, joinrel->rows);
		if (rows > GBT_MAX_LOOKUP_ROWS / 4 || outerrel->rows > MaxArraySize / 2)
			return;

		/*
		 * Unlike the other nodes, this one keeps no plan of PostgreSQL's to
		 * fall back to: without the service it probes nbtree key by key in
		 * one process, where PostgreSQL's own join may run in several.  So
		 * it is offered only while the service holds a current mirror (and
		 * the first query without one has it built in the background).
		 */
		if (!gbt_mirror_ready(index->indexoid))
			return;
		priv = list_make5(makeInteger((int) index->indexoid),
						  makeInteger((int) subtype),
						  makeInteger((int) opno),
						  makeInteger(list_length(outerrel->reltarget->exprs)),
						  inner_cols);
		priv = lappend(priv, key);
		priv = lappend(priv, outerrel->reltarget->exprs);
		priv = lappend(priv, inner_vars);
		priv = lappend(priv, quals);
		unsure = unsure_fraction(innerrel, tableoid);
		add_path(joinrel, (Path *) join_path(joinrel, outer_path, 1, outerrel->rows, rows,
											 unsure, list_length(quals), priv));

		/*
		 * And in parallel, over a partial path of the outer side: each
		 * process keeps and looks up its share of the outer rows (the
		 * service answers them in turn), under a Gather.
		 */
		if (joinrel->consider_parallel && outerrel->partial_pathlist != NIL)
		{
			Path	   *partial = linitial(outerrel->partial_pathlist);

			if (partial->param_info == NULL && is_projection_capable_path(partial))
				add_partial_path(joinrel,
								 (Path *) join_path(joinrel, partial,
													parallel_divisor(partial),
													outerrel->rows, rows, unsure,
													list_length(quals), priv));
		}
		return;
	}
}

/*
 * The join's scan tuple is the outer columns, then the inner ones; the plan
 * below produces the join key, then the outer columns.
 */
static Plan *
plan_join(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
		  List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	List	   *priv = best_path->custom_private;
	Plan	   *outer = linitial(custom_plans);
	List	   *scan_tlist = NIL;
	List	   *outer_tlist;
	ListCell   *lc;

	outer_tlist = list_make1(makeTargetEntry(copyObject(list_nth(priv, JOIN_PATH_KEY)), 1,
											 NULL, false));
	foreach(lc, list_nth(priv, JOIN_PATH_OUTER_VARS))
	{
		outer_tlist = lappend(outer_tlist,
							  makeTargetEntry(copyObject(lfirst(lc)),
											  list_length(outer_tlist) + 1, NULL, false));
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry(copyObject(lfirst(lc)),
											 list_length(scan_tlist) + 1, NULL, false));
	}
	foreach(lc, list_nth(priv, JOIN_PATH_INNER_VARS))
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry(copyObject(lfirst(lc)),
											 list_length(scan_tlist) + 1, NULL, false));
	outer->targetlist = outer_tlist;

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual =
		extract_actual_clauses(list_nth(priv, JOIN_PATH_QUALS),
							   false);
	cscan->scan.scanrelid = 0;
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_plans = list_make1(outer);
	cscan->custom_private = list_truncate(list_copy(priv), JOIN_PRIV_N);
	cscan->methods = &gbt_join_scan_methods;
	return &cscan->scan.plan;
}

static Plan *
plan_lookup(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	List	   *priv = best_path->custom_private;
	RestrictInfo *any = list_nth(priv, PRIV_LOOKUP_ANY);

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.scanrelid = rel->relid;
	cscan->methods = &gbt_lookup_scan_methods;
	cscan->custom_private = list_truncate(list_copy(priv), LOOKUP_PRIV_N);
	cscan->custom_exprs =
		list_make1(copyObject(lsecond(((ScalarArrayOpExpr *) any->clause)->args)));
	/* The = ANY is the lookup's own: exact, not rechecked. */
	clauses = list_delete_ptr(list_copy(clauses), any);
	cscan->scan.plan.qual = extract_actual_clauses(clauses, false);
	return &cscan->scan.plan;
}

void
gbt_lookup_plan_init(void)
{
	lookup_path_methods.CustomName = "GpubtreeLookup";
	lookup_path_methods.PlanCustomPath = plan_lookup;
	join_path_methods.CustomName = "GpubtreeJoin";
	join_path_methods.PlanCustomPath = plan_join;
	gbt_lookup_node_init();
	gbt_join_node_init();

	prev_set_rel_pathlist = set_rel_pathlist_hook;
	set_rel_pathlist_hook = lookup_set_rel_pathlist;
	prev_set_join_pathlist = set_join_pathlist_hook;
	set_join_pathlist_hook = lookup_set_join_pathlist;
}
