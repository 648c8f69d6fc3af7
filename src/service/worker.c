/*
 * worker.c
 *	  The GPU service's background worker: owns the CUDA context and every
 *	  mirror, and answers backends' requests in batches.
 *
 * It is started by the postmaster when gpubtree is in
 * shared_preload_libraries.  It is the only process that initialises CUDA
 * for mirrors (the postmaster never does), so one context and one copy of
 * each mirror serve every connection.  It connects to no database: backends
 * export an index's entries to it, and it only ever sees keys and TIDs.
 *
 * Requests that arrive within gpubtree.batch_window microseconds of each
 * other are answered together: all ranges asked of one mirror, from any
 * number of sessions, go to the engine in one batched call, where equal
 * keys are searched once.  A request of a long key list is answered a slice
 * at a time (GBT_SLICE_KEYS), the others that came meanwhile in between.
 *
 * While tables are being written the service applies the change log every
 * few milliseconds, not only when a request comes or the log fills: a
 * request then waits only for what was logged since, not for a second of
 * writes.
 */
#include "postgres.h"

#include <unistd.h>

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "service.h"
#include "threads.h"
#include "settings.h"
#include "pg_compat.h"

/* How often the log is applied while entries keep arriving. */
#define GBT_APPLY_INTERVAL_MS 5L

/* Whether the last application of the log found entries. */
static bool log_busy = false;

/*
 * The request segments kept mapped after their answer, one a slot: a
 * backend sends its next request in the same segment (client.c's spare),
 * and attaching and detaching one cost five system calls a request, a
 * third of the service's time under many small requests.  Only segments
 * the backend keeps too (GBT_SEGMENT_KEEP_MAX), and none while no request
 * comes (mapped_drop()); a slot's next request in another segment unmaps
 * the one kept, so at most one a slot outlives its backend's use.
 */
typedef struct MappedSegment
{
	dsm_handle	handle;
	dsm_segment *seg;
} MappedSegment;

static MappedSegment *mapped = NULL;

/* The segment of handle, mapped: the one kept for the slot, or anew. */
static dsm_segment *
mapped_attach(int slotno, dsm_handle handle)
{
	MappedSegment *m = &mapped[slotno];

	if (m->seg != NULL && m->handle == handle)
	{
		dsm_segment *seg = m->seg;

		m->seg = NULL;			/* the request's while it runs */
		return seg;
	}
	if (m->seg != NULL)
		dsm_detach(m->seg);
	m->seg = NULL;
	return dsm_attach(handle);
}

/* After the answer: kept for the slot's next request, if small. */
static void
mapped_release(int slotno, dsm_segment *seg)
{
	MappedSegment *m = &mapped[slotno];

	if (m->seg != NULL || dsm_segment_map_length(seg) > GBT_SEGMENT_KEEP_MAX)
	{
		dsm_detach(seg);
		return;
	}
	m->handle = dsm_segment_handle(seg);
	m->seg = seg;
}

/* Unmap every kept segment (no request for a while). */
static void
mapped_drop(void)
{
	int			i;

	for (i = 0; i < gbt_shared->nslots; i++)
		if (mapped[i].seg != NULL)
		{
			dsm_detach(mapped[i].seg);
			mapped[i].seg = NULL;
		}
}

static void
apply_log(void)
{
	log_busy = gbt_apply_log() > 0;
}

/*
 * Where the service's time goes, summed for the DEBUG1 summary it logs
 * every GBT_SUMMARY_MS while requests come (how a many-client load is
 * diagnosed: which part of a round grows with the sessions).
 */
#define GBT_SUMMARY_MS 10000
typedef enum RoundPart
{
	PART_WAIT,					/* waiting for a request, batch_window */
	PART_TAKE,					/* the submitted requests taken */
	PART_LOG,					/* the change log applied */
	PART_ANSWER,				/* answered */
	PART_REPLY,					/* mirrors published, backends woken */
	PART_SLICES,				/* the sliced requests' slices */
	PART_MAINTAIN,				/* maintenance after the answers */
	PART_COUNT
} RoundPart;
static const char *const part_names[PART_COUNT] = {
	"wait", "take", "log", "answer", "reply", "slices", "maintain"
};
static double part_ms[PART_COUNT];
static instr_time part_since;
static int64 summary_rounds = 0;
static int64 summary_requests = 0;
static TimestampTz summary_since = 0;
static TimestampTz summary_last = 0;	/* the last round's end */

