/*
 * Tests of the predicate programs and the filtered aggregate's CPU
 * reference (cuda/predicate_cpu.c) against naive oracles: a stack of truth
 * values ordered FALSE < UNKNOWN < TRUE (AND is the smaller, OR the larger,
 * NOT the mirror image: SQL's Kleene logic), comparisons in PostgreSQL's
 * float order written out, IN as a linear scan; and for the aggregate,
 * test_vagg_cpu.c's oracle over the entries the programs keep.  Fresh
 * random data and programs each run (seed printed; pass one as argv[1] to
 * replay): every opcode, NULLs, NaN/-0/Inf floats, narrow, keyed and
 * array-less columns, removed bits, visibility, unsure capacities.
 *
 * test_pred_gpu.cu includes this file with PT_NO_MAIN defined, for the
 * generators and the oracle; so keep it valid C and C++.
 */
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

#ifndef PT_NO_MAIN

/* a random query over d */
static void
pt_query(vt_query *q, const vt_data *d, int rmode, int64_t want)
{
	memset(q, 0, sizeof(*q));
	vt_ranges(q, d->n, rmode, want);
	vt_visible(q, d->nblocks, (int) vt_below(VT_V_NMODES));
}

/* (d, q, s) through gbt_vagg_filtered_cpu() with every cap mode; checks */
static long
pt_run_cpu(const vt_data *d, vt_query *q, const gbt_pred_set *s)
{
	pt_oracle	o;
	gbt_agg_result out[GBT_PRED_MAX_FILTERS];
	char		err[256];
	long		checks = 0;
	int			capmode;

	pt_oracle_run(d, q, s, &o);
	for (capmode = 0; capmode < 6; capmode++)
	{
		vt_set_cap(q, capmode, o.ow.nuns, d->n);
		memset(out, 0x77, sizeof(out));
		err[0] = 0;
		if (gbt_vagg_filtered_cpu(&d->in, q->start, q->end, q->R, q->vis, q->nvis, s, out,
								  q->unsure, q->cap, err, sizeof(err)) != 0)
		{
			VT_CHECK(0, "gbt_vagg_filtered_cpu failed: %s", err);
			break;
		}
		checks += pt_check("cpu", q, &o, out, q->unsure);
	}
	pt_oracle_free(&o);
	return checks;
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

static void
test_programs(void)
{
	long		checks = 0;
	int			it;

	for (it = 0; it < 400; it++)
	{
		vt_data		d;
		pt_list		L;
		gbt_pred	p;
		int			k;
		char		err[256];

		pt_data(&d, 1 + vt_below(300), it);
		memset(&L, 0, sizeof(L));
		for (k = 0; k < 20; k++)
		{
			int64_t		i;

			pt_program(&p, &d, &L);
			err[0] = 0;
			VT_CHECK(gbt_pred_check(&p, d.in.ncols, d.in.coltype, L.v, L.n, err,
									sizeof(err)) == 0,
					 "a valid program is refused: %s", err);
			for (i = 0; i < d.n; i++)
			{
				int			want = pt_to_tv(pt_eval(&p, L.v, &d, i)),
							got = gbt_pred_eval_entry(&p, &d.in, i, L.v);

				VT_CHECK(got == want, "program (%d instructions) on entry %lld: %d, want %d",
						 (int) p.ninsns, (long long) i, got, want);
				checks++;
			}
		}
		free(L.v);
		vt_free(&d);
	}
	vt_group_end("pred: programs vs the naive evaluator", checks);
}

/* every pair of truth values through AND, OR, and each through NOT */
static void
test_logic(void)
{
	long		checks = 0;
	vt_data		d;
	gbt_pred	p;
	int			a,
				b,
				op;
	gbt_pred_value none;

	none.i = 0;
	vt_make(&d, 1, 0, 1, -1);
	for (a = 0; a < 3; a++)
	{
		for (b = 0; b < 3; b++)
			for (op = GBT_PRED_AND; op <= GBT_PRED_OR; op++)
			{
				p.ninsns = 0;
				pt_emit(&p, GBT_PRED_TRUE + a, 0, 0, none, 0);
				pt_emit(&p, GBT_PRED_TRUE + b, 0, 0, none, 0);
				pt_emit(&p, op, 0, 0, none, 0);
				VT_CHECK(gbt_pred_eval_entry(&p, &d.in, 0, NULL) ==
						 pt_to_tv(pt_eval(&p, NULL, &d, 0)), "%d op %d %d", a, op, b);
				checks++;
			}
		p.ninsns = 0;
		pt_emit(&p, GBT_PRED_TRUE + a, 0, 0, none, 0);
		pt_emit(&p, GBT_PRED_NOT, 0, 0, none, 0);
		VT_CHECK(gbt_pred_eval_entry(&p, &d.in, 0, NULL) == pt_to_tv(pt_eval(&p, NULL, &d, 0)),
				 "NOT %d", a);
		checks++;
	}
	vt_free(&d);
	vt_group_end("pred: Kleene AND, OR, NOT", checks);
}

/*
 * Float and integer specials against every comparison and IN: every value
 * of a column of specials (NaNs of other bits, -0, infinities, extremes)
 * against every special constant.
 */
static void
test_specials(void)
{
	static const uint64_t fs[] = {0x7ff8000000000000ULL, 0xfff8000000000000ULL,
		0x7ff0000000000001ULL, 0x7ff0000000000000ULL, 0xfff0000000000000ULL, 0,
		0x8000000000000000ULL, 0x3ff0000000000000ULL, 0xbff0000000000000ULL, 1,
	0x7fefffffffffffffULL};
	static const int64_t is[] = {INT64_MIN, INT64_MIN + 1, -1, 0, 1, INT64_MAX - 1, INT64_MAX};
	const int	nfs = (int) (sizeof(fs) / sizeof(fs[0])),
				nis = (int) (sizeof(is) / sizeof(is[0]));
	long		checks = 0;
	vt_data		d;
	gbt_pred	p;
	gbt_pred_value list[16];
	int64_t		i;
	int			c,
				j,
				op;

	vt_make(&d, nfs + 1, 2, 1, -1);
	d.in.coltype[0] = GBT_VAL_FLOAT8;
	d.in.coltype[1] = GBT_VAL_INT64;
	for (c = 0; c < 2; c++)
	{
		free(d.nulls[c]);
		d.nulls[c] = vt_bitmap(d.n, 0);
		d.nulls[c][nfs >> 3] |= (uint8_t) (1 << (nfs & 7));	/* the last is NULL */
		d.in.nulls[c] = d.nulls[c];
	}
	for (i = 0; i < nfs; i++)
	{
		((double *) d.cols[0])[i] = vt_fbits(fs[i]);
		((int64_t *) d.cols[1])[i] = is[i % nis];
	}
	for (c = 0; c < 2; c++)
	{
		int			n = c == 0 ? nfs : nis;

		for (j = 0; j < n; j++)
		{
			gbt_pred_value k;

			if (c == 0)
				k.f = vt_fbits(fs[j]);
			else
				k.i = is[j];
			list[j] = k;
			for (op = GBT_PRED_EQ; op <= GBT_PRED_GE; op++)
			{
				p.ninsns = 0;
				pt_emit(&p, op, c, d.in.coltype[c], k, 0);
				for (i = 0; i < d.n; i++)
				{
					VT_CHECK(gbt_pred_eval_entry(&p, &d.in, i, NULL) ==
							 pt_to_tv(pt_eval(&p, NULL, &d, i)),
							 "column %d entry %lld op %d constant %d", c, (long long) i, op, j);
					checks++;
				}
			}
		}
		/* IN every sorted prefix of the specials */
		qsort(list, n, sizeof(gbt_pred_value), c == 0 ? pt_cmp_flt : pt_cmp_int);
		for (j = 0; j <= n; j++)
		{
			gbt_pred_value at;

			at.i = n - j;
			p.ninsns = 0;
			pt_emit(&p, GBT_PRED_IN, c, d.in.coltype[c], at, (uint32_t) j);
			for (i = 0; i < d.n; i++)
			{
				VT_CHECK(gbt_pred_eval_entry(&p, &d.in, i, list) ==
						 pt_to_tv(pt_eval(&p, list, &d, i)),
						 "column %d entry %lld IN the last %d", c, (long long) i, j);
				checks++;
			}
		}
	}
	vt_free(&d);
	vt_group_end("pred: comparisons and IN of specials", checks);
}

static void
test_filtered_small(void)
{
	static const int64_t sizes[] = {0, 1, 2, 3, 7, 8, 9, 31, 64, 65, 100, 1000, 4097};
	long		checks = 0;
	int			si,
				it;

	for (si = 0; si < (int) (sizeof(sizes) / sizeof(sizes[0])); si++)
		for (it = 0; it < 30; it++)
		{
			vt_data		d;
			vt_query	q;
			pt_set		ps;

			pt_data(&d, sizes[si], it);
			pt_make_set(&ps, &d, GBT_PRED_MAX_FILTERS);
			pt_query(&q, &d, it % VT_R_NMODES, 0);
			checks += pt_run_cpu(&d, &q, &ps.s);
			pt_set_free(&ps);
			vt_qfree(&q);
			vt_free(&d);
		}
	vt_group_end("pred: filtered cpu, n 0..4097, all modes", checks);
}

static void
test_filtered_big(void)
{
	long		checks = 0;
	int			it;

	for (it = 0; it < 4; it++)
	{
		vt_data		d;
		vt_query	q;
		pt_set		ps;
		int			rmode = it % 2 == 0 ? VT_R_TINY : VT_R_FEW;

		pt_data(&d, (1 << 19) + vt_below(1000), it);
		pt_make_set(&ps, &d, 3);
		pt_query(&q, &d, rmode, rmode == VT_R_FEW ? 100 : 0);
		checks += pt_run_cpu(&d, &q, &ps.s);
		pt_set_free(&ps);
		vt_qfree(&q);
		vt_free(&d);
	}
	vt_group_end("pred: filtered cpu, n ~5*10^5", checks);
}

/*
 * Without programs (or with TRUE ones) every result is gbt_vagg_cpu()'s,
 * bit for bit; and the caller's fold of the unsure entries (contract)
 * gives the result of the same query with every block visible.
 */
static void
test_unfiltered_and_fold(void)
{
	long		checks = 0;
	int			it;

	for (it = 0; it < 200; it++)
	{
		vt_data		d;
		vt_query	q;
		pt_set		ps;
		gbt_agg_result plain,
					out[GBT_PRED_MAX_FILTERS],
					all[GBT_PRED_MAX_FILTERS];
		gbt_pred	always;
		gbt_pred_value none;
		int64_t		u;
		int			f,
					c;
		char		err[256];

		none.i = 0;
		pt_data(&d, vt_below(3000), it);
		pt_query(&q, &d, it % VT_R_NMODES, 0);
		vt_set_cap(&q, 5, 0, d.n);
		always.ninsns = 0;
		pt_emit(&always, GBT_PRED_TRUE, 0, 0, none, 0);
		memset(&ps, 0, sizeof(ps));
		ps.s.nfilters = 2;
		ps.s.filter[1] = &always;
		ps.s.where = vt_below(2) ? &always : NULL;
		memset(out, 0, sizeof(out));
		VT_CHECK(gbt_vagg_cpu(&d.in, q.start, q.end, q.R, q.vis, q.nvis, &plain, q.unsure,
							  q.cap, err, sizeof(err)) == 0 &&
				 gbt_vagg_filtered_cpu(&d.in, q.start, q.end, q.R, q.vis, q.nvis, &ps.s, out,
									   q.unsure, q.cap, err, sizeof(err)) == 0 &&
				 memcmp(&out[0], &plain, sizeof(plain)) == 0 &&
				 memcmp(&out[1], &plain, sizeof(plain)) == 0,
				 "unfiltered: not gbt_vagg_cpu()'s result (%s)", err);
		checks++;

		/* the fold: random programs, the unsure ones folded in by hand */
		pt_make_set(&ps, &d, GBT_PRED_MAX_FILTERS);
		if (gbt_vagg_filtered_cpu(&d.in, q.start, q.end, q.R, q.vis, q.nvis, &ps.s, out,
								  q.unsure, q.cap, err, sizeof(err)) != 0)
			VT_CHECK(0, "gbt_vagg_filtered_cpu failed: %s", err);
		else
		{
			for (u = 0; u < out[0].nunsure; u++)
				for (f = 0; f < ps.s.nfilters; f++)
				{
					int64_t		i = q.unsure[u];

					if (gbt_pred_eval_entry(ps.s.filter[f], &d.in, i, ps.s.list) != GBT_TV_TRUE)
						continue;
					out[f].count++;
					for (c = 0; c < d.in.ncols; c++)
					{
						int			isnull;
						uint64_t	v = gbt_agg_value(&d.in, c, i, &isnull);

						if (!isnull)
							gbt_agg_col_add(&out[f].col[c], d.in.coltype[c], v);
					}
				}
			free(q.vis);
			q.nvis = d.nblocks > ((int64_t) 1 << 24) ? ((int64_t) 1 << 24) : d.nblocks;
			q.vis = vt_bitmap(q.nvis, 1.0);
			if (d.nblocks > q.nvis)
			{
				/* blocks beyond the map: keep them from being unsure */
				for (u = 0; u < d.n; u++)
					if (d.blocks[u] >= q.nvis)
						d.blocks[u] = (uint32_t) (d.blocks[u] % q.nvis);
				if (d.tids)
					for (u = 0; u < d.n; u++)
					{
						d.tids[3 * u] = (uint16_t) (d.blocks[u] >> 16);
						d.tids[3 * u + 1] = (uint16_t) d.blocks[u];
					}
			}
			VT_CHECK(gbt_vagg_filtered_cpu(&d.in, q.start, q.end, q.R, q.vis, q.nvis, &ps.s,
										   all, NULL, 0, err, sizeof(err)) == 0 &&
					 all[0].nunsure == 0, "all visible: %s", err);
			for (f = 0; f < ps.s.nfilters; f++)
			{
				VT_CHECK(out[f].count == all[f].count, "fold: filter %d count %lld want %lld",
						 f, (long long) out[f].count, (long long) all[f].count);
				for (c = 0; c < d.in.ncols; c++)
				{
					const gbt_agg_col *x = &out[f].col[c],
							   *y = &all[f].col[c];

					/* the fold adds in another order: all but the float sums */
					VT_CHECK(x->nonnull == y->nonnull && x->sum_hi == y->sum_hi &&
							 x->sum_lo == y->sum_lo && x->min_i == y->min_i &&
							 x->max_i == y->max_i && x->nnan == y->nnan &&
							 x->npinf == y->npinf && x->nninf == y->nninf &&
							 vt_fcmp(x->min_f, y->min_f) == 0 &&
							 vt_fcmp(x->max_f, y->max_f) == 0,
							 "fold: filter %d column %d differs", f, c);
					checks++;
				}
			}
		}
		pt_set_free(&ps);
		vt_qfree(&q);
		vt_free(&d);
	}
	vt_group_end("pred: no programs = gbt_vagg_cpu(), the caller's fold", checks);
}

static void
test_pred_errors(void)
{
	long		checks = 0;
	vt_data		d;
	gbt_pred	p,
				good;
	gbt_pred_set s;
	gbt_pred_value list[3],
				k;
	gbt_agg_result out[GBT_PRED_MAX_FILTERS];
	char		err[200];
	int64_t		st[1] = {0},
				en[1] = {10},
				u[4];
	uint8_t		vis[2] = {0xff, 0xff};
	int			j;

	vt_make(&d, 10, 2, 8, -1);
	d.in.coltype[0] = GBT_VAL_INT64;
	d.in.coltype[1] = GBT_VAL_FLOAT8;
	list[0].i = 1;
	list[1].i = 5;
	list[2].i = 3;
	k.i = 0;
#define EXPECT_BAD(what) do { err[0] = 0; \
	VT_CHECK(gbt_pred_check(&p, 2, d.in.coltype, list, 3, err, sizeof(err)) != 0 && err[0] != 0, \
			 "%s accepted", what); checks++; } while (0)
	p.ninsns = 0;
	EXPECT_BAD("no instructions");
	p.ninsns = GBT_PRED_MAX_INSNS + 1;
	EXPECT_BAD("too many instructions");
	p.ninsns = 0;
	pt_emit(&p, GBT_PRED_NOPS, 0, 0, k, 0);
	EXPECT_BAD("a bad opcode");
	p.ninsns = 0;
	pt_emit(&p, GBT_PRED_TRUE, 0, 0, k, 0);
	pt_emit(&p, GBT_PRED_AND, 0, 0, k, 0);
	EXPECT_BAD("AND of one value");
	p.ninsns = 0;
	pt_emit(&p, GBT_PRED_NOT, 0, 0, k, 0);
	EXPECT_BAD("NOT of none");
	p.ninsns = 0;
	pt_emit(&p, GBT_PRED_TRUE, 0, 0, k, 0);
	pt_emit(&p, GBT_PRED_TRUE, 0, 0, k, 0);
	EXPECT_BAD("two values left");
	p.ninsns = 0;
	for (j = 0; j <= GBT_PRED_MAX_DEPTH; j++)
		pt_emit(&p, GBT_PRED_TRUE, 0, 0, k, 0);
	EXPECT_BAD("a stack too deep");
	VT_CHECK(strstr(err, "deeper") != NULL, "a stack too deep: %s", err);
	p.ninsns = 0;
	pt_emit(&p, GBT_PRED_EQ, 2, GBT_VAL_INT64, k, 0);
	EXPECT_BAD("a column past ncols");
	p.ninsns = 0;
	pt_emit(&p, GBT_PRED_IS_NULL, 7, 0, k, 0);
	EXPECT_BAD("IS NULL of a column past ncols");
	p.ninsns = 0;
	pt_emit(&p, GBT_PRED_LT, 1, GBT_VAL_INT64, k, 0);
	EXPECT_BAD("an INT64 constant for a FLOAT8 column");
	p.ninsns = 0;
	pt_emit(&p, GBT_PRED_IN, 0, GBT_VAL_FLOAT8, k, 1);
	EXPECT_BAD("IN of FLOAT8 constants for an INT64 column");
	p.ninsns = 0;
	k.i = 2;
	pt_emit(&p, GBT_PRED_IN, 0, GBT_VAL_INT64, k, 2);
	EXPECT_BAD("IN past the list");
	p.ninsns = 0;
	k.i = -1;
	pt_emit(&p, GBT_PRED_IN, 0, GBT_VAL_INT64, k, 1);
	EXPECT_BAD("IN before the list");
	p.ninsns = 0;
	k.i = 1;
	pt_emit(&p, GBT_PRED_IN, 0, GBT_VAL_INT64, k, 2);
	EXPECT_BAD("IN of an unsorted slice");
	p.ninsns = 0;
	k.i = 0;
	pt_emit(&p, GBT_PRED_IN, 0, GBT_VAL_INT64, k, 2);
	VT_CHECK(gbt_pred_check(&p, 2, d.in.coltype, list, 3, err, sizeof(err)) == 0,
			 "a sorted slice refused: %s", err);
	VT_CHECK(gbt_pred_check(&p, 5, d.in.coltype, list, 3, err, sizeof(err)) != 0,
			 "5 columns accepted");
	VT_CHECK(gbt_pred_check(NULL, 2, d.in.coltype, list, 3, NULL, 0) != 0, "no program");
	checks += 3;
	good = p;

	/* the set, through the filtered aggregate */
#define EXPECT_ERR(call, what) do { err[0] = 0; \
	VT_CHECK((call) != 0 && err[0] != 0, "%s accepted", what); checks++; } while (0)
