/*
 * scan.h
 *	  Bitmap scans answered by the GPU service, and what they did.
 */
#ifndef GPUBTREE_SCAN_H
#define GPUBTREE_SCAN_H

#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "nodes/tidbitmap.h"

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

extern GbtScanStats gbt_scan_stats;

extern int64 gpubtree_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);

#endif							/* GPUBTREE_SCAN_H */
