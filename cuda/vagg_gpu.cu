/*
 * vagg_gpu.cu
 *	  The GPU implementation of vagg.h (engine.h's aggregate contract): its
 *	  context, and one call's staging, launches and results.  The kernels are
 *	  in vagg_kernels.cu.
 *
 * Ranges are flattened: offs[] is the exclusive prefix sum of the range
 * lengths, on the host for up to VAGG_HOST_RANGES ranges (staged in pinned
 * memory with the start positions and the visibility bitmap, and copied in
 * one transfer), else on the device with cub::DeviceScan over the lengths
 * that a small kernel computes.  One kernel then aggregates every range
 * (vagg_kernels.cu), so a query is one memset, at most two kernels (+ the
 * scan), one copy each way plus the unsure positions.  A filtered
 * aggregate (predicate_gpu.cu) is one such query whose staging carries its
 * programs and constant list too.  The staging is vagg_gpu_begin(), which
 * the grouped aggregate (groupby_gpu.cu) takes too, with the context's
 * scratch slots (vagg_gpu_scratch()) for its own buffers.
 */
#include <cub/device/device_scan.cuh>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harmonia_keys.h"
#include "vagg.h"
#include "vagg_kernels.cuh"

#define VAGG_HOST_RANGES 16384	/* up to this many ranges: prefix sum on host */

struct gbt_vagg_gpu_ctx
{
	int			ready;
	int			dev;
	int			nsm;
	int			occ[2][GBT_MAX_COLS + 1];	/* resident blocks per SM, by
											 * filtered and NC */
	cudaStream_t stream;
	cudaEvent_t ev[4];
	int			timing;
	int			have_times;
	gbt_vagg_gpu_times times;
	char	   *h_stage;		/* pinned: offs/start (small path), visible,
								 * programs and list (filtered) */
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
	void	   *d_extra[VAGG_SCRATCH_SLOTS];	/* vagg_gpu_scratch(): device */
	size_t		d_extra_sz[VAGG_SCRATCH_SLOTS];
	void	   *h_extra[VAGG_SCRATCH_SLOTS];	/* and pinned host */
	size_t		h_extra_sz[VAGG_SCRATCH_SLOTS];
};

#define CK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
	(void) cudaGetLastError(); \
	rc = gbt_vagg_fail(err, errlen, "vagg: %s failed: %s", #call, cudaGetErrorString(e_)); \
	goto out; } } while (0)

double
gbt_vagg_now_ms(void)
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
	size_t		extra = 0;
	int			k;

	for (k = 0; k < VAGG_SCRATCH_SLOTS; k++)
		extra += x->d_extra_sz[k] + x->h_extra_sz[k];
	return x->h_stage_sz + x->d_stage_sz + 4 * sizeof(long long) * x->d_ranges_sz +
		x->d_ws_sz + x->d_unsure_sz + x->d_parts_sz * vagg_partial_bytes() +
		2 * sizeof(DevRes) + extra;
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
		for (i = 0; i < VAGG_SCRATCH_SLOTS; i++)
		{
			cudaFree(x->d_extra[i]);
			cudaFreeHost(x->h_extra[i]);
		}
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
	for (i = 0; i < 2 * (GBT_MAX_COLS + 1); i++)
	{
		int		   *occ = &x->occ[i / (GBT_MAX_COLS + 1)][i % (GBT_MAX_COLS + 1)];

		CK(vagg_occupancy(i % (GBT_MAX_COLS + 1), i >= GBT_MAX_COLS + 1, occ));
		if (*occ < 1)
			*occ = 1;
		if (*occ > maxocc)
			maxocc = *occ;
	}
	CK(cudaStreamCreate(&x->stream));
	for (i = 0; i < 4; i++)
		CK(cudaEventCreate(&x->ev[i]));
	x->d_parts_sz = (size_t) maxocc * x->nsm;
	CK(cudaMalloc(&x->d_parts, x->d_parts_sz * vagg_partial_bytes()));
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
	return vagg_gpu_query(x, in, start, end, nranges, visible, nvisible, NULL, out,
						  unsure, unsure_cap, err, errlen);
}

/*
 * vagg_kernels.cuh: a call's arguments checked (against out, unsure and
 * unsure_cap), its context ready and its device current, and its inputs
 * on the device.
 */
