/*
 * keysort.c
 *	  Sorting 64-bit keys and dropping repeats on the host (keysort.h).
 */
#include <stdlib.h>
#include <string.h>

#include "keysort.h"

#define RADIX_BITS 16
#define RADIX_PASSES (64 / RADIX_BITS)
#define RADIX_MASK ((1 << RADIX_BITS) - 1)

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a;
	uint64_t	y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

/*
 * Every pass's histogram comes from one read of the keys; a pass whose
 * digit is the same in every key is skipped (small keys, narrow ranges).
 * With idx, idx[] is moved along with the keys (itmp its scratch).
 * Returns 0, or -1 when idx was given and there was no memory for the
 * counts (without idx, the keys are sorted anyway, by qsort()).
 */
static int
radix_sort(uint64_t *keys, uint64_t *tmp, uint32_t *idx, uint32_t *itmp, int64_t n)
{
	uint32_t	(*count)[1 << RADIX_BITS];
	uint64_t   *from = keys;
	uint64_t   *to = tmp;
	uint32_t   *ifrom = idx;
	uint32_t   *ito = itmp;
	int64_t		i;
	int			pass;

	for (i = 1; i < n && keys[i - 1] <= keys[i]; i++)
		;
	if (i >= n)
		return 0;
	count = calloc(RADIX_PASSES, sizeof(*count));
	if (count == NULL && idx != NULL)
		return -1;
	if (count == NULL)
	{
		qsort(keys, n, sizeof(uint64_t), cmp_u64);
		return 0;
	}
	for (i = 0; i < n; i++)
	{
		uint64_t	k = keys[i];

		for (pass = 0; pass < RADIX_PASSES; pass++)
			count[pass][(k >> (pass * RADIX_BITS)) & RADIX_MASK]++;
	}
	for (pass = 0; pass < RADIX_PASSES; pass++)
	{
		uint32_t   *c = count[pass];
		int			shift = pass * RADIX_BITS;
		uint32_t	sum = 0;
		int			d;

		if (c[(from[0] >> shift) & RADIX_MASK] == (uint32_t) n)
			continue;			/* one digit for all: already in order */
		for (d = 0; d <= RADIX_MASK; d++)
		{
			uint32_t	x = c[d];

			c[d] = sum;
			sum += x;
		}
		if (idx == NULL)
			for (i = 0; i < n; i++)
				to[c[(from[i] >> shift) & RADIX_MASK]++] = from[i];
		else
		{
			uint32_t   *t;

			for (i = 0; i < n; i++)
			{
				uint32_t	o = c[(from[i] >> shift) & RADIX_MASK]++;

				to[o] = from[i];
				ito[o] = ifrom[i];
			}
			t = ifrom;
			ifrom = ito;
			ito = t;
		}
		from = to;
		to = (to == tmp) ? keys : tmp;
	}
	if (from != keys)
	{
		memcpy(keys, from, sizeof(uint64_t) * n);
		if (idx != NULL)
			memcpy(idx, ifrom, sizeof(uint32_t) * n);
	}
	free(count);
	return 0;
}

void
gbt_radix_sort_u64(uint64_t *keys, uint64_t *tmp, int64_t n)
{
	(void) radix_sort(keys, tmp, NULL, NULL, n);
}

int64_t
gbt_sort_unique_map(uint64_t *keys, uint64_t *tmp, uint32_t *map, uint32_t *idx,
					int64_t n)
{
	int64_t		i;
	int64_t		u = 0;

	if (map == NULL)
	{
		(void) radix_sort(keys, tmp, NULL, NULL, n);
		return gbt_unique_u64(keys, n);
	}
	/* Sorted with their places (map is scratch), then each place told its key. */
	for (i = 0; i < n; i++)
		idx[i] = (uint32_t) i;
	if (radix_sort(keys, tmp, idx, map, n) != 0)
		return -1;
	for (i = 0; i < n; i++)
	{
		if (u == 0 || keys[i] != keys[u - 1])
			keys[u++] = keys[i];
		map[idx[i]] = (uint32_t) (u - 1);
	}
	return u;
}

int64_t
gbt_unique_u64(uint64_t *keys, int64_t n)
{
	int64_t		i;
	int64_t		u = 1;

	if (n < 2)
		return n;
	for (i = 1; i < n; i++)
		if (keys[i] != keys[u - 1])
			keys[u++] = keys[i];
	return u;
}
