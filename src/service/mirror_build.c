/*
 * mirror_build.c
 *	  A mirror built from entries in (key, TID) order: its columns held in
 *	  as little as they need, its stamped entries listed, its engine built
 *	  over the keys; and a mirror freed.
 */
#include "postgres.h"

#include "access/transam.h"
#include "utils/memutils.h"

#include "mirror_int.h"
#include "threads.h"

/*
 * Whether column c is the key and an integer, whose values the keys give
 * exactly (a float key's keys fold -0 into 0, so its column is held).
 */
static bool
key_column(const GbtMirror *m, int c)
{
	return c == 0 && m->columns.type[c] == GBT_COL_INT64;
}

/* The engine's view of base entries [0, n): blocks, columns, NULL bits. */
void
gbt_mirror_agg_input(gbt_agg_input *in, const GbtMirror *m, int64 n)
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
 * A build's passes over its entries run in pieces on the service's threads
 * (the page faults of new arrays among them, which dominate a copy): pieces
 * of whole pages of keys (and so whole bytes of NULL bits), none under
 * GBT_BUILD_PIECE_MIN entries, where a thread costs more than it saves.  No
 * piece allocates or reports.
 */
#ifndef GBT_BUILD_PIECE_MIN		/* make GBT_SMALL_LAYOUT=1: tiny, for tests */
#define GBT_BUILD_PIECE_ALIGN 4096
#define GBT_BUILD_PIECE_MIN (1 << 16)
#endif

/* A piece's entries are whole bytes of NULL bits (null_bits_piece()). */
StaticAssertDecl(GBT_BUILD_PIECE_ALIGN % 8 == 0, "pieces cut bytes of NULL bits");

/* How many pieces for n entries, and how many entries each (but the last). */
static int
build_pieces(int64 n, int64 *per)
{
	int			npieces = gbt_threads_for(n, GBT_BUILD_PIECE_MIN);

	*per = TYPEALIGN(GBT_BUILD_PIECE_ALIGN, Max((n + npieces - 1) / npieces, 1));
	return (int) Min((int64) npieces, Max((n + *per - 1) / *per, 1));
}

/* Piece k of n entries, per entries a piece. */
#define PIECE_LO(k, per, n) Min((int64) (k) * (per), (n))
#define PIECE_HI(k, per, n) Min((int64) ((k) + 1) * (per), (n))

/* One piece of a column's narrowing: its range first, then its writing. */
typedef struct NarrowPiece
{
	const GbtEntries *src;
	GbtEntries *dst;
	int			c;
	bool		isfloat;
	int64		lo,
				hi;
	/* out of the range pass */
	int64		vlo,
				vhi;
	bool		exact;			/* every float's value held by a float */
} NarrowPiece;

static void
narrow_range_piece(void *arg)
{
	NarrowPiece *p = arg;
	const int64 *vals = p->src->vals[p->c];
	int64		i;

	p->vlo = PG_INT64_MAX;
	p->vhi = PG_INT64_MIN;
	p->exact = true;
	for (i = p->lo; i < p->hi; i++)
	{
		int64		v = vals[i];

		if (gbt_entry_nulls(p->src, i) & (1 << p->c))
			continue;
		if (p->isfloat)
		{
			/* bit for bit: a NaN's payload too (min/max return its bits) */
			if (gbt_float8_val((float) gbt_val_float8(v)) != v)
			{
				p->exact = false;
				return;
			}
		}
		else
		{
			p->vlo = Min(p->vlo, v);
			p->vhi = Max(p->vhi, v);
		}
	}
}

static void
narrow_write_piece(void *arg)
{
	NarrowPiece *p = arg;
	const int64 *vals = p->src->vals[p->c];
	uint32	   *narrow = p->dst->narrow[p->c];
	int64		base = p->dst->narrow_base[p->c];
	int64		i;

	for (i = p->lo; i < p->hi; i++)
	{
		int64		v = vals[i];

		if (gbt_entry_nulls(p->src, i) & (1 << p->c))
			narrow[i] = 0;
		else if (p->isfloat)
		{
			float		f = (float) gbt_val_float8(v);

			memcpy(&narrow[i], &f, sizeof(f));
		}
		else
			narrow[i] = (uint32) ((uint64) v - (uint64) base);
	}
}

