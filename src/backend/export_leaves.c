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
 */
#include "postgres.h"

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
	int			first = !key_values && cols->type[0] == GBT_COL_INT64 ? 1 : 0;
	const GbtKeyType *kt = gbt_key_type(keytype);
	TupleDesc	desc = RelationGetDescr(index);
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);
	PGAlignedBlock copy;
	Page		page = (Page) copy.data;
	Buffer		buf = leftmost_leaf(index, strategy);
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	int64		n = 0;
	int64		reported = 0;

	while (BufferIsValid(buf))
	{
		BTPageOpaque opaque;
		OffsetNumber off;
		OffsetNumber maxoff;

		/* The page and its right-link as they are now; then no lock. */
		memcpy(copy.data, BufferGetPage(buf), BLCKSZ);
		UnlockReleaseBuffer(buf);
		buf = InvalidBuffer;
		opaque = BTPageGetOpaque(page);
		maxoff = PageGetMaxOffsetNumber(page);

		for (off = P_FIRSTDATAKEY(opaque); !P_IGNORE(opaque) && off <= maxoff; off++)
		{
			IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
			int64		vals[GBT_MAX_COLS];
			uint8		nulls;
			uint64		key;
			int			ntids = BTreeTupleIsPosting(itup) ? BTreeTupleGetNPosting(itup) : 1;
			int			t;

			index_deform_tuple(itup, desc, values, isnull);
			if (isnull[0])
				continue;
			key = kt->encode(values[0]);
			nulls = gbt_entry_values(index, cols, values, isnull, vals);
			if (n + ntids > out->cap)
			{
				out->n = n;		/* what a move out of borrowed arrays copies */
				gbt_entries_grow(out, Max(out->cap * 2, n + ntids));
			}
			if (ntids == 1 && !BTreeTupleIsPosting(itup))
				put_entry(out, n++, key, &itup->t_tid, nulls, vals, first, cols->ncols);
			else
				for (t = 0; t < ntids; t++)
					put_entry(out, n++, key, BTreeTupleGetPostingN(itup, t), nulls, vals,
							  first, cols->ncols);
		}
		if (progress != NULL && n - reported >= 65536)
		{
			progress(n, progress_arg);
			reported = n;
		}
		CHECK_FOR_INTERRUPTS();
		if (!P_RIGHTMOST(opaque))
			buf = read_locked(index, opaque->btpo_next, strategy);
	}
	FreeAccessStrategy(strategy);
	if (progress != NULL)
		progress(n, progress_arg);
	return n;
}
