/*
 * engine.h
 *	  The search engine of one mirror, behind one interface: a Harmonia tree
 *	  of its keys (harmonia.h) and visibility-filtered aggregates over
 *	  position ranges (vagg.h).  Two implementations: the GPU engine
 *	  (engine_gpu.cu, on one CUDA device chosen per engine) and the CPU twin
 *	  (engine_cpu.c).  Plain C, usable from C, C++ and CUDA; no PostgreSQL
 *	  headers.  Errors are returned with a message, nothing is printed, and
 *	  there is no global mutable state.
 *
 * Aggregates (the contract of aggregate() and of gbt_vagg_cpu()).
 *
 * The mirror holds n entries in key order; entry i lives on heap block
 * blocks[i], may be marked removed (a bitmap), and carries up to
 * GBT_MAX_COLS payload columns (int64 or float8, each with an optional
 * NULL bitmap).  A query is a set of disjoint position ranges plus the
 * caller's visibility-map snapshot: a bitmap over heap blocks saying "every
 * tuple on this block is visible to my snapshot".  Entries on such blocks
 * are aggregated on the spot; the others are "unsure" and their positions
 * are handed back so that the caller can check them against the heap and
 * fold them in itself (exact under MVCC).
 *
 * Contract
 *	  Over the union of nranges disjoint position ranges [start[r], end[r])
 *	  (0 <= start <= end <= n; ranges may be empty and come in any order; up
 *	  to 10^7 ranges, total positions up to n), each entry i:
 *	  - is skipped if removed (bit i of removed: byte i>>3, bit i&7);
 *	  - else, if its block b < nvisible has bit b set in visible[] (byte b>>3,
 *		bit b&7), is aggregated into *out: count, and per column c < ncols
 *		unless bit i of nulls[c] is set (NULL value): nonnull, the sum, min,
 *		max and, for FLOAT8, the NaN/+Inf/-Inf counts;
 *	  - otherwise its position is appended to unsure[] while fewer than
 *		unsure_cap are there (order unspecified; each unsure position is
 *		written at most once) and it is counted in out->nunsure, which is the
 *		total even when it exceeds unsure_cap.
 *	  Blocks at or beyond nvisible count as not visible.
 *
 *	  Result fields.  Every field that does not apply is zero: fields of
 *	  columns >= ncols, the FLOAT8 fields of an INT64 column and vice versa,
 *	  and min/max of a column with nonnull == 0.
 *	  - INT64 sums are exact: sum = sum_hi * 2^64 + sum_lo, 128-bit two's
 *		complement (2^63 values of any size cannot overflow it).
 *	  - FLOAT8 sums cover the finite values only, as a normalized
 *		double-double (fsum_hi = fl(fsum_hi + fsum_lo)), accumulated with
 *		error-free TwoSum everywhere, so the error is at most about
 *		n * 2^-104 * sum|x| (in practice exact to the last bit of a double on
 *		most data, cancellation included).  NaN, +Inf and -Inf values are
 *		counted in nnan/npinf/nninf instead (they are included in nonnull,
 *		min and max); the caller turns those into PostgreSQL's Inf/NaN
 *		results.  If a partial sum of finite values overflows the double
 *		range the sum is meaningless (the caller should fall back).
 *	  - FLOAT8 min/max use PostgreSQL's order: NaN above everything including
 *		+Inf, -0 == 0, all NaNs equal.  Values equal in that order may differ
 *		in bits (-0 and 0, NaNs of other sign or payload), and then which
 *		one PostgreSQL returns depends on the order its plan reads the rows
 *		in (float8smaller/larger keep the later of two equal values): such a
 *		tie sets bit GBT_TIE_MIN (GBT_TIE_MAX) of ties, and min_f (max_f)
 *		is then one of the tied values.  Without it min_f/max_f are the
 *		bits of every value equal to them, whatever the order.
 *	  - The GPU, and the engines' chunk sums, may add in a different order
 *		than gbt_vagg_cpu(), so the FLOAT8 sums may differ within the bound
 *		above; all other fields are identical.
 *
 *	  Columns.  A column whose values are all NULL (a type the mirror does
 *	  not hold) has no array: cols[c] is NULL.  An integer key column is the
 *	  keys themselves (bit c of keyed): its values are decoded as read, so
 *	  that neither side holds the key twice.  A column whose values allow
 *	  it may be held in 4 bytes a value (bit c of narrow): integers within
 *	  2^32 of the smallest, floats a float holds exactly.
 *
 *	  Arguments.  in->blocks or in->tids must be non-NULL when n > 0 (on the
 *	  GPU: blocks); start/end may be
 *	  NULL when nranges == 0; visible may be
 *	  NULL when nvisible == 0; unsure may be NULL when unsure_cap == 0; err
 *	  may be NULL.  Checked: n >= 0, 0 <= ncols <= GBT_MAX_COLS, valid
 *	  column types (keyed ones INT64 and not narrow), 0 <= start[r] <= end[r] <= n, the total length of the
 *	  ranges <= n, nvisible >= 0, unsure_cap >= 0.  Not checked: that ranges
 *	  are disjoint (overlapping ranges whose total length is <= n aggregate
 *	  the overlap twice).  On error the function returns nonzero, writes a
 *	  message to err (errlen bytes, NUL-terminated) and *out and unsure[] are
 *	  unspecified.
 */
