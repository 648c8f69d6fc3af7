/*
 * mirror_apply.c
 *	  Changes to a mirror: the change log's inserts and deletions applied,
 *	  VACUUM's dead TIDs removed, and the engine's chunk sums brought up to
 *	  date with the entries the tree hides since.
 */
#include "postgres.h"

#include "port/pg_bitutils.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "mirror_int.h"
#include "runsums.h"
#include "settings.h"
#include "threads.h"

GbtApplySteps gbt_apply_steps;

/*
 * Add entries (any order), inserted by xmin[] and logged at pos[] (pos NULL:
 * 0), at[] their positions in the tree (gbt_mirror_find_entries()).  An
 * entry whose TID the mirror already holds under the same key is not added
 * again: exports and the change log overlap.
 */
static int64
mirror_insert(GbtMirror *m, const GbtEntries *e, const uint64 *pos,
			  const TransactionId *xmin, const int64 *at)
{
	int64	   *order = gbt_entries_order(e, 0, e->n, true);
	int64	   *fresh = palloc_extended(sizeof(int64) * Max(e->n, 1), MCXT_ALLOC_HUGE);
	int64		from[GBT_RUNS] = {0};
	int64		nfresh = 0;
	int64		i;
	int			r;
	bool		held;

	/* Keep only what neither the tree nor the delta holds. */
	for (i = 0; i < e->n; i++)
	{
		int64		k = order[i];

		if (i > 0 && gbt_entry_cmp(e->keys[order[i - 1]], &e->tids[order[i - 1]],
								   e->keys[k], &e->tids[k]) == 0)
			continue;
		/*
		 * A removed tree entry whose TID is back under the same key goes to
		 * the delta like any new entry, with its log position.
		 */
		if (at[k] >= 0 && !IS_REMOVED(m, at[k]))
			continue;
		held = false;
		if (gbt_delta_may_hold(m, e->keys[k], &e->tids[k]))
			for (r = 0; r < GBT_RUNS && !held; r++)
				held = gbt_run_find_from(&m->runs[r].e, e->keys[k], &e->tids[k],
										 &from[r]) >= 0;
		if (!held)
			fresh[nfresh++] = k;
	}

	if (nfresh > 0)
		gbt_delta_add(m, e, fresh, nfresh, pos, xmin);
	pfree(order);
	pfree(fresh);
	return nfresh;
}

void
gbt_mirror_apply(GbtMirror *m, const GbtLogEntry *le, const uint64 *pos, int64 n)
{
	GbtEntries	e;
	uint64	   *epos = palloc_extended(sizeof(uint64) * Max(n, 1), MCXT_ALLOC_HUGE);
	TransactionId *exmin = palloc_extended(sizeof(TransactionId) * Max(n, 1), MCXT_ALLOC_HUGE);
	GbtLogEntry *del = palloc_extended(sizeof(GbtLogEntry) * Max(n, 1), MCXT_ALLOC_HUGE);
	uint64	   *keys = palloc_extended(sizeof(uint64) * Max(n, 1), MCXT_ALLOC_HUGE);
	ItemPointerData *tids = palloc_extended(sizeof(ItemPointerData) * Max(n, 1),
											MCXT_ALLOC_HUGE);
	int64	   *at = palloc_extended(sizeof(int64) * Max(n, 1), MCXT_ALLOC_HUGE);
	int64		ndel = 0;
	int64		i;
	int			c;
	instr_time	t0,
				t1,
				t2;

	/* Inserts first: an entry deleted in the batch was inserted before. */
	gbt_entries_init(&e, m->columns.ncols, Max(n, 1));
	for (i = 0; i < n; i++)
	{
		if (le[i].kind == GBT_LOG_DELETE)
		{
			del[ndel++] = le[i];
			continue;
		}
		e.keys[e.n] = le[i].ikey;
		e.tids[e.n] = le[i].tid;
		for (c = 0; c < e.ncols; c++)
			e.vals[c][e.n] = le[i].vals[c];
		e.nulls[e.n] = le[i].nulls;
		epos[e.n] = pos[i];
		exmin[e.n++] = le[i].xid;
	}
	/*
	 * The tree's positions of both, in one search: on the GPU a round trip,
	 * two of which were half of applying a round's log beside writers.  (The
	 * inserts go to the delta: the tree stays as searched.)
	 */
	memcpy(keys, e.keys, sizeof(uint64) * e.n);
	memcpy(tids, e.tids, sizeof(ItemPointerData) * e.n);
	for (i = 0; i < ndel; i++)
	{
		keys[e.n + i] = del[i].ikey;
		tids[e.n + i] = del[i].tid;
	}
	gbt_mirror_find_entries(m, keys, tids, n, at);
	INSTR_TIME_SET_CURRENT(t0);
	if (e.n > 0)
		mirror_insert(m, &e, epos, exmin, at);
	INSTR_TIME_SET_CURRENT(t1);
	if (ndel > 0)
		gbt_stamps_delete(m, del, ndel, at + e.n);
	INSTR_TIME_SET_CURRENT(t2);
	gbt_apply_steps.insert_ms += INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t0);
	gbt_apply_steps.delete_ms += INSTR_TIME_GET_MILLISEC(t2) - INSTR_TIME_GET_MILLISEC(t1);
	gbt_apply_steps.entries += n;
	gbt_run_sums_check(m);
	gbt_entries_free(&e);
	pfree(epos);
	pfree(exmin);
	pfree(del);
	pfree(keys);
	pfree(tids);
	pfree(at);
}

