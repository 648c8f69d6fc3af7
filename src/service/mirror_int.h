/*
 * mirror_int.h
 *	  A mirror's insides, shared by the files that work on them: building
 *	  (mirror_build.c), the delta's runs (mirror_delta.c), changes applied
 *	  (mirror_apply.c), a new tree (mirror_rebuild.c), searches and
 *	  aggregates (mirror_search.c, mirror_walk.c), reads in order
 *	  (mirror_read.c), sizes (mirror_utils.c) and the visibility stamps
 *	  (stamps.c).
 *
 * A mirror is one engine (cuda/engine.h) over the index's keys: a Harmonia
 * tree on the CUDA device the mirror was built for, searched in batches
 * there, or on the CPU twin (device -1).  The entries (keys, TIDs, column
 * values) also stay in the service's memory in (key, TID) order: TIDs are
 * gathered on the host from the positions the search returns, and the
 * engine borrows the TIDs (their blocks), column values and NULL bits for
 * aggregates.
 * The delta here is the only one: the engine holds just the tree it was
 * built with, and entries inserted or removed since then (with their TIDs,
 * columns and log positions, which the service needs) are kept and searched
 * here until a merge builds a new mirror.  If an engine call fails, the
 * request fails and the backend's scan is answered by nbtree.  Which
 * entries a snapshot sees is stamps.c's part.
 */
#ifndef GPUBTREE_MIRROR_INT_H
#define GPUBTREE_MIRROR_INT_H

#include "postgres.h"

#include "utils/memutils.h"

#include "engine.h"
#include "mirror.h"

/*
 * Entries inserted since the build, in (key, TID) order, with the change-log
 * position each came from (0: from the export) and its stamps.
 */
typedef struct GbtRunSums GbtRunSums;

typedef struct GbtRun
{
	GbtEntries	e;
	uint64	   *pos;
	TransactionId *xmin;
	TransactionId *xmax;
	GbtRunSums *sums;			/* runsums.c; NULL: none yet */
} GbtRun;

/*
 * Stamped base entries (below), by ascending position, with their stamps.
 */
typedef struct GbtStampList
{
	int64		n;
	int64		cap;
	int64	   *pos;
	TransactionId *xmin;
	TransactionId *xmax;
} GbtStampList;

/*
 * The delta is runs of growing size, disjoint, runs[0] the largest: new
 * entries are merged into the smallest, and a run is merged into the next
 * larger one when it outgrows an eighth of it (or its level's minimum,
 * GBT_RUN_MIN for the smallest, eight times more each level up), so that a
 * batch moves few entries and a stream of changes costs each entry a few
 * moves, not one move of the whole delta per batch.  A merge of more than
 * GBT_MERGE_STEP entries goes in steps of that many, one per round of the
 * service, requests answered in between (gbt_mirror_merge_step()).
 * Writers' batches are small (tens of entries a round), and the smallest
 * run is copied whole with each: it starts at 256 entries, six levels
 * reaching the sizes four levels from 4096 did (those copies were a tenth
 * of the service's time beside two writers on the CPU engine; a hundredth
 * now).
 */
#define GBT_RUNS 6
#ifndef GBT_RUN_MIN				/* make GBT_SMALL_LAYOUT=1: tiny, for tests */
#define GBT_RUN_MIN 256
#define GBT_MERGE_STEP 65536
#define GBT_REBUILD_MIN 65536	/* fewest delta entries worth a new tree ... */
#define GBT_REBUILD_SHARE 8		/* ... and a delta past 1/8 of the tree is */
#endif
/* A delta past 1/16 of the tree, once quiet (GBT_REBUILD_QUIET_MS): a load's. */
#define GBT_REBUILD_QUIET_SHARE (GBT_REBUILD_SHARE * 2)

/*
 * The engine holds base.keys (its own copy, on the device or in the CPU
 * twin) and borrows base.tids (for their blocks), base.vals and colnulls,
 * which stay unchanged.
 * Columns the keys give, or that are all NULL, have no base.vals; columns
 * without a NULL have no colnulls (drop_unheld_columns()).
 * Entries VACUUM removed from the tree are marked in removed[]; entries
 * inserted since the build sit in the delta's runs.  When the delta grows,
 * the service merges it into a new tree.
 */
