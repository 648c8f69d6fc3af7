/*
 * agg_values.c
 *	  GROUP BY an integer column the index holds (an INCLUDE column, or a
 *	  later key column), when it has few values in the ranges: first the
 *	  column's smallest and largest value there (one aggregate), then one
 *	  FILTER program per value between them and one for NULL, each ANDed
 *	  with the query's FILTERs, GBT_PRED_MAX_FILTERS a request; values with
 *	  no row are no group.  Integers only: their equality is their bits,
 *	  so a value is a group exactly as PostgreSQL groups it.
 */
#include "postgres.h"

#include "access/skey.h"

#include "agg_scan.h"
#include "agg_state.h"
#include "agg_values.h"
#include "keytypes.h"

/* base AND (column col = value, or col IS NULL when isnull). */
static bool
value_program(const gbt_pred *base, int col, int64 value, bool isnull, gbt_pred *out)
{
	int			n = base != NULL ? base->ninsns : 0;
	gbt_pred_insn *x;

	if (n + 2 > GBT_PRED_MAX_INSNS)
		return false;
	memset(out, 0, sizeof(*out));
	if (base != NULL)
		memcpy(out->insn, base->insn, sizeof(gbt_pred_insn) * n);
	x = &out->insn[n++];
	x->op = isnull ? GBT_PRED_IS_NULL : GBT_PRED_EQ;
	x->col = col;
	x->type = GBT_VAL_INT64;
	x->arg.i = value;
	if (base != NULL)
		out->insn[n++].op = GBT_PRED_AND;
	out->ninsns = n;
	return true;
}

/* The NULL-key rows of one request's programs, through nbtree. */
static void
add_null_keys(Relation heap, Relation index, Snapshot snapshot, const gbt_pred_set *set,
			  GbtAggResult *results)
{
	ScanKeyData nullkey;
	GbtColumns	cols;

	ScanKeyEntryInitialize(&nullkey, SK_ISNULL | SK_SEARCHNULL, 1, InvalidStrategy,
						   InvalidOid, InvalidOid, InvalidOid, (Datum) 0);
	gbt_index_columns(index, &cols);
	gbt_aggregate_by_scan_filtered(heap, index, &nullkey, 1, snapshot, &cols, set, results);
}

bool
gbt_value_groups(Relation heap, Relation index, uint64 *lo, uint64 *hi, int64 nranges,
				 const gbt_pred_set *preds, int col, bool null_keys, Snapshot snapshot,
				 int64 max_unsure, GbtAggAnswer *answer, GbtValueGroups *groups,
				 const char **why)
{
	int			nf = preds->nfilters;
	GbtAggSlots slots = {lo, hi, nranges, false, preds, NULL};
	GbtAggAnswer probe;
	const GbtAggCol *c;
	int64		min;
	int64		span;
	int64		g;
	int64		per = GBT_PRED_MAX_FILTERS / nf;
	gbt_pred   *progs = palloc(sizeof(gbt_pred) * GBT_PRED_MAX_FILTERS);
	GbtAggResult nullrows[GBT_PRED_MAX_FILTERS];

	/* The column's extent among the rows WHERE keeps (filter 0 has none). */
	if (!gbt_aggregate_slots(heap, index, &slots, snapshot, max_unsure, &probe, why))
		return false;
	if (null_keys)
	{
		memset(nullrows, 0, sizeof(nullrows));
		add_null_keys(heap, index, snapshot, preds, nullrows);
		gbt_agg_combine(&slots.results[0], &nullrows[0], &probe.columns);
	}
	*answer = probe;
	if (col >= probe.columns.ncols || probe.columns.type[col] != GBT_COL_INT64)
	{
		*why = "the mirror does not hold the GROUP BY column as expected";
		return false;
	}
	c = &slots.results[0].col[col];
	min = c->nonnull > 0 ? c->min_i : 0;
	span = c->nonnull > 0 ? c->max_i - c->min_i + 1 : 0;
	if (c->nonnull > 0 && (c->max_i - c->min_i < 0 || span > GBT_MAX_VALUE_GROUPS))
	{
		*why = psprintf("more than %d values of the GROUP BY column in the ranges",
						GBT_MAX_VALUE_GROUPS);
		return false;
	}

	/* The groups: the values, then NULL, a program each per FILTER. */
	groups->ngroups = span + 1;
	groups->values = palloc(sizeof(int64) * groups->ngroups);
	groups->nulls = palloc(sizeof(bool) * groups->ngroups);
	groups->results = palloc0(sizeof(GbtAggResult) * groups->ngroups * nf);
	for (g = 0; g < groups->ngroups; g++)
	{
		groups->values[g] = min + g;
		groups->nulls[g] = g == span;
	}
	for (g = 0; g < groups->ngroups; g += per)
	{
		int64		n = Min(per, groups->ngroups - g);
		gbt_pred_set set = *preds;
		GbtAggAnswer part;
		int64		j;
		int			f;

		set.nfilters = (int) (n * nf);
		for (j = 0; j < n; j++)
			for (f = 0; f < nf; f++)
			{
				if (!value_program(preds->filter[f], col, groups->values[g + j],
								   groups->nulls[g + j], &progs[j * nf + f]))
				{
					*why = "a FILTER too long for a program of a value";
					return false;
				}
				set.filter[j * nf + f] = &progs[j * nf + f];
			}
		slots.preds = &set;
		slots.results = NULL;
		if (!gbt_aggregate_slots(heap, index, &slots, snapshot, max_unsure, &part, why))
			return false;
		memcpy(&groups->results[g * nf], slots.results, sizeof(GbtAggResult) * n * nf);
		if (null_keys)
			add_null_keys(heap, index, snapshot, &set, &groups->results[g * nf]);
		answer->device_ms += part.device_ms;
		answer->checked += part.checked;
		answer->checked_visible += part.checked_visible;
	}
	return true;
}
