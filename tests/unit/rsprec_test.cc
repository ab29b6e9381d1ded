// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// Unit tests for drivers/proto/mrxe_rsprec.{h,c}: READ/atomic response
// recovery.  First each rule alone against a scripted requester (the
// per-PSN facts the kernel keeps in its meta ring), then a seeded
// randomized simulation: a requester issuing READs in 64-PSN chunks to a
// model responder over a lossy, reordering, duplicating channel.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <queue>
#include <random>
#include <vector>

extern "C" {
#include "mrxe_rsprec.h"
#include "mrxe_rtt.h"
#include "mrxe_wire.h"
}
#include "sim_seeds.h"

namespace {

constexpr u64 kUs = 1000, kMs = 1000 * kUs;
constexpr u64 kDelackNs = 1 * kMs;

// ---- deterministic rules: a scripted requester ----

struct Rerequest {
	u32 psn, last;
	bool one;
};

// Per-PSN facts from @base on, as the kernel's meta ring holds them.
struct Script {
	u32 base = MRXE_PSN_MASK - 10;	// the PSNs wrap in every test
	u32 n = 0;			// PSNs sent: [base, base + n)
	u32 chunk = 64;			// a run ends at a chunk's end
	std::vector<bool> got;
	std::vector<u64> send_ns;
	std::vector<bool> rt;
	std::vector<Rerequest> asked;
	u64 now = 0;
	int fail = 0;			// rerequest() fails this many times

	struct mrxe_rsprec r;
	struct mrxe_rsprec_env e;
	struct mrxe_rsprec_ops ops;

	u32 psn(u32 i) const { return mrxe_psn_add(base, i); }
	int idx(u32 q) const
	{
		s32 d = mrxe_psn_diff(q, base);

		return d >= 0 && (u32)d < n ? d : -1;
	}

	static bool missing_cb(void *ctx, u32 q)
	{
		Script *s = static_cast<Script *>(ctx);
		int i = s->idx(q);

		return i >= 0 && !s->got[i];
	}
	static bool sent_cb(void *ctx, u32 q, u64 *send_ns, bool *rt)
	{
		Script *s = static_cast<Script *>(ctx);
		int i = s->idx(q);

		if (i < 0)
			return false;
		*send_ns = s->send_ns[i];
		*rt = s->rt[i];
		return true;
	}
	static int rerequest_cb(void *ctx, u32 q, bool one, u32 *last)
	{
		Script *s = static_cast<Script *>(ctx);
		int i = s->idx(q), j = i;

		if (s->fail) {
			s->fail--;
			return -1;
		}
		if (!one)
			while ((u32)(j + 1) < s->n && (j + 1) % s->chunk &&
			       !s->got[j + 1])
				j++;
		for (int k = i; k <= j; k++) {
			s->send_ns[k] = s->now;
			s->rt[k] = !one;
		}
		*last = s->psn(j);
		s->asked.push_back({ q, *last, one });
		return 0;
	}

