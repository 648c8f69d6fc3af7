/*
 * The grouped aggregate on the GPU (gbt_vagg_grouped_gpu(), and the GPU
 * engine's aggregate_grouped()) against group_oracle.h's oracle and the
 * CPU reference (gbt_vagg_grouped_cpu(), the CPU twin's op), on fresh
 * random data and programs each run (the seed is printed; pass one as
 * argv[1] to replay): every output checked, the results identical to the
 * CPU's but the float sums (within twice engine.h's bound), group values
 * and their order included; both range paths (prefix sums on the host and
 * on the device); too little room for the groups; 2^20 entries in 100,000
 * groups, in one group, in a million groups of one entry; a context shared
 * with filtered aggregates.  Then timings (printed, not checked) on 2^26
 * entries: a 10 % range in 10 groups, 100,000 groups (values in order or
 * not), one group, and a million groups of one entry.  Without a CUDA
 * device it prints "SKIPPED: no GPU" and exits 0.
 *
 *   test_group_gpu [--quick] [seed]   (--quick: no big data, no timings)
 */
#define VT_NO_MAIN
#define VG_NO_MAIN
#define GT_NO_MAIN
#include "test_vagg_gpu.cu"
#include "test_group_cpu.c"

#include <chrono>

/* the GPU through gt_run(): device copies of the data */
typedef struct
{
	gbt_vagg_gpu_ctx *ctx;
	vt_dev		dev;
} gg_ctx;

static int
gg_call_gpu(void *x, const vt_data *d, const vt_query *q, const gbt_pred_set *s,
			gbt_groups *g, char *err, size_t errlen)
{
	gg_ctx	   *c = (gg_ctx *) x;

	(void) d;
	vt_gpu_calls++;
	return gbt_vagg_grouped_gpu(c->ctx, &c->dev.in, q->start, q->end, q->R, q->vis,
								q->nvis, s, g, q->unsure, q->cap, err, errlen);
}

/*
 * GPU and CPU on (d, q, s) with room for every group: the GPU's against
 * the CPU's (gt_compare()) and its unsure positions against the oracle's.
 * Checks done.
 */
static long
gg_vs_cpu(const char *who, gg_ctx *c, const vt_data *d, vt_query *q, const gbt_pred_set *s,
		  int gcol, const gt_oracle *o)
{
	gbt_groups	gg,
				cg;
	char		err[256];
	long		checks = 1;
	int64_t		cap = o->ngroups + 1;

	gt_alloc(&gg, gcol, cap, s->nfilters);
	gt_alloc(&cg, gcol, cap, s->nfilters);
	vt_set_cap(q, (int) vt_below(6), o->ow.nuns, d->n);
	if (gbt_vagg_grouped_cpu(&d->in, q->start, q->end, q->R, q->vis, q->nvis, s, &cg,
							 NULL, 0, err, sizeof(err)) != 0)
		VT_CHECK(0, "%s: cpu failed: %s", who, err);
	else if (gg_call_gpu(c, d, q, s, &gg, err, sizeof(err)) != 0)
		VT_CHECK(0, "%s: gpu failed: %s", who, err);
	else
	{
		long double *sumabs = gt_sumabs(d, s, gcol, o->ow.take, &cg);

		checks += gt_compare(who, d, s->nfilters, &gg, &cg, sumabs);
		checks += gt_check_unsure(who, d, &o->ow, gg.nunsure, q->unsure, q->cap);
		VT_CHECK(gt_guard_ok(&gg, s->nfilters), "%s wrote past its room", who);
		free(sumabs);
	}
	gt_free(&gg);
	gt_free(&cg);
	return checks;
}