#define FILTERED(in_, s_) gbt_vagg_filtered_cpu(in_, st, en, 1, vis, 16, s_, out, u, 4, err, sizeof(err))
	memset(&s, 0, sizeof(s));
	s.nfilters = 1;
	s.list = list;
	s.nlist = 3;
	VT_CHECK(FILTERED(&d.in, &s) == 0, "a valid set refused: %s", err);
	checks++;
	EXPECT_ERR(FILTERED(&d.in, NULL), "no set");
	s.nfilters = 0;
	EXPECT_ERR(FILTERED(&d.in, &s), "no filters");
	s.nfilters = GBT_PRED_MAX_FILTERS + 1;
	EXPECT_ERR(FILTERED(&d.in, &s), "too many filters");
	s.nfilters = 1;
	s.nlist = -1;
	EXPECT_ERR(FILTERED(&d.in, &s), "a negative list length");
	s.nlist = 3;
	s.list = NULL;
	EXPECT_ERR(FILTERED(&d.in, &s), "a NULL list");
	s.list = list;
	p.ninsns = 0;
	EXPECT_ERR((s.where = &p, FILTERED(&d.in, &s)), "a bad WHERE");
	s.where = &good;
	s.nfilters = 3;
	s.filter[2] = &p;
	EXPECT_ERR(FILTERED(&d.in, &s), "a bad filter");
	s.filter[2] = &good;
	VT_CHECK(FILTERED(&d.in, &s) == 0, "a valid set refused: %s", err);
	EXPECT_ERR(FILTERED(NULL, &s), "NULL input");
	EXPECT_ERR(gbt_vagg_filtered_cpu(&d.in, st, en, 1, vis, 16, &s, NULL, u, 4, err, sizeof(err)),
			   "NULL results");
	en[0] = 11;
	EXPECT_ERR(FILTERED(&d.in, &s), "end > n");
#undef FILTERED
#undef EXPECT_ERR
#undef EXPECT_BAD
	vt_free(&d);
	vt_group_end("pred: validator and argument errors", checks);
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

int
main(int argc, char **argv)
{
	uint64_t	seed = argc > 1 ? strtoull(argv[1], NULL, 0) :
		(uint64_t) time(NULL) ^ ((uint64_t) clock() << 20);

	vt_rng = seed;
	printf("predicate CPU tests, seed %llu\n", (unsigned long long) seed);
	test_programs();
	test_logic();
	test_specials();
	test_filtered_small();
	test_filtered_big();
	test_unfiltered_and_fold();
	test_pred_errors();
	test_coverage();
	printf("random programs' results on the aggregates' entries: %ld TRUE, %ld FALSE, "
		   "%ld UNKNOWN\n", pt_tv_seen[PT_T], pt_tv_seen[PT_F], pt_tv_seen[PT_U]);
	printf("%d passed, %d failed\n", vt_passed, vt_failed);
	return vt_failed ? 1 : 0;
}

#endif							/* PT_NO_MAIN */
