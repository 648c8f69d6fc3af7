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
 * Mirror consistency (until commit-time resync lands).  Every insert into a
 * gpubtree index and every VACUUM pass over one bumps a shared change
 * counter for that index.  A mirror remembers the counter value read before
 * it was exported from the index, and a scan uses it only if the counter
 * still has that value: any change since then, committed or not, makes the
 * scan rebuild the mirror or fall back to nbtree.  Counters are shared by
 * hash bucket, so a collision only causes a needless rebuild.
 */
#ifndef GPUBTREE_SERVICE_H
#define GPUBTREE_SERVICE_H

#include "postgres.h"

#include "port/atomics.h"
#include "storage/dsm.h"
#include "storage/itemptr.h"
#include "storage/spin.h"
#include "utils/relcache.h"

#define GBT_CHANGE_COUNTERS 4096
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
	GBT_REQ_SCAN				/* return the TIDs of entries in these ranges */
} GbtRequestKind;

typedef enum GbtReplyStatus
{
	GBT_REPLY_OK,
	GBT_REPLY_NO_MIRROR,		/* no current mirror: export and BUILD first */
	GBT_REPLY_NO_ROOM,			/* nresults TIDs do not fit: ask again */
	GBT_REPLY_ERROR				/* failed: message says why; use nbtree */
} GbtReplyStatus;

/* What identifies one mirror: a mirror is never used for other storage. */
typedef struct GbtMirrorKey
{
	Oid			dbid;
	Oid			indexrelid;
	Oid			relfilenode;
} GbtMirrorKey;

/*
 * A request, at the start of its DSM segment.  For BUILD, nitems (key, TID)
 * pairs follow: keys[nitems] then tids[nitems], keys sorted.  For SCAN,
 * nitems inclusive ranges follow: lo[nitems] then hi[nitems].
 */
typedef struct GbtRequest
{
	GbtRequestKind kind;
	GbtMirrorKey key;
	uint64		version;		/* change counter the data/scan belongs to */
	int			keytype;		/* a HM key type, for the mirror's record */
	int64		nitems;
	Size		capacity;		/* bytes of the segment */

	/* the reply */
	GbtReplyStatus status;
	int64		nresults;		/* TIDs in the answer, after the data */
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
} GbtSlot;

/* Per-mirror facts the service publishes for gpubtree_status(). */
typedef struct GbtMirrorInfo
{
	GbtMirrorKey key;
	bool		in_use;
	bool		on_gpu;
	uint64		version;
	int64		entries;
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
	GbtMirrorInfo mirrors[GBT_MAX_MIRRORS];

	pg_atomic_uint64 requests;	/* answered requests */
	pg_atomic_uint64 fallbacks; /* scans that went to nbtree instead */
	pg_atomic_uint64 builds;	/* mirrors built */
	pg_atomic_uint64 change_counter[GBT_CHANGE_COUNTERS];

	int			nslots;
	GbtSlot		slots[FLEXIBLE_ARRAY_MEMBER];
} GbtServiceShared;

extern GbtServiceShared *gbt_shared;

/* service.c: shared memory, and the backend's side of the protocol */
extern void gbt_service_shmem_init(void);
extern bool gbt_service_running(void);
extern uint64 gbt_change_counter(Oid dbid, Oid indexrelid);
extern void gbt_bump_change_counter(Relation index);
extern GbtRequest *gbt_request_create(dsm_segment **seg, Size datasize,
									  Size resultsize);
extern bool gbt_request_send(dsm_segment *seg);
extern void gbt_count_fallback(void);

/* service_worker.c: the background worker */
extern void gbt_service_register(void);
extern PGDLLEXPORT void gpubtree_service_main(Datum arg);

#endif							/* GPUBTREE_SERVICE_H */