/*
 * Column c of src in 4 bytes a value, into dst's narrow arrays, when its
 * values (NULLs aside) allow: integers within 2^32 of the smallest, floats
 * that a float holds exactly.  dst may be src.
 */
static bool
narrow_column(GbtEntries *dst, const GbtEntries *src, int c, bool isfloat)
{
	NarrowPiece pieces[GBT_THREADS_MAX];
	int64		per;
	int			npieces = build_pieces(src->n, &per);
	int64		lo = PG_INT64_MAX;
	int64		hi = PG_INT64_MIN;
	int			k;

	for (k = 0; k < npieces; k++)
	{
		pieces[k].src = src;
		pieces[k].dst = dst;
		pieces[k].c = c;
		pieces[k].isfloat = isfloat;
		pieces[k].lo = PIECE_LO(k, per, src->n);
		pieces[k].hi = PIECE_HI(k, per, src->n);
	}
	gbt_run_pieces(narrow_range_piece, pieces, sizeof(NarrowPiece), npieces);
	for (k = 0; k < npieces; k++)
	{
		if (!pieces[k].exact)
			return false;
		lo = Min(lo, pieces[k].vlo);
		hi = Max(hi, pieces[k].vhi);
	}
	if (!isfloat && lo <= hi && (uint64) hi - (uint64) lo > PG_UINT32_MAX)
		return false;
	dst->narrow_base[c] = isfloat || lo > hi ? 0 : lo;
	dst->narrow[c] = MemoryContextAllocExtended(TopMemoryContext,
												sizeof(uint32) * Max(src->n, 1),
												MCXT_ALLOC_HUGE);
	gbt_run_pieces(narrow_write_piece, pieces, sizeof(NarrowPiece), npieces);
	if (isfloat)
		dst->narrow_float |= 1 << c;
	return true;
}

/* One piece of a copy of arrays: bytes [lo, hi) of each. */
typedef struct CopyPiece
{
	int			narrays;
	void	   *dst[GBT_MAX_COLS + 3];
	const void *src[GBT_MAX_COLS + 3];
	Size		width[GBT_MAX_COLS + 3];	/* bytes an entry */
	int64		lo,
				hi;
} CopyPiece;

static void
copy_piece(void *arg)
{
	CopyPiece  *p = arg;
	int			a;

	for (a = 0; a < p->narrays; a++)
		memcpy((char *) p->dst[a] + p->lo * p->width[a],
			   (const char *) p->src[a] + p->lo * p->width[a],
			   (p->hi - p->lo) * p->width[a]);
}

/*
 * Hold only the columns that say something: none for an integer key or a
 * type not held (gbt_entry_val() gives their values), and the entries' NULL
 * masks only when one is set; the others in 4 bytes a value where the
 * values allow.  (NULL bits were made only for a column with a NULL.)
 */
static void
drop_unheld_columns(GbtMirror *m, bool anynull)
{
	int			c;

	if (!anynull && m->base.nulls != NULL)
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
		if (m->base.vals[c] != NULL &&
			narrow_column(&m->base, &m->base, c, m->columns.type[c] == GBT_COL_FLOAT8))
		{
			pfree(m->base.vals[c]);
			m->base.vals[c] = NULL;
		}
	}
}

/*
 * m's entries (uninitialised): a copy of src, array by array where src
 * holds every array in full (an export's), else entry by entry.  From an
 * export, the columns the mirror does not hold are not copied, and those
 * it holds in 4 bytes a value are narrowed straight from src
 * (drop_unheld_columns() decides the rest, as for any copy).
 */