#ifndef GBT_ENGINE_H
#define GBT_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

/* Mirrored columns of an index; every layer sizes its arrays by this. */
#define GBT_MAX_COLS 4

typedef enum
{
	GBT_VAL_INT64 = 0,
	GBT_VAL_FLOAT8 = 1
} gbt_valtype;

typedef struct gbt_agg_input
{
	int64_t		n;				/* entries, in key order */
	const uint32_t *blocks;		/* heap block number of each entry [n]; or
								 * NULL, and then: */
	const uint16_t *tids;		/* each entry's TID [3n] as PostgreSQL lays
								 * it out: block's high half, low half,
								 * offset (gbt_agg_block()) */
	const uint8_t *removed;		/* bit i (byte i>>3, bit i&7) set: entry i is
								 * not there; may be NULL */
	int			ncols;			/* 0..GBT_MAX_COLS payload columns */
	gbt_valtype coltype[GBT_MAX_COLS];
	const void *cols[GBT_MAX_COLS];	/* int64_t[n] or double[n]; NULL: every
									 * value is NULL */
	const uint8_t *nulls[GBT_MAX_COLS];	/* bit set: value i is NULL; may be
										 * NULL (no NULLs) */
	unsigned	keyed;			/* bit c set: INT64 column c is held as the
								 * entries' keys, cols[c][i] being
								 * hm_encode_int64() of value i */
	unsigned	narrow;			/* bit c set: cols[c] holds 4 bytes a value:
								 * INT64 as uint32 offsets from base[c],
								 * FLOAT8 as float (exact) */
	int64_t		base[GBT_MAX_COLS];
} gbt_agg_input;

/* Entry i's heap block, from in's blocks or else its TIDs. */
static inline uint32_t
gbt_agg_block(const gbt_agg_input *in, int64_t i)
{
	if (in->blocks != NULL)
		return in->blocks[i];
	return ((uint32_t) in->tids[3 * i] << 16) | in->tids[3 * i + 1];
}

/*
 * One column's aggregate, in a form that combines exactly (the backends'
 * partial aggregates are this struct too: protocol.h's GbtAggCol).
 */
