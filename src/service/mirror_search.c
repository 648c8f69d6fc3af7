/*
 * mirror_search.c
 *	  Searches of a mirror: the tree positions of key ranges (on the host
 *	  for a few, else by the engine), and aggregates over them, or the
 *	  listing of their entries for a lookup: the engine's part over the
 *	  tree's plain entries, then the stamped entries and the delta's,
 *	  decided entry by entry against the query's snapshot by the walk of
 *	  mirror_walk.c.
 */
#include "postgres.h"

#include "port/pg_bitutils.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "agg_state.h"
#include "keybound.h"
#include "mirror_walk.h"

/* Batches of at most this many ranges are searched on the host. */
#define GBT_HOST_SEARCH_MAX 8

bool
gbt_mirror_sort_unique(GbtMirror *m, uint64 *keys, int64 n, uint32 *map, int64 *nout,
					   char *err, Size errlen)
{
	StaticAssertStmt(sizeof(int64) == sizeof(int64_t), "int64 size");
	return m->ops->sort_unique(m->engine, (uint64_t *) keys, n, map, (int64_t *) nout,
							   err, errlen) == 0;
}

bool
gbt_mirror_ranges(GbtMirror *m, const uint64 *lo, const uint64 *hi,
				  int64 nranges, int64 *start, int64 *end,
				  char *err, Size errlen)
{
	StaticAssertStmt(sizeof(int64) == sizeof(int64_t), "int64 size");

	/*
	 * A few ranges: two binary searches each in the host's copy of the
	 * tree's keys cost microseconds, a batch to the device and back a
	 * tenth of a millisecond.
	 */
	if (nranges <= GBT_HOST_SEARCH_MAX)
	{
		int64		i;

		for (i = 0; i < nranges; i++)
		{
			start[i] = gbt_sorted_bound_near(m->base.keys, m->base.n, lo[i], false);
			end[i] = lo[i] > hi[i] ? start[i] :
				gbt_sorted_bound_near(m->base.keys, m->base.n, hi[i], true);
		}
		return true;
	}
	return m->ops->ranges(m->engine, lo, hi, nranges, (int64_t *) start,
						  (int64_t *) end, err, errlen) == 0;
}

/*
 * The tree's plain entries at positions [start, end), listed: those on a
 * block the bits say is visible are seen, the others unsure.  What the
 * engine does for an aggregate, here, since a lookup lists few entries.
 */
static void
list_plain(const GbtMirror *m, int64 start, int64 end, const uint8 *visible,
		   int64 nvisible, GbtEntrySink *sink)
{
	int64		p;

	for (p = start; p < end; p++)
	{
		uint32		b;

		if (p + GBT_PREFETCH_AHEAD < end)
			gbt_prefetch_entry(m, p + GBT_PREFETCH_AHEAD);
		b = gbt_base_block(m, p);

		if (m->hidden != NULL && (m->hidden[p >> 3] & (1 << (p & 7))) != 0)
			continue;			/* removed, or stamped: decided apart */
		gbt_sink_list(sink, sink->agg, &m->base, p,
					  b < nvisible && (visible[b >> 3] & (1 << (b & 7))) != 0 ?
					  GBT_TAKE : GBT_UNSURE);
	}
}

/* The plain entries of ranges [r0, r1), listed (list_plain()). */
static void
list_ranges(const GbtMirror *m, const int64 *start, const int64 *end, int64 r0, int64 r1,
			const uint8 *visible, int64 nvisible, GbtEntrySink *sink)
{
	int64		r;

	/* A range or two per key, scattered: ask for the next ones early. */
	for (r = r0; r < r1; r++)
	{
		if (r + GBT_PREFETCH_AHEAD < r1 &&
			start[r + GBT_PREFETCH_AHEAD] < end[r + GBT_PREFETCH_AHEAD])
			gbt_prefetch_entry(m, start[r + GBT_PREFETCH_AHEAD]);
		list_plain(m, start[r], end[r], visible, nvisible, sink);
	}
}

