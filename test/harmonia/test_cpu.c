/*
 * CPU unit tests of the Harmonia twin against naive sorted arrays: range
 * search (the engine's), and the benchmark's bounds and NTG model (bound.h).
 * Fresh random seed per run (printed; pass a seed as argv[1] to replay).
 */
#include <stdio.h>
#include <time.h>
#include "oracle.h"
#include "../../cuda/keytable.h"
#include "../../cuda/keybound.h"

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

/* key_<type>(): a value's key as the table (keytable.h) encodes it */
#define KEY_OF_ROW(name, ctype, encoder, ...) \
static inline uint64_t key_##name(ctype v) { return encoder(v); }
GBT_KEY_TYPES(KEY_OF_ROW)

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
	CHECK(key_float4((float) NAN) == hm_encode_float8(NAN), "float4 NaN");
	CHECK(key_float4(1.5f) == hm_encode_float8(1.5), "float4 widen");
	CHECK(key_float4(-INFINITY) == hm_encode_float8(-INFINITY), "float4 -inf");
	for (i = 0; i < 11; i++, checks++)
		if (i != 4 && i != 10)
			CHECK(hm_decode_float8(hm_encode_float8(f[i])) == f[i], "float decode %g", f[i]);
	CHECK(isnan(hm_decode_float8(hm_encode_float8(NAN))), "NaN decode");
	for (i = 0; i + 1 < 9; i++, checks++)
	{
		CHECK(hm_encode_int64(iv[i]) < hm_encode_int64(iv[i + 1]), "int order");
		CHECK(hm_decode_int64(hm_encode_int64(iv[i])) == iv[i], "int decode");
	}
	CHECK(key_int2(-3) == hm_encode_int64(-3), "int2");
	CHECK(key_int4(INT32_MIN) == hm_encode_int64(INT32_MIN), "int4");
	CHECK(key_date(-1) < key_date(0), "date");
	CHECK(key_timestamp(INT64_MIN) == 0, "timestamp -inf");
	CHECK(key_timestamptz(INT64_MAX) == UINT64_MAX, "timestamptz +inf");
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
build(const uint64_t *k, int64_t n, int fanout)
{
	hm_tree    *t;

	if (hm_cpu_build(k, n, fanout, &t) != HM_OK)
		t = NULL;
	return t;
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
				int64_t    *lb = malloc(nq * 8),
						   *ub = malloc(nq * 8);
				hm_tree    *t;
				hm_opts		o;

				o_keys(k, n, dist);
				t = build(k, n, fanouts[fi]);
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
				hm_cpu_free(t);
				free(k);
				free(q);
				free(lb);
				free(ub);
			}
	group_end("lower/upper bound vs sorted array", checks);
}

static void
test_ranges(void)
{
	long		checks = 0;
	int			si,
				fi,
				dist;

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
				int64_t    *st = malloc(nr * 8),
						   *en = malloc(nr * 8);
				hm_range   *r = malloc(nr * sizeof(hm_range));
				hm_tree    *t;

				o_keys(k, n, dist);
				t = build(k, n, fanouts[fi]);
				CHECK(t != NULL, "build n=%ld", (long) n);
				if (!t)
					continue;
				for (i = 0; i < nr; i++)
					o_range(&r[i], k, n, dist);
				CHECK(hm_cpu_ranges(t, r, nr, st, en) == HM_OK, "ranges");
				for (i = 0; i < nr; i++, checks++)
				{
					s = o_bound(k, n, r[i].lo, !r[i].lo_incl);
					e = o_bound(k, n, r[i].hi, r[i].hi_incl);
					if (e < s)
						e = s;
					CHECK(st[i] == s && en[i] == e, "range n=%ld F=%d: [%ld,%ld) vs [%ld,%ld)",
						  (long) n, fanouts[fi], (long) st[i], (long) en[i], (long) s, (long) e);
				}
				CHECK(hm_bytes(t) >= (size_t) n * 8, "bytes");
				checks++;
				hm_cpu_free(t);
				free(k);
				free(st);
				free(en);
				free(r);
			}
	group_end("ranges (open/closed, empty) ", checks);
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
		CHECK(key_float4(f) == hm_encode_float8((double) f) &&
			  cmp_u64_sign(key_float4(f), hm_encode_float8(a)) == pg_float_cmp((double) f, a),
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
	hm_tree    *t;
	long		checks = 0;
	int			f;

	CHECK(hm_cpu_build(k, 3, 32, &t) == HM_EINVAL, "unsorted accepted");
	qsort(k, 3, 8, o_cmpu);
	CHECK(hm_cpu_build(k, 3, 33, &t) == HM_EINVAL, "fanout 33 accepted");
	CHECK(hm_cpu_build(k, 3, 4, &t) == HM_EINVAL, "fanout 4 accepted");
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
		hm_cpu_build(kk, n, f, &t);
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

/*
 * gbt_sorted_bound_near() against the binary search: every key
 * distribution of the oracle, keys in steps (the even spread it guesses
 * from) and in steps with a few far outliers (its guesses wrong), sizes
 * around GBT_NEAR_MIN, keys present, absent, before and after all.
 */
static void
test_bound_near(void)
{
	static const int64_t sizes[] = {0, 1, 2, 63, 64, 65, 1000, 100000};
	long		checks = 0;
	int			si,
				dist;

	for (si = 0; si < (int) (sizeof(sizes) / sizeof(sizes[0])); si++)
		for (dist = 0; dist < 6; dist++)
		{
			int64_t		n = sizes[si],
						i,
						q;
			uint64_t   *k = malloc((n + 1) * 8);

			if (dist < 4)
				o_keys(k, n, dist);
			else
			{
				uint64_t	step = 1 + rnd() % 1000;

				for (i = 0; i < n; i++)
					k[i] = 5000 + (uint64_t) i * step;
				for (i = 0; dist == 5 && i < 3 && i < n; i++)
					k[n - 1 - i] = UINT64_MAX - (uint64_t) i;
				qsort(k, n, 8, o_cmpu);
			}
			for (q = 0; q < 2000; q++)
			{
				uint64_t	x = (n > 0 && (rnd() & 1)) ? k[rnd() % n] + (rnd() % 3) - 1 :
					dist >= 4 ? rnd() % (n * 1000 + 10000) : o_key(dist);
				bool		after = rnd() & 1;

				CHECK(gbt_sorted_bound_near(k, n, x, after) == gbt_sorted_bound(k, 0, n, x, after),
					  "n %lld dist %d key %llu after %d: %lld, want %lld", (long long) n, dist,
					  (unsigned long long) x, (int) after,
					  (long long) gbt_sorted_bound_near(k, n, x, after),
					  (long long) gbt_sorted_bound(k, 0, n, x, after));
				checks++;
			}
			free(k);
		}
	group_end("bounds begun at an interpolated guess = binary search", checks);
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
	test_ranges();
	test_misc();
	test_bound_near();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
