/*
 * groupby_kernels.cu
 *	  The grouped aggregate's kernels (groupby.h, host side in
 *	  groupby_gpu.cu), with vagg_acc.cuh's accumulators.
 *
 * Compaction, in two passes over tiles of GK_TILE flattened indices (a
 * thread takes GK_ITEMS of them, a block's worth apart, so that one range
 * is read coalesced): each entry is classified as vagg_kernels.cu does
 * (removed, WHERE, visible) and by its group value (NULL or not).  Pass 1
 * lists the unsure entries (a warp's ballot, one atomicAdd), counts the
 * tile's entries of each kind and the smallest and largest value; pass 2,
 * after the counts' prefix sums, writes each entry at its tile's offset
 * plus its rank in the tile (ballots per warp and item, summed in item
 * order), so that the entries keep their order: the keys (value less the
 * smallest) with the positions, and the NULL group's positions apart.
 *
 * Groups (after the host's radix sort by key, skipped when the keys are
 * in order already): heads of equal keys and their scan give each entry's
 * group; each group's first entry and value are scattered, and the groups
 * sorted into classes by size, so that skew costs nothing: up to
 * GK_SMALL entries a thread reduces the group alone, up to GK_MEDIUM a
 * warp (lanes striding, then shuffles), larger ones in chunks of GK_CHUNK
 * entries, a block each (cub::BlockReduce), whose partials a block a group
 * combines.  Each kernel's grid has a row per filter, whose program it
 * evaluates per entry.  Every sum is exact but the float ones (vagg_acc.cuh:
 * double-double), so results differ from the CPU's in float sums alone.
 */
#include <cub/block/block_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <stdint.h>

#include "groupby_kernels.cuh"
#include "harmonia_keys.h"
#include "vagg_acc.cuh"

#define FULL 0xffffffffu
#define GK_WARPS (GK_THREADS / 32)

struct GkMin
{
	__device__ __forceinline__ unsigned long long
	operator() (unsigned long long a, unsigned long long b) const
	{
		return a < b ? a : b;
	}
};

struct GkMax
{
	__device__ __forceinline__ unsigned long long
	operator() (unsigned long long a, unsigned long long b) const
	{
		return a > b ? a : b;
	}
};

/* program p on an entry's NC values (columns past NC NULL): TRUE or not */
template <int NC>
static __device__ __forceinline__ bool
gk_passes(const gbt_pred *p, const gbt_pred_value *list, const unsigned long long *val,
		  const unsigned *nb)
{
	uint64_t	ev[GBT_MAX_COLS];
	unsigned	nulls = 0;

#pragma unroll
	for (int c = 0; c < GBT_MAX_COLS; c++)
	{
		ev[c] = c < NC ? val[c < NC ? c : 0] : 0;
		nulls |= (c < NC ? nb[c < NC ? c : 0] : 1u) << c;
	}
	return gbt_pred_run(p, list, ev, nulls) == GBT_TV_TRUE;
}

/* a program copied to shared memory by the whole block */
static __device__ __forceinline__ void
gk_copy_prog(gbt_pred *dst, const gbt_pred *src)
{
	const unsigned long long *s = (const unsigned long long *) src;
	unsigned long long *d = (unsigned long long *) dst;

	for (int j = threadIdx.x; j < (int) (sizeof(gbt_pred) / 8); j += GK_THREADS)
		d[j] = __ldg(s + j);
	__syncthreads();
}

/* entry kinds in compaction */
#define GK_SKIP 0
#define GK_UNSURE 1
#define GK_TAKE 2				/* to aggregate, its group value not NULL */
#define GK_NULL 3				/* to aggregate in the NULL group */

