/*
 * mirror.c
 *	  The service's mirrors, over the search engine.
 *
 * A mirror is one engine (cuda/engine.h) over the index's keys: a Harmonia
 * tree on the CUDA device the mirror was built for, searched in batches
 * there, or on the CPU twin (device -1).  The entries (keys, TIDs, column
 * values) also stay in the service's memory in (key, TID) order: TIDs are
 * gathered on the host from the positions the search returns, and the
 * engine borrows the TIDs (their blocks), column values and NULL bits for
 * aggregates.
 * The delta here is the only one: the engine holds just the tree it was
 * built with, and entries inserted or removed since then (with their TIDs,
 * columns and log positions, which the service needs) are kept and searched
 * here until a merge builds a new mirror.  If an engine call fails, the
 * request fails and the backend's scan is answered by nbtree.  Which
 * entries a snapshot sees is stamps.c's part.
 */
#include "postgres.h"

#include "access/transam.h"
#include "port/pg_bitutils.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "agg_state.h"
#include "engine.h"
#include "mirror_int.h"
#include "runsums.h"
#include "snapview.h"
#include "threads.h"

static void run_alloc(GbtRun *run, int ncols, int64 cap);
static void run_free(GbtRun *run);
static int64 read_ordered(const GbtMirror *m, const GbtDumpCursor *after, int64 max,
						  GbtEntries *out, GbtSnapView *view, uint8 *verdicts,
						  TransactionId *xmins, TransactionId *xmaxs);

/* Batches of at most this many ranges are searched on the host. */
#define GBT_HOST_SEARCH_MAX 8

