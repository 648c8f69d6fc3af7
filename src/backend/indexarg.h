/*
 * indexarg.h
 *	  The gpubtree index named by a regclass argument of an SQL function.
 */
#ifndef GBT_INDEXARG_H
#define GBT_INDEXARG_H

#include "postgres.h"

#include "access/attnum.h"
#include "storage/lockdefs.h"
#include "utils/relcache.h"

extern Oid	gbt_index_arg_table(Oid indexoid, const char *fname,
								AttrNumber *leading_attnum);
extern Relation gbt_index_arg_open(Oid indexoid, Oid heapoid, const char *fname,
								   LOCKMODE heaplock, LOCKMODE indexlock,
								   Relation *heap);

#endif							/* GBT_INDEXARG_H */
