/*
 * build.c
 *	  Mirror builds in background workers, and mirrors refused for their size.
 *
 * A scan or aggregate that finds no current mirror of its index never builds
 * one itself: it asks for a build here and lets nbtree (or the plan below)
 * answer, at nbtree's speed.  The build runs in a background worker of its
 * own, connected to the index's database, which exports the index to the
 * service (gbt_build_mirror); the queries after it use the mirror.  One job
 * per index, so many sessions asking at once start one build; at most
 * GBT_MAX_RUNNING_BUILDS run at a time, leaving worker slots to parallel
 * queries.  gpubtree.build_wait lets a session wait for the build it asked
 * for (tests and scripts do); by default nothing waits.
 *
 * Before any worker starts, the mirror's size is estimated from the index's
 * (gbt_mirror_estimate_bytes): a mirror that cannot fit under the service's
 * memory limit is refused, logged once, and remembered until the index or
 * the limit changes enough, so an index is never exported for a mirror that
 * would be thrown away.  A build that fails is not retried at once: the wait
 * doubles with each failure in a row, up to a minute.
 *
 * A worker is connected to its database, and PostgreSQL refuses to drop,
 * rename, move or copy a database anyone is connected to, asking only
 * autovacuum workers to leave (CountOtherDBBackends()).  Ours leave as
 * those do: before such a command (gbt_builders_before_utility(), from the
 * ProcessUtility hook) they are asked to exit and waited for a moment, and
 * their builds are forgotten, to be asked for again by a later query.
 */
#include "postgres.h"

#include <signal.h>

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/genam.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "nodes/parsenodes.h"
#include "backend.h"
#include "build.h"
#include "client.h"
#include "export.h"
#include "keytypes.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "shmem.h"
#include "postmaster/bgworker.h"
#include "storage/bufmgr.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/acl.h"
#include "utils/backend_status.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "pg_compat.h"


#define GBT_MAX_RUNNING_BUILDS 2

/* A worker still waiting for its lock after this long: do not wait for it. */
#define GBT_LOCK_WAIT_MS 100

/* How long a command that needs a database to itself waits for ours to go. */
#define GBT_LEAVE_WAIT_MS 5000

typedef struct GbtBuilderShared
{
	slock_t		mutex;
	GbtBuildJob jobs[GBT_MAX_BUILD_JOBS];
	int			failures[GBT_MAX_BUILD_JOBS];	/* failed builds in a row */
} GbtBuilderShared;

static GbtBuilderShared *builder = NULL;

/* From the shmem_request_hook. */
void
gbt_builder_shmem_request(void)
{
	RequestAddinShmemSpace(sizeof(GbtBuilderShared));
}

/* From the shmem_startup_hook, with AddinShmemInitLock held. */
void
gbt_builder_shmem_startup(void)
{
	bool		found;

	builder = ShmemInitStruct("gpubtree builds", sizeof(GbtBuilderShared), &found);
	if (!found)
	{
		memset(builder, 0, sizeof(GbtBuilderShared));
		SpinLockInit(&builder->mutex);
	}
}

const char *
gbt_job_state_name(GbtJobState state)
{
	switch (state)
	{
		case GBT_JOB_FREE:
			return "none";
		case GBT_JOB_STARTING:
			return "build starting";
		case GBT_JOB_LOCKING:
			return "build waiting for a lock";
		case GBT_JOB_EXPORTING:
			return "building";
		case GBT_JOB_FAILED:
			return "build failed";
		case GBT_JOB_REFUSED:
			return "refused: too large";
	}
	return "unknown";
}

static bool
job_running(const GbtBuildJob *job)
{
	return job->state == GBT_JOB_STARTING || job->state == GBT_JOB_LOCKING ||
		job->state == GBT_JOB_EXPORTING;
}

/*
 * The job of the index, under the mutex; a job of the index's former storage
 * is forgotten.  NULL when there is none.
 */
static GbtBuildJob *
find_job(const GbtMirrorKey *key)
{
	int			i;

	for (i = 0; i < GBT_MAX_BUILD_JOBS; i++)
	{
		GbtBuildJob *job = &builder->jobs[i];

		if (job->state == GBT_JOB_FREE || job->key.dbid != key->dbid ||
			job->key.indexrelid != key->indexrelid)
			continue;
		if (job->key.relfilenode != key->relfilenode && !job_running(job))
		{
			memset(job, 0, sizeof(GbtBuildJob));
			builder->failures[i] = 0;
			continue;
		}
		return job;
	}
	return NULL;
}

