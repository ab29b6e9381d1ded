// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Requester (IBA 9.7.4 / 9.8): turns send WQEs into request packets,
 * assigns PSNs, honours fences and max_rd_atomic, executes local operations
 * (local invalidate, fast-reg, MW bind) in order, and rewinds for go-back-N
 * recovery.  Runs in the per-QP work item with pipe.mutex held.
 */
#include <linux/ktime.h>

#include "mrxe_dp.h"

/* What a WR opcode does on the wire; 0 = local operation. */
static u32 mrxe_wr_mask(struct mrxe_qp *qp, u32 opcode, bool *ok)
{
	bool rc = mrxe_qp_is_rc(qp), ud = mrxe_qp_is_ud(qp);

	*ok = true;
	switch (opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
		return MRXE_M_SEND;
	case IB_UVERBS_WR_SEND_WITH_INV:
		*ok = rc;
		return MRXE_M_SEND;
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		*ok = !ud;
		return MRXE_M_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		*ok = rc;
		return MRXE_M_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		*ok = rc;
		return MRXE_M_ATOMIC;
	case IB_UVERBS_WR_LOCAL_INV:
	case IB_UVERBS_WR_BIND_MW:
	case MRXE_WR_REG_MR:
		*ok = !ud;
		return 0;
	default:
		*ok = false;
		return 0;
	}
}

/* Validate a freshly copied WQE (the ring is user memory: trust nothing). */
static void mrxe_req_validate(struct mrxe_qp *qp, struct mrxe_swqe *w,
			      u32 esize)
{
	struct mrxe_send_wqe *wr = &w->wr;
	u64 len = 0;
	bool ok;
	u32 i;

	w->state = MRXE_SWQE_POSTED;
	w->status = IB_WC_SUCCESS;
	w->psn_valid = false;
	w->rd_counted = false;
	w->offset = 0;
	w->len = 0;
	w->mask = mrxe_wr_mask(qp, wr->opcode, &ok);
	if (!ok)
		goto bad_op;

	if ((wr->send_flags & MRXE_SEND_INLINE) &&
	    (w->mask & (MRXE_M_SEND | MRXE_M_WRITE))) {
		if (wr->inline_len > qp->max_inline ||
		    MRXE_SEND_WQE_HDR_SIZE + wr->inline_len > esize)
			goto bad_op;
		len = wr->inline_len;
	} else if (w->mask) {
		if (wr->num_sge > qp->sq_max_sge ||
		    MRXE_SEND_WQE_HDR_SIZE +
		    (u64)wr->num_sge * sizeof(struct mrxe_sge) > esize)
			goto bad_op;
		for (i = 0; i < wr->num_sge; i++)
			len += swqe_sge(w)[i].length;
		if (len > MRXE_MAX_MSG_SZ) {
			w->status = IB_WC_LOC_LEN_ERR;
			goto bad;
		}
		/*
		 * IBA 9.7.1: PSNs are compared modulo 2^24, so fewer than 2^23
		 * may be outstanding.  One message may take at most
		 * MRXE_MAX_MSG_PKTS of them (a 2 GiB message at MTU 256 would
		 * take 2^23 alone and turn every comparison around).
		 */
		if (mrxe_qp_is_rc(qp) && (w->mask & (MRXE_M_SEND |
		    MRXE_M_WRITE | MRXE_M_READ)) &&
		    DIV_ROUND_UP_ULL(len, qp->pipe.attr.mtu) > MRXE_MAX_MSG_PKTS) {
			mrxe_dbg_dev(qp_dev(qp), "qp %u: %llu-byte message over %u packets at MTU %u\n",
				     qp->ibqp.qp_num, len, MRXE_MAX_MSG_PKTS,
				     qp->pipe.attr.mtu);
			w->status = IB_WC_LOC_LEN_ERR;
			goto bad;
		}
	}
	if (w->mask & MRXE_M_ATOMIC) {
		/* the original value lands in the local SGE (8 bytes) */
		if (len < 8) {
			w->status = IB_WC_LOC_LEN_ERR;
			goto bad;
		}
		len = 8;
	}
	w->len = (u32)len;
	if (mrxe_qp_is_ud(qp) && w->len > qp->pipe.attr.mtu) {
		/*
		 * IBA C10-93.1.1: a UD message longer than the MTU emits no
		 * packet and generates no error: it completes successfully.
		 */
		mrxe_err_dev(qp_dev(qp), "qp#%u: UD message of %u bytes over MTU %u not sent\n",
			     qp->ibqp.qp_num, w->len, qp->pipe.attr.mtu);
		w->status = IB_WC_SUCCESS;
		goto bad;
	}
	return;

bad_op:
	w->status = IB_WC_LOC_QP_OP_ERR;
bad:
	w->state = MRXE_SWQE_DONE;
}

