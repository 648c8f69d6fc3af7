/*
 * harmonia_gpu.cu
 *	  The GPU engine of harmonia.h: O(n) bulk build with one thread per
 *	  slot, batched searches with PSA (CUB partial radix sort by the top N
 *	  bits, answers scattered back to the caller's order), NTG (GS threads
 *	  per query compare GS keys of a node per step, Harmonia 4.2), Eirene
 *	  combining, and thread-per-range ranges and aggregates on prefix sums.
 *	  The tree walk itself is shared with the CPU twin (harmonia_int.h).
 *	  The tree's upper levels are read through the read-only path (__ldg);
 *	  constant memory would be global state shared by all trees.
 */
#include <cub/cub.cuh>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "harmonia_int.h"
}

#define BLK 256

static hm_status
cuerr(cudaError_t e)
{
	if (e == cudaSuccess)
		return HM_OK;
	(void) cudaGetLastError();	/* clear a sticky-free error */
	return e == cudaErrorMemoryAllocation ? HM_EDEVMEM : HM_ECUDA;
}

#define CK(call) do { st = cuerr(call); if (st != HM_OK) goto out; } while (0)

static unsigned
nblocks(int64_t threads)
{
	return (unsigned) ((threads + BLK - 1) / BLK);
}

extern "C" hm_status
hm_gpu_available(char *name, size_t namelen)
{
	int			n = 0,
				dev;
	cudaDeviceProp p;

	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
	{
		(void) cudaGetLastError();
		return HM_ENODEV;
	}
	if (cudaGetDevice(&dev) != cudaSuccess ||
		cudaGetDeviceProperties(&p, dev) != cudaSuccess)
		return HM_ENODEV;
	if (name && namelen > 0)
	{
		strncpy(name, p.name, namelen - 1);
		name[namelen - 1] = 0;
	}
	return HM_OK;
}

/* ---------------- build ---------------- */

static __global__ void k_sample(const uint64_t *keys, int64_t n, uint64_t *out, int ns);

static __global__ void
k_inner(const __grid_constant__ hm_tree T)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;

	if (i < T.ninner * T.fanout)
		T.inner[i] = hm__sep(&T, T.keys, i / T.fanout, (int) (i % T.fanout));
	if (i <= T.ninner && i < T.ninner * T.fanout + 1)
		T.child[i] = hm__child0(&T, i);
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
k_iota64(uint64_t *a, int64_t n)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;

	if (i < n)
		a[i] = i;
}

static __global__ void
k_iota32(uint32_t *a, int64_t n)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;

	if (i < n)
		a[i] = (uint32_t) i;
}

/* element i of the scan input: v[i], and 0 past the end (exclusive scan) */
static __global__ void
k_to_i128(const hm_val *v, int64_t n, hm_i128 *o)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;

	if (i <= n)
		o[i] = hm__from64(i < n ? v[i].i : 0);
}

static __global__ void
k_to_dd(const hm_val *v, int64_t n, hm_dd *o)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;

	if (i <= n)
	{
		o[i].hi = i < n ? v[i].f : 0.0;
		o[i].lo = 0.0;
	}
}

struct add128_op
{
	__device__ hm_i128 operator() (const hm_i128 &a, const hm_i128 &b) const
	{
		return hm__add128(a, b);
	}
};
struct adddd_op
{
	__device__ hm_dd operator() (const hm_dd &a, const hm_dd &b) const
	{
		return hm__adddd(a, b);
	}
};

/* min/max of F consecutive entries of the level below */
static __global__ void
k_minmax(const hm_val *lo, const hm_val *hi, int64_t len, int F, int isf,
		 hm_val *omin, hm_val *omax, int64_t olen)
{
	int64_t		b = blockIdx.x * (int64_t) blockDim.x + threadIdx.x,
				k;
	hm_val		mn,
				mx;
	int			have = 0;

	if (b >= olen)
		return;
	mn.i = mx.i = 0;
	for (k = b * F; k < (b + 1) * F && k < len; k++)
	{
		hm__take(lo[k], isf, &mn, &mx, &have);
		hm__take(hi[k], isf, &mn, &mx, &have);
	}
	omin[b] = mn;
	omax[b] = mx;
}

