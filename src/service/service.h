/*
 * service.h
 *	  The GPU service process's own declarations: the mirrors it holds,
 *	  the requests of a round, and exports' captured change-log entries.
 *	  Outside src/service only gpubtree.c includes this, to register the
 *	  worker.
 */
#ifndef GPUBTREE_SERVICE_H
#define GPUBTREE_SERVICE_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "lib/stringinfo.h"
#include "storage/dsm.h"

#include "mirror.h"
#include "settings.h"
#include "shmem.h"

/*
 * A step of the service (applying the log, a settling step, a merge, an
 * aggregate) that takes this long keeps requests waiting long enough to be
 * noticed in a query's time: it is reported at DEBUG1.
 */
#define GBT_SLOW_STEP_MS 20

/* One mirror the service holds. */
typedef struct ServiceMirror
{
	bool		in_use;
	GbtMirrorKey key;
	uint64		id;				/* this mirror's layout: new at each build or merge */
	uint64		lineage;		/* its id when built: kept across rebuilds */
	uint64		generation;		/* the index generation it is valid at */
	uint64		db_generation;	/* its database's, bumped by DROP DATABASE */
	GbtMirror  *mirror;
	int			device;			/* where it lives: an index into gbt_devices */
	GbtMirrorParts place;		/* its parts' devices (indexes into
								 * gbt_devices, the first is device) */
	TimestampTz last_used;
	TimestampTz last_changed;	/* when the change log last reached it */
	TimestampTz last_settled;	/* its stamps, by gbt_mirror_settle() */
	TransactionId settled_horizon;	/* ... against this horizon */
	int64		settled_stamped;	/* ... leaving this many stamped */
	bool		settling;		/* a pass is under way ... */
	TransactionId settling_horizon; /* ... against this horizon */
	double		build_ms;
	GbtBuildPhases phases;		/* of its build, from the ask to its chunk sums */
	uint64		hits;
	int64		rebuilds;		/* new trees made with the delta folded in */
	struct GbtRebuild *rebuild; /* a new tree being made, a step a round ... */
	struct BuildCapture *rebuild_log;	/* ... and what was logged since */
} ServiceMirror;

/*
 * A request taken from a slot.  One of more than GBT_SLICE_KEYS ranges is
 * answered a slice at a time (gbt_answer_slice()), over several rounds.
 */
typedef struct TakenRequest
{
	int			slotno;
	dsm_segment *seg;
	GbtRequest *req;
	bool		sliced;			/* answered a slice at a time */
	bool		build;			/* a BUILD: the worker's, one at a time */
	bool		sorted;			/* its unsorted points were sorted */
	int64		next;			/* its ranges answered so far */
	struct GbtTreePass *pass;	/* its tree's part, run in a lane */
} TakenRequest;

/*
 * What was logged for a registered export since it began, copied out of the
 * change log as the service applies it, so that a long export never holds
 * the log back.  One per slot; entries at positions >= start for key.
 */
typedef struct BuildCapture
{
	bool		active;
	bool		overflow;		/* more than GBT_CAPTURE_MAX: build refused */
	uint64		start;
	uint64		ticket;			/* the registration captured for */
	GbtMirrorKey key;
	int64		n;
	int64		cap;
	GbtLogEntry *entries;
	uint64	   *pos;
} BuildCapture;

#define GBT_CAPTURE_MAX ((int64) gbt_shared->log.size * 4)

/* registry.c: the mirrors, the engine they use, the change log applied */
extern ServiceMirror gbt_mirrors[GBT_MAX_MIRRORS];
extern BuildCapture *gbt_captures;	/* one per slot */
extern bool gbt_gpu_usable;
extern int64 gbt_memory_limit;
extern uint64 gbt_next_mirror_id;
extern char gbt_no_engine[GBT_ERRMSG_LEN];

extern void gbt_choose_engine(char *name, Size namelen, char *why, Size whylen);

