/*
 * gpuscan.c
 *	  Bitmap scans answered by the GPU service.
 *
 * amgetbitmap comes here first.  When the scan's conditions are ranges or
 * one large = ANY(array) on the leading key column, we turn them into
 * inclusive ranges of order-preserving 64-bit keys and ask the service for
 * the TIDs of the mirror's entries in them.  The answer is exact for those
 * conditions, and the bitmap heap scan above still checks every tuple's
 * visibility, so dead entries in the mirror do no harm; a missing entry
 * would, which is what commit-time resync (service.h, resync.c) rules out.  Anything
 * else, and every failure, goes to nbtree's btgetbitmap: same answer.
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/itup.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "portability/instr_time.h"
#include "utils/array.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "build.h"
#include "backend.h"
#include "scan.h"
#include "keys.h"
#include "resync.h"
#include "service.h"

/* What this backend's GPU scans did, for EXPLAIN ANALYZE. */
GbtScanStats gbt_scan_stats;

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
			return gbt_key_int64(DatumGetInt16(value));
		case INT4OID:
			return gbt_key_int64(DatumGetInt32(value));
		case INT8OID:
			return gbt_key_int64(DatumGetInt64(value));
		case FLOAT4OID:
			return gbt_key_float8((double) DatumGetFloat4(value));
		case FLOAT8OID:
			return gbt_key_float8(DatumGetFloat8(value));
		case DATEOID:
			return gbt_key_int64(DatumGetDateADT(value));
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return gbt_key_int64(DatumGetInt64(value));
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

/* sort_keys(): an interruptible sort of encoded keys, for large arrays */
#define ST_SORT sort_keys
#define ST_ELEMENT_TYPE uint64
#define ST_COMPARE(a, b) (*(a) < *(b) ? -1 : *(a) > *(b) ? 1 : 0)
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/*
 * Sort keys[0..n) and drop repeats; returns how many are left.  Equal SQL
 * values have one encoding (gbt_encode_key folds -0 into 0 and every NaN
 * into one key), so this is SQL equality.
 */
static int64
sort_unique_keys(uint64 *keys, int64 n)
{
	int64		i;
	int64		u = 1;

	if (n < 2)
		return n;
	sort_keys(keys, n);
	for (i = 1; i < n; i++)
		if (keys[i] != keys[u - 1])
			keys[u++] = keys[i];
	return u;
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
		ArrayType  *arr = DatumGetArrayTypeP(array_key->sk_argument);
		Oid			elemtype = ARR_ELEMTYPE(arr);
		int16		elmlen;
		bool		elmbyval;
		char		elmalign;
		Datum	   *elems;
		bool	   *nulls;
		int			nelems;
		uint64	   *points;
		int64		n = 0;

		if (!gbt_comparable(elemtype, keytype))
			return false;
		if (!aggregate &&
			ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr)) < gpubtree_min_gpu_batch)
			return false;		/* small: nbtree's descents are cheaper */
		get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
		deconstruct_array(arr, elemtype, elmlen, elmbyval, elmalign,
						  &elems, &nulls, &nelems);

		points = palloc(sizeof(uint64) * Max(nelems, 1));
		for (i = 0; i < nelems && !empty; i++)
		{
			uint64		k;

			if (nulls[i])
				continue;		/* = NULL matches nothing */
			k = gbt_encode_key(elems[i], elemtype);
			if (k >= lo && k <= hi)
				points[n++] = k;
		}
		pfree(elems);
		pfree(nulls);
		n = sort_unique_keys(points, n);

		/* What nbtree would descend for is the distinct keys, not elements. */
		if (!aggregate && n > 0 && n < gpubtree_min_gpu_batch)
		{
			pfree(points);
			return false;
		}
		*lo_out = points;
		*hi_out = palloc(sizeof(uint64) * Max(n, 1));
		memcpy(*hi_out, points, sizeof(uint64) * n);
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

static void
swap_entries(GbtEntries *e, int64 i, int64 j)
{
	uint64		k = e->keys[i];
	ItemPointerData t = e->tids[i];
	uint8		nl = e->nulls[i];
	int			c;

	e->keys[i] = e->keys[j];
	e->keys[j] = k;
	e->tids[i] = e->tids[j];
	e->tids[j] = t;
	e->nulls[i] = e->nulls[j];
	e->nulls[j] = nl;
	for (c = 0; c < e->ncols; c++)
	{
		int64		v = e->vals[c][i];

		e->vals[c][i] = e->vals[c][j];
		e->vals[c][j] = v;
	}
}

