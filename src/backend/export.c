/*
 * export.c
 *	  Reading a whole index out for its mirror, and having the service build
 *	  the mirror from it.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/itup.h"
#include "access/relscan.h"
#include "access/table.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "build_jobs.h"
#include "capture.h"
#include "client.h"
#include "export.h"
#include "keytypes.h"
#include "prefault.h"
#include "resync.h"
#include "scanstats.h"
#include "shmem.h"
#include "visibility.h"
#include "pg_compat.h"

static void
swap_entries(GbtEntries *e, int64 i, int64 j)
{
	uint64		k = e->keys[i];
	ItemPointerData t = e->tids[i];
	uint8		nl = e->nulls[i];
	int			c;

	e->keys[i] = e->keys[j];
	e->keys[j] = k;
	e->tids[i] = e->tids[j];
	e->tids[j] = t;
	e->nulls[i] = e->nulls[j];
	e->nulls[j] = nl;
	for (c = 0; c < e->ncols; c++)
	{
		int64		v = e->vals[c][i];

		e->vals[c][i] = e->vals[c][j];
		e->vals[c][j] = v;
	}
}

static void
reverse_entries(GbtEntries *e, int64 from, int64 to)
{
	for (to--; from < to; from++, to--)
		swap_entries(e, from, to);
}

/*
 * Put the entries of [from, to), which share one key, in TID order: a
 * multi-column index orders them by its other key columns first.
 */
static void
sort_run_by_tid(GbtEntries *e, int64 from, int64 to)
{
	int64		n = to - from;
	int64	   *perm;
	GbtEntries	tmp;
	int64		i;
	int			c;

	for (i = from + 1; i < to; i++)
		if (ItemPointerCompare(&e->tids[i - 1], &e->tids[i]) > 0)
			break;
	if (i >= to)
		return;					/* already in order */

	perm = gbt_entries_order(e, from, to, false);

	gbt_entries_init(&tmp, e->ncols, n);
	for (i = 0; i < n; i++)
	{
		tmp.tids[i] = e->tids[perm[i]];
		tmp.nulls[i] = e->nulls[perm[i]];
		for (c = 0; c < e->ncols; c++)
			tmp.vals[c][i] = e->vals[c][perm[i]];
	}
	memcpy(&e->tids[from], tmp.tids, sizeof(ItemPointerData) * n);
	memcpy(&e->nulls[from], tmp.nulls, sizeof(uint8) * n);
	for (c = 0; c < e->ncols; c++)
		memcpy(&e->vals[c][from], tmp.vals[c], sizeof(int64) * n);
	gbt_entries_free(&tmp);
	pfree(perm);
}

/*
 * Room for about as many entries as the index holds, and a little more:
 * what an export is read into.
 */
int64
gbt_export_room(Relation index)
{
	return gbt_estimate_entries(index) / 16 * 17 + 1024;
}

/*
 * Read every entry of the index with a non-NULL key, in (key, TID) order,
 * with its mirrored column values, into out (initialised by the caller,
 * with room for gbt_export_room() entries, else it grows as it fills):
 * from its leaf pages (export_leaves.c).  Without key_values, an integer
 * key column's values are left out (gbt_export_leaves()).
 */
int64
gbt_export_index(Relation heap, Relation index, Oid keytype,
				 const GbtColumns *cols, GbtEntries *out, bool key_values,
				 GbtExportProgress progress, void *progress_arg)
{
	bool		desc = (index->rd_indoption[0] & INDOPTION_DESC) != 0;
	bool		multikey = IndexRelationGetNumberOfKeyAttributes(index) > 1;
	int64		n;

	n = gbt_export_leaves(index, keytype, cols, out, key_values, progress, progress_arg);
	out->n = n;

	/*
	 * A DESC leading column comes out in descending key order: reverse it
	 * all.  Then put each run of equal keys in TID order, as the mirror
	 * holds them: reversed runs of a single-column index just need reversing
	 * back, while a multi-column index orders a run by its later columns.
	 */
	if (desc)
		reverse_entries(out, 0, n);
	if (desc || multikey)
	{
		int64		i;
		int64		run;

		for (i = 0; i < n; i = run)
		{
			for (run = i + 1; run < n && out->keys[run] == out->keys[i]; run++)
				;
			if (run - i < 2)
				continue;
			if (multikey)
				sort_run_by_tid(out, i, run);
			else
				reverse_entries(out, i, run);
		}
	}
	return n;
}

/*
 * Flag the exported entries on heap blocks that are not all-visible: the
 * mirror will decide them by the visibility map (snapview.h).  The map is
 * read after the entries, as an index-only scan reads it after the index:
 * a block all-visible now holds only rows every snapshot sees, and a row
 * deleted from now on is logged by the capture trigger after our export
 * registered.  Then the flagged entries' tuples are read once and those
 * whose rows every snapshot sees are cleared (export_heap.c), so that a
 * table not vacuumed since its load is not left to the map; those a
 * snapshot older than their inserter's commit does not see are listed in
 * stamps, with that inserter.
 */
