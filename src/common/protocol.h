/*
 * protocol.h
 *	  The requests backends send the GPU service, and its replies.
 *
 * Each backend has one request slot in shared memory (shmem.h).  To ask
 * something, a backend writes a request into a DSM segment it creates, puts
 * the segment's handle in its slot, marks the slot SUBMITTED and sets the
 * service's latch; then it waits on its own latch, with a deadline, until
 * the slot is DONE.  The service answers in the same segment, after the
 * request's data; when the answer does not fit it says how much room it
 * needs and the backend asks again with a larger segment.  A backend that
 * stops waiting (cancel, timeout, error, exit) marks its slot ABANDONED;
 * the service then drops the request.  Nothing ever waits on the service
 * without a deadline, and the segment belongs to the backend, so nothing
 * leaks when either side dies.
 *
 * A request is a header, common to every kind, and the body of its kind;
 * its data follow at GBT_REQUEST_DATA().  Backends build requests only
 * through client.c's gbt_call_*() functions, one per kind; the service
 * answers each kind in service/requests.c.
 */
#ifndef GPUBTREE_PROTOCOL_H
#define GPUBTREE_PROTOCOL_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "storage/itemptr.h"

#include "engine.h"
#include "predicate.h"
#include "entries.h"

#define GBT_ERRMSG_LEN 256

/*
 * The most keys (ranges) of one AGG or SCAN request the service answers in
 * one go.  A longer list is answered a slice of this many at a time, the
 * service keeping its progress, and between two slices it answers every
 * request that came meanwhile: a small request waits for one slice at
 * most, not for another session's whole list.  Tiny under
 * GBT_SMALL_LAYOUT, so that small tests are answered in slices too.
 */
#ifndef GBT_SLICE_KEYS
#define GBT_SLICE_KEYS ((int64) 1 << 20)
#endif

/*
 * A request segment up to this size outlives its answer: the backend keeps
 * it for its next request (client.c) and the service keeps it mapped
 * (worker.c), so that neither allocates, attaches nor detaches one each
 * time.
 */
#define GBT_SEGMENT_KEEP_MAX ((Size) 64 * 1024 * 1024)

/*
 * A mirror's build holds up the service's round (several seconds for 2^26
 * entries).  Once one has run this long, other requests are not sent and
 * those waiting stop: their callers take nbtree or the plan below.  Builds
 * shorter than this (most of them) are waited for.
 */
#define GBT_BUILD_BLOCK_MS 1000

typedef enum GbtRequestKind
{
	GBT_REQ_BUILD,				/* here are the index's entries: build the mirror */
	GBT_REQ_SCAN,				/* return the TIDs of entries in these ranges */
	GBT_REQ_DUMP,				/* return entries [offset, offset + nitems) */
	GBT_REQ_REMOVE,				/* VACUUM: remove entries with these TIDs */
	GBT_REQ_AGG_PREPARE,		/* name the mirror an aggregate will read */
	GBT_REQ_AGG,				/* aggregate these ranges of that mirror */
	GBT_REQ_VOUCH				/* after VACUUM: these heap blocks are all-visible */
} GbtRequestKind;

typedef enum GbtReplyStatus
{
	GBT_REPLY_OK,
	GBT_REPLY_NO_MIRROR,		/* no current mirror: export and BUILD first */
	GBT_REPLY_NO_ROOM,			/* nresults TIDs do not fit: ask again */
	GBT_REPLY_ERROR,			/* failed: message says why; use nbtree */
	GBT_REPLY_PREPARED			/* an AGG of no mirror_id answered as
								 * AGG_PREPARE: read the map, ask again */
} GbtReplyStatus;

/* What identifies one mirror: a mirror is never used for other storage. */
typedef struct GbtMirrorKey
{
	Oid			dbid;
	Oid			indexrelid;
	Oid			relfilenode;
} GbtMirrorKey;

/*
 * An aggregate over entries of a mirror, per column (entries.h), in a form
 * that combines exactly: int64 columns' sums in 128 bits, float8 columns'
 * sums of finite values in double-double with NaN and infinities counted
 * apart, min and max in PostgreSQL's order (NaN highest).
 */
