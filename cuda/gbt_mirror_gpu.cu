/*
 * gbt_mirror_gpu.cu
 *	  A mirror's Harmonia tree on the GPU, searched from host arrays (see
 *	  gbt_mirror_gpu.h).  The device buffers for a batch are kept with the
 *	  mirror and grown as needed, so a batch costs two copies and one search.
 */
#include <cstdio>
#include <new>

#include <cuda_runtime.h>

#include "gbt_mirror_gpu.h"
#include "harmonia.h"
#include "vagg.h"

struct gbt_mirror_gpu
{
	hm_tree    *tree;
	hm_range   *d_ranges;		/* device buffers, room for cap ranges */
	int64_t    *d_pos;			/* start[cap] then end[cap] */
	int64_t		cap;
	hm_range   *h_ranges;		/* pinned host staging */
	int64_t    *h_pos;

	/* For aggregates, copied at the first one. */
	bool		agg_ready;
	int64_t		agg_n;
	uint32_t   *d_blocks;
	uint8_t    *d_removed;		/* NULL: none removed */
	uint64_t	removed_version;
	void	   *d_cols[GBT_VAGG_MAX_COLS];
	uint8_t    *d_nulls[GBT_VAGG_MAX_COLS];
	size_t		agg_bytes;
	gbt_vagg_gpu_ctx *vagg;
};

static int
fail(const char *what, const char *why, char *err, size_t errlen)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s: %s", what, why);
	return 1;
}

static void
drop_buffers(gbt_mirror_gpu *g)
{
	cudaFree(g->d_ranges);
	cudaFree(g->d_pos);
	cudaFreeHost(g->h_ranges);
	cudaFreeHost(g->h_pos);
	g->d_ranges = NULL;
	g->d_pos = NULL;
	g->h_ranges = NULL;
	g->h_pos = NULL;
	g->cap = 0;
}

extern "C" int
gbt_mirror_gpu_build(const uint64_t *keys, int64_t n, int fanout,
					 gbt_mirror_gpu **out, char *err, size_t errlen)
{
	gbt_mirror_gpu *g = new (std::nothrow) gbt_mirror_gpu();
	hm_input	in = {};
	hm_status	s;

	*out = NULL;
	if (g == NULL)
		return fail("mirror", "out of host memory", err, errlen);
	in.n = n;
	in.keys = keys;
	s = hm_gpu_build(&in, fanout, &g->tree);
	if (s != HM_OK)
	{
		delete g;
		return fail("Harmonia build on the GPU", hm_strerror(s), err, errlen);
	}
	*out = g;
	return 0;
}

extern "C" int
gbt_mirror_gpu_ranges(gbt_mirror_gpu *g, const uint64_t *lo, const uint64_t *hi,
					  int64_t n, int64_t *start, int64_t *end, char *err, size_t errlen)
{
	hm_opts		opts;
	hm_status	s;
	int64_t		i;

	if (n == 0)
		return 0;
	if (n > g->cap)
	{
		drop_buffers(g);
		if (cudaMalloc(&g->d_ranges, sizeof(hm_range) * n) != cudaSuccess ||
			cudaMalloc(&g->d_pos, sizeof(int64_t) * 2 * n) != cudaSuccess ||
			cudaMallocHost(&g->h_ranges, sizeof(hm_range) * n) != cudaSuccess ||
			cudaMallocHost(&g->h_pos, sizeof(int64_t) * 2 * n) != cudaSuccess)
		{
			(void) cudaGetLastError();
			drop_buffers(g);
			return fail("range search", "out of device or pinned memory", err, errlen);
		}
		g->cap = n;
	}
	for (i = 0; i < n; i++)
	{
		g->h_ranges[i].lo = lo[i];
		g->h_ranges[i].hi = hi[i];
		g->h_ranges[i].lo_incl = 1;
		g->h_ranges[i].hi_incl = 1;
	}
	if (cudaMemcpy(g->d_ranges, g->h_ranges, sizeof(hm_range) * n,
				   cudaMemcpyHostToDevice) != cudaSuccess)
		return fail("range search", cudaGetErrorString(cudaGetLastError()), err, errlen);
	hm_default_opts(&opts);
	s = hm_gpu_ranges(g->tree, g->d_ranges, n, g->d_pos, g->d_pos + n, &opts);
	if (s != HM_OK)
		return fail("Harmonia range search", hm_strerror(s), err, errlen);
	if (cudaMemcpy(g->h_pos, g->d_pos, sizeof(int64_t) * 2 * n,
				   cudaMemcpyDeviceToHost) != cudaSuccess)
		return fail("range search", cudaGetErrorString(cudaGetLastError()), err, errlen);
	for (i = 0; i < n; i++)
	{
		start[i] = g->h_pos[i];
		end[i] = g->h_pos[n + i];
	}
	return 0;
}

