/*
 * runsums.h
 *	  Sums of blocks of plain delta entries (runsums.c).
 */
#ifndef GPUBTREE_RUNSUMS_H
#define GPUBTREE_RUNSUMS_H

#include "mirror_int.h"

/*
 * Aggregates of the entries of blocks of GBT_SUM_BLOCK delta
 * entries that every snapshot sees (plain: inserted before every snapshot,
 * not deleted), so that a range aggregate adds a block at a time and
 * decides only its other entries one by one.  Made by the merge that
 * writes a run and again by the settling pass; a stamped entry leaves its
 * block's sum, and a run's sums go when VACUUM's sweep rebuilds it.
 */
#ifndef GBT_SUM_BLOCK
/*
 * A range's two partial blocks of each run are decided entry by entry:
 * 1024 made that ~2,000 entries an aggregate beside writers (half the
 * service's time); a block's sum costs its run's columns, a byte or two a
 * delta entry at 128.
 */
#define GBT_SUM_BLOCK 128
#endif

/* A block's mask: a bit for each of its entries left out of its sum. */
#define GBT_MASK_WORDS ((GBT_SUM_BLOCK + 63) / 64)

static inline bool
gbt_mask_has(const uint64 *mask, int64 j)
{
	return (mask[j / 64] & (UINT64CONST(1) << (j % 64))) != 0;
}

static inline void
gbt_mask_set(uint64 *mask, int64 j)
{
	mask[j / 64] |= UINT64CONST(1) << (j % 64);
}

extern void gbt_run_sums_free(GbtRun *run);
extern void gbt_run_sums_drop(const GbtMirror *m, GbtRun *run, int64 i);
extern int64 gbt_run_sums_make(const GbtMirror *m, GbtRun *run, int64 block,
							   int64 nplain);
extern void gbt_run_sums_fill(const GbtMirror *m, GbtRun *run, int64 final);
extern bool gbt_run_sum(const GbtRun *run, int64 block, uint64 log_bound,
						const uint64 **walk, gbt_agg_result *sum);
extern bool gbt_run_sum_less(const GbtMirror *m, const GbtRun *run, int64 block,
							 int64 from, int64 to, uint64 log_bound,
							 const uint64 **walk, gbt_agg_result *sum);
extern Size gbt_run_sums_bytes(const GbtRun *run);

/* make GBT_SMALL_LAYOUT=1 checks the sums after each change (runsums.c) */
#ifdef GBT_CHECK_RUN_SUMS
extern void gbt_run_sums_check(const GbtMirror *m);
#else
#define gbt_run_sums_check(m) ((void) 0)
#endif

#endif							/* GPUBTREE_RUNSUMS_H */
