/*
 * vagg GPU implementation vs the CPU reference and the oracle of
 * test_vagg_cpu.c, on fresh random data each run (the seed is printed; pass
 * one as argv[1] to replay).  Every output of every call is checked: the
 * GPU result against the oracle (exact fields exactly, float sums against
 * the exact sum), against the CPU reference (all fields identical but the
 * float sums, which must agree to 2e-15), and the unsure positions as a set
 * against the CPU's when they fit, else as genuine and distinct, with
 * nothing written past the capacity.  Without a CUDA device it prints
 * "SKIPPED: no GPU" and exits 0.
 *
 *   test_vagg_gpu [seed]       the tests
 *   test_vagg_gpu --quick [seed]  small sizes only (for compute-sanitizer)
 *   test_vagg_gpu --bench      the benchmark (make bench-vagg)
 */
#define VT_NO_MAIN
#include "test_vagg_cpu.c"

#include <algorithm>
#include <cuda_runtime.h>
#include <vector>

typedef struct
{
	gbt_agg_input in;			/* device arrays */
} vt_dev;

static int
vt_dcopy(const void *h, size_t bytes, const void **dp)
{
	void	   *p = NULL;

	*dp = NULL;
	if (!h)
		return 0;
	if (cudaMalloc(&p, bytes + 8) != cudaSuccess ||
		cudaMemcpy(p, h, bytes, cudaMemcpyHostToDevice) != cudaSuccess)
	{
		printf("  FAIL: device copy of %zu bytes: %s\n", bytes,
			   cudaGetErrorString(cudaGetLastError()));
		cudaFree(p);
		return 1;
	}
	*dp = p;
	return 0;
}

static int
vt_to_dev(const vt_data *d, vt_dev *g)
{
	int			c,
				bad = 0;
	size_t		n = (size_t) d->n,
				nb = (n + 7) / 8;
	const void *p;

	memset(g, 0, sizeof(*g));
	g->in = d->in;
	bad |= vt_dcopy(d->blocks, n * 4, &p);
	g->in.blocks = (const uint32_t *) p;
	bad |= vt_dcopy(d->removed, nb, &p);
	g->in.removed = (const uint8_t *) p;
	for (c = 0; c < d->in.ncols; c++)
	{
		bad |= vt_dcopy(d->in.cols[c], ((d->in.narrow >> c) & 1) ? n * 4 : n * 8,
						&g->in.cols[c]);
		bad |= vt_dcopy(d->in.nulls[c], nb, &p);
		g->in.nulls[c] = (const uint8_t *) p;
	}
	return bad;
}

static void
vt_dev_free(vt_dev *g)
{
	int			c;

	cudaFree((void *) g->in.blocks);
	cudaFree((void *) g->in.removed);
	for (c = 0; c < g->in.ncols; c++)
	{
		cudaFree((void *) g->in.cols[c]);
		cudaFree((void *) g->in.nulls[c]);
	}
}

