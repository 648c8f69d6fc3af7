/*
 * agg_plan.c
 *	  Plain SQL aggregates over key ranges of a gpubtree index, answered by
 *	  the GPU service: the "GpubtreeAggregate" custom scan.
 *
 * create_upper_paths_hook offers it for a query on one table with only
 * aggregates in its target list (no DISTINCT or FILTER inside them), or
 * with GROUP BY one bucket of the key (agg_group.c: the key itself,
 * width_bucket(), date_trunc(), k / c, ...), or an integer column the
 * index holds or an immutable expression of one (agg_values.c), and the
 * aggregates and that bucket in its target list and HAVING, when every WHERE condition is a range, equality or = ANY on
 * the leading column of a gpubtree index (constants or parameters), and each
 * aggregate is count(*), or count, sum, avg, min or max of a column the
 * index holds among its first GBT_MAX_COLS (key or INCLUDE columns) whose
 * result the service can give exactly (agg_final.c); count of a NOT NULL
 * column of any type is count(*).  A domain column is taken as its base
 * type.  Never on a table with row-level security, an inheritance parent, a
 * partial or expression index.
 *
 * The mirror holds no entries for NULL keys.  A condition on the key
 * excludes them (the operators are strict); without one, unless the key is
 * NOT NULL, the node adds the rows with NULL keys from an index scan for
 * "key IS NULL" on the same index, which visits the heap with the query's
 * snapshot, and is costed as the planner costs that scan (the column's
 * NULL fraction), so that many NULL keys leave the query to the ordinary
 * plan.
 *
 * The node carries the ordinary plan for the same aggregates as its child.
 * At run time it asks the service (agg_node.c, exec_request.c); whenever the answer could
 * differ from PostgreSQL's own (no service, gpubtree.device = off, too many
 * rows on pages that are not all-visible, a sum that could overflow on the
 * way) it runs the child instead, so the result is always the ordinary
 * plan's.  Column privileges are checked by the executor on the query's
 * range table as for any plan.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "exec_request.h"
#include "exec_why.h"
#include "agg_filter.h"
#include "agg_final.h"
#include "agg_group.h"
#include "agg_values.h"
#include "agg_node.h"
#include "backend.h"
#include "capture.h"
#include "planning.h"
#include "keytypes.h"
#include "miscadmin.h"
#include "scankeys.h"
#include "shmem.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planner.h"
#include "optimizer/prep.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "pg_compat.h"


static create_upper_paths_hook_type prev_create_upper_paths = NULL;

/*
 * Two round trips and the visibility map, priced as the few thousand rows
 * btree's index-only scan reads in the same time (0.05 each), as
 * test/bench/agg.sh measures both.
 */
#define GBT_AGG_BASE_COST 200.0

/*
 * A bucket of a GROUP BY: finding its range (a few calls of its function)
 * and its range aggregate in the service.
 */
#define GBT_GROUP_RANGE_COST 1.0

/*
 * An entry read through predicate programs (no chunk sums then): the GPU
 * reads some hundred million a second, a hundredth of a row of a scan.
 */
#define GBT_FILTER_ENTRY_COST 0.0001

/*
 * A group of a column's values (agg_values.c): made by the engine in its
 * one pass, sent back and finished here, about two rows' worth of CPU.
 */
#define GBT_VALUE_GROUP_COST (2 * cpu_tuple_cost)

static CustomPathMethods agg_path_methods;

static bool
column_not_null(Oid relid, AttrNumber attnum)
{
	HeapTuple	tp = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid), Int16GetDatum(attnum));
	bool		notnull = false;

	if (HeapTupleIsValid(tp))
	{
		notnull = ((Form_pg_attribute) GETSTRUCT(tp))->attnotnull;
		ReleaseSysCache(tp);
	}
	return notnull;
}

/*
 * Which aggregate of ours is this Aggref, on which index column, of which
 * base type?
 */
