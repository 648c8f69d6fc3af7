/*
 * chunksums.h
 *	  Aggregates of a mirror's entries by fixed chunks of positions, kept
 *	  with an engine so that a long range whose entries are all on visible
 *	  blocks costs a walk down a shallow tree of partial aggregates plus
 *	  its two ends, not a pass over every entry (chunksums.c).  Plain C, no
 *	  PostgreSQL headers; both engines use it over the borrowed host arrays.
 *
 * Level 0 holds one aggregate per GBT_CHUNK positions (the non-removed
 * entries of the chunk, each counted whatever its block), each level above
 * one per GBT_CHUNK_FANOUT items below; gbt_chunk_sums_build() leaves
 * every chunk dirty (below), and the engine's tidy_all() right after the
 * mirror's build makes them all at once, in threads.  The removed bitmap changes
 * between calls: a chunk whose removed bits differ from those its
 * aggregate was made with is out of date ("dirty"), as is every item above
 * it (a chunk that only lost entries is brought up to date by taking them
 * out, where its sums allow: chunksums.c's take_out_removed()); an
 * aggregate brings up to GBT_CHUNK_SYNC_MAX dirty chunks up to date
 * and hands the others back to be scanned, and the service brings the rest
 * up to date between requests (gbt_chunk_sums_tidy()).  The answer is the same as a scan's
 * (engine.h's contract): exact, float sums within its bound.
 */
#ifndef GBT_CHUNKSUMS_H
#define GBT_CHUNKSUMS_H

#include "engine.h"

