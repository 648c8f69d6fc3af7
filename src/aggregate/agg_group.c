/*
 * agg_group.c
 *	  GROUP BY a bucket of the key: width_bucket(k, ...), date_trunc(unit,
 *	  k), date_bin(...), k / c, k itself and the like, answered as one range
 *	  aggregate per bucket (agg_plan.c plans it, agg_node.c runs it).
 *
 * A bucket expression is a chain of functions, each monotone in the
 * argument that holds the key, whose other arguments are constants or
 * parameters.  A monotone function of the key is constant exactly on key
 * ranges, so each bucket's keys are one range, and where a bucket ends is
 * found by bisection: PostgreSQL's own function decides, called on the
 * keys around the boundary, so the buckets are PostgreSQL's to the letter.
 *
 * Time zones: a function of a timestamptz that depends on the session's
 * TimeZone (date_trunc of a timestamptz, the casts between timestamptz
 * and timestamp or date) is monotone only while the zone's UTC offset
 * stays the same.  The key's range is therefore cut where the offset
 * changes (pg_next_dst_boundary()) and the bisection runs within each
 * piece; buckets of equal value on two pieces are one group
 * (gbt_bucket_equal(), the GROUP BY's own equality).  Of the other key
 * types, a date may pass through timestamptz (date_trunc('month', d)
 * casts it: one local midnight a day, in order whatever the zone); a
 * timestamp may not, a time zone's gaps would fold its order.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/tupdesc.h"
#include "access/xact.h"
#include "catalog/pg_language.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "agg_filter.h"
#include "agg_group.h"
#include "keytypes.h"


/* How a function of the whitelist depends on the session's time zone. */
typedef enum BucketZone
{
	ZONE_NONE,					/* not at all */
	ZONE_SESSION,				/* on TimeZone */
	ZONE_ARG3,					/* on the zone named by its third argument */
	ZONE_DATE_OK				/* on TimeZone, but in order for dates */
} BucketZone;

/*
 * The functions a bucket may be made of, by their C name (pg_proc.prosrc
 * of an internal function of pg_catalog), each with the argument that may
 * hold the key, and the others constant.  Each is monotone (never rising,
 * or never falling) in that argument over its whole domain; functions
 * whose order depends on the time zone say so.
 */
typedef struct BucketFunc
{
	const char *prosrc;
	int			keyarg;			/* -1: any one argument */
	BucketZone	zone;
} BucketFunc;

