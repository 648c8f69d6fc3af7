/*
 * The engine interface (cuda/engine.h) on fresh random data: build, ranges
 * and aggregate through an engine's ops, against the naive oracles of
 * oracle.h (positions) and test_vagg_cpu.c (aggregates), with the removed
 * bitmap changed between calls.  Here the CPU twin's ops;
 * test_engine_gpu.cu includes this file with TE_NO_MAIN and runs the same
 * on the GPU engine, also comparing it with the CPU twin.  Fresh random
 * seed per run (printed; pass a seed as argv[1] to replay).
 */
#define VT_NO_MAIN
#include "test_vagg_cpu.c"
#include "oracle.h"
#include "../../cuda/chunksums.h"
#include "../../cuda/predicate.h"

#include "split_build.h"

/* Random inclusive key ranges, some empty (lo > hi); the oracle's answer. */
static void
te_key_ranges(const uint64_t *k, int64_t n, int dist, int64_t nr,
			  uint64_t *lo, uint64_t *hi, int64_t *ws, int64_t *we)
{
	int64_t		i;

	for (i = 0; i < nr; i++)
	{
		lo[i] = (n > 0 && (rnd() & 1)) ? k[rnd() % n] : o_key(dist);
		hi[i] = (n > 0 && (rnd() & 1)) ? k[rnd() % n] : o_key(dist);
		if (rnd() % 4 != 0 && lo[i] > hi[i])
		{
			uint64_t	x = lo[i];

			lo[i] = hi[i];
			hi[i] = x;
		}
		ws[i] = o_bound(k, n, lo[i], 0);
		we[i] = o_bound(k, n, hi[i], 1);
		if (we[i] < ws[i])
			we[i] = ws[i];
	}
}

/* Sorted, disjoint inclusive key ranges (what the service asks for). */
static int64_t
te_disjoint(const uint64_t *k, int64_t n, int dist, int64_t want,
			uint64_t *lo, uint64_t *hi)
{
	uint64_t   *c = (uint64_t *) malloc((2 * want + 1) * 8);
	int64_t		i,
				r = 0;

	for (i = 0; i < 2 * want; i++)
		c[i] = (n > 0 && (rnd() & 1)) ? k[rnd() % n] : o_key(dist);
	qsort(c, 2 * want, 8, o_cmpu);
	for (i = 0; i + 1 < 2 * want; i += 2)
		if (r == 0 || c[i] > hi[r - 1])
		{
			lo[r] = c[i];
			hi[r++] = c[i + 1];
		}
	free(c);
	return r;
}

/*
 * Sorted distinct points, half of them keys of k: what = ANY sends, as one
 * array passed as both lo and hi.
 */
static int64_t
te_points(const uint64_t *k, int64_t n, int dist, int64_t want, uint64_t *p)
{
	int64_t		i,
				u = 0;

	for (i = 0; i < want; i++)
		p[i] = (n > 0 && (rnd() & 1)) ? k[rnd() % n] : o_key(dist);
	qsort(p, want, 8, o_cmpu);
	for (i = 0; i < want; i++)
		if (u == 0 || p[i] != p[u - 1])
			p[u++] = p[i];
	return u;
}

/*
 * Aggregates over the positions of many points (past the GPU's host-staged
 * size, so that its aggregate reads the positions ranges() left on the
 * device), against the oracle; then over a copy of those positions.
 */
