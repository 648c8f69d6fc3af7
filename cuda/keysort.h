/*
 * keysort.h
 *	  Sorting 64-bit keys and dropping repeats on the host: the backend's
 *	  key lists and the CPU twin's sort_unique() (engine.h).  Plain C, no
 *	  PostgreSQL headers.
 */
#ifndef GBT_KEYSORT_H
#define GBT_KEYSORT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

/*
 * Sort keys[0..n) ascending, with tmp[0..n) as scratch (n < 2^32), by an
 * LSD radix sort of 16 bits a pass.  Keys already in order cost one read.
 */
extern void gbt_radix_sort_u64(uint64_t *keys, uint64_t *tmp, int64_t n);

/*
 * Sort keys[0..n) ascending and drop repeats, in place; returns how many
 * are left.  With map, map[i] is then where the key that was keys[i] went:
 * keys[map[i]].  tmp[0..n) and idx[0..n) (with map only) are scratch.
 * n < 2^32.  Returns -1, with map, when out of memory.
 */
extern int64_t gbt_sort_unique_map(uint64_t *keys, uint64_t *tmp, uint32_t *map,
								   uint32_t *idx, int64_t n);

/* Drop repeats from sorted keys[0..n); returns how many are left. */
extern int64_t gbt_unique_u64(uint64_t *keys, int64_t n);

#ifdef __cplusplus
}
#endif

#endif							/* GBT_KEYSORT_H */
