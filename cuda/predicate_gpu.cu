/*
 * predicate_gpu.cu
 *	  The filtered aggregate of predicate.h on the GPU: the programs are
 *	  checked on the host and handed, with their constant list, to a vagg
 *	  query (vagg_gpu.cu), whose kernel (vagg_kernels.cu) evaluates them per
 *	  entry, one grid row per filter.
 */
#include <string.h>

#include "predicate.h"
#include "vagg_kernels.cuh"

/* vagg_kernels.cuh: a set's programs as a query takes them */
void
vagg_filter_make(const gbt_pred_set *preds, gbt_pred *progs, VaggFilter *filt)
{
	gbt_pred	always;
	int			f;

	memset(&always, 0, sizeof(always));
	always.ninsns = 1;
	always.insn[0].op = GBT_PRED_TRUE;
	progs[0] = preds->where ? *preds->where : always;
	for (f = 0; f < preds->nfilters; f++)
		progs[1 + f] = preds->filter[f] ? *preds->filter[f] : always;
	filt->progs = progs;
	filt->nfilters = preds->nfilters;
	filt->list = preds->list;
	filt->nlist = preds->nlist;
}

extern "C" int
gbt_vagg_filtered_gpu(gbt_vagg_gpu_ctx *ctx, const gbt_agg_input *in,
					  const int64_t *start, const int64_t *end, int64_t nranges,
					  const uint8_t *visible, int64_t nvisible,
					  const gbt_pred_set *preds, gbt_agg_result *out,
					  int64_t *unsure, int64_t unsure_cap, char *err, size_t errlen)
{
	/* WHERE, then each filter; a missing one is the program TRUE */
	gbt_pred	progs[1 + GBT_PRED_MAX_FILTERS];
	VaggFilter	filt;

	if (!in)
		return gbt_vagg_fail(err, errlen, "vagg: input or result is NULL");
	if (gbt_pred_set_check(preds, in->ncols, in->coltype, err, errlen))
		return 1;
	vagg_filter_make(preds, progs, &filt);
	return vagg_gpu_query(ctx, in, start, end, nranges, visible, nvisible, &filt, out,
						  unsure, unsure_cap, err, errlen);
}
