/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * MetaRoCE engines: how the kernel is expected to call them.
 *
 * The engines are pure C and call nothing in the kernel; the kernel owns
 * the packets, the timers and the locking.  All engine state of a QP is
 * touched only from the QP's pipeline work item with pipe.mutex held (see
 * drivers/mrxe_pipe.h), so the engines need no locks.  Storage is fixed
 * size (MRXE_SACK_WINDOW == MRXE_PKT_RING PSNs): embed the structs below in
 * the per-QP state and BUILD_BUG_ON(MRXE_SACK_WINDOW != MRXE_PKT_RING).
 *
 *   engine           file            state                 embedded in
 *   ---------------  --------------  --------------------  ----------------
 *   SACK scoreboard  mrxe_sack.[ch]  struct mrxe_sack      qp->snd (sender)
 *   + RACK-TLP, RTO                  (has struct mrxe_rtt)
 *   RTT estimator    mrxe_rtt.[ch]   struct mrxe_rtt       inside mrxe_sack
 *   path set         mrxe_path.[ch]  struct mrxe_path_set  qp->snd (sender)
 *   reorder window   mrxe_reorder.*  struct mrxe_reorder   qp->rcv (receiver)
 *   wire codec       mrxe_wire.[ch]  (stateless)           -
 *
 * struct mrxe_meta_snd / mrxe_meta_rcv below are the suggested containers.
 * Sender and receiver halves share nothing (siw-style tx/rx split): the
 * requester/completer own mrxe_meta_snd, the responder owns mrxe_meta_rcv.
 *
 * Wire format: Documentation/wire-format.rst, "MetaRoCE mode".
 *
 * 1. QP setup (modify to RTS/RTR, after mode resolution; `auto` QPs only
 *    once the upgrade happened, with isn/epsn = the switch PSN):
 *	cfg = { .rto_floor_ns, .rto_ceil_ns, .rto_init_ns (IBA local ACK
 *		timeout), .min_rtt_win_ns = 10 s,
 *		.tlp_delack_ns = the responder's ACK coalescing delay,
 *		.reo_persist = MRXE_SACK_REO_PERSIST_META };
 *	mrxe_sack_init(&snd->sb, sq_psn, &cfg);
 *	mrxe_reorder_init(&rcv->rw, rq_psn);
 *
 * 2. Requester, new packet for PSN p (build once, advance once):
 *	if (mrxe_sack_full(&snd->sb)) stop: the window is full;
 *	build BTH (TVer 1) + MRH (cls, msn, offset, path, tsval =
 *	mrxe_mrh_ts(now), tsecr = rcv->last_tsval, F_ECE) + headers; WRITE
 *	carries RETH on every packet;
 *	mrxe_sack_on_send(&snd->sb, p, now, path, len);
 *	record p -> (wqe, offset) in pipe meta[p & (MRXE_PKT_RING - 1)];
 *	re-arm the QP hrtimer at mrxe_sack_timer().
 *    Retransmissions come first, before new data:
 *	while (mrxe_sack_next_lost(&snd->sb, &p)) {
 *		rebuild p from meta[] with MRH F_RETX, new path/tsval;
 *		mrxe_sack_on_retransmit(&snd->sb, p, now, path);
 *	}
 *
 * 3. Requester, ACK received (opcode ACK, TVer 1): parse with
 *    mrxe_meta_pkt_parse(), then mrxe_sacketh_parse(bth +
 *    mrxe_meta_hdr_len(opcode), ...,
 *    BTH.PSN + 1, &si), then
 *	mrxe_sack_on_ack(&snd->sb, &si,
 *			 mrh.flags & MRXE_MRH_F_TSECR ?
 *				mrxe_mrh_ts_ns(mrh.tsecr, now) : 0,
 *			 now, &res);
 *	complete every WQE whose last PSN is now before snd->sb.una (verbs
 *	order: completions never follow SACKs, only the cumulative point);
 *	feed res.rtt_ns / res.delivered / mrh ECE to congestion control;
 *	retransmit as in 2; re-arm the timer.
 *    NAKs (remote access, invalid request, RNR) keep their IBA meaning
 *    and are handled before the scoreboard, as in standard mode.
 *    READ responses are data for the requester: their PSNs belong to the
 *    READ request's range, so the requester feeds them into its own
 *    scoreboard as a locally built SACK (one-PSN mrxe_sack_info per
 *    response) and re-requests a lost response PSN with a READ request for
 *    that PSN's byte range (RETH va + MRH offset).
 *
 * 4. Responder, request packet received: after mrxe_meta_pkt_parse(),
 *	switch (mrxe_reorder_accept(&rcv->rw, psn)) {
 *	case MRXE_RX_NEW: place it now (SEND: receive WQE of mrh.msn at
 *		mrh.offset; WRITE: RETH.va + mrh.offset; atomics: execute and
 *		keep the result for replay); counters: rw.cnt.ooo;
 *		complete receive WQEs whose last PSN is before
 *		mrxe_reorder_epsn() (MSN order);
 *	case MRXE_RX_DUPLICATE: drop, count; atomics replay their saved
 *		result; still ACK (the ACK carries trigger_dup);
 *	case MRXE_RX_OUT_OF_WINDOW: drop, count, no ACK;
 *	}
 *	rcv->last_tsval = mrh.tsval; rcv->ece |= CE seen on the packet;
 *    then ACK (per packet or coalesced, at most tlp_delack_ns late):
 *	mrxe_reorder_sack(&rcv->rw, &si, MRXE_SACK_MAX_BLOCKS);
 *	BTH.PSN = si.epsn - 1, MRH cls ACK with tsecr = rcv->last_tsval,
 *	F_TSECR and F_ECE, AETH (MSN of completed messages),
 *	mrxe_sacketh_build().
 *
 * 5. Timer: one hrtimer per QP (HRTIMER_MODE_REL_SOFT) at
 *    mrxe_sack_timer(&snd->sb, &kind); its callback only schedules the
 *    work item, which calls
 *	ev = mrxe_sack_on_timer(&snd->sb, now, &probe);
 *	if (ev & MRXE_SACK_EV_PROBE) send the next new packet if there is
 *		one, else retransmit probe (mrxe_sack_on_retransmit());
 *	if (ev & MRXE_SACK_EV_LOST) retransmit as in 2;
 *	if (ev & MRXE_SACK_EV_RTO) count; after retry_cnt RTOs without
 *		progress the QP fails with IB_WC_RETRY_EXC_ERR as in IBA;
 *	re-arm at mrxe_sack_timer().
 *
 * Counters (per QP, summed per device): snd->sb.cnt.{retransmits,
 * spurious, holes, tlp, rto, lost}, rcv->rw.cnt.{ooo, duplicate,
 * out_of_window}; mode upgrades/mismatches are the kernel's own.
 */
#ifndef MRXE_META_H
#define MRXE_META_H

#include "mrxe_sack.h"
#include "mrxe_reorder.h"
#include "mrxe_path.h"

/* Sender half of a MetaRoCE QP (requester + completer). */
struct mrxe_meta_snd {
	struct mrxe_sack	sb;	/* scoreboard, RACK-TLP, RTT/RTO */
	struct mrxe_path_set	paths;	/* multipath: mrxe_path.h */
};

/* Receiver half of a MetaRoCE QP (responder). */
struct mrxe_meta_rcv {
	struct mrxe_reorder	rw;
	u32			last_tsval;	/* echoed as MRH tsecr */
	/*
	 * UDP source port of the newest request: ACKs and READ responses
	 * reflect it (wire-format.rst "Path entropy"), so the reverse
	 * direction follows the requester's paths and their re-rolls.
	 */
	u16			ack_sport;
	bool			ece;	/* CE seen since the last ACK */
};

#endif /* MRXE_META_H */
