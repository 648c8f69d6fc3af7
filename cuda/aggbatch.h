/*
 * aggbatch.h
 *	  The engines' aggregate_batch (engine.h) in one driver for both
 *	  (aggbatch.c): each item's chunk sums made ready in the calling thread
 *	  (they are the engine's state), their parts taken and what is left to
 *	  scan read on the host in pieces run at once, or, past the engine's bound, handed to the
 *	  engine's device a launch per engine; then the chunk sums' parts
 *	  combined in.  Plain C, no PostgreSQL headers.
 */
#ifndef GBT_AGGBATCH_H
#define GBT_AGGBATCH_H

#include "chunksums.h"
#include "engine.h"

#ifdef __cplusplus
extern "C"
{
#endif

/* One item's scan: what the chunk sums left of its ranges. */
typedef struct gbt_batch_scan
{
	gbt_agg_item *item;
	gbt_agg_input in;			/* the engine's host arrays, the item's
								 * removed bitmap, its columns only */
	const int64_t *start;		/* the ranges left to scan */
	const int64_t *end;
	int64_t		nranges;
	int64_t		entries;		/* their positions */
	gbt_chunk_sums *sums;		/* the item's engine's */
	int			sums_ready;		/* gbt_chunk_sums_ready() said yes */
	gbt_chunk_split split;
	int			split_used;		/* split.part to combine in */
	int			on_device;
	int			scanned;		/* by its split's piece (short) */
} gbt_batch_scan;

/* What an engine lends the driver. */
typedef struct gbt_batch_hooks
{
	/* the engine's borrowed host arrays (removed unset) and chunk sums */
	void		(*host_input) (struct gbt_engine *e, gbt_agg_input *in);
	gbt_chunk_sums *(*sums) (struct gbt_engine *e);

	/*
	 * Scans of more than device_min entries go to device(e, scans, n): the
	 * n scans of engine e, each into its item's out, unsure and rc (out
	 * zeroed before); NULL: every scan on the host.
	 */
	int64_t		device_min;
	void		(*device) (struct gbt_engine *e, gbt_batch_scan **scans, int64_t n);
} gbt_batch_hooks;

/* engine.h's aggregate_batch over hooks: the items that failed. */
extern int	gbt_agg_batch_run(gbt_agg_item *items, int64_t nitems,
							  const gbt_batch_hooks *hooks, gbt_engine_par par, int npar);

/* An item's failure: rc 1 and "what: why" in its err; returns 1. */
extern int	gbt_agg_item_fail(gbt_agg_item *item, const char *what, const char *why);

#ifdef __cplusplus
}
#endif

#endif							/* GBT_AGGBATCH_H */
