/*
 * agg_node.c
 *	  The GpubtreeAggregate custom scan at run time: ask the service for the
 *	  aggregates (exec_request.c), or run the ordinary plan below it; its
 *	  callbacks of the executor core (exec_node.h), which also says in
 *	  EXPLAIN which answered.
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
#include "agg_filter.h"
#include "agg_final.h"
#include "agg_state.h"
#include "agg_values.h"
#include "agg_group.h"
#include "agg_node.h"
#include "agg_scan.h"
#include "backend.h"
#include "exec_node.h"
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
#include "utils/datum.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "pg_compat.h"


typedef struct AggScanState
{
	GbtExecNode node;			/* first: what every service node holds */
	Oid			indexoid;
	List	   *strategies;
	List	   *subtypes;
	List	   *operators;
	List	   *arrays;
	List	   *kinds;
	List	   *columns;
	List	   *argtypes;
	bool		null_keys;		/* add the rows with NULL keys */
	List	   *bounds;			/* ExprState per condition */
	int64		null_entries;	/* rows with NULL keys added */
	int64		nranges;

	/* GROUP BY a bucket of the key (agg_group.c) */
	Expr	   *group;			/* NULL: no GROUP BY */
	int			group_column;	/* -1: a bucket; else grouped by its values */
	bool		group_by_expr;	/* of an expression of that column */
	Oid			group_eqop;
	char	   *group_label;
	GbtBuckets	buckets;		/* made at executor start */
	const char *buckets_why;	/* NULL: made */
	int64		ngroups;		/* groups answered */
	int64		next_group;		/* the next to return */
	Datum	   *group_values;	/* per group, its row: ncolumns values */
	bool	   *group_nulls;

	/* conditions past the key's ranges, FILTER clauses (agg_filter.h) */
	List	   *where;			/* planned WHERE program, or NIL */
	char	   *where_label;
	List	   *filters;		/* planned FILTER programs; NIL: none */
	List	   *filter_of;		/* per aggregate: its program */
} AggScanState;

CustomScanMethods gbt_agg_scan_methods;
static GbtExecNodeMethods agg_node_methods;

static Node *
create_agg_state(CustomScan *cscan)
{
	AggScanState *s = (AggScanState *) gbt_exec_node_new(sizeof(AggScanState),
														 &agg_node_methods);
	List	   *priv = cscan->custom_private;

	s->indexoid = (Oid) intVal(list_nth(priv, PRIV_INDEX));
	s->strategies = list_nth(priv, PRIV_STRATEGIES);
	s->subtypes = list_nth(priv, PRIV_SUBTYPES);
	s->operators = list_nth(priv, PRIV_OPERATORS);
	s->arrays = list_nth(priv, PRIV_ARRAYS);
	s->kinds = list_nth(priv, PRIV_KINDS);
	s->columns = list_nth(priv, PRIV_COLUMNS);
	s->argtypes = list_nth(priv, PRIV_ARGTYPES);
	s->null_keys = intVal(list_nth(priv, PRIV_NULL_KEYS)) != 0;
	s->group = list_nth(priv, PRIV_GROUP);
	s->group_eqop = (Oid) intVal(list_nth(priv, PRIV_GROUP_EQOP));
	s->group_label = strVal(list_nth(priv, PRIV_GROUP_LABEL));
	s->group_column = intVal(list_nth(priv, PRIV_GROUP_COLUMN));
	s->group_by_expr = intVal(list_nth(priv, PRIV_GROUP_BY_EXPR)) != 0;
	s->where = list_nth(priv, PRIV_WHERE);
	s->where_label = strVal(list_nth(priv, PRIV_WHERE_LABEL));
	s->filters = list_nth(priv, PRIV_FILTERS);
	s->filter_of = list_nth(priv, PRIV_FILTER_OF);
	return (Node *) s;
}

/*
 * The key ranges of the query's conditions, in *lo and *hi (sorted unless
 * !*sorted); false, with *why, when the service cannot take them.
 */
