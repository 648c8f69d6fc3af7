/*
 * harmonia_gpu.cu
 *	  The GPU engine of harmonia.h: O(n) bulk build with one thread per
 *	  slot, and thread-per-range batched range search after PSA (CUB partial
 *	  radix sort by the top N bits, answers scattered back to the caller's
 *	  order).  The tree walk itself is shared with the CPU twin
 *	  (harmonia_int.h).  The tree's upper levels are read through the
 *	  read-only path (__ldg); constant memory would be global state shared
 *	  by all trees.  Everything runs on the current device.
 */
#include <cub/cub.cuh>
#include <stdlib.h>
#include <string.h>

#include "harmonia_int.h"

/* ---------------- build ---------------- */

static __global__ void
k_inner(const __grid_constant__ hm_tree T)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;

	if (i < T.ninner * T.fanout)
		T.inner[i] = hm__sep(&T, T.keys, i / T.fanout, (int) (i % T.fanout));
	if (i <= T.ninner && i < T.ninner * T.fanout + 1)
		T.child[i] = hm__child0(&T, i);
}

/* First position in k[0..n) whose key is >= key. */
static __device__ int64_t
first_at_least(const uint64_t *k, int64_t n, uint64_t key)
{
	int64_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (k[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The entry table, a bucket per thread (harmonia_int.h: hm__entry_of()). */
static __global__ void
k_entry(const __grid_constant__ hm_tree T)
{
	int64_t		b = blockIdx.x * (int64_t) blockDim.x + threadIdx.x,
				lo,
				hi;
	int			none;
	uint64_t	first;

	if (b >= T.nbuckets)
		return;
	lo = b == 0 ? 0 : first_at_least(T.keys, T.n, hm__bucket_first(&T, b, &none));
	first = hm__bucket_first(&T, b + 1, &none);
	hi = none ? T.n : first_at_least(T.keys, T.n, first);
	T.entry[b] = hm__entry_of(&T, lo, hi);
}

/* flag keys out of order: the build's input contract, checked in O(n) */
static __global__ void
k_unsorted(const uint64_t *k, int64_t n, int *bad)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;

	if (i + 1 < n && k[i] > k[i + 1])
		*bad = 1;
}

static __global__ void
k_iota32(uint32_t *a, int64_t n)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;

	if (i < n)
		a[i] = (uint32_t) i;
}

extern "C" void
hm_gpu_free(hm_tree *t)
{
	if (!t)
		return;
	cudaFree(t->inner);
	cudaFree(t->child);
	cudaFree(t->keys);
	cudaFree(t->entry);
	free(t);
}

template <typename T>
static hm_status
dmalloc(T **p, int64_t n)
{
	return hm__cuerr(cudaMalloc((void **) p, (size_t) (n + 1) * sizeof(T)));
}

extern "C" hm_status
hm_gpu_build(const uint64_t *keys, int64_t n, int fanout, hm_tree **out)
{
	hm_tree    *t;
	hm_status	st = HM_OK;

	*out = NULL;
	if (n < 0 || (n > 0 && !keys))
		return HM_EINVAL;
	t = (hm_tree *) calloc(1, sizeof(hm_tree));
	if (!t)
		return HM_ENOMEM;
	t->gpu = 1;
	if (hm__layout(t, n, fanout) != HM_OK)
	{
		free(t);
		return HM_EINVAL;
	}
	if ((st = dmalloc(&t->keys, n)) || (st = dmalloc(&t->inner, t->ninner * fanout)) ||
		(st = dmalloc(&t->child, t->ninner + 1)))
		goto out;
	if (n > 0)
		HM_CK(cudaMemcpy(t->keys, keys, n * 8, cudaMemcpyDefault));
	if (n > 1)
	{
		int			bad = 0;

		HM_CK(cudaMemcpy(t->child, &bad, sizeof(int), cudaMemcpyHostToDevice));
		k_unsorted<<<hm__nblocks(n), HM_BLK>>>(t->keys, n, (int *) t->child);
		HM_CK(cudaMemcpy(&bad, t->child, sizeof(int), cudaMemcpyDeviceToHost));
		if (bad)
		{
			st = HM_EINVAL;
			goto out;
		}
	}
	k_inner<<<hm__nblocks(t->ninner * fanout + 1), HM_BLK>>>(*t);
	HM_CK(cudaGetLastError());
	{
		uint64_t	ends[2] = {0, 0};

		if (n > 0)
		{
			HM_CK(cudaMemcpy(&ends[0], t->keys, 8, cudaMemcpyDeviceToHost));
			HM_CK(cudaMemcpy(&ends[1], t->keys + n - 1, 8, cudaMemcpyDeviceToHost));
		}
		hm__entry_layout(t, ends[0], ends[1]);
		if ((st = dmalloc(&t->entry, t->nbuckets)) != HM_OK)
			goto out;
		if (t->nbuckets > 0)
			k_entry<<<hm__nblocks(t->nbuckets), HM_BLK>>>(*t);
		HM_CK(cudaGetLastError());
	}
	HM_CK(cudaDeviceSynchronize());
out:
	if (st != HM_OK)
	{
		hm_gpu_free(t);
		return st;
	}
	*out = t;
	return HM_OK;
}

/* ---------------- PSA ---------------- */

/*
 * Per-call scratch comes from the device's stream-ordered pool; keep freed
 * blocks in the pool (the default threshold returns them to the driver at
 * every synchronize, which made each 10^8 batch pay for fresh allocations).
 */
static void
keep_pool(void)
{
	int			dev;
	cudaMemPool_t pool;
	uint64_t	thr = UINT64_MAX;

	if (cudaGetDevice(&dev) == cudaSuccess &&
		cudaDeviceGetDefaultMemPool(&pool, dev) == cudaSuccess)
		cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr);
	(void) cudaGetLastError();
}

