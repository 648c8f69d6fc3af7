/*
 * agg_scan.h
 *	  Aggregates without the service, by an nbtree index scan (agg_scan.c):
 *	  the gpubtree_count()/_sum()/... functions' answer when the service
 *	  gives none, and the rows with NULL keys, which the mirror has no
 *	  entries for.
 */
#ifndef GPUBTREE_AGG_SCAN_H
#define GPUBTREE_AGG_SCAN_H

#include "postgres.h"

#include "access/skey.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

#include "protocol.h"

/* Called for each entry of gbt_scan_index_entries(), deformed. */
typedef void (*GbtEntryFn) (const Datum *values, const bool *isnull, void *arg);
extern void gbt_scan_index_entries(Relation heap, Relation index, ScanKey keys, int nkeys,
								   Snapshot snapshot, GbtEntryFn fn, void *arg);

/*
 * Add to *r the entries of an index scan with these keys whose heap tuples
 * the snapshot sees, their values read as cols says: what the service
 * would add, without it.
 */
extern void gbt_aggregate_by_scan(Relation heap, Relation index, ScanKey keys,
								  int nkeys, Snapshot snapshot,
								  const GbtColumns *cols, GbtAggResult *r);

/*
 * The same through predicate programs (predicate.h): entries WHERE keeps,
 * into results[f] where filter f's program is TRUE for them.
 */
extern void gbt_aggregate_by_scan_filtered(Relation heap, Relation index, ScanKey keys,
										   int nkeys, Snapshot snapshot,
										   const GbtColumns *cols,
										   const gbt_pred_set *preds,
										   GbtAggResult *results);

#endif							/* GPUBTREE_AGG_SCAN_H */
