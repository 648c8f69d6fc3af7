/*
 * mirror.h
 *	  One index's mirror inside the GPU service: its entries' order-preserving
 *	  64-bit keys and TIDs in (key, TID) order, held by an engine
 *	  (cuda/engine.h) on a CUDA device or on the CPU twin, plus a delta of
 *	  entries inserted and removed since that tree was built.
 */
#ifndef GPUBTREE_MIRROR_H
#define GPUBTREE_MIRROR_H

#include "postgres.h"

#include "storage/itemptr.h"

#include "entries.h"
#include "shmem.h"
#include "snapview.h"

typedef struct GbtMirror GbtMirror;

/*
 * Where a mirror's engine is built: one engine device (nparts 1), or a
 * split engine (engine.h) of nparts parts, part p on engine device
 * device[p] with a share of the entries in proportion to weight[p].  A
 * rebuild keeps its mirror's parts.
 */
typedef struct GbtMirrorParts
{
	int			nparts;
	int			device[GBT_SPLIT_MAX_PARTS];
	int64		weight[GBT_SPLIT_MAX_PARTS];
} GbtMirrorParts;

/*
 * A mirror built in two halves from entries sorted by (key, TID), on the
 * devices parts says (a CUDA device number, or -1 for the CPU twin).
 * gbt_mirror_build_begin() prepares it (its entries copied and stamped); an
 * entry flagged GBT_ENTRY_XMIN_UNKNOWN is decided by the visibility map,
 * the others are visible to every snapshot until deleted, unless xmin and
 * xmax (NULL: none) give each entry's inserter (GBT_XMIN_UNKNOWN,
 * GBT_XMIN_FROZEN or a transaction) and deleter (InvalidTransactionId:
 * none); captured says that every delete since the export reaches the
 * mirror (capture.c), else the visibility map decides for all, as it does
 * while more than one entry in GBT_UNKNOWN_ONE_IN is flagged.
 * gbt_mirror_build_engine() makes its engine, plain computation that may
 * run on a thread of its own (its pieces through run; 0, or 1 with a
 * message).  The mirror is used only after both.  Each gives a message in
 * err on failure (out of device memory, or a device asked for in a build
 * without CUDA).
 */
extern GbtMirror *gbt_mirror_build_begin(const GbtColumns *columns, const GbtEntries *entries,
										 const TransactionId *xmin, const TransactionId *xmax,
										 bool captured, const GbtMirrorParts *parts,
										 char *err, Size errlen);
extern int	gbt_mirror_build_engine(GbtMirror *m, gbt_piece_runner run, char *err, Size errlen);

/*
 * The engine of a mirror just prepared, built on a thread of its own while
 * the service answers (after delay_ms, a debug setting's hold), or at once
 * in this thread when no thread can be had.  gbt_engine_job_done() says
 * when it is over; gbt_engine_job_finish() waits for it and frees the job,
 * giving the mirror, or NULL with a message in err (NULL: none wanted) and
 * the mirror freed.
 */
typedef struct GbtEngineJob GbtEngineJob;
extern GbtEngineJob *gbt_engine_job_start(GbtMirror *m, int delay_ms);
extern bool gbt_engine_job_done(GbtEngineJob *job);
extern GbtMirror *gbt_engine_job_finish(GbtEngineJob *job, char *err, Size errlen);

/*
 * The parts of a mirror's engine (engine.h's split engine): part p on
 * engine device parts[p].device, holding entries parts[p].first onward,
 * parts[p].n of them.  An engine not split is one part.  Returns how many.
 */
extern int	gbt_mirror_parts(const GbtMirror *m, gbt_split_part *parts);
extern const GbtColumns *gbt_mirror_columns(const GbtMirror *m);
extern void gbt_mirror_free(GbtMirror *m);
extern int64 gbt_mirror_entries(const GbtMirror *m);	/* live entries */
extern int64 gbt_mirror_delta(const GbtMirror *m);	/* inserted + removed */
extern int64 gbt_mirror_bytes(const GbtMirror *m);

/* Where gbt_mirror_bytes() are. */
typedef struct GbtMirrorBytes
{
	int64		base;			/* the tree's entries, their bitmaps */
	int64		stamps;			/* stamped entries' lists */
	int64		delta;			/* the delta's runs, a merge's, the filter */
	int64		engine;			/* the engine's own on its device */
	int64		engine_host;	/* the engine's own on the host */
} GbtMirrorBytes;

