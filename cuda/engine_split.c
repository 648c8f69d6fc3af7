/*
 * engine_split.c
 *	  A mirror larger than one device's share, behind engine.h's interface:
 *	  its entries cut by position into parts, each an engine of one kind
 *	  (the CPU twin or the GPU engine) on its own device.  Every call is
 *	  the parts' calls over their shares of the positions, combined: a
 *	  range's positions from the part its end falls in, an aggregate's
 *	  partial results added (engine.h's results combine exactly), unsure
 *	  positions shifted to the whole's, grouped results merged by value.
 *	  Parts on different devices run at once when the work is large.
 *
 *	  The cuts fall on multiples of GBT_SPLIT_ALIGN positions, so that a
 *	  part's bitmaps (removed, NULLs) are the whole's from a whole 64-bit
 *	  word on.  A key's entries may lie in two parts: positions are the
 *	  whole's, so nothing depends on where a key is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "groupby.h"
#include "keybound.h"
#include "predicate.h"
#include "vagg.h"

/* The kept buffers: the ends' parts, keys asked, positions, pieces, results. */
enum
{
	SCRATCH_ENDS,
	SCRATCH_KEYS,
	SCRATCH_POS,
	SCRATCH_PIECES,
	SCRATCH_RESULTS,
	SCRATCH_SLOTS
};

struct gbt_engine
{
	const gbt_engine_ops *inner;
	int			nparts;
	gbt_engine *part[GBT_SPLIT_MAX_PARTS];
	int			device[GBT_SPLIT_MAX_PARTS];
	int64_t		cut[GBT_SPLIT_MAX_PARTS + 1];	/* part p: [cut[p], cut[p + 1]) */
	const uint64_t *keys;		/* borrowed, as the parts borrow theirs */
	int			ncols;			/* the columns, to combine results */
	gbt_valtype coltype[GBT_MAX_COLS];
	gbt_piece_runner run;		/* the parts' calls at once; NULL: in turn */

	/*
	 * Buffers kept between calls, grown to the largest (a fresh malloc of
	 * a few MB a call cost its page faults: 1 ms of a 100,000-key list's
	 * 0.2 ms search on the GPU).
	 */
	void	   *scratch[SCRATCH_SLOTS];
	size_t		scratch_size[SCRATCH_SLOTS];

	/*
	 * The caller's start/end arrays the last ranges() of sorted points
	 * wrote, and each part's slice of them in its own positions (in
	 * SCRATCH_POS): an aggregate right after over those arrays, unchanged,
	 * asks each part about its slice, whose positions a GPU part still
	 * holds on its device (no copy there, no cut of the ranges).
	 */
	const uint64_t *sorted_keys;	/* split_sort_unique()'s last answer */
	int64_t		sorted_n;
	const int64_t *points_start;
	const int64_t *points_end;
	int64_t		points_n;
	int			nslices;
	struct
	{
		int			p;
		int64_t    *start;
		int64_t    *end;
		int64_t		n;
	}			slice[GBT_SPLIT_MAX_PARTS];
};

/* Work of at least this many positions runs its parts at once. */
#define SPLIT_AT_ONCE_MIN 65536

static int
split_fail(const char *what, const char *why, char *err, size_t errlen)
{
	return gbt_engine_fail(what, why, err, errlen);
}

/* Kept buffer slot of at least bytes, its contents not kept; NULL: no memory. */
static void *
scratch(gbt_engine *e, int slot, size_t bytes)
{
	if (bytes > e->scratch_size[slot])
	{
		void	   *grown = realloc(e->scratch[slot], bytes);

		if (grown == NULL)
			return NULL;
		e->scratch[slot] = grown;
		e->scratch_size[slot] = bytes;
	}
	return e->scratch[slot];
}

static void
free_scratch(gbt_engine *e)
{
	int			i;

	for (i = 0; i < SCRATCH_SLOTS; i++)
	{
		free(e->scratch[i]);
		e->scratch[i] = NULL;
		e->scratch_size[i] = 0;
	}
}

/*
 * The parts forget the positions (and sorted keys) they keep for a next
 * call, and the engine its slices: before SCRATCH_POS is written or freed,
 * so that no later array at an old address is taken for an old one.
 */
static void
forget_parts(gbt_engine *e)
{
	int			p;

	for (p = 0; p < e->nparts; p++)
		if (e->part[p] != NULL)
			(void) e->inner->ranges(e->part[p], NULL, NULL, 0, NULL, NULL, NULL, 0);
	e->sorted_keys = NULL;
	e->sorted_n = 0;
	e->points_start = e->points_end = NULL;
	e->points_n = 0;
	e->nslices = 0;
}

/* The part holding position pos (0 <= pos < n): the last cut at or below. */
static int
part_of(const gbt_engine *e, int64_t pos)
{
	int			p = e->nparts - 1;

	while (p > 0 && e->cut[p] > pos)
		p--;
	return p;
}

/* in's arrays from position cut on, n entries. */
static void
part_input(const gbt_agg_input *in, int64_t cut, int64_t n, gbt_agg_input *out)
{
	int			c;

	*out = *in;
	out->n = n;
	if (in->blocks != NULL)
		out->blocks = in->blocks + cut;
	if (in->tids != NULL)
		out->tids = in->tids + 3 * cut;
	out->removed = NULL;
	for (c = 0; c < in->ncols && c < GBT_MAX_COLS; c++)
	{
		size_t		width = ((in->narrow >> c) & 1) ? 4 : 8;

		if (in->cols[c] != NULL)
			out->cols[c] = (const char *) in->cols[c] + cut * width;
		if (in->nulls[c] != NULL)
			out->nulls[c] = in->nulls[c] + cut / 8;
	}
}

static const uint8_t *
part_bits(const uint8_t *bits, int64_t cut)
{
	return bits != NULL ? bits + cut / 8 : NULL;
}

/*
 * One part's share of a call, run by run_part(): the arguments of the
 * inner call (positions local to the part), its answer and rc.
 */
typedef enum
{
	JOB_BUILD,
	JOB_RANGES,
	JOB_AGGREGATE,
	JOB_EACH,
	JOB_FILTERED,
	JOB_GROUPED,
	JOB_TIDY_ALL
} job_kind;

