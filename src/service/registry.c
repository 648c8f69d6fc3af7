/*
 * registry.c
 *	  The mirrors the GPU service holds: lookup, memory, publication, the
 *	  change log applied to them, and what registered exports will need of
 *	  it.
 */
#include "postgres.h"

#include <unistd.h>

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/lwlock.h"
#include "storage/procarray.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "service.h"
#include "settings.h"

ServiceMirror gbt_mirrors[GBT_MAX_MIRRORS];
BuildCapture *gbt_captures;
bool		gbt_gpu_usable = false;
int64		gbt_memory_limit = 0;	/* gpubtree.mirror_memory_limit, resolved: all devices */
uint64		gbt_next_mirror_id = 1;
char		gbt_no_engine[GBT_ERRMSG_LEN];	/* why no mirrors are built, if so */

/*
 * Decide the engine and the devices once, at start, from gpubtree.engine,
 * gpubtree.devices and gpubtree.simulated_devices: fills name (the first
 * GPU's) or why (why not a GPU).  With gpubtree.engine = gpu and no usable
 * GPU there is none: gbt_no_engine says so, and no mirror is ever built.
 */
void
gbt_choose_engine(char *name, Size namelen, char *why, Size whylen)
{
	gbt_gpu_usable = gbt_find_devices(name, namelen, why, whylen);
	if (!gbt_gpu_usable && gpubtree_engine == GPUBTREE_ENGINE_GPU)
		snprintf(gbt_no_engine, sizeof(gbt_no_engine),
				 "gpubtree.engine = gpu and no usable GPU (%s): no mirrors are built, queries use nbtree",
				 why);
	else if (gbt_ndevices == 0)
		snprintf(gbt_no_engine, sizeof(gbt_no_engine),
				 "gpubtree.devices = '%s' names none of the %d simulated devices: no mirrors are built, queries use nbtree",
				 gpubtree_devices, gpubtree_simulated_devices);
}

/*
 * Resolve gpubtree.mirror_memory_limit: an explicit value, or by default a
 * share of the memory the mirrors live in, as found at start; then each
 * device's share of it (devices.c).  Publishes the total for
 * gpubtree_status(), and the largest share for backends, which refuse to
 * export an index whose mirror cannot fit on a device (build.c).
 */
void
gbt_set_memory_limit(void)
{
	char		source[64];
	bool		auto_gpu = false;

	if (gpubtree_mirror_memory_limit >= 0)
	{
		gbt_memory_limit = (int64) gpubtree_mirror_memory_limit * 1024 * 1024;
		strlcpy(source, "gpubtree.mirror_memory_limit", sizeof(source));
	}
	else if (gbt_gpu_usable)
	{
		auto_gpu = true;
		strlcpy(source, gbt_ndevices > 1 ? "auto: 3/4 of each GPU's free memory at start" :
				"auto: 3/4 of the GPU's free memory at start", sizeof(source));
	}
	else
	{
		long		pages = sysconf(_SC_PHYS_PAGES);
		long		pagesize = sysconf(_SC_PAGESIZE);

		gbt_memory_limit = pages > 0 && pagesize > 0 ? (int64) pages * pagesize / 4 :
			(int64) 1024 * 1024 * 1024;
		strlcpy(source, "auto: 1/4 of the server's memory (CPU engine)", sizeof(source));
	}
	if (gbt_ndevices > 0)
		gbt_memory_limit = gbt_share_memory_limit(gbt_memory_limit, auto_gpu);
	SpinLockAcquire(&gbt_shared->mutex);
	gbt_shared->memory_limit = gbt_memory_limit;
	gbt_shared->device_limit = gbt_ndevices > 0 ? gbt_mirror_room() : gbt_memory_limit;
	strlcpy(gbt_shared->memory_limit_source, source, sizeof(gbt_shared->memory_limit_source));
	SpinLockRelease(&gbt_shared->mutex);
}

/* The newest build published so far: mirrors of a higher lineage are new. */
static uint64 published_lineage = 0;

/*
 * gpubtree.debug_service_publish_delay: hold a newly built mirror back this
 * long before it is published, holding what the caller holds (the change
 * log's lock, in handle_build()), so that tests can have a backend give up
 * on its build and a writer commit in that window (t/017_build_give_up.pl).
 * The LOG line is what tests wait for.
 */
