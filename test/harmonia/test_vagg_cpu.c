/*
 * Tests of the vagg CPU reference (cuda/vagg_cpu.c) against a trivially
 * simple oracle: a loop over the ranges with __int128 integer sums, an exact
 * fixed-point accumulator (every double is an integer multiple of 2^-1074)
 * for float sums, and a list of the unsure positions.  Fresh random seed
 * per run (printed; pass a seed as argv[1] to replay).
 *
 * test_vagg_gpu.cu includes this file with VT_NO_MAIN defined, for the
 * generators, the oracle and the checks, and so do pred_oracle.h and
 * test_pred_gpu.cu (once: the guard); so keep it valid C and C++.
 */
#ifndef VT_TEST_VAGG_CPU_C
#define VT_TEST_VAGG_CPU_C
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../cuda/harmonia_keys.h"
#include "../../cuda/vagg.h"

static int	vt_passed,
			vt_failed;
static long vt_nfail;

#define VT_CHECK(cond, ...) do { if (!(cond)) { if (vt_nfail++ < 8) { \
	printf("  FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } } while (0)

static void
vt_group_end(const char *name, long checks)
{
	if (vt_nfail)
		vt_failed++;
	else
		vt_passed++;
	printf("%-48s %s (%ld checks, %ld failures)\n", name, vt_nfail ? "FAIL" : "ok",
		   checks, vt_nfail);
	fflush(stdout);
	vt_nfail = 0;
}

static uint64_t vt_rng;

static uint64_t
vt_rnd(void)
{
	/* splitmix64 */
	uint64_t	z = (vt_rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform in [0, m), m > 0 */
static int64_t
vt_below(int64_t m)
{
	return (int64_t) (vt_rnd() % (uint64_t) m);
}

static double
vt_unit(void)
{
	return (double) (vt_rnd() >> 11) * 0x1p-53;
}

/* ---------------- exact sums of doubles ---------------- */

/*
 * value = sum d[k] * 2^(32k - 1074): 32-bit digits held in int64 with lazy
 * carries (normalized every 2^20 additions, well before they can overflow).
 */
#define VT_SA_DIGITS 72
typedef struct
{
	int64_t		d[VT_SA_DIGITS];
	int64_t		nadd;
} vt_sacc;

static void
vt_sa_norm(vt_sacc *a)
{
	int			k;

	for (k = 0; k + 1 < VT_SA_DIGITS; k++)
	{
		int64_t		carry = a->d[k] >> 32;	/* floor division */

		a->d[k] -= carry * ((int64_t) 1 << 32);
		a->d[k + 1] += carry;
	}
	a->nadd = 0;
}

static void
vt_sa_add(vt_sacc *a, double x)
{
	int			e,
				off,
				k,
				j;
	uint64_t	mi;
	unsigned __int128 v;
	int			neg = x < 0;

	if (x == 0)
		return;
	mi = (uint64_t) ldexp(fabs(frexp(x, &e)), 53);	/* x = +-mi * 2^(e-53) */
	off = e - 53 + 1074;
	if (off < 0)
	{
		mi >>= -off;			/* subnormal: the bits shifted out are zero */
		off = 0;
	}
	k = off / 32;
	v = (unsigned __int128) mi << (off % 32);
	for (j = 0; j < 3; j++)
	{
		int64_t		dig = (int64_t) ((uint64_t) (v >> (32 * j)) & 0xffffffffu);

		a->d[k + j] += neg ? -dig : dig;
	}
	if (++a->nadd >= (1 << 20))
		vt_sa_norm(a);
}

/* the value, rounded to long double (relative error < 2^-60) */
static long double
vt_sa_value(const vt_sacc *in)
{
	vt_sacc		a = *in;
	int			k,
				neg,
				top;
	long double v = 0;

	vt_sa_norm(&a);
	neg = a.d[VT_SA_DIGITS - 1] < 0;
	if (neg)
	{
		for (k = 0; k < VT_SA_DIGITS; k++)
			a.d[k] = -a.d[k];
		vt_sa_norm(&a);
	}
	for (top = VT_SA_DIGITS - 1; top >= 0 && a.d[top] == 0; top--)
		;
	for (k = top; k >= 0 && k >= top - 3; k--)
		v += ldexpl((long double) a.d[k], 32 * k - 1074);
	return neg ? -v : v;
}

/* ---------------- data ---------------- */

/*
 * float distributions; VT_F_PATHO only meets the n*2^-104*sum|x| bound;
 * VT_F_ZEROS and VT_F_NANS are few values of other bits that PostgreSQL's
 * order holds equal (-0 and 0, NaNs), so that min and max tie often;
 * VT_F_RARE is 0 and NaN with a rare -0 and -NaN, a tie inside one chunk
 * of many (chunksums.c)
 */
enum
{
	VT_F_PLAIN, VT_F_WIDE, VT_F_CANCEL, VT_F_SPECIAL, VT_F_PATHO, VT_F_ZEROS, VT_F_NANS,
	VT_F_RARE, VT_F_NDIST
};

/* a double of the given bits */
static double
vt_fbits(uint64_t b)
{
	double		d;

	memcpy(&d, &b, sizeof(d));
	return d;
}
/* int distributions */
enum
{
	VT_I_SMALL, VT_I_FULL, VT_I_EXTREME, VT_I_MAXPOS, VT_I_MAXNEG, VT_I_NDIST
};

typedef struct
{
	gbt_agg_input in;			/* points at the host arrays below */
	int64_t		n;
	int64_t		nblocks;		/* block numbers are < nblocks */
	uint32_t   *blocks;
	uint8_t    *removed;
	void	   *cols[GBT_MAX_COLS];
	uint8_t    *nulls[GBT_MAX_COLS];
	int			dist[GBT_MAX_COLS];
	uint64_t   *keyed[GBT_MAX_COLS];	/* a keyed column's encoded values */
	void	   *narrow[GBT_MAX_COLS];	/* a narrow column's 4-byte values */
	uint16_t   *tids;			/* [3n] when given instead of blocks */
} vt_data;

static uint8_t *
vt_bitmap(int64_t nbits, double density)
{
	int64_t		nb = (nbits + 7) / 8,
				i;
	uint8_t    *m = (uint8_t *) calloc(nb + 1, 1);

	if (density >= 1)
		memset(m, 0xff, nb + 1);	/* bits past the end set too */
	else if (density > 0)
		for (i = 0; i < nbits; i++)
			if (vt_unit() < density)
				m[i >> 3] |= (uint8_t) (1 << (i & 7));
	return m;
}

static double
vt_float(int dist, const double *prev, int64_t i)
{
	static const double special[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e300, -1e300, 0x1p-1074,
		-0x1p-1074, 0x1.8p-1070, 0x1p-1022, -0x1p-1022, 0x0.fffffffffffffp-1022, 1e-300,
	-2.5e-310, 123456.789, 0x1p+900, -0x1p+900};
	double		v;

	switch (dist)
	{
		case VT_F_PLAIN:
			return (vt_unit() - 0.5) * 2e6;
		case VT_F_WIDE:
			v = ldexp(0.5 + vt_unit() / 2, (int) vt_below(161) - 80);
			return (vt_rnd() & 1) ? -v : v;
		case VT_F_CANCEL:
			/* half the values cancel an earlier one exactly, the others
			 * are of mixed signs and exponents 2^-40..2^40 */
			if (i > 0 && (vt_rnd() & 1))
				return -prev[i - 1 - vt_below(i < 64 ? i : 64)];
			v = ldexp(0.5 + vt_unit() / 2, (int) vt_below(81) - 40);
			return (vt_rnd() & 1) ? -v : v;
		case VT_F_ZEROS:
			return vt_below(16) == 0 ? (vt_rnd() & 1 ? 1.0 : -1.0) :
				vt_rnd() & 1 ? 0.0 : -0.0;
		case VT_F_RARE:
			switch (vt_below(512))
			{
				case 0:
					return -0.0;
				case 1:
					return vt_fbits(0xfff8000000000000ULL);
				default:
					return vt_below(64) == 0 ? vt_fbits(0x7ff8000000000000ULL) : 0.0;
			}
		case VT_F_NANS:
			{
				/* NaNs of either sign, one with a payload (a float keeps
				 * only its top bits), and the values around them */
				static const uint64_t nans[] = {0x7ff8000000000000ULL, 0xfff8000000000000ULL,
				0x7ff8000020000000ULL, 0x7ff0000000000001ULL};

				switch (vt_below(4))
				{
					case 0:
					case 1:
						return vt_fbits(nans[vt_below(4)]);
					case 2:
						return vt_rnd() & 1 ? 0.0 : -0.0;
					default:
						return vt_rnd() & 1 ? INFINITY : -INFINITY;
				}
			}
		case VT_F_SPECIAL:
			switch (vt_below(8))
			{
				case 0:
					return NAN;
				case 1:
					return (vt_rnd() & 1) ? INFINITY : -INFINITY;
				case 2:
				case 3:
					return special[vt_below(sizeof(special) / sizeof(special[0]))];
				case 4:
					/* a denormal */
					v = ldexp((double) (vt_rnd() >> 12), -1074);
					return (vt_rnd() & 1) ? -v : v;
				default:
					return (vt_unit() - 0.5) * 1e3;
			}
		default:
			/* VT_F_PATHO: huge values cancelling, tiny values left */
			if (i > 0 && (vt_rnd() & 1))
				return -prev[i - 1 - vt_below(i < 16 ? i : 16)];
			v = ldexp(0.5 + vt_unit() / 2, (int) vt_below(1200) - 600);
			return (vt_rnd() & 1) ? -v : v;
	}
}

static int64_t
vt_int(int dist)
{
	static const int64_t ext[] = {INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, -1, 0, 1,
	(int64_t) 1 << 62, -((int64_t) 1 << 62)};

	switch (dist)
	{
		case VT_I_SMALL:
			return vt_below(2001) - 1000;
		case VT_I_FULL:
			return (int64_t) vt_rnd();
		case VT_I_EXTREME:
			return ext[vt_below(sizeof(ext) / sizeof(ext[0]))];
		case VT_I_MAXPOS:
			return INT64_MAX - vt_below(3);
		default:
			return INT64_MIN + vt_below(3);
	}
}

/*
 * n entries; ncols columns of random types (type < 0: random); removed:
 * <0 NULL, else density; nulls likewise per column (random when -2).
 * nblocks: block numbers below it (0: up to UINT32_MAX).
 */
static void
vt_make(vt_data *d, int64_t n, int ncols, int64_t nblocks, double removed)
{
	int64_t		i;
	int			c;

	memset(d, 0, sizeof(*d));
	d->n = n;
	d->nblocks = nblocks > 0 ? nblocks : (int64_t) UINT32_MAX + 1;
	d->blocks = (uint32_t *) malloc((n + 1) * sizeof(uint32_t));
	/* runs of equal blocks now and then, like a clustered heap */
	for (i = 0; i < n; i++)
		d->blocks[i] = (i > 0 && vt_below(4) == 0) ? d->blocks[i - 1] :
			(uint32_t) vt_below(d->nblocks);
	d->removed = removed < 0 ? NULL : vt_bitmap(n, removed);
	for (c = 0; c < ncols; c++)
	{
		int			isf = (int) (vt_rnd() & 1);
		int			nk = (int) vt_below(4);

		d->in.coltype[c] = isf ? GBT_VAL_FLOAT8 : GBT_VAL_INT64;
		d->dist[c] = (int) vt_below(isf ? (int) VT_F_NDIST : (int) VT_I_NDIST);
		d->cols[c] = malloc((n + 1) * 8);
		for (i = 0; i < n; i++)
		{
			if (isf)
				((double *) d->cols[c])[i] = vt_float(d->dist[c], (double *) d->cols[c], i);
			else
				((int64_t *) d->cols[c])[i] = vt_int(d->dist[c]);
		}
		d->nulls[c] = nk == 0 ? NULL : vt_bitmap(n, nk == 1 ? 0.1 : nk == 2 ? 0.5 : 1.0);
	}
	d->in.n = n;
	d->in.blocks = d->blocks;
	d->in.removed = d->removed;
	d->in.ncols = ncols;
	for (c = 0; c < ncols; c++)
	{
		d->in.cols[c] = d->cols[c];
		d->in.nulls[c] = d->nulls[c];
	}
}

/* FLOAT8 column c's values drawn again, from distribution dist (by the
 * engine and GPU tests, which include this file) */
static void
vt_refill(vt_data *d, int c, int dist) __attribute__((unused));
static void
vt_refill(vt_data *d, int c, int dist)
{
	int64_t		i;

	d->dist[c] = dist;
	for (i = 0; i < d->n; i++)
		((double *) d->cols[c])[i] = vt_float(dist, (double *) d->cols[c], i);
}

/*
 * The contract's other column forms, at random: a column without an array
 * (every value NULL; cols[c] NULL, nulls[c] garbage), an INT64 column held
 * as keys (keyed), either the engine's keys (keys not NULL: the column's
 * values become their decoding) or an encoded copy, a column held in 4
 * bytes a value (narrow), and one whose values would fit that but is held
 * in 8.  The oracle reads d->cols and d->nulls, which say the same
 * plainly.
 */
static void
vt_vary_forms(vt_data *d, const uint64_t *keys)
{
	int64_t		i;
	int			c;

	/* TIDs instead of block numbers (the GPU's copy is made from them) */
	if (vt_below(2))
	{
		d->tids = (uint16_t *) malloc((3 * d->n + 1) * sizeof(uint16_t));
		for (i = 0; i < d->n; i++)
		{
			d->tids[3 * i] = (uint16_t) (d->blocks[i] >> 16);
			d->tids[3 * i + 1] = (uint16_t) d->blocks[i];
			d->tids[3 * i + 2] = (uint16_t) vt_rnd();
		}
		d->in.tids = d->tids;
		d->in.blocks = NULL;
	}

	for (c = 0; c < d->in.ncols; c++)
	{
		int			form = (int) vt_below(6);

		if (form == 0)
		{
			free(d->nulls[c]);
			d->nulls[c] = vt_bitmap(d->n, 1.0);
			d->in.cols[c] = NULL;
			d->in.nulls[c] = vt_below(2) ? NULL : d->blocks == NULL ? NULL :
				(const uint8_t *) d->blocks;
		}
		else if (form == 1 && d->in.coltype[c] == GBT_VAL_INT64)
		{
			int64_t    *v = (int64_t *) d->cols[c];

			if (keys == NULL)
			{
				d->keyed[c] = (uint64_t *) malloc((d->n + 1) * 8);
				for (i = 0; i < d->n; i++)
					d->keyed[c][i] = hm_encode_int64(v[i]);
			}
			for (i = 0; keys != NULL && i < d->n; i++)
				v[i] = hm_decode_int64(keys[i]);
			d->in.cols[c] = keys != NULL ? (const void *) keys : d->keyed[c];
			d->in.keyed |= 1u << c;
		}
		else if (form == 2 || form == 3)
		{
			int			isf = d->in.coltype[c] == GBT_VAL_FLOAT8;
			int64_t		base = vt_int(d->dist[c]);
			uint32_t   *w = (uint32_t *) malloc((d->n + 1) * 4);

			for (i = 0; i < d->n; i++)
			{
				if (isf)
				{
					float		f = (float) ((double *) d->cols[c])[i];

					((double *) d->cols[c])[i] = f;
					memcpy(&w[i], &f, 4);
				}
				else
				{
					w[i] = (uint32_t) vt_rnd();
					((int64_t *) d->cols[c])[i] = (int64_t) ((uint64_t) base + w[i]);
				}
			}
			if (form == 2)
			{
				d->narrow[c] = w;
				d->in.cols[c] = w;
				d->in.narrow |= 1u << c;
				d->in.base[c] = isf ? 0 : base;
			}
			else
				free(w);
		}
	}
}

static void
vt_free(vt_data *d)
{
	int			c;

	free(d->blocks);
	free(d->tids);
	free(d->removed);
	for (c = 0; c < GBT_MAX_COLS; c++)
	{
		free(d->cols[c]);
		free(d->keyed[c]);
		free(d->narrow[c]);
		free(d->nulls[c]);
	}
}

/* ---------------- queries ---------------- */

enum
{
	VT_R_NONE, VT_R_FULL, VT_R_ONE, VT_R_FEW, VT_R_TINY, VT_R_PARTITION, VT_R_NMODES
};

typedef struct
{
	int64_t		R;
	int64_t    *start,
			   *end;
	uint8_t    *vis;
	int64_t		nvis;
	int64_t		cap;			/* unsure capacity; set by vt_set_cap */
	int64_t    *unsure;			/* cap + 8 guard slots */
} vt_query;

static int
vt_cmp64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return x < y ? -1 : x > y;
}

static void
vt_shuffle_ranges(vt_query *q)
{
	int64_t		i;

	for (i = q->R - 1; i > 0; i--)
	{
		int64_t		j = vt_below(i + 1),
					t;

		t = q->start[i];
		q->start[i] = q->start[j];
		q->start[j] = t;
		t = q->end[i];
		q->end[i] = q->end[j];
		q->end[j] = t;
	}
}

/* disjoint ranges over [0, n) (mode VT_R_*), maybe shuffled */
static void
vt_ranges(vt_query *q, int64_t n, int mode, int64_t want)
{
	int64_t		i,
				p;

	q->R = 0;
	q->start = q->end = NULL;
	switch (mode)
	{
		case VT_R_NONE:
			return;
		case VT_R_FULL:
			q->R = 1;
			break;
		case VT_R_ONE:
			q->R = 1;
			break;
		case VT_R_FEW:
			q->R = 1 + vt_below(want > 0 ? want : 20);
			break;
		default:
			q->R = want > 0 ? want : n + 1;
			break;
	}
	q->start = (int64_t *) malloc((q->R * 2 + 1) * 8);
	q->end = (int64_t *) malloc((q->R + 1) * 8);
	if (mode == VT_R_FULL)
	{
		q->start[0] = 0;
		q->end[0] = n;
		return;
	}
	if (mode == VT_R_ONE || mode == VT_R_FEW)
	{
		/* 2R sorted cut points: ranges [c0,c1), [c2,c3), ...; equal cuts
		 * give empty ranges */
		int64_t    *cut = q->start;

		for (i = 0; i < 2 * q->R; i++)
			cut[i] = vt_below(n + 1);
		qsort(cut, 2 * q->R, 8, vt_cmp64);
		for (i = 0; i < q->R; i++)
		{
			q->end[i] = cut[2 * i + 1];
			cut[i] = cut[2 * i];	/* i <= 2i: not yet overwritten */
		}
	}
	else
	{
		/* tiny ranges (lengths 0..3, gaps 0..2) or a partition of [0, n)
		 * into pieces of 0..4 entries, until n or R ranges */
		int64_t		r = 0;

		p = 0;
		while (r < q->R && p <= n)
		{
			int64_t		len = vt_below(mode == VT_R_TINY ? 4 : 5);

			if (mode == VT_R_TINY)
				p += vt_below(3);
			if (p > n)
				break;
			if (p + len > n)
				len = n - p;
			q->start[r] = p;
			q->end[r] = p + len;
			p += len;
			r++;
			if (p == n && vt_below(3) == 0)
				break;
		}
		q->R = r;
	}
	if (vt_rnd() & 1)
		vt_shuffle_ranges(q);
}

/* visibility modes */
enum
{
	VT_V_ALL, VT_V_NONE_NULL, VT_V_NONE, VT_V_HALF, VT_V_95, VT_V_SHORT, VT_V_NMODES
};

static void
vt_visible(vt_query *q, int64_t nblocks, int mode)
{
	int64_t		nv = nblocks > ((int64_t) 1 << 24) ? ((int64_t) 1 << 20) + 3 : nblocks;

	q->vis = NULL;
	q->nvis = 0;
	switch (mode)
	{
		case VT_V_ALL:
			q->nvis = nv;
			q->vis = vt_bitmap(nv, 1.0);
			break;
		case VT_V_NONE_NULL:
			break;
		case VT_V_NONE:
			q->nvis = nv;
			q->vis = vt_bitmap(nv, 0);
			break;
		case VT_V_HALF:
			q->nvis = nv;
			q->vis = vt_bitmap(nv, 0.5);
			break;
		case VT_V_95:
			q->nvis = nv;
			q->vis = vt_bitmap(nv, 0.95);
			break;
		default:
			/* blocks from nvis on are not visible although the map's last
			 * byte has their bits set */
			q->nvis = nv / 2;
			q->vis = vt_bitmap(nv, 1.0);
			break;
	}
}

static void
vt_qfree(vt_query *q)
{
	free(q->start);
	free(q->end);
	free(q->vis);
	free(q->unsure);
	q->start = q->end = q->unsure = NULL;
	q->vis = NULL;
}

#define VT_GUARD 8
#define VT_POISON ((int64_t) 0x5a5a5a5a5a5a5a5aLL)

/* cap mode 0: 0, 1: 1, 2: total/2, 3: total, 4: total + 5, 5: n */
static void
vt_set_cap(vt_query *q, int mode, int64_t total, int64_t n)
{
	int64_t		i;

	q->cap = mode == 0 ? 0 : mode == 1 ? 1 : mode == 2 ? total / 2 :
		mode == 3 ? total : mode == 4 ? total + 5 : n;
	free(q->unsure);
	q->unsure = (int64_t *) malloc((q->cap + VT_GUARD) * 8);
	for (i = 0; i < q->cap + VT_GUARD; i++)
		q->unsure[i] = VT_POISON;
}

/* ---------------- the oracle ---------------- */

typedef struct
{
	int64_t		count;
	int64_t		nonnull[GBT_MAX_COLS];
	__int128	isum[GBT_MAX_COLS];
	vt_sacc		fsum[GBT_MAX_COLS];
	long double sumabs[GBT_MAX_COLS];
	int64_t		nnan[GBT_MAX_COLS],
				npinf[GBT_MAX_COLS],
				nninf[GBT_MAX_COLS];
	int64_t		imin[GBT_MAX_COLS],
				imax[GBT_MAX_COLS];
	double		fmin[GBT_MAX_COLS],
				fmax[GBT_MAX_COLS];
	int64_t		fties[GBT_MAX_COLS];	/* engine.h's GBT_TIE_MIN/MAX */
	int64_t		nuns;
	int64_t    *uns;			/* every unsure position */
	uint8_t    *mark;			/* [n]: 1 = unsure position */
	uint8_t    *take;			/* [n]: 1 = aggregated position */
} vt_oracle;

static int
vt_bit(const uint8_t *m, int64_t i)
{
	return m && ((m[i >> 3] >> (i & 7)) & 1);
}

/* PostgreSQL's float order, spelled out: NaN last, -0 == 0 */
static int
vt_fcmp(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b);
	return a < b ? -1 : a > b;
}

/*
 * PostgreSQL's float8smaller (dir -1) or float8larger (dir 1) of *m and the
 * next value v: v unless *m is strictly better, the later of equal ones;
 * bit of *ties set while values equal to *m differ in bits.
 */
static void
vt_fextreme(double *m, int64_t *ties, double v, int dir, int64_t bit)
{
	int			cmp = vt_fcmp(v, *m) * dir;

	if (cmp < 0)
		return;
	if (cmp > 0)
		*ties &= ~bit;
	else if (memcmp(m, &v, sizeof(v)) != 0)
		*ties |= bit;
	*m = v;
}

static void
vt_oracle_run(const vt_data *d, const vt_query *q, vt_oracle *o)
{
	int64_t		r,
				i;
	int			c;

	memset(o, 0, sizeof(*o));
	o->uns = (int64_t *) malloc((d->n + 1) * 8);
	o->mark = (uint8_t *) calloc(d->n + 1, 1);
	o->take = (uint8_t *) calloc(d->n + 1, 1);
	for (r = 0; r < q->R; r++)
		for (i = q->start[r]; i < q->end[r]; i++)
		{
			uint32_t	b = d->blocks[i];

			if (vt_bit(d->removed, i))
				continue;
			if (!(b < (uint64_t) q->nvis && vt_bit(q->vis, b)))
			{
				o->uns[o->nuns++] = i;
				o->mark[i] = 1;
				continue;
			}
			o->count++;
			o->take[i] = 1;
			for (c = 0; c < d->in.ncols; c++)
			{
				int			first = o->nonnull[c] == 0;

				if (vt_bit(d->nulls[c], i))
					continue;
				o->nonnull[c]++;
				if (d->in.coltype[c] == GBT_VAL_INT64)
				{
					int64_t		v = ((const int64_t *) d->cols[c])[i];

					o->isum[c] += v;
					if (first || v < o->imin[c])
						o->imin[c] = v;
					if (first || v > o->imax[c])
						o->imax[c] = v;
				}
				else
				{
					double		v = ((const double *) d->cols[c])[i];

					if (isnan(v))
						o->nnan[c]++;
					else if (v == INFINITY)
						o->npinf[c]++;
					else if (v == -INFINITY)
						o->nninf[c]++;
					else
					{
						vt_sa_add(&o->fsum[c], v);
						o->sumabs[c] += fabs(v);
					}
				}
			}
		}

	/*
	 * min/max in the positions' order, the mirror's (key, TID) order, as an
	 * index scan reads them (the ranges may come in any order)
	 */
	for (c = 0; c < d->in.ncols; c++)
	{
		int			first = 1;

		if (d->in.coltype[c] != GBT_VAL_FLOAT8)
			continue;
		for (i = 0; i < d->n; i++)
		{
			double		v = ((const double *) d->cols[c])[i];

			if (!o->take[i] || vt_bit(d->nulls[c], i))
				continue;
			if (first)
				o->fmin[c] = o->fmax[c] = v;
			vt_fextreme(&o->fmin[c], &o->fties[c], v, -1, GBT_TIE_MIN);
			vt_fextreme(&o->fmax[c], &o->fties[c], v, 1, GBT_TIE_MAX);
			first = 0;
		}
	}
}

static void
vt_oracle_free(vt_oracle *o)
{
	free(o->uns);
	free(o->mark);
	free(o->take);
}

static uint64_t
vt_bits(double d)
{
	uint64_t	b;

	memcpy(&b, &d, sizeof(b));
	return b;
}

/*
 * a is b bit for bit; or, where the contract leaves the choice (tied: the
 * values equal to b differ in bits), equal to b in PostgreSQL's order
 */
static int
vt_fsame(double a, double b, int64_t tied)
{
	return tied ? vt_fcmp(a, b) == 0 : vt_bits(a) == vt_bits(b);
}

static double vt_max_relerr;	/* largest |fsum - exact| / |exact| seen */
static long vt_patho_sums,		/* VT_F_PATHO sums checked, and how many */
			vt_patho_loose;		/* were beyond 1e-15 of the exact sum */

/*
 * The error of a double-double fsum against the exact sum, and whether it
 * is within the bound: 1e-15 relative to the exact sum, or for
 * VT_F_PATHO (beyond double-double) the contract's n*2^-104*sum|x|.
 */
static int
vt_fsum_ok(const vt_oracle *o, int c, int dist, double hi, double lo, long double *errp)
{
	vt_sacc		a = o->fsum[c];
	long double ex = vt_sa_value(&a),
				err;

	vt_sa_add(&a, -hi);
	vt_sa_add(&a, -lo);
	err = fabsl(vt_sa_value(&a));
	*errp = err;
	if (ex != 0 && dist != VT_F_PATHO && err / fabsl(ex) > vt_max_relerr)
		vt_max_relerr = (double) (err / fabsl(ex));
	vt_patho_sums += dist == VT_F_PATHO;
	if (err <= 1e-15L * fabsl(ex))
		return 1;
	vt_patho_loose += dist == VT_F_PATHO;

	/*
	 * Beyond 1e-15 only where values cancel past a double-double's reach
	 * (the pathological data, and special values such as +-1e300 and
	 * +-2^900 cancelling): there the contract's bound holds.
	 */
	return (dist == VT_F_PATHO || o->sumabs[c] > 1e15L * fabsl(ex)) &&
		err <= 4.0L * (o->nonnull[c] + 1) * ldexpl(o->sumabs[c], -104);
}

/* one result + unsure list against the oracle; returns checks done */
static long
vt_check(const char *who, const vt_data *d, const vt_query *q, const vt_oracle *o,
		 const gbt_agg_result *res, const int64_t *unsure)
{
	long		checks = 0;
	int			c;
	int64_t		i,
				nw;
	uint8_t    *seen;

	VT_CHECK(res->count == o->count, "%s count %lld want %lld", who,
			 (long long) res->count, (long long) o->count);
	VT_CHECK(res->nunsure == o->nuns, "%s nunsure %lld want %lld", who,
			 (long long) res->nunsure, (long long) o->nuns);
	checks += 2;
	for (c = 0; c < GBT_MAX_COLS; c++)
	{
		const gbt_agg_col *r = &res->col[c];
		int			isf = c < d->in.ncols && d->in.coltype[c] == GBT_VAL_FLOAT8,
					isi = c < d->in.ncols && !isf;
		int64_t		nn = c < d->in.ncols ? o->nonnull[c] : 0;

		VT_CHECK(r->nonnull == nn, "%s col %d nonnull %lld want %lld", who, c,
				 (long long) r->nonnull, (long long) nn);
		if (isi)
		{
			__int128	s = ((__int128) r->sum_hi << 64) | r->sum_lo;

			VT_CHECK(s == o->isum[c], "%s col %d int sum %llx:%016llx want %llx:%016llx", who, c,
					 (unsigned long long) r->sum_hi, (unsigned long long) r->sum_lo,
					 (unsigned long long) (o->isum[c] >> 64), (unsigned long long) o->isum[c]);
			VT_CHECK(nn == 0 ? r->min_i == 0 && r->max_i == 0 :
					 r->min_i == o->imin[c] && r->max_i == o->imax[c],
					 "%s col %d int min/max %lld/%lld want %lld/%lld", who, c,
					 (long long) r->min_i, (long long) r->max_i,
					 (long long) o->imin[c], (long long) o->imax[c]);
		}
		else
		{
			VT_CHECK(r->sum_hi == 0 && r->sum_lo == 0 && r->min_i == 0 && r->max_i == 0,
					 "%s col %d int fields not zero", who, c);
		}
		if (isf)
		{
			long double err;

			VT_CHECK(vt_fsum_ok(o, c, d->dist[c], r->fsum_hi, r->fsum_lo, &err),
					 "%s col %d (dist %d, %lld values) fsum %.17g + %.17g, exact %.20Lg, error %.3Lg",
					 who, c, d->dist[c], (long long) nn, r->fsum_hi, r->fsum_lo,
					 vt_sa_value(&o->fsum[c]), err);
			VT_CHECK(r->fsum_hi + r->fsum_lo == r->fsum_hi, "%s col %d fsum not normalized", who, c);
			VT_CHECK(r->nnan == o->nnan[c] && r->npinf == o->npinf[c] && r->nninf == o->nninf[c],
					 "%s col %d nan/+inf/-inf %lld/%lld/%lld want %lld/%lld/%lld", who, c,
					 (long long) r->nnan, (long long) r->npinf, (long long) r->nninf,
					 (long long) o->nnan[c], (long long) o->npinf[c], (long long) o->nninf[c]);
			VT_CHECK(nn == 0 ? vt_fsame(r->min_f, 0.0, 0) && vt_fsame(r->max_f, 0.0, 0) &&
					 r->ties == 0 :
					 r->ties == o->fties[c] &&
					 vt_fsame(r->min_f, o->fmin[c], o->fties[c] & GBT_TIE_MIN) &&
					 vt_fsame(r->max_f, o->fmax[c], o->fties[c] & GBT_TIE_MAX),
					 "%s col %d float min/max %a/%a (%016llx/%016llx) ties %lld "
					 "want %a/%a (%016llx/%016llx) ties %lld", who, c,
					 r->min_f, r->max_f, (unsigned long long) vt_bits(r->min_f),
					 (unsigned long long) vt_bits(r->max_f), (long long) r->ties,
					 o->fmin[c], o->fmax[c], (unsigned long long) vt_bits(o->fmin[c]),
					 (unsigned long long) vt_bits(o->fmax[c]), (long long) o->fties[c]);
		}
		else
		{
			VT_CHECK(r->fsum_hi == 0 && r->fsum_lo == 0 && r->nnan == 0 && r->npinf == 0 &&
					 r->nninf == 0 && vt_fsame(r->min_f, 0.0, 0) &&
					 vt_fsame(r->max_f, 0.0, 0) && r->ties == 0,
					 "%s col %d float fields not zero", who, c);
		}
		checks += 6;
	}
	/* unsure: min(cap, total) genuine, distinct positions, nothing past */
	nw = o->nuns < q->cap ? o->nuns : q->cap;
	seen = (uint8_t *) calloc(d->n + 1, 1);
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
	for (i = nw; i < q->cap + VT_GUARD; i++)
		if (unsure[i] != VT_POISON)
		{
			VT_CHECK(0, "%s unsure[%lld] written past min(cap %lld, total %lld)", who,
					 (long long) i, (long long) q->cap, (long long) o->nuns);
			break;
		}
	free(seen);
	return checks + nw + 1;
}

/*
 * Beyond double-double: {2^100, 1, 2^-300, -2^100, -1} repeated; the exact
 * sum is reps * 2^-300, which a double-double loses (the 2^-300 are added
 * while |hi| = 2^100), so only the contract's n*2^-104*sum|x| bound holds.
 */
static void
vt_make_adversarial(vt_data *d, int64_t reps)
{
	static const double pat[] = {0x1p100, 1.0, 0x1p-300, -0x1p100, -1.0};
	int64_t		i;

	vt_make(d, 5 * reps, 1, 1, -1);
	d->in.coltype[0] = GBT_VAL_FLOAT8;
	d->dist[0] = VT_F_PATHO;
	for (i = 0; i < d->n; i++)
		((double *) d->cols[0])[i] = pat[i % 5];
	free(d->nulls[0]);
	d->nulls[0] = NULL;
	d->in.nulls[0] = NULL;
}

#ifndef VT_NO_MAIN

/* a random query setup over d */
static void
vt_random_query(vt_query *q, const vt_data *d, int rmode, int64_t want)
{
	memset(q, 0, sizeof(*q));
	vt_ranges(q, d->n, rmode, want);
	vt_visible(q, d->nblocks, (int) vt_below(VT_V_NMODES));
}


/* run the CPU reference on (d, q) with every cap mode; checks done */
static long
vt_run_cpu(const vt_data *d, vt_query *q)
{
	vt_oracle	o;
	gbt_agg_result res;
	char		err[256];
	long		checks = 0;
	int			capmode;

	vt_oracle_run(d, q, &o);
	for (capmode = 0; capmode < 6; capmode++)
	{
		vt_set_cap(q, capmode, o.nuns, d->n);
		memset(&res, 0x77, sizeof(res));
		err[0] = 0;
		if (gbt_vagg_cpu(&d->in, q->start, q->end, q->R, q->vis, q->nvis, &res,
						 q->unsure, q->cap, err, sizeof(err)) != 0)
		{
			VT_CHECK(0, "gbt_vagg_cpu failed: %s", err);
			break;
		}
		checks += vt_check("cpu", d, q, &o, &res, q->unsure);
	}
	vt_oracle_free(&o);
	return checks;
}

static void
test_small(void)
{
	static const int64_t sizes[] = {0, 1, 2, 3, 7, 8, 9, 31, 64, 65, 100, 1000, 4097};
	long		checks = 0;
	int			si,
				it;

	for (si = 0; si < (int) (sizeof(sizes) / sizeof(sizes[0])); si++)
		for (it = 0; it < 60; it++)
		{
			vt_data		d;
			vt_query	q;
			int64_t		nb = it % 5 == 4 ? 0 : 1 + vt_below(sizes[si] / (1 + vt_below(8)) + 2);

			vt_make(&d, sizes[si], it % 5, nb, it % 3 == 0 ? -1 : it % 3 == 1 ? 0.2 : 1.0 * (it % 7 == 2));
			vt_vary_forms(&d, NULL);
			vt_random_query(&q, &d, it % VT_R_NMODES, 0);
			checks += vt_run_cpu(&d, &q);
			vt_qfree(&q);
			vt_free(&d);
		}
	vt_group_end("cpu: n 0..4097, all modes", checks);
}

static void
test_edge(void)
{
	long		checks = 0;
	vt_data		d;
	vt_query	q;
	int			c;
	int64_t		i;

	/* all four columns at the int64 extremes: sums beyond int64 */
	vt_make(&d, 5000, 4, 10, -1);
	for (c = 0; c < 4; c++)
	{
		d.in.coltype[c] = GBT_VAL_INT64;
		d.dist[c] = c < 2 ? VT_I_MAXPOS : VT_I_MAXNEG;
		for (i = 0; i < d.n; i++)
			((int64_t *) d.cols[c])[i] = vt_int(d.dist[c]);
		free(d.nulls[c]);
		d.nulls[c] = NULL;
		d.in.nulls[c] = NULL;
	}
	vt_random_query(&q, &d, VT_R_FULL, 0);
	free(q.vis);
	q.nvis = 10;
	q.vis = vt_bitmap(10, 1.0);
	checks += vt_run_cpu(&d, &q);
	vt_qfree(&q);
	vt_free(&d);

	/* float specials one by one and in small groups */
	{
		static const double fs[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 0x1p-1074, -0x1p-1074,
		0x1p-1022, 1e300, -1e300, 1.0, -1.0};
		int			a,
					b;

		for (a = 0; a < 12; a++)
			for (b = 0; b < 12; b++)
			{
				vt_make(&d, 3, 1, 1, -1);
				d.in.coltype[0] = GBT_VAL_FLOAT8;
				d.dist[0] = VT_F_SPECIAL;
				((double *) d.cols[0])[0] = fs[a];
				((double *) d.cols[0])[1] = fs[b];
				((double *) d.cols[0])[2] = fs[(a + b) % 12];
				free(d.nulls[0]);
				d.nulls[0] = NULL;
				d.in.nulls[0] = NULL;
				vt_random_query(&q, &d, VT_R_FULL, 0);
				free(q.vis);
				q.nvis = 1;
				q.vis = vt_bitmap(1, 1.0);
				checks += vt_run_cpu(&d, &q);
				vt_qfree(&q);
				vt_free(&d);
			}
	}
	/* beyond double-double: only the contract's bound */
	vt_make_adversarial(&d, 1000);
	vt_random_query(&q, &d, VT_R_FULL, 0);
	free(q.vis);
	q.nvis = 1;
	q.vis = vt_bitmap(1, 1.0);
	checks += vt_run_cpu(&d, &q);
	vt_qfree(&q);
	vt_free(&d);
	vt_group_end("cpu: int64 extremes, float specials", checks);
}

static void
test_big(void)
{
	long		checks = 0;
	int			it;

	for (it = 0; it < 12; it++)
	{
		vt_data		d;
		vt_query	q;
		int64_t		n = (1 << 20) + vt_below(1000);
		int			rmode = it % 3 == 0 ? VT_R_TINY : it % 3 == 1 ? VT_R_FULL : VT_R_FEW;

		vt_make(&d, n, it % 5, it == 5 ? 0 : n / (1 + vt_below(100)), it & 1 ? -1 : 0.1);
		vt_vary_forms(&d, NULL);
		vt_random_query(&q, &d, rmode, rmode == VT_R_FEW ? 200 : 0);
		checks += vt_run_cpu(&d, &q);
		vt_qfree(&q);
		vt_free(&d);
	}
	vt_group_end("cpu: n ~10^6, tiny/one/few ranges", checks);
}

/*
 * gbt_vagg_cpu_visible() (every entry on a visible block: what the chunk
 * sums leave to scan) against the oracle and gbt_vagg_cpu() exactly:
 * every column form, NULLs and removed entries none, sparse or dense,
 * ranges of every mode and length.
 */
static void
test_visible(void)
{
	long		checks = 0;
	int			it;

	for (it = 0; it < 600; it++)
	{
		vt_data		d;
		vt_query	q;
		vt_oracle	o;
		gbt_agg_result fast,
					ref;
		char		err[256];
		int64_t		n = it % 4 == 0 ? vt_below(300) : 1000 + vt_below(20000);
		double		removed = it % 3 == 0 ? -1 : it % 3 == 1 ? 0.001 : 0.3;
		int			c;

		vt_make(&d, n, it % 5, 1 + vt_below(n / 4 + 2), removed);
		vt_vary_forms(&d, NULL);
		for (c = 0; c < d.in.ncols; c++)
			if (d.in.cols[c] != NULL && d.nulls[c] != NULL && vt_below(2))
			{
				free(d.nulls[c]);
				d.nulls[c] = NULL;
				d.in.nulls[c] = NULL;
			}
		vt_random_query(&q, &d, it % VT_R_NMODES, 0);
		free(q.vis);
		vt_visible(&q, d.nblocks, VT_V_ALL);
		vt_oracle_run(&d, &q, &o);
		vt_set_cap(&q, 0, o.nuns, d.n);
		memset(&fast, 0x77, sizeof(fast));
		err[0] = 0;
		if (gbt_vagg_cpu_visible(&d.in, q.start, q.end, q.R, &fast, err, sizeof(err)) != 0)
			VT_CHECK(0, "gbt_vagg_cpu_visible failed: %s", err);
		else
		{
			checks += vt_check("visible", &d, &q, &o, &fast, q.unsure);
			VT_CHECK(gbt_vagg_cpu(&d.in, q.start, q.end, q.R, q.vis, q.nvis, &ref,
								  NULL, 0, err, sizeof(err)) == 0, "gbt_vagg_cpu: %s", err);
			VT_CHECK(ref.count == fast.count && ref.nunsure == 0 && fast.nunsure == 0,
					 "count %lld / %lld, unsure %lld / %lld", (long long) fast.count,
					 (long long) ref.count, (long long) fast.nunsure,
					 (long long) ref.nunsure);
			for (c = 0; c < d.in.ncols; c++)
			{
				const gbt_agg_col *a = &fast.col[c],
						   *b = &ref.col[c];

				VT_CHECK(a->nonnull == b->nonnull &&
						 (a->nonnull == 0 ||
						  (d.in.coltype[c] == GBT_VAL_INT64 ?
						   a->sum_lo == b->sum_lo && a->sum_hi == b->sum_hi &&
						   a->min_i == b->min_i && a->max_i == b->max_i :
						   memcmp(a, b, sizeof(*a)) == 0)),
						 "column %d (type %d) differs from gbt_vagg_cpu()'s", c,
						 (int) d.in.coltype[c]);
				checks++;
			}
		}
		vt_oracle_free(&o);
		vt_qfree(&q);
		vt_free(&d);
	}
	vt_group_end("cpu: visible-only scan = the reference", checks);
}

static void
test_errors(void)
{
	long		checks = 0;
	vt_data		d;
	gbt_agg_result res;
	char		err[200];
	int64_t		s[2] = {0, 5},
				e[2] = {5, 10},
				u[4];
	uint8_t		vis[1] = {0xff};
	gbt_agg_input bad;

	vt_make(&d, 10, 2, 8, -1);
#define EXPECT_ERR(call, what) do { err[0] = 0; VT_CHECK((call) != 0 && err[0] != 0, "%s accepted", what); checks++; } while (0)
	EXPECT_ERR(gbt_vagg_cpu(NULL, s, e, 2, vis, 8, &res, u, 4, err, sizeof(err)), "NULL input");
	EXPECT_ERR(gbt_vagg_cpu(&d.in, s, e, 2, vis, 8, NULL, u, 4, err, sizeof(err)), "NULL result");
	EXPECT_ERR(gbt_vagg_cpu(&d.in, s, e, -1, vis, 8, &res, u, 4, err, sizeof(err)), "negative nranges");
	EXPECT_ERR(gbt_vagg_cpu(&d.in, NULL, e, 2, vis, 8, &res, u, 4, err, sizeof(err)), "NULL start");
	EXPECT_ERR(gbt_vagg_cpu(&d.in, s, e, 2, NULL, 8, &res, u, 4, err, sizeof(err)), "NULL visible");
	EXPECT_ERR(gbt_vagg_cpu(&d.in, s, e, 2, vis, -1, &res, u, 4, err, sizeof(err)), "negative nvisible");
	EXPECT_ERR(gbt_vagg_cpu(&d.in, s, e, 2, vis, 8, &res, NULL, 4, err, sizeof(err)), "NULL unsure");
	EXPECT_ERR(gbt_vagg_cpu(&d.in, s, e, 2, vis, 8, &res, u, -1, err, sizeof(err)), "negative cap");
	e[0] = 11;
	EXPECT_ERR(gbt_vagg_cpu(&d.in, s, e, 1, vis, 8, &res, u, 4, err, sizeof(err)), "end > n");
	e[0] = 5;
	s[1] = 6;
	e[1] = 5;
	EXPECT_ERR(gbt_vagg_cpu(&d.in, s, e, 2, vis, 8, &res, u, 4, err, sizeof(err)), "start > end");
	s[1] = -1;
	EXPECT_ERR(gbt_vagg_cpu(&d.in, s, e, 2, vis, 8, &res, u, 4, err, sizeof(err)), "start < 0");
	s[0] = 0;
	e[0] = 10;
	s[1] = 2;
	e[1] = 4;
	EXPECT_ERR(gbt_vagg_cpu(&d.in, s, e, 2, vis, 8, &res, u, 4, err, sizeof(err)), "total > n");
	bad = d.in;
	bad.ncols = 5;
	EXPECT_ERR(gbt_vagg_cpu(&bad, s, e, 1, vis, 8, &res, u, 4, err, sizeof(err)), "5 columns");
	bad = d.in;
	bad.coltype[1] = (gbt_valtype) 7;
	EXPECT_ERR(gbt_vagg_cpu(&bad, s, e, 1, vis, 8, &res, u, 4, err, sizeof(err)), "bad type");
	bad = d.in;
	bad.coltype[1] = GBT_VAL_FLOAT8;
	bad.keyed = 1u << 1;
	EXPECT_ERR(gbt_vagg_cpu(&bad, s, e, 1, vis, 8, &res, u, 4, err, sizeof(err)), "keyed FLOAT8");
	bad = d.in;
	bad.coltype[1] = GBT_VAL_INT64;
	bad.keyed = 1u << 2;
	EXPECT_ERR(gbt_vagg_cpu(&bad, s, e, 1, vis, 8, &res, u, 4, err, sizeof(err)), "keyed past ncols");
	bad = d.in;
	bad.blocks = NULL;
	EXPECT_ERR(gbt_vagg_cpu(&bad, s, e, 1, vis, 8, &res, u, 4, err, sizeof(err)), "NULL blocks");
	bad = d.in;
	bad.n = -1;
	EXPECT_ERR(gbt_vagg_cpu(&bad, s, e, 0, vis, 8, &res, u, 4, err, sizeof(err)), "n < 0");
	/* allowed NULLs, and a NULL err */
	VT_CHECK(gbt_vagg_cpu(&d.in, NULL, NULL, 0, NULL, 0, &res, NULL, 0, NULL, 0) == 0 &&
			 res.count == 0 && res.nunsure == 0, "empty query with NULL arrays");
	VT_CHECK(gbt_vagg_cpu(&d.in, s, e, 1, NULL, 0, &res, NULL, 0, NULL, 0) == 0 &&
			 res.count == 0, "no visibility map");
	VT_CHECK(gbt_vagg_cpu(&d.in, s, e, 9, vis, 8, &res, u, 4, NULL, 0) != 0, "NULL err");
	checks += 3;
#undef EXPECT_ERR
	vt_free(&d);
	vt_group_end("cpu: argument errors", checks);
}

int
main(int argc, char **argv)
{
	uint64_t	seed = argc > 1 ? strtoull(argv[1], NULL, 0) :
		(uint64_t) time(NULL) ^ ((uint64_t) clock() << 20);

	vt_rng = seed;
	printf("vagg CPU tests, seed %llu\n", (unsigned long long) seed);
	test_small();
	test_edge();
	test_big();
	test_visible();
	test_errors();
	printf("largest float sum error seen: %.3g of the exact sum (pathological data: "
		   "%ld of %ld sums beyond 1e-15, all within n*2^-104*sum|x|)\n",
		   vt_max_relerr, vt_patho_loose, vt_patho_sums);
	printf("%d passed, %d failed\n", vt_passed, vt_failed);
	return vt_failed ? 1 : 0;
}

#endif							/* VT_NO_MAIN */

#endif							/* VT_TEST_VAGG_CPU_C */
