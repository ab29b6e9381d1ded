// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// Unit tests for drivers/proto/mrxe_sack.{h,c}: the sender scoreboard,
// RACK loss detection (RFC 8985 6), TLP (7), RTO (RFC 6298), Karn RTT
// samples and spurious-retransmission detection.  Directed edge cases here;
// the randomized end-to-end simulation is in sack_sim_test.cc.
#include <gtest/gtest.h>

#include <cstdint>

extern "C" {
#include "mrxe_sack.h"
}

namespace {

constexpr u64 kUs = 1000, kMs = 1000 * kUs;

struct mrxe_sack_cfg cfg(bool tlp = true)
{
	struct mrxe_sack_cfg c = {};

	c.rto_floor_ns = 200 * kUs;
	c.rto_ceil_ns = 100 * kMs;
	c.rto_init_ns = 1 * kMs;
	c.min_rtt_win_ns = 10000 * kMs;
	c.no_tlp = !tlp;
	return c;
}

struct mrxe_sack_info ack(u32 epsn)
{
	struct mrxe_sack_info si = {};

	si.epsn = epsn & MRXE_PSN_MASK;
	si.trigger_psn = mrxe_psn_add(epsn, MRXE_PSN_MASK);
	return si;
}

// SACK PSNs [from, to) above epsn in one block at base epsn + 1.
struct mrxe_sack_info sack(u32 epsn, u32 from, u32 to)
{
	struct mrxe_sack_info si = ack(epsn);

	si.nblocks = 1;
	si.blk[0].base = mrxe_psn_add(epsn, 1);
	for (u32 p = from; p != to; p = mrxe_psn_add(p, 1))
		si.blk[0].bitmap |= 1ULL << (mrxe_psn_diff(p, epsn) - 1);
	si.trigger_psn = mrxe_psn_add(to, MRXE_PSN_MASK);
	return si;
}

class Sack : public ::testing::Test {
protected:
	struct mrxe_sack sb;

	void init(u32 isn, bool tlp = true)
	{
		auto c = cfg(tlp);
		mrxe_sack_init(&sb, isn, &c);
	}

	// Warm the estimator: n packets with a constant 20 us RTT.
	u64 warm(u64 now, int n = MRXE_SACK_REO_WARMUP)
	{
		for (int i = 0; i < n; i++) {
			EXPECT_EQ(mrxe_sack_on_send(&sb, sb.nxt, now, 0, 100), 0);
			now += 20 * kUs;
			auto si = ack(sb.nxt);
			EXPECT_EQ(mrxe_sack_on_ack(&sb, &si, 0, now, nullptr), 0);
		}
		return now;
	}

	// @n packets from sb.nxt (*@b), 1 us apart from @t; the RTO fires
	// and the oldest is sent again (*@psn).  Returns the RTO's time.
	u64 rto_resend(u64 t, u32 n, u32 *b, u32 *psn)
	{
		*b = sb.nxt;
		for (u32 i = 0; i < n; i++)
			EXPECT_EQ(mrxe_sack_on_send(&sb, *b + i, t + i * kUs, 0, 1), 0);
		u64 dl = mrxe_sack_timer(&sb, nullptr);
		mrxe_sack_on_timer(&sb, dl, nullptr);
		EXPECT_TRUE(mrxe_sack_next_lost(&sb, psn));
		EXPECT_EQ(mrxe_sack_on_retransmit(&sb, *psn, dl, 0), 0);
		return dl;
	}

	// A READ chunk of @n PSNs sent at @t from @b, then PSNs @from .. @n - 1
	// re-sent at @rt in one packet (the first counted, the rest continued).
	void read_run(u32 b, u32 n, u64 t, u32 from, u64 rt)
	{
		for (u32 i = 0; i < n; i++)
			ASSERT_EQ(mrxe_sack_on_send(&sb, b + i, t, 0, i ? 0 : 4096), 0);
		ASSERT_EQ(mrxe_sack_on_retransmit(&sb, b + from, rt, 0), 0);
		for (u32 i = from + 1; i < n; i++)
			ASSERT_EQ(mrxe_sack_on_retransmit_cont(&sb, b + i, rt, 0), 0);
	}

