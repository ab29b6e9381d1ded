/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * MetaRoCE congestion reaction: DCTCP (RFC 8257) applied to a sending
 * rate.  The receiver echoes the bytes it got CE-marked in every SACK ACK
 * (wire-format.rst, "ECN echo"); the sender feeds each ACK's newly
 * delivered and CE-marked bytes here, so it reacts within one RTT of the
 * first mark instead of waiting for a CNP and a timer.
 *
 *   per ACK:   acked += bytes, marked += ce_bytes; the first ACK with CE
 *              in a round cuts at once: rate = rate (1 - alpha / 2)
 *              (RFC 8257 3.3: at most one reduction per RTT).
 *   per round (the caller's SRTT, at least min_round_us):
 *              F = marked / acked; alpha = (1 - g) alpha + g F (3.3).
 *              Every round increases: rate += ai (1 + clean), clean =
 *              clean rounds in a row, at most MRXE_ECN_CC_MAX_CLEAN (DCTCP
 *              grows one segment per RTT marked or not; the bonus speeds up
 *              recovery on a clean path, like DCQCN's hyper increase).
 * Rates are kbit/s, alpha a fraction of MRXE_ECN_CC_ONE, g a fraction of
 * MRXE_ECN_CC_ONE (RFC 8257 default 1/16).
 *
 * Invariant: min <= rate <= line after every call; only a round's end
 * raises the rate; without CE the rate returns to line.
 */
#ifndef MRXE_ECN_CC_H
#define MRXE_ECN_CC_H

#include "mrxe_shim.h"

#define MRXE_ECN_CC_ONE		(1u << 16)
/* clean rounds counted for the increase: at most (1 + 5) R_AI per round */
#define MRXE_ECN_CC_MAX_CLEAN	5

struct mrxe_ecn_cc_params {
	u64	line_kbps;
	u64	min_kbps;
	u32	g;		/* / MRXE_ECN_CC_ONE; RFC 8257: 1/16 */
	u64	ai_kbps;	/* per clean round */
	u32	min_round_us;	/* a round lasts at least this */
};

struct mrxe_ecn_cc {
	struct mrxe_ecn_cc_params p;
	u64	rate_kbps;
	u32	alpha;
	u64	acked, marked;	/* bytes in this round */
	u64	round_end_ns;	/* 0: no round open */
	u64	cut_until_ns;	/* no second cut before this */
	u32	clean;		/* rounds in a row without CE */
	u64	cuts;
};

void mrxe_ecn_cc_params_default(struct mrxe_ecn_cc_params *p, u64 line_kbps);
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