/* A slot for a new job, under the mutex: a free one, or the oldest record. */
static GbtBuildJob *
new_job(const GbtMirrorKey *key)
{
	GbtBuildJob *oldest = NULL;
	int			i;

	for (i = 0; i < GBT_MAX_BUILD_JOBS; i++)
	{
		GbtBuildJob *job = &builder->jobs[i];

		if (job->state == GBT_JOB_FREE)
		{
			oldest = job;
			break;
		}
		if (!job_running(job) && (oldest == NULL || job->since < oldest->since))
			oldest = job;
	}
	if (oldest == NULL)
		return NULL;
	memset(oldest, 0, sizeof(GbtBuildJob));
	builder->failures[oldest - builder->jobs] = 0;
	oldest->key = *key;
	oldest->since = GetCurrentTimestamp();
	return oldest;
}

/* Has the worker of a running job gone without saying so? */
static bool
job_lost(const GbtBuildJob *job, TimestampTz now)
{
	if (job->worker_pid != 0)
		return kill(job->worker_pid, 0) != 0 && errno == ESRCH;
	/* a worker that never started (no slot after all) */
	return TimestampDifferenceExceeds(job->since, now, 30 * 1000);
}

/*
 * The entries the index holds now, estimated as the planner does: its
 * counted density scaled to its current size.
 */
static int64
estimate_entries(Relation index)
{
	BlockNumber pages = RelationGetNumberOfBlocks(index);
	double		tuples = index->rd_rel->reltuples;
	BlockNumber relpages = index->rd_rel->relpages;

	if (tuples >= 0 && relpages > 0)
		return (int64) (tuples / relpages * pages);
	/* never counted: as dense as leaf pages of such tuples can be */
	return (int64) pages * (BLCKSZ / (sizeof(IndexTupleData) + sizeof(ItemIdData) +
									  sizeof(int64) * RelationGetNumberOfAttributes(index)));
}

static void
refusal_note(char *why, Size whylen, int64 need, int64 limit)
{
	snprintf(why, whylen,
			 "no mirror: it would need about %lld MB, over gpubtree.mirror_memory_limit (%lld MB)",
			 (long long) (need >> 20), (long long) (limit >> 20));
}

/*
 * Would the index's mirror exceed the memory limit?  Then it is refused: the
 * refusal is recorded (and logged) once, and stands until the limit changes
 * or the index grows or shrinks by a tenth.  Every mirror is refused, without
 * a record, by a service that has no engine to build it on (gpubtree.engine
 * = gpu without a GPU; the service logs that once).  why says so.
 */
bool
gbt_mirror_refused(Relation index, char *why, Size whylen)
{
	GbtMirrorKey key;
	GbtColumns	cols;
	GbtBuildJob *job;
	bool		gpu;
	int64		limit = gbt_service_memory_limit(&gpu);
	int64		need;
	bool		logit = false;
	const char *engine = gbt_service_engine();

	if (engine != NULL && strcmp(engine, "none") == 0)
	{
		strlcpy(why, "no mirror: gpubtree.engine = gpu and the GPU service has no usable GPU", whylen);
		return true;
	}
	if (limit <= 0)
		return false;			/* the service has not resolved it yet */
	gbt_fill_key(&key, index);
	gbt_index_columns(index, &cols);
	need = gbt_mirror_estimate_bytes(estimate_entries(index), cols.ncols, gpu);

	SpinLockAcquire(&builder->mutex);
	job = find_job(&key);
	if (job != NULL && job->state == GBT_JOB_REFUSED &&
		(job->limit_bytes != limit || Abs(need - job->need_bytes) > job->need_bytes / 10))
	{
		/* Things changed: decide again. */
		memset(job, 0, sizeof(GbtBuildJob));
		job = NULL;
	}
	if (job != NULL && job->state == GBT_JOB_REFUSED)
	{
		need = job->need_bytes;
		SpinLockRelease(&builder->mutex);
		refusal_note(why, whylen, need, limit);
		return true;
	}
	if (need > limit && (job == NULL || !job_running(job)))
	{
		if (job == NULL)
			job = new_job(&key);
		if (job != NULL)
		{
			job->state = GBT_JOB_REFUSED;
			job->since = GetCurrentTimestamp();
			job->need_bytes = need;
			job->limit_bytes = limit;
			logit = true;
		}
	}
	SpinLockRelease(&builder->mutex);
	if (need <= limit)
		return false;
	refusal_note(why, whylen, need, limit);
	if (logit)
		ereport(LOG,
				(errmsg("gpubtree: index \"%s\" gets no mirror: it would need about %lld MB, more than gpubtree.mirror_memory_limit allows (%lld MB)",
						RelationGetRelationName(index), (long long) (need >> 20),
						(long long) (limit >> 20)),
				 errdetail("Its scans and aggregates are answered by nbtree. The index is not read for a mirror again until it or the limit changes."),
				 errhint("Raise gpubtree.mirror_memory_limit, or mirror smaller indexes (fewer INCLUDE columns, or partitions).")));
	return true;
}

