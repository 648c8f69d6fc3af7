/*
 * harmonia.h
 *	  Harmonia (PPoPP '19): a B+tree for batched search, in two engines with
 *	  one contract: the GPU engine (harmonia_gpu.cu) and its CPU twin
 *	  (harmonia_cpu.c), which is the test oracle and the engine when there
 *	  is no GPU.  Plain C, no PostgreSQL headers.
 *
 * Layout (Harmonia section 3).  A key region of fixed-size nodes in
 * breadth-first order, each node F-1 keys (F = fanout, a power of two from
 * 8 to 128) padded to F slots, and a prefix-sum child array holding each
 * internal node's first child; child i of node x is child[x] + i, no
 * pointers.  The leaves hold every key in ascending order, so an entry's
 * position in leaf order indexes its payload: a row id (a TID) and up to
 * HM_MAX_COLS int64 or float8 columns, in separate arrays.  Duplicate keys
 * are allowed.  Keys are order-preserving 64-bit encodings (harmonia_keys.h).
 *
 * Batched operations take 1 to 10^8 requests per call: lower and upper
 * bounds, ranges with open or closed ends (returned as position ranges in
 * leaf order), and per-range count, sum, min and max of a payload column
 * (int64 sums exact in 128 bits; float8 sums from double-double prefix sums,
 * so any range sum costs two searches).  Options: PSA (partial sort of the
 * batch by its top bits before searching; answers are returned in the
 * caller's order), NTG (the number of threads that search one node), and
 * Eirene's combining (equal adjacent keys of a sorted batch are searched
 * once).
 *
 * A small sorted delta of inserted and deleted entries can sit beside the
 * tree: aggregates see main + inserts - deletes; position ranges refer to
 * the main tree only.  hm_*_merge() folds the delta into a new tree.
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

#define HM_MAX_COLS 4
#define HM_DEFAULT_FANOUT 16	/* measured best on the H100 (test/bench/RESULTS.md) */

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

typedef enum hm_coltype
{
	HM_INT64,
	HM_FLOAT8
} hm_coltype;

/* Entries for a build or a delta: n keys ascending, with their payload. */
typedef struct hm_input
{
	int64_t		n;
	const uint64_t *keys;
	const uint64_t *rowids;		/* may be NULL: position is the row id */
	int			ncols;
	hm_coltype	coltype[HM_MAX_COLS];
	const void *cols[HM_MAX_COLS];	/* int64_t[n] or double[n] */
} hm_input;

/* A key range; lo_incl/hi_incl say whether the ends are included. */
typedef struct hm_range
{
	uint64_t	lo;
	uint64_t	hi;
	uint8_t		lo_incl;
	uint8_t		hi_incl;
} hm_range;

/* An aggregate over one range; min/max/sums are valid when count > 0. */
typedef struct hm_agg
{
	int64_t		count;
	int64_t		sum_hi;			/* int64 column: sum = sum_hi * 2^64 + sum_lo */
	uint64_t	sum_lo;
	double		sum_f;			/* float8 column */
	int64_t		min_i;
	int64_t		max_i;
	double		min_f;
	double		max_f;
} hm_agg;

typedef struct hm_opts
{
	int			psa_bits;		/* -1: by Equation 2; 0: off; 1..64: top bits */
	int			group_size;		/* 0: the NTG model (Equation 4, chosen at build from
								 * a sample of keys); else 1..32.  Default 1: on
								 * the H100 the model's wider groups measured
								 * 2x slower (memory time, which Eq. 4 drops) */
	int			combine;		/* share answers of equal adjacent keys (GPU: each
								 * thread takes 4 sorted keys in turn) */
} hm_opts;

/* psa_bits -1 (Equation 2), group_size 1, combine off (test/bench/RESULTS.md) */
extern void hm_default_opts(hm_opts *opts);

/* Equation 2: bits to sort on, for T keys of B bits, K keys per cache line. */
extern int	hm_psa_bits(int64_t tree_keys, int key_bits, int keys_per_line);