/* One thread's part of a listing: ranges [r0, r1), into its own list. */
typedef struct ListPiece
{
	const GbtMirror *m;
	const int64 *start;
	const int64 *end;
	int64		r0;
	int64		r1;
	const uint8 *visible;
	int64		nvisible;
	GbtEntries	list;			/* the shared list's arrays from base on */
	uint8	   *verdicts;
	int64		base;
	GbtAggResult agg;			/* its nunsure: the entries listed */
} ListPiece;

static void
list_piece(void *arg)
{
	ListPiece  *p = (ListPiece *) arg;
	GbtEntrySink sink = {&p->agg, &p->list, p->verdicts, p->list.cap, NULL};

	list_ranges(p->m, p->start, p->end, p->r0, p->r1, p->visible, p->nvisible, &sink);
}

/* Positions a thread's part of a listing is worth at least. */
#ifndef GBT_LIST_PIECE_MIN		/* make GBT_SMALL_LAYOUT=1: tiny, for tests */
#define GBT_LIST_PIECE_MIN 16384
#endif

/*
 * list_ranges() over all nranges, in several threads when there are many
 * positions and room for them all: each thread lists a run of ranges into
 * the list where its positions could start, and the parts are then moved
 * together, in order.
 */
static void
list_all_ranges(const GbtMirror *m, const int64 *start, const int64 *end, int64 nranges,
				const uint8 *visible, int64 nvisible, GbtEntrySink *sink)
{
	ListPiece	pieces[GBT_THREADS_MAX];
	GbtEntries *list = sink->list;
	int64		total = 0;
	int64		per;
	int64		r = 0;
	int64		to;
	int			npieces;
	int			i;

	for (r = 0; r < nranges; r++)
		total += end[r] - start[r];
	npieces = gbt_threads_for(total, GBT_LIST_PIECE_MIN);
	if (npieces < 2 || list->n + total > sink->cap)
	{
		list_ranges(m, start, end, 0, nranges, visible, nvisible, sink);
		return;
	}

	/* Runs of ranges with about as many positions each. */
	per = (total + npieces - 1) / npieces;
	to = list->n;
	r = 0;
	for (i = 0; i < npieces; i++)
	{
		ListPiece  *p = &pieces[i];
		int64		n = 0;
		int			c;

		memset(p, 0, sizeof(ListPiece));
		p->m = m;
		p->start = start;
		p->end = end;
		p->visible = visible;
		p->nvisible = nvisible;
		p->r0 = r;
		while (r < nranges && (n < per || i == npieces - 1))
		{
			n += end[r] - start[r];
			r++;
		}
		p->r1 = r;
		p->base = to;
		p->list.ncols = list->ncols;
		p->list.cap = n;
		p->list.keys = list->keys + to;
		p->list.tids = list->tids + to;
		p->list.nulls = list->nulls + to;
		for (c = 0; c < list->ncols; c++)
			p->list.vals[c] = list->vals[c] + to;
		p->verdicts = sink->verdicts + to;
		to += n;
	}
	gbt_run_pieces(list_piece, pieces, sizeof(ListPiece), npieces);

	/* Together, in order (removed entries leave gaps). */
	to = list->n;
	for (i = 0; i < npieces; i++)
	{
		ListPiece  *p = &pieces[i];
		int64		n = p->list.n;
		int			c;

		if (p->base != to && n > 0)
		{
			memmove(list->keys + to, list->keys + p->base, sizeof(uint64) * n);
			memmove(list->tids + to, list->tids + p->base, sizeof(ItemPointerData) * n);
			memmove(list->nulls + to, list->nulls + p->base, n);
			for (c = 0; c < list->ncols; c++)
				memmove(list->vals[c] + to, list->vals[c] + p->base, sizeof(int64) * n);
			memmove(sink->verdicts + to, sink->verdicts + p->base, n);
		}
		to += n;
		sink->agg->nunsure += p->agg.nunsure;
	}
	list->n = to;
}

