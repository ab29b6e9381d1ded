// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * READ/atomic response recovery.  See mrxe_rsprec.h for the rules and the
 * invariant; the kernel glue is in mrxe_comp.c (mrxe_meta_rsp_*).
 */
#include "mrxe_rsprec.h"
#include "mrxe_wire.h"

void mrxe_rsprec_reset(struct mrxe_rsprec *r)
{
	memset(r, 0, sizeof(*r));
}

void mrxe_rsprec_on_response(struct mrxe_rsprec *r, u32 psn, u64 send_ns,
			     bool rt, u64 now_ns)
{
	r->rsp_ns = now_ns;
	if (!r->hi_valid || mrxe_psn_after(psn, r->hi)) {
		r->hi = psn;
		r->hi_valid = true;
	}
	/*
	 * The tail probe's answer.  The responder answers a duplicate READ
	 * at its next message boundary, ahead of the first requests it holds
	 * (mrxe_resp.c): so the answer proves lost only the re-requests sent
	 * before the probe, and - when comp.psn's request itself was lost and
	 * the probe was executed as a new one-PSN READ - the rest of comp.psn's
	 * request.  Taken against every older first request (RACK's rule for
	 * a sender that answers in order), a probe sent while a slow
	 * responder still had chunks queued condemned them all: the next gap
	 * round asked for every one of them again (RspRecSim
	 * SlowReplayIsNotAskedForAgain: 100 to 150 PSNs asked for again per
	 * lost response).
	 */
	if (!rt && r->probe_out && psn == r->probe_psn &&
	    send_ns == r->probe_ns) {
		r->probe_out = false;
		r->rack_rt_ns = max(r->rack_rt_ns, send_ns);
		r->plost_psn = psn;
		r->plost_ns = r->probe_orig_ns;
		r->plost_valid = true;
		return;
	}
	if (rt)
		r->rack_rt_ns = max(r->rack_rt_ns, send_ns);
	else
		r->rack_ns = max(r->rack_ns, send_ns);
}

/*
 * How long a missing response may keep everyone waiting.  The first time
 * (no re-request yet), a probe timeout as for a tail loss (RFC 8985 7.2:
 * 2 SRTT plus the peer's delayed-ACK allowance, at most the RTO): the last
 * responses of a READ have no later response to reveal their loss, and a
 * needless re-request only costs duplicate responses (READ is idempotent,
 * atomics are replayed, IBA 9.7.5.2.2); after a gap round, one probe again
 * (mrxe_rsprec_on_deadline).  Else the RTO, doubled by each timeout
 * (RFC 6298 5.5), not by probes or gap rounds, which are not timeouts
 * (RFC 8985 7.3): backing off on them made the third loss of one response
 * wait 4 RTOs (RspRecSim, 5% response loss: 1.58x to 1.48x the lossless
 * time).
 */
static u64 rsprec_pto(const struct mrxe_rsprec_env *e)
{
	u64 pto = 2 * e->srtt_ns;

	/*
	 * 2 SRTT (RFC 8985 7.2).  With more than a chunk of responses
	 * outstanding the responder is streaming a queue of them, and a
	 * stall of its stream is lateness, not loss: then not before SRTT +
	 * 4 RTTVAR either, where RFC 6298 expects the late answers.  In
	 * ib_read_bw between two guests at 0.1% response loss, 5-7 probes
	 * a 3 s point came back as duplicates (retransmitted / lost
	 * 1.03-1.06 from them alone).  A lone READ (ib_read_lat) keeps the
	 * 2 SRTT probe: there nothing else would reveal its loss sooner.
	 */
	if (mrxe_psn_diff(e->nxt, e->comp_psn) > MRXE_RSPREC_CHUNK)
		pto = max(pto, e->srtt_ns + 4 * e->rttvar_ns);
	return pto + e->delack_ns;
}

static u64 rsprec_wait(struct mrxe_rsprec *r, const struct mrxe_rsprec_env *e)
{
	u64 pto = rsprec_pto(e);

	r->probe = (!r->backoff || r->reprobe) && e->srtt_ns && pto < e->rto_ns;
	if (r->probe)
		return pto;
	return e->rto_ns << min_t(u8, r->timeouts, 6);
}

