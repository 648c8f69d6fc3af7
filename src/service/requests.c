/*
 * requests.c
 *	  The GPU service's answers: one function per request kind
 *	  (protocol.h).
 */
#include "postgres.h"

#include <sys/resource.h>

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/lwlock.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "agg_state.h"
#include "groupby.h"
#include "service.h"
#include "threads.h"
#include "settings.h"
#include "snapview.h"

void
gbt_reply(GbtRequest *req, GbtReplyStatus status, const char *message)
{
	req->hdr.status = status;
	if (message != NULL)
		strlcpy(req->hdr.message, message, GBT_ERRMSG_LEN);
}

/*
 * DUMP: the next nitems live entries after the cursor, in (key, TID) order
 * (protocol.h); at most GBT_DUMP_MAX, tiny in tests so that small mirrors
 * are read in many chunks too.
 */
#ifndef GBT_DUMP_MAX
#define GBT_DUMP_MAX PG_INT64_MAX
#endif

static void
handle_dump(GbtRequest *req)
{
	ServiceMirror *sm = gbt_current_mirror(&req->hdr.key, req->hdr.generation);
	GbtEntries	out;
	const GbtDumpCursor *after;
	int64		want;

	if (sm == NULL)
	{
		gbt_reply(req, GBT_REPLY_NO_MIRROR, NULL);
		return;
	}
	if (req->body.dump.nitems <= 0 ||
		req->body.dump.ncols < 0 || req->body.dump.ncols > GBT_MAX_COLS ||
		MAXALIGN(sizeof(GbtRequest)) +
		gbt_entries_flat_size(req->body.dump.ncols, req->body.dump.nitems) +
		(req->body.dump.verdicts ? req->body.dump.nitems : 0) > req->hdr.capacity)
	{
		gbt_reply(req, GBT_REPLY_ERROR, "bad DUMP request");
		return;
	}
	gbt_entries_unflatten(&out, req->body.dump.ncols, req->body.dump.nitems,
						  GBT_REQUEST_DATA(req));
	out.n = 0;
	after = req->body.dump.started ? &req->body.dump.cursor : NULL;
	want = Min(req->body.dump.nitems, GBT_DUMP_MAX);
	if (req->body.dump.verdicts)
	{
		SnapshotData now = {0};
		GbtSnapView view;

		/* Every transaction that has ended, and none that runs. */
		now.snapshot_type = SNAPSHOT_MVCC;
		now.xmin = now.xmax = ReadNextTransactionId();
		gbt_snapview_init(&view, &now, req->body.dump.topxid, true, NULL, 0);
		req->hdr.nresults = gbt_mirror_read(sm->mirror, after, want,
											&out, &view, gbt_dump_reply_verdicts(req));
		gbt_snapview_free(&view);
	}
	else
		req->hdr.nresults = gbt_mirror_read(sm->mirror, after, want,
											&out, NULL, NULL);
	req->body.dump.done = req->hdr.nresults < want;
	if (out.n > 0)
	{
		req->body.dump.started = true;
		req->body.dump.cursor.key = out.keys[out.n - 1];
		req->body.dump.cursor.tid = out.tids[out.n - 1];
	}
	req->body.dump.columns = *gbt_mirror_columns(sm->mirror);
	req->body.dump.mirror_id = sm->lineage;
	gbt_reply(req, GBT_REPLY_OK, NULL);
}

/* VOUCH: see protocol.h. */
static void
handle_vouch(GbtRequest *req)
{
	ServiceMirror *sm = gbt_current_mirror(&req->hdr.key, req->hdr.generation);

	if (sm == NULL)
	{
		gbt_reply(req, GBT_REPLY_NO_MIRROR, NULL);
		return;
	}
	/* A new tree being made would not learn of it. */
	gbt_rebuild_cancel(sm);
	gbt_mirror_vouch(sm->mirror, (const uint8 *) GBT_REQUEST_DATA(req),
					 req->body.vouch.nvisible);
	gbt_reply(req, GBT_REPLY_OK, NULL);
}

