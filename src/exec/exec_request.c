/*
 * exec_request.c
 *	  What every plan node and SQL function that asks the service shares:
 *	  the request (the protocol's AGG request: an aggregate, or the rows
 *	  themselves), exact under MVCC, and the heap checks of the entries the
 *	  service could not decide.
 *
 * The service decides which of the mirror's entries our snapshot sees
 * (src/service/snapview.h): each entry carries the transactions that
 * inserted and deleted its row, from the change log, and we send our
 * snapshot with the request.  Entries it cannot decide come back here and
 * are checked against the heap with our snapshot, like an index-only scan
 * does: our own transaction's changes (command IDs decide those), and
 * entries whose inserter the mirror's export could not tell, or all of them
 * when deletes may have gone unrecorded (no capture trigger, capture.c),
 * unless the visibility map vouches for their block.
 *
 * Order matters for those, as in an index-only scan, which reads the
 * visibility map after the index entry: a heap insert clears the page's
 * all-visible bit before its index entry exists.  So we first ask the
 * service which mirror it will use (AGG_PREPARE): every entry in it by then
 * was inserted into the heap before the answer.  Then we read the
 * visibility map, and ask for the entries that were in the mirror at
 * AGG_PREPARE only; later ones belong to transactions our snapshot cannot
 * see (it was taken before AGG_PREPARE was sent, and a commit writes its
 * entries to the change log before it becomes visible).
 *
 * Where the mirror's stamps decide every entry without the map (the
 * common case: captured, every inserter known), one round trip does: the
 * AGG names no mirror and carries no map, and the service prepares it
 * itself when it takes it (protocol.h).  Otherwise its reply is
 * AGG_PREPARE's answer, and we read the map and ask again, as above.  An
 * entry it could still not decide comes back unsure and is checked in the
 * heap; more of them than we would check send us the map's way too.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "access/visibilitymapdefs.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "portability/instr_time.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "storage/smgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "agg_state.h"
#include "build.h"
#include "capture.h"
#include "client.h"
#include "exec_request.h"
#include "keytypes.h"
#include "resync.h"
#include "shmem.h"
#include "visibility.h"
#include "pg_compat.h"


double
gbt_ms_since(instr_time t0)
{
	instr_time	t1;

	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	return INSTR_TIME_GET_MILLISEC(t1);
}

/* AGG_PREPARE: the mirror the request will read. */
static bool
prepare(Relation index, GbtReplyStatus *status, GbtAggPrepareRequest *prepared)
{
	GbtCall		call;

	*status = GBT_REPLY_ERROR;
	if (gbt_call_agg_prepare(&call, index))
	{
		*status = call.req->hdr.status;
		*prepared = call.req->body.agg_prepare;
	}
	gbt_call_end(&call);
	return *status == GBT_REPLY_OK;
}

