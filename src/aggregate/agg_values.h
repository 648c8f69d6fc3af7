/*
 * agg_values.h
 *	  GROUP BY an integer column the index holds: one grouped request
 *	  (agg_values.c).
 */
#ifndef GPUBTREE_AGG_VALUES_H
#define GPUBTREE_AGG_VALUES_H

#include "postgres.h"

#include "utils/relcache.h"
#include "utils/snapshot.h"

#include "exec_request.h"
#include "predicate.h"

/* The groups: value (held as int64) or NULL, and nfilters results each. */
typedef struct GbtValueGroups
{
	int64		ngroups;
	int64	   *values;
	bool	   *nulls;
	GbtAggResult *results;		/* [g * nfilters + f] */
} GbtValueGroups;

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

#endif							/* GPUBTREE_AGG_VALUES_H */
