/*
 * mirror_walk.c
 *	  The walk over the entries an aggregate decides one by one, the tree's
 *	  stamped ones and the delta's, in several threads when there are many
 *	  (mirror_walk.h); and the sinks of the range aggregates over it.
 *
 * After an UPDATE of a percent of a large table, until the settling pass
 * can run (while a snapshot older than the update runs), a range holds
 * hundreds of thousands of such entries, the tree's scattered over its
 * arrays: one core decides them at the pace of its cache misses.  The walk
 * is cut into chunks (a stretch of one source's entries in one target, at
 * most GBT_WALK_CHUNK), and runs of chunks of about the same cost make the
 * pieces, one a thread: a single long range is split too.
 *
 * A thread may not touch PostgreSQL's state: gbt_snapview_quick() is pure
 * and decides most entries (transactions the service knows ended), but
 * gbt_snapview_decide_stamps() has a cache and may ask the commit log.  So
 * each piece keeps the entries quick() leaves undecided, in order, and the
 * calling thread decides them after the threads end, piece by piece: the
 * sink sees the entries that go to the heap in the same order whatever the
 * number of threads.  A piece whose list is full stops there, and the
 * calling thread walks the rest of it itself.
 */
#include "postgres.h"

#include "port/pg_bitutils.h"
#include "portability/instr_time.h"

#include "agg_state.h"
#include "mirror_walk.h"
#include "runsums.h"

/*
 * Costs, in delta entries decided one by one: a tree entry costs more, its
 * loads scattered over the tree's arrays where a run's are in order (3
 * times as long, measured at 2^24 entries).  Pieces are cut by cost, so
 * that one range's stamped entries do not all fall to one thread and its
 * delta entries to another.
 */
#define GBT_WALK_TREE_COST 3

#ifndef GBT_WALK_PIECE_MIN		/* make GBT_SMALL_LAYOUT=1: tiny, for tests */
/* Cost a thread of a walk is worth at least. */
#define GBT_WALK_PIECE_MIN 16384
/* Cost from which a round's walk runs alone, in threads of its own. */
#define GBT_WALK_ALONE_MIN (2 * GBT_WALK_PIECE_MIN)
/* Entries of a chunk at most: a multiple of GBT_SUM_BLOCK. */
#define GBT_WALK_CHUNK 8192
/* Undecided entries a piece keeps for the calling thread at most. */
#define GBT_WALK_PENDING 65536
#endif

/*
 * Cost a thread of a round's many small walks is worth at least (whole
 * walks a piece): beside writers each 1 % range of 2^24 entries costs ~500
 * (its delta's ends and masked entries), and 64 sessions' walks, ~25 us
 * each, ran one after another in the service's thread at
 * GBT_WALK_PIECE_MIN; a piece of a few thousand is worth a wake-up.
 */
#define GBT_WALK_MANY_PIECE_MIN Max(GBT_WALK_PIECE_MIN / 32, 1)

/*
 * A round's walks are planned in the pool's threads too (their searches of
 * the runs were a third of the walk, in the service's thread, beside 8
 * writers on the H100), this many a piece at least, each into chunks of
 * its own, GBT_WALK_MANY_CHUNKS at most (a longer plan is made again in
 * the calling thread).
 */
#define GBT_WALK_PLANS_PIECE_MIN 2
#define GBT_WALK_MANY_CHUNKS 32

StaticAssertDecl(GBT_WALK_CHUNK % GBT_SUM_BLOCK == 0,
				 "chunks of a run cut between its summed blocks");

/* The sources of the entries, in the walk's order for each target. */
#define SRC_STAMPED 0			/* m->stamped */
#define SRC_RECENT 1			/* m->recent */
#define SRC_RUN 2				/* + d: m->runs[d] */

struct GbtWalkChunk
{
	int64		from;			/* indexes of the source's entries */
	int64		to;
	int64		target;
	int64		cost;
	int			source;
};

/* An entry left undecided: index at of chunk's source. */
typedef struct WalkRef
{
	int64		chunk;
	int64		at;
} WalkRef;

/*
 * A thread's piece.  The walk writes npending (and pending[]) at each
 * entry it keeps: padded to cache lines of its own, so that threads do not
 * share them (WalkSlot).
 */
typedef struct WalkPiece
{
	GbtWalk    *w;
	void	   *state;
	int64		c;				/* where it is: chunk c, entry at */
	int64		at;
	int64		c1;				/* where its chunks end */
	bool		here;			/* in the calling thread: decides them all */
	WalkRef    *pending;		/* the undecided, for the calling thread */
	int64		npending;
	int64		cap;
	int64		nsingly;		/* delta entries decided one by one */
} WalkPiece;