int
vagg_gpu_begin(gbt_vagg_gpu_ctx *x, const gbt_agg_input *in,
			   const int64_t *start, const int64_t *end, int64_t nranges,
			   const uint8_t *visible, int64_t nvisible, const VaggFilter *filt,
			   gbt_agg_result *out, int64_t *unsure, int64_t unsure_cap,
			   VaggCall *call, char *err, size_t errlen)
{
	int			rc = 0,
				small = nranges <= VAGG_HOST_RANGES,
				rows = filt ? filt->nfilters : 1;
	int64_t		r;
	size_t		visbytes,
				stage,
				off_vis,
				off_prog = 0,
				off_list = 0;
	long long  *h_offs,
			   *h_start;
	const long long *given_start = x ? x->given_start : NULL;
	const long long *given_end = x ? x->given_end : NULL;

	memset(call, 0, sizeof(*call));
	call->t0 = gbt_vagg_now_ms();
	call->cur = -1;
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
	if (cudaGetDevice(&call->cur) != cudaSuccess)
	{
		(void) cudaGetLastError();
		call->cur = -1;
	}
	if (call->cur != x->dev)
	{
		CK(cudaSetDevice(x->dev));
		call->switched = 1;
	}

	/*
	 * stage the small inputs in pinned memory: [offs R+1][start R] visible,
	 * then a filtered query's programs and list (16-byte aligned)
	 */
	visbytes = (size_t) ((nvisible + 7) / 8);
	stage = small ? (size_t) (2 * nranges + 1) * 8 : 0;
	off_vis = stage;
	stage += visbytes;
	if (filt)
	{
		off_prog = (stage + 15) & ~(size_t) 15;
		off_list = off_prog + (size_t) (1 + rows) * sizeof(gbt_pred);
		stage = off_list + (size_t) filt->nlist * sizeof(gbt_pred_value);
	}
	CK(grow((void **) &x->h_stage, &x->h_stage_sz, stage, true));
	CK(grow((void **) &x->d_stage, &x->d_stage_sz, stage, false));
	call->tbound = in->n;
	if (small)
	{
		h_offs = (long long *) x->h_stage;
		h_start = h_offs + nranges + 1;
		call->tbound = 0;
		for (r = 0; r < nranges; r++)
		{
			h_offs[r] = call->tbound;
			h_start[r] = start[r];
			call->tbound += end[r] - start[r];
		}
		h_offs[nranges] = call->tbound;
		if (call->tbound == 0)
		{
			/* nothing to read: no GPU work */
			call->empty = true;
			goto out;
		}
	}
	if (visbytes > 0)
		memcpy(x->h_stage + off_vis, visible, visbytes);
	if (filt)
	{
		memcpy(x->h_stage + off_prog, filt->progs, (size_t) (1 + rows) * sizeof(gbt_pred));
		if (filt->nlist > 0)
			memcpy(x->h_stage + off_list, filt->list,
				   (size_t) filt->nlist * sizeof(gbt_pred_value));
	}

	if (x->timing)
		CK(cudaEventRecord(x->ev[0], x->stream));
	CK(cudaMemsetAsync(x->d_res, 0, DEVRES_BYTES(rows), x->stream));
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

		CK(vagg_launch_lengths(given_start, given_end, nranges, in->n, x->d_len, x->d_res,
							   x->stream));
		CK(cub::DeviceScan::ExclusiveSum(NULL, ws, x->d_len, x->d_offs, nranges + 1, x->stream));
		CK(grow(&x->d_ws, &x->d_ws_sz, ws, false));
		CK(cub::DeviceScan::ExclusiveSum(x->d_ws, ws, x->d_len, x->d_offs, nranges + 1, x->stream));
	}
	call->stream = x->stream;
	call->R = nranges;
	if (small)
	{
		call->offs = (const long long *) x->d_stage;
		call->start = call->offs + nranges + 1;
	}
	else
	{
		call->offs = x->d_offs;
		call->start = given_start;
	}
	call->vis = (const uint8_t *) x->d_stage + off_vis;
	call->nvis = nvisible;
	if (filt)
	{
		call->progs = (const gbt_pred *) (x->d_stage + off_prog);
		call->list = (const gbt_pred_value *) (x->d_stage + off_list);
	}
	call->d_res = x->d_res;
	call->h_res = x->h_res;
out:
	if (rc)
		vagg_gpu_end(x, call);
	return rc;
}

/* vagg_kernels.cuh: the device that was current before vagg_gpu_begin() */
void
vagg_gpu_end(gbt_vagg_gpu_ctx *x, VaggCall *call)
{
	(void) x;
	if (call->switched && call->cur >= 0)
		(void) cudaSetDevice(call->cur);
	call->switched = 0;
}

