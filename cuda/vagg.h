/*
 * vagg.h
 *	  Visibility-filtered aggregates over position ranges of a sorted index
 *	  mirror (range aggregates on the GPU from plain SQL,
 *	  exact under MVCC).  Two implementations with one contract: the GPU
 *	  one (vagg_gpu.cu) and its CPU reference (vagg_cpu.c), which is the
 *	  test oracle and the fallback without a GPU.  Plain C, no PostgreSQL
 *	  headers; errors are returned with a message, nothing is printed, and
 *	  there is no global mutable state.
 *
 * The mirror holds n entries in key order; entry i lives on heap block
 * blocks[i], may be marked removed (a bitmap), and carries up to
 * GBT_VAGG_MAX_COLS payload columns (int64 or float8, each with an optional
 * NULL bitmap).  A query is a set of disjoint position ranges plus the
 * caller's visibility-map snapshot: a bitmap over heap blocks saying "every
 * tuple on this block is visible to my snapshot".  Entries on such blocks
 * are aggregated on the spot; the others are "unsure" and their positions
 * are handed back so that the caller can check them against the heap and
 * fold them in itself (exact under MVCC).
 *
 * Contract
 *	  Over the union of nranges disjoint position ranges [start[r], end[r])
 *	  (0 <= start <= end <= n; ranges may be empty and come in any order; up
 *	  to 10^7 ranges, total positions up to n), each entry i:
 *	  - is skipped if removed (bit i of removed: byte i>>3, bit i&7);
 *	  - else, if its block b < nvisible has bit b set in visible[] (byte b>>3,
 *		bit b&7), is aggregated into *out: count, and per column c < ncols
 *		unless bit i of nulls[c] is set (NULL value): nonnull, the sum, min,
 *		max and, for FLOAT8, the NaN/+Inf/-Inf counts;
 *	  - otherwise its position is appended to unsure[] while fewer than
 *		unsure_cap are there (order unspecified; each unsure position is
 *		written at most once) and it is counted in out->nunsure, which is the
 *		total even when it exceeds unsure_cap.
 *	  Blocks at or beyond nvisible count as not visible.
 *
 *	  Result fields.  Every field that does not apply is zero: fields of
 *	  columns >= ncols, the FLOAT8 fields of an INT64 column and vice versa,
 *	  and min/max of a column with nonnull == 0.
 *	  - INT64 sums are exact: sum = sum_hi * 2^64 + sum_lo, 128-bit two's
 *		complement (2^63 values of any size cannot overflow it).
 *	  - FLOAT8 sums cover the finite values only, as a normalized
 *		double-double (fsum_hi = fl(fsum_hi + fsum_lo)), accumulated with
 *		error-free TwoSum everywhere, so the error is at most about
 *		n * 2^-104 * sum|x| (in practice exact to the last bit of a double on
 *		most data, cancellation included).  NaN, +Inf and -Inf values are
 *		counted in nnan/npinf/nninf instead (they are included in nonnull,
 *		min and max); the caller turns those into PostgreSQL's Inf/NaN
 *		results.  If a partial sum of finite values overflows the double
 *		range the sum is meaningless (the caller should fall back).
 *	  - FLOAT8 min/max use PostgreSQL's order: NaN above everything including
 *		+Inf, -0 == 0 (either zero may be returned).
 *	  - The GPU may add in a different order than the CPU, so the FLOAT8 sums
 *		of the two may differ within the bound above; all other fields are
 *		identical.
 *
 *	  Arguments.  in->blocks and in->cols[c] (c < ncols) must be non-NULL
 *	  when n > 0; start/end may be NULL when nranges == 0; visible may be
 *	  NULL when nvisible == 0; unsure may be NULL when unsure_cap == 0; err
 *	  may be NULL.  Checked: n >= 0, 0 <= ncols <= GBT_VAGG_MAX_COLS, valid
 *	  column types, 0 <= start[r] <= end[r] <= n, the total length of the
 *	  ranges <= n, nvisible >= 0, unsure_cap >= 0.  Not checked: that ranges
 *	  are disjoint (overlapping ranges whose total length is <= n aggregate
 *	  the overlap twice).  On error the function returns nonzero, writes a
 *	  message to err (errlen bytes, NUL-terminated) and *out and unsure[] are
 *	  unspecified.
 */
#ifndef GBT_VAGG_H
#define GBT_VAGG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

#define GBT_VAGG_MAX_COLS 4

typedef enum
{
	GBT_VAGG_INT64 = 0,
	GBT_VAGG_FLOAT8 = 1
} gbt_vagg_type;

