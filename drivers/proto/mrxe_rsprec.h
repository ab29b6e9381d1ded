/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * READ/atomic response recovery: when a MetaRoCE requester asks again for
 * the responses (READ Response packets, atomic ACKs) it is missing.
 *
 * The requester's completion point comp.psn stops on the oldest READ or
 * atomic PSN whose response has not arrived.  Then a deadline runs
 * (mrxe_rsprec_advance):
 *
 *   - first a tail probe (RFC 8985 7.2, 2 SRTT - or SRTT + 4 RTTVAR if
 *     later and more than a chunk is outstanding - plus the delayed-ACK
 *     allowance, if below the RTO), which asks for that one PSN, or for
 *     its run if its loss is evident already (RUN_AT_COMP);
 *   - when a loss is evident (mrxe_rsprec_lost: a later PSN was answered,
 *     or a request sent after it, RACK's send-time rule), a gap round after
 *     the reordering window, if that is earlier than the deadline
 *     (mrxe_rsprec_gap): the runs known lost are asked for again;
 *   - else the backed-off RTO: every missing run is asked for again, and
 *     only these timeouts spend the retry budget (retry_cnt).
 *
 * The engine keeps the deadline and the evidence; the caller keeps the
 * per-PSN facts (is a response missing, when was the request sent, was it
 * a re-request) and performs the re-requests, through mrxe_rsprec_ops.
 * No allocation, no floating point, no kernel headers (mrxe_shim.h).
 *
 * Invariant: deadline_ns == 0 (off) or psn is the comp.psn it was set for;
 * timeouts <= backoff.
 */
#ifndef MRXE_RSPREC_H
#define MRXE_RSPREC_H

#include "mrxe_shim.h"

/* Runs asked for again by one deadline at most (mrxe_rsprec_runs). */
#define MRXE_RSPREC_RUNS	32
/* PSNs of one READ request packet at most (the kernel's MRXE_META_READ_CHUNK). */
#define MRXE_RSPREC_CHUNK	64
/* Least reordering window for a gap round (mrxe_rsprec_gap). */
#define MRXE_RSPREC_REO_NS	(500ULL * 1000)

struct mrxe_rsprec_ops {
	/* Is @q a READ/atomic PSN in flight whose response has not arrived? */
	bool (*missing)(void *ctx, u32 q);
	/*
	 * The request for @q: when it was (last) sent and whether that was a
	 * re-request of its run (not a first request, not a probe).  False
	 * if nothing is known about @q (its slot holds another PSN).
	 */
	bool (*sent)(void *ctx, u32 q, u64 *send_ns, bool *rt);
	/*
	 * Ask for @q's response again: with @one @q alone (a probe), else
	 * its run (up to its chunk's end).  *@last: the last PSN asked for.
	 * Returns 0 or a negative error (nothing was sent).
	 */
	int (*rerequest)(void *ctx, u32 q, bool one, u32 *last);
};

/* What the caller's clocks and scoreboard say now. */
struct mrxe_rsprec_env {
	const struct mrxe_rsprec_ops *ops;
	void	*ctx;
	u64	now_ns;
	u64	srtt_ns;	/* 0: no sample yet */
	u64	rttvar_ns;	/* RFC 6298's variation, 0 if not known */
	u64	rto_ns;
	u64	delack_ns;	/* the peer's delayed-ACK allowance */
	u64	reo_wnd_ns;	/* the scoreboard's reordering window */
	u32	comp_psn;	/* oldest PSN not done */
	u32	nxt;		/* next new PSN */
};

struct mrxe_rsprec {
	u64	deadline_ns;	/* re-request missing responses, 0: off */
	u32	psn;		/* comp.psn when deadline_ns was set */
	u8	backoff;	/* re-requests without progress */
	/*
	 * Of those, the ones a timeout sent (not a tail probe, not a gap
	 * round): what retry_cnt bounds (IBA 9.7.6.1.3, C9-140).
	 */
	u8	timeouts;
	bool	fast;		/* the deadline is a response-gap one */
	bool	probe;		/* ... a tail probe (first wait, ~2 SRTT) */
	bool	reprobe;	/* the last round was a gap round: probe once */
	bool	partial;	/* the last timeout left runs to a live stream */
	u32	hi;		/* newest PSN whose response arrived */
	bool	hi_valid;
	/*
	 * Newest send time of a request answered: a first request (rack_ns)
	 * or a re-request (rack_rt_ns), which the responder may answer ahead
	 * of first requests it holds (mrxe_rsprec_lost).
	 */
	u64	rack_ns;
	u64	rack_rt_ns;
	/*
	 * The tail probe out (PROBE_ONE): its PSN, when it was sent and when
	 * that PSN's request was sent before it.  Its response is a
	 * duplicate's for the responder (answered ahead of the first
	 * requests it holds), except after a lost request: then it was
	 * executed as a new one-PSN READ, and the rest of that request is
	 * lost (plost_*: the probe's PSN and that first send time).
	 */
	u32	probe_psn;
	u64	probe_ns;
	u64	probe_orig_ns;
	bool	probe_out;
	u32	plost_psn;
	u64	plost_ns;
	bool	plost_valid;
	u64	rsp_ns;		/* when the last new response arrived */
	/* PSNs the last GAP_RUNS / TIMEOUT_RUNS asked for again */
	u32	asked;
};

/* What a passed deadline did (mrxe_rsprec_on_deadline). */
enum mrxe_rsprec_action {
	MRXE_RSPREC_NONE,		/* not due, or nothing to ask for yet */
	MRXE_RSPREC_RETRY_EXCEEDED,	/* fail: the retry budget is spent */
	MRXE_RSPREC_PROBE_ONE,		/* a tail probe asked for comp.psn */
	MRXE_RSPREC_RUN_AT_COMP,	/* comp.psn's run: its loss is evident */
	MRXE_RSPREC_GAP_RUNS,		/* the runs known lost were asked for */
	MRXE_RSPREC_TIMEOUT_RUNS,	/* a timeout: all missing runs */
};

/* Nothing missing, no evidence (QP start, RNR rewind). */
void mrxe_rsprec_reset(struct mrxe_rsprec *r);
/*
 * A response for @psn arrived (the first one) at @now_ns, for a request
 * sent at @send_ns, a re-request of its run if @rt.
 */
void mrxe_rsprec_on_response(struct mrxe_rsprec *r, u32 psn, u64 send_ns,
			     bool rt, u64 now_ns);
/* Is the missing response for @q lost by evidence? */
bool mrxe_rsprec_lost(const struct mrxe_rsprec *r,
		      const struct mrxe_rsprec_env *e, u32 q);
/*
 * comp.psn (e->comp_psn) may have moved, @una is the scoreboard's: stop
 * the deadline if nothing is missing (returns true), else (re)start it if
 * comp.psn moved or none runs, and arm a gap round on evidence.
 */
bool mrxe_rsprec_advance(struct mrxe_rsprec *r,
			 const struct mrxe_rsprec_env *e, u32 una);
/* Evidence may have arrived: arm a gap round if it is earlier. */
void mrxe_rsprec_gap(struct mrxe_rsprec *r, const struct mrxe_rsprec_env *e);
/* Has the deadline passed? */
static inline bool mrxe_rsprec_due(const struct mrxe_rsprec *r, u64 now_ns)
{
	return r->deadline_ns && now_ns >= r->deadline_ns;
}

/*
 * The deadline passed (else NONE): re-request through e->ops and restart
 * the deadline.  @retry_cnt: timeouts allowed without progress, < 0: no
 * limit.  The caller counts the action and, for GAP_RUNS and
 * TIMEOUT_RUNS, cuts its response window.
 */
enum mrxe_rsprec_action mrxe_rsprec_on_deadline(struct mrxe_rsprec *r,
						const struct mrxe_rsprec_env *e,
						int retry_cnt);

#endif /* MRXE_RSPREC_H */
