/*
 * engine_gpu_int.h
 *	  The GPU engine's struct and what its files share (engine_gpu.cu,
 *	  engine_gpu_batch.cu).  C++ (nvcc) only.
 */
#ifndef GBT_ENGINE_GPU_INT_H
#define GBT_ENGINE_GPU_INT_H

#include <stdbool.h>

#include "chunksums.h"
#include "engine.h"
#include "harmonia.h"
#include "vagg.h"

/*
 * Left to scan after the chunk sums answered a request: up to this many
 * entries (a few ranges' ends) are read on the host, not worth a kernel,
 * unless they lie in more than GBT_HOST_SCAN_MAX_RANGES ranges: each range
 * is a cache miss or two on the host (the 50,000 keys of half an = ANY
 * list, each part of a split mirror's, took 3 ms there).
 */
#define GBT_HOST_SCAN_MAX 65536
#define GBT_HOST_SCAN_MAX_RANGES 4096

struct gbt_engine
{
	int			device;
	hm_tree    *tree;
	uint64_t   *d_keys;			/* device buffers, room for cap ranges: */
	int64_t    *d_pos;			/* lo[cap] then hi[cap]; start[cap] then end[cap] */
	int64_t		cap;
	uint64_t   *h_keys;			/* pinned host staging */
	int64_t    *h_pos;

	/* The host arrays the last ranges() filled, whose copies d_pos holds. */
	const int64_t *pos_start;
	const int64_t *pos_end;
	int64_t		pos_n;

	/* The host keys the last sort_unique() left, whose copies d_keys holds. */
	const uint64_t *sorted_keys;
	int64_t		sorted_n;

	/* CUB's scratch for the sort, kept and grown as needed. */
	void	   *d_ws;
	size_t		ws_cap;

	/* The borrowed host arrays, copied to the device at the first aggregate. */
	gbt_agg_input host;
	bool		agg_ready;
	uint32_t   *d_blocks;
	uint8_t    *d_removed;		/* NULL: none removed */
	uint64_t	removed_version;
	void	   *d_patch;		/* changed bytes of removed[] and where */
	size_t		patch_cap;
	void	   *d_cols[GBT_MAX_COLS];
	unsigned	narrow;			/* d_cols held in 4 bytes a value (engine.h) */
	int64_t		base[GBT_MAX_COLS];
	uint8_t    *d_nulls[GBT_MAX_COLS];
	size_t		agg_bytes;
	double		agg_used_ms;	/* when a call last read them (gbt_vagg_now_ms()) */
	gbt_vagg_gpu_ctx *vagg;

	/* Sums of chunks of the host arrays (chunksums.h); NULL: none. */
	gbt_chunk_sums *sums;
};

/*
 * The engine's device made current and its arrays copied there (at the
 * first aggregate; removed[] again when removed_version changed): *in is
 * its aggregate input over the device copies.  0, or nonzero with a
 * message.
 */
extern int	gpu_device_input(gbt_engine *g, const uint8_t *removed,
							 uint64_t removed_version, gbt_agg_input *in,
							 char *err, size_t errlen);

/* engine.h's aggregate_batch (engine_gpu_batch.cu). */
extern int	gpu_aggregate_batch(gbt_agg_item *items, int64_t nitems, gbt_engine_par par,
								int npar);

#endif							/* GBT_ENGINE_GPU_INT_H */
