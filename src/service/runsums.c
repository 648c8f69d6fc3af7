/*
 * runsums.c
 *	  Sums of blocks of plain delta entries (mirror_int.h).
 *
 * A range aggregate decides each delta entry against the query's snapshot.
 * Most of the delta is plain once settled: every snapshot sees those
 * entries, and a block of GBT_SUM_BLOCK of them can be added as one partial
 * aggregate.  The settling pass, which walks the runs anyway, makes the
 * sums of blocks whose entries are all plain; a deletion stamped on an
 * entry drops its block's sum, and a run whose arrays are rebuilt (merges,
 * VACUUM) loses them all until the next pass.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "agg_state.h"
#include "mirror_int.h"
#include "snapview.h"

struct GbtRunSums
{
	int64		nblocks;		/* full blocks of the run */
	bool	   *valid;			/* sum[b] holds block b's aggregate */
	uint64	   *maxpos;			/* the latest log position in block b */
	gbt_agg_result *sum;
};

void
gbt_run_sums_free(GbtRun *run)
{
	if (run->sums == NULL)
		return;
	pfree(run->sums->valid);
	pfree(run->sums->maxpos);
	pfree(run->sums->sum);
	pfree(run->sums);
	run->sums = NULL;
}

/* Entry i of run is stamped: its block's sum no longer holds. */
void
gbt_run_sums_drop(GbtRun *run, int64 i)
{
	if (run->sums != NULL && i / GBT_SUM_BLOCK < run->sums->nblocks)
		run->sums->valid[i / GBT_SUM_BLOCK] = false;
}

/*
 * Make the sum of the given block of run if all its entries are plain (a
 * partial block at the end never is summed).  Returns the entries it
 * looked at; a block already summed costs none.
 */
int64
gbt_run_sums_make(const GbtMirror *m, GbtRun *run, int64 block)
{
	GbtRunSums *s = run->sums;
	int64		from = block * GBT_SUM_BLOCK;
	int64		vals[GBT_MAX_COLS];
	uint64		maxpos = 0;
	int64		i;
	int			c;

	if (s == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
		int64		n = run->e.n / GBT_SUM_BLOCK;

		if (n == 0)
		{
			MemoryContextSwitchTo(old);
			return 0;
		}
		s = palloc(sizeof(GbtRunSums));
		s->nblocks = n;
		s->valid = palloc_extended(sizeof(bool) * n, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		s->maxpos = palloc_extended(sizeof(uint64) * n, MCXT_ALLOC_HUGE);
		s->sum = palloc_extended(sizeof(gbt_agg_result) * n, MCXT_ALLOC_HUGE);
		MemoryContextSwitchTo(old);
		run->sums = s;
	}
	if (block >= s->nblocks || s->valid[block])
		return 0;
	for (i = from; i < from + GBT_SUM_BLOCK; i++)
		if (run->xmin[i] != GBT_XMIN_FROZEN || run->xmax[i] != InvalidTransactionId)
			return i - from + 1;
	gbt_agg_init(&s->sum[block]);
	for (i = from; i < from + GBT_SUM_BLOCK; i++)
	{
		for (c = 0; c < run->e.ncols; c++)
			vals[c] = run->e.vals[c][i];
		gbt_agg_add_entry(&s->sum[block], &m->columns, vals, run->e.nulls[i]);
		maxpos = Max(maxpos, run->pos[i]);
	}
	s->maxpos[block] = maxpos;
	s->valid[block] = true;
	return GBT_SUM_BLOCK;
}

/*
 * The sum of block of run, if made and all its entries were logged before
 * log_bound; else NULL (decide them one by one).
 */
const gbt_agg_result *
gbt_run_sum(const GbtRun *run, int64 block, uint64 log_bound)
{
	const GbtRunSums *s = run->sums;

	if (s == NULL || block >= s->nblocks || !s->valid[block] ||
		s->maxpos[block] >= log_bound)
		return NULL;
	return &s->sum[block];
}

/*
 * Whether a run of at least a block has no sums yet (rebuilt by a merge or
 * VACUUM since the last settling pass): a pass is due for it even while no
 * stamp can settle.
 */
bool
gbt_mirror_lacks_sums(const GbtMirror *m)
{
	int			r;

	for (r = 0; r < GBT_RUNS; r++)
		if (m->runs[r].sums == NULL && m->runs[r].e.n >= GBT_SUM_BLOCK &&
			!gbt_run_merging(m, r))
			return true;
	return false;
}
