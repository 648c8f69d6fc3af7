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

#define RADIX_BITS 16
#define RADIX_MIN_KEYS 65536

/*
 * LSD radix sort of keys[0..n), 16 bits a pass: for large arrays, several
 * times faster than comparison sorting.  Every pass's histogram comes from
 * one read of the keys; a pass whose digit is the same in every key is
 * skipped (small keys, narrow ranges), and keys already in order, as
 * applications often send them, cost one read.  n fits in 32 bits: an
 * array holds fewer than 2^28 keys.
 */
static void
radix_sort_keys(uint64 *keys, int64 n)
{
	const int	npasses = 64 / RADIX_BITS;
	const uint64 mask = (1 << RADIX_BITS) - 1;
	uint64	   *tmp;
	uint32	   *count;
	uint64	   *from = keys;
	uint64	   *to;
	int64		i;
	int			pass;

	for (i = 1; i < n && keys[i - 1] <= keys[i]; i++)
		;
	if (i == n)
		return;
	count = palloc0(sizeof(uint32) * (npasses << RADIX_BITS));
	for (i = 0; i < n; i++)
	{
		uint64		k = keys[i];

		for (pass = 0; pass < npasses; pass++)
			count[(pass << RADIX_BITS) + ((k >> (pass * RADIX_BITS)) & mask)]++;
	}
	CHECK_FOR_INTERRUPTS();
	tmp = palloc_extended(sizeof(uint64) * n, MCXT_ALLOC_HUGE);
	to = tmp;
	for (pass = 0; pass < npasses; pass++)
	{
		uint32	   *c = count + (pass << RADIX_BITS);
		int			shift = pass * RADIX_BITS;
		uint32		sum = 0;
		int			d;

		if (c[(from[0] >> shift) & mask] == n)
			continue;			/* one digit for all: already in order */
		for (d = 0; d <= mask; d++)
		{
			uint32		x = c[d];

			c[d] = sum;
			sum += x;
		}
		for (i = 0; i < n; i++)
			to[c[(from[i] >> shift) & mask]++] = from[i];
		from = to;
		to = (to == tmp) ? keys : tmp;
		CHECK_FOR_INTERRUPTS();
	}
	if (from != keys)
		memcpy(keys, from, sizeof(uint64) * n);
	pfree(tmp);
	pfree(count);
}

/*
 * Sort keys[0..n) and drop repeats; returns how many are left.  Equal SQL
 * values have one encoding (gbt_encode_key folds -0 into 0 and every NaN
 * into one key), so this is SQL equality.
 */
int64
gbt_sort_unique_keys(uint64 *keys, int64 n)
{
	int64		i;
	int64		u = 1;

	if (n < 2)
		return n;
	if (n >= RADIX_MIN_KEYS)
		radix_sort_keys(keys, n);
	else
		sort_keys(keys, n);
	for (i = 1; i < n; i++)
		if (keys[i] != keys[u - 1])
			keys[u++] = keys[i];
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
 */
bool
gbt_keys_to_ranges(ScanKey keys, int nkeys, Oid keytype, bool aggregate,
				   uint64 **lo_out, uint64 **hi_out, int64 *n_out)
{
	uint64		lo = 0;
	uint64		hi = PG_UINT64_MAX;
	ScanKey		array_key = NULL;
	bool		empty = false;
	bool		has_range = false;
	int			i;

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

