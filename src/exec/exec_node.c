/*
 * exec_node.c
 *	  The CustomExecMethods of every plan node that asks the service: what
 *	  they all do to begin, to give rows, to rescan and to end, around the
 *	  node's own callbacks (exec_node.h); and the checks and clocks of a run
 *	  that they share.
 */
#include "postgres.h"

#include "access/parallel.h"
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

/*
 * A parallel-aware node's share of the DSM segment: one run summary per
 * worker, which each worker writes at shutdown and the leader copies at its
 * own (before the Gather destroys the segment), for EXPLAIN.
 */
static Size
estimate_dsm(CustomScanState *css, ParallelContext *pcxt)
{
	return add_size(offsetof(GbtExecShared, runs),
					mul_size(sizeof(GbtExecWorkerRun), pcxt->nworkers));
}

static void
initialize_dsm(CustomScanState *css, ParallelContext *pcxt, void *coordinate)
{
	GbtExecNode *node = (GbtExecNode *) css;

	node->shared = (GbtExecShared *) coordinate;
	node->shared->nworkers = pcxt->nworkers;
	memset(node->shared->runs, 0, sizeof(GbtExecWorkerRun) * pcxt->nworkers);
}

static void
reinitialize_dsm(CustomScanState *css, ParallelContext *pcxt, void *coordinate)
{
	initialize_dsm(css, pcxt, coordinate);
}

static void
initialize_worker(CustomScanState *css, shm_toc *toc, void *coordinate)
{
	((GbtExecNode *) css)->shared = (GbtExecShared *) coordinate;
}

static void
shutdown_node(CustomScanState *css)
{
	GbtExecNode *node = (GbtExecNode *) css;
	GbtExecShared *shared = node->shared;

	if (shared == NULL)
		return;
	if (IsParallelWorker())
	{
		GbtExecWorkerRun *run;

		if (ParallelWorkerNumber < 0 || ParallelWorkerNumber >= shared->nworkers)
			return;
		run = &shared->runs[ParallelWorkerNumber];
		run->started = node->started;
		run->answered = node->answered;
		strlcpy(run->other, node->other ? node->other : "", sizeof(run->other));
		strlcpy(run->why, node->why ? node->why : "", sizeof(run->why));
		run->keys_ms = node->keys_ms;
		run->answer = node->answer;
		return;
	}
	node->nworker_runs = shared->nworkers;
	node->worker_runs = MemoryContextAlloc(css->ss.ps.state->es_query_cxt,
										   sizeof(GbtExecWorkerRun) * shared->nworkers);
	memcpy(node->worker_runs, shared->runs, sizeof(GbtExecWorkerRun) * shared->nworkers);
	node->shared = NULL;		/* the Gather destroys the segment next */
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
	methods->exec.EstimateDSMCustomScan = estimate_dsm;
	methods->exec.InitializeDSMCustomScan = initialize_dsm;
	methods->exec.ReInitializeDSMCustomScan = reinitialize_dsm;
	methods->exec.InitializeWorkerCustomScan = initialize_worker;
	methods->exec.ShutdownCustomScan = shutdown_node;
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

/*
 * A few keys are nbtree's: not worth a request.  An aggregate's answer
 * brings no rows back, so it is worth one from fewer keys (GBT_AGG_KEYS_SHARE).
 */
bool
gbt_exec_enough_keys(GbtExecNode *node, int64 nkeys, bool aggregate)
{
	if (nkeys >= (aggregate ? GBT_AGG_MIN_KEYS : gpubtree_min_gpu_batch))
		return true;
	node->why = psprintf(aggregate ? "%lld keys, fewer than gpubtree.min_gpu_batch / %d" :
						 "%lld keys, fewer than gpubtree.min_gpu_batch",
						 (long long) nkeys, GBT_AGG_KEYS_SHARE);
	return false;
}