typedef union WalkSlot
{
	WalkPiece	p;
	char		pad[CACHELINEALIGN(sizeof(WalkPiece)) + PG_CACHE_LINE_SIZE];
} WalkSlot;

/* ---- the plan ---------------------------------------------------------- */

static void
add_chunk(GbtWalk *w, int source, int64 target, int64 from, int64 to, int64 cost)
{
	GbtWalkChunk *ch;

	if (w->nchunks == w->chunks_cap && w->chunks_fixed)
	{
		w->overflowed = true;
		return;
	}
	if (w->nchunks == w->chunks_cap)
	{
		w->chunks_cap = Max(w->chunks_cap * 2, 64);
		w->chunks = w->chunks == NULL ?
			palloc_extended(sizeof(GbtWalkChunk) * w->chunks_cap, MCXT_ALLOC_HUGE) :
			repalloc_huge(w->chunks, sizeof(GbtWalkChunk) * w->chunks_cap);
	}
	ch = &w->chunks[w->nchunks++];
	ch->from = from;
	ch->to = to;
	ch->target = target;
	ch->cost = cost;
	ch->source = source;
}

/* Whether the walk adds blocks of plain delta entries by their sums. */
static inline bool
walk_sums(const GbtWalk *w)
{
	return w->ops->take_sum != NULL && w->view->stamps;
}

/*
 * The cost of entries [from, to) of a run: one each, but a summed block
 * one and its entries decided one by one.
 */
static int64
run_cost(const GbtWalk *w, const GbtRun *run, int64 from, int64 to)
{
	int64		cost = to - from;
	int64		b;

	if (!walk_sums(w))
		return cost;
	for (b = (from + GBT_SUM_BLOCK - 1) / GBT_SUM_BLOCK; (b + 1) * GBT_SUM_BLOCK <= to; b++)
	{
		const uint64 *walk;
		int			left = 0;
		int			k;

		if (!gbt_run_sum(run, b, w->log_bound, &walk, NULL))
			continue;
		for (k = 0; k < GBT_MASK_WORDS; k++)
			left += pg_popcount64(walk[k]);
		cost -= GBT_SUM_BLOCK - 1 - left;
	}
	return cost;
}

/*
 * Entries [from, to) of a source in target: chunks, cut at multiples of
 * GBT_WALK_CHUNK (so between a run's summed blocks).
 */
static void
add_stretch(GbtWalk *w, int source, int64 target, int64 from, int64 to)
{
	int64		a;
	int64		b;

	if (to <= from)
		return;
	if (source >= SRC_RUN)
		w->ndelta += to - from;
	else
		w->nstamped += to - from;
	for (a = from; a < to; a = b)
	{
		b = Min(to, (a / GBT_WALK_CHUNK + 1) * GBT_WALK_CHUNK);
		add_chunk(w, source, target, a, b,
				  source >= SRC_RUN ? run_cost(w, &w->m->runs[source - SRC_RUN], a, b) :
				  (b - a) * GBT_WALK_TREE_COST);
	}
}

/*
 * The entries of stamp list l at the base positions of ranges [r0, r1).
 * Few entries among many ranges (a long key list): each entry finds its
 * range by binary search, rather than each range its entries.
 */
static void
plan_stamped(GbtWalk *w, int source, const GbtStampList *l, int64 target, int64 r0,
			 int64 r1)
{
	const int64 *start = w->start;
	const int64 *end = w->end;
	int64		r;
	int64		x;

	if (l->n == 0 || r1 <= r0)
		return;
	if (l->n >= r1 - r0)
	{
		/* the ranges ascend: each search gallops from the last one's end */
		x = 0;
		for (r = r0; r < r1; r++)
		{
			int64		x0;

			if (start[r] >= end[r])
				continue;
			x0 = gbt_stamps_lower_from(l, start[r], x);
			x = gbt_stamps_lower_from(l, end[r], x0);
			add_stretch(w, source, target, x0, x);
		}
		return;
	}
	r = r0;
	x = gbt_stamps_lower(l, start[r0]);
	while (x < l->n)
	{
		int64		x1;

		/* the last range that starts at or before the entry */
		r = gbt_pos_bound(start, r + 1, r1, l->pos[x], true) - 1;
		if (l->pos[x] >= end[r])
		{
			x++;				/* between two ranges */
			continue;
		}
		x1 = gbt_stamps_lower_from(l, end[r], x);
		add_stretch(w, source, target, x, x1);
		x = x1;
	}
}

/*
 * The entries of run d in the key ranges [r0, r1); a run shorter than the
 * list of ranges is walked entry by entry, each finding its range.
 */