static const BucketFunc bucket_funcs[] = {
	/* width_bucket(operand, low, high, count) */
	{"width_bucket_float8", 0, ZONE_NONE},
	{"width_bucket_numeric", 0, ZONE_NONE},
	/* date_trunc(unit, ts [, zone]) and date_bin(stride, ts, origin) */
	{"timestamp_trunc", 1, ZONE_NONE},
	{"timestamptz_trunc", 1, ZONE_DATE_OK},
	{"timestamptz_trunc_zone", 1, ZONE_ARG3},
	{"timestamp_bin", 1, ZONE_NONE},
	{"timestamptz_bin", 1, ZONE_NONE},
	/* casts */
	{"i2toi4", 0, ZONE_NONE}, {"i4toi2", 0, ZONE_NONE},
	{"int28", 0, ZONE_NONE}, {"int82", 0, ZONE_NONE},
	{"int48", 0, ZONE_NONE}, {"int84", 0, ZONE_NONE},
	{"i2tod", 0, ZONE_NONE}, {"i4tod", 0, ZONE_NONE}, {"i8tod", 0, ZONE_NONE},
	{"i2tof", 0, ZONE_NONE}, {"i4tof", 0, ZONE_NONE}, {"i8tof", 0, ZONE_NONE},
	{"ftod", 0, ZONE_NONE}, {"dtof", 0, ZONE_NONE},
	{"dtoi2", 0, ZONE_NONE}, {"dtoi4", 0, ZONE_NONE}, {"dtoi8", 0, ZONE_NONE},
	{"ftoi2", 0, ZONE_NONE}, {"ftoi4", 0, ZONE_NONE}, {"ftoi8", 0, ZONE_NONE},
	{"int2_numeric", 0, ZONE_NONE}, {"int4_numeric", 0, ZONE_NONE},
	{"int8_numeric", 0, ZONE_NONE}, {"float4_numeric", 0, ZONE_NONE},
	{"float8_numeric", 0, ZONE_NONE}, {"numeric_float8", 0, ZONE_NONE},
	{"numeric_int2", 0, ZONE_NONE}, {"numeric_int4", 0, ZONE_NONE},
	{"numeric_int8", 0, ZONE_NONE},
	{"date_timestamp", 0, ZONE_NONE}, {"timestamp_date", 0, ZONE_NONE},
	{"date_timestamptz", 0, ZONE_DATE_OK},
	{"timestamptz_date", 0, ZONE_SESSION},
	{"timestamptz_timestamp", 0, ZONE_SESSION},
	{"timestamp_timestamptz", 0, ZONE_SESSION},
	/* floor, ceil, round, trunc */
	{"dfloor", 0, ZONE_NONE}, {"dceil", 0, ZONE_NONE},
	{"dround", 0, ZONE_NONE}, {"dtrunc", 0, ZONE_NONE},
	{"numeric_floor", 0, ZONE_NONE}, {"numeric_ceil", 0, ZONE_NONE},
	{"numeric_round", 0, ZONE_NONE}, {"numeric_trunc", 0, ZONE_NONE},
	/* k + c, c + k, k - c, c - k, k * c, c * k: either argument */
	{"int2pl", -1, ZONE_NONE}, {"int4pl", -1, ZONE_NONE}, {"int8pl", -1, ZONE_NONE},
	{"int24pl", -1, ZONE_NONE}, {"int42pl", -1, ZONE_NONE},
	{"int48pl", -1, ZONE_NONE}, {"int84pl", -1, ZONE_NONE},
	{"int28pl", -1, ZONE_NONE}, {"int82pl", -1, ZONE_NONE},
	{"int2mi", -1, ZONE_NONE}, {"int4mi", -1, ZONE_NONE}, {"int8mi", -1, ZONE_NONE},
	{"int24mi", -1, ZONE_NONE}, {"int42mi", -1, ZONE_NONE},
	{"int48mi", -1, ZONE_NONE}, {"int84mi", -1, ZONE_NONE},
	{"int28mi", -1, ZONE_NONE}, {"int82mi", -1, ZONE_NONE},
	{"int2mul", -1, ZONE_NONE}, {"int4mul", -1, ZONE_NONE}, {"int8mul", -1, ZONE_NONE},
	{"int24mul", -1, ZONE_NONE}, {"int42mul", -1, ZONE_NONE},
	{"int48mul", -1, ZONE_NONE}, {"int84mul", -1, ZONE_NONE},
	{"int28mul", -1, ZONE_NONE}, {"int82mul", -1, ZONE_NONE},
	{"float4pl", -1, ZONE_NONE}, {"float8pl", -1, ZONE_NONE},
	{"float48pl", -1, ZONE_NONE}, {"float84pl", -1, ZONE_NONE},
	{"float4mi", -1, ZONE_NONE}, {"float8mi", -1, ZONE_NONE},
	{"float48mi", -1, ZONE_NONE}, {"float84mi", -1, ZONE_NONE},
	{"float4mul", -1, ZONE_NONE}, {"float8mul", -1, ZONE_NONE},
	{"float48mul", -1, ZONE_NONE}, {"float84mul", -1, ZONE_NONE},
	{"numeric_add", -1, ZONE_NONE}, {"numeric_sub", -1, ZONE_NONE},
	{"numeric_mul", -1, ZONE_NONE},
	{"date_pli", 0, ZONE_NONE}, {"date_mii", 0, ZONE_NONE},
	{"integer_pl_date", 1, ZONE_NONE},
	/* k / c: the key divided (c / k is not monotone across 0) */
	{"int2div", 0, ZONE_NONE}, {"int4div", 0, ZONE_NONE}, {"int8div", 0, ZONE_NONE},
	{"int24div", 0, ZONE_NONE}, {"int42div", 0, ZONE_NONE},
	{"int48div", 0, ZONE_NONE}, {"int84div", 0, ZONE_NONE},
	{"int28div", 0, ZONE_NONE}, {"int82div", 0, ZONE_NONE},
	{"float4div", 0, ZONE_NONE}, {"float8div", 0, ZONE_NONE},
	{"float48div", 0, ZONE_NONE}, {"float84div", 0, ZONE_NONE},
	{"numeric_div", 0, ZONE_NONE}, {"numeric_div_trunc", 0, ZONE_NONE},
};

