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
 * Merge b's entries and e's entries fresh[0..nfresh) (sorted, new, inserted
 * by xmin[] at pos[]) into a new run, summed (runsums.c) if large, which
 * replaces *into.  b may be NULL.  Entries no snapshot sees any more
 * (settled dead) are left out: aggregates would walk them one by one.
 */
static void
run_merge(GbtMirror *m, GbtRun *into, const GbtRun *b, const GbtEntries *e,
		  const int64 *fresh, int64 nfresh, const uint64 *pos, const TransactionId *xmin)
{
	GbtRun		merged;
	const GbtRun *a = into;
	int64		ia = 0,
				ib = 0,
				ie = 0,
				o;
	int64		nb = b ? b->e.n : 0;

	gbt_run_alloc(&merged, m->columns.ncols, a->e.n + nb + nfresh);
	for (o = 0; ia < a->e.n || ib < nb || ie < nfresh;)
	{
		const GbtRun *src = NULL;
		int64		i = 0;

		/* The smallest of the three heads. */
		if (ia < a->e.n)
			src = a, i = ia;
		if (ib < nb && (src == NULL ||
						gbt_entry_cmp(b->e.keys[ib], &b->e.tids[ib],
									  src->e.keys[i], &src->e.tids[i]) < 0))
			src = b, i = ib;
		if (ie < nfresh && (src == NULL ||
							gbt_entry_cmp(e->keys[fresh[ie]], &e->tids[fresh[ie]],
										  src->e.keys[i], &src->e.tids[i]) < 0))
		{
			merged.pos[o] = pos ? pos[fresh[ie]] : 0;
			merged.xmin[o] = xmin ? xmin[fresh[ie]] : GBT_XMIN_UNKNOWN;
			merged.xmax[o] = InvalidTransactionId;
			gbt_copy_entry(&merged.e, o, e, fresh[ie++]);
			merged.e.nulls[o++] &= ~GBT_ENTRY_XMIN_UNKNOWN;
			continue;
		}
		if (src == a)
			ia++;
		else
			ib++;
		if (src->xmin[i] != GBT_XMIN_DEAD)	/* no snapshot sees it: left out */
			run_copy(&merged, o++, src, i);
	}
	merged.e.n = o;
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
			run_merge(m, &m->runs[r - 1], &m->runs[r], NULL, NULL, 0, NULL, NULL);
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
	while ((m->merge_a < a->e.n || m->merge_b < b->e.n) && m->merge_a + m->merge_b < stop)
	{
		const GbtRun *src = b;
		int64		i;

		if (m->merge_b >= b->e.n ||
			(m->merge_a < a->e.n &&
			 gbt_entry_cmp(a->e.keys[m->merge_a], &a->e.tids[m->merge_a],
						   b->e.keys[m->merge_b], &b->e.tids[m->merge_b]) < 0))
			src = a, i = m->merge_a++;
		else
			i = m->merge_b++;
		if (src->xmin[i] != GBT_XMIN_DEAD)
			run_copy(into, into->e.n++, src, i);
	}
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
 * Add entries fresh[0..nfresh) of e, new to the mirror, inserted by xmin[]
 * and logged at pos[] (either NULL: see run_merge()), to the delta.
 */
void
gbt_delta_add(GbtMirror *m, const GbtEntries *e, const int64 *fresh, int64 nfresh,
			  const uint64 *pos, const TransactionId *xmin)
{
	filter_add(m, e, fresh, nfresh);
	if (xmin == NULL)
		m->unknown += nfresh;	/* run_merge() stamps them unknown */
	/* Into the smallest run; each that outgrows its share, one up. */
	run_merge(m, &m->runs[GBT_RUNS - 1], NULL, e, fresh, nfresh, pos, xmin);
	run_cascade(m);
}
