/*
 * agg_state.c
 *	  Exact partial aggregates (see agg_state.h).
 *
 * int64 sums are 128-bit (hi, lo) with carries; float8 sums of finite
 * values are double-double, added with the error-free TwoSum, so combining
 * partial sums in any order loses nothing a double could show.
 */
#include "postgres.h"

#include <math.h>

#include "agg_state.h"
#include "vagg.h"

void
gbt_agg_init(GbtAggResult *r)
{
	memset(r, 0, sizeof(GbtAggResult));
}

static void
add_int128(GbtAggCol *c, int64 hi, uint64 lo)
{
	uint64		sum = c->sum_lo + lo;

	c->sum_hi += hi + (sum < lo ? 1 : 0);
	c->sum_lo = sum;
}

/* (hi, lo) += (bhi, blo), double-double. */
static void
add_dd(double *hi, double *lo, double bhi, double blo)
{
	double		s = *hi + bhi;
	double		bb = s - *hi;
	double		e = (*hi - (s - bb)) + (bhi - bb);
	double		t;

	e += *lo + blo;
	t = s + e;
	*lo = e - (t - s);
	*hi = t;
}

static void
add_value(GbtAggCol *c, GbtColType type, int64 v)
{
	if (type == GBT_COL_INT64)
	{
		add_int128(c, v < 0 ? -1 : 0, (uint64) v);
		if (c->nonnull == 0 || v < c->min_i)
			c->min_i = v;
		if (c->nonnull == 0 || v > c->max_i)
			c->max_i = v;
	}
	else
	{
		double		d = gbt_val_float8(v);

		if (isnan(d))
			c->nnan++;
		else if (isinf(d) && d > 0)
			c->npinf++;
		else if (isinf(d))
			c->nninf++;
		else
			add_dd(&c->fsum_hi, &c->fsum_lo, d, 0.0);
		if (c->nonnull == 0)
			c->min_f = c->max_f = d;
		else
		{
			gbt_flt_extreme(&c->min_f, &c->ties, d, 0, GBT_TIE_MIN);
			gbt_flt_extreme(&c->max_f, &c->ties, d, 0, GBT_TIE_MAX);
		}
	}
	c->nonnull++;
}

void
gbt_agg_add_entry(GbtAggResult *r, const GbtColumns *cols, const int64 *vals,
				  uint8 nulls)
{
	int			c;

	r->count++;
	for (c = 0; c < cols->ncols; c++)
		if (cols->type[c] != GBT_COL_NONE && !(nulls & (1 << c)))
			add_value(&r->col[c], cols->type[c], vals[c]);
}

/*
 * Take back an entry added to r where that is exact: int64 columns (a
 * float8 sum is not taken back), and with extremes, only values that are
 * neither the minimum nor the maximum, so that min and max stay right;
 * without, min and max are left as they were, no longer meaningful.
 * Returns false, r unchanged, otherwise.
 */
static bool
remove_entry(GbtAggResult *r, const GbtColumns *cols, const int64 *vals, uint8 nulls,
			 bool extremes)
{
	int			c;

	for (c = 0; c < cols->ncols; c++)
	{
		if (cols->type[c] == GBT_COL_NONE || (nulls & (1 << c)))
			continue;
		if (cols->type[c] != GBT_COL_INT64 ||
			(extremes && (vals[c] == r->col[c].min_i || vals[c] == r->col[c].max_i)))
			return false;
	}
	for (c = 0; c < cols->ncols; c++)
	{
		GbtAggCol  *col = &r->col[c];
		int64		hi = vals[c] < 0 ? -1 : 0;
		uint64		lo = (uint64) vals[c];
		uint64		neg_lo = ~lo + 1;

		if (cols->type[c] == GBT_COL_NONE || (nulls & (1 << c)))
			continue;
		/* the two's complement negation of (hi, lo) */
		add_int128(col, ~hi + (neg_lo == 0 ? 1 : 0), neg_lo);
		col->nonnull--;
	}
	r->count--;
	return true;
}

bool
gbt_agg_remove_entry(GbtAggResult *r, const GbtColumns *cols, const int64 *vals,
					 uint8 nulls)
{
	return remove_entry(r, cols, vals, nulls, true);
}

bool
gbt_agg_remove_sums(GbtAggResult *r, const GbtColumns *cols, const int64 *vals,
					uint8 nulls)
{
	return remove_entry(r, cols, vals, nulls, false);
}

void
gbt_agg_combine(GbtAggResult *into, const GbtAggResult *part,
				const GbtColumns *cols)
{
	int			c;

	into->count += part->count;
	into->nunsure += part->nunsure;
	for (c = 0; c < cols->ncols; c++)
		if (cols->type[c] != GBT_COL_NONE)
			gbt_agg_col_combine(&into->col[c], &part->col[c],
								cols->type[c] == GBT_COL_FLOAT8 ?
								GBT_VAL_FLOAT8 : GBT_VAL_INT64);
}
