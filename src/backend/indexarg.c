/*
 * indexarg.c
 *	  The gpubtree index named by a regclass argument of an SQL function.
 *
 * A regclass can name any relation: a partitioned index (which has no
 * storage), another access method's index, a table, a view, an index still
 * being built, another session's temporary index, or nothing at all any
 * more.  gbt_index_arg_table() refuses all of these from the catalogs alone,
 * before any lock, so that the caller can then check the user's privileges
 * still without a lock: a call that is refused never queues behind, or
 * blocks, anyone else.  It also checks the privileges a SELECT of what the
 * call reads would need: USAGE on the schemas of the index and its table,
 * SELECT on the table or on each column read.  A regclass given as an OID
 * names a relation without the schema lookup that would check USAGE, so
 * every function that takes one goes through here.  gbt_index_arg_open()
 * then locks the table and the index, in that order (as amcheck and VACUUM
 * do), and checks again, since the index may have been dropped or rebuilt
 * in between.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "miscadmin.h"
#include "nodes/nodes.h"
#include "optimizer/optimizer.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "backend.h"
#include "indexarg.h"
#include "pg_compat.h"

static void
check_usage(Oid nspoid)
{
	AclResult	aclresult = object_aclcheck(NamespaceRelationId, nspoid, GetUserId(), ACL_USAGE);

	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_SCHEMA, get_namespace_name(nspoid));
}

/*
 * The table's columns that the index holds: its key and INCLUDE columns and
 * those its expressions and predicate use (attribute numbers offset by
 * FirstLowInvalidHeapAttributeNumber, as pull_varattnos() gives them).
 */
static Bitmapset *
index_columns(HeapTuple indextuple)
{
	Form_pg_index indexform = (Form_pg_index) GETSTRUCT(indextuple);
	Bitmapset  *cols = NULL;
	int			attnos[] = {Anum_pg_index_indexprs, Anum_pg_index_indpred};
	int			i;

	for (i = 0; i < indexform->indnatts; i++)
		if (indexform->indkey.values[i] != 0)
			cols = bms_add_member(cols, indexform->indkey.values[i] -
								  FirstLowInvalidHeapAttributeNumber);
	for (i = 0; i < lengthof(attnos); i++)
	{
		bool		isnull;
		Datum		d = SysCacheGetAttr(INDEXRELID, indextuple, attnos[i], &isnull);

		if (!isnull)
			pull_varattnos(stringToNode(TextDatumGetCString(d)), 1, &cols);
	}
	return cols;
}

/* SELECT on the table, or else on each of its columns cols. */
static void
check_select(Oid heapoid, Bitmapset *cols)
{
	int			i = -1;

	if (pg_class_aclcheck(heapoid, GetUserId(), ACL_SELECT) == ACLCHECK_OK)
		return;
	while ((i = bms_next_member(cols, i)) >= 0)
	{
		AttrNumber	attnum = i + FirstLowInvalidHeapAttributeNumber;

		if (pg_attribute_aclcheck(heapoid, attnum, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
			aclcheck_error_col(ACLCHECK_NO_PRIV, OBJECT_TABLE, get_rel_name(heapoid),
							   get_attname(heapoid, attnum, false));
	}
	/* Reading no column (say an expression key of constants) needs the table's. */
	if (bms_is_empty(cols))
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, get_rel_name(heapoid));
}

/*
 * The table of the gpubtree index indexoid, which must be a valid index of
 * table: checked in the catalogs, with no lock taken.  Errors name fname,
 * the SQL function called.  *leading_attnum is the table's column that is
 * the index's first (0 for an expression).
 *
 * The user must be allowed to read what the call reads (see the top):
 * with GBT_READS_INDEX every column the index holds, with GBT_READS_KEY its
 * leading column (every column of an expression key) and colname, a column
 * of the table unless NULL (a name that is none is the caller's to refuse).
 */
Oid
gbt_index_arg_table(Oid indexoid, const char *fname, GbtIndexArgReads reads,
					const char *colname, AttrNumber *leading_attnum)
{
	HeapTuple	tuple;
	Form_pg_class classform;
	char	   *relname;
	char		relkind;
	Oid			relam;
	Oid			relnamespace;
	Oid			heapoid;
	bool		valid;
	Bitmapset  *cols = NULL;

	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(indexoid));
	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", indexoid)));
	classform = (Form_pg_class) GETSTRUCT(tuple);
	relname = pstrdup(NameStr(classform->relname));
	relkind = classform->relkind;
	relam = classform->relam;
	relnamespace = classform->relnamespace;
	ReleaseSysCache(tuple);

	if (relkind == RELKIND_PARTITIONED_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s cannot be used on partitioned index \"%s\"", fname, relname),
				 errdetail("A partitioned index holds no entries of its own."),
				 errhint("Call it on the index of each partition.")));
	if (relkind != RELKIND_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index", relname)));
	if (!gpubtree_is_gpubtree_am(relam))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a gpubtree index", relname)));
	if (isOtherTempNamespace(relnamespace))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary indexes of other sessions")));

	tuple = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", indexoid)));
	heapoid = ((Form_pg_index) GETSTRUCT(tuple))->indrelid;
	valid = ((Form_pg_index) GETSTRUCT(tuple))->indisvalid;
	*leading_attnum = ((Form_pg_index) GETSTRUCT(tuple))->indkey.values[0];
	if (reads == GBT_READS_INDEX || *leading_attnum == 0)
		cols = index_columns(tuple);
	ReleaseSysCache(tuple);

	/* A SELECT would look both up by name first. */
	check_usage(relnamespace);
	if (get_rel_namespace(heapoid) != relnamespace)
		check_usage(get_rel_namespace(heapoid));
	if (reads == GBT_READS_KEY)
	{
		AttrNumber	colattnum = colname ? get_attnum(heapoid, colname) : InvalidAttrNumber;

		if (*leading_attnum != 0)
			cols = bms_add_member(cols, *leading_attnum - FirstLowInvalidHeapAttributeNumber);
		if (colattnum > 0)
			cols = bms_add_member(cols, colattnum - FirstLowInvalidHeapAttributeNumber);
	}
	check_select(heapoid, cols);

	/* Being built concurrently, or left behind by a failed build. */
	if (!valid)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s cannot be used on index \"%s\", which is not valid",
						fname, relname),
				 errhint("Wait for CREATE INDEX CONCURRENTLY to finish, or REINDEX the index.")));
	return heapoid;
}

/*
 * Lock and open the table heapoid found by gbt_index_arg_table(), then the
 * index, and check that it is still that table's valid gpubtree index.
 */
Relation
gbt_index_arg_open(Oid indexoid, Oid heapoid, const char *fname,
				   LOCKMODE heaplock, LOCKMODE indexlock, Relation *heap)
{
	Relation	index;

	*heap = try_table_open(heapoid, heaplock);
	index = try_relation_open(indexoid, indexlock);
	if (*heap == NULL || index == NULL ||
		index->rd_rel->relkind != RELKIND_INDEX ||
		index->rd_index->indrelid != heapoid ||
		!index->rd_index->indisvalid ||
		!gpubtree_is_gpubtree_index(index))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index with OID %u was dropped or changed while %s waited for its lock",
						indexoid, fname)));
	return index;
}
