/*
 * chunksums.c
 *	  Aggregates of a mirror's entries by chunks of positions (chunksums.h).
 *
 * Chunks are made with gbt_vagg_cpu() itself (every block counted as
 * visible), so a chunk's aggregate is exactly what a scan of it would add;
 * items above combine their children with gbt_agg_col_combine().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunksums.h"
#include "vagg.h"

#define CHUNK_BYTES (GBT_CHUNK / 8)	/* of a removed bitmap */
#define DIFF_RUN 64				/* chunks find_dirty() compares at once */
#define SUMS_PIECES_MAX 64		/* pieces a call runs at once, at most */
/* fewest chunks a piece makes (a chunk: 1024 entries), runs it compares */
#define CHUNKS_A_PIECE 8
#define RUNS_A_PIECE 8

struct gbt_chunk_sums
{
	int64_t		n;
	int			ncols;
	gbt_valtype coltype[GBT_MAX_COLS];
	int			nlevels;
	int64_t		nitems[GBT_CHUNK_LEVELS];
	int64_t    *count[GBT_CHUNK_LEVELS];	/* per item */
	gbt_agg_col *col[GBT_CHUNK_LEVELS][GBT_MAX_COLS];
	int32_t    *dirty[GBT_CHUNK_LEVELS];	/* dirty chunks below each item */
	uint8_t    *whole[GBT_CHUNK_LEVELS];	/* item to make again from its
											 * children once clean (above 0) */
	int64_t    *todo;			/* the dirty chunks, a stack */
	int64_t		ntodo;
	uint8_t    *seen;			/* removed bits the chunks were made with */
	uint8_t    *allvis;			/* ones for every block an entry is on */
	int64_t		nblocks;		/* the largest such block + 1 */
	int			diffed;			/* removed[] below compared already: */
	int			removed_null;
	uint64_t	removed_version;
	size_t		bytes;
};

static void mark_dirty(gbt_chunk_sums *s, int64_t i);

/*
 * What making a chunk again changed, for the items above it: the count
 * and the INT64 columns' non-NULL counts and sums that take_out_removed()
 * took out (min and max unchanged: it refuses to take out either), or
 * "whole" (made from its entries: the items above are made again from
 * their children once they are clean).
 */
typedef struct chunk_change
{
	int			whole;
	int64_t		count;
	int64_t		nonnull[GBT_MAX_COLS];
	__int128	sum[GBT_MAX_COLS];
} chunk_change;

static __int128
col_sum(const gbt_agg_col *c)
{
	return (__int128) ((unsigned __int128) (uint64_t) c->sum_hi << 64 | c->sum_lo);
}

static void *
alloc_counted(gbt_chunk_sums *s, size_t bytes)
{
	s->bytes += bytes;
	return calloc(1, bytes > 0 ? bytes : 1);
}

void
gbt_chunk_sums_free(gbt_chunk_sums *s)
{
	int			l,
				c;

	if (s == NULL)
		return;
	for (l = 0; l < GBT_CHUNK_LEVELS; l++)
	{
		free(s->count[l]);
		free(s->dirty[l]);
		free(s->whole[l]);
		for (c = 0; c < GBT_MAX_COLS; c++)
			free(s->col[l][c]);
	}
	free(s->todo);
	free(s->seen);
	free(s->allvis);
	free(s);
}

size_t
gbt_chunk_sums_bytes(const gbt_chunk_sums *s)
{
	return s != NULL ? s->bytes : 0;
}

/* Chunks or items below one item of level l. */
static int64_t
span(int l)
{
	int64_t		x = 1;

	while (l-- > 0)
		x *= GBT_CHUNK_FANOUT;
	return x;
}

static void
store(gbt_chunk_sums *s, int l, int64_t i, const gbt_agg_result *r)
{
	int			c;

	s->count[l][i] = r->count;
	for (c = 0; c < s->ncols; c++)
		s->col[l][c][i] = r->col[c];
}

static void
add_item(const gbt_chunk_sums *s, int l, int64_t i, gbt_agg_result *into)
{
	int			c;

	into->count += s->count[l][i];
	for (c = 0; c < s->ncols; c++)
		gbt_agg_col_combine(&into->col[c], &s->col[l][c][i], s->coltype[c]);
}

/* Chunk i's aggregate from in (its removed bitmap as it is); 0 or 1. */
static int
make_chunk(gbt_chunk_sums *s, const gbt_agg_input *in, int64_t i)
{
	int64_t		from = i * GBT_CHUNK;
	int64_t		to = from + GBT_CHUNK < s->n ? from + GBT_CHUNK : s->n;
	gbt_agg_result r;

	if (gbt_vagg_cpu(in, &from, &to, 1, s->allvis, s->nblocks, &r, NULL, 0, NULL, 0) != 0)
		return 1;
	store(s, 0, i, &r);
	return 0;
}

