/*
 * Harmonia benchmark (one GPU).  64-bit keys, trees of 2^23..2^26 keys,
 * 10^8 uniform (half present) and zipfian lookups; throughput counts the
 * PSA sort; transfers are timed separately.  Variants: Harmonia (PSA on/off,
 * NTG sizes, fanouts, combining), a sorted array searched with Thrust
 * (plain, and after the same CUB partial sort), a pointer-based B+tree of the
 * same fanout (HB+tree style), and the CPU twin on all cores (OpenMP).
 * Also 10^6 range searches (position ranges, as the engine's), and build
 * time per key.  Aggregates are vagg's benchmark (make bench-vagg).
 * Usage: bench [--quick] [--csv FILE]
 */
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <omp.h>
#include <thrust/binary_search.h>
#include <thrust/execution_policy.h>
#include <cub/cub.cuh>
#include "bound.h"

static FILE *csv;
static uint64_t rs = 88172645463325252ULL;

static double
now_ms()
{
	return std::chrono::duration<double, std::milli>(
		std::chrono::steady_clock::now().time_since_epoch()).count();
}

static inline uint64_t
mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

#define CU(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(2); } } while (0)
#define HM(x) do { hm_status s_ = (x); if (s_ != HM_OK) { \
	fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, hm_strerror(s_)); exit(2); } } while (0)

static void
row(int64_t n, const char *dist, const char *variant, int fanout, int psa, int gs, int comb,
	int64_t nq, double ms, double sort_ms, double extra)
{
	double		g = nq / ms / 1e6;

	fprintf(csv, "%ld,%s,%s,%d,%d,%d,%d,%ld,%.3f,%.3f,%.3f,%.4f\n", (long) n, dist, variant,
			fanout, psa, gs, comb, (long) nq, ms, sort_ms, extra, g);
	printf("  %-8s %-22s F=%-3d psa=%-2d gs=%-2d comb=%d  %9.3f ms  (sort %7.3f)  %7.3f G/s\n",
		   dist, variant, fanout, psa, gs, comb, ms, sort_ms, g);
	fflush(stdout);
	fflush(csv);
}

/* best of reps after one warm-up */
template <typename F>
static double
timeit(F f, int reps)
{
	double		best = 1e30;

	f();
	CU(cudaDeviceSynchronize());
	for (int i = 0; i < reps; i++)
	{
		double		t0 = now_ms();

		f();
		CU(cudaDeviceSynchronize());
		best = std::min(best, now_ms() - t0);
	}
	return best;
}

/* ---- pointer-based B+tree (HB+tree style): each node holds its keys and
 * real child pointers; node = [nk, base, keys[F], child pointers[F]] ---- */
static uint64_t *
ptree_build(const uint64_t *k, int64_t n, int F, uint64_t **alloc)
{
	int64_t		W = 2 * F + 2,
				nl = (n + F - 1) / F,
				total = 0,
				m = nl;

	while (m > 1)
	{
		total += m;
		m = (m + F - 1) / F;
	}
	total += 1;
	uint64_t   *h = (uint64_t *) calloc(total * W, 8),
			   *d;

	CU(cudaMalloc(&d, total * W * 8));
	for (int64_t i = 0; i < nl; i++)
	{
		uint64_t   *p = h + i * W;

		p[0] = std::min<int64_t>(F, n - i * F);
		p[1] = i * F;
		memcpy(p + 2, k + i * F, p[0] * 8);
	}
	std::vector<uint64_t> first(nl);
	for (int64_t i = 0; i < nl; i++)
		first[i] = k[i * F];
	int64_t		lvl = 0,
				cnt = nl,
				next = nl;

	while (cnt > 1)
	{
		int64_t		up = (cnt + F - 1) / F;
		std::vector<uint64_t> nf(up);

		for (int64_t j = 0; j < up; j++)
		{
			uint64_t   *p = h + (next + j) * W;
			int			nc = (int) std::min<int64_t>(F, cnt - j * F);

			nf[j] = first[j * F];
			p[0] = nc - 1;
			for (int c = 0; c < nc; c++)
			{
				p[2 + F + c] = (uint64_t) (d + (lvl + j * F + c) * W);
				if (c > 0)
					p[2 + c - 1] = first[j * F + c];
			}
		}
		first.swap(nf);
		lvl = next;
		next += up;
		cnt = up;
	}
	CU(cudaMemcpy(d, h, total * W * 8, cudaMemcpyHostToDevice));
	free(h);
	*alloc = d;
	return d + (next - 1) * W;	/* the root */
}

