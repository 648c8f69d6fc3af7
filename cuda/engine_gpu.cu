/*
 * engine_gpu.cu
 *	  The GPU engine behind engine.h: a Harmonia tree on one CUDA device
 *	  (harmonia_gpu.cu) searched from host arrays, and the aggregates of
 *	  vagg_gpu.cu over device copies of the mirror's aggregate arrays.
 *	  Every call makes the engine's device current first, so engines on
 *	  different devices can be used in turn from one thread.  The device
 *	  buffers for a batch are kept with the engine and grown as needed, so a
 *	  batch costs two copies and one search; an aggregate over the
 *	  positions just found reads them where they are, on the device.
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>

#include "chunksums.h"
#include "predicate.h"
#include "engine.h"
#include "groupby.h"
#include "gbt_device.h"
#include "harmonia.h"
#include "vagg.h"
#include "engine_gpu_int.h"


/* Make device current; 0, or nonzero with a message. */
static int
use_device(int device, char *err, size_t errlen)
{
	cudaError_t e = cudaSetDevice(device);

	if (e == cudaSuccess)
		return 0;
	(void) cudaGetLastError();
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "CUDA device %d: %s", device, cudaGetErrorString(e));
	return 1;
}

static int
gpu_usable(int device, char *name, size_t namelen, int64_t *memory,
		   char *why, size_t whylen)
{
	gbt_device_props props;
	size_t		free_memory;
	int			count;

	if (gbt_cuda_device_count(&count, why, whylen) != 0)
		return 1;
	if (count == 0)
	{
		snprintf(why, whylen, "no CUDA device found");
		return 1;
	}
	if (device < 0 || device >= count)
	{
		snprintf(why, whylen, "no CUDA device %d (%d found)", device, count);
		return 1;
	}
	if (gbt_cuda_device_props(device, &props, why, whylen) != 0)
		return 1;
	if (gbt_cuda_device_free(device, &free_memory, why, whylen) != 0)
		return 1;
	snprintf(name, namelen, "%s", props.name);
	*memory = (int64_t) free_memory;
	return 0;
}

static void
drop_buffers(gbt_engine *g)
{
	cudaFree(g->d_keys);
	cudaFree(g->d_pos);
	cudaFreeHost(g->h_keys);
	cudaFreeHost(g->h_pos);
	g->d_keys = NULL;
	g->d_pos = NULL;
	g->h_keys = NULL;
	g->h_pos = NULL;
	g->cap = 0;
	g->pos_start = g->pos_end = NULL;
	g->sorted_keys = NULL;
}

static void
drop_agg(gbt_engine *g)
{
	int			c;

	cudaFree(g->d_blocks);
	cudaFree(g->d_removed);
	cudaFree(g->d_patch);
	g->d_patch = NULL;
	g->patch_cap = 0;
	for (c = 0; c < GBT_MAX_COLS; c++)
	{
		cudaFree(g->d_cols[c]);
		cudaFree(g->d_nulls[c]);
		g->d_cols[c] = NULL;
		g->d_nulls[c] = NULL;
	}
	g->d_blocks = NULL;
	g->d_removed = NULL;
	g->agg_bytes = 0;
	g->agg_ready = false;
	if (g->vagg)
		gbt_vagg_gpu_ctx_free(g->vagg);
	g->vagg = NULL;
}

static void
gpu_free(gbt_engine *g)
{
	if (g == NULL)
		return;
	(void) use_device(g->device, NULL, 0);
	drop_buffers(g);
	drop_agg(g);
	cudaFree(g->d_ws);
	hm_gpu_free(g->tree);
	gbt_chunk_sums_free(g->sums);
	delete g;
}

