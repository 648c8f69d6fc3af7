/*
 * harmonia_int.h
 *	  Internals shared by the CPU twin and the GPU engine: the tree struct
 *	  and the search routines, compiled by gcc for the twin and by nvcc for
 *	  device code, so both engines walk the same layout the same way.  Not
 *	  part of the public API.
 */
#ifndef HARMONIA_INT_H
#define HARMONIA_INT_H

#include "harmonia.h"

#ifdef __cplusplus
extern "C"
{
#endif

#ifdef __CUDACC__
#define HM_INLINE __host__ __device__ static inline
#else
#define HM_INLINE static inline
#endif

#define HM_MAX_LEVELS 40

#ifdef __CUDA_ARCH__
#define HM_LD(p) __ldg(p)		/* read-only data path */
#else
#define HM_LD(p) (*(p))
#endif

struct hm_tree
{
	int			gpu;			/* arrays live on the device */
	int64_t		n;
	int			fanout;
	int			nlevels;		/* internal levels above the leaves */
	int64_t		nleaves;
	int64_t		ninner;
	int64_t		lvl_start[HM_MAX_LEVELS + 1];	/* BFS index of each level */
	uint64_t   *inner;			/* ninner * fanout slots, fanout-1 keys used */
	int64_t    *child;			/* ninner + 1: first child (prefix sums) */
	uint64_t   *keys;			/* n keys: the leaves, F per leaf */

	/*
	 * The entry table: the keys' span [kmin, kmax] cut into nbuckets
	 * buckets of 2^bshift keys; entry[b] says where a search for a key of
	 * bucket b begins (hm__entry_of()), below the levels every such search
	 * would walk alike.
	 */
	uint64_t	kmin;
	uint64_t	kmax;
	int			bshift;
	int64_t		nbuckets;
	int64_t    *entry;
};

#define HM_ENTRY_MAX_BITS 20	/* at most 2^20 buckets (8 MB) */
#define HM_ENTRY_KEYS_LOG2 6	/* about 64 keys a bucket */
#define HM_ENTRY_POS 255		/* an entry that is the answer itself */

/* Level counts and BFS starts for n keys at fanout F (harmonia_cpu.c). */
extern hm_status hm__layout(hm_tree *t, int64_t n, int fanout);

#ifdef __CUDACC__
/*
 * PSA (harmonia_gpu.cu): sort keys (device) by their top `bits` bits into
 * *skeys, with *sperm the original index of each; both freed by the caller
 * with cudaFreeAsync on s.
 */
extern hm_status hm__psa_sort(const uint64_t *keys, int64_t n, int bits,
							  uint64_t **skeys, uint32_t **sperm, cudaStream_t s);

#define HM_BLK 256				/* threads per block of the kernels */

static inline unsigned
hm__nblocks(int64_t threads)
{
	return (unsigned) ((threads + HM_BLK - 1) / HM_BLK);
}

/* A CUDA error as a status, cleared so that it does not stick. */
static inline hm_status
hm__cuerr(cudaError_t e)
{
	if (e == cudaSuccess)
		return HM_OK;
	(void) cudaGetLastError();
	return e == cudaErrorMemoryAllocation ? HM_EDEVMEM : HM_ECUDA;
}

/* Run call; on failure set st and go to out. */
#define HM_CK(call) do { st = hm__cuerr(call); if (st != HM_OK) goto out; } while (0)

/* The bits PSA sorts on for a tree: psa_bits, or Equation 2 when < 0. */
static inline int
hm__psa_bits_for(const hm_tree *t, int psa_bits)
{
	if (psa_bits < 0)
		psa_bits = hm_psa_bits(t->n, 64, 16);
	return psa_bits > 64 ? 64 : psa_bits;
}
#endif

/* Separator `slot` of internal node x: the first key of child slot+1. */
HM_INLINE uint64_t
hm__sep(const hm_tree *t, const uint64_t *keys, int64_t x, int slot)
{
	int			l = 0;
	int64_t		m,
				c0,
				nch,
				span = t->fanout;
	int			h;

	while (x >= t->lvl_start[l + 1])
		l++;
	m = x - t->lvl_start[l];
	c0 = t->lvl_start[l + 1] + m * t->fanout;
	nch = (l + 1 < t->nlevels ? t->lvl_start[l + 2] : t->ninner + t->nleaves) - c0;
	if (nch > t->fanout)
		nch = t->fanout;
	if (slot >= nch - 1)
		return UINT64_MAX;		/* padding */
	for (h = t->nlevels - (l + 1); h > 0; h--)
		span *= t->fanout;		/* positions under one child */
	return keys[(m * t->fanout + slot + 1) * span];
}

/* First child of internal node x (the prefix-sum child array entry). */
HM_INLINE int64_t
hm__child0(const hm_tree *t, int64_t x)
{
	int			l = 0;

	if (x >= t->ninner)
		return t->ninner + t->nleaves;
	while (x >= t->lvl_start[l + 1])
		l++;
	return t->lvl_start[l + 1] + (x - t->lvl_start[l]) * t->fanout;
}

/* The entry table's size and bucket width for t's n keys from kmin to kmax. */
HM_INLINE void
hm__entry_layout(hm_tree *t, uint64_t kmin, uint64_t kmax)
{
	uint64_t	span = kmax - kmin;
	int			bits = 0,
				width = 0;

	while (bits < HM_ENTRY_MAX_BITS && ((int64_t) 1 << (bits + HM_ENTRY_KEYS_LOG2)) <= t->n)
		bits++;
	while (width < 63 && (span >> width) >> bits != 0)
		width++;				/* at 63, two buckets at most */
	t->kmin = kmin;
	t->kmax = kmax;
	t->bshift = width;
	t->nbuckets = t->n == 0 ? 0 : (int64_t) (span >> width) + 1;
}

/* The smallest key of bucket b, or 0 with *none set when b is past kmax. */
HM_INLINE uint64_t
hm__bucket_first(const hm_tree *t, int64_t b, int *none)
{
	*none = b >= t->nbuckets;
	return *none ? 0 : t->kmin + ((uint64_t) b << t->bshift);
}

/*
 * The entry of a bucket whose keys lie at positions [lo, hi): every key
 * before lo is below the bucket and every key from hi on above it, so a
 * search for any key of the bucket ends in [lo, hi].  An empty bucket's
 * entry is that position (level HM_ENTRY_POS); another's the lowest node
 * whose subtree holds [lo, hi - 1], as (node << 8) | level: a walk from
 * there ends where one from the root would, its subtree's end included.
 */
HM_INLINE int64_t
hm__entry_of(const hm_tree *t, int64_t lo, int64_t hi)
{
	int64_t		a,
				z;
	int			l = t->nlevels;

	if (lo >= hi)
		return (lo << 8) | HM_ENTRY_POS;
	a = lo / t->fanout;
	z = (hi - 1) / t->fanout;
	while (a != z)
	{
		a /= t->fanout;
		z /= t->fanout;
		l--;
	}
	return ((t->lvl_start[l] + a) << 8) | l;
}

/*
 * How many of node[0..F) are below q (upper: not above q).  Every slot is
 * read and counted, with no early exit, so that the loads of one node issue
 * together (on the GPU as 16-byte loads of an aligned node) instead of one
 * after another; a node's slots are sorted, so the count is the position.
 */
HM_INLINE int
hm__node_count(const uint64_t *node, const int F, uint64_t q, int upper)
{
	int			c = 0,
				s;

#ifdef __CUDA_ARCH__
	const ulonglong2 *v = (const ulonglong2 *) node;

#pragma unroll
	for (s = 0; s < F / 2; s++)
	{
		ulonglong2	w = __ldg(&v[s]);

		c += upper ? (w.x <= q) + (w.y <= q) : (w.x < q) + (w.y < q);
	}
#else
	for (s = 0; s < F; s++)
		c += upper ? node[s] <= q : node[s] < q;
#endif
	return c;
}

/*
 * Sequential (one-thread) search at fanout F: first position with key > q
 * (upper) or >= q.  It starts where the entry table says, not at the root.
 * The tree is complete in breadth-first order, so a node's first child and
 * its number of keys follow from the level starts (the child array holds
 * the same numbers): no load but the table's and the nodes' own.  Inner
 * slots past a node's keys are UINT64_MAX, which "not above UINT64_MAX"
 * counts: the count is capped at the node's keys.
 */
HM_INLINE int64_t
hm__bound_f(const hm_tree *t, uint64_t q, int upper, const int F)
{
	int64_t		x,
				p,
				e,
				start;
	int			l,
				c;

	if (t->n == 0 || q < t->kmin)
		return 0;
	if (q > t->kmax)
		return t->n;
	start = HM_LD(&t->entry[(q - t->kmin) >> t->bshift]);
	x = start >> 8;
	l = (int) (start & 0xff);
	if (l == HM_ENTRY_POS)
		return x;
	for (; l < t->nlevels; l++)
	{
		int64_t		c0 = t->lvl_start[l + 1] + (x - t->lvl_start[l]) * F;
		int64_t		level_end = l + 1 < t->nlevels ? t->lvl_start[l + 2] :
			t->ninner + t->nleaves;
		int64_t		nk = (level_end - c0 < F ? level_end - c0 : F) - 1;

		c = hm__node_count(t->inner + x * F, F, q, upper);
		x = c0 + (c < nk ? c : nk);
	}
	p = (x - t->ninner) * F;
	e = p + F < t->n ? p + F : t->n;
	if (e - p == F)
		return p + hm__node_count(t->keys + p, F, q, upper);
	if (upper)
		while (p < e && HM_LD(&t->keys[p]) <= q)
			p++;
	else
		while (p < e && HM_LD(&t->keys[p]) < q)
			p++;
	return p;
}

/* hm__bound_f() at the tree's fanout, a constant in each copy. */
HM_INLINE int64_t
hm__bound(const hm_tree *t, uint64_t q, int upper)
{
	switch (t->fanout)
	{
		case 8:
			return hm__bound_f(t, q, upper, 8);
		case 16:
			return hm__bound_f(t, q, upper, 16);
		case 32:
			return hm__bound_f(t, q, upper, 32);
		case 64:
			return hm__bound_f(t, q, upper, 64);
		default:
			return hm__bound_f(t, q, upper, 128);
	}
}

HM_INLINE void
hm__range_pos(const hm_tree *t, const hm_range *r, int64_t *s, int64_t *e)
{
	*s = hm__bound(t, r->lo, !r->lo_incl);
	*e = hm__bound(t, r->hi, r->hi_incl);
	if (*e < *s)
		*e = *s;
}

#ifdef __cplusplus
}
#endif

#endif							/* HARMONIA_INT_H */
