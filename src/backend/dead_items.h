/*
 * dead_items.h
 *	  VACUUM's list of dead TIDs, read from its bulk-delete callback's state.
 */
#ifndef GPUBTREE_DEAD_ITEMS_H
#define GPUBTREE_DEAD_ITEMS_H

#include "postgres.h"

#include "access/genam.h"
#include "utils/relcache.h"

/*
 * The TIDs the callback says are dead, sorted, *ndead of them (a copy the
 * caller frees when *palloced); NULL when the callback is not VACUUM's own
 * or they cannot be read from its state.
 */
extern const ItemPointerData *gbt_vacuum_dead_items(Relation index,
													IndexBulkDeleteCallback callback,
													void *callback_state, int64 *ndead,
													bool *palloced);

#endif							/* GPUBTREE_DEAD_ITEMS_H */