/* inclusive-of-total prefix sums ps[0..n] of one column, on the device */
template <typename T, typename Op>
static hm_status
dev_prefix(T *tmp, T *ps, int64_t n)
{
	void	   *ws = NULL;
	size_t		wsz = 0;
	hm_status	st = HM_OK;
	T			zero;

	memset(&zero, 0, sizeof(zero));
	CK(cub::DeviceScan::ExclusiveScan(ws, wsz, tmp, ps, Op(), zero, n + 1));
	CK(cudaMalloc(&ws, wsz));
	CK(cub::DeviceScan::ExclusiveScan(ws, wsz, tmp, ps, Op(), zero, n + 1));
out:
	cudaFree(ws);
	return st;
}

static void
dev_free_delta(hm_tree *t)
{
	int			c;

	cudaFree(t->ins_keys);
	cudaFree(t->ins_rowids);
	cudaFree(t->delpos);
	for (c = 0; c < HM_MAX_COLS; c++)
	{
		cudaFree(t->ins_cols[c]);
		cudaFree(t->ins_psi[c]);
		cudaFree(t->ins_psf[c]);
		cudaFree(t->del_psi[c]);
		cudaFree(t->del_psf[c]);
		t->ins_cols[c] = NULL;
		t->ins_psi[c] = t->del_psi[c] = NULL;
		t->ins_psf[c] = t->del_psf[c] = NULL;
	}
	t->ins_keys = t->ins_rowids = NULL;
	t->delpos = NULL;
	t->nins = t->ndel = 0;
}

extern "C" void
hm_gpu_free(hm_tree *t)
{
	int			c,
				l;

	if (!t)
		return;
	dev_free_delta(t);
	cudaFree(t->inner);
	cudaFree(t->child);
	cudaFree(t->keys);
	cudaFree(t->rowids);
	for (c = 0; c < HM_MAX_COLS; c++)
	{
		cudaFree(t->cols[c]);
		cudaFree(t->psi[c]);
		cudaFree(t->psf[c]);
		for (l = 0; l < HM_MAX_LEVELS; l++)
		{
			cudaFree(t->mmin[c][l]);
			cudaFree(t->mmax[c][l]);
		}
	}
	free(t);
}

template <typename T>
static hm_status
dmalloc(T **p, int64_t n)
{
	return cuerr(cudaMalloc((void **) p, (size_t) (n + 1) * sizeof(T)));
}

