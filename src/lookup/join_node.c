/*
 * join_node.c
 *	  The GpubtreeJoin custom scan at run time: an inner join on the key of
 *	  a gpubtree index, its inner rows looked up in one request.
 *
 * The plan below is the outer side, made to produce the join key first and
 * then the outer columns the join needs.  All its rows are read once and
 * kept (outer_put()), their keys gathered; the service returns the inner table's
 * rows of those keys that the snapshot sees (exec_request.c: gbt_lookup()), or
 * else one nbtree scan with the keys as its = ANY array reads them, as an
 * index-only scan where the visibility map allows.  The keys are sorted and
 * freed of repeats, by the service (on the GPU) for a long list, and each
 * outer row learns its key's place among them (its map entry); the inner
 * rows come in key order, so a key's rows are one run, found by that place
 * without a hash table.  Other join conditions and the inner table's own
 * are checked on each joined row (the plan's qual).  Its callbacks are
 * those of the executor core (exec_node.h), which also says in EXPLAIN
 * which answered.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/parallel.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/visibilitymap.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "storage/predicate.h"
#include "utils/array.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"

#include "backend.h"
#include "exec_node.h"
#include "keytypes.h"
#include "lookup.h"
#include "resync.h"
#include "scankeys.h"
#include "pg_compat.h"

typedef struct GbtJoinState
{
	GbtExecNode node;			/* first: what every service node holds */

	/* from the plan */
	Oid			subtype;
	Oid			opno;
	int			nouter;			/* outer columns in the scan tuple, first */
	List	   *inner_cols;		/* per inner column after them: mirror column */

	Relation	heap;
	Relation	index;
	const GbtKeyType *keytype;	/* of the join key, to encode it */
	const GbtKeyType *coltype[GBT_MAX_COLS];
	TupleTableSlot *heapslot;
	TupleTableSlot *outer;		/* a kept outer row */
	bool		byvalue;		/* all its columns passed by value */

	/* one run (what it allocates in node.runcxt) */
	Datum	   *outer_vals;		/* the outer rows, while in memory */
	bool	   *outer_nulls;
	int64		outer_n;
	int64		outer_cap;
	int64		outer_next;		/* the next one to join */
	Tuplestorestate *store;		/* else here */
	uint64	   *distinct;		/* the outer keys, encoded, sorted, distinct */
	int64		ndistinct;
	uint32	   *map;			/* per kept outer row, its key's place there */
	int64		nmapped;		/* the kept rows */
	int64		nrows;			/* inner rows, in key order */
	Datum	   *vals[GBT_MAX_COLS];	/* per mirror column, per row */
	bool	   *nulls[GBT_MAX_COLS];
	int64	   *run_start;		/* per distinct key, its first row; and nrows */
	int64		next_run;		/* the first key no row has reached yet */
	int64		cur;			/* the next inner row for the current outer row */
	int64		cur_end;		/* and the end of its run */
} GbtJoinState;

CustomScanMethods gbt_join_scan_methods;
static GbtExecNodeMethods join_node_methods;

static Node *
create_join_state(CustomScan *cscan)
{
	GbtJoinState *s = (GbtJoinState *) gbt_exec_node_new(sizeof(GbtJoinState),
														 &join_node_methods);
	List	   *priv = cscan->custom_private;

	s->subtype = (Oid) intVal(list_nth(priv, JOIN_PRIV_SUBTYPE));
	s->opno = (Oid) intVal(list_nth(priv, JOIN_PRIV_OPERATOR));
	s->nouter = intVal(list_nth(priv, JOIN_PRIV_NOUTER));
	s->inner_cols = list_nth(priv, JOIN_PRIV_INNER_COLS);
	return (Node *) s;
}

