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

struct gbt_mirror_gpu
{
	hm_tree    *tree;
	hm_range   *d_ranges;		/* device buffers, room for cap ranges */
	int64_t    *d_pos;			/* start[cap] then end[cap] */
	int64_t		cap;
	hm_range   *h_ranges;		/* pinned host staging */
	int64_t    *h_pos;
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

extern "C" size_t
gbt_mirror_gpu_bytes(const gbt_mirror_gpu *g)
{
	return hm_bytes(g->tree);
}

extern "C" void
gbt_mirror_gpu_free(gbt_mirror_gpu *g)
{
	if (g == NULL)
		return;
	drop_buffers(g);
	hm_gpu_free(g->tree);
	delete g;
}