static bool
query_ranges(AggScanState *s, Relation index, uint64 **lo, uint64 **hi, bool *sorted,
			 bool *runtime_array, const char **why)
{
	ExprContext *econtext = s->node.css.ss.ps.ps_ExprContext;
	int			nkeys = list_length(s->bounds);
	ScanKeyData *keys = palloc0(sizeof(ScanKeyData) * Max(nkeys, 1));
	int			i;

	*runtime_array = false;
	for (i = 0; i < nkeys; i++)
	{
		bool		isnull;
		Datum		v = ExecEvalExpr(list_nth(s->bounds, i), econtext, &isnull);

		if (isnull)
		{
			*why = "a NULL bound";
			return false;
		}
		*runtime_array |= list_nth_int(s->arrays, i) == GBT_ARRAY_RUNTIME;
		ScanKeyEntryInitialize(&keys[i], list_nth_int(s->arrays, i) != GBT_ARRAY_NONE ?
							   SK_SEARCHARRAY : 0,
							   1, list_nth_int(s->strategies, i),
							   list_nth_oid(s->subtypes, i), InvalidOid,
							   get_opcode(list_nth_oid(s->operators, i)), v);
	}
	if (!gbt_keys_to_ranges(keys, nkeys, index->rd_opcintype[0], true, sorted, lo, hi,
							&s->nranges))
	{
		*why = "conditions the service does not take";
		return false;
	}
	return true;
}

/*
 * Whether the node asks no min or max: then the service may leave the
 * answer's wrong (it adds a range's ends in its delta by block sums less
 * the entries outside them).
 */
static bool
no_extremes(const AggScanState *s)
{
	ListCell   *lc;

	foreach(lc, s->kinds)
		if (lfirst_int(lc) == GBT_AGG_MIN || lfirst_int(lc) == GBT_AGG_MAX)
			return false;
	return true;
}

/* Each column as the plan expects it in the mirror (never otherwise). */
static bool
columns_as_planned(AggScanState *s)
{
	GbtExecNode *node = &s->node;
	int			i;

	for (i = 0; i < list_length(s->kinds); i++)
	{
		int			col = list_nth_int(s->columns, i);

		if (list_nth_int(s->kinds, i) != GBT_AGG_COUNT_STAR &&
			(col >= node->answer.columns.ncols ||
			 node->answer.columns.type[col] != gbt_column_type(list_nth_oid(s->argtypes, i))))
		{
			node->why = "the mirror does not hold a column as expected";
			return false;
		}
	}
	return true;
}

/*
 * The rows the mirror has no entries for (NULL keys), through nbtree, into
 * r (with programs: r[f] for each FILTER program).
 */
static void
add_null_keys(AggScanState *s, Relation heap, Relation index, const gbt_pred_set *preds,
			  GbtAggResult *r)
{
	ScanKeyData nullkey;
	GbtColumns	cols;
	int64		before = r->count;

	ScanKeyEntryInitialize(&nullkey, SK_ISNULL | SK_SEARCHNULL, 1,
						   InvalidStrategy, InvalidOid, InvalidOid,
						   InvalidOid, (Datum) 0);
	gbt_index_columns(index, &cols);
	if (preds != NULL)
		gbt_aggregate_by_scan_filtered(heap, index, &nullkey, 1,
									   s->node.css.ss.ps.state->es_snapshot, &cols,
									   preds, r);
	else
		gbt_aggregate_by_scan(heap, index, &nullkey, 1,
							  s->node.css.ss.ps.state->es_snapshot, &cols, r);
	s->null_entries += r->count - before;
}

/*
 * The plan's programs, their constants evaluated now, into *preds (NULL:
 * the plan has none); false, with node.why, when they cannot be built.
 */
