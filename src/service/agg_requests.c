/*
 * agg_requests.c
 *	  The GPU service's AGG requests: the checks every slice passes
 *	  (gbt_agg_refused()), and the round's plain aggregates answered
 *	  together (gbt_answer_aggs(): one engine call for all, the host's
 *	  share in threads; mirror_batch.c).  The other kinds of AGG (grouped,
 *	  filtered, a lookup's rows, sorted keys) and the sliced ones are
 *	  requests.c's agg_slice().
 */
#include "postgres.h"

#include "portability/instr_time.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "agg_state.h"
#include "predicate.h"
#include "service.h"

/*
 * An AGG that names no mirror (protocol.h): the current one, with the log
 * as applied this round, as AGG_PREPARE would answer.  Taken only where the
 * stamps decide without the visibility map, which the backend reads after
 * that answer (exec_request.c); else the reply is that answer (PREPARED).
 */
static bool
prepare_here(GbtRequest *req, ServiceMirror *sm)
{
	GbtAggRequest *agg = &req->body.agg;

	agg->mirror_id = sm->id;
	agg->log_bound = gbt_shared->log.applied;	/* applied this round */
	agg->columns = *gbt_mirror_columns(sm->mirror);
	if (agg->stamps && gbt_mirror_stamps_decide_all(sm->mirror) &&
		agg->ncols == agg->columns.ncols)
		return true;
	gbt_reply(req, GBT_REPLY_PREPARED, NULL);
	return false;
}

/* The most ranges, visibility bits or listed entries one AGG may carry. */
#define REQUEST_COUNT_MAX ((int64) 1 << 40)

/*
 * The checks of an AGG's every slice: false when it may be answered, with
 * its mirror in *smp; true when it is answered already (NO_MIRROR, an
 * error, or PREPARED for an AGG that named no mirror).
 */
bool
gbt_agg_refused(TakenRequest *t, ServiceMirror **smp)
{
	GbtRequest *req = t->req;
	ServiceMirror *sm = gbt_current_mirror(&req->hdr.key, req->hdr.generation);
	GbtAggRequest *agg = &req->body.agg;

	*smp = sm;
	if (sm == NULL || (agg->mirror_id != 0 && sm->id != agg->mirror_id))
	{
		gbt_reply(req, GBT_REPLY_NO_MIRROR, NULL);
		return true;
	}
	if (agg->mirror_id == 0 && !prepare_here(req, sm))
		return true;
	if (agg->ncols < 0 || agg->ncols > GBT_MAX_COLS)
	{
		gbt_reply(req, GBT_REPLY_ERROR, "bad column count");
		return true;
	}
	if ((agg->grouped || agg->where || agg->nfilters > 0) && (agg->rows || agg->unsorted))
	{
		gbt_reply(req, GBT_REPLY_ERROR, "grouped or filtered ranges must be sorted and aggregated");
		return true;
	}
	if (agg->nfilters < 0 || agg->nfilters > GBT_PRED_MAX_FILTERS || agg->nlist < 0 ||
		agg->nlist > REQUEST_COUNT_MAX || (agg->where && agg->nfilters == 0))
	{
		gbt_reply(req, GBT_REPLY_ERROR, "bad program count");
		return true;
	}
	if (agg->group_col >= 0 &&
		(agg->nfilters == 0 || agg->grouped || agg->group_col >= agg->ncols ||
		 gbt_mirror_columns(sm->mirror)->type[agg->group_col] != GBT_COL_INT64 ||
		 agg->group_cap < 1 || agg->group_cap > REQUEST_COUNT_MAX))
	{
		gbt_reply(req, GBT_REPLY_ERROR, "bad grouping column");
		return true;
	}
	/* Counts past 2^40 would make the sizes below overflow. */
	if (agg->nranges < 0 || agg->nvisible < 0 || agg->unsure_cap < 0 ||
		agg->xcnt < 0 || agg->subxcnt < 0 ||
		agg->nranges > REQUEST_COUNT_MAX || agg->nvisible > REQUEST_COUNT_MAX ||
		agg->unsure_cap > REQUEST_COUNT_MAX ||
		MAXALIGN(sizeof(GbtRequest)) +
		gbt_agg_request_data_size(agg->nranges, agg->points, agg->nvisible,
								  agg->xcnt, agg->subxcnt) +
		gbt_agg_preds_size(agg->where, agg->nfilters, agg->nlist) +
		gbt_agg_reply_size(agg->ncols, agg->unsure_cap, agg->rows,
						   agg->map ? agg->nranges : 0,
						   gbt_agg_reply_slots(agg->grouped, agg->nranges,
											   agg->nfilters,
											   Max(agg->group_cap, 0)),
						   Max(agg->group_cap, 0)) > req->hdr.capacity)
	{
		gbt_reply(req, GBT_REPLY_ERROR, "request larger than its segment");
		return true;
	}
	return false;
}

