/*
 * service_worker.c
 *	  The GPU service's background worker: owns the CUDA context and every
 *	  mirror, and answers backends' requests in batches.
 *
 * It is started by the postmaster when gpubtree is in
 * shared_preload_libraries.  It is the only process that initialises CUDA
 * for mirrors (the postmaster never does), so one context and one copy of
 * each mirror serve every connection.  It connects to no database: backends
 * export an index's entries to it, and it only ever sees keys and TIDs.
 *
 * Requests that arrive within gpubtree.batch_window microseconds of each
 * other are answered together: all ranges asked of one mirror, from any
 * number of sessions, go to the engine in one batched call, where equal
 * keys are searched once.
 */
#include "postgres.h"

#include <unistd.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "backend.h"
#include "mirror.h"
#include "service.h"

typedef struct ServiceMirror
{
	bool		in_use;
	GbtMirrorKey key;
	uint64		id;				/* this mirror's layout: new at each build or merge */
	uint64		generation;		/* the index generation it is valid at */
	uint64		db_generation;	/* its database's, bumped by DROP DATABASE */
	GbtMirror  *mirror;
	TimestampTz last_used;
	double		build_ms;
	uint64		hits;
} ServiceMirror;

/* A request taken from a slot for this round. */
typedef struct TakenRequest
{
	int			slotno;
	dsm_segment *seg;
	GbtRequest *req;
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
	GbtMirrorKey key;
	int64		n;
	int64		cap;
	GbtLogEntry *entries;
	uint64	   *pos;
} BuildCapture;

#define GBT_CAPTURE_MAX ((int64) gbt_shared->log.size * 4)

static ServiceMirror mirrors[GBT_MAX_MIRRORS];
static BuildCapture *captures;	/* one per slot */
static bool gpu_usable = false;
static int64 gpu_memory = 0;	/* bytes of the GPU's memory */
static int64 memory_limit = 0;	/* gpubtree.mirror_memory_limit, resolved */
static uint64 next_mirror_id = 1;

void
gbt_service_register(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 5;
	snprintf(worker.bgw_name, BGW_MAXLEN, "gpubtree service");
	snprintf(worker.bgw_type, BGW_MAXLEN, "gpubtree service");
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "gpubtree");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "gpubtree_service_main");
	RegisterBackgroundWorker(&worker);
}

/*
 * Resolve gpubtree.mirror_memory_limit: an explicit value, or by default a
 * share of the memory the mirrors live in, as found at start.  Publishes it
 * for gpubtree_status() and for backends, which refuse to export an index
 * whose mirror cannot fit (builder.c).
 */
static void
set_memory_limit(void)
{
	char		source[64];

	if (gpubtree_mirror_memory_limit >= 0)
	{
		memory_limit = (int64) gpubtree_mirror_memory_limit * 1024 * 1024;
		strlcpy(source, "gpubtree.mirror_memory_limit", sizeof(source));
	}
	else if (gpu_usable)
	{
		memory_limit = gpu_memory / 4 * 3;
		strlcpy(source, "auto: 3/4 of the GPU's memory", sizeof(source));
	}
	else
	{
		long		pages = sysconf(_SC_PHYS_PAGES);
		long		pagesize = sysconf(_SC_PAGESIZE);

		memory_limit = pages > 0 && pagesize > 0 ? (int64) pages * pagesize / 4 :
			(int64) 1024 * 1024 * 1024;
		strlcpy(source, "auto: 1/4 of the server's memory (CPU engine)", sizeof(source));
	}
	SpinLockAcquire(&gbt_shared->mutex);
	gbt_shared->memory_limit = memory_limit;
	strlcpy(gbt_shared->memory_limit_source, source, sizeof(gbt_shared->memory_limit_source));
	SpinLockRelease(&gbt_shared->mutex);
}

/* Publish the mirror table for gpubtree_status(). */
static void
publish_mirrors(void)
{
	int64		total = 0;
	int			i;

	SpinLockAcquire(&gbt_shared->mutex);
	for (i = 0; i < GBT_MAX_MIRRORS; i++)
	{
		GbtMirrorInfo *info = &gbt_shared->mirrors[i];
		ServiceMirror *sm = &mirrors[i];

		info->in_use = sm->in_use;
		if (!sm->in_use)
			continue;
		info->key = sm->key;
		info->generation = sm->generation;
		info->on_gpu = gbt_mirror_on_gpu(sm->mirror);
		info->entries = gbt_mirror_entries(sm->mirror);
		info->delta = gbt_mirror_delta(sm->mirror);
		info->bytes = gbt_mirror_bytes(sm->mirror);
		info->build_ms = sm->build_ms;
		info->hits = sm->hits;
		total += info->bytes;
	}
	gbt_shared->mirror_bytes = total;
	SpinLockRelease(&gbt_shared->mutex);
}