/*
 * Response loss by evidence, not only by timeout (RFC 8985's idea applied
 * to responses): the responder executes READs and atomics in PSN order and
 * sends a READ's responses in PSN order (IBA 9.7.4.1.6), so the missing
 * response for @q is lost if a response for a later PSN arrived, or one
 * whose request went out after @q's (RACK's send-time order: the response
 * to a re-request or a probe proves the older requests' responses lost) -
 * unless the network reordered them, which the reordering window allows
 * for (the caller waits reo_wnd, at least MRXE_RSPREC_REO_NS).
 * Re-requests are the exception to that order: a duplicate READ is
 * answered at the next message boundary, ahead of first requests the
 * responder holds but has not executed (mrxe_resp.c, resp_meta_drain).
 * So the response to a re-requested run is evidence only against older
 * re-requested runs: taken against first requests, one spurious
 * re-request condemned every chunk still queued at the responder (15 runs
 * asked for twice in a lossless ib_read_bw).  A tail probe's response
 * counts against all: it is sent when no response came for 2 SRTT.
 */
/*
 * RACK's send-time rule alone (RFC 8985 6.2): a request sent after @q's
 * (sent at @send_ns, a re-request if @rt) was answered.
 */
static bool rsprec_answered_after(const struct mrxe_rsprec *r, u32 q,
				  u64 send_ns, bool rt)
{
	if (send_ns < r->rack_ns || (rt && send_ns < r->rack_rt_ns))
		return true;
	/* the rest of a request whose probe was executed as a new READ */
	return r->plost_valid && !rt && send_ns == r->plost_ns &&
	       mrxe_psn_after(q, r->plost_psn) &&
	       mrxe_psn_diff(q, r->plost_psn) < MRXE_RSPREC_CHUNK;
}

static bool rsprec_lost_by_send(const struct mrxe_rsprec *r,
				const struct mrxe_rsprec_env *e, u32 q)
{
	u64 send_ns;
	bool rt;

	return e->ops->sent(e->ctx, q, &send_ns, &rt) &&
	       rsprec_answered_after(r, q, send_ns, rt);
}

bool mrxe_rsprec_lost(const struct mrxe_rsprec *r,
		      const struct mrxe_rsprec_env *e, u32 q)
{
	if (r->hi_valid && mrxe_psn_after(r->hi, q))
		return true;
	return rsprec_lost_by_send(r, e, q);
}

/*
 * Evidence for a round to ask for @q's run again.  Once @q was asked for
 * again (its run re-requested), a newer PSN's response is none: the
 * responder answers a re-request at its next message boundary, after the
 * response stream in progress, so the originals of later PSNs keep
 * arriving while the replay waits - longer than an SRTT (measured from
 * ACKs, which are not held) when a chunk of 64 responses streams slower
 * than the ACK returns.  Taking them as evidence asked for the same runs
 * again round after round: one 8 MiB READ at 1% response loss sent 431
 * responses again for 97 lost, 305 re-request packets in 30 gap rounds
 * (a second guest loading the host).  Only a response to a request sent
 * after the re-request proves it lost (RFC 8985 6.2), as for the gap
 * (mrxe_rsprec_gap).
 */
static bool rsprec_evident(const struct mrxe_rsprec *r,
			   const struct mrxe_rsprec_env *e, u32 q)
{
	bool newer = r->hi_valid && mrxe_psn_after(r->hi, q);
	u64 send_ns;
	bool rt;

	if (!e->ops->sent(e->ctx, q, &send_ns, &rt))
		return newer;
	return (newer && !rt) || rsprec_answered_after(r, q, send_ns, rt);
}

/*
 * Evidence that comp.psn's response was lost: re-request after the
 * reordering window.  The first time, any evidence (mrxe_rsprec_lost).
 * After a re-request, only a response to a request sent after it: the
 * re-request's own response was lost too (RACK detects lost
 * retransmissions by send time, RFC 8985 6.2).  A newer PSN's response
 * says nothing then (it was the evidence for the first round).  Without
 * this a second loss of one response waited the backed-off RTO: in
 * RspRecSim at 5% response loss about 1 re-request in 20, 3 RTOs a run.
 * When the window ends after the probe deadline, that deadline asks for
 * the run (mrxe_rsprec_on_deadline).
 */
void mrxe_rsprec_gap(struct mrxe_rsprec *r, const struct mrxe_rsprec_env *e)
{
	u64 at;

	if (!r->deadline_ns || r->fast ||
	    !(r->backoff ? rsprec_lost_by_send(r, e, e->comp_psn) :
	      mrxe_rsprec_lost(r, e, e->comp_psn)))
		return;
	at = e->now_ns + max_t(u64, e->reo_wnd_ns, MRXE_RSPREC_REO_NS);
	if (at < r->deadline_ns) {
		r->deadline_ns = at;
		r->fast = true;
	}
}