static void
plan_run(GbtWalk *w, int d, int64 target, int64 r0, int64 r1)
{
	const uint64 *keys = w->m->runs[d].e.keys;
	int64		n = w->m->runs[d].e.n;
	int64		r;
	int64		i;

	if (n == 0 || r1 <= r0)
		return;
	if (n >= r1 - r0)
	{
		for (r = r0; r < r1; r++)
			add_stretch(w, SRC_RUN + d, target,
						gbt_key_bound(keys, 0, n, w->lo[r], false),
						gbt_key_bound(keys, 0, n, w->hi[r], true));
		return;
	}
	r = r0;
	i = gbt_key_bound(keys, 0, n, w->lo[r0], false);
	while (i < n)
	{
		int64		to;

		/* the last range whose lower end is at or below the key */
		r = gbt_key_bound(w->lo, r + 1, r1, keys[i], true) - 1;
		if (keys[i] > w->hi[r])
		{
			i++;				/* between two ranges */
			continue;
		}
		to = gbt_key_bound(keys, 0, n, w->hi[r], true);
		add_stretch(w, SRC_RUN + d, target, i, to);
		i = to;
	}
}

int
gbt_walk_plan(GbtWalk *w)
{
	int64		ntargets = w->each ? w->nranges : 1;
	int64		total = 0;
	int64		acc = 0;
	int64		c = 0;
	int64		t;
	int			npieces = 1;
	int			k;
	int			d;

	if (!w->chunks_fixed)
	{
		w->chunks = NULL;
		w->chunks_cap = 0;
	}
	w->nchunks = 0;
	w->overflowed = false;
	w->nstamped = w->ndelta = 0;
	for (t = 0; t < ntargets; t++)
	{
		int64		r0 = w->each ? t : 0;
		int64		r1 = w->each ? t + 1 : w->nranges;

		plan_stamped(w, SRC_STAMPED, &w->m->stamped, t, r0, r1);
		plan_stamped(w, SRC_RECENT, &w->m->recent, t, r0, r1);
		for (d = 0; d < GBT_RUNS; d++)
			plan_run(w, d, t, r0, r1);
	}
	for (c = 0; c < w->nchunks; c++)
		total += w->chunks[c].cost;

	/*
	 * Untrusted stamps leave every entry to the calling thread: nothing for
	 * threads to do.
	 */
	if (w->ops->take != NULL && w->view->stamps)
		npieces = (int) Max(Min(gbt_threads_for(total, GBT_WALK_PIECE_MIN), w->nchunks), 1);

	/* Runs of chunks of about total / npieces each. */
	w->cut[0] = 0;
	c = 0;
	for (k = 1; k < npieces; k++)
	{
		while (c < w->nchunks && acc < total * k / npieces)
			acc += w->chunks[c++].cost;
		w->cut[k] = c;
	}
	w->cut[npieces] = w->nchunks;
	w->npieces = npieces;
	return npieces;
}

bool
gbt_walk_targets(const GbtWalk *w, int k, int64 *first, int64 *last)
{
	if (w->cut[k] >= w->cut[k + 1])
		return false;
	*first = w->chunks[w->cut[k]].target;
	*last = w->chunks[w->cut[k + 1] - 1].target;
	return true;
}

int64
gbt_walk_piece_entries(const GbtWalk *w, int k)
{
	int64		entries = 0;
	int64		c;

	for (c = w->cut[k]; c < w->cut[k + 1]; c++)
		entries += w->chunks[c].to - w->chunks[c].from;
	return entries;
}

/* ---- the pieces -------------------------------------------------------- */

static inline void
deliver(const WalkPiece *p, int64 target, const GbtEntries *src, int64 i, int verdict)
{
	const GbtWalk *w = p->w;

	if (verdict == GBT_SKIP)
		return;
	if (verdict == GBT_TAKE && w->ops->take != NULL)
		w->ops->take(w, p->state, target, src, i);
	else
	{
		Assert(p->here);
		w->ops->put(w, target, src, i, verdict);
	}
}

/* Keep entry at of chunk p->c for the calling thread; false: no room. */
static inline bool
keep(WalkPiece *p, int64 at)
{
	if (p->npending == p->cap)
		return false;
	p->pending[p->npending].chunk = p->c;
	p->pending[p->npending].at = at;
	p->npending++;
	return true;
}