/*
 * Can another process build this index's mirror?  Not a temporary one (its
 * pages are in this backend's memory), nor one this transaction created or
 * gave new storage, which no one else sees yet.
 */
static bool
visible_outside(Relation index, char *why, Size whylen)
{
	if (index->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
	{
		strlcpy(why, "no mirror: temporary indexes are not mirrored", whylen);
		return false;
	}
	if (index->rd_createSubid != InvalidSubTransactionId ||
		GBT_REL_FIRST_FILE_SUBID(index) != InvalidSubTransactionId)
	{
		strlcpy(why, "no current mirror: the index is new in this transaction", whylen);
		return false;
	}
	return true;
}

/*
 * Does this transaction hold a lock that a worker building the mirror would
 * wait for (DDL on the table in this transaction)?  Then we must not wait
 * for the build: it cannot begin before we end.
 */
static bool
build_blocked_by_us(Relation index)
{
	return CheckRelationLockedByMe(index, AccessExclusiveLock, false) ||
		CheckRelationOidLockedByMe(index->rd_index->indrelid, AccessExclusiveLock, false);
}

static bool
start_worker(int jobno, const GbtMirrorKey *key)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(worker.bgw_name, BGW_MAXLEN, "gpubtree build of index %u", key->indexrelid);
	snprintf(worker.bgw_type, BGW_MAXLEN, "gpubtree build");
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "gpubtree");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "gpubtree_builder_main");
	worker.bgw_main_arg = Int32GetDatum(jobno);
	StaticAssertStmt(sizeof(GbtMirrorKey) <= BGW_EXTRALEN, "key fits in bgw_extra");
	memcpy(worker.bgw_extra, key, sizeof(GbtMirrorKey));
	return RegisterDynamicBackgroundWorker(&worker, NULL);
}

static void
progress_note(char *why, Size whylen, const GbtBuildJob *job)
{
	if (job->state == GBT_JOB_EXPORTING)
		snprintf(why, whylen, "no current mirror: being built in the background (%lld of about %lld entries)",
				 (long long) job->done, (long long) job->total);
	else
		snprintf(why, whylen, "no current mirror: %s in the background",
				 gbt_job_state_name(job->state));
}

/*
 * Whether the service holds a current mirror of the index, as it publishes
 * its mirrors; if not, one is wanted (gbt_mirror_wanted(): built in the
 * background, waited for under gpubtree.build_wait).  For a planner whose
 * path has no fallback as fast as PostgreSQL's own plans: it may change
 * before the plan runs, which then falls back all the same.
 */
bool
gbt_mirror_ready(Oid indexoid)
{
	Relation	index;
	GbtMirrorKey key;
	bool		ready;
	char		why[GBT_ERRMSG_LEN];

	if (gbt_shared == NULL || !gbt_service_running())
		return false;
	index = index_open(indexoid, AccessShareLock);
	gbt_fill_key(&key, index);
	ready = gbt_published_current(&key);
	if (!ready)
		ready = gbt_mirror_wanted(index, gbt_mirror_key_type(index), why, sizeof(why));
	index_close(index, AccessShareLock);
	return ready;
}

/*
 * A query found no current mirror of index: have one built in the
 * background unless it is refused, being built, or failed a moment ago.
 * True when the mirror is there now (only after waiting for it, under
 * gpubtree.build_wait); otherwise why says what is happening.
 */
