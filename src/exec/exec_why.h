/*
 * exec_why.h
 *	  Why a query is not answered through the service (exec_why.c): the
 *	  planners' notes, returned by gpubtree_why_not(query).
 */
#ifndef GPUBTREE_EXEC_WHY_H
#define GPUBTREE_EXEC_WHY_H

#include "postgres.h"

/*
 * A planner of the service's node named node did not offer it for the
 * table relid, for reason (kept only while gpubtree_why_not() plans).
 */
extern void gbt_plan_note(const char *node, Oid relid, const char *reason);

/* Is anyone asking (so that a reason worth building should be built)? */
extern bool gbt_plan_noting(void);

#endif							/* GPUBTREE_EXEC_WHY_H */
