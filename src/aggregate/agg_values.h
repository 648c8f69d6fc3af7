/*
 * agg_values.h
 *	  GROUP BY an integer column the index holds (an INCLUDE column) with few
 *	  values: one FILTER program per value (agg_values.c).
 */
#ifndef GPUBTREE_AGG_VALUES_H
#define GPUBTREE_AGG_VALUES_H

#include "postgres.h"

#include "utils/relcache.h"
#include "utils/snapshot.h"

#include "exec_request.h"
#include "predicate.h"

/*
 * The most values between the column's smallest and largest in the ranges:
 * a program each, 16 a request.  More leave the query to the plan below.
 */
#define GBT_MAX_VALUE_GROUPS 256

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
 * keeps, grouped by the value of column col, each under preds' FILTER
 * programs (filter 0 none: a group is a group when it has rows); with
 * null_keys, the rows with NULL keys too (through nbtree).  False, with
 * *why, when the service cannot answer or there are too many values.
 */
extern bool gbt_value_groups(Relation heap, Relation index, uint64 *lo, uint64 *hi,
							 int64 nranges, const gbt_pred_set *preds, int col,
							 bool null_keys, Snapshot snapshot, int64 max_unsure,
							 GbtAggAnswer *answer, GbtValueGroups *groups,
							 const char **why);

#endif							/* GPUBTREE_AGG_VALUES_H */