bool
gbt_mirror_wanted(Relation index, Oid keytype, char *why, Size whylen)
{
	GbtMirrorKey key;
	GbtBuildJob *job;
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz deadline;
	int			jobno = -1;
	int			running = 0;
	int			i;

	strlcpy(why, "no current mirror", whylen);
	if (!gpubtree_build_on_scan || builder == NULL)
		return false;
	if (!visible_outside(index, why, whylen))
		return false;
	if (gbt_mirror_refused(index, why, whylen))
		return false;

	gbt_fill_key(&key, index);
	SpinLockAcquire(&builder->mutex);
	job = find_job(&key);
	if (job != NULL && job_running(job) && job_lost(job, now))
	{
		job->state = GBT_JOB_FAILED;
		job->since = now;
		strlcpy(job->message, "the build worker is gone", GBT_ERRMSG_LEN);
	}
	if (job != NULL && job->state == GBT_JOB_FAILED)
	{
		int			failures = builder->failures[job - builder->jobs];
		int			backoff_ms = Min(1000 << Min(failures - 1, 6), 60000);

		if (!TimestampDifferenceExceeds(job->since, now, backoff_ms))
		{
			snprintf(why, whylen, "no current mirror: its last build failed (%s)", job->message);
			SpinLockRelease(&builder->mutex);
			return false;
		}
	}
	if (job == NULL || !job_running(job))
	{
		for (i = 0; i < GBT_MAX_BUILD_JOBS; i++)
			running += job_running(&builder->jobs[i]);
		if (running >= GBT_MAX_RUNNING_BUILDS)
		{
			SpinLockRelease(&builder->mutex);
			strlcpy(why, "no current mirror: other mirrors are being built", whylen);
			return false;
		}
		if (job == NULL)
			job = new_job(&key);
		if (job == NULL)
		{
			SpinLockRelease(&builder->mutex);
			return false;
		}
		job->key = key;
		job->state = GBT_JOB_STARTING;
		job->since = now;
		job->worker_pid = 0;
		job->done = 0;
		jobno = job - builder->jobs;
	}
	SpinLockRelease(&builder->mutex);

	if (jobno >= 0 && !start_worker(jobno, &key))
	{
		SpinLockAcquire(&builder->mutex);
		memset(&builder->jobs[jobno], 0, sizeof(GbtBuildJob));
		SpinLockRelease(&builder->mutex);
		strlcpy(why, "no current mirror: no background worker slot to build it (max_worker_processes)",
				whylen);
		return false;
	}

	/* Wait, if asked to, while the build is under way. */
	deadline = TimestampTzPlusMilliseconds(now, build_blocked_by_us(index) ? 0 :
										   gpubtree_build_wait);
	for (;;)
	{
		GbtBuildJob copy;

		SpinLockAcquire(&builder->mutex);
		job = find_job(&key);
		if (job != NULL)
			copy = *job;
		SpinLockRelease(&builder->mutex);
		if (job == NULL)
			return true;		/* built (or overtaken: the retry tells) */
		now = GetCurrentTimestamp();
		if (copy.state == GBT_JOB_FAILED)
		{
			snprintf(why, whylen, "no current mirror: its build failed (%s)", copy.message);
			return false;
		}
		if (copy.state == GBT_JOB_REFUSED)
		{
			refusal_note(why, whylen, copy.need_bytes, copy.limit_bytes);
			return false;
		}
		progress_note(why, whylen, &copy);
		if (now >= deadline ||
			(copy.state == GBT_JOB_LOCKING &&
			 TimestampDifferenceExceeds(copy.since, now, GBT_LOCK_WAIT_MS)))
			return false;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * What is under way or known of the mirror of index indexrelid of this
 * database, for EXPLAIN: false when nothing is.
 */
bool
gbt_builder_note(Oid indexrelid, char *note, Size notelen)
{
	GbtBuildJob copy;
	bool		found = false;
	int			i;

	if (builder == NULL)
		return false;
	SpinLockAcquire(&builder->mutex);
	for (i = 0; i < GBT_MAX_BUILD_JOBS && !found; i++)
	{
		found = builder->jobs[i].state != GBT_JOB_FREE &&
			builder->jobs[i].key.dbid == MyDatabaseId &&
			builder->jobs[i].key.indexrelid == indexrelid;
		if (found)
			copy = builder->jobs[i];
	}
	SpinLockRelease(&builder->mutex);
	if (!found)
		return false;
	if (copy.state == GBT_JOB_REFUSED)
		refusal_note(note, notelen, copy.need_bytes, copy.limit_bytes);
	else if (copy.state == GBT_JOB_FAILED)
		snprintf(note, notelen, "the last mirror build failed (%s)", copy.message);
	else
		progress_note(note, notelen, &copy);
	return true;
}

/* A copy of every job, for gpubtree_mirrors(); returns how many. */
int
gbt_builder_jobs(GbtBuildJob *out)
{
	int			n = 0;
	int			i;

	if (builder == NULL)
		return 0;
	SpinLockAcquire(&builder->mutex);
	for (i = 0; i < GBT_MAX_BUILD_JOBS; i++)
		if (builder->jobs[i].state != GBT_JOB_FREE)
			out[n++] = builder->jobs[i];
	SpinLockRelease(&builder->mutex);
	return n;
}

/*
 * The worker's side.
 */

static int	my_jobno = -1;
static GbtMirrorKey my_key;

/* Update our job, if it is still ours. */
static GbtBuildJob *
my_job(void)
{
	GbtBuildJob *job = &builder->jobs[my_jobno];

	if (memcmp(&job->key, &my_key, sizeof(GbtMirrorKey)) != 0 ||
		job->worker_pid != MyProcPid)
		return NULL;
	return job;
}

static void
set_state(GbtJobState state)
{
	GbtBuildJob *job;

	SpinLockAcquire(&builder->mutex);
	if ((job = my_job()) != NULL)
	{
		job->state = state;
		job->since = GetCurrentTimestamp();
	}
	SpinLockRelease(&builder->mutex);
}

static void
report_progress(int64 done, void *arg)
{
	GbtBuildJob *job;

	SpinLockAcquire(&builder->mutex);
	if ((job = my_job()) != NULL)
		job->done = done;
	SpinLockRelease(&builder->mutex);
}

/* The job ends: free when built, else failed or refused, with why. */
static void
finish_job(bool built, bool refused, int64 need, const char *why)
{
	GbtBuildJob *job;
	bool		gpu;
	int64		limit = gbt_service_memory_limit(&gpu);

	SpinLockAcquire(&builder->mutex);
	if ((job = my_job()) != NULL)
	{
		if (built)
		{
			memset(job, 0, sizeof(GbtBuildJob));
			builder->failures[my_jobno] = 0;
		}
		else
		{
			job->state = refused ? GBT_JOB_REFUSED : GBT_JOB_FAILED;
			job->since = GetCurrentTimestamp();
			job->worker_pid = 0;
			job->need_bytes = need;
			job->limit_bytes = limit;
			strlcpy(job->message, why, GBT_ERRMSG_LEN);
			builder->failures[my_jobno]++;
		}
	}
	SpinLockRelease(&builder->mutex);
}

/* On an error or a signal: say the build failed. */
static void
builder_exit(int code, Datum arg)
{
	GbtBuildJob *job;

	SpinLockAcquire(&builder->mutex);
	if ((job = my_job()) != NULL && job->leaving)
	{
		/* Asked to leave: not a failure, and built again when asked for. */
		memset(job, 0, sizeof(GbtBuildJob));
		builder->failures[my_jobno] = 0;
	}
	else if (job != NULL && job_running(job))
	{
		job->state = GBT_JOB_FAILED;
		job->since = GetCurrentTimestamp();
		job->worker_pid = 0;
		strlcpy(job->message, "the build worker stopped on an error (see the server log)",
				GBT_ERRMSG_LEN);
		builder->failures[my_jobno]++;
	}
	SpinLockRelease(&builder->mutex);
}

/* Open the index of my_key and its table, and build its mirror. */
static void
build(void)
{
	Oid			heapoid = IndexGetRelation(my_key.indexrelid, true);
	Relation	heap = NULL;
	Relation	index = NULL;
	Oid			keytype;
	GbtColumns	cols;
	GbtBuildJob *job;
	bool		gpu;
	int64		total;
	int64		need;
	char		why[GBT_ERRMSG_LEN];
	bool		built;

	if (OidIsValid(heapoid))
	{
		set_state(GBT_JOB_LOCKING);
		heap = try_table_open(heapoid, AccessShareLock);
		if (heap != NULL)
			index = try_relation_open(my_key.indexrelid, AccessShareLock);
	}
	if (index == NULL || index->rd_rel->relkind != RELKIND_INDEX ||
		index->rd_index->indrelid != heapoid || !index->rd_index->indisvalid ||
		GBT_REL_FILENUMBER(index) != my_key.relfilenode ||
		!gpubtree_is_gpubtree_index(index) ||
		!OidIsValid(keytype = gbt_mirror_key_type(index)))
	{
		if (index != NULL)
			relation_close(index, AccessShareLock);
		if (heap != NULL)
			table_close(heap, AccessShareLock);
		finish_job(false, false, 0, "the index changed or is gone");
		return;
	}

	gbt_index_columns(index, &cols);
	total = estimate_entries(index);
	(void) gbt_service_memory_limit(&gpu);
	SpinLockAcquire(&builder->mutex);
	if ((job = my_job()) != NULL)
	{
		job->state = GBT_JOB_EXPORTING;
		job->since = GetCurrentTimestamp();
		job->total = total;
		job->need_bytes = gbt_mirror_estimate_bytes(total, cols.ncols, gpu);
	}
	SpinLockRelease(&builder->mutex);

	built = gbt_build_mirror(index, keytype, report_progress, NULL, why, sizeof(why));
	if (!built)
	{
		/* Refused after all (the estimate was low): remember it. */
		int64		limit = gbt_service_memory_limit(&gpu);

		SpinLockAcquire(&builder->mutex);
		job = my_job();
		total = job != NULL ? Max(job->done, total) : total;
		SpinLockRelease(&builder->mutex);
		need = gbt_mirror_estimate_bytes(total, cols.ncols, gpu);
		finish_job(false, need > limit, need, why);
	}
	else
		finish_job(true, false, 0, NULL);
	index_close(index, AccessShareLock);
	table_close(heap, AccessShareLock);
}

void
gpubtree_builder_main(Datum arg)
{
	GbtBuildJob *job;

	my_jobno = DatumGetInt32(arg);
	memcpy(&my_key, MyBgworkerEntry->bgw_extra, sizeof(GbtMirrorKey));
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	/* Claim the job, unless it was given up meanwhile. */
	if (builder == NULL || my_jobno < 0 || my_jobno >= GBT_MAX_BUILD_JOBS)
		proc_exit(0);
	SpinLockAcquire(&builder->mutex);
	job = &builder->jobs[my_jobno];
	if (job->state != GBT_JOB_STARTING || job->worker_pid != 0 ||
		memcmp(&job->key, &my_key, sizeof(GbtMirrorKey)) != 0)
	{
		SpinLockRelease(&builder->mutex);
		proc_exit(0);
	}
	job->worker_pid = MyProcPid;
	SpinLockRelease(&builder->mutex);
	before_shmem_exit(builder_exit, (Datum) 0);

	BackgroundWorkerInitializeConnectionByOid(my_key.dbid, InvalidOid, 0);
	if (gpubtree_debug_build_delay > 0)
	{
		TimestampTz until = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
														gpubtree_debug_build_delay);
		long		ms;

		/* Waking for signals: asked to leave, the worker must go at once. */
		while ((ms = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), until)) > 0)
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 ms, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
	}
	pgstat_report_appname("gpubtree build");
	pgstat_report_activity(STATE_RUNNING, "building a gpubtree mirror");
	StartTransactionCommand();
	build();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
	proc_exit(0);
}