/* GPU vs CPU: everything identical except the float sums */
static long
vt_vs_cpu(const vt_data *d, const vt_query *q, const gbt_agg_result *g,
		  const int64_t *gu, const gbt_agg_result *cr, const int64_t *cu)
{
	int			c;
	long		checks = 0;

	VT_CHECK(g->count == cr->count && g->nunsure == cr->nunsure,
			 "gpu count/nunsure %lld/%lld, cpu %lld/%lld", (long long) g->count,
			 (long long) g->nunsure, (long long) cr->count, (long long) cr->nunsure);
	for (c = 0; c < GBT_MAX_COLS; c++)
	{
		const gbt_agg_col *x = &g->col[c],
				   *y = &cr->col[c];

		VT_CHECK(x->nonnull == y->nonnull && x->sum_hi == y->sum_hi && x->sum_lo == y->sum_lo &&
				 x->nnan == y->nnan && x->npinf == y->npinf && x->nninf == y->nninf &&
				 x->min_i == y->min_i && x->max_i == y->max_i &&
				 x->ties == y->ties && vt_fsame(x->min_f, y->min_f, y->ties & GBT_TIE_MIN) &&
				 vt_fsame(x->max_f, y->max_f, y->ties & GBT_TIE_MAX),
				 "gpu col %d differs from cpu", c);
		/*
		 * Not where values cancel past a double-double's reach (special
		 * values include +-1e300 and +-2^900): vt_fsum_ok holds both sums
		 * to the exact one there.
		 */
		if (c < d->in.ncols && d->dist[c] != VT_F_PATHO && d->dist[c] != VT_F_SPECIAL)
		{
			vt_sacc		a;
			long double diff;

			memset(&a, 0, sizeof(a));
			vt_sa_add(&a, x->fsum_hi);
			vt_sa_add(&a, x->fsum_lo);
			vt_sa_add(&a, -y->fsum_hi);
			vt_sa_add(&a, -y->fsum_lo);
			diff = fabsl(vt_sa_value(&a));
			VT_CHECK(diff <= 2e-15L * fabs(y->fsum_hi),
					 "gpu col %d fsum %.17g+%.3g, cpu %.17g+%.3g", c, x->fsum_hi,
					 x->fsum_lo, y->fsum_hi, y->fsum_lo);
		}
		checks += 2;
	}
	if (q->cap >= cr->nunsure)
	{
		std::vector<int64_t> a(gu, gu + g->nunsure),
					b(cu, cu + cr->nunsure);

		std::sort(a.begin(), a.end());
		std::sort(b.begin(), b.end());
		VT_CHECK(a == b, "gpu unsure set differs from cpu's (%zu vs %zu)", a.size(), b.size());
		checks++;
	}
	return checks + 1;
}

static long vt_gpu_calls;
static int	vt_quick;			/* --quick: small sizes only */

/*
 * test_pred_gpu.cu includes this file with VG_NO_MAIN defined, for the
 * device copies and vt_vs_cpu() above.
 */
#ifndef VG_NO_MAIN

/* (d, q) through the GPU with cap modes capmodes (bits), checked */
static long
vt_run_gpu(gbt_vagg_gpu_ctx *ctx, const vt_data *d, const vt_dev *g, vt_query *q,
		   unsigned capmodes)
{
	vt_oracle	o;
	gbt_agg_result cres,
				gres;
	vt_query	cq;
	char		err[256];
	long		checks = 0;
	int			capmode;

	vt_oracle_run(d, q, &o);
	for (capmode = 0; capmode < 6; capmode++)
	{
		if (!((capmodes >> capmode) & 1))
			continue;
		vt_set_cap(q, capmode, o.nuns, d->n);
		cq = *q;
		cq.unsure = (int64_t *) malloc((q->cap + VT_GUARD) * 8);
		memcpy(cq.unsure, q->unsure, (q->cap + VT_GUARD) * 8);
		memset(&cres, 0x77, sizeof(cres));
		memset(&gres, 0x77, sizeof(gres));
		err[0] = 0;
		if (gbt_vagg_cpu(&d->in, q->start, q->end, q->R, q->vis, q->nvis, &cres,
						 cq.unsure, q->cap, err, sizeof(err)) != 0)
			VT_CHECK(0, "gbt_vagg_cpu failed: %s", err);
		else if (gbt_vagg_gpu(ctx, &g->in, q->start, q->end, q->R, q->vis, q->nvis, &gres,
							  q->unsure, q->cap, err, sizeof(err)) != 0)
			VT_CHECK(0, "gbt_vagg_gpu failed: %s", err);
		else
		{
			checks += vt_check("gpu", d, q, &o, &gres, q->unsure);
			checks += vt_vs_cpu(d, q, &gres, q->unsure, &cres, cq.unsure);
		}
		vt_gpu_calls++;
		free(cq.unsure);
	}
	vt_oracle_free(&o);
	return checks;
}

