// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * MetaRoCE DCTCP-like rate reaction.  See mrxe_ecn_cc.h for the equations
 * (RFC 8257 3.3) and the invariant.
 */
#include "mrxe_ecn_cc.h"
#include "mrxe_dcqcn.h"

void mrxe_ecn_cc_params_default(struct mrxe_ecn_cc_params *p, u64 line_kbps)
{
	p->line_kbps = line_kbps;
	p->min_kbps = 100;
	p->g = MRXE_ECN_CC_ONE / 16;	/* RFC 8257 4.2: g = 1/16 */
	p->ai_kbps = 1000;		/* lab: 1 Mbit/s per clean round */
	p->min_round_us = 100;
	p->max_clean = MRXE_ECN_CC_MAX_CLEAN;
	p->hyper_after = 0;
	p->fr_after = 0;
	p->dlv_alpha = 0;
}

void mrxe_ecn_cc_params_from_dcqcn(struct mrxe_ecn_cc_params *p,
				   const struct mrxe_dcqcn_params *d)
{
	mrxe_ecn_cc_params_default(p, d->line_kbps);
	p->min_kbps = d->min_kbps;
	p->ai_kbps = max_t(u64, d->ai_kbps / 4, 1);
	p->g = MRXE_ECN_CC_ONE / 4;
	p->min_round_us = d->timer_us;
	p->max_clean = 0;	/* any bonus overshot at the bottleneck */
	p->fr_after = 2;	/* back to the rate cut from, not beyond */
	p->dlv_alpha = MRXE_ECN_CC_ONE / 2;
}

void mrxe_ecn_cc_init(struct mrxe_ecn_cc *c,
		      const struct mrxe_ecn_cc_params *p)
{
	memset(c, 0, sizeof(*c));
	c->p = *p;
	if (!c->p.line_kbps)
		c->p.line_kbps = 1;
	if (!c->p.min_kbps)
		c->p.min_kbps = 1;
	if (c->p.min_kbps > c->p.line_kbps)
		c->p.min_kbps = c->p.line_kbps;
	if (c->p.max_clean > MRXE_ECN_CC_MAX_CLEAN)
		c->p.max_clean = MRXE_ECN_CC_MAX_CLEAN;
	if (c->p.hyper_after > MRXE_ECN_CC_HYPER_AFTER)
		c->p.hyper_after = MRXE_ECN_CC_HYPER_AFTER;
	if (!c->p.g || c->p.g > MRXE_ECN_CC_ONE)
		c->p.g = MRXE_ECN_CC_ONE / 16;
	c->rate_kbps = c->p.line_kbps;
	c->alpha = MRXE_ECN_CC_ONE;	/* RFC 8257 4.2: start at 1 */
}

/* bytes over ns as kbit/s */
static u64 ecn_cc_kbps(u64 bytes, u64 ns)
{
	return ns ? mrxe_div64(bytes * 8000000ULL, ns) : 0;
}

/*
 * Close the round with the ACK of @acked bytes at @now_ns: bytes that
 * arrived in (round start, now] over that time are its delivery rate (the
 * ACK that opened the round counted bytes from before it).
 */