/*
 * Ask the build workers connected to database dbid to exit, call off the
 * builds not yet connected, and wait until they are gone or
 * GBT_LEAVE_WAIT_MS passed (PostgreSQL's own check then waits a while
 * longer, and says who is still there).
 */
static void
builders_leave(Oid dbid)
{
	pid_t		pids[GBT_MAX_BUILD_JOBS];
	int			n = 0;
	int			i;
	TimestampTz deadline;

	SpinLockAcquire(&builder->mutex);
	for (i = 0; i < GBT_MAX_BUILD_JOBS; i++)
	{
		GbtBuildJob *job = &builder->jobs[i];

		if (!job_running(job) || job->key.dbid != dbid)
			continue;
		if (job->worker_pid == 0)
		{
			/* Not started: its worker will find no job and not connect. */
			memset(job, 0, sizeof(GbtBuildJob));
			builder->failures[i] = 0;
			continue;
		}
		job->leaving = true;
		pids[n++] = job->worker_pid;
	}
	SpinLockRelease(&builder->mutex);
	if (n == 0)
		return;

	for (i = 0; i < n; i++)
	{
		PGPROC	   *proc = BackendPidGetProc(pids[i]);

		/* (a worker still starting has no PGPROC in the array yet) */
		if (proc == NULL || GBT_PROC_IS_BGWORKER(proc))
			(void) kill(pids[i], SIGTERM);
	}

	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), GBT_LEAVE_WAIT_MS);
	for (;;)
	{
		int			left = 0;

		for (i = 0; i < n; i++)
		{
			PGPROC	   *proc = BackendPidGetProc(pids[i]);

			/* Gone when its process is, or at least out of the database. */
			if (kill(pids[i], 0) == 0 &&
				(proc == NULL || proc->databaseId == dbid))
				left++;
		}
		if (left == 0 || GetCurrentTimestamp() >= deadline)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* As createdb() decides it: may the user create databases? */
static bool
can_create_database(void)
{
	HeapTuple	tuple;
	bool		result = false;

	if (superuser())
		return true;
	tuple = SearchSysCache1(AUTHOID, ObjectIdGetDatum(GetUserId()));
	if (HeapTupleIsValid(tuple))
	{
		result = ((Form_pg_authid) GETSTRUCT(tuple))->rolcreatedb;
		ReleaseSysCache(tuple);
	}
	return result;
}

/* Is database dbid marked as a template? */
static bool
database_is_template(Oid dbid)
{
	HeapTuple	tuple = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(dbid));
	bool		result = false;

	if (HeapTupleIsValid(tuple))
	{
		result = ((Form_pg_database) GETSTRUCT(tuple))->datistemplate;
		ReleaseSysCache(tuple);
	}
	return result;
}

