/*
 * What the grouped aggregate's tests share (test_group_cpu.c,
 * test_group_gpu.cu): random data with an INT64 group column of few or
 * many distinct values in every column form (plain, keyed, narrow, no
 * array), the naive oracle of groupby.h's contract, and a comparison of two
 * implementations' results for data too large for the oracle.
 *
 * The oracle: the entries to aggregate are test_vagg_cpu.c's oracle's over
 * the data with WHERE's failures removed (its unsure entries are the
 * call's); the groups are their distinct values, sorted, NULL last; and
 * group k's result for filter f is that oracle again over the data with
 * every entry removed but those of group k that filter f keeps (so it has
 * no unsure entries): O(n) a group and filter.  Valid C and C++.
 */
#ifndef GT_GROUP_ORACLE_H
#define GT_GROUP_ORACLE_H

#include "pred_oracle.h"
#include "../../cuda/groupby.h"

/* the group column's values */
enum
{
	GT_G_ONE, GT_G_FEW, GT_G_HALF, GT_G_DISTINCT, GT_G_EXTREME, GT_G_NMODES
};

/* a value of mode m for n entries, around off (wrapping) */
static int64_t
gt_gvalue(int m, int64_t n, int64_t off)
{
	static const int64_t ext[] = {INT64_MIN, INT64_MAX, INT64_MIN + 1, INT64_MAX - 1, -1, 0, 1};

	switch (m)
	{
		case GT_G_ONE:
			return off;
		case GT_G_FEW:
			return (int64_t) ((uint64_t) off + (uint64_t) vt_below(7));
		case GT_G_HALF:
			return (int64_t) ((uint64_t) off + (uint64_t) vt_below(n / 2 + 1));
		case GT_G_DISTINCT:
			return (int64_t) vt_rnd();
		default:
			return ext[vt_below(sizeof(ext) / sizeof(ext[0]))];
	}
}

static int
gt_cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return x < y ? -1 : x > y;
}

/* a narrow column's 4-byte offset for mode m */
static uint32_t
gt_gnarrow(int m, int64_t n, uint32_t off)
{
	static const uint32_t ext[] = {0, 1, UINT32_MAX, UINT32_MAX - 1, 1u << 31};

	switch (m)
	{
		case GT_G_ONE:
			return off;
		case GT_G_FEW:
			return off + (uint32_t) vt_below(7);
		case GT_G_HALF:
			return off + (uint32_t) vt_below(n / 2 + 1);
		case GT_G_DISTINCT:
			return (uint32_t) vt_rnd();
		default:
			return ext[vt_below(sizeof(ext) / sizeof(ext[0]))];
	}
}

/*
 * Random data of n entries (test_vagg_cpu.c's, pred_oracle.h's column
 * forms) whose column *gcol, INT64, holds group values of mode m; keys, if
 * not NULL, get the group column as the engine's keys (sorted) with half
 * a chance, and are the keys of any other keyed column.
 */
