/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * `auto` mode: the in-band upgrade from RoCEv2 to MetaRoCE, per direction
 * (wire-format.rst "auto: in-band upgrade", steps 1-4).
 *
 * Requester (mrxe_req.c, mrxe_comp.c): PROBE sets CAP (BTH byte 8 bit 6)
 * on its standard requests; the first standard response decides: with CAP
 * UPGRADE, without it STANDARD for good.  In UPGRADE the requester starts
 * no new message until every standard PSN is acknowledged, then switches
 * at that message boundary (the switch PSN) and is META from then on.
 *
 * Responder (mrxe_resp.c): it echoes CAP once a request carried it; its
 * receive side switches on the first MetaRoCE request in [ePSN, ePSN +
 * window), which is the switch PSN or a later packet of the same stream
 * (everything before the switch PSN was acknowledged, so ePSN is it).
 *
 * Invariants: the requester switches only in UPGRADE with every PSN it
 * sent acknowledged (comp_psn == psn == next_new_psn), so when the first
 * TVer 1 request reaches the responder its ePSN is the switch PSN, and no
 * PSN is taken twice or skipped across the switch; STANDARD and META are
 * final until the QP is reset.  tests/unit/auto_test.cc checks both on a
 * simulated pair under loss, duplication and reordering.
 *
 * The rules only: the caller keeps the PSNs and performs the switch.  No
 * allocation, no kernel headers (mrxe_shim.h).
 */
#ifndef MRXE_AUTO_H
#define MRXE_AUTO_H

#include "mrxe_shim.h"

enum mrxe_auto_state {
	MRXE_AUTO_OFF		= 0,	/* not an auto QP */
	MRXE_AUTO_PROBE,		/* CAP offered, no response yet */
	MRXE_AUTO_UPGRADE,		/* CAP echoed: drain, then switch */
	MRXE_AUTO_STANDARD,		/* no CAP echoed: RoCEv2 for good */
	MRXE_AUTO_META,			/* switched */
};

/* Step 1: does a standard request of a QP in @st carry CAP? */
static inline bool mrxe_auto_offers_cap(enum mrxe_auto_state st)
{
	return st == MRXE_AUTO_PROBE || st == MRXE_AUTO_UPGRADE;
}

/* Step 3: the state after a response (@meta: a MetaRoCE one). */
enum mrxe_auto_state mrxe_auto_on_response(enum mrxe_auto_state st,
					   bool meta, bool cap);

/*
 * The standard window while UPGRADE drains: each go-back-N episode resends
 * what is in flight after the hole, and draining takes several at loss or
 * reordering (a resent window of 256 loses another packet 92% of the time
 * at 1% loss); a small window bounds what each one costs, for the one or
 * two round trips the drain lasts.
 */
#define MRXE_AUTO_DRAIN_WINDOW	32

static inline u32 mrxe_auto_std_window(enum mrxe_auto_state st, u32 window)
{
	return st == MRXE_AUTO_UPGRADE && window > MRXE_AUTO_DRAIN_WINDOW ?
	       MRXE_AUTO_DRAIN_WINDOW : window;
}

/* What the requester's scheduler knows when it looks at the next WQE. */
struct mrxe_auto_req {
	u32	comp_psn;	/* oldest PSN not acknowledged */
	u32	psn;		/* next PSN to send (go-back-N rewinds it) */
	u32	next_new_psn;	/* PSN of the next message's first packet */
	bool	rnr_wait;	/* an RNR NAK's timer runs */
	bool	rd_atomic;	/* a READ or atomic waits for its response */
	bool	in_msg;		/* the next WQE has packets on the wire */
};

/*
 * Step 3: may the requester start a new message?  Not in UPGRADE while a
 * standard PSN is unacknowledged: the pause that brings the boundary.
 */
bool mrxe_auto_may_start_msg(enum mrxe_auto_state st,
			     const struct mrxe_auto_req *r);

/*
 * Step 3: switch now?  In UPGRADE, at a message boundary (@in_msg false)
 * with every PSN sent acknowledged and nothing to resend, no READ/atomic
 * response and no RNR retry pending: the switch PSN is r->psn.
 */
bool mrxe_auto_may_switch(enum mrxe_auto_state st,
			  const struct mrxe_auto_req *r);

/* A request as the responder of a MetaRoCE-capable QP sees it. */
enum mrxe_auto_rx {
	MRXE_AUTO_RX_STANDARD,	/* RoCEv2 on a standard receive side */
	MRXE_AUTO_RX_SWITCH,	/* step 4: switch at ePSN, then take it */
	MRXE_AUTO_RX_META,	/* MetaRoCE on a switched receive side */
	MRXE_AUTO_RX_DUP,	/* RoCEv2 duplicate from before the switch */
	MRXE_AUTO_RX_FALLBACK,	/* step 2: negotiate with an `auto` peer */
	MRXE_AUTO_RX_MISMATCH,	/* mode_mismatch: drop, QP to error */
};

/* The receive side, as the step 4 rules see it. */
struct mrxe_auto_rsp {
	bool	is_auto;	/* it negotiates (`auto`, or fallen back) */
	bool	switched;	/* it runs MetaRoCE */
	bool	meta_seen;	/* it has taken a TVer 1 request */
	u32	epsn;		/* ePSN */
	u32	window;		/* the reorder window's PSNs */
};

/*
 * Steps 2 and 4 for a request at @psn (@meta: TVer 1, @cap: CAP set).
 * A `standard` QP never switches (MetaRoCE is a mismatch); an `auto`
 * receive side switches on the first MetaRoCE request in [ePSN, ePSN +
 * window) and then drops RoCEv2 duplicates before ePSN.  A forced
 * `metaroce` receive side takes only MetaRoCE, except that a RoCEv2
 * request with CAP before any MetaRoCE one comes from an `auto` peer:
 * it falls back to negotiating as an `auto` receive side (FALLBACK: the
 * caller clears `switched` and sets `is_auto`), so that `auto` pairs
 * with `metaroce` as it does with anything.  Everything else is a
 * mismatch.
 */
enum mrxe_auto_rx mrxe_auto_rx_classify(const struct mrxe_auto_rsp *r,
					bool meta, bool cap, u32 psn);

/*
 * A RoCEv2 response (ACK, READ response) reaching a requester that runs
 * MetaRoCE: a late one from before the switch (@psn not after the switch
 * PSN: dropped) or a mismatch.
 */
bool mrxe_auto_late_response(enum mrxe_auto_state st, u32 psn,
			     u32 switch_psn);

#endif /* MRXE_AUTO_H */
