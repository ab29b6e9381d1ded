/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Ring index arithmetic shared by the kernel, the provider and the unit
 * tests.  Indices are free-running u32 counters (see struct mrxe_ring_hdr in
 * rdma/mrxe-abi.h); all arithmetic is modulo 2^32.  Pure C, no kernel deps.
 */
#ifndef MRXE_RING_H
#define MRXE_RING_H

#include "mrxe_shim.h"

/* Number of occupied slots; > nslots means a corrupt/hostile index. */
static inline u32 mrxe_ring_count(u32 prod, u32 cons)
{
	return prod - cons;
}

static inline bool mrxe_ring_empty(u32 prod, u32 cons)
{
	return prod == cons;
}

static inline bool mrxe_ring_full(u32 prod, u32 cons, u32 mask)
{
	return prod - cons >= mask + 1;
}

static inline u32 mrxe_ring_free(u32 prod, u32 cons, u32 mask)
{
	return mask + 1 - (prod - cons);
}

/* True when an index pair read from shared memory is consistent. */
static inline bool mrxe_ring_valid(u32 prod, u32 cons, u32 mask)
{
	return prod - cons <= mask + 1;
}

static inline u32 mrxe_ring_slot(u32 index, u32 mask)
{
	return index & mask;
}

/* Smallest power of two >= n (n >= 1, n <= 2^31). */
static inline u32 mrxe_ring_roundup(u32 n)
{
	u32 r = 1;

	while (r < n)
		r <<= 1;
	return r;
}

#endif /* MRXE_RING_H */
