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
#include "sim_seeds.h"
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

// The window has MRXE_SACK_WIN_BLOCKS blocks, an ACK carries at most
// MRXE_SACK_MAX_BLOCKS: arrivals no ACK reported yet go first, so every
// arrival is in the next ACK when no more blocks than fit got one.
TEST(Reorder, UnreportedArrivalsGoFirst)
{
	std::mt19937 rng(7);

	for (int round = 0; round < 200; round++) {
		struct mrxe_reorder rw;
		const u32 e = rng() & MRXE_PSN_MASK;

		mrxe_reorder_init(&rw, e);
		// one PSN held in every block, all reported (drained)
		for (u32 k = 0; k < MRXE_SACK_WIN_BLOCKS; k++)
			ASSERT_EQ(mrxe_reorder_accept(&rw, add(e, 1 + 64 * k + rng() % 32)),
				  MRXE_RX_NEW);
		for (int a = 0; a < MRXE_SACK_WIN_BLOCKS; a++) {
			struct mrxe_sack_info si;

			mrxe_reorder_sack(&rw, &si, MRXE_SACK_MAX_BLOCKS);
		}
		// new arrivals in up to MRXE_SACK_MAX_BLOCKS distinct blocks
		std::set<u32> fresh;
		u32 n = 1 + rng() % MRXE_SACK_MAX_BLOCKS;
		while (fresh.size() < n) {
			u32 off = 1 + 64 * (rng() % MRXE_SACK_WIN_BLOCKS) + 32 + rng() % 32;

			bool clash = false;
			for (u32 f : fresh)
				clash |= (f - 1) / 64 == (off - 1) / 64;
			if (clash)
				continue;
			ASSERT_EQ(mrxe_reorder_accept(&rw, add(e, off)), MRXE_RX_NEW);
			fresh.insert(off);
		}
		struct mrxe_sack_info si;
		ASSERT_EQ(mrxe_reorder_sack(&rw, &si, MRXE_SACK_MAX_BLOCKS),
			  MRXE_SACK_MAX_BLOCKS);
		auto r = reported(si);
		for (u32 f : fresh)
			EXPECT_TRUE(r.count(f)) << "round " << round << " offset " << f;
	}
}

// A work-item run received packets in more blocks than one ACK holds:
// the receiver sends a burst.  At no ACK of it may the sender see a
// delivered PSN below the highest it was told of and not be told of that
// one too (RACK would call it lost), and the burst ends with everything
// reported and the newest arrival in the last ACK.
TEST(Reorder, BurstReportsOldestFirst)
{
	std::mt19937 rng(11);

	for (int round = 0; round < 300; round++) {
		struct mrxe_reorder rw;
		const u32 e = rng() & MRXE_PSN_MASK;
		std::set<u32> got;	// offsets from e, received above ePSN

		mrxe_reorder_init(&rw, e);
		u32 n = 50 + rng() % 600, newest = 0;
		for (u32 i = 0; i < n; i++) {
			u32 off = 1 + rng() % (kWin - 1);

			if (mrxe_reorder_accept(&rw, add(e, off)) == MRXE_RX_NEW)
				got.insert(off);
			newest = off;
		}
		std::set<u32> told;
		struct mrxe_sack_info si;
		int acks = 0;
		do {
			ASSERT_LT(acks++, MRXE_SACK_WIN_BLOCKS) << "round " << round;
			mrxe_reorder_sack(&rw, &si, MRXE_SACK_MAX_BLOCKS);
			for (u32 r : reported(si))
				told.insert(r);
			u32 hi = *told.rbegin();
			for (u32 g : got)
				if (g < hi)
					ASSERT_TRUE(told.count(g)) << "round " << round << " ack " << acks
								   << ": " << g << " below " << hi << " not told";
		} while (mrxe_reorder_unreported(&rw));
		EXPECT_EQ(told, got) << "round " << round;
		EXPECT_TRUE(reported(si).count(newest) || !got.count(newest)) << "round " << round;
	}
}

// Random arrivals (loss, reordering, duplicates, stale and far-ahead PSNs)
// against a std::set model, starting just below the 2^24 wrap.
TEST(Reorder, RandomizedAgainstModel)
{
	for (unsigned seed : sim_seeds({ 1, 7, 42, 1234, 99991 }, 3)) {
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
			std::set<u32> want_r, union_r;
			for (u64 g : got)
				want_r.insert((u32)(g - epsn));
			// One ACK holds MRXE_SACK_MAX_BLOCKS of the window's
			// MRXE_SACK_WIN_BLOCKS blocks: each ACK reports only
			// what is held, and successive ACKs report all of it.
			for (int a = 0; a < MRXE_SACK_WIN_BLOCKS; a++) {
				struct mrxe_sack_info si;

				mrxe_reorder_sack(&rw, &si, MRXE_SACK_MAX_BLOCKS);
				for (u32 r : reported(si)) {
					ASSERT_TRUE(want_r.count(r)) << "step " << step << " reported " << r;
					union_r.insert(r);
				}
			}
			ASSERT_EQ(union_r, want_r) << "step " << step;
		}
	}
}

} // namespace