static long
te_run_points(const gbt_engine_ops *ops, gbt_engine *e, vt_data *d, const uint64_t *k,
			  int64_t n, int dist, int64_t want)
{
	uint64_t   *p = (uint64_t *) malloc((want + 1) * 8);
	vt_query	q;
	vt_oracle	o;
	gbt_agg_result res;
	char		err[256];
	long		checks = 0;
	int64_t		i,
				copy;

	/*
	 * The engine's sort: the points shuffled, with repeats, come back as
	 * te_points() made them (ranges() then finds them on the GPU); every
	 * other time each with its place among them (map).
	 */
	{
		int64_t		u = te_points(k, n, dist, want, p);
		int64_t		m = u + u / 3 + (u > 0 ? 1 : 0);
		uint64_t   *x = (uint64_t *) malloc((m + 1) * 8);
		uint64_t   *given = (uint64_t *) malloc((m + 1) * 8);
		uint32_t   *map = rnd() % 2 ? (uint32_t *) malloc((m + 1) * 4) : NULL;
		int64_t		nout = -1;

		for (i = 0; i < m; i++)
			x[i] = p[i < u ? i : rnd() % u];
		for (i = m - 1; i > 0; i--)
		{
			int64_t		j = rnd() % (i + 1);
			uint64_t	t = x[i];

			x[i] = x[j];
			x[j] = t;
		}
		memcpy(given, x, m * 8);
		VT_CHECK(ops->sort_unique(e, x, m, map, &nout, err, sizeof(err)) == 0,
				 "sort_unique: %s", err);
		VT_CHECK(nout == u && memcmp(x, p, u * 8) == 0,
				 "sort_unique of %lld keys: %lld left, want %lld", (long long) m,
				 (long long) nout, (long long) u);
		checks += 2;
		for (i = 0; map != NULL && i < m; i++, checks++)
			VT_CHECK(map[i] < (uint64_t) u && x[map[i]] == given[i],
					 "sort_unique map of key %lld of %lld: %u", (long long) i,
					 (long long) m, map[i]);
		free(given);
		free(map);
		free(p);
		p = x;					/* searched below where the engine left them */
		memset(&q, 0, sizeof(q));
		q.R = u;
	}
	q.start = (int64_t *) malloc((q.R + 1) * 8);
	q.end = (int64_t *) malloc((q.R + 1) * 8);
	VT_CHECK(ops->ranges(e, p, p, q.R, q.start, q.end, err, sizeof(err)) == 0,
			 "point ranges: %s", err);
	for (i = 0; i < q.R; i++, checks++)
		VT_CHECK(q.start[i] == o_bound(k, n, p[i], 0) && q.end[i] == o_bound(k, n, p[i], 1),
				 "point %lld of %lld: [%lld,%lld)", (long long) i, (long long) q.R,
				 (long long) q.start[i], (long long) q.end[i]);
	vt_visible(&q, d->nblocks, (int) vt_below(VT_V_NMODES));
	for (copy = 0; copy < 2; copy++)
	{
		if (copy == 1)
		{
			/* Other arrays with the same positions: read from the host. */
			int64_t    *s2 = (int64_t *) malloc((q.R + 1) * 8);
			int64_t    *e2 = (int64_t *) malloc((q.R + 1) * 8);

			memcpy(s2, q.start, q.R * 8);
			memcpy(e2, q.end, q.R * 8);
			free(q.start);
			free(q.end);
			q.start = s2;
			q.end = e2;
		}
		vt_oracle_run(d, &q, &o);
		vt_set_cap(&q, (int) vt_below(6), o.nuns, n);
		memset(&res, 0x77, sizeof(res));
		if (ops->aggregate(e, d->removed, 100 + copy, q.start, q.end, q.R,
						   q.vis, q.nvis, &res, q.unsure, q.cap, err, sizeof(err)) != 0)
			VT_CHECK(0, "point aggregate n=%lld: %s", (long long) n, err);
		else
			checks += vt_check("engine points", d, &q, &o, &res, q.unsure);
		vt_oracle_free(&o);
	}
	vt_qfree(&q);
	free(p);
	return checks;
}

/*
 * One engine of n entries on device through ops (and, when twin is not
 * NULL, the same data on the CPU twin, whose positions must be identical).
 * Returns the checks done.
 */
