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
 * gbt_capture_active() says whether the table has the trigger (known by its
 * function, not its name), enabled ALWAYS, and the index a plain column as
 * key (an expression would need evaluating here); gbt_capture_current()
 * adds that no delete of this transaction still waits for its trigger
 * event.  Otherwise the service decides by the visibility map, as for an
 * entry whose inserter it does not know.
 *
 * The trigger's life: made before the first gpubtree index of a table is
 * built, with the table locked first (two sessions at once make one); under
 * CREATE INDEX CONCURRENTLY only if its lock is free at once; refused to
 * DROP TRIGGER and ALTER TRIGGER ... RENAME; dropped with the table's last
 * gpubtree index.  Whatever else stops it (DISABLE, ENABLE REPLICA, a drop
 * by cascade) leaves every mirror of the table unusable from its commit on
 * and untrusted by its own transaction at once; ENABLE [ORIGIN] of it is
 * taken as ENABLE ALWAYS.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/xact.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_trigger.h"
#include "commands/trigger.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "backend.h"
#include "capture.h"
#include "client.h"
#include "keytypes.h"
#include "resync.h"
#include "shmem.h"
#include "pg_compat.h"

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

/*
 * Tables whose capture trigger this transaction created, dropped or
 * switched, and tables of the gpubtree indexes it dropped: kept for the
 * transaction whose local ID they carry, forgotten at the next one.  Of
 * the touched tables, created_first: those whose trigger it created before
 * it had written anything (no transaction ID yet), and touched no more.
 */
static LocalTransactionId touched_lxid = InvalidLocalTransactionId;
static List *touched_rels = NIL;
static List *created_first = NIL;
static List *dropped_from = NIL;

static void invalidate_table(Oid relid, bool fire_always);

static void
forget_if_stale(void)
{
	if (touched_lxid == GBT_MY_LXID)
		return;
	list_free(touched_rels);
	list_free(created_first);
	list_free(dropped_from);
	touched_rels = NIL;
	created_first = NIL;
	dropped_from = NIL;
	touched_lxid = GBT_MY_LXID;
}

static void
touch(Oid relid, bool created_before_writing)
{
	MemoryContext old;

	forget_if_stale();
	old = MemoryContextSwitchTo(TopMemoryContext);
	touched_rels = list_append_unique_oid(touched_rels, relid);
	if (created_before_writing)
		created_first = list_append_unique_oid(created_first, relid);
	else
		created_first = list_delete_oid(created_first, relid);
	MemoryContextSwitchTo(old);
}

/*
 * Deletes of this transaction before the trigger was created or while it
 * was switched off went unrecorded, and the mirrors stay until its commit.
 */
static bool
touched_in_this_transaction(Oid relid)
{
	forget_if_stale();
	return list_member_oid(touched_rels, relid);
}

/*
 * Is trigger t a capture trigger?  Known by the function it calls, not by
 * its name, which the table's owner may change: an internal trigger whose
 * function is this library's gpubtree_capture().  Only internal triggers
 * are looked at (the foreign keys' besides ours), so the lookups are few.
 */
static bool
is_capture_function(bool tgisinternal, Oid tgfoid)
{
	FmgrInfo	finfo;

	if (!tgisinternal)
		return false;
	fmgr_info(tgfoid, &finfo);
	return finfo.fn_addr == gpubtree_capture;
}

