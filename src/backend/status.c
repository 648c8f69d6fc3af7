/*
 * status.c
 *	  gpubtree_status() and gpubtree_mirrors(): what the GPU service holds.
 *
 * The service holds the mirrors of every database.  Like pg_stat_statements,
 * only roles with the privileges of pg_read_all_stats see all of them; any
 * other role sees the mirrors of the database it is connected to, and
 * mirror_bytes counts only those.
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "access/xlog.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "build.h"
#include "backend.h"
#include "shmem.h"

PG_FUNCTION_INFO_V1(gpubtree_status);
PG_FUNCTION_INFO_V1(gpubtree_mirrors);

static bool
sees_all_databases(void)
{
	return has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
}

/* The service's table of mirrors, as it is now. */
static GbtMirrorInfo *
copy_mirrors(void)
{
	GbtMirrorInfo *copy = palloc(sizeof(gbt_shared->mirrors));

	SpinLockAcquire(&gbt_shared->mutex);
	memcpy(copy, gbt_shared->mirrors, sizeof(gbt_shared->mirrors));
	SpinLockRelease(&gbt_shared->mutex);
	return copy;
}

static bool
visible(const GbtMirrorInfo *m, bool all)
{
	return m->in_use && (all || m->key.dbid == MyDatabaseId);
}

Datum
gpubtree_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[16];
	bool		nulls[16];
	const char *engine;

	InitMaterializedSRF(fcinfo, 0);
	memset(nulls, false, sizeof(nulls));

	if (gbt_shared == NULL)
	{
		memset(nulls, true, sizeof(nulls));
		values[0] = BoolGetDatum(false);
		nulls[0] = false;
		values[8] = CStringGetTextDatum("no GPU service: add gpubtree to shared_preload_libraries");
		nulls[8] = false;
	}
	else
	{
		bool		standby = RecoveryInProgress();
		char		device_name[sizeof(gbt_shared->device_name)];
		char		status[sizeof(gbt_shared->status)];
		char		limit_source[sizeof(gbt_shared->memory_limit_source)];

		/* Copied under the spinlock, made into text after (no palloc there). */
		SpinLockAcquire(&gbt_shared->mutex);
		values[0] = BoolGetDatum(gbt_shared->service_pid != 0);
		values[1] = Int32GetDatum(gbt_shared->service_pid);
		values[2] = BoolGetDatum(gbt_shared->gpu_usable);
		memcpy(device_name, gbt_shared->device_name, sizeof(device_name));
		values[4] = Int64GetDatum(gbt_shared->mirror_bytes);
		memcpy(status, gbt_shared->status, sizeof(status));
		values[11] = Int64GetDatum(gbt_shared->memory_limit);
		memcpy(limit_source, gbt_shared->memory_limit_source, sizeof(limit_source));
		SpinLockRelease(&gbt_shared->mutex);
		values[3] = CStringGetTextDatum(device_name);
		/* A standby starts no service (BgWorkerStart_RecoveryFinished). */
		if (DatumGetInt32(values[1]) == 0 && standby)
			values[8] = CStringGetTextDatum("not started: this server is a standby; the service starts at promotion, and queries here run nbtree's plans");
		else
			values[8] = CStringGetTextDatum(status);
		values[12] = CStringGetTextDatum(limit_source);
		nulls[1] = DatumGetInt32(values[1]) == 0;
		nulls[3] = !DatumGetBool(values[2]);
		values[5] = Int64GetDatum((int64) pg_atomic_read_u64(&gbt_shared->requests));
		values[6] = Int64GetDatum((int64) pg_atomic_read_u64(&gbt_shared->builds));
		values[7] = Int64GetDatum((int64) pg_atomic_read_u64(&gbt_shared->fallbacks));
		values[9] = Int64GetDatum((int64) pg_atomic_read_u64(&gbt_shared->logged));
		values[10] = Int64GetDatum((int64) pg_atomic_read_u64(&gbt_shared->invalidations));
		values[13] = Int64GetDatum((int64) pg_atomic_read_u64(&gbt_shared->exports));
		nulls[11] = nulls[12] = DatumGetInt64(values[11]) == 0;
		/* gpubtree.engine as the service read it, and what it found */
		values[14] = CStringGetTextDatum(gpubtree_engine_name(gpubtree_engine));
		engine = gbt_service_engine();
		nulls[15] = engine == NULL;
		if (engine != NULL)
			values[15] = CStringGetTextDatum(engine);
		if (!sees_all_databases())
		{
			GbtMirrorInfo *copy = copy_mirrors();
			int64		bytes = 0;
			int			i;

			for (i = 0; i < GBT_MAX_MIRRORS; i++)
				if (visible(&copy[i], false))
					bytes += copy[i].bytes;
			values[4] = Int64GetDatum(bytes);
		}
	}
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}

