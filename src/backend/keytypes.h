/*
 * keytypes.h
 *	  The key types the mirror holds, and the mirror's form of an index's
 *	  columns (entries.h).
 */
#ifndef GPUBTREE_KEYTYPES_H
#define GPUBTREE_KEYTYPES_H

#include "postgres.h"

#include "utils/relcache.h"

#include "entries.h"

extern Oid	gbt_mirror_key_type(Relation index);
extern uint64 gbt_encode_key(Datum value, Oid typid);
extern bool gbt_comparable(Oid argtype, Oid keytype);
extern GbtColType gbt_column_type(Oid typid);
extern void gbt_index_columns(Relation index, GbtColumns *cols);
extern uint8 gbt_entry_values(Relation index, const GbtColumns *cols,
							  const Datum *values, const bool *isnull, int64 *vals);

#endif							/* GPUBTREE_KEYTYPES_H */
