/*
 * vacuum.h
 *	  Reading a mirror back from the service, and VACUUM's sweep of it.
 */
#ifndef GPUBTREE_VACUUM_H
#define GPUBTREE_VACUUM_H

#include "postgres.h"

#include "access/genam.h"
#include "utils/relcache.h"

#include "entries.h"
#include "protocol.h"

/* verdicts: one GbtVerdict per entry, or NULL when not asked for. */
typedef void (*GbtDumpFn) (const GbtEntries *e, const GbtColumns *cols,
						   const uint8 *verdicts, void *arg);
extern bool gbt_dump_mirror(Relation index, bool tids_only, bool verdicts, GbtDumpFn fn,
							void *arg, uint64 *mirror_id, GbtReplyStatus *status);
extern void gbt_vouch_mirror(Relation index, int elevel);
extern void gbt_sweep_mirror(Relation index, IndexBulkDeleteCallback callback,
							 void *callback_state, int elevel);

#endif							/* GPUBTREE_VACUUM_H */