static int
gpu_build(const uint64_t *keys, const gbt_agg_input *in, int device,
		  gbt_engine **out, char *err, size_t errlen)
{
	gbt_engine *g;
	hm_status	s;

	*out = NULL;
	if (device < 0)
		return gbt_engine_fail("GPU engine", "no CUDA device given", err, errlen);
	if (gbt_engine_check_keyed(keys, in, err, errlen) != 0)
		return 1;
	if (use_device(device, err, errlen) != 0)
		return 1;
	g = new (std::nothrow) gbt_engine();
	if (g == NULL)
		return gbt_engine_fail("mirror", "out of host memory", err, errlen);
	g->device = device;
	g->host = *in;
	g->host.removed = NULL;
	s = hm_gpu_build(keys, in->n, HM_DEFAULT_FANOUT, &g->tree);
	if (s != HM_OK)
	{
		delete g;
		return gbt_engine_fail("Harmonia build on the GPU", hm_strerror(s), err, errlen);
	}
	g->sums = gbt_chunk_sums_build(&g->host);
	*out = g;
	return 0;
}

/* Room for batches of n keys and positions; 0, or nonzero with a message. */
static int
reserve(gbt_engine *g, int64_t n, const char *what, char *err, size_t errlen)
{
	if (n <= g->cap)
		return 0;
	drop_buffers(g);
	if (cudaMalloc(&g->d_keys, sizeof(uint64_t) * 2 * n) != cudaSuccess ||
		cudaMalloc(&g->d_pos, sizeof(int64_t) * 2 * n) != cudaSuccess ||
		cudaMallocHost(&g->h_keys, sizeof(uint64_t) * 2 * n) != cudaSuccess ||
		cudaMallocHost(&g->h_pos, sizeof(int64_t) * 2 * n) != cudaSuccess)
	{
		(void) cudaGetLastError();
		drop_buffers(g);
		return gbt_engine_fail(what, "out of device or pinned memory", err, errlen);
	}
	g->cap = n;
	return 0;
}

/* A kept device buffer *buf of *cap bytes grown to size; NULL when out of memory. */
static void *
grown(void **buf, size_t *cap, size_t size)
{
	if (size > *cap)
	{
		cudaFree(*buf);
		*cap = 0;
		if (cudaMalloc(buf, size) != cudaSuccess)
		{
			(void) cudaGetLastError();
			*buf = NULL;
			return NULL;
		}
		*cap = size;
	}
	return *buf;
}

/* Room for size bytes of CUB scratch; NULL when out of device memory. */
static void *
workspace(gbt_engine *g, size_t size)
{
	return grown(&g->d_ws, &g->ws_cap, size);
}

__global__ static void
k_iota(uint32_t *x, int n)
{
	int			i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = (uint32_t) i;
}

/* 1 where a sorted key differs from the one before it, else 0. */
__global__ static void
k_heads(const uint64_t *sorted, uint32_t *head, int n)
{
	int			i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		head[i] = i > 0 && sorted[i] != sorted[i - 1];
}

/* Each key's place in the distinct keys, to where it was given. */
__global__ static void
k_scatter(const uint32_t *from, const uint32_t *place, uint32_t *map, int n)
{
	int			i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		map[from[i]] = place[i];
}

/*
 * Sorted on the device by the bits in which the keys differ (found while
 * staging them), repeats dropped there, and copied back; they stay in
 * d_keys for the ranges() that follows.  With map, the keys are sorted
 * with their places (d_pos, idle until ranges(), holds those as 32-bit
 * arrays), and each place is sent its key's rank among the distinct keys.
 */
