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

typedef struct Piece
{
	void		(*fn) (void *);
	void	   *arg;
} Piece;

static void *
run_piece(void *p)
{
	((Piece *) p)->fn(((Piece *) p)->arg);
	return NULL;
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
	pthread_t	threads[GBT_THREADS_MAX];
	Piece		pieces[GBT_THREADS_MAX];
	bool		started[GBT_THREADS_MAX] = {0};
	sigset_t	all,
				old;
	int			i;

	Assert(n <= GBT_THREADS_MAX);

	/* The new threads start with every signal blocked: ours to handle. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 1; i < n; i++)
	{
		pieces[i].fn = fn;
		pieces[i].arg = (char *) arg + i * argsize;
		started[i] = pthread_create(&threads[i], NULL, run_piece, &pieces[i]) == 0;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	fn(arg);
	for (i = 1; i < n; i++)
	{
		if (started[i])
			pthread_join(threads[i], NULL);
		else
			fn((char *) arg + i * argsize);
	}
}
