/*
 * agg_funcs.c
 *	  gpubtree_count(), gpubtree_sum(), gpubtree_avg(), gpubtree_min(),
 *	  gpubtree_max(): range aggregates over a gpubtree index, called
 *	  directly.
 *
 * The range is [lo, hi] on the index's leading key column, the rows those
 * of the current snapshot.  The GPU service answers (exec_request.c);
 * without it, or with gpubtree.device = off, an index scan does
 * (agg_scan.c), with the same result.  Results are numeric (count:
 * bigint), exact for integer columns; min and max of date and timestamp
 * columns are extract(epoch from ...).
 * Each gives what its SQL gives (README), errors included: bounds of a
 * domain compare as its base type's, and a float sum fails where sum()
 * would.
 * Like a query, they need SELECT on the columns involved, and they refuse a
 * table with row-level security enabled for the user (the policies would
 * not be applied).
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "agg_final.h"
#include "agg_scan.h"
#include "backend.h"
#include "exec_request.h"
#include "fmgr.h"
#include "indexarg.h"
#include "keytypes.h"
#include "miscadmin.h"
#include "scankeys.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/float.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"


PG_FUNCTION_INFO_V1(gpubtree_count);
PG_FUNCTION_INFO_V1(gpubtree_sum);
PG_FUNCTION_INFO_V1(gpubtree_avg);
PG_FUNCTION_INFO_V1(gpubtree_min);
PG_FUNCTION_INFO_V1(gpubtree_max);

typedef struct FuncAgg
{
	GbtAggResult r;
	GbtColumns	columns;
	int			col;			/* the aggregated column of the index */
	Oid			coltype;
	bool		by_service;
	Datum		sum;			/* sum and avg: sum(col)::numeric (below) */
} FuncAgg;

/*
 * The index column named colname, checked to be one that fname can
 * aggregate, and its type (a domain's base type).
 */
static int
find_column(Relation index, const char *fname, GbtAggKind kind,
			const char *colname, Oid *coltype)
{
	Oid			heapoid = index->rd_index->indrelid;
	bool		minmax = kind == GBT_AGG_MIN || kind == GBT_AGG_MAX;
	int			c;

	for (c = 0; c < index->rd_index->indnatts; c++)
	{
		AttrNumber	attnum = index->rd_index->indkey.values[c];
		char	   *name = attnum != 0 ? get_attname(heapoid, attnum, false) : NULL;

		if (name == NULL || strcmp(name, colname) != 0)
			continue;
		*coltype = getBaseType(TupleDescAttr(RelationGetDescr(index), c)->atttypid);
		if (c >= GBT_MAX_COLS ||
			!gbt_agg_supported(minmax ? GBT_AGG_MIN : GBT_AGG_AVG, *coltype))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("%s cannot aggregate column \"%s\" of index \"%s\"",
							fname, colname, RelationGetRelationName(index)),
					 minmax ?
					 errdetail("Only integer, floating-point, date and timestamp columns among the first %d of the index can be aggregated.",
							   GBT_MAX_COLS) :
					 errdetail("Only integer and floating-point columns among the first %d of the index can be aggregated.",
							   GBT_MAX_COLS)));
		return c;
	}
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_COLUMN),
			 errmsg("column \"%s\" is not in index \"%s\"",
					colname, RelationGetRelationName(index))));
	return -1;					/* keep compiler quiet */
}

/*
 * The type of bound argno: a domain's base type, since its values compare
 * as the base type's do in SQL.  0 when unknown (no call expression).
 */
static Oid
bound_type(FunctionCallInfo fcinfo, int argno)
{
	Oid			type = get_fn_expr_argtype(fcinfo->flinfo, argno);

	return OidIsValid(type) ? getBaseType(type) : InvalidOid;
}

/* A scan key "key <strategy> value" for the index's leading column. */
static void
bound_key(ScanKey key, Relation index, StrategyNumber strategy, Datum value,
		  Oid argtype)
{
	Oid			keytype = index->rd_opcintype[0];
	Oid			opno = get_opfamily_member(index->rd_opfamily[0], keytype,
										   argtype, strategy);

	if (!OidIsValid(opno))
		elog(ERROR, "no operator for types %u and %u in the index's operator family",
			 keytype, argtype);
	ScanKeyEntryInitialize(key, 0, 1, strategy,
						   argtype == keytype ? InvalidOid : argtype,
						   index->rd_indcollation[0], get_opcode(opno), value);
}

