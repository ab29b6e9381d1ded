// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// Unit tests for drivers/proto/mrxe_rtt.{h,c}: RFC 6298 SRTT/RTTVAR/RTO in
// integer ns, floor/ceiling, backoff and its reset, windowed min RTT.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

extern "C" {
#include "mrxe_rtt.h"
}

namespace {

constexpr u64 kUs = 1000, kMs = 1000 * kUs, kS = 1000 * kMs;

TEST(Rtt, InitialRtoIsClamped)
{
	struct mrxe_rtt r;

	mrxe_rtt_init(&r, 100 * kUs, 10 * kMs, 1 * kMs, 10 * kS);
	EXPECT_EQ(mrxe_rtt_srtt(&r), 0u);
	EXPECT_EQ(mrxe_rtt_min(&r), 0u);
	EXPECT_EQ(mrxe_rtt_rto(&r), 1 * kMs);
	mrxe_rtt_init(&r, 100 * kUs, 10 * kMs, 1 * kS, 10 * kS);
	EXPECT_EQ(mrxe_rtt_rto(&r), 10 * kMs);
	mrxe_rtt_init(&r, 100 * kUs, 10 * kMs, 0, 10 * kS);
	EXPECT_EQ(mrxe_rtt_rto(&r), 100 * kUs);
}

TEST(Rtt, Rfc6298FirstAndSubsequentSamples)
{
	struct mrxe_rtt r;

	mrxe_rtt_init(&r, 1, 10 * kS, 1 * kS, 10 * kS);
	mrxe_rtt_sample(&r, 800 * kUs, 1);
	// 2.2: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR
	EXPECT_EQ(mrxe_rtt_srtt(&r), 800 * kUs);
	EXPECT_EQ(r.rttvar_ns, 400 * kUs);
	EXPECT_EQ(mrxe_rtt_rto(&r), 800 * kUs + 1600 * kUs);
	mrxe_rtt_sample(&r, 400 * kUs, 2);
	// 2.3: RTTVAR = 3/4 * 400 + 1/4 * |800 - 400| = 400; SRTT = 7/8*800 + 1/8*400
	EXPECT_EQ(r.rttvar_ns, 400 * kUs);
	EXPECT_EQ(mrxe_rtt_srtt(&r), 750 * kUs);
	EXPECT_EQ(mrxe_rtt_rto(&r), 750 * kUs + 1600 * kUs);
	EXPECT_EQ(mrxe_rtt_min(&r), 400 * kUs);
}

TEST(Rtt, ConvergesOnConstantRtt)
{
	struct mrxe_rtt r;

	mrxe_rtt_init(&r, 1, 10 * kS, 1 * kS, 10 * kS);
	for (int i = 0; i < 200; i++)
		mrxe_rtt_sample(&r, 20 * kUs, i);
	EXPECT_NEAR((double)mrxe_rtt_srtt(&r), 20.0 * kUs, 10);
	EXPECT_LT(r.rttvar_ns, 10u);
	EXPECT_LT(mrxe_rtt_rto(&r), 20 * kUs + 50);
}

TEST(Rtt, FloorAndCeilingHold)
{
	struct mrxe_rtt r;

	mrxe_rtt_init(&r, 200 * kUs, 50 * kMs, 1 * kMs, 10 * kS);
	mrxe_rtt_sample(&r, 1 * kUs, 0);
	EXPECT_EQ(mrxe_rtt_rto(&r), 200 * kUs);
	mrxe_rtt_sample(&r, 10 * kS, 1);
	EXPECT_EQ(mrxe_rtt_rto(&r), 50 * kMs);
}

TEST(Rtt, BackoffDoublesUpToCeilingAndSampleResets)
{
	struct mrxe_rtt r;

	mrxe_rtt_init(&r, 100 * kUs, 10 * kMs, 1 * kMs, 10 * kS);
	for (int i = 0; i < 50; i++)
		mrxe_rtt_sample(&r, 100 * kUs, i);
	u64 base = mrxe_rtt_rto(&r);
	ASSERT_GE(base, 100 * kUs);
	mrxe_rtt_backoff(&r);
	EXPECT_EQ(mrxe_rtt_rto(&r), 2 * base);
	mrxe_rtt_backoff(&r);
	EXPECT_EQ(mrxe_rtt_rto(&r), 4 * base);
	for (int i = 0; i < 1000; i++)
		mrxe_rtt_backoff(&r);	// no overflow past the ceiling
	EXPECT_EQ(mrxe_rtt_rto(&r), 10 * kMs);
	EXPECT_LT(r.backoff, 64u);
	mrxe_rtt_sample(&r, 100 * kUs, 100);
	EXPECT_EQ(r.backoff, 0u);
	EXPECT_LT(mrxe_rtt_rto(&r), 2 * base);
}

// RFC 4015 4: a spurious RTO's silence (plus a quarter) becomes a lower
// bound of the RTO, capped at the ceiling, halved every min window without
// a new one, and gone once it reaches the floor.
TEST(Rtt, SpuriousRtoStallHoldsThenFades)
{
	struct mrxe_rtt r;

	mrxe_rtt_init(&r, 1 * kMs, 1 * kS, 10 * kMs, 10 * kS);
	mrxe_rtt_sample(&r, 100 * kUs, 0);
	EXPECT_EQ(mrxe_rtt_rto(&r), 1 * kMs);
	mrxe_rtt_spurious(&r, 80 * kMs, 1 * kS);
	EXPECT_EQ(mrxe_rtt_rto(&r), 100 * kMs);
	// a shorter silence does not lower it
	mrxe_rtt_spurious(&r, 8 * kMs, 2 * kS);
	EXPECT_EQ(mrxe_rtt_rto(&r), 100 * kMs);
	// backoff doubles from it
	mrxe_rtt_backoff(&r);
	EXPECT_EQ(mrxe_rtt_rto(&r), 200 * kMs);
	// samples within the window keep it
	for (int i = 0; i < 1000; i++)
		mrxe_rtt_sample(&r, 100 * kUs, 2 * kS + i * kMs);
	EXPECT_EQ(mrxe_rtt_rto(&r), 100 * kMs);
	// 10 s after the last spurious RTO it halves, and so on
	mrxe_rtt_sample(&r, 100 * kUs, 12 * kS + 1);
	EXPECT_EQ(mrxe_rtt_rto(&r), 50 * kMs);
	u64 t = 12 * kS + 1;
	for (int i = 0; i < 10; i++) {
		t += 10 * kS + 1;
		mrxe_rtt_sample(&r, 100 * kUs, t);
	}
	EXPECT_EQ(r.stall_ns, 0u);
	EXPECT_EQ(mrxe_rtt_rto(&r), 1 * kMs);
	// the ceiling holds
	mrxe_rtt_spurious(&r, 10 * kS, t);
	EXPECT_EQ(mrxe_rtt_rto(&r), 1 * kS);
}

TEST(Rtt, WindowedMinExpires)
{
	struct mrxe_rtt r;
	const u64 win = 10 * kMs;

	mrxe_rtt_init(&r, 1, kS, kMs, win);
	mrxe_rtt_sample(&r, 10 * kUs, 0);
	mrxe_rtt_sample(&r, 30 * kUs, 1 * kMs);
	EXPECT_EQ(mrxe_rtt_min(&r), 10 * kUs);
	// Path got longer: after one window the old minimum is forgotten.
	for (u64 t = 2 * kMs; t <= 3 * win; t += kMs)
		mrxe_rtt_sample(&r, 30 * kUs + (t % 3), t);
	EXPECT_GE(mrxe_rtt_min(&r), 30 * kUs);
	EXPECT_LE(mrxe_rtt_min(&r), 30 * kUs + 2);
	// A lower sample is taken at once.
	mrxe_rtt_sample(&r, 5 * kUs, 4 * win);
	EXPECT_EQ(mrxe_rtt_min(&r), 5 * kUs);
}

// Random samples: RTO always within [floor, ceiling]; min_rtt checked
// against a brute-force reference.
TEST(Rtt, RandomizedBoundsAndMin)
{
	const u64 floor = 50 * kUs, ceil = 20 * kMs, win = 5 * kMs;

	for (unsigned seed : { 1u, 2u, 3u, 4u, 5u }) {
		std::mt19937_64 rng(seed);
		struct mrxe_rtt r;
		std::vector<std::pair<u64, u64>> hist;
		u64 t = 0;

		mrxe_rtt_init(&r, floor, ceil, kMs, win);
		for (int i = 0; i < 5000; i++) {
			t += rng() % (200 * kUs);
			u64 s = 1 + rng() % (i % 1000 < 500 ? 100 * kUs : 3 * kMs);
			if (rng() % 4 == 0)
				mrxe_rtt_backoff(&r);
			mrxe_rtt_sample(&r, s, t);
			hist.push_back({ t, s });
			if (rng() % 3 == 0)
				mrxe_rtt_backoff(&r);
			u64 rto = mrxe_rtt_rto(&r);
			ASSERT_GE(rto, floor) << "seed " << seed << " i " << i;
			ASSERT_LE(rto, ceil) << "seed " << seed << " i " << i;
			// The Nichols filter is approximate: the estimate is a
			// sample of the last window, and no larger than any
			// sample of the last quarter window.
			u64 lo = UINT64_MAX, lo4 = UINT64_MAX;
			for (auto it = hist.rbegin(); it != hist.rend() &&
			     t - it->first <= win; ++it) {
				lo = it->second < lo ? it->second : lo;
				if (t - it->first <= win / 4)
					lo4 = it->second < lo4 ? it->second : lo4;
			}
			ASSERT_GE(mrxe_rtt_min(&r), lo) << "seed " << seed << " i " << i;
			ASSERT_LE(mrxe_rtt_min(&r), lo4) << "seed " << seed << " i " << i;
		}
	}
}

} // namespace
