/*
 * bound.h
 *	  Batched lower and upper bounds over a Harmonia tree with the paper's
 *	  search options, for the benchmark (bench.cu) and their tests: PSA,
 *	  NTG (GS threads per query compare GS keys of a node per step, Harmonia
 *	  4.2, with the Equation 4 model that picks GS from a sample) and
 *	  Eirene's combining.  Not part of the engine, which searches ranges
 *	  only (cuda/harmonia.h); built on its internals (harmonia_int.h).
 */
#ifndef HM_BOUND_H
#define HM_BOUND_H

#include "../../cuda/harmonia_int.h"

#ifdef __cplusplus
extern "C"
{
#endif

typedef struct hm_opts
{
	int			psa_bits;		/* -1: by Equation 2; 0: off; 1..64: top bits */
	int			group_size;		/* 1..32, a power of two.  Default 1: on the
								 * H100 the model's wider groups measured 2x
								 * slower (memory time, which Eq. 4 drops) */
	int			combine;		/* share answers of equal adjacent keys (GPU: each
								 * thread takes 4 sorted keys in turn) */
} hm_opts;

/* psa_bits -1 (Equation 2), group_size 1, combine off (test/bench/RESULTS.md) */
extern void hm_default_opts(hm_opts *opts);

/* NTG model (Equation 4) from the child index taken at each level per query. */
extern int	hm__ntg_model(const int32_t *cidx, int64_t nsample, int nlev, int fanout);

/*
 * NTG model: the thread-group size for this tree, from a profiled host
 * sample of queries (sorted here, as PSA would sort them).
 */
extern int	hm_cpu_choose_group_size(const hm_tree *t, const uint64_t *sample,
									 int64_t nsample);
extern int	hm_gpu_choose_group_size(const hm_tree *t, const uint64_t *sample,
									 int64_t nsample);

/* CPU twin, host arrays; opts may be NULL (combining on). */
extern hm_status hm_cpu_lower_bound(const hm_tree *t, const uint64_t *q, int64_t nq,
									int64_t *pos, const hm_opts *opts);
extern hm_status hm_cpu_upper_bound(const hm_tree *t, const uint64_t *q, int64_t nq,
									int64_t *pos, const hm_opts *opts);

/* GPU tree; q and pos device or pinned host memory; opts may be NULL. */
extern hm_status hm_gpu_lower_bound(const hm_tree *t, const uint64_t *q, int64_t nq,
									int64_t *pos, const hm_opts *opts);
extern hm_status hm_gpu_upper_bound(const hm_tree *t, const uint64_t *q, int64_t nq,
									int64_t *pos, const hm_opts *opts);

#ifdef __cplusplus
}
#endif

#endif							/* HM_BOUND_H */