	Script(u32 npsn, u64 srtt = 1 * kMs, u64 rto = 10 * kMs,
	       u64 reo = 250 * kUs)
	{
		n = npsn;
		got.assign(n, false);
		send_ns.assign(n, 0);
		rt.assign(n, false);
		ops = { missing_cb, sent_cb, rerequest_cb };
		mrxe_rsprec_reset(&r);
		e = {};
		e.ops = &ops;
		e.ctx = this;
		e.srtt_ns = srtt;
		e.rto_ns = rto;
		e.delack_ns = 1 * kMs;
		e.reo_wnd_ns = reo;
		e.comp_psn = base;
		e.nxt = psn(n);
	}
	// all PSNs sent at @t as first requests
	void sent_all(u64 t)
	{
		std::fill(send_ns.begin(), send_ns.end(), t);
	}
	// a response for index @i arrives (no comp.psn move)
	void respond(u32 i)
	{
		got[i] = true;
		mrxe_rsprec_on_response(&r, psn(i), send_ns[i], rt[i], now);
	}
	// comp.psn = index @i; una: index @una_i
	bool advance(u32 i, u32 una_i)
	{
		e.now_ns = now;
		e.comp_psn = psn(i);
		return mrxe_rsprec_advance(&r, &e, psn(una_i));
	}
	void gap()
	{
		e.now_ns = now;
		mrxe_rsprec_gap(&r, &e);
	}
	enum mrxe_rsprec_action deadline(int retry_cnt = 7)
	{
		now = r.deadline_ns;
		e.now_ns = now;
		return mrxe_rsprec_on_deadline(&r, &e, retry_cnt);
	}
	bool lost(u32 i)
	{
		e.now_ns = now;
		return mrxe_rsprec_lost(&r, &e, psn(i));
	}
};

// Nothing missing: no deadline; a missing response: a tail probe first
// (2 SRTT + delack), which asks for that PSN alone; then the RTO, doubled
// for each timeout without progress (RFC 6298 5.5; a probe or a gap round
// does not back it off, RFC 8985 7.3), which asks for the runs.
TEST(RspRec, ProbeFirstThenBackedOffTimeouts)
{
	Script s(64);

	s.sent_all(0);
	s.now = 100 * kUs;
	EXPECT_TRUE(s.advance(0, 0));
	EXPECT_EQ(s.r.deadline_ns, 0u);
	EXPECT_FALSE(mrxe_rsprec_due(&s.r, s.now));
	EXPECT_EQ(mrxe_rsprec_on_deadline(&s.r, &s.e, 7), MRXE_RSPREC_NONE);

	EXPECT_FALSE(s.advance(0, 64));
	EXPECT_TRUE(s.r.probe);
	EXPECT_EQ(s.r.deadline_ns, 100 * kUs + 3 * kMs);
	// not due a nanosecond early
	s.e.now_ns = s.r.deadline_ns - 1;
	EXPECT_EQ(mrxe_rsprec_on_deadline(&s.r, &s.e, 7), MRXE_RSPREC_NONE);
	EXPECT_TRUE(s.asked.empty());

	EXPECT_EQ(s.deadline(), MRXE_RSPREC_PROBE_ONE);
	ASSERT_EQ(s.asked.size(), 1u);
	EXPECT_TRUE(s.asked[0].one);
	EXPECT_EQ(s.asked[0].psn, s.psn(0));
	EXPECT_FALSE(s.r.probe);
	EXPECT_EQ(s.r.backoff, 1);
	EXPECT_EQ(s.r.timeouts, 0);
	EXPECT_EQ(s.r.deadline_ns, s.now + 10 * kMs);

	EXPECT_EQ(s.deadline(), MRXE_RSPREC_TIMEOUT_RUNS);
	ASSERT_EQ(s.asked.size(), 2u);
	EXPECT_FALSE(s.asked[1].one);
	EXPECT_EQ(s.asked[1].last, s.psn(63));
	EXPECT_EQ(s.r.timeouts, 1);
	EXPECT_EQ(s.r.deadline_ns, s.now + (10 * kMs << 1));
	// the backoff stops doubling at 64 x RTO
	for (int i = 0; i < 8; i++)
		s.deadline(-1);
	EXPECT_EQ(s.r.deadline_ns, s.now + (10 * kMs << 6));
}

// No probe without an SRTT, or when 2 SRTT + delack reaches the RTO.
TEST(RspRec, NoProbeWithoutSrttOrWhenNotShorterThanRto)
{
	Script a(8, 0, 10 * kMs);

	a.advance(0, 8);
	EXPECT_FALSE(a.r.probe);
	EXPECT_EQ(a.r.deadline_ns, 10 * kMs);
	EXPECT_EQ(a.deadline(), MRXE_RSPREC_TIMEOUT_RUNS);

	Script b(8, 4500 * kUs, 10 * kMs);	// 2 x 4.5 + 1 = 10 ms

	b.advance(0, 8);
	EXPECT_FALSE(b.r.probe);
	EXPECT_EQ(b.r.deadline_ns, 10 * kMs);
}

// A response stream (more than a chunk outstanding) that stalls is late,
// not lost: its probe waits until SRTT + 4 RTTVAR when that is later than
// 2 SRTT (RFC 6298's allowance for late answers); a lone READ keeps the
// 2 SRTT probe, and without variation nothing changes.
TEST(RspRec, StreamProbeWaitsForRttVariation)
{
	Script a(256, 1 * kMs, 50 * kMs);	// 256 PSNs outstanding

	a.e.rttvar_ns = 2 * kMs;
	a.sent_all(0);
	a.advance(0, 256);
	EXPECT_TRUE(a.r.probe);
	EXPECT_EQ(a.r.deadline_ns, (1 + 4 * 2) * kMs + 1 * kMs);
	a.now = a.r.deadline_ns - 1;
	a.e.now_ns = a.now;
	EXPECT_EQ(mrxe_rsprec_on_deadline(&a.r, &a.e, 7), MRXE_RSPREC_NONE);
	EXPECT_EQ(a.deadline(), MRXE_RSPREC_PROBE_ONE);

	Script b(256, 1 * kMs, 50 * kMs);	// no variation measured

	b.advance(0, 256);
	EXPECT_EQ(b.r.deadline_ns, 2 * kMs + 1 * kMs);

	Script c(64, 1 * kMs, 50 * kMs);	// one chunk: a lone READ

	c.e.rttvar_ns = 2 * kMs;
	c.advance(0, 64);
	EXPECT_TRUE(c.r.probe);
	EXPECT_EQ(c.r.deadline_ns, 2 * kMs + 1 * kMs);

	// the probe never reaches the RTO: then the RTO it is
	Script d(256, 1 * kMs, 10 * kMs);

	d.e.rttvar_ns = 3 * kMs;		// 1 + 12 + 1 > 10
	d.advance(0, 256);
	EXPECT_FALSE(d.r.probe);
	EXPECT_EQ(d.r.deadline_ns, 10 * kMs);
}

// The deadline runs for comp.psn: it is not restarted while comp.psn
// stays, and comp.psn's move resets the backoff and the retry budget.
TEST(RspRec, DeadlineFollowsCompPsn)
{
	Script s(128);

	s.sent_all(0);
	s.advance(0, 128);
	u64 d = s.r.deadline_ns;

	s.now = 1 * kMs;
	s.advance(0, 128);
	EXPECT_EQ(s.r.deadline_ns, d);
	s.deadline();
	s.deadline();
	EXPECT_EQ(s.r.backoff, 2);
	EXPECT_EQ(s.r.timeouts, 1);
	s.respond(0);
	s.advance(1, 128);
	EXPECT_EQ(s.r.backoff, 0);
	EXPECT_EQ(s.r.timeouts, 0);
	EXPECT_TRUE(s.r.probe);
	EXPECT_EQ(s.r.psn, s.psn(1));
	// reset forgets everything
	mrxe_rsprec_reset(&s.r);
	EXPECT_EQ(s.r.deadline_ns, 0u);
	EXPECT_FALSE(s.r.hi_valid);
}

// A response for a later PSN proves the earlier missing ones lost (PSN
// order), not the later ones; once comp.psn passes it, it is forgotten
// (it would look new again after the 24-bit wrap).
TEST(RspRec, LostByNewerResponse)
{
	Script s(64);

	s.sent_all(0);
	s.respond(10);
	EXPECT_TRUE(s.lost(0));
	EXPECT_TRUE(s.lost(9));
	EXPECT_FALSE(s.lost(10));
	EXPECT_FALSE(s.lost(11));
	s.advance(11, 64);
	EXPECT_FALSE(s.r.hi_valid);
	EXPECT_FALSE(s.lost(0));
}

// RACK's send-time rule: the response to a request sent later proves a
// first request's response lost, whatever the PSNs.
TEST(RspRec, LostBySendTime)
{
	Script s(64);

	s.sent_all(0);
	for (u32 i = 32; i < 64; i++)
		s.send_ns[i] = 1 * kMs;	// a later chunk, sent later
	// the response for PSN 40 is newer by PSN, hi covers 0..39
	s.respond(40);
	EXPECT_TRUE(s.lost(39));
	EXPECT_FALSE(s.lost(41));	// same send time: not proof
	// a probe's answer (one PSN, not a run: counts against all) for 0
	s.now = 3 * kMs;
	s.send_ns[0] = s.now;
	s.rt[0] = false;
	s.respond(0);
	EXPECT_TRUE(s.lost(41));	// sent at 1 ms < 3 ms
	EXPECT_TRUE(s.lost(63));
}

// A re-requested run is answered ahead of the first requests the
// responder holds: its response proves only older re-requested runs lost.
TEST(RspRec, ReRequestResponsesCountOnlyAgainstReRequests)
{
	Script s(64);

	s.sent_all(0);
	s.rt[5] = true;			// re-requested at 0
	s.send_ns[20] = 2 * kMs;	// re-requested run at 2 ms
	s.rt[20] = true;
	s.respond(20);
	s.advance(0, 64);
	s.r.hi_valid = false;		// PSN order aside: send time only
	EXPECT_EQ(s.r.rack_rt_ns, 2 * kMs);
	EXPECT_EQ(s.r.rack_ns, 0u);
	EXPECT_FALSE(s.lost(0));	// a first request: not proven
	EXPECT_TRUE(s.lost(5));		// an older re-request: lost
	// a first request's response counts against both
	s.send_ns[30] = 3 * kMs;
	s.respond(30);
	s.r.hi_valid = false;
	EXPECT_TRUE(s.lost(0));
	EXPECT_EQ(s.r.rack_ns, 3 * kMs);
	// nothing is known of a PSN not sent: not lost by send time
	EXPECT_FALSE(mrxe_rsprec_lost(&s.r, &s.e, s.psn(64)));
}

// Evidence arms a gap round after the reordering window (at least
// MRXE_RSPREC_REO_NS), only if that is earlier than the deadline, only
// once per missing PSN and never after a re-request.
TEST(RspRec, GapArmedOnlyWhenEarlierThanDeadline)
{
	Script s(64);

	s.sent_all(0);
	s.advance(0, 64);
	s.gap();			// no evidence: nothing
	EXPECT_FALSE(s.r.fast);
	s.now = 1 * kMs;
	s.respond(3);
	s.gap();
	EXPECT_TRUE(s.r.fast);
	EXPECT_EQ(s.r.deadline_ns, 1 * kMs + 500 * kUs);	// the floor
	s.now = 1100 * kUs;
	s.gap();			// armed already: unchanged
	EXPECT_EQ(s.r.deadline_ns, 1 * kMs + 500 * kUs);

	// a window past the probe deadline: the probe deadline stays
	Script b(64, 1 * kMs, 10 * kMs, 4 * kMs);

	b.sent_all(0);
	b.advance(0, 64);
	b.respond(3);
	b.gap();
	EXPECT_FALSE(b.r.fast);
	EXPECT_EQ(b.r.deadline_ns, 3 * kMs);

	// after a re-request (backoff) evidence waits for the deadline
	Script c(64);

	c.sent_all(0);
	c.advance(0, 64);
	c.deadline();			// probe
	c.respond(3);
	u64 d = c.r.deadline_ns;

	c.gap();
	EXPECT_FALSE(c.r.fast);
	EXPECT_EQ(c.r.deadline_ns, d);

	// comp.psn moving onto a hole with later responses arms it at once
	Script m(64);

	m.sent_all(0);
	m.respond(0);
	m.respond(2);
	m.now = 1 * kMs;
	m.advance(1, 64);
	EXPECT_TRUE(m.r.fast);
	EXPECT_EQ(m.r.deadline_ns, 1 * kMs + 500 * kUs);
}

// A gap round asks for the runs whose loss is evident, and not the young
// ones; with nothing to ask it waits (no backoff, not a timeout).
TEST(RspRec, GapRoundAsksForEvidentRunsOnly)
{
	Script s(256);

	s.sent_all(0);
	s.now = 5 * kMs;
	// chunk 0: 0..9 missing, chunk 1: 64..69 missing; 70 arrived
	for (u32 i = 10; i < 64; i++)
		s.respond(i);
	s.respond(70);
	s.advance(0, 256);
	ASSERT_TRUE(s.r.fast);
	EXPECT_EQ(s.deadline(), MRXE_RSPREC_GAP_RUNS);
	ASSERT_EQ(s.asked.size(), 2u);
	EXPECT_EQ(s.asked[0].psn, s.psn(0));
	EXPECT_EQ(s.asked[0].last, s.psn(9));
	EXPECT_EQ(s.asked[1].psn, s.psn(64));
	EXPECT_EQ(s.asked[1].last, s.psn(69));
	EXPECT_EQ(s.r.timeouts, 0);	// evidence, not a timeout
	EXPECT_EQ(s.r.backoff, 1);
	// one probe after a gap round (RFC 8985 7.2), then the RTO
	EXPECT_TRUE(s.r.probe);
	EXPECT_EQ(s.r.deadline_ns, s.now + 3 * kMs);
}

// A re-requested response lost again while the hole holds the window shut
// (nothing newer goes out): the probe after the gap round asks again, 2
// SRTT + delack later, not the RTO; one probe per gap round, then the RTO,
// backed off by the timeouts only.  Fails without reprobe (the deadline is
// the RTO, 10 ms).  The probe asks for comp.psn alone: nothing sent after
// the re-request was answered, so the replay may still be queued behind
// the responder's stream (a newer PSN's response is no evidence against a
// re-request, rsprec_evident).
TEST(RspRec, ProbeAfterGapRoundThenBackedOffRto)
{
	Script s(64);

	s.sent_all(0);
	s.now = 5 * kMs;
	for (u32 i = 10; i < 64; i++)
		s.respond(i);
	s.advance(0, 64);
	EXPECT_EQ(s.deadline(), MRXE_RSPREC_GAP_RUNS);	// asks 0..9
	u64 t = s.now;
	EXPECT_EQ(s.r.deadline_ns, t + 3 * kMs);
	// 0's response lost again (or late): the probe asks for 0 alone
	EXPECT_EQ(s.deadline(), MRXE_RSPREC_PROBE_ONE);
	ASSERT_EQ(s.asked.size(), 2u);
	EXPECT_EQ(s.asked[1].psn, s.psn(0));
	EXPECT_EQ(s.asked[1].last, s.psn(0));
	EXPECT_TRUE(s.asked[1].one);
	EXPECT_FALSE(s.r.probe);
	EXPECT_EQ(s.r.deadline_ns, s.now + 10 * kMs);	// not backed off
	EXPECT_EQ(s.deadline(), MRXE_RSPREC_TIMEOUT_RUNS);
	EXPECT_EQ(s.r.timeouts, 1);
	EXPECT_EQ(s.r.deadline_ns, s.now + (10 * kMs << 1));
	// progress: a new hole starts with a first probe again
	for (u32 i = 0; i < 10; i++)
		s.respond(i);
	s.got[40] = false;
	s.now += kMs;
	s.advance(40, 64);
	EXPECT_TRUE(s.r.probe);
	EXPECT_EQ(s.r.backoff, 0);
}

// The probe's answer is a duplicate's: the responder answers it ahead of
// the first requests it holds, so it proves lost only the re-requests sent
// before it and the rest of the probe's own request (when that request
// was lost, the probe was executed as a new one-PSN READ) - not the first
// requests of later chunks still queued at a slow responder.  Fails when a
// probe's answer counts as a first request's (rack_ns): 64..127 lost.
TEST(RspRec, ProbeAnswerIsNoEvidenceAgainstQueuedRequests)
{
	Script s(192);

	s.sent_all(0);
	for (u32 i = 64; i < 192; i++)
		s.send_ns[i] = 1 * kMs;		// later chunks, queued
	s.now = 4 * kMs;
	s.advance(0, 192);
	ASSERT_TRUE(s.r.probe);
	EXPECT_EQ(s.deadline(), MRXE_RSPREC_PROBE_ONE);	// 0 alone, at 4 ms
	ASSERT_EQ(s.asked.size(), 1u);
	EXPECT_TRUE(s.asked[0].one);
	s.now += 2 * kMs;
	s.respond(0);			// the probe's answer
	EXPECT_EQ(s.r.rack_ns, 0u);
	EXPECT_EQ(s.r.rack_rt_ns, s.send_ns[0]);
	s.advance(1, 192);
	// the rest of 0's request (same first send, within its chunk): lost
	EXPECT_TRUE(s.lost(1));
	EXPECT_TRUE(s.lost(63));
	// the later chunks: no evidence (still queued at the responder)
	EXPECT_FALSE(s.lost(64));
	EXPECT_FALSE(s.lost(191));
	// the gap round asks for 1..63 only
	ASSERT_TRUE(s.r.fast);
	EXPECT_EQ(s.deadline(), MRXE_RSPREC_GAP_RUNS);
	ASSERT_EQ(s.asked.size(), 2u);
	EXPECT_EQ(s.asked[1].psn, s.psn(1));
	EXPECT_EQ(s.asked[1].last, s.psn(63));
}

// After a re-request, a newer PSN's response is no evidence (it was the
// first round's); a response to a request sent after the re-request is
// (RACK's send-time rule for a lost retransmission, RFC 8985 6.2): a gap
// round after the reordering window.  Fails without it: no gap is armed.
TEST(RspRec, GapAfterReRequestBySendTimeOnly)
{
	Script s(128);

	for (u32 i = 0; i < 64; i++)
		s.send_ns[i] = 0;
	for (u32 i = 64; i < 128; i++)
		s.send_ns[i] = 6 * kMs;		// sent after the re-request
	s.now = 5 * kMs;
	for (u32 i = 10; i < 64; i++)
		s.respond(i);
	s.advance(0, 128);
	EXPECT_EQ(s.deadline(), MRXE_RSPREC_GAP_RUNS);	// 0..9 at 5.5 ms
	u64 dl = s.r.deadline_ns;	// the probe, 8.5 ms
	s.now += 250 * kUs;
	s.gap();			// hi only: nothing new
	EXPECT_FALSE(s.r.fast);
	EXPECT_EQ(s.r.deadline_ns, dl);
	s.now = 6500 * kUs;
	s.respond(64);			// a request sent after it answered
	s.gap();
	EXPECT_TRUE(s.r.fast);
	EXPECT_EQ(s.r.deadline_ns, s.now + 500 * kUs);	// REO_NS floor
	EXPECT_EQ(s.deadline(), MRXE_RSPREC_GAP_RUNS);
	EXPECT_EQ(s.asked.back().psn, s.psn(0));
	EXPECT_EQ(s.r.timeouts, 0);
}

TEST(RspRec, GapRoundWithOnlyYoungRunsWaits)
{
	Script s(64);

	s.sent_all(0);
	s.respond(5);
	s.now = 200 * kUs;		// within an SRTT of the send
	s.advance(0, 64);
	ASSERT_TRUE(s.r.fast);
	EXPECT_EQ(s.deadline(), MRXE_RSPREC_NONE);
	EXPECT_TRUE(s.asked.empty());
	EXPECT_FALSE(s.r.fast);
	EXPECT_EQ(s.r.backoff, 0);
	EXPECT_TRUE(s.r.probe);		// the probe deadline again
	EXPECT_EQ(s.r.deadline_ns, s.now + 3 * kMs);
}

// A timeout asks for every missing run, skipping young ones except
// comp.psn's own, at most MRXE_RSPREC_RUNS of them.
TEST(RspRec, TimeoutRunsSkipYoungButCompPsn)
{
	Script s(64 * 40, 0, 10 * kMs);	// no SRTT: young is the RTO

	s.sent_all(0);
	for (u32 k = 0; k < 40; k++)	// every chunk: PSN 0..62 missing
		s.respond(64 * k + 63);
	s.send_ns[0] = 9 * kMs;		// comp.psn's run young
	s.send_ns[64] = 9 * kMs;	// chunk 1's run young
	s.now = 10 * kMs;
	s.advance(0, 64 * 40);
	s.r.fast = false;		// take the timeout path
	s.r.deadline_ns = s.now;
	s.r.probe = false;
	EXPECT_EQ(s.deadline(), MRXE_RSPREC_TIMEOUT_RUNS);
	ASSERT_EQ(s.asked.size(), (size_t)MRXE_RSPREC_RUNS);
	EXPECT_EQ(s.asked[0].psn, s.psn(0));
	EXPECT_EQ(s.asked[0].last, s.psn(62));
	// chunk 1's run starts young: its next PSN is the first asked
	EXPECT_EQ(s.asked[1].psn, s.psn(65));
	EXPECT_EQ(s.asked[2].psn, s.psn(128));
	EXPECT_EQ(s.r.timeouts, 1);
	// a failing re-request stops the round
	Script f(128);

	f.sent_all(0);
	f.advance(0, 128);
	f.r.probe = false;
	f.fail = 1;
	EXPECT_EQ(f.deadline(), MRXE_RSPREC_TIMEOUT_RUNS);
	EXPECT_TRUE(f.asked.empty());
}

// A timeout while responses still arrive (the responder is streaming):
// comp.psn's whole run and the runs lost by evidence, not the runs ahead of
// the newest response, which wait in the responder's queue.  Once no
// response came for an SRTT, a timeout asks for every missing run.
TEST(RspRec, TimeoutLeavesTheRunsALiveResponderStillSends)
{
	for (bool silent : { false, true }) {
		SCOPED_TRACE(silent ? "silent" : "live");
		Script s(64 * 8, 1 * kMs, 10 * kMs);

		s.sent_all(0);
		s.advance(0, 64 * 8);
		s.now = 20 * kMs;
		// chunk 1 answered up to PSN 64 + 40, chunk 0 not at all
		for (u32 i = 64; i <= 64 + 40; i++)
			if (i != 64 + 10)
				s.respond(i);
		s.now = silent ? 22 * kMs : 20 * kMs + 500 * kUs;
		s.r.fast = false;
		s.r.probe = false;
		s.r.deadline_ns = s.now;
		EXPECT_EQ(s.deadline(), MRXE_RSPREC_TIMEOUT_RUNS);
		EXPECT_EQ(s.r.timeouts, 1);
		ASSERT_GE(s.asked.size(), 2u);
		EXPECT_EQ(s.asked[0].psn, s.psn(0));	// comp.psn's whole run
		EXPECT_EQ(s.asked[0].last, s.psn(63));
		EXPECT_FALSE(s.asked[0].one);
		EXPECT_EQ(s.asked[1].psn, s.psn(64 + 10));	// the hole
		EXPECT_EQ(s.asked[1].last, s.psn(64 + 10));
		// a timeout that asked for less is followed by one probe
		EXPECT_EQ(s.r.reprobe, !silent);
		EXPECT_EQ(s.r.probe, !silent);
		if (!silent) {
			EXPECT_EQ(s.asked.size(), 2u);
			EXPECT_EQ(s.r.deadline_ns, s.now + 2 * kMs + kDelackNs);
			continue;
		}
		EXPECT_EQ(s.r.deadline_ns, s.now + (10 * kMs << 1));
		// silent: chunk 1's rest and chunks 2..7 too
		ASSERT_EQ(s.asked.size(), 9u);
		EXPECT_EQ(s.asked[2].psn, s.psn(64 + 41));
		EXPECT_EQ(s.asked[8].psn, s.psn(64 * 7));
	}
}

// a064191: a probe deadline whose loss is evident (the gap round waits a
// longer reo_wnd) asks for comp.psn's run, not one PSN.
TEST(RspRec, EvidentLossAtProbeDeadlineAsksForTheRun)
{
	Script s(64, 1 * kMs, 10 * kMs, 6 * kMs);

	s.sent_all(0);
	s.advance(0, 64);
	s.respond(40);
	s.gap();
	ASSERT_FALSE(s.r.fast);
	ASSERT_TRUE(s.r.probe);
	EXPECT_EQ(s.deadline(), MRXE_RSPREC_RUN_AT_COMP);
	ASSERT_EQ(s.asked.size(), 1u);
	EXPECT_FALSE(s.asked[0].one);
	EXPECT_EQ(s.asked[0].psn, s.psn(0));
	EXPECT_EQ(s.asked[0].last, s.psn(39));
	EXPECT_EQ(s.r.timeouts, 0);
	EXPECT_EQ(s.r.backoff, 1);
}

// Only timeouts spend the retry budget: probes and gap rounds do not.
TEST(RspRec, RetryBudgetSpentByTimeoutsOnly)
{
	Script s(64);

	s.sent_all(0);
	s.advance(0, 64);
	EXPECT_EQ(s.deadline(0), MRXE_RSPREC_PROBE_ONE);
	EXPECT_EQ(s.r.timeouts, 0);
	EXPECT_EQ(s.deadline(0), MRXE_RSPREC_TIMEOUT_RUNS);
	EXPECT_EQ(s.r.timeouts, 1);
	// retry_cnt 0: one timeout allowed, the next deadline fails
	u8 backoff = s.r.backoff;

	EXPECT_EQ(s.deadline(0), MRXE_RSPREC_RETRY_EXCEEDED);
	EXPECT_EQ(s.r.backoff, backoff);	// nothing changed
	EXPECT_EQ(s.deadline(1), MRXE_RSPREC_TIMEOUT_RUNS);
	EXPECT_EQ(s.deadline(-1), MRXE_RSPREC_TIMEOUT_RUNS);
	EXPECT_EQ(s.r.timeouts, 3);

	// gap rounds: many, no timeout spent
	Script g(64 * 8);

	g.sent_all(0);
	for (int k = 0; k < 8; k++) {
		g.now += 5 * kMs;
		g.respond(64 * k + 63);
		g.advance(64 * k, 64 * 8);
		g.gap();
		ASSERT_TRUE(g.r.fast);
		EXPECT_EQ(g.deadline(0), MRXE_RSPREC_GAP_RUNS);
		for (u32 i = 64 * k; i < 64u * k + 63; i++)
			g.respond(i);
	}
	EXPECT_EQ(g.r.timeouts, 0u);
}

// ---- randomized simulation ----
//
// A requester issues READs (1..512 PSNs, qd of them outstanding) in 64-PSN
// chunks, at most kWnd PSNs past comp.psn.  The model responder executes
// first requests in PSN order (holding later ones until the earlier
// arrive) and answers each request, first or duplicate, with its run of
// responses in order on its link (one per SimCfg::rsp_gap; a duplicate goes
// ahead of the queued first requests, at the next run boundary, as
// resp_meta_drain does, less the PSNs no stream has sent yet and the runs a
// queued replay covers, as resp_meta_read_trim / _queued do).  Both directions lose, jitter, reorder and
// duplicate packets.  The requester is the kernel's glue in small, with
// the kernel's RTT estimator (mrxe_rtt) fed by each chunk's first
// response: a chunk any of whose responses arrived counts as delivered on
// the scoreboard (mrxe_meta_local_sack); a chunk none of whose responses
// arrived is the scoreboard's (mrxe_sack) to resend, modelled as an RTO
// per chunk with the run re-requested (rt) - the response engine only
// works between comp.psn and that point (una), as in the kernel.
struct SimCfg {
	u32 npsn = 16384;		// READ PSNs per run
	u64 delay = 50 * kUs;		// one way
	u64 jitter = 0;			// + uniform [0, jitter)
	double reorder = 0;		// + 3 x delay with this probability
	double loss_req = 0, loss_rsp = 0, dup = 0;
	bool reo_wnd_rto = false;	// reo_wnd the RTO (TCG), else SRTT/4
	int retry_cnt = 7;		// < 0: no limit
	u32 qd = 4;			// READs outstanding at most
	u64 rsp_gap = 2 * kUs;		// the responder's link, per response
	// The responder ACKs a first request on arrival (held READs are
	// SACKed, mrxe_resp.c), and the RTT samples come from those ACKs,
	// as in the kernel; else from a chunk's first response.
	bool ack_rtt = false;
};

struct SimResult {
	u64 reads = 0, lost_req = 0, lost_rsp = 0, lost_req_psns = 0;
	u64 rerequested = 0;		// PSNs asked for again by rsprec
	u64 replayed = 0;		// responses the responder sent again
	u64 probes = 0, run_at_comp = 0, gaps = 0, timeouts = 0;
	// probes for a comp.psn whose run was asked for again already, and
	// the re-requested PSNs or replayed responses the channel lost
	u64 probes_rt = 0, lost_again = 0;
	u64 sb_resends = 0;		// scoreboard-model request resends
	u64 worst_read_ns = 0;		// first send to completion
	u64 end_ns = 0;
	bool retry_exceeded = false;
	std::map<u32, u32> probes_per_psn;	// comp.psn -> probes
};

constexpr u32 kWnd = 512;

class Sim {
	struct Pkt {
		u64 at;
		bool to_resp;		// request (to the responder) or response
		bool ack;		// an ACK of the request [a, b]
		u32 a, b;		// request: [a, b]; response: a
		u64 seq;
		bool operator>(const Pkt &o) const
		{
			return at != o.at ? at > o.at : seq > o.seq;
		}
	};
	struct Read {
		u32 first, last;
		u64 start_ns;
		bool done;
	};

