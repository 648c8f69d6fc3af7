/*
 * export.h
 *	  Reading a whole index out for its mirror, and having the service build
 *	  the mirror from it.
 */
#ifndef GPUBTREE_EXPORT_H
#define GPUBTREE_EXPORT_H

#include "postgres.h"

#include "storage/block.h"
#include "utils/relcache.h"

#include "entries.h"

/* Called every so many entries an export has read. */
typedef void (*GbtExportProgress) (int64 done, void *arg);

extern int64 gbt_export_room(Relation index);
extern int64 gbt_export_index(Relation heap, Relation index, Oid keytype,
							  const GbtColumns *cols, GbtEntries *out, bool key_values,
							  GbtExportProgress progress, void *progress_arg);
extern int64 gbt_export_leaves(Relation index, Oid keytype, const GbtColumns *cols,
							   GbtEntries *out, bool key_values, GbtExportProgress progress,
							   void *progress_arg);
extern int64 gbt_export_decide_unknown(Relation heap, GbtEntries *e,
									   BlockNumber nblocks, int64 *ndead,
									   BlockNumber *nread, GbtEntryStamps *stamps);
extern bool gbt_build_mirror(Relation index, Oid keytype,
							 GbtExportProgress progress, void *progress_arg,
							 TimestampTz asked, char *why, Size whylen);

#endif							/* GPUBTREE_EXPORT_H */