typedef struct part_job
{
	gbt_engine *e;
	int			p;
	job_kind	kind;
	/* build */
	const gbt_agg_input *in;
	/* ranges: keys searched; the part's answer */
	const uint64_t *lo;
	const uint64_t *hi;
	int64_t		nkeys;
	/* aggregates */
	const uint8_t *removed;
	uint64_t	removed_version;
	int64_t    *start;
	int64_t    *end;
	int64_t		nranges;
	int64_t		positions;		/* of those ranges */
	const uint8_t *visible;
	int64_t		nvisible;
	const gbt_pred_set *preds;
	gbt_agg_result *out;
	gbt_groups	groups;
	int64_t    *unsure;
	int64_t		unsure_cap;
	/* tidy_all */
	gbt_piece_runner run;
	int			npieces;
	int			rc;
	char		err[GBT_ITEM_ERRLEN];
} part_job;

static void
run_part(void *arg)
{
	part_job   *j = (part_job *) arg;
	gbt_engine *e = j->e;
	const gbt_engine_ops *ops = e->inner;
	gbt_engine *part = e->part[j->p];
	const uint8_t *removed = part_bits(j->removed, e->cut[j->p]);

	switch (j->kind)
	{
		case JOB_BUILD:
			{
				gbt_agg_input pin;

				part_input(j->in, e->cut[j->p], e->cut[j->p + 1] - e->cut[j->p], &pin);
				j->rc = ops->build(e->keys + e->cut[j->p], &pin, e->device[j->p],
								   &e->part[j->p], j->err, sizeof(j->err));
				break;
			}
		case JOB_RANGES:
			j->rc = ops->ranges(part, j->lo, j->hi, j->nkeys, j->start, j->end,
								j->err, sizeof(j->err));
			break;
		case JOB_AGGREGATE:
			j->rc = ops->aggregate(part, removed, j->removed_version, j->start, j->end,
								   j->nranges, j->visible, j->nvisible, j->out, j->unsure,
								   j->unsure_cap, j->err, sizeof(j->err));
			break;
		case JOB_EACH:
			j->rc = ops->aggregate_each(part, removed, j->removed_version, j->start, j->end,
										j->nranges, j->visible, j->nvisible, j->out,
										j->unsure, j->unsure_cap, j->err, sizeof(j->err));
			break;
		case JOB_FILTERED:
			j->rc = ops->aggregate_filtered(part, removed, j->removed_version, j->start,
											j->end, j->nranges, j->visible, j->nvisible,
											j->preds, j->out, j->unsure, j->unsure_cap,
											j->err, sizeof(j->err));
			break;
		case JOB_GROUPED:
			j->rc = ops->aggregate_grouped(part, removed, j->removed_version, j->start,
										   j->end, j->nranges, j->visible, j->nvisible,
										   j->preds, &j->groups, j->unsure, j->unsure_cap,
										   j->err, sizeof(j->err));
			break;
		case JOB_TIDY_ALL:
			j->rc = ops->tidy_all(part, removed, j->removed_version, j->run, j->npieces);
			break;
	}
}

/*
 * Run the jobs: at once when the engine has a runner, its parts are on
 * different devices (or all on the host) and the work is large; else in
 * turn.  Returns the first failure's index, or -1.
 */
static int
run_jobs(gbt_engine *e, part_job *jobs, int n, int64_t work)
{
	int			i;
	int			distinct = 1;

	for (i = 1; i < e->nparts; i++)
		if (e->device[i] >= 0 && e->device[i] == e->device[i - 1])
			distinct = 0;
	if (e->run != NULL && n > 1 && distinct && work >= SPLIT_AT_ONCE_MIN)
		e->run(run_part, jobs, sizeof(part_job), n);
	else
		for (i = 0; i < n; i++)
			run_part(&jobs[i]);
	for (i = 0; i < n; i++)
		if (jobs[i].rc != 0)
			return i;
	return -1;
}

static int
job_failed(const part_job *j, char *err, size_t errlen)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "part %d: %s", j->p, j->err);
	return 1;
}

int
gbt_engine_split_build(const gbt_engine_ops *inner, const uint64_t *keys,
					   const gbt_agg_input *in, int nparts, const int *devices,
					   const int64_t *weights, gbt_piece_runner build_run,
					   gbt_piece_runner call_run, gbt_engine **out,
					   char *err, size_t errlen)
{
	gbt_engine *e;
	part_job	jobs[GBT_SPLIT_MAX_PARTS];
	int64_t		total = 0,
				below = 0;
	int			p,
				failed;
	gbt_engine	saved;

	*out = NULL;
	if (inner == NULL || in == NULL || in->n < 0 || (in->n > 0 && keys == NULL))
		return split_fail("split build", "bad arguments", err, errlen);
	if (nparts < 1 || nparts > GBT_SPLIT_MAX_PARTS)
		return split_fail("split build", "parts out of range", err, errlen);
	for (p = 0; p < nparts; p++)
	{
		if (weights[p] <= 0)
			return split_fail("split build", "a part's weight is not positive", err, errlen);
		total += weights[p];
	}
	e = (gbt_engine *) calloc(1, sizeof(gbt_engine));
	if (e == NULL)
		return split_fail("split build", "out of memory", err, errlen);
	e->inner = inner;
	e->nparts = nparts;
	e->keys = keys;
	e->run = call_run;
	e->ncols = in->ncols < GBT_MAX_COLS ? in->ncols : GBT_MAX_COLS;
	memcpy(e->coltype, in->coltype, sizeof(e->coltype));
	for (p = 0; p < nparts; p++)
	{
		int64_t		cut = (int64_t) ((double) in->n * below / total);

		e->device[p] = devices[p];
		cut -= cut % GBT_SPLIT_ALIGN;
		e->cut[p] = p == 0 ? 0 : cut < e->cut[p - 1] ? e->cut[p - 1] : cut;
		below += weights[p];
	}
	e->cut[nparts] = in->n;
	memset(jobs, 0, sizeof(jobs));
	for (p = 0; p < nparts; p++)
	{
		jobs[p].e = e;
		jobs[p].p = p;
		jobs[p].kind = JOB_BUILD;
		jobs[p].in = in;
	}
	saved = *e;
	e->run = build_run;
	failed = run_jobs(e, jobs, nparts, in->n);
	e->run = saved.run;
	if (failed >= 0)
	{
		job_failed(&jobs[failed], err, errlen);
		for (p = 0; p < nparts; p++)
			if (e->part[p] != NULL)
				inner->free(e->part[p]);
		free(e);
		return 1;
	}
	*out = e;
	return 0;
}