static void
copy_entries(GbtMirror *m, const GbtEntries *src)
{
	GbtEntries *dst = &m->base;
	int64		n = src->n;
	bool		plain = src->nulls != NULL;
	CopyPiece	copy;
	CopyPiece	pieces[GBT_THREADS_MAX];
	int64		per;
	int			npieces;
	int			k;
	int			c;
	int64		i;

	for (c = 0; c < src->ncols; c++)
		plain &= src->vals[c] != NULL && src->narrow[c] == NULL;
	gbt_entries_init(dst, src->ncols, n);
	dst->n = n;
	if (!plain)
	{
		for (i = 0; i < n; i++)
			gbt_copy_entry(dst, i, src, i);
		return;
	}
	copy.narrays = 0;
#define COPY_ARRAY(d, s_, w) \
	(copy.dst[copy.narrays] = (d), copy.src[copy.narrays] = (s_), \
	 copy.width[copy.narrays++] = (w))
	COPY_ARRAY(dst->keys, src->keys, sizeof(uint64));
	COPY_ARRAY(dst->tids, src->tids, sizeof(ItemPointerData));
	COPY_ARRAY(dst->nulls, src->nulls, 1);
	for (c = 0; c < src->ncols; c++)
	{
		if (m->columns.type[c] == GBT_COL_NONE || key_column(m, c) ||
			narrow_column(dst, src, c, m->columns.type[c] == GBT_COL_FLOAT8))
		{
			pfree(dst->vals[c]);	/* never touched: its pages cost nothing */
			dst->vals[c] = NULL;
		}
		else
			COPY_ARRAY(dst->vals[c], src->vals[c], sizeof(int64));
	}
#undef COPY_ARRAY
	npieces = build_pieces(n, &per);
	for (k = 0; k < npieces; k++)
	{
		pieces[k] = copy;
		pieces[k].lo = PIECE_LO(k, per, n);
		pieces[k].hi = PIECE_HI(k, per, n);
	}
	gbt_run_pieces(copy_piece, pieces, sizeof(CopyPiece), npieces);
}

/*
 * A build's passes over its entries, in pieces: the scan (their largest
 * heap block, how many are flagged unknown, which columns have a NULL),
 * then the NULL bits of those columns only (most have none: a byte of bits
 * written at a time, for them alone, took a build's scan from 70 to 21 ms
 * at 2^23 entries on 2 cores), or the unknown flags cleared.
 */
typedef enum ScanPass
{
	SCAN_ENTRIES,
	SCAN_NULL_BITS,
	SCAN_CLEAR_UNKNOWN,
} ScanPass;

typedef struct ScanPiece
{
	GbtMirror  *m;
	ScanPass	pass;
	const TransactionId *xmin;	/* NULL: unknown by the entry's flag */
	int64		lo,
				hi;				/* whole bytes of NULL bits but the last */
	/* out of SCAN_ENTRIES */
	uint32		maxblock;
	int64		nunknown;
	bool		flagged;		/* any entry's flag set */
	uint8		nullcols;		/* a bit for each column with a NULL */
} ScanPiece;

static void
null_bits_piece(ScanPiece *p)
{
	GbtMirror  *m = p->m;
	const uint8 *nulls = m->base.nulls;
	int			c;
	int64		i;

	for (c = 0; c < m->columns.ncols; c++)
	{
		uint8	   *bits = m->colnulls[c];

		if (bits == NULL)
			continue;
		for (i = p->lo; i < p->hi; i += 8)
		{
			uint8		byte = 0;
			int			j;

			for (j = 0; j < 8 && i + j < p->hi; j++)
				byte |= ((nulls[i + j] >> c) & 1) << j;
			bits[i >> 3] = byte;
		}
	}
}

