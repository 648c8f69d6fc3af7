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

/* What a call reads of the index's table (gbt_index_arg_table()). */
typedef enum GbtIndexArgReads
{
	GBT_READS_INDEX,			/* every column the index holds */
	GBT_READS_KEY				/* the leading key column, and a named one */
} GbtIndexArgReads;

extern Oid	gbt_index_arg_table(Oid indexoid, const char *fname,
								GbtIndexArgReads reads, const char *colname,
								AttrNumber *leading_attnum);
extern Relation gbt_index_arg_open(Oid indexoid, Oid heapoid, const char *fname,
								   LOCKMODE heaplock, LOCKMODE indexlock,
								   Relation *heap);

#endif							/* GBT_INDEXARG_H */
