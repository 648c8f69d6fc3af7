/*
 * exec_explain.c
 *	  What EXPLAIN says of every plan node that asks the service: the node's
 *	  own lines, then under ANALYZE who answered the run, and of the
 *	  service's answer: the engine, the keys, how many entries the mirror
 *	  decided and the heap checked, and the times.
 */
#include "postgres.h"

#include "commands/explain.h"

#include "exec_node.h"

void
gbt_exec_explain(CustomScanState *css, List *ancestors, ExplainState *es)
{
	GbtExecNode *node = (GbtExecNode *) css;
	const GbtExecNodeMethods *methods = (const GbtExecNodeMethods *) css->methods;
	const GbtAggAnswer *answer = &node->answer;

	methods->explain_node(node, es);
	if (!es->analyze || !node->started)
		return;
	if (!node->answered)
	{
		ExplainPropertyText("Answered by", psprintf("%s (%s)", node->other, node->why), es);
		return;
	}
	ExplainPropertyText("Answered by", "GPU service", es);
	if (es->verbose)
		ExplainPropertyText("Engine", answer->on_gpu ? "GPU" : "CPU engine", es);
	ExplainPropertyInteger(methods->keys_label, NULL, answer->nkeys, es);
	ExplainPropertyInteger("Entries Decided by the Mirror", NULL,
						   answer->entries - answer->checked_visible, es);
	ExplainPropertyInteger("Entries Checked in Heap", NULL, answer->checked, es);
	if (methods->explain_answer != NULL)
		methods->explain_answer(node, es);
	if (es->timing)
	{
		ExplainPropertyFloat("Key Preparation Time", "ms", node->keys_ms, 3, es);
		ExplainPropertyFloat("Device Time", "ms", answer->device_ms, 3, es);
		ExplainPropertyFloat("Service Time", "ms", answer->total_ms, 3, es);
	}
}