/* AGG_PREPARE: which mirror, and up to where the log is in it. */
static void
handle_agg_prepare(GbtRequest *req)
{
	ServiceMirror *sm = gbt_current_mirror(&req->hdr.key, req->hdr.generation);

	if (sm == NULL)
	{
		gbt_reply(req, GBT_REPLY_NO_MIRROR, NULL);
		return;
	}
	req->body.agg_prepare.mirror_id = sm->id;
	req->body.agg_prepare.log_bound = gbt_shared->log.applied;	/* applied this round */
	req->body.agg_prepare.columns = *gbt_mirror_columns(sm->mirror);
	req->body.agg_prepare.has_keys =
		gbt_mirror_key_extent(sm->mirror, &req->body.agg_prepare.key_min,
							  &req->body.agg_prepare.key_max);
	gbt_reply(req, GBT_REPLY_OK, NULL);
}

/*
 * AGG (protocol.h): the next slice of at most max of its ranges, after
 * those answered already (t->next), into the reply so far; first, unsorted
 * points are sorted, a step of its own when sliced.  True when the request
 * is answered.  Each slice is answered as the whole request would be at
 * that point: with the mirror it named (the same mirror_id, or NO_MIRROR),
 * the entries logged before log_bound, and the query's snapshot, whose
 * verdicts no change applied meanwhile can alter (see shmem.h).
 */
