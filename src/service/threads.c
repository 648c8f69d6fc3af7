/*
 * threads.c
 *	  Running a few pieces of plain computation at once in the service
 *	  (threads.h).  The pieces are memory-bound walks over the mirror's
 *	  arrays, which one core cannot keep enough cache misses in flight for.
 */
#include "postgres.h"

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <unistd.h>

#include "port/atomics.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "threads.h"

/*
 * The pool: GBT_THREADS_MAX - 1 threads started at the first call and kept
 * for the service's life (a thread's start costs about what a small piece
 * does, and a busy service runs thousands of rounds a second).  A call
 * publishes its pieces, and every thread, the calling one too, claims
 * them one at a time until none is left: a thread that is slow to wake
 * (on a host whose cores the backends and writers keep busy) finds its
 * share done by the others instead of holding up the round, whose
 * calling thread waited for the last thread to start before.  A worker
 * spins a little after its last piece, as a round's next call comes in
 * tens of microseconds, and then sleeps on a semaphore of its own, which
 * only the calls that find it asleep post.
 */
typedef struct Pool
{
	sem_t		go[GBT_THREADS_MAX];	/* worker i: woken */
	pg_atomic_uint32 asleep[GBT_THREADS_MAX];	/* worker i: sleeps on go[i] */
	sem_t		done;			/* a worker finished a call's last piece */
	pg_atomic_uint64 claim;		/* CLAIM(call's number, its pieces, next) */
	pg_atomic_uint32 finished;	/* the call's pieces finished */
	void		(*fn) (void *);
	char	   *arg;
	Size		argsize;
	uint64		calls;
	int			nworkers;		/* started */
} Pool;

/*
 * A claim word holds the call's pieces as well as the next one: a worker
 * decides from the word alone whether a piece is left, as the call's
 * fields may already be the next call's when the word is read (the pieces
 * of an older call are all claimed, so its word fails the swap).
 */
#define CLAIM(call, n, next) (((uint64) (call) << 16) | ((uint64) (n) << 8) | (uint64) (next))
#define CLAIM_N(claim) ((uint32) (((claim) >> 8) & 0xff))
#define CLAIM_NEXT(claim) ((uint32) ((claim) & 0xff))

static Pool pool;
static bool pool_tried = false;
static __thread bool in_worker = false;
static bool in_call = false;	/* the calling thread runs its pieces */

/* How long the calling thread spins for its pieces before it sleeps. */
#define GBT_PIECES_SPIN_US 200

/* How long a worker spins for the next call before it sleeps. */
#define GBT_WORKER_SPIN_US 30

/* The calls' times, for the service's summary (gbt_note_threads()). */
static int64 note_calls = 0;
static int64 note_pieces = 0;
static int64 note_pieces_here = 0;	/* run by the calling thread */
static double note_call_ms = 0;
static double note_wait_ms = 0; /* after its claims: for the others' pieces */

/*
 * Claim and run the current call's pieces until none is left; whether this
 * thread finished its last one (ran, if not NULL, counts the pieces run).
 * A claim is a compare-and-swap of the call's number with its next piece:
 * a worker that read an older call's fields fails it and reads them again.
 */
static bool
run_claimed(int64 *ran)
{
	bool		last = false;

	for (;;)
	{
		uint64		claim = pg_atomic_read_u64(&pool.claim);
		void		(*fn) (void *);
		char	   *arg;
		Size		argsize;

		if (CLAIM_NEXT(claim) >= CLAIM_N(claim))
			return last;
		pg_read_barrier();
		fn = pool.fn;
		arg = pool.arg;
		argsize = pool.argsize;
		if (!pg_atomic_compare_exchange_u64(&pool.claim, &claim, claim + 1))
			continue;
		fn(arg + CLAIM_NEXT(claim) * argsize);
		if (ran != NULL)
			(*ran)++;
		last = pg_atomic_add_fetch_u32(&pool.finished, 1) == CLAIM_N(claim);
	}
}

/* Whether the current call has pieces left to claim (a hint). */
static bool
pieces_left(uint32 unused)
{
	uint64		claim = pg_atomic_read_u64(&pool.claim);

	return CLAIM_NEXT(claim) < CLAIM_N(claim);
}

/* Whether the current call's n pieces are all finished. */
static bool
all_finished(uint32 n)
{
	return pg_atomic_read_u32(&pool.finished) >= n;
}

/*
 * Spin for up to us microseconds until cond(arg) holds (whether it does):
 * the pool's waits are tens of microseconds, shorter than a sleep and a
 * wake-up.
 */
