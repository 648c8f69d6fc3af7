/*
 * groupby.h
 *	  Grouped aggregates: predicate.h's filtered aggregate with the entries
 *	  split into groups by the value of one column, so that a GROUP BY over
 *	  an INCLUDE column (or the leading key column of a composite index)
 *	  with any number of groups is one engine call.  CPU reference in
 *	  groupby_cpu.c, GPU version in groupby_gpu.cu.  Plain C, usable from C,
 *	  C++ and CUDA; no PostgreSQL headers; errors are returned with a
 *	  message, nothing is printed, and there is no global mutable state.
 *
 * Contract (gbt_vagg_grouped_cpu() and gbt_vagg_grouped_gpu()).
 *
 *	  predicate.h's filtered aggregate (same arguments, same removed,
 *	  WHERE, visible and unsure rules, same exact result fields), with the
 *	  entries it would aggregate (not removed, WHERE TRUE, block visible)
 *	  grouped by their value of column g->gcol, an INT64 column (keyed and
 *	  narrow ones decoded as engine.h says): one group per distinct value,
 *	  and one group for the NULL value (no array for the column: every
 *	  value NULL).  A group exists when at least one such entry has its
 *	  value, whatever the FILTER programs say of it.
 *	  - g->ngroups: the number of groups, the NULL group included.
 *	  - If g->ngroups <= g->cap: g->values[0..ngroups) are the groups'
 *		values, ascending as int64, the NULL group (if any) last with value
 *		0 and g->has_null set; g->out[k * nfilters + f] is filter f's result
 *		for group k (count and columns, as the filtered aggregate's out[f]
 *		over the group's entries alone), with nunsure 0.
 *	  - Else the call still returns 0, g->ngroups is more than g->cap (the
 *		true count, or any number above cap), and values/out/has_null are
 *		unspecified: the caller may ask again with more room.
 *	  - Entries on blocks that are not visible (passing WHERE, not
 *		removed) are unsure: listed in unsure[] once (while fewer than
 *		unsure_cap are there; order unspecified) and counted in
 *		g->nunsure, the total even beyond unsure_cap.  They belong to no
 *		group; the caller checks each against the heap and folds it into
 *		its group (perhaps a new one) itself.
 *	  The GPU may add float sums in another order than the CPU reference
 *	  (engine.h's bound); every other field is identical, values and their
 *	  order included.
 *
 *	  Arguments: as predicate.h's, and g not NULL, 0 <= gcol < in->ncols
 *	  with coltype INT64, cap >= 0, values and out not NULL when cap > 0.
 *	  On error nonzero is returned with a message in err; g's outputs and
 *	  unsure[] are unspecified.
 */
#ifndef GBT_GROUPBY_H
#define GBT_GROUPBY_H

#include "predicate.h"

#ifdef __cplusplus
extern "C"
{
#endif

typedef struct gbt_groups
{
	/* in */
	int			gcol;			/* the grouping column: INT64 */
	int64_t		cap;			/* room in values[] and out[] (groups) */
	int64_t    *values;			/* [cap] */
	gbt_agg_result *out;		/* [cap * nfilters] */
	/* out */
	int64_t		ngroups;		/* groups found, NULL group included */
	int			has_null;		/* the last group is the NULL group */
	int64_t		nunsure;		/* unsure entries (total) */
} gbt_groups;

/* The contract over host arrays. */
extern int	gbt_vagg_grouped_cpu(const gbt_agg_input *in, const int64_t *start,
								 const int64_t *end, int64_t nranges,
								 const uint8_t *visible, int64_t nvisible,
								 const gbt_pred_set *preds, gbt_groups *g,
								 int64_t *unsure, int64_t unsure_cap,
								 char *err, size_t errlen);

/*
 * groupby_cpu.c: the checks of g both implementations make (g not NULL,
 * gcol an INT64 column of in, cap and the arrays): 0, or 1 with a message.
 */
extern int	gbt_groups_check(const gbt_agg_input *in, const gbt_groups *g, char *err,
							 size_t errlen);

/*
 * Linked only in CUDA builds.  The contract on the GPU: in's arrays are
 * DEVICE memory, the rest HOST memory, as gbt_vagg_filtered_gpu() takes
 * them; ctx is the engine's vagg context.
 */
extern int	gbt_vagg_grouped_gpu(gbt_vagg_gpu_ctx *ctx, const gbt_agg_input *in,
								 const int64_t *start, const int64_t *end,
								 int64_t nranges, const uint8_t *visible,
								 int64_t nvisible, const gbt_pred_set *preds,
								 gbt_groups *g, int64_t *unsure,
								 int64_t unsure_cap, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif							/* GBT_GROUPBY_H */
