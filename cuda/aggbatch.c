/*
 * aggbatch.c
 *	  A round's aggregates answered together, for both engines
 *	  (aggbatch.h).  The chunk sums are made ready in the calling thread,
 *	  as that makes dirty chunks again (one engine, one thread); their
 *	  walks, and the scans of what they leave, each item's own ranges,
 *	  buffers and answer, are pure reads, run as pieces at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aggbatch.h"
#include "vagg.h"

int
gbt_agg_item_fail(gbt_agg_item *item, const char *what, const char *why)
{
	item->rc = 1;
	snprintf(item->err, sizeof(item->err), "%s: %s", what, why);
	return 1;
}

/* The columns the item does not ask for: no values (their fields zero). */
static void
mask_columns(gbt_agg_input *in, unsigned cols)
{
	int			c;

	for (c = 0; c < in->ncols && c < GBT_MAX_COLS; c++)
		if (!((cols >> c) & 1))
		{
			in->cols[c] = NULL;
			in->nulls[c] = NULL;
			in->keyed &= ~(1u << c);
			in->narrow &= ~(1u << c);
		}
}

static void
mask_result(gbt_agg_result *r, unsigned cols)
{
	int			c;

	for (c = 0; c < GBT_MAX_COLS; c++)
		if (!((cols >> c) & 1))
			memset(&r->col[c], 0, sizeof(gbt_agg_col));
}

/*
 * Items a piece of the chunk sums' walks takes at least (a walk and its
 * ends' scan: about 5 us at 2^26 entries; the service's pieces are claimed
 * one at a time, so small ones balance the threads that start late), and
 * the scans done in the same piece: those of a few chunks (longer ones
 * are balanced across pieces, below).
 */
#define GBT_BATCH_SPLIT_ITEMS 2
#define GBT_BATCH_SCAN_HERE (4 * GBT_CHUNK)

/* A run of host scans (or of chunk sums' walks) [from, to), one piece. */
typedef struct ScanPiece
{
	gbt_batch_scan *scans;
	int64_t		from;
	int64_t		to;
	const gbt_batch_hooks *hooks;
} ScanPiece;

/*
 * Item s's ranges left to scan, on the host: after its chunk sums took
 * their part every entry is on a visible block (they checked the map).
 */
static void
host_scan(gbt_batch_scan *s)
{
	gbt_agg_item *it = s->item;

	if (s->split_used)
		it->rc = gbt_vagg_cpu_visible(&s->in, s->start, s->end, s->nranges, it->out,
									  it->err, sizeof(it->err));
	else
		it->rc = gbt_vagg_cpu(&s->in, s->start, s->end, s->nranges, it->visible,
							  it->nvisible, it->out, it->unsure, it->unsure_cap,
							  it->err, sizeof(it->err));
}

/*
 * Item s's part from its chunk sums (made ready), what is left to scan,
 * and where it is scanned.
 */
static void
take_split(gbt_batch_scan *s, const gbt_batch_hooks *hooks)
{
	gbt_agg_item *it = s->item;
	int64_t		r;

	if (s->sums_ready)
	{
		int			rc = gbt_chunk_sums_take(s->sums, it->start, it->end, it->nranges,
											 it->visible, it->nvisible, it->visible_all,
											 &s->split);

		if (rc < 0)
		{
			gbt_agg_item_fail(it, "aggregate", "out of host memory");
			return;
		}
		if (rc == 0)
		{
			s->split_used = 1;
			s->start = s->split.start;
			s->end = s->split.end;
			s->nranges = s->split.n;
			mask_result(&s->split.part, it->cols);
		}
	}
	for (r = 0; r < s->nranges; r++)
		if (s->end[r] > s->start[r])
			s->entries += s->end[r] - s->start[r];
	s->on_device = hooks->device != NULL && s->entries > hooks->device_min;

	/* a short scan (a long range's two ends) here, in this piece */
	if (!s->on_device && s->entries <= GBT_BATCH_SCAN_HERE)
	{
		host_scan(s);
		s->scanned = 1;
	}
}

static void
split_piece(void *arg)
{
	ScanPiece  *p = (ScanPiece *) arg;
	int64_t		i;

	for (i = p->from; i < p->to; i++)
		if (p->scans[i].item->rc == 0)
			take_split(&p->scans[i], p->hooks);
}

