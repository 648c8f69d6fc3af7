/*
 * shmem.c
 *	  The GPU service's shared memory, index generations and counters (see
 *	  shmem.h): what both sides use.
 */
#include "postgres.h"

#include <sys/statvfs.h>

#include "access/xact.h"
#include "common/hashfn.h"
#include "lib/stringinfo.h"
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

#include "settings.h"
#include "shmem.h"

GbtServiceShared *gbt_shared = NULL;

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

/* From the shmem_request_hook. */
void
gbt_service_shmem_request(void)
{
	RequestAddinShmemSpace(service_shmem_size());
	RequestAddinShmemSpace(log_shmem_size());
	RequestNamedLWLockTranche("gpubtree log", 1);
}

/* From the shmem_startup_hook, with AddinShmemInitLock held. */
void
gbt_service_shmem_startup(void)
{
	bool		found;

	gbt_shared = ShmemInitStruct("gpubtree service", service_shmem_size(), &found);
	if (!found)
	{
		int			i;

		memset(gbt_shared, 0, service_shmem_size());
		SpinLockInit(&gbt_shared->mutex);
		strlcpy(gbt_shared->status, "not started", GBT_ERRMSG_LEN);
		pg_atomic_init_u64(&gbt_shared->requests, 0);
		pg_atomic_init_u64(&gbt_shared->fallbacks, 0);
		pg_atomic_init_u64(&gbt_shared->building_since, 0);
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
}

/* What the service publishes about itself, read at once. */
void
gbt_service_facts(GbtServiceFacts *facts)
{
	SpinLockAcquire(&gbt_shared->mutex);
	facts->pid = gbt_shared->service_pid;
	facts->procno = gbt_shared->service_procno;
	facts->gpu_usable = gbt_shared->gpu_usable;
	facts->memory_limit = gbt_shared->memory_limit;
	facts->device_limit = gbt_shared->device_limit;
	SpinLockRelease(&gbt_shared->mutex);
}

/*
 * The service's pid (0: not running), read without the lock: every query
 * asks, and 64 sessions taking the spinlock that the service publishes its
 * mirrors under made them spin.  An aligned int is read whole.
 */
pid_t
gbt_service_pid(void)
{
	return *(volatile pid_t *) &gbt_shared->service_pid;
}

bool
gbt_service_running(void)
{
	return gbt_shared != NULL && gbt_service_pid() != 0;
}

/*
 * The service builds a mirror in its round: every request of the round, and
 * any sent meanwhile, waits for it.  The service says when it began one.
 */
void
gbt_service_building(bool building)
{
	pg_atomic_write_u64(&gbt_shared->building_since,
						building ? (uint64) GetCurrentTimestamp() : 0);
}

/*
 * Has the service been building a mirror for more than GBT_BUILD_BLOCK_MS?
 * Then a request other than a build is not sent, or stops waiting, and its
 * caller takes its fallback: no query waits long for a mirror build.
 */
bool
gbt_service_building_long(void)
{
	uint64		since = pg_atomic_read_u64(&gbt_shared->building_since);

	return since != 0 &&
		GetCurrentTimestamp() - (TimestampTz) since > (int64) GBT_BUILD_BLOCK_MS * 1000;
}

/*
 * Set the service's latch: work for it, or room in the log wanted.  Read
 * without the lock, as the pid: a latch set by mistake while a service
 * restarts only wakes a process for nothing.
 */
void
gbt_wake_service(void)
{
	int			procno = *(volatile int *) &gbt_shared->service_procno;

	SetLatch(&ProcGlobal->allProcs[procno].procLatch);
}

/*
 * The bytes one mirror may take: the largest device's share of
 * gpubtree.mirror_memory_limit (0 until the service has resolved it), and
 * whether mirrors live on a GPU.
 */
int64
gbt_service_memory_limit(bool *on_gpu)
{
	GbtServiceFacts facts;

	gbt_service_facts(&facts);
	*on_gpu = facts.gpu_usable;
	return facts.device_limit;
}

/* Entries of the index's published mirror; 0 when it has none. */
int64
gbt_published_entries(Oid dbid, Oid indexrelid)
{
	int64		entries = 0;
	int			i;

	SpinLockAcquire(&gbt_shared->mutex);
	for (i = 0; i < GBT_MAX_MIRRORS; i++)
	{
		GbtMirrorInfo *info = &gbt_shared->mirrors[i];

		if (info->in_use && info->key.dbid == dbid && info->key.indexrelid == indexrelid)
			entries = Max(entries, info->entries);
	}
	SpinLockRelease(&gbt_shared->mutex);
	return entries;
}

/* Whether the service publishes a current mirror of exactly this index. */
bool
gbt_published_current(const GbtMirrorKey *key)
{
	uint64		generation = 0;
	bool		found = false;
	int			i;

	SpinLockAcquire(&gbt_shared->mutex);
	for (i = 0; i < GBT_MAX_MIRRORS && !found; i++)
	{
		GbtMirrorInfo *info = &gbt_shared->mirrors[i];

		found = info->in_use && memcmp(&info->key, key, sizeof(GbtMirrorKey)) == 0;
		if (found)
			generation = info->generation;
	}
	SpinLockRelease(&gbt_shared->mutex);
	return found && generation >= gbt_generation(key->dbid, key->indexrelid);
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
	elog(DEBUG2, "gpubtree: the mirrors of index %u (database %u) are invalidated",
		 indexrelid, dbid);
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

void
gbt_count_fallback(void)
{
	if (gbt_shared != NULL)
		pg_atomic_fetch_add_u64(&gbt_shared->fallbacks, 1);
}

/* Milliseconds from a to b, or -1 when either was not reached. */
static double
phase_ms(TimestampTz a, TimestampTz b)
{
	if (a == 0 || b == 0)
		return -1;
	return (double) (b - a) / 1000.0;
}

/*
 * A build's phases as one line: the time from the ask to the mirror at full
 * speed, then each phase's share, in the order they run.  A phase not
 * reached yet ends the list.
 */
void
gbt_build_phases_text(const GbtBuildPhases *p, char *out, Size outlen)
{
	/* names[i]: from at[i] to at[i + 1] */
	static const char *const names[] = {
		"worker start", "index read", "heap read", "hand-over",
		"service busy", "build", "chunk sums"
	};
	const TimestampTz at[] = {
		p->asked, p->started, p->read, p->decided, p->sent, p->taken, p->built, p->summed
	};
	StringInfoData buf;
	int			i;

	StaticAssertStmt(lengthof(at) == lengthof(names) + 1, "a name per phase");
	initStringInfo(&buf);
	if (p->summed != 0)
		appendStringInfo(&buf, "at full speed %.0f ms after it was asked for",
						 phase_ms(p->asked, p->summed));
	else if (p->built != 0)
		appendStringInfo(&buf, "built %.0f ms after it was asked for, chunk sums being made",
						 phase_ms(p->asked, p->built));
	else
		appendStringInfoString(&buf, "being built");
	appendStringInfoString(&buf, " (ms:");
	for (i = 0; i < lengthof(names); i++)
	{
		double		ms = phase_ms(at[i], at[i + 1]);

		if (ms < 0)
			break;
		appendStringInfo(&buf, "%s %s %.0f", i > 0 ? "," : "", names[i], ms);
	}
	appendStringInfoChar(&buf, ')');
	strlcpy(out, buf.data, outlen);
	pfree(buf.data);
}
