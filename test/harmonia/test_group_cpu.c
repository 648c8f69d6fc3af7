/*
 * Tests of the grouped aggregate's CPU reference (cuda/groupby_cpu.c) and
 * the CPU twin's aggregate_grouped() against the naive oracle of
 * group_oracle.h, on fresh random data and programs each run (seed
 * printed; pass one as argv[1] to replay): group columns of one, few,
 * many or only distinct values, extremes, NULLs, keyed (the engine's keys
 * too), narrow and array-less group columns, removed bits, visibility,
 * WHERE and FILTER programs, too little room for the groups, empty and
 * many ranges.  test_group_gpu.cu includes this file with GT_NO_MAIN.
 */
#include "group_oracle.h"
#include "split_build.h"

/*
 * One call of fn (the CPU reference or an engine's op through a wrapper)
 * on (d, q, s) with room for cap groups: against the oracle when they fit,
 * else ngroups above cap, and then again with room for what it said until
 * they fit.  Checks done.
 */
typedef int (*gt_fn) (void *ctx, const vt_data *d, const vt_query *q,
					  const gbt_pred_set *s, gbt_groups *g, char *err, size_t errlen);

static int
gt_call_cpu(void *ctx, const vt_data *d, const vt_query *q, const gbt_pred_set *s,
			gbt_groups *g, char *err, size_t errlen)
{
	(void) ctx;
	return gbt_vagg_grouped_cpu(&d->in, q->start, q->end, q->R, q->vis, q->nvis, s, g,
								q->unsure, q->cap, err, errlen);
}

static long
gt_run(const char *who, gt_fn fn, void *ctx, const vt_data *d, vt_query *q,
	   const gbt_pred_set *s, int gcol, const gt_oracle *o, int64_t cap)
{
	gbt_groups	g;
	char		err[256];
	long		checks = 0;
	int			tries;

	for (tries = 0; tries < 40; tries++)
	{
		gt_alloc(&g, gcol, cap, s->nfilters);
		vt_set_cap(q, (int) vt_below(6), o->ow.nuns, d->n);
		err[0] = 0;
		if (fn(ctx, d, q, s, &g, err, sizeof(err)) != 0)
		{
			VT_CHECK(0, "%s failed (room for %lld groups): %s", who, (long long) cap, err);
			gt_free(&g);
			return checks + 1;
		}
		VT_CHECK(gt_guard_ok(&g, s->nfilters), "%s wrote past room for %lld groups", who,
				 (long long) cap);
		checks++;
		if (o->ngroups <= cap)
		{
			checks += gt_check(who, d, q, o, &g, q->unsure);
			gt_free(&g);
			return checks;
		}
		VT_CHECK(g.ngroups > cap, "%s: %lld groups in room for %lld, %lld there", who,
				 (long long) g.ngroups, (long long) cap, (long long) o->ngroups);
		checks += 1 + gt_check_unsure(who, d, &o->ow, g.nunsure, q->unsure, q->cap);
		gt_free(&g);
		if (g.ngroups <= cap)
			return checks;
		cap = g.ngroups > 2 * cap + 1 ? g.ngroups : 2 * cap + 1;
	}
	VT_CHECK(0, "%s: no room found for the groups", who);
	return checks;
}

/* room for the groups: none, one too few, just enough, more */
static int64_t
gt_pick_cap(int64_t ngroups, int mode)
{
	switch (mode)
	{
		case 0:
			return 0;
		case 1:
			return ngroups > 0 ? ngroups - 1 : 0;
		case 2:
			return ngroups;
		default:
			return ngroups + 1 + vt_below(5);
	}
}

/*
 * Every group's results for filter f, combined, are the filtered
 * aggregate's out[f] (all but the float sums, which add in another order).
 */
