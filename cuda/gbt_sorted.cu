/*
 * gbt_sorted.cu
 *	  Batched range search over a sorted key array on the GPU (see
 *	  gbt_sorted.h).  Errors are returned, never thrown or printed.
 */
#include <cstdio>
#include <new>

#include <cuda_runtime.h>
#include <thrust/binary_search.h>
#include <thrust/execution_policy.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system_error.h>

#include "gbt_sorted.h"

struct gbt_sorted
{
	uint64_t   *keys;			/* device */
	int64_t		n;
	cudaStream_t stream;
};

static int
fail(cudaError_t e, const char *what, char *err, size_t errlen)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s: %s", what, cudaGetErrorString(e));
	return (int) e;
}

extern "C" int
gbt_sorted_build(const uint64_t *keys, int64_t n, gbt_sorted **out,
				 char *err, size_t errlen)
{
	gbt_sorted *s = new (std::nothrow) gbt_sorted();
	cudaError_t e;

	*out = NULL;
	if (s == NULL)
		return fail(cudaErrorMemoryAllocation, "host allocation", err, errlen);
	s->n = n;
	if ((e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking)) != cudaSuccess)
	{
		delete s;
		return fail(e, "cudaStreamCreate", err, errlen);
	}
	if ((e = cudaMalloc(&s->keys, sizeof(uint64_t) * (n > 0 ? n : 1))) != cudaSuccess ||
		(e = cudaMemcpyAsync(s->keys, keys, sizeof(uint64_t) * n,
							 cudaMemcpyHostToDevice, s->stream)) != cudaSuccess ||
		(e = cudaStreamSynchronize(s->stream)) != cudaSuccess)
	{
		gbt_sorted_free(s);
		return fail(e, "copying keys to the device", err, errlen);
	}
	*out = s;
	return 0;
}

extern "C" int
gbt_sorted_ranges(gbt_sorted *s, const uint64_t *lo, const uint64_t *hi,
				  int64_t nranges, int64_t *start, int64_t *end,
				  char *err, size_t errlen)
{
	uint64_t   *d_bounds = NULL;
	int64_t    *d_pos = NULL;
	size_t		nb = sizeof(uint64_t) * nranges;
	cudaError_t e = cudaSuccess;
	int64_t		i;

	if (nranges == 0)
		return 0;
	if ((e = cudaMallocAsync(&d_bounds, 2 * nb, s->stream)) != cudaSuccess ||
		(e = cudaMallocAsync(&d_pos, 2 * sizeof(int64_t) * nranges, s->stream)) != cudaSuccess ||
		(e = cudaMemcpyAsync(d_bounds, lo, nb, cudaMemcpyHostToDevice, s->stream)) != cudaSuccess ||
		(e = cudaMemcpyAsync(d_bounds + nranges, hi, nb, cudaMemcpyHostToDevice, s->stream)) != cudaSuccess)
		goto done;

	try
	{
		auto		policy = thrust::cuda::par_nosync.on(s->stream);

		thrust::lower_bound(policy, s->keys, s->keys + s->n,
							d_bounds, d_bounds + nranges, d_pos);
		thrust::upper_bound(policy, s->keys, s->keys + s->n,
							d_bounds + nranges, d_bounds + 2 * nranges, d_pos + nranges);
	}
	catch (const thrust::system_error &ex)
	{
		e = (cudaError_t) ex.code().value();
		goto done;
	}
	catch (...)
	{
		e = cudaErrorUnknown;
		goto done;
	}
	if ((e = cudaMemcpyAsync(start, d_pos, sizeof(int64_t) * nranges,
							 cudaMemcpyDeviceToHost, s->stream)) != cudaSuccess ||
		(e = cudaMemcpyAsync(end, d_pos + nranges, sizeof(int64_t) * nranges,
							 cudaMemcpyDeviceToHost, s->stream)) != cudaSuccess ||
		(e = cudaStreamSynchronize(s->stream)) != cudaSuccess)
		goto done;

	for (i = 0; i < nranges; i++)
		if (lo[i] > hi[i])
			end[i] = start[i];

done:
	if (d_bounds)
		cudaFreeAsync(d_bounds, s->stream);
	if (d_pos)
		cudaFreeAsync(d_pos, s->stream);
	cudaStreamSynchronize(s->stream);
	return e == cudaSuccess ? 0 : fail(e, "range search", err, errlen);
}

extern "C" size_t
gbt_sorted_bytes(const gbt_sorted *s)
{
	return sizeof(uint64_t) * (size_t) s->n;
}

extern "C" void
gbt_sorted_free(gbt_sorted *s)
{
	if (s == NULL)
		return;
	if (s->keys)
		cudaFree(s->keys);
	cudaStreamDestroy(s->stream);
	delete s;
}
