/*
 * agg_node.h
 *	  The GpubtreeAggregate custom scan: what its plan carries, and its
 *	  execution (agg_node.c).  agg_plan.c plans it.
 */
#ifndef GPUBTREE_AGG_NODE_H
#define GPUBTREE_AGG_NODE_H

#include "postgres.h"

#include "nodes/extensible.h"

/* custom_private of the path and the plan, in this order. */
enum
{
	PRIV_INDEX,					/* index OID */
	PRIV_STRATEGIES,			/* per condition: btree strategy */
	PRIV_SUBTYPES,				/* per condition: the bound's type */
	PRIV_OPERATORS,				/* per condition: the operator */
	PRIV_ARRAYS,				/* per condition: GbtArrayKind */
	PRIV_KINDS,					/* per aggregate: GbtAggKind */
	PRIV_COLUMNS,				/* per aggregate: index column */
	PRIV_ARGTYPES,				/* per aggregate: argument type */
	PRIV_NULL_KEYS,				/* 1: add the rows with NULL keys */
	PRIV_GROUP,					/* the GROUP BY bucket of the key, or NULL */
	PRIV_GROUP_EQOP,			/* its equality operator */
	PRIV_GROUP_LABEL,			/* it, as EXPLAIN shows it */
	PRIV_GROUP_COLUMN,			/* -1: a bucket of the key; else the index
								 * column grouped by its values (agg_values.h) */
	PRIV_GROUP_BY_EXPR,			/* 1: by the values of an expression of that
								 * column, merged (agg_values.c) */
	PRIV_WHERE,					/* conditions past the key's ranges: a
								 * planned program (agg_filter.h), or NIL */
	PRIV_WHERE_LABEL,			/* them, as EXPLAIN shows them */
	PRIV_FILTERS,				/* planned FILTER programs (NIL: none), the
								 * first NIL; none at all without programs */
	PRIV_FILTER_OF,				/* per aggregate: its FILTER program */
	PRIV_AGGREFS,				/* the aggregates (the scan tuple's columns,
								 * after the bucket) */
	PRIV_BOUNDS					/* per condition: the bound (path only) */
};

/* A condition's array, in PRIV_ARRAYS. */
typedef enum GbtArrayKind
{
	GBT_ARRAY_NONE,				/* not = ANY */
	GBT_ARRAY_CONST,			/* = ANY of a constant array */
	GBT_ARRAY_RUNTIME			/* = ANY of an array known when the plan runs */
} GbtArrayKind;

extern CustomScanMethods gbt_agg_scan_methods;

extern void gbt_agg_node_init(void);

/* agg_plan.c: the planner's hook, and the node's registration. */
extern void gbt_aggplan_init(void);

#endif							/* GPUBTREE_AGG_NODE_H */
