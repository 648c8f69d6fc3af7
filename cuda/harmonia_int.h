/*
 * harmonia_int.h
 *	  Internals shared by the CPU twin and the GPU engine: the tree struct
 *	  and the search / aggregate routines, compiled by gcc for the twin and
 *	  by nvcc for device code, so both engines walk the same layout the same
 *	  way.  Not part of the public API.
 */
#ifndef HARMONIA_INT_H
#define HARMONIA_INT_H

#include "harmonia.h"
#include "harmonia_keys.h"

#define HM_MAX_LEVELS 40

#ifdef __CUDA_ARCH__
#define HM_LD(p) __ldg(p)		/* read-only data path */
#else
#define HM_LD(p) (*(p))
#endif

typedef struct hm_i128
{
	uint64_t	lo;
	uint64_t	hi;				/* two's complement high word */
} hm_i128;

typedef struct hm_dd
{
	double		hi;
	double		lo;
} hm_dd;

typedef union hm_val
{
	int64_t		i;
	double		f;
} hm_val;

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
	uint64_t   *rowids;
	int			ncols;
	hm_coltype	coltype[HM_MAX_COLS];
	hm_val	   *cols[HM_MAX_COLS];
	hm_i128    *psi[HM_MAX_COLS];	/* n + 1 prefix sums, int64 columns */
	hm_dd	   *psf[HM_MAX_COLS];	/* n + 1 prefix sums, float8 columns */
	int			ntg;			/* group size chosen at build (GPU) */
	int			nmm;			/* min/max levels above the column */
	int64_t		mm_len[HM_MAX_LEVELS];
	hm_val	   *mmin[HM_MAX_COLS][HM_MAX_LEVELS];
	hm_val	   *mmax[HM_MAX_COLS][HM_MAX_LEVELS];
	/* delta: sorted inserts with payload, deletes as main-tree positions */
	int64_t		nins;
	uint64_t   *ins_keys;
	uint64_t   *ins_rowids;
	hm_val	   *ins_cols[HM_MAX_COLS];
	hm_i128    *ins_psi[HM_MAX_COLS];
	hm_dd	   *ins_psf[HM_MAX_COLS];
	int64_t		ndel;
	int64_t    *delpos;
	hm_i128    *del_psi[HM_MAX_COLS];
	hm_dd	   *del_psf[HM_MAX_COLS];
};

/* helpers shared with harmonia_gpu.cu (defined in harmonia_cpu.c) */
extern hm_status hm__layout(hm_tree *t, int64_t n, int fanout);
extern int	hm__ntg_model(const int32_t *cidx, int64_t nsample, int nlev, int fanout);
extern hm_status hm__merge_host(const hm_input *main_in, const int64_t *delpos,
								int64_t ndel, const hm_input *ins, hm_input *out);
extern void hm__free_input(hm_input *in);
extern void hm__free_delta(hm_tree *t);
extern hm_status hm__fill_delta(hm_tree *t, const hm_input *ins, int64_t *delpos,
								int64_t ndel, const hm_val *const *delvals);
extern int	hm__cmp_i64(const void *a, const void *b);

HM_INLINE	hm_i128
hm__add128(hm_i128 a, hm_i128 b)
{
	hm_i128		r;

	r.lo = a.lo + b.lo;
	r.hi = a.hi + b.hi + (r.lo < a.lo);
	return r;
}

HM_INLINE	hm_i128
hm__sub128(hm_i128 a, hm_i128 b)
{
	hm_i128		r;

	r.lo = a.lo - b.lo;
	r.hi = a.hi - b.hi - (a.lo < b.lo);
	return r;
}

HM_INLINE	hm_i128
hm__from64(int64_t v)
{
	hm_i128		r;

	r.lo = (uint64_t) v;
	r.hi = v < 0 ? ~(uint64_t) 0 : 0;
	return r;
}

/* double-double addition (two-sum), so long prefix sums keep their bits */
HM_INLINE	hm_dd
hm__adddd(hm_dd a, hm_dd b)
{
	double		s = a.hi + b.hi;
	double		bb = s - a.hi;
	double		err = (a.hi - (s - bb)) + (b.hi - bb);
	double		lo = a.lo + b.lo + err;
	hm_dd		r;

	r.hi = s + lo;
	r.lo = lo - (r.hi - s);
	return r;
}

HM_INLINE double
hm__ddrange(hm_dd a, hm_dd b)	/* b - a */
{
	return (b.hi - a.hi) + (b.lo - a.lo);
}

/* float order with NaN above everything, as PostgreSQL sorts float8 */
HM_INLINE int
hm__fless(double a, double b)
{
	if (b != b)
		return a == a;
	if (a != a)
		return 0;
	return a < b;
}

HM_INLINE int
hm__vless(hm_val a, hm_val b, int isf)
{
	return isf ? hm__fless(a.f, b.f) : a.i < b.i;
}

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

/* Sequential (one-thread) search: first position with key > q (upper) or >= q. */
HM_INLINE int64_t
hm__bound(const hm_tree *t, uint64_t q, int upper)
{
	int64_t		x = 0,
				p,
				e;
	int			l,
				c,
				nk;
	const uint64_t *node;

	if (t->n == 0)
		return 0;
	for (l = 0; l < t->nlevels; l++)
	{
		int64_t		c0 = HM_LD(&t->child[x]);

		nk = (int) (HM_LD(&t->child[x + 1]) - c0) - 1;
		node = t->inner + x * t->fanout;
		c = 0;
		if (upper)
			while (c < nk && HM_LD(&node[c]) <= q)
				c++;
		else
			while (c < nk && HM_LD(&node[c]) < q)
				c++;
		x = c0 + c;
	}
	p = (x - t->ninner) * t->fanout;
	e = p + t->fanout < t->n ? p + t->fanout : t->n;
	if (upper)
		while (p < e && HM_LD(&t->keys[p]) <= q)
			p++;
	else
		while (p < e && HM_LD(&t->keys[p]) < q)
			p++;
	return p;
}