static int
gpu_sort_unique(gbt_engine *g, uint64_t *keys, int64_t n, uint32_t *map,
				int64_t *nout, char *err, size_t errlen)
{
	uint64_t	differ = 0;
	int			end_bit;
	int			ni = (int) n;
	int			blocks = (int) ((n + 255) / 256);
	size_t		ws_sort = 0,
				ws_scan = 0,
				ws_unique = 0,
				ws_size;
	uint32_t   *d_from = NULL,
			   *d_sorted_from = NULL,
			   *d_head = NULL,
			   *d_place = NULL;
	char	   *ws;
	int		   *d_count = NULL;
	int			count = 0;
	int64_t		i;
	cudaError_t e = cudaSuccess;

	*nout = n;
	g->sorted_keys = NULL;
	g->pos_start = g->pos_end = NULL;
	if (n > INT32_MAX)
		return gbt_engine_fail("key sort", "too many keys", err, errlen);
	if (map != NULL)
		memset(map, 0, sizeof(uint32_t) * n);
	if (n < 2)
		return 0;
	if (use_device(g->device, err, errlen) != 0 ||
		reserve(g, n, "key sort", err, errlen) != 0)
		return 1;
	for (i = 0; i < n; i++)
	{
		g->h_keys[i] = keys[i];
		differ |= keys[i] ^ keys[0];
	}
	if (differ == 0)
	{
		*nout = 1;
		return 0;
	}
	end_bit = 64 - __builtin_clzll(differ);
	if (map != NULL)
	{
		d_from = (uint32_t *) g->d_pos;
		d_sorted_from = d_from + n;
		d_head = d_from + 2 * n;
		d_place = d_from + 3 * n;
	}

	/* sorted into the second half of d_keys, unique back into the first */
	if ((map == NULL ?
		 cub::DeviceRadixSort::SortKeys(NULL, ws_sort, g->d_keys, g->d_keys + n, ni,
										0, end_bit) :
		 cub::DeviceRadixSort::SortPairs(NULL, ws_sort, g->d_keys, g->d_keys + n,
										 d_from, d_sorted_from, ni, 0, end_bit)) != cudaSuccess ||
		(map != NULL &&
		 cub::DeviceScan::InclusiveSum(NULL, ws_scan, d_head, d_place, ni) != cudaSuccess) ||
		cub::DeviceSelect::Unique(NULL, ws_unique, g->d_keys + n, g->d_keys, d_count,
								  ni) != cudaSuccess)
		return gbt_engine_fail("key sort", cudaGetErrorString(cudaGetLastError()), err, errlen);
	ws_size = ws_sort > ws_unique ? ws_sort : ws_unique;
	ws_size = ws_size > ws_scan ? ws_size : ws_scan;
	ws = (char *) workspace(g, ws_size + 16);
	if (ws == NULL)
		return gbt_engine_fail("key sort", "out of device memory", err, errlen);
	d_count = (int *) ws;
	ws += 16;

	e = cudaMemcpy(g->d_keys, g->h_keys, sizeof(uint64_t) * n, cudaMemcpyHostToDevice);
	if (e == cudaSuccess && map == NULL)
		e = cub::DeviceRadixSort::SortKeys(ws, ws_sort, g->d_keys, g->d_keys + n, ni,
										   0, end_bit);
	else if (e == cudaSuccess)
	{
		k_iota<<<blocks, 256>>>(d_from, ni);
		e = cub::DeviceRadixSort::SortPairs(ws, ws_sort, g->d_keys, g->d_keys + n,
											d_from, d_sorted_from, ni, 0, end_bit);
		if (e == cudaSuccess)
		{
			k_heads<<<blocks, 256>>>(g->d_keys + n, d_head, ni);
			e = cub::DeviceScan::InclusiveSum(ws, ws_scan, d_head, d_place, ni);
		}
		if (e == cudaSuccess)
		{
			k_scatter<<<blocks, 256>>>(d_sorted_from, d_place, d_from, ni);
			e = cudaMemcpy(g->h_pos, d_from, sizeof(uint32_t) * n, cudaMemcpyDeviceToHost);
		}
	}
	if (e == cudaSuccess &&
		(e = cub::DeviceSelect::Unique(ws, ws_unique, g->d_keys + n, g->d_keys, d_count,
									   ni)) == cudaSuccess &&
		(e = cudaMemcpy(&count, d_count, sizeof(int), cudaMemcpyDeviceToHost)) == cudaSuccess)
		e = cudaMemcpy(g->h_keys, g->d_keys, sizeof(uint64_t) * count,
					   cudaMemcpyDeviceToHost);
	if (e == cudaSuccess)
		e = cudaGetLastError();	/* the kernels' launches */
	if (e != cudaSuccess)
	{
		(void) cudaGetLastError();
		return gbt_engine_fail("key sort", cudaGetErrorString(e), err, errlen);
	}
	memcpy(keys, g->h_keys, sizeof(uint64_t) * count);
	if (map != NULL)
		memcpy(map, g->h_pos, sizeof(uint32_t) * n);
	*nout = count;
	g->sorted_keys = keys;
	g->sorted_n = count;
	return 0;
}


