/*
 * mirror_group.c
 *	  A mirror's grouped aggregate (groupby.h): the engine groups the tree's
 *	  plain entries; the stamped entries and the delta's are decided here,
 *	  in several threads (mirror_walk.h), each piece keeping the values of
 *	  the entries its snapshot sees and WHERE keeps; then, in this thread,
 *	  each goes into its group, or, when no tree entry made it, into a
 *	  group of its own made at the end, merged into the contract's order.
 */
#include "postgres.h"

#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "agg_state.h"
#include "groupby.h"
#include "mirror_walk.h"

/* The groups so far, and the decided entries of groups not among them. */
typedef struct HostGroups
{
	gbt_groups *g;
	const gbt_pred_set *preds;
	const GbtColumns *columns;
	int64		nplain;			/* the engine's groups, NULL group last */
	/* entries of other groups: their values, GBT_MAX_COLS each */
	int64		nextra;
	int64		extra_cap;
	uint64	   *extra_vals;
	uint8	   *extra_nulls;
} HostGroups;

/* Is (av, anull) before (bv, bnull): values ascending, NULL last? */
static inline bool
group_before(int64 av, bool anull, int64 bv, bool bnull)
{
	if (anull || bnull)
		return !anull && bnull;
	return av < bv;
}

/* The engine's group of this value, or -1. */
static int64
plain_group(const HostGroups *h, int64 value, bool isnull)
{
	int64		nvalues = h->nplain - (h->g->has_null ? 1 : 0);
	int64		lo = 0,
				hi = nvalues;

	if (isnull)
		return h->g->has_null ? h->nplain - 1 : -1;
	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;

		if (h->g->values[mid] < value)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nvalues && h->g->values[lo] == value ? lo : -1;
}

/* An entry into results[0..nfilters): each filter's whose program keeps it. */
static void
add_to_group(const HostGroups *h, GbtAggResult *results, const uint64 *vals, uint8 nulls)
{
	int			f;

	for (f = 0; f < h->preds->nfilters; f++)
		if (h->preds->filter[f] == NULL ||
			gbt_pred_run(h->preds->filter[f], h->preds->list, vals, nulls) == GBT_TV_TRUE)
			gbt_agg_add_entry(&results[f], h->columns, (const int64 *) vals, nulls);
}

/* A decided entry the snapshot sees into its group, or kept for a new one. */
static void
take_entry(HostGroups *h, const uint64 *vals, uint8 nulls)
{
	int			gcol = h->g->gcol;
	int64		k = plain_group(h, (int64) vals[gcol], (nulls >> gcol) & 1);

	if (k >= 0)
	{
		add_to_group(h, &h->g->out[k * h->preds->nfilters], vals, nulls);
		return;
	}
	if (h->nextra == h->extra_cap)
	{
		h->extra_cap = Max(h->extra_cap * 2, 1024);
		h->extra_vals = repalloc_huge(h->extra_vals,
									  sizeof(uint64) * GBT_MAX_COLS * h->extra_cap);
		h->extra_nulls = repalloc_huge(h->extra_nulls, h->extra_cap);
	}
	memcpy(&h->extra_vals[h->nextra * GBT_MAX_COLS], vals, sizeof(uint64) * GBT_MAX_COLS);
	h->extra_nulls[h->nextra++] = nulls;
}

/*
 * Groups' results a piece keeps of its own (else it keeps the values of
 * every entry it takes, for this thread to add): a few groups' worth.
 */
#define GROUP_PIECE_SLOTS 4096

/*
 * A piece of the walk: the results of the engine's groups (res, or NULL)
 * and the values of the other entries it took (WHERE TRUE, the snapshot
 * sees them), room made for all of its entries before the walk.
 */
typedef struct GroupPiece
{
	GbtAggResult *res;			/* [nplain * nfilters] */
	int64		n;
	uint64	   *vals;			/* GBT_MAX_COLS each */
	uint8	   *nulls;
	char		pad[PG_CACHE_LINE_SIZE];
} GroupPiece;

