/*
 * harmonia_cpu.c
 *	  The CPU twin of the Harmonia engine: the same layout built and searched
 *	  the same way (the walk is in harmonia_int.h, shared with the kernels).
 *	  It is the test oracle and the engine when there is no GPU.
 */
#include <stdlib.h>
#include <string.h>

#include "harmonia_int.h"

const char *
hm_strerror(hm_status s)
{
	switch (s)
	{
		case HM_OK:
			return "success";
		case HM_EINVAL:
			return "invalid argument";
		case HM_ENOMEM:
			return "out of host memory";
		case HM_EDEVMEM:
			return "out of device memory";
		case HM_ECUDA:
			return "CUDA error";
		case HM_ENODEV:
			return "no usable GPU";
	}
	return "unknown error";
}

void
hm_default_opts(hm_opts *opts)
{
	opts->psa_bits = -1;
	opts->group_size = 1;		/* measured best on the H100; 0 = the model */
	opts->combine = 0;			/* measured slower on the H100, even zipfian */
}

/* Equation 2: N = B - log2(2^B / T * K) = log2(T) - log2(K), clamped */
int
hm_psa_bits(int64_t tree_keys, int key_bits, int keys_per_line)
{
	int			lt = 0,
				lk = 0,
				n;

	while (lt < 62 && ((int64_t) 1 << lt) < tree_keys)
		lt++;
	while (lk < 30 && (1 << (lk + 1)) <= keys_per_line)
		lk++;
	n = lt - lk;
	if (n < 0)
		n = 0;
	if (n > key_bits)
		n = key_bits;
	return n;
}

int64_t
hm_entries(const hm_tree *t)
{
	return t->n;
}

int64_t
hm_delta_entries(const hm_tree *t)
{
	return t->nins + t->ndel;
}

int
hm_fanout(const hm_tree *t)
{
	return t->fanout;
}

int
hm_levels(const hm_tree *t)
{
	return t->nlevels + 1;
}

size_t
hm_bytes(const hm_tree *t)
{
	size_t		b = (size_t) t->n * 16 + (size_t) t->ninner * (t->fanout + 1) * 8;
	int			c,
				l;

	for (c = 0; c < t->ncols; c++)
	{
		b += (size_t) t->n * 8 + (size_t) (t->n + 1) * 16;
		for (l = 0; l < t->nmm; l++)
			b += (size_t) t->mm_len[l] * 16;
	}
	return b;
}

int
hm_delta_wants_merge(const hm_tree *t)
{
	int64_t		lim = t->n / 32;

	if (lim < 4096)
		lim = 4096;
	return t->nins + t->ndel > lim;
}