/*
 * Aggregate the entries in the key ranges [lo[i], hi[i]] (sorted,
 * disjoint) that the query's snapshot sees (view), among those applied
 * before log position log_bound; those the mirror cannot decide go to
 * unsure (after the unsure->n there already, up to unsure_cap in all;
 * out->nunsure counts them all).  The engine
 * aggregates the plain entries, visible to every snapshot: all of them
 * when the mirror's stamps can be trusted, else those on all-visible
 * blocks.  The stamped ones and the delta are decided here, entry by entry.
 *
 * With verdicts (a lookup's rows), nothing is aggregated: every entry the
 * snapshot sees or might see goes to unsure, with its verdict (GBT_TAKE or
 * GBT_UNSURE) in verdicts[], and out->nunsure counts them all.
 */
bool
gbt_mirror_aggregate(GbtMirror *m, const uint64 *lo, const uint64 *hi, int64 nranges,
					 GbtSnapView *view, uint64 log_bound,
					 GbtAggResult *out, GbtEntries *unsure, int64 unsure_cap,
					 uint8 *verdicts, GbtAggSteps *steps, char *err, Size errlen)
{
	GbtTreePass pass;

	gbt_tree_pass_init(&pass, m, (uint64 *) lo, hi, nranges, false, NULL, view->stamps,
					   view->visible, view->nvisible, unsure, unsure_cap, verdicts);
	gbt_tree_pass_run(&pass);
	return gbt_tree_pass_finish(&pass, view, log_bound, out, unsure, steps, err, errlen);
}

/*
 * See mirror.h.  stamps, visible and nvisible: the query's (its view's).
 * The entries listed go after unsure->n, up to unsure_cap.
 */
void
gbt_tree_pass_init(GbtTreePass *p, GbtMirror *m, uint64 *lo, const uint64 *hi,
				   int64 nranges, bool sort, uint32 *map, bool stamps,
				   const uint8 *visible, int64 nvisible, GbtEntries *unsure,
				   int64 unsure_cap, uint8 *verdicts)
{
	memset(p, 0, sizeof(GbtTreePass));
	p->m = m;
	p->lo = lo;
	p->hi = hi;
	p->nranges = nranges;
	p->sort = sort;
	p->map = map;
	p->trusted = gbt_mirror_trusts_stamps(m) && stamps;
	p->visible = p->trusted ? m->allvis : visible;
	p->nvisible = p->trusted ? m->nallvis : nvisible;
	p->list = unsure;
	p->list_cap = unsure_cap;
	p->verdicts = verdicts;
	p->start = palloc_extended(sizeof(int64) * Max(nranges, 1), MCXT_ALLOC_HUGE);
	p->end = palloc_extended(sizeof(int64) * Max(nranges, 1), MCXT_ALLOC_HUGE);
	p->room = verdicts ? 0 : Max(unsure_cap - unsure->n, 0);
	p->upos = verdicts ? NULL :
		palloc_extended(sizeof(int64) * Max(p->room, 1), MCXT_ALLOC_HUGE);
}

