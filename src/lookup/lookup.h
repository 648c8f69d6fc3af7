/*
 * lookup.h
 *	  The GpubtreeLookup custom scan: what its plan carries (lookup_plan.c
 *	  plans it), and its execution (lookup_node.c).
 */
#ifndef GPUBTREE_LOOKUP_H
#define GPUBTREE_LOOKUP_H

#include "postgres.h"

#include "nodes/extensible.h"

/* custom_private of the plan, in this order. */
enum
{
	LOOKUP_PRIV_INDEX,			/* index OID */
	LOOKUP_PRIV_SUBTYPE,		/* the keys' type, the operator's right input */
	LOOKUP_PRIV_OPERATOR,		/* index column = key */
	LOOKUP_PRIV_JOIN,			/* 1: keys from the plan below; 0: an array */
	LOOKUP_PRIV_COVERED,		/* 1: rows from the mirror's values */
	LOOKUP_PRIV_ATTMAP,			/* per mirror column: the table column, or 0 */
	LOOKUP_PRIV_NATTS,			/* the last table column needed */
	LOOKUP_PRIV_N
};

extern CustomScanMethods gbt_lookup_scan_methods;
extern void gbt_lookup_node_init(void);
extern void gbt_lookup_plan_init(void);

#endif							/* GPUBTREE_LOOKUP_H */
