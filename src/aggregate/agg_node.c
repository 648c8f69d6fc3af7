/*
 * agg_node.c
 *	  The GpubtreeAggregate custom scan at run time: ask the service for the
 *	  aggregates (exec_request.c), or run the ordinary plan below it; its
 *	  callbacks of the executor core (exec_node.h), which also says in
 *	  EXPLAIN which answered.
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
#include "agg_final.h"
#include "agg_node.h"
#include "agg_scan.h"
#include "backend.h"
#include "exec_node.h"
#include "keytypes.h"
#include "miscadmin.h"
#include "scankeys.h"
#include "shmem.h"
#include "nodes/extensible.h"
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
	GbtExecNode node;			/* first: what every service node holds */
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
	int64		null_entries;	/* rows with NULL keys added */
	int64		nranges;
} AggScanState;

CustomScanMethods gbt_agg_scan_methods;
static GbtExecNodeMethods agg_node_methods;

static Node *
create_agg_state(CustomScan *cscan)
{
	AggScanState *s = (AggScanState *) gbt_exec_node_new(sizeof(AggScanState),
														 &agg_node_methods);
	List	   *priv = cscan->custom_private;

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
begin_agg(GbtExecNode *node, EState *estate, int eflags)
{
	AggScanState *s = (AggScanState *) node;
	CustomScan *cscan = (CustomScan *) node->css.ss.ps.plan;

	s->bounds = ExecInitExprList(cscan->custom_exprs, &node->css.ss.ps);
}

/* Ask the service; false (with node.why) when the child must answer. */
static bool
answer_by_service(AggScanState *s)
{
	GbtExecNode *node = &s->node;
	EState	   *estate = node->css.ss.ps.state;
	ExprContext *econtext = node->css.ss.ps.ps_ExprContext;
	TupleTableSlot *slot = node->css.ss.ss_ScanTupleSlot;
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

	if (!gbt_exec_device_on(node))
		return false;
	for (i = 0; i < nkeys; i++)
	{
		bool		isnull;
		Datum		v = ExecEvalExpr(list_nth(s->bounds, i), econtext, &isnull);

		if (isnull)
		{
			node->why = "a NULL bound";
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
	gbt_exec_keys_ready(node);
	if (!ok)
		node->why = "conditions the service does not take";
	else if (runtime_array && !gbt_exec_enough_keys(node, s->nranges))
		ok = false;				/* planned before the array was known */
	else
	{
		/*
		 * The planner's visibility estimate may be stale (relallvisible
		 * moves only with VACUUM and ANALYZE): checking more entries in the
		 * heap than the child's cost buys, the child answers instead.
		 */
		double		buys = GBT_PLAN_COST(GBT_EXEC_CHILD(node)->plan) / gbt_agg_unsure_cost();

		ok = gbt_aggregate(heap, index, lo, hi, s->nranges, sorted, estate->es_snapshot,
						   (int64) Min(buys, (double) GBT_MAX_UNSURE),
						   &node->answer, &node->why);
		if (ok)
			s->nranges = node->answer.nkeys;	/* distinct, once the service sorted them */
	}

	/* Each column as the plan expects it in the mirror (never otherwise). */
	for (i = 0; ok && i < list_length(s->kinds); i++)
	{
		int			col = list_nth_int(s->columns, i);

		if (list_nth_int(s->kinds, i) != GBT_AGG_COUNT_STAR &&
			(col >= node->answer.columns.ncols ||
			 node->answer.columns.type[col] != gbt_column_type(list_nth_oid(s->argtypes, i))))
		{
			node->why = "the mirror does not hold a column as expected";
			ok = false;
		}
	}

	/* The rows the mirror has no entries for, through nbtree. */
	if (ok && s->null_keys)
	{
		ScanKeyData nullkey;
		GbtColumns	cols;
		int64		before = node->answer.r.count;

		ScanKeyEntryInitialize(&nullkey, SK_ISNULL | SK_SEARCHNULL, 1,
							   InvalidStrategy, InvalidOid, InvalidOid,
							   InvalidOid, (Datum) 0);
		gbt_index_columns(index, &cols);
		gbt_aggregate_by_scan(heap, index, &nullkey, 1, estate->es_snapshot,
							  &cols, &node->answer.r);
		s->null_entries = node->answer.r.count - before;
	}
	table_close(heap, NoLock);
	index_close(index, AccessShareLock);
	if (!ok)
		return false;

	ExecClearTuple(slot);
	for (i = 0; i < list_length(s->kinds); i++)
	{
		if (!gbt_agg_final(list_nth_int(s->kinds, i), list_nth_oid(s->argtypes, i),
						   &node->answer.r, list_nth_int(s->columns, i),
						   &slot->tts_values[i], &slot->tts_isnull[i], &node->why))
			return false;
	}
	ExecStoreVirtualTuple(slot);
	node->answered = true;
	return true;
}

/* The one row of the service's answer, or else the child's rows. */
static TupleTableSlot *
agg_next(ScanState *ss)
{
	AggScanState *s = (AggScanState *) ss;
	GbtExecNode *node = &s->node;

	if (!node->started)
	{
		gbt_exec_start_run(node);
		if (answer_by_service(s))
			return ss->ss_ScanTupleSlot;
		node->other = "the plan below";
	}
	if (!node->answered)
	{
		TupleTableSlot *child = ExecProcNode(GBT_EXEC_CHILD(node));

		if (TupIsNull(child))
			return ExecClearTuple(ss->ss_ScanTupleSlot);
		return ExecCopySlot(ss->ss_ScanTupleSlot, child);
	}
	return ExecClearTuple(ss->ss_ScanTupleSlot);
}

static void
explain_agg(GbtExecNode *node, ExplainState *es)
{
	AggScanState *s = (AggScanState *) node;
	char	   *name = get_rel_name(s->indexoid);

	ExplainPropertyText("Index", name ? name : "?", es);
	ExplainPropertyInteger("Conditions", NULL, list_length(s->strategies), es);
	if (s->null_keys)
		ExplainPropertyText("NULL Keys", "from an index scan", es);
}

static void
explain_agg_answer(GbtExecNode *node, ExplainState *es)
{
	AggScanState *s = (AggScanState *) node;

	if (s->null_keys)
		ExplainPropertyInteger("Entries with NULL Keys", NULL, s->null_entries, es);
	if (es->verbose)
	{
		ExplainPropertyInteger("Heap Blocks", NULL, node->answer.blocks, es);
		ExplainPropertyInteger("All-Visible Blocks", NULL, node->answer.visible_blocks, es);
	}
}

static GbtExecNodeMethods agg_node_methods = {
	.keys_label = "Key Ranges",
	.next = agg_next,
	.begin = begin_agg,
	.explain_node = explain_agg,
	.explain_answer = explain_agg_answer,
};

void
gbt_agg_node_init(void)
{
	gbt_exec_node_register(&gbt_agg_scan_methods, &agg_node_methods, "GpubtreeAggregate",
						   create_agg_state);
}