/* vagg_kernels.cuh: x ready on the current device, its stream, one wave */
int
vagg_gpu_ready(gbt_vagg_gpu_ctx *x, int ncols, cudaStream_t *stream, int *wave,
			   char *err, size_t errlen)
{
	int			cur = -1;

	if (!x)
		return gbt_vagg_fail(err, errlen, "vagg: no GPU context");
	if (!x->ready && ctx_init(x, err, errlen))
		return 1;
	if (cudaGetDevice(&cur) != cudaSuccess || cur != x->dev)
	{
		(void) cudaGetLastError();
		return gbt_vagg_fail(err, errlen, "vagg: the context is of device %d, not %d",
							 x->dev, cur);
	}
	*stream = x->stream;
	*wave = x->occ[0][ncols] * x->nsm;
	return 0;
}

/* vagg_kernels.cuh: scratch slot k of x, grown to bytes */
cudaError_t
vagg_gpu_scratch(gbt_vagg_gpu_ctx *x, int k, size_t bytes, bool host, void **p)
{
	cudaError_t e = host ?
		grow(&x->h_extra[k], &x->h_extra_sz[k], bytes, true) :
		grow(&x->d_extra[k], &x->d_extra_sz[k], bytes, false);

	*p = host ? x->h_extra[k] : x->d_extra[k];
	return e;
}

/* vagg_kernels.cuh: a query, filtered or not */
int
vagg_gpu_query(gbt_vagg_gpu_ctx *x, const gbt_agg_input *in,
			   const int64_t *start, const int64_t *end, int64_t nranges,
			   const uint8_t *visible, int64_t nvisible, const VaggFilter *filt,
			   gbt_agg_result *out, int64_t *unsure, int64_t unsure_cap,
			   char *err, size_t errlen)
{
	int			rc,
				c,
				rows = filt ? filt->nfilters : 1;
	int64_t		nunsure,
				nget;
	KArgs		a;
	unsigned	grid;
	int64_t		nchunks;
	VaggCall	call;

	rc = vagg_gpu_begin(x, in, start, end, nranges, visible, nvisible, filt, out, unsure,
						unsure_cap, &call, err, errlen);
	if (rc)
		return rc;
	if (call.empty)
	{
		memset(out, 0, rows * sizeof(*out));
		if (x->timing)
		{
			memset(&x->times, 0, sizeof(x->times));
			x->times.total_ms = gbt_vagg_now_ms() - call.t0;
			x->have_times = 1;
		}
		goto out;
	}
	{
		int64_t		ucap = unsure_cap < call.tbound ? unsure_cap : call.tbound;

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
	a.offs = call.offs;
	a.start = call.start;
	a.vis = call.vis;
	a.progs = call.progs;
	a.list = call.list;
	a.nvis = nvisible;
	a.unsure = x->d_unsure;
	a.res = x->d_res;
	nchunks = (call.tbound + VCH - 1) / VCH;
	{
		/* one wave of resident blocks, over all rows */
		int64_t		g = (nchunks + WPB - 1) / WPB,
					gmax = (int64_t) x->occ[filt != NULL][in->ncols] * x->nsm / rows;

		if (g > gmax)
			g = gmax;
		if (g < 1)
			g = 1;
		grid = (unsigned) g;
	}
	if ((size_t) grid * rows > x->d_parts_sz)
	{
		cudaFree(x->d_parts);
		x->d_parts = NULL;
		x->d_parts_sz = 0;
		CK(cudaMalloc(&x->d_parts, (size_t) grid * rows * vagg_partial_bytes()));
		x->d_parts_sz = (size_t) grid * rows;
	}
	a.partials = x->d_parts;
	CK(vagg_launch_aggregate(in->ncols, grid, rows, filt != NULL, x->stream, a));
	if (x->timing)
		CK(cudaEventRecord(x->ev[2], x->stream));
	CK(cudaMemcpyAsync(x->h_res, x->d_res, DEVRES_BYTES(rows), cudaMemcpyDeviceToHost,
					   x->stream));
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
	nunsure = (int64_t) x->h_res->ucount;
	for (c = 0; c < rows; c++)
	{
		out[c] = x->h_res->r[c];
		out[c].nunsure = nunsure;
	}
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
		x->times.total_ms = gbt_vagg_now_ms() - call.t0;
		x->have_times = 1;
	}
out:
	vagg_gpu_end(x, &call);
	return rc;
}
