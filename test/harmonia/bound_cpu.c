/*
 * bound_cpu.c
 *	  The CPU side of bound.h: options, the NTG model, and the twin's
 *	  sequential bounds (the walk of harmonia_int.h).
 */
#include <stdlib.h>
#include <string.h>

#include "bound.h"

void
hm_default_opts(hm_opts *opts)
{
	opts->psa_bits = -1;
	opts->group_size = 1;		/* measured best on the H100 */
	opts->combine = 0;			/* measured slower on the H100, even zipfian */
}

/* NTG model (Harmonia 4.2, Equation 4) from traced child indices. */
int
hm__ntg_model(const int32_t *cidx, int64_t nsample, int nlev, int fanout)
{
	int			gs = fanout < 32 ? fanout : 32;

	while (gs > 1)
	{
		double		sb = 0,
					sa = 0;
		int64_t		w,
					i;
		int			l;

		/* S: mean over warps of the summed per-level max comparison steps */
		for (l = 0; l < nlev; l++)
		{
			int			per = 32 / gs;

			for (w = 0; w < nsample; w += per)
			{
				int			mb = 0;

				for (i = w; i < w + per && i < nsample; i++)
					if (cidx[i * nlev + l] / gs + 1 > mb)
						mb = cidx[i * nlev + l] / gs + 1;
				sb += mb;
			}
			per *= 2;
			for (w = 0; w < nsample; w += per)
			{
				int			ma = 0;

				for (i = w; i < w + per && i < nsample; i++)
					if (cidx[i * nlev + l] / (gs / 2) + 1 > ma)
						ma = cidx[i * nlev + l] / (gs / 2) + 1;
				sa += ma;
			}
		}
		/* per-warp averages: the narrowed warps serve twice the queries */
		sb /= (double) ((nsample + 32 / gs - 1) / (32 / gs));
		sa /= (double) ((nsample + 64 / gs - 1) / (64 / gs));
		if (sb / sa * 2.0 <= 1.0)
			break;
		gs /= 2;
	}
	return gs;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

int
hm_cpu_choose_group_size(const hm_tree *t, const uint64_t *sample, int64_t nsample)
{
	uint64_t   *q;
	int32_t    *cidx;
	int64_t		i;
	int			nlev = t->nlevels + 1,
				l,
				gs;

	if (t->n == 0 || nsample <= 0 || !sample)
		return 1;
	q = malloc(nsample * sizeof(uint64_t));
	cidx = malloc(nsample * nlev * sizeof(int32_t));
	if (!q || !cidx)
	{
		free(q);
		free(cidx);
		return 1;
	}
	memcpy(q, sample, nsample * sizeof(uint64_t));
	qsort(q, nsample, sizeof(uint64_t), cmp_u64);
	for (i = 0; i < nsample; i++)
	{
		int64_t		x = 0,
					p,
					e;
		int			c;

		for (l = 0; l < t->nlevels; l++)
		{
			int			nk = (int) (t->child[x + 1] - t->child[x]) - 1;

			for (c = 0; c < nk && t->inner[x * t->fanout + c] < q[i]; c++)
				;
			cidx[i * nlev + l] = c;
			x = t->child[x] + c;
		}
		p = (x - t->ninner) * t->fanout;
		e = p + t->fanout < t->n ? p + t->fanout : t->n;
		for (c = 0; p + c < e && t->keys[p + c] < q[i]; c++)
			;
		cidx[i * nlev + t->nlevels] = c;
	}
	gs = hm__ntg_model(cidx, nsample, nlev, t->fanout);
	free(q);
	free(cidx);
	return gs;
}

static hm_status
cpu_bound(const hm_tree *t, const uint64_t *q, int64_t nq, int64_t *pos,
		  const hm_opts *opts, int upper)
{
	int64_t		i;
	int			combine = opts ? opts->combine : 1;

	if (!t || nq < 0 || (nq > 0 && (!q || !pos)))
		return HM_EINVAL;
	for (i = 0; i < nq; i++)
	{
		/* Eirene combining: an equal neighbour's answer is reused */
		if (combine && i > 0 && q[i] == q[i - 1])
			pos[i] = pos[i - 1];
		else
			pos[i] = hm__bound(t, q[i], upper);
	}
	return HM_OK;
}

hm_status
hm_cpu_lower_bound(const hm_tree *t, const uint64_t *q, int64_t nq,
				   int64_t *pos, const hm_opts *opts)
{
	return cpu_bound(t, q, nq, pos, opts, 0);
}

hm_status
hm_cpu_upper_bound(const hm_tree *t, const uint64_t *q, int64_t nq,
				   int64_t *pos, const hm_opts *opts)
{
	return cpu_bound(t, q, nq, pos, opts, 1);
}
