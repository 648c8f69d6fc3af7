/*
 * service.h
 *	  The GPU service: one background worker owns the device and every mirror;
 *	  backends send it work through shared memory.
 *
 * Protocol.  Each backend has one request slot in shared memory.  To ask
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
 * Mirror consistency (the invariant: for any snapshot that uses a mirror,
 * the mirror holds every index entry whose heap tuple the snapshot may see).
 *
 *  - Inserts.  aminsert adds (key, TID) to a per-transaction batch
 *    (resync.c), which is written into the shared change log below at
 *    pre-commit (and PREPARE), before any GPU scan of the session, and when
 *    it grows large; only entries of indexes that have a mirror or a
 *    registered export are kept (an export registered later reads them
 *    from the index).  The service applies the log to its mirrors at the
 *    start of every round, before it answers any scan, so a scan whose
 *    snapshot sees a commit sees that commit's entries.  Entries of
 *    transactions that later abort are harmless extras: bitmap heap scans
 *    recheck visibility, and pages holding them are not all-visible.
 *  - Builds.  A backend exporting an index registers the log position it
 *    started at; the service keeps what is logged for the index from there
 *    (in its own memory, up to four logs' worth, or the build is refused)
 *    and, when the mirror arrives, adds it (entries the export already
 *    holds are recognised by TID and not added twice).
 *  - Generations.  Anything the log cannot carry makes the index's mirror
 *    unusable instead: a transaction with more entries than the log takes,
 *    a log with no room, ambuild (in-place truncation), DROP, a VACUUM whose
 *    sweep could not be done.  Each bumps the index's generation (shared by
 *    hash bucket, so a collision only costs a rebuild); a mirror records the
 *    generation it is valid at, and a scan uses it only if no bump happened
 *    since.
 *  - VACUUM.  ambulkdelete sweeps the mirror with VACUUM's own dead-TID
 *    callback after nbtree's pass, so entries that nbtree removed by itself
 *    (LP_DEAD simple deletion, bottom-up deletion) go too, before VACUUM can
 *    mark their line pointers unused for reuse.  Rows can die before their
 *    transaction's batch is written (a rolled-back savepoint, an INSERT ...
 *    ON CONFLICT's super-deleted speculative tuple): the sweep first bumps
 *    the index's VACUUM epoch under the log's lock, and a writer that finds
 *    it moved since it batched entries checks their tuples are still its
 *    own before writing them.
 */
#ifndef GPUBTREE_SERVICE_H
#define GPUBTREE_SERVICE_H

#include "postgres.h"

#include "port/atomics.h"
#include "storage/dsm.h"
#include "storage/itemptr.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/relcache.h"

#include "entries.h"

#define GBT_GENERATIONS 4096
#define GBT_MAX_MIRRORS 256
#define GBT_ERRMSG_LEN 256

typedef enum GbtSlotState
{
	GBT_SLOT_FREE = 0,
	GBT_SLOT_SUBMITTED,			/* written by the backend, not yet taken */
	GBT_SLOT_RUNNING,			/* taken by the service */
	GBT_SLOT_DONE,				/* answered (status says how) */
	GBT_SLOT_ABANDONED			/* the backend stopped waiting */
} GbtSlotState;

typedef enum GbtRequestKind
{
	GBT_REQ_BUILD,				/* here are the index's entries: build the mirror */
	GBT_REQ_SCAN,				/* return the TIDs of entries in these ranges */
	GBT_REQ_DUMP,				/* return entries [offset, offset + nitems) */
	GBT_REQ_REMOVE,				/* VACUUM: remove entries with these TIDs */
	GBT_REQ_AGG_PREPARE,		/* name the mirror an aggregate will read */
	GBT_REQ_AGG					/* aggregate these ranges of that mirror */
} GbtRequestKind;

typedef enum GbtReplyStatus
{
	GBT_REPLY_OK,
	GBT_REPLY_NO_MIRROR,		/* no current mirror: export and BUILD first */
	GBT_REPLY_NO_ROOM,			/* nresults TIDs do not fit: ask again */
	GBT_REPLY_ERROR				/* failed: message says why; use nbtree */
} GbtReplyStatus;