static int
gpu_ranges(gbt_engine *g, const uint64_t *lo, const uint64_t *hi, int64_t n,
		   int64_t *start, int64_t *end, char *err, size_t errlen)
{
	hm_status	s;
	bool		points = lo == hi;

	g->pos_start = g->pos_end = NULL;
	if (n == 0)
	{
		g->sorted_keys = NULL;	/* engine.h: n == 0 forgets them too */
		return 0;
	}
	if (use_device(g->device, err, errlen) != 0 ||
		reserve(g, n, "range search", err, errlen) != 0)
		return 1;
	/* Keys sort_unique() left on the device are searched there. */
	if (!(points && lo == g->sorted_keys && n == g->sorted_n))
	{
		/* A point each (lo == hi, as for = ANY's keys): its keys go over once. */
		g->sorted_keys = NULL;
		memcpy(g->h_keys, lo, sizeof(uint64_t) * n);
		if (!points)
			memcpy(g->h_keys + n, hi, sizeof(uint64_t) * n);
		if (cudaMemcpy(g->d_keys, g->h_keys, sizeof(uint64_t) * (points ? n : 2 * n),
					   cudaMemcpyHostToDevice) != cudaSuccess)
			return gbt_engine_fail("range search", cudaGetErrorString(cudaGetLastError()),
								   err, errlen);
	}
	/*
	 * No partial sort, even of a batch out of order: with the entry table
	 * a search starts near its leaf, and the sort cost more than it saved
	 * (test/bench/RESULTS.md, section 5).
	 */
	s = hm_gpu_bounds(g->tree, g->d_keys, points ? g->d_keys : g->d_keys + n, n,
					  g->d_pos, g->d_pos + g->cap, 0);
	if (s != HM_OK)
		return gbt_engine_fail("Harmonia range search", hm_strerror(s), err, errlen);
	if (cudaMemcpy(g->h_pos, g->d_pos, sizeof(int64_t) * n,
				   cudaMemcpyDeviceToHost) != cudaSuccess ||
		cudaMemcpy(g->h_pos + n, g->d_pos + g->cap, sizeof(int64_t) * n,
				   cudaMemcpyDeviceToHost) != cudaSuccess)
		return gbt_engine_fail("range search", cudaGetErrorString(cudaGetLastError()), err, errlen);
	memcpy(start, g->h_pos, sizeof(int64_t) * n);
	memcpy(end, g->h_pos + n, sizeof(int64_t) * n);
	g->pos_start = start;
	g->pos_end = end;
	g->pos_n = n;
	return 0;
}

/* Device copy of a host array; false on failure. */
static bool
upload(void **dst, const void *src, size_t bytes, size_t *total)
{
	if (cudaMalloc(dst, bytes > 0 ? bytes : 1) != cudaSuccess)
	{
		*dst = NULL;
		return false;
	}
	*total += bytes;
	return bytes == 0 || cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice) == cudaSuccess;
}

/*
 * A device array of n values of type T made on the host a slice at a time
 * by fill(buf, i, m) (values i..i+m-1), so that no host copy of the whole
 * is needed; false on failure.
 */