static long
te_run(const gbt_engine_ops *ops, int device, const gbt_engine_ops *twin,
	   int64_t n, int dist, int it)
{
	vt_data		d;
	vt_query	q;
	vt_oracle	o;
	gbt_agg_result res;
	gbt_engine *e = NULL,
			   *t = NULL;
	uint64_t   *k = (uint64_t *) malloc((n + 1) * 8);
	int64_t		nr = 1 + vt_below(300),
				i,
				r,
				round;
	uint64_t   *lo = (uint64_t *) malloc(nr * 8),
			   *hi = (uint64_t *) malloc(nr * 8);
	int64_t    *s = (int64_t *) malloc(nr * 8),
			   *en = (int64_t *) malloc(nr * 8),
			   *ws = (int64_t *) malloc(nr * 8),
			   *we = (int64_t *) malloc(nr * 8),
			   *ts = (int64_t *) malloc(nr * 8),
			   *te = (int64_t *) malloc(nr * 8);
	uint8_t    *removed;
	char		err[256];
	long		checks = 0;

	vt_make(&d, n, it % (GBT_MAX_COLS + 1), it % 5 == 4 ? 0 : 1 + vt_below(n / 4 + 2),
			it % 3 == 0 ? -1 : 0.2);
	/*
	 * Float specials mix 1e300 and 2^900 with small values: where the large
	 * ones cancel exactly, which short ranges make likely, the double-double
	 * sum keeps only the contract's bound, the one VT_F_PATHO is held to.
	 */
	for (i = 0; i < d.in.ncols; i++)
		if (d.in.coltype[i] == GBT_VAL_FLOAT8 && d.dist[i] == VT_F_SPECIAL)
			d.dist[i] = VT_F_PATHO;
	removed = d.removed;
	o_keys(k, n, dist);
	vt_vary_forms(&d, k);
	err[0] = 0;
	VT_CHECK(tb_build(ops, k, &d.in, device, &e, err, sizeof(err)) == 0,
			 "build n=%lld: %s", (long long) n, err);
	if (twin != NULL)
		VT_CHECK(twin->build(k, &d.in, -1, &t, err, sizeof(err)) == 0,
				 "twin build: %s", err);
	checks++;
	if (e == NULL || (twin != NULL && t == NULL))
		goto done;
	VT_CHECK(ops->device(e) == device, "device %d want %d", ops->device(e), device);
	VT_CHECK(ops->bytes(e) >= (size_t) n * 8, "bytes %zu for %lld keys", ops->bytes(e),
			 (long long) n);
	checks += 2;

	/* Any ranges: positions against the sorted keys (and the twin). */
	te_key_ranges(k, n, dist, nr, lo, hi, ws, we);
	memset(s, 0xab, nr * 8);
	memset(en, 0xab, nr * 8);
	VT_CHECK(ops->ranges(e, lo, hi, nr, s, en, err, sizeof(err)) == 0, "ranges: %s", err);
	if (t != NULL)
		VT_CHECK(twin->ranges(t, lo, hi, nr, ts, te, err, sizeof(err)) == 0,
				 "twin ranges: %s", err);

	/* The GPU keeps room for the batch (its staging, both ways), the twin none. */
	/*
	 * (a split keeps buffers of its own, and asks no part about ranges
	 * beyond every part's keys)
	 */
	VT_CHECK(ops == gbt_engine_split_ops() ||
			 (device < 0 ? ops->scratch_bytes(e) == 0 :
			  ops->scratch_bytes(e) >= (size_t) nr * 32),
			 "scratch bytes %zu after %lld ranges", ops->scratch_bytes(e), (long long) nr);
	checks++;
	if (it % 2 == 1)
	{
		/* given back: the calls below allocate again */
		ops->trim(e);
		VT_CHECK(ops->scratch_bytes(e) < 65536, "scratch bytes %zu after trim",
				 ops->scratch_bytes(e));
		checks++;
	}
	for (i = 0; i < nr; i++, checks++)
	{
		VT_CHECK(s[i] == ws[i] && en[i] == we[i],
				 "range %lld n=%lld: [%lld,%lld) want [%lld,%lld)", (long long) i,
				 (long long) n, (long long) s[i], (long long) en[i],
				 (long long) ws[i], (long long) we[i]);
		if (t != NULL)
			VT_CHECK(s[i] == ts[i] && en[i] == te[i], "range %lld differs from the twin",
					 (long long) i);
	}
	VT_CHECK(ops->ranges(e, lo, hi, 0, s, en, err, sizeof(err)) == 0, "no ranges");
	checks++;

	/*
	 * Aggregates over the positions of disjoint key ranges, three rounds on
	 * one engine: the removed bitmap as made, changed, then none.
	 */
	memset(&q, 0, sizeof(q));
	q.R = te_disjoint(k, n, dist, nr, lo, hi);
	q.start = (int64_t *) malloc((q.R + 1) * 8);
	q.end = (int64_t *) malloc((q.R + 1) * 8);
	VT_CHECK(ops->ranges(e, lo, hi, q.R, q.start, q.end, err, sizeof(err)) == 0,
			 "ranges: %s", err);
	vt_visible(&q, d.nblocks, (int) vt_below(VT_V_NMODES));
	for (round = 0; round < 3; round++)
	{
		if (round == 1 && removed != NULL)
			for (r = 0; r < (n + 7) / 8; r++)
				removed[r] ^= (uint8_t) vt_rnd();
		d.removed = round == 2 ? NULL : removed;
		vt_oracle_run(&d, &q, &o);
		vt_set_cap(&q, (int) vt_below(6), o.nuns, n);
		memset(&res, 0x77, sizeof(res));
		err[0] = 0;
		if (ops->aggregate(e, d.removed, (uint64_t) round + 1, q.start, q.end, q.R,
						   q.vis, q.nvis, &res, q.unsure, q.cap, err, sizeof(err)) != 0)
			VT_CHECK(0, "aggregate n=%lld: %s", (long long) n, err);
		else
			checks += vt_check("engine", &d, &q, &o, &res, q.unsure);
		vt_oracle_free(&o);
	}
	d.removed = removed;
	vt_qfree(&q);
	if (it % 3 == 1)
		ops->trim(e);			/* after the aggregates' buffers grew */
	checks += te_run_points(ops, e, &d, k, n, dist, it % 2 ? 300 : 40000);

done:
	if (e != NULL)
		ops->free(e);
	if (t != NULL)
		twin->free(t);
	vt_free(&d);
	free(k);
	free(lo);
	free(hi);
	free(s);
	free(en);
	free(ws);
	free(we);
	free(ts);
	free(te);
	return checks;
}

