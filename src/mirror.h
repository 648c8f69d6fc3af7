/*
 * mirror.h
 *	  One index's mirror inside the GPU service: its entries' order-preserving
 *	  64-bit keys and TIDs in key order, held by the Harmonia engine on the
 *	  GPU or, without one, by Harmonia's CPU twin.
 */
#ifndef GPUBTREE_MIRROR_H
#define GPUBTREE_MIRROR_H

#include "postgres.h"

#include "storage/itemptr.h"

typedef struct GbtMirror GbtMirror;

/*
 * Build from n entries sorted by key.  use_gpu asks for the GPU engine; the
 * CPU twin is used when it is not available.  Returns NULL with a message in
 * err on failure (out of device memory, say).
 */
extern GbtMirror *gbt_mirror_build(const uint64 *keys, const ItemPointerData *tids,
								   int64 n, bool use_gpu, char *err, Size errlen);
extern void gbt_mirror_free(GbtMirror *m);
extern int64 gbt_mirror_entries(const GbtMirror *m);
extern int64 gbt_mirror_bytes(const GbtMirror *m);
extern bool gbt_mirror_on_gpu(const GbtMirror *m);

/*
 * For each inclusive key range [lo[i], hi[i]], the positions
 * [start[i], end[i]) of the entries in it.  Batched: one engine call.
 */
extern bool gbt_mirror_ranges(GbtMirror *m, const uint64 *lo, const uint64 *hi,
							  int64 nranges, int64 *start, int64 *end,
							  char *err, Size errlen);

/* TIDs of positions [start, end), into out. */
extern void gbt_mirror_tids(const GbtMirror *m, int64 start, int64 end,
							ItemPointerData *out);

/* Whether this process can use a GPU, with the reason when it cannot. */
extern bool gbt_engine_gpu_usable(char *name, Size namelen,
								  char *why, Size whylen);

#endif							/* GPUBTREE_MIRROR_H */
