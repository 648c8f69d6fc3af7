/*
 * entries.c
 *	  Batches of mirror entries (see entries.h).
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "entries.h"

void
gbt_entries_init(GbtEntries *e, int ncols, int64 cap)
{
	memset(e, 0, sizeof(GbtEntries));
	e->ncols = ncols;
	gbt_entries_grow(e, Max(cap, 16));
}

/*
 * Borrowed arrays (entries.h) moved to palloc'd ones of cap entries: their
 * first e->n entries copied.
 */
static void
move_out(GbtEntries *e, int64 cap)
{
	GbtEntries	own;
	int			c;

	gbt_entries_init(&own, e->ncols, cap);
	own.n = e->n;
	memcpy(own.keys, e->keys, sizeof(uint64) * e->n);
	memcpy(own.tids, e->tids, sizeof(ItemPointerData) * e->n);
	for (c = 0; c < e->ncols; c++)
		memcpy(own.vals[c], e->vals[c], sizeof(int64) * e->n);
	memcpy(own.nulls, e->nulls, e->n);
	*e = own;
}

/* Room for cap entries (never shrinks); in the current memory context. */
void
gbt_entries_grow(GbtEntries *e, int64 cap)
{
	int			c;

	if (cap <= e->cap)
		return;
	if (e->borrowed)
	{
		move_out(e, cap);
		return;
	}
#define GROW(p, type) \
	((p) = (p) ? repalloc_huge((p), sizeof(type) * cap) \
	 : palloc_extended(sizeof(type) * cap, MCXT_ALLOC_HUGE))
	GROW(e->keys, uint64);
	GROW(e->tids, ItemPointerData);
	for (c = 0; c < e->ncols; c++)
		GROW(e->vals[c], int64);
	GROW(e->nulls, uint8);
#undef GROW
	e->cap = cap;
}

void
gbt_entries_free(GbtEntries *e)
{
	int			c;

	if (e->borrowed)
	{
		memset(e, 0, sizeof(GbtEntries));
		return;
	}
	if (e->keys)
		pfree(e->keys);
	if (e->tids)
		pfree(e->tids);
	for (c = 0; c < e->ncols; c++)
	{
		if (e->vals[c])
			pfree(e->vals[c]);
		if (e->narrow[c])
			pfree(e->narrow[c]);
	}
	if (e->nulls)
		pfree(e->nulls);
	memset(e, 0, sizeof(GbtEntries));
}

Size
gbt_entries_flat_size(int ncols, int64 n)
{
	return MAXALIGN(sizeof(uint64) * n) + MAXALIGN(sizeof(ItemPointerData) * n) +
		ncols * MAXALIGN(sizeof(int64) * n) + MAXALIGN(n);
}

void
gbt_entries_flatten(const GbtEntries *e, char *buf)
{
	GbtEntries	view;
	int			c;

	gbt_entries_unflatten(&view, e->ncols, e->n, buf);
	memcpy(view.keys, e->keys, sizeof(uint64) * e->n);
	memcpy(view.tids, e->tids, sizeof(ItemPointerData) * e->n);
	for (c = 0; c < e->ncols; c++)
		memcpy(view.vals[c], e->vals[c], sizeof(int64) * e->n);
	memcpy(view.nulls, e->nulls, e->n);
}

void
gbt_entries_unflatten(GbtEntries *e, int ncols, int64 n, char *buf)
{
	int			c;

	memset(e, 0, sizeof(GbtEntries));
	e->n = e->cap = n;
	e->ncols = ncols;
	e->keys = (uint64 *) buf;
	buf += MAXALIGN(sizeof(uint64) * n);
	e->tids = (ItemPointerData *) buf;
	buf += MAXALIGN(sizeof(ItemPointerData) * n);
	for (c = 0; c < ncols; c++)
	{
		e->vals[c] = (int64 *) buf;
		buf += MAXALIGN(sizeof(int64) * n);
	}
	e->nulls = (uint8 *) buf;
}

static int
cmp_by_tid(const void *a, const void *b, void *arg)
{
	const GbtEntries *e = arg;

	return gbt_tid_cmp(&e->tids[*(const int64 *) a], &e->tids[*(const int64 *) b]);
}

static int
cmp_by_key_tid(const void *a, const void *b, void *arg)
{
	const GbtEntries *e = arg;
	int64		i = *(const int64 *) a;
	int64		j = *(const int64 *) b;

	if (e->keys[i] != e->keys[j])
		return e->keys[i] < e->keys[j] ? -1 : 1;
	return gbt_tid_cmp(&e->tids[i], &e->tids[j]);
}

/*
 * The positions from..to-1 of e, sorted by TID, or by (key, TID) with
 * by_key: a permutation, allocated here.
 */
int64 *
gbt_entries_order(const GbtEntries *e, int64 from, int64 to, bool by_key)
{
	int64	   *order = palloc_extended(sizeof(int64) * Max(to - from, 1),
										MCXT_ALLOC_HUGE);
	int64		i;

	for (i = from; i < to; i++)
		order[i - from] = i;
	qsort_arg(order, to - from, sizeof(int64),
			  by_key ? cmp_by_key_tid : cmp_by_tid, (void *) e);
	return order;
}

/*
 * The entries of e in key order (ties in any order): a permutation,
 * allocated here.  Cheap for what a lookup gets back: the mirror's plain
 * entries in order, then a few others (stamped, in the delta, decided in
 * the heap) in any order: the sorted run that starts the list is taken as
 * it is, the rest sorted and merged into it.
 */
int64 *
gbt_entries_key_order(const GbtEntries *e)
{
	int64	   *order = palloc_extended(sizeof(int64) * Max(e->n, 1), MCXT_ALLOC_HUGE);
	int64		run = 1;
	int64	   *rest;
	int64		i;
	int64		j;
	int64		k;

	while (run < e->n && e->keys[run - 1] <= e->keys[run])
		run++;
	if (run >= e->n)
	{
		for (i = 0; i < e->n; i++)
			order[i] = i;
		return order;
	}
	rest = gbt_entries_order(e, run, e->n, true);	/* positions from run on */
	for (i = 0, j = 0, k = 0; k < e->n; k++)
	{
		int64		r = j < e->n - run ? rest[j] : -1;

		if (i < run && (r < 0 || e->keys[i] <= e->keys[r]))
			order[k] = i++;
		else
		{
			order[k] = r;
			j++;
		}
	}
	pfree(rest);
	return order;
}

/*
 * What a mirror of n entries will take, before it exists: the same parts
 * as service/mirror_utils.c's gbt_mirror_bytes() for a mirror just built:
 * entries with their block numbers and NULL bits, and the Harmonia tree (8
 * bytes an entry, and its inner nodes: under 1 byte an entry at the default
 * fanout; counted as 17, as when the tree also held row ids, which leaves a
 * margin); on the GPU also the device's copies of block numbers, columns
 * and NULL bits, and the device tree's padding.  Rounded up, so that a
 * mirror estimated to fit does.
 */
int64
gbt_mirror_estimate_bytes(int64 n, int ncols, bool on_gpu)
{
	double		per_entry = sizeof(uint64) + sizeof(ItemPointerData) + 1 +
		ncols * sizeof(int64) + sizeof(uint32) + ncols / 8.0 + 17;

	if (on_gpu)
		per_entry += 16 + 8.25 * ncols;
	return (int64) (n * per_entry) + 1024 * 1024;
}
