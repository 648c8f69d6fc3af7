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

/* Hold t after the others. */
void
gbt_held_add(HeldRequests *held, const TakenRequest *t)
{
	if (held->items == NULL)
		held->items = MemoryContextAlloc(TopMemoryContext,
										 sizeof(TakenRequest) * gbt_shared->nslots);
	Assert(held->n < gbt_shared->nslots);
	held->items[held->n++] = *t;
}

/* The i'th held request let go, the later ones moved up. */
void
gbt_held_remove(HeldRequests *held, int i)
{
	memmove(&held->items[i], &held->items[i + 1],
			sizeof(TakenRequest) * (held->n - i - 1));
	held->n--;
}

/* The requests, and the one whose slice is next. */
static HeldRequests sliced;
static int	next_sliced = 0;

/* Queue t, a request gbt_answer_requests() marked sliced. */
void
gbt_slices_add(const TakenRequest *t)
{
	gbt_held_add(&sliced, t);
}

/* How many requests are queued. */
int
gbt_slices_queued(void)
{
	return sliced.n;
}

/* The request whose slice is next, in turn; NULL: none. */
TakenRequest *
gbt_slices_next(void)
{
	if (sliced.n == 0)
		return NULL;
	next_sliced %= sliced.n;
	return &sliced.items[next_sliced];
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
	gbt_held_remove(&sliced, next_sliced);
}

/* Is a request about the mirror of key being answered slice by slice? */
bool
gbt_slicing(const GbtMirrorKey *key)
{
	int			i;

	for (i = 0; i < sliced.n; i++)
		if (memcmp(&sliced.items[i].req->hdr.key, key, sizeof(GbtMirrorKey)) == 0)
			return true;
	return false;
}