bool mrxe_rsprec_advance(struct mrxe_rsprec *r,
			 const struct mrxe_rsprec_env *e, u32 una)
{
	/* an old hi would look new again once the PSNs wrap */
	if (r->hi_valid && !mrxe_psn_after(r->hi, e->comp_psn))
		r->hi_valid = false;
	if (r->plost_valid &&
	    mrxe_psn_diff(e->comp_psn, r->plost_psn) >= MRXE_RSPREC_CHUNK)
		r->plost_valid = false;
	if (e->comp_psn == una) {
		r->deadline_ns = 0;
		r->backoff = 0;
		r->timeouts = 0;
		r->fast = false;
		r->reprobe = false;
		return true;
	}
	if (r->deadline_ns && e->comp_psn == r->psn)
		return false;
	if (e->comp_psn != r->psn) {
		r->backoff = 0;
		r->timeouts = 0;
		r->reprobe = false;
	}
	r->fast = false;
	r->psn = e->comp_psn;
	r->deadline_ns = e->now_ns + rsprec_wait(r, e);
	/*
	 * comp.psn moved onto a missing response while later ones are here
	 * already: that is gap evidence too (a hole left by a burst loss;
	 * without this each hole waited for the tail probe in turn).
	 */
	mrxe_rsprec_gap(r, e);
	return false;
}

/*
 * Ask again for every run of missing responses from comp.psn on, at most
 * MRXE_RSPREC_RUNS runs: one deadline repairs all the holes a burst loss
 * left, instead of one hole per deadline (a 1 MiB READ through a 16 Mbit/s
 * ECMP fabric took 137 s that way).  @fast (a gap): the runs whose loss is
 * evident (mrxe_rsprec_lost); else (a timeout) comp.psn's run, the evident
 * ones and, once the responder has gone silent, all of them.  A run whose
 * request went out less than an SRTT ago (asked for by the previous round)
 * is left alone, except comp.psn's own run after a timeout.  Returns the
 * number of runs asked for and adds their PSNs to r->asked.
 */
static u32 rsprec_runs(struct mrxe_rsprec *r,
		       const struct mrxe_rsprec_env *e, bool fast)
{
	u64 young = e->srtt_ns ? e->srtt_ns : e->rto_ns, send_ns;
	u32 q = e->comp_psn, last, runs = 0;
	/*
	 * A response arrived less than an SRTT ago: the responder is still
	 * streaming, and what it has not sent yet waits in its queue (it
	 * answers in PSN order, IBA 9.7.4.1.6), not lost.  RFC 8985 6.3
	 * marks lost on an RTO the first unacknowledged packet and those
	 * sent more than an RTT plus reo_wnd ago; a READ's request time says
	 * little about when its responses are due (they queue behind the
	 * chunks before them), the responder's silence does.  Asking for
	 * them anyway resent 1722 responses for 93 lost (one 8 MiB READ at
	 * 1% response loss, two timeouts).  comp.psn's whole run is asked
	 * for: after a black-out, one PSN alone left nothing else answering
	 * when it was lost again (8649043, reverted).
	 */
	bool live = !fast && r->rsp_ns && r->rsp_ns + young > e->now_ns;
	bool rt;

	r->partial = false;
	while (mrxe_psn_before(q, e->nxt) && runs < MRXE_RSPREC_RUNS) {
		if (!e->ops->missing(e->ctx, q)) {
			q = mrxe_psn_add(q, 1);
			continue;
		}
		/* a gap round, or a timeout to a live stream: evidence only */
		if ((fast || (live && q != e->comp_psn)) &&
		    !rsprec_evident(r, e, q)) {
			r->partial |= live;
			q = mrxe_psn_add(q, 1);
			continue;
		}
		if ((fast || q != e->comp_psn) &&
		    e->ops->sent(e->ctx, q, &send_ns, &rt) &&
		    send_ns + young > e->now_ns) {
			q = mrxe_psn_add(q, 1);
			continue;
		}
		if (e->ops->rerequest(e->ctx, q, false, &last))
			break;
		runs++;
		r->asked += (u32)mrxe_psn_diff(last, q) + 1;
		q = mrxe_psn_add(last, 1);
	}
	return runs;
}

