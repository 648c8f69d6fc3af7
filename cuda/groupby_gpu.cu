/*
 * groupby_gpu.cu
 *	  The grouped aggregate of groupby.h on the GPU: a vagg call's staged
 *	  inputs (vagg_gpu_begin(): ranges, visibility map, programs) and its
 *	  context's scratch buffers, grown to the largest call, with the kernels
 *	  of groupby_kernels.cu:
 *	  1. compaction pass 1: unsure entries listed, each tile's entries to
 *		 aggregate counted (NULL group apart), smallest and largest value;
 *	  2. the counts' prefix sums (cub::DeviceScan), copied back with the
 *		 totals (first wait);
 *	  3. pass 2: (value less the smallest, position) of each entry, in
 *		 order, the NULL group's positions apart;
 *	  4. unless the values are in order already (a keyed column read in
 *		 key order: second wait), cub::DeviceRadixSort by value, on the
 *		 bits in which the values differ;
 *	  5. the groups: heads and their scan (third wait: the number of
 *		 groups; no more work when they do not fit), each group's first
 *		 entry and value, the groups by size class, their results reduced
 *		 (a thread, a warp or chunks of blocks a group: skew-proof);
 *	  6. values and results back (in groupby_kernels.cu's compact form,
 *		 written out as engine.h's results on the host), and the unsure
 *		 positions.
 *	  Positions are held in 32 bits: the GPU groups mirrors of up to 2^32
 *	  entries, at most 2^31 of them to aggregate.
 */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <string.h>

#include "groupby.h"
#include "groupby_kernels.cuh"
#include "harmonia_keys.h"

/* the context's scratch slots (vagg_gpu_scratch()) */
enum
{
	S_COUNT, S_TILES, S_KEYS_A, S_KEYS_B, S_POS_A, S_POS_B, S_NULLPOS, S_IDS, S_GROUPS,
	S_OUT, S_PARTS, S_WS, S_UNSURE,
	S_HOST = 0,					/* pinned: counters back */
	S_HOST_OUT = 1				/* pinned: values and results back */
};

/* what the first wait brings back */
struct GkBack
{
	DevRes		res;			/* ucount and bad only */
	GkCount		cnt;
	unsigned	ntake,
				nnull,
				ngroups;
};

#define CK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
	(void) cudaGetLastError(); \
	rc = gbt_vagg_fail(err, errlen, "group by: %s failed: %s", #call, cudaGetErrorString(e_)); \
	goto out; } } while (0)

/* a scratch slot of at least bytes */
#define SCRATCH(slot, bytes, host, ptr) \
	CK(vagg_gpu_scratch(ctx, (slot), (size_t) (bytes) > 0 ? (size_t) (bytes) : 16, (host), \
						(void **) (ptr)))

/* in's columns, the call's inputs and the counters' buffers into A */
static void
args_from(GkArgs *A, const gbt_agg_input *in, const VaggCall *call, const gbt_pred_set *preds,
		  int gcol)
{
	int			c;

	memset(A, 0, sizeof(*A));
	A->blocks = in->blocks;
	A->removed = in->removed;
	A->nmask = in->narrow;
	for (c = 0; c < in->ncols; c++)
	{
		A->cols[c] = (const unsigned long long *) in->cols[c];
		A->nulls[c] = in->nulls[c];
		A->decode[c] = ((in->keyed >> c) & 1) ? HM_SIGN_BIT : 0;
		A->base[c] = (unsigned long long) in->base[c];
		if (in->coltype[c] == GBT_VAL_FLOAT8)
			A->fmask |= 1u << c;
	}
	A->n = in->n;
	A->gcol = gcol;
	A->where = preds->where != NULL;
	A->start = call->start;
	A->offs = call->offs;
	A->R = call->R;
	A->vis = call->vis;
	A->nvis = call->nvis;
	A->progs = call->progs;
	A->list = call->list;
	A->nf = preds->nfilters;
	A->res = call->d_res;
}

