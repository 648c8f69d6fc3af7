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

size_t
hm_bytes(const hm_tree *t)
{
	return (size_t) t->n * 8 + (size_t) t->ninner * (t->fanout + 1) * 8 +
		(size_t) t->nbuckets * 8;
}

const uint64_t *
hm_leaf_keys(const hm_tree *t)
{
	return t->keys;
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
	return HM_OK;
}

void
hm_cpu_free(hm_tree *t)
{
	if (!t)
		return;
	free(t->inner);
	free(t->child);
	free(t->keys);
	free(t->entry);
	free(t);
}

/* The entry table of t, in one pass over its keys and buckets. */
static hm_status
entry_build(hm_tree *t)
{
	int64_t		b,
				i = 0,
				lo = 0;

	hm__entry_layout(t, t->n > 0 ? t->keys[0] : 0, t->n > 0 ? t->keys[t->n - 1] : 0);
	t->entry = malloc((t->nbuckets + 1) * sizeof(int64_t));
	if (!t->entry)
		return HM_ENOMEM;
	for (b = 0; b < t->nbuckets; b++)
	{
		int			none;
		uint64_t	next = hm__bucket_first(t, b + 1, &none);

		while (i < t->n && (none || t->keys[i] < next))
			i++;
		t->entry[b] = hm__entry_of(t, lo, i);
		lo = i;
	}
	return HM_OK;
}

hm_status
hm_cpu_build(const uint64_t *keys, int64_t n, int fanout, hm_tree **out)
{
	hm_tree    *t;
	int64_t		i,
				x;
	int			s;

	*out = NULL;
	if (n < 0 || (n > 0 && !keys))
		return HM_EINVAL;
	for (i = 1; i < n; i++)
		if (keys[i - 1] > keys[i])
			return HM_EINVAL;
	t = calloc(1, sizeof(hm_tree));
	if (!t)
		return HM_ENOMEM;
	if (hm__layout(t, n, fanout) != HM_OK)
	{
		free(t);
		return HM_EINVAL;
	}
	t->keys = malloc((n + 1) * sizeof(uint64_t));
	t->inner = malloc((t->ninner * fanout + 1) * sizeof(uint64_t));
	t->child = malloc((t->ninner + 1) * sizeof(int64_t));
	if (!t->keys || !t->inner || !t->child)
	{
		hm_cpu_free(t);
		return HM_ENOMEM;
	}
	if (n > 0)
		memcpy(t->keys, keys, n * sizeof(uint64_t));
	for (x = 0; x < t->ninner; x++)
	{
		t->child[x] = hm__child0(t, x);
		for (s = 0; s < fanout; s++)
			t->inner[x * fanout + s] = hm__sep(t, t->keys, x, s);
	}
	t->child[t->ninner] = hm__child0(t, t->ninner);
	if (entry_build(t) != HM_OK)
	{
		hm_cpu_free(t);
		return HM_ENOMEM;
	}
	*out = t;
	return HM_OK;
}

hm_status
hm_cpu_ranges(const hm_tree *t, const hm_range *r, int64_t nr,
			  int64_t *start, int64_t *end)
{
	int64_t		i;

	if (!t || nr < 0 || (nr > 0 && (!r || !start || !end)))
		return HM_EINVAL;
	for (i = 0; i < nr; i++)
		hm__range_pos(t, &r[i], &start[i], &end[i]);
	return HM_OK;
}