/*
 * An aggregate over entries of a mirror, per column (entries.h), in a form
 * that combines exactly: int64 columns' sums in 128 bits, float8 columns'
 * sums of finite values in double-double with NaN and infinities counted
 * apart, min and max in PostgreSQL's order (NaN highest).
 */
typedef gbt_agg_col GbtAggCol;	/* cuda/engine.h */
typedef gbt_agg_result GbtAggResult;

/* What identifies one mirror: a mirror is never used for other storage. */
typedef struct GbtMirrorKey
{
	Oid			dbid;
	Oid			indexrelid;
	Oid			relfilenode;
} GbtMirrorKey;

/*
 * A request, at the start of its DSM segment.
 *	BUILD: nitems entries follow (entries.h's flat layout, columns as in
 *		columns), in (key, TID) order; log_start is the change-log position
 *		registered before the export began.
 *	SCAN: nitems inclusive ranges follow, lo[] then hi[], sorted and
 *		disjoint; the answer is the TIDs of the entries in them, each once.
 *	DUMP: the answer is keys[] then tids[] of the mirror's live entries among
 *		raw positions [offset, offset + nitems); total says how many raw
 *		positions there are.  mirror_id identifies the mirror's layout.
 *	REMOVE: nitems TIDs follow, sorted; applies only if mirror_id still names
 *		the mirror, else the mirror is dropped.
 *	AGG_PREPARE: the answer is mirror_id, log_bound (everything logged before
 *		it is in the mirror) and columns.  Every entry the mirror holds now
 *		was inserted into the heap before this answer, which is what lets
 *		the backend read the visibility map after it (aggregate.c).
 *	AGG: the mirror named by mirror_id, entries in nitems disjoint inclusive
 *		ranges (lo[] then hi[]) that were there at AGG_PREPARE (log position
 *		below log_bound); then nvisible bits of the visibility map.  Entries
 *		on all-visible blocks are aggregated into agg; the others come back
 *		(at most unsure_cap, entries.h's flat layout for GBT_MAX_COLS
 *		columns) for the backend to check against the heap.
 */
typedef struct GbtRequest
{
	GbtRequestKind kind;
	GbtMirrorKey key;
	uint64		generation;		/* the index's generation the request saw */
	uint64		log_start;		/* BUILD */
	int			service_pid;	/* BUILD: the service the start was registered with */
	GbtColumns	columns;		/* BUILD: the index's mirrored columns */
	int64		nitems;
	int64		offset;			/* DUMP */
	uint64		mirror_id;		/* DUMP (reply), REMOVE, AGG */
	uint64		log_bound;		/* AGG_PREPARE (reply), AGG */
	int64		nvisible;		/* AGG: heap blocks in the visibility bits */
	int64		unsure_cap;		/* AGG */
	Size		capacity;		/* bytes of the segment */

	/* the reply */
	GbtReplyStatus status;
	int64		nresults;		/* entries in the answer, after the data */
	int64		total;			/* DUMP: raw positions of the mirror */
	GbtAggResult agg;			/* AGG */
	double		device_ms;		/* time spent on the device or engine */
	bool		on_gpu;			/* answered by the GPU (else CPU engine) */
	char		message[GBT_ERRMSG_LEN];
} GbtRequest;

#define GBT_REQUEST_DATA(req) ((char *) (req) + MAXALIGN(sizeof(GbtRequest)))

typedef struct GbtSlot
{
	pg_atomic_uint32 state;		/* GbtSlotState */
	dsm_handle	handle;			/* the request's segment */
	int			client_procno;	/* whose latch to set */

	/* A mirror export under way (protected by the log lock). */
	bool		building;
	GbtMirrorKey build_key;
	int			build_service_pid;
	uint64		build_start;	/* log position when the export began */
} GbtSlot;

