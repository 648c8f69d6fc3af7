/*
 * engine.h's aggregate_batch on fresh random data, included by
 * test_engine.c (and so run on the CPU twin and, in test_engine_gpu.cu,
 * on the GPU engine): a few mirrors of sizes about and past a chunk and
 * past the GPU's host scan (so that the chunk sums, the host's scans and
 * the device's launch all answer), batches of random items over them
 * (empty ranges and none at all, ranges over chunk ends, every
 * visibility and unsure room, random column sets), each item checked
 * against the oracle with the columns it did not ask for all NULL.
 */

/* The pieces one after another, last first: none may lean on another. */
static void
te_par(void (*fn) (void *), void *args, size_t argsize, int n)
{
	int			i;

	for (i = n - 1; i >= 0; i--)
		fn((char *) args + (size_t) i * argsize);
}

#define TE_BATCH_MIRRORS 3
#define TE_BATCH_ITEMS 48

static const int64_t te_batch_sizes[] = {777, GBT_CHUNK_RANGE_MIN + 5, 100003, 300007};

static long
te_batch(const gbt_engine_ops *ops, int device, int it)
{
	vt_data		d[TE_BATCH_MIRRORS];
	gbt_engine *e[TE_BATCH_MIRRORS];
	uint64_t   *k[TE_BATCH_MIRRORS];
	uint8_t    *allnull[TE_BATCH_MIRRORS];
	vt_query	q[TE_BATCH_ITEMS];
	int			which[TE_BATCH_ITEMS];
	gbt_agg_item items[TE_BATCH_ITEMS];
	gbt_agg_result res[TE_BATCH_ITEMS];
	int			nm = 1 + (int) vt_below(TE_BATCH_MIRRORS);
	int			ni = 1 + (int) vt_below(TE_BATCH_ITEMS);
	int			nq;
	int			failed;
	long		checks = 0;
	char		err[256];
	int			j;
	int			i;

	for (j = 0; j < nm; j++)
	{
		int64_t		n = te_batch_sizes[vt_below(sizeof(te_batch_sizes) / sizeof(te_batch_sizes[0]))];
		int			c;

		vt_make(&d[j], n, (it + j) % (GBT_MAX_COLS + 1), 1 + vt_below(n / 8 + 2),
				vt_below(3) == 0 ? 0.0 : 0.1);
		for (c = 0; c < d[j].in.ncols; c++)
			if (d[j].in.coltype[c] == GBT_VAL_FLOAT8 && d[j].dist[c] == VT_F_SPECIAL)
				d[j].dist[c] = VT_F_PATHO;
		k[j] = (uint64_t *) malloc((n + 1) * 8);
		o_keys(k[j], n, 0);
		vt_vary_forms(&d[j], k[j]);
		allnull[j] = vt_bitmap(n, 1.0);
		e[j] = NULL;
		VT_CHECK(tb_build(ops, k[j], &d[j].in, device, &e[j], err, sizeof(err)) == 0,
				 "batch build: %s", err);
		/* chunk sums made for some mirrors, not for others */
		if (e[j] != NULL && vt_below(2))
			(void) ops->tidy(e[j], d[j].removed, 1, n);
		checks++;
	}

	for (i = 0; i < ni; i++)
	{
		vt_oracle	o;
		int			m = (int) vt_below(nm);
		vt_data    *dm = &d[m];
		gbt_agg_item *x = &items[i];
		int			vmode;

		which[i] = m;
		memset(&q[i], 0, sizeof(q[i]));
		vt_ranges(&q[i], dm->n, (int) vt_below(VT_R_NMODES), 1 + vt_below(8));
		vmode = vt_below(2) ? VT_V_ALL : (int) vt_below(VT_V_NMODES);
		vt_visible(&q[i], dm->nblocks, vmode);
		vt_oracle_run(dm, &q[i], &o);
		vt_set_cap(&q[i], (int) vt_below(6), o.nuns, dm->n);
		vt_oracle_free(&o);
		memset(x, 0, sizeof(*x));
		x->e = e[m];
		x->removed = dm->removed;
		x->removed_version = 1;
		x->start = q[i].start;
		x->end = q[i].end;
		x->nranges = q[i].R;
		x->visible = q[i].vis;
		x->nvisible = q[i].nvis;
		/* said only where true: every bit of vis[0..nvis) set (the short
		 * map's too, whose blocks past nvis are then not visible) */
		x->visible_all = (vmode == VT_V_ALL || vmode == VT_V_SHORT) && vt_below(2);
		x->cols = vt_below(2) ? (1u << GBT_MAX_COLS) - 1 : (unsigned) vt_below(1 << GBT_MAX_COLS);
		x->out = &res[i];
		x->unsure = q[i].unsure;
		x->unsure_cap = q[i].cap;
		x->rc = 7;
		memset(&res[i], 0x77, sizeof(res[i]));
	}
	nq = ni;
	for (j = 0; j < nm; j++)
		if (e[j] == NULL)
			ni = 0;

	failed = ops->aggregate_batch(items, ni, vt_below(2) ? te_par : NULL,
								  1 + (int) vt_below(6));
	VT_CHECK(failed == 0, "batch of %d items: %d failed (%s)", ni, failed,
			 ni > 0 ? items[0].err : "");
	checks++;

	for (i = 0; i < ni; i++)
	{
		vt_data		masked = d[which[i]];
		vt_oracle	o;
		int			c;

		/* the columns it did not ask for: every value NULL */
		for (c = 0; c < masked.in.ncols; c++)
			if (!((items[i].cols >> c) & 1))
				masked.nulls[c] = allnull[which[i]];
		VT_CHECK(items[i].rc == 0, "batch item %d: %s", i, items[i].err);
		vt_oracle_run(&masked, &q[i], &o);
		checks += 1 + vt_check(items[i].rc == 0 ? "batch item" : "failed batch item",
							   &masked, &q[i], &o, &res[i], q[i].unsure);
		vt_oracle_free(&o);
	}

	for (i = 0; i < nq; i++)
		vt_qfree(&q[i]);
	for (j = 0; j < nm; j++)
	{
		if (e[j] != NULL)
			ops->free(e[j]);
		vt_free(&d[j]);
		free(k[j]);
		free(allnull[j]);
	}
	return checks;
}
