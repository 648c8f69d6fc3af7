/*
 * The GPU engine through engine.h on fresh random data: test_engine.c's
 * suite (positions and aggregates against the oracles, positions against
 * the CPU twin's ops) on device 0, and on device 1 too when there is one;
 * a split engine of GPU parts spread over every device (split_build.h);
 * and its arguments.  Without a CUDA device it prints "SKIPPED: no GPU".
 */
#define TE_NO_MAIN
#include "test_engine.c"

#include <cuda_runtime.h>

static void
te_gpu_errors(int ndev)
{
	const gbt_engine_ops *ops = gbt_engine_gpu_ops();
	uint64_t	k[3] = {1, 2, 3};
	gbt_agg_input in;
	gbt_engine *e = NULL;
	char		err[256],
				name[256];
	int64_t		mem = 0;
	long		checks = 0;

	memset(&in, 0, sizeof(in));
	in.n = 3;
	VT_CHECK(ops->usable(0, name, sizeof(name), &mem, err, sizeof(err)) == 0 && mem > 0,
			 "device 0 not usable: %s", err);
	VT_CHECK(ops->usable(ndev, name, sizeof(name), &mem, err, sizeof(err)) != 0,
			 "device %d usable", ndev);
	err[0] = 0;
	VT_CHECK(ops->build(k, &in, ndev, &e, err, sizeof(err)) != 0 && e == NULL && err[0],
			 "built on device %d", ndev);
	VT_CHECK(ops->build(k, &in, -1, &e, err, sizeof(err)) != 0 && e == NULL,
			 "GPU engine built on device -1");
	k[0] = 9;
	VT_CHECK(ops->build(k, &in, 0, &e, err, sizeof(err)) != 0 && e == NULL,
			 "unsorted keys accepted");
	checks += 5;
	vt_group_end("engine: GPU arguments", checks);
}

int
main(int argc, char **argv)
{
	uint64_t	seed = argc > 1 ? strtoull(argv[1], NULL, 0) :
		(uint64_t) time(NULL) ^ ((uint64_t) clock() << 20);
	int			ndev = 0;

	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0)
	{
		printf("SKIPPED: no GPU\n");
		return 77;
	}
	vt_rng = seed;
	rng_s = seed ^ 0x5bd1e995;
	printf("engine GPU tests on %d device(s), seed %llu\n", ndev, (unsigned long long) seed);
	vt_group_end("engine: GPU (device 0) vs oracles and twin",
				 te_suite(gbt_engine_gpu_ops(), 0, gbt_engine_cpu_ops()));
	if (ndev > 1)
		vt_group_end("engine: GPU (device 1) vs oracles and twin",
					 te_suite(gbt_engine_gpu_ops(), 1, gbt_engine_cpu_ops()));
	tb_split_inner = gbt_engine_gpu_ops();
	tb_split_ndev = ndev;
	vt_group_end("engine: GPU split in 1-4 parts on every device vs oracles and twin",
				 te_suite(gbt_engine_split_ops(), 0, gbt_engine_cpu_ops()));
	te_gpu_errors(ndev);
	printf("%d passed, %d failed\n", vt_passed, vt_failed);
	return vt_failed ? 1 : 0;
}
