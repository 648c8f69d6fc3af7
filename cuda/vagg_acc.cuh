/*
 * vagg_acc.cuh
 *	  The aggregate kernels' accumulators and what they do to one entry,
 *	  shared by vagg_kernels.cu (filtered or not) and groupby_kernels.cu
 *	  (grouped): an entry's column values loaded and decoded, added to a
 *	  partial aggregate exactly (128-bit int sums with carry, double-double
 *	  float sums with TwoSum, PostgreSQL-ordered min/max with their ties),
 *	  partials combined, and a partial written as engine.h's result.  Also
 *	  the search of a flattened index's range.  C++ (nvcc) only.
 */
#ifndef GBT_VAGG_ACC_CUH
#define GBT_VAGG_ACC_CUH

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "vagg.h"

/*
 * One column's partial aggregate.  The column type is known at run time
 * only, so the 16 bytes of sum and the min/max hold either int64 or double
 * bits: INT64 s0 = low, s1 = high word of the 128-bit sum; FLOAT8 s0/s1 =
 * double-double hi/lo.  INT64 min/max start at the identity (INT64_MAX,
 * INT64_MIN), so empty partials combine freely; FLOAT8 ones are taken from
 * the first value or partial (nonnull == 0 before), because a tie with an
 * identity NaN would set ties (engine.h), which the combine keeps: the
 * reduction's order is not the entries', so the value of a tie is any of
 * them, as the contract allows.  It is not engine.h's gbt_agg_col, which
 * holds both types' fields apart (104 bytes, zero when empty): this one is
 * 72 bytes, because NC of them sit in every thread's registers and are
 * shuffled through shared memory in the block reduction.
 */
struct ColAcc
{
	unsigned long long s0,
				s1,
				mn,
				mx;
	long long	nonnull,
				nnan,
				npinf,
				nninf,
				ties;			/* FLOAT8: engine.h's GBT_TIE_MIN/MAX */
};

template <int NC>
struct Acc
{
	long long	count;
	ColAcc		c[NC > 0 ? NC : 1];
};

static __device__ __forceinline__ double
dbl(unsigned long long b)
{
	return __longlong_as_double((long long) b);
}

static __device__ __forceinline__ unsigned long long
bits(double d)
{
	return (unsigned long long) __double_as_longlong(d);
}

/* error-free sum: s + e == a + b exactly */
static __device__ __forceinline__ void
two_sum(double a, double b, double &s, double &e)
{
	double		x = __dadd_rn(a, b),
				bb = __dsub_rn(x, a);

	e = __dadd_rn(__dsub_rn(a, __dsub_rn(x, bb)), __dsub_rn(b, bb));
	s = x;
}

/* accurate double-double addition */
static __device__ __forceinline__ void
dd_add(double ah, double al, double bh, double bl, double &rh, double &rl)
{
	double		s,
				e,
				t,
				f;

	two_sum(ah, bh, s, e);
	two_sum(al, bl, t, f);
	e = __dadd_rn(e, t);
	two_sum(s, e, s, e);
	e = __dadd_rn(e, f);
	two_sum(s, e, rh, rl);
}

/* a FLOAT8 partial's min/max (bits) and ties folded into non-empty a's */
static __device__ __forceinline__ void
fold_minmax(ColAcc &a, unsigned long long mn, unsigned long long mx,
			long long ties)
{
	double		m = dbl(a.mn),
				x = dbl(a.mx);
	int64_t		t = a.ties;

	gbt_flt_extreme(&m, &t, dbl(mn), ties, GBT_TIE_MIN);
	gbt_flt_extreme(&x, &t, dbl(mx), ties, GBT_TIE_MAX);
	a.mn = bits(m);
	a.mx = bits(x);
	a.ties = t;
}

template <int NC>
static __device__ __forceinline__ void
acc_init(Acc<NC> &a, unsigned fmask)
{
	a.count = 0;
#pragma unroll
	for (int c = 0; c < NC; c++)
	{
		bool		f = (fmask >> c) & 1;

		a.c[c].s0 = a.c[c].s1 = 0;	/* 0.0 is all-zero bits too */
		a.c[c].mn = f ? bits(__longlong_as_double(0x7ff8000000000000LL)) : (unsigned long long) INT64_MAX;
		a.c[c].mx = f ? bits(-INFINITY) : (unsigned long long) INT64_MIN;
		a.c[c].nonnull = a.c[c].nnan = a.c[c].npinf = a.c[c].nninf = a.c[c].ties = 0;
	}
}

template <int NC>
struct AccOp
{
	unsigned	fmask;

	__device__ __forceinline__ Acc<NC> operator() (const Acc<NC> &a, const Acc<NC> &b) const
	{
		Acc<NC>		r;

		r.count = a.count + b.count;
#pragma unroll
		for (int c = 0; c < NC; c++)
		{
			const ColAcc &x = a.c[c],
					   &y = b.c[c];
			ColAcc	   &z = r.c[c];

			z.nonnull = x.nonnull + y.nonnull;
			z.ties = x.ties;
			z.nnan = x.nnan + y.nnan;
			z.npinf = x.npinf + y.npinf;
			z.nninf = x.nninf + y.nninf;
			if ((fmask >> c) & 1)
			{
				double		h,
							l;

				dd_add(dbl(x.s0), dbl(x.s1), dbl(y.s0), dbl(y.s1), h, l);
				z.s0 = bits(h);
				z.s1 = bits(l);
				z.mn = x.mn;
				z.mx = x.mx;
				if (x.nonnull == 0)
				{
					z.mn = y.mn;
					z.mx = y.mx;
					z.ties = y.ties;
				}
				else if (y.nonnull > 0)
					fold_minmax(z, y.mn, y.mx, y.ties);
			}
			else
			{
				z.s0 = x.s0 + y.s0;
				z.s1 = x.s1 + y.s1 + (z.s0 < x.s0);
				z.mn = (long long) y.mn < (long long) x.mn ? y.mn : x.mn;
				z.mx = (long long) y.mx > (long long) x.mx ? y.mx : x.mx;
			}
		}
		return r;
	}
};

