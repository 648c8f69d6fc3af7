/*
 * gbt_device.h
 *	  CUDA device discovery for gpubtree.  Plain C interface, no PostgreSQL
 *	  headers; implemented in gbt_device.cu and linked only in CUDA builds.
 */
#ifndef GBT_DEVICE_H
#define GBT_DEVICE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C"
{
#endif

typedef struct gbt_device_props
{
	int			id;
	char		name[256];
	size_t		total_memory;	/* bytes */
	int			sm_count;
	int			cc_major;
	int			cc_minor;
} gbt_device_props;

/* CUDA runtime version this library was built against (e.g. 13000). */
extern int	gbt_cuda_build_version(void);

/* Comma-separated list of the SM architectures compiled in (e.g. "sm_90"). */
extern const char *gbt_cuda_build_archs(void);

/*
 * Number of usable devices in *count.  Returns 0 on success; otherwise a
 * nonzero CUDA error code, with a message in errbuf.  Initialises the CUDA
 * runtime: never call this in the postmaster.
 */
extern int	gbt_cuda_device_count(int *count, char *errbuf, size_t errlen);

/* Properties of device id; same return convention. */
extern int	gbt_cuda_device_props(int id, gbt_device_props *props,
								  char *errbuf, size_t errlen);

/*
 * Bytes free on device id once this process holds a context there: what
 * other processes (other clusters' services, other programs) hold is not
 * free.  Makes the context: only in the process that will use the device.
 * Same return convention; a device that refuses a context (another
 * process holds it in exclusive mode, it is out of memory) says so here.
 */
extern int	gbt_cuda_device_free(int id, size_t *free_memory,
								 char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif							/* GBT_DEVICE_H */