static void
debug_publish_delay(void)
{
	Oid			indexrelid = InvalidOid;
	int			i;

	for (i = 0; i < GBT_MAX_MIRRORS; i++)
		if (gbt_mirrors[i].in_use && gbt_mirrors[i].lineage > published_lineage)
			indexrelid = gbt_mirrors[i].key.indexrelid;
	if (!OidIsValid(indexrelid))
		return;
	ereport(LOG,
			(errmsg("gpubtree service: publication of the mirror of index %u held back (gpubtree.debug_service_publish_delay)",
					indexrelid)));
	gbt_debug_wait(&gpubtree_debug_service_publish_delay);
}

/* Publish the mirror table for gpubtree_status(). */
void
gbt_publish_mirrors(void)
{
	int64		total = 0;
	int			i;

	if (gpubtree_debug_service_publish_delay > 0)
		debug_publish_delay();
	SpinLockAcquire(&gbt_shared->mutex);
	for (i = 0; i < GBT_MAX_MIRRORS; i++)
	{
		GbtMirrorInfo *info = &gbt_shared->mirrors[i];
		ServiceMirror *sm = &gbt_mirrors[i];

		info->in_use = sm->in_use;
		if (!sm->in_use)
			continue;
		published_lineage = Max(published_lineage, sm->lineage);
		info->key = sm->key;
		info->generation = sm->generation;
		info->on_gpu = gbt_mirror_on_gpu(sm->mirror);
		info->device = gbt_devices[sm->device].number;
		info->nparts = sm->place.nparts;
		if (sm->place.nparts > 1)
		{
			gbt_split_part parts[GBT_SPLIT_MAX_PARTS];
			int			n = gbt_mirror_parts(sm->mirror, parts);
			int			k;

			for (k = 0; k < sm->place.nparts; k++)
			{
				info->part_device[k] = gbt_devices[sm->place.device[k]].number;
				info->part_entries[k] = k < n ? parts[k].n : 0;
			}
		}
		info->entries = gbt_mirror_entries(sm->mirror);
		info->delta = gbt_mirror_delta(sm->mirror);
		info->stamped = gbt_mirror_stamped_entries(sm->mirror);
		info->by_map = !gbt_mirror_trusts_stamps(sm->mirror);
		info->bytes = gbt_mirror_bytes(sm->mirror);
		info->device_bytes = gbt_mirror_device_bytes(sm->mirror);
		info->scratch_bytes = gbt_mirror_scratch_bytes(sm->mirror);
		info->build_ms = sm->build_ms;
		info->phases = sm->phases;
		info->hits = sm->hits;
		info->rebuilds = sm->rebuilds;
		info->rebuild_copied = sm->rebuild != NULL ? gbt_rebuild_copied(sm->rebuild) : -1;
		total += info->bytes;
	}
	gbt_shared->mirror_bytes = total;
	SpinLockRelease(&gbt_shared->mutex);
}

void
gbt_drop_mirror(ServiceMirror *sm)
{
	gbt_rebuild_cancel(sm);
	gbt_mirror_free(sm->mirror);
	memset(sm, 0, sizeof(ServiceMirror));
}

ServiceMirror *
gbt_find_mirror(const GbtMirrorKey *key)
{
	int			i;

	for (i = 0; i < GBT_MAX_MIRRORS; i++)
		if (gbt_mirrors[i].in_use && memcmp(&gbt_mirrors[i].key, key, sizeof(GbtMirrorKey)) == 0)
			return &gbt_mirrors[i];
	return NULL;
}

/* A mirror usable for a request that saw the given generation. */
ServiceMirror *
gbt_current_mirror(const GbtMirrorKey *key, uint64 generation)
{
	ServiceMirror *sm = gbt_find_mirror(key);

	return sm != NULL && sm->generation >= generation ? sm : NULL;
}

/* Forget the captured entries (keeping what the capture is for). */
static void
capture_free(BuildCapture *bc)
{
	if (bc->entries != NULL)
		pfree(bc->entries);
	if (bc->pos != NULL)
		pfree(bc->pos);
	bc->entries = NULL;
	bc->pos = NULL;
	bc->n = bc->cap = 0;
}

void
gbt_capture_reset(BuildCapture *bc)
{
	capture_free(bc);
	memset(bc, 0, sizeof(BuildCapture));
}

/* Forget the change log kept for a rebuild (done or given up). */
static void
rebuild_log_free(ServiceMirror *sm)
{
	if (sm->rebuild_log != NULL)
	{
		gbt_capture_reset(sm->rebuild_log);
		pfree(sm->rebuild_log);
	}
	sm->rebuild_log = NULL;
}