static void
gt_data(vt_data *d, int64_t n, int it, int m, uint64_t *keys, int *gcol)
{
	int64_t		nb = it % 5 == 4 ? 0 : 1 + vt_below(n / (1 + vt_below(8)) + 2),
				off = vt_int((int) vt_below(VT_I_NDIST)),
				i;
	int			c,
				g;

	vt_make(d, n, 1 + (int) vt_below(GBT_MAX_COLS), nb,
			it % 3 == 0 ? -1 : it % 3 == 1 ? 0.2 : 1.0 * (it % 7 == 2));
	g = (int) vt_below(d->in.ncols);
	*gcol = g;
	d->in.coltype[g] = GBT_VAL_INT64;
	d->dist[g] = VT_I_SMALL;
	for (i = 0; i < n; i++)
		((int64_t *) d->cols[g])[i] = gt_gvalue(m, n, off);
	for (c = 0; c < d->in.ncols; c++)
		if (d->in.coltype[c] == GBT_VAL_FLOAT8 && vt_below(3) == 0)
			vt_refill(d, c, VT_F_ZEROS + (int) vt_below(3));
	if (keys != NULL)
	{
		/* the keys: group values sorted, then encoded (the order kept) */
		int64_t    *v = (int64_t *) d->cols[g],
				   *sv = (int64_t *) malloc((n + 1) * 8);
		int			keyed = (int) vt_below(2);

		for (i = 0; i < n; i++)
			sv[i] = keyed ? v[i] : gt_gvalue(m, n, off);
		qsort(sv, n, 8, gt_cmp_i64);
		for (i = 0; i < n; i++)
			keys[i] = hm_encode_int64(sv[i]);
		free(sv);
		vt_vary_forms(d, keys);
		if (keyed && !((d->in.keyed >> g) & 1) && d->in.cols[g] != NULL)
		{
			for (i = 0; i < n; i++)
				v[i] = hm_decode_int64(keys[i]);
			d->in.cols[g] = keys;
			d->in.keyed |= 1u << g;
			d->in.narrow &= ~(1u << g);
		}
	}
	else
		vt_vary_forms(d, NULL);
	if ((d->in.narrow >> g) & 1)
	{
		/* narrow: the mode's values within 2^32 of the base */
		uint32_t   *w = (uint32_t *) d->narrow[g],
					o32 = (uint32_t) vt_rnd();

		for (i = 0; i < n; i++)
		{
			w[i] = gt_gnarrow(m, n, o32);
			((int64_t *) d->cols[g])[i] = (int64_t) ((uint64_t) d->in.base[g] + w[i]);
		}
	}
}

/* ---------------- the oracle ---------------- */

typedef struct
{
	int			gcol,
				nf;
	int64_t		ngroups;		/* NULL group included */
	int			has_null;
	int64_t    *values;			/* [ngroups]: ascending, the NULL group's 0 last */
	int64_t    *gid;			/* [n]: an aggregated entry's group, else -1 */
	uint8_t    *fpass;			/* [nf * n]: filter f TRUE for entry i */
	vt_data		dw;				/* the data with WHERE's failures removed */
	vt_oracle	ow;				/* its oracle: take[] and the unsure entries */
} gt_oracle;

static int
gt_bsearch(const int64_t *v, int64_t n, int64_t x)
{
	int64_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int) lo;
}

static void
gt_oracle_run(const vt_data *d, const vt_query *q, const gbt_pred_set *s, int gcol,
			  gt_oracle *o)
{
	int64_t		nb = (d->n + 7) / 8 + 1,
				i,
				nv = 0,
				u = 0;
	int			f;

	memset(o, 0, sizeof(*o));
	o->gcol = gcol;
	o->nf = s->nfilters;
	o->dw = *d;
	o->dw.removed = (uint8_t *) calloc(nb, 1);
	for (i = 0; i < d->n; i++)
		if (vt_bit(d->removed, i) ||
			(s->where && pt_eval(s->where, s->list, d, i) != PT_T))
			o->dw.removed[i >> 3] |= (uint8_t) (1 << (i & 7));
	vt_oracle_run(&o->dw, q, &o->ow);

	/* the groups: distinct values of the entries taken */
	o->values = (int64_t *) malloc((d->n + 1) * 8);
	o->gid = (int64_t *) malloc((d->n + 1) * 8);
	for (i = 0; i < d->n; i++)
	{
		if (!o->ow.take[i])
			continue;
		if (vt_bit(d->nulls[gcol], i))
			o->has_null = 1;
		else
			o->values[nv++] = ((const int64_t *) d->cols[gcol])[i];
	}
	qsort(o->values, nv, 8, gt_cmp_i64);
	for (i = 0; i < nv; i++)
		if (u == 0 || o->values[i] != o->values[u - 1])
			o->values[u++] = o->values[i];
	o->ngroups = u + o->has_null;
	if (o->has_null)
		o->values[u] = 0;
	for (i = 0; i < d->n; i++)
		o->gid[i] = !o->ow.take[i] ? -1 : vt_bit(d->nulls[gcol], i) ? u :
			gt_bsearch(o->values, u, ((const int64_t *) d->cols[gcol])[i]);
	o->fpass = (uint8_t *) calloc((size_t) o->nf * (d->n + 1), 1);
	for (f = 0; f < o->nf; f++)
		for (i = 0; i < d->n; i++)
			o->fpass[f * d->n + i] = o->ow.take[i] &&
				(!s->filter[f] || pt_eval(s->filter[f], s->list, d, i) == PT_T);
}

