/*
 * gpuscan.h
 *	  Bitmap scans answered by the GPU service, and what they did.
 */
#ifndef GPUBTREE_GPUSCAN_H
#define GPUBTREE_GPUSCAN_H

#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "nodes/tidbitmap.h"

#include "service.h"

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
extern void gbt_mirror_after_build(Relation index);
extern Oid	gbt_mirror_key_type(Relation index);
extern GbtColType gbt_column_type(Oid typid);
extern void gbt_index_columns(Relation index, GbtColumns *cols);
extern uint8 gbt_entry_values(Relation index, const GbtColumns *cols,
							  const Datum *values, const bool *isnull, int64 *vals);
/* Called every so many entries an export has read. */
typedef void (*GbtExportProgress) (int64 done, void *arg);
extern int64 gbt_export_index(Relation heap, Relation index, Oid keytype,
							  const GbtColumns *cols, GbtEntries *out,
							  GbtExportProgress progress, void *progress_arg);
extern uint64 gbt_encode_key(Datum value, Oid typid);
extern bool gbt_comparable(Oid argtype, Oid keytype);
extern bool gbt_keys_to_ranges(ScanKey keys, int nkeys, Oid keytype, bool aggregate,
							   uint64 **lo_out, uint64 **hi_out, int64 *n_out);
extern void gbt_fill_key(GbtMirrorKey *key, Relation index);
extern bool gbt_build_mirror(Relation index, Oid keytype,
							 GbtExportProgress progress, void *progress_arg,
							 char *why, Size whylen);

typedef void (*GbtDumpFn) (const GbtEntries *e, const GbtColumns *cols, void *arg);
extern bool gbt_dump_mirror(Relation index, GbtDumpFn fn, void *arg,
							uint64 *mirror_id, GbtReplyStatus *status);
extern void gbt_sweep_mirror(Relation index, IndexBulkDeleteCallback callback,
							 void *callback_state);

/* explain.c */
extern void gbt_explain_init(void);

/* gpuplan.c */
struct IndexPath;
extern bool gbt_plan_service_costing;
extern double gbt_service_index_cost(struct IndexPath *ipath);
extern void gbt_plan_init(void);

#endif							/* GPUBTREE_GPUSCAN_H */
