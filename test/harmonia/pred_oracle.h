/*
 * What the predicate tests share (test_pred_cpu.c, test_pred_gpu.cu): a
 * naive evaluator of programs, a stack of truth values ordered FALSE <
 * UNKNOWN < TRUE (AND is the smaller, OR the larger, NOT the mirror image:
 * SQL's Kleene logic) with comparisons in PostgreSQL's float order written
 * out and IN as a linear scan; random programs and sets over
 * test_vagg_cpu.c's random data; and the filtered aggregate's oracle,
 * test_vagg_cpu.c's over the entries the programs keep.  Valid C and C++.
 */
#ifndef PT_PRED_ORACLE_H
#define PT_PRED_ORACLE_H

#ifndef VT_NO_MAIN
#define VT_NO_MAIN
#endif
#include "test_vagg_cpu.c"

#include "../../cuda/predicate.h"

/* ---------------- the naive evaluator ---------------- */

/* truth values, ordered: AND takes the smaller, OR the larger */
enum
{
	PT_F = 0, PT_U = 1, PT_T = 2
};

static int
pt_to_tv(int t)
{
	return t == PT_T ? GBT_TV_TRUE : t == PT_U ? GBT_TV_UNKNOWN : GBT_TV_FALSE;
}

/* entry i's value of column c, as the test data hold it plainly */
static int
pt_isnull(const vt_data *d, int c, int64_t i)
{
	return vt_bit(d->nulls[c], i);
}

/* value i of column c against constant k: -1, 0, 1 */
static int
pt_cmp(const vt_data *d, int c, int64_t i, gbt_pred_value k)
{
	if (d->in.coltype[c] == GBT_VAL_INT64)
	{
		int64_t		v = ((const int64_t *) d->cols[c])[i];

		return v < k.i ? -1 : v > k.i ? 1 : 0;
	}
	return vt_fcmp(((const double *) d->cols[c])[i], k.f);
}

static int
pt_eval(const gbt_pred *p, const gbt_pred_value *list, const vt_data *d, int64_t i)
{
	int			st[GBT_PRED_MAX_INSNS],
				sp = 0,
				k,
				a,
				b;
	int64_t		j;

	for (k = 0; k < p->ninsns; k++)
	{
		const gbt_pred_insn *x = &p->insn[k];
		int			c = x->col;

		switch (x->op)
		{
			case GBT_PRED_TRUE:
				st[sp++] = PT_T;
				break;
			case GBT_PRED_FALSE:
				st[sp++] = PT_F;
				break;
			case GBT_PRED_UNKNOWN:
				st[sp++] = PT_U;
				break;
			case GBT_PRED_IS_NULL:
				st[sp++] = pt_isnull(d, c, i) ? PT_T : PT_F;
				break;
			case GBT_PRED_IS_NOT_NULL:
				st[sp++] = pt_isnull(d, c, i) ? PT_F : PT_T;
				break;
			case GBT_PRED_IN:
				/* PostgreSQL: an empty array is FALSE even for a NULL */
				a = PT_F;
				for (j = 0; j < x->nlist; j++)
					if (!pt_isnull(d, c, i) && pt_cmp(d, c, i, list[x->arg.i + j]) == 0)
						a = PT_T;
				st[sp++] = x->nlist > 0 && pt_isnull(d, c, i) ? PT_U : a;
				break;
			case GBT_PRED_AND:
			case GBT_PRED_OR:
				b = st[--sp];
				a = st[--sp];
				st[sp++] = (x->op == GBT_PRED_AND) == (a < b) ? a : b;
				break;
			case GBT_PRED_NOT:
				st[sp - 1] = PT_T - st[sp - 1];
				break;
			default:
				if (pt_isnull(d, c, i))
				{
					st[sp++] = PT_U;
					break;
				}
				a = pt_cmp(d, c, i, x->arg);
				switch (x->op)
				{
					case GBT_PRED_EQ:
						b = a == 0;
						break;
					case GBT_PRED_NE:
						b = a != 0;
						break;
					case GBT_PRED_LT:
						b = a < 0;
						break;
					case GBT_PRED_LE:
						b = a <= 0;
						break;
					case GBT_PRED_GT:
						b = a > 0;
						break;
					default:
						b = a >= 0;
						break;
				}
				st[sp++] = b ? PT_T : PT_F;
				break;
		}
	}
	return st[0];
}

