/*
 * capture.h
 *	  The trigger that brings deletes and updates to the mirrors (capture.c).
 */
#ifndef GPUBTREE_CAPTURE_H
#define GPUBTREE_CAPTURE_H

#include "postgres.h"

#include "nodes/nodes.h"
#include "utils/relcache.h"

extern void gbt_capture_install(Oid relid, Oid schema, bool concurrent);
extern void gbt_capture_ensure(Relation heap, Relation index);
extern bool gbt_capture_enabled(Relation heap);
extern bool gbt_capture_active(Relation heap, Relation index);
extern bool gbt_capture_active_for_build(Relation heap, Relation index);
extern bool gbt_capture_current(Relation heap, Relation index);
extern void gbt_capture_before_drop(Oid classId, Oid objectId);
extern void gbt_capture_before_utility(Node *stmt);
extern void gbt_capture_after_utility(Node *stmt);

#endif							/* GPUBTREE_CAPTURE_H */