static long
vt_case(gbt_vagg_gpu_ctx *ctx, int64_t n, int ncols, int64_t nblocks, double removed,
		int rmode, int64_t want, int vmode, unsigned capmodes)
{
	vt_data		d;
	vt_dev		g;
	vt_query	q;
	long		checks = 0;

	vt_make(&d, n, ncols, nblocks, removed);
	/* min/max ties across threads and blocks of the reduction, often */
	for (int c = 0; c < ncols; c++)
		if (d.in.coltype[c] == GBT_VAL_FLOAT8 && vt_below(2))
			vt_refill(&d, c, VT_F_ZEROS + (int) vt_below(3));
	vt_vary_forms(&d, NULL);
	if (vt_to_dev(&d, &g) == 0)
	{
		memset(&q, 0, sizeof(q));
		vt_ranges(&q, n, rmode, want);
		vt_visible(&q, d.nblocks, vmode < 0 ? (int) vt_below(VT_V_NMODES) : vmode);
		checks = vt_run_gpu(ctx, &d, &g, &q, capmodes);
		vt_qfree(&q);
	}
	else
		vt_nfail++;
	vt_dev_free(&g);
	vt_free(&d);
	return checks;
}

static double
vt_removed_mode(int i)
{
	return i % 3 == 0 ? -1 : i % 3 == 1 ? 0.2 : (i % 7 == 2 ? 1.0 : 0.0);
}

static void
test_small(gbt_vagg_gpu_ctx *ctx)
{
	static const int64_t sizes[] = {0, 1, 2, 7, 31, 32, 33, 127, 128, 129, 1000, 4097, 65543};
	long		checks = 0;
	int			si,
				it;

	for (si = 0; si < (int) (sizeof(sizes) / sizeof(sizes[0])); si++)
		for (it = 0; it < (vt_quick ? 10 : 40); it++)
		{
			int64_t		n = sizes[si],
						nb = it % 5 == 4 ? 0 : 1 + vt_below(n / (1 + vt_below(8)) + 2);

			checks += vt_case(ctx, n, it % 5, nb, vt_removed_mode(it), it % VT_R_NMODES, 0, -1,
							  it & 1 ? 0x3f : (1u << (it / 2 % 6)));
		}
	vt_group_end("gpu: n 0..65543, all modes", checks);
}

static void
test_ranges(gbt_vagg_gpu_ctx *ctx)
{
	long		checks = 0;
	int			it;

	/* around the host/device prefix-sum threshold (16384 ranges), and many
	 * tiny ranges, with empty ones and adjacent ones */
	for (it = 0; it < (vt_quick ? 8 : 24); it++)
	{
		int64_t		n = it < 12 ? 100000 : 3000000,
					want = it % 4 == 0 ? 16384 : it % 4 == 1 ? 16385 : it % 4 == 2 ? 1000000 : 0;

		checks += vt_case(ctx, n, it % 5, n / 20, vt_removed_mode(it),
						  it & 1 ? VT_R_TINY : VT_R_PARTITION, want, -1, it & 2 ? 0x3f : 0x0b);
	}
	/* few ranges, long */
	for (it = 0; it < (vt_quick ? 2 : 8); it++)
		checks += vt_case(ctx, 1 << 20, it % 5, (1 << 20) / 64, vt_removed_mode(it),
						  VT_R_FEW, 50, it % VT_V_NMODES, 0x3f);
	vt_group_end("gpu: 1..10^6 ranges, host and device prefix", checks);
}