extern "C" hm_status
hm_gpu_build(const hm_input *in, int fanout, hm_tree **out)
{
	hm_tree    *t;
	hm_status	st = HM_OK;
	int64_t		n;
	int			c,
				l;
	void	   *tmp = NULL;

	*out = NULL;
	if (!in || in->n < 0 || in->ncols < 0 || in->ncols > HM_MAX_COLS ||
		(in->n > 0 && !in->keys))
		return HM_EINVAL;
	if (hm_gpu_available(NULL, 0) != HM_OK)
		return HM_ENODEV;
	t = (hm_tree *) calloc(1, sizeof(hm_tree));
	if (!t)
		return HM_ENOMEM;
	t->gpu = 1;
	if (hm__layout(t, in->n, fanout) != HM_OK)
	{
		free(t);
		return HM_EINVAL;
	}
	n = t->n;
	t->ncols = in->ncols;
	if ((st = dmalloc(&t->keys, n)) || (st = dmalloc(&t->rowids, n)) ||
		(st = dmalloc(&t->inner, t->ninner * fanout)) || (st = dmalloc(&t->child, t->ninner + 1)))
		goto out;
	if (n > 0)
		CK(cudaMemcpy(t->keys, in->keys, n * 8, cudaMemcpyDefault));
	if (n > 1)
	{
		int			bad = 0;

		CK(cudaMemcpy(t->child, &bad, sizeof(int), cudaMemcpyHostToDevice));
		k_unsorted<<<nblocks(n), BLK>>>(t->keys, n, (int *) t->child);
		CK(cudaMemcpy(&bad, t->child, sizeof(int), cudaMemcpyDeviceToHost));
		if (bad)
		{
			st = HM_EINVAL;
			goto out;
		}
	}
	if (in->rowids && n > 0)
		CK(cudaMemcpy(t->rowids, in->rowids, n * 8, cudaMemcpyDefault));
	else if (n > 0)
		k_iota64<<<nblocks(n), BLK>>>(t->rowids, n);
	k_inner<<<nblocks(t->ninner * fanout + 1), BLK>>>(*t);
	CK(cudaGetLastError());
	if (t->ncols > 0)
		CK(cudaMalloc(&tmp, (size_t) (n + 1) * 16));
	for (c = 0; c < t->ncols; c++)
	{
		int			isf = in->coltype[c] == HM_FLOAT8;
		const hm_val *lo,
				   *hi;
		int64_t		len = n;

		if (in->coltype[c] != HM_INT64 && in->coltype[c] != HM_FLOAT8)
		{
			st = HM_EINVAL;
			goto out;
		}
		t->coltype[c] = in->coltype[c];
		if ((st = dmalloc(&t->cols[c], n)))
			goto out;
		if (n > 0)
			CK(cudaMemcpy(t->cols[c], in->cols[c], n * 8, cudaMemcpyDefault));
		if (isf)
		{
			if ((st = dmalloc(&t->psf[c], n + 1)))
				goto out;
			k_to_dd<<<nblocks(n + 1), BLK>>>(t->cols[c], n, (hm_dd *) tmp);
			if ((st = dev_prefix<hm_dd, adddd_op>((hm_dd *) tmp, t->psf[c], n)))
				goto out;
		}
		else
		{
			if ((st = dmalloc(&t->psi[c], n + 1)))
				goto out;
			k_to_i128<<<nblocks(n + 1), BLK>>>(t->cols[c], n, (hm_i128 *) tmp);
			if ((st = dev_prefix<hm_i128, add128_op>((hm_i128 *) tmp, t->psi[c], n)))
				goto out;
		}
		lo = hi = t->cols[c];
		for (l = 0; l < t->nmm; l++)
		{
			if ((st = dmalloc(&t->mmin[c][l], t->mm_len[l])) ||
				(st = dmalloc(&t->mmax[c][l], t->mm_len[l])))
				goto out;
			k_minmax<<<nblocks(t->mm_len[l]), BLK>>>(lo, hi, len, fanout, isf,
													  t->mmin[c][l], t->mmax[c][l], t->mm_len[l]);
			lo = t->mmin[c][l];
			hi = t->mmax[c][l];
			len = t->mm_len[l];
		}
	}
	CK(cudaDeviceSynchronize());
	/* NTG default: the model over a sample of the tree's own keys */
	if (n > 0)
	{
		uint64_t   *s = (uint64_t *) malloc(1024 * 8);
		void	   *tmp0 = NULL;

		CK(cudaMalloc(&tmp0, 1024 * 8));
		if (!s)
		{
			st = HM_ENOMEM;
			goto out;
		}
		k_sample<<<4, BLK>>>(t->keys, n, (uint64_t *) tmp0, 1024);
		if (cudaMemcpy(s, tmp0, 1024 * 8, cudaMemcpyDeviceToHost) != cudaSuccess)
			st = HM_ECUDA;
		if (st == HM_OK)
			t->ntg = hm_gpu_choose_group_size(t, s, 1024);
		free(s);
		cudaFree(tmp0);
	}
	else
		t->ntg = 1;
out:
	cudaFree(tmp);
	if (st != HM_OK)
	{
		hm_gpu_free(t);
		return st;
	}
	*out = t;
	return HM_OK;
}

/* ---------------- NTG profiling ---------------- */

static __global__ void
k_sample(const uint64_t *keys, int64_t n, uint64_t *out, int ns)
{
	int			i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < ns)
		out[i] = keys[(int64_t) (((uint64_t) i * 2654435761u) % (uint64_t) n)];
}