typedef gbt_agg_col GbtAggCol;	/* engine.h */
typedef gbt_agg_result GbtAggResult;

/* Every request's header: what it is about, and how it was answered. */
typedef struct GbtRequestHeader
{
	GbtRequestKind kind;
	GbtMirrorKey key;
	uint64		generation;		/* the index's generation the request saw */
	Size		capacity;		/* bytes of the segment */

	/* the reply */
	GbtReplyStatus status;
	int64		nresults;		/* items in the answer, after the data */
	double		device_ms;		/* time spent on the device or engine */
	bool		on_gpu;			/* answered by the GPU (else CPU engine) */
	char		message[GBT_ERRMSG_LEN];
} GbtRequestHeader;

/*
 * When each phase of a mirror's build ended, from the moment it was asked
 * for (the commit of CREATE INDEX, or a query that found no mirror) to the
 * moment its chunk sums were all made and aggregates ran at full speed.
 * The exporting process fills them up to sent, the service the rest;
 * 0: not (yet) reached.  gpubtree_mirrors().note and the service's log
 * line at the end of a build show them (gbt_build_phases_text()).
 */
typedef struct GbtBuildPhases
{
	TimestampTz asked;			/* the build was asked for */
	TimestampTz started;		/* the export began (its worker had its locks) */
	TimestampTz read;			/* the index was read */
	TimestampTz decided;		/* the heap told the unknown entries */
	TimestampTz sent;			/* the BUILD request was handed over */
	TimestampTz taken;			/* the service began the build */
	TimestampTz built;			/* the mirror was built and published */
	TimestampTz summed;			/* its chunk sums were all made */
} GbtBuildPhases;

extern void gbt_build_phases_text(const GbtBuildPhases *p, char *out, Size outlen);

/*
 * BUILD: nentries entries follow (entries.h's flat layout for room entries,
 * columns as in columns: the export reads into it before it knows how
 * many), in (key, TID) order, an integer key column's values left out (its
 * keys give them: the mirror does not hold them, mirror_build.c); log_start
 * is the change-log position registered before the export began, with the
 * service it was registered with, and ticket the registration's number (a
 * later export in the same slot may start at the same position).
 */
typedef struct GbtBuildRequest
{
	uint64		log_start;
	uint64		ticket;
	int			service_pid;
	GbtColumns	columns;
	int64		nentries;
	int64		room;			/* entries the layout has room for */
	int64		nstamps;		/* GbtEntryStamps after the entries (from
								 * MAXALIGN(gbt_entries_flat_size(room))) */
	bool		captured;		/* the table's deletes reach the log */
	GbtBuildPhases phases;		/* up to sent */
} GbtBuildRequest;

/*
 * SCAN: nranges inclusive ranges follow, lo[] then hi[], sorted and
 * disjoint; the answer is the TIDs of the entries in them, each once
 * (gbt_scan_reply_tids()).
 */
typedef struct GbtScanRequest
{
	int64		nranges;
} GbtScanRequest;

/*
 * Whether a snapshot sees an entry's row, as the service decides from the
 * entry's visibility stamps (src/service/snapview.h).
 */
typedef enum GbtVerdict
{
	GBT_SKIP,					/* the snapshot does not see the row */
	GBT_TAKE,					/* it does */
	GBT_UNSURE					/* the heap must tell */
} GbtVerdict;

/*
 * DUMP: the answer is up to nitems of the mirror's live entries in (key,
 * TID) order, the first after the cursor (all, without started), in
 * entries.h's flat layout for ncols columns (GBT_MAX_COLS, or 0 for keys
 * and TIDs alone); the cursor moves to the last one, done says none is
 * left, and mirror_id identifies the mirror (a rebuild of its tree keeps
 * it: the cursor reads on across one, and the same TIDs are dead in both).
 * With verdicts, a GbtVerdict byte per entry follows (gbt_dump_reply_verdicts()): whether a
 * snapshot taken now sees the entry's row, by its stamps (the asking
 * transaction's own changes are unsure).
 */
