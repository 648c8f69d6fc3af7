/*
 * shmem.h
 *	  The GPU service's shared memory: request slots (protocol.h), index
 *	  generations, the change log, and what the service publishes.
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
 *    recheck visibility, and the mirror stamps each entry with the
 *    (sub)transaction that inserted it, so an aggregate's snapshot decides.
 *  - Deletes.  The capture trigger (capture.c) adds a deletion of (key,
 *    root TID) by the deleting (sub)transaction to the same batch, for rows
 *    deleted or updated other than by HOT; it reaches the log the same way
 *    and stamps the entry's xmax.  A snapshot that sees a commit sees its
 *    deletions too; entries of deleters that abort stay visible.
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
#ifndef GPUBTREE_SHMEM_H
#define GPUBTREE_SHMEM_H

#include "postgres.h"

#include "port/atomics.h"
#include "storage/dsm.h"
#include "storage/itemptr.h"
#include "storage/lwlock.h"
#include "storage/spin.h"

#include "entries.h"
#include "protocol.h"

#define GBT_GENERATIONS 65536
#define GBT_MAX_MIRRORS 256

typedef enum GbtSlotState
{
	GBT_SLOT_FREE = 0,
	GBT_SLOT_SUBMITTED,			/* written by the backend, not yet taken */
	GBT_SLOT_RUNNING,			/* taken by the service */
	GBT_SLOT_DONE,				/* answered (status says how) */
	GBT_SLOT_ABANDONED			/* the backend stopped waiting */
} GbtSlotState;

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
	uint64		build_ticket;	/* this registration's number, never reused */
} GbtSlot;

/*
 * One change-log entry: an index entry inserted by transaction xid, or (a
 * deletion) the entry (ikey, tid) whose row xid deleted or updated; tid is
 * the root of the row's HOT chain, where the index entry points.  xid is the
 * (sub)transaction's own, the heap tuple's xmin or xmax.  A third kind,
 * for no index (key all zeros), says that transaction xid committed: the
 * service learns so without asking the commit log (GBT_LOG_COMMITTED).
 */
typedef enum GbtLogKind
{
	GBT_LOG_INSERT = 0,
	GBT_LOG_DELETE,
	GBT_LOG_COMMITTED
} GbtLogKind;

typedef struct GbtLogEntry
{
	GbtMirrorKey key;
	uint8		nulls;			/* bit c set: column c is NULL */
	uint8		kind;			/* GbtLogKind */
	uint64		ikey;			/* the order-preserving 64-bit key */
	ItemPointerData tid;
	TransactionId xid;
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
	int			device;			/* gpubtree.devices' number; -1: the CPU engine alone */
	int			nparts;			/* split across nparts devices (engine.h) */
	int			part_device[GBT_SPLIT_MAX_PARTS];	/* their numbers */
	int64		part_entries[GBT_SPLIT_MAX_PARTS];	/* their tree entries */
	uint64		generation;
	int64		entries;
	int64		delta;			/* entries inserted or removed since the build */
	int64		stamped;		/* tree entries decided one by one */
	bool		by_map;			/* visibility decided by the visibility map */
	int64		bytes;			/* the mirror's, host and device */
	int64		device_bytes;	/* of those, on the device */
	int64		scratch_bytes;	/* kept for batches, beyond bytes */
	double		build_ms;
	GbtBuildPhases phases;		/* of its build (protocol.h) */
	uint64		hits;
	int64		rebuilds;		/* trees rebuilt with the delta folded in */
	int64		rebuild_copied; /* entries a rebuild under way copied; -1: none */
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
	int64		device_limit;	/* bytes one mirror may take: the devices'
								 * shares it may be split across */
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
	uint64		build_tickets;	/* registrations made (under the log's lock) */
	pg_atomic_uint64 building_since;	/* when the service began a BUILD; 0: none */

	GbtLog		log;

	int			nslots;
	GbtSlot		slots[FLEXIBLE_ARRAY_MEMBER];
} GbtServiceShared;

extern GbtServiceShared *gbt_shared;


/* What the service publishes about itself (gbt_service_facts()). */
typedef struct GbtServiceFacts
{
	pid_t		pid;			/* 0: not running */
	int			procno;
	bool		gpu_usable;
	int64		memory_limit;	/* bytes; 0 until the service resolved it */
	int64		device_limit;	/* bytes one mirror may take; 0 likewise */
} GbtServiceFacts;

/* shmem.c: shared memory, generations and counters, for both sides */
extern void gbt_service_shmem_request(void);
extern void gbt_service_shmem_startup(void);
extern bool gbt_service_running(void);
extern bool gbt_service_building_long(void);
extern void gbt_service_building(bool building);
extern void gbt_service_facts(GbtServiceFacts *facts);
extern pid_t gbt_service_pid(void);
extern void gbt_wake_service(void);
extern int64 gbt_service_memory_limit(bool *on_gpu);
extern int64 gbt_published_entries(Oid dbid, Oid indexrelid);
extern bool gbt_published_current(const GbtMirrorKey *key);
extern uint64 gbt_generation(Oid dbid, Oid indexrelid);
extern void gbt_invalidate(Oid dbid, Oid indexrelid);
extern void gbt_invalidate_at_commit(Oid dbid, Oid indexrelid);
extern uint64 gbt_invalidate_and_get(Oid dbid, Oid indexrelid);
extern void gbt_count_fallback(void);
extern uint64 gbt_vacuum_epoch(Oid dbid, Oid indexrelid);
extern void gbt_vacuum_epoch_bump(Oid dbid, Oid indexrelid);

#endif							/* GPUBTREE_SHMEM_H */
