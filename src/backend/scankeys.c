/*
 * scankeys.c
 *	  Scan keys on the leading key column as ranges of mirror keys.
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "access/skey.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/arrayaccess.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "backend.h"
#include "keysort.h"
#include "keytypes.h"
#include "scankeys.h"

/* sort_keys(): an interruptible sort of encoded keys, for large arrays */
#define ST_SORT sort_keys
#define ST_ELEMENT_TYPE uint64
#define ST_COMPARE(a, b) (*(a) < *(b) ? -1 : *(a) > *(b) ? 1 : 0)
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

#define RADIX_MIN_KEYS 65536

/*
 * Sort keys[0..n) and drop repeats; returns how many are left.  Equal SQL
 * values have one encoding (gbt_encode_key folds -0 into 0 and every NaN
 * into one key), so this is SQL equality.  Large arrays by a radix sort,
 * several times faster than comparisons (keys in order cost one read).
 */
int64
gbt_sort_unique_keys(uint64 *keys, int64 n)
{
	if (n < 2)
		return n;
	if (n >= RADIX_MIN_KEYS)
	{
		uint64	   *tmp = palloc_extended(sizeof(uint64) * n, MCXT_ALLOC_HUGE);

		CHECK_FOR_INTERRUPTS();
		gbt_radix_sort_u64(keys, tmp, n);
		pfree(tmp);
	}
	else
		sort_keys(keys, n);
	return gbt_unique_u64(keys, n);
}

/*
 * The same, and map[i] the place among the distinct keys of the key that
 * was keys[i].
 */
int64
gbt_sort_unique_mapped(uint64 *keys, int64 n, uint32 *map)
{
	uint64	   *tmp = palloc_extended(sizeof(uint64) * Max(n, 1), MCXT_ALLOC_HUGE);
	uint32	   *idx = palloc_extended(sizeof(uint32) * Max(n, 1), MCXT_ALLOC_HUGE);
	int64		u;

	if (n > PG_UINT32_MAX)
		elog(ERROR, "gpubtree: too many keys to sort: %lld", (long long) n);
	CHECK_FOR_INTERRUPTS();
	u = gbt_sort_unique_map(keys, tmp, map, idx, n);
	if (u < 0)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	pfree(tmp);
	pfree(idx);
	return u;
}

/*
 * The keys of an array's elements that lie in [lo, hi], into keys; returns
 * how many.  NULL elements match nothing and are left out.  A flat array
 * without NULLs holds its elements side by side, as the key type's C array
 * (fixed width, aligned to it): encoded in one loop, not element by element.
 */
static int64
array_keys(AnyArrayType *arr, const GbtKeyType *kt, uint64 lo, uint64 hi, uint64 *keys)
{
	int			nelems = ArrayGetNItems(AARR_NDIM(arr), AARR_DIMS(arr));
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	int64		n = 0;
	int64		i;

	get_typlenbyvalalign(AARR_ELEMTYPE(arr), &elmlen, &elmbyval, &elmalign);
	if (!VARATT_IS_EXPANDED_HEADER(arr) && !ARR_HASNULL(&arr->flt) &&
		elmlen > 0 && att_align_nominal(elmlen, elmalign) == elmlen)
	{
		kt->encode_packed(ARR_DATA_PTR(&arr->flt), nelems, keys);
		n = nelems;
	}
	else
	{
		array_iter	it;

		/* Walked in place (an expanded array too): no copy to make first. */
		array_iter_setup(&it, arr);
		for (i = 0; i < nelems; i++)
		{
			bool		isnull;
			Datum		elem = array_iter_next(&it, &isnull, i, elmlen, elmbyval, elmalign);

			if (!isnull)
				keys[n++] = kt->encode(elem);
		}
	}
	if (lo > 0 || hi < PG_UINT64_MAX)
	{
		int64		kept = 0;

		for (i = 0; i < n; i++)
			if (keys[i] >= lo && keys[i] <= hi)
				keys[kept++] = keys[i];
		n = kept;
	}
	return n;
}

