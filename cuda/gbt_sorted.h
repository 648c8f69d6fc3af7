/*
 * gbt_sorted.h
 *	  A sorted array of 64-bit keys on the GPU, searched in batches with
 *	  Thrust's vectorised binary search: the service's baseline GPU engine
 *	  and the "sorted array" baseline of the Harmonia benchmark.  Plain C
 *	  interface, no PostgreSQL headers; linked only in CUDA builds.
 */
#ifndef GBT_SORTED_H
#define GBT_SORTED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

typedef struct gbt_sorted gbt_sorted;

/*
 * Copy n ascending keys to the device.  Returns 0, or a nonzero CUDA error
 * with a message in err (out of device memory, no device, ...).
 */
extern int	gbt_sorted_build(const uint64_t *keys, int64_t n, gbt_sorted **out,
							 char *err, size_t errlen);

/*
 * For each inclusive range [lo[i], hi[i]], the positions [start[i], end[i])
 * of the keys in it (start = lower bound of lo, end = upper bound of hi;
 * end = start when lo > hi).  Host arrays in and out.
 */
extern int	gbt_sorted_ranges(gbt_sorted *s, const uint64_t *lo, const uint64_t *hi,
							  int64_t nranges, int64_t *start, int64_t *end,
							  char *err, size_t errlen);

extern size_t gbt_sorted_bytes(const gbt_sorted *s);
extern void gbt_sorted_free(gbt_sorted *s);

#ifdef __cplusplus
}
#endif

#endif							/* GBT_SORTED_H */