/* binary search in a plain sorted array */
HM_INLINE int64_t
hm__bsearch_u64(const uint64_t *a, int64_t n, uint64_t q, int upper)
{
	int64_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;
		uint64_t	v = a[mid];

		if (upper ? v <= q : v < q)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

HM_INLINE int64_t
hm__bsearch_i64(const int64_t *a, int64_t n, int64_t q)
{
	int64_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (a[mid] < q)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

HM_INLINE void
hm__range_pos(const hm_tree *t, const hm_range *r, int64_t *s, int64_t *e)
{
	*s = hm__bound(t, r->lo, !r->lo_incl);
	*e = hm__bound(t, r->hi, r->hi_incl);
	if (*e < *s)
		*e = *s;
}

HM_INLINE void
hm__take(hm_val v, int isf, hm_val *mn, hm_val *mx, int *have)
{
	if (!*have || hm__vless(v, *mn, isf))
		*mn = v;
	if (!*have || hm__vless(*mx, v, isf))
		*mx = v;
	*have = 1;
}

/* min/max of column c over main positions [a, b): O(F log_F n) */
HM_INLINE void
hm__minmax(const hm_tree *t, int c, int64_t a, int64_t b,
		   hm_val *mn, hm_val *mx, int *have)
{
	int			isf = t->coltype[c] == HM_FLOAT8;
	int			l;
	int64_t		F = t->fanout;

	for (l = 0; a < b; l++)
	{
		const hm_val *lo = l == 0 ? t->cols[c] : t->mmin[c][l - 1];
		const hm_val *hi = l == 0 ? t->cols[c] : t->mmax[c][l - 1];

		if (l == t->nmm)
		{
			for (; a < b; a++)
			{
				hm__take(lo[a], isf, mn, mx, have);
				hm__take(hi[a], isf, mn, mx, have);
			}
			break;
		}
		while (a < b && a % F)
		{
			hm__take(lo[a], isf, mn, mx, have);
			hm__take(hi[a], isf, mn, mx, have);
			a++;
		}
		while (a < b && b % F)
		{
			b--;
			hm__take(lo[b], isf, mn, mx, have);
			hm__take(hi[b], isf, mn, mx, have);
		}
		a /= F;
		b /= F;
	}
}

/* Aggregate of column col (-1: count only) over a key range, main + delta. */
HM_INLINE void
hm__aggregate(const hm_tree *t, const hm_range *r, int col, hm_agg *o)
{
	int64_t		a,
				b,
				da = 0,
				db = 0,
				ia = 0,
				ib = 0,
				k;
	int			have = 0,
				isf = col >= 0 && t->coltype[col] == HM_FLOAT8;
	hm_val		mn,
				mx;
	hm_i128		si;
	double		sf = 0;

	mn.i = 0;
	mx.i = 0;
	hm__range_pos(t, r, &a, &b);
	if (t->ndel > 0)
	{
		da = hm__bsearch_i64(t->delpos, t->ndel, a);
		db = hm__bsearch_i64(t->delpos, t->ndel, b);
	}
	if (t->nins > 0)
	{
		ia = hm__bsearch_u64(t->ins_keys, t->nins, r->lo, !r->lo_incl);
		ib = hm__bsearch_u64(t->ins_keys, t->nins, r->hi, r->hi_incl);
		if (ib < ia)
			ib = ia;
	}
	o->count = (b - a) - (db - da) + (ib - ia);
	o->sum_hi = 0;
	o->sum_lo = 0;
	o->sum_f = 0;
	o->min_i = o->max_i = 0;
	o->min_f = o->max_f = 0;
	if (col < 0)
		return;
	if (isf)
	{
		sf = hm__ddrange(t->psf[col][a], t->psf[col][b]);
		if (db > da)
			sf -= hm__ddrange(t->del_psf[col][da], t->del_psf[col][db]);
		if (ib > ia)
			sf += hm__ddrange(t->ins_psf[col][ia], t->ins_psf[col][ib]);
		o->sum_f = sf;
	}
	else
	{
		si = hm__sub128(t->psi[col][b], t->psi[col][a]);
		if (db > da)
			si = hm__sub128(si, hm__sub128(t->del_psi[col][db], t->del_psi[col][da]));
		if (ib > ia)
			si = hm__add128(si, hm__sub128(t->ins_psi[col][ib], t->ins_psi[col][ia]));
		o->sum_lo = si.lo;
		o->sum_hi = (int64_t) si.hi;
	}
	/* min/max: main range split around deleted positions, then inserts */
	for (k = da; k < db; k++)
	{
		hm__minmax(t, col, a, t->delpos[k], &mn, &mx, &have);
		a = t->delpos[k] + 1;
	}
	hm__minmax(t, col, a, b, &mn, &mx, &have);
	for (k = ia; k < ib; k++)
		hm__take(t->ins_cols[col][k], isf, &mn, &mx, &have);
	if (isf)
	{
		o->min_f = mn.f;
		o->max_f = mx.f;
	}
	else
	{
		o->min_i = mn.i;
		o->max_i = mx.i;
	}
}

#endif							/* HARMONIA_INT_H */