/* New trees given up while their engine's build ran (gbt_rebuild_cancel()). */
static List *given_up = NIL;

/* Free those whose build is over; with wait, all, once their builds end. */
static void
free_given_up(bool wait)
{
	ListCell   *lc;

	foreach(lc, given_up)
	{
		GbtRebuild *rb = (GbtRebuild *) lfirst(lc);

		if (wait || !gbt_rebuild_busy(rb))
		{
			gbt_rebuild_free(rb);
			given_up = foreach_delete_current(given_up, lc);
		}
	}
}

/*
 * At the service's exit: no build may outlive it (CUDA's teardown at exit
 * would pull the device from under the thread).
 */
void
gbt_rebuilds_end(void)
{
	int			i;

	for (i = 0; i < GBT_MAX_MIRRORS; i++)
		if (gbt_mirrors[i].in_use)
			gbt_rebuild_cancel(&gbt_mirrors[i]);
	free_given_up(true);
}

/*
 * Give up the new tree being made for sm (VACUUM's sweep removed entries it
 * may have copied, or too much was logged meanwhile): a later round starts
 * again if the delta is still large.
 */
void
gbt_rebuild_cancel(ServiceMirror *sm)
{
	MemoryContext old;

	if (sm->rebuild != NULL && gbt_rebuild_busy(sm->rebuild))
	{
		/* Its build runs on: freed once over, no round waits for it. */
		old = MemoryContextSwitchTo(TopMemoryContext);
		given_up = lappend(given_up, sm->rebuild);
		MemoryContextSwitchTo(old);
	}
	else if (sm->rebuild != NULL)
		gbt_rebuild_free(sm->rebuild);
	sm->rebuild = NULL;
	rebuild_log_free(sm);
}

static void
capture_add(BuildCapture *bc, const GbtLogEntry *le, uint64 p)
{
	if (bc->overflow)
		return;
	if (bc->n == GBT_CAPTURE_MAX)
	{
		capture_free(bc);
		bc->overflow = true;
		return;
	}
	if (bc->n == bc->cap)
	{
		bc->cap = Min(Max(1024, bc->cap * 2), GBT_CAPTURE_MAX);
		bc->entries = bc->entries == NULL ?
			MemoryContextAllocHuge(TopMemoryContext, sizeof(GbtLogEntry) * bc->cap) :
			repalloc_huge(bc->entries, sizeof(GbtLogEntry) * bc->cap);
		bc->pos = bc->pos == NULL ?
			MemoryContextAllocHuge(TopMemoryContext, sizeof(uint64) * bc->cap) :
			repalloc_huge(bc->pos, sizeof(uint64) * bc->cap);
	}
	bc->entries[bc->n] = *le;
	bc->pos[bc->n++] = p;
}

/* Report at DEBUG1 a step of the service past GBT_SLOW_STEP_MS. */
static void
report_slow_step(instr_time start, const char *what, const ServiceMirror *sm, int64 n)
{
	instr_time	t;

	INSTR_TIME_SET_CURRENT(t);
	INSTR_TIME_SUBTRACT(t, start);
	if (INSTR_TIME_GET_MILLISEC(t) >= GBT_SLOW_STEP_MS)
		elog(DEBUG1, "gpubtree service: %s (index %u, %lld entries): %.1f ms",
			 what, sm->key.indexrelid, (long long) n, INSTR_TIME_GET_MILLISEC(t));
}

/*
 * Apply the change log to the mirrors, and capture what registered exports
 * will need; then the log can be reused up to here.  Runs before any request
 * of a round is answered.  Returns the number of entries applied.
 */