static bool
build_preds(AggScanState *s, const gbt_pred_set **preds)
{
	ExprContext *econtext = s->node.css.ss.ps.ps_ExprContext;
	GbtPredList list = {NULL, 0, 0};
	gbt_pred_set *set;
	ListCell   *lc;
	int			f = 0;

	*preds = NULL;
	if (s->filters == NIL)
		return true;
	set = palloc0(sizeof(gbt_pred_set));
	if (s->where != NIL)
	{
		gbt_pred   *p = palloc(sizeof(gbt_pred));

		if (!gbt_filter_build(s->where, econtext, p, &list, &s->node.why))
			return false;
		set->where = p;
	}
	foreach(lc, s->filters)
	{
		if (lfirst(lc) != NIL)
		{
			gbt_pred   *p = palloc(sizeof(gbt_pred));

			if (!gbt_filter_build(lfirst(lc), econtext, p, &list, &s->node.why))
				return false;
			set->filter[f] = p;
		}
		f++;
	}
	set->nfilters = f;
	set->list = list.values;
	set->nlist = list.n;
	*preds = set;
	return true;
}

static int
cmp_uint64(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return x < y ? -1 : x > y;
}

/* Points in any order made sorted and distinct ranges, in place: how many. */
static int64
sort_points(uint64 *keys, int64 n)
{
	int64		i;
	int64		out = 0;

	qsort(keys, n, sizeof(uint64), cmp_uint64);
	for (i = 0; i < n; i++)
		if (out == 0 || keys[i] != keys[out - 1])
			keys[out++] = keys[i];
	return out;
}

/*
 * A GROUP BY's buckets, at executor start: their function may fail on a
 * key no row has (agg_group.c catches that in a subtransaction), which a
 * running parallel plan would not allow.
 */
static void
make_buckets(AggScanState *s, EState *estate)
{
	Relation	index = index_open(s->indexoid, AccessShareLock);
	uint64	   *lo;
	uint64	   *hi;
	uint64		key_min;
	uint64		key_max;
	bool		sorted;
	bool		runtime_array;
	bool		has_keys;

	gbt_buckets_init(&s->buckets, s->group, index->rd_opcintype[0], s->group_eqop, estate);
	s->buckets.max_evaluations =
		Max(GBT_MIN_BUCKET_CALLS,
			(int64) Min(GBT_PLAN_COST((Plan *) linitial(((CustomScan *) s->node.css.ss.ps.plan)->custom_plans)) /
						GBT_BUCKET_CALL_COST, (double) PG_INT64_MAX / 2));
	if (query_ranges(s, index, &lo, &hi, &sorted, &runtime_array, &s->buckets_why) &&
		gbt_key_extent(index, &has_keys, &key_min, &key_max, &s->buckets_why))
	{
		if (!sorted)
			s->buckets_why = "conditions the service does not take";
		else if (!has_keys)
			s->buckets_why = NULL;	/* no bucket: no range */
		else if (gbt_buckets_make(&s->buckets, lo, hi, s->nranges, key_min, key_max,
								  &s->buckets_why))
			s->buckets_why = NULL;
	}
	index_close(index, AccessShareLock);
}

static void
begin_agg(GbtExecNode *node, EState *estate, int eflags)
{
	AggScanState *s = (AggScanState *) node;
	CustomScan *cscan = (CustomScan *) node->css.ss.ps.plan;

	s->bounds = ExecInitExprList(cscan->custom_exprs, &node->css.ss.ps);
	s->buckets_why = "not made";
	if (s->group != NULL && s->group_column < 0 && !(eflags & EXEC_FLAG_EXPLAIN_ONLY) &&
		gpubtree_device_mode != GPUBTREE_DEVICE_OFF)
		make_buckets(s, estate);
}

/* Does equality of the type mean equal bits (any key of a group shows its value)? */
static bool
image_exact(Oid typid)
{
	switch (typid)
	{
		case BOOLOID:
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case OIDOID:
		case DATEOID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return true;
		default:
			return false;
	}
}