	SimCfg c_;
	std::mt19937_64 rng_;
	std::priority_queue<Pkt, std::vector<Pkt>, std::greater<Pkt>> net_;
	u64 seq_ = 0, now_ = 0;
	u32 isn_, total_;
	// requester, by index from isn_
	std::vector<bool> got_, chunk_sacked_;
	std::vector<u64> send_ns_, chunk_sent_ns_;
	std::vector<u8> chunk_backoff_;
	std::vector<bool> rt_;
	std::vector<u32> chunk_first_, chunk_last_;	// per PSN
	std::vector<Read> reads_;
	u32 nxt_ = 0, comp_ = 0, una_ = 0;	// indices
	size_t next_read_ = 0, done_reads_ = 0;
	// responder: first requests held for order, runs queued on its link
	u32 epsn_ = 0;
	std::map<u32, u32> held_;
	struct Run {
		u32 a, b;		// the PSNs left to send
		bool dup;		// a replay (duplicate request)
	};
	std::deque<Run> outq_;		// runs to send, in order
	bool out_busy_ = false;		// outq_.front() is being sent
	u32 streamed_ = 0;		// first requests' PSNs sent: [0, streamed_)
	u64 link_free_ = 0;
	struct mrxe_rtt rtt_;
	struct mrxe_rsprec r_;
	struct mrxe_rsprec_ops ops_;
	SimResult *res_ = nullptr;

