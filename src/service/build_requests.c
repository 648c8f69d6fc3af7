/*
 * build_requests.c
 *	  BUILD requests: a new mirror from a backend's export.  The mirror is
 *	  prepared in the round (its entries copied and stamped), its engine
 *	  (the tree and its chunk sums: most of a build, 0.7 s at 2^26 entries
 *	  on the H200) built on a thread of its own while the service answers
 *	  the other sessions, and it is published in the first round after,
 *	  with what was logged meanwhile.  One build at a time; the worker
 *	  queues the others.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/lwlock.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "service.h"
#include "settings.h"

/* The build in flight: its engine on a thread, published once that ends. */
typedef struct BuildInFlight
{
	ServiceMirror *sm;			/* the free entry it goes to */
	GbtMirrorParts place;		/* its parts' devices (gbt_devices) */
	int64		estimate;		/* the room made for it */
	GbtEngineJob *job;			/* its mirror's engine being built */
	instr_time	start;
	TimestampTz taken;
} BuildInFlight;

static BuildInFlight *in_flight = NULL;

/*
 * The inserters and deleters of a BUILD request's entries, when its export
 * stamped some (entries.h: GbtEntryStamps): *xmin, those, else unknown for
 * a flagged entry and frozen for the others, and *xmax, the deleters
 * (InvalidTransactionId: none); both NULL when it stamped none.  False, err
 * set, for a stamp that is not a flagged entry's or not of transactions.
 */
