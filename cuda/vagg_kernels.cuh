/*
 * vagg_kernels.cuh
 *	  What the aggregate kernels (vagg_kernels.cu) and their host side
 *	  (vagg_gpu.cu) share: the launch geometry, the kernels' arguments and
 *	  their device-side result, and the calls that launch them.  C++ (nvcc)
 *	  only.
 */
#ifndef GBT_VAGG_KERNELS_CUH
#define GBT_VAGG_KERNELS_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "vagg.h"

#define VBLK 256				/* threads per block */
#define WPB (VBLK / 32)			/* warps per block */
#ifndef VK
#define VK 4					/* entries per lane per chunk */
#endif
#define VCH (32 * VK)			/* entries per warp chunk */

/* device-side result: zeroed by a memset before each query */
struct DevRes
{
	unsigned long long ucount;	/* unsure entries seen (all of them) */
	unsigned int done;			/* blocks finished */
	int			bad;			/* 1: a bad range, 2: ranges cover > n */
	gbt_agg_result r;
};

struct KArgs
{
	const uint32_t *blocks;
	const uint8_t *removed;
	const unsigned long long *cols[GBT_MAX_COLS];
	const uint8_t *nulls[GBT_MAX_COLS];
	unsigned	fmask;			/* bit c: column c is FLOAT8 */
	unsigned long long decode[GBT_MAX_COLS];	/* XORed into a value as read */
	unsigned	nmask;			/* bit c: 4 bytes a value (vagg.h: narrow) */
	unsigned long long base[GBT_MAX_COLS];
	int64_t		n;
	const long long *start;		/* [R] */
	const long long *offs;		/* [R + 1], offs[R] = T */
	int64_t		R;
	const uint8_t *vis;
	int64_t		nvis;
	long long  *unsure;
	int64_t		cap;
	void	   *partials;
	DevRes	   *res;
};

/* Blocks of the kernel for ncols columns that fit on one SM at once. */
extern cudaError_t vagg_occupancy(int ncols, int *blocks);

/* Bytes of one block's partial aggregate: d_parts holds one per block. */
extern size_t vagg_partial_bytes(void);

/*
 * len[r] = end[r] - start[r] for the R ranges (0 for a bad one, flagged in
 * res), and len[R] = 0, so that an exclusive scan of len gives offs.
 */
extern cudaError_t vagg_launch_lengths(const long long *start, const long long *end,
									   int64_t R, int64_t n, long long *len,
									   DevRes *res, cudaStream_t stream);

/* The aggregate over A's ranges, grid blocks of VBLK threads, on stream. */
extern cudaError_t vagg_launch_aggregate(int ncols, unsigned grid, cudaStream_t stream,
										 const KArgs &A);

#endif							/* GBT_VAGG_KERNELS_CUH */
