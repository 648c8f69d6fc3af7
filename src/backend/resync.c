/*
 * resync.c
 *	  Commit-time resync, the backend's side: what this transaction inserted
 *	  into gpubtree indexes reaches the service's change log before the
 *	  commit becomes visible (see shmem.h for the invariant).
 *
 * aminsert adds (key, TID) to a batch in this backend's memory.  The batch
 * is written to the shared change log at pre-commit and PREPARE, before a
 * GPU scan or mirror build of this session (so the session sees its own
 * rows), and whenever it fills.  Writing early only adds entries of rows
 * that may yet abort, which the invariant allows; an abort just forgets what
 * was not written, and so does a subtransaction's abort: its entries could
 * otherwise reach the log after VACUUM freed their line pointers (their
 * tuples die at the rollback, not at the commit), pairing a dead key with a
 * reused TID.  When the log has no room, the writer wakes the service and
 * waits for it to apply the log, so that a bulk change streams through a
 * log smaller than itself: within the statement's one budget of
 * gpubtree.service_timeout for all its waits on the service (client.c),
 * so that a stalled service holds a statement of many batches no longer
 * than one of one batch.  A transaction
 * that inserts more into one index than an eighth of the index's mirror
 * (or of the log, for small mirrors) stops logging them and invalidates the
 * mirror instead, at the same points: rebuilding once is cheaper than
 * shipping a bulk load entry by entry.
 *
 * INSERT ... ON CONFLICT super-deletes a speculative tuple that meets a
 * conflict (its xmin made Invalid) after aminsert batched its entries, and
 * no trigger hears of it: written as they are, the entries would be stamped
 * inserted by a transaction that commits, and aggregates the stamps decide
 * would count a row that never existed.  So in a transaction that ran such
 * a statement (gbt_resync_note_speculative()), each write first drops the
 * entries whose tuple is no longer this transaction's, and keeps back
 * those whose speculative insertion is still under way, for the next write.
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_am.h"
#include "client.h"
#include "keytypes.h"
#include "miscadmin.h"
#include "resync.h"
#include "settings.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"


#define GBT_BATCH_SIZE 8192

/* What this transaction did to one index. */
typedef struct PendingIndex
{
	Oid			indexrelid;
	Oid			heaprelid;
	uint64		epoch;			/* its VACUUM epoch when entries were batched */
	bool		epoch_set;		/* it has entries in the batch */
	int64		logged;			/* inserted entries batched or written */
	int64		log_max;		/* beyond this many, invalidate instead */
	bool		invalidate;		/* too many: invalidate instead of logging */
	bool		dirty;			/* inserted since the last invalidation */
} PendingIndex;

/* Where the batch stood when an open subtransaction began. */
typedef struct SubxactMark
{
	SubTransactionId subid;
	int			nbatch;
} SubxactMark;

static GbtLogEntry *batch = NULL;
static int	nbatch = 0;
static PendingIndex *pending = NULL;
static int	npending = 0;
static int	maxpending = 0;
static SubxactMark *marks = NULL;
static int	nmarks = 0;
static int	maxmarks = 0;
static bool wrote_log = false;	/* this transaction wrote to the log */
static bool speculative = false;	/* it ran an INSERT ... ON CONFLICT */

static void resync_xact_callback(XactEvent event, void *arg);
static void resync_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
									SubTransactionId parentSubid, void *arg);

/* At library load, when preloaded (only then is there a service to feed). */
void
gbt_resync_init(void)
{
	RegisterXactCallback(resync_xact_callback, NULL);
	RegisterSubXactCallback(resync_subxact_callback, NULL);
}

static PendingIndex *
pending_find(Oid indexrelid)
{
	int			i;

	for (i = npending - 1; i >= 0; i--)
		if (pending[i].indexrelid == indexrelid)
			return &pending[i];
	return NULL;
}

