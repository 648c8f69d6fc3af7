/*
 * exec_request.h
 *	  A request to the service, exact under MVCC (exec_request.c): the
 *	  aggregate or the rows of key ranges that a snapshot sees.  Used by
 *	  every plan node that asks the service (src/exec/exec_node.h), by their
 *	  planners for its costs, and by the gpubtree_count()/_sum()/...
 *	  functions (agg_funcs.c).
 */
#ifndef GPUBTREE_EXEC_REQUEST_H
#define GPUBTREE_EXEC_REQUEST_H

#include "postgres.h"

#include "portability/instr_time.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

#include "protocol.h"

/* One request's answer, and what EXPLAIN tells of it (exec_explain.c). */
typedef struct GbtAggAnswer
{
	GbtAggResult r;				/* over every visible entry in the ranges */
	GbtColumns	columns;		/* the mirror's columns */
	bool		on_gpu;
	double		device_ms;		/* the service's time on the aggregate */
	double		total_ms;		/* here, round trips and heap checks included */
	int64		blocks;			/* heap blocks, and how many all-visible */
	int64		visible_blocks;
	bool		map_read;		/* the visibility map was read and sent (not
								 * when the stamps decide alone) */
	int64		nkeys;			/* ranges looked up (of unsorted keys: distinct) */
	int64		entries;		/* visible entries answered (aggregated or listed) */
	int64		checked;		/* entries checked against the heap */
	int64		checked_visible;	/* of those, visible (part of entries) */
} GbtAggAnswer;

/* Most entries on pages that are not all-visible checked in the heap. */
#define GBT_MAX_UNSURE (1 << 20)

/* Planner cost of checking one such entry in the heap. */
extern double gbt_agg_unsure_cost(void);

/*
 * Aggregate the entries of the index in the inclusive key ranges (sorted,
 * disjoint; or, !sorted, points lo == hi in any order with repeats, which
 * the service sorts and counts once each) that the snapshot sees.
 * answer->nkeys: the ranges looked up.  Returns false, with the reason in
 * *why, when the service cannot answer exactly, or would need to check more
 * than max_unsure entries in the heap; the caller then computes the
 * aggregate another way.  no_extremes: the caller reads no min or max of
 * answer->r (they may be wrong then), which lets the service add a range's
 * ends by sums.
 */
extern bool gbt_aggregate(Relation heap, Relation index, const uint64 *lo,
						  const uint64 *hi, int64 nranges, bool sorted,
						  Snapshot snapshot, int64 max_unsure, bool no_extremes,
						  GbtAggAnswer *answer, const char **why);

/*
 * The extent of the keys of the index's mirror now, dead entries' too: every
 * key a snapshot taken before this call can see lies in [key_min, key_max]
 * (none when !*has_keys).  False, with the reason in *why, when the service
 * has no mirror to ask.
 */
extern bool gbt_key_extent(Relation index, bool *has_keys, uint64 *key_min,
						   uint64 *key_max, const char **why);

/*
 * An aggregate asked for per range (a GROUP BY's buckets: sorted, disjoint
 * ranges, one or more a group), or per FILTER program (predicate.h: with a
 * WHERE program on the entries too), or both: the ranges, the programs,
 * and the answer, results[(grouped ? r : 0) * nfilters + f].
 */
typedef struct GbtAggSlots
{
	uint64	   *lo;
	uint64	   *hi;
	int64		nranges;
	bool		grouped;
	const gbt_pred_set *preds;	/* NULL: none (then one result a range) */
	GbtAggResult *results;
	bool		no_extremes;	/* no min or max of results read (as for
								 * gbt_aggregate()) */
	/*
	 * Or, by_value (with preds), one group per value of mirror column
	 * group_col (groupby.h): ngroups of them, ascending, the NULL one last,
	 * results[g * nfilters + f]; group_cap the groups to make room for
	 * first (more are asked for again, up to GBT_MAX_COLUMN_GROUPS).
	 */
	bool		by_value;
	int			group_col;
	int64		group_cap;
	int64		ngroups;
	int64	   *group_values;
	bool	   *group_nulls;
	/* entries of groups the service did not send, until gbt_slots_finish() */
	GbtEntries	pending;
} GbtAggSlots;

/* The most groups of a column's values one request makes. */
#define GBT_MAX_COLUMN_GROUPS ((int64) 1 << 20)

/*
 * gbt_aggregate() of slots' ranges (sorted), each range's or filter's or
 * group's aggregate apart in slots->results (answer->r: the entries of
 * filter 0).  With by_value, gbt_slots_finish() must follow.
 */
extern bool gbt_aggregate_slots(Relation heap, Relation index, GbtAggSlots *slots,
								Snapshot snapshot, int64 max_unsure,
								GbtAggAnswer *answer, const char **why);

/*
 * A visible entry into slots (WHERE already TRUE for it): into its range's
 * or value's group, each filter's result whose program is TRUE for it.
 */
extern void gbt_slots_add(GbtAggSlots *slots, const GbtColumns *columns, uint64 key,
						  const int64 *vals, uint8 nulls);

/*
 * By value: make the groups of the entries no group held yet, in order;
 * false, with *why, when they are more than GBT_MAX_COLUMN_GROUPS.
 */
extern bool gbt_slots_finish(GbtAggSlots *slots, const GbtColumns *columns,
							 const char **why);

/* Most rows one lookup takes from the service. */
#define GBT_MAX_LOOKUP_ROWS ((int64) 1 << 24)

/*
 * The entries of the index in the inclusive key ranges (sorted, disjoint)
 * that the snapshot sees, into *rows (allocated here; keys, TIDs and the
 * mirror's column values, in no particular order).  expected_rows sizes the
 * first request's room (at least a row a range; more rows than that, and
 * the service says how many for a second request).  Returns false, with
 * the reason in *why, when the service cannot answer.
 */
extern bool gbt_lookup(Relation heap, Relation index, const uint64 *lo,
					   const uint64 *hi, int64 nranges, bool sorted, Snapshot snapshot,
					   double expected_rows, GbtEntries *rows, GbtAggAnswer *answer,
					   const char **why);

/*
 * The same for n keys in any order, with repeats, sorted by the service:
 * on success keys[0..answer->nkeys) holds them sorted and distinct, and
 * map[i] the place there of the key that came as keys[i].  On failure keys
 * are as they came.
 */
extern bool gbt_lookup_mapped(Relation heap, Relation index, uint64 *keys, int64 n,
							  uint32 *map, Snapshot snapshot, GbtEntries *rows,
							  GbtAggAnswer *answer, const char **why);

/* Milliseconds since t0: the times EXPLAIN shows. */
extern double gbt_ms_since(instr_time t0);

#endif							/* GPUBTREE_EXEC_REQUEST_H */
