/*
 * agg_filter.c
 *	  Conditions on the index's columns beyond the key's ranges as predicate
 *	  programs (cuda/predicate.h): a WHERE on an INCLUDE column (or on the
 *	  key, past its ranges), an aggregate's FILTER (WHERE ...).
 *
 * The planner (gbt_filter_plan()) turns a condition into a postfix list of
 * instructions whose constants are still expressions (constants or
 * parameters); at run time gbt_filter_build() evaluates them and writes
 * the engines' program.  The forms, with SQL's three-valued logic:
 *   column op constant (either side), op a comparison of the btree family
 *	   of the column's type, <> as NOT of its =;
 *   column = ANY (array), column <> ALL (array) (IN a sorted list, OR
 *	   UNKNOWN where the array holds a NULL);
 *   column IS [NOT] NULL; AND, OR, NOT of those; a boolean constant.
 * The constant's type must compare in the mirror's form of the column as
 * PostgreSQL compares it (keytypes.c: gbt_comparable()): integers with
 * integers, floats with floats, a date or time type with itself.
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/array.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "agg_filter.h"
#include "keytypes.h"
#include "planning.h"

/* The most constants of IN lists of one request. */
#define GBT_PRED_LIST_MAX (1 << 20)

/* An instruction while planned: (op, column, type, argument, argument's type). */
static List *
insn(int op, int col, int type, Node *arg, Oid argtype)
{
	return list_make5(makeInteger(op), makeInteger(col), makeInteger(type), arg,
					  makeInteger((int) argtype));
}

/* The engines' type of a column of type typid (held: keytypes.c). */
static int
val_type(Oid typid)
{
	return gbt_column_type(typid) == GBT_COL_FLOAT8 ? GBT_VAL_FLOAT8 : GBT_VAL_INT64;
}

/* Anything but constants and parameters of the query? */
static bool
not_constant(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var) || IsA(node, SubLink) || IsA(node, SubPlan) ||
		IsA(node, Aggref) || IsA(node, WindowFunc) || IsA(node, PlaceHolderVar) ||
		(IsA(node, Param) && ((Param *) node)->paramkind != PARAM_EXTERN))
		return true;
	return expression_tree_walker(node, not_constant, context);
}

bool
gbt_only_constants(Node *node)
{
	return !not_constant(node, NULL);
}

static bool
pseudo_constant(Node *node)
{
	return gbt_only_constants(node) && !contain_volatile_functions(node);
}

/* The index column (< GBT_MAX_COLS) the node reads, with its base type; -1: none. */
static int
index_column(Node *node, Index relid, IndexOptInfo *index, Oid *coltype)
{
	Var		   *var = gbt_column_of(node, relid);
	int			c;

	if (var == NULL)
		return -1;
	for (c = 0; c < Min(index->ncolumns, GBT_MAX_COLS); c++)
	{
		if (index->indexkeys[c] != var->varattno)
			continue;
		*coltype = getBaseType(var->vartype);
		if (gbt_column_type(*coltype) == GBT_COL_NONE)
			return -1;
		return c;
	}
	return -1;
}

/*
 * The comparison opno means between a column of type coltype and an
 * argument of type argtype (the column on the left): GBT_PRED_*, or -1.
 */
static int
comparison_of(Oid opno, Oid coltype, Oid argtype)
{
	Oid			opclass = GetDefaultOpClass(coltype, BTREE_AM_OID);
	Oid			family;
	int			strategy;
	Oid			negator;

	if (!OidIsValid(opclass) || !gbt_comparable(argtype, coltype))
		return -1;
	family = get_opclass_family(opclass);
	strategy = get_op_opfamily_strategy(opno, family);
	switch (strategy)
	{
		case BTLessStrategyNumber:
			return GBT_PRED_LT;
		case BTLessEqualStrategyNumber:
			return GBT_PRED_LE;
		case BTEqualStrategyNumber:
			return GBT_PRED_EQ;
		case BTGreaterEqualStrategyNumber:
			return GBT_PRED_GE;
		case BTGreaterStrategyNumber:
			return GBT_PRED_GT;
	}
	negator = get_negator(opno);
	if (OidIsValid(negator) &&
		get_op_opfamily_strategy(negator, family) == BTEqualStrategyNumber)
		return GBT_PRED_NE;
	return -1;
}

static bool
plan_node(Node *node, Index relid, IndexOptInfo *index, List **prog, const char **why);