/* Copy new WQEs out of the SQ ring into the private window. */
static void mrxe_req_fetch(struct mrxe_qp *qp)
{
	struct mrxe_req_state *req = &qp->req;
	struct mrxe_queue *q = qp->sq;
	u32 avail, esize;
	struct mrxe_swqe *w;

	if (!q || !req->wqes)
		return;
	esize = mrxe_queue_elem_size(q);
	avail = mrxe_ring_avail(q);
	while (req->fetched - req->head < avail &&
	       req->fetched - req->head < req->nslots) {
		w = mrxe_swqe_at(qp, req->fetched);
		/* header + sges/inline: the copy spans past wr on purpose */
		memcpy((u8 *)w + offsetof(struct mrxe_swqe, wr),
		       mrxe_ring_slot_ptr(q, req->fetched), esize);
		mrxe_req_validate(qp, w, esize);
		req->fetched++;
	}
}

void mrxe_req_reset(struct mrxe_qp *qp)
{
	struct mrxe_req_state *req = &qp->req;
	u32 cons = qp->sq ? qp->sq->cons : 0;

	req->head = cons;
	req->cur = cons;
	req->fetched = cons;
	req->rd_atomic = 0;
	req->pkts_since_ack = 0;
	req->rnr_wait = false;
	qp->pipe.want_error = false;
	atomic_set(&req->rnr_fired, 0);
	hrtimer_try_to_cancel(&req->rnr_timer);
	hrtimer_try_to_cancel(&qp->comp.rto_timer);
	atomic_set(&qp->comp.timer_fired, 0);
	qp->comp.gap = false;
	if (req->meta)
		memset(req->meta, 0, MRXE_PKT_RING * sizeof(*req->meta));
}

/*
 * Go-back-N (IBA 9.7.5.1.1, 9.9.2.1): resend everything from @psn.  WQEs keep
 * the PSNs they were first given; a partially acknowledged message resumes
 * at the packet holding @psn (a READ is re-requested from that offset).
 */
void mrxe_req_rewind(struct mrxe_qp *qp, u32 psn)
{
	struct mrxe_req_state *req = &qp->req;
	u32 mtu = qp->pipe.attr.mtu;
	bool found = false;
	u32 idx, new_psn = req->psn, new_cur = req->cur;
	struct mrxe_swqe *w;

	for (idx = req->head; idx != req->fetched; idx++) {
		w = mrxe_swqe_at(qp, idx);
		if (!w->psn_valid)
			break;
		if (w->state == MRXE_SWQE_DONE)
			continue;
		if (!found) {
			if (mrxe_psn_after(psn, w->last_psn))
				continue;
			found = true;
			new_cur = idx;
			if (mrxe_psn_before(psn, w->first_psn) ||
			    (w->mask & MRXE_M_ATOMIC))
				w->offset = 0;
			else
				w->offset = (u32)mrxe_psn_diff(psn, w->first_psn) * mtu;
			if (w->offset > w->len)
				w->offset = 0;
			new_psn = mrxe_psn_add(w->first_psn, w->offset / mtu);
		} else {
			w->offset = 0;
		}
		w->state = MRXE_SWQE_POSTED;
		if (w->rd_counted) {
			w->rd_counted = false;
			req->rd_atomic--;
		}
	}
	if (found) {
		req->cur = new_cur;
		req->psn = new_psn;
	}
	req->pkts_since_ack = 0;
}

/*
 * The responder holds every PSN before @psn (cumulative ACK, NAK or a READ
 * response).  After a go-back-N rewind the requester may be behind that
 * point (the "lost" packets were only late): skip what was acknowledged, so
 * a WQE whose retransmission would only draw stale ACKs completes now.
 */