static void gt_oracle_free(gt_oracle *o);

/*
 * A random set for (d, q) and its oracle; remade while its WHERE keeps no
 * entry of the query (random WHEREs often keep none of large data), at
 * last without one.
 */
static void
gt_set_oracle(pt_set *ps, const vt_data *d, const vt_query *q, int maxf, int gcol,
			  gt_oracle *o)
{
	int			tries;

	for (tries = 0;; tries++)
	{
		pt_make_set(ps, d, maxf);
		if (tries == 5)
			ps->s.where = NULL;
		gt_oracle_run(d, q, &ps->s, gcol, o);
		if (o->ngroups + o->ow.nuns > 0 || tries == 5)
			return;
		gt_oracle_free(o);
		pt_set_free(ps);
	}
}

static void
gt_oracle_free(gt_oracle *o)
{
	vt_oracle_free(&o->ow);
	free(o->dw.removed);
	free(o->values);
	free(o->gid);
	free(o->fpass);
}

/* unsure[] (cap given) against the oracle's unsure entries: checks done */
static long
gt_check_unsure(const char *who, const vt_data *d, const vt_oracle *o, int64_t nunsure,
				const int64_t *unsure, int64_t cap)
{
	int64_t		nw = o->nuns < cap ? o->nuns : cap,
				i;
	uint8_t    *seen = (uint8_t *) calloc(d->n + 1, 1);

	VT_CHECK(nunsure == o->nuns, "%s nunsure %lld want %lld", who, (long long) nunsure,
			 (long long) o->nuns);
	for (i = 0; i < nw; i++)
	{
		int64_t		p = unsure[i];
		int			ok = p >= 0 && p < d->n && o->mark[p] && !seen[p];

		VT_CHECK(ok, "%s unsure[%lld] = %lld is not a new unsure position", who,
				 (long long) i, (long long) p);
		if (!ok)
			break;
		seen[p] = 1;
	}
	for (i = nw; i < cap + VT_GUARD; i++)
		if (unsure[i] != VT_POISON)
		{
			VT_CHECK(0, "%s unsure[%lld] written past min(cap %lld, total %lld)", who,
					 (long long) i, (long long) cap, (long long) o->nuns);
			break;
		}
	free(seen);
	return nw + 2;
}

/*
 * g (room for its groups) against the oracle: groups, values, unsure
 * entries, and each group's results, all of them when the work is small,
 * else 64 groups at random and the first and last.  Checks done.
 */
static long
gt_check(const char *who, const vt_data *d, const vt_query *q, const gt_oracle *o,
		 const gbt_groups *g, const int64_t *unsure)
{
	long		checks = 0;
	int64_t		k,
				i,
				nb = (d->n + 7) / 8 + 1;
	int64_t		guard[VT_GUARD];
	vt_query	qz = *q;
	vt_data		dk = *d;
	int			all = (double) o->ngroups * o->nf * (d->n + 1) < 3e7,
				f;

	VT_CHECK(g->ngroups == o->ngroups && g->has_null == o->has_null,
			 "%s %lld groups (NULL %d), want %lld (NULL %d)", who, (long long) g->ngroups,
			 g->has_null, (long long) o->ngroups, o->has_null);
	checks += 1 + gt_check_unsure(who, d, &o->ow, g->nunsure, unsure, q->cap);
	if (g->ngroups != o->ngroups)
		return checks;
	for (k = 0; k < o->ngroups; k++)
		if (g->values[k] != o->values[k])
		{
			VT_CHECK(0, "%s group %lld value %lld want %lld", who, (long long) k,
					 (long long) g->values[k], (long long) o->values[k]);
			break;
		}
	checks += o->ngroups;

	/* group k and filter f: the oracle over its entries alone */
	for (i = 0; i < VT_GUARD; i++)
		guard[i] = VT_POISON;
	qz.cap = 0;
	qz.unsure = guard;
	dk.removed = (uint8_t *) malloc(nb);
	for (k = 0; k < o->ngroups; k++)
	{
		if (!all && k != 0 && k != o->ngroups - 1 && vt_below(o->ngroups) >= 64)
			continue;
		for (f = 0; f < o->nf; f++)
		{
			vt_oracle	ok;
			char		w[96];

			memset(dk.removed, 0xff, nb);
			for (i = 0; i < d->n; i++)
				if (o->gid[i] == k && o->fpass[f * d->n + i])
					dk.removed[i >> 3] &= (uint8_t) ~(1 << (i & 7));
			vt_oracle_run(&dk, q, &ok);
			snprintf(w, sizeof(w), "%s group %lld filter %d", who, (long long) k, f);
			checks += vt_check(w, &dk, &qz, &ok, &g->out[k * o->nf + f], guard);
			vt_oracle_free(&ok);
		}
	}
	free(dk.removed);
	return checks;
}