	double u() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
	u32 psn(u32 i) const { return mrxe_psn_add(isn_, i); }
	u32 idx(u32 q) const { return (u32)mrxe_psn_diff(q, isn_); }

	void xmit(bool to_resp, u32 a, u32 b, u64 at, bool ack = false,
		  bool again = false)
	{
		int copies = u() < c_.dup ? 2 : 1;

		if (u() < (to_resp ? c_.loss_req : c_.loss_rsp)) {
			if (again)
				res_->lost_again += mrxe_psn_diff(b, a) + 1;
			if (ack) {
				// the next ACK covers it (cumulative)
			} else if (to_resp) {
				res_->lost_req++;
				res_->lost_req_psns += mrxe_psn_diff(b, a) + 1;
			} else {
				res_->lost_rsp++;
			}
			return;
		}
		while (copies--) {
			u64 d = c_.delay;

			if (c_.jitter)
				d += rng_() % c_.jitter;
			if (u() < c_.reorder)
				d += 3 * c_.delay;
			net_.push({ at + d, to_resp, ack, a, b, seq_++ });
		}
	}

	void env(struct mrxe_rsprec_env *e)
	{
		*e = {};
		e->ops = &ops_;
		e->ctx = this;
		e->now_ns = now_;
		e->srtt_ns = mrxe_rtt_srtt(&rtt_);
		e->rttvar_ns = rtt_.rttvar_ns;
		e->rto_ns = mrxe_rtt_rto(&rtt_);
		e->delack_ns = kDelackNs;
		e->reo_wnd_ns = c_.reo_wnd_rto ? e->rto_ns : e->srtt_ns / 4;
		e->comp_psn = psn(comp_);
		e->nxt = psn(nxt_);
	}

