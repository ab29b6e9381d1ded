// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Completer (IBA 9.7.5.1 requester side of ACK processing, 9.9.2 errors):
 * consumes ACK/NAK, READ response and ATOMIC ACK packets, places READ data
 * and atomic results, drives retransmission through the QP's loss-recovery
 * ops and posts send completions in verbs order.  Runs in the per-QP work
 * item with pipe.mutex held.
 */
#include "mrxe_dp.h"

static u32 mrxe_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_UVERBS_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_UVERBS_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case MRXE_WR_REG_MR:
		return IB_WC_REG_MR;
	case MRXE_WR_FLUSH:
		return MRXE_WC_FLUSH;
	case MRXE_WR_ATOMIC_WRITE:
		return MRXE_WC_ATOMIC_WRITE;
	default:
		return IB_WC_SEND;
	}
}

/*
 * Complete the WQE at req.head and hand its SQ slot back.  The slot is
 * released before the CQE is published: an application that polls this
 * completion and posts at once (every windowed sender does) must find the
 * slot free.  mrxe_queue_advance() is a release store of the SQ consumer
 * index and mrxe_cq_post() a release store of the CQ producer index, so a
 * poller that sees the CQE (acquire) also sees the free slot.  The WQE was
 * copied out of the ring at fetch time: w stays valid after the release.
 */
void mrxe_comp_post_send(struct mrxe_qp *qp, struct mrxe_swqe *w)
{
	struct mrxe_req_state *req = &qp->req;
	bool signal = w->status != IB_WC_SUCCESS || qp->sq_sig_all ||
		      (w->wr.send_flags & MRXE_SEND_SIGNALED);
	struct mrxe_cqe cqe;

	if (signal) {
		memset(&cqe, 0, sizeof(cqe));
		cqe.wr_id = w->wr.wr_id;
		cqe.status = w->status;
		cqe.opcode = mrxe_wc_opcode(w->wr.opcode);
		cqe.byte_len = w->len;
		cqe.qp_num = qp->ibqp.qp_num;
		cqe.port_num = 1;
	}
	if (w->rd_counted) {
		w->rd_counted = false;
		req->rd_atomic--;
	}
	mrxe_queue_advance(qp->sq);
	req->head++;
	if ((s32)(req->cur - req->head) < 0)
		req->cur = req->head;
	if (signal) {
		if (cqe.status != IB_WC_SUCCESS)
			mrxe_qp_counter_inc(qp, MRXE_CNT_COMPLETER_ERR);
		mrxe_cq_post(qp->scq, &cqe, false);
	}
}

/*
 * Nothing sent is waiting for an answer: everything below the highest PSN
 * ever sent is acknowledged.  req.psn is not that point after a rewind (it
 * is the resend position), and the retransmit timer must keep running for
 * rewound messages not resent yet (IBA 9.7.6.1.3).
 */
static bool mrxe_comp_idle(struct mrxe_qp *qp)
{
	return mrxe_psn_diff(qp->req.next_new_psn, qp->comp.psn) <= 0;
}

static void mrxe_comp_progress(struct mrxe_qp *qp, u32 next_psn)
{
	qp->comp.psn = next_psn;
	qp->comp.gap = false;
	qp->comp.rto_backoff = 0;
	qp->comp.retry_left = qp->pipe.attr.retry_cnt;
	qp->comp.rnr_left = qp->pipe.attr.rnr_retry;
	if (mrxe_comp_idle(qp))
		mrxe_rto_stop(qp);
	else
		mrxe_rto_arm(qp);
}

static void mrxe_comp_retry(struct mrxe_qp *qp, struct mrxe_swqe *w);

static void mrxe_comp_fail(struct mrxe_qp *qp, struct mrxe_swqe *w,
			   u32 status)
{
	w->status = status;
	w->state = MRXE_SWQE_DONE;
	mrxe_comp_post_send(qp, w);
	mrxe_pipe_set_error(qp);
}

/*
 * A response is missing (go-back-N from comp.psn), IBA 9.7.5.1.1.  Only the
 * first out-of-sequence response of a gap rewinds; the rest of the old
 * stream is dropped until comp.psn arrives (or the timer fires).
 */
static void mrxe_comp_gap(struct mrxe_qp *qp, struct mrxe_swqe *w)
{
	if (qp->comp.gap)
		return;
	qp->comp.gap = true;
	mrxe_dbg_dev(qp_dev(qp), "qp %u: gap comp %#x req %#x until %#x rxq %u\n",
		     qp->ibqp.qp_num, qp->comp.psn, qp->req.psn,
		     qp->req.next_new_psn, skb_queue_len(&qp->comp.rxq));
	mrxe_comp_retry(qp, w);
}

static void mrxe_comp_retry(struct mrxe_qp *qp, struct mrxe_swqe *w)
{
	if (!qp->comp.retry_left) {
		mrxe_comp_fail(qp, w, IB_WC_RETRY_EXC_ERR);
		return;
	}
	qp->comp.retry_left--;
	qp->req.loss->timeout(qp);
	mrxe_rto_arm(qp);
}