/* The time since the last call goes to part. */
static void
part_done(RoundPart part)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	if (!INSTR_TIME_IS_ZERO(part_since))
		part_ms[part] += INSTR_TIME_GET_MILLISEC(now) - INSTR_TIME_GET_MILLISEC(part_since);
	part_since = now;
}

/*
 * Every GBT_SUMMARY_MS with rounds in it, and when requests stop (a second
 * without one: so a burst, a benchmark's run, has its own): one DEBUG1
 * line.
 */
static void
summary_maybe(bool now_idle)
{
	TimestampTz now = GetCurrentTimestamp();
	StringInfoData buf;
	int			i;

	if (summary_since == 0)
		summary_since = now;
	if (!now_idle)
		summary_last = now;
	if (!now_idle && !TimestampDifferenceExceeds(summary_since, now, GBT_SUMMARY_MS))
		return;
	if (summary_rounds > 0 && message_level_is_interesting(DEBUG1))
	{
		initStringInfo(&buf);
		appendStringInfo(&buf, "gpubtree service: %lld requests in %lld rounds in %.1f s, ms a round:",
						 (long long) summary_requests, (long long) summary_rounds,
						 ((now_idle ? summary_last : now) - summary_since) / 1e6);
		for (i = 0; i < PART_COUNT; i++)
			appendStringInfo(&buf, "%s %s %.3f", i > 0 ? "," : "", part_names[i],
							 part_ms[i] / summary_rounds);
		gbt_note_aggs(&buf);
		gbt_note_lanes(&buf);
		gbt_note_threads(&buf, summary_rounds);
		if (gbt_apply_steps.entries > 0)
			appendStringInfo(&buf, "; the log's %lld entries, ms a round: searching the tree %.3f, inserts %.3f, deletions %.3f",
							 (long long) gbt_apply_steps.entries,
							 gbt_apply_steps.find_ms / summary_rounds,
							 gbt_apply_steps.insert_ms / summary_rounds,
							 gbt_apply_steps.delete_ms / summary_rounds);
		elog(DEBUG1, "%s", buf.data);
		pfree(buf.data);
	}
	else
	{
		gbt_note_aggs(NULL);
		gbt_note_lanes(NULL);
		gbt_note_threads(NULL, 0);
	}
	memset(part_ms, 0, sizeof(part_ms));
	memset(&gbt_apply_steps, 0, sizeof(gbt_apply_steps));
	summary_rounds = summary_requests = 0;
	summary_since = now;
	if (now_idle)
	{
		/*
		 * The next summary's time starts at its first round: the idle time
		 * until then (another benchmark's run) is no round's wait.
		 */
		summary_since = 0;
		INSTR_TIME_SET_ZERO(part_since);
	}
}

void
gbt_service_register(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 5;
	snprintf(worker.bgw_name, BGW_MAXLEN, "gpubtree service");
	snprintf(worker.bgw_type, BGW_MAXLEN, "gpubtree service");
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "gpubtree");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "gpubtree_service_main");
	RegisterBackgroundWorker(&worker);
}

/*
 * Hand the answer back, unless the backend gave up meanwhile: the latch of
 * the backend to wake (NULL: none), which finish() sets at once.
 */
static Latch *
finish_unwoken(TakenRequest *t)
{
	GbtSlot    *slot = &gbt_shared->slots[t->slotno];
	uint32		expected = GBT_SLOT_RUNNING;
	Latch	   *latch = NULL;

	if (t->seg != NULL)
		mapped_release(t->slotno, t->seg);
	pg_write_barrier();
	if (pg_atomic_compare_exchange_u32(&slot->state, &expected, GBT_SLOT_DONE))
		latch = &ProcGlobal->allProcs[slot->client_procno].procLatch;
	else
		pg_atomic_write_u32(&slot->state, GBT_SLOT_FREE);	/* abandoned */
	pg_atomic_fetch_add_u64(&gbt_shared->requests, 1);
	return latch;
}

