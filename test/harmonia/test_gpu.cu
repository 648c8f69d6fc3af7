/*
 * Harmonia's GPU tree vs its CPU twin on fresh random data: range search
 * (the engine's) and the benchmark's bounds (bound.h).  Every output element is
 * checked: outputs are poisoned first, bounds are verified exactly against
 * the sorted keys (k[p-1] < q <= k[p]), and a sample (all, for small
 * batches) is compared with the twin.  --quick: small sizes, for
 * compute-sanitizer.  Exit 77 with "SKIPPED: no GPU" when there is none.
 */
#include <cuda_runtime.h>
#include <omp.h>
#include <stdio.h>
#include <time.h>
#include "oracle.h"

static int	passed,
			failed;
static long nfail;

#define CHECK(cond, ...) do { if (!(cond)) { if (nfail++ < 5) { \
	printf("  FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } } while (0)
#define OK(call) do { hm_status s_ = (call); if (s_ != HM_OK) { \
	printf("  FAIL %s:%d: %s -> %s\n", __FILE__, __LINE__, #call, hm_strerror(s_)); nfail++; } } while (0)

static void
group_end(const char *name, long checks)
{
	if (nfail)
		failed++;
	else
		passed++;
	printf("%-44s %s (%ld checks, %ld failures)\n", name, nfail ? "FAIL" : "ok", checks, nfail);
	fflush(stdout);
	nfail = 0;
}

/* sorted keys in O(n): random gaps, 0-gaps give duplicates */
static void
gen_sorted(uint64_t *k, int64_t n, int dist)
{
	int64_t		i;

	if (n <= 300000 || dist == 2)
	{
		o_keys(k, n, dist);
		return;
	}
	{
		uint64_t	step = dist == 1 ? 2 : UINT64_MAX / (uint64_t) n,	/* no wrap */
					x = rnd() % 1000;

		for (i = 0; i < n; i++)
		{
			x += dist == 1 ? (rnd() % 64 == 0) : rnd() % step;
			k[i] = x;
		}
	}
}

typedef struct
{
	int64_t		n;
	uint64_t   *k;
	hm_tree    *c,
			   *g;
} fixture;

static void
fx_make(fixture *f, int64_t n, int dist, int fanout)
{
	f->n = n;
	f->k = (uint64_t *) malloc((n + 1) * 8);
	gen_sorted(f->k, n, dist);
	f->c = NULL;
	f->g = NULL;
	OK(hm_cpu_build(f->k, n, fanout, &f->c));
	OK(hm_gpu_build(f->k, n, fanout, &f->g));
}

static void
fx_free(fixture *f)
{
	hm_cpu_free(f->c);
	hm_gpu_free(f->g);
	free(f->k);
}

static uint64_t
qkey(const fixture *f, int dist)
{
	return (f->n > 0 && (rnd() & 1)) ? f->k[rnd() % f->n] : o_key(dist);
}

/* bounds: nq queries through the GPU (pinned or device buffers), all checked */
static long
check_bounds(fixture *f, int64_t nq, int dist, const hm_opts *o, int upper, int pinned)
{
	uint64_t   *q,
			   *dq = NULL;
	int64_t    *pos,
			   *dpos = NULL,
				i,
				bad = 0;
	long		checks = 0;

	cudaMallocHost(&q, (nq + 1) * 8);
	cudaMallocHost(&pos, (nq + 1) * 8);
	for (i = 0; i < nq; i++)
		q[i] = (i > 0 && rnd() % 4 == 0) ? q[i - 1] : qkey(f, dist);
	memset(pos, 0xab, nq * 8);	/* poison */
	if (pinned)
		OK((upper ? hm_gpu_upper_bound : hm_gpu_lower_bound) (f->g, q, nq, pos, o));
	else
	{
		cudaMalloc(&dq, (nq + 1) * 8);
		cudaMalloc(&dpos, (nq + 1) * 8);
		cudaMemcpy(dq, q, nq * 8, cudaMemcpyHostToDevice);
		cudaMemset(dpos, 0xab, nq * 8);
		OK((upper ? hm_gpu_upper_bound : hm_gpu_lower_bound) (f->g, dq, nq, dpos, o));
		cudaMemcpy(pos, dpos, nq * 8, cudaMemcpyDeviceToHost);
	}
#pragma omp parallel for reduction(+:bad)
	for (i = 0; i < nq; i++)
	{
		int64_t		p = pos[i];
		int			ok = p >= 0 && p <= f->n;

		if (ok && upper)
			ok = (p == 0 || f->k[p - 1] <= q[i]) && (p == f->n || f->k[p] > q[i]);
		else if (ok)
			ok = (p == 0 || f->k[p - 1] < q[i]) && (p == f->n || f->k[p] >= q[i]);
		bad += !ok;
	}
	CHECK(bad == 0, "%ld of %ld %s bounds wrong (n=%ld F=%d psa=%d gs=%d comb=%d)", (long) bad,
		  (long) nq, upper ? "upper" : "lower", (long) f->n, f->g->fanout, o->psa_bits,
		  o->group_size, o->combine);
	checks += nq;
	/* and a sample against the twin */
	for (i = 0; i < 2000 && i < nq; i++, checks++)
	{
		int64_t		j = nq <= 2000 ? i : (int64_t) (rnd() % nq),
					p;

		(upper ? hm_cpu_upper_bound : hm_cpu_lower_bound) (f->c, &q[j], 1, &p, NULL);
		CHECK(p == pos[j], "twin differs at %ld: %ld vs %ld", (long) j, (long) p, (long) pos[j]);
	}
	cudaFreeHost(q);
	cudaFreeHost(pos);
	cudaFree(dq);
	cudaFree(dpos);
	return checks;
}

/* ranges: every output against the twin */
static long
check_ranges(fixture *f, int64_t nr, int dist, int psa_bits)
{
	hm_range   *r;
	int64_t    *s,
			   *e,
				i,
				cs,
				ce;
	long		checks = 0;

	cudaMallocHost(&r, (nr + 1) * sizeof(hm_range));
	cudaMallocHost(&s, (nr + 1) * 8);
	cudaMallocHost(&e, (nr + 1) * 8);
	for (i = 0; i < nr; i++)
		o_range(&r[i], f->k, f->n, dist);
	memset(s, 0xab, nr * 8);
	memset(e, 0xab, nr * 8);
	OK(hm_gpu_ranges(f->g, r, nr, s, e, psa_bits));
	for (i = 0; i < nr; i++, checks++)
	{
		hm_cpu_ranges(f->c, &r[i], 1, &cs, &ce);
		CHECK(cs == s[i] && ce == e[i], "range %ld: [%ld,%ld) vs twin [%ld,%ld)", (long) i,
			  (long) s[i], (long) e[i], (long) cs, (long) ce);
	}
	CHECK(hm_bytes(f->g) == hm_bytes(f->c), "bytes %zu vs twin %zu", hm_bytes(f->g),
		  hm_bytes(f->c));
	checks++;
	cudaFreeHost(r);
	cudaFreeHost(s);
	cudaFreeHost(e);
	return checks;
}

int
main(int argc, char **argv)
{
	int			quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	uint64_t	seed = (uint64_t) time(NULL) * 2654435761u ^ (uint64_t) clock();
	cudaDeviceProp props;
	int			ndev = 0;
	static const int64_t small_sizes[] = {0, 1, 2, 9, 64, 65, 1000, 4097, 65536};
	static const int gsz[] = {1, 2, 4, 8, 16, 32};
	hm_opts		o;
	long		checks;
	int			si,
				fi,
				dist,
				gi,
				psa,
				comb;

	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0 ||
		cudaGetDeviceProperties(&props, 0) != cudaSuccess)
	{
		printf("SKIPPED: no GPU\n");
		return 77;
	}
	rng_s = seed;
	printf("harmonia GPU tests on %s, seed %llu%s\n", props.name, (unsigned long long) seed,
		   quick ? " (quick)" : "");

	/* small trees, all fanouts, all option combinations */
	checks = 0;
	for (si = 0; si < 9; si++)
		for (fi = 8; fi <= 128; fi *= 2)
			for (dist = 0; dist < 4; dist++)
			{
				fixture		f;

				if (quick && (fi == 16 || fi == 64))
					continue;
				fx_make(&f, small_sizes[si], dist, fi);
				if (!f.g)
					continue;
				for (gi = 0; gi < 6; gi++)
					for (psa = 0; psa < 3; psa++)
						for (comb = 0; comb < 2; comb++)
						{
							if (quick && (gi + psa + comb + dist) % 3)
								continue;
							hm_default_opts(&o);
							o.group_size = gsz[gi];
							o.psa_bits = psa == 0 ? 0 : psa == 1 ? -1 : 64;
							o.combine = comb;
							checks += check_bounds(&f, 1 + (int64_t) (rnd() % 3000), dist, &o,
												   (gi + psa) & 1, comb);
						}
				fx_free(&f);
			}
	group_end("bounds: sizes 0..2^16, fanouts, PSA, NTG, comb", checks);

	checks = 0;
	for (si = 0; si < 9; si++)
		for (dist = 0; dist < 4; dist++)
		{
			fixture		f;

			fx_make(&f, small_sizes[si], dist, 8 << ((si + dist) % 5));
			if (!f.g)
				continue;
			checks += check_ranges(&f, quick ? 500 : 20000, dist,
								   (si & 1) ? 0 : (si & 2) ? 64 : -1);
			fx_free(&f);
		}
	group_end("ranges vs twin (PSA off, Eq. 2, 64 bits)", checks);

	if (!quick)
	{
		/* big trees and batches, batches 1 .. 10^8 */
		static const int64_t bn[] = {1 << 20, 1 << 23, 1 << 26};
		static const int64_t bq[] = {1, 1000, 1000000, 10000000};

		checks = 0;
		for (si = 0; si < 3; si++)
		{
			fixture		f;
			int			qi;

			fx_make(&f, bn[si], si == 1 ? 1 : 0, si == 2 ? 32 : 16 << si);
			if (!f.g)
				continue;
			for (qi = 0; qi < 4; qi++)
			{
				hm_default_opts(&o);
				o.psa_bits = qi & 1 ? 0 : -1;
				o.group_size = qi == 2 ? 4 : 1;
				checks += check_bounds(&f, bq[qi], si == 1, &o, qi & 1, qi & 2);
			}
			checks += check_ranges(&f, 100000, 0, -1);
			if (si == 2)
			{
				hm_default_opts(&o);
				checks += check_bounds(&f, 100000000, 0, &o, 0, 0);
			}
			fx_free(&f);
		}
		group_end("big: 2^20..2^26 keys, 1..10^8 queries", checks);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
