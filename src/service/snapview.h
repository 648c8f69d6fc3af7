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

/* An exported entry's inserter as its flag tells it (entries.h). */
static inline TransactionId
gbt_exported_xmin(const GbtEntries *e, int64 i)
{
	return (e->nulls[i] & GBT_ENTRY_XMIN_UNKNOWN) ? GBT_XMIN_UNKNOWN : GBT_XMIN_FROZEN;
}

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
	bool		no_extremes;	/* the request asks no min or max: its
								 * aggregates' may be left wrong */
	const uint8 *visible;		/* bit per heap block: all-visible */
	int64		nvisible;
	GbtXidCache cache;			/* xid newer than topxid -> ours? */
} GbtSnapView;

/*
 * What the service learned of transactions' ends (snapview.c): two bits per
 * transaction ID from base on, GBT_OUTCOME_*.
 */
#define GBT_OUTCOME_UNKNOWN 0
#define GBT_OUTCOME_COMMITTED 1
#define GBT_OUTCOME_ABORTED 2

typedef struct GbtXidOutcomes
{
	TransactionId base;
	int64		nxids;			/* IDs the table covers (a multiple of 4) */
	uint8	   *bits;
} GbtXidOutcomes;

extern GbtXidOutcomes gbt_outcomes;

static inline int
gbt_outcome_get(TransactionId xid)
{
	uint32		off = xid - gbt_outcomes.base;

	if (gbt_outcomes.bits == NULL ||
		!TransactionIdFollowsOrEquals(xid, gbt_outcomes.base) ||
		off >= gbt_outcomes.nxids)
		return GBT_OUTCOME_UNKNOWN;
	return (gbt_outcomes.bits[off >> 2] >> ((off & 3) * 2)) & 3;
}

extern void gbt_snapview_init(GbtSnapView *v, const SnapshotData *snap,
							  TransactionId topxid, bool stamps,
							  const uint8 *visible, int64 nvisible);
extern GbtVerdict gbt_snapview_decide_stamps(GbtSnapView *v, TransactionId xmin,
											 TransactionId xmax, BlockNumber block);

#define GBT_UNDECIDED (-1)

/*
 * Whether the snapshot sees what transaction xid did, in the cases that need
 * neither the snapshot's list of running transactions nor the querying
 * transaction's own: xid began after the snapshot, or ended before it and
 * the service knows how.  Else GBT_UNDECIDED.
 */
static inline int
gbt_snapview_xid_quick(const GbtSnapView *v, TransactionId xid)
{
	if (TransactionIdIsValid(v->topxid) && !TransactionIdPrecedes(xid, v->topxid))
		return GBT_UNDECIDED;
	if (TransactionIdFollowsOrEquals(xid, v->snap.xmax))
		return GBT_SKIP;
	if (TransactionIdPrecedes(xid, v->snap.xmin))
	{
		int			outcome = gbt_outcome_get(xid);

		if (outcome == GBT_OUTCOME_COMMITTED)
			return GBT_TAKE;
		if (outcome == GBT_OUTCOME_ABORTED)
			return GBT_SKIP;
	}
	return GBT_UNDECIDED;
}

/*
 * The verdict on an entry with trusted stamps in those cases, without its
 * heap block; else GBT_UNDECIDED: gbt_snapview_decide_stamps() decides.
 * Entries are walked by the million per query: this spares most of them a
 * function call and a load.
 */
static inline int
gbt_snapview_quick(const GbtSnapView *v, TransactionId xmin, TransactionId xmax)
{
	int			d;

	if (xmin == GBT_XMIN_DEAD)
		return GBT_SKIP;
	if (!v->stamps || xmin == GBT_XMIN_UNKNOWN)
		return GBT_UNDECIDED;
	if (TransactionIdIsNormal(xmax))
	{
		d = gbt_snapview_xid_quick(v, xmax);
		if (d != GBT_SKIP)
			return d == GBT_TAKE ? GBT_SKIP : GBT_UNDECIDED;
	}
	if (!TransactionIdIsNormal(xmin))
		return GBT_TAKE;		/* frozen */
	return gbt_snapview_xid_quick(v, xmin);
}

/* Whether the snapshot sees the row of an entry with these stamps. */
static inline GbtVerdict
gbt_snapview_decide(GbtSnapView *v, TransactionId xmin, TransactionId xmax,
					BlockNumber block)
{
	int			d = gbt_snapview_quick(v, xmin, xmax);

	if (d != GBT_UNDECIDED)
		return (GbtVerdict) d;
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
