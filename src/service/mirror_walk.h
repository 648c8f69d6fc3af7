/*
 * mirror_walk.h
 *	  The walk over the entries an aggregate decides one by one
 *	  (mirror_walk.c): the tree's stamped entries (both stamp lists) at the
 *	  ranges' base positions and the delta runs' entries in their keys,
 *	  logged before log_bound, split over threads when there are many.
 *
 * Each entry the snapshot sees goes to the piece's own state (ops->take,
 * in the piece's thread); entries the quick test leaves undecided
 * (snapview.h: gbt_snapview_quick()) are kept by the piece, in order, and
 * decided in the calling thread after the threads end; the entries the
 * snapshot may see (GBT_UNSURE) reach the sink (ops->put) in the calling
 * thread, in the walk's order: each target's stamped list, its recent
 * list, then runs 0 to 3, by position.  The caller then merges the pieces'
 * states, in piece order.  A new kind of aggregate brings its GbtWalkOps
 * and a state per piece:
 *
 *		GbtWalk		w = {.m = m, .start = start, ..., .ops = &ops, .sink = &sink};
 *		int			n = gbt_walk_plan(&w);
 *
 *		for (k = 0; k < n; k++)		(gbt_walk_targets(): piece k's targets)
 *			make state k;
 *		gbt_walk_run(&w, states, sizeof(state), steps);
 *		for (k = 0; k < n; k++)
 *			merge state k;
 *		gbt_walk_end(&w);
 *
 * as gbt_walk_aggregate() does for the range aggregates.
 */
#ifndef GPUBTREE_MIRROR_WALK_H
#define GPUBTREE_MIRROR_WALK_H

#include "mirror_int.h"
#include "snapview.h"
#include "threads.h"

/* How many entries ahead the walks ask the caches for. */
#define GBT_PREFETCH_AHEAD 16

/*
 * Ask the caches for what deciding and adding tree entry p reads: the
 * stamped entries lie scattered over the tree's arrays, and prefetched a
 * few entries ahead their loads overlap.  Always inlined: a function whose
 * only effect is prefetches counts as having none, and gcc drops the calls.
 */
static pg_attribute_always_inline void
gbt_prefetch_entry(const GbtMirror *m, int64 p)
{
	int			c;

	if (m->removed != NULL)
		__builtin_prefetch(&m->removed[p >> 3]);
	if (m->hidden != NULL)
		__builtin_prefetch(&m->hidden[p >> 3]);
	__builtin_prefetch(&m->base.keys[p]);
	__builtin_prefetch(&m->base.tids[p]);
	if (m->base.nulls != NULL)
		__builtin_prefetch(&m->base.nulls[p]);
	for (c = 0; c < m->base.ncols; c++)
		if (m->base.vals[c] != NULL)
			__builtin_prefetch(&m->base.vals[c][p]);
		else if (m->base.narrow[c] != NULL)
			__builtin_prefetch(&m->base.narrow[c][p]);
}

typedef struct GbtWalk GbtWalk;

/*
 * What a walk does with what it decides; target: the range the entry is in
 * (GbtWalk.each), else 0.
 *	take: an entry the snapshot sees, into a piece's state; runs in the
 *		piece's thread, so it touches nothing but state and what is
 *		read-only during the walk (no palloc, no ereport).  NULL: every
 *		entry the snapshot may see goes to put, and the walk is one piece.
 *	take_sum: a block's sum of plain delta entries (runsums.h), into state;
 *		NULL: those entries are decided one by one.
 *	put: in the calling thread, an entry the snapshot may see (GBT_UNSURE,
 *		or with take NULL GBT_TAKE too), into w->sink.
 */
typedef struct GbtWalkOps
{
	void		(*take) (const GbtWalk *w, void *state, int64 target,
						 const GbtEntries *src, int64 i);
	void		(*take_sum) (const GbtWalk *w, void *state, int64 target,
							 const gbt_agg_result *sum);
	void		(*put) (const GbtWalk *w, int64 target, const GbtEntries *src,
						int64 i, int verdict);
} GbtWalkOps;

typedef struct GbtWalkChunk GbtWalkChunk;