static void
drop_mirror(ServiceMirror *sm)
{
	gbt_mirror_free(sm->mirror);
	memset(sm, 0, sizeof(ServiceMirror));
}

static ServiceMirror *
find_mirror(const GbtMirrorKey *key)
{
	int			i;

	for (i = 0; i < GBT_MAX_MIRRORS; i++)
		if (mirrors[i].in_use && memcmp(&mirrors[i].key, key, sizeof(GbtMirrorKey)) == 0)
			return &mirrors[i];
	return NULL;
}

/*
 * Make room for a mirror of the given size: drop this index's older
 * mirrors (other storage), then the least recently used ones while the total
 * would exceed the memory limit.  Returns a free entry, or NULL when the
 * mirror cannot fit at all.
 */
static ServiceMirror *
make_room(const GbtMirrorKey *key, int64 bytes)
{
	int64		limit = memory_limit;
	int64		total = 0;
	int			i;

	if (bytes > limit)
		return NULL;

	for (i = 0; i < GBT_MAX_MIRRORS; i++)
	{
		ServiceMirror *sm = &mirrors[i];

		if (sm->in_use && sm->key.dbid == key->dbid &&
			sm->key.indexrelid == key->indexrelid)
			drop_mirror(sm);
		else if (sm->in_use)
			total += gbt_mirror_bytes(sm->mirror);
	}

	for (;;)
	{
		ServiceMirror *lru = NULL;
		ServiceMirror *free_entry = NULL;

		for (i = 0; i < GBT_MAX_MIRRORS; i++)
		{
			ServiceMirror *sm = &mirrors[i];

			if (!sm->in_use)
				free_entry = free_entry ? free_entry : sm;
			else if (lru == NULL || sm->last_used < lru->last_used)
				lru = sm;
		}
		if (free_entry != NULL && total + bytes <= limit)
			return free_entry;
		if (lru == NULL)
			return NULL;
		total -= gbt_mirror_bytes(lru->mirror);
		drop_mirror(lru);
	}
}

static void
reply(GbtRequest *req, GbtReplyStatus status, const char *message)
{
	req->status = status;
	if (message != NULL)
		strlcpy(req->message, message, GBT_ERRMSG_LEN);
}

/* Append log entry le, logged at position p, to e and pos[]. */
static void
add_logged(GbtEntries *e, uint64 *pos, const GbtLogEntry *le, uint64 p)
{
	int			c;

	e->keys[e->n] = le->ikey;
	e->tids[e->n] = le->tid;
	for (c = 0; c < e->ncols; c++)
		e->vals[c][e->n] = le->vals[c];
	e->nulls[e->n] = le->nulls;
	pos[e->n++] = p;
}

/* Forget the captured entries (keeping what the capture is for). */
static void
capture_free(BuildCapture *bc)
{
	if (bc->entries != NULL)
		pfree(bc->entries);
	if (bc->pos != NULL)
		pfree(bc->pos);
	bc->entries = NULL;
	bc->pos = NULL;
	bc->n = bc->cap = 0;
}

static void
capture_reset(BuildCapture *bc)
{
	capture_free(bc);
	memset(bc, 0, sizeof(BuildCapture));
}

static void
capture_add(BuildCapture *bc, const GbtLogEntry *le, uint64 p)
{
	if (bc->overflow)
		return;
	if (bc->n == GBT_CAPTURE_MAX)
	{
		capture_free(bc);
		bc->overflow = true;
		return;
	}
	if (bc->n == bc->cap)
	{
		bc->cap = Min(Max(1024, bc->cap * 2), GBT_CAPTURE_MAX);
		bc->entries = bc->entries == NULL ?
			MemoryContextAllocHuge(TopMemoryContext, sizeof(GbtLogEntry) * bc->cap) :
			repalloc_huge(bc->entries, sizeof(GbtLogEntry) * bc->cap);
		bc->pos = bc->pos == NULL ?
			MemoryContextAllocHuge(TopMemoryContext, sizeof(uint64) * bc->cap) :
			repalloc_huge(bc->pos, sizeof(uint64) * bc->cap);
	}
	bc->entries[bc->n] = *le;
	bc->pos[bc->n++] = p;
}

