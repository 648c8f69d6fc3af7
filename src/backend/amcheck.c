/*
 * amcheck.c
 *	  gpubtree_index_check(): amcheck's B-tree verification on a gpubtree index.
 *
 * amcheck's bt_index_check() and bt_index_parent_check() refuse any index
 * whose relam is not btree.  A gpubtree index is an nbtree, so we label it
 * as btree (btree_label.c) while amcheck runs, and call amcheck's own
 * function, found in amcheck's schema, with the caller's right to execute
 * it.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "backend.h"
#include "indexarg.h"
#include "pg_compat.h"

PG_FUNCTION_INFO_V1(gpubtree_index_check);

/* The schema extension extoid is installed in (not exported before 16). */
static Oid
extension_schema(Oid extoid)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			schema = InvalidOid;

	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(extoid));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		schema = ((Form_pg_extension) GETSTRUCT(tuple))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return schema;
}

/*
 * amcheck's function fname(regclass, boolean), looked up in the schema
 * amcheck is installed in: never through the caller's search_path, where a
 * function of the same name could run with the caller's rights.
 */
static Oid
amcheck_function(const char *fname)
{
	Oid			extoid = get_extension_oid("amcheck", true);
	Oid			argtypes[2] = {REGCLASSOID, BOOLOID};
	char	   *schema;

	if (!OidIsValid(extoid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("gpubtree_index_check() needs the amcheck extension"),
				 errhint("Run CREATE EXTENSION amcheck.")));
	schema = get_namespace_name(extension_schema(extoid));
	return LookupFuncName(list_make2(makeString(schema),
									 makeString(pstrdup(fname))),
						  2, argtypes, false);
}

Datum
gpubtree_index_check(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	bool		heapallindexed = PG_GETARG_BOOL(1);
	bool		parent = PG_GETARG_BOOL(2);
	const char *fname = parent ? "bt_index_parent_check" : "bt_index_check";
	Oid			fnoid;
	Oid			heapoid;
	AttrNumber	keyattnum;
	AclResult	aclresult;
	Relation	heap;
	Relation	index;
	int			token;			/* our owner identity for the label */

	/* amcheck's own rule, checked before any lock: EXECUTE on its function. */
	fnoid = amcheck_function(fname);
	aclresult = object_aclcheck(ProcedureRelationId, fnoid, GetUserId(), ACL_EXECUTE);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_FUNCTION, get_func_name(fnoid));
	heapoid = gbt_index_arg_table(indexoid, "gpubtree_index_check",
								  GBT_READS_INDEX, NULL, &keyattnum);

	/* amcheck takes its own, stronger locks when it opens them. */
	index = gbt_index_arg_open(indexoid, heapoid, "gpubtree_index_check",
							   AccessShareLock, AccessShareLock, &heap);
	/* The label takes over our reference to the index, and unlabel closes it. */
	gpubtree_label_as_btree(index, &token);
	OidFunctionCall2(fnoid, ObjectIdGetDatum(indexoid),
					 BoolGetDatum(heapallindexed));
	gpubtree_unlabel(&token);
	table_close(heap, NoLock);

	PG_RETURN_VOID();
}
