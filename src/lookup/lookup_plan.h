/*
 * lookup_plan.h
 *	  What the planners of the GpubtreeLookup node (lookup_plan.c) and the
 *	  GpubtreeJoin node (join_plan.c) share: which tables, indexes and
 *	  columns they may read, the service's costs, and their notes for
 *	  gpubtree_why_not().
 */
#ifndef GPUBTREE_LOOKUP_PLAN_H
#define GPUBTREE_LOOKUP_PLAN_H

#include "postgres.h"

#include "nodes/pathnodes.h"

/* The nodes' names in the notes (as their CustomName). */
#define LOOKUP_NODE "GpubtreeLookup"
#define JOIN_NODE "GpubtreeJoin"

extern void gbt_lookup_note(const char *node, PlannerInfo *root, RelOptInfo *rel,
							const char *reason);
extern bool gbt_lookup_has_index(RelOptInfo *rel);
extern const char *gbt_lookup_table_refusal(PlannerInfo *root, RelOptInfo *rel);
extern bool gbt_lookup_index_usable(const char *node, PlannerInfo *root, RelOptInfo *rel,
									IndexOptInfo *index);
extern bool gbt_lookup_needed_columns(IndexOptInfo *index, Oid tableoid, List *exprs,
									  Index relid, List **attmap, int *natts,
									  bool *covered);
extern char *gbt_lookup_columns_not_held(IndexOptInfo *index, Oid tableoid, List *exprs,
										 Index relid);
extern const char *gbt_lookup_path_label(Path *path);
extern double gbt_lookup_unsure_fraction(RelOptInfo *rel, Oid tableoid);
extern Cost gbt_lookup_service_cost(double nkeys, double rows, double unsure_frac,
									bool covered);
extern Path *gbt_lookup_cheapest_path(RelOptInfo *rel);

/* join_plan.c */
extern void gbt_join_plan_init(void);

#endif							/* GPUBTREE_LOOKUP_PLAN_H */