/*
 * The value of a group whose bucket type has equal values of other bits
 * (a float's -0 and 0, a numeric's scales): PostgreSQL shows the bucket of
 * the group's first row it reads, so the service's answer stands only when
 * the group's smallest and largest keys give the same bits.
 */
static bool
group_value(AggScanState *s, const GbtAggResult *r, Datum *value)
{
	GbtBuckets *b = &s->buckets;
	const GbtKeyType *kt = gbt_key_type(b->keytype);
	const GbtAggCol *key = &r->col[0];
	bool		null_min;
	bool		null_max;
	Datum		at_min;
	Datum		at_max;

	if (kt == NULL || s->node.answer.columns.ncols < 1 || key->nonnull == 0 ||
		key->ties != 0)
		return false;
	at_min = gbt_bucket_of(b, kt->datum(key->min_i, key->min_f), false, &null_min);
	at_max = gbt_bucket_of(b, kt->datum(key->max_i, key->max_f), false, &null_max);
	if (null_min || null_max ||
		!datum_image_eq(at_min, at_max, b->valbyval, b->vallen))
		return false;
	*value = at_min;
	return true;
}

/*
 * The groups of a GROUP BY, each range of its buckets aggregated by the
 * service, and the rows of NULL keys through nbtree: their rows into
 * group_values; false (with node.why) when the child must answer.
 */
static bool
answer_groups(AggScanState *s)
{
	GbtExecNode *node = &s->node;
	EState	   *estate = node->css.ss.ps.state;
	GbtBuckets *b = &s->buckets;
	int			ncolumns = 1 + list_length(s->kinds);
	GbtAggSlots slots = {b->lo, b->hi, b->nranges, true, NULL, NULL};
	GbtAggResult *results = NULL;	/* per group, per FILTER program */
	int64	   *group_of = palloc(sizeof(int64) * Max(b->nranges, 1));
	int64	   *first = palloc(sizeof(int64) * (b->nranges + 1));
	int64		ngroups = 0;
	int			nf;
	Relation	index;
	Relation	heap;
	bool		ok = true;
	int64		g;
	int64		r;
	int			f;

	s->ngroups = s->next_group = 0;
	s->null_entries = 0;
	if (s->buckets_why != NULL)
	{
		node->why = s->buckets_why;
		return false;
	}
	if (!build_preds(s, &slots.preds))
		return false;
	slots.no_extremes = no_extremes(s);
	nf = slots.preds != NULL ? slots.preds->nfilters : 1;
	index = index_open(s->indexoid, AccessShareLock);
	heap = table_open(index->rd_index->indrelid, NoLock);
	s->nranges = b->nranges;
	gbt_exec_keys_ready(node);
	if (b->nranges > 0)
	{
		double		buys = GBT_PLAN_COST(GBT_EXEC_CHILD(node)->plan) / gbt_agg_unsure_cost();

		ok = gbt_aggregate_slots(heap, index, &slots, estate->es_snapshot,
								 (int64) Min(buys, (double) GBT_MAX_UNSURE),
								 &node->answer, &node->why);
		ok = ok && columns_as_planned(s);
	}
	else
		gbt_index_columns(index, &node->answer.columns);	/* no key: no range */
	if (ok)
	{
		ngroups = gbt_buckets_groups(b, group_of);
		results = palloc0(sizeof(GbtAggResult) * (ngroups + 1) * nf);
		for (r = b->nranges - 1; r >= 0; r--)
		{
			for (f = 0; f < nf; f++)
				gbt_agg_combine(&results[group_of[r] * nf + f], &slots.results[r * nf + f],
								&node->answer.columns);
			first[group_of[r]] = r;
		}
		if (s->null_keys)
			add_null_keys(s, heap, index, slots.preds, &results[ngroups * nf]);
	}
	table_close(heap, NoLock);
	index_close(index, AccessShareLock);
	if (!ok)
		return false;

	/*
	 * The rows: groups with visible rows (that WHERE keeps: program 0 has
	 * no FILTER), then the NULL keys'.
	 */
	s->group_values = palloc(sizeof(Datum) * ncolumns * (ngroups + 1));
	s->group_nulls = palloc(sizeof(bool) * ncolumns * (ngroups + 1));
	for (g = 0; g <= ngroups; g++)
	{
		Datum	   *values = s->group_values + s->ngroups * ncolumns;
		bool	   *nulls = s->group_nulls + s->ngroups * ncolumns;
		const GbtAggResult *rows = &results[g * nf];
		int			i;

		if (rows->count == 0)
			continue;
		if (g == ngroups)
			values[0] = gbt_bucket_of(b, (Datum) 0, true, &nulls[0]);
		else if (b->nulls[first[g]] || image_exact(b->valtype))
		{
			values[0] = b->values[first[g]];
			nulls[0] = b->nulls[first[g]];
		}
		else if (group_value(s, rows, &values[0]))
			nulls[0] = false;
		else
		{
			node->why = "equal buckets of different bits, which the plan's order picks";
			return false;
		}
		for (i = 1; i < ncolumns; i++)
		{
			int			slot = slots.preds != NULL ? list_nth_int(s->filter_of, i - 1) : 0;

			if (!gbt_agg_final(list_nth_int(s->kinds, i - 1), list_nth_oid(s->argtypes, i - 1),
							   &rows[slot], list_nth_int(s->columns, i - 1),
							   &values[i], &nulls[i], &node->why))
				return false;
		}
		s->ngroups++;
	}
	node->answered = true;
	return true;
}