typedef struct gbt_agg_col
{
	int64_t		nonnull;		/* non-NULL values aggregated */
	int64_t		sum_hi;			/* INT64: exact sum = sum_hi*2^64 + sum_lo */
	uint64_t	sum_lo;			/* (two's complement 128-bit) */
	double		fsum_hi;		/* FLOAT8: sum of the finite values, */
	double		fsum_lo;		/* double-double (hi+lo) */
	int64_t		nnan;			/* FLOAT8: NaN, +Inf, -Inf values (not in */
	int64_t		npinf;			/* fsum) */
	int64_t		nninf;
	int64_t		min_i;			/* INT64 */
	int64_t		max_i;
	double		min_f;			/* FLOAT8, PostgreSQL's order: NaN above */
	double		max_f;			/* everything incl. +Inf; -0 == 0 */
	int64_t		ties;			/* FLOAT8: GBT_TIE_MIN/MAX (contract) */
} gbt_agg_col;					/* min/max valid when nonnull > 0, else 0 */

/* gbt_agg_col.ties: values equal to min_f (max_f) differ in bits */
#define GBT_TIE_MIN 1
#define GBT_TIE_MAX 2

typedef struct gbt_agg_result
{
	int64_t		count;			/* entries aggregated (visible, not removed) */
	gbt_agg_col col[GBT_MAX_COLS];
	int64_t		nunsure;		/* entries on blocks not visible: total, may
								 * exceed unsure_cap */
} gbt_agg_result;

/*
 * The contract's CPU reference over host arrays (vagg_cpu.c): the CPU
 * twin's aggregate, and the one for entries that no engine holds (a
 * mirror's delta).  Returns 0, or nonzero with a message in err.
 */
extern int	gbt_vagg_cpu(const gbt_agg_input *in, const int64_t *start,
						 const int64_t *end, int64_t nranges,
						 const uint8_t *visible, int64_t nvisible,
						 gbt_agg_result *out, int64_t *unsure, int64_t unsure_cap,
						 char *err, size_t errlen);

/*
 * gbt_vagg_cpu() of ranges whose entries are all on visible blocks (the
 * chunk sums checked the map: what gbt_chunk_sums_take() leaves to scan):
 * the same result, no unsure entry, no block looked up, and the INT64
 * columns of entries none of which is removed or NULL summed in plain loops
 * (the ends of a long range: most of a batch's host time before).
 */
extern int	gbt_vagg_cpu_visible(const gbt_agg_input *in, const int64_t *start,
								 const int64_t *end, int64_t nranges,
								 gbt_agg_result *out, char *err, size_t errlen);

/*
 * A round's aggregates answered together (the engines' aggregate_batch):
 * each item is one aggregate() call's question, of its own engine (its
 * mirror), removed bitmap, position ranges and visibility bits, asking
 * for the columns in cols (bit c: column c; the fields of the others are
 * zero, as for a column without values).  Its answer, out, unsure[] and
 * rc (0, or nonzero with err), is what aggregate() on that engine would
 * give (the unsure positions in any order, float sums within the bound
 * above).
 */
#define GBT_ITEM_ERRLEN 128

/*
 * Where a batch's time went (aggregate_batch(), into its first item):
 * the chunk sums' dirty chunks made again once an engine, each item's
 * sums made ready (and its range's chunks), the sums' walks, the scans on
 * the host and on the device; ms of the calling thread's clock.
 */
typedef enum
{
	GBT_BATCH_SYNC,
	GBT_BATCH_READY,
	GBT_BATCH_WALKS,
	GBT_BATCH_HOST,
	GBT_BATCH_DEVICE,
	GBT_BATCH_STEPS
} gbt_batch_step;

typedef struct gbt_agg_item
{
	struct gbt_engine *e;
	const uint8_t *removed;
	uint64_t	removed_version;
	const int64_t *start;
	const int64_t *end;
	int64_t		nranges;
	const uint8_t *visible;
	int64_t		nvisible;
	int			visible_all;	/* the caller knows every bit of visible[]
								 * set: the chunk sums do not compare it */
	unsigned	cols;
	gbt_agg_result *out;
	int64_t    *unsure;
	int64_t		unsure_cap;
	int			rc;
	char		err[GBT_ITEM_ERRLEN];
	double		steps_ms[GBT_BATCH_STEPS];	/* out, the first item's only */
} gbt_agg_item;

