/*
 * agg_node.c
 *	  The GpubtreeAggregate custom scan at run time: ask the service for the
 *	  aggregates (agg_exec.c), or run the ordinary plan below it, and say in
 *	  EXPLAIN which did.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "agg_exec.h"
#include "agg_final.h"
#include "agg_node.h"
#include "backend.h"
#include "keytypes.h"
#include "miscadmin.h"
#include "scankeys.h"
#include "shmem.h"
#include "nodes/extensible.h"
#include "portability/instr_time.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planner.h"
#include "optimizer/prep.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "pg_compat.h"


typedef struct AggScanState
{
	CustomScanState css;
	Oid			indexoid;
	List	   *strategies;
	List	   *subtypes;
	List	   *operators;
	List	   *arrays;
	List	   *kinds;
	List	   *columns;
	List	   *argtypes;
	bool		null_keys;		/* add the rows with NULL keys */
	List	   *bounds;			/* ExprState per condition */
	bool		done;			/* the one row is out */
	bool		fallback;		/* the child answers */
	const char *why;			/* why the child answers */
	GbtAggAnswer answer;
	int64		null_entries;	/* rows with NULL keys added */
	int64		nranges;
	double		keys_ms;		/* evaluating, encoding and sorting the keys */
	bool		answered;
} AggScanState;

CustomScanMethods gbt_agg_scan_methods;
static CustomExecMethods agg_exec_methods;

static Node *
create_agg_state(CustomScan *cscan)
{
	AggScanState *s = (AggScanState *) newNode(sizeof(AggScanState), T_CustomScanState);
	List	   *priv = cscan->custom_private;

	s->css.methods = &agg_exec_methods;
	s->indexoid = (Oid) intVal(list_nth(priv, PRIV_INDEX));
	s->strategies = list_nth(priv, PRIV_STRATEGIES);
	s->subtypes = list_nth(priv, PRIV_SUBTYPES);
	s->operators = list_nth(priv, PRIV_OPERATORS);
	s->arrays = list_nth(priv, PRIV_ARRAYS);
	s->kinds = list_nth(priv, PRIV_KINDS);
	s->columns = list_nth(priv, PRIV_COLUMNS);
	s->argtypes = list_nth(priv, PRIV_ARGTYPES);
	s->null_keys = intVal(list_nth(priv, PRIV_NULL_KEYS)) != 0;
	return (Node *) s;
}

