/*
 * engine_cpu.c
 *	  The CPU twin behind engine.h: Harmonia's CPU tree (harmonia_cpu.c) and
 *	  the aggregate contract's CPU reference (vagg_cpu.c), both over host
 *	  memory, long all-visible ranges answered from chunk sums
 *	  (chunksums.c) as on the GPU engine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggbatch.h"
#include "chunksums.h"
#include "engine.h"
#include "groupby.h"
#include "harmonia.h"
#include "keysort.h"
#include "predicate.h"
#include "vagg.h"

struct gbt_engine
{
	hm_tree    *tree;
	gbt_agg_input agg;			/* borrowed arrays; removed set per call */
	gbt_chunk_sums *sums;		/* NULL: none (few entries, no memory) */
};

int
gbt_engine_fail(const char *what, const char *why, char *err, size_t errlen)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s: %s", what, why);
	return 1;
}

int
gbt_engine_check_keyed(const uint64_t *keys, const gbt_agg_input *in, char *err,
					   size_t errlen)
{
	int			c;

	for (c = 0; c < in->ncols && c < GBT_MAX_COLS; c++)
		if (((in->keyed >> c) & 1) && in->n > 0 && in->cols[c] != (const void *) keys)
			return gbt_engine_fail("build", "a keyed column is not the keys", err, errlen);
	return 0;
}

static int
cpu_usable(int device, char *name, size_t namelen, int64_t *memory,
		   char *why, size_t whylen)
{
	if (device != -1)
		return gbt_engine_fail("CPU engine", "only device -1", why, whylen);
	if (name != NULL && namelen > 0)
		snprintf(name, namelen, "CPU");
	if (memory != NULL)
		*memory = 0;
	return 0;
}

static void
cpu_free(gbt_engine *e)
{
	if (e == NULL)
		return;
	hm_cpu_free(e->tree);
	gbt_chunk_sums_free(e->sums);
	free(e);
}

static int
cpu_build(const uint64_t *keys, const gbt_agg_input *in, int device,
		  gbt_engine **out, char *err, size_t errlen)
{
	gbt_engine *e;
	hm_status	s;

	*out = NULL;
	if (device != -1)
		return gbt_engine_fail("CPU engine", "only device -1", err, errlen);
	if (gbt_engine_check_keyed(keys, in, err, errlen) != 0)
		return 1;
	e = calloc(1, sizeof(gbt_engine));
	if (e == NULL)
		return gbt_engine_fail("CPU engine", "out of host memory", err, errlen);
	e->agg = *in;
	e->agg.removed = NULL;
	s = hm_cpu_build(keys, in->n, HM_DEFAULT_FANOUT, &e->tree);
	if (s != HM_OK)
	{
		free(e);
		return gbt_engine_fail("Harmonia build", hm_strerror(s), err, errlen);
	}
	e->sums = gbt_chunk_sums_build(&e->agg);
	*out = e;
	return 0;
}

static int
cpu_ranges(gbt_engine *e, const uint64_t *lo, const uint64_t *hi, int64_t n,
		   int64_t *start, int64_t *end, char *err, size_t errlen)
{
	hm_range   *r = malloc(sizeof(hm_range) * (n > 0 ? n : 1));
	hm_status	s;
	int64_t		i;

	if (r == NULL)
		return gbt_engine_fail("range search", "out of host memory", err, errlen);
	for (i = 0; i < n; i++)
	{
		r[i].lo = lo[i];
		r[i].hi = hi[i];
		r[i].lo_incl = r[i].hi_incl = 1;
	}
	s = hm_cpu_ranges(e->tree, r, n, start, end);
	free(r);
	if (s != HM_OK)
		return gbt_engine_fail("Harmonia range search", hm_strerror(s), err, errlen);
	return 0;
}

static int
cpu_sort_unique(gbt_engine *e, uint64_t *keys, int64_t n, uint32_t *map,
				int64_t *nout, char *err, size_t errlen)
{
	uint64_t   *tmp;
	uint32_t   *idx = NULL;

	*nout = n;
	if (n > INT32_MAX)
		return gbt_engine_fail("key sort", "too many keys", err, errlen);
	tmp = malloc(sizeof(uint64_t) * (n + 1));
	if (map != NULL)
		idx = malloc(sizeof(uint32_t) * (n + 1));
	if (tmp == NULL || (map != NULL && idx == NULL))
	{
		free(tmp);
		free(idx);
		return gbt_engine_fail("key sort", "out of memory", err, errlen);
	}
	*nout = gbt_sort_unique_map(keys, tmp, map, idx, n);
	free(tmp);
	free(idx);
	if (*nout < 0)
		return gbt_engine_fail("key sort", "out of memory", err, errlen);
	return 0;
}

static int
cpu_aggregate(gbt_engine *e, const uint8_t *removed, uint64_t removed_version,
			  const int64_t *start, const int64_t *end, int64_t nranges,
			  const uint8_t *visible, int64_t nvisible, gbt_agg_result *out,
			  int64_t *unsure, int64_t unsure_cap, char *err, size_t errlen)
{
	gbt_agg_input in = e->agg;
	gbt_chunk_split split;
	int			rc;

	in.removed = removed;
	rc = gbt_chunk_sums_split(e->sums, &in, removed_version, start, end, nranges,
							  visible, nvisible, &split);
	if (rc < 0)
		return gbt_engine_fail("aggregate", "out of host memory", err, errlen);
	if (rc > 0)
		return gbt_vagg_cpu(&in, start, end, nranges, visible, nvisible, out,
							unsure, unsure_cap, err, errlen);
	rc = gbt_vagg_cpu_visible(&in, split.start, split.end, split.n, out, err, errlen);
	if (rc == 0)
		gbt_agg_result_combine(out, &split.part, in.coltype, in.ncols);
	gbt_chunk_split_free(&split);
	return rc;
}

