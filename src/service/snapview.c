/*
 * snapview.c
 *	  Visibility stamps decided against a snapshot, and settled against the
 *	  oldest one (snapview.h).
 *
 * The service decides as HeapTupleSatisfiesMVCC does, from the stamps alone:
 * a transaction in the snapshot (running when it was taken, or later) is
 * not seen; one that committed before it is; any other aborted or crashed.
 * The querying transaction's own changes depend on command IDs the stamps
 * do not carry: such entries are unsure, and the backend checks them in the
 * heap.
 */
#include "postgres.h"

#include "access/subtrans.h"
#include "access/transam.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "snapview.h"

static void
cache_init(GbtXidCache *c)
{
	c->mask = 1023;
	c->used = 0;
	c->keys = palloc0(sizeof(TransactionId) * (c->mask + 1));
	c->values = palloc(c->mask + 1);
}

static void
cache_free(GbtXidCache *c)
{
	pfree(c->keys);
	pfree(c->values);
}

static inline uint32
xid_hash(TransactionId xid)
{
	return xid * 0x9E3779B1u;
}

/* The slot of xid: found (returns true) or where it goes. */
static bool
cache_slot(const GbtXidCache *c, TransactionId xid, int *slot)
{
	int			i = xid_hash(xid) & c->mask;

	while (c->keys[i] != InvalidTransactionId && c->keys[i] != xid)
		i = (i + 1) & c->mask;
	*slot = i;
	return c->keys[i] == xid;
}

static void
cache_put(GbtXidCache *c, TransactionId xid, uint8 value)
{
	int			slot;

	if (2 * (c->used + 1) > c->mask + 1)
	{
		GbtXidCache old = *c;
		int			i;

		c->mask = old.mask * 2 + 1;
		c->used = 0;
		c->keys = palloc0(sizeof(TransactionId) * (c->mask + 1));
		c->values = palloc(c->mask + 1);
		for (i = 0; i <= old.mask; i++)
			if (old.keys[i] != InvalidTransactionId)
				cache_put(c, old.keys[i], old.values[i]);
		cache_free(&old);
	}
	if (!cache_slot(c, xid, &slot))
	{
		c->keys[slot] = xid;
		c->used++;
	}
	c->values[slot] = value;
}

/*
 * What the service learned of transactions' ends, kept across queries and
 * settling passes: whether each one committed or aborted, once known, two
 * bits per transaction ID from gbt_outcomes.base on.  Both answers are final,
 * so a query asks the commit log once per transaction, not once per query,
 * and the answers are read from a table small enough for the CPU's caches
 * instead of a shared buffer under a lock; committing backends say so in
 * the change log (gbt_xid_committed()).  Transactions older than the
 * settling horizon are forgotten (their stamps are settled); IDs beyond
 * the table's reach are asked of the commit log each time.
 */
#define OUTCOME_MAX_XIDS ((int64) 1 << 28)	/* 64 MB */

GbtXidOutcomes gbt_outcomes;

static void
outcome_set(TransactionId xid, int outcome)
{
	uint32		off;

	if (gbt_outcomes.bits == NULL)
	{
		gbt_outcomes.base = xid & ~(TransactionId) 3;
		if (!TransactionIdIsNormal(gbt_outcomes.base))
			gbt_outcomes.base = FirstNormalTransactionId + 1;	/* 4 */
		gbt_outcomes.nxids = 65536;
		gbt_outcomes.bits = MemoryContextAllocZero(TopMemoryContext, gbt_outcomes.nxids / 4);
	}
	if (!TransactionIdFollowsOrEquals(xid, gbt_outcomes.base))
		return;
	off = xid - gbt_outcomes.base;
	if (off >= gbt_outcomes.nxids)
	{
		int64		n = gbt_outcomes.nxids;

		while (n <= off && n < OUTCOME_MAX_XIDS)
			n *= 2;
		if (n <= off)
			return;
		gbt_outcomes.bits = repalloc_huge(gbt_outcomes.bits, n / 4);
		memset(gbt_outcomes.bits + gbt_outcomes.nxids / 4, 0, (n - gbt_outcomes.nxids) / 4);
		gbt_outcomes.nxids = n;
	}
	gbt_outcomes.bits[off >> 2] |= outcome << ((off & 3) * 2);
}

/* The change log says so: transaction xid committed. */
void
gbt_xid_committed(TransactionId xid)
{
	if (TransactionIdIsNormal(xid))
		outcome_set(xid, GBT_OUTCOME_COMMITTED);
}

/*
 * Forget transactions older than horizon: no snapshot that can still run
 * decides them otherwise than the settled stamps say.
 */
void
gbt_xid_outcomes_forget(TransactionId horizon)
{
	uint32		drop;

	if (gbt_outcomes.bits == NULL || !TransactionIdFollows(horizon, gbt_outcomes.base))
		return;
	drop = (horizon - gbt_outcomes.base) & ~(uint32) 3;
	/* Move the table only once a good part of it is behind the horizon. */
	if (drop < gbt_outcomes.nxids / 2)
		return;
	gbt_outcomes.base += drop;
	if (drop >= gbt_outcomes.nxids || !TransactionIdIsNormal(gbt_outcomes.base))
	{
		/* All behind, or the base wrapped onto the special IDs: start anew. */
		memset(gbt_outcomes.bits, 0, gbt_outcomes.nxids / 4);
		if (!TransactionIdIsNormal(gbt_outcomes.base))
			gbt_outcomes.base = FirstNormalTransactionId + 1;	/* 4 */
	}
	else
	{
		memmove(gbt_outcomes.bits, gbt_outcomes.bits + drop / 4, (gbt_outcomes.nxids - drop) / 4);
		memset(gbt_outcomes.bits + (gbt_outcomes.nxids - drop) / 4, 0, drop / 4);
	}
}

