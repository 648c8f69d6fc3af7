/*
 * resync.c
 *	  Commit-time resync, the backend's side: what this transaction inserted
 *	  into gpubtree indexes reaches the service's change log before the
 *	  commit becomes visible (see service.h for the invariant).
 *
 * aminsert adds (key, TID) to a batch in this backend's memory.  The batch
 * is written to the shared change log at pre-commit and PREPARE, before a
 * GPU scan or mirror build of this session (so the session sees its own
 * rows), and whenever it fills.  Writing early only adds entries of rows
 * that may yet abort, which the invariant allows; an abort just forgets what
 * was not written, and so does a subtransaction's abort: its entries could
 * otherwise reach the log after VACUUM freed their line pointers (their
 * tuples die at the rollback, not at the commit), pairing a dead key with a
 * reused TID.  A transaction that inserts more than GBT_XACT_LOG_MAX
 * entries into one index stops logging them and invalidates the index's
 * mirror instead, at the same points: rebuilding once is cheaper than
 * shipping a bulk load entry by entry.
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gpuscan.h"
#include "resync.h"
#include "service.h"

#define GBT_BATCH_SIZE 8192
#define GBT_XACT_LOG_MAX ((int64) gbt_shared->log.size / 8)

/* What this transaction did to one index. */
typedef struct PendingIndex
{
	Oid			indexrelid;
	int64		logged;			/* entries batched or written */
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
pending_for(Oid indexrelid)
{
	int			i;

	for (i = npending - 1; i >= 0; i--)
		if (pending[i].indexrelid == indexrelid)
			return &pending[i];
	if (npending == maxpending)
	{
		maxpending = Max(8, maxpending * 2);
		pending = pending == NULL ?
			MemoryContextAlloc(TopMemoryContext, sizeof(PendingIndex) * maxpending) :
			repalloc(pending, sizeof(PendingIndex) * maxpending);
	}
	memset(&pending[npending], 0, sizeof(PendingIndex));
	pending[npending].indexrelid = indexrelid;
	return &pending[npending++];
}

/* Write the batch to the log; if it does not fit, invalidate its indexes. */
static void
write_batch(void)
{
	int			i;

	if (nbatch == 0)
		return;
	if (!gbt_log_write(batch, nbatch))
	{
		/* Every index this transaction touched: a superset is fine. */
		for (i = 0; i < npending; i++)
			gbt_invalidate(MyDatabaseId, pending[i].indexrelid);
	}
	nbatch = 0;
	/* Written entries are in the log for good, whatever aborts later. */
	for (i = 0; i < nmarks; i++)
		marks[i].nbatch = 0;
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
	PendingIndex *pi;
	Oid			keytype;
	GbtLogEntry *e;
	GbtColumns	cols;

	/* No service, no mirrors; NULL keys and other types are never mirrored. */
	if (gbt_shared == NULL || isnull[0] ||
		!OidIsValid(keytype = gbt_mirror_key_type(index)))
		return;

	if (batch == NULL)
		batch = MemoryContextAlloc(TopMemoryContext, sizeof(GbtLogEntry) * GBT_BATCH_SIZE);

	pi = pending_for(RelationGetRelid(index));
	pi->dirty = true;
	if (pi->invalidate || ++pi->logged > GBT_XACT_LOG_MAX)
	{
		pi->invalidate = true;
		return;
	}

	if (nbatch == GBT_BATCH_SIZE)
		write_batch();
	e = &batch[nbatch++];
	e->key.dbid = MyDatabaseId;
	e->key.indexrelid = RelationGetRelid(index);
	e->key.relfilenode = index->rd_node.relNode;
	e->ikey = gbt_encode_key(values[0], keytype);
	e->tid = *tid;
	gbt_index_columns(index, &cols);
	e->nulls = gbt_entry_values(index, &cols, values, isnull, e->vals);
}

/*
 * Make everything this transaction inserted so far reach the mirrors: write
 * the batch, and invalidate the indexes it stopped logging for.
 */
void
gbt_resync_flush(void)
{
	int			i;

	write_batch();
	for (i = 0; i < npending; i++)
		if (pending[i].invalidate && pending[i].dirty)
		{
			gbt_invalidate(MyDatabaseId, pending[i].indexrelid);
			pending[i].dirty = false;
		}
}

static void
resync_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			gbt_resync_flush();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			nbatch = 0;
			npending = 0;
			nmarks = 0;
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