static bool
export_stamps(const GbtRequest *req, const GbtEntries *e, TransactionId **xmin,
			  TransactionId **xmax, char *err, Size errlen)
{
	int64		n = req->body.build.nstamps;
	const char *at = GBT_REQUEST_DATA(req) +
		MAXALIGN(gbt_entries_flat_size(e->ncols, req->body.build.room));
	const int64 *pos = (const int64 *) at;
	const TransactionId *smin = (const TransactionId *) (at + sizeof(int64) * n);
	const TransactionId *smax = smin + n;
	int64		i;

	*xmin = *xmax = NULL;
	if (n == 0)
		return true;
	*xmin = palloc_extended(sizeof(TransactionId) * e->n, MCXT_ALLOC_HUGE);
	*xmax = palloc_extended(sizeof(TransactionId) * e->n, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	for (i = 0; i < e->n; i++)
		(*xmin)[i] = gbt_exported_xmin(e, i);
	for (i = 0; i < n; i++)
	{
		if (pos[i] < 0 || pos[i] >= e->n || !(e->nulls[pos[i]] & GBT_ENTRY_XMIN_UNKNOWN) ||
			!(TransactionIdIsNormal(smin[i]) || smin[i] == GBT_XMIN_FROZEN) ||
			!(TransactionIdIsNormal(smax[i]) || smax[i] == InvalidTransactionId))
		{
			strlcpy(err, "bad BUILD request: a stamp of no flagged entry", errlen);
			pfree(*xmin);
			pfree(*xmax);
			*xmin = *xmax = NULL;
			return false;
		}
		(*xmin)[pos[i]] = smin[i];
		(*xmax)[pos[i]] = smax[i];
	}
	return true;
}

/* Whether a build's engine is being built (gbt_build_ready() says when over). */
bool
gbt_build_running(void)
{
	return in_flight != NULL;
}

bool
gbt_build_ready(void)
{
	return in_flight != NULL && gbt_engine_job_done(in_flight->job);
}

/*
 * The room the build in flight holds on the devices until it is published
 * (devices.c counts it as used): its estimate, placed as *place.  False
 * when none is in flight.
 */
bool
gbt_build_room(int64 *bytes, GbtMirrorParts *place)
{
	if (in_flight == NULL)
		return false;
	*bytes = in_flight->estimate;
	*place = in_flight->place;
	return true;
}

/* The build in flight given up: its thread waited for, its mirror freed. */
static void
build_forget(void)
{
	if (in_flight->job != NULL)
		gbt_mirror_free(gbt_engine_job_finish(in_flight->job, NULL, 0));
	pfree(in_flight);
	in_flight = NULL;
}

/*
 * The build in flight not published: t, its request, answered with why, its
 * export's capture reset (a later export of this slot keeps its own), its
 * mirror m freed.
 */
static void
build_refuse(TakenRequest *t, GbtMirror *m, const char *why)
{
	BuildCapture *bc = &gbt_captures[t->slotno];

	gbt_reply(t->req, GBT_REPLY_NO_MIRROR, why);
	if (bc->ticket == t->req->body.build.ticket)
		gbt_capture_reset(bc);
	gbt_mirror_free(m);
	build_forget();
}

/* At the service's exit: a build in flight given up. */
void
gbt_build_end(void)
{
	if (in_flight != NULL)
		build_forget();
}

/*
 * Start the build of t (a BUILD request; none in flight): false when its
 * engine is being built beside the service (gbt_build_finish() once
 * gbt_build_ready()), true when it is answered already (an error, or a
 * mirror that could not be prepared).
 */
bool
gbt_build_start(TakenRequest *t)
{
	GbtRequest *req = t->req;
	GbtEntries	entries;
	char		err[GBT_ERRMSG_LEN];
	int64		estimate;
	ServiceMirror *sm;
	GbtMirrorParts place;
	GbtMirrorParts parts;
	GbtMirror  *m;
	int			k;
	instr_time	start;
	TimestampTz taken;
	TransactionId *xmin;
	TransactionId *xmax;

	Assert(in_flight == NULL);
	if (req == NULL)
		return true;
	estimate = gbt_mirror_estimate_bytes(req->body.build.nentries, req->body.build.columns.ncols,
										 gbt_gpu_usable);
	if (req->body.build.nentries < 0 || req->body.build.nentries > req->body.build.room ||
		req->body.build.columns.ncols < 0 || req->body.build.columns.ncols > GBT_MAX_COLS ||
		req->body.build.nstamps < 0 || req->body.build.nstamps > req->body.build.nentries ||
		MAXALIGN(sizeof(GbtRequest)) +
		MAXALIGN(gbt_entries_flat_size(req->body.build.columns.ncols, req->body.build.room)) +
		GBT_ENTRY_STAMPS_SIZE(req->body.build.nstamps) > req->hdr.capacity)
	{
		gbt_reply(req, GBT_REPLY_ERROR, "bad BUILD request");
		return true;
	}
	if (gbt_no_engine[0] != '\0')
	{
		gbt_reply(req, GBT_REPLY_ERROR, gbt_no_engine);
		return true;
	}

	/* Exported before something the log could not carry: stale already. */
	if (req->hdr.generation != gbt_generation(req->hdr.key.dbid, req->hdr.key.indexrelid) ||
		req->body.build.service_pid != MyProcPid)
	{
		gbt_reply(req, GBT_REPLY_NO_MIRROR, "the index changed during the export");
		return true;
	}

	sm = gbt_make_room(&req->hdr.key, estimate, &place);
	if (sm == NULL)
	{
		snprintf(err, sizeof(err), gbt_ndevices > 1 ?
				 "mirror needs %lld MB, more than the devices' shares of gpubtree.mirror_memory_limit together (%lld MB)" :
				 "mirror needs %lld MB, more than gpubtree.mirror_memory_limit (%lld MB)",
				 (long long) (estimate >> 20), (long long) (gbt_mirror_room() >> 20));
		gbt_reply(req, GBT_REPLY_ERROR, err);
		return true;
	}

	INSTR_TIME_SET_CURRENT(start);
	taken = GetCurrentTimestamp();
	gbt_entries_unflatten(&entries, req->body.build.columns.ncols, req->body.build.room,
						  GBT_REQUEST_DATA(req));
	entries.n = req->body.build.nentries;
	if (!export_stamps(req, &entries, &xmin, &xmax, err, sizeof(err)))
	{
		gbt_reply(req, GBT_REPLY_ERROR, err);
		return true;
	}
	parts = place;
	for (k = 0; k < place.nparts; k++)
		parts.device[k] = gbt_devices[place.device[k]].engine_device;
	gbt_service_building(true);
	m = gbt_mirror_build_begin(&req->body.build.columns, &entries, xmin, xmax,
							   req->body.build.captured, &parts, err, sizeof(err));
	gbt_service_building(false);
	if (xmin != NULL)
	{
		pfree(xmin);
		pfree(xmax);
	}
	if (m == NULL)
	{
		gbt_reply(req, GBT_REPLY_ERROR, err);
		return true;
	}

	in_flight = MemoryContextAllocZero(TopMemoryContext, sizeof(BuildInFlight));
	in_flight->sm = sm;
	in_flight->place = place;
	in_flight->estimate = estimate;
	in_flight->start = start;
	in_flight->taken = taken;
	if (gpubtree_debug_engine_build_delay > 0)
		ereport(LOG,
				(errmsg("gpubtree service: the engine's build of the mirror of index %u held %d ms (gpubtree.debug_engine_build_delay)",
						req->hdr.key.indexrelid, gpubtree_debug_engine_build_delay)));
	in_flight->job = gbt_engine_job_start(m, gpubtree_debug_engine_build_delay);
	return false;
}

/*
 * Publish the build in flight (gbt_build_ready()), the request t it
 * answers, with what was logged since its export began: the change log is
 * applied first in each round (and before this), and captured for the
 * export's slot up to its applied position.
 */
void
gbt_build_finish(TakenRequest *t)
{
	GbtRequest *req = t->req;
	GbtSlot    *slot = &gbt_shared->slots[t->slotno];
	ServiceMirror *sm = in_flight->sm;
	GbtMirror  *m;
	char		err[GBT_ERRMSG_LEN];
	BuildCapture *bc;
	bool		captured;
	bool		registered;
	instr_time	duration;

	Assert(gbt_build_ready());
	m = gbt_engine_job_finish(in_flight->job, err, sizeof(err));
	in_flight->job = NULL;
	if (m == NULL)
	{
		gbt_reply(req, GBT_REPLY_ERROR, err);
		build_forget();
		return;
	}

	/* The index changed (dropped, rewritten) while the engine was built. */
	if (req->hdr.generation != gbt_generation(req->hdr.key.dbid, req->hdr.key.indexrelid) ||
		sm->in_use)
	{
		build_refuse(t, m, "the index changed during the build");
		return;
	}

	gbt_service_building(true);
	bc = &gbt_captures[t->slotno];
	captured = bc->active && !bc->overflow && bc->ticket == req->body.build.ticket &&
		bc->start == req->body.build.log_start &&
		memcmp(&bc->key, &req->hdr.key, sizeof(GbtMirrorKey)) == 0;
	if (captured && bc->n > 0)
		gbt_mirror_apply(m, bc->entries, bc->pos, bc->n);
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, in_flight->start);
	if (gpubtree_debug_service_check_delay > 0)
	{
		ereport(LOG,
				(errmsg("gpubtree service: the registration check of the mirror of index %u held back (gpubtree.debug_service_check_delay)",
						req->hdr.key.indexrelid)));
		gbt_debug_wait(&gpubtree_debug_service_check_delay);
	}

	/*
	 * Writers log an entry for a registered export or a published mirror
	 * (client.c: log_wanted(), under the log's lock).  A backend that gives
	 * up on its build unregisters at any time: the mirror is published
	 * under the same lock as the registration is checked, so that no entry
	 * falls between the two.
	 */
	LWLockAcquire(gbt_shared->log.lock, LW_SHARED);
	registered = slot->building && slot->build_service_pid == MyProcPid &&
		slot->build_ticket == req->body.build.ticket;
	if (!registered || !captured)
	{
		LWLockRelease(gbt_shared->log.lock);
		gbt_service_building(false);
		build_refuse(t, m, registered && bc->overflow ?
					 "too many changes during the export" : "the export is no longer registered");
		return;
	}
	gbt_capture_reset(bc);

	sm->in_use = true;
	sm->key = req->hdr.key;
	sm->id = gbt_next_mirror_id++;
	sm->lineage = sm->id;
	sm->generation = req->hdr.generation;
	sm->db_generation = gbt_generation(req->hdr.key.dbid, InvalidOid);
	sm->mirror = m;
	sm->device = in_flight->place.device[0];
	sm->place = in_flight->place;
	sm->last_used = GetCurrentTimestamp();
	sm->build_ms = INSTR_TIME_GET_MILLISEC(duration);
	sm->phases = req->body.build.phases;
	sm->phases.taken = in_flight->taken;
	sm->phases.built = GetCurrentTimestamp();
	sm->phases.summed = 0;
	sm->hits = 0;
	gbt_publish_mirrors();
	LWLockRelease(gbt_shared->log.lock);
	gbt_service_building(false);
	build_forget();				/* the mirror is the registry's now */
	req->hdr.device_ms = sm->build_ms;
	req->hdr.on_gpu = gbt_mirror_on_gpu(m);
	if (message_level_is_interesting(DEBUG1) && gbt_mirror_entries(m) > 0)
	{
		GbtMirrorBytes b;
		double		n = gbt_mirror_entries(m);

		gbt_mirror_bytes_parts(m, &b);
		elog(DEBUG1, "gpubtree service: mirror of index %u built in %.0f ms: %.0f entries; bytes an entry: entries %.1f, stamps %.1f, delta %.1f, engine %.1f (%s), engine on the host %.1f",
			 sm->key.indexrelid, sm->build_ms, n, b.base / n, b.stamps / n, b.delta / n,
			 b.engine / n, gbt_mirror_on_gpu(m) ? "GPU" : "host", b.engine_host / n);
	}
	pg_atomic_fetch_add_u64(&gbt_shared->builds, 1);
	gbt_reply(req, GBT_REPLY_OK, NULL);
}
