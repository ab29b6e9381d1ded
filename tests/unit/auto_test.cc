// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// Unit tests for drivers/proto/mrxe_auto.{h,c}: the `auto` upgrade rules
// (wire-format.rst "auto: in-band upgrade"), one by one and driving a
// simulated requester/responder pair: a bulk sender that never pauses,
// go-back-N before the switch and selective repeat after it, over a
// channel with randomized loss, duplication and reordering in both
// directions, against an mrxe responder (it must switch) and against one
// that never echoes CAP (stock rxe: it must not).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "sim_seeds.h"

extern "C" {
#include "mrxe_auto.h"
#include "mrxe_wire.h"
}

namespace {

TEST(Auto, CapIsOfferedUntilTheSwitch)
{
	EXPECT_FALSE(mrxe_auto_offers_cap(MRXE_AUTO_OFF));
	EXPECT_TRUE(mrxe_auto_offers_cap(MRXE_AUTO_PROBE));
	EXPECT_TRUE(mrxe_auto_offers_cap(MRXE_AUTO_UPGRADE));
	EXPECT_FALSE(mrxe_auto_offers_cap(MRXE_AUTO_STANDARD));
	EXPECT_FALSE(mrxe_auto_offers_cap(MRXE_AUTO_META));
}

TEST(Auto, FirstStandardResponseDecides)
{
	EXPECT_EQ(mrxe_auto_on_response(MRXE_AUTO_PROBE, false, true),
		  MRXE_AUTO_UPGRADE);
	EXPECT_EQ(mrxe_auto_on_response(MRXE_AUTO_PROBE, false, false),
		  MRXE_AUTO_STANDARD);
	// decided for good: a later response changes nothing
	EXPECT_EQ(mrxe_auto_on_response(MRXE_AUTO_STANDARD, false, true),
		  MRXE_AUTO_STANDARD);
	EXPECT_EQ(mrxe_auto_on_response(MRXE_AUTO_UPGRADE, false, false),
		  MRXE_AUTO_UPGRADE);
	EXPECT_EQ(mrxe_auto_on_response(MRXE_AUTO_META, false, false),
		  MRXE_AUTO_META);
	// a MetaRoCE response decides nothing, not an auto QP is left alone
	EXPECT_EQ(mrxe_auto_on_response(MRXE_AUTO_PROBE, true, true),
		  MRXE_AUTO_PROBE);
	EXPECT_EQ(mrxe_auto_on_response(MRXE_AUTO_OFF, false, true),
		  MRXE_AUTO_OFF);
}

TEST(Auto, UpgradeHoldsNewMessagesUntilDrained)
{
	struct mrxe_auto_req r = {};

	r.comp_psn = 10;
	r.psn = 20;
	r.next_new_psn = 20;
	EXPECT_TRUE(mrxe_auto_may_start_msg(MRXE_AUTO_PROBE, &r));
	EXPECT_TRUE(mrxe_auto_may_start_msg(MRXE_AUTO_STANDARD, &r));
	EXPECT_FALSE(mrxe_auto_may_start_msg(MRXE_AUTO_UPGRADE, &r));
	EXPECT_FALSE(mrxe_auto_may_switch(MRXE_AUTO_UPGRADE, &r));
	r.in_msg = true;	// the message in progress is finished
	EXPECT_TRUE(mrxe_auto_may_start_msg(MRXE_AUTO_UPGRADE, &r));
	r.in_msg = false;
	r.comp_psn = 20;
	EXPECT_TRUE(mrxe_auto_may_start_msg(MRXE_AUTO_UPGRADE, &r));
	EXPECT_TRUE(mrxe_auto_may_switch(MRXE_AUTO_UPGRADE, &r));
	EXPECT_FALSE(mrxe_auto_may_switch(MRXE_AUTO_PROBE, &r));
	EXPECT_FALSE(mrxe_auto_may_switch(MRXE_AUTO_META, &r));
	// go-back-N rewound psn: resend first
	r.psn = 15;
	EXPECT_FALSE(mrxe_auto_may_switch(MRXE_AUTO_UPGRADE, &r));
	r.psn = 20;
	r.rd_atomic = true;
	EXPECT_FALSE(mrxe_auto_may_switch(MRXE_AUTO_UPGRADE, &r));
	r.rd_atomic = false;
	r.rnr_wait = true;
	EXPECT_FALSE(mrxe_auto_may_switch(MRXE_AUTO_UPGRADE, &r));
	r.rnr_wait = false;
	r.in_msg = true;
	EXPECT_FALSE(mrxe_auto_may_switch(MRXE_AUTO_UPGRADE, &r));
	// the drain window: only in UPGRADE, never above the standard one
	EXPECT_EQ(mrxe_auto_std_window(MRXE_AUTO_UPGRADE, 256),
		  (u32)MRXE_AUTO_DRAIN_WINDOW);
	EXPECT_EQ(mrxe_auto_std_window(MRXE_AUTO_UPGRADE, 8), 8u);
	EXPECT_EQ(mrxe_auto_std_window(MRXE_AUTO_PROBE, 256), 256u);
	EXPECT_EQ(mrxe_auto_std_window(MRXE_AUTO_STANDARD, 256), 256u);
	// PSN wrap: the boundary is a PSN like any other
	r = {};
	r.comp_psn = r.psn = r.next_new_psn = MRXE_PSN_MASK;
	EXPECT_TRUE(mrxe_auto_may_switch(MRXE_AUTO_UPGRADE, &r));
}

enum mrxe_auto_rx classify(bool is_auto, bool switched, bool meta, u32 psn,
			   u32 epsn, bool cap = false, bool seen = false)
{
	struct mrxe_auto_rsp r = {is_auto, switched, seen, epsn, 4096};

	return mrxe_auto_rx_classify(&r, meta, cap, psn);
}

TEST(Auto, ResponderClassifiesByModeAndWindow)
{
	const u32 w = 4096, e = 100;

	// standard receive side
	EXPECT_EQ(classify(true, false, false, e, e), MRXE_AUTO_RX_STANDARD);
	EXPECT_EQ(classify(false, false, false, e + 5, e), MRXE_AUTO_RX_STANDARD);
	EXPECT_EQ(classify(true, false, true, e, e), MRXE_AUTO_RX_SWITCH);
	EXPECT_EQ(classify(true, false, true, e + w - 1, e), MRXE_AUTO_RX_SWITCH);
	EXPECT_EQ(classify(true, false, true, e + w, e), MRXE_AUTO_RX_MISMATCH);
	EXPECT_EQ(classify(true, false, true, e - 1, e), MRXE_AUTO_RX_MISMATCH);
	// a standard QP never switches
	EXPECT_EQ(classify(false, false, true, e, e), MRXE_AUTO_RX_MISMATCH);
	// switched receive side
	EXPECT_EQ(classify(true, true, true, e + 7, e), MRXE_AUTO_RX_META);
	EXPECT_EQ(classify(true, true, false, e - 1, e), MRXE_AUTO_RX_DUP);
	EXPECT_EQ(classify(true, true, false, e, e), MRXE_AUTO_RX_MISMATCH);
	EXPECT_EQ(classify(true, true, false, e, e, true), MRXE_AUTO_RX_MISMATCH);
	// a forced metaroce QP takes no RoCEv2 without CAP (a standard peer)
	EXPECT_EQ(classify(false, true, false, e - 1, e), MRXE_AUTO_RX_MISMATCH);
	EXPECT_EQ(classify(false, true, false, e, e), MRXE_AUTO_RX_MISMATCH);
	// ... and falls back for an `auto` peer, before any MetaRoCE request
	EXPECT_EQ(classify(false, true, false, e, e, true), MRXE_AUTO_RX_FALLBACK);
	EXPECT_EQ(classify(false, true, false, e, e, true, true),
		  MRXE_AUTO_RX_MISMATCH);
	// across the PSN wrap
	EXPECT_EQ(classify(true, false, true, 3, MRXE_PSN_MASK - 2),
		  MRXE_AUTO_RX_SWITCH);
	EXPECT_EQ(classify(true, true, false, MRXE_PSN_MASK, 2), MRXE_AUTO_RX_DUP);
}

TEST(Auto, LateStandardResponsesAfterTheSwitch)
{
	EXPECT_TRUE(mrxe_auto_late_response(MRXE_AUTO_META, 99, 100));
	EXPECT_TRUE(mrxe_auto_late_response(MRXE_AUTO_META, 100, 100));
	EXPECT_FALSE(mrxe_auto_late_response(MRXE_AUTO_META, 101, 100));
	EXPECT_FALSE(mrxe_auto_late_response(MRXE_AUTO_OFF, 99, 100));
	EXPECT_TRUE(mrxe_auto_late_response(MRXE_AUTO_META, MRXE_PSN_MASK, 1));
}

// ---- the pair, simulated ------------------------------------------------

struct Pkt {
	u32 psn;
	bool meta;	// TVer 1 (request) / MetaRoCE ACK (response)
	bool cap;	// BTH CAP bit
	bool nak;	// standard: NAK sequence error at psn
	u32 sacked;	// MetaRoCE ACK: the PSN that arrived
};

struct Link {
	std::multimap<long, Pkt> q;	// arrival tick -> packet
	double loss, dup;
	int delay, jitter;
	long dropped = 0;

