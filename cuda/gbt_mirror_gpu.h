/*
 * gbt_mirror_gpu.h
 *	  The GPU service's device side of a mirror: a Harmonia tree on the GPU
 *	  searched with host arrays in and out.  Plain C interface, no
 *	  PostgreSQL headers; linked only in CUDA builds.
 */
#ifndef GBT_MIRROR_GPU_H
#define GBT_MIRROR_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

typedef struct gbt_mirror_gpu gbt_mirror_gpu;

/* Build from n ascending keys (host).  0, or nonzero with a message. */
extern int	gbt_mirror_gpu_build(const uint64_t *keys, int64_t n, int fanout,
								 gbt_mirror_gpu **out, char *err, size_t errlen);

/*
 * Positions [start[i], end[i]) of the keys in each inclusive range
 * [lo[i], hi[i]] (host arrays), with Harmonia's batched range search (PSA,
 * NTG, combining at their defaults).
 */
extern int	gbt_mirror_gpu_ranges(gbt_mirror_gpu *g, const uint64_t *lo,
								  const uint64_t *hi, int64_t n, int64_t *start,
								  int64_t *end, char *err, size_t errlen);

/*
 * Visibility-filtered aggregate over position ranges (cuda/vagg.h's
 * contract), on the device.  The mirror's aggregate arrays (host: blocks,
 * column values and NULL bits, n entries) are copied to the device at the
 * first call; the removed bits again whenever removed_version changes.
 * start/end/visible/out/unsure are host memory.
 */
struct gbt_vagg_result;
extern int	gbt_mirror_gpu_vagg(gbt_mirror_gpu *g, int64_t n, const uint32_t *blocks,
								const uint8_t *removed, uint64_t removed_version,
								int ncols, const int *float_cols,
								const int64_t *const *cols, const uint8_t *const *colnulls,
								const int64_t *start, const int64_t *end, int64_t nranges,
								const uint8_t *visible, int64_t nvisible,
								struct gbt_vagg_result *out, int64_t *unsure,
								int64_t unsure_cap, char *err, size_t errlen);

extern size_t gbt_mirror_gpu_bytes(const gbt_mirror_gpu *g);
extern void gbt_mirror_gpu_free(gbt_mirror_gpu *g);

#ifdef __cplusplus
}
#endif

#endif							/* GBT_MIRROR_GPU_H */