typedef struct GbtDumpCursor
{
	uint64		key;			/* encoded, as in the mirror */
	ItemPointerData tid;
} GbtDumpCursor;

typedef struct GbtDumpRequest
{
	bool		started;		/* cursor names the last entry read */
	GbtDumpCursor cursor;
	int64		nitems;
	int			ncols;
	bool		verdicts;		/* and each entry's GbtVerdict, as of now */
	TransactionId topxid;		/* the asking transaction, if it has an ID */
	/* the reply */
	bool		done;
	uint64		mirror_id;
	GbtColumns	columns;
} GbtDumpRequest;

/*
 * REMOVE: ntids TIDs follow, sorted; applies only if mirror_id still names
 * the mirror, else the mirror is dropped.  With all_dead, the TIDs are
 * VACUUM's whole dead list, right for whichever mirror is current
 * (mirror_id is not looked at).
 */
typedef struct GbtRemoveRequest
{
	uint64		mirror_id;
	int64		ntids;
	bool		all_dead;
} GbtRemoveRequest;

/*
 * AGG_PREPARE: the answer names the mirror (mirror_id), log_bound
 * (everything logged before it is in the mirror) and its columns.  Every
 * entry the mirror holds now was inserted into the heap before this answer,
 * which is what lets the backend read the visibility map after it
 * (exec_request.c).
 */
typedef struct GbtAggPrepareRequest
{
	/* the reply */
	uint64		mirror_id;
	uint64		log_bound;
	GbtColumns	columns;
	bool		has_keys;		/* the mirror has entries, all of whose keys */
	uint64		key_min;		/* (dead ones too) lie in [key_min, key_max] */
	uint64		key_max;
} GbtAggPrepareRequest;

/*
 * AGG: the mirror named by mirror_id, entries in nranges disjoint inclusive
 * ranges (lo[] then hi[]) that were there at AGG_PREPARE (log position below
 * log_bound); then nvisible bits of the visibility map; then the query's
 * snapshot's xip[xcnt] and subxip[subxcnt].  The entries the snapshot sees
 * are aggregated into agg; those the mirror cannot decide come back (at
 * most unsure_cap, gbt_agg_reply_unsure()) for the backend to check
 * against the heap, with ncols columns (the mirror's, from AGG_PREPARE).
 * With rows (a lookup's), nothing is aggregated: the
 * entries the snapshot sees come back too, each with its GbtVerdict
 * (gbt_agg_reply_verdicts()), and agg.nunsure counts every entry wanted.
 * With grouped (sorted ranges, not rows), each range is aggregated apart
 * too: gbt_agg_reply_groups()[r] over range r alone, and agg their total.
 * With programs (after the snapshot: gbt_agg_request_preds()), entries
 * are aggregated as predicate.h's filtered aggregate says, one result per
 * FILTER program, of each range when grouped:
 * gbt_agg_reply_groups()[r * nfilters + f]; the unsure ones come back once
 * (those WHERE keeps), agg.nunsure counting them.
 * With group_col (>= 0; programs, sorted ranges, not grouped), the entries
 * are grouped by their value of that column (groupby.h): ngroups groups,
 * group_null when the last is the NULL group, each group's value in
 * gbt_agg_reply_group_values() and its results in gbt_agg_reply_groups()
 * [g * nfilters + f], room for group_cap groups; when ngroups exceeds it,
 * nothing else of the reply is meaningful.
 * Unsorted points are sorted and freed of repeats in place: lo[0..nkeys)
 * holds them after the answer, and with map, gbt_agg_reply_map()[i] is the
 * place in them of the key that came as lo[i].
 * A mirror_id of 0 (no AGG_PREPARE: one round trip) is the current mirror,
 * with log_bound where the log is applied when the service takes the
 * request, and no visibility bits: where the stamps decide (the mirror
 * trusts them, stamps is set, ncols is the mirror's), the entries they
 * cannot decide without the map come back unsure; else the reply is
 * PREPARED, mirror_id, log_bound and columns filled in as AGG_PREPARE's
 * answer, and the backend reads the map and asks with them.
 */
