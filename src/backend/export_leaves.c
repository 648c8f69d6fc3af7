/*
 * export_leaves.c
 *	  An index's entries read for an export straight from its leaf pages,
 *	  left to right, without an index scan's per-entry calls.
 *
 * The walk is nbtree's own forward scan (_bt_readnextpage()) without its
 * bookkeeping: each leaf page is copied under its share lock together
 * with its right-link, the lock is let go, and its items are read from
 * the copy.  A page split after the copy moves items to the right of it,
 * past the right-link kept, so no entry is read twice; an entry there
 * before the export is never missed (Lehman and Yao).  Entries inserted
 * meanwhile may or may not be read: the change log, registered before,
 * carries them (gbt_build_mirror()).  Deleted and half-dead pages are
 * skipped as the scan skips them, and items marked dead are read, as the
 * export's SnapshotAny scan did (ignore_killed_tuples off).
 *
 * Posting-list tuples (deduplication) give one entry per heap TID, in
 * TID order as nbtree keeps them.  Interrupts are served between pages:
 * no lock is held while the entries are made.
 *
 * The copies are made into a batch of GBT_EXPORT_BATCH_PAGES pages, each
 * page's entries counted (which places them in the output), and the batch's
 * entries are then made by several threads side by side (the page faults
 * of a new request segment among the work): no thread takes a lock,
 * allocates or reports; the process's signals stay with the main thread.
 */
#include "postgres.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "access/itup.h"
#include "access/nbtree.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "export.h"
#include "keytypes.h"

/* Page blkno of index, share-locked, read through strategy. */
static Buffer
read_locked(Relation index, BlockNumber blkno, BufferAccessStrategy strategy)
{
	Buffer		buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	if (PageIsNew(BufferGetPage(buf)))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains unexpected zero page at block %u",
						RelationGetRelationName(index), blkno)));
	return buf;
}

/*
 * The leftmost leaf page, share-locked; InvalidBuffer for an empty index.
 * Down the leftmost downlinks from the fast root, moving right past pages
 * deleted meanwhile, as _bt_get_endpoint() does.
 */
static Buffer
leftmost_leaf(Relation index, BufferAccessStrategy strategy)
{
	Buffer		buf = read_locked(index, BTREE_METAPAGE, NULL);
	BTMetaPageData *meta = BTPageGetMeta(BufferGetPage(buf));
	BlockNumber blkno = meta->btm_fastroot;

	UnlockReleaseBuffer(buf);
	if (blkno == P_NONE)
		return InvalidBuffer;
	for (;;)
	{
		Page		page;
		BTPageOpaque opaque;

		buf = read_locked(index, blkno, strategy);
		page = BufferGetPage(buf);
		opaque = BTPageGetOpaque(page);
		if (P_IGNORE(opaque))
		{
			if (P_RIGHTMOST(opaque))
				elog(ERROR, "gpubtree: fell off the end of index \"%s\"",
					 RelationGetRelationName(index));
			blkno = opaque->btpo_next;
			UnlockReleaseBuffer(buf);
			continue;
		}
		if (P_ISLEAF(opaque))
			return buf;
		blkno = BTreeTupleGetDownLink((IndexTuple)
									  PageGetItem(page, PageGetItemId(page, P_FIRSTDATAKEY(opaque))));
		UnlockReleaseBuffer(buf);
	}
}

/* Append one entry (room made by the caller): columns first..ncols-1. */
static inline void
put_entry(GbtEntries *out, int64 n, uint64 key, ItemPointer tid, uint8 nulls,
		  const int64 *vals, int first, int ncols)
{
	int			c;

	out->keys[n] = key;
	out->tids[n] = *tid;
	out->nulls[n] = nulls;
	for (c = first; c < ncols; c++)
		out->vals[c][n] = vals[c];
}

#ifndef GBT_EXPORT_BATCH_PAGES	/* make GBT_SMALL_LAYOUT=1: tiny, for tests */
#define GBT_EXPORT_BATCH_PAGES 512
#endif
#define GBT_EXPORT_THREADS_MAX 8

/* The copied leaf pages of a batch, and where each one's entries go. */
typedef struct LeafBatch
{
	PGAlignedBlock *pages;
	int64	   *first;			/* per page: its first entry's position */
	int			npages;
} LeafBatch;

/* One thread's part of a batch: pages [lo, hi). */
typedef struct DecodePart
{
	const LeafBatch *batch;
	int			lo,
				hi;
	Relation	index;
	const GbtKeyType *kt;
	const GbtColumns *cols;
	GbtEntries *out;
	int			first_col;
	int64		made;			/* entries made, against the count */
} DecodePart;

