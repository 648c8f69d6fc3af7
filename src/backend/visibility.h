/*
 * visibility.h
 *	  The visibility map of a whole table, read at once (visibility.c).
 */
#ifndef GPUBTREE_VISIBILITY_H
#define GPUBTREE_VISIBILITY_H

#include "postgres.h"

#include "storage/block.h"
#include "utils/relcache.h"

/* One bit per heap block below nblocks: set when all-visible; palloc'd. */
extern uint8 *gbt_read_visibility(Relation heap, BlockNumber nblocks, int64 *nvisible);

#endif							/* GPUBTREE_VISIBILITY_H */
