/*
 * stamps.c
 *	  A mirror's visibility stamps (snapview.h): the stamped entries of its
 *	  tree, listed by position and hidden from the engine; the change log's
 *	  entries found in the tree, and its deletions; settling against the
 *	  oldest snapshot; and VACUUM's word on all-visible blocks.
 */
#include "postgres.h"

#include "access/transam.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "mirror_int.h"
#include "runsums.h"
#include "snapview.h"

/*
 * Base positions of the entries (keys[i], tids[i]), i < n, or -1 where the
 * tree does not hold one: one batched search of the engine's tree for the
 * keys (a kernel on the GPU), then the TID among the key's entries, instead
 * of a binary search of the whole base per entry, whose every step misses
 * the CPU's caches on a large mirror (beside 8 writers on the H100, ~200
 * entries a round searched so in the service's threads took twice the
 * GPU's round trip).
 */
void
gbt_mirror_find_entries(GbtMirror *m, const uint64 *keys, const ItemPointerData *tids,
						int64 n, int64 *at)
{
	int64	   *start;
	int64	   *end;
	char		err[GBT_ERRMSG_LEN];
	int64		i;
	instr_time	t0,
				t1;

	INSTR_TIME_SET_CURRENT(t0);
	start = palloc_extended(sizeof(int64) * Max(n, 1), MCXT_ALLOC_HUGE);
	end = palloc_extended(sizeof(int64) * Max(n, 1), MCXT_ALLOC_HUGE);
	if (m->engine == NULL || n == 0 ||
		m->ops->ranges(m->engine, keys, keys, n, (int64_t *) start, (int64_t *) end,
					   err, sizeof(err)) != 0)
	{
		for (i = 0; i < n; i++)
			at[i] = gbt_mirror_find_entry(&m->base, keys[i], &tids[i]);
	}
	else
		for (i = 0; i < n; i++)
		{
			/* The key's entries are in TID order. */
			int64		lo = gbt_entry_bound(&m->base, start[i], end[i], keys[i],
											 &tids[i], false);

			at[i] = lo < end[i] &&
				ItemPointerEquals(&m->base.tids[lo], (ItemPointer) &tids[i]) ? lo : -1;
		}
	pfree(start);
	pfree(end);
	INSTR_TIME_SET_CURRENT(t1);
	gbt_apply_steps.find_ms += INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t0);
}

/*
 * The first entry of l at or after base position pos, at or after x:
 * galloping from x, so that ascending lookups cost little each.
 */
static int64
stamps_lower_from(const GbtStampList *l, int64 pos, int64 x)
{
	int64		lo = x;
	int64		hi = x;
	int64		step = 1;

	while (hi < l->n && l->pos[hi] < pos)
	{
		lo = hi + 1;
		hi += step;
		step *= 2;
	}
	return gbt_pos_bound(l->pos, lo, Min(hi, l->n), pos, false);
}

/* The first entry of l at or after base position pos. */
int64
gbt_stamps_lower(const GbtStampList *l, int64 pos)
{
	return stamps_lower_from(l, pos, 0);
}

/* The same at or after entry x (every entry before x is before pos). */
int64
gbt_stamps_lower_from(const GbtStampList *l, int64 pos, int64 x)
{
	return stamps_lower_from(l, pos, x);
}

/*
 * The stamps of base position pos, if it is stamped; lookups in ascending
 * order of pos, through the cursor c.
 */
bool
gbt_stamps_at(const GbtMirror *m, int64 pos, GbtStampCursor *c,
			  TransactionId *xmin, TransactionId *xmax)
{
	c->stamped = stamps_lower_from(&m->stamped, pos, c->stamped);
	if (c->stamped < m->stamped.n && m->stamped.pos[c->stamped] == pos)
	{
		*xmin = m->stamped.xmin[c->stamped];
		*xmax = m->stamped.xmax[c->stamped];
		return true;
	}
	c->recent = stamps_lower_from(&m->recent, pos, c->recent);
	if (c->recent < m->recent.n && m->recent.pos[c->recent] == pos)
	{
		*xmin = m->recent.xmin[c->recent];
		*xmax = m->recent.xmax[c->recent];
		return true;
	}
	*xmin = GBT_XMIN_FROZEN;
	*xmax = InvalidTransactionId;
	return false;
}