/* The operands of AND or OR, each after the first followed by op. */
static bool
plan_chain(List *args, int op, Index relid, IndexOptInfo *index, List **prog,
		   const char **why)
{
	ListCell   *lc;

	foreach(lc, args)
	{
		if (!plan_node(lfirst(lc), relid, index, prog, why))
			return false;
		if (lc != list_head(args))
			*prog = lappend(*prog, insn(op, 0, 0, NULL, InvalidOid));
	}
	return true;
}

static bool
plan_node(Node *node, Index relid, IndexOptInfo *index, List **prog, const char **why)
{
	Oid			coltype;
	int			col;

	if (IsA(node, List))
		return plan_chain((List *) node, GBT_PRED_AND, relid, index, prog, why);
	if (IsA(node, BoolExpr))
	{
		BoolExpr   *b = (BoolExpr *) node;

		if (b->boolop == NOT_EXPR)
		{
			if (!plan_node(linitial(b->args), relid, index, prog, why))
				return false;
			*prog = lappend(*prog, insn(GBT_PRED_NOT, 0, 0, NULL, InvalidOid));
			return true;
		}
		return plan_chain(b->args, b->boolop == AND_EXPR ? GBT_PRED_AND : GBT_PRED_OR,
						  relid, index, prog, why);
	}
	if (IsA(node, Const) && ((Const *) node)->consttype == BOOLOID)
	{
		Const	   *c = (Const *) node;

		*prog = lappend(*prog, insn(c->constisnull ? GBT_PRED_UNKNOWN :
									DatumGetBool(c->constvalue) ? GBT_PRED_TRUE :
									GBT_PRED_FALSE, 0, 0, NULL, InvalidOid));
		return true;
	}
	if (IsA(node, NullTest) && !((NullTest *) node)->argisrow &&
		(col = index_column((Node *) ((NullTest *) node)->arg, relid, index, &coltype)) >= 0)
	{
		*prog = lappend(*prog, insn(((NullTest *) node)->nulltesttype == IS_NULL ?
									GBT_PRED_IS_NULL : GBT_PRED_IS_NOT_NULL,
									col, 0, NULL, InvalidOid));
		return true;
	}
	if (IsA(node, OpExpr) && list_length(((OpExpr *) node)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) node;
		Node	   *left = linitial(op->args);
		Node	   *right = lsecond(op->args);
		bool		swapped = false;
		int			cmp;

		if ((col = index_column(left, relid, index, &coltype)) < 0)
		{
			Node	   *t = left;

			left = right;
			right = t;
			swapped = true;
			col = index_column(left, relid, index, &coltype);
		}
		if (col >= 0 && pseudo_constant(right))
		{
			Oid			argtype = getBaseType(exprType(right));

			cmp = comparison_of(swapped ? get_commutator(op->opno) : op->opno,
								coltype, argtype);
			if (cmp >= 0)
			{
				*prog = lappend(*prog, insn(cmp, col, val_type(coltype),
											copyObject(right), argtype));
				return true;
			}
		}
	}
	if (IsA(node, ScalarArrayOpExpr))
	{
		ScalarArrayOpExpr *sa = (ScalarArrayOpExpr *) node;
		Node	   *array = lsecond(sa->args);

		if ((col = index_column(linitial(sa->args), relid, index, &coltype)) >= 0 &&
			pseudo_constant(array))
		{
			Oid			elemtype = getBaseType(get_element_type(exprType(array)));
			int			cmp = comparison_of(sa->opno, coltype, elemtype);

			/* = ANY: IN OR (UNKNOWN for a NULL element); <> ALL: NOT of that */
			if ((sa->useOr && cmp == GBT_PRED_EQ) || (!sa->useOr && cmp == GBT_PRED_NE))
			{
				*prog = lappend(*prog, insn(GBT_PRED_IN, col, val_type(coltype),
											copyObject(array), elemtype));
				*prog = lappend(*prog, insn(GBT_PRED_UNKNOWN, 0, 0, NULL, InvalidOid));
				*prog = lappend(*prog, insn(GBT_PRED_OR, 0, 0, NULL, InvalidOid));
				if (!sa->useOr)
					*prog = lappend(*prog, insn(GBT_PRED_NOT, 0, 0, NULL, InvalidOid));
				return true;
			}
		}
	}
	*why = "a condition other than comparisons, IN, IS NULL, AND, OR and NOT of columns the index holds with constants";
	return false;
}

List *
gbt_filter_plan(Node *clause, Index relid, IndexOptInfo *index, const char **why)
{
	List	   *prog = NIL;

	if (!plan_node(clause, relid, index, &prog, why))
		return NIL;
	if (list_length(prog) > GBT_PRED_MAX_INSNS)
	{
		*why = "a condition too long for a predicate program";
		return NIL;
	}
	return prog;
}