static void
finish(TakenRequest *t)
{
	Latch	   *latch = finish_unwoken(t);

	if (latch != NULL)
		SetLatch(latch);
}

/*
 * A round's backends woken: a wake-up is a signal, 4-5 us of this thread
 * (a sixth of a round of 36 aggregates on the H100), so many are sent
 * from the pool's threads at once.  SetLatch() may run in a signal
 * handler, so in a pool thread too: it reads the latch and sends a
 * signal, and touches nothing else of ours.
 */
#define GBT_WAKE_PIECE_MIN 8	/* wake-ups a piece sends at least */

typedef struct WakePiece
{
	Latch	  **latches;
	int			from;
	int			to;
} WakePiece;

static void
wake_piece(void *arg)
{
	WakePiece  *p = (WakePiece *) arg;
	int			i;

	for (i = p->from; i < p->to; i++)
		SetLatch(p->latches[i]);
}

static void
wake_all(Latch **latches, int n)
{
	WakePiece	pieces[GBT_THREADS_MAX];
	int			npieces = gbt_threads_for(n, GBT_WAKE_PIECE_MIN);
	int			k;

	for (k = 0; k < npieces; k++)
	{
		pieces[k].latches = latches;
		pieces[k].from = n * k / npieces;
		pieces[k].to = n * (k + 1) / npieces;
	}
	gbt_run_pieces(wake_piece, pieces, sizeof(WakePiece), npieces);
}

/*
 * The BUILD requests, one at a time (build_requests.c): the one whose
 * engine is being built beside the service, and those waiting their turn,
 * in the order they came.  Their segments stay mapped (mapped_drop() waits).
 */
static TakenRequest build_now;
static HeldRequests builds_waiting;

static bool
builds_pending(void)
{
	return gbt_build_running() || builds_waiting.n > 0;
}

/*
 * After the log is applied: publish the build whose engine is done, and
 * start the next.  A build answered at its start (an error) is finished
 * at once.
 */
static void
serve_builds(void)
{
	for (;;)
	{
		if (gbt_build_running())
		{
			if (!gbt_build_ready())
				return;
			gbt_build_finish(&build_now);
			finish(&build_now);
		}
		if (builds_waiting.n == 0)
			return;
		build_now = builds_waiting.items[0];
		gbt_held_remove(&builds_waiting, 0);
		/* (one its backend gave up while it waited: not built for nothing) */
		if (gbt_request_abandoned(&build_now) || gbt_build_start(&build_now))
			finish(&build_now);
	}
}

static int
take_requests(TakenRequest *taken)
{
	int			ntaken = 0;
	int			i;

	for (i = 0; i < gbt_shared->nslots; i++)
	{
		GbtSlot    *slot = &gbt_shared->slots[i];
		uint32		expected = GBT_SLOT_SUBMITTED;

		if (pg_atomic_read_u32(&slot->state) != GBT_SLOT_SUBMITTED ||
			!pg_atomic_compare_exchange_u32(&slot->state, &expected, GBT_SLOT_RUNNING))
			continue;
		pg_read_barrier();
		memset(&taken[ntaken], 0, sizeof(TakenRequest));
		taken[ntaken].slotno = i;
		taken[ntaken].seg = mapped_attach(i, slot->handle);
		taken[ntaken].req = taken[ntaken].seg ? dsm_segment_address(taken[ntaken].seg) : NULL;
		ntaken++;
	}
	return ntaken;
}

static bool
any_submitted(void)
{
	int			i;

	for (i = 0; i < gbt_shared->nslots; i++)
		if (pg_atomic_read_u32(&gbt_shared->slots[i].state) == GBT_SLOT_SUBMITTED)
			return true;
	return false;
}

/*
 * A clean stop (server shutdown, pg_terminate_backend) exits without the
 * FATAL "terminating background worker" that die() logs: with exit code 1,
 * as PostgreSQL's own launchers do, so that the postmaster still restarts
 * the service after bgw_restart_time unless it is itself stopping.
 */
