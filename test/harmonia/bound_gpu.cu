/*
 * bound_gpu.cu
 *	  The GPU side of bound.h: NTG profiling and the group-per-query bound
 *	  kernels, after PSA (hm__psa_sort, the engine's) when it is on.
 */
#include <stdlib.h>
#include <string.h>

#include "bound.h"

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
		k_trace<<<hm__nblocks(nsample), HM_BLK>>>(*t, dq, nsample, dc);
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

	if (GS == 1)
		return hm__bound(T, key, upper);	/* the engine's own walk */
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
static __global__ void __launch_bounds__(HM_BLK)
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
	bits = hm__psa_bits_for(t, o->psa_bits);
	gs = o->group_size;
	if (gs < 1 || gs > 32 || (gs & (gs - 1)))
		return HM_EINVAL;
	qpg = o->combine ? 4 : 1;
	if (bits > 0 && nq > 1)
	{
		if ((st = hm__psa_sort(q, nq, bits, &sk, &sp, s)))
			goto out;
	}
	groups = (nq + qpg - 1) / qpg;
	{
		const uint64_t *qq = sk ? sk : q;

		switch (gs)
		{
			case 1: k_bound<1><<<hm__nblocks(groups), HM_BLK, 0, s>>>(*t, qq, sp, nq, pos, upper, qpg); break;
			case 2: k_bound<2><<<hm__nblocks(groups * 2), HM_BLK, 0, s>>>(*t, qq, sp, nq, pos, upper, qpg); break;
			case 4: k_bound<4><<<hm__nblocks(groups * 4), HM_BLK, 0, s>>>(*t, qq, sp, nq, pos, upper, qpg); break;
			case 8: k_bound<8><<<hm__nblocks(groups * 8), HM_BLK, 0, s>>>(*t, qq, sp, nq, pos, upper, qpg); break;
			case 16: k_bound<16><<<hm__nblocks(groups * 16), HM_BLK, 0, s>>>(*t, qq, sp, nq, pos, upper, qpg); break;
			default: k_bound<32><<<hm__nblocks(groups * 32), HM_BLK, 0, s>>>(*t, qq, sp, nq, pos, upper, qpg); break;
		}
	}
	HM_CK(cudaGetLastError());
out:
	cudaFreeAsync(sk, s);
	cudaFreeAsync(sp, s);
	if (st == HM_OK)
		st = hm__cuerr(cudaStreamSynchronize(s));
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