/* ---------------- two implementations' results ---------------- */

/*
 * Float sums of two implementations (a, b) of one group, filter and column
 * agree within twice engine.h's bound, sum|x| being sumabs.
 */
static int
gt_fsum_close(const gbt_agg_col *a, const gbt_agg_col *b, long double sumabs)
{
	long double diff = ((long double) a->fsum_hi - b->fsum_hi) +
		((long double) a->fsum_lo - b->fsum_lo);

	return fabsl(diff) <= 8.0L * (a->nonnull + 1) * ldexpl(sumabs, -104);
}

/*
 * got against want (the CPU reference's result of the same call, with
 * room for its groups): every field identical but the float sums, within
 * the bound (sumabs[(k * nf + f) * GBT_MAX_COLS + c]: sum|x| of the
 * finite values of group k, filter f, column c), and float min/max that
 * ties leave open.  Checks done.
 */
static long
gt_compare(const char *who, const vt_data *d, int nf, const gbt_groups *got,
		   const gbt_groups *want, const long double *sumabs)
{
	long		checks = 3;
	int64_t		k,
				bad = 0;

	VT_CHECK(got->ngroups == want->ngroups && got->has_null == want->has_null &&
			 got->nunsure == want->nunsure,
			 "%s %lld groups (NULL %d, %lld unsure), want %lld (NULL %d, %lld unsure)", who,
			 (long long) got->ngroups, got->has_null, (long long) got->nunsure,
			 (long long) want->ngroups, want->has_null, (long long) want->nunsure);
	if (got->ngroups != want->ngroups)
		return checks;
	for (k = 0; k < want->ngroups && bad < 4; k++)
	{
		int			f,
					c;

		if (got->values[k] != want->values[k])
		{
			VT_CHECK(0, "%s group %lld value %lld want %lld", who, (long long) k,
					 (long long) got->values[k], (long long) want->values[k]);
			bad++;
		}
		for (f = 0; f < nf; f++)
		{
			const gbt_agg_result *x = &got->out[k * nf + f],
					   *y = &want->out[k * nf + f];

			if (x->count != y->count || x->nunsure != 0 || y->nunsure != 0)
			{
				VT_CHECK(0, "%s group %lld filter %d count %lld (unsure %lld) want %lld",
						 who, (long long) k, f, (long long) x->count,
						 (long long) x->nunsure, (long long) y->count);
				bad++;
			}
			for (c = 0; c < GBT_MAX_COLS; c++)
			{
				const gbt_agg_col *a = &x->col[c],
						   *b = &y->col[c];
				int			tmin = (int) (b->ties & GBT_TIE_MIN),
							tmax = (int) (b->ties & GBT_TIE_MAX);
				int			isf = c < d->in.ncols && d->in.coltype[c] == GBT_VAL_FLOAT8;
				int			same = a->nonnull == b->nonnull && a->sum_hi == b->sum_hi &&
					a->sum_lo == b->sum_lo && a->nnan == b->nnan && a->npinf == b->npinf &&
					a->nninf == b->nninf && a->min_i == b->min_i && a->max_i == b->max_i &&
					a->ties == b->ties && vt_fsame(a->min_f, b->min_f, tmin) &&
					vt_fsame(a->max_f, b->max_f, tmax) &&
					(isf ? gt_fsum_close(a, b, sumabs[(k * nf + f) * GBT_MAX_COLS + c]) &&
					 a->fsum_hi + a->fsum_lo == a->fsum_hi :
					 a->fsum_hi == 0 && a->fsum_lo == 0);

				if (!same)
				{
					VT_CHECK(0, "%s group %lld (value %lld) filter %d column %d differs: "
							 "nonnull %lld/%lld fsum %a+%a / %a+%a min %a/%a max %a/%a "
							 "ties %lld/%lld", who, (long long) k,
							 (long long) want->values[k], f, c, (long long) a->nonnull,
							 (long long) b->nonnull, a->fsum_hi, a->fsum_lo, b->fsum_hi,
							 b->fsum_lo, a->min_f, b->min_f, a->max_f, b->max_f,
							 (long long) a->ties, (long long) b->ties);
					bad++;
				}
			}
			checks += 1 + GBT_MAX_COLS;
		}
	}
	return checks;
}