/* The job of the index of key among jobs[0..njobs), or NULL. */
static GbtBuildJob *
job_of(GbtBuildJob *jobs, int njobs, const GbtMirrorKey *key)
{
	int			i;

	for (i = 0; i < njobs; i++)
		if (memcmp(&jobs[i].key, key, sizeof(GbtMirrorKey)) == 0)
			return &jobs[i];
	return NULL;
}

/* The job columns of a row: state, build progress, note. */
static void
put_job(Datum *values, bool *nulls, const GbtBuildJob *job, const char *state)
{
	values[10] = CStringGetTextDatum(job != NULL && job->state != GBT_JOB_FREE ?
									 gbt_job_state_name(job->state) : state);
	nulls[11] = nulls[12] = job == NULL || job->state != GBT_JOB_EXPORTING;
	if (!nulls[11])
	{
		values[11] = Int64GetDatum(job->done);
		values[12] = Int64GetDatum(job->total);
	}
	nulls[13] = true;
	if (job != NULL && job->state == GBT_JOB_REFUSED)
		values[13] = CStringGetTextDatum(psprintf("needs about %lld MB, more than gpubtree.mirror_memory_limit (%lld MB)",
												  (long long) (job->need_bytes >> 20),
												  (long long) (job->limit_bytes >> 20)));
	else if (job != NULL && job->state == GBT_JOB_FAILED)
		values[13] = CStringGetTextDatum(job->message);
	else
		return;
	nulls[13] = false;
}

/*
 * part_devices and part_entries (columns 22 and 23, since 0.3.0): the
 * devices and tree entries of a mirror's parts; NULL when it is whole.
 */
