/*
 * build.c
 *	  Asking for mirror builds: by a query or a planner that finds no current
 *	  mirror, and in the background after CREATE INDEX (build_create.c).
 *
 * A scan or aggregate that finds no current mirror of its index never builds
 * one itself: it asks for a build here and lets nbtree (or the plan below)
 * answer, at nbtree's speed.  The build runs in a background worker of its
 * own (build_worker.c), connected to the index's database, which exports the
 * index to the service (gbt_build_mirror); the queries after it use the
 * mirror.  One job per index (build_jobs.c), so many sessions asking at once
 * start one build; at most GBT_MAX_RUNNING_BUILDS run at a time, leaving
 * worker slots to parallel queries, and the others queue in the job table
 * (started by the build that ends: gbt_start_queued_build()).
 * gpubtree.build_wait lets a session wait for the build it asked for (tests
 * and scripts do); by default nothing waits.  A mirror too large is refused before any worker starts
 * (gbt_mirror_refused()).  A build that fails is not retried at once: the
 * wait doubles with each failure in a row, up to a minute.
 */
#include "postgres.h"

#include <signal.h>

#include "access/genam.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/spin.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "backend.h"
#include "build.h"
#include "build_jobs.h"
#include "client.h"
#include "export.h"
#include "keytypes.h"
#include "shmem.h"
#include "pg_compat.h"

#define GBT_MAX_RUNNING_BUILDS 2

/* A worker still waiting for its lock after this long: do not wait for it. */
#define GBT_LOCK_WAIT_MS 100

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
		gbt_relation_oid_locked_by_me(index->rd_index->indrelid, AccessExclusiveLock, false);
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

/* Jobs with a worker (asked for or running), under the mutex. */
static int
running_builds(void)
{
	int			running = 0;
	int			i;

	for (i = 0; i < GBT_MAX_BUILD_JOBS; i++)
		running += gbt_job_running(&gbt_builds->jobs[i]);
	return running;
}

/* Make job key's, about to get a worker; under the mutex.  Its number. */
static int
claim_job(GbtBuildJob *job, const GbtMirrorKey *key, TimestampTz now)
{
	if (job->state != GBT_JOB_QUEUED)
		job->asked = now;		/* (a queued one was asked for when queued) */
	job->key = *key;
	job->state = GBT_JOB_STARTING;
	job->since = now;
	job->worker_pid = 0;
	job->done = 0;
	return job - gbt_builds->jobs;
}

/* Queue job for key's mirror, under the mutex: a build that ends starts it. */
static void
queue_job(GbtBuildJob *job, const GbtMirrorKey *key, TimestampTz now)
{
	if (job->state == GBT_JOB_QUEUED)
		return;					/* keeps its place */
	job->asked = now;
	job->key = *key;
	job->state = GBT_JOB_QUEUED;
	job->since = now;
	job->worker_pid = 0;
}

/* Start the worker of a claimed job; without a slot, the job is forgotten. */
static bool
launch(int jobno, const GbtMirrorKey *key)
{
	if (start_worker(jobno, key))
		return true;
	SpinLockAcquire(&gbt_builds->mutex);
	if (gbt_builds->jobs[jobno].state == GBT_JOB_STARTING &&
		gbt_builds->jobs[jobno].worker_pid == 0)
		memset(&gbt_builds->jobs[jobno], 0, sizeof(GbtBuildJob));
	SpinLockRelease(&gbt_builds->mutex);
	return false;
}

/*
 * A build of key's mirror, not waited for: started now when fewer than
 * GBT_MAX_RUNNING_BUILDS run, else queued, to be started when one of them
 * ends (gbt_start_queued_build()); nothing when it is under way or queued
 * already, or the job table has no room (then the first query asks for
 * it).  Takes no catalog access and raises no error: it runs at commit.
 */
void
gbt_build_in_background(const GbtMirrorKey *key)
{
	GbtBuildJob *job;
	TimestampTz now = GetCurrentTimestamp();
	int			jobno = -1;

	if (gbt_builds == NULL)
		return;
	SpinLockAcquire(&gbt_builds->mutex);
	job = gbt_find_job(key);
	if (job != NULL && (gbt_job_running(job) || job->state == GBT_JOB_QUEUED))
		job = NULL;
	else
	{
		if (job == NULL)
			job = gbt_new_job(key);
		if (job != NULL && running_builds() < GBT_MAX_RUNNING_BUILDS)
			jobno = claim_job(job, key, now);
		else if (job != NULL)
			queue_job(job, key, now);
	}
	SpinLockRelease(&gbt_builds->mutex);
	if (jobno >= 0)
		(void) launch(jobno, key);
}

/*
 * A build ended: start the job queued longest, if there is room (from the
 * build workers as they exit).
 */