static long
gt_check_combined(const vt_data *d, const vt_query *q, const gbt_pred_set *s,
				  const gbt_groups *g)
{
	gbt_agg_result whole[GBT_PRED_MAX_FILTERS],
				sum;
	char		err[256];
	int64_t		k;
	int			f,
				c;

	if (gbt_vagg_filtered_cpu(&d->in, q->start, q->end, q->R, q->vis, q->nvis, s, whole,
							  NULL, 0, err, sizeof(err)) != 0)
	{
		VT_CHECK(0, "filtered: %s", err);
		return 1;
	}
	for (f = 0; f < s->nfilters; f++)
	{
		memset(&sum, 0, sizeof(sum));
		for (k = 0; k < g->ngroups; k++)
			gbt_agg_result_combine(&sum, &g->out[k * s->nfilters + f], d->in.coltype,
								   d->in.ncols);
		VT_CHECK(sum.count == whole[f].count && g->nunsure == whole[f].nunsure,
				 "combined groups, filter %d: count %lld want %lld", f,
				 (long long) sum.count, (long long) whole[f].count);
		for (c = 0; c < d->in.ncols; c++)
		{
			const gbt_agg_col *a = &sum.col[c],
					   *b = &whole[f].col[c];

			VT_CHECK(a->nonnull == b->nonnull && a->sum_hi == b->sum_hi &&
					 a->sum_lo == b->sum_lo && a->min_i == b->min_i && a->max_i == b->max_i &&
					 a->nnan == b->nnan && a->npinf == b->npinf && a->nninf == b->nninf &&
					 a->ties == b->ties && vt_fcmp(a->min_f, b->min_f) == 0 &&
					 vt_fcmp(a->max_f, b->max_f) == 0,
					 "combined groups, filter %d column %d differ from the filtered aggregate",
					 f, c);
		}
	}
	return 1 + s->nfilters * (1 + d->in.ncols);
}

static void
test_grouped_small(void)
{
	static const int64_t sizes[] = {0, 1, 2, 3, 7, 8, 9, 64, 65, 300, 1000, 3001};
	long		checks = 0;
	int			si,
				m,
				it;

	for (si = 0; si < (int) (sizeof(sizes) / sizeof(sizes[0])); si++)
		for (m = 0; m < GT_G_NMODES; m++)
			for (it = 0; it < (sizes[si] > 1000 ? 3 : 10); it++)
			{
				vt_data		d;
				vt_query	q;
				pt_set		ps;
				gt_oracle	o;
				int			gcol;

				gt_data(&d, sizes[si], it + si, m, NULL, &gcol);
				pt_make_set(&ps, &d, sizes[si] > 1000 ? 4 : GBT_PRED_MAX_FILTERS);
				pt_query(&q, &d, (it + m) % VT_R_NMODES, 0);
				gt_oracle_run(&d, &q, &ps.s, gcol, &o);
				checks += gt_run("cpu", gt_call_cpu, NULL, &d, &q, &ps.s, gcol, &o,
								 gt_pick_cap(o.ngroups, it % 4));
				pt_set_free(&ps);
				gt_oracle_free(&o);
				vt_qfree(&q);
				vt_free(&d);
			}
	vt_group_end("group: cpu vs oracle, n 0..3001, every group mode", checks);
}

/* ~2^17 entries: a few groups, or tens of thousands (the oracle samples) */
static void
test_grouped_big(void)
{
	long		checks = 0;
	int			it;

	for (it = 0; it < 6; it++)
	{
		vt_data		d;
		vt_query	q;
		pt_set		ps;
		gt_oracle	o;
		gbt_groups	g;
		char		err[256];
		int			gcol,
					rmode = it % 3 == 0 ? VT_R_TINY : it % 3 == 1 ? VT_R_FEW : VT_R_FULL,
					m = it < 3 ? GT_G_FEW : GT_G_HALF;

		gt_data(&d, (1 << 17) + vt_below(1000), it, m, NULL, &gcol);
		pt_query(&q, &d, rmode, rmode == VT_R_FEW ? 100 : 0);
		gt_set_oracle(&ps, &d, &q, 3, gcol, &o);
		checks += gt_run("cpu big", gt_call_cpu, NULL, &d, &q, &ps.s, gcol, &o,
						 gt_pick_cap(o.ngroups, 2 + it % 2));
		gt_alloc(&g, gcol, o.ngroups, ps.s.nfilters);
		vt_set_cap(&q, 0, 0, d.n);
		if (gbt_vagg_grouped_cpu(&d.in, q.start, q.end, q.R, q.vis, q.nvis, &ps.s, &g,
								 NULL, 0, err, sizeof(err)) != 0)
			VT_CHECK(0, "grouped: %s", err);
		else
			checks += gt_check_combined(&d, &q, &ps.s, &g);
		gt_free(&g);
		pt_set_free(&ps);
		gt_oracle_free(&o);
		vt_qfree(&q);
		vt_free(&d);
	}
	vt_group_end("group: cpu vs oracle, n ~2^17, groups combined", checks);
}