/* The entries of a leaf page with a non-NULL key (one per heap TID). */
static int64
count_entries(Page page)
{
	BTPageOpaque opaque = BTPageGetOpaque(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;
	int64		n = 0;

	if (P_IGNORE(opaque))
		return 0;
	for (off = P_FIRSTDATAKEY(opaque); off <= maxoff; off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

		if (IndexTupleHasNulls(itup) &&
			att_isnull(0, (bits8 *) itup + sizeof(IndexTupleData)))
			continue;
		n += BTreeTupleIsPosting(itup) ? BTreeTupleGetNPosting(itup) : 1;
	}
	return n;
}

/* Make the entries of pages [lo, hi) of a batch, at their places. */
static void *
decode_part(void *arg)
{
	DecodePart *d = arg;
	TupleDesc	desc = RelationGetDescr(d->index);
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	int			p;

	d->made = 0;
	for (p = d->lo; p < d->hi; p++)
	{
		Page		page = (Page) d->batch->pages[p].data;
		BTPageOpaque opaque = BTPageGetOpaque(page);
		OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
		OffsetNumber off;
		int64		n = d->batch->first[p];

		for (off = P_FIRSTDATAKEY(opaque); !P_IGNORE(opaque) && off <= maxoff; off++)
		{
			IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
			int64		vals[GBT_MAX_COLS];
			uint8		nulls;
			uint64		key;
			int			t;

			index_deform_tuple(itup, desc, values, isnull);
			if (isnull[0])
				continue;
			key = d->kt->encode(values[0]);
			nulls = gbt_entry_values(d->index, d->cols, values, isnull, vals);
			if (!BTreeTupleIsPosting(itup))
				put_entry(d->out, n++, key, &itup->t_tid, nulls, vals, d->first_col,
						  d->cols->ncols);
			else
				for (t = 0; t < BTreeTupleGetNPosting(itup); t++)
					put_entry(d->out, n++, key, BTreeTupleGetPostingN(itup, t), nulls, vals,
							  d->first_col, d->cols->ncols);
		}
		d->made += n - d->batch->first[p];
	}
	return NULL;
}

/* Threads an export's batches are made by: half the processors, 2 to 8. */
static int
decode_threads(void)
{
	static long cpus = 0;

	if (cpus == 0)
		cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return (int) Max(2, Min(GBT_EXPORT_THREADS_MAX, cpus / 2));
}

/*
 * Make the entries of the batch's pages, made places for (nbatch entries
 * from position first[0]), in threads; a thread that cannot start leaves
 * its part to this one.
 */
static void
decode_batch(const LeafBatch *batch, int64 nbatch, Relation index, const GbtKeyType *kt,
			 const GbtColumns *cols, GbtEntries *out, int first_col)
{
	DecodePart	parts[GBT_EXPORT_THREADS_MAX];
	pthread_t	threads[GBT_EXPORT_THREADS_MAX];
	bool		started[GBT_EXPORT_THREADS_MAX];
	int			nparts = Min(decode_threads(), batch->npages);
	int64		made = 0;
	sigset_t	all;
	sigset_t	old;
	int			k;

	for (k = 0; k < nparts; k++)
	{
		parts[k].batch = batch;
		parts[k].lo = (int) ((int64) batch->npages * k / nparts);
		parts[k].hi = (int) ((int64) batch->npages * (k + 1) / nparts);
		parts[k].index = index;
		parts[k].kt = kt;
		parts[k].cols = cols;
		parts[k].out = out;
		parts[k].first_col = first_col;
		started[k] = false;
	}
	/* Threads start with every signal blocked: the process's to handle. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (k = 1; k < nparts; k++)
		started[k] = pthread_create(&threads[k], NULL, decode_part, &parts[k]) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	decode_part(&parts[0]);
	for (k = 1; k < nparts; k++)
	{
		if (started[k])
			pthread_join(threads[k], NULL);
		else
			decode_part(&parts[k]);
	}
	for (k = 0; k < nparts; k++)
		made += parts[k].made;
	if (made != nbatch)
		elog(ERROR, "gpubtree: export of \"%s\" made %lld entries of a batch of %lld",
			 RelationGetRelationName(index), (long long) made, (long long) nbatch);
}

/*
 * Every entry of the index with a non-NULL key, in the index's order, with
 * its mirrored column values, appended to out (initialised by the caller);
 * returns how many.  Without key_values, an integer key column's values
 * are not written (left as they were): its keys give them.
 */
int64
gbt_export_leaves(Relation index, Oid keytype, const GbtColumns *cols, GbtEntries *out,
				  bool key_values, GbtExportProgress progress, void *progress_arg)
{
	int			first_col = !key_values && cols->type[0] == GBT_COL_INT64 ? 1 : 0;
	const GbtKeyType *kt = gbt_key_type(keytype);
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);
	Buffer		buf = leftmost_leaf(index, strategy);
	LeafBatch	batch;
	int64		n = 0;			/* entries made */
	int64		placed = 0;		/* entries counted, made or not */
	int64		reported = 0;

	batch.pages = palloc(sizeof(PGAlignedBlock) * GBT_EXPORT_BATCH_PAGES);
	batch.first = palloc(sizeof(int64) * GBT_EXPORT_BATCH_PAGES);
	batch.npages = 0;
	while (BufferIsValid(buf))
	{
		Page		page = (Page) batch.pages[batch.npages].data;
		BTPageOpaque opaque;

		/* The page and its right-link as they are now; then no lock. */
		memcpy(page, BufferGetPage(buf), BLCKSZ);
		UnlockReleaseBuffer(buf);
		buf = InvalidBuffer;
		opaque = BTPageGetOpaque(page);
		batch.first[batch.npages++] = placed;
		placed += count_entries(page);

		/* A full batch, or the last: its entries made, no lock held. */
		if (batch.npages == GBT_EXPORT_BATCH_PAGES || P_RIGHTMOST(opaque))
		{
			if (placed > out->cap)
			{
				out->n = n;		/* what a move out of borrowed arrays copies */
				gbt_entries_grow(out, Max(out->cap * 2, placed));
			}
			decode_batch(&batch, placed - n, index, kt, cols, out, first_col);
			n = placed;
			batch.npages = 0;
			if (progress != NULL && n - reported >= 65536)
			{
				progress(n, progress_arg);
				reported = n;
			}
		}
		CHECK_FOR_INTERRUPTS();
		if (!P_RIGHTMOST(opaque))
			buf = read_locked(index, opaque->btpo_next, strategy);
	}
	FreeAccessStrategy(strategy);
	pfree(batch.pages);
	pfree(batch.first);
	if (progress != NULL)
		progress(n, progress_arg);
	return n;
}