/* the child index taken at every level, as the sequential walk finds it */
static __global__ void
k_trace(const __grid_constant__ hm_tree T, const uint64_t *q, int64_t nq, int32_t *cidx)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x,
				x = 0,
				p,
				e;
	int			l,
				c,
				nk,
				nlev = T.nlevels + 1;

	if (i >= nq)
		return;
	for (l = 0; l < T.nlevels; l++)
	{
		nk = (int) (T.child[x + 1] - T.child[x]) - 1;
		for (c = 0; c < nk && T.inner[x * T.fanout + c] < q[i]; c++)
			;
		cidx[i * nlev + l] = c;
		x = T.child[x] + c;
	}
	p = (x - T.ninner) * T.fanout;
	e = p + T.fanout < T.n ? p + T.fanout : T.n;
	for (c = 0; p + c < e && T.keys[p + c] < q[i]; c++)
		;
	cidx[i * nlev + T.nlevels] = c;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

extern "C" int
hm_gpu_choose_group_size(const hm_tree *t, const uint64_t *sample, int64_t nsample)
{
	uint64_t   *hq = NULL,
			   *dq = NULL;
	int32_t    *hc = NULL,
			   *dc = NULL;
	int			nlev = t->nlevels + 1,
				gs = 1;

	if (t->n == 0 || nsample <= 0 || !sample)
		return 1;
	hq = (uint64_t *) malloc(nsample * 8);
	hc = (int32_t *) malloc(nsample * nlev * 4);
	if (hq && hc &&
		cudaMalloc(&dq, nsample * 8) == cudaSuccess &&
		cudaMalloc(&dc, nsample * nlev * 4) == cudaSuccess)
	{
		memcpy(hq, sample, nsample * 8);
		qsort(hq, nsample, 8, cmp_u64);	/* as PSA would order them */
		cudaMemcpy(dq, hq, nsample * 8, cudaMemcpyHostToDevice);
		k_trace<<<nblocks(nsample), BLK>>>(*t, dq, nsample, dc);
		if (cudaMemcpy(hc, dc, nsample * nlev * 4, cudaMemcpyDeviceToHost) == cudaSuccess)
			gs = hm__ntg_model(hc, nsample, nlev, t->fanout);
	}
	(void) cudaGetLastError();
	cudaFree(dq);
	cudaFree(dc);
	free(hq);
	free(hc);
	return gs;
}

/* ---------------- search ---------------- */

/* count of the first nk entries of a sorted run that are < key (<= if upper),
 * GS lanes comparing GS entries per step, stopping at the first step that
 * finds one not below: Harmonia's narrowed thread group */
template <int GS>
__device__ __forceinline__ int
group_count(const uint64_t *a, int nk, uint64_t key, int upper, int lane, unsigned gmask)
{
	int			c = 0,
				s;

	for (s = 0; s < nk; s += GS)
	{
		int			slot = s + lane;
		bool		pr = false;
		int			cnt;

		if (slot < nk)
		{
			uint64_t	v = __ldg(&a[slot]);

			pr = upper ? v <= key : v < key;
		}
		if (GS == 1)
			cnt = pr;
		else
			cnt = __popc(__ballot_sync(gmask, pr) & gmask);
		c += cnt;
		if (cnt < GS)
			break;
	}
	return c;
}

template <int GS>
__device__ __forceinline__ int64_t
group_bound(const hm_tree *T, uint64_t key, int upper, int lane, unsigned gmask)
{
	int64_t		x = 0,
				p,
				e;
	int			l;

	if (T->n == 0)
		return 0;
	for (l = 0; l < T->nlevels; l++)
	{
		int64_t		c0 = __ldg(&T->child[x]);
		int			nk = (int) (__ldg(&T->child[x + 1]) - c0) - 1;

		x = c0 + group_count<GS>(T->inner + x * T->fanout, nk, key, upper, lane, gmask);
	}
	p = (x - T->ninner) * T->fanout;
	e = p + T->fanout < T->n ? p + T->fanout : T->n;
	return p + group_count<GS>(T->keys + p, (int) (e - p), key, upper, lane, gmask);
}