	void send(std::mt19937 &rng, long now, const Pkt &p)
	{
		std::uniform_real_distribution<double> u(0, 1);
		std::uniform_int_distribution<int> j(0, jitter);
		int n = u(rng) < dup ? 2 : 1;

		for (int i = 0; i < n; i++) {
			if (u(rng) < loss) {
				dropped++;
				continue;
			}
			q.emplace(now + delay + j(rng), p);
		}
	}
	bool take(long now, Pkt *p)
	{
		if (q.empty() || q.begin()->first > now)
			return false;
		*p = q.begin()->second;
		q.erase(q.begin());
		return true;
	}
};

struct Cfg {
	double loss, dup;
	int jitter;
	bool peer_echoes;	// an mrxe responder; false: stock rxe
	bool hold = true;	// mrxe_auto_may_start_msg (false: ignore it)
	bool forced = false;	// the mrxe responder is a forced metaroce QP
	bool drain_window = true;	// mrxe_auto_std_window (false: ignore it)
};

struct Result {
	bool switched = false;
	u32 switch_psn = 0;
	long std_after_echo = 0;	// standard packets sent after the echo
	long mismatches = 0;
	long meta_sent = 0;
	long ticks = 0;
	bool done = false;
	std::string err;
};

constexpr u32 kStdWindow = 256;	// MRXE_STD_WINDOW
constexpr u32 kMetaWindow = 4096;	// MetaRoCE window
constexpr long kRto = 60;		// ticks

Result run_pair(unsigned seed, const Cfg &c)
{
	std::mt19937 rng(seed);
	std::uniform_int_distribution<int> msglen(1, 64);
	Link fwd{{}, c.loss, c.dup, 5, c.jitter}, rev{{}, c.loss, c.dup, 5, c.jitter};
	Result r;

	// requester: messages of 1..64 packets, PSNs from a start near the wrap
	const u32 start = MRXE_PSN_MASK - 300;
	const int nmsg = 600;
	std::vector<u32> msg_first;	// first PSN of each message
	u32 total = 0;
	for (int i = 0; i < nmsg; i++) {
		msg_first.push_back(mrxe_psn_add(start, total));
		total += msglen(rng);
	}
	const u32 end_psn = mrxe_psn_add(start, total);
	u32 comp = start, psn = start, next_new = start;
	auto msg_end = [&](size_t i) {
		return i + 1 < msg_first.size() ? msg_first[i + 1] : end_psn;
	};
	// the kernel's w->psn_valid: the message has been started
	auto started = [&](size_t i) {
		return i < msg_first.size() &&
		       mrxe_psn_before(msg_first[i], next_new);
	};
	enum mrxe_auto_state st = MRXE_AUTO_PROBE;
	size_t cur = 0;			// message being sent (or next)
	bool echo_seen = false;
	long last_progress = 0;
	std::set<u32> acked;		// MetaRoCE: SACKed PSNs above comp

	// responder
	u32 epsn = start;
	bool cap_peer = false, switched_rx = c.forced, fallback = false;
	bool meta_seen = false;
	std::set<u32> held;		// MetaRoCE: arrived above ePSN
	std::map<u32, int> delivered;	// PSN -> times delivered

	auto msg_of = [&](u32 p) {	// the message a PSN belongs to
		size_t lo = 0, hi = msg_first.size();
		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;
			if (mrxe_psn_diff(p, msg_first[mid]) >= 0)
				lo = mid;
			else
				hi = mid;
		}
		return lo;
	};
	auto deliver = [&](u32 p) { delivered[p]++; };
	auto std_ack = [&](long now, bool nak) {
		Pkt a{};
		a.psn = nak ? epsn : mrxe_psn_add(epsn, MRXE_PSN_MASK);
		a.cap = c.peer_echoes && cap_peer;
		a.nak = nak;
		rev.send(rng, now, a);
	};