static void
drop_agg(gbt_mirror_gpu *g)
{
	int			c;

	cudaFree(g->d_blocks);
	cudaFree(g->d_removed);
	for (c = 0; c < GBT_VAGG_MAX_COLS; c++)
	{
		cudaFree(g->d_cols[c]);
		cudaFree(g->d_nulls[c]);
		g->d_cols[c] = NULL;
		g->d_nulls[c] = NULL;
	}
	g->d_blocks = NULL;
	g->d_removed = NULL;
	g->agg_bytes = 0;
	g->agg_ready = false;
	if (g->vagg)
		gbt_vagg_gpu_ctx_free(g->vagg);
	g->vagg = NULL;
}

/* Device copy of a host array; false on failure. */
static bool
upload(void **dst, const void *src, size_t bytes, size_t *total)
{
	if (cudaMalloc(dst, bytes > 0 ? bytes : 1) != cudaSuccess)
	{
		*dst = NULL;
		return false;
	}
	*total += bytes;
	return bytes == 0 || cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice) == cudaSuccess;
}

extern "C" int
gbt_mirror_gpu_vagg(gbt_mirror_gpu *g, int64_t n, const uint32_t *blocks,
					const uint8_t *removed, uint64_t removed_version,
					int ncols, const int *float_cols,
					const int64_t *const *cols, const uint8_t *const *colnulls,
					const int64_t *start, const int64_t *end, int64_t nranges,
					const uint8_t *visible, int64_t nvisible,
					gbt_vagg_result *out, int64_t *unsure,
					int64_t unsure_cap, char *err, size_t errlen)
{
	gbt_vagg_input in = {};
	size_t		bitmap = (size_t) n / 8 + 1;
	int			c;

	if (!g->agg_ready)
	{
		bool		ok = true;

		g->vagg = gbt_vagg_gpu_ctx_create();
		ok = g->vagg != NULL &&
			upload((void **) &g->d_blocks, blocks, sizeof(uint32_t) * n, &g->agg_bytes);
		for (c = 0; c < ncols && ok; c++)
			ok = upload(&g->d_cols[c], cols[c], sizeof(int64_t) * n, &g->agg_bytes) &&
				upload((void **) &g->d_nulls[c], colnulls[c], bitmap, &g->agg_bytes);
		if (!ok)
		{
			(void) cudaGetLastError();
			drop_agg(g);
			return fail("aggregate", "out of device memory for the mirror's columns",
						err, errlen);
		}
		g->agg_n = n;
		g->removed_version = 0;
		g->agg_ready = true;
	}
	if (removed != NULL && removed_version != g->removed_version)
	{
		if (g->d_removed == NULL &&
			!upload((void **) &g->d_removed, removed, bitmap, &g->agg_bytes))
		{
			(void) cudaGetLastError();
			drop_agg(g);
			return fail("aggregate", "out of device memory", err, errlen);
		}
		if (cudaMemcpy(g->d_removed, removed, bitmap, cudaMemcpyHostToDevice) != cudaSuccess)
			return fail("aggregate", cudaGetErrorString(cudaGetLastError()), err, errlen);
		g->removed_version = removed_version;
	}

	in.n = g->agg_n;
	in.blocks = g->d_blocks;
	in.removed = removed != NULL ? g->d_removed : NULL;
	in.ncols = ncols;
	for (c = 0; c < ncols; c++)
	{
		in.coltype[c] = float_cols[c] ? GBT_VAGG_FLOAT8 : GBT_VAGG_INT64;
		in.cols[c] = g->d_cols[c];
		in.nulls[c] = g->d_nulls[c];
	}
	return gbt_vagg_gpu(g->vagg, &in, start, end, nranges, visible, nvisible, out,
						unsure, unsure_cap, err, errlen);
}

extern "C" size_t
gbt_mirror_gpu_bytes(const gbt_mirror_gpu *g)
{
	return hm_bytes(g->tree) + g->agg_bytes;
}

extern "C" void
gbt_mirror_gpu_free(gbt_mirror_gpu *g)
{
	if (g == NULL)
		return;
	drop_buffers(g);
	drop_agg(g);
	hm_gpu_free(g->tree);
	delete g;
}