/* qpg queries per group; with combining, an equal previous key's answer is
 * reused (Eirene 4.1); perm scatters answers back to the caller's order */
template <int GS>
static __global__ void __launch_bounds__(BLK)
k_bound(const __grid_constant__ hm_tree T, const uint64_t *__restrict__ q,
		const uint32_t *__restrict__ perm, int64_t nq, int64_t *pos, int upper, int qpg)
{
	int64_t		g = (blockIdx.x * (int64_t) blockDim.x + threadIdx.x) / GS;
	int			lane = threadIdx.x % GS,
				j;
	unsigned	gmask = GS == 32 ? 0xffffffffu :
		(((1u << GS) - 1) << ((threadIdx.x & 31) & ~(GS - 1)));
	uint64_t	prevk = 0;
	int64_t		prevp = -1;

	for (j = 0; j < qpg; j++)
	{
		int64_t		i = g * qpg + j,
					p;
		uint64_t	key;

		if (i >= nq)
			break;
		key = q[i];
		if (j > 0 && key == prevk)
			p = prevp;
		else
			p = group_bound<GS>(&T, key, upper, lane, gmask);
		if (lane == 0)
			pos[perm ? perm[i] : i] = p;
		prevk = key;
		prevp = p;
	}
}

static int
psa_bits_for(const hm_tree *t, const hm_opts *o)
{
	int			b = o ? o->psa_bits : -1;

	if (b < 0)
		b = hm_psa_bits(t->n, 64, 16);
	return b > 64 ? 64 : b;
}

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

/* Sort keys (device copy) by their top `bits` bits; perm = original index. */
static hm_status
psa_sort(const uint64_t *keys, int64_t n, int bits, uint64_t **skeys, uint32_t **sperm,
		 cudaStream_t s)
{
	uint32_t   *iota = NULL;
	void	   *ws = NULL;
	size_t		wsz = 0;
	hm_status	st = HM_OK;

	*skeys = NULL;
	*sperm = NULL;
	keep_pool();
	CK(cudaMallocAsync(skeys, n * 8, s));
	CK(cudaMallocAsync(sperm, n * 4, s));
	CK(cudaMallocAsync(&iota, n * 4, s));
	k_iota32<<<nblocks(n), BLK, 0, s>>>(iota, n);
	CK(cub::DeviceRadixSort::SortPairs(ws, wsz, keys, *skeys, iota, *sperm, (int) n,
									   64 - bits, 64, s));
	CK(cudaMallocAsync(&ws, wsz, s));
	CK(cub::DeviceRadixSort::SortPairs(ws, wsz, keys, *skeys, iota, *sperm, (int) n,
									   64 - bits, 64, s));
out:
	cudaFreeAsync(ws, s);
	cudaFreeAsync(iota, s);
	return st;
}