/* Item i of level l >= 1 from its children. */
static void
make_item(gbt_chunk_sums *s, int l, int64_t i)
{
	gbt_agg_result r;
	int64_t		j,
				last = (i + 1) * GBT_CHUNK_FANOUT;

	memset(&r, 0, sizeof(r));
	if (last > s->nitems[l - 1])
		last = s->nitems[l - 1];
	for (j = i * GBT_CHUNK_FANOUT; j < last; j++)
		add_item(s, l - 1, j, &r);
	store(s, l, i, &r);
}

/*
 * Chunk i, made before, brought up to date by taking out the entries
 * removed since (their bits set in removed, not in seen): the count and
 * INT64 sums subtract exactly, so a chunk that writers took a few entries
 * out of costs those entries, not a pass over its GBT_CHUNK.  1 (make it
 * again) when it was never made, an entry came back (a bit cleared), or
 * a value taken out is a FLOAT8 (its double-double sum is not exact) or
 * its column's min or max.
 */
static int
take_out_removed(gbt_chunk_sums *s, const gbt_agg_input *in, int64_t i)
{
	int64_t		from = i * CHUNK_BYTES;
	int64_t		to = from + CHUNK_BYTES;
	int64_t		count = s->count[0][i];
	gbt_agg_col col[GBT_MAX_COLS];
	int64_t		b;
	int			c;

	if (count < 0)
		return 1;
	if (to > (s->n + 7) / 8)
		to = (s->n + 7) / 8;
	for (c = 0; c < s->ncols; c++)
		col[c] = s->col[0][c][i];
	for (b = from; b < to; b++)
	{
		uint8_t		now = in->removed != NULL ? in->removed[b] : 0;
		unsigned	gone;

		if ((s->seen[b] & ~now) != 0)
			return 1;
		for (gone = (uint8_t) (now & ~s->seen[b]); gone != 0; gone &= gone - 1)
		{
			int64_t		p = b * 8 + __builtin_ctz(gone);

			if (p >= s->n)
				break;
			count--;
			for (c = 0; c < s->ncols; c++)
			{
				int			isnull;
				int64_t		v = (int64_t) gbt_agg_value(in, c, p, &isnull);
				uint64_t	lo;

				if (isnull)
					continue;
				if (s->coltype[c] != GBT_VAL_INT64 || v == col[c].min_i ||
					v == col[c].max_i)
					return 1;
				/* the 128-bit sum less v, sign-extended */
				lo = col[c].sum_lo - (uint64_t) v;
				col[c].sum_hi -= (v < 0 ? -1 : 0) + (col[c].sum_lo < (uint64_t) v);
				col[c].sum_lo = lo;
				col[c].nonnull--;
			}
		}
	}
	s->count[0][i] = count;
	for (c = 0; c < s->ncols; c++)
		s->col[0][c][i] = col[c];
	return 0;
}

/*
 * Chunk i made again from in (by taking out what was removed since, or
 * whole), and the removed bits it was made with kept.
 */
static int
remake_chunk(gbt_chunk_sums *s, const gbt_agg_input *in, int64_t i, chunk_change *ch)
{
	int64_t		from = i * CHUNK_BYTES;
	int64_t		bytes = (s->n + 7) / 8 - from;
	int64_t		count = s->count[0][i];
	__int128	sum[GBT_MAX_COLS];
	int64_t		nonnull[GBT_MAX_COLS];
	int			c;

	for (c = 0; c < s->ncols; c++)
	{
		sum[c] = col_sum(&s->col[0][c][i]);
		nonnull[c] = s->col[0][c][i].nonnull;
	}
	ch->whole = 0;
	if (take_out_removed(s, in, i) == 0)
	{
		ch->count = count - s->count[0][i];
		for (c = 0; c < s->ncols; c++)
		{
			ch->sum[c] = sum[c] - col_sum(&s->col[0][c][i]);
			ch->nonnull[c] = nonnull[c] - s->col[0][c][i].nonnull;
		}
	}
	else if (make_chunk(s, in, i) != 0)
		return 1;
	else
		ch->whole = 1;
	if (bytes > CHUNK_BYTES)
		bytes = CHUNK_BYTES;
	if (in->removed != NULL)
		memcpy(s->seen + from, in->removed + from, bytes);
	else
		memset(s->seen + from, 0, bytes);
	return 0;
}

