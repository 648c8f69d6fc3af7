/*
 * agg_final.h
 *	  From exact partial aggregates (GbtAggResult) to the values PostgreSQL's
 *	  own aggregates would return (agg_final.c).
 */
#ifndef GPUBTREE_AGGFINAL_H
#define GPUBTREE_AGGFINAL_H

#include "postgres.h"

#include "protocol.h"

typedef enum GbtAggKind
{
	GBT_AGG_COUNT_STAR,
	GBT_AGG_COUNT,
	GBT_AGG_SUM,
	GBT_AGG_AVG,
	GBT_AGG_MIN,
	GBT_AGG_MAX
} GbtAggKind;

/*
 * Can kind(argtype) be answered from a mirror column exactly as PostgreSQL
 * computes it?  argtype is a base type, not a domain.  (sum(float4) cannot:
 * PostgreSQL sums in float4, in an order we do not know.)
 */
extern bool gbt_agg_supported(GbtAggKind kind, Oid argtype);

/*
 * The value of kind(argtype) over column col of r, of PostgreSQL's result
 * type.  Returns false, with the reason in *why, where PostgreSQL's answer
 * could differ (an int8 sum of int4 beyond int8, float sums large enough
 * to overflow on the way, a float min or max among equal values of other
 * bits, which its plan's order picks): then the caller lets PostgreSQL
 * compute it.
 */
extern bool gbt_agg_final(GbtAggKind kind, Oid argtype, const GbtAggResult *r,
						  int col, Datum *value, bool *isnull, const char **why);

/* The exact sum of column col as numeric (int64 or float8 columns). */
extern Datum gbt_agg_sum_numeric(const GbtAggResult *r, int col, GbtColType type);

#endif							/* GPUBTREE_AGGFINAL_H */