static hm_status
gpu_bound(const hm_tree *t, const uint64_t *q, int64_t nq, int64_t *pos,
		  const hm_opts *o, int upper)
{
	hm_opts		def;
	uint64_t   *sk = NULL;
	uint32_t   *sp = NULL;
	hm_status	st = HM_OK;
	int			bits,
				gs,
				qpg;
	int64_t		groups;
	cudaStream_t s = 0;

	if (!t || !t->gpu || nq < 0 || nq > (int64_t) UINT32_MAX || (nq > 0 && (!q || !pos)))
		return HM_EINVAL;
	if (nq == 0)
		return HM_OK;
	if (!o)
	{
		hm_default_opts(&def);
		o = &def;
	}
	bits = psa_bits_for(t, o);
	gs = o->group_size > 0 ? o->group_size : t->ntg;
	if (gs > 32 || (gs & (gs - 1)))
		return HM_EINVAL;
	qpg = o->combine ? 4 : 1;
	if (bits > 0 && nq > 1)
	{
		if ((st = psa_sort(q, nq, bits, &sk, &sp, s)))
			goto out;
	}
	groups = (nq + qpg - 1) / qpg;
	{
		const uint64_t *qq = sk ? sk : q;

		switch (gs)
		{
			case 1: k_bound<1><<<nblocks(groups), BLK, 0, s>>>(*t, qq, sp, nq, pos, upper, qpg); break;
			case 2: k_bound<2><<<nblocks(groups * 2), BLK, 0, s>>>(*t, qq, sp, nq, pos, upper, qpg); break;
			case 4: k_bound<4><<<nblocks(groups * 4), BLK, 0, s>>>(*t, qq, sp, nq, pos, upper, qpg); break;
			case 8: k_bound<8><<<nblocks(groups * 8), BLK, 0, s>>>(*t, qq, sp, nq, pos, upper, qpg); break;
			case 16: k_bound<16><<<nblocks(groups * 16), BLK, 0, s>>>(*t, qq, sp, nq, pos, upper, qpg); break;
			default: k_bound<32><<<nblocks(groups * 32), BLK, 0, s>>>(*t, qq, sp, nq, pos, upper, qpg); break;
		}
	}
	CK(cudaGetLastError());
out:
	cudaFreeAsync(sk, s);
	cudaFreeAsync(sp, s);
	if (st == HM_OK)
		st = cuerr(cudaStreamSynchronize(s));
	return st;
}

extern "C" hm_status
hm_gpu_lower_bound(const hm_tree *t, const uint64_t *q, int64_t nq, int64_t *pos,
				   const hm_opts *opts)
{
	return gpu_bound(t, q, nq, pos, opts, 0);
}

extern "C" hm_status
hm_gpu_upper_bound(const hm_tree *t, const uint64_t *q, int64_t nq, int64_t *pos,
				   const hm_opts *opts)
{
	return gpu_bound(t, q, nq, pos, opts, 1);
}

/* ---------------- ranges and aggregates ---------------- */

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

static __global__ void
k_agg(const __grid_constant__ hm_tree T, const hm_range *r, const uint32_t *perm,
	  int64_t n, int col, hm_agg *out)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x,
				j;
	hm_range	rr;
	hm_agg		a;

	if (i >= n)
		return;
	j = perm ? perm[i] : i;
	rr = r[j];
	hm__aggregate(&T, &rr, col, &a);
	out[j] = a;
}

/* PSA for ranges: order by the top bits of lo */
static hm_status
range_perm(const hm_tree *t, const hm_range *r, int64_t nr, const hm_opts *o,
		   uint32_t **perm)
{
	hm_opts		def;
	uint64_t   *lo = NULL,
			   *sk = NULL;
	hm_status	st = HM_OK;
	int			bits;

	*perm = NULL;
	if (!o)
	{
		hm_default_opts(&def);
		o = &def;
	}
	bits = psa_bits_for(t, o);
	if (bits == 0 || nr < 2)
		return HM_OK;
	CK(cudaMallocAsync(&lo, nr * 8, 0));
	k_lo<<<nblocks(nr), BLK>>>(r, nr, lo);
	st = psa_sort(lo, nr, bits, &sk, perm, 0);
out:
	cudaFreeAsync(lo, 0);
	cudaFreeAsync(sk, 0);
	return st;
}

extern "C" hm_status
hm_gpu_ranges(const hm_tree *t, const hm_range *r, int64_t nr,
			  int64_t *start, int64_t *end, const hm_opts *opts)
{
	uint32_t   *perm = NULL;
	hm_status	st;

	if (!t || !t->gpu || nr < 0 || nr > (int64_t) UINT32_MAX ||
		(nr > 0 && (!r || !start || !end)))
		return HM_EINVAL;
	if (nr == 0)
		return HM_OK;
	if ((st = range_perm(t, r, nr, opts, &perm)) == HM_OK)
	{
		k_ranges<<<nblocks(nr), BLK>>>(*t, r, perm, nr, start, end);
		st = cuerr(cudaGetLastError());
	}
	cudaFreeAsync(perm, 0);
	if (st == HM_OK)
		st = cuerr(cudaStreamSynchronize(0));
	return st;
}

