/*
 * verify.c
 *	  gpubtree_verify(): the service's mirror of an index against the index.
 *
 * Reads every entry of the index (as a mirror build would) and the
 * service's current mirror, both in (key, TID) order, and reports:
 *	- "missing from the mirror": an index entry the mirror lacks whose row
 *	  some transaction may still see (the invariant of shmem.h forbids it;
 *	  a transaction that aborts before writing its batch leaves dead ones,
 *	  and the service drops those whose deleter every snapshot sees);
 *	- "key differs": the same TID under another key in the mirror;
 *	- "values differ": the same entry with other column values;
 *	- "not in the index": a mirror entry the index lacks whose row some
 *	  transaction may still see.  Entries of dead rows are allowed: nbtree removes
 *	  some by itself (LP_DEAD and bottom-up deletion), and VACUUM's sweep
 *	  takes them out of the mirror before their TIDs can be reused;
 *	- "stamps say visible, the heap does not" and "stamps say not visible,
 *	  the heap does": an entry whose visibility stamps (src/service/
 *	  snapview.h) the service decides otherwise than the heap, for a
 *	  snapshot taken now.  Our own transaction's changes and entries the
 *	  stamps leave to the visibility map are not checked.
 * Whether a row is dead to every transaction is chain_dead()'s, as VACUUM
 * would judge its HOT chain.
 * No rows means the mirror is right.  Without a current mirror, one row
 * says so: scans never use a mirror that is not current.  Like amcheck's
 * parent check, it holds a ShareLock on the table, so that no write happens
 * between reading the mirror and reading the index; so only the table's
 * owner may call it.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/objectaddress.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"
#include "executor/tuptable.h"

#include "backend.h"
#include "export.h"
#include "indexarg.h"
#include "keytypes.h"
#include "shmem.h"
#include "vacuum.h"
#include "pg_compat.h"

PG_FUNCTION_INFO_V1(gpubtree_verify);

typedef struct Entry
{
	uint64		key;
	ItemPointerData tid;
	uint8		nulls;
	uint8		verdict;		/* GbtVerdict (mirror entries) */
	int64		vals[GBT_MAX_COLS];
} Entry;

typedef struct Collected
{
	Entry	   *e;
	int64		n;
	int64		cap;
} Collected;

/* Entry i of e, with the values of the columns the mirror holds. */
static void
take(Entry *to, const GbtEntries *e, int64 i, const GbtColumns *cols)
{
	int			c;

	memset(to, 0, sizeof(Entry));
	to->key = e->keys[i];
	to->tid = e->tids[i];
	for (c = 0; c < cols->ncols; c++)
	{
		if (cols->type[c] == GBT_COL_NONE)
			continue;
		to->nulls |= e->nulls[i] & (1 << c);
		if (!(e->nulls[i] & (1 << c)))
			to->vals[c] = e->vals[c][i];
	}
}

static void
collect(const GbtEntries *e, const GbtColumns *cols, const uint8 *verdicts, void *arg)
{
	Collected  *c = arg;
	int64		i;

	if (c->n + e->n > c->cap)
	{
		c->cap = Max(c->cap * 2, c->n + e->n);
		c->e = repalloc_huge(c->e, sizeof(Entry) * c->cap);
	}
	for (i = 0; i < e->n; i++)
	{
		take(&c->e[c->n], e, i, cols);
		c->e[c->n++].verdict = verdicts[i];
	}
}

static int
cmp_tid_key(const void *a, const void *b)
{
	const Entry *ea = a;
	const Entry *eb = b;
	int			c = ItemPointerCompare((ItemPointer) &ea->tid, (ItemPointer) &eb->tid);

	if (c != 0)
		return c;
	return ea->key < eb->key ? -1 : ea->key > eb->key ? 1 : 0;
}

static void
put(ReturnSetInfo *rsinfo, const char *problem, ItemPointer tid)
{
	Datum		values[2];
	bool		nulls[2] = {false, tid == NULL};

	values[0] = CStringGetTextDatum(problem);
	values[1] = tid ? PointerGetDatum(tid) : (Datum) 0;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * The stamps' verdicts against the heap, entry by entry (in TID order, so
 * that each heap page is read once).  Under our ShareLock every other
 * writer of the table has ended, so "now" is our snapshot.
 */