/*
 * GROUP BY a column's values (agg_values.c): its groups' rows into
 * group_values; false (with node.why) when the child must answer.
 */
static bool
answer_values(AggScanState *s)
{
	GbtExecNode *node = &s->node;
	EState	   *estate = node->css.ss.ps.state;
	int			ncolumns = 1 + list_length(s->kinds);
	const GbtKeyType *kt =
		gbt_key_type(getBaseType(gbt_value_expr_column((Node *) s->group)->vartype));
	const gbt_pred_set *preds;
	GbtValueGroups vg;
	Relation	index;
	Relation	heap;
	uint64	   *lo;
	uint64	   *hi;
	bool		sorted;
	bool		runtime_array;
	bool		ok;
	int64		g;

	s->ngroups = s->next_group = 0;
	s->null_entries = 0;
	if (kt == NULL || !build_preds(s, &preds) || preds == NULL)
		return false;
	index = index_open(s->indexoid, AccessShareLock);
	heap = table_open(index->rd_index->indrelid, NoLock);
	ok = query_ranges(s, index, &lo, &hi, &sorted, &runtime_array, &node->why);
	gbt_exec_keys_ready(node);
	if (ok)
	{
		double		buys = GBT_PLAN_COST(GBT_EXEC_CHILD(node)->plan) / gbt_agg_unsure_cost();

		if (!sorted)
			s->nranges = sort_points(lo, s->nranges);
		ok = gbt_value_groups(heap, index, lo, sorted ? hi : lo, s->nranges, preds,
							  s->group_column,
							  (int64) Min(node->css.ss.ps.plan->plan_rows * 2,
										  (double) GBT_MAX_COLUMN_GROUPS),
							  s->null_keys, estate->es_snapshot,
							  (int64) Min(buys, (double) GBT_MAX_UNSURE), &node->answer,
							  &vg, &node->why);
		ok = ok && columns_as_planned(s);
	}
	table_close(heap, NoLock);
	index_close(index, AccessShareLock);
	if (ok && s->group_by_expr)
		ok = gbt_value_groups_merge(&vg, preds->nfilters, s->group, s->group_eqop,
									&node->answer.columns, estate, &node->why);
	if (!ok)
		return false;

	s->group_values = palloc(sizeof(Datum) * ncolumns * vg.ngroups);
	s->group_nulls = palloc(sizeof(bool) * ncolumns * vg.ngroups);
	for (g = 0; g < vg.ngroups; g++)
	{
		Datum	   *values = s->group_values + s->ngroups * ncolumns;
		bool	   *nulls = s->group_nulls + s->ngroups * ncolumns;
		const GbtAggResult *rows = &vg.results[g * preds->nfilters];
		int			i;

		if (rows->count == 0)
			continue;
		nulls[0] = vg.nulls[g];
		values[0] = nulls[0] ? (Datum) 0 :
			vg.datums != NULL ? vg.datums[g] : kt->datum(vg.values[g], 0);
		for (i = 1; i < ncolumns; i++)
			if (!gbt_agg_final(list_nth_int(s->kinds, i - 1), list_nth_oid(s->argtypes, i - 1),
							   &rows[list_nth_int(s->filter_of, i - 1)],
							   list_nth_int(s->columns, i - 1), &values[i], &nulls[i],
							   &node->why))
				return false;
		s->ngroups++;
	}
	node->answered = true;
	return true;
}