	static bool missing_cb(void *ctx, u32 q)
	{
		Sim *s = static_cast<Sim *>(ctx);
		u32 i = s->idx(q);

		return i < s->nxt_ && !s->got_[i];
	}
	static bool sent_cb(void *ctx, u32 q, u64 *send_ns, bool *rt)
	{
		Sim *s = static_cast<Sim *>(ctx);
		u32 i = s->idx(q);

		if (i >= s->nxt_)
			return false;
		*send_ns = s->send_ns_[i];
		*rt = s->rt_[i];
		return true;
	}
	// mrxe_meta_resend: @q alone, or its run of wanted PSNs to the
	// chunk's end
	u32 resend(u32 i, bool one, bool lost_run)
	{
		u32 j = i;

		if (!one)
			while (j < chunk_last_[i] &&
			       (lost_run || !got_[j + 1]))
				j++;
		for (u32 k = i; k <= j; k++) {
			send_ns_[k] = now_;
			rt_[k] = !one;
		}
		xmit(true, psn(i), psn(j), now_, false, true);
		return j;
	}
	static int rerequest_cb(void *ctx, u32 q, bool one, u32 *last)
	{
		Sim *s = static_cast<Sim *>(ctx);
		u32 i = s->idx(q), j = s->resend(i, one, false);

		s->res_->rerequested += j - i + 1;
		*last = s->psn(j);
		return 0;
	}

	void check_invariant()
	{
		// deadline off iff nothing missing below una; else for comp.psn
		if (comp_ == una_)
			ASSERT_EQ(r_.deadline_ns, 0u);
		else
			ASSERT_TRUE(r_.deadline_ns && r_.psn == psn(comp_));
		ASSERT_LE(r_.timeouts, r_.backoff);
	}

	void advance()
	{
		struct mrxe_rsprec_env e;

		while (una_ < nxt_ && chunk_sacked_[una_])
			una_ = chunk_last_[una_] + 1;
		while (comp_ < una_ && got_[comp_])
			comp_++;
		while (done_reads_ < next_read_ &&
		       comp_ > reads_[done_reads_].last) {
			Read &rd = reads_[done_reads_++];

			rd.done = true;
			res_->worst_read_ns = (std::max)(res_->worst_read_ns,
						       now_ - rd.start_ns);
		}
		env(&e);
		mrxe_rsprec_advance(&r_, &e, psn(una_));
		check_invariant();
	}

