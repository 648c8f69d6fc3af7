/*
 * keytypes.c
 *	  The key types the mirror holds, and the mirror's form of an index's
 *	  columns (see keytypes.h).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "harmonia_keys.h"
#include "keytypes.h"

/* The key families the mirror holds; cross-type only within a family. */
typedef enum KeyFamily
{
	FAMILY_NONE,
	FAMILY_INTEGER,
	FAMILY_FLOAT,
	FAMILY_DATE,
	FAMILY_TIMESTAMP
} KeyFamily;

static KeyFamily
key_family(Oid typid)
{
	switch (typid)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			return FAMILY_INTEGER;
		case FLOAT4OID:
		case FLOAT8OID:
			return FAMILY_FLOAT;
		case DATEOID:
			return FAMILY_DATE;
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return FAMILY_TIMESTAMP;
		default:
			return FAMILY_NONE;
	}
}

/*
 * The 64-bit key of a value of type typid.  Integers share one encoding and
 * so do floats (float4 is widened exactly to float8), so integer and float
 * cross-type comparisons need no conversion.  timestamp and timestamptz
 * share the microsecond encoding but compare differently across types
 * (time zone), so callers allow those only within one type.
 */
uint64
gbt_encode_key(Datum value, Oid typid)
{
	switch (typid)
	{
		case INT2OID:
			return hm_encode_int64(DatumGetInt16(value));
		case INT4OID:
			return hm_encode_int64(DatumGetInt32(value));
		case INT8OID:
			return hm_encode_int64(DatumGetInt64(value));
		case FLOAT4OID:
			return hm_encode_float8((double) DatumGetFloat4(value));
		case FLOAT8OID:
			return hm_encode_float8(DatumGetFloat8(value));
		case DATEOID:
			return hm_encode_int64(DatumGetDateADT(value));
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return hm_encode_int64(DatumGetInt64(value));
	}
	elog(ERROR, "gpubtree: unexpected key type %u", typid);
	return 0;					/* keep compiler quiet */
}

/*
 * May a bound of type argtype be compared in the mirror's encoding of a
 * keytype column?  Within the integer and float families, yes; date,
 * timestamp and timestamptz only with their own type (time-zone rules).
 */
bool
gbt_comparable(Oid argtype, Oid keytype)
{
	KeyFamily	family = key_family(keytype);

	return key_family(argtype) == family &&
		(family == FAMILY_INTEGER || family == FAMILY_FLOAT || argtype == keytype);
}

/* Can the first key column's type be mirrored?  Returns its type, or 0. */
Oid
gbt_mirror_key_type(Relation index)
{
	Oid			typid = index->rd_opcintype[0];

	return key_family(typid) != FAMILY_NONE ? typid : InvalidOid;
}

/*
 * How the mirror holds a column of type typid (entries.h).  A domain is held
 * as its base type; the catalog is only read for types not mirrored as they
 * are.
 */
GbtColType
gbt_column_type(Oid typid)
{
	switch (typid)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return GBT_COL_INT64;
		case FLOAT4OID:
		case FLOAT8OID:
			return GBT_COL_FLOAT8;
		default:
			{
				Oid			base = getBaseType(typid);

				return base != typid ? gbt_column_type(base) : GBT_COL_NONE;
			}
	}
}

/* The index's mirrored columns: its first attributes (entries.h). */
void
gbt_index_columns(Relation index, GbtColumns *cols)
{
	TupleDesc	desc = RelationGetDescr(index);
	int			c;

	cols->ncols = Min(desc->natts, GBT_MAX_COLS);
	for (c = 0; c < cols->ncols; c++)
		cols->type[c] = gbt_column_type(TupleDescAttr(desc, c)->atttypid);
}

/*
 * The mirrored values of one entry, from the index tuple's datums, into
 * vals[]; returns the NULL bits.  The datum's width tells the type apart
 * within a column kind (a domain has its base type's), with no catalog
 * lookup per entry.
 */
uint8
gbt_entry_values(Relation index, const GbtColumns *cols, const Datum *values,
				 const bool *isnull, int64 *vals)
{
	TupleDesc	desc = RelationGetDescr(index);
	uint8		nulls = 0;
	int			c;

	for (c = 0; c < cols->ncols; c++)
	{
		Datum		v = values[c];
		int16		len = TupleDescAttr(desc, c)->attlen;

		vals[c] = 0;
		if (isnull[c] || cols->type[c] == GBT_COL_NONE)
		{
			nulls |= 1 << c;
			continue;
		}
		if (cols->type[c] == GBT_COL_FLOAT8)
			vals[c] = gbt_float8_val(len == sizeof(float4) ?
									 (double) DatumGetFloat4(v) : DatumGetFloat8(v));
		else if (len == sizeof(int16))
			vals[c] = DatumGetInt16(v);
		else if (len == sizeof(int32))
			vals[c] = DatumGetInt32(v); /* int4, date */
		else
			vals[c] = DatumGetInt64(v); /* int8, timestamp, timestamptz */
	}
	return nulls;
}

