/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * READ response window: how many response PSNs (READ Response packets,
 * atomic ACKs) a MetaRoCE requester may have asked for and not received.
 *
 * A READ moves data from the responder to the requester, but the requester
 * decides how much of it is in flight: each READ request packet asks for up
 * to MRXE_META_READ_CHUNK responses, which the responder sends back to back
 * (IBA 9.7.4.1.6).  The request window alone (the scoreboard's wnd) lets a
 * 1 MiB READ ask for all 1024 responses at once, and the burst overflows a
 * bottleneck queue on the way back: every lost response then costs a
 * re-request round.  So the requester also runs a congestion window over
 * responses, driven by what it receives (as a TCP sender's cwnd, but at the
 * receiving end of the data; IRN bounds the same in-flight data statically):
 *
 *   - a request of n PSNs may be sent while pending + n <= cwnd, or when
 *     nothing is pending (one request always fits, whatever its size);
 *   - additive increase: cwnd grows by @step PSNs per cwnd responses
 *     received (about one chunk per round trip), up to @max;
 *   - decrease in proportion to loss: responses found lost (re-requested
 *     by gap evidence or by timeout) take their number off cwnd, at most
 *     half of it per @hold_ns (one loss period per round trip, RFC 5681
 *     3.2's spirit) and never below @min.  A burst a bottleneck queue
 *     could not hold loses about what overshot it, so the window shrinks
 *     to about what fits; random loss (a lossy link, not a full queue)
 *     costs cwnd x p per round trip against one @step of growth, so the
 *     window stays open (1% loss: in balance at 100 steps).  Halving on
 *     any loss, as a TCP Reno sender does, kept READ goodput at 0.45 of
 *     lossless at 1% loss between two lab guests (known-issues.rst).
 *
 * Invariant: min <= cwnd <= max; pending never wraps below 0.  No floating
 * point, no division, no allocation.
 */
#ifndef MRXE_RSPWND_H
#define MRXE_RSPWND_H

#include "mrxe_shim.h"

struct mrxe_rspwnd {
	u32	cwnd;		/* response PSNs that may be pending */
	u32	pending;	/* asked for and not received */
	u32	acc;		/* received since the last increase */
	u32	min, max, step;
	u32	floor;		/* cwnd / 2 when the loss period began */
	u64	cut_ns;		/* start of the current loss period */
	u64	cuts;		/* loss periods so far */
};

/* Start at @max (no limit until the first loss); @min >= 1, @step >= 1. */
void mrxe_rspwnd_init(struct mrxe_rspwnd *w, u32 min, u32 max, u32 step);
/* May a request for @n more responses go out now? */
bool mrxe_rspwnd_may_ask(const struct mrxe_rspwnd *w, u32 n);
/* A request for @n responses went out (first transmission only). */
void mrxe_rspwnd_asked(struct mrxe_rspwnd *w, u32 n);
/* A response arrived that was not received before. */
void mrxe_rspwnd_got(struct mrxe_rspwnd *w);
/*
 * @n responses were lost (the caller re-requests them; 0 counts as 1):
 * cwnd -= n, down to half of what it was when the loss period began (a
 * period lasts @hold_ns) and not below min.  Returns true if this loss
 * began a new period.
 */
bool mrxe_rspwnd_loss(struct mrxe_rspwnd *w, u64 now_ns, u64 hold_ns,
		      u32 n);
/* Every response asked for has arrived: nothing is pending. */
void mrxe_rspwnd_idle(struct mrxe_rspwnd *w);

#endif /* MRXE_RSPWND_H */