/* The query's snapshot, as the AGG carries it (xip and subxip in req). */
void
gbt_agg_snapshot(GbtRequest *req, SnapshotData *snap)
{
	GbtAggRequest *agg = &req->body.agg;
	TransactionId *xids = gbt_agg_request_xids(req);

	memset(snap, 0, sizeof(SnapshotData));
	snap->snapshot_type = SNAPSHOT_MVCC;
	snap->xmin = agg->xmin;
	snap->xmax = agg->xmax;
	snap->xip = xids;
	snap->xcnt = agg->xcnt;
	snap->subxip = xids + agg->xcnt;
	snap->subxcnt = agg->subxcnt;
	snap->suboverflowed = agg->suboverflowed;
	snap->takenDuringRecovery = agg->recovery;
}

/*
 * May this AGG join the round's batch?  A plain aggregate of sorted ranges,
 * first slice and only one, whose backend still waits.
 */
bool
gbt_agg_batchable(const TakenRequest *t)
{
	const GbtRequest *req = t->req;
	const GbtAggRequest *agg = &req->body.agg;

	return req->hdr.kind == GBT_REQ_AGG && !t->sliced && t->next == 0 &&
		agg->nranges <= GBT_SLICE_KEYS && !agg->grouped && !agg->where &&
		agg->nfilters == 0 && agg->group_col < 0 && !agg->rows && !agg->map &&
		!(agg->unsorted && agg->points);
}

/*
 * Aggregates answered in batches, and where a batch's time went, for the
 * DEBUG1 summary (gbt_note_aggs(), called with the worker's own: NULL
 * when it logs none, to start again).
 */
static int64 batch_rounds = 0;
static int64 batch_aggs = 0;
static int64 batch_max = 0;
static double batch_setup_ms = 0;	/* checks, snapshots, views */
static double batch_positions_ms = 0;
static double batch_tree_ms = 0;	/* the tree's plain entries */
static double batch_walk_ms = 0;	/* unsure, stamped and delta entries */
static double batch_reply_ms = 0;	/* combining, the replies written */
static double batch_later_ms = 0;	/* of walk: entries decided after the threads */
static double batch_plan_ms = 0;	/* of walk: the walks' plans */
static double batch_steps_ms[GBT_BATCH_STEPS];	/* of tree: engine.h's steps */
static int64 batch_stamped = 0;		/* entries in the ranges: stamped, delta, */
static int64 batch_delta = 0;
static int64 batch_singly = 0;		/* ... of those, decided one by one */
static int64 batch_later = 0;		/* ... and decided after the threads */

void
gbt_note_aggs(StringInfo buf)
{
	if (buf != NULL && batch_rounds > 0)
		appendStringInfo(buf, "; %lld aggregates in %lld batches (%.1f a batch, at most %lld), ms a batch: setup %.3f, positions %.3f, tree %.3f, walk %.3f, reply %.3f",
						 (long long) batch_aggs, (long long) batch_rounds,
						 (double) batch_aggs / batch_rounds, (long long) batch_max,
						 batch_setup_ms / batch_rounds, batch_positions_ms / batch_rounds,
						 batch_tree_ms / batch_rounds, batch_walk_ms / batch_rounds,
						 batch_reply_ms / batch_rounds);
	if (buf != NULL && batch_rounds > 0)
		appendStringInfo(buf, " (of the tree, chunk sums made again %.3f, made ready %.3f, their walks and short scans %.3f, scans on the host %.3f, on the device %.3f)",
						 batch_steps_ms[GBT_BATCH_SYNC] / batch_rounds,
						 batch_steps_ms[GBT_BATCH_READY] / batch_rounds,
						 batch_steps_ms[GBT_BATCH_WALKS] / batch_rounds,
						 batch_steps_ms[GBT_BATCH_HOST] / batch_rounds,
						 batch_steps_ms[GBT_BATCH_DEVICE] / batch_rounds);
	if (buf != NULL && batch_aggs > 0)
		appendStringInfo(buf, " (of the walk, planned %.3f, after the threads %.3f); entries an aggregate: stamped %.0f, delta %.0f (one by one %.0f), decided after the threads %.0f",
						 batch_plan_ms / batch_rounds, batch_later_ms / batch_rounds,
						 (double) batch_stamped / batch_aggs,
						 (double) batch_delta / batch_aggs, (double) batch_singly / batch_aggs,
						 (double) batch_later / batch_aggs);
	batch_rounds = batch_aggs = batch_max = 0;
	batch_setup_ms = batch_positions_ms = batch_tree_ms = batch_walk_ms = batch_reply_ms = 0;
	batch_later_ms = batch_plan_ms = 0;
	memset(batch_steps_ms, 0, sizeof(batch_steps_ms));
	batch_stamped = batch_delta = batch_singly = batch_later = 0;
}

/*
 * The round's plain AGG requests in taken[] (not done[], not sliced),
 * answered together: marked done[], as agg_slice() would answer each
 * alone.  A backend that stopped waiting gets no answer (finish() frees
 * its slot); the others of other kinds are left to the caller.
 */
