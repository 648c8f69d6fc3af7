/*
 * scanstats.h
 *	  What this backend's GPU bitmap scans and mirror builds did, counted for
 *	  EXPLAIN ANALYZE.
 */
#ifndef GPUBTREE_SCANSTATS_H
#define GPUBTREE_SCANSTATS_H

#include "postgres.h"

#include "protocol.h"

/* This backend's GPU-scan activity, accumulated; EXPLAIN shows deltas. */
typedef struct GbtScanStats
{
	int64		gpu_scans;		/* bitmap scans the service answered */
	int64		fallbacks;		/* scans that tried the service, got nbtree */
	int64		keys;			/* ranges / keys probed */
	int64		entries;		/* TIDs returned */
	double		device_ms;		/* engine time, as the service measured it */
	double		build_ms;		/* mirror builds this backend asked for */
	double		prep_ms;		/* turning scan keys into key ranges */
	double		wait_ms;		/* request round trips, device time included */
	bool		on_gpu;			/* some answer came from the GPU */
	char		mirror_note[GBT_ERRMSG_LEN];	/* why the last scan found no mirror */
} GbtScanStats;

/* Counting, by the scans and builds. */
extern void gbt_scan_stats_answered(int64 keys, int64 entries, double device_ms,
									bool on_gpu);
extern void gbt_scan_stats_fell_back(void);
extern void gbt_scan_stats_add_prep(double ms);
extern void gbt_scan_stats_add_wait(double ms);
extern void gbt_scan_stats_add_build(double ms);
extern void gbt_scan_stats_set_note(const char *note);

/* Reading, by EXPLAIN. */
extern void gbt_scan_stats_get(GbtScanStats *now);
extern void gbt_scan_stats_since(const GbtScanStats *before, GbtScanStats *delta);

#endif							/* GPUBTREE_SCANSTATS_H */