static void
scan_piece(void *arg)
{
	ScanPiece  *p = (ScanPiece *) arg;
	int64_t		i;

	for (i = p->from; i < p->to; i++)
	{
		gbt_batch_scan *s = &p->scans[i];
		gbt_agg_item *it = s->item;

		if (it->rc != 0 || s->on_device || s->scanned)
			continue;
		host_scan(s);
	}
}

#define GBT_BATCH_PIECES_MAX 16
#define GBT_BATCH_PIECE_MIN 32768

/* The host scans in at most npar pieces of about as many entries each. */
static void
scan_on_host(gbt_batch_scan *scans, int64_t n, gbt_engine_par par, int npar)
{
	ScanPiece	pieces[GBT_BATCH_PIECES_MAX];
	int64_t		total = 0;
	int64_t		acc = 0;
	int64_t		i = 0;
	int			npieces;
	int			k;

	for (i = 0; i < n; i++)
		if (!scans[i].on_device && !scans[i].scanned && scans[i].item->rc == 0)
			total += scans[i].entries + 64;	/* a call's own cost too */
	/* a thread's start costs about a scan of GBT_BATCH_PIECE_MIN entries */
	npieces = gbt_pieces_for(total, GBT_BATCH_PIECE_MIN, GBT_BATCH_PIECES_MAX, par != NULL, npar);
	if (npieces > n)
		npieces = n < 1 ? 1 : (int) n;
	i = 0;
	for (k = 0; k < npieces; k++)
	{
		pieces[k].scans = scans;
		pieces[k].hooks = NULL;
		pieces[k].from = i;
		while (i < n && (k == npieces - 1 || acc < total * (k + 1) / npieces))
		{
			if (!scans[i].on_device && !scans[i].scanned && scans[i].item->rc == 0)
				acc += scans[i].entries + 64;
			i++;
		}
		pieces[k].to = i;
	}
	if (npieces == 1)
		scan_piece(&pieces[0]);
	else
		par(scan_piece, pieces, sizeof(ScanPiece), npieces);
}

/* The device's scans, engine by engine in the order they first come. */
static void
scan_on_device(gbt_batch_scan *scans, int64_t n, const gbt_batch_hooks *hooks)
{
	gbt_batch_scan **list = malloc(sizeof(gbt_batch_scan *) * (n > 0 ? n : 1));
	char	   *taken = calloc(n > 0 ? n : 1, 1);
	int64_t		i;
	int64_t		j;

	if (list == NULL || taken == NULL)
	{
		for (i = 0; i < n; i++)
			if (scans[i].on_device && scans[i].item->rc == 0)
				gbt_agg_item_fail(scans[i].item, "aggregate", "out of host memory");
		free(list);
		free(taken);
		return;
	}
	for (i = 0; i < n; i++)
	{
		int64_t		m = 0;

		if (taken[i] || !scans[i].on_device || scans[i].item->rc != 0)
			continue;
		for (j = i; j < n; j++)
			if (!taken[j] && scans[j].on_device && scans[j].item->rc == 0 &&
				scans[j].item->e == scans[i].item->e)
			{
				taken[j] = 1;
				list[m++] = &scans[j];
			}
		hooks->device(scans[i].item->e, list, m);
	}
	free(list);
	free(taken);
}

/*
 * Dirty chunks of an engine's sums made again in a round, in pieces at
 * once, before its items' walks (a chunk that writers took a few entries
 * out of: well under a microsecond of one thread; one made whole: about
 * 3 us); the others left dirty are scanned, and made between rounds.
 * Beside 8 writers at 59k updates a second on 2^26 rows, a round of 20 ms
 * finds about 1200 new dirty chunks: every one is made at once, so that
 * no item scans one, and a burst (a VACUUM's) stays a few ms of threads.
 */
#define GBT_BATCH_SYNC_CHUNKS 4096

/*
 * An item's own dirty chunks made at once, past those, when there are at
 * most this many (2^26 entries: ~12 ms of 16 threads, once): after an
 * update that touched most chunks, its range is then taken from the sums
 * and not scanned (on a GPU, that scan would copy the columns to the
 * device, a second copy of the host's kept for the next ones).
 */
