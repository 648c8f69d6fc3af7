/*
 * mirror_utils.c
 *	  A mirror's sizes (its entries, the delta, the memory it holds, here
 *	  and on its device) and its engine's device; whether this process can
 *	  use a GPU at all.
 */
#include "postgres.h"

#include "mirror_int.h"
#include "runsums.h"

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
	if (m->hidden_changed != NULL)
		b->stamps += sizeof(int64) * GBT_HIDDEN_CHANGES;
	b->delta = gbt_delta_n(m) * (per_entry + sizeof(uint64) + 2 * sizeof(TransactionId));
	for (c = 0; c < GBT_RUNS; c++)
		b->delta += gbt_run_sums_bytes(&m->runs[c]);
	if (m->merge_run != 0)
		b->delta += m->merge_into.e.cap * (per_entry + sizeof(uint64));
	if (m->filter != NULL)
		b->delta += (m->filter_mask + 1) / 8;
	b->engine = m->ops->bytes(m->engine);
	b->engine_host = m->ops->host_bytes(m->engine);
}

/*
 * Before the engine reads hidden[]: the positions whose bits changed since
 * it was last told, unless they overflowed the list (then the engine
 * compares the whole bitmap, as it does when never told).  Touches no
 * PostgreSQL state: a lane's thread may call it for its mirror.
 */
void
gbt_mirror_note_hidden(GbtMirror *m)
{
	if (m->hidden_version == m->hidden_noted)
		return;
	if (m->engine != NULL && !m->hidden_overflowed)
		m->ops->note_removed(m->engine, m->hidden, m->hidden_noted, m->hidden_version,
							 m->hidden_changed, m->nhidden_changed);
	m->nhidden_changed = 0;
	m->hidden_overflowed = false;
	m->hidden_noted = m->hidden_version;
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

/*
 * The engine's device copies of the host's columns that no aggregate read
 * for idle_ms, given back (engine.h: drop_idle_copies); the bytes.
 */
int64
gbt_mirror_drop_idle_copies(GbtMirror *m, int64 idle_ms)
{
	if (m->engine == NULL)
		return 0;
	return (int64) m->ops->drop_idle_copies(m->engine, idle_ms);
}

bool
gbt_mirror_on_gpu(const GbtMirror *m)
{
	return gbt_mirror_device(m) >= 0;
}

/* The device the mirror's tree is on: a CUDA device, or -1 (the CPU twin). */
int
gbt_mirror_device(const GbtMirror *m)
{
	return m->ops->device(m->engine);
}

bool
gbt_engine_gpu_usable(int device, char *name, Size namelen, int64 *memory,
					  char *why, Size whylen)
{
	const gbt_engine_ops *gpu = gbt_engine_gpu_ops();

	if (gpu == NULL)
	{
		strlcpy(why, "built without CUDA", whylen);
		return false;
	}
	return gpu->usable(device, name, namelen, (int64_t *) memory, why, whylen) == 0;
}
