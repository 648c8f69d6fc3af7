/*
 * client.h
 *	  The backend's side of the service protocol (protocol.h): one function
 *	  per request kind, and the change-log writes of commit-time resync.
 */
#ifndef GPUBTREE_CLIENT_H
#define GPUBTREE_CLIENT_H

#include "postgres.h"

#include "utils/snapshot.h"

#include "storage/dsm.h"
#include "utils/relcache.h"

#include "entries.h"
#include "protocol.h"
#include "shmem.h"

/*
 * One request and its segment.  Each gbt_call_*() returns true when the
 * service answered (call->req->hdr.status says how), false when no segment
 * could be made (call->req is NULL) or the service did not answer in time
 * (it is not running, or busy with our abandoned request).  Either way the
 * caller reads what it needs of the reply, then calls gbt_call_end().
 */
typedef struct GbtCall
{
	dsm_segment *seg;
	GbtRequest *req;
	bool		answered;		/* the service answered: done with seg */
	bool		submitted;		/* handed over, its answer not yet waited for */
	struct GbtPrefault *prefault;	/* populating seg's pages (prefault.c) */
} GbtCall;

extern const char *gbt_service_no_answer;
extern void gbt_fill_key(GbtMirrorKey *key, Relation index);

extern bool gbt_call_build_begin(GbtCall *call, Relation index, uint64 generation,
								 const GbtColumns *cols, int64 room,
								 GbtEntries *entries);
extern bool gbt_call_build(GbtCall *call, Relation index, uint64 generation,
						   uint64 log_start, uint64 ticket, int service_pid, bool captured,
						   const GbtColumns *cols, GbtEntries *entries,
						   const GbtEntryStamps *stamps, GbtBuildPhases *phases);
extern bool gbt_call_scan(GbtCall *call, Relation index, const uint64 *lo,
						  const uint64 *hi, int64 nranges, Size result_room);
extern bool gbt_call_dump(GbtCall *call, Relation index, uint64 generation,
						  const GbtDumpCursor *after, int64 nitems, int ncols,
						  bool verdicts);
extern bool gbt_call_remove(GbtCall *call, Relation index, uint64 mirror_id, bool all_dead,
							const ItemPointerData *tids, int64 ntids);
extern bool gbt_call_remove_submit(GbtCall *call, Relation index,
								   const ItemPointerData *tids, int64 ntids);
extern bool gbt_call_collect(GbtCall *call);
extern void gbt_call_abandon(GbtCall *call);
extern bool gbt_call_agg_prepare(GbtCall *call, Relation index);
extern bool gbt_call_agg(GbtCall *call, Relation index, uint64 mirror_id,
						 uint64 log_bound, const uint64 *lo, const uint64 *hi,
						 int64 nranges, bool sorted, const uint8 *visible, int64 nvisible,
						 Snapshot snapshot, bool stamps, int ncols, int64 unsure_cap,
						 bool rows, bool map, bool grouped, bool no_extremes,
						 const gbt_pred_set *preds, int group_col, int64 group_cap);
extern bool gbt_call_vouch(GbtCall *call, Relation index, const uint8 *visible,
						   int64 nvisible);
extern void gbt_call_end(GbtCall *call);
extern bool gbt_service_wait_spent(void);
extern int64 gbt_service_wait_mark(void);
extern void gbt_service_wait_refund(int64 mark);

/*
 * gbt_log_write's answer.  GBT_LOG_RECHECK: the epoch check said a VACUUM
 * swept an index since the writer last looked at its entries' tuples;
 * nothing was written.
 */
typedef enum GbtLogWrite
{
	GBT_LOG_WRITTEN,
	GBT_LOG_FULL,
	GBT_LOG_RECHECK
} GbtLogWrite;
typedef bool (*GbtEpochCheck) (const GbtMirrorKey *key);
extern GbtLogWrite gbt_log_write(const GbtLogEntry *entries, int n,
								 GbtEpochCheck epoch_ok);
extern void gbt_log_committed(const TransactionId *xids, int n);
extern bool gbt_wait_for_log_room(bool committing);
extern bool gbt_register_build(const GbtMirrorKey *key, uint64 *start,
							   uint64 *ticket, int *service_pid);
extern void gbt_unregister_build(void);

#endif							/* GPUBTREE_CLIENT_H */
