/*
 * resync.h
 *	  Commit-time resync: this transaction's inserts and deletes reach the service's
 *	  change log before its commit is visible (resync.c).
 */
#ifndef GPUBTREE_RESYNC_H
#define GPUBTREE_RESYNC_H

#include "postgres.h"

#include "storage/itemptr.h"
#include "utils/relcache.h"

#include "protocol.h"

extern void gbt_resync_init(void);
extern void gbt_resync_insert(Relation index, const Datum *values,
							  const bool *isnull, ItemPointer tid);
extern void gbt_resync_delete(const GbtMirrorKey *key, Oid heaprelid, uint64 ikey,
							  ItemPointer root);
extern void gbt_resync_flush(void);
extern void gbt_resync_note_speculative(void);

#endif							/* GPUBTREE_RESYNC_H */