static void ecn_cc_end_round(struct mrxe_ecn_cc *c, u64 acked, u64 now_ns,
			     u64 round)
{
	u64 f = 0, a, bonus;

	/*
	 * A round that ended more than a round ago was idle at its end (no
	 * ACK closed it): its bytes over that time are not a delivery rate.
	 */
	c->dlv_kbps = now_ns - c->round_end_ns <= round ?
		      ecn_cc_kbps(c->dlv_bytes + acked,
				  now_ns - c->round_start_ns) : 0;

	if (c->acked)
		f = mrxe_div64(min(c->marked, c->acked) * MRXE_ECN_CC_ONE,
			       c->acked);
	/* alpha = (1 - g) alpha + g F */
	a = (u64)c->alpha * (MRXE_ECN_CC_ONE - c->p.g) + f * c->p.g;
	if (c->cuts)
		c->alpha = (u32)min_t(u64, a >> 16, MRXE_ECN_CC_ONE);
	/*
	 * Additive increase every round, as DCTCP grows its window by one
	 * segment per RTT whether or not it saw marks (the marks only set
	 * alpha and the once-per-RTT cut): equal increase for every flow is
	 * what makes AIMD fair.  Clean rounds in a row add more.  The
	 * count stops where neither the bonus nor fast recovery needs more.
	 */
	c->clean = c->marked ? 0 :
		   min(c->clean + 1, max(c->p.hyper_after + c->p.max_clean,
					 c->p.fr_after));
	bonus = c->clean > c->p.hyper_after ?
		min(c->clean - c->p.hyper_after, c->p.max_clean) : 0;
	c->rate_kbps = min(c->p.line_kbps,
			   c->rate_kbps + c->p.ai_kbps * (1 + bonus));
	/*
	 * Fast recovery (DCQCN's, Zhu et al. 3.1, applied to a rate that
	 * remembers what it was cut from): once fr_after rounds in a row
	 * were clean, each clean round halves the distance to the rate
	 * before the last cut.  Not past it: beyond is the additive
	 * increase's to explore.  A marked round starts the count again
	 * (and its cut sets a new target).
	 */
	if (c->tgt_kbps && c->p.fr_after && c->clean >= c->p.fr_after) {
		if (c->rate_kbps < c->tgt_kbps)
			c->rate_kbps = (c->rate_kbps + c->tgt_kbps) / 2;
		if (c->rate_kbps + c->tgt_kbps / 64 >= c->tgt_kbps)
			c->tgt_kbps = 0;
	}
	c->acked = 0;
	c->marked = 0;
	c->dlv_bytes = 0;
}

/*
 * What the ACKs show being delivered: the last round's rate, or the
 * current round's once half of it has passed, whichever is higher (a
 * round that started with a burst of ACKs is not cut below what it
 * delivered before); 0 when neither is known.
 */
static u64 ecn_cc_delivered(const struct mrxe_ecn_cc *c, u64 now_ns,
			    u64 round)
{
	u64 cur = 0, el = now_ns - c->round_start_ns;

	if (2 * el >= round)
		cur = ecn_cc_kbps(c->dlv_bytes, el);
	return max(c->dlv_kbps, cur);
}

void mrxe_ecn_cc_ack(struct mrxe_ecn_cc *c, u64 acked, u64 ce, u64 now_ns,
		     u64 rtt_ns)
{
	u64 round = max_t(u64, rtt_ns, c->p.min_round_us * 1000ULL);
	u64 r, base, dlv;

	if (c->round_end_ns && now_ns >= c->round_end_ns) {
		ecn_cc_end_round(c, acked, now_ns, round);
		c->round_end_ns = 0;
	}
	if (!c->round_end_ns) {
		c->round_start_ns = now_ns;
		c->round_end_ns = now_ns + round;
	} else {
		c->dlv_bytes += acked;
	}
	c->acked += acked;
	c->marked += ce;
	if (ce && now_ns >= c->cut_until_ns) {
		/*
		 * rate = base (1 - alpha / 2), once per round trip; base is
		 * what was delivered if that is well below the rate (RFC 5681
		 * 3.1: half the FlightSize, not of cwnd)
		 */
		dlv = ecn_cc_delivered(c, now_ns, round);
		base = dlv && 4 * dlv < 3 * c->rate_kbps &&
		       c->alpha >= c->p.dlv_alpha ? dlv : c->rate_kbps;
		r = (base * (2ULL * MRXE_ECN_CC_ONE - c->alpha)) >> 17;
		c->rate_kbps = max(r, c->p.min_kbps);
		c->tgt_kbps = base;
		c->cut_until_ns = now_ns + round;
		c->clean = 0;
		c->cuts++;
	}
}
