/*
 * vagg_batch.cu
 *	  Many aggregates over one mirror's device arrays in one launch
 *	  (vagg.h: gbt_vagg_batch_gpu()), for a round of the service's requests.
 *
 * Each query's ranges are flattened as k_vagg()'s are (vagg_kernels.cu),
 * its offs[] its own prefix sums, computed on the host with the checks;
 * the queries' descriptors, offs, starts and visibility bitmaps (each
 * distinct bitmap once: with trusted stamps every query has the mirror's)
 * are staged in pinned memory and copied in one transfer.  The grid is
 * cut among the queries by their entries, at least a block each, about
 * one wave in all; a block finds its query by bisection over the queries'
 * first blocks, takes its chunks as k_vagg() does, and the last block of a
 * query to finish combines its blocks' partials into the query's result.
 * Unsure positions go to each query's own part of one buffer.  Results
 * come back in one copy, then each query's unsure positions where any.
 */
#include <cub/block/block_reduce.cuh>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harmonia_keys.h"
#include "vagg.h"
#include "vagg_acc.cuh"
#include "vagg_kernels.cuh"

#ifndef VMINB
#define VMINB 1
#endif
#define FULL 0xffffffffu

/* A query on the device. */
struct BItem
{
	long long	rbase;			/* its starts: start[rbase, rbase + R) */
	long long	obase;			/* its offs: offs[obase, obase + R] */
	long long	R;
	long long	T;				/* entries in its ranges */
	long long	vbase;			/* its visibility bitmap: vis + vbase */
	long long	nvis;
	long long	ubase;			/* its unsure positions: unsure + ubase */
	long long	cap;
	unsigned	cols;			/* bit c: column c asked for */
	unsigned	first;			/* its blocks: [first, first + nblocks) */
	unsigned	nblocks;
	unsigned	pad;
};

/* A query's result on the device (zeroed before the launch). */
struct BRes
{
	unsigned long long ucount;
	unsigned int done;
	unsigned int pad;
	gbt_agg_result r;
};

/* The launch's arguments: the column fields as KArgs has them. */
struct KBArgs
{
	const uint32_t *blocks;
	const uint8_t *removed;
	const unsigned long long *cols[GBT_MAX_COLS];
	const uint8_t *nulls[GBT_MAX_COLS];
	unsigned	fmask;
	unsigned long long decode[GBT_MAX_COLS];
	unsigned	nmask;
	unsigned long long base[GBT_MAX_COLS];
	int64_t		n;
	const BItem *items;
	int64_t		nitems;
	const long long *offs;
	const long long *start;
	const uint8_t *vis;
	long long  *unsure;
	void	   *partials;		/* one per block */
	BRes	   *res;
};

/* A warp's n buffered unsure positions appended to its query's. */
static __device__ __forceinline__ void
flush_item_unsure(const KBArgs &A, const BItem &it, BRes *res, const long long *buf,
				  int n, int lane)
{
	unsigned long long base = 0;

	__syncwarp();
	if (lane == 0)
		base = atomicAdd(&res->ucount, (unsigned long long) n);
	base = __shfl_sync(FULL, base, 0);
	if (it.cap > 0 && base < (unsigned long long) it.cap)
		for (int i = lane; i < n; i += 32)
			if (base + i < (unsigned long long) it.cap)
				A.unsure[it.ubase + base + i] = buf[i];
}

template <int NC>
static __global__ void
__launch_bounds__(VBLK, VMINB)
k_vagg_batch(const __grid_constant__ KBArgs A)
{
	typedef cub::BlockReduce<Acc<NC>, VBLK, cub::BLOCK_REDUCE_WARP_REDUCTIONS> BR;
	__shared__ typename BR::TempStorage tmp;
	__shared__ long long ubuf[WPB][2 * VCH];
	__shared__ int last;
	const int	lane = threadIdx.x & 31,
				w = threadIdx.x >> 5;
	const unsigned lt_mask = (1u << lane) - 1;
	const AccOp<NC> op = {A.fmask};
	int64_t		lo = 0,
				hi = A.nitems;
	Acc<NC>		acc;
	int			ucnt = 0;
	int64_t		r = 0,
				nchunks,
				ch;

	/* this block's query: the last whose first block is at most ours */
	while (hi - lo > 1)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (A.items[mid].first <= blockIdx.x)
			lo = mid;
		else
			hi = mid;
	}
	const BItem it = A.items[lo];
	BRes	   *res = &A.res[lo];
	const long long *offs = A.offs + it.obase;
	const long long *start = A.start + it.rbase;
	const uint8_t *vis = A.vis + it.vbase;
	const unsigned lb = blockIdx.x - it.first;

	acc_init<NC>(acc, A.fmask);
	nchunks = (it.T + VCH - 1) / VCH;
	for (ch = (int64_t) lb * WPB + w; ch < nchunks; ch += (int64_t) it.nblocks * WPB)
	{
		long long	pos[VK];
		unsigned	blk[VK],
					rm[VK],
					nb[NC > 0 ? NC : 1][VK];
		unsigned long long val[NC > 0 ? NC : 1][VK];
		bool		v[VK];

#pragma unroll
		for (int k = 0; k < VK; k++)
		{
			long long	t = ch * VCH + k * 32 + lane;

			pos[k] = -1;
			if (t < it.T)
			{
				r = seek(offs, it.R, t, r);
				pos[k] = __ldg(start + r) + (t - __ldg(offs + r));
			}
		}
#pragma unroll
		for (int k = 0; k < VK; k++)
		{
			blk[k] = 0;
			rm[k] = 1;
#pragma unroll
			for (int c = 0; c < NC; c++)
			{
				val[c][k] = 0;
				nb[c][k] = 1;
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
					/* a column not asked for counts as NULL: zero fields */
					nb[c][k] = n1[c] | !((it.cols >> c) & 1);
				}
			}
		}
