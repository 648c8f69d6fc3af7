/*
 * predicate.h
 *	  Predicate programs over the column values an entry holds, and the
 *	  filtered aggregate built on them: a query's conditions beyond its key
 *	  ranges (WHERE on INCLUDE columns or the key) and its aggregates' FILTER
 *	  (WHERE ...) clauses, answered by the engines.  CPU reference in
 *	  predicate_cpu.c, GPU version in predicate_gpu.cu (its kernel is
 *	  vagg_kernels.cu's, with the programs evaluated per entry).  Plain C,
 *	  usable from C, C++ and CUDA; no PostgreSQL headers; errors are returned
 *	  with a message, nothing is printed, and there is no global mutable
 *	  state.
 *
 * Programs.
 *
 * A gbt_pred is a postfix program of at most GBT_PRED_MAX_INSNS
 * instructions over one entry's values (the columns of a gbt_agg_input,
 * decoded as engine.h says: keyed columns decoded, narrow ones widened; a
 * column without an array is NULL everywhere).  It is a fixed-size struct
 * with no pointers, so that it is copied to the GPU as it is.  Each
 * instruction pushes one truth value of SQL's three (TRUE, FALSE, UNKNOWN)
 * or combines the top ones:
 *	  - GBT_PRED_TRUE, _FALSE, _UNKNOWN: push that constant.
 *	  - GBT_PRED_EQ, _NE, _LT, _LE, _GT, _GE: column col compared with the
 *		constant arg (col op arg): UNKNOWN when the value is NULL.  INT64 as
 *		int64; FLOAT8 in PostgreSQL's order (float8_cmp_internal()): all NaNs
 *		equal and above everything, +Inf included; -0 == 0.
 *	  - GBT_PRED_IS_NULL, _IS_NOT_NULL: never UNKNOWN.
 *	  - GBT_PRED_IN: col = ANY (list[arg.i .. arg.i + nlist)), a slice of
 *		the call's constant list, sorted ascending in the column type's
 *		order above (repeats allowed).  As PostgreSQL's ScalarArrayOpExpr:
 *		FALSE for an empty slice (even for a NULL value), else UNKNOWN for
 *		a NULL value, else whether an element equals the value.  The list
 *		holds no NULLs: `x IN (1, NULL)` is the planner's OR(IN, UNKNOWN).
 *	  - GBT_PRED_AND, _OR: pop two, push their Kleene AND / OR (FALSE AND
 *		UNKNOWN = FALSE, TRUE OR UNKNOWN = TRUE, otherwise UNKNOWN wins).
 *	  - GBT_PRED_NOT: the top one negated (NOT UNKNOWN = UNKNOWN).
 *	  An instruction with a column names its type too (type, a gbt_valtype),
 *	  which must be the column's: the constants are read as that type.  The
 *	  result is the one value left.  BETWEEN is AND(GE, LE), NOT IN and
 *	  <> ALL are NOT(IN).
 *
 *	  gbt_pred_check() validates a program against the columns and the list
 *	  (unknown opcodes, a stack that underflows, holds more than
 *	  GBT_PRED_MAX_DEPTH or does not end with one value, column indexes,
 *	  types, list slices within the list and sorted).  The filtered
 *	  aggregates check every program they are given; gbt_pred_run() and
 *	  gbt_pred_eval_entry() take valid ones only.  GBT_PRED_MAX_DEPTH is
 *	  checked although a program short enough cannot reach it and still end
 *	  with one value.
 *
 * Filtered aggregates (the contract of gbt_vagg_filtered_cpu() and
 * gbt_vagg_filtered_gpu()).
 *
 *	  engine.h's aggregate contract (same arguments, same removed/visible/
 *	  unsure rules, same exact result fields), with a gbt_pred_set: a WHERE
 *	  program and nfilters FILTER programs (1 <= nfilters <=
 *	  GBT_PRED_MAX_FILTERS; a NULL program is TRUE for every entry) with one
 *	  constant list for all of them, and nfilters results out[0..nfilters).
 *	  Over the ranges, each entry i that is not removed:
 *	  - is skipped entirely, visible or not, unless WHERE is TRUE for it
 *		(FALSE and UNKNOWN alike, as SQL's WHERE; its values are those of
 *		its TID's tuple, whichever snapshot sees it, so the heap would skip
 *		it too);
 *	  - else, if its block is visible, is aggregated into out[f] (count and
 *		columns, exactly as engine.h says) for each f whose FILTER program
 *		is TRUE for it;
 *	  - else it is unsure: listed in unsure[] once, not once per filter
 *		(while fewer than unsure_cap are there; each unsure position is
 *		written at most once, order unspecified), and counted in nunsure.
 *		Every out[f].nunsure holds that same total, the number of entries
 *		passing WHERE on blocks not visible (it may exceed unsure_cap).  The
 *		caller checks each against the heap and folds it into out[f] when
 *		gbt_pred_eval_entry() of filter f is TRUE for it.
 *	  With where NULL and one NULL filter, out[0] is gbt_vagg_cpu()'s
 *	  result.  The GPU may add float sums in another order (engine.h: they
 *	  may differ within its bound); every other field is identical.
 *
 *	  Arguments, checked as engine.h's (gbt_vagg_check_args()), and: preds
 *	  not NULL, its nfilters in range, list not NULL when nlist > 0, nlist
 *	  >= 0, and every program valid (gbt_pred_check()).  On error nonzero is
 *	  returned with a message in err; out[] and unsure[] are unspecified.
 */
