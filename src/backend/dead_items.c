/*
 * dead_items.c
 *	  VACUUM's list of dead TIDs, read from its bulk-delete callback's state.
 *
 * ambulkdelete gets VACUUM's dead TIDs only as a callback that says whether
 * one TID is dead.  nbtree asks it once per index entry; a sweep of the
 * mirror that asked it again once per mirror entry would double VACUUM's
 * index pass (a binary search of the dead TIDs each time).  Every index
 * pass of VACUUM, serial or by a parallel worker, goes through
 * vac_bulkdel_one_index(), which passes vac_tid_reaped() with the
 * VacDeadItems array as its state: up to PostgreSQL 16 that array, sorted
 * by TID, is the whole list, and can be sent to the service as it is.
 *
 * From 18 on the state is a TidStore, read here block by block into such a
 * list (17's TidStore hands out a block's offsets otherwise: no list there).
 *
 * vac_tid_reaped() is static, so its address is learnt once per process by
 * calling vac_bulkdel_one_index() on a stand-in index whose ambulkdelete
 * only records the callback it is given.  Any other callback (CREATE INDEX
 * CONCURRENTLY's validation, another caller) gets NULL: the caller then
 * asks the callback entry by entry.
 */
#include "postgres.h"

#include "access/amapi.h"
#if PG_VERSION_NUM >= 180000
#include "access/tidstore.h"
#endif
#include "catalog/pg_class.h"
#include "commands/vacuum.h"
#include "utils/builtins.h"
#include "utils/rel.h"

#include "dead_items.h"

#if PG_VERSION_NUM < 170000 || PG_VERSION_NUM >= 180000

static IndexBulkDeleteCallback vac_reaped_callback = NULL;
static bool vac_reaped_learnt = false;

static IndexBulkDeleteResult *
record_callback(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				IndexBulkDeleteCallback callback, void *callback_state)
{
	vac_reaped_callback = callback;
	return stats;
}

/*
 * The stand-in carries the real index's OID: index_bulk_delete() refuses an
 * index being reindexed, and InvalidOid is what "none" looks like there.
 */
static void
learn_vac_reaped(Relation index)
{
	IndexAmRoutine *am = palloc0(sizeof(IndexAmRoutine));
	Form_pg_class form = palloc0(sizeof(FormData_pg_class));
	RelationData *standin = palloc0(sizeof(RelationData));
	IndexVacuumInfo info = {0};

	am->type = T_IndexAmRoutine;
	am->ambulkdelete = record_callback;
	namestrcpy(&form->relname, "gpubtree probe");
	standin->rd_id = RelationGetRelid(index);
	standin->rd_rel = form;
	standin->rd_indam = am;
	info.index = standin;
	info.message_level = DEBUG5;
#if PG_VERSION_NUM >= 180000
	{
		VacDeadItemsInfo none = {0};

		(void) vac_bulkdel_one_index(&info, NULL, NULL, &none);
	}
#else
	{
		VacDeadItems *none = palloc0(offsetof(VacDeadItems, items));

		(void) vac_bulkdel_one_index(&info, NULL, none);
		pfree(none);
	}
#endif
	vac_reaped_learnt = true;
	pfree(standin);
	pfree(form);
	pfree(am);
}

#if PG_VERSION_NUM >= 180000
/* The TidStore's TIDs, in order (blocks ascending, offsets within each). */
static const ItemPointerData *
tidstore_list(TidStore *dead, int64 *ndead)
{
	OffsetNumber offsets[MaxOffsetNumber];
	TidStoreIter *iter;
	TidStoreIterResult *block;
	int64		cap = 1024;
	int64		n = 0;
	ItemPointerData *tids = palloc_extended(sizeof(ItemPointerData) * cap, MCXT_ALLOC_HUGE);

	TidStoreLockShare(dead);
	iter = TidStoreBeginIterate(dead);
	while ((block = TidStoreIterateNext(iter)) != NULL)
	{
		int			noffsets = TidStoreGetBlockOffsets(block, offsets, lengthof(offsets));
		int			i;

		if (n + noffsets > cap)
		{
			cap = Max(cap * 2, n + noffsets);
			tids = repalloc_huge(tids, sizeof(ItemPointerData) * cap);
		}
		for (i = 0; i < noffsets; i++)
			ItemPointerSet(&tids[n++], block->blkno, offsets[i]);
	}
	TidStoreEndIterate(iter);
	TidStoreUnlock(dead);
	*ndead = n;
	return tids;
}
#endif

const ItemPointerData *
gbt_vacuum_dead_items(Relation index, IndexBulkDeleteCallback callback,
					  void *callback_state, int64 *ndead, bool *palloced)
{
	*palloced = false;
	if (!vac_reaped_learnt)
		learn_vac_reaped(index);
	if (callback == NULL || callback != vac_reaped_callback || callback_state == NULL)
		return NULL;
#if PG_VERSION_NUM >= 180000
	*palloced = true;
	return tidstore_list((TidStore *) callback_state, ndead);
#else
	{
		VacDeadItems *dead = callback_state;

		if (dead->num_items < 0 || dead->num_items > dead->max_items)
			return NULL;
		/* The ends are dead by the callback itself: it is the list it reads. */
		if (dead->num_items > 0 &&
			(!callback(&dead->items[0], callback_state) ||
			 !callback(&dead->items[dead->num_items - 1], callback_state)))
			return NULL;
		*ndead = dead->num_items;
		return dead->items;
	}
#endif
}

#else

const ItemPointerData *
gbt_vacuum_dead_items(Relation index, IndexBulkDeleteCallback callback,
					  void *callback_state, int64 *ndead, bool *palloced)
{
	*palloced = false;
	return NULL;
}

#endif
