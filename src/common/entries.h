/*
 * entries.h
 *	  A batch of index entries as the mirror holds them: order-preserving
 *	  64-bit key, TID, and the values of the index's mirrored columns, in
 *	  separate arrays (exports, build requests, the change log's contents,
 *	  mirrors).
 *
 * Column c is attribute c + 1 of the index (the key column is column 0),
 * for the first GBT_MAX_COLS attributes whose type has a mirrored form:
 * integers, date and timestamps as int64, float4 and float8 as float8
 * (float4 widens exactly), a domain as its base type.  Other types get
 * GBT_COL_NONE and no values.
 */
#ifndef GPUBTREE_ENTRIES_H
#define GPUBTREE_ENTRIES_H

#include "postgres.h"

#include "storage/itemptr.h"

#include "engine.h"				/* GBT_MAX_COLS */
#include "harmonia_keys.h"

typedef enum GbtColType
{
	GBT_COL_NONE = 0,
	GBT_COL_INT64,
	GBT_COL_FLOAT8
} GbtColType;

typedef struct GbtColumns
{
	int			ncols;
	GbtColType	type[GBT_MAX_COLS];
} GbtColumns;

typedef struct GbtEntries
{
	int64		n;
	int64		cap;
	int			ncols;
	uint64	   *keys;
	ItemPointerData *tids;
	int64	   *vals[GBT_MAX_COLS]; /* int64, or float8's bits; NULL: not
									 * held (gbt_entry_val()) */
	uint32	   *narrow[GBT_MAX_COLS];	/* or in 4 bytes (a mirror's): */
	int64		narrow_base[GBT_MAX_COLS];	/* an integer less this, */
	uint8		narrow_float;	/* bit c: a float8 that a float holds */
	uint8	   *nulls;			/* bit c set: column c is NULL (NULL: none
								 * is); and the flag: */
	bool		borrowed;		/* the arrays lie in memory not ours (a
								 * request segment): grow moves them to
								 * palloc'd ones, free leaves them */
} GbtEntries;

/*
 * In an exported entry's nulls: the export cannot tell that every snapshot
 * sees the entry's row (its heap block is not all-visible).
 */
#define GBT_ENTRY_XMIN_UNKNOWN 0x80

/*
 * One entry in this many, at most, flagged GBT_ENTRY_XMIN_UNKNOWN: a mirror
 * with more of them stops listing them one by one and lets the visibility
 * map decide all its plain entries (the service's vm_mode, left when VACUUM
 * brings them back under this share), so the planner takes 1 / this as the
 * share of a captured table's rows that a mirror may leave to the heap.
 */
#define GBT_UNKNOWN_ONE_IN 64

/*
 * Entries flagged GBT_ENTRY_XMIN_UNKNOWN whose inserter (and deleter, if
 * any) the export read from the heap: committed, but not before every
 * snapshot (one older than the commit still runs).  The mirror stamps them
 * with those instead of leaving them to the visibility map.  In a BUILD
 * request they follow the entries: pos[n] (int64), xmin[n], then xmax[n]
 * (InvalidTransactionId: none).
 */
typedef struct GbtEntryStamps
{
	int64		n;
	int64		cap;
	int64	   *pos;			/* positions in the entries */
	TransactionId *xmin;		/* a transaction, or FrozenTransactionId */
	TransactionId *xmax;
} GbtEntryStamps;

#define GBT_ENTRY_STAMPS_SIZE(n) \
	((Size) (n) * (sizeof(int64) + 2 * sizeof(TransactionId)))

/* TID order, as ItemPointerCompare(), inline: sorts and searches call it often. */
static inline int
gbt_tid_cmp(const ItemPointerData *a, const ItemPointerData *b)
{
	BlockNumber ba = ItemPointerGetBlockNumberNoCheck(a);
	BlockNumber bb = ItemPointerGetBlockNumberNoCheck(b);
	OffsetNumber oa = ItemPointerGetOffsetNumberNoCheck(a);
	OffsetNumber ob = ItemPointerGetOffsetNumberNoCheck(b);

	if (ba != bb)
		return ba < bb ? -1 : 1;
	return oa < ob ? -1 : oa > ob ? 1 : 0;
}

/* A float8 value's bits as an int64 column holds them, and back. */
static inline double
gbt_val_float8(int64 v)
{
	double		d;

	memcpy(&d, &v, sizeof(d));
	return d;
}

static inline int64
gbt_float8_val(double d)
{
	int64		v;

	memcpy(&v, &d, sizeof(v));
	return v;
}

/*
 * Column c's value of entry i.  A mirror does not hold what it can tell
 * otherwise: an integer key column (column 0) is its keys decoded, and a
 * column of a type it does not hold is all NULL (value 0); it holds a
 * column whose values allow it in 4 bytes a value (narrow).
 */
static inline int64
gbt_entry_val(const GbtEntries *e, int c, int64 i)
{
	if (likely(e->vals[c] != NULL))
		return e->vals[c][i];
	if (e->narrow[c] != NULL)
	{
		float		f;

		if (!((e->narrow_float >> c) & 1))
			return (int64) ((uint64) e->narrow_base[c] + e->narrow[c][i]);
		memcpy(&f, &e->narrow[c][i], sizeof(f));
		return gbt_float8_val(f);
	}
	return c == 0 ? hm_decode_int64(e->keys[i]) : 0;
}

/* Entry i's NULL bits. */
static inline uint8
gbt_entry_nulls(const GbtEntries *e, int64 i)
{
	return likely(e->nulls != NULL) ? e->nulls[i] : 0;
}

/* Copy entry i of src to position j of dst (the columns dst holds). */
static inline void
gbt_copy_entry(GbtEntries *dst, int64 j, const GbtEntries *src, int64 i)
{
	int			c;

	dst->keys[j] = src->keys[i];
	dst->tids[j] = src->tids[i];
	for (c = 0; c < Min(src->ncols, dst->ncols); c++)
		if (dst->vals[c] != NULL)
			dst->vals[c][j] = gbt_entry_val(src, c, i);
	dst->nulls[j] = gbt_entry_nulls(src, i);
}

extern void gbt_entries_init(GbtEntries *e, int ncols, int64 cap);
extern void gbt_entries_grow(GbtEntries *e, int64 cap);
extern void gbt_entries_free(GbtEntries *e);

/* Bytes of n entries of ncols columns laid out one array after another. */
extern Size gbt_entries_flat_size(int ncols, int64 n);
/* Copy e into a flat buffer / point e's arrays into one (no copy). */
extern void gbt_entries_flatten(const GbtEntries *e, char *buf);
extern void gbt_entries_unflatten(GbtEntries *e, int ncols, int64 n, char *buf);

/* Positions from..to-1 of e sorted by TID, or by (key, TID): palloc'd. */
extern int64 *gbt_entries_order(const GbtEntries *e, int64 from, int64 to,
								 bool by_key);
extern int64 *gbt_entries_key_order(const GbtEntries *e);

/*
 * The bytes a mirror of n entries may take (on the GPU, or the CPU twin):
 * its build's peak, when it still holds every column.
 */
extern int64 gbt_mirror_estimate_bytes(int64 n, int ncols, bool on_gpu);

#endif							/* GPUBTREE_ENTRIES_H */