void
gbt_tree_pass_run(void *pass)
{
	GbtTreePass *p = (GbtTreePass *) pass;
	GbtMirror  *m = p->m;
	instr_time	t0,
				t1;

	INSTR_TIME_SET_CURRENT(t0);
	if (p->sort)
	{
		if (!gbt_mirror_sort_unique(m, p->lo, p->nranges, p->map, &p->nranges,
									p->err, sizeof(p->err)))
			return;
		INSTR_TIME_SET_CURRENT(t1);
		p->sort_ms = INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t0);
		t0 = t1;
	}
	if (!gbt_mirror_ranges(m, p->lo, p->hi, p->nranges, p->start, p->end,
						   p->err, sizeof(p->err)))
		return;
	INSTR_TIME_SET_CURRENT(t1);
	p->positions_ms = INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t0);

	/* The tree's plain entries. */
	gbt_mirror_note_hidden(m);
	if (p->verdicts != NULL)
	{
		GbtEntrySink sink = {&p->out, p->list, p->verdicts, p->list_cap, NULL};

		list_all_ranges(m, p->start, p->end, p->nranges, p->visible, p->nvisible, &sink);
	}
	else if (m->ops->aggregate(m->engine, m->hidden, m->hidden_version,
							   (const int64_t *) p->start, (const int64_t *) p->end,
							   p->nranges, p->visible, p->nvisible, &p->out,
							   (int64_t *) p->upos, p->room, p->err, sizeof(p->err)) != 0)
		return;
	INSTR_TIME_SET_CURRENT(t1);
	p->tree_ms = INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t0);
	p->ok = true;
}

/*
 * The rest of the aggregate after gbt_tree_pass_run(): into out (zeroed by
 * the caller) and unsure, with the stamped and delta entries.  False, with
 * the pass's message in err, when the pass failed.
 */
bool
gbt_tree_pass_finish(GbtTreePass *p, GbtSnapView *view, uint64 log_bound,
					 GbtAggResult *out, GbtEntries *unsure, GbtAggSteps *steps,
					 char *err, Size errlen)
{
	GbtMirror  *m = p->m;
	GbtEntrySink sink = {out, unsure, p->verdicts, p->list_cap, NULL};
	int64		i;
	bool		ok = p->ok;

	memset(steps, 0, sizeof(*steps));
	if (!ok)
		strlcpy(err, p->err, errlen);
	else
	{
		steps->positions_ms = p->positions_ms;
		steps->tree_ms = p->tree_ms;
		gbt_agg_combine(out, &p->out, gbt_mirror_columns(m));
		for (i = 0; p->upos != NULL && i < Min(p->out.nunsure, p->room); i++)
			gbt_copy_entry(unsure, unsure->n++, &m->base, p->upos[i]);

		/*
		 * The stamped entries and the delta's, logged before log_bound
		 * (stamps of a mirror that may have missed deletes decide nothing
		 * alone).
		 */
		view->stamps = p->trusted;
		{
			GbtWalk		walk = {.m = m,.start = p->start,.end = p->end,.lo = p->lo,
				.hi = p->hi,.nranges = p->nranges,.log_bound = log_bound,.view = view,
			.sink = &sink};

			gbt_walk_aggregate(&walk, out, 1, steps);
		}
	}
	pfree(p->start);
	pfree(p->end);
	if (p->upos != NULL)
		pfree(p->upos);
	return ok;
}

/*
 * gbt_mirror_aggregate() with one result per range: outs[r] over the
 * entries of [lo[r], hi[r]] alone (a GROUP BY's buckets).  The unsure
 * entries of every range go to unsure, and outs[r].nunsure counts range r's.
 */