/* Group g of the answer, into the scan slot. */
static TupleTableSlot *
store_group(AggScanState *s, int64 g)
{
	TupleTableSlot *slot = s->node.css.ss.ss_ScanTupleSlot;
	int			ncolumns = 1 + list_length(s->kinds);

	ExecClearTuple(slot);
	memcpy(slot->tts_values, s->group_values + g * ncolumns, sizeof(Datum) * ncolumns);
	memcpy(slot->tts_isnull, s->group_nulls + g * ncolumns, sizeof(bool) * ncolumns);
	return ExecStoreVirtualTuple(slot);
}

/* Ask the service; false (with node.why) when the child must answer. */
static bool
answer_by_service(AggScanState *s)
{
	GbtExecNode *node = &s->node;
	EState	   *estate = node->css.ss.ps.state;
	TupleTableSlot *slot = node->css.ss.ss_ScanTupleSlot;
	Relation	index;
	Relation	heap;
	uint64	   *lo;
	uint64	   *hi;
	bool		ok;
	bool		runtime_array = false;
	bool		sorted;
	int			i;
	GbtAggSlots slots = {NULL, NULL, 0, false, NULL, NULL};

	if (!gbt_exec_device_on(node))
		return false;
	if (s->group != NULL)
		return s->group_column < 0 ? answer_groups(s) : answer_values(s);
	s->null_entries = 0;

	index = index_open(s->indexoid, AccessShareLock);
	heap = table_open(index->rd_index->indrelid, NoLock);
	ok = query_ranges(s, index, &lo, &hi, &sorted, &runtime_array, &node->why);
	gbt_exec_keys_ready(node);
	if (!ok)
		;
	else if (runtime_array && !gbt_exec_enough_keys(node, s->nranges, true))
		ok = false;				/* planned before the array was known */
	else
	{
		/*
		 * The planner's visibility estimate may be stale (relallvisible
		 * moves only with VACUUM and ANALYZE): checking more entries in the
		 * heap than the child's cost buys, the child answers instead.
		 */
		double		buys = GBT_PLAN_COST(GBT_EXEC_CHILD(node)->plan) / gbt_agg_unsure_cost();

		ok = build_preds(s, &slots.preds);
		if (ok && slots.preds != NULL)
		{
			/* programs: over sorted ranges, a result per FILTER */
			if (!sorted)
				s->nranges = sort_points(lo, s->nranges);
			slots.lo = lo;
			slots.hi = sorted ? hi : lo;
			slots.no_extremes = no_extremes(s);
			slots.nranges = s->nranges;
			ok = gbt_aggregate_slots(heap, index, &slots, estate->es_snapshot,
									 (int64) Min(buys, (double) GBT_MAX_UNSURE),
									 &node->answer, &node->why);
		}
		else if (ok)
			ok = gbt_aggregate(heap, index, lo, hi, s->nranges, sorted, estate->es_snapshot,
							   (int64) Min(buys, (double) GBT_MAX_UNSURE), no_extremes(s),
							   &node->answer, &node->why);
		if (ok)
			s->nranges = node->answer.nkeys;	/* distinct, once the service sorted them */
	}

	ok = ok && columns_as_planned(s);

	/* The rows the mirror has no entries for, through nbtree. */
	if (ok && s->null_keys)
		add_null_keys(s, heap, index, slots.preds,
					  slots.preds != NULL ? slots.results : &node->answer.r);
	table_close(heap, NoLock);
	index_close(index, AccessShareLock);
	if (!ok)
		return false;

	ExecClearTuple(slot);
	for (i = 0; i < list_length(s->kinds); i++)
	{
		const GbtAggResult *r = slots.preds == NULL ? &node->answer.r :
			&slots.results[list_nth_int(s->filter_of, i)];

		if (!gbt_agg_final(list_nth_int(s->kinds, i), list_nth_oid(s->argtypes, i),
						   r, list_nth_int(s->columns, i),
						   &slot->tts_values[i], &slot->tts_isnull[i], &node->why))
			return false;
	}
	ExecStoreVirtualTuple(slot);
	node->answered = true;
	return true;
}

