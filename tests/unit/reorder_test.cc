// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// Unit tests for drivers/proto/mrxe_reorder.{h,c}: the receiver reorder
// window (NEW / DUPLICATE / OUT_OF_WINDOW, ePSN advance, PSN wraparound)
// and the SACK blocks it reports, against a brute-force reference.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>

extern "C" {
#include "mrxe_reorder.h"
}

namespace {

constexpr u32 kWin = MRXE_SACK_WINDOW;

u32 add(u32 p, u32 n)
{
	return mrxe_psn_add(p, n);
}

// Every PSN the ACK says is received, as offsets from epsn.
std::set<u32> reported(const struct mrxe_sack_info &si)
{
	std::set<u32> s;

	for (u8 b = 0; b < si.nblocks; b++)
		for (u32 i = 0; i < 64; i++)
			if (si.blk[b].bitmap >> i & 1)
				s.insert((u32)mrxe_psn_diff(add(si.blk[b].base, i), si.epsn));
	return s;
}

TEST(Reorder, InOrderAdvances)
{
	struct mrxe_reorder rw;

	mrxe_reorder_init(&rw, 100);
	for (u32 p = 100; p < 110; p++)
		EXPECT_EQ(mrxe_reorder_accept(&rw, p), MRXE_RX_NEW);
	EXPECT_EQ(mrxe_reorder_epsn(&rw), 110u);
	EXPECT_EQ(mrxe_reorder_held(&rw), 0u);
	EXPECT_EQ(rw.cnt.ooo, 0u);
	struct mrxe_sack_info si;
	EXPECT_EQ(mrxe_reorder_sack(&rw, &si, 4), 0);
	EXPECT_EQ(si.epsn, 110u);
	EXPECT_EQ(si.trigger_psn, 109u);
	EXPECT_FALSE(si.trigger_dup);
}

TEST(Reorder, EmptyAckBeforeAnyPacket)
{
	struct mrxe_reorder rw;
	struct mrxe_sack_info si;

	mrxe_reorder_init(&rw, 0);
	EXPECT_EQ(mrxe_reorder_sack(&rw, &si, 4), 0);
	EXPECT_EQ(si.epsn, 0u);
	EXPECT_EQ(si.trigger_psn, (u32)MRXE_PSN_MASK);	// "nothing yet"
}

TEST(Reorder, GapFillAcrossPsnWrap)
{
	struct mrxe_reorder rw;
	const u32 start = 0xfffffe;

	mrxe_reorder_init(&rw, start);
	EXPECT_EQ(mrxe_reorder_accept(&rw, 1), MRXE_RX_NEW);	// start + 3
	EXPECT_EQ(mrxe_reorder_accept(&rw, 0xffffff), MRXE_RX_NEW);
	EXPECT_EQ(mrxe_reorder_epsn(&rw), start);
	EXPECT_EQ(mrxe_reorder_held(&rw), 2u);
	struct mrxe_sack_info si;
	ASSERT_EQ(mrxe_reorder_sack(&rw, &si, 4), 1);
	EXPECT_EQ(si.blk[0].base, 0xffffffu);
	EXPECT_EQ(si.blk[0].bitmap, 0x5ull);	// 0xffffff and 1, not 0
	EXPECT_EQ(mrxe_reorder_accept(&rw, start), MRXE_RX_NEW);
	EXPECT_EQ(mrxe_reorder_epsn(&rw), 0u);
	EXPECT_EQ(mrxe_reorder_accept(&rw, 0), MRXE_RX_NEW);
	EXPECT_EQ(mrxe_reorder_epsn(&rw), 2u);
	EXPECT_EQ(mrxe_reorder_held(&rw), 0u);
	EXPECT_EQ(rw.cnt.ooo, 2u);
}

TEST(Reorder, Duplicates)
{
	struct mrxe_reorder rw;
	struct mrxe_sack_info si;

	mrxe_reorder_init(&rw, 10);
	EXPECT_EQ(mrxe_reorder_accept(&rw, 10), MRXE_RX_NEW);
	EXPECT_EQ(mrxe_reorder_accept(&rw, 10), MRXE_RX_DUPLICATE);	// below ePSN
	EXPECT_EQ(mrxe_reorder_accept(&rw, 20), MRXE_RX_NEW);
	EXPECT_EQ(mrxe_reorder_accept(&rw, 20), MRXE_RX_DUPLICATE);	// held
	mrxe_reorder_sack(&rw, &si, 4);
	EXPECT_TRUE(si.trigger_dup);
	EXPECT_EQ(si.trigger_psn, 20u);
	// Far behind (but within 2^23): an old duplicate, never new.
	EXPECT_EQ(mrxe_reorder_accept(&rw, add(10, MRXE_PSN_MASK - 1000)),
		  MRXE_RX_DUPLICATE);
	EXPECT_EQ(rw.cnt.duplicate, 3u);
	EXPECT_EQ(rw.cnt.accepted, 2u);
}

TEST(Reorder, WindowEdge)
{
	struct mrxe_reorder rw;
	const u32 e = 0xffff80;	// the window straddles the wrap

	mrxe_reorder_init(&rw, e);
	EXPECT_EQ(mrxe_reorder_accept(&rw, add(e, kWin)), MRXE_RX_OUT_OF_WINDOW);
	EXPECT_EQ(mrxe_reorder_accept(&rw, add(e, 1u << 22)), MRXE_RX_OUT_OF_WINDOW);
	EXPECT_EQ(mrxe_reorder_accept(&rw, add(e, kWin - 1)), MRXE_RX_NEW);
	EXPECT_EQ(rw.cnt.out_of_window, 2u);
	// The last slot of the window is reported, the slot ePSN aliases is not.
	struct mrxe_sack_info si;
	ASSERT_EQ(mrxe_reorder_sack(&rw, &si, 4), 1);
	EXPECT_EQ(reported(si), std::set<u32>{ kWin - 1 });
	// Fill the whole window: ePSN jumps by 256.
	for (u32 i = 0; i < kWin - 1; i++)
		ASSERT_EQ(mrxe_reorder_accept(&rw, add(e, i)), MRXE_RX_NEW);
	EXPECT_EQ(mrxe_reorder_epsn(&rw), add(e, kWin));
	EXPECT_EQ(mrxe_reorder_held(&rw), 0u);
	EXPECT_EQ(mrxe_reorder_accept(&rw, add(e, 2 * kWin - 1)), MRXE_RX_NEW);
	EXPECT_EQ(mrxe_reorder_accept(&rw, add(e, 2 * kWin)), MRXE_RX_OUT_OF_WINDOW);
}

TEST(Reorder, FewerBlocksRotateOverEveryHole)
{
	struct mrxe_reorder rw;

	mrxe_reorder_init(&rw, 5);
	// One received PSN in each of the four 64-PSN blocks.
	const u32 offs[] = { 3, 70, 140, 250 };
	for (u32 o : offs)
		ASSERT_EQ(mrxe_reorder_accept(&rw, add(5, o)), MRXE_RX_NEW);
	for (u8 maxb = 1; maxb <= 3; maxb++) {
		std::set<u32> seen;
		for (int ack = 0; ack < 4; ack++) {
			struct mrxe_sack_info si;
			ASSERT_EQ(mrxe_reorder_sack(&rw, &si, maxb), maxb);
			auto r = reported(si);
			// the newest arrival's block goes first when 2+ fit
			if (maxb >= 2) {
				EXPECT_TRUE(r.count(250)) << (int)maxb;
			}
			seen.insert(r.begin(), r.end());
		}
		EXPECT_EQ(seen, std::set<u32>(std::begin(offs), std::end(offs)))
			<< "max_blocks " << (int)maxb;
	}
	struct mrxe_sack_info si;
	ASSERT_EQ(mrxe_reorder_sack(&rw, &si, 4), 4);
	EXPECT_EQ(reported(si).size(), 4u);
}

// Random arrivals (loss, reordering, duplicates, stale and far-ahead PSNs)
// against a std::set model, starting just below the 2^24 wrap.
TEST(Reorder, RandomizedAgainstModel)
{
	std::vector<unsigned> seeds = { 1, 7, 42, 1234, 99991 };
	std::random_device rd;

	for (int i = 0; i < 3; i++)
		seeds.push_back(rd());
	for (unsigned seed : seeds) {
		SCOPED_TRACE("seed " + std::to_string(seed));
		std::mt19937 rng(seed);
		struct mrxe_reorder rw;
		const u32 start = MRXE_PSN_MASK - 300;
		std::set<u64> got;	// absolute sequence numbers
		u64 epsn = 0;		// absolute model ePSN

		mrxe_reorder_init(&rw, start);
		for (int step = 0; step < 6000; step++) {
			// Mostly near ePSN, sometimes old or beyond the window.
			s64 off = (s64)(rng() % (kWin + 40)) - 20;
			if (rng() % 50 == 0)
				off = (s64)(rng() % 100000) - 50000;
			if ((s64)epsn + off < 0)
				continue;
			u64 abs = epsn + off;
			auto v = mrxe_reorder_accept(&rw, add(start, (u32)abs));
			enum mrxe_rx_verdict want;
			if (off >= (s64)kWin)
				want = MRXE_RX_OUT_OF_WINDOW;
			else if (abs < epsn || got.count(abs))
				want = MRXE_RX_DUPLICATE;
			else
				want = MRXE_RX_NEW;
			ASSERT_EQ(v, want) << "step " << step << " off " << off;
			if (v == MRXE_RX_NEW)
				got.insert(abs);
			while (got.count(epsn))
				got.erase(epsn++);
			ASSERT_EQ(mrxe_reorder_epsn(&rw), add(start, (u32)epsn));
			ASSERT_EQ(mrxe_reorder_held(&rw), got.size());
			struct mrxe_sack_info si;
			mrxe_reorder_sack(&rw, &si, MRXE_SACK_MAX_BLOCKS);
			std::set<u32> want_r;
			for (u64 g : got)
				want_r.insert((u32)(g - epsn));
			ASSERT_EQ(reported(si), want_r) << "step " << step;
		}
	}
}

} // namespace