bool
gbt_mirror_aggregate_each(GbtMirror *m, const uint64 *lo, const uint64 *hi, int64 nranges,
						  GbtSnapView *view, uint64 log_bound, GbtAggResult *outs,
						  GbtEntries *unsure, int64 unsure_cap, GbtAggSteps *steps,
						  char *err, Size errlen)
{
	int64	   *start = palloc_extended(sizeof(int64) * Max(nranges, 1), MCXT_ALLOC_HUGE);
	int64	   *end = palloc_extended(sizeof(int64) * Max(nranges, 1), MCXT_ALLOC_HUGE);
	bool		trusted = gbt_mirror_trusts_stamps(m) && view->stamps;
	const uint8 *visible = trusted ? m->allvis : view->visible;
	int64		nvisible = trusted ? m->nallvis : view->nvisible;
	int64		room = Max(unsure_cap - unsure->n, 0);
	int64	   *upos = palloc_extended(sizeof(int64) * Max(room, 1), MCXT_ALLOC_HUGE);
	int64		listed = 0;
	int64		r;
	instr_time	t0,
				t1;

	memset(steps, 0, sizeof(*steps));
	INSTR_TIME_SET_CURRENT(t0);
	if (!gbt_mirror_ranges(m, lo, hi, nranges, start, end, err, errlen))
		return false;
	INSTR_TIME_SET_CURRENT(t1);
	steps->positions_ms = INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t0);

	/* The tree's plain entries, range by range. */
	gbt_mirror_note_hidden(m);
	if (m->ops->aggregate_each(m->engine, m->hidden, m->hidden_version,
							   (const int64_t *) start, (const int64_t *) end, nranges,
							   visible, nvisible, outs, (int64_t *) upos, room,
							   err, errlen) != 0)
		return false;
	for (r = 0; r < nranges; r++)
		listed += outs[r].nunsure;
	for (r = 0; r < Min(listed, room); r++)
		gbt_copy_entry(unsure, unsure->n++, &m->base, upos[r]);
	pfree(upos);
	INSTR_TIME_SET_CURRENT(t1);
	steps->tree_ms = INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t0);

	/* Then the stamped entries and the delta's, as gbt_mirror_aggregate(). */
	view->stamps = trusted;
	{
		GbtEntrySink sink = {outs, unsure, NULL, unsure_cap, NULL};
		GbtWalk		walk = {.m = m,.start = start,.end = end,.lo = lo,.hi = hi,
		.nranges = nranges,.each = true,.log_bound = log_bound,.view = view,.sink = &sink};

		gbt_walk_aggregate(&walk, outs, nranges, steps);
	}
	pfree(start);
	pfree(end);
	return true;
}

/*
 * The smallest and largest key of the mirror's entries, removed and dead
 * ones too (bounds of every key a snapshot can see); false when it has
 * none.
 */
bool
gbt_mirror_key_extent(const GbtMirror *m, uint64 *min, uint64 *max)
{
	bool		any = false;
	int			d;

	if (m->base.n > 0)
	{
		*min = m->base.keys[0];
		*max = m->base.keys[m->base.n - 1];
		any = true;
	}
	for (d = 0; d < GBT_RUNS; d++)
	{
		const GbtEntries *e = &m->runs[d].e;

		if (e->n == 0)
			continue;
		if (!any || e->keys[0] < *min)
			*min = e->keys[0];
		if (!any || e->keys[e->n - 1] > *max)
			*max = e->keys[e->n - 1];
		any = true;
	}
	return any;
}

/*
 * A GROUP BY's filtered ranges on the CPU engine, a run of them a thread
 * (the CPU twin's function over the tree's host arrays; it allocates
 * nothing).  The GPU engine takes a launch a range: 1000 ranges of 2^26
 * entries in 67 ms on the H100, where these threads took 350 ms.
 */
typedef struct FilterPiece
{
	const gbt_agg_input *in;
	const int64 *start;
	const int64 *end;
	int64		r0;
	int64		r1;
	const uint8 *visible;
	int64		nvisible;
	const gbt_pred_set *preds;
	GbtAggResult *outs;			/* the ranges' results, r * nfilters */
	int64	   *upos;			/* its unsure positions */
	int64		cap;
	int64		listed;
	int64		nunsure;
	int			rc;
	char		err[GBT_ERRMSG_LEN];
} FilterPiece;

static void
filter_piece(void *arg)
{
	FilterPiece *p = (FilterPiece *) arg;
	int			nf = p->preds->nfilters;
	int64		r;
	int			f;

	for (r = p->r0; r < p->r1 && p->rc == 0; r++)
	{
		GbtAggResult *out = &p->outs[r * nf];

		p->rc = gbt_vagg_filtered_cpu(p->in, &p->start[r], &p->end[r], 1, p->visible,
									  p->nvisible, p->preds, out, p->upos + p->listed,
									  p->cap - p->listed, p->err, sizeof(p->err));
		p->listed += Min(out->nunsure, p->cap - p->listed);
		p->nunsure += out->nunsure;
		for (f = 0; f < nf; f++)
			out[f].nunsure = 0;
	}
}

