/*
 * keys.h
 *	  Order-preserving 64-bit keys of the mirror (backend side).
 *
 * Integers map by flipping the sign bit; floats by their IEEE bits (sign
 * flipped for positives, all bits for negatives), after folding -0 into 0
 * and every NaN into one NaN, which sorts above +Infinity as in PostgreSQL.
 */
#ifndef GPUBTREE_KEYS_H
#define GPUBTREE_KEYS_H

#include <math.h>
#include <string.h>

static inline uint64
gbt_key_int64(int64 v)
{
	return ((uint64) v) ^ (UINT64CONST(1) << 63);
}

static inline uint64
gbt_key_float8(double v)
{
	uint64		bits;

	if (isnan(v))
		return PG_UINT64_MAX;
	if (v == 0.0)
		v = 0.0;				/* -0 sorts as 0 */
	memcpy(&bits, &v, sizeof(bits));
	return (bits & (UINT64CONST(1) << 63)) ? ~bits : bits | (UINT64CONST(1) << 63);
}

#endif							/* GPUBTREE_KEYS_H */
