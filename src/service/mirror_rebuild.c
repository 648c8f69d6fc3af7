/*
 * mirror_rebuild.c
 *	  A new tree for a mirror whose delta grew: when it pays, and its
 *	  entries copied a step at a time while the mirror serves.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "mirror_int.h"

/*
 * Is a new tree worth making?  Past an eighth of the tree in the delta (or
 * a quarter removed) always; past a sixteenth once the mirror is quiet (no
 * change reached it for GBT_REBUILD_QUIET_MS): a bulk load's delta is then
 * folded in within seconds, so that the mirror's bytes an entry and its
 * aggregates' walks come back to the tree's, where it would otherwise stay
 * until later writes pushed it past the eighth.  Steady writers never let
 * it be quiet, and pay the rebuild only at the eighth.
 */
bool
gbt_mirror_wants_merge(const GbtMirror *m, bool quiet)
{
	int			share = quiet ? GBT_REBUILD_QUIET_SHARE : GBT_REBUILD_SHARE;

	return gbt_delta_n(m) > Max(GBT_REBUILD_MIN, m->base.n / share) ||
		m->nremoved > Max(GBT_REBUILD_MIN, m->base.n / (share / 2));
}

/*
 * A new tree holding the mirror's live entries, made in steps while the
 * mirror serves queries and takes changes: each step copies the next
 * entries in (key, TID) order after the last one copied, with their
 * stamps.  What changed behind the copy meanwhile the caller keeps from
 * the change log and applies to the new mirror at the end
 * (gbt_mirror_apply() passes over entries it holds and deletions it has
 * stamped already).
 */
struct GbtRebuild
{
	GbtEntries	all;
	TransactionId *xmin;
	TransactionId *xmax;
	bool		started;
	GbtDumpCursor last;
};

GbtRebuild *
gbt_rebuild_begin(const GbtMirror *m)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	GbtRebuild *rb = palloc0(sizeof(GbtRebuild));
	int64		cap = gbt_mirror_entries(m) + gbt_mirror_entries(m) / 16 + 1024;

	gbt_entries_init(&rb->all, m->columns.ncols, cap);
	rb->xmin = palloc_extended(sizeof(TransactionId) * rb->all.cap, MCXT_ALLOC_HUGE);
	rb->xmax = palloc_extended(sizeof(TransactionId) * rb->all.cap, MCXT_ALLOC_HUGE);
	MemoryContextSwitchTo(old);
	return rb;
}

/* Copy the next step entries; true: all copied. */
bool
gbt_rebuild_step(GbtRebuild *rb, const GbtMirror *m, int64 step)
{
	int64		n;

	if (rb->all.cap - rb->all.n < step)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
		int64		cap = rb->all.cap + Max(step, rb->all.cap / 8);

		gbt_entries_grow(&rb->all, cap);
		rb->xmin = repalloc_huge(rb->xmin, sizeof(TransactionId) * cap);
		rb->xmax = repalloc_huge(rb->xmax, sizeof(TransactionId) * cap);
		MemoryContextSwitchTo(old);
	}
	n = gbt_mirror_read_ordered(m, rb->started ? &rb->last : NULL, step, &rb->all,
								NULL, NULL, rb->xmin, rb->xmax);
	if (n > 0)
	{
		rb->started = true;
		rb->last.key = rb->all.keys[rb->all.n - 1];
		rb->last.tid = rb->all.tids[rb->all.n - 1];
	}
	return n < step;
}

/* The new mirror, on m's device; NULL on failure.  Frees rb. */
GbtMirror *
gbt_rebuild_finish(GbtRebuild *rb, const GbtMirror *m, char *err, Size errlen)
{
	GbtMirror  *merged = gbt_mirror_build_from(&m->columns, &rb->all, true,
											   rb->xmin, rb->xmax, m->captured,
											   m->vm_mode, gbt_mirror_device(m),
											   err, errlen);

	gbt_rebuild_free(rb);
	return merged;
}

int64
gbt_rebuild_copied(const GbtRebuild *rb)
{
	return rb->all.n;
}

void
gbt_rebuild_free(GbtRebuild *rb)
{
	gbt_entries_free(&rb->all);
	pfree(rb->xmin);
	pfree(rb->xmax);
	pfree(rb);
}