/* ---------------- random programs ---------------- */

static long pt_op_seen[GBT_PRED_NOPS];	/* instructions generated, by op */
static long pt_tv_seen[3];		/* program results, by PT_* */

/* the constant list of one set, grown as programs are made */
typedef struct
{
	gbt_pred_value *v;
	int64_t		n,
				cap;
} pt_list;

static void
pt_emit(gbt_pred *p, int op, int col, int type, gbt_pred_value arg, uint32_t nlist)
{
	gbt_pred_insn *x = &p->insn[p->ninsns++];

	memset(x, 0, sizeof(*x));
	x->op = (uint8_t) op;
	x->col = (uint8_t) col;
	x->type = (uint8_t) type;
	x->nlist = nlist;
	x->arg = arg;
	pt_op_seen[op]++;
}

/*
 * A constant for column c: often a value the column holds (so that
 * equalities hold), else a special of its type or a random one.
 */
static gbt_pred_value
pt_const(const vt_data *d, int c)
{
	static const uint64_t fspecial[] = {0x7ff8000000000000ULL, 0xfff8000000000000ULL,
		0x7ff8000020000000ULL, 0x7ff0000000000000ULL, 0xfff0000000000000ULL, 0,
		0x8000000000000000ULL, 0x3ff0000000000000ULL, 0xbff0000000000000ULL,
	0x7fefffffffffffffULL, 1};
	static const int64_t ispecial[] = {INT64_MIN, INT64_MAX, 0, -1, 1, INT64_MIN + 1};
	gbt_pred_value k;
	int			isf = d->in.coltype[c] == GBT_VAL_FLOAT8;
	int			how = (int) vt_below(4);

	if (how <= 1 && d->n > 0)
	{
		int64_t		j = vt_below(d->n);

		if (isf)
			k.f = ((const double *) d->cols[c])[j];
		else
			k.i = ((const int64_t *) d->cols[c])[j];
	}
	else if (how == 2)
	{
		if (isf)
			k.f = vt_fbits(fspecial[vt_below(sizeof(fspecial) / sizeof(fspecial[0]))]);
		else
			k.i = ispecial[vt_below(sizeof(ispecial) / sizeof(ispecial[0]))];
	}
	else if (isf)
		k.f = vt_float((int) vt_below(VT_F_NDIST), NULL, 0);
	else
		k.i = vt_int((int) vt_below(VT_I_NDIST));
	return k;
}

static int
pt_cmp_int(const void *a, const void *b)
{
	int64_t		x = ((const gbt_pred_value *) a)->i,
				y = ((const gbt_pred_value *) b)->i;

	return x < y ? -1 : x > y;
}

static int
pt_cmp_flt(const void *a, const void *b)
{
	return vt_fcmp(((const gbt_pred_value *) a)->f, ((const gbt_pred_value *) b)->f);
}

/* one leaf instruction: a constant, a null test, a comparison or an IN */
static void
pt_leaf(gbt_pred *p, const vt_data *d, pt_list *L)
{
	int			kind = (int) vt_below(20),
				ncols = d->in.ncols,
				c = ncols > 0 ? (int) vt_below(ncols) : 0,
				type = ncols > 0 ? (int) d->in.coltype[c] : 0;
	gbt_pred_value none;

	none.i = 0;
	if (ncols == 0 || kind < 2)
	{
		pt_emit(p, GBT_PRED_TRUE + (int) vt_below(3), 0, 0, none, 0);
		return;
	}
	if (kind < 5)
	{
		pt_emit(p, vt_below(2) ? GBT_PRED_IS_NULL : GBT_PRED_IS_NOT_NULL, c, 0, none, 0);
		return;
	}
	if (kind < 14)
	{
		pt_emit(p, GBT_PRED_EQ + (int) vt_below(6), c, type, pt_const(d, c), 0);
		return;
	}
	{
		/* IN: 0..8 constants, now and then up to 200 */
		int64_t		n = vt_below(8) == 0 ? vt_below(201) : vt_below(9),
					j;
		gbt_pred_value at;

		if (L->n + n > L->cap)
		{
			L->cap = 2 * (L->n + n) + 16;
			L->v = (gbt_pred_value *) realloc(L->v, L->cap * sizeof(gbt_pred_value));
		}
		for (j = 0; j < n; j++)
			L->v[L->n + j] = pt_const(d, c);
		qsort(L->v + L->n, n, sizeof(gbt_pred_value),
			  type == GBT_VAL_FLOAT8 ? pt_cmp_flt : pt_cmp_int);
		at.i = L->n;
		L->n += n;
		pt_emit(p, GBT_PRED_IN, c, type, at, (uint32_t) n);
	}
}

