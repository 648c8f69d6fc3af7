/*
 * exec_why.c
 *	  Why a query is not answered through the service: the planners of the
 *	  service's nodes note, for each table with a gpubtree index, why they
 *	  offered no node (gbt_plan_note()), and gpubtree_why_not(query) plans
 *	  the query with the notes on and returns them, with what the plan
 *	  chose.  Nothing is noted while no one asks, so planning costs the
 *	  same.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "executor/executor.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "exec_why.h"
#include "pg_compat.h"

PG_FUNCTION_INFO_V1(gpubtree_why_not);

typedef struct PlanNote
{
	char	   *node;
	Oid			relid;
	char	   *reason;
} PlanNote;

static bool collecting = false;
static List *notes = NIL;
static MemoryContext notes_cxt = NULL;

void
gbt_plan_note(const char *node, Oid relid, const char *reason)
{
	MemoryContext old;
	PlanNote   *n;
	ListCell   *lc;

	if (!collecting)
		return;
	old = MemoryContextSwitchTo(notes_cxt);
	foreach(lc, notes)
	{
		PlanNote   *o = lfirst(lc);

		/* the planner may try a relation twice (inheritance, subqueries) */
		if (strcmp(o->node, node) == 0 && o->relid == relid && strcmp(o->reason, reason) == 0)
		{
			MemoryContextSwitchTo(old);
			return;
		}
	}
	n = palloc(sizeof(PlanNote));
	n->node = pstrdup(node);
	n->relid = relid;
	n->reason = pstrdup(reason);
	notes = lappend(notes, n);
	MemoryContextSwitchTo(old);
}

bool
gbt_plan_noting(void)
{
	return collecting;
}

/* The service's nodes in a plan, as notes of their own. */
static void
note_plan_nodes(Plan *plan, List *subplans)
{
	ListCell   *lc;

	if (plan == NULL)
		return;
	if (IsA(plan, CustomScan) &&
		strncmp(((CustomScan *) plan)->methods->CustomName, "Gpubtree", 8) == 0)
		gbt_plan_note(((CustomScan *) plan)->methods->CustomName, InvalidOid,
					  "in the plan: the service is asked when it runs (EXPLAIN ANALYZE says what answered)");
	note_plan_nodes(plan->lefttree, subplans);
	note_plan_nodes(plan->righttree, subplans);
	if (IsA(plan, CustomScan))
		foreach(lc, ((CustomScan *) plan)->custom_plans)
			note_plan_nodes(lfirst(lc), subplans);
	if (IsA(plan, Append))
		foreach(lc, ((Append *) plan)->appendplans)
			note_plan_nodes(lfirst(lc), subplans);
	if (IsA(plan, SubqueryScan))
		note_plan_nodes(((SubqueryScan *) plan)->subplan, subplans);
}

/*
 * gpubtree_why_not(query text): plan the query (without running it) and
 * say, per node of the service, whether it is in the plan and, where not,
 * why not.
 */
Datum
gpubtree_why_not(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
	List	   *raw;
	ListCell   *lc;
	ListCell   *lp;
	List	   *found;

	InitMaterializedSRF(fcinfo, 0);
	raw = pg_parse_query(sql);
	if (list_length(raw) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpubtree_why_not() takes one statement, not %d",
						list_length(raw))));

	notes_cxt = AllocSetContextCreate(CurrentMemoryContext, "gpubtree why not",
									  ALLOCSET_SMALL_SIZES);
	notes = NIL;
	collecting = true;
	PG_TRY();
	{
		List	   *queries = pg_analyze_and_rewrite_fixedparams(linitial_node(RawStmt, raw),
																  sql, NULL, 0, NULL);

		foreach(lc, queries)
		{
			Query	   *query = lfirst_node(Query, lc);
			PlannedStmt *stmt;

			if (query->commandType == CMD_UTILITY)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("gpubtree_why_not() plans queries, not utility statements")));
			stmt = pg_plan_query(query, sql, CURSOR_OPT_PARALLEL_OK, NULL);
			/* what EXPLAIN of it would need */
			gbt_check_plan_permissions(stmt);
			note_plan_nodes(stmt->planTree, stmt->subplans);
			foreach(lp, stmt->subplans)
				note_plan_nodes(lfirst(lp), stmt->subplans);
		}
	}
	PG_CATCH();
	{
		collecting = false;
		notes = NIL;
		notes_cxt = NULL;		/* freed with the statement's memory */
		PG_RE_THROW();
	}
	PG_END_TRY();
	collecting = false;
	found = notes;
	notes = NIL;
	foreach(lc, found)
	{
		PlanNote   *n = lfirst(lc);
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = CStringGetTextDatum(n->node);
		values[1] = ObjectIdGetDatum(n->relid);
		nulls[1] = !OidIsValid(n->relid);
		values[2] = CStringGetTextDatum(n->reason);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	if (found == NIL)
	{
		Datum		values[3];
		bool		nulls[3] = {false, true, false};

		values[0] = CStringGetTextDatum("");
		values[1] = (Datum) 0;
		values[2] = CStringGetTextDatum("no table of the query has a gpubtree index the service could use");
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	MemoryContextDelete(notes_cxt);
	notes_cxt = NULL;
	return (Datum) 0;
}
