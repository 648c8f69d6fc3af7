/*
 * agg_group_estimate.c
 *	  How many buckets a GROUP BY a bucket of the key asks for: the row
 *	  estimate and per-bucket cost of the GpubtreeAggregate node
 *	  (agg_plan.c), from the key column's statistics and the bucket
 *	  expression's structure.
 *
 * estimate_num_groups() sees a function of the key as having as many values
 * as the key itself: 2^26 for date_trunc('day', ts) over 2^26 distinct
 * timestamps.  Here the smallest and largest key (of the column's histogram
 * and most common values) go through the expression as an interval of
 * doubles, with a bound on how many distinct values it holds: a cast or a
 * shift keeps both, a product or quotient scales the interval, and each
 * step that cuts it into buckets (width_bucket, integer division,
 * date_trunc, date_bin, floor and the like, a cast to an integer or a date)
 * bounds the count by the interval's length over the bucket's width, plus
 * one.  Times are in microseconds (a date as its midnight), a month and a
 * year by their average length.  The bucket functions themselves are never
 * called (one may fail on a key no row has); their other arguments are read
 * only as constants or bound parameters.  Anything else gives the caller's
 * fallback, as does a key without statistics (any value: only width_bucket
 * bounds its buckets then).
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_language.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "datatype/timestamp.h"
#include "optimizer/optimizer.h"
#include "parser/scansup.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "agg_group.h"

/* What one function of a bucket expression does to the key's values. */
typedef enum BucketStep
{
	STEP_SAME,					/* keeps them apart: a cast, k + c on dates */
	STEP_ADD,					/* k + c, c + k */
	STEP_SUB,					/* k - c, c - k */
	STEP_MUL,					/* k * c, c * k */
	STEP_DIV,					/* k / c, of floats or numeric */
	STEP_INT_DIV,				/* k / c, truncated to an integer */
	STEP_ROUND,					/* to an integer, or to a numeric's scale */
	STEP_DAY,					/* a timestamp to its date */
	STEP_WIDTH_BUCKET,			/* width_bucket(k, low, high, count) */
	STEP_TRUNC,					/* date_trunc(unit, k [, zone]) */
	STEP_BIN					/* date_bin(stride, k, origin) */
} BucketStep;

/*
 * The functions of agg_group.c's whitelist, by their C name: any function
 * missing here estimates as the fallback.
 */
