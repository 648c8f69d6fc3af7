/*
 * vagg_kernels.cuh
 *	  What the aggregate kernels (vagg_kernels.cu) and their host side
 *	  (vagg_gpu.cu, predicate_gpu.cu) share: the launch geometry, the
 *	  kernels' arguments and their device-side result, and the calls that
 *	  launch them; and a call's staged inputs, which the grouped aggregate
 *	  (groupby_gpu.cu) takes too.  C++ (nvcc) only.
 *
 * A filtered aggregate (predicate.h) is the same kernel with its programs
 * evaluated per entry, over a grid of nfilters rows: row y aggregates the
 * entries passing WHERE and filter y into result y (each row reads the
 * ranges; row 0 alone lists the unsure entries), so that a thread holds
 * one result's accumulators, as an unfiltered aggregate's do.
 */
#ifndef GBT_VAGG_KERNELS_CUH
#define GBT_VAGG_KERNELS_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "predicate.h"
#include "vagg.h"

#define VBLK 256				/* threads per block */
#define WPB (VBLK / 32)			/* warps per block */
#ifndef VK
#define VK 4					/* entries per lane per chunk */
#endif
#define VCH (32 * VK)			/* entries per warp chunk */

/*
 * device-side result: its first DEVRES_BYTES(rows) bytes are zeroed by a
 * memset before each query and copied back after it
 */
struct DevRes
{
	unsigned long long ucount;	/* unsure entries seen (all of them) */
	int			bad;			/* 1: a bad range, 2: ranges cover > n */
	unsigned int done[GBT_PRED_MAX_FILTERS];	/* blocks finished, per row */
	gbt_agg_result r[GBT_PRED_MAX_FILTERS]; /* the result of each grid row */
};

#define DEVRES_BYTES(rows) (offsetof(DevRes, r) + (size_t) (rows) * sizeof(gbt_agg_result))

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
	void	   *partials;		/* a block's partial each, row by row */
	DevRes	   *res;
	const gbt_pred *progs;		/* filtered: [0] WHERE, [1 + y] row y's filter */
	const gbt_pred_value *list; /* their IN lists */
};

/* What a filtered aggregate adds to a query, in host memory. */
struct VaggFilter
{
	const gbt_pred *progs;		/* [1 + nfilters]: WHERE, then the filters */
	int			nfilters;
	const gbt_pred_value *list;
	int64_t		nlist;
};

/*
 * predicate_gpu.cu: filt for a valid set preds, its programs in progs[1 +
 * nfilters] (WHERE, then each filter; a missing one is the program TRUE).
 */
extern void vagg_filter_make(const gbt_pred_set *preds, gbt_pred *progs, VaggFilter *filt);

/* Blocks of the kernel for ncols columns (filtered or not) that fit on one SM at once. */
extern cudaError_t vagg_occupancy(int ncols, bool filtered, int *blocks);

/* Bytes of one block's partial aggregate: d_parts holds one per block. */
extern size_t vagg_partial_bytes(void);

/*
 * len[r] = end[r] - start[r] for the R ranges (0 for a bad one, flagged in
 * res), and len[R] = 0, so that an exclusive scan of len gives offs.
 */
extern cudaError_t vagg_launch_lengths(const long long *start, const long long *end,
									   int64_t R, int64_t n, long long *len,
									   DevRes *res, cudaStream_t stream);

/*
 * The aggregate over A's ranges, grid blocks of VBLK threads a row, on
 * stream; filtered: rows rows, one per filter (else 1).
 */
extern cudaError_t vagg_launch_aggregate(int ncols, unsigned grid, unsigned rows,
										 bool filtered, cudaStream_t stream, const KArgs &A);

/*
 * One call's inputs on the device (vagg_gpu_begin()): the flattened
 * ranges (offs[R + 1], start[R]; offs[R] = T), the visibility map, a
 * filtered call's programs ([0] WHERE, [1 + f] filter f) and their list,
 * and the zeroed device result (its ucount and bad) with its pinned copy.
 */
struct VaggCall
{
	cudaStream_t stream;		/* the context's */
	int64_t		tbound;			/* T, or a bound on it (prefix on the device) */
	bool		empty;			/* T == 0 known on the host: nothing staged */
	const long long *offs,
			   *start;
	int64_t		R;
	const uint8_t *vis;
	int64_t		nvis;
	const gbt_pred *progs;
	const gbt_pred_value *list;
	DevRes	   *d_res,
			   *h_res;
	/* for vagg_gpu_end() and the timing */
	int			cur,
				switched;
	double		t0;
};

/*
 * vagg_gpu.cu.  vagg_gpu_begin(): a call's arguments checked as
 * gbt_vagg_gpu() checks them (out, unsure and unsure_cap too), the context
 * made ready on its device, made current, and the call's inputs staged:
 * 0, or nonzero with a message (the device as it was).  Unless it returns
 * nonzero, vagg_gpu_end() must follow, which makes the device that was
 * current before current again.  vagg_gpu_scratch(): slot k (<
 * VAGG_SCRATCH_SLOTS) of the context's spare buffers, device or pinned
 * host memory, grown to at least bytes (contents dropped when it grows),
 * kept until the context is freed.
 */
#define VAGG_SCRATCH_SLOTS 16

extern int	vagg_gpu_begin(gbt_vagg_gpu_ctx *x, const gbt_agg_input *in,
						   const int64_t *start, const int64_t *end, int64_t nranges,
						   const uint8_t *visible, int64_t nvisible,
						   const VaggFilter *filt, gbt_agg_result *out,
						   int64_t *unsure, int64_t unsure_cap, VaggCall *call,
						   char *err, size_t errlen);
extern void vagg_gpu_end(gbt_vagg_gpu_ctx *x, VaggCall *call);
/*
 * vagg_gpu.cu: x made ready (its first use makes it the current device's,
 * which must be its device), its stream, and a wave of the unfiltered
 * kernel's blocks for ncols columns; 0, or nonzero with a message.
 */
extern int	vagg_gpu_ready(gbt_vagg_gpu_ctx *x, int ncols, cudaStream_t *stream,
						   int *wave, char *err, size_t errlen);
extern cudaError_t vagg_gpu_scratch(gbt_vagg_gpu_ctx *x, int k, size_t bytes, bool host,
									void **p);

/*
 * vagg_gpu.cu: gbt_vagg_gpu(), or with filt (programs valid, none NULL) the
 * filtered aggregate (predicate.h) into out[0..filt->nfilters).
 */
extern int	vagg_gpu_query(gbt_vagg_gpu_ctx *x, const gbt_agg_input *in,
						   const int64_t *start, const int64_t *end, int64_t nranges,
						   const uint8_t *visible, int64_t nvisible, const VaggFilter *filt,
						   gbt_agg_result *out, int64_t *unsure, int64_t unsure_cap,
						   char *err, size_t errlen);

#endif							/* GBT_VAGG_KERNELS_CUH */
