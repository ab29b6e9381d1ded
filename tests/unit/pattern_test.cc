// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// The checker of tools/mrxe-verify must catch what it claims to catch.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "../../tools/mrxe-verify/pattern.h"

namespace mv = mrxe_verify;

namespace {

TEST(Pattern, FillMatchesByteFunctionAtAnyAlignment)
{
	const uint64_t seed = mv::case_seed(1, 4097, 0, 7);
	for (uint64_t index0 : { 0ull, 1ull, 7ull, 8ull, 13ull }) {
		std::vector<uint8_t> b(1000);
		mv::fill_pattern(b.data(), b.size(), seed, index0);
		for (size_t i = 0; i < b.size(); i++)
			ASSERT_EQ(b[i], mv::pattern_byte(seed, index0 + i)) << i;
		EXPECT_TRUE(mv::check_pattern(b.data(), b.size(), seed, index0).ok);
	}
}

TEST(Pattern, SeedsDifferPerSizeIterOp)
{
	EXPECT_NE(mv::case_seed(1, 100, 0, 0), mv::case_seed(1, 100, 1, 0));
	EXPECT_NE(mv::case_seed(1, 100, 0, 0), mv::case_seed(2, 100, 0, 0));
	EXPECT_NE(mv::case_seed(1, 100, 0, 0), mv::case_seed(1, 101, 0, 0));
	EXPECT_NE(mv::case_seed(1, 100, 0, 0), mv::case_seed(1, 100, 0, 1));
}

TEST(Pattern, SingleFlippedByteIsFound)
{
	const uint64_t seed = 42;
	std::vector<uint8_t> b(4096 + 3);
	mv::fill_pattern(b.data(), b.size(), seed);
	for (size_t pos : { (size_t)0, (size_t)5, (size_t)8, (size_t)4095, b.size() - 1 }) {
		auto c = b;
		c[pos] ^= 0x10;
		auto m = mv::check_pattern(c.data(), c.size(), seed);
		ASSERT_FALSE(m.ok);
		EXPECT_EQ(m.first_bad, pos);
		EXPECT_EQ(m.nbad, 1u);
		EXPECT_EQ(m.expected, b[pos]);
		EXPECT_EQ(m.actual, (uint8_t)(b[pos] ^ 0x10));
	}
}

TEST(Pattern, MisplacedPacketAndStaleIterationAreFound)
{
	// A 256-byte "packet" placed one MTU too far is caught.
	const uint64_t seed = mv::case_seed(3, 1024, 0, 0);
	std::vector<uint8_t> ok(1024), bad(1024);
	mv::fill_pattern(ok.data(), ok.size(), seed);
	bad = ok;
	std::copy(ok.begin() + 256, ok.begin() + 512, bad.begin() + 512);
	auto m = mv::check_pattern(bad.data(), bad.size(), seed);
	ASSERT_FALSE(m.ok);
	EXPECT_EQ(m.first_bad / 8, 512u / 8);
	EXPECT_GT(m.nbad, 200u);

	// Data of the previous iteration fails the next iteration's check.
	std::vector<uint8_t> prev(1024);
	mv::fill_pattern(prev.data(), prev.size(), mv::case_seed(3, 1024, 1, 0));
	EXPECT_FALSE(mv::check_pattern(prev.data(), prev.size(), seed).ok);
}

TEST(Pattern, DestinationGuards)
{
	const uint64_t guard = 64, doff = 100, size = 33;
	const uint64_t seed = mv::case_seed(4, size, 0, 0);
	std::vector<uint8_t> buf(512, 0);

	mv::prepare_destination(buf.data(), doff, size, guard, seed);
	// Nothing arrived yet: the region holds canary, not data.
	auto r = mv::check_destination(buf.data(), doff, size, guard, seed);
	EXPECT_FALSE(r.m.ok);
	EXPECT_STREQ(r.where, "region");

	mv::fill_pattern(buf.data() + doff, size, seed);
	EXPECT_TRUE(mv::check_destination(buf.data(), doff, size, guard, seed).m.ok);

	auto b2 = buf;
	b2[doff + size] ^= 1;	// one byte too many written
	r = mv::check_destination(b2.data(), doff, size, guard, seed);
	EXPECT_FALSE(r.m.ok);
	EXPECT_STREQ(r.where, "guard-after");
	EXPECT_EQ(r.m.first_bad, 0u);

	b2 = buf;
	b2[doff - 1] ^= 1;	// written one byte early
	r = mv::check_destination(b2.data(), doff, size, guard, seed);
	EXPECT_FALSE(r.m.ok);
	EXPECT_STREQ(r.where, "guard-before");
	EXPECT_EQ(r.m.first_bad, guard - 1);

	// Zero-length message: only the guards matter.
	std::vector<uint8_t> z(256, 0);
	mv::prepare_destination(z.data(), 100, 0, guard, seed);
	EXPECT_TRUE(mv::check_destination(z.data(), 100, 0, guard, seed).m.ok);
	z[100] ^= 0xff;
	EXPECT_FALSE(mv::check_destination(z.data(), 100, 0, guard, seed).m.ok);
}

} // namespace
