/*
 * export_heap.c
 *	  The export's one read of the heap: the entries the visibility map
 *	  leaves unknown (their block is not all-visible: a table loaded,
 *	  restored or replicated and not vacuumed since) decided from their
 *	  tuples, so that the mirror's stamps decide them instead of the map.
 *
 * An entry is cleared (becomes plain: every snapshot sees its row) when its
 * tuple is what VACUUM would call all-visible (heap_page_is_all_visible()):
 * a normal line pointer, not HOT-updated, HEAPTUPLE_LIVE to
 * HeapTupleSatisfiesVacuum() against OldestXmin, and inserted by a
 * transaction that precedes OldestXmin (or frozen).  An entry is left out
 * of the mirror when its row is what VACUUM would remove: a dead line
 * pointer (pruned), or a tuple not HOT-updated that is HEAPTUPLE_DEAD (its
 * deleter committed before OldestXmin, or its inserter aborted), so that
 * a table updated and deleted from, then restarted (a crash, a promotion),
 * is not left to the map for its dead rows' entries.  An entry whose tuple
 * is HEAPTUPLE_LIVE but whose committed inserter does not precede
 * OldestXmin (a snapshot older than its commit still runs: a long query
 * while a table is loaded and indexed), or HEAPTUPLE_RECENTLY_DEAD (its
 * deleter committed, but after such a snapshot), stays flagged, with its
 * inserter and deleter listed: the mirror stamps the entry with them, as
 * if they had come through the change log, and decides it for each
 * snapshot.  Anything else stays unknown, decided by the visibility map
 * as before.
 *
 * Why that is safe, whatever runs meanwhile (the same argument as for an
 * entry on a block the map says all-visible, read after the index):
 *
 * - Inserts.  OldestXmin (GetOldestNonRemovableTransactionId()) is taken
 *   before the heap is read: no running or later snapshot has an xmin below
 *   it, so a committed xmin that precedes it is seen by all of them.  An
 *   inserter still running fails the test (unknown); one committed after
 *   OldestXmin is listed, and a snapshot sees the row exactly when it sees
 *   that inserter commit (LIVE: no deleter, or one that aborted or only
 *   locked), which is what the stamp tells the service.  RECENTLY_DEAD:
 *   both committed (the deleter from the update XID of a multixact), and a
 *   snapshot sees the row when it sees the inserter commit and not the
 *   deleter.
 * - Deletes before our read, committed or in progress (updates other than
 *   HOT too): heap_delete() and heap_update() set xmax under the buffer's
 *   exclusive lock, and we read under its share lock, so the tuple is then
 *   RECENTLY_DEAD, DEAD or DELETE_IN_PROGRESS, not LIVE.  An xmax that only
 *   locks the row (SELECT FOR UPDATE, a multixact of lockers, heap_update()'s
 *   lock while it toasts) or whose deleter aborted leaves it LIVE: the row
 *   is alive, and a delete that follows is the next case.
 * - Deletes after our read: the capture trigger (it fires ALWAYS, checked
 *   by the caller) logs them at the deleter's pre-commit, after the export
 *   registered with the change log (gbt_build_mirror()), so the service
 *   stamps the entry's xmax before it answers with the mirror.
 * - HOT updates: a HOT-updated root keeps its entry for a later version
 *   whose xmin we did not read; it stays unknown (the simplest correct
 *   choice).  A HOT update after our read changes no indexed column, and
 *   the entry stays visible to the new version.
 * - Dead rows: HEAPTUPLE_DEAD against OldestXmin (taken before the read)
 *   is seen by no running or later snapshot, and a pruned line pointer is
 *   what pruning found so; a HOT-updated tuple is never left out, as its
 *   entry stands for the chain's later versions too.  VACUUM will take the
 *   entry out of the index; its sweep then finds nothing to remove.
 * - Reused TIDs: an index entry read before the heap could point, by then,
 *   to a line pointer VACUUM freed and another row took; but every VACUUM
 *   that removes index entries bumps the index's generation first
 *   (vacuum.c: gbt_sweep_begin()), so the service refuses this export,
 *   which read the generation before the index.  A heap-only tuple found
 *   at an entry's TID (no index entry points to one) stays unknown anyway.
 *
 * Hint bits HeapTupleSatisfiesVacuum() sets are set as it always does
 * (MarkBufferDirtyHint() under the share lock).
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/transam.h"
#include "catalog/pg_am.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/procarray.h"
#include "utils/rel.h"

#include "export.h"

/* What the export makes of an entry whose block is not all-visible. */
typedef enum RowVerdict
{
	ROW_UNKNOWN,				/* left to the visibility map */
	ROW_ALL_VISIBLE,			/* every snapshot sees it: a plain entry */
	ROW_COMMITTED,				/* who sees it: who sees its inserter commit */
	ROW_DEAD					/* no snapshot sees it: left out */
} RowVerdict;

