/*
 * service.c
 *	  Shared memory of the GPU service, and the backend's side of its protocol
 *	  (see service.h).
 */
#include "postgres.h"

#include <sys/statvfs.h>

#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/dsm_impl.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "build.h"
#include "service.h"
#include "settings.h"

GbtServiceShared *gbt_shared = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static bool slot_cleanup_registered = false;

static void register_slot_cleanup(void);

/* The change log's ring, in shared memory of its own. */
static Size
log_shmem_size(void)
{
	return mul_size(gpubtree_change_log_size, sizeof(GbtLogEntry));
}

static Size
service_shmem_size(void)
{
	return add_size(offsetof(GbtServiceShared, slots),
					mul_size(MaxBackends + NUM_AUXILIARY_PROCS + max_worker_processes,
							 sizeof(GbtSlot)));
}

static void
service_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(service_shmem_size());
	RequestAddinShmemSpace(log_shmem_size());
	RequestAddinShmemSpace(gbt_builder_shmem_size());
	RequestNamedLWLockTranche("gpubtree log", 1);
}

static void
service_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	gbt_shared = ShmemInitStruct("gpubtree service", service_shmem_size(), &found);
	if (!found)
	{
		int			i;

		memset(gbt_shared, 0, service_shmem_size());
		SpinLockInit(&gbt_shared->mutex);
		strlcpy(gbt_shared->status, "not started", GBT_ERRMSG_LEN);
		pg_atomic_init_u64(&gbt_shared->requests, 0);
		pg_atomic_init_u64(&gbt_shared->fallbacks, 0);
		pg_atomic_init_u64(&gbt_shared->builds, 0);
		pg_atomic_init_u64(&gbt_shared->exports, 0);
		pg_atomic_init_u64(&gbt_shared->logged, 0);
		pg_atomic_init_u64(&gbt_shared->invalidations, 0);
		for (i = 0; i < GBT_GENERATIONS; i++)
		{
			pg_atomic_init_u64(&gbt_shared->generation[i], 1);
			pg_atomic_init_u64(&gbt_shared->vacuum_epoch[i], 0);
		}
		gbt_shared->log.lock = &(GetNamedLWLockTranche("gpubtree log"))->lock;
		gbt_shared->log.size = gpubtree_change_log_size;
		gbt_shared->log.entries = ShmemInitStruct("gpubtree change log",
												  log_shmem_size(), &found);
		gbt_shared->nslots = MaxBackends + NUM_AUXILIARY_PROCS + max_worker_processes;
		for (i = 0; i < gbt_shared->nslots; i++)
			pg_atomic_init_u32(&gbt_shared->slots[i].state, GBT_SLOT_FREE);
	}
	gbt_builder_shmem_init();
	LWLockRelease(AddinShmemInitLock);
}

/* Called from _PG_init while shared_preload_libraries are loaded. */
void
gbt_service_shmem_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = service_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = service_shmem_startup;
}

bool
gbt_service_running(void)
{
	pid_t		pid;

	if (gbt_shared == NULL)
		return false;
	SpinLockAcquire(&gbt_shared->mutex);
	pid = gbt_shared->service_pid;
	SpinLockRelease(&gbt_shared->mutex);
	return pid != 0;
}

pid_t
gbt_service_pid(void)
{
	pid_t		pid;

	SpinLockAcquire(&gbt_shared->mutex);
	pid = gbt_shared->service_pid;
	SpinLockRelease(&gbt_shared->mutex);
	return pid;
}

/* An index's slot in the generation and VACUUM epoch arrays. */
static int
bucket_of(Oid dbid, Oid indexrelid)
{
	return hash_combine(murmurhash32(dbid), murmurhash32(indexrelid)) % GBT_GENERATIONS;
}

static pg_atomic_uint64 *
generation_for(Oid dbid, Oid indexrelid)
{
	return &gbt_shared->generation[bucket_of(dbid, indexrelid)];
}

/*
 * The index's VACUUM epoch (shared by hash bucket: a collision only costs a
 * recheck).  Bumped under the log's lock, before a sweep reads the mirror.
 */
uint64
gbt_vacuum_epoch(Oid dbid, Oid indexrelid)
{
	return pg_atomic_read_u64(&gbt_shared->vacuum_epoch[bucket_of(dbid, indexrelid)]);
}