static void
put_parts(const GbtMirrorInfo *m, Datum *values, bool *nulls)
{
	Datum		devices[GBT_SPLIT_MAX_PARTS];
	Datum		entries[GBT_SPLIT_MAX_PARTS];
	int			k;

	nulls[22] = nulls[23] = m->nparts <= 1;
	if (m->nparts <= 1)
		return;
	for (k = 0; k < m->nparts; k++)
	{
		devices[k] = Int32GetDatum(m->part_device[k]);
		entries[k] = Int64GetDatum(m->part_entries[k]);
	}
	values[22] = PointerGetDatum(construct_array(devices, m->nparts, INT4OID, sizeof(int32),
												 true, TYPALIGN_INT));
	values[23] = PointerGetDatum(construct_array(entries, m->nparts, INT8OID, sizeof(int64),
												 FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

Datum
gpubtree_mirrors(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GbtMirrorInfo *copy;
	GbtBuildJob *jobs;
	int			njobs;
	bool	   *shown;
	bool		all;
	int			i;
	Datum		values[24];
	bool		nulls[24];

	InitMaterializedSRF(fcinfo, 0);
	if (gbt_shared == NULL)
		return (Datum) 0;

	all = sees_all_databases();
	copy = copy_mirrors();
	jobs = palloc(sizeof(GbtBuildJob) * GBT_MAX_BUILD_JOBS);
	njobs = gbt_builder_jobs(jobs);
	shown = palloc0(sizeof(bool) * Max(njobs, 1));

	for (i = 0; i < GBT_MAX_MIRRORS; i++)
	{
		GbtMirrorInfo *m = &copy[i];
		GbtBuildJob *job;
		bool		current;

		if (!visible(m, all))
			continue;
		memset(nulls, false, sizeof(nulls));
		values[0] = ObjectIdGetDatum(m->key.dbid);
		values[1] = ObjectIdGetDatum(m->key.indexrelid);
		values[2] = ObjectIdGetDatum(m->key.relfilenode);
		values[3] = CStringGetTextDatum(m->on_gpu ? "gpu" : "cpu");
		values[4] = Int64GetDatum(m->entries);
		values[5] = Int64GetDatum(m->bytes);
		values[6] = Float8GetDatum(m->build_ms);
		values[7] = Int64GetDatum((int64) m->hits);
		/* Current: valid at the index's generation. */
		current = m->generation >= gbt_generation(m->key.dbid, m->key.indexrelid);
		values[8] = BoolGetDatum(current);
		values[9] = Int64GetDatum(m->delta);
		values[14] = Int64GetDatum(m->stamped);
		values[15] = CStringGetTextDatum(m->by_map ? "visibility map" : "stamps");
		values[16] = Int64GetDatum(m->rebuilds);
		values[17] = Int64GetDatum(m->rebuild_copied);
		nulls[17] = m->rebuild_copied < 0;
		values[18] = Int64GetDatum(m->device_bytes);
		values[19] = Int64GetDatum(m->scratch_bytes);
		values[20] = Float8GetDatum(m->entries > 0 ? (double) m->bytes / m->entries : 0);
		nulls[20] = m->entries <= 0;
		/* (0.2.0's function has neither device nor parts: tuplestore takes natts) */
		values[21] = Int32GetDatum(m->device);
		nulls[21] = m->device < 0;
		put_parts(m, values, nulls);
		job = job_of(jobs, njobs, &m->key);
		if (job != NULL)
			shown[job - jobs] = true;
		put_job(values, nulls, job, current ? "current" : "stale");
		if (nulls[13] && (m->phases.asked != 0 || m->nparts > 1))
		{
			/*
			 * The devices of a mirror split across several, and where its
			 * build's time went, until its chunk sums were made.
			 */
			StringInfoData note;
			char		text[GBT_ERRMSG_LEN];
			int			k;

			initStringInfo(&note);
			if (m->nparts > 1)
			{
				appendStringInfoString(&note, "split across devices");
				for (k = 0; k < m->nparts; k++)
					appendStringInfo(&note, "%s %d", k > 0 ? "," : "", m->part_device[k]);
				appendStringInfoString(&note, " (tree entries");
				for (k = 0; k < m->nparts; k++)
					appendStringInfo(&note, "%s " INT64_FORMAT, k > 0 ? "," : "",
									 m->part_entries[k]);
				appendStringInfoString(&note, m->phases.asked != 0 ? "); " : ")");
			}
			if (m->phases.asked != 0)
			{
				gbt_build_phases_text(&m->phases, text, sizeof(text));
				appendStringInfoString(&note, text);
			}
			values[13] = CStringGetTextDatum(note.data);
			nulls[13] = false;
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	/* Indexes with no mirror, but a build, a failure or a refusal. */
	for (i = 0; i < njobs; i++)
	{
		if (shown[i] || (!all && jobs[i].key.dbid != MyDatabaseId))
			continue;
		memset(nulls, true, sizeof(nulls));
		values[0] = ObjectIdGetDatum(jobs[i].key.dbid);
		values[1] = ObjectIdGetDatum(jobs[i].key.indexrelid);
		values[2] = ObjectIdGetDatum(jobs[i].key.relfilenode);
		nulls[0] = nulls[1] = nulls[2] = false;
		values[8] = BoolGetDatum(false);
		nulls[8] = nulls[10] = false;
		put_job(values, nulls, &jobs[i], NULL);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