template <typename T, typename Fill>
static bool
upload_made(T **dst, int64_t n, size_t *total, Fill fill)
{
	const int64_t slice = 1 << 20;
	T		   *buf;
	bool		ok;

	if (cudaMalloc((void **) dst, sizeof(T) * (n > 0 ? n : 1)) != cudaSuccess)
	{
		*dst = NULL;
		return false;
	}
	*total += sizeof(T) * n;
	buf = (T *) malloc(sizeof(T) * (n < slice ? (n > 0 ? n : 1) : slice));
	ok = buf != NULL;
	for (int64_t i = 0; i < n && ok; i += slice)
	{
		int64_t		m = n - i < slice ? n - i : slice;

		fill(buf, i, m);
		ok = cudaMemcpy(*dst + i, buf, sizeof(T) * m, cudaMemcpyHostToDevice) == cudaSuccess;
	}
	free(buf);
	return ok;
}

/* The entries' block numbers on the device, from the host's blocks or TIDs. */
static bool
upload_blocks(gbt_engine *g)
{
	const gbt_agg_input *h = &g->host;

	if (h->blocks != NULL)
		return upload((void **) &g->d_blocks, h->blocks, sizeof(uint32_t) * h->n, &g->agg_bytes);
	return upload_made(&g->d_blocks, h->n, &g->agg_bytes,
					   [h] (uint32_t *buf, int64_t i, int64_t m)
					   {
						   for (int64_t j = 0; j < m; j++)
							   buf[j] = gbt_agg_block(h, i + j);
					   });
}

/*
 * Column c on the device, as the host holds it: 8 bytes a value, or 4 for a
 * narrow column (engine.h); none for a keyed column (the tree's leaves) or
 * one without values.
 */
static bool
upload_column(gbt_engine *g, int c)
{
	const gbt_agg_input *h = &g->host;

	if (((h->keyed >> c) & 1) || h->cols[c] == NULL)
		return true;
	if ((h->narrow >> c) & 1)
	{
		g->narrow |= 1u << c;
		g->base[c] = h->base[c];
		return upload(&g->d_cols[c], h->cols[c], sizeof(uint32_t) * h->n, &g->agg_bytes);
	}
	return upload(&g->d_cols[c], h->cols[c], sizeof(int64_t) * h->n, &g->agg_bytes);
}

/* engine_gpu_int.h: the device made current, g's arrays there, *in over them */
int
gpu_device_input(gbt_engine *g, const uint8_t *removed, uint64_t removed_version,
				 gbt_agg_input *inp, char *err, size_t errlen)
{
	const gbt_agg_input *h = &g->host;
	gbt_agg_input in = *h;
	size_t		bitmap = (size_t) h->n / 8 + 1;
	int			c;

	if (use_device(g->device, err, errlen) != 0)
		return 1;
	g->agg_used_ms = gbt_vagg_now_ms();
	if (!g->agg_ready)
	{
		bool		ok = true;

		g->vagg = gbt_vagg_gpu_ctx_create();
		ok = g->vagg != NULL && upload_blocks(g);
		g->narrow = 0;
		for (c = 0; c < h->ncols && ok; c++)
			ok = upload_column(g, c) &&
				(h->nulls[c] == NULL ||
				 upload((void **) &g->d_nulls[c], h->nulls[c], bitmap, &g->agg_bytes));
		if (!ok)
		{
			(void) cudaGetLastError();
			drop_agg(g);
			return gbt_engine_fail("aggregate", "out of device memory for the mirror's columns",
						err, errlen);
		}
		g->removed_version = 0;
		g->agg_ready = true;
	}
	if (removed != NULL && removed_version != g->removed_version)
	{
		if (g->d_removed == NULL &&
			!upload((void **) &g->d_removed, removed, bitmap, &g->agg_bytes))
		{
			(void) cudaGetLastError();
			drop_agg(g);
			return gbt_engine_fail("aggregate", "out of device memory", err, errlen);
		}
		if (cudaMemcpy(g->d_removed, removed, bitmap, cudaMemcpyHostToDevice) != cudaSuccess)
			return gbt_engine_fail("aggregate", cudaGetErrorString(cudaGetLastError()), err, errlen);
		g->removed_version = removed_version;
	}

	if (g->vagg == NULL && (g->vagg = gbt_vagg_gpu_ctx_create()) == NULL)
		return gbt_engine_fail("aggregate", "out of host memory", err, errlen);
	in.blocks = g->d_blocks;
	in.removed = removed != NULL ? g->d_removed : NULL;
	in.narrow = g->narrow;
	for (c = 0; c < h->ncols; c++)
	{
		in.base[c] = g->base[c];
		/* A keyed column is the keys: the tree's leaves hold them. */
		in.cols[c] = ((h->keyed >> c) & 1) ? hm_leaf_keys(g->tree) : g->d_cols[c];
		in.nulls[c] = g->d_nulls[c];
	}
	*inp = in;
	return 0;
}

