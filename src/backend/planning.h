/*
 * planning.h
 *	  What the planner's nodes ask of a table and of its conditions
 *	  (planning.c).
 */
#ifndef GPUBTREE_PLANNING_H
#define GPUBTREE_PLANNING_H

#include "postgres.h"

#include "nodes/pathnodes.h"

extern bool gbt_plain_table(PlannerInfo *root, RelOptInfo *rel);
extern const char *gbt_table_refusal(PlannerInfo *root, RelOptInfo *rel);
extern Var *gbt_column_of(Node *node, Index relid);
extern bool gbt_match_condition(Expr *clause, Index relid, IndexOptInfo *index,
								int *strategy, Oid *subtype, Oid *opno, bool *array,
								Expr **bound);

/* A clause or expression of rel, as EXPLAIN would show it. */
extern char *gbt_deparse_on(PlannerInfo *root, RelOptInfo *rel, Node *node);

/* Does the query read a table with a gpubtree index (rel's, when a base rel)? */
extern bool gbt_has_gpubtree_index(PlannerInfo *root, RelOptInfo *rel);

/*
 * Notes for gpubtree_why_not() from the planners of this layer (costing.c):
 * exec_why.c, a layer above, sets the hook to its gbt_plan_note() while it
 * plans a query, and clears it after; NULL means that no one is asking.
 */
typedef void (*GbtPlanNoteHook) (const char *node, Oid relid, const char *reason);
extern GbtPlanNoteHook gbt_plan_note_hook;

/* The name of the service-costed bitmap scan path in those notes. */
#define GBT_NOTE_INDEX_SCAN "gpubtree index scan"

#endif							/* GPUBTREE_PLANNING_H */
