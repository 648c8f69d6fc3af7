/*
 * explain.c
 *	  EXPLAIN says what gpubtree did, or would do, for bitmap scans.
 *
 * PostgreSQL 15 has no hook to add lines to one plan node, so after the
 * plan we add a "gpubtree" section: for each Bitmap Index Scan on a
 * gpubtree index, whether the GPU service can serve it and why not; with
 * ANALYZE, what the scans actually did (served by the GPU or the CPU engine,
 * keys probed, entries returned, device time, fallbacks to nbtree).
 */
#include "postgres.h"

#include "access/relation.h"
#include "commands/explain.h"
#include "nodes/plannodes.h"
#include "portability/instr_time.h"
#include "tcop/tcopprot.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "backend.h"
#include "build.h"
#include "scanstats.h"
#include "shmem.h"
#include "pg_compat.h"

static ExplainOneQuery_hook_type prev_ExplainOneQuery = NULL;

/* Collect the gpubtree indexes that Bitmap Index Scans in the plan use. */
static bool
collect_bitmap_scans(Plan *plan, List **indexes)
{
	if (plan == NULL)
		return false;
	if (IsA(plan, BitmapIndexScan))
	{
		Oid			indexid = ((BitmapIndexScan *) plan)->indexid;
		Relation	index = relation_open(indexid, NoLock);

		if (gpubtree_is_gpubtree_index(index))
			*indexes = list_append_unique_oid(*indexes, indexid);
		relation_close(index, NoLock);
	}
	collect_bitmap_scans(plan->lefttree, indexes);
	collect_bitmap_scans(plan->righttree, indexes);
	if (IsA(plan, BitmapAnd))
	{
		ListCell   *lc;

		foreach(lc, ((BitmapAnd *) plan)->bitmapplans)
			collect_bitmap_scans(lfirst(lc), indexes);
	}
	else if (IsA(plan, BitmapOr))
	{
		ListCell   *lc;

		foreach(lc, ((BitmapOr *) plan)->bitmapplans)
			collect_bitmap_scans(lfirst(lc), indexes);
	}
	else if (IsA(plan, Append))
	{
		ListCell   *lc;

		foreach(lc, ((Append *) plan)->appendplans)
			collect_bitmap_scans(lfirst(lc), indexes);
	}
	else if (IsA(plan, SubqueryScan))
		collect_bitmap_scans(((SubqueryScan *) plan)->subplan, indexes);
	return false;
}

/*
 * Where bitmap scans on gpubtree indexes go, and why not to the service.
 * The engine (which device) is machine-specific, so only VERBOSE shows it.
 */
static const char *
service_route(ExplainState *es, Oid indexrelid)
{
	char		note[GBT_ERRMSG_LEN];

	static char buf[2 * GBT_ERRMSG_LEN + 128];

	if (gpubtree_device_mode == GPUBTREE_DEVICE_OFF)
		return "nbtree (gpubtree.device = off)";
	if (gbt_shared == NULL)
		return "nbtree (no GPU service: gpubtree is not in shared_preload_libraries)";
	if (!gbt_service_running())
		return "nbtree (the GPU service is not running)";
	snprintf(buf, sizeof(buf), "GPU service for ranges and = ANY of %d or more keys, else nbtree",
			 gpubtree_min_gpu_batch);
	if (gbt_builder_note(indexrelid, note, sizeof(note)))
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "; %s", note);
	if (es->verbose)
	{
		SpinLockAcquire(&gbt_shared->mutex);
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "; service %s%s%s",
				 gbt_shared->status,
				 gbt_shared->gpu_usable ? ": " : "",
				 gbt_shared->gpu_usable ? gbt_shared->device_name : "");
		SpinLockRelease(&gbt_shared->mutex);
	}
	return buf;
}

