/*
 * build_jobs.c
 *	  The shared table of mirror build jobs, one per index: its shared memory,
 *	  finding and making jobs, mirrors refused for their size, and what the
 *	  jobs say to EXPLAIN and gpubtree_mirrors().
 *
 * Before any worker starts, the mirror's size is estimated from the index's
 * (gbt_mirror_estimate_bytes): a mirror that cannot fit under the service's
 * memory limit is refused, logged once, and remembered until the index or
 * the limit changes enough, so an index is never exported for a mirror that
 * would be thrown away.
 */
#include "postgres.h"

#include "access/itup.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "backend.h"
#include "build_jobs.h"
#include "client.h"
#include "keytypes.h"
#include "shmem.h"
#include "pg_compat.h"

/* The table in shared memory, attached by gbt_builder_shmem_startup(). */
GbtBuilderShared *gbt_builds = NULL;

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

	gbt_builds = ShmemInitStruct("gpubtree builds", sizeof(GbtBuilderShared), &found);
	if (!found)
	{
		memset(gbt_builds, 0, sizeof(GbtBuilderShared));
		SpinLockInit(&gbt_builds->mutex);
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
		case GBT_JOB_QUEUED:
			return "build queued";
	}
	return "unknown";
}

bool
gbt_job_running(const GbtBuildJob *job)
{
	return job->state == GBT_JOB_STARTING || job->state == GBT_JOB_LOCKING ||
		job->state == GBT_JOB_EXPORTING;
}

/*
 * The job of the index, under the mutex; a job of the index's former storage
 * is forgotten.  NULL when there is none.
 */
GbtBuildJob *
gbt_find_job(const GbtMirrorKey *key)
{
	int			i;

	for (i = 0; i < GBT_MAX_BUILD_JOBS; i++)
	{
		GbtBuildJob *job = &gbt_builds->jobs[i];

		if (job->state == GBT_JOB_FREE || job->key.dbid != key->dbid ||
			job->key.indexrelid != key->indexrelid)
			continue;
		if (job->key.relfilenode != key->relfilenode && !gbt_job_running(job))
		{
			memset(job, 0, sizeof(GbtBuildJob));
			gbt_builds->failures[i] = 0;
			continue;
		}
		return job;
	}
	return NULL;
}

/*
 * A slot for a new job, under the mutex: a free one, or the oldest record of
 * an ended job.  NULL when the table holds only jobs under way or queued.
 */
GbtBuildJob *
gbt_new_job(const GbtMirrorKey *key)
{
	GbtBuildJob *oldest = NULL;
	int			i;

	for (i = 0; i < GBT_MAX_BUILD_JOBS; i++)
	{
		GbtBuildJob *job = &gbt_builds->jobs[i];

		if (job->state == GBT_JOB_FREE)
		{
			oldest = job;
			break;
		}
		/* (a queued build is kept: the table's room is its queue) */
		if (!gbt_job_running(job) && job->state != GBT_JOB_QUEUED &&
			(oldest == NULL || job->since < oldest->since))
			oldest = job;
	}
	if (oldest == NULL)
		return NULL;
	memset(oldest, 0, sizeof(GbtBuildJob));
	gbt_builds->failures[oldest - gbt_builds->jobs] = 0;
	oldest->key = *key;
	oldest->since = GetCurrentTimestamp();
	return oldest;
}

/*
 * The entries the index holds now, estimated as the planner does: its
 * counted density scaled to its current size.
 */
int64
gbt_estimate_entries(Relation index)
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

void
gbt_refusal_note(char *why, Size whylen, int64 need, int64 limit)
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
	return gbt_mirror_refused_entries(index, gbt_estimate_entries(index), why, whylen);
}

/*
 * The same for an index of nentries entries: one just built, whose
 * catalog row does not count them yet (the estimate after its commit
 * must not differ, or the refusal would be decided and logged again).
 */
bool
gbt_mirror_refused_entries(Relation index, int64 nentries, char *why, Size whylen)
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
	need = gbt_mirror_estimate_bytes(nentries, cols.ncols, gpu);

	SpinLockAcquire(&gbt_builds->mutex);
	job = gbt_find_job(&key);
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
		SpinLockRelease(&gbt_builds->mutex);
		gbt_refusal_note(why, whylen, need, limit);
		return true;
	}
	if (need > limit && (job == NULL || !gbt_job_running(job)))
	{
		if (job == NULL)
			job = gbt_new_job(&key);
		if (job != NULL)
		{
			job->state = GBT_JOB_REFUSED;
			job->since = GetCurrentTimestamp();
			job->need_bytes = need;
			job->limit_bytes = limit;
			logit = true;
		}
	}
	SpinLockRelease(&gbt_builds->mutex);
	if (need <= limit)
		return false;
	gbt_refusal_note(why, whylen, need, limit);
	if (logit)
		gbt_refusal_log(index, need, limit);
	return true;
}

/* Said once, when a mirror is refused for its size. */
void
gbt_refusal_log(Relation index, int64 need, int64 limit)
{
	ereport(LOG,
			(errmsg("gpubtree: index \"%s\" gets no mirror: it would need about %lld MB, more than gpubtree.mirror_memory_limit allows (%lld MB)",
					RelationGetRelationName(index), (long long) (need >> 20),
					(long long) (limit >> 20)),
			 errdetail("Its scans and aggregates are answered by nbtree. The index is not read for a mirror again until it or the limit changes."),
			 errhint("Raise gpubtree.mirror_memory_limit, or mirror smaller indexes (fewer INCLUDE columns, or partitions).")));
}

void
gbt_progress_note(char *why, Size whylen, const GbtBuildJob *job)
{
	if (job->state == GBT_JOB_EXPORTING)
		snprintf(why, whylen, "no current mirror: being built in the background (%lld of about %lld entries)",
				 (long long) job->done, (long long) job->total);
	else
		snprintf(why, whylen, "no current mirror: %s in the background",
				 gbt_job_state_name(job->state));
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

	if (gbt_builds == NULL)
		return false;
	SpinLockAcquire(&gbt_builds->mutex);
	for (i = 0; i < GBT_MAX_BUILD_JOBS && !found; i++)
	{
		found = gbt_builds->jobs[i].state != GBT_JOB_FREE &&
			gbt_builds->jobs[i].key.dbid == MyDatabaseId &&
			gbt_builds->jobs[i].key.indexrelid == indexrelid;
		if (found)
			copy = gbt_builds->jobs[i];
	}
	SpinLockRelease(&gbt_builds->mutex);
	if (!found)
		return false;
	if (copy.state == GBT_JOB_REFUSED)
		gbt_refusal_note(note, notelen, copy.need_bytes, copy.limit_bytes);
	else if (copy.state == GBT_JOB_FAILED)
		snprintf(note, notelen, "the last mirror build failed (%s)", copy.message);
	else
		gbt_progress_note(note, notelen, &copy);
	return true;
}

/* A copy of every job, for gpubtree_mirrors(); returns how many. */
int
gbt_builder_jobs(GbtBuildJob *out)
{
	int			n = 0;
	int			i;

	if (gbt_builds == NULL)
		return 0;
	SpinLockAcquire(&gbt_builds->mutex);
	for (i = 0; i < GBT_MAX_BUILD_JOBS; i++)
		if (gbt_builds->jobs[i].state != GBT_JOB_FREE)
			out[n++] = gbt_builds->jobs[i];
	SpinLockRelease(&gbt_builds->mutex);
	return n;
}