static bool
match_aggref(Aggref *aggref, Index relid, Oid tableoid, IndexOptInfo *index,
			 GbtAggKind *kind, int *col, Oid *argtype)
{
	char	   *name;
	TargetEntry *arg;
	Var		   *var;
	Oid			base;
	int			c;

	if (aggref->aggdistinct != NIL || aggref->aggorder != NIL ||
		aggref->aggkind != AGGKIND_NORMAL ||
		aggref->agglevelsup != 0 || aggref->aggvariadic ||
		aggref->aggsplit != AGGSPLIT_SIMPLE ||
		get_func_namespace(aggref->aggfnoid) != PG_CATALOG_NAMESPACE)
		return false;
	name = get_func_name(aggref->aggfnoid);
	if (strcmp(name, "count") == 0)
		*kind = aggref->aggstar ? GBT_AGG_COUNT_STAR : GBT_AGG_COUNT;
	else if (strcmp(name, "sum") == 0)
		*kind = GBT_AGG_SUM;
	else if (strcmp(name, "avg") == 0)
		*kind = GBT_AGG_AVG;
	else if (strcmp(name, "min") == 0)
		*kind = GBT_AGG_MIN;
	else if (strcmp(name, "max") == 0)
		*kind = GBT_AGG_MAX;
	else
		return false;
	*col = 0;
	*argtype = InvalidOid;
	if (*kind == GBT_AGG_COUNT_STAR)
		return true;

	if (list_length(aggref->args) != 1)
		return false;
	arg = linitial_node(TargetEntry, aggref->args);
	var = gbt_column_of((Node *) arg->expr, relid);
	if (var == NULL)
		return false;
	/* A column that is never NULL counts every row, whatever its type. */
	if (*kind == GBT_AGG_COUNT && column_not_null(tableoid, var->varattno))
	{
		*kind = GBT_AGG_COUNT_STAR;
		return true;
	}
	base = getBaseType(var->vartype);
	/* The aggregate must take the column's own type (count takes "any"). */
	if (*kind != GBT_AGG_COUNT &&
		(aggref->aggargtypes == NIL || linitial_oid(aggref->aggargtypes) != base))
		return false;
	for (c = 0; c < Min(index->ncolumns, GBT_MAX_COLS); c++)
	{
		if (index->indexkeys[c] != var->varattno)
			continue;
		*col = c;
		*argtype = base;
		return gbt_agg_supported(*kind, base);
	}
	return false;
}

/* GROUP BY one bucket of the key (agg_group.c). */
typedef struct GroupBucket
{
	SortGroupClause *clause;
	Expr	   *expr;
	double		ngroups;		/* estimate_num_groups(), then buckets' */
	char	   *label;			/* as EXPLAIN shows it */
	const char *why;			/* why it is not a bucket */
} GroupBucket;

/* Why the node is not offered for this table (gpubtree_why_not()). */
static void
note(PlannerInfo *root, RelOptInfo *rel, const char *reason)
{
	gbt_plan_note("GpubtreeAggregate", planner_rt_fetch(rel->relid, root)->relid, reason);
}

/* Does the expression need a value only the running plan has (an InitPlan's)? */
static bool
known_at_run_time(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if ((IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXEC) ||
		IsA(node, SubPlan) || IsA(node, SubLink))
		return true;
	return expression_tree_walker(node, known_at_run_time, context);
}

/*
 * Does the expression read a column of the table other than through the
 * bucket (or an aggregate)?
 */
static bool
other_columns_walker(Node *node, GroupBucket *group)
{
	if (node == NULL)
		return false;
	if (group != NULL && equal(node, group->expr))
		return false;
	if (IsA(node, Aggref))
		return false;
	if (IsA(node, Var) || IsA(node, PlaceHolderVar))
		return true;
	return expression_tree_walker(node, other_columns_walker, group);
}

static bool
uses_other_columns(Node *node, GroupBucket *group)
{
	return other_columns_walker(node, group);
}

/*
 * The ordinary plan for just these aggregates (after the bucket, grouped by
 * it): the node's child.  When the query's target list is exactly those,
 * PostgreSQL's own cheapest plan for it (parallel, say); otherwise a plain
 * or hashed Agg over the table's cheapest path, computing each aggregate
 * once.
 */