#pragma unroll
		for (int k = 0; k < VK; k++)
		{
			unsigned	b = blk[k];

			v[k] = !rm[k] && (int64_t) b < it.nvis && ((__ldg(vis + (b >> 3)) >> (b & 7)) & 1);
		}
#pragma unroll
		for (int k = 0; k < VK; k++)
		{
			bool		uns = !rm[k] && !v[k];
			unsigned	m = __ballot_sync(FULL, uns);

			if (m)
			{
				if (uns && it.cap > 0)
					ubuf[w][ucnt + __popc(m & lt_mask)] = pos[k];
				ucnt += __popc(m);
			}
			if (v[k])
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
		if (ucnt >= VCH)
		{
			flush_item_unsure(A, it, res, ubuf[w], ucnt, lane);
			__syncwarp();
			ucnt = 0;
		}
	}
	if (ucnt > 0)
		flush_item_unsure(A, it, res, ubuf[w], ucnt, lane);

	/* the block's partial, then the query's last block combines them */
	{
		Acc<NC>		agg = BR(tmp).Reduce(acc, op);
		Acc<NC>    *parts = (Acc<NC> *) A.partials;

		if (threadIdx.x == 0)
		{
			parts[blockIdx.x] = agg;
			__threadfence();
			last = atomicAdd(&res->done, 1u) == it.nblocks - 1;
		}
		__syncthreads();
		if (!last)
			return;
		__threadfence();
		acc_init<NC>(acc, A.fmask);
		for (unsigned i = threadIdx.x; i < it.nblocks; i += VBLK)
		{
			Acc<NC>		p;
			const unsigned long long *src =
				(const unsigned long long *) (parts + it.first + i);
			unsigned long long *dst = (unsigned long long *) &p;

			for (unsigned j = 0; j < sizeof(Acc<NC>) / 8; j++)
				dst[j] = __ldcg(src + j);
			acc = op(acc, p);
		}
		__syncthreads();
		agg = BR(tmp).Reduce(acc, op);
		if (threadIdx.x == 0)
			acc_store<NC>(agg, A.fmask, &res->r);
	}
}

typedef void (*vagg_batch_kernel) (const KBArgs);
static const vagg_batch_kernel k_batch_nc[GBT_MAX_COLS + 1] = {
	k_vagg_batch<0>, k_vagg_batch<1>, k_vagg_batch<2>, k_vagg_batch<3>, k_vagg_batch<4>
};

static_assert(GBT_MAX_COLS == 4, "k_batch_nc[] lists a kernel per column count");
static_assert(sizeof(BItem) % 8 == 0, "staged items stay aligned");

/* Every query still without an answer fails with err's message. */
static int
fail_all(gbt_vagg_query *q, int64_t n, const char *msg)
{
	int			failed = 0;

	for (int64_t i = 0; i < n; i++)
		if (q[i].rc == 0)
		{
			q[i].rc = 1;
			snprintf(q[i].err, sizeof(q[i].err), "%s", msg);
		}
	for (int64_t i = 0; i < n; i++)
		failed += q[i].rc != 0;
	return failed;
}

/* scratch slots of the context this file takes (vagg_gpu_scratch()) */
enum
{
	SLOT_STAGE_H, SLOT_STAGE_D, SLOT_RES_H, SLOT_RES_D, SLOT_UNSURE, SLOT_PARTS,
	SLOT_HOST_IDX
};

