/*
 * mirror.c
 *	  The service's mirrors, over the search engine.
 *
 * A mirror is one Harmonia tree of the index's keys (cuda/harmonia.h):
 * with a usable GPU, Harmonia's GPU tree, searched in batches there
 * (cuda/gbt_mirror_gpu.cu); otherwise Harmonia's CPU twin.  TIDs stay in
 * the service's memory in (key, TID) order and are gathered on the host
 * from the positions the search returns; the delta is searched here too.  If a device call fails, the request fails
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

/*
 * The tree holds keys[0..n) (its own copy, on the device or in the CPU
 * twin); keys and TIDs stay here too, for the delta's bookkeeping and for
 * gathering TIDs by position.  Entries VACUUM removed from the tree are
 * marked in removed[]; entries inserted since the build sit in ins_*, in
 * (key, TID) order.  When the delta grows, the service merges it into a new
 * tree.
 */
struct GbtMirror
{
	int64		n;
	uint64	   *keys;
	ItemPointerData *tids;
	uint8	   *removed;		/* bit per tree position; NULL: none yet */
	int64		nremoved;
	int64		nins;
	uint64	   *ins_keys;
	ItemPointerData *ins_tids;
	hm_tree    *tree;			/* Harmonia's CPU twin, when not on the GPU */
#ifdef USE_CUDA
	gbt_mirror_gpu *device;		/* NULL: CPU only */
#endif
};

#define IS_REMOVED(m, i) ((m)->removed != NULL && \
						  ((m)->removed[(i) >> 3] & (1 << ((i) & 7))) != 0)

static void *
alloc_huge(Size size)
{
	return MemoryContextAllocHuge(TopMemoryContext, Max(size, 1));
}

/* (key, TID) order, the order of nbtree's heapkeyspace indexes. */
static inline int
entry_cmp(uint64 ka, const ItemPointerData *ta, uint64 kb, const ItemPointerData *tb)
{
	if (ka != kb)
		return ka < kb ? -1 : 1;
	return ItemPointerCompare((ItemPointer) ta, (ItemPointer) tb);
}