static PendingIndex *
pending_for(Oid indexrelid)
{
	PendingIndex *pi = pending_find(indexrelid);

	if (pi != NULL)
		return pi;
	if (npending == maxpending)
	{
		maxpending = Max(8, maxpending * 2);
		pending = pending == NULL ?
			MemoryContextAlloc(TopMemoryContext, sizeof(PendingIndex) * maxpending) :
			repalloc(pending, sizeof(PendingIndex) * maxpending);
	}
	memset(&pending[npending], 0, sizeof(PendingIndex));
	pending[npending].indexrelid = indexrelid;
	pending[npending].log_max = Max((int64) gbt_shared->log.size,
									gbt_published_entries(MyDatabaseId, indexrelid)) / 8;
	return &pending[npending++];
}


/* Under the log's lock: no sweep of the index since its entries were batched. */
static bool
epoch_unchanged(const GbtMirrorKey *key)
{
	PendingIndex *pi = pending_find(key->indexrelid);

	return pi == NULL || !pi->epoch_set ||
		pi->epoch == gbt_vacuum_epoch(key->dbid, key->indexrelid);
}

/* What became of the heap tuple an entry of this transaction points to. */
typedef enum TupleFate
{
	TUPLE_GONE,					/* not this transaction's (any more) */
	TUPLE_OURS,					/* inserted by this transaction, still there */
	TUPLE_SPECULATIVE			/* ours, its speculative insertion not done */
} TupleFate;

static TupleFate
tuple_fate(Relation heap, BlockNumber nblocks, ItemPointer tid)
{
	BlockNumber blkno = ItemPointerGetBlockNumber(tid);
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	Buffer		buf;
	Page		page;
	TupleFate	fate = TUPLE_GONE;

	if (blkno >= nblocks)
		return TUPLE_GONE;		/* cannot be: our lock keeps VACUUM from truncating */
	buf = ReadBuffer(heap, blkno);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (off <= PageGetMaxOffsetNumber(page))
	{
		ItemId		lp = PageGetItemId(page, off);

		/* A super-deleted speculative tuple has an invalid xmin. */
		if (ItemIdIsNormal(lp))
		{
			HeapTupleHeader tup = (HeapTupleHeader) PageGetItem(page, lp);

			if (TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetRawXmin(tup)))
				fate = HeapTupleHeaderIsSpeculative(tup) ?
					TUPLE_SPECULATIVE : TUPLE_OURS;
		}
	}
	UnlockReleaseBuffer(buf);
	return fate;
}

/* Keep only the entries keep[] says, and move the savepoint marks with them. */
static void
compact_batch(const bool *keep)
{
	int		   *kept_before = palloc(sizeof(int) * (nbatch + 1));
	int			i,
				j,
				o;

	for (j = 0, o = 0; j < nbatch; j++)
	{
		kept_before[j] = o;
		if (keep[j])
			batch[o++] = batch[j];
	}
	kept_before[nbatch] = o;
	for (i = 0; i < nmarks; i++)
		marks[i].nbatch = kept_before[marks[i].nbatch];
	nbatch = o;
	pfree(kept_before);
}

/*
 * A VACUUM swept some of the batch's indexes since their entries were
 * batched: it may have freed (and others reused) the TIDs of rows that
 * died before this transaction's commit.  Keep only entries whose tuple is
 * still this transaction's; for a table that is not heap, give up logging
 * and invalidate the index's mirror instead.
 */
