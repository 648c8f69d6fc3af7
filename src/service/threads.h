/*
 * threads.h
 *	  Running a few pieces of plain computation at once in the service.
 */
#ifndef GPUBTREE_THREADS_H
#define GPUBTREE_THREADS_H

#include "postgres.h"

#include "lib/stringinfo.h"

/* The most threads one request uses. */
#define GBT_THREADS_MAX 8

/* Threads a request may use here: half the CPUs, at least 2, at most the max. */
extern int	gbt_threads_wanted(void);

/* Pieces for n units of work, at least min_each a piece: 1 .. gbt_threads_wanted(). */
extern int	gbt_threads_for(int64 n, int64 min_each);

/*
 * A call may cut more pieces than there are threads (its pieces are
 * claimed one at a time): a round's short calls cut twice as many, so that
 * the piece a thread slow to start or preempted holds up is small.
 */
#define GBT_PIECES_MAX (4 * GBT_THREADS_MAX)

/* Pieces a round's short call cuts at most: twice gbt_threads_wanted(). */
extern int	gbt_pieces_wanted(void);

/* Pieces for n units of work, at least min_each a piece: 1 .. gbt_pieces_wanted(). */
extern int	gbt_pieces_for_units(int64 n, int64 min_each);

/*
 * Call fn(arg + i * argsize) for i in [0, n), at once: the pieces are
 * claimed one at a time by this thread and the service's pool of threads,
 * started at the first call and kept (a call from a piece, in any thread,
 * runs its pieces one after another).  fn must not touch
 * PostgreSQL's state: no palloc, no ereport, no CHECK_FOR_INTERRUPTS.
 * Signals reach only this thread.
 */
extern void gbt_run_pieces(void (*fn) (void *), void *arg, Size argsize, int n);

/*
 * The DEBUG1 summary's note on the calls since the last one (buf NULL:
 * forgotten): calls and their time a round, and the calling thread's wait
 * for the last piece after its own.
 */
extern void gbt_note_threads(StringInfo buf, int64 rounds);

/*
 * One long piece of plain computation (a new tree's engine build) on a
 * thread of its own, while the service goes on answering: the same rules
 * for fn as above.  gbt_background_start() returns NULL when no thread
 * could be started (the caller then runs fn itself); the caller polls
 * gbt_background_done() and must gbt_background_wait() (which frees the
 * job) before it touches what fn reads or writes.  Within fn, pieces run
 * through gbt_run_pieces_spawned(), never the service's pool.
 */
typedef struct GbtBackground GbtBackground;

extern GbtBackground *gbt_background_start(void (*fn) (void *), void *arg);
extern bool gbt_background_done(GbtBackground *job);
extern void gbt_background_wait(GbtBackground *job);
extern void gbt_run_pieces_spawned(void (*fn) (void *), void *arg, Size argsize, int n);

#endif							/* GPUBTREE_THREADS_H */