/* Level counts and BFS starts for n keys at fanout F. */
hm_status
hm__layout(hm_tree *t, int64_t n, int fanout)
{
	int64_t		cnt[HM_MAX_LEVELS + 1];
	int			nl = 0,
				l;
	int64_t		m,
				s;

	if (n < 0 || fanout < 8 || fanout > 128 || (fanout & (fanout - 1)))
		return HM_EINVAL;
	t->n = n;
	t->fanout = fanout;
	t->nleaves = n == 0 ? 0 : (n + fanout - 1) / fanout;
	m = t->nleaves;
	while (m > 1)
	{
		m = (m + fanout - 1) / fanout;
		cnt[nl++] = m;			/* bottom-up */
	}
	t->nlevels = nl;
	s = 0;
	for (l = 0; l < nl; l++)
	{
		t->lvl_start[l] = s;
		s += cnt[nl - 1 - l];
	}
	t->lvl_start[nl] = s;
	t->ninner = s;
	/* min/max levels: blocks of F^l positions until one block is left */
	t->nmm = 0;
	m = n;
	while (m > 1)
	{
		m = (m + fanout - 1) / fanout;
		t->mm_len[t->nmm++] = m;
	}
	return HM_OK;
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
hm__cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

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

void
hm__free_delta(hm_tree *t)
{
	int			c;

	free(t->ins_keys);
	free(t->ins_rowids);
	free(t->delpos);
	for (c = 0; c < HM_MAX_COLS; c++)
	{
		free(t->ins_cols[c]);
		free(t->ins_psi[c]);
		free(t->ins_psf[c]);
		free(t->del_psi[c]);
		free(t->del_psf[c]);
		t->ins_cols[c] = NULL;
		t->ins_psi[c] = NULL;
		t->ins_psf[c] = NULL;
		t->del_psi[c] = NULL;
		t->del_psf[c] = NULL;
	}
	t->ins_keys = NULL;
	t->ins_rowids = NULL;
	t->delpos = NULL;
	t->nins = t->ndel = 0;
}

void
hm_cpu_free(hm_tree *t)
{
	int			c,
				l;

	if (!t)
		return;
	hm__free_delta(t);
	free(t->inner);
	free(t->child);
	free(t->keys);
	free(t->rowids);
	for (c = 0; c < HM_MAX_COLS; c++)
	{
		free(t->cols[c]);
		free(t->psi[c]);
		free(t->psf[c]);
		for (l = 0; l < HM_MAX_LEVELS; l++)
		{
			free(t->mmin[c][l]);
			free(t->mmax[c][l]);
		}
	}
	free(t);
}

/* prefix sums of v[0..n) into ps[0..n] */
static void
prefix_sums(const hm_val *v, int64_t n, int isf, hm_i128 *psi, hm_dd *psf)
{
	int64_t		i;

	if (isf)
	{
		psf[0].hi = psf[0].lo = 0;
		for (i = 0; i < n; i++)
		{
			hm_dd		x;

			x.hi = v[i].f;
			x.lo = 0;
			psf[i + 1] = hm__adddd(psf[i], x);
		}
	}
	else
	{
		psi[0].hi = psi[0].lo = 0;
		for (i = 0; i < n; i++)
			psi[i + 1] = hm__add128(psi[i], hm__from64(v[i].i));
	}
}

static int
valid_input(const hm_input *in)
{
	int64_t		i;
	int			c;

	if (!in || in->n < 0 || in->ncols < 0 || in->ncols > HM_MAX_COLS ||
		(in->n > 0 && !in->keys))
		return 0;
	for (c = 0; c < in->ncols; c++)
		if ((in->n > 0 && !in->cols[c]) ||
			(in->coltype[c] != HM_INT64 && in->coltype[c] != HM_FLOAT8))
			return 0;
	for (i = 1; i < in->n; i++)
		if (in->keys[i - 1] > in->keys[i])
			return 0;
	return 1;
}

hm_status
hm_cpu_build(const hm_input *in, int fanout, hm_tree **out)
{
	hm_tree    *t;
	int64_t		i,
				n,
				x;
	int			c,
				l,
				s;

	*out = NULL;
	if (!valid_input(in))
		return HM_EINVAL;
	t = calloc(1, sizeof(hm_tree));
	if (!t)
		return HM_ENOMEM;
	if (hm__layout(t, in->n, fanout) != HM_OK)
	{
		free(t);
		return HM_EINVAL;
	}
	n = t->n;
	t->ncols = in->ncols;
	t->keys = malloc((n + 1) * sizeof(uint64_t));
	t->rowids = malloc((n + 1) * sizeof(uint64_t));
	t->inner = malloc((t->ninner * fanout + 1) * sizeof(uint64_t));
	t->child = malloc((t->ninner + 1) * sizeof(int64_t));
	if (!t->keys || !t->rowids || !t->inner || !t->child)
		goto nomem;
	if (n > 0)
		memcpy(t->keys, in->keys, n * sizeof(uint64_t));
	for (i = 0; i < n; i++)
		t->rowids[i] = in->rowids ? in->rowids[i] : (uint64_t) i;
	for (x = 0; x < t->ninner; x++)
	{
		t->child[x] = hm__child0(t, x);
		for (s = 0; s < fanout; s++)
			t->inner[x * fanout + s] = hm__sep(t, t->keys, x, s);
	}
	t->child[t->ninner] = hm__child0(t, t->ninner);
	for (c = 0; c < t->ncols; c++)
	{
		int			isf = in->coltype[c] == HM_FLOAT8;
		int64_t		len = n;

		t->coltype[c] = in->coltype[c];
		t->cols[c] = malloc((n + 1) * sizeof(hm_val));
		if (isf)
			t->psf[c] = malloc((n + 1) * sizeof(hm_dd));
		else
			t->psi[c] = malloc((n + 1) * sizeof(hm_i128));
		if (!t->cols[c] || (!t->psf[c] && !t->psi[c]))
			goto nomem;
		if (n > 0)
			memcpy(t->cols[c], in->cols[c], n * sizeof(hm_val));
		prefix_sums(t->cols[c], n, isf, t->psi[c], t->psf[c]);
		for (l = 0; l < t->nmm; l++)
		{
			const hm_val *lo = l == 0 ? t->cols[c] : t->mmin[c][l - 1];
			const hm_val *hi = l == 0 ? t->cols[c] : t->mmax[c][l - 1];
			int64_t		b;

			t->mmin[c][l] = malloc(t->mm_len[l] * sizeof(hm_val));
			t->mmax[c][l] = malloc(t->mm_len[l] * sizeof(hm_val));
			if (!t->mmin[c][l] || !t->mmax[c][l])
				goto nomem;
			for (b = 0; b < t->mm_len[l]; b++)
			{
				hm_val		mn,
							mx;
				int			have = 0;
				int64_t		k;

				mn.i = mx.i = 0;
				for (k = b * fanout; k < (b + 1) * fanout && k < len; k++)
				{
					hm__take(lo[k], isf, &mn, &mx, &have);
					hm__take(hi[k], isf, &mn, &mx, &have);
				}
				t->mmin[c][l][b] = mn;
				t->mmax[c][l][b] = mx;
			}
			len = t->mm_len[l];
		}
	}
	*out = t;
	return HM_OK;
nomem:
	hm_cpu_free(t);
	return HM_ENOMEM;
}

static hm_status
check_args(const hm_tree *t, const void *a, int64_t n, const void *b)
{
	if (!t || n < 0 || (n > 0 && (!a || !b)))
		return HM_EINVAL;
	return HM_OK;
}

static hm_status
cpu_bound(const hm_tree *t, const uint64_t *q, int64_t nq, int64_t *pos,
		  const hm_opts *opts, int upper)
{
	int64_t		i;
	int			combine = opts ? opts->combine : 1;

	if (check_args(t, q, nq, pos) != HM_OK)
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

hm_status
hm_cpu_ranges(const hm_tree *t, const hm_range *r, int64_t nr,
			  int64_t *start, int64_t *end, const hm_opts *opts)
{
	int64_t		i;

	(void) opts;
	if (check_args(t, r, nr, start) != HM_OK || (nr > 0 && !end))
		return HM_EINVAL;
	for (i = 0; i < nr; i++)
		hm__range_pos(t, &r[i], &start[i], &end[i]);
	return HM_OK;
}

hm_status
hm_cpu_aggregate(const hm_tree *t, const hm_range *r, int64_t nr,
				 int col, hm_agg *out, const hm_opts *opts)
{
	int64_t		i;

	(void) opts;
	if (check_args(t, r, nr, out) != HM_OK || col < -1 || col >= t->ncols)
		return HM_EINVAL;
	for (i = 0; i < nr; i++)
		hm__aggregate(t, &r[i], col, &out[i]);
	return HM_OK;
}

uint64_t
hm_cpu_rowid(const hm_tree *t, int64_t pos)
{
	return t->rowids[pos];
}

/* Delta deletes -> sorted main-tree positions (matched by key and row id). */
static hm_status
resolve_deletes(const hm_tree *t, const hm_input *del, int64_t *delpos)
{
	int64_t		i,
				p,
				e;

	for (i = 0; i < del->n; i++)
	{
		uint64_t	rid = del->rowids ? del->rowids[i] : 0;

		p = hm__bound(t, del->keys[i], 0);
		e = hm__bound(t, del->keys[i], 1);
		if (!del->rowids)
			e = p < e ? p + 1 : p;	/* any entry of the key */
		while (p < e && del->rowids && t->rowids[p] != rid)
			p++;
		if (p >= e)
			return HM_EINVAL;
		delpos[i] = p;
	}
	qsort(delpos, del->n, sizeof(int64_t), hm__cmp_i64);
	for (i = 1; i < del->n; i++)
		if (delpos[i] == delpos[i - 1])
			return HM_EINVAL;	/* the same entry deleted twice */
	return HM_OK;
}

/* Build the delta arrays of t (host memory) from ins and resolved delpos. */
hm_status
hm__fill_delta(hm_tree *t, const hm_input *ins, int64_t *delpos, int64_t ndel,
		   const hm_val *const *delvals)
{
	int			c;
	int64_t		i,
				ni = ins ? ins->n : 0;

	t->nins = ni;
	t->ndel = ndel;
	t->delpos = delpos;
	t->ins_keys = malloc((ni + 1) * sizeof(uint64_t));
	t->ins_rowids = malloc((ni + 1) * sizeof(uint64_t));
	if (!t->ins_keys || !t->ins_rowids)
		return HM_ENOMEM;
	if (ni > 0)
		memcpy(t->ins_keys, ins->keys, ni * sizeof(uint64_t));
	for (i = 0; i < ni; i++)
		t->ins_rowids[i] = ins->rowids ? ins->rowids[i] : 0;
	for (c = 0; c < t->ncols; c++)
	{
		int			isf = t->coltype[c] == HM_FLOAT8;

		t->ins_cols[c] = malloc((ni + 1) * sizeof(hm_val));
		t->ins_psi[c] = malloc((ni + 1) * sizeof(hm_i128));
		t->ins_psf[c] = malloc((ni + 1) * sizeof(hm_dd));
		t->del_psi[c] = malloc((ndel + 1) * sizeof(hm_i128));
		t->del_psf[c] = malloc((ndel + 1) * sizeof(hm_dd));
		if (!t->ins_cols[c] || !t->ins_psi[c] || !t->ins_psf[c] ||
			!t->del_psi[c] || !t->del_psf[c])
			return HM_ENOMEM;
		if (ni > 0)
			memcpy(t->ins_cols[c], ins->cols[c], ni * sizeof(hm_val));
		prefix_sums(t->ins_cols[c], ni, isf, t->ins_psi[c], t->ins_psf[c]);
		prefix_sums(delvals[c], ndel, isf, t->del_psi[c], t->del_psf[c]);
	}
	return HM_OK;
}

/* Shared by both engines: check inputs, resolve deletes, gather values. */
hm_status
hm_cpu_set_delta(hm_tree *t, const hm_input *ins, const hm_input *del)
{
	int64_t    *delpos = NULL;
	hm_val	   *dv[HM_MAX_COLS];
	int64_t		nd = del ? del->n : 0,
				i;
	int			c;
	hm_status	st;

	if (!t || t->gpu || (ins && (!valid_input(ins) || ins->ncols != t->ncols)) ||
		(del && (!valid_input(del))))
		return HM_EINVAL;
	hm__free_delta(t);
	delpos = malloc((nd + 1) * sizeof(int64_t));
	if (!delpos)
		return HM_ENOMEM;
	if (nd > 0 && (st = resolve_deletes(t, del, delpos)) != HM_OK)
	{
		free(delpos);
		return st;
	}
	memset(dv, 0, sizeof(dv));
	st = HM_OK;
	for (c = 0; c < t->ncols; c++)
	{
		dv[c] = malloc((nd + 1) * sizeof(hm_val));
		if (!dv[c])
			st = HM_ENOMEM;
		else
			for (i = 0; i < nd; i++)
				dv[c][i] = t->cols[c][delpos[i]];
	}
	if (st == HM_OK)
		st = hm__fill_delta(t, ins, delpos, nd, (const hm_val *const *) dv);
	else
		free(delpos);
	for (c = 0; c < t->ncols; c++)
		free(dv[c]);
	if (st != HM_OK)
		hm__free_delta(t);
	return st;
}

void
hm__free_input(hm_input *in)
{
	int			c;

	free((void *) in->keys);
	free((void *) in->rowids);
	for (c = 0; c < in->ncols; c++)
		free((void *) in->cols[c]);
	memset(in, 0, sizeof(*in));
}

/* main minus delpos, merged with ins, into freshly allocated arrays */
hm_status
hm__merge_host(const hm_input *m, const int64_t *delpos, int64_t ndel,
			   const hm_input *ins, hm_input *out)
{
	int64_t		n = m->n - ndel + (ins ? ins->n : 0),
				i = 0,
				j = 0,
				k = 0,
				d = 0;
	uint64_t   *keys,
			   *rid;
	hm_val	   *cols[HM_MAX_COLS];
	int			c;

	memset(out, 0, sizeof(*out));
	keys = malloc((n + 1) * sizeof(uint64_t));
	rid = malloc((n + 1) * sizeof(uint64_t));
	out->keys = keys;
	out->rowids = rid;
	out->ncols = m->ncols;
	for (c = 0; c < m->ncols; c++)
	{
		out->coltype[c] = m->coltype[c];
		out->cols[c] = cols[c] = malloc((n + 1) * sizeof(hm_val));
		if (!cols[c])
			keys = NULL;
	}
	if (!keys || !rid)
	{
		hm__free_input(out);
		return HM_ENOMEM;
	}
	while (k < n)
	{
		int			from_ins;

		if (i < m->n && d < ndel && delpos[d] == i)
		{
			i++;
			d++;
			continue;
		}
		/* inserted entries go after equal main keys */
		from_ins = ins && j < ins->n && (i >= m->n || ins->keys[j] < m->keys[i]);
		if (from_ins)
		{
			keys[k] = ins->keys[j];
			rid[k] = ins->rowids ? ins->rowids[j] : 0;
			for (c = 0; c < m->ncols; c++)
				cols[c][k] = ((const hm_val *) ins->cols[c])[j];
			j++;
		}
		else
		{
			keys[k] = m->keys[i];
			rid[k] = m->rowids ? m->rowids[i] : (uint64_t) i;
			for (c = 0; c < m->ncols; c++)
				cols[c][k] = ((const hm_val *) m->cols[c])[i];
			i++;
		}
		k++;
	}
	out->n = n;
	return HM_OK;
}

hm_status
hm_cpu_merge(hm_tree *t, hm_tree **out)
{
	hm_input	m,
				ins,
				merged;
	hm_status	st;
	int			c;

	*out = NULL;
	if (!t || t->gpu)
		return HM_EINVAL;
	memset(&m, 0, sizeof(m));
	m.n = t->n;
	m.keys = t->keys;
	m.rowids = t->rowids;
	m.ncols = t->ncols;
	memset(&ins, 0, sizeof(ins));
	ins.n = t->nins;
	ins.keys = t->ins_keys;
	ins.rowids = t->ins_rowids;
	ins.ncols = t->ncols;
	for (c = 0; c < t->ncols; c++)
	{
		m.coltype[c] = ins.coltype[c] = t->coltype[c];
		m.cols[c] = t->cols[c];
		ins.cols[c] = t->ins_cols[c];
	}
	st = hm__merge_host(&m, t->delpos, t->ndel, &ins, &merged);
	if (st != HM_OK)
		return st;
	st = hm_cpu_build(&merged, t->fanout, out);
	hm__free_input(&merged);
	return st;
}