	void send_new()
	{
		while (nxt_ < total_ && nxt_ - comp_ + 64 <= kWnd) {
			u32 a = nxt_, b = chunk_last_[a];

			if (chunk_first_[a] == reads_[next_read_].first) {
				if (next_read_ - done_reads_ >= c_.qd)
					break;
				reads_[next_read_].start_ns = now_;
				next_read_++;
			}
			for (u32 k = a; k <= b; k++)
				send_ns_[k] = now_;
			chunk_sent_ns_[a] = now_;
			nxt_ = b + 1;
			xmit(true, psn(a), psn(b), now_);
		}
	}

	void responder(const Pkt &p)
	{
		u32 a = idx(p.a), b = idx(p.b);

		if (a > epsn_) {	// a later first request: hold it
			held_.emplace(a, b);
			ack_request(p);
			return;
		}
		if (b < epsn_) {
			// a duplicate: PSNs a stream has not sent yet are left
			// to it (resp_meta_read_trim), a run a queued replay
			// covers is dropped (resp_meta_read_queued); the rest
			// is answered at the next message boundary, ahead of
			// the first requests queued (resp_meta_drain)
			if (a >= streamed_)
				return;
			b = (std::min)(b, streamed_ - 1);
			if (out_busy_ && outq_.front().dup &&
			    a <= outq_.front().b && b >= outq_.front().a) {
				if (a >= outq_.front().a)
					return;
				b = (std::min)(b, outq_.front().a - 1);
			}
			for (size_t k = out_busy_ ? 1 : 0; k < outq_.size(); k++)
				if (outq_[k].dup && outq_[k].a <= a &&
				    b <= outq_[k].b)
					return;
			outq_.insert(outq_.begin() + (out_busy_ ? 1 : 0),
				     { a, b, true });
			return;
		}
		outq_.push_back({ a, b, false });
		epsn_ = b + 1;
		for (auto it = held_.begin(); it != held_.end() &&
		     it->first <= epsn_; it = held_.erase(it)) {
			if (it->second < epsn_)
				continue;	// answered already
			outq_.push_back({ it->first, it->second, false });
			epsn_ = it->second + 1;
		}
		ack_request(p);
	}

	// ack_rtt: the ACK of a first request, sent on its arrival: its own
	// chunk (a SACK block) and everything below epsn_ (cumulative), so
	// a lost ACK is covered by the next one (mrxe_resp_send_meta_ack)
	void ack_request(const Pkt &p)
	{
		if (c_.ack_rtt)
			xmit(false, p.a, psn(epsn_), now_, true);
	}

	// the responder's link: one response per rsp_gap, runs in order
	u64 link_timer() const
	{
		return outq_.empty() ? 0 : (std::max)(link_free_, now_);
	}
	void link_send()
	{
		auto &run = outq_.front();

		xmit(false, psn(run.a), psn(run.a), now_, false, run.dup);
		if (run.dup)
			res_->replayed++;
		else
			streamed_ = (std::max)(streamed_, run.a + 1);
		link_free_ = now_ + c_.rsp_gap;
		out_busy_ = run.a != run.b;
		if (out_busy_)
			run.a++;
		else
			outq_.pop_front();
	}

	// an ACK (ack_rtt) SACKs its chunk; Karn: a sample only from a
	// chunk never resent
	void ack(const Pkt &p)
	{
		u32 f = chunk_first_[idx(p.a)], cum = idx(p.b);	// [0, cum)

		if (f >= una_ && !chunk_sacked_[f]) {
			if (!chunk_backoff_[f] && !rt_[f] &&
			    send_ns_[f] == chunk_sent_ns_[f])
				mrxe_rtt_sample(&rtt_, now_ - send_ns_[f],
						now_);
			chunk_sacked_[f] = true;
		}
		for (u32 a = una_; a < nxt_ && chunk_last_[a] < cum;
		     a = chunk_last_[a] + 1)
			chunk_sacked_[a] = true;
		advance();
	}

	void response(const Pkt &p)
	{
		u32 i = idx(p.a);
		struct mrxe_rsprec_env e;

		if (i < comp_ || got_[i])
			return;		// a duplicate
		got_[i] = true;
		// the first response of a chunk SACKs it (Karn: a chunk
		// never resent gives an RTT sample, as the scoreboard's)
		if (!c_.ack_rtt && !chunk_sacked_[chunk_first_[i]] &&
		    !chunk_backoff_[chunk_first_[i]] && !rt_[i] &&
		    send_ns_[i] == chunk_sent_ns_[chunk_first_[i]])
			mrxe_rtt_sample(&rtt_, now_ - send_ns_[i], now_);
		chunk_sacked_[chunk_first_[i]] = true;
		mrxe_rsprec_on_response(&r_, p.a, send_ns_[i], rt_[i], now_);
		advance();
		env(&e);
		mrxe_rsprec_gap(&r_, &e);
	}

	// the scoreboard's part: a chunk without any response, resent after
	// a backed-off RTO (as mrxe_sack would, by RTO at the latest)
	u64 sb_timer()
	{
		u64 t = 0;

		for (u32 a = una_; a < nxt_; a = chunk_last_[a] + 1) {
			if (chunk_sacked_[a])
				continue;
			u64 at = chunk_sent_ns_[a] +
				 (mrxe_rtt_rto(&rtt_) <<
				  (std::min<u8>)(chunk_backoff_[a], 6));

			if (!t || at < t)
				t = at;
		}
		return t;
	}
	void sb_fire()
	{
		for (u32 a = una_; a < nxt_; a = chunk_last_[a] + 1) {
			if (chunk_sacked_[a] || now_ < chunk_sent_ns_[a] +
			    (mrxe_rtt_rto(&rtt_) <<
				  (std::min<u8>)(chunk_backoff_[a], 6)))
				continue;
			chunk_backoff_[a]++;
			chunk_sent_ns_[a] = now_;
			res_->sb_resends++;
			resend(a, false, true);
		}
	}

public:
	Sim(const SimCfg &c, unsigned seed) : c_(c), rng_(seed)
	{
		u32 i = 0;

		isn_ = MRXE_PSN_MASK - (u32)(rng_() % 20000);	// wraps
		while (i < c_.npsn) {
			u32 len = 1 + (u32)(rng_() % 512);

			if (len > c_.npsn - i)
				len = c_.npsn - i;
			reads_.push_back({ i, i + len - 1, 0, false });
			for (u32 k = 0; k < len; k++) {
				u32 f = i + k / 64 * 64;

				chunk_first_.push_back(f);
				chunk_last_.push_back((std::min)(f + 63,
							       i + len - 1));
			}
			i += len;
		}
		total_ = i;
		got_.assign(total_, false);
		chunk_sacked_.assign(total_, false);
		send_ns_.assign(total_, 0);
		chunk_sent_ns_.assign(total_, 0);
		chunk_backoff_.assign(total_, 0);
		rt_.assign(total_, false);
		ops_ = { missing_cb, sent_cb, rerequest_cb };
		mrxe_rsprec_reset(&r_);
		// the kernel's estimator scaled down (RTO floor 50 ms there)
		mrxe_rtt_init(&rtt_, 5 * kMs, 1000 * kMs, 10 * kMs,
			      10000 * kMs);
	}