int
gbt_engine_split_parts(const gbt_engine *e, gbt_split_part *parts)
{
	int			p;

	for (p = 0; p < e->nparts; p++)
	{
		parts[p].device = e->device[p];
		parts[p].first = e->cut[p];
		parts[p].n = e->cut[p + 1] - e->cut[p];
		parts[p].bytes = e->inner->bytes(e->part[p]);
		parts[p].host_bytes = e->inner->host_bytes(e->part[p]);
	}
	return e->nparts;
}

static int
split_usable(int device, char *name, size_t namelen, int64_t *memory,
			 char *why, size_t whylen)
{
	(void) device;
	(void) name;
	(void) namelen;
	(void) memory;
	return split_fail("split engine", "its parts' engines are checked, not it", why, whylen);
}

static int
split_build(const uint64_t *keys, const gbt_agg_input *in, int device,
			gbt_engine **out, char *err, size_t errlen)
{
	(void) keys;
	(void) in;
	(void) device;
	*out = NULL;
	return split_fail("split build", "built by gbt_engine_split_build()", err, errlen);
}

static void
split_free(gbt_engine *e)
{
	int			p;

	if (e == NULL)
		return;
	for (p = 0; p < e->nparts; p++)
		if (e->part[p] != NULL)
			e->inner->free(e->part[p]);
	free_scratch(e);
	free(e);
}

/*
 * split_ranges() of points (lo == hi) in ascending order, as an = ANY
 * list's after sort_unique(): each part is asked about its slice of the
 * caller's keys, found by two binary searches (no copy, no look at each
 * key): the keys from its previous part's last key to its own last key,
 * both included (a key equal to a part's last key may have entries in the
 * next part too).  Returns -1 when the points are not in order (the caller
 * takes the general way), else 0 or 1 with a message.
 */
static int
split_sorted_points(gbt_engine *e, const uint64_t *keys, int64_t n, int64_t *start,
					int64_t *end, char *err, size_t errlen)
{
	part_job	jobs[GBT_SPLIT_MAX_PARTS];
	int64_t		from[GBT_SPLIT_MAX_PARTS];
	uint64_t	prev_last[GBT_SPLIT_MAX_PARTS];
	int			has_prev[GBT_SPLIT_MAX_PARTS];
	int64_t    *pos,
				i,
				upto,
				total = 0,
				below;
	int			p,
				njobs = 0,
				failed,
				any = 0;
	uint64_t	last = 0;

	/* (the keys split_sort_unique() just left are in order) */
	if (keys != e->sorted_keys || n != e->sorted_n)
		for (i = 1; i < n; i++)
			if (keys[i] < keys[i - 1])
				return -1;
	forget_parts(e);
	memset(jobs, 0, sizeof(jobs));
	for (p = 0; p < e->nparts; p++)
	{
		int64_t		a,
					b;

		if (e->cut[p + 1] == e->cut[p])
			continue;
		a = any ? gbt_sorted_bound(keys, 0, n, last, false) : 0;
		b = gbt_sorted_bound(keys, 0, n, e->keys[e->cut[p + 1] - 1], true);
		has_prev[njobs] = any;
		prev_last[njobs] = last;
		last = e->keys[e->cut[p + 1] - 1];
		any = 1;
		if (b <= a)
			continue;
		jobs[njobs].e = e;
		jobs[njobs].p = p;
		jobs[njobs].kind = JOB_RANGES;
		jobs[njobs].lo = jobs[njobs].hi = keys + a;
		jobs[njobs].nkeys = b - a;
		from[njobs++] = a;
		total += b - a;
	}
	pos = (int64_t *) scratch(e, SCRATCH_POS, sizeof(int64_t) * 2 * (total + 1));
	if (pos == NULL)
		return split_fail("ranges", "out of memory", err, errlen);
	total = 0;
	for (p = 0; p < njobs; p++)
	{
		jobs[p].start = pos + 2 * total;
		jobs[p].end = pos + 2 * total + jobs[p].nkeys;
		total += jobs[p].nkeys;
	}
	/* beyond every part's keys: the end */
	below = any ? gbt_sorted_bound(keys, 0, n, last, true) : 0;
	for (i = below; i < n; i++)
		start[i] = end[i] = e->cut[e->nparts];
	failed = run_jobs(e, jobs, njobs, total);
	if (failed >= 0)
	{
		forget_parts(e);
		return job_failed(&jobs[failed], err, errlen);
	}
	e->points_start = start;
	e->points_end = end;
	e->points_n = n;
	e->nslices = njobs;
	for (p = 0; p < njobs; p++)
	{
		e->slice[p].p = jobs[p].p;
		e->slice[p].start = jobs[p].start;
		e->slice[p].end = jobs[p].end;
		e->slice[p].n = jobs[p].nkeys;
	}
	for (p = 0; p < njobs; p++)
	{
		part_job   *j = &jobs[p];
		int64_t		cut = e->cut[j->p];
		uint64_t	part_last = e->keys[e->cut[j->p + 1] - 1];

		/* a key's start lies here unless it is the previous part's last key */
		i = has_prev[p] ? gbt_sorted_bound(j->lo, 0, j->nkeys, prev_last[p], true) : 0;
		for (; i < j->nkeys; i++)
			start[from[p] + i] = cut + j->start[i];
		/* its end unless it is this part's last key (then the next's) */
		upto = e->cut[j->p + 1] == e->cut[e->nparts] ? j->nkeys :
			gbt_sorted_bound(j->lo, 0, j->nkeys, part_last, false);
		for (i = 0; i < upto; i++)
			end[from[p] + i] = cut + j->end[i];
	}
	return 0;
}

/*
 * The whole's positions of each inclusive range [lo[i], hi[i]]: a range's
 * start from the first part whose last key is at least lo (none: n), its
 * end from the first part whose last key is above hi (none: n).  Each part
 * is asked only for the keys whose answer lies in it.
 */