static void
recheck_batch(void)
{
	bool	   *keep = palloc(sizeof(bool) * nbatch);
	int			i,
				j;

	for (j = 0; j < nbatch; j++)
		keep[j] = true;
	for (i = 0; i < npending; i++)
	{
		PendingIndex *pi = &pending[i];
		uint64		now;
		Relation	heap;
		bool		heap_am;
		BlockNumber nblocks;

		if (!pi->epoch_set)
			continue;
		now = gbt_vacuum_epoch(MyDatabaseId, pi->indexrelid);
		if (now == pi->epoch)
			continue;
		pi->epoch = now;		/* read first: a later sweep shows again */
		/* This transaction holds a lock on the table since it inserted. */
		heap = table_open(pi->heaprelid, NoLock);
		heap_am = heap->rd_rel->relam == HEAP_TABLE_AM_OID;
		nblocks = RelationGetNumberOfBlocks(heap);
		if (!heap_am)
			pi->invalidate = pi->dirty = true;
		for (j = 0; j < nbatch; j++)
			if (batch[j].key.indexrelid == pi->indexrelid)
				keep[j] = heap_am && (batch[j].kind == GBT_LOG_DELETE ||
									  tuple_fate(heap, nblocks, &batch[j].tid) != TUPLE_GONE);
		table_close(heap, NoLock);
	}
	compact_batch(keep);
	pfree(keep);
}

/*
 * In a transaction that ran INSERT ... ON CONFLICT: drop the inserts whose
 * tuple is not this transaction's (super-deleted, or pruned after that),
 * and return how many entries at the batch's end wait on a speculative
 * insertion still under way (none when committing: every one is done).
 * Those are the running row's and come last; one found before another
 * kind of entry (a flush from inside the row's index expressions) costs
 * its index's mirror instead.  A table that is not heap cannot be read
 * here: its indexes' mirrors are invalidated.
 */
static int
settle_speculative(bool committing)
{
	bool	   *keep = palloc(sizeof(bool) * nbatch);
	bool	   *wait = palloc0(sizeof(bool) * nbatch);
	int			nwait = 0;
	int			i,
				j;

	for (j = 0; j < nbatch; j++)
		keep[j] = true;
	for (i = 0; i < npending; i++)
	{
		PendingIndex *pi = &pending[i];
		Relation	heap;
		bool		heap_am;
		BlockNumber nblocks;

		if (!pi->epoch_set)
			continue;			/* nothing of it in the batch */
		/* This transaction holds a lock on the table since it inserted. */
		heap = table_open(pi->heaprelid, NoLock);
		heap_am = heap->rd_rel->relam == HEAP_TABLE_AM_OID;
		nblocks = RelationGetNumberOfBlocks(heap);
		if (!heap_am)
			pi->invalidate = pi->dirty = true;
		for (j = 0; j < nbatch; j++)
		{
			TupleFate	fate;

			if (batch[j].key.indexrelid != pi->indexrelid)
				continue;
			if (!heap_am)
			{
				keep[j] = false;
				continue;
			}
			if (batch[j].kind == GBT_LOG_DELETE)
				continue;
			fate = tuple_fate(heap, nblocks, &batch[j].tid);
			keep[j] = fate != TUPLE_GONE;
			wait[j] = fate == TUPLE_SPECULATIVE && !committing;
		}
		table_close(heap, NoLock);
	}

	/* The entries that wait: the batch's tail; any before it, invalidate. */
	for (j = nbatch - 1; j >= 0 && (wait[j] || !keep[j]); j--)
		;
	for (; j >= 0; j--)
		if (wait[j])
		{
			PendingIndex *pi = pending_find(batch[j].key.indexrelid);

			pi->invalidate = pi->dirty = true;
			keep[j] = wait[j] = false;
		}
	for (j = 0; j < nbatch; j++)
		nwait += keep[j] && wait[j];
	compact_batch(keep);
	pfree(keep);
	pfree(wait);
	return nwait;
}

/*
 * Write the batch to the log; if it does not fit, invalidate its indexes.
 * committing: at pre-commit (see gbt_wait_for_log_room()).
 */