typedef struct GbtAggRequest
{
	uint64		mirror_id;		/* 0: the current one, prepared here */
	uint64		log_bound;
	int64		nranges;
	int64		nvisible;		/* heap blocks in the visibility bits */
	int64		unsure_cap;
	/* the snapshot */
	TransactionId xmin;
	TransactionId xmax;
	int32		xcnt;
	int32		subxcnt;
	bool		suboverflowed;
	bool		recovery;		/* taken during recovery */
	TransactionId topxid;		/* the querying transaction, if it has an ID */
	bool		stamps;			/* the table's deletes reach the log */
	bool		rows;			/* list the entries, do not aggregate */
	bool		points;			/* each range one key: lo only, hi = lo */
	bool		unsorted;		/* points in any order, repeats allowed: the
								 * service sorts them and drops repeats */
	bool		map;			/* unsorted: and tells where each went
								 * (gbt_agg_reply_map()) */
	bool		grouped;		/* and one aggregate a range, in
								 * gbt_agg_reply_groups() */
	bool		no_extremes;	/* no MIN or MAX asked: the reply's min and
								 * max may be wrong */
	bool		where;			/* a WHERE program (predicate.h) first */
	int			nfilters;		/* then FILTER programs: 0, or one result
								 * each (a range's each, grouped) */
	int64		nlist;			/* their IN lists' constants */
	int			ncols;			/* columns of the entries that come back */
	int			group_col;		/* -1, or group by this column's values */
	int64		group_cap;		/* room for so many groups */
	/* the reply */
	GbtAggResult agg;
	GbtColumns	columns;
	int64		nkeys;			/* the ranges looked up (unsorted: distinct) */
	int64		ngroups;		/* group_col: the groups (may exceed group_cap) */
	bool		group_null;		/* and the last one is the NULL group */
} GbtAggRequest;

/*
 * VOUCH: nvisible bits of the visibility map follow, read at the end of a
 * VACUUM of the table (its cleanup), while the capture trigger fires.  The
 * entries on all-visible blocks whose inserter the mirror did not know are
 * visible to every snapshot (stamps.c: gbt_mirror_vouch()).
 */
typedef struct GbtVouchRequest
{
	int64		nvisible;
} GbtVouchRequest;

typedef struct GbtRequest
{
	GbtRequestHeader hdr;
	union
	{
		GbtBuildRequest build;
		GbtScanRequest scan;
		GbtDumpRequest dump;
		GbtRemoveRequest remove;
		GbtAggPrepareRequest agg_prepare;
		GbtAggRequest agg;
		GbtVouchRequest vouch;
	}			body;
} GbtRequest;

#define GBT_REQUEST_DATA(req) ((char *) (req) + MAXALIGN(sizeof(GbtRequest)))

/* Where a SCAN's answer starts: after its ranges. */
static inline ItemPointerData *
gbt_scan_reply_tids(GbtRequest *req)
{
	return (ItemPointerData *)
		(GBT_REQUEST_DATA(req) + MAXALIGN(2 * sizeof(uint64) * req->body.scan.nranges));
}

/* Where a DUMP's verdicts start: after its entries. */
static inline uint8 *
gbt_dump_reply_verdicts(GbtRequest *req)
{
	return (uint8 *) GBT_REQUEST_DATA(req) +
		gbt_entries_flat_size(req->body.dump.ncols, req->body.dump.nitems);
}

/* Bytes of an AGG request's data: its ranges, visibility bits and snapshot. */
static inline Size
gbt_agg_request_data_size(int64 nranges, bool points, int64 nvisible, int64 xcnt,
						  int64 subxcnt)
{
	return MAXALIGN((points ? 1 : 2) * sizeof(uint64) * nranges + (nvisible + 7) / 8) +
		MAXALIGN(sizeof(TransactionId) * (xcnt + subxcnt));
}

