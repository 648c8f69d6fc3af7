/*
 * harmonia_keys.h
 *	  Order-preserving 64-bit keys: the one encoding of every key type, used
 *	  by the key-type table (keytable.h) and so by the backend's scans,
 *	  exports and change log, and tested by test/harmonia/test_cpu.c.
 *
 * Every supported PostgreSQL key type maps to a uint64 whose unsigned order
 * is PostgreSQL's btree order:
 * - int2, int4, int8, date (int32 days), timestamp and timestamptz (int64
 *   microseconds): the two's-complement value with its sign bit flipped, so
 *   all integers share one encoding and cross-type comparisons need none;
 * - float4 and float8: float4 is widened exactly to float8; -0 is folded
 *   into 0 and every NaN into one NaN, which sorts above +Infinity and
 *   equals itself, as in PostgreSQL; otherwise the IEEE bits with the sign
 *   bit flipped for positives and all bits flipped for negatives.
 * Plain C, usable from C, C++ and CUDA device code.
 */
#ifndef HARMONIA_KEYS_H
#define HARMONIA_KEYS_H

#include <stdint.h>
#include <string.h>

#ifndef HM_INLINE				/* as harmonia_int.h defines it */
#ifdef __CUDACC__
#define HM_INLINE __host__ __device__ static inline
#else
#define HM_INLINE static inline
#endif
#endif

#define HM_SIGN_BIT ((uint64_t) 1 << 63)
#define HM_KEY_NAN UINT64_MAX

HM_INLINE uint64_t
hm_encode_int64(int64_t v)
{
	return ((uint64_t) v) ^ HM_SIGN_BIT;
}

HM_INLINE int64_t
hm_decode_int64(uint64_t k)
{
	return (int64_t) (k ^ HM_SIGN_BIT);
}

HM_INLINE uint64_t
hm_encode_float8(double v)
{
	uint64_t	bits;

	if (v != v)
		return HM_KEY_NAN;
	if (v == 0.0)
		v = 0.0;				/* -0 sorts as 0 */
	memcpy(&bits, &v, sizeof(bits));
	return (bits & HM_SIGN_BIT) ? ~bits : (bits | HM_SIGN_BIT);
}

HM_INLINE double
hm_decode_float8(uint64_t k)
{
	uint64_t	bits;
	double		v;

	if (k == HM_KEY_NAN)
	{
		bits = 0x7ff8000000000000ULL;	/* the canonical quiet NaN */
		memcpy(&v, &bits, sizeof(v));
		return v;
	}
	bits = (k & HM_SIGN_BIT) ? (k ^ HM_SIGN_BIT) : ~k;
	memcpy(&v, &bits, sizeof(v));
	return v;
}

/* Row ids: a heap TID (uint32 block, uint16 offset) packed so that the
 * numeric order of row ids is TID order. */
HM_INLINE uint64_t
hm_tid_pack(uint32_t block, uint16_t offset)
{
	return ((uint64_t) block << 16) | offset;
}

HM_INLINE uint32_t
hm_tid_block(uint64_t rowid)
{
	return (uint32_t) (rowid >> 16);
}

HM_INLINE uint16_t
hm_tid_offset(uint64_t rowid)
{
	return (uint16_t) (rowid & 0xffff);
}

#endif							/* HARMONIA_KEYS_H */