static void
explain_gpubtree(PlannedStmt *plan, ExplainState *es, const GbtScanStats *before)
{
	List	   *indexes = NIL;
	ListCell   *lc;
	GbtScanStats d;

	if (plan == NULL || plan->commandType == CMD_UTILITY)
		return;
	collect_bitmap_scans(plan->planTree, &indexes);
	foreach(lc, plan->subplans)
		collect_bitmap_scans(lfirst(lc), &indexes);
	if (indexes == NIL)
		return;

	gbt_scan_stats_since(before, &d);

	/* Outside the plan's "Query" group: an unlabelled group of its own. */
	ExplainOpenGroup("gpubtree", NULL, true, es);
	if (es->format == EXPLAIN_FORMAT_TEXT)
		appendStringInfoString(es->str, "gpubtree:\n");
	foreach(lc, indexes)
	{
		char	   *name = get_rel_name(lfirst_oid(lc));

		if (es->format == EXPLAIN_FORMAT_TEXT)
			appendStringInfo(es->str, "  Bitmap Index Scan on %s: %s\n",
							 name, service_route(es, lfirst_oid(lc)));
		else
			ExplainPropertyText(name, service_route(es, lfirst_oid(lc)), es);
	}
	if (es->analyze)
	{
		if (es->format == EXPLAIN_FORMAT_TEXT)
		{
			appendStringInfo(es->str,
							 "  Service: %lld scans, %lld keys probed, %lld entries returned, %lld answered by nbtree instead",
							 (long long) d.gpu_scans, (long long) d.keys,
							 (long long) d.entries, (long long) d.fallbacks);
			if (es->verbose && d.gpu_scans > 0)
				appendStringInfo(es->str, ", on the %s",
								 d.on_gpu ? "GPU" : "CPU engine");
			if (es->timing && d.gpu_scans > 0)
				appendStringInfo(es->str, ", device time %.3f ms", d.device_ms);
			if (es->timing && d.build_ms > 0)
				appendStringInfo(es->str, ", mirror built in %.3f ms", d.build_ms);
			if (es->timing && es->verbose && d.gpu_scans > 0)
				appendStringInfo(es->str, "; in this backend: keys to ranges %.3f ms, round trips %.3f ms",
								 d.prep_ms, d.wait_ms);
			appendStringInfoChar(es->str, '\n');
			if (d.fallbacks > 0 && d.mirror_note[0] != '\0')
				appendStringInfo(es->str, "  Mirror: %s\n", d.mirror_note);
		}
		else
		{
			ExplainPropertyInteger("Service Scans", NULL, d.gpu_scans, es);
			ExplainPropertyInteger("Keys Probed", NULL, d.keys, es);
			ExplainPropertyInteger("Entries Returned", NULL, d.entries, es);
			ExplainPropertyInteger("Answered by nbtree", NULL, d.fallbacks, es);
			if (es->timing)
			{
				ExplainPropertyFloat("Device Time", "ms", d.device_ms, 3, es);
				ExplainPropertyFloat("Mirror Build Time", "ms", d.build_ms, 3, es);
			}
		}
	}
	ExplainCloseGroup("gpubtree", NULL, true, es);
}

/*
 * PostgreSQL's own ExplainOneQuery (standard_ExplainOneQuery() since 17),
 * followed by the gpubtree section.
 */
static void
gpubtree_ExplainOneQuery(Query *query, int cursorOptions, IntoClause *into,
						 ExplainState *es, const char *queryString,
						 ParamListInfo params, QueryEnvironment *queryEnv)
{
	GbtScanStats before;
	PlannedStmt *plan;
	instr_time	planstart,
				planduration;
	BufferUsage bufusage_start,
				bufusage;
	MemoryContextCounters mem_counters;
	MemoryContext planner_ctx = NULL;
	MemoryContext saved_ctx = NULL;

	if (prev_ExplainOneQuery)
	{
		prev_ExplainOneQuery(query, cursorOptions, into, es, queryString,
							 params, queryEnv);
		return;
	}

	gbt_scan_stats_get(&before);

	/* EXPLAIN (MEMORY): the planner's memory, in a context of its own */
	if (GBT_EXPLAIN_MEMORY(es))
	{
		planner_ctx = AllocSetContextCreate(CurrentMemoryContext,
											"explain analyze planner context",
											ALLOCSET_DEFAULT_SIZES);
		saved_ctx = MemoryContextSwitchTo(planner_ctx);
	}
	if (es->buffers)
		bufusage_start = pgBufferUsage;
	INSTR_TIME_SET_CURRENT(planstart);
	plan = pg_plan_query(query, queryString, cursorOptions, params);
	INSTR_TIME_SET_CURRENT(planduration);
	INSTR_TIME_SUBTRACT(planduration, planstart);
	if (GBT_EXPLAIN_MEMORY(es))
	{
		MemoryContextSwitchTo(saved_ctx);
		MemoryContextMemConsumed(planner_ctx, &mem_counters);
	}
	if (es->buffers)
	{
		memset(&bufusage, 0, sizeof(BufferUsage));
		BufferUsageAccumDiff(&bufusage, &pgBufferUsage, &bufusage_start);
	}
	gbt_ExplainOnePlan(plan, into, es, queryString, params, queryEnv,
					   &planduration, (es->buffers ? &bufusage : NULL),
					   (GBT_EXPLAIN_MEMORY(es) ? &mem_counters : NULL));
	explain_gpubtree(plan, es, &before);
}

void
gbt_explain_init(void)
{
	prev_ExplainOneQuery = ExplainOneQuery_hook;
	ExplainOneQuery_hook = gpubtree_ExplainOneQuery;
}
