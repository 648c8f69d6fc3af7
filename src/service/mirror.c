/*
 * mirror.c
 *	  The service's mirrors, over the search engine.
 *
 * A mirror is one engine (cuda/engine.h) over the index's keys: a Harmonia
 * tree on the CUDA device the mirror was built for, searched in batches
 * there, or on the CPU twin (device -1).  The entries (keys, TIDs, column
 * values) also stay in the service's memory in (key, TID) order: TIDs are
 * gathered on the host from the positions the search returns, and the
 * engine borrows the blocks, column values and NULL bits for aggregates.
 * The delta here is the only one: the engine holds just the tree it was
 * built with, and entries inserted or removed since then (with their TIDs,
 * columns and log positions, which the service needs) are kept and searched
 * here until a merge builds a new mirror.  If an engine call fails, the
 * request fails and the backend's scan is answered by nbtree.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "agg_state.h"
#include "engine.h"
#include "mirror.h"

/*
 * The engine holds base.keys (its own copy, on the device or in the CPU
 * twin) and borrows blocks, base.vals and colnulls, which stay unchanged.
 * Entries VACUUM removed from the tree are marked in removed[]; entries
 * inserted since the build sit in ins, in (key, TID) order, with the
 * change-log position they came from in ins_pos (0: from the export).  When
 * the delta grows, the service merges it into a new tree.
 */
struct GbtMirror
{
	GbtColumns	columns;
	GbtEntries	base;
	uint32	   *blocks;			/* heap block of each base entry */
	uint8	   *colnulls[GBT_MAX_COLS];	/* bit per base position: NULL value */
	uint8	   *removed;		/* bit per base position; NULL: none yet */
	int64		nremoved;
	uint64		removed_version;	/* bumped when removed[] changes */
	GbtEntries	ins;
	uint64	   *ins_pos;
	const gbt_engine_ops *ops;
	gbt_engine *engine;			/* NULL while the build has not succeeded */
};

#define IS_REMOVED(m, i) ((m)->removed != NULL && \
						  ((m)->removed[(i) >> 3] & (1 << ((i) & 7))) != 0)

/* (key, TID) order, the order of nbtree's heapkeyspace indexes. */
static inline int
entry_cmp(uint64 ka, const ItemPointerData *ta, uint64 kb, const ItemPointerData *tb)
{
	if (ka != kb)
		return ka < kb ? -1 : 1;
	return ItemPointerCompare((ItemPointer) ta, (ItemPointer) tb);
}

