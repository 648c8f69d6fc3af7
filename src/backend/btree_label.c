/*
 * btree_label.c
 *	  Let code that insists on relam = BTREE_AM_OID work on a gpubtree index.
 *
 * A gpubtree index is an nbtree, but some PostgreSQL 15 code accepts only
 * relcache entries whose rd_rel->relam is BTREE_AM_OID.  Two of them matter
 * to users and are handled here by labelling the relcache entry as btree, in
 * this backend only, for as long as the caller needs it:
 *
 * - INSERT ... ON CONFLICT: the executor prepares speculative insertion only
 *   for btree unique indexes (BuildSpeculativeIndexInfo), although all it
 *   needs is the btree equality strategy of the operator families, which
 *   gpubtree's have.  For each such statement the unique gpubtree indexes of
 *   its target tables (partitions included) are labelled from ExecutorStart
 *   to ExecutorEnd.  The same hook tells resync.c that the transaction may
 *   super-delete speculative tuples (gbt_resync_note_speculative()).
 * - amcheck: gpubtree_index_check() labels the index while amcheck's
 *   bt_index_check() or bt_index_parent_check() verifies it.
 *
 * A labelled index is held open.  The label is put back after relcache
 * reloads (relcache callback) and removed by the owner, or when the
 * (sub)transaction aborts.  The catalog is never changed.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_am.h"
#include "catalog/pg_inherits.h"
#include "executor/executor.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "storage/lmgr.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "backend.h"
#include "resync.h"

typedef struct LabelledIndex
{
	Relation	index;			/* held open while labelled */
	Oid			gpubtree_am;	/* the real relam, to put back */
	const void *owner;			/* who labelled it (a QueryDesc, say) */
	SubTransactionId subxid;	/* subtransaction that opened it */
} LabelledIndex;

static List *labelled = NIL;	/* of LabelledIndex *, in TopMemoryContext */

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;

/*
 * Label an open gpubtree index as btree until unlabelled by owner; takes over
 * the caller's reference to the relation.
 */
void
gpubtree_label_as_btree(Relation index, const void *owner)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(TopMemoryContext);
	LabelledIndex *li;

	Assert(gpubtree_is_gpubtree_index(index));

	li = palloc(sizeof(LabelledIndex));
	li->index = index;
	li->gpubtree_am = index->rd_rel->relam;
	li->owner = owner;
	li->subxid = GetCurrentSubTransactionId();
	labelled = lappend(labelled, li);
	MemoryContextSwitchTo(oldcxt);

	index->rd_rel->relam = BTREE_AM_OID;
}

static void
label_unique_gpubtree_indexes(Oid relid, QueryDesc *owner)
{
	List	   *rels;
	ListCell   *lc;

	/* The executor takes the same lock on partitions it routes into. */
	rels = find_all_inheritors(relid, RowExclusiveLock, NULL);
	foreach(lc, rels)
	{
		Relation	heap = table_open(lfirst_oid(lc), NoLock);
		List	   *indexes = RelationGetIndexList(heap);
		ListCell   *ilc;

		foreach(ilc, indexes)
		{
			Relation	index = index_open(lfirst_oid(ilc), RowExclusiveLock);

			if (index->rd_index->indisunique &&
				gpubtree_is_gpubtree_index(index) &&
				index->rd_rel->relam != BTREE_AM_OID)
				gpubtree_label_as_btree(index, owner);
			else
				index_close(index, NoLock);
		}
		list_free(indexes);
		table_close(heap, NoLock);
	}
	list_free(rels);
}

/* Drop labels matching owner (or subxid when owner is NULL). */
static void
unlabel(const void *owner, SubTransactionId subxid, bool close)
{
	ListCell   *lc;

	foreach(lc, labelled)
	{
		LabelledIndex *li = lfirst(lc);

		if (owner != NULL ? li->owner != owner : li->subxid != subxid)
			continue;
		li->index->rd_rel->relam = li->gpubtree_am;
		if (close)
			index_close(li->index, NoLock);
		labelled = foreach_delete_current(labelled, lc);
		pfree(li);
	}
}

static void
label_for_plan(Plan *plan, PlannedStmt *stmt, QueryDesc *queryDesc)
{
	ModifyTable *mt = (ModifyTable *) plan;

	if (mt != NULL && IsA(mt, ModifyTable) &&
		mt->onConflictAction != ONCONFLICT_NONE)
	{
		Index		rti = linitial_int(mt->resultRelations);

		/* Its super-deleted tuples' entries must not reach the mirrors. */
		gbt_resync_note_speculative();
		label_unique_gpubtree_indexes(rt_fetch(rti, stmt->rtable)->relid,
									  queryDesc);
	}
}

static void
gpubtree_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	PlannedStmt *stmt = queryDesc->plannedstmt;

	/* ON CONFLICT sits at the top, or in a data-modifying CTE's subplan. */
	if (!(eflags & EXEC_FLAG_EXPLAIN_ONLY) &&
		(stmt->commandType == CMD_INSERT || stmt->hasModifyingCTE))
	{
		ListCell   *lc;

		label_for_plan(stmt->planTree, stmt, queryDesc);
		foreach(lc, stmt->subplans)
			label_for_plan(lfirst(lc), stmt, queryDesc);
	}

	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

static void
gpubtree_ExecutorEnd(QueryDesc *queryDesc)
{
	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);

	gpubtree_unlabel(queryDesc);
}

/* Remove owner's labels and close the indexes. */
void
gpubtree_unlabel(const void *owner)
{
	if (labelled != NIL)
		unlabel(owner, InvalidSubTransactionId, true);
}

/* A relcache reload re-reads pg_class into rd_rel: label it again. */
static void
relcache_callback(Datum arg, Oid relid)
{
	ListCell   *lc;

	foreach(lc, labelled)
	{
		LabelledIndex *li = lfirst(lc);

		if (relid == InvalidOid || relid == RelationGetRelid(li->index))
			li->index->rd_rel->relam = BTREE_AM_OID;
	}
}

/*
 * On abort the resource owner drops our references; the entries are still
 * valid when these callbacks run, so only the label needs removing.
 */
static void
xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
	{
		while (labelled != NIL)
			unlabel(((LabelledIndex *) linitial(labelled))->owner,
					InvalidSubTransactionId, false);
	}
}

static void
subxact_callback(SubXactEvent event, SubTransactionId mySubid,
				 SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && labelled != NIL)
		unlabel(NULL, mySubid, false);
}

void
gpubtree_btree_label_init(void)
{
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = gpubtree_ExecutorStart;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = gpubtree_ExecutorEnd;
	CacheRegisterRelcacheCallback(relcache_callback, (Datum) 0);
	RegisterXactCallback(xact_callback, NULL);
	RegisterSubXactCallback(subxact_callback, NULL);
}
