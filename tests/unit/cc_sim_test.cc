// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// Closed-loop check of the congestion control engines (drivers/proto/
// mrxe_dcqcn.c, mrxe_ecn_cc.c): a packet-level simulation of the lab's
// bottleneck (selftests/mrxe_bottleneck_lib.sh: 30 Mbit/s, RED with ECN,
// min 15 kB, max 60 kB, probability 0.5, limit 300 kB; the average
// decays over an idle queue as Linux's RED does) shared by four
// flows, each paced by its engine with the lab parameters of
// selftests/mrxe_cc.sh (chosen with this simulation: with RED probability
// 0.1, T = 8 ms and R_AI = 250 kbit/s DCQCN oscillated at 0.80
// utilisation; CC_SIM_* environment variables override them).  DCQCN gets
// CNPs from a notification point (one per flow per interval); the MetaRoCE
// reaction gets the CE count of every delivered packet one RTT later.
// Checks, over the steady state: no drops, Jain's fairness index, link
// utilisation, queue bounded; and how fast a late flow gets its share
// (fair_s: from the late flow's start until every 200 ms window to the end
// has each flow within 0.8-1.25x of the mean), MetaRoCE against DCQCN.
// Host noise (opt-in, Simulate's stall arguments or CC_SIM_STALL_PM /
// CC_SIM_STALL_MS): a sender stops for up to stall_ms, stall_pm per mille
// of its milliseconds, as a saturated TCG guest's CPUs go elsewhere; the
// lab's unfairness showed only with it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <random>
#include <vector>

extern "C" {
#include "mrxe_dcqcn.h"
#include "mrxe_ecn_cc.h"
}

#include "sim_seeds.h"

