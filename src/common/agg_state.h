/*
 * agg_state.h
 *	  Exact partial aggregates (GbtAggResult, protocol.h): start, add one
 *	  entry, combine two.  Used by the service (tree and delta) and by the
 *	  backend (entries it checked against the heap).
 */
#ifndef GPUBTREE_AGGSTATE_H
#define GPUBTREE_AGGSTATE_H

#include "postgres.h"

#include "entries.h"
#include "protocol.h"

extern void gbt_agg_init(GbtAggResult *r);
extern void gbt_agg_add_entry(GbtAggResult *r, const GbtColumns *cols,
							  const int64 *vals, uint8 nulls);
/* Take an added entry back out, exactly, keeping min and max right, or false. */
extern bool gbt_agg_remove_entry(GbtAggResult *r, const GbtColumns *cols,
								 const int64 *vals, uint8 nulls);
/* The same for the counts and sums alone: min and max no longer meaningful. */
extern bool gbt_agg_remove_sums(GbtAggResult *r, const GbtColumns *cols,
								const int64 *vals, uint8 nulls);
extern void gbt_agg_combine(GbtAggResult *into, const GbtAggResult *part,
							const GbtColumns *cols);

#endif							/* GPUBTREE_AGGSTATE_H */