	void TearDown() override
	{
		EXPECT_EQ(mrxe_sack_check(&sb), 0);
	}
};

TEST_F(Sack, CumulativeAckDeliversAndSamplesRtt)
{
	init(1000);
	for (u32 i = 0; i < 10; i++)
		ASSERT_EQ(mrxe_sack_on_send(&sb, 1000 + i, i * kUs, 1, 64), 0);
	EXPECT_EQ(sb.n_inflight, 10u);
	EXPECT_EQ(mrxe_sack_check(&sb), 0);
	struct mrxe_sack_ack_res r;
	auto si = ack(1010);
	ASSERT_EQ(mrxe_sack_on_ack(&sb, &si, 0, 30 * kUs, &r), 0);
	EXPECT_EQ(r.delivered, 10u);
	EXPECT_EQ(r.bytes, 640u);
	EXPECT_EQ(r.rtt_ns, 21 * kUs);	// newest: sent at 9 us
	EXPECT_TRUE(r.una_moved);
	EXPECT_EQ(sb.una, 1010u);
	EXPECT_EQ(mrxe_sack_outstanding(&sb), 0u);
	enum mrxe_sack_timer_kind k;
	EXPECT_EQ(mrxe_sack_timer(&sb, &k), 0u);
	EXPECT_EQ(k, MRXE_SACK_T_NONE);
}

TEST_F(Sack, WindowFullAndWrongPsn)
{
	const u32 start = MRXE_PSN_MASK + 1 - MRXE_SACK_WINDOW + 0x100;

	init(start);
	for (u32 i = 0; i < MRXE_SACK_WINDOW; i++)
		ASSERT_EQ(mrxe_sack_on_send(&sb, mrxe_psn_add(start, i), 0, 0, 1), 0);
	EXPECT_TRUE(mrxe_sack_full(&sb));
	EXPECT_EQ(sb.nxt, 0x100u);	// wrapped
	EXPECT_EQ(mrxe_sack_on_send(&sb, 0x100, 0, 0, 1), MRXE_SACK_EFULL);
	EXPECT_EQ(mrxe_sack_on_send(&sb, 0x105, 0, 0, 1), MRXE_SACK_EPSN);
	EXPECT_EQ(mrxe_sack_on_retransmit(&sb, 0x105, 0, 0), MRXE_SACK_EPSN);
	EXPECT_EQ(mrxe_sack_on_retransmit(&sb, mrxe_psn_add(start, -0x100), 0, 0),
		  MRXE_SACK_EPSN);
	// An ACK across the wrap frees it.
	auto si = ack(mrxe_psn_add(start, 0x10));
	ASSERT_EQ(mrxe_sack_on_ack(&sb, &si, 0, 10 * kUs, nullptr), 0);
	EXPECT_EQ(mrxe_sack_outstanding(&sb), MRXE_SACK_WINDOW - 0x10u);
	EXPECT_EQ(mrxe_sack_on_send(&sb, 0x100, 11 * kUs, 0, 1), 0);
}

TEST_F(Sack, BadStaleAndEmptyAcks)
{
	init(50);
	for (u32 i = 0; i < 5; i++)
		mrxe_sack_on_send(&sb, 50 + i, 0, 0, 1);
	struct mrxe_sack_ack_res r;
	auto bad = ack(56);	// beyond nxt
	EXPECT_EQ(mrxe_sack_on_ack(&sb, &bad, 0, kUs, &r), MRXE_SACK_EACK);
	EXPECT_EQ(sb.cnt.bad_ack, 1u);
	EXPECT_EQ(sb.n_inflight, 5u);
	auto empty = ack(50);
	EXPECT_EQ(mrxe_sack_on_ack(&sb, &empty, 0, kUs, &r), 0);
	EXPECT_EQ(r.delivered, 0u);
	auto stale = ack(40);
	EXPECT_EQ(mrxe_sack_on_ack(&sb, &stale, 0, kUs, &r), 0);
	EXPECT_EQ(r.delivered, 0u);
	EXPECT_EQ(sb.una, 50u);
	// SACK bits beyond nxt are ignored, those in the window count.
	auto s = sack(50, 52, 60);
	EXPECT_EQ(mrxe_sack_on_ack(&sb, &s, 0, kUs, &r), 0);
	EXPECT_EQ(r.delivered, 3u);
	EXPECT_EQ(sb.n_sacked, 3u);
}

// One gap is not a loss: only time since a later delivery decides.
TEST_F(Sack, RackNeedsTimeNotAGap)
{
	init(0);
	u64 t = warm(0);	// min_rtt = srtt = 20 us: reo_wnd = 5 us
	ASSERT_EQ(mrxe_sack_reo_wnd(&sb), 5 * kUs);
	u32 base = sb.nxt;
	for (u32 i = 0; i < 4; i++)
		mrxe_sack_on_send(&sb, base + i, t + i * kUs, 0, 1);
	// base + 1 .. base + 3 delivered 20 us after they were sent.
	struct mrxe_sack_ack_res r;
	auto s = sack(base, base + 1, base + 4);
	ASSERT_EQ(mrxe_sack_on_ack(&sb, &s, 0, t + 23 * kUs, &r), 0);
	EXPECT_EQ(r.delivered, 3u);
	EXPECT_EQ(r.lost, 0u);
	EXPECT_EQ(sb.cnt.holes, 1u);
	u32 psn;
	EXPECT_FALSE(mrxe_sack_next_lost(&sb, &psn));
	// The reordering timer: base was sent at t, rack.rtt 20 us, reo 5 us.
	enum mrxe_sack_timer_kind k;
	u64 dl = mrxe_sack_timer(&sb, &k);
	EXPECT_EQ(k, MRXE_SACK_T_REO);
	EXPECT_EQ(dl, t + 25 * kUs);
	EXPECT_EQ(mrxe_sack_on_timer(&sb, dl - 1, &psn), 0u);
	EXPECT_EQ(mrxe_sack_on_timer(&sb, dl, &psn), (u32)MRXE_SACK_EV_LOST);
	ASSERT_TRUE(mrxe_sack_next_lost(&sb, &psn));
	EXPECT_EQ(psn, base);
	EXPECT_EQ(sb.cnt.lost, 1u);
	ASSERT_EQ(mrxe_sack_on_retransmit(&sb, psn, dl, 2), 0);
	EXPECT_EQ(mrxe_sack_ent(&sb, psn)->retx, 1);
	EXPECT_EQ(mrxe_sack_ent(&sb, psn)->path, 2);
	// Its ACK 20 us later: no RTT sample (Karn), not spurious.
	auto a = ack(base + 4);
	ASSERT_EQ(mrxe_sack_on_ack(&sb, &a, 0, dl + 20 * kUs, &r), 0);
	EXPECT_EQ(r.delivered, 1u);
	EXPECT_EQ(r.rtt_ns, 0u);
	EXPECT_EQ(sb.cnt.spurious, 0u);
	EXPECT_EQ(sb.cnt.retransmits, 1u);
}

// A later packet delivered long after the gap: lost at once.
TEST_F(Sack, RackMarksOldHoleImmediately)
{
	init(7);
	u64 t = warm(0);
	u32 base = sb.nxt;
	mrxe_sack_on_send(&sb, base, t, 0, 1);
	mrxe_sack_on_send(&sb, base + 1, t + 10 * kUs, 0, 1);
	struct mrxe_sack_ack_res r;
	auto s = sack(base, base + 1, base + 2);
	ASSERT_EQ(mrxe_sack_on_ack(&sb, &s, 0, t + 30 * kUs, &r), 0);
	EXPECT_EQ(r.lost, 1u);
	u32 psn;
	ASSERT_TRUE(mrxe_sack_next_lost(&sb, &psn));
	EXPECT_EQ(psn, base);
}

TEST_F(Sack, SpuriousRetransmitWidensReorderWindow)
{
	init(0);
	u64 t = warm(0);
	u32 base = sb.nxt;
	mrxe_sack_on_send(&sb, base, t, 0, 1);
	mrxe_sack_on_send(&sb, base + 1, t + 10 * kUs, 0, 1);
	auto s = sack(base, base + 1, base + 2);
	mrxe_sack_on_ack(&sb, &s, 0, t + 30 * kUs, nullptr);
	u32 psn;
	ASSERT_TRUE(mrxe_sack_next_lost(&sb, &psn));
	mrxe_sack_on_retransmit(&sb, psn, t + 30 * kUs, 0);
	// The original shows up 2 us later: the retransmission cannot have.
	struct mrxe_sack_ack_res r;
	auto a = ack(base + 2);
	a.trigger_psn = base;
	ASSERT_EQ(mrxe_sack_on_ack(&sb, &a, t, t + 32 * kUs, &r), 0);
	EXPECT_EQ(r.spurious, 1u);
	EXPECT_EQ(sb.cnt.spurious, 1u);
	EXPECT_EQ(sb.reo_mult, 2);
	// reo_mult 2 would give min_rtt / 2 = 10 us; the original was late by
	// its RTT (32 us) - min_rtt (20 us), + 1/8: reo_wnd covers that.
	EXPECT_EQ(mrxe_sack_reo_wnd(&sb), (32 - 20) * kUs * 9 / 8);
}

// The first RTT samples: reo_wnd is SRTT + 4 RTTVAR, not min_rtt / 4,
// until MRXE_SACK_REO_WARMUP samples were taken.
// A needless READ response re-request (both copies came back) widens the
// reordering window the response recovery uses, as a DSACK does, at most
// once per SRTT, and counts as one spurious retransmission.
TEST_F(Sack, ResponseReRequestFoundNeedlessWidensWindow)
{
	init(0);
	u64 t = warm(0);
	u64 w1 = mrxe_sack_reo_wnd_rack(&sb);
	u64 srtt = mrxe_rtt_srtt(&sb.rtt);

	ASSERT_GT(w1, 0u);
	mrxe_sack_reo_spurious(&sb, t);
	mrxe_sack_reo_spurious(&sb, t + srtt / 2);
	EXPECT_EQ(sb.cnt.spurious, 2u);
	EXPECT_EQ(sb.reo_mult, 2u);
	mrxe_sack_reo_spurious(&sb, t + srtt + 1);
	EXPECT_EQ(sb.reo_mult, 3u);
	EXPECT_GT(mrxe_sack_reo_wnd_rack(&sb), w1);
	EXPECT_LE(mrxe_sack_reo_wnd_rack(&sb), srtt);
}

TEST_F(Sack, ReorderWindowStartsWide)
{
	init(0);
	u64 t = warm(0, 1);	// one sample of 20 us: RTTVAR 10 us
	EXPECT_EQ(mrxe_sack_reo_wnd(&sb), 60 * kUs);
	t = warm(t, MRXE_SACK_REO_WARMUP - 2);
	EXPECT_GT(mrxe_sack_reo_wnd(&sb), 5 * kUs);
	warm(t, 1);
	EXPECT_EQ(mrxe_sack_reo_wnd(&sb), 5 * kUs);
}

// A packet delivered behind a later one, late by more than half of
// reo_wnd but within it: no retransmission, and reo_wnd covers 1.5 x its
// lateness at once; a lateness well inside reo_wnd teaches nothing.
TEST_F(Sack, NearMissWidensReorderWindow)
{
	init(0);
	u64 t = warm(0);	// reo_wnd 5 us
	u32 b = sb.nxt;
	struct mrxe_sack_ack_res r;
	for (u32 i = 0; i < 4; i++)
		mrxe_sack_on_send(&sb, b + i, t + i * kUs, 0, 1);
	// b + 1 first after 20 us (rack.rtt 20 us), then b after 21 us:
	// 1 us late, under reo_wnd / 2
	auto s = sack(b, b + 1, b + 2);
	ASSERT_EQ(mrxe_sack_on_ack(&sb, &s, 0, t + 21 * kUs, &r), 0);
	auto a = ack(b + 2);
	ASSERT_EQ(mrxe_sack_on_ack(&sb, &a, 0, t + 21 * kUs, &r), 0);
	EXPECT_EQ(sb.cnt.reo_near, 0u);
	EXPECT_LT(mrxe_sack_reo_wnd(&sb), 5100u);	// SRTT / 4, SRTT ~20.1 us
	// b + 3 after 20 us, then b + 2 after 24 us: 4 us late, inside
	// reo_wnd (no loss) but past its half: reo_wnd becomes 6 us
	s = sack(b + 2, b + 3, b + 4);
	ASSERT_EQ(mrxe_sack_on_ack(&sb, &s, 0, t + 23 * kUs, &r), 0);
	EXPECT_EQ(r.lost, 0u);
	a = ack(b + 4);
	ASSERT_EQ(mrxe_sack_on_ack(&sb, &a, 0, t + 26 * kUs, &r), 0);
	EXPECT_EQ(r.lost, 0u);
	EXPECT_EQ(sb.cnt.retransmits, 0u);
	EXPECT_EQ(sb.cnt.reo_near, 1u);
	EXPECT_EQ(mrxe_sack_reo_wnd(&sb), 6 * kUs);
}

TEST_F(Sack, TimestampEchoAndDuplicateFlagDetectSpurious)
{
	init(0);
	u64 t = warm(0);
	u32 b = sb.nxt;
	mrxe_sack_on_send(&sb, b, t, 0, 1);
	mrxe_sack_on_send(&sb, b + 1, t, 0, 1);
	mrxe_sack_on_send(&sb, b + 2, t, 0, 1);
	// Probe-style retransmissions of two in-flight packets.
	mrxe_sack_on_retransmit(&sb, b + 1, t + 100 * kUs, 0);
	mrxe_sack_on_retransmit(&sb, b + 2, t + 100 * kUs, 0);
	// b + 1 SACKed 150 us later echoing the retransmission's time: valid.
	struct mrxe_sack_ack_res r;
	auto s1 = sack(b, b + 1, b + 2);
	ASSERT_EQ(mrxe_sack_on_ack(&sb, &s1, t + 100 * kUs, t + 150 * kUs, &r), 0);
	EXPECT_EQ(r.delivered, 1u);
	EXPECT_EQ(r.spurious, 0u);
	// Then the other copy of b + 1 arrives: a duplicate, so one of the
	// two transmissions was unnecessary.
	s1.trigger_dup = true;
	ASSERT_EQ(mrxe_sack_on_ack(&sb, &s1, t, t + 151 * kUs, &r), 0);
	EXPECT_EQ(r.spurious, 1u);
	// b + 2 SACKed echoing the original's send time: spurious at once.
	auto s2 = sack(b, b + 1, b + 3);
	ASSERT_EQ(mrxe_sack_on_ack(&sb, &s2, t, t + 152 * kUs, &r), 0);
	EXPECT_EQ(r.delivered, 1u);
	EXPECT_EQ(r.spurious, 1u);
	EXPECT_EQ(sb.cnt.spurious, 2u);
	EXPECT_EQ(sb.cnt.retransmits, 2u);
	// A duplicate report of b + 1 again is not counted twice.
	ASSERT_EQ(mrxe_sack_on_ack(&sb, &s1, t, t + 153 * kUs, &r), 0);
	EXPECT_EQ(sb.cnt.spurious, 2u);
}

// A READ request re-sent for a run of its PSNs is one packet: counted as
// one retransmission, and the responder's duplicate (its DUP flag names
// only the run's first PSN) makes the whole run spurious, counted once.
TEST_F(Sack, RunInOnePacketCountsOnce)
{
	init(0);
	u64 t = warm(0);
	u32 b = sb.nxt;
	read_run(b, 5, t, 1, t + 100 * kUs);
	EXPECT_EQ(sb.cnt.retransmits, 1u);
	EXPECT_EQ(sb.n_inflight, 5u);
	// the originals are acknowledged without an echo, 130 us after the
	// retransmission (more than 3/4 min_rtt: not provably spurious yet)
	struct mrxe_sack_ack_res r;
	auto a = ack(b + 5);
	ASSERT_EQ(mrxe_sack_on_ack(&sb, &a, 0, t + 130 * kUs, &r), 0);
	EXPECT_EQ(r.delivered, 5u);
	EXPECT_EQ(sb.cnt.spurious, 0u);
	// then the duplicate run arrives: one unnecessary packet
	a.trigger_psn = b + 1;
	a.trigger_dup = true;
	ASSERT_EQ(mrxe_sack_on_ack(&sb, &a, t + 100 * kUs, t + 131 * kUs, &r), 0);
	EXPECT_EQ(r.spurious, 1u);
	EXPECT_EQ(sb.cnt.spurious, 1u);
	for (u32 i = 1; i < 5; i++)
		EXPECT_TRUE(mrxe_sack_ent(&sb, b + i)->flags & MRXE_SKF_SPURIOUS) << i;
	EXPECT_FALSE(mrxe_sack_ent(&sb, b)->flags & MRXE_SKF_SPURIOUS);
	// reported again: nothing more
	ASSERT_EQ(mrxe_sack_on_ack(&sb, &a, t + 100 * kUs, t + 132 * kUs, &r), 0);
	EXPECT_EQ(sb.cnt.spurious, 1u);
	// the run's further PSNs stay marked as continuations
	EXPECT_TRUE(mrxe_sack_ent(&sb, b + 2)->flags & MRXE_SKF_CONT);
	EXPECT_FALSE(mrxe_sack_ent(&sb, b + 1)->flags & MRXE_SKF_CONT);
}

// The same run found spurious by time (its PSNs acknowledged sooner than a
// round trip after the retransmission): one spurious packet, not four.
TEST_F(Sack, RunInOnePacketSpuriousByTimeCountsOnce)
{
	init(0);
	u64 t = warm(0);
	u32 b = sb.nxt;
	read_run(b, 4, t, 0, t + 100 * kUs);
	struct mrxe_sack_ack_res r;
	auto a = ack(b + 4);
	ASSERT_EQ(mrxe_sack_on_ack(&sb, &a, 0, t + 102 * kUs, &r), 0);
	EXPECT_EQ(r.delivered, 4u);
	EXPECT_EQ(r.spurious, 1u);
	EXPECT_EQ(sb.cnt.retransmits, 1u);
	EXPECT_EQ(sb.cnt.spurious, 1u);
	EXPECT_EQ(sb.reo_mult, 2);
}

TEST_F(Sack, TailLossProbeBeforeRto)
{
	init(0xfffffa);
	u64 t = warm(0);
	u32 b = sb.nxt;
	for (u32 i = 0; i < 5; i++)
		mrxe_sack_on_send(&sb, mrxe_psn_add(b, i), t + i * kUs, 0, 1);
	// All but the last delivered.
	auto a = ack(mrxe_psn_add(b, 4));
	mrxe_sack_on_ack(&sb, &a, 0, t + 24 * kUs, nullptr);
	enum mrxe_sack_timer_kind k;
	u64 dl = mrxe_sack_timer(&sb, &k);
	EXPECT_EQ(k, MRXE_SACK_T_TLP);
	EXPECT_EQ(dl, t + 24 * kUs + 2 * mrxe_rtt_srtt(&sb.rtt));
	EXPECT_LT(dl, sb.rto_base_ns + mrxe_rtt_rto(&sb.rtt));
	u32 probe = 0;
	ASSERT_EQ(mrxe_sack_on_timer(&sb, dl, &probe), (u32)MRXE_SACK_EV_PROBE);
	EXPECT_EQ(probe, mrxe_psn_add(b, 4));
	EXPECT_EQ(sb.cnt.tlp, 1u);
	ASSERT_EQ(mrxe_sack_on_retransmit(&sb, probe, dl, 0), 0);
	// Only one probe: the next timer is the RTO.
	mrxe_sack_timer(&sb, &k);
	EXPECT_EQ(k, MRXE_SACK_T_RTO);
	auto a2 = ack(mrxe_psn_add(b, 5));
	mrxe_sack_on_ack(&sb, &a2, 0, dl + 20 * kUs, nullptr);
	EXPECT_EQ(mrxe_sack_outstanding(&sb), 0u);
	EXPECT_EQ(sb.cnt.rto, 0u);
	EXPECT_EQ(sb.cnt.spurious, 0u);
}

TEST_F(Sack, RtoMarksOldestLostAndBacksOff)
{
	init(0, false);
	u64 t = warm(0);
	u32 b = sb.nxt;
	mrxe_sack_on_send(&sb, b, t, 0, 1);
	mrxe_sack_on_send(&sb, b + 1, t + 150 * kUs, 0, 1);
	enum mrxe_sack_timer_kind k;
	u64 dl = mrxe_sack_timer(&sb, &k);
	EXPECT_EQ(k, MRXE_SACK_T_RTO);
	u64 rto = mrxe_rtt_rto(&sb.rtt);
	EXPECT_EQ(rto, 200 * kUs);	// the floor
	EXPECT_EQ(dl, t + rto);
	EXPECT_EQ(mrxe_sack_on_timer(&sb, dl, nullptr),
		  (u32)(MRXE_SACK_EV_RTO | MRXE_SACK_EV_LOST));
	// F-RTO: only b (the oldest) is lost for now; RTO doubled.
	EXPECT_EQ(sb.n_lost, 1u);
	EXPECT_TRUE(sb.frto);
	EXPECT_EQ(mrxe_rtt_rto(&sb.rtt), 400 * kUs);
	EXPECT_EQ(sb.cnt.rto, 1u);
	u32 psn;
	ASSERT_TRUE(mrxe_sack_next_lost(&sb, &psn));
	EXPECT_EQ(psn, b);
	mrxe_sack_on_retransmit(&sb, psn, dl, 0);
	EXPECT_FALSE(mrxe_sack_next_lost(&sb, &psn));
	EXPECT_EQ(mrxe_sack_timer(&sb, &k), dl + 400 * kUs);
	EXPECT_EQ(k, MRXE_SACK_T_RTO);
	// The ACK delivers only b's retransmission (a full RTT after it):
	// the RTO was real, b + 1 (sent before it) is lost too.  A
	// retransmission's ACK gives no sample: backoff stays (Karn).
	auto a = ack(b + 1);
	struct mrxe_sack_ack_res r;
	mrxe_sack_on_ack(&sb, &a, 0, dl + 150 * kUs, &r);
	EXPECT_EQ(r.lost, 1u);
	EXPECT_FALSE(sb.frto);
	EXPECT_EQ(sb.cnt.rto_spurious, 0u);
	ASSERT_TRUE(mrxe_sack_next_lost(&sb, &psn));
	EXPECT_EQ(psn, b + 1);
	EXPECT_EQ(mrxe_rtt_rto(&sb.rtt), 400 * kUs);
	EXPECT_EQ(mrxe_sack_check(&sb), 0);
}

// F-RTO: an RTO after a stall, then the originals arrive after all: the
// first ACK delivers a packet sent before the RTO, so the RTO was
// spurious and nothing beyond the oldest is retransmitted.
TEST_F(Sack, SpuriousRtoCostsOneRetransmission)
{
	init(0, false);
	u64 t = warm(0);
	u32 b, psn;
	u64 dl = rto_resend(t, 32, &b, &psn);
	EXPECT_EQ(sb.n_lost, 0u);	// the one marked went again
	// the originals of b .. b + 31 arrive (late), one cumulative ACK
	auto a = ack(b + 32);
	struct mrxe_sack_ack_res r;
	mrxe_sack_on_ack(&sb, &a, 0, dl + 150 * kUs, &r);
	EXPECT_EQ(r.delivered, 32u);
	EXPECT_EQ(r.lost, 0u);
	EXPECT_EQ(sb.cnt.rto_spurious, 1u);
	EXPECT_EQ(sb.cnt.retransmits, 1u);
	EXPECT_EQ(sb.n_lost + sb.n_inflight, 0u);
	EXPECT_FALSE(sb.frto);
	EXPECT_EQ(mrxe_sack_check(&sb), 0);
}

// RFC 4015 4: a spurious RTO teaches the RTO the silence it revealed, so
// the same stall again (a busy guest holding the ACKs) fires nothing; a
// longer one still does.  Without the adaptation every stall fires an RTO
// and resends a packet.
TEST_F(Sack, SpuriousRtoRaisesTheRtoAboveThatStall)
{
	init(0, false);
	u64 t = warm(0);
	u32 b, psn;
	u64 rto0 = mrxe_rtt_rto(&sb.rtt);

	ASSERT_EQ(rto_resend(t, 8, &b, &psn), t + rto0);
	// the ACKs come back 3 RTOs after the last progress, the first one
	// answering the original of b + 7 (sent before the RTO)
	u64 back = t + 3 * rto0;
	auto a = ack(b + 8);
	a.trigger_psn = b + 7;
	mrxe_sack_on_ack(&sb, &a, t + 7 * kUs, back, nullptr);
	ASSERT_EQ(sb.cnt.rto_spurious, 1u);
	EXPECT_GE(mrxe_rtt_rto(&sb.rtt), 3 * rto0 + 3 * rto0 / 4);
	// ordinary ACKs (20 us RTT) do not wash it out at once
	t = warm(back, 64);
	EXPECT_GE(mrxe_rtt_rto(&sb.rtt), 3 * rto0 + 3 * rto0 / 4);
	// the same stall again: no RTO
	b = sb.nxt;
	for (u32 i = 0; i < 8; i++)
		mrxe_sack_on_send(&sb, b + i, t, 0, 1);
	EXPECT_EQ(mrxe_sack_on_timer(&sb, t + 3 * rto0, nullptr), 0u);
	a = ack(b + 8);
	mrxe_sack_on_ack(&sb, &a, 0, t + 3 * rto0, nullptr);
	EXPECT_EQ(sb.cnt.rto, 1u);
	EXPECT_EQ(sb.cnt.retransmits, 1u);
	EXPECT_EQ(mrxe_sack_check(&sb), 0);
}

// Lost ACKs, not a stall: the first ACK back answers the retransmission
// (its echo is after the RTO), so the outage does not raise the RTO.
TEST_F(Sack, SpuriousRtoAfterLostAcksKeepsTheRto)
{
	init(0, false);
	u64 t = warm(0);
	u32 b, psn;
	u64 rto0 = mrxe_rtt_rto(&sb.rtt);
	u64 dl = rto_resend(t, 8, &b, &psn);
	auto a = ack(b + 8);
	a.trigger_psn = psn;
	mrxe_sack_on_ack(&sb, &a, dl, t + 3 * rto0, nullptr);
	ASSERT_EQ(sb.cnt.rto_spurious, 1u);
	EXPECT_EQ(sb.rtt.stall_ns, 0u);
	// and without an echo nothing is learnt either
	init(0, false);
	t = warm(0);
	rto_resend(t, 8, &b, &psn);
	a = ack(b + 8);
	mrxe_sack_on_ack(&sb, &a, 0, t + 3 * rto0, nullptr);
	ASSERT_EQ(sb.cnt.rto_spurious, 1u);
	EXPECT_EQ(sb.rtt.stall_ns, 0u);
}

// F-RTO: a second RTO with nothing back marks as RFC 8985 does.
TEST_F(Sack, SecondRtoWithoutAckMarksTheWindow)
{
	init(0, false);
	u64 t = warm(0);
	u32 b, psn;
	rto_resend(t, 8, &b, &psn);
	u64 dl = mrxe_sack_timer(&sb, nullptr);
	mrxe_sack_on_timer(&sb, dl, nullptr);
	EXPECT_EQ(sb.cnt.rto, 2u);
	EXPECT_EQ(sb.n_lost, 8u);
	EXPECT_FALSE(sb.frto);
	EXPECT_EQ(mrxe_sack_check(&sb), 0);
}

TEST_F(Sack, RtoOnlyMarksFirstWhenOthersAreYoung)
{
	init(0, false);
	u64 t = warm(0);
	u32 b = sb.nxt;
	mrxe_sack_on_send(&sb, b, t, 0, 1);
	mrxe_sack_on_send(&sb, b + 1, t + 190 * kUs, 0, 1);
	mrxe_sack_on_timer(&sb, t + 200 * kUs, nullptr);
	EXPECT_EQ(sb.n_lost, 1u);
	EXPECT_EQ(sb.n_inflight, 1u);
}

} // namespace