/* the CPU twin's op, on the engine's entries with removed[] given per call */
typedef struct
{
	const gbt_engine_ops *ops;
	gbt_engine *e;
	uint64_t	version;
} gt_engine_ctx;

static int
gt_call_engine(void *ctx, const vt_data *d, const vt_query *q, const gbt_pred_set *s,
			   gbt_groups *g, char *err, size_t errlen)
{
	gt_engine_ctx *x = (gt_engine_ctx *) ctx;

	return x->ops->aggregate_grouped(x->e, d->removed, x->version, q->start, q->end, q->R,
									 q->vis, q->nvis, s, g, q->unsure, q->cap, err, errlen);
}

/*
 * An engine of n entries through ops (on device): grouped aggregates over
 * random ranges with the removed bitmap as made, changed, then none,
 * against the oracle.  Checks done.
 */
static long
gt_engine_run(const gbt_engine_ops *ops, int device, int64_t n, int m, int it)
{
	vt_data		d;
	uint64_t   *keys = (uint64_t *) malloc((n + 1) * 8);
	gt_engine_ctx x;
	uint8_t    *removed;
	char		err[256];
	long		checks = 0;
	int			gcol,
				round;

	gt_data(&d, n, it, m, keys, &gcol);
	removed = d.removed;
	x.ops = ops;
	x.e = NULL;
	VT_CHECK(tb_build(ops, keys, &d.in, device, &x.e, err, sizeof(err)) == 0,
			 "build n=%lld: %s", (long long) n, err);
	for (round = 0; round < 3 && x.e != NULL; round++)
	{
		vt_query	q;
		pt_set		ps;
		gt_oracle	o;

		if (round == 1 && removed != NULL)
		{
			int64_t		r;

			for (r = 0; r < (n + 7) / 8; r++)
				removed[r] ^= (uint8_t) vt_rnd();
		}
		d.removed = round == 2 ? NULL : removed;
		x.version = (uint64_t) round + 1;
		pt_make_set(&ps, &d, round == 0 ? GBT_PRED_MAX_FILTERS : 3);
		pt_query(&q, &d, (it + round) % VT_R_NMODES, 0);
		gt_oracle_run(&d, &q, &ps.s, gcol, &o);
		checks += gt_run("engine", gt_call_engine, &x, &d, &q, &ps.s, gcol, &o,
						 gt_pick_cap(o.ngroups, (it + round) % 4));
		pt_set_free(&ps);
		gt_oracle_free(&o);
		vt_qfree(&q);
	}
	d.removed = removed;
	if (x.e != NULL)
		ops->free(x.e);
	vt_free(&d);
	free(keys);
	return checks + 1;
}

/* the group column's kinds of values through an engine, n 0..20000 */
static long
gt_engine_suite(const gbt_engine_ops *ops, int device)
{
	static const int64_t sizes[] = {0, 1, 9, 65, 1000, 4097, 20000};
	long		checks = 0;
	int			si,
				m;

	for (si = 0; si < (int) (sizeof(sizes) / sizeof(sizes[0])); si++)
		for (m = 0; m < GT_G_NMODES; m++)
			if (sizes[si] <= 4097 || m == GT_G_FEW || m == GT_G_ONE)
				checks += gt_engine_run(ops, device, sizes[si], m, si + m);
	return checks;
}