/* n entries, group mode m: the GPU against the oracle and the CPU */
static long
gg_case(gbt_vagg_gpu_ctx *ctx, int64_t n, int m, int it, int rmode, int64_t want,
		int maxf, bool oracle)
{
	vt_data		d;
	vt_query	q;
	pt_set		ps;
	gt_oracle	o;
	gg_ctx		c;
	int			gcol;
	long		checks = 0;

	gt_data(&d, n, it, m, NULL, &gcol);
	pt_query(&q, &d, rmode, want);
	gt_set_oracle(&ps, &d, &q, maxf, gcol, &o);
	c.ctx = ctx;
	if (vt_to_dev(&d, &c.dev) != 0)
		VT_CHECK(0, "device copy");
	else
	{
		if (oracle)
			checks += gt_run("gpu", gg_call_gpu, &c, &d, &q, &ps.s, gcol, &o,
							 gt_pick_cap(o.ngroups, it % 4));
		checks += gg_vs_cpu("gpu vs cpu", &c, &d, &q, &ps.s, gcol, &o);
		vt_dev_free(&c.dev);
	}
	pt_set_free(&ps);
	gt_oracle_free(&o);
	vt_qfree(&q);
	vt_free(&d);
	return checks;
}

static void
gg_small(gbt_vagg_gpu_ctx *ctx)
{
	static const int64_t sizes[] = {0, 1, 2, 7, 64, 65, 300, 1000, 3001};
	long		checks = 0;
	int			si,
				m,
				it;

	for (si = 0; si < (int) (sizeof(sizes) / sizeof(sizes[0])); si++)
		for (m = 0; m < GT_G_NMODES; m++)
			for (it = 0; it < (sizes[si] > 1000 ? 3 : 8); it++)
				checks += gg_case(ctx, sizes[si], m, it + si, (it + m) % VT_R_NMODES, 0,
								  sizes[si] > 1000 ? 4 : GBT_PRED_MAX_FILTERS, true);
	vt_group_end("group gpu: vs oracle and cpu, n 0..3001", checks);
}

/* more ranges than the host sums (the device's prefix sums), classes of sizes */
static void
gg_ranges(gbt_vagg_gpu_ctx *ctx)
{
	long		checks = 0;
	int			it;

	for (it = 0; it < 8; it++)
		checks += gg_case(ctx, 60000 + vt_below(5000), it % 2 ? GT_G_FEW : GT_G_HALF, it,
						  it % 4 < 2 ? VT_R_TINY : VT_R_PARTITION, 0, 3, it < 2);
	for (it = 0; it < 6; it++)
		checks += gg_case(ctx, 20000 + vt_below(20000), GT_G_FEW + it % 3, it, VT_R_FULL, 0,
						  2, false);
	vt_group_end("group gpu: device prefix sums, every size class", checks);
}

/*
 * Values for 2^20 entries and more: 100,000 groups, one group, or all
 * distinct; the GPU against the CPU (the oracle's groups, unsure entries).
 */
static void
gg_big(gbt_vagg_gpu_ctx *ctx)
{
	long		checks = 0;
	int			it;

	for (it = 0; it < 6; it++)
	{
		vt_data		d;
		vt_query	q;
		pt_set		ps;
		gt_oracle	o;
		gg_ctx		c;
		int			gcol;
		int64_t		i,
					n = ((int64_t) 1 << 20) + vt_below(1000);

		gt_data(&d, n, it, GT_G_ONE, NULL, &gcol);
		if (!((d.in.narrow >> gcol) & 1) && d.in.cols[gcol] != NULL)
		{
			/* plain or keyed: the case's values (keyed: encoded too) */
			int64_t    *v = (int64_t *) d.cols[gcol];

			for (i = 0; i < n; i++)
				v[i] = it % 3 == 0 ? vt_below(100000) - 50000 : it % 3 == 1 ? 42 :
					(int64_t) vt_rnd();
			if ((d.in.keyed >> gcol) & 1)
				for (i = 0; i < n; i++)
					d.keyed[gcol][i] = hm_encode_int64(v[i]);
		}
		pt_query(&q, &d, it % 2 ? VT_R_FULL : VT_R_FEW, 5);
		gt_set_oracle(&ps, &d, &q, 3, gcol, &o);
		c.ctx = ctx;
		if (vt_to_dev(&d, &c.dev) != 0)
			VT_CHECK(0, "device copy");
		else
		{
			gbt_groups	g;
			char		err[256];

			checks += gg_vs_cpu("gpu big", &c, &d, &q, &ps.s, gcol, &o);
			/* too little room: the count, nothing written */
			gt_alloc(&g, gcol, o.ngroups > 0 ? o.ngroups - 1 : 0, ps.s.nfilters);
			vt_set_cap(&q, 3, o.ow.nuns, d.n);
			if (gg_call_gpu(&c, &d, &q, &ps.s, &g, err, sizeof(err)) != 0)
				VT_CHECK(0, "gpu big, no room: %s", err);
			else
			{
				VT_CHECK(o.ngroups == 0 || (g.ngroups > g.cap && gt_guard_ok(&g, ps.s.nfilters)),
						 "gpu big: %lld groups in room for %lld", (long long) g.ngroups,
						 (long long) g.cap);
				checks += 1 + gt_check_unsure("gpu big, no room", &d, &o.ow, g.nunsure,
											  q.unsure, q.cap);
			}
			gt_free(&g);
			vt_dev_free(&c.dev);
		}
		pt_set_free(&ps);
		gt_oracle_free(&o);
		vt_qfree(&q);
		vt_free(&d);
	}
	vt_group_end("group gpu: 2^20 entries, 10^5 / 1 / 10^6 groups", checks);
}