__global__ void
k_ptree(const uint64_t *root, int F, const uint64_t *q, const uint32_t *perm, int64_t nq,
		int64_t *pos)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;

	if (i >= nq)
		return;
	uint64_t	key = q[i];
	const uint64_t *p = root;

	while (p[2 + F] != 0)		/* inner: first child pointer set */
	{
		int			c = 0,
					nk = (int) p[0];

		while (c < nk && p[2 + c] < key)
			c++;
		p = (const uint64_t *) p[2 + F + c];
	}
	int			c = 0,
				nk = (int) p[0];

	while (c < nk && p[2 + c] < key)
		c++;
	pos[perm ? perm[i] : i] = p[1] + c;
}

__global__ void
k_scatter(const int64_t *src, const uint32_t *perm, int64_t n, int64_t *dst)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;

	if (i < n)
		dst[perm[i]] = src[i];
}

__global__ void
k_iota(uint32_t *a, int64_t n)
{
	int64_t		i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;

	if (i < n)
		a[i] = (uint32_t) i;
}

/* CUB partial sort of (q, iota) by the top bits, as PSA does */
struct sorter
{
	uint64_t   *sk;
	uint32_t   *iota,
			   *sp;
	void	   *ws;
	size_t		wsz;
	int64_t		n;

	void		init(int64_t nq)
	{
		n = nq;
		CU(cudaMalloc(&sk, n * 8));
		CU(cudaMalloc(&iota, n * 4));
		CU(cudaMalloc(&sp, n * 4));
		wsz = 0;
		cub::DeviceRadixSort::SortPairs(NULL, wsz, (uint64_t *) NULL, sk, iota, sp, (int) n, 0, 64);
		CU(cudaMalloc(&ws, wsz));
	}
	void		run(const uint64_t *q, int bits)
	{
		k_iota<<<(n + 255) / 256, 256>>>(iota, n);
		cub::DeviceRadixSort::SortPairs(ws, wsz, q, sk, iota, sp, (int) n, 64 - bits, 64);
	}
	void		fini()
	{
		cudaFree(sk);
		cudaFree(iota);
		cudaFree(sp);
		cudaFree(ws);
	}
};

