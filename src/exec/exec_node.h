/*
 * exec_node.h
 *	  The executor core of the plan nodes (CustomScans) that ask the
 *	  service: the state they all begin with, and the callbacks a node gives
 *	  in place of PostgreSQL's CustomExecMethods (exec_node.c runs them:
 *	  begin, rows, rescan, end; exec_explain.c tells EXPLAIN who answered).
 *	  A new node is its planner hook, its create function and these
 *	  callbacks.
 */
#ifndef GPUBTREE_EXEC_NODE_H
#define GPUBTREE_EXEC_NODE_H

#include "postgres.h"

#include "commands/explain.h"
#include "executor/executor.h"
#include "nodes/extensible.h"
#include "portability/instr_time.h"

#include "exec_request.h"

/*
 * What one parallel worker's run of a node did, written to dynamic shared
 * memory when the worker shuts the node down, so that the leader's EXPLAIN
 * tells of every process (a parallel-aware node's plan only).
 */
typedef struct GbtExecWorkerRun
{
	bool		started;
	bool		answered;
	char		other[32];
	char		why[160];
	double		keys_ms;
	GbtAggAnswer answer;
} GbtExecWorkerRun;

typedef struct GbtExecShared
{
	int			nworkers;
	GbtExecWorkerRun runs[FLEXIBLE_ARRAY_MEMBER];
} GbtExecShared;

/*
 * What the state of every such node begins with.  A run (from the node's
 * first row to its end or rescan) decides once who answers it: the service
 * (answered, answer), or something else (other, why).
 */
typedef struct GbtExecNode
{
	CustomScanState css;		/* first: what the executor knows */
	MemoryContext runcxt;		/* what one run holds, reset after it */

	/* one run */
	bool		started;		/* who answers is decided */
	bool		answered;		/* by the service: answer */
	const char *other;			/* else who ("nbtree", ...) */
	const char *why;			/* and why not the service */
	instr_time	run_start;
	double		keys_ms;		/* gathering, encoding and sorting the keys */
	GbtAggAnswer answer;
	const char *keys_label;		/* EXPLAIN's name of answer.nkeys, where not
								 * the methods' */

	/* in a parallel plan */
	GbtExecShared *shared;		/* the workers' runs, in the DSM segment */
	GbtExecWorkerRun *worker_runs;	/* the leader's copy, for EXPLAIN */
	int			nworker_runs;
} GbtExecNode;

/* A node's callbacks, for gbt_exec_node_register(). */
typedef struct GbtExecNodeMethods
{
	CustomExecMethods exec;		/* first: what css.methods points to; filled
								 * by gbt_exec_node_register() */
	const char *keys_label;		/* EXPLAIN's name of answer.nkeys */
	ExecScanAccessMtd next;		/* the next row, or an empty slot */
	/* After the child plan (custom_ps) and runcxt are made. */
	void		(*begin) (GbtExecNode *node, EState *estate, int eflags);
	/* Free what a run holds outside runcxt (or NULL); before a rescan, end. */
	void		(*end_run) (GbtExecNode *node);
	/* Free what begin took (or NULL); before the child plan ends. */
	void		(*end) (GbtExecNode *node);
	/* EXPLAIN's lines of the node before who answered. */
	void		(*explain_node) (GbtExecNode *node, ExplainState *es);
	/* The node's own lines of the service's answer, before the times (or NULL). */
	void		(*explain_answer) (GbtExecNode *node, ExplainState *es);
} GbtExecNodeMethods;

/* The executor's CustomScanState for a plan of a node with these methods. */
extern GbtExecNode *gbt_exec_node_new(Size size, GbtExecNodeMethods *methods);

/* Register the node, name, whose plans make their state with create. */
extern void gbt_exec_node_register(CustomScanMethods *scan_methods,
								   GbtExecNodeMethods *methods, const char *name,
								   Node *(*create) (CustomScan *cscan));

/* The node's child plan, the one below it. */
#define GBT_EXEC_CHILD(node) ((PlanState *) linitial((node)->css.custom_ps))

/* A run starts (its clock too), and its keys are ready (keys_ms). */
extern void gbt_exec_start_run(GbtExecNode *node);
extern void gbt_exec_keys_ready(GbtExecNode *node);

/* Whether the service may be asked, and of nkeys keys; if not, why says why. */
extern bool gbt_exec_device_on(GbtExecNode *node);
extern bool gbt_exec_enough_keys(GbtExecNode *node, int64 nkeys, bool aggregate);

/* The ExplainCustomScan of every such node (exec_explain.c). */
extern void gbt_exec_explain(CustomScanState *css, List *ancestors, ExplainState *es);

#endif							/* GPUBTREE_EXEC_NODE_H */