static void
stop_if_asked(void)
{
	if (ShutdownRequestPending)
	{
		ereport(DEBUG1, (errmsg("gpubtree service stopping")));
		proc_exit(1);
	}
	CHECK_FOR_INTERRUPTS();
}

/*
 * Slices of the sliced requests, one request after another: one slice each
 * round (however many others keep coming), then more until none is left or
 * another request waits, which so waits for one slice at most.  The log is
 * applied before each slice, as before every round.
 */
static void
serve_slices(void)
{
	bool		first = true;

	while (gbt_slices_queued() > 0 && (first || !any_submitted()))
	{
		TakenRequest *t;

		stop_if_asked();
		first = false;
		t = gbt_slices_next();
		apply_log();
		if (!gbt_request_abandoned(t) && !gbt_answer_slice(t))
		{
			gbt_slices_pass();
			continue;
		}
		finish(t);
		gbt_slices_remove();
	}
}

static bool
serve_round(void)
{
	TakenRequest *taken = palloc(sizeof(TakenRequest) * gbt_shared->nslots);
	int			ntaken = take_requests(taken);
	Latch	  **wake = palloc(sizeof(Latch *) * Max(ntaken, 1));
	int			nwake = 0;
	int			i;
	bool		more;

	part_done(PART_TAKE);
	summary_rounds++;
	summary_requests += ntaken;

	/* Taken first: every entry logged before a request is applied for it. */
	apply_log();
	part_done(PART_LOG);
	serve_builds();
	gbt_answer_requests(taken, ntaken);
	part_done(PART_ANSWER);

	/* Published before the answers, so that askers see the new state. */
	gbt_publish_mirrors();
	for (i = 0; i < ntaken; i++)
	{
		if (taken[i].build)
			gbt_held_add(&builds_waiting, &taken[i]);	/* serve_builds() starts it */
		else if (!taken[i].sliced)
		{
			Latch	   *latch = finish_unwoken(&taken[i]);

			if (latch != NULL)
				wake[nwake++] = latch;
		}
		else
			gbt_slices_add(&taken[i]);
	}
	wake_all(wake, nwake);
	pfree(wake);
	pfree(taken);
	part_done(PART_REPLY);

	/* The sliced requests, after the others. */
	serve_slices();
	part_done(PART_SLICES);

	/* Maintenance after the answers: no request waits for it. */
	more = gbt_maintain_mirrors();
	gbt_publish_mirrors();
	part_done(PART_MAINTAIN);
	summary_maybe(false);
	return more;
}

static void
service_exit(int code, Datum arg)
{
	int			i;

	gbt_rebuilds_end();
	gbt_build_end();
	SpinLockAcquire(&gbt_shared->mutex);
	gbt_shared->service_pid = 0;
	gbt_shared->gpu_usable = false;
	strlcpy(gbt_shared->status, "stopped", GBT_ERRMSG_LEN);
	for (i = 0; i < GBT_MAX_MIRRORS; i++)
		gbt_shared->mirrors[i].in_use = false;
	gbt_shared->mirror_bytes = 0;
	SpinLockRelease(&gbt_shared->mutex);

	/*
	 * Requests we held will never be answered: free their slots.  Their
	 * backends notice that we are gone and use nbtree.
	 */
	for (i = 0; i < gbt_shared->nslots; i++)
	{
		uint32		state = pg_atomic_read_u32(&gbt_shared->slots[i].state);

		if (state == GBT_SLOT_RUNNING || state == GBT_SLOT_ABANDONED)
			pg_atomic_write_u32(&gbt_shared->slots[i].state, GBT_SLOT_FREE);
	}
}