static void
test_edge(gbt_vagg_gpu_ctx *ctx)
{
	long		checks = 0;
	int			c,
				a,
				b;
	int64_t		i;
	vt_data		d;
	vt_dev		g;
	vt_query	q;

	/* int64 extremes in 4 columns: sums far beyond int64 */
	vt_make(&d, 200000, 4, 1000, -1);
	for (c = 0; c < 4; c++)
	{
		d.in.coltype[c] = GBT_VAL_INT64;
		d.dist[c] = c < 2 ? VT_I_MAXPOS : c == 2 ? VT_I_MAXNEG : VT_I_EXTREME;
		for (i = 0; i < d.n; i++)
			((int64_t *) d.cols[c])[i] = vt_int(d.dist[c]);
	}
	if (vt_to_dev(&d, &g) == 0)
	{
		memset(&q, 0, sizeof(q));
		vt_ranges(&q, d.n, VT_R_FULL, 0);
		vt_visible(&q, d.nblocks, VT_V_ALL);
		checks += vt_run_gpu(ctx, &d, &g, &q, 0x3f);
		vt_qfree(&q);
	}
	vt_dev_free(&g);
	vt_free(&d);

	/* float specials, pairs and triples */
	{
		static const double fs[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 0x1p-1074, -0x1p-1074,
		0x1p-1022, 1e300, -1e300, 1.0, -1.0};

		for (a = 0; a < 12; a++)
			for (b = 0; b < 12; b += 1 + (a & 1))
			{
				vt_make(&d, 3, 1, 1, -1);
				d.in.coltype[0] = GBT_VAL_FLOAT8;
				d.dist[0] = VT_F_SPECIAL;
				((double *) d.cols[0])[0] = fs[a];
				((double *) d.cols[0])[1] = fs[b];
				((double *) d.cols[0])[2] = fs[(a + b) % 12];
				free(d.nulls[0]);
				d.nulls[0] = NULL;
				d.in.nulls[0] = NULL;
				if (vt_to_dev(&d, &g) == 0)
				{
					memset(&q, 0, sizeof(q));
					vt_ranges(&q, d.n, VT_R_FULL, 0);
					vt_visible(&q, d.nblocks, VT_V_ALL);
					checks += vt_run_gpu(ctx, &d, &g, &q, 0x08);
					vt_qfree(&q);
				}
				vt_dev_free(&g);
				vt_free(&d);
			}
	}
	/* beyond double-double: only the contract's bound */
	vt_make_adversarial(&d, 20000);
	if (vt_to_dev(&d, &g) == 0)
	{
		memset(&q, 0, sizeof(q));
		vt_ranges(&q, d.n, VT_R_FULL, 0);
		vt_visible(&q, d.nblocks, VT_V_ALL);
		checks += vt_run_gpu(ctx, &d, &g, &q, 0x08);
		vt_qfree(&q);
	}
	vt_dev_free(&g);
	vt_free(&d);
	vt_group_end("gpu: int64 extremes, float specials", checks);
}

static void
test_big(gbt_vagg_gpu_ctx *ctx)
{
	long		checks = 0;
	int			it;

	for (it = 0; it < 10; it++)
	{
		int64_t		n = it < 6 ? (1 << 22) + vt_below(100) : 1 << 24;
		int			rmode = it % 3 == 0 ? VT_R_TINY : it % 3 == 1 ? VT_R_FULL : VT_R_FEW;

		checks += vt_case(ctx, n, it % 5, it == 4 ? 0 : n / (1 + vt_below(100)),
						  it & 1 ? -1 : 0.1, rmode, rmode == VT_R_TINY ? 1000000 : 100,
						  it % VT_V_NMODES, it & 1 ? 0x38 : 0x07);
	}
	vt_group_end("gpu: 2^22..2^24 entries", checks);
}