static const struct
{
	const char *prosrc;
	BucketStep	step;
}			bucket_steps[] = {
	{"width_bucket_float8", STEP_WIDTH_BUCKET}, {"width_bucket_numeric", STEP_WIDTH_BUCKET},
	{"timestamp_trunc", STEP_TRUNC}, {"timestamptz_trunc", STEP_TRUNC},
	{"timestamptz_trunc_zone", STEP_TRUNC},
	{"timestamp_bin", STEP_BIN}, {"timestamptz_bin", STEP_BIN},
	{"i2toi4", STEP_SAME}, {"i4toi2", STEP_SAME}, {"int28", STEP_SAME}, {"int82", STEP_SAME},
	{"int48", STEP_SAME}, {"int84", STEP_SAME}, {"i2tod", STEP_SAME}, {"i4tod", STEP_SAME},
	{"i8tod", STEP_SAME}, {"i2tof", STEP_SAME}, {"i4tof", STEP_SAME}, {"i8tof", STEP_SAME},
	{"ftod", STEP_SAME}, {"dtof", STEP_SAME}, {"int2_numeric", STEP_SAME},
	{"int4_numeric", STEP_SAME}, {"int8_numeric", STEP_SAME}, {"float4_numeric", STEP_SAME},
	{"float8_numeric", STEP_SAME}, {"numeric_float8", STEP_SAME},
	{"date_timestamp", STEP_SAME}, {"date_timestamptz", STEP_SAME},
	{"timestamptz_timestamp", STEP_SAME}, {"timestamp_timestamptz", STEP_SAME},
	{"date_pli", STEP_SAME}, {"date_mii", STEP_SAME}, {"integer_pl_date", STEP_SAME},
	{"dtoi2", STEP_ROUND}, {"dtoi4", STEP_ROUND}, {"dtoi8", STEP_ROUND},
	{"ftoi2", STEP_ROUND}, {"ftoi4", STEP_ROUND}, {"ftoi8", STEP_ROUND},
	{"numeric_int2", STEP_ROUND}, {"numeric_int4", STEP_ROUND}, {"numeric_int8", STEP_ROUND},
	{"dfloor", STEP_ROUND}, {"dceil", STEP_ROUND}, {"dround", STEP_ROUND}, {"dtrunc", STEP_ROUND},
	{"numeric_floor", STEP_ROUND}, {"numeric_ceil", STEP_ROUND},
	{"numeric_round", STEP_ROUND}, {"numeric_trunc", STEP_ROUND},
	{"timestamp_date", STEP_DAY}, {"timestamptz_date", STEP_DAY},
	{"int2pl", STEP_ADD}, {"int4pl", STEP_ADD}, {"int8pl", STEP_ADD}, {"int24pl", STEP_ADD},
	{"int42pl", STEP_ADD}, {"int48pl", STEP_ADD}, {"int84pl", STEP_ADD}, {"int28pl", STEP_ADD},
	{"int82pl", STEP_ADD}, {"float4pl", STEP_ADD}, {"float8pl", STEP_ADD},
	{"float48pl", STEP_ADD}, {"float84pl", STEP_ADD}, {"numeric_add", STEP_ADD},
	{"int2mi", STEP_SUB}, {"int4mi", STEP_SUB}, {"int8mi", STEP_SUB}, {"int24mi", STEP_SUB},
	{"int42mi", STEP_SUB}, {"int48mi", STEP_SUB}, {"int84mi", STEP_SUB}, {"int28mi", STEP_SUB},
	{"int82mi", STEP_SUB}, {"float4mi", STEP_SUB}, {"float8mi", STEP_SUB},
	{"float48mi", STEP_SUB}, {"float84mi", STEP_SUB}, {"numeric_sub", STEP_SUB},
	{"int2mul", STEP_MUL}, {"int4mul", STEP_MUL}, {"int8mul", STEP_MUL}, {"int24mul", STEP_MUL},
	{"int42mul", STEP_MUL}, {"int48mul", STEP_MUL}, {"int84mul", STEP_MUL},
	{"int28mul", STEP_MUL}, {"int82mul", STEP_MUL}, {"float4mul", STEP_MUL},
	{"float8mul", STEP_MUL}, {"float48mul", STEP_MUL}, {"float84mul", STEP_MUL},
	{"numeric_mul", STEP_MUL},
	{"int2div", STEP_INT_DIV}, {"int4div", STEP_INT_DIV}, {"int8div", STEP_INT_DIV},
	{"int24div", STEP_INT_DIV}, {"int42div", STEP_INT_DIV}, {"int48div", STEP_INT_DIV},
	{"int84div", STEP_INT_DIV}, {"int28div", STEP_INT_DIV}, {"int82div", STEP_INT_DIV},
	{"numeric_div_trunc", STEP_INT_DIV},
	{"float4div", STEP_DIV}, {"float8div", STEP_DIV}, {"float48div", STEP_DIV},
	{"float84div", STEP_DIV}, {"numeric_div", STEP_DIV},
};

/* The values an expression of the key takes, as far as it is known. */
typedef struct KeySpan
{
	double		lo;				/* the smallest and largest */
	double		hi;
	double		count;			/* at most this many distinct; inf: unknown */
} KeySpan;

/* The step of an internal function of pg_catalog, or -1. */
static int
step_of(Oid funcid)
{
	HeapTuple	tp = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	int			step = -1;
	bool		isnull;
	Datum		src;

	if (!HeapTupleIsValid(tp))
		return -1;
	src = SysCacheGetAttr(PROCOID, tp, Anum_pg_proc_prosrc, &isnull);
	if (!isnull && ((Form_pg_proc) GETSTRUCT(tp))->prolang == INTERNALlanguageId &&
		((Form_pg_proc) GETSTRUCT(tp))->pronamespace == PG_CATALOG_NAMESPACE)
	{
		char	   *name = TextDatumGetCString(src);
		int			i;

		for (i = 0; i < lengthof(bucket_steps); i++)
			if (strcmp(bucket_steps[i].prosrc, name) == 0)
				step = bucket_steps[i].step;
		pfree(name);
	}
	ReleaseSysCache(tp);
	return step;
}

/* A number or a time as a double (times in microseconds); false for NaN. */
static bool
datum_to_double(Datum value, Oid type, double *out)
{
	switch (type)
	{
		case INT2OID:
			*out = DatumGetInt16(value);
			break;
		case INT4OID:
			*out = DatumGetInt32(value);
			break;
		case INT8OID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case TIMEOID:
			*out = (double) DatumGetInt64(value);
			break;
		case FLOAT4OID:
			*out = DatumGetFloat4(value);
			break;
		case FLOAT8OID:
			*out = DatumGetFloat8(value);
			break;
		case NUMERICOID:
			*out = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, value));
			break;
		case DATEOID:
			*out = date2timestamp_no_overflow(DatumGetDateADT(value));
			break;
		default:
			return false;
	}
	return !isnan(*out);
}

