/*
 * mirror.c
 *	  The service's mirrors, over the search engine.
 *
 * PROVISIONAL: until the Harmonia engine (cuda/harmonia*) is wired in, a
 * mirror is a sorted key array searched by binary search on the CPU.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "mirror.h"

struct GbtMirror
{
	int64		n;
	uint64	   *keys;
	ItemPointerData *tids;
};

GbtMirror *
gbt_mirror_build(const uint64 *keys, const ItemPointerData *tids, int64 n,
				 bool use_gpu, char *err, Size errlen)
{
	GbtMirror  *m = MemoryContextAllocZero(TopMemoryContext, sizeof(GbtMirror));

	m->n = n;
	m->keys = MemoryContextAllocHuge(TopMemoryContext, sizeof(uint64) * Max(n, 1));
	m->tids = MemoryContextAllocHuge(TopMemoryContext, sizeof(ItemPointerData) * Max(n, 1));
	memcpy(m->keys, keys, sizeof(uint64) * n);
	memcpy(m->tids, tids, sizeof(ItemPointerData) * n);
	return m;
}

void
gbt_mirror_free(GbtMirror *m)
{
	if (m == NULL)
		return;
	pfree(m->keys);
	pfree(m->tids);
	pfree(m);
}

int64
gbt_mirror_entries(const GbtMirror *m)
{
	return m->n;
}

int64
gbt_mirror_bytes(const GbtMirror *m)
{
	return m->n * (int64) (sizeof(uint64) + sizeof(ItemPointerData));
}

bool
gbt_mirror_on_gpu(const GbtMirror *m)
{
	return false;
}

/* First position whose key is >= k (or > k when upper). */
static int64
bound(const GbtMirror *m, uint64 k, bool upper)
{
	int64		lo = 0,
				hi = m->n;

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;

		if (m->keys[mid] < k || (upper && m->keys[mid] == k))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool
gbt_mirror_ranges(GbtMirror *m, const uint64 *lo, const uint64 *hi,
				  int64 nranges, int64 *start, int64 *end,
				  char *err, Size errlen)
{
	int64		i;

	for (i = 0; i < nranges; i++)
	{
		start[i] = bound(m, lo[i], false);
		end[i] = lo[i] <= hi[i] ? bound(m, hi[i], true) : start[i];
	}
	return true;
}

void
gbt_mirror_tids(const GbtMirror *m, int64 start, int64 end, ItemPointerData *out)
{
	memcpy(out, m->tids + start, sizeof(ItemPointerData) * (end - start));
}

bool
gbt_engine_gpu_usable(char *name, Size namelen, char *why, Size whylen)
{
	strlcpy(why, "the Harmonia engine is not wired in yet", whylen);
	return false;
}
