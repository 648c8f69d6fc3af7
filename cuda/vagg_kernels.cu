/*
 * vagg_kernels.cu
 *	  The GPU kernels of vagg_gpu.cu: range lengths, and the aggregate of
 *	  visible entries over flattened ranges, with their accumulators.
 *
 * Ranges are flattened (vagg_gpu.cu): offs[] is the exclusive prefix sum of
 * the range lengths, so flattened index t in [0, T) is position
 * start[r] + t - offs[r] of the range r with offs[r] <= t < offs[r+1].  One
 * kernel then does everything: a grid of one wave of resident blocks, each
 * warp taking chunks of VCH consecutive flattened indices (lane l takes
 * t = chunk + 32k + l, so one huge range is read fully coalesced); a lane
 * finds its range by galloping forward from the range of its previous index
 * (most often the same one or the next), so 10^6 tiny ranges cost a few
 * cached loads per entry.  The loads of a chunk are issued together, then
 * entries are classified: removed ones are skipped, visible ones are folded
 * into per-thread accumulators (128-bit int sums with carry, double-double
 * float sums with TwoSum, PostgreSQL-ordered min/max with their ties),
 * unsure ones are appended to a per-warp shared-memory buffer (ballot +
 * popc) that is flushed to the output with one global atomicAdd per VCH
 * entries.
 * Per-thread accumulators are combined with cub::BlockReduce, block
 * partials by the last block to finish (threadfence reduction).
 *
 * Filtered (predicate.h), grid row y evaluates the WHERE program and
 * filter y (both copied to shared memory) on each entry it loaded: it
 * lists the unsure entries passing WHERE if y is 0, and aggregates the
 * visible ones passing both into result y, its own partials and reduction.
 */
#include <cub/block/block_reduce.cuh>
#include <math.h>
#include <stdint.h>

#include "vagg.h"
#include "vagg_kernels.cuh"

#ifndef VMINB
#define VMINB 1					/* __launch_bounds__ min blocks per SM */
#endif
#define FULL 0xffffffffu

/* ---------------- accumulators ---------------- */

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

/* ---------------- kernels ---------------- */

/* range lengths (0 for a bad range, flagged) and len[R] = 0 for the scan */
static __global__ void
k_len(const long long *start, const long long *end, int64_t R, int64_t n,
	  long long *len, DevRes *res)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;

	if (i < R)
	{
		long long	s = start[i],
					e = end[i];

		if (s < 0 || s > e || e > n)
		{
			len[i] = 0;
			res->bad = 1;
		}
		else
			len[i] = e - s;
	}
	else if (i == R)
		len[R] = 0;
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

/*
 * Append a warp's n buffered unsure positions to the output with one
 * atomicAdd; those past the capacity are only counted.  Called by the
 * whole warp, with n warp-uniform.
 */
static __device__ __forceinline__ void
flush_unsure(const KArgs &A, const long long *buf, int n, int lane)
{
	unsigned long long base = 0;

	__syncwarp();
	if (lane == 0)
		base = atomicAdd(&A.res->ucount, (unsigned long long) n);
	base = __shfl_sync(FULL, base, 0);
	if (A.cap > 0 && base < (unsigned long long) A.cap)
		for (int i = lane; i < n; i += 32)
			if (base + i < (unsigned long long) A.cap)
				A.unsure[base + i] = buf[i];
}

/*
 * FILT: the programs on each entry k that is not removed, its values
 * loaded: wpass[k], WHERE is TRUE; fpass[k], the entry is visible and both
 * are (predicate.h: anything else skips it).
 */
template <int NC>
static __device__ __forceinline__ void
run_programs(const gbt_pred *prog, const gbt_pred_value *list,
			 const unsigned long long (&val)[NC > 0 ? NC : 1][VK],
			 const unsigned (&nb)[NC > 0 ? NC : 1][VK], const unsigned (&rm)[VK],
			 const bool (&vis)[VK], bool (&wpass)[VK], bool (&fpass)[VK])
{
#pragma unroll
	for (int k = 0; k < VK; k++)
	{
		uint64_t	ev[GBT_MAX_COLS];
		unsigned	nulls = 0;

		wpass[k] = fpass[k] = false;
		if (rm[k])
			continue;
#pragma unroll
		for (int c = 0; c < GBT_MAX_COLS; c++)
		{
			/* columns past NC: NULL, as no program reads them */
			ev[c] = c < NC ? val[c < NC ? c : 0][k] : 0;
			nulls |= (c < NC ? nb[c < NC ? c : 0][k] : 1u) << c;
		}
		wpass[k] = gbt_pred_run(&prog[0], list, ev, nulls) == GBT_TV_TRUE;
		fpass[k] = wpass[k] && vis[k] &&
			gbt_pred_run(&prog[1], list, ev, nulls) == GBT_TV_TRUE;
	}
}

