/*
 * build.h
 *	  Mirror builds in background workers, and mirrors refused for their size.
 */
#ifndef GPUBTREE_BUILDER_H
#define GPUBTREE_BUILDER_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "nodes/nodes.h"
#include "utils/relcache.h"

#include "protocol.h"

/* What is known of an index's mirror besides the mirror itself. */
typedef enum GbtJobState
{
	GBT_JOB_FREE = 0,
	GBT_JOB_STARTING,			/* a worker was asked for */
	GBT_JOB_LOCKING,			/* the worker waits for the table's lock */
	GBT_JOB_EXPORTING,			/* the worker reads the index */
	GBT_JOB_FAILED,				/* the last build failed (message) */
	GBT_JOB_REFUSED				/* cannot fit under the memory limit */
} GbtJobState;

typedef struct GbtBuildJob
{
	GbtMirrorKey key;
	GbtJobState state;
	pid_t		worker_pid;
	TimestampTz since;			/* when it entered this state */
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
extern bool gbt_mirror_wanted(Relation index, Oid keytype, char *why, Size whylen);
extern bool gbt_mirror_ready(Oid indexoid);
extern int	gbt_builder_jobs(GbtBuildJob *out);
extern bool gbt_builder_note(Oid indexrelid, char *note, Size notelen);
extern const char *gbt_job_state_name(GbtJobState state);
extern PGDLLEXPORT void gpubtree_builder_main(Datum arg);
extern void gbt_builders_before_utility(Node *stmt);

extern void gbt_mirror_after_build(Relation index);

#endif							/* GPUBTREE_BUILDER_H */
