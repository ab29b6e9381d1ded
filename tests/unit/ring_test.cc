// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// Unit tests for drivers/proto/mrxe_ring.h: free-running u32 index math.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

extern "C" {
#include "mrxe_ring.h"
}

namespace {

constexpr u32 kMask = 7; // 8 slots

TEST(Ring, EmptyAtStart)
{
	EXPECT_TRUE(mrxe_ring_empty(0, 0));
	EXPECT_FALSE(mrxe_ring_full(0, 0, kMask));
	EXPECT_EQ(mrxe_ring_count(0, 0), 0u);
	EXPECT_EQ(mrxe_ring_free(0, 0, kMask), 8u);
	EXPECT_TRUE(mrxe_ring_valid(0, 0, kMask));
}

TEST(Ring, FullUsesEverySlot)
{
	EXPECT_FALSE(mrxe_ring_full(7, 0, kMask));
	EXPECT_EQ(mrxe_ring_free(7, 0, kMask), 1u);
	EXPECT_TRUE(mrxe_ring_full(8, 0, kMask));
	EXPECT_EQ(mrxe_ring_free(8, 0, kMask), 0u);
	EXPECT_EQ(mrxe_ring_count(8, 0), 8u);
	EXPECT_FALSE(mrxe_ring_empty(8, 0));
	EXPECT_TRUE(mrxe_ring_valid(8, 0, kMask));
}

TEST(Ring, WrapAroundAt2Pow32)
{
	// Producer has wrapped past 2^32, consumer has not yet.
	const u32 cons = 0xfffffffcu;
	const u32 prod = 0x00000002u; // 6 entries after cons
	EXPECT_EQ(mrxe_ring_count(prod, cons), 6u);
	EXPECT_EQ(mrxe_ring_free(prod, cons, kMask), 2u);
	EXPECT_FALSE(mrxe_ring_empty(prod, cons));
	EXPECT_FALSE(mrxe_ring_full(prod, cons, kMask));
	EXPECT_TRUE(mrxe_ring_valid(prod, cons, kMask));

	EXPECT_TRUE(mrxe_ring_full(0x00000004u, cons, kMask));
	EXPECT_TRUE(mrxe_ring_valid(0x00000004u, cons, kMask));
	EXPECT_TRUE(mrxe_ring_empty(0xffffffffu + 1u, 0u));

	// Slots keep cycling across the wrap.
	EXPECT_EQ(mrxe_ring_slot(0xffffffffu, kMask), 7u);
	EXPECT_EQ(mrxe_ring_slot(0x00000000u, kMask), 0u);
	EXPECT_EQ(mrxe_ring_slot(0xfffffffcu, kMask), 4u);
}

TEST(Ring, InvalidIndexPairs)
{
	// Producer more than nslots ahead: corrupt or hostile.
	EXPECT_FALSE(mrxe_ring_valid(9, 0, kMask));
	EXPECT_FALSE(mrxe_ring_valid(0x00000005u, 0xfffffffcu, kMask));
	// Consumer ahead of producer (prod - cons wraps to a huge value).
	EXPECT_FALSE(mrxe_ring_valid(0, 1, kMask));
	EXPECT_FALSE(mrxe_ring_valid(0xfffffffcu, 0x00000002u, kMask));
	EXPECT_FALSE(mrxe_ring_valid(100, 0xffffffffu - 5, kMask));
	// Largest ring (2^31 slots): any prod - cons up to 2^31 is fine.
	EXPECT_TRUE(mrxe_ring_valid(0x80000000u, 0, 0x7fffffffu));
	EXPECT_FALSE(mrxe_ring_valid(0x80000001u, 0, 0x7fffffffu));
}

TEST(Ring, Roundup)
{
	EXPECT_EQ(mrxe_ring_roundup(1), 1u);
	EXPECT_EQ(mrxe_ring_roundup(2), 2u);
	EXPECT_EQ(mrxe_ring_roundup(3), 4u);
	EXPECT_EQ(mrxe_ring_roundup(4), 4u);
	EXPECT_EQ(mrxe_ring_roundup(5), 8u);
	EXPECT_EQ(mrxe_ring_roundup(1000), 1024u);
	EXPECT_EQ(mrxe_ring_roundup(1024), 1024u);
	EXPECT_EQ(mrxe_ring_roundup(1025), 2048u);
	EXPECT_EQ(mrxe_ring_roundup(0x40000001u), 0x80000000u);
	EXPECT_EQ(mrxe_ring_roundup(0x80000000u), 0x80000000u);
	for (u32 s = 0; s < 31; s++) {
		const u32 p = 1u << s;
		EXPECT_EQ(mrxe_ring_roundup(p), p) << s;
		if (s > 1) {
			EXPECT_EQ(mrxe_ring_roundup(p - 1), p) << s;
		}
		EXPECT_EQ(mrxe_ring_roundup(p + 1), p << 1) << s;
	}
}

// Model a producer/consumer pair through several 2^32 wraps and check every
// value that goes in comes out, in order, in the slot the math says.
TEST(Ring, SimulatedTrafficAcrossWrap)
{
	constexpr u32 mask = 15;
	std::vector<u64> slots(mask + 1, ~0ull);
	u32 prod = 0xffffff00u, cons = 0xffffff00u;
	u64 next_in = 0, next_out = 0;
	unsigned step = 0;

	while (next_out < 4096) {
		// Burst sizes vary so the full/empty edges are hit.
		unsigned burst = (step * 7 + 3) % (mask + 3);
		for (unsigned i = 0; i < burst && !mrxe_ring_full(prod, cons, mask); i++) {
			slots[mrxe_ring_slot(prod, mask)] = next_in++;
			prod++;
		}
		ASSERT_TRUE(mrxe_ring_valid(prod, cons, mask));
		ASSERT_LE(mrxe_ring_count(prod, cons), mask + 1);
		unsigned take = (step * 5 + 1) % (mask + 2);
		for (unsigned i = 0; i < take && !mrxe_ring_empty(prod, cons); i++) {
			ASSERT_EQ(slots[mrxe_ring_slot(cons, mask)], next_out);
			next_out++;
			cons++;
		}
		ASSERT_EQ(mrxe_ring_count(prod, cons) + mrxe_ring_free(prod, cons, mask),
			  mask + 1);
		step++;
	}
	// We crossed 2^32 at least once.
	EXPECT_LT(prod, 0xffffff00u);
}

} // namespace
