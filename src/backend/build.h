/*
 * build.h
 *	  Mirror builds in background workers, and mirrors refused for their size:
 *	  asking for builds (build.c), the workers (build_worker.c) and the
 *	  shared table of their jobs (build_jobs.h).
 */
#ifndef GPUBTREE_BUILDER_H
#define GPUBTREE_BUILDER_H

#include "postgres.h"

#include "nodes/nodes.h"
#include "utils/relcache.h"

#include "build_jobs.h"

/* build.c */
extern bool gbt_mirror_wanted(Relation index, Oid keytype, char *why, Size whylen);
extern bool gbt_mirror_ready(Oid indexoid, char *why, Size whylen);
extern void gbt_build_in_background(const GbtMirrorKey *key);
extern void gbt_start_queued_build(void);

/* build_create.c */
extern void gbt_mirror_after_build(Relation index, double nentries);

/* build_worker.c */
extern PGDLLEXPORT void gpubtree_builder_main(Datum arg);
extern void gbt_builders_before_utility(Node *stmt);

#endif							/* GPUBTREE_BUILDER_H */
