/*
 * capture.c
 *	  Deletes and updates reach the mirrors: an internal row trigger.
 *
 * An index access method never hears of deletes; nbtree learns of dead
 * rows from VACUUM only.  So that the service can decide an entry's
 * visibility for any snapshot without the heap, each table that gets a
 * gpubtree index also gets an internal AFTER UPDATE OR DELETE FOR EACH ROW
 * trigger (PG-Strom's GpuCache does the same).  It fires ALWAYS, so also in
 * logical replication's apply workers and under session_replication_role =
 * replica; it is internal, so pg_dump leaves it out and CREATE INDEX makes
 * it again at restore.  An AFTER trigger fires only for rows that really
 * changed, in the (sub)transaction that changed them, at the end of the
 * statement: before any later statement of the transaction can read.
 *
 * For a row deleted, or updated other than by HOT, the trigger logs the
 * deletion of the row's index entry by the running (sub)transaction, through
 * the same per-transaction batch as aminsert's inserts (resync.c), so that
 * it reaches the change log before the commit is visible and is forgotten
 * with a rolled-back savepoint.  The entry is found by its key and by the
 * root of the row's HOT chain, where every index entry points.  A HOT
 * update leaves every indexed column (INCLUDE columns too) as it was, and
 * the entry stays visible to the new version: nothing is logged.
 *
 * A mirror trusts its visibility stamps only when every delete reaches it:
 * gbt_capture_active() says whether the table has the trigger, enabled, and
 * the index a plain column as key (an expression would need evaluating
 * here).  Otherwise the service decides by the visibility map, as for an
 * entry whose inserter it does not know.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_trigger.h"
#include "commands/trigger.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "storage/bufmgr.h"
#include "utils/acl.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "backend.h"
#include "capture.h"
#include "client.h"
#include "keytypes.h"
#include "resync.h"
#include "shmem.h"

#define CAPTURE_TRIGGER "gpubtree_capture"

PG_FUNCTION_INFO_V1(gpubtree_capture);

/* The captured gpubtree indexes of one table, cached until its relcache entry changes. */
typedef struct CapturedIndex
{
	GbtMirrorKey key;
	AttrNumber	attnum;			/* the key's table column */
	Oid			keytype;
} CapturedIndex;

typedef struct CaptureCache
{
	Oid			relid;
	bool		valid;
	int			n;
	CapturedIndex *indexes;
} CaptureCache;

static CaptureCache cache;
static bool callback_registered = false;

static void
capture_invalidate(Datum arg, Oid relid)
{
	if (!OidIsValid(relid) || relid == cache.relid)
		cache.valid = false;
}

/* Is trigger t the capture trigger, and does it fire? */
static bool
is_capture_trigger(const Trigger *t)
{
	return t->tgisinternal &&
		strncmp(t->tgname, CAPTURE_TRIGGER "_", strlen(CAPTURE_TRIGGER) + 1) == 0;
}

static const Trigger *
find_capture_trigger(Relation heap)
{
	int			i;

	if (heap->trigdesc == NULL)
		return NULL;
	for (i = 0; i < heap->trigdesc->numtriggers; i++)
		if (is_capture_trigger(&heap->trigdesc->triggers[i]))
			return &heap->trigdesc->triggers[i];
	return NULL;
}

/* Does the table's capture trigger fire? */
bool
gbt_capture_enabled(Relation heap)
{
	const Trigger *t = find_capture_trigger(heap);

	return t != NULL && t->tgenabled != TRIGGER_DISABLED &&
		heap->rd_rel->relam == HEAP_TABLE_AM_OID;
}

bool
gbt_capture_active(Relation heap, Relation index)
{
	return gbt_capture_enabled(heap) && index->rd_index->indkey.values[0] != 0;
}

