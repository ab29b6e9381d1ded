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
	/*
	 * IBA 1.5 MPE, RC only: FLUSH goes out like a READ that asks for
	 * nothing (one PSN, a zero-length READ response, a read/atomic
	 * credit); ATOMIC WRITE like a one-packet WRITE of its 8 inline
	 * bytes, answered by a zero-length READ response too (or an ACK) and
	 * also taking a credit.  mrxe_req_opcode() picks their opcodes.
	 */
	case MRXE_WR_FLUSH:
		*ok = rc;
		return MRXE_M_READ;
	case MRXE_WR_ATOMIC_WRITE:
		*ok = rc;
		return MRXE_M_WRITE | MRXE_M_ATOMIC_WRITE;
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

	if (wr->opcode == MRXE_WR_ATOMIC_WRITE) {
		/* the 8 bytes travel inline (mrxe-abi.h), whatever max_inline */
		if (!(wr->send_flags & MRXE_SEND_INLINE) ||
		    wr->inline_len != 8 ||
		    MRXE_SEND_WQE_HDR_SIZE + wr->inline_len > esize)
			goto bad_op;
		len = 8;
	} else if (wr->opcode == MRXE_WR_FLUSH) {
		/*
		 * No local data; the RETH carries the range (32 bits, IBA
		 * 9.3.3.3), the FETH a placement type and selectivity level.
		 */
		if (wr->wr.flush.length > U32_MAX) {
			w->status = IB_WC_LOC_LEN_ERR;
			goto bad;
		}
		if (!wr->wr.flush.type ||
		    (wr->wr.flush.type & ~(MRXE_FETH_PLT_GLOBAL |
					   MRXE_FETH_PLT_PERSIST)) ||
		    wr->wr.flush.level > MRXE_FETH_SEL_MR)
			goto bad_op;
		len = 0;
	} else if ((wr->send_flags & MRXE_SEND_INLINE) &&
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
	req->rsn = 0;
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

	switch (w->mask & ~MRXE_M_ATOMIC_WRITE) {
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
		if (op == MRXE_WR_ATOMIC_WRITE)
			o = MRXE_OP_ATOMIC_WRITE;	/* 8 bytes: one packet */
		else if (first && last)
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
		o = op == MRXE_WR_FLUSH ? MRXE_OP_FLUSH : MRXE_OP_READ_REQ;
		break;
	default:
		o = op == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ? MRXE_OP_CMP_SWAP :
		    MRXE_OP_FETCH_ADD;
		break;
	}
	return MRXE_OPC(tr, o);
}

/* First/last of the packet at byte @off of @w (IBA 9.7.4 opcodes). */
static u32 mrxe_req_paylen(struct mrxe_qp *qp, struct mrxe_swqe *w, u32 off)
{
	if (w->mask & (MRXE_M_SEND | MRXE_M_WRITE))
		return min(qp->pipe.attr.mtu, w->len - off);
	return 0;
}

/*
 * Standard mode's unacknowledged PSN window (go-back-N resends all of it):
 * MRXE_STD_WINDOW, smaller while an `auto` upgrade drains
 * (proto/mrxe_auto.h).
 */
static s32 mrxe_req_std_window(struct mrxe_qp *qp)
{
	return mrxe_auto_std_window(qp->pipe.auto_state, MRXE_STD_WINDOW);
}

/*
 * The packet at @psn is the last one the standard window admits: it asks
 * for an ACK (IBA 9.7.5.1, AckReq), or the window would wait for the RTO
 * (the 32-PSN drain window of `auto` closed before the every-32nd AckReq:
 * 63-96 spurious go-back-N resends per lossless ib_write_bw run).
 */
static bool mrxe_req_std_window_closes(struct mrxe_qp *qp, u32 psn)
{
	return mrxe_psn_diff(psn, qp->comp.psn) + 2 >= mrxe_req_std_window(qp);
}

/*
 * Build and transmit the packet for @psn of WQE @w, whose payload starts
 * at byte @off of the message (a READ request asks for @rd_len bytes from
 * there).  Only builds and sends: first transmission and any later
 * retransmission of the same PSN (go-back-N or MetaRoCE selective repeat)
 * share it, and the caller advances its own cursor.  MetaRoCE packets get
 * BTH TVer 1, the MRH and RETH on every WRITE packet (wire-format.rst).
 * Returns 0, -EAGAIN (no memory, try again later) or -EIO (the WQE
 * failed; status is set).
 */
