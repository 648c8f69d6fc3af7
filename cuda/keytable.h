/*
 * keytable.h
 *	  The key types gpubtree mirrors: one row each.
 *
 * GBT_KEY_TYPES(X) calls X once per key type with
 *	name		the type's name in PostgreSQL's catalogs
 *	ctype		the C type of its values
 *	encoder		its order-preserving 64-bit key (harmonia_keys.h): the int64
 *				or float8 one, to which narrower values widen exactly
 *	typoid		its pg_type OID macro
 *	family		INTEGER or FLOAT: bounds of any type of the family compare
 *				in the same encoding; DATETIME: only bounds of the type itself
 *				(time zones make cross-type comparisons differ)
 *	held		how the mirror holds its values: INT64 or FLOAT8
 *	sum			what PostgreSQL's sum() of it returns: INT8 (checked for
 *				overflow), NUMERIC, FLOAT8, or NONE (no sum we answer)
 *	getdatum, datumget	its Datum conversions
 *	numeric		the PGFunction that makes a numeric of a value (the
 *				gpubtree_min() and gpubtree_max() functions' result): the
 *				value's cast for numbers, extract() (of the epoch) for DATETIME
 * The engines' tests read name, ctype and encoder; src/backend/keytypes.c
 * reads everything.  Adding a fixed-width key type is one row here plus an
 * operator class in sql/gpubtree--*.sql.  Plain C: the PostgreSQL names are
 * only tokens until keytypes.c expands them.
 */
#ifndef GBT_KEYTABLE_H
#define GBT_KEYTABLE_H

#include "harmonia_keys.h"

#define GBT_KEY_TYPES(X) \
	X(int2, int16_t, hm_encode_int64, INT2OID, INTEGER, INT64, INT8, \
	  Int16GetDatum, DatumGetInt16, int2_numeric) \
	X(int4, int32_t, hm_encode_int64, INT4OID, INTEGER, INT64, INT8, \
	  Int32GetDatum, DatumGetInt32, int4_numeric) \
	X(int8, int64_t, hm_encode_int64, INT8OID, INTEGER, INT64, NUMERIC, \
	  Int64GetDatum, DatumGetInt64, int8_numeric) \
	X(float4, float, hm_encode_float8, FLOAT4OID, FLOAT, FLOAT8, NONE, \
	  Float4GetDatum, DatumGetFloat4, float4_numeric) \
	X(float8, double, hm_encode_float8, FLOAT8OID, FLOAT, FLOAT8, FLOAT8, \
	  Float8GetDatum, DatumGetFloat8, float8_numeric) \
	X(date, int32_t, hm_encode_int64, DATEOID, DATETIME, INT64, NONE, \
	  DateADTGetDatum, DatumGetDateADT, extract_date) \
	X(timestamp, int64_t, hm_encode_int64, TIMESTAMPOID, DATETIME, INT64, NONE, \
	  TimestampGetDatum, DatumGetTimestamp, extract_timestamp) \
	X(timestamptz, int64_t, hm_encode_int64, TIMESTAMPTZOID, DATETIME, INT64, NONE, \
	  TimestampTzGetDatum, DatumGetTimestampTz, extract_timestamptz) \
	X(time, int64_t, hm_encode_int64, TIMEOID, DATETIME, INT64, NONE, \
	  TimeADTGetDatum, DatumGetTimeADT, extract_time)

#endif							/* GBT_KEYTABLE_H */