static Path *
fallback_path(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
			  List *aggrefs, const GroupBucket *group)
{
	PathTarget *target = create_empty_pathtarget();
	AggClauseCosts costs;
	ListCell   *lc;
	List	   *columns = group ? lcons(group->expr, list_copy(aggrefs)) : aggrefs;

	if (equal(output_rel->reltarget->exprs, columns))
	{
		Path	   *best = NULL;

		foreach(lc, output_rel->pathlist)
		{
			Path	   *p = lfirst(lc);

			if (best == NULL || GBT_PATH_COST(p) < GBT_PATH_COST(best))
				best = p;
		}

		/*
		 * A copy of the top node: add_path() frees the paths ours beats.
		 * (Only Agg paths; a MinMaxAggPath's plan is built elsewhere.)
		 */
		if (best != NULL && IsA(best, AggPath))
		{
			AggPath    *copy = makeNode(AggPath);

			memcpy(copy, best, sizeof(AggPath));
			return (Path *) copy;
		}
	}

	if (group != NULL)
		add_column_to_pathtarget(target, group->expr, group->clause->tleSortGroupRef);
	foreach(lc, aggrefs)
		add_column_to_pathtarget(target, lfirst(lc), 0);
	set_pathtarget_cost_width(root, target);
	MemSet(&costs, 0, sizeof(costs));
	get_agg_clause_costs(root, AGGSPLIT_SIMPLE, &costs);
	return (Path *) create_agg_path(root, output_rel, input_rel->cheapest_total_path,
									target, group ? AGG_HASHED : AGG_PLAIN, AGGSPLIT_SIMPLE,
									group ? list_make1(group->clause) : NIL, NIL,
									&costs, group ? group->ngroups : 1.0);
}

/*
 * What reading the rows with NULL keys costs: the planner's own index scan
 * for "key IS NULL" on the index, whose row estimate is the column's NULL
 * fraction; *nullfrac is that fraction.  enable_indexscan is for the
 * scans of the ordinary plan, not this one, so it is not charged.
 */
static Cost
null_keys_cost(PlannerInfo *root, IndexOptInfo *index, Oid tableoid,
			   Selectivity *nullfrac)
{
	NullTest   *test = makeNode(NullTest);
	IndexClause *iclause = makeNode(IndexClause);
	IndexPath  *ipath;
	Oid			typid;
	int32		typmod;
	Oid			collid;
	Cost		cost;

	get_atttypetypmodcoll(tableoid, index->indexkeys[0], &typid, &typmod, &collid);
	test->arg = (Expr *) makeVar(index->rel->relid, index->indexkeys[0],
								 typid, typmod, collid, 0);
	test->nulltesttype = IS_NULL;
	test->argisrow = false;
	test->location = -1;
	iclause->rinfo = make_simple_restrictinfo(root, (Expr *) test);
	iclause->indexquals = list_make1(iclause->rinfo);
	iclause->lossy = false;
	iclause->indexcol = 0;
	iclause->indexcols = NIL;
	ipath = create_index_path(root, index, list_make1(iclause), NIL, NIL, NIL,
							  ForwardScanDirection, false, NULL, 1.0, false);
	cost = ipath->path.total_cost;
	if (!enable_indexscan && GBT_DISABLE_COST_CHARGED)
		cost -= disable_cost;
	*nullfrac = ipath->indexselectivity;
	return cost;
}

