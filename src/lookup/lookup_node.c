/*
 * lookup_node.c
 *	  The GpubtreeLookup custom scan at run time: evaluate the = ANY array,
 *	  ask the service for the rows of its keys in one request, or let nbtree
 *	  answer; and say in EXPLAIN which did.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "access/visibilitymap.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/predicate.h"
#include "utils/array.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "agg_exec.h"
#include "backend.h"
#include "keytypes.h"
#include "lookup.h"
#include "scankeys.h"
#include "settings.h"
#include "pg_compat.h"

typedef enum LookupSource
{
	LOOKUP_NOT_STARTED,
	LOOKUP_SERVICE,				/* rows the service returned */
	LOOKUP_NBTREE,				/* an index scan with the keys as an array */
	LOOKUP_NOTHING				/* a NULL array: no row matches */
} LookupSource;

typedef struct LookupState
{
	CustomScanState css;

	/* from the plan */
	Oid			subtype;
	Oid			opno;
	bool		covered;
	int			attmap[GBT_MAX_COLS];
	int			natts;
	ExprState  *array;			/* the = ANY array */

	Relation	index;
	const GbtKeyType *coltype[GBT_MAX_COLS];	/* of each needed mirror column */
	TupleTableSlot *heapslot;
	MemoryContext runcxt;		/* what one run of the node holds */

	/* one run */
	LookupSource source;
	const char *why;			/* why nbtree answers */
	int64		nkeys;			/* distinct keys looked up */
	double		keys_ms;		/* gathering, encoding and sorting them */
	GbtEntries	rows;			/* from the service */
	int64	   *order;			/* rows in TID order, to read the heap */
	int64		next;
	IndexFetchTableData *fetch;
	IndexScanDesc scan;
	instr_time	started;
	Buffer		vmbuffer;		/* for an index-only nbtree scan */
	GbtAggAnswer answer;
} LookupState;

CustomScanMethods gbt_lookup_scan_methods;
static CustomExecMethods lookup_exec_methods;

static Node *
create_lookup_state(CustomScan *cscan)
{
	LookupState *s = (LookupState *) newNode(sizeof(LookupState), T_CustomScanState);
	List	   *priv = cscan->custom_private;
	int			c;

	s->css.methods = &lookup_exec_methods;
	s->subtype = (Oid) intVal(list_nth(priv, LOOKUP_PRIV_SUBTYPE));
	s->opno = (Oid) intVal(list_nth(priv, LOOKUP_PRIV_OPERATOR));
	s->covered = intVal(list_nth(priv, LOOKUP_PRIV_COVERED)) != 0;
	for (c = 0; c < GBT_MAX_COLS; c++)
		s->attmap[c] = list_nth_int(list_nth(priv, LOOKUP_PRIV_ATTMAP), c);
	s->natts = intVal(list_nth(priv, LOOKUP_PRIV_NATTS));
	return (Node *) s;
}