	for (long now = 0; now < 400000; now++) {
		Pkt p;

		// responder
		while (fwd.take(now, &p)) {
			if (p.cap && c.peer_echoes)
				cap_peer = true;
			if (!c.peer_echoes) {
				// stock rxe: drops TVer 1, standard go-back-N
				if (p.meta) {
					r.err = "a MetaRoCE packet reached a stock peer";
					return r;
				}
			}
			enum mrxe_auto_rx v = MRXE_AUTO_RX_STANDARD;
			if (c.peer_echoes) {
				struct mrxe_auto_rsp rs = {
					!c.forced || fallback, switched_rx,
					meta_seen, epsn, kMetaWindow};

				v = mrxe_auto_rx_classify(&rs, p.meta, p.cap,
							  p.psn);
				if (v == MRXE_AUTO_RX_FALLBACK) {
					// step 2: negotiate as `auto` does
					fallback = true;
					switched_rx = rs.switched = false;
					rs.is_auto = true;
					v = mrxe_auto_rx_classify(&rs, p.meta,
								  p.cap, p.psn);
				}
			}
			switch (v) {
			case MRXE_AUTO_RX_STANDARD:
				if (p.psn == epsn) {
					deliver(p.psn);
					epsn = mrxe_psn_add(epsn, 1);
					std_ack(now, false);
				} else if (mrxe_psn_before(p.psn, epsn)) {
					std_ack(now, false);	// duplicate
				} else {
					std_ack(now, true);	// IBA 9.7.5.2.2
				}
				break;
			case MRXE_AUTO_RX_SWITCH:
				// step 4: everything before the switch PSN was
				// acknowledged, so ePSN is the switch PSN
				if (!r.switched || epsn != r.switch_psn) {
					r.err = "receive side switched away from the switch PSN";
					return r;
				}
				switched_rx = true;
				held.clear();
				[[fallthrough]];
			case MRXE_AUTO_RX_META: {
				Pkt a{};

				meta_seen = true;
				if (mrxe_psn_diff(p.psn, epsn) >= 0 &&
				    !held.count(p.psn)) {
					deliver(p.psn);	// placed on arrival
					held.insert(p.psn);
					while (held.count(epsn)) {
						held.erase(epsn);
						epsn = mrxe_psn_add(epsn, 1);
					}
				}
				a.meta = true;
				a.psn = mrxe_psn_add(epsn, MRXE_PSN_MASK);
				a.sacked = p.psn;
				rev.send(rng, now, a);
				break;
			}
			case MRXE_AUTO_RX_DUP:
				break;
			case MRXE_AUTO_RX_FALLBACK:
			case MRXE_AUTO_RX_MISMATCH:
				r.mismatches++;
				break;
			}
		}

		// requester: responses
		while (rev.take(now, &p)) {
			if (!p.meta && !echo_seen && st == MRXE_AUTO_PROBE)
				echo_seen = p.cap;
			st = mrxe_auto_on_response(st, p.meta, p.cap);
			if (st == MRXE_AUTO_META && !p.meta) {
				if (!mrxe_auto_late_response(st, p.psn,
							     r.switch_psn))
					r.mismatches++;
				continue;
			}
			if (p.meta && st != MRXE_AUTO_META) {
				r.mismatches++;
				continue;
			}
			u32 cum = mrxe_psn_add(p.psn, 1);
			if (p.nak)
				cum = p.psn;
			if (mrxe_psn_diff(cum, comp) > 0 &&
			    mrxe_psn_diff(cum, psn) <= 0) {
				comp = cum;
				last_progress = now;
			}
			if (p.meta) {
				if (mrxe_psn_diff(p.sacked, comp) >= 0)
					acked.insert(p.sacked);
				while (acked.count(comp)) {
					acked.erase(comp);
					comp = mrxe_psn_add(comp, 1);
					last_progress = now;
				}
				for (auto it = acked.begin(); it != acked.end();)
					it = mrxe_psn_before(*it, comp) ?
					     acked.erase(it) : std::next(it);
			} else if (p.nak && mrxe_psn_diff(p.psn, comp) >= 0 &&
				   mrxe_psn_before(p.psn, psn)) {
				psn = p.psn;	// go back N
				cur = msg_of(psn);
			}
		}
		if (comp == end_psn && psn == end_psn) {
			r.done = true;
			r.ticks = now;
			break;
		}
		// requester: timeout
		if (comp != psn && now - last_progress > kRto) {
			last_progress = now;
			if (st == MRXE_AUTO_META) {
				for (u32 q = comp; q != psn && q != mrxe_psn_add(comp, 64);
				     q = mrxe_psn_add(q, 1))
					if (!acked.count(q)) {
						fwd.send(rng, now, {q, true, false, false, 0});
						r.meta_sent++;
					}
			} else {
				psn = comp;
				cur = msg_of(psn);
			}
		}
		// requester: switch, then send up to 4 packets a tick
		struct mrxe_auto_req v = {};
		v.comp_psn = comp;
		v.psn = psn;
		v.next_new_psn = next_new;
		v.in_msg = psn != end_psn && started(cur);
		if (st == MRXE_AUTO_UPGRADE && mrxe_auto_may_switch(st, &v)) {
			if (comp != psn || comp != next_new) {
				r.err = "switched with standard PSNs outstanding";
				return r;
			}
			st = MRXE_AUTO_META;
			r.switched = true;
			r.switch_psn = psn;
		}
		for (int n = 0; n < 4 && psn != end_psn; n++) {
			bool meta = st == MRXE_AUTO_META;
			u32 win = meta ? kMetaWindow :
				  c.drain_window ? mrxe_auto_std_window(st, kStdWindow) :
				  kStdWindow;

			if (mrxe_psn_diff(psn, comp) >= (s32)win)
				break;
			v.comp_psn = comp;
			v.next_new_psn = next_new;
			v.in_msg = started(cur);
			if (c.hold && !mrxe_auto_may_start_msg(st, &v))
				break;
			if (meta && acked.count(psn)) {
				psn = mrxe_psn_add(psn, 1);
				if (psn == msg_end(cur))
					cur++;
				continue;
			}
			if (!started(cur))
				next_new = msg_end(cur);
			fwd.send(rng, now, {psn, meta, mrxe_auto_offers_cap(st),
					    false, 0});
			if (meta)
				r.meta_sent++;
			else if (echo_seen)
				r.std_after_echo++;
			psn = mrxe_psn_add(psn, 1);
			if (psn == msg_end(cur))
				cur++;
		}
	}
	if (!r.done) {
		r.err = "did not finish";
		return r;
	}
	// every PSN delivered, once
	for (u32 q = start; q != end_psn; q = mrxe_psn_add(q, 1)) {
		auto it = delivered.find(q);
		if (it == delivered.end() || it->second != 1) {
			char b[96];
			snprintf(b, sizeof(b), "psn %#x delivered %d times", q,
				 it == delivered.end() ? 0 : it->second);
			r.err = b;
			return r;
		}
	}
	return r;
}