/* What VACUUM would make of the tuple at tid, read under the buffer's lock. */
static RowVerdict
row_verdict(Relation heap, Buffer buf, Page page, ItemPointer tid,
			TransactionId oldest_xmin, TransactionId *xmin, TransactionId *xmax)
{
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	ItemId		lp;
	HeapTupleData tuple;

	if (off < FirstOffsetNumber || off > PageGetMaxOffsetNumber(page))
		return ROW_UNKNOWN;
	lp = PageGetItemId(page, off);
	if (ItemIdIsDead(lp))
		return ROW_DEAD;		/* pruned: dead to every snapshot */
	if (!ItemIdIsNormal(lp))
		return ROW_UNKNOWN;		/* redirect (a pruned HOT chain), unused */
	tuple.t_data = (HeapTupleHeader) PageGetItem(page, lp);
	tuple.t_len = ItemIdGetLength(lp);
	tuple.t_tableOid = RelationGetRelid(heap);
	tuple.t_self = *tid;
	if (HeapTupleHeaderIsHotUpdated(tuple.t_data) ||
		HeapTupleHeaderIsHeapOnly(tuple.t_data))
		return ROW_UNKNOWN;
	switch (HeapTupleSatisfiesVacuum(&tuple, oldest_xmin, buf))
	{
		case HEAPTUPLE_DEAD:
			return ROW_DEAD;
		case HEAPTUPLE_LIVE:
			/* its xmin committed; old enough for every snapshot to see it? */
			*xmin = HeapTupleHeaderGetXmin(tuple.t_data);
			if (TransactionIdPrecedes(*xmin, oldest_xmin))
				return ROW_ALL_VISIBLE;
			return TransactionIdIsNormal(*xmin) ? ROW_COMMITTED : ROW_UNKNOWN;
		case HEAPTUPLE_RECENTLY_DEAD:
			*xmin = HeapTupleHeaderGetXmin(tuple.t_data);
			*xmax = HeapTupleHeaderGetUpdateXid(tuple.t_data);
			return (TransactionIdIsNormal(*xmin) || *xmin == FrozenTransactionId) &&
				TransactionIdIsNormal(*xmax) ? ROW_COMMITTED : ROW_UNKNOWN;
		default:
			return ROW_UNKNOWN;
	}
}

static void *
grown(void *p, Size bytes)
{
	return p == NULL ? palloc_extended(bytes, MCXT_ALLOC_HUGE) : repalloc_huge(p, bytes);
}

static void
stamp_add(GbtEntryStamps *stamps, int64 pos, TransactionId xmin, TransactionId xmax)
{
	if (stamps->n == stamps->cap)
	{
		stamps->cap = Max(stamps->cap * 2, 1024);
		stamps->pos = grown(stamps->pos, sizeof(int64) * stamps->cap);
		stamps->xmin = grown(stamps->xmin, sizeof(TransactionId) * stamps->cap);
		stamps->xmax = grown(stamps->xmax, sizeof(TransactionId) * stamps->cap);
	}
	stamps->pos[stamps->n] = pos;
	stamps->xmin[stamps->n] = xmin;
	stamps->xmax[stamps->n++] = xmax;
}

/* The stamps' positions as they will be once the entries gone are left out. */
static void
stamps_renumber(GbtEntryStamps *stamps, const bool *gone, int64 n)
{
	int64	   *kept_before;
	int64		kept = 0;
	int64		i;

	if (stamps->n == 0)
		return;
	kept_before = palloc_extended(sizeof(int64) * n, MCXT_ALLOC_HUGE);
	for (i = 0; i < n; i++)
	{
		kept_before[i] = kept;
		kept += !gone[i];
	}
	for (i = 0; i < stamps->n; i++)
		stamps->pos[i] = kept_before[stamps->pos[i]];	/* (never gone) */
	pfree(kept_before);
}