/* One change-log entry: an index entry inserted by some transaction. */
typedef struct GbtLogEntry
{
	GbtMirrorKey key;
	uint8		nulls;			/* bit c set: column c is NULL */
	uint64		ikey;			/* the order-preserving 64-bit key */
	ItemPointerData tid;
	int64		vals[GBT_MAX_COLS]; /* the mirrored columns (entries.h) */
} GbtLogEntry;

/*
 * The change log: a ring of entries, written by backends, applied by the
 * service.  Positions only grow; entry p lives at p % size
 * (gpubtree.change_log_size).
 * Writers never overwrite positions at or after applied; the service
 * copies what registered exports will need into its own memory as it
 * applies the log, so a long export does not hold the log back.
 */
typedef struct GbtLog
{
	LWLock	   *lock;
	uint64		head;			/* next position to write */
	uint64		applied;		/* the service applied everything before */
	uint64		size;			/* entries in the ring */
	GbtLogEntry *entries;		/* in shared memory of its own */
} GbtLog;

/* Per-mirror facts the service publishes for gpubtree_status(). */
typedef struct GbtMirrorInfo
{
	GbtMirrorKey key;
	bool		in_use;
	bool		on_gpu;
	uint64		generation;
	int64		entries;
	int64		delta;			/* entries inserted or removed since the build */
	int64		bytes;
	double		build_ms;
	uint64		hits;
} GbtMirrorInfo;

typedef struct GbtServiceShared
{
	slock_t		mutex;			/* protects the fields up to mirrors[] */
	pid_t		service_pid;	/* 0 when not running */
	int			service_procno;
	bool		gpu_usable;		/* the service found a usable device */
	char		device_name[64];
	char		status[GBT_ERRMSG_LEN];
	int64		mirror_bytes;	/* all mirrors, on device or host */
	int64		memory_limit;	/* bytes mirror_bytes may reach */
	char		memory_limit_source[64];	/* what set it */
	GbtMirrorInfo mirrors[GBT_MAX_MIRRORS];

	pg_atomic_uint64 requests;	/* answered requests */
	pg_atomic_uint64 fallbacks; /* scans that went to nbtree instead */
	pg_atomic_uint64 builds;	/* mirrors built */
	pg_atomic_uint64 exports;	/* index exports begun for a mirror */
	pg_atomic_uint64 logged;	/* entries written to the change log */
	pg_atomic_uint64 invalidations; /* generation bumps */
	pg_atomic_uint64 generation[GBT_GENERATIONS];
	pg_atomic_uint64 vacuum_epoch[GBT_GENERATIONS]; /* bumped by sweeps */

	GbtLog		log;

	int			nslots;
	GbtSlot		slots[FLEXIBLE_ARRAY_MEMBER];
} GbtServiceShared;

extern GbtServiceShared *gbt_shared;

/* service.c: shared memory, and the backend's side of the protocol */
extern void gbt_service_shmem_init(void);
extern bool gbt_service_running(void);
extern pid_t gbt_service_pid(void);
extern uint64 gbt_generation(Oid dbid, Oid indexrelid);
extern void gbt_invalidate(Oid dbid, Oid indexrelid);
extern void gbt_invalidate_at_commit(Oid dbid, Oid indexrelid);
extern uint64 gbt_invalidate_and_get(Oid dbid, Oid indexrelid);
extern GbtRequest *gbt_request_create(dsm_segment **seg, Size datasize,
									  Size resultsize);
extern bool gbt_request_send(dsm_segment *seg);
extern void gbt_count_fallback(void);
extern uint64 gbt_vacuum_epoch(Oid dbid, Oid indexrelid);
extern void gbt_vacuum_epoch_bump(Oid dbid, Oid indexrelid);

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
extern bool gbt_register_build(const GbtMirrorKey *key, uint64 *start,
							   int *service_pid);
extern void gbt_unregister_build(void);

/* service_worker.c: the background worker */
extern void gbt_service_register(void);
extern PGDLLEXPORT void gpubtree_service_main(Datum arg);

#endif							/* GPUBTREE_SERVICE_H */