/*
 * The caller's way of running n pieces of plain computation at once:
 * fn(args + i * argsize) for i < n, returning when all have.  The pieces
 * call nothing but plain C (no allocation of the caller's kind, no
 * signals); NULL: one after another in the calling thread.
 */
typedef void (*gbt_engine_par) (void (*fn) (void *), void *args, size_t argsize, int n);

/*
 * An engine: one tree of n keys with their aggregate arrays.  Every
 * function returns 0, or nonzero with a message in err (errlen bytes,
 * NUL-terminated); all arrays passed are host memory.  One engine must not
 * be used by two threads at once.
 */
typedef struct gbt_engine gbt_engine;
struct gbt_pred_set;			/* predicate.h */
struct gbt_groups;				/* groupby.h */

/*
 * Runs fn(arg + i * argsize) for i in [0, n) at once (the service's threads):
 * plain computation only.
 */
typedef void (*gbt_piece_runner) (void (*fn) (void *), void *arg, size_t argsize, int n);

/*
 * How many pieces to run n units of work in: the npieces asked for (1
 * without a runner), at most max_pieces, each of at least min_each units,
 * and at least one.
 */
static inline int
gbt_pieces_for(int64_t n, int64_t min_each, int max_pieces, int have_runner, int npieces)
{
	if (!have_runner || npieces < 1)
		return 1;
	if (npieces > max_pieces)
		npieces = max_pieces;
	if (npieces > n / min_each)
		npieces = (int) (n / min_each);
	return npieces < 1 ? 1 : npieces;
}

