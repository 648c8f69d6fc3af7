/*
 * vagg_gpu.cu
 *	  The GPU implementation of vagg.h (engine.h's aggregate contract).
 *
 * Ranges are flattened: offs[] is the exclusive prefix sum of the range
 * lengths (on the host for up to VAGG_HOST_RANGES ranges, else on the
 * device with cub::DeviceScan), so flattened index t in [0, T) is position
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
 * partials by the last block to finish (threadfence reduction), so a query
 * is one memset, at most two kernels (+ the scan), one copy each way plus
 * the unsure positions.
 */
#include <cub/cub.cuh>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harmonia_keys.h"
#include "vagg.h"

#define VBLK 256				/* threads per block */
#define WPB (VBLK / 32)			/* warps per block */
#ifndef VK
#define VK 4					/* entries per lane per chunk */
#endif
#ifndef VMINB
#define VMINB 1					/* __launch_bounds__ min blocks per SM */
#endif
#define VCH (32 * VK)			/* entries per warp chunk */
#define VAGG_HOST_RANGES 16384	/* up to this many ranges: prefix sum on host */
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

template <int NC>
static __global__ void
__launch_bounds__(VBLK, VMINB)
k_vagg(const __grid_constant__ KArgs A)
{
	typedef cub::BlockReduce<Acc<NC>, VBLK, cub::BLOCK_REDUCE_WARP_REDUCTIONS> BR;
	__shared__ typename BR::TempStorage tmp;
	__shared__ long long ubuf[WPB][2 * VCH];
	__shared__ int last;
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
		bool		vis[VK];

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
		/* classify and accumulate */
#pragma unroll
		for (int k = 0; k < VK; k++)
		{
			bool		uns = !rm[k] && !vis[k];
			unsigned	m = __ballot_sync(FULL, uns);

			if (m)
			{
				if (uns && A.cap > 0)
					ubuf[w][ucnt + __popc(m & lt_mask)] = pos[k];
				ucnt += __popc(m);
			}
			if (vis[k])
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
		Acc<NC>    *parts = (Acc<NC> *) A.partials;

		if (threadIdx.x == 0)
		{
			parts[blockIdx.x] = agg;
			__threadfence();
			last = atomicAdd(&A.res->done, 1u) == gridDim.x - 1;
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
			gbt_agg_result *o = &A.res->r;

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

/* ---------------- host side ---------------- */

struct gbt_vagg_gpu_ctx
{
	int			ready;
	int			dev;
	int			nsm;
	int			occ[GBT_MAX_COLS + 1];	/* resident blocks per SM, by NC */
	cudaStream_t stream;
	cudaEvent_t ev[4];
	int			timing;
	int			have_times;
	gbt_vagg_gpu_times times;
	char	   *h_stage;		/* pinned: offs/start (small path) + visible */
	size_t		h_stage_sz;
	char	   *d_stage;
	size_t		d_stage_sz;
	long long  *d_start,		/* device-prefix path */
			   *d_end,
			   *d_len,
			   *d_offs;
	size_t		d_ranges_sz;	/* elements of each of the four */
	const long long *given_start;	/* the caller's device copies, for the */
	const long long *given_end;	/* next call only (NULL: none) */
	void	   *d_ws;			/* cub scan workspace */
	size_t		d_ws_sz;
	long long  *d_unsure;
	size_t		d_unsure_sz;	/* bytes (grow()) */
	void	   *d_parts;
	size_t		d_parts_sz;		/* blocks */
	DevRes	   *d_res;
	DevRes	   *h_res;			/* pinned */
};

#define CK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
	(void) cudaGetLastError(); \
	rc = gbt_vagg_fail(err, errlen, "vagg: %s failed: %s", #call, cudaGetErrorString(e_)); \
	goto out; } } while (0)

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Grow a buffer to hold at least need bytes (contents dropped): device
 * memory, or pinned host memory when host (staging, a larger minimum).
 */
static cudaError_t
grow(void **p, size_t *have, size_t need, bool host)
{
	size_t		least = host ? 65536 : 4096;
	cudaError_t e;

	if (need <= *have && *p)
		return cudaSuccess;
	if (need < least)
		need = least;
	need += need / 4;
	if (host)
		cudaFreeHost(*p);
	else
		cudaFree(*p);
	*p = NULL;
	*have = 0;
	e = host ? cudaMallocHost(p, need) : cudaMalloc(p, need);
	if (e == cudaSuccess)
		*have = need;
	return e;
}

extern "C" gbt_vagg_gpu_ctx *
gbt_vagg_gpu_ctx_create(void)
{
	return (gbt_vagg_gpu_ctx *) calloc(1, sizeof(gbt_vagg_gpu_ctx));
}

extern "C" size_t
gbt_vagg_gpu_ctx_bytes(const gbt_vagg_gpu_ctx *x)
{
	return x->h_stage_sz + x->d_stage_sz + 4 * sizeof(long long) * x->d_ranges_sz +
		x->d_ws_sz + x->d_unsure_sz + x->d_parts_sz * sizeof(Acc<GBT_MAX_COLS>) +
		2 * sizeof(DevRes);
}

extern "C" void
gbt_vagg_gpu_ctx_free(gbt_vagg_gpu_ctx *x)
{
	int			i,
				cur = -1;

	if (!x)
		return;
	if (x->ready)
	{
		if (cudaGetDevice(&cur) != cudaSuccess)
			cur = -1;
		if (cur != x->dev)
			(void) cudaSetDevice(x->dev);
		(void) cudaStreamSynchronize(x->stream);
		cudaFreeHost(x->h_stage);
		cudaFreeHost(x->h_res);
		cudaFree(x->d_stage);
		cudaFree(x->d_start);
		cudaFree(x->d_end);
		cudaFree(x->d_len);
		cudaFree(x->d_offs);
		cudaFree(x->d_ws);
		cudaFree(x->d_unsure);
		cudaFree(x->d_parts);
		cudaFree(x->d_res);
		for (i = 0; i < 4; i++)
			cudaEventDestroy(x->ev[i]);
		cudaStreamDestroy(x->stream);
		if (cur >= 0 && cur != x->dev)
			(void) cudaSetDevice(cur);
		(void) cudaGetLastError();
	}
	free(x);
}

extern "C" void
gbt_vagg_gpu_ranges_on_device(gbt_vagg_gpu_ctx *x, const int64_t *d_start,
							  const int64_t *d_end)
{
	if (x)
	{
		x->given_start = (const long long *) d_start;
		x->given_end = (const long long *) d_end;
	}
}

void
gbt_vagg_gpu_ctx_timing(gbt_vagg_gpu_ctx *x, int on)
{
	if (x)
	{
		x->timing = on != 0;
		x->have_times = 0;
	}
}

extern "C" int
gbt_vagg_gpu_last_times(const gbt_vagg_gpu_ctx *x, gbt_vagg_gpu_times *t)
{
	if (!x || !t || !x->timing || !x->have_times)
		return 1;
	*t = x->times;
	return 0;
}

/* the kernel for each column count, so that ncols picks one at run time */
typedef void (*vagg_kernel) (const KArgs);
static const vagg_kernel k_vagg_nc[GBT_MAX_COLS + 1] = {
	k_vagg<0>, k_vagg<1>, k_vagg<2>, k_vagg<3>, k_vagg<4>
};

static_assert(GBT_MAX_COLS == 4, "k_vagg_nc[] lists a kernel per column count");

static int
ctx_init(gbt_vagg_gpu_ctx *x, char *err, size_t errlen)
{
	int			rc = 0,
				ndev = 0,
				i,
				maxocc = 0;
	cudaError_t e;

	e = cudaGetDeviceCount(&ndev);
	if (e != cudaSuccess || ndev == 0)
	{
		(void) cudaGetLastError();
		return gbt_vagg_fail(err, errlen, "vagg: no usable CUDA device (%s)",
							 e != cudaSuccess ? cudaGetErrorString(e) : "none found");
	}
	CK(cudaGetDevice(&x->dev));
	CK(cudaDeviceGetAttribute(&x->nsm, cudaDevAttrMultiProcessorCount, x->dev));
	for (i = 0; i <= GBT_MAX_COLS; i++)
	{
		CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&x->occ[i], k_vagg_nc[i],
														 VBLK, 0));
		if (x->occ[i] < 1)
			x->occ[i] = 1;
		if (x->occ[i] > maxocc)
			maxocc = x->occ[i];
	}
	CK(cudaStreamCreate(&x->stream));
	for (i = 0; i < 4; i++)
		CK(cudaEventCreate(&x->ev[i]));
	x->d_parts_sz = (size_t) maxocc * x->nsm;
	CK(cudaMalloc(&x->d_parts, x->d_parts_sz * sizeof(Acc<GBT_MAX_COLS>)));
	CK(cudaMalloc((void **) &x->d_res, sizeof(DevRes)));
	CK(cudaMallocHost((void **) &x->h_res, sizeof(DevRes)));
	x->ready = 1;
out:
	return rc;
}

