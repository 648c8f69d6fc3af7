/*
 * join_plan.c
 *	  Where the planner may use the GpubtreeJoin custom scan: an inner join
 *	  on k = expression of the other side, k the leading column of a
 *	  gpubtree index that holds every column the join needs from its table.
 *
 * The node reads the other side once, keeping its rows, looks all their
 * keys up in one request, and joins each kept row with its key's rows from
 * a hash table (join_node.c): one batched lookup instead of an index
 * descent per outer row, and only the matching rows of the table in
 * memory.  It is costed at the service's cost (lookup_plan.c): the outer
 * side, a round trip, a small cost per key and per row, a heap visit per
 * row the mirror cannot decide, and the rows kept.  Each refusal, and each
 * offer with its cost against the cheapest join path so far, is a note for
 * gpubtree_why_not() (built only while it asks).
 */
#include "postgres.h"

#include "access/stratnum.h"
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

#include "exec_request.h"
#include "exec_why.h"
#include "backend.h"
#include "build.h"
#include "keytypes.h"
#include "lookup.h"
#include "lookup_plan.h"
#include "pg_compat.h"

static set_join_pathlist_hook_type prev_set_join_pathlist = NULL;
static CustomPathMethods join_path_methods;

/*
 * The tables of a join's other side, by their names in the query (not the
 * outer joins that PostgreSQL 16 and later count among a join's relids).
 */
static char *
rels_label(PlannerInfo *root, Relids relids)
{
	StringInfoData names;
	int			x = -1;

	initStringInfo(&names);
	while ((x = bms_next_member(relids, x)) >= 0)
		if (x < root->simple_rel_array_size && root->simple_rte_array[x] != NULL &&
			root->simple_rte_array[x]->rtekind != RTE_JOIN &&
			root->simple_rte_array[x]->eref != NULL)
			appendStringInfo(&names, "%s%s", names.len > 0 ? ", " : "",
							 root->simple_rte_array[x]->eref->aliasname);
	return names.data;
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
		gbt_lookup_service_cost(outer_rows / divisor, inner_rows / divisor, unsure, true);
	cpath->path.total_cost = cpath->path.startup_cost +
		cpath->path.rows * (cpu_tuple_cost + nquals * cpu_operator_cost);
	cpath->custom_paths = list_make1(outer);
	cpath->methods = &join_path_methods;
	cpath->custom_private = priv;
	return cpath;
}

/*
 * A note on the join of the table innerrel with the tables of outerrel,
 * only while gpubtree_why_not() asks.
 */
static void
join_note(PlannerInfo *root, RelOptInfo *innerrel, RelOptInfo *outerrel,
		  const char *reason)
{
	if (gbt_plan_noting())
		gbt_lookup_note(JOIN_NODE, root, innerrel,
						psprintf("joined to %s: %s", rels_label(root, outerrel->relids),
								 reason));
}

/* Why a join of this type is not the node's (it does inner joins). */
static const char *
join_type_refusal(JoinType jointype)
{
	switch (jointype)
	{
		case JOIN_LEFT:
			return "a left join (the node does inner joins)";
		case JOIN_RIGHT:
			return "a right join (the node does inner joins)";
		case JOIN_FULL:
			return "a full join (the node does inner joins)";
		case JOIN_ANTI:
			return "an anti-join, NOT EXISTS (the node does inner joins)";
		case JOIN_SEMI:
		case JOIN_UNIQUE_OUTER:
		case JOIN_UNIQUE_INNER:
			return "a semi-join, EXISTS or IN (the node does inner joins)";
		default:
			return "not an inner join";
	}
}

/*
 * An inner join whose inner side is a table with a gpubtree index on the
 * join key, and whose index holds every inner column the join needs: a
 * GpubtreeJoin over the outer side's cheapest path.
 */
