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
 * sets the pieces, wakes just the workers it needs, each on a semaphore of
 * its own (one condition variable woke them all, and each then waited for
 * the mutex in turn: tens of microseconds before the last piece started,
 * at every call of a round), runs piece 0, and spins a little for the
 * others before sleeping: a round's pieces are short and about equal, and
 * a wake-up of the calling thread is on every round's critical path.
 */
typedef struct Pool
{
	sem_t		go[GBT_THREADS_MAX];	/* worker i: a piece is posted */
	sem_t		done;			/* the last of a call's pieces finished */
	pg_atomic_uint32 left;		/* workers' pieces not yet finished */
	void		(*fn) (void *);
	char	   *arg;
	Size		argsize;
	int			nworkers;		/* started */
} Pool;

static Pool pool;
static bool pool_tried = false;
static __thread bool in_worker = false;
static bool in_call = false;	/* the calling thread runs its pieces */

/* How long the calling thread spins for its pieces before it sleeps. */
#define GBT_PIECES_SPIN_US 200

static void *
pool_worker(void *p)
{
	int			me = (int) (intptr_t) p;	/* 1 .. GBT_THREADS_MAX - 1 */

	in_worker = true;
	for (;;)
	{
		while (sem_wait(&pool.go[me]) != 0)
			;					/* (EINTR) */
		pool.fn(pool.arg + me * pool.argsize);
		if (pg_atomic_sub_fetch_u32(&pool.left, 1) == 0)
			sem_post(&pool.done);
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
	pg_atomic_init_u32(&pool.left, 0);
	for (i = 1; i < GBT_THREADS_MAX; i++)
	{
		pthread_t	t;

		if (sem_init(&pool.go[i], 0, 0) != 0 ||
			!start_thread(&t, pool_worker, (void *) (intptr_t) i))
			break;
		pthread_detach(t);
		pool.nworkers = i;
	}
}

int
gbt_threads_wanted(void)
{
	static long cpus = 0;		/* sysconf() reads a file: once */

	if (cpus == 0)
		cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return (int) Max(2, Min(GBT_THREADS_MAX, cpus / 2));
}

int
gbt_threads_for(int64 n, int64 min_each)
{
	return (int) Max(Min((int64) gbt_threads_wanted(), n / min_each), 1);
}

void
gbt_run_pieces(void (*fn) (void *), void *arg, Size argsize, int n)
{
	int			posted;
	int			i;
	instr_time	start,
				now;

	Assert(n <= GBT_THREADS_MAX);
	if (n <= 1 || in_worker || in_call)
	{
		for (i = 0; i < n; i++)
			fn((char *) arg + i * argsize);
		return;
	}
	if (!pool_tried)
		pool_start();
	posted = Min(n, pool.nworkers + 1);

	pool.fn = fn;
	pool.arg = arg;
	pool.argsize = argsize;
	pg_atomic_write_u32(&pool.left, posted - 1);
	for (i = 1; i < posted; i++)
		sem_post(&pool.go[i]);	/* a full barrier: the worker sees the above */

	in_call = true;
	fn(arg);
	for (i = posted; i < n; i++)	/* pieces no worker could take */
		fn((char *) arg + i * argsize);
	in_call = false;

	/* The last worker posts done once a call: spin for it, then sleep. */
	INSTR_TIME_SET_CURRENT(start);
	for (i = 1; posted > 1 && pg_atomic_read_u32(&pool.left) > 0; i++)
	{
		pg_spin_delay();
		if (i % 64 != 0)
			continue;
		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
		if (INSTR_TIME_GET_MICROSEC(now) > GBT_PIECES_SPIN_US)
			break;
	}
	while (posted > 1 && sem_wait(&pool.done) != 0)
		;						/* EINTR: a signal to the service */
	pg_memory_barrier();
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