static bool
spin_until(bool (*cond) (uint32), uint32 arg, int64 us)
{
	instr_time	start,
				now;
	int			i;

	INSTR_TIME_SET_CURRENT(start);
	for (i = 1; !cond(arg); i++)
	{
		pg_spin_delay();
		if (i % 64 != 0)
			continue;
		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
		if (INSTR_TIME_GET_MICROSEC(now) > us)
			return cond(arg);
	}
	return true;
}

static void *
pool_worker(void *p)
{
	int			me = (int) (intptr_t) p;	/* 1 .. GBT_THREADS_MAX - 1 */

	in_worker = true;
	for (;;)
	{
		if (run_claimed(NULL))
			sem_post(&pool.done);

		/* the round's next call, spun for a little */
		if (spin_until(pieces_left, 0, GBT_WORKER_SPIN_US))
			continue;

		/*
		 * Asleep, then a last look: a call published before the flag was
		 * seen wakes no one, so the worker takes the flag back itself;
		 * if the call took it first, its post is consumed below.
		 */
		pg_atomic_write_u32(&pool.asleep[me], 1);
		pg_memory_barrier();
		if (pieces_left(0) && pg_atomic_exchange_u32(&pool.asleep[me], 0) == 1)
			continue;
		while (sem_wait(&pool.go[me]) != 0)
			;					/* (EINTR) */
	}
	return NULL;
}

static bool start_thread(pthread_t *t, void *(*main) (void *), void *arg);

/* Start the pool's workers (once; those that fail to start are not used). */
static void
pool_start(void)
{
	int			i;

	pool_tried = true;
	if (sem_init(&pool.done, 0, 0) != 0)
		return;
	pg_atomic_init_u64(&pool.claim, 0);
	pg_atomic_init_u32(&pool.finished, 0);
	for (i = 1; i < GBT_THREADS_MAX; i++)
	{
		pthread_t	t;

		pg_atomic_init_u32(&pool.asleep[i], 0);
		if (sem_init(&pool.go[i], 0, 0) != 0 ||
			!start_thread(&t, pool_worker, (void *) (intptr_t) i))
			break;
		pthread_detach(t);
		pool.nworkers = i;
	}
}

#ifndef GBT_THREADS_CPUS		/* test/service sets the CPUs it pretends to have */
#define GBT_THREADS_CPUS sysconf(_SC_NPROCESSORS_ONLN)
#endif

int
gbt_threads_wanted(void)
{
	static long cpus = 0;		/* sysconf() reads a file: once */

	if (cpus == 0)
		cpus = GBT_THREADS_CPUS;
	return (int) Max(2, Min(GBT_THREADS_MAX, cpus / 2));
}

int
gbt_threads_for(int64 n, int64 min_each)
{
	return (int) Max(Min((int64) gbt_threads_wanted(), n / min_each), 1);
}

int
gbt_pieces_wanted(void)
{
	return 2 * gbt_threads_wanted();
}

int
gbt_pieces_for_units(int64 n, int64 min_each)
{
	return (int) Max(Min((int64) gbt_pieces_wanted(), n / min_each), 1);
}

/*
 * The call's n pieces are claimed and the last one is a worker's: spin for
 * it, then sleep until the worker that finishes it posts done (it posts
 * once a call, so the post is taken even when the spin saw it finish).
 */
static void
wait_for_last(uint32 n)
{
	instr_time	start,
				now;

	INSTR_TIME_SET_CURRENT(start);
	(void) spin_until(all_finished, n, GBT_PIECES_SPIN_US);
	while (sem_wait(&pool.done) != 0)
		;						/* EINTR: a signal to the service */
	pg_memory_barrier();
	INSTR_TIME_SET_CURRENT(now);
	note_wait_ms += INSTR_TIME_GET_MILLISEC(now) - INSTR_TIME_GET_MILLISEC(start);
}