#ifndef GT_NO_MAIN

/*
 * The caller's fold (groupby.h): each unsure entry checked and folded into
 * its group, a new one perhaps, gives the result of the same call with
 * every block visible.
 */
static void
test_fold(void)
{
	long		checks = 0;
	int			it;

	for (it = 0; it < 150; it++)
	{
		vt_data		d;
		vt_query	q;
		pt_set		ps;
		gt_oracle	o;
		gbt_groups	g;
		char		err[256];
		int			gcol;
		int64_t		u,
					cap;

		gt_data(&d, vt_below(2000), it, it % GT_G_NMODES, NULL, &gcol);
		pt_make_set(&ps, &d, 4);
		pt_query(&q, &d, it % VT_R_NMODES, 0);
		vt_set_cap(&q, 5, 0, d.n);
		/* room for the groups the unsure entries may add */
		cap = d.n + 1;
		gt_alloc(&g, gcol, cap, ps.s.nfilters);
		if (gbt_vagg_grouped_cpu(&d.in, q.start, q.end, q.R, q.vis, q.nvis, &ps.s, &g,
								 q.unsure, q.cap, err, sizeof(err)) != 0)
		{
			VT_CHECK(0, "grouped: %s", err);
			goto next;
		}
		for (u = 0; u < g.nunsure; u++)
		{
			int64_t		i = q.unsure[u],
						nv = g.ngroups - g.has_null,
						k;
			int			isnull;
			int64_t		v = (int64_t) gbt_agg_value(&d.in, gcol, i, &isnull);
			uint64_t	vals[GBT_MAX_COLS];
			unsigned	nulls = 0;
			int			c;

			k = isnull ? nv : gt_bsearch(g.values, nv, v);
			if (isnull ? !g.has_null : k == nv || g.values[k] != v)
			{
				/* a new group: the ones after it move up */
				int64_t		at = isnull ? g.ngroups : k;

				memmove(&g.values[at + 1], &g.values[at], (g.ngroups - at) * 8);
				memmove(&g.out[(at + 1) * ps.s.nfilters], &g.out[at * ps.s.nfilters],
						(g.ngroups - at) * ps.s.nfilters * sizeof(gbt_agg_result));
				memset(&g.out[at * ps.s.nfilters], 0,
					   ps.s.nfilters * sizeof(gbt_agg_result));
				g.values[at] = isnull ? 0 : v;
				g.ngroups++;
				g.has_null |= isnull;
			}
			for (c = 0; c < GBT_MAX_COLS; c++)
			{
				int			cn = 1;

				vals[c] = c < d.in.ncols ? gbt_agg_value(&d.in, c, i, &cn) : 0;
				nulls |= (unsigned) cn << c;
			}
			gbt_pred_entry_add(&d.in, &ps.s, vals, nulls, &g.out[k * ps.s.nfilters]);
		}
		g.nunsure = 0;
		/* every block visible: the oracle of the same call */
		free(q.vis);
		q.nvis = d.nblocks > ((int64_t) 1 << 24) ? ((int64_t) 1 << 24) : d.nblocks;
		q.vis = vt_bitmap(q.nvis, 1.0);
		for (u = 0; u < d.n; u++)
			if (d.blocks[u] >= q.nvis)
				d.blocks[u] = (uint32_t) (d.blocks[u] % q.nvis);
		if (d.tids)
			for (u = 0; u < d.n; u++)
			{
				d.tids[3 * u] = (uint16_t) (d.blocks[u] >> 16);
				d.tids[3 * u + 1] = (uint16_t) d.blocks[u];
			}
		vt_set_cap(&q, 0, 0, d.n);
		gt_oracle_run(&d, &q, &ps.s, gcol, &o);
		checks += gt_check("fold", &d, &q, &o, &g, q.unsure);
		gt_oracle_free(&o);
next:
		gt_free(&g);
		pt_set_free(&ps);
		vt_qfree(&q);
		vt_free(&d);
	}
	vt_group_end("group: the caller's fold of unsure entries", checks);
}

