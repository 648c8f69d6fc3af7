/*
 * amcheck.c
 *	  gpubtree_index_check(): amcheck's B-tree verification on a gpubtree index.
 *
 * amcheck's bt_index_check() and bt_index_parent_check() refuse any index
 * whose relam is not btree.  A gpubtree index is an nbtree, so we label it
 * as btree (btree_label.c) while amcheck runs, and call amcheck's own
 * function, found by name, with the caller's right to execute it.
 */
#include "postgres.h"

#include "access/genam.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "gpubtree.h"

PG_FUNCTION_INFO_V1(gpubtree_index_check);

Datum
gpubtree_index_check(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	bool		heapallindexed = PG_GETARG_BOOL(1);
	bool		parent = PG_GETARG_BOOL(2);
	const char *fname = parent ? "bt_index_parent_check" : "bt_index_check";
	Oid			argtypes[2] = {REGCLASSOID, BOOLOID};
	Oid			fnoid;
	AclResult	aclresult;
	Relation	index;
	int			token;			/* our owner identity for the label */

	fnoid = LookupFuncName(list_make1(makeString(pstrdup(fname))), 2,
						   argtypes, true);
	if (!OidIsValid(fnoid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("gpubtree_index_check() needs the amcheck extension"),
				 errhint("Run CREATE EXTENSION amcheck.")));
	aclresult = pg_proc_aclcheck(fnoid, GetUserId(), ACL_EXECUTE);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_FUNCTION, get_func_name(fnoid));

	/* amcheck takes its own, stronger lock when it opens the index. */
	index = index_open(indexoid, AccessShareLock);
	if (!gpubtree_is_gpubtree_index(index))
	{
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a gpubtree index",
						RelationGetRelationName(index)),
				 errhint("Use amcheck's %s() for btree indexes.", fname)));
	}

	gpubtree_label_as_btree(index, &token);
	OidFunctionCall2(fnoid, ObjectIdGetDatum(indexoid),
					 BoolGetDatum(heapallindexed));
	gpubtree_unlabel(&token);

	PG_RETURN_VOID();
}
