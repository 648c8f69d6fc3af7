/*
 * threads.c
 *	  Running a few pieces of plain computation at once in the service
 *	  (threads.h).  The pieces are memory-bound walks over the mirror's
 *	  arrays, which one core cannot keep enough cache misses in flight for.
 */
#include "postgres.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "threads.h"

/*
 * The pool: GBT_THREADS_MAX - 1 threads started at the first call and kept
 * for the service's life (a thread's start costs about what a small piece
 * does, and a busy service runs thousands of rounds a second).  A call
 * posts its pieces under the mutex, bumps the generation and waits for
 * them; each worker runs the piece of its own number, if any.
 */
typedef struct Pool
{
	pthread_mutex_t mutex;
	pthread_cond_t posted;		/* a new generation of pieces */
	pthread_cond_t done;		/* a worker finished its piece */
	uint64		generation;
	int			npieces;		/* of this generation, piece 0 the caller's */
	int			left;			/* workers' pieces not yet finished */
	void		(*fn) (void *);
	char	   *arg;
	Size		argsize;
	int			nworkers;		/* started */
} Pool;

static Pool pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
PTHREAD_COND_INITIALIZER};
static __thread bool in_worker = false;

static void *
pool_worker(void *p)
{
	int			me = (int) (intptr_t) p;	/* 1 .. GBT_THREADS_MAX - 1 */
	uint64		seen = 0;		/* started before the first generation */

	in_worker = true;
	pthread_mutex_lock(&pool.mutex);
	for (;;)
	{
		while (pool.generation == seen)
			pthread_cond_wait(&pool.posted, &pool.mutex);
		seen = pool.generation;
		if (me < pool.npieces)
		{
			void		(*fn) (void *) = pool.fn;
			char	   *arg = pool.arg + me * pool.argsize;

			pthread_mutex_unlock(&pool.mutex);
			fn(arg);
			pthread_mutex_lock(&pool.mutex);
			if (--pool.left == 0)
				pthread_cond_signal(&pool.done);
		}
	}
	return NULL;
}

/* Start the pool's workers (once; those that fail to start are not used). */
static void
pool_start(void)
{
	sigset_t	all,
				old;
	int			i;

	/* The new threads start with every signal blocked: ours to handle. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 1; i < GBT_THREADS_MAX; i++)
	{
		pthread_t	t;

		if (pthread_create(&t, NULL, pool_worker, (void *) (intptr_t) i) != 0)
			break;
		pthread_detach(t);
		pool.nworkers = i;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int
gbt_threads_wanted(void)
{
	static long cpus = 0;		/* sysconf() reads a file: once */

	if (cpus == 0)
		cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return (int) Max(2, Min(GBT_THREADS_MAX, cpus / 2));
}

void
gbt_run_pieces(void (*fn) (void *), void *arg, Size argsize, int n)
{
	int			posted;
	int			i;

	Assert(n <= GBT_THREADS_MAX);
	if (n <= 1 || in_worker)
	{
		for (i = 0; i < n; i++)
			fn((char *) arg + i * argsize);
		return;
	}
	if (pool.nworkers == 0)
		pool_start();
	posted = Min(n, pool.nworkers + 1);

	pthread_mutex_lock(&pool.mutex);
	pool.fn = fn;
	pool.arg = arg;
	pool.argsize = argsize;
	pool.npieces = posted;
	pool.left = posted - 1;
	pool.generation++;
	pthread_cond_broadcast(&pool.posted);
	pthread_mutex_unlock(&pool.mutex);

	fn(arg);
	for (i = posted; i < n; i++)	/* pieces no worker could take */
		fn((char *) arg + i * argsize);

	pthread_mutex_lock(&pool.mutex);
	while (pool.left > 0)
		pthread_cond_wait(&pool.done, &pool.mutex);
	pthread_mutex_unlock(&pool.mutex);
}
