// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// Unit tests for drivers/proto/mrxe_dcqcn.{h,c}: the DCQCN reaction point
// against the paper's equations (Zhu et al., SIGCOMM 2015, Figure 7), the
// notification point's CNP pacing, and the pacer; randomized runs check the
// invariant of mrxe_dcqcn.h after every step.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

extern "C" {
#include "mrxe_dcqcn.h"
}

namespace {

constexpr u64 kUs = 1000, kMs = 1000 * kUs, kS = 1000 * kMs;
constexpr u64 kLine = 10'000'000;	// 10 Gbit/s in kbit/s

mrxe_dcqcn_params Params(u64 line = kLine)
{
	mrxe_dcqcn_params p;

	mrxe_dcqcn_params_default(&p, line);
	return p;
}

double Alpha(const mrxe_dcqcn &d)
{
	return (double)d.alpha / MRXE_DCQCN_ONE;
}

void CheckInvariant(const mrxe_dcqcn &d)
{
	ASSERT_GE(d.rc_kbps, d.p.min_kbps);
	ASSERT_LE(d.rc_kbps, d.rt_kbps);
	ASSERT_LE(d.rt_kbps, d.p.line_kbps);
	ASSERT_LE(d.alpha, MRXE_DCQCN_ONE);
}

TEST(Dcqcn, DefaultsAreThePapers)
{
	mrxe_dcqcn_params p = Params();

	EXPECT_EQ(p.g, MRXE_DCQCN_G_ONE / 256);	// g = 1/256
	EXPECT_EQ(p.alpha_us, 55u);		// K = 55 us
	EXPECT_EQ(p.byte_counter, 10ull << 20);	// B = 10 MB
	EXPECT_EQ(p.f, 5u);			// F = 5
}

// Back-to-back CNPs (no timer in between): alpha stays 1 (alpha = (1-g) + g),
// so each CNP halves Rc: Rc = line / 2^N, Rt = the rate before the last cut.
TEST(Dcqcn, RateAfterNBackToBackCnps)
{
	mrxe_dcqcn d;
	mrxe_dcqcn_params p = Params();

	mrxe_dcqcn_init(&d, &p);
	EXPECT_EQ(d.rc_kbps, kLine);
	EXPECT_EQ(d.alpha, MRXE_DCQCN_ONE);
	for (int n = 1; n <= 10; n++) {
		mrxe_dcqcn_cnp(&d, 1);
		EXPECT_EQ(d.rc_kbps, kLine >> n) << n;
		EXPECT_EQ(d.rt_kbps, kLine >> (n - 1)) << n;
		EXPECT_EQ(d.alpha, MRXE_DCQCN_ONE);
	}
	EXPECT_EQ(d.cuts, 10u);
}

// CNPs every 2K: between them alpha decays twice by (1-g); compare Rc and
// alpha with the equations evaluated in double precision.
TEST(Dcqcn, RateAndAlphaFollowTheEquations)
{
	mrxe_dcqcn d;
	mrxe_dcqcn_params p = Params();
	double rc = kLine, alpha = 1, g = 1.0 / 256;
	u64 now = 0;

	p.timer_us = 1000000;	// no increase events in this test
	p.byte_counter = 0;
	p.min_kbps = 1;
	mrxe_dcqcn_init(&d, &p);
	for (int n = 0; n < 16; n++) {
		mrxe_dcqcn_cnp(&d, now);
		rc = rc * (1 - alpha / 2);
		alpha = (1 - g) * alpha + g;
		EXPECT_NEAR((double)d.rc_kbps, rc, rc * 1e-4 + 2) << n;
		EXPECT_NEAR(Alpha(d), alpha, 1e-4) << n;
		now += 2 * 55 * kUs;
		mrxe_dcqcn_tick(&d, now);
		alpha *= (1 - g) * (1 - g);
		EXPECT_NEAR(Alpha(d), alpha, 1e-4) << n;
	}
}

// Alpha decays as (1-g)^n over n periods of K without a CNP.
TEST(Dcqcn, AlphaDecay)
{
	mrxe_dcqcn d;
	mrxe_dcqcn_params p = Params();

	mrxe_dcqcn_init(&d, &p);
	mrxe_dcqcn_cnp(&d, 0);	// alpha stays 1, alpha timer starts
	for (int n = 1; n <= 1000; n++) {
		mrxe_dcqcn_tick(&d, n * 55 * kUs);
		EXPECT_NEAR(Alpha(d), std::pow(1 - 1.0 / 256, n), 2e-4) << n;
	}
	// and reaches 0 eventually (then the alpha timer stops once at line)
	for (int n = 1001; n < 20000 && d.alpha; n++)
		mrxe_dcqcn_tick(&d, n * 55 * kUs);
	EXPECT_EQ(d.alpha, 0u);
}

// Recovery timeline after one cut (timer events only, byte counter off):
// F - 1 fast recovery steps Rc = (Rt + Rc)/2 with Rt fixed, then Rc reaches
// line rate and the rate timer stops.
TEST(Dcqcn, RecoveryTimeline)
{
	mrxe_dcqcn d;
	mrxe_dcqcn_params p = Params(1'000'000);	// 1 Gbit/s
	const u64 t = p.timer_us * kUs;
	double rc, rt;

	p.byte_counter = 0;
	mrxe_dcqcn_init(&d, &p);
	mrxe_dcqcn_cnp(&d, 0);
	rc = 500'000;
	rt = 1'000'000;
	ASSERT_EQ(d.rc_kbps, 500'000u);
	for (u32 k = 1; k < p.f; k++) {	// events 1..F-1: T_cnt < F
		mrxe_dcqcn_tick(&d, k * t);
		rc = (rt + rc) / 2;
		EXPECT_EQ(d.t_cnt, k);
		EXPECT_EQ(d.rt_kbps, 1'000'000u);
		EXPECT_NEAR((double)d.rc_kbps, rc, 2) << k;
	}
	// at line: fast recovery reaches Rt = line and the timer stops
	for (u32 k = p.f; k < 64 && d.rate_next_ns; k++)
		mrxe_dcqcn_tick(&d, k * t);
	EXPECT_EQ(d.rc_kbps, 1'000'000u);
	EXPECT_EQ(d.rate_next_ns, 0u);
}

// Additive and hyper increase: a cut far below line (Rt << line).
TEST(Dcqcn, AdditiveThenHyperIncrease)
{
	mrxe_dcqcn d;
	mrxe_dcqcn_params p = Params(1'000'000);
	const u64 t = p.timer_us * kUs;
	u64 rt;

	p.byte_counter = 0;
	mrxe_dcqcn_init(&d, &p);
	for (int i = 0; i < 8; i++)
		mrxe_dcqcn_cnp(&d, 0);	// Rc = line/256, Rt = line/128
	rt = d.rt_kbps;
	ASSERT_EQ(rt, 1'000'000u / 128);
	for (u32 k = 1; k <= 20; k++) {
		mrxe_dcqcn_tick(&d, k * t);
		if (k < p.f)
			;			// fast recovery
		else if (k <= p.f)
			rt += p.ai_kbps;	// additive (T_cnt == F)
		else
			rt += (k - p.f) * p.hai_kbps;	// hyper, i = T_cnt - F
		rt = (rt < p.line_kbps ? rt : p.line_kbps);
		EXPECT_EQ(d.rt_kbps, rt) << k;
		CheckInvariant(d);
	}
}

// With both counters: stages need both counts; the byte counter alone
// stays in fast recovery / additive increase.
TEST(Dcqcn, ByteCounterEvents)
{
	mrxe_dcqcn d;
	mrxe_dcqcn_params p = Params(1'000'000);

	p.byte_counter = 1 << 20;
	mrxe_dcqcn_init(&d, &p);
	for (int i = 0; i < 8; i++)
		mrxe_dcqcn_cnp(&d, 0);
	u64 rt = d.rt_kbps;
	mrxe_dcqcn_sent(&d, 3 << 20, 1);	// 3 events, all fast recovery
	EXPECT_EQ(d.bc_cnt, 3u);
	EXPECT_EQ(d.rt_kbps, rt);
	mrxe_dcqcn_sent(&d, 10 << 20, 2);	// BC_cnt 13 > F, T_cnt 0: additive
	EXPECT_EQ(d.bc_cnt, 13u);
	// events 4: fast recovery; 5..13: additive (BC_cnt >= F, T_cnt <= F)
	EXPECT_EQ(d.rt_kbps, rt + 9 * p.ai_kbps);
}

TEST(Dcqcn, FloorHolds)
{
	mrxe_dcqcn d;
	mrxe_dcqcn_params p = Params(1000);

	p.min_kbps = 10;
	mrxe_dcqcn_init(&d, &p);
	for (int i = 0; i < 100; i++) {
		mrxe_dcqcn_cnp(&d, i);
		CheckInvariant(d);
	}
	EXPECT_EQ(d.rc_kbps, 10u);
}

// Random CNPs, sends and timer runs: the invariant after every step, every
// CNP never raises Rc, and without CNPs Rc returns to line rate.
TEST(Dcqcn, RandomizedInvariantAndConvergence)
{
	std::mt19937_64 rng(14);

	for (int run = 0; run < 200; run++) {
		mrxe_dcqcn d;
		mrxe_dcqcn_params p = Params(1000 + rng() % 100'000'000);
		u64 now = 0;

		p.min_kbps = 1 + rng() % 1000;
		p.g = 1 + rng() % MRXE_DCQCN_G_ONE;
		p.alpha_us = 1 + rng() % 200;
		p.timer_us = 1 + rng() % 2000;
		p.byte_counter = rng() % 2 ? 0 : 1 + rng() % (20 << 20);
		p.ai_kbps = p.line_kbps / 1000 + rng() % 100'000;
		p.hai_kbps = p.ai_kbps + rng() % 1'000'000;
		p.f = rng() % 10;
		mrxe_dcqcn_init(&d, &p);
		for (int step = 0; step < 2000; step++) {
			now += rng() % (500 * kUs);
			switch (rng() % 3) {
			case 0: {
				u64 before = d.rc_kbps, a = d.alpha;

				mrxe_dcqcn_cnp(&d, now);
				ASSERT_LE(d.rc_kbps, before);
				// strictly down when alpha/2 of Rc is a unit
				if (before > d.p.min_kbps &&
				    ((before * a) >> 21) >= 1) {
					ASSERT_LT(d.rc_kbps, before);
				}
				break;
			}
			case 1:
				mrxe_dcqcn_sent(&d, rng() % (4 << 20), now);
				break;
			default:
				mrxe_dcqcn_tick(&d, now);
				// every deadline left is in the future
				if (mrxe_dcqcn_next(&d)) {
					ASSERT_GT(mrxe_dcqcn_next(&d), now);
				}
				break;
			}
			CheckInvariant(d);
		}
		// no more CNPs: tick at every deadline until idle
		for (int i = 0; i < 1'000'000 && mrxe_dcqcn_next(&d); i++) {
			if (mrxe_dcqcn_next(&d) > now)
				now = mrxe_dcqcn_next(&d);
			mrxe_dcqcn_tick(&d, now);
			CheckInvariant(d);
		}
		ASSERT_EQ(d.rc_kbps, d.p.line_kbps) << run;
		ASSERT_EQ(mrxe_dcqcn_next(&d), 0u) << run;
	}
}

TEST(CnpNp, AtMostOnePerInterval)
{
	mrxe_cnp_np np = {};
	std::mt19937_64 rng(1);
	u64 now = 5, last = 0, sent = 0;
	bool any = false;

	for (int i = 0; i < 100000; i++) {
		now += rng() % (20 * kUs);
		if (mrxe_cnp_np_may_send(&np, now, 50 * kUs)) {
			if (any) {
				ASSERT_GE(now - last, 50 * kUs);
			}
			any = true;
			last = now;
			sent++;
		} else {
			ASSERT_LT(now - last, 50 * kUs);
		}
	}
	// mean step 10 us: about one CNP per 50-70 us of marks
	EXPECT_GT(sent, now / (70 * kUs));
	EXPECT_LE(sent, now / (50 * kUs) + 1);
}

// The pacer holds the rate: bytes admitted over a window never exceed
// rate * window + burst + one packet, and a backlogged sender gets it all.
TEST(Pacer, HoldsTheRate)
{
	std::mt19937_64 rng(7);

	for (int run = 0; run < 50; run++) {
		mrxe_pacer pc;
		u64 rate = 1000 + rng() % 10'000'000;	// 1 Mbit/s .. 10 Gbit/s
		u64 burst = 1 + rng() % 65536, now = rng() % kS, start = now;
		u64 bytes = 0, pkts = 0;

		mrxe_pacer_init(&pc, rate, burst, now);
		while (now - start < 100 * kMs && pkts < 200000) {
			u32 len = 64 + rng() % 4096;
			u64 t = mrxe_pacer_admit(&pc, len, now);

			if (t == 0) {
				bytes += len;
				pkts++;
				continue;
			}
			ASSERT_GT(t, now);
			now = t;
		}
		double secs = (double)(now - start) / kS;
		double limit = rate * 1000.0 / 8 * secs + burst + 4096 + 64;
		ASSERT_LE((double)bytes, limit) << run;
		if (pkts < 200000) {	// backlogged: at least 99% of the rate
			ASSERT_GE((double)bytes,
				  0.99 * rate * 1000.0 / 8 * secs - 4160) << run;
		}
	}
}

// A sender woken late (the work item runs some time after the pacer's
// timer, as in a busy guest) finds the tokens of the wait in the bucket -
// up to its depth.  One QP at 7.5 Mbit/s (a fair share of the lab's 30
// Mbit/s bottleneck), 1088-byte packets, wakeups late by 0..4 ms: a
// two-packet bucket (about 2.3 ms) loses what a wait beyond it earned and
// delivers well below the rate; a bucket of 4 ms at the rate
// (mrxe_cc.c: MRXE_CC_PACER_SLACK_US) keeps at least 97% of it.
double LateWakeupShare(u64 burst, u64 late_max_ns)
{
	std::mt19937_64 rng(11);
	constexpr u64 kRate = 7500;	// kbit/s
	constexpr u32 kLen = 1088;
	mrxe_pacer pc;
	u64 now = 0, bytes = 0;

	mrxe_pacer_init(&pc, kRate, burst, now);
	while (now < 10 * kS) {
		u64 t = mrxe_pacer_admit(&pc, kLen, now);

		if (t == 0) {
			bytes += kLen;
			continue;
		}
		now = t + rng() % late_max_ns;	// the timer, then the work item
	}
	return bytes * 8.0 / 10 / (kRate * 1000.0);
}

TEST(Pacer, BucketCoversLateWakeups)
{
	double two_pkts = LateWakeupShare(2 * 1088, 4 * kMs);
	double slack = LateWakeupShare(7500ULL * 4000 / 8000, 4 * kMs);

	printf("[ pacer  ] wakeups late 0..4 ms: two-packet bucket %.3f of the "
	       "rate, 4 ms bucket %.3f\n", two_pkts, slack);
	EXPECT_LT(two_pkts, 0.90);
	EXPECT_GE(slack, 0.97);
	EXPECT_LE(slack, 1.01);
}

TEST(Pacer, UnlimitedAndRateChange)
{
	mrxe_pacer pc;

	mrxe_pacer_init(&pc, 0, 1000, 0);
	for (int i = 0; i < 1000; i++)
		EXPECT_EQ(mrxe_pacer_admit(&pc, 9000, 0), 0u);
	mrxe_pacer_set_rate(&pc, 8000, 0);	// 8 Mbit/s = 1 byte/us
	pc.tokens = 0;
	u64 t = mrxe_pacer_admit(&pc, 1000, 0);
	EXPECT_GT(t, 0u);
	EXPECT_LE(t, 2 * kUs);
	EXPECT_EQ(mrxe_pacer_admit(&pc, 1000, t), 0u);
	t = mrxe_pacer_admit(&pc, 1000, t);
	EXPECT_NEAR((double)t, 1000.0 * kUs, 3 * kUs);
}

} // namespace
