/*
 * gbt_device.cu
 *	  CUDA device discovery (see gbt_device.h).
 */
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

#include "gbt_device.h"

#ifndef GBT_CUDA_ARCHS
#define GBT_CUDA_ARCHS "unknown"
#endif

/*
 * Why CUDA cannot be used, in words a user reads as information: a machine
 * without a GPU has no driver, which CUDA reports as a driver "insufficient
 * for the runtime".
 */
static int
report(cudaError_t err, char *errbuf, size_t errlen)
{
	int			driver = 0;

	if (err == cudaSuccess || errbuf == NULL || errlen == 0)
		return (int) err;
	if (err == cudaErrorInsufficientDriver &&
		(cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0))
		snprintf(errbuf, errlen, "no NVIDIA driver on this machine");
	else if (err == cudaErrorInsufficientDriver)
		snprintf(errbuf, errlen,
				 "the NVIDIA driver (CUDA %d.%d) is older than this build's CUDA %d.%d",
				 driver / 1000, driver % 1000 / 10,
				 CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
	else if (err == cudaErrorNoDevice)
		snprintf(errbuf, errlen, "no CUDA-capable GPU on this machine");
	else
		snprintf(errbuf, errlen, "%s (%s)", cudaGetErrorString(err),
				 cudaGetErrorName(err));
	return (int) err;
}

extern "C" int
gbt_cuda_build_version(void)
{
	return CUDART_VERSION;
}

extern "C" const char *
gbt_cuda_build_archs(void)
{
	return GBT_CUDA_ARCHS;
}

extern "C" int
gbt_cuda_device_count(int *count, char *errbuf, size_t errlen)
{
	cudaError_t err;

	*count = 0;
	err = cudaGetDeviceCount(count);
	if (err != cudaSuccess)
		*count = 0;
	return report(err, errbuf, errlen);
}

extern "C" int
gbt_cuda_device_props(int id, gbt_device_props *props,
					  char *errbuf, size_t errlen)
{
	cudaDeviceProp p;
	cudaError_t err;

	memset(props, 0, sizeof(*props));
	err = cudaGetDeviceProperties(&p, id);
	if (err != cudaSuccess)
		return report(err, errbuf, errlen);

	props->id = id;
	snprintf(props->name, sizeof(props->name), "%s", p.name);
	props->total_memory = p.totalGlobalMem;
	props->sm_count = p.multiProcessorCount;
	props->cc_major = p.major;
	props->cc_minor = p.minor;
	return 0;
}

extern "C" int
gbt_cuda_device_free(int id, size_t *free_memory, char *errbuf, size_t errlen)
{
	size_t		total = 0;
	cudaError_t err;

	*free_memory = 0;
	err = cudaSetDevice(id);
	if (err == cudaSuccess)
		err = cudaFree(0);		/* makes this process's context there */
	if (err == cudaSuccess)
		err = cudaMemGetInfo(free_memory, &total);
	return report(err, errbuf, errlen);
}
