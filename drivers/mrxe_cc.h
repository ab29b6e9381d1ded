/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Congestion control glue (mrxe_cc.c): ECN notification point (CE seen ->
 * CNP to the sending QP, paced per QP), DCQCN reaction point (CNP -> rate
 * cut) and the per-QP pacer that holds the rate in the requester.  The
 * algorithms are the pure-C engines of drivers/proto/mrxe_dcqcn.[ch].
 *
 * Contexts: mrxe_cc_ce_rcvd() and mrxe_cc_cnp_rcv() run in softirq
 * (receive); they only set atomics and schedule the QP's work.  Everything
 * else runs in the QP's work item under pipe.mutex, like the rest of the
 * pipeline (mrxe_pipe.h), except rate_kbps, read by netlink (READ_ONCE).
 */
#ifndef MRXE_CC_H
#define MRXE_CC_H

#include <linux/hrtimer.h>
#include "mrxe_dcqcn.h"
#include "mrxe_ecn_cc.h"

struct mrxe_qp;
struct mrxe_dev;
struct sk_buff;

/* dev->cfg.cc, the values of enum mrxe_nl_cc (uapi) */
enum mrxe_cc_algo {
	MRXE_CC_OFF	= 0,
	MRXE_CC_DCQCN	= 1,
};

/* Bytes charged to the pacer for headers (IPv4 + UDP + BTH + RETH + ICRC). */
#define MRXE_CC_HDR_BYTES	64
/* pacer bucket: this long at the QP's rate (mrxe_cc_set_pacer) ... */
#define MRXE_CC_PACER_SLACK_US	4000
/* ... but at most this many bytes (at 10 Gbit/s 4 ms would be 5 MB) */
#define MRXE_CC_PACER_MAX_BURST	(64 * 1024)

struct mrxe_cc_qp {
	/* notification point (receiver) */
	atomic_t		ce_pending;	/* CE seen since the last run */
	atomic_t		ce_count;	/* CE packets since the last ACK */
	struct mrxe_cnp_np	np;
	/* reaction point (sender) */
	atomic_t		cnp_pending;	/* CNPs received, not applied */
	bool			on;		/* DCQCN runs for this QP */
	struct mrxe_dcqcn	rp;
	struct mrxe_ecn_cc	ecn;		/* MetaRoCE: ECN echo in ACKs */
	struct mrxe_pacer	pacer;		/* at Rc (line rate included) */
	bool			limited;	/* Rc below line rate */
	struct hrtimer		timer;		/* pacer wake-up */
	u64			rate_kbps;	/* Rc, 0 when off (netlink) */
	u64			cuts_synced;	/* rp.cuts + ecn.cuts counted */
	u32			cnp_interval_us;
};

void mrxe_cc_init(struct mrxe_qp *qp);
/* After pipe.dying is set and the work is stopped. */
void mrxe_cc_cleanup(struct mrxe_qp *qp);
/* Take the device's parameters, start at line rate (create, RESET). */
void mrxe_cc_reset(struct mrxe_qp *qp);
/* Work item, start of each run: send owed CNPs, apply CNPs, run timers. */
void mrxe_cc_run(struct mrxe_qp *qp);
/*
 * Requester: may a packet of about @len bytes leave now?  False: not yet,
 * the pacer timer will schedule the work again.
 */
bool mrxe_cc_admit(struct mrxe_qp *qp, u32 len);

/*
 * The pacer holds the QP below line rate: every packet asks for an ACK, so
 * that at a low rate the retransmit timer still sees progress (IBA
 * 9.7.6.1.3 times the oldest request; 32 packets at a few Mbit/s would
 * outlast it and go-back-N would resend what arrived).
 */
static inline bool mrxe_cc_limited(const struct mrxe_cc_qp *cc)
{
	return cc->on && cc->limited;
}

/* softirq: a CE-marked packet (not a CNP) arrived for @qp. */
static inline void mrxe_cc_ce_rcvd(struct mrxe_cc_qp *cc)
{
	atomic_set(&cc->ce_pending, 1);
	atomic_inc(&cc->ce_count);
}

/*
 * MetaRoCE responder, building a SACK ACK: the CE-marked packets since the
 * previous ACK (SACKETH byte 0 bits 6..3, wire-format.rst), 0..15.
 */
static inline u8 mrxe_cc_take_ce(struct mrxe_cc_qp *cc)
{
	return min_t(int, atomic_xchg(&cc->ce_count, 0), 15);
}

/*
 * MetaRoCE requester, on a SACK ACK: @bytes newly delivered, @ce CE-marked
 * packets echoed, @srtt_ns the QP's smoothed RTT.  Feeds the DCTCP-like
 * reaction (mrxe_ecn_cc) and the pacer.
 */
void mrxe_cc_meta_ack(struct mrxe_qp *qp, u64 bytes, u8 ce, u64 srtt_ns);

/*
 * softirq: a packet with BTH opcode CNP; @len covers BTH..ICRC.  Consumes
 * @skb (checks the ICRC, finds the QP, queues the reaction).
 */
void mrxe_cc_cnp_rcv(struct mrxe_dev *dev, struct sk_buff *skb, u32 len);

#endif /* MRXE_CC_H */