gbt_chunk_sums *
gbt_chunk_sums_build(const gbt_agg_input *in)
{
	gbt_chunk_sums *s;
	int64_t		i,
				maxblock = 0;
	int			l,
				c,
				ok = 1;

	if (in->n < GBT_CHUNK_RANGE_MIN || (in->blocks == NULL && in->tids == NULL))
		return NULL;
	s = (gbt_chunk_sums *) calloc(1, sizeof(gbt_chunk_sums));
	if (s == NULL)
		return NULL;
	s->n = in->n;
	s->ncols = in->ncols;
	memcpy(s->coltype, in->coltype, sizeof(s->coltype));
	for (i = 0; i < in->n; i++)
		if (gbt_agg_block(in, i) > maxblock)
			maxblock = gbt_agg_block(in, i);
	s->nblocks = maxblock + 1;
	s->allvis = (uint8_t *) alloc_counted(s, s->nblocks / 8 + 1);
	s->seen = (uint8_t *) alloc_counted(s, s->n / 8 + 1);
	s->nitems[0] = (s->n + GBT_CHUNK - 1) / GBT_CHUNK;
	for (l = 1; l < GBT_CHUNK_LEVELS && s->nitems[l - 1] > 1; l++)
		s->nitems[l] = (s->nitems[l - 1] + GBT_CHUNK_FANOUT - 1) / GBT_CHUNK_FANOUT;
	s->nlevels = l;
	s->todo = (int64_t *) alloc_counted(s, sizeof(int64_t) * s->nitems[0]);
	ok = s->allvis != NULL && s->seen != NULL && s->todo != NULL;
	for (l = 0; l < s->nlevels && ok; l++)
	{
		s->count[l] = (int64_t *) alloc_counted(s, sizeof(int64_t) * s->nitems[l]);
		s->dirty[l] = (int32_t *) alloc_counted(s, sizeof(int32_t) * s->nitems[l]);
		s->whole[l] = (uint8_t *) alloc_counted(s, s->nitems[l]);
		ok = s->count[l] != NULL && s->dirty[l] != NULL && s->whole[l] != NULL;
		if (ok)
			memset(s->whole[l], 1, s->nitems[l]);	/* never made */
		for (c = 0; c < s->ncols && ok; c++)
		{
			s->col[l][c] = (gbt_agg_col *) alloc_counted(s, sizeof(gbt_agg_col) * s->nitems[l]);
			ok = s->col[l][c] != NULL;
		}
	}
	if (!ok)
	{
		gbt_chunk_sums_free(s);
		return NULL;
	}
	memset(s->allvis, 0xff, s->nblocks / 8 + 1);

	/*
	 * Every chunk is dirty until made: the service makes them all right
	 * after the build, in threads (gbt_chunk_sums_tidy_all()), and those
	 * that changed since between requests (gbt_chunk_sums_tidy()).
	 */
	for (i = 0; i < s->nitems[0]; i++)
	{
		s->count[0][i] = -1;	/* never made: take_out_removed() must not */
		mark_dirty(s, i);
	}
	return s;
}

/*
 * Whether visible[] has the bit of every block an entry is on: compared
 * with allvis (all bits set) by memcmp, as an aggregate of a table of 2^26
 * rows asks this of 45 kB (about a quarter of its walk's time); not when
 * the caller knows it all set (visible_all).
 */
static int
all_visible(const gbt_chunk_sums *s, const uint8_t *visible, int64_t nvisible,
			int visible_all)
{
	int64_t		full = s->nblocks / 8;
	int			tail = (int) (s->nblocks & 7);

	if (visible == NULL || nvisible < s->nblocks)
		return 0;
	if (visible_all)
		return 1;
	if (visible != s->allvis && memcmp(visible, s->allvis, full) != 0)
		return 0;
	return tail == 0 || (visible[full] & ((1 << tail) - 1)) == (1 << tail) - 1;
}

/* Whether chunk i's bits in removed (NULL: none) differ from seen[]. */
static int
chunk_differs(const gbt_chunk_sums *s, const uint8_t *removed, int64_t i)
{
	int64_t		from = i * CHUNK_BYTES;
	int64_t		to = (i + 1) * CHUNK_BYTES;
	int64_t		full = s->n / 8;
	int			tail = (int) (s->n & 7);
	int64_t		b;

	if (to > full)
		to = full;
	if (removed != NULL && memcmp(s->seen + from, removed + from, to - from) != 0)
		return 1;
	for (b = from; removed == NULL && b < to; b++)
		if (s->seen[b] != 0)
			return 1;
	/* the last byte's bits of positions below n */
	if (tail != 0 && to == full && (i + 1) * CHUNK_BYTES > full)
	{
		uint8_t		mask = (uint8_t) ((1 << tail) - 1);
		uint8_t		now = removed != NULL ? removed[full] : 0;

		return ((s->seen[full] ^ now) & mask) != 0;
	}
	return 0;
}

