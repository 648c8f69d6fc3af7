/*
 * lookup_node.c
 *	  The GpubtreeLookup custom scan at run time: evaluate the conditions on
 *	  the key (an = ANY array, or the bounds of a range), ask the service
 *	  for the rows of their keys in one request (exec_request.c), or let
 *	  nbtree answer; its callbacks of the executor core (exec_node.h),
 *	  which also says in EXPLAIN which answered.
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
#include "storage/predicate.h"
#include "utils/array.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "backend.h"
#include "exec_node.h"
#include "keytypes.h"
#include "lookup.h"
#include "scankeys.h"
#include "pg_compat.h"

/*
 * A run's rows: the service's (node.answered), or an nbtree index scan's
 * with the keys as its array (scan), or none (a NULL array).
 */
typedef struct LookupState
{
	GbtExecNode node;			/* first: what every service node holds */

	/* from the plan: the conditions on the key, each a bound */
	List	   *strategies;
	List	   *subtypes;
	List	   *operators;
	int			array_at;		/* the = ANY(array) among them, or -1 */
	List	   *bounds;			/* ExprState of each bound */
	bool		covered;
	int			attmap[GBT_MAX_COLS];
	int			natts;
	int			direction;		/* rows in key order: 1, descending: -1, any: 0 */

	Relation	index;
	const GbtKeyType *coltype[GBT_MAX_COLS];	/* of each needed mirror column */
	TupleTableSlot *heapslot;

	/* one run (what it allocates in node.runcxt) */
	int64		nkeys;			/* distinct keys looked up */
	GbtEntries	rows;			/* from the service */
	int64	   *order;			/* rows in TID order, to read the heap; or
								 * covered, in key order (direction) */
	int64		next;
	IndexFetchTableData *fetch;
	IndexScanDesc scan;
	Buffer		vmbuffer;		/* for an index-only nbtree scan */
} LookupState;

CustomScanMethods gbt_lookup_scan_methods;
static GbtExecNodeMethods lookup_node_methods;

static Node *
create_lookup_state(CustomScan *cscan)
{
	LookupState *s = (LookupState *) gbt_exec_node_new(sizeof(LookupState),
													   &lookup_node_methods);
	List	   *priv = cscan->custom_private;
	int			c;

	s->strategies = list_nth(priv, LOOKUP_PRIV_STRATEGIES);
	s->subtypes = list_nth(priv, LOOKUP_PRIV_SUBTYPES);
	s->operators = list_nth(priv, LOOKUP_PRIV_OPERATORS);
	s->array_at = intVal(list_nth(priv, LOOKUP_PRIV_ARRAY));
	s->covered = intVal(list_nth(priv, LOOKUP_PRIV_COVERED)) != 0;
	for (c = 0; c < GBT_MAX_COLS; c++)
		s->attmap[c] = list_nth_int(list_nth(priv, LOOKUP_PRIV_ATTMAP), c);
	s->natts = intVal(list_nth(priv, LOOKUP_PRIV_NATTS));
	s->direction = intVal(list_nth(priv, LOOKUP_PRIV_DIRECTION));
	return (Node *) s;
}

static void
begin_lookup(GbtExecNode *node, EState *estate, int eflags)
{
	LookupState *s = (LookupState *) node;
	CustomScan *cscan = (CustomScan *) node->css.ss.ps.plan;
	Relation	heap = node->css.ss.ss_currentRelation;
	int			c;

	s->index = index_open((Oid) intVal(list_nth(cscan->custom_private, LOOKUP_PRIV_INDEX)),
						  AccessShareLock);
	for (c = 0; c < GBT_MAX_COLS; c++)
		if (s->attmap[c] > 0)
			s->coltype[c] = gbt_key_type(TupleDescAttr(RelationGetDescr(heap),
													   s->attmap[c] - 1)->atttypid);
	s->heapslot = table_slot_create(heap, NULL);
	s->bounds = ExecInitExprList(cscan->custom_exprs, &node->css.ss.ps);
	if (s->array_at < 0)
		node->keys_label = "Key Ranges Looked Up";
}