/* A constant argument, or a bound parameter's value, with no function called. */
static Const *
constant_of(PlannerInfo *root, Node *arg)
{
	while (IsA(arg, RelabelType))
		arg = (Node *) ((RelabelType *) arg)->arg;
	if (IsA(arg, Param) && ((Param *) arg)->paramkind == PARAM_EXTERN)
		arg = estimate_expression_value(root, arg);
	if (IsA(arg, Const) && !((Const *) arg)->constisnull)
		return (Const *) arg;
	return NULL;
}

static bool
number_of(PlannerInfo *root, Node *arg, double *out)
{
	Const	   *c = constant_of(root, arg);

	return c != NULL && datum_to_double(c->constvalue, getBaseType(c->consttype), out) &&
		!isinf(*out);
}

/* date_trunc's unit, as date_trunc reads it, in microseconds. */
static bool
unit_length(PlannerInfo *root, Node *arg, double *out)
{
	Const	   *c = constant_of(root, arg);
	text	   *units;
	char	   *lowunits;
	int			val;

	if (c == NULL || getBaseType(c->consttype) != TEXTOID)
		return false;
	units = DatumGetTextPP(c->constvalue);
	lowunits = downcase_truncate_identifier(VARDATA_ANY(units), VARSIZE_ANY_EXHDR(units), false);
	if (DecodeUnits(0, lowunits, &val) != UNITS)
		return false;
	switch (val)
	{
		case DTK_MICROSEC:
			*out = 1;
			return true;
		case DTK_MILLISEC:
			*out = 1000;
			return true;
		case DTK_SECOND:
			*out = USECS_PER_SEC;
			return true;
		case DTK_MINUTE:
			*out = USECS_PER_MINUTE;
			return true;
		case DTK_HOUR:
			*out = USECS_PER_HOUR;
			return true;
		case DTK_DAY:
			*out = USECS_PER_DAY;
			return true;
		case DTK_WEEK:
			*out = 7.0 * USECS_PER_DAY;
			return true;
		case DTK_MONTH:
			*out = DAYS_PER_YEAR / MONTHS_PER_YEAR * USECS_PER_DAY;
			return true;
		case DTK_QUARTER:
			*out = DAYS_PER_YEAR / 4 * USECS_PER_DAY;
			return true;
		case DTK_YEAR:
			*out = DAYS_PER_YEAR * USECS_PER_DAY;
			return true;
		case DTK_DECADE:
			*out = 10 * DAYS_PER_YEAR * USECS_PER_DAY;
			return true;
		case DTK_CENTURY:
			*out = 100 * DAYS_PER_YEAR * USECS_PER_DAY;
			return true;
		case DTK_MILLENNIUM:
			*out = 1000 * DAYS_PER_YEAR * USECS_PER_DAY;
			return true;
	}
	return false;
}

/* date_bin's stride in microseconds (date_bin refuses months). */
static bool
stride_length(PlannerInfo *root, Node *arg, double *out)
{
	Const	   *c = constant_of(root, arg);
	Interval   *stride;

	if (c == NULL || getBaseType(c->consttype) != INTERVALOID)
		return false;
	stride = DatumGetIntervalP(c->constvalue);
	*out = (double) stride->time + (double) stride->day * USECS_PER_DAY;
	return stride->month == 0 && *out > 0;
}

/* The smallest and largest key of the histogram and most common values. */
static bool
key_range(PlannerInfo *root, Var *var, Oid keytype, double *lo, double *hi)
{
	static const int kinds[] = {STATISTIC_KIND_HISTOGRAM, STATISTIC_KIND_MCV};
	VariableStatData vardata;
	AttStatsSlot sslot;
	bool		found = false;
	int			k,
				i;

	examine_variable(root, (Node *) var, 0, &vardata);
	for (k = 0; k < lengthof(kinds) && HeapTupleIsValid(vardata.statsTuple); k++)
	{
		if (!get_attstatsslot(&sslot, vardata.statsTuple, kinds[k], InvalidOid,
							  ATTSTATSSLOT_VALUES))
			continue;
		for (i = 0; i < sslot.nvalues && getBaseType(sslot.valuetype) == keytype; i++)
		{
			double		v;

			if (!datum_to_double(sslot.values[i], keytype, &v))
				continue;
			*lo = found ? Min(*lo, v) : v;
			*hi = found ? Max(*hi, v) : v;
			found = true;
		}
		free_attstatsslot(&sslot);
	}
	ReleaseVariableStats(vardata);
	return found;
}

/* Values times f (f may be negative). */
static void
scale(KeySpan *s, double f)
{
	double		a = s->lo * f,
				b = s->hi * f;

	s->lo = Min(a, b);
	s->hi = Max(a, b);
	if (f == 0)
		s->count = 1;
}

/* Values cut into buckets of width w: at most one value a bucket. */
static void
cut(KeySpan *s, double w)
{
	s->count = Min(s->count, floor((s->hi - s->lo) / w) + 1);
}