static void
mark_dirty(gbt_chunk_sums *s, int64_t i)
{
	int			l;

	s->dirty[0][i] = 1;
	s->todo[s->ntodo++] = i;
	for (l = 1; l < s->nlevels; l++)
		s->dirty[l][i / span(l)]++;
}

/*
 * Chunks [from, to) (from a multiple of DIFF_RUN) not dirty yet whose
 * removed bits changed since they were made, into found: how many.
 * Read-only, so that pieces of the chunks can be compared at once.
 */
static int64_t
changed_chunks(const gbt_chunk_sums *s, const uint8_t *removed, int64_t from,
			   int64_t to, int64_t *found)
{
	int64_t		i,
				n = 0;

	for (i = from; i < to; i++)
	{
		/* a few changed chunks among many: whole runs compared at once */
		if (removed != NULL && i % DIFF_RUN == 0 &&
			(i + DIFF_RUN) * CHUNK_BYTES <= s->n / 8 &&
			memcmp(s->seen + i * CHUNK_BYTES, removed + i * CHUNK_BYTES,
				   DIFF_RUN * CHUNK_BYTES) == 0)
		{
			i += DIFF_RUN - 1;
			continue;
		}
		if (s->dirty[0][i] == 0 && chunk_differs(s, removed, i))
			found[n++] = i;
	}
	return n;
}

typedef struct diff_piece
{
	const gbt_chunk_sums *s;
	const uint8_t *removed;
	int64_t		from;
	int64_t		to;
	int64_t    *found;			/* room for to - from */
	int64_t		nfound;
} diff_piece;

static void
diff_chunks(void *arg)
{
	diff_piece *p = (diff_piece *) arg;

	p->nfound = changed_chunks(p->s, p->removed, p->from, p->to, p->found);
}

/*
 * Mark the chunks whose removed bits changed since they were made: the
 * bitmap compared in npieces pieces at once by run where given (8 MB at
 * 2^26 entries, every version beside writers), then marked here in order.
 */
static void
find_dirty_par(gbt_chunk_sums *s, const uint8_t *removed, uint64_t version,
			   gbt_piece_runner run, int npieces)
{
	diff_piece	pieces[SUMS_PIECES_MAX];
	int64_t    *found;
	int64_t		runs = (s->nitems[0] + DIFF_RUN - 1) / DIFF_RUN;
	int64_t		i;
	int			q;

	if (s->diffed && s->removed_null == (removed == NULL) &&
		(removed == NULL || s->removed_version == version))
		return;
	npieces = gbt_pieces_for(runs, RUNS_A_PIECE, SUMS_PIECES_MAX, run != NULL, npieces);
	found = (int64_t *) malloc(sizeof(int64_t) * (s->nitems[0] > 0 ? s->nitems[0] : 1));
	if (found == NULL)
		npieces = 0;			/* below: one pass, marking as it goes */
	for (q = 0; q < npieces; q++)
	{
		pieces[q].s = s;
		pieces[q].removed = removed;
		pieces[q].from = runs * q / npieces * DIFF_RUN;
		pieces[q].to = runs * (q + 1) / npieces * DIFF_RUN;
		if (pieces[q].to > s->nitems[0])
			pieces[q].to = s->nitems[0];
		pieces[q].found = found + pieces[q].from;
	}
	if (npieces > 1)
		run(diff_chunks, pieces, sizeof(diff_piece), npieces);
	else if (npieces == 1)
		diff_chunks(&pieces[0]);
	for (q = 0; q < npieces; q++)
		for (i = 0; i < pieces[q].nfound; i++)
			mark_dirty(s, pieces[q].found[i]);
	if (found == NULL)
		for (i = 0; i < s->nitems[0]; i++)
			if (s->dirty[0][i] == 0 && chunk_differs(s, removed, i))
				mark_dirty(s, i);
	free(found);
	s->diffed = 1;
	s->removed_null = removed == NULL;
	s->removed_version = version;
}

/*
 * chunksums.h: the chunks of the positions whose removed bits changed
 * marked as find_dirty_par() would mark them, without comparing the rest.
 * The list covers every change after from; the sums' own comparison must
 * be no older than that.
 */
void
gbt_chunk_sums_note(gbt_chunk_sums *s, const uint8_t *removed, uint64_t from,
					uint64_t to, const int64_t *changed, int64_t nchanged)
{
	int64_t		k;

	if (s == NULL || !s->diffed || s->removed_version < from || s->removed_version > to)
		return;
	for (k = 0; k < nchanged; k++)
	{
		int64_t		i = changed[k] / GBT_CHUNK;

		if (changed[k] >= 0 && changed[k] < s->n && s->dirty[0][i] == 0 &&
			chunk_differs(s, removed, i))
			mark_dirty(s, i);
	}
	s->removed_null = removed == NULL;
	s->removed_version = to;
}

