/*
 * runsums.c
 *	  Sums of blocks of plain delta entries (mirror_int.h).
 *
 * A range aggregate decides each delta entry against the query's snapshot.
 * Most of the delta is plain once settled: every snapshot sees those
 * entries, and those of a block of GBT_SUM_BLOCK can be added as one
 * partial aggregate, the block's other entries decided one by one (a mask).
 * The settling pass, which walks the runs anyway, makes the sums; a
 * deletion stamped on a summed entry takes it back out of the sum (or
 * drops the block's sum), and a run whose arrays are rebuilt (merges,
 * VACUUM) loses them all until the next pass.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "agg_state.h"
#include "runsums.h"
#include "snapview.h"

#define MASK_WORDS ((GBT_SUM_BLOCK + 63) / 64)

/*
 * The aggregate of block b's other entries is count[b] and cols[b * ncols
 * ...]: the run's columns only (a gbt_agg_result has room for
 * GBT_MAX_COLS, four times a one-column run's), as blocks are small.
 */
struct GbtRunSums
{
	int64		nblocks;		/* full blocks of the run */
	int			ncols;
	bool	   *valid;			/* the sum and walk[b] hold for block b */
	uint64	   *maxpos;			/* the latest log position summed in b */
	int32	   *nwalk;			/* entries of block b left to decide */
	uint64	   *walk;			/* MASK_WORDS per block: those entries */
	int64	   *count;
	gbt_agg_col *cols;
};

void
gbt_run_sums_free(GbtRun *run)
{
	if (run->sums == NULL)
		return;
	pfree(run->sums->valid);
	pfree(run->sums->maxpos);
	pfree(run->sums->nwalk);
	pfree(run->sums->walk);
	pfree(run->sums->count);
	pfree(run->sums->cols);
	pfree(run->sums);
	run->sums = NULL;
}

Size
gbt_run_sums_bytes(const GbtRun *run)
{
	const GbtRunSums *s = run->sums;

	if (s == NULL)
		return 0;
	return s->nblocks * (sizeof(bool) + sizeof(uint64) + sizeof(int32) +
						 sizeof(uint64) * MASK_WORDS + sizeof(int64) +
						 sizeof(gbt_agg_col) * s->ncols);
}

/*
 * Block b's sum into r (its columns past the run's left as they are: no
 * one reads them), or r's into block b.
 */
static void
sum_get(const GbtRunSums *s, int64 b, gbt_agg_result *r)
{
	r->count = s->count[b];
	r->nunsure = 0;
	memcpy(r->col, &s->cols[b * s->ncols], sizeof(gbt_agg_col) * s->ncols);
}

static void
sum_put(GbtRunSums *s, int64 b, const gbt_agg_result *r)
{
	s->count[b] = r->count;
	memcpy(&s->cols[b * s->ncols], r->col, sizeof(gbt_agg_col) * s->ncols);
}

static inline bool
is_plain(const GbtRun *run, int64 i)
{
	return run->xmin[i] == GBT_XMIN_FROZEN && run->xmax[i] == InvalidTransactionId;
}

/*
 * Entry i of run was stamped: taken out of its block's sum to be decided
 * one by one, or, where the sum cannot give it back exactly, the block's
 * sum dropped until the next settling pass.
 */
void
gbt_run_sums_drop(const GbtMirror *m, GbtRun *run, int64 i)
{
	GbtRunSums *s = run->sums;
	int64		b = i / GBT_SUM_BLOCK;
	int64		j = i % GBT_SUM_BLOCK;
	uint64	   *walk;
	int64		vals[GBT_MAX_COLS];
	gbt_agg_result sum;
	int			c;

	if (s == NULL || b >= s->nblocks || !s->valid[b])
		return;
	walk = &s->walk[b * MASK_WORDS + j / 64];
	if (*walk & (UINT64CONST(1) << (j % 64)))
		return;
	for (c = 0; c < run->e.ncols; c++)
		vals[c] = run->e.vals[c][i];
	sum_get(s, b, &sum);
	if (gbt_agg_remove_entry(&sum, &m->columns, vals, run->e.nulls[i]))
	{
		sum_put(s, b, &sum);
		*walk |= UINT64CONST(1) << (j % 64);
		s->nwalk[b]++;
	}
	else
		s->valid[b] = false;
}

/*
 * Make the sum of the given block of run over its plain entries, the others
 * marked to be decided one by one; nplain: how many are plain now (the
 * settling pass counted them).  Kept if nothing settled since it was made.
 * Returns the entries looked at.
 */
int64
gbt_run_sums_make(const GbtMirror *m, GbtRun *run, int64 block, int64 nplain)
{
	GbtRunSums *s = run->sums;
	int64		from = block * GBT_SUM_BLOCK;
	uint64	   *walk;
	int64		vals[GBT_MAX_COLS];
	gbt_agg_result sum;
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
		s->ncols = m->columns.ncols;
		s->valid = palloc_extended(sizeof(bool) * n, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		s->maxpos = palloc_extended(sizeof(uint64) * n, MCXT_ALLOC_HUGE);
		s->nwalk = palloc_extended(sizeof(int32) * n, MCXT_ALLOC_HUGE);
		s->walk = palloc_extended(sizeof(uint64) * MASK_WORDS * n, MCXT_ALLOC_HUGE);
		s->count = palloc_extended(sizeof(int64) * n, MCXT_ALLOC_HUGE);
		s->cols = palloc_extended(sizeof(gbt_agg_col) * Max(s->ncols, 1) * n,
								  MCXT_ALLOC_HUGE);
		MemoryContextSwitchTo(old);
		run->sums = s;
	}
	if (block >= s->nblocks ||
		(s->valid[block] && s->nwalk[block] == GBT_SUM_BLOCK - nplain))
		return 0;
	walk = &s->walk[block * MASK_WORDS];
	memset(walk, 0, sizeof(uint64) * MASK_WORDS);
	s->nwalk[block] = 0;
	gbt_agg_init(&sum);
	for (i = from; i < from + GBT_SUM_BLOCK; i++)
	{
		if (!is_plain(run, i))
		{
			walk[(i - from) / 64] |= UINT64CONST(1) << ((i - from) % 64);
			s->nwalk[block]++;
			continue;
		}
		for (c = 0; c < run->e.ncols; c++)
			vals[c] = run->e.vals[c][i];
		gbt_agg_add_entry(&sum, &m->columns, vals, run->e.nulls[i]);
		maxpos = Max(maxpos, run->pos[i]);
	}
	sum_put(s, block, &sum);
	s->maxpos[block] = maxpos;
	s->valid[block] = true;
	return GBT_SUM_BLOCK;
}

/*
 * Whether block of run has a sum, made and its entries logged before
 * log_bound: then the sum into *sum (unless NULL), and in *walk the mask of
 * the block's entries to decide one by one (MASK_WORDS words); else false
 * (decide them all).
 */
bool
gbt_run_sum(const GbtRun *run, int64 block, uint64 log_bound, const uint64 **walk,
			gbt_agg_result *sum)
{
	const GbtRunSums *s = run->sums;

	if (s == NULL || block >= s->nblocks || !s->valid[block] ||
		s->maxpos[block] >= log_bound)
		return false;
	*walk = &s->walk[block * MASK_WORDS];
	if (sum != NULL)
		sum_get(s, block, sum);
	return true;
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