/* grouped and filtered aggregates in turn on one context */
static void
gg_mixed(gbt_vagg_gpu_ctx *ctx)
{
	long		checks = 0;
	int			it;

	for (it = 0; it < 20; it++)
	{
		vt_data		d;
		vt_query	q;
		pt_set		ps;
		gt_oracle	o;
		gg_ctx		c;
		int			gcol;

		gt_data(&d, vt_below(it % 2 ? 40000 : 2000), it, it % GT_G_NMODES, NULL, &gcol);
		pt_make_set(&ps, &d, 4);
		pt_query(&q, &d, it % VT_R_NMODES, 0);
		gt_oracle_run(&d, &q, &ps.s, gcol, &o);
		c.ctx = ctx;
		if (vt_to_dev(&d, &c.dev) != 0)
			VT_CHECK(0, "device copy");
		else
		{
			gbt_agg_result cres[GBT_PRED_MAX_FILTERS],
						gres[GBT_PRED_MAX_FILTERS];
			char		err[256];
			int			f;

			checks += gg_vs_cpu("mixed grouped", &c, &d, &q, &ps.s, gcol, &o);
			vt_set_cap(&q, 5, o.ow.nuns, d.n);
			if (gbt_vagg_filtered_cpu(&d.in, q.start, q.end, q.R, q.vis, q.nvis, &ps.s, cres,
									  NULL, 0, err, sizeof(err)) != 0 ||
				gbt_vagg_filtered_gpu(ctx, &c.dev.in, q.start, q.end, q.R, q.vis, q.nvis,
									  &ps.s, gres, q.unsure, q.cap, err, sizeof(err)) != 0)
				VT_CHECK(0, "mixed filtered: %s", err);
			else
				for (f = 0; f < ps.s.nfilters; f++, checks++)
					VT_CHECK(gres[f].count == cres[f].count &&
							 gres[f].nunsure == cres[f].nunsure,
							 "mixed filtered %d: count %lld want %lld", f,
							 (long long) gres[f].count, (long long) cres[f].count);
			checks += gg_vs_cpu("mixed grouped again", &c, &d, &q, &ps.s, gcol, &o);
			vt_dev_free(&c.dev);
		}
		pt_set_free(&ps);
		gt_oracle_free(&o);
		vt_qfree(&q);
		vt_free(&d);
	}
	vt_group_end("group gpu: a context shared with filtered calls", checks);
}