hm_status
hm__psa_sort(const uint64_t *keys, int64_t n, int bits, uint64_t **skeys, uint32_t **sperm,
			 cudaStream_t s)
{
	uint32_t   *iota = NULL;
	void	   *ws = NULL;
	size_t		wsz = 0;
	hm_status	st = HM_OK;

	*skeys = NULL;
	*sperm = NULL;
	keep_pool();
	HM_CK(cudaMallocAsync(skeys, n * 8, s));
	HM_CK(cudaMallocAsync(sperm, n * 4, s));
	HM_CK(cudaMallocAsync(&iota, n * 4, s));
	k_iota32<<<hm__nblocks(n), HM_BLK, 0, s>>>(iota, n);
	HM_CK(cub::DeviceRadixSort::SortPairs(ws, wsz, keys, *skeys, iota, *sperm, (int) n,
									   64 - bits, 64, s));
	HM_CK(cudaMallocAsync(&ws, wsz, s));
	HM_CK(cub::DeviceRadixSort::SortPairs(ws, wsz, keys, *skeys, iota, *sperm, (int) n,
									   64 - bits, 64, s));
out:
	cudaFreeAsync(ws, s);
	cudaFreeAsync(iota, s);
	return st;
}

/* ---------------- ranges ---------------- */

static __global__ void
k_lo(const hm_range *r, int64_t n, uint64_t *lo)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;

	if (i < n)
		lo[i] = r[i].lo;
}

static __global__ void
k_ranges(const __grid_constant__ hm_tree T, const hm_range *r, const uint32_t *perm,
		 int64_t n, int64_t *start, int64_t *end)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x,
				j,
				s,
				e;
	hm_range	rr;

	if (i >= n)
		return;
	j = perm ? perm[i] : i;
	rr = r[j];
	hm__range_pos(&T, &rr, &s, &e);
	start[j] = s;
	end[j] = e;
}

/* Inclusive ranges [lo[i], hi[i]] given as two arrays (hi may be lo). */
static __global__ void
k_bounds(const __grid_constant__ hm_tree T, const uint64_t *lo, const uint64_t *hi,
		 const uint32_t *perm, int64_t n, int64_t *start, int64_t *end)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x,
				j;
	hm_range	rr;

	if (i >= n)
		return;
	j = perm ? perm[i] : i;
	rr.lo = lo[j];
	rr.hi = hi[j];
	rr.lo_incl = 1;
	rr.hi_incl = 1;
	hm__range_pos(&T, &rr, &start[j], &end[j]);
}

/* PSA for ranges: order by the top bits of lo */
static hm_status
range_perm(const hm_tree *t, const hm_range *r, int64_t nr, int psa_bits,
		   uint32_t **perm)
{
	uint64_t   *lo = NULL,
			   *sk = NULL;
	hm_status	st = HM_OK;
	int			bits = hm__psa_bits_for(t, psa_bits);

	*perm = NULL;
	if (bits == 0 || nr < 2)
		return HM_OK;
	HM_CK(cudaMallocAsync(&lo, nr * 8, 0));
	k_lo<<<hm__nblocks(nr), HM_BLK>>>(r, nr, lo);
	st = hm__psa_sort(lo, nr, bits, &sk, perm, 0);
out:
	cudaFreeAsync(lo, 0);
	cudaFreeAsync(sk, 0);
	return st;
}

extern "C" hm_status
hm_gpu_ranges(const hm_tree *t, const hm_range *r, int64_t nr,
			  int64_t *start, int64_t *end, int psa_bits)
{
	uint32_t   *perm = NULL;
	hm_status	st;

	if (!t || !t->gpu || nr < 0 || nr > (int64_t) UINT32_MAX ||
		(nr > 0 && (!r || !start || !end)))
		return HM_EINVAL;
	if (nr == 0)
		return HM_OK;
	if ((st = range_perm(t, r, nr, psa_bits, &perm)) == HM_OK)
	{
		k_ranges<<<hm__nblocks(nr), HM_BLK>>>(*t, r, perm, nr, start, end);
		st = hm__cuerr(cudaGetLastError());
	}
	cudaFreeAsync(perm, 0);
	if (st == HM_OK)
		st = hm__cuerr(cudaStreamSynchronize(0));
	return st;
}

extern "C" hm_status
hm_gpu_bounds(const hm_tree *t, const uint64_t *lo, const uint64_t *hi, int64_t n,
			  int64_t *start, int64_t *end, int psa_bits)
{
	uint32_t   *perm = NULL;
	uint64_t   *sk = NULL;
	hm_status	st = HM_OK;
	int			bits;

	if (!t || !t->gpu || n < 0 || n > (int64_t) UINT32_MAX ||
		(n > 0 && (!lo || !hi || !start || !end)))
		return HM_EINVAL;
	if (n == 0)
		return HM_OK;
	bits = hm__psa_bits_for(t, psa_bits);
	if (bits > 0 && n > 1)
		st = hm__psa_sort(lo, n, bits, &sk, &perm, 0);
	if (st == HM_OK)
	{
		k_bounds<<<hm__nblocks(n), HM_BLK>>>(*t, lo, hi, perm, n, start, end);
		st = hm__cuerr(cudaGetLastError());
	}
	cudaFreeAsync(sk, 0);
	cudaFreeAsync(perm, 0);
	if (st == HM_OK)
		st = hm__cuerr(cudaStreamSynchronize(0));
	return st;
}
