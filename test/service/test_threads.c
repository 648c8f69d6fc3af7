/*
 * test_threads.c
 *	  threads.c's pool against what its callers lean on, on every call
 *	  shape: every piece of a call run exactly once and finished when the
 *	  call returns, for each count of pieces up to GBT_PIECES_MAX, pieces
 *	  of every length profile, calls back to back and after pauses (the
 *	  workers spinning, then asleep), and calls made from a piece (run in
 *	  its own thread); and the pool's threads used at all.  Thousands of
 *	  calls with random lengths: a claim handed out twice, a piece left
 *	  out or a call returning early shows as a count other than one.
 */
#include "postgres.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "threads.h"

#undef printf
#undef fprintf

/* The length profiles of a call's pieces, in spins of a busy loop. */
typedef enum
{
	LEN_NONE,					/* no work: the claims race each other */
	LEN_SHORT,					/* about a microsecond each */
	LEN_ONE_LONG,				/* one long piece among short ones */
	LEN_RANDOM,					/* anything up to ~100 us */
	LEN_COUNT
} Lengths;

static const char *const len_names[LEN_COUNT] = {"none", "short", "one long", "random"};

typedef struct Piece
{
	int		   *runs;			/* the call's counts, one a piece */
	int			idx;
	long		spins;
	int			nested;			/* pieces of a call made from this one */
	int			outer_n;		/* the pieces of this piece's call */
	pthread_t	ran_in;
} Piece;

static long checks = 0;
static long failures = 0;

#define CHECK(cond, ...) \
	do { \
		checks++; \
		if (!(cond)) \
		{ \
			failures++; \
			if (failures <= 20) \
			{ \
				fprintf(stderr, "FAILED: "); \
				fprintf(stderr, __VA_ARGS__); \
				fprintf(stderr, "\n"); \
			} \
		} \
	} while (0)

static unsigned long long rng = 88172645463325252ULL;

static long
below(long n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (long) (rng % (unsigned long long) n);
}

static void
spin(long n)
{
	volatile long i;

	for (i = 0; i < n; i++)
		;
}

static void
nested_piece(void *arg)
{
	Piece	   *p = (Piece *) arg;

	__atomic_add_fetch(&p->runs[p->idx], 1, __ATOMIC_SEQ_CST);
	p->ran_in = pthread_self();
}

static void
piece(void *arg)
{
	Piece	   *p = (Piece *) arg;

	spin(p->spins);
	if (p->nested > 0)
	{
		/* a call from a piece: run here, in this thread, one after another */
		Piece		inner[GBT_PIECES_MAX];
		int			runs[GBT_PIECES_MAX] = {0};
		int			i;
		int			ok = 1;

		for (i = 0; i < p->nested; i++)
		{
			inner[i].runs = runs;
			inner[i].idx = i;
			inner[i].spins = 0;
			inner[i].nested = 0;
		}
		gbt_run_pieces(nested_piece, inner, sizeof(Piece), p->nested);
		/* (a call of one piece runs it as a plain call: the pool is free) */
		for (i = 0; i < p->nested; i++)
			ok &= runs[i] == 1 &&
				(p->outer_n == 1 || pthread_equal(inner[i].ran_in, pthread_self()));
		if (!ok)
			__atomic_add_fetch(&p->runs[p->idx], 100, __ATOMIC_SEQ_CST);
	}
	p->ran_in = pthread_self();
	__atomic_add_fetch(&p->runs[p->idx], 1, __ATOMIC_SEQ_CST);
}

/* One call of n pieces of profile len; whether they ran in 2+ threads. */
static int
one_call(int n, Lengths len, int nested)
{
	Piece		pieces[GBT_PIECES_MAX];
	int			runs[GBT_PIECES_MAX] = {0};
	int			long_one = (int) below(n);
	int			threads = 1;
	int			i;
	int			j;

	for (i = 0; i < n; i++)
	{
		pieces[i].runs = runs;
		pieces[i].idx = i;
		pieces[i].spins = len == LEN_NONE ? 0 :
			len == LEN_SHORT ? 300 :
			len == LEN_ONE_LONG ? (i == long_one ? 200000 : 300) :
			below(30000);
		pieces[i].outer_n = n;
		pieces[i].nested = nested && below(3) == 0 ? 1 + (int) below(GBT_PIECES_MAX) : 0;
	}
	gbt_run_pieces(piece, pieces, sizeof(Piece), n);
	for (i = 0; i < n; i++)
		CHECK(runs[i] == 1, "%d pieces (%s%s): piece %d ran %d times when the call returned%s",
			  n, len_names[len], nested ? ", nested calls" : "", i, runs[i] % 100,
			  runs[i] >= 100 ? ", and a call from it did not run its own pieces once each, in its thread" : "");
	for (i = 1; i < n; i++)
	{
		for (j = 0; j < i && !pthread_equal(pieces[j].ran_in, pieces[i].ran_in); j++)
			;
		threads += j == i;
	}
	return threads > 1;
}

int
main(int argc, char **argv)
{
	long		rounds = argc > 1 ? atol(argv[1]) : 300;
	long		parallel = 0;
	long		long_calls = 0;
	long		r;
	int			n;
	int			len;

	for (r = 0; r < rounds; r++)
		for (n = 1; n <= GBT_PIECES_MAX; n++)
			for (len = 0; len < LEN_COUNT; len++)
			{
				int			nested = below(4) == 0;
				int			used = one_call(n, (Lengths) len, nested);

				if (len == LEN_ONE_LONG && n > 1)
				{
					long_calls++;
					parallel += used;
				}
				/* now and then a pause: the workers stop spinning and sleep */
				if (below(16) == 0)
				{
					struct timespec ts = {0, 50000 + below(200000)};

					nanosleep(&ts, NULL);
				}
			}
	CHECK(parallel > 0, "no call with a long piece ran its pieces in more than one thread (%ld calls)",
		  long_calls);

	/* the counts of pieces a caller cuts */
	CHECK(gbt_pieces_wanted() == 2 * gbt_threads_wanted() &&
		  gbt_pieces_wanted() <= GBT_PIECES_MAX, "gbt_pieces_wanted() %d, threads %d",
		  gbt_pieces_wanted(), gbt_threads_wanted());
	for (n = 0; n < 1000; n += 7)
	{
		int			k = gbt_pieces_for_units(n, 10);

		CHECK(k >= 1 && k <= gbt_pieces_wanted() && (k == 1 || n / k >= 10),
			  "gbt_pieces_for_units(%d, 10) = %d", n, k);
	}

	printf("threads: %ld calls of 1-%d pieces, %ld checks, %ld failures\n",
		   rounds * GBT_PIECES_MAX * LEN_COUNT, GBT_PIECES_MAX, checks, failures);
	printf("%d passed, %d failed\n", failures == 0, failures != 0);
	return failures != 0;
}
