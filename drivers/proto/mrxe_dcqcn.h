/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA
 * Deployments", SIGCOMM 2015): the reaction point (RP, the sender's rate
 * controller), the notification point's CNP pacing (NP, the receiver) and
 * a token-bucket pacer that holds the RP's rate.
 *
 * RP, as in the paper's section 3.1 and Figure 7:
 *   on a CNP:     Rt = Rc; Rc = Rc (1 - alpha/2); alpha = (1 - g) alpha + g;
 *                 the byte counter, the rate timer and both stage counts
 *                 restart.
 *   alpha timer:  every K without a CNP, alpha = (1 - g) alpha.
 *   increase:     an event each time the rate timer (period T) expires and
 *                 each time B bytes were sent; with T_cnt/BC_cnt the events
 *                 of each kind since the last cut:
 *                   max(T_cnt, BC_cnt) < F:  fast recovery
 *                   min(T_cnt, BC_cnt) > F:  hyper increase, Rt += i R_HAI,
 *                                            i = min(T_cnt, BC_cnt) - F
 *                   otherwise:               additive increase, Rt += R_AI
 *                 then Rc = (Rt + Rc) / 2.
 * Rates are kbit/s; alpha is a fraction of MRXE_DCQCN_ONE; g a fraction of
 * MRXE_DCQCN_G_ONE.  Time is a caller-supplied monotonic ns clock; timers
 * are deadlines the caller polls (mrxe_dcqcn_tick) and arms its own timer
 * for (mrxe_dcqcn_next).
 *
 * Invariant: min_rate <= Rc <= Rt <= line_rate and 0 <= alpha <= ONE after
 * every call; a CNP never raises Rc; without CNPs Rc returns to line_rate
 * (the increase events stop once Rc == line_rate; R_AI is at least 1).
 */
#ifndef MRXE_DCQCN_H
#define MRXE_DCQCN_H

#include "mrxe_shim.h"

#define MRXE_DCQCN_ONE		(1u << 20)	/* alpha == 1 */
#define MRXE_DCQCN_G_ONE	(1u << 16)	/* g == 1 */

/* Parameters (netlink: MRXE_ATTR_DCQCN_*; defaults in design.rst). */
struct mrxe_dcqcn_params {
	u64	line_kbps;	/* Rc's ceiling (and start) */
	u64	min_kbps;	/* Rc's floor */
	u32	g;		/* alpha gain, / MRXE_DCQCN_G_ONE; paper 1/256 */
	u32	alpha_us;	/* K: alpha decay period */
	u32	timer_us;	/* T: rate increase timer */
	u64	byte_counter;	/* B: bytes per increase event; 0 = off */
	u64	ai_kbps;	/* R_AI */
	u64	hai_kbps;	/* R_HAI */
	u32	f;		/* F: fast recovery stages */
};

struct mrxe_dcqcn {
	struct mrxe_dcqcn_params p;
	u64	rc_kbps;	/* current rate */
	u64	rt_kbps;	/* target rate */
	u32	alpha;
	u32	t_cnt;		/* rate timer events since the last cut */
	u32	bc_cnt;		/* byte counter events since the last cut */
	u64	bytes;		/* toward the next byte counter event */
	u64	alpha_next_ns;	/* 0: alpha timer off */
	u64	rate_next_ns;	/* 0: rate timer off */
	u64	cuts;		/* CNPs that cut the rate */
};

/* Paper / lab defaults (see design.rst): line and floor from the caller. */
void mrxe_dcqcn_params_default(struct mrxe_dcqcn_params *p, u64 line_kbps);
/*
 * Start at line rate, alpha = 1 (as the paper's RP).  Parameters outside
 * their documented ranges are clamped.
 */
void mrxe_dcqcn_init(struct mrxe_dcqcn *d, const struct mrxe_dcqcn_params *p);
/* A CNP for this flow arrived at @now_ns. */
void mrxe_dcqcn_cnp(struct mrxe_dcqcn *d, u64 now_ns);
/* @bytes were sent at @now_ns (feeds the byte counter). */
void mrxe_dcqcn_sent(struct mrxe_dcqcn *d, u64 bytes, u64 now_ns);
/* Run every timer expiry up to @now_ns. */
void mrxe_dcqcn_tick(struct mrxe_dcqcn *d, u64 now_ns);
/* Earliest pending deadline, 0 when no timer runs (idle at line rate). */
u64 mrxe_dcqcn_next(const struct mrxe_dcqcn *d);

static inline u64 mrxe_dcqcn_rate(const struct mrxe_dcqcn *d)
{
	return d->rc_kbps;
}

/*
 * Notification point: at most one CNP per QP per interval (paper 3.2:
 * "at most once every N microseconds"; IBA A17.9.2 leaves the rate to the
 * implementation).  True when a CNP may be sent at @now_ns (and records it).
 */
struct mrxe_cnp_np {
	u64	last_ns;
	bool	sent;
};

bool mrxe_cnp_np_may_send(struct mrxe_cnp_np *np, u64 now_ns,
			  u64 interval_ns);

/*
 * Pacer: a token bucket of depth burst_bytes filled at rate_kbps.  A packet
 * may leave when the bucket is not empty (it may go negative by one
 * packet, so any packet size passes).  Invariant: over any interval the
 * bytes let through are at most rate * interval + burst + one packet.
 */
struct mrxe_pacer {
	u64	rate_kbps;	/* 0: unlimited */
	u64	burst_bytes;
	s64	tokens;		/* bytes, may be negative by < one packet */
	u64	last_ns;
};

void mrxe_pacer_init(struct mrxe_pacer *pc, u64 rate_kbps, u64 burst_bytes,
		     u64 now_ns);
void mrxe_pacer_set_rate(struct mrxe_pacer *pc, u64 rate_kbps, u64 now_ns);
/*
 * May @len bytes leave at @now_ns?  0: yes, and they are charged.
 * Otherwise the time (> now_ns) at which to ask again; nothing is charged.
 */
u64 mrxe_pacer_admit(struct mrxe_pacer *pc, u32 len, u64 now_ns);

#endif /* MRXE_DCQCN_H */
