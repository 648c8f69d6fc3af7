/*
 * predicate_cpu.c
 *	  predicate.h on the CPU: the programs' validator, one program on one
 *	  entry, and the filtered aggregate's reference (gbt_vagg_filtered_cpu()),
 *	  one pass over the ranges in the given order like gbt_vagg_cpu().  It
 *	  is the oracle of the GPU version's tests.
 */
#include <math.h>
#include <string.h>

#include "predicate.h"

static const char *const op_names[GBT_PRED_NOPS] = {
	"TRUE", "FALSE", "UNKNOWN", "=", "<>", "<", "<=", ">", ">=", "IS NULL",
	"IS NOT NULL", "IN", "AND", "OR", "NOT"
};

/* how many truth values each opcode pops (pushing one) */
static int
op_pops(int op)
{
	if (op == GBT_PRED_AND || op == GBT_PRED_OR)
		return 2;
	if (op == GBT_PRED_NOT)
		return 1;
	return 0;
}

/* predicate.h: whether p is a valid program over these columns and list */
int
gbt_pred_check(const gbt_pred *p, int ncols, const gbt_valtype *coltype,
			   const gbt_pred_value *list, int64_t nlist, char *err, size_t errlen)
{
	int			k,
				depth = 0;

	if (!p)
		return gbt_vagg_fail(err, errlen, "predicate: no program");
	if (ncols < 0 || ncols > GBT_MAX_COLS || (ncols > 0 && !coltype))
		return gbt_vagg_fail(err, errlen, "predicate: %d columns (0..%d allowed)", ncols,
							 GBT_MAX_COLS);
	if (p->ninsns < 1 || p->ninsns > GBT_PRED_MAX_INSNS)
		return gbt_vagg_fail(err, errlen, "predicate: %d instructions (1..%d allowed)",
							 (int) p->ninsns, GBT_PRED_MAX_INSNS);
	for (k = 0; k < p->ninsns; k++)
	{
		const gbt_pred_insn *x = &p->insn[k];
		int			op = x->op;

		if (op >= GBT_PRED_NOPS)
			return gbt_vagg_fail(err, errlen, "predicate: instruction %d has bad opcode %d",
								 k, op);
		if (op >= GBT_PRED_EQ && op <= GBT_PRED_IN)
		{
			if (x->col >= ncols)
				return gbt_vagg_fail(err, errlen,
									 "predicate: instruction %d (%s) reads column %d of %d",
									 k, op_names[op], (int) x->col, ncols);
			if (op != GBT_PRED_IS_NULL && op != GBT_PRED_IS_NOT_NULL &&
				x->type != (int) coltype[x->col])
				return gbt_vagg_fail(err, errlen,
									 "predicate: instruction %d (%s) takes type %d, column %d is of type %d",
									 k, op_names[op], (int) x->type, (int) x->col,
									 (int) coltype[x->col]);
		}
		if (op == GBT_PRED_IN)
		{
			int64_t		first = x->arg.i,
						j;

			if (first < 0 || first > nlist || (int64_t) x->nlist > nlist - first)
				return gbt_vagg_fail(err, errlen,
									 "predicate: instruction %d (IN) reads list [%lld, %lld) of %lld constants",
									 k, (long long) first,
									 (long long) first + (long long) x->nlist,
									 (long long) nlist);
			for (j = first + 1; j < first + (int64_t) x->nlist; j++)
			{
				uint64_t	prev;

				memcpy(&prev, &list[j - 1], sizeof(prev));
				if (gbt_pred_cmp(x->type, prev, list[j]) > 0)
					return gbt_vagg_fail(err, errlen,
										 "predicate: instruction %d (IN): list[%lld] is below the one before it",
										 k, (long long) j);
			}
		}
		if (depth < op_pops(op))
			return gbt_vagg_fail(err, errlen,
								 "predicate: instruction %d (%s) pops %d of a stack of %d",
								 k, op_names[op], op_pops(op), depth);
		depth += 1 - op_pops(op);
		if (depth > GBT_PRED_MAX_DEPTH)
			return gbt_vagg_fail(err, errlen, "predicate: stack deeper than %d at instruction %d",
								 GBT_PRED_MAX_DEPTH, k);
	}
	if (depth != 1)
		return gbt_vagg_fail(err, errlen, "predicate: the program leaves %d values, not one",
							 depth);
	return 0;
}

