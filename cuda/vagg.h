/*
 * vagg.h
 *	  Visibility-filtered aggregates over position ranges of a sorted index
 *	  mirror, on the GPU (vagg_gpu.cu): engine.h's aggregate contract, whose
 *	  CPU reference is gbt_vagg_cpu() (vagg_cpu.c, declared in engine.h).
 *	  Plain C, no PostgreSQL headers; errors are returned with a message,
 *	  nothing is printed, and there is no global mutable state.
 */
#ifndef GBT_VAGG_H
#define GBT_VAGG_H

#include <math.h>
#include <string.h>

#include "engine.h"
#include "harmonia_keys.h"

#ifdef __cplusplus
extern "C"
{
#endif

#ifdef __CUDACC__
#define GBT_HOST_DEVICE __host__ __device__
#else
#define GBT_HOST_DEVICE
#endif

/* PostgreSQL's float8_lt(): NaN above everything, all NaNs equal */
static inline GBT_HOST_DEVICE int
gbt_flt_lt(double a, double b)
{
	if (isnan(a))
		return 0;
	if (isnan(b))
		return 1;
	return a < b;
}

/*
 * Fold the extreme b, with its ties, into a's (*a, *ties; both non-empty):
 * bit GBT_TIE_MIN for the smaller, GBT_TIE_MAX for the larger.  Of equal
 * values b is kept, the later one as float8smaller/larger keep it; a tie
 * of other bits is remembered (engine.h's contract).
 */
static inline GBT_HOST_DEVICE void
gbt_flt_extreme(double *a, int64_t *ties, double b, int64_t bties, int64_t bit)
{
	int			better = bit == GBT_TIE_MIN ? gbt_flt_lt(b, *a) : gbt_flt_lt(*a, b);
	int			worse = bit == GBT_TIE_MIN ? gbt_flt_lt(*a, b) : gbt_flt_lt(b, *a);
	uint64_t	x,
				y;

	if (worse)
		return;
	memcpy(&x, a, sizeof(x));
	memcpy(&y, &b, sizeof(y));
	if (better)
		*ties &= ~bit;
	else if (x != y)
		*ties |= bit;
	*ties |= bties & bit;
	*a = b;
}

/*
 * Host side (vagg_cpu.c, predicate_cpu.c): column c's value i of in, as
 * 64 bits (int64, or the bits of a double), decoded as engine.h says
 * (keyed: hm_decode_int64(), narrow: widened); 0 with *isnull set for a
 * NULL value.
 */
static inline uint64_t
gbt_agg_value(const gbt_agg_input *in, int c, int64_t i, int *isnull)
{
	*isnull = !in->cols[c] ||
		(in->nulls[c] && ((in->nulls[c][i >> 3] >> (i & 7)) & 1));
	if (*isnull)
		return 0;
	if ((in->narrow >> c) & 1)
	{
		uint32_t	w = ((const uint32_t *) in->cols[c])[i];
		float		f;
		double		d;
		uint64_t	b;

		if (in->coltype[c] == GBT_VAL_INT64)
			return (uint64_t) in->base[c] + w;
		memcpy(&f, &w, sizeof(f));
		d = f;
		memcpy(&b, &d, sizeof(b));
		return b;
	}
	/* a keyed column: hm_decode_int64() */
	return ((const uint64_t *) in->cols[c])[i] ^ (((in->keyed >> c) & 1) ? HM_SIGN_BIT : 0);
}

/* error-free sum: s + e == a + b exactly (round to nearest, no overflow) */
static inline void
gbt_two_sum(double a, double b, double *s, double *e)
{
	double		x = a + b,
				bb = x - a;

	*e = (a - (x - bb)) + (b - bb);
	*s = x;
}

/*
 * One non-NULL value (gbt_agg_value()'s bits) of a column of type t added
 * to its aggregate o, as engine.h's contract says: the 128-bit sum, or the
 * double-double sum of the finite values and the NaN/Inf counts, min and
 * max (ties included), nonnull.
 */
static inline void
gbt_agg_col_add(gbt_agg_col *o, gbt_valtype t, uint64_t bits)
{
	if (t == GBT_VAL_INT64)
	{
		int64_t		v = (int64_t) bits;
		uint64_t	lo = o->sum_lo + bits;

		o->sum_hi = (int64_t) ((uint64_t) o->sum_hi + (v < 0 ? UINT64_MAX : 0) +
							   (lo < bits));
		o->sum_lo = lo;
		if (o->nonnull == 0 || v < o->min_i)
			o->min_i = v;
		if (o->nonnull == 0 || v > o->max_i)
			o->max_i = v;
	}
	else
	{
		double		v,
					s,
					e;

		memcpy(&v, &bits, sizeof(v));
		if (isnan(v))
			o->nnan++;
		else if (isinf(v))
		{
			if (v > 0)
				o->npinf++;
			else
				o->nninf++;
		}
		else
		{
			/* (hi, lo) += v, renormalized */
			gbt_two_sum(o->fsum_hi, v, &s, &e);
			e += o->fsum_lo;
			gbt_two_sum(s, e, &o->fsum_hi, &o->fsum_lo);
		}
		if (o->nonnull == 0)
			o->min_f = o->max_f = v;
		else
		{
			gbt_flt_extreme(&o->min_f, &o->ties, v, 0, GBT_TIE_MIN);
			gbt_flt_extreme(&o->max_f, &o->ties, v, 0, GBT_TIE_MAX);
		}
	}
	o->nonnull++;
}

/*
 * vagg_cpu.c, linked in every build, also holds what both implementations
 * share.  gbt_vagg_fail() formats a message into err (errlen bytes, when
 * err is not NULL) and returns 1, so that an error path is one line.
 */
extern int	gbt_vagg_fail(char *err, size_t errlen, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/*
 * The argument checks of gbt_vagg_cpu() and gbt_vagg_gpu(): 0 when the
 * arguments are sound, else 1 with a message in err.  The ranges (start/end
 * contents) are checked only when check_ranges: the GPU checks them on the
 * device when it sums them there.
 */
extern int	gbt_vagg_check_args(const gbt_agg_input *in, const int64_t *start,
								const int64_t *end, int64_t nranges,
								const uint8_t *visible, int64_t nvisible,
								gbt_agg_result *out, int64_t *unsure,
								int64_t unsure_cap, int check_ranges,
								char *err, size_t errlen);

/*
 * Exact combination of partial aggregates (the sums' error bound of the
 * contract holds for the combination): b's column added to a's, a column
 * of type t; part's result (count, nunsure and ncols columns) added to
 * into's.
 */
extern void gbt_agg_col_combine(gbt_agg_col *a, const gbt_agg_col *b, gbt_valtype t);
extern void gbt_agg_result_combine(gbt_agg_result *into, const gbt_agg_result *part,
								   const gbt_valtype *coltype, int ncols);

/*
 * Linked only in CUDA builds.  engine.h's contract; in's arrays (blocks,
 * removed, cols, nulls) are DEVICE memory; start/end/visible/out/unsure are
 * HOST memory, copied in and out by the call, which returns when the results are on the host.  The context
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
/* Device and pinned host memory ctx keeps between calls. */
extern size_t gbt_vagg_gpu_ctx_bytes(const gbt_vagg_gpu_ctx *ctx);
extern int	gbt_vagg_gpu(gbt_vagg_gpu_ctx *ctx, const gbt_agg_input *in,
						 const int64_t *start, const int64_t *end, int64_t nranges,
						 const uint8_t *visible, int64_t nvisible,
						 gbt_agg_result *out, int64_t *unsure, int64_t unsure_cap,
						 char *err, size_t errlen);

/*
 * Many aggregates over one input in one launch (vagg_batch.cu): each query
 * q[i] is gbt_vagg_gpu()'s question over in (its own ranges, visibility
 * bits, unsure room), of the columns in cols only (bit c; the others'
 * fields zero), its answer in out, unsure[] and rc (0, or nonzero with
 * err).  One copy in, one launch, one copy back (and one of each query's
 * unsure positions, where it has some).  Returns the queries that failed.
 */
typedef struct gbt_vagg_query
{
	const int64_t *start;
	const int64_t *end;
	int64_t		nranges;
	const uint8_t *visible;
	int64_t		nvisible;
	unsigned	cols;
	gbt_agg_result *out;
	int64_t    *unsure;
	int64_t		unsure_cap;
	int			rc;
	char		err[GBT_ITEM_ERRLEN];
} gbt_vagg_query;

extern int	gbt_vagg_batch_gpu(gbt_vagg_gpu_ctx *ctx, const gbt_agg_input *in,
							   gbt_vagg_query *q, int64_t n);

/*
 * Device copies of the start/end arrays that the next gbt_vagg_gpu() call
 * of ctx is given (same values, nranges long, on ctx's device, unchanged
 * until that call returns): it reads them there instead of copying the
 * host arrays in.  Used by that one call only.
 */
extern void gbt_vagg_gpu_ranges_on_device(gbt_vagg_gpu_ctx *ctx,
										  const int64_t *d_start,
										  const int64_t *d_end);

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

/* Milliseconds on a clock that only goes forward (the GPU files' one clock). */
extern double gbt_vagg_now_ms(void);
extern void gbt_vagg_gpu_ctx_timing(gbt_vagg_gpu_ctx *ctx, int on);
extern int	gbt_vagg_gpu_last_times(const gbt_vagg_gpu_ctx *ctx, gbt_vagg_gpu_times *t);

#ifdef __cplusplus
}
#endif

#endif							/* GBT_VAGG_H */