/* First position in keys[0..n) whose key is >= key (or > key if after). */
static int64
key_bound(const uint64 *keys, int64 n, uint64 key, bool after)
{
	int64		lo = 0;
	int64		hi = n;

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;

		if (keys[mid] < key || (after && keys[mid] == key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Base position i's NULL bits per column, from its entry's NULL mask. */
static void
set_null_bits(GbtMirror *m, int64 i, uint8 nulls)
{
	int			c;

	for (c = 0; c < m->columns.ncols; c++)
	{
		if (nulls & (1 << c) || m->columns.type[c] == GBT_COL_NONE)
			m->colnulls[c][i >> 3] |= 1 << (i & 7);
		else
			m->colnulls[c][i >> 3] &= ~(1 << (i & 7));
	}
}

/*
 * Whether column c is the key and an integer, whose values the keys give
 * exactly (a float key's keys fold -0 into 0, so its column is held).
 */
static bool
key_column(const GbtMirror *m, int c)
{
	return c == 0 && m->columns.type[c] == GBT_COL_INT64;
}

/* Whether any of bits [0, n) is set. */
static bool
has_null(const uint8 *bits, int64 n)
{
	int64		i;

	for (i = 0; i < n / 8; i++)
		if (bits[i] != 0)
			return true;
	return n % 8 != 0 && (bits[n / 8] & ((1 << (n % 8)) - 1)) != 0;
}

/* The engine's view of base entries [0, n): blocks, columns, NULL bits. */
static void
agg_input(gbt_agg_input *in, const GbtMirror *m, int64 n)
{
	int			c;

	memset(in, 0, sizeof(*in));
	in->n = n;
	/* ItemPointerData is the layout gbt_agg_block() reads. */
	StaticAssertStmt(sizeof(ItemPointerData) == 3 * sizeof(uint16) &&
					 offsetof(ItemPointerData, ip_blkid) == 0,
					 "ItemPointerData is not 3 uint16s");
	in->tids = (const uint16 *) m->base.tids;
	in->ncols = m->columns.ncols;
	for (c = 0; c < m->columns.ncols; c++)
	{
		in->coltype[c] = m->columns.type[c] == GBT_COL_FLOAT8 ? GBT_VAL_FLOAT8 : GBT_VAL_INT64;
		in->cols[c] = m->base.vals[c];
		in->nulls[c] = m->colnulls[c];
		if (m->base.narrow[c] != NULL)
		{
			in->cols[c] = m->base.narrow[c];
			in->narrow |= 1u << c;
			in->base[c] = m->base.narrow_base[c];
		}
		if (key_column(m, c))
		{
			in->cols[c] = m->base.keys;
			in->keyed |= 1u << c;
		}
	}
}

/*
 * Column c in 4 bytes a value when its values (NULLs aside) allow: integers
 * within 2^32 of the smallest, floats that a float holds exactly.
 */
static void
narrow_column(GbtMirror *m, int c)
{
	GbtEntries *e = &m->base;
	bool		isfloat = m->columns.type[c] == GBT_COL_FLOAT8;
	int64		lo = PG_INT64_MAX;
	int64		hi = PG_INT64_MIN;
	int64		i;

	for (i = 0; i < e->n; i++)
	{
		int64		v = e->vals[c][i];

		if (gbt_entry_nulls(e, i) & (1 << c))
			continue;
		if (isfloat)
		{
			/* bit for bit: a NaN's payload too (min/max return its bits) */
			if (gbt_float8_val((float) gbt_val_float8(v)) != v)
				return;
		}
		else
		{
			lo = Min(lo, v);
			hi = Max(hi, v);
		}
	}
	if (!isfloat && lo <= hi && (uint64) hi - (uint64) lo > PG_UINT32_MAX)
		return;
	e->narrow_base[c] = isfloat || lo > hi ? 0 : lo;
	e->narrow[c] = MemoryContextAllocExtended(TopMemoryContext,
											  sizeof(uint32) * Max(e->n, 1),
											  MCXT_ALLOC_HUGE);
	for (i = 0; i < e->n; i++)
	{
		int64		v = e->vals[c][i];

		if (gbt_entry_nulls(e, i) & (1 << c))
			e->narrow[c][i] = 0;
		else if (isfloat)
		{
			float		f = (float) gbt_val_float8(v);

			memcpy(&e->narrow[c][i], &f, sizeof(f));
		}
		else
			e->narrow[c][i] = (uint32) ((uint64) v - (uint64) e->narrow_base[c]);
	}
	if (isfloat)
		e->narrow_float |= 1 << c;
	pfree(e->vals[c]);
	e->vals[c] = NULL;
}

/*
 * Hold only the columns that say something: none for an integer key or a
 * type not held (gbt_entry_val() gives their values), NULL bits only for a
 * column with a NULL, and the entries' NULL masks only when one is set;
 * the others in 4 bytes a value where the values allow.
 */
static void
drop_unheld_columns(GbtMirror *m)
{
	int			c;
	int64		i;

	for (i = 0; i < m->base.n && m->base.nulls[i] == 0; i++)
		;
	if (i == m->base.n && m->base.nulls != NULL)
	{
		pfree(m->base.nulls);
		m->base.nulls = NULL;
	}

	for (c = 0; c < m->columns.ncols; c++)
	{
		bool		all_null = m->columns.type[c] == GBT_COL_NONE;

		if ((all_null || key_column(m, c)) && m->base.vals[c] != NULL)
		{
			pfree(m->base.vals[c]);
			m->base.vals[c] = NULL;
		}
		if (all_null || !has_null(m->colnulls[c], m->base.n))
		{
			pfree(m->colnulls[c]);
			m->colnulls[c] = NULL;
		}
		if (m->base.vals[c] != NULL)
			narrow_column(m, c);
	}
}

/*
 * Build from entries in (key, TID) order with their stamps (xmin/xmax NULL:
 * from the entries' GBT_ENTRY_XMIN_UNKNOWN flag, no xmax).  With take, the
 * mirror takes the entries' arrays (in TopMemoryContext) instead of a copy,
 * and entries is left empty.
 */
static GbtMirror *
mirror_build(const GbtColumns *columns, GbtEntries *entries, bool take,
			 const TransactionId *xmin, const TransactionId *xmax,
			 bool captured, bool vm_mode, int device, char *err, Size errlen)
{
	const gbt_engine_ops *ops = device < 0 ? gbt_engine_cpu_ops() : gbt_engine_gpu_ops();
	MemoryContext old;
	GbtMirror  *m;
	int64		n = entries->n;
	int64		i;
	int64		nstamped = 0;
	int64	   *spos;
	TransactionId *sxmin;
	TransactionId *sxmax;
	uint32		maxblock = 0;
	gbt_agg_input in;

	if (ops == NULL)
	{
		strlcpy(err, "built without CUDA", errlen);
		return NULL;
	}
	old = MemoryContextSwitchTo(TopMemoryContext);
	m = palloc0(sizeof(GbtMirror));

	m->columns = *columns;
	m->captured = captured;
	if (take)
		m->base = *entries;
	else
	{
		gbt_entries_init(&m->base, columns->ncols, n);
		for (i = 0; i < n; i++)
			gbt_copy_entry(&m->base, i, entries, i);
		m->base.n = n;
	}
	for (i = 0; i < n; i++)
		maxblock = Max(maxblock, ItemPointerGetBlockNumberNoCheck(&entries->tids[i]));
	m->nallvis = (int64) maxblock + 1;
	m->allvis = palloc_extended(m->nallvis / 8 + 1, MCXT_ALLOC_HUGE);
	memset(m->allvis, 0xff, m->nallvis / 8 + 1);
	for (i = 0; i < columns->ncols; i++)
		m->colnulls[i] = palloc_extended(n / 8 + 1, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	for (i = 0; i < n; i++)
		set_null_bits(m, i, entries->nulls[i]);
	MemoryContextSwitchTo(old);
	for (i = 0; i < GBT_RUNS; i++)
		run_alloc(&m->runs[i], columns->ncols, 16);

	/*
	 * The stamped entries.  With many inserters unknown (an export from a
	 * table not vacuumed since it was loaded), the mirror decides by the
	 * visibility map instead of listing them all, until a VACUUM vouches
	 * for their blocks (gbt_mirror_vouch()).  A rebuild keeps its source's
	 * mode: entries whose inserters a mirror deciding by the map took as
	 * frozen are frozen in the copy too, and the map must go on deciding.
	 */
	for (i = 0; i < n; i++)
		if (xmin != NULL ? xmin[i] == GBT_XMIN_UNKNOWN :
			(entries->nulls[i] & GBT_ENTRY_XMIN_UNKNOWN) != 0)
			nstamped++;
	m->vm_mode = vm_mode || !captured || nstamped > n / 64;
	nstamped = 0;
	spos = palloc_extended(sizeof(int64) * Max(n, 1), MCXT_ALLOC_HUGE);
	sxmin = palloc_extended(sizeof(TransactionId) * Max(n, 1), MCXT_ALLOC_HUGE);
	sxmax = palloc_extended(sizeof(TransactionId) * Max(n, 1), MCXT_ALLOC_HUGE);
	for (i = 0; i < n; i++)
	{
		TransactionId mn = xmin != NULL ? xmin[i] :
			(entries->nulls[i] & GBT_ENTRY_XMIN_UNKNOWN) ? GBT_XMIN_UNKNOWN : GBT_XMIN_FROZEN;
		TransactionId mx = xmax != NULL ? xmax[i] : InvalidTransactionId;

		if (m->vm_mode && mn == GBT_XMIN_UNKNOWN)
			mn = GBT_XMIN_FROZEN;
		if (mn == GBT_XMIN_FROZEN && !TransactionIdIsValid(mx))
			continue;
		spos[nstamped] = i;
		sxmin[nstamped] = mn;
		sxmax[nstamped++] = mx;
	}
	gbt_stamps_add(m, nstamped, spos, sxmin, sxmax);
	pfree(spos);
	pfree(sxmin);
	pfree(sxmax);
	for (i = 0; i < n; i++)
		m->base.nulls[i] &= ~GBT_ENTRY_XMIN_UNKNOWN;
	if (take)
		memset(entries, 0, sizeof(GbtEntries));
	drop_unheld_columns(m);

	m->ops = ops;
	agg_input(&in, m, n);
	if (ops->build(m->base.keys, &in, device, &m->engine, err, errlen) != 0)
	{
		gbt_mirror_free(m);
		return NULL;
	}
	return m;
}

GbtMirror *
gbt_mirror_build(const GbtColumns *columns, const GbtEntries *entries,
				 bool captured, int device, char *err, Size errlen)
{
	return mirror_build(columns, (GbtEntries *) entries, false, NULL, NULL, captured, false, device,
						err, errlen);
}

void
gbt_mirror_free(GbtMirror *m)
{
	int			c;

	if (m == NULL)
		return;
	if (m->engine != NULL)
		m->ops->free(m->engine);
	gbt_entries_free(&m->base);
	for (c = 0; c < GBT_RUNS; c++)
		run_free(&m->runs[c]);
	if (m->merge_run != 0)
		run_free(&m->merge_into);
	pfree(m->allvis);
	for (c = 0; c < m->columns.ncols; c++)
		if (m->colnulls[c])
			pfree(m->colnulls[c]);
	if (m->removed)
		pfree(m->removed);
	if (m->hidden)
		pfree(m->hidden);
	gbt_stamps_free(&m->stamped);
	gbt_stamps_free(&m->recent);
	if (m->filter)
		pfree(m->filter);
	pfree(m);
}

const GbtColumns *
gbt_mirror_columns(const GbtMirror *m)
{
	return &m->columns;
}

int64
gbt_mirror_entries(const GbtMirror *m)
{
	return m->base.n - m->nremoved + gbt_delta_n(m);
}

int64
gbt_mirror_delta(const GbtMirror *m)
{
	return m->nremoved + gbt_delta_n(m);
}

/* gbt_mirror_bytes(), part by part. */
void
gbt_mirror_bytes_parts(const GbtMirror *m, GbtMirrorBytes *b)
{
	int64		per_entry = sizeof(uint64) + sizeof(ItemPointerData) + 1 +
		m->columns.ncols * sizeof(int64);
	int			c;

	b->base = m->base.n * (sizeof(uint64) + sizeof(ItemPointerData) +
						   (m->base.nulls != NULL ? 1 : 0)) + m->nallvis / 8;
	for (c = 0; c < m->columns.ncols; c++)
	{
		if (m->base.vals[c] != NULL)
			b->base += m->base.n * sizeof(int64);
		if (m->base.narrow[c] != NULL)
			b->base += m->base.n * sizeof(uint32);
		if (m->colnulls[c] != NULL)
			b->base += m->base.n / 8 + 1;
	}
	if (m->removed != NULL)
		b->base += m->base.n / 8 + 1;
	if (m->hidden != NULL)
		b->base += m->base.n / 8 + 1;
	b->stamps = (m->stamped.cap + m->recent.cap) * (sizeof(int64) + 2 * sizeof(TransactionId));
	b->delta = gbt_delta_n(m) * (per_entry + sizeof(uint64) + 2 * sizeof(TransactionId));
	if (m->merge_run != 0)
		b->delta += m->merge_into.e.cap * (per_entry + sizeof(uint64));
	if (m->filter != NULL)
		b->delta += (m->filter_mask + 1) / 8;
	b->engine = m->ops->bytes(m->engine);
	b->engine_host = m->ops->host_bytes(m->engine);
}

/* Entries and the delta here, plus the engine's (host or device). */
int64
gbt_mirror_bytes(const GbtMirror *m)
{
	GbtMirrorBytes b;

	gbt_mirror_bytes_parts(m, &b);
	return b.base + b.stamps + b.delta + b.engine + b.engine_host;
}

/* Of gbt_mirror_bytes(), what lies on the device. */
int64
gbt_mirror_device_bytes(const GbtMirror *m)
{
	return gbt_mirror_on_gpu(m) ? (int64) m->ops->bytes(m->engine) : 0;
}

/* Memory the engine keeps for batches, apart from the mirror's own. */
int64
gbt_mirror_scratch_bytes(const GbtMirror *m)
{
	return (int64) m->ops->scratch_bytes(m->engine);
}

/* Give back what gbt_mirror_scratch_bytes() counts. */
void
gbt_mirror_trim_scratch(GbtMirror *m)
{
	if (m->engine != NULL)
		m->ops->trim(m->engine);
}

bool
gbt_mirror_on_gpu(const GbtMirror *m)
{
	return gbt_mirror_device(m) >= 0;
}

/* A run with room for cap entries. */
static void
run_alloc(GbtRun *run, int ncols, int64 cap)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

	gbt_entries_init(&run->e, ncols, cap);
	run->pos = palloc_extended(sizeof(uint64) * Max(cap, 1), MCXT_ALLOC_HUGE);
	run->xmin = palloc_extended(sizeof(TransactionId) * Max(cap, 1), MCXT_ALLOC_HUGE);
	run->xmax = palloc_extended(sizeof(TransactionId) * Max(cap, 1), MCXT_ALLOC_HUGE);
	run->sums = NULL;
	MemoryContextSwitchTo(old);
}

static void
run_free(GbtRun *run)
{
	gbt_entries_free(&run->e);
	pfree(run->pos);
	pfree(run->xmin);
	pfree(run->xmax);
	gbt_run_sums_free(run);
}

/* Copy entry i of run src, with its log position and stamps, to o of dst. */
static inline void
run_copy(GbtRun *dst, int64 o, const GbtRun *src, int64 i)
{
	dst->pos[o] = src->pos[i];
	dst->xmin[o] = src->xmin[i];
	dst->xmax[o] = src->xmax[i];
	gbt_copy_entry(&dst->e, o, &src->e, i);
}

/*
 * Merge b's entries and e's entries fresh[0..nfresh) (sorted, new, inserted
 * by xmin[] at pos[]) into a new run, which replaces *into.  b may be NULL.
 */
static void
run_merge(GbtMirror *m, GbtRun *into, const GbtRun *b, const GbtEntries *e,
		  const int64 *fresh, int64 nfresh, const uint64 *pos, const TransactionId *xmin)
{
	GbtRun		merged;
	const GbtRun *a = into;
	int64		ia = 0,
				ib = 0,
				ie = 0,
				o;
	int64		nb = b ? b->e.n : 0;

	run_alloc(&merged, m->columns.ncols, a->e.n + nb + nfresh);
	for (o = 0; ia < a->e.n || ib < nb || ie < nfresh; o++)
	{
		const GbtRun *src = NULL;
		int64		i = 0;

		/* The smallest of the three heads. */
		if (ia < a->e.n)
			src = a, i = ia;
		if (ib < nb && (src == NULL ||
						gbt_entry_cmp(b->e.keys[ib], &b->e.tids[ib],
									  src->e.keys[i], &src->e.tids[i]) < 0))
			src = b, i = ib;
		if (ie < nfresh && (src == NULL ||
							gbt_entry_cmp(e->keys[fresh[ie]], &e->tids[fresh[ie]],
										  src->e.keys[i], &src->e.tids[i]) < 0))
		{
			merged.pos[o] = pos ? pos[fresh[ie]] : 0;
			merged.xmin[o] = xmin ? xmin[fresh[ie]] : GBT_XMIN_UNKNOWN;
			merged.xmax[o] = InvalidTransactionId;
			gbt_copy_entry(&merged.e, o, e, fresh[ie++]);
			merged.e.nulls[o] &= ~GBT_ENTRY_XMIN_UNKNOWN;
			continue;
		}
		run_copy(&merged, o, src, i);
		if (src == a)
			ia++;
		else
			ib++;
	}
	merged.e.n = o;
	run_free(into);
	*into = merged;
}

/* The size past which run r (r > 0) is merged into run r - 1. */
static int64
run_limit(const GbtMirror *m, int r)
{
	return Max((int64) GBT_RUN_MIN << (3 * (GBT_RUNS - 1 - r)), m->runs[r - 1].e.n / 8);
}

/*
 * Merge each run that outgrew its limit into the next larger one: at once
 * when small, else by starting a stepped merge (one at a time).  Runs a
 * stepped merge reads wait for its end.
 */
static void
run_cascade(GbtMirror *m)
{
	int			r;

	for (r = GBT_RUNS - 1; r > 0; r--)
	{
		if (gbt_run_merging(m, r) || gbt_run_merging(m, r - 1) ||
			m->runs[r].e.n <= run_limit(m, r))
			continue;
		if (m->runs[r].e.n + m->runs[r - 1].e.n <= GBT_MERGE_STEP ||
			r == GBT_RUNS - 1)
		{
			run_merge(m, &m->runs[r - 1], &m->runs[r], NULL, NULL, 0, NULL, NULL);
			m->runs[r].e.n = 0;
			gbt_run_sums_free(&m->runs[r]);
		}
		else if (m->merge_run == 0)
		{
			m->merge_run = r;
			run_alloc(&m->merge_into, m->columns.ncols,
					  m->runs[r].e.n + m->runs[r - 1].e.n);
			m->merge_a = 0;
			m->merge_b = 0;
		}
	}
}

/*
 * Chunks of the engine's sums made again per call of its tidy(), and the
 * time a round of the service spends on them: a request that comes
 * meanwhile waits for the round, so the round stays short however many
 * chunks a build or a VACUUM left to make.
 */
#ifndef GBT_TIDY_CHUNKS
#define GBT_TIDY_CHUNKS 32
#endif
#define GBT_TIDY_MS 0.25

/*
 * The entries the tree hides changed: the engine's sums of the chunks
 * they are in are made again here, between requests, so that aggregates
 * find them up to date.  Returns whether chunks are left.
 */
bool
gbt_mirror_tidy_step(GbtMirror *m)
{
	instr_time	start,
				now;
	bool		more;

	if (m->engine == NULL)
		return false;
	INSTR_TIME_SET_CURRENT(start);
	do
	{
		more = m->ops->tidy(m->engine, m->hidden, m->hidden_version, GBT_TIDY_CHUNKS) != 0;
		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
	} while (more && INSTR_TIME_GET_MILLISEC(now) < GBT_TIDY_MS);
	return more;
}

/*
 * The next step of the stepped merge under way, if any: at most
 * GBT_MERGE_STEP entries.  The merged run replaces the two at the end.
 * Returns whether a step is left.
 */
bool
gbt_mirror_merge_step(GbtMirror *m)
{
	GbtRun	   *a;
	GbtRun	   *b;
	GbtRun	   *into = &m->merge_into;
	int64		stop;

	if (m->merge_run == 0)
		return false;
	a = &m->runs[m->merge_run - 1];
	b = &m->runs[m->merge_run];
	stop = into->e.n + GBT_MERGE_STEP;
	while ((m->merge_a < a->e.n || m->merge_b < b->e.n) && into->e.n < stop)
	{
		if (m->merge_b >= b->e.n ||
			(m->merge_a < a->e.n &&
			 gbt_entry_cmp(a->e.keys[m->merge_a], &a->e.tids[m->merge_a],
						   b->e.keys[m->merge_b], &b->e.tids[m->merge_b]) < 0))
			run_copy(into, into->e.n++, a, m->merge_a++);
		else
			run_copy(into, into->e.n++, b, m->merge_b++);
	}
	if (m->merge_a < a->e.n || m->merge_b < b->e.n)
		return true;
	run_free(a);
	*a = *into;
	run_free(b);
	run_alloc(b, m->columns.ncols, 16);
	m->merge_run = 0;
	memset(into, 0, sizeof(*into));
	run_cascade(m);
	return m->merge_run != 0;
}

/* A stepped merge's end, at once. */
static void
merge_finish(GbtMirror *m)
{
	while (gbt_mirror_merge_step(m))
		;
}

static inline void
filter_set(uint64 *filter, uint64 mask, uint64 key, const ItemPointerData *tid)
{
	uint64		h = gbt_filter_hash(key, tid);
	uint64		a = h & mask;
	uint64		b = (h >> 32 | h << 32) * UINT64CONST(0x94D049BB133111EB) & mask;

	filter[a >> 6] |= UINT64CONST(1) << (a & 63);
	filter[b >> 6] |= UINT64CONST(1) << (b & 63);
}

/*
 * Add entries fresh[] of e, about to enter the delta, to the filter: at
 * least 16 bits an entry (two bits set: about 1.4 % false positives).  It
 * is sized for the largest delta before the tree is rebuilt (an eighth of
 * the tree), and made anew from the runs only if the delta outgrows that.
 */
static void
filter_add(GbtMirror *m, const GbtEntries *e, const int64 *fresh, int64 nfresh)
{
	int64		i;
	int			r;

	if (m->filter == NULL || (m->filter_n + nfresh) * 16 > (int64) m->filter_mask + 1)
	{
		int64		want = 16 * Max(Max(m->base.n / 8, 2 * (gbt_delta_n(m) + nfresh)), 65536);
		uint64		bits = 64;

		while (bits < (uint64) want)
			bits *= 2;
		if (m->filter != NULL)
			pfree(m->filter);
		m->filter = MemoryContextAllocExtended(TopMemoryContext, bits / 8,
											   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		m->filter_mask = bits - 1;
		m->filter_n = gbt_delta_n(m);
		for (r = 0; r < GBT_RUNS; r++)
			for (i = 0; i < m->runs[r].e.n; i++)
				filter_set(m->filter, m->filter_mask, m->runs[r].e.keys[i],
						   &m->runs[r].e.tids[i]);
	}
	for (i = 0; i < nfresh; i++)
		filter_set(m->filter, m->filter_mask, e->keys[fresh[i]], &e->tids[fresh[i]]);
	m->filter_n += nfresh;
}

/*
 * Add entries (any order), inserted by xmin[] and logged at pos[] (pos NULL:
 * 0).  An entry whose TID the mirror already holds under the same key is
 * not added again: exports and the change log overlap.
 */
static int64
mirror_insert(GbtMirror *m, const GbtEntries *e, const uint64 *pos,
			  const TransactionId *xmin)
{
	int64	   *order = gbt_entries_order(e, 0, e->n, true);
	int64	   *fresh = palloc_extended(sizeof(int64) * Max(e->n, 1), MCXT_ALLOC_HUGE);
	int64	   *at = palloc_extended(sizeof(int64) * Max(e->n, 1), MCXT_ALLOC_HUGE);
	int64		from[GBT_RUNS] = {0};
	int64		nfresh = 0;
	int64		i;
	int			r;
	bool		held;

	gbt_mirror_find_entries(m, e->keys, e->tids, e->n, at);

	/* Keep only what neither the tree nor the delta holds. */
	for (i = 0; i < e->n; i++)
	{
		int64		k = order[i];

		if (i > 0 && gbt_entry_cmp(e->keys[order[i - 1]], &e->tids[order[i - 1]],
								   e->keys[k], &e->tids[k]) == 0)
			continue;
		/*
		 * A removed tree entry whose TID is back under the same key goes to
		 * the delta like any new entry, with its log position.
		 */
		if (at[k] >= 0 && !IS_REMOVED(m, at[k]))
			continue;
		held = false;
		if (gbt_delta_may_hold(m, e->keys[k], &e->tids[k]))
			for (r = 0; r < GBT_RUNS && !held; r++)
				held = gbt_run_find_from(&m->runs[r].e, e->keys[k], &e->tids[k],
										 &from[r]) >= 0;
		if (!held)
			fresh[nfresh++] = k;
	}

	if (nfresh > 0)
	{
		filter_add(m, e, fresh, nfresh);
		/* Into the smallest run; each that outgrows its share, one up. */
		run_merge(m, &m->runs[GBT_RUNS - 1], NULL, e, fresh, nfresh, pos, xmin);
		run_cascade(m);
	}
	pfree(order);
	pfree(fresh);
	pfree(at);
	return nfresh;
}

void
gbt_mirror_apply(GbtMirror *m, const GbtLogEntry *le, const uint64 *pos, int64 n)
{
	GbtEntries	e;
	uint64	   *epos = palloc_extended(sizeof(uint64) * Max(n, 1), MCXT_ALLOC_HUGE);
	TransactionId *exmin = palloc_extended(sizeof(TransactionId) * Max(n, 1), MCXT_ALLOC_HUGE);
	GbtLogEntry *del = palloc_extended(sizeof(GbtLogEntry) * Max(n, 1), MCXT_ALLOC_HUGE);
	int64		ndel = 0;
	int64		i;
	int			c;

	/* Inserts first: an entry deleted in the batch was inserted before. */
	gbt_entries_init(&e, m->columns.ncols, Max(n, 1));
	for (i = 0; i < n; i++)
	{
		if (le[i].kind == GBT_LOG_DELETE)
		{
			del[ndel++] = le[i];
			continue;
		}
		e.keys[e.n] = le[i].ikey;
		e.tids[e.n] = le[i].tid;
		for (c = 0; c < e.ncols; c++)
			e.vals[c][e.n] = le[i].vals[c];
		e.nulls[e.n] = le[i].nulls;
		epos[e.n] = pos[i];
		exmin[e.n++] = le[i].xid;
	}
	if (e.n > 0)
		mirror_insert(m, &e, epos, exmin);
	if (ndel > 0)
		gbt_stamps_delete(m, del, ndel);
	gbt_entries_free(&e);
	pfree(epos);
	pfree(exmin);
	pfree(del);
}

/* Drop the run's entries for which keep[] is false. */
static void
run_compact(GbtRun *run, const bool *keep)
{
	int64		i,
				o;

	for (i = 0, o = 0; i < run->e.n; i++)
	{
		if (!keep[i])
			continue;
		run->pos[o] = run->pos[i];
		run->xmin[o] = run->xmin[i];
		run->xmax[o] = run->xmax[i];
		gbt_copy_entry(&run->e, o++, &run->e, i);
	}
	run->e.n = o;
	gbt_run_sums_free(run);
}

/*
 * VACUUM's dead TIDs (sorted), indexed by heap block: first[b] is where
 * block b's TIDs start, so that a lookup scans one block's few offsets
 * instead of searching the whole list once per mirror entry.
 */
typedef struct DeadTids
{
	const ItemPointerData *tids;
	BlockNumber nblocks;		/* blocks up to the last dead TID's, + 1 */
	int64	   *first;			/* [nblocks + 1] */
} DeadTids;

static void
dead_tids_init(DeadTids *d, const ItemPointerData *sorted, int64 n)
{
	BlockNumber b;
	int64		i = 0;

	d->tids = sorted;
	d->nblocks = ItemPointerGetBlockNumber(&sorted[n - 1]) + 1;
	d->first = palloc_extended(sizeof(int64) * (d->nblocks + 1), MCXT_ALLOC_HUGE);
	for (b = 0; b <= d->nblocks; b++)
	{
		while (i < n && ItemPointerGetBlockNumber(&sorted[i]) < b)
			i++;
		d->first[b] = i;
	}
}

static bool
dead_tids_has(const DeadTids *d, const ItemPointerData *tid)
{
	BlockNumber b = ItemPointerGetBlockNumber(tid);
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	int64		i;

	if (b >= d->nblocks)
		return false;
	for (i = d->first[b]; i < d->first[b + 1]; i++)
		if (ItemPointerGetOffsetNumber(&d->tids[i]) == off)
			return true;
	return false;
}

int64
gbt_mirror_remove(GbtMirror *m, const ItemPointerData *dead, int64 ndead)
{
	int64		removed = 0;
	int64		i;
	int			r;
	DeadTids	d;

	if (ndead == 0)
		return 0;
	merge_finish(m);
	dead_tids_init(&d, dead, ndead);
	for (i = 0; i < m->base.n; i++)
	{
		if (IS_REMOVED(m, i) || !dead_tids_has(&d, &m->base.tids[i]))
			continue;
		gbt_mirror_remove_entry(m, i);
		removed++;
	}
	if (removed > 0)
		gbt_stamps_drop(m);
	for (r = 0; r < GBT_RUNS; r++)
	{
		GbtRun	   *run = &m->runs[r];
		bool	   *keep = palloc_extended(sizeof(bool) * Max(run->e.n, 1), MCXT_ALLOC_HUGE);

		for (i = 0; i < run->e.n; i++)
		{
			keep[i] = !dead_tids_has(&d, &run->e.tids[i]);
			removed += !keep[i];
		}
		run_compact(run, keep);
		pfree(keep);
	}
	pfree(d.first);
	return removed;
}

bool
gbt_mirror_wants_merge(const GbtMirror *m)
{
	return gbt_delta_n(m) > Max(GBT_REBUILD_MIN, m->base.n / GBT_REBUILD_SHARE) ||
		m->nremoved > Max(GBT_REBUILD_MIN, m->base.n / (GBT_REBUILD_SHARE / 2));
}

/* The device the mirror's tree is on: a CUDA device, or -1 (the CPU twin). */
int
gbt_mirror_device(const GbtMirror *m)
{
	return m->ops->device(m->engine);
}

/*
 * A new tree holding the mirror's live entries, made in steps while the
 * mirror serves queries and takes changes: each step copies the next
 * entries in (key, TID) order after the last one copied, with their
 * stamps.  What changed behind the copy meanwhile the caller keeps from
 * the change log and applies to the new mirror at the end
 * (gbt_mirror_apply() passes over entries it holds and deletions it has
 * stamped already).
 */
struct GbtRebuild
{
	GbtEntries	all;
	TransactionId *xmin;
	TransactionId *xmax;
	bool		started;
	GbtDumpCursor last;
};

GbtRebuild *
gbt_rebuild_begin(const GbtMirror *m)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	GbtRebuild *rb = palloc0(sizeof(GbtRebuild));
	int64		cap = gbt_mirror_entries(m) + gbt_mirror_entries(m) / 16 + 1024;

	gbt_entries_init(&rb->all, m->columns.ncols, cap);
	rb->xmin = palloc_extended(sizeof(TransactionId) * rb->all.cap, MCXT_ALLOC_HUGE);
	rb->xmax = palloc_extended(sizeof(TransactionId) * rb->all.cap, MCXT_ALLOC_HUGE);
	MemoryContextSwitchTo(old);
	return rb;
}

/* Copy the next step entries; true: all copied. */
bool
gbt_rebuild_step(GbtRebuild *rb, const GbtMirror *m, int64 step)
{
	int64		n;

	if (rb->all.cap - rb->all.n < step)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
		int64		cap = rb->all.cap + Max(step, rb->all.cap / 8);

		gbt_entries_grow(&rb->all, cap);
		rb->xmin = repalloc_huge(rb->xmin, sizeof(TransactionId) * cap);
		rb->xmax = repalloc_huge(rb->xmax, sizeof(TransactionId) * cap);
		MemoryContextSwitchTo(old);
	}
	n = read_ordered(m, rb->started ? &rb->last : NULL, step, &rb->all,
					 NULL, NULL, rb->xmin, rb->xmax);
	if (n > 0)
	{
		rb->started = true;
		rb->last.key = rb->all.keys[rb->all.n - 1];
		rb->last.tid = rb->all.tids[rb->all.n - 1];
	}
	return n < step;
}

/* The new mirror, on m's device; NULL on failure.  Frees rb. */
GbtMirror *
gbt_rebuild_finish(GbtRebuild *rb, const GbtMirror *m, char *err, Size errlen)
{
	GbtMirror  *merged = mirror_build(&m->columns, &rb->all, true, rb->xmin, rb->xmax,
									  m->captured, m->vm_mode, gbt_mirror_device(m),
									  err, errlen);

	gbt_rebuild_free(rb);
	return merged;
}

int64
gbt_rebuild_copied(const GbtRebuild *rb)
{
	return rb->all.n;
}

void
gbt_rebuild_free(GbtRebuild *rb)
{
	gbt_entries_free(&rb->all);
	pfree(rb->xmin);
	pfree(rb->xmax);
	pfree(rb);
}

bool
gbt_mirror_sort_unique(GbtMirror *m, uint64 *keys, int64 n, uint32 *map, int64 *nout,
					   char *err, Size errlen)
{
	StaticAssertStmt(sizeof(int64) == sizeof(int64_t), "int64 size");
	return m->ops->sort_unique(m->engine, (uint64_t *) keys, n, map, (int64_t *) nout,
							   err, errlen) == 0;
}

bool
gbt_mirror_ranges(GbtMirror *m, const uint64 *lo, const uint64 *hi,
				  int64 nranges, int64 *start, int64 *end,
				  char *err, Size errlen)
{
	StaticAssertStmt(sizeof(int64) == sizeof(int64_t), "int64 size");

	/*
	 * A few ranges: two binary searches each in the host's copy of the
	 * tree's keys cost microseconds, a batch to the device and back a
	 * tenth of a millisecond.
	 */
	if (nranges <= GBT_HOST_SEARCH_MAX)
	{
		int64		i;

		for (i = 0; i < nranges; i++)
		{
			start[i] = key_bound(m->base.keys, m->base.n, lo[i], false);
			end[i] = lo[i] > hi[i] ? start[i] :
				key_bound(m->base.keys, m->base.n, hi[i], true);
		}
		return true;
	}
	return m->ops->ranges(m->engine, lo, hi, nranges, (int64_t *) start,
						  (int64_t *) end, err, errlen) == 0;
}

int64
gbt_mirror_range_count(const GbtMirror *m, uint64 lo, uint64 hi,
					   int64 start, int64 end)
{
	int			r;
	int64		count = Max(end - start, 0);
	int64		i;

	if (m->nremoved > 0)
		for (i = start; i < end; i++)
			count -= IS_REMOVED(m, i);
	for (r = 0; r < GBT_RUNS && lo <= hi; r++)
		count += key_bound(m->runs[r].e.keys, m->runs[r].e.n, hi, true) -
			key_bound(m->runs[r].e.keys, m->runs[r].e.n, lo, false);
	return count;
}

int64
gbt_mirror_range_tids(const GbtMirror *m, uint64 lo, uint64 hi,
					  int64 start, int64 end, ItemPointerData *out)
{
	int			r;
	int64		o = 0;
	int64		i;

	if (m->nremoved == 0)
	{
		if (end > start)
			memcpy(out, m->base.tids + start, sizeof(ItemPointerData) * (end - start));
		o = Max(end - start, 0);
	}
	else
		for (i = start; i < end; i++)
			if (!IS_REMOVED(m, i))
				out[o++] = m->base.tids[i];
	for (r = 0; r < GBT_RUNS && lo <= hi; r++)
	{
		const GbtEntries *e = &m->runs[r].e;
		int64		from = key_bound(e->keys, e->n, lo, false);
		int64		to = key_bound(e->keys, e->n, hi, true);

		if (to > from)
			memcpy(out + o, e->tids + from, sizeof(ItemPointerData) * (to - from));
		o += Max(to - from, 0);
	}
	return o;
}

/* The values of entry i of e, as gbt_agg_add_entry() takes them. */
static const int64 *
entry_vals(const GbtEntries *e, int64 i, int64 *vals)
{
	int			c;

	for (c = 0; c < e->ncols; c++)
		vals[c] = gbt_entry_val(e, c, i);
	return vals;
}

/*
 * Where an aggregate's decided entries go.  Aggregating (verdicts NULL):
 * those the snapshot sees into agg, the unsure ones into list.  Listing
 * (the rows of a lookup): both into list, each with its verdict.  Past cap,
 * entries are only counted (agg->nunsure), so that the caller can ask again
 * with room for them all.
 */
typedef struct EntrySink
{
	gbt_agg_result *agg;
	const GbtColumns *columns;
	GbtEntries *list;
	uint8	   *verdicts;
	int64		cap;
} EntrySink;

static inline void
sink_entry(EntrySink *s, const GbtEntries *src, int64 i, int verdict)
{
	int64		vals[GBT_MAX_COLS];

	if (verdict == GBT_SKIP)
		return;
	if (verdict == GBT_TAKE && s->verdicts == NULL)
	{
		gbt_agg_add_entry(s->agg, s->columns, entry_vals(src, i, vals),
						  gbt_entry_nulls(src, i));
		return;
	}
	if (s->list->n < s->cap)
	{
		if (s->verdicts != NULL)
			s->verdicts[s->list->n] = verdict;
		gbt_copy_entry(s->list, s->list->n++, src, i);
	}
	s->agg->nunsure++;
}

/* How many stamped entries ahead aggregate_stamped() asks the caches for. */
#define STAMPED_PREFETCH 16

/*
 * Ask the caches for what deciding and adding tree entry p reads.  Always
 * inlined: a function whose only effect is prefetches counts as having none,
 * and gcc drops the calls.
 */
static pg_attribute_always_inline void
prefetch_entry(const GbtMirror *m, int64 p)
{
	int			c;

	if (m->removed != NULL)
		__builtin_prefetch(&m->removed[p >> 3]);
	if (m->hidden != NULL)
		__builtin_prefetch(&m->hidden[p >> 3]);
	__builtin_prefetch(&m->base.keys[p]);
	__builtin_prefetch(&m->base.tids[p]);
	if (m->base.nulls != NULL)
		__builtin_prefetch(&m->base.nulls[p]);
	for (c = 0; c < m->base.ncols; c++)
		if (m->base.vals[c] != NULL)
			__builtin_prefetch(&m->base.vals[c][p]);
		else if (m->base.narrow[c] != NULL)
			__builtin_prefetch(&m->base.narrow[c][p]);
}

/*
 * Decide the entries of l at base positions [start, end) into the sink;
 * returns how many were looked at.  They lie scattered over the tree's
 * arrays: prefetched a few entries ahead, the loads overlap.
 */
static int64
aggregate_stamped(const GbtMirror *m, const GbtStampList *l, int64 start, int64 end,
				  GbtSnapView *view, EntrySink *sink)
{
	int64		x0 = gbt_stamps_lower(l, start);
	int64		x;

	for (x = x0; x < Min(x0 + STAMPED_PREFETCH, l->n) && l->pos[x] < end; x++)
		prefetch_entry(m, l->pos[x]);
	for (x = x0; x < l->n && l->pos[x] < end; x++)
	{
		int64		p = l->pos[x];
		int			v;

		if (x + STAMPED_PREFETCH < l->n && l->pos[x + STAMPED_PREFETCH] < end)
			prefetch_entry(m, l->pos[x + STAMPED_PREFETCH]);
		if (IS_REMOVED(m, p))
			continue;
		v = gbt_snapview_quick(view, l->xmin[x], l->xmax[x]);
		if (v == GBT_UNDECIDED)
			v = gbt_snapview_decide_stamps(view, l->xmin[x], l->xmax[x], gbt_base_block(m, p));
		sink_entry(sink, &m->base, p, v);
	}
	return x - x0;
}

/*
 * The tree's plain entries at positions [start, end), listed: those on a
 * block the bits say is visible are seen, the others unsure.  What the
 * engine does for an aggregate, here, since a lookup lists few entries.
 */
static void
list_plain(const GbtMirror *m, int64 start, int64 end, const uint8 *visible,
		   int64 nvisible, EntrySink *sink)
{
	int64		p;

	for (p = start; p < end; p++)
	{
		uint32		b;

		if (p + STAMPED_PREFETCH < end)
			prefetch_entry(m, p + STAMPED_PREFETCH);
		b = gbt_base_block(m, p);

		if (m->hidden != NULL && (m->hidden[p >> 3] & (1 << (p & 7))) != 0)
			continue;			/* removed, or stamped: decided apart */
		sink_entry(sink, &m->base, p,
				   b < nvisible && (visible[b >> 3] & (1 << (b & 7))) != 0 ?
				   GBT_TAKE : GBT_UNSURE);
	}
}

/* The plain entries of ranges [r0, r1), listed (list_plain()). */
static void
list_ranges(const GbtMirror *m, const int64 *start, const int64 *end, int64 r0, int64 r1,
			const uint8 *visible, int64 nvisible, EntrySink *sink)
{
	int64		r;

	/* A range or two per key, scattered: ask for the next ones early. */
	for (r = r0; r < r1; r++)
	{
		if (r + STAMPED_PREFETCH < r1 &&
			start[r + STAMPED_PREFETCH] < end[r + STAMPED_PREFETCH])
			prefetch_entry(m, start[r + STAMPED_PREFETCH]);
		list_plain(m, start[r], end[r], visible, nvisible, sink);
	}
}

/* One thread's part of a listing: ranges [r0, r1), into its own list. */
typedef struct ListPiece
{
	const GbtMirror *m;
	const int64 *start;
	const int64 *end;
	int64		r0;
	int64		r1;
	const uint8 *visible;
	int64		nvisible;
	GbtEntries	list;			/* the shared list's arrays from base on */
	uint8	   *verdicts;
	int64		base;
	GbtAggResult agg;			/* its nunsure: the entries listed */
} ListPiece;

static void
list_piece(void *arg)
{
	ListPiece  *p = (ListPiece *) arg;
	EntrySink	sink = {&p->agg, &p->m->columns, &p->list, p->verdicts, p->list.cap};

	list_ranges(p->m, p->start, p->end, p->r0, p->r1, p->visible, p->nvisible, &sink);
}

/* Positions a thread's part of a listing is worth at least. */
#ifndef GBT_LIST_PIECE_MIN		/* make GBT_SMALL_LAYOUT=1: tiny, for tests */
#define GBT_LIST_PIECE_MIN 16384
#endif

/*
 * list_ranges() over all nranges, in several threads when there are many
 * positions and room for them all: each thread lists a run of ranges into
 * the list where its positions could start, and the parts are then moved
 * together, in order.
 */
static void
list_all_ranges(const GbtMirror *m, const int64 *start, const int64 *end, int64 nranges,
				const uint8 *visible, int64 nvisible, EntrySink *sink)
{
	ListPiece	pieces[GBT_THREADS_MAX];
	GbtEntries *list = sink->list;
	int64		total = 0;
	int64		per;
	int64		r = 0;
	int64		to;
	int			npieces;
	int			i;

	for (r = 0; r < nranges; r++)
		total += end[r] - start[r];
	npieces = (int) Min(gbt_threads_wanted(), total / GBT_LIST_PIECE_MIN);
	if (npieces < 2 || list->n + total > sink->cap)
	{
		list_ranges(m, start, end, 0, nranges, visible, nvisible, sink);
		return;
	}

	/* Runs of ranges with about as many positions each. */
	per = (total + npieces - 1) / npieces;
	to = list->n;
	r = 0;
	for (i = 0; i < npieces; i++)
	{
		ListPiece  *p = &pieces[i];
		int64		n = 0;
		int			c;

		memset(p, 0, sizeof(ListPiece));
		p->m = m;
		p->start = start;
		p->end = end;
		p->visible = visible;
		p->nvisible = nvisible;
		p->r0 = r;
		while (r < nranges && (n < per || i == npieces - 1))
		{
			n += end[r] - start[r];
			r++;
		}
		p->r1 = r;
		p->base = to;
		p->list.ncols = list->ncols;
		p->list.cap = n;
		p->list.keys = list->keys + to;
		p->list.tids = list->tids + to;
		p->list.nulls = list->nulls + to;
		for (c = 0; c < list->ncols; c++)
			p->list.vals[c] = list->vals[c] + to;
		p->verdicts = sink->verdicts + to;
		to += n;
	}
	gbt_run_pieces(list_piece, pieces, sizeof(ListPiece), npieces);

	/* Together, in order (removed entries leave gaps). */
	to = list->n;
	for (i = 0; i < npieces; i++)
	{
		ListPiece  *p = &pieces[i];
		int64		n = p->list.n;
		int			c;

		if (p->base != to && n > 0)
		{
			memmove(list->keys + to, list->keys + p->base, sizeof(uint64) * n);
			memmove(list->tids + to, list->tids + p->base, sizeof(ItemPointerData) * n);
			memmove(list->nulls + to, list->nulls + p->base, n);
			for (c = 0; c < list->ncols; c++)
				memmove(list->vals[c] + to, list->vals[c] + p->base, sizeof(int64) * n);
			memmove(sink->verdicts + to, sink->verdicts + p->base, n);
		}
		to += n;
		sink->agg->nunsure += p->agg.nunsure;
	}
	list->n = to;
}

/* Decide entry i of a delta run, if logged before log_bound, into the sink. */
static inline void
aggregate_run_entry(const GbtRun *run, int64 i, uint64 log_bound, GbtSnapView *view,
					EntrySink *sink)
{
	int			v;

	if (run->pos[i] >= log_bound)
		return;
	v = gbt_snapview_quick(view, run->xmin[i], run->xmax[i]);
	if (v == GBT_UNDECIDED)
		v = gbt_snapview_decide_stamps(view, run->xmin[i], run->xmax[i],
									   ItemPointerGetBlockNumberNoCheck(&run->e.tids[i]));
	sink_entry(sink, &run->e, i, v);
}

/*
 * Decide the entries [from, to) of a delta run, those logged before
 * log_bound, into the sink: when aggregating, whole summed blocks by their
 * sums and the entries their masks leave out, the rest one by one.
 */
static void
aggregate_run(const GbtMirror *m, const GbtRun *run, int64 from, int64 to,
			  uint64 log_bound, GbtSnapView *view, EntrySink *sink)
{
	int64		i;

	for (i = from; i < to; i++)
	{
		const gbt_agg_result *sum;
		const uint64 *walk;
		int			w;

		if (i % GBT_SUM_BLOCK == 0 && i + GBT_SUM_BLOCK <= to && view->stamps &&
			sink->verdicts == NULL &&
			(sum = gbt_run_sum(run, i / GBT_SUM_BLOCK, log_bound, &walk)) != NULL)
		{
			gbt_agg_combine(sink->agg, sum, &m->columns);
			for (w = 0; w < (GBT_SUM_BLOCK + 63) / 64; w++)
			{
				uint64		bits = walk[w];

				while (bits != 0)
				{
					aggregate_run_entry(run, i + w * 64 + pg_rightmost_one_pos64(bits),
										log_bound, view, sink);
					bits &= bits - 1;
				}
			}
			i += GBT_SUM_BLOCK - 1;
			continue;
		}
		aggregate_run_entry(run, i, log_bound, view, sink);
	}
}

/* The last r in [from, n) with v[r] <= x, given v[from] <= x. */
#define DEFINE_LAST_AT_OR_BELOW(name, type) \
static int64 \
name(const type *v, int64 from, int64 n, type x) \
{ \
	int64		lo = from + 1; \
	int64		hi = n; \
\
	while (lo < hi) \
	{ \
		int64		mid = lo + (hi - lo) / 2; \
\
		if (v[mid] <= x) \
			lo = mid + 1; \
		else \
			hi = mid; \
	} \
	return lo - 1; \
}
DEFINE_LAST_AT_OR_BELOW(last_start_at_or_below, int64)
DEFINE_LAST_AT_OR_BELOW(last_key_at_or_below, uint64)

/*
 * Decide the entries of l in the position ranges (ascending, disjoint) into
 * the sink; returns how many were looked at.  Few stamped entries among
 * many ranges (a long key list): each entry finds its range by binary
 * search, rather than each range its entries.
 */
static int64
stamped_in_ranges(const GbtMirror *m, const GbtStampList *l, const int64 *start,
				  const int64 *end, int64 nranges, GbtSnapView *view, EntrySink *sink)
{
	int64		seen = 0;
	int64		r;
	int64		x;

	if (l->n == 0 || nranges == 0)
		return 0;
	if (l->n >= nranges)
	{
		for (r = 0; r < nranges; r++)
			if (start[r] < end[r])
				seen += aggregate_stamped(m, l, start[r], end[r], view, sink);
		return seen;
	}
	r = 0;
	x = gbt_stamps_lower(l, start[0]);
	while (x < l->n)
	{
		int64		n;

		r = last_start_at_or_below(start, r, nranges, l->pos[x]);
		if (l->pos[x] >= end[r])
		{
			x++;				/* between two ranges */
			continue;
		}
		n = aggregate_stamped(m, l, start[r], end[r], view, sink);
		seen += n;
		x += n;
	}
	return seen;
}

/*
 * Decide the entries of a delta run in the key ranges [lo[r], hi[r]]
 * (sorted, disjoint) into the sink; returns how many were looked at.  A run
 * shorter than the list of ranges is walked entry by entry, each finding
 * its range.
 */
static int64
delta_in_ranges(const GbtMirror *m, const GbtRun *run, const uint64 *lo,
				const uint64 *hi, int64 nranges, uint64 log_bound,
				GbtSnapView *view, EntrySink *sink)
{
	const uint64 *keys = run->e.keys;
	int64		n = run->e.n;
	int64		seen = 0;
	int64		r;
	int64		i;

	if (n == 0 || nranges == 0)
		return 0;
	if (n >= nranges)
	{
		for (r = 0; r < nranges; r++)
		{
			int64		from = key_bound(keys, n, lo[r], false);
			int64		to = key_bound(keys, n, hi[r], true);

			seen += Max(to - from, 0);
			aggregate_run(m, run, from, to, log_bound, view, sink);
		}
		return seen;
	}
	r = 0;
	i = key_bound(keys, n, lo[0], false);
	while (i < n)
	{
		int64		to;

		r = last_key_at_or_below(lo, r, nranges, keys[i]);
		if (keys[i] > hi[r])
		{
			i++;				/* between two ranges */
			continue;
		}
		to = key_bound(keys, n, hi[r], true);
		aggregate_run(m, run, i, to, log_bound, view, sink);
		seen += to - i;
		i = to;
	}
	return seen;
}

/*
 * Aggregate the entries in the key ranges [lo[i], hi[i]] (sorted,
 * disjoint) that the query's snapshot sees (view), among those applied
 * before log position log_bound; those the mirror cannot decide go to
 * unsure (after the unsure->n there already, up to unsure_cap in all;
 * out->nunsure counts them all).  The engine
 * aggregates the plain entries, visible to every snapshot: all of them
 * when the mirror's stamps can be trusted, else those on all-visible
 * blocks.  The stamped ones and the delta are decided here, entry by entry.
 *
 * With verdicts (a lookup's rows), nothing is aggregated: every entry the
 * snapshot sees or might see goes to unsure, with its verdict (GBT_TAKE or
 * GBT_UNSURE) in verdicts[], and out->nunsure counts them all.
 */
bool
gbt_mirror_aggregate(GbtMirror *m, const uint64 *lo, const uint64 *hi, int64 nranges,
					 GbtSnapView *view, uint64 log_bound,
					 GbtAggResult *out, GbtEntries *unsure, int64 unsure_cap,
					 uint8 *verdicts, GbtAggSteps *steps, char *err, Size errlen)
{
	int64	   *start = palloc_extended(sizeof(int64) * Max(nranges, 1), MCXT_ALLOC_HUGE);
	int64	   *end = palloc_extended(sizeof(int64) * Max(nranges, 1), MCXT_ALLOC_HUGE);
	bool		trusted = gbt_mirror_trusts_stamps(m) && view->stamps;
	const uint8 *visible = trusted ? m->allvis : view->visible;
	int64		nvisible = trusted ? m->nallvis : view->nvisible;
	EntrySink	sink = {out, &m->columns, unsure, verdicts, unsure_cap};
	int64		i;
	int			d;
	instr_time	t0,
				t1;

	memset(steps, 0, sizeof(*steps));
	INSTR_TIME_SET_CURRENT(t0);
	if (!gbt_mirror_ranges(m, lo, hi, nranges, start, end, err, errlen))
		return false;
	INSTR_TIME_SET_CURRENT(t1);
	steps->positions_ms = INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t0);

	/* The tree's plain entries. */
	if (verdicts != NULL)
		list_all_ranges(m, start, end, nranges, visible, nvisible, &sink);
	else
	{
		int64		room = Max(unsure_cap - unsure->n, 0);
		int64	   *upos = palloc_extended(sizeof(int64) * Max(room, 1),
										   MCXT_ALLOC_HUGE);

		if (m->ops->aggregate(m->engine, m->hidden, m->hidden_version,
							  (const int64_t *) start, (const int64_t *) end, nranges,
							  visible, nvisible, out, (int64_t *) upos, room,
							  err, errlen) != 0)
			return false;
		for (i = 0; i < Min(out->nunsure, room); i++)
			gbt_copy_entry(unsure, unsure->n++, &m->base, upos[i]);
		pfree(upos);
	}

	INSTR_TIME_SET_CURRENT(t1);
	steps->tree_ms = INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t0);
	t0 = t1;

	/* Stamps of a mirror that may have missed deletes decide nothing alone. */
	view->stamps = trusted;

	/* The tree's stamped entries. */
	steps->nstamped =
		stamped_in_ranges(m, &m->stamped, start, end, nranges, view, &sink) +
		stamped_in_ranges(m, &m->recent, start, end, nranges, view, &sink);
	INSTR_TIME_SET_CURRENT(t1);
	steps->stamped_ms = INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t0);
	t0 = t1;

	/* The delta's, logged before log_bound. */
	for (d = 0; d < GBT_RUNS; d++)
		steps->ndelta += delta_in_ranges(m, &m->runs[d], lo, hi, nranges, log_bound,
										 view, &sink);
	INSTR_TIME_SET_CURRENT(t1);
	steps->delta_ms = INSTR_TIME_GET_MILLISEC(t1) - INSTR_TIME_GET_MILLISEC(t0);
	pfree(start);
	pfree(end);
	return true;
}

