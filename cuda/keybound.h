/*
 * keybound.h
 *	  The first position of a sorted uint64 array at or after a key (or
 *	  after it), found near where the key would be if the keys were spread
 *	  evenly: the service's search of a range's ends in a mirror's keys.
 *	  Plain C, header only.
 *
 * A binary search of 2^26 keys (512 MB) misses the caches and the TLB at
 * each of its last dozen or so steps: 5-6 us, most of a batch's positions
 * on the host at 64 clients.  Keys of a table usually grow about evenly
 * (serials, timestamps), so one interpolated guess lands within a few
 * positions; a gallop from it of at most GBT_NEAR_GALLOP doublings (all
 * within 2 KB of the guess) brackets the answer, and only when it does not
 * (skewed keys) does a binary search of what is left follow: at most a few
 * cache lines more than the binary search alone.  Same answer as the
 * binary search, whatever the keys.
 */
#ifndef GBT_KEYBOUND_H
#define GBT_KEYBOUND_H

#include <stdbool.h>
#include <stdint.h>

#define GBT_NEAR_GALLOP 8
#define GBT_NEAR_MIN 64			/* shorter arrays: the binary search */

/* The first position in [lo, hi) whose key is after x (at or after: !after). */
static inline int64_t
gbt_sorted_bound(const uint64_t *v, int64_t lo, int64_t hi, uint64_t x, bool after)
{
	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (v[mid] < x || (after && v[mid] == x))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* gbt_sorted_bound(v, 0, n, x, after), begun at an interpolated guess. */
static inline int64_t
gbt_sorted_bound_near(const uint64_t *v, int64_t n, uint64_t x, bool after)
{
	int64_t		g,
				lo,
				hi,
				step = 1;
	int			k;

	if (n < GBT_NEAR_MIN || v[0] >= v[n - 1])
		return gbt_sorted_bound(v, 0, n, x, after);
	if (x <= v[0])
		g = 0;
	else if (x >= v[n - 1])
		g = n - 1;
	else
		g = (int64_t) ((double) (x - v[0]) / (double) (v[n - 1] - v[0]) * (double) (n - 1));
	g = g < 0 ? 0 : g > n - 1 ? n - 1 : g;

	/* Every position below lo is before the answer, none from hi on. */
	if (v[g] < x || (after && v[g] == x))
	{
		lo = g + 1;
		hi = n;
		for (k = 0; k < GBT_NEAR_GALLOP && g + step < n; k++, step <<= 1)
		{
			if (!(v[g + step] < x || (after && v[g + step] == x)))
			{
				hi = g + step;
				break;
			}
			lo = g + step + 1;
		}
	}
	else
	{
		lo = 0;
		hi = g;
		for (k = 0; k < GBT_NEAR_GALLOP && g - step >= 0; k++, step <<= 1)
		{
			if (v[g - step] < x || (after && v[g - step] == x))
			{
				lo = g - step + 1;
				break;
			}
			hi = g - step;
		}
	}
	return gbt_sorted_bound(v, lo, hi, x, after);
}

#endif							/* GBT_KEYBOUND_H */