static const int64_t te_sizes[] = {0, 1, 2, 9, 64, 65, 1000, 4097, 20000};

/* What the sums left to scan, scanned, with their part: the answer. */
static long
te_split_check(const vt_data *d, const vt_query *q, const vt_oracle *o,
			   const gbt_chunk_split *sp)
{
	gbt_agg_result res;
	int64_t		total = 0,
				r;
	long		checks = 0;

	for (r = 0; r < q->R; r++)
		total += q->end[r] - q->start[r];
	VT_CHECK(sp->entries + sp->chunks * GBT_CHUNK == total,
			 "split: %lld scanned + %lld chunks, want %lld positions",
			 (long long) sp->entries, (long long) sp->chunks, (long long) total);
	checks++;
	if (gbt_vagg_cpu(&d->in, sp->start, sp->end, sp->n, q->vis, q->nvis, &res,
					 q->unsure, q->cap, NULL, 0) != 0)
		VT_CHECK(0, "scan of the split's ranges failed");
	else
	{
		gbt_agg_result_combine(&res, &sp->part, d->in.coltype, d->in.ncols);
		checks += vt_check("chunk sums", d, q, o, &res, q->unsure);
	}
	return checks;
}

/*
 * Long ranges over all-visible entries, answered from chunk sums, while the
 * removed bitmap changes between calls (a tenth removed, a few bits, one
 * bit in every chunk, none; once with one block not visible): through the engine (and the twin) against the
 * oracle, and the sums on their own, whose split must cover each range
 * once and use whole chunks where nothing is left to bring up to date.
 */
/*
 * aggregate_each(): each range's result against the oracle of that range
 * alone, and the unsure positions of them all, each once.
 */
static long
te_each(const gbt_engine_ops *ops, gbt_engine *e, vt_data *d, const vt_query *q,
		uint64_t version)
{
	gbt_agg_result *each = (gbt_agg_result *) malloc(sizeof(gbt_agg_result) * (q->R + 1));
	int64_t    *uns = (int64_t *) malloc(sizeof(int64_t) * (d->n + 1));
	char		err[256];
	long		checks = 0;
	int64_t		r;
	int64_t		listed = 0;

	memset(each, 0x77, sizeof(gbt_agg_result) * (q->R + 1));
	if (ops->aggregate_each(e, d->removed, version, q->start, q->end, q->R, q->vis,
							q->nvis, each, uns, d->n, err, sizeof(err)) != 0)
		VT_CHECK(0, "aggregate_each: %s", err);
	else
		for (r = 0; r < q->R; r++)
		{
			vt_query	one = *q;
			vt_oracle	o;
			int64_t		i;

			/* range r's unsure positions, after the ranges' before it */
			one.start = &q->start[r];
			one.end = &q->end[r];
			one.R = 1;
			one.cap = each[r].nunsure;
			one.unsure = (int64_t *) malloc(sizeof(int64_t) * (one.cap + VT_GUARD));
			for (i = 0; i < one.cap + VT_GUARD; i++)
				one.unsure[i] = i < one.cap ? uns[listed + i] : VT_POISON;
			vt_oracle_run(d, &one, &o);
			checks += vt_check("engine, each range", d, &one, &o, &each[r], one.unsure);
			listed += each[r].nunsure;
			vt_oracle_free(&o);
			free(one.unsure);
		}
	free(each);
	free(uns);

	/* aggregate_filtered() without programs: aggregate()'s contract */
	{
		gbt_pred_set set;
		gbt_agg_result fres;
		vt_oracle	o;
		int64_t    *fu = (int64_t *) malloc(sizeof(int64_t) * (q->cap + VT_GUARD));

		memset(&set, 0, sizeof(set));
		set.nfilters = 1;
		for (r = 0; r < q->cap + VT_GUARD; r++)
			fu[r] = VT_POISON;
		vt_oracle_run(d, q, &o);
		if (ops->aggregate_filtered(e, d->removed, version, q->start, q->end, q->R, q->vis,
									q->nvis, &set, &fres, fu, q->cap, err, sizeof(err)) != 0)
			VT_CHECK(0, "aggregate_filtered: %s", err);
		else
			checks += vt_check("engine, filtered", d, q, &o, &fres, fu);
		vt_oracle_free(&o);
		free(fu);
	}
	return checks + 1;
}