/* Drop the run's entries for which keep[] is false. */
static void
run_compact(GbtRun *run, const bool *keep)
{
	int64		i,
				o;

	for (i = 0, o = 0; i < run->e.n; i++)
	{
		if (!keep[i])
			continue;
		run->pos[o] = run->pos[i];
		run->xmin[o] = run->xmin[i];
		run->xmax[o] = run->xmax[i];
		gbt_copy_entry(&run->e, o++, &run->e, i);
	}
	run->e.n = o;
	gbt_run_sums_free(run);
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

/*
 * A piece of the tree's positions, [from, to), searched for dead TIDs by a
 * thread of its own: each sets its positions' bits in hits, from a multiple
 * of 64 on, so that no two share a word.
 */
typedef struct DeadSearch
{
	const GbtMirror *m;
	const DeadTids *d;
	int64		from;
	int64		to;
	uint64	   *hits;
} DeadSearch;

/* At least this many positions a thread. */
#ifndef GBT_DEAD_SEARCH_MIN		/* make GBT_SMALL_LAYOUT=1: tiny, for tests */
#define GBT_DEAD_SEARCH_MIN 65536
#endif

static void
dead_search_piece(void *arg)
{
	DeadSearch *s = arg;
	int64		i;

	for (i = s->from; i < s->to; i++)
		if (!IS_REMOVED(s->m, i) && dead_tids_has(s->d, &s->m->base.tids[i]))
			s->hits[i >> 6] |= UINT64CONST(1) << (i & 63);
}

/*
 * Take the tree's entries with dead TIDs out: found by up to
 * gbt_threads_wanted() threads (a pass over every entry, the whole of a
 * REMOVE's time on a large mirror), then removed here one by one.
 */
static int64
remove_from_tree(GbtMirror *m, const DeadTids *d)
{
	DeadSearch	pieces[GBT_THREADS_MAX];
	int64		nwords = (m->base.n + 63) / 64;
	uint64	   *hits = palloc_extended(sizeof(uint64) * Max(nwords, 1),
									   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	int64		per;
	int64		removed = 0;
	int64		w;
	int			npieces;
	int			p;

	npieces = gbt_threads_for(m->base.n, GBT_DEAD_SEARCH_MIN);
	per = ((m->base.n + npieces - 1) / npieces + 63) & ~INT64CONST(63);
	for (p = 0; p < npieces; p++)
	{
		pieces[p].m = m;
		pieces[p].d = d;
		pieces[p].from = Min(p * per, m->base.n);
		pieces[p].to = Min((p + 1) * per, m->base.n);
		pieces[p].hits = hits;
	}
	gbt_run_pieces(dead_search_piece, pieces, sizeof(DeadSearch), npieces);
	for (w = 0; w < nwords; w++)
	{
		uint64		bits;

		for (bits = hits[w]; bits != 0; bits &= bits - 1)
		{
			gbt_mirror_remove_entry(m, w * 64 + pg_rightmost_one_pos64(bits));
			removed++;
		}
	}
	pfree(hits);
	return removed;
}

int64
gbt_mirror_remove(GbtMirror *m, const ItemPointerData *dead, int64 ndead)
{
	int64		removed;
	int64		i;
	int			r;
	DeadTids	d;

	if (ndead == 0)
		return 0;
	gbt_mirror_merge_finish(m);
	dead_tids_init(&d, dead, ndead);
	removed = remove_from_tree(m, &d);
	if (removed > 0)
		gbt_stamps_drop(m);
	for (r = 0; r < GBT_RUNS; r++)
	{
		GbtRun	   *run = &m->runs[r];
		bool	   *keep = palloc_extended(sizeof(bool) * Max(run->e.n, 1), MCXT_ALLOC_HUGE);

		for (i = 0; i < run->e.n; i++)
		{
			keep[i] = !dead_tids_has(&d, &run->e.tids[i]);
			removed += !keep[i];
		}
		run_compact(run, keep);
		pfree(keep);
	}
	pfree(d.first);
	return removed;
}

/*
 * Chunks of the engine's sums made again per call of its tidy(), and the
 * time a round of the service spends on them: a request that comes
 * meanwhile waits for the round, so the round stays short however many
 * chunks a build or a VACUUM left to make.
 */
#ifndef GBT_TIDY_CHUNKS
#define GBT_TIDY_CHUNKS 32
#endif
#define GBT_TIDY_MS 0.25

/*
 * The entries the tree hides changed: the engine's sums of the chunks
 * they are in are made again here, between requests, so that aggregates
 * find them up to date.  Returns whether chunks are left.
 */
bool
gbt_mirror_tidy_step(GbtMirror *m)
{
	instr_time	start,
				now;
	bool		more;

	if (m->engine == NULL || gpubtree_debug_tidy_pause)
		return false;
	gbt_mirror_note_hidden(m);
	INSTR_TIME_SET_CURRENT(start);
	do
	{
		more = m->ops->tidy(m->engine, m->hidden, m->hidden_version, GBT_TIDY_CHUNKS) != 0;
		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
	} while (more && INSTR_TIME_GET_MILLISEC(now) < GBT_TIDY_MS);
	return more;
}
