/*
 * The filtered aggregate on the GPU (gbt_vagg_filtered_gpu()) against the
 * CPU reference (gbt_vagg_filtered_cpu()) and pred_oracle.h's oracle, on
 * fresh random data and programs each run (the seed is printed; pass one
 * as argv[1] to replay): every output of every call is checked, each
 * result against the oracle (exact fields exactly, float sums against the
 * exact sum) and against the CPU's (all fields identical but the float
 * sums, which must agree to 2e-15), and the unsure positions as a set
 * against the CPU's when they fit, else as genuine and distinct, nothing
 * written past the capacity.  Up to GBT_PRED_MAX_FILTERS filters (grid
 * rows), both range paths (prefix sums on the host and on the device), a
 * context shared with unfiltered aggregates.  Without a CUDA device it
 * prints "SKIPPED: no GPU" and exits 0.
 *
 *   test_pred_gpu [--quick] [seed]   (--quick: small sizes, for compute-sanitizer)
 */
#define VT_NO_MAIN
#define VG_NO_MAIN
#include "test_vagg_gpu.cu"
#include "pred_oracle.h"

/* (d, q, s) through the GPU with cap modes capmodes (bits), checked */
static long
pg_run(gbt_vagg_gpu_ctx *ctx, const vt_data *d, const vt_dev *g, vt_query *q,
	   const gbt_pred_set *s, unsigned capmodes)
{
	pt_oracle	o;
	gbt_agg_result cres[GBT_PRED_MAX_FILTERS],
				gres[GBT_PRED_MAX_FILTERS];
	char		err[256];
	long		checks = 0;
	int			capmode,
				f;

	pt_oracle_run(d, q, s, &o);
	for (capmode = 0; capmode < 6; capmode++)
	{
		int64_t    *cu;

		if (!((capmodes >> capmode) & 1))
			continue;
		vt_set_cap(q, capmode, o.ow.nuns, d->n);
		cu = (int64_t *) malloc((q->cap + VT_GUARD) * 8);
		memcpy(cu, q->unsure, (q->cap + VT_GUARD) * 8);
		memset(cres, 0x77, sizeof(cres));
		memset(gres, 0x77, sizeof(gres));
		err[0] = 0;
		if (gbt_vagg_filtered_cpu(&d->in, q->start, q->end, q->R, q->vis, q->nvis, s, cres,
								  cu, q->cap, err, sizeof(err)) != 0)
			VT_CHECK(0, "gbt_vagg_filtered_cpu failed: %s", err);
		else if (gbt_vagg_filtered_gpu(ctx, &g->in, q->start, q->end, q->R, q->vis, q->nvis,
									   s, gres, q->unsure, q->cap, err, sizeof(err)) != 0)
			VT_CHECK(0, "gbt_vagg_filtered_gpu failed: %s", err);
		else
		{
			checks += pt_check("gpu", q, &o, gres, q->unsure);
			for (f = 0; f < s->nfilters; f++)
				checks += vt_vs_cpu(&o.df[f], q, &gres[f], q->unsure, &cres[f], cu);
		}
		vt_gpu_calls++;
		free(cu);
	}
	pt_oracle_free(&o);
	return checks;
}

/*
 * One random case: n entries (pt_data()'s forms), a set of up to
 * maxfilters filters, ranges of mode rmode (want of them), every cap mode
 * in capmodes.
 */
static long
pg_case(gbt_vagg_gpu_ctx *ctx, int64_t n, int it, int maxfilters, int rmode, int64_t want,
		unsigned capmodes)
{
	vt_data		d;
	vt_dev		g;
	vt_query	q;
	pt_set		ps;
	long		checks = 0;

	pt_data(&d, n, it);
	pt_make_set(&ps, &d, maxfilters);
	if (vt_to_dev(&d, &g) == 0)
	{
		memset(&q, 0, sizeof(q));
		vt_ranges(&q, n, rmode, want);
		vt_visible(&q, d.nblocks, (int) vt_below(VT_V_NMODES));
		checks = pg_run(ctx, &d, &g, &q, &ps.s, capmodes);
		vt_qfree(&q);
	}
	else
		vt_nfail++;
	vt_dev_free(&g);
	pt_set_free(&ps);
	vt_free(&d);
	return checks;
}