extern void gbt_mirror_bytes_parts(const GbtMirror *m, GbtMirrorBytes *b);
extern int64 gbt_mirror_device_bytes(const GbtMirror *m);
extern int64 gbt_mirror_scratch_bytes(const GbtMirror *m);
extern void gbt_mirror_trim_scratch(GbtMirror *m);
extern int64 gbt_mirror_drop_idle_copies(GbtMirror *m, int64 idle_ms);
extern bool gbt_mirror_on_gpu(const GbtMirror *m);
extern int	gbt_mirror_device(const GbtMirror *m);

/*
 * Apply n change-log entries (same columns as the mirror), logged at pos[]:
 * inserts with their inserting transaction, deletions of entries by theirs.
 * An inserted entry whose TID the mirror already holds under the same key
 * is not added again: exports and the change log overlap.
 */
extern void gbt_mirror_apply(GbtMirror *m, const GbtLogEntry *le, const uint64 *pos,
							 int64 n);

/*
 * Where applying the log goes, summed since the last summary (the
 * service's DEBUG1 one): the search of the tree for the entries (on the
 * GPU, a round trip), then the inserts and the deletions.
 */
typedef struct GbtApplySteps
{
	double		insert_ms;
	double		delete_ms;
	double		find_ms;
	int64		entries;
} GbtApplySteps;

extern GbtApplySteps gbt_apply_steps;

/*
 * Settle the stamps that every snapshot agrees on, given a horizon older
 * than every snapshot's xmin, in steps of budget entries (stamps.c): true
 * when the pass is done.  gbt_mirror_stamped(): entries that may carry
 * stamps (the stamped ones of the tree and the delta).
 */
extern bool gbt_mirror_settle(GbtMirror *m, TransactionId horizon, int64 budget);
/* A delta run has no block sums yet (runsums.c): a settling pass makes them. */
extern bool gbt_mirror_lacks_sums(const GbtMirror *m);
extern void gbt_mirror_vouch(GbtMirror *m, const uint8 *visible, int64 nvisible);
extern int64 gbt_mirror_stamped(const GbtMirror *m);

/* For gpubtree_mirrors(): the tree's stamped entries; whether the stamps decide. */
extern int64 gbt_mirror_stamped_entries(const GbtMirror *m);
extern bool gbt_mirror_trusts_stamps(const GbtMirror *m);
extern bool gbt_mirror_stamps_decide_all(const GbtMirror *m);

/* Remove every entry whose TID is in dead[] (sorted).  Returns how many. */
extern int64 gbt_mirror_remove(GbtMirror *m, const ItemPointerData *dead, int64 ndead);

/* The next step of a large merge of the delta's runs; true: more left. */
extern bool gbt_mirror_merge_step(GbtMirror *m);

/* The next step of bringing the engine's chunk sums up to date; true: more left. */
extern bool gbt_mirror_tidy_step(GbtMirror *m);

/* Whether the delta has grown enough that rebuilding the tree pays. */
/* A mirror no change reached for this long is quiet (gbt_mirror_wants_merge()). */
#define GBT_REBUILD_QUIET_MS 2000
extern bool gbt_mirror_wants_merge(const GbtMirror *m, bool quiet);

/*
 * A new mirror holding m's live entries in one tree on m's device, copied
 * a step at a time while m serves, then built beside the service
 * (mirror_rebuild.c says how, and how changes made meanwhile reach it).
 */
typedef struct GbtRebuild GbtRebuild;
extern GbtRebuild *gbt_rebuild_begin(const GbtMirror *m);
extern bool gbt_rebuild_step(GbtRebuild *rb, const GbtMirror *m, int64 step);
extern bool gbt_rebuild_copying(const GbtRebuild *rb);
extern bool gbt_rebuild_built(GbtRebuild *rb, const GbtMirror *m);
extern GbtMirror *gbt_rebuild_finish(GbtRebuild *rb, char *err, Size errlen);
extern bool gbt_rebuild_busy(GbtRebuild *rb);
extern void gbt_rebuild_free(GbtRebuild *rb);
extern int64 gbt_rebuild_copied(const GbtRebuild *rb);