/* Position of (key, tid) in sorted arrays of n entries, or -1. */
static int64
find_entry(const uint64 *keys, const ItemPointerData *tids, int64 n,
		   uint64 key, const ItemPointerData *tid)
{
	int64		lo = 0;
	int64		hi = n;

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;

		if (entry_cmp(keys[mid], &tids[mid], key, tid) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && entry_cmp(keys[lo], &tids[lo], key, tid) == 0 ? lo : -1;
}

/* First position in keys[0..n) whose key is >= key (or > key if after). */
static int64
key_bound(const uint64 *keys, int64 n, uint64 key, bool after)
{
	int64		lo = 0;
	int64		hi = n;

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;

		if (keys[mid] < key || (after && keys[mid] == key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

GbtMirror *
gbt_mirror_build(const uint64 *keys, const ItemPointerData *tids, int64 n,
				 bool use_gpu, char *err, Size errlen)
{
	GbtMirror  *m = MemoryContextAllocZero(TopMemoryContext, sizeof(GbtMirror));
	hm_input	in;
	hm_status	status;

	m->n = n;
	m->keys = alloc_huge(sizeof(uint64) * n);
	m->tids = alloc_huge(sizeof(ItemPointerData) * n);
	memcpy(m->keys, keys, sizeof(uint64) * n);
	memcpy(m->tids, tids, sizeof(ItemPointerData) * n);
	m->ins_keys = alloc_huge(0);
	m->ins_tids = alloc_huge(0);
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
	pfree(m->keys);
	pfree(m->tids);
	if (m->removed)
		pfree(m->removed);
	if (m->ins_keys)
		pfree(m->ins_keys);
	if (m->ins_tids)
		pfree(m->ins_tids);
	pfree(m);
}

int64
gbt_mirror_entries(const GbtMirror *m)
{
	return m->n - m->nremoved + m->nins;
}

int64
gbt_mirror_delta(const GbtMirror *m)
{
	return m->nremoved + m->nins;
}

/* Keys, TIDs and the delta here, plus the tree (host or device). */
int64
gbt_mirror_bytes(const GbtMirror *m)
{
	int64		bytes = (m->n + m->nins) * (int64) (sizeof(uint64) + sizeof(ItemPointerData));

	if (m->removed != NULL)
		bytes += m->n / 8 + 1;
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

typedef struct Entry
{
	uint64		key;
	ItemPointerData tid;
} Entry;

static int
entry_qsort_cmp(const void *a, const void *b)
{
	const Entry *ea = a;
	const Entry *eb = b;

	return entry_cmp(ea->key, &ea->tid, eb->key, &eb->tid);
}

int64
gbt_mirror_insert(GbtMirror *m, uint64 *keys, ItemPointerData *tids, int64 n)
{
	Entry	   *in = alloc_huge(sizeof(Entry) * n);
	int64		nnew = 0;
	int64		added = 0;
	int64		i;
	int64		a,
				b,
				o;
	uint64	   *nk;
	ItemPointerData *nt;

	for (i = 0; i < n; i++)
	{
		in[i].key = keys[i];
		in[i].tid = tids[i];
	}
	qsort(in, n, sizeof(Entry), entry_qsort_cmp);

	/* Keep only what neither the tree nor the delta holds. */
	for (i = 0; i < n; i++)
	{
		int64		pos;

		if (i > 0 && entry_qsort_cmp(&in[i - 1], &in[i]) == 0)
			continue;
		pos = find_entry(m->keys, m->tids, m->n, in[i].key, &in[i].tid);
		if (pos >= 0)
		{
			/* Removed by VACUUM, and the TID is back with the same key. */
			if (IS_REMOVED(m, pos))
			{
				m->removed[pos >> 3] &= ~(1 << (pos & 7));
				m->nremoved--;
				added++;
			}
			continue;
		}
		if (find_entry(m->ins_keys, m->ins_tids, m->nins, in[i].key, &in[i].tid) >= 0)
			continue;
		in[nnew++] = in[i];
	}

	if (nnew > 0)
	{
		/* Merge the new entries into the sorted delta. */
		nk = alloc_huge(sizeof(uint64) * (m->nins + nnew));
		nt = alloc_huge(sizeof(ItemPointerData) * (m->nins + nnew));
		for (a = 0, b = 0, o = 0; a < m->nins || b < nnew; o++)
		{
			if (b >= nnew ||
				(a < m->nins && entry_cmp(m->ins_keys[a], &m->ins_tids[a],
										  in[b].key, &in[b].tid) < 0))
			{
				nk[o] = m->ins_keys[a];
				nt[o] = m->ins_tids[a++];
			}
			else
			{
				nk[o] = in[b].key;
				nt[o] = in[b++].tid;
			}
		}
		pfree(m->ins_keys);
		pfree(m->ins_tids);
		m->ins_keys = nk;
		m->ins_tids = nt;
		m->nins += nnew;
		added += nnew;
	}
	pfree(in);
	return added;
}

static bool
tid_in(const ItemPointerData *sorted, int64 n, const ItemPointerData *tid)
{
	int64		lo = 0;
	int64		hi = n;

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		int			c = ItemPointerCompare((ItemPointer) &sorted[mid], (ItemPointer) tid);

		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

int64
gbt_mirror_remove(GbtMirror *m, const ItemPointerData *dead, int64 ndead)
{
	int64		removed = 0;
	int64		i,
				o;

	if (ndead == 0)
		return 0;
	for (i = 0; i < m->n; i++)
	{
		if (IS_REMOVED(m, i) || !tid_in(dead, ndead, &m->tids[i]))
			continue;
		if (m->removed == NULL)
		{
			m->removed = alloc_huge(m->n / 8 + 1);
			memset(m->removed, 0, m->n / 8 + 1);
		}
		m->removed[i >> 3] |= 1 << (i & 7);
		m->nremoved++;
		removed++;
	}
	for (i = 0, o = 0; i < m->nins; i++)
	{
		if (tid_in(dead, ndead, &m->ins_tids[i]))
		{
			removed++;
			continue;
		}
		m->ins_keys[o] = m->ins_keys[i];
		m->ins_tids[o++] = m->ins_tids[i];
	}
	m->nins = o;
	return removed;
}

bool
gbt_mirror_wants_merge(const GbtMirror *m)
{
	return m->nins > Max(65536, m->n / 8) || m->nremoved > Max(65536, m->n / 4);
}

GbtMirror *
gbt_mirror_merge(const GbtMirror *m, bool use_gpu, char *err, Size errlen)
{
	int64		total = gbt_mirror_entries(m);
	uint64	   *keys = alloc_huge(sizeof(uint64) * total);
	ItemPointerData *tids = alloc_huge(sizeof(ItemPointerData) * total);
	int64		a = 0,
				b = 0,
				o = 0;
	GbtMirror  *merged;

	while (a < m->n || b < m->nins)
	{
		if (a < m->n && IS_REMOVED(m, a))
		{
			a++;
			continue;
		}
		if (b >= m->nins ||
			(a < m->n && entry_cmp(m->keys[a], &m->tids[a],
								   m->ins_keys[b], &m->ins_tids[b]) < 0))
		{
			keys[o] = m->keys[a];
			tids[o++] = m->tids[a++];
		}
		else
		{
			keys[o] = m->ins_keys[b];
			tids[o++] = m->ins_tids[b++];
		}
	}
	Assert(o == total);
	merged = gbt_mirror_build(keys, tids, total, use_gpu, err, errlen);
	pfree(keys);
	pfree(tids);
	return merged;
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

int64
gbt_mirror_range_count(const GbtMirror *m, uint64 lo, uint64 hi,
					   int64 start, int64 end)
{
	int64		count = Max(end - start, 0);
	int64		i;

	if (m->nremoved > 0)
		for (i = start; i < end; i++)
			count -= IS_REMOVED(m, i);
	if (m->nins > 0 && lo <= hi)
		count += key_bound(m->ins_keys, m->nins, hi, true) -
			key_bound(m->ins_keys, m->nins, lo, false);
	return count;
}

int64
gbt_mirror_range_tids(const GbtMirror *m, uint64 lo, uint64 hi,
					  int64 start, int64 end, ItemPointerData *out)
{
	int64		o = 0;
	int64		i;

	if (m->nremoved == 0)
	{
		if (end > start)
			memcpy(out, m->tids + start, sizeof(ItemPointerData) * (end - start));
		o = Max(end - start, 0);
	}
	else
		for (i = start; i < end; i++)
			if (!IS_REMOVED(m, i))
				out[o++] = m->tids[i];
	if (m->nins > 0 && lo <= hi)
	{
		int64		from = key_bound(m->ins_keys, m->nins, lo, false);
		int64		to = key_bound(m->ins_keys, m->nins, hi, true);

		if (to > from)
			memcpy(out + o, m->ins_tids + from, sizeof(ItemPointerData) * (to - from));
		o += Max(to - from, 0);
	}
	return o;
}

int64
gbt_mirror_raw_size(const GbtMirror *m)
{
	return m->n + m->nins;
}

int64
gbt_mirror_read(const GbtMirror *m, int64 from, int64 to, uint64 *keys,
				ItemPointerData *tids)
{
	int64		o = 0;
	int64		i;

	for (i = Max(from, 0); i < Min(to, m->n + m->nins); i++)
	{
		if (i < m->n)
		{
			if (IS_REMOVED(m, i))
				continue;
			keys[o] = m->keys[i];
			tids[o++] = m->tids[i];
		}
		else
		{
			keys[o] = m->ins_keys[i - m->n];
			tids[o++] = m->ins_tids[i - m->n];
		}
	}
	return o;
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