/* Mark the chunks whose removed bits changed since they were made. */
static void
find_dirty(gbt_chunk_sums *s, const uint8_t *removed, uint64_t version)
{
	find_dirty_par(s, removed, version, NULL, 1);
}

/*
 * Chunk i (off the stack) is clean: one dirty chunk fewer below each item
 * above it, and those whose last dirty chunk it was made again.  (Every
 * level counts it: stopping at the first item with others left kept the
 * items above dirty for good, and every walk went down through them.)
 */
static void
chunk_clean(gbt_chunk_sums *s, int64_t i, const chunk_change *ch)
{
	int			l,
				c;

	s->dirty[0][i] = 0;
	for (l = 1; l < s->nlevels; l++)
	{
		int64_t		j = i / span(l);

		/* what the chunk lost, taken out of the item too (exact) */
		if (ch->whole)
			s->whole[l][j] = 1;
		else if (!s->whole[l][j])
		{
			s->count[l][j] -= ch->count;
			for (c = 0; c < s->ncols; c++)
			{
				gbt_agg_col *col = &s->col[l][c][j];
				__int128	sum = col_sum(col) - ch->sum[c];

				col->nonnull -= ch->nonnull[c];
				col->sum_lo = (uint64_t) sum;
				col->sum_hi = (int64_t) (sum >> 64);
			}
		}
		if (--s->dirty[l][j] == 0 && s->whole[l][j])
		{
			make_item(s, l, j);
			s->whole[l][j] = 0;
		}
	}
}

/* Make up to budget dirty chunks again, and the items above; 0 or 1. */
static int
sync_dirty(gbt_chunk_sums *s, const gbt_agg_input *in, int64_t budget)
{
	while (s->ntodo > 0 && budget-- > 0)
	{
		int64_t		i = s->todo[s->ntodo - 1];
		chunk_change ch;

		if (remake_chunk(s, in, i, &ch) != 0)
			return 1;
		s->ntodo--;
		chunk_clean(s, i, &ch);
	}
	return 0;
}

/* Append [a, b) to the ranges to scan (joined to the last when adjacent). */
static int
push(gbt_chunk_split *sp, int64_t a, int64_t b)
{
	if (a >= b)
		return 0;
	sp->entries += b - a;
	if (sp->n > 0 && sp->end[sp->n - 1] == a)
	{
		sp->end[sp->n - 1] = b;
		return 0;
	}
	if (sp->n == sp->cap)
	{
		int64_t		cap = sp->cap * 2 + 16;
		int64_t    *ns = (int64_t *) realloc(sp->start, sizeof(int64_t) * cap);
		int64_t    *ne;

		if (ns == NULL)
			return 1;
		sp->start = ns;
		ne = (int64_t *) realloc(sp->end, sizeof(int64_t) * cap);
		if (ne == NULL)
			return 1;
		sp->end = ne;
		sp->cap = cap;
	}
	sp->start[sp->n] = a;
	sp->end[sp->n++] = b;
	return 0;
}

/* Item i of level l: its aggregate, or what is dirty under it to scan. */
static int
take(const gbt_chunk_sums *s, int l, int64_t i, gbt_chunk_split *sp)
{
	int64_t		j,
				last;

	if (s->dirty[l][i] == 0)
	{
		add_item(s, l, i, &sp->part);
		sp->chunks += span(l);
		return 0;
	}
	if (l == 0)
		return push(sp, i * GBT_CHUNK, (i + 1) * GBT_CHUNK);
	last = (i + 1) * GBT_CHUNK_FANOUT;
	if (last > s->nitems[l - 1])
		last = s->nitems[l - 1];
	for (j = i * GBT_CHUNK_FANOUT; j < last; j++)
		if (take(s, l - 1, j, sp) != 0)
			return 1;
	return 0;
}

/* Items [a, b) of level l, whole items of the levels above where they fit. */
static int
take_items(const gbt_chunk_sums *s, int l, int64_t a, int64_t b, gbt_chunk_split *sp)
{
	int64_t		a2 = (a + GBT_CHUNK_FANOUT - 1) / GBT_CHUNK_FANOUT;
	int64_t		b2 = b / GBT_CHUNK_FANOUT;
	int64_t		i;

	if (l + 1 < s->nlevels && a2 < b2)
	{
		for (i = a; i < a2 * GBT_CHUNK_FANOUT; i++)
			if (take(s, l, i, sp) != 0)
				return 1;
		if (take_items(s, l + 1, a2, b2, sp) != 0)
			return 1;
		a = b2 * GBT_CHUNK_FANOUT;
	}
	for (i = a; i < b; i++)
		if (take(s, l, i, sp) != 0)
			return 1;
	return 0;
}