typedef struct FloatSum
{
	const FuncAgg *fa;
	double		sum;
} FloatSum;

static void
float_sum_add(const Datum *values, const bool *isnull, void *arg)
{
	FloatSum   *fs = arg;
	int			col = fs->fa->col;

	if (!isnull[col])
		fs->sum = float8_pl(fs->sum, fs->fa->coltype == FLOAT4OID ?
							(double) DatumGetFloat4(values[col]) :
							DatumGetFloat8(values[col]));
}

/*
 * sum(col::float8) of a float column, added up as PostgreSQL's sum() does:
 * one row at a time with float8pl's overflow error, in the index's order
 * (an index scan's), under the same snapshot as the answer being checked.
 */
static double
float_sum_in_order(Relation heap, Relation index, ScanKey keys, int nkeys,
				   const FuncAgg *fa)
{
	FloatSum	fs = {fa, 0};

	gbt_scan_index_entries(heap, index, keys, nkeys, GetActiveSnapshot(),
						   float_sum_add, &fs);
	return fs.sum;
}

/*
 * sum(col)::numeric, for a float column sum(col::float8)::numeric, as the
 * SQL aggregate gives it.  The exact partial sums give PostgreSQL's float
 * sum unless a partial sum could overflow on the way, where PostgreSQL
 * raises an error and the exact sum is Infinity or NaN (gbt_agg_final()
 * tells): then the rows are added again as sum() adds them.
 */
static Datum
column_sum(FuncAgg *fa, Relation heap, Relation index, ScanKey keys, int nkeys)
{
	GbtColType type = fa->columns.type[fa->col];
	Datum		value;
	bool		isnull;
	const char *why;

	if (type != GBT_COL_FLOAT8 ||
		gbt_agg_final(GBT_AGG_SUM, FLOAT8OID, &fa->r, fa->col, &value, &isnull, &why))
		return gbt_agg_sum_numeric(&fa->r, fa->col, type);
	return DirectFunctionCall1(float8_numeric,
							   Float8GetDatum(float_sum_in_order(heap, index, keys,
																 nkeys, fa)));
}

/*
 * Aggregate kind (GBT_AGG_COUNT_STAR for gpubtree_count) over the range the
 * arguments give, into fa.
 */