/* The range of slots that holds key: the last one starting at or below it. */
static int64
range_of(const GbtAggSlots *slots, uint64 key)
{
	int64		lo = 0,
				hi = slots->nranges;

	while (hi - lo > 1)
	{
		int64		mid = lo + (hi - lo) / 2;

		if (slots->lo[mid] <= key)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* By value: the group of an entry's value, or -1. */
static int64
value_group_of(const GbtAggSlots *slots, const int64 *vals, uint8 nulls)
{
	bool		has_null = slots->ngroups > 0 && slots->group_nulls[slots->ngroups - 1];
	int64		nvalues = slots->ngroups - (has_null ? 1 : 0);
	int64		value = vals[slots->group_col];
	int64		lo = 0,
				hi = nvalues;

	if ((nulls >> slots->group_col) & 1)
		return has_null ? slots->ngroups - 1 : -1;
	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;

		if (slots->group_values[mid] < value)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nvalues && slots->group_values[lo] == value ? lo : -1;
}

void
gbt_slots_add(GbtAggSlots *slots, const GbtColumns *columns, uint64 key,
			  const int64 *vals, uint8 nulls)
{
	int			nf = slots->preds != NULL ? slots->preds->nfilters : 1;
	int64		slot = slots->grouped ? range_of(slots, key) : 0;
	GbtAggResult *into;
	int			f;

	if (slots->by_value && (slot = value_group_of(slots, vals, nulls)) < 0)
	{
		GbtEntries *p = &slots->pending;

		if (p->n == p->cap)
			gbt_entries_grow(p, p->cap * 2);
		for (f = 0; f < GBT_MAX_COLS; f++)
			p->vals[f][p->n] = vals[f];
		p->nulls[p->n++] = nulls;
		return;
	}
	into = &slots->results[slot * nf];

	for (f = 0; f < nf; f++)
		if (slots->preds == NULL || slots->preds->filter[f] == NULL ||
			gbt_pred_run(slots->preds->filter[f], slots->preds->list,
						 (const uint64 *) vals, nulls) == GBT_TV_TRUE)
			gbt_agg_add_entry(&into[f], columns, vals, nulls);
}

/*
 * Add the unsure entries that our snapshot sees: to rows, or else to the
 * aggregate.  In TID order, so that the heap is read block after block,
 * each pinned once.
 */
static void
check_unsure(Relation heap, Snapshot snapshot, const GbtEntries *e,
			 GbtEntries *rows, GbtAggAnswer *answer, GbtAggSlots *slots)
{
	IndexFetchTableData *fetch = table_index_fetch_begin(heap);
	TupleTableSlot *slot = table_slot_create(heap, NULL);
	int64	   *order = gbt_entries_order(e, 0, e->n, false);
	int64		k;

	for (k = 0; k < e->n; k++)
	{
		int64		i = order[k];
		ItemPointerData tid = e->tids[i];
		bool		call_again = false;
		bool		all_dead = false;
		int64		vals[GBT_MAX_COLS];
		int			c;

		CHECK_FOR_INTERRUPTS();
		answer->checked++;
		if (!table_index_fetch_tuple(fetch, &tid, snapshot, slot, &call_again, &all_dead))
			continue;
		ExecClearTuple(slot);
		answer->checked_visible++;
		if (rows != NULL)
		{
			gbt_copy_entry(rows, rows->n++, e, i);
			continue;
		}
		for (c = 0; c < GBT_MAX_COLS; c++)
			vals[c] = c < e->ncols ? e->vals[c][i] : 0;
		gbt_agg_add_entry(&answer->r, &answer->columns, vals, e->nulls[i]);
		if (slots != NULL)
			gbt_slots_add(slots, &answer->columns, e->keys[i], vals, e->nulls[i]);
	}
	ExecDropSingleTupleTableSlot(slot);
	table_index_fetch_end(fetch);
	pfree(order);
}

/*
 * A heap visit in TID order (pages read in order, several entries each),
 * priced as about 40 rows of a parallel scan, as test/bench/agg.sh
 * measures both.
 */
double
gbt_agg_unsure_cost(void)
{
	return cpu_tuple_cost + random_page_cost / 16;
}

/*
 * Ask the service for the entries of the ranges our snapshot sees: their
 * aggregate, or with rows their list.  On success the reply stays in *call
 * for the caller to read and end; on failure *why says why.
 */
static bool
ask_service(Relation heap, Relation index, const uint64 *lo, const uint64 *hi,
			int64 nranges, bool sorted, Snapshot snapshot, int64 max_listed, bool rows,
			bool map, int64 cap, GbtAggAnswer *answer, GbtCall *call, const char **why,
			GbtAggSlots *slots, bool no_extremes)
{
	Oid			keytype = gbt_mirror_key_type(index);
	GbtReplyStatus status = GBT_REPLY_ERROR;
	GbtAggPrepareRequest prepared;
	uint64		mirror_id;
	uint64		log_bound;
	BlockNumber nblocks;
	uint8	   *visible;
	int			attempt;
	bool		here = true;	/* no AGG_PREPARE: the service prepares */
	bool		prepared_by_agg = false;	/* prepared: a PREPARED reply's */

	memset(answer, 0, sizeof(GbtAggAnswer));
	call->seg = NULL;
	call->req = NULL;
	if (gbt_shared == NULL || !gbt_service_running())
	{
		*why = "no GPU service";
		return false;
	}
	if (!IsMVCCSnapshot(snapshot))
	{
		*why = "not an MVCC snapshot";
		return false;
	}
	if (!index->rd_index->indisvalid || !OidIsValid(keytype))
	{
		*why = "index not usable";
		return false;
	}
	if (gbt_service_wait_spent())
	{
		*why = "this statement waited gpubtree.service_timeout for the service already";
		return false;
	}

	/* Our own inserts first, so that we see our own rows. */
	gbt_resync_flush();

	/*
	 * No index page or heap tuple is read, so none is predicate-locked: a
	 * serializable transaction locks the whole table, as a sequential scan
	 * does, or its reads would escape conflict detection.
	 */
	PredicateLockRelation(heap, snapshot);

	/* One round trip first: the service prepares it where stamps decide. */
	gbt_index_columns(index, &answer->columns);
	for (attempt = 0; attempt < 3; attempt++)
	{
		GbtAggRequest *reply;
		bool		answered;

		if (here)
		{
			mirror_id = 0;
			log_bound = 0;
			nblocks = 0;
			visible = NULL;
		}
		else
		{
			if (!prepared_by_agg && !prepare(index, &status, &prepared))
			{
				static char note[GBT_ERRMSG_LEN];

				/* Built in the background; we wait only if asked to. */
				if (status == GBT_REPLY_NO_MIRROR && attempt == 0 &&
					gbt_mirror_wanted(index, keytype, note, sizeof(note)))
					continue;
				*why = status == GBT_REPLY_NO_MIRROR ? note :
					gbt_service_no_answer;
				return false;
			}
			prepared_by_agg = false;
			mirror_id = prepared.mirror_id;
			log_bound = prepared.log_bound;
			answer->columns = prepared.columns;

			/* After the prepared answer: see the header comment. */
			nblocks = RelationGetNumberOfBlocks(heap);
			visible = gbt_read_visibility(heap, nblocks, &answer->visible_blocks);
			answer->blocks = nblocks;
			answer->map_read = true;
		}

		answered = gbt_call_agg(call, index, mirror_id, log_bound, lo, hi, nranges,
								sorted, visible, nblocks, snapshot,
								gbt_capture_current(heap, index), answer->columns.ncols,
								cap, rows, map, slots != NULL && slots->grouped, no_extremes,
								slots != NULL ? slots->preds : NULL,
								slots != NULL && slots->by_value ? slots->group_col : -1,
								slots != NULL ? slots->group_cap : 0);
		if (visible != NULL)
			pfree(visible);
		if (call->req == NULL)
		{
			*why = "no shared memory for the request";
			return false;
		}
		reply = &call->req->body.agg;
		if (!answered || call->req->hdr.status == GBT_REPLY_ERROR)
		{
			gbt_call_end(call);
			*why = gbt_service_no_answer;
			return false;
		}
		if (here && call->req->hdr.status != GBT_REPLY_OK)
		{
			/* No mirror yet, or the map must decide: AGG_PREPARE's way. */
			if (call->req->hdr.status == GBT_REPLY_PREPARED)
			{
				prepared.mirror_id = reply->mirror_id;
				prepared.log_bound = reply->log_bound;
				prepared.columns = reply->columns;
				prepared_by_agg = true;
			}
			gbt_call_end(call);
			here = false;
			attempt--;
			continue;
		}
		if (call->req->hdr.status == GBT_REPLY_NO_MIRROR)
		{
			gbt_call_end(call);
			continue;			/* merged or rebuilt meanwhile: again */
		}
		if (here)
			answer->columns = reply->columns;
		if (here && reply->agg.nunsure > Min(cap, max_listed))
		{
			/* Unsure without the map: the map may decide most of them. */
			gbt_call_end(call);
			here = false;
			attempt--;
			continue;
		}
		if (reply->agg.nunsure > max_listed)
		{
			int64		need = reply->agg.nunsure;

			gbt_call_end(call);
			*why = rows ? psprintf("more than %lld rows", (long long) max_listed) :
				need > GBT_MAX_UNSURE ?
				"too many entries on heap pages that are not all-visible" :
				psprintf("%lld entries to check in the heap cost more",
						 (long long) need);
			return false;
		}
		if (reply->agg.nunsure > cap)
		{
			cap = reply->agg.nunsure;	/* before the reply goes */
			gbt_call_end(call);
			attempt--;			/* not a failure: only room */
			continue;
		}
		if (slots != NULL && slots->by_value && reply->ngroups > reply->group_cap)
		{
			int64		need = reply->ngroups;

			gbt_call_end(call);
			if (need > GBT_MAX_COLUMN_GROUPS || slots->group_cap >= need)
			{
				*why = psprintf("more than %lld groups", (long long) GBT_MAX_COLUMN_GROUPS);
				return false;
			}
			slots->group_cap = need;
			attempt--;			/* not a failure: only room */
			continue;
		}
		answer->r = reply->agg;
		answer->on_gpu = call->req->hdr.on_gpu;
		answer->nkeys = reply->nkeys;
		answer->device_ms = call->req->hdr.device_ms;
		return true;
	}
	*why = "the mirror kept changing";
	return false;
}

bool
gbt_aggregate(Relation heap, Relation index, const uint64 *lo, const uint64 *hi,
			  int64 nranges, bool sorted, Snapshot snapshot, int64 max_unsure,
			  bool no_extremes, GbtAggAnswer *answer, const char **why)
{
	GbtCall		call;
	GbtEntries	unsure;
	instr_time	t0;

	INSTR_TIME_SET_CURRENT(t0);
	if (!ask_service(heap, index, lo, hi, nranges, sorted, snapshot,
					 Min(max_unsure, GBT_MAX_UNSURE), false, false, 65536, answer, &call, why,
					 NULL, no_extremes))
		return false;
	gbt_entries_unflatten(&unsure, call.req->body.agg.ncols, call.req->body.agg.unsure_cap,
						  gbt_agg_reply_unsure(call.req));
	unsure.n = call.req->hdr.nresults;
	check_unsure(heap, snapshot, &unsure, NULL, answer, NULL);
	gbt_call_end(&call);
	answer->entries = answer->r.count;
	answer->total_ms = gbt_ms_since(t0);
	return true;
}

bool
gbt_key_extent(Relation index, bool *has_keys, uint64 *key_min, uint64 *key_max,
			   const char **why)
{
	GbtReplyStatus status;
	GbtAggPrepareRequest prepared;

	if (gbt_shared == NULL || !gbt_service_running())
	{
		*why = "no GPU service";
		return false;
	}
	gbt_resync_flush();
	if (!prepare(index, &status, &prepared))
	{
		static char note[GBT_ERRMSG_LEN];

		/* Built in the background, as for any request; waited for only if asked. */
		if (status != GBT_REPLY_NO_MIRROR)
		{
			*why = gbt_service_no_answer;
			return false;
		}
		if (!gbt_mirror_wanted(index, gbt_mirror_key_type(index), note, sizeof(note)) ||
			!prepare(index, &status, &prepared))
		{
			*why = note;
			return false;
		}
	}
	*has_keys = prepared.has_keys;
	*key_min = prepared.key_min;
	*key_max = prepared.key_max;
	return true;
}

bool
gbt_aggregate_slots(Relation heap, Relation index, GbtAggSlots *slots,
					Snapshot snapshot, int64 max_unsure, GbtAggAnswer *answer,
					const char **why)
{
	GbtCall		call;
	GbtEntries	unsure;
	int64		nslots;
	instr_time	t0;

	INSTR_TIME_SET_CURRENT(t0);
	if (!ask_service(heap, index, slots->lo, slots->hi, slots->nranges, true, snapshot,
					 Min(max_unsure, GBT_MAX_UNSURE), false, false, 65536, answer, &call, why,
					 slots, slots->no_extremes))
		return false;
	if (slots->by_value)
	{
		int64		g;

		slots->ngroups = call.req->body.agg.ngroups;
		nslots = slots->ngroups * call.req->body.agg.nfilters;
		slots->group_values = palloc_extended(sizeof(int64) * Max(slots->ngroups, 1),
											  MCXT_ALLOC_HUGE);
		slots->group_nulls = palloc_extended(sizeof(bool) * Max(slots->ngroups, 1),
											 MCXT_ALLOC_HUGE);
		memcpy(slots->group_values, gbt_agg_reply_group_values(call.req),
			   sizeof(int64) * slots->ngroups);
		for (g = 0; g < slots->ngroups; g++)
			slots->group_nulls[g] = call.req->body.agg.group_null && g == slots->ngroups - 1;
		gbt_entries_init(&slots->pending, GBT_MAX_COLS, 64);
	}
	else
		nslots = gbt_agg_reply_slots(call.req->body.agg.grouped, slots->nranges,
									 call.req->body.agg.nfilters, 0);
	slots->results = palloc_extended(sizeof(GbtAggResult) * Max(nslots, 1), MCXT_ALLOC_HUGE);
	memcpy(slots->results, gbt_agg_reply_groups(call.req), sizeof(GbtAggResult) * nslots);
	gbt_entries_unflatten(&unsure, call.req->body.agg.ncols, call.req->body.agg.unsure_cap,
						  gbt_agg_reply_unsure(call.req));
	unsure.n = call.req->hdr.nresults;
	check_unsure(heap, snapshot, &unsure, NULL, answer, slots);
	gbt_call_end(&call);
	answer->entries = answer->r.count;
	answer->total_ms = gbt_ms_since(t0);
	return true;
}

/* The pending entries' order: their group's value ascending, NULL last. */
static const GbtAggSlots *pending_of;

static int
pending_cmp(const void *a, const void *b)
{
	const GbtEntries *p = &pending_of->pending;
	int			c = pending_of->group_col;
	int64		x = *(const int64 *) a,
				y = *(const int64 *) b;
	bool		xn = (p->nulls[x] >> c) & 1,
				yn = (p->nulls[y] >> c) & 1;

	if (xn || yn)
		return (int) xn - (int) yn;
	return p->vals[c][x] < p->vals[c][y] ? -1 : p->vals[c][x] > p->vals[c][y];
}

bool
gbt_slots_finish(GbtAggSlots *slots, const GbtColumns *columns, const char **why)
{
	GbtEntries *p = &slots->pending;
	int			nf = slots->preds->nfilters;
	int			c = slots->group_col;
	int64		nold = slots->ngroups;
	int64		nall = nold;
	int64	   *order;
	int64	   *values;
	bool	   *nulls;
	GbtAggResult *results;
	int64		i,
				a,
				g;

	if (!slots->by_value || p->n == 0)
		return true;
	order = palloc_extended(sizeof(int64) * p->n, MCXT_ALLOC_HUGE);
	for (i = 0; i < p->n; i++)
		order[i] = i;
	pending_of = slots;
	qsort(order, p->n, sizeof(int64), pending_cmp);
	for (i = 0; i < p->n; i++)
		if (i == 0 || pending_cmp(&order[i - 1], &order[i]) != 0)
			nall++;
	if (nall > GBT_MAX_COLUMN_GROUPS)
	{
		*why = psprintf("more than %lld groups", (long long) GBT_MAX_COLUMN_GROUPS);
		return false;
	}

	/* Old and new groups merged in order, each new one made of its entries. */
	values = palloc_extended(sizeof(int64) * nall, MCXT_ALLOC_HUGE);
	nulls = palloc_extended(sizeof(bool) * nall, MCXT_ALLOC_HUGE);
	results = palloc_extended(sizeof(GbtAggResult) * nall * nf,
							  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	a = 0;
	i = 0;
	for (g = 0; g < nall; g++)
	{
		int64		x = i < p->n ? order[i] : -1;
		bool		xnull = x >= 0 && ((p->nulls[x] >> c) & 1);
		int64		xval = x >= 0 && !xnull ? p->vals[c][x] : 0;
		bool		take_old = a < nold &&
			(x < 0 || (!slots->group_nulls[a] &&
					   (xnull || slots->group_values[a] < xval)));

		if (take_old)
		{
			values[g] = slots->group_values[a];
			nulls[g] = slots->group_nulls[a];
			memcpy(&results[g * nf], &slots->results[a * nf], sizeof(GbtAggResult) * nf);
			a++;
			continue;
		}
		values[g] = xval;
		nulls[g] = xnull;
		for (; i < p->n && pending_cmp(&order[i], &x) == 0; i++)
		{
			int64		vals[GBT_MAX_COLS];
			int			f;

			for (f = 0; f < GBT_MAX_COLS; f++)
				vals[f] = p->vals[f][order[i]];
			for (f = 0; f < nf; f++)
				if (slots->preds->filter[f] == NULL ||
					gbt_pred_run(slots->preds->filter[f], slots->preds->list,
								 (const uint64 *) vals, p->nulls[order[i]]) == GBT_TV_TRUE)
					gbt_agg_add_entry(&results[g * nf + f], columns, vals,
									  p->nulls[order[i]]);
		}
	}
	slots->group_values = values;
	slots->group_nulls = nulls;
	slots->results = results;
	slots->ngroups = nall;
	p->n = 0;
	pfree(order);
	return true;
}

/*
 * gbt_lookup(), and with map (lo == hi, unsorted) gbt_lookup_mapped()'s
 * sorted distinct keys into distinct and each key's place in them into map.
 */
static bool
lookup(Relation heap, Relation index, const uint64 *lo, const uint64 *hi,
	   int64 nranges, bool sorted, Snapshot snapshot, double expected_rows,
	   GbtEntries *rows, GbtAggAnswer *answer, const char **why, uint64 *distinct,
	   uint32 *map)
{
	GbtCall		call;
	GbtEntries	listed;
	GbtEntries	unsure;
	uint8	   *verdicts;
	int64		i;
	instr_time	t0;

	INSTR_TIME_SET_CURRENT(t0);
	/* Room for a row a key, or as expected: more, and the service says how many. */
	if (!ask_service(heap, index, lo, hi, nranges, sorted, snapshot, GBT_MAX_LOOKUP_ROWS, true,
					 map != NULL,
					 (int64) Min(Max(expected_rows, (double) nranges) + 1024,
								 (double) GBT_MAX_LOOKUP_ROWS),
					 answer, &call, why, NULL, false))
		return false;
	if (map != NULL && (answer->nkeys < 0 || answer->nkeys > nranges))
	{
		gbt_call_end(&call);
		*why = gbt_service_no_answer;
		return false;
	}
	if (map != NULL)
	{
		memcpy(distinct, GBT_REQUEST_DATA(call.req), sizeof(uint64) * answer->nkeys);
		memcpy(map, gbt_agg_reply_map(call.req), sizeof(uint32) * nranges);
	}
	gbt_entries_unflatten(&listed, call.req->body.agg.ncols, call.req->body.agg.unsure_cap,
						  gbt_agg_reply_unsure(call.req));
	listed.n = call.req->hdr.nresults;
	verdicts = gbt_agg_reply_verdicts(call.req);

	/* The entries the mirror decided, then those the heap decides. */
	gbt_entries_init(rows, listed.ncols, Max(listed.n, 1));
	gbt_entries_init(&unsure, listed.ncols, Max(listed.n, 1));
	for (i = 0; i < listed.n; i++)
	{
		if (verdicts[i] == GBT_TAKE)
			gbt_copy_entry(rows, rows->n++, &listed, i);
		else
			gbt_copy_entry(&unsure, unsure.n++, &listed, i);
	}
	gbt_call_end(&call);
	check_unsure(heap, snapshot, &unsure, rows, answer, NULL);
	gbt_entries_free(&unsure);
	answer->entries = rows->n;
	answer->total_ms = gbt_ms_since(t0);
	return true;
}

bool
gbt_lookup(Relation heap, Relation index, const uint64 *lo, const uint64 *hi,
		   int64 nranges, bool sorted, Snapshot snapshot, double expected_rows,
		   GbtEntries *rows, GbtAggAnswer *answer, const char **why)
{
	return lookup(heap, index, lo, hi, nranges, sorted, snapshot, expected_rows, rows,
				  answer, why, NULL, NULL);
}

bool
gbt_lookup_mapped(Relation heap, Relation index, uint64 *keys, int64 n, uint32 *map,
				  Snapshot snapshot, GbtEntries *rows, GbtAggAnswer *answer,
				  const char **why)
{
	return lookup(heap, index, keys, keys, n, false, snapshot, 0, rows, answer, why,
				  keys, map);
}