static void
write_batch(bool committing)
{
	GbtLogWrite result = GBT_LOG_WRITTEN;
	int			i;
	int64		mark;
	int			nwait = 0;

	if (nbatch > 0 && speculative)
		nwait = settle_speculative(committing);
	if (nbatch == nwait)
		return;
	mark = gbt_service_wait_mark();
	while ((result = gbt_log_write(batch, nbatch - nwait, epoch_unchanged)) != GBT_LOG_WRITTEN)
	{
		if (result == GBT_LOG_RECHECK)
		{
			/* (keeps the waiting entries, this transaction's, at the end) */
			recheck_batch();
			continue;
		}
		/* Full: the service frees room as it applies the log. */
		if (!gbt_wait_for_log_room(committing))
			break;
	}
	if (result == GBT_LOG_WRITTEN)
	{
		wrote_log = true;
		gbt_service_wait_refund(mark);	/* the service made room */
	}
	if (result == GBT_LOG_FULL)
	{
		/* Every index this transaction touched: a superset is fine. */
		for (i = 0; i < npending; i++)
			gbt_invalidate(MyDatabaseId, pending[i].indexrelid);
	}
	/* Written entries are in the log for good, whatever aborts later. */
	for (i = 0; i < nmarks; i++)
		marks[i].nbatch = Max(0, marks[i].nbatch - (nbatch - nwait));
	if (nwait > 0)
		memmove(batch, batch + nbatch - nwait, sizeof(GbtLogEntry) * nwait);
	nbatch = nwait;
	for (i = 0; i < npending; i++)
		pending[i].epoch_set = false;
	/* The waiting entries' indexes: their epoch as read when batched. */
	for (i = 0; i < nwait; i++)
		pending_find(batch[i].key.indexrelid)->epoch_set = true;
}

/*
 * A new batch entry for the index (NULL: its mirror is invalidated instead,
 * too many changes).
 */
static GbtLogEntry *
batch_entry(const GbtMirrorKey *key, Oid heaprelid, GbtLogKind kind)
{
	PendingIndex *pi;
	GbtLogEntry *e;

	if (batch == NULL)
		batch = MemoryContextAlloc(TopMemoryContext, sizeof(GbtLogEntry) * GBT_BATCH_SIZE);

	pi = pending_for(key->indexrelid);
	pi->heaprelid = heaprelid;
	pi->dirty = true;

	/*
	 * Only inserts count toward the limit: a deletion carries no values and
	 * costs the service a search, where a rebuild would read the whole index.
	 */
	if (pi->invalidate || (kind == GBT_LOG_INSERT && ++pi->logged > pi->log_max))
	{
		pi->invalidate = true;
		return NULL;
	}

	/* A batch always fits into an empty log. */
	if (nbatch == Min(GBT_BATCH_SIZE, gbt_shared->log.size / 4))
	{
		write_batch(false);
		/* All of it waits on one row's speculative insertion: cannot be. */
		if (nbatch == Min(GBT_BATCH_SIZE, gbt_shared->log.size / 4))
			elog(ERROR, "gpubtree: change batch full of one row's entries");
	}
	if (!pi->epoch_set)
	{
		/* Before the row can die, so a sweep that may free it moves it. */
		pi->epoch = gbt_vacuum_epoch(MyDatabaseId, pi->indexrelid);
		pi->epoch_set = true;
	}
	e = &batch[nbatch++];
	memset(e, 0, sizeof(GbtLogEntry));
	e->key = *key;
	e->kind = kind;
	/* The heap tuple's xmin or xmax: the running (sub)transaction. */
	e->xid = GetCurrentTransactionId();
	return e;
}

/*
 * Called by aminsert after nbtree has inserted the entry, so that an export
 * that began before the log write either holds the entry or is followed by
 * the write.
 */
void
gbt_resync_insert(Relation index, const Datum *values, const bool *isnull,
				  ItemPointer tid)
{
	Oid			keytype;
	GbtLogEntry *e;
	GbtColumns	cols;
	GbtMirrorKey key;

	/* No service, no mirrors; NULL keys and other types are never mirrored. */
	if (gbt_shared == NULL || isnull[0] ||
		!OidIsValid(keytype = gbt_mirror_key_type(index)))
		return;

	gbt_fill_key(&key, index);
	e = batch_entry(&key, index->rd_index->indrelid, GBT_LOG_INSERT);
	if (e == NULL)
		return;
	e->ikey = gbt_encode_key(values[0], keytype);
	e->tid = *tid;
	gbt_index_columns(index, &cols);
	e->nulls = gbt_entry_values(index, &cols, values, isnull, e->vals);
}