typedef struct gbt_engine_ops
{
	/*
	 * Whether this engine can run on device (a CUDA device number; -1 for
	 * the CPU twin), with the device's name and the bytes free there for
	 * this process (what other processes hold is not free; 0 for the
	 * CPU twin), or why not.
	 */
	int			(*usable) (int device, char *name, size_t namelen,
						   int64_t *memory, char *why, size_t whylen);

	/*
	 * Build on device from keys[0..in->n), ascending (duplicates allowed).
	 * in's aggregate arrays (blocks, cols, nulls; in->removed is ignored)
	 * are borrowed, not copied: they must stay unchanged until free().  The
	 * GPU engine copies them to the device at the first aggregate(), but
	 * for a keyed column, which must be keys itself: its tree's leaves are
	 * that column there.
	 */
	int			(*build) (const uint64_t *keys, const gbt_agg_input *in, int device,
						  gbt_engine **out, char *err, size_t errlen);
	void		(*free) (gbt_engine *e);

	/*
	 * Positions [start[i], end[i]) of the keys in each inclusive range
	 * [lo[i], hi[i]]; empty (start == end) when lo > hi.  One batch.  An
	 * aggregate() right after over these start and end arrays, unchanged,
	 * may read the GPU engine's own copies of them.  With n == 0 nothing is
	 * searched and the copies an earlier call left for the next one (these
	 * positions, sort_unique()'s keys) are forgotten: the caller's arrays
	 * at those addresses may hold something else from then on.
	 */
	int			(*ranges) (gbt_engine *e, const uint64_t *lo, const uint64_t *hi,
						   int64_t n, int64_t *start, int64_t *end,
						   char *err, size_t errlen);

	/*
	 * Sort keys[0..n) ascending and drop repeats, in place (host memory);
	 * *nout: how many are left.  With map (NULL: not wanted), map[i] is
	 * where the key given as keys[i] went: keys[map[i]] afterwards.  n <
	 * 2^31.  The GPU engine sorts on the device and keeps the keys there: a
	 * ranges() call right after with keys[0..*nout) as both lo and hi,
	 * unchanged, searches them without copying them again.
	 */
	int			(*sort_unique) (gbt_engine *e, uint64_t *keys, int64_t n,
								uint32_t *map, int64_t *nout, char *err,
								size_t errlen);

	/*
	 * The contract above over the engine's entries, with removed[] (NULL:
	 * none) as its removed bitmap; removed_version must change whenever
	 * removed[]'s contents do (the GPU engine copies it again only then, and
	 * only then do the chunk sums look for chunks it changed).  Ranges of
	 * GBT_CHUNK_RANGE_MIN entries or more, when every entry's block is
	 * visible, are answered from the chunk sums (chunksums.h) but for their
	 * ends and the chunks not up to date, which are scanned.
	 */
	int			(*aggregate) (gbt_engine *e, const uint8_t *removed,
							  uint64_t removed_version, const int64_t *start,
							  const int64_t *end, int64_t nranges,
							  const uint8_t *visible, int64_t nvisible,
							  gbt_agg_result *out, int64_t *unsure,
							  int64_t unsure_cap, char *err, size_t errlen);

	/*
	 * One aggregate per range: out[r] as aggregate() would answer range r
	 * alone (the CPU engine: gbt_chunk_sums_each(); the GPU engine: a long
	 * range as aggregate() takes it, a short one on the host); the unsure
	 * positions of every range in unsure[], in range order.
	 */
	int			(*aggregate_each) (gbt_engine *e, const uint8_t *removed,
								   uint64_t removed_version, const int64_t *start,
								   const int64_t *end, int64_t nranges,
								   const uint8_t *visible, int64_t nvisible,
								   gbt_agg_result *out, int64_t *unsure,
								   int64_t unsure_cap, char *err, size_t errlen);

	/*
	 * The items' aggregates, each as aggregate() on its own engine would
	 * answer it (gbt_agg_item), engines of these ops only; an engine may be
	 * in several items.  The host's share (the chunk sums' walk, short
	 * scans) runs in up to npar pieces through par; on the GPU the items
	 * left to the device go in one launch per engine and one copy back.
	 * Returns the number of items that failed (each with its rc and err).
	 */
	int			(*aggregate_batch) (gbt_agg_item *items, int64_t nitems,
									gbt_engine_par par, int npar);

	/*
	 * predicate.h's filtered aggregate over the engine's entries, with
	 * removed[] as aggregate() takes it; every entry of the ranges is read
	 * (chunk sums hold no filter).
	 */
	int			(*aggregate_filtered) (gbt_engine *e, const uint8_t *removed,
									   uint64_t removed_version, const int64_t *start,
									   const int64_t *end, int64_t nranges,
									   const uint8_t *visible, int64_t nvisible,
									   const struct gbt_pred_set *preds,
									   gbt_agg_result *out, int64_t *unsure,
									   int64_t unsure_cap, char *err, size_t errlen);

	/*
	 * groupby.h's grouped aggregate over the engine's entries, with
	 * removed[] as aggregate() takes it: g's outputs as its contract says.
	 */
	int			(*aggregate_grouped) (gbt_engine *e, const uint8_t *removed,
									  uint64_t removed_version, const int64_t *start,
									  const int64_t *end, int64_t nranges,
									  const uint8_t *visible, int64_t nvisible,
									  const struct gbt_pred_set *preds,
									  struct gbt_groups *g, int64_t *unsure,
									  int64_t unsure_cap, char *err, size_t errlen);

	/*
	 * Between requests: bring up to max_chunks of the chunk sums up to date
	 * with removed[] (as given to aggregate()).  Returns nonzero when some
	 * are left to do.
	 */
	int			(*tidy) (gbt_engine *e, const uint8_t *removed,
						 uint64_t removed_version, int64_t max_chunks);

	/*
	 * Memory the engine holds itself (not what it borrows): on its device
	 * (the CPU twin: its tree), and on the host (the chunk sums of both).
	 */
	size_t		(*bytes) (const gbt_engine *e);
	size_t		(*host_bytes) (const gbt_engine *e);

	/*
	 * Memory it keeps between calls for batches: device buffers, pinned
	 * host staging and the sort's workspace, grown to the largest batch.
	 */
	size_t		(*scratch_bytes) (const gbt_engine *e);

	/* Give that memory back; the next batch allocates what it needs again. */
	void		(*trim) (gbt_engine *e);

	/* The CUDA device the tree is on; -1 for the CPU twin. */
	int			(*device) (const gbt_engine *e);

	/*
	 * Right after build: every chunk sum made at once, with removed[] (as
	 * given to aggregate()), in npieces pieces run by run (at once, or one
	 * after another with run NULL), so that the mirror's first aggregates
	 * need no tidy().  Returns nonzero when some chunks are left dirty
	 * (tidy() then makes them).
	 */
	int			(*tidy_all) (gbt_engine *e, const uint8_t *removed,
							 uint64_t removed_version, gbt_piece_runner run,
							 int npieces);

	/*
	 * removed[] (of version to) changed since version from at changed[]
	 * (every position whose bit changed, maybe more): the engine's chunk
	 * sums mark those chunks dirty rather than compare the whole bitmap at
	 * the next call (gbt_chunk_sums_note()).
	 */
	void		(*note_removed) (gbt_engine *e, const uint8_t *removed, uint64_t from,
								 uint64_t to, const int64_t *changed, int64_t nchanged);

	/*
	 * The GPU engine's copies on the device of the host's aggregate arrays
	 * (blocks, columns, nulls, removed[]: made by the first aggregate that
	 * scans there) given back when no call has read them for idle_ms, so
	 * that a mirror holds one copy of each byte while nothing needs two;
	 * the next such aggregate copies them again.  Returns the bytes given
	 * back (the CPU twin: 0).
	 */
	size_t		(*drop_idle_copies) (gbt_engine *e, int64_t idle_ms);
} gbt_engine_ops;