extern "C" int
gbt_vagg_gpu(gbt_vagg_gpu_ctx *x, const gbt_agg_input *in,
			 const int64_t *start, const int64_t *end, int64_t nranges,
			 const uint8_t *visible, int64_t nvisible,
			 gbt_agg_result *out, int64_t *unsure, int64_t unsure_cap,
			 char *err, size_t errlen)
{
	int			rc = 0,
				cur = -1,
				c,
				switched = 0,
				small = nranges <= VAGG_HOST_RANGES;
	double		t0 = now_ms();
	int64_t		tbound,			/* T, or a bound on it */
				r,
				nunsure,
				nget;
	size_t		visbytes,
				stage,
				off_vis;
	long long  *h_offs,
			   *h_start;
	KArgs		a;
	unsigned	grid;
	int64_t		nchunks;
	const long long *given_start = x ? x->given_start : NULL;
	const long long *given_end = x ? x->given_end : NULL;

	if (!x)
		return gbt_vagg_fail(err, errlen, "vagg: no GPU context");
	x->given_start = x->given_end = NULL;
	/* ranges are checked here only when their prefix sum is on the host */
	if (gbt_vagg_check_args(in, start, end, nranges, visible, nvisible, out,
							unsure, unsure_cap, small, err, errlen))
		return 1;
	if (in->n > 0 && in->blocks == NULL)
		return gbt_vagg_fail(err, errlen, "vagg: the GPU reads block numbers, not TIDs");
	if (x->timing)
		x->have_times = 0;
	if (!x->ready)
	{
		if (ctx_init(x, err, errlen))
			return 1;
	}
	if (cudaGetDevice(&cur) != cudaSuccess)
	{
		(void) cudaGetLastError();
		cur = -1;
	}
	if (cur != x->dev)
	{
		CK(cudaSetDevice(x->dev));
		switched = 1;
	}

	/* stage the small inputs in pinned memory: [offs R+1][start R] visible */
	visbytes = (size_t) ((nvisible + 7) / 8);
	stage = small ? (size_t) (2 * nranges + 1) * 8 : 0;
	off_vis = stage;
	stage += visbytes;
	CK(grow((void **) &x->h_stage, &x->h_stage_sz, stage, true));
	CK(grow((void **) &x->d_stage, &x->d_stage_sz, stage, false));
	tbound = in->n;
	if (small)
	{
		h_offs = (long long *) x->h_stage;
		h_start = h_offs + nranges + 1;
		tbound = 0;
		for (r = 0; r < nranges; r++)
		{
			h_offs[r] = tbound;
			h_start[r] = start[r];
			tbound += end[r] - start[r];
		}
		h_offs[nranges] = tbound;
		if (tbound == 0)
		{
			/* nothing to read: no GPU work */
			memset(out, 0, sizeof(*out));
			if (x->timing)
			{
				memset(&x->times, 0, sizeof(x->times));
				x->times.total_ms = now_ms() - t0;
				x->have_times = 1;
			}
			goto out;
		}
	}
	if (visbytes > 0)
		memcpy(x->h_stage + off_vis, visible, visbytes);

	if (x->timing)
		CK(cudaEventRecord(x->ev[0], x->stream));
	CK(cudaMemsetAsync(x->d_res, 0, sizeof(DevRes), x->stream));
	if (stage > 0)
		CK(cudaMemcpyAsync(x->d_stage, x->h_stage, stage, cudaMemcpyHostToDevice, x->stream));
	if (!small)
	{
		size_t		need = (size_t) nranges + 1;

		if (need > x->d_ranges_sz)
		{
			size_t		sz = need + need / 4;

			cudaFree(x->d_start);
			cudaFree(x->d_end);
			cudaFree(x->d_len);
			cudaFree(x->d_offs);
			x->d_start = x->d_end = x->d_len = x->d_offs = NULL;
			x->d_ranges_sz = 0;
			CK(cudaMalloc((void **) &x->d_start, sz * 8));
			CK(cudaMalloc((void **) &x->d_end, sz * 8));
			CK(cudaMalloc((void **) &x->d_len, sz * 8));
			CK(cudaMalloc((void **) &x->d_offs, sz * 8));
			x->d_ranges_sz = sz;
		}
		if (given_start == NULL)
		{
			CK(cudaMemcpyAsync(x->d_start, start, nranges * 8, cudaMemcpyHostToDevice, x->stream));
			CK(cudaMemcpyAsync(x->d_end, end, nranges * 8, cudaMemcpyHostToDevice, x->stream));
			given_start = x->d_start;
			given_end = x->d_end;
		}
	}
	if (x->timing)
		CK(cudaEventRecord(x->ev[1], x->stream));
	if (!small)
	{
		size_t		ws = 0;

		k_len<<<(unsigned) ((nranges + 1 + 255) / 256), 256, 0, x->stream>>>
			(given_start, given_end, nranges, in->n, x->d_len, x->d_res);
		CK(cudaGetLastError());
		CK(cub::DeviceScan::ExclusiveSum(NULL, ws, x->d_len, x->d_offs, nranges + 1, x->stream));
		CK(grow(&x->d_ws, &x->d_ws_sz, ws, false));
		CK(cub::DeviceScan::ExclusiveSum(x->d_ws, ws, x->d_len, x->d_offs, nranges + 1, x->stream));
	}
	{
		int64_t		ucap = unsure_cap < tbound ? unsure_cap : tbound;

		CK(grow((void **) &x->d_unsure, &x->d_unsure_sz,
			   (size_t) (ucap > 0 ? ucap : 1) * 8, false));
		memset(&a, 0, sizeof(a));
		a.cap = ucap;
	}
	a.blocks = in->blocks;
	a.removed = in->removed;
	a.fmask = 0;
	a.nmask = in->narrow;
	for (c = 0; c < in->ncols; c++)
	{
		a.cols[c] = (const unsigned long long *) in->cols[c];
		a.nulls[c] = in->nulls[c];
		a.decode[c] = ((in->keyed >> c) & 1) ? HM_SIGN_BIT : 0;
		a.base[c] = (unsigned long long) in->base[c];
		if (in->coltype[c] == GBT_VAL_FLOAT8)
			a.fmask |= 1u << c;
	}
	a.n = in->n;
	a.R = nranges;
	if (small)
	{
		a.offs = (const long long *) x->d_stage;
		a.start = a.offs + nranges + 1;
	}
	else
	{
		a.offs = x->d_offs;
		a.start = given_start;
	}
	a.vis = (const uint8_t *) x->d_stage + off_vis;
	a.nvis = nvisible;
	a.unsure = x->d_unsure;
	a.partials = x->d_parts;
	a.res = x->d_res;
	nchunks = (tbound + VCH - 1) / VCH;
	{
		int64_t		g = (nchunks + WPB - 1) / WPB,
					gmax = (int64_t) x->occ[in->ncols] * x->nsm;

		if (g > gmax)
			g = gmax;
		if (g < 1)
			g = 1;
		grid = (unsigned) g;
	}
	k_vagg_nc[in->ncols] <<<grid, VBLK, 0, x->stream>>> (a);
	CK(cudaGetLastError());
	if (x->timing)
		CK(cudaEventRecord(x->ev[2], x->stream));
	CK(cudaMemcpyAsync(x->h_res, x->d_res, sizeof(DevRes), cudaMemcpyDeviceToHost, x->stream));
	CK(cudaStreamSynchronize(x->stream));
	if (x->h_res->bad)
	{
		/* find the culprit for the message (host memory, error path) */
		if (gbt_vagg_check_args(in, start, end, nranges, visible, nvisible,
								out, unsure, unsure_cap, 1, err, errlen) == 0)
			rc = gbt_vagg_fail(err, errlen, "vagg: bad ranges");
		else
			rc = 1;
		goto out;
	}
	*out = x->h_res->r;
	nunsure = (int64_t) x->h_res->ucount;
	out->nunsure = nunsure;
	nget = nunsure < a.cap ? nunsure : a.cap;
	if (nget > 0)
	{
		CK(cudaMemcpyAsync(unsure, x->d_unsure, (size_t) nget * 8, cudaMemcpyDeviceToHost,
						   x->stream));
	}
	if (x->timing)
		CK(cudaEventRecord(x->ev[3], x->stream));
	CK(cudaStreamSynchronize(x->stream));
	if (x->timing)
	{
		float		h2d,
					k,
					d2h;

		CK(cudaEventElapsedTime(&h2d, x->ev[0], x->ev[1]));
		CK(cudaEventElapsedTime(&k, x->ev[1], x->ev[2]));
		CK(cudaEventElapsedTime(&d2h, x->ev[2], x->ev[3]));
		x->times.h2d_ms = h2d;
		x->times.kernel_ms = k;
		x->times.d2h_ms = d2h;
		x->times.total_ms = now_ms() - t0;
		x->have_times = 1;
	}
out:
	if (switched && cur >= 0)
		(void) cudaSetDevice(cur);
	return rc;
}
