/*
 * mirror_batch.c
 *	  A round's range aggregates answered together (mirror.h:
 *	  gbt_mirror_aggregate_batch()): the ranges' tree positions, found by
 *	  binary searches in threads (a few ranges an item) or by the engine;
 *	  the tree's plain entries of every item in one engine call per kind of
 *	  engine (engine.h's aggregate_batch: chunk sums, then the ends scanned
 *	  in threads or, on the GPU, one launch a mirror); then each item's
 *	  unsure entries copied, and the stamped and delta entries of all items
 *	  walked at once (mirror_walk.h: gbt_walk_aggregate_many()), each as
 *	  gbt_mirror_aggregate() walks them.
 */
#include "postgres.h"

#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "agg_state.h"
#include "keybound.h"
#include "mirror_walk.h"

/* Ranges an item may have for its positions to be searched on the host. */
#define GBT_BATCH_HOST_SEARCH 8

/* What one item needs beyond the caller's. */
typedef struct BatchState
{
	int64	   *start;
	int64	   *end;
	int64	   *upos;			/* the engine's unsure positions */
	int64		room;
	bool		trusted;
	bool		host_search;
} BatchState;

/* A run of items [from, to) whose positions a thread finds. */
typedef struct SearchPiece
{
	GbtMirrorAggItem *items;
	BatchState *states;
	int			from;
	int			to;
} SearchPiece;

static void
search_piece(void *arg)
{
	SearchPiece *p = (SearchPiece *) arg;
	int			i;

	for (i = p->from; i < p->to; i++)
	{
		const GbtMirror *m = p->items[i].m;
		BatchState *st = &p->states[i];
		int64		r;

		if (!st->host_search)
			continue;
		for (r = 0; r < p->items[i].nranges; r++)
		{
			uint64		lo = p->items[i].lo[r];
			uint64		hi = p->items[i].hi[r];

			st->start[r] = gbt_sorted_bound_near(m->base.keys, m->base.n, lo, false);
			st->end[r] = lo > hi ? st->start[r] :
				gbt_sorted_bound_near(m->base.keys, m->base.n, hi, true);
		}
	}
}

/* The positions of every item: on the host in threads, or by its engine. */
static void
find_positions(GbtMirrorAggItem *items, BatchState *states, int n)
{
	SearchPiece pieces[GBT_THREADS_MAX];
	int			npieces;
	int			k;
	int			i;

	for (i = 0; i < n; i++)
		if (items[i].ok && !states[i].host_search &&
			!gbt_mirror_ranges(items[i].m, items[i].lo, items[i].hi, items[i].nranges,
							   states[i].start, states[i].end, items[i].err,
							   sizeof(items[i].err)))
			items[i].ok = false;

	/*
	 * two searches a range (keybound.h: ~0.2 us near the guess, 5-6 us at
	 * 2^26 where it fails): a thread per 64 items, as waking one cost more
	 * than a batch of 33 (0.084 against 0.026 ms a batch on the H200)
	 */
	npieces = gbt_threads_for(n, 64);
	for (k = 0; k < npieces; k++)
	{
		pieces[k].items = items;
		pieces[k].states = states;
		pieces[k].from = (int) ((int64) n * k / npieces);
		pieces[k].to = (int) ((int64) n * (k + 1) / npieces);
	}
	if (npieces <= 1)
		search_piece(&pieces[0]);
	else
		gbt_run_pieces(search_piece, pieces, sizeof(SearchPiece), npieces);
}

/*
 * The items' positions and unsure lists, in one buffer kept between
 * batches and grown to the largest (up to BATCH_KEEP_MAX entries): each
 * item's unsure room is 512 kB for a plain aggregate, and allocating and
 * freeing those every batch cost a malloc, a free and the heap's trim.
 */
#define BATCH_KEEP_MAX ((Size) 8 << 20)

static int64 *batch_buf = NULL;
static Size batch_buf_len = 0;

static int64 *
batch_buffer(Size len)
{
	if (len > batch_buf_len)
	{
		if (batch_buf != NULL)
			pfree(batch_buf);
		batch_buf = NULL;
		batch_buf_len = 0;
		batch_buf = MemoryContextAllocHuge(TopMemoryContext, sizeof(int64) * len);
		batch_buf_len = len;
	}
	return batch_buf;
}

/* After a batch: a buffer grown past BATCH_KEEP_MAX is not kept. */
static void
batch_buffer_done(void)
{
	if (batch_buf_len > BATCH_KEEP_MAX)
	{
		pfree(batch_buf);
		batch_buf = NULL;
		batch_buf_len = 0;
	}
}

