/*
 * scankeys.h
 *	  Scan keys on the leading key column as ranges of mirror keys.
 */
#ifndef GPUBTREE_SCANKEYS_H
#define GPUBTREE_SCANKEYS_H

#include "postgres.h"

#include "access/skey.h"

extern int64 gbt_sort_unique_keys(uint64 *keys, int64 n);
extern int64 gbt_sort_unique_mapped(uint64 *keys, int64 n, uint32 *map);
/* From this many keys on, a caller may leave them to the service to sort. */
#define GBT_SERVICE_SORT_MIN 65536

extern bool gbt_keys_to_ranges(ScanKey keys, int nkeys, Oid keytype, bool aggregate,
							   bool *sorted, uint64 **lo_out, uint64 **hi_out,
							   int64 *n_out);

#endif							/* GPUBTREE_SCANKEYS_H */
