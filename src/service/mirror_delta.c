/*
 * mirror_delta.c
 *	  A mirror's delta: its runs of entries inserted since the tree was
 *	  built (mirror_int.h says how they grow), merged into one another at
 *	  once or a step a round, and the Bloom filter of what they took.
 */
#include "postgres.h"

#include "access/transam.h"
#include "utils/memutils.h"

#include "mirror_int.h"
#include "runsums.h"
#include "snapview.h"

/* A run with room for cap entries. */
void
gbt_run_alloc(GbtRun *run, int ncols, int64 cap)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

	gbt_entries_init(&run->e, ncols, cap);
	run->pos = palloc_extended(sizeof(uint64) * Max(cap, 1), MCXT_ALLOC_HUGE);
	run->xmin = palloc_extended(sizeof(TransactionId) * Max(cap, 1), MCXT_ALLOC_HUGE);
	run->xmax = palloc_extended(sizeof(TransactionId) * Max(cap, 1), MCXT_ALLOC_HUGE);
	run->sums = NULL;
	MemoryContextSwitchTo(old);
}

void
gbt_run_free(GbtRun *run)
{
	gbt_entries_free(&run->e);
	pfree(run->pos);
	pfree(run->xmin);
	pfree(run->xmax);
	gbt_run_sums_free(run);
}

/* Copy entry i of run src, with its log position and stamps, to o of dst. */
static inline void
run_copy(GbtRun *dst, int64 o, const GbtRun *src, int64 i)
{
	dst->pos[o] = src->pos[i];
	dst->xmin[o] = src->xmin[i];
	dst->xmax[o] = src->xmax[i];
	gbt_copy_entry(&dst->e, o, &src->e, i);
}

/*
 * Copy the entries of runs a and b from positions *ia and *ib on to the end
 * of into, in (key, TID) order, until stop entries of the two were read or
 * both are done.  Entries no snapshot sees any more (settled dead) are left
 * out: aggregates would walk them one by one.
 */
static void
merge_two(GbtRun *into, const GbtRun *a, int64 *ia, const GbtRun *b, int64 *ib,
		  int64 stop)
{
	while ((*ia < a->e.n || *ib < b->e.n) && *ia + *ib < stop)
	{
		const GbtRun *src = a;
		int64		i;

		if (*ia >= a->e.n ||
			(*ib < b->e.n &&
			 gbt_entry_cmp(b->e.keys[*ib], &b->e.tids[*ib],
						   a->e.keys[*ia], &a->e.tids[*ia]) < 0))
			src = b, i = (*ib)++;
		else
			i = (*ia)++;
		if (src->xmin[i] != GBT_XMIN_DEAD)
			run_copy(into, into->e.n++, src, i);
	}
}

/*
 * Merge run b into *into at once: a new run, summed (runsums.c) if large,
 * replaces *into.
 */
static void
run_merge(GbtMirror *m, GbtRun *into, const GbtRun *b)
{
	GbtRun		merged;
	int64		ia = 0,
				ib = 0;

	gbt_run_alloc(&merged, m->columns.ncols, into->e.n + b->e.n);
	merge_two(&merged, into, &ia, b, &ib, PG_INT64_MAX);
	/* small runs cost little to walk, and merge every round */
	if (merged.e.n > GBT_MERGE_STEP)
		gbt_run_sums_fill(m, &merged, merged.e.n);
	gbt_run_free(into);
	*into = merged;
}

/* The size past which run r (r > 0) is merged into run r - 1. */
static int64
run_limit(const GbtMirror *m, int r)
{
	return Max((int64) GBT_RUN_MIN << (3 * (GBT_RUNS - 1 - r)), m->runs[r - 1].e.n / 8);
}

/*
 * Merge each run that outgrew its limit into the next larger one: at once
 * when small, else by starting a stepped merge (one at a time).  Runs a
 * stepped merge reads wait for its end.
 */
static void
run_cascade(GbtMirror *m)
{
	int			r;

	for (r = GBT_RUNS - 1; r > 0; r--)
	{
		if (gbt_run_merging(m, r) || gbt_run_merging(m, r - 1) ||
			m->runs[r].e.n <= run_limit(m, r))
			continue;
		if (m->runs[r].e.n + m->runs[r - 1].e.n <= GBT_MERGE_STEP ||
			r == GBT_RUNS - 1)
		{
			run_merge(m, &m->runs[r - 1], &m->runs[r]);
			m->runs[r].e.n = 0;
			gbt_run_sums_free(&m->runs[r]);
		}
		else if (m->merge_run == 0)
		{
			m->merge_run = r;
			gbt_run_alloc(&m->merge_into, m->columns.ncols,
						  m->runs[r].e.n + m->runs[r - 1].e.n);
			m->merge_a = 0;
			m->merge_b = 0;
		}
	}
}