/*
 * The conditions as scan keys, their bounds copied to runcxt; false when a
 * bound is NULL (no row satisfies it: the operators are strict), with
 * node.why.
 */
static bool
gather_keys(LookupState *s, ScanKey keys)
{
	int			i;

	for (i = 0; i < list_length(s->bounds); i++)
	{
		bool		isnull;
		Datum		v = ExecEvalExpr(list_nth(s->bounds, i),
									 s->node.css.ss.ps.ps_ExprContext, &isnull);
		Oid			subtype = list_nth_oid(s->subtypes, i);
		MemoryContext old;
		int16		typlen;
		bool		typbyval;

		if (isnull)
		{
			s->node.why = i == s->array_at ? "a NULL array" : "a NULL bound";
			return false;
		}
		if (i == s->array_at)
		{
			typlen = -1;
			typbyval = false;
		}
		else
			get_typlenbyval(subtype, &typlen, &typbyval);
		old = MemoryContextSwitchTo(s->node.runcxt);
		ScanKeyEntryInitialize(&keys[i], i == s->array_at ? SK_SEARCHARRAY : 0, 1,
							   list_nth_int(s->strategies, i), subtype,
							   s->index->rd_indcollation[0],
							   get_opcode(list_nth_oid(s->operators, i)),
							   datumCopy(v, typbyval, typlen));
		MemoryContextSwitchTo(old);
	}
	return true;
}

/* Ask the service for the keys' rows; false (with node.why) if it cannot. */
static bool
ask_service(LookupState *s, ScanKey keys, int nkeys)
{
	GbtExecNode *node = &s->node;
	Relation	heap = node->css.ss.ss_currentRelation;
	uint64	   *lo;
	uint64	   *hi;
	bool		sorted;
	int			c;

	if (!gbt_exec_device_on(node))
		return false;
	/* Too few elements to be worth encoding and sorting: no need to look. */
	if (s->array_at >= 0)
	{
		ArrayType  *array = DatumGetArrayTypeP(keys[s->array_at].sk_argument);

		s->nkeys = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
		if (!gbt_exec_enough_keys(node, s->nkeys, false))
			return false;
	}
	if (!gbt_keys_to_ranges(keys, nkeys, s->index->rd_opcintype[0], true, &sorted, &lo, &hi,
							&s->nkeys))
	{
		node->why = "keys the service does not take";
		return false;
	}
	gbt_exec_keys_ready(node);
	if (s->array_at >= 0 && !gbt_exec_enough_keys(node, s->nkeys, false))
		return false;
	if (s->nkeys == 0)
	{
		node->why = "no key satisfies the conditions";
		return false;
	}
	/*
	 * Room for a range's rows as the planner expects them, and half again
	 * (estimates are rough): one request, mostly, where too little room
	 * costs a pass over the range for nothing, and a second.
	 */
	if (!gbt_lookup(heap, s->index, lo, hi, s->nkeys, sorted, node->css.ss.ps.state->es_snapshot,
					s->array_at < 0 ? 1.5 * node->css.ss.ps.plan->plan_rows : 0,
					&s->rows, &node->answer, &node->why))
		return false;
	s->nkeys = node->answer.nkeys;	/* distinct, once the service sorted them */
	for (c = 0; c < GBT_MAX_COLS; c++)
	{
		if (s->covered && s->attmap[c] > 0 &&
			(c >= node->answer.columns.ncols ||
			 node->answer.columns.type[c] !=
			 gbt_column_type(TupleDescAttr(RelationGetDescr(heap), s->attmap[c] - 1)->atttypid)))
		{
			node->why = "the mirror does not hold a column as expected";
			return false;
		}
	}
	if (s->covered && s->direction != 0)
		s->order = gbt_entries_key_order(&s->rows);
	if (!s->covered)
	{
		s->order = gbt_entries_order(&s->rows, 0, s->rows.n, false);
		s->fetch = table_index_fetch_begin(heap);
	}
	return true;
}

/*
 * Gather the keys and decide who answers.  What the run holds goes to
 * runcxt, for the core to free at once after end_run().
 */