static bool
try_index(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
		  IndexOptInfo *index, List *aggrefs, GroupBucket *group)
{
	Index		relid = input_rel->relid;
	List	   *strategies = NIL,
			   *subtypes = NIL,
			   *operators = NIL,
			   *arrays = NIL,
			   *bounds = NIL,
			   *kinds = NIL,
			   *columns = NIL,
			   *argtypes = NIL;
	ListCell   *lc;
	CustomPath *cpath;
	double		unsure_rows;
	double		unsure_frac;
	Relation	heap;
	bool		key_not_null = false;
	bool		null_keys;
	Cost		null_cost = 0;
	Selectivity nullfrac = 0;
	Oid			tableoid = planner_rt_fetch(relid, root)->relid;
	Var		   *var;
	bool		runtime_array = false;
	List	   *where_clauses = NIL;
	List	   *where_prog = NIL;
	char	   *where_label = "";
	List	   *filter_exprs = NIL;
	List	   *filters = NIL;
	List	   *filter_of = NIL;
	bool		any_filter = false;
	int			value_col = -1;
	double		value_groups = 0;	/* the column's values the service groups */
	bool		key_expr = false;	/* an expression of the key, not a bucket */
	bool		plain_column = true;
	const char *value_why;

	if (index->indpred != NIL || index->indexkeys[0] == 0 || index->hypothetical ||
		!gbt_comparable(index->opcintype[0], index->opcintype[0]))
	{
		note(root, input_rel, psprintf("index %s is partial or on an expression",
									   get_rel_name(index->indexoid)));
		return false;
	}
	if (group != NULL &&
		!gbt_group_is_bucket((Node *) group->expr, relid, index->indexkeys[0], index->opcintype[0],
							 &group->why))
	{
		/*
		 * or an integer column the index holds, or an expression of one,
		 * with few values; of the key, only under conditions past its
		 * ranges or FILTERs (below)
		 */
		value_col = gbt_value_column(root, input_rel, index, (Node *) group->expr, 0,
									 group->ngroups, &value_groups, &plain_column, &value_why);
		key_expr = value_col == 0;
		if (value_col < 0 && value_why != NULL)
			group->why = value_why;
		if (value_col < 0 || (!key_expr && value_groups > GBT_MAX_COLUMN_GROUPS))
		{
			note(root, input_rel, psprintf("GROUP BY %s: %s", group->label,
										   value_col < 0 ? group->why :
										   "more values than the service groups by"));
			return false;
		}
	}
	else if (group != NULL)
		group->ngroups = gbt_bucket_count_estimate(root, input_rel, group->expr,
												   index->indexkeys[0], index->opcintype[0],
												   group->ngroups);

	foreach(lc, input_rel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		int			strategy;
		Oid			subtype;
		Oid			opno;
		bool		array;
		Expr	   *bound;

		/* k IS NOT NULL: what the mirror holds anyway. */
		if (IsA(rinfo->clause, NullTest) &&
			((NullTest *) rinfo->clause)->nulltesttype == IS_NOT_NULL &&
			(var = gbt_column_of((Node *) ((NullTest *) rinfo->clause)->arg, relid)) != NULL &&
			var->varattno == index->indexkeys[0])
		{
			key_not_null = true;
			continue;
		}
		if (rinfo->pseudoconstant)
			return false;
		if (!gbt_match_condition(rinfo->clause, relid, index, &strategy, &subtype,
								 &opno, &array, &bound))
		{
			/* a condition past the key's ranges: a predicate program */
			where_clauses = lappend(where_clauses, rinfo->clause);
			continue;
		}
		strategies = lappend_int(strategies, strategy);
		subtypes = lappend_oid(subtypes, subtype);
		operators = lappend_oid(operators, opno);
		if (array && !IsA(bound, Const))
			runtime_array = true;
		/* A GROUP BY's buckets are made at executor start, before InitPlans run. */
		if (group != NULL && known_at_run_time((Node *) bound, NULL))
		{
			note(root, input_rel, "GROUP BY with a key condition known only when the plan runs (a subquery's value)");
			return false;
		}
		arrays = lappend_int(arrays, !array ? GBT_ARRAY_NONE :
							 IsA(bound, Const) ? GBT_ARRAY_CONST : GBT_ARRAY_RUNTIME);
		bounds = lappend(bounds, bound);
	}

	/*
	 * The mirror has no entries for NULL keys: without a condition on the
	 * key (the operators are strict) or NOT NULL, an index scan adds them.
	 */
	null_keys = strategies == NIL && !key_not_null &&
		!column_not_null(tableoid, index->indexkeys[0]);

	/* Conditions on other columns the index holds: a WHERE program. */
	if (where_clauses != NIL)
	{
		const char *why;

		where_prog = gbt_filter_plan((Node *) where_clauses, relid, index, &why);
		if (where_prog == NIL)
		{
			if (gbt_plan_noting())
				note(root, input_rel,
					 psprintf("WHERE %s: %s (index %s)",
							  gbt_deparse_on(root, input_rel, (Node *) make_ands_explicit(where_clauses)),
							  why, get_rel_name(index->indexoid)));
			return false;
		}
		where_label = gbt_deparse_on(root, input_rel, (Node *) make_ands_explicit(where_clauses));
	}

	foreach(lc, aggrefs)
	{
		GbtAggKind	kind;
		int			col;
		Oid			argtype;

		if (!match_aggref(lfirst_node(Aggref, lc), relid, tableoid, index, &kind, &col,
						  &argtype))
		{
			if (gbt_plan_noting())
				note(root, input_rel,
					 psprintf("%s is not an aggregate the service answers from index %s (count, sum, avg, min or max of a column it holds, without DISTINCT, ORDER BY or FILTER)",
							  gbt_deparse_on(root, input_rel, lfirst(lc)),
							  get_rel_name(index->indexoid)));
			return false;
		}
		kinds = lappend_int(kinds, kind);
		columns = lappend_int(columns, col);
		argtypes = lappend_oid(argtypes, argtype);
		filter_exprs = lappend(filter_exprs, lfirst_node(Aggref, lc)->aggfilter);
		any_filter |= lfirst_node(Aggref, lc)->aggfilter != NULL;
	}

	/*
	 * GROUP BY the key itself under conditions beyond its ranges or
	 * FILTERs: every range's entries are read anyway, so they are grouped
	 * by value in one pass rather than read a range a group.  So is an
	 * expression of the key that is not a bucket (k % 10), and only then.
	 */
	if (group != NULL && value_col < 0 && (where_prog != NIL || any_filter) &&
		group->ngroups <= GBT_MAX_COLUMN_GROUPS)
		value_col = gbt_value_column(root, input_rel, index, (Node *) group->expr, 0,
									 group->ngroups, &value_groups, &plain_column,
									 &value_why) == 0 && plain_column ? 0 : -1;
	else if (key_expr && ((where_prog == NIL && !any_filter) ||
						  value_groups > GBT_MAX_COLUMN_GROUPS))
	{
		note(root, input_rel, psprintf("GROUP BY %s: %s", group->label,
									   value_groups > GBT_MAX_COLUMN_GROUPS ?
									   "more values than the service groups by" : group->why));
		return false;
	}

	/*
	 * FILTER clauses: a program each (equal ones once), the first none at
	 * all (the rows WHERE keeps: a group with rows is a group even when no
	 * row passes an aggregate's FILTER).
	 */
	if (where_prog != NIL || any_filter || value_col >= 0)
	{
		List	   *distinct = list_make1(NULL);

		filters = list_make1(NIL);
		foreach(lc, filter_exprs)
		{
			Expr	   *f = lfirst(lc);
			int			slot = 0;
			ListCell   *ld;

			foreach(ld, distinct)
			{
				if (equal(lfirst(ld), f))
					break;
				slot++;
			}
			if (ld == NULL)
			{
				const char *why;
				List	   *prog = gbt_filter_plan((Node *) f, relid, index, &why);

				if (prog == NIL || list_length(distinct) == GBT_PRED_MAX_FILTERS)
				{
					if (gbt_plan_noting())
						note(root, input_rel,
							 psprintf("FILTER (WHERE %s): %s (index %s)",
									  gbt_deparse_on(root, input_rel, (Node *) f),
									  prog == NIL ? why : "more FILTER clauses than the service takes",
									  get_rel_name(index->indexoid)));
					return false;
				}
				distinct = lappend(distinct, f);
				filters = lappend(filters, prog);
			}
			filter_of = lappend_int(filter_of, slot);
		}
	}

	cpath = makeNode(CustomPath);
	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = output_rel;
	cpath->path.pathtarget = output_rel->reltarget;
	cpath->path.rows = group ? group->ngroups : 1;

	/*
	 * The fixed cost (so that a small range, or min/max through the index's
	 * ends, stays with PostgreSQL), plus a heap visit for each entry the
	 * mirror cannot decide, plus the scan for NULL keys.  Without the
	 * capture trigger, that is each entry on a page that is not all-visible;
	 * with it, the mirror decides what others changed, and only the entries
	 * its export could not tell (at most 1/64 of them, export.c) and our own
	 * changes are left.
	 */
	if (null_keys)
		null_cost = null_keys_cost(root, index, tableoid, &nullfrac);
	unsure_frac = 1.0 - input_rel->allvisfrac;
	heap = table_open(tableoid, NoLock);
	if (index->indexkeys[0] != 0 && gbt_capture_enabled(heap))
		unsure_frac = Min(unsure_frac, 1.0 / GBT_UNKNOWN_ONE_IN);
	table_close(heap, NoLock);
	unsure_rows = input_rel->rows * (1.0 - nullfrac) * unsure_frac;
	cpath->path.startup_cost = GBT_AGG_BASE_COST + input_rel->pages / 32768.0 +
		unsure_rows * gbt_agg_unsure_cost() + null_cost +
		(filters != NIL ? input_rel->tuples * GBT_FILTER_ENTRY_COST : 0) *
		(value_col >= 0 ? 2 : 1) +
		(value_col >= 0 ? value_groups * GBT_VALUE_GROUP_COST :
		 group ? Min(group->ngroups, GBT_MAX_GROUP_RANGES) * GBT_GROUP_RANGE_COST : 0);
	cpath->path.total_cost = cpath->path.startup_cost;
	cpath->custom_paths = list_make1(fallback_path(root, input_rel, output_rel, aggrefs,
												   group));

	/*
	 * An = ANY of an array known only when the plan runs (a parameter of a
	 * generic plan, an InitPlan's result): the planner's guess of its length
	 * is a default, so the node decides at run time from the real one
	 * (agg_node.c), running the plan below for a short array.  It never
	 * costs more than that plan, and is costed 2 % under it, beyond
	 * add_path()'s 1 % fuzz, so that the choice left to run time is the
	 * path kept.
	 */
	if (runtime_array)
	{
		Cost		cap = ((Path *) linitial(cpath->custom_paths))->total_cost * 0.98;

		cpath->path.startup_cost = Min(cpath->path.startup_cost, cap);
		cpath->path.total_cost = Min(cpath->path.total_cost, cap);
	}
	cpath->custom_private = list_make5(makeInteger((int) index->indexoid),
									   strategies, subtypes, operators, arrays);
	cpath->custom_private = lappend(cpath->custom_private, kinds);
	cpath->custom_private = lappend(cpath->custom_private, columns);
	cpath->custom_private = lappend(cpath->custom_private, argtypes);
	cpath->custom_private = lappend(cpath->custom_private, makeInteger(null_keys));
	cpath->custom_private = lappend(cpath->custom_private, group ? group->expr : NULL);
	cpath->custom_private = lappend(cpath->custom_private,
									makeInteger(group ? (int) group->clause->eqop : 0));
	cpath->custom_private = lappend(cpath->custom_private,
									makeString(group ? group->label : ""));
	cpath->custom_private = lappend(cpath->custom_private, makeInteger(value_col));
	cpath->custom_private = lappend(cpath->custom_private,
									makeInteger(value_col >= 0 && !plain_column));
	cpath->custom_private = lappend(cpath->custom_private, where_prog);
	cpath->custom_private = lappend(cpath->custom_private, makeString(where_label));
	cpath->custom_private = lappend(cpath->custom_private, filters);
	cpath->custom_private = lappend(cpath->custom_private, filter_of);
	cpath->custom_private = lappend(cpath->custom_private, aggrefs);
	cpath->custom_private = lappend(cpath->custom_private, bounds);
	cpath->methods = &agg_path_methods;
	if (gbt_plan_noting())
		note(root, input_rel,
			 psprintf("offered on index %s at cost %.0f, against %.0f for the ordinary plan below it",
					  get_rel_name(index->indexoid), cpath->path.total_cost,
					  ((Path *) linitial(cpath->custom_paths))->total_cost));
	add_path(output_rel, (Path *) cpath);
	return true;
}

