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
 * decides only its other entries one by one.  Made by the settling pass;
 * a stamped entry leaves its block's sum, and a run's sums go when its
 * arrays change.
 */
#ifndef GBT_SUM_BLOCK
#define GBT_SUM_BLOCK 1024
#endif

extern void gbt_run_sums_free(GbtRun *run);
extern void gbt_run_sums_drop(const GbtMirror *m, GbtRun *run, int64 i);
extern int64 gbt_run_sums_make(const GbtMirror *m, GbtRun *run, int64 block,
							   int64 nplain);
extern const gbt_agg_result *gbt_run_sum(const GbtRun *run, int64 block,
										 uint64 log_bound, const uint64 **walk);

#endif							/* GPUBTREE_RUNSUMS_H */