/* The whitelist's row of an internal function of pg_catalog, or NULL. */
static const BucketFunc *
bucket_func(Oid funcid)
{
	HeapTuple	tp = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	const BucketFunc *found = NULL;

	if (!HeapTupleIsValid(tp))
		return NULL;
	if (((Form_pg_proc) GETSTRUCT(tp))->prolang == INTERNALlanguageId &&
		((Form_pg_proc) GETSTRUCT(tp))->pronamespace == PG_CATALOG_NAMESPACE)
	{
		bool		isnull;
		Datum		src = SysCacheGetAttr(PROCOID, tp, Anum_pg_proc_prosrc, &isnull);

		if (!isnull)
		{
			char	   *name = TextDatumGetCString(src);
			int			i;

			for (i = 0; i < lengthof(bucket_funcs); i++)
				if (strcmp(bucket_funcs[i].prosrc, name) == 0)
					found = &bucket_funcs[i];
			pfree(name);
		}
	}
	ReleaseSysCache(tp);
	return found;
}

bool
gbt_group_is_bucket(Node *expr, Index relid, AttrNumber keyattno, Oid keytype,
					const char **why)
{
	Node	   *node = expr;

	if (contain_volatile_functions(expr))
	{
		*why = "the GROUP BY expression is volatile";
		return false;
	}
	for (;;)
	{
		List	   *args;
		Oid			funcid;
		const BucketFunc *f;
		ListCell   *lc;
		int			i = 0;
		Node	   *keyarg = NULL;

		if (IsA(node, RelabelType))
		{
			node = (Node *) ((RelabelType *) node)->arg;
			continue;
		}
		if (IsA(node, Var))
		{
			Var		   *var = (Var *) node;

			if (var->varno == relid && var->varlevelsup == 0 && var->varattno == keyattno)
				return true;
			*why = "the GROUP BY expression uses a column other than the index's key";
			return false;
		}
		if (IsA(node, FuncExpr))
		{
			funcid = ((FuncExpr *) node)->funcid;
			args = ((FuncExpr *) node)->args;
		}
		else if (IsA(node, OpExpr))
		{
			funcid = ((OpExpr *) node)->opfuncid;
			args = ((OpExpr *) node)->args;
		}
		else
		{
			*why = "the GROUP BY expression is not a bucket of the key";
			return false;
		}
		f = bucket_func(funcid);
		if (f == NULL)
		{
			*why = psprintf("%s() is not a bucket function gpubtree knows to be monotone",
							get_func_name(funcid));
			return false;
		}
		if (f->zone != ZONE_NONE && keytype != TIMESTAMPTZOID &&
			!(f->zone == ZONE_DATE_OK && keytype == DATEOID))
		{
			*why = "a time zone conversion of a key that is not a timestamptz";
			return false;
		}
		foreach(lc, args)
		{
			Node	   *arg = lfirst(lc);

			if (!gbt_only_constants(arg))
			{
				if (keyarg != NULL || (f->keyarg >= 0 && f->keyarg != i))
				{
					*why = psprintf("%s() of the key is not monotone in that argument",
									get_func_name(funcid));
					return false;
				}
				keyarg = arg;
			}
			i++;
		}
		if (keyarg == NULL)
		{
			*why = "the GROUP BY expression does not use the key";
			return false;
		}
		node = keyarg;
	}
}

/* The key Var, wherever it is, as column 1 of the bucket's slot. */
static Node *
key_as_slot_column(Node *node, void *context)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) copyObject(node);

		var->varno = 1;
		var->varattno = 1;
		var->varnosyn = 0;
		var->varattnosyn = 0;
		*(Oid *) context = var->vartype;
		return (Node *) var;
	}
	return expression_tree_mutator(node, key_as_slot_column, context);
}

