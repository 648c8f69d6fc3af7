/*
 * vacuum.c
 *	  Reading a mirror back from the service, and VACUUM's sweep of it.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "storage/bufmgr.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "capture.h"
#include "client.h"
#include "dead_items.h"
#include "keytypes.h"
#include "resync.h"
#include "vacuum.h"
#include "visibility.h"

/*
 * Read the service's current mirror of the index, in chunks in (key, TID)
 * order, each resuming after the last entry read (so that changes applied
 * in between hide no entry that stays), passing each chunk's live entries
 * to fn (keys and TIDs only with tids_only: what VACUUM's sweep needs; with
 * verdicts, whether a snapshot taken now sees each entry's row, by its
 * stamps).  Fails (with *status) when there is no current mirror, or when
 * it was replaced meanwhile by one built anew from the index (a new tree
 * made from it with its delta folded in reads on); *mirror_id names the
 * mirror read.
 */
bool
gbt_dump_mirror(Relation index, bool tids_only, bool verdicts, GbtDumpFn fn, void *arg,
				uint64 *mirror_id, GbtReplyStatus *status)
{
	const int64 chunk = 1 << 20;
	int			ncols = tids_only ? 0 : GBT_MAX_COLS;
	GbtDumpCursor cursor;
	bool		started = false;
	bool		done = false;
	uint64		generation;

	gbt_resync_flush();
	generation = gbt_generation(MyDatabaseId, RelationGetRelid(index));
	*status = GBT_REPLY_ERROR;
	while (!done)
	{
		GbtCall		call;
		bool		same;

		CHECK_FOR_INTERRUPTS();
		if (!gbt_call_dump(&call, index, generation, started ? &cursor : NULL,
						   chunk, ncols, verdicts))
		{
			gbt_call_end(&call);
			return false;
		}
		*status = call.req->hdr.status;
		same = !started || call.req->body.dump.mirror_id == *mirror_id;
		*mirror_id = call.req->body.dump.mirror_id;
		if (*status == GBT_REPLY_OK && same)
		{
			GbtEntries	e;

			gbt_entries_unflatten(&e, ncols, chunk, GBT_REQUEST_DATA(call.req));
			e.n = call.req->hdr.nresults;
			e.ncols = Min(ncols, call.req->body.dump.columns.ncols);
			fn(&e, &call.req->body.dump.columns,
			   verdicts ? gbt_dump_reply_verdicts(call.req) : NULL, arg);
			/* A cursor that did not move would read the same entries forever. */
			if (!call.req->body.dump.done &&
				(e.n == 0 || (started &&
							  call.req->body.dump.cursor.key == cursor.key &&
							  ItemPointerEquals(&call.req->body.dump.cursor.tid, &cursor.tid))))
				*status = GBT_REPLY_ERROR;
			started = call.req->body.dump.started;
			cursor = call.req->body.dump.cursor;
			done = call.req->body.dump.done;
		}
		gbt_call_end(&call);
		if (*status != GBT_REPLY_OK)
			return false;
		if (!same)
		{
			*status = GBT_REPLY_ERROR;
			return false;
		}
	}
	return true;
}

typedef struct SweepState
{
	IndexBulkDeleteCallback callback;
	void	   *callback_state;
	ItemPointerData *dead;
	int64		ndead;
	int64		maxdead;
} SweepState;

static void
sweep_chunk(const GbtEntries *e, const GbtColumns *cols, const uint8 *verdicts, void *arg)
{
	SweepState *st = arg;
	int64		i;

	for (i = 0; i < e->n; i++)
	{
		if (!st->callback(&e->tids[i], st->callback_state))
			continue;
		if (st->ndead == st->maxdead)
		{
			st->maxdead *= 2;
			st->dead = repalloc_huge(st->dead, sizeof(ItemPointerData) * st->maxdead);
		}
		st->dead[st->ndead++] = e->tids[i];
	}
}

/* Milliseconds since start. */
static double
elapsed_ms(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/*
 * At the end of a VACUUM (its index cleanup, after the heap pass has set
 * the visibility map): tell the mirror which heap blocks are all-visible
 * now, so that entries whose inserter it did not know (exported from
 * pages that were not all-visible) become plain entries, decided without
 * the heap.  Only while the capture trigger fires: the mirror's other
 * entries are right only if every delete reached it.
 */
void
gbt_vouch_mirror(Relation index, int elevel)
{
	Relation	heap;
	BlockNumber nblocks;
	int64		nvisible;
	uint8	   *visible;
	GbtCall		call;
	instr_time	start;

	if (gbt_shared == NULL || !gbt_service_running() ||
		!index->rd_index->indisvalid || !OidIsValid(gbt_mirror_key_type(index)))
		return;
	/* VACUUM holds a lock on the table. */
	heap = table_open(index->rd_index->indrelid, NoLock);
	if (gbt_capture_active(heap, index))
	{
		INSTR_TIME_SET_CURRENT(start);
		nblocks = RelationGetNumberOfBlocks(heap);
		visible = gbt_read_visibility(heap, nblocks, &nvisible);
		if (gbt_call_vouch(&call, index, visible, nblocks))
			ereport(elevel,
					(errmsg("gpubtree: index \"%s\": its mirror told of %lld all-visible heap blocks of %u in %.1f ms",
							RelationGetRelationName(index), (long long) nvisible, nblocks,
							elapsed_ms(start))));
		gbt_call_end(&call);
		pfree(visible);
	}
	table_close(heap, NoLock);
}

/*
 * After the sweep: invalidate the mirror if it failed, and say what it did
 * at elevel.
 */
static void
swept(Relation index, int elevel, bool done, int64 ndead, int64 removed,
	  instr_time start)
{
	if (!done)
	{
		gbt_invalidate(MyDatabaseId, RelationGetRelid(index));
		ereport(elevel,
				(errmsg("gpubtree: index \"%s\": its mirror could not be swept and is built anew when asked",
						RelationGetRelationName(index))));
		return;
	}
	ereport(elevel,
			(errmsg("gpubtree: index \"%s\": %lld dead row versions sent to its mirror, %lld of its entries still there removed, in %.1f ms after nbtree's pass",
					RelationGetRelationName(index), (long long) ndead, (long long) removed,
					elapsed_ms(start))));
}

static int
cmp_tid(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) a, (ItemPointer) b);
}