int
gbt_chunk_sums_ready(gbt_chunk_sums *s, const gbt_agg_input *in,
					 uint64_t removed_version, const int64_t *start,
					 const int64_t *end, int64_t nranges, int64_t budget)
{
	int64_t		r;
	int			any_long = 0;

	if (s == NULL || in->n != s->n)
		return 1;
	for (r = 0; r < nranges; r++)
	{
		if (start[r] < 0 || start[r] > end[r] || end[r] > s->n)
			return 1;
		if (end[r] - start[r] >= GBT_CHUNK_RANGE_MIN)
			any_long = 1;
	}
	if (!any_long)
		return 1;
	find_dirty(s, in->removed, removed_version);
	return sync_dirty(s, in, budget) != 0;
}

/*
 * Chunks [from, to) of s (or which[from, to)), made by one piece of
 * gbt_chunk_sums_tidy_all() or gbt_chunk_sums_sync().  Each piece writes
 * only its own chunks' slots of level 0 and of seen[] (whole bytes: a
 * chunk is CHUNK_BYTES of it), and marks those it made: made[k] (with
 * what it changed, changes[k]), or else clean at level 0; a chunk not made
 * stays dirty.
 */
typedef struct make_piece
{
	gbt_chunk_sums *s;
	const gbt_agg_input *in;
	int64_t		from;
	int64_t		to;
	const int64_t *which;		/* NULL: chunk k is k */
	char	   *made;
	chunk_change *changes;		/* with made: chunk k's at k - base */
	int64_t		base;
} make_piece;

static void
make_chunks(void *arg)
{
	make_piece *p = (make_piece *) arg;
	int64_t		k;

	for (k = p->from; k < p->to; k++)
	{
		int64_t		i = p->which != NULL ? p->which[k] : k;
		chunk_change ch;

		if (remake_chunk(p->s, p->in, i,
						 p->made != NULL ? &p->changes[k - p->base] : &ch) != 0)
			continue;
		if (p->made != NULL)
			p->made[k] = 1;
		else
			p->s->dirty[0][i] = 0;
	}
}

void
gbt_chunk_sums_sync(gbt_chunk_sums *s, const gbt_agg_input *in,
					uint64_t removed_version, int64_t max_chunks,
					gbt_piece_runner run, int npieces)
{
	make_piece	pieces[SUMS_PIECES_MAX];
	int64_t		first,
				n,
				k,
				kept;
	char	   *made;
	chunk_change *changes;
	int			q;

	if (s == NULL || in->n != s->n)
		return;
	find_dirty_par(s, in->removed, removed_version, run, npieces);
	n = s->ntodo < max_chunks ? s->ntodo : max_chunks;
	if (n <= 0)
		return;
	first = s->ntodo - n;		/* the top of the stack, as sync_dirty() */
	made = (char *) calloc(s->ntodo, 1);
	changes = (chunk_change *) malloc(sizeof(chunk_change) * (size_t) n);
	if (made == NULL || changes == NULL)
	{
		free(made);
		free(changes);
		return;
	}
	npieces = gbt_pieces_for(n, CHUNKS_A_PIECE, SUMS_PIECES_MAX, run != NULL, npieces);
	for (q = 0; q < npieces; q++)
	{
		pieces[q].s = s;
		pieces[q].in = in;
		pieces[q].from = first + n * q / npieces;
		pieces[q].to = first + n * (q + 1) / npieces;
		pieces[q].which = s->todo;
		pieces[q].made = made;
		pieces[q].changes = changes;
		pieces[q].base = first;
	}
	if (npieces > 1)
		run(make_chunks, pieces, sizeof(make_piece), npieces);
	else
		make_chunks(&pieces[0]);

	/* Off the stack; the items above those whose last dirty chunk it was. */
	kept = first;
	for (k = first; k < s->ntodo; k++)
	{
		int64_t		i = s->todo[k];

		if (!made[k])
		{
			s->todo[kept++] = i;	/* stays dirty */
			continue;
		}
		chunk_clean(s, i, &changes[k - first]);
	}
	s->ntodo = kept;
	free(made);
	free(changes);
}

/*
 * The chunks [*c0, *c1) that take() adds whole for [start, end); 0 for a
 * range it scans whole (too short, or within a chunk or two).
 */
static int
whole_chunks(int64_t start, int64_t end, int64_t *c0, int64_t *c1)
{
	*c0 = (start + GBT_CHUNK - 1) / GBT_CHUNK;
	*c1 = end / GBT_CHUNK;
	return end - start >= GBT_CHUNK_RANGE_MIN && *c0 < *c1;
}