/* The explicit zones of date_trunc(unit, key, zone), evaluated. */
static bool
collect_zones(Node *node, void *context)
{
	GbtBuckets *b = context;

	if (node == NULL)
		return false;
	if (IsA(node, FuncExpr) && list_length(((FuncExpr *) node)->args) == 3)
	{
		const BucketFunc *f = bucket_func(((FuncExpr *) node)->funcid);

		if (f != NULL && f->zone == ZONE_ARG3)
		{
			ExprState  *state = ExecInitExpr(lthird(((FuncExpr *) node)->args), NULL);
			bool		isnull;
			Datum		zone = ExecEvalExprSwitchContext(state, b->econtext, &isnull);

			if (!isnull)
				b->zones = lappend(b->zones, TextDatumGetCString(zone));
		}
	}
	return expression_tree_walker(node, collect_zones, context);
}

void
gbt_buckets_init(GbtBuckets *b, Expr *expr, Oid keytype, Oid eqop, EState *estate)
{
	Oid			vartype = keytype;
	RegProcedure hashfn = InvalidOid;
	RegProcedure rhs_hashfn;
	Expr	   *planned = (Expr *) key_as_slot_column((Node *) expr, &vartype);
	TupleDesc	desc = CreateTemplateTupleDesc(1);

	memset(b, 0, sizeof(*b));
	b->keytype = keytype;
	b->valtype = exprType((Node *) expr);
	get_typlenbyval(b->valtype, &b->vallen, &b->valbyval);
	b->time_zones = keytype == TIMESTAMPTZOID;
	b->max_evaluations = INT64_MAX;
	TupleDescInitEntry(desc, 1, "key", vartype, -1, 0);
	b->slot = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
	b->econtext = CreateExprContext(estate);
	b->expr = ExecInitExpr(planned, NULL);
	fmgr_info(get_opcode(eqop), &b->eq);
	if (get_op_hash_functions(eqop, &hashfn, &rhs_hashfn))
		fmgr_info(hashfn, &b->hash);
	b->collation = exprCollation((Node *) expr);
	b->source = expr;
}

Datum
gbt_bucket_of(GbtBuckets *b, Datum key, bool isnull, bool *valnull)
{
	Datum		v;

	ExecClearTuple(b->slot);
	b->slot->tts_values[0] = key;
	b->slot->tts_isnull[0] = isnull;
	ExecStoreVirtualTuple(b->slot);
	b->econtext->ecxt_scantuple = b->slot;
	v = ExecEvalExprSwitchContext(b->expr, b->econtext, valnull);
	if (!*valnull && !b->valbyval)
		v = datumCopy(v, false, b->vallen);
	ResetExprContext(b->econtext);
	b->evaluations++;
	return v;
}

bool
gbt_bucket_equal(GbtBuckets *b, Datum x, Datum y)
{
	return DatumGetBool(FunctionCall2Coll(&b->eq, b->collation, x, y));
}

/* A bucket value with its NULL flag, as the bisection carries it. */
typedef struct Val
{
	Datum		v;
	bool		isnull;
} Val;

static Val
value_at(GbtBuckets *b, uint64 key)
{
	Val			r;

	r.v = gbt_bucket_of(b, gbt_decode_key(key, b->keytype), false, &r.isnull);
	return r;
}

static bool
same(GbtBuckets *b, Val x, Val y)
{
	if (x.isnull || y.isnull)
		return x.isnull && y.isnull;
	return gbt_bucket_equal(b, x.v, y.v);
}

static bool
emit(GbtBuckets *b, uint64 lo, uint64 hi, Val v, int64 *cap)
{
	if (b->nranges >= GBT_MAX_GROUP_RANGES)
		return false;
	if (b->nranges == *cap)
	{
		*cap *= 2;
		b->lo = repalloc(b->lo, sizeof(uint64) * *cap);
		b->hi = repalloc(b->hi, sizeof(uint64) * *cap);
		b->values = repalloc(b->values, sizeof(Datum) * *cap);
		b->nulls = repalloc(b->nulls, sizeof(bool) * *cap);
	}
	b->lo[b->nranges] = lo;
	b->hi[b->nranges] = hi;
	b->values[b->nranges] = v.v;
	b->nulls[b->nranges] = v.isnull;
	b->nranges++;
	return true;
}