/* The walk's sink: the groups, WHERE, and the entries the heap decides. */
typedef struct GroupSink
{
	const HostGroups *h;
	const gbt_pred_set *preds;
	GbtEntries *unsure;
	int64		cap;
	int64		nunsure;
} GroupSink;

/* Entry i of src's values, and whether WHERE keeps it. */
static bool
entry_kept(const GroupSink *s, const GbtEntries *src, int64 i, uint64 *vals, uint8 *nulls)
{
	int			c;

	memset(vals, 0, sizeof(uint64) * GBT_MAX_COLS);
	for (c = 0; c < src->ncols; c++)
		vals[c] = (uint64) gbt_entry_val(src, c, i);
	*nulls = gbt_entry_nulls(src, i);
	return s->preds->where == NULL ||
		gbt_pred_run(s->preds->where, s->preds->list, vals, *nulls) == GBT_TV_TRUE;
}

/* GbtWalkOps.take, in the piece's thread. */
static void
walk_take(const GbtWalk *w, void *state, int64 target, const GbtEntries *src, int64 i)
{
	const GroupSink *s = w->sink;
	GroupPiece *p = state;
	uint64	   *vals = &p->vals[p->n * GBT_MAX_COLS];
	uint8		nulls;
	int64		k;

	if (!entry_kept(s, src, i, vals, &nulls))
		return;
	if (p->res != NULL &&
		(k = plain_group(s->h, (int64) vals[s->h->g->gcol], (nulls >> s->h->g->gcol) & 1)) >= 0)
		add_to_group(s->h, &p->res[k * s->preds->nfilters], vals, nulls);
	else
		p->nulls[p->n++] = nulls;
}

/* GbtWalkOps.put, in this thread: an entry the heap decides. */
static void
walk_put(const GbtWalk *w, int64 target, const GbtEntries *src, int64 i, int verdict)
{
	GroupSink  *s = w->sink;
	uint64		vals[GBT_MAX_COLS];
	uint8		nulls;

	if (!entry_kept(s, src, i, vals, &nulls))
		return;
	if (s->unsure->n < s->cap)
		gbt_copy_entry(s->unsure, s->unsure->n++, src, i);
	s->nunsure++;
}

static const GbtWalkOps group_walk_ops = {walk_take, NULL, walk_put};

/*
 * The stamped entries and the delta's of the ranges, decided, into h's
 * groups; the unsure ones WHERE keeps to unsure, counted in *nunsure.
 */
static void
walk_host_entries(HostGroups *h, GbtMirror *m, const uint64 *lo, const uint64 *hi,
				  const int64 *start, const int64 *end, int64 nranges, GbtSnapView *view,
				  uint64 log_bound, GbtEntries *unsure, int64 unsure_cap, int64 *nunsure,
				  GbtAggSteps *steps)
{
	GroupSink	sink = {h, h->preds, unsure, unsure_cap, 0};
	int64		nslots = h->nplain * h->preds->nfilters;
	GbtWalk		w;
	GroupPiece *pieces;
	int			npieces;
	int			k;
	int64		i;

	memset(&w, 0, sizeof(w));
	w.m = m;
	w.start = start;
	w.end = end;
	w.lo = lo;
	w.hi = hi;
	w.nranges = nranges;
	w.log_bound = log_bound;
	w.view = view;
	w.ops = &group_walk_ops;
	w.sink = &sink;
	npieces = gbt_walk_plan(&w);
	pieces = palloc0(sizeof(GroupPiece) * npieces);
	for (k = 0; k < npieces; k++)
	{
		int64		room = Max(gbt_walk_piece_entries(&w, k), 1);

		pieces[k].vals = palloc_extended(sizeof(uint64) * GBT_MAX_COLS * room,
										 MCXT_ALLOC_HUGE);
		pieces[k].nulls = palloc_extended(room, MCXT_ALLOC_HUGE);
		/* a line of its own before and after: the threads write there */
		if (nslots > 0 && nslots <= GROUP_PIECE_SLOTS)
			pieces[k].res = (GbtAggResult *)
				((char *) palloc0(sizeof(GbtAggResult) * nslots + 2 * PG_CACHE_LINE_SIZE) +
				 PG_CACHE_LINE_SIZE);
	}
	gbt_walk_run(&w, pieces, sizeof(GroupPiece), steps);
	for (k = 0; k < npieces; k++)
	{
		for (i = 0; pieces[k].res != NULL && i < nslots; i++)
			gbt_agg_combine(&h->g->out[i], &pieces[k].res[i], h->columns);
		for (i = 0; i < pieces[k].n; i++)
			take_entry(h, &pieces[k].vals[i * GBT_MAX_COLS], pieces[k].nulls[i]);
		if (pieces[k].res != NULL)
			pfree((char *) pieces[k].res - PG_CACHE_LINE_SIZE);
		pfree(pieces[k].vals);
		pfree(pieces[k].nulls);
	}
	pfree(pieces);
	gbt_walk_end(&w);
	*nunsure += sink.nunsure;
}

