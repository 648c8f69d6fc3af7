/*
 * exec_explain.c
 *	  What EXPLAIN says of every plan node that asks the service: the node's
 *	  own lines, then under ANALYZE who answered the run (every process's, in
 *	  a parallel plan), and of the service's answer: the engine, the keys,
 *	  how many entries the mirror decided and the heap checked, and the
 *	  times.
 */
#include "postgres.h"

#include "commands/explain.h"

#include "exec_node.h"
#include "pg_compat.h"

/*
 * One account of every process that ran the node: the leader's run, and in
 * a parallel-aware plan the workers' (exec_node.c).  The service's counts
 * and times are summed over the runs it answered; *nanswered and *nother
 * count the runs, and *other and *why tell who answered the first run the
 * service did not.  False if no process ran it.
 */
static bool
all_runs(GbtExecNode *node, int *nanswered, int *nother, const char **other,
		 const char **why, double *keys_ms, GbtAggAnswer *sum)
{
	int			i;

	*nanswered = *nother = 0;
	*other = *why = NULL;
	*keys_ms = 0;
	memset(sum, 0, sizeof(*sum));
	for (i = -1; i < node->nworker_runs; i++)
	{
		GbtExecWorkerRun leader;
		const GbtExecWorkerRun *run;

		if (i < 0)
		{
			leader.started = node->started;
			leader.answered = node->answered;
			leader.keys_ms = node->keys_ms;
			leader.answer = node->answer;
			run = &leader;
		}
		else
			run = &node->worker_runs[i];
		if (!run->started)
			continue;
		*keys_ms += run->keys_ms;
		if (!run->answered)
		{
			if ((*nother)++ == 0)
			{
				*other = i < 0 ? node->other : run->other;
				*why = i < 0 ? node->why : run->why;
			}
			continue;
		}
		if ((*nanswered)++ == 0)
		{
			*sum = run->answer; /* the first one's columns and result */
			continue;
		}
		sum->on_gpu |= run->answer.on_gpu;
		sum->device_ms += run->answer.device_ms;
		sum->total_ms += run->answer.total_ms;
		sum->blocks += run->answer.blocks;
		sum->visible_blocks += run->answer.visible_blocks;
		sum->map_read |= run->answer.map_read;
		sum->nkeys += run->answer.nkeys;
		sum->entries += run->answer.entries;
		sum->checked += run->answer.checked;
		sum->checked_visible += run->answer.checked_visible;
	}
	return *nanswered + *nother > 0;
}

void
gbt_exec_explain(CustomScanState *css, List *ancestors, ExplainState *es)
{
	GbtExecNode *node = (GbtExecNode *) css;
	const GbtExecNodeMethods *methods = (const GbtExecNodeMethods *) css->methods;
	int			nanswered;
	int			nother;
	const char *other;
	const char *why;
	double		keys_ms;
	GbtAggAnswer answer;

	methods->explain_node(node, es);
	if (!es->analyze ||
		!all_runs(node, &nanswered, &nother, &other, &why, &keys_ms, &answer))
		return;
	if (nanswered == 0)
	{
		ExplainPropertyText("Answered by", psprintf("%s (%s)", other, why), es);
		return;
	}
	ExplainPropertyText("Answered by", "GPU service", es);
	/* In a parallel plan, processes whose share the service did not answer. */
	if (nother > 0)
		ExplainPropertyText("Also Answered by",
							psprintf("%s (%s) in %d of %d processes", other, why,
									 nother, nanswered + nother), es);
	if (es->verbose)
		ExplainPropertyText("Engine", answer.on_gpu ? "GPU" : "CPU engine", es);
	ExplainPropertyInteger(node->keys_label != NULL ? node->keys_label : methods->keys_label,
						   NULL, answer.nkeys, es);
	ExplainPropertyInteger("Entries Decided by the Mirror", NULL,
						   answer.entries - answer.checked_visible, es);
	ExplainPropertyInteger("Entries Checked in Heap", NULL, answer.checked, es);
	if (methods->explain_answer != NULL)
		methods->explain_answer(node, es);
	if (es->timing)
	{
		ExplainPropertyFloat("Key Preparation Time", "ms", keys_ms, 3, es);
		ExplainPropertyFloat("Device Time", "ms", answer.device_ms, 3, es);
		ExplainPropertyFloat("Service Time", "ms", answer.total_ms, 3, es);
	}
}
