/*
 * agg_final.c
 *	  PostgreSQL's aggregate results from exact partial aggregates.
 *
 * What PostgreSQL 15 does, aggregate by aggregate:
 *	count(*), count(x): int8.
 *	sum(int2), sum(int4): int8 (an error beyond int8).
 *	sum(int8): numeric.  avg(int2/int4/int8): numeric, sum / count by
 *	numeric_div().
 *	sum(float8): float8, summed in input order; an error when a partial sum
 *	overflows.  avg(float4/float8): float8, sum / count, where the running
 *	sum of squares can also overflow.  NaN anywhere gives NaN; +Infinity
 *	and -Infinity together give NaN.
 *	min, max: the input type, NaN highest for floats.
 *	Over no rows everything but count is NULL.
 * Our float sums are exact up to the final rounding, and PostgreSQL's are
 * the same values added in heap order, so they agree to within that order's
 * rounding error (a few ulps times the number of rows, relative to the sum
 * of magnitudes).
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/float.h"
#include "utils/fmgrprotos.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "agg_final.h"
#include "keytypes.h"

/* Beyond this, N * max|x|, PostgreSQL's float sums could overflow on the way. */
#define FLOAT_SUM_SAFE 1e300
#define FLOAT_AVG_SAFE 1e150

bool
gbt_agg_supported(GbtAggKind kind, Oid argtype)
{
	const GbtKeyType *kt = gbt_key_type(argtype);

	switch (kind)
	{
		case GBT_AGG_COUNT_STAR:
			return true;
		case GBT_AGG_COUNT:
			/* Other columns are mirrored as all NULL. */
			return gbt_column_type(argtype) != GBT_COL_NONE;
		case GBT_AGG_SUM:
			return kt != NULL && kt->sum != GBT_SUM_NONE;
		case GBT_AGG_AVG:
			return kt != NULL && kt->family != GBT_FAMILY_DATETIME;
		case GBT_AGG_MIN:
		case GBT_AGG_MAX:
			return kt != NULL;
	}
	return false;
}

/* A 128-bit integer as numeric, through its decimal digits. */
static Datum
int128_numeric(int64 hi, uint64 lo)
{
	int128		v = (int128) (((uint128) (uint64) hi << 64) | lo);
	uint128		mag = v < 0 ? -(uint128) v : (uint128) v;
	char		buf[48];
	char	   *p = buf + sizeof(buf) - 1;

	*p = '\0';
	do
	{
		*--p = '0' + (int) (mag % 10);
		mag /= 10;
	} while (mag != 0);
	if (v < 0)
		*--p = '-';
	return DirectFunctionCall3(numeric_in, CStringGetDatum(p),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

static double
float_sum(const GbtAggCol *c)
{
	if (c->nnan > 0 || (c->npinf > 0 && c->nninf > 0))
		return get_float8_nan();
	if (c->npinf > 0)
		return get_float8_infinity();
	if (c->nninf > 0)
		return -get_float8_infinity();
	return c->fsum_hi + c->fsum_lo;
}

/*
 * The largest magnitude among the values times their number: a bound on
 * every partial sum.  Infinite when min or max is not finite (NaN or an
 * infinity hides the largest finite magnitude).
 */
static double
float_scale(const GbtAggCol *c)
{
	if (!isfinite(c->min_f) || !isfinite(c->max_f))
		return get_float8_infinity();
	return Max(fabs(c->min_f), fabs(c->max_f)) * (double) c->nonnull;
}

Datum
gbt_agg_sum_numeric(const GbtAggResult *r, int col, GbtColType type)
{
	const GbtAggCol *c = &r->col[col];

	if (type == GBT_COL_INT64)
		return int128_numeric(c->sum_hi, c->sum_lo);
	return DirectFunctionCall1(float8_numeric, Float8GetDatum(float_sum(c)));
}

bool
gbt_agg_final(GbtAggKind kind, Oid argtype, const GbtAggResult *r, int col,
			  Datum *value, bool *isnull, const char **why)
{
	const GbtAggCol *c = &r->col[col];
	const GbtKeyType *kt = gbt_key_type(argtype);

	*isnull = false;
	*why = "an aggregate the mirror does not answer";
	if (kind == GBT_AGG_COUNT_STAR)
	{
		*value = Int64GetDatum(r->count);
		return true;
	}
	if (kind == GBT_AGG_COUNT)
	{
		*value = Int64GetDatum(c->nonnull);
		return true;
	}
	if (c->nonnull == 0)
	{
		*isnull = true;
		return true;
	}
	if (kt == NULL)
		return false;

	switch (kind)
	{
		case GBT_AGG_SUM:
			switch (kt->sum)
			{
				case GBT_SUM_FLOAT8:
					if (float_scale(c) >= FLOAT_SUM_SAFE)
					{
						*why = "a float sum that could overflow";
						return false;
					}

					/*
					 * sum() adds to its first value, so it is -0 where every
					 * value is: min and max are -0, no value of other bits.
					 */
					if (c->min_f == 0 && signbit(c->min_f) && c->max_f == 0 &&
						signbit(c->max_f) && c->ties == 0)
						*value = Float8GetDatum(-0.0);
					else
						*value = Float8GetDatum(float_sum(c));
					return true;
				case GBT_SUM_NUMERIC:
					*value = int128_numeric(c->sum_hi, c->sum_lo);
					return true;
				case GBT_SUM_INT8:
					/* int8 result: the 128-bit sum must fit. */
					if (c->sum_hi != ((int64) c->sum_lo < 0 ? -1 : 0))
					{
						*why = "a sum beyond bigint";
						return false;
					}
					*value = Int64GetDatum((int64) c->sum_lo);
					return true;
				case GBT_SUM_NONE:
					break;
			}
			return false;
		case GBT_AGG_AVG:
			if (kt->held == GBT_COL_FLOAT8)
			{
				if (float_scale(c) >= FLOAT_AVG_SAFE)
				{
					*why = "a float sum that could overflow";
					return false;
				}
				*value = Float8GetDatum(float_sum(c) / (double) c->nonnull);
			}
			else
				*value = DirectFunctionCall2(numeric_div,
											 int128_numeric(c->sum_hi, c->sum_lo),
											 int128_numeric(0, c->nonnull));
			return true;
		case GBT_AGG_MIN:
		case GBT_AGG_MAX:
			{
				int64		i = kind == GBT_AGG_MIN ? c->min_i : c->max_i;
				double		f = kind == GBT_AGG_MIN ? c->min_f : c->max_f;

				/*
				 * Of equal values of other bits (-0 and 0, NaNs) PostgreSQL
				 * returns the last its plan reads: heap order in a scan of
				 * the heap, (key, TID) in an index scan, and the mirror's
				 * parts (tree, delta, heap-checked entries) mix those.
				 */
				if (kt->held == GBT_COL_FLOAT8 &&
					(c->ties & (kind == GBT_AGG_MIN ? GBT_TIE_MIN : GBT_TIE_MAX)))
				{
					*why = "a float min or max among equal values of other bits (-0 and 0, NaNs)";
					return false;
				}
				*value = kt->datum(i, f);
				return true;
			}
		default:
			return false;
	}
}