void
gbt_mirror_aggregate_batch(GbtMirrorAggItem *items, int n)
{
	BatchState *states = palloc0(sizeof(BatchState) * Max(n, 1));
	gbt_agg_item *eitems = palloc0(sizeof(gbt_agg_item) * Max(n, 1));
	bool	   *called = palloc0(sizeof(bool) * Max(n, 1));
	GbtWalk    *walks = palloc0(sizeof(GbtWalk) * Max(n, 1));
	GbtEntrySink *sinks = palloc0(sizeof(GbtEntrySink) * Max(n, 1));
	GbtAggResult **outs = palloc(sizeof(GbtAggResult *) * Max(n, 1));
	GbtAggSteps **steps = palloc(sizeof(GbtAggSteps *) * Max(n, 1));
	int			nwalks = 0;
	instr_time	t0,
				t1,
				t2;
	int			i;
	int			j;
	Size		len = 0;
	int64	   *buf;

	INSTR_TIME_SET_CURRENT(t0);
	for (i = 0; i < n; i++)
		len += 2 * (Size) Max(items[i].nranges, 1) +
			(Size) Max(items[i].unsure_cap - items[i].unsure->n, 1);
	buf = batch_buffer(len);
	for (i = 0; i < n; i++)
	{
		GbtMirrorAggItem *it = &items[i];
		BatchState *st = &states[i];

		memset(&it->steps, 0, sizeof(it->steps));
		memset(it->out, 0, sizeof(gbt_agg_result));
		it->ok = true;
		it->err[0] = '\0';
		st->room = Max(it->unsure_cap - it->unsure->n, 0);
		st->start = buf;
		st->end = buf + Max(it->nranges, 1);
		st->upos = st->end + Max(it->nranges, 1);
		buf = st->upos + Max(st->room, 1);
		st->trusted = gbt_mirror_trusts_stamps(it->m) && it->view->stamps;
		st->host_search = it->nranges <= GBT_BATCH_HOST_SEARCH;
	}
	find_positions(items, states, n);
	INSTR_TIME_SET_CURRENT(t1);

	/* The tree's plain entries: one call per kind of engine. */
	for (i = 0; i < n; i++)
	{
		GbtMirrorAggItem *it = &items[i];
		const GbtMirror *m = it->m;
		gbt_agg_item *e = &eitems[i];

		gbt_mirror_note_hidden(it->m);
		e->e = m->engine;
		e->removed = m->hidden;
		e->removed_version = m->hidden_version;
		e->start = (const int64_t *) states[i].start;
		e->end = (const int64_t *) states[i].end;
		e->nranges = it->ok ? it->nranges : 0;
		e->visible = states[i].trusted ? m->allvis : it->view->visible;
		e->nvisible = states[i].trusted ? m->nallvis : it->view->nvisible;
		e->visible_all = states[i].trusted; /* m->allvis: all set */
		e->cols = (1u << m->base.ncols) - 1;
		e->out = it->out;
		e->unsure = (int64_t *) states[i].upos;
		e->unsure_cap = states[i].room;
	}
	for (i = 0; i < n; i++)
	{
		const gbt_engine_ops *ops = items[i].m->ops;
		gbt_agg_item *group;
		int			ngroup = 0;

		if (called[i])
			continue;
		group = palloc(sizeof(gbt_agg_item) * n);
		for (j = i; j < n; j++)
			if (!called[j] && items[j].m->ops == ops)
				group[ngroup++] = eitems[j];
		(void) ops->aggregate_batch(group, ngroup, gbt_run_pieces, gbt_pieces_wanted());
		for (j = 0; j < GBT_BATCH_STEPS; j++)
			items[0].steps.batch_ms[j] += group[0].steps_ms[j];
		ngroup = 0;
		for (j = i; j < n; j++)
			if (!called[j] && items[j].m->ops == ops)
			{
				eitems[j] = group[ngroup++];
				called[j] = true;
			}
		pfree(group);
	}
	INSTR_TIME_SET_CURRENT(t2);

	/* Then each item's unsure entries, and the walks, at once. */
	for (i = 0; i < n; i++)
	{
		GbtMirrorAggItem *it = &items[i];
		BatchState *st = &states[i];
		int64		k;

		if (it->ok && eitems[i].rc != 0)
		{
			it->ok = false;
			strlcpy(it->err, eitems[i].err, sizeof(it->err));
		}
		if (!it->ok)
			continue;
		for (k = 0; k < Min(it->out->nunsure, st->room); k++)
			gbt_copy_entry(it->unsure, it->unsure->n++, &it->m->base, st->upos[k]);
		it->steps.positions_ms = INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t0);
		it->steps.tree_ms = INSTR_TIME_GET_MILLISEC(t2) - INSTR_TIME_GET_MILLISEC(t0);
		it->view->stamps = st->trusted;
		sinks[nwalks] = (GbtEntrySink)
		{
			it->out, it->unsure, NULL, it->unsure_cap, NULL
		};
		walks[nwalks] = (GbtWalk)
		{
			.m = it->m,.start = st->start,.end = st->end,.lo = it->lo,.hi = it->hi,
				.nranges = it->nranges,.log_bound = it->log_bound,.view = it->view,
				.sink = &sinks[nwalks]
		};
		outs[nwalks] = it->out;
		steps[nwalks++] = &it->steps;
	}
	gbt_walk_aggregate_many(walks, outs, nwalks, steps);
	batch_buffer_done();
	pfree(walks);
	pfree(sinks);
	pfree(outs);
	pfree(steps);
	pfree(states);
	pfree(eitems);
	pfree(called);
}