extern "C" hm_status
hm_gpu_aggregate(const hm_tree *t, const hm_range *r, int64_t nr, int col,
				 hm_agg *out, const hm_opts *opts)
{
	uint32_t   *perm = NULL;
	hm_status	st;

	if (!t || !t->gpu || nr < 0 || nr > (int64_t) UINT32_MAX || col < -1 ||
		col >= t->ncols || (nr > 0 && (!r || !out)))
		return HM_EINVAL;
	if (nr == 0)
		return HM_OK;
	if ((st = range_perm(t, r, nr, opts, &perm)) == HM_OK)
	{
		k_agg<<<nblocks(nr), BLK>>>(*t, r, perm, nr, col, out);
		st = cuerr(cudaGetLastError());
	}
	cudaFreeAsync(perm, 0);
	if (st == HM_OK)
		st = cuerr(cudaStreamSynchronize(0));
	return st;
}

extern "C" const uint64_t *
hm_gpu_rowids(const hm_tree *t)
{
	return t->rowids;
}

/* ---------------- delta ---------------- */

/* each delete -> its main position (key and row id match), -1 if none */
static __global__ void
k_resolve(const __grid_constant__ hm_tree T, const uint64_t *k, const uint64_t *rid,
		  int64_t n, int64_t *pos)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x,
				p,
				e;

	if (i >= n)
		return;
	p = hm__bound(&T, k[i], 0);
	e = hm__bound(&T, k[i], 1);
	if (!rid)
		e = p < e ? p + 1 : p;
	while (rid && p < e && T.rowids[p] != rid[i])
		p++;
	pos[i] = p < e ? p : -1;
}

static __global__ void
k_gather(const hm_val *v, const int64_t *pos, int64_t n, hm_val *o)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;

	if (i < n)
		o[i] = v[pos[i]];
}

template <typename T>
static hm_status
upload(T **d, const T *h, int64_t n)
{
	hm_status	st = dmalloc(d, n);

	if (st == HM_OK && n > 0)
		st = cuerr(cudaMemcpy(*d, h, n * sizeof(T), cudaMemcpyHostToDevice));
	return st;
}