static void
handle_build(GbtRequest *req, int slotno)
{
	GbtEntries	entries;
	GbtSlot    *slot = &gbt_shared->slots[slotno];
	ServiceMirror *sm;
	GbtMirror  *m;
	char		err[GBT_ERRMSG_LEN];
	instr_time	start,
				duration;
	int64		estimate = gbt_mirror_estimate_bytes(req->nitems, req->columns.ncols,
													 gpu_usable);
	BuildCapture *bc;
	bool		registered;

	/* Exported before something the log could not carry: stale already. */
	if (req->generation != gbt_generation(req->key.dbid, req->key.indexrelid) ||
		req->service_pid != MyProcPid)
	{
		reply(req, GBT_REPLY_NO_MIRROR, "the index changed during the export");
		return;
	}

	sm = make_room(&req->key, estimate);
	if (sm == NULL)
	{
		snprintf(err, sizeof(err), "mirror needs %lld MB, more than gpubtree.mirror_memory_limit (%lld MB)",
				 (long long) (estimate >> 20), (long long) (memory_limit >> 20));
		reply(req, GBT_REPLY_ERROR, err);
		return;
	}

	INSTR_TIME_SET_CURRENT(start);
	gbt_entries_unflatten(&entries, req->columns.ncols, req->nitems, GBT_REQUEST_DATA(req));
	m = gbt_mirror_build(&req->columns, &entries, gpu_usable ? 0 : -1, err, sizeof(err));
	if (m == NULL)
	{
		reply(req, GBT_REPLY_ERROR, err);
		return;
	}

	/*
	 * What was logged since the export began: apply_log, which ran first in
	 * this round, captured it up to the log's current applied position.
	 */
	LWLockAcquire(gbt_shared->log.lock, LW_SHARED);
	registered = slot->building && slot->build_service_pid == MyProcPid &&
		slot->build_start == req->log_start;
	LWLockRelease(gbt_shared->log.lock);
	bc = &captures[slotno];
	if (!registered || !bc->active || bc->overflow || bc->start != req->log_start ||
		memcmp(&bc->key, &req->key, sizeof(GbtMirrorKey)) != 0)
	{
		gbt_mirror_free(m);
		reply(req, GBT_REPLY_NO_MIRROR, registered && bc->overflow ?
			  "too many changes during the export" : "the export is no longer registered");
		capture_reset(bc);
		return;
	}
	if (bc->n > 0)
	{
		GbtEntries	logged;
		uint64	   *logged_pos;
		int64		i;

		gbt_entries_init(&logged, req->columns.ncols, bc->n);
		logged_pos = palloc_extended(sizeof(uint64) * logged.cap, MCXT_ALLOC_HUGE);
		for (i = 0; i < bc->n; i++)
			add_logged(&logged, logged_pos, &bc->entries[i], bc->pos[i]);
		gbt_mirror_insert(m, &logged, logged_pos);
		gbt_entries_free(&logged);
		pfree(logged_pos);
	}
	capture_reset(bc);
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);

	sm->in_use = true;
	sm->key = req->key;
	sm->id = next_mirror_id++;
	sm->generation = req->generation;
	sm->db_generation = gbt_generation(req->key.dbid, InvalidOid);
	sm->mirror = m;
	sm->last_used = GetCurrentTimestamp();
	sm->build_ms = INSTR_TIME_GET_MILLISEC(duration);
	sm->hits = 0;
	req->device_ms = sm->build_ms;
	req->on_gpu = gbt_mirror_on_gpu(m);
	pg_atomic_fetch_add_u64(&gbt_shared->builds, 1);
	reply(req, GBT_REPLY_OK, NULL);
}

/* A mirror usable for a request that saw the given generation. */
static ServiceMirror *
current_mirror(const GbtMirrorKey *key, uint64 generation)
{
	ServiceMirror *sm = find_mirror(key);

	return sm != NULL && sm->generation >= generation ? sm : NULL;
}