void
gbt_vacuum_epoch_bump(Oid dbid, Oid indexrelid)
{
	LWLockAcquire(gbt_shared->log.lock, LW_EXCLUSIVE);
	pg_atomic_fetch_add_u64(&gbt_shared->vacuum_epoch[bucket_of(dbid, indexrelid)], 1);
	LWLockRelease(gbt_shared->log.lock);
}

/* The index's generation: a mirror is usable only if valid at it. */
uint64
gbt_generation(Oid dbid, Oid indexrelid)
{
	if (gbt_shared == NULL)
		return 0;
	return pg_atomic_read_u64(generation_for(dbid, indexrelid));
}

/*
 * Make every mirror of the index, and every export under way, unusable.
 * Called after the change the change log cannot carry and before it can
 * become visible; the atomic add is a full barrier, so a snapshot that sees
 * the change reads the new generation.
 */
void
gbt_invalidate(Oid dbid, Oid indexrelid)
{
	(void) gbt_invalidate_and_get(dbid, indexrelid);
}

uint64
gbt_invalidate_and_get(Oid dbid, Oid indexrelid)
{
	if (gbt_shared == NULL)
		return 0;
	pg_atomic_fetch_add_u64(&gbt_shared->invalidations, 1);
	return pg_atomic_add_fetch_u64(generation_for(dbid, indexrelid), 1);
}

/* Indexes to invalidate when this transaction commits or prepares. */
typedef struct PendingInvalidation
{
	Oid			dbid;
	Oid			indexrelid;
} PendingInvalidation;

static List *pending_invalidations = NIL;	/* in TopTransactionContext */
static bool invalidation_callback_registered = false;

/*
 * At pre-commit, and again at commit for drops made after pre-commit (ON
 * COMMIT DROP): the list lives in TopTransactionContext, so it is forgotten
 * whenever the transaction ends.
 */
static void
invalidation_xact_callback(XactEvent event, void *arg)
{
	bool		ends = event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PREPARE || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_ABORT;
	bool		applies = event == XACT_EVENT_PRE_COMMIT || event == XACT_EVENT_PARALLEL_PRE_COMMIT ||
		event == XACT_EVENT_PRE_PREPARE || event == XACT_EVENT_COMMIT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PREPARE;
	ListCell   *lc;

	if (applies)
	{
		foreach(lc, pending_invalidations)
		{
			PendingInvalidation *p = lfirst(lc);

			gbt_invalidate(p->dbid, p->indexrelid);
		}
		pending_invalidations = NIL;
	}
	if (ends)
		pending_invalidations = NIL;
}

/*
 * gbt_invalidate() when this transaction commits (or prepares), for a change
 * that others can only see after it: a DROP.  Before that, the change's lock
 * keeps every other session from the index, and a rollback undoes it.
 */
