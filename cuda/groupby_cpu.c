/*
 * groupby_cpu.c
 *	  The grouped aggregate's CPU reference (groupby.h): one pass over the
 *	  ranges collects the entries to aggregate (predicate_cpu.c's steps:
 *	  removed, WHERE, visible) and their group values; the values are
 *	  sorted with their places (a radix sort where both fit in 64 bits),
 *	  each run of one value is a group, and a second pass in the ranges'
 *	  order adds each entry to its group with the filtered aggregate's
 *	  exact arithmetic.  It is the oracle of the GPU version's tests and
 *	  the CPU twin's grouped aggregate.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "groupby.h"
#include "harmonia_keys.h"
#include "keysort.h"

#define GROUP_PREFETCH 16		/* entries ahead whose results are fetched */

typedef struct group_entry
{
	int64_t		value;			/* the group column's value */
	int64_t		pos;			/* the entry's place among those collected */
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
 * e[0..n) radix sorted as one 64-bit key each, (value less the smallest)
 * above the place, when both fit (keysort.c: a few passes, where
 * qsort() takes seconds for millions); false when they do not, or out of
 * memory.
 */
static bool
sort_packed(group_entry *e, int64_t n)
{
	uint64_t	vmin = UINT64_MAX,
				vmax = 0,
				pmax = 0,
			   *k;
	int			vbits,
				pbits;
	int64_t		i;

	for (i = 0; i < n; i++)
	{
		uint64_t	u = (uint64_t) e[i].value ^ HM_SIGN_BIT;	/* unsigned order */

		vmin = u < vmin ? u : vmin;
		vmax = u > vmax ? u : vmax;
		pmax = (uint64_t) e[i].pos > pmax ? (uint64_t) e[i].pos : pmax;
	}
	pbits = pmax > 0 ? 64 - __builtin_clzll(pmax) : 0;
	vbits = vmax > vmin ? 64 - __builtin_clzll(vmax - vmin) : 0;
	if (vbits + pbits > 64 || pbits > 32 || n >= ((int64_t) 1 << 32))
		return false;
	k = (uint64_t *) malloc(sizeof(uint64_t) * 2 * (size_t) n);
	if (!k)
		return false;
	for (i = 0; i < n; i++)
		k[i] = ((((uint64_t) e[i].value ^ HM_SIGN_BIT) - vmin) << pbits) |
			(uint64_t) e[i].pos;
	gbt_radix_sort_u64(k, k + n, n);
	for (i = 0; i < n; i++)
	{
		e[i].pos = (int64_t) (k[i] & (((uint64_t) 1 << pbits) - 1));
		e[i].value = (int64_t) (((k[i] >> pbits) + vmin) ^ HM_SIGN_BIT);
	}
	free(k);
	return true;
}

/*
 * Sorted by (value, place); skipped when already so (a keyed column's
 * ranges in key order).
 */
static void
sort_entries(group_entry *e, int64_t n)
{
	int64_t		i;

	for (i = 1; i < n; i++)
		if (cmp_entry(&e[i - 1], &e[i]) > 0)
		{
			if (!sort_packed(e, n))
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
 * The entries collected (positions at[0..n)) added to their groups
 * (group[0..n)), in the order collected: the entries are read in the
 * ranges' order, where the values' order would read them at random.
 */
static void
fill_groups(const gbt_agg_input *in, const gbt_pred_set *preds, const int64_t *at,
			const int64_t *group, int64_t n, gbt_groups *g)
{
	int64_t		j;
	size_t		used = offsetof(gbt_agg_result, col) + in->ncols * sizeof(gbt_agg_col);

	for (j = 0; j < n; j++)
	{
		uint64_t	vals[GBT_MAX_COLS];
		unsigned	nulls = 0;
		int			c;

		/* many groups: their results are fetched ahead, not waited for */
		if (j + GROUP_PREFETCH < n)
		{
			const char *next = (const char *) &g->out[group[j + GROUP_PREFETCH] *
													   preds->nfilters];
			size_t		b;

			for (b = 0; b < used * preds->nfilters; b += 64)
				__builtin_prefetch(next + b, 1);
		}

		/* removed and WHERE passed when collected: only the values */
		for (c = 0; c < GBT_MAX_COLS; c++)
		{
			int			isnull = 1;

			vals[c] = c < in->ncols ? gbt_agg_value(in, c, at[j], &isnull) : 0;
			nulls |= (unsigned) isnull << c;
		}
		gbt_pred_entry_add(in, preds, vals, nulls, &g->out[group[j] * preds->nfilters]);
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
	group_entry *e;				/* [n]: the non-NULL values, each with its */
	int64_t    *at,				/* place among the entries collected: */
			   *group;			/* [m]: their positions and groups */
	int64_t		total = 0,
				n = 0,
				m = 0,
				nnull = 0,
				nuns = 0,
				ngroups = 0,
				r,
				i;

	if (gbt_vagg_check_args(in, start, end, nranges, visible, nvisible, &dummy,
							unsure, unsure_cap, 1, err, errlen) ||
		gbt_pred_set_check(preds, in->ncols, in->coltype, err, errlen) ||
		gbt_groups_check(in, g, err, errlen))
		return 1;
	for (r = 0; r < nranges; r++)
		total += end[r] - start[r];
	total = total > 0 ? total : 1;
	e = (group_entry *) malloc(sizeof(group_entry) * (size_t) total);
	at = (int64_t *) malloc(sizeof(int64_t) * (size_t) total);
	group = (int64_t *) malloc(sizeof(int64_t) * (size_t) total);
	if (!e || !at || !group)
	{
		free(e);
		free(at);
		free(group);
		return gbt_vagg_fail(err, errlen, "group by: out of memory for %lld entries",
							 (long long) total);
	}

	/* the entries to aggregate; the NULL group's marked (-1) */
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
			else if (cls == GBT_ENTRY_TAKE)
			{
				group[m] = -1;
				if ((nulls >> g->gcol) & 1)
					nnull++;
				else
				{
					e[n].value = (int64_t) vals[g->gcol];
					e[n].pos = m;
					n++;
				}
				at[m++] = i;
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
		int64_t		k = -1;

		/* each run of one value a group, the NULL group last (value 0) */
		for (i = 0; i < n; i++)
		{
			if (i == 0 || e[i].value != e[i - 1].value)
				g->values[++k] = e[i].value;
			group[e[i].pos] = k;
		}
		if (nnull > 0)
		{
			g->values[ngroups] = 0;
			for (i = 0; i < m; i++)
				if (group[i] < 0)
					group[i] = ngroups;
		}
		memset(g->out, 0, sizeof(gbt_agg_result) * (size_t) (g->ngroups * preds->nfilters));
		fill_groups(in, preds, at, group, m, g);
	}
	free(e);
	free(at);
	free(group);
	return 0;
}