/* Chunk ch of a stamp list from p->at; false: stopped, p->at where. */
static bool
walk_stamped(WalkPiece *p, const GbtWalkChunk *ch)
{
	const GbtWalk *w = p->w;
	const GbtMirror *m = w->m;
	const GbtStampList *l = ch->source == SRC_STAMPED ? &m->stamped : &m->recent;
	int64		x;

	for (x = p->at; x < Min(p->at + GBT_PREFETCH_AHEAD, ch->to); x++)
		gbt_prefetch_entry(m, l->pos[x]);
	for (x = p->at; x < ch->to; x++)
	{
		int64		pos = l->pos[x];
		int			v;

		if (x + GBT_PREFETCH_AHEAD < ch->to)
			gbt_prefetch_entry(m, l->pos[x + GBT_PREFETCH_AHEAD]);
		if (IS_REMOVED(m, pos))
			continue;
		v = gbt_snapview_quick(w->view, l->xmin[x], l->xmax[x]);
		if (v == GBT_UNDECIDED)
		{
			if (!p->here)
			{
				if (keep(p, x))
					continue;
				p->at = x;
				return false;
			}
			v = gbt_snapview_decide_stamps(w->view, l->xmin[x], l->xmax[x],
										   gbt_base_block(m, pos));
		}
		deliver(p, ch->target, &m->base, pos, v);
	}
	return true;
}

/* Entry i of a run, if logged before the bound; false: no room to keep it. */
static inline bool
walk_run_entry(WalkPiece *p, const GbtWalkChunk *ch, const GbtRun *run, int64 i)
{
	const GbtWalk *w = p->w;
	int			v;

	if (run->pos[i] >= w->log_bound)
		return true;
	p->nsingly++;
	v = gbt_snapview_quick(w->view, run->xmin[i], run->xmax[i]);
	if (v == GBT_UNDECIDED)
	{
		if (!p->here)
			return keep(p, i);
		v = gbt_snapview_decide_stamps(w->view, run->xmin[i], run->xmax[i],
									   ItemPointerGetBlockNumberNoCheck(&run->e.tids[i]));
	}
	deliver(p, ch->target, &run->e, i, v);
	return true;
}

/*
 * Entries [from, to) of a run, the larger part of one summed block (a
 * range's end), for a request that asks no min or max: by the block's sum
 * less its plain entries outside them (runsums.c: gbt_run_sum_less()),
 * then the masked ones inside one by one.  Beside writers a range's ends
 * in each run were most of the entries an aggregate decided one by one.
 * False: not so (no sum, or no room to keep the masked ones): the caller
 * walks them one by one.
 */
static bool
walk_part(WalkPiece *p, const GbtWalkChunk *ch, const GbtRun *run, int64 from, int64 to)
{
	const GbtWalk *w = p->w;
	int64		first = from - from % GBT_SUM_BLOCK;
	const uint64 *walk;
	gbt_agg_result sum;
	int64		i;

	if (!w->view->no_extremes || 2 * (to - from) <= GBT_SUM_BLOCK ||
		(!p->here && p->cap - p->npending < to - from) ||
		!gbt_run_sum_less(w->m, run, first / GBT_SUM_BLOCK, from, to, w->log_bound,
						  &walk, &sum))
		return false;
	w->ops->take_sum(w, p->state, ch->target, &sum);
	for (i = from; i < to; i++)
		if (gbt_mask_has(walk, i - first))
			(void) walk_run_entry(p, ch, run, i);
	return true;
}

/*
 * Chunk ch of a run from p->at: whole summed blocks by their sums and the
 * entries their masks leave out, a block's larger part at the chunk's ends
 * as walk_part() says, the rest one by one.  False: stopped, at an entry
 * or a block, p->at where.
 */
static bool
walk_run(WalkPiece *p, const GbtWalkChunk *ch)
{
	const GbtWalk *w = p->w;
	const GbtRun *run = &w->m->runs[ch->source - SRC_RUN];
	bool		sums = walk_sums(w);
	int64		i;

	for (i = p->at; i < ch->to; i++)
	{
		gbt_agg_result sum;
		const uint64 *walk;
		int			k;

		if (sums && i % GBT_SUM_BLOCK == 0 && i + GBT_SUM_BLOCK <= ch->to &&
			gbt_run_sum(run, i / GBT_SUM_BLOCK, w->log_bound, &walk, &sum))
		{
			if (!p->here && p->cap - p->npending < GBT_SUM_BLOCK)
			{
				p->at = i;
				return false;
			}
			w->ops->take_sum(w, p->state, ch->target, &sum);
			for (k = 0; k < GBT_MASK_WORDS; k++)
			{
				uint64		bits = walk[k];

				while (bits != 0)
				{
					(void) walk_run_entry(p, ch, run, i + k * 64 + pg_rightmost_one_pos64(bits));
					bits &= bits - 1;
				}
			}
			i += GBT_SUM_BLOCK - 1;
			continue;
		}
		/*
		 * A block cut by the chunk's start or end, nothing of it walked yet
		 * (a whole one without a sum has none less its outside entries).
		 */
		if (sums && (i == ch->from || i % GBT_SUM_BLOCK == 0))
		{
			int64		part_end = Min(i - i % GBT_SUM_BLOCK + GBT_SUM_BLOCK, ch->to);

			if (part_end - i < GBT_SUM_BLOCK && walk_part(p, ch, run, i, part_end))
			{
				i = part_end - 1;
				continue;
			}
		}
		if (!walk_run_entry(p, ch, run, i))
		{
			p->at = i;
			return false;
		}
	}
	return true;
}