static void
start_lookup(LookupState *s)
{
	GbtExecNode *node = &s->node;
	MemoryContext old;
	int			nkeys = list_length(s->bounds);
	ScanKey		keys;

	gbt_exec_start_run(node);
	keys = MemoryContextAllocZero(node->runcxt, sizeof(ScanKeyData) * nkeys);
	if (!gather_keys(s, keys))
	{
		node->other = "nothing";
		return;
	}
	old = MemoryContextSwitchTo(node->runcxt);
	if (ask_service(s, keys, nkeys))
		node->answered = true;
	else
	{
		node->other = "nbtree";
		s->scan = gbt_index_beginscan(node->css.ss.ss_currentRelation, s->index,
									  node->css.ss.ps.state->es_snapshot, nkeys, 0);
		s->scan->xs_want_itup = s->covered;
		index_rescan(s->scan, keys, nkeys, NULL, 0);
	}
	MemoryContextSwitchTo(old);
}

/* The columns the plan needs of the heap tuple in s->heapslot. */
static TupleTableSlot *
store_heap_row(LookupState *s)
{
	TupleTableSlot *slot = s->node.css.ss.ss_ScanTupleSlot;
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
	TupleTableSlot *slot = s->node.css.ss.ss_ScanTupleSlot;
	Relation	heap = s->node.css.ss.ss_currentRelation;
	ItemPointer tid;

	ScanDirection dir = s->direction < 0 ? BackwardScanDirection : ForwardScanDirection;

	if (!s->covered)
		return index_getnext_slot(s->scan, dir, s->heapslot) ? store_heap_row(s) : NULL;
	while ((tid = index_getnext_tid(s->scan, dir)) != NULL)
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
							  s->node.css.ss.ps.state->es_snapshot);
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
	TupleTableSlot *slot = s->node.css.ss.ss_ScanTupleSlot;
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

	if (!s->node.started)
		start_lookup(s);

	if (s->scan != NULL)
	{
		TupleTableSlot *slot = next_nbtree_row(s);

		if (slot != NULL)
			return slot;
	}
	else if (s->node.answered && s->covered)
	{
		if (s->next < s->rows.n)
		{
			int64		i = s->direction < 0 ? s->rows.n - 1 - s->next : s->next;

			s->next++;
			return store_mirror_row(s, s->order != NULL ? s->order[i] : i);
		}
	}
	else if (s->node.answered)
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

/* Forget one run (what is not in runcxt). */
static void
end_lookup_run(GbtExecNode *node)
{
	LookupState *s = (LookupState *) node;

	if (s->scan != NULL)
		index_endscan(s->scan);
	if (BufferIsValid(s->vmbuffer))
		ReleaseBuffer(s->vmbuffer);
	s->vmbuffer = InvalidBuffer;
	if (s->fetch != NULL)
		table_index_fetch_end(s->fetch);
	ExecClearTuple(s->heapslot);
	s->scan = NULL;
	s->fetch = NULL;
	s->order = NULL;
	memset(&s->rows, 0, sizeof(s->rows));
	s->next = 0;
}

static void
end_lookup(GbtExecNode *node)
{
	LookupState *s = (LookupState *) node;

	ExecDropSingleTupleTableSlot(s->heapslot);
	index_close(s->index, AccessShareLock);
}

static void
explain_lookup(GbtExecNode *node, ExplainState *es)
{
	LookupState *s = (LookupState *) node;

	ExplainPropertyText("Index", RelationGetRelationName(s->index), es);
	ExplainPropertyText("Rows", !s->covered ? "from the heap" :
						s->direction > 0 ? "from the index's columns, in key order" :
						s->direction < 0 ? "from the index's columns, in descending key order" :
						"from the index's columns", es);
}

static GbtExecNodeMethods lookup_node_methods = {
	.keys_label = "Keys Looked Up",
	.next = lookup_next,
	.begin = begin_lookup,
	.end_run = end_lookup_run,
	.end = end_lookup,
	.explain_node = explain_lookup,
};

void
gbt_lookup_node_init(void)
{
	gbt_exec_node_register(&gbt_lookup_scan_methods, &lookup_node_methods, "GpubtreeLookup",
						   create_lookup_state);
}