static void
run(FunctionCallInfo fcinfo, const char *fname, GbtAggKind kind, FuncAgg *fa)
{
	bool		has_column = kind != GBT_AGG_COUNT_STAR;
	int			b = has_column ? 2 : 1;
	Relation	index;
	Relation	heap;
	Oid			heapoid;
	AttrNumber	keyattnum;
	Oid			keytype;
	Oid			lotype = bound_type(fcinfo, b);
	Oid			hitype = bound_type(fcinfo, b + 1);
	ScanKeyData keys[2];
	uint64	   *lo;
	uint64	   *hi;
	int64		nranges;
	GbtAggAnswer answer;
	const char *why;

	memset(fa, 0, sizeof(FuncAgg));
	if (PG_ARGISNULL(0) || (has_column && PG_ARGISNULL(1)))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the index and column of %s must not be NULL", fname)));
	if (PG_ARGISNULL(b) || PG_ARGISNULL(b + 1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the bounds of %s must not be NULL", fname)));

	/* Privileges first, from the catalogs: a refused call takes no lock. */
	heapoid = gbt_index_arg_table(PG_GETARG_OID(0), fname, GBT_READS_KEY,
								  has_column ? NameStr(*PG_GETARG_NAME(1)) : NULL,
								  &keyattnum);
	if (keyattnum == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s needs an index whose leading column is a plain column, without a predicate",
						fname)));
	if (check_enable_rls(heapoid, InvalidOid, false) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s cannot be used on table \"%s\", which has row-level security enabled for this user",
						fname, get_rel_name(heapoid))));

	index = gbt_index_arg_open(PG_GETARG_OID(0), heapoid, fname,
							   AccessShareLock, AccessShareLock, &heap);
	keytype = gbt_mirror_key_type(index);
	if (!OidIsValid(keytype) || index->rd_indpred != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s needs an index whose leading column is a plain column, without a predicate",
						fname)));
	if (lotype != hitype || !gbt_comparable(lotype, keytype))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("bounds of type %s cannot be compared with key column of type %s",
						format_type_be(lotype), format_type_be(keytype)),
				 errhint("Cast the bounds to %s.", format_type_be(keytype))));
	if (has_column)
		fa->col = find_column(index, fname, kind, NameStr(*PG_GETARG_NAME(1)),
							  &fa->coltype);

	gbt_index_columns(index, &fa->columns);
	bound_key(&keys[0], index, BTGreaterEqualStrategyNumber, PG_GETARG_DATUM(b), lotype);
	bound_key(&keys[1], index, BTLessEqualStrategyNumber, PG_GETARG_DATUM(b + 1), lotype);

	if (gpubtree_device_mode != GPUBTREE_DEVICE_OFF &&
		gbt_keys_to_ranges(keys, 2, keytype, true, NULL, &lo, &hi, &nranges) &&
		gbt_aggregate(heap, index, lo, hi, nranges, true, GetActiveSnapshot(), GBT_MAX_UNSURE,
					  kind != GBT_AGG_MIN && kind != GBT_AGG_MAX, &answer, &why))
	{
		fa->r = answer.r;
		fa->by_service = true;
	}
	else
		gbt_aggregate_by_scan(heap, index, keys, 2, GetActiveSnapshot(),
							  &fa->columns, &fa->r);
	if ((kind == GBT_AGG_SUM || kind == GBT_AGG_AVG) && fa->r.col[fa->col].nonnull > 0)
		fa->sum = column_sum(fa, heap, index, keys, 2);

	table_close(heap, AccessShareLock);
	index_close(index, AccessShareLock);
}

Datum
gpubtree_count(PG_FUNCTION_ARGS)
{
	FuncAgg		fa;

	run(fcinfo, "gpubtree_count", GBT_AGG_COUNT_STAR, &fa);
	PG_RETURN_INT64(fa.r.count);
}

Datum
gpubtree_sum(PG_FUNCTION_ARGS)
{
	FuncAgg		fa;

	run(fcinfo, "gpubtree_sum", GBT_AGG_SUM, &fa);
	if (fa.r.col[fa.col].nonnull == 0)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(fa.sum);
}

Datum
gpubtree_avg(PG_FUNCTION_ARGS)
{
	FuncAgg		fa;

	run(fcinfo, "gpubtree_avg", GBT_AGG_AVG, &fa);
	if (fa.r.col[fa.col].nonnull == 0)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(DirectFunctionCall2(numeric_div, fa.sum,
										DirectFunctionCall1(int8_numeric,
															Int64GetDatum(fa.r.col[fa.col].nonnull))));
}

/*
 * min(col)::numeric, or for date and timestamps extract(epoch from min(col))
 * (infinite values give infinite results, as there).
 */
static Datum
min_or_max(FunctionCallInfo fcinfo, bool is_min)
{
	FuncAgg		fa;
	const GbtAggCol *c;
	const GbtKeyType *kt;
	int64		i;
	double		f;

	run(fcinfo, is_min ? "gpubtree_min" : "gpubtree_max",
		is_min ? GBT_AGG_MIN : GBT_AGG_MAX, &fa);
	c = &fa.r.col[fa.col];
	if (c->nonnull == 0)
		PG_RETURN_NULL();
	kt = gbt_key_type(fa.coltype);
	if (kt == NULL)
		elog(ERROR, "gpubtree: unexpected column type %u", fa.coltype);
	i = is_min ? c->min_i : c->max_i;
	f = is_min ? c->min_f : c->max_f;
	return gbt_key_numeric(kt, kt->datum(i, f));
}

Datum
gpubtree_min(PG_FUNCTION_ARGS)
{
	return min_or_max(fcinfo, true);
}

Datum
gpubtree_max(PG_FUNCTION_ARGS)
{
	return min_or_max(fcinfo, false);
}