/* First position of e[0..n) whose entry comes after (key, tid). */
static int64
entry_after(const GbtEntries *e, int64 n, uint64 key, const ItemPointerData *tid)
{
	int64		lo = key_bound(e->keys, n, key, false);
	int64		hi = key_bound(e->keys, n, key, true);

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;

		if (gbt_tid_cmp(&e->tids[mid], tid) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The tree and the delta's runs merged in (key, TID) order: a reader in
 * chunks (VACUUM's sweep, a rebuild) resumes after the last entry it read,
 * wherever changes applied between its chunks moved entries (inserts,
 * merges of runs, a settling pass's compaction), and so sees every entry
 * that stayed.  Appends at most max entries to out, whose arrays have room
 * for them; with a view, each one's verdict under it to verdicts[]; with
 * xmins, each one's stamps to xmins[] and xmaxs[], and then no entry that
 * no snapshot sees.
 */
static int64
read_ordered(const GbtMirror *m, const GbtDumpCursor *after, int64 max,
			 GbtEntries *out, GbtSnapView *view, uint8 *verdicts,
			 TransactionId *xmins, TransactionId *xmaxs)
{
	const GbtEntries *seg[GBT_RUNS + 1];
	int64		next[GBT_RUNS + 1];
	int64		n0 = out->n;
	GbtStampCursor cur;
	int			s;

	seg[0] = &m->base;
	for (s = 0; s < GBT_RUNS; s++)
		seg[s + 1] = &m->runs[s].e;
	for (s = 0; s <= GBT_RUNS; s++)
		next[s] = after == NULL ? 0 :
			entry_after(seg[s], seg[s]->n, after->key, &after->tid);
	cur.stamped = gbt_stamps_lower(&m->stamped, next[0]);
	cur.recent = gbt_stamps_lower(&m->recent, next[0]);

	while (out->n - n0 < max)
	{
		int			best = -1;
		int64		i;
		TransactionId xmin;
		TransactionId xmax;
		uint32		block;

		while (next[0] < m->base.n && IS_REMOVED(m, next[0]))
			next[0]++;
		for (s = 0; s <= GBT_RUNS; s++)
		{
			if (next[s] >= seg[s]->n)
				continue;
			if (best < 0 ||
				gbt_entry_cmp(seg[s]->keys[next[s]], &seg[s]->tids[next[s]],
							  seg[best]->keys[next[best]],
							  &seg[best]->tids[next[best]]) < 0)
				best = s;
		}
		if (best < 0)
			break;
		i = next[best]++;
		if (best == 0)
		{
			(void) gbt_stamps_at(m, i, &cur, &xmin, &xmax);
			block = gbt_base_block(m, i);
		}
		else
		{
			xmin = m->runs[best - 1].xmin[i];
			xmax = m->runs[best - 1].xmax[i];
			block = ItemPointerGetBlockNumberNoCheck(&seg[best]->tids[i]);
		}
		if (xmins != NULL)
		{
			if (xmin == GBT_XMIN_DEAD)
				continue;
			xmins[out->n] = xmin;
			xmaxs[out->n] = xmax;
		}
		if (view != NULL)
			verdicts[out->n - n0] = gbt_snapview_decide(view, xmin, xmax, block);
		gbt_copy_entry(out, out->n++, seg[best], i);
	}
	return out->n - n0;
}

int64
gbt_mirror_read(const GbtMirror *m, const GbtDumpCursor *after, int64 max,
				GbtEntries *out, GbtSnapView *view, uint8 *verdicts)
{
	if (view != NULL)
		view->stamps = view->stamps && m->captured && !m->vm_mode;
	return read_ordered(m, after, max, out, view, verdicts, NULL, NULL);
}

bool
gbt_engine_gpu_usable(char *name, Size namelen, int64 *memory,
					  char *why, Size whylen)
{
	const gbt_engine_ops *gpu = gbt_engine_gpu_ops();

	if (gpu == NULL)
	{
		strlcpy(why, "built without CUDA", whylen);
		return false;
	}
	return gpu->usable(0, name, namelen, (int64_t *) memory, why, whylen) == 0;
}
