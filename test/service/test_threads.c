/*
 * test_threads.c
 *	  threads.c's pool against what its callers lean on, on every call
 *	  shape: every piece of a call run exactly once and finished when the
 *	  call returns, for each count of pieces up to GBT_PIECES_MAX, pieces
 *	  of every length profile, calls back to back and after pauses (the
 *	  workers spinning, then asleep), calls made from a piece (run in
 *	  its own thread), and detached calls (returned before their last
 *	  pieces: every piece run once by the time the next call's pieces run,
 *	  or gbt_pieces_settle() returns); and the pool's threads used at all.  Thousands of
 *	  calls with random lengths: a claim handed out twice, a piece left
 *	  out or a call returning early shows as a count other than one.
 */
#include "postgres.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	const int  *before_runs;	/* a detached call's counts, before this call */
	int			before_n;
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

	int			i;

	/* a detached call before this one: settled before this call started */
	for (i = 0; i < p->before_n; i++)
		if (__atomic_load_n(&p->before_runs[i], __ATOMIC_SEQ_CST) != 1)
		{
			__atomic_add_fetch(&p->runs[p->idx], 1000, __ATOMIC_SEQ_CST);
			break;
		}
	spin(p->spins);
	if (p->nested > 0)
	{
		/* a call from a piece: run here, in this thread, one after another */
		Piece		inner[GBT_PIECES_MAX];
		int			runs[GBT_PIECES_MAX] = {0};
		int			ok = 1;

		for (i = 0; i < p->nested; i++)
		{
			inner[i].runs = runs;
			inner[i].idx = i;
			inner[i].spins = 0;
			inner[i].nested = 0;
			inner[i].before_n = 0;
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

/*
 * A detached call's pieces and counts: kept until the pool settles it, at
 * the next call or gbt_pieces_settle().
 */
static Piece detached_pieces[GBT_PIECES_MAX];
static int	detached_runs[GBT_PIECES_MAX];
static int	detached_n = 0;		/* pieces of an unsettled one; 0: none */

static void
check_runs(const int *runs, int n, Lengths len, int nested, const char *what)
{
	int			i;

	for (i = 0; i < n; i++)
		CHECK(runs[i] == 1, "%d pieces (%s%s): piece %d ran %d times %s%s%s",
			  n, len_names[len], nested ? ", nested calls" : "", i, runs[i] % 100, what,
			  runs[i] % 1000 >= 100 ? ", and a call from it did not run its own pieces once each, in its thread" : "",
			  runs[i] >= 1000 ? ", and it ran before a detached call before it was settled" : "");
}

/*
 * One call of n pieces of profile len (detached: left before its last
 * pieces, checked once settled); whether they ran in 2+ threads.
 */
static int
one_call(int n, Lengths len, int nested, int detached)
{
	Piece		own_pieces[GBT_PIECES_MAX];
	int			own_runs[GBT_PIECES_MAX] = {0};
	Piece	   *pieces = detached ? detached_pieces : own_pieces;
	int		   *runs = detached ? detached_runs : own_runs;
	int			nbefore = detached_n;
	int			long_one = (int) below(n);
	int			threads = 1;
	int			i;
	int			j;

	/* two detached calls in a row: the first settled before its arrays are reused */
	if (detached && nbefore > 0)
	{
		gbt_pieces_settle();
		check_runs(detached_runs, nbefore, len, 0, "(a detached call) when settled");
		nbefore = detached_n = 0;
	}
	memset(runs, 0, sizeof(int) * GBT_PIECES_MAX);
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
		pieces[i].before_runs = detached_runs;
		pieces[i].before_n = nbefore;	/* (0 for a detached call) */
	}
	if (detached)
	{
		gbt_run_pieces_detached(piece, pieces, sizeof(Piece), n);
		for (i = 0; i < n; i++)
			CHECK(__atomic_load_n(&runs[i], __ATOMIC_SEQ_CST) <= 1,
				  "%d pieces, detached: piece %d ran %d times", n, i, runs[i]);
		detached_n = n;
		if (below(2) == 0)
			return 0;			/* settled by the next call */
		gbt_pieces_settle();
		detached_n = 0;
		check_runs(runs, n, len, nested, "when gbt_pieces_settle() returned");
	}
	else
	{
		gbt_run_pieces(piece, pieces, sizeof(Piece), n);
		if (nbefore > 0)
			check_runs(detached_runs, nbefore, len, 0, "(a detached call) when the next call returned");
		detached_n = 0;
		check_runs(runs, n, len, nested, "when the call returned");
	}
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
				int			used = one_call(n, (Lengths) len, nested, below(4) == 0);

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
	if (detached_n > 0)
	{
		gbt_pieces_settle();
		check_runs(detached_runs, detached_n, LEN_NONE, 0, "(the last call, detached) when settled");
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