/* Stamped entries, both lists. */
int64
gbt_stamps_n(const GbtMirror *m)
{
	return m->stamped.n + m->recent.n;
}

void
gbt_stamps_free(GbtStampList *l)
{
	if (l->pos == NULL)
		return;
	pfree(l->pos);
	pfree(l->xmin);
	pfree(l->xmax);
	memset(l, 0, sizeof(*l));
}

/*
 * Merge n entries (ascending positions, none in l) into l, from the back,
 * in place.
 */
static void
stamps_merge(GbtStampList *l, int64 n, const int64 *pos, const TransactionId *xmin,
			 const TransactionId *xmax)
{
	int64		a = l->n - 1;
	int64		b = n - 1;
	int64		o = l->n + n - 1;

	if (l->n + n > l->cap)
	{
		int64		cap = Max(l->cap * 2, l->n + n);

		if (l->pos == NULL)
		{
			l->pos = MemoryContextAllocExtended(TopMemoryContext, sizeof(int64) * cap, MCXT_ALLOC_HUGE);
			l->xmin = MemoryContextAllocExtended(TopMemoryContext, sizeof(TransactionId) * cap, MCXT_ALLOC_HUGE);
			l->xmax = MemoryContextAllocExtended(TopMemoryContext, sizeof(TransactionId) * cap, MCXT_ALLOC_HUGE);
		}
		else
		{
			l->pos = repalloc_huge(l->pos, sizeof(int64) * cap);
			l->xmin = repalloc_huge(l->xmin, sizeof(TransactionId) * cap);
			l->xmax = repalloc_huge(l->xmax, sizeof(TransactionId) * cap);
		}
		l->cap = cap;
	}
	for (; b >= 0; o--)
	{
		if (a >= 0 && l->pos[a] > pos[b])
		{
			l->pos[o] = l->pos[a];
			l->xmin[o] = l->xmin[a];
			l->xmax[o] = l->xmax[a--];
		}
		else
		{
			l->pos[o] = pos[b];
			l->xmin[o] = xmin[b];
			l->xmax[o] = xmax[b--];
		}
	}
	l->n += n;
}

/*
 * The short list is folded into the long one when it outgrows this
 * fraction of it: a batch then moves at most that much of the stamps, and
 * each stamp is moved a few dozen times over its life.
 */
#ifndef GBT_RECENT_MIN			/* make GBT_SMALL_LAYOUT=1: tiny, for tests */
#define GBT_RECENT_MIN 16384
#endif
#define GBT_RECENT_FRACTION 32

/*
 * Add n new stamped entries (ascending positions, none stamped yet), and
 * hide them from the engine.
 */
void
gbt_stamps_add(GbtMirror *m, int64 n, const int64 *pos, const TransactionId *xmin,
			   const TransactionId *xmax)
{
	int64		i;

	if (n == 0)
		return;
	stamps_merge(&m->recent, n, pos, xmin, xmax);
	if (m->recent.n > Max(GBT_RECENT_MIN, m->stamped.n / GBT_RECENT_FRACTION))
	{
		stamps_merge(&m->stamped, m->recent.n, m->recent.pos, m->recent.xmin,
					 m->recent.xmax);
		m->recent.n = 0;
	}
	for (i = 0; i < n; i++)
		gbt_hidden_set(m, pos[i]);
}

/*
 * Drop the entries of l for which keep[] is false; those not removed
 * become plain entries again, which the engine aggregates.
 */
void
gbt_stamps_compact(GbtMirror *m, GbtStampList *l, const bool *keep)
{
	int64		i,
				o;

	for (i = 0, o = 0; i < l->n; i++)
	{
		int64		p = l->pos[i];

		if (!keep[i])
		{
			if (!IS_REMOVED(m, p))
				gbt_hidden_clear(m, p);
			continue;
		}
		l->pos[o] = p;
		l->xmin[o] = l->xmin[i];
		l->xmax[o++] = l->xmax[i];
	}
	l->n = o;
}

