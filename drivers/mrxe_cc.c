// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Congestion control glue (see mrxe_cc.h): RoCEv2 ECN/CNP (IBA annex A17.9)
 * and DCQCN (Zhu et al., SIGCOMM 2015) for connected QPs.
 *
 *  - ECN-capable transport: mrxe_pipe_ecn() marks ECT(0) on every RoCEv2
 *    packet but CNPs when the device's `ecn` is on (A17.9.1: congestion is
 *    signalled through the IP header's ECN field, RFC 3168).
 *  - Notification point: a CE-marked packet for a connected QP makes its
 *    work item send a CNP (BTH opcode 0x81, A17.9.3 format: BTH with the
 *    sender's QPN as DestQP, B bit set, PSN 0, 16 reserved bytes, ICRC) to
 *    the QP's peer, at most one per cnp_interval_us (DCQCN section 3.2).
 *    The CNP itself is sent Not-ECT: it must not be marked and answered.
 *  - Reaction point: each CNP received for a QP cuts its rate
 *    (mrxe_dcqcn_cnp), the DCQCN timers and byte counter raise it again;
 *    the pacer (token bucket, depth two packets) holds it in the requester
 *    (mrxe_cc_admit), an hrtimer schedules the work when tokens return.
 *  - MetaRoCE (meta_rx/meta_tx QPs): no CNP; the responder echoes the
 *    number of CE-marked packets in every SACK ACK (mrxe_cc_take_ce) and
 *    the requester reacts per ACK, once per RTT, DCTCP-like
 *    (mrxe_cc_meta_ack, drivers/proto/mrxe_ecn_cc.c).  The pacer runs the
 *    lower of the two engines' rates.
 * UD QPs neither send nor react to CNPs (no connection to name).
 */
#include <linux/ip.h>
#include <net/inet_ecn.h>

#include "mrxe_dp.h"

#define MRXE_CC_MAX_CUTS_PER_RUN	8

static enum hrtimer_restart mrxe_cc_timer_fn(struct hrtimer *t)
{
	struct mrxe_qp *qp = container_of(t, struct mrxe_qp, cc.timer);

	mrxe_pipe_sched(qp);
	return HRTIMER_NORESTART;
}

void mrxe_cc_init(struct mrxe_qp *qp)
{
	struct mrxe_cc_qp *cc = &qp->cc;

	memset(&cc->np, 0, sizeof(cc->np));
	atomic_set(&cc->ce_pending, 0);
	atomic_set(&cc->cnp_pending, 0);
	atomic_set(&cc->ce_count, 0);
	hrtimer_init(&cc->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	cc->timer.function = mrxe_cc_timer_fn;
	mrxe_cc_reset(qp);
}

void mrxe_cc_cleanup(struct mrxe_qp *qp)
{
	hrtimer_cancel(&qp->cc.timer);
}

void mrxe_cc_reset(struct mrxe_qp *qp)
{
	struct mrxe_dev *dev = qp_dev(qp);
	struct mrxe_cc_qp *cc = &qp->cc;
	struct mrxe_ecn_cc_params ep;
	struct mrxe_dcqcn_params p;
	bool on;

	spin_lock_bh(&dev->cfg_lock);
	p = dev->cfg.dcqcn;
	on = dev->cfg.cc == MRXE_CC_DCQCN;
	cc->cnp_interval_us = dev->cfg.cnp_interval_us;
	spin_unlock_bh(&dev->cfg_lock);

	hrtimer_try_to_cancel(&cc->timer);
	cc->on = on && !mrxe_qp_is_ud(qp);
	mrxe_dcqcn_init(&cc->rp, &p);
	/* MetaRoCE reaction: derived from the DCQCN parameters */
	mrxe_ecn_cc_params_from_dcqcn(&ep, &p);
	mrxe_ecn_cc_init(&cc->ecn, &ep);
	mrxe_pacer_init(&cc->pacer, cc->on ? p.line_kbps : 0, 0,
			ktime_get_ns());
	cc->limited = false;
	cc->cuts_synced = 0;
	memset(&cc->np, 0, sizeof(cc->np));
	atomic_set(&cc->ce_pending, 0);
	atomic_set(&cc->ce_count, 0);
	atomic_set(&cc->cnp_pending, 0);
	WRITE_ONCE(cc->rate_kbps, cc->on ? mrxe_dcqcn_rate(&cc->rp) : 0);
}

/* A17.9.3: BTH (opcode 0x81, DestQP = the QP to slow down), 16 bytes. */
static void mrxe_cc_send_cnp(struct mrxe_qp *qp)
{
	u32 len = MRXE_BTH_LEN + MRXE_CNP_PAYLOAD_LEN + MRXE_ICRC_LEN;
	struct mrxe_dev *dev = qp_dev(qp);
	struct mrxe_bth bth = {};
	struct sk_buff *skb;

	skb = mrxe_pipe_alloc_pkt(qp, qp->pipe.av, len);
	if (!skb)
		return;		/* no memory: the next CE mark asks again */
	memset(skb->data, 0, len);
	bth.opcode = MRXE_OPC_CNP;
	bth.pkey = MRXE_DEFAULT_PKEY;
	bth.becn = true;
	bth.dqpn = qp->pipe.attr.dest_qpn;
	mrxe_bth_build(skb->data, &bth);
	if (!mrxe_net_xmit(dev, qp->pipe.av, skb, qp->pipe.sport,
			   INET_ECN_NOT_ECT, MRXE_CNP_PRIO))
		mrxe_counter_inc(dev, MRXE_CNT_CNP_SENT);
}

/*
 * The pacer runs the lower of the DCQCN and the MetaRoCE engine's rate.
 * Its bucket holds two packets or MRXE_CC_PACER_SLACK_US at that rate,
 * whichever is more, at most MRXE_CC_PACER_MAX_BURST bytes.  The time is
 * what the work item may run late: the tokens a late run finds beyond the
 * bucket are lost, so a bucket smaller than the lateness holds the QP
 * below its rate.  With 100 us, four QPs paced at their fair share of a
 * 30 Mbit/s bottleneck (two packets, about 2 ms) in a saturated TCG guest
 * delivered 0.81 of the link while their rates summed to 0.97-1.05 of it,
 * the bottleneck queue empty (bench/cc-fairness.sh, senders sampled).
 */
static void mrxe_cc_set_pacer(struct mrxe_qp *qp, u64 now)
{
	struct mrxe_cc_qp *cc = &qp->cc;
	u64 rc = min(mrxe_dcqcn_rate(&cc->rp), mrxe_ecn_cc_rate(&cc->ecn));

	/* kbit/s x us / 8000 = bytes */
	cc->pacer.burst_bytes =
		max_t(u64, 2 * (qp->pipe.attr.mtu + MRXE_CC_HDR_BYTES),
		      min_t(u64, rc * MRXE_CC_PACER_SLACK_US / 8000,
			    MRXE_CC_PACER_MAX_BURST));

	/*
	 * The pacer holds Rc, line rate included: the line rate is the
	 * device's port speed (rate-max), as a NIC never sends faster than its
	 * port; below it every packet asks for an ACK (mrxe_cc_limited).
	 */
	mrxe_pacer_set_rate(&cc->pacer, rc, now);
	cc->limited = rc < cc->rp.p.line_kbps;
	WRITE_ONCE(cc->rate_kbps, rc);
}

/* Count new rate cuts (both engines) and hand the rate to the pacer. */
static void mrxe_cc_sync(struct mrxe_qp *qp, u64 now)
{
	struct mrxe_cc_qp *cc = &qp->cc;
	u64 cuts = cc->rp.cuts + cc->ecn.cuts;

	if (cuts != cc->cuts_synced) {
		mrxe_counter_add(qp_dev(qp), MRXE_CNT_CC_RATE_CUTS,
				 cuts - cc->cuts_synced);
		cc->cuts_synced = cuts;
	}
	mrxe_cc_set_pacer(qp, now);
}

void mrxe_cc_run(struct mrxe_qp *qp)
{
	struct mrxe_dev *dev = qp_dev(qp);
	struct mrxe_cc_qp *cc = &qp->cc;
	u64 now = ktime_get_ns();
	int n;

	if (qp->pipe.state != IB_QPS_RTR && qp->pipe.state != IB_QPS_RTS &&
	    qp->pipe.state != IB_QPS_SQD)
		return;
	/* MetaRoCE responders echo CE in their ACKs instead (no CNP) */
	if (atomic_xchg(&cc->ce_pending, 0) && !mrxe_qp_is_ud(qp) &&
	    !qp->pipe.meta_rx) {
		if (mrxe_cnp_np_may_send(&cc->np, now,
					 cc->cnp_interval_us * NSEC_PER_USEC))
			mrxe_cc_send_cnp(qp);
		else
			mrxe_counter_inc(dev, MRXE_CNT_CNP_PACED);
	}
	n = atomic_xchg(&cc->cnp_pending, 0);
	if (!cc->on)
		return;
	for (n = min(n, MRXE_CC_MAX_CUTS_PER_RUN); n > 0; n--)
		mrxe_dcqcn_cnp(&cc->rp, now);
	mrxe_dcqcn_tick(&cc->rp, now);
	mrxe_cc_sync(qp, now);
}

void mrxe_cc_meta_ack(struct mrxe_qp *qp, u64 bytes, u8 ce, u64 srtt_ns)
{
	struct mrxe_cc_qp *cc = &qp->cc;
	u64 now;

	if (!cc->on)
		return;
	now = ktime_get_ns();
	/* CE count in packets; the engine caps marked bytes at delivered */
	mrxe_ecn_cc_ack(&cc->ecn, bytes, (u64)ce * qp->pipe.attr.mtu, now,
			srtt_ns);
	mrxe_cc_sync(qp, now);
}

bool mrxe_cc_admit(struct mrxe_qp *qp, u32 len)
{
	struct mrxe_cc_qp *cc = &qp->cc;
	u64 now, t;

	if (!cc->on || !cc->pacer.rate_kbps)
		return true;
	now = ktime_get_ns();
	if (!cc->pacer.burst_bytes)	/* first packet: size the bucket */
		mrxe_cc_set_pacer(qp, now);
	/* timers first: the rate may have grown since the last run */
	if (now >= mrxe_dcqcn_next(&cc->rp) && mrxe_dcqcn_next(&cc->rp)) {
		mrxe_dcqcn_tick(&cc->rp, now);
		mrxe_cc_set_pacer(qp, now);
	}
	t = mrxe_pacer_admit(&cc->pacer, len, now);
	if (!t) {
		mrxe_dcqcn_sent(&cc->rp, len, now);
		return true;
	}
	if (!qp->pipe.dying)
		hrtimer_start(&cc->timer, ns_to_ktime(t), HRTIMER_MODE_ABS);
	return false;
}

void mrxe_cc_cnp_rcv(struct mrxe_dev *dev, struct sk_buff *skb, u32 len)
{
	const u8 *bth = skb->data;
	struct mrxe_qp *qp;

	/* A17.9.3 layout; P_Key of the default partition as every packet */
	if (len < MRXE_BTH_LEN + MRXE_CNP_PAYLOAD_LEN + MRXE_ICRC_LEN ||
	    mrxe_bth_tver(bth) != 0 ||
	    (mrxe_bth_pkey(bth) & 0x7fff) != 0x7fff)
		goto drop;
	/* the ICRC was checked by mrxe_rcv() (A17.3.3) */
	mrxe_counter_inc(dev, MRXE_CNT_CNP_RCVD);
	qp = mrxe_qp_get(dev, mrxe_bth_qpn(bth));
	if (!qp)
		goto drop;
	if (!mrxe_qp_is_ud(qp)) {
		atomic_inc(&qp->cc.cnp_pending);
		mrxe_pipe_sched(qp);
	}
	mrxe_qp_put(qp);
	consume_skb(skb);
	return;
drop:
	mrxe_counter_inc(dev, MRXE_CNT_RCV_DROPPED);
	kfree_skb(skb);
}