#ifdef __cplusplus
extern "C"
{
#endif

#ifndef GBT_CHUNK				/* make GBT_SMALL_LAYOUT=1: tiny, for tests */
#define GBT_CHUNK 1024			/* positions per level-0 aggregate (8k) */
#define GBT_CHUNK_FANOUT 64		/* items per item of the level above */
#define GBT_CHUNK_SYNC_MAX 16	/* dirty chunks an aggregate makes again */
#endif
#define GBT_CHUNK_LEVELS 6		/* more items side by side at the top */
#define GBT_CHUNK_RANGE_MIN (4 * GBT_CHUNK)	/* shorter ranges are scanned */

typedef struct gbt_chunk_sums gbt_chunk_sums;

/*
 * The aggregate's part answered from the sums, and what is left to scan in
 * ascending order per range: the other ranges, the long ranges' ends and
 * the dirty chunks in them.  No entry is in both.
 */
typedef struct gbt_chunk_split
{
	gbt_agg_result part;
	int64_t    *start;
	int64_t    *end;
	int64_t		n;
	int64_t		cap;
	int64_t		entries;		/* positions in the ranges to scan */
	int64_t		chunks;			/* chunks answered from the sums */
} gbt_chunk_split;

/*
 * Sums over in's host arrays (borrowed: unchanged until free), every chunk
 * dirty until gbt_chunk_sums_tidy() or an aggregate makes it.  NULL when in
 * has fewer than GBT_CHUNK_RANGE_MIN entries (no range could use them) or
 * memory is short.
 */
extern gbt_chunk_sums *gbt_chunk_sums_build(const gbt_agg_input *in);
extern void gbt_chunk_sums_free(gbt_chunk_sums *s);
extern size_t gbt_chunk_sums_bytes(const gbt_chunk_sums *s);

/*
 * For an aggregate() over in (its removed bitmap in->removed, of version
 * removed_version): 0 when the sums answer part of it (split filled: scan
 * split->start/end with the same removed and visible, then combine
 * split->part into the result; gbt_chunk_split_free() after), 1 when they
 * do not apply (s NULL, no range long enough, a block not visible, ranges
 * out of bounds: scan the ranges as given), -1 when memory is short.
 */
extern int	gbt_chunk_sums_split(gbt_chunk_sums *s, const gbt_agg_input *in,
								 uint64_t removed_version, const int64_t *start,
								 const int64_t *end, int64_t nranges,
								 const uint8_t *visible, int64_t nvisible,
								 gbt_chunk_split *split);
extern void gbt_chunk_split_free(gbt_chunk_split *split);

/*
 * gbt_chunk_sums_split() in steps, for a round's aggregates: sync() once
 * for s (up to max_chunks dirty chunks made again, in npieces pieces at
 * once by run), then ready() in one thread for every item of s (up to
 * budget more dirty chunks made; 1 when the sums do not apply), then
 * take() of those ready, which only reads s, in as many threads at once
 * (the same 0, 1 or -1 as split()).  A dirty chunk left is scanned.
 * visible_all (sync_ranges() and take()): the caller knows every bit of
 * visible[0..nvisible) set, which is then not compared.
 */
extern void gbt_chunk_sums_sync(gbt_chunk_sums *s, const gbt_agg_input *in,
								uint64_t removed_version, int64_t max_chunks,
								gbt_piece_runner run, int npieces);
/*
 * The dirty chunks that take() would add whole for the ranges made again
 * by sync() (in npieces pieces at once by run), when there are at most
 * max_chunks of them, at most GBT_SYNC_RANGES_MAX ranges and every block
 * visible: so that an aggregate after a write that touched most chunks
 * takes its sums instead of scanning its range (on a GPU, a copy of the
 * columns on the device for it).  Returns how many of them were dirty
 * (made when at most max_chunks).
 */
#define GBT_SYNC_RANGES_MAX 64
extern int64_t gbt_chunk_sums_sync_ranges(gbt_chunk_sums *s, const gbt_agg_input *in,
										  uint64_t removed_version, const int64_t *start,
										  const int64_t *end, int64_t nranges,
										  const uint8_t *visible, int64_t nvisible,
										  int visible_all, int64_t max_chunks,
										  gbt_piece_runner run, int npieces);
extern int	gbt_chunk_sums_ready(gbt_chunk_sums *s, const gbt_agg_input *in,
								 uint64_t removed_version, const int64_t *start,
								 const int64_t *end, int64_t nranges, int64_t budget);
extern int	gbt_chunk_sums_take(const gbt_chunk_sums *s, const int64_t *start,
								const int64_t *end, int64_t nranges,
								const uint8_t *visible, int64_t nvisible,
								int visible_all, gbt_chunk_split *split);

/*
 * One aggregate per range (a GROUP BY's buckets): out[r] over [start[r],
 * end[r]) alone, each range as gbt_chunk_sums_split() and gbt_vagg_cpu()
 * would answer it by itself, on the host (s may be NULL: every range
 * scanned).  Unsure positions of all ranges go to unsure[] in range order
 * while fewer than unsure_cap are there; out[r].nunsure counts range r's.
 * Returns 0, or nonzero with a message in err.
 */
extern int	gbt_chunk_sums_each(gbt_chunk_sums *s, const gbt_agg_input *in,
								uint64_t removed_version, const int64_t *start,
								const int64_t *end, int64_t nranges,
								const uint8_t *visible, int64_t nvisible,
								gbt_agg_result *out, int64_t *unsure,
								int64_t unsure_cap, char *err, size_t errlen);

/*
 * The removed bitmap (of version to) changed from version from at the
 * positions changed[] (each that changed at least once; more do no
 * harm): their chunks marked dirty, so that the next call of that version
 * does not compare the whole bitmap (8 MB at 2^26 entries, every round
 * while writers change it) to find them.  Ignored when the sums last
 * compared the bitmap before from (or never): the next call compares.
 */
extern void gbt_chunk_sums_note(gbt_chunk_sums *s, const uint8_t *removed,
								uint64_t from, uint64_t to, const int64_t *changed,
								int64_t nchanged);

/*
 * Off the query path: up to max_chunks dirty chunks made again from in
 * (in->removed of removed_version).  Returns 1 when dirty chunks are left.
 */
extern int	gbt_chunk_sums_tidy(gbt_chunk_sums *s, const gbt_agg_input *in,
								uint64_t removed_version, int64_t max_chunks);

/*
 * Every chunk made from in (in->removed of removed_version) at once, in
 * npieces pieces of chunks run by run (one after another when run is
 * NULL), then the levels above: the sums current without a tidy().
 * Returns 1 when some chunks could not be made (left dirty for tidy()).
 */
extern int	gbt_chunk_sums_tidy_all(gbt_chunk_sums *s, const gbt_agg_input *in,
									uint64_t removed_version, gbt_piece_runner run,
									int npieces);

/*
 * Tests: the items above the chunks whose count of dirty chunks below is
 * not the true one, or which are clean but whose count, non-NULL counts or
 * INT64 sums, min or max are not their children's together (0: the levels
 * are consistent).
 */
extern int64_t gbt_chunk_sums_check(const gbt_chunk_sums *s);

#ifdef __cplusplus
}
#endif

#endif							/* GBT_CHUNKSUMS_H */