static bool
agg_slice(TakenRequest *t, int64 max)
{
	GbtRequest *req = t->req;
	ServiceMirror *sm;
	GbtAggRequest *agg = &req->body.agg;
	uint64	   *lo = (uint64 *) GBT_REQUEST_DATA(req);
	uint64	   *hi = agg->points ? lo : lo + agg->nranges;
	uint8	   *visible = (uint8 *) (hi + agg->nranges);
	SnapshotData snap;
	GbtSnapView view;
	GbtEntries	unsure;
	GbtAggResult part;
	GbtAggSteps steps;
	char		err[GBT_ERRMSG_LEN];
	bool		ok;
	int64		n;
	instr_time	t0,
				t1;
	struct rusage ru0,
				ru1;

	if (gbt_agg_refused(t, &sm))
		return true;

	getrusage(RUSAGE_SELF, &ru0);
	INSTR_TIME_SET_CURRENT(t0);
	if (t->pass != NULL)
	{
		/* sorted and its tree's part done in a lane (run_lanes()) */
		agg->nkeys = t->pass->nranges;
		t->sorted = true;
		req->hdr.device_ms += t->pass->sort_ms + t->pass->tree_ms;
	}
	if (t->next == 0 && !t->sorted)
	{
		agg->nkeys = agg->nranges;
		if (agg->unsorted && agg->points &&
			!gbt_mirror_sort_unique(sm->mirror, lo, agg->nranges,
									agg->map ? gbt_agg_reply_map(req) : NULL,
									&agg->nkeys, err, sizeof(err)))
		{
			gbt_reply(req, GBT_REPLY_ERROR, err);
			return true;
		}
		t->sorted = true;
		if (t->sliced && agg->unsorted && agg->points)
		{
			INSTR_TIME_SET_CURRENT(t1);
			INSTR_TIME_SUBTRACT(t1, t0);
			req->hdr.device_ms += INSTR_TIME_GET_MILLISEC(t1);
			return false;
		}
	}

	/* The reply so far: its entries, its aggregate in agg->agg. */
	gbt_entries_unflatten(&unsure, agg->ncols, agg->unsure_cap, gbt_agg_reply_unsure(req));
	unsure.n = t->pass != NULL ? t->pass->list->n : req->hdr.nresults;
	memset(&part, 0, sizeof(part));
	n = Min(max, agg->nkeys - t->next);
	if (agg->group_col >= 0)
		n = agg->nkeys;			/* groups span the ranges: one step */

	gbt_agg_snapshot(req, &snap);
	gbt_snapview_init(&view, &snap, agg->topxid, agg->stamps, visible, agg->nvisible);
	view.no_extremes = agg->no_extremes;
	if (agg->nfilters > 0)
	{
		gbt_pred_set preds;
		gbt_valtype valtypes[GBT_MAX_COLS];
		gbt_pred   *progs = gbt_agg_request_preds(req);
		int64		slots = agg->grouped ? n * agg->nfilters : agg->nfilters;
		GbtAggResult *outs = gbt_agg_reply_groups(req) +
			(agg->grouped ? t->next * agg->nfilters : 0);
		int64		r;
		int			f;

		memset(&preds, 0, sizeof(preds));
		preds.where = agg->where ? progs++ : NULL;
		preds.nfilters = agg->nfilters;
		for (f = 0; f < agg->nfilters; f++)
			preds.filter[f] = progs++;
		preds.list = (const gbt_pred_value *) ((char *) gbt_agg_request_preds(req) +
											   MAXALIGN(sizeof(gbt_pred) *
														(agg->where + agg->nfilters)));
		preds.nlist = agg->nlist;
		for (f = 0; f < GBT_MAX_COLS; f++)
			valtypes[f] = gbt_mirror_columns(sm->mirror)->type[f] == GBT_COL_FLOAT8 ?
				GBT_VAL_FLOAT8 : GBT_VAL_INT64;
		ok = gbt_pred_set_check(&preds, agg->ncols, valtypes, err, sizeof(err)) == 0;
		if (ok && agg->group_col >= 0)
		{
			gbt_groups	g;

			memset(&g, 0, sizeof(g));
			g.gcol = agg->group_col;
			g.cap = agg->group_cap;
			g.values = (int64_t *) gbt_agg_reply_group_values(req);
			g.out = outs;
			ok = gbt_mirror_aggregate_grouped(sm->mirror, lo, hi, n, &view,
											  agg->log_bound, &preds, &g, &unsure,
											  agg->unsure_cap, &part.nunsure, &steps,
											  err, sizeof(err));
			agg->ngroups = g.ngroups;
			agg->group_null = g.has_null;
			slots = g.ngroups <= g.cap ? g.ngroups * agg->nfilters : 0;
		}
		else if (ok && !agg->grouped && t->next > 0)
		{
			/* a slice after the first: into the results so far */
			GbtAggResult *fresh = palloc0(sizeof(GbtAggResult) * agg->nfilters);

			ok = gbt_mirror_aggregate_filtered(sm->mirror, lo + t->next, hi + t->next, n,
											   &view, agg->log_bound, &preds, false, fresh,
											   &unsure, agg->unsure_cap, &part.nunsure,
											   &steps, err, sizeof(err));
			for (f = 0; ok && f < agg->nfilters; f++)
				gbt_agg_combine(&outs[f], &fresh[f], gbt_mirror_columns(sm->mirror));
		}
		else if (ok)
			ok = gbt_mirror_aggregate_filtered(sm->mirror, lo + t->next, hi + t->next, n,
											   &view, agg->log_bound, &preds, agg->grouped,
											   outs, &unsure, agg->unsure_cap,
											   &part.nunsure, &steps, err, sizeof(err));
		/* the total: filter 0's entries, for EXPLAIN */
		for (r = 0; ok && r < slots; r += agg->nfilters)
			part.count += outs[r].count;
		if (!agg->grouped && t->next > 0)
			part.count = 0;		/* counted with the first slice's results */
	}
	else if (agg->grouped)
	{
		GbtAggResult *groups = gbt_agg_reply_groups(req) + t->next;
		int64		r;

		ok = gbt_mirror_aggregate_each(sm->mirror, lo + t->next, hi + t->next, n, &view,
									   agg->log_bound, groups, &unsure, agg->unsure_cap,
									   &steps, err, sizeof(err));
		for (r = 0; ok && r < n; r++)
			gbt_agg_combine(&part, &groups[r], gbt_mirror_columns(sm->mirror));
	}
	else if (t->pass != NULL)
		ok = gbt_tree_pass_finish(t->pass, &view, agg->log_bound, &part, &unsure, &steps,
								  err, sizeof(err));
	else
		ok = gbt_mirror_aggregate(sm->mirror, lo + t->next, hi + t->next, n, &view,
								  agg->log_bound, &part, &unsure, agg->unsure_cap,
								  agg->rows ? gbt_agg_reply_verdicts(req) : NULL,
								  &steps, err, sizeof(err));
	gbt_snapview_free(&view);
	if (!ok)
	{
		gbt_reply(req, GBT_REPLY_ERROR, err);
		return true;
	}
	gbt_agg_combine(&agg->agg, &part, gbt_mirror_columns(sm->mirror));
	t->next += n;
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	req->hdr.nresults = unsure.n;
	req->hdr.device_ms += INSTR_TIME_GET_MILLISEC(t1);
	if (INSTR_TIME_GET_MILLISEC(t1) >= GBT_SLOW_STEP_MS)
	{
		/* CPU time against wall time: is the service short of a core? */
		getrusage(RUSAGE_SELF, &ru1);
		elog(DEBUG1, "gpubtree service: aggregate (index %u, %lld ranges, %lld stamped and delta entries): %.1f ms (CPU %.1f ms, %ld times preempted): tree %.1f ms (positions %.1f ms), %lld stamped and %lld delta entries %.1f ms in %d threads (%lld decided after them, %.1f ms)",
			 sm->key.indexrelid, (long long) n,
			 (long long) gbt_mirror_stamped(sm->mirror), INSTR_TIME_GET_MILLISEC(t1),
			 (ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec + ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) * 1000.0 +
			 (ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec + ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1000.0,
			 ru1.ru_nivcsw - ru0.ru_nivcsw,
			 steps.tree_ms, steps.positions_ms, (long long) steps.nstamped,
			 (long long) steps.ndelta, steps.walk_ms, steps.nthreads,
			 (long long) steps.nlater, steps.later_ms);
	}
	sm->last_used = GetCurrentTimestamp();
	if (t->next < agg->nkeys)
		return false;
	req->hdr.on_gpu = gbt_mirror_on_gpu(sm->mirror);
	agg->columns = *gbt_mirror_columns(sm->mirror);
	sm->hits++;
	gbt_reply(req, GBT_REPLY_OK, NULL);
	return true;
}

/*
 * REMOVE (VACUUM's sweep): take the dead TIDs out of the mirror the sweep
 * read (or, given VACUUM's whole dead list, out of the current one), and
 * move it to a new generation, which makes any export that began before
 * unusable (it may hold dead entries: VACUUM sends one more REMOVE, of no
 * TIDs, once nbtree's pass is over).  A mirror that
 * is not the one swept, or that missed a generation meanwhile, is dropped
 * instead.
 */
static void
handle_remove(GbtRequest *req)
{
	ServiceMirror *sm = gbt_find_mirror(&req->hdr.key);
	const ItemPointerData *dead = (const ItemPointerData *) GBT_REQUEST_DATA(req);
	uint64		before = gbt_generation(req->hdr.key.dbid, req->hdr.key.indexrelid);
	uint64		after;

	if (sm != NULL && ((!req->body.remove.all_dead && sm->lineage != req->body.remove.mirror_id) ||
					   sm->generation != before))
	{
		gbt_drop_mirror(sm);
		sm = NULL;
	}
	/* None: VACUUM's second REMOVE, after nbtree's pass: the generation only. */
	if (sm != NULL && req->body.remove.ntids > 0)
	{
		/* A new tree being made may hold copies of them. */
		gbt_rebuild_cancel(sm);
		req->hdr.nresults = gbt_mirror_remove(sm->mirror, dead, req->body.remove.ntids);
	}
	after = gbt_invalidate_and_get(req->hdr.key.dbid, req->hdr.key.indexrelid);
	if (sm != NULL)
	{
		if (after == before + 1)
			sm->generation = after;
		else
			gbt_drop_mirror(sm);
	}
	gbt_reply(req, GBT_REPLY_OK, NULL);
}

/*
 * Are a SCAN request's ranges [from, from + n) sorted and disjoint, and
 * after the one before them?  Overlapping ranges would return their common
 * entries more than once.
 */
static bool
scan_ranges_ok(const GbtRequest *req, int64 from, int64 n)
{
	const uint64 *lo = (const uint64 *) GBT_REQUEST_DATA(req);
	const uint64 *hi = lo + req->body.scan.nranges;
	int64		r;

	if (from < 0 || n < 0 || from + n > req->body.scan.nranges)
		return false;
	for (r = from; r < from + n; r++)
		if (lo[r] > hi[r] || (r > 0 && lo[r] <= hi[r - 1]))
			return false;
	return true;
}

/* Has the backend stopped waiting for this request? */
bool
gbt_request_abandoned(const TakenRequest *t)
{
	return pg_atomic_read_u32(&gbt_shared->slots[t->slotno].state) == GBT_SLOT_ABANDONED;
}

/*
 * Add the TIDs of a SCAN request's ranges lo[r], hi[r] (tree positions
 * start[r], end[r]), r < n, to its answer: counted in nresults, and copied
 * while all counted so far fit (else the answer is NO_ROOM with the count).
 */
static void
scan_collect(ServiceMirror *sm, GbtRequest *req, const uint64 *lo, const uint64 *hi,
			 const int64 *start, const int64 *end, int64 n)
{
	Size		used = MAXALIGN(sizeof(GbtRequest)) +
		MAXALIGN(2 * sizeof(uint64) * req->body.scan.nranges);
	ItemPointerData *out = (ItemPointerData *) ((char *) req + used);
	int64		room = (req->hdr.capacity - used) / sizeof(ItemPointerData);
	int64		r;

	for (r = 0; r < n; r++)
	{
		int64		count = gbt_mirror_range_count(sm->mirror, lo[r], hi[r],
												   start[r], end[r]);

		if (req->hdr.nresults + count <= room)
			(void) gbt_mirror_range_tids(sm->mirror, lo[r], hi[r], start[r], end[r],
										 out + req->hdr.nresults);
		req->hdr.nresults += count;
	}
	req->hdr.on_gpu = gbt_mirror_on_gpu(sm->mirror);
	gbt_reply(req, req->hdr.nresults > room ? GBT_REPLY_NO_ROOM : GBT_REPLY_OK, NULL);
}

/*
 * Answer every SCAN request in taken[] that asks mirror sm, with one batched
 * engine call over all their ranges.
 */
static void
handle_scans(ServiceMirror *sm, TakenRequest *taken, int ntaken)
{
	int64		nranges = 0;
	int64	   *nr = palloc(sizeof(int64) * ntaken);
	uint64	   *lo;
	uint64	   *hi;
	int64	   *start;
	int64	   *end;
	int64		off;
	int			i;
	char		err[GBT_ERRMSG_LEN];
	instr_time	t0,
				t1;
	bool		ok;

	/* A refused request takes no part in the batch (nr[i] = -1). */
	for (i = 0; i < ntaken; i++)
	{
		nr[i] = scan_ranges_ok(taken[i].req, 0, taken[i].req->body.scan.nranges) ?
			taken[i].req->body.scan.nranges : -1;
		if (nr[i] < 0)
			gbt_reply(taken[i].req, GBT_REPLY_ERROR, "scan ranges are not sorted and disjoint");
		else
			nranges += nr[i];
	}

	lo = palloc(sizeof(uint64) * Max(nranges, 1));
	hi = palloc(sizeof(uint64) * Max(nranges, 1));
	start = palloc(sizeof(int64) * Max(nranges, 1));
	end = palloc(sizeof(int64) * Max(nranges, 1));
	off = 0;
	for (i = 0; i < ntaken; i++)
	{
		const uint64 *rlo = (const uint64 *) GBT_REQUEST_DATA(taken[i].req);

		if (nr[i] < 0)
			continue;
		memcpy(lo + off, rlo, sizeof(uint64) * nr[i]);
		memcpy(hi + off, rlo + nr[i], sizeof(uint64) * nr[i]);
		off += nr[i];
	}

	INSTR_TIME_SET_CURRENT(t0);
	ok = gbt_mirror_ranges(sm->mirror, lo, hi, nranges, start, end,
						   err, sizeof(err));
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);

	off = 0;
	for (i = 0; i < ntaken; i++)
	{
		GbtRequest *req = taken[i].req;

		if (nr[i] < 0)
			continue;
		if (!ok)
			gbt_reply(req, GBT_REPLY_ERROR, err);
		else if (gbt_request_abandoned(&taken[i]))
			;					/* nobody will read it: skip the copying */
		else
		{
			req->hdr.device_ms = INSTR_TIME_GET_MILLISEC(t1);
			scan_collect(sm, req, lo + off, hi + off, start + off, end + off, nr[i]);
		}
		off += nr[i];
	}
	sm->hits += ntaken;
	sm->last_used = GetCurrentTimestamp();

	pfree(nr);
	pfree(lo);
	pfree(hi);
	pfree(start);
	pfree(end);
}

