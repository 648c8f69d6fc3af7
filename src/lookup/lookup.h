/*
 * lookup.h
 *	  The GpubtreeLookup and GpubtreeJoin custom scans: what their plans
 *	  carry (lookup_plan.c plans them), and their execution (lookup_node.c,
 *	  join_node.c).
 */
#ifndef GPUBTREE_LOOKUP_H
#define GPUBTREE_LOOKUP_H

#include "postgres.h"

#include "nodes/extensible.h"

/* custom_private of the plan, in this order. */
enum
{
	LOOKUP_PRIV_INDEX,			/* index OID */
	LOOKUP_PRIV_STRATEGIES,		/* per condition on the key: btree strategy */
	LOOKUP_PRIV_SUBTYPES,		/* its bound's type, the operator's right input */
	LOOKUP_PRIV_OPERATORS,		/* its operator (index column op bound) */
	LOOKUP_PRIV_ARRAY,			/* which one is = ANY(array), or -1: a range */
	LOOKUP_PRIV_COVERED,		/* 1: rows from the mirror's values */
	LOOKUP_PRIV_ATTMAP,			/* per mirror column: the table column, or 0 */
	LOOKUP_PRIV_NATTS,			/* the last table column needed */
	LOOKUP_PRIV_DIRECTION,		/* rows in key order: 1, descending: -1, any: 0 */
	LOOKUP_PRIV_N
};

/* custom_private of the GpubtreeJoin plan, in this order. */
enum
{
	JOIN_PRIV_INDEX,			/* the inner table's index OID */
	JOIN_PRIV_SUBTYPE,			/* the join key's type, the operator's right input */
	JOIN_PRIV_OPERATOR,			/* index column = join key */
	JOIN_PRIV_NOUTER,			/* outer columns first in the scan tuple */
	JOIN_PRIV_INNER_COLS,		/* then per inner column: its mirror column */
	JOIN_PRIV_N
};

extern CustomScanMethods gbt_lookup_scan_methods;
extern CustomScanMethods gbt_join_scan_methods;
extern void gbt_join_node_init(void);
extern void gbt_lookup_node_init(void);
extern void gbt_lookup_plan_init(void);

#endif							/* GPUBTREE_LOOKUP_H */