template <int NC, bool WRITE>
static __global__ void
__launch_bounds__(GK_THREADS)
k_gpass(const __grid_constant__ GkArgs A)
{
	typedef cub::BlockReduce<unsigned long long, GK_THREADS> BR;
	__shared__ typename BR::TempStorage tmp;
	__shared__ gbt_pred where;
	__shared__ unsigned rank[2][GK_ITEMS][GK_WARPS];	/* WRITE: the kinds' counts,
														 * then their offsets */
	const int	lane = threadIdx.x & 31,
				w = threadIdx.x >> 5;
	const unsigned lt_mask = (1u << lane) - 1;
	const long long T = __ldg(A.offs + A.R),
				base = (long long) blockIdx.x * GK_TILE;
	unsigned	kind[GK_ITEMS];
	unsigned long long key[GK_ITEMS];
	long long	pos[GK_ITEMS];
	int64_t		r = 0;

	if (T > A.n)
	{
		if (blockIdx.x == 0 && threadIdx.x == 0)
			A.res->bad = 2;
		return;
	}
	if (base >= T)
		return;					/* the whole block */
	if (A.where)
		gk_copy_prog(&where, A.progs);

	/* classify each item: removed, WHERE, visible, its group value */
#pragma unroll
	for (int k = 0; k < GK_ITEMS; k++)
	{
		long long	t = base + k * GK_THREADS + threadIdx.x,
					p;
		unsigned long long val[NC],
					gv = 0;
		unsigned	nb[NC],
					gnull = 1,
					b;

		kind[k] = GK_SKIP;
		key[k] = 0;
		pos[k] = 0;
		if (t >= T)
			continue;
		r = seek(A.offs, A.R, t, r);
		p = __ldg(A.start + r) + (t - __ldg(A.offs + r));
		pos[k] = p;
		if (A.removed && ((__ldg(A.removed + (p >> 3)) >> (p & 7)) & 1))
			continue;
		if (A.where)
		{
			acc_load_entry<NC>(A, p, val, nb);
			if (!gk_passes<NC>(&where, A.list, val, nb))
				continue;
#pragma unroll
			for (int c = 0; c < NC; c++)
				if (c == A.gcol)
				{
					gv = val[c];
					gnull = nb[c];
				}
		}
		else
		{
			/* the group column alone (constant indexes: no local copy of A) */
#pragma unroll
			for (int c = 0; c < NC; c++)
				if (c == A.gcol)
					acc_load_col(A, c, p, gv, gnull);
		}
		b = __ldg(A.blocks + p);
		if (!((int64_t) b < A.nvis && ((__ldg(A.vis + (b >> 3)) >> (b & 7)) & 1)))
			kind[k] = GK_UNSURE;
		else
			kind[k] = gnull ? GK_NULL : GK_TAKE;
		key[k] = gv ^ HM_SIGN_BIT;
	}

	if (!WRITE)
	{
		unsigned long long counts = 0,
					mn = ~0ULL,
					mx = 0;

		/* unsure entries listed, a warp's at once */
#pragma unroll
		for (int k = 0; k < GK_ITEMS; k++)
		{
			bool		uns = kind[k] == GK_UNSURE;
			unsigned	m = __ballot_sync(FULL, uns);
			unsigned long long at = 0;

			if (m == 0)
				continue;
			if (lane == 0)
				at = atomicAdd(&A.res->ucount, (unsigned long long) __popc(m));
			at = __shfl_sync(FULL, at, 0) + __popc(m & lt_mask);
			if (uns && at < (unsigned long long) A.cap)
				A.unsure[at] = pos[k];
		}
		/* the tile's counts (non-NULL high, NULL low) and extremes */
#pragma unroll
		for (int k = 0; k < GK_ITEMS; k++)
		{
			counts += kind[k] == GK_TAKE ? 1ULL << 32 : kind[k] == GK_NULL ? 1 : 0;
			if (kind[k] == GK_TAKE)
			{
				mn = key[k] < mn ? key[k] : mn;
				mx = key[k] > mx ? key[k] : mx;
			}
		}
		counts = BR(tmp).Sum(counts);
		__syncthreads();
		mn = BR(tmp).Reduce(mn, GkMin());
		__syncthreads();
		mx = BR(tmp).Reduce(mx, GkMax());
		if (threadIdx.x == 0)
		{
			A.tile_take[blockIdx.x] = (unsigned) (counts >> 32);
			A.tile_null[blockIdx.x] = (unsigned) counts;
			if (counts >> 32)
			{
				atomicMin(&A.cnt->umin, mn);
				atomicMax(&A.cnt->umax, mx);
			}
		}
	}
	else
	{
		/* each entry's rank in the tile, items in flattened order */
		unsigned	mt[GK_ITEMS],
					mnl[GK_ITEMS],
					toff,
					noff;

#pragma unroll
		for (int k = 0; k < GK_ITEMS; k++)
		{
			mt[k] = __ballot_sync(FULL, kind[k] == GK_TAKE);
			mnl[k] = __ballot_sync(FULL, kind[k] == GK_NULL);
			if (lane == 0)
			{
				rank[0][k][w] = __popc(mt[k]);
				rank[1][k][w] = __popc(mnl[k]);
			}
		}
		__syncthreads();
		if (threadIdx.x < 2)
		{
			unsigned	sum = 0;

			for (int k = 0; k < GK_ITEMS; k++)
				for (int j = 0; j < GK_WARPS; j++)
				{
					unsigned	c = rank[threadIdx.x][k][j];

					rank[threadIdx.x][k][j] = sum;
					sum += c;
				}
		}
		__syncthreads();
		toff = A.take_off[blockIdx.x];
		noff = A.null_off[blockIdx.x];
#pragma unroll
		for (int k = 0; k < GK_ITEMS; k++)
		{
			if (kind[k] == GK_TAKE)
			{
				unsigned	i = toff + rank[0][k][w] + __popc(mt[k] & lt_mask);

				A.keys[i] = key[k] - A.umin;
				A.pos[i] = (unsigned) pos[k];
			}
			else if (kind[k] == GK_NULL)
				A.nullpos[noff + rank[1][k][w] + __popc(mnl[k] & lt_mask)] = (unsigned) pos[k];
		}
	}
}