int
main(int argc, char **argv)
{
	bool		quick = false;
	const char *csvpath = "bench.csv";
	cudaDeviceProp props;
	int			ndev = 0;

	for (int i = 1; i < argc; i++)
	{
		if (!strcmp(argv[i], "--quick"))
			quick = true;
		else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
			csvpath = argv[++i];
	}
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0 ||
		cudaGetDeviceProperties(&props, 0) != cudaSuccess)
	{
		printf("SKIPPED: no GPU\n");
		return 77;
	}
	csv = fopen(csvpath, "w");
	fprintf(csv, "keys,dist,variant,fanout,psa_bits,group,combine,queries,ms,sort_ms,extra,g_per_s\n");
	printf("device: %s, OpenMP threads %d\n", props.name, omp_get_max_threads());

	const int64_t nq = quick ? 10000000 : 100000000;
	const int	lo_exp = quick ? 20 : 23,
				hi_exp = quick ? 21 : 26;
	const char *dname[2] = {"uniform", "zipf"};
	uint64_t   *hq[2],
			   *dq[2];
	int64_t    *dpos,
			   *hpos,
			   *dtmp;

	for (int dz = 0; dz < 2; dz++)
	{
		CU(cudaMallocHost(&hq[dz], nq * 8));
		CU(cudaMalloc(&dq[dz], nq * 8));
	}
	CU(cudaMallocHost(&hpos, nq * 8));
	CU(cudaMalloc(&dpos, nq * 8));
	CU(cudaMalloc(&dtmp, nq * 8));
	sorter		srt;

	srt.init(nq);

	for (int e = lo_exp; e <= hi_exp; e++)
	{
		int64_t		n = (int64_t) 1 << e;
		uint64_t   *k = (uint64_t *) malloc(n * 8),
				   *sample = (uint64_t *) malloc(1024 * 8);
		uint64_t	x = 0,
					step = UINT64_MAX / n - 1;	/* mean gap half of it: no wrap */
		double		ms,
					sort_ms[2];

		for (int64_t i = 0; i < n; i++)
		{
			x += 1 + mix(rs++) % step;	/* distinct, spread over 64 bits */
			k[i] = x;
		}
		/* the NTG model's sample: the tree's own keys */
		for (int i = 0; i < 1024; i++)
			sample[i] = k[(int64_t) (((uint64_t) i * 2654435761u) % (uint64_t) n)];
		printf("== %ld keys (2^%d)\n", (long) n, e);
		int			psa_bits = hm_psa_bits(n, 64, 16);
		uint64_t   *dkeys;

		CU(cudaMalloc(&dkeys, n * 8));
		CU(cudaMemcpy(dkeys, k, n * 8, cudaMemcpyHostToDevice));

		for (int dz = 0; dz < 2; dz++)
		{
			uint64_t   *h = hq[dz];

			/* uniform: half present keys, half random; zipf(~1): hot keys scattered */
#pragma omp parallel for
			for (int64_t i = 0; i < nq; i++)
			{
				uint64_t	r = mix((uint64_t) i * 7919 + e * 1000003 + dz);

				if (!dz)
					h[i] = (r & 1) ? k[(r >> 1) % n] : mix(r);
				else
				{
					double		u = (double) (r >> 11) / 9007199254740992.0;
					uint64_t	rank = (uint64_t) std::exp(u * std::log((double) n)) - 1;

					h[i] = k[mix(rank + 12345) % n];
				}
			}
			double		t0 = now_ms();

			CU(cudaMemcpy(dq[dz], h, nq * 8, cudaMemcpyHostToDevice));
			row(n, dname[dz], "copy_h2d_queries_pinned", 0, 0, 0, 0, nq, now_ms() - t0, 0, 0);
			t0 = now_ms();
			CU(cudaMemcpy(hpos, dpos, nq * 8, cudaMemcpyDeviceToHost));
			row(n, dname[dz], "copy_d2h_positions_pinned", 0, 0, 0, 0, nq, now_ms() - t0, 0, 0);
			sort_ms[dz] = timeit([&] { srt.run(dq[dz], psa_bits); }, 3);
			row(n, dname[dz], "cub_partial_sort_only", 0, psa_bits, 0, 0, nq, sort_ms[dz], sort_ms[dz], 0);
			ms = timeit([&] {
				thrust::lower_bound(thrust::device, dkeys, dkeys + n, dq[dz], dq[dz] + nq, dpos); }, 3);
			row(n, dname[dz], "sorted_array_thrust", 0, 0, 0, 0, nq, ms, 0, 0);
			for (int bits = psa_bits;; bits = 24)
			{
				ms = timeit([&] {
					srt.run(dq[dz], bits);
					thrust::lower_bound(thrust::device, dkeys, dkeys + n, srt.sk, srt.sk + nq, dtmp);
					k_scatter<<<(nq + 255) / 256, 256>>>(dtmp, srt.sp, nq, dpos); }, 3);
				row(n, dname[dz], "sorted_array_thrust_psa", 0, bits, 0, 0, nq, ms, 0, 0);
				if (bits >= 24)
					break;
			}
		}

		for (int F = 8; F <= 128; F *= 2)
		{
			hm_tree    *t;
			double		b0 = now_ms();

			HM(hm_gpu_build(k, n, F, &t));
			row(n, "build", "harmonia_gpu_build", F, 0, 0, 0, n, now_ms() - b0, 0,
				(now_ms() - b0) * 1e6 / n);
			int			model = hm_gpu_choose_group_size(t, sample, 1024);
			uint64_t   *palloc;
			uint64_t   *root = ptree_build(k, n, F, &palloc);
			hm_opts		o;

			for (int dz = 0; dz < 2; dz++)
			{
				const char *dist = dname[dz];
				uint64_t   *q = dq[dz];

				for (int gs = 1; gs <= 32 && gs <= F; gs *= 2)
				{
					hm_default_opts(&o);
					o.group_size = gs;
					o.combine = 1;
					ms = timeit([&] { HM(hm_gpu_lower_bound(t, q, nq, dpos, &o)); }, 2);
					row(n, dist, gs == model ? "harmonia_psa_ntgmodel" : "harmonia_psa", F, psa_bits, gs, 1, nq, ms, sort_ms[dz], 0);
				}
				hm_default_opts(&o);
				o.psa_bits = 0;
				o.group_size = 1;
				o.combine = 1;
				ms = timeit([&] { HM(hm_gpu_lower_bound(t, q, nq, dpos, &o)); }, 2);
				row(n, dist, "harmonia_nopsa", F, 0, 1, o.combine, nq, ms, 0, 0);
				hm_default_opts(&o);
				o.group_size = 1;
				o.combine = 0;
				ms = timeit([&] { HM(hm_gpu_lower_bound(t, q, nq, dpos, &o)); }, 2);
				row(n, dist, "harmonia_psa_g1_nocombine", F, psa_bits, 1, 0, nq, ms, sort_ms[dz], 0);
				/* the engine's search: no sort, a query per thread (engine_gpu.cu) */
				o.psa_bits = 0;
				ms = timeit([&] { HM(hm_gpu_lower_bound(t, q, nq, dpos, &o)); }, 2);
				row(n, dist, "harmonia_nopsa_nocombine", F, 0, 1, 0, nq, ms, 0, 0);
				hm_default_opts(&o);
				o.group_size = 1;
				o.psa_bits = 24;
				o.combine = 1;
				ms = timeit([&] { HM(hm_gpu_lower_bound(t, q, nq, dpos, &o)); }, 2);
				row(n, dist, "harmonia_psa24", F, 24, 1, o.combine, nq, ms, 0, 0);
				hm_default_opts(&o);
				o.group_size = 1;
				o.combine = 0;
				ms = timeit([&] { HM(hm_gpu_lower_bound(t, q, nq, dpos, &o)); }, 2);
				row(n, dist, "harmonia_psa_nocombine", F, psa_bits, 1, 0, nq, ms, sort_ms[dz], 0);
				/* pointer B+tree of the same fanout, plain and after the same sort */
				ms = timeit([&] { k_ptree<<<(nq + 255) / 256, 256>>>(root, F, q, NULL, nq, dpos); }, 2);
				row(n, dist, "pointer_btree", F, 0, 1, 0, nq, ms, 0, 0);
				ms = timeit([&] {
					srt.run(q, psa_bits);
					k_ptree<<<(nq + 255) / 256, 256>>>(root, F, srt.sk, srt.sp, nq, dpos); }, 2);
				row(n, dist, "pointer_btree_psa", F, psa_bits, 1, 0, nq, ms, sort_ms[dz], 0);
			}
			CU(cudaFree(palloc));

			/* 10^6 range searches of up to 2000 keys each */
			if (F == 32)
			{
				const int64_t nr = 1000000;
				hm_range   *hr = (hm_range *) malloc(nr * sizeof(hm_range)),
						   *dr;
				int64_t    *dse;

				for (int64_t i = 0; i < nr; i++)
				{
					int64_t		a = mix(i + 99) % n,
								w = mix(i + 7) % 2000;

					hr[i].lo = k[a];
					hr[i].hi = k[std::min(n - 1, a + w)];
					hr[i].lo_incl = 1;
					hr[i].hi_incl = i & 1;
				}
				CU(cudaMalloc(&dr, nr * sizeof(hm_range)));
				CU(cudaMalloc(&dse, 2 * nr * sizeof(int64_t)));
				CU(cudaMemcpy(dr, hr, nr * sizeof(hm_range), cudaMemcpyHostToDevice));
				ms = timeit([&] { HM(hm_gpu_ranges(t, dr, nr, dse, dse + nr, -1)); }, 3);
				row(n, "ranges", "range_search", F, psa_bits, 1, 0, nr, ms, 0, 0);
				ms = timeit([&] { HM(hm_gpu_ranges(t, dr, nr, dse, dse + nr, 0)); }, 3);
				row(n, "ranges", "range_search_nopsa", F, 0, 1, 0, nr, ms, 0, 0);
				cudaFree(dr);
				cudaFree(dse);
				free(hr);
			}
			hm_gpu_free(t);
		}

		/* CPU twin on all cores, 10^7 of the queries */
		{
			hm_tree    *ct;
			const int64_t cq = nq / 10;
			double		c0 = now_ms();

			HM(hm_cpu_build(k, n, 32, &ct));	/* also checks the keys are sorted */
			row(n, "build", "cpu_twin_build", 32, 0, 0, 0, n, now_ms() - c0, 0, 0);
			for (int dz = 0; dz < 2; dz++)
			{
				c0 = now_ms();
#pragma omp parallel for schedule(static)
				for (int64_t i = 0; i < cq; i += 65536)
					hm_cpu_lower_bound(ct, hq[dz] + i, std::min<int64_t>(65536, cq - i), hpos + i, NULL);
				row(n, dname[dz], "cpu_twin_openmp", 32, 0, 0, 1, cq, now_ms() - c0, 0, 0);
			}
			hm_cpu_free(ct);
		}
		cudaFree(dkeys);
		free(k);
		free(sample);
	}
	srt.fini();
	fclose(csv);
	return 0;
}