static void
test_errors(gbt_vagg_gpu_ctx *ctx)
{
	long		checks = 0;
	vt_data		d;
	vt_dev		g;
	gbt_agg_result res;
	char		err[200];
	int64_t		R = 20000,
				r,
				u[4];
	std::vector<int64_t> s(R),
				e(R);
	uint8_t		vis[1] = {0xff};

	vt_make(&d, 100000, 2, 8, -1);
	if (vt_to_dev(&d, &g))
	{
		vt_nfail++;
		vt_group_end("gpu: argument errors", 0);
		return;
	}
	for (r = 0; r < R; r++)
	{
		s[r] = r * 5;
		e[r] = r * 5 + 2;
	}
#define EXPECT_ERR(call, what) do { err[0] = 0; VT_CHECK((call) != 0 && err[0] != 0, "%s accepted", what); checks++; } while (0)
	/* host-checked (few ranges) and device-checked (many ranges) */
	e[7] = 100001;
	EXPECT_ERR(gbt_vagg_gpu(ctx, &g.in, s.data(), e.data(), 10, vis, 8, &res, u, 4, err, sizeof(err)),
			   "end > n (host)");
	EXPECT_ERR(gbt_vagg_gpu(ctx, &g.in, s.data(), e.data(), R, vis, 8, &res, u, 4, err, sizeof(err)),
			   "end > n (device)");
	e[7] = 7 * 5 + 2;
	s[R - 1] = e[R - 1] + 1;
	EXPECT_ERR(gbt_vagg_gpu(ctx, &g.in, s.data(), e.data(), R, vis, 8, &res, u, 4, err, sizeof(err)),
			   "start > end (device)");
	s[R - 1] = -1;
	EXPECT_ERR(gbt_vagg_gpu(ctx, &g.in, s.data(), e.data(), R, vis, 8, &res, u, 4, err, sizeof(err)),
			   "start < 0 (device)");
	s[R - 1] = (R - 1) * 5;
	e[0] = 100000;
	EXPECT_ERR(gbt_vagg_gpu(ctx, &g.in, s.data(), e.data(), R, vis, 8, &res, u, 4, err, sizeof(err)),
			   "total > n (device)");
	EXPECT_ERR(gbt_vagg_gpu(ctx, &g.in, s.data(), e.data(), 30, vis, 8, &res, u, 4, err, sizeof(err)),
			   "total > n (host)");
	e[0] = 2;
	EXPECT_ERR(gbt_vagg_gpu(NULL, &g.in, s.data(), e.data(), 1, vis, 8, &res, u, 4, err, sizeof(err)),
			   "NULL context");
	EXPECT_ERR(gbt_vagg_gpu(ctx, &g.in, s.data(), e.data(), 1, vis, 8, &res, NULL, 4, err, sizeof(err)),
			   "NULL unsure");
	EXPECT_ERR(gbt_vagg_gpu(ctx, &g.in, s.data(), e.data(), 1, NULL, 8, &res, u, 4, err, sizeof(err)),
			   "NULL visible");
	/* and the context still works */
	VT_CHECK(gbt_vagg_gpu(ctx, &g.in, s.data(), e.data(), R, vis, 8, &res, u, 4, err, sizeof(err)) == 0,
			 "good call after errors: %s", err);
	VT_CHECK(res.count + res.nunsure == 2 * R, "good call after errors: %lld + %lld entries",
			 (long long) res.count, (long long) res.nunsure);
	VT_CHECK(gbt_vagg_gpu(ctx, &g.in, NULL, NULL, 0, NULL, 0, &res, NULL, 0, NULL, 0) == 0 &&
			 res.count == 0 && res.nunsure == 0, "empty query, NULL arrays");
	checks += 3;
#undef EXPECT_ERR
	vt_dev_free(&g);
	vt_free(&d);
	vt_group_end("gpu: argument errors", checks);
}

/* ---------------- benchmark ---------------- */

static double
vt_median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v.empty() ? 0 : v[v.size() / 2];
}