/* The one row of the service's answer, or else the child's rows. */
static TupleTableSlot *
agg_next(ScanState *ss)
{
	AggScanState *s = (AggScanState *) ss;
	GbtExecNode *node = &s->node;

	if (!node->started)
	{
		gbt_exec_start_run(node);
		if (!answer_by_service(s))
			node->other = "the plan below";
		else if (s->group == NULL)
			return ss->ss_ScanTupleSlot;
	}
	if (!node->answered)
	{
		TupleTableSlot *child = ExecProcNode(GBT_EXEC_CHILD(node));

		if (TupIsNull(child))
			return ExecClearTuple(ss->ss_ScanTupleSlot);
		return ExecCopySlot(ss->ss_ScanTupleSlot, child);
	}
	if (s->group != NULL && s->next_group < s->ngroups)
		return store_group(s, s->next_group++);
	return ExecClearTuple(ss->ss_ScanTupleSlot);
}

static void
explain_agg(GbtExecNode *node, ExplainState *es)
{
	AggScanState *s = (AggScanState *) node;
	char	   *name = get_rel_name(s->indexoid);

	ExplainPropertyText("Index", name ? name : "?", es);
	if (s->group != NULL)
		ExplainPropertyText("Group Key", s->group_label, es);
	if (s->where != NIL)
		ExplainPropertyText("Filter", s->where_label, es);
	if (list_length(s->filters) > 1)
		ExplainPropertyInteger("FILTER Programs", NULL, list_length(s->filters) - 1, es);
	ExplainPropertyInteger("Conditions", NULL, list_length(s->strategies), es);
	if (s->null_keys)
		ExplainPropertyText("NULL Keys", "from an index scan", es);
}

static void
explain_agg_answer(GbtExecNode *node, ExplainState *es)
{
	AggScanState *s = (AggScanState *) node;

	if (s->group != NULL)
		ExplainPropertyInteger("Groups", NULL, s->ngroups, es);
	if (s->null_keys)
		ExplainPropertyInteger("Entries with NULL Keys", NULL, s->null_entries, es);
	if (es->verbose && !node->answer.map_read)
		ExplainPropertyText("Visibility Map", "not read (the stamps decide)", es);
	else if (es->verbose)
	{
		ExplainPropertyInteger("Heap Blocks", NULL, node->answer.blocks, es);
		ExplainPropertyInteger("All-Visible Blocks", NULL, node->answer.visible_blocks, es);
	}
}

static GbtExecNodeMethods agg_node_methods = {
	.keys_label = "Key Ranges",
	.next = agg_next,
	.begin = begin_agg,
	.explain_node = explain_agg,
	.explain_answer = explain_agg_answer,
};

void
gbt_agg_node_init(void)
{
	gbt_exec_node_register(&gbt_agg_scan_methods, &agg_node_methods, "GpubtreeAggregate",
						   create_agg_state);
}
