// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * MetaRoCE glue: per-QP engine state, the SACK hrtimer, MRH building and
 * counters.  The protocol logic lives in the pure-C engines of
 * drivers/proto/ (mrxe_sack, mrxe_rtt, mrxe_reorder, mrxe_wire), called as
 * drivers/proto/mrxe_meta.h describes; the requester, completer and
 * responder call in here.  Everything runs in the per-QP work item with
 * pipe.mutex held, except the timer callback (flag + schedule only).
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <net/netlink.h>

#include <rdma/mrxe-netlink.h>

#include "mrxe_dp.h"

/*
 * RTO bounds (RFC 6298 2.4 asks for a 1 s floor; RFC 8985 and data-centre
 * transports use far less).  The RTO restarts only when una moves (RFC 6298
 * 5.3), and repairing a hole keeps una still for about 2 RTT + reo_wnd, so
 * SRTT + 4 RTTVAR alone fires during ordinary loss recovery (then RFC 8985
 * 6.3 marks the old packets lost: spurious retransmissions, seen at 1% loss
 * with a 10 ms RTT and a 20 ms floor).  The floor also stays above a TCG
 * guest's scheduling stalls; the ceiling is the standard mode's backoff cap.
 */
#define MRXE_META_RTO_FLOOR_NS	(50ULL * NSEC_PER_MSEC)
#define MRXE_META_RTO_INIT_NS	(100ULL * NSEC_PER_MSEC)
#define MRXE_META_MIN_RTT_WIN	(10ULL * NSEC_PER_SEC)
/*
 * The responder ACKs at the end of every work run: a run is short, but
 * the sender's PTO must cover a busy run (and a TCG vCPU hiccup).
 */
#define MRXE_META_DELACK_NS	(2ULL * NSEC_PER_MSEC)

static enum hrtimer_restart mrxe_meta_timer_fn(struct hrtimer *t)
{
	struct mrxe_meta_qp *m = container_of(t, struct mrxe_meta_qp, timer);
	struct mrxe_qp *qp = m->qp;

	atomic_set(&m->timer_fired, 1);
	mrxe_pipe_sched(qp);
	return HRTIMER_NORESTART;
}