/*
 * Called by the capture trigger (capture.c) for a row this transaction
 * deleted, or updated other than in place (HOT): the index entry (ikey,
 * root) is deleted by this transaction.
 */
void
gbt_resync_delete(const GbtMirrorKey *key, Oid heaprelid, uint64 ikey,
				  ItemPointer root)
{
	GbtLogEntry *e;

	if (gbt_shared == NULL)
		return;
	e = batch_entry(key, heaprelid, GBT_LOG_DELETE);
	if (e == NULL)
		return;
	e->ikey = ikey;
	e->tid = *root;
}

/*
 * Called at the start of an INSERT ... ON CONFLICT (btree_label.c): from now
 * to its end, the transaction's writes check its inserts' tuples.
 */
void
gbt_resync_note_speculative(void)
{
	speculative = true;
}

/*
 * Make everything this transaction inserted so far reach the mirrors: write
 * the batch, and invalidate the indexes it stopped logging for.
 */
static void
flush(bool committing)
{
	int			i;

	write_batch(committing);
	for (i = 0; i < npending; i++)
		if (pending[i].invalidate && pending[i].dirty)
		{
			gbt_invalidate(MyDatabaseId, pending[i].indexrelid);
			pending[i].dirty = false;
		}
}

void
gbt_resync_flush(void)
{
	flush(false);
}

/*
 * Tell the service that the transaction whose entries it has, and its
 * committed subtransactions, committed (at most GBT_COMMITTED_MAX IDs; the
 * others it finds in the commit log).
 */
#define GBT_COMMITTED_MAX 64

static void
log_committed(void)
{
	TransactionId xids[GBT_COMMITTED_MAX];
	TransactionId *children;
	int			nchildren = xactGetCommittedChildren(&children);
	int			n;

	xids[0] = GetTopTransactionIdIfAny();
	if (!TransactionIdIsValid(xids[0]))
		return;
	for (n = 1; n < GBT_COMMITTED_MAX && n - 1 < nchildren; n++)
		xids[n] = children[n - 1];
	gbt_log_committed(xids, n);
}

static void
resync_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			flush(true);
			break;
		case XACT_EVENT_COMMIT:
			if (wrote_log)
				log_committed();
			/* FALLTHROUGH */
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			nbatch = 0;
			npending = 0;
			nmarks = 0;
			wrote_log = false;
			speculative = false;
			break;
		default:
			break;
	}
}

static void
resync_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						SubTransactionId parentSubid, void *arg)
{
	int			i;

	switch (event)
	{
		case SUBXACT_EVENT_START_SUB:
			if (nmarks == maxmarks)
			{
				maxmarks = Max(8, maxmarks * 2);
				marks = marks == NULL ?
					MemoryContextAlloc(TopMemoryContext, sizeof(SubxactMark) * maxmarks) :
					repalloc(marks, sizeof(SubxactMark) * maxmarks);
			}
			marks[nmarks].subid = mySubid;
			marks[nmarks].nbatch = nbatch;
			nmarks++;
			break;
		case SUBXACT_EVENT_COMMIT_SUB:
			/* Its entries now belong to its parent. */
			for (i = nmarks - 1; i >= 0; i--)
				if (marks[i].subid == mySubid)
				{
					nmarks = i;
					break;
				}
			break;
		case SUBXACT_EVENT_ABORT_SUB:
			/* Forget what it added and did not write; unknown: all of it. */
			for (i = nmarks - 1; i >= 0 && marks[i].subid != mySubid; i--)
				;
			nbatch = i >= 0 ? Min(nbatch, marks[i].nbatch) : 0;
			nmarks = Max(i, 0);
			break;
		default:
			break;
	}
}