static int
split_ranges(gbt_engine *e, const uint64_t *lo, const uint64_t *hi, int64_t n,
			 int64_t *start, int64_t *end, char *err, size_t errlen)
{
	part_job	jobs[GBT_SPLIT_MAX_PARTS];
	int64_t		count[GBT_SPLIT_MAX_PARTS] = {0};
	uint8_t    *sp = NULL,
			   *ep = NULL;
	uint64_t   *keys = NULL;
	int64_t    *pos = NULL;
	int64_t		i,
				used = 0;
	int			p,
				njobs = 0,
				failed;
	int			rc = 0;

	if (n < 0)
		return split_fail("ranges", "n < 0", err, errlen);
	if (e->nparts == 1)
		return e->inner->ranges(e->part[0], lo, hi, n, start, end, err, errlen);
	if (n == 0)
	{
		forget_parts(e);		/* engine.h: n == 0 forgets */
		return 0;
	}
	if (lo == hi && (rc = split_sorted_points(e, lo, n, start, end, err, errlen)) >= 0)
		return rc;
	rc = 0;
	forget_parts(e);
	sp = (uint8_t *) scratch(e, SCRATCH_ENDS, 2 * (size_t) n);
	ep = sp != NULL ? sp + n : NULL;
	if (sp == NULL)
	{
		rc = split_fail("ranges", "out of memory", err, errlen);
		goto done;
	}
	/* the part of each end; nparts: beyond every key */
	for (i = 0; i < n; i++)
	{
		uint8_t		ps = (uint8_t) e->nparts,
					pe = (uint8_t) e->nparts;

		for (p = 0; p < e->nparts; p++)
		{
			int64_t		last = e->cut[p + 1] - 1;

			if (last < e->cut[p])
				continue;
			if (ps == e->nparts && e->keys[last] >= lo[i])
				ps = (uint8_t) p;
			if (pe == e->nparts && e->keys[last] > hi[i])
				pe = (uint8_t) p;
			if (ps < e->nparts && pe < e->nparts)
				break;
		}
		sp[i] = ps;
		ep[i] = pe;
		if (ps < e->nparts)
			count[ps]++;
		if (pe < e->nparts && pe != ps)
			count[pe]++;
	}
	for (p = 0; p < e->nparts; p++)
		used += count[p];
	keys = (uint64_t *) scratch(e, SCRATCH_KEYS, sizeof(uint64_t) * 2 * (used + 1));
	pos = (int64_t *) scratch(e, SCRATCH_POS, sizeof(int64_t) * 2 * (used + 1));
	if (keys == NULL || pos == NULL)
	{
		rc = split_fail("ranges", "out of memory", err, errlen);
		goto done;
	}
	memset(jobs, 0, sizeof(jobs));
	used = 0;
	for (p = 0; p < e->nparts; p++)
	{
		part_job   *j = &jobs[njobs];
		int64_t		k = 0;

		if (count[p] == 0)
			continue;
		j->e = e;
		j->p = p;
		j->kind = JOB_RANGES;
		j->lo = keys + 2 * used;
		/* points (lo == hi, as = ANY's keys) go over once, as points */
		j->hi = lo == hi ? j->lo : keys + 2 * used + count[p];
		j->start = pos + 2 * used;
		j->end = pos + 2 * used + count[p];
		j->nkeys = count[p];
		for (i = 0; i < n; i++)
			if (sp[i] == p || ep[i] == p)
			{
				((uint64_t *) j->lo)[k] = lo[i];
				((uint64_t *) j->hi)[k++] = hi[i];
			}
		used += count[p];
		njobs++;
	}
	failed = run_jobs(e, jobs, njobs, used);
	/* the parts' positions are not the caller's: forgotten */
	forget_parts(e);
	if (failed >= 0)
	{
		rc = job_failed(&jobs[failed], err, errlen);
		goto done;
	}
	{
		int64_t		next[GBT_SPLIT_MAX_PARTS + 1] = {0};
		int			jp[GBT_SPLIT_MAX_PARTS + 1];

		for (p = 0; p <= e->nparts; p++)
			jp[p] = -1;
		for (p = 0; p < njobs; p++)
			jp[jobs[p].p] = p;
		for (i = 0; i < n; i++)
		{
			int64_t		s = e->cut[e->nparts],
						t = e->cut[e->nparts];

			if (sp[i] < e->nparts)
			{
				part_job   *j = &jobs[jp[sp[i]]];

				s = e->cut[sp[i]] + j->start[next[sp[i]]];
			}
			if (ep[i] < e->nparts)
			{
				part_job   *j = &jobs[jp[ep[i]]];

				t = e->cut[ep[i]] + j->end[next[ep[i]]];
			}
			if (sp[i] < e->nparts)
				next[sp[i]]++;
			if (ep[i] < e->nparts && ep[i] != sp[i])
				next[ep[i]]++;
			if (lo[i] > hi[i])
				t = s;
			start[i] = s;
			end[i] = t;
		}
	}
done:
	return rc;
}

/*
 * The parts are asked about copies of the keys, never about the keys
 * themselves (split_ranges()): part 0 forgets the keys its sort leaves on
 * its device, so that no later array at their address is taken for them.
 */
static int
split_sort_unique(gbt_engine *e, uint64_t *keys, int64_t n, uint32_t *map,
				  int64_t *nout, char *err, size_t errlen)
{
	int			rc = e->inner->sort_unique(e->part[0], keys, n, map, nout, err, errlen);

	if (e->nparts > 1)
		forget_parts(e);
	if (rc == 0)
	{
		e->sorted_keys = keys;
		e->sorted_n = *nout;
	}
	return rc;
}

/*
 * The ranges cut at the parts' bounds, each piece in its part's positions:
 * job p's start, end, nranges and positions, and which range each piece
 * is of (owner[off[p] + k]).  One allocation holds them: *mem, or with mem
 * NULL the engine's kept buffer; *work: the positions.  0, or 1 with a
 * message.
 */
