/*
 * prefault.c
 *	  Giving a fresh shared segment's pages memory in a helper thread, ahead
 *	  of the process that fills it.
 *
 * A page of a new POSIX segment gets its memory, zeroed, at its first
 * touch: an export writing a few hundred MB into its BUILD request spends
 * much of its time in those faults.  A thread populates the pages instead
 * (madvise(MADV_POPULATE_WRITE): no byte is written, so it never races the
 * writer), walking the parts (the arrays that fill side by side) in step,
 * so that it keeps ahead of the writer while the writer reads the index.
 * Where the writer gets ahead, it faults as before: the thread only saves
 * time.  The thread calls nothing of PostgreSQL's, runs with every signal
 * blocked, and is stopped and joined before the segment may go away
 * (gbt_prefault_stop(), also on an error).
 */
#include "postgres.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>

#include "port/atomics.h"

#include "prefault.h"

/* Populated at a time, per part: a few huge pages' worth. */
#define PREFAULT_STEP ((Size) 4 * 1024 * 1024)

struct GbtPrefault
{
	pthread_t	thread;
	int			nparts;
	char	   *starts[GBT_PREFAULT_MAX_PARTS];
	Size		lens[GBT_PREFAULT_MAX_PARTS];
	pg_atomic_uint32 stop;
};

static void *
prefault_main(void *arg)
{
#ifdef MADV_POPULATE_WRITE
	GbtPrefault *pf = arg;
	Size		longest = 0;
	Size		page = (Size) sysconf(_SC_PAGESIZE);
	Size		done;
	int			p;

	for (p = 0; p < pf->nparts; p++)
		longest = Max(longest, pf->lens[p]);

	/* Each part's share of one step of the longest, all in step. */
	for (done = 0; done < longest; done += PREFAULT_STEP)
		for (p = 0; p < pf->nparts; p++)
		{
			Size		from = (Size) ((double) pf->lens[p] * done / longest);
			Size		to = (Size) ((double) pf->lens[p] * Min(done + PREFAULT_STEP, longest) / longest);
			char	   *lo = (char *) TYPEALIGN_DOWN(page, pf->starts[p] + from);
			char	   *hi = (char *) TYPEALIGN(page, pf->starts[p] + to);

			if (pg_atomic_read_u32(&pf->stop) != 0)
				return NULL;
			if (hi > lo && madvise(lo, hi - lo, MADV_POPULATE_WRITE) != 0)
				return NULL;	/* not supported, or no memory: the writer faults */
		}
#endif
	return NULL;
}

/*
 * A thread populating parts [starts[i], starts[i] + lens[i]) of a mapped
 * segment; NULL where none could start (nothing lost but the time).
 */
GbtPrefault *
gbt_prefault_start(char *const *starts, const Size *lens, int nparts)
{
#ifdef MADV_POPULATE_WRITE
	GbtPrefault *pf = palloc0(sizeof(GbtPrefault));
	sigset_t	all;
	sigset_t	old;
	int			rc;

	Assert(nparts <= GBT_PREFAULT_MAX_PARTS);
	pf->nparts = nparts;
	memcpy(pf->starts, starts, sizeof(char *) * nparts);
	memcpy(pf->lens, lens, sizeof(Size) * nparts);
	pg_atomic_init_u32(&pf->stop, 0);

	/* The thread starts with every signal blocked: the process's to handle. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&pf->thread, NULL, prefault_main, pf);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		return pf;
	pfree(pf);
#endif
	return NULL;
}

/*
 * A thread populating the arrays of e, borrowed from a segment and laid
 * out for e->cap entries, which an export fills side by side; an integer
 * key column's values are not written (protocol.h), so not populated.
 */
GbtPrefault *
gbt_prefault_entries(const GbtEntries *e, const GbtColumns *cols)
{
	char	   *starts[GBT_PREFAULT_MAX_PARTS];
	Size		lens[GBT_PREFAULT_MAX_PARTS];
	int			nparts = 0;
	int			c;

	StaticAssertStmt(GBT_MAX_COLS + 3 <= GBT_PREFAULT_MAX_PARTS, "too few prefault parts");
	starts[nparts] = (char *) e->keys;
	lens[nparts++] = sizeof(uint64) * e->cap;
	starts[nparts] = (char *) e->tids;
	lens[nparts++] = sizeof(ItemPointerData) * e->cap;
	for (c = cols->type[0] == GBT_COL_INT64 ? 1 : 0; c < cols->ncols; c++)
	{
		starts[nparts] = (char *) e->vals[c];
		lens[nparts++] = sizeof(int64) * e->cap;
	}
	starts[nparts] = (char *) e->nulls;
	lens[nparts++] = e->cap;
	return gbt_prefault_start(starts, lens, nparts);
}

/* Stop the thread (within one step) and wait for it; frees pf. */
void
gbt_prefault_stop(GbtPrefault *pf)
{
	if (pf == NULL)
		return;
	pg_atomic_write_u32(&pf->stop, 1);
	pthread_join(pf->thread, NULL);
	pfree(pf);
}