/* Position of (key, tid) among e's entries (sorted), or -1. */
static int64
find_entry(const GbtEntries *e, uint64 key, const ItemPointerData *tid)
{
	int64		lo = 0;
	int64		hi = e->n;

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;

		if (entry_cmp(e->keys[mid], &e->tids[mid], key, tid) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < e->n && entry_cmp(e->keys[lo], &e->tids[lo], key, tid) == 0 ? lo : -1;
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

/* Copy entry i of src to position j of dst (same columns). */
static inline void
copy_entry(GbtEntries *dst, int64 j, const GbtEntries *src, int64 i)
{
	int			c;

	dst->keys[j] = src->keys[i];
	dst->tids[j] = src->tids[i];
	for (c = 0; c < Min(src->ncols, dst->ncols); c++)
		dst->vals[c][j] = src->vals[c][i];
	dst->nulls[j] = src->nulls[i];
}

/* Base position i's NULL bits per column, from its entry's NULL mask. */
static void
set_null_bits(GbtMirror *m, int64 i, uint8 nulls)
{
	int			c;

	for (c = 0; c < m->columns.ncols; c++)
	{
		if (nulls & (1 << c) || m->columns.type[c] == GBT_COL_NONE)
			m->colnulls[c][i >> 3] |= 1 << (i & 7);
		else
			m->colnulls[c][i >> 3] &= ~(1 << (i & 7));
	}
}

/* The engine's view of base entries [0, n): blocks, columns, NULL bits. */
static void
agg_input(gbt_agg_input *in, const GbtMirror *m, int64 n)
{
	int			c;

	memset(in, 0, sizeof(*in));
	in->n = n;
	in->blocks = m->blocks;
	in->ncols = m->columns.ncols;
	for (c = 0; c < m->columns.ncols; c++)
	{
		in->coltype[c] = m->columns.type[c] == GBT_COL_FLOAT8 ? GBT_VAL_FLOAT8 : GBT_VAL_INT64;
		in->cols[c] = m->base.vals[c];
		in->nulls[c] = m->colnulls[c];
	}
}

GbtMirror *
gbt_mirror_build(const GbtColumns *columns, const GbtEntries *entries,
				 int device, char *err, Size errlen)
{
	const gbt_engine_ops *ops = device < 0 ? gbt_engine_cpu_ops() : gbt_engine_gpu_ops();
	MemoryContext old;
	GbtMirror  *m;
	int64		n = entries->n;
	int64		i;
	gbt_agg_input in;

	if (ops == NULL)
	{
		strlcpy(err, "built without CUDA", errlen);
		return NULL;
	}
	old = MemoryContextSwitchTo(TopMemoryContext);
	m = palloc0(sizeof(GbtMirror));

	m->columns = *columns;
	gbt_entries_init(&m->base, columns->ncols, n);
	for (i = 0; i < n; i++)
		copy_entry(&m->base, i, entries, i);
	m->base.n = n;
	m->blocks = palloc_extended(sizeof(uint32) * Max(n, 1), MCXT_ALLOC_HUGE);
	for (i = 0; i < n; i++)
		m->blocks[i] = ItemPointerGetBlockNumberNoCheck(&entries->tids[i]);
	for (i = 0; i < columns->ncols; i++)
		m->colnulls[i] = palloc_extended(n / 8 + 1, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	for (i = 0; i < n; i++)
		set_null_bits(m, i, entries->nulls[i]);
	gbt_entries_init(&m->ins, columns->ncols, 16);
	m->ins_pos = palloc(sizeof(uint64) * m->ins.cap);
	MemoryContextSwitchTo(old);
	m->ops = ops;
	agg_input(&in, m, n);
	if (ops->build(m->base.keys, &in, device, &m->engine, err, errlen) != 0)
	{
		gbt_mirror_free(m);
		return NULL;
	}
	return m;
}

void
gbt_mirror_free(GbtMirror *m)
{
	int			c;

	if (m == NULL)
		return;
	if (m->engine != NULL)
		m->ops->free(m->engine);
	gbt_entries_free(&m->base);
	gbt_entries_free(&m->ins);
	pfree(m->ins_pos);
	pfree(m->blocks);
	for (c = 0; c < m->columns.ncols; c++)
		pfree(m->colnulls[c]);
	if (m->removed)
		pfree(m->removed);
	pfree(m);
}

const GbtColumns *
gbt_mirror_columns(const GbtMirror *m)
{
	return &m->columns;
}

int64
gbt_mirror_entries(const GbtMirror *m)
{
	return m->base.n - m->nremoved + m->ins.n;
}

int64
gbt_mirror_delta(const GbtMirror *m)
{
	return m->nremoved + m->ins.n;
}

/* Entries and the delta here, plus the tree (host or device). */
int64
gbt_mirror_bytes(const GbtMirror *m)
{
	int64		per_entry = sizeof(uint64) + sizeof(ItemPointerData) + 1 +
		m->columns.ncols * sizeof(int64);
	int64		bytes = m->base.n * (per_entry + sizeof(uint32) + m->columns.ncols / 8.0) +
		m->ins.n * (per_entry + sizeof(uint64));

	if (m->removed != NULL)
		bytes += m->base.n / 8 + 1;
	bytes += m->ops->bytes(m->engine);
	return bytes;
}

bool
gbt_mirror_on_gpu(const GbtMirror *m)
{
	return gbt_mirror_device(m) >= 0;
}

int64
gbt_mirror_insert(GbtMirror *m, const GbtEntries *e, const uint64 *pos)
{
	MemoryContext old;
	int64	   *order = gbt_entries_order(e, 0, e->n, true);
	int64	   *fresh = palloc_extended(sizeof(int64) * Max(e->n, 1), MCXT_ALLOC_HUGE);
	int64		nfresh = 0;
	int64		added = 0;
	int64		i,
				a,
				b,
				o;
	GbtEntries	merged;
	uint64	   *merged_pos;

	/* Keep only what neither the tree nor the delta holds. */
	for (i = 0; i < e->n; i++)
	{
		int64		k = order[i];
		int64		at;

		if (i > 0 && entry_cmp(e->keys[order[i - 1]], &e->tids[order[i - 1]],
							   e->keys[k], &e->tids[k]) == 0)
			continue;
		/*
		 * A removed tree entry whose TID is back under the same key goes to
		 * the delta like any new entry, with its log position.
		 */
		at = find_entry(&m->base, e->keys[k], &e->tids[k]);
		if (at >= 0 && !IS_REMOVED(m, at))
			continue;
		if (find_entry(&m->ins, e->keys[k], &e->tids[k]) >= 0)
			continue;
		fresh[nfresh++] = k;
	}

	if (nfresh > 0)
	{
		/* Merge the new entries into the sorted delta. */
		old = MemoryContextSwitchTo(TopMemoryContext);
		gbt_entries_init(&merged, m->columns.ncols, m->ins.n + nfresh);
		merged_pos = palloc_extended(sizeof(uint64) * merged.cap, MCXT_ALLOC_HUGE);
		MemoryContextSwitchTo(old);
		for (a = 0, b = 0, o = 0; a < m->ins.n || b < nfresh; o++)
		{
			if (b >= nfresh ||
				(a < m->ins.n && entry_cmp(m->ins.keys[a], &m->ins.tids[a],
										   e->keys[fresh[b]], &e->tids[fresh[b]]) < 0))
			{
				merged_pos[o] = m->ins_pos[a];
				copy_entry(&merged, o, &m->ins, a++);
			}
			else
			{
				merged_pos[o] = pos ? pos[fresh[b]] : 0;
				copy_entry(&merged, o, e, fresh[b++]);
			}
		}
		merged.n = o;
		gbt_entries_free(&m->ins);
		pfree(m->ins_pos);
		m->ins = merged;
		m->ins_pos = merged_pos;
		added += nfresh;
	}
	pfree(order);
	pfree(fresh);
	return added;
}

/*
 * VACUUM's dead TIDs (sorted), indexed by heap block: first[b] is where
 * block b's TIDs start, so that a lookup scans one block's few offsets
 * instead of searching the whole list once per mirror entry.
 */
typedef struct DeadTids
{
	const ItemPointerData *tids;
	BlockNumber nblocks;		/* blocks up to the last dead TID's, + 1 */
	int64	   *first;			/* [nblocks + 1] */
} DeadTids;

static void
dead_tids_init(DeadTids *d, const ItemPointerData *sorted, int64 n)
{
	BlockNumber b;
	int64		i = 0;

	d->tids = sorted;
	d->nblocks = ItemPointerGetBlockNumber(&sorted[n - 1]) + 1;
	d->first = palloc_extended(sizeof(int64) * (d->nblocks + 1), MCXT_ALLOC_HUGE);
	for (b = 0; b <= d->nblocks; b++)
	{
		while (i < n && ItemPointerGetBlockNumber(&sorted[i]) < b)
			i++;
		d->first[b] = i;
	}
}

static bool
dead_tids_has(const DeadTids *d, const ItemPointerData *tid)
{
	BlockNumber b = ItemPointerGetBlockNumber(tid);
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	int64		i;

	if (b >= d->nblocks)
		return false;
	for (i = d->first[b]; i < d->first[b + 1]; i++)
		if (ItemPointerGetOffsetNumber(&d->tids[i]) == off)
			return true;
	return false;
}

int64
gbt_mirror_remove(GbtMirror *m, const ItemPointerData *dead, int64 ndead)
{
	int64		removed = 0;
	int64		i,
				o;
	DeadTids	d;

	if (ndead == 0)
		return 0;
	dead_tids_init(&d, dead, ndead);
	for (i = 0; i < m->base.n; i++)
	{
		if (IS_REMOVED(m, i) || !dead_tids_has(&d, &m->base.tids[i]))
			continue;
		if (m->removed == NULL)
			m->removed = MemoryContextAllocExtended(TopMemoryContext, m->base.n / 8 + 1,
													 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		m->removed[i >> 3] |= 1 << (i & 7);
		m->nremoved++;
		m->removed_version++;
		removed++;
	}
	for (i = 0, o = 0; i < m->ins.n; i++)
	{
		if (dead_tids_has(&d, &m->ins.tids[i]))
		{
			removed++;
			continue;
		}
		m->ins_pos[o] = m->ins_pos[i];
		copy_entry(&m->ins, o++, &m->ins, i);
	}
	m->ins.n = o;
	pfree(d.first);
	return removed;
}

bool
gbt_mirror_wants_merge(const GbtMirror *m)
{
	return m->ins.n > Max(65536, m->base.n / 8) ||
		m->nremoved > Max(65536, m->base.n / 4);
}

/* The device the mirror's tree is on: a CUDA device, or -1 (the CPU twin). */
int
gbt_mirror_device(const GbtMirror *m)
{
	return m->ops->device(m->engine);
}

GbtMirror *
gbt_mirror_merge(const GbtMirror *m, char *err, Size errlen)
{
	GbtEntries	all;
	int64		a = 0,
				b = 0;
	GbtMirror  *merged;

	gbt_entries_init(&all, m->columns.ncols, gbt_mirror_entries(m));
	while (a < m->base.n || b < m->ins.n)
	{
		if (a < m->base.n && IS_REMOVED(m, a))
		{
			a++;
			continue;
		}
		if (b >= m->ins.n ||
			(a < m->base.n && entry_cmp(m->base.keys[a], &m->base.tids[a],
										m->ins.keys[b], &m->ins.tids[b]) < 0))
			copy_entry(&all, all.n++, &m->base, a++);
		else
			copy_entry(&all, all.n++, &m->ins, b++);
	}
	merged = gbt_mirror_build(&m->columns, &all, gbt_mirror_device(m), err, errlen);
	gbt_entries_free(&all);
	return merged;
}

bool
gbt_mirror_ranges(GbtMirror *m, const uint64 *lo, const uint64 *hi,
				  int64 nranges, int64 *start, int64 *end,
				  char *err, Size errlen)
{
	StaticAssertStmt(sizeof(int64) == sizeof(int64_t), "int64 size");
	return m->ops->ranges(m->engine, lo, hi, nranges, (int64_t *) start,
						  (int64_t *) end, err, errlen) == 0;
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
	if (m->ins.n > 0 && lo <= hi)
		count += key_bound(m->ins.keys, m->ins.n, hi, true) -
			key_bound(m->ins.keys, m->ins.n, lo, false);
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
			memcpy(out, m->base.tids + start, sizeof(ItemPointerData) * (end - start));
		o = Max(end - start, 0);
	}
	else
		for (i = start; i < end; i++)
			if (!IS_REMOVED(m, i))
				out[o++] = m->base.tids[i];
	if (m->ins.n > 0 && lo <= hi)
	{
		int64		from = key_bound(m->ins.keys, m->ins.n, lo, false);
		int64		to = key_bound(m->ins.keys, m->ins.n, hi, true);

		if (to > from)
			memcpy(out + o, m->ins.tids + from, sizeof(ItemPointerData) * (to - from));
		o += Max(to - from, 0);
	}
	return o;
}

/*
 * Aggregate the live entries in the key ranges [lo[i], hi[i]] (sorted,
 * disjoint) that were applied before log position log_bound: those on heap
 * blocks set in visible[] into out, the others into unsure (at most
 * unsure_cap; out->nunsure counts them all).
 */
bool
gbt_mirror_aggregate(GbtMirror *m, const uint64 *lo, const uint64 *hi, int64 nranges,
					 const uint8 *visible, int64 nvisible, uint64 log_bound,
					 GbtAggResult *out, GbtEntries *unsure, int64 unsure_cap,
					 char *err, Size errlen)
{
	int64	   *start = palloc_extended(sizeof(int64) * Max(nranges, 1), MCXT_ALLOC_HUGE);
	int64	   *end = palloc_extended(sizeof(int64) * Max(nranges, 1), MCXT_ALLOC_HUGE);
	int64	   *upos = palloc_extended(sizeof(int64) * Max(unsure_cap, 1), MCXT_ALLOC_HUGE);
	gbt_agg_input in;
	GbtAggResult part;
	GbtEntries	d;
	int64		r,
				i,
				c;

	if (!gbt_mirror_ranges(m, lo, hi, nranges, start, end, err, errlen))
		return false;

	/* The tree's entries. */
	if (m->ops->aggregate(m->engine, m->removed, m->removed_version,
						  (const int64_t *) start, (const int64_t *) end, nranges,
						  visible, nvisible, out, (int64_t *) upos, unsure_cap,
						  err, errlen) != 0)
		return false;
	for (i = 0; i < Min(out->nunsure, unsure_cap); i++)
		copy_entry(unsure, unsure->n++, &m->base, upos[i]);

	/* The delta's, logged before log_bound, gathered into arrays of their own. */
	gbt_entries_init(&d, m->columns.ncols, 16);
	for (r = 0; r < nranges && m->ins.n > 0; r++)
	{
		int64		from = key_bound(m->ins.keys, m->ins.n, lo[r], false);
		int64		to = key_bound(m->ins.keys, m->ins.n, hi[r], true);

		for (i = from; i < to; i++)
		{
			if (m->ins_pos[i] >= log_bound)
				continue;
			if (d.n == d.cap)
				gbt_entries_grow(&d, d.cap * 2);
			copy_entry(&d, d.n++, &m->ins, i);
		}
	}
	if (d.n > 0)
	{
		uint32	   *blocks = palloc(sizeof(uint32) * d.n);
		uint8	   *nulls[GBT_MAX_COLS];
		int64		zero = 0;
		int64		room = Max(unsure_cap - unsure->n, 0);

		for (i = 0; i < d.n; i++)
			blocks[i] = ItemPointerGetBlockNumberNoCheck(&d.tids[i]);
		agg_input(&in, m, d.n);
		in.blocks = blocks;
		for (c = 0; c < m->columns.ncols; c++)
		{
			nulls[c] = palloc0(d.n / 8 + 1);
			for (i = 0; i < d.n; i++)
				if (d.nulls[i] & (1 << c) || m->columns.type[c] == GBT_COL_NONE)
					nulls[c][i >> 3] |= 1 << (i & 7);
			in.cols[c] = d.vals[c];
			in.nulls[c] = nulls[c];
		}
		if (gbt_vagg_cpu(&in, (const int64_t *) &zero, (const int64_t *) &d.n, 1,
						 visible, nvisible, &part, (int64_t *) upos, room, err, errlen) != 0)
			return false;
		gbt_agg_combine(out, &part, &m->columns);
		for (i = 0; i < Min(part.nunsure, room); i++)
			copy_entry(unsure, unsure->n++, &d, upos[i]);
	}
	gbt_entries_free(&d);
	return true;
}

int64
gbt_mirror_raw_size(const GbtMirror *m)
{
	return m->base.n + m->ins.n;
}

/* Appends to out, whose arrays have room for to - from more entries. */
int64
gbt_mirror_read(const GbtMirror *m, int64 from, int64 to, GbtEntries *out)
{
	int64		n0 = out->n;
	int64		i;

	for (i = Max(from, 0); i < Min(to, m->base.n + m->ins.n); i++)
	{
		if (i < m->base.n)
		{
			if (!IS_REMOVED(m, i))
				copy_entry(out, out->n++, &m->base, i);
		}
		else
			copy_entry(out, out->n++, &m->ins, i - m->base.n);
	}
	return out->n - n0;
}

bool
gbt_engine_gpu_usable(char *name, Size namelen, int64 *memory,
					  char *why, Size whylen)
{
	const gbt_engine_ops *gpu = gbt_engine_gpu_ops();

	if (gpu == NULL)
	{
		strlcpy(why, "built without CUDA", whylen);
		return false;
	}
	return gpu->usable(0, name, namelen, (int64_t *) memory, why, whylen) == 0;
}