/*
 * Drop the stamps of removed entries, and those that settled to nothing
 * (frozen, no deleter), from both lists.
 */
void
gbt_stamps_drop(GbtMirror *m)
{
	GbtStampList *lists[2] = {&m->stamped, &m->recent};
	int			l;

	for (l = 0; l < 2; l++)
	{
		GbtStampList *list = lists[l];
		bool	   *keep;
		int64		i;

		if (list->n == 0)
			continue;
		keep = palloc_extended(sizeof(bool) * list->n, MCXT_ALLOC_HUGE);
		for (i = 0; i < list->n; i++)
			keep[i] = !IS_REMOVED(m, list->pos[i]) &&
				!(list->xmin[i] == GBT_XMIN_FROZEN && !TransactionIdIsValid(list->xmax[i]));
		gbt_stamps_compact(m, list, keep);
		pfree(keep);
	}
}

/* (position, batch index) pairs. */
static int
cmp_int64_pair(const void *a, const void *b)
{
	const int64 *x = a;
	const int64 *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0;
}

/*
 * Entry i of run r got a new xmax: if a stepped merge copied it already,
 * its copy gets it too, and leaves its block's sum there.
 */
static void
run_stamped(GbtMirror *m, int r, int64 i)
{
	const GbtRun *run = &m->runs[r];
	GbtRun	   *into = &m->merge_into;
	int64		at;

	if (!gbt_run_merging(m, r) ||
		i >= (r == m->merge_run ? m->merge_b : m->merge_a) ||
		run->xmin[i] == GBT_XMIN_DEAD)
		return;					/* not copied yet, or left out */
	at = gbt_mirror_find_entry(&into->e, run->e.keys[i], &run->e.tids[i]);
	Assert(at >= 0);
	if (at >= 0)
	{
		into->xmax[at] = run->xmax[i];
		gbt_run_sums_drop(m, into, at);
	}
}

/* Log entries by (key, TID), then log order. */
static int
cmp_log_index(const void *a, const void *b, void *arg)
{
	const GbtLogEntry *le = arg;
	int64		i = *(const int64 *) a;
	int64		j = *(const int64 *) b;
	int			c = gbt_entry_cmp(le[i].ikey, &le[i].tid, le[j].ikey, &le[j].tid);

	if (c != 0)
		return c;
	return i < j ? -1 : i > j ? 1 : 0;
}

/*
 * Deletions, in log order: the entry (key, tid), wherever it is, gets xid
 * as its xmax; a later deletion of the same entry (after its deleter
 * aborted) replaces an earlier one.  An entry that is not there (a row a
 * partial index leaves out, or one VACUUM's sweep took first) is nothing to
 * do.  found[i]: deletion i's entry's position in the tree, or -1
 * (gbt_mirror_find_entries()).
 */