/*
 * The buckets of the keys [a, b] of one piece, where the bucket function
 * is monotone: from each bucket's first key, its last is the key before
 * the first whose bucket differs, found by bisection, after a guess that
 * it is as wide as the bucket before (buckets of one width cost two
 * calls).
 */
static bool
piece_buckets(GbtBuckets *b, uint64 a, uint64 z, int64 *cap)
{
	uint64		x = a;
	uint64		width = 0;
	Val			v = value_at(b, a);
	Val			vz = value_at(b, z);

	for (;;)
	{
		uint64		lo = x,
					hi = z;
		Val			vhi = vz;

		CHECK_FOR_INTERRUPTS();
		if (b->evaluations > b->max_evaluations)
		{
			b->too_costly = true;
			return false;
		}
		if (same(b, v, vz))
			return emit(b, x, z, v, cap);

		/* f(lo) is v, f(hi) is vhi, not v; lo < hi */
		if (width > 0 && width - 1 < z - x)
		{
			uint64		g = x + width - 1;
			Val			vg = value_at(b, g);

			if (same(b, vg, v))
			{
				Val			vg1 = value_at(b, g + 1);

				lo = g;
				if (!same(b, vg1, v))
				{
					hi = g + 1;
					vhi = vg1;
				}
				else
					lo = g + 1;
			}
			else
			{
				hi = g;
				vhi = vg;
			}
		}
		while (hi - lo > 1)
		{
			uint64		mid = lo + (hi - lo) / 2;
			Val			vm = value_at(b, mid);

			if (same(b, vm, v))
				lo = mid;
			else
			{
				hi = mid;
				vhi = vm;
			}
		}
		if (!emit(b, x, lo, v, cap))
			return false;
		width = lo - x + 1;
		x = hi;
		v = vhi;
	}
}

/* Split [a, z] where a zone's UTC offset changes: the pieces' first keys. */
static void
add_zone_cuts(pg_tz *tz, uint64 a, uint64 z, List **cuts)
{
	TimestampTz from = (TimestampTz) gbt_decode_key(a, TIMESTAMPTZOID);
	TimestampTz to = (TimestampTz) gbt_decode_key(z, TIMESTAMPTZOID);
	pg_time_t	t;

	if (TIMESTAMP_NOT_FINITE(from))
		from = MIN_TIMESTAMP;
	t = timestamptz_to_time_t(from);
	while (list_length(*cuts) < GBT_MAX_GROUP_RANGES)
	{
		long int	before_gmtoff,
					after_gmtoff;
		int			before_isdst,
					after_isdst;
		pg_time_t	boundary;
		TimestampTz cut;

		if (pg_next_dst_boundary(&t, &before_gmtoff, &before_isdst, &boundary,
								 &after_gmtoff, &after_isdst, tz) != 1 || boundary <= t)
			return;
		cut = time_t_to_timestamptz(boundary);
		if (cut > to)
			return;
		if (cut > from)
			*cuts = lappend(*cuts, (void *) (uintptr_t) gbt_encode_key(TimestampTzGetDatum(cut),
																	TIMESTAMPTZOID));
		t = boundary;
	}
}

static int
cmp_cut(const ListCell *x, const ListCell *y)
{
	uint64		a = (uint64) (uintptr_t) lfirst(x);
	uint64		b = (uint64) (uintptr_t) lfirst(y);

	return a < b ? -1 : a > b ? 1 : 0;
}

/* The buckets of keys [a, z], in pieces of one UTC offset each. */
static bool
range_buckets(GbtBuckets *b, uint64 a, uint64 z, int64 *cap, const char **why)
{
	List	   *cuts = NIL;
	ListCell   *lc;
	uint64		from = a;

	if (b->time_zones)
	{
		add_zone_cuts(session_timezone, a, z, &cuts);
		foreach(lc, b->zones)
		{
			pg_tz	   *tz = pg_tzset((const char *) lfirst(lc));

			if (tz == NULL)
			{
				*why = psprintf("time zone \"%s\" is not one of the zone database",
								(const char *) lfirst(lc));
				return false;
			}
			add_zone_cuts(tz, a, z, &cuts);
		}
		list_sort(cuts, cmp_cut);
	}
	foreach(lc, cuts)
	{
		uint64		cut = (uint64) (uintptr_t) lfirst(lc);

		if (cut <= from)
			continue;
		if (!piece_buckets(b, from, cut - 1, cap))
			goto too_many;
		from = cut;
	}
	if (piece_buckets(b, from, z, cap))
		return true;
too_many:
	*why = b->too_costly ?
		psprintf("more than %lld calls of the bucket function to find the buckets, which the plan below costs",
				 (long long) b->max_evaluations) :
		psprintf("more than %d buckets between the keys' ends", GBT_MAX_GROUP_RANGES);
	return false;
}