template <int NC, bool FILT>
static __global__ void
__launch_bounds__(VBLK, VMINB)
k_vagg(const __grid_constant__ KArgs A)
{
	typedef cub::BlockReduce<Acc<NC>, VBLK, cub::BLOCK_REDUCE_WARP_REDUCTIONS> BR;
	__shared__ typename BR::TempStorage tmp;
	__shared__ long long ubuf[WPB][2 * VCH];
	__shared__ int last;
	__shared__ gbt_pred prog[FILT ? 2 : 1];	/* FILT: WHERE, this row's filter */
	const unsigned row = FILT ? blockIdx.y : 0;
	const int	lane = threadIdx.x & 31,
				w = threadIdx.x >> 5;
	const unsigned lt_mask = (1u << lane) - 1;
	const long long T = __ldg(A.offs + A.R);
	const AccOp<NC> op = {A.fmask};
	Acc<NC>		acc;
	int			ucnt = 0;		/* warp-uniform: entries in ubuf[w] */
	int64_t		r = 0,
				nchunks,
				ch;

	acc_init<NC>(acc, A.fmask);
	if (FILT)
	{
		const int	nw = sizeof(gbt_pred) / 8;
		const unsigned long long *wsrc = (const unsigned long long *) A.progs,
				   *fsrc = (const unsigned long long *) (A.progs + 1 + row);
		unsigned long long *dst = (unsigned long long *) prog;

		for (int j = threadIdx.x; j < 2 * nw; j += VBLK)
			dst[j] = j < nw ? __ldg(wsrc + j) : __ldg(fsrc + j - nw);
		__syncthreads();
	}
	nchunks = (T + VCH - 1) / VCH;
	if (T > A.n)
	{
		nchunks = 0;
		if (threadIdx.x == 0)
			A.res->bad = 2;
	}
	for (ch = (int64_t) blockIdx.x * WPB + w; ch < nchunks; ch += (int64_t) gridDim.x * WPB)
	{
		long long	pos[VK];
		unsigned	blk[VK],
					rm[VK],
					nb[NC > 0 ? NC : 1][VK];
		unsigned long long val[NC > 0 ? NC : 1][VK];
		bool		vis[VK],
					wpass[VK],
					fpass[VK];

		/* positions */
#pragma unroll
		for (int k = 0; k < VK; k++)
		{
			long long	t = ch * VCH + k * 32 + lane;

			pos[k] = -1;
			if (t < T)
			{
				r = seek(A.offs, A.R, t, r);
				pos[k] = __ldg(A.start + r) + (t - __ldg(A.offs + r));
			}
		}
		/* every load of the chunk at once */
#pragma unroll
		for (int k = 0; k < VK; k++)
		{
			blk[k] = 0;
			rm[k] = 1;
#pragma unroll
			for (int c = 0; c < NC; c++)
			{
				val[c][k] = 0;
				nb[c][k] = 0;
			}
			if (pos[k] >= 0)
			{
				long long	p = pos[k];

				blk[k] = __ldg(A.blocks + p);
				rm[k] = A.removed ? (__ldg(A.removed + (p >> 3)) >> (p & 7)) & 1 : 0;
#pragma unroll
				for (int c = 0; c < NC; c++)
				{
					if (A.cols[c] == NULL)
					{
						nb[c][k] = 1;
						continue;
					}
					if ((A.nmask >> c) & 1)
					{
						unsigned	w = __ldg((const unsigned *) A.cols[c] + p);

						val[c][k] = ((A.fmask >> c) & 1) ?
							(unsigned long long) __double_as_longlong((double) __uint_as_float(w)) :
							A.base[c] + w;
					}
					else
						val[c][k] = __ldg(A.cols[c] + p) ^ A.decode[c];
					nb[c][k] = A.nulls[c] ? (__ldg(A.nulls[c] + (p >> 3)) >> (p & 7)) & 1 : 0;
				}
			}
		}
#pragma unroll
		for (int k = 0; k < VK; k++)
		{
			unsigned	b = blk[k];

			vis[k] = !rm[k] && (int64_t) b < A.nvis && ((__ldg(A.vis + (b >> 3)) >> (b & 7)) & 1);
		}
		if (FILT)
			run_programs<NC>(prog, A.list, val, nb, rm, vis, wpass, fpass);
		/* classify and accumulate */
#pragma unroll
		for (int k = 0; k < VK; k++)
		{
			bool		uns = !rm[k] && !vis[k] && (!FILT || (wpass[k] && row == 0));
			unsigned	m = __ballot_sync(FULL, uns);

			if (m)
			{
				if (uns && A.cap > 0)
					ubuf[w][ucnt + __popc(m & lt_mask)] = pos[k];
				ucnt += __popc(m);
			}
			if (FILT ? fpass[k] : vis[k])
			{
				acc.count++;
#pragma unroll
				for (int c = 0; c < NC; c++)
				{
					ColAcc	   &a = acc.c[c];
					unsigned long long vb = val[c][k];

					if (nb[c][k])
						continue;
					if ((A.fmask >> c) & 1)
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
			}
		}
		/* flush the warp's unsure buffer before it can overflow */
		if (ucnt >= VCH)
		{
			flush_unsure(A, ubuf[w], ucnt, lane);
			__syncwarp();		/* before ubuf[w] is refilled */
			ucnt = 0;
		}
	}
	if (ucnt > 0)
		flush_unsure(A, ubuf[w], ucnt, lane);

	/* block partial, then the last block combines them */
	{
		Acc<NC>		agg = BR(tmp).Reduce(acc, op);
		Acc<NC>    *parts = (Acc<NC> *) A.partials + (size_t) row * gridDim.x;

		if (threadIdx.x == 0)
		{
			parts[blockIdx.x] = agg;
			__threadfence();
			last = atomicAdd(&A.res->done[row], 1u) == gridDim.x - 1;
		}
		__syncthreads();
		if (!last)
			return;
		__threadfence();
		acc_init<NC>(acc, A.fmask);
		for (unsigned i = threadIdx.x; i < gridDim.x; i += VBLK)
		{
			Acc<NC>		p;
			const unsigned long long *src = (const unsigned long long *) (parts + i);
			unsigned long long *dst = (unsigned long long *) &p;

			for (unsigned j = 0; j < sizeof(Acc<NC>) / 8; j++)
				dst[j] = __ldcg(src + j);
			acc = op(acc, p);
		}
		__syncthreads();		/* tmp is reused */
		agg = BR(tmp).Reduce(acc, op);
		if (threadIdx.x == 0)
		{
			gbt_agg_result *o = &A.res->r[row];

			o->count = agg.count;
#pragma unroll
			for (int c = 0; c < NC; c++)
			{
				const ColAcc &x = agg.c[c];
				gbt_agg_col *oc = &o->col[c];

				oc->nonnull = x.nonnull;
				if ((A.fmask >> c) & 1)
				{
					oc->fsum_hi = dbl(x.s0);
					oc->fsum_lo = dbl(x.s1);
					oc->nnan = x.nnan;
					oc->npinf = x.npinf;
					oc->nninf = x.nninf;
					if (x.nonnull > 0)
					{
						oc->min_f = dbl(x.mn);
						oc->max_f = dbl(x.mx);
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
	}
}

/* ---------------- launches ---------------- */

/*
 * the kernel for each column count, unfiltered and filtered, so that
 * ncols picks one at run time
 */
typedef void (*vagg_kernel) (const KArgs);
static const vagg_kernel k_vagg_nc[2][GBT_MAX_COLS + 1] = {
	{k_vagg<0, false>, k_vagg<1, false>, k_vagg<2, false>, k_vagg<3, false>, k_vagg<4, false>},
	{k_vagg<0, true>, k_vagg<1, true>, k_vagg<2, true>, k_vagg<3, true>, k_vagg<4, true>}
};

static_assert(GBT_MAX_COLS == 4, "k_vagg_nc[] lists a kernel per column count");
static_assert(sizeof(gbt_pred) % 8 == 0, "k_vagg() copies programs a word at a time");

cudaError_t
vagg_occupancy(int ncols, bool filtered, int *blocks)
{
	return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, k_vagg_nc[filtered][ncols],
														 VBLK, 0);
}

size_t
vagg_partial_bytes(void)
{
	return sizeof(Acc<GBT_MAX_COLS>);
}

cudaError_t
vagg_launch_lengths(const long long *start, const long long *end, int64_t R, int64_t n,
					long long *len, DevRes *res, cudaStream_t stream)
{
	k_len<<<(unsigned) ((R + 1 + 255) / 256), 256, 0, stream>>> (start, end, R, n, len, res);
	return cudaGetLastError();
}

cudaError_t
vagg_launch_aggregate(int ncols, unsigned grid, unsigned rows, bool filtered,
					  cudaStream_t stream, const KArgs &A)
{
	k_vagg_nc[filtered][ncols] <<<dim3(grid, filtered ? rows : 1), VBLK, 0, stream>>> (A);
	return cudaGetLastError();
}