/* any key below the one before it */
static __global__ void
k_gsorted(const __grid_constant__ GkArgs A)
{
	int64_t		i = blockIdx.x * (int64_t) GK_THREADS + threadIdx.x;

	if (i > 0 && i < A.ntake && A.keys[i] < A.keys[i - 1])
		*A.unsorted = 1;
}

static __global__ void
k_gheads(const __grid_constant__ GkArgs A)
{
	int64_t		i = blockIdx.x * (int64_t) GK_THREADS + threadIdx.x;

	if (i < A.ntake)
		A.head[i] = i == 0 || A.keys[i] != A.keys[i - 1];
}

/* each group's first entry and value; the NULL group's after the others */
static __global__ void
k_gstarts(const __grid_constant__ GkArgs A)
{
	int64_t		i = blockIdx.x * (int64_t) GK_THREADS + threadIdx.x,
				nn = A.ngroups - (A.nnull > 0);

	if (i < A.ntake && (i == 0 || A.gid[i] != A.gid[i - 1]))
	{
		unsigned	g = A.gid[i] - 1;

		A.gstart[g] = (unsigned) i;
		A.values[g] = (long long) ((A.keys[i] + A.umin) ^ HM_SIGN_BIT);
	}
	if (i == 0)
	{
		A.gstart[nn] = (unsigned) A.ntake;
		if (A.nnull > 0)
		{
			A.values[nn] = 0;
			A.gstart[nn + 1] = (unsigned) (A.ntake + A.nnull);
		}
	}
}

