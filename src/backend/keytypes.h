/*
 * keytypes.h
 *	  The key types the mirror holds (the table in keytable.h), and the
 *	  mirror's form of an index's columns (entries.h).
 */
#ifndef GPUBTREE_KEYTYPES_H
#define GPUBTREE_KEYTYPES_H

#include "postgres.h"

#include "utils/relcache.h"

#include "fmgr.h"

#include "entries.h"

/* Which bounds compare in a key type's encoding (keytable.h). */
typedef enum GbtKeyFamily
{
	GBT_FAMILY_INTEGER,
	GBT_FAMILY_FLOAT,
	GBT_FAMILY_DATETIME
} GbtKeyFamily;

/* What PostgreSQL's sum() of a key type returns (keytable.h). */
typedef enum GbtSumKind
{
	GBT_SUM_NONE,
	GBT_SUM_INT8,
	GBT_SUM_NUMERIC,
	GBT_SUM_FLOAT8
} GbtSumKind;

/* One row of the key-type table (keytable.h). */
typedef struct GbtKeyType
{
	Oid			typid;
	const char *name;
	GbtKeyFamily family;
	GbtColType	held;			/* how the mirror holds its values */
	GbtSumKind	sum;
	uint64		(*encode) (Datum value);	/* its order-preserving key */
	/* the keys of n values side by side (the C type's array) */
	void		(*encode_packed) (const void *values, int64 n, uint64 *keys);
	Datum		(*datum) (int64 i, double f);	/* a held value as a Datum */
	PGFunction	numeric;		/* see gbt_key_numeric() */
} GbtKeyType;

extern const GbtKeyType *gbt_key_type(Oid typid);
extern char *gbt_key_type_names(void);
extern Datum gbt_key_numeric(const GbtKeyType *kt, Datum value);

extern Oid	gbt_mirror_key_type(Relation index);
extern uint64 gbt_encode_key(Datum value, Oid typid);
extern Datum gbt_decode_key(uint64 key, Oid typid);
extern bool gbt_comparable(Oid argtype, Oid keytype);
extern GbtColType gbt_column_type(Oid typid);
extern void gbt_index_columns(Relation index, GbtColumns *cols);
extern uint8 gbt_entry_values(Relation index, const GbtColumns *cols,
							  const Datum *values, const bool *isnull, int64 *vals);

#endif							/* GPUBTREE_KEYTYPES_H */