static void
pg_small(gbt_vagg_gpu_ctx *ctx)
{
	static const int64_t sizes[] = {0, 1, 2, 7, 31, 32, 33, 127, 128, 129, 1000, 4097, 65543};
	long		checks = 0;
	int			si,
				it;

	for (si = 0; si < (int) (sizeof(sizes) / sizeof(sizes[0])); si++)
		for (it = 0; it < (vt_quick ? 6 : 24); it++)
			checks += pg_case(ctx, sizes[si], it, GBT_PRED_MAX_FILTERS, it % VT_R_NMODES, 0,
							  it & 1 ? 0x3f : (1u << (it / 2 % 6)));
	vt_group_end("pred gpu: n 0..65543, all modes", checks);
}

static void
pg_ranges(gbt_vagg_gpu_ctx *ctx)
{
	long		checks = 0;
	int			it;

	/* around the host/device prefix-sum threshold (16384 ranges) */
	for (it = 0; it < (vt_quick ? 4 : 12); it++)
	{
		int64_t		n = it < 6 ? 100000 : 1000000,
					want = it % 3 == 0 ? 16384 : it % 3 == 1 ? 16385 : 0;

		checks += pg_case(ctx, n, it, 4, it & 1 ? VT_R_TINY : VT_R_PARTITION, want, 0x0b);
	}
	vt_group_end("pred gpu: up to 10^6 ranges, host and device prefix", checks);
}

static void
pg_big(gbt_vagg_gpu_ctx *ctx)
{
	long		checks = 0;
	int			it;

	/* long ranges, every filter count up to the grid's 16 rows */
	for (it = 0; it < 6; it++)
		checks += pg_case(ctx, (1 << 21) + vt_below(1000), it,
						  it < 2 ? GBT_PRED_MAX_FILTERS : 3,
						  it % 2 ? VT_R_FULL : VT_R_FEW, 50, 0x29);
	vt_group_end("pred gpu: n ~2*10^6, up to 16 filters", checks);
}

/*
 * Unfiltered and filtered aggregates on one context, in turns: the
 * unfiltered ones still equal the CPU's (the shared scratch and results
 * of a filtered call are left in a state they can use).
 */
static void
pg_mixed(gbt_vagg_gpu_ctx *ctx)
{
	long		checks = 0;
	int			it;

	for (it = 0; it < (vt_quick ? 4 : 16); it++)
	{
		vt_data		d;
		vt_dev		g;
		vt_query	q;
		gbt_agg_result cres,
					gres;
		char		err[256];
		int64_t    *cu;

		checks += pg_case(ctx, 1 + vt_below(200000), it, GBT_PRED_MAX_FILTERS,
						  it % VT_R_NMODES, 0, 0x08);
		pt_data(&d, 1 + vt_below(200000), it);
		if (vt_to_dev(&d, &g) == 0)
		{
			memset(&q, 0, sizeof(q));
			vt_ranges(&q, d.n, it % VT_R_NMODES, 0);
			vt_visible(&q, d.nblocks, (int) vt_below(VT_V_NMODES));
			vt_set_cap(&q, 5, 0, d.n);
			cu = (int64_t *) malloc((q.cap + VT_GUARD) * 8);
			if (gbt_vagg_cpu(&d.in, q.start, q.end, q.R, q.vis, q.nvis, &cres, cu, q.cap,
							 err, sizeof(err)) != 0 ||
				gbt_vagg_gpu(ctx, &g.in, q.start, q.end, q.R, q.vis, q.nvis, &gres, q.unsure,
							 q.cap, err, sizeof(err)) != 0)
				VT_CHECK(0, "unfiltered aggregate failed: %s", err);
			else
				checks += vt_vs_cpu(&d, &q, &gres, q.unsure, &cres, cu);
			free(cu);
			vt_qfree(&q);
		}
		else
			vt_nfail++;
		vt_dev_free(&g);
		vt_free(&d);
	}
	vt_group_end("pred gpu: filtered and unfiltered on one context", checks);
}