/* the groups above GK_SMALL entries listed by class, large ones chunked */
static __global__ void
k_gplan(const __grid_constant__ GkArgs A)
{
	int64_t		g = blockIdx.x * (int64_t) GK_THREADS + threadIdx.x;
	unsigned	s,
				size;

	if (g >= A.ngroups)
		return;
	s = A.gstart[g];
	size = A.gstart[g + 1] - s;
	if (size > GK_MEDIUM)
	{
		unsigned	j = atomicAdd(&A.cnt->nlarge, 1u),
					nch = (size + GK_CHUNK - 1) / GK_CHUNK,
					c0 = atomicAdd(&A.cnt->nchunks, nch);

		A.large[j] = (unsigned) g;
		A.lchunk[j] = c0;
		for (unsigned q = 0; q < nch; q++)
		{
			GkChunk		ch;

			ch.group = (unsigned) g;
			ch.begin = s + q * GK_CHUNK;
			ch.end = q + 1 < nch ? ch.begin + GK_CHUNK : s + size;
			A.chunks[c0 + q] = ch;
		}
	}
	else if (size > GK_SMALL)
		A.medium[atomicAdd(&A.cnt->nmedium, 1u)] = (unsigned) g;
}

/* sorted entry i added to acc if filter prog is TRUE for it */
template <int NC>
static __device__ __forceinline__ void
gk_add(const GkArgs &A, const gbt_pred *prog, unsigned i, Acc<NC> &acc)
{
	unsigned long long val[NC];
	unsigned	nb[NC];

	acc_load_entry<NC>(A, (long long) __ldg(A.pos + i), val, nb);
	if (gk_passes<NC>(prog, A.list, val, nb))
		acc_add_entry<NC>(acc, A.fmask, val, nb);
}

/* groups of up to GK_SMALL entries: a thread each */
template <int NC>
static __global__ void
__launch_bounds__(GK_THREADS)
k_gsmall(const __grid_constant__ GkArgs A)
{
	__shared__ gbt_pred prog;
	const int	f = blockIdx.y;
	int64_t		g = blockIdx.x * (int64_t) GK_THREADS + threadIdx.x;
	unsigned	s,
				e;
	Acc<NC>		acc;

	gk_copy_prog(&prog, A.progs + 1 + f);
	if (g >= A.ngroups)
		return;
	s = A.gstart[g];
	e = A.gstart[g + 1];
	if (e - s > GK_SMALL)
		return;
	acc_init<NC>(acc, A.fmask);
	for (unsigned i = s; i < e; i++)
		gk_add<NC>(A, &prog, i, acc);
	((Acc<NC> *) A.out)[g * A.nf + f] = acc;
}

/* lane 0 gets the warp's accumulators combined */
template <int NC>
static __device__ __forceinline__ Acc<NC>
gk_warp_reduce(Acc<NC> a, const AccOp<NC> &op)
{
	static_assert(sizeof(Acc<NC>) % 8 == 0, "Acc is shuffled a word at a time");
#pragma unroll
	for (int off = 16; off > 0; off >>= 1)
	{
		Acc<NC>		b;
		const long long *src = (const long long *) &a;
		long long  *dst = (long long *) &b;

#pragma unroll
		for (int j = 0; j < (int) (sizeof(Acc<NC>) / 8); j++)
			dst[j] = __shfl_down_sync(FULL, src[j], off);
		a = op(a, b);
	}
	return a;
}

/* groups of GK_SMALL + 1 to GK_MEDIUM entries: a warp each */
template <int NC>
static __global__ void
__launch_bounds__(GK_THREADS)
k_gmedium(const __grid_constant__ GkArgs A)
{
	__shared__ gbt_pred prog;
	const int	f = blockIdx.y,
				lane = threadIdx.x & 31;
	const AccOp<NC> op = {A.fmask};
	const unsigned nmed = A.cnt->nmedium;

	gk_copy_prog(&prog, A.progs + 1 + f);
	for (unsigned j = blockIdx.x * GK_WARPS + (threadIdx.x >> 5); j < nmed;
		 j += gridDim.x * GK_WARPS)
	{
		unsigned	g = A.medium[j],
					e = A.gstart[g + 1];
		Acc<NC>		acc;

		acc_init<NC>(acc, A.fmask);
		for (unsigned i = A.gstart[g] + lane; i < e; i += 32)
			gk_add<NC>(A, &prog, i, acc);
		acc = gk_warp_reduce<NC>(acc, op);
		if (lane == 0)
			((Acc<NC> *) A.out)[(size_t) g * A.nf + f] = acc;
	}
}

