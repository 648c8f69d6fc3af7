/*
 * vagg_cpu.c
 *	  CPU reference of engine.h's aggregate contract: one pass over the
 *	  ranges in the given order.  It is the oracle of the GPU tests, the CPU
 *	  twin's aggregate and the one of a mirror's delta.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "harmonia_keys.h"
#include "vagg.h"

/* vagg.h: the message of a failed call, always 1 */
int
gbt_vagg_fail(char *err, size_t errlen, const char *fmt,...)
{
	va_list		ap;

	if (err && errlen > 0)
	{
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return 1;
}

/* vagg.h: b's aggregate added to a's, for one column of type t */
void
gbt_agg_col_combine(gbt_agg_col *a, const gbt_agg_col *b, gbt_valtype t)
{
	if (b->nonnull == 0)
		return;
	if (t == GBT_VAL_INT64)
	{
		uint64_t	lo = a->sum_lo + b->sum_lo;

		a->sum_hi += b->sum_hi + (lo < b->sum_lo);
		a->sum_lo = lo;
		if (a->nonnull == 0 || b->min_i < a->min_i)
			a->min_i = b->min_i;
		if (a->nonnull == 0 || b->max_i > a->max_i)
			a->max_i = b->max_i;
	}
	else
	{
		double		e;

		gbt_two_sum(a->fsum_hi, b->fsum_hi, &a->fsum_hi, &e);
		e += a->fsum_lo + b->fsum_lo;
		gbt_two_sum(a->fsum_hi, e, &a->fsum_hi, &a->fsum_lo);
		a->nnan += b->nnan;
		a->npinf += b->npinf;
		a->nninf += b->nninf;
		if (a->nonnull == 0)
		{
			a->min_f = b->min_f;
			a->max_f = b->max_f;
			a->ties = b->ties;
		}
		else
		{
			gbt_flt_extreme(&a->min_f, &a->ties, b->min_f, b->ties, GBT_TIE_MIN);
			gbt_flt_extreme(&a->max_f, &a->ties, b->max_f, b->ties, GBT_TIE_MAX);
		}
	}
	a->nonnull += b->nonnull;
}

/* vagg.h: part's aggregate added to into's */
void
gbt_agg_result_combine(gbt_agg_result *into, const gbt_agg_result *part,
					   const gbt_valtype *coltype, int ncols)
{
	int			c;

	into->count += part->count;
	into->nunsure += part->nunsure;
	for (c = 0; c < ncols; c++)
		gbt_agg_col_combine(&into->col[c], &part->col[c], coltype[c]);
}

/* vagg.h: the argument checks of both implementations */
int
gbt_vagg_check_args(const gbt_agg_input *in, const int64_t *start,
					const int64_t *end, int64_t nranges,
					const uint8_t *visible, int64_t nvisible,
					gbt_agg_result *out, int64_t *unsure, int64_t unsure_cap,
					int check_ranges, char *err, size_t errlen)
{
	int			c;
	int64_t		r,
				total = 0;

	if (!in || !out)
		return gbt_vagg_fail(err, errlen, "vagg: input or result is NULL");
	if (in->n < 0)
		return gbt_vagg_fail(err, errlen, "vagg: negative entry count %lld", (long long) in->n);
	if (in->ncols < 0 || in->ncols > GBT_MAX_COLS)
		return gbt_vagg_fail(err, errlen, "vagg: %d columns (0..%d allowed)", in->ncols,
							 GBT_MAX_COLS);
	if (in->n > 0 && !in->blocks && !in->tids)
		return gbt_vagg_fail(err, errlen, "vagg: block numbers are NULL");
	for (c = 0; c < in->ncols; c++)
	{
		if (in->coltype[c] != GBT_VAL_INT64 && in->coltype[c] != GBT_VAL_FLOAT8)
			return gbt_vagg_fail(err, errlen, "vagg: column %d has bad type %d", c,
								 (int) in->coltype[c]);
		if (((in->keyed >> c) & 1) &&
			(in->coltype[c] != GBT_VAL_INT64 || ((in->narrow >> c) & 1)))
			return gbt_vagg_fail(err, errlen, "vagg: keyed column %d is not INT64 or is narrow", c);
	}
	if ((in->keyed | in->narrow) >> in->ncols)
		return gbt_vagg_fail(err, errlen, "vagg: keyed or narrow columns 0x%x past the %d columns",
							 in->keyed | in->narrow, in->ncols);
	if (nranges < 0 || (nranges > 0 && (!start || !end)))
		return gbt_vagg_fail(err, errlen, "vagg: bad range arrays (%lld ranges)",
							 (long long) nranges);
	if (nvisible < 0 || (nvisible > 0 && !visible))
		return gbt_vagg_fail(err, errlen, "vagg: bad visibility map (%lld blocks)",
							 (long long) nvisible);
	if (unsure_cap < 0 || (unsure_cap > 0 && !unsure))
		return gbt_vagg_fail(err, errlen, "vagg: bad unsure buffer (capacity %lld)",
							 (long long) unsure_cap);
	for (r = 0; check_ranges && r < nranges; r++)
	{
		if (start[r] < 0 || start[r] > end[r] || end[r] > in->n)
			return gbt_vagg_fail(err, errlen, "vagg: range %lld [%lld, %lld) is not within [0, %lld]",
								 (long long) r, (long long) start[r], (long long) end[r],
								 (long long) in->n);
		total += end[r] - start[r];
		if (total > in->n)
			return gbt_vagg_fail(err, errlen, "vagg: ranges cover more than the %lld entries",
								 (long long) in->n);
	}
	return 0;
}

/* Entry i (there, on a visible block) added to acc: counted, each value. */
static inline void
add_entry(gbt_agg_result *acc, const gbt_agg_input *in, int64_t i)
{
	int			c;

	acc->count++;
	for (c = 0; c < in->ncols; c++)
	{
		int			isnull;
		uint64_t	v = gbt_agg_value(in, c, i, &isnull);

		if (!isnull)
			gbt_agg_col_add(&acc->col[c], in->coltype[c], v);
	}
}

int
gbt_vagg_cpu(const gbt_agg_input *in, const int64_t *start, const int64_t *end,
			 int64_t nranges, const uint8_t *visible, int64_t nvisible,
			 gbt_agg_result *out, int64_t *unsure, int64_t unsure_cap,
			 char *err, size_t errlen)
{
	int64_t		r,
				i,
				nuns = 0;
	gbt_agg_result acc;			/* local: no store can alias the inputs */

	if (gbt_vagg_check_args(in, start, end, nranges, visible, nvisible, out,
							unsure, unsure_cap, 1, err, errlen))
		return 1;
	memset(&acc, 0, sizeof(acc));
	for (r = 0; r < nranges; r++)
		for (i = start[r]; i < end[r]; i++)
		{
			uint32_t	b;

			if (in->removed && ((in->removed[i >> 3] >> (i & 7)) & 1))
				continue;
			b = gbt_agg_block(in, i);
			if (!((int64_t) b < nvisible && ((visible[b >> 3] >> (b & 7)) & 1)))
			{
				if (nuns < unsure_cap)
					unsure[nuns] = i;
				nuns++;
				continue;
			}
			add_entry(&acc, in, i);
		}
	acc.nunsure = nuns;
	*out = acc;
	return 0;
}

/*
 * Entries [from, to) of column c, none removed or NULL, all on visible
 * blocks: an INT64 column's sum, min and max in plain loops (the compiler
 * unrolls them; no block looked up, no branch an entry), added to o.
 */
static void
add_int64_span(gbt_agg_col *o, const gbt_agg_input *in, int c, int64_t from, int64_t to)
{
	gbt_agg_col part;
	__int128	sum = 0;
	int64_t		lo,
				hi,
				i;

	if (from >= to)
		return;
	if ((in->narrow >> c) & 1)
	{
		/* base + offset as gbt_agg_value() makes it: modulo 2^64 */
		const uint32_t *w = (const uint32_t *) in->cols[c];
		uint64_t	base = (uint64_t) in->base[c];

		lo = hi = (int64_t) (base + w[from]);
		for (i = from; i < to; i++)
		{
			int64_t		v = (int64_t) (base + w[i]);

			sum += v;
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
	}
	else
	{
		const uint64_t *u = (const uint64_t *) in->cols[c];
		uint64_t	flip = ((in->keyed >> c) & 1) ? HM_SIGN_BIT : 0;

		lo = hi = (int64_t) (u[from] ^ flip);
		for (i = from; i < to; i++)
		{
			int64_t		v = (int64_t) (u[i] ^ flip);

			sum += v;
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
	}
	memset(&part, 0, sizeof(part));
	part.nonnull = to - from;
	part.sum_lo = (uint64_t) sum;
	part.sum_hi = (int64_t) (sum >> 64);
	part.min_i = lo;
	part.max_i = hi;
	gbt_agg_col_combine(o, &part, GBT_VAL_INT64);
}

/* Whether a bit of entries [from, to) may be set: whole bytes looked at. */
static int
any_bit(const uint8_t *bits, int64_t from, int64_t to)
{
	int64_t		i;

	if (bits == NULL)
		return 0;
	for (i = from >> 3; i <= (to - 1) >> 3; i++)
		if (bits[i] != 0)
			return 1;
	return 0;
}

/*
 * Whether entries [from, to) can be summed by add_int64_span(): every
 * column with values INT64 (fast), none of the entries removed or NULL
 * there.  A column without values (every value NULL) adds nothing.
 */
static int
plain_span(const gbt_agg_input *in, int fast, int64_t from, int64_t to)
{
	int			c;

	if (!fast || any_bit(in->removed, from, to))
		return 0;
	for (c = 0; c < in->ncols; c++)
		if (in->cols[c] != NULL && any_bit(in->nulls[c], from, to))
			return 0;
	return 1;
}

/* The end of the 64 entries from i on (the next multiple of 64), or end. */
static int64_t
word_end(int64_t i, int64_t end)
{
	return (i | 63) + 1 < end ? (i | 63) + 1 : end;
}


int
gbt_vagg_cpu_visible(const gbt_agg_input *in, const int64_t *start, const int64_t *end,
					 int64_t nranges, gbt_agg_result *out, char *err, size_t errlen)
{
	int64_t		r,
				i,
				j;
	int			c;
	int			fast = 1;
	gbt_agg_result acc;

	if (gbt_vagg_check_args(in, start, end, nranges, NULL, 0, out, NULL, 0, 1, err, errlen))
		return 1;
	for (c = 0; c < in->ncols; c++)
		if (in->cols[c] != NULL && in->coltype[c] != GBT_VAL_INT64)
			fast = 0;
	memset(&acc, 0, sizeof(acc));
	for (r = 0; r < nranges; r++)
		for (i = start[r]; i < end[r]; i = j)
		{
			j = word_end(i, end[r]);
			if (plain_span(in, fast, i, j))
			{
				/* as many plain words as follow, at once */
				while (j < end[r] &&
					   plain_span(in, fast, j, word_end(j, end[r])))
					j = word_end(j, end[r]);
				acc.count += j - i;
				for (c = 0; c < in->ncols; c++)
					if (in->cols[c] != NULL)
						add_int64_span(&acc.col[c], in, c, i, j);
				continue;
			}
			for (; i < j; i++)
			{
				if (in->removed && ((in->removed[i >> 3] >> (i & 7)) & 1))
					continue;
				add_entry(&acc, in, i);
			}
		}
	*out = acc;
	return 0;
}
