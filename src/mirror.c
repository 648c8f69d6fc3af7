/*
 * mirror.c
 *	  The service's mirrors, over the search engine.
 *
 * A mirror is one Harmonia tree of the index's keys (cuda/harmonia.h):
 * with a usable GPU, Harmonia's GPU tree, searched in batches there
 * (cuda/gbt_mirror_gpu.cu); otherwise Harmonia's CPU twin.  TIDs stay in
 * the service's memory in key order and are gathered on the host from the
 * positions the search returns.  If a device call fails, the request fails
 * and the backend's scan is answered by nbtree.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "harmonia.h"
#include "mirror.h"

#ifdef USE_CUDA
#include "gbt_device.h"
#include "gbt_mirror_gpu.h"
#endif

struct GbtMirror
{
	int64		n;
	hm_tree    *tree;			/* Harmonia's CPU twin, when not on the GPU */
	ItemPointerData *tids;
#ifdef USE_CUDA
	gbt_mirror_gpu *device;		/* NULL: CPU only */
#endif
};

GbtMirror *
gbt_mirror_build(const uint64 *keys, const ItemPointerData *tids, int64 n,
				 bool use_gpu, char *err, Size errlen)
{
	GbtMirror  *m = MemoryContextAllocZero(TopMemoryContext, sizeof(GbtMirror));

	hm_input	in;
	hm_status	status;

	m->n = n;
	m->tids = MemoryContextAllocHuge(TopMemoryContext, sizeof(ItemPointerData) * Max(n, 1));
	memcpy(m->tids, tids, sizeof(ItemPointerData) * n);
#ifdef USE_CUDA
	if (use_gpu)
	{
		if (gbt_mirror_gpu_build(keys, n, HM_DEFAULT_FANOUT, &m->device, err, errlen) != 0)
		{
			gbt_mirror_free(m);
			return NULL;
		}
		return m;
	}
#endif
	memset(&in, 0, sizeof(in));
	in.n = n;
	in.keys = keys;
	status = hm_cpu_build(&in, HM_DEFAULT_FANOUT, &m->tree);
	if (status != HM_OK)
	{
		strlcpy(err, hm_strerror(status), errlen);
		gbt_mirror_free(m);
		return NULL;
	}
	return m;
}

void
gbt_mirror_free(GbtMirror *m)
{
	if (m == NULL)
		return;
#ifdef USE_CUDA
	gbt_mirror_gpu_free(m->device);
#endif
	if (m->tree != NULL)
		hm_cpu_free(m->tree);
	pfree(m->tids);
	pfree(m);
}

int64
gbt_mirror_entries(const GbtMirror *m)
{
	return m->n;
}

/* TIDs, plus the tree (host or device). */
int64
gbt_mirror_bytes(const GbtMirror *m)
{
	int64		bytes = m->n * (int64) sizeof(ItemPointerData);

	if (m->tree != NULL)
		bytes += hm_bytes(m->tree);

#ifdef USE_CUDA
	if (m->device != NULL)
		bytes += gbt_mirror_gpu_bytes(m->device);
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

bool
gbt_mirror_ranges(GbtMirror *m, const uint64 *lo, const uint64 *hi,
				  int64 nranges, int64 *start, int64 *end,
				  char *err, Size errlen)
{
	int64		i;

	StaticAssertStmt(sizeof(int64) == sizeof(int64_t), "int64 size");
#ifdef USE_CUDA
	if (m->device != NULL)
		return gbt_mirror_gpu_ranges(m->device, lo, hi, nranges, (int64_t *) start,
									 (int64_t *) end, err, errlen) == 0;
#endif
	{
		hm_range   *r = palloc_extended(sizeof(hm_range) * Max(nranges, 1), MCXT_ALLOC_HUGE);
		hm_opts		opts;
		hm_status	status;

		for (i = 0; i < nranges; i++)
		{
			r[i].lo = lo[i];
			r[i].hi = hi[i];
			r[i].lo_incl = r[i].hi_incl = 1;
		}
		hm_default_opts(&opts);
		status = hm_cpu_ranges(m->tree, r, nranges, (int64_t *) start, (int64_t *) end, &opts);
		pfree(r);
		if (status != HM_OK)
		{
			strlcpy(err, hm_strerror(status), errlen);
			return false;
		}
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