int64
gbt_apply_log(void)
{
	GbtLog	   *log = &gbt_shared->log;
	uint64		from;
	uint64		to;
	int64		n;
	GbtLogEntry *copy;
	GbtLogEntry *mine;
	uint64	   *pos;
	int			i;

	LWLockAcquire(log->lock, LW_SHARED);
	from = log->applied;
	to = log->head;
	n = (int64) (to - from);
	copy = palloc_extended(sizeof(GbtLogEntry) * Max(n, 1), MCXT_ALLOC_HUGE);
	for (i = 0; i < n; i++)
		copy[i] = log->entries[(from + i) % log->size];

	/*
	 * Exports registered now: read under the same lock, so that an export
	 * registered after the copy starts at or after its end.
	 */
	for (i = 0; i < gbt_shared->nslots; i++)
	{
		GbtSlot    *slot = &gbt_shared->slots[i];
		BuildCapture *bc = &gbt_captures[i];

		if (!slot->building || slot->build_service_pid != MyProcPid)
		{
			if (bc->active)
				gbt_capture_reset(bc);
			continue;
		}
		if (!bc->active || bc->ticket != slot->build_ticket)
		{
			gbt_capture_reset(bc);
			bc->active = true;
			bc->start = slot->build_start;
			bc->ticket = slot->build_ticket;
			bc->key = slot->build_key;
		}
	}
	LWLockRelease(log->lock);

	for (i = 0; i < gbt_shared->nslots && n > 0; i++)
	{
		BuildCapture *bc = &gbt_captures[i];
		int64		j;

		if (!bc->active)
			continue;
		for (j = 0; j < n; j++)
			if (from + j >= bc->start &&
				memcmp(&copy[j].key, &bc->key, sizeof(GbtMirrorKey)) == 0)
				capture_add(bc, &copy[j], from + j);
	}

	for (i = 0; i < n; i++)
		if (copy[i].kind == GBT_LOG_COMMITTED)
			gbt_xid_committed(copy[i].xid);

	/* Each mirror takes its entries. */
	mine = palloc_extended(sizeof(GbtLogEntry) * Max(n, 1), MCXT_ALLOC_HUGE);
	pos = palloc_extended(sizeof(uint64) * Max(n, 1), MCXT_ALLOC_HUGE);
	for (i = 0; i < GBT_MAX_MIRRORS && n > 0; i++)
	{
		ServiceMirror *sm = &gbt_mirrors[i];
		int64		j;
		int64		nmine = 0;

		if (!sm->in_use)
			continue;
		for (j = 0; j < n; j++)
		{
			if (memcmp(&copy[j].key, &sm->key, sizeof(GbtMirrorKey)) != 0)
				continue;
			mine[nmine] = copy[j];
			pos[nmine++] = from + j;
		}
		if (nmine > 0)
		{
			instr_time	start;

			INSTR_TIME_SET_CURRENT(start);
			gbt_mirror_apply(sm->mirror, mine, pos, nmine);
			report_slow_step(start, "applying the change log", sm, nmine);
			sm->last_changed = GetCurrentTimestamp();
			for (j = 0; j < nmine && sm->rebuild != NULL; j++)
				capture_add(sm->rebuild_log, &mine[j], pos[j]);
			if (sm->rebuild != NULL && sm->rebuild_log->overflow)
				gbt_rebuild_cancel(sm);
		}
	}
	pfree(mine);
	pfree(pos);
	pfree(copy);

	LWLockAcquire(log->lock, LW_EXCLUSIVE);
	log->applied = to;
	LWLockRelease(log->lock);
	return n;
}

/*
 * Drop mirrors whose index (or database) moved to a newer generation: they
 * can never be used again.  Settle stamps, a step at a time, and merge
 * large delta runs the same way, and the engines' chunk sums.  Give back the
 * batch buffers of mirrors nobody asked for a while, and the device copies
 * of columns no aggregate read for a while.  Fold large deltas
 * into new trees.  Evict the least recently used mirrors while all exceed
 * the memory limit.  Returns whether a step is left for the next round.
 */
#define GBT_SCRATCH_KEEP (16 << 20) /* batch buffers an idle mirror keeps */
#define GBT_SCRATCH_IDLE_MS 10000
#define GBT_COPIES_IDLE_MS 10000	/* device copies of host columns kept unread */
#define GBT_SETTLE_INTERVAL_MS 100
#define GBT_SETTLE_IDLE_MS 1000
#define GBT_SETTLE_STEP 16384	/* entries looked at per round */
/*
 * Entries copied into a new tree a round: slices of GBT_REBUILD_STEP while
 * the round's copy has taken less than GBT_REBUILD_STEP_MS, so that the
 * requests of the rounds a fold overlaps wait at most a few ms (a whole
 * 2^20 entries a round took 25-120 ms on the host).  The small layout
 * copies one tiny slice a round, so that tests meet the copy at many
 * points.
 */