/* The entries of e not flagged in gone, moved together in order. */
static void
leave_out(GbtEntries *e, const bool *gone)
{
	int64		i,
				kept = 0;

	for (i = 0; i < e->n; i++)
		if (!gone[i])
			gbt_copy_entry(e, kept++, e, i);
	e->n = kept;
}

/*
 * Clear GBT_ENTRY_XMIN_UNKNOWN on the entries of e whose rows every current
 * and future snapshot sees, and leave out of e those whose rows none sees
 * (above), and list in *stamps those whose committed inserter some
 * snapshot does not see yet (positions in e as it is returned), reading
 * each heap block that holds a flagged entry once, in block order, through
 * a bulk-read ring.  Blocks without flagged entries (the all-visible ones)
 * are not read.  Returns the number of entries cleared; *ndead, those left
 * out; *nread, the blocks read.
 */
int64
gbt_export_decide_unknown(Relation heap, GbtEntries *e, BlockNumber nblocks,
						  int64 *ndead, BlockNumber *nread, GbtEntryStamps *stamps)
{
	bool	   *gone = NULL;
	uint32	   *first;			/* per block: where its entries start in order */
	uint32	   *order;			/* flagged entries' positions, by block */
	int64		nflagged = 0;
	int64		ncleared = 0;
	int64		i;
	BlockNumber b;
	TransactionId oldest_xmin;
	BufferAccessStrategy strategy;

	*nread = 0;
	*ndead = 0;
	if (heap->rd_rel->relam != HEAP_TABLE_AM_OID || e->n > (int64) PG_UINT32_MAX ||
		nblocks == 0)
		return 0;

	/* A counting sort of the flagged entries by heap block. */
	first = palloc_extended(sizeof(uint32) * ((Size) nblocks + 1),
							MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	for (i = 0; i < e->n; i++)
	{
		if ((e->nulls[i] & GBT_ENTRY_XMIN_UNKNOWN) == 0)
			continue;
		b = ItemPointerGetBlockNumber(&e->tids[i]);
		if (b >= nblocks)
			continue;			/* stays unknown */
		first[b + 1]++;
		nflagged++;
	}
	if (nflagged == 0)
	{
		pfree(first);
		return 0;
	}
	for (b = 0; b < nblocks; b++)
		first[b + 1] += first[b];
	order = palloc_extended(sizeof(uint32) * nflagged, MCXT_ALLOC_HUGE);
	for (i = 0; i < e->n; i++)
	{
		if ((e->nulls[i] & GBT_ENTRY_XMIN_UNKNOWN) == 0)
			continue;
		b = ItemPointerGetBlockNumber(&e->tids[i]);
		if (b < nblocks)
			order[first[b]++] = (uint32) i;
	}
	/* (first[b] is now where block b's entries end: block b + 1's start) */

	/* Before any tuple is read: see "Inserts" above. */
	oldest_xmin = GetOldestNonRemovableTransactionId(heap);
	strategy = GetAccessStrategy(BAS_BULKREAD);
	i = 0;
	for (b = 0; b < nblocks; b++)
	{
		Buffer		buf;
		Page		page;

		if (i == first[b])
			continue;
		CHECK_FOR_INTERRUPTS();
		buf = ReadBufferExtended(heap, MAIN_FORKNUM, b, RBM_NORMAL, strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		(*nread)++;
		for (; i < first[b]; i++)
		{
			uint32		pos = order[i];
			TransactionId xmin = InvalidTransactionId;
			TransactionId xmax = InvalidTransactionId;

			RowVerdict verdict = PageIsNew(page) ? ROW_UNKNOWN :
				row_verdict(heap, buf, page, &e->tids[pos], oldest_xmin, &xmin, &xmax);

			if (verdict == ROW_COMMITTED)
				stamp_add(stamps, pos, xmin, xmax);
			else if (verdict == ROW_ALL_VISIBLE)
			{
				e->nulls[pos] &= ~GBT_ENTRY_XMIN_UNKNOWN;
				ncleared++;
			}
			else if (verdict == ROW_DEAD)
			{
				if (gone == NULL)
					gone = palloc_extended(sizeof(bool) * e->n,
										   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
				gone[pos] = true;
				(*ndead)++;
			}
		}
		UnlockReleaseBuffer(buf);
	}
	FreeAccessStrategy(strategy);
	pfree(order);
	pfree(first);
	if (gone != NULL)
	{
		stamps_renumber(stamps, gone, e->n);
		leave_out(e, gone);
		pfree(gone);
	}
	return ncleared;
}