/*
 * SCAN: the next slice of at most max of its ranges (see agg_slice()).
 * True when the request is answered.
 */
static bool
scan_slice(TakenRequest *t, int64 max)
{
	GbtRequest *req = t->req;
	ServiceMirror *sm = gbt_current_mirror(&req->hdr.key, req->hdr.generation);
	int64		nranges = req->body.scan.nranges;
	const uint64 *lo = (const uint64 *) GBT_REQUEST_DATA(req) + t->next;
	const uint64 *hi = lo + nranges;
	int64		n = Min(max, nranges - t->next);
	int64	   *start;
	int64	   *end;
	char		err[GBT_ERRMSG_LEN];
	instr_time	t0,
				t1;

	if (sm == NULL)
	{
		gbt_reply(req, GBT_REPLY_NO_MIRROR, NULL);
		return true;
	}
	if (!scan_ranges_ok(req, t->next, n))
	{
		gbt_reply(req, GBT_REPLY_ERROR, "scan ranges are not sorted and disjoint");
		return true;
	}
	start = palloc(sizeof(int64) * Max(n, 1));
	end = palloc(sizeof(int64) * Max(n, 1));
	INSTR_TIME_SET_CURRENT(t0);
	if (!gbt_mirror_ranges(sm->mirror, lo, hi, n, start, end, err, sizeof(err)))
	{
		gbt_reply(req, GBT_REPLY_ERROR, err);
		return true;
	}
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	req->hdr.device_ms += INSTR_TIME_GET_MILLISEC(t1);
	scan_collect(sm, req, lo, hi, start, end, n);
	pfree(start);
	pfree(end);
	t->next += n;
	sm->last_used = GetCurrentTimestamp();
	if (t->next < nranges)
		return false;
	sm->hits++;
	return true;
}