void mrxe_req_acked(struct mrxe_qp *qp, u32 psn)
{
	struct mrxe_req_state *req = &qp->req;
	u32 mtu = qp->pipe.attr.mtu, off;
	struct mrxe_swqe *w;

	if (!mrxe_psn_before(req->psn, psn))
		return;
	while (req->cur != req->fetched) {
		w = mrxe_swqe_at(qp, req->cur);
		if (!w->psn_valid || w->state == MRXE_SWQE_DONE)
			break;
		if (w->mask & (MRXE_M_READ | MRXE_M_ATOMIC)) {
			/* its data still has to come back */
			req->psn = mrxe_psn_add(w->first_psn, w->offset / mtu);
			return;
		}
		if (mrxe_psn_before(w->last_psn, psn)) {
			w->offset = w->len;
			w->state = MRXE_SWQE_PENDING;
			req->cur++;
			continue;
		}
		off = (u32)mrxe_psn_diff(psn, w->first_psn) * mtu;
		if (mrxe_psn_after(psn, w->first_psn) && off > w->offset &&
		    off < w->len)
			w->offset = off;
		req->psn = mrxe_psn_add(w->first_psn, w->offset / mtu);
		return;
	}
	req->psn = psn;
}

static void gbn_nak_seq(struct mrxe_qp *qp, u32 psn)
{
	mrxe_req_rewind(qp, psn);
}

static void gbn_timeout(struct mrxe_qp *qp)
{
	mrxe_req_rewind(qp, qp->comp.psn);
}

static void gbn_acked(struct mrxe_qp *qp, u32 psn)
{
}

const struct mrxe_loss_ops mrxe_gbn_ops = {
	.name		= "go-back-N",
	.nak_seq	= gbn_nak_seq,
	.timeout	= gbn_timeout,
	.acked		= gbn_acked,
};

static u8 mrxe_req_opcode(struct mrxe_qp *qp, struct mrxe_swqe *w,
			  bool first, bool last)
{
	u8 tr = mrxe_qp_is_rc(qp) ? MRXE_TR_RC :
		mrxe_qp_is_ud(qp) ? MRXE_TR_UD : MRXE_TR_UC;
	u32 op = w->wr.opcode;
	u8 o;

	switch (w->mask) {
	case MRXE_M_SEND:
		if (first && last)
			o = op == IB_UVERBS_WR_SEND_WITH_IMM ? MRXE_OP_SEND_ONLY_IMM :
			    op == IB_UVERBS_WR_SEND_WITH_INV ? MRXE_OP_SEND_ONLY_INV :
			    MRXE_OP_SEND_ONLY;
		else if (first)
			o = MRXE_OP_SEND_FIRST;
		else if (last)
			o = op == IB_UVERBS_WR_SEND_WITH_IMM ? MRXE_OP_SEND_LAST_IMM :
			    op == IB_UVERBS_WR_SEND_WITH_INV ? MRXE_OP_SEND_LAST_INV :
			    MRXE_OP_SEND_LAST;
		else
			o = MRXE_OP_SEND_MIDDLE;
		break;
	case MRXE_M_WRITE:
		if (first && last)
			o = op == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM ?
			    MRXE_OP_WRITE_ONLY_IMM : MRXE_OP_WRITE_ONLY;
		else if (first)
			o = MRXE_OP_WRITE_FIRST;
		else if (last)
			o = op == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM ?
			    MRXE_OP_WRITE_LAST_IMM : MRXE_OP_WRITE_LAST;
		else
			o = MRXE_OP_WRITE_MIDDLE;
		break;
	case MRXE_M_READ:
		o = MRXE_OP_READ_REQ;
		break;
	default:
		o = op == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ? MRXE_OP_CMP_SWAP :
		    MRXE_OP_FETCH_ADD;
		break;
	}
	return MRXE_OPC(tr, o);
}

/*
 * Build and send the next packet of WQE @w.  Returns 0, -EAGAIN (no
 * memory, try again later) or -EIO (the WQE failed; status is set).
 */
