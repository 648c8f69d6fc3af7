/*
 * service.c
 *	  Shared memory of the GPU service, and the backend's side of its protocol
 *	  (see service.h).
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "gpubtree.h"
#include "service.h"

GbtServiceShared *gbt_shared = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static bool slot_cleanup_registered = false;

static Size
service_shmem_size(void)
{
	return add_size(offsetof(GbtServiceShared, slots),
					mul_size(MaxBackends + NUM_AUXILIARY_PROCS + max_worker_processes,
							 sizeof(GbtSlot)));
}

static void
service_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(service_shmem_size());
}

static void
service_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	gbt_shared = ShmemInitStruct("gpubtree service", service_shmem_size(), &found);
	if (!found)
	{
		int			i;

		memset(gbt_shared, 0, service_shmem_size());
		SpinLockInit(&gbt_shared->mutex);
		strlcpy(gbt_shared->status, "not started", GBT_ERRMSG_LEN);
		pg_atomic_init_u64(&gbt_shared->requests, 0);
		pg_atomic_init_u64(&gbt_shared->fallbacks, 0);
		pg_atomic_init_u64(&gbt_shared->builds, 0);
		for (i = 0; i < GBT_CHANGE_COUNTERS; i++)
			pg_atomic_init_u64(&gbt_shared->change_counter[i], 0);
		gbt_shared->nslots = MaxBackends + NUM_AUXILIARY_PROCS + max_worker_processes;
		for (i = 0; i < gbt_shared->nslots; i++)
			pg_atomic_init_u32(&gbt_shared->slots[i].state, GBT_SLOT_FREE);
	}
	LWLockRelease(AddinShmemInitLock);
}

/* Called from _PG_init while shared_preload_libraries are loaded. */
void
gbt_service_shmem_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = service_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = service_shmem_startup;
}

bool
gbt_service_running(void)
{
	pid_t		pid;

	if (gbt_shared == NULL)
		return false;
	SpinLockAcquire(&gbt_shared->mutex);
	pid = gbt_shared->service_pid;
	SpinLockRelease(&gbt_shared->mutex);
	return pid != 0;
}

static pg_atomic_uint64 *
change_counter_for(Oid dbid, Oid indexrelid)
{
	uint32		h = hash_combine(murmurhash32(dbid), murmurhash32(indexrelid));

	return &gbt_shared->change_counter[h % GBT_CHANGE_COUNTERS];
}

uint64
gbt_change_counter(Oid dbid, Oid indexrelid)
{
	if (gbt_shared == NULL)
		return 0;
	return pg_atomic_read_u64(change_counter_for(dbid, indexrelid));
}

/*
 * Called by every insert into, and every VACUUM pass over, a gpubtree index,
 * before the change can become visible to anyone.  The atomic add is a full
 * barrier, so a snapshot that sees the change sees the new counter.
 */
void
gbt_bump_change_counter(Relation index)
{
	if (gbt_shared == NULL)
		return;
	pg_atomic_fetch_add_u64(change_counter_for(MyDatabaseId,
											   RelationGetRelid(index)), 1);
}

void
gbt_count_fallback(void)
{
	if (gbt_shared != NULL)
		pg_atomic_fetch_add_u64(&gbt_shared->fallbacks, 1);
}

/*
 * Create a request segment with room for datasize bytes of request data and
 * resultsize bytes of answer.  The segment belongs to the current resource
 * owner, so an error anywhere detaches it.
 */
GbtRequest *
gbt_request_create(dsm_segment **seg, Size datasize, Size resultsize)
{
	Size		size = add_size(add_size(MAXALIGN(sizeof(GbtRequest)),
										 MAXALIGN(datasize)), resultsize);
	GbtRequest *req;

	*seg = dsm_create(size, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (*seg == NULL)
		return NULL;
	req = dsm_segment_address(*seg);
	memset(req, 0, sizeof(GbtRequest));
	req->capacity = size;
	return req;
}

static GbtSlot *
my_slot(void)
{
	return &gbt_shared->slots[MyProc->pgprocno];
}

/*
 * Withdraw our request: the service either never took it (FREE again), or
 * will find it ABANDONED and free the slot itself.
 */
static void
abandon_slot(void)
{
	GbtSlot    *slot = my_slot();
	uint32		expected = GBT_SLOT_SUBMITTED;

	if (pg_atomic_compare_exchange_u32(&slot->state, &expected, GBT_SLOT_FREE))
		return;
	expected = GBT_SLOT_RUNNING;
	if (pg_atomic_compare_exchange_u32(&slot->state, &expected, GBT_SLOT_ABANDONED))
		return;
	expected = GBT_SLOT_DONE;
	(void) pg_atomic_compare_exchange_u32(&slot->state, &expected, GBT_SLOT_FREE);
}

static void
slot_cleanup(int code, Datum arg)
{
	if (gbt_shared != NULL && MyProc != NULL)
		abandon_slot();
}

/*
 * Send the request in seg and wait for the answer, at most
 * gpubtree.service_timeout milliseconds.  Returns true when the service
 * answered (the reply is in the request); false when it is not running,
 * busy with our previous, abandoned request, or did not answer in time.
 * Query cancel and statement_timeout interrupt the wait as usual.
 */
bool
gbt_request_send(dsm_segment *seg)
{
	GbtSlot    *slot;
	TimestampTz deadline;
	int			service_procno;
	bool		answered = false;

	if (!gbt_service_running())
		return false;

	if (!slot_cleanup_registered)
	{
		before_shmem_exit(slot_cleanup, (Datum) 0);
		slot_cleanup_registered = true;
	}

	slot = my_slot();
	if (pg_atomic_read_u32(&slot->state) != GBT_SLOT_FREE)
		return false;			/* the service still holds an old request */

	slot->handle = dsm_segment_handle(seg);
	slot->client_procno = MyProc->pgprocno;
	pg_write_barrier();
	pg_atomic_write_u32(&slot->state, GBT_SLOT_SUBMITTED);

	SpinLockAcquire(&gbt_shared->mutex);
	service_procno = gbt_shared->service_procno;
	SpinLockRelease(&gbt_shared->mutex);
	SetLatch(&ProcGlobal->allProcs[service_procno].procLatch);

	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
										   gpubtree_service_timeout);
	PG_TRY();
	{
		for (;;)
		{
			long		remaining;

			if (pg_atomic_read_u32(&slot->state) == GBT_SLOT_DONE)
			{
				pg_read_barrier();
				answered = true;
				break;
			}
			remaining = TimestampDifferenceMilliseconds(GetCurrentTimestamp(),
														deadline);
			if (remaining <= 0 || !gbt_service_running())
				break;
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 Min(remaining, 100L), PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_CATCH();
	{
		abandon_slot();
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (answered)
		pg_atomic_write_u32(&slot->state, GBT_SLOT_FREE);
	else
		abandon_slot();
	return answered;
}