/* The table's gpubtree indexes whose deletes are captured. */
static const CaptureCache *
captured_indexes(Relation heap)
{
	List	   *oids;
	ListCell   *lc;

	if (cache.valid && cache.relid == RelationGetRelid(heap))
		return &cache;
	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(capture_invalidate, (Datum) 0);
		callback_registered = true;
	}
	if (cache.indexes != NULL)
		pfree(cache.indexes);
	cache.indexes = NULL;
	cache.n = 0;
	cache.relid = RelationGetRelid(heap);
	oids = RelationGetIndexList(heap);
	cache.indexes = MemoryContextAllocZero(TopMemoryContext,
										   sizeof(CapturedIndex) * Max(list_length(oids), 1));
	foreach(lc, oids)
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);
		Oid			keytype = gbt_mirror_key_type(index);

		if (gpubtree_is_gpubtree_index(index) && OidIsValid(keytype) &&
			gbt_capture_active(heap, index))
		{
			CapturedIndex *ci = &cache.indexes[cache.n++];

			gbt_fill_key(&ci->key, index);
			ci->attnum = index->rd_index->indkey.values[0];
			ci->keytype = keytype;
		}
		index_close(index, AccessShareLock);
	}
	list_free(oids);
	cache.valid = true;
	return &cache;
}

/* The root of the HOT chain that the tuple at tid belongs to. */
static ItemPointerData
chain_root(Relation heap, HeapTuple tuple)
{
	ItemPointerData root = tuple->t_self;
	OffsetNumber roots[MaxHeapTuplesPerPage];
	Buffer		buf;

	if (!HeapTupleHeaderIsHeapOnly(tuple->t_data))
		return root;
	buf = ReadBuffer(heap, ItemPointerGetBlockNumber(&tuple->t_self));
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	heap_get_root_tuples(BufferGetPage(buf), roots);
	UnlockReleaseBuffer(buf);
	ItemPointerSetOffsetNumber(&root, roots[ItemPointerGetOffsetNumber(&tuple->t_self) - 1]);
	return root;
}

Datum
gpubtree_capture(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	Relation	heap;
	const CaptureCache *cc;
	ItemPointerData root;
	int			i;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_AFTER(td->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(td->tg_event) ||
		!(TRIGGER_FIRED_BY_UPDATE(td->tg_event) || TRIGGER_FIRED_BY_DELETE(td->tg_event)))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("gpubtree_capture() must be fired AFTER UPDATE OR DELETE FOR EACH ROW")));

	/* Without the service there are no mirrors to tell. */
	if (gbt_shared == NULL)
		return PointerGetDatum(NULL);
	/* HOT: the entry stays, and so do its values. */
	if (TRIGGER_FIRED_BY_UPDATE(td->tg_event) &&
		HeapTupleHeaderIsHeapOnly(td->tg_newtuple->t_data))
		return PointerGetDatum(NULL);

	heap = td->tg_relation;
	cc = captured_indexes(heap);
	if (cc->n == 0)
		return PointerGetDatum(NULL);
	root = chain_root(heap, td->tg_trigtuple);
	for (i = 0; i < cc->n; i++)
	{
		const CapturedIndex *ci = &cc->indexes[i];
		bool		isnull;
		Datum		value = heap_getattr(td->tg_trigtuple, ci->attnum,
										 RelationGetDescr(heap), &isnull);

		/* NULL keys are not mirrored. */
		if (!isnull)
			gbt_resync_delete(&ci->key, RelationGetRelid(heap),
							  gbt_encode_key(value, ci->keytype), &root);
	}
	return PointerGetDatum(NULL);
}

/* Create the trigger on one table that has none. */
static void
install_on(Relation heap, Oid funcoid)
{
	CreateTrigStmt *stmt;

	if (heap->rd_rel->relkind != RELKIND_RELATION ||
		heap->rd_rel->relam != HEAP_TABLE_AM_OID ||
		find_capture_trigger(heap) != NULL)
		return;
	stmt = makeNode(CreateTrigStmt);
	stmt->trigname = CAPTURE_TRIGGER;
	stmt->funcname = list_make1(makeString(CAPTURE_TRIGGER));
	stmt->row = true;
	stmt->timing = TRIGGER_TYPE_AFTER;
	stmt->events = TRIGGER_TYPE_UPDATE | TRIGGER_TYPE_DELETE;
	(void) CreateTriggerFiringOn(stmt, NULL, RelationGetRelid(heap), InvalidOid,
								 InvalidOid, InvalidOid, funcoid, InvalidOid, NULL,
								 true, false, TRIGGER_FIRES_ALWAYS);
	CommandCounterIncrement();
}