static void
begin_lookup(CustomScanState *node, EState *estate, int eflags)
{
	LookupState *s = (LookupState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Relation	heap = node->ss.ss_currentRelation;
	int			c;

	s->index = index_open((Oid) intVal(list_nth(cscan->custom_private, LOOKUP_PRIV_INDEX)),
						  AccessShareLock);
	for (c = 0; c < GBT_MAX_COLS; c++)
		if (s->attmap[c] > 0)
			s->coltype[c] = gbt_key_type(TupleDescAttr(RelationGetDescr(heap),
													   s->attmap[c] - 1)->atttypid);
	s->heapslot = table_slot_create(heap, NULL);
	s->runcxt = AllocSetContextCreate(CurrentMemoryContext, "GpubtreeLookup",
									  ALLOCSET_DEFAULT_SIZES);
	s->array = ExecInitExpr(linitial(cscan->custom_exprs), &node->ss.ps);
}

/* The array, copied to runcxt; false for a NULL array. */
static bool
gather_keys(LookupState *s, Datum *array)
{
	bool		isnull;
	Datum		v = ExecEvalExpr(s->array, s->css.ss.ps.ps_ExprContext, &isnull);
	MemoryContext old;

	if (isnull)
		return false;
	old = MemoryContextSwitchTo(s->runcxt);
	*array = datumCopy(v, false, -1);
	MemoryContextSwitchTo(old);
	return true;
}

/* Ask the service for the keys' rows; false (with s->why) if it cannot. */
static bool
ask_service(LookupState *s, ScanKey key)
{
	Relation	heap = s->css.ss.ss_currentRelation;
	uint64	   *lo;
	uint64	   *hi;
	bool		sorted;
	int			c;
	instr_time	t1;

	if (gpubtree_device_mode == GPUBTREE_DEVICE_OFF)
	{
		s->why = "gpubtree.device = off";
		return false;
	}
	/* Too few elements to be worth encoding and sorting: no need to look. */
	s->nkeys = ArrayGetNItems(ARR_NDIM(DatumGetArrayTypeP(key->sk_argument)),
							  ARR_DIMS(DatumGetArrayTypeP(key->sk_argument)));
	if (s->nkeys < gpubtree_min_gpu_batch)
	{
		s->why = psprintf("%lld keys, fewer than gpubtree.min_gpu_batch",
						  (long long) s->nkeys);
		return false;
	}
	if (!gbt_keys_to_ranges(key, 1, s->index->rd_opcintype[0], true, &sorted, &lo, &hi,
							&s->nkeys))
	{
		s->why = "keys the service does not take";
		return false;
	}
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, s->started);
	s->keys_ms = INSTR_TIME_GET_MILLISEC(t1);
	if (s->nkeys < gpubtree_min_gpu_batch)
	{
		s->why = psprintf("%lld keys, fewer than gpubtree.min_gpu_batch",
						  (long long) s->nkeys);
		return false;
	}
	if (!gbt_lookup(heap, s->index, lo, hi, s->nkeys, sorted, s->css.ss.ps.state->es_snapshot,
					&s->rows, &s->answer, &s->why))
		return false;
	s->nkeys = s->answer.nkeys;	/* distinct, once the service sorted them */
	for (c = 0; c < GBT_MAX_COLS; c++)
	{
		if (s->covered && s->attmap[c] > 0 &&
			(c >= s->answer.columns.ncols ||
			 s->answer.columns.type[c] !=
			 gbt_column_type(TupleDescAttr(RelationGetDescr(heap), s->attmap[c] - 1)->atttypid)))
		{
			s->why = "the mirror does not hold a column as expected";
			return false;
		}
	}
	if (!s->covered)
	{
		s->order = gbt_entries_order(&s->rows, 0, s->rows.n, false);
		s->fetch = table_index_fetch_begin(heap);
	}
	return true;
}

/*
 * Gather the keys and decide who answers.  What the run holds goes to
 * runcxt, for end_run() to free at once.
 */
static void
start_lookup(LookupState *s)
{
	MemoryContext old;
	Datum		array;
	ScanKeyData key;

	INSTR_TIME_SET_CURRENT(s->started);
	if (!gather_keys(s, &array))
	{
		s->source = LOOKUP_NOTHING;
		s->why = "a NULL array";
		return;
	}
	old = MemoryContextSwitchTo(s->runcxt);
	ScanKeyEntryInitialize(&key, SK_SEARCHARRAY, 1, BTEqualStrategyNumber, s->subtype,
						   s->index->rd_indcollation[0], get_opcode(s->opno), array);
	if (ask_service(s, &key))
		s->source = LOOKUP_SERVICE;
	else
	{
		s->source = LOOKUP_NBTREE;
		s->scan = gbt_index_beginscan(s->css.ss.ss_currentRelation, s->index,
									  s->css.ss.ps.state->es_snapshot, 1, 0);
		s->scan->xs_want_itup = s->covered;
		index_rescan(s->scan, &key, 1, NULL, 0);
	}
	MemoryContextSwitchTo(old);
}