/* A value of type typid as the mirror holds it (int64, or a float8's bits). */
static gbt_pred_value
held_value(Datum d, Oid typid)
{
	gbt_pred_value v;

	switch (typid)
	{
		case INT2OID:
			v.i = DatumGetInt16(d);
			break;
		case INT4OID:
			v.i = DatumGetInt32(d);
			break;
		case DATEOID:
			v.i = DatumGetDateADT(d);
			break;
		case FLOAT4OID:
			v.f = DatumGetFloat4(d);
			break;
		case FLOAT8OID:
			v.f = DatumGetFloat8(d);
			break;
		default:				/* int8, timestamp, timestamptz, time */
			v.i = DatumGetInt64(d);
			break;
	}
	return v;
}

static int
cmp_int64(const void *a, const void *b)
{
	int64		x = ((const gbt_pred_value *) a)->i;
	int64		y = ((const gbt_pred_value *) b)->i;

	return x < y ? -1 : x > y;
}

/* PostgreSQL's float order: NaNs equal, above everything. */
static int
cmp_float8(const void *a, const void *b)
{
	double		x = ((const gbt_pred_value *) a)->f;
	double		y = ((const gbt_pred_value *) b)->f;

	if (isnan(x))
		return isnan(y) ? 0 : 1;
	if (isnan(y))
		return -1;
	return x < y ? -1 : x > y;
}

/* IN: the array's elements appended to list, sorted; *has_null if one is NULL. */
static bool
build_in(Datum array, Oid elemtype, int type, gbt_pred_insn *x, GbtPredList *list,
		 bool *has_null, const char **why)
{
	ArrayType  *arr = DatumGetArrayTypeP(array);
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			i;

	get_typlenbyvalalign(ARR_ELEMTYPE(arr), &typlen, &typbyval, &typalign);
	deconstruct_array(arr, ARR_ELEMTYPE(arr), typlen, typbyval, typalign, &elems, &nulls, &n);
	if (list->n + n > GBT_PRED_LIST_MAX)
	{
		*why = "IN lists longer than the service takes";
		return false;
	}
	if (list->n + n > list->cap)
	{
		list->cap = Max(list->n + n, 2 * list->cap);
		list->values = list->values == NULL ?
			palloc(sizeof(gbt_pred_value) * list->cap) :
			repalloc(list->values, sizeof(gbt_pred_value) * list->cap);
	}
	x->arg.i = list->n;
	x->nlist = 0;
	*has_null = false;
	for (i = 0; i < n; i++)
	{
		if (nulls[i])
			*has_null = true;
		else
			list->values[list->n + x->nlist++] = held_value(elems[i], elemtype);
	}
	qsort(list->values + list->n, x->nlist, sizeof(gbt_pred_value),
		  type == GBT_VAL_INT64 ? cmp_int64 : cmp_float8);
	list->n += x->nlist;
	return true;
}

bool
gbt_filter_build(List *planned, ExprContext *econtext, gbt_pred *out,
				 GbtPredList *list, const char **why)
{
	ListCell   *lc;
	int			k = 0;
	bool		after_in = false;	/* the instruction before was an IN */
	bool		in_has_null = false;	/* and its array held a NULL or was one */

	memset(out, 0, sizeof(*out));
	foreach(lc, planned)
	{
		List	   *i = lfirst(lc);
		gbt_pred_insn *x = &out->insn[k++];
		Node	   *arg = lfourth(i);
		Oid			argtype = (Oid) intVal(list_nth(i, 4));

		x->op = intVal(linitial(i));
		x->col = intVal(lsecond(i));
		x->type = intVal(lthird(i));
		/* the UNKNOWN after an IN: whether its array held a NULL */
		if (after_in)
		{
			if (!in_has_null)
				x->op = GBT_PRED_FALSE;
			after_in = false;
			continue;
		}
		after_in = x->op == GBT_PRED_IN;
		in_has_null = false;
		if (arg != NULL)
		{
			ExprState  *state = ExecInitExpr((Expr *) arg, NULL);
			bool		isnull;
			Datum		d = ExecEvalExprSwitchContext(state, econtext, &isnull);

			if (isnull)
			{
				/* col op NULL, col = ANY (NULL): UNKNOWN for every row */
				x->op = GBT_PRED_UNKNOWN;
				in_has_null = true;
				continue;
			}
			if (x->op == GBT_PRED_IN)
			{
				if (!build_in(d, argtype, x->type, x, list, &in_has_null, why))
					return false;
			}
			else
				x->arg = held_value(d, argtype);
		}
	}
	out->ninsns = k;
	return true;
}