void
gbt_invalidate_at_commit(Oid dbid, Oid indexrelid)
{
	MemoryContext old;
	PendingInvalidation *p;

	if (gbt_shared == NULL)
		return;
	if (!invalidation_callback_registered)
	{
		RegisterXactCallback(invalidation_xact_callback, NULL);
		invalidation_callback_registered = true;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	p = palloc(sizeof(PendingInvalidation));
	p->dbid = dbid;
	p->indexrelid = indexrelid;
	pending_invalidations = lappend(pending_invalidations, p);
	MemoryContextSwitchTo(old);
}

/*
 * Does the service have a mirror of the index, or is an export of it
 * registered?  Only then are its entries logged.  Called with the log's
 * lock held: an export registers under it, and its mirror is published
 * before the export unregisters, so a writer that finds neither wrote its
 * entries into the index before any later export reads the index.
 */
static bool
log_wanted(const GbtMirrorKey *key, int service_pid)
{
	bool		wanted = false;
	int			i;

	for (i = 0; i < gbt_shared->nslots && !wanted; i++)
	{
		GbtSlot    *slot = &gbt_shared->slots[i];

		wanted = slot->building && slot->build_service_pid == service_pid &&
			memcmp(&slot->build_key, key, sizeof(GbtMirrorKey)) == 0;
	}
	SpinLockAcquire(&gbt_shared->mutex);
	for (i = 0; i < GBT_MAX_MIRRORS && !wanted; i++)
		wanted = gbt_shared->mirrors[i].in_use &&
			memcmp(&gbt_shared->mirrors[i].key, key, sizeof(GbtMirrorKey)) == 0;
	SpinLockRelease(&gbt_shared->mutex);
	return wanted;
}

/*
 * Append those of n entries that some mirror or registered export wants to
 * the change log, if epoch_ok accepts each of their indexes (checked under
 * the lock that VACUUM epochs are bumped under).  GBT_LOG_FULL when they do
 * not fit (the caller then invalidates the indexes instead).  With no
 * service running there are no mirrors, and nothing to do: a service
 * started later builds its mirrors from exports that begin after this call.
 */
GbtLogWrite
gbt_log_write(const GbtLogEntry *entries, int n, GbtEpochCheck epoch_ok)
{
	GbtLog	   *log = &gbt_shared->log;
	uint64		head;
	uint64		pending;
	int			service_pid;
	bool	   *wanted;
	int			nwanted = 0;
	int			i;
	bool		recheck = false;

	if (n == 0)
		return GBT_LOG_WRITTEN;

	wanted = palloc0(sizeof(bool) * n);
	LWLockAcquire(log->lock, LW_EXCLUSIVE);
	/* Read under the lock, as gbt_register_build does. */
	service_pid = gbt_service_pid();
	for (i = 0; i < n && service_pid != 0; i++)
	{
		/* A batch holds runs of one index: decide once per run. */
		if (i > 0 && memcmp(&entries[i].key, &entries[i - 1].key, sizeof(GbtMirrorKey)) == 0)
			wanted[i] = wanted[i - 1];
		else
		{
			wanted[i] = log_wanted(&entries[i].key, service_pid);
			if (wanted[i] && !epoch_ok(&entries[i].key))
				recheck = true;
		}
		nwanted += wanted[i];
	}
	if (recheck || log->head + nwanted - log->applied > log->size)
	{
		LWLockRelease(log->lock);
		pfree(wanted);
		return recheck ? GBT_LOG_RECHECK : GBT_LOG_FULL;
	}
	head = log->head;
	for (i = 0; i < n; i++)
		if (wanted[i])
			log->entries[head++ % log->size] = entries[i];
	log->head = head;
	pending = log->head - log->applied;
	LWLockRelease(log->lock);
	pfree(wanted);

	pg_atomic_fetch_add_u64(&gbt_shared->logged, nwanted);
	/* Wake the service before the log fills; scans wake it anyway. */
	if (pending > log->size / 4)
	{
		int			procno;

		SpinLockAcquire(&gbt_shared->mutex);
		procno = gbt_shared->service_procno;
		SpinLockRelease(&gbt_shared->mutex);
		SetLatch(&ProcGlobal->allProcs[procno].procLatch);
	}
	return GBT_LOG_WRITTEN;
}

/*
 * Before exporting an index: register the log position the export starts
 * at, so that the service keeps every entry logged from then on until the
 * mirror arrives.  False when no service is running, or when another
 * backend is already exporting the same index (one export is enough; the
 * others' scans use nbtree meanwhile).
 */
bool
gbt_register_build(const GbtMirrorKey *key, uint64 *start, int *service_pid)
{
	GbtSlot    *slot = &gbt_shared->slots[MyProc->pgprocno];
	GbtLog	   *log = &gbt_shared->log;
	int			i;

	register_slot_cleanup();
	LWLockAcquire(log->lock, LW_EXCLUSIVE);
	*service_pid = gbt_service_pid();
	for (i = 0; i < gbt_shared->nslots && *service_pid != 0; i++)
	{
		GbtSlot    *other = &gbt_shared->slots[i];

		if (other->building && other->build_service_pid == *service_pid &&
			memcmp(&other->build_key, key, sizeof(GbtMirrorKey)) == 0)
			*service_pid = 0;
	}
	*start = log->head;
	slot->building = *service_pid != 0;
	slot->build_key = *key;
	slot->build_service_pid = *service_pid;
	slot->build_start = *start;
	LWLockRelease(log->lock);
	return *service_pid != 0;
}

void
gbt_unregister_build(void)
{
	GbtSlot    *slot = &gbt_shared->slots[MyProc->pgprocno];

	if (!slot->building)
		return;
	LWLockAcquire(gbt_shared->log.lock, LW_EXCLUSIVE);
	slot->building = false;
	LWLockRelease(gbt_shared->log.lock);
}

void
gbt_count_fallback(void)
{
	if (gbt_shared != NULL)
		pg_atomic_fetch_add_u64(&gbt_shared->fallbacks, 1);
}

/*
 * Create a request segment with room for datasize bytes of request data and
 * resultsize bytes of answer.  The segment belongs to the current resource
 * owner, so an error anywhere detaches it.  NULL when there is no room for
 * it: the caller then does without the service.
 */
GbtRequest *
gbt_request_create(dsm_segment **seg, Size datasize, Size resultsize)
{
	Size		size = add_size(add_size(MAXALIGN(sizeof(GbtRequest)),
										 MAXALIGN(datasize)), resultsize);
	GbtRequest *req;

	/*
	 * POSIX segments live in /dev/shm, which containers often keep small;
	 * running out there is an ERROR in dsm_create(), so look first, and let
	 * the caller use nbtree instead.
	 */
	if (dynamic_shared_memory_type == DSM_IMPL_POSIX)
	{
		struct statvfs st;

		if (statvfs("/dev/shm", &st) == 0 &&
			(uint64) st.f_bavail * st.f_frsize < (uint64) size + 64 * 1024 * 1024)
		{
			*seg = NULL;
			return NULL;
		}
	}
	*seg = dsm_create(size, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (*seg == NULL)
		return NULL;
	req = dsm_segment_address(*seg);
	memset(req, 0, sizeof(GbtRequest));
	req->capacity = size;
	return req;
}

static void slot_cleanup(int code, Datum arg);

static void
register_slot_cleanup(void)
{
	if (!slot_cleanup_registered)
	{
		before_shmem_exit(slot_cleanup, (Datum) 0);
		slot_cleanup_registered = true;
	}
}

static GbtSlot *
my_slot(void)
{
	return &gbt_shared->slots[MyProc->pgprocno];
}

/*
 * Withdraw our request: the service either never took it (FREE again), or
 * will find it ABANDONED and free the slot itself.
 */
static void
abandon_slot(void)
{
	GbtSlot    *slot = my_slot();
	uint32		expected = GBT_SLOT_SUBMITTED;

	if (pg_atomic_compare_exchange_u32(&slot->state, &expected, GBT_SLOT_FREE))
		return;
	expected = GBT_SLOT_RUNNING;
	if (pg_atomic_compare_exchange_u32(&slot->state, &expected, GBT_SLOT_ABANDONED))
		return;
	expected = GBT_SLOT_DONE;
	(void) pg_atomic_compare_exchange_u32(&slot->state, &expected, GBT_SLOT_FREE);
}

static void
slot_cleanup(int code, Datum arg)
{
	if (gbt_shared != NULL && MyProc != NULL)
	{
		abandon_slot();
		gbt_unregister_build();
	}
}

/*
 * Send the request in seg and wait for the answer, at most
 * gpubtree.service_timeout milliseconds.  Returns true when the service
 * answered (the reply is in the request); false when it is not running,
 * busy with our previous, abandoned request, or did not answer in time.
 * Query cancel and statement_timeout interrupt the wait as usual.
 */
bool
gbt_request_send(dsm_segment *seg)
{
	GbtSlot    *slot;
	TimestampTz deadline;
	int			service_procno;
	bool		answered = false;

	if (!gbt_service_running())
		return false;

	register_slot_cleanup();
	slot = my_slot();
	if (pg_atomic_read_u32(&slot->state) != GBT_SLOT_FREE)
		return false;			/* the service still holds an old request */

	slot->handle = dsm_segment_handle(seg);
	slot->client_procno = MyProc->pgprocno;
	pg_write_barrier();
	pg_atomic_write_u32(&slot->state, GBT_SLOT_SUBMITTED);

	SpinLockAcquire(&gbt_shared->mutex);
	service_procno = gbt_shared->service_procno;
	SpinLockRelease(&gbt_shared->mutex);
	SetLatch(&ProcGlobal->allProcs[service_procno].procLatch);

	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
										   gpubtree_service_timeout);
	PG_TRY();
	{
		for (;;)
		{
			long		remaining;

			if (pg_atomic_read_u32(&slot->state) == GBT_SLOT_DONE)
			{
				pg_read_barrier();
				answered = true;
				break;
			}
			remaining = TimestampDifferenceMilliseconds(GetCurrentTimestamp(),
														deadline);
			if (remaining <= 0 || !gbt_service_running())
				break;
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 Min(remaining, 100L), PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_CATCH();
	{
		abandon_slot();
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (answered)
		pg_atomic_write_u32(&slot->state, GBT_SLOT_FREE);
	else
		abandon_slot();
	return answered;
}