/* The columns the plan needs of the heap tuple in s->heapslot. */
static TupleTableSlot *
store_heap_row(LookupState *s)
{
	TupleTableSlot *slot = s->css.ss.ss_ScanTupleSlot;
	int			natts = slot->tts_tupleDescriptor->natts;
	int			i;

	slot_getsomeattrs(s->heapslot, s->natts);
	ExecClearTuple(slot);
	for (i = 0; i < natts; i++)
	{
		slot->tts_values[i] = i < s->natts ? s->heapslot->tts_values[i] : (Datum) 0;
		slot->tts_isnull[i] = i < s->natts ? s->heapslot->tts_isnull[i] : true;
	}
	return ExecStoreVirtualTuple(slot);
}

/*
 * The next row of nbtree's scan: as an index-only scan, from the index
 * tuple, when the index holds the columns and the visibility map vouches
 * for the heap page; else the heap tuple.
 */
static TupleTableSlot *
next_nbtree_row(LookupState *s)
{
	TupleTableSlot *slot = s->css.ss.ss_ScanTupleSlot;
	Relation	heap = s->css.ss.ss_currentRelation;
	ItemPointer tid;

	if (!s->covered)
		return index_getnext_slot(s->scan, ForwardScanDirection, s->heapslot) ?
			store_heap_row(s) : NULL;
	while ((tid = index_getnext_tid(s->scan, ForwardScanDirection)) != NULL)
	{
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];
		int			c;

		CHECK_FOR_INTERRUPTS();
		if (!VM_ALL_VISIBLE(heap, ItemPointerGetBlockNumber(tid), &s->vmbuffer))
		{
			if (!index_fetch_heap(s->scan, s->heapslot))
				continue;		/* no version of the row our snapshot sees */
			ExecClearTuple(s->heapslot);
		}
		else					/* as an index-only scan: no tuple to lock */
			PredicateLockPage(heap, ItemPointerGetBlockNumber(tid),
							  s->css.ss.ps.state->es_snapshot);
		index_deform_tuple(s->scan->xs_itup, s->scan->xs_itupdesc, values, isnull);
		ExecClearTuple(slot);
		memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
		for (c = 0; c < GBT_MAX_COLS; c++)
		{
			if (s->attmap[c] == 0)
				continue;
			slot->tts_values[s->attmap[c] - 1] = values[c];
			slot->tts_isnull[s->attmap[c] - 1] = isnull[c];
		}
		return ExecStoreVirtualTuple(slot);
	}
	return NULL;
}

/* Row i of the service's answer, from the mirror's values. */
static TupleTableSlot *
store_mirror_row(LookupState *s, int64 i)
{
	TupleTableSlot *slot = s->css.ss.ss_ScanTupleSlot;
	int			c;

	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	for (c = 0; c < GBT_MAX_COLS; c++)
	{
		int64		v;

		if (s->attmap[c] == 0 || (s->rows.nulls[i] & (1 << c)) != 0)
			continue;
		v = s->rows.vals[c][i];
		slot->tts_values[s->attmap[c] - 1] = s->coltype[c]->datum(v, gbt_val_float8(v));
		slot->tts_isnull[s->attmap[c] - 1] = false;
	}
	return ExecStoreVirtualTuple(slot);
}

static TupleTableSlot *
lookup_next(ScanState *ss)
{
	LookupState *s = (LookupState *) ss;
	Snapshot	snapshot = ss->ps.state->es_snapshot;

	if (s->source == LOOKUP_NOT_STARTED)
		start_lookup(s);

	if (s->source == LOOKUP_NBTREE)
	{
		TupleTableSlot *slot = next_nbtree_row(s);

		if (slot != NULL)
			return slot;
	}
	else if (s->source == LOOKUP_SERVICE && s->covered)
	{
		if (s->next < s->rows.n)
			return store_mirror_row(s, s->next++);
	}
	else if (s->source == LOOKUP_SERVICE)
	{
		while (s->next < s->rows.n)
		{
			ItemPointerData tid = s->rows.tids[s->order[s->next++]];
			bool		call_again = false;
			bool		all_dead = false;

			CHECK_FOR_INTERRUPTS();
			if (table_index_fetch_tuple(s->fetch, &tid, snapshot, s->heapslot,
										&call_again, &all_dead))
				return store_heap_row(s);
		}
	}
	return ExecClearTuple(ss->ss_ScanTupleSlot);
}