#ifndef GBT_PREDICATE_H
#define GBT_PREDICATE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "engine.h"
#include "vagg.h"

#ifdef __cplusplus
extern "C"
{
#endif

/* the evaluator inlined on the device too, so that values stay in registers */
#ifdef __CUDACC__
#define GBT_PRED_INLINE __host__ __device__ __forceinline__
#else
#define GBT_PRED_INLINE inline
#endif

#define GBT_PRED_MAX_INSNS 48	/* instructions of one program */
#define GBT_PRED_MAX_DEPTH 32	/* its stack: bits of a uint32_t */
#define GBT_PRED_MAX_FILTERS 16 /* FILTER programs (results) of one call */

typedef enum gbt_pred_op
{
	GBT_PRED_TRUE = 0,
	GBT_PRED_FALSE,
	GBT_PRED_UNKNOWN,
	GBT_PRED_EQ,
	GBT_PRED_NE,
	GBT_PRED_LT,
	GBT_PRED_LE,
	GBT_PRED_GT,
	GBT_PRED_GE,
	GBT_PRED_IS_NULL,
	GBT_PRED_IS_NOT_NULL,
	GBT_PRED_IN,
	GBT_PRED_AND,
	GBT_PRED_OR,
	GBT_PRED_NOT,
	GBT_PRED_NOPS				/* the number of opcodes */
} gbt_pred_op;

/* SQL's truth values, as programs return them */
#define GBT_TV_FALSE 0
#define GBT_TV_TRUE 1
#define GBT_TV_UNKNOWN 2

/* a constant: the column's type says which */
typedef union gbt_pred_value
{
	int64_t		i;
	double		f;
} gbt_pred_value;

typedef struct gbt_pred_insn
{
	uint8_t		op;				/* gbt_pred_op */
	uint8_t		col;			/* comparisons, null tests, IN: the column */
	uint8_t		type;			/* comparisons, IN: its gbt_valtype */
	uint8_t		pad;
	uint32_t	nlist;			/* IN: constants in its slice of the list */
	gbt_pred_value arg;			/* comparisons: the constant; IN: arg.i is
								 * the slice's first index in the list */
} gbt_pred_insn;

typedef struct gbt_pred
{
	int32_t		ninsns;			/* 1..GBT_PRED_MAX_INSNS */
	int32_t		pad;
	gbt_pred_insn insn[GBT_PRED_MAX_INSNS];
} gbt_pred;

/* A filtered aggregate's programs (the contract above). */
typedef struct gbt_pred_set
{
	const gbt_pred *where;		/* NULL: no condition beyond the ranges */
	int			nfilters;		/* results out[0..nfilters) */
	const gbt_pred *filter[GBT_PRED_MAX_FILTERS];	/* NULL: no filter */
	const gbt_pred_value *list; /* the IN slices of every program */
	int64_t		nlist;
} gbt_pred_set;

/* -1, 0, 1: value bits a (of a column of type t) against constant b */
static GBT_PRED_INLINE int
gbt_pred_cmp(int t, uint64_t a, gbt_pred_value b)
{
	if (t == GBT_VAL_INT64)
	{
		int64_t		x = (int64_t) a;

		return x < b.i ? -1 : x > b.i;
	}
	else
	{
		double		x;

		memcpy(&x, &a, sizeof(x));
		/* float8_cmp_internal(): NaNs equal, above everything */
		if (isnan(x))
			return isnan(b.f) ? 0 : 1;
		if (isnan(b.f))
			return -1;
		return x < b.f ? -1 : x > b.f;
	}
}

/* whether list[0..n) (sorted, n > 0) holds a constant equal to value v */
static GBT_PRED_INLINE int
gbt_pred_in_list(int t, uint64_t v, const gbt_pred_value *list, uint32_t n)
{
	uint32_t	lo = 0,
				left = n;

	/* lower bound: the first element not below v */
	while (left > 0)
	{
		uint32_t	half = left / 2;

		if (gbt_pred_cmp(t, v, list[lo + half]) > 0)
		{
			lo += half + 1;
			left -= half + 1;
		}
		else
			left = half;
	}
	return lo < n && gbt_pred_cmp(t, v, list[lo]) == 0;
}

/*
 * Program p (valid: gbt_pred_check()) on one entry: vals[c] the bits of
 * column c's value (int64, or double bits; engine.h's decoding done), bit c
 * of nulls set where it is NULL.  Returns GBT_TV_*.  The stack is two
 * bitmaps, bit 0 the top: t (TRUE) and u (UNKNOWN); neither is FALSE.
 */
static GBT_PRED_INLINE int
gbt_pred_run(const gbt_pred *p, const gbt_pred_value *list,
			 const uint64_t vals[GBT_MAX_COLS], unsigned nulls)
{
	uint32_t	t = 0,
				u = 0;
	int			k;

	for (k = 0; k < p->ninsns; k++)
	{
		const gbt_pred_insn *x = &p->insn[k];
		int			op = x->op,
					isnull = 0,
					r,
					cmp;
		uint64_t	v = 0;

		if (op == GBT_PRED_AND || op == GBT_PRED_OR)
		{
			uint32_t	tt = t & 3,
						ff = ~(t | u) & 3,
						rt,
						rf;

			rt = op == GBT_PRED_AND ? tt == 3 : tt != 0;
			rf = op == GBT_PRED_AND ? ff != 0 : ff == 3;
			t = (t >> 2) << 1 | rt;
			u = (u >> 2) << 1 | (!rt && !rf);
			continue;
		}
		if (op == GBT_PRED_NOT)
		{
			/* TRUE <-> FALSE, UNKNOWN stays */
			t = (t & ~1u) | (~(t | u) & 1u);
			continue;
		}
		if (op >= GBT_PRED_EQ && op <= GBT_PRED_IN)
		{
			isnull = (nulls >> x->col) & 1;
#ifdef __CUDA_ARCH__
			/* constant indexes and masks, so that vals stays in registers */
#pragma unroll
			for (int c = 0; c < GBT_MAX_COLS; c++)
				v |= vals[c] & (0 - (uint64_t) (c == x->col));
#else
			v = vals[x->col];
#endif
		}
		switch (op)
		{
			case GBT_PRED_TRUE:
				r = GBT_TV_TRUE;
				break;
			case GBT_PRED_FALSE:
				r = GBT_TV_FALSE;
				break;
			case GBT_PRED_IS_NULL:
				r = isnull ? GBT_TV_TRUE : GBT_TV_FALSE;
				break;
			case GBT_PRED_IS_NOT_NULL:
				r = isnull ? GBT_TV_FALSE : GBT_TV_TRUE;
				break;
			case GBT_PRED_IN:
				if (x->nlist == 0)
					r = GBT_TV_FALSE;
				else if (isnull)
					r = GBT_TV_UNKNOWN;
				else
					r = gbt_pred_in_list(x->type, v, list + x->arg.i, x->nlist) ?
						GBT_TV_TRUE : GBT_TV_FALSE;
				break;
			case GBT_PRED_UNKNOWN:
				r = GBT_TV_UNKNOWN;
				break;
			default:
				if (isnull)
				{
					r = GBT_TV_UNKNOWN;
					break;
				}
				cmp = gbt_pred_cmp(x->type, v, x->arg);
				r = op == GBT_PRED_EQ ? cmp == 0 :
					op == GBT_PRED_NE ? cmp != 0 :
					op == GBT_PRED_LT ? cmp < 0 :
					op == GBT_PRED_LE ? cmp <= 0 :
					op == GBT_PRED_GT ? cmp > 0 : cmp >= 0;
				break;
		}
		t = t << 1 | (r == GBT_TV_TRUE);
		u = u << 1 | (r == GBT_TV_UNKNOWN);
	}
	return (t & 1) ? GBT_TV_TRUE : (u & 1) ? GBT_TV_UNKNOWN : GBT_TV_FALSE;
}

/*
 * predicate_cpu.c.  gbt_pred_check(): 0 when p is a valid program over
 * ncols columns of types coltype[] with list[0..nlist), else 1 with a
 * message in err (errlen bytes; err may be NULL).  gbt_pred_set_check():
 * the same for a set's arguments and every one of its programs.
 */
extern int	gbt_pred_check(const gbt_pred *p, int ncols, const gbt_valtype *coltype,
						   const gbt_pred_value *list, int64_t nlist,
						   char *err, size_t errlen);
extern int	gbt_pred_set_check(const gbt_pred_set *s, int ncols,
							   const gbt_valtype *coltype, char *err, size_t errlen);

/*
 * Program p (valid; NULL: TRUE) on entry i of in (host arrays), with the
 * list of its set: GBT_TV_*.  What the caller runs on an unsure entry.
 */
extern int	gbt_pred_eval_entry(const gbt_pred *p, const gbt_agg_input *in, int64_t i,
								const gbt_pred_value *list);

/*
 * The filtered aggregate's steps on one entry i of in (host arrays), which
 * the grouped aggregate (groupby_cpu.c) takes too.  gbt_pred_entry_class():
 * GBT_ENTRY_SKIP (removed, or WHERE not TRUE), _UNSURE (block not
 * visible) or _TAKE, with the entry's decoded values and NULL bits in
 * vals and *nulls unless it is removed.  gbt_pred_entry_add(): those
 * values added to acc[f] (count and columns) for each filter f TRUE for
 * them.  preds valid (gbt_pred_set_check()).
 */
#define GBT_ENTRY_SKIP 0
#define GBT_ENTRY_UNSURE 1
#define GBT_ENTRY_TAKE 2

extern int	gbt_pred_entry_class(const gbt_agg_input *in, const gbt_pred_set *preds,
								 int64_t i, const uint8_t *visible, int64_t nvisible,
								 uint64_t vals[GBT_MAX_COLS], unsigned *nulls);
extern void gbt_pred_entry_add(const gbt_agg_input *in, const gbt_pred_set *preds,
							   const uint64_t vals[GBT_MAX_COLS], unsigned nulls,
							   gbt_agg_result *acc);

/* The contract above over host arrays: out has preds->nfilters results. */
extern int	gbt_vagg_filtered_cpu(const gbt_agg_input *in, const int64_t *start,
								  const int64_t *end, int64_t nranges,
								  const uint8_t *visible, int64_t nvisible,
								  const gbt_pred_set *preds, gbt_agg_result *out,
								  int64_t *unsure, int64_t unsure_cap,
								  char *err, size_t errlen);

/*
 * Linked only in CUDA builds.  The contract above on the GPU, as
 * gbt_vagg_gpu() (vagg.h) takes it: in's arrays are DEVICE memory, the
 * rest (ranges, visibility map, preds with its programs and list, out,
 * unsure) HOST memory; ctx is a vagg context, shared with plain
 * aggregates.  One kernel launch evaluates the programs per entry.
 */
extern int	gbt_vagg_filtered_gpu(gbt_vagg_gpu_ctx *ctx, const gbt_agg_input *in,
								  const int64_t *start, const int64_t *end,
								  int64_t nranges, const uint8_t *visible,
								  int64_t nvisible, const gbt_pred_set *preds,
								  gbt_agg_result *out, int64_t *unsure,
								  int64_t unsure_cap, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif							/* GBT_PREDICATE_H */
