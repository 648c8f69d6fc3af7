/*
 * verify.c
 *	  gpubtree_verify(): the service's mirror of an index against the index.
 *
 * Reads every entry of the index (as a mirror build would) and asks the
 * service for its mirror's entries, in key order, then reports each TID
 * that one has and the other lacks, and the first place where the orders
 * differ.  No rows means the mirror holds exactly the index's entries.  A
 * mirror that is not current (the index changed since it was exported) is
 * reported as such: scans never use it.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"

#include "gpubtree.h"
#include "gpuscan.h"
#include "service.h"

PG_FUNCTION_INFO_V1(gpubtree_verify);

static void
put(ReturnSetInfo *rsinfo, const char *problem, ItemPointer tid)
{
	Datum		values[2];
	bool		nulls[2] = {false, tid == NULL};

	values[0] = CStringGetTextDatum(problem);
	values[1] = tid ? PointerGetDatum(tid) : (Datum) 0;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

static int
cmp_tid(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) a, (ItemPointer) b);
}

Datum
gpubtree_verify(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	index;
	Relation	heap;
	Oid			keytype;
	uint64	   *keys;
	ItemPointerData *itids;
	ItemPointerData *mtids = NULL;
	int64		ni,
				nm = 0,
				i,
				j;
	GbtReplyStatus status;

	InitMaterializedSRF(fcinfo, 0);
	index = index_open(PG_GETARG_OID(0), AccessShareLock);
	if (!gpubtree_is_gpubtree_index(index))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a gpubtree index", RelationGetRelationName(index))));
	if (!OidIsValid(keytype = gbt_mirror_key_type(index)))
		elog(ERROR, "gpubtree index \"%s\" has no mirrorable key", RelationGetRelationName(index));
	heap = table_open(index->rd_index->indrelid, AccessShareLock);

	ni = gbt_export_index(heap, index, keytype, &keys, &itids);
	if (!gbt_fetch_mirror_tids(index, &mtids, &nm, &status))
	{
		put(rsinfo, status == GBT_REPLY_NO_MIRROR ? "no current mirror" :
			"no GPU service answered", NULL);
		table_close(heap, AccessShareLock);
		index_close(index, AccessShareLock);
		return (Datum) 0;
	}

	/* The first place where the key orders differ... */
	for (i = 0; i < Min(ni, nm); i++)
		if (!ItemPointerEquals(&itids[i], &mtids[i]))
		{
			put(rsinfo, "order differs from here", &itids[i]);
			break;
		}

	/* ... and the entries one side lacks. */
	qsort(itids, ni, sizeof(ItemPointerData), cmp_tid);
	qsort(mtids, nm, sizeof(ItemPointerData), cmp_tid);
	for (i = 0, j = 0; i < ni || j < nm;)
	{
		int			c = i >= ni ? 1 : j >= nm ? -1 : cmp_tid(&itids[i], &mtids[j]);

		if (c < 0)
			put(rsinfo, "missing from the mirror", &itids[i++]);
		else if (c > 0)
			put(rsinfo, "not in the index", &mtids[j++]);
		else
		{
			i++;
			j++;
		}
	}

	table_close(heap, AccessShareLock);
	index_close(index, AccessShareLock);
	return (Datum) 0;
}