/*
 * For each inclusive key range [lo[i], hi[i]], the tree positions
 * [start[i], end[i]) of the entries in it.  Batched: one engine call.
 */
extern bool gbt_mirror_ranges(GbtMirror *m, const uint64 *lo, const uint64 *hi,
							  int64 nranges, int64 *start, int64 *end,
							  char *err, Size errlen);

/*
 * Live entries of one range, given its tree positions from
 * gbt_mirror_ranges(): how many, and their TIDs (the tree's, then the
 * delta's) into out.
 */
extern int64 gbt_mirror_range_count(const GbtMirror *m, uint64 lo, uint64 hi,
									int64 start, int64 end);
extern int64 gbt_mirror_range_tids(const GbtMirror *m, uint64 lo, uint64 hi,
								   int64 start, int64 end, ItemPointerData *out);

/*
 * The mirror's live entries in (key, TID) order, from the first one after
 * *after (NULL: from the first): appends at most max to out; returns how
 * many.  With a view, also each one's verdict under it into verdicts[].
 */
extern int64 gbt_mirror_read(const GbtMirror *m, const GbtDumpCursor *after, int64 max,
							 GbtEntries *out, GbtSnapView *view, uint8 *verdicts);

/*
 * Where an aggregate's time went: the engine, then the walk over the stamped
 * tree entries and the delta's (mirror_walk.h).
 */
typedef struct GbtAggSteps
{
	double		tree_ms;
	double		positions_ms;	/* of tree_ms: finding the ranges' positions */
	double		walk_ms;		/* the stamped and delta entries */
	double		later_ms;		/* of walk_ms: after the threads */
	double		plan_ms;		/* of walk_ms: its plan (the calling thread's) */
	int64		nstamped;		/* stamped entries in the ranges */
	int64		ndelta;			/* delta entries in the ranges */
	int64		nsingly;		/* of those, decided one by one (not by sums) */
	int64		nlater;			/* entries the threads left undecided */
	int			nthreads;		/* the walk's, at most */
	double		batch_ms[GBT_BATCH_STEPS];	/* of tree_ms, a batch's steps
											 * (engine.h) */
} GbtAggSteps;

/*
 * Sort keys[0..n) and drop repeats, in place, on the mirror's engine (for
 * the GPU's, the keys then stay on the device for the aggregate's search);
 * *nout: how many are left.  With map, map[i] is where the key given as
 * keys[i] went.
 */
extern bool gbt_mirror_sort_unique(GbtMirror *m, uint64 *keys, int64 n, uint32 *map,
								   int64 *nout, char *err, Size errlen);

extern bool gbt_mirror_aggregate(GbtMirror *m, const uint64 *lo, const uint64 *hi,
								 int64 nranges, GbtSnapView *view, uint64 log_bound,
								 gbt_agg_result *out, GbtEntries *unsure, int64 unsure_cap,
								 uint8 *verdicts, GbtAggSteps *steps, char *err, Size errlen);

/*
 * gbt_mirror_aggregate() in three steps, so that the tree's part of the
 * aggregates of mirrors on different devices runs at once (requests.c's
 * lanes): gbt_tree_pass_init() (buffers; PostgreSQL's memory), then
 * gbt_tree_pass_run() (with sort, the points sorted and made unique first;
 * the ranges' positions; the engine's aggregate of the plain entries, or
 * with verdicts their listing), which touches no PostgreSQL state and may
 * run in any thread, then gbt_tree_pass_finish() (the unsure entries
 * copied, the stamped and delta entries walked; frees the buffers).
 */
typedef struct GbtTreePass
{
	GbtMirror  *m;
	uint64	   *lo;				/* sorted in place with sort */
	const uint64 *hi;			/* == lo for points */
	int64		nranges;		/* after the sort: the unique points */
	bool		sort;
	uint32	   *map;			/* with sort: where each key given went */
	bool		trusted;		/* the mirror's stamps decide (view's and its) */
	const uint8 *visible;
	int64		nvisible;
	gbt_agg_result out;			/* the plain entries' */
	GbtEntries *list;			/* with verdicts: the listing's */
	int64		list_cap;
	uint8	   *verdicts;
	int64	   *start;
	int64	   *end;
	int64	   *upos;			/* without verdicts: the engine's unsure */
	int64		room;
	double		sort_ms;
	double		positions_ms;
	double		tree_ms;		/* positions and the plain entries */
	bool		ok;				/* else err says why */
	char		err[GBT_ERRMSG_LEN];
} GbtTreePass;

