/* Naive reference for the Harmonia tests: plain sorted arrays, linear loops. */
#ifndef HM_ORACLE_H
#define HM_ORACLE_H
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../../cuda/harmonia.h"

static uint64_t rng_s;
static inline uint64_t
rnd(void)
{
	/* splitmix64 */
	uint64_t	z = (rng_s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int
o_cmpu(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

static inline int64_t
o_bound(const uint64_t *k, int64_t n, uint64_t q, int upper)
{
	int64_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		int64_t		m = (lo + hi) / 2;

		if (upper ? k[m] <= q : k[m] < q)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

/* key distributions: 0 uniform, 1 heavy duplicates, 2 extremes, 3 narrow */
static inline uint64_t
o_key(int dist)
{
	static const uint64_t ext[] = {0, 1, UINT64_MAX, UINT64_MAX - 1,
		1ULL << 63, (1ULL << 63) - 1, (1ULL << 63) + 1, 0x7ff0000000000000ULL};

	switch (dist)
	{
		case 0:
			return rnd();
		case 1:
			return rnd() % 7 * 1000003;
		case 2:
			return (rnd() & 3) ? ext[rnd() % 8] : rnd();
		default:
			return (1ULL << 63) + rnd() % 100000;
	}
}

static inline void
o_keys(uint64_t *k, int64_t n, int dist)
{
	int64_t		i;

	for (i = 0; i < n; i++)
		k[i] = o_key(dist);
	qsort(k, n, sizeof(uint64_t), o_cmpu);
}

static inline void
o_range(hm_range *r, const uint64_t *k, int64_t n, int dist)
{
	r->lo = (n > 0 && (rnd() & 1)) ? k[rnd() % n] : o_key(dist);
	r->hi = (n > 0 && (rnd() & 1)) ? k[rnd() % n] : o_key(dist);
	if ((rnd() % 4) != 0 && r->lo > r->hi)
	{
		uint64_t	x = r->lo;

		r->lo = r->hi;
		r->hi = x;
	}
	if (rnd() % 8 == 0)
		r->hi = r->lo;
	r->lo_incl = rnd() & 1;
	r->hi_incl = rnd() & 1;
}

/* naive aggregate over entries (k, v) with a key in r */
static inline void
o_agg(const uint64_t *k, const void *col, int isf, int64_t n, const hm_range *r,
	  hm_agg *o)
{
	int64_t		i;
	__int128	si = 0;
	double		sf = 0;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < n; i++)
	{
		if (k[i] < r->lo || (k[i] == r->lo && !r->lo_incl) ||
			k[i] > r->hi || (k[i] == r->hi && !r->hi_incl))
			continue;
		if (col && isf)
		{
			double		v = ((const double *) col)[i];

			sf += v;
			if (o->count == 0 || v < o->min_f)
				o->min_f = v;
			if (o->count == 0 || v > o->max_f)
				o->max_f = v;
		}
		else if (col)
		{
			int64_t		v = ((const int64_t *) col)[i];

			si += v;
			if (o->count == 0 || v < o->min_i)
				o->min_i = v;
			if (o->count == 0 || v > o->max_i)
				o->max_i = v;
		}
		o->count++;
	}
	o->sum_lo = (uint64_t) si;
	o->sum_hi = (int64_t) (si >> 64);
	o->sum_f = sf;
}

/* compare aggregates; float sums to a tolerance scaled by magnitude */
static inline int
o_agg_eq(const hm_agg *a, const hm_agg *b, int isf, double scale)
{
	if (a->count != b->count)
		return 0;
	if (a->count == 0)
		return 1;
	if (isf)
		return fabs(a->sum_f - b->sum_f) <= 1e-9 * scale + 1e-300 &&
			a->min_f == b->min_f && a->max_f == b->max_f;
	return a->sum_lo == b->sum_lo && a->sum_hi == b->sum_hi &&
		a->min_i == b->min_i && a->max_i == b->max_i;
}
#endif