static int mrxe_req_xmit(struct mrxe_qp *qp, struct mrxe_swqe *w, u32 idx,
			 u32 psn, u32 off, u32 rd_len, bool retx)
{
	struct mrxe_req_state *req = &qp->req;
	struct mrxe_dev *dev = qp_dev(qp);
	struct mrxe_av ud_av, *av = qp->pipe.av;
	bool rc = mrxe_qp_is_rc(qp), meta = qp->pipe.meta_tx;
	u32 paylen, len, hlen, mask;
	struct mrxe_bth bth = {};
	struct mrxe_pkt_meta *m, old;
	struct sk_buff *skb;
	bool first, last;
	u8 *p, opcode, pad, path = 0;
	u16 sport;
	int err;

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

	paylen = mrxe_req_paylen(qp, w, off);
	first = off == 0;
	last = (w->mask & (MRXE_M_READ | MRXE_M_ATOMIC)) ||
	       off + paylen >= w->len;
	opcode = mrxe_req_opcode(qp, w, first, last);
	mask = mrxe_op_mask(opcode);
	hlen = meta ? mrxe_meta_hdr_len(opcode) : mrxe_op_hdr_len(opcode);
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
	if (rc && (last || (meta && retx) ||
		   ++req->pkts_since_ack >= MRXE_ACKREQ_EVERY ||
		   mrxe_cc_limited(&qp->cc) ||
		   (!meta && mrxe_req_std_window_closes(qp, psn)))) {
		bth.ackreq = true;
		req->pkts_since_ack = 0;
	}
	mrxe_bth_build(p, &bth);
	/* auto: offer MetaRoCE in BTH byte 8 bit 6 (wire-format.rst) */
	if (mrxe_auto_offers_cap(qp->pipe.auto_state))
		mrxe_bth_set_meta_cap(p, true);
	if (meta) {
		u8 fl = retx ? MRXE_MRH_F_RETX : 0;

		if (qp->pipe.meta->sync_pending) {
			fl |= MRXE_MRH_F_SYNC;
			qp->pipe.meta->sync_pending = false;
		}
		mrxe_meta_build_mrh(qp, p, mrxe_mrh_class_of(opcode), fl,
				    w->msn, off, 0);
		if (w->mask & (MRXE_M_SEND | MRXE_M_WRITE))
			mrxe_mrh_set_rsn(p + MRXE_BTH_LEN, w->rsn);
		path = mrxe_path_glue_pick(qp, psn, retx, p);
		/* MetaRoCE: every WRITE packet carries the message's RETH */
		if (w->mask & MRXE_M_WRITE)
			mask |= MRXE_HDR_RETH;
	}
#define REQ_HDR(h) (p + (meta ? mrxe_meta_hdr_off(opcode, h) : \
			     mrxe_op_hdr_off(opcode, h)))

	if (mask & MRXE_HDR_DETH) {
		struct mrxe_deth d;

		/* IBA 10.2.5: a WR Q_Key with the MSB set means the QP's */
		d.qkey = (w->wr.wr.ud.remote_qkey & 0x80000000) ?
			 qp->pipe.attr.qkey : w->wr.wr.ud.remote_qkey;
		d.sqpn = qp->ibqp.qp_num;
		mrxe_deth_build(REQ_HDR(MRXE_HDR_DETH), &d);
	}
	if (mask & MRXE_HDR_RETH) {
		struct mrxe_reth r;

		if (meta && (w->mask & MRXE_M_WRITE)) {
			/* placed at RETH.va + MRH.offset */
			r.va = w->wr.wr.rdma.remote_addr;
			r.len = w->len;
		} else if (w->wr.opcode == MRXE_WR_FLUSH) {
			r.va = w->wr.wr.flush.remote_addr;
			r.len = (u32)w->wr.wr.flush.length;
		} else if (w->mask & MRXE_M_READ) {
			r.va = w->wr.wr.rdma.remote_addr + off;
			r.len = rd_len;
		} else {
			r.va = w->wr.wr.rdma.remote_addr + off;
			r.len = w->len;
		}
		r.rkey = w->wr.wr.rdma.rkey;
		mrxe_reth_build(REQ_HDR(MRXE_HDR_RETH), &r);
	}
	if (mask & MRXE_HDR_FETH)
		mrxe_feth_build(REQ_HDR(MRXE_HDR_FETH), w->wr.wr.flush.type,
				w->wr.wr.flush.level);
	if (mask & MRXE_HDR_ATMETH) {
		struct mrxe_atmeth a;

		a.va = w->wr.wr.atomic.remote_addr;
		a.rkey = w->wr.wr.atomic.rkey;
		a.swap_add = w->wr.opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ?
			     w->wr.wr.atomic.swap : w->wr.wr.atomic.compare_add;
		a.compare = w->wr.wr.atomic.compare_add;
		mrxe_atmeth_build(REQ_HDR(MRXE_HDR_ATMETH), &a);
	}
	if (mask & MRXE_HDR_IMMDT)
		mrxe_immdt_build(REQ_HDR(MRXE_HDR_IMMDT), w->wr.ex.imm_data);
	if (mask & MRXE_HDR_IETH)
		mrxe_ieth_build(REQ_HDR(MRXE_HDR_IETH), w->wr.ex.invalidate_rkey);