/* an expression of at most room instructions (room >= 1), in postfix */
static void
pt_expr(gbt_pred *p, const vt_data *d, pt_list *L, int room)
{
	int			shape = (int) vt_below(8);
	gbt_pred_value none;

	none.i = 0;
	if (room < 2 || shape < 3)
		pt_leaf(p, d, L);
	else if (room < 3 || shape == 3)
	{
		pt_expr(p, d, L, room - 1);
		pt_emit(p, GBT_PRED_NOT, 0, 0, none, 0);
	}
	else
	{
		int			left = 1 + (int) vt_below(room - 2),
					before = p->ninsns;

		pt_expr(p, d, L, left);
		pt_expr(p, d, L, room - 1 - (p->ninsns - before));
		pt_emit(p, vt_below(2) ? GBT_PRED_AND : GBT_PRED_OR, 0, 0, none, 0);
	}
}

/*
 * A random valid program over d's columns: a random tree, or now and then
 * a deep one (up to 24 leaves pushed before they are combined).
 */
static void
pt_program(gbt_pred *p, const vt_data *d, pt_list *L)
{
	memset(p, 0x5c, sizeof(*p));	/* unused slots hold garbage */
	p->ninsns = 0;
	if (vt_below(6) == 0)
	{
		int			leaves = 1 + (int) vt_below(24),
					j;
		gbt_pred_value none;

		none.i = 0;
		for (j = 0; j < leaves; j++)
			pt_leaf(p, d, L);
		for (j = 1; j < leaves; j++)
			pt_emit(p, vt_below(2) ? GBT_PRED_AND : GBT_PRED_OR, 0, 0, none, 0);
		if (vt_below(2))
			pt_emit(p, GBT_PRED_NOT, 0, 0, none, 0);
	}
	else
		pt_expr(p, d, L, 1 + (int) vt_below(vt_below(3) ? 8 : GBT_PRED_MAX_INSNS));
}

/* a random set: WHERE (or none), 1..16 filters (some none) */
typedef struct
{
	gbt_pred_set s;
	gbt_pred	progs[1 + GBT_PRED_MAX_FILTERS];
	pt_list		L;
} pt_set;

static void
pt_make_set(pt_set *ps, const vt_data *d, int maxfilters)
{
	int			f;

	memset(&ps->s, 0, sizeof(ps->s));
	memset(&ps->L, 0, sizeof(ps->L));
	if (vt_below(4))
	{
		pt_program(&ps->progs[0], d, &ps->L);
		ps->s.where = &ps->progs[0];
	}
	ps->s.nfilters = 1 + (int) vt_below(vt_below(2) ? 3 : maxfilters);
	for (f = 0; f < ps->s.nfilters; f++)
		if (vt_below(5))
		{
			pt_program(&ps->progs[1 + f], d, &ps->L);
			ps->s.filter[f] = &ps->progs[1 + f];
		}
	ps->s.list = ps->L.v;
	ps->s.nlist = ps->L.n;
}

static void
pt_set_free(pt_set *ps)
{
	free(ps->L.v);
	ps->L.v = NULL;
}

/* ---------------- the filtered aggregate's oracle ---------------- */

/*
 * The expected results of set s over (d, q): out[f] is test_vagg_cpu.c's
 * oracle over d with every entry that fails WHERE or filter f removed, but
 * for the unsure entries, which are those of d with the entries failing
 * WHERE removed.  unsure_of_where gets that oracle (its uns, mark, nuns).
 */
typedef struct
{
	int			nf;
	vt_data		dw,				/* d with WHERE's failures removed */
				df[GBT_PRED_MAX_FILTERS];	/* and filter f's */
	vt_oracle	ow,
				of[GBT_PRED_MAX_FILTERS];
} pt_oracle;