/*
 * Whether transaction xid, which has ended (no snapshot that could see it
 * running asks), committed.
 */
static bool
xid_ended_committed(TransactionId xid)
{
	int			outcome = gbt_outcome_get(xid);

	if (outcome == GBT_OUTCOME_UNKNOWN)
	{
		outcome = TransactionIdDidCommit(xid) ? GBT_OUTCOME_COMMITTED : GBT_OUTCOME_ABORTED;
		outcome_set(xid, outcome);
	}
	return outcome == GBT_OUTCOME_COMMITTED;
}

void
gbt_snapview_init(GbtSnapView *v, const SnapshotData *snap, TransactionId topxid,
				  bool stamps, const uint8 *visible, int64 nvisible)
{
	v->snap = *snap;
	v->topxid = topxid;
	v->stamps = stamps;
	v->no_extremes = false;
	v->visible = visible;
	v->nvisible = nvisible;
	cache_init(&v->cache);
}

void
gbt_snapview_free(GbtSnapView *v)
{
	cache_free(&v->cache);
}

/*
 * Whether the querying transaction or one of its subtransactions is xid:
 * found through pg_subtrans once per ID and query.
 */
static bool
xid_is_ours(GbtSnapView *v, TransactionId xid)
{
	int			slot;
	bool		ours;

	if (!TransactionIdIsValid(v->topxid) || TransactionIdPrecedes(xid, v->topxid))
		return false;
	if (xid == v->topxid)
		return true;
	if (cache_slot(&v->cache, xid, &slot))
		return v->cache.values[slot] != 0;
	ours = SubTransGetTopmostTransaction(xid) == v->topxid;
	cache_put(&v->cache, xid, (uint8) ours);
	return ours;
}

/* Whether the snapshot sees what transaction xid did. */
static inline GbtVerdict
xid_verdict(GbtSnapView *v, TransactionId xid)
{
	if (xid_is_ours(v, xid))
		return GBT_UNSURE;		/* command IDs decide */
	if (XidInMVCCSnapshot(xid, &v->snap))
		return GBT_SKIP;
	return xid_ended_committed(xid) ? GBT_TAKE : GBT_SKIP;	/* or crashed */
}

static inline bool
block_visible(const GbtSnapView *v, BlockNumber block)
{
	return (int64) block < v->nvisible &&
		(v->visible[block >> 3] & (1 << (block & 7))) != 0;
}

GbtVerdict
gbt_snapview_decide_stamps(GbtSnapView *v, TransactionId xmin, TransactionId xmax,
						   BlockNumber block)
{
	bool		unsure = false;
	GbtVerdict	d;

	if (xmin == GBT_XMIN_DEAD)
		return GBT_SKIP;
	if (TransactionIdIsNormal(xmax))
	{
		d = xid_verdict(v, xmax);
		if (d == GBT_TAKE)
			return GBT_SKIP;	/* its deletion is seen */
		unsure |= d == GBT_UNSURE;
	}
	if (TransactionIdIsNormal(xmin))
	{
		d = xid_verdict(v, xmin);
		if (d == GBT_SKIP)
			return GBT_SKIP;
		unsure |= d == GBT_UNSURE;
	}

	/*
	 * Without trusted stamps a delete may have gone unrecorded: as in an
	 * index-only scan, only an all-visible block vouches for the row.
	 */
	if ((!v->stamps || xmin == GBT_XMIN_UNKNOWN) && !block_visible(v, block))
		unsure = true;
	return unsure ? GBT_UNSURE : GBT_TAKE;
}

/*
 * A transaction older than the horizon has ended before every snapshot that
 * can still run was taken: committed (every snapshot sees it) or not (none
 * does).  A younger one is settled only once known aborted.
 */
GbtXidOutcome
gbt_xid_fate(TransactionId xid, TransactionId horizon)
{
	int			outcome;

	if (!TransactionIdIsNormal(xid))
		return GBT_XID_NONE;
	outcome = gbt_outcome_get(xid);
	if (outcome == GBT_OUTCOME_UNKNOWN)
	{
		if (TransactionIdDidCommit(xid))
			outcome = GBT_OUTCOME_COMMITTED;
		else if (TransactionIdPrecedes(xid, horizon) || TransactionIdDidAbort(xid))
			outcome = GBT_OUTCOME_ABORTED;	/* or crashed, before the horizon */
		if (outcome != GBT_OUTCOME_UNKNOWN)
			outcome_set(xid, outcome);
	}
	if (outcome == GBT_OUTCOME_ABORTED)
		return GBT_XID_ABORTED;
	if (outcome == GBT_OUTCOME_COMMITTED && TransactionIdPrecedes(xid, horizon))
		return GBT_XID_COMMITTED;
	return GBT_XID_OPEN;
}
