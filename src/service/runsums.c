/*
 * runsums.c
 *	  Sums of blocks of plain delta entries (mirror_int.h).
 *
 * A range aggregate decides each delta entry against the query's snapshot.
 * Most of the delta is plain once settled: every snapshot sees those
 * entries, and those of a block of GBT_SUM_BLOCK can be added as one
 * partial aggregate, the block's other entries decided one by one (a mask).
 * A merge makes the sums of the run it writes, block by block as it fills
 * them (a merged run replaces its two sources summed: beside writers the
 * largest runs merge every few seconds, and each aggregate would otherwise
 * decide a merged run's entries one by one until the next settling pass);
 * the settling pass, which walks the runs anyway, makes them again where
 * stamps settled.  A deletion stamped on a summed entry takes it back out
 * of the sum (or drops the block's sum), and a run whose arrays VACUUM's
 * sweep rebuilds loses them all until the next pass.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "agg_state.h"
#include "runsums.h"
#include "snapview.h"


/*
 * The aggregate of block b's other entries is count[b] and cols[b * ncols
 * ...]: the run's columns only (a gbt_agg_result has room for
 * GBT_MAX_COLS, four times a one-column run's), as blocks are small.
 */
struct GbtRunSums
{
	int64		nblocks;		/* full blocks of the run (as merged: of
								 * its final size) */
	int64		filled;			/* blocks a merge summed, from the first */
	int			ncols;
	bool	   *valid;			/* the sum and walk[b] hold for block b */
	uint64	   *maxpos;			/* the latest log position summed in b */
	int32	   *nwalk;			/* entries of block b left to decide */
	uint64	   *walk;			/* GBT_MASK_WORDS per block: those entries */
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
						 sizeof(uint64) * GBT_MASK_WORDS + sizeof(int64) +
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
	walk = &s->walk[b * GBT_MASK_WORDS];
	if (gbt_mask_has(walk, j))
		return;
	for (c = 0; c < run->e.ncols; c++)
		vals[c] = run->e.vals[c][i];
	sum_get(s, b, &sum);
	if (gbt_agg_remove_entry(&sum, &m->columns, vals, run->e.nulls[i]))
	{
		sum_put(s, b, &sum);
		gbt_mask_set(walk, j);
		s->nwalk[b]++;
	}
	else
		s->valid[b] = false;
}

/* run's sums, made for nblocks blocks, none valid yet. */
static GbtRunSums *
sums_alloc(const GbtMirror *m, GbtRun *run, int64 nblocks)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	GbtRunSums *s = palloc(sizeof(GbtRunSums));

	s->nblocks = nblocks;
	s->filled = 0;
	s->ncols = m->columns.ncols;
	s->valid = palloc_extended(sizeof(bool) * nblocks, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	s->maxpos = palloc_extended(sizeof(uint64) * nblocks, MCXT_ALLOC_HUGE);
	s->nwalk = palloc_extended(sizeof(int32) * nblocks, MCXT_ALLOC_HUGE);
	s->walk = palloc_extended(sizeof(uint64) * GBT_MASK_WORDS * nblocks, MCXT_ALLOC_HUGE);
	s->count = palloc_extended(sizeof(int64) * nblocks, MCXT_ALLOC_HUGE);
	s->cols = palloc_extended(sizeof(gbt_agg_col) * Max(s->ncols, 1) * nblocks,
							  MCXT_ALLOC_HUGE);
	MemoryContextSwitchTo(old);
	run->sums = s;
	return s;
}

/* Block b's sum over its plain entries, the others marked to walk. */
static void
sum_block(const GbtMirror *m, GbtRun *run, GbtRunSums *s, int64 b)
{
	int64		from = b * GBT_SUM_BLOCK;
	uint64	   *walk = &s->walk[b * GBT_MASK_WORDS];
	int64		vals[GBT_MAX_COLS];
	gbt_agg_result sum;
	uint64		maxpos = 0;
	int64		i;
	int			c;

	memset(walk, 0, sizeof(uint64) * GBT_MASK_WORDS);
	s->nwalk[b] = 0;
	gbt_agg_init(&sum);
	for (i = from; i < from + GBT_SUM_BLOCK; i++)
	{
		if (!is_plain(run, i))
		{
			gbt_mask_set(walk, i - from);
			s->nwalk[b]++;
			continue;
		}
		for (c = 0; c < run->e.ncols; c++)
			vals[c] = run->e.vals[c][i];
		gbt_agg_add_entry(&sum, &m->columns, vals, run->e.nulls[i]);
		maxpos = Max(maxpos, run->pos[i]);
	}
	sum_put(s, b, &sum);
	s->maxpos[b] = maxpos;
	s->valid[b] = true;
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

	if (s == NULL)
	{
		if (run->e.n / GBT_SUM_BLOCK == 0)
			return 0;
		s = sums_alloc(m, run, run->e.n / GBT_SUM_BLOCK);
	}
	if (block >= s->nblocks || (block + 1) * GBT_SUM_BLOCK > run->e.n ||
		(s->valid[block] && s->nwalk[block] == GBT_SUM_BLOCK - nplain))
		return 0;
	sum_block(m, run, s, block);
	return GBT_SUM_BLOCK;
}

/*
 * The sums of the blocks a merge filled in run (written in key order, to
 * final entries) since it last asked: each full block once.
 */
