/*
 * identity.c
 *	  Is this index, planner index or access method gpubtree's?
 *
 * Judged by the routines gpubtree hands out, not by relam, which
 * btree_label.c labels as btree for the length of a build.  The handler
 * records its routines each time it is called; every relcache entry and
 * every planner IndexOptInfo of an index got its routines from such a call
 * in this process, so the record is there before anything can ask.
 */
#include "postgres.h"

#include "access/amapi.h"
#include "nodes/pathnodes.h"
#include "utils/rel.h"

#include "backend.h"

static aminsert_function gbt_aminsert = NULL;
static amcostestimate_function gbt_amcostestimate = NULL;

void
gpubtree_record_routine(const IndexAmRoutine *routine)
{
	gbt_aminsert = routine->aminsert;
	gbt_amcostestimate = routine->amcostestimate;
}

bool
gpubtree_is_gpubtree_index(Relation index)
{
	return index->rd_indam != NULL && gbt_aminsert != NULL &&
		index->rd_indam->aminsert == gbt_aminsert;
}

bool
gpubtree_is_gpubtree_indexinfo(IndexOptInfo *index)
{
	return gbt_amcostestimate != NULL &&
		index->amcostestimate == (void (*) ()) gbt_amcostestimate;
}

/* Does access method amoid hand out gpubtree's routines? */
bool
gpubtree_is_gpubtree_am(Oid amoid)
{
	IndexAmRoutine *am = GetIndexAmRoutineByAmId(amoid, true);
	bool		result = am != NULL && gbt_aminsert != NULL &&
		am->aminsert == gbt_aminsert;

	if (am)
		pfree(am);
	return result;
}