/* the GPU engine's op against the CPU twin's on the same engine data */
static long
gg_engine_twin(int64_t n, int m, int it)
{
	const gbt_engine_ops *gops = gbt_engine_gpu_ops(),
			   *cops = gbt_engine_cpu_ops();
	vt_data		d;
	vt_query	q;
	pt_set		ps;
	gt_oracle	o;
	uint64_t   *keys = (uint64_t *) malloc((n + 1) * 8);
	gbt_engine *ge = NULL,
			   *ce = NULL;
	gbt_groups	gg,
				cg;
	char		err[256];
	int			gcol;
	long		checks = 1;

	gt_data(&d, n, it, m, keys, &gcol);
	pt_make_set(&ps, &d, 3);
	pt_query(&q, &d, it % VT_R_NMODES, 0);
	gt_oracle_run(&d, &q, &ps.s, gcol, &o);
	gt_alloc(&gg, gcol, o.ngroups, ps.s.nfilters);
	gt_alloc(&cg, gcol, o.ngroups, ps.s.nfilters);
	vt_set_cap(&q, 5, o.ow.nuns, d.n);
	if (gops->build(keys, &d.in, 0, &ge, err, sizeof(err)) != 0 ||
		cops->build(keys, &d.in, -1, &ce, err, sizeof(err)) != 0)
		VT_CHECK(0, "engine build: %s", err);
	else if (cops->aggregate_grouped(ce, d.removed, 1, q.start, q.end, q.R, q.vis, q.nvis,
									 &ps.s, &cg, NULL, 0, err, sizeof(err)) != 0 ||
			 gops->aggregate_grouped(ge, d.removed, 1, q.start, q.end, q.R, q.vis, q.nvis,
									 &ps.s, &gg, q.unsure, q.cap, err, sizeof(err)) != 0)
		VT_CHECK(0, "engine aggregate_grouped: %s", err);
	else
	{
		long double *sumabs = gt_sumabs(&d, &ps.s, gcol, o.ow.take, &cg);

		checks += gt_compare("engine gpu vs twin", &d, ps.s.nfilters, &gg, &cg, sumabs);
		checks += gt_check_unsure("engine gpu", &d, &o.ow, gg.nunsure, q.unsure, q.cap);
		free(sumabs);
	}
	if (ge)
		gops->free(ge);
	if (ce)
		cops->free(ce);
	gt_free(&gg);
	gt_free(&cg);
	pt_set_free(&ps);
	gt_oracle_free(&o);
	vt_qfree(&q);
	vt_free(&d);
	free(keys);
	return checks;
}

/* ---------------- timings ---------------- */

static double
gg_median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

/*
 * 2^26 entries (an INT64 group column, a FLOAT8 column, every block
 * visible) and a 10 % range grouped: the median of 5 calls after one, and
 * the CPU reference's result compared once.
 */
