/*
 * Tests of the predicate programs and the filtered aggregate's CPU
 * reference (cuda/predicate_cpu.c) against the naive oracles of
 * pred_oracle.h.  Fresh random data and programs each run (seed printed;
 * pass one as argv[1] to replay): every opcode, NULLs, NaN/-0/Inf floats,
 * narrow, keyed and array-less columns, removed bits, visibility, unsure
 * capacities.
 */
#include "pred_oracle.h"

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