/* width_bucket's bucket of x, as width_bucket_float8() computes it. */
static double
bucket_at(double x, double low, double high, double n)
{
	if (low < high)
		return x < low ? 0 : x >= high ? n + 1 : floor((x - low) / (high - low) * n) + 1;
	return x > low ? 0 : x <= high ? n + 1 : floor((low - x) / (low - high) * n) + 1;
}

/*
 * The values of node, a chain of bucket steps over the key: false when some
 * part of it is not known.
 */
static bool
span_of(PlannerInfo *root, Node *node, Index relid, AttrNumber keyattno, Oid keytype,
		KeySpan *s)
{
	List	   *args;
	ListCell   *lc;
	int			step;
	int			keyarg = -1;
	Node	   *other = NULL;
	double		c = 0,
				w = 0,
				low,
				high,
				first,
				last;

	while (IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) node;

		if (var->varno != relid || var->varlevelsup != 0 || var->varattno != keyattno)
			return false;
		/* no statistics: any key (width_bucket still has count + 2 buckets) */
		s->count = INFINITY;
		if (!key_range(root, var, keytype, &s->lo, &s->hi))
		{
			s->lo = -INFINITY;
			s->hi = INFINITY;
		}
		return true;
	}
	if (IsA(node, FuncExpr))
		args = ((FuncExpr *) node)->args;
	else if (IsA(node, OpExpr))
		args = ((OpExpr *) node)->args;
	else
		return false;
	step = step_of(IsA(node, FuncExpr) ? ((FuncExpr *) node)->funcid :
				   ((OpExpr *) node)->opfuncid);
	foreach(lc, args)
	{
		if (!contain_var_clause(lfirst(lc)))
			other = lfirst(lc);
		else if (keyarg >= 0)
			return false;
		else
			keyarg = foreach_current_index(lc);
	}
	if (step < 0 || keyarg < 0 ||
		!span_of(root, list_nth(args, keyarg), relid, keyattno, keytype, s))
		return false;

	switch ((BucketStep) step)
	{
		case STEP_SAME:
			return true;
		case STEP_ADD:
		case STEP_SUB:
			if (list_length(args) != 2 || !number_of(root, other, &c))
				return false;
			if (step == STEP_SUB && keyarg == 1)
				scale(s, -1);	/* c - k */
			else if (step == STEP_SUB)
				c = -c;
			s->lo += c;
			s->hi += c;
			return true;
		case STEP_MUL:
		case STEP_DIV:
		case STEP_INT_DIV:
			if (list_length(args) != 2 || !number_of(root, other, &c) ||
				(step != STEP_MUL && (keyarg != 0 || c == 0)))
				return false;
			scale(s, step == STEP_MUL ? c : 1 / c);
			if (step == STEP_INT_DIV)
				cut(s, 1);
			return true;
		case STEP_ROUND:
			/* round(x, scale), trunc(x, scale) of a numeric: 10^-scale */
			if (keyarg != 0 || (list_length(args) == 2 && !number_of(root, other, &c)))
				return false;
			cut(s, pow(10, -c));
			return true;
		case STEP_DAY:
			cut(s, USECS_PER_DAY);
			return true;
		case STEP_TRUNC:
			if (keyarg != 1 || !unit_length(root, linitial(args), &w))
				return false;
			cut(s, w);
			return true;
		case STEP_BIN:
			if (keyarg != 1 || !stride_length(root, linitial(args), &w))
				return false;
			cut(s, w);
			return true;
		case STEP_WIDTH_BUCKET:
			if (keyarg != 0 || list_length(args) != 4 ||
				!number_of(root, lsecond(args), &low) ||
				!number_of(root, lthird(args), &high) ||
				!number_of(root, lfourth(args), &c) || c < 1 || low == high)
				return false;
			/* the buckets of the ends, and every one between */
			first = bucket_at(s->lo, low, high, c);
			last = bucket_at(s->hi, low, high, c);
			s->lo = Min(first, last);
			s->hi = Max(first, last);
			s->count = Min(s->count, s->hi - s->lo + 1);
			return true;
	}
	return false;
}

double
gbt_bucket_count_estimate(PlannerInfo *root, RelOptInfo *rel, Expr *expr,
						  AttrNumber keyattno, Oid keytype, double fallback)
{
	KeySpan		s;
	double		buckets;

	if (!span_of(root, (Node *) expr, rel->relid, keyattno, keytype, &s) ||
		isinf(s.count) || isnan(s.count))
		return fallback;

	/*
	 * The query's key ranges (every condition is on the key) ask for the
	 * share of the buckets that their share of the rows suggests, as if the
	 * keys were spread evenly between the ends.
	 */
	buckets = s.count;
	if (rel->tuples > 0 && rel->rows < rel->tuples)
		buckets *= rel->rows / rel->tuples;
	return clamp_row_est(Min(buckets, fallback));
}
