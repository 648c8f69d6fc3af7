/*
 * client.c
 *	  The backend's side of the service protocol (see protocol.h): request
 *	  segments, the slot handshake, one function per request kind, and the
 *	  change log's writers.
 */
#include "postgres.h"

#include "access/xact.h"

#include <sys/statvfs.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "storage/dsm_impl.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "client.h"
#include "prefault.h"
#include "backend.h"
#include "pg_compat.h"

static bool slot_cleanup_registered = false;

/*
 * The segment of the last answered request, kept for the next one: a fresh
 * segment's pages are allocated and zeroed at first touch, which for a
 * large key list costs more than the service's answer.  Kept only up to
 * GBT_SEGMENT_KEEP_MAX bytes and while /dev/shm stays roomy; mapped for the session
 * while spare, under the current resource owner while in use.
 */
static dsm_segment *spare_seg = NULL;

static void register_slot_cleanup(void);

/*
 * Create a request segment with room for datasize bytes of request data and
 * resultsize bytes of answer.  The segment belongs to the current resource
 * owner, so an error anywhere detaches it.  NULL when there is no room for
 * it: the caller then does without the service.
 */
static GbtRequest *
request_create(dsm_segment **seg, Size datasize, Size resultsize)
{
	Size		size = add_size(add_size(MAXALIGN(sizeof(GbtRequest)),
										 MAXALIGN(datasize)), resultsize);
	GbtRequest *req;

	if (spare_seg != NULL && dsm_segment_map_length(spare_seg) >= size)
	{
		*seg = spare_seg;
		spare_seg = NULL;
		dsm_unpin_mapping(*seg);
		req = dsm_segment_address(*seg);
		memset(req, 0, sizeof(GbtRequest));
		req->hdr.capacity = dsm_segment_map_length(*seg);
		return req;
	}
	if (spare_seg != NULL)
	{
		dsm_detach(spare_seg);	/* too small: make room for a larger one */
		spare_seg = NULL;
	}

	/*
	 * POSIX segments live in /dev/shm, which containers often keep small;
	 * running out there is an ERROR in dsm_create(), so look first, and let
	 * the caller use nbtree instead.
	 */
	if (dynamic_shared_memory_type == DSM_IMPL_POSIX)
	{
		struct statvfs st;

		if (statvfs("/dev/shm", &st) == 0 &&
			(uint64) st.f_bavail * st.f_frsize < (uint64) size + 64 * 1024 * 1024)
		{
			*seg = NULL;
			return NULL;
		}
	}
	*seg = dsm_create(size, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (*seg == NULL)
		return NULL;
	req = dsm_segment_address(*seg);
	memset(req, 0, sizeof(GbtRequest));
	req->hdr.capacity = size;
	return req;
}

static void slot_cleanup(int code, Datum arg);

static void
register_slot_cleanup(void)
{
	if (!slot_cleanup_registered)
	{
		before_shmem_exit(slot_cleanup, (Datum) 0);
		slot_cleanup_registered = true;
	}
}

static GbtSlot *
my_slot(void)
{
	return &gbt_shared->slots[MyProcNumber];
}

/*
 * Withdraw our request: the service either never took it (FREE again), or
 * will find it ABANDONED and free the slot itself.
 */
static void
abandon_slot(void)
{
	GbtSlot    *slot = my_slot();
	uint32		expected = GBT_SLOT_SUBMITTED;

	if (pg_atomic_compare_exchange_u32(&slot->state, &expected, GBT_SLOT_FREE))
		return;
	expected = GBT_SLOT_RUNNING;
	if (pg_atomic_compare_exchange_u32(&slot->state, &expected, GBT_SLOT_ABANDONED))
		return;
	expected = GBT_SLOT_DONE;
	(void) pg_atomic_compare_exchange_u32(&slot->state, &expected, GBT_SLOT_FREE);
}

static void
slot_cleanup(int code, Datum arg)
{
	if (gbt_shared != NULL && MyProc != NULL)
	{
		abandon_slot();
		gbt_unregister_build();
	}
}

/*
 * Every wait of a statement on the service draws on one budget of
 * gpubtree.service_timeout: a statement that sends many requests, or writes
 * many batches into a full change log, while the service does not answer,
 * waits that long in all, not that long each.  Once the budget is spent,
 * the statement's later waits do not wait at all, and their callers take
 * their fallback at once (nbtree or the plan below; for the change log,
 * making the mirrors unusable).  A wait that ends with its answer (or with
 * room in the log) is given back (gbt_service_wait_refund()): the budget
 * bounds a stalled service, not the work of one that answers, so that a
 * statement running ten thousand aggregates is not sent to the plan below
 * halfway.  Statements are told apart by statement_timestamp(): each
 * command a client sends, the commit of an implicit transaction included.
 * Each process has its own budget (parallel workers wait side by side).
 */
static TimestampTz budget_statement = 0;
static int64 budget_spent = 0;	/* microseconds waited in that statement */

/* Milliseconds the current statement may still wait on the service. */
static long
wait_budget_left(void)
{
	TimestampTz statement = GetCurrentStatementStartTimestamp();

	if (statement != budget_statement)
	{
		budget_statement = statement;
		budget_spent = 0;
	}
	return (long) Max((int64) gpubtree_service_timeout - budget_spent / 1000, 0);
}

/* Has the current statement spent its budget: would a wait not wait? */
bool
gbt_service_wait_spent(void)
{
	return wait_budget_left() <= 0;
}

/* What the current statement has spent so far, for gbt_service_wait_refund(). */
int64
gbt_service_wait_mark(void)
{
	(void) wait_budget_left();
	return budget_spent;
}

/* Give back what was spent since mark, in the same statement: a wait that was answered. */
void
gbt_service_wait_refund(int64 mark)
{
	if (GetCurrentStatementStartTimestamp() == budget_statement && mark < budget_spent)
		budget_spent = mark;
}

/*
 * Wait on our latch, set by the service, for at most ms milliseconds and
 * what is left of the statement's budget, which the wait is charged to.
 * False, without waiting, when the budget is spent.  The caller checks for
 * interrupts.
 */
static bool
wait_for_service(long ms)
{
	long		left = wait_budget_left();
	TimestampTz start;

	if (left <= 0)
		return false;
	start = GetCurrentTimestamp();
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 Min(ms, left), PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	budget_spent += GetCurrentTimestamp() - start;
	return true;
}

/* Why the last request was not answered, for EXPLAIN. */
const char *gbt_service_no_answer = "the service did not answer";

/*
 * A query's request (a scan or an aggregate) does not wait behind a long
 * build in the service (GBT_BUILD_BLOCK_MS): its caller's fallback is
 * quicker.  VACUUM's, whose fallback is to drop the mirror, waits.
 */
static bool
gives_way_to_build(GbtCall *call)
{
	GbtRequestKind kind = call->req->hdr.kind;

	if ((kind != GBT_REQ_SCAN && kind != GBT_REQ_AGG_PREPARE && kind != GBT_REQ_AGG) ||
		!gbt_service_building_long())
		return false;
	gbt_service_no_answer = "the service was building a mirror";
	return true;
}

/*
 * Hand the request in seg to the service, without waiting: false, nothing
 * sent, when it is not running, the statement's budget is spent, it has
 * been building a mirror too long (gbt_service_no_answer says so), or our
 * slot still holds an abandoned request.  request_collect() waits for the
 * answer; until then an error must withdraw it (gbt_call_abandon()).
 */
static bool
request_submit(GbtCall *call)
{
	GbtSlot    *slot;

	gbt_service_no_answer = "the service did not answer";
	if (!gbt_service_running() || wait_budget_left() <= 0)
		return false;
	if (gives_way_to_build(call))
		return false;

	register_slot_cleanup();
	slot = my_slot();
	if (pg_atomic_read_u32(&slot->state) != GBT_SLOT_FREE)
		return false;			/* the service still holds an old request */

	slot->handle = dsm_segment_handle(call->seg);
	slot->client_procno = MyProcNumber;
	pg_write_barrier();
	pg_atomic_write_u32(&slot->state, GBT_SLOT_SUBMITTED);
	call->submitted = true;

	gbt_wake_service();
	return true;
}

/*
 * Wait for the answer to the submitted request, within what is left of the
 * statement's budget (see wait_budget_left()).  True when the service
 * answered (the reply is in the request); false when it stopped, did not
 * answer in time, or turned to a long build meanwhile: the request is
 * withdrawn.  Query cancel and statement_timeout interrupt the wait as
 * usual.
 */
static bool
request_collect(GbtCall *call)
{
	GbtSlot    *slot = my_slot();
	bool		answered = false;
	int64		mark = gbt_service_wait_mark();

	Assert(call->submitted);
	PG_TRY();
	{
		for (;;)
		{
			if (pg_atomic_read_u32(&slot->state) == GBT_SLOT_DONE)
			{
				pg_read_barrier();
				answered = true;
				break;
			}
			if (!gbt_service_running() || !wait_for_service(100L) ||
				gives_way_to_build(call))
				break;
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_CATCH();
	{
		gbt_call_abandon(call);
		PG_RE_THROW();
	}
	PG_END_TRY();

	call->submitted = false;
	if (answered)
	{
		pg_atomic_write_u32(&slot->state, GBT_SLOT_FREE);
		call->answered = true;	/* the service is done with seg */
		gbt_service_wait_refund(mark);
	}
	else
		abandon_slot();
	return answered;
}

/*
 * Send the request in seg and wait for the answer.  Returns true when the
 * service answered (the reply is in the request); false when it is not
 * running, busy with our previous, abandoned request, or did not answer in
 * time, or the budget was spent already (then nothing is sent), or has been
 * building a mirror too long (gbt_service_no_answer says so).
 */
static bool
request_send(GbtCall *call)
{
	return request_submit(call) && request_collect(call);
}

/* Withdraw a request submitted and not collected (an error between them). */
void
gbt_call_abandon(GbtCall *call)
{
	if (call->submitted)
		abandon_slot();
	call->submitted = false;
}

void
gbt_fill_key(GbtMirrorKey *key, Relation index)
{
	key->dbid = MyDatabaseId;
	key->indexrelid = RelationGetRelid(index);
	key->relfilenode = GBT_REL_FILENUMBER(index);
}

/* A request of this kind about index, with room for its data and answer. */
static GbtRequest *
call_begin(GbtCall *call, GbtRequestKind kind, Relation index, uint64 generation,
		   Size datasize, Size resultsize)
{
	call->answered = false;
	call->submitted = false;
	call->prefault = NULL;
	call->req = request_create(&call->seg, datasize, resultsize);
	if (call->req == NULL)
		return NULL;
	call->req->hdr.kind = kind;
	gbt_fill_key(&call->req->hdr.key, index);
	call->req->hdr.generation = generation;
	return call->req;
}

static uint64
current_generation(Relation index)
{
	return gbt_generation(MyDatabaseId, RelationGetRelid(index));
}

/*
 * The BUILD request's segment made before the export, with room for room
 * entries, and entries (uninitialised) laid out in it to be read into
 * straight: no copy at the hand-over.  False, entries untouched, when there
 * is no room for it.  A segment's pages are given memory as they are first
 * written, so room to spare costs little.
 */
bool
gbt_call_build_begin(GbtCall *call, Relation index, uint64 generation,
					 const GbtColumns *cols, int64 room, GbtEntries *entries)
{
	GbtRequest *req;

	room = Max(room, 16);
	req = call_begin(call, GBT_REQ_BUILD, index, generation,
					 gbt_entries_flat_size(cols->ncols, room), 0);
	if (req == NULL)
		return false;
	gbt_entries_unflatten(entries, cols->ncols, room, GBT_REQUEST_DATA(req));
	entries->n = 0;
	entries->borrowed = true;
	req->body.build.room = room;

	/* On 2 busy cores it did not measurably help: only where asked for. */
	if (gpubtree_debug_export_prefault)
		call->prefault = gbt_prefault_entries(entries, cols);
	return true;
}

/*
 * Send the BUILD request of entries and their stamps: read into the call's
 * segment (gbt_call_build_begin()), or copied into one made for them now
 * when they outgrew it, there was none, or there are stamps to send after
 * them (the old one freed once they are in the new, before the wait: an
 * export of a large index should not be held twice while the service
 * builds).
 */
bool
gbt_call_build(GbtCall *call, Relation index, uint64 generation,
			   uint64 log_start, uint64 ticket, int service_pid, bool captured,
			   const GbtColumns *cols, GbtEntries *entries,
			   const GbtEntryStamps *stamps, GbtBuildPhases *phases)
{
	GbtRequest *req = call->req;

	gbt_prefault_stop(call->prefault);
	call->prefault = NULL;
	if (!entries->borrowed || stamps->n > 0)
	{
		dsm_segment *old = call->seg;
		Size		flat = MAXALIGN(gbt_entries_flat_size(cols->ncols, entries->n));

		if (old != NULL && !entries->borrowed)
		{
			elog(DEBUG1, "gpubtree: export of %lld entries outgrew its request's room for %lld",
				 (long long) entries->n, (long long) call->req->body.build.room);
			dsm_detach(old);
			old = NULL;
		}
		call->seg = NULL;
		req = call_begin(call, GBT_REQ_BUILD, index, generation,
						 flat + GBT_ENTRY_STAMPS_SIZE(stamps->n), 0);
		if (req != NULL)
		{
			char	   *at = GBT_REQUEST_DATA(req) + flat;

			gbt_entries_flatten(entries, GBT_REQUEST_DATA(req));
			req->body.build.room = entries->n;
			memcpy(at, stamps->pos, sizeof(int64) * stamps->n);
			at += sizeof(int64) * stamps->n;
			memcpy(at, stamps->xmin, sizeof(TransactionId) * stamps->n);
			at += sizeof(TransactionId) * stamps->n;
			memcpy(at, stamps->xmax, sizeof(TransactionId) * stamps->n);
		}
		/* (entries borrowed from it were copied above; freeing them is a no-op) */
		if (old != NULL)
			dsm_detach(old);
	}
	if (req != NULL)
	{
		req->body.build.nstamps = stamps->n;
		req->body.build.log_start = log_start;
		req->body.build.ticket = ticket;
		req->body.build.service_pid = service_pid;
		req->body.build.columns = *cols;
		req->body.build.nentries = entries->n;
		req->body.build.captured = captured;
		phases->sent = GetCurrentTimestamp();
		req->body.build.phases = *phases;
	}
	gbt_entries_free(entries);
	return req != NULL && request_send(call);
}

bool
gbt_call_scan(GbtCall *call, Relation index, const uint64 *lo, const uint64 *hi,
			  int64 nranges, Size result_room)
{
	GbtRequest *req = call_begin(call, GBT_REQ_SCAN, index, current_generation(index),
								 2 * sizeof(uint64) * nranges, result_room);

	if (req == NULL)
		return false;
	req->body.scan.nranges = nranges;
	memcpy(GBT_REQUEST_DATA(req), lo, sizeof(uint64) * nranges);
	memcpy(GBT_REQUEST_DATA(req) + sizeof(uint64) * nranges, hi, sizeof(uint64) * nranges);
	return request_send(call);
}

bool
gbt_call_dump(GbtCall *call, Relation index, uint64 generation,
			  const GbtDumpCursor *after, int64 nitems, int ncols, bool verdicts)
{
	GbtRequest *req = call_begin(call, GBT_REQ_DUMP, index, generation, 0,
								 gbt_entries_flat_size(ncols, nitems) +
								 (verdicts ? nitems : 0));

	if (req == NULL)
		return false;
	req->body.dump.started = after != NULL;
	if (after != NULL)
		req->body.dump.cursor = *after;
	req->body.dump.nitems = nitems;
	req->body.dump.ncols = ncols;
	req->body.dump.verdicts = verdicts;
	req->body.dump.topxid = GetTopTransactionIdIfAny();
	return request_send(call);
}

static bool
remove_begin(GbtCall *call, Relation index, uint64 mirror_id, bool all_dead,
			 const ItemPointerData *tids, int64 ntids)
{
	GbtRequest *req = call_begin(call, GBT_REQ_REMOVE, index, current_generation(index),
								 sizeof(ItemPointerData) * ntids, 0);

	if (req == NULL)
		return false;
	req->body.remove.mirror_id = mirror_id;
	req->body.remove.all_dead = all_dead;
	req->body.remove.ntids = ntids;
	if (ntids > 0)
		memcpy(GBT_REQUEST_DATA(req), tids, sizeof(ItemPointerData) * ntids);
	return true;
}

bool
gbt_call_remove(GbtCall *call, Relation index, uint64 mirror_id, bool all_dead,
				const ItemPointerData *tids, int64 ntids)
{
	return remove_begin(call, index, mirror_id, all_dead, tids, ntids) &&
		request_send(call);
}

/*
 * gbt_call_remove() of VACUUM's whole dead list, handed over without
 * waiting: gbt_call_collect() waits for the answer.  False when it could
 * not be sent.
 */
bool
gbt_call_remove_submit(GbtCall *call, Relation index, const ItemPointerData *tids,
					   int64 ntids)
{
	return remove_begin(call, index, 0, true, tids, ntids) && request_submit(call);
}

/* The answer to a request gbt_call_*_submit() handed over. */
bool
gbt_call_collect(GbtCall *call)
{
	return call->submitted && request_collect(call);
}

bool
gbt_call_agg_prepare(GbtCall *call, Relation index)
{
	if (call_begin(call, GBT_REQ_AGG_PREPARE, index, current_generation(index), 0, 0) == NULL)
		return false;
	return request_send(call);
}

bool
gbt_call_agg(GbtCall *call, Relation index, uint64 mirror_id, uint64 log_bound,
			 const uint64 *lo, const uint64 *hi, int64 nranges, bool sorted,
			 const uint8 *visible, int64 nvisible, Snapshot snapshot,
			 bool stamps, int ncols, int64 unsure_cap, bool rows, bool map, bool grouped,
			 bool no_extremes, const gbt_pred_set *preds, int group_col, int64 group_cap)
{
	bool		points = lo == hi;	/* one key a range: sent once */
	GbtRequest *req;
	GbtAggRequest *agg;
	char	   *data;
	TransactionId *xids;
	int			nfilters;

	map = map && points && !sorted;
	grouped = grouped && sorted && !rows;
	nfilters = preds != NULL ? preds->nfilters : 0;
	if (group_col < 0 || preds == NULL || !sorted || rows || grouped)
		group_col = -1;
	group_cap = group_col >= 0 ? Max(group_cap, 1) : 0;
	req = call_begin(call, GBT_REQ_AGG, index, current_generation(index),
					 gbt_agg_request_data_size(nranges, points, nvisible,
											   snapshot->xcnt, snapshot->subxcnt) +
					 (preds != NULL ?
					  gbt_agg_preds_size(preds->where != NULL, nfilters, preds->nlist) : 0),
					 gbt_agg_reply_size(ncols, unsure_cap, rows, map ? nranges : 0,
										gbt_agg_reply_slots(grouped, nranges, nfilters,
															group_cap),
										group_cap));
	if (req == NULL)
		return false;
	agg = &req->body.agg;
	agg->mirror_id = mirror_id;
	agg->log_bound = log_bound;
	agg->nranges = nranges;
	agg->nvisible = nvisible;
	agg->unsure_cap = unsure_cap;
	agg->xmin = snapshot->xmin;
	agg->xmax = snapshot->xmax;
	agg->xcnt = snapshot->xcnt;
	agg->subxcnt = snapshot->subxcnt;
	agg->suboverflowed = snapshot->suboverflowed;
	agg->recovery = snapshot->takenDuringRecovery;
	agg->topxid = GetTopTransactionIdIfAny();
	agg->stamps = stamps;
	agg->rows = rows;
	agg->points = points;
	agg->unsorted = points && !sorted;
	agg->map = map;
	agg->grouped = grouped;
	agg->no_extremes = no_extremes && !rows;
	agg->where = preds != NULL && preds->where != NULL;
	agg->nfilters = nfilters;
	agg->nlist = preds != NULL ? preds->nlist : 0;
	agg->ncols = ncols;
	agg->group_col = group_col;
	agg->group_cap = group_cap;
	data = GBT_REQUEST_DATA(req);
	memcpy(data, lo, sizeof(uint64) * nranges);
	data += sizeof(uint64) * nranges;
	if (!points)
	{
		memcpy(data, hi, sizeof(uint64) * nranges);
		data += sizeof(uint64) * nranges;
	}
	if (nvisible > 0)
		memcpy(data, visible, (nvisible + 7) / 8);
	xids = gbt_agg_request_xids(req);
	memcpy(xids, snapshot->xip, sizeof(TransactionId) * snapshot->xcnt);
	memcpy(xids + snapshot->xcnt, snapshot->subxip, sizeof(TransactionId) * snapshot->subxcnt);
	if (preds != NULL)
	{
		gbt_pred   *progs = gbt_agg_request_preds(req);
		int			f;

		if (preds->where != NULL)
			*progs++ = *preds->where;
		/* a filter that is absent: the program TRUE */
		for (f = 0; f < nfilters; f++, progs++)
		{
			if (preds->filter[f] != NULL)
				*progs = *preds->filter[f];
			else
			{
				memset(progs, 0, sizeof(gbt_pred));
				progs->ninsns = 1;
				progs->insn[0].op = GBT_PRED_TRUE;
			}
		}
		memcpy((char *) gbt_agg_request_preds(req) +
			   MAXALIGN(sizeof(gbt_pred) * (agg->where + nfilters)),
			   preds->list, sizeof(gbt_pred_value) * preds->nlist);
	}
	return request_send(call);
}

bool
gbt_call_vouch(GbtCall *call, Relation index, const uint8 *visible, int64 nvisible)
{
	GbtRequest *req = call_begin(call, GBT_REQ_VOUCH, index, current_generation(index),
								 (nvisible + 7) / 8, 0);

	if (req == NULL)
		return false;
	req->body.vouch.nvisible = nvisible;
	memcpy(GBT_REQUEST_DATA(req), visible, (nvisible + 7) / 8);
	return request_send(call);
}

/*
 * Bytes free in /dev/shm, looked at most every GBT_SHM_LOOK_MS: a
 * statvfs() a request (a path lookup in the kernel) is a few percent of a
 * small aggregate's backend time, and /dev/shm does not fill that fast.
 */
#define GBT_SHM_LOOK_MS 100

static uint64
shm_free_bytes(void)
{
	static TimestampTz looked = 0;
	static uint64 free_bytes = 0;
	TimestampTz now = GetCurrentTimestamp();
	struct statvfs st;

	if (looked == 0 || now - looked >= GBT_SHM_LOOK_MS * 1000)
	{
		free_bytes = statvfs("/dev/shm", &st) == 0 ?
			(uint64) st.f_bavail * st.f_frsize : 0;
		looked = now;
	}
	return free_bytes;
}

/* Whether the call's segment, answered, may be kept for the next request. */
static bool
keep_spare(GbtCall *call)
{
	Size		size = dsm_segment_map_length(call->seg);

	if (!call->answered || spare_seg != NULL || size > GBT_SEGMENT_KEEP_MAX)
		return false;
	if (dynamic_shared_memory_type == DSM_IMPL_POSIX &&
		shm_free_bytes() < 4 * (uint64) size + 256 * 1024 * 1024)
		return false;
	return true;
}

void
gbt_call_end(GbtCall *call)
{
	gbt_call_abandon(call);
	gbt_prefault_stop(call->prefault);
	call->prefault = NULL;
	if (call->seg != NULL && keep_spare(call))
	{
		dsm_pin_mapping(call->seg);
		spare_seg = call->seg;
	}
	else if (call->seg != NULL)
		dsm_detach(call->seg);
	call->seg = NULL;
	call->req = NULL;
}

/*
 * Does the service have a mirror of the index, or is an export of it
 * registered?  Only then are its entries logged.  Called with the log's
 * lock held: an export registers under it, and its mirror is published
 * before the export unregisters, so a writer that finds neither wrote its
 * entries into the index before any later export reads the index.
 */
static bool
log_wanted(const GbtMirrorKey *key, int service_pid)
{
	bool		wanted = false;
	int			i;

	for (i = 0; i < gbt_shared->nslots && !wanted; i++)
	{
		GbtSlot    *slot = &gbt_shared->slots[i];

		wanted = slot->building && slot->build_service_pid == service_pid &&
			memcmp(&slot->build_key, key, sizeof(GbtMirrorKey)) == 0;
	}
	SpinLockAcquire(&gbt_shared->mutex);
	for (i = 0; i < GBT_MAX_MIRRORS && !wanted; i++)
		wanted = gbt_shared->mirrors[i].in_use &&
			memcmp(&gbt_shared->mirrors[i].key, key, sizeof(GbtMirrorKey)) == 0;
	SpinLockRelease(&gbt_shared->mutex);
	return wanted;
}

/*
 * Append those of n entries that some mirror or registered export wants to
 * the change log, if epoch_ok accepts each of their indexes (checked under
 * the lock that VACUUM epochs are bumped under).  GBT_LOG_FULL when they do
 * not fit (the caller then invalidates the indexes instead).  With no
 * service running there are no mirrors, and nothing to do: a service
 * started later builds its mirrors from exports that begin after this call.
 */
GbtLogWrite
gbt_log_write(const GbtLogEntry *entries, int n, GbtEpochCheck epoch_ok)
{
	GbtLog	   *log = &gbt_shared->log;
	uint64		head;
	uint64		pending;
	int			service_pid;
	bool	   *wanted;
	int			nwanted = 0;
	int			i;
	bool		recheck = false;

	if (n == 0)
		return GBT_LOG_WRITTEN;

	wanted = palloc0(sizeof(bool) * n);
	LWLockAcquire(log->lock, LW_EXCLUSIVE);
	/* Read under the lock, as gbt_register_build does. */
	service_pid = gbt_service_pid();
	for (i = 0; i < n && service_pid != 0; i++)
	{
		/* A batch holds runs of one index: decide once per run. */
		if (i > 0 && memcmp(&entries[i].key, &entries[i - 1].key, sizeof(GbtMirrorKey)) == 0)
			wanted[i] = wanted[i - 1];
		else
		{
			wanted[i] = log_wanted(&entries[i].key, service_pid);
			if (wanted[i] && !epoch_ok(&entries[i].key))
				recheck = true;
		}
		nwanted += wanted[i];
	}
	if (recheck || log->head + nwanted - log->applied > log->size)
	{
		LWLockRelease(log->lock);
		pfree(wanted);
		return recheck ? GBT_LOG_RECHECK : GBT_LOG_FULL;
	}
	head = log->head;
	for (i = 0; i < n; i++)
		if (wanted[i])
			log->entries[head++ % log->size] = entries[i];
	log->head = head;
	pending = log->head - log->applied;
	LWLockRelease(log->lock);
	pfree(wanted);

	pg_atomic_fetch_add_u64(&gbt_shared->logged, nwanted);
	/* Wake the service before the log fills; scans wake it anyway. */
	if (pending > log->size / 4)
		gbt_wake_service();
	return GBT_LOG_WRITTEN;
}

/*
 * After a commit that wrote entries to the log: the transaction and its
 * committed subtransactions (xids) committed.  Called where nothing may
 * fail or wait: without room the service asks the commit log instead.
 */
void
gbt_log_committed(const TransactionId *xids, int n)
{
	GbtLog	   *log = &gbt_shared->log;
	int			i;

	LWLockAcquire(log->lock, LW_EXCLUSIVE);
	if (gbt_service_pid() != 0 && log->head + n - log->applied <= log->size)
		for (i = 0; i < n; i++)
		{
			GbtLogEntry *e = &log->entries[log->head++ % log->size];

			memset(e, 0, sizeof(GbtLogEntry));
			e->kind = GBT_LOG_COMMITTED;
			e->xid = xids[i];
		}
	LWLockRelease(log->lock);
}

/*
 * The log was full: wake the service, which applies it at once when idle
 * and at the start of every round, and wait a moment for it.  False when
 * no service runs (then nothing waits for room), when the statement's wait
 * budget is spent (wait_budget_left()), or when a cancel stopped the wait
 * of a commit.  A commit is not cancelled halfway (its statement has ended,
 * and a statement timeout that fired as it ended would be reported as a
 * user's cancel, its timer being gone by then): as with synchronous
 * replication, the wait stops with a WARNING and the commit goes on; the
 * caller then makes the mirrors unusable, as after a timeout.
 */
bool
gbt_wait_for_log_room(bool committing)
{
	bool		waited;

	if (!gbt_service_running() || wait_budget_left() <= 0)
		return false;
	gbt_wake_service();
	if (committing)
		HOLD_CANCEL_INTERRUPTS();
	waited = wait_for_service(1L);
	CHECK_FOR_INTERRUPTS();
	if (committing)
	{
		RESUME_CANCEL_INTERRUPTS();
		if (QueryCancelPending)
		{
			QueryCancelPending = false;
			ereport(WARNING,
					(errmsg("canceling the wait for room in the gpubtree change log"),
					 errdetail("The transaction commits; the GPU mirrors of the indexes it changed are rebuilt.")));
			return false;
		}
	}
	return waited;
}

/*
 * Before exporting an index: register the log position the export starts
 * at, so that the service keeps every entry logged from then on until the
 * mirror arrives.  False when no service is running, or when another
 * backend is already exporting the same index (one export is enough; the
 * others' scans use nbtree meanwhile).
 */
bool
gbt_register_build(const GbtMirrorKey *key, uint64 *start, uint64 *ticket,
				   int *service_pid)
{
	GbtSlot    *slot = &gbt_shared->slots[MyProcNumber];
	GbtLog	   *log = &gbt_shared->log;
	int			i;

	register_slot_cleanup();
	LWLockAcquire(log->lock, LW_EXCLUSIVE);
	*service_pid = gbt_service_pid();
	for (i = 0; i < gbt_shared->nslots && *service_pid != 0; i++)
	{
		GbtSlot    *other = &gbt_shared->slots[i];

		if (other->building && other->build_service_pid == *service_pid &&
			memcmp(&other->build_key, key, sizeof(GbtMirrorKey)) == 0)
			*service_pid = 0;
	}
	*start = log->head;
	*ticket = ++gbt_shared->build_tickets;
	slot->building = *service_pid != 0;
	slot->build_key = *key;
	slot->build_service_pid = *service_pid;
	slot->build_start = *start;
	slot->build_ticket = *ticket;
	LWLockRelease(log->lock);
	return *service_pid != 0;
}

void
gbt_unregister_build(void)
{
	GbtSlot    *slot = &gbt_shared->slots[MyProcNumber];

	if (!slot->building)
		return;
	LWLockAcquire(gbt_shared->log.lock, LW_EXCLUSIVE);
	slot->building = false;
	LWLockRelease(gbt_shared->log.lock);
}