enum mrxe_rsprec_action mrxe_rsprec_on_deadline(struct mrxe_rsprec *r,
						const struct mrxe_rsprec_env *e,
						int retry_cnt)
{
	enum mrxe_rsprec_action act;
	u32 last;

	if (!mrxe_rsprec_due(r, e->now_ns))
		return MRXE_RSPREC_NONE;
	r->asked = 0;
	/*
	 * Only timeouts spend the retry budget: a tail probe is not a
	 * retransmission timeout (RFC 8985 7.3), a gap round is evidence
	 * (a fast retransmit).  Counting them failed 32 MiB READs at 3% loss
	 * with retry_cnt 2 (3 of 3 runs), and 8 MiB ones at 1% now and then.
	 */
	if (retry_cnt >= 0 && r->timeouts > retry_cnt)
		return MRXE_RSPREC_RETRY_EXCEEDED;
	if (r->probe && !r->fast) {
		/*
		 * No evidence: a tail probe (RFC 8985 7.3) asks for the one
		 * missing response only: under reordering the rest of the
		 * run is mostly still on its way (every response of a
		 * 64-PSN chunk came twice, nvme over netem "delay 1ms
		 * 1ms").  Its response is evidence against the rest of the
		 * run (a lost request: below); a missing response that did
		 * not come back after a lost probe is asked for with its
		 * run by the backed-off deadline.
		 *
		 * When the loss is evident already (@lost), the gap round
		 * was not armed: it waits reo_wnd, which may grow to the RTO
		 * (mrxe_sack_reo_wnd), and so is often later than this
		 * probe deadline (TCG, 3% loss: reo_wnd 11-65 ms against
		 * 2 SRTT of 4-17 ms).  Asking for one PSN here, as a probe
		 * does, made a lost READ request a ladder: a later chunk's
		 * response, or the probe's own (RFC 8985 6.2, by send time),
		 * proves the next PSN's lost too, comp.psn moves by one, the
		 * deadline restarts as a probe, and so on - 46 probes 18 ms
		 * apart for one 64-PSN request.  Evidence is what RACK acts
		 * on: ask for comp.psn's run (up to its chunk's end, IBA
		 * 9.7.5.2.2), a gap round without the reordering window,
		 * which the 2 SRTT since comp.psn stopped on it stand for
		 * here.  Only comp.psn's run: the later holes may still be
		 * within reo_wnd.
		 */
		bool lost = rsprec_evident(r, e, e->comp_psn);
		bool rt;

		act = lost ? MRXE_RSPREC_RUN_AT_COMP : MRXE_RSPREC_PROBE_ONE;
		if (!lost && !e->ops->sent(e->ctx, e->comp_psn,
					   &r->probe_orig_ns, &rt))
			r->probe_orig_ns = 0;
		r->probe_psn = e->comp_psn;
		if (!e->ops->rerequest(e->ctx, e->comp_psn, !lost, &last) &&
		    !lost)
			r->probe_out = e->ops->sent(e->ctx, e->comp_psn,
						    &r->probe_ns, &rt);
	} else {
		/* a gap: the holes known lost; a timeout: all of them */
		if (!rsprec_runs(r, e, r->fast) && r->fast) {
			/* the previous round asked for all of them: wait */
			r->fast = false;
			r->deadline_ns = e->now_ns + rsprec_wait(r, e);
			return MRXE_RSPREC_NONE;
		}
		act = r->fast ? MRXE_RSPREC_GAP_RUNS : MRXE_RSPREC_TIMEOUT_RUNS;
		if (!r->fast)
			r->timeouts++;
	}
	r->fast = false;
	r->backoff++;
	/*
	 * After a gap round the next wait is a probe's again (RFC 8985 7.2
	 * arms a TLP after a fast retransmission too): a re-requested
	 * response lost again has nothing behind it to reveal the loss when
	 * the hole holds the window shut (no later request goes out), and
	 * the backed-off RTO was most of a READ's time under loss
	 * (RspRecSim, window full in every timeout at 5% response loss).
	 * One probe per gap round; timeouts back off as before.  A timeout
	 * that left runs to a live responder (rsprec_runs) is followed by a
	 * probe too: it asked for less, and when that exchange is lost the
	 * fewer responses in flight leave less evidence by send time, so the
	 * next deadline would be another timeout, which spends the retry
	 * budget (test_meta_read_retry_budget failed 1 run of 8 without).
	 */
	r->reprobe = act == MRXE_RSPREC_GAP_RUNS ||
		     (act == MRXE_RSPREC_TIMEOUT_RUNS && r->partial);
	r->deadline_ns = e->now_ns + rsprec_wait(r, e);
	return act;
}
