/*
 * mirror.c
 *	  The service's mirrors, over the search engine.
 *
 * A mirror keeps its keys and TIDs in the service's memory in key order,
 * and, with a usable GPU, its keys on the device too, searched in batches
 * there (cuda/gbt_sorted.cu); TIDs are gathered on the host from the
 * positions the device returns.  Without a GPU, or if a device call fails,
 * the same search runs on the CPU.
 *
 * PROVISIONAL: the device engine is the sorted-array baseline until the
 * Harmonia engine (cuda/harmonia*) is wired in.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "mirror.h"

#ifdef USE_CUDA
#include "gbt_device.h"
#include "gbt_sorted.h"
#endif

struct GbtMirror
{
	int64		n;
	uint64	   *keys;
	ItemPointerData *tids;
#ifdef USE_CUDA
	gbt_sorted *device;			/* NULL: CPU only */
#endif
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
#ifdef USE_CUDA
	if (use_gpu && gbt_sorted_build(m->keys, n, &m->device, err, errlen) != 0)
	{
		gbt_mirror_free(m);
		return NULL;
	}
#endif
	return m;
}

void
gbt_mirror_free(GbtMirror *m)
{
	if (m == NULL)
		return;
#ifdef USE_CUDA
	gbt_sorted_free(m->device);
#endif
	pfree(m->keys);
	pfree(m->tids);
	pfree(m);
}

int64
gbt_mirror_entries(const GbtMirror *m)
{
	return m->n;
}

/* Host copy, plus the device's keys. */
int64
gbt_mirror_bytes(const GbtMirror *m)
{
	int64		bytes = m->n * (int64) (sizeof(uint64) + sizeof(ItemPointerData));

#ifdef USE_CUDA
	if (m->device != NULL)
		bytes += gbt_sorted_bytes(m->device);
#endif
	return bytes;
}

bool
gbt_mirror_on_gpu(const GbtMirror *m)
{
#ifdef USE_CUDA
	return m->device != NULL;
#else
	return false;
#endif
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

#ifdef USE_CUDA
	if (m->device != NULL)
	{
		StaticAssertStmt(sizeof(int64) == sizeof(int64_t), "int64 size");
		if (gbt_sorted_ranges(m->device, lo, hi, nranges, (int64_t *) start,
							  (int64_t *) end, err, errlen) == 0)
			return true;
		/* The device failed: answer from the host copy this time. */
	}
#endif
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
#ifdef USE_CUDA
	gbt_device_props props;
	int			count;

	if (gbt_cuda_device_count(&count, why, whylen) != 0)
		return false;
	if (count == 0)
	{
		strlcpy(why, "no CUDA device found", whylen);
		return false;
	}
	if (gbt_cuda_device_props(0, &props, why, whylen) != 0)
		return false;
	strlcpy(name, props.name, namelen);
	return true;
#else
	strlcpy(why, "built without CUDA", whylen);
	return false;
#endif
}