static void
test_group_errors(void)
{
	long		checks = 0;
	vt_data		d;
	gbt_pred_set s;
	gbt_groups	g;
	gbt_pred	bad;
	char		err[200];
	int64_t		st[1] = {0},
				en[1] = {10},
				u[4],
				values[4];
	gbt_agg_result out[4];
	uint8_t		vis[2] = {0xff, 0xff};

	vt_make(&d, 10, 2, 8, -1);
	d.in.coltype[0] = GBT_VAL_INT64;
	d.in.coltype[1] = GBT_VAL_FLOAT8;
	memset(&s, 0, sizeof(s));
	s.nfilters = 1;
	memset(&g, 0, sizeof(g));
	g.cap = 4;
	g.values = values;
	g.out = out;
#define GROUPED(in_, s_, g_) gbt_vagg_grouped_cpu(in_, st, en, 1, vis, 16, s_, g_, u, 4, err, sizeof(err))
#define EXPECT_ERR(call, what) do { err[0] = 0; \
	VT_CHECK((call) != 0 && err[0] != 0, "%s accepted", what); checks++; } while (0)
	VT_CHECK(GROUPED(&d.in, &s, &g) == 0, "a valid call refused: %s", err);
	checks++;
	EXPECT_ERR(GROUPED(&d.in, &s, NULL), "no groups");
	EXPECT_ERR(GROUPED(NULL, &s, &g), "no input");
	EXPECT_ERR(GROUPED(&d.in, NULL, &g), "no programs");
	g.gcol = 1;
	EXPECT_ERR(GROUPED(&d.in, &s, &g), "a FLOAT8 group column");
	g.gcol = 2;
	EXPECT_ERR(GROUPED(&d.in, &s, &g), "a group column past ncols");
	g.gcol = -1;
	EXPECT_ERR(GROUPED(&d.in, &s, &g), "a negative group column");
	g.gcol = 0;
	g.cap = -1;
	EXPECT_ERR(GROUPED(&d.in, &s, &g), "negative room");
	g.cap = 4;
	g.values = NULL;
	EXPECT_ERR(GROUPED(&d.in, &s, &g), "no values array");
	g.values = values;
	g.out = NULL;
	EXPECT_ERR(GROUPED(&d.in, &s, &g), "no results array");
	g.cap = 0;
	g.values = NULL;
	VT_CHECK(GROUPED(&d.in, &s, &g) == 0 && g.ngroups > 0, "no room, no arrays: %s", err);
	checks++;
	g.cap = 4;
	g.values = values;
	g.out = out;
	bad.ninsns = 0;
	s.where = &bad;
	EXPECT_ERR(GROUPED(&d.in, &s, &g), "a bad WHERE");
	s.where = NULL;
	en[0] = 11;
	EXPECT_ERR(GROUPED(&d.in, &s, &g), "end > n");
#undef GROUPED
#undef EXPECT_ERR
	vt_free(&d);
	vt_group_end("group: argument errors", checks);
}

int
main(int argc, char **argv)
{
	uint64_t	seed = argc > 1 ? strtoull(argv[1], NULL, 0) :
		(uint64_t) time(NULL) ^ ((uint64_t) clock() << 20);

	vt_rng = seed;
	printf("grouped aggregate CPU tests, seed %llu\n", (unsigned long long) seed);
	test_grouped_small();
	test_grouped_big();
	test_fold();
	vt_group_end("group: CPU twin's aggregate_grouped vs oracle",
				 gt_engine_suite(gbt_engine_cpu_ops(), -1));
	tb_split_inner = gbt_engine_cpu_ops();
	vt_group_end("group: CPU twin split in 1-4 parts vs oracle",
				 gt_engine_suite(gbt_engine_split_ops(), -1));
	test_group_errors();
	printf("%d passed, %d failed\n", vt_passed, vt_failed);
	return vt_failed ? 1 : 0;
}

#endif							/* GT_NO_MAIN */