static void
check_stamps(ReturnSetInfo *rsinfo, Relation heap, const Entry *e, int64 n,
			 Snapshot snapshot)
{
	IndexFetchTableData *fetch = table_index_fetch_begin(heap);
	TupleTableSlot *slot = table_slot_create(heap, NULL);
	int64		i;

	for (i = 0; i < n; i++)
	{
		ItemPointerData tid = e[i].tid;
		bool		call_again = false;
		bool		all_dead = false;
		bool		visible;

		if (e[i].verdict == GBT_UNSURE)
			continue;
		CHECK_FOR_INTERRUPTS();
		visible = table_index_fetch_tuple(fetch, &tid, snapshot, slot,
										  &call_again, &all_dead);
		ExecClearTuple(slot);
		if (visible && e[i].verdict == GBT_SKIP)
			put(rsinfo, "stamps say not visible, the heap does", (ItemPointer) &e[i].tid);
		else if (!visible && e[i].verdict == GBT_TAKE)
			put(rsinfo, "stamps say visible, the heap does not", (ItemPointer) &e[i].tid);
	}
	ExecDropSingleTupleTableSlot(slot);
	table_index_fetch_end(fetch);
}

/*
 * Is the row an index entry at tid points to dead to every transaction, or
 * gone?  Every tuple of its HOT chain must be HEAPTUPLE_DEAD to
 * HeapTupleSatisfiesVacuum() against oldest_xmin, as VACUUM would judge
 * it: the service drops an entry once its deleter committed before the
 * oldest snapshot (or its inserter aborted), whatever marks the tuple
 * carries.  heap_hot_search_buffer()'s all_dead would not do: it calls a
 * tuple whose xmax is a MultiXact (a row locked by one (sub)transaction
 * and updated or deleted by another, as by SELECT FOR UPDATE and then
 * UPDATE in a savepoint, or an UPDATE whose recheck after a concurrent
 * update failed and left the row locked) never surely dead, and one
 * without hint bits alive.
 */
static bool
chain_dead(Relation heap, ItemPointer tid, TransactionId oldest_xmin)
{
	BlockNumber blkno = ItemPointerGetBlockNumber(tid);
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	TransactionId prior_xmax = InvalidTransactionId;
	bool		at_start = true;
	bool		dead = true;
	Buffer		buf;
	Page		page;

	if (blkno >= RelationGetNumberOfBlocks(heap))
		return true;
	buf = ReadBuffer(heap, blkno);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	while (off >= FirstOffsetNumber && off <= PageGetMaxOffsetNumber(page))
	{
		ItemId		lp = PageGetItemId(page, off);
		HeapTupleData tuple;

		if (ItemIdIsRedirected(lp) && at_start)
		{
			off = ItemIdGetRedirect(lp);
			at_start = false;
			continue;
		}
		if (!ItemIdIsNormal(lp))
			break;				/* dead or unused: the chain ends */
		tuple.t_data = (HeapTupleHeader) PageGetItem(page, lp);
		tuple.t_len = ItemIdGetLength(lp);
		tuple.t_tableOid = RelationGetRelid(heap);
		ItemPointerSet(&tuple.t_self, blkno, off);
		/* A heap-only tuple at the start took a freed line pointer. */
		if (at_start && HeapTupleHeaderIsHeapOnly(tuple.t_data))
			break;
		if (TransactionIdIsValid(prior_xmax) &&
			!TransactionIdEquals(prior_xmax, HeapTupleHeaderGetXmin(tuple.t_data)))
			break;
		if (HeapTupleSatisfiesVacuum(&tuple, oldest_xmin, buf) != HEAPTUPLE_DEAD)
		{
			dead = false;
			break;
		}
		if (!HeapTupleHeaderIsHotUpdated(tuple.t_data))
			break;
		prior_xmax = HeapTupleHeaderGetUpdateXid(tuple.t_data);
		off = ItemPointerGetOffsetNumber(&tuple.t_data->t_ctid);
		at_start = false;
	}
	UnlockReleaseBuffer(buf);
	return dead;
}