extern "C" hm_status
hm_gpu_set_delta(hm_tree *t, const hm_input *ins, const hm_input *del)
{
	hm_tree    *h;				/* host-side delta, built by the twin's code */
	int64_t		nd = del ? del->n : 0,
				i;
	uint64_t   *dk = NULL,
			   *dr = NULL;
	int64_t    *dpos = NULL,
			   *hpos = NULL;
	hm_val	   *dv[HM_MAX_COLS] = {NULL},
			   *gv = NULL;
	hm_status	st = HM_OK;
	int			c;

	if (!t || !t->gpu || (ins && ins->ncols != t->ncols) || nd < 0 ||
		(nd > 0 && !del->keys))
		return HM_EINVAL;
	h = (hm_tree *) calloc(1, sizeof(hm_tree));
	hpos = (int64_t *) malloc((nd + 1) * 8);
	if (!h || !hpos)
	{
		free(h);
		free(hpos);
		return HM_ENOMEM;
	}
	h->ncols = t->ncols;
	memcpy(h->coltype, t->coltype, sizeof(h->coltype));
	if (nd > 0)
	{
		if ((st = upload(&dk, del->keys, nd)) || (st = dmalloc(&dpos, nd)))
			goto out;
		if (del->rowids && (st = upload(&dr, del->rowids, nd)))
			goto out;
		k_resolve<<<nblocks(nd), BLK>>>(*t, dk, dr, nd, dpos);
		CK(cudaMemcpy(hpos, dpos, nd * 8, cudaMemcpyDeviceToHost));
		qsort(hpos, nd, 8, hm__cmp_i64);
		for (i = 0; i < nd; i++)
			if (hpos[i] < 0 || (i > 0 && hpos[i] == hpos[i - 1]))
				st = HM_EINVAL;
		if (st)
			goto out;
		CK(cudaMemcpy(dpos, hpos, nd * 8, cudaMemcpyHostToDevice));
		CK(cudaMalloc(&gv, nd * 8));
	}
	for (c = 0; c < t->ncols; c++)
	{
		dv[c] = (hm_val *) malloc((nd + 1) * 8);
		if (!dv[c])
		{
			st = HM_ENOMEM;
			goto out;
		}
		if (nd > 0)
		{
			k_gather<<<nblocks(nd), BLK>>>(t->cols[c], dpos, nd, gv);
			CK(cudaMemcpy(dv[c], gv, nd * 8, cudaMemcpyDeviceToHost));
		}
	}
	if ((st = hm__fill_delta(h, ins, hpos, nd, (const hm_val *const *) dv)))
		goto out;
	hpos = NULL;				/* now owned by h */
	dev_free_delta(t);
	t->nins = h->nins;
	t->ndel = h->ndel;
	if ((st = upload(&t->ins_keys, h->ins_keys, h->nins)) ||
		(st = upload(&t->ins_rowids, h->ins_rowids, h->nins)) ||
		(st = upload(&t->delpos, h->delpos, h->ndel)))
		goto out;
	for (c = 0; c < t->ncols; c++)
		if ((st = upload(&t->ins_cols[c], h->ins_cols[c], h->nins)) ||
			(st = upload(&t->ins_psi[c], h->ins_psi[c], h->nins + 1)) ||
			(st = upload(&t->ins_psf[c], h->ins_psf[c], h->nins + 1)) ||
			(st = upload(&t->del_psi[c], h->del_psi[c], h->ndel + 1)) ||
			(st = upload(&t->del_psf[c], h->del_psf[c], h->ndel + 1)))
			goto out;
out:
	if (st != HM_OK && hpos == NULL)
		dev_free_delta(t);
	hm__free_delta(h);
	free(h);
	free(hpos);
	for (c = 0; c < HM_MAX_COLS; c++)
		free(dv[c]);
	cudaFree(dk);
	cudaFree(dr);
	cudaFree(dpos);
	cudaFree(gv);
	return st;
}

template <typename T>
static T *
download(const T *d, int64_t n)
{
	T		   *h = (T *) malloc((n + 1) * sizeof(T));

	if (h && n > 0 && cudaMemcpy(h, d, n * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess)
	{
		free(h);
		h = NULL;
	}
	return h;
}

extern "C" hm_status
hm_gpu_merge(hm_tree *t, hm_tree **out)
{
	hm_input	m,
				ins,
				merged;
	int64_t    *delpos = NULL;
	hm_status	st = HM_ENOMEM;
	int			c;

	*out = NULL;
	if (!t || !t->gpu)
		return HM_EINVAL;
	memset(&m, 0, sizeof(m));
	memset(&ins, 0, sizeof(ins));
	m.n = t->n;
	ins.n = t->nins;
	m.ncols = ins.ncols = t->ncols;
	m.keys = download(t->keys, t->n);
	m.rowids = download(t->rowids, t->n);
	ins.keys = download(t->ins_keys, t->nins);
	ins.rowids = download(t->ins_rowids, t->nins);
	delpos = download(t->delpos, t->ndel);
	if (!m.keys || !m.rowids || !ins.keys || !ins.rowids || !delpos)
		goto out;
	for (c = 0; c < t->ncols; c++)
	{
		m.coltype[c] = ins.coltype[c] = t->coltype[c];
		m.cols[c] = download(t->cols[c], t->n);
		ins.cols[c] = download(t->ins_cols[c], t->nins);
		if (!m.cols[c] || !ins.cols[c])
			goto out;
	}
	if ((st = hm__merge_host(&m, delpos, t->ndel, &ins, &merged)) == HM_OK)
	{
		st = hm_gpu_build(&merged, t->fanout, out);
		hm__free_input(&merged);
	}
out:
	hm__free_input(&m);
	hm__free_input(&ins);
	free(delpos);
	return st;
}