/* Does the request ask about more ranges than one slice? */
static bool
request_sliced(const GbtRequest *req)
{
	return (req->hdr.kind == GBT_REQ_AGG && req->body.agg.nranges > GBT_SLICE_KEYS) ||
		(req->hdr.kind == GBT_REQ_SCAN && req->body.scan.nranges > GBT_SLICE_KEYS);
}

/*
 * The next slice of a request gbt_answer_requests() marked sliced: true
 * when it is answered (then its reply is complete).
 */
bool
gbt_answer_slice(TakenRequest *t)
{
	if (t->req->hdr.kind == GBT_REQ_AGG)
		return agg_slice(t, GBT_SLICE_KEYS);
	return scan_slice(t, GBT_SLICE_KEYS);
}

/*
 * Rounds whose AGGs ran in several lanes at once, for the DEBUG1 summary
 * (gbt_note_lanes(), called with the worker's own: NULL when it logs none,
 * to start again).
 */
static int64 lane_rounds = 0;
static int64 lane_passes = 0;
static int	lane_max = 0;
static double lane_wall_ms = 0;	/* the lanes' time, start to the last */
static double lane_pass_ms = 0; /* their passes' time, all lanes' */

void
gbt_note_lanes(StringInfo buf)
{
	if (buf != NULL && lane_rounds > 0)
		appendStringInfo(buf, "; %lld rounds in lanes (%lld aggregates, at most %d devices at once), ms a round: lanes %.3f, their passes %.3f",
						 (long long) lane_rounds, (long long) lane_passes, lane_max,
						 lane_wall_ms / lane_rounds, lane_pass_ms / lane_rounds);
	lane_rounds = lane_passes = lane_max = 0;
	lane_wall_ms = lane_pass_ms = 0;
}