/* Whether chunk i is one that take() would add whole for the ranges. */
static int
chunk_taken(int64_t i, const int64_t *start, const int64_t *end, int64_t nranges)
{
	int64_t		r,
				c0,
				c1;

	for (r = 0; r < nranges; r++)
		if (whole_chunks(start[r], end[r], &c0, &c1) && c0 <= i && i < c1)
			return 1;
	return 0;
}

int64_t
gbt_chunk_sums_sync_ranges(gbt_chunk_sums *s, const gbt_agg_input *in,
						   uint64_t removed_version, const int64_t *start,
						   const int64_t *end, int64_t nranges,
						   const uint8_t *visible, int64_t nvisible, int visible_all,
						   int64_t max_chunks, gbt_piece_runner run, int npieces)
{
	int64_t		top,
				k,
				wanted = 0;

	if (s == NULL || in->n != s->n || nranges > GBT_SYNC_RANGES_MAX)
		return 0;
	find_dirty_par(s, in->removed, removed_version, run, npieces);
	/* nothing dirty (most rounds): no need to compare the visible blocks */
	if (s->ntodo == 0 || !all_visible(s, visible, nvisible, visible_all))
		return 0;

	/* The ranges' dirty chunks moved to the top of the stack. */
	top = s->ntodo;
	for (k = s->ntodo - 1; k >= 0; k--)
		if (chunk_taken(s->todo[k], start, end, nranges))
		{
			int64_t		i = s->todo[k];

			s->todo[k] = s->todo[--top];
			s->todo[top] = i;
			wanted++;
		}
	if (wanted == 0 || wanted > max_chunks)
		return wanted;
	gbt_chunk_sums_sync(s, in, removed_version, wanted, run, npieces);
	return wanted;
}

int
gbt_chunk_sums_take(const gbt_chunk_sums *s, const int64_t *start, const int64_t *end,
					int64_t nranges, const uint8_t *visible, int64_t nvisible,
					int visible_all, gbt_chunk_split *split)
{
	int64_t		r;

	memset(split, 0, sizeof(*split));
	if (!all_visible(s, visible, nvisible, visible_all))
		return 1;
	for (r = 0; r < nranges; r++)
	{
		/* the whole chunks inside the range; the ends are scanned */
		int64_t		c0,
					c1;
		int			failed;

		if (!whole_chunks(start[r], end[r], &c0, &c1))
			failed = push(split, start[r], end[r]);
		else
			failed = push(split, start[r], c0 * GBT_CHUNK) ||
				take_items(s, 0, c0, c1, split) ||
				push(split, c1 * GBT_CHUNK, end[r]);
		if (failed)
		{
			gbt_chunk_split_free(split);
			return -1;
		}
	}
	return 0;
}

int
gbt_chunk_sums_split(gbt_chunk_sums *s, const gbt_agg_input *in,
					 uint64_t removed_version, const int64_t *start,
					 const int64_t *end, int64_t nranges,
					 const uint8_t *visible, int64_t nvisible,
					 gbt_chunk_split *split)
{
	memset(split, 0, sizeof(*split));
	if (gbt_chunk_sums_ready(s, in, removed_version, start, end, nranges,
							 GBT_CHUNK_SYNC_MAX) != 0)
		return 1;
	return gbt_chunk_sums_take(s, start, end, nranges, visible, nvisible, 0, split);
}

int
gbt_chunk_sums_tidy(gbt_chunk_sums *s, const gbt_agg_input *in,
					uint64_t removed_version, int64_t max_chunks)
{
	if (s == NULL || in->n != s->n)
		return 0;
	find_dirty(s, in->removed, removed_version);
	/* a chunk that cannot be made stays dirty: not worth another round */
	if (sync_dirty(s, in, max_chunks) != 0)
		return 0;
	return s->ntodo > 0;
}

