/*
 * scan.c
 *	  Bitmap scans answered by the GPU service.
 *
 * amgetbitmap comes here first.  When the scan's conditions are ranges or
 * one large = ANY(array) on the leading key column, we turn them into
 * inclusive ranges of order-preserving 64-bit keys and ask the service for
 * the TIDs of the mirror's entries in them.  The answer is exact for those
 * conditions, and the bitmap heap scan above still checks every tuple's
 * visibility, so dead entries in the mirror do no harm; a missing entry
 * would, which is what commit-time resync (shmem.h, resync.c) rules out.  Anything
 * else, and every failure, goes to nbtree's btgetbitmap: same answer.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/xlog.h"
#include "nodes/tidbitmap.h"
#include "portability/instr_time.h"

#include "backend.h"
#include "build.h"
#include "client.h"
#include "keytypes.h"
#include "resync.h"
#include "scan.h"
#include "scankeys.h"
#include "scanstats.h"

/*
 * One SCAN round trip; on success fills tbm.  *status tells what happened.
 */
static bool
scan_once(Relation index, const uint64 *lo, const uint64 *hi, int64 n,
		  Size result_room, TIDBitmap *tbm,
		  int64 *ntids, GbtReplyStatus *status)
{
	GbtCall		call;
	bool		ok;
	instr_time	t0,
				t1;

	INSTR_TIME_SET_CURRENT(t0);
	ok = gbt_call_scan(&call, index, lo, hi, n, result_room);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	gbt_scan_stats_add_wait(INSTR_TIME_GET_MILLISEC(t1));
	if (ok)
	{
		GbtRequestHeader *hdr = &call.req->hdr;

		*status = hdr->status;
		*ntids = hdr->nresults;
		if (hdr->status == GBT_REPLY_OK)
		{
			ItemPointerData *tids = gbt_scan_reply_tids(call.req);
			int64		done;

			/* tbm_add_tuples takes an int count: feed it in pieces. */
			for (done = 0; tbm != NULL && done < hdr->nresults; done += 1 << 20)
				tbm_add_tuples(tbm, tids + done,
							   (int) Min(hdr->nresults - done, 1 << 20), false);
			gbt_scan_stats_answered(n, hdr->nresults, hdr->device_ms, hdr->on_gpu);
		}
	}
	gbt_call_end(&call);
	return ok;
}

/* nbtree answers: first the rescan that gpubtree_rescan() left to us. */
static int64
nbtree_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	btrescan(scan, scan->keyData, scan->numberOfKeys, NULL, 0);
	return btgetbitmap(scan, tbm);
}

int64
gpubtree_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	Relation	index = scan->indexRelation;
	Oid			keytype;
	uint64	   *lo;
	uint64	   *hi;
	int64		n;
	int64		ntids = 0;
	Size		room;
	GbtReplyStatus status = GBT_REPLY_ERROR;
	int			attempt;
	char		note[GBT_ERRMSG_LEN];
	instr_time	t0,
				t1;

	if (gpubtree_device_mode == GPUBTREE_DEVICE_OFF ||
		gbt_shared == NULL || RecoveryInProgress() ||
		!OidIsValid(keytype = gbt_mirror_key_type(index)))
		return nbtree_getbitmap(scan, tbm);
	INSTR_TIME_SET_CURRENT(t0);
	if (!gbt_keys_to_ranges(scan->keyData, scan->numberOfKeys, keytype, false, NULL,
							&lo, &hi, &n))
		return nbtree_getbitmap(scan, tbm);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	gbt_scan_stats_add_prep(INSTR_TIME_GET_MILLISEC(t1));

	if (n == 0)
		return 0;				/* contradictory conditions: nothing matches */

	/* This session's own inserts first, so that it sees its own rows. */
	gbt_resync_flush();
	gbt_scan_stats_set_note("");

	/* Guess room for the answer; the service says when it needs more. */
	room = sizeof(ItemPointerData) * Max(n * 4, 1024);
	for (attempt = 0; attempt < 3; attempt++)
	{
		if (!scan_once(index, lo, hi, n, room, tbm, &ntids, &status))
			break;
		if (status == GBT_REPLY_OK)
			return ntids;
		if (status == GBT_REPLY_NO_ROOM)
		{
			/* With slack: concurrent inserts may grow the answer meanwhile. */
			room = sizeof(ItemPointerData) * (ntids + ntids / 4 + 1024);
		}
		else if (status == GBT_REPLY_NO_MIRROR && attempt == 0)
		{
			/* Built in the background; we wait only if asked to. */
			bool		built = gbt_mirror_wanted(index, keytype, note, sizeof(note));

			gbt_scan_stats_set_note(note);
			if (!built)
				break;
		}
		else
			break;
	}

	gbt_count_fallback();
	gbt_scan_stats_fell_back();
	return nbtree_getbitmap(scan, tbm);
}