/*
 * Turn scan keys into inclusive key ranges: an intersection of bounds,
 * times the elements of at most one = ANY array.  The ranges come sorted
 * and disjoint: an array's elements are sorted and each distinct value
 * kept once, so an entry is found once however often its key repeats in
 * the array (as nbtree does).  Returns false when the keys are not all of
 * that shape (then nbtree answers); for a bitmap scan (!aggregate), also
 * when the scan is small enough that nbtree is the faster choice: a single
 * key, or fewer distinct keys than gpubtree.min_gpu_batch.
 *
 * With sorted not NULL, a long key list may be left as it comes, repeats
 * and all, for the service to sort (on the GPU); *sorted says whether it was
 * sorted here.
 */
bool
gbt_keys_to_ranges(ScanKey keys, int nkeys, Oid keytype, bool aggregate,
				   bool *sorted, uint64 **lo_out, uint64 **hi_out, int64 *n_out)
{
	uint64		lo = 0;
	uint64		hi = PG_UINT64_MAX;
	ScanKey		array_key = NULL;
	bool		empty = false;
	bool		has_range = false;
	int			i;

	if (sorted != NULL)
		*sorted = true;
	for (i = 0; i < nkeys; i++)
	{
		ScanKey		key = &keys[i];
		Oid			argtype = OidIsValid(key->sk_subtype) ? key->sk_subtype : keytype;
		uint64		k;

		if (key->sk_attno != 1 ||
			(key->sk_flags & (SK_ISNULL | SK_SEARCHNULL | SK_SEARCHNOTNULL |
							  SK_ROW_HEADER | SK_ROW_MEMBER)))
			return false;
		if (!gbt_comparable(argtype, keytype))
			return false;

		if (key->sk_flags & SK_SEARCHARRAY)
		{
			if (array_key != NULL || key->sk_strategy != BTEqualStrategyNumber)
				return false;
			array_key = key;
			continue;
		}

		k = gbt_encode_key(key->sk_argument, argtype);
		switch (key->sk_strategy)
		{
			case BTLessStrategyNumber:
				if (k == 0)
					empty = true;
				else
					hi = Min(hi, k - 1);
				break;
			case BTLessEqualStrategyNumber:
				hi = Min(hi, k);
				break;
			case BTEqualStrategyNumber:
				lo = Max(lo, k);
				hi = Min(hi, k);
				break;
			case BTGreaterEqualStrategyNumber:
				lo = Max(lo, k);
				break;
			case BTGreaterStrategyNumber:
				if (k == PG_UINT64_MAX)
					empty = true;
				else
					lo = Max(lo, k + 1);
				break;
			default:
				return false;
		}
		if (key->sk_strategy != BTEqualStrategyNumber)
			has_range = true;
	}
	if (lo > hi)
		empty = true;

	if (array_key != NULL)
	{
		AnyArrayType *arr = DatumGetAnyArrayP(array_key->sk_argument);
		Oid			elemtype = AARR_ELEMTYPE(arr);
		int			nelems = ArrayGetNItems(AARR_NDIM(arr), AARR_DIMS(arr));
		const GbtKeyType *elemkt;
		uint64	   *points;
		int64		n;

		if (!gbt_comparable(elemtype, keytype))
			return false;
		elemkt = gbt_key_type(elemtype);	/* once, not per element */
		if (!aggregate && nelems < gpubtree_min_gpu_batch)
			return false;		/* small: nbtree's descents are cheaper */
		points = palloc_extended(sizeof(uint64) * Max(nelems, 1), MCXT_ALLOC_HUGE);
		n = empty ? 0 : array_keys(arr, elemkt, lo, hi, points);
		if (sorted != NULL && n >= GBT_SERVICE_SORT_MIN)
		{
			*sorted = false;
			*lo_out = points;
			*hi_out = points;
			*n_out = n;
			return true;
		}
		n = gbt_sort_unique_keys(points, n);

		/* What nbtree would descend for is the distinct keys, not elements. */
		if (!aggregate && n > 0 && n < gpubtree_min_gpu_batch)
		{
			pfree(points);
			return false;
		}
		*lo_out = points;
		*hi_out = points;		/* a point each: read only, never freed apart */
		*n_out = n;
		return true;
	}

	/* A single-key lookup stays on nbtree: one descent beats a round trip. */
	if (!has_range && !aggregate)
		return false;

	*lo_out = palloc(sizeof(uint64));
	*hi_out = palloc(sizeof(uint64));
	(*lo_out)[0] = lo;
	(*hi_out)[0] = hi;
	*n_out = empty ? 0 : 1;
	return true;
}