namespace {

constexpr u64 kUs = 1000, kMs = 1000 * kUs, kS = 1000 * kMs;
constexpr u64 kLinkKbps = 30000;
constexpr u32 kPkt = 1088;		// 1 KiB payload + headers
constexpr u64 kRedMin = 15000, kRedMax = 60000, kRedLimit = 300000;
constexpr double kRedW = 1.0 / 32;
// Linux's RED (red_calc_qavg_from_idle_time) decays the average over an
// idle queue as if a packet of avpkt (1100 B, the lab's) had left every
// avpkt / bandwidth: 293 us at 30 Mbit/s
constexpr double kRedPktNs = 1100 * 8 * 1e9 / (kLinkKbps * 1000);
double kRedPmax = 0.1;

// CC_SIM_<NAME>=value overrides a parameter (exploration only)
u64 Env(const char *name, u64 def)
{
	return sim_env(name, def);
}
constexpr u64 kStep = 10 * kUs;

enum class Algo { Dcqcn, Meta };

struct Flow {
	mrxe_dcqcn rp;
	mrxe_ecn_cc ecn;
	mrxe_cnp_np np = {};
	double credit = 0;		// bytes the pacer allows
	u64 start_ns = 0;
	u64 delivered = 0;		// bytes, whole run
	u64 win_bytes = 0;		// bytes in the current window
	double srtt = 0;
	u64 stall_until = 0;		// host noise: the sender is not running
};

struct Pkt {
	int flow;
	bool ce;
	u64 sent_ns;
};

struct Event {			// feedback travelling back to a sender
	u64 at;
	int flow;
	bool ce;			// Meta: CE echo of one packet; Dcqcn: a CNP
	u64 sent_ns;
};

struct Result {
	double jain = 0, util = 0;
	u64 drops = 0, p99_queue = 0, max_queue = 0;
	u64 start_drops = 0;		// in the first 2 s (all flows starting)
	double late_fair_s = -1;	// time until the late flow had 80% of its share
	// time from the late flow's start until, in every 200 ms window from
	// then on to the end of the run, each flow's goodput is within 0.8 to
	// 1.25 times the four flows' mean: the fair share reached and held
	double fair_s = -1;
	std::vector<double> mbps;
};

u64 Rate(const Flow &f, Algo a)
{
	return a == Algo::Dcqcn ? mrxe_dcqcn_rate(&f.rp) : mrxe_ecn_cc_rate(&f.ecn);
}

// Four flows; flow 3 starts at @late_ns (CC_SIM_NLATE=k: the last k flows,
// as in the lab, where one perftest process's QPs start after the other's).
// Runs @dur_ns, measures the steady state over the last @measure_ns.
// @prop_us: one-way propagation, each direction (CC_SIM_PROP overrides it).
Result Simulate(Algo algo, u64 dur_ns, u64 measure_ns, u64 late_ns,
		u64 seed = 14, u64 prop_us = 500, u64 stall_pm_def = 0,
		u64 stall_ms_def = 0)
{
	const int n = 4;
	std::vector<Flow> fl(n);

	late_ns = Env("CC_SIM_LATE", late_ns);	// also where fair_s counts from
	std::mt19937_64 rng(Env("CC_SIM_SEED", seed));
	std::uniform_real_distribution<double> uni(0, 1);
	std::deque<Pkt> q;
	std::deque<std::pair<u64, Pkt>> wire;	// delivered, arriving at D
	std::deque<Event> back;
	u64 qbytes = 0, drops = 0;
	double avg = 0, link_credit = 0;
	u64 idle_since = 0;		// RED's queue has been empty since
	std::vector<u64> qsamples;
	Result r;

	mrxe_dcqcn_params dp;
	mrxe_dcqcn_params_default(&dp, kLinkKbps);
	dp.min_kbps = 500;
	dp.timer_us = Env("CC_SIM_T", 20000);
	dp.alpha_us = Env("CC_SIM_K", 4000);
	dp.ai_kbps = Env("CC_SIM_AI", 100);
	dp.hai_kbps = Env("CC_SIM_HAI", 1000);
	dp.byte_counter = Env("CC_SIM_B", 1 << 20);
	dp.g = Env("CC_SIM_G", 256);
	kRedPmax = Env("CC_SIM_PMAX", 50) / 100.0;
	const u64 prop = Env("CC_SIM_PROP", prop_us) * kUs;
	const u64 cnp_ns = Env("CC_SIM_CNP", 4000) * kUs;
	// host noise: each sender stalls, at a rate of stall_pm per mille per
	// ms, for up to stall_ms (uniform): a TCG guest's CPU going elsewhere
	const double stall_pm = (double)Env("CC_SIM_STALL_PM", stall_pm_def);
	const u64 stall_max = Env("CC_SIM_STALL_MS", stall_ms_def) * kMs;
	// CC_SIM_TRACE: rates every 500 ms; 2: also every 20 ms of the first s
	const u64 trace = getenv("CC_SIM_TRACE") ?
			  (std::max)(Env("CC_SIM_TRACE", 1), (u64)1) : 0;
	const bool red_idle_decay = Env("CC_SIM_REDIDLE", 1);
	mrxe_ecn_cc_params ep;
	mrxe_ecn_cc_params_from_dcqcn(&ep, &dp);	/* as mrxe_cc.c */
	ep.ai_kbps = Env("CC_SIM_EAI", ep.ai_kbps);
	ep.g = Env("CC_SIM_EG", ep.g);
	ep.min_round_us = Env("CC_SIM_ER", ep.min_round_us);
	ep.max_clean = Env("CC_SIM_EC", ep.max_clean);
	ep.hyper_after = Env("CC_SIM_EH", ep.hyper_after);
	ep.fr_after = Env("CC_SIM_EFR", ep.fr_after);
	ep.dlv_alpha = Env("CC_SIM_EDLV", ep.dlv_alpha);
	for (int i = 0; i < n; i++) {
		mrxe_dcqcn_init(&fl[i].rp, &dp);
		mrxe_ecn_cc_init(&fl[i].ecn, &ep);
		fl[i].start_ns = i >= n - (int)Env("CC_SIM_NLATE", 1) ?
				  late_ns : 0;
	}
	u64 late_win = 0;
	std::vector<u64> win_start(n, 0);
	std::vector<bool> win_fair;	// per 200 ms window after late_ns
	for (u64 now = 0; now < dur_ns; now += kStep) {
		// senders: pace at the engine's rate
		for (int i = 0; i < n; i++) {
			Flow &f = fl[i];
			if (now < f.start_ns)
				continue;
			if (algo == Algo::Dcqcn)
				mrxe_dcqcn_tick(&f.rp, now);
			f.credit += (double)Rate(f, algo) * kStep / 8e6;
			f.credit = (std::min)(f.credit, 2.0 * kPkt);
			if (stall_pm > 0 && now >= f.stall_until &&
			    uni(rng) < stall_pm / 1000 * kStep / kMs)
				f.stall_until = now + (u64)(uni(rng) * stall_max);
			if (now < f.stall_until)
				continue;
			while (f.credit >= kPkt) {
				f.credit -= kPkt;
				if (algo == Algo::Dcqcn)
					mrxe_dcqcn_sent(&f.rp, kPkt, now);
				// RED (RFC 2309 style, marking ECT packets)
				if (!qbytes && red_idle_decay)
					avg *= std::pow(1 - kRedW,
							(double)(now - idle_since) / kRedPktNs);
				avg = (1 - kRedW) * avg + kRedW * qbytes;
				double p = avg < kRedMin ? 0 :
					   avg >= kRedMax ? 1 :
					   kRedPmax * (avg - kRedMin) / (kRedMax - kRedMin);
				if (qbytes + kPkt > kRedLimit) {
					drops++;
					if (now < 2 * kS)
						r.start_drops++;
					continue;
				}
				q.push_back({ i, uni(rng) < p, now });
				qbytes += kPkt;
			}
		}
		// bottleneck
		link_credit += (double)kLinkKbps * kStep / 8e6;
		while (!q.empty() && link_credit >= kPkt) {
			link_credit -= kPkt;
			Pkt p = q.front();
			q.pop_front();
			qbytes -= kPkt;
			if (!qbytes)
				idle_since = now;
			wire.push_back({ now + prop, p });
		}
		if (q.empty())
			link_credit = (std::min)(link_credit, (double)kPkt);
		qsamples.push_back(qbytes);
		// receiver D: delivery, NP / ECN echo
		while (!wire.empty() && wire.front().first <= now) {
			Pkt p = wire.front().second;
			wire.pop_front();
			Flow &f = fl[p.flow];
			f.delivered += kPkt;
			f.win_bytes += kPkt;
			if (algo == Algo::Dcqcn) {
				if (p.ce && mrxe_cnp_np_may_send(&f.np, now, cnp_ns))
					back.push_back({ now + prop, p.flow, true, p.sent_ns });
			} else {
				back.push_back({ now + prop, p.flow, p.ce, p.sent_ns });
			}
		}
		// feedback at the senders
		while (!back.empty() && back.front().at <= now) {
			Event e = back.front();
			back.pop_front();
			Flow &f = fl[e.flow];
			if (algo == Algo::Dcqcn) {
				mrxe_dcqcn_cnp(&f.rp, now);
			} else {
				double rtt = (double)(now - e.sent_ns);
				f.srtt = f.srtt ? 0.875 * f.srtt + 0.125 * rtt : rtt;
				mrxe_ecn_cc_ack(&f.ecn, kPkt, e.ce ? kPkt : 0, now,
						(u64)f.srtt);
			}
		}
		// the late flow's share, in 100 ms windows
		if (now >= late_ns && r.late_fair_s < 0 &&
		    (now - late_ns) % (100 * kMs) == 0 && now > late_ns) {
			double share = fl[n - 1].delivered - late_win;
			// 80% of a fair quarter of 100 ms at the link rate
			if (share >= 0.8 * kLinkKbps * 1000 / 8 * 0.1 / n)
				r.late_fair_s = (double)(now - late_ns) / kS;
			late_win = fl[n - 1].delivered;
		}
		if (now > late_ns && (now - late_ns) % (200 * kMs) == 0) {
			double sum = 0, lo = 1e18, hi = 0;
			for (int i = 0; i < n; i++) {
				double b = fl[i].delivered - win_start[i];
				sum += b;
				lo = (std::min)(lo, b);
				hi = (std::max)(hi, b);
				win_start[i] = fl[i].delivered;
			}
			win_fair.push_back(sum > 0 && lo >= 0.8 * sum / n &&
					   hi <= 1.25 * sum / n);
		} else if (now == late_ns) {
			for (int i = 0; i < n; i++)
				win_start[i] = fl[i].delivered;
		}
		if (trace && (now % (500 * kMs) == 0 ||
			      (trace > 1 && now < kS && now % (20 * kMs) == 0))) {
			std::printf("t=%.1f q=%llu avg=%.0f rates", (double)now / kS,
				    (unsigned long long)qbytes, avg);
			for (auto &f : fl)
				std::printf(" %llu/%u", (unsigned long long)Rate(f, algo),
					    algo == Algo::Dcqcn ? f.rp.alpha >> 10 : f.ecn.alpha >> 6);
			std::printf(" drops %llu\n", (unsigned long long)drops);
		}
		if (now == dur_ns - measure_ns)
			for (auto &f : fl)
				f.win_bytes = 0;
	}
	double sum = 0, sq = 0;
	for (auto &f : fl) {
		double mbps = f.win_bytes * 8.0 / ((double)measure_ns / kS) / 1e6;
		r.mbps.push_back(mbps);
		sum += mbps;
		sq += mbps * mbps;
	}
	size_t held = win_fair.size();
	while (held > 0 && win_fair[held - 1])
		held--;
	if (held < win_fair.size())
		r.fair_s = 0.2 * held;
	r.jain = sum * sum / (n * sq);
	r.util = sum / (kLinkKbps / 1000.0);
	r.drops = drops;
	std::vector<u64> tail(qsamples.end() - measure_ns / kStep, qsamples.end());
	std::sort(tail.begin(), tail.end());
	r.p99_queue = tail[tail.size() * 99 / 100];
	r.max_queue = tail.back();
	return r;
}

void Print(const char *name, const Result &r)
{
	std::printf("%s: jain %.3f util %.3f drops %llu (start %llu) p99 queue %llu B max %llu B, "
		    "late flow at 80%% share after %.1f s, fair share (0.8-1.25x "
		    "per 200 ms) held after %.1f s; Mbit/s",
		    name, r.jain, r.util, (unsigned long long)r.drops,
		    (unsigned long long)r.start_drops,
		    (unsigned long long)r.p99_queue,
		    (unsigned long long)r.max_queue, r.late_fair_s, r.fair_s);
	for (double m : r.mbps)
		std::printf(" %.2f", m);
	std::printf("\n");
}

TEST(CcSim, DcqcnFourFlowsAtTheBottleneck)
{
	Result r = Simulate(Algo::Dcqcn, 30 * kS, 10 * kS, 5 * kS);

	Print("dcqcn", r);
	EXPECT_GE(r.jain, 0.95);
	EXPECT_GE(r.util, 0.85);
	EXPECT_LT(r.max_queue, kRedLimit);
}

// The round is at least DCQCN's rate timer T (mrxe_cc.c): with 0.1 ms
// rounds (the RTT of an empty queue) and an unbounded clean-round bonus the
// increase ran away and two flows starved at the floor (Jain 0.52, queue at
// the limit, drops); with T = 20 ms and the bonus capped, Jain 1.0, 0.90,
// but a p99 queue of 84 kB (all flows overshooting together after clean
// rounds); with R_AI / 4, no bonus and g = 1/4 (mrxe_ecn_cc_params_from_
// dcqcn) Jain 1.0, 0.96, 33 kB.
TEST(CcSim, MetaEcnEchoFourFlowsAtTheBottleneck)
{
	Result r = Simulate(Algo::Meta, 30 * kS, 10 * kS, 5 * kS);

	Print("metaroce", r);
	EXPECT_GE(r.jain, 0.95);
	EXPECT_GE(r.util, 0.85);
	EXPECT_LT(r.max_queue, kRedLimit);
}

// Issue 14: "MetaRoCE reaches fair share faster than DCQCN and keeps a
// lower p99 queue".  Both engines with the lab parameters (the MetaRoCE
// ones derived as mrxe_cc.c does), five RED seeds each; the medians are
// compared (one seed can be unlucky for either: a single 200 ms window
// outside 0.8-1.25x resets "held").  Never reaching a held fair share
// counts as infinitely slow.
// Both engines over RED seeds 1..5, the lab bottleneck's 30 s run with a
// late flow (Simulate's arguments, host stalls as given); no run may drop.
// runs[0]: DCQCN, runs[1]: MetaRoCE.
void RunSeeds(std::vector<Result> (&runs)[2], u64 stall_pm = 0,
	      u64 stall_ms = 0)
{
	for (u64 seed = 1; seed <= 5; seed++) {
		for (int a = 0; a < 2; a++) {
			Result r = Simulate(a ? Algo::Meta : Algo::Dcqcn, 30 * kS,
					    10 * kS, 5 * kS, seed, 500, stall_pm,
					    stall_ms);
			EXPECT_EQ(r.drops, 0u) << (a ? "metaroce" : "dcqcn") << " seed " << seed;
			runs[a].push_back(r);
		}
	}
}

// @f of each run, sorted: [2] is the median of five, [0] the lowest
template <class F>
std::vector<double> Sorted(const std::vector<Result> &runs, F f)
{
	std::vector<double> v;

	for (const Result &r : runs)
		v.push_back(f(r));
	std::sort(v.begin(), v.end());
	return v;
}

TEST(CcSim, MetaFairShareSoonerAndShallowerQueueThanDcqcn)
{
	std::vector<Result> runs[2];
	std::vector<double> fair[2], q99[2];

	RunSeeds(runs);
	for (int a = 0; a < 2; a++) {
		fair[a] = Sorted(runs[a], [](const Result &r) {
			return r.fair_s < 0 ? 1e9 : r.fair_s;
		});
		q99[a] = Sorted(runs[a], [](const Result &r) {
			return (double)r.p99_queue;
		});
	}
	std::printf("median over 5 seeds: fair share held after dcqcn %.1f s, "
		    "metaroce %.1f s; p99 queue dcqcn %.0f B, metaroce %.0f B\n",
		    fair[0][2], fair[1][2], q99[0][2], q99[1][2]);
	EXPECT_LT(fair[1][2], fair[0][2]);
	EXPECT_LT(q99[1][2], q99[0][2]);
}

// Host noise, as in the lab's TCG guest: each sender stops (its CPU goes
// elsewhere) for up to 20 ms, 50 times a second on average (Simulate's
// stall model).  Cutting from a round's delivery rate in steady state cut
// a stalled sender from what its stall let through, and fast recovery
// returned it only there: median Jain 0.88 (lowest 0.69) over five seeds
// while DCQCN, which cuts from its rate, kept 0.998; the lab showed the
// same (bench/cc-fairness.sh: Jain 0.84-0.97, one QP at half the others'
// rate for seconds).  Only heavy marking (alpha >= dlv_alpha, a start or
// an incast) cuts from the delivery rate now.  The median utilisation
// must stay within 5% of DCQCN's under the same noise.
TEST(CcSim, MetaFairUnderHostStalls)
{
	std::vector<Result> runs[2];
	std::vector<double> jain[2], util[2];

	RunSeeds(runs, 50, 20);
	for (int a = 0; a < 2; a++) {
		jain[a] = Sorted(runs[a], [](const Result &r) { return r.jain; });
		util[a] = Sorted(runs[a], [](const Result &r) { return r.util; });
	}
	std::printf("host stalls, median over 5 seeds: jain dcqcn %.3f metaroce %.3f "
		    "(lowest %.3f), utilisation dcqcn %.3f metaroce %.3f\n",
		    jain[0][2], jain[1][2], jain[1][0], util[0][2], util[1][2]);
	EXPECT_GE(jain[1][2], 0.95);
	EXPECT_GE(jain[1][0], 0.90);
	EXPECT_GE(util[1][2], 0.95 * util[0][2]);
}

// Issue 14: "zero drops at the bottleneck queue".  Three flows start at
// the line rate together (a 3:1 incast; the fourth joins at 4 s, after
// the 2 s start_drops counts) over a 20 ms round trip (the lab's rate
// timer T; the guest's RTT under load is of that order): the first cut
// comes a round trip after the first mark, and a cut from the rate (half
// of three times the link is still 1.5 times the link) left the queue to
// overflow for a second round: 29-146 drops over five seeds.  Cutting
// from the delivery rate (mrxe_ecn_cc.h) ends the overload at the first
// cut.  The longer the RTT, the more the first round alone overflows (at
// 40 ms 200-250 drops either way, DCQCN 134-169).  Four flows at once
// (CC_SIM_NLATE=0) overflow the 300 kB queue in 27 ms, before any mark
// can return over 20 ms: 633 drops over five seeds, DCQCN 779
// (known-issues.rst).
TEST(CcSim, MetaStartsWithoutDrops)
{
	std::vector<u64> drops[2];

	for (u64 seed = 1; seed <= 5; seed++)
		for (int a = 0; a < 2; a++)
			drops[a].push_back(Simulate(a ? Algo::Meta : Algo::Dcqcn,
						    8 * kS, 4 * kS, 4 * kS,
						    seed, 10000).start_drops);
	for (int a = 0; a < 2; a++)
		std::sort(drops[a].begin(), drops[a].end());
	std::printf("start drops over 5 seeds, RTT 20 ms: dcqcn %llu..%llu, "
		    "metaroce %llu..%llu\n",
		    (unsigned long long)drops[0][0], (unsigned long long)drops[0][4],
		    (unsigned long long)drops[1][0], (unsigned long long)drops[1][4]);
	EXPECT_LE(drops[1][2], 5u);
	EXPECT_LE(drops[1][2], drops[0][2]);
}

} // namespace