int
gbt_chunk_sums_tidy_all(gbt_chunk_sums *s, const gbt_agg_input *in,
						uint64_t removed_version, gbt_piece_runner run, int npieces)
{
	make_piece	pieces[SUMS_PIECES_MAX];
	int64_t		per;
	int64_t		i;
	int			l,
				k;

	if (s == NULL || in->n != s->n)
		return 0;
	npieces = gbt_pieces_for(s->nitems[0], 1, SUMS_PIECES_MAX, run != NULL, npieces);
	/* every chunk is made again, dirty or not */
	for (i = 0; i < s->nitems[0]; i++)
		s->dirty[0][i] = 1;
	per = (s->nitems[0] + npieces - 1) / npieces;
	for (k = 0; k < npieces; k++)
	{
		pieces[k].s = s;
		pieces[k].in = in;
		pieces[k].from = k * per < s->nitems[0] ? k * per : s->nitems[0];
		pieces[k].to = (k + 1) * per < s->nitems[0] ? (k + 1) * per : s->nitems[0];
		pieces[k].which = NULL;
		pieces[k].made = NULL;
		pieces[k].changes = NULL;
		pieces[k].base = 0;
	}
	if (npieces > 1)
		run(make_chunks, pieces, sizeof(make_piece), npieces);
	else
		make_chunks(&pieces[0]);

	/* The dirty counts above and the stack of what is left, as made. */
	for (l = 1; l < s->nlevels; l++)
		memset(s->dirty[l], 0, sizeof(int32_t) * s->nitems[l]);
	s->ntodo = 0;
	for (i = 0; i < s->nitems[0]; i++)
	{
		if (s->dirty[0][i] == 0)
			continue;
		s->todo[s->ntodo++] = i;
		for (l = 1; l < s->nlevels; l++)
			s->dirty[l][i / span(l)]++;
	}
	for (l = 1; l < s->nlevels; l++)
		for (i = 0; i < s->nitems[l]; i++)
		{
			s->whole[l][i] = s->dirty[l][i] != 0;	/* made once clean */
			if (s->dirty[l][i] == 0)
				make_item(s, l, i);
		}
	s->diffed = 1;
	s->removed_null = in->removed == NULL;
	s->removed_version = removed_version;
	return s->ntodo > 0;
}

int64_t
gbt_chunk_sums_check(const gbt_chunk_sums *s)
{
	int64_t		bad = 0,
				j,
				k;
	int			l;

	for (l = 1; s != NULL && l < s->nlevels; l++)
		for (j = 0; j < s->nitems[l]; j++)
		{
			int64_t		from = j * span(l);
			int64_t		to = (j + 1) * span(l);
			int64_t		last = (j + 1) * GBT_CHUNK_FANOUT;
			int64_t		dirty = 0;
			gbt_agg_result r;
			int			c,
						differs = 0;

			to = to < s->nitems[0] ? to : s->nitems[0];
			last = last < s->nitems[l - 1] ? last : s->nitems[l - 1];
			for (k = from; k < to; k++)
				dirty += s->dirty[0][k] != 0;
			memset(&r, 0, sizeof(r));
			for (k = j * GBT_CHUNK_FANOUT; k < last; k++)
				add_item(s, l - 1, k, &r);
			differs = r.count != s->count[l][j];
			for (c = 0; c < s->ncols; c++)
			{
				const gbt_agg_col *a = &r.col[c],
						   *b = &s->col[l][c][j];

				differs |= a->nonnull != b->nonnull;
				if (s->coltype[c] == GBT_VAL_INT64 && a->nonnull > 0)
					differs |= a->sum_lo != b->sum_lo || a->sum_hi != b->sum_hi ||
						a->min_i != b->min_i || a->max_i != b->max_i;
			}
			if (s->dirty[l][j] != dirty || (dirty == 0 && differs))
				bad++;
		}
	return bad;
}

void
gbt_chunk_split_free(gbt_chunk_split *split)
{
	free(split->start);
	free(split->end);
	split->start = split->end = NULL;
	split->n = split->cap = 0;
}

int
gbt_chunk_sums_each(gbt_chunk_sums *s, const gbt_agg_input *in, uint64_t removed_version,
					const int64_t *start, const int64_t *end, int64_t nranges,
					const uint8_t *visible, int64_t nvisible, gbt_agg_result *out,
					int64_t *unsure, int64_t unsure_cap, char *err, size_t errlen)
{
	int64_t		listed = 0;		/* unsure positions written so far */
	int64_t		r;

	for (r = 0; r < nranges; r++)
	{
		int64_t		room = unsure == NULL ? 0 : unsure_cap - listed;
		gbt_chunk_split split;
		int			rc;

		rc = s == NULL ? 1 :
			gbt_chunk_sums_split(s, in, removed_version, &start[r], &end[r], 1,
								 visible, nvisible, &split);
		if (rc < 0)
		{
			if (err != NULL && errlen > 0)
				snprintf(err, errlen, "aggregate: out of host memory");
			return 1;
		}
		if (rc > 0)
			rc = gbt_vagg_cpu(in, &start[r], &end[r], 1, visible, nvisible, &out[r],
							  unsure == NULL ? NULL : unsure + listed, room, err, errlen);
		else
		{
			rc = gbt_vagg_cpu_visible(in, split.start, split.end, split.n, &out[r],
									  err, errlen);
			if (rc == 0)
				gbt_agg_result_combine(&out[r], &split.part, in->coltype, in->ncols);
			gbt_chunk_split_free(&split);
		}
		if (rc != 0)
			return rc;
		listed += out[r].nunsure < room ? out[r].nunsure : room;
	}
	return 0;
}