typedef struct gbt_vagg_input
{
	int64_t		n;				/* entries, in key order */
	const uint32_t *blocks;		/* heap block number of each entry [n] */
	const uint8_t *removed;		/* bit i (byte i>>3, bit i&7) set: entry i is
								 * not there; may be NULL */
	int			ncols;			/* 0..GBT_VAGG_MAX_COLS payload columns */
	gbt_vagg_type coltype[GBT_VAGG_MAX_COLS];
	const void *cols[GBT_VAGG_MAX_COLS];	/* int64_t[n] or double[n] */
	const uint8_t *nulls[GBT_VAGG_MAX_COLS];	/* bit set: value i is NULL; may
												 * be NULL (no NULLs) */
} gbt_vagg_input;

typedef struct gbt_vagg_col
{
	int64_t		nonnull;		/* non-NULL values aggregated */
	int64_t		sum_hi;			/* INT64: exact sum = sum_hi*2^64 + sum_lo */
	uint64_t	sum_lo;			/* (two's complement 128-bit) */
	double		fsum_hi,		/* FLOAT8: sum of the finite values, */
				fsum_lo;		/* double-double (hi+lo) */
	int64_t		nnan,			/* FLOAT8: NaN, +Inf, -Inf values (not in */
				npinf,			/* fsum) */
				nninf;
	int64_t		min_i,			/* INT64 */
				max_i;
	double		min_f,			/* FLOAT8, PostgreSQL's order: NaN above */
				max_f;			/* everything incl. +Inf; -0 == 0 */
} gbt_vagg_col;					/* min/max valid when nonnull > 0, else 0 */

typedef struct gbt_vagg_result
{
	int64_t		count;			/* entries aggregated (visible, not removed) */
	gbt_vagg_col col[GBT_VAGG_MAX_COLS];
	int64_t		nunsure;		/* entries on blocks not visible: total, may
								 * exceed unsure_cap */
} gbt_vagg_result;

/* CPU reference: every array is host memory.  Returns 0 or nonzero + err. */
extern int	gbt_vagg_cpu(const gbt_vagg_input *in, const int64_t *start,
						 const int64_t *end, int64_t nranges,
						 const uint8_t *visible, int64_t nvisible,
						 gbt_vagg_result *out, int64_t *unsure, int64_t unsure_cap,
						 char *err, size_t errlen);

/*
 * ---- GPU (defined only in vagg_gpu.cu; guard with USE_CUDA) ----
 * Same contract.  in's arrays (blocks, removed, cols, nulls) are DEVICE
 * memory; start/end/visible/out/unsure are HOST memory, copied in and out by
 * the call, which returns when the results are on the host.  The context
 * keeps a stream, pinned staging and device scratch buffers (grown on
 * demand, never shrunk) so that repeated calls do not allocate; it belongs
 * to the device that was current at its first use, and one context must not
 * be used by two threads at once.  gbt_vagg_gpu_ctx_create() only allocates
 * host memory (NULL when that fails); CUDA errors, including "no device",
 * are reported by gbt_vagg_gpu().  Work is queued on the context's own
 * stream, which synchronizes with the legacy default stream.
 */
typedef struct gbt_vagg_gpu_ctx gbt_vagg_gpu_ctx;

extern gbt_vagg_gpu_ctx *gbt_vagg_gpu_ctx_create(void);
extern void gbt_vagg_gpu_ctx_free(gbt_vagg_gpu_ctx *ctx);
extern int	gbt_vagg_gpu(gbt_vagg_gpu_ctx *ctx, const gbt_vagg_input *in,
						 const int64_t *start, const int64_t *end, int64_t nranges,
						 const uint8_t *visible, int64_t nvisible,
						 gbt_vagg_result *out, int64_t *unsure, int64_t unsure_cap,
						 char *err, size_t errlen);

/*
 * Timing of the last successful gbt_vagg_gpu() call on ctx, for benchmarks:
 * off by default (it adds CUDA events); gbt_vagg_gpu_ctx_timing(ctx, 1)
 * turns it on.  h2d_ms: copies of start/end (or their prefix sums) and
 * visible; kernel_ms: the kernels (range prefix sum when done on the device,
 * aggregation, reduction); d2h_ms: result and unsure positions; total_ms:
 * the whole call, host work included.  Returns 0, or nonzero when timing is
 * off or there was no successful call.
 */
typedef struct gbt_vagg_gpu_times
{
	double		h2d_ms,
				kernel_ms,
				d2h_ms,
				total_ms;
} gbt_vagg_gpu_times;

extern void gbt_vagg_gpu_ctx_timing(gbt_vagg_gpu_ctx *ctx, int on);
extern int	gbt_vagg_gpu_last_times(const gbt_vagg_gpu_ctx *ctx, gbt_vagg_gpu_times *t);

#ifdef __cplusplus
}
#endif

#endif							/* GBT_VAGG_H */