extern void gbt_tree_pass_init(GbtTreePass *p, GbtMirror *m, uint64 *lo, const uint64 *hi,
							   int64 nranges, bool sort, uint32 *map, bool stamps,
							   const uint8 *visible, int64 nvisible, GbtEntries *unsure,
							   int64 unsure_cap, uint8 *verdicts);
extern void gbt_tree_pass_run(void *pass);
extern bool gbt_tree_pass_finish(GbtTreePass *p, GbtSnapView *view, uint64 log_bound,
								 gbt_agg_result *out, GbtEntries *unsure, GbtAggSteps *steps,
								 char *err, Size errlen);

/*
 * Many gbt_mirror_aggregate() calls at once (mirror_batch.c), of any
 * mirrors: each item's answer as that call's, without verdicts; the
 * engines' parts of all in one call per engine kind (engine.h's
 * aggregate_batch), the host's share of each in several threads.
 */
typedef struct GbtMirrorAggItem
{
	GbtMirror  *m;
	const uint64 *lo;			/* sorted, disjoint key ranges */
	const uint64 *hi;
	int64		nranges;
	GbtSnapView *view;
	uint64		log_bound;
	gbt_agg_result *out;		/* zeroed by the call */
	GbtEntries *unsure;
	int64		unsure_cap;
	GbtAggSteps steps;
	bool		ok;				/* else err says why */
	char		err[GBT_ERRMSG_LEN];
} GbtMirrorAggItem;

extern void gbt_mirror_aggregate_batch(GbtMirrorAggItem *items, int n);

/* gbt_mirror_aggregate() with one result a range: outs[r] (a GROUP BY's buckets). */
extern bool gbt_mirror_aggregate_each(GbtMirror *m, const uint64 *lo, const uint64 *hi,
									  int64 nranges, GbtSnapView *view, uint64 log_bound,
									  gbt_agg_result *outs, GbtEntries *unsure,
									  int64 unsure_cap, GbtAggSteps *steps, char *err,
									  Size errlen);

/*
 * The filtered aggregate (predicate.h): outs[f], or with grouped outs[r *
 * nfilters + f]; *nunsure counts the unsure entries WHERE keeps.
 */
extern bool gbt_mirror_aggregate_filtered(GbtMirror *m, const uint64 *lo, const uint64 *hi,
										  int64 nranges, GbtSnapView *view,
										  uint64 log_bound, const gbt_pred_set *preds,
										  bool grouped, gbt_agg_result *outs,
										  GbtEntries *unsure, int64 unsure_cap,
										  int64 *nunsure, GbtAggSteps *steps, char *err,
										  Size errlen);

/*
 * The grouped aggregate (groupby.h) of the entries in the key ranges that
 * the query's snapshot sees: g's outputs as its contract says, over the
 * tree's entries, the stamped ones and the delta's; the unsure ones WHERE
 * keeps go to unsure (*nunsure counts them all) (mirror_group.c).
 */
struct gbt_groups;
extern bool gbt_mirror_aggregate_grouped(GbtMirror *m, const uint64 *lo, const uint64 *hi,
										 int64 nranges, GbtSnapView *view,
										 uint64 log_bound, const gbt_pred_set *preds,
										 struct gbt_groups *g, GbtEntries *unsure,
										 int64 unsure_cap, int64 *nunsure,
										 GbtAggSteps *steps, char *err, Size errlen);

/* The smallest and largest key of its entries (dead ones too); false: none. */
extern bool gbt_mirror_key_extent(const GbtMirror *m, uint64 *min, uint64 *max);

/*
 * Whether this process can use a GPU, CUDA device 0 (with its name and
 * memory), with the reason when it cannot.
 */
extern bool gbt_engine_gpu_usable(int device, char *name, Size namelen, int64 *memory,
								  char *why, Size whylen);

#endif							/* GPUBTREE_MIRROR_H */