static void
reverse_entries(GbtEntries *e, int64 from, int64 to)
{
	for (to--; from < to; from++, to--)
		swap_entries(e, from, to);
}

static int
cmp_tid_of(const void *a, const void *b, void *arg)
{
	const ItemPointerData *tids = (const ItemPointerData *) arg;

	return ItemPointerCompare((ItemPointer) &tids[*(const int64 *) a],
							  (ItemPointer) &tids[*(const int64 *) b]);
}

/*
 * Put the entries of [from, to), which share one key, in TID order: a
 * multi-column index orders them by its other key columns first.
 */
static void
sort_run_by_tid(GbtEntries *e, int64 from, int64 to)
{
	int64		n = to - from;
	int64	   *perm;
	GbtEntries	tmp;
	int64		i;
	int			c;

	for (i = from + 1; i < to; i++)
		if (ItemPointerCompare(&e->tids[i - 1], &e->tids[i]) > 0)
			break;
	if (i >= to)
		return;					/* already in order */

	perm = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * n);
	for (i = 0; i < n; i++)
		perm[i] = from + i;
	qsort_arg(perm, n, sizeof(int64), cmp_tid_of, e->tids);

	gbt_entries_init(&tmp, e->ncols, n);
	for (i = 0; i < n; i++)
	{
		tmp.tids[i] = e->tids[perm[i]];
		tmp.nulls[i] = e->nulls[perm[i]];
		for (c = 0; c < e->ncols; c++)
			tmp.vals[c][i] = e->vals[c][perm[i]];
	}
	memcpy(&e->tids[from], tmp.tids, sizeof(ItemPointerData) * n);
	memcpy(&e->nulls[from], tmp.nulls, sizeof(uint8) * n);
	for (c = 0; c < e->ncols; c++)
		memcpy(&e->vals[c][from], tmp.vals[c], sizeof(int64) * n);
	gbt_entries_free(&tmp);
	pfree(perm);
}

/*
 * Read every entry of the index with a non-NULL key, in (key, TID) order,
 * with its mirrored column values, into out (initialised here).  With
 * SnapshotAny the index scan returns entries regardless of their tuples'
 * visibility.
 */
int64
gbt_export_index(Relation heap, Relation index, Oid keytype,
				 const GbtColumns *cols, GbtEntries *out,
				 GbtExportProgress progress, void *progress_arg)
{
	IndexScanDesc iscan;
	bool		desc = (index->rd_indoption[0] & INDOPTION_DESC) != 0;
	bool		multikey = IndexRelationGetNumberOfKeyAttributes(index) > 1;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	int64		n = 0;

	gbt_entries_init(out, cols->ncols, 1024);
	iscan = index_beginscan(heap, index, SnapshotAny, 0, 0);
	iscan->xs_want_itup = true;

	/*
	 * Entries already marked dead (LP_DEAD) too: they are still in the index,
	 * harmless in a mirror (the heap scan rechecks visibility), and leaving
	 * them out would make a mirror's contents depend on hint bits set later.
	 */
	iscan->ignore_killed_tuples = false;
	index_rescan(iscan, NULL, 0, NULL, 0);
	while (index_getnext_tid(iscan, ForwardScanDirection) != NULL)
	{
		int64		vals[GBT_MAX_COLS];
		int			c;

		CHECK_FOR_INTERRUPTS();
		index_deform_tuple(iscan->xs_itup, iscan->xs_itupdesc, values, isnull);
		if (isnull[0])
			continue;
		if (n == out->cap)
			gbt_entries_grow(out, out->cap * 2);
		out->keys[n] = gbt_encode_key(values[0], keytype);
		out->tids[n] = iscan->xs_heaptid;
		out->nulls[n] = gbt_entry_values(index, cols, values, isnull, vals);
		for (c = 0; c < cols->ncols; c++)
			out->vals[c][n] = vals[c];
		n++;
		if (progress != NULL && n % 65536 == 0)
			progress(n, progress_arg);
	}
	index_endscan(iscan);
	if (progress != NULL)
		progress(n, progress_arg);
	out->n = n;

	/*
	 * A DESC leading column comes out in descending key order: reverse it
	 * all.  Then put each run of equal keys in TID order, as the mirror
	 * holds them: reversed runs of a single-column index just need reversing
	 * back, while a multi-column index orders a run by its later columns.
	 */
	if (desc)
		reverse_entries(out, 0, n);
	if (desc || multikey)
	{
		int64		i;
		int64		run;

		for (i = 0; i < n; i = run)
		{
			for (run = i + 1; run < n && out->keys[run] == out->keys[i]; run++)
				;
			if (run - i < 2)
				continue;
			if (multikey)
				sort_run_by_tid(out, i, run);
			else
				reverse_entries(out, i, run);
		}
	}
	return n;
}