static void
gbt_create_upper_paths(PlannerInfo *root, UpperRelationKind stage,
					   RelOptInfo *input_rel, RelOptInfo *output_rel, void *extra)
{
	Query	   *parse = root->parse;
	List	   *aggrefs = NIL;
	List	   *vars;
	ListCell   *lc;
	GroupBucket bucket;
	GroupBucket *group = NULL;
	const char *why = NULL;

	if (prev_create_upper_paths)
		prev_create_upper_paths(root, stage, input_rel, output_rel, extra);

	if (stage != UPPERREL_GROUP_AGG || !parse->hasAggs || !gbt_has_gpubtree_index(root, input_rel))
		return;
	if (gbt_shared == NULL)
		why = "the library is not in shared_preload_libraries (no service)";
	else if (!gpubtree_enable_aggregate)
		why = "gpubtree.enable_aggregate is off";
	else if (gpubtree_device_mode == GPUBTREE_DEVICE_OFF)
		why = "gpubtree.device is off";
	else if (input_rel->reloptkind != RELOPT_BASEREL)
		why = "the aggregates are over a join (the node reads one table)";
	else if (!gbt_plain_table(root, input_rel))
		why = "not a plain table (row-level security, an inheritance parent, a partitioned table, TABLESAMPLE)";
	else if (list_length(parse->groupClause) > 1)
		why = "GROUP BY more than one expression";
	else if (parse->groupingSets != NIL)
		why = "GROUPING SETS, ROLLUP or CUBE";
	else if (parse->hasWindowFuncs)
		why = "window functions";
	else if (parse->hasTargetSRFs)
		why = "set-returning functions in the target list";
	else if (parse->havingQual != NULL && parse->groupClause == NIL)
		why = "HAVING without GROUP BY";
	if (why != NULL)
	{
		gbt_plan_note("GpubtreeAggregate", input_rel->reloptkind == RELOPT_BASEREL ?
					  planner_rt_fetch(input_rel->relid, root)->relid : InvalidOid, why);
		return;
	}

	/* GROUP BY one expression: a bucket of the key, or nothing of ours. */
	if (parse->groupClause != NIL)
	{
		group = &bucket;
		group->clause = linitial_node(SortGroupClause, parse->groupClause);
		group->expr = (Expr *) get_sortgroupclause_expr(group->clause, root->processed_tlist);
		if (!OidIsValid(group->clause->eqop) || !group->clause->hashable)
		{
			note(root, input_rel, "the GROUP BY expression's type has no hash function");
			return;
		}
		group->ngroups = estimate_num_groups(root, list_make1(group->expr),
											 input_rel->rows, NULL, NULL);
		group->label = gbt_deparse_on(root, input_rel, (Node *) group->expr);
	}

	/*
	 * The aggregates, each once, in the target list and HAVING; nothing else
	 * may come from the table but the bucket.
	 */
	if (uses_other_columns((Node *) output_rel->reltarget->exprs, group) ||
		uses_other_columns(parse->havingQual, group))
	{
		note(root, input_rel, group ?
			 "the target list or HAVING reads a column outside the GROUP BY expression and the aggregates" :
			 "the target list reads a column outside the aggregates");
		return;
	}
	vars = pull_var_clause((Node *) list_make2(output_rel->reltarget->exprs,
											   parse->havingQual),
						   PVC_INCLUDE_AGGREGATES | PVC_INCLUDE_WINDOWFUNCS |
						   PVC_INCLUDE_PLACEHOLDERS);
	foreach(lc, vars)
	{
		if (IsA(lfirst(lc), Var))
			continue;			/* the bucket's key (checked above) */
		if (!IsA(lfirst(lc), Aggref))
		{
			note(root, input_rel, "the target list holds more than columns and aggregates");
			return;
		}
		if (!list_member(aggrefs, lfirst(lc)))
			aggrefs = lappend(aggrefs, lfirst(lc));
	}
	if (aggrefs == NIL)
		return;

	foreach(lc, input_rel->indexlist)
	{
		IndexOptInfo *index = lfirst_node(IndexOptInfo, lc);

		/* The first gpubtree index that can answer. */
		if (gpubtree_is_gpubtree_indexinfo(index) &&
			try_index(root, input_rel, output_rel, index, aggrefs, group))
			return;
	}
}