static bool
make_all(GbtBuckets *b, const uint64 *qlo, const uint64 *qhi, int64 nq,
		 uint64 key_min, uint64 key_max, const char **why)
{
	int64		cap = 64;
	int64		i;

	b->lo = palloc(sizeof(uint64) * cap);
	b->hi = palloc(sizeof(uint64) * cap);
	b->values = palloc(sizeof(Datum) * cap);
	b->nranges = 0;
	b->nulls = palloc(sizeof(bool) * cap);
	b->zones = NIL;
	if (b->time_zones)
		collect_zones((Node *) b->source, b);
	for (i = 0; i < nq; i++)
	{
		uint64		a = Max(qlo[i], key_min);
		uint64		z = Min(qhi[i], key_max);

		if (a > z)
			continue;
		if (!range_buckets(b, a, z, &cap, why))
			return false;
	}
	return true;
}

bool
gbt_run_in_subxact(bool (*fn) (void *arg, const char **why), void *arg,
				   const char *failed, const char **why)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool ok = false;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		ok = fn(arg, why);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		*why = psprintf("%s: %s", failed, edata->message);
		FreeErrorData(edata);
		ok = false;
	}
	PG_END_TRY();
	return ok;
}

/* gbt_buckets_make()'s arguments, for gbt_run_in_subxact(). */
typedef struct MakeArgs
{
	GbtBuckets *b;
	const uint64 *qlo;
	const uint64 *qhi;
	int64		nq;
	uint64		key_min;
	uint64		key_max;
} MakeArgs;

static bool
make_all_of(void *arg, const char **why)
{
	MakeArgs   *m = arg;

	return make_all(m->b, m->qlo, m->qhi, m->nq, m->key_min, m->key_max, why);
}

bool
gbt_buckets_make(GbtBuckets *b, const uint64 *qlo, const uint64 *qhi, int64 nq,
				 uint64 key_min, uint64 key_max, const char **why)
{
	MakeArgs	m = {b, qlo, qhi, nq, key_min, key_max};

	if (IsInParallelMode())
	{
		*why = "buckets are not made in a parallel operation";
		return false;
	}
	return gbt_run_in_subxact(make_all_of, &m,
							  "the GROUP BY expression failed on a key", why);
}

int64
gbt_buckets_groups(GbtBuckets *b, int64 *group_of)
{
	int64		size = 16;
	int64	   *slots;			/* a group's first range + 1; 0: empty */
	int64		ngroups = 0;
	int64		r;

	while (size < 2 * b->nranges)
		size *= 2;
	slots = palloc0(sizeof(int64) * size);
	for (r = 0; r < b->nranges; r++)
	{
		uint32		h;
		int64		i;

		/* the usual case: the bucket of the range before */
		if (r > 0 && b->nulls[r] == b->nulls[r - 1] &&
			(b->nulls[r] || gbt_bucket_equal(b, b->values[r], b->values[r - 1])))
		{
			group_of[r] = group_of[r - 1];
			continue;
		}
		h = b->nulls[r] || !OidIsValid(b->hash.fn_oid) ? 0 :
			DatumGetUInt32(FunctionCall1Coll(&b->hash, b->collation, b->values[r]));
		for (i = h & (size - 1);; i = (i + 1) & (size - 1))
		{
			int64		first = slots[i] - 1;

			if (first < 0)
			{
				slots[i] = r + 1;
				group_of[r] = ngroups++;
				break;
			}
			if (b->nulls[first] == b->nulls[r] &&
				(b->nulls[r] || gbt_bucket_equal(b, b->values[first], b->values[r])))
			{
				group_of[r] = group_of[first];
				break;
			}
		}
	}
	pfree(slots);
	return ngroups;
}