const Cfg kCfgs[] = {
	{0.0, 0.0, 0, true},	{0.01, 0.0, 0, true},	{0.05, 0.0, 0, true},
	{0.0, 0.0, 8, true},	{0.0, 0.02, 0, true},	{0.02, 0.02, 6, true},
	{0.0, 0.0, 0, false},	{0.02, 0.02, 6, false},
	// `auto` requester, forced metaroce responder (it falls back)
	{0.0, 0.0, 0, true, true, true}, {0.02, 0.02, 6, true, true, true},
};

TEST(AutoSim, BulkSenderSwitchesOnceDrainedAndLosesNothing)
{
	for (unsigned seed : sim_seeds({1, 2, 3}, 3)) {
		for (const Cfg &c : kCfgs) {
			SCOPED_TRACE(testing::Message()
				     << "seed " << seed << " loss " << c.loss
				     << " dup " << c.dup << " jitter " << c.jitter
				     << (c.peer_echoes ? c.forced ?
					 " forced metaroce peer" : " mrxe peer" :
					 " stock peer"));
			Result r = run_pair(seed, c);

			ASSERT_EQ(r.err, "");
			EXPECT_EQ(r.mismatches, 0);
			if (getenv("AUTO_SIM_PRINT"))
				printf("loss %.2f dup %.2f jitter %d forced %d: std after echo %ld\n",
				       c.loss, c.dup, c.jitter, c.forced, r.std_after_echo);
			if (c.peer_echoes) {
				// the switch comes after the standard window
				// drains, not at the end of the run
				EXPECT_TRUE(r.switched);
				EXPECT_GT(r.meta_sent, 0);
				EXPECT_LE(r.std_after_echo, 12 * (long)kStdWindow);
			} else {
				EXPECT_FALSE(r.switched);
				EXPECT_EQ(r.meta_sent, 0);
			}
		}
	}
}