#ifndef GBT_REBUILD_STEP		/* make GBT_SMALL_LAYOUT=1: tiny, for tests */
#define GBT_REBUILD_STEP (1 << 16)
#define GBT_REBUILD_STEP_MS 2.0
#else
#define GBT_REBUILD_STEP_MS 0.0
#endif

/*
 * Older than the xmin of every snapshot that can still run, in any
 * database: the shared horizon, computed once per round.
 */
static TransactionId
settle_horizon(TransactionId known)
{
	return TransactionIdIsValid(known) ? known :
		GetOldestNonRemovableTransactionId(NULL);
}

/*
 * A settling pass looks at every stamped entry: worth it when the horizon
 * moved (stamps fall behind it), and now and then for new stamps (aborted
 * transactions, entries logged behind the horizon), but not every round
 * while a long snapshot holds the horizon.
 */
static bool
settle_due(ServiceMirror *sm, TransactionId *horizon)
{
	TimestampTz now;
	int64		stamped = gbt_mirror_stamped(sm->mirror);

	if (stamped == 0)
		return false;
	now = GetCurrentTimestamp();
	if (!TimestampDifferenceExceeds(sm->last_settled, now, GBT_SETTLE_INTERVAL_MS))
		return false;
	*horizon = settle_horizon(*horizon);
	if (!TransactionIdIsValid(*horizon))
		return false;
	return *horizon != sm->settled_horizon || gbt_mirror_lacks_sums(sm->mirror) ||
		(stamped != sm->settled_stamped &&
		 TimestampDifferenceExceeds(sm->last_settled, now, GBT_SETTLE_IDLE_MS));
}

/*
 * Forget what became of transactions that every mirror's last settling
 * pass settled: older than horizon and than each horizon settled to.  A
 * stamp not settled yet keeps its transaction's outcome in the table, or
 * every query asks the commit log for it, one entry at a time.
 */
static void
forget_outcomes(TransactionId horizon)
{
	int			i;

	for (i = 0; i < GBT_MAX_MIRRORS; i++)
	{
		ServiceMirror *sm = &gbt_mirrors[i];

		if (!sm->in_use || (!sm->settling && gbt_mirror_stamped(sm->mirror) == 0))
			continue;
		if (!TransactionIdIsValid(sm->settled_horizon))
			return;
		if (!TransactionIdIsValid(horizon) ||
			TransactionIdPrecedes(sm->settled_horizon, horizon))
			horizon = sm->settled_horizon;
	}
	if (TransactionIdIsValid(horizon))
		gbt_xid_outcomes_forget(horizon);
}

/*
 * A build's chunk sums are all made: its aggregates run at full speed from
 * now on.  One line in the log per build, with where the time went since
 * it was asked for (the same as gpubtree_mirrors().note).
 */
static void
build_at_full_speed(ServiceMirror *sm)
{
	char		text[GBT_ERRMSG_LEN];

	sm->phases.summed = GetCurrentTimestamp();
	gbt_build_phases_text(&sm->phases, text, sizeof(text));
	ereport(LOG,
			(errmsg("gpubtree service: mirror of index %u, %lld entries, %s",
					sm->key.indexrelid, (long long) gbt_mirror_entries(sm->mirror), text)));
}

/* This round's share of the copy into sm's new tree. */
static void
rebuild_copy(ServiceMirror *sm)
{
	instr_time	start,
				now;

	INSTR_TIME_SET_CURRENT(start);
	for (;;)
	{
		if (gbt_rebuild_step(sm->rebuild, sm->mirror, GBT_REBUILD_STEP))
			return;
		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
		if (INSTR_TIME_GET_MILLISEC(now) >= GBT_REBUILD_STEP_MS)
			return;
	}
}

