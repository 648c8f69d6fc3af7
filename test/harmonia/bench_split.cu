/*
 * bench_split.cu: what a split engine costs against one engine, on the GPU
 * engine: 2^LOG2 keys (argv[1], default 26) on device 0, and split in two
 * parts on devices 0 and 1 (both on 0 with one device); an = ANY list of
 * 100,000 random keys a question: sort_unique(), ranges(), aggregate(),
 * each timed (median of 31) and the answers compared.  Prints a table.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>
#include <vector>

#include <cuda_runtime.h>

#include "../../cuda/engine.h"

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct
{
	void		(*fn) (void *);
	void	   *arg;
} piece;

static void *
piece_main(void *p)
{
	((piece *) p)->fn(((piece *) p)->arg);
	return NULL;
}

/* pieces at once, a thread each */
static void
spawn_run(void (*fn) (void *), void *arg, size_t argsize, int n)
{
	pthread_t	t[GBT_SPLIT_MAX_PARTS];
	piece		p[GBT_SPLIT_MAX_PARTS];

	for (int i = 1; i < n; i++)
	{
		p[i].fn = fn;
		p[i].arg = (char *) arg + i * argsize;
		pthread_create(&t[i], NULL, piece_main, &p[i]);
	}
	fn(arg);
	for (int i = 1; i < n; i++)
		pthread_join(t[i], NULL);
}

static double
median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