	// false: not finished within @limit_ns of simulated time
	bool run(SimResult *res, u64 limit_ns = 60ULL * 1000 * kMs)
	{
		res_ = res;
		send_new();
		while (done_reads_ < reads_.size()) {
			u64 t = net_.empty() ? 0 : net_.top().at;
			u64 sb = sb_timer(), rd = r_.deadline_ns;
			u64 lk = link_timer();

			if (sb && (!t || sb < t))
				t = sb;
			if (lk && (!t || lk < t))
				t = lk;
			if (rd && (!t || rd < t))
				t = rd;
			if (!t || t > limit_ns)
				return false;
			now_ = (std::max)(now_, t);
			if (lk && lk <= now_) {
				link_send();
			} else if (!net_.empty() && net_.top().at <= now_) {
				Pkt p = net_.top();

				net_.pop();
				if (p.to_resp)
					responder(p);
				else if (p.ack)
					ack(p);
				else
					response(p);
			} else if (rd && rd <= now_) {
				struct mrxe_rsprec_env e;
				u32 comp = psn(comp_);
				bool comp_rt = rt_[comp_];

				env(&e);
				switch (mrxe_rsprec_on_deadline(&r_, &e,
								c_.retry_cnt)) {
				case MRXE_RSPREC_RETRY_EXCEEDED:
					res->retry_exceeded = true;
					return true;
				case MRXE_RSPREC_PROBE_ONE:
					if (comp_rt) {
						res->probes_rt++;
						break;
					}
					res->probes++;
					res->probes_per_psn[comp]++;
					break;
				case MRXE_RSPREC_RUN_AT_COMP:
					res->run_at_comp++;
					break;
				case MRXE_RSPREC_GAP_RUNS:
					res->gaps++;
					break;
				case MRXE_RSPREC_TIMEOUT_RUNS:
					res->timeouts++;
					break;
				case MRXE_RSPREC_NONE:
					break;
				}
			} else {
				sb_fire();
			}
			if (::testing::Test::HasFatalFailure())
				return false;
			send_new();
		}
		res->reads = reads_.size();
		res->end_ns = now_;
		return true;
	}
};

std::vector<unsigned> seeds(std::vector<unsigned> fixed, int nrandom = 2)
{
	return sim_seeds(std::move(fixed), nrandom);
}

void print(const char *name, const SimResult &r)
{
	u64 lost = r.lost_rsp + r.lost_req_psns;

	printf("[ sim    ] %-10s reads=%llu lost_req=%llu lost_req_psns=%llu "
	       "lost_rsp=%llu rereq=%llu (%.2f per lost) replayed=%llu probes=%llu "
	       "probes_rt=%llu lost_again=%llu "
	       "run_at_comp=%llu gaps=%llu timeouts=%llu sb=%llu "
	       "worst_read=%.1fms end=%.1fms\n", name,
	       (unsigned long long)r.reads, (unsigned long long)r.lost_req,
	       (unsigned long long)r.lost_req_psns,
	       (unsigned long long)r.lost_rsp,
	       (unsigned long long)r.rerequested,
	       lost ? (double)r.rerequested / lost : 0.0,
	       (unsigned long long)r.replayed,
	       (unsigned long long)r.probes,
	       (unsigned long long)r.probes_rt,
	       (unsigned long long)r.lost_again,
	       (unsigned long long)r.run_at_comp, (unsigned long long)r.gaps,
	       (unsigned long long)r.timeouts,
	       (unsigned long long)r.sb_resends, r.worst_read_ns / 1e6,
	       r.end_ns / 1e6);
}

SimCfg impaired(std::mt19937_64 &g, double loss)
{
	SimCfg c;

	c.loss_req = loss * (g() % 1001) / 1000;
	c.loss_rsp = loss * (g() % 1001) / 1000;
	c.dup = 0.02 * (g() % 1001) / 1000;
	c.jitter = (g() % 4) * 25 * kUs;
	c.reorder = 0.02 * (g() % 1001) / 1000;
	// a window below and one above the probe deadline (a064191)
	c.reo_wnd_rto = g() % 2;
	c.qd = 1 + g() % 4;
	return c;
}

// Lossless, in order: nothing is asked for again.
TEST(RspRecSim, LosslessAsksForNothing)
{
	for (unsigned s : seeds({ 1 }, 1)) {
		SCOPED_TRACE("seed " + std::to_string(s));
		SimCfg c;
		SimResult r;

		ASSERT_TRUE(Sim(c, s).run(&r));
		EXPECT_EQ(r.rerequested, 0u);
		EXPECT_EQ(r.sb_resends, 0u);
		print("lossless", r);
	}
}

// Bounds below measured over 801 seeds (1000..1800) per loss level with
// MRXE_SIM_SEEDS (see print() for the columns), lost = lost responses +
// PSNs of lost requests; 2026-12-06, with the responder's trim and replay
// dedup modelled and a re-requested run lost by send time only (before:
// rereq - 2 x lost p99 32 / -216, slowest READ p99 114 / 327 ms):
//
//   measured over the seeds      <= 5% loss         <= 10% loss    bound
//   rereq - 2 x lost             p99 -34, max 280   p99 -272, 311   512
//   probes - lost requests       p99 0, max 3       p99 0, max 4    8
//   probes of re-requested runs  p99 1, max 3       p99 0, max 6    8
//     - re-requests or replayed
//     responses lost
//   slowest READ (first request  p99 90, max 235    p99 155, 511    500 /
//     to completion), ms                                           2500
//
// A re-requested response is one the engine asked for again (a probe's PSN
// or a run's); most losses of first requests are the scoreboard model's to
// repair (median rereq - lost is -305 at 5%), but gap rounds also ask for
// responses still on their way, hence 2 x.  No seed reached the retry
// budget (7) at <= 5%.  Seeds 1000..1200 against a broken engine: asking
// for one PSN at an evident probe deadline (the a064191 ladder) fails the
// probe bound in 97 seeds per level (up to 634 probes over the lost
// requests), dropping the PSN-order evidence (hi) in 45-62; the other
// rules are pinned by the RspRec tests above, each of which fails when its
// rule is broken.
constexpr u64 kRereqPerLost = 2, kRereqSlack = 512, kProbeSlack = 8;

void check_bounds(const SimResult &r, u64 read_limit_ns,
		  u64 rereq_slack = kRereqSlack)
{
	u64 lost = r.lost_rsp + r.lost_req_psns;

	EXPECT_LE(r.rerequested, kRereqPerLost * lost + rereq_slack);
	EXPECT_LE(r.probes, r.lost_req + kProbeSlack);
	// a probe for a run asked for again: when that exchange was lost
	EXPECT_LE(r.probes_rt, r.lost_again + kProbeSlack);
	EXPECT_LE(r.worst_read_ns, read_limit_ns);
	// a probe only as the first re-request for a comp.psn
	for (const auto &[psn, n] : r.probes_per_psn)
		EXPECT_LE(n, 1u) << "comp.psn " << psn;
}

// Jitter, reordering within the window and duplicates, no loss: nothing is
// asked for again (spurious re-requests measured: 0 over 801 seeds).
TEST(RspRecSim, ReorderingWithoutLossAsksForNothing)
{
	for (unsigned s : seeds({ 31, 32 })) {
		SCOPED_TRACE("seed " + std::to_string(s));
		std::mt19937_64 g(s);
		SimCfg c = impaired(g, 0);
		SimResult r;

		ASSERT_TRUE(Sim(c, s).run(&r));
		EXPECT_EQ(r.rerequested, 0u);
		EXPECT_EQ(r.sb_resends, 0u);
		print("reorder", r);
	}
}

// Up to 5% loss each way with jitter, reordering and duplication: every
// READ completes, the retry budget (7) is never spent, and the repair
// stays proportional to the loss.
TEST(RspRecSim, LossUpTo5PercentCompletesWithinBudget)
{
	for (unsigned s : seeds({ 11, 12, 13, 14, 15, 16 })) {
		SCOPED_TRACE("seed " + std::to_string(s));
		std::mt19937_64 g(s);
		SimCfg c = impaired(g, 0.05);
		SimResult r;

		ASSERT_TRUE(Sim(c, s).run(&r));
		EXPECT_FALSE(r.retry_exceeded);
		check_bounds(r, 500 * kMs);
		print("loss<=5%", r);
	}
}

// Up to 10% each way, no retry limit: every READ still completes.
TEST(RspRecSim, LossUpTo10PercentCompletes)
{
	for (unsigned s : seeds({ 21, 22, 23, 24 })) {
		SCOPED_TRACE("seed " + std::to_string(s));
		std::mt19937_64 g(s);
		SimCfg c = impaired(g, 0.10);
		SimResult r;

		c.retry_cnt = -1;
		ASSERT_TRUE(Sim(c, s).run(&r));
		EXPECT_FALSE(r.retry_exceeded);
		check_bounds(r, 2500 * kMs);
		print("loss<=10%", r);
	}
}


// Response loss alone (1% and 5%, jitter, qd 4, reo_wnd SRTT/4): the
// time a run takes against the same seed lossless, mean over the seeds.
// The window (kWnd) fills behind a hole, so a re-requested response lost
// again used to wait the backed-off RTO: mean 1.27x / 2.50x (worst 1.71x /
// 5.50x, 40 seeds); with a probe after each gap round and the send-time
// gap after a re-request 1.10x / 1.57x (worst 1.21x / 2.68x).
TEST(RspRecSim, ResponseLossKeepsGoodput)
{
	const struct {
		double loss, mean_max;
	} lv[] = { { 0.01, 1.16 }, { 0.05, 1.8 } };

	for (const auto &l : lv) {
		double sum = 0;
		int n = 0;

		for (unsigned s : seeds({ 41, 42, 43, 44, 45, 46, 47, 48, 49, 50 })) {
			SCOPED_TRACE("seed " + std::to_string(s));
			SimCfg c;
			SimResult r0, r;

			c.jitter = 25 * kUs;
			c.qd = 4;
			ASSERT_TRUE(Sim(c, s).run(&r0));
			c.loss_rsp = l.loss;
			ASSERT_TRUE(Sim(c, s).run(&r));
			EXPECT_FALSE(r.retry_exceeded);
			sum += (double)r.end_ns / r0.end_ns;
			n++;
		}
		printf("[ sim    ] response loss %.0f%%: %.3fx the lossless time (mean of %d seeds)\n",
		       l.loss * 100, sum / n, n);
		EXPECT_LE(sum / n, l.mean_max) << "loss " << l.loss;
	}
}

} // namespace