/* Ranges of a GROUP BY worth splitting over threads. */
#define GBT_FILTER_HOST_RANGES 8

static bool
filtered_on_host(GbtMirror *m, const int64 *start, const int64 *end, int64 nranges,
				 const uint8 *visible, int64 nvisible, const gbt_pred_set *preds,
				 GbtAggResult *outs, GbtEntries *unsure, int64 room, int64 *nunsure,
				 char *err, Size errlen)
{
	FilterPiece pieces[GBT_THREADS_MAX];
	gbt_agg_input in;
	int64		total = 0;
	int64		per;
	int64		r = 0;
	int			npieces;
	int			i;
	int64		k;
	int64		copied = 0;

	gbt_mirror_agg_input(&in, m, m->base.n);
	in.removed = m->hidden;
	for (r = 0; r < nranges; r++)
		total += end[r] - start[r];
	npieces = gbt_threads_for(nranges, 1);
	per = (total + npieces - 1) / npieces;
	r = 0;
	for (i = 0; i < npieces; i++)
	{
		FilterPiece *p = &pieces[i];
		int64		n = 0;

		memset(p, 0, sizeof(FilterPiece));
		p->in = &in;
		p->start = start;
		p->end = end;
		p->visible = visible;
		p->nvisible = nvisible;
		p->preds = preds;
		p->outs = outs;
		p->cap = room;
		p->upos = palloc_extended(sizeof(int64) * Max(room, 1), MCXT_ALLOC_HUGE);
		p->r0 = r;
		while (r < nranges && (n < per || i == npieces - 1))
		{
			n += end[r] - start[r];
			r++;
		}
		p->r1 = r;
	}
	gbt_run_pieces(filter_piece, pieces, sizeof(FilterPiece), npieces);
	for (i = 0; i < npieces; i++)
	{
		FilterPiece *p = &pieces[i];

		if (p->rc != 0)
		{
			strlcpy(err, p->err, errlen);
			return false;
		}
		for (k = 0; k < p->listed && copied < room; k++, copied++)
			gbt_copy_entry(unsure, unsure->n++, &m->base, p->upos[k]);
		*nunsure += p->nunsure;
		pfree(p->upos);
	}
	return true;
}

/*
 * Filter f's program (NULL: TRUE) AND the key in [lo, hi]: what a range of a
 * GROUP BY is among others in one call.  False when it would be too long.
 */
static bool
range_program(const gbt_pred *base, gbt_valtype keytype, uint64 lo, uint64 hi,
			  gbt_pred *out)
{
	gbt_pred_insn *x;
	int			n = base != NULL ? base->ninsns : 0;

	if (n + 4 > GBT_PRED_MAX_INSNS)
		return false;
	memset(out, 0, sizeof(*out));
	if (base != NULL)
		memcpy(out->insn, base->insn, sizeof(gbt_pred_insn) * n);
	x = &out->insn[n];
	x[0].op = GBT_PRED_GE;
	x[1].op = GBT_PRED_LE;
	x[0].col = x[1].col = 0;
	x[0].type = x[1].type = keytype;
	if (keytype == GBT_VAL_FLOAT8)
	{
		x[0].arg.f = hm_decode_float8(lo);
		x[1].arg.f = hm_decode_float8(hi);
	}
	else
	{
		x[0].arg.i = hm_decode_int64(lo);
		x[1].arg.i = hm_decode_int64(hi);
	}
	x[2].op = GBT_PRED_AND;
	n += 3;
	if (base != NULL)
		out->insn[n++].op = GBT_PRED_AND;
	out->ninsns = n;
	return true;
}

