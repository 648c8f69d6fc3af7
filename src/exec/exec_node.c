/*
 * exec_node.c
 *	  The CustomExecMethods of every plan node that asks the service: what
 *	  they all do to begin, to give rows, to rescan and to end, around the
 *	  node's own callbacks (exec_node.h); and the checks and clocks of a run
 *	  that they share.
 */
#include "postgres.h"

#include "executor/executor.h"
#include "utils/memutils.h"

#include "exec_node.h"
#include "settings.h"

#define NODE_METHODS(css) ((const GbtExecNodeMethods *) (css)->methods)

GbtExecNode *
gbt_exec_node_new(Size size, GbtExecNodeMethods *methods)
{
	GbtExecNode *node = (GbtExecNode *) newNode(size, T_CustomScanState);

	Assert(size >= sizeof(GbtExecNode));
	node->css.methods = &methods->exec;
	return node;
}

static void
begin_node(CustomScanState *css, EState *estate, int eflags)
{
	GbtExecNode *node = (GbtExecNode *) css;
	CustomScan *cscan = (CustomScan *) css->ss.ps.plan;

	/* Memory context names are constants: the node's goes in its ident. */
	node->runcxt = AllocSetContextCreate(CurrentMemoryContext, "gpubtree node run",
										 ALLOCSET_DEFAULT_SIZES);
	MemoryContextSetIdentifier(node->runcxt, css->methods->CustomName);
	if (cscan->custom_plans != NIL)
		css->custom_ps = list_make1(ExecInitNode(linitial(cscan->custom_plans),
												 estate, eflags));
	NODE_METHODS(css)->begin(node, estate, eflags);
}

/* Rows are checked by the node itself, or by the plan's qual. */
static bool
recheck_nothing(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
exec_node(CustomScanState *css)
{
	return ExecScan(&css->ss, NODE_METHODS(css)->next, recheck_nothing);
}

/* Forget one run: the node's, then what it kept in runcxt. */
static void
end_run(GbtExecNode *node)
{
	const GbtExecNodeMethods *methods = NODE_METHODS(&node->css);

	if (methods->end_run != NULL)
		methods->end_run(node);
	MemoryContextReset(node->runcxt);
	node->started = false;
	node->answered = false;
	node->other = NULL;
	node->why = NULL;
}

static void
end_node(CustomScanState *css)
{
	GbtExecNode *node = (GbtExecNode *) css;

	end_run(node);
	if (NODE_METHODS(css)->end != NULL)
		NODE_METHODS(css)->end(node);
	if (css->custom_ps != NIL)
		ExecEndNode(linitial(css->custom_ps));
}

static void
rescan_node(CustomScanState *css)
{
	end_run((GbtExecNode *) css);
	if (css->custom_ps != NIL)
		ExecReScan(linitial(css->custom_ps));
}

void
gbt_exec_node_register(CustomScanMethods *scan_methods, GbtExecNodeMethods *methods,
					   const char *name, Node *(*create) (CustomScan *cscan))
{
	scan_methods->CustomName = name;
	scan_methods->CreateCustomScanState = create;
	methods->exec.CustomName = name;
	methods->exec.BeginCustomScan = begin_node;
	methods->exec.ExecCustomScan = exec_node;
	methods->exec.EndCustomScan = end_node;
	methods->exec.ReScanCustomScan = rescan_node;
	methods->exec.ExplainCustomScan = gbt_exec_explain;
	RegisterCustomScanMethods(scan_methods);
}

void
gbt_exec_start_run(GbtExecNode *node)
{
	node->started = true;
	INSTR_TIME_SET_CURRENT(node->run_start);
}

void
gbt_exec_keys_ready(GbtExecNode *node)
{
	node->keys_ms = gbt_ms_since(node->run_start);
}

bool
gbt_exec_device_on(GbtExecNode *node)
{
	if (gpubtree_device_mode != GPUBTREE_DEVICE_OFF)
		return true;
	node->why = "gpubtree.device = off";
	return false;
}

/* A few keys are nbtree's: not worth a request. */
bool
gbt_exec_enough_keys(GbtExecNode *node, int64 nkeys)
{
	if (nkeys >= gpubtree_min_gpu_batch)
		return true;
	node->why = psprintf("%lld keys, fewer than gpubtree.min_gpu_batch", (long long) nkeys);
	return false;
}