/* tidy_all()'s pieces one after another, last first (any order must do). */
static void
te_run_pieces(void (*fn) (void *), void *arg, size_t argsize, int n)
{
	while (n-- > 0)
		fn((char *) arg + n * argsize);
}

/*
 * Remove the entries holding each chunk's least and greatest value of
 * every INT64 column: a chunk made before cannot take those out by
 * subtraction (chunksums.c: take_out_removed()), so it must be made again.
 */
static void
te_remove_extremes(const gbt_agg_input *in, uint8_t *removed)
{
	int64_t		from,
				i;
	int			c;

	for (c = 0; c < in->ncols; c++)
	{
		if (in->coltype[c] != GBT_VAL_INT64)
			continue;
		for (from = 0; from < in->n; from += GBT_CHUNK)
		{
			int64_t		lo = -1,
						hi = -1,
						vlo = 0,
						vhi = 0;

			for (i = from; i < in->n && i < from + GBT_CHUNK; i++)
			{
				int			isnull;
				int64_t		v = (int64_t) gbt_agg_value(in, c, i, &isnull);

				if (isnull || ((removed[i >> 3] >> (i & 7)) & 1))
					continue;
				if (lo < 0 || v < vlo)
					lo = i, vlo = v;
				if (hi < 0 || v > vhi)
					hi = i, vhi = v;
			}
			if (lo >= 0)
				removed[lo >> 3] |= (uint8_t) (1 << (lo & 7));
			if (hi >= 0)
				removed[hi >> 3] |= (uint8_t) (1 << (hi & 7));
		}
	}
}

