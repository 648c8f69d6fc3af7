/*
 * planning.c
 *	  What the planner's nodes (the GpubtreeAggregate and GpubtreeLookup
 *	  paths) ask of a table and of its conditions alike, and where this
 *	  layer's planners send their notes for gpubtree_why_not().
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_class.h"
#include "access/stratnum.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"

#include "backend.h"
#include "keytypes.h"
#include "planning.h"

GbtPlanNoteHook gbt_plan_note_hook = NULL;

/*
 * Is rel a plain table whose rows a node may produce from the mirror: no
 * inheritance or partition parent or child, no TABLESAMPLE, no row-level
 * security (the node's answer would bypass its policies)?  NULL if so, else
 * why not, for gpubtree_why_not().
 */
const char *
gbt_table_refusal(PlannerInfo *root, RelOptInfo *rel)
{
	RangeTblEntry *rte;
	Relation	heap;
	bool		rls;

	if (rel->reloptkind == RELOPT_OTHER_MEMBER_REL)
		return "a partition or inheritance child, read through its parent";
	if (rel->reloptkind != RELOPT_BASEREL || rel->rtekind != RTE_RELATION)
		return "not a table read by itself";
	rte = planner_rt_fetch(rel->relid, root);
	if (rte->inh)
		return "an inheritance or partition parent";
	if (rte->tablesample != NULL)
		return "TABLESAMPLE";
	if (rte->securityQuals != NIL)
		return "security barrier conditions (row-level security or a security_barrier view) apply to it";
	if (rte->relkind != RELKIND_RELATION)
		return "not a plain table (a materialized view, say)";
	heap = table_open(rte->relid, NoLock);
	rls = heap->rd_rel->relrowsecurity;
	table_close(heap, NoLock);
	return rls ? "row-level security is enabled on the table" : NULL;
}

bool
gbt_plain_table(PlannerInfo *root, RelOptInfo *rel)
{
	return gbt_table_refusal(root, rel) == NULL;
}

/*
 * The column of the table that node reads, if it is a plain column, or one
 * of a domain type relabelled to its base type: how a domain column appears
 * as the argument of its base type's operators and aggregates.
 */
Var *
gbt_column_of(Node *node, Index relid)
{
	Var		   *var;

	if (IsA(node, RelabelType))
	{
		RelabelType *r = (RelabelType *) node;

		if (!IsA(r->arg, Var) ||
			r->resulttype != getBaseType(((Var *) r->arg)->vartype))
			return NULL;
		node = (Node *) r->arg;
	}
	if (!IsA(node, Var))
		return NULL;
	var = (Var *) node;
	if (var->varno != relid || var->varlevelsup != 0 || var->varattno <= 0)
		return NULL;
	return var;
}

/*
 * Is clause a range, equality or = ANY on the index's leading column with a
 * bound fixed during the scan, which the service takes?  Returns its btree
 * strategy, the bound's type, the operator (the column on its left),
 * whether it is = ANY, and the bound.
 */
bool
gbt_match_condition(Expr *clause, Index relid, IndexOptInfo *index, int *strategy,
				Oid *subtype, Oid *opno, bool *array, Expr **bound)
{
	Oid			keytype = index->opcintype[0];
	Node	   *left;
	Node	   *right;
	Var		   *var;
	Oid			op;
	Oid			lefttype;
	Oid			righttype;

	if (IsA(clause, OpExpr) && list_length(((OpExpr *) clause)->args) == 2)
	{
		OpExpr	   *e = (OpExpr *) clause;

		left = linitial(e->args);
		right = lsecond(e->args);
		op = e->opno;
		*array = false;
		if (gbt_column_of(left, relid) == NULL && gbt_column_of(right, relid) != NULL)
		{
			Node	   *t = left;

			left = right;
			right = t;
			op = get_commutator(op);
			if (!OidIsValid(op))
				return false;
		}
	}
	else if (IsA(clause, ScalarArrayOpExpr) && ((ScalarArrayOpExpr *) clause)->useOr)
	{
		ScalarArrayOpExpr *e = (ScalarArrayOpExpr *) clause;

		left = linitial(e->args);
		right = lsecond(e->args);
		op = e->opno;
		*array = true;
	}
	else
		return false;

	var = gbt_column_of(left, relid);
	if (var == NULL || var->varattno != index->indexkeys[0] ||
		!is_pseudo_constant_clause(right) ||
		!op_in_opfamily(op, index->opfamily[0]))
		return false;
	get_op_opfamily_properties(op, index->opfamily[0], false, strategy,
							   &lefttype, &righttype);
	if (lefttype != keytype || !gbt_comparable(righttype, keytype) ||
		(*array && *strategy != BTEqualStrategyNumber))
		return false;
	*subtype = righttype;
	*opno = op;
	*bound = (Expr *) right;
	return true;
}

/*
 * A PARAM_EXEC Param (an InitPlan's or SubPlan's value) as an external one
 * of the same number: PostgreSQL 17 and later deparse a PARAM_EXEC by
 * looking for the plan that sets it, and without a plan (we deparse while
 * planning) dereference NULL; 15 and 16 print "$N", as this does on all.
 */
static Node *
exec_params_mutator(Node *node, void *context)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXEC)
	{
		Param	   *param = (Param *) copyObject(node);

		param->paramkind = PARAM_EXTERN;
		return (Node *) param;
	}
	return expression_tree_mutator(node, exec_params_mutator, context);
}

/* A clause or expression of the table, as EXPLAIN would show it. */
char *
gbt_deparse_on(PlannerInfo *root, RelOptInfo *rel, Node *node)
{
	Oid			tableoid = planner_rt_fetch(rel->relid, root)->relid;
	Node	   *copy = exec_params_mutator(node, NULL);

	ChangeVarNodes(copy, rel->relid, 1, 0);
	return deparse_expression(copy, deparse_context_for(get_rel_name(tableoid), tableoid),
							  false, false);
}

/* Does the query read a table with a gpubtree index (input_rel's, or any)? */
bool
gbt_has_gpubtree_index(PlannerInfo *root, RelOptInfo *input_rel)
{
	int			i;

	for (i = 1; i < root->simple_rel_array_size; i++)
	{
		RelOptInfo *rel = root->simple_rel_array[i];
		ListCell   *lc;

		if (rel == NULL || (input_rel->reloptkind == RELOPT_BASEREL && rel != input_rel))
			continue;
		foreach(lc, rel->indexlist)
			if (gpubtree_is_gpubtree_indexinfo(lfirst_node(IndexOptInfo, lc)))
				return true;
	}
	return false;
}