void
gbt_answer_aggs(TakenRequest *taken, int ntaken, bool *done)
{
	GbtMirrorAggItem *items = palloc0(sizeof(GbtMirrorAggItem) * Max(ntaken, 1));
	TakenRequest **whose = palloc(sizeof(TakenRequest *) * Max(ntaken, 1));
	ServiceMirror **mirrors = palloc(sizeof(ServiceMirror *) * Max(ntaken, 1));
	SnapshotData *snaps = palloc(sizeof(SnapshotData) * Max(ntaken, 1));
	GbtSnapView *views = palloc(sizeof(GbtSnapView) * Max(ntaken, 1));
	GbtEntries *unsure = palloc(sizeof(GbtEntries) * Max(ntaken, 1));
	gbt_agg_result *parts = palloc(sizeof(gbt_agg_result) * Max(ntaken, 1));
	instr_time	t0,
				t1,
				t2,
				t3;
	int			n = 0;
	int			i;

	INSTR_TIME_SET_CURRENT(t0);
	for (i = 0; i < ntaken; i++)
	{
		TakenRequest *t = &taken[i];
		GbtRequest *req = t->req;
		GbtAggRequest *agg;
		ServiceMirror *sm;
		GbtMirrorAggItem *it;

		if (done[i] || req == NULL || req->hdr.kind != GBT_REQ_AGG || t->sliced ||
			!gbt_agg_batchable(t))
			continue;
		done[i] = true;
		if (gbt_request_abandoned(t) || gbt_agg_refused(t, &sm))
			continue;
		agg = &req->body.agg;
		agg->nkeys = agg->nranges;
		t->sorted = true;
		gbt_entries_unflatten(&unsure[n], agg->ncols, agg->unsure_cap,
							  gbt_agg_reply_unsure(req));
		unsure[n].n = req->hdr.nresults;
		gbt_agg_snapshot(req, &snaps[n]);
		gbt_snapview_init(&views[n], &snaps[n], agg->topxid, agg->stamps,
						  (uint8 *) GBT_REQUEST_DATA(req) +
						  sizeof(uint64) * (agg->points ? 1 : 2) * agg->nranges,
						  agg->nvisible);
		views[n].no_extremes = agg->no_extremes;
		it = &items[n];
		it->m = sm->mirror;
		it->lo = (const uint64 *) GBT_REQUEST_DATA(req);
		it->hi = agg->points ? it->lo : it->lo + agg->nranges;
		it->nranges = agg->nranges;
		it->view = &views[n];
		it->log_bound = agg->log_bound;
		it->out = &parts[n];
		it->unsure = &unsure[n];
		it->unsure_cap = agg->unsure_cap;
		whose[n] = t;
		mirrors[n] = sm;
		n++;
	}
	if (n == 0)
		return;

	INSTR_TIME_SET_CURRENT(t1);
	gbt_mirror_aggregate_batch(items, n);
	INSTR_TIME_SET_CURRENT(t2);
	batch_setup_ms += INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t0);
	batch_positions_ms += items[0].steps.positions_ms;
	batch_tree_ms += items[0].steps.tree_ms - items[0].steps.positions_ms;
	for (i = 0; i < GBT_BATCH_STEPS; i++)
		batch_steps_ms[i] += items[0].steps.batch_ms[i];
	batch_walk_ms += INSTR_TIME_GET_MILLISEC(t2) - INSTR_TIME_GET_MILLISEC(t1) -
		items[0].steps.tree_ms;
	for (i = 0; i < n; i++)
	{
		batch_later_ms += items[i].steps.later_ms;
		batch_plan_ms += items[i].steps.plan_ms;
		batch_stamped += items[i].steps.nstamped;
		batch_delta += items[i].steps.ndelta;
		batch_singly += items[i].steps.nsingly;
		batch_later += items[i].steps.nlater;
	}
	INSTR_TIME_SUBTRACT(t2, t0);

	for (i = 0; i < n; i++)
	{
		TakenRequest *t = whose[i];
		GbtRequest *req = t->req;
		GbtAggRequest *agg = &req->body.agg;
		ServiceMirror *sm = mirrors[i];

		gbt_snapview_free(&views[i]);
		if (!items[i].ok)
		{
			gbt_reply(req, GBT_REPLY_ERROR, items[i].err);
			continue;
		}
		gbt_agg_combine(&agg->agg, &parts[i], gbt_mirror_columns(sm->mirror));
		t->next = agg->nkeys;
		req->hdr.nresults = unsure[i].n;
		req->hdr.device_ms += INSTR_TIME_GET_MILLISEC(t2);
		req->hdr.on_gpu = gbt_mirror_on_gpu(sm->mirror);
		agg->columns = *gbt_mirror_columns(sm->mirror);
		sm->hits++;
		sm->last_used = GetCurrentTimestamp();
		gbt_reply(req, GBT_REPLY_OK, NULL);
	}
	INSTR_TIME_SET_CURRENT(t3);
	INSTR_TIME_ADD(t2, t0);
	batch_reply_ms += INSTR_TIME_GET_MILLISEC(t3) - INSTR_TIME_GET_MILLISEC(t2);
	batch_rounds++;
	batch_aggs += n;
	batch_max = Max(batch_max, n);
}