/* The tree passes of one device's AGGs, in turn. */
typedef struct Lane
{
	int			device;
	int			npasses;
	GbtTreePass **passes;
} Lane;

static void
lane_run(void *arg)
{
	Lane	   *lane = (Lane *) arg;
	int			i;

	for (i = 0; i < lane->npasses; i++)
		gbt_tree_pass_run(lane->passes[i]);
}

/*
 * The round's AGGs answered whole, not in the batch: the plain ones (no
 * filter, no groups) first have their tree's part (their points sorted,
 * their positions, the engine's aggregate or listing) run in lanes, one a
 * device, at once, so that every GPU of the host works at the same time;
 * then agg_slice() finishes each here, as it answers the others.
 */
static void
answer_whole_aggs(TakenRequest *taken, int ntaken, bool *done)
{
	GbtTreePass *passes = palloc(sizeof(GbtTreePass) * Max(ntaken, 1));
	GbtEntries *lists = palloc(sizeof(GbtEntries) * Max(ntaken, 1));
	Lane		lanes[GBT_THREADS_MAX];
	instr_time	t0,
				t1;
	int			nlanes = 0;
	int			npasses = 0;
	int			i;
	int			l;

	for (i = 0; i < ntaken; i++)
	{
		TakenRequest *t = &taken[i];
		GbtRequest *req = t->req;
		GbtAggRequest *agg;
		ServiceMirror *sm;
		uint64	   *lo;
		uint64	   *hi;

		if (done[i] || req->hdr.kind != GBT_REQ_AGG)
			continue;
		agg = &req->body.agg;
		if (agg->nfilters > 0 || agg->grouped || agg->group_col >= 0)
			continue;
		/* nobody waits for an abandoned one (finish() frees its slot) */
		if (gbt_request_abandoned(t) || gbt_agg_refused(t, &sm))
		{
			done[i] = true;
			continue;
		}
		lo = (uint64 *) GBT_REQUEST_DATA(req);
		hi = agg->points ? lo : lo + agg->nranges;
		gbt_entries_unflatten(&lists[i], agg->ncols, agg->unsure_cap,
							  gbt_agg_reply_unsure(req));
		lists[i].n = req->hdr.nresults;
		gbt_tree_pass_init(&passes[i], sm->mirror, lo, hi, agg->nranges,
						   agg->unsorted && agg->points,
						   agg->map ? gbt_agg_reply_map(req) : NULL, agg->stamps,
						   (uint8 *) (hi + agg->nranges), agg->nvisible, &lists[i],
						   agg->unsure_cap, agg->rows ? gbt_agg_reply_verdicts(req) : NULL);
		t->pass = &passes[i];

		/* its device's lane, in the order taken (devices past the max share) */
		for (l = 0; l < nlanes && lanes[l].device != sm->device % GBT_THREADS_MAX; l++)
			;
		if (l == nlanes)
		{
			lanes[l].device = sm->device % GBT_THREADS_MAX;
			lanes[l].npasses = 0;
			lanes[l].passes = palloc(sizeof(GbtTreePass *) * ntaken);
			nlanes++;
		}
		lanes[l].passes[lanes[l].npasses++] = t->pass;
		npasses++;
	}

	INSTR_TIME_SET_CURRENT(t0);
	gbt_run_pieces(lane_run, lanes, sizeof(Lane), nlanes);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	if (nlanes > 1)
	{
		lane_rounds++;
		lane_passes += npasses;
		lane_max = Max(lane_max, nlanes);
		lane_wall_ms += INSTR_TIME_GET_MILLISEC(t1);
	}
	for (l = 0; l < nlanes; l++)
	{
		for (i = 0; nlanes > 1 && i < lanes[l].npasses; i++)
			lane_pass_ms += lanes[l].passes[i]->sort_ms + lanes[l].passes[i]->tree_ms;
		pfree(lanes[l].passes);
	}

	for (i = 0; i < ntaken; i++)
	{
		if (done[i] || taken[i].req->hdr.kind != GBT_REQ_AGG)
			continue;
		(void) agg_slice(&taken[i], taken[i].req->body.agg.nranges);
		taken[i].pass = NULL;
		done[i] = true;
	}
	pfree(passes);
	pfree(lists);
}