/*
 * DUMP: the live entries among raw positions [offset, offset + nitems), in
 * entries.h's flat layout for nitems entries of GBT_MAX_COLS columns.
 */
static void
handle_dump(GbtRequest *req)
{
	ServiceMirror *sm = current_mirror(&req->key, req->generation);
	GbtEntries	out;

	if (sm == NULL)
	{
		reply(req, GBT_REPLY_NO_MIRROR, NULL);
		return;
	}
	Assert(MAXALIGN(sizeof(GbtRequest)) + gbt_entries_flat_size(GBT_MAX_COLS, req->nitems) <=
		   req->capacity);
	gbt_entries_unflatten(&out, GBT_MAX_COLS, req->nitems, GBT_REQUEST_DATA(req));
	out.n = 0;
	req->nresults = gbt_mirror_read(sm->mirror, req->offset, req->offset + req->nitems, &out);
	req->columns = *gbt_mirror_columns(sm->mirror);
	req->total = gbt_mirror_raw_size(sm->mirror);
	req->mirror_id = sm->id;
	reply(req, GBT_REPLY_OK, NULL);
}

/* AGG_PREPARE: which mirror, and up to where the log is in it. */
static void
handle_agg_prepare(GbtRequest *req)
{
	ServiceMirror *sm = current_mirror(&req->key, req->generation);

	if (sm == NULL)
	{
		reply(req, GBT_REPLY_NO_MIRROR, NULL);
		return;
	}
	req->mirror_id = sm->id;
	req->log_bound = gbt_shared->log.applied;	/* applied this round */
	req->columns = *gbt_mirror_columns(sm->mirror);
	reply(req, GBT_REPLY_OK, NULL);
}

/* AGG: see service.h. */
static void
handle_agg(GbtRequest *req)
{
	ServiceMirror *sm = current_mirror(&req->key, req->generation);
	uint64	   *lo = (uint64 *) GBT_REQUEST_DATA(req);
	uint64	   *hi = lo + req->nitems;
	uint8	   *visible = (uint8 *) (hi + req->nitems);
	GbtEntries	unsure;
	char		err[GBT_ERRMSG_LEN];
	instr_time	t0,
				t1;

	if (sm == NULL || sm->id != req->mirror_id)
	{
		reply(req, GBT_REPLY_NO_MIRROR, NULL);
		return;
	}
	gbt_entries_unflatten(&unsure, GBT_MAX_COLS, req->unsure_cap,
						  GBT_REQUEST_DATA(req) +
						  MAXALIGN(2 * sizeof(uint64) * req->nitems + (req->nvisible + 7) / 8));
	unsure.n = 0;
	INSTR_TIME_SET_CURRENT(t0);
	if (!gbt_mirror_aggregate(sm->mirror, lo, hi, req->nitems, visible, req->nvisible,
							  req->log_bound, &req->agg, &unsure, req->unsure_cap,
							  err, sizeof(err)))
	{
		reply(req, GBT_REPLY_ERROR, err);
		return;
	}
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	req->nresults = unsure.n;
	req->device_ms = INSTR_TIME_GET_MILLISEC(t1);
	req->on_gpu = gbt_mirror_on_gpu(sm->mirror);
	req->columns = *gbt_mirror_columns(sm->mirror);
	sm->hits++;
	sm->last_used = GetCurrentTimestamp();
	reply(req, GBT_REPLY_OK, NULL);
}

/*
 * REMOVE (VACUUM's sweep): take the dead TIDs out of the mirror the sweep
 * read, and move it to a new generation, which makes any export that began
 * before nbtree's pass ended unusable (it may hold dead entries).  A mirror
 * that is not the one swept, or that missed a generation meanwhile, is
 * dropped instead.
 */
static void
handle_remove(GbtRequest *req)
{
	ServiceMirror *sm = find_mirror(&req->key);
	const ItemPointerData *dead = (const ItemPointerData *) GBT_REQUEST_DATA(req);
	uint64		before = gbt_generation(req->key.dbid, req->key.indexrelid);
	uint64		after;

	if (sm != NULL && (sm->id != req->mirror_id || sm->generation != before))
	{
		drop_mirror(sm);
		sm = NULL;
	}
	if (sm != NULL)
		req->nresults = gbt_mirror_remove(sm->mirror, dead, req->nitems);
	after = gbt_invalidate_and_get(req->key.dbid, req->key.indexrelid);
	if (sm != NULL)
	{
		if (after == before + 1)
			sm->generation = after;
		else
			drop_mirror(sm);
	}
	reply(req, GBT_REPLY_OK, NULL);
}