int
main(int argc, char **argv)
{
	int			log2 = argc > 1 ? atoi(argv[1]) : 26;
	int64_t		n = (int64_t) 1 << log2;
	int64_t		nkeys = 100000;
	int			ndev = 0;
	uint64_t   *keys = (uint64_t *) malloc(n * 8);
	uint32_t   *blocks = (uint32_t *) malloc(n * 4);
	int64_t    *vals = (int64_t *) malloc(n * 8);
	int64_t		nvis = n / 200 + 1;
	uint8_t    *vis = (uint8_t *) malloc(nvis / 8 + 1);
	gbt_agg_input in;
	char		err[256];
	const gbt_engine_ops *gpu = gbt_engine_gpu_ops();

	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0)
	{
		printf("SKIPPED: no GPU\n");
		return 77;
	}
	for (int64_t i = 0; i < n; i++)
	{
		keys[i] = (uint64_t) i;
		blocks[i] = (uint32_t) (i / 200);
		vals[i] = i % 1000;
	}
	memset(vis, 0xff, nvis / 8 + 1);
	memset(&in, 0, sizeof(in));
	in.n = n;
	in.blocks = blocks;
	in.ncols = 1;
	in.coltype[0] = GBT_VAL_INT64;
	in.cols[0] = vals;

	gbt_engine *one = NULL, *split = NULL;
	int			devices[2] = {0, ndev > 1 ? 1 : 0};
	int64_t		weights[2] = {1, 1};

	if (gpu->build(keys, &in, 0, &one, err, sizeof(err)) != 0 ||
		gbt_engine_split_build(gpu, keys, &in, 2, devices, weights, spawn_run, spawn_run,
							   &split, err, sizeof(err)) != 0)
	{
		printf("build: %s\n", err);
		return 1;
	}
	printf("2^%d keys, %lld-key lists, %d device(s); ms, median of 31\n", log2,
		   (long long) nkeys, ndev);
	printf("| engine | sort_unique | ranges | aggregate | all |\n|---|---|---|---|---|\n");

	uint64_t	rng = 88172645463325252ull;
	std::vector<uint64_t> list(nkeys), copy(nkeys);
	std::vector<int64_t> s(nkeys), e(nkeys), uns(1000);
	int64_t		counts[2][31];

	for (int which = 0; which < 2; which++)
	{
		gbt_engine *g = which == 0 ? one : split;
		const gbt_engine_ops *ops = which == 0 ? gpu : gbt_engine_split_ops();
		std::vector<double> t_sort, t_ranges, t_agg, t_all;

		rng = 88172645463325252ull;
		for (int rep = 0; rep < 33; rep++)
		{
			int64_t		nout;
			gbt_agg_result out;
			double		t0, t1, t2, t3;

			for (int64_t i = 0; i < nkeys; i++)
			{
				rng ^= rng << 13;
				rng ^= rng >> 7;
				rng ^= rng << 17;
				list[i] = rng % (uint64_t) n;
			}
			t0 = now_ms();
			if (ops->sort_unique(g, list.data(), nkeys, NULL, &nout, err, sizeof(err)) != 0)
				printf("sort: %s\n", err);
			t1 = now_ms();
			if (ops->ranges(g, list.data(), list.data(), nout, s.data(), e.data(), err,
							sizeof(err)) != 0)
				printf("ranges: %s\n", err);
			t2 = now_ms();
			if (ops->aggregate(g, NULL, 0, s.data(), e.data(), nout, vis, nvis, &out,
							   uns.data(), 1000, err, sizeof(err)) != 0)
				printf("aggregate: %s\n", err);
			t3 = now_ms();
			if (rep < 2)
				continue;		/* warming */
			counts[which][rep - 2] = out.count * 1000003 + (int64_t) out.col[0].sum_lo;
			t_sort.push_back(t1 - t0);
			t_ranges.push_back(t2 - t1);
			t_agg.push_back(t3 - t2);
			t_all.push_back(t3 - t0);
		}
		printf("| %s | %.3f | %.3f | %.3f | %.3f |\n", which == 0 ? "one (device 0)" : "split (2 parts)",
			   median(t_sort), median(t_ranges), median(t_agg), median(t_all));
	}

	/*
	 * Each part alone, through the inner engine: its slice of a list (the
	 * keys within its bounds) searched and aggregated, as the split asks
	 * it; what the split's rows add beyond these is the split's own.
	 */
	gbt_split_part parts[GBT_SPLIT_MAX_PARTS];
	int			nparts = gbt_engine_split_parts(split, parts);

	printf("| part (device, entries) | | ranges | aggregate | |\n");
	for (int p = 0; p < nparts; p++)
	{
		gbt_engine *alone = NULL;
		gbt_agg_input pin = in;
		std::vector<double> t_ranges, t_agg;

		/* the part's engine built apart: the split keeps its own private */
		pin.n = parts[p].n;
		pin.blocks = blocks + parts[p].first;
		pin.cols[0] = vals + parts[p].first;
		if (gpu->build(keys + parts[p].first, &pin, parts[p].device, &alone, err,
					   sizeof(err)) != 0)
		{
			printf("part build: %s\n", err);
			return 1;
		}
		rng = 88172645463325252ull;
		for (int rep = 0; rep < 33; rep++)
		{
			std::vector<uint64_t> slice;
			gbt_agg_result out;
			double		t1, t2, t3;

			for (int64_t i = 0; i < nkeys; i++)
			{
				rng ^= rng << 13;
				rng ^= rng >> 7;
				rng ^= rng << 17;
				list[i] = rng % (uint64_t) n;
			}
			std::sort(list.begin(), list.end());
			for (int64_t i = 0; i < nkeys; i++)
				if (list[i] >= (uint64_t) parts[p].first &&
					list[i] < (uint64_t) (parts[p].first + parts[p].n) &&
					(slice.empty() || slice.back() != list[i]))
					slice.push_back(list[i] - parts[p].first);
			t1 = now_ms();
			if (gpu->ranges(alone, slice.data(), slice.data(), (int64_t) slice.size(),
							s.data(), e.data(), err, sizeof(err)) != 0)
				printf("part ranges: %s\n", err);
			t2 = now_ms();
			if (gpu->aggregate(alone, NULL, 0, s.data(), e.data(), (int64_t) slice.size(),
							   vis, nvis, &out, uns.data(), 1000, err, sizeof(err)) != 0)
				printf("part aggregate: %s\n", err);
			t3 = now_ms();
			if (rep < 2)
				continue;
			t_ranges.push_back(t2 - t1);
			t_agg.push_back(t3 - t2);
		}
		printf("| part %d (%d, %lld) | | %.3f | %.3f | |\n", p, parts[p].device,
			   (long long) parts[p].n, median(t_ranges), median(t_agg));
		gpu->free(alone);
	}

	int			same = memcmp(counts[0], counts[1], sizeof(counts[0])) == 0;

	printf("answers %s\n", same ? "equal" : "DIFFER");
	gpu->free(one);
	gbt_engine_split_ops()->free(split);
	return same ? 0 : 1;
}