static void
flag_unknown(Relation heap, GbtEntries *e, GbtEntryStamps *stamps)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(heap);
	int64		nvisible;
	uint8	   *visible = gbt_read_visibility(heap, nblocks, &nvisible);
	int64		nflagged = 0;
	int64		ncleared;
	int64		ndead;
	BlockNumber nread;
	instr_time	start;
	instr_time	elapsed;
	int64		i;

	for (i = 0; i < e->n; i++)
	{
		BlockNumber b = ItemPointerGetBlockNumber(&e->tids[i]);

		if (b >= nblocks || !(visible[b >> 3] & (1 << (b & 7))))
		{
			e->nulls[i] |= GBT_ENTRY_XMIN_UNKNOWN;
			nflagged++;
		}
	}
	pfree(visible);
	if (nflagged == 0)
		return;
	INSTR_TIME_SET_CURRENT(start);
	ncleared = gbt_export_decide_unknown(heap, e, nblocks, &ndead, &nread, stamps);
	INSTR_TIME_SET_CURRENT(elapsed);
	INSTR_TIME_SUBTRACT(elapsed, start);
	elog(DEBUG1, "gpubtree: export of \"%s\": %lld of %lld entries on blocks not all-visible decided from the heap, %lld stamped with their inserter (committed after a snapshot still running), %lld of dead rows left out (%u blocks read in %.1f ms)",
		 RelationGetRelationName(heap), (long long) ncleared, (long long) nflagged,
		 (long long) stamps->n, (long long) ndead, nread, INSTR_TIME_GET_MILLISEC(elapsed));
}

/*
 * Export the index and have the service build its mirror.  The export is
 * registered with the change log first, so that the service can add what
 * is logged while it runs; the generation read before that tells the service
 * whether anything the log cannot carry happened meanwhile.  On failure,
 * why says what happened.
 */
bool
gbt_build_mirror(Relation index, Oid keytype, GbtExportProgress progress,
				 void *progress_arg, TimestampTz asked, char *why, Size whylen)
{
	GbtBuildPhases phases = {0};
	uint64		generation;
	uint64		log_start;
	uint64		ticket;
	int			service_pid;
	GbtColumns	cols;
	GbtEntries	entries;
	Relation	heap;
	bool		ok;
	GbtCall		call = {0};
	bool		answered = false;
	GbtMirrorKey key;
	bool		captured;
	GbtEntryStamps stamps = {0};

	gbt_resync_flush();
	generation = gbt_generation(MyDatabaseId, RelationGetRelid(index));
	gbt_fill_key(&key, index);
	gbt_index_columns(index, &cols);
	if (!gbt_register_build(&key, &log_start, &ticket, &service_pid))
	{
		strlcpy(why, "no GPU service, or another export of the index under way", whylen);
		return false;
	}
	pg_atomic_fetch_add_u64(&gbt_shared->exports, 1);
	PG_TRY();
	{
		/* The caller holds a lock on the table. */
		heap = table_open(index->rd_index->indrelid, NoLock);
		captured = gbt_capture_active_for_build(heap, index);
		phases.started = GetCurrentTimestamp();
		phases.asked = asked != 0 ? asked : phases.started;

		/*
		 * Read straight into the request's segment, where the service reads
		 * them: when the index holds more than estimated, they move out to
		 * local memory as they outgrow it, and are copied into a larger one
		 * at the hand-over (gbt_call_build()).
		 */
		if (!gbt_call_build_begin(&call, index, generation, &cols, gbt_export_room(index),
								  &entries))
			gbt_entries_init(&entries, cols.ncols, gbt_export_room(index));
		gbt_export_index(heap, index, keytype, &cols, &entries, false, progress,
						 progress_arg);
		phases.read = GetCurrentTimestamp();
		if (captured)
			flag_unknown(heap, &entries, &stamps);
		phases.decided = GetCurrentTimestamp();
		table_close(heap, NoLock);

		answered = gbt_call_build(&call, index, generation, log_start, ticket, service_pid,
								  captured, &cols, &entries, &stamps, &phases);
	}
	PG_FINALLY();
	{
		/* before an error lets the segment go */
		gbt_prefault_stop(call.prefault);
		call.prefault = NULL;
		gbt_unregister_build();
	}
	PG_END_TRY();
	if (stamps.pos != NULL)
	{
		pfree(stamps.pos);
		pfree(stamps.xmin);
		pfree(stamps.xmax);
	}

	if (answered && call.req->hdr.status == GBT_REPLY_OK)
		gbt_scan_stats_add_build(call.req->hdr.device_ms);
	else
		strlcpy(why, call.req == NULL ? "no shared memory for the export" :
				answered && call.req->hdr.message[0] != '\0' ? call.req->hdr.message :
				"the service did not build it", whylen);
	ok = answered && call.req->hdr.status == GBT_REPLY_OK;
	gbt_call_end(&call);
	return ok;
}