void
gbt_stamps_delete(GbtMirror *m, const GbtLogEntry *le, int64 n, const int64 *found)
{
	int64	   *inbase = palloc_extended(sizeof(int64) * 2 * n, MCXT_ALLOC_HUGE);
	int64	   *indelta = palloc_extended(sizeof(int64) * n, MCXT_ALLOC_HUGE);
	int64		nbase = 0;
	int64		ndelta = 0;
	int64		nfresh = 0;
	GbtStampCursor cur = {0};
	int64		i;
	int			r;

	for (i = 0; i < n; i++)
	{
		if (found[i] >= 0 && !IS_REMOVED(m, found[i]))
		{
			inbase[2 * nbase] = found[i];
			inbase[2 * nbase + 1] = i;
			nbase++;
		}
		else
			indelta[ndelta++] = i;
	}

	/*
	 * In the tree: by position, then log order, so that the stamped list is
	 * walked once and the last deletion of an entry is the one kept.
	 */
	qsort(inbase, nbase, 2 * sizeof(int64), cmp_int64_pair);
	for (i = 0; i < nbase; i++)
	{
		int64		at = inbase[2 * i];
		TransactionId xid = le[inbase[2 * i + 1]].xid;

		cur.stamped = stamps_lower_from(&m->stamped, at, cur.stamped);
		cur.recent = stamps_lower_from(&m->recent, at, cur.recent);
		if (cur.stamped < m->stamped.n && m->stamped.pos[cur.stamped] == at)
			m->stamped.xmax[cur.stamped] = xid;
		else if (cur.recent < m->recent.n && m->recent.pos[cur.recent] == at)
			m->recent.xmax[cur.recent] = xid;
		else if (nfresh > 0 && inbase[2 * (nfresh - 1)] == at)
			inbase[2 * (nfresh - 1) + 1] = inbase[2 * i + 1];	/* a later one */
		else
		{
			inbase[2 * nfresh] = at;
			inbase[2 * nfresh + 1] = inbase[2 * i + 1];
			nfresh++;
		}
	}
	if (nfresh > 0)
	{
		int64	   *pos = palloc_extended(sizeof(int64) * nfresh, MCXT_ALLOC_HUGE);
		TransactionId *xmin = palloc_extended(sizeof(TransactionId) * nfresh, MCXT_ALLOC_HUGE);
		TransactionId *xmax = palloc_extended(sizeof(TransactionId) * nfresh, MCXT_ALLOC_HUGE);

		for (i = 0; i < nfresh; i++)
		{
			pos[i] = inbase[2 * i];
			xmin[i] = GBT_XMIN_FROZEN;
			xmax[i] = le[inbase[2 * i + 1]].xid;
		}
		gbt_stamps_add(m, nfresh, pos, xmin, xmax);
		pfree(pos);
		pfree(xmin);
		pfree(xmax);
	}

	/* In the delta: by (key, TID), then log order, each run walked once. */
	qsort_arg(indelta, ndelta, sizeof(int64), cmp_log_index, (void *) le);
	for (r = 0; r < GBT_RUNS; r++)
	{
		int64		from = 0;

		for (i = 0; i < ndelta; i++)
		{
			const GbtLogEntry *d = &le[indelta[i]];
			int64		at;

			if (!gbt_delta_may_hold(m, d->ikey, &d->tid))
				continue;
			at = gbt_run_find_from(&m->runs[r].e, d->ikey, &d->tid, &from);
			if (at >= 0)
			{
				m->runs[r].xmax[at] = d->xid;
				gbt_run_sums_drop(m, &m->runs[r], at);
				run_stamped(m, r, at);
			}
		}
	}
	pfree(inbase);
	pfree(indelta);
}

/* Settle one stamp pair in place; returns whether the entry is gone. */
static inline bool
settle_stamps(TransactionId *xmin, TransactionId *xmax, TransactionId horizon)
{
	GbtXidOutcome inserter = gbt_xid_fate(*xmin, horizon);
	GbtXidOutcome deleter = gbt_xid_fate(*xmax, horizon);

	if (deleter == GBT_XID_COMMITTED || inserter == GBT_XID_ABORTED)
		return true;
	if (deleter == GBT_XID_ABORTED)
		*xmax = InvalidTransactionId;
	if (inserter == GBT_XID_COMMITTED)
		*xmin = GBT_XMIN_FROZEN;
	return false;
}

/*
 * Stamps every snapshot now agrees on, settled (snapview.h's contract for
 * horizon): an insert committed before it is frozen, a deletion committed
 * before it removes the entry, and either one aborted is as if it never
 * happened.  What stays are stamps of transactions some snapshot may still
 * see either way, so the mirror never holds a transaction ID older than the
 * horizon, which keeps it clear of wraparound.
 *
 * A pass looks at every stamped entry and may ask the commit log about each
 * one, so it goes in steps of at most budget entries, one step per round of
 * the service, requests answered in between: gbt_mirror_settle() starts a
 * pass against horizon or takes the next step of the one under way, and
 * returns true when the pass is done.  Between steps the entries already
 * looked at are settled in place: an entry become plain stays listed (and
 * decided one by one) until the end of the pass drops it from the list.
 */
