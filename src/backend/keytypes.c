/*
 * keytypes.c
 *	  The key types the mirror holds, and the mirror's form of an index's
 *	  columns (see keytypes.h).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "keytable.h"
#include "keytypes.h"

/*
 * The table: one row per key type, from keytable.h.  Each row's functions
 * turn a Datum into its 64-bit key (or many values, as an array without
 * NULLs holds them, side by side), and a mirrored value (int64 or float8,
 * as the row holds it) back into a Datum of the type.
 */
#define GBT_KEY_FUNCS(name, ctype, encoder, typoid, family, held, sum, \
					  getdatum, datumget, numeric) \
static uint64 \
encode_##name(Datum value) \
{ \
	return encoder(datumget(value)); \
} \
static void \
encode_packed_##name(const void *values, int64 n, uint64 *keys) \
{ \
	for (int64 i = 0; i < n; i++) \
		keys[i] = encoder(((const ctype *) values)[i]); \
} \
static Datum \
datum_##name(int64 i, double f) \
{ \
	return GBT_COL_##held == GBT_COL_FLOAT8 ? \
		getdatum((ctype) f) : getdatum((ctype) i); \
}

#define GBT_KEY_ROW(name, ctype, encoder, typoid, family, held, sum, \
					getdatum, datumget, numeric) \
	{typoid, #name, GBT_FAMILY_##family, GBT_COL_##held, GBT_SUM_##sum, \
	 encode_##name, encode_packed_##name, datum_##name, numeric},

GBT_KEY_TYPES(GBT_KEY_FUNCS)

static const GbtKeyType key_types[] = {
	GBT_KEY_TYPES(GBT_KEY_ROW)
};

/* The row of a key type, or NULL; a domain is looked up as its base type. */
const GbtKeyType *
gbt_key_type(Oid typid)
{
	int			i;
	Oid			base;

	if (!OidIsValid(typid))
		return NULL;
	for (i = 0; i < lengthof(key_types); i++)
		if (key_types[i].typid == typid)
			return &key_types[i];
	base = getBaseType(typid);
	return base != typid ? gbt_key_type(base) : NULL;
}

/* A value of the type as numeric: its cast, or for date and time its epoch. */
Datum
gbt_key_numeric(const GbtKeyType *kt, Datum value)
{
	if (kt->family == GBT_FAMILY_DATETIME)
		return DirectFunctionCall2(kt->numeric, CStringGetTextDatum("epoch"), value);
	return DirectFunctionCall1(kt->numeric, value);
}

/* "smallint, integer, ... and timestamp with time zone", for messages. */
char *
gbt_key_type_names(void)
{
	StringInfoData buf;
	int			i;

	initStringInfo(&buf);
	for (i = 0; i < lengthof(key_types); i++)
		appendStringInfo(&buf, "%s%s",
						 i == 0 ? "" : i == lengthof(key_types) - 1 ? " and " : ", ",
						 format_type_be(key_types[i].typid));
	return buf.data;
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
	const GbtKeyType *kt = gbt_key_type(typid);

	if (kt == NULL)
		elog(ERROR, "gpubtree: unexpected key type %u", typid);
	return kt->encode(value);
}

/* The value of typid whose key is key: gbt_encode_key() undone. */
Datum
gbt_decode_key(uint64 key, Oid typid)
{
	const GbtKeyType *kt = gbt_key_type(typid);

	if (kt == NULL)
		elog(ERROR, "gpubtree: unexpected key type %u", typid);
	if (kt->held == GBT_COL_FLOAT8)
		return kt->datum(0, hm_decode_float8(key));
	return kt->datum(hm_decode_int64(key), 0);
}

/*
 * May a bound of type argtype be compared in the mirror's encoding of a
 * keytype column?  Within the integer and float families, yes; date,
 * timestamp and timestamptz only with their own type (time-zone rules).
 */
bool
gbt_comparable(Oid argtype, Oid keytype)
{
	const GbtKeyType *arg = gbt_key_type(argtype);
	const GbtKeyType *key = gbt_key_type(keytype);

	return arg != NULL && key != NULL && arg->family == key->family &&
		(key->family != GBT_FAMILY_DATETIME || arg->typid == key->typid);
}

/* Can the first key column's type be mirrored?  Returns its type, or 0. */
Oid
gbt_mirror_key_type(Relation index)
{
	Oid			typid = index->rd_opcintype[0];

	return gbt_key_type(typid) != NULL ? typid : InvalidOid;
}

/* How the mirror holds a column of type typid (entries.h). */
GbtColType
gbt_column_type(Oid typid)
{
	const GbtKeyType *kt = gbt_key_type(typid);

	return kt != NULL ? kt->held : GBT_COL_NONE;
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

