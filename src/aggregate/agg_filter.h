/*
 * agg_filter.h
 *	  Conditions on the index's columns beyond the key's ranges (WHERE on an
 *	  INCLUDE column, an aggregate's FILTER) as the engines' predicate
 *	  programs (cuda/predicate.h), planned and then built (agg_filter.c).
 */
#ifndef GPUBTREE_AGG_FILTER_H
#define GPUBTREE_AGG_FILTER_H

#include "postgres.h"

#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"

#include "predicate.h"

/*
 * A planned program: a List of instructions, each a List (op, column, type,
 * argument), the argument an Expr (a constant or parameter), a List of them
 * (IN), or NULL.  Returns NIL, with *why, when clause cannot be one (a
 * column the index does not hold, an operator of no btree family of the
 * column, types of two families, too long).  clause: one expression, or
 * an implicit-AND List.
 */
extern List *gbt_filter_plan(Node *clause, Index relid, IndexOptInfo *index,
							 const char **why);

/*
 * Is node made of constants and the query's parameters only (no column,
 * subquery, aggregate or value of the running plan)?
 */
extern bool gbt_only_constants(Node *node);

/* The constant list of the programs of one request. */
typedef struct GbtPredList
{
	gbt_pred_value *values;
	int64		n;
	int64		cap;
} GbtPredList;

/*
 * The program of a planned one, its constants evaluated in econtext (IN
 * lists appended to list, sorted).  False, with *why, when a constant is
 * NULL where the program cannot say so, or the list grew too long.
 */
extern bool gbt_filter_build(List *planned, ExprContext *econtext, gbt_pred *out,
							 GbtPredList *list, const char **why);

#endif							/* GPUBTREE_AGG_FILTER_H */