/* For the implementations: "what: why" into err (may be NULL); returns 1. */
extern int	gbt_engine_fail(const char *what, const char *why, char *err, size_t errlen);
/* build()'s check that every keyed column of in is keys; 0, or 1 with a message. */
extern int	gbt_engine_check_keyed(const uint64_t *keys, const gbt_agg_input *in,
								   char *err, size_t errlen);

/* The CPU twin (engine_cpu.c). */
extern const gbt_engine_ops *gbt_engine_cpu_ops(void);

/* The GPU engine (engine_gpu.cu); NULL in a build without CUDA. */
extern const gbt_engine_ops *gbt_engine_gpu_ops(void);

/*
 * A split engine (engine_split.c): one mirror's entries cut by position
 * into nparts parts (at most GBT_SPLIT_MAX_PARTS), part p an engine of
 * inner's kind on devices[p] holding a share of the entries in proportion
 * to weights[p] (> 0), the cuts on multiples of GBT_SPLIT_ALIGN positions
 * (so a part may hold none).  Its ops (gbt_engine_split_ops(), whose build
 * refuses: this function builds) answer every call as one engine of all
 * the entries would, the float sums within engine.h's bound.  keys and
 * in's arrays are borrowed as build() borrows them.  build_run runs the
 * parts' builds at once (NULL: in turn); call_run, kept, runs a large
 * call's parts at once when they are on different devices.
 */
#define GBT_SPLIT_MAX_PARTS 8
#define GBT_SPLIT_ALIGN 64

extern int	gbt_engine_split_build(const gbt_engine_ops *inner, const uint64_t *keys,
								   const gbt_agg_input *in, int nparts, const int *devices,
								   const int64_t *weights, gbt_piece_runner build_run,
								   gbt_piece_runner call_run, gbt_engine **out,
								   char *err, size_t errlen);
extern const gbt_engine_ops *gbt_engine_split_ops(void);

/* A part of a split engine: its device, positions and memory. */
typedef struct gbt_split_part
{
	int			device;
	int64_t		first;			/* its first position in the whole */
	int64_t		n;				/* its entries */
	size_t		bytes;			/* inner ops' bytes() and host_bytes() */
	size_t		host_bytes;
} gbt_split_part;

/* The parts of split engine e into parts[GBT_SPLIT_MAX_PARTS]: how many. */
extern int	gbt_engine_split_parts(const gbt_engine *e, gbt_split_part *parts);

#ifdef __cplusplus
}
#endif

#endif							/* GBT_ENGINE_H */