#define GBT_BATCH_SYNC_RANGE_CHUNKS 65536

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Whether scans[i] is the first of the round with its chunk sums. */
static int
first_of_sums(const gbt_batch_scan *scans, int64_t i)
{
	int64_t		j;

	for (j = 0; j < i; j++)
		if (scans[j].sums == scans[i].sums)
			return 0;
	return 1;
}

int
gbt_agg_batch_run(gbt_agg_item *items, int64_t nitems, const gbt_batch_hooks *hooks,
				  gbt_engine_par par, int npar)
{
	gbt_batch_scan *scans = calloc(nitems > 0 ? nitems : 1, sizeof(gbt_batch_scan));
	int64_t		i;
	int			failed = 0;
	double		ms[GBT_BATCH_STEPS] = {0};
	double		t0,
				t1;

	if (scans == NULL)
	{
		for (i = 0; i < nitems; i++)
			failed += gbt_agg_item_fail(&items[i], "aggregate", "out of host memory");
		return failed;
	}

	/* The chunk sums made ready, here: they are the engines' state. */
	for (i = 0; i < nitems; i++)
	{
		gbt_agg_item *it = &items[i];
		gbt_batch_scan *s = &scans[i];

		it->rc = 0;
		it->err[0] = '\0';
		s->item = it;
		if (it->out == NULL || it->e == NULL)
		{
			gbt_agg_item_fail(it, "aggregate", "no engine or no result");
			continue;
		}
		memset(it->out, 0, sizeof(gbt_agg_result));
		hooks->host_input(it->e, &s->in);
		s->in.removed = it->removed;
		s->start = it->start;
		s->end = it->end;
		s->nranges = it->nranges;
		s->sums = hooks->sums(it->e);
		/* all columns: the chunks it makes again are kept */
		t0 = now_ms();
		if (s->sums != NULL && first_of_sums(scans, i))
			gbt_chunk_sums_sync(s->sums, &s->in, it->removed_version,
								GBT_BATCH_SYNC_CHUNKS, par, npar);
		t1 = now_ms();
		ms[GBT_BATCH_SYNC] += t1 - t0;
		s->sums_ready = gbt_chunk_sums_ready(s->sums, &s->in, it->removed_version,
											 it->start, it->end, it->nranges, 0) == 0;
		if (s->sums_ready)
			(void) gbt_chunk_sums_sync_ranges(s->sums, &s->in, it->removed_version,
											  it->start, it->end, it->nranges,
											  it->visible, it->nvisible, it->visible_all,
											  GBT_BATCH_SYNC_RANGE_CHUNKS, par, npar);
		ms[GBT_BATCH_READY] += now_ms() - t1;
		mask_columns(&s->in, it->cols);
	}
	t0 = now_ms();

	/* Their walks, in pieces at once: they only read the sums. */
	{
		ScanPiece	pieces[GBT_BATCH_PIECES_MAX];
		int			npieces = gbt_pieces_for(nitems, GBT_BATCH_SPLIT_ITEMS, GBT_BATCH_PIECES_MAX,
											 par != NULL, npar);
		int			k;

		for (k = 0; k < npieces; k++)
		{
			pieces[k].scans = scans;
			pieces[k].from = nitems * k / npieces;
			pieces[k].to = nitems * (k + 1) / npieces;
			pieces[k].hooks = hooks;
		}
		if (npieces == 1)
			split_piece(&pieces[0]);
		else
			par(split_piece, pieces, sizeof(ScanPiece), npieces);
	}

	t1 = now_ms();
	ms[GBT_BATCH_WALKS] = t1 - t0;
	scan_on_host(scans, nitems, par, npar);
	t0 = now_ms();
	ms[GBT_BATCH_HOST] = t0 - t1;
	if (hooks->device != NULL)
		scan_on_device(scans, nitems, hooks);
	ms[GBT_BATCH_DEVICE] = now_ms() - t0;
	if (nitems > 0)
		memcpy(items[0].steps_ms, ms, sizeof(ms));

	for (i = 0; i < nitems; i++)
	{
		gbt_batch_scan *s = &scans[i];

		if (s->split_used)
		{
			if (s->item->rc == 0)
				gbt_agg_result_combine(s->item->out, &s->split.part, s->in.coltype,
									   s->in.ncols);
			gbt_chunk_split_free(&s->split);
		}
		failed += s->item->rc != 0;
	}
	free(scans);
	return failed;
}