static int
cut_ranges(gbt_engine *e, const int64_t *start, const int64_t *end, int64_t nranges,
		   part_job *jobs, int64_t **owner, int64_t *off, void **mem, int64_t *work,
		   char *err, size_t errlen)
{
	int64_t		count[GBT_SPLIT_MAX_PARTS] = {0};
	int64_t		total = 0,
				r;
	int64_t    *buf;
	int			p;

	*work = 0;
	for (r = 0; r < nranges; r++)
	{
		if (start[r] < 0 || start[r] > end[r] || end[r] > e->cut[e->nparts])
			return split_fail("aggregate", "a range is outside the entries", err, errlen);
		if (start[r] == end[r])
			continue;
		*work += end[r] - start[r];
		for (p = part_of(e, start[r]); p < e->nparts && e->cut[p] < end[r]; p++)
			if (e->cut[p + 1] > e->cut[p])
				count[p]++;
	}
	for (p = 0; p < e->nparts; p++)
		total += count[p];
	if (mem != NULL)
		buf = (int64_t *) (*mem = malloc(sizeof(int64_t) * 3 * (total + 1)));
	else
		buf = (int64_t *) scratch(e, SCRATCH_PIECES, sizeof(int64_t) * 3 * (total + 1));
	if (buf == NULL)
		return split_fail("aggregate", "out of memory", err, errlen);
	*owner = buf + 2 * (total + 1);
	r = 0;
	for (p = 0; p < e->nparts; p++)
	{
		jobs[p].e = e;
		jobs[p].p = p;
		jobs[p].start = buf + r;
		jobs[p].end = buf + (total + 1) + r;
		jobs[p].nranges = 0;
		jobs[p].positions = 0;
		off[p] = r;
		r += count[p];
	}
	for (r = 0; r < nranges; r++)
	{
		if (start[r] == end[r])
			continue;
		for (p = part_of(e, start[r]); p < e->nparts && e->cut[p] < end[r]; p++)
		{
			part_job   *j = &jobs[p];
			int64_t		from = start[r] > e->cut[p] ? start[r] : e->cut[p];
			int64_t		to = end[r] < e->cut[p + 1] ? end[r] : e->cut[p + 1];

			if (e->cut[p + 1] == e->cut[p])
				continue;
			(*owner)[off[p] + j->nranges] = r;
			j->positions += to - from;
			j->start[j->nranges] = from - e->cut[p];
			j->end[j->nranges++] = to - e->cut[p];
		}
	}
	return 0;
}

/*
 * Each busy job's buffers, in the engine's kept buffer: nout results and
 * an unsure list of the whole's cap, or of its positions when fewer (a
 * part may hold all of the unsure entries, never more than its
 * positions).  0, or 1 with a message.
 */
static int
job_buffers(gbt_engine *e, part_job *jobs, int njobs, int64_t cap, int64_t nout,
			char *err, size_t errlen)
{
	size_t		total = 0;
	char	   *buf;
	int			k;

	for (k = 0; k < njobs; k++)
	{
		jobs[k].unsure_cap = jobs[k].positions < cap ? jobs[k].positions : cap;
		total += sizeof(gbt_agg_result) * (size_t) nout +
			sizeof(int64_t) * (size_t) jobs[k].unsure_cap;
	}
	buf = (char *) scratch(e, SCRATCH_RESULTS, total + 1);
	if (buf == NULL)
		return split_fail("aggregate", "out of memory", err, errlen);
	for (k = 0; k < njobs; k++)
	{
		jobs[k].out = (gbt_agg_result *) buf;
		buf += sizeof(gbt_agg_result) * (size_t) nout;
		jobs[k].unsure = (int64_t *) buf;
		buf += sizeof(int64_t) * (size_t) jobs[k].unsure_cap;
	}
	return 0;
}

/* The jobs with ranges, moved to the front (in part order); how many. */
static int
busy_jobs(part_job *jobs, int nparts, int64_t *off)
{
	int			n = 0,
				p;

	for (p = 0; p < nparts; p++)
		if (jobs[p].nranges > 0)
		{
			off[n] = off[p];
			jobs[n++] = jobs[p];
		}
	return n;
}

/* Job k's unsure positions (nunsure of them), shifted, appended to unsure. */
static void
append_unsure(const gbt_engine *e, const part_job *j, const int64_t *from, int64_t nunsure,
			  int64_t *unsure, int64_t cap, int64_t *have)
{
	int64_t		i;

	for (i = 0; i < nunsure && *have < cap; i++)
		unsure[(*have)++] = from[i] + e->cut[j->p];
}

/*
 * aggregate(), aggregate_each(), aggregate_filtered() and
 * aggregate_grouped() through the parts: cut the ranges, run the jobs,
 * combine.  nout results a job (1; nranges for each; nfilters).
 */
typedef struct split_call
{
	job_kind	kind;
	const uint8_t *removed;
	uint64_t	removed_version;
	const int64_t *start;
	const int64_t *end;
	int64_t		nranges;
	const uint8_t *visible;
	int64_t		nvisible;
	const gbt_pred_set *preds;
	gbt_agg_result *out;
	gbt_groups *groups;
	int64_t    *unsure;
	int64_t		unsure_cap;
} split_call;

/*
 * When c's ranges are the sorted points the last ranges() answered (the
 * same arrays, unchanged, as engine.h allows), the jobs are the parts'
 * slices of them, in the parts' own arrays: true, with *njobs and *work.
 * Each range's piece in a part is that part's answer for its key.
 */
static bool
kept_slices(gbt_engine *e, const split_call *c, part_job *jobs, int *njobs, int64_t *work)
{
	int			k;
	int64_t		i;

	if (e->points_start == NULL || c->start != e->points_start ||
		c->end != e->points_end || c->nranges != e->points_n)
		return false;
	*work = 0;
	for (k = 0; k < e->nslices; k++)
	{
		part_job   *j = &jobs[k];

		j->e = e;
		j->p = e->slice[k].p;
		j->start = e->slice[k].start;
		j->end = e->slice[k].end;
		j->nranges = e->slice[k].n;
		j->positions = 0;
		for (i = 0; i < j->nranges; i++)
			j->positions += j->end[i] - j->start[i];
		*work += j->positions;
	}
	*njobs = e->nslices;
	return true;
}

static int	merge_groups(gbt_engine *e, part_job *jobs, int njobs, gbt_groups *g,
						 int nfilters, int64_t *unsure, int64_t unsure_cap,
						 char *err, size_t errlen);

