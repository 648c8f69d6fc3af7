/*
 * vacuum.h
 *	  Reading a mirror back from the service, and VACUUM's sweep of it.
 */
#ifndef GPUBTREE_VACUUM_H
#define GPUBTREE_VACUUM_H

#include "postgres.h"

#include "access/genam.h"
#include "portability/instr_time.h"
#include "utils/relcache.h"

#include "client.h"

#include "entries.h"
#include "protocol.h"

/* verdicts: one GbtVerdict per entry, or NULL when not asked for. */
typedef void (*GbtDumpFn) (const GbtEntries *e, const GbtColumns *cols,
						   const uint8 *verdicts, void *arg);
extern bool gbt_dump_mirror(Relation index, bool tids_only, bool verdicts, GbtDumpFn fn,
							void *arg, uint64 *mirror_id, GbtReplyStatus *status);
extern void gbt_vouch_mirror(Relation index, int elevel);
/* VACUUM's sweep of a mirror around nbtree's bulk delete (vacuum.c). */
typedef struct GbtSweep
{
	GbtCall		call;			/* the dead list's REMOVE, while submitted */
	bool		listed;			/* VACUUM's dead list was read */
	bool		submitted;		/* ... and handed to the service */
	int64		ndead;			/* its TIDs */
	instr_time	start;			/* when nbtree's pass ended */
} GbtSweep;

extern void gbt_sweep_begin(GbtSweep *sweep, Relation index,
							IndexBulkDeleteCallback callback, void *callback_state);
extern void gbt_sweep_abandon(GbtSweep *sweep);
extern void gbt_sweep_end(GbtSweep *sweep, Relation index,
						  IndexBulkDeleteCallback callback, void *callback_state,
						  int elevel);

#endif							/* GPUBTREE_VACUUM_H */
