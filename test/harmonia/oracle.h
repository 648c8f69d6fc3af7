/* Naive reference for the Harmonia tests: plain sorted arrays, linear loops. */
#ifndef HM_ORACLE_H
#define HM_ORACLE_H
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "bound.h"

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

#endif
