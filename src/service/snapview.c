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

void
gbt_snapview_init(GbtSnapView *v, const SnapshotData *snap, TransactionId topxid,
				  bool stamps, const uint8 *visible, int64 nvisible)
{
	v->snap = *snap;
	v->topxid = topxid;
	v->stamps = stamps;
	v->visible = visible;
	v->nvisible = nvisible;
	cache_init(&v->cache);
}

void
gbt_snapview_free(GbtSnapView *v)
{
	cache_free(&v->cache);
}

/* Whether the snapshot sees what transaction xid did. */
static GbtVerdict
xid_verdict(GbtSnapView *v, TransactionId xid)
{
	int			slot;
	GbtVerdict	verdict;

	if (cache_slot(&v->cache, xid, &slot))
		return (GbtVerdict) v->cache.values[slot];
	if (TransactionIdIsValid(v->topxid) &&
		(xid == v->topxid ||
		 (TransactionIdFollows(xid, v->topxid) &&
		  SubTransGetTopmostTransaction(xid) == v->topxid)))
		verdict = GBT_UNSURE;	/* ours: command IDs decide */
	else if (XidInMVCCSnapshot(xid, &v->snap))
		verdict = GBT_SKIP;
	else if (TransactionIdDidCommit(xid))
		verdict = GBT_TAKE;
	else
		verdict = GBT_SKIP;		/* aborted, or crashed */
	cache_put(&v->cache, xid, (uint8) verdict);
	return verdict;
}

static inline bool
block_visible(const GbtSnapView *v, BlockNumber block)
{
	return (int64) block < v->nvisible &&
		(v->visible[block >> 3] & (1 << (block & 7))) != 0;
}

GbtVerdict
gbt_snapview_decide(GbtSnapView *v, TransactionId xmin, TransactionId xmax,
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

void
gbt_xid_fate_init(GbtXidFate *f, TransactionId horizon)
{
	f->horizon = horizon;
	cache_init(&f->cache);
}

void
gbt_xid_fate_free(GbtXidFate *f)
{
	cache_free(&f->cache);
}

/*
 * A transaction older than the horizon has ended before every snapshot that
 * can still run was taken: committed (every snapshot sees it) or not (none
 * does).  A younger one is settled only once known aborted.
 */
GbtXidOutcome
gbt_xid_fate(GbtXidFate *f, TransactionId xid)
{
	int			slot;
	GbtXidOutcome outcome;

	if (!TransactionIdIsNormal(xid))
		return GBT_XID_NONE;
	if (cache_slot(&f->cache, xid, &slot))
		return (GbtXidOutcome) f->cache.values[slot];
	if (TransactionIdPrecedes(xid, f->horizon))
		outcome = TransactionIdDidCommit(xid) ? GBT_XID_COMMITTED : GBT_XID_ABORTED;
	else if (TransactionIdDidAbort(xid))
		outcome = GBT_XID_ABORTED;
	else
		outcome = GBT_XID_OPEN;
	cache_put(&f->cache, xid, (uint8) outcome);
	return outcome;
}
