/*
 * agg_values.c
 *	  GROUP BY an integer column the index holds (an INCLUDE column, a later
 *	  key column, or the key itself under conditions beyond its ranges): one
 *	  grouped request (groupby.h), the service grouping the entries of the
 *	  ranges by the column's value; the rows with NULL keys (through nbtree)
 *	  and the entries checked in the heap go into their groups here.
 *	  Integers only: their equality is their bits, so a value is a group
 *	  exactly as PostgreSQL groups it.
 *
 *	  GROUP BY an immutable expression of such a column (v % 10, abs(v),
 *	  CASE ...) is the same request: every row of a value has the same
 *	  result, so the expression is evaluated once per value here and the
 *	  values of equal results merged, which is exact for any expression.
 */
#include "postgres.h"

#include "access/skey.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"

#include "agg_group.h"
#include "agg_scan.h"
#include "agg_state.h"
#include "agg_values.h"
#include "keytypes.h"
#include "planning.h"

/* The one column of a GROUP BY expression, and whether it has only that. */
typedef struct OneColumn
{
	Index		relid;
	Var		   *var;
	const char *why;
} OneColumn;

static bool
one_column_walker(Node *node, OneColumn *c)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) node;

		if (var->varno != c->relid || var->varlevelsup != 0 || var->varattno <= 0 ||
			(c->var != NULL && c->var->varattno != var->varattno))
		{
			c->why = "the GROUP BY expression uses more than one column";
			return true;
		}
		c->var = var;
		return false;
	}
	if (IsA(node, SubPlan) || IsA(node, SubLink) || IsA(node, PlaceHolderVar) ||
		IsA(node, Aggref) || IsA(node, WindowFunc) ||
		(IsA(node, Param) && ((Param *) node)->paramkind != PARAM_EXTERN))
	{
		c->why = "the GROUP BY expression needs a value only the running plan has (a subquery's)";
		return true;
	}
	return expression_tree_walker(node, one_column_walker, c);
}

int
gbt_value_column(PlannerInfo *root, RelOptInfo *rel, IndexOptInfo *index, Node *expr,
				 int first, double expr_groups, double *value_groups, bool *plain,
				 const char **why)
{
	OneColumn	c = {rel->relid, NULL, NULL};
	Var		   *column = gbt_column_of(expr, rel->relid);
	Oid			type;
	int			col;

	*why = NULL;
	*plain = column != NULL;
	if (!*plain)
	{
		if (contain_mutable_functions(expr))
		{
			*why = "the GROUP BY expression has a function that is not immutable";
			return -1;
		}
		if (one_column_walker(expr, &c) || c.var == NULL)
		{
			*why = c.why ? c.why : "the GROUP BY expression uses no column";
			return -1;
		}
		column = c.var;
	}
	type = getBaseType(column->vartype);
	if (type != INT2OID && type != INT4OID && type != INT8OID && type != DATEOID)
		return -1;
	for (col = first; col < Min(index->ncolumns, GBT_MAX_COLS); col++)
		if (index->indexkeys[col] == column->varattno)
		{
			*value_groups = *plain ? expr_groups :
				estimate_num_groups(root, list_make1(column), rel->rows, NULL, NULL);
			return col;
		}
	return -1;
}

static bool
first_var_walker(Node *node, Var **var)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		*var = (Var *) node;
		return true;
	}
	return expression_tree_walker(node, first_var_walker, var);
}

Var *
gbt_value_expr_column(Node *expr)
{
	Var		   *var = NULL;

	first_var_walker(expr, &var);
	return var;
}

/* A row with a NULL key, deformed, into its group if WHERE keeps it. */
typedef struct NullKeyRows
{
	Relation	index;
	GbtColumns	cols;
	GbtAggSlots *slots;
} NullKeyRows;

static void
add_null_key_row(const Datum *values, const bool *isnull, void *arg)
{
	NullKeyRows *nk = arg;
	const gbt_pred_set *preds = nk->slots->preds;
	int64		vals[GBT_MAX_COLS] = {0};
	uint8		nulls = gbt_entry_values(nk->index, &nk->cols, (Datum *) values,
										 (bool *) isnull, vals);

	if (preds->where != NULL &&
		gbt_pred_run(preds->where, preds->list, (const uint64 *) vals, nulls) != GBT_TV_TRUE)
		return;
	gbt_slots_add(nk->slots, &nk->cols, 0, vals, nulls);
}

