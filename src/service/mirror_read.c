/*
 * mirror_read.c
 *	  Entries read out of a mirror: one key range's live entries (how many,
 *	  their TIDs), and all of them in (key, TID) order, in chunks, for
 *	  VACUUM's sweep and for a rebuild.
 */
#include "postgres.h"

#include "mirror_int.h"
#include "snapview.h"

int64
gbt_mirror_range_count(const GbtMirror *m, uint64 lo, uint64 hi,
					   int64 start, int64 end)
{
	int			r;
	int64		count = Max(end - start, 0);
	int64		i;

	if (m->nremoved > 0)
		for (i = start; i < end; i++)
			count -= IS_REMOVED(m, i);
	for (r = 0; r < GBT_RUNS && lo <= hi; r++)
		count += gbt_key_bound(m->runs[r].e.keys, 0, m->runs[r].e.n, hi, true) -
			gbt_key_bound(m->runs[r].e.keys, 0, m->runs[r].e.n, lo, false);
	return count;
}

int64
gbt_mirror_range_tids(const GbtMirror *m, uint64 lo, uint64 hi,
					  int64 start, int64 end, ItemPointerData *out)
{
	int			r;
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
	for (r = 0; r < GBT_RUNS && lo <= hi; r++)
	{
		const GbtEntries *e = &m->runs[r].e;
		int64		from = gbt_key_bound(e->keys, 0, e->n, lo, false);
		int64		to = gbt_key_bound(e->keys, 0, e->n, hi, true);

		if (to > from)
			memcpy(out + o, e->tids + from, sizeof(ItemPointerData) * (to - from));
		o += Max(to - from, 0);
	}
	return o;
}

/*
 * The tree and the delta's runs merged in (key, TID) order: a reader in
 * chunks (VACUUM's sweep, a rebuild) resumes after the last entry it read,
 * wherever changes applied between its chunks moved entries (inserts,
 * merges of runs, a settling pass's compaction), and so sees every entry
 * that stayed.  Appends at most max entries to out, whose arrays have room
 * for them; with a view, each one's verdict under it to verdicts[]; with
 * xmins, each one's stamps to xmins[] and xmaxs[], and then no entry that
 * no snapshot sees.
 */
int64
gbt_mirror_read_ordered(const GbtMirror *m, const GbtDumpCursor *after, int64 max,
						GbtEntries *out, GbtSnapView *view, uint8 *verdicts,
						TransactionId *xmins, TransactionId *xmaxs)
{
	const GbtEntries *seg[GBT_RUNS + 1];
	int64		next[GBT_RUNS + 1];
	int64		n0 = out->n;
	GbtStampCursor cur;
	int			s;

	seg[0] = &m->base;
	for (s = 0; s < GBT_RUNS; s++)
		seg[s + 1] = &m->runs[s].e;
	for (s = 0; s <= GBT_RUNS; s++)
		next[s] = after == NULL ? 0 :
			gbt_entry_bound(seg[s], 0, seg[s]->n, after->key, &after->tid, true);
	cur.stamped = gbt_stamps_lower(&m->stamped, next[0]);
	cur.recent = gbt_stamps_lower(&m->recent, next[0]);

	while (out->n - n0 < max)
	{
		int			best = -1;
		int64		i;
		TransactionId xmin;
		TransactionId xmax;
		uint32		block;

		while (next[0] < m->base.n && IS_REMOVED(m, next[0]))
			next[0]++;
		for (s = 0; s <= GBT_RUNS; s++)
		{
			if (next[s] >= seg[s]->n)
				continue;
			if (best < 0 ||
				gbt_entry_cmp(seg[s]->keys[next[s]], &seg[s]->tids[next[s]],
							  seg[best]->keys[next[best]],
							  &seg[best]->tids[next[best]]) < 0)
				best = s;
		}
		if (best < 0)
			break;
		i = next[best]++;
		if (best == 0)
		{
			(void) gbt_stamps_at(m, i, &cur, &xmin, &xmax);
			block = gbt_base_block(m, i);
		}
		else
		{
			xmin = m->runs[best - 1].xmin[i];
			xmax = m->runs[best - 1].xmax[i];
			block = ItemPointerGetBlockNumberNoCheck(&seg[best]->tids[i]);
		}
		if (xmins != NULL)
		{
			if (xmin == GBT_XMIN_DEAD)
				continue;
			xmins[out->n] = xmin;
			xmaxs[out->n] = xmax;
		}
		if (view != NULL)
			verdicts[out->n - n0] = gbt_snapview_decide(view, xmin, xmax, block);
		gbt_copy_entry(out, out->n++, seg[best], i);
	}
	return out->n - n0;
}

int64
gbt_mirror_read(const GbtMirror *m, const GbtDumpCursor *after, int64 max,
				GbtEntries *out, GbtSnapView *view, uint8 *verdicts)
{
	if (view != NULL)
		view->stamps = view->stamps && m->captured && !m->vm_mode;
	return gbt_mirror_read_ordered(m, after, max, out, view, verdicts, NULL, NULL);
}
