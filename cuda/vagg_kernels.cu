/*
 * vagg_kernels.cu
 *	  The GPU kernels of vagg_gpu.cu: range lengths, and the aggregate of
 *	  visible entries over flattened ranges (accumulators: vagg_acc.cuh).
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
 * into per-thread accumulators (vagg_acc.cuh: 128-bit int sums with carry,
 * double-double float sums with TwoSum, PostgreSQL-ordered min/max with
 * their ties), unsure ones are appended to a per-warp shared-memory buffer (ballot +
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
#include "vagg_acc.cuh"
#include "vagg_kernels.cuh"

#ifndef VMINB
#define VMINB 1					/* __launch_bounds__ min blocks per SM */
#endif
#define FULL 0xffffffffu

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
				unsigned long long v1[NC > 0 ? NC : 1];
				unsigned	n1[NC > 0 ? NC : 1];

				blk[k] = __ldg(A.blocks + p);
				rm[k] = A.removed ? (__ldg(A.removed + (p >> 3)) >> (p & 7)) & 1 : 0;
				acc_load_entry<NC>(A, p, v1, n1);
#pragma unroll
				for (int c = 0; c < NC; c++)
				{
					val[c][k] = v1[c];
					nb[c][k] = n1[c];
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
				unsigned long long v1[NC > 0 ? NC : 1];
				unsigned	n1[NC > 0 ? NC : 1];

#pragma unroll
				for (int c = 0; c < NC; c++)
				{
					v1[c] = val[c][k];
					n1[c] = nb[c][k];
				}
				acc_add_entry<NC>(acc, A.fmask, v1, n1);
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
			acc_store<NC>(agg, A.fmask, &A.res->r[row]);
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