static void
scan_piece(void *arg)
{
	ScanPiece  *p = arg;
	GbtEntries *e = &p->m->base;
	uint8		anynull = 0;
	int64		i;

	if (p->pass == SCAN_NULL_BITS)
	{
		null_bits_piece(p);
		return;
	}
	if (p->pass == SCAN_CLEAR_UNKNOWN)
	{
		for (i = p->lo; i < p->hi; i++)
			e->nulls[i] &= ~GBT_ENTRY_XMIN_UNKNOWN;
		return;
	}
	p->maxblock = 0;
	p->nunknown = 0;
	p->flagged = false;
	for (i = p->lo; i < p->hi; i++)
	{
		uint8		nulls = e->nulls[i];

		p->maxblock = Max(p->maxblock, ItemPointerGetBlockNumberNoCheck(&e->tids[i]));
		if (p->xmin != NULL ? p->xmin[i] == GBT_XMIN_UNKNOWN :
			(nulls & GBT_ENTRY_XMIN_UNKNOWN) != 0)
			p->nunknown++;
		p->flagged |= (nulls & GBT_ENTRY_XMIN_UNKNOWN) != 0;
		anynull |= nulls;
	}
	p->nullcols = anynull & ~GBT_ENTRY_XMIN_UNKNOWN;
}

/*
 * A pass over m's entries; of SCAN_ENTRIES, its outcome: the largest heap
 * block, how many are unknown (by xmin, else by their flags), whether any
 * is flagged, and a bit for each column with a NULL.
 */
static void
scan_entries(GbtMirror *m, ScanPass pass, const TransactionId *xmin,
			 uint32 *maxblock, int64 *nunknown, bool *flagged, uint8 *nullcols)
{
	ScanPiece	pieces[GBT_THREADS_MAX];
	int64		per;
	int			npieces = build_pieces(m->base.n, &per);
	int			k;

	for (k = 0; k < npieces; k++)
	{
		pieces[k].m = m;
		pieces[k].pass = pass;
		pieces[k].xmin = xmin;
		pieces[k].lo = PIECE_LO(k, per, m->base.n);
		pieces[k].hi = PIECE_HI(k, per, m->base.n);
	}
	gbt_run_pieces(scan_piece, pieces, sizeof(ScanPiece), npieces);
	if (pass != SCAN_ENTRIES)
		return;
	*maxblock = 0;
	*nunknown = 0;
	*flagged = false;
	*nullcols = 0;
	for (k = 0; k < npieces; k++)
	{
		*maxblock = Max(*maxblock, pieces[k].maxblock);
		*nunknown += pieces[k].nunknown;
		*flagged |= pieces[k].flagged;
		*nullcols |= pieces[k].nullcols;
	}
}

/*
 * A mirror from entries in (key, TID) order with their stamps (xmin/xmax
 * NULL: from the entries' GBT_ENTRY_XMIN_UNKNOWN flag, no xmax), all but its
 * engine: gbt_mirror_build_engine() makes that.  With take, the mirror takes
 * the entries' arrays (in TopMemoryContext) instead of a copy, and entries
 * is left empty.  NULL with a message when there is no such engine.
 */