static void
begin_join(GbtExecNode *node, EState *estate, int eflags)
{
	GbtJoinState *s = (GbtJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->css.ss.ps.plan;
	Plan	   *child = linitial(cscan->custom_plans);
	ListCell   *lc;

	s->index = index_open((Oid) intVal(list_nth(cscan->custom_private, JOIN_PRIV_INDEX)),
						  AccessShareLock);
	s->heap = table_open(s->index->rd_index->indrelid, AccessShareLock);
	s->keytype = gbt_key_type(s->subtype);
	foreach(lc, s->inner_cols)
	{
		int			c = lfirst_int(lc);

		s->coltype[c] = gbt_key_type(TupleDescAttr(RelationGetDescr(s->heap),
												   s->index->rd_index->indkey.values[c] - 1)->atttypid);
	}
	s->heapslot = table_slot_create(s->heap, NULL);
	s->outer = MakeSingleTupleTableSlot(ExecTypeFromTL(child->targetlist), &TTSOpsMinimalTuple);
	s->byvalue = true;
	for (int i = 0; i < s->outer->tts_tupleDescriptor->natts; i++)
		s->byvalue &= TupleDescAttr(s->outer->tts_tupleDescriptor, i)->attbyval;

	/*
	 * Under a Gather the workers ask the service too, before this process
	 * might: this transaction's own inserts go to the service now, so that
	 * every worker's answer sees them.
	 */
	if (!IsParallelWorker() && (eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0)
		gbt_resync_flush();
}

/* Room for the inner rows, in runcxt, and their runs. */
static void
rows_alloc(GbtJoinState *s, int64 n)
{
	ListCell   *lc;

	foreach(lc, s->inner_cols)
	{
		int			c = lfirst_int(lc);

		s->vals[c] = MemoryContextAllocHuge(s->node.runcxt, sizeof(Datum) * Max(n, 1));
		s->nulls[c] = MemoryContextAllocHuge(s->node.runcxt, sizeof(bool) * Max(n, 1));
	}
	s->run_start = MemoryContextAllocHuge(s->node.runcxt, sizeof(int64) * (s->ndistinct + 1));
	s->nrows = 0;
	s->next_run = 0;
}

/*
 * Row nrows, of key (not before the last row's), joins its key's run: the
 * keys it passes start their runs here (those without rows, empty ones).
 */
static inline void
rows_link(GbtJoinState *s, uint64 key)
{
	while (s->next_run < s->ndistinct && s->distinct[s->next_run] <= key)
		s->run_start[s->next_run++] = s->nrows;
	if (s->next_run == 0 || s->distinct[s->next_run - 1] != key)
		elog(ERROR, "gpubtree: inner rows of a join out of key order");
	s->nrows++;
}

/* The keys after the last row start (empty) runs at the end. */
static void
rows_finish(GbtJoinState *s)
{
	while (s->next_run <= s->ndistinct)
		s->run_start[s->next_run++] = s->nrows;
}

/*
 * The inner rows from the service's answer, in key order: the mirror's
 * entries come in that order, but those the heap decided come after them.
 */
static void
rows_from_service(GbtJoinState *s, const GbtEntries *rows)
{
	int64	   *order = NULL;
	int64		x;
	ListCell   *lc;

	for (x = 1; x < rows->n; x++)
		if (rows->keys[x] < rows->keys[x - 1])
		{
			order = gbt_entries_order(rows, 0, rows->n, true);
			break;
		}
	rows_alloc(s, rows->n);
	for (x = 0; x < rows->n; x++)
	{
		int64		i = order != NULL ? order[x] : x;

		foreach(lc, s->inner_cols)
		{
			int			c = lfirst_int(lc);
			int64		v = rows->vals[c][i];

			s->nulls[c][s->nrows] = (rows->nulls[i] & (1 << c)) != 0;
			s->vals[c][s->nrows] = s->nulls[c][s->nrows] ? (Datum) 0 :
				s->coltype[c]->datum(v, gbt_val_float8(v));
		}
		rows_link(s, rows->keys[i]);
	}
	rows_finish(s);
	if (order != NULL)
		pfree(order);
}

/*
 * The inner rows by nbtree, in key order: one scan with the keys as its
 * array (sorted by nbtree), from the
 * index tuples when the visibility map vouches for the heap page (as an
 * index-only scan), else after the heap says the snapshot sees the row.
 */
static void
rows_from_nbtree(GbtJoinState *s, ScanKey key)
{
	Snapshot	snapshot = s->node.css.ss.ps.state->es_snapshot;
	IndexScanDesc scan = gbt_index_beginscan(s->heap, s->index, snapshot, 1, 0);
	Buffer		vmbuffer = InvalidBuffer;
	int64		cap = 1024;
	ItemPointer tid;

	scan->xs_want_itup = true;
	index_rescan(scan, key, 1, NULL, 0);
	rows_alloc(s, cap);
	while ((tid = index_getnext_tid(scan, ForwardScanDirection)) != NULL)
	{
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];
		ListCell   *lc;

		CHECK_FOR_INTERRUPTS();
		if (!VM_ALL_VISIBLE(s->heap, ItemPointerGetBlockNumber(tid), &vmbuffer))
		{
			if (!index_fetch_heap(scan, s->heapslot))
				continue;
			ExecClearTuple(s->heapslot);
		}
		else
			PredicateLockPage(s->heap, ItemPointerGetBlockNumber(tid), snapshot);
		index_deform_tuple(scan->xs_itup, scan->xs_itupdesc, values, isnull);
		if (s->nrows == cap)
		{
			cap *= 2;
			foreach(lc, s->inner_cols)
			{
				s->vals[lfirst_int(lc)] = repalloc_huge(s->vals[lfirst_int(lc)], sizeof(Datum) * cap);
				s->nulls[lfirst_int(lc)] = repalloc_huge(s->nulls[lfirst_int(lc)], sizeof(bool) * cap);
			}
		}
		foreach(lc, s->inner_cols)
		{
			int			c = lfirst_int(lc);

			s->vals[c][s->nrows] = values[c];	/* the key types are by value */
			s->nulls[c][s->nrows] = isnull[c];
		}
		rows_link(s, gbt_encode_key(values[0], s->index->rd_opcintype[0]));
	}
	rows_finish(s);
	if (BufferIsValid(vmbuffer))
		ReleaseBuffer(vmbuffer);
	index_endscan(scan);
}

/*
 * The outer rows are kept as Datums in memory when every column is passed
 * by value, up to GBT_JOIN_OUTER_MAX values (2^23: 72 MiB with their NULL
 * flags, whatever the number of columns); otherwise, or past that, in a
 * tuplestore (work_mem, then a temporary file), whose copying of each row
 * costs several times more.
 */
#ifndef GBT_JOIN_OUTER_MAX		/* make GBT_SMALL_LAYOUT=1: tiny, for tests */
#define GBT_JOIN_OUTER_MAX (1 << 23)
#endif

/* Move the rows kept in memory to a tuplestore, and keep the rest there. */
static void
outer_to_store(GbtJoinState *s)
{
	TupleDesc	desc = s->outer->tts_tupleDescriptor;
	MemoryContext old = MemoryContextSwitchTo(s->node.runcxt);
	int64		i;

	s->store = tuplestore_begin_heap(false, false, work_mem);
	for (i = 0; i < s->outer_n; i++)
		tuplestore_putvalues(s->store, desc, &s->outer_vals[i * desc->natts],
							 &s->outer_nulls[i * desc->natts]);
	MemoryContextSwitchTo(old);
	if (s->outer_vals != NULL)
	{
		pfree(s->outer_vals);
		pfree(s->outer_nulls);
	}
	s->outer_vals = NULL;
	s->outer_nulls = NULL;
}

static void
outer_put(GbtJoinState *s, TupleTableSlot *slot)
{
	int			natts = s->outer->tts_tupleDescriptor->natts;

	if (s->store == NULL && (!s->byvalue || (s->outer_n + 1) * natts > GBT_JOIN_OUTER_MAX))
		outer_to_store(s);
	if (s->store != NULL)
	{
		tuplestore_puttupleslot(s->store, slot);
		return;
	}
	if (s->outer_n == s->outer_cap)
	{
		s->outer_cap = Max(s->outer_cap * 2, 1024);
		s->outer_vals = s->outer_vals == NULL ?
			MemoryContextAllocHuge(s->node.runcxt, sizeof(Datum) * natts * s->outer_cap) :
			repalloc_huge(s->outer_vals, sizeof(Datum) * natts * s->outer_cap);
		s->outer_nulls = s->outer_nulls == NULL ?
			MemoryContextAllocHuge(s->node.runcxt, sizeof(bool) * natts * s->outer_cap) :
			repalloc_huge(s->outer_nulls, sizeof(bool) * natts * s->outer_cap);
	}
	slot_getallattrs(slot);
	memcpy(&s->outer_vals[s->outer_n * natts], slot->tts_values, sizeof(Datum) * natts);
	memcpy(&s->outer_nulls[s->outer_n * natts], slot->tts_isnull, sizeof(bool) * natts);
	s->outer_n++;
}

/*
 * The next kept outer row into s->outer, all its columns (its key's place
 * is map[outer_next - 1]); false at the end.
 */
static bool
outer_get(GbtJoinState *s)
{
	int			natts = s->outer->tts_tupleDescriptor->natts;

	if (s->store != NULL)
	{
		if (!tuplestore_gettupleslot(s->store, true, false, s->outer))
			return false;
		slot_getallattrs(s->outer);
	}
	else
	{
		if (s->outer_next == s->outer_n)
			return false;
		ExecClearTuple(s->outer);
		memcpy(s->outer->tts_values, &s->outer_vals[s->outer_next * natts], sizeof(Datum) * natts);
		memcpy(s->outer->tts_isnull, &s->outer_nulls[s->outer_next * natts], sizeof(bool) * natts);
		ExecStoreVirtualTuple(s->outer);
	}
	s->outer_next++;
	return true;
}

/*
 * The kept outer rows' keys as Datums (their first column), for nbtree's
 * array.
 */
static Datum *
outer_key_datums(GbtJoinState *s, int64 n)
{
	Datum	   *keys = palloc_extended(sizeof(Datum) * Max(n, 1), MCXT_ALLOC_HUGE);
	int			natts = s->outer->tts_tupleDescriptor->natts;
	int64		i = 0;
	bool		isnull;

	if (s->store == NULL)
		for (i = 0; i < n; i++)
			keys[i] = s->outer_vals[i * natts];
	else
	{
		tuplestore_rescan(s->store);
		while (i < n && tuplestore_gettupleslot(s->store, true, false, s->outer))
			keys[i++] = slot_getattr(s->outer, 1, &isnull);	/* by value */
		tuplestore_rescan(s->store);
		ExecClearTuple(s->outer);
	}
	if (i != n)
		elog(ERROR, "gpubtree: outer rows of a join lost");
	return keys;
}

/*
 * Ask the service for the inner rows of the n keys in points, row by row:
 * on success node.answered, and the rows in *rows.  Returns whether the
 * keys are sorted apart, with each row's place among them in map.
 */
static bool
ask_service(GbtJoinState *s, uint64 *points, int64 n, GbtEntries *rows)
{
	GbtExecNode *node = &s->node;
	Snapshot	snapshot = node->css.ss.ps.state->es_snapshot;
	bool		mapped;
	bool		found;
	ListCell   *lc;

	if (!gbt_exec_device_on(node) || !gbt_exec_enough_keys(node, n, false))
		return false;
	if (!gbt_comparable(s->subtype, s->index->rd_opcintype[0]))
	{
		node->why = "keys the service does not take";
		return false;
	}

	/*
	 * A long list goes as it is, for the service to sort (on the GPU) and
	 * map; a short one is sorted and mapped here.
	 */
	if (n >= GBT_SERVICE_SORT_MIN)
	{
		gbt_exec_keys_ready(node);
		found = gbt_lookup_mapped(s->heap, s->index, points, n, s->map, snapshot,
								  rows, &node->answer, &node->why);
		mapped = found;
		s->ndistinct = node->answer.nkeys;
	}
	else
	{
		s->ndistinct = gbt_sort_unique_mapped(points, n, s->map);
		mapped = true;
		gbt_exec_keys_ready(node);
		found = gbt_exec_enough_keys(node, s->ndistinct, false) &&
			gbt_lookup(s->heap, s->index, points, points, s->ndistinct, true, snapshot,
					   0, rows, &node->answer, &node->why);
	}
	if (!found)
		return mapped;
	node->answered = true;
	foreach(lc, s->inner_cols)
	{
		int			c = lfirst_int(lc);

		if (c >= node->answer.columns.ncols ||
			node->answer.columns.type[c] != gbt_column_type(s->coltype[c]->typid))
		{
			node->why = "the mirror does not hold a column as expected";
			node->answered = false;
		}
	}
	return mapped;
}

/*
 * Read the outer side once (outer_put()), gather its keys, sort them apart
 * with each row's place among them (map), and take the inner rows of those
 * keys from the service or nbtree.
 */
static void
start_join(GbtJoinState *s)
{
	GbtExecNode *node = &s->node;
	PlanState  *child = GBT_EXEC_CHILD(node);
	uint64	   *points;			/* the keys, encoded, row by row */
	int64		n = 0;
	int64		cap = 1024;
	bool		mapped;
	MemoryContext old;
	GbtEntries	rows;

	gbt_exec_start_run(node);
	old = MemoryContextSwitchTo(s->node.runcxt);
	points = palloc_extended(sizeof(uint64) * cap, MCXT_ALLOC_HUGE);
	MemoryContextSwitchTo(old);
	for (;;)
	{
		TupleTableSlot *slot = ExecProcNode(child);
		bool		isnull;
		Datum		v;

		if (TupIsNull(slot))
			break;
		v = slot_getattr(slot, 1, &isnull);
		if (isnull)
			continue;			/* = NULL joins nothing */
		if (n == cap)
		{
			cap *= 2;
			points = repalloc_huge(points, sizeof(uint64) * cap);
		}
		points[n++] = s->keytype->encode(v);
		outer_put(s, slot);
	}
	if (n > MaxArraySize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many join keys for one lookup: %lld", (long long) n)));
	old = MemoryContextSwitchTo(s->node.runcxt);
	s->map = palloc_extended(sizeof(uint32) * Max(n, 1), MCXT_ALLOC_HUGE);
	s->nmapped = n;
	s->distinct = points;

	mapped = ask_service(s, points, n, &rows);
	if (!node->answered)
		node->other = "nbtree";
	if (!mapped)
		s->ndistinct = gbt_sort_unique_mapped(points, n, s->map);
	for (int64 i = 0; i < n; i++)
		if (s->map[i] >= s->ndistinct)
			elog(ERROR, "gpubtree: join key %lld has no place among %lld keys",
				 (long long) i, (long long) s->ndistinct);
	if (node->answered)
		rows_from_service(s, &rows);
	else
	{
		int16		typlen;
		bool		typbyval;
		char		typalign;
		ScanKeyData key;

		get_typlenbyvalalign(s->subtype, &typlen, &typbyval, &typalign);
		ScanKeyEntryInitialize(&key, SK_SEARCHARRAY, 1, BTEqualStrategyNumber, s->subtype,
							   s->index->rd_indcollation[0], get_opcode(s->opno),
							   PointerGetDatum(construct_array(outer_key_datums(s, n), (int) n,
															   s->subtype, typlen, typbyval,
															   typalign)));
		rows_from_nbtree(s, &key);
	}
	MemoryContextSwitchTo(old);
	s->cur = s->cur_end = 0;
}

/* How many outer rows ahead their runs, then their first inner rows, are asked for. */
#define JOIN_PREFETCH 32

/*
 * Ask the caches for what joining outer row j + JOIN_PREFETCH will read
 * first (its run's start), and row j + JOIN_PREFETCH / 2 next (its first
 * inner row).  Always inlined: a function whose only effect is prefetches
 * counts as having none, and gcc drops the calls.
 */
static pg_attribute_always_inline void
prefetch_ahead(GbtJoinState *s, int64 j)
{
	ListCell   *lc;
	int64		r;

	if (j + JOIN_PREFETCH < s->nmapped)
		__builtin_prefetch(&s->run_start[s->map[j + JOIN_PREFETCH]]);
	if (j + JOIN_PREFETCH / 2 >= s->nmapped)
		return;
	r = s->run_start[s->map[j + JOIN_PREFETCH / 2]];
	foreach(lc, s->inner_cols)
	{
		__builtin_prefetch(&s->vals[lfirst_int(lc)][r]);
		__builtin_prefetch(&s->nulls[lfirst_int(lc)][r]);
	}
}

static TupleTableSlot *
join_next(ScanState *ss)
{
	GbtJoinState  *s = (GbtJoinState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;

	if (!s->node.started)
		start_join(s);
	for (;;)
	{
		int			i;
		ListCell   *lc;

		if (s->cur == s->cur_end)
		{
			int64		j;

			if (!outer_get(s))
				return ExecClearTuple(slot);
			CHECK_FOR_INTERRUPTS();
			j = s->outer_next - 1;
			prefetch_ahead(s, j);
			s->cur = s->run_start[s->map[j]];
			s->cur_end = s->run_start[s->map[j] + 1];
			continue;
		}

		/* The outer row's columns, then the inner row's. */
		ExecClearTuple(slot);
		for (i = 0; i < s->nouter; i++)
		{
			slot->tts_values[i] = s->outer->tts_values[i + 1];
			slot->tts_isnull[i] = s->outer->tts_isnull[i + 1];
		}
		foreach(lc, s->inner_cols)
		{
			int			c = lfirst_int(lc);

			slot->tts_values[i] = s->vals[c][s->cur];
			slot->tts_isnull[i] = s->nulls[c][s->cur];
			i++;
		}
		s->cur++;
		return ExecStoreVirtualTuple(slot);
	}
}

/* Forget one run (what is not in runcxt). */
static void
end_join_run(GbtExecNode *node)
{
	GbtJoinState *s = (GbtJoinState *) node;

	if (s->store != NULL)
		tuplestore_end(s->store);
	s->store = NULL;
	s->outer_vals = NULL;		/* in runcxt */
	s->outer_nulls = NULL;
	s->distinct = NULL;
	s->map = NULL;
	s->run_start = NULL;
	s->outer_n = s->outer_cap = s->outer_next = s->nmapped = 0;
	ExecClearTuple(s->outer);
	ExecClearTuple(s->heapslot);
}

static void
end_join(GbtExecNode *node)
{
	GbtJoinState *s = (GbtJoinState *) node;

	ExecDropSingleTupleTableSlot(s->heapslot);
	ExecDropSingleTupleTableSlot(s->outer);
	table_close(s->heap, AccessShareLock);
	index_close(s->index, AccessShareLock);
}

static void
explain_join(GbtExecNode *node, ExplainState *es)
{
	GbtJoinState *s = (GbtJoinState *) node;

	ExplainPropertyText("Index", RelationGetRelationName(s->index), es);
	ExplainPropertyText("Inner Rows", "from the index's columns", es);
}

static GbtExecNodeMethods join_node_methods = {
	.keys_label = "Keys Looked Up",
	.next = join_next,
	.begin = begin_join,
	.end_run = end_join_run,
	.end = end_join,
	.explain_node = explain_join,
};

void
gbt_join_node_init(void)
{
	gbt_exec_node_register(&gbt_join_scan_methods, &join_node_methods, "GpubtreeJoin",
						   create_join_state);
}