/* A piece's chunks from where it is, until done or its list is full. */
static void
walk_piece(void *arg)
{
	WalkPiece  *p = (WalkPiece *) arg;
	const GbtWalkChunk *chunks = p->w->chunks;

	while (p->c < p->c1)
	{
		const GbtWalkChunk *ch = &chunks[p->c];

		if (!(ch->source >= SRC_RUN ? walk_run(p, ch) : walk_stamped(p, ch)))
			return;
		if (++p->c < p->c1)
			p->at = chunks[p->c].from;
	}
}

/* In the calling thread: the entries piece p left undecided, in order. */
static void
decide_kept(WalkPiece *p)
{
	const GbtWalk *w = p->w;
	const GbtMirror *m = w->m;
	int64		k;

	p->here = true;
	for (k = 0; k < p->npending; k++)
	{
		const GbtWalkChunk *ch = &w->chunks[p->pending[k].chunk];
		int64		at = p->pending[k].at;
		int			v;

		if (ch->source >= SRC_RUN)
		{
			const GbtRun *run = &m->runs[ch->source - SRC_RUN];

			v = gbt_snapview_decide_stamps(w->view, run->xmin[at], run->xmax[at],
										   ItemPointerGetBlockNumberNoCheck(&run->e.tids[at]));
			deliver(p, ch->target, &run->e, at, v);
		}
		else
		{
			const GbtStampList *l = ch->source == SRC_STAMPED ? &m->stamped : &m->recent;

			v = gbt_snapview_decide_stamps(w->view, l->xmin[at], l->xmax[at],
										   gbt_base_block(m, l->pos[at]));
			deliver(p, ch->target, &m->base, l->pos[at], v);
		}
	}
}

void
gbt_walk_run(GbtWalk *w, void *states, Size state_size, GbtAggSteps *steps)
{
	WalkSlot	pieces[GBT_THREADS_MAX];
	instr_time	t0,
				t1,
				t2;
	int			k;

	INSTR_TIME_SET_CURRENT(t0);
	for (k = 0; k < w->npieces; k++)
	{
		WalkPiece  *p = &pieces[k].p;
		int64		entries = 0;
		int64		c;

		memset(p, 0, sizeof(WalkPiece));
		p->w = w;
		p->state = states == NULL ? NULL : (char *) states + k * state_size;
		p->c = w->cut[k];
		p->c1 = w->cut[k + 1];
		p->at = p->c < p->c1 ? w->chunks[p->c].from : 0;
		p->here = w->npieces == 1;
		for (c = p->c; c < p->c1 && !p->here; c++)
			entries += w->chunks[c].to - w->chunks[c].from;
		if (!p->here)
		{
			p->cap = Min(entries, GBT_WALK_PENDING);
			p->pending = palloc_extended(sizeof(WalkRef) * Max(p->cap, 1), MCXT_ALLOC_HUGE);
		}
	}
	if (w->npieces == 1)
		walk_piece(&pieces[0].p);
	else
		gbt_run_pieces(walk_piece, pieces, sizeof(WalkSlot), w->npieces);
	INSTR_TIME_SET_CURRENT(t1);

	/* Then, in order, what each left undecided, and where it stopped on. */
	for (k = 0; k < w->npieces && w->npieces > 1; k++)
	{
		steps->nlater += pieces[k].p.npending;
		decide_kept(&pieces[k].p);
		walk_piece(&pieces[k].p);
		pfree(pieces[k].p.pending);
	}
	for (k = 0; k < w->npieces; k++)
		steps->nsingly += pieces[k].p.nsingly;
	INSTR_TIME_SET_CURRENT(t2);
	steps->walk_ms += INSTR_TIME_GET_MILLISEC(t2) - INSTR_TIME_GET_MILLISEC(t0);
	steps->later_ms += INSTR_TIME_GET_MILLISEC(t2) - INSTR_TIME_GET_MILLISEC(t1);
	steps->nstamped += w->nstamped;
	steps->ndelta += w->ndelta;
	steps->nthreads = Max(steps->nthreads, w->npieces);
}