extern void gbt_set_memory_limit(void);
extern void gbt_publish_mirrors(void);
extern void gbt_drop_mirror(ServiceMirror *sm);
extern ServiceMirror *gbt_find_mirror(const GbtMirrorKey *key);
extern ServiceMirror *gbt_current_mirror(const GbtMirrorKey *key, uint64 generation);
extern void gbt_capture_reset(BuildCapture *bc);
extern void gbt_rebuild_cancel(ServiceMirror *sm);
extern void gbt_rebuilds_end(void);
extern int64 gbt_apply_log(void);
extern bool gbt_maintain_mirrors(void);

/*
 * devices.c: the devices mirrors are placed on.  A device is a CUDA device,
 * a simulated device of the CPU engine (engine_device -1, number >= 0), or
 * the CPU engine alone (both -1).
 */
typedef struct GbtDevice
{
	int			number;			/* as gpubtree.devices and gpubtree_mirrors() name it */
	int			engine_device;	/* what the engine builds on: CUDA device or -1 */
	char		name[64];
	int64		free_at_start;	/* bytes free on the GPU at start */
	int64		limit;			/* its share of the memory limit */
} GbtDevice;

extern GbtDevice gbt_devices[GBT_MAX_DEVICES];
extern int	gbt_ndevices;

extern bool gbt_find_devices(char *name, Size namelen, char *why, Size whylen);
extern int64 gbt_share_memory_limit(int64 total, bool auto_gpu);
extern int64 gbt_largest_share(void);
extern void gbt_devices_text(char *buf, Size len);
extern int64 gbt_device_used(int d);
extern ServiceMirror *gbt_make_room(const GbtMirrorKey *key, int64 bytes,
									GbtMirrorParts *place);
extern int64 gbt_mirror_room(void);
extern void gbt_keep_under_limits(void);

/* requests.c: answers, one function per request kind */
extern void gbt_answer_requests(TakenRequest *taken, int ntaken);

/* build_requests.c */
extern bool gbt_build_start(TakenRequest *t);
extern bool gbt_build_running(void);
extern bool gbt_build_ready(void);
extern bool gbt_build_room(int64 *bytes, GbtMirrorParts *place);
extern void gbt_build_finish(TakenRequest *t);
extern void gbt_build_end(void);
extern bool gbt_answer_slice(TakenRequest *t);
extern void gbt_note_lanes(StringInfo buf);
extern bool gbt_request_abandoned(const TakenRequest *t);
extern void gbt_reply(GbtRequest *req, GbtReplyStatus status, const char *message);

/* agg_requests.c: AGG's checks and snapshot; a round's aggregates at once */
extern bool gbt_agg_refused(TakenRequest *t, ServiceMirror **smp);
extern void gbt_agg_snapshot(GbtRequest *req, SnapshotData *snap);
extern bool gbt_agg_batchable(const TakenRequest *t);
extern void gbt_answer_aggs(TakenRequest *taken, int ntaken, bool *done);
extern void gbt_note_aggs(StringInfo buf);

/*
 * slices.c: requests held across rounds, in the order they came (at most
 * one a slot; their segments stay mapped), and among them the requests
 * answered a slice at a time, in turn
 */
typedef struct HeldRequests
{
	TakenRequest *items;
	int			n;
} HeldRequests;
extern void gbt_held_add(HeldRequests *held, const TakenRequest *t);
extern void gbt_held_remove(HeldRequests *held, int i);
extern void gbt_slices_add(const TakenRequest *t);
extern int	gbt_slices_queued(void);
extern TakenRequest *gbt_slices_next(void);
extern void gbt_slices_pass(void);
extern void gbt_slices_remove(void);
extern bool gbt_slicing(const GbtMirrorKey *key);

/* worker.c */
extern void gbt_service_register(void);
extern PGDLLEXPORT void gpubtree_service_main(Datum arg);

#endif							/* GPUBTREE_SERVICE_H */
