/*
 * mirror_rebuild.c
 *	  A new tree for a mirror whose delta grew: when it pays, and its
 *	  entries copied a step at a time while the mirror serves.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "mirror_int.h"
#include "settings.h"

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
 * stamps; then the new mirror is prepared here and its engine (the tree and
 * its chunk sums: most of a build, 0.2 s at 2^24 entries, 1 s at 2^26) built
 * on a thread of its own, which the service polls once a round.  What
 * changed behind the copy and the build meanwhile the caller keeps from the
 * change log and applies to the new mirror at the end (gbt_mirror_apply()
 * passes over entries it holds and deletions it has stamped already).
 */
struct GbtRebuild
{
	GbtEntries	all;
	TransactionId *xmin;
	TransactionId *xmax;
	bool		started;
	GbtDumpCursor last;
	int64		copied;
	bool		all_copied;

	/* Once all are copied: the new mirror, whose engine is being built */
	GbtEngineJob *job;
	int			device;
	GbtMirrorParts parts;		/* its mirror's, kept */
	bool		failed;			/* it could not be prepared: err says why */
	char		err[GBT_ERRMSG_LEN];
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
	rb->device = gbt_mirror_device(m);
	rb->parts = m->parts;
	MemoryContextSwitchTo(old);
	return rb;
}

/* Copy the next step entries; true: all copied. */
bool
gbt_rebuild_step(GbtRebuild *rb, const GbtMirror *m, int64 step)
{
	int64		n;

	Assert(rb->job == NULL);
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
	rb->copied = rb->all.n;
	rb->all_copied = n < step;
	return rb->all_copied;
}

/* Whether entries are left to copy (gbt_rebuild_step()). */
bool
gbt_rebuild_copying(const GbtRebuild *rb)
{
	return !rb->all_copied;
}

/*
 * Once every entry is copied: the first call prepares the new mirror and
 * starts its engine's build; true once that build is over (then
 * gbt_rebuild_finish()).  A build that could not get a thread runs here.
 */
bool
gbt_rebuild_built(GbtRebuild *rb, const GbtMirror *m)
{
	if (rb->job == NULL && !rb->failed)
	{
		GbtMirror  *merged = gbt_mirror_build_prepare(&m->columns, &rb->all, true,
													  rb->xmin, rb->xmax, m->captured,
													  m->vm_mode, rb->device,
													  rb->err, sizeof(rb->err));

		pfree(rb->xmin);
		pfree(rb->xmax);
		rb->xmin = rb->xmax = NULL;
		if (merged == NULL)
		{
			rb->failed = true;
			return true;
		}
		merged->parts = rb->parts;	/* the same devices */
		rb->job = gbt_engine_job_start(merged, gpubtree_debug_rebuild_delay);
	}
	return rb->job == NULL || gbt_engine_job_done(rb->job);
}

/* The new mirror, on m's device; NULL on failure, with a message.  Frees rb. */
GbtMirror *
gbt_rebuild_finish(GbtRebuild *rb, char *err, Size errlen)
{
	GbtMirror  *merged = NULL;

	if (rb->job != NULL)
		merged = gbt_engine_job_finish(rb->job, err, errlen);
	else
		strlcpy(err, rb->err, errlen);
	rb->job = NULL;
	gbt_rebuild_free(rb);
	return merged;
}

/* Whether its engine's build is running beside the service. */
bool
gbt_rebuild_busy(GbtRebuild *rb)
{
	return rb->job != NULL && !gbt_engine_job_done(rb->job);
}

int64
gbt_rebuild_copied(const GbtRebuild *rb)
{
	return rb->copied;
}

/* Given up: waits for the engine's build if one runs. */
void
gbt_rebuild_free(GbtRebuild *rb)
{
	if (rb->job != NULL)
		gbt_mirror_free(gbt_engine_job_finish(rb->job, NULL, 0));
	gbt_entries_free(&rb->all);
	if (rb->xmin != NULL)
		pfree(rb->xmin);
	if (rb->xmax != NULL)
		pfree(rb->xmax);
	pfree(rb);
}
