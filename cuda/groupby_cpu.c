/*
 * groupby_cpu.c
 *	  The grouped aggregate's CPU reference (groupby.h): the entries to
 *	  aggregate collected as (group value, position) pairs in one pass over
 *	  the ranges (predicate_cpu.c's steps: removed, WHERE, visible), sorted
 *	  by value then position, and each run of one value aggregated into its
 *	  group with the filtered aggregate's exact arithmetic.  It is the
 *	  oracle of the GPU version's tests and the CPU twin's grouped
 *	  aggregate.
 */
#include <stdlib.h>
#include <string.h>

#include "groupby.h"

typedef struct group_entry
{
	int64_t		value;			/* the group column's value */
	int64_t		pos;			/* the entry's position */
} group_entry;

static int
cmp_entry(const void *a, const void *b)
{
	const group_entry *x = (const group_entry *) a,
			   *y = (const group_entry *) b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/*
 * Sorted by (value, position), so that a group's float sums do not depend
 * on the ranges' order; skipped when already so (a keyed column's ranges
 * in key order).
 */
static void
sort_entries(group_entry *e, int64_t n)
{
	int64_t		i;

	for (i = 1; i < n; i++)
		if (cmp_entry(&e[i - 1], &e[i]) > 0)
		{
			qsort(e, (size_t) n, sizeof(group_entry), cmp_entry);
			return;
		}
}

/* groupby.h: g's arguments, beyond the filtered aggregate's */
int
gbt_groups_check(const gbt_agg_input *in, const gbt_groups *g, char *err, size_t errlen)
{
	if (!g)
		return gbt_vagg_fail(err, errlen, "group by: no groups");
	if (g->gcol < 0 || g->gcol >= in->ncols || in->coltype[g->gcol] != GBT_VAL_INT64)
		return gbt_vagg_fail(err, errlen,
							 "group by: column %d is not an INT64 column of the %d",
							 g->gcol, in->ncols);
	if (g->cap < 0 || (g->cap > 0 && (!g->values || !g->out)))
		return gbt_vagg_fail(err, errlen, "group by: bad result arrays (room for %lld groups)",
							 (long long) g->cap);
	return 0;
}

/*
 * The groups of e[0..n) (sorted), numbered from k0: each run of one value
 * is a group, its entries' values read again and added to out[k *
 * nfilters ..] for the filters they pass.
 */
static void
fill_groups(const gbt_agg_input *in, const gbt_pred_set *preds, const group_entry *e,
			int64_t n, int64_t k0, gbt_groups *g)
{
	int64_t		i,
				k = k0 - 1;

	for (i = 0; i < n; i++)
	{
		uint64_t	vals[GBT_MAX_COLS];
		unsigned	nulls = 0;
		int			c;

		if (i == 0 || e[i].value != e[i - 1].value)
			g->values[++k] = e[i].value;
		/* removed and WHERE passed when collected: only the values */
		for (c = 0; c < GBT_MAX_COLS; c++)
		{
			int			isnull = 1;

			vals[c] = c < in->ncols ? gbt_agg_value(in, c, e[i].pos, &isnull) : 0;
			nulls |= (unsigned) isnull << c;
		}
		gbt_pred_entry_add(in, preds, vals, nulls, &g->out[k * preds->nfilters]);
	}
}

/* groupby.h: the contract over host arrays */
int
gbt_vagg_grouped_cpu(const gbt_agg_input *in, const int64_t *start, const int64_t *end,
					 int64_t nranges, const uint8_t *visible, int64_t nvisible,
					 const gbt_pred_set *preds, gbt_groups *g, int64_t *unsure,
					 int64_t unsure_cap, char *err, size_t errlen)
{
	gbt_agg_result dummy;		/* the checks want a result: g's are later */
	group_entry *e;
	int64_t		total = 0,
				n = 0,
				nnull = 0,
				nuns = 0,
				ngroups = 0,
				r,
				i;
	int			nf;

	if (gbt_vagg_check_args(in, start, end, nranges, visible, nvisible, &dummy,
							unsure, unsure_cap, 1, err, errlen) ||
		gbt_pred_set_check(preds, in->ncols, in->coltype, err, errlen) ||
		gbt_groups_check(in, g, err, errlen))
		return 1;
	nf = preds->nfilters;
	for (r = 0; r < nranges; r++)
		total += end[r] - start[r];
	e = (group_entry *) malloc(sizeof(group_entry) * (size_t) (total > 0 ? total : 1));
	if (!e)
		return gbt_vagg_fail(err, errlen, "group by: out of memory for %lld entries",
							 (long long) total);

	/* the entries to aggregate: values at the front, the NULL group's at the back */
	for (r = 0; r < nranges; r++)
		for (i = start[r]; i < end[r]; i++)
		{
			uint64_t	vals[GBT_MAX_COLS];
			unsigned	nulls = 0;
			int			cls = gbt_pred_entry_class(in, preds, i, visible, nvisible,
												   vals, &nulls);

			if (cls == GBT_ENTRY_UNSURE)
			{
				if (nuns < unsure_cap)
					unsure[nuns] = i;
				nuns++;
			}
			else if (cls == GBT_ENTRY_TAKE && ((nulls >> g->gcol) & 1))
			{
				e[total - 1 - nnull].value = 0;
				e[total - 1 - nnull].pos = i;
				nnull++;
			}
			else if (cls == GBT_ENTRY_TAKE)
			{
				e[n].value = (int64_t) vals[g->gcol];
				e[n].pos = i;
				n++;
			}
		}
	sort_entries(e, n);
	for (i = 0; i < n; i++)
		ngroups += i == 0 || e[i].value != e[i - 1].value;
	g->nunsure = nuns;
	g->has_null = nnull > 0;
	g->ngroups = ngroups + (nnull > 0);
	if (g->ngroups <= g->cap)
	{
		memset(g->out, 0, sizeof(gbt_agg_result) * (size_t) (g->ngroups * nf));
		fill_groups(in, preds, e, n, 0, g);
		/* the NULL group last (value 0), in position order as the others */
		sort_entries(e + total - nnull, nnull);
		fill_groups(in, preds, e + total - nnull, nnull, ngroups, g);
	}
	free(e);
	return 0;
}