bool
gbt_mirror_settle(GbtMirror *m, TransactionId horizon, int64 budget)
{
	if (!m->settling)
	{
		m->settling = true;
		m->settle_horizon = horizon;
		m->settle_phase = 0;
		m->settle_next = 0;
	}
	horizon = m->settle_horizon;

	/*
	 * The tree's stamped entries, resumed by position (applies move them);
	 * the short list, in one go at the end.
	 */
	if (m->settle_phase == 0)
	{
		int64		x = gbt_stamps_lower(&m->stamped, m->settle_next);

		for (; x < m->stamped.n && budget > 0; x++, budget--)
		{
			int64		p = m->stamped.pos[x];

			if (!IS_REMOVED(m, p) &&
				settle_stamps(&m->stamped.xmin[x], &m->stamped.xmax[x], horizon))
				gbt_mirror_remove_entry(m, p);
		}
		if (x < m->stamped.n)
		{
			m->settle_next = m->stamped.pos[x];
			return false;
		}
		for (x = 0; x < m->recent.n; x++)
		{
			int64		p = m->recent.pos[x];

			if (!IS_REMOVED(m, p) &&
				settle_stamps(&m->recent.xmin[x], &m->recent.xmax[x], horizon))
				gbt_mirror_remove_entry(m, p);
		}
		gbt_stamps_drop(m);
		m->settle_phase = 1;
		m->settle_next = 0;
	}

	/*
	 * The delta's, resumed by index (a merge of runs in between may make the
	 * pass miss some: the next one takes them).  Delta entries stay where
	 * they are (see gbt_mirror_read()): dead ones are marked so, for every
	 * snapshot, until VACUUM's sweep or a merge takes them out.
	 */
	for (; m->settle_phase <= GBT_RUNS; m->settle_phase++, m->settle_next = 0)
	{
		GbtRun	   *run = &m->runs[m->settle_phase - 1];
		int64		i = m->settle_next;

		/*
		 * A stepped merge copies its runs' stamps: wait for it, so that a
		 * finished pass leaves no stamp older than the horizon (the service
		 * then forgets those transactions' outcomes).
		 */
		if (gbt_run_merging(m, m->settle_phase - 1))
			return false;

		/* A block at a time, then the sum of its plain entries (runsums.c). */
		while (i < run->e.n && budget > 0)
		{
			int64		block = i / GBT_SUM_BLOCK;
			int64		end = Min((block + 1) * GBT_SUM_BLOCK, run->e.n);
			int64		nplain = 0;

			for (; i < end; i++)
			{
				if (run->xmin[i] == GBT_XMIN_FROZEN && run->xmax[i] == InvalidTransactionId)
				{
					nplain++;	/* plain: costs next to nothing */
					continue;
				}
				budget--;
				if (settle_stamps(&run->xmin[i], &run->xmax[i], horizon))
				{
					run->xmin[i] = GBT_XMIN_DEAD;
					run->xmax[i] = InvalidTransactionId;
				}
				nplain += run->xmin[i] == GBT_XMIN_FROZEN &&
					run->xmax[i] == InvalidTransactionId;
			}
			/* plain entries cost a little too: a round stays short */
			budget -= (end - block * GBT_SUM_BLOCK) / 64 +
				gbt_run_sums_make(m, run, block, nplain) / 8;
		}
		if (i < run->e.n)
		{
			m->settle_next = i;
			gbt_run_sums_check(m);
			return false;
		}
	}
	m->settling = false;
	gbt_run_sums_check(m);
	return true;
}

/* The stamped and delta entries whose inserter is unknown. */
static int64
count_unknown(const GbtMirror *m)
{
	const GbtStampList *lists[2] = {&m->stamped, &m->recent};
	int64		n = 0;
	int64		i;
	int			l;

	for (l = 0; l < 2; l++)
		for (i = 0; i < lists[l]->n; i++)
			n += lists[l]->xmin[i] == GBT_XMIN_UNKNOWN;
	for (l = 0; l < GBT_RUNS; l++)
		for (i = 0; i < m->runs[l].e.n; i++)
			n += m->runs[l].xmin[i] == GBT_XMIN_UNKNOWN;
	for (i = 0; i < m->merge_into.e.n; i++)
		n += m->merge_into.xmin[i] == GBT_XMIN_UNKNOWN;
	return n;
}