/* The aggregate on the device: plain, filtered (preds) or grouped (groups too). */
static int
device_aggregate(gbt_engine *g, const uint8_t *removed, uint64_t removed_version,
				 const int64_t *start, const int64_t *end, int64_t nranges,
				 const uint8_t *visible, int64_t nvisible, const gbt_pred_set *preds,
				 gbt_groups *groups, gbt_agg_result *out, int64_t *unsure,
				 int64_t unsure_cap, char *err, size_t errlen)
{
	gbt_agg_input in;

	if (gpu_device_input(g, removed, removed_version, &in, err, errlen) != 0)
		return 1;
	/* The positions ranges() just found are on the device already. */
	if (start == g->pos_start && end == g->pos_end && nranges == g->pos_n)
		gbt_vagg_gpu_ranges_on_device(g->vagg, g->d_pos, g->d_pos + g->cap);
	if (groups != NULL)
		return gbt_vagg_grouped_gpu(g->vagg, &in, start, end, nranges, visible, nvisible,
									preds, groups, unsure, unsure_cap, err, errlen);
	if (preds != NULL)
		return gbt_vagg_filtered_gpu(g->vagg, &in, start, end, nranges, visible, nvisible,
									 preds, out, unsure, unsure_cap, err, errlen);
	return gbt_vagg_gpu(g->vagg, &in, start, end, nranges, visible, nvisible, out,
						unsure, unsure_cap, err, errlen);
}

static int
gpu_aggregate(gbt_engine *g, const uint8_t *removed, uint64_t removed_version,
			  const int64_t *start, const int64_t *end, int64_t nranges,
			  const uint8_t *visible, int64_t nvisible, gbt_agg_result *out,
			  int64_t *unsure, int64_t unsure_cap, char *err, size_t errlen)
{
	gbt_agg_input hin = g->host;
	gbt_chunk_split split;
	int			rc;

	hin.removed = removed;
	rc = gbt_chunk_sums_split(g->sums, &hin, removed_version, start, end, nranges,
							  visible, nvisible, &split);
	if (rc < 0)
		return gbt_engine_fail("aggregate", "out of host memory", err, errlen);
	if (rc > 0)
		return device_aggregate(g, removed, removed_version, start, end, nranges,
								visible, nvisible, NULL, NULL, out, unsure, unsure_cap, err,
								errlen);
	if (split.entries <= GBT_HOST_SCAN_MAX && split.n <= GBT_HOST_SCAN_MAX_RANGES)
		rc = gbt_vagg_cpu_visible(&hin, split.start, split.end, split.n, out, err, errlen);
	else
		rc = device_aggregate(g, removed, removed_version, split.start, split.end,
							  split.n, visible, nvisible, NULL, NULL, out, unsure,
							  unsure_cap, err, errlen);
	if (rc == 0)
		gbt_agg_result_combine(out, &split.part, hin.coltype, hin.ncols);
	gbt_chunk_split_free(&split);
	return rc;
}

/*
 * A range at a time: a short one scanned on the host, a long one as
 * gpu_aggregate() takes it (its chunk sums, or a launch when its blocks are
 * not all known visible: a whole table's buckets scanned on the host took
 * 761 ms at 2^26 entries).
 */