/*
 * sum|x| of the finite float values of each group, filter and column of
 * want (the CPU reference's groups), for gt_compare(): the entries taken
 * (take[i]) found in want's values.
 */
static long double *
gt_sumabs(const vt_data *d, const gbt_pred_set *s, int gcol, const uint8_t *take,
		  const gbt_groups *want)
{
	int64_t		nv = want->ngroups - want->has_null,
				i;
	long double *a = (long double *) calloc((size_t) (want->ngroups + 1) * s->nfilters *
											GBT_MAX_COLS, sizeof(long double));
	int			f,
				c;

	for (i = 0; i < d->n; i++)
	{
		int64_t		k;

		if (!take[i])
			continue;
		k = vt_bit(d->nulls[gcol], i) ? nv :
			gt_bsearch(want->values, nv, ((const int64_t *) d->cols[gcol])[i]);
		for (f = 0; f < s->nfilters; f++)
		{
			if (s->filter[f] && pt_eval(s->filter[f], s->list, d, i) != PT_T)
				continue;
			for (c = 0; c < d->in.ncols; c++)
			{
				double		v = ((const double *) d->cols[c])[i];

				if (d->in.coltype[c] == GBT_VAL_FLOAT8 && !vt_bit(d->nulls[c], i) &&
					isfinite(v))
					a[(k * s->nfilters + f) * GBT_MAX_COLS + c] += fabsl((long double) v);
			}
		}
	}
	return a;
}

/* room for cap groups of nf results, with guard slots poisoned */
static void
gt_alloc(gbt_groups *g, int gcol, int64_t cap, int nf)
{
	memset(g, 0, sizeof(*g));
	g->gcol = gcol;
	g->cap = cap;
	g->values = (int64_t *) malloc((cap + VT_GUARD) * 8);
	g->out = (gbt_agg_result *) malloc((cap + VT_GUARD) * nf * sizeof(gbt_agg_result));
	memset(g->values, 0x5a, (cap + VT_GUARD) * 8);
	memset(g->out, 0x5a, (cap + VT_GUARD) * nf * sizeof(gbt_agg_result));
	g->ngroups = -7;
	g->nunsure = -7;
	g->has_null = -7;
}

/* the guard slots past cap untouched */
static int
gt_guard_ok(const gbt_groups *g, int nf)
{
	const uint8_t *v = (const uint8_t *) (g->values + g->cap),
			   *o = (const uint8_t *) (g->out + g->cap * nf);
	size_t		i;

	for (i = 0; i < VT_GUARD * 8; i++)
		if (v[i] != 0x5a)
			return 0;
	for (i = 0; i < VT_GUARD * nf * sizeof(gbt_agg_result); i++)
		if (o[i] != 0x5a)
			return 0;
	return 1;
}

static void
gt_free(gbt_groups *g)
{
	free(g->values);
	free(g->out);
	g->values = NULL;
	g->out = NULL;
}

#endif							/* GT_GROUP_ORACLE_H */