/*
 * Are a SCAN request's ranges sorted and disjoint?  Overlapping ranges would
 * return their common entries more than once.
 */
static bool
scan_ranges_ok(const GbtRequest *req)
{
	const uint64 *lo = (const uint64 *) GBT_REQUEST_DATA(req);
	const uint64 *hi = lo + req->nitems;
	int64		r;

	for (r = 0; r < req->nitems; r++)
		if (lo[r] > hi[r] || (r > 0 && lo[r] <= hi[r - 1]))
			return false;
	return true;
}

/* Has the backend stopped waiting for this request? */
static bool
abandoned(const TakenRequest *t)
{
	return pg_atomic_read_u32(&gbt_shared->slots[t->slotno].state) == GBT_SLOT_ABANDONED;
}

/*
 * Answer every SCAN request in taken[] that asks mirror sm, with one batched
 * engine call over all their ranges.
 */
static void
handle_scans(ServiceMirror *sm, TakenRequest *taken, int ntaken)
{
	int64		nranges = 0;
	int64	   *nr = palloc(sizeof(int64) * ntaken);
	uint64	   *lo;
	uint64	   *hi;
	int64	   *start;
	int64	   *end;
	int64		off;
	int			i;
	char		err[GBT_ERRMSG_LEN];
	instr_time	t0,
				t1;
	bool		ok;

	/* A refused request takes no part in the batch (nr[i] = -1). */
	for (i = 0; i < ntaken; i++)
	{
		nr[i] = scan_ranges_ok(taken[i].req) ? taken[i].req->nitems : -1;
		if (nr[i] < 0)
			reply(taken[i].req, GBT_REPLY_ERROR, "scan ranges are not sorted and disjoint");
		else
			nranges += nr[i];
	}

	lo = palloc(sizeof(uint64) * Max(nranges, 1));
	hi = palloc(sizeof(uint64) * Max(nranges, 1));
	start = palloc(sizeof(int64) * Max(nranges, 1));
	end = palloc(sizeof(int64) * Max(nranges, 1));
	off = 0;
	for (i = 0; i < ntaken; i++)
	{
		const uint64 *rlo = (const uint64 *) GBT_REQUEST_DATA(taken[i].req);

		if (nr[i] < 0)
			continue;
		memcpy(lo + off, rlo, sizeof(uint64) * nr[i]);
		memcpy(hi + off, rlo + nr[i], sizeof(uint64) * nr[i]);
		off += nr[i];
	}

	INSTR_TIME_SET_CURRENT(t0);
	ok = gbt_mirror_ranges(sm->mirror, lo, hi, nranges, start, end,
						   err, sizeof(err));
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);

	off = 0;
	for (i = 0; i < ntaken; i++)
	{
		GbtRequest *req = taken[i].req;
		Size		used = MAXALIGN(sizeof(GbtRequest)) +
			MAXALIGN(2 * sizeof(uint64) * req->nitems);
		ItemPointerData *out = (ItemPointerData *) ((char *) req + used);
		int64		room = (req->capacity - used) / sizeof(ItemPointerData);
		int64		n = 0;
		int64		r;

		if (nr[i] < 0)
			continue;
		if (!ok)
			reply(req, GBT_REPLY_ERROR, err);
		else if (abandoned(&taken[i]))
			;					/* nobody will read it: skip the copying */
		else
		{
			for (r = off; r < off + nr[i]; r++)
				n += gbt_mirror_range_count(sm->mirror, lo[r], hi[r], start[r], end[r]);
			req->nresults = n;
			req->device_ms = INSTR_TIME_GET_MILLISEC(t1);
			req->on_gpu = gbt_mirror_on_gpu(sm->mirror);
			if (n > room)
				reply(req, GBT_REPLY_NO_ROOM, NULL);
			else
			{
				for (r = off; r < off + nr[i]; r++)
					out += gbt_mirror_range_tids(sm->mirror, lo[r], hi[r],
												 start[r], end[r], out);
				reply(req, GBT_REPLY_OK, NULL);
			}
		}
		off += nr[i];
	}
	sm->hits += ntaken;
	sm->last_used = GetCurrentTimestamp();

	pfree(nr);
	pfree(lo);
	pfree(hi);
	pfree(start);
	pfree(end);
}