struct GbtMirror
{
	GbtColumns	columns;
	GbtEntries	base;
	uint8	   *colnulls[GBT_MAX_COLS];	/* bit per base position: NULL value */
	uint8	   *removed;		/* bit per base position; NULL: none yet */
	int64		nremoved;
	uint8	   *hidden;			/* removed, or stamped (below); NULL: none */
	uint64		hidden_version; /* bumped when hidden[] changes */

	/*
	 * The positions whose hidden bit changed since version hidden_noted, up
	 * to GBT_HIDDEN_CHANGES (past that, overflowed): what the engine is
	 * told before it reads hidden[] (gbt_mirror_note_hidden()), so that its
	 * chunk sums need not compare the whole bitmap each time writers change
	 * a few bits.
	 */
	int64	   *hidden_changed;
	int64		nhidden_changed;
	bool		hidden_overflowed;
	uint64		hidden_noted;
	GbtRun		runs[GBT_RUNS];
	const gbt_engine_ops *ops;	/* the engine's: the split engine's when split */
	gbt_engine *engine;			/* NULL while the build has not succeeded */
	GbtMirrorParts parts;		/* where gbt_mirror_build_engine() builds it */

	/*
	 * Visibility stamps (snapview.h).  Most base entries were inserted before
	 * every snapshot and are not deleted: xmin frozen, no xmax.  The others,
	 * "stamped", are listed here by position, hidden from the engine and
	 * decided one by one against the query's snapshot.  Delta entries carry
	 * their stamps in their run.  Deletes stamp entries at random positions,
	 * and merging each batch into one long list would move all of it: new
	 * stamps gather in a short list (recent), folded into the long one when
	 * it outgrows a fraction of it.  No position is in both.
	 */
	bool		captured;		/* every delete since the export reaches us */
	bool		vm_mode;		/* too many unknown inserters: the map decides */
	int64		unknown;		/* about the stamped and delta entries whose
								 * inserter is unknown (GBT_XMIN_UNKNOWN), which
								 * only the map decides; recounted at a vouch
								 * (a hint: nothing's answer depends on it) */
	GbtStampList stamped;
	GbtStampList recent;
	uint8	   *allvis;			/* every heap block of the base: visible */
	int64		nallvis;

	/*
	 * A merge of runs[merge_run] into runs[merge_run - 1] under way: both
	 * stay as they are, read and stamped as usual, and take no inserts;
	 * merge_into holds the entries merged so far (those before merge_a and
	 * merge_b in the two), whose stamps follow every change of theirs.  0:
	 * none.
	 */
	int			merge_run;
	GbtRun		merge_into;
	int64		merge_a;
	int64		merge_b;

	/*
	 * A Bloom filter of every (key, TID) the delta took since the tree was
	 * built: most inserts and deletes are of entries the delta never held,
	 * and the filter spares them a search of each run, a cache miss or more
	 * per step in runs of millions.  Removals leave their bits set.
	 */
	uint64	   *filter;
	uint64		filter_mask;	/* bits - 1, bits a power of 2; filter NULL: none */
	int64		filter_n;		/* entries added since it was sized */

	/* A settling pass under way (gbt_mirror_settle()). */
	bool		settling;
	TransactionId settle_horizon;
	int			settle_phase;	/* 0: the tree's stamps; r + 1: run r's */
	int64		settle_next;	/* where to go on: base position or index */
};

#define IS_REMOVED(m, i) ((m)->removed != NULL && \
						  ((m)->removed[(i) >> 3] & (1 << ((i) & 7))) != 0)

/* (key, TID) order, the order of nbtree's heapkeyspace indexes. */
static inline int
gbt_entry_cmp(uint64 ka, const ItemPointerData *ta, uint64 kb, const ItemPointerData *tb)
{
	if (ka != kb)
		return ka < kb ? -1 : 1;
	return gbt_tid_cmp(ta, tb);
}

/*
 * Binary searches of the mirror's sorted arrays: the first position in
 * [lo, hi) whose element comes after x, or at or after x when !after.
 * One body for the arrays of integers, keys (uint64) and base positions
 * (int64); entries compare by (key, TID).
 */
#define GBT_DEFINE_BOUND(name, type) \
static inline int64 \
name(const type *v, int64 lo, int64 hi, type x, bool after) \
{ \
	while (lo < hi) \
	{ \
		int64		mid = lo + (hi - lo) / 2; \
\
		if (v[mid] < x || (after && v[mid] == x)) \
			lo = mid + 1; \
		else \
			hi = mid; \
	} \
	return lo; \
}
GBT_DEFINE_BOUND(gbt_key_bound, uint64)
GBT_DEFINE_BOUND(gbt_pos_bound, int64)