static HostGroups *sort_groups;

static int
extra_cmp(const void *a, const void *b)
{
	const HostGroups *h = sort_groups;
	int64		x = *(const int64 *) a,
				y = *(const int64 *) b;
	int			c = h->g->gcol;
	bool		xn = (h->extra_nulls[x] >> c) & 1,
				yn = (h->extra_nulls[y] >> c) & 1;
	int64		xv = xn ? 0 : (int64) h->extra_vals[x * GBT_MAX_COLS + c],
				yv = yn ? 0 : (int64) h->extra_vals[y * GBT_MAX_COLS + c];

	if (group_before(xv, xn, yv, yn))
		return -1;
	if (group_before(yv, yn, xv, xn))
		return 1;
	return 0;
}

/*
 * The groups of the extra entries, merged with the engine's into g in
 * order; g->ngroups counts them all, and when that exceeds g->cap only it
 * is meaningful.
 */
static void
merge_extra(HostGroups *h)
{
	gbt_groups *g = h->g;
	int			nf = h->preds->nfilters;
	int			c = g->gcol;
	int64	   *order;
	int64	   *values;
	bool	   *nulls;
	GbtAggResult *outs;
	bool		plain_null = g->has_null;
	int64		nnew = 0;
	int64		i;
	int64		w,
				p,
				q;

	if (h->nextra == 0)
		return;
	order = palloc_extended(sizeof(int64) * h->nextra, MCXT_ALLOC_HUGE);
	for (i = 0; i < h->nextra; i++)
		order[i] = i;
	sort_groups = h;
	qsort(order, h->nextra, sizeof(int64), extra_cmp);

	/* The new groups, in order. */
	values = palloc_extended(sizeof(int64) * h->nextra, MCXT_ALLOC_HUGE);
	nulls = palloc_extended(sizeof(bool) * h->nextra, MCXT_ALLOC_HUGE);
	outs = palloc_extended(sizeof(GbtAggResult) * h->nextra * nf,
						   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	for (i = 0; i < h->nextra; i++)
	{
		int64		x = order[i];
		bool		isnull = (h->extra_nulls[x] >> c) & 1;
		int64		v = isnull ? 0 : (int64) h->extra_vals[x * GBT_MAX_COLS + c];

		if (nnew == 0 || values[nnew - 1] != v || nulls[nnew - 1] != isnull)
		{
			values[nnew] = v;
			nulls[nnew] = isnull;
			nnew++;
		}
		add_to_group(h, &outs[(nnew - 1) * nf], &h->extra_vals[x * GBT_MAX_COLS],
					 h->extra_nulls[x]);
	}
	g->ngroups = h->nplain + nnew;
	if (g->ngroups > g->cap)
		return;

	/* Merged from the back, in place: the engine's groups move up only. */
	w = g->ngroups;
	p = h->nplain;
	q = nnew;
	while (q > 0)
	{
		bool		pnull = plain_null && p == h->nplain;

		if (p > 0 && group_before(values[q - 1], nulls[q - 1], g->values[p - 1], pnull))
		{
			p--;
			w--;
			g->values[w] = g->values[p];
			memmove(&g->out[w * nf], &g->out[p * nf], sizeof(GbtAggResult) * nf);
		}
		else
		{
			q--;
			w--;
			g->values[w] = values[q];
			memcpy(&g->out[w * nf], &outs[q * nf], sizeof(GbtAggResult) * nf);
			if (nulls[q])
				g->has_null = true;
		}
	}
	pfree(order);
	pfree(values);
	pfree(nulls);
	pfree(outs);
}

bool
gbt_mirror_aggregate_grouped(GbtMirror *m, const uint64 *lo, const uint64 *hi,
							 int64 nranges, GbtSnapView *view, uint64 log_bound,
							 const gbt_pred_set *preds, gbt_groups *g,
							 GbtEntries *unsure, int64 unsure_cap, int64 *nunsure,
							 GbtAggSteps *steps, char *err, Size errlen)
{
	int64	   *start = palloc_extended(sizeof(int64) * Max(nranges, 1), MCXT_ALLOC_HUGE);
	int64	   *end = palloc_extended(sizeof(int64) * Max(nranges, 1), MCXT_ALLOC_HUGE);
	bool		trusted = gbt_mirror_trusts_stamps(m) && view->stamps;
	const uint8 *visible = trusted ? m->allvis : view->visible;
	int64		nvisible = trusted ? m->nallvis : view->nvisible;
	int64		room = Max(unsure_cap - unsure->n, 0);
	int64	   *upos = palloc_extended(sizeof(int64) * Max(room, 1), MCXT_ALLOC_HUGE);
	HostGroups	h;
	int64		k;
	instr_time	t0,
				t1;

	memset(steps, 0, sizeof(*steps));
	*nunsure = 0;
	if (m->ops->aggregate_grouped == NULL)
	{
		gbt_engine_fail("grouped aggregate", "the engine has none", err, errlen);
		return false;
	}
	INSTR_TIME_SET_CURRENT(t0);
	if (!gbt_mirror_ranges(m, lo, hi, nranges, start, end, err, errlen))
		return false;
	INSTR_TIME_SET_CURRENT(t1);
	steps->positions_ms = INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t0);

	/* The tree's plain entries, grouped by the engine. */
	gbt_mirror_note_hidden(m);
	if (m->ops->aggregate_grouped(m->engine, m->hidden, m->hidden_version,
								  (const int64_t *) start, (const int64_t *) end, nranges,
								  visible, nvisible, preds, g, (int64_t *) upos, room,
								  err, errlen) != 0)
		return false;
	for (k = 0; k < Min(g->nunsure, room); k++)
		gbt_copy_entry(unsure, unsure->n++, &m->base, upos[k]);
	*nunsure = g->nunsure;
	pfree(upos);
	INSTR_TIME_SET_CURRENT(t1);
	steps->tree_ms = INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t0);
	if (g->ngroups > g->cap)
		return true;			/* the caller asks again with more room */

	/* The stamped entries and the delta's, into their groups. */
	memset(&h, 0, sizeof(h));
	h.g = g;
	h.preds = preds;
	h.columns = &m->columns;
	h.nplain = g->ngroups;
	h.extra_vals = palloc(sizeof(uint64) * GBT_MAX_COLS);
	h.extra_nulls = palloc(1);
	view->stamps = trusted;
	walk_host_entries(&h, m, lo, hi, start, end, nranges, view, log_bound, unsure,
					  unsure_cap, nunsure, steps);
	merge_extra(&h);
	pfree(h.extra_vals);
	pfree(h.extra_nulls);
	pfree(start);
	pfree(end);
	return true;
}