/*
 * Before a utility command: if it is one that needs a database without
 * other connections (DROP DATABASE, CREATE DATABASE from it as template,
 * ALTER DATABASE RENAME or SET TABLESPACE), our build workers leave it.
 * Only for a user whom PostgreSQL will let run it, so that no one else can
 * call builds off.
 */
void
gbt_builders_before_utility(Node *stmt)
{
	const char *dbname = NULL;
	bool		as_template = false;
	Oid			dbid;
	ListCell   *lc;

	if (builder == NULL || stmt == NULL)
		return;
	switch (nodeTag(stmt))
	{
		case T_DropdbStmt:
			dbname = ((DropdbStmt *) stmt)->dbname;
			break;
		case T_RenameStmt:
			if (((RenameStmt *) stmt)->renameType == OBJECT_DATABASE)
				dbname = ((RenameStmt *) stmt)->subname;
			break;
		case T_AlterDatabaseStmt:
			foreach(lc, ((AlterDatabaseStmt *) stmt)->options)
				if (strcmp(((DefElem *) lfirst(lc))->defname, "tablespace") == 0)
					dbname = ((AlterDatabaseStmt *) stmt)->dbname;
			break;
		case T_CreatedbStmt:
			as_template = true;
			dbname = "template1";	/* createdb()'s default */
			foreach(lc, ((CreatedbStmt *) stmt)->options)
			{
				DefElem    *opt = (DefElem *) lfirst(lc);

				if (strcmp(opt->defname, "template") == 0 && opt->arg != NULL)
					dbname = defGetString(opt);
			}
			break;
		default:
			break;
	}
	if (dbname == NULL || !OidIsValid(dbid = get_database_oid(dbname, true)))
		return;
	if (as_template ?
		!can_create_database() ||
		!(database_is_template(dbid) || object_ownercheck(DatabaseRelationId, dbid, GetUserId())) :
		dbid == MyDatabaseId || !object_ownercheck(DatabaseRelationId, dbid, GetUserId()))
		return;
	builders_leave(dbid);
}

/*
 * After CREATE INDEX (gpubtree.build_after_create): give the service the
 * new index's mirror now rather than at the first scan.  Not during REINDEX
 * (and so CLUSTER, VACUUM FULL, table rewrites), where PostgreSQL forbids
 * scanning the index being rebuilt; there the first scan builds it.  A
 * failure only means the same.
 */
void
gbt_mirror_after_build(Relation index)
{
	Oid			keytype;
	char		why[GBT_ERRMSG_LEN];

	if (!gpubtree_build_after_create || gpubtree_device_mode == GPUBTREE_DEVICE_OFF ||
		gbt_shared == NULL || RecoveryInProgress() || !gbt_service_running() ||
		!index->rd_index->indisvalid ||
		ReindexIsProcessingIndex(RelationGetRelid(index)) ||
		!OidIsValid(keytype = gbt_mirror_key_type(index)) ||
		gbt_mirror_refused(index, why, sizeof(why)))
		return;
	(void) gbt_build_mirror(index, keytype, NULL, NULL, why, sizeof(why));
}
