/*
 * backend.h
 *	  Declarations shared by the backend modules of gpubtree.
 *
 * The index's durable storage is PostgreSQL's own nbtree: gpubtree_handler
 * hands out nbtree's routines, wrapping the callbacks where the GPU mirror
 * will hook in (build, insert, bulk delete, vacuum cleanup, bitmap scan,
 * cost estimate).
 */
#ifndef GPUBTREE_H
#define GPUBTREE_H

#include "postgres.h"

#include "settings.h"

/* identity.c */
struct RelationData;
struct IndexOptInfo;
struct IndexAmRoutine;
extern void gpubtree_record_routine(const struct IndexAmRoutine *routine);
extern bool gpubtree_is_gpubtree_index(struct RelationData *index);
extern bool gpubtree_is_gpubtree_indexinfo(struct IndexOptInfo *index);
extern bool gpubtree_is_gpubtree_am(Oid amoid);

/* btree_label.c */
extern void gpubtree_btree_label_init(void);
extern void gpubtree_label_as_btree(struct RelationData *index, const void *owner);
extern void gpubtree_unlabel(const void *owner);

/* explain.c */
extern void gbt_explain_init(void);

/* costing.c */
struct IndexPath;
extern bool gbt_plan_service_costing;
extern double gbt_service_index_cost(struct IndexPath *ipath);
extern void gbt_plan_init(void);

#endif							/* GPUBTREE_H */
