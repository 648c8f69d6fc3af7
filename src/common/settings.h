/*
 * settings.h
 *	  gpubtree's configuration parameters, shared by backends, the service
 *	  and the build workers.
 *
 * gpubtree.device is a session's choice: whether its queries use the
 * service at all.  gpubtree.engine is the service's: where it keeps its
 * mirrors, read once when it starts.
 */
#ifndef GPUBTREE_SETTINGS_H
#define GPUBTREE_SETTINGS_H

/* Most devices the service places mirrors on (gpubtree.devices). */
#define GBT_MAX_DEVICES 16

/* Values of gpubtree.device */
typedef enum GpubtreeDeviceMode
{
	GPUBTREE_DEVICE_AUTO,		/* the service, where it pays */
	GPUBTREE_DEVICE_OFF			/* no mirror: plain nbtree paths only */
} GpubtreeDeviceMode;

/* Values of gpubtree.engine */
typedef enum GpubtreeEngine
{
	GPUBTREE_ENGINE_AUTO,		/* a usable GPU, else the CPU twin */
	GPUBTREE_ENGINE_GPU,		/* a usable GPU, else no mirrors at all */
	GPUBTREE_ENGINE_CPU			/* the CPU twin, even with a GPU */
} GpubtreeEngine;

/* Values of gpubtree.build_after_create */
typedef enum GpubtreeBuildAfterCreate
{
	GPUBTREE_BUILD_AFTER_CREATE_OFF,	/* the first query asks for the mirror */
	GPUBTREE_BUILD_AFTER_CREATE_BACKGROUND, /* a build job at commit, not waited for */
	GPUBTREE_BUILD_AFTER_CREATE_WAIT	/* built inside CREATE INDEX */
} GpubtreeBuildAfterCreate;

extern int	gpubtree_device_mode;
extern int	gpubtree_engine;
extern int	gpubtree_mirror_memory_limit;	/* MB, -1: auto */
extern int	gpubtree_batch_window;	/* microseconds */
extern int	gpubtree_service_timeout;	/* milliseconds */
extern int	gpubtree_min_gpu_batch;

/*
 * An aggregate over = ANY goes to the service from this share of
 * gpubtree.min_gpu_batch distinct keys: its answer brings no rows back, and
 * one round trip costs about what a few dozen nbtree descents do (CPU
 * engine, 2026-11-27: 64 keys break even, 1000 keys 2.7x nbtree's speed).
 */
#define GBT_AGG_KEYS_SHARE 16
#define GBT_AGG_MIN_KEYS Max(1, gpubtree_min_gpu_batch / GBT_AGG_KEYS_SHARE)
extern bool gpubtree_build_on_scan;
extern int	gpubtree_build_after_create;
extern int	gpubtree_build_wait;	/* milliseconds */
extern int	gpubtree_debug_build_delay;	/* milliseconds */
extern int	gpubtree_debug_service_publish_delay;	/* milliseconds */
extern int	gpubtree_debug_service_check_delay;	/* milliseconds */
extern int	gpubtree_debug_export_delay;	/* milliseconds */
extern int	gpubtree_debug_build_ask_delay;	/* milliseconds */
extern bool gpubtree_debug_export_prefault;
extern bool gpubtree_debug_tidy_pause;
extern int	gpubtree_debug_rebuild_delay;	/* milliseconds */
extern int	gpubtree_debug_engine_build_delay;	/* milliseconds */
extern bool gpubtree_enable_aggregate;
extern bool gpubtree_enable_lookup;
extern int	gpubtree_change_log_size;	/* entries */
extern int	gpubtree_simulated_devices; /* test aid: devices on the CPU engine */
extern char *gpubtree_devices;	/* the devices mirrors may go to; "": all */

extern void gbt_settings_init(void);
extern void gbt_debug_wait(const int *delay_ms);
extern const char *gpubtree_device_mode_name(int mode);
extern const char *gpubtree_engine_name(int engine);
extern const char *gbt_service_engine(void);

#endif							/* GPUBTREE_SETTINGS_H */