static int
split_call_run(gbt_engine *e, const split_call *c, char *err, size_t errlen)
{
	part_job	jobs[GBT_SPLIT_MAX_PARTS];
	int64_t		off[GBT_SPLIT_MAX_PARTS];
	int64_t    *owner;
	int64_t		work,
				nout,
				have = 0,
				f,
				r;
	int			nfilters = c->preds != NULL ? c->preds->nfilters : 1;
	int			njobs,
				k,
				failed,
				rc = 0;

	if (c->nranges < 0 || c->unsure_cap < 0 || c->nvisible < 0 ||
		(c->nranges > 0 && (c->start == NULL || c->end == NULL)) ||
		(c->unsure_cap > 0 && c->unsure == NULL))
		return split_fail("aggregate", "bad arguments", err, errlen);
	if ((c->kind == JOB_FILTERED || c->kind == JOB_GROUPED) &&
		(c->preds == NULL || nfilters < 1 || nfilters > GBT_PRED_MAX_FILTERS))
		return split_fail("aggregate", "bad filters", err, errlen);
	memset(jobs, 0, sizeof(jobs));
	if (c->kind != JOB_EACH && kept_slices(e, c, jobs, &njobs, &work))
		owner = NULL;			/* (only aggregate_each reads it) */
	else
	{
		if (cut_ranges(e, c->start, c->end, c->nranges, jobs, &owner, off, NULL, &work,
					   err, errlen) != 0)
			return 1;
		njobs = busy_jobs(jobs, e->nparts, off);
	}
	/* a grouped call with no range still says what its groups are: none */
	nout = 0;
	for (k = 0; k < njobs; k++)
		if (jobs[k].nranges > nout)
			nout = jobs[k].nranges;
	nout = c->kind == JOB_EACH ? nout : c->kind == JOB_GROUPED ? 0 : nfilters;
	if (job_buffers(e, jobs, njobs, c->unsure_cap, nout, err, errlen) != 0)
		return 1;
	for (k = 0; k < njobs; k++)
	{
		part_job   *j = &jobs[k];

		j->kind = c->kind;
		j->removed = c->removed;
		j->removed_version = c->removed_version;
		j->visible = c->visible;
		j->nvisible = c->nvisible;
		j->preds = c->preds;
		if (c->kind == JOB_GROUPED)
		{
			j->groups = *c->groups;
			j->groups.values = NULL;
			j->groups.out = NULL;
		}
	}
	if (c->kind == JOB_GROUPED)
		rc = merge_groups(e, jobs, njobs, c->groups, nfilters, c->unsure, c->unsure_cap,
						  err, errlen);
	else
	{
		int64_t		nres = c->kind == JOB_EACH ? c->nranges : nfilters;

		memset(c->out, 0, sizeof(gbt_agg_result) * (size_t) nres);
		failed = run_jobs(e, jobs, njobs, work);
		if (failed >= 0)
			rc = job_failed(&jobs[failed], err, errlen);
		else if (c->kind == JOB_EACH)
		{
			/* range by range, each range's pieces in part order */
			int64_t		next[GBT_SPLIT_MAX_PARTS] = {0};
			int64_t		used[GBT_SPLIT_MAX_PARTS] = {0};

			for (r = 0; r < c->nranges; r++)
				for (k = 0; k < njobs; k++)
				{
					part_job   *j = &jobs[k];
					int64_t		i = next[k];
					int64_t		n;

					if (i >= j->nranges || owner[off[k] + i] != r)
						continue;
					gbt_agg_result_combine(&c->out[r], &j->out[i], e->coltype, e->ncols);
					n = j->out[i].nunsure;
					if (n > j->unsure_cap - used[k])
						n = j->unsure_cap - used[k];
					append_unsure(e, j, j->unsure + used[k], n, c->unsure, c->unsure_cap, &have);
					used[k] += n;
					next[k]++;
				}
		}
		else
			for (k = 0; k < njobs; k++)
			{
				for (f = 0; f < nfilters; f++)
					gbt_agg_result_combine(&c->out[f], &jobs[k].out[f], e->coltype, e->ncols);
				append_unsure(e, &jobs[k], jobs[k].unsure, jobs[k].out[0].nunsure,
							  c->unsure, c->unsure_cap, &have);
			}
	}
	return rc;
}

/*
 * The grouped call: each part's groups (with room for the whole's cap),
 * merged by value, the NULL group last; more groups than cap in a part or
 * in the merge leave g's arrays alone and say how many (or more).
 */
static int
merge_groups(gbt_engine *e, part_job *jobs, int njobs, gbt_groups *g, int nfilters,
			 int64_t *unsure, int64_t unsure_cap, char *err, size_t errlen)
{
	size_t		each = (sizeof(int64_t) + sizeof(gbt_agg_result) * nfilters) * (size_t) g->cap;
	char	   *buf = (char *) malloc(each * (size_t) njobs + 1);
	int64_t		head[GBT_SPLIT_MAX_PARTS] = {0};
	int64_t		nvalued[GBT_SPLIT_MAX_PARTS] = {0};
	int64_t		total = 0,
				merged = 0,
				have = 0;
	int			k,
				failed,
				has_null = 0,
				pass;
	int64_t		work = 0;

	if (buf == NULL)
		return split_fail("grouped aggregate", "out of memory", err, errlen);
	for (k = 0; k < njobs; k++)
	{
		int64_t		r;

		jobs[k].groups.values = (int64_t *) (buf + each * k);
		jobs[k].groups.out = (gbt_agg_result *) (buf + each * k + sizeof(int64_t) * g->cap);
		for (r = 0; r < jobs[k].nranges; r++)
			work += jobs[k].end[r] - jobs[k].start[r];
	}
	failed = run_jobs(e, jobs, njobs, work);
	if (failed >= 0)
	{
		free(buf);
		return job_failed(&jobs[failed], err, errlen);
	}
	g->nunsure = 0;
	g->has_null = 0;
	for (k = 0; k < njobs; k++)
	{
		gbt_groups *pg = &jobs[k].groups;

		g->nunsure += pg->nunsure;
		total += pg->ngroups;
		append_unsure(e, &jobs[k], jobs[k].unsure, pg->nunsure, unsure, unsure_cap,
					  &have);
	}
	for (k = 0; k < njobs; k++)
		if (jobs[k].groups.ngroups > g->cap)
		{
			g->ngroups = total;
			free(buf);
			return 0;
		}
	for (k = 0; k < njobs; k++)
	{
		gbt_groups *pg = &jobs[k].groups;

		nvalued[k] = pg->ngroups - (pg->has_null ? 1 : 0);
		has_null |= pg->has_null;
	}

	/* pass 0 counts the merged groups; pass 1 writes them when they fit */
	for (pass = 0; pass < 2; pass++)
	{
		memset(head, 0, sizeof(head));
		merged = 0;
		for (;;)
		{
			int			best = -1;
			int64_t		v = 0;

			for (k = 0; k < njobs; k++)
				if (head[k] < nvalued[k] &&
					(best < 0 || jobs[k].groups.values[head[k]] < v))
				{
					best = k;
					v = jobs[k].groups.values[head[k]];
				}
			if (best < 0)
				break;
			if (pass == 1)
			{
				int			f;

				g->values[merged] = v;
				memset(&g->out[merged * nfilters], 0, sizeof(gbt_agg_result) * nfilters);
				for (k = 0; k < njobs; k++)
					if (head[k] < nvalued[k] && jobs[k].groups.values[head[k]] == v)
						for (f = 0; f < nfilters; f++)
							gbt_agg_result_combine(&g->out[merged * nfilters + f],
												   &jobs[k].groups.out[head[k] * nfilters + f],
												   e->coltype, e->ncols);
			}
			for (k = 0; k < njobs; k++)
				if (head[k] < nvalued[k] && jobs[k].groups.values[head[k]] == v)
					head[k]++;
			merged++;
		}
		if (has_null)
		{
			if (pass == 1)
			{
				int			f;

				g->values[merged] = 0;
				memset(&g->out[merged * nfilters], 0, sizeof(gbt_agg_result) * nfilters);
				for (k = 0; k < njobs; k++)
					if (jobs[k].groups.has_null)
						for (f = 0; f < nfilters; f++)
							gbt_agg_result_combine(&g->out[merged * nfilters + f],
												   &jobs[k].groups.out[nvalued[k] * nfilters + f],
												   e->coltype, e->ncols);
				g->has_null = 1;
			}
			merged++;
		}
		g->ngroups = merged;
		if (merged > g->cap)
			break;
	}
	free(buf);
	return 0;
}