/*
 * The next step of the stepped merge under way, if any: at most
 * GBT_MERGE_STEP entries (those settled dead left out), and the sums of
 * the blocks they filled.  The merged run replaces the two at the end.
 * Returns whether a step is left.
 */
bool
gbt_mirror_merge_step(GbtMirror *m)
{
	GbtRun	   *a;
	GbtRun	   *b;
	GbtRun	   *into = &m->merge_into;
	int64		stop;

	if (m->merge_run == 0)
		return false;
	a = &m->runs[m->merge_run - 1];
	b = &m->runs[m->merge_run];
	stop = m->merge_a + m->merge_b + GBT_MERGE_STEP;
	merge_two(into, a, &m->merge_a, b, &m->merge_b, stop);
	gbt_run_sums_fill(m, into, a->e.n + b->e.n);
	gbt_run_sums_check(m);
	if (m->merge_a < a->e.n || m->merge_b < b->e.n)
		return true;
	gbt_run_free(a);
	*a = *into;
	gbt_run_free(b);
	gbt_run_alloc(b, m->columns.ncols, 16);
	m->merge_run = 0;
	memset(into, 0, sizeof(*into));
	run_cascade(m);
	gbt_run_sums_check(m);
	return m->merge_run != 0;
}

/* A stepped merge's end, at once. */
void
gbt_mirror_merge_finish(GbtMirror *m)
{
	while (gbt_mirror_merge_step(m))
		;
}

static inline void
filter_set(uint64 *filter, uint64 mask, uint64 key, const ItemPointerData *tid)
{
	uint64		h = gbt_filter_hash(key, tid);
	uint64		a = h & mask;
	uint64		b = (h >> 32 | h << 32) * UINT64CONST(0x94D049BB133111EB) & mask;

	filter[a >> 6] |= UINT64CONST(1) << (a & 63);
	filter[b >> 6] |= UINT64CONST(1) << (b & 63);
}

/*
 * Add entries fresh[] of e, about to enter the delta, to the filter: at
 * least 16 bits an entry (two bits set: about 1.4 % false positives).  It
 * is sized for the largest delta before the tree is rebuilt (an eighth of
 * the tree), and made anew from the runs only if the delta outgrows that.
 */
static void
filter_add(GbtMirror *m, const GbtEntries *e, const int64 *fresh, int64 nfresh)
{
	int64		i;
	int			r;

	if (m->filter == NULL || (m->filter_n + nfresh) * 16 > (int64) m->filter_mask + 1)
	{
		int64		want = 16 * Max(Max(m->base.n / 8, 2 * (gbt_delta_n(m) + nfresh)), 65536);
		uint64		bits = 64;

		while (bits < (uint64) want)
			bits *= 2;
		if (m->filter != NULL)
			pfree(m->filter);
		m->filter = MemoryContextAllocExtended(TopMemoryContext, bits / 8,
											   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		m->filter_mask = bits - 1;
		m->filter_n = gbt_delta_n(m);
		for (r = 0; r < GBT_RUNS; r++)
			for (i = 0; i < m->runs[r].e.n; i++)
				filter_set(m->filter, m->filter_mask, m->runs[r].e.keys[i],
						   &m->runs[r].e.tids[i]);
	}
	for (i = 0; i < nfresh; i++)
		filter_set(m->filter, m->filter_mask, e->keys[fresh[i]], &e->tids[fresh[i]]);
	m->filter_n += nfresh;
}

/*
 * Add entries fresh[0..nfresh) of e (in (key, TID) order), new to the
 * mirror, inserted by xmin[] and logged at pos[] (both indexed as e), to
 * the delta.
 */
void
gbt_delta_add(GbtMirror *m, const GbtEntries *e, const int64 *fresh, int64 nfresh,
			  const uint64 *pos, const TransactionId *xmin)
{
	GbtRun		run;
	int64		i;

	filter_add(m, e, fresh, nfresh);
	gbt_run_alloc(&run, m->columns.ncols, nfresh);
	for (i = 0; i < nfresh; i++)
	{
		run.pos[i] = pos[fresh[i]];
		run.xmin[i] = xmin[fresh[i]];
		run.xmax[i] = InvalidTransactionId;
		gbt_copy_entry(&run.e, i, e, fresh[i]);
		run.e.nulls[i] &= ~GBT_ENTRY_XMIN_UNKNOWN;
	}
	run.e.n = nfresh;
	/* Into the smallest run; each that outgrows its share, one up. */
	run_merge(m, &m->runs[GBT_RUNS - 1], &run);
	gbt_run_free(&run);
	run_cascade(m);
}