/* predicate.h: a set's arguments and every one of its programs */
int
gbt_pred_set_check(const gbt_pred_set *s, int ncols, const gbt_valtype *coltype,
				   char *err, size_t errlen)
{
	int			f;
	char		why[200];

	if (!s)
		return gbt_vagg_fail(err, errlen, "predicate: no programs");
	if (s->nfilters < 1 || s->nfilters > GBT_PRED_MAX_FILTERS)
		return gbt_vagg_fail(err, errlen, "predicate: %d filters (1..%d allowed)",
							 s->nfilters, GBT_PRED_MAX_FILTERS);
	if (s->nlist < 0 || (s->nlist > 0 && !s->list))
		return gbt_vagg_fail(err, errlen, "predicate: bad constant list (%lld constants)",
							 (long long) s->nlist);
	if (s->where &&
		gbt_pred_check(s->where, ncols, coltype, s->list, s->nlist, why, sizeof(why)))
		return gbt_vagg_fail(err, errlen, "WHERE program: %s", why);
	for (f = 0; f < s->nfilters; f++)
		if (s->filter[f] &&
			gbt_pred_check(s->filter[f], ncols, coltype, s->list, s->nlist, why, sizeof(why)))
			return gbt_vagg_fail(err, errlen, "FILTER program %d: %s", f, why);
	return 0;
}

/* entry i's values, decoded, and its NULL bits */
static unsigned
entry_values(const gbt_agg_input *in, int64_t i, uint64_t vals[GBT_MAX_COLS])
{
	unsigned	nulls = 0;
	int			c;

	for (c = 0; c < GBT_MAX_COLS; c++)
	{
		int			isnull = 1;

		vals[c] = c < in->ncols ? gbt_agg_value(in, c, i, &isnull) : 0;
		nulls |= (unsigned) isnull << c;
	}
	return nulls;
}

/* predicate.h: program p on entry i */
int
gbt_pred_eval_entry(const gbt_pred *p, const gbt_agg_input *in, int64_t i,
					const gbt_pred_value *list)
{
	uint64_t	vals[GBT_MAX_COLS];
	unsigned	nulls;

	if (!p)
		return GBT_TV_TRUE;
	nulls = entry_values(in, i, vals);
	return gbt_pred_run(p, list, vals, nulls);
}

/* predicate.h: how the filtered (and grouped) aggregate treats entry i */
int
gbt_pred_entry_class(const gbt_agg_input *in, const gbt_pred_set *preds, int64_t i,
					 const uint8_t *visible, int64_t nvisible,
					 uint64_t vals[GBT_MAX_COLS], unsigned *nulls)
{
	uint32_t	b;

	if (in->removed && ((in->removed[i >> 3] >> (i & 7)) & 1))
		return GBT_ENTRY_SKIP;
	*nulls = entry_values(in, i, vals);
	if (preds->where &&
		gbt_pred_run(preds->where, preds->list, vals, *nulls) != GBT_TV_TRUE)
		return GBT_ENTRY_SKIP;
	b = gbt_agg_block(in, i);
	if (!((int64_t) b < nvisible && ((visible[b >> 3] >> (b & 7)) & 1)))
		return GBT_ENTRY_UNSURE;
	return GBT_ENTRY_TAKE;
}

/* predicate.h: an entry's values into acc[f] for each filter f passing */
void
gbt_pred_entry_add(const gbt_agg_input *in, const gbt_pred_set *preds,
				   const uint64_t vals[GBT_MAX_COLS], unsigned nulls, gbt_agg_result *acc)
{
	int			c,
				f;

	for (f = 0; f < preds->nfilters; f++)
	{
		if (preds->filter[f] &&
			gbt_pred_run(preds->filter[f], preds->list, vals, nulls) != GBT_TV_TRUE)
			continue;
		acc[f].count++;
		for (c = 0; c < in->ncols; c++)
			if (!((nulls >> c) & 1))
				gbt_agg_col_add(&acc[f].col[c], in->coltype[c], vals[c]);
	}
}

/* predicate.h: the filtered aggregate's contract, on the CPU */
int
gbt_vagg_filtered_cpu(const gbt_agg_input *in, const int64_t *start, const int64_t *end,
					  int64_t nranges, const uint8_t *visible, int64_t nvisible,
					  const gbt_pred_set *preds, gbt_agg_result *out,
					  int64_t *unsure, int64_t unsure_cap, char *err, size_t errlen)
{
	int64_t		r,
				i,
				nuns = 0;
	int			f,
				nf;
	gbt_agg_result acc[GBT_PRED_MAX_FILTERS];	/* local: no store can alias
												 * the inputs */

	if (gbt_vagg_check_args(in, start, end, nranges, visible, nvisible, out,
							unsure, unsure_cap, 1, err, errlen) ||
		gbt_pred_set_check(preds, in->ncols, in->coltype, err, errlen))
		return 1;
	nf = preds->nfilters;
	memset(acc, 0, nf * sizeof(acc[0]));
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
				gbt_pred_entry_add(in, preds, vals, nulls, acc);
		}
	for (f = 0; f < nf; f++)
	{
		acc[f].nunsure = nuns;
		out[f] = acc[f];
	}
	return 0;
}
