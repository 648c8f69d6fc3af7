/*
 * harmonia.h
 *	  Harmonia (PPoPP '19): a B+tree for batched search, in two engines with
 *	  one contract: the GPU engine (harmonia_gpu.cu) and its CPU twin
 *	  (harmonia_cpu.c), which is the test oracle and the engine when there
 *	  is no GPU.  Plain C, no PostgreSQL headers.  The service reaches it
 *	  through engine.h.
 *
 * Layout (Harmonia section 3).  A key region of fixed-size nodes in
 * breadth-first order, each node F-1 keys (F = fanout, a power of two from
 * 8 to 128) padded to F slots, and a prefix-sum child array holding each
 * internal node's first child; child i of node x is child[x] + i, no
 * pointers.  The leaves hold every key in ascending order, so an entry's
 * position in leaf order indexes whatever the caller keeps beside the tree
 * (TIDs, column values).  Duplicate keys are allowed.  Keys are
 * order-preserving 64-bit encodings (harmonia_keys.h).
 *
 * Batched range search takes 1 to 10^8 ranges with open or closed ends per
 * call and returns position ranges in leaf order.  On the GPU, PSA (partial
 * sort of the batch by the top bits of lo before searching; answers are
 * returned in the caller's order) orders the batch.
 *
 * Errors are returned (hm_strerror() describes them); nothing is printed,
 * nothing exits, and there is no global mutable state.
 */
#ifndef HARMONIA_H
#define HARMONIA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

#define HM_DEFAULT_FANOUT 8		/* measured best, with the entry table and no
								 * partial sort (test/bench/RESULTS.md, 5) */

typedef enum hm_status
{
	HM_OK = 0,
	HM_EINVAL,					/* bad argument */
	HM_ENOMEM,					/* host memory */
	HM_EDEVMEM,					/* device memory */
	HM_ECUDA,					/* another CUDA error */
	HM_ENODEV					/* no usable GPU */
} hm_status;

extern const char *hm_strerror(hm_status s);

/* A key range; lo_incl/hi_incl say whether the ends are included. */
typedef struct hm_range
{
	uint64_t	lo;
	uint64_t	hi;
	uint8_t		lo_incl;
	uint8_t		hi_incl;
} hm_range;

/* Equation 2: bits to sort on, for T keys of B bits, K keys per cache line. */
extern int	hm_psa_bits(int64_t tree_keys, int key_bits, int keys_per_line);

typedef struct hm_tree hm_tree;

extern size_t hm_bytes(const hm_tree *t);	/* host or device */
/* The leaves: the tree's n keys in ascending order, where the tree is. */
extern const uint64_t *hm_leaf_keys(const hm_tree *t);

/* ---- CPU twin: all arrays are host memory ---- */
extern hm_status hm_cpu_build(const uint64_t *keys, int64_t n, int fanout, hm_tree **out);
extern void hm_cpu_free(hm_tree *t);
extern hm_status hm_cpu_ranges(const hm_tree *t, const hm_range *r, int64_t nr,
							   int64_t *start, int64_t *end);

/*
 * ---- GPU engine (defined only in harmonia_gpu.cu), on the current CUDA
 * device.  keys may be host or device memory; r, start and end may be
 * device memory or pinned host memory (kernels read and write them).
 * psa_bits: -1 by Equation 2, 0 off, 1..64 top bits. ----
 */
extern hm_status hm_gpu_build(const uint64_t *keys, int64_t n, int fanout, hm_tree **out);
extern void hm_gpu_free(hm_tree *t);
extern hm_status hm_gpu_ranges(const hm_tree *t, const hm_range *r, int64_t nr,
							   int64_t *start, int64_t *end, int psa_bits);

/*
 * The same for closed ranges [lo[i], hi[i]] given as two arrays (hi may be
 * lo: a point each), as hm_gpu_ranges() with lo_incl = hi_incl = 1.
 */
extern hm_status hm_gpu_bounds(const hm_tree *t, const uint64_t *lo, const uint64_t *hi,
							   int64_t n, int64_t *start, int64_t *end, int psa_bits);

#ifdef __cplusplus
}
#endif

#endif							/* HARMONIA_H */