void
gbt_fill_key(GbtMirrorKey *key, Relation index)
{
	key->dbid = MyDatabaseId;
	key->indexrelid = RelationGetRelid(index);
	key->relfilenode = index->rd_node.relNode;
}

/*
 * Export the index and have the service build its mirror.  The export is
 * registered with the change log first, so that the service can add what
 * is logged while it runs; the generation read before that tells the service
 * whether anything the log cannot carry happened meanwhile.  On failure,
 * why says what happened.
 */
bool
gbt_build_mirror(Relation index, Oid keytype, GbtExportProgress progress,
				 void *progress_arg, char *why, Size whylen)
{
	uint64		generation;
	uint64		log_start;
	int			service_pid;
	GbtColumns	cols;
	GbtEntries	entries;
	Relation	heap;
	dsm_segment *seg = NULL;
	GbtRequest *req = NULL;
	bool		ok = false;
	GbtMirrorKey key;

	gbt_resync_flush();
	generation = gbt_generation(MyDatabaseId, RelationGetRelid(index));
	gbt_fill_key(&key, index);
	gbt_index_columns(index, &cols);
	if (!gbt_register_build(&key, &log_start, &service_pid))
	{
		strlcpy(why, "no GPU service, or another export of the index under way", whylen);
		return false;
	}
	pg_atomic_fetch_add_u64(&gbt_shared->exports, 1);
	PG_TRY();
	{
		/* The caller holds a lock on the table. */
		heap = table_open(index->rd_index->indrelid, NoLock);
		gbt_export_index(heap, index, keytype, &cols, &entries, progress, progress_arg);
		table_close(heap, NoLock);

		req = gbt_request_create(&seg, gbt_entries_flat_size(cols.ncols, entries.n), 0);
		if (req != NULL)
		{
			req->kind = GBT_REQ_BUILD;
			req->key = key;
			req->generation = generation;
			req->log_start = log_start;
			req->service_pid = service_pid;
			req->columns = cols;
			req->nitems = entries.n;
			gbt_entries_flatten(&entries, GBT_REQUEST_DATA(req));
		}
		gbt_entries_free(&entries);
		ok = req != NULL && gbt_request_send(seg) && req->status == GBT_REPLY_OK;
	}
	PG_FINALLY();
	{
		gbt_unregister_build();
	}
	PG_END_TRY();

	if (ok)
		gbt_scan_stats.build_ms += req->device_ms;
	else
		strlcpy(why, req == NULL ? "no shared memory for the export" :
				req->message[0] != '\0' ? req->message : "the service did not build it",
				whylen);
	if (seg != NULL)
		dsm_detach(seg);
	return ok;
}

/*
 * After CREATE INDEX (gpubtree.build_after_create): give the service the
 * new index's mirror now rather than at the first scan.  Not during REINDEX
 * (and so CLUSTER, VACUUM FULL, table rewrites), where PostgreSQL forbids
 * scanning the index being rebuilt; there the first scan builds it.  A
 * failure only means the same.
 */
void
gbt_mirror_after_build(Relation index)
{
	Oid			keytype;
	char		why[GBT_ERRMSG_LEN];

	if (!gpubtree_build_after_create || gpubtree_device_mode == GPUBTREE_DEVICE_OFF ||
		gbt_shared == NULL || RecoveryInProgress() || !gbt_service_running() ||
		!index->rd_index->indisvalid ||
		ReindexIsProcessingIndex(RelationGetRelid(index)) ||
		!OidIsValid(keytype = gbt_mirror_key_type(index)) ||
		gbt_mirror_refused(index, why, sizeof(why)))
		return;
	(void) gbt_build_mirror(index, keytype, NULL, NULL, why, sizeof(why));
}

/*
 * One SCAN round trip; on success fills tbm.  *status tells what happened.
 */