/*
 * Apply the change log to the mirrors, and capture what registered exports
 * will need; then the log can be reused up to here.  Runs before any request
 * of a round is answered.
 */
static void
apply_log(void)
{
	GbtLog	   *log = &gbt_shared->log;
	uint64		from;
	uint64		to;
	int64		n;
	GbtLogEntry *copy;
	int			i;

	LWLockAcquire(log->lock, LW_SHARED);
	from = log->applied;
	to = log->head;
	n = (int64) (to - from);
	copy = palloc_extended(sizeof(GbtLogEntry) * Max(n, 1), MCXT_ALLOC_HUGE);
	for (i = 0; i < n; i++)
		copy[i] = log->entries[(from + i) % log->size];

	/*
	 * Exports registered now: read under the same lock, so that an export
	 * registered after the copy starts at or after its end.
	 */
	for (i = 0; i < gbt_shared->nslots; i++)
	{
		GbtSlot    *slot = &gbt_shared->slots[i];
		BuildCapture *bc = &captures[i];

		if (!slot->building || slot->build_service_pid != MyProcPid)
		{
			if (bc->active)
				capture_reset(bc);
			continue;
		}
		if (!bc->active || bc->start != slot->build_start ||
			memcmp(&bc->key, &slot->build_key, sizeof(GbtMirrorKey)) != 0)
		{
			capture_reset(bc);
			bc->active = true;
			bc->start = slot->build_start;
			bc->key = slot->build_key;
		}
	}
	LWLockRelease(log->lock);

	for (i = 0; i < gbt_shared->nslots && n > 0; i++)
	{
		BuildCapture *bc = &captures[i];
		int64		j;

		if (!bc->active)
			continue;
		for (j = 0; j < n; j++)
			if (from + j >= bc->start &&
				memcmp(&copy[j].key, &bc->key, sizeof(GbtMirrorKey)) == 0)
				capture_add(bc, &copy[j], from + j);
	}

	/* Each mirror takes its entries. */
	for (i = 0; i < GBT_MAX_MIRRORS && n > 0; i++)
	{
		ServiceMirror *sm = &mirrors[i];
		GbtEntries	e;
		uint64	   *pos;
		int64		j;

		if (!sm->in_use)
			continue;
		gbt_entries_init(&e, gbt_mirror_columns(sm->mirror)->ncols, 16);
		pos = palloc(sizeof(uint64) * e.cap);
		for (j = 0; j < n; j++)
		{
			if (memcmp(&copy[j].key, &sm->key, sizeof(GbtMirrorKey)) != 0)
				continue;
			if (e.n == e.cap)
			{
				gbt_entries_grow(&e, e.cap * 2);
				pos = repalloc(pos, sizeof(uint64) * e.cap);
			}
			add_logged(&e, pos, &copy[j], from + j);
		}
		if (e.n > 0)
			gbt_mirror_insert(sm->mirror, &e, pos);
		gbt_entries_free(&e);
		pfree(pos);
	}
	pfree(copy);

	LWLockAcquire(log->lock, LW_EXCLUSIVE);
	log->applied = to;
	LWLockRelease(log->lock);
}

/*
 * Drop mirrors whose index (or database) moved to a newer generation: they
 * can never be used again.  Fold large deltas into new trees.  Evict the
 * least recently used mirrors while all exceed the memory limit.
 */
static void
maintain_mirrors(void)
{
	int			i;

	for (i = 0; i < GBT_MAX_MIRRORS; i++)
	{
		ServiceMirror *sm = &mirrors[i];
		GbtMirror  *merged;
		char		err[GBT_ERRMSG_LEN];

		if (!sm->in_use)
			continue;
		if (sm->generation < gbt_generation(sm->key.dbid, sm->key.indexrelid) ||
			sm->db_generation != gbt_generation(sm->key.dbid, InvalidOid))
		{
			drop_mirror(sm);
			continue;
		}
		if (!gbt_mirror_wants_merge(sm->mirror))
			continue;
		merged = gbt_mirror_merge(sm->mirror, gpu_usable ? 0 : -1, err, sizeof(err));
		if (merged == NULL)
		{
			ereport(LOG,
					(errmsg("gpubtree service: dropping the mirror of index %u: %s",
							sm->key.indexrelid, err)));
			drop_mirror(sm);
			continue;
		}
		gbt_mirror_free(sm->mirror);
		sm->mirror = merged;
		sm->id = next_mirror_id++;
	}

	/* Deltas grow, and gpubtree.mirror_memory_limit may have been lowered. */
	for (;;)
	{
		int64		limit = memory_limit;
		int64		total = 0;
		ServiceMirror *lru = NULL;

		for (i = 0; i < GBT_MAX_MIRRORS; i++)
		{
			ServiceMirror *sm = &mirrors[i];

			if (!sm->in_use)
				continue;
			total += gbt_mirror_bytes(sm->mirror);
			if (lru == NULL || sm->last_used < lru->last_used)
				lru = sm;
		}
		if (total <= limit || lru == NULL)
			break;
		drop_mirror(lru);
	}
}