struct GbtWalk
{
	/* the caller's */
	const GbtMirror *m;
	const int64 *start;			/* the ranges' base positions [start, end) */
	const int64 *end;
	const uint64 *lo;			/* and their keys [lo, hi], sorted, disjoint */
	const uint64 *hi;
	int64		nranges;
	bool		each;			/* one target a range (else all target 0) */
	uint64		log_bound;
	GbtSnapView *view;
	const GbtWalkOps *ops;
	void	   *sink;			/* the ops' context: put writes it, the
								 * threads only read it */

	/*
	 * gbt_walk_plan()'s.  With chunks_fixed, chunks (chunks_cap of them) is
	 * the caller's and stays so: a plan that needs more says overflowed,
	 * and touches no memory context, so that a pool thread may make it.
	 */
	bool		chunks_fixed;
	bool		overflowed;
	int			npieces;
	int64		nstamped;		/* tree entries in the ranges */
	int64		ndelta;			/* delta entries in the ranges */
	GbtWalkChunk *chunks;
	int64		nchunks;
	int64		chunks_cap;
	int64		cut[GBT_THREADS_MAX + 1];	/* piece k: chunks [cut[k], cut[k+1]) */
};

/*
 * Split the walk into chunks and pieces; returns the pieces (1 to
 * GBT_THREADS_MAX), for which the caller makes as many states.
 */
extern int	gbt_walk_plan(GbtWalk *w);

/*
 * The targets piece k's entries are in: [*first, *last] (the pieces take
 * targets in order, so that each needs state for its own span only); false
 * when it has none.
 */
extern bool gbt_walk_targets(const GbtWalk *w, int k, int64 *first, int64 *last);

/* The entries of piece k's chunks: the most it can take. */
extern int64 gbt_walk_piece_entries(const GbtWalk *w, int k);

/*
 * Walk: piece k into states + k * state_size, and the entries left
 * undecided then (the timings and counts added to steps).  What take
 * writes at every entry should sit on cache lines of its own per piece
 * (PG_CACHE_LINE_SIZE), or the threads slow each other down.
 */
extern void gbt_walk_run(GbtWalk *w, void *states, Size state_size, GbtAggSteps *steps);
extern void gbt_walk_end(GbtWalk *w);

/*
 * The aggregates' sink (mirror_search.c): entries that go to the heap are
 * listed up to cap (with their verdicts for a lookup) and counted in
 * agg[target].nunsure (a filtered aggregate's: agg[0]) beyond it too.
 */
typedef struct GbtEntrySink
{
	GbtAggResult *agg;
	GbtEntries *list;
	uint8	   *verdicts;
	int64		cap;
	const gbt_pred_set *preds;	/* filtered (predicate.h): WHERE, FILTERs */
} GbtEntrySink;

static inline void
gbt_sink_list(GbtEntrySink *s, GbtAggResult *counter, const GbtEntries *src, int64 i,
			  int verdict)
{
	if (s->list->n < s->cap)
	{
		if (s->verdicts != NULL)
			s->verdicts[s->list->n] = verdict;
		gbt_copy_entry(s->list, s->list->n++, src, i);
	}
	counter->nunsure++;
}

/*
 * The walk of an aggregate into outs (w->sink a GbtEntrySink): a plain one's
 * (outs[target]), a filtered one's (outs[target * nfilters + f]) or a
 * lookup's listing (outs unused); nslots results in outs.
 */
extern void gbt_walk_aggregate(GbtWalk *w, GbtAggResult *outs, int64 nslots,
							   GbtAggSteps *steps);

/*
 * The walks of a round's plain aggregates (walks[i] into outs[i], a single
 * target, the sink a plain GbtEntrySink), at once: each planned here, the
 * small ones run whole, several a thread (what gbt_snapview_quick()
 * decides), then here, walk by walk in order, what each left undecided;
 * a walk worth threads of its own runs alone, as gbt_walk_aggregate().
 * Each walk's sink sees its entries in the same order as alone.
 */
extern void gbt_walk_aggregate_many(GbtWalk *walks, GbtAggResult **outs, int n,
									GbtAggSteps **steps);

#endif							/* GPUBTREE_MIRROR_WALK_H */