void
gpubtree_service_main(Datum arg)
{
	MemoryContext round_cxt;
	bool		more = false;	/* maintenance left for the next round */
	char		name[64] = "";
	char		why[GBT_ERRMSG_LEN] = "";

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	gbt_choose_engine(name, sizeof(name), why, sizeof(why));
	if (gbt_no_engine[0] != '\0')
		ereport(LOG,
				(errmsg("gpubtree service: %s", gbt_no_engine),
				 errhint("Set gpubtree.engine = auto to use the CPU engine without a GPU.")));

	/*
	 * Entries logged before we started belong to a previous service's
	 * mirrors; exports registered with it are refused (service_pid).
	 */
	LWLockAcquire(gbt_shared->log.lock, LW_EXCLUSIVE);
	gbt_shared->log.applied = gbt_shared->log.head;
	SpinLockAcquire(&gbt_shared->mutex);
	gbt_shared->service_pid = MyProcPid;
	gbt_shared->service_procno = MyProcNumber;
	gbt_shared->gpu_usable = gbt_gpu_usable;
	strlcpy(gbt_shared->device_name, name, sizeof(gbt_shared->device_name));
	if (gbt_gpu_usable && gbt_ndevices > 1)
		snprintf(gbt_shared->status, GBT_ERRMSG_LEN, "running on %d GPUs", gbt_ndevices);
	else if (gbt_gpu_usable)
		strlcpy(gbt_shared->status, "running on the GPU", GBT_ERRMSG_LEN);
	else if (gbt_no_engine[0] != '\0')
		snprintf(gbt_shared->status, GBT_ERRMSG_LEN, "running without an engine: %s",
				 gbt_no_engine);
	else
		snprintf(gbt_shared->status, GBT_ERRMSG_LEN,
				 "running on the CPU engine: %s", why);
	SpinLockRelease(&gbt_shared->mutex);
	LWLockRelease(gbt_shared->log.lock);
	gbt_set_memory_limit();
	before_shmem_exit(service_exit, (Datum) 0);

	/* One line at start: what answers, and how much it may hold. */
	ereport(LOG,
			(errmsg("gpubtree service %s; mirrors up to %lld MB (%s)",
					gbt_shared->status, (long long) (gbt_memory_limit >> 20),
					gbt_shared->memory_limit_source)));
	if (gbt_ndevices > 1)
	{
		char		devices[GBT_ERRMSG_LEN];

		gbt_devices_text(devices, sizeof(devices));
		ereport(LOG,
				(errmsg("gpubtree service: mirrors placed on %d devices, each within its share: %s",
						gbt_ndevices, devices)));
	}

	gbt_captures = MemoryContextAllocZero(TopMemoryContext,
									  sizeof(BuildCapture) * gbt_shared->nslots);
	mapped = MemoryContextAllocZero(TopMemoryContext,
									sizeof(MappedSegment) * gbt_shared->nslots);
	round_cxt = AllocSetContextCreate(TopMemoryContext, "gpubtree service round",
									  ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		MemoryContext oldcxt;
		int			woke;

		woke = WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 gbt_slices_queued() > 0 || builds_waiting.n > 0 ? 0L :
						 more || gbt_build_running() ? 1L :
						 log_busy ? GBT_APPLY_INTERVAL_MS : 1000L,
						 PG_WAIT_EXTENSION);
		if ((woke & WL_TIMEOUT) && !more && !log_busy && gbt_slices_queued() == 0 &&
			!builds_pending())
		{
			mapped_drop();		/* a second without a request */
			summary_maybe(true);
		}
		ResetLatch(MyLatch);
		stop_if_asked();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			gbt_set_memory_limit();
		}
		if (!any_submitted() && gbt_slices_queued() == 0)
		{
			/* Keep the log from filling while no one asks anything. */
			oldcxt = MemoryContextSwitchTo(round_cxt);
			apply_log();
			serve_builds();
			more = gbt_maintain_mirrors();
			gbt_publish_mirrors();
			MemoryContextSwitchTo(oldcxt);
			MemoryContextReset(round_cxt);
			continue;
		}

		/* Let requests from other sessions join this round. */
		if (gpubtree_batch_window > 0 && any_submitted())
			pg_usleep(gpubtree_batch_window);
		part_done(PART_WAIT);

		oldcxt = MemoryContextSwitchTo(round_cxt);
		more = serve_round();
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(round_cxt);
	}
}