/* Hand the answer back, unless the backend gave up meanwhile. */
static void
finish(TakenRequest *t)
{
	GbtSlot    *slot = &gbt_shared->slots[t->slotno];
	uint32		expected = GBT_SLOT_RUNNING;

	if (t->seg != NULL)
		dsm_detach(t->seg);
	pg_write_barrier();
	if (pg_atomic_compare_exchange_u32(&slot->state, &expected, GBT_SLOT_DONE))
		SetLatch(&ProcGlobal->allProcs[slot->client_procno].procLatch);
	else
		pg_atomic_write_u32(&slot->state, GBT_SLOT_FREE);	/* abandoned */
	pg_atomic_fetch_add_u64(&gbt_shared->requests, 1);
}

static int
take_requests(TakenRequest *taken)
{
	int			ntaken = 0;
	int			i;

	for (i = 0; i < gbt_shared->nslots; i++)
	{
		GbtSlot    *slot = &gbt_shared->slots[i];
		uint32		expected = GBT_SLOT_SUBMITTED;

		if (pg_atomic_read_u32(&slot->state) != GBT_SLOT_SUBMITTED ||
			!pg_atomic_compare_exchange_u32(&slot->state, &expected, GBT_SLOT_RUNNING))
			continue;
		pg_read_barrier();
		taken[ntaken].slotno = i;
		taken[ntaken].seg = dsm_attach(slot->handle);
		taken[ntaken].req = taken[ntaken].seg ? dsm_segment_address(taken[ntaken].seg) : NULL;
		ntaken++;
	}
	return ntaken;
}

static void
serve_round(void)
{
	TakenRequest *taken = palloc(sizeof(TakenRequest) * gbt_shared->nslots);
	TakenRequest *group = palloc(sizeof(TakenRequest) * gbt_shared->nslots);
	bool	   *done = palloc0(sizeof(bool) * gbt_shared->nslots);
	int			ntaken = take_requests(taken);
	int			i;
	int			j;

	/* Taken first: every entry logged before a request is applied for it. */
	apply_log();
	maintain_mirrors();

	/* Builds first, so scans in the same round can use the new mirror. */
	for (i = 0; i < ntaken; i++)
	{
		GbtRequest *req = taken[i].req;

		if (req == NULL)
			done[i] = true;
		else if (req->kind == GBT_REQ_BUILD)
			handle_build(req, taken[i].slotno);
		else if (req->kind == GBT_REQ_DUMP)
			handle_dump(req);
		else if (req->kind == GBT_REQ_REMOVE)
			handle_remove(req);
		else if (req->kind == GBT_REQ_AGG_PREPARE)
			handle_agg_prepare(req);
		else if (req->kind == GBT_REQ_AGG)
			handle_agg(req);
		else
			continue;
		done[i] = true;
	}

	/* Scans: all requests of this round for one mirror go in one call. */
	for (i = 0; i < ntaken; i++)
	{
		GbtRequest *req = taken[i].req;
		ServiceMirror *sm;
		int			ngroup = 0;

		if (done[i])
			continue;
		sm = current_mirror(&req->key, req->generation);
		if (sm == NULL)
		{
			reply(req, GBT_REPLY_NO_MIRROR, NULL);
			done[i] = true;
			continue;
		}
		for (j = i; j < ntaken; j++)
		{
			if (!done[j] && taken[j].req->generation <= sm->generation &&
				memcmp(&taken[j].req->key, &sm->key, sizeof(GbtMirrorKey)) == 0)
			{
				group[ngroup++] = taken[j];
				done[j] = true;
			}
		}
		handle_scans(sm, group, ngroup);
	}

	/* Published before the answers, so that askers see the new state. */
	publish_mirrors();
	for (i = 0; i < ntaken; i++)
		finish(&taken[i]);
	pfree(taken);
	pfree(group);
	pfree(done);
}