bool
gbt_maintain_mirrors(void)
{
	int			i;
	TransactionId horizon = InvalidTransactionId;
	bool		more = false;

	for (i = 0; i < GBT_MAX_MIRRORS; i++)
	{
		ServiceMirror *sm = &gbt_mirrors[i];
		GbtMirror  *merged;
		char		err[GBT_ERRMSG_LEN];
		instr_time	start;
		bool		tidying;
		int64		dropped;

		if (!sm->in_use)
			continue;
		if (sm->generation < gbt_generation(sm->key.dbid, sm->key.indexrelid) ||
			sm->db_generation != gbt_generation(sm->key.dbid, InvalidOid))
		{
			gbt_drop_mirror(sm);
			continue;
		}
		if (!sm->settling && settle_due(sm, &horizon))
		{
			sm->settling = true;
			sm->settling_horizon = horizon;
		}
		if (sm->settling)
		{
			INSTR_TIME_SET_CURRENT(start);
			if (gbt_mirror_settle(sm->mirror, sm->settling_horizon, GBT_SETTLE_STEP))
			{
				sm->settling = false;
				sm->last_settled = GetCurrentTimestamp();
				sm->settled_horizon = sm->settling_horizon;
				sm->settled_stamped = gbt_mirror_stamped(sm->mirror);
			}
			report_slow_step(start, "settling stamps", sm, gbt_mirror_stamped(sm->mirror));
		}
		more |= sm->settling;
		INSTR_TIME_SET_CURRENT(start);
		more |= gbt_mirror_merge_step(sm->mirror);
		report_slow_step(start, "merging delta runs", sm, gbt_mirror_delta(sm->mirror));
		if (gbt_mirror_scratch_bytes(sm->mirror) > GBT_SCRATCH_KEEP &&
			TimestampDifferenceExceeds(sm->last_used, GetCurrentTimestamp(),
									   GBT_SCRATCH_IDLE_MS))
			gbt_mirror_trim_scratch(sm->mirror);
		dropped = gbt_mirror_drop_idle_copies(sm->mirror, GBT_COPIES_IDLE_MS);
		if (dropped > 0)
			elog(DEBUG1, "gpubtree service: index %u gave back %lld bytes of device copies of its columns, unread for %d ms",
				 sm->key.indexrelid, (long long) dropped, GBT_COPIES_IDLE_MS);
		INSTR_TIME_SET_CURRENT(start);
		tidying = gbt_mirror_tidy_step(sm->mirror);
		more |= tidying;
		report_slow_step(start, "bringing chunk sums up to date", sm,
						 gbt_mirror_entries(sm->mirror));
		if (!tidying && sm->phases.built != 0 && sm->phases.summed == 0)
			build_at_full_speed(sm);
		if (sm->rebuild == NULL &&
			!gbt_mirror_wants_merge(sm->mirror,
									TimestampDifferenceExceeds(sm->last_changed, GetCurrentTimestamp(),
															   GBT_REBUILD_QUIET_MS)))
			continue;
		/* A new tree would make a sliced request over the old one start again. */
		if (gbt_slicing(&sm->key))
			continue;
		INSTR_TIME_SET_CURRENT(start);
		if (sm->rebuild == NULL)
		{
			sm->rebuild = gbt_rebuild_begin(sm->mirror);
			sm->rebuild_log = MemoryContextAllocZero(TopMemoryContext, sizeof(BuildCapture));
			sm->rebuild_log->active = true;
		}
		if (gbt_rebuild_copying(sm->rebuild))
		{
			rebuild_copy(sm);
			report_slow_step(start, "copying entries into a new tree", sm,
							 gbt_rebuild_copied(sm->rebuild));
			more = true;
			continue;
		}
		if (!gbt_rebuild_built(sm->rebuild, sm->mirror))
		{
			report_slow_step(start, "preparing a new tree", sm,
							 gbt_rebuild_copied(sm->rebuild));
			more = true;
			continue;
		}
		merged = gbt_rebuild_finish(sm->rebuild, err, sizeof(err));
		sm->rebuild = NULL;
		if (merged != NULL && sm->rebuild_log->n > 0)
			gbt_mirror_apply(merged, sm->rebuild_log->entries, sm->rebuild_log->pos,
							 sm->rebuild_log->n);
		report_slow_step(start, "applying the changes made during a new tree's build",
						 sm, sm->rebuild_log->n);
		rebuild_log_free(sm);
		if (merged == NULL)
		{
			ereport(LOG,
					(errmsg("gpubtree service: dropping the mirror of index %u: %s",
							sm->key.indexrelid, err)));
			gbt_drop_mirror(sm);
			continue;
		}
		gbt_mirror_free(sm->mirror);
		sm->mirror = merged;
		sm->rebuilds++;
		/* Its stamps were copied over time: none settled yet. */
		sm->settling = false;
		sm->settled_horizon = InvalidTransactionId;
		sm->settled_stamped = 0;
		sm->id = gbt_next_mirror_id++;
	}
	forget_outcomes(horizon);
	free_given_up(false);
	more |= given_up != NIL;

	/* Deltas grow, and gpubtree.mirror_memory_limit may have been lowered. */
	gbt_keep_under_limits();
	return more;
}

