/*
 * build_worker.c
 *	  The background worker that builds an index's mirror, and build workers
 *	  leaving a database that a command needs to itself.
 *
 * A worker claims the job it was started for (build.c), connects to the
 * index's database, exports the index to the service (gbt_build_mirror) and
 * records in its job how far it got, and how it ended; as it exits, it
 * starts the build queued longest (past GBT_MAX_RUNNING_BUILDS, builds
 * queue).
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

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/acl.h"
#include "utils/backend_status.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "backend.h"
#include "build.h"
#include "build_jobs.h"
#include "export.h"
#include "keytypes.h"
#include "shmem.h"
#include "pg_compat.h"

/* How long a command that needs a database to itself waits for ours to go. */
#define GBT_LEAVE_WAIT_MS 5000

/* The job this worker was started for. */
static int	my_jobno = -1;
static GbtMirrorKey my_key;
static TimestampTz my_asked;	/* when the build was asked for */

/* Update our job, if it is still ours. */
static GbtBuildJob *
my_job(void)
{
	GbtBuildJob *job = &gbt_builds->jobs[my_jobno];

	if (memcmp(&job->key, &my_key, sizeof(GbtMirrorKey)) != 0 ||
		job->worker_pid != MyProcPid)
		return NULL;
	return job;
}

static void
set_state(GbtJobState state)
{
	GbtBuildJob *job;

	SpinLockAcquire(&gbt_builds->mutex);
	if ((job = my_job()) != NULL)
	{
		job->state = state;
		job->since = GetCurrentTimestamp();
	}
	SpinLockRelease(&gbt_builds->mutex);
}

static void
report_progress(int64 done, void *arg)
{
	GbtBuildJob *job;
	static bool held = false;

	/* The index read, the export registered: held here for tests. */
	if (gpubtree_debug_export_delay > 0 && !held)
	{
		held = true;
		ereport(LOG,
				(errmsg("gpubtree: export of index %u held before its hand-over (gpubtree.debug_export_delay)",
						my_key.indexrelid)));
		gbt_debug_wait(&gpubtree_debug_export_delay);
	}
	SpinLockAcquire(&gbt_builds->mutex);
	if ((job = my_job()) != NULL)
		job->done = done;
	SpinLockRelease(&gbt_builds->mutex);
}

/*
 * The job ends: free when built (or with nothing to build), else failed or
 * refused, with why.
 */
static void
finish_job(bool built, bool refused, int64 need, const char *why)
{
	GbtBuildJob *job;
	bool		gpu;
	int64		limit = gbt_service_memory_limit(&gpu);

	SpinLockAcquire(&gbt_builds->mutex);
	if ((job = my_job()) != NULL)
	{
		if (built)
		{
			memset(job, 0, sizeof(GbtBuildJob));
			gbt_builds->failures[my_jobno] = 0;
		}
		else
		{
			job->state = refused ? GBT_JOB_REFUSED : GBT_JOB_FAILED;
			job->since = GetCurrentTimestamp();
			job->worker_pid = 0;
			job->need_bytes = need;
			job->limit_bytes = limit;
			strlcpy(job->message, why, GBT_ERRMSG_LEN);
			gbt_builds->failures[my_jobno]++;
		}
	}
	SpinLockRelease(&gbt_builds->mutex);
}

/* At exit: on an error or a signal, say the build failed. */
static void
builder_exit(int code, Datum arg)
{
	GbtBuildJob *job;

	SpinLockAcquire(&gbt_builds->mutex);
	if ((job = my_job()) != NULL && job->leaving)
	{
		/* Asked to leave: not a failure, and built again when asked for. */
		memset(job, 0, sizeof(GbtBuildJob));
		gbt_builds->failures[my_jobno] = 0;
	}
	else if (job != NULL && gbt_job_running(job))
	{
		job->state = GBT_JOB_FAILED;
		job->since = GetCurrentTimestamp();
		job->worker_pid = 0;
		strlcpy(job->message, "the build worker stopped on an error (see the server log)",
				GBT_ERRMSG_LEN);
		gbt_builds->failures[my_jobno]++;
	}
	SpinLockRelease(&gbt_builds->mutex);

	/* Our place is free: the build queued longest may have it. */
	gbt_start_queued_build();
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
	int64		limit;
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
		/* Dropped, rebuilt or not valid since: nothing to build, no failure. */
		elog(DEBUG1, "gpubtree: no mirror build of index %u: it changed or is gone",
			 my_key.indexrelid);
		finish_job(true, false, 0, NULL);
		return;
	}

	gbt_index_columns(index, &cols);
	total = gbt_estimate_entries(index);
	limit = gbt_service_memory_limit(&gpu);
	need = gbt_mirror_estimate_bytes(total, cols.ncols, gpu);
	if (limit > 0 && need > limit)
	{
		/* A build after CREATE INDEX is the first to look at its size. */
		gbt_refusal_note(why, sizeof(why), need, limit);
		gbt_refusal_log(index, need, limit);
		finish_job(false, true, need, why);
		index_close(index, AccessShareLock);
		table_close(heap, AccessShareLock);
		return;
	}
	SpinLockAcquire(&gbt_builds->mutex);
	if ((job = my_job()) != NULL)
	{
		job->state = GBT_JOB_EXPORTING;
		job->since = GetCurrentTimestamp();
		job->total = total;
		job->need_bytes = need;
	}
	SpinLockRelease(&gbt_builds->mutex);

	built = gbt_build_mirror(index, keytype, report_progress, NULL, my_asked,
							 why, sizeof(why));
	if (!built)
	{
		/* Refused after all (the estimate was low): remember it. */
		limit = gbt_service_memory_limit(&gpu);
		SpinLockAcquire(&gbt_builds->mutex);
		job = my_job();
		total = job != NULL ? Max(job->done, total) : total;
		SpinLockRelease(&gbt_builds->mutex);
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
	pqsignal(SIGHUP, SignalHandlerForConfigReload);	/* gbt_debug_wait() */
	BackgroundWorkerUnblockSignals();

	/* Claim the job, unless it was given up meanwhile. */
	if (gbt_builds == NULL || my_jobno < 0 || my_jobno >= GBT_MAX_BUILD_JOBS)
		proc_exit(0);
	SpinLockAcquire(&gbt_builds->mutex);
	job = &gbt_builds->jobs[my_jobno];
	if (job->state != GBT_JOB_STARTING || job->worker_pid != 0 ||
		memcmp(&job->key, &my_key, sizeof(GbtMirrorKey)) != 0)
	{
		SpinLockRelease(&gbt_builds->mutex);
		proc_exit(0);
	}
	job->worker_pid = MyProcPid;
	my_asked = job->asked;
	SpinLockRelease(&gbt_builds->mutex);
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

	SpinLockAcquire(&gbt_builds->mutex);
	for (i = 0; i < GBT_MAX_BUILD_JOBS; i++)
	{
		GbtBuildJob *job = &gbt_builds->jobs[i];

		if (job->state == GBT_JOB_QUEUED && job->key.dbid == dbid)
		{
			memset(job, 0, sizeof(GbtBuildJob));
			continue;
		}
		if (!gbt_job_running(job) || job->key.dbid != dbid)
			continue;
		if (job->worker_pid == 0)
		{
			/* Not started: its worker will find no job and not connect. */
			memset(job, 0, sizeof(GbtBuildJob));
			gbt_builds->failures[i] = 0;
			continue;
		}
		job->leaving = true;
		pids[n++] = job->worker_pid;
	}
	SpinLockRelease(&gbt_builds->mutex);
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

	if (gbt_builds == NULL || stmt == NULL)
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