static void
begin_agg(CustomScanState *node, EState *estate, int eflags)
{
	AggScanState *s = (AggScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;

	node->custom_ps = list_make1(ExecInitNode(linitial(cscan->custom_plans), estate, eflags));
	s->bounds = ExecInitExprList(cscan->custom_exprs, &node->ss.ps);
}

/* Ask the service; false (with s->why) when the child must answer. */
static bool
answer_by_service(AggScanState *s)
{
	EState	   *estate = s->css.ss.ps.state;
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;
	TupleTableSlot *slot = s->css.ss.ss_ScanTupleSlot;
	int			nkeys = list_length(s->bounds);
	ScanKeyData *keys = palloc0(sizeof(ScanKeyData) * Max(nkeys, 1));
	Relation	index;
	Relation	heap;
	uint64	   *lo;
	uint64	   *hi;
	bool		ok;
	bool		runtime_array = false;
	bool		sorted;
	int			i;
	instr_time	t0,
				t1;

	INSTR_TIME_SET_CURRENT(t0);
	if (gpubtree_device_mode == GPUBTREE_DEVICE_OFF)
	{
		s->why = "gpubtree.device = off";
		return false;
	}
	for (i = 0; i < nkeys; i++)
	{
		bool		isnull;
		Datum		v = ExecEvalExpr(list_nth(s->bounds, i), econtext, &isnull);

		if (isnull)
		{
			s->why = "a NULL bound";
			return false;
		}
		runtime_array |= list_nth_int(s->arrays, i) == GBT_ARRAY_RUNTIME;
		ScanKeyEntryInitialize(&keys[i], list_nth_int(s->arrays, i) != GBT_ARRAY_NONE ?
							   SK_SEARCHARRAY : 0,
							   1, list_nth_int(s->strategies, i),
							   list_nth_oid(s->subtypes, i), InvalidOid,
							   get_opcode(list_nth_oid(s->operators, i)), v);
	}

	index = index_open(s->indexoid, AccessShareLock);
	heap = table_open(index->rd_index->indrelid, NoLock);
	ok = gbt_keys_to_ranges(keys, nkeys, index->rd_opcintype[0], true, &sorted, &lo, &hi,
							&s->nranges);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	s->keys_ms = INSTR_TIME_GET_MILLISEC(t1);
	if (!ok)
		s->why = "conditions the service does not take";
	else if (runtime_array && s->nranges < gpubtree_min_gpu_batch)
	{
		/* Planned before the array was known: a few keys are nbtree's. */
		s->why = psprintf("%lld keys, fewer than gpubtree.min_gpu_batch",
						  (long long) s->nranges);
		ok = false;
	}
	else
	{
		/*
		 * The planner's visibility estimate may be stale (relallvisible
		 * moves only with VACUUM and ANALYZE): checking more entries in the
		 * heap than the child's cost buys, the child answers instead.
		 */
		PlanState  *child = linitial(s->css.custom_ps);
		double		buys = GBT_PLAN_COST(child->plan) / gbt_agg_unsure_cost();

		ok = gbt_aggregate(heap, index, lo, hi, s->nranges, sorted, estate->es_snapshot,
						   (int64) Min(buys, (double) GBT_MAX_UNSURE),
						   &s->answer, &s->why);
		if (ok)
			s->nranges = s->answer.nkeys;	/* distinct, once the service sorted them */
	}

	/* Each column as the plan expects it in the mirror (never otherwise). */
	for (i = 0; ok && i < list_length(s->kinds); i++)
	{
		int			col = list_nth_int(s->columns, i);

		if (list_nth_int(s->kinds, i) != GBT_AGG_COUNT_STAR &&
			(col >= s->answer.columns.ncols ||
			 s->answer.columns.type[col] != gbt_column_type(list_nth_oid(s->argtypes, i))))
		{
			s->why = "the mirror does not hold a column as expected";
			ok = false;
		}
	}

	/* The rows the mirror has no entries for, through nbtree. */
	if (ok && s->null_keys)
	{
		ScanKeyData nullkey;
		GbtColumns	cols;
		int64		before = s->answer.r.count;

		ScanKeyEntryInitialize(&nullkey, SK_ISNULL | SK_SEARCHNULL, 1,
							   InvalidStrategy, InvalidOid, InvalidOid,
							   InvalidOid, (Datum) 0);
		gbt_index_columns(index, &cols);
		gbt_aggregate_by_scan(heap, index, &nullkey, 1, estate->es_snapshot,
							  &cols, &s->answer.r);
		s->null_entries = s->answer.r.count - before;
	}
	table_close(heap, NoLock);
	index_close(index, AccessShareLock);
	if (!ok)
		return false;

	ExecClearTuple(slot);
	for (i = 0; i < list_length(s->kinds); i++)
	{
		if (!gbt_agg_final(list_nth_int(s->kinds, i), list_nth_oid(s->argtypes, i),
						   &s->answer.r, list_nth_int(s->columns, i),
						   &slot->tts_values[i], &slot->tts_isnull[i], &s->why))
			return false;
	}
	ExecStoreVirtualTuple(slot);
	s->answered = true;
	return true;
}

static TupleTableSlot *
agg_next(ScanState *ss)
{
	AggScanState *s = (AggScanState *) ss;

	if (!s->done && !s->fallback)
	{
		s->done = true;
		if (answer_by_service(s))
			return ss->ss_ScanTupleSlot;
		s->fallback = true;
	}
	if (s->fallback)
	{
		TupleTableSlot *child = ExecProcNode(linitial(s->css.custom_ps));

		if (TupIsNull(child))
			return ExecClearTuple(ss->ss_ScanTupleSlot);
		return ExecCopySlot(ss->ss_ScanTupleSlot, child);
	}
	return ExecClearTuple(ss->ss_ScanTupleSlot);
}

static bool
agg_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
exec_agg(CustomScanState *node)
{
	return ExecScan(&node->ss, agg_next, agg_recheck);
}

static void
end_agg(CustomScanState *node)
{
	ExecEndNode(linitial(node->custom_ps));
}

static void
rescan_agg(CustomScanState *node)
{
	AggScanState *s = (AggScanState *) node;

	s->done = false;
	s->fallback = false;
	s->answered = false;
	ExecReScan(linitial(node->custom_ps));
}

static void
explain_agg(CustomScanState *node, List *ancestors, ExplainState *es)
{
	AggScanState *s = (AggScanState *) node;
	char	   *name = get_rel_name(s->indexoid);

	ExplainPropertyText("Index", name ? name : "?", es);
	ExplainPropertyInteger("Conditions", NULL, list_length(s->strategies), es);
	if (s->null_keys)
		ExplainPropertyText("NULL Keys", "from an index scan", es);
	if (!es->analyze)
		return;
	if (s->answered)
	{
		ExplainPropertyText("Answered by", "GPU service", es);
		if (es->verbose)
			ExplainPropertyText("Engine", s->answer.on_gpu ? "GPU" : "CPU engine", es);
		ExplainPropertyInteger("Key Ranges", NULL, s->nranges, es);
		ExplainPropertyInteger("Entries Decided by the Mirror", NULL,
							   s->answer.r.count - s->answer.checked_visible -
							   s->null_entries, es);
		ExplainPropertyInteger("Entries Checked in Heap", NULL, s->answer.checked, es);
		if (s->null_keys)
			ExplainPropertyInteger("Entries with NULL Keys", NULL, s->null_entries, es);
		if (es->verbose)
		{
			ExplainPropertyInteger("Heap Blocks", NULL, s->answer.blocks, es);
			ExplainPropertyInteger("All-Visible Blocks", NULL, s->answer.visible_blocks, es);
		}
		if (es->timing)
		{
			ExplainPropertyFloat("Key Preparation Time", "ms", s->keys_ms, 3, es);
			ExplainPropertyFloat("Device Time", "ms", s->answer.device_ms, 3, es);
			ExplainPropertyFloat("Service Time", "ms", s->answer.total_ms, 3, es);
		}
	}
	else if (s->fallback)
		ExplainPropertyText("Answered by", psprintf("the plan below (%s)", s->why), es);
}

void
gbt_agg_node_init(void)
{
	gbt_agg_scan_methods.CustomName = "GpubtreeAggregate";
	gbt_agg_scan_methods.CreateCustomScanState = create_agg_state;
	agg_exec_methods.CustomName = "GpubtreeAggregate";
	agg_exec_methods.BeginCustomScan = begin_agg;
	agg_exec_methods.ExecCustomScan = exec_agg;
	agg_exec_methods.EndCustomScan = end_agg;
	agg_exec_methods.ReScanCustomScan = rescan_agg;
	agg_exec_methods.ExplainCustomScan = explain_agg;
	RegisterCustomScanMethods(&gbt_agg_scan_methods);
}