/* Where an AGG's snapshot xids start: after its ranges and visibility bits. */
static inline TransactionId *
gbt_agg_request_xids(GbtRequest *req)
{
	return (TransactionId *) (GBT_REQUEST_DATA(req) +
							  gbt_agg_request_data_size(req->body.agg.nranges,
														req->body.agg.points,
														req->body.agg.nvisible, 0, 0));
}

/* Bytes of an AGG's programs: WHERE's and FILTERs', then their constants. */
static inline Size
gbt_agg_preds_size(bool where, int nfilters, int64 nlist)
{
	return MAXALIGN(sizeof(gbt_pred) * ((where ? 1 : 0) + nfilters)) +
		MAXALIGN(sizeof(gbt_pred_value) * nlist);
}

/* Where an AGG's programs start: after its snapshot. */
static inline gbt_pred *
gbt_agg_request_preds(GbtRequest *req)
{
	return (gbt_pred *) (GBT_REQUEST_DATA(req) +
						 gbt_agg_request_data_size(req->body.agg.nranges,
												   req->body.agg.points,
												   req->body.agg.nvisible,
												   req->body.agg.xcnt,
												   req->body.agg.subxcnt));
}

/*
 * Aggregates of an AGG's reply in gbt_agg_reply_groups(): a range's, a
 * filter's, a group's (group_cap groups of its column's values, if > 0).
 */
static inline int64
gbt_agg_reply_slots(bool grouped, int64 nranges, int nfilters, int64 group_cap)
{
	if (group_cap > 0)
		return group_cap * Max(nfilters, 1);
	if (!grouped && nfilters == 0)
		return 0;
	return (grouped ? nranges : 1) * Max(nfilters, 1);
}

/* Where an AGG's unsure entries start: after its data. */
static inline char *
gbt_agg_reply_unsure(GbtRequest *req)
{
	return (char *) gbt_agg_request_preds(req) +
		gbt_agg_preds_size(req->body.agg.where, req->body.agg.nfilters, req->body.agg.nlist);
}

/* Where a rows AGG's verdicts start: after room for unsure_cap entries. */
static inline uint8 *
gbt_agg_reply_verdicts(GbtRequest *req)
{
	return (uint8 *) gbt_agg_reply_unsure(req) +
		gbt_entries_flat_size(req->body.agg.ncols, req->body.agg.unsure_cap);
}

/*
 * Bytes of an AGG's reply: its entries, their verdicts, its map, its
 * groups' aggregates (nslots) and its groups' values (group_cap).
 */
static inline Size
gbt_agg_reply_size(int ncols, int64 unsure_cap, bool rows, int64 nmap, int64 nslots,
				   int64 group_cap)
{
	return gbt_entries_flat_size(ncols, unsure_cap) +
		MAXALIGN(rows ? unsure_cap : 0) + MAXALIGN(sizeof(uint32) * nmap) +
		sizeof(GbtAggResult) * nslots + sizeof(int64) * Max(group_cap, 0);
}

/* Where an AGG's map starts: after its verdicts. */
static inline uint32 *
gbt_agg_reply_map(GbtRequest *req)
{
	return (uint32 *) (gbt_agg_reply_unsure(req) +
					   gbt_agg_reply_size(req->body.agg.ncols, req->body.agg.unsure_cap,
										  req->body.agg.rows, 0, 0, 0));
}

/* Where a grouped or filtered AGG's aggregates start: after its map. */
static inline GbtAggResult *
gbt_agg_reply_groups(GbtRequest *req)
{
	return (GbtAggResult *) (gbt_agg_reply_unsure(req) +
							 gbt_agg_reply_size(req->body.agg.ncols,
												req->body.agg.unsure_cap,
												req->body.agg.rows,
												req->body.agg.map ?
												req->body.agg.nranges : 0, 0, 0));
}

/* Where a group_col AGG's group values start: after its aggregates. */
static inline int64 *
gbt_agg_reply_group_values(GbtRequest *req)
{
	return (int64 *) (gbt_agg_reply_groups(req) +
					  gbt_agg_reply_slots(false, 0, req->body.agg.nfilters,
										  req->body.agg.group_cap));
}

#endif							/* GPUBTREE_PROTOCOL_H */