static void
pt_oracle_run(const vt_data *d, const vt_query *q, const gbt_pred_set *s, pt_oracle *o)
{
	int64_t		i,
				nb = (d->n + 7) / 8 + 1;
	int			f;
	int		   *w = (int *) malloc((d->n + 1) * sizeof(int));

	o->nf = s->nfilters;
	o->dw = *d;
	o->dw.removed = (uint8_t *) calloc(nb, 1);
	for (i = 0; i < d->n; i++)
	{
		w[i] = s->where ? pt_eval(s->where, s->list, d, i) : PT_T;
		pt_tv_seen[w[i]]++;
		if (vt_bit(d->removed, i) || w[i] != PT_T)
			o->dw.removed[i >> 3] |= (uint8_t) (1 << (i & 7));
	}
	vt_oracle_run(&o->dw, q, &o->ow);
	for (f = 0; f < o->nf; f++)
	{
		o->df[f] = o->dw;
		o->df[f].removed = (uint8_t *) malloc(nb);
		memcpy(o->df[f].removed, o->dw.removed, nb);
		for (i = 0; i < d->n; i++)
		{
			int			t;

			if (!s->filter[f] || vt_bit(o->dw.removed, i))
				continue;
			t = pt_eval(s->filter[f], s->list, d, i);
			pt_tv_seen[t]++;
			if (t != PT_T)
				o->df[f].removed[i >> 3] |= (uint8_t) (1 << (i & 7));
		}
		vt_oracle_run(&o->df[f], q, &o->of[f]);
	}
	free(w);
}

static void
pt_oracle_free(pt_oracle *o)
{
	int			f;

	for (f = 0; f < o->nf; f++)
	{
		vt_oracle_free(&o->of[f]);
		free(o->df[f].removed);
	}
	vt_oracle_free(&o->ow);
	free(o->dw.removed);
}

/* out[0..nf) and unsure[] against the oracle; checks done */
static long
pt_check(const char *who, const vt_query *q, const pt_oracle *o,
		 const gbt_agg_result *out, const int64_t *unsure)
{
	long		checks = 0;
	int			f;

	for (f = 0; f < o->nf; f++)
	{
		/* filter f's aggregates, WHERE's unsure entries */
		vt_oracle	x = o->of[f];

		x.nuns = o->ow.nuns;
		x.uns = o->ow.uns;
		x.mark = o->ow.mark;
		checks += vt_check(who, &o->df[f], q, &x, &out[f], unsure);
	}
	return checks;
}

/* a random query over d */
static void
pt_query(vt_query *q, const vt_data *d, int rmode, int64_t want)
{
	memset(q, 0, sizeof(*q));
	vt_ranges(q, d->n, rmode, want);
	vt_visible(q, d->nblocks, (int) vt_below(VT_V_NMODES));
}

/* random data of n entries in every column form */
static void
pt_data(vt_data *d, int64_t n, int it)
{
	int64_t		nb = it % 5 == 4 ? 0 : 1 + vt_below(n / (1 + vt_below(8)) + 2);
	int			c;

	vt_make(d, n, (int) vt_below(GBT_MAX_COLS + 1), nb,
			it % 3 == 0 ? -1 : it % 3 == 1 ? 0.2 : 1.0 * (it % 7 == 2));
	/* float columns with few distinct values: equalities and ties */
	for (c = 0; c < d->in.ncols; c++)
		if (d->in.coltype[c] == GBT_VAL_FLOAT8 && vt_below(3) == 0)
			vt_refill(d, c, VT_F_ZEROS + (int) vt_below(3));
	vt_vary_forms(d, NULL);
}

/* what the random programs reached: every opcode, every truth value */
static void
test_coverage(void)
{
	int			op,
				t;

	for (op = 0; op < GBT_PRED_NOPS; op++)
		VT_CHECK(pt_op_seen[op] > 0, "opcode %d never generated", op);
	for (t = 0; t < 3; t++)
		VT_CHECK(pt_tv_seen[t] > 0, "no program gave truth value %d", t);
	vt_group_end("pred: every opcode and truth value reached", GBT_PRED_NOPS + 3);
}

#endif							/* PT_PRED_ORACLE_H */
