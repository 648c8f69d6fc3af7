/*
 * stamps.c
 *	  A mirror's visibility stamps (snapview.h): the stamped entries of its
 *	  tree, listed by position and hidden from the engine; the change log's
 *	  entries found in the tree, and its deletions; settling against the
 *	  oldest snapshot; and VACUUM's word on all-visible blocks.
 */
#include "postgres.h"

#include "access/transam.h"
#include "utils/memutils.h"

#include "mirror_int.h"
#include "snapview.h"

/*
 * Base positions of the entries (keys[i], tids[i]), i < n, or -1 where the
 * tree does not hold one: one batched search of the engine's tree for the
 * keys (a kernel on the GPU), then the TID among the key's entries, instead
 * of a binary search of the whole base per entry, whose every step misses
 * the CPU's caches on a large mirror.
 */
void
gbt_mirror_find_entries(GbtMirror *m, const uint64 *keys, const ItemPointerData *tids,
						int64 n, int64 *at)
{
	int64	   *start = palloc_extended(sizeof(int64) * Max(n, 1), MCXT_ALLOC_HUGE);
	int64	   *end = palloc_extended(sizeof(int64) * Max(n, 1), MCXT_ALLOC_HUGE);
	char		err[GBT_ERRMSG_LEN];
	int64		i;

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
			int64		lo = start[i];
			int64		hi = end[i];

			/* The key's entries are in TID order. */
			while (lo < hi)
			{
				int64		mid = lo + (hi - lo) / 2;

				if (gbt_tid_cmp(&m->base.tids[mid], &tids[i]) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			at[i] = lo < end[i] &&
				ItemPointerEquals(&m->base.tids[lo], (ItemPointer) &tids[i]) ? lo : -1;
		}
	pfree(start);
	pfree(end);
}

/*
 * The first stamped entry at or after base position pos, at or after x:
 * galloping from x, so that ascending lookups cost little each.
 */
static int64
stamps_lower_from(const GbtMirror *m, int64 pos, int64 x)
{
	int64		lo = x;
	int64		hi = x;
	int64		step = 1;

	while (hi < m->nx && m->x_pos[hi] < pos)
	{
		lo = hi + 1;
		hi += step;
		step *= 2;
	}
	hi = Min(hi, m->nx);
	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;

		if (m->x_pos[mid] < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first stamped entry at or after base position pos. */
int64
gbt_stamps_lower(const GbtMirror *m, int64 pos)
{
	return stamps_lower_from(m, pos, 0);
}

/*
 * Merge n new stamped entries (ascending positions, none stamped yet) into
 * the stamped list, and hide them from the engine.
 */
void
gbt_stamps_add(GbtMirror *m, int64 n, const int64 *pos, const TransactionId *xmin,
	  const TransactionId *xmax)
{
	int64		a = m->nx - 1;
	int64		b = n - 1;
	int64		o = m->nx + n - 1;
	int64		i;

	if (n == 0)
		return;
	if (m->nx + n > m->xcap)
	{
		int64		cap = Max(m->xcap * 2, m->nx + n);

		if (m->x_pos == NULL)
		{
			m->x_pos = MemoryContextAllocExtended(TopMemoryContext, sizeof(int64) * cap, MCXT_ALLOC_HUGE);
			m->x_xmin = MemoryContextAllocExtended(TopMemoryContext, sizeof(TransactionId) * cap, MCXT_ALLOC_HUGE);
			m->x_xmax = MemoryContextAllocExtended(TopMemoryContext, sizeof(TransactionId) * cap, MCXT_ALLOC_HUGE);
		}
		else
		{
			m->x_pos = repalloc_huge(m->x_pos, sizeof(int64) * cap);
			m->x_xmin = repalloc_huge(m->x_xmin, sizeof(TransactionId) * cap);
			m->x_xmax = repalloc_huge(m->x_xmax, sizeof(TransactionId) * cap);
		}
		m->xcap = cap;
	}
	/* Merge from the back, in place. */
	for (; b >= 0; o--)
	{
		if (a >= 0 && m->x_pos[a] > pos[b])
		{
			m->x_pos[o] = m->x_pos[a];
			m->x_xmin[o] = m->x_xmin[a];
			m->x_xmax[o] = m->x_xmax[a--];
		}
		else
		{
			m->x_pos[o] = pos[b];
			m->x_xmin[o] = xmin[b];
			m->x_xmax[o] = xmax[b--];
		}
	}
	m->nx += n;
	for (i = 0; i < n; i++)
		gbt_set_bit(&m->hidden, m->base.n, pos[i]);
	m->hidden_version++;
}

/*
 * Drop the stamped entries for which keep[] is false; those not removed
 * become plain entries again, which the engine aggregates.
 */
void
gbt_stamps_compact(GbtMirror *m, const bool *keep)
{
	int64		i,
				o;

	for (i = 0, o = 0; i < m->nx; i++)
	{
		int64		p = m->x_pos[i];

		if (!keep[i])
		{
			if (!IS_REMOVED(m, p))
				m->hidden[p >> 3] &= ~(1 << (p & 7));
			m->hidden_version++;
			continue;
		}
		m->x_pos[o] = p;
		m->x_xmin[o] = m->x_xmin[i];
		m->x_xmax[o++] = m->x_xmax[i];
	}
	m->nx = o;
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
 * Deletions, in log order: the entry (key, tid), wherever it is, gets xid
 * as its xmax; a later deletion of the same entry (after its deleter
 * aborted) replaces an earlier one.  An entry that is not there (a row a
 * partial index leaves out, or one VACUUM's sweep took first) is nothing to
 * do.
 */
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

void
gbt_stamps_delete(GbtMirror *m, const GbtLogEntry *le, int64 n)
{
	int64	   *inbase = palloc_extended(sizeof(int64) * 2 * n, MCXT_ALLOC_HUGE);
	int64	   *indelta = palloc_extended(sizeof(int64) * n, MCXT_ALLOC_HUGE);
	uint64	   *keys = palloc_extended(sizeof(uint64) * n, MCXT_ALLOC_HUGE);
	ItemPointerData *tids = palloc_extended(sizeof(ItemPointerData) * n, MCXT_ALLOC_HUGE);
	int64	   *found = palloc_extended(sizeof(int64) * n, MCXT_ALLOC_HUGE);
	int64		nbase = 0;
	int64		ndelta = 0;
	int64		nfresh = 0;
	int64		xfrom = 0;
	int64		i;
	int			r;

	for (i = 0; i < n; i++)
	{
		keys[i] = le[i].ikey;
		tids[i] = le[i].tid;
	}
	gbt_mirror_find_entries(m, keys, tids, n, found);
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

		xfrom = stamps_lower_from(m, at, xfrom);
		if (xfrom < m->nx && m->x_pos[xfrom] == at)
			m->x_xmax[xfrom] = xid;
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
			int64		at = gbt_run_find_from(&m->runs[r].e, d->ikey, &d->tid, &from);

			if (at >= 0)
				m->runs[r].xmax[at] = d->xid;
		}
	}
	pfree(inbase);
	pfree(indelta);
	pfree(keys);
	pfree(tids);
	pfree(found);
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

	/* The tree's stamped entries, resumed by position (applies move them). */
	if (m->settle_phase == 0)
	{
		int64		x = gbt_stamps_lower(m, m->settle_next);

		for (; x < m->nx && budget > 0; x++, budget--)
		{
			int64		p = m->x_pos[x];

			if (!IS_REMOVED(m, p) &&
				settle_stamps(&m->x_xmin[x], &m->x_xmax[x], horizon))
				gbt_mirror_remove_entry(m, p);
		}
		if (x < m->nx)
		{
			m->settle_next = m->x_pos[x];
			return false;
		}
		if (m->nx > 0)
		{
			bool	   *keep = palloc_extended(sizeof(bool) * m->nx, MCXT_ALLOC_HUGE);

			for (x = 0; x < m->nx; x++)
				keep[x] = !IS_REMOVED(m, m->x_pos[x]) &&
					!(m->x_xmin[x] == GBT_XMIN_FROZEN && !TransactionIdIsValid(m->x_xmax[x]));
			gbt_stamps_compact(m, keep);
			pfree(keep);
		}
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

		for (; i < run->e.n && budget > 0; i++)
		{
			if (run->xmin[i] == GBT_XMIN_FROZEN && run->xmax[i] == InvalidTransactionId)
				continue;		/* plain: costs next to nothing */
			budget--;
			if (settle_stamps(&run->xmin[i], &run->xmax[i], horizon))
			{
				run->xmin[i] = GBT_XMIN_DEAD;
				run->xmax[i] = InvalidTransactionId;
			}
		}
		if (i < run->e.n)
		{
			m->settle_next = i;
			return false;
		}
	}
	m->settling = false;
	return true;
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
	int64		i,
				x;

	if (!m->captured)
		return;
	if (m->vm_mode)
	{
		int64		nunknown = 0;
		int64	   *pos;
		TransactionId *xmin;
		TransactionId *xmax;

		for (i = 0, x = 0; i < m->base.n; i++)
		{
			while (x < m->nx && m->x_pos[x] < i)
				x++;
			if (!IS_REMOVED(m, i) && (x >= m->nx || m->x_pos[x] != i) &&
				!BLOCK_VISIBLE(m->blocks[i]))
				nunknown++;
		}
		if (nunknown > m->base.n / 64)
			return;
		pos = palloc_extended(sizeof(int64) * Max(nunknown, 1), MCXT_ALLOC_HUGE);
		xmin = palloc_extended(sizeof(TransactionId) * Max(nunknown, 1), MCXT_ALLOC_HUGE);
		xmax = palloc_extended(sizeof(TransactionId) * Max(nunknown, 1), MCXT_ALLOC_HUGE);
		nunknown = 0;
		for (i = 0, x = 0; i < m->base.n; i++)
		{
			while (x < m->nx && m->x_pos[x] < i)
				x++;
			if (!IS_REMOVED(m, i) && (x >= m->nx || m->x_pos[x] != i) &&
				!BLOCK_VISIBLE(m->blocks[i]))
			{
				pos[nunknown] = i;
				xmin[nunknown] = GBT_XMIN_UNKNOWN;
				xmax[nunknown++] = InvalidTransactionId;
			}
		}
		gbt_stamps_add(m, nunknown, pos, xmin, xmax);
		pfree(pos);
		pfree(xmin);
		pfree(xmax);
		m->vm_mode = false;
		return;
	}
	if (m->nx > 0)
	{
		bool	   *keep = palloc_extended(sizeof(bool) * m->nx, MCXT_ALLOC_HUGE);

		for (x = 0; x < m->nx; x++)
		{
			keep[x] = true;
			if (m->x_xmin[x] == GBT_XMIN_UNKNOWN && BLOCK_VISIBLE(m->blocks[m->x_pos[x]]))
			{
				m->x_xmin[x] = GBT_XMIN_FROZEN;
				keep[x] = TransactionIdIsValid(m->x_xmax[x]);
			}
		}
		gbt_stamps_compact(m, keep);
		pfree(keep);
	}
#undef BLOCK_VISIBLE
}

/* Stamped base entries and delta entries whose fate is still open. */
int64
gbt_mirror_stamped(const GbtMirror *m)
{
	return m->nx + gbt_delta_n(m);
}

int64
gbt_mirror_stamped_entries(const GbtMirror *m)
{
	return m->nx;
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
