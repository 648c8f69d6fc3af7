/*
 * split_build.h
 *	  The engine tests' build: through ops, or, for gbt_engine_split_ops(),
 *	  a split of tb_split_inner's engines: 1 to 4 parts of random weights
 *	  (some far apart, so that parts hold none to all of the entries), part
 *	  p on device (device + p) % tb_split_ndev (all on -1 for the CPU twin),
 *	  built and later called at once or in turn.  Uses vt_below() of
 *	  test_vagg_cpu.c.
 */
#ifndef TB_SPLIT_BUILD_H
#define TB_SPLIT_BUILD_H

#include "../../cuda/engine.h"

static const gbt_engine_ops *tb_split_inner = NULL;
static int	tb_split_ndev = 1;

/* pieces one after another, last first (any order must do) */
static void
tb_run_pieces(void (*fn) (void *), void *arg, size_t argsize, int n)
{
	while (n-- > 0)
		fn((char *) arg + n * argsize);
}

static int
tb_build(const gbt_engine_ops *ops, const uint64_t *k, const gbt_agg_input *in,
		 int device, gbt_engine **e, char *err, size_t errlen)
{
	int			devices[GBT_SPLIT_MAX_PARTS];
	int64_t		weights[GBT_SPLIT_MAX_PARTS];
	int			nparts = 1 + (int) vt_below(4),
				p;
	gbt_piece_runner run = vt_below(2) ? tb_run_pieces : NULL;

	if (ops != gbt_engine_split_ops())
		return ops->build(k, in, device, e, err, errlen);
	for (p = 0; p < nparts; p++)
	{
		devices[p] = device < 0 ? -1 : (device + p) % tb_split_ndev;
		weights[p] = 1 + (int64_t) vt_below(vt_below(2) ? 3 : 1000);
	}
	return gbt_engine_split_build(tb_split_inner, k, in, nparts, devices, weights, run, run,
								  e, err, errlen);
}

#endif							/* TB_SPLIT_BUILD_H */