// Without the hold (mrxe_auto_may_start_msg) a sender that keeps packets
// in flight never reaches a drained message boundary before its last
// message: the rule is what makes a bulk sender switch (the lab's
// ib_write_bw stayed on go-back-N for the whole run without it).
TEST(AutoSim, WithoutTheHoldABulkSenderStaysStandard)
{
	for (unsigned seed : sim_seeds({1, 2}, 1)) {
		Cfg c{0.0, 0.0, 0, true, false};
		Result r = run_pair(seed, c);

		SCOPED_TRACE(testing::Message() << "seed " << seed);
		ASSERT_EQ(r.err, "");
		EXPECT_EQ(r.meta_sent, 0);
		EXPECT_GT(r.std_after_echo, 10000);
	}
}

// The drain window (mrxe_auto_std_window) bounds what each go-back-N
// episode of the drain resends: at 5% loss, over six fixed seeds, the
// standard packets sent after the echo were 963 with it, 1481 without.
TEST(AutoSim, DrainWindowCutsTheGoBackNCost)
{
	long with = 0, without = 0;

	for (unsigned seed = 1; seed <= 6; seed++) {
		Cfg c{0.05, 0.0, 0, true};
		Result a = run_pair(seed, c);

		c.drain_window = false;
		Result b = run_pair(seed, c);
		ASSERT_EQ(a.err, "");
		ASSERT_EQ(b.err, "");
		with += a.std_after_echo;
		without += b.std_after_echo;
	}
	printf("standard packets after the echo, 6 seeds at 5%% loss: %ld with the drain window, %ld without\n",
	       with, without);
	EXPECT_LT(with * 4, without * 3);
}

} // namespace