static long
te_sums(const gbt_engine_ops *ops, int device, const gbt_engine_ops *twin,
		int64_t n, int it)
{
	vt_data		d;
	vt_query	q;
	vt_oracle	o;
	gbt_agg_result res;
	gbt_engine *e = NULL,
			   *t = NULL;
	gbt_chunk_sums *sums;
	gbt_chunk_split sp;
	uint64_t   *k = (uint64_t *) malloc((n + 1) * 8);
	uint8_t    *removed = vt_bitmap(n, 0);
	uint64_t	version = 0;
	int64_t    *flipped = (int64_t *) malloc(sizeof(int64_t) * (n + 1));
	int64_t		nflipped;
	long		checks = 0;
	int64_t		i;
	int			round;
	char		err[256];

	vt_make(&d, n, it % (GBT_MAX_COLS + 1), 1 + vt_below(n / 8 + 2), -1);
	for (i = 0; i < d.in.ncols; i++)
	{
		if (d.in.coltype[i] == GBT_VAL_FLOAT8 && d.dist[i] == VT_F_SPECIAL)
			d.dist[i] = VT_F_PATHO;
		/* min/max ties inside chunks and across them, often */
		if (d.in.coltype[i] == GBT_VAL_FLOAT8 && vt_below(2))
			vt_refill(&d, (int) i, VT_F_ZEROS + (int) vt_below(3));
	}
	o_keys(k, n, 0);
	vt_vary_forms(&d, k);
	VT_CHECK(tb_build(ops, k, &d.in, device, &e, err, sizeof(err)) == 0, "build: %s", err);
	if (twin != NULL)
		VT_CHECK(twin->build(k, &d.in, -1, &t, err, sizeof(err)) == 0, "twin build: %s", err);
	sums = gbt_chunk_sums_build(&d.in);
	VT_CHECK(sums != NULL && gbt_chunk_sums_bytes(sums) > 0 &&
	/* (a split's parts may each be too short for sums of their own) */
			 (ops == gbt_engine_split_ops() ||
			  ops->host_bytes(e) >= gbt_chunk_sums_bytes(sums)),
			 "chunk sums of %lld entries: none", (long long) n);
	checks += 2;
	for (round = 0; round < 11 && e != NULL && sums != NULL; round++)
	{
		int			all = round != 6;
		int			applies;
		int			ranged = 0; /* the ranges' dirty chunks made first */
		int64_t		r;

		/* rounds 3, 7 and 9 change nothing: the same version */
		if (round != 3 && round != 7 && round != 9)
			version++;
		nflipped = 0;
		if (round == 1)
			for (i = 0; i < n; i++)
				if (vt_below(10) == 0)
				{
					removed[i >> 3] ^= (uint8_t) (1 << (i & 7));
					flipped[nflipped++] = i;
				}
		if (round == 2 || round == 6)
			for (i = 1 + vt_below(5); i > 0; i--)
			{
				int64_t		p = vt_below(n);

				removed[p >> 3] ^= (uint8_t) (1 << (p & 7));
				flipped[nflipped++] = p;
			}
		if (round == 4 || round == 8)
			for (i = 0; i < n; i += GBT_CHUNK)
			{
				int64_t		p = i + vt_below(n - i < GBT_CHUNK ? n - i : GBT_CHUNK);

				removed[p >> 3] ^= (uint8_t) (1 << (p & 7));
				flipped[nflipped++] = p;
			}
		if (round == 10)
		{
			uint8_t    *before = (uint8_t *) malloc(n / 8 + 1);

			memcpy(before, removed, n / 8 + 1);
			te_remove_extremes(&d.in, removed);
			for (i = 0; i < n; i++)
				if (((before[i >> 3] ^ removed[i >> 3]) >> (i & 7)) & 1)
					flipped[nflipped++] = i;
			free(before);
		}
		d.removed = round == 0 || round == 5 ? NULL : removed;
		d.in.removed = d.removed;

		/*
		 * Every other round the sums, and the engines, are told the flipped
		 * positions (as the service tells them between rounds) instead of
		 * comparing the bitmap; in round 6 with a version range that the
		 * sums' last comparison is not in, which they must ignore.  Round 5
		 * (no bitmap) lists nothing, as the bits of round 4 stay set.
		 */
		if (round % 2 == 0 && round > 0 && d.removed != NULL)
		{
			uint64_t	from = round == 6 ? version + 1 : version - 1;

			gbt_chunk_sums_note(sums, d.removed, from, version, flipped, nflipped);
			ops->note_removed(e, d.removed, from, version, flipped, nflipped);
			if (t != NULL)
				twin->note_removed(t, d.removed, from, version, flipped, nflipped);
		}

		memset(&q, 0, sizeof(q));
		vt_ranges(&q, n, round % 2 ? VT_R_FEW : VT_R_FULL, 6);
		q.nvis = d.nblocks;
		q.vis = vt_bitmap(d.nblocks, 1.0);
		if (!all)
		{
			/* one block an entry is on not visible: the sums stay out */
			uint32_t	b = d.blocks[vt_below(n)];

			q.vis[b >> 3] &= (uint8_t) ~(1 << (b & 7));
		}
		vt_oracle_run(&d, &q, &o);
		vt_set_cap(&q, 5, o.nuns, n);

		if (round == 8)
		{
			/* the engines' own tidying, as the service calls it */
			VT_CHECK(ops->tidy(e, d.removed, version, n) == 0 &&
					 (t == NULL || twin->tidy(t, d.removed, version, n) == 0),
					 "engine tidy: chunks left");
			checks++;
		}
		if (round == 0 || round == 4)
		{
			/* every chunk at once, as the service does after a build */
			VT_CHECK(ops->tidy_all(e, d.removed, version, te_run_pieces, 3) == 0 &&
					 (t == NULL || twin->tidy_all(t, d.removed, version, NULL, 1) == 0),
					 "engine tidy_all round %d: chunks left", round);
			checks++;
		}
		memset(&res, 0x77, sizeof(res));
		if (ops->aggregate(e, d.removed, version, q.start, q.end, q.R, q.vis, q.nvis,
						   &res, q.unsure, q.cap, err, sizeof(err)) != 0)
			VT_CHECK(0, "aggregate n=%lld round %d: %s", (long long) n, round, err);
		else
			checks += vt_check("engine, long ranges", &d, &q, &o, &res, q.unsure);
		if (t != NULL)
		{
			memset(&res, 0x77, sizeof(res));
			if (twin->aggregate(t, d.removed, version, q.start, q.end, q.R, q.vis,
								q.nvis, &res, q.unsure, q.cap, err, sizeof(err)) != 0)
				VT_CHECK(0, "twin aggregate round %d: %s", round, err);
			else
				checks += vt_check("twin, long ranges", &d, &q, &o, &res, q.unsure);
		}
		checks += te_each(ops, e, &d, &q, version);

		applies = 0;
		for (r = 0; r < q.R; r++)
			applies |= q.end[r] - q.start[r] >= GBT_CHUNK_RANGE_MIN;
		applies &= all;

		/*
		 * Every other round, every chunk made again first (as the service
		 * does between requests): then only the ranges' ends are scanned.
		 */
		if (round % 4 == 0)
		{
			/* all at once, in pieces (a build's) */
			VT_CHECK(gbt_chunk_sums_tidy_all(sums, &d.in, version, te_run_pieces,
											 1 + round / 2) == 0,
					 "tidy_all round %d: chunks left", round);
			checks++;
		}
		else if (round % 2 == 0)
		{
			VT_CHECK(gbt_chunk_sums_tidy(sums, &d.in, version, 1) == 0 ||
					 gbt_chunk_sums_tidy(sums, &d.in, version, n) == 0,
					 "tidy round %d: chunks left", round);
			checks++;
		}
		else if (round == 5 || round == 9)
		{
			/* some dirty chunks made in pieces, as a round of aggregates does */
			gbt_chunk_sums_sync(sums, &d.in, version, 3 + round, te_run_pieces,
								1 + round / 3);
		}
		else if (round == 1 || round == 7)
		{
			/*
			 * The ranges' own dirty chunks, as an item of a round does: none
			 * made past a budget below their count, all of them within it
			 * (the map said all set, where it is, or compared).
			 */
			int			vall = all && vt_below(2);
			int64_t		dirty = gbt_chunk_sums_sync_ranges(sums, &d.in, version, q.start,
														   q.end, q.R, q.vis, q.nvis, vall,
														   0, te_run_pieces, 2);

			VT_CHECK(gbt_chunk_sums_sync_ranges(sums, &d.in, version, q.start, q.end, q.R,
												q.vis, q.nvis, vall, dirty - 1,
												te_run_pieces, 2) == dirty &&
					 gbt_chunk_sums_sync_ranges(sums, &d.in, version, q.start, q.end, q.R,
												q.vis, q.nvis, vall, dirty,
												te_run_pieces, round) == dirty &&
					 gbt_chunk_sums_sync_ranges(sums, &d.in, version, q.start, q.end, q.R,
												q.vis, q.nvis, vall, n, te_run_pieces,
												2) == 0,
					 "sync_ranges round %d: %lld dirty, not all made at once", round,
					 (long long) dirty);
			checks++;
			ranged = applies;
		}
		i = gbt_chunk_sums_check(sums);
		VT_CHECK(i == 0, "round %d: %lld items above the chunks inconsistent with them",
				 round, (long long) i);
		checks++;
		i = gbt_chunk_sums_split(sums, &d.in, version, q.start, q.end, q.R, q.vis,
								 q.nvis, &sp);
		VT_CHECK(i == (applies ? 0 : 1), "split round %d: %lld, want %d", round,
				 (long long) i, applies ? 0 : 1);
		checks++;
		if (i == 0)
		{
			int64_t		ends = 0;

			for (r = 0; r < q.R; r++)
				ends += q.end[r] - q.start[r] >= GBT_CHUNK_RANGE_MIN ? 2 * GBT_CHUNK :
					q.end[r] - q.start[r];
			VT_CHECK((round % 2 != 0 && !ranged) || (sp.chunks > 0 && sp.entries <= ends),
					 "split round %d after tidying: %lld chunks, %lld scanned of at most %lld",
					 round, (long long) sp.chunks, (long long) sp.entries, (long long) ends);
			checks++;
			checks += te_split_check(&d, &q, &o, &sp);
			gbt_chunk_split_free(&sp);
		}
		vt_oracle_free(&o);
		vt_qfree(&q);
	}
	if (e != NULL)
		ops->free(e);
	if (t != NULL)
		twin->free(t);
	gbt_chunk_sums_free(sums);
	d.removed = NULL;
	vt_free(&d);
	free(removed);
	free(flipped);
	free(k);
	return checks;
}

