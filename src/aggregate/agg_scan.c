/*
 * agg_scan.c
 *	  Aggregates without the service: every index entry under scan keys
 *	  that the snapshot sees, through nbtree, deformed, to a callback; and
 *	  their aggregate, as the service would compute it.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
#include "miscadmin.h"

#include "agg_scan.h"
#include "agg_state.h"
#include "keytypes.h"
#include "pg_compat.h"

/*
 * Every index entry the snapshot sees under keys, in the index's order (an
 * index scan's), deformed, to fn.
 */
void
gbt_scan_index_entries(Relation heap, Relation index, ScanKey keys, int nkeys,
					   Snapshot snapshot, GbtEntryFn fn, void *arg)
{
	IndexScanDesc scan = gbt_index_beginscan(heap, index, snapshot, nkeys, 0);
	TupleTableSlot *slot = table_slot_create(heap, NULL);
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];

	scan->xs_want_itup = true;
	index_rescan(scan, keys, nkeys, NULL, 0);
	while (index_getnext_slot(scan, ForwardScanDirection, slot))
	{
		CHECK_FOR_INTERRUPTS();
		index_deform_tuple(scan->xs_itup, scan->xs_itupdesc, values, isnull);
		fn(values, isnull, arg);
	}
	ExecDropSingleTupleTableSlot(slot);
	index_endscan(scan);
}

typedef struct ScanAgg
{
	Relation	index;
	const GbtColumns *cols;
	GbtAggResult *r;
} ScanAgg;

static void
scan_agg_add(const Datum *values, const bool *isnull, void *arg)
{
	ScanAgg    *sa = arg;
	int64		vals[GBT_MAX_COLS];
	uint8		nulls = gbt_entry_values(sa->index, sa->cols, (Datum *) values,
										 (bool *) isnull, vals);

	gbt_agg_add_entry(sa->r, sa->cols, vals, nulls);
}

/*
 * The same without the service: the functions' answer when it cannot give
 * one, and the rows the mirror has no entries for (NULL keys).
 */
void
gbt_aggregate_by_scan(Relation heap, Relation index, ScanKey keys, int nkeys,
					  Snapshot snapshot, const GbtColumns *cols, GbtAggResult *r)
{
	ScanAgg		sa = {index, cols, r};

	gbt_scan_index_entries(heap, index, keys, nkeys, snapshot, scan_agg_add, &sa);
}

typedef struct ScanFiltered
{
	Relation	index;
	const GbtColumns *cols;
	const gbt_pred_set *preds;
	GbtAggResult *results;
} ScanFiltered;

static void
scan_filtered_add(const Datum *values, const bool *isnull, void *arg)
{
	ScanFiltered *sf = arg;
	int64		vals[GBT_MAX_COLS] = {0};
	uint8		nulls = gbt_entry_values(sf->index, sf->cols, (Datum *) values,
										 (bool *) isnull, vals);
	int			f;

	if (sf->preds->where != NULL &&
		gbt_pred_run(sf->preds->where, sf->preds->list, (const uint64 *) vals,
					 nulls) != GBT_TV_TRUE)
		return;
	for (f = 0; f < sf->preds->nfilters; f++)
		if (sf->preds->filter[f] == NULL ||
			gbt_pred_run(sf->preds->filter[f], sf->preds->list, (const uint64 *) vals,
						 nulls) == GBT_TV_TRUE)
			gbt_agg_add_entry(&sf->results[f], sf->cols, vals, nulls);
}

void
gbt_aggregate_by_scan_filtered(Relation heap, Relation index, ScanKey keys, int nkeys,
							   Snapshot snapshot, const GbtColumns *cols,
							   const gbt_pred_set *preds, GbtAggResult *results)
{
	ScanFiltered sf = {index, cols, preds, results};

	gbt_scan_index_entries(heap, index, keys, nkeys, snapshot, scan_filtered_add, &sf);
}