void
gbt_start_queued_build(void)
{
	GbtBuildJob *next = NULL;
	GbtMirrorKey key;
	int			jobno = -1;
	int			i;

	if (gbt_builds == NULL)
		return;
	SpinLockAcquire(&gbt_builds->mutex);
	for (i = 0; i < GBT_MAX_BUILD_JOBS; i++)
	{
		GbtBuildJob *job = &gbt_builds->jobs[i];

		if (job->state == GBT_JOB_QUEUED && (next == NULL || job->since < next->since))
			next = job;
	}
	if (next != NULL && running_builds() < GBT_MAX_RUNNING_BUILDS)
	{
		key = next->key;
		jobno = claim_job(next, &key, GetCurrentTimestamp());
	}
	SpinLockRelease(&gbt_builds->mutex);
	if (jobno >= 0)
		(void) launch(jobno, &key);
}

/*
 * Whether the service holds a current mirror of the index, as it publishes
 * its mirrors; if not, one is wanted (gbt_mirror_wanted(): built in the
 * background, waited for under gpubtree.build_wait) and why says what is
 * happening.  For a planner whose path has no fallback as fast as
 * PostgreSQL's own plans: it may change before the plan runs, which then
 * falls back all the same.
 */
bool
gbt_mirror_ready(Oid indexoid, char *why, Size whylen)
{
	Relation	index;
	GbtMirrorKey key;
	bool		ready;

	if (gbt_shared == NULL || !gbt_service_running())
	{
		strlcpy(why, "the GPU service is not running", whylen);
		return false;
	}
	index = index_open(indexoid, AccessShareLock);
	gbt_fill_key(&key, index);
	ready = gbt_published_current(&key);
	if (!ready)
		ready = gbt_mirror_wanted(index, gbt_mirror_key_type(index), why, whylen);
	index_close(index, AccessShareLock);
	return ready;
}

/*
 * A query found no current mirror of index: have one built in the
 * background (or queued) unless it is refused, being built, or failed a
 * moment ago.
 * True when the mirror is there now (its build ended since the caller
 * looked, or after waiting for it under gpubtree.build_wait); otherwise
 * why says what is happening.
 */
bool
gbt_mirror_wanted(Relation index, Oid keytype, char *why, Size whylen)
{
	GbtMirrorKey key;
	GbtBuildJob *job;
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz deadline;
	int			jobno = -1;
	bool		idle;

	strlcpy(why, "no current mirror", whylen);
	if (!gpubtree_build_on_scan || gbt_builds == NULL)
		return false;
	if (!visible_outside(index, why, whylen))
		return false;
	if (gbt_mirror_refused(index, why, whylen))
		return false;

	gbt_fill_key(&key, index);
	if (gpubtree_debug_build_ask_delay > 0)
		gbt_debug_wait(&gpubtree_debug_build_ask_delay);

	/*
	 * A build that ended since the caller looked: the service published its
	 * mirror before the worker freed the job, so with the job seen gone the
	 * mirror is seen too, and no second build starts.
	 */
	SpinLockAcquire(&gbt_builds->mutex);
	job = gbt_find_job(&key);
	idle = job == NULL;
	SpinLockRelease(&gbt_builds->mutex);
	if (idle && gbt_published_current(&key))
		return true;

	SpinLockAcquire(&gbt_builds->mutex);
	job = gbt_find_job(&key);
	if (job != NULL && gbt_job_running(job) && job_lost(job, now))
	{
		job->state = GBT_JOB_FAILED;
		job->since = now;
		strlcpy(job->message, "the build worker is gone", GBT_ERRMSG_LEN);
	}
	if (job != NULL && job->state == GBT_JOB_FAILED)
	{
		int			failures = gbt_builds->failures[job - gbt_builds->jobs];
		int			backoff_ms = Min(1000 << Min(failures - 1, 6), 60000);

		if (!TimestampDifferenceExceeds(job->since, now, backoff_ms))
		{
			snprintf(why, whylen, "no current mirror: its last build failed (%s)", job->message);
			SpinLockRelease(&gbt_builds->mutex);
			return false;
		}
	}
	if (job == NULL || !gbt_job_running(job))
	{
		if (job == NULL)
			job = gbt_new_job(&key);
		if (job == NULL)
		{
			SpinLockRelease(&gbt_builds->mutex);
			strlcpy(why, "no current mirror: the table of build jobs is full", whylen);
			return false;
		}
		/* Queued behind the running builds, or started (a queued one too). */
		if (running_builds() >= GBT_MAX_RUNNING_BUILDS)
			queue_job(job, &key, now);
		else
			jobno = claim_job(job, &key, now);
	}
	SpinLockRelease(&gbt_builds->mutex);

	if (jobno >= 0 && !launch(jobno, &key))
	{
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

		SpinLockAcquire(&gbt_builds->mutex);
		job = gbt_find_job(&key);
		if (job != NULL)
			copy = *job;
		SpinLockRelease(&gbt_builds->mutex);
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
			gbt_refusal_note(why, whylen, copy.need_bytes, copy.limit_bytes);
			return false;
		}
		gbt_progress_note(why, whylen, &copy);
		/* (a build that ended without starting the queue's next: start it) */
		if (copy.state == GBT_JOB_QUEUED && now < deadline)
			gbt_start_queued_build();
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