void
gbt_walk_end(GbtWalk *w)
{
	if (w->chunks != NULL)
		pfree(w->chunks);
	w->chunks = NULL;
	w->nchunks = w->chunks_cap = 0;
}

/* ---- the aggregates' sinks --------------------------------------------- */

/* A piece's results: per target from first on, per_target each. */
typedef struct AggPiece
{
	GbtAggResult *res;
	int64		first;
	int			per_target;
} AggPiece;

static void
take_entry(const GbtWalk *w, void *state, int64 target, const GbtEntries *src, int64 i)
{
	AggPiece   *a = (AggPiece *) state;
	int64		vals[GBT_MAX_COLS];
	int			c;

	for (c = 0; c < src->ncols; c++)
		vals[c] = gbt_entry_val(src, c, i);
	gbt_agg_add_entry(&a->res[target - a->first], &w->m->columns, vals,
					  gbt_entry_nulls(src, i));
}

static void
take_block(const GbtWalk *w, void *state, int64 target, const gbt_agg_result *sum)
{
	AggPiece   *a = (AggPiece *) state;

	gbt_agg_combine(&a->res[target - a->first], sum, &w->m->columns);
}

static void
put_entry(const GbtWalk *w, int64 target, const GbtEntries *src, int64 i, int verdict)
{
	GbtEntrySink *s = (GbtEntrySink *) w->sink;

	gbt_sink_list(s, &s->agg[target], src, i, verdict);
}

/* Whether WHERE is TRUE for entry i of src; its values and NULLs out. */
static inline bool
filtered_where(const gbt_pred_set *preds, const GbtEntries *src, int64 i,
			   uint64 *vals, uint8 *nulls)
{
	int			c;

	for (c = 0; c < src->ncols; c++)
		vals[c] = (uint64) gbt_entry_val(src, c, i);
	*nulls = gbt_entry_nulls(src, i);
	return preds->where == NULL ||
		gbt_pred_run(preds->where, preds->list, vals, *nulls) == GBT_TV_TRUE;
}

/* Into each filter's result whose program is TRUE for it. */
static void
take_filtered(const GbtWalk *w, void *state, int64 target, const GbtEntries *src,
			  int64 i)
{
	AggPiece   *a = (AggPiece *) state;
	const gbt_pred_set *preds = ((const GbtEntrySink *) w->sink)->preds;
	GbtAggResult *outs = &a->res[(target - a->first) * a->per_target];
	uint64		vals[GBT_MAX_COLS] = {0};
	uint8		nulls;
	int			f;

	if (!filtered_where(preds, src, i, vals, &nulls))
		return;
	for (f = 0; f < preds->nfilters; f++)
		if (preds->filter[f] == NULL ||
			gbt_pred_run(preds->filter[f], preds->list, vals, nulls) == GBT_TV_TRUE)
			gbt_agg_add_entry(&outs[f], &w->m->columns, (const int64 *) vals, nulls);
}

/* Listed once if WHERE is TRUE for it, counted in agg[0]. */
static void
put_filtered(const GbtWalk *w, int64 target, const GbtEntries *src, int64 i,
			 int verdict)
{
	GbtEntrySink *s = (GbtEntrySink *) w->sink;
	uint64		vals[GBT_MAX_COLS] = {0};
	uint8		nulls;

	if (filtered_where(s->preds, src, i, vals, &nulls))
		gbt_sink_list(s, &s->agg[0], src, i, verdict);
}

static const GbtWalkOps plain_ops = {take_entry, take_block, put_entry};
static const GbtWalkOps filtered_ops = {take_filtered, NULL, put_filtered};
static const GbtWalkOps listing_ops = {NULL, NULL, put_entry};