/*
 * One non-NULL value (bits vb) of column c added to a's column: FLOAT8
 * when isf (NaN/Inf counted, finite values in the double-double sum), else
 * INT64 (the 128-bit sum); min/max and nonnull either way.
 */
static __device__ __forceinline__ void
acc_add_value(ColAcc &a, bool isf, unsigned long long vb)
{
	if (isf)
	{
		double		v = dbl(vb);

		if (isnan(v))
			a.nnan++;
		else if (isinf(v))
		{
			if (v > 0)
				a.npinf++;
			else
				a.nninf++;
		}
		else
		{
			double		s,
						e;

			two_sum(dbl(a.s0), v, s, e);
			e = __dadd_rn(e, dbl(a.s1));
			two_sum(s, e, s, e);
			a.s0 = bits(s);
			a.s1 = bits(e);
		}
		if (a.nonnull == 0)
			a.mn = a.mx = vb;
		else
			fold_minmax(a, vb, vb, 0);
	}
	else
	{
		long long	v = (long long) vb;
		unsigned long long lo = a.s0 + vb;

		a.s1 += (v < 0 ? ~0ULL : 0ULL) + (lo < vb);
		a.s0 = lo;
		if (v < (long long) a.mn)
			a.mn = vb;
		if (v > (long long) a.mx)
			a.mx = vb;
	}
	a.nonnull++;
}

/* An entry (its values and NULL bits loaded) counted and added to acc. */
template <int NC>
static __device__ __forceinline__ void
acc_add_entry(Acc<NC> &acc, unsigned fmask, const unsigned long long *val,
			  const unsigned *nb)
{
	acc.count++;
#pragma unroll
	for (int c = 0; c < NC; c++)
		if (!nb[c])
			acc_add_value(acc.c[c], (fmask >> c) & 1, val[c]);
}

/*
 * Entry p's value of column c of A (any struct with KArgs's column
 * fields), decoded as engine.h says, and its NULL bit (a column without an
 * array is NULL).
 */
template <typename Args>
static __device__ __forceinline__ void
acc_load_col(const Args &A, int c, long long p, unsigned long long &val, unsigned &nb)
{
	val = 0;
	nb = 1;
	if (A.cols[c] == NULL)
		return;
	if ((A.nmask >> c) & 1)
	{
		unsigned	w = __ldg((const unsigned *) A.cols[c] + p);

		val = ((A.fmask >> c) & 1) ?
			(unsigned long long) __double_as_longlong((double) __uint_as_float(w)) :
			A.base[c] + w;
	}
	else
		val = __ldg(A.cols[c] + p) ^ A.decode[c];
	nb = A.nulls[c] ? (__ldg(A.nulls[c] + (p >> 3)) >> (p & 7)) & 1 : 0;
}

/* entry p's values and NULL bits of the NC columns of A */
template <int NC, typename Args>
static __device__ __forceinline__ void
acc_load_entry(const Args &A, long long p, unsigned long long *val, unsigned *nb)
{
#pragma unroll
	for (int c = 0; c < NC; c++)
		acc_load_col(A, c, p, val[c], nb[c]);
}

/*
 * A partial written into o (zeroed before) as engine.h's result: the
 * fields of each column's type; min/max only when it has values.  Host
 * and device.
 */
template <int NC>
static __host__ __device__ __forceinline__ void
acc_store(const Acc<NC> &agg, unsigned fmask, gbt_agg_result *o)
{
	o->count = agg.count;
	for (int c = 0; c < NC; c++)
	{
		const ColAcc &x = agg.c[c];
		gbt_agg_col *oc = &o->col[c];

		oc->nonnull = x.nonnull;
		if ((fmask >> c) & 1)
		{
			memcpy(&oc->fsum_hi, &x.s0, 8);
			memcpy(&oc->fsum_lo, &x.s1, 8);
			oc->nnan = x.nnan;
			oc->npinf = x.npinf;
			oc->nninf = x.nninf;
			if (x.nonnull > 0)
			{
				memcpy(&oc->min_f, &x.mn, 8);
				memcpy(&oc->max_f, &x.mx, 8);
				oc->ties = x.ties;
			}
		}
		else
		{
			oc->sum_lo = x.s0;
			oc->sum_hi = (int64_t) x.s1;
			if (x.nonnull > 0)
			{
				oc->min_i = (int64_t) x.mn;
				oc->max_i = (int64_t) x.mx;
			}
		}
	}
}

/*
 * The range of flattened index t: the r with offs[r] <= t < offs[r+1],
 * given a hint r with offs[r] <= t (offs[R] = T > t).  Gallop, then bisect.
 */
static __device__ __forceinline__ int64_t
seek(const long long *offs, int64_t R, long long t, int64_t r)
{
	int64_t		lo,
				hi,
				step;

	if (__ldg(offs + r + 1) > t)
		return r;
	lo = r + 1;					/* offs[lo] <= t */
	step = 1;
	for (;;)
	{
		hi = lo + step;
		if (hi >= R)
		{
			hi = R;
			break;
		}
		if (__ldg(offs + hi) > t)
			break;
		lo = hi;
		step <<= 1;
	}
	while (hi - lo > 1)			/* offs[lo] <= t < offs[hi] */
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (__ldg(offs + mid) <= t)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

#endif							/* GBT_VAGG_ACC_CUH */