/* Sizes for the chunk sums: a few chunks, a ragged end, past the sync budget. */
static const int64_t te_sums_sizes[] = {GBT_CHUNK_RANGE_MIN, 100003,
(GBT_CHUNK_SYNC_MAX + 300) * (int64_t) GBT_CHUNK + 5};

#include "test_batch.c"

/* Every size and key distribution, a few data sets each. */
static long
te_suite(const gbt_engine_ops *ops, int device, const gbt_engine_ops *twin)
{
	long		checks = 0;
	int			si,
				dist,
				it;

	for (si = 0; si < (int) (sizeof(te_sizes) / sizeof(te_sizes[0])); si++)
		for (dist = 0; dist < 4; dist++)
			for (it = 0; it < 5; it++)
				checks += te_run(ops, device, twin, te_sizes[si], dist, it + si);
	for (si = 0; si < (int) (sizeof(te_sums_sizes) / sizeof(te_sums_sizes[0])); si++)
		for (it = 0; it < 3; it++)
			checks += te_sums(ops, device, twin, te_sums_sizes[si], it + si);
	for (it = 0; it < 12; it++)
		checks += te_batch(ops, device, it);
	return checks;
}

#ifndef TE_NO_MAIN

static void
te_errors(void)
{
	const gbt_engine_ops *ops = gbt_engine_cpu_ops();
	uint64_t	k[3] = {3, 2, 1};
	gbt_agg_input in;
	gbt_engine *e = NULL;
	char		err[256],
				name[64];
	int64_t		mem = -1;
	long		checks = 0;

	memset(&in, 0, sizeof(in));
	in.n = 3;
	err[0] = 0;
	VT_CHECK(ops->build(k, &in, -1, &e, err, sizeof(err)) != 0 && e == NULL && err[0],
			 "unsorted keys accepted");
	VT_CHECK(ops->build(k, &in, 0, &e, err, sizeof(err)) != 0 && e == NULL,
			 "the CPU twin accepted device 0");
	VT_CHECK(ops->usable(-1, name, sizeof(name), &mem, err, sizeof(err)) == 0,
			 "CPU twin not usable");
	VT_CHECK(ops->usable(0, name, sizeof(name), &mem, err, sizeof(err)) != 0,
			 "CPU twin usable on device 0");
	{
		uint64_t	sorted[3] = {1, 2, 3},
					copy[3] = {1, 2, 3};
		uint32_t	blocks[3] = {0, 0, 0};

		in.blocks = blocks;
		in.ncols = 1;
		in.coltype[0] = GBT_VAL_INT64;
		in.cols[0] = copy;
		in.keyed = 1;
		VT_CHECK(ops->build(sorted, &in, -1, &e, err, sizeof(err)) != 0 && e == NULL,
				 "a keyed column other than the keys accepted");
		in.cols[0] = sorted;
		VT_CHECK(ops->build(sorted, &in, -1, &e, err, sizeof(err)) == 0 && e != NULL,
				 "keyed column refused: %s", err);
		ops->free(e);
	}
	checks += 6;
	vt_group_end("engine: arguments", checks);
}

int
main(int argc, char **argv)
{
	uint64_t	seed = argc > 1 ? strtoull(argv[1], NULL, 0) :
		(uint64_t) time(NULL) ^ ((uint64_t) clock() << 20);

	vt_rng = seed;
	rng_s = seed ^ 0x5bd1e995;
	printf("engine CPU tests, seed %llu\n", (unsigned long long) seed);
	vt_group_end("engine: CPU twin vs oracles, n 0..20000, chunk sums to 1.3M",
				 te_suite(gbt_engine_cpu_ops(), -1, NULL));
	tb_split_inner = gbt_engine_cpu_ops();
	vt_group_end("engine: CPU twin split in 1-4 parts vs oracles and twin",
				 te_suite(gbt_engine_split_ops(), -1, gbt_engine_cpu_ops()));
	te_errors();
	printf("%d passed, %d failed\n", vt_passed, vt_failed);
	return vt_failed ? 1 : 0;
}

#endif							/* TE_NO_MAIN */