/*
 * A GROUP BY's filtered ranges on the GPU, as many in one launch as
 * FILTER programs fit: each range's programs AND its key range.  A launch
 * costs about 60 us and each program reads every entry of the launch's
 * ranges, at about 10^10 entries a second (H100): worth it for ranges
 * shorter than GBT_FILTER_LAUNCH_ENTRIES on average.  False (nothing done)
 * when a program would grow too long.
 */
#define GBT_FILTER_LAUNCH_ENTRIES 32768

static bool
ranges_as_filters(GbtMirror *m, const uint64 *lo, const uint64 *hi, const int64 *start,
				  const int64 *end, int64 nranges, const uint8 *visible, int64 nvisible,
				  const gbt_pred_set *preds, GbtAggResult *outs, GbtEntries *unsure,
				  int64 room, int64 *nunsure, bool *failed, char *err, Size errlen)
{
	int			nf = preds->nfilters;
	int			per = GBT_PRED_MAX_FILTERS / nf;
	gbt_valtype keytype = m->columns.type[0] == GBT_COL_FLOAT8 ? GBT_VAL_FLOAT8 : GBT_VAL_INT64;
	gbt_pred   *progs = palloc(sizeof(gbt_pred) * GBT_PRED_MAX_FILTERS);
	GbtAggResult part[GBT_PRED_MAX_FILTERS];
	int64	   *upos = palloc_extended(sizeof(int64) * Max(room, 1), MCXT_ALLOC_HUGE);
	int64		r0;

	*failed = false;
	for (r0 = 0; r0 < nranges; r0 += per)
		for (int j = 0; j < per && r0 + j < nranges; j++)
			for (int f = 0; f < nf; f++)
				if (!range_program(preds->filter[f], keytype, lo[r0 + j], hi[r0 + j],
								   &progs[0]))
					return false;
	for (r0 = 0; r0 < nranges; r0 += per)
	{
		int			g = (int) Min(per, nranges - r0);
		gbt_pred_set set = *preds;
		int64		listed;
		int64		k;

		set.nfilters = g * nf;
		for (int j = 0; j < g; j++)
			for (int f = 0; f < nf; f++)
			{
				(void) range_program(preds->filter[f], keytype, lo[r0 + j], hi[r0 + j],
									 &progs[j * nf + f]);
				set.filter[j * nf + f] = &progs[j * nf + f];
			}
		gbt_mirror_note_hidden(m);
		if (m->ops->aggregate_filtered(m->engine, m->hidden, m->hidden_version,
									   (const int64_t *) &start[r0],
									   (const int64_t *) &end[r0], g, visible, nvisible,
									   &set, part, (int64_t *) upos, room, err, errlen) != 0)
		{
			*failed = true;
			return true;
		}
		listed = Min(part[0].nunsure, room);
		for (k = 0; k < listed; k++)
			gbt_copy_entry(unsure, unsure->n++, &m->base, upos[k]);
		room -= listed;
		*nunsure += part[0].nunsure;
		for (k = 0; k < g * nf; k++)
		{
			part[k].nunsure = 0;
			outs[r0 * nf + k] = part[k];
		}
	}
	pfree(upos);
	pfree(progs);
	return true;
}

/*
 * The filtered aggregate (predicate.h) of the entries in the key ranges
 * [lo[r], hi[r]] that the query's snapshot sees: into outs[f], or with
 * grouped each range's into outs[r * nfilters + f]; the unsure entries
 * WHERE keeps go to unsure (*nunsure counts them all), as
 * gbt_mirror_aggregate() does.
 */
