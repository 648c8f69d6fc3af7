/*
 * agg_values.c
 *	  GROUP BY an integer column the index holds (an INCLUDE column, a later
 *	  key column, or the key itself under conditions beyond its ranges): one
 *	  grouped request (groupby.h), the service grouping the entries of the
 *	  ranges by the column's value; the rows with NULL keys (through nbtree)
 *	  and the entries checked in the heap go into their groups here.
 *	  Integers only: their equality is their bits, so a value is a group
 *	  exactly as PostgreSQL groups it.
 */
#include "postgres.h"

#include "access/skey.h"

#include "agg_scan.h"
#include "agg_state.h"
#include "agg_values.h"
#include "keytypes.h"

/* A row with a NULL key, deformed, into its group if WHERE keeps it. */
typedef struct NullKeyRows
{
	Relation	index;
	GbtColumns	cols;
	GbtAggSlots *slots;
} NullKeyRows;

static void
add_null_key_row(const Datum *values, const bool *isnull, void *arg)
{
	NullKeyRows *nk = arg;
	const gbt_pred_set *preds = nk->slots->preds;
	int64		vals[GBT_MAX_COLS] = {0};
	uint8		nulls = gbt_entry_values(nk->index, &nk->cols, (Datum *) values,
										 (bool *) isnull, vals);

	if (preds->where != NULL &&
		gbt_pred_run(preds->where, preds->list, (const uint64 *) vals, nulls) != GBT_TV_TRUE)
		return;
	gbt_slots_add(nk->slots, &nk->cols, 0, vals, nulls);
}

bool
gbt_value_groups(Relation heap, Relation index, uint64 *lo, uint64 *hi, int64 nranges,
				 const gbt_pred_set *preds, int col, int64 expected, bool null_keys,
				 Snapshot snapshot, int64 max_unsure, GbtAggAnswer *answer,
				 GbtValueGroups *groups, const char **why)
{
	GbtAggSlots slots;

	memset(&slots, 0, sizeof(slots));
	slots.lo = lo;
	slots.hi = hi;
	slots.nranges = nranges;
	slots.preds = preds;
	slots.by_value = true;
	slots.group_col = col;
	slots.group_cap = Min(Max(expected, 16), GBT_MAX_COLUMN_GROUPS);
	if (!gbt_aggregate_slots(heap, index, &slots, snapshot, max_unsure, answer, why))
		return false;
	if (col >= answer->columns.ncols || answer->columns.type[col] != GBT_COL_INT64)
	{
		*why = "the mirror does not hold the GROUP BY column as expected";
		return false;
	}
	if (null_keys)
	{
		NullKeyRows nk;
		ScanKeyData nullkey;

		nk.index = index;
		nk.slots = &slots;
		gbt_index_columns(index, &nk.cols);
		ScanKeyEntryInitialize(&nullkey, SK_ISNULL | SK_SEARCHNULL, 1, InvalidStrategy,
							   InvalidOid, InvalidOid, InvalidOid, (Datum) 0);
		gbt_scan_index_entries(heap, index, &nullkey, 1, snapshot, add_null_key_row, &nk);
	}
	if (!gbt_slots_finish(&slots, &answer->columns, why))
		return false;
	groups->ngroups = slots.ngroups;
	groups->values = slots.group_values;
	groups->nulls = slots.group_nulls;
	groups->results = slots.results;
	return true;
}