int mrxe_meta_alloc(struct mrxe_qp *qp)
{
	struct mrxe_meta_qp *m;

	BUILD_BUG_ON(MRXE_SACK_WINDOW != MRXE_PKT_RING);
	BUILD_BUG_ON(MRXE_NL_WINDOW_MAX != MRXE_SACK_WINDOW);
	m = kvzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	m->qp = qp;
	hrtimer_init(&m->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	m->timer.function = mrxe_meta_timer_fn;
	atomic_set(&m->timer_fired, 0);
	skb_queue_head_init(&m->replay);
	qp->pipe.meta = m;
	return 0;
}

/* After cancel_work_sync(): nothing can arm the timer any more. */
void mrxe_meta_free(struct mrxe_qp *qp)
{
	struct mrxe_meta_qp *m = qp->pipe.meta;

	if (!m)
		return;
	hrtimer_cancel(&m->timer);
	mrxe_meta_purge(qp);
	qp->pipe.meta = NULL;
	kvfree(m);
}

/* Drop every held request (reset, error, teardown). */
void mrxe_meta_purge(struct mrxe_qp *qp)
{
	struct mrxe_meta_qp *m = qp->pipe.meta;
	u32 i;

	if (!m)
		return;
	for (i = 0; i < MRXE_PKT_RING; i++) {
		kfree_skb(m->stash[i]);
		m->stash[i] = NULL;
	}
	skb_queue_purge(&m->replay);
	m->ack_pending = false;
}

/* mrxe_meta.h step 1, sender half: scoreboard at the send PSN. */
void mrxe_meta_snd_init(struct mrxe_qp *qp, u32 psn)
{
	struct mrxe_meta_qp *m = qp->pipe.meta;
	struct mrxe_rtt rtt;
	bool keep_rtt;
	u64 rto;

	if (!m)
		return;
	keep_rtt = m->snd.sb.rtt.samples;
	rtt = m->snd.sb.rtt;
	rto = mrxe_ack_timeout_ns(qp->pipe.attr.timeout);
	m->cfg.rto_floor_ns = MRXE_META_RTO_FLOOR_NS;
	m->cfg.rto_ceil_ns = MRXE_RTO_BACKOFF_CAP_NS;
	/* IBA 9.7.6.1.3: the local ACK timeout is the first RTO */
	m->cfg.rto_init_ns = rto ? min_t(u64, rto, MRXE_RTO_BACKOFF_CAP_NS) :
			     MRXE_META_RTO_INIT_NS;
	m->cfg.min_rtt_win_ns = MRXE_META_MIN_RTT_WIN;
	m->cfg.tlp_delack_ns = MRXE_META_DELACK_NS;
	m->cfg.reo_persist = MRXE_SACK_REO_PERSIST_META;
	m->cfg.reo_mult_max = MRXE_SACK_REO_MULT_META;
	m->cfg.wnd = qp->window;	/* device default at create */
	mrxe_sack_init(&m->snd.sb, psn, &m->cfg);
	m->exec_psn = psn;
	mrxe_path_glue_init(qp);	/* multipath: mrxe_path_glue.c */
	/* an RNR rewind re-initialises the scoreboard: keep what was learnt */
	if (keep_rtt)
		m->snd.sb.rtt = rtt;
	m->retry_left = qp->pipe.attr.retry_cnt;
	mrxe_rsprec_reset(&m->rsprec);
	/*
	 * READ response window: one chunk at least, the request window at
	 * most; an RNR rewind keeps what was learnt, as the RTT above
	 */
	if (keep_rtt) {
		m->rspwnd.pending = 0;
	} else {
		mrxe_rspwnd_init(&m->rspwnd, MRXE_META_READ_CHUNK,
				 max_t(u32, m->cfg.wnd, MRXE_META_READ_CHUNK),
				 MRXE_META_READ_CHUNK);
	}
	/* rsp_got bits are cleared when their PSN is sent */
}

/* mrxe_meta.h step 1, receiver half: reorder window at the receive PSN. */
void mrxe_meta_rcv_init(struct mrxe_qp *qp, u32 psn)
{
	struct mrxe_meta_qp *m = qp->pipe.meta;
	u32 i;

	if (!m)
		return;
	mrxe_reorder_init(&m->rcv.rw, psn);
	for (i = 0; i < MRXE_PKT_RING; i++) {
		kfree_skb(m->stash[i]);
		m->stash[i] = NULL;
	}
	mrxe_wrorder_init(&m->wrorder);
	m->ack_pending = false;
}

/*
 * An RTO handled much later than it was due means this guest or this work
 * item stalled, and the ACKs that would have prevented it may still wait in
 * the softirq backlog (they are not in comp.rxq yet).  RFC 8985 6.3 would
 * then mark the whole window lost.  Give the ACKs one short grace period
 * first; this only delays a late RTO, never adds one.
 */
#define MRXE_META_RTO_LATE_NS	(5ULL * NSEC_PER_MSEC)
#define MRXE_META_RTO_GRACE_NS	(2ULL * NSEC_PER_MSEC)

bool mrxe_meta_rto_grace(struct mrxe_qp *qp)
{
	struct mrxe_meta_qp *m = qp->pipe.meta;
	enum mrxe_sack_timer_kind kind;
	u64 now = ktime_get_ns(), t;

	t = mrxe_sack_timer(&m->snd.sb, &kind);
	if (kind != MRXE_SACK_T_RTO || !t || now < t + MRXE_META_RTO_LATE_NS ||
	    (m->grace_until_ns && now >= m->grace_until_ns)) {
		m->grace_until_ns = 0;
		return false;
	}
	if (!m->grace_until_ns)
		m->grace_until_ns = now + MRXE_META_RTO_GRACE_NS;
	return true;
}

/* Earliest of the scoreboard's timer and the response re-request one. */
void mrxe_meta_arm(struct mrxe_qp *qp)
{
	struct mrxe_meta_qp *m = qp->pipe.meta;
	enum mrxe_sack_timer_kind kind;
	u64 t;

	if (!m || !qp->pipe.meta_tx || qp->pipe.dying)
		return;
	t = mrxe_sack_timer(&m->snd.sb, &kind);
	if (m->rsprec.deadline_ns && (!t || m->rsprec.deadline_ns < t))
		t = m->rsprec.deadline_ns;
	if (m->grace_until_ns && t && t < m->grace_until_ns)
		t = m->grace_until_ns;
	if (!t) {
		hrtimer_try_to_cancel(&m->timer);
		return;
	}
	hrtimer_start(&m->timer, ns_to_ktime(t), HRTIMER_MODE_ABS);
}

void mrxe_meta_timer_stop(struct mrxe_qp *qp)
{
	struct mrxe_meta_qp *m = qp->pipe.meta;

	if (!m)
		return;
	hrtimer_try_to_cancel(&m->timer);
	atomic_set(&m->timer_fired, 0);
}

static void mrxe_meta_delta(struct mrxe_qp *qp, enum mrxe_counter c,
			    u64 now, u64 *synced)
{
	if (now > *synced)
		mrxe_qp_counter_add(qp, c, now - *synced);
	*synced = now;
}

static u32 mrxe_meta_us(u64 ns)
{
	return (u32)min_t(u64, div_u64(ns, NSEC_PER_USEC), U32_MAX);
}

/*
 * The estimators for `mrxectl qp show` (MRXE_ATTR_QP_SRTT_US ..), copied
 * under pipe.lock, which keeps pipe.meta from being freed, as
 * mrxe_path_snapshot() does.  The work item updates them without that
 * lock: the values may be mid-update, for reporting only.  Nothing for a
 * QP that is not a MetaRoCE requester.
 */
int mrxe_meta_est_fill(struct sk_buff *skb, struct mrxe_qp *qp)
{
	u32 v[MRXE_ATTR_QP_RSP_WND - MRXE_ATTR_QP_SRTT_US + 1];
	const struct mrxe_meta_qp *m;
	const struct mrxe_sack *sb;
	unsigned long flags;
	bool ok = false;
	int i;

	spin_lock_irqsave(&qp->pipe.lock, flags);
	m = qp->pipe.meta;
	if (!qp->pipe.dying && m && READ_ONCE(qp->pipe.meta_tx)) {
		sb = &m->snd.sb;
		v[0] = mrxe_meta_us(mrxe_rtt_srtt(&sb->rtt));
		v[1] = mrxe_meta_us(mrxe_rtt_min(&sb->rtt));
		v[2] = mrxe_meta_us(mrxe_rtt_rto(&sb->rtt));
		v[3] = mrxe_meta_us(mrxe_sack_reo_wnd(sb));
		v[4] = mrxe_meta_us(mrxe_sack_reo_wnd_rack(sb));
		v[5] = m->rspwnd.cwnd;
		ok = true;
	}
	spin_unlock_irqrestore(&qp->pipe.lock, flags);
	if (!ok)
		return 0;
	for (i = 0; i < ARRAY_SIZE(v); i++)
		if (nla_put_u32(skb, MRXE_ATTR_QP_SRTT_US + i, v[i]))
			return -EMSGSIZE;
	return 0;
}

/* Per-QP engine counters -> device and QP counters (hw_counters, netlink). */
void mrxe_meta_sync_counters(struct mrxe_qp *qp)
{
	struct mrxe_meta_qp *m = qp->pipe.meta;
	u64 retrans;

	if (!m)
		return;
	retrans = m->snd.sb.cnt.retransmits + m->rsp_retrans;
	/* retransmitted packets count in retrans_pkts in both modes */
	if (retrans > m->synced.retrans)
		mrxe_qp_counter_add(qp, MRXE_CNT_RETRANS_PKTS,
				    retrans - m->synced.retrans);
	mrxe_meta_delta(qp, MRXE_CNT_META_RETRANS, retrans,
			&m->synced.retrans);
	mrxe_meta_delta(qp, MRXE_CNT_META_SPURIOUS, m->snd.sb.cnt.spurious,
			&m->synced.spurious);
	mrxe_meta_delta(qp, MRXE_CNT_META_HOLES, m->snd.sb.cnt.holes,
			&m->synced.holes);
	mrxe_meta_delta(qp, MRXE_CNT_META_TLP, m->snd.sb.cnt.tlp,
			&m->synced.tlp);
	mrxe_meta_delta(qp, MRXE_CNT_META_RTO, m->snd.sb.cnt.rto,
			&m->synced.rto);
	mrxe_meta_delta(qp, MRXE_CNT_META_RTO_SPURIOUS,
			m->snd.sb.cnt.rto_spurious, &m->synced.rto_spurious);
	mrxe_meta_delta(qp, MRXE_CNT_META_OOO, m->rcv.rw.cnt.ooo,
			&m->synced.ooo);
	mrxe_meta_delta(qp, MRXE_CNT_RCV_DUP_REQ, m->rcv.rw.cnt.duplicate,
			&m->synced.dup);
	mrxe_meta_delta(qp, MRXE_CNT_META_OUT_OF_WINDOW,
			m->rcv.rw.cnt.out_of_window + m->oow_local,
			&m->synced.oow);
}

/*
 * A packet of the wrong mode (wire-format.rst "Mismatch"): counted, logged
 * (ratelimited) and the QP goes to ERROR; the packet is never placed.
 */
void mrxe_meta_mismatch(struct mrxe_qp *qp, const char *why, u32 psn)
{
	mrxe_qp_counter_inc(qp, MRXE_CNT_MODE_MISMATCH);
	mrxe_err_dev(qp_dev(qp), "qp %u: transport mode mismatch: %s (psn %#x), QP to error\n",
		     qp->ibqp.qp_num, why, psn);
	mrxe_pipe_set_error(qp);
}

/* Set BTH TVer 1 and write the MRH right after the BTH at @bth. */
void mrxe_meta_build_mrh(struct mrxe_qp *qp, u8 *bth, u8 cls, u8 flags,
			 u32 msn, u32 offset, u32 tsecr)
{
	struct mrxe_mrh h = {};

	bth[1] = (bth[1] & 0xf0) | MRXE_META_TVER;
	h.version = MRXE_MRH_VERSION;
	h.cls = cls;
	h.flags = flags;
	h.msn = msn;
	h.offset = offset;
	h.tsval = mrxe_mrh_ts(ktime_get_ns());
	h.tsecr = tsecr;
	mrxe_mrh_build(bth + MRXE_BTH_LEN, &h);
}

/*
 * `auto` requester: the peer echoed CAP, everything sent is acknowledged
 * and no message is half sent: switch the send side at req.psn, the
 * switch PSN (wire-format.rst "auto: in-band upgrade", step 3).
 */
void mrxe_meta_upgrade_tx(struct mrxe_qp *qp)
{
	struct mrxe_meta_qp *m = qp->pipe.meta;

	mrxe_rto_stop(qp);
	qp->pipe.meta_tx = true;
	qp->pipe.auto_state = MRXE_AUTO_META;
	qp->comp.psn = qp->req.psn;
	m->switch_psn = qp->req.psn;
	m->sync_pending = true;
	mrxe_meta_snd_init(qp, qp->req.psn);
	mrxe_qp_counter_inc(qp, MRXE_CNT_META_UPGRADES);
	mrxe_dbg_dev(qp_dev(qp), "qp %u: auto: send side upgraded at psn %#x\n",
		     qp->ibqp.qp_num, qp->req.psn);
	mrxe_pipe_publish_mode(qp);
}

/*
 * `auto` responder: the first TVer 1 request at or after ePSN (step 4):
 * the receive side switches with its reorder window at ePSN.
 */
void mrxe_meta_upgrade_rx(struct mrxe_qp *qp)
{
	qp->pipe.meta_rx = true;
	mrxe_meta_rcv_init(qp, qp->resp.psn);
	mrxe_qp_counter_inc(qp, MRXE_CNT_META_UPGRADES);
	mrxe_dbg_dev(qp_dev(qp), "qp %u: auto: receive side upgraded at psn %#x\n",
		     qp->ibqp.qp_num, qp->resp.psn);
	mrxe_pipe_publish_mode(qp);
}