/* The capture trigger's function, in the extension's schema. */
static Oid
capture_function(Oid schema)
{
	return LookupFuncName(list_make2(makeString(get_namespace_name(schema)),
									 makeString(CAPTURE_TRIGGER)),
						  0, NULL, true);
}

/*
 * At ambuild: the table gets the trigger if it has none yet.  CREATE INDEX
 * has made it already (below); this covers the indexes PostgreSQL makes by
 * itself, on a partition created or attached under a partitioned index,
 * whose locks are strong enough already.
 */
void
gbt_capture_ensure(Relation heap, Relation index)
{
	Oid			funcoid;

	/* Our functions share a schema: the access method handler's. */
	if (heap->rd_rel->relkind != RELKIND_RELATION || find_capture_trigger(heap) != NULL ||
		!OidIsValid(funcoid = capture_function(get_func_namespace(index->rd_amhandler))))
		return;
	install_on(heap, funcoid);
}

/*
 * Before CREATE INDEX ... USING gpubtree on relid (the event trigger in
 * ddl_check.c): the trigger on the table, or on each partition of a
 * partitioned table.  Only for the table's owner, who alone may create the
 * index; others get PostgreSQL's error from CREATE INDEX itself, and no
 * lock from us.  The lock is the one CREATE TRIGGER takes; CREATE INDEX's
 * own lock is weaker, so it waits for nothing more.
 */
void
gbt_capture_install(Oid relid, Oid schema)
{
	Oid			funcoid;
	List	   *rels;
	ListCell   *lc;
	char		relkind = get_rel_relkind(relid);

	if ((relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE) ||
		!pg_class_ownercheck(relid, GetUserId()))
		return;
	funcoid = capture_function(schema);
	if (!OidIsValid(funcoid))
		return;
	rels = find_all_inheritors(relid, ShareRowExclusiveLock, NULL);
	foreach(lc, rels)
	{
		Relation	heap = table_open(lfirst_oid(lc), NoLock);

		install_on(heap, funcoid);
		table_close(heap, NoLock);
	}
	list_free(rels);
}

/*
 * After ALTER TABLE ... ENABLE or DISABLE TRIGGER: while the capture trigger
 * was off, deletes went unrecorded, and a mirror that trusted its stamps
 * would count their rows.  Queries stop trusting them while it is disabled
 * (gbt_capture_active()); at commit, every mirror of the table (and of its
 * partitions) is made unusable, so that the next is exported afresh.  Any
 * trigger subcommand does it: which triggers it touches is resolved later.
 */
void
gbt_capture_after_utility(Node *stmt)
{
	AlterTableStmt *at;
	ListCell   *lc;
	bool		touches = false;
	Oid			relid;
	List	   *rels;

	if (gbt_shared == NULL || !IsA(stmt, AlterTableStmt))
		return;
	at = (AlterTableStmt *) stmt;
	foreach(lc, at->cmds)
	{
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

		switch (cmd->subtype)
		{
			case AT_EnableTrig:
			case AT_EnableAlwaysTrig:
			case AT_EnableReplicaTrig:
			case AT_EnableTrigAll:
			case AT_EnableTrigUser:
			case AT_DisableTrig:
			case AT_DisableTrigAll:
			case AT_DisableTrigUser:
				touches = true;
				break;
			default:
				break;
		}
	}
	/* The command holds its lock on the table until commit. */
	if (!touches ||
		!OidIsValid(relid = RangeVarGetRelid(at->relation, NoLock, true)))
		return;
	rels = find_all_inheritors(relid, NoLock, NULL);
	foreach(lc, rels)
	{
		Relation	heap = table_open(lfirst_oid(lc), NoLock);
		List	   *oids = RelationGetIndexList(heap);
		ListCell   *ic;

		foreach(ic, oids)
			gbt_invalidate_at_commit(MyDatabaseId, lfirst_oid(ic));
		list_free(oids);
		table_close(heap, NoLock);
	}
	list_free(rels);
}