GbtMirror *
gbt_mirror_build_prepare(const GbtColumns *columns, GbtEntries *entries, bool take,
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
	uint32		maxblock;
	int64		nunknown;
	bool		flagged;
	uint8		nullcols;
	bool		none_stamped;

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
		copy_entries(m, entries);
	scan_entries(m, SCAN_ENTRIES, xmin, &maxblock, &nunknown, &flagged, &nullcols);
	/* NULL bits only for a column with a NULL (and a type held) */
	for (i = 0; i < columns->ncols; i++)
		if ((nullcols & (1 << i)) && columns->type[i] != GBT_COL_NONE)
			m->colnulls[i] = palloc_extended(n / 8 + 1, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	for (i = 0; i < columns->ncols; i++)
		if (m->colnulls[i] != NULL)
		{
			scan_entries(m, SCAN_NULL_BITS, NULL, NULL, NULL, NULL, NULL);
			break;
		}
	m->nallvis = (int64) maxblock + 1;
	m->allvis = palloc_extended(m->nallvis / 8 + 1, MCXT_ALLOC_HUGE);
	memset(m->allvis, 0xff, m->nallvis / 8 + 1);
	MemoryContextSwitchTo(old);
	for (i = 0; i < GBT_RUNS; i++)
		gbt_run_alloc(&m->runs[i], columns->ncols, 16);

	/*
	 * The stamped entries.  With many inserters unknown (an export from a
	 * table not vacuumed since it was loaded), the mirror decides by the
	 * visibility map instead of listing them all, until a VACUUM vouches
	 * for their blocks (gbt_mirror_vouch()).  A rebuild keeps its source's
	 * mode: entries whose inserters a mirror deciding by the map took as
	 * frozen are frozen in the copy too, and the map must go on deciding.
	 */
	m->vm_mode = vm_mode || !captured || nunknown > n / GBT_UNKNOWN_ONE_IN;
	/* From an export with no entry unknown (or all frozen): none stamped. */
	none_stamped = xmin == NULL && xmax == NULL && (nunknown == 0 || m->vm_mode);
	spos = palloc_extended(sizeof(int64) * (none_stamped ? 1 : Max(n, 1)), MCXT_ALLOC_HUGE);
	sxmin = palloc_extended(sizeof(TransactionId) * (none_stamped ? 1 : Max(n, 1)), MCXT_ALLOC_HUGE);
	sxmax = palloc_extended(sizeof(TransactionId) * (none_stamped ? 1 : Max(n, 1)), MCXT_ALLOC_HUGE);
	for (i = none_stamped ? n : 0; i < n; i++)
	{
		TransactionId mn = xmin != NULL ? xmin[i] : gbt_exported_xmin(&m->base, i);
		TransactionId mx = xmax != NULL ? xmax[i] : InvalidTransactionId;

		if (m->vm_mode && mn == GBT_XMIN_UNKNOWN)
			mn = GBT_XMIN_FROZEN;
		if (mn == GBT_XMIN_FROZEN && !TransactionIdIsValid(mx))
			continue;
		spos[nstamped] = i;
		sxmin[nstamped] = mn;
		sxmax[nstamped++] = mx;
		if (mn == GBT_XMIN_UNKNOWN)
			m->unknown++;
	}
	gbt_stamps_add(m, nstamped, spos, sxmin, sxmax);
	pfree(spos);
	pfree(sxmin);
	pfree(sxmax);
	if (flagged)
		scan_entries(m, SCAN_CLEAR_UNKNOWN, NULL, NULL, NULL, NULL, NULL);
	if (take)
		memset(entries, 0, sizeof(GbtEntries));
	drop_unheld_columns(m, nullcols != 0);
	m->ops = ops;
	m->parts.nparts = 1;
	m->parts.device[0] = device;
	m->parts.weight[0] = 1;
	return m;
}

/*
 * The engine of a prepared mirror where m->parts says (set by the caller):
 * its tree, or its parts' trees, and its chunk sums made now, in pieces
 * (run runs them, and a split engine's parts' builds), not a budget a round
 * afterwards, so that the mirror answers at full speed from the moment it
 * is published.  Plain computation, no palloc and no ereport: a rebuild runs
 * it on a thread of its own (mirror_rebuild.c).  0, or 1 with a message.
 */
int
gbt_mirror_build_engine(GbtMirror *m, gbt_piece_runner run, char *err, Size errlen)
{
	gbt_agg_input in;

	gbt_mirror_agg_input(&in, m, m->base.n);
	if (m->parts.nparts > 1)
	{
		/*
		 * The parts of a later large call run at once in threads of their
		 * own: the call may come from a lane, a thread of the service's
		 * pool, where the pool's pieces would run in turn.
		 */
		if (gbt_engine_split_build(m->ops, m->base.keys, &in, m->parts.nparts,
								   m->parts.device, m->parts.weight, run,
								   gbt_run_pieces_spawned, &m->engine, err, errlen) != 0)
			return 1;
		m->ops = gbt_engine_split_ops();
	}
	else if (m->ops->build(m->base.keys, &in, m->parts.device[0], &m->engine,
						   err, errlen) != 0)
		return 1;
	gbt_mirror_note_hidden(m);
	(void) m->ops->tidy_all(m->engine, m->hidden, m->hidden_version, run,
							gbt_threads_wanted());
	return 0;
}

GbtMirror *
gbt_mirror_build_begin(const GbtColumns *columns, const GbtEntries *entries,
					   const TransactionId *xmin, const TransactionId *xmax, bool captured,
					   const GbtMirrorParts *parts, char *err, Size errlen)
{
	GbtMirror  *m = gbt_mirror_build_prepare(columns, (GbtEntries *) entries, false, xmin,
											 xmax, captured, false, parts->device[0],
											 err, errlen);

	if (m != NULL)
		m->parts = *parts;
	return m;
}

/*
 * A prepared mirror's engine being built on a thread of its own: a first
 * build's (build_requests.c) or a rebuild's (mirror_rebuild.c).  The thread
 * writes only failed and err; the service reads them after
 * gbt_background_wait().
 */
struct GbtEngineJob
{
	GbtMirror  *m;
	int			delay_ms;		/* held first (a debug setting, for tests) */
	GbtBackground *thread;		/* NULL: built in the caller's thread */
	int			failed;
	char		err[GBT_ERRMSG_LEN];
};

static void
engine_job_run(void *arg)
{
	GbtEngineJob *job = (GbtEngineJob *) arg;

	if (job->delay_ms > 0)
		pg_usleep(job->delay_ms * 1000L);
	/* pieces in threads of their own: the service's pool answers meanwhile */
	job->failed = gbt_mirror_build_engine(job->m, gbt_run_pieces_spawned,
										  job->err, sizeof(job->err));
}

GbtEngineJob *
gbt_engine_job_start(GbtMirror *m, int delay_ms)
{
	GbtEngineJob *job = MemoryContextAllocZero(TopMemoryContext, sizeof(GbtEngineJob));

	job->m = m;
	job->delay_ms = delay_ms;
	job->thread = gbt_background_start(engine_job_run, job);
	if (job->thread == NULL)
		engine_job_run(job);	/* no thread: here */
	return job;
}

bool
gbt_engine_job_done(GbtEngineJob *job)
{
	return job->thread == NULL || gbt_background_done(job->thread);
}

GbtMirror *
gbt_engine_job_finish(GbtEngineJob *job, char *err, Size errlen)
{
	GbtMirror  *m = job->m;

	if (job->thread != NULL)
		gbt_background_wait(job->thread);
	if (job->failed)
	{
		if (err != NULL)
			strlcpy(err, job->err, errlen);
		gbt_mirror_free(m);
		m = NULL;
	}
	pfree(job);
	return m;
}

int
gbt_mirror_parts(const GbtMirror *m, gbt_split_part *parts)
{
	if (m->engine != NULL && m->ops == gbt_engine_split_ops())
		return gbt_engine_split_parts(m->engine, parts);
	parts[0].device = m->engine != NULL ? m->ops->device(m->engine) : m->parts.device[0];
	parts[0].first = 0;
	parts[0].n = m->base.n;
	parts[0].bytes = m->engine != NULL ? m->ops->bytes(m->engine) : 0;
	parts[0].host_bytes = m->engine != NULL ? m->ops->host_bytes(m->engine) : 0;
	return 1;
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
		gbt_run_free(&m->runs[c]);
	if (m->merge_run != 0)
		gbt_run_free(&m->merge_into);
	pfree(m->allvis);
	for (c = 0; c < m->columns.ncols; c++)
		if (m->colnulls[c])
			pfree(m->colnulls[c]);
	if (m->removed)
		pfree(m->removed);
	if (m->hidden)
		pfree(m->hidden);
	if (m->hidden_changed)
		pfree(m->hidden_changed);
	gbt_stamps_free(&m->stamped);
	gbt_stamps_free(&m->recent);
	if (m->filter)
		pfree(m->filter);
	pfree(m);
}
