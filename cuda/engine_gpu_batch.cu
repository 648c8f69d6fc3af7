/*
 * engine_gpu_batch.cu
 *	  The GPU engine's aggregate_batch (engine.h): aggbatch.c's driver, the
 *	  scans of more than GBT_HOST_SCAN_MAX entries of each engine in one
 *	  launch (vagg_batch.cu), a run of items with one removed bitmap each.
 */
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#include "aggbatch.h"
#include "engine_gpu_int.h"

static void
gpu_host_input(gbt_engine *g, gbt_agg_input *in)
{
	*in = g->host;
}

static gbt_chunk_sums *
gpu_sums(gbt_engine *g)
{
	return g->sums;
}

/* The n scans of engine g: a launch per run of one removed bitmap. */
static void
gpu_device(gbt_engine *g, gbt_batch_scan **scans, int64_t n)
{
	gbt_vagg_query *q = (gbt_vagg_query *) calloc(n > 0 ? n : 1, sizeof(gbt_vagg_query));
	int64_t		i = 0;

	if (q == NULL)
	{
		for (i = 0; i < n; i++)
			gbt_agg_item_fail(scans[i]->item, "aggregate", "out of host memory");
		return;
	}
	while (i < n)
	{
		gbt_agg_item *first = scans[i]->item;
		gbt_agg_input in;
		char		err[GBT_ITEM_ERRLEN];
		int64_t		j = i;
		int64_t		k;

		while (j < n && scans[j]->item->removed == first->removed &&
			   scans[j]->item->removed_version == first->removed_version)
		{
			gbt_batch_scan *s = scans[j];
			gbt_vagg_query *x = &q[j - i];

			x->start = s->start;
			x->end = s->end;
			x->nranges = s->nranges;
			x->visible = s->item->visible;
			x->nvisible = s->item->nvisible;
			x->cols = s->item->cols;
			x->out = s->item->out;
			x->unsure = s->item->unsure;
			x->unsure_cap = s->item->unsure_cap;
			j++;
		}
		if (gpu_device_input(g, first->removed, first->removed_version, &in,
							 err, sizeof(err)) != 0)
		{
			for (k = i; k < j; k++)
				gbt_agg_item_fail(scans[k]->item, "aggregate", err);
		}
		else
		{
			(void) gbt_vagg_batch_gpu(g->vagg, &in, q, j - i);
			for (k = i; k < j; k++)
				if (q[k - i].rc != 0)
				{
					scans[k]->item->rc = 1;
					memcpy(scans[k]->item->err, q[k - i].err, GBT_ITEM_ERRLEN);
				}
		}
		i = j;
	}
	free(q);
}

int
gpu_aggregate_batch(gbt_agg_item *items, int64_t nitems, gbt_engine_par par, int npar)
{
	static const gbt_batch_hooks hooks = {gpu_host_input, gpu_sums, GBT_HOST_SCAN_MAX,
	gpu_device};

	return gbt_agg_batch_run(items, nitems, &hooks, par, npar);
}