/*
 * Answer the requests of a round (builds are the worker's, one at a time:
 * gbt_build_start()); the scans, all of one mirror in one call.
 * Requests of more than GBT_SLICE_KEYS ranges are only marked sliced: the
 * worker answers them a slice at a time, after the others.
 */
void
gbt_answer_requests(TakenRequest *taken, int ntaken)
{
	TakenRequest *group = palloc(sizeof(TakenRequest) * Max(ntaken, 1));
	bool	   *done = palloc0(sizeof(bool) * Max(ntaken, 1));
	int			i;
	int			j;

	for (i = 0; i < ntaken; i++)
	{
		GbtRequest *req = taken[i].req;

		if (req == NULL)
			done[i] = true;
		else if (request_sliced(req))
			done[i] = taken[i].sliced = true;	/* the worker's, slice by slice */
		else if (req->hdr.kind == GBT_REQ_BUILD)
			taken[i].build = true;	/* the worker's: gbt_build_start() */
		else if (req->hdr.kind == GBT_REQ_DUMP)
			handle_dump(req);
		else if (req->hdr.kind == GBT_REQ_REMOVE)
			handle_remove(req);
		else if (req->hdr.kind == GBT_REQ_AGG_PREPARE)
			handle_agg_prepare(req);
		else if (req->hdr.kind == GBT_REQ_AGG && gbt_agg_batchable(&taken[i]))
			continue;			/* gbt_answer_aggs(), below */
		else if (req->hdr.kind == GBT_REQ_AGG)
			continue;			/* answer_whole_aggs(), below */
		else if (req->hdr.kind == GBT_REQ_VOUCH)
			handle_vouch(req);
		else
			continue;
		done[i] = true;
	}

	/* The plain aggregates, all at once (agg_requests.c); then the others. */
	gbt_answer_aggs(taken, ntaken, done);
	answer_whole_aggs(taken, ntaken, done);

	/* Scans: all requests of this round for one mirror go in one call. */
	for (i = 0; i < ntaken; i++)
	{
		GbtRequest *req = taken[i].req;
		ServiceMirror *sm;
		int			ngroup = 0;

		if (done[i])
			continue;
		sm = gbt_current_mirror(&req->hdr.key, req->hdr.generation);
		if (sm == NULL)
		{
			gbt_reply(req, GBT_REPLY_NO_MIRROR, NULL);
			done[i] = true;
			continue;
		}
		for (j = i; j < ntaken; j++)
		{
			if (!done[j] && taken[j].req->hdr.generation <= sm->generation &&
				memcmp(&taken[j].req->hdr.key, &sm->key, sizeof(GbtMirrorKey)) == 0)
			{
				group[ngroup++] = taken[j];
				done[j] = true;
			}
		}
		handle_scans(sm, group, ngroup);
	}

	pfree(group);
	pfree(done);
}