/*
 * After a VACUUM, with the capture trigger firing: visible[] has a bit per
 * heap block that is all-visible now (nvisible blocks).  Every row on such
 * a block is visible to every snapshot, and an entry that points there
 * (VACUUM swept the dead ones out first) is as if frozen: its inserter no
 * longer matters.  An entry's xmax stays; a delete from now on is logged.
 * A mirror that decided by the map leaves it when few entries are left
 * unknown.
 */
void
gbt_mirror_vouch(GbtMirror *m, const uint8 *visible, int64 nvisible)
{
#define BLOCK_VISIBLE(b) ((int64) (b) < nvisible && (visible[(b) >> 3] & (1 << ((b) & 7))))
	GbtStampList *lists[2] = {&m->stamped, &m->recent};
	GbtStampCursor cur = {0};
	TransactionId mn,
				mx;
	int64		i,
				x;
	int			l;

	if (!m->captured)
		return;
	if (m->vm_mode)
	{
		int64		nunknown = 0;
		int64	   *pos;
		TransactionId *xmin;
		TransactionId *xmax;

		for (i = 0; i < m->base.n; i++)
			if (!IS_REMOVED(m, i) && !gbt_stamps_at(m, i, &cur, &mn, &mx) &&
				!BLOCK_VISIBLE(gbt_base_block(m, i)))
				nunknown++;
		if (nunknown > m->base.n / GBT_UNKNOWN_ONE_IN)
			return;
		pos = palloc_extended(sizeof(int64) * Max(nunknown, 1), MCXT_ALLOC_HUGE);
		xmin = palloc_extended(sizeof(TransactionId) * Max(nunknown, 1), MCXT_ALLOC_HUGE);
		xmax = palloc_extended(sizeof(TransactionId) * Max(nunknown, 1), MCXT_ALLOC_HUGE);
		nunknown = 0;
		memset(&cur, 0, sizeof(cur));
		for (i = 0; i < m->base.n; i++)
		{
			if (!IS_REMOVED(m, i) && !gbt_stamps_at(m, i, &cur, &mn, &mx) &&
				!BLOCK_VISIBLE(gbt_base_block(m, i)))
			{
				pos[nunknown] = i;
				xmin[nunknown] = GBT_XMIN_UNKNOWN;
				xmax[nunknown++] = InvalidTransactionId;
			}
		}
		gbt_stamps_add(m, nunknown, pos, xmin, xmax);
		m->unknown += nunknown;
		pfree(pos);
		pfree(xmin);
		pfree(xmax);
		m->vm_mode = false;
		return;
	}
	for (l = 0; l < 2; l++)
	{
		GbtStampList *list = lists[l];
		bool	   *keep;

		if (list->n == 0)
			continue;
		keep = palloc_extended(sizeof(bool) * list->n, MCXT_ALLOC_HUGE);
		for (x = 0; x < list->n; x++)
		{
			keep[x] = true;
			if (list->xmin[x] == GBT_XMIN_UNKNOWN && BLOCK_VISIBLE(gbt_base_block(m, list->pos[x])))
			{
				list->xmin[x] = GBT_XMIN_FROZEN;
				keep[x] = TransactionIdIsValid(list->xmax[x]);
			}
		}
		gbt_stamps_compact(m, list, keep);
		pfree(keep);
	}
	m->unknown = count_unknown(m);
#undef BLOCK_VISIBLE
}

/* Stamped base entries and delta entries whose fate is still open. */
int64
gbt_mirror_stamped(const GbtMirror *m)
{
	return gbt_stamps_n(m) + gbt_delta_n(m);
}

int64
gbt_mirror_stamped_entries(const GbtMirror *m)
{
	return gbt_stamps_n(m);
}

/*
 * Whether every delete reaches the mirror and few inserters are unknown:
 * else the visibility map decides for the entries (vm_mode).
 */
bool
gbt_mirror_trusts_stamps(const GbtMirror *m)
{
	return m->captured && !m->vm_mode;
}

/* Whether the stamps decide every entry without the visibility map. */
bool
gbt_mirror_stamps_decide_all(const GbtMirror *m)
{
	return gbt_mirror_trusts_stamps(m) && m->unknown == 0;
}