static bool
scan_once(Relation index, const uint64 *lo, const uint64 *hi, int64 n,
		  Size result_room, TIDBitmap *tbm,
		  int64 *ntids, GbtReplyStatus *status)
{
	dsm_segment *seg;
	GbtRequest *req;
	bool		ok;
	instr_time	t0,
				t1;

	req = gbt_request_create(&seg, 2 * sizeof(uint64) * n, result_room);
	if (req == NULL)
		return false;
	req->kind = GBT_REQ_SCAN;
	gbt_fill_key(&req->key, index);
	req->generation = gbt_generation(MyDatabaseId, RelationGetRelid(index));
	req->nitems = n;
	memcpy(GBT_REQUEST_DATA(req), lo, sizeof(uint64) * n);
	memcpy(GBT_REQUEST_DATA(req) + sizeof(uint64) * n, hi, sizeof(uint64) * n);

	INSTR_TIME_SET_CURRENT(t0);
	ok = gbt_request_send(seg);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	gbt_scan_stats.wait_ms += INSTR_TIME_GET_MILLISEC(t1);
	if (ok)
	{
		*status = req->status;
		*ntids = req->nresults;
		if (req->status == GBT_REPLY_OK)
		{
			ItemPointerData *tids = (ItemPointerData *)
			(GBT_REQUEST_DATA(req) + MAXALIGN(2 * sizeof(uint64) * n));
			int64		done;

			/* tbm_add_tuples takes an int count: feed it in pieces. */
			for (done = 0; tbm != NULL && done < req->nresults; done += 1 << 20)
				tbm_add_tuples(tbm, tids + done,
							   (int) Min(req->nresults - done, 1 << 20), false);
			gbt_scan_stats.gpu_scans++;
			gbt_scan_stats.keys += n;
			gbt_scan_stats.entries += req->nresults;
			gbt_scan_stats.device_ms += req->device_ms;
			gbt_scan_stats.on_gpu = req->on_gpu;
		}
	}
	dsm_detach(seg);
	return ok;
}

/* nbtree answers: first the rescan that gpubtree_rescan() left to us. */
static int64
nbtree_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	btrescan(scan, scan->keyData, scan->numberOfKeys, NULL, 0);
	return btgetbitmap(scan, tbm);
}

int64
gpubtree_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	Relation	index = scan->indexRelation;
	Oid			keytype;
	uint64	   *lo;
	uint64	   *hi;
	int64		n;
	int64		ntids = 0;
	Size		room;
	GbtReplyStatus status = GBT_REPLY_ERROR;
	int			attempt;

	instr_time	t0,
				t1;

	if (gpubtree_device_mode == GPUBTREE_DEVICE_OFF ||
		gbt_shared == NULL || RecoveryInProgress() ||
		!OidIsValid(keytype = gbt_mirror_key_type(index)))
		return nbtree_getbitmap(scan, tbm);
	INSTR_TIME_SET_CURRENT(t0);
	if (!gbt_keys_to_ranges(scan->keyData, scan->numberOfKeys, keytype, false,
							&lo, &hi, &n))
		return nbtree_getbitmap(scan, tbm);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	gbt_scan_stats.prep_ms += INSTR_TIME_GET_MILLISEC(t1);

	if (n == 0)
		return 0;				/* contradictory conditions: nothing matches */

	/* This session's own inserts first, so that it sees its own rows. */
	gbt_resync_flush();
	gbt_scan_stats.mirror_note[0] = '\0';

	/* Guess room for the answer; the service says when it needs more. */
	room = sizeof(ItemPointerData) * Max(n * 4, 1024);
	for (attempt = 0; attempt < 3; attempt++)
	{
		if (!scan_once(index, lo, hi, n, room, tbm, &ntids, &status))
			break;
		if (status == GBT_REPLY_OK)
			return ntids;
		if (status == GBT_REPLY_NO_ROOM)
		{
			/* With slack: concurrent inserts may grow the answer meanwhile. */
			room = sizeof(ItemPointerData) * (ntids + ntids / 4 + 1024);
		}
		else if (status == GBT_REPLY_NO_MIRROR && attempt == 0)
		{
			/* Built in the background; we wait only if asked to. */
			if (!gbt_mirror_wanted(index, keytype, gbt_scan_stats.mirror_note,
								   sizeof(gbt_scan_stats.mirror_note)))
				break;
		}
		else
			break;
	}

	gbt_count_fallback();
	gbt_scan_stats.fallbacks++;
	return nbtree_getbitmap(scan, tbm);
}

/*
 * Read the service's current mirror of the index, in chunks of raw
 * positions, passing each chunk's live entries to fn.  Fails (with *status)
 * when there is no current mirror, or when it changed layout meanwhile (a
 * merge or rebuild); *mirror_id names the mirror read.
 */