void
gbt_run_pieces(void (*fn) (void *), void *arg, Size argsize, int n)
{
	int64		here = 0;
	int			helpers;
	int			woken = 0;
	int			i;
	instr_time	start,
				now;

	Assert(n <= GBT_PIECES_MAX);
	StaticAssertStmt(GBT_PIECES_MAX <= 0xff, "a call's pieces fit a claim word");
	if (!pool_tried && n > 1 && !in_worker && !in_call)
		pool_start();
	if (n <= 1 || in_worker || in_call || pool.nworkers == 0)
	{
		for (i = 0; i < n; i++)
			fn((char *) arg + i * argsize);
		return;
	}
	INSTR_TIME_SET_CURRENT(start);

	pool.fn = fn;
	pool.arg = arg;
	pool.argsize = argsize;
	pg_atomic_write_u32(&pool.finished, 0);
	pg_write_barrier();
	pg_atomic_write_u64(&pool.claim, CLAIM(++pool.calls, n, 0));
	pg_memory_barrier();

	/*
	 * The sleeping workers woken, as many as the others' pieces, of the
	 * first gbt_threads_wanted() - 1 only: pieces past the threads (finer
	 * ones) take no more cores.
	 */
	helpers = Min(pool.nworkers, gbt_threads_wanted() - 1);
	for (i = 1; i <= helpers && woken < n - 1; i++)
		if (pg_atomic_read_u32(&pool.asleep[i]) != 0 &&
			pg_atomic_exchange_u32(&pool.asleep[i], 0) == 1)
		{
			sem_post(&pool.go[i]);
			woken++;
		}

	in_call = true;
	if (!run_claimed(&here))
		wait_for_last((uint32) n);
	in_call = false;
	pg_memory_barrier();
	INSTR_TIME_SET_CURRENT(now);
	note_call_ms += INSTR_TIME_GET_MILLISEC(now) - INSTR_TIME_GET_MILLISEC(start);
	note_calls++;
	note_pieces += n;
	note_pieces_here += here;
}

void
gbt_note_threads(StringInfo buf, int64 rounds)
{
	if (buf != NULL && note_calls > 0 && rounds > 0)
		appendStringInfo(buf, "; the threads: %.1f calls a round, ms a round in them %.3f, of which waiting for the last piece %.3f; %.0f %% of the pieces in the calling thread",
						 (double) note_calls / rounds, note_call_ms / rounds,
						 note_wait_ms / rounds, 100.0 * note_pieces_here / note_pieces);
	note_calls = note_pieces = note_pieces_here = 0;
	note_call_ms = note_wait_ms = 0;
}

/*
 * The background jobs.  A job is rare (a new tree now and then) and long
 * (tens of milliseconds to seconds): a thread started for it, and threads
 * started for its pieces, cost nothing next to it and keep the pool to the
 * service's thread alone.
 */
struct GbtBackground
{
	pthread_t	thread;
	void		(*fn) (void *);
	void	   *arg;
	pg_atomic_uint32 done;
};

static void *
background_main(void *p)
{
	GbtBackground *job = (GbtBackground *) p;

	in_worker = true;			/* a gbt_run_pieces() from fn runs inline */
	job->fn(job->arg);
	pg_atomic_write_u32(&job->done, 1);
	return NULL;
}

/* pthread_create() with every signal blocked in the new thread: ours to handle. */
static bool
start_thread(pthread_t *t, void *(*main) (void *), void *arg)
{
	sigset_t	all,
				old;
	bool		ok;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ok = pthread_create(t, NULL, main, arg) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ok;
}

GbtBackground *
gbt_background_start(void (*fn) (void *), void *arg)
{
	GbtBackground *job = MemoryContextAllocZero(TopMemoryContext, sizeof(GbtBackground));

	job->fn = fn;
	job->arg = arg;
	pg_atomic_init_u32(&job->done, 0);
	pg_memory_barrier();
	if (!start_thread(&job->thread, background_main, job))
	{
		pfree(job);
		return NULL;
	}
	return job;
}

bool
gbt_background_done(GbtBackground *job)
{
	return pg_atomic_read_u32(&job->done) != 0;
}

void
gbt_background_wait(GbtBackground *job)
{
	pthread_join(job->thread, NULL);
	pg_memory_barrier();
	pfree(job);
}

typedef struct SpawnedPiece
{
	void		(*fn) (void *);
	void	   *arg;
} SpawnedPiece;

static void *
spawned_main(void *p)
{
	SpawnedPiece *piece = (SpawnedPiece *) p;

	in_worker = true;
	piece->fn(piece->arg);
	return NULL;
}

void
gbt_run_pieces_spawned(void (*fn) (void *), void *arg, Size argsize, int n)
{
	pthread_t	threads[GBT_THREADS_MAX];
	SpawnedPiece pieces[GBT_THREADS_MAX];
	bool		started[GBT_THREADS_MAX] = {false};
	int			i;

	Assert(n <= GBT_THREADS_MAX);
	for (i = 1; i < n; i++)
	{
		pieces[i].fn = fn;
		pieces[i].arg = (char *) arg + i * argsize;
		started[i] = start_thread(&threads[i], spawned_main, &pieces[i]);
	}
	for (i = 0; i < n; i++)		/* piece 0, and those no thread took */
		if (!started[i])
			fn((char *) arg + i * argsize);
	for (i = 1; i < n; i++)
		if (started[i])
			pthread_join(threads[i], NULL);
}