typedef struct hm_tree hm_tree;

/* Tree facts (either engine). */
extern int64_t hm_entries(const hm_tree *t);	/* main tree */
extern int64_t hm_delta_entries(const hm_tree *t);	/* inserts + deletes */
extern int	hm_fanout(const hm_tree *t);
extern int	hm_levels(const hm_tree *t);
extern size_t hm_bytes(const hm_tree *t);	/* host + device */

/* True when the delta has grown past its threshold and should be merged. */
extern int	hm_delta_wants_merge(const hm_tree *t);

/*
 * NTG model (Equation 4): the thread-group size for this tree, from a
 * profiled host sample of queries (sorted here, as PSA would sort them).
 */
extern int	hm_cpu_choose_group_size(const hm_tree *t, const uint64_t *sample,
									 int64_t nsample);
extern int	hm_gpu_choose_group_size(const hm_tree *t, const uint64_t *sample,
									 int64_t nsample);

/* ---- CPU twin: all arrays are host memory ---- */
extern hm_status hm_cpu_build(const hm_input *in, int fanout, hm_tree **out);
extern void hm_cpu_free(hm_tree *t);
extern hm_status hm_cpu_lower_bound(const hm_tree *t, const uint64_t *q, int64_t nq,
									int64_t *pos, const hm_opts *opts);
extern hm_status hm_cpu_upper_bound(const hm_tree *t, const uint64_t *q, int64_t nq,
									int64_t *pos, const hm_opts *opts);
extern hm_status hm_cpu_ranges(const hm_tree *t, const hm_range *r, int64_t nr,
							   int64_t *start, int64_t *end, const hm_opts *opts);
extern hm_status hm_cpu_aggregate(const hm_tree *t, const hm_range *r, int64_t nr,
								  int col, hm_agg *out, const hm_opts *opts);
/*
 * Replace the delta: ins are new entries (sorted, with payload); del are
 * entries of the main tree to hide (sorted by key; matched by key and row
 * id, each must exist).  The caller keeps the cumulative delta.
 */
extern hm_status hm_cpu_set_delta(hm_tree *t, const hm_input *ins, const hm_input *del);
extern hm_status hm_cpu_merge(hm_tree *t, hm_tree **out);
/* Payload by position in leaf order (main tree). */
extern uint64_t hm_cpu_rowid(const hm_tree *t, int64_t pos);

/*
 * ---- GPU engine (defined only in harmonia_gpu.cu; guard with USE_CUDA).
 * Build input may be host or device memory.  q, pos, r, start, end, out may be device memory or
 * pinned host memory (they are read and written by kernels) ---- */
/* HM_OK and the device name when a CUDA device is usable, else HM_ENODEV. */
extern hm_status hm_gpu_available(char *name, size_t namelen);
extern hm_status hm_gpu_build(const hm_input *in, int fanout, hm_tree **out);
extern void hm_gpu_free(hm_tree *t);
extern hm_status hm_gpu_lower_bound(const hm_tree *t, const uint64_t *q, int64_t nq,
									int64_t *pos, const hm_opts *opts);
extern hm_status hm_gpu_upper_bound(const hm_tree *t, const uint64_t *q, int64_t nq,
									int64_t *pos, const hm_opts *opts);
extern hm_status hm_gpu_ranges(const hm_tree *t, const hm_range *r, int64_t nr,
							   int64_t *start, int64_t *end, const hm_opts *opts);
extern hm_status hm_gpu_aggregate(const hm_tree *t, const hm_range *r, int64_t nr,
								  int col, hm_agg *out, const hm_opts *opts);
extern hm_status hm_gpu_set_delta(hm_tree *t, const hm_input *ins, const hm_input *del);
extern hm_status hm_gpu_merge(hm_tree *t, hm_tree **out);
/* The tree's row ids, in leaf order, on the device. */
extern const uint64_t *hm_gpu_rowids(const hm_tree *t);

#ifdef __cplusplus
}
#endif

#endif							/* HARMONIA_H */