bool
gbt_dump_mirror(Relation index, GbtDumpFn fn, void *arg, uint64 *mirror_id,
				GbtReplyStatus *status)
{
	const int64 chunk = 1 << 20;
	int64		offset = 0;
	int64		total;
	uint64		generation;

	gbt_resync_flush();
	generation = gbt_generation(MyDatabaseId, RelationGetRelid(index));
	*status = GBT_REPLY_ERROR;
	do
	{
		dsm_segment *seg;
		GbtRequest *req;
		bool		same;

		req = gbt_request_create(&seg, 0, gbt_entries_flat_size(GBT_MAX_COLS, chunk));
		if (req == NULL)
			return false;
		req->kind = GBT_REQ_DUMP;
		gbt_fill_key(&req->key, index);
		req->generation = generation;
		req->offset = offset;
		req->nitems = chunk;
		if (!gbt_request_send(seg))
		{
			dsm_detach(seg);
			return false;
		}
		*status = req->status;
		same = offset == 0 || req->mirror_id == *mirror_id;
		*mirror_id = req->mirror_id;
		total = req->total;
		if (req->status == GBT_REPLY_OK && same)
		{
			GbtEntries	e;

			gbt_entries_unflatten(&e, GBT_MAX_COLS, chunk, GBT_REQUEST_DATA(req));
			e.n = req->nresults;
			e.ncols = req->columns.ncols;
			fn(&e, &req->columns, arg);
		}
		dsm_detach(seg);
		if (*status != GBT_REPLY_OK)
			return false;
		if (!same)
		{
			*status = GBT_REPLY_ERROR;
			return false;
		}
		offset += chunk;
	} while (offset < total);
	return true;
}

typedef struct SweepState
{
	IndexBulkDeleteCallback callback;
	void	   *callback_state;
	ItemPointerData *dead;
	int64		ndead;
	int64		maxdead;
} SweepState;

static void
sweep_chunk(const GbtEntries *e, const GbtColumns *cols, void *arg)
{
	SweepState *st = arg;
	int64		i;

	for (i = 0; i < e->n; i++)
	{
		if (!st->callback(&e->tids[i], st->callback_state))
			continue;
		if (st->ndead == st->maxdead)
		{
			st->maxdead *= 2;
			st->dead = repalloc_huge(st->dead, sizeof(ItemPointerData) * st->maxdead);
		}
		st->dead[st->ndead++] = e->tids[i];
	}
}

static int
cmp_tid(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) a, (ItemPointer) b);
}

/*
 * VACUUM's bulk delete, after nbtree's pass: remove from the mirror every
 * entry whose TID VACUUM's callback reports dead, before VACUUM can mark
 * those line pointers unused for reuse.  The mirror is swept rather than
 * told what nbtree deleted, because nbtree also removes entries by itself
 * (LP_DEAD simple deletion, bottom-up deletion) without calling us; their
 * TIDs are dead too and reach VACUUM's list the same way.  When the sweep
 * cannot be done, the mirror is invalidated instead.  Either way exports
 * that began before nbtree's pass ended are made unusable.
 */
void
gbt_sweep_mirror(Relation index, IndexBulkDeleteCallback callback,
				 void *callback_state)
{
	SweepState	st;
	uint64		mirror_id = 0;
	GbtReplyStatus status;
	dsm_segment *seg;
	GbtRequest *req;
	bool		done = false;

	if (gbt_shared == NULL)
		return;
	/* First: writers still holding entries of rows that died check them. */
	gbt_vacuum_epoch_bump(MyDatabaseId, RelationGetRelid(index));
	/* CREATE INDEX CONCURRENTLY's validation pass: its callback collects. */
	if (!index->rd_index->indisvalid || !gbt_service_running() ||
		!OidIsValid(gbt_mirror_key_type(index)))
	{
		gbt_invalidate(MyDatabaseId, RelationGetRelid(index));
		return;
	}

	st.callback = callback;
	st.callback_state = callback_state;
	st.maxdead = 1024;
	st.ndead = 0;
	st.dead = palloc_extended(sizeof(ItemPointerData) * st.maxdead, MCXT_ALLOC_HUGE);
	if (gbt_dump_mirror(index, sweep_chunk, &st, &mirror_id, &status))
	{
		qsort(st.dead, st.ndead, sizeof(ItemPointerData), cmp_tid);
		req = gbt_request_create(&seg, sizeof(ItemPointerData) * st.ndead, 0);
		if (req != NULL)
		{
			req->kind = GBT_REQ_REMOVE;
			gbt_fill_key(&req->key, index);
			req->mirror_id = mirror_id;
			req->nitems = st.ndead;
			memcpy(GBT_REQUEST_DATA(req), st.dead, sizeof(ItemPointerData) * st.ndead);
			done = gbt_request_send(seg) && req->status == GBT_REPLY_OK;
			dsm_detach(seg);
		}
	}
	pfree(st.dead);
	if (!done)
		gbt_invalidate(MyDatabaseId, RelationGetRelid(index));
}
