/*
 * agg_group.h
 *	  GROUP BY a bucket of the key (agg_group.c): which GROUP BY expressions
 *	  are buckets, each a key range, and the ranges of a query's buckets.
 */
#ifndef GPUBTREE_AGG_GROUP_H
#define GPUBTREE_AGG_GROUP_H

#include "postgres.h"

#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "nodes/primnodes.h"

/*
 * The most key ranges one GROUP BY asks the service for: a bucket is one
 * range (more where a time zone changes its offset), and buckets with no
 * rows between the keys' ends are asked for too.  Past this, the plan
 * below answers.
 */
#define GBT_MAX_GROUP_RANGES (1 << 16)

/*
 * Finding buckets calls their function; a call is priced as ten operators,
 * and the calls a query may make are what the plan below costs (at least
 * GBT_MIN_BUCKET_CALLS): keys that make a bucket each of a float's every
 * value are not bisected for seconds before the plan below answers.
 */
#define GBT_BUCKET_CALL_COST (10 * cpu_operator_cost)
#define GBT_MIN_BUCKET_CALLS 10000

/*
 * Is expr, a GROUP BY expression, a bucket of the key (column keyattno of
 * relation relid, of type keytype): the key itself, or monotone functions
 * of it whose other arguments are constants or parameters, so that each
 * bucket's keys are one key range?  If not, *why says why.
 */
extern bool gbt_group_is_bucket(Node *expr, Index relid, AttrNumber keyattno, Oid keytype,
								const char **why);

/*
 * How many buckets GROUP BY expr (a bucket of the key, column keyattno of
 * rel, of type keytype) asks for between the smallest and largest key, from
 * the column's statistics and the expression's structure
 * (agg_group_estimate.c); within [1, fallback], estimate_num_groups()'s
 * answer, and fallback itself where the expression does not bound it.
 */
extern double gbt_bucket_count_estimate(PlannerInfo *root, RelOptInfo *rel, Expr *expr,
										AttrNumber keyattno, Oid keytype, double fallback);

/* A query's buckets: what evaluates them, and their key ranges. */
typedef struct GbtBuckets
{
	Oid			keytype;
	Oid			valtype;		/* the bucket's type */
	int16		vallen;
	bool		valbyval;
	bool		time_zones;		/* timestamptz key: split where offsets change */
	Expr	   *source;			/* the GROUP BY expression as planned */
	List	   *zones;			/* names of its explicit time zones */
	ExprState  *expr;			/* the bucket, of the key in slot's column 1 */
	ExprContext *econtext;
	TupleTableSlot *slot;
	FmgrInfo	eq;				/* the GROUP BY's equality */
	FmgrInfo	hash;			/* and its hash function */
	Oid			collation;
	int64		evaluations;
	int64		max_evaluations;	/* past this, the plan below is cheaper */
	bool		too_costly;

	/* the ranges, sorted and disjoint, and each one's bucket */
	uint64	   *lo;
	uint64	   *hi;
	Datum	   *values;
	bool	   *nulls;
	int64		nranges;
} GbtBuckets;

/*
 * Ready to evaluate expr (the GROUP BY expression as planned, its key Var
 * any Var) with the equality operator eqop, in estate.
 */
extern void gbt_buckets_init(GbtBuckets *b, Expr *expr, Oid keytype, Oid eqop,
							 EState *estate);

/*
 * fn(arg, why) in a subtransaction: an error it raises becomes a false
 * return with *why "FAILED: <the error's message>" (the GROUP BY
 * expression's error on a value no visible row may have: the plan below
 * raises it if one does).  Not in a parallel operation.
 */
extern bool gbt_run_in_subxact(bool (*fn) (void *arg, const char **why), void *arg,
							   const char *failed, const char **why);

/*
 * The buckets' key ranges within the query's key ranges [qlo[i], qhi[i]]
 * (sorted, disjoint) and the extent [key_min, key_max] of the keys there
 * are.  In a subtransaction: an error of the expression (a bad argument,
 * an overflow at a key no row may have) leaves the query to the plan
 * below, which raises it if a row does have that key.  False, with *why,
 * when the plan below must answer.
 */
extern bool gbt_buckets_make(GbtBuckets *b, const uint64 *qlo, const uint64 *qhi,
							 int64 nq, uint64 key_min, uint64 key_max, const char **why);

/* The bucket of one key value (isnull: a NULL key). */
extern Datum gbt_bucket_of(GbtBuckets *b, Datum key, bool isnull, bool *valnull);

/*
 * The groups of the ranges: group_of[r] for range r (ranges of equal
 * buckets, such as a day cut where the offset changed, are one group);
 * returns how many.
 */
extern int64 gbt_buckets_groups(GbtBuckets *b, int64 *group_of);

/* Are two buckets' values the same group (the GROUP BY's equality)? */
extern bool gbt_bucket_equal(GbtBuckets *b, Datum x, Datum y);

#endif							/* GPUBTREE_AGG_GROUP_H */