static inline int64
gbt_entry_bound(const GbtEntries *e, int64 lo, int64 hi, uint64 key,
				const ItemPointerData *tid, bool after)
{
	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		int			cmp = gbt_entry_cmp(e->keys[mid], &e->tids[mid], key, tid);

		if (cmp < 0 || (after && cmp == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Set bit i of *bits (n bits, allocated zeroed on first use). */
static inline void
gbt_set_bit(uint8 **bits, int64 n, int64 i)
{
	if (*bits == NULL)
		*bits = MemoryContextAllocExtended(TopMemoryContext, n / 8 + 1,
										   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	(*bits)[i >> 3] |= 1 << (i & 7);
}

/* Entries in the delta's runs. */
static inline int64
gbt_delta_n(const GbtMirror *m)
{
	int64		n = 0;
	int			r;

	for (r = 0; r < GBT_RUNS; r++)
		n += m->runs[r].e.n;
	return n;
}

/*
 * Position of (key, tid) among e's entries (sorted) at or after *from, or
 * -1.  For lookups in ascending order: *from moves up to where the entry
 * is or would be, and the next lookup gallops from there, so a sorted batch
 * touches a few cache lines per lookup instead of a whole binary search.
 */
static inline int64
gbt_run_find_from(const GbtEntries *e, uint64 key, const ItemPointerData *tid, int64 *from)
{
	int64		lo = *from;
	int64		hi = lo;
	int64		step = 1;

	while (hi < e->n && gbt_entry_cmp(e->keys[hi], &e->tids[hi], key, tid) < 0)
	{
		lo = hi + 1;
		hi += step;
		step *= 2;
	}
	lo = gbt_entry_bound(e, lo, Min(hi, e->n), key, tid, false);
	*from = lo;
	return lo < e->n && gbt_entry_cmp(e->keys[lo], &e->tids[lo], key, tid) == 0 ? lo : -1;
}

/* Position of (key, tid) among e's entries (sorted), or -1. */
static inline int64
gbt_mirror_find_entry(const GbtEntries *e, uint64 key, const ItemPointerData *tid)
{
	int64		from = 0;

	return gbt_run_find_from(e, key, tid, &from);
}

/*
 * Changes of hidden[] listed for the engine at most, between two calls of
 * the engine (a round's log and a settling step stay far below it).
 */
#define GBT_HIDDEN_CHANGES 65536

/*
 * Base position i's hidden bit was just set or cleared: listed for the
 * engine.  Only gbt_hidden_set() and gbt_hidden_clear() call it: hidden[]
 * changes through them alone, so no change escapes the list.
 */
static inline void
gbt_hidden_changed(GbtMirror *m, int64 i)
{
	m->hidden_version++;
	if (m->hidden_overflowed)
		return;
	if (m->nhidden_changed == GBT_HIDDEN_CHANGES)
	{
		m->hidden_overflowed = true;
		return;
	}
	if (m->hidden_changed == NULL)
		m->hidden_changed = MemoryContextAlloc(TopMemoryContext,
											   sizeof(int64) * GBT_HIDDEN_CHANGES);
	m->hidden_changed[m->nhidden_changed++] = i;
}

/* Base entry i hidden from the engine (removed, or stamped). */
static inline void
gbt_hidden_set(GbtMirror *m, int64 i)
{
	gbt_set_bit(&m->hidden, m->base.n, i);
	gbt_hidden_changed(m, i);
}

/* Base entry i aggregated by the engine again (hidden[] exists). */
static inline void
gbt_hidden_clear(GbtMirror *m, int64 i)
{
	m->hidden[i >> 3] &= ~(1 << (i & 7));
	gbt_hidden_changed(m, i);
}

/* Base entry i is gone for every snapshot. */
static inline void
gbt_mirror_remove_entry(GbtMirror *m, int64 i)
{
	gbt_set_bit(&m->removed, m->base.n, i);
	m->nremoved++;
	gbt_hidden_set(m, i);
}

/*
 * Whether run r is one of the two a stepped merge is reading: it takes no
 * inserts, merges or settling meanwhile.
 */
static inline bool
gbt_run_merging(const GbtMirror *m, int r)
{
	return m->merge_run != 0 && (r == m->merge_run || r == m->merge_run - 1);
}

/* The filter's two bits for (key, tid). */
static inline uint64
gbt_filter_hash(uint64 key, const ItemPointerData *tid)
{
	uint64		h = key * UINT64CONST(0x9E3779B97F4A7C15) ^
		((uint64) ItemPointerGetBlockNumberNoCheck(tid) << 16 |
		 ItemPointerGetOffsetNumberNoCheck(tid));

	h ^= h >> 31;
	h *= UINT64CONST(0xBF58476D1CE4E5B9);
	h ^= h >> 29;
	return h;
}

/* False: the delta never held (key, tid). */
static inline bool
gbt_delta_may_hold(const GbtMirror *m, uint64 key, const ItemPointerData *tid)
{
	uint64		h = gbt_filter_hash(key, tid);
	uint64		a = h & m->filter_mask;
	uint64		b = (h >> 32 | h << 32) * UINT64CONST(0x94D049BB133111EB) & m->filter_mask;

	if (m->filter == NULL)
		return false;
	return (m->filter[a >> 6] & (UINT64CONST(1) << (a & 63))) != 0 &&
		(m->filter[b >> 6] & (UINT64CONST(1) << (b & 63))) != 0;
}

/* mirror_build.c: a mirror from entries with their stamps (a rebuild's) */
extern GbtMirror *gbt_mirror_build_prepare(const GbtColumns *columns, GbtEntries *entries,
										   bool take, const TransactionId *xmin,
										   const TransactionId *xmax, bool captured,
										   bool vm_mode, int device, char *err, Size errlen);

/* mirror_delta.c: the delta's runs */
extern void gbt_run_alloc(GbtRun *run, int ncols, int64 cap);
extern void gbt_run_free(GbtRun *run);
extern void gbt_delta_add(GbtMirror *m, const GbtEntries *e, const int64 *fresh,
						  int64 nfresh, const uint64 *pos, const TransactionId *xmin);
extern void gbt_mirror_merge_finish(GbtMirror *m);

/* mirror_read.c: the live entries in (key, TID) order, after a cursor */
extern int64 gbt_mirror_read_ordered(const GbtMirror *m, const GbtDumpCursor *after,
									 int64 max, GbtEntries *out, GbtSnapView *view,
									 uint8 *verdicts, TransactionId *xmins,
									 TransactionId *xmaxs);

/* stamps.c: base positions of many entries at once (-1: not there) */
extern void gbt_mirror_find_entries(GbtMirror *m, const uint64 *keys,
									const ItemPointerData *tids, int64 n, int64 *at);

/*
 * Where ascending lookups of base positions are in the two stamp lists
 * (gbt_stamps_at()); zeroed to start.
 */
typedef struct GbtStampCursor
{
	int64		stamped;
	int64		recent;
} GbtStampCursor;

/* stamps.c: the stamped base entries, by position */
extern int64 gbt_stamps_lower(const GbtStampList *l, int64 pos);
extern int64 gbt_stamps_lower_from(const GbtStampList *l, int64 pos, int64 x);
extern bool gbt_stamps_at(const GbtMirror *m, int64 pos, GbtStampCursor *c,
						  TransactionId *xmin, TransactionId *xmax);
extern void gbt_stamps_add(GbtMirror *m, int64 n, const int64 *pos,
						   const TransactionId *xmin, const TransactionId *xmax);
extern void gbt_stamps_compact(GbtMirror *m, GbtStampList *l, const bool *keep);
extern void gbt_stamps_drop(GbtMirror *m);
extern void gbt_stamps_free(GbtStampList *l);
extern int64 gbt_stamps_n(const GbtMirror *m);
extern void gbt_stamps_delete(GbtMirror *m, const GbtLogEntry *le, int64 n,
							  const int64 *found);

/* The heap block of base entry p. */
static inline BlockNumber
gbt_base_block(const GbtMirror *m, int64 p)
{
	return ItemPointerGetBlockNumberNoCheck(&m->base.tids[p]);
}

/* The engines' view of the tree's first n entries (its host arrays). */
extern void gbt_mirror_agg_input(gbt_agg_input *in, const GbtMirror *m, int64 n);
extern void gbt_mirror_note_hidden(GbtMirror *m);

#endif							/* GPUBTREE_MIRROR_INT_H */