static int mrxe_req_send_pkt(struct mrxe_qp *qp, struct mrxe_swqe *w,
			     u32 idx)
{
	struct mrxe_req_state *req = &qp->req;
	struct mrxe_dev *dev = qp_dev(qp);
	u32 mtu = qp->pipe.attr.mtu, paylen = 0, len, hlen, psn, npsn = 1;
	struct mrxe_av ud_av, *av = qp->pipe.av;
	struct mrxe_bth bth = {};
	bool first, last, rc = mrxe_qp_is_rc(qp);
	struct mrxe_pkt_meta *m;
	struct sk_buff *skb;
	u16 sport;
	u8 *p, opcode, pad;
	int err;

	if (!w->psn_valid) {
		/*
		 * A new message takes the first PSN never sent (IBA 9.7.1).
		 * After a go-back-N rewind, responses still in flight may
		 * complete the rewound messages before they are resent, and
		 * req.psn is then left at a PSN the responder has executed:
		 * it would take a new request for a duplicate and replay the
		 * old one's READ data or ACK (IBA 9.7.5.2.2).
		 */
		if (rc && mrxe_psn_before(req->psn, req->next_new_psn)) {
			mrxe_dbg_dev(dev, "qp %u: new wqe %u: psn %#x -> %#x (comp %#x)\n",
				     qp->ibqp.qp_num, idx, req->psn,
				     req->next_new_psn, qp->comp.psn);
			req->psn = req->next_new_psn;
		}
		w->first_psn = req->psn;
		if ((w->mask & (MRXE_M_SEND | MRXE_M_WRITE | MRXE_M_READ)) &&
		    w->len > mtu)
			npsn = DIV_ROUND_UP(w->len, mtu);
		w->last_psn = mrxe_psn_add(w->first_psn, npsn - 1);
		w->psn_valid = true;
	}
	psn = mrxe_psn_add(w->first_psn, w->offset / mtu);

	if (mrxe_qp_is_ud(qp)) {
		struct mrxe_ah *ah = mrxe_ah_get(dev, w->wr.wr.ud.ah_num);

		/*
		 * The AH number comes from the (user-writable) SQ ring: it
		 * must name a live AH of this QP's PD (IBA 10.2.1.2, 11.4.1.1),
		 * or one process could send through another one's AH.
		 */
		if (!ah || to_mpd(ah->ibah.pd) != qp->pd) {
			if (ah)
				mrxe_ah_put(ah);
			mrxe_dbg_dev(dev, "qp %u: UD WQE with AH %u of another PD or none\n",
				     qp->ibqp.qp_num, w->wr.wr.ud.ah_num);
			w->status = IB_WC_LOC_QP_OP_ERR;
			return -EIO;
		}
		ud_av = ah->av;
		mrxe_ah_put(ah);
		av = &ud_av;
	}

	if (w->mask & (MRXE_M_SEND | MRXE_M_WRITE))
		paylen = min(mtu, w->len - w->offset);
	first = w->offset == 0;
	last = (w->mask & (MRXE_M_READ | MRXE_M_ATOMIC)) ||
	       w->offset + paylen >= w->len;
	opcode = mrxe_req_opcode(qp, w, first, last);
	hlen = mrxe_op_hdr_len(opcode);
	pad = mrxe_pad_for(paylen);
	len = hlen + paylen + pad + MRXE_ICRC_LEN;

	skb = mrxe_pipe_alloc_pkt(qp, av, len);
	if (!skb)
		return -EAGAIN;
	p = skb->data;

	bth.opcode = opcode;
	bth.pad = pad;
	bth.pkey = MRXE_DEFAULT_PKEY;
	bth.psn = psn;
	if (mrxe_qp_is_ud(qp))
		bth.dqpn = w->wr.wr.ud.remote_qpn;
	else
		bth.dqpn = qp->pipe.attr.dest_qpn;
	if (last && (w->wr.send_flags & MRXE_SEND_SOLICITED) &&
	    (w->mask == MRXE_M_SEND ||
	     w->wr.opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM))
		bth.se = true;
	if (rc && (last || ++req->pkts_since_ack >= MRXE_ACKREQ_EVERY)) {
		bth.ackreq = true;
		req->pkts_since_ack = 0;
	}
	mrxe_bth_build(p, &bth);

	if (mrxe_op_mask(opcode) & MRXE_HDR_DETH) {
		struct mrxe_deth d;

		/* IBA 10.2.5: a WR Q_Key with the MSB set means the QP's */
		d.qkey = (w->wr.wr.ud.remote_qkey & 0x80000000) ?
			 qp->pipe.attr.qkey : w->wr.wr.ud.remote_qkey;
		d.sqpn = qp->ibqp.qp_num;
		mrxe_deth_build(p + mrxe_op_hdr_off(opcode, MRXE_HDR_DETH), &d);
	}
	if (mrxe_op_mask(opcode) & MRXE_HDR_RETH) {
		struct mrxe_reth r;

		r.va = w->wr.wr.rdma.remote_addr + w->offset;
		r.rkey = w->wr.wr.rdma.rkey;
		r.len = w->len - ((w->mask & MRXE_M_READ) ? w->offset : 0);
		mrxe_reth_build(p + mrxe_op_hdr_off(opcode, MRXE_HDR_RETH), &r);
	}
	if (mrxe_op_mask(opcode) & MRXE_HDR_ATMETH) {
		struct mrxe_atmeth a;

		a.va = w->wr.wr.atomic.remote_addr;
		a.rkey = w->wr.wr.atomic.rkey;
		a.swap_add = w->wr.opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ?
			     w->wr.wr.atomic.swap : w->wr.wr.atomic.compare_add;
		a.compare = w->wr.wr.atomic.compare_add;
		mrxe_atmeth_build(p + mrxe_op_hdr_off(opcode, MRXE_HDR_ATMETH),
				  &a);
	}
	if (mrxe_op_mask(opcode) & MRXE_HDR_IMMDT)
		mrxe_immdt_build(p + mrxe_op_hdr_off(opcode, MRXE_HDR_IMMDT),
				 w->wr.ex.imm_data);
	if (mrxe_op_mask(opcode) & MRXE_HDR_IETH)
		mrxe_ieth_build(p + mrxe_op_hdr_off(opcode, MRXE_HDR_IETH),
				w->wr.ex.invalidate_rkey);

	if (paylen) {
		if (w->wr.send_flags & MRXE_SEND_INLINE) {
			memcpy(p + hlen, swqe_inline(w) + w->offset, paylen);
		} else {
			err = mrxe_sgl_copy(qp->pd, swqe_sge(w), w->wr.num_sge,
					    w->offset, p + hlen, paylen,
					    MRXE_COPY_FROM_MR, 0);
			if (err) {
				kfree_skb(skb);
				w->status = IB_WC_LOC_PROT_ERR;
				return -EIO;
			}
		}
	}
	memset(p + hlen + paylen, 0, pad + MRXE_ICRC_LEN);

	sport = mrxe_pipe_sport(qp, psn);
	m = &req->meta[psn & (MRXE_PKT_RING - 1)];
	m->retrans = (m->psn == psn && m->send_ns) ? m->retrans + 1 : 0;
	m->psn = psn;
	m->wqe_idx = idx;
	m->offset = w->offset;
	m->len = paylen;
	m->sport = sport;
	m->opcode = opcode;
	m->send_ns = ktime_get_ns();
	if (rc && mrxe_psn_before(psn, req->next_new_psn))
		mrxe_counter_inc(dev, MRXE_CNT_RETRANS_PKTS);

	/* a lost packet is recovered by the retransmit timer / NAK */
	mrxe_pipe_xmit(qp, av, skb, sport);

	if (w->mask & MRXE_M_READ) {
		w->offset = w->len;
		req->psn = mrxe_psn_add(w->last_psn, 1);
	} else {
		w->offset += paylen;
		req->psn = mrxe_psn_add(psn, 1);
	}
	if (!mrxe_psn_before(req->psn, req->next_new_psn))
		req->next_new_psn = req->psn;
	if (last) {
		w->state = rc ? MRXE_SWQE_PENDING : MRXE_SWQE_DONE;
		if (rc && (w->mask & (MRXE_M_READ | MRXE_M_ATOMIC)) &&
		    !w->rd_counted) {
			w->rd_counted = true;
			req->rd_atomic++;
		}
	}
	if (rc && !hrtimer_active(&qp->comp.rto_timer))
		mrxe_rto_arm(qp);
	return 0;
}

