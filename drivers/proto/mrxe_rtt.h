/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * RTT estimator: RFC 6298 SRTT/RTTVAR/RTO in integer nanoseconds, with a
 * caller-set floor and ceiling, exponential backoff (RFC 6298 5.5) that a
 * new RTT sample resets (Karn: callers only feed samples from packets that
 * were never retransmitted), and a windowed minimum RTT for RACK (RFC 8985
 * 6.2, the Kathleen Nichols filter of Linux lib/win_minmax.c).
 *
 * Invariant: once a sample exists, floor <= mrxe_rtt_rto() <= ceiling, and
 * mrxe_rtt_min() <= every sample of the last min_win_ns.  No floating point,
 * no division (shifts only), no allocation.
 */
#ifndef MRXE_RTT_H
#define MRXE_RTT_H

#include "mrxe_shim.h"

struct mrxe_minmax_sample {
	u64	t;		/* time of the sample */
	u64	v;		/* value */
};

struct mrxe_rtt {
	u64	srtt_ns;	/* 0: no sample yet */
	u64	rttvar_ns;
	u64	latest_ns;	/* last sample */
	u64	floor_ns, ceil_ns, init_rto_ns, min_win_ns;
	u32	backoff;	/* RTO doublings since the last sample */
	/*
	 * RFC 4015 4 (Eifel response): the ACK silence a spurious RTO
	 * revealed, with a margin; the RTO stays above it until it decays
	 * (halved every min_win_ns without another spurious RTO).
	 */
	u64	stall_ns, stall_at_ns;
	u32	samples;
	struct mrxe_minmax_sample min[3];	/* windowed min, best first */
};

/*
 * @floor_ns/@ceil_ns bound the RTO; @init_rto_ns is the RTO before any
 * sample (RFC 6298 2.1, clamped too); @min_win_ns is the min_rtt window.
 */
void mrxe_rtt_init(struct mrxe_rtt *r, u64 floor_ns, u64 ceil_ns,
		   u64 init_rto_ns, u64 min_win_ns);
/* One measurement @rtt_ns taken at @now_ns; resets the backoff. */
void mrxe_rtt_sample(struct mrxe_rtt *r, u64 rtt_ns, u64 now_ns);
/* Current RTO with backoff, in [floor, ceiling]. */
u64 mrxe_rtt_rto(const struct mrxe_rtt *r);
/* The retransmission timer expired: double the RTO (up to the ceiling). */
void mrxe_rtt_backoff(struct mrxe_rtt *r);
/*
 * The RTO that fired at @now_ns was spurious: ACKs stopped for @silence_ns
 * (from the timer's last restart to the ACK that proved it) and then came
 * back.  Keep the RTO above 5/4 of that silence (RFC 4015 4: adapt the RTO
 * after a spurious timeout), so that the next such stall does not fire it.
 */
void mrxe_rtt_spurious(struct mrxe_rtt *r, u64 silence_ns, u64 now_ns);

static inline u64 mrxe_rtt_srtt(const struct mrxe_rtt *r)
{
	return r->srtt_ns;
}

/*
 * RFC 6298 2.3's SRTT + 4 RTTVAR without floor, ceiling or backoff; 0
 * before the first sample.
 */
static inline u64 mrxe_rtt_rto_est(const struct mrxe_rtt *r)
{
	return r->srtt_ns + 4 * r->rttvar_ns;
}

/* Windowed minimum RTT, 0 before the first sample. */
static inline u64 mrxe_rtt_min(const struct mrxe_rtt *r)
{
	return r->samples ? r->min[0].v : 0;
}

#endif /* MRXE_RTT_H */