/* the large groups' chunks: a block each, a partial each */
template <int NC>
static __global__ void
__launch_bounds__(GK_THREADS)
k_gchunk(const __grid_constant__ GkArgs A)
{
	typedef cub::BlockReduce<Acc<NC>, GK_THREADS, cub::BLOCK_REDUCE_WARP_REDUCTIONS> BR;
	__shared__ typename BR::TempStorage tmp;
	__shared__ gbt_pred prog;
	const int	f = blockIdx.y;
	const AccOp<NC> op = {A.fmask};
	const unsigned nch = A.cnt->nchunks;

	gk_copy_prog(&prog, A.progs + 1 + f);
	for (unsigned j = blockIdx.x; j < nch; j += gridDim.x)
	{
		GkChunk		ch = A.chunks[j];
		Acc<NC>		acc;

		acc_init<NC>(acc, A.fmask);
#pragma unroll 4
		for (unsigned i = ch.begin + threadIdx.x; i < ch.end; i += GK_THREADS)
			gk_add<NC>(A, &prog, i, acc);
		acc = BR(tmp).Reduce(acc, op);
		if (threadIdx.x == 0)
			((Acc<NC> *) A.parts)[(size_t) j * A.nf + f] = acc;
		__syncthreads();		/* tmp is reused */
	}
}

/* the large groups: their chunks' partials combined, a block each */
template <int NC>
static __global__ void
__launch_bounds__(GK_THREADS)
k_glarge(const __grid_constant__ GkArgs A)
{
	typedef cub::BlockReduce<Acc<NC>, GK_THREADS, cub::BLOCK_REDUCE_WARP_REDUCTIONS> BR;
	__shared__ typename BR::TempStorage tmp;
	const int	f = blockIdx.y;
	const AccOp<NC> op = {A.fmask};
	const unsigned nl = A.cnt->nlarge;

	for (unsigned j = blockIdx.x; j < nl; j += gridDim.x)
	{
		unsigned	g = A.large[j],
					c0 = A.lchunk[j],
					nch = (A.gstart[g + 1] - A.gstart[g] + GK_CHUNK - 1) / GK_CHUNK;
		Acc<NC>		acc;

		acc_init<NC>(acc, A.fmask);
		for (unsigned q = threadIdx.x; q < nch; q += GK_THREADS)
			acc = op(acc, ((const Acc<NC> *) A.parts)[(size_t) (c0 + q) * A.nf + f]);
		acc = BR(tmp).Reduce(acc, op);
		if (threadIdx.x == 0)
			((Acc<NC> *) A.out)[(size_t) g * A.nf + f] = acc;
		__syncthreads();
	}
}

/* ---------------- launches ---------------- */

static_assert(GBT_MAX_COLS == 4, "the launches below list a kernel per column count");
static_assert(sizeof(gbt_pred) % 8 == 0, "programs are copied a word at a time");

typedef void (*gk_kernel) (const GkArgs);

static unsigned
blocks_for(int64_t n)
{
	return (unsigned) ((n + GK_THREADS - 1) / GK_THREADS > 0 ? (n + GK_THREADS - 1) / GK_THREADS : 1);
}

size_t
gk_acc_bytes(int ncols)
{
	static const size_t bytes[GBT_MAX_COLS + 1] = {sizeof(Acc<0>), sizeof(Acc<1>),
	sizeof(Acc<2>), sizeof(Acc<3>), sizeof(Acc<4>)};

	return bytes[ncols];
}

cudaError_t
gk_launch_pass(int ncols, bool write, int64_t ntiles, cudaStream_t stream, const GkArgs &A)
{
	static const gk_kernel k[2][GBT_MAX_COLS] = {
		{k_gpass<1, false>, k_gpass<2, false>, k_gpass<3, false>, k_gpass<4, false>},
		{k_gpass<1, true>, k_gpass<2, true>, k_gpass<3, true>, k_gpass<4, true>}
	};

	k[write][ncols - 1] <<<(unsigned) ntiles, GK_THREADS, 0, stream>>> (A);
	return cudaGetLastError();
}

