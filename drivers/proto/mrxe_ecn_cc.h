/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * MetaRoCE congestion reaction: DCTCP (RFC 8257) applied to a sending
 * rate.  The receiver echoes the bytes it got CE-marked in every SACK ACK
 * (wire-format.rst, "ECN echo"); the sender feeds each ACK's newly
 * delivered and CE-marked bytes here, so it reacts within one RTT of the
 * first mark instead of waiting for a CNP and a timer.
 *
 *   per ACK:   acked += bytes, marked += ce_bytes; the first ACK with CE
 *              in a round cuts at once: rate = base (1 - alpha / 2)
 *              (RFC 8257 3.3: at most one reduction per RTT).  base = the
 *              delivery rate if it is below 3/4 of the rate and the
 *              marking is heavy (alpha >= dlv_alpha), else the rate: what
 *              the ACKs show arriving over the last round (or the current
 *              one once it is half over), as RFC 5681 3.1 halves
 *              FlightSize, not cwnd (the 3/4 keeps a round's ACK noise
 *              from cutting a sender that runs at its rate).  Three QPs
 *              starting at the line rate into one link cut from what they
 *              deliver: from the rate they halved twice, a round each,
 *              while the queue overflowed (cc_sim_test,
 *              CcSim.MetaStartsWithoutDrops).  In steady state (alpha
 *              low) a round that delivered little is more likely the
 *              sender's own host stall than a share taken by others:
 *              cutting from it left a stalled QP at half its share for
 *              seconds (CcSim.MetaFairUnderHostStalls; the lab's Jain
 *              0.84-0.97).
 *   per round (the caller's SRTT, at least min_round_us):
 *              F = marked / acked; alpha = (1 - g) alpha + g F (3.3),
 *              from the first cut on: alpha starts at 1 (RFC 8257 4.2,
 *              the first reaction halves) and clean rounds before any
 *              cut are a QP that has not met the bottleneck yet, not a
 *              light marking (a QP that ran alone before three others
 *              started cut a few percent, from its rate, and the queue
 *              overflowed).
 *              Every round increases: rate += ai (1 + bonus), bonus =
 *              clean - hyper_after (at least 0, at most max_clean), clean =
 *              clean rounds in a row (DCTCP grows one segment per RTT
 *              marked or not; the bonus speeds up recovery on a path that
 *              stayed clean for hyper_after rounds, like DCQCN's hyper
 *              increase after F stages).  At the bottleneck a few clean
 *              rounds in a row are normal: a bonus from the first clean
 *              round made all flows overshoot together (cc_sim_test: p99
 *              queue 84 kB, fair share held only after 16 s).
 *              Fast recovery (DCQCN's, Zhu et al. 3.1): a cut remembers
 *              the rate it was cut from (its base); once fr_after rounds
 *              in a row were clean, each clean round sets rate = (rate +
 *              that) / 2, never above it, until within 1/64 of it.
 * Rates are kbit/s, alpha a fraction of MRXE_ECN_CC_ONE, g a fraction of
 * MRXE_ECN_CC_ONE (RFC 8257 default 1/16; mrxe_cc.c uses 1/4, its rounds
 * being 20 ms, not DCTCP's ~100 us RTT).
 *
 * Invariant: min <= rate <= line after every call; only a round's end
 * raises the rate; without CE the rate returns to line.
 */
#ifndef MRXE_ECN_CC_H
#define MRXE_ECN_CC_H

#include "mrxe_shim.h"

#define MRXE_ECN_CC_ONE		(1u << 16)
/* clean-round bonus: at most (1 + 5) R_AI per round */
#define MRXE_ECN_CC_MAX_CLEAN	5
#define MRXE_ECN_CC_HYPER_AFTER	16	/* hyper_after's cap */

struct mrxe_ecn_cc_params {
	u64	line_kbps;
	u64	min_kbps;
	u32	g;		/* / MRXE_ECN_CC_ONE; RFC 8257: 1/16 */
	u64	ai_kbps;	/* per clean round */
	u32	min_round_us;	/* a round lasts at least this */
	u32	max_clean;	/* clean-round bonus cap, <= MRXE_ECN_CC_MAX_CLEAN */
	u32	hyper_after;	/* clean rounds before the bonus starts */
	u32	fr_after;	/* clean rounds before fast recovery, 0: off */
	u32	dlv_alpha;	/* cut from the delivery rate at alpha >= this */
};

struct mrxe_ecn_cc {
	struct mrxe_ecn_cc_params p;
	u64	rate_kbps;
	u32	alpha;
	u64	acked, marked;	/* bytes in this round */
	u64	round_start_ns;
	u64	round_end_ns;	/* 0: no round open */
	u64	dlv_bytes;	/* acked after the ACK that opened the round */
	u64	dlv_kbps;	/* delivery rate of the last round, 0: none */
	u64	cut_until_ns;	/* no second cut before this */
	u32	clean;		/* rounds in a row without CE (capped) */
	u64	tgt_kbps;	/* the rate the last cut was from, 0: none */
	u64	cuts;
};

void mrxe_ecn_cc_params_default(struct mrxe_ecn_cc_params *p, u64 line_kbps);

struct mrxe_dcqcn_params;
/*
 * The MetaRoCE reaction's parameters from the device's DCQCN ones (one set
 * of netlink parameters for both): same line and floor, rounds no shorter
 * than T (shorter ones starved flows in cc_sim_test), an additive step of
 * R_AI / 4 per round, no clean-round bonus and g = 1/4: chosen with
 * cc_sim_test (median over seeds: fair share sooner and a lower p99 queue
 * than DCQCN; any bonus, even after 5 clean rounds, overshot), and fast
 * recovery after 2 clean rounds: a bonus climbs past the rate where the
 * marks came, fast recovery only back to it (cc_sim_test: utilisation
 * 0.950 -> 0.973, p99 queue 33.7 kB; without it one mark on a
 * host-limited sender held it at half rate for seconds, the additive step
 * being R_AI / 4 a round).  Cuts from the delivery rate only at alpha >=
 * 1/2 (cc_sim_test with host stalls: median Jain 0.887 -> 0.997, DCQCN
 * 0.998; without stalls fair share held after 6.4 s median instead of
 * 0.2 s, DCQCN 13.8 s).
 */
void mrxe_ecn_cc_params_from_dcqcn(struct mrxe_ecn_cc_params *p,
				   const struct mrxe_dcqcn_params *d);
void mrxe_ecn_cc_init(struct mrxe_ecn_cc *c,
		      const struct mrxe_ecn_cc_params *p);
/*
 * An ACK delivered @acked bytes of which @ce were CE-marked, at @now_ns;
 * @rtt_ns is the sender's smoothed RTT (the round length).
 */
void mrxe_ecn_cc_ack(struct mrxe_ecn_cc *c, u64 acked, u64 ce, u64 now_ns,
		     u64 rtt_ns);

static inline u64 mrxe_ecn_cc_rate(const struct mrxe_ecn_cc *c)
{
	return c->rate_kbps;
}

#endif /* MRXE_ECN_CC_H */