static int
bench(void)
{
	static const int64_t sizes[] = {(int64_t) 1 << 24, (int64_t) 1 << 26};
	static const double fracs[] = {0.0001, 0.01, 0.1, 1.0};
	gbt_vagg_gpu_ctx *ctx = gbt_vagg_gpu_ctx_create();
	char		err[256];
	int			si,
				bad = 0;

	gbt_vagg_gpu_ctx_timing(ctx, 1);
	printf("vagg benchmark: 2 payload columns (int64, float8), no NULLs, nothing removed,\n"
		   "~32 entries per heap block in random order; ms per query, median of 20\n"
		   "(h2d: ranges + visibility map in, d2h: result + unsure positions out;\n"
		   "GB/s: bytes of entries read / kernel time)\n\n");
	printf("%-9s %-22s %5s %9s %8s %8s %8s %8s %8s %7s %s\n", "entries", "ranges", "vis%",
		   "aggregated", "unsure", "kernel", "h2d", "d2h", "total", "GB/s", "check");
	for (si = 0; si < 2; si++)
	{
		int64_t		n = sizes[si],
					nblocks = n / 32,
					i;
		std::vector<uint32_t> blocks(n);
		std::vector<int64_t> vi(n);
		std::vector<double> vf(n);
		gbt_agg_input in;
		vt_dev		g;
		vt_data		d;
		int			vp,
					fi;

		for (i = 0; i < n; i++)
		{
			uint64_t	x = vt_rnd();

			blocks[i] = (uint32_t) (x % (uint64_t) nblocks);
			vi[i] = (int64_t) (x >> 20) - ((int64_t) 1 << 43);
			vf[i] = (double) (int64_t) (x >> 11) * 0x1p-40 - 4096.0;
		}
		memset(&in, 0, sizeof(in));
		in.n = n;
		in.blocks = blocks.data();
		in.ncols = 2;
		in.coltype[0] = GBT_VAL_INT64;
		in.cols[0] = vi.data();
		in.coltype[1] = GBT_VAL_FLOAT8;
		in.cols[1] = vf.data();
		memset(&d, 0, sizeof(d));
		d.in = in;
		d.n = n;
		d.blocks = blocks.data();
		d.cols[0] = vi.data();
		d.cols[1] = vf.data();
		if (vt_to_dev(&d, &g))
			return 1;
		for (vp = 100; vp >= 95; vp -= 5)
		{
			std::vector<uint8_t> vis((nblocks + 7) / 8, 0xff);

			if (vp < 100)
				for (i = 0; i < nblocks; i++)
					if (vt_below(100) >= vp)
						vis[i >> 3] &= (uint8_t) ~(1 << (i & 7));
			for (fi = 0; fi < 4 + 3; fi++)
			{
				std::vector<int64_t> s,
							e;
				int64_t		cap = 1 << 16;
				char		label[64];
				std::vector<double> tk,
							th,
							td,
							tt;
				gbt_agg_result res,
							cres;
				std::vector<int64_t> uns;
				int			it,
							ok = 1;

				if (fi < 4)
				{
					int64_t		len = (int64_t) (fracs[fi] * n),
								st = vt_below(n - len + 1);

					s.push_back(st);
					e.push_back(st + len);
					snprintf(label, sizeof(label), "1 range, %g%%", fracs[fi] * 100);
				}
				else
				{
					/* 10^6 ranges of L entries, evenly spread, random order */
					int64_t		R = 1000000,
								L = fi == 4 ? 1 : fi == 5 ? 8 : 8,
								gap = n / R;

					for (i = 0; i < R; i++)
					{
						s.push_back(i * gap + vt_below(gap - L + 1));
						e.push_back(s.back() + L);
					}
					for (i = R - 1; i > 0; i--)
					{
						int64_t		j = vt_below(i + 1);

						std::swap(s[i], s[j]);
						std::swap(e[i], e[j]);
					}
					if (fi == 6)
						cap = n;	/* every unsure position back */
					snprintf(label, sizeof(label), "10^6 x %lld%s", (long long) L,
							 fi == 6 ? ", all unsure" : "");
				}
				uns.resize(cap);
				for (it = 0; it < 23; it++)
				{
					gbt_vagg_gpu_times t;

					if (gbt_vagg_gpu(ctx, &g.in, s.data(), e.data(), (int64_t) s.size(), vis.data(),
									 nblocks, &res, uns.data(), cap, err, sizeof(err)))
					{
						printf("gbt_vagg_gpu failed: %s\n", err);
						return 1;
					}
					if (it < 3 || gbt_vagg_gpu_last_times(ctx, &t))
						continue;
					tk.push_back(t.kernel_ms);
					th.push_back(t.h2d_ms);
					td.push_back(t.d2h_ms);
					tt.push_back(t.total_ms);
				}
				{
					std::vector<int64_t> cu(cap);

					if (gbt_vagg_cpu(&in, s.data(), e.data(), (int64_t) s.size(), vis.data(), nblocks,
									 &cres, cu.data(), cap, err, sizeof(err)))
						ok = 0;
					else
					{
						long double diff = fabsl((long double) res.col[1].fsum_hi - cres.col[1].fsum_hi +
												 ((long double) res.col[1].fsum_lo - cres.col[1].fsum_lo));

						ok = res.count == cres.count && res.nunsure == cres.nunsure &&
							res.col[0].sum_hi == cres.col[0].sum_hi &&
							res.col[0].sum_lo == cres.col[0].sum_lo &&
							res.col[0].min_i == cres.col[0].min_i &&
							res.col[0].max_i == cres.col[0].max_i &&
							res.col[1].ties == cres.col[1].ties &&
							vt_fsame(res.col[1].min_f, cres.col[1].min_f,
									 cres.col[1].ties & GBT_TIE_MIN) &&
							vt_fsame(res.col[1].max_f, cres.col[1].max_f,
									 cres.col[1].ties & GBT_TIE_MAX) &&
							diff <= 1e-15L * fabs(cres.col[1].fsum_hi);
					}
					bad |= !ok;
				}
				{
					int64_t		tot = 0;
					double		km = vt_median(tk);

					for (i = 0; i < (int64_t) s.size(); i++)
						tot += e[i] - s[i];
					printf("%-9lld %-22s %5d %10lld %8lld %8.4f %8.4f %8.4f %8.4f %7.0f %s\n",
						   (long long) n, label, vp, (long long) res.count, (long long) res.nunsure,
						   km, vt_median(th), vt_median(td), vt_median(tt),
						   km > 0 ? tot * 20.0 / (km * 1e6) : 0.0, ok ? "ok" : "MISMATCH");
					fflush(stdout);
				}
			}
		}
		vt_dev_free(&g);
	}
	gbt_vagg_gpu_ctx_free(ctx);
	return bad;
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
	seed = argc > 1 && strcmp(argv[1], "--bench") != 0 ? strtoull(argv[1], NULL, 0) :
		((uint64_t) time(NULL) * 2654435761u) ^ (uint64_t) clock();
	vt_rng = seed;
	if (argc > 1 && strcmp(argv[1], "--bench") == 0)
	{
		printf("vagg GPU benchmark on %s, seed %llu\n", p.name, (unsigned long long) seed);
		return bench();
	}
	printf("vagg GPU tests on %s, seed %llu%s\n", p.name, (unsigned long long) seed,
		   vt_quick ? " (quick)" : "");
	ctx = gbt_vagg_gpu_ctx_create();
	test_small(ctx);
	test_ranges(ctx);
	test_edge(ctx);
	if (!vt_quick)
		test_big(ctx);
	test_errors(ctx);
	gbt_vagg_gpu_ctx_free(ctx);
	/* a fresh context for every call works too */
	{
		long		checks = 0;
		int			it;

		for (it = 0; it < (vt_quick ? 5 : 20); it++)
		{
			gbt_vagg_gpu_ctx *c1 = gbt_vagg_gpu_ctx_create();

			checks += vt_case(c1, 1 + vt_below(5000), it % 5, 50, vt_removed_mode(it),
							  it % VT_R_NMODES, 0, -1, 0x3f);
			gbt_vagg_gpu_ctx_free(c1);
		}
		vt_group_end("gpu: one context per query", checks);
	}
	printf("%ld GPU calls; largest float sum error seen: %.3g of the exact sum (pathological "
		   "data: %ld of %ld sums beyond 1e-15, all within n*2^-104*sum|x|)\n",
		   vt_gpu_calls, vt_max_relerr, vt_patho_loose, vt_patho_sums);
	printf("%d passed, %d failed\n", vt_passed, vt_failed);
	return vt_failed ? 1 : 0;
}

#endif							/* VG_NO_MAIN */