cudaError_t
gk_launch_sorted(cudaStream_t stream, const GkArgs &A)
{
	k_gsorted<<<blocks_for(A.ntake), GK_THREADS, 0, stream>>> (A);
	return cudaGetLastError();
}

cudaError_t
gk_group_ids(void *ws, size_t *wsz, cudaStream_t stream, const GkArgs &A)
{
	cudaError_t e;

	if (ws == NULL)
		return cub::DeviceScan::InclusiveSum(NULL, *wsz, A.head, A.gid, (int) A.ntake, stream);
	k_gheads<<<blocks_for(A.ntake), GK_THREADS, 0, stream>>> (A);
	if ((e = cudaGetLastError()) != cudaSuccess)
		return e;
	return cub::DeviceScan::InclusiveSum(ws, *wsz, A.head, A.gid, (int) A.ntake, stream);
}

cudaError_t
gk_launch_plan(cudaStream_t stream, const GkArgs &A)
{
	k_gstarts<<<blocks_for(A.ntake), GK_THREADS, 0, stream>>> (A);
	k_gplan<<<blocks_for(A.ngroups), GK_THREADS, 0, stream>>> (A);
	return cudaGetLastError();
}

cudaError_t
gk_launch_reduce(int ncols, int nsm, cudaStream_t stream, const GkArgs &A)
{
	static const gk_kernel ks[GBT_MAX_COLS] = {k_gsmall<1>, k_gsmall<2>, k_gsmall<3>, k_gsmall<4>};
	static const gk_kernel km[GBT_MAX_COLS] = {k_gmedium<1>, k_gmedium<2>, k_gmedium<3>, k_gmedium<4>};
	static const gk_kernel kc[GBT_MAX_COLS] = {k_gchunk<1>, k_gchunk<2>, k_gchunk<3>, k_gchunk<4>};
	static const gk_kernel kl[GBT_MAX_COLS] = {k_glarge<1>, k_glarge<2>, k_glarge<3>, k_glarge<4>};
	unsigned	wave = (unsigned) (nsm > 0 ? nsm : 1) * 8,
				gm = (A.max_medium + GK_WARPS - 1) / GK_WARPS,
				gc = A.max_chunks,
				gl = A.max_large;

	/* the classes' kernels loop over what there is: grids of a wave at most */
	gm = gm < wave ? gm : wave;
	gc = gc < wave ? gc : wave;
	gl = gl < wave ? gl : wave;
	ks[ncols - 1] <<<dim3(blocks_for(A.ngroups), A.nf), GK_THREADS, 0, stream>>> (A);
	km[ncols - 1] <<<dim3(gm > 0 ? gm : 1, A.nf), GK_THREADS, 0, stream>>> (A);
	kc[ncols - 1] <<<dim3(gc > 0 ? gc : 1, A.nf), GK_THREADS, 0, stream>>> (A);
	kl[ncols - 1] <<<dim3(gl > 0 ? gl : 1, A.nf), GK_THREADS, 0, stream>>> (A);
	return cudaGetLastError();
}

template <int NC>
static void
results_nc(unsigned fmask, const void *accs, int64_t count, gbt_agg_result *out)
{
	const Acc<NC> *a = (const Acc<NC> *) accs;

	for (int64_t i = 0; i < count; i++)
	{
		memset(&out[i], 0, sizeof(out[i]));
		acc_store<NC>(a[i], fmask, &out[i]);
	}
}

void
gk_results(int ncols, unsigned fmask, const void *accs, int64_t count, gbt_agg_result *out)
{
	switch (ncols)
	{
		case 1:
			results_nc<1>(fmask, accs, count, out);
			break;
		case 2:
			results_nc<2>(fmask, accs, count, out);
			break;
		case 3:
			results_nc<3>(fmask, accs, count, out);
			break;
		default:
			results_nc<4>(fmask, accs, count, out);
			break;
	}
}