static void
gg_timings(gbt_vagg_gpu_ctx *ctx)
{
	const int64_t n = (int64_t) 1 << 26,
				len = n / 10;
	static const char *const names[] = {
		"10 groups", "100,000 groups", "100,000 groups, values in order", "one group",
		"a million groups of one entry"
	};
	vt_data		d;
	vt_query	q;
	gbt_pred_set s;
	long		checks = 0;
	int			cs;

	vt_make(&d, n, 2, n / 64, -1);
	d.in.coltype[0] = GBT_VAL_INT64;
	d.in.coltype[1] = GBT_VAL_FLOAT8;
	for (int64_t i = 0; i < n; i++)
	{
		d.blocks[i] = (uint32_t) (i / 64);
		((double *) d.cols[1])[i] = (vt_unit() - 0.5) * 1e6;
	}
	for (int c = 0; c < 2; c++)
	{
		free(d.nulls[c]);
		d.nulls[c] = NULL;
		d.in.nulls[c] = NULL;
	}
	memset(&q, 0, sizeof(q));
	q.R = 1;
	q.start = (int64_t *) malloc(8);
	q.end = (int64_t *) malloc(8);
	q.nvis = n / 64;
	q.vis = vt_bitmap(q.nvis, 1.0);
	memset(&s, 0, sizeof(s));
	s.nfilters = 1;
	for (cs = 0; cs < 5; cs++)
	{
		int64_t    *v = (int64_t *) d.cols[0],
					rlen = cs == 4 ? 1000000 : len,
					ng;
		gg_ctx		c;
		gbt_groups	g,
					cg;
		std::vector<double> ms;
		char		err[256];

		for (int64_t i = 0; i < n; i++)
			v[i] = cs == 0 ? vt_below(10) : cs == 1 ? vt_below(100000) :
				cs == 2 ? i / (len / 100000 + 1) : cs == 3 ? 7 : i;
		q.start[0] = n / 3;
		q.end[0] = n / 3 + rlen;
		ng = cs == 0 ? 10 : cs == 3 ? 1 : cs == 4 ? rlen : 100001;
		c.ctx = ctx;
		if (vt_to_dev(&d, &c.dev) != 0)
		{
			VT_CHECK(0, "device copy");
			break;
		}
		gt_alloc(&g, 0, ng, 1);
		for (int rep = 0; rep < 6; rep++)
		{
			auto		t0 = std::chrono::steady_clock::now();

			if (gbt_vagg_grouped_gpu(ctx, &c.dev.in, q.start, q.end, 1, q.vis, q.nvis, &s, &g,
									 NULL, 0, err, sizeof(err)) != 0)
			{
				VT_CHECK(0, "timing %s: %s", names[cs], err);
				break;
			}
			if (rep > 0)
				ms.push_back(std::chrono::duration<double, std::milli>(
								 std::chrono::steady_clock::now() - t0).count());
		}
		if (!ms.empty())
			printf("  timing: 2^26 entries, a range of %lld in %s (%lld groups): %.3f ms "
				   "(median of %zu)\n", (long long) rlen, names[cs], (long long) g.ngroups,
				   gg_median(ms), ms.size());
		gt_alloc(&cg, 0, ng, 1);
		if (gbt_vagg_grouped_cpu(&d.in, q.start, q.end, 1, q.vis, q.nvis, &s, &cg, NULL, 0,
								 err, sizeof(err)) != 0)
			VT_CHECK(0, "timing cpu: %s", err);
		else
		{
			uint8_t    *take = (uint8_t *) calloc(n + 1, 1);
			long double *sumabs;

			memset(take + q.start[0], 1, rlen);
			sumabs = gt_sumabs(&d, &s, 0, take, &cg);
			checks += gt_compare(names[cs], &d, 1, &g, &cg, sumabs);
			free(sumabs);
			free(take);
		}
		gt_free(&cg);
		gt_free(&g);
		vt_dev_free(&c.dev);
	}
	vt_qfree(&q);
	vt_free(&d);
	vt_group_end("group gpu: 2^26 entries, timed cases vs cpu", checks);
}

int
main(int argc, char **argv)
{
	int			nd = 0,
				dev = 0;
	cudaDeviceProp p;
	uint64_t	seed;
	gbt_vagg_gpu_ctx *ctx;
	long		checks = 0;

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
	printf("grouped aggregate GPU tests on %s, seed %llu%s\n", p.name,
		   (unsigned long long) seed, vt_quick ? " (quick)" : "");
	ctx = gbt_vagg_gpu_ctx_create();
	gg_small(ctx);
	gg_ranges(ctx);
	if (!vt_quick)
		gg_big(ctx);
	gg_mixed(ctx);
	vt_group_end("group gpu: GPU engine's aggregate_grouped vs oracle",
				 gt_engine_suite(gbt_engine_gpu_ops(), 0));
	{
		int			ndev = 1;

		(void) cudaGetDeviceCount(&ndev);
		tb_split_inner = gbt_engine_gpu_ops();
		tb_split_ndev = ndev;
		vt_group_end("group gpu: GPU engine split in 1-4 parts vs oracle",
					 gt_engine_suite(gbt_engine_split_ops(), 0));
	}
	for (int m = 0; m < GT_G_NMODES; m++)
		for (int it = 0; it < 4; it++)
			checks += gg_engine_twin(it % 2 ? 30000 : 700, m, it);
	vt_group_end("group gpu: GPU engine vs CPU twin", checks);
	if (!vt_quick)
		gg_timings(ctx);
	gbt_vagg_gpu_ctx_free(ctx);
	printf("%ld GPU calls\n", vt_gpu_calls);
	printf("%d passed, %d failed\n", vt_passed, vt_failed);
	return vt_failed ? 1 : 0;
}