/*
 * VACUUM's bulk delete: remove from the mirror every entry whose TID
 * VACUUM's callback reports dead, before VACUUM can mark those line
 * pointers unused for reuse.  The mirror is told VACUUM's whole dead list,
 * or swept, rather than told what nbtree deleted, because nbtree also
 * removes entries by itself (LP_DEAD simple deletion, bottom-up deletion)
 * without calling us; their TIDs are dead too and reach VACUUM's list the
 * same way.
 *
 * Where the list can be read (dead_items.c), gbt_sweep_begin() hands it to
 * the service before nbtree's pass, which runs while the service takes the
 * TIDs out of the mirror (no snapshot sees those rows: the mirror's
 * answers are the same with or without them); gbt_sweep_end(), after the
 * pass, collects the answer.  Else gbt_sweep_end() reads the mirror back
 * and asks the callback entry by entry.  When neither can be done, the
 * mirror is invalidated instead.  Either way gbt_sweep_end() moves the
 * mirror to a new generation after nbtree's pass, which makes every export
 * that began before the pass ended unusable (it may hold dead entries).
 */
void
gbt_sweep_begin(GbtSweep *sweep, Relation index, IndexBulkDeleteCallback callback,
				void *callback_state)
{
	const ItemPointerData *dead;
	bool		palloced;

	memset(sweep, 0, sizeof(GbtSweep));
	if (gbt_shared == NULL)
		return;
	/* First: writers still holding entries of rows that died check them. */
	gbt_vacuum_epoch_bump(MyDatabaseId, RelationGetRelid(index));
	/* CREATE INDEX CONCURRENTLY's validation pass: its callback collects. */
	if (!index->rd_index->indisvalid || !gbt_service_running() ||
		!OidIsValid(gbt_mirror_key_type(index)))
		return;
	dead = gbt_vacuum_dead_items(index, callback, callback_state, &sweep->ndead, &palloced);
	if (dead == NULL)
		return;
	gbt_resync_flush();
	sweep->submitted = gbt_call_remove_submit(&sweep->call, index, dead, sweep->ndead);
	if (!sweep->submitted)
		gbt_call_end(&sweep->call);
	if (palloced)
		pfree((void *) dead);
	sweep->listed = true;
}

/* An error in nbtree's pass: withdraw the request. */
void
gbt_sweep_abandon(GbtSweep *sweep)
{
	if (sweep->submitted)
		gbt_call_end(&sweep->call);
	sweep->submitted = false;
}

/* The new generation after nbtree's pass (see gbt_sweep_begin()). */
static bool
sweep_new_generation(Relation index)
{
	GbtCall		call;
	bool		done;

	done = gbt_call_remove(&call, index, 0, true, NULL, 0) &&
		call.req->hdr.status == GBT_REPLY_OK;
	gbt_call_end(&call);
	return done;
}

void
gbt_sweep_end(GbtSweep *sweep, Relation index, IndexBulkDeleteCallback callback,
			  void *callback_state, int elevel)
{
	SweepState	st;
	uint64		mirror_id = 0;
	GbtReplyStatus status;
	bool		done = false;
	int64		removed = 0;

	if (gbt_shared == NULL)
		return;
	/* What VACUUM waits for beyond nbtree's pass. */
	INSTR_TIME_SET_CURRENT(sweep->start);
	if (!index->rd_index->indisvalid || !gbt_service_running() ||
		!OidIsValid(gbt_mirror_key_type(index)))
	{
		gbt_sweep_abandon(sweep);
		gbt_invalidate(MyDatabaseId, RelationGetRelid(index));
		return;
	}

	if (sweep->listed)
	{
		if (sweep->submitted)
		{
			done = gbt_call_collect(&sweep->call) &&
				sweep->call.req->hdr.status == GBT_REPLY_OK;
			if (done)
				removed = sweep->call.req->hdr.nresults;
			gbt_call_end(&sweep->call);
			sweep->submitted = false;
		}
		done = done && sweep_new_generation(index);
		swept(index, elevel, done, sweep->ndead, removed, sweep->start);
		return;
	}

	st.callback = callback;
	st.callback_state = callback_state;
	st.maxdead = 1024;
	st.ndead = 0;
	st.dead = palloc_extended(sizeof(ItemPointerData) * st.maxdead, MCXT_ALLOC_HUGE);
	if (gbt_dump_mirror(index, true, false, sweep_chunk, &st, &mirror_id, &status))
	{
		GbtCall		call;

		qsort(st.dead, st.ndead, sizeof(ItemPointerData), cmp_tid);
		done = gbt_call_remove(&call, index, mirror_id, false, st.dead, st.ndead) &&
			call.req->hdr.status == GBT_REPLY_OK;
		if (done)
			removed = call.req->hdr.nresults;
		gbt_call_end(&call);
	}
	pfree(st.dead);
	swept(index, elevel, done, st.ndead, removed, sweep->start);
}
