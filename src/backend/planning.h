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
extern Var *gbt_column_of(Node *node, Index relid);
extern bool gbt_match_condition(Expr *clause, Index relid, IndexOptInfo *index,
								int *strategy, Oid *subtype, Oid *opno, bool *array,
								Expr **bound);

/* A clause or expression of rel, as EXPLAIN would show it. */
extern char *gbt_deparse_on(PlannerInfo *root, RelOptInfo *rel, Node *node);

/* Does the query read a table with a gpubtree index (rel's, when a base rel)? */
extern bool gbt_has_gpubtree_index(PlannerInfo *root, RelOptInfo *rel);

#endif							/* GPUBTREE_PLANNING_H */
