/*
 * CPU unit tests of the Harmonia twin against naive sorted arrays.
 * Fresh random seed per run (printed; pass a seed as argv[1] to replay).
 */
#include <stdio.h>
#include <time.h>
#include "oracle.h"
#include "../../cuda/keytable.h"

static int	passed,
			failed;
static long fails_in_group;

#define CHECK(cond, ...) do { if (!(cond)) { if (fails_in_group++ < 5) { \
	printf("  FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } } while (0)

static void
group_end(const char *name, long checks)
{
	if (fails_in_group)
		failed++;
	else
		passed++;
	printf("%-34s %s (%ld checks, %ld failures)\n", name,
		   fails_in_group ? "FAIL" : "ok", checks, fails_in_group);
	fails_in_group = 0;
}

static void
test_keys(void)
{
	double		f[] = {-INFINITY, -1e300, -1.5, -1e-300, -0.0, 0.0, 1e-300, 2.5, 1e300, INFINITY, NAN};
	int64_t		iv[] = {INT64_MIN, INT64_MIN + 1, -5, -1, 0, 1, 7, INT64_MAX - 1, INT64_MAX};
	long		checks = 0;
	int			i;

	for (i = 0; i + 1 < 11; i++, checks++)
	{
		uint64_t	a = hm_encode_float8(f[i]),
					b = hm_encode_float8(f[i + 1]);

		if (i == 4)
			CHECK(a == b, "-0 != 0");
		else
			CHECK(a < b, "float order %g %g", f[i], f[i + 1]);
	}
	CHECK(hm_encode_float8(NAN) == hm_encode_float8(-NAN), "NaN != -NaN");
	CHECK(hm_encode_float4((float) NAN) == hm_encode_float8(NAN), "float4 NaN");
	CHECK(hm_encode_float4(1.5f) == hm_encode_float8(1.5), "float4 widen");
	CHECK(hm_encode_float4(-INFINITY) == hm_encode_float8(-INFINITY), "float4 -inf");
	for (i = 0; i < 11; i++, checks++)
		if (i != 4 && i != 10)
			CHECK(hm_decode_float8(hm_encode_float8(f[i])) == f[i], "float decode %g", f[i]);
	CHECK(isnan(hm_decode_float8(hm_encode_float8(NAN))), "NaN decode");
	for (i = 0; i + 1 < 9; i++, checks++)
	{
		CHECK(hm_encode_int64(iv[i]) < hm_encode_int64(iv[i + 1]), "int order");
		CHECK(hm_decode_int64(hm_encode_int64(iv[i])) == iv[i], "int decode");
	}
	CHECK(hm_encode_int2(-3) == hm_encode_int64(-3), "int2");
	CHECK(hm_encode_int4(INT32_MIN) == hm_encode_int64(INT32_MIN), "int4");
	CHECK(hm_encode_date(-1) < hm_encode_date(0), "date");
	CHECK(hm_encode_timestamp(INT64_MIN) == 0, "timestamp -inf");
	CHECK(hm_encode_timestamp(INT64_MAX) == UINT64_MAX, "timestamp +inf");
	CHECK(hm_tid_block(hm_tid_pack(4000000000u, 65535)) == 4000000000u &&
		  hm_tid_offset(hm_tid_pack(4000000000u, 65535)) == 65535 &&
		  hm_tid_pack(1, 0) > hm_tid_pack(0, 65535), "tid pack");
	checks += 9;
	group_end("key encodings", checks);
}

static const int64_t sizes[] = {0, 1, 2, 7, 8, 9, 63, 64, 65, 127, 129, 1000, 4097, 20000, 300000};
#define NSIZES ((int) (sizeof(sizes) / sizeof(sizes[0])))
static const int fanouts[] = {8, 16, 32, 64, 128};

static hm_tree *
build(const uint64_t *k, int64_t n, const int64_t *vi, const double *vf, int fanout)
{
	hm_input	in;
	hm_tree    *t;
	uint64_t   *rid = malloc((n + 1) * 8);
	int64_t		i;

	for (i = 0; i < n; i++)
		rid[i] = i * 3 + 1;
	memset(&in, 0, sizeof(in));
	in.n = n;
	in.keys = k;
	in.rowids = rid;
	in.ncols = 2;
	in.coltype[0] = HM_INT64;
	in.cols[0] = vi;
	in.coltype[1] = HM_FLOAT8;
	in.cols[1] = vf;
	if (hm_cpu_build(&in, fanout, &t) != HM_OK)
		t = NULL;
	free(rid);
	return t;
}

static void
gen_cols(int64_t *vi, double *vf, int64_t n)
{
	int64_t		i;

	for (i = 0; i < n; i++)
	{
		/* big values so sums overflow 64 bits */
		vi[i] = (rnd() & 1) ? (int64_t) rnd() : (int64_t) (rnd() % 2001) - 1000;
		vf[i] = ((double) (rnd() % 2000001) - 1000000.0) / 7.0;
	}
}

static void
test_bounds(void)
{
	long		checks = 0;
	int			si,
				fi,
				dist;

	for (si = 0; si < NSIZES; si++)
		for (fi = 0; fi < 5; fi++)
			for (dist = 0; dist < 4; dist++)
			{
				int64_t		n = sizes[si],
							nq = 2000,
							i;
				uint64_t   *k = malloc((n + 1) * 8),
						   *q = malloc(nq * 8);
				int64_t    *vi = malloc((n + 1) * 8),
						   *lb = malloc(nq * 8),
						   *ub = malloc(nq * 8);
				double	   *vf = malloc((n + 1) * 8);
				hm_tree    *t;
				hm_opts		o;

				o_keys(k, n, dist);
				gen_cols(vi, vf, n);
				t = build(k, n, vi, vf, fanouts[fi]);
				CHECK(t != NULL, "build n=%ld", (long) n);
				if (!t)
					continue;
				for (i = 0; i < nq; i++)
					q[i] = (n > 0 && (rnd() & 1)) ? k[rnd() % n] : o_key(dist);
				q[0] = 0;
				q[1] = UINT64_MAX;
				if (rnd() & 1)
					qsort(q, nq, 8, o_cmpu);
				hm_default_opts(&o);
				o.combine = rnd() & 1;
				CHECK(hm_cpu_lower_bound(t, q, nq, lb, &o) == HM_OK, "lb");
				CHECK(hm_cpu_upper_bound(t, q, nq, ub, &o) == HM_OK, "ub");
				for (i = 0; i < nq; i++, checks += 2)
				{
					CHECK(lb[i] == o_bound(k, n, q[i], 0), "lower n=%ld F=%d d=%d q=%llu: %ld vs %ld",
						  (long) n, fanouts[fi], dist, (unsigned long long) q[i],
						  (long) lb[i], (long) o_bound(k, n, q[i], 0));
					CHECK(ub[i] == o_bound(k, n, q[i], 1), "upper n=%ld F=%d", (long) n, fanouts[fi]);
				}
				for (i = 0; i < n; i += 1 + n / 50, checks++)
					CHECK(hm_cpu_rowid(t, i) == (uint64_t) i * 3 + 1, "rowid");
				hm_cpu_free(t);
				free(k);
				free(q);
				free(vi);
				free(vf);
				free(lb);
				free(ub);
			}
	group_end("lower/upper bound vs sorted array", checks);
}

static void
test_ranges_aggs(void)
{
	long		checks = 0,
				achecks = 0;
	int			si,
				fi,
				dist,
				gfail = 0;

	for (si = 0; si < NSIZES; si++)
		for (fi = 0; fi < 5; fi += (sizes[si] > 10000 ? 2 : 1))
			for (dist = 0; dist < 4; dist++)
			{
				int64_t		n = sizes[si],
							nr = 300,
							i,
							s,
							e;
				uint64_t   *k = malloc((n + 1) * 8);
				int64_t    *vi = malloc((n + 1) * 8),
						   *st = malloc(nr * 8),
						   *en = malloc(nr * 8);
				double	   *vf = malloc((n + 1) * 8),
							scale = 0;
				hm_range   *r = malloc(nr * sizeof(hm_range));
				hm_agg	   *ag = malloc(nr * sizeof(hm_agg)),
							ref;
				hm_tree    *t;
				int			col;

				o_keys(k, n, dist);
				gen_cols(vi, vf, n);
				for (i = 0; i < n; i++)
					scale += fabs(vf[i]);
				t = build(k, n, vi, vf, fanouts[fi]);
				for (i = 0; i < nr; i++)
					o_range(&r[i], k, n, dist);
				CHECK(hm_cpu_ranges(t, r, nr, st, en, NULL) == HM_OK, "ranges");
				for (i = 0; i < nr; i++, checks++)
				{
					s = o_bound(k, n, r[i].lo, !r[i].lo_incl);
					e = o_bound(k, n, r[i].hi, r[i].hi_incl);
					if (e < s)
						e = s;
					CHECK(st[i] == s && en[i] == e, "range n=%ld F=%d: [%ld,%ld) vs [%ld,%ld)",
						  (long) n, fanouts[fi], (long) st[i], (long) en[i], (long) s, (long) e);
				}
				/* aggregates only on the smaller sizes: the oracle is O(n) */
				for (col = -1; col < 2 && n <= 20000; col++)
				{
					CHECK(hm_cpu_aggregate(t, r, nr, col, ag, NULL) == HM_OK, "agg");
					for (i = 0; i < nr; i++, achecks++)
					{
						o_agg(k, col < 0 ? NULL : col == 0 ? (void *) vi : (void *) vf,
							  col == 1, n, &r[i], &ref);
						if (col < 0)
							CHECK(ag[i].count == ref.count, "count");
						else
							CHECK(o_agg_eq(&ag[i], &ref, col == 1, scale), "agg col %d n=%ld F=%d: count %ld/%ld sum %g/%g",
								  col, (long) n, fanouts[fi], (long) ag[i].count, (long) ref.count,
								  ag[i].sum_f, ref.sum_f);
					}
				}
				hm_cpu_free(t);
				free(k);
				free(vi);
				free(vf);
				free(st);
				free(en);
				free(r);
				free(ag);
			}
	(void) gfail;
	group_end("ranges (open/closed, empty) ", checks);
	group_end("count/sum/min/max aggregates", achecks);
}

/* delta: random inserts and deletes, aggregates vs naive, then merge */
static void
test_delta(void)
{
	long		checks = 0;
	int			round;

	for (round = 0; round < 40; round++)
	{
		int64_t		n = (int64_t) (rnd() % 5000),
					ni = (int64_t) (rnd() % 300),
					nd = n > 0 ? (int64_t) (rnd() % (n < 300 ? n : 300)) : 0,
					nr = 300,
					i,
					m;
		int			dist = round % 4,
					fanout = fanouts[round % 5],
					col;
		uint64_t   *k = malloc((n + 1) * 8),
				   *ik = malloc((ni + 1) * 8),
				   *irid = malloc((ni + 1) * 8),
				   *dk = malloc((nd + 1) * 8),
				   *drid = malloc((nd + 1) * 8),
				   *mk = malloc((n + ni + 1) * 8);
		int64_t    *vi = malloc((n + 1) * 8),
				   *ivi = malloc((ni + 1) * 8),
				   *mvi = malloc((n + ni + 1) * 8),
				   *pos = malloc(nr * 8);
		double	   *vf = malloc((n + 1) * 8),
				   *ivf = malloc((ni + 1) * 8),
				   *mvf = malloc((n + ni + 1) * 8),
					scale = 1;
		char	   *dead = calloc(n + 1, 1);
		hm_tree    *t,
				   *t2;
		hm_input	ins,
					del;
		hm_range   *r = malloc(nr * sizeof(hm_range));
		hm_agg	   *ag = malloc(nr * sizeof(hm_agg)),
					ref;

		o_keys(k, n, dist);
		gen_cols(vi, vf, n);
		t = build(k, n, vi, vf, fanout);
		o_keys(ik, ni, dist);
		gen_cols(ivi, ivf, ni);
		for (i = 0; i < ni; i++)
			irid[i] = 1000000 + i;
		/* pick distinct victims in key order */
		for (i = 0, m = 0; i < n && m < nd; i++)
			if ((int64_t) (rnd() % n) < nd)
			{
				dead[i] = 1;
				dk[m] = k[i];
				drid[m++] = i * 3 + 1;
			}
		nd = m;
		memset(&ins, 0, sizeof(ins));
		ins.n = ni;
		ins.keys = ik;
		ins.rowids = irid;
		ins.ncols = 2;
		ins.coltype[0] = HM_INT64;
		ins.cols[0] = ivi;
		ins.coltype[1] = HM_FLOAT8;
		ins.cols[1] = ivf;
		memset(&del, 0, sizeof(del));
		del.n = nd;
		del.keys = dk;
		del.rowids = drid;
		CHECK(hm_cpu_set_delta(t, &ins, &del) == HM_OK, "set_delta");
		CHECK(hm_delta_entries(t) == ni + nd, "delta entries");
		/* naive merged view: survivors then inserts, sorted by key (stable) */
		for (i = 0, m = 0; i < n; i++)
			if (!dead[i])
			{
				mk[m] = k[i];
				mvi[m] = vi[i];
				mvf[m++] = vf[i];
			}
		for (i = 0; i < ni; i++)
		{
			int64_t		p = o_bound(mk, m, ik[i], 1),
						j;

			for (j = m; j > p; j--)
			{
				mk[j] = mk[j - 1];
				mvi[j] = mvi[j - 1];
				mvf[j] = mvf[j - 1];
			}
			mk[p] = ik[i];
			mvi[p] = ivi[i];
			mvf[p] = ivf[i];
			m++;
		}
		for (i = 0; i < m; i++)
			scale += fabs(mvf[i]);
		for (i = 0; i < nr; i++)
			o_range(&r[i], mk, m, dist);
		for (col = 0; col < 2; col++)
		{
			CHECK(hm_cpu_aggregate(t, r, nr, col, ag, NULL) == HM_OK, "agg");
			for (i = 0; i < nr; i++, checks++)
			{
				o_agg(mk, col == 0 ? (void *) mvi : (void *) mvf, col, m, &r[i], &ref);
				CHECK(o_agg_eq(&ag[i], &ref, col, scale), "delta agg col %d n=%ld ni=%ld nd=%ld count %ld/%ld",
					  col, (long) n, (long) ni, (long) nd, (long) ag[i].count, (long) ref.count);
			}
		}
		CHECK(hm_cpu_merge(t, &t2) == HM_OK, "merge");
		CHECK(hm_entries(t2) == m, "merged size");
		for (col = 0; col < 2; col++)
		{
			hm_cpu_aggregate(t2, r, nr, col, ag, NULL);
			for (i = 0; i < nr; i++, checks++)
			{
				o_agg(mk, col == 0 ? (void *) mvi : (void *) mvf, col, m, &r[i], &ref);
				CHECK(o_agg_eq(&ag[i], &ref, col, scale), "merged agg");
			}
		}
		for (i = 0; i < nr; i++, checks++)
		{
			int64_t		p;

			hm_cpu_lower_bound(t2, &r[i].lo, 1, &p, NULL);
			CHECK(p == o_bound(mk, m, r[i].lo, 0), "merged bound");
		}
		/* a delete that matches nothing is refused */
		if (n > 0)
		{
			drid[0] = 999999999;
			del.n = 1;
			CHECK(hm_cpu_set_delta(t, NULL, &del) == HM_EINVAL, "bogus delete");
			checks++;
		}
		hm_cpu_free(t);
		hm_cpu_free(t2);
		free(k); free(ik); free(irid); free(dk); free(drid); free(mk);
		free(vi); free(ivi); free(mvi); free(pos); free(vf); free(ivf); free(mvf);
		free(dead); free(r); free(ag);
	}
	group_end("delta inserts/deletes + merge", checks);
}

/* btree's float order: NaN equals NaN and sorts above everything; -0 = 0 */
static int
pg_float_cmp(double a, double b)
{
	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	return a < b ? -1 : a > b;
}

static int
cmp_u64_sign(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* A random double of a random class, NaNs with any payload and sign. */
static double
random_double(void)
{
	uint64_t	sign = rnd() & HM_SIGN_BIT,
				mant = rnd() & ((1ULL << 52) - 1),
				bits;
	double		d;

	switch (rnd() % 8)
	{
		case 0:					/* NaN: quiet or signalling */
			bits = sign | 0x7ff0000000000000ULL | (mant ? mant : 1);
			break;
		case 1:					/* +/-Infinity */
			bits = sign | 0x7ff0000000000000ULL;
			break;
		case 2:					/* +/-0 */
			bits = sign;
			break;
		case 3:					/* denormal */
			bits = sign | mant;
			break;
		case 4:					/* a few values, so that many pairs are equal */
			return (double) (int) (rnd() % 9) - 4.0;
		default:
			bits = rnd();
			break;
	}
	memcpy(&d, &bits, sizeof(d));
	return d;
}

/*
 * Float keys of every class on fresh random data: the order of the keys is
 * btree's (each NaN bit pattern one key, -0 the key of 0), float4 keys are
 * those of their float8 widening.
 */
static void
test_float_keys(void)
{
	const int	n = 100000;
	double	   *v = malloc(n * sizeof(double));
	long		checks = 0;
	int			i;

	for (i = 0; i < n; i++)
		v[i] = random_double();
	for (i = 0; i < n; i++, checks += 2)
	{
		double		a = v[i],
					b = v[rnd() % n];
		uint32_t	fb = (uint32_t) rnd();
		float		f;

		CHECK(cmp_u64_sign(hm_encode_float8(a), hm_encode_float8(b)) == pg_float_cmp(a, b),
			  "order of %a and %a", a, b);
		memcpy(&f, &fb, sizeof(f));
		CHECK(hm_encode_float4(f) == hm_encode_float8((double) f) &&
			  cmp_u64_sign(hm_encode_float4(f), hm_encode_float8(a)) == pg_float_cmp((double) f, a),
			  "float4 %a against %a", (double) f, a);
	}
	free(v);
	group_end("float keys of every class", checks);
}

/*
 * Every key type of the table (keytable.h) on fresh random values of its C
 * type: the keys' order is the values' order, equal values share a key.
 * A new row is tested here without a new line.
 */
#define TEST_KEY_TYPE(name, ctype, encoder, ...) \
	do { \
		int			i; \
		for (i = 0; i < 100000; i++, checks++) \
		{ \
			ctype		a = (ctype) random_key_value(sizeof(ctype), (ctype) 0.5 != 0); \
			ctype		b = rnd() % 8 == 0 ? a : (ctype) random_key_value(sizeof(ctype), (ctype) 0.5 != 0); \
			int			want = a < b ? -1 : a > b ? 1 : 0; \
			\
			if (a != a || b != b) \
				continue;		/* NaN: test_float_keys */ \
			CHECK(cmp_u64_sign(encoder(a), encoder(b)) == want, \
				  "%s: order of %.17g and %.17g", #name, (double) a, (double) b); \
		} \
		ntypes++; \
	} while (0);

/* A random value of a C type of this width, integer or floating. */
static double
random_key_value(size_t width, int floating)
{
	uint64_t	bits = ((uint64_t) rnd() << 32) ^ rnd();

	if (floating)
		return width == sizeof(float) ? (double) (float) random_double() : random_double();
	if (rnd() % 4 == 0)
		bits %= 7;				/* small values, so that equal ones occur */
	switch (width)
	{
		case 2:
			return (double) (int16_t) bits;
		case 4:
			return (double) (int32_t) bits;
		default:
			return (double) (int64_t) (bits >> 11);	/* exact in a double */
	}
}

static void
test_key_table(void)
{
	long		checks = 0;
	int			ntypes = 0;

#define TEST_ROW(name, ctype, encoder, ...) TEST_KEY_TYPE(name, ctype, encoder)
	GBT_KEY_TYPES(TEST_ROW)
	CHECK(ntypes >= 8, "only %d key types in the table", ntypes);
	group_end("every key type of the table", checks);
}

static void
test_misc(void)
{
	uint64_t	k[3] = {3, 2, 1};
	hm_input	in;
	hm_tree    *t;
	long		checks = 0;
	int			f;

	memset(&in, 0, sizeof(in));
	in.n = 3;
	in.keys = k;
	CHECK(hm_cpu_build(&in, 32, &t) == HM_EINVAL, "unsorted accepted");
	qsort(k, 3, 8, o_cmpu);
	CHECK(hm_cpu_build(&in, 33, &t) == HM_EINVAL, "fanout 33 accepted");
	CHECK(hm_cpu_build(&in, 4, &t) == HM_EINVAL, "fanout 4 accepted");
	CHECK(hm_psa_bits(1 << 23, 64, 16) == 19, "Equation 2 example: %d", hm_psa_bits(1 << 23, 64, 16));
	CHECK(strcmp(hm_strerror(HM_ENODEV), "no usable GPU") == 0, "strerror");
	checks += 5;
	for (f = 8; f <= 128; f *= 2)
	{
		int64_t		n = 200000,
					i;
		uint64_t   *kk = malloc(n * 8),
				   *s = malloc(2000 * 8);
		int			gs;

		o_keys(kk, n, 0);
		in.n = n;
		in.keys = kk;
		hm_cpu_build(&in, f, &t);
		for (i = 0; i < 2000; i++)
			s[i] = rnd();
		gs = hm_cpu_choose_group_size(t, s, 2000);
		CHECK(gs >= 1 && gs <= (f < 32 ? f : 32) && (gs & (gs - 1)) == 0, "NTG size %d", gs);
		printf("  NTG model (2^17.6 keys, uniform sample): fanout %3d -> group %d\n", f, gs);
		checks++;
		hm_cpu_free(t);
		free(kk);
		free(s);
	}
	group_end("arguments, Equation 2, NTG model", checks);
}

int
main(int argc, char **argv)
{
	uint64_t	seed = argc > 1 ? strtoull(argv[1], NULL, 0) :
		(uint64_t) time(NULL) ^ ((uint64_t) clock() << 20);

	rng_s = seed;
	printf("harmonia CPU tests, seed %llu\n", (unsigned long long) seed);
	test_keys();
	test_key_table();
	test_float_keys();
	test_bounds();
	test_ranges_aggs();
	test_delta();
	test_misc();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