Datum
gpubtree_verify(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	index;
	Relation	heap;
	Oid			heapoid;
	AttrNumber	keyattnum;
	Oid			keytype;
	GbtColumns	cols;
	GbtEntries	exported;
	Entry	   *ie;
	Collected	m;
	int64		ni,
				i,
				j;
	uint64		mirror_id;
	GbtReplyStatus status;
	Snapshot	snapshot;
	TransactionId oldest_xmin;

	InitMaterializedSRF(fcinfo, 0);

	/*
	 * Its ShareLock stops every writer of the table: only the table's owner
	 * may take it, and a refused call takes no lock at all.
	 */
	heapoid = gbt_index_arg_table(PG_GETARG_OID(0), "gpubtree_verify",
								  GBT_READS_INDEX, NULL, &keyattnum);
	if (!object_ownercheck(RelationRelationId, heapoid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(get_rel_relkind(heapoid)),
					   get_rel_name(heapoid));
	index = gbt_index_arg_open(PG_GETARG_OID(0), heapoid, "gpubtree_verify",
							   ShareLock, AccessShareLock, &heap);
	if (!OidIsValid(keytype = gbt_mirror_key_type(index)))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gpubtree index \"%s\" has no key the GPU mirror can hold",
						RelationGetRelationName(index))));
	snapshot = RegisterSnapshot(GetLatestSnapshot());

	m.cap = 1024;
	m.n = 0;
	m.e = palloc_extended(sizeof(Entry) * m.cap, MCXT_ALLOC_HUGE);
	if (!gbt_dump_mirror(index, false, true, collect, &m, &mirror_id, &status))
	{
		put(rsinfo, status == GBT_REPLY_NO_MIRROR ? "no current mirror" :
			"no GPU service answered", NULL);
		UnregisterSnapshot(snapshot);
		table_close(heap, ShareLock);
		index_close(index, AccessShareLock);
		return (Datum) 0;
	}
	gbt_index_columns(index, &cols);
	gbt_entries_init(&exported, cols.ncols, gbt_export_room(index));
	ni = gbt_export_index(heap, index, keytype, &cols, &exported, true, NULL, NULL);
	ie = palloc_extended(sizeof(Entry) * Max(ni, 1), MCXT_ALLOC_HUGE);
	for (i = 0; i < ni; i++)
		take(&ie[i], &exported, i, &cols);
	gbt_entries_free(&exported);

	/*
	 * Taken after the mirror was read: no older than the horizon the
	 * service settled stamps against when it dropped an entry we lack.
	 */
	oldest_xmin = GetOldestNonRemovableTransactionId(heap);

	qsort(ie, ni, sizeof(Entry), cmp_tid_key);
	qsort(m.e, m.n, sizeof(Entry), cmp_tid_key);
	for (i = 0, j = 0; i < ni || j < m.n;)
	{
		int			c = i >= ni ? 1 : j >= m.n ? -1 :
			ItemPointerCompare(&ie[i].tid, &m.e[j].tid);

		if (c < 0)
		{
			/* Rows of transactions that aborted before logging never come. */
			if (!chain_dead(heap, &ie[i].tid, oldest_xmin))
				put(rsinfo, "missing from the mirror", &ie[i].tid);
			i++;
		}
		else if (c > 0)
		{
			if (!chain_dead(heap, &m.e[j].tid, oldest_xmin))
				put(rsinfo, "not in the index", &m.e[j].tid);
			j++;
		}
		else
		{
			if (ie[i].key != m.e[j].key)
				put(rsinfo, "key differs", &ie[i].tid);
			else if (ie[i].nulls != m.e[j].nulls ||
					 memcmp(ie[i].vals, m.e[j].vals, sizeof(ie[i].vals)) != 0)
				put(rsinfo, "values differ", &ie[i].tid);
			i++;
			j++;
		}
	}

	check_stamps(rsinfo, heap, m.e, m.n, snapshot);

	UnregisterSnapshot(snapshot);
	table_close(heap, ShareLock);
	index_close(index, AccessShareLock);
	return (Datum) 0;
}