static int
split_aggregate(gbt_engine *e, const uint8_t *removed, uint64_t removed_version,
				const int64_t *start, const int64_t *end, int64_t nranges,
				const uint8_t *visible, int64_t nvisible, gbt_agg_result *out,
				int64_t *unsure, int64_t unsure_cap, char *err, size_t errlen)
{
	split_call	c = {JOB_AGGREGATE, removed, removed_version, start, end, nranges,
	visible, nvisible, NULL, out, NULL, unsure, unsure_cap};

	return split_call_run(e, &c, err, errlen);
}

static int
split_aggregate_each(gbt_engine *e, const uint8_t *removed, uint64_t removed_version,
					 const int64_t *start, const int64_t *end, int64_t nranges,
					 const uint8_t *visible, int64_t nvisible, gbt_agg_result *out,
					 int64_t *unsure, int64_t unsure_cap, char *err, size_t errlen)
{
	split_call	c = {JOB_EACH, removed, removed_version, start, end, nranges,
	visible, nvisible, NULL, out, NULL, unsure, unsure_cap};

	return split_call_run(e, &c, err, errlen);
}

static int
split_aggregate_filtered(gbt_engine *e, const uint8_t *removed, uint64_t removed_version,
						 const int64_t *start, const int64_t *end, int64_t nranges,
						 const uint8_t *visible, int64_t nvisible,
						 const gbt_pred_set *preds, gbt_agg_result *out,
						 int64_t *unsure, int64_t unsure_cap, char *err, size_t errlen)
{
	split_call	c = {JOB_FILTERED, removed, removed_version, start, end, nranges,
	visible, nvisible, preds, out, NULL, unsure, unsure_cap};

	return split_call_run(e, &c, err, errlen);
}

static int
split_aggregate_grouped(gbt_engine *e, const uint8_t *removed, uint64_t removed_version,
						const int64_t *start, const int64_t *end, int64_t nranges,
						const uint8_t *visible, int64_t nvisible,
						const gbt_pred_set *preds, gbt_groups *g, int64_t *unsure,
						int64_t unsure_cap, char *err, size_t errlen)
{
	split_call	c = {JOB_GROUPED, removed, removed_version, start, end, nranges,
	visible, nvisible, preds, NULL, g, unsure, unsure_cap};

	if (g == NULL || g->cap < 0 || (g->cap > 0 && (g->values == NULL || g->out == NULL)))
		return split_fail("grouped aggregate", "bad groups", err, errlen);
	if (e->inner->aggregate_grouped == NULL)
		return split_fail("grouped aggregate", "not in this engine", err, errlen);
	return split_call_run(e, &c, err, errlen);
}

/*
 * The batch: each item cut into one item a part, all of them one batch of
 * the parts' engine, then each item's parts combined.
 */
