/*
 * ddl_check.c
 *	  Event trigger that rejects gpubtree indexes on unsupported key types.
 *
 * Without it, CREATE INDEX ... USING gpubtree (textcol) fails with
 * PostgreSQL's generic "no default operator class" message, which does not
 * say what would work.  The trigger runs at ddl_command_start, before the
 * statement is analysed, and only looks at plain key columns without an
 * explicit operator class; everything else is left to PostgreSQL's checks.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "fmgr.h"
#include "nodes/parsenodes.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "backend.h"
#include "capture.h"
#include "keytypes.h"

PG_FUNCTION_INFO_V1(gpubtree_check_create_index);

Datum
gpubtree_check_create_index(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata;
	IndexStmt  *stmt;
	Oid			relid;
	ListCell   *lc;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("gpubtree_check_create_index() must be called as an event trigger")));

	trigdata = (EventTriggerData *) fcinfo->context;
	if (!IsA(trigdata->parsetree, IndexStmt))
		PG_RETURN_VOID();
	stmt = (IndexStmt *) trigdata->parsetree;
	if (stmt->accessMethod == NULL ||
		strcmp(stmt->accessMethod, "gpubtree") != 0)
		PG_RETURN_VOID();

	/* A missing table is PostgreSQL's error to report, not ours. */
	relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	if (!OidIsValid(relid))
		PG_RETURN_VOID();

	foreach(lc, stmt->indexParams)
	{
		IndexElem  *elem = lfirst_node(IndexElem, lc);
		AttrNumber	attnum;
		Oid			typid;

		if (elem->name == NULL || elem->opclass != NIL)
			continue;
		attnum = get_attnum(relid, elem->name);
		if (attnum == InvalidAttrNumber)
			continue;
		typid = get_atttype(relid, attnum);
		if (gbt_key_type(typid) == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("access method \"gpubtree\" does not support data type %s",
							format_type_be(typid)),
					 errdetail("Key column \"%s\" has type %s; gpubtree supports %s.",
							   elem->name, format_type_be(typid), gbt_key_type_names()),
					 errhint("Use a btree index for this column, or carry it in INCLUDE (...).")));
	}

	/* Deletes of the table's rows must reach the mirror from now on. */
	gbt_capture_install(relid, get_func_namespace(fcinfo->flinfo->fn_oid), stmt->concurrent);
	PG_RETURN_VOID();
}