static bool
lookup_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
exec_lookup(CustomScanState *node)
{
	return ExecScan(&node->ss, lookup_next, lookup_recheck);
}

/* Forget one run. */
static void
end_run(LookupState *s)
{
	if (s->scan != NULL)
		index_endscan(s->scan);
	if (BufferIsValid(s->vmbuffer))
		ReleaseBuffer(s->vmbuffer);
	s->vmbuffer = InvalidBuffer;
	if (s->fetch != NULL)
		table_index_fetch_end(s->fetch);
	ExecClearTuple(s->heapslot);
	MemoryContextReset(s->runcxt);
	s->scan = NULL;
	s->fetch = NULL;
	s->order = NULL;
	memset(&s->rows, 0, sizeof(s->rows));
	s->next = 0;
	s->source = LOOKUP_NOT_STARTED;
}

static void
end_lookup(CustomScanState *node)
{
	LookupState *s = (LookupState *) node;

	end_run(s);
	ExecDropSingleTupleTableSlot(s->heapslot);
	index_close(s->index, AccessShareLock);
}

static void
rescan_lookup(CustomScanState *node)
{
	LookupState *s = (LookupState *) node;

	end_run(s);
}

static void
explain_lookup(CustomScanState *node, List *ancestors, ExplainState *es)
{
	LookupState *s = (LookupState *) node;

	ExplainPropertyText("Index", RelationGetRelationName(s->index), es);
	ExplainPropertyText("Rows", s->covered ? "from the index's columns" : "from the heap", es);
	if (!es->analyze)
		return;
	if (s->source == LOOKUP_SERVICE)
	{
		ExplainPropertyText("Answered by", "GPU service", es);
		if (es->verbose)
			ExplainPropertyText("Engine", s->answer.on_gpu ? "GPU" : "CPU engine", es);
		ExplainPropertyInteger("Keys Looked Up", NULL, s->nkeys, es);
		ExplainPropertyInteger("Entries Decided by the Mirror", NULL,
							   s->rows.n - s->answer.checked_visible, es);
		ExplainPropertyInteger("Entries Checked in Heap", NULL, s->answer.checked, es);
		if (es->timing)
		{
			ExplainPropertyFloat("Key Preparation Time", "ms", s->keys_ms, 3, es);
			ExplainPropertyFloat("Device Time", "ms", s->answer.device_ms, 3, es);
			ExplainPropertyFloat("Service Time", "ms", s->answer.total_ms, 3, es);
		}
	}
	else if (s->source != LOOKUP_NOT_STARTED)
		ExplainPropertyText("Answered by", s->source == LOOKUP_NOTHING ?
							psprintf("nothing (%s)", s->why) :
							psprintf("nbtree (%s)", s->why), es);
}

void
gbt_lookup_node_init(void)
{
	gbt_lookup_scan_methods.CustomName = "GpubtreeLookup";
	gbt_lookup_scan_methods.CreateCustomScanState = create_lookup_state;
	lookup_exec_methods.CustomName = "GpubtreeLookup";
	lookup_exec_methods.BeginCustomScan = begin_lookup;
	lookup_exec_methods.ExecCustomScan = exec_lookup;
	lookup_exec_methods.EndCustomScan = end_lookup;
	lookup_exec_methods.ReScanCustomScan = rescan_lookup;
	lookup_exec_methods.ExplainCustomScan = explain_lookup;
	RegisterCustomScanMethods(&gbt_lookup_scan_methods);
}