bool
gbt_value_groups(Relation heap, Relation index, uint64 *lo, uint64 *hi, int64 nranges,
				 const gbt_pred_set *preds, int col, int64 expected, bool null_keys,
				 Snapshot snapshot, int64 max_unsure, GbtAggAnswer *answer,
				 GbtValueGroups *groups, const char **why)
{
	GbtAggSlots slots;

	memset(&slots, 0, sizeof(slots));
	slots.lo = lo;
	slots.hi = hi;
	slots.nranges = nranges;
	slots.preds = preds;
	slots.by_value = true;
	slots.group_col = col;
	slots.group_cap = Min(Max(expected, 16), GBT_MAX_COLUMN_GROUPS);
	if (!gbt_aggregate_slots(heap, index, &slots, snapshot, max_unsure, answer, why))
		return false;
	if (col >= answer->columns.ncols || answer->columns.type[col] != GBT_COL_INT64)
	{
		*why = "the mirror does not hold the GROUP BY column as expected";
		return false;
	}
	if (null_keys)
	{
		NullKeyRows nk;
		ScanKeyData nullkey;

		nk.index = index;
		nk.slots = &slots;
		gbt_index_columns(index, &nk.cols);
		ScanKeyEntryInitialize(&nullkey, SK_ISNULL | SK_SEARCHNULL, 1, InvalidStrategy,
							   InvalidOid, InvalidOid, InvalidOid, (Datum) 0);
		gbt_scan_index_entries(heap, index, &nullkey, 1, snapshot, add_null_key_row, &nk);
	}
	if (!gbt_slots_finish(&slots, &answer->columns, why))
		return false;
	groups->ngroups = slots.ngroups;
	groups->values = slots.group_values;
	groups->nulls = slots.group_nulls;
	groups->results = slots.results;
	groups->datums = NULL;
	return true;
}

/*
 * The expression's result for each group with rows (live[i] the group),
 * into b->values and b->nulls: in a subtransaction where one can be
 * started, so that an error leaves the query to the plan below.  In a
 * parallel operation none can: there the error is raised, which is the
 * plan below's own on that value, as every row of a group with rows passed
 * the WHERE and reaches the GROUP BY.
 */
typedef struct EvaluateArgs
{
	GbtBuckets *b;
	const GbtValueGroups *groups;
	const int64 *live;
	int64		nlive;
	const GbtKeyType *kt;
} EvaluateArgs;

static bool
evaluate_all(void *arg, const char **why)
{
	EvaluateArgs *e = arg;
	int64		i;

	for (i = 0; i < e->nlive; i++)
	{
		int64		g = e->live[i];

		CHECK_FOR_INTERRUPTS();
		e->b->values[i] = gbt_bucket_of(e->b, e->groups->nulls[g] ? (Datum) 0 :
										e->kt->datum(e->groups->values[g], 0),
										e->groups->nulls[g], &e->b->nulls[i]);
	}
	return true;
}

static bool
evaluate_groups(GbtBuckets *b, const GbtValueGroups *groups, const int64 *live,
				int64 nlive, const GbtKeyType *kt, const char **why)
{
	EvaluateArgs e = {b, groups, live, nlive, kt};

	if (IsInParallelMode())
		return evaluate_all(&e, why);
	return gbt_run_in_subxact(evaluate_all, &e,
							  "the GROUP BY expression failed on a value", why);
}

bool
gbt_value_groups_merge(GbtValueGroups *groups, int nfilters, Expr *expr, Oid eqop,
					   const GbtColumns *cols, EState *estate, const char **why)
{
	Var		   *var = gbt_value_expr_column((Node *) expr);
	Oid			coltype = getBaseType(var->vartype);
	const GbtKeyType *kt = gbt_key_type(coltype);
	GbtBuckets	b;
	int64	   *live = palloc(sizeof(int64) * Max(groups->ngroups, 1));
	int64		nlive = 0;
	int64	   *group_of;
	int64	   *first;
	int64		nmerged;
	GbtAggResult *merged;
	Datum	   *datums;
	bool	   *nulls;
	int64		i;
	int			f;

	if (kt == NULL)
	{
		*why = "the GROUP BY column's type is not one the mirror holds";
		return false;
	}
	for (i = 0; i < groups->ngroups; i++)
		if (groups->results[i * nfilters].count > 0)
			live[nlive++] = i;
	gbt_buckets_init(&b, expr, coltype, eqop, estate);
	b.values = palloc(sizeof(Datum) * Max(nlive, 1));
	b.nulls = palloc(sizeof(bool) * Max(nlive, 1));
	if (!evaluate_groups(&b, groups, live, nlive, kt, why))
		return false;

	/* equal results under the GROUP BY's equality: one group */
	b.nranges = nlive;
	group_of = palloc(sizeof(int64) * Max(nlive, 1));
	nmerged = gbt_buckets_groups(&b, group_of);
	first = palloc(sizeof(int64) * Max(nmerged, 1));
	merged = palloc0(sizeof(GbtAggResult) * Max(nmerged, 1) * nfilters);
	datums = palloc(sizeof(Datum) * Max(nmerged, 1));
	nulls = palloc(sizeof(bool) * Max(nmerged, 1));
	for (i = 0; i < nmerged; i++)
		first[i] = -1;
	for (i = 0; i < nlive; i++)
	{
		int64		m = group_of[i];

		if (first[m] < 0)
		{
			first[m] = i;
			datums[m] = b.values[i];
			nulls[m] = b.nulls[i];
		}
		else if (!b.nulls[i] &&
				 !datum_image_eq(b.values[first[m]], b.values[i], b.valbyval, b.vallen))
		{
			/* -0 and 0, numeric scales: PostgreSQL shows its first row's */
			*why = "equal GROUP BY values of different bits, which the plan's order picks";
			return false;
		}
		for (f = 0; f < nfilters; f++)
			gbt_agg_combine(&merged[m * nfilters + f],
							&groups->results[live[i] * nfilters + f], cols);
	}
	groups->ngroups = nmerged;
	groups->results = merged;
	groups->datums = datums;
	groups->nulls = nulls;
	groups->values = NULL;
	return true;
}