static int
split_aggregate_batch(gbt_agg_item *items, int64_t nitems, gbt_engine_par par, int npar)
{
	gbt_agg_item *sub;
	int64_t    *owner;
	int64_t		nsub = 0,
				i,
				total = 0,
				failed = 0;
	const gbt_engine_ops *inner = NULL;
	int64_t   **mem;

	if (nitems <= 0)
		return 0;
	sub = (gbt_agg_item *) calloc((size_t) nitems * GBT_SPLIT_MAX_PARTS, sizeof(gbt_agg_item));
	owner = (int64_t *) malloc(sizeof(int64_t) * (size_t) nitems * GBT_SPLIT_MAX_PARTS);
	mem = (int64_t **) calloc((size_t) nitems * 2, sizeof(int64_t *));
	if (sub == NULL || owner == NULL || mem == NULL)
	{
		for (i = 0; i < nitems; i++)
			items[i].rc = gbt_engine_fail("aggregate", "out of memory", items[i].err,
										  GBT_ITEM_ERRLEN);
		free(sub);
		free(owner);
		free(mem);
		return (int) nitems;
	}
	for (i = 0; i < nitems; i++)
	{
		gbt_agg_item *it = &items[i];
		gbt_engine *e = it->e;
		part_job	jobs[GBT_SPLIT_MAX_PARTS];
		int64_t		off[GBT_SPLIT_MAX_PARTS];
		int64_t    *pieces_owner;
		int64_t		work;
		int			k,
					njobs;
		char	   *buf;
		size_t		each = sizeof(gbt_agg_result) + sizeof(int64_t) * (size_t) it->unsure_cap;

		it->rc = 0;
		it->err[0] = '\0';
		memset(it->out, 0, sizeof(gbt_agg_result));
		inner = e->inner;
		memset(jobs, 0, sizeof(jobs));
		if (cut_ranges(e, it->start, it->end, it->nranges, jobs, &pieces_owner, off,
					   (void **) &mem[2 * i], &work, it->err, GBT_ITEM_ERRLEN) != 0)
		{
			it->rc = 1;
			continue;
		}
		njobs = busy_jobs(jobs, e->nparts, off);
		buf = (char *) calloc(1, each * (size_t) njobs + 1);
		mem[2 * i + 1] = (int64_t *) buf;
		if (buf == NULL)
		{
			it->rc = gbt_engine_fail("aggregate", "out of memory", it->err, GBT_ITEM_ERRLEN);
			continue;
		}
		for (k = 0; k < njobs; k++)
		{
			gbt_agg_item *s = &sub[nsub];

			s->e = e->part[jobs[k].p];
			s->removed = part_bits(it->removed, e->cut[jobs[k].p]);
			s->removed_version = it->removed_version;
			s->start = jobs[k].start;
			s->end = jobs[k].end;
			s->nranges = jobs[k].nranges;
			s->visible = it->visible;
			s->nvisible = it->nvisible;
			s->cols = it->cols;
			s->out = (gbt_agg_result *) (buf + each * k);
			s->unsure = (int64_t *) (buf + each * k + sizeof(gbt_agg_result));
			s->unsure_cap = it->unsure_cap;
			owner[nsub] = i * GBT_SPLIT_MAX_PARTS + jobs[k].p;
			nsub++;
		}
		total += njobs;
	}
	if (nsub > 0)
	{
		(void) inner->aggregate_batch(sub, nsub, par, npar);
		memcpy(items[0].steps_ms, sub[0].steps_ms, sizeof(sub[0].steps_ms));
	}
	{
		int64_t    *have = (int64_t *) calloc((size_t) nitems, sizeof(int64_t));

		for (i = 0; i < nsub; i++)
		{
			gbt_agg_item *it = &items[owner[i] / GBT_SPLIT_MAX_PARTS];
			gbt_engine *e = it->e;
			int			p = (int) (owner[i] % GBT_SPLIT_MAX_PARTS);
			int64_t		j,
						n = sub[i].out->nunsure;

			if (it->rc != 0)
				continue;
			if (sub[i].rc != 0)
			{
				it->rc = sub[i].rc;
				snprintf(it->err, GBT_ITEM_ERRLEN, "part %d: %s", p, sub[i].err);
				continue;
			}
			gbt_agg_result_combine(it->out, sub[i].out, e->coltype, e->ncols);
			if (have == NULL)
				continue;
			if (n > sub[i].unsure_cap)
				n = sub[i].unsure_cap;
			for (j = 0; j < n && have[owner[i] / GBT_SPLIT_MAX_PARTS] < it->unsure_cap; j++)
				it->unsure[have[owner[i] / GBT_SPLIT_MAX_PARTS]++] = sub[i].unsure[j] + e->cut[p];
		}
		if (have == NULL)
			for (i = 0; i < nitems; i++)
				if (items[i].rc == 0 && items[i].out->nunsure > 0)
					items[i].rc = gbt_engine_fail("aggregate", "out of memory", items[i].err,
												  GBT_ITEM_ERRLEN);
		free(have);
	}
	for (i = 0; i < nitems; i++)
	{
		free(mem[2 * i]);
		free(mem[2 * i + 1]);
		if (items[i].rc != 0)
			failed++;
	}
	(void) total;
	free(sub);
	free(owner);
	free(mem);
	return (int) failed;
}

static int
split_tidy(gbt_engine *e, const uint8_t *removed, uint64_t removed_version, int64_t max_chunks)
{
	int			p,
				more = 0;

	for (p = 0; p < e->nparts; p++)
		if (e->inner->tidy(e->part[p], part_bits(removed, e->cut[p]), removed_version,
						   max_chunks) != 0)
			more = 1;
	return more;
}

static int
split_tidy_all(gbt_engine *e, const uint8_t *removed, uint64_t removed_version,
			   gbt_piece_runner run, int npieces)
{
	int			p,
				more = 0;

	for (p = 0; p < e->nparts; p++)
		if (e->inner->tidy_all(e->part[p], part_bits(removed, e->cut[p]), removed_version,
							   run, npieces) != 0)
			more = 1;
	return more;
}

static void
split_note_removed(gbt_engine *e, const uint8_t *removed, uint64_t from, uint64_t to,
				   const int64_t *changed, int64_t nchanged)
{
	int64_t    *local = (int64_t *) malloc(sizeof(int64_t) * (size_t) (nchanged + 1));
	int			p;

	for (p = 0; p < e->nparts; p++)
	{
		int64_t		n = 0,
					i;

		if (local == NULL)
		{
			/* no list: the part compares the whole bitmap at its next call */
			continue;
		}
		for (i = 0; i < nchanged; i++)
			if (changed[i] >= e->cut[p] && changed[i] < e->cut[p + 1])
				local[n++] = changed[i] - e->cut[p];
		e->inner->note_removed(e->part[p], part_bits(removed, e->cut[p]), from, to, local, n);
	}
	free(local);
}

/* A memory count of the parts' engines, added up. */
static size_t
sum_parts(const gbt_engine *e, size_t (*count) (const gbt_engine *))
{
	size_t		b = 0;
	int			p;

	for (p = 0; p < e->nparts; p++)
		b += count(e->part[p]);
	return b;
}

static size_t
split_bytes(const gbt_engine *e)
{
	return sum_parts(e, e->inner->bytes);
}

static size_t
split_host_bytes(const gbt_engine *e)
{
	return sum_parts(e, e->inner->host_bytes);
}

static size_t
split_scratch_bytes(const gbt_engine *e)
{
	size_t		b = sum_parts(e, e->inner->scratch_bytes);
	int			i;

	for (i = 0; i < SCRATCH_SLOTS; i++)
		b += e->scratch_size[i];
	return b;
}

static void
split_trim(gbt_engine *e)
{
	int			p;

	forget_parts(e);
	for (p = 0; p < e->nparts; p++)
		e->inner->trim(e->part[p]);
	free_scratch(e);
}

/* The first part's device: where the whole's first keys are. */
static int
split_device(const gbt_engine *e)
{
	return e->inner->device(e->part[0]);
}

static size_t
split_drop_idle_copies(gbt_engine *e, int64_t idle_ms)
{
	size_t		b = 0;
	int			p;

	for (p = 0; p < e->nparts; p++)
		b += e->inner->drop_idle_copies(e->part[p], idle_ms);
	return b;
}

static const gbt_engine_ops split_ops = {
	split_usable,
	split_build,
	split_free,
	split_ranges,
	split_sort_unique,
	split_aggregate,
	split_aggregate_each,
	split_aggregate_batch,
	split_aggregate_filtered,
	split_aggregate_grouped,
	split_tidy,
	split_bytes,
	split_host_bytes,
	split_scratch_bytes,
	split_trim,
	split_device,
	split_tidy_all,
	split_note_removed,
	split_drop_idle_copies
};

const gbt_engine_ops *
gbt_engine_split_ops(void)
{
	return &split_ops;
}