extern "C" int
gbt_vagg_grouped_gpu(gbt_vagg_gpu_ctx *ctx, const gbt_agg_input *in,
					 const int64_t *start, const int64_t *end, int64_t nranges,
					 const uint8_t *visible, int64_t nvisible, const gbt_pred_set *preds,
					 gbt_groups *g, int64_t *unsure, int64_t unsure_cap,
					 char *err, size_t errlen)
{
	gbt_pred	progs[1 + GBT_PRED_MAX_FILTERS];
	VaggFilter	filt;
	VaggCall	call;
	gbt_agg_result dummy;		/* begin checks a result: g's come later */
	GkArgs		A;
	GkBack	   *back = NULL;
	int			rc = 0,
				nf,
				dev = 0,
				nsm = 0;
	int64_t		ntiles,
				ucap,
				nunsure = 0,
				nitems;
	size_t		ws_need = 0,
				ws = 0,
				accb;
	void	   *d_ws;			/* CUB's workspace */
	cudaStream_t st;

	if (!in)
		return gbt_vagg_fail(err, errlen, "vagg: input or result is NULL");
	if (gbt_pred_set_check(preds, in->ncols, in->coltype, err, errlen) ||
		gbt_groups_check(in, g, err, errlen))
		return 1;
	if ((uint64_t) in->n > UINT32_MAX)
		return gbt_vagg_fail(err, errlen, "group by: %lld entries, the GPU groups up to 2^32",
							 (long long) in->n);
	vagg_filter_make(preds, progs, &filt);
	if (vagg_gpu_begin(ctx, in, start, end, nranges, visible, nvisible, &filt, &dummy,
					   unsure, unsure_cap, &call, err, errlen))
		return 1;
	g->ngroups = 0;
	g->has_null = 0;
	g->nunsure = 0;
	if (call.empty)
		goto out;
	st = call.stream;
	nf = preds->nfilters;
	args_from(&A, in, &call, preds, g->gcol);

	/* 1-2: pass 1 and the tiles' offsets, the totals back */
	ntiles = (call.tbound + GK_TILE - 1) / GK_TILE;
	if (ntiles < 1)
		ntiles = 1;				/* (a grid of none is an error) */
	ucap = unsure_cap < call.tbound ? unsure_cap : call.tbound;
	A.cap = ucap;
	SCRATCH(S_UNSURE, ucap * 8, false, &A.unsure);
	SCRATCH(S_COUNT, sizeof(GkCount), false, &A.cnt);
	SCRATCH(S_TILES, 4 * (ntiles + 1) * sizeof(unsigned), false, &A.tile_take);
	SCRATCH(S_HOST, sizeof(GkBack), true, &back);
	A.tile_null = A.tile_take + ntiles + 1;
	A.take_off = A.tile_null + ntiles + 1;
	A.null_off = A.take_off + ntiles + 1;
	A.unsorted = &A.cnt->unsorted;
	CK(cudaMemsetAsync(A.cnt, 0, sizeof(GkCount), st));
	CK(cudaMemsetAsync(&A.cnt->umin, 0xff, sizeof(A.cnt->umin), st));
	CK(cudaMemsetAsync(A.tile_take, 0, 2 * (ntiles + 1) * sizeof(unsigned), st));
	CK(gk_launch_pass(in->ncols, false, ntiles, st, A));
	CK(cub::DeviceScan::ExclusiveSum(NULL, ws_need, A.tile_take, A.take_off,
									 (int) (ntiles + 1), st));
	SCRATCH(S_WS, ws_need, false, &d_ws);
	ws = ws_need;
	CK(cub::DeviceScan::ExclusiveSum(d_ws, ws, A.tile_take, A.take_off, (int) (ntiles + 1), st));
	CK(cub::DeviceScan::ExclusiveSum(d_ws, ws, A.tile_null, A.null_off, (int) (ntiles + 1), st));
	CK(cudaMemcpyAsync(&back->res, call.d_res, offsetof(DevRes, done), cudaMemcpyDeviceToHost, st));
	CK(cudaMemcpyAsync(&back->cnt, A.cnt, sizeof(GkCount), cudaMemcpyDeviceToHost, st));
	CK(cudaMemcpyAsync(&back->ntake, A.take_off + ntiles, sizeof(unsigned),
					   cudaMemcpyDeviceToHost, st));
	CK(cudaMemcpyAsync(&back->nnull, A.null_off + ntiles, sizeof(unsigned),
					   cudaMemcpyDeviceToHost, st));
	CK(cudaStreamSynchronize(st));
	if (back->res.bad)
	{
		/* find the culprit for the message (host memory, error path) */
		if (gbt_vagg_check_args(in, start, end, nranges, visible, nvisible, &dummy, unsure,
								unsure_cap, 1, err, errlen) == 0)
			rc = gbt_vagg_fail(err, errlen, "vagg: bad ranges");
		else
			rc = 1;
		goto out;
	}
	nunsure = (int64_t) back->res.ucount;
	g->nunsure = nunsure;
	if (nunsure > 0 && ucap > 0)
		CK(cudaMemcpyAsync(unsure, A.unsure, (size_t) (nunsure < ucap ? nunsure : ucap) * 8,
						   cudaMemcpyDeviceToHost, st));
	A.ntake = back->ntake;
	A.nnull = back->nnull;
	A.umin = back->cnt.umin;
	nitems = A.ntake + A.nnull;
	if (A.ntake > INT32_MAX)
	{
		rc = gbt_vagg_fail(err, errlen, "group by: %lld entries to aggregate, the GPU sorts up to 2^31",
						   (long long) A.ntake);
		goto out;
	}
	if (nitems == 0)
		goto done;

	/* 3: pass 2 */
	SCRATCH(S_KEYS_A, A.ntake * 8, false, &A.keys);
	SCRATCH(S_POS_A, nitems * 4, false, &A.pos);
	SCRATCH(S_NULLPOS, A.nnull * 4, false, &A.nullpos);
	CK(gk_launch_pass(in->ncols, true, ntiles, st, A));

	/* 4: sorted by value unless in order already */
	if (A.ntake > 1 && back->cnt.umax > back->cnt.umin)
	{
		CK(gk_launch_sorted(st, A));
		CK(cudaMemcpyAsync(&back->cnt.unsorted, &A.cnt->unsorted, sizeof(unsigned),
						   cudaMemcpyDeviceToHost, st));
		CK(cudaStreamSynchronize(st));
		if (back->cnt.unsorted)
		{
			unsigned long long *keys_b;
			unsigned   *pos_b;
			int			end_bit = 64 - __builtin_clzll(back->cnt.umax - back->cnt.umin);

			SCRATCH(S_KEYS_B, A.ntake * 8, false, &keys_b);
			SCRATCH(S_POS_B, nitems * 4, false, &pos_b);
			{
				cub::DoubleBuffer<unsigned long long> dk(A.keys, keys_b);
				cub::DoubleBuffer<unsigned> dv(A.pos, pos_b);

				CK(cub::DeviceRadixSort::SortPairs(NULL, ws_need, dk, dv, (int) A.ntake, 0,
												   end_bit, st));
				SCRATCH(S_WS, ws_need, false, &d_ws);
				ws = ws_need;
				CK(cub::DeviceRadixSort::SortPairs(d_ws, ws, dk, dv, (int) A.ntake, 0,
												   end_bit, st));
				A.keys = dk.Current();
				A.pos = dv.Current();
			}
		}
	}
	if (A.nnull > 0)
		CK(cudaMemcpyAsync(A.pos + A.ntake, A.nullpos, A.nnull * 4, cudaMemcpyDeviceToDevice,
						   st));

	/* 5: the groups, and whether they fit */
	back->ngroups = 0;
	if (A.ntake > 0)
	{
		SCRATCH(S_IDS, A.ntake * 8, false, &A.head);
		A.gid = A.head + A.ntake;
		CK(gk_group_ids(NULL, &ws_need, st, A));
		SCRATCH(S_WS, ws_need, false, &d_ws);
		ws = ws_need;
		CK(gk_group_ids(d_ws, &ws, st, A));
		CK(cudaMemcpyAsync(&back->ngroups, A.gid + A.ntake - 1, sizeof(unsigned),
						   cudaMemcpyDeviceToHost, st));
		CK(cudaStreamSynchronize(st));
	}
	A.ngroups = back->ngroups + (A.nnull > 0);
	g->ngroups = A.ngroups;
	g->has_null = A.nnull > 0;
	if (A.ngroups > g->cap)
		goto done;
	A.max_medium = (unsigned) (nitems / (GK_SMALL + 1) + 1);
	A.max_large = (unsigned) (nitems / (GK_MEDIUM + 1) + 1);
	A.max_chunks = (unsigned) (nitems / GK_CHUNK + A.max_large + 1);
	{
		/* values, chunks, then the 32-bit arrays */
		size_t		vb = (size_t) A.ngroups * 8,
					cb = (size_t) A.max_chunks * sizeof(GkChunk),
					ub = ((size_t) A.ngroups + 1 + A.max_medium + 2 * (size_t) A.max_large) * 4;
		char	   *p;

		SCRATCH(S_GROUPS, vb + cb + ub, false, &p);
		A.values = (long long *) p;
		A.chunks = (GkChunk *) (p + vb);
		A.gstart = (unsigned *) (p + vb + cb);
		A.medium = A.gstart + A.ngroups + 1;
		A.large = A.medium + A.max_medium;
		A.lchunk = A.large + A.max_large;
	}
	accb = gk_acc_bytes(in->ncols);
	SCRATCH(S_OUT, (size_t) A.ngroups * nf * accb, false, &A.out);
	SCRATCH(S_PARTS, (size_t) A.max_chunks * nf * accb, false, &A.parts);
	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev));
	CK(gk_launch_plan(st, A));
	CK(gk_launch_reduce(in->ncols, nsm, st, A));

	/* 6: values and results back */
	{
		size_t		vb = ((size_t) A.ngroups * 8 + 15) & ~(size_t) 15;
		char	   *h;

		SCRATCH(S_HOST_OUT, vb + (size_t) A.ngroups * nf * accb, true, &h);
		CK(cudaMemcpyAsync(h, A.values, (size_t) A.ngroups * 8, cudaMemcpyDeviceToHost, st));
		CK(cudaMemcpyAsync(h + vb, A.out, (size_t) A.ngroups * nf * accb,
						   cudaMemcpyDeviceToHost, st));
		CK(cudaStreamSynchronize(st));
		memcpy(g->values, h, (size_t) A.ngroups * 8);
		gk_results(in->ncols, A.fmask, h + vb, A.ngroups * nf, g->out);
	}
done:
	CK(cudaStreamSynchronize(st));	/* the unsure positions */
out:
	vagg_gpu_end(ctx, &call);
	return rc;
}