void
gbt_walk_aggregate(GbtWalk *w, GbtAggResult *outs, int64 nslots, GbtAggSteps *steps)
{
	GbtEntrySink *s = (GbtEntrySink *) w->sink;
	int			per_target = (int) (nslots / (w->each ? Max(w->nranges, 1) : 1));
	AggPiece	pieces[GBT_THREADS_MAX];
	Size		bytes[GBT_THREADS_MAX];
	Size		total = PG_CACHE_LINE_SIZE;
	char	   *block = NULL;
	char	   *at;
	int			npieces;
	int			k;

	w->ops = s->preds != NULL ? &filtered_ops : s->verdicts != NULL ? &listing_ops : &plain_ops;
	npieces = gbt_walk_plan(w);

	/*
	 * One piece adds into outs; several each into its own targets' results,
	 * written at every entry: on cache lines of their own.
	 */
	for (k = 0; k < npieces; k++)
	{
		int64		first;
		int64		last;

		pieces[k].per_target = per_target;
		pieces[k].first = 0;
		pieces[k].res = outs;
		bytes[k] = 0;
		if (npieces > 1 && gbt_walk_targets(w, k, &first, &last))
		{
			pieces[k].first = first;
			bytes[k] = CACHELINEALIGN(sizeof(GbtAggResult) * per_target * (last - first + 1));
			total += bytes[k];
		}
	}
	if (npieces > 1)
	{
		block = palloc_extended(total, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		at = (char *) CACHELINEALIGN(block);
		for (k = 0; k < npieces; k++)
			if (bytes[k] > 0)
			{
				pieces[k].res = (GbtAggResult *) at;
				at += bytes[k];
			}
	}
	gbt_walk_run(w, pieces, sizeof(AggPiece), steps);

	/* Merged in piece order. */
	for (k = 0; k < npieces && npieces > 1; k++)
	{
		int64		first;
		int64		last;
		int64		j;

		if (!gbt_walk_targets(w, k, &first, &last))
			continue;
		for (j = 0; j < (last - first + 1) * per_target; j++)
			gbt_agg_combine(&outs[first * per_target + j], &pieces[k].res[j], &w->m->columns);
	}
	if (block != NULL)
		pfree(block);
	gbt_walk_end(w);
}

/* Plans of walks [from, to) of a round's, one piece. */
typedef struct PlanPiece
{
	GbtWalk    *walks;
	int			from;
	int			to;
} PlanPiece;

static void
plan_piece(void *arg)
{
	PlanPiece  *pp = (PlanPiece *) arg;
	int			i;

	for (i = pp->from; i < pp->to; i++)
		(void) gbt_walk_plan(&pp->walks[i]);
}

/* Whether w's mirror has stamped or delta entries: anything to plan. */
static bool
walk_has_sources(const GbtWalk *w)
{
	int			d;

	if (w->m->stamped.n > 0 || w->m->recent.n > 0)
		return true;
	for (d = 0; d < GBT_RUNS; d++)
		if (w->m->runs[d].e.n > 0)
			return true;
	return false;
}

/*
 * The plans of a round's n walks, in the pool's threads when there are
 * enough with something to plan (read-only, a plan is a few tests: the
 * threads' wake-up cost more): into chunks of their own, each made again
 * here where it needed more.
 */
static void
plan_many(GbtWalk *walks, int n)
{
	PlanPiece	pieces[GBT_PIECES_MAX];
	int			npieces;
	int			nsources = 0;
	int			i;
	int			k;

	for (i = 0; i < n; i++)
	{
		walks[i].ops = &plain_ops;
		nsources += walk_has_sources(&walks[i]);
	}
	npieces = gbt_pieces_for_units(nsources, GBT_WALK_PLANS_PIECE_MIN);
	if (npieces <= 1)
	{
		for (i = 0; i < n; i++)
			(void) gbt_walk_plan(&walks[i]);
		return;
	}
	for (i = 0; i < n; i++)
	{
		walks[i].chunks_fixed = true;
		walks[i].chunks_cap = GBT_WALK_MANY_CHUNKS;
		walks[i].chunks = palloc(sizeof(GbtWalkChunk) * GBT_WALK_MANY_CHUNKS);
	}
	for (k = 0; k < npieces; k++)
	{
		pieces[k].walks = walks;
		pieces[k].from = (int) ((int64) n * k / npieces);
		pieces[k].to = (int) ((int64) n * (k + 1) / npieces);
	}
	gbt_run_pieces(plan_piece, pieces, sizeof(PlanPiece), npieces);
	for (i = 0; i < n; i++)
	{
		walks[i].chunks_fixed = false;
		if (!walks[i].overflowed)
			continue;
		pfree(walks[i].chunks);
		walks[i].chunks = NULL;
		walks[i].chunks_cap = 0;
		(void) gbt_walk_plan(&walks[i]);
	}
}

/* Walks [from, to) of a round's, one piece (gbt_walk_aggregate_many()). */
typedef struct ManyPiece
{
	WalkSlot   *slots;
	const bool *alone;
	int			from;
	int			to;
} ManyPiece;

static void
many_piece(void *arg)
{
	ManyPiece  *mp = (ManyPiece *) arg;
	int			i;

	for (i = mp->from; i < mp->to; i++)
		if (!mp->alone[i])
			walk_piece(&mp->slots[i].p);
}

void
gbt_walk_aggregate_many(GbtWalk *walks, GbtAggResult **outs, int n, GbtAggSteps **steps)
{
	WalkSlot   *slots = palloc0(sizeof(WalkSlot) * Max(n, 1));
	AggPiece   *states = palloc0(sizeof(AggPiece) * Max(n, 1));
	bool	   *alone = palloc0(sizeof(bool) * Max(n, 1));
	int64	   *cost = palloc0(sizeof(int64) * Max(n, 1));
	ManyPiece	pieces[GBT_PIECES_MAX];
	int64		total = 0;
	int64		acc = 0;
	int			npieces;
	int			i;
	int			k;
	instr_time	t0,
				t1,
				tp1;

	INSTR_TIME_SET_CURRENT(t0);
	for (i = 0; i < n; i++)
		Assert(((GbtEntrySink *) walks[i].sink)->preds == NULL &&
			   ((GbtEntrySink *) walks[i].sink)->verdicts == NULL && !walks[i].each);
	plan_many(walks, n);
	INSTR_TIME_SET_CURRENT(tp1);
	for (i = 0; i < n; i++)
		steps[i]->plan_ms += (INSTR_TIME_GET_MILLISEC(tp1) - INSTR_TIME_GET_MILLISEC(t0)) / n;
	for (i = 0; i < n; i++)
	{
		GbtWalk    *w = &walks[i];
		WalkPiece  *p = &slots[i].p;
		int64		entries = 0;
		int64		c;

		for (c = 0; c < w->nchunks; c++)
		{
			entries += w->chunks[c].to - w->chunks[c].from;
			cost[i] += w->chunks[c].cost;
		}

		/*
		 * A walk worth threads of its own runs alone, as a query's would;
		 * so does one of untrusted stamps (its every entry decided here).
		 */
		if (cost[i] >= GBT_WALK_ALONE_MIN || !w->view->stamps)
		{
			alone[i] = true;
			cost[i] = 0;
			gbt_walk_end(w);
			continue;
		}
		states[i].res = outs[i];
		states[i].per_target = 1;
		p->w = w;
		p->state = &states[i];
		p->c = 0;				/* the whole walk, one piece */
		p->c1 = w->nchunks;
		p->at = p->c < p->c1 ? w->chunks[p->c].from : 0;
		total += cost[i];
		p->cap = Min(entries, GBT_WALK_PENDING);
	}

	/* Runs of walks of about total / npieces each, whole walks. */
	npieces = (int) Max(Min(gbt_pieces_for_units(total, GBT_WALK_MANY_PIECE_MIN), n), 1);
	for (k = 0, i = 0; k < npieces; k++)
	{
		pieces[k].slots = slots;
		pieces[k].alone = alone;
		pieces[k].from = i;
		while (i < n && (k == npieces - 1 || acc < total * (k + 1) / npieces))
			acc += cost[i++];
		pieces[k].to = i;
	}
	for (i = 0; i < n; i++)
	{
		WalkPiece  *p = &slots[i].p;

		if (alone[i])
			continue;
		if (npieces == 1)
			p->here = true;		/* one piece: all here, nothing kept */
		else
			p->pending = palloc_extended(sizeof(WalkRef) * Max(p->cap, 1),
										 MCXT_ALLOC_HUGE);
	}
	if (npieces > 1)
		gbt_run_pieces(many_piece, pieces, sizeof(ManyPiece), npieces);
	INSTR_TIME_SET_CURRENT(t1);

	/* Then, walk by walk, what each left undecided, and the rest of it. */
	for (i = 0; i < n; i++)
	{
		WalkPiece  *p = &slots[i].p;
		GbtWalk    *w = &walks[i];
		instr_time	t2,
					t3;

		if (alone[i])
		{
			gbt_walk_aggregate(w, outs[i], 1, steps[i]);
			continue;
		}
		INSTR_TIME_SET_CURRENT(t2);
		steps[i]->nlater += p->npending;
		if (p->here)
			walk_piece(p);
		else
		{
			decide_kept(p);
			walk_piece(p);
		}
		if (p->pending != NULL)
			pfree(p->pending);
		INSTR_TIME_SET_CURRENT(t3);
		steps[i]->walk_ms += INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t0) +
			INSTR_TIME_GET_MILLISEC(t3) - INSTR_TIME_GET_MILLISEC(t2);
		steps[i]->later_ms += INSTR_TIME_GET_MILLISEC(t3) - INSTR_TIME_GET_MILLISEC(t2);
		steps[i]->nstamped += w->nstamped;
		steps[i]->ndelta += w->ndelta;
		steps[i]->nsingly += p->nsingly;
		steps[i]->nthreads = Max(steps[i]->nthreads, npieces);
		gbt_walk_end(w);
	}
	pfree(slots);
	pfree(states);
	pfree(alone);
	pfree(cost);
}