static Plan *
plan_agg(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
		 List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	List	   *priv = best_path->custom_private;
	List	   *aggrefs = list_nth(priv, PRIV_AGGREFS);
	List	   *scan_tlist = NIL;
	ListCell   *lc;
	int			resno = 1;

	if (list_nth(priv, PRIV_GROUP) != NULL)
	{
		scan_tlist = list_make1(makeTargetEntry(copyObject(list_nth(priv, PRIV_GROUP)),
												resno++, NULL, false));
		/* HAVING, over the groups, as an Agg node applies it */
		cscan->scan.plan.qual = (List *) copyObject(root->parse->havingQual);
	}
	foreach(lc, aggrefs)
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry(copyObject(lfirst(lc)), resno++, NULL, false));
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.scanrelid = 0;
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = copyObject(list_nth(priv, PRIV_BOUNDS));
	cscan->custom_private = list_truncate(list_copy(priv), PRIV_AGGREFS);
	cscan->methods = &gbt_agg_scan_methods;
	return &cscan->scan.plan;
}

void
gbt_aggplan_init(void)
{
	agg_path_methods.CustomName = "GpubtreeAggregate";
	agg_path_methods.PlanCustomPath = plan_agg;
	gbt_agg_node_init();

	prev_create_upper_paths = create_upper_paths_hook;
	create_upper_paths_hook = gbt_create_upper_paths;
}