static void mrxe_comp_rnr(struct mrxe_qp *qp, struct mrxe_swqe *w, u32 psn,
			  u8 timer)
{
	mrxe_qp_counter_inc(qp, MRXE_CNT_RNR_NAKS_RCVD);
	if (qp->pipe.attr.rnr_retry != 7) {	/* 7 = infinite, IBA 9.7.5.2.8 */
		if (!qp->comp.rnr_left) {
			mrxe_comp_fail(qp, w, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		qp->comp.rnr_left--;
	}
	if (mrxe_psn_after(psn, qp->comp.psn))
		qp->comp.psn = psn;
	mrxe_req_rewind(qp, psn);
	mrxe_rto_stop(qp);
	qp->req.rnr_wait = true;
	atomic_set(&qp->req.rnr_fired, 0);
	if (qp->pipe.dying)
		return;
	hrtimer_start(&qp->req.rnr_timer,
		      ns_to_ktime((u64)mrxe_rnr_timer_us(timer) * NSEC_PER_USEC),
		      HRTIMER_MODE_REL);
}

static void mrxe_comp_read_resp(struct mrxe_qp *qp, struct mrxe_swqe *w,
				struct sk_buff *skb)
{
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	u32 mtu = qp->pipe.attr.mtu, off, len = w->len;
	bool first = pi->mask & MRXE_M_FIRST, last = pi->mask & MRXE_M_LAST;
	int err;

	/* ATOMIC WRITE: a zero-length READ Response Only (IBA 1.5 MPE) */
	if (w->mask & MRXE_M_ATOMIC_WRITE)
		len = 0;
	else if (!(w->mask & MRXE_M_READ))
		goto drop;
	if (pi->psn != qp->comp.psn) {
		/* a READ response was lost: re-request from comp.psn */
		mrxe_comp_gap(qp, w);
		goto drop;
	}
	if ((pi->psn == w->first_psn) != first)
		goto drop;
	off = (u32)mrxe_psn_diff(pi->psn, w->first_psn) * mtu;
	if (off > len || pi->paylen > len - off ||
	    (last && off + pi->paylen != len) ||
	    (!last && pi->paylen != mtu))
		goto drop;
	if (pi->paylen) {
		err = mrxe_sgl_copy(qp->pd, swqe_sge(w), w->wr.num_sge, off,
				    mrxe_pkt_payload(skb), pi->paylen,
				    MRXE_COPY_TO_MR, IB_ACCESS_LOCAL_WRITE);
		if (err) {
			mrxe_comp_fail(qp, w, IB_WC_LOC_PROT_ERR);
			return;
		}
	}
	mrxe_comp_progress(qp, mrxe_psn_add(pi->psn, 1));
	if (last) {
		w->state = MRXE_SWQE_DONE;
		mrxe_comp_post_send(qp, w);
	}
	return;
drop:
	mrxe_qp_counter_inc(qp, MRXE_CNT_RCV_DROPPED);
}

static void mrxe_comp_atomic_ack(struct mrxe_qp *qp, struct mrxe_swqe *w,
				 struct sk_buff *skb)
{
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	u64 orig;
	int err;

	if (!(w->mask & MRXE_M_ATOMIC) || pi->psn != w->first_psn) {
		mrxe_qp_counter_inc(qp, MRXE_CNT_RCV_DROPPED);
		return;
	}
	/* the original value is returned in host order (IBA 9.4.5) */
	orig = mrxe_atmack_parse(mrxe_pkt_hdr(skb, MRXE_HDR_ATMACK));
	err = mrxe_sgl_copy(qp->pd, swqe_sge(w), w->wr.num_sge, 0, &orig,
			    sizeof(orig), MRXE_COPY_TO_MR,
			    IB_ACCESS_LOCAL_WRITE);
	if (err) {
		mrxe_comp_fail(qp, w, IB_WC_LOC_PROT_ERR);
		return;
	}
	mrxe_comp_progress(qp, mrxe_psn_add(pi->psn, 1));
	w->state = MRXE_SWQE_DONE;
	mrxe_comp_post_send(qp, w);
}

/* Completion status of a NAK other than a PSN sequence error (IBA 9.9.2). */
static u32 mrxe_comp_nak_status(u8 code)
{
	switch (code) {
	case MRXE_NAK_INVALID_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case MRXE_NAK_REM_ACCESS:
		return IB_WC_REM_ACCESS_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

static void mrxe_comp_ack(struct mrxe_qp *qp, struct mrxe_swqe *w,
			  struct sk_buff *skb)
{
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	struct mrxe_aeth aeth;
	u32 psn = pi->psn;

	mrxe_aeth_parse(mrxe_pkt_hdr(skb, MRXE_HDR_AETH), &aeth);
	switch (aeth.syndrome & MRXE_AETH_TYPE_MASK) {
	case MRXE_AETH_ACK:
		if (w->mask & (MRXE_M_READ | MRXE_M_ATOMIC))
			return;		/* answered by its own responses */
		mrxe_comp_progress(qp, mrxe_psn_add(psn, 1));
		qp->req.loss->acked(qp, psn);
		if (psn == w->last_psn && w->state == MRXE_SWQE_PENDING) {
			w->state = MRXE_SWQE_DONE;
			mrxe_comp_post_send(qp, w);
		}
		return;
	case MRXE_AETH_RNR_NAK:
		mrxe_comp_rnr(qp, w, psn, aeth.syndrome & MRXE_AETH_VAL_MASK);
		return;
	case MRXE_AETH_NAK:
		break;
	default:
		mrxe_qp_counter_inc(qp, MRXE_CNT_RCV_DROPPED);
		return;
	}

	switch (aeth.syndrome & MRXE_AETH_VAL_MASK) {
	case MRXE_NAK_PSN_SEQ:
		mrxe_qp_counter_inc(qp, MRXE_CNT_SEQ_ERR_NAKS_RCVD);
		/* progress resets the retry budget, a repeated NAK spends it */
		if (!mrxe_psn_after(psn, qp->comp.psn) && !qp->comp.retry_left) {
			mrxe_comp_fail(qp, w, IB_WC_RETRY_EXC_ERR);
			return;
		}
		if (mrxe_psn_after(psn, qp->comp.psn))
			mrxe_comp_progress(qp, psn);
		else
			qp->comp.retry_left--;
		qp->req.loss->nak_seq(qp, psn);
		mrxe_rto_arm(qp);
		return;
	default:
		mrxe_comp_fail(qp, w,
			       mrxe_comp_nak_status(aeth.syndrome &
						    MRXE_AETH_VAL_MASK));
		return;
	}
}

static void mrxe_comp_packet(struct mrxe_qp *qp, struct sk_buff *skb)
{
	struct mrxe_req_state *req = &qp->req;
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	struct mrxe_swqe *w;
	u8 syn;

	/*
	 * A response for a PSN this QP never sent is a ghost (IBA 9.9,
	 * requester side: silently dropped): forged or from an old
	 * connection, it must not skip the send cursor nor complete WQEs
	 * whose data the responder never got.  A NAK carries the responder's
	 * ePSN, which may be next_new_psn itself (a sequence NAK provoked by
	 * a packet from far ahead while everything sent had arrived).
	 */
	if (unlikely(mrxe_psn_after(pi->psn, req->next_new_psn) ||
		     (pi->psn == req->next_new_psn &&
		      (!(pi->mask & MRXE_M_ACK) ||
		       (*mrxe_pkt_hdr(skb, MRXE_HDR_AETH) &
			MRXE_AETH_TYPE_MASK) == MRXE_AETH_ACK)))) {
		mrxe_counter_inc(qp_dev(qp), MRXE_CNT_RX_DROP_GHOST);
		goto drop;
	}

	/* what the responder holds: never resend it (IBA 9.7.5.1.2) */
	if (pi->mask & MRXE_M_ACK) {
		syn = *mrxe_pkt_hdr(skb, MRXE_HDR_AETH);
		if ((syn & MRXE_AETH_TYPE_MASK) == MRXE_AETH_ACK)
			mrxe_req_acked(qp, mrxe_psn_add(pi->psn, 1));
		else
			mrxe_req_acked(qp, pi->psn);
	} else {
		mrxe_req_acked(qp, pi->psn);
	}

	for (;;) {
		if (req->head == req->fetched)
			goto drop;
		w = mrxe_swqe_at(qp, req->head);
		if (w->state == MRXE_SWQE_DONE) {
			if (req->head == req->cur)
				goto drop;	/* requester has not seen it */
			mrxe_comp_post_send(qp, w);
			continue;
		}
		if (!w->psn_valid)
			goto drop;
		if (!mrxe_psn_after(pi->psn, w->last_psn))
			break;
		/* the packet acknowledges beyond this WQE */
		if (w->state != MRXE_SWQE_PENDING)
			goto drop;
		if (w->mask & (MRXE_M_READ | MRXE_M_ATOMIC)) {
			/* its response was lost (IBA 9.7.5.1.2) */
			mrxe_comp_gap(qp, w);
			goto drop;
		}
		/* implicit ACK of an earlier SEND/WRITE (IBA 9.7.5.1.2) */
		mrxe_comp_progress(qp, mrxe_psn_add(w->last_psn, 1));
		w->state = MRXE_SWQE_DONE;
		mrxe_comp_post_send(qp, w);
	}

	/* stale: a duplicate response or an ACK of what we already know */
	if (mrxe_psn_before(pi->psn, qp->comp.psn))
		goto drop;

	if (pi->mask & MRXE_M_READ_RESP)
		mrxe_comp_read_resp(qp, w, skb);
	else if (pi->mask & MRXE_M_ATOMIC_ACK)
		mrxe_comp_atomic_ack(qp, w, skb);
	else
		mrxe_comp_ack(qp, w, skb);
	return;
drop:
	return;
}

/* ---- MetaRoCE (drivers/proto/mrxe_meta.h step 3) ---- */

/*
 * A READ response or atomic ACK arrived: it proves that its request, PSNs
 * [@a, @b] (a READ request takes the PSNs of all its responses), was
 * delivered.  Tell the scoreboard with a locally built SACK, for the whole
 * request at once: its responses are streamed over time, so a per-response
 * SACK would make RACK call the later ones lost (RFC 8985 6.2 assumes the
 * PSNs of one send are delivered together).
 */
static void mrxe_meta_local_sack(struct mrxe_qp *qp, u32 a, u32 b)
{
	struct mrxe_sack *sb = &qp->pipe.meta->snd.sb;
	struct mrxe_sack_ack_res res;
	struct mrxe_sack_info si = {};
	u32 d, k, q;

	if (mrxe_psn_before(b, sb->una))
		return;
	if (!mrxe_psn_before(b, sb->nxt))
		b = mrxe_psn_add(sb->nxt, MRXE_PSN_MASK);
	si.trigger_psn = b;
	if (!mrxe_psn_after(a, sb->una)) {
		/* everything before @a was delivered already */
		si.epsn = mrxe_psn_add(b, 1);
	} else {
		/* blocks from @a: the request is at most one READ chunk */
		si.epsn = sb->una;
		for (q = a; ; q = mrxe_psn_add(q, 1)) {
			d = (u32)mrxe_psn_diff(q, a);
			k = d / MRXE_SACK_BLOCK_BITS;
			if (k >= MRXE_SACK_MAX_BLOCKS)
				break;
			if (k >= si.nblocks) {
				si.blk[k].base =
					mrxe_psn_add(a, k * MRXE_SACK_BLOCK_BITS);
				si.blk[k].bitmap = 0;
				si.nblocks = k + 1;
			}
			si.blk[k].bitmap |= 1ULL << (d % MRXE_SACK_BLOCK_BITS);
			if (q == b)
				break;
		}
	}
	if (mrxe_sack_on_ack(sb, &si, 0, ktime_get_ns(), &res))
		return;
	/*
	 * Progress renews the retry budget (IBA 9.7.6.1.3: retry_cnt counts
	 * retries of the same PSN), as an ACK that moves una does.  A long
	 * READ makes progress through its responses only: without this every
	 * RTO of the transfer spent the budget and an 8 MiB READ at 1% loss
	 * ended in IB_WC_RETRY_EXC_ERR.
	 */
	if (res.una_moved) {
		qp->pipe.meta->retry_left = qp->pipe.attr.retry_cnt;
		qp->comp.rnr_left = qp->pipe.attr.rnr_retry;
	}
}

/*
 * Response recovery (drivers/proto/mrxe_rsprec.c decides, this glue
 * supplies the per-PSN facts from the meta ring and rsp_got, performs the
 * re-requests and counts).
 */

/* Is @q a READ/atomic PSN in flight whose response has not arrived? */
static bool mrxe_meta_rsp_missing(void *ctx, u32 q)
{
	struct mrxe_qp *qp = ctx;
	u32 slot = q & (MRXE_PKT_RING - 1);
	struct mrxe_pkt_meta *pm = &qp->req.meta[slot];

	return pm->psn == q && mrxe_meta_is_rsp_op(pm->opcode) &&
	       !test_bit(slot, qp->pipe.meta->rsp_got);
}

static bool mrxe_meta_rsp_sent(void *ctx, u32 q, u64 *send_ns, bool *rt)
{
	struct mrxe_qp *qp = ctx;
	struct mrxe_pkt_meta *pm = &qp->req.meta[q & (MRXE_PKT_RING - 1)];

	if (pm->psn != q)
		return false;
	*send_ns = pm->send_ns;
	*rt = pm->rsp_rt;
	return true;
}

static int mrxe_meta_rsp_rerequest(void *ctx, u32 q, bool one, u32 *last)
{
	return mrxe_req_meta_rerequest(ctx, q, one, last);
}

static const struct mrxe_rsprec_ops mrxe_meta_rsprec_ops = {
	.missing	= mrxe_meta_rsp_missing,
	.sent		= mrxe_meta_rsp_sent,
	.rerequest	= mrxe_meta_rsp_rerequest,
};

static void mrxe_meta_rsp_env(struct mrxe_qp *qp, struct mrxe_rsprec_env *e)
{
	struct mrxe_meta_qp *mq = qp->pipe.meta;

	e->ops = &mrxe_meta_rsprec_ops;
	e->ctx = qp;
	e->now_ns = ktime_get_ns();
	e->srtt_ns = mrxe_rtt_srtt(&mq->snd.sb.rtt);
	e->rttvar_ns = mq->snd.sb.rtt.rttvar_ns;
	e->rto_ns = mrxe_rtt_rto(&mq->snd.sb.rtt);
	e->delack_ns = mq->cfg.tlp_delack_ns;
	/*
	 * RFC 8985's window, not what reo_learn added: a READ response's
	 * lateness behind min_RTT is mostly its wait in the responder's
	 * queue and its chunk's stream, which reo_seen took for reordering
	 * and covered up to the RTO.  Every hole then waited about an RTO
	 * (TCG): ib_read_bw kept 0.48 of lossless at 1% loss, 0.68 with
	 * this (bench/results/20261205-081243, retransmitted / lost 0.98).
	 */
	e->reo_wnd_ns = mrxe_sack_reo_wnd_rack(&mq->snd.sb);
	e->comp_psn = qp->comp.psn;
	e->nxt = mq->snd.sb.nxt;
}

/* Evidence may have arrived: a gap round if it is earlier (mrxe_rsprec.h). */
static void mrxe_meta_rsp_gap(struct mrxe_qp *qp)
{
	struct mrxe_rsprec_env e;

	mrxe_meta_rsp_env(qp, &e);
	mrxe_rsprec_gap(&qp->pipe.meta->rsprec, &e);
}

/*
 * Move comp.psn (the oldest PSN not done) up to the scoreboard's una,
 * stopping at a READ/atomic PSN whose response is missing, and complete
 * every WQE it passed, in verbs order (a message completes when the
 * cumulative point passes its last PSN).  Then (re)start the deadline for
 * missing responses.
 */
static void mrxe_meta_advance(struct mrxe_qp *qp)
{
	struct mrxe_meta_qp *mq = qp->pipe.meta;
	struct mrxe_req_state *req = &qp->req;
	u32 una = mq->snd.sb.una;
	struct mrxe_rsprec_env e;
	struct mrxe_swqe *w;

	while (mrxe_psn_before(qp->comp.psn, una)) {
		if (mrxe_meta_rsp_missing(qp, qp->comp.psn))
			break;
		qp->comp.psn = mrxe_psn_add(qp->comp.psn, 1);
	}
	while (req->head != req->cur) {
		w = mrxe_swqe_at(qp, req->head);
		if (w->state != MRXE_SWQE_DONE) {
			if (w->state != MRXE_SWQE_PENDING || !w->psn_valid ||
			    !mrxe_psn_after(qp->comp.psn, w->last_psn))
				break;
			/* SACKed is held, not executed: wait for the ACK */
			if (!(w->mask & MRXE_META_RSP_MASK) &&
			    !mrxe_psn_after(mq->exec_psn, w->last_psn))
				break;
			w->state = MRXE_SWQE_DONE;
		}
		mrxe_comp_post_send(qp, w);
	}
	mrxe_meta_rsp_env(qp, &e);
	if (mrxe_rsprec_advance(&mq->rsprec, &e, una) && una == mq->snd.sb.nxt)
		mrxe_rspwnd_idle(&mq->rspwnd);
}

/* The response deadline passed: ask for the missing responses again. */
static void mrxe_meta_rsp_timeout(struct mrxe_qp *qp)
{
	struct mrxe_meta_qp *mq = qp->pipe.meta;
	struct mrxe_rsprec *r = &mq->rsprec;
	struct mrxe_req_state *req = &qp->req;
	enum mrxe_rsprec_action act;
	struct mrxe_rsprec_env e;
	struct mrxe_swqe *w;

	mrxe_meta_rsp_env(qp, &e);
	if (!mrxe_rsprec_due(r, e.now_ns))
		return;
	mrxe_dbg_dev(qp_dev(qp), "qp %u: rsp deadline comp %#x una %#x nxt %#x backoff %u timeouts %u fast %d probe %d got %d lost %d\n",
		     qp->ibqp.qp_num, qp->comp.psn, mq->snd.sb.una, mq->snd.sb.nxt,
		     r->backoff, r->timeouts, r->fast, r->probe,
		     !mrxe_meta_rsp_missing(qp, qp->comp.psn),
		     mrxe_rsprec_lost(r, &e, qp->comp.psn));
	act = mrxe_rsprec_on_deadline(r, &e, qp->pipe.attr.timeout ?
				      qp->pipe.attr.retry_cnt : -1);
	mrxe_dbg_dev(qp_dev(qp), "qp %u: rsp deadline action %d asked %u partial %d srtt %llu us since last response %llu us\n",
		     qp->ibqp.qp_num, act, r->asked, r->partial,
		     e.srtt_ns / 1000, (e.now_ns - r->rsp_ns) / 1000);
	switch (act) {
	case MRXE_RSPREC_RETRY_EXCEEDED:
		if (req->head != req->fetched) {
			w = mrxe_swqe_at(qp, req->head);
			mrxe_comp_fail(qp, w, IB_WC_RETRY_EXC_ERR);
		} else {
			mrxe_pipe_set_error(qp);
		}
		break;
	case MRXE_RSPREC_RUN_AT_COMP:
		mrxe_qp_counter_inc(qp, MRXE_CNT_META_RSP_GAP);
		break;
	case MRXE_RSPREC_PROBE_ONE:
		mrxe_qp_counter_inc(qp, MRXE_CNT_META_TLP);
		break;
	case MRXE_RSPREC_GAP_RUNS:
	case MRXE_RSPREC_TIMEOUT_RUNS:
		mrxe_qp_counter_inc(qp, act == MRXE_RSPREC_GAP_RUNS ?
				    MRXE_CNT_META_RSP_GAP :
				    MRXE_CNT_RETRANS_TIMEOUTS);
		/* lost responses: fewer of them in flight (mrxe_rspwnd.h) */
		if (mrxe_rspwnd_loss(&mq->rspwnd, e.now_ns, e.srtt_ns,
				     r->asked))
			mrxe_qp_counter_inc(qp, MRXE_CNT_META_RSP_WND_CUTS);
		break;
	case MRXE_RSPREC_NONE:
		break;
	}
}

static void mrxe_meta_cumulative(struct mrxe_qp *qp, u32 epsn)
{
	struct mrxe_sack_info si = {};
	struct mrxe_sack_ack_res res;

	si.epsn = epsn;
	si.trigger_psn = epsn;
	mrxe_sack_on_ack(&qp->pipe.meta->snd.sb, &si, 0, ktime_get_ns(),
			 &res);
}

/* RNR NAK (IBA 9.7.5.2.8): everything before @psn is done; resend from it. */
static void mrxe_meta_rnr(struct mrxe_qp *qp, u32 psn, u8 timer)
{
	struct mrxe_meta_qp *mq = qp->pipe.meta;
	struct mrxe_sack *sb = &mq->snd.sb;
	struct mrxe_swqe *w;

	mrxe_qp_counter_inc(qp, MRXE_CNT_RNR_NAKS_RCVD);
	/*
	 * The NAK names the first PSN the responder did not take: one we
	 * sent and that is not acknowledged yet.  One for a PSN an ACK
	 * already passed is stale (delayed behind the retry that succeeded,
	 * or on another path); rewinding to it would give a later WQE PSNs
	 * the responder already executed, and that message would be lost.
	 * During the RNR wait una == nxt: a duplicate of the NAK is ignored.
	 * "Acknowledged" is the cumulative point (exec_psn), not una: una
	 * also moves over PSNs that were only SACKed.
	 */
	if (mrxe_psn_before(psn, mq->exec_psn)) {
		mrxe_qp_counter_inc(qp, MRXE_CNT_META_STALE_NAK);
		return;
	}
	if (!mrxe_psn_before(psn, sb->nxt)) {
		if (!qp->req.rnr_wait)
			mrxe_qp_counter_inc(qp, MRXE_CNT_RX_DROP_GHOST);
		return;
	}
	/*
	 * Everything before @psn was executed, nothing from it on: what the
	 * responder SACKed beyond it is dropped (it re-initialises its
	 * window at @psn), so the scoreboard's una, which moves over SACKed
	 * PSNs, may be past @psn; completions stop at @psn (exec_psn).
	 */
	mq->exec_psn = psn;
	mrxe_meta_cumulative(qp, psn);
	mrxe_meta_advance(qp);
	if (qp->pipe.attr.rnr_retry != 7) {	/* 7 = infinite, IBA 9.7.5.2.8 */
		if (!qp->comp.rnr_left) {
			w = mrxe_swqe_at(qp, qp->req.head);
			if (qp->req.head != qp->req.fetched)
				mrxe_comp_fail(qp, w, IB_WC_RNR_RETRY_EXC_ERR);
			else
				mrxe_pipe_set_error(qp);
			return;
		}
		qp->comp.rnr_left--;
	}
	/* the responder dropped everything from @psn on: so do we */
	mrxe_req_rewind(qp, psn);
	qp->req.psn = psn;
	qp->req.next_new_psn = psn;
	mrxe_meta_snd_init(qp, psn);
	/* comp.psn followed una over the PSNs now to be resent */
	if (mrxe_psn_after(qp->comp.psn, psn))
		qp->comp.psn = psn;
	qp->req.rnr_wait = true;
	atomic_set(&qp->req.rnr_fired, 0);
	if (qp->pipe.dying)
		return;
	hrtimer_start(&qp->req.rnr_timer,
		      ns_to_ktime((u64)mrxe_rnr_timer_us(timer) * NSEC_PER_USEC),
		      HRTIMER_MODE_REL);
}

static void mrxe_comp_meta_ack(struct mrxe_qp *qp, struct sk_buff *skb)
{
	struct mrxe_meta_qp *mq = qp->pipe.meta;
	struct mrxe_rx_meta *rm = mrxe_pkt_meta(skb);
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	u32 off = MRXE_BTH_LEN + MRXE_AETH_LEN;
	struct mrxe_sack_ack_res res;
	struct mrxe_sack_info si;
	struct mrxe_swqe *w;
	struct mrxe_aeth aeth;
	u64 now, echo = 0;
	u32 status;

	mrxe_aeth_parse(skb->data + MRXE_BTH_LEN, &aeth);
	mq->ever_acked = true;
	switch (aeth.syndrome & MRXE_AETH_TYPE_MASK) {
	case MRXE_AETH_ACK:
		if (mrxe_sacketh_parse(skb->data + off, pi->hdr_len - off,
				       mrxe_psn_add(pi->psn, 1), &si) < 0) {
			mrxe_meta_mismatch(qp, "malformed SACKETH", pi->psn);
			return;
		}
		now = ktime_get_ns();
		if (rm->flags & MRXE_MRH_F_TSECR)
			echo = mrxe_mrh_ts_ns(rm->tsecr, now);
		if (mrxe_sack_on_ack(&mq->snd.sb, &si, echo, now, &res)) {
			/* beyond what we sent: a ghost, ignored */
			mrxe_qp_counter_inc(qp, MRXE_CNT_RX_DROP_GHOST);
			return;
		}
		if (mrxe_psn_after(si.epsn & MRXE_PSN_MASK, mq->exec_psn))
			mq->exec_psn = si.epsn & MRXE_PSN_MASK;
		/* ECN echo: the DCTCP-like reaction (mrxe_cc.c) */
		mrxe_cc_meta_ack(qp, res.bytes, si.ce,
				 mrxe_rtt_srtt(&mq->snd.sb.rtt));
		if (res.una_moved) {
			mq->retry_left = qp->pipe.attr.retry_cnt;
			qp->comp.rnr_left = qp->pipe.attr.rnr_retry;
		}
		mrxe_meta_advance(qp);
		return;
	case MRXE_AETH_RNR_NAK:
		mrxe_meta_rnr(qp, pi->psn, aeth.syndrome & MRXE_AETH_VAL_MASK);
		return;
	case MRXE_AETH_NAK:
		break;
	default:
		mrxe_qp_counter_inc(qp, MRXE_CNT_RCV_DROPPED);
		return;
	}
	if ((aeth.syndrome & MRXE_AETH_VAL_MASK) == MRXE_NAK_PSN_SEQ)
		return;		/* never sent in MetaRoCE mode */
	status = mrxe_comp_nak_status(aeth.syndrome & MRXE_AETH_VAL_MASK);
	/* IBA 9.9.2: everything before the NAK'd PSN completed */
	if (mrxe_psn_after(pi->psn, mq->exec_psn) &&
	    mrxe_psn_before(pi->psn, mq->snd.sb.nxt))
		mq->exec_psn = pi->psn;
	mrxe_meta_cumulative(qp, pi->psn);
	mrxe_meta_advance(qp);
	if (qp->req.head == qp->req.fetched) {
		mrxe_pipe_set_error(qp);
		return;
	}
	w = mrxe_swqe_at(qp, qp->req.head);
	mrxe_comp_fail(qp, w, status);
}

/* READ response or atomic ACK: place it wherever it belongs, any order. */
static void mrxe_comp_meta_response(struct mrxe_qp *qp, struct sk_buff *skb)
{
	struct mrxe_meta_qp *mq = qp->pipe.meta;
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	u32 mtu = qp->pipe.attr.mtu, psn = pi->psn, idx, off, want;
	u32 slot = psn & (MRXE_PKT_RING - 1);
	struct mrxe_pkt_meta *pm = &qp->req.meta[slot];
	struct mrxe_swqe *w;
	u64 orig;
	int err;

	if (mrxe_psn_before(psn, qp->comp.psn) || test_bit(slot, mq->rsp_got) ||
	    pm->psn != psn || !pm->send_ns) {
		/*
		 * A duplicate response.  Of a run asked for again, and the
		 * first copy arrived too: that re-request was needless, the
		 * gap round's reordering window too short (a stall of the
		 * response stream longer than it, TCG).  Widen it as a DSACK
		 * does, once per run (its first PSN, the one a re-request
		 * names; comp.psn passes only PSNs whose response came).
		 * Before, pure reordering (delay 20ms 1ms) cost 0-76
		 * re-requests a run of test_meta_reorder.  Once: a third
		 * copy (a network duplicate, netem "duplicate 20%") counted
		 * again, 1344 "spurious" for 1200 responses asked for.
		 */
		if (pm->psn == psn && pm->rsp_rt && pm->rsp_run_head &&
		    (test_bit(slot, mq->rsp_got) ||
		     mrxe_psn_before(psn, qp->comp.psn))) {
			pm->rsp_run_head = false;
			mrxe_sack_reo_spurious(&mq->snd.sb, ktime_get_ns());
		}
		goto drop;
	}
	if (pm->wqe_idx - qp->req.head >= qp->req.fetched - qp->req.head)
		goto drop;
	idx = pm->wqe_idx;
	w = mrxe_swqe_at(qp, idx);
	if (!w->psn_valid || !mrxe_psn_in(psn, w->first_psn, w->last_psn))
		goto drop;
	if (pi->mask & MRXE_M_READ_RESP) {
		if (!(w->mask & (MRXE_M_READ | MRXE_M_ATOMIC_WRITE)))
			goto drop;
		off = (u32)mrxe_psn_diff(psn, w->first_psn) * mtu;
		want = w->len > off ? min(mtu, w->len - off) : 0;
		if (w->mask & MRXE_M_ATOMIC_WRITE)
			want = 0;	/* zero-length READ Response Only */
		if (pi->paylen != want)
			goto drop;
		if (want) {
			err = mrxe_sgl_copy(qp->pd, swqe_sge(w), w->wr.num_sge,
					    off, mrxe_pkt_payload(skb), want,
					    MRXE_COPY_TO_MR,
					    IB_ACCESS_LOCAL_WRITE);
			if (err) {
				mrxe_comp_fail(qp, w, IB_WC_LOC_PROT_ERR);
				return;
			}
		}
	} else {
		if (!(w->mask & MRXE_M_ATOMIC) || psn != w->first_psn)
			goto drop;
		/* the original value is returned in host order (IBA 9.4.5) */
		orig = mrxe_atmack_parse(mrxe_pkt_hdr(skb, MRXE_HDR_ATMACK));
		err = mrxe_sgl_copy(qp->pd, swqe_sge(w), w->wr.num_sge, 0, &orig,
				    sizeof(orig), MRXE_COPY_TO_MR,
				    IB_ACCESS_LOCAL_WRITE);
		if (err) {
			mrxe_comp_fail(qp, w, IB_WC_LOC_PROT_ERR);
			return;
		}
	}
	set_bit(slot, mq->rsp_got);
	mq->ever_acked = true;
	/* the responder executes in PSN order: all before it is done */
	if (mrxe_psn_after(psn, mq->exec_psn))
		mq->exec_psn = psn;
	if (w->mask & (MRXE_M_READ | MRXE_M_ATOMIC))
		mrxe_rspwnd_got(&mq->rspwnd);
	mrxe_rsprec_on_response(&mq->rsprec, psn, pm->send_ns, pm->rsp_rt,
				ktime_get_ns());
	if (w->mask & MRXE_M_READ) {
		off = (u32)mrxe_psn_diff(psn, w->first_psn) /
		      MRXE_META_READ_CHUNK * MRXE_META_READ_CHUNK;
		mrxe_meta_local_sack(qp, mrxe_psn_add(w->first_psn, off),
				     mrxe_meta_chunk_last(qp, w, psn));
	} else {
		mrxe_meta_local_sack(qp, psn, psn);
	}
	mrxe_meta_advance(qp);
	mrxe_meta_rsp_gap(qp);
	return;
drop:
	mrxe_qp_counter_inc(qp, MRXE_CNT_RCV_DROPPED);
}

static void mrxe_comp_meta_packet(struct mrxe_qp *qp, struct sk_buff *skb)
{
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);

	if (!mrxe_pkt_meta(skb)->meta) {
		/* auto: a late RoCEv2 response from before the switch */
		if (mrxe_auto_late_response(qp->pipe.auto_state, pi->psn,
					    qp->pipe.meta->switch_psn)) {
			mrxe_qp_counter_inc(qp, MRXE_CNT_RCV_DROPPED);
			return;
		}
		mrxe_meta_mismatch(qp, "RoCEv2 response on a MetaRoCE QP",
				   pi->psn);
		return;
	}
	if (pi->mask & (MRXE_M_READ_RESP | MRXE_M_ATOMIC_ACK))
		mrxe_comp_meta_response(qp, skb);
	else
		mrxe_comp_meta_ack(qp, skb);
}

static void mrxe_comp_timeout(struct mrxe_qp *qp)
{
	struct mrxe_req_state *req = &qp->req;
	struct mrxe_swqe *w;

	if (req->rnr_wait || mrxe_comp_idle(qp) || req->head == req->fetched)
		return;
	w = mrxe_swqe_at(qp, req->head);
	if (!w->psn_valid || w->state == MRXE_SWQE_DONE)
		return;
	mrxe_qp_counter_inc(qp, MRXE_CNT_RETRANS_TIMEOUTS);
	mrxe_dbg_dev(qp_dev(qp), "qp %u: rto comp %#x req %#x until %#x rxq %u retry %u\n",
		     qp->ibqp.qp_num, qp->comp.psn, qp->req.psn,
		     qp->req.next_new_psn, skb_queue_len(&qp->comp.rxq),
		     qp->comp.retry_left);
	qp->comp.gap = true;
	if (qp->comp.rto_backoff < MRXE_RTO_MAX_BACKOFF)
		qp->comp.rto_backoff++;
	mrxe_comp_retry(qp, w);
}

bool mrxe_comp_run(struct mrxe_qp *qp, int *budget)
{
	struct mrxe_req_state *req = &qp->req;
	bool progress = false;
	struct sk_buff *skb;
	struct mrxe_swqe *w;

	if (!req->wqes)
		return false;
	if (qp->pipe.state == IB_QPS_RTS || qp->pipe.state == IB_QPS_SQD ||
	    qp->pipe.state == IB_QPS_SQE) {
		while (*budget > 0 && !qp->pipe.want_error &&
		       (skb = skb_dequeue(&qp->comp.rxq))) {
			/* auto: the first response decides (wire-format.rst) */
			qp->pipe.auto_state =
				mrxe_auto_on_response(qp->pipe.auto_state,
						      mrxe_pkt_meta(skb)->meta,
						      mrxe_pkt_meta(skb)->cap);
			if (qp->pipe.meta_tx)
				mrxe_comp_meta_packet(qp, skb);
			else if (mrxe_pkt_meta(skb)->meta)
				mrxe_meta_mismatch(qp, "MetaRoCE response on a standard QP",
						   mrxe_pkt(skb)->psn);
			else
				mrxe_comp_packet(qp, skb);
			kfree_skb(skb);
			(*budget)--;
			progress = true;
		}
		if (atomic_xchg(&qp->comp.timer_fired, 0) && !qp->pipe.want_error &&
		    !qp->pipe.meta_tx)
			mrxe_comp_timeout(qp);
		if (qp->pipe.meta_tx && !qp->pipe.want_error &&
		    atomic_xchg(&qp->pipe.meta->timer_fired, 0)) {
			progress = true;
			if (mrxe_meta_rto_grace(qp))
				mrxe_meta_rsp_timeout(qp);
			else if (!mrxe_req_meta_timer(qp))
				mrxe_meta_rsp_timeout(qp);
		}
	} else {
		skb_queue_purge(&qp->comp.rxq);
	}

	/* in-order completion of everything the requester finished */
	while (req->head != req->cur) {
		w = mrxe_swqe_at(qp, req->head);
		if (w->state != MRXE_SWQE_DONE)
			break;
		mrxe_comp_post_send(qp, w);
		progress = true;
	}
	return progress;
}
