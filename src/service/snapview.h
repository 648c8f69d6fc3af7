/*
 * snapview.h
 *	  An entry's visibility stamps, decided against a query's snapshot in the
 *	  service (snapview.c).
 *
 * Each mirror entry carries an xmin, the (sub)transaction that inserted its
 * row, and an xmax, the one that deleted it (or updated it other than by
 * HOT), both as the heap tuple has them, from the change log.  Three xmin
 * values are not transactions: GBT_XMIN_DEAD, an entry no snapshot sees
 * (settled, until VACUUM or a merge takes it out), GBT_XMIN_FROZEN,
 * inserted before every snapshot that can still run, and
 * GBT_XMIN_UNKNOWN, an entry whose
 * inserter the export could not tell (its block was not all-visible): the
 * visibility map decides for it, as in an index-only scan.  No xmax:
 * InvalidTransactionId.  32-bit IDs suffice: the service settles every
 * stamp older than the oldest snapshot's xmin (gbt_mirror_settle()), so
 * none it keeps is more than 2^31 transactions old.
 */
#ifndef GPUBTREE_SNAPVIEW_H
#define GPUBTREE_SNAPVIEW_H

#include "postgres.h"

#include "access/transam.h"
#include "utils/snapshot.h"

#include "protocol.h"

#define GBT_XMIN_DEAD InvalidTransactionId	/* settled: no snapshot sees it */
#define GBT_XMIN_UNKNOWN BootstrapTransactionId
#define GBT_XMIN_FROZEN FrozenTransactionId

/* Answers per transaction ID, computed once per query. */
typedef struct GbtXidCache
{
	TransactionId *keys;		/* open addressing; 0: empty */
	uint8	   *values;
	int			mask;
	int			used;
} GbtXidCache;

/* A query's snapshot as the service sees it. */
typedef struct GbtSnapView
{
	SnapshotData snap;
	TransactionId topxid;		/* the querying transaction's, if it has one */
	bool		stamps;			/* false: every entry by the visibility map */
	const uint8 *visible;		/* bit per heap block: all-visible */
	int64		nvisible;
	GbtXidCache cache;			/* xid newer than topxid -> ours? */
} GbtSnapView;

extern void gbt_snapview_init(GbtSnapView *v, const SnapshotData *snap,
							  TransactionId topxid, bool stamps,
							  const uint8 *visible, int64 nvisible);
extern GbtVerdict gbt_snapview_decide_stamps(GbtSnapView *v, TransactionId xmin,
											 TransactionId xmax, BlockNumber block);

/* Whether the snapshot sees the row of an entry with these stamps. */
static inline GbtVerdict
gbt_snapview_decide(GbtSnapView *v, TransactionId xmin, TransactionId xmax,
					BlockNumber block)
{
	/* Most delta entries, once settled. */
	if (xmin == GBT_XMIN_FROZEN && xmax == InvalidTransactionId && v->stamps)
		return GBT_TAKE;
	return gbt_snapview_decide_stamps(v, xmin, xmax, block);
}
extern void gbt_snapview_free(GbtSnapView *v);

/* What became of a transaction, for settling stamps against a horizon. */
typedef enum GbtXidOutcome
{
	GBT_XID_NONE,				/* no transaction: frozen, unknown or no xmax */
	GBT_XID_OPEN,				/* some snapshot may still not see it */
	GBT_XID_COMMITTED,			/* committed before every snapshot */
	GBT_XID_ABORTED				/* aborted (or crashed) */
} GbtXidOutcome;

extern GbtXidOutcome gbt_xid_fate(TransactionId xid, TransactionId horizon);
extern void gbt_xid_committed(TransactionId xid);
extern void gbt_xid_outcomes_forget(TransactionId horizon);

#endif							/* GPUBTREE_SNAPVIEW_H */