static void
join_set_pathlist(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
				  RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	Path	   *outer_path;
	ListCell   *lc;
	const char *why;

	if (prev_set_join_pathlist)
		prev_set_join_pathlist(root, joinrel, outerrel, innerrel, jointype, extra);
	if (!gbt_lookup_has_index(innerrel))
		return;
	if (jointype != JOIN_INNER)
	{
		join_note(root, innerrel, outerrel, join_type_refusal(jointype));
		return;
	}
	if ((why = gbt_lookup_table_refusal(root, innerrel)) != NULL)
	{
		gbt_lookup_note(JOIN_NODE, root, innerrel, why);
		return;
	}
	outer_path = outerrel->cheapest_total_path;
	if (outer_path == NULL || outer_path->param_info != NULL)
	{
		join_note(root, innerrel, outerrel, "its rows depend on another table (LATERAL)");
		return;
	}
	if (!is_projection_capable_path(outer_path))
	{
		if (gbt_plan_noting())
			join_note(root, innerrel, outerrel,
					  psprintf("its cheapest path (%s) cannot compute the join key for the node",
							   gbt_lookup_path_label(outer_path)));
		return;
	}
	foreach(lc, list_concat(list_copy(outerrel->reltarget->exprs),
							list_concat(list_copy(innerrel->reltarget->exprs),
										joinrel->reltarget->exprs)))
	{
		if (!IsA(lfirst(lc), Var))
		{
			join_note(root, innerrel, outerrel,
					  "the join's columns include a placeholder (an expression from below an outer join), not only plain columns");
			return;
		}
	}

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
		char		mirror_why[GBT_ERRMSG_LEN];
		Path	   *best;
		CustomPath *cpath;

		if (!gbt_lookup_index_usable(JOIN_NODE, root, innerrel, index))
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
		{
			if (gbt_plan_noting())
				join_note(root, innerrel, outerrel,
						  psprintf("no join condition is the key of index %s = an expression of the other side (hashable, of the key's type)",
								   get_rel_name(index->indexoid)));
			continue;
		}

		/* The inner columns: the join's, and those of the table's own conditions. */
		needed = list_copy(innerrel->reltarget->exprs);
		foreach(lc2, innerrel->baserestrictinfo)
			needed = lappend(needed, lfirst_node(RestrictInfo, lc2)->clause);
		if (!gbt_lookup_needed_columns(index, tableoid, needed, innerrel->relid, &attmap,
									   &natts, &covered))
		{
			join_note(root, innerrel, outerrel,
					  "the join needs a system column or the whole row of the table");
			return;
		}
		if (!covered)
		{
			if (gbt_plan_noting())
				join_note(root, innerrel, outerrel,
						  psprintf("the join needs columns that index %s does not hold (%s)",
								   get_rel_name(index->indexoid),
								   gbt_lookup_columns_not_held(index, tableoid, needed,
															   innerrel->relid)));
			return;
		}
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
		{
			if (gbt_plan_noting())
				join_note(root, innerrel, outerrel,
						  psprintf("%.0f rows of the table and %.0f of the other side expected, more than one lookup takes (%lld and %lld)",
								   rows, outerrel->rows,
								   (long long) (GBT_MAX_LOOKUP_ROWS / 4),
								   (long long) (MaxArraySize / 2)));
			return;
		}

		/*
		 * Unlike the other nodes, this one keeps no plan of PostgreSQL's to
		 * fall back to: without the service it probes nbtree key by key in
		 * one process, where PostgreSQL's own join may run in several.  So
		 * it is offered only while the service holds a current mirror (and
		 * the first query without one has it built in the background).
		 */
		if (!gbt_mirror_ready(index->indexoid, mirror_why, sizeof(mirror_why)))
		{
			if (gbt_plan_noting())
				gbt_lookup_note(JOIN_NODE, root, innerrel,
								psprintf("index %s: %s (the node is offered only while the service holds a current mirror)",
										 get_rel_name(index->indexoid), mirror_why));
			return;
		}
		priv = list_make5(makeInteger((int) index->indexoid),
						  makeInteger((int) subtype),
						  makeInteger((int) opno),
						  makeInteger(list_length(outerrel->reltarget->exprs)),
						  inner_cols);
		priv = lappend(priv, key);
		priv = lappend(priv, outerrel->reltarget->exprs);
		priv = lappend(priv, inner_vars);
		priv = lappend(priv, quals);
		unsure = gbt_lookup_unsure_fraction(innerrel, tableoid);
		best = gbt_lookup_cheapest_path(joinrel);
		cpath = join_path(joinrel, outer_path, 1, outerrel->rows, rows, unsure,
						  list_length(quals), priv);
		if (gbt_plan_noting())
			join_note(root, innerrel, outerrel,
					  best != NULL ?
					  psprintf("offered on index %s at cost %.0f, against %.0f for the cheapest join path so far",
							   get_rel_name(index->indexoid), cpath->path.total_cost,
							   best->total_cost) :
					  psprintf("offered on index %s at cost %.0f, the first join path",
							   get_rel_name(index->indexoid), cpath->path.total_cost));
		add_path(joinrel, (Path *) cpath);

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

void
gbt_join_plan_init(void)
{
	join_path_methods.CustomName = JOIN_NODE;
	join_path_methods.PlanCustomPath = plan_join;
	prev_set_join_pathlist = set_join_pathlist_hook;
	set_join_pathlist_hook = join_set_pathlist;
}