static void mrxe_req_local_op(struct mrxe_qp *qp, struct mrxe_swqe *w)
{
	int err;

	switch (w->wr.opcode) {
	case IB_UVERBS_WR_LOCAL_INV:
		err = mrxe_invalidate_key(qp, w->wr.ex.invalidate_rkey);
		w->status = err ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
		break;
	case IB_UVERBS_WR_BIND_MW:
		err = mrxe_bind_mw(qp, &w->wr);
		w->status = err ? IB_WC_MW_BIND_ERR : IB_WC_SUCCESS;
		break;
	default:	/* MRXE_WR_REG_MR */
		err = mrxe_fast_reg(qp, &w->wr);
		w->status = err ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
		break;
	}
	w->state = MRXE_SWQE_DONE;
}

static void mrxe_req_sq_drained(struct mrxe_qp *qp)
{
	struct ib_event ev;

	if (qp->req.sq_drained_sent || qp->req.head != qp->req.cur)
		return;
	qp->req.sq_drained_sent = true;
	if (qp->attr.en_sqd_async_notify && qp->ibqp.event_handler) {
		ev.device = qp->ibqp.device;
		ev.element.qp = &qp->ibqp;
		ev.event = IB_EVENT_SQ_DRAINED;
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
}

bool mrxe_req_run(struct mrxe_qp *qp, int *budget)
{
	struct mrxe_req_state *req = &qp->req;
	bool progress = false, rc = mrxe_qp_is_rc(qp);
	struct mrxe_swqe *w;
	int err;

	if (!req->wqes)
		return false;
	if (qp->pipe.state != IB_QPS_RTS && qp->pipe.state != IB_QPS_SQD)
		return false;
	if (req->rnr_wait) {
		if (!atomic_xchg(&req->rnr_fired, 0))
			return false;
		req->rnr_wait = false;
		mrxe_rto_arm(qp);
	}
	mrxe_req_fetch(qp);

	while (*budget > 0 && req->cur != req->fetched) {
		w = mrxe_swqe_at(qp, req->cur);
		if (w->state == MRXE_SWQE_DONE) {
			/* failed validation (or already executed) */
			req->cur++;
			if (w->status != IB_WC_SUCCESS &&
			    !(mrxe_qp_is_ud(qp) &&
			      w->status == IB_WC_LOC_LEN_ERR)) {
				mrxe_pipe_set_error(qp);
				return true;
			}
			progress = true;
			continue;
		}
		if (w->state != MRXE_SWQE_POSTED) {
			req->cur++;
			continue;
		}
		/* SQD: finish the message in progress, start no new one */
		if (qp->pipe.state == IB_QPS_SQD && !w->psn_valid) {
			mrxe_req_sq_drained(qp);
			break;
		}
		/* IBA 10.8.3.3: fence waits for prior READ/atomic */
		if ((w->wr.send_flags & MRXE_SEND_FENCE) && !w->psn_valid &&
		    (req->rd_atomic || (!w->mask && req->head != req->cur)))
			break;
		if (!w->mask) {
			mrxe_req_local_op(qp, w);
			progress = true;
			continue;	/* DONE: handled at the loop head */
		}
		if ((w->mask & (MRXE_M_READ | MRXE_M_ATOMIC)) &&
		    !w->rd_counted && req->rd_atomic >= qp->pipe.attr.max_rd_atomic)
			break;
		if (rc && mrxe_psn_diff(req->psn, qp->comp.psn) >=
			  MRXE_PKT_RING - 1)
			break;

		err = mrxe_req_send_pkt(qp, w, req->cur);
		if (err == -EAGAIN) {
			progress = true;	/* retry on the next run */
			break;
		}
		if (err) {
			w->state = MRXE_SWQE_DONE;
			req->cur++;
			if (!mrxe_qp_is_ud(qp)) {
				mrxe_pipe_set_error(qp);
				return true;
			}
			progress = true;	/* the completer owes its CQE */
			continue;
		}
		(*budget)--;
		progress = true;
		if (w->state != MRXE_SWQE_POSTED)
			req->cur++;
	}
	if (qp->pipe.state == IB_QPS_SQD && req->cur == req->fetched)
		mrxe_req_sq_drained(qp);
	return progress;
}

/* IBA 10.3.1 / 11.4.1.1: in ERROR every WQE completes, flushed. */
void mrxe_req_flush(struct mrxe_qp *qp)
{
	struct mrxe_req_state *req = &qp->req;
	struct mrxe_swqe *w;

	if (!req->wqes)
		return;
	mrxe_rto_stop(qp);
	hrtimer_try_to_cancel(&req->rnr_timer);
	req->rnr_wait = false;
	mrxe_req_fetch(qp);
	while (req->head != req->fetched) {
		w = mrxe_swqe_at(qp, req->head);
		/* WQEs the requester never reached are flushed */
		if ((s32)(req->cur - req->head) <= 0 ||
		    w->state != MRXE_SWQE_DONE)
			w->status = IB_WC_WR_FLUSH_ERR;
		w->state = MRXE_SWQE_DONE;
		mrxe_comp_post_send(qp, w);
		/* the ring may have more (posted while in ERROR) */
		if (req->head == req->fetched)
			mrxe_req_fetch(qp);
	}
	req->cur = req->head;
	req->rd_atomic = 0;
}
