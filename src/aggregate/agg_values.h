/*
 * agg_values.h
 *	  GROUP BY an integer column the index holds, or an immutable expression
 *	  of one: one grouped request (agg_values.c).
 */
#ifndef GPUBTREE_AGG_VALUES_H
#define GPUBTREE_AGG_VALUES_H

#include "postgres.h"

#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

#include "exec_request.h"
#include "predicate.h"

/*
 * The groups: value (held as int64) or NULL, and nfilters results each;
 * after gbt_value_groups_merge(), the expression's results in datums.
 */
typedef struct GbtValueGroups
{
	int64		ngroups;
	int64	   *values;
	bool	   *nulls;
	GbtAggResult *results;		/* [g * nfilters + f] */
	Datum	   *datums;			/* NULL: grouped by the column itself */
} GbtValueGroups;

/*
 * The index column, from column first on, whose values GROUP BY expr
 * (of rel, expr_groups the planner's estimate of its groups) groups by:
 * an integer or date column itself (*plain), or an immutable expression
 * of that one column and of constants and parameters; *value_groups the
 * estimate of the column's values.  -1 if neither, with *why where the
 * expression is what keeps it (NULL where its column is not one the
 * index holds).
 */
extern int	gbt_value_column(PlannerInfo *root, RelOptInfo *rel, IndexOptInfo *index,
							 Node *expr, int first, double expr_groups,
							 double *value_groups, bool *plain, const char **why);

/* The column's Var of a GROUP BY expression gbt_value_column() took. */
extern Var *gbt_value_expr_column(Node *expr);

/*
 * The aggregates of the entries of the sorted ranges that preds' WHERE
 * keeps, grouped by the value of column col (in order, NULL last), each
 * under preds' FILTER programs (filter 0 none: a group is a group when it
 * has rows); with null_keys, the rows with NULL keys too (through nbtree).
 * expected: the groups the planner expects.  False, with *why, when the
 * service cannot answer or the groups are more than GBT_MAX_COLUMN_GROUPS.
 */
extern bool gbt_value_groups(Relation heap, Relation index, uint64 *lo, uint64 *hi,
							 int64 nranges, const gbt_pred_set *preds, int col,
							 int64 expected, bool null_keys, Snapshot snapshot,
							 int64 max_unsure, GbtAggAnswer *answer,
							 GbtValueGroups *groups, const char **why);

/*
 * GROUP BY expr of the column: the expression evaluated once per group
 * with rows, the groups whose results are equal under eqop merged (a NULL
 * result is one group).  An error of the expression, or equal results of
 * different bits (which the plan's row order picks), leave the query to
 * the plan below: false, with *why.
 */
extern bool gbt_value_groups_merge(GbtValueGroups *groups, int nfilters, Expr *expr,
								   Oid eqop, const GbtColumns *cols, EState *estate,
								   const char **why);

#endif							/* GPUBTREE_AGG_VALUES_H */
