/*
 * gpubtree.h
 *	  Declarations shared by the backend modules of gpubtree.
 *
 * The index's durable storage is PostgreSQL's own nbtree: gpubtree_handler
 * hands out nbtree's routines, wrapping the callbacks where the GPU mirror
 * will hook in (build, insert, bulk delete, vacuum cleanup, bitmap scan,
 * cost estimate).
 */
#ifndef GPUBTREE_H
#define GPUBTREE_H

#include "postgres.h"

/* Values of gpubtree.device */
typedef enum GpubtreeDeviceMode
{
	GPUBTREE_DEVICE_AUTO,		/* GPU when one is usable, else CPU engine */
	GPUBTREE_DEVICE_GPU,		/* prefer the GPU; still falls back, counted */
	GPUBTREE_DEVICE_CPU,		/* the CPU engine (Harmonia's CPU twin) */
	GPUBTREE_DEVICE_OFF			/* no mirror: plain nbtree paths only */
} GpubtreeDeviceMode;

extern int	gpubtree_device_mode;
extern int	gpubtree_mirror_memory_limit;	/* MB, -1: auto */
extern int	gpubtree_batch_window;	/* microseconds */
extern int	gpubtree_service_timeout;	/* milliseconds */
extern int	gpubtree_min_gpu_batch;
extern bool gpubtree_build_on_scan;
extern bool gpubtree_build_after_create;
extern int	gpubtree_build_wait;	/* milliseconds */
extern int	gpubtree_debug_build_delay;	/* milliseconds */
extern bool gpubtree_enable_aggregate;
extern int	gpubtree_change_log_size;	/* entries */

/* handler.c */
struct RelationData;
struct IndexOptInfo;
extern bool gpubtree_is_gpubtree_index(struct RelationData *index);
extern bool gpubtree_is_gpubtree_indexinfo(struct IndexOptInfo *index);
extern bool gpubtree_is_gpubtree_am(Oid amoid);

/* aggplan.c */
extern void gbt_aggplan_init(void);

/* btree_label.c */
extern void gpubtree_btree_label_init(void);
extern void gpubtree_label_as_btree(struct RelationData *index, const void *owner);
extern void gpubtree_unlabel(const void *owner);

/* explain.c */
extern void gbt_explain_init(void);

/* costing.c */
struct IndexPath;
extern bool gbt_plan_service_costing;
extern double gbt_service_index_cost(struct IndexPath *ipath);
extern void gbt_plan_init(void);

/* device.c */
extern const char *gpubtree_device_mode_name(int mode);

#endif							/* GPUBTREE_H */