#undef REQ_HDR

	if (paylen) {
		if (w->wr.send_flags & MRXE_SEND_INLINE) {
			memcpy(p + hlen, swqe_inline(w) + off, paylen);
		} else {
			err = mrxe_sgl_copy(qp->pd, swqe_sge(w), w->wr.num_sge,
					    off, p + hlen, paylen,
					    MRXE_COPY_FROM_MR, 0);
			if (err) {
				kfree_skb(skb);
				w->status = IB_WC_LOC_PROT_ERR;
				return -EIO;
			}
		}
	}
	memset(p + hlen + paylen, 0, pad + MRXE_ICRC_LEN);

	sport = meta ? mrxe_path_glue_sport(qp, path) : mrxe_pipe_sport(qp, psn);
	m = &req->meta[psn & (MRXE_PKT_RING - 1)];
	old = *m;
	m->retrans = (m->psn == psn && m->send_ns) ? m->retrans + 1 : 0;
	m->psn = psn;
	m->wqe_idx = idx;
	m->offset = off;
	m->len = paylen;
	m->sport = sport;
	m->path = path;
	m->opcode = opcode;
	m->rsp_rt = false;
	m->rsp_run_head = false;
	m->send_ns = ktime_get_ns();

	/*
	 * A packet dropped by a full local queue (the veth peer's backlog, a
	 * qdisc) never left: send it again later instead of losing it, as a
	 * NIC holds a packet while its send queue is full.  UC and UD have
	 * no retransmission (IBA 9.8.3) and RC would pay a whole recovery
	 * round for it.  Bounded, so a queue that never drains turns into
	 * an ordinary loss.  Every other failure (no route, a firewall) is a
	 * loss in flight: the retransmit timer / NAK / SACK recover it.
	 */
	err = mrxe_pipe_xmit(qp, av, skb, sport);
	if (unlikely(err == -ENOBUFS) && req->xmit_busy < MRXE_XMIT_BUSY_MAX) {
		req->xmit_busy++;
		*m = old;
		return -EAGAIN;
	}
	req->xmit_busy = 0;
	if (!meta && rc && mrxe_psn_before(psn, req->next_new_psn))
		mrxe_qp_counter_inc(qp, MRXE_CNT_RETRANS_PKTS);
	return 0;
}

