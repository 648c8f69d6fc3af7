/*
 * build_jobs.h
 *	  The shared table of mirror build jobs, one per index (build_jobs.c):
 *	  what is known of an index's mirror besides the mirror itself.
 */
#ifndef GPUBTREE_BUILD_JOBS_H
#define GPUBTREE_BUILD_JOBS_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "storage/spin.h"
#include "utils/relcache.h"

#include "protocol.h"

typedef enum GbtJobState
{
	GBT_JOB_FREE = 0,
	GBT_JOB_STARTING,			/* a worker was asked for */
	GBT_JOB_LOCKING,			/* the worker waits for the table's lock */
	GBT_JOB_EXPORTING,			/* the worker reads the index */
	GBT_JOB_FAILED,				/* the last build failed (message) */
	GBT_JOB_REFUSED,			/* cannot fit under the memory limit */
	GBT_JOB_QUEUED				/* after CREATE INDEX: waits for a free build */
} GbtJobState;

typedef struct GbtBuildJob
{
	GbtMirrorKey key;
	GbtJobState state;
	pid_t		worker_pid;
	TimestampTz since;			/* when it entered this state */
	TimestampTz asked;			/* when the build was asked for (queued or started) */
	int64		done;			/* entries exported so far */
	int64		total;			/* entries the index was estimated to hold */
	int64		need_bytes;		/* the mirror's estimated size */
	int64		limit_bytes;	/* REFUSED: the limit it was refused under */
	bool		leaving;		/* its worker was asked to leave its database */
	char		message[GBT_ERRMSG_LEN];	/* FAILED: why */
} GbtBuildJob;

#define GBT_MAX_BUILD_JOBS 64

extern void gbt_builder_shmem_request(void);
extern void gbt_builder_shmem_startup(void);
extern bool gbt_mirror_refused(Relation index, char *why, Size whylen);
extern bool gbt_mirror_refused_entries(Relation index, int64 nentries, char *why,
									   Size whylen);
extern int	gbt_builder_jobs(GbtBuildJob *out);
extern bool gbt_builder_note(Oid indexrelid, char *note, Size notelen);
extern const char *gbt_job_state_name(GbtJobState state);

/*
 * For build.c and build_worker.c, which start and run the jobs: the table
 * itself, in shared memory; jobs and failures are read and written under
 * its mutex.
 */
typedef struct GbtBuilderShared
{
	slock_t		mutex;
	GbtBuildJob jobs[GBT_MAX_BUILD_JOBS];
	int			failures[GBT_MAX_BUILD_JOBS];	/* failed builds in a row */
} GbtBuilderShared;

/* NULL until shared memory is set up (and without shared_preload_libraries). */
extern GbtBuilderShared *gbt_builds;

/* Under the mutex. */
extern bool gbt_job_running(const GbtBuildJob *job);
extern GbtBuildJob *gbt_find_job(const GbtMirrorKey *key);
extern GbtBuildJob *gbt_new_job(const GbtMirrorKey *key);

extern int64 gbt_estimate_entries(Relation index);
extern void gbt_refusal_note(char *why, Size whylen, int64 need, int64 limit);
extern void gbt_refusal_log(Relation index, int64 need, int64 limit);
extern void gbt_progress_note(char *why, Size whylen, const GbtBuildJob *job);

#endif							/* GPUBTREE_BUILD_JOBS_H */