static bool
is_capture_trigger(const Trigger *t)
{
	return is_capture_function(t->tgisinternal, t->tgfoid);
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

/* Does the table have the capture trigger, firing ALWAYS, on a heap? */
static bool
fires_always(Relation heap)
{
	const Trigger *t = find_capture_trigger(heap);

	return t != NULL && t->tgenabled == TRIGGER_FIRES_ALWAYS &&
		heap->rd_rel->relam == HEAP_TABLE_AM_OID;
}

/*
 * Does the table's capture trigger fire for every delete?  Only when it is
 * enabled ALWAYS: ENABLE [ORIGIN] skips the deletes of logical
 * replication's apply workers and of sessions with session_replication_role
 * = replica, ENABLE REPLICA those of every other session.
 */
bool
gbt_capture_enabled(Relation heap)
{
	return fires_always(heap) && !touched_in_this_transaction(RelationGetRelid(heap));
}

bool
gbt_capture_active(Relation heap, Relation index)
{
	return gbt_capture_enabled(heap) && index->rd_index->indkey.values[0] != 0;
}

/*
 * May an export of index inside CREATE INDEX take its stamps from the
 * capture trigger?  As gbt_capture_active(), and also where this
 * transaction created the trigger before it had written anything (each
 * CREATE INDEX of pg_restore, or of a session in autocommit): then none of
 * its deletes went unrecorded, every later one fires the trigger, and
 * other writers wait for CREATE INDEX's lock until the commit that shows
 * them the trigger.  Queries of this transaction still do not trust the
 * stamps (gbt_capture_current()).
 */
bool
gbt_capture_active_for_build(Relation heap, Relation index)
{
	Oid			relid = RelationGetRelid(heap);

	return fires_always(heap) && index->rd_index->indkey.values[0] != 0 &&
		(!touched_in_this_transaction(relid) || list_member_oid(created_first, relid));
}

/*
 * Is every delete of this transaction on the table in its mirrors' stamps
 * yet?  The capture trigger fires after the row's statement (or the
 * trigger's own event) ends, so a query run inside a statement that deletes
 * or updates the table (a volatile function in its target list, WHERE or
 * RETURNING, a user trigger, a rule) would find rows of this transaction
 * that are gone unstamped.  While any after-trigger event of the table is
 * pending, the mirror decides by the visibility map instead, which the
 * delete has already cleared for the row's page: its entries are checked
 * in the heap under the query's snapshot.  A parallel worker knows neither
 * its leader's pending events nor what its leader's transaction did to the
 * trigger: it trusts the stamps only when that transaction has written
 * nothing yet (no transaction ID), as a read-only query's has not.
 */
bool
gbt_capture_current(Relation heap, Relation index)
{
	if (!gbt_capture_active(heap, index))
		return false;
	if (IsParallelWorker())
		return !TransactionIdIsValid(GetTopTransactionIdIfAny());
	return !AfterTriggerPendingOnRel(RelationGetRelid(heap));
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

		/*
		 * Every delete the trigger fires for is logged, also where this
		 * transaction does not trust the stamps (it made or switched the
		 * trigger): the cache outlives the transaction, and the mirror built
		 * inside CREATE INDEX (gbt_capture_active_for_build()) needs them.
		 */
		if (gpubtree_is_gpubtree_index(index) && OidIsValid(keytype) &&
			index->rd_index->indkey.values[0] != 0)
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

/*
 * Create the trigger on one table that has none.  Creating a trigger needs
 * ShareRowExclusiveLock, which waits for the table's writers and holds up
 * every writer that comes after: with wait false (CREATE INDEX
 * CONCURRENTLY, and builds whose own lock is weaker), the trigger is made
 * only if the lock is free now, else the table goes without one (its
 * mirrors decide by the visibility map), and a NOTICE says so unless
 * quiet (a later step tries again).  created_before_writing: the
 * transaction had written nothing before this command (touch()).
 */
static void
install_on(Relation heap, Oid funcoid, bool wait, bool quiet,
		   bool created_before_writing)
{
	CreateTrigStmt *stmt;
	Oid			relid = RelationGetRelid(heap);

	if (heap->rd_rel->relkind != RELKIND_RELATION ||
		heap->rd_rel->relam != HEAP_TABLE_AM_OID ||
		find_capture_trigger(heap) != NULL)
		return;
	if (!CheckRelationLockedByMe(heap, ShareRowExclusiveLock, true))
	{
		if (wait)
			LockRelationOid(relid, ShareRowExclusiveLock);
		else if (!ConditionalLockRelationOid(relid, ShareRowExclusiveLock))
		{
			if (!quiet)
				ereport(NOTICE,
						(errmsg("table \"%s\" gets no gpubtree capture trigger now: it is being written",
								RelationGetRelationName(heap)),
						 errdetail("Aggregates over its gpubtree indexes check rows on pages that are not all-visible in the heap."),
						 errhint("REINDEX of one of them creates the trigger.")));
			return;
		}
		/* A trigger made while we waited shows now. */
		AcceptInvalidationMessages();
		if (find_capture_trigger(heap) != NULL)
			return;
	}
	stmt = makeNode(CreateTrigStmt);
	stmt->trigname = CAPTURE_TRIGGER;
	stmt->funcname = list_make1(makeString(CAPTURE_TRIGGER));
	stmt->row = true;
	stmt->timing = TRIGGER_TYPE_AFTER;
	stmt->events = TRIGGER_TYPE_UPDATE | TRIGGER_TYPE_DELETE;
	(void) CreateTriggerFiringOn(stmt, NULL, relid, InvalidOid,
								 InvalidOid, InvalidOid, funcoid, InvalidOid, NULL,
								 true, false, TRIGGER_FIRES_ALWAYS);
	/* This transaction's earlier deletes, if any, went unrecorded. */
	touch(relid, created_before_writing);
	CommandCounterIncrement();
}

/*
 * The capture trigger's function, in the extension's schema: looked up by
 * the schema's OID, so that a table owner without USAGE on that schema may
 * still create a gpubtree index (no name in the statement is in it).
 */
static Oid
capture_function(Oid schema)
{
	return GetSysCacheOid3(PROCNAMEARGSNSP, Anum_pg_proc_oid,
						   CStringGetDatum(CAPTURE_TRIGGER),
						   PointerGetDatum(buildoidvector(NULL, 0)),
						   ObjectIdGetDatum(schema));
}

/*
 * At ambuild: the table gets the trigger if it has none yet.  CREATE INDEX
 * has made it already (below); this covers the indexes PostgreSQL makes by
 * itself, on a partition created or attached under a partitioned index,
 * whose locks are strong enough already, and REINDEX of an index whose
 * table lost its trigger.  Never waits for the lock: the build's own lock
 * may be weaker (CREATE INDEX CONCURRENTLY, REINDEX), and waiting for a
 * stronger one could deadlock with another build on the table.
 */
void
gbt_capture_ensure(Relation heap, Relation index)
{
	Oid			funcoid;

	/* Our functions share a schema: the access method handler's. */
	if (heap->rd_rel->relkind != RELKIND_RELATION || find_capture_trigger(heap) != NULL ||
		!OidIsValid(funcoid = capture_function(get_func_namespace(index->rd_amhandler))))
		return;
	/* (the index's catalog rows are written already) */
	install_on(heap, funcoid, false, false, false);
}

/*
 * Before CREATE INDEX ... USING gpubtree on relid (the event trigger in
 * ddl_check.c): the trigger on the table, or on each partition of a
 * partitioned table.  Only for the table's owner, who alone may create the
 * index; others get PostgreSQL's error from CREATE INDEX itself, and no
 * lock from us.  The table is locked before it is looked at, so that of
 * two sessions creating gpubtree indexes on one table at once (pg_restore
 * -j) the second sees the first one's trigger.  The lock is the one CREATE
 * TRIGGER takes; CREATE INDEX's own lock is weaker, so it waits for nothing
 * more, except under CONCURRENTLY (install_on()).
 */
void
gbt_capture_install(Oid relid, Oid schema, bool concurrent)
{
	Oid			funcoid;
	List	   *rels;
	ListCell   *lc;
	char		relkind = get_rel_relkind(relid);
	LOCKMODE	lockmode = concurrent ? ShareUpdateExclusiveLock : ShareRowExclusiveLock;
	bool		created_before_writing;

	if ((relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE) ||
		!object_ownercheck(RelationRelationId, relid, GetUserId()))
		return;
	funcoid = capture_function(schema);
	if (!OidIsValid(funcoid))
		return;
	/* (the triggers made below are the first writes) */
	created_before_writing = !TransactionIdIsValid(GetTopTransactionIdIfAny());
	LockRelationOid(relid, lockmode);
	rels = find_all_inheritors(relid, lockmode, NULL);
	foreach(lc, rels)
	{
		Relation	heap = table_open(lfirst_oid(lc), NoLock);

		if (heap->rd_rel->relkind == RELKIND_RELATION)
			install_on(heap, funcoid, !concurrent, true, created_before_writing);
		table_close(heap, NoLock);
	}
	list_free(rels);
}

/* Is relid a gpubtree index? */
static bool
is_gpubtree_index_oid(Oid relid)
{
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	bool		result = false;

	if (HeapTupleIsValid(tuple))
	{
		Form_pg_class rel = (Form_pg_class) GETSTRUCT(tuple);

		result = rel->relkind == RELKIND_INDEX && gpubtree_is_gpubtree_am(rel->relam);
		ReleaseSysCache(tuple);
	}
	return result;
}

/* The tables of the gpubtree indexes this transaction dropped. */
static void
remember_dropped_index(Oid indexoid)
{
	Oid			heapoid = IndexGetRelation(indexoid, true);
	MemoryContext old;

	if (!OidIsValid(heapoid))
		return;
	forget_if_stale();
	old = MemoryContextSwitchTo(TopMemoryContext);
	dropped_from = list_append_unique_oid(dropped_from, heapoid);
	MemoryContextSwitchTo(old);
}

/*
 * Before the drop of a relation or a trigger (the object access hook).  A
 * capture trigger dropped by any path (DROP TRIGGER is refused, but DROP
 * FUNCTION ... CASCADE is not): every mirror of its table is made unusable
 * at commit, and this transaction stops trusting them now; a gpubtree
 * index: its table loses the trigger after the command if no gpubtree
 * index is left (gbt_capture_after_utility()).
 */
void
gbt_capture_before_drop(Oid classId, Oid objectId)
{
	if (classId == RelationRelationId)
	{
		if (is_gpubtree_index_oid(objectId))
			remember_dropped_index(objectId);
	}
	else if (classId == TriggerRelationId)
	{
		Oid			relid = InvalidOid;
		Relation	tgrel = table_open(TriggerRelationId, AccessShareLock);
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple	tuple;

		ScanKeyInit(&key, Anum_pg_trigger_oid, BTEqualStrategyNumber, F_OIDEQ,
					ObjectIdGetDatum(objectId));
		scan = systable_beginscan(tgrel, TriggerOidIndexId, true, NULL, 1, &key);
		tuple = systable_getnext(scan);
		if (HeapTupleIsValid(tuple))
		{
			Form_pg_trigger tg = (Form_pg_trigger) GETSTRUCT(tuple);

			if (is_capture_function(tg->tgisinternal, tg->tgfoid))
				relid = tg->tgrelid;
		}
		systable_endscan(scan);
		table_close(tgrel, AccessShareLock);
		if (OidIsValid(relid))
			invalidate_table(relid, false);
	}
}

/*
 * Every mirror of relid and of its partitions: unusable from the commit on,
 * and untrusted by this transaction now (touch()).
 *
 * With fire_always, after ENABLE TRIGGER (by name, ALL or USER), which
 * enables a trigger to fire on origin only where ours must fire ALWAYS
 * (gbt_capture_enabled()): a capture trigger left so is set back to
 * ALWAYS, so that the usual DISABLE ... ENABLE TRIGGER ALL around a bulk
 * load leaves the table's mirrors trusted again once exported afresh.
 * ENABLE REPLICA stays as asked.
 */
static void
invalidate_table(Oid relid, bool fire_always)
{
	List	   *rels = find_all_inheritors(relid, NoLock, NULL);
	ListCell   *lc;

	foreach(lc, rels)
	{
		Relation	heap = table_open(lfirst_oid(lc), NoLock);
		const Trigger *t = fire_always ? find_capture_trigger(heap) : NULL;

		if (t != NULL && t->tgenabled == TRIGGER_FIRES_ON_ORIGIN)
		{
			gbt_EnableDisableTrigger(heap, pstrdup(t->tgname), TRIGGER_FIRES_ALWAYS, false,
									 ShareRowExclusiveLock);
			CommandCounterIncrement();
		}
		touch(lfirst_oid(lc), false);
		if (gbt_shared != NULL)
		{
			List	   *oids = RelationGetIndexList(heap);
			ListCell   *ic;

			foreach(ic, oids)
				gbt_invalidate_at_commit(MyDatabaseId, lfirst_oid(ic));
			list_free(oids);
		}
		table_close(heap, NoLock);
	}
	list_free(rels);
}

/* Does the table still have a gpubtree index? */
static bool
has_gpubtree_index(Relation heap)
{
	List	   *oids = RelationGetIndexList(heap);
	ListCell   *lc;
	bool		found = false;

	foreach(lc, oids)
		if (is_gpubtree_index_oid(lfirst_oid(lc)))
			found = true;
	list_free(oids);
	return found;
}

/*
 * After a command that dropped gpubtree indexes: a table left without any
 * loses its capture trigger, which would fire for nothing.  It already holds
 * the lock that dropping a trigger needs (DROP INDEX takes
 * AccessExclusiveLock on the table); where it does not (DROP INDEX
 * CONCURRENTLY), the trigger stays until a later drop, doing nothing.
 */
static void
drop_unneeded_triggers(void)
{
	List	   *tables;
	ListCell   *lc;

	forget_if_stale();
	tables = dropped_from;
	dropped_from = NIL;
	foreach(lc, tables)
	{
		Oid			relid = lfirst_oid(lc);
		Relation	heap;
		const Trigger *t;

		if (!gbt_relation_oid_locked_by_me(relid, AccessExclusiveLock, true) &&
			!ConditionalLockRelationOid(relid, AccessExclusiveLock))
			continue;
		heap = try_table_open(relid, NoLock);
		if (heap == NULL)
			continue;
		t = find_capture_trigger(heap);
		if (t != NULL && !has_gpubtree_index(heap))
		{
			ObjectAddress trigger;

			ObjectAddressSet(trigger, TriggerRelationId, t->tgoid);
			table_close(heap, NoLock);
			performDeletion(&trigger, DROP_RESTRICT, PERFORM_DELETION_INTERNAL);
			CommandCounterIncrement();
		}
		else
			table_close(heap, NoLock);
	}
	list_free(tables);
}

/* The capture trigger of the table named by rv, if trigname is it. */
static bool
names_capture_trigger(RangeVar *rv, const char *trigname)
{
	Oid			relid = RangeVarGetRelid(rv, NoLock, true);
	Relation	heap;
	bool		found = false;
	int			i;

	if (!OidIsValid(relid) || (heap = try_table_open(relid, AccessShareLock)) == NULL)
		return false;
	if (heap->trigdesc != NULL)
		for (i = 0; i < heap->trigdesc->numtriggers; i++)
		{
			const Trigger *t = &heap->trigdesc->triggers[i];

			if (strcmp(t->tgname, trigname) == 0 && is_capture_trigger(t))
				found = true;
		}
	table_close(heap, AccessShareLock);
	return found;
}

/*
 * Before a utility command: DROP TRIGGER and ALTER TRIGGER ... RENAME of a
 * capture trigger are refused (dropping the table's gpubtree indexes drops
 * it); ENABLE and DISABLE are the superuser's, and are followed by
 * gbt_capture_after_utility().
 */
void
gbt_capture_before_utility(Node *stmt)
{
	if (IsA(stmt, DropStmt) && ((DropStmt *) stmt)->removeType == OBJECT_TRIGGER)
	{
		ListCell   *lc;

		foreach(lc, ((DropStmt *) stmt)->objects)
		{
			List	   *names = lfirst(lc);
			char	   *trigname = strVal(llast(names));
			RangeVar   *rv = makeRangeVarFromNameList(list_truncate(list_copy(names),
																	list_length(names) - 1));

			if (names_capture_trigger(rv, trigname))
				ereport(ERROR,
						(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
						 errmsg("cannot drop trigger %s on table %s because its gpubtree indexes require it",
								trigname, rv->relname),
						 errhint("Drop the table's gpubtree indexes instead: the trigger goes with the last one.")));
		}
	}
	else if (IsA(stmt, RenameStmt) && ((RenameStmt *) stmt)->renameType == OBJECT_TRIGGER)
	{
		RenameStmt *rs = (RenameStmt *) stmt;

		if (names_capture_trigger(rs->relation, rs->subname))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("cannot rename trigger %s on table %s: it is gpubtree's capture trigger",
							rs->subname, rs->relation->relname)));
	}
}

/*
 * After ALTER TABLE ... ENABLE or DISABLE TRIGGER: while the capture trigger
 * did not fire ALWAYS, deletes went unrecorded, and a mirror that trusted
 * its stamps would count their rows.  Queries stop trusting them while it
 * is not (gbt_capture_enabled()), and for the rest of this transaction; at
 * commit, every mirror of the table (and of its partitions) is made
 * unusable, so that the next is exported afresh.  Any trigger subcommand
 * does it: which triggers it touches is resolved later.  Then the tables
 * that lost their last gpubtree index lose their trigger.
 */
void
gbt_capture_after_utility(Node *stmt)
{
	AlterTableStmt *at;
	ListCell   *lc;
	bool		touches = false;
	Oid			relid;

	drop_unneeded_triggers();
	if (!IsA(stmt, AlterTableStmt))
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
	invalidate_table(relid, true);
}
