/*
 * slices.c
 *	  The requests the service answers a slice at a time (GBT_SLICE_KEYS
 *	  ranges each), in the order they came: the worker serves them in turn,
 *	  and maintenance asks whether one reads a mirror before replacing the
 *	  mirror's tree.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "service.h"

/* The requests, and the one whose slice is next.  At most one per slot. */
static TakenRequest *sliced = NULL;
static int	nsliced = 0;
static int	next_sliced = 0;

/* Queue t, a request gbt_answer_requests() marked sliced. */
void
gbt_slices_add(const TakenRequest *t)
{
	if (sliced == NULL)
		sliced = MemoryContextAlloc(TopMemoryContext,
									sizeof(TakenRequest) * gbt_shared->nslots);
	sliced[nsliced++] = *t;
}

/* How many requests are queued. */
int
gbt_slices_queued(void)
{
	return nsliced;
}

/* The request whose slice is next, in turn; NULL: none. */
TakenRequest *
gbt_slices_next(void)
{
	if (nsliced == 0)
		return NULL;
	next_sliced %= nsliced;
	return &sliced[next_sliced];
}

/* The request gbt_slices_next() gave has more slices: the next one's turn. */
void
gbt_slices_pass(void)
{
	next_sliced++;
}

/* The request gbt_slices_next() gave is finished: out of the queue. */
void
gbt_slices_remove(void)
{
	memmove(&sliced[next_sliced], &sliced[next_sliced + 1],
			sizeof(TakenRequest) * (nsliced - next_sliced - 1));
	nsliced--;
}

/* Is a request about the mirror of key being answered slice by slice? */
bool
gbt_slicing(const GbtMirrorKey *key)
{
	int			i;

	for (i = 0; i < nsliced; i++)
		if (memcmp(&sliced[i].req->hdr.key, key, sizeof(GbtMirrorKey)) == 0)
			return true;
	return false;
}