static int
gpu_aggregate_each(gbt_engine *g, const uint8_t *removed, uint64_t removed_version,
				   const int64_t *start, const int64_t *end, int64_t nranges,
				   const uint8_t *visible, int64_t nvisible, gbt_agg_result *out,
				   int64_t *unsure, int64_t unsure_cap, char *err, size_t errlen)
{
	gbt_agg_input hin = g->host;
	int64_t		listed = 0;		/* unsure positions written so far */
	int64_t		r;

	hin.removed = removed;
	for (r = 0; r < nranges; r++)
	{
		int64_t		room = unsure == NULL ? 0 : unsure_cap - listed;
		int64_t    *into = unsure == NULL ? NULL : unsure + listed;
		int			rc;

		if (end[r] - start[r] <= GBT_HOST_SCAN_MAX)
			rc = gbt_vagg_cpu(&hin, &start[r], &end[r], 1, visible, nvisible, &out[r],
							  into, room, err, errlen);
		else
			rc = gpu_aggregate(g, removed, removed_version, &start[r], &end[r], 1,
							   visible, nvisible, &out[r], into, room, err, errlen);
		if (rc != 0)
			return rc;
		listed += out[r].nunsure < room ? out[r].nunsure : room;
	}
	return 0;
}

static int
gpu_aggregate_filtered(gbt_engine *g, const uint8_t *removed, uint64_t removed_version,
					   const int64_t *start, const int64_t *end, int64_t nranges,
					   const uint8_t *visible, int64_t nvisible, const gbt_pred_set *preds,
					   gbt_agg_result *out, int64_t *unsure, int64_t unsure_cap,
					   char *err, size_t errlen)
{
	return device_aggregate(g, removed, removed_version, start, end, nranges, visible,
							nvisible, preds, NULL, out, unsure, unsure_cap, err, errlen);
}

/* Every entry of the ranges is read on the device (no chunk sums by group). */
static int
gpu_aggregate_grouped(gbt_engine *g, const uint8_t *removed, uint64_t removed_version,
					  const int64_t *start, const int64_t *end, int64_t nranges,
					  const uint8_t *visible, int64_t nvisible, const gbt_pred_set *preds,
					  gbt_groups *groups, int64_t *unsure, int64_t unsure_cap,
					  char *err, size_t errlen)
{
	if (groups == NULL)
		return gbt_engine_fail("grouped aggregate", "no groups", err, errlen);
	return device_aggregate(g, removed, removed_version, start, end, nranges, visible,
							nvisible, preds, groups, NULL, unsure, unsure_cap, err, errlen);
}

static int
gpu_tidy(gbt_engine *g, const uint8_t *removed, uint64_t removed_version,
		 int64_t max_chunks)
{
	gbt_agg_input hin = g->host;

	hin.removed = removed;
	return gbt_chunk_sums_tidy(g->sums, &hin, removed_version, max_chunks);
}

static int
gpu_tidy_all(gbt_engine *g, const uint8_t *removed, uint64_t removed_version,
			 gbt_piece_runner run, int npieces)
{
	gbt_agg_input hin = g->host;

	hin.removed = removed;
	return gbt_chunk_sums_tidy_all(g->sums, &hin, removed_version, run, npieces);
}

/* bits[at[i]] = val[i]: the bytes of a bitmap that changed. */
__global__ static void
k_patch(uint8_t *bits, const int64_t *at, const uint8_t *val, int n)
{
	int			i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		bits[at[i]] = val[i];
}

/*
 * The device's copy of removed[] made current by sending the bytes of the
 * positions that changed (a few hundred a round beside writers) rather than
 * the whole bitmap (8 MB at 2^26 entries) at the next aggregate; 0 or 1.
 */