static int
cpu_aggregate_each(gbt_engine *e, const uint8_t *removed, uint64_t removed_version,
				   const int64_t *start, const int64_t *end, int64_t nranges,
				   const uint8_t *visible, int64_t nvisible, gbt_agg_result *out,
				   int64_t *unsure, int64_t unsure_cap, char *err, size_t errlen)
{
	gbt_agg_input in = e->agg;

	in.removed = removed;
	return gbt_chunk_sums_each(e->sums, &in, removed_version, start, end, nranges,
							   visible, nvisible, out, unsure, unsure_cap, err, errlen);
}

static void
cpu_host_input(gbt_engine *e, gbt_agg_input *in)
{
	*in = e->agg;
}

static gbt_chunk_sums *
cpu_sums(gbt_engine *e)
{
	return e->sums;
}

/* Every scan on the host: the batch is the chunk sums' walks and the scans. */
static int
cpu_aggregate_batch(gbt_agg_item *items, int64_t nitems, gbt_engine_par par, int npar)
{
	static const gbt_batch_hooks hooks = {cpu_host_input, cpu_sums, INT64_MAX, NULL};

	return gbt_agg_batch_run(items, nitems, &hooks, par, npar);
}

static int
cpu_aggregate_filtered(gbt_engine *e, const uint8_t *removed, uint64_t removed_version,
					   const int64_t *start, const int64_t *end, int64_t nranges,
					   const uint8_t *visible, int64_t nvisible, const gbt_pred_set *preds,
					   gbt_agg_result *out, int64_t *unsure, int64_t unsure_cap,
					   char *err, size_t errlen)
{
	gbt_agg_input in = e->agg;

	(void) removed_version;
	in.removed = removed;
	return gbt_vagg_filtered_cpu(&in, start, end, nranges, visible, nvisible, preds, out,
								 unsure, unsure_cap, err, errlen);
}

static int
cpu_aggregate_grouped(gbt_engine *e, const uint8_t *removed, uint64_t removed_version,
					  const int64_t *start, const int64_t *end, int64_t nranges,
					  const uint8_t *visible, int64_t nvisible, const gbt_pred_set *preds,
					  gbt_groups *g, int64_t *unsure, int64_t unsure_cap,
					  char *err, size_t errlen)
{
	gbt_agg_input in = e->agg;

	(void) removed_version;
	in.removed = removed;
	return gbt_vagg_grouped_cpu(&in, start, end, nranges, visible, nvisible, preds, g,
								unsure, unsure_cap, err, errlen);
}

static int
cpu_tidy(gbt_engine *e, const uint8_t *removed, uint64_t removed_version,
		 int64_t max_chunks)
{
	gbt_agg_input in = e->agg;

	in.removed = removed;
	return gbt_chunk_sums_tidy(e->sums, &in, removed_version, max_chunks);
}

static int
cpu_tidy_all(gbt_engine *e, const uint8_t *removed, uint64_t removed_version,
			 gbt_piece_runner run, int npieces)
{
	gbt_agg_input in = e->agg;

	in.removed = removed;
	return gbt_chunk_sums_tidy_all(e->sums, &in, removed_version, run, npieces);
}

static void
cpu_note_removed(gbt_engine *e, const uint8_t *removed, uint64_t from, uint64_t to,
				 const int64_t *changed, int64_t nchanged)
{
	gbt_chunk_sums_note(e->sums, removed, from, to, changed, nchanged);
}

static size_t
cpu_bytes(const gbt_engine *e)
{
	return hm_bytes(e->tree);
}

static size_t
cpu_host_bytes(const gbt_engine *e)
{
	return gbt_chunk_sums_bytes(e->sums);
}

static size_t
cpu_scratch_bytes(const gbt_engine *e)
{
	(void) e;
	return 0;					/* allocated per call */
}

static void
cpu_trim(gbt_engine *e)
{
	(void) e;					/* nothing kept */
}

static int
cpu_device(const gbt_engine *e)
{
	(void) e;
	return -1;
}

static size_t
cpu_drop_idle_copies(gbt_engine *e, int64_t idle_ms)
{
	(void) e;
	(void) idle_ms;
	return 0;					/* one copy: the host's */
}

static const gbt_engine_ops cpu_ops = {
	cpu_usable,
	cpu_build,
	cpu_free,
	cpu_ranges,
	cpu_sort_unique,
	cpu_aggregate,
	cpu_aggregate_each,
	cpu_aggregate_batch,
	cpu_aggregate_filtered,
	cpu_aggregate_grouped,
	cpu_tidy,
	cpu_bytes,
	cpu_host_bytes,
	cpu_scratch_bytes,
	cpu_trim,
	cpu_device,
	cpu_tidy_all,
	cpu_note_removed,
	cpu_drop_idle_copies
};

const gbt_engine_ops *
gbt_engine_cpu_ops(void)
{
	return &cpu_ops;
}