bool
gbt_mirror_aggregate_filtered(GbtMirror *m, const uint64 *lo, const uint64 *hi,
							  int64 nranges, GbtSnapView *view, uint64 log_bound,
							  const gbt_pred_set *preds, bool grouped, GbtAggResult *outs,
							  GbtEntries *unsure, int64 unsure_cap, int64 *nunsure,
							  GbtAggSteps *steps, char *err, Size errlen)
{
	int64	   *start = palloc_extended(sizeof(int64) * Max(nranges, 1), MCXT_ALLOC_HUGE);
	int64	   *end = palloc_extended(sizeof(int64) * Max(nranges, 1), MCXT_ALLOC_HUGE);
	bool		trusted = gbt_mirror_trusts_stamps(m) && view->stamps;
	const uint8 *visible = trusted ? m->allvis : view->visible;
	int64		nvisible = trusted ? m->nallvis : view->nvisible;
	int			nf = preds->nfilters;
	int64		calls = grouped ? nranges : 1;
	int64		room = Max(unsure_cap - unsure->n, 0);
	int64	   *upos = palloc_extended(sizeof(int64) * Max(room, 1), MCXT_ALLOC_HUGE);
	gbt_agg_result counted;
	bool		failed = false;
	int64		entries = 0;
	int64		r;
	int64		k;
	instr_time	t0,
				t1;

	memset(steps, 0, sizeof(*steps));
	memset(outs, 0, sizeof(GbtAggResult) * calls * nf);
	memset(&counted, 0, sizeof(counted));
	*nunsure = 0;
	INSTR_TIME_SET_CURRENT(t0);
	if (!gbt_mirror_ranges(m, lo, hi, nranges, start, end, err, errlen))
		return false;
	INSTR_TIME_SET_CURRENT(t1);
	steps->positions_ms = INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t0);

	/* The tree's plain entries: all ranges in one call, or one a range. */
	for (r = 0; r < nranges; r++)
		entries += end[r] - start[r];
	if (grouped && nranges > 1 && gbt_mirror_on_gpu(m) &&
		entries / nranges < GBT_FILTER_LAUNCH_ENTRIES &&
		ranges_as_filters(m, lo, hi, start, end, nranges, visible, nvisible, preds, outs,
						  unsure, room, nunsure, &failed, err, errlen))
	{
		if (failed)
			return false;
		calls = 0;
	}
	else if (grouped && nranges >= GBT_FILTER_HOST_RANGES && !gbt_mirror_on_gpu(m))
	{
		if (!filtered_on_host(m, start, end, nranges, visible, nvisible, preds, outs,
							  unsure, room, nunsure, err, errlen))
			return false;
		calls = 0;
	}
	for (r = 0; r < calls; r++)
	{
		int64		listed = 0;

		gbt_mirror_note_hidden(m);
		if (m->ops->aggregate_filtered(m->engine, m->hidden, m->hidden_version,
									   (const int64_t *) (grouped ? &start[r] : start),
									   (const int64_t *) (grouped ? &end[r] : end),
									   grouped ? 1 : nranges, visible, nvisible, preds,
									   &outs[r * nf], (int64_t *) upos, room,
									   err, errlen) != 0)
			return false;
		listed = Min(outs[r * nf].nunsure, room);
		for (k = 0; k < listed; k++)
			gbt_copy_entry(unsure, unsure->n++, &m->base, upos[k]);
		room -= listed;
		*nunsure += outs[r * nf].nunsure;
		for (k = 0; k < nf; k++)
			outs[r * nf + k].nunsure = 0;
	}
	pfree(upos);
	INSTR_TIME_SET_CURRENT(t1);
	steps->tree_ms = INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t0);

	/* The stamped entries and the delta's, through the programs too. */
	view->stamps = trusted;
	{
		GbtEntrySink sink = {&counted, unsure, NULL, unsure_cap, preds};
		GbtWalk		walk = {.m = m,.start = start,.end = end,.lo = lo,.hi = hi,
		.nranges = nranges,.each = grouped,.log_bound = log_bound,.view = view,.sink = &sink};

		gbt_walk_aggregate(&walk, outs, (grouped ? nranges : 1) * nf, steps);
	}
	*nunsure += counted.nunsure;
	pfree(start);
	pfree(end);
	return true;
}