static int
patch_removed(gbt_engine *g, const uint8_t *removed, const int64_t *changed,
			  int64_t nchanged)
{
	size_t		need = (sizeof(int64_t) + 1) * (size_t) nchanged;
	int64_t    *at;
	uint8_t    *val;
	int64_t		i;
	int			ok;

	if (nchanged == 0)
		return 0;
	if (nchanged > INT32_MAX || use_device(g->device, NULL, 0) != 0 ||
		grown(&g->d_patch, &g->patch_cap, need) == NULL)
		return 1;
	at = (int64_t *) malloc(need);
	if (at == NULL)
		return 1;
	val = (uint8_t *) (at + nchanged);
	for (i = 0; i < nchanged; i++)
	{
		at[i] = changed[i] >> 3;
		val[i] = removed[at[i]];
	}
	ok = cudaMemcpy(g->d_patch, at, need, cudaMemcpyHostToDevice) == cudaSuccess;
	free(at);
	if (ok)
	{
		k_patch<<<(int) ((nchanged + 255) / 256), 256>>>(g->d_removed,
														 (const int64_t *) g->d_patch,
														 (const uint8_t *) g->d_patch +
														 sizeof(int64_t) * nchanged,
														 (int) nchanged);
		/* done before any stream of the aggregates reads the bitmap */
		ok = cudaGetLastError() == cudaSuccess && cudaStreamSynchronize(0) == cudaSuccess;
	}
	if (!ok)
		(void) cudaGetLastError();
	return ok ? 0 : 1;
}

static void
gpu_note_removed(gbt_engine *g, const uint8_t *removed, uint64_t from, uint64_t to,
				 const int64_t *changed, int64_t nchanged)
{
	gbt_chunk_sums_note(g->sums, removed, from, to, changed, nchanged);
	if (g->d_removed != NULL && removed != NULL && g->removed_version >= from &&
		g->removed_version <= to && patch_removed(g, removed, changed, nchanged) == 0)
		g->removed_version = to;
}

static size_t
gpu_bytes(const gbt_engine *g)
{
	return hm_bytes(g->tree) + g->agg_bytes;
}

static size_t
gpu_host_bytes(const gbt_engine *g)
{
	return gbt_chunk_sums_bytes(g->sums);
}

static size_t
gpu_scratch_bytes(const gbt_engine *g)
{
	/* d_keys, d_pos, h_keys and h_pos: 2 * cap 8-byte slots each */
	return (size_t) g->cap * 2 * 8 * 4 + g->ws_cap + g->patch_cap +
		(g->vagg != NULL ? gbt_vagg_gpu_ctx_bytes(g->vagg) : 0);
}

static void
gpu_trim(gbt_engine *g)
{
	if (use_device(g->device, NULL, 0) != 0)
		return;
	drop_buffers(g);
	cudaFree(g->d_ws);
	g->d_ws = NULL;
	g->ws_cap = 0;
	cudaFree(g->d_patch);
	g->d_patch = NULL;
	g->patch_cap = 0;
	if (g->vagg != NULL)
	{
		/* a fresh context allocates its buffers at its first call */
		gbt_vagg_gpu_ctx_free(g->vagg);
		g->vagg = gbt_vagg_gpu_ctx_create();
	}
	(void) cudaGetLastError();
}

static size_t
gpu_drop_idle_copies(gbt_engine *g, int64_t idle_ms)
{
	size_t		dropped = g->agg_bytes;

	if (!g->agg_ready || gbt_vagg_now_ms() - g->agg_used_ms < (double) idle_ms ||
		use_device(g->device, NULL, 0) != 0)
		return 0;
	drop_agg(g);
	return dropped;
}

static int
gpu_device(const gbt_engine *g)
{
	return g->device;
}

static const gbt_engine_ops gpu_ops = {
	gpu_usable,
	gpu_build,
	gpu_free,
	gpu_ranges,
	gpu_sort_unique,
	gpu_aggregate,
	gpu_aggregate_each,
	gpu_aggregate_batch,
	gpu_aggregate_filtered,
	gpu_aggregate_grouped,
	gpu_tidy,
	gpu_bytes,
	gpu_host_bytes,
	gpu_scratch_bytes,
	gpu_trim,
	gpu_device,
	gpu_tidy_all,
	gpu_note_removed,
	gpu_drop_idle_copies
};

extern "C" const gbt_engine_ops *
gbt_engine_gpu_ops(void)
{
	return &gpu_ops;
}