void
gbt_run_sums_fill(const GbtMirror *m, GbtRun *run, int64 final)
{
	GbtRunSums *s = run->sums;

	if (s == NULL)
	{
		if (final / GBT_SUM_BLOCK == 0)
			return;
		s = sums_alloc(m, run, final / GBT_SUM_BLOCK);
	}
	for (; s->filled < s->nblocks && (s->filled + 1) * GBT_SUM_BLOCK <= run->e.n; s->filled++)
		sum_block(m, run, s, s->filled);
}

/*
 * Whether block of run has a sum, made and its entries logged before
 * log_bound: then the sum into *sum (unless NULL), and in *walk the mask of
 * the block's entries to decide one by one (GBT_MASK_WORDS words); else false
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
	*walk = &s->walk[block * GBT_MASK_WORDS];
	if (sum != NULL)
		sum_get(s, block, sum);
	return true;
}

/*
 * For a request that asks no min or max: block's sum over its plain entries
 * in [from, to) alone (part of the block: a range's end), made by taking
 * the block's other plain entries out of its sum, into *sum, with the
 * block's mask in *walk (its entries in [from, to) there are decided one
 * by one, as for a whole block).  *sum's min and max are then not
 * meaningful.  False: the block has no sum before log_bound, or a column's
 * values cannot be taken out (float8).
 */
bool
gbt_run_sum_less(const GbtMirror *m, const GbtRun *run, int64 block, int64 from,
				 int64 to, uint64 log_bound, const uint64 **walk, gbt_agg_result *sum)
{
	int64		first = block * GBT_SUM_BLOCK;
	int64		vals[GBT_MAX_COLS];
	int64		i;
	int			c;

	Assert(first <= from && from < to && to <= first + GBT_SUM_BLOCK);
	if (!gbt_run_sum(run, block, log_bound, walk, sum))
		return false;
	for (i = first; i < first + GBT_SUM_BLOCK; i++)
	{
		if (i == from)
			i = to;				/* the part itself stays in */
		if (i >= first + GBT_SUM_BLOCK)
			break;
		if (gbt_mask_has(*walk, i - first))
			continue;			/* not in the sum */
		for (c = 0; c < run->e.ncols; c++)
			vals[c] = run->e.vals[c][i];
		if (!gbt_agg_remove_sums(sum, &m->columns, vals, run->e.nulls[i]))
			return false;
	}
#ifdef GBT_CHECK_RUN_SUMS
	{
		gbt_agg_result direct;

		gbt_agg_init(&direct);
		for (i = from; i < to; i++)
		{
			if (gbt_mask_has(*walk, i - first))
				continue;
			for (c = 0; c < run->e.ncols; c++)
				vals[c] = run->e.vals[c][i];
			gbt_agg_add_entry(&direct, &m->columns, vals, run->e.nulls[i]);
		}
		if (direct.count != sum->count)
			elog(PANIC, "gpubtree: block %lld's sum less its entries outside [%lld, %lld): count %lld, added up %lld",
				 (long long) block, (long long) from, (long long) to,
				 (long long) sum->count, (long long) direct.count);
		for (c = 0; c < run->e.ncols; c++)
			if (direct.col[c].nonnull != sum->col[c].nonnull ||
				direct.col[c].sum_hi != sum->col[c].sum_hi ||
				direct.col[c].sum_lo != sum->col[c].sum_lo)
				elog(PANIC, "gpubtree: block %lld's sum less its entries outside [%lld, %lld): column %d differs from its entries added up",
					 (long long) block, (long long) from, (long long) to, c);
	}
#endif
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

#ifdef GBT_CHECK_RUN_SUMS

/* run's sums against its entries (gbt_run_sums_check()); where: its name */
static void
check_run(const GbtRun *run, const char *where)
{
	const GbtRunSums *s = run->sums;
	int64		b;

	if (s == NULL)
		return;
	for (b = 0; b < s->nblocks; b++)
	{
		const uint64 *walk = &s->walk[b * GBT_MASK_WORDS];
		int64		from = b * GBT_SUM_BLOCK;
		int64		nwalk = 0;
		int64		i;

		if (!s->valid[b])
			continue;
		if (from + GBT_SUM_BLOCK > run->e.n)
			elog(PANIC, "gpubtree: %s: block %lld summed past the run's %lld entries",
				 where, (long long) b, (long long) run->e.n);
		for (i = from; i < from + GBT_SUM_BLOCK; i++)
		{
			if (gbt_mask_has(walk, i - from))
				nwalk++;
			else if (!is_plain(run, i))
				elog(PANIC, "gpubtree: %s: entry %lld summed in block %lld, but stamped (xmin %u, xmax %u)",
					 where, (long long) i, (long long) b, run->xmin[i], run->xmax[i]);
		}
		if (nwalk != s->nwalk[b] || s->count[b] != GBT_SUM_BLOCK - nwalk)
			elog(PANIC, "gpubtree: %s: block %lld: %lld entries to walk, %d counted, sum of %lld",
				 where, (long long) b, (long long) nwalk, s->nwalk[b], (long long) s->count[b]);
	}
}

/*
 * For the small layout's tests: every summed block of m's runs (and of a
 * stepped merge's new run) leaves out of its sum, to be walked, each of
 * its entries that is not plain, or an aggregate would count a row that
 * its snapshot does not see until the next settling pass remade the sum.
 * Called after each change of stamps or runs; PANIC (the tests fail) on a
 * breach.
 */
void
gbt_run_sums_check(const GbtMirror *m)
{
	int			r;

	for (r = 0; r < GBT_RUNS; r++)
		check_run(&m->runs[r], "run");
	if (m->merge_run != 0)
		check_run(&m->merge_into, "merge");
}

#endif							/* GBT_CHECK_RUN_SUMS */