namespace {

// A responder that streams slower than its ACKs return (the kernel's: RTT
// samples come from the ACKs of held READ requests, sent on arrival, while
// a re-requested run waits for the chunk being streamed): a 64-response
// chunk takes 3.2 ms against an RTT of 4 ms, with up to 8 chunks queued.
// A newer PSN's first response is then no evidence against a run asked
// for again (its replay waits behind the stream): only a response to a
// request sent after the re-request is (RFC 8985 6.2, rsprec_evident).
// Responses sent again per lost response over seeds 61..70: taking newer
// PSNs as evidence 1.94-1.99 at 1% and 1.44-1.46 at 5% (10-seed sets);
// send time only 1.43 and 1.21.  The ratio is judged on these fixed seeds
// only: over 6001 random seeds a 10-seed mean has a p99.9 of 1.79 at 1%
// (per seed p50 1.28, p99 2.48, max 3.61), so random seeds would make the
// claim flaky; they get check_bounds() alone.  Re-requested PSNs here
// include the runs the responder drops as queued or not yet streamed:
// rereq - 2 x lost p99.9 296 / 243, max 633 / 395 over those seeds, 694
// for seed 18180524 at 5% (CI, 2026-12-06), hence a slack of 1024.
constexpr u64 kSlowRereqSlack = 1024;

TEST(RspRecSim, SlowReplayIsNotAskedForAgain)
{
	const std::vector<unsigned> fixed = { 61, 62, 63, 64, 65,
					      66, 67, 68, 69, 70 };
	const struct {
		double loss, max;
	} lv[] = { { 0.01, 1.7 }, { 0.05, 1.35 } };

	for (const auto &l : lv) {
		double loss = l.loss;
		u64 replayed = 0, asked = 0, lost = 0, gaps = 0;

		for (unsigned s : seeds(fixed)) {
			SCOPED_TRACE("seed " + std::to_string(s));
			SimCfg c;
			SimResult r;
			bool is_fixed = std::find(fixed.begin(), fixed.end(),
						  s) != fixed.end();

			c.npsn = 8192;
			c.delay = 2 * kMs;
			c.jitter = 25 * kUs;
			c.rsp_gap = 50 * kUs;
			c.ack_rtt = true;
			c.loss_rsp = loss;
			ASSERT_TRUE(Sim(c, s).run(&r));
			EXPECT_FALSE(r.retry_exceeded);
			if (getenv("MRXE_SIM_VERBOSE"))
				print("slow", r);
			check_bounds(r, 500 * kMs, kSlowRereqSlack);
			if (!is_fixed)
				continue;
			replayed += r.replayed;
			asked += r.rerequested;
			lost += r.lost_rsp;
			gaps += r.gaps;
		}
		printf("[ sim    ] slow replay, response loss %.0f%%: %llu responses sent again for %llu lost (%.2f), %llu PSNs asked for, %llu gap rounds (fixed seeds)\n",
		       loss * 100, (unsigned long long)replayed,
		       (unsigned long long)lost, lost ? (double)replayed / lost : 0.0,
		       (unsigned long long)asked, (unsigned long long)gaps);
		// MRXE_SIM_SEEDS without the fixed ones: nothing to judge
		if (lost) {
			EXPECT_LE((double)replayed, l.max * lost)
				<< "loss " << loss;
		}
	}
}

// Heavy jitter (each packet delayed by up to twice the base one-way
// delay, as netem "delay 2ms 4ms": reordering by milliseconds), 20%
// duplication and 2% response loss: every READ completes within the retry
// budget.  What it costs is printed, not bounded: with a fixed reordering
// window (SRTT / 4, as the model has it) gap rounds ask for responses
// still on their way - about 11 responses sent again per lost one over the
// fixed seeds; with the RTO as the window, timeouts ask for whole runs,
// about 5 (known-issues.rst: in the lab, where the scoreboard widens the
// window on spurious re-requests, 2.75).
TEST(RspRecSim, HeavyJitterCompletes)
{
	u64 replayed = 0, asked = 0, lost = 0, gaps = 0;

	for (unsigned s : seeds({ 71, 72, 73, 74, 75, 76, 77, 78 })) {
		SCOPED_TRACE("seed " + std::to_string(s));
		SimCfg c;
		SimResult r;

		c.npsn = 8192;
		c.delay = 2 * kMs;
		c.jitter = 4 * kMs;
		c.rsp_gap = 50 * kUs;
		c.ack_rtt = true;
		c.dup = sim_env("RSP_SIM_DUP", 20) / 100.0;
		c.reo_wnd_rto = sim_env("RSP_SIM_REORTO", 0);
		c.loss_rsp = 0.02;
		ASSERT_TRUE(Sim(c, s).run(&r));
		EXPECT_FALSE(r.retry_exceeded);
		if (getenv("MRXE_SIM_VERBOSE"))
			print("jitter", r);
		replayed += r.replayed;
		asked += r.rerequested;
		lost += r.lost_rsp;
		gaps += r.gaps;
	}
	printf("[ sim    ] heavy jitter, 2%% response loss: %llu responses sent again for %llu lost (%.2f), %llu PSNs asked for, %llu gap rounds\n",
	       (unsigned long long)replayed, (unsigned long long)lost,
	       lost ? (double)replayed / lost : 0.0, (unsigned long long)asked,
	       (unsigned long long)gaps);
}

} // namespace