extern "C" int
gbt_vagg_batch_gpu(gbt_vagg_gpu_ctx *x, const gbt_agg_input *in, gbt_vagg_query *q,
				   int64_t n)
{
	char		msg[GBT_ITEM_ERRLEN] = "";
	char	   *err = msg;
	size_t		errlen = sizeof(msg);
	cudaStream_t stream;
	int			wave = 1;
	int64_t		m = 0;			/* queries with entries: staged */
	int64_t		i;
	int64_t		nr = 0,
				totalT = 0,
				ucap = 0,
				blocks = 0;
	size_t		visbytes = 0,
				stage,
				off_offs,
				off_start,
				off_vis;
	int64_t    *idx = NULL;		/* staged item -> query */
	int64_t    *vfrom = NULL;	/* query -> its bitmap's offset, */
	char	   *vown = NULL;	/* and whether it stages it */
	int64_t    *tcount = NULL;	/* query -> its entries */
	char	   *h_stage = NULL,
			   *d_stage = NULL;
	BRes	   *h_res = NULL,
			   *d_res = NULL;
	long long  *d_unsure = NULL;
	void	   *d_parts = NULL;
	BItem	   *items;
	KBArgs		a;
	int			rc = 0;
	int			c;
	cudaError_t e;

#define BCK(call) do { e = (call); if (e != cudaSuccess) { \
	(void) cudaGetLastError(); \
	snprintf(msg, sizeof(msg), "vagg batch: %s", cudaGetErrorString(e)); \
	rc = 1; goto out; } } while (0)

	for (i = 0; i < n; i++)
	{
		q[i].rc = 0;
		q[i].err[0] = '\0';
	}
	if (in->ncols < 0 || in->ncols > GBT_MAX_COLS || (in->n > 0 && in->blocks == NULL))
		return fail_all(q, n, "vagg batch: bad input");
	if (vagg_gpu_ready(x, in->ncols, &stream, &wave, err, errlen) != 0)
		return fail_all(q, n, msg);
	idx = (int64_t *) malloc(sizeof(int64_t) * (n > 0 ? n : 1));
	vfrom = (int64_t *) malloc(sizeof(int64_t) * (n > 0 ? n : 1));
	tcount = (int64_t *) malloc(sizeof(int64_t) * (n > 0 ? n : 1));
	vown = (char *) calloc(n > 0 ? n : 1, 1);
	if (idx == NULL || vfrom == NULL || tcount == NULL || vown == NULL)
	{
		free(idx);
		free(vfrom);
		free(tcount);
		free(vown);
		return fail_all(q, n, "vagg batch: out of host memory");
	}

	/* each query checked and sized on the host; empty ones answered here */
	for (i = 0; i < n; i++)
	{
		gbt_vagg_query *s = &q[i];
		int64_t		T = 0;
		int64_t		r;

		memset(s->out, 0, sizeof(gbt_agg_result));
		if (s->nranges < 0 || s->nvisible < 0 || s->unsure_cap < 0 ||
			(s->nranges > 0 && (s->start == NULL || s->end == NULL)) ||
			(s->nvisible > 0 && s->visible == NULL) ||
			(s->unsure_cap > 0 && s->unsure == NULL))
		{
			s->rc = gbt_vagg_fail(s->err, sizeof(s->err), "vagg batch: bad arguments");
			continue;
		}
		for (r = 0; r < s->nranges && s->rc == 0; r++)
		{
			if (s->start[r] < 0 || s->start[r] > s->end[r] || s->end[r] > in->n)
				s->rc = gbt_vagg_fail(s->err, sizeof(s->err),
									  "vagg: range %lld [%lld, %lld) out of [0, %lld]",
									  (long long) r, (long long) s->start[r],
									  (long long) s->end[r], (long long) in->n);
			else
				T += s->end[r] - s->start[r];
		}
		if (s->rc == 0 && T > in->n)
			s->rc = gbt_vagg_fail(s->err, sizeof(s->err),
								  "vagg: ranges cover %lld positions, more than %lld",
								  (long long) T, (long long) in->n);
		if (s->rc != 0 || T == 0)
			continue;
		/* a bitmap staged once for every query that has it */
		vfrom[i] = -1;
		for (int64_t j = 0; j < m; j++)
			if (q[idx[j]].visible == s->visible && q[idx[j]].nvisible >= s->nvisible)
			{
				vfrom[i] = vfrom[idx[j]];
				break;
			}
		if (vfrom[i] < 0)
		{
			vown[i] = 1;
			vfrom[i] = (int64_t) visbytes;
			visbytes += ((size_t) (s->nvisible + 7) / 8 + 7) & ~(size_t) 7;
		}
		idx[m++] = i;
		nr += s->nranges;
		totalT += T;
		ucap += s->unsure_cap < T ? s->unsure_cap : T;
		tcount[i] = T;
	}
	if (m == 0)
		goto out;

	off_offs = sizeof(BItem) * m;
	off_start = off_offs + sizeof(long long) * (nr + m);
	off_vis = off_start + sizeof(long long) * nr;
	stage = off_vis + visbytes;
	BCK(vagg_gpu_scratch(x, SLOT_STAGE_H, stage, true, (void **) &h_stage));
	BCK(vagg_gpu_scratch(x, SLOT_STAGE_D, stage, false, (void **) &d_stage));
	BCK(vagg_gpu_scratch(x, SLOT_RES_H, sizeof(BRes) * m, true, (void **) &h_res));
	BCK(vagg_gpu_scratch(x, SLOT_RES_D, sizeof(BRes) * m, false, (void **) &d_res));
	BCK(vagg_gpu_scratch(x, SLOT_UNSURE, sizeof(long long) * (ucap > 0 ? ucap : 1), false,
						 (void **) &d_unsure));

	/* the staging: descriptors, offs, starts, bitmaps; blocks by entries */
	items = (BItem *) h_stage;
	{
		long long  *h_offs = (long long *) (h_stage + off_offs);
		long long  *h_start = (long long *) (h_stage + off_start);
		int64_t		rb = 0,
					ob = 0,
					ub = 0;

		for (int64_t j = 0; j < m; j++)
		{
			gbt_vagg_query *s = &q[idx[j]];
			BItem	   *b = &items[j];
			int64_t		T = tcount[idx[j]];
			int64_t		chunks = (T + VCH - 1) / VCH;
			int64_t		nb = (int64_t) ((double) wave * T / totalT);
			long long	acc = 0;

			if (nb > (chunks + WPB - 1) / WPB)
				nb = (chunks + WPB - 1) / WPB;
			if (nb < 1)
				nb = 1;
			memset(b, 0, sizeof(*b));
			b->rbase = rb;
			b->obase = ob;
			b->R = s->nranges;
			b->T = T;
			b->vbase = vfrom[idx[j]];
			b->nvis = s->nvisible;
			b->ubase = ub;
			b->cap = s->unsure_cap < T ? s->unsure_cap : T;
			b->cols = s->cols;
			b->first = (unsigned) blocks;
			b->nblocks = (unsigned) nb;
			for (int64_t r = 0; r < s->nranges; r++)
			{
				h_offs[ob + r] = acc;
				h_start[rb + r] = s->start[r];
				acc += s->end[r] - s->start[r];
			}
			h_offs[ob + s->nranges] = acc;
			if (vown[idx[j]] && s->nvisible > 0)
				memcpy(h_stage + off_vis + b->vbase, s->visible, (size_t) (s->nvisible + 7) / 8);
			rb += s->nranges;
			ob += s->nranges + 1;
			ub += b->cap;
			blocks += nb;
		}
	}
	BCK(vagg_gpu_scratch(x, SLOT_PARTS, vagg_partial_bytes() * blocks, false, &d_parts));

	memset(&a, 0, sizeof(a));
	a.blocks = in->blocks;
	a.removed = in->removed;
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
	a.items = (const BItem *) d_stage;
	a.nitems = m;
	a.offs = (const long long *) (d_stage + off_offs);
	a.start = (const long long *) (d_stage + off_start);
	a.vis = (const uint8_t *) (d_stage + off_vis);
	a.unsure = d_unsure;
	a.partials = d_parts;
	a.res = d_res;

	BCK(cudaMemsetAsync(d_res, 0, sizeof(BRes) * m, stream));
	BCK(cudaMemcpyAsync(d_stage, h_stage, stage, cudaMemcpyHostToDevice, stream));
	k_batch_nc[in->ncols] <<<(unsigned) blocks, VBLK, 0, stream>>> (a);
	BCK(cudaGetLastError());
	BCK(cudaMemcpyAsync(h_res, d_res, sizeof(BRes) * m, cudaMemcpyDeviceToHost, stream));
	BCK(cudaStreamSynchronize(stream));
	for (int64_t j = 0; j < m; j++)
	{
		gbt_vagg_query *s = &q[idx[j]];
		int64_t		got = (int64_t) h_res[j].ucount;
		int64_t		nget = got < items[j].cap ? got : items[j].cap;

		*s->out = h_res[j].r;
		s->out->nunsure = got;
		if (nget > 0)
			BCK(cudaMemcpyAsync(s->unsure, d_unsure + items[j].ubase, sizeof(long long) * nget,
								cudaMemcpyDeviceToHost, stream));
	}
	BCK(cudaStreamSynchronize(stream));
out:
	free(idx);
	free(vfrom);
	free(tcount);
	free(vown);
	if (rc != 0)
		return fail_all(q, n, msg);
	rc = 0;
	for (i = 0; i < n; i++)
		rc += q[i].rc != 0;
	return rc;
#undef BCK
}
