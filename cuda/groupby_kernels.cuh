/*
 * groupby_kernels.cuh
 *	  What the grouped aggregate's kernels (groupby_kernels.cu) and their
 *	  host side (groupby_gpu.cu) share: the sizes of tiles and group
 *	  classes, the kernels' arguments, and the calls that launch them.  C++
 *	  (nvcc) only.
 */
#ifndef GBT_GROUPBY_KERNELS_CUH
#define GBT_GROUPBY_KERNELS_CUH

#include "groupby.h"
#include "vagg_kernels.cuh"

#define GK_THREADS 256			/* threads per block of every kernel */
#define GK_ITEMS 8				/* flattened indices a thread, compaction */
#define GK_TILE (GK_THREADS * GK_ITEMS) /* flattened indices a block */
#define GK_SMALL 32				/* groups of up to this many entries: a
								 * thread each */
#define GK_MEDIUM 2048			/* up to this many: a warp each */
#define GK_CHUNK 4096			/* larger ones: chunks of this many, a block
								 * each, then a block a group */

/* one grouped call's device counters: zeroed, umin all ones, per call */
struct GkCount
{
	unsigned long long umin,	/* the smallest and largest group value, */
				umax;			/* as value ^ sign bit (unsigned order) */
	unsigned int nmedium,		/* groups of each class (GK_SMALL...) */
				nlarge,
				nchunks,		/* the large groups' chunks */
				unsorted;		/* keys[] found out of order */
};

/* a large group's chunk of its entries pos[begin, end) */
struct GkChunk
{
	unsigned int group,
				begin,
				end;
};

struct GkArgs
{
	/* the entries: KArgs's column fields (vagg_acc.cuh reads them) */
	const uint32_t *blocks;
	const uint8_t *removed;
	const unsigned long long *cols[GBT_MAX_COLS];
	const uint8_t *nulls[GBT_MAX_COLS];
	unsigned	fmask;
	unsigned long long decode[GBT_MAX_COLS];
	unsigned	nmask;
	unsigned long long base[GBT_MAX_COLS];
	int64_t		n;
	int			gcol;			/* the group column */
	int			where;			/* a WHERE program to run (else TRUE) */

	/* the call (VaggCall) */
	const long long *start,
			   *offs;
	int64_t		R;
	const uint8_t *vis;
	int64_t		nvis;
	const gbt_pred *progs;		/* [0] WHERE, [1 + f] filter f */
	const gbt_pred_value *list;
	int			nf;
	long long  *unsure;			/* room for cap */
	int64_t		cap;
	DevRes	   *res;			/* ucount, bad */
	GkCount    *cnt;

	/* compaction: tile counts (pass 1), their exclusive sums (pass 2) */
	unsigned   *tile_take,
			   *tile_null,
			   *take_off,
			   *null_off;
	unsigned long long *keys;	/* [ntake]: value ^ sign bit, less umin */
	unsigned   *pos;			/* [ntake + nnull]: positions, the NULL
								 * group's last */
	unsigned   *nullpos;		/* [nnull] */
	int64_t		ntake,			/* entries to aggregate in a non-NULL group */
				nnull;			/* in the NULL group */
	unsigned long long umin;

	/* groups */
	unsigned   *head;			/* [ntake]: sorted entry i starts a group */
	unsigned   *gid;			/* [ntake]: 1 + the group of sorted entry i */
	unsigned   *unsorted;		/* set when keys[] is not ascending */
	unsigned   *gstart;			/* [ngroups + 1]: each group's first entry */
	int64_t		ngroups;		/* the NULL group included */
	long long  *values;			/* [ngroups] */
	unsigned   *medium,			/* the groups of each class */
			   *large,
			   *lchunk;			/* a large group's first chunk */
	GkChunk    *chunks;
	void	   *parts;			/* Acc: [chunk * nf + f] */
	void	   *out;			/* Acc: [group * nf + f] */
	unsigned	max_medium,		/* bounds on the classes' counts */
				max_large,
				max_chunks;
};

/* Bytes of one Acc<ncols> (vagg_acc.cuh): a group's result on the device. */
extern size_t gk_acc_bytes(int ncols);

/*
 * Compaction pass 1 (write false: unsure entries listed, tile counts,
 * umin/umax) or 2 (write true: keys and positions at the scanned
 * offsets), over ntiles tiles of GK_TILE flattened indices.
 */
extern cudaError_t gk_launch_pass(int ncols, bool write, int64_t ntiles,
								  cudaStream_t stream, const GkArgs &A);

/* *A.unsorted set unless A.keys[0..ntake) is ascending (zeroed before). */
extern cudaError_t gk_launch_sorted(cudaStream_t stream, const GkArgs &A);

/*
 * gid = the inclusive scan of the heads of A.keys[0..ntake) (CUB scan,
 * workspace ws of *wsz bytes; ws NULL: *wsz set to the size needed).
 */
extern cudaError_t gk_group_ids(void *ws, size_t *wsz, cudaStream_t stream, const GkArgs &A);

/*
 * Each group's first entry and value (the NULL group last, value 0), and
 * the groups of each class listed (their counts in A.cnt).
 */
extern cudaError_t gk_launch_plan(cudaStream_t stream, const GkArgs &A);

/* Every group's results for every filter into A.out. */
extern cudaError_t gk_launch_reduce(int ncols, int nsm, cudaStream_t stream, const GkArgs &A);

/* count results of Acc<ncols> (accs) into zeroed results out */
extern void gk_results(int ncols, unsigned fmask, const void *accs, int64_t count,
					   gbt_agg_result *out);

#endif							/* GBT_GROUPBY_KERNELS_CUH */