static void
pg_errors(gbt_vagg_gpu_ctx *ctx)
{
	long		checks = 0;
	vt_data		d;
	vt_dev		g;
	gbt_pred	bad;
	gbt_pred_set s;
	gbt_agg_result out[GBT_PRED_MAX_FILTERS];
	char		err[200];
	int64_t		st[1] = {0},
				en[1] = {10},
				u[4];
	uint8_t		vis[2] = {0xff, 0xff};
	int			f;

	vt_make(&d, 10, 2, 8, -1);
	if (vt_to_dev(&d, &g) != 0)
	{
		vt_nfail++;
		vt_free(&d);
		vt_group_end("pred gpu: argument errors", checks);
		return;
	}
#define EXPECT_ERR(call, what) do { err[0] = 0; \
	VT_CHECK((call) != 0 && err[0] != 0, "%s accepted", what); checks++; } while (0)
#define FILTERED(s_) gbt_vagg_filtered_gpu(ctx, &g.in, st, en, 1, vis, 16, s_, out, u, 4, \
										   err, sizeof(err))
	memset(&s, 0, sizeof(s));
	s.nfilters = 2;
	VT_CHECK(FILTERED(&s) == 0 && out[0].count == out[1].count, "a valid set refused: %s", err);
	checks++;
	EXPECT_ERR(FILTERED(NULL), "no set");
	s.nfilters = GBT_PRED_MAX_FILTERS + 1;
	EXPECT_ERR(FILTERED(&s), "too many filters");
	s.nfilters = 1;
	bad.ninsns = 0;
	s.where = &bad;
	EXPECT_ERR(FILTERED(&s), "a bad WHERE");
	s.where = NULL;
	s.nlist = 1;
	EXPECT_ERR(FILTERED(&s), "a NULL list");
	s.nlist = 0;
	EXPECT_ERR(gbt_vagg_filtered_gpu(ctx, NULL, st, en, 1, vis, 16, &s, out, u, 4, err,
									 sizeof(err)), "NULL input");
	EXPECT_ERR(gbt_vagg_filtered_gpu(NULL, &g.in, st, en, 1, vis, 16, &s, out, u, 4, err,
									 sizeof(err)), "no context");
	en[0] = 11;
	EXPECT_ERR(FILTERED(&s), "end > n");
	/* nothing to read: every result zero, no GPU work */
	en[0] = 0;
	s.nfilters = GBT_PRED_MAX_FILTERS;
	memset(out, 0x77, sizeof(out));
	VT_CHECK(FILTERED(&s) == 0, "an empty range refused: %s", err);
	for (f = 0; f < GBT_PRED_MAX_FILTERS; f++)
	{
		gbt_agg_result zero;

		memset(&zero, 0, sizeof(zero));
		VT_CHECK(memcmp(&out[f], &zero, sizeof(zero)) == 0, "empty range: result %d not zero", f);
		checks++;
	}
#undef FILTERED
#undef EXPECT_ERR
	vt_dev_free(&g);
	vt_free(&d);
	vt_group_end("pred gpu: argument errors", checks);
}

int
main(int argc, char **argv)
{
	int			nd = 0,
				dev = 0;
	cudaDeviceProp p;
	uint64_t	seed;
	gbt_vagg_gpu_ctx *ctx;

	if (cudaGetDeviceCount(&nd) != cudaSuccess || nd == 0)
	{
		printf("SKIPPED: no GPU\n");
		return 0;
	}
	if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess)
	{
		printf("SKIPPED: no usable GPU\n");
		return 0;
	}
	vt_quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	if (vt_quick)
	{
		argc--;
		argv++;
	}
	seed = argc > 1 ? strtoull(argv[1], NULL, 0) :
		((uint64_t) time(NULL) * 2654435761u) ^ (uint64_t) clock();
	vt_rng = seed;
	printf("predicate GPU tests on %s, seed %llu%s\n", p.name, (unsigned long long) seed,
		   vt_quick ? " (quick)" : "");
	ctx = gbt_vagg_gpu_ctx_create();
	pg_small(ctx);
	pg_ranges(ctx);
	if (!vt_quick)
		pg_big(ctx);
	pg_mixed(ctx);
	pg_errors(ctx);
	gbt_vagg_gpu_ctx_free(ctx);
	test_coverage();
	printf("%ld GPU calls; largest float sum error seen: %.3g of the exact sum\n",
		   vt_gpu_calls, vt_max_relerr);
	printf("%d passed, %d failed\n", vt_passed, vt_failed);
	return vt_failed ? 1 : 0;
}