static bool
any_submitted(void)
{
	int			i;

	for (i = 0; i < gbt_shared->nslots; i++)
		if (pg_atomic_read_u32(&gbt_shared->slots[i].state) == GBT_SLOT_SUBMITTED)
			return true;
	return false;
}

static void
service_exit(int code, Datum arg)
{
	int			i;

	SpinLockAcquire(&gbt_shared->mutex);
	gbt_shared->service_pid = 0;
	gbt_shared->gpu_usable = false;
	strlcpy(gbt_shared->status, "stopped", GBT_ERRMSG_LEN);
	for (i = 0; i < GBT_MAX_MIRRORS; i++)
		gbt_shared->mirrors[i].in_use = false;
	gbt_shared->mirror_bytes = 0;
	SpinLockRelease(&gbt_shared->mutex);

	/*
	 * Requests we held will never be answered: free their slots.  Their
	 * backends notice that we are gone and use nbtree.
	 */
	for (i = 0; i < gbt_shared->nslots; i++)
	{
		uint32		state = pg_atomic_read_u32(&gbt_shared->slots[i].state);

		if (state == GBT_SLOT_RUNNING || state == GBT_SLOT_ABANDONED)
			pg_atomic_write_u32(&gbt_shared->slots[i].state, GBT_SLOT_FREE);
	}
}

void
gpubtree_service_main(Datum arg)
{
	MemoryContext round_cxt;
	char		name[64] = "";
	char		why[GBT_ERRMSG_LEN] = "";

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	/* Decide the engine: the service's own gpubtree.device (postgresql.conf). */
	if (gpubtree_device_mode == GPUBTREE_DEVICE_AUTO ||
		gpubtree_device_mode == GPUBTREE_DEVICE_GPU)
		gpu_usable = gbt_engine_gpu_usable(name, sizeof(name), &gpu_memory,
										   why, sizeof(why));
	else
		snprintf(why, sizeof(why), "gpubtree.device = %s",
				 gpubtree_device_mode_name(gpubtree_device_mode));

	/*
	 * Entries logged before we started belong to a previous service's
	 * mirrors; exports registered with it are refused (service_pid).
	 */
	LWLockAcquire(gbt_shared->log.lock, LW_EXCLUSIVE);
	gbt_shared->log.applied = gbt_shared->log.head;
	SpinLockAcquire(&gbt_shared->mutex);
	gbt_shared->service_pid = MyProcPid;
	gbt_shared->service_procno = MyProc->pgprocno;
	gbt_shared->gpu_usable = gpu_usable;
	strlcpy(gbt_shared->device_name, name, sizeof(gbt_shared->device_name));
	if (gpu_usable)
		strlcpy(gbt_shared->status, "running on the GPU", GBT_ERRMSG_LEN);
	else
		snprintf(gbt_shared->status, GBT_ERRMSG_LEN,
				 "running on the CPU engine: %s", why);
	SpinLockRelease(&gbt_shared->mutex);
	LWLockRelease(gbt_shared->log.lock);
	set_memory_limit();
	before_shmem_exit(service_exit, (Datum) 0);

	captures = MemoryContextAllocZero(TopMemoryContext,
									  sizeof(BuildCapture) * gbt_shared->nslots);
	round_cxt = AllocSetContextCreate(TopMemoryContext, "gpubtree service round",
									  ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		MemoryContext oldcxt;

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			set_memory_limit();
		}
		if (!any_submitted())
		{
			/* Keep the log from filling while no one asks anything. */
			oldcxt = MemoryContextSwitchTo(round_cxt);
			apply_log();
			maintain_mirrors();
			publish_mirrors();
			MemoryContextSwitchTo(oldcxt);
			MemoryContextReset(round_cxt);
			continue;
		}

		/* Let requests from other sessions join this round. */
		if (gpubtree_batch_window > 0)
			pg_usleep(gpubtree_batch_window);

		oldcxt = MemoryContextSwitchTo(round_cxt);
		serve_round();
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(round_cxt);
	}
}