/* Give WQE @w its PSNs when it starts (IBA 9.7.1). */
static void mrxe_req_assign_psn(struct mrxe_qp *qp, struct mrxe_swqe *w,
				u32 idx)
{
	struct mrxe_req_state *req = &qp->req;
	u32 mtu = qp->pipe.attr.mtu, npsn = 1;

	if (w->psn_valid)
		return;
	/*
	 * A new message takes the first PSN never sent (IBA 9.7.1).
	 * After a go-back-N rewind, responses still in flight may
	 * complete the rewound messages before they are resent, and
	 * req.psn is then left at a PSN the responder has executed:
	 * it would take a new request for a duplicate and replay the
	 * old one's READ data or ACK (IBA 9.7.5.2.2).
	 */
	if (mrxe_qp_is_rc(qp) && mrxe_psn_before(req->psn, req->next_new_psn)) {
		mrxe_dbg_dev(qp_dev(qp), "qp %u: new wqe %u: psn %#x -> %#x (comp %#x)\n",
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
	if (qp->pipe.meta_tx)
		w->msn = qp->pipe.meta->msn++ & MRXE_MSN_MASK;
	/* the peer takes receive WQEs in this order (IBA 9.4.2) */
	if (w->mask == MRXE_M_SEND ||
	    w->wr.opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM)
		w->rsn = req->rsn++;
	else
		w->rsn = 0;
}

/* The packet of @w was sent: advance the send cursor past it. */
static void mrxe_req_advance(struct mrxe_qp *qp, struct mrxe_swqe *w,
			     u32 psn, u32 paylen, u32 npsn)
{
	struct mrxe_req_state *req = &qp->req;
	bool rc = mrxe_qp_is_rc(qp), last;

	if ((w->mask & MRXE_M_READ) && !qp->pipe.meta_tx) {
		w->offset = w->len;
		req->psn = mrxe_psn_add(w->last_psn, 1);
	} else if (w->mask & MRXE_M_READ) {
		/* MetaRoCE: a READ goes out in chunks of npsn PSNs */
		w->offset = min_t(u32, w->len,
				  w->offset + npsn * qp->pipe.attr.mtu);
		req->psn = mrxe_psn_add(psn, npsn);
	} else {
		w->offset += paylen;
		req->psn = mrxe_psn_add(psn, 1);
	}
	if (!mrxe_psn_before(req->psn, req->next_new_psn))
		req->next_new_psn = req->psn;
	last = (w->mask & MRXE_M_ATOMIC) || w->offset >= w->len ||
	       ((w->mask & MRXE_M_READ) &&
		mrxe_psn_after(req->psn, w->last_psn));
	if (last) {
		w->state = rc ? MRXE_SWQE_PENDING : MRXE_SWQE_DONE;
		if (rc && (w->mask & (MRXE_M_READ | MRXE_M_ATOMIC |
				      MRXE_M_ATOMIC_WRITE)) &&
		    !w->rd_counted) {
			w->rd_counted = true;
			req->rd_atomic++;
		}
	}
}

/*
 * Build and send the next packet of WQE @w.  Returns 0, -EAGAIN (no
 * memory, try again later) or -EIO (the WQE failed; status is set).
 */
static int mrxe_req_send_pkt(struct mrxe_qp *qp, struct mrxe_swqe *w,
			     u32 idx)
{
	u32 mtu = qp->pipe.attr.mtu, psn;
	int err;

	mrxe_req_assign_psn(qp, w, idx);
	psn = mrxe_psn_add(w->first_psn, w->offset / mtu);
	err = mrxe_req_xmit(qp, w, idx, psn, w->offset, w->len - w->offset,
			    mrxe_psn_before(psn, qp->req.next_new_psn));
	if (err)
		return err;
	mrxe_req_advance(qp, w, psn, mrxe_req_paylen(qp, w, w->offset), 1);
	if (mrxe_qp_is_rc(qp) && !hrtimer_active(&qp->comp.rto_timer))
		mrxe_rto_arm(qp);
	return 0;
}

/* ---- MetaRoCE selective repeat (drivers/proto/mrxe_meta.h steps 2, 5) ---- */

/* PSNs of the READ chunk that starts at byte @off of @w (at least 1). */
static u32 mrxe_meta_read_npsn(struct mrxe_qp *qp, struct mrxe_swqe *w,
			       u32 off)
{
	u32 mtu = qp->pipe.attr.mtu, left = w->len - min(off, w->len);

	if (!left)
		return 1;
	return min_t(u32, DIV_ROUND_UP(left, mtu), MRXE_META_READ_CHUNK);
}

/* Last PSN of the READ chunk holding @psn. */
u32 mrxe_meta_chunk_last(struct mrxe_qp *qp, struct mrxe_swqe *w,
				u32 psn)
{
	u32 k = (u32)mrxe_psn_diff(psn, w->first_psn) / MRXE_META_READ_CHUNK;
	u32 last = mrxe_psn_add(w->first_psn, (k + 1) * MRXE_META_READ_CHUNK - 1);

	return mrxe_psn_after(last, w->last_psn) ? w->last_psn : last;
}

/* The WQE a PSN in flight belongs to, from the per-PSN meta ring. */
static struct mrxe_swqe *mrxe_meta_wqe_of(struct mrxe_qp *qp, u32 psn,
					  u32 *idx)
{
	struct mrxe_pkt_meta *pm = &qp->req.meta[psn & (MRXE_PKT_RING - 1)];
	struct mrxe_swqe *w;

	if (pm->psn != psn || !pm->send_ns ||
	    (s32)(pm->wqe_idx - qp->req.head) < 0 ||
	    (s32)(pm->wqe_idx - qp->req.fetched) >= 0)
		return NULL;
	w = mrxe_swqe_at(qp, pm->wqe_idx);
	if (!w->psn_valid || !mrxe_psn_in(psn, w->first_psn, w->last_psn))
		return NULL;
	*idx = pm->wqe_idx;
	return w;
}

/* Is @q still wanted by a resend that covers a run of PSNs? */
static bool mrxe_meta_wanted(struct mrxe_qp *qp, u32 q, bool lost_run)
{
	struct mrxe_meta_qp *mq = qp->pipe.meta;

	if (lost_run)
		return mrxe_sack_ent(&mq->snd.sb, q)->state == MRXE_SK_LOST;
	return !test_bit(q & (MRXE_PKT_RING - 1), mq->rsp_got);
}

/*
 * Resend PSN @psn from the meta ring (build once: the same function as the
 * first transmission).  A READ is asked again from @psn for the run of
 * PSNs of its chunk that are still wanted (LOST on the scoreboard with
 * @lost_run, else without a response), or for @psn alone with @one.
 * *@last: the last PSN covered.
 */
static int mrxe_meta_resend(struct mrxe_qp *qp, u32 psn, bool lost_run,
			    bool one, u32 *last)
{
	u32 mtu = qp->pipe.attr.mtu, idx, off, end, cl, q;
	struct mrxe_pkt_meta *first, *pm;
	struct mrxe_swqe *w;
	int err;

	w = mrxe_meta_wqe_of(qp, psn, &idx);
	if (!w)
		return -EINVAL;
	off = (w->mask & MRXE_M_ATOMIC) ? 0 :
	      (u32)mrxe_psn_diff(psn, w->first_psn) * mtu;
	*last = psn;
	first = &qp->req.meta[psn & (MRXE_PKT_RING - 1)];
	if (!(w->mask & MRXE_M_READ)) {
		err = mrxe_req_xmit(qp, w, idx, psn, off, 0, true);
		/* a duplicate atomic is answered on arrival (IBA 9.7.5.2.2) */
		if (!err && (w->mask & MRXE_M_ATOMIC)) {
			first->rsp_rt = !one;
			first->rsp_run_head = !one;
		}
		return err;
	}
	cl = one ? psn : mrxe_meta_chunk_last(qp, w, psn);
	for (q = psn; q != cl; q = mrxe_psn_add(q, 1)) {
		if (!mrxe_meta_wanted(qp, mrxe_psn_add(q, 1), lost_run))
			break;
	}
	*last = q;
	end = min_t(u64, w->len,
		    (u64)(mrxe_psn_diff(*last, w->first_psn) + 1) * mtu);
	err = mrxe_req_xmit(qp, w, idx, psn, off, end - min(off, end), true);
	if (err)
		return err;
	/*
	 * The whole run was asked for again now (response loss by send time),
	 * and its responses may overtake first requests the responder holds
	 * (mrxe_rsprec_lost).  A probe (@one) is asked for when no response
	 * came for 2 SRTT, the responder has nothing queued ahead of it.
	 */
	first->rsp_rt = !one;
	first->rsp_run_head = !one;
	for (q = psn; q != *last; ) {
		q = mrxe_psn_add(q, 1);
		pm = &qp->req.meta[q & (MRXE_PKT_RING - 1)];
		pm->send_ns = first->send_ns;
		pm->rsp_rt = first->rsp_rt;
		pm->rsp_run_head = false;
	}
	return 0;
}

/* Retransmit every PSN the scoreboard declared lost (before new data). */
static bool mrxe_meta_retransmit(struct mrxe_qp *qp, int *budget)
{
	struct mrxe_sack *sb = &qp->pipe.meta->snd.sb;
	u64 now = ktime_get_ns();
	bool progress = false;
	u32 psn, last, q;
	int err;
	u8 path;

	while (*budget > 0 && mrxe_sack_next_lost(sb, &psn)) {
		/* retransmissions are paced like new data (mrxe_cc.c) */
		if (mrxe_pipe_tx_full(qp) ||
		    !mrxe_cc_admit(qp, qp->pipe.attr.mtu + MRXE_CC_HDR_BYTES))
			break;
		err = mrxe_meta_resend(qp, psn, true, false, &last);
		if (err == -EAGAIN) {
			/* local queue full: it stays LOST, next run */
			(*budget)--;
			progress = true;
			break;
		}
		if (err) {
			/* no WQE for it (completed or flushed): give up on it */
			mrxe_sack_on_retransmit(sb, psn, now,
						mrxe_sack_ent(sb, psn)->path);
			continue;
		}
		mrxe_dbg_dev(qp_dev(qp), "qp %u: resend lost psn %#x..%#x una %#x nxt %#x got %d\n",
			     qp->ibqp.qp_num, psn, last, sb->una, sb->nxt,
			     test_bit(psn & (MRXE_PKT_RING - 1),
				      qp->pipe.meta->rsp_got));
		path = mrxe_path_glue_sent(qp, psn, true);
		/* one packet (a READ asks for a run): counted once */
		mrxe_sack_on_retransmit(sb, psn, now, path);
		for (q = psn; q != last; ) {
			q = mrxe_psn_add(q, 1);
			if (mrxe_sack_ent(sb, q)->state == MRXE_SK_LOST)
				mrxe_sack_on_retransmit_cont(sb, q, now, path);
		}
		(*budget)--;
		progress = true;
	}
	return progress;
}

/*
 * A response (READ data, atomic ACK) is still missing for @psn although
 * its request was delivered: ask again (the responder answers duplicate
 * READs from the RETH and replays atomics, IBA 9.7.5.2.2).  @one: only
 * @psn's response (a probe), else the run of missing ones after it.
 * *@last: the last PSN asked for.  Returns 0 or the resend's error.
 */
int mrxe_req_meta_rerequest(struct mrxe_qp *qp, u32 psn, bool one, u32 *last)
{
	int err = mrxe_meta_resend(qp, psn, false, one, last);

	if (!err)
		qp->pipe.meta->rsp_retrans++;
	else
		mrxe_dbg_dev(qp_dev(qp), "qp %u: re-request of psn %#x failed: %d\n",
			     qp->ibqp.qp_num, psn, err);
	return err;
}

/* Can a new packet of @npsn PSNs starting at req.psn go out? */
static bool mrxe_meta_room(struct mrxe_qp *qp, u32 npsn)
{
	struct mrxe_sack *sb = &qp->pipe.meta->snd.sb;
	u32 end = mrxe_psn_add(qp->req.psn, npsn);

	return mrxe_sack_outstanding(sb) + npsn <= sb->wnd &&
	       mrxe_psn_diff(end, qp->comp.psn) <= MRXE_PKT_RING;
}

/*
 * Send the next packet of @w in MetaRoCE mode (mrxe_meta.h step 2): build,
 * record on the scoreboard and in the meta ring, advance.  Returns 0,
 * -ENOSPC (window full), -EAGAIN or -EIO.
 */
static int mrxe_meta_send_pkt(struct mrxe_qp *qp, struct mrxe_swqe *w,
			      u32 idx)
{
	struct mrxe_meta_qp *mq = qp->pipe.meta;
	u32 mtu = qp->pipe.attr.mtu, psn, npsn = 1, paylen, i, q;
	bool rsp = w->mask & (MRXE_M_READ | MRXE_M_ATOMIC);
	struct mrxe_pkt_meta *pm;
	u64 now;
	int err;
	u8 path;

	if (w->mask & MRXE_M_READ)
		npsn = mrxe_meta_read_npsn(qp, w, w->offset);
	if (!w->psn_valid && mrxe_psn_before(qp->req.psn, qp->req.next_new_psn))
		qp->req.psn = qp->req.next_new_psn;
	if (!mrxe_meta_room(qp, npsn)) {
		/* the oldest hole holds una: what a loss costs in waiting */
		mrxe_qp_counter_inc(qp, MRXE_CNT_META_WND_FULL);
		return -ENOSPC;
	}
	/* READ/atomic: the responses it asks for must fit their window */
	if (rsp && !mrxe_rspwnd_may_ask(&mq->rspwnd, npsn))
		return -ENOSPC;
	/* multipath: a new packet waits for room in a path window */
	if (!rsp && !mrxe_path_glue_room(qp))
		return -ENOSPC;
	mrxe_req_assign_psn(qp, w, idx);
	psn = mrxe_psn_add(w->first_psn, w->offset / mtu);
	if (psn != mq->snd.sb.nxt) {
		/* cannot happen: PSNs are assigned in order */
		WARN_ONCE(1, "mrxe: qp %u wqe %u psn %u (first %u off %u) != nxt %u (una %u) req.psn %u next_new %u head %u cur %u\n",
			  qp->ibqp.qp_num, idx, psn, w->first_psn, w->offset,
			  mq->snd.sb.nxt, mq->snd.sb.una, qp->req.psn,
			  qp->req.next_new_psn, qp->req.head, qp->req.cur);
		w->status = IB_WC_LOC_QP_OP_ERR;
		return -EIO;
	}
	paylen = mrxe_req_paylen(qp, w, w->offset);
	err = mrxe_req_xmit(qp, w, idx, psn, w->offset,
			    min_t(u64, w->len - w->offset, (u64)npsn * mtu),
			    false);
	if (err)
		return err;
	now = ktime_get_ns();
	path = mrxe_path_glue_sent(qp, psn, false);
	if (rsp)
		mrxe_rspwnd_asked(&mq->rspwnd, npsn);
	for (i = 0; i < npsn; i++) {
		q = mrxe_psn_add(psn, i);
		mrxe_sack_on_send(&mq->snd.sb, q, now, path, i ? 0 : paylen);
		clear_bit(q & (MRXE_PKT_RING - 1), mq->rsp_got);
		if (i) {
			/* every PSN of a READ chunk maps to its bytes */
			pm = &qp->req.meta[q & (MRXE_PKT_RING - 1)];
			*pm = qp->req.meta[psn & (MRXE_PKT_RING - 1)];
			pm->psn = q;
			pm->offset = w->offset + i * mtu;
		}
	}
	mrxe_req_advance(qp, w, psn, paylen, npsn);
	return 0;
}

/*
 * The SACK timer fired (mrxe_meta.h step 5).  Returns true when the QP
 * failed (retry_cnt RTOs without progress: IB_WC_RETRY_EXC_ERR, IBA
 * 9.7.6.1.3 / C9-140).
 */
bool mrxe_req_meta_timer(struct mrxe_qp *qp)
{
	struct mrxe_meta_qp *mq = qp->pipe.meta;
	struct mrxe_sack *sb = &mq->snd.sb;
	struct mrxe_req_state *req = &qp->req;
	struct mrxe_swqe *w;
	u32 ev, probe, last;
	u64 now = ktime_get_ns();

	ev = mrxe_sack_on_timer(sb, now, &probe);
	if (ev & MRXE_SACK_EV_RTO) {
		mrxe_qp_counter_inc(qp, MRXE_CNT_RETRANS_TIMEOUTS);
		if (qp->pipe.attr.timeout && !mq->retry_left--) {
			if (!mq->ever_acked) {
				/*
				 * stock rxe drops TVer 1: nobody answers.  A
				 * peer that cannot be reached looks the same
				 * (counted here too; the log says both).
				 */
				mrxe_qp_counter_inc(qp, MRXE_CNT_MODE_MISMATCH);
				mrxe_err_dev(qp_dev(qp), "qp %u: no MetaRoCE answer from the peer after %u retries: a standard-mode peer, or no route to it\n",
					     qp->ibqp.qp_num,
					     qp->pipe.attr.retry_cnt);
			}
			if (req->head != req->fetched) {
				w = mrxe_swqe_at(qp, req->head);
				w->status = IB_WC_RETRY_EXC_ERR;
				w->state = MRXE_SWQE_DONE;
				mrxe_comp_post_send(qp, w);
			}
			mrxe_pipe_set_error(qp);
			return true;
		}
	}
	if (ev & MRXE_SACK_EV_PROBE) {
		/* new data is the probe if there is any (RFC 8985 7.3) */
		w = req->cur != req->fetched ? mrxe_swqe_at(qp, req->cur) : NULL;
		if (!w || w->state != MRXE_SWQE_POSTED || !w->mask ||
		    !mrxe_meta_room(qp, 1) || !mrxe_path_glue_room(qp)) {
			if (!mrxe_meta_resend(qp, probe, true, false, &last))
				mrxe_sack_on_retransmit(sb, probe, now,
							mrxe_path_glue_sent(qp, probe,
									    true));
		}
	}
	return false;
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

/* The requester as the `auto` rules see it (proto/mrxe_auto.h). */
static const struct mrxe_auto_req *
mrxe_req_auto_view(struct mrxe_qp *qp, struct mrxe_auto_req *r, bool in_msg)
{
	r->comp_psn = qp->comp.psn;
	r->psn = qp->req.psn;
	r->next_new_psn = qp->req.next_new_psn;
	r->rnr_wait = qp->req.rnr_wait;
	r->rd_atomic = qp->req.rd_atomic;
	r->in_msg = in_msg;
	return r;
}

bool mrxe_req_run(struct mrxe_qp *qp, int *budget)
{
	struct mrxe_req_state *req = &qp->req;
	bool progress = false, rc = mrxe_qp_is_rc(qp);
	struct mrxe_auto_req av;
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
		if (!qp->pipe.meta_tx)
			mrxe_rto_arm(qp);
	}
	mrxe_req_fetch(qp);
	/* auto: upgrade at a message boundary with nothing outstanding */
	if (qp->pipe.auto_state == MRXE_AUTO_UPGRADE &&
	    mrxe_auto_may_switch(MRXE_AUTO_UPGRADE,
				 mrxe_req_auto_view(qp, &av,
						    req->cur != req->fetched &&
						    mrxe_swqe_at(qp, req->cur)->psn_valid)))
		mrxe_meta_upgrade_tx(qp);
	/* MetaRoCE: retransmissions come first (mrxe_meta.h step 2) */
	if (qp->pipe.meta_tx)
		progress |= mrxe_meta_retransmit(qp, budget);

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
		/*
		 * auto, the peer echoed CAP: start no new message until every
		 * standard PSN is acknowledged, so that the switch comes one
		 * round trip later, not when the application next pauses (a
		 * bulk sender always has packets outstanding and stayed on
		 * go-back-N for good; wire-format.rst "auto", step 3).
		 */
		if (qp->pipe.auto_state == MRXE_AUTO_UPGRADE &&
		    !mrxe_auto_may_start_msg(MRXE_AUTO_UPGRADE,
					     mrxe_req_auto_view(qp, &av,
								w->psn_valid)))
			break;
		if ((w->mask & (MRXE_M_READ | MRXE_M_ATOMIC |
				MRXE_M_ATOMIC_WRITE)) &&
		    !w->rd_counted && req->rd_atomic >= qp->pipe.attr.max_rd_atomic)
			break;
		/* the QP's packets queued in the host (mrxe_task.c) */
		if (mrxe_pipe_tx_full(qp))
			break;
		/* congestion control: the pacer holds the QP's rate */
		if (!mrxe_cc_admit(qp, MRXE_CC_HDR_BYTES +
				   ((w->mask & MRXE_M_READ) ? 0 :
				    min(qp->pipe.attr.mtu, w->len - w->offset))))
			break;
		if (qp->pipe.meta_tx) {
			err = mrxe_meta_send_pkt(qp, w, req->cur);
			if (err == -ENOSPC)
				break;
		} else {
			if (rc && mrxe_psn_diff(req->psn, qp->comp.psn) >=
			    mrxe_req_std_window(qp) - 1)
				break;
			err = mrxe_req_send_pkt(qp, w, req->cur);
		}
		if (err == -EAGAIN) {
			(*budget)--;
			progress = true;	/* retry on the next run */
			break;
		}
		if (err) {
			w->state = MRXE_SWQE_DONE;
			req->cur++;
			progress = true;	/* the completer must see it */
			if (!mrxe_qp_is_ud(qp)) {
				mrxe_pipe_set_error(qp);
				return true;
			}
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
	mrxe_meta_timer_stop(qp);
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
