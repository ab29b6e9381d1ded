// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Responder (IBA 9.7.5.2, 9.8.3, 9.9.3): executes incoming SEND / RDMA WRITE /
 * RDMA READ / atomic requests in PSN order, places data through the RQ/SRQ or
 * an R_Key, generates (coalesced) ACKs, NAKs and READ/atomic responses, and
 * replays READ/atomic responses for duplicate requests from a small
 * resource ring.  Runs in the per-QP work item with pipe.mutex held.
 */
#include "mrxe_dp.h"

enum mrxe_resp_rc {
	RESP_OK,
	RESP_RNR,	/* no receive WQE: RNR NAK sent */
	RESP_DROP,	/* silently discarded */
	RESP_ERR,	/* NAK sent / WQE failed; QP goes to ERROR (RC) */
};

static inline struct mrxe_recv_wqe *resp_wqe(struct mrxe_qp *qp)
{
	return (struct mrxe_recv_wqe *)qp->resp.wqe;
}

static inline struct mrxe_sge *resp_sge(struct mrxe_qp *qp)
{
	return (struct mrxe_sge *)(resp_wqe(qp) + 1);
}

/*
 * A receive WQE copied out of a (user-writable) ring: its SGE count must
 * fit the queue's max_sge and the slot, or it is treated as empty.
 */
static bool resp_wqe_sane(const struct mrxe_recv_wqe *wqe, u32 max_sge,
			  u32 wqe_size)
{
	return wqe->num_sge <= max_sge &&
	       MRXE_RECV_WQE_HDR_SIZE +
	       (u64)wqe->num_sge * sizeof(struct mrxe_sge) <= wqe_size;
}

/* Bytes a (sane) receive WQE can hold: the sum of its SGE lengths. */
static u64 resp_wqe_bytes(const struct mrxe_recv_wqe *wqe)
{
	const struct mrxe_sge *sge = (const struct mrxe_sge *)(wqe + 1);
	u64 len = 0;
	u32 i;

	for (i = 0; i < wqe->num_sge; i++)
		len += sge[i].length;
	return len;
}

/* Give back a reference the responder keeps (wr_mr, rd_mr), if any. */
static void resp_drop_mr(struct mrxe_mr **mrp)
{
	if (*mrp) {
		mrxe_mr_put(*mrp);
		*mrp = NULL;
	}
}

static void resp_put_mrs(struct mrxe_qp *qp)
{
	resp_drop_mr(&qp->resp.wr_mr);
	resp_drop_mr(&qp->resp.rd_mr);
	qp->resp.rd_active = false;
}

/*
 * The MR is being deregistered (its key is already gone): give back the
 * reference this QP keeps between the packets of a WRITE or READ, so the
 * deregistration does not wait for a message that may never be finished.
 * The rest of that message then finds no MR: a remote access error NAK
 * (resp_write(), resp_read_step()), as for any R_Key no longer valid.
 * Process context (takes pipe.mutex).
 */
void mrxe_resp_release_mr(struct mrxe_qp *qp, struct mrxe_mr *mr)
{
	mutex_lock(&qp->pipe.mutex);
	if (qp->resp.wr_mr == mr)
		resp_drop_mr(&qp->resp.wr_mr);
	if (qp->resp.rd_mr == mr)
		resp_drop_mr(&qp->resp.rd_mr);
	mutex_unlock(&qp->pipe.mutex);
}

void mrxe_resp_reset(struct mrxe_qp *qp)
{
	struct mrxe_resp_state *resp = &qp->resp;

	resp_put_mrs(qp);
	resp->has_wqe = false;
	resp->offset = 0;
	resp->last_opcode = 0xff;
	resp->nak_sent = false;
	resp->drop_msg = false;
	resp->ack_pending = false;
	resp->msn = 0;
	resp->rsn = 0;
	/*
	 * SRQ WQEs taken ahead are dropped like the WQE being filled: a QP
	 * reset discards its receive work (an ERROR flush, the usual way
	 * out, completes them)
	 */
	resp->resv_head = 0;
	resp->resv_n = 0;
	resp->res_next = 0;
	if (resp->res)
		memset(resp->res, 0, resp->nres * sizeof(*resp->res));
}

/* ---- packets we send ---- */

/* Header length and header offset of a response in the QP's mode. */
static u32 resp_hlen(struct mrxe_qp *qp, u8 opcode)
{
	return qp->pipe.meta_rx ? mrxe_meta_hdr_len(opcode) :
				  mrxe_op_hdr_len(opcode);
}

static u32 resp_hoff(struct mrxe_qp *qp, u8 opcode, u32 hdr)
{
	return qp->pipe.meta_rx ? mrxe_meta_hdr_off(opcode, hdr) :
				  mrxe_op_hdr_off(opcode, hdr);
}

/*
 * UDP source port of a response.  A standard QP uses its own RoCEv2 port
 * (one flow, IBA A17.4.2).  A MetaRoCE QP reflects the port of the newest
 * request (wire-format.rst "Path entropy"): the source port is only ECMP
 * entropy (A17.4.2 leaves its value to the sender), so the ACK direction
 * spreads over as many paths as the requester uses, and when the requester
 * re-rolls a dead path's port the ACKs of that path move with it.
 */
static u16 resp_sport(struct mrxe_qp *qp, u32 psn)
{
	if (qp->pipe.meta_rx && qp->pipe.meta->rcv.ack_sport)
		return qp->pipe.meta->rcv.ack_sport;
	return mrxe_pipe_sport(qp, psn);
}

/*
 * MetaRoCE ACK/NAK (wire-format.rst "ACKs and the SACK extension"): BTH
 * TVer 1 with PSN = ePSN - 1 (the IBA meaning, 9.7.5.1), MRH class ACK
 * echoing the last TSval, AETH, SACKETH with every hole of the window
 * (up to 4 blocks).  A NAK keeps its PSN and carries no blocks.
 */
int mrxe_resp_send_meta_ack(struct mrxe_qp *qp, u8 syndrome, u32 psn)
{
	struct mrxe_meta_qp *m = qp->pipe.meta;
	u8 opcode = MRXE_OPC(MRXE_TR_RC, MRXE_OP_ACK);
	u32 hlen = mrxe_meta_hdr_len(opcode), len;
	struct mrxe_sack_info si = {};
	struct mrxe_bth bth = {};
	struct mrxe_aeth aeth;
	struct sk_buff *skb;

	if ((syndrome & MRXE_AETH_TYPE_MASK) == MRXE_AETH_ACK) {
		mrxe_reorder_sack(&m->rcv.rw, &si, MRXE_SACK_MAX_BLOCKS);
		psn = mrxe_psn_add(si.epsn, MRXE_PSN_MASK);
		si.ce = mrxe_cc_take_ce(&qp->cc);	/* ECN echo */
	} else {
		si.trigger_psn = psn;
	}
	len = hlen + mrxe_sacketh_len(si.nblocks) + MRXE_ICRC_LEN;
	skb = mrxe_pipe_alloc_pkt(qp, qp->pipe.av, len);
	if (!skb)
		return -ENOMEM;
	bth.opcode = opcode;
	bth.pkey = MRXE_DEFAULT_PKEY;
	bth.dqpn = qp->pipe.attr.dest_qpn;
	bth.psn = psn;
	mrxe_bth_build(skb->data, &bth);
	mrxe_meta_build_mrh(qp, skb->data, MRXE_MRH_ACK, MRXE_MRH_F_TSECR |
			    (si.ce ? MRXE_MRH_F_ECE : 0),
			    qp->resp.msn, 0, m->rcv.last_tsval);
	aeth.syndrome = syndrome;
	aeth.msn = qp->resp.msn;
	mrxe_aeth_build(skb->data + mrxe_meta_hdr_off(opcode, MRXE_HDR_AETH),
			&aeth);
	mrxe_sacketh_build(skb->data + hlen, &si);
	memset(skb->data + len - MRXE_ICRC_LEN, 0, MRXE_ICRC_LEN);
	return mrxe_pipe_xmit(qp, qp->pipe.av, skb, resp_sport(qp, psn));
}

static int resp_send_ack_once(struct mrxe_qp *qp, u8 syndrome, u32 psn)
{
	struct mrxe_bth bth = {};
	struct mrxe_aeth aeth;
	struct sk_buff *skb;
	u32 len = MRXE_BTH_LEN + MRXE_AETH_LEN + MRXE_ICRC_LEN;

	if (qp->pipe.meta_rx)
		return mrxe_resp_send_meta_ack(qp, syndrome, psn);
	skb = mrxe_pipe_alloc_pkt(qp, qp->pipe.av, len);
	if (!skb)
		return -ENOMEM;
	bth.opcode = MRXE_OPC(MRXE_TR_RC, MRXE_OP_ACK);
	bth.pkey = MRXE_DEFAULT_PKEY;
	bth.dqpn = qp->pipe.attr.dest_qpn;
	bth.psn = psn;
	mrxe_bth_build(skb->data, &bth);
	mrxe_bth_set_meta_cap(skb->data, qp->pipe.cap_peer);
	aeth.syndrome = syndrome;
	aeth.msn = qp->resp.msn;
	mrxe_aeth_build(skb->data + MRXE_BTH_LEN, &aeth);
	memset(skb->data + MRXE_BTH_LEN + MRXE_AETH_LEN, 0, MRXE_ICRC_LEN);
	return mrxe_pipe_xmit(qp, qp->pipe.av, skb, mrxe_pipe_sport(qp, psn));
}

/*
 * An ACK refused by a full local queue (-ENOBUFS, mrxe_net_xmit()) is built
 * and sent again a few times: a lost ACK costs the requester a timeout.
 */
#define MRXE_ACK_BUSY_TRIES	4

static int resp_send_ack(struct mrxe_qp *qp, u8 syndrome, u32 psn)
{
	int err, i;

	for (i = 0; i < MRXE_ACK_BUSY_TRIES; i++) {
		err = resp_send_ack_once(qp, syndrome, psn);
		if (err != -ENOBUFS)
			break;
	}
	return err;
}

/*
 * MetaRoCE: may the ePSN be acknowledged?  Only executed requests may be
 * covered by an ACK (IBA 9.7.5.1: an accepted SEND still held may draw an
 * RNR NAK, a WRITE an access NAK, and the requester would already have
 * completed it), except held READ and atomic requests: their WQEs complete
 * only with their responses, so acknowledging their PSNs early is safe and
 * keeps the requester's RTO from firing while they wait their turn behind
 * another READ's response stream.
 */
static bool resp_meta_ack_ok(struct mrxe_qp *qp)
{
	struct mrxe_meta_qp *m = qp->pipe.meta;
	u32 epsn = mrxe_reorder_epsn(&m->rcv.rw), q = qp->resp.psn, n;
	u32 mtu = qp->pipe.attr.mtu;
	struct mrxe_reth reth;
	struct sk_buff *skb;

	while (q != epsn) {
		skb = m->stash[q & (MRXE_PKT_RING - 1)];
		if (!skb || mrxe_pkt(skb)->psn != q)
			return false;
		if (mrxe_pkt(skb)->mask & (MRXE_M_ATOMIC | MRXE_M_FLUSH)) {
			n = 1;
		} else if (mrxe_pkt(skb)->mask & MRXE_M_READ) {
			mrxe_reth_parse(mrxe_pkt_hdr(skb, MRXE_HDR_RETH), &reth);
			n = reth.len ? DIV_ROUND_UP(reth.len, mtu) : 1;
		} else {
			return false;
		}
		if (mrxe_psn_diff(epsn, q) < n)
			return false;
		q = mrxe_psn_add(q, n);
	}
	return true;
}

/*
 * ACKs of one work-item run (coalesced).  MetaRoCE: one ACK holds 4 of the
 * window's 64 SACK blocks; when a run received packets in more blocks than
 * that, more ACKs (up to 16 in all) follow at once, so the requester's RACK learns
 * of every delivery now instead of from a later rotation (which made it
 * call delivered packets lost: wire-format.rst, "ACKs and the SACK
 * extension").
 */
#define MRXE_META_ACK_BURST	(MRXE_SACK_WIN_BLOCKS / MRXE_SACK_MAX_BLOCKS)

static void resp_flush_ack(struct mrxe_qp *qp)
{
	struct mrxe_meta_qp *m = qp->pipe.meta;
	int i;

	if (qp->pipe.meta_rx) {
		if (m->ack_pending && resp_meta_ack_ok(qp)) {
			m->ack_pending = false;
			for (i = 0; i < MRXE_META_ACK_BURST; i++) {
				if (i && !mrxe_reorder_unreported(&m->rcv.rw))
					break;
				resp_send_ack(qp, MRXE_AETH_ACK |
					      MRXE_AETH_CREDIT_INVALID, 0);
			}
		}
		return;
	}
	if (qp->resp.ack_pending) {
		qp->resp.ack_pending = false;
		resp_send_ack(qp, MRXE_AETH_ACK | MRXE_AETH_CREDIT_INVALID,
			      qp->resp.ack_psn);
	}
}

static void resp_send_nak(struct mrxe_qp *qp, u8 code, u32 psn)
{
	resp_flush_ack(qp);
	resp_send_ack(qp, MRXE_AETH_NAK | code, psn);
}

/* ---- receive WQEs ---- */

static void resp_srq_event(struct mrxe_srq *srq)
{
	struct ib_event ev;

	if (!srq->ibsrq.event_handler)
		return;
	ev.device = srq->ibsrq.device;
	ev.element.srq = &srq->ibsrq;
	ev.event = IB_EVENT_SRQ_LIMIT_REACHED;
	srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/* Take the next receive WQE out of the RQ/SRQ into @dst; -ENOSPC: empty. */
static int resp_take_wqe(struct mrxe_qp *qp, void *dst)
{
	struct mrxe_srq *srq = qp->srq;
	struct mrxe_queue *q;
	spinlock_t *lock = srq ? &srq->rq_lock : &qp->rq_lock;
	bool limit_event = false;
	unsigned long flags;
	u32 n;

	spin_lock_irqsave(lock, flags);
	/* an SRQ resize swaps srq->rq under rq_lock */
	q = srq ? srq->rq : qp->rq;
	n = mrxe_ring_avail(q);
	if (!n) {
		spin_unlock_irqrestore(lock, flags);
		return -ENOSPC;
	}
	memcpy(dst, mrxe_ring_slot_ptr(q, q->cons), qp->resp.wqe_size);
	mrxe_queue_advance(q);
	/* IBA 10.2.9.3: SRQ limit event once, then disarmed */
	if (srq && srq->limit && n - 1 < srq->limit) {
		srq->limit = 0;
		limit_event = true;
	}
	spin_unlock_irqrestore(lock, flags);
	if (limit_event)
		resp_srq_event(srq);
	return 0;
}

static u8 *resp_resv_slot(struct mrxe_qp *qp, u32 i)
{
	struct mrxe_resp_state *resp = &qp->resp;

	return resp->resv + ((resp->resv_head + i) % MRXE_RESP_RESV) *
			    resp->wqe_size;
}

/* The oldest SRQ WQE taken ahead (resp.resv_n > 0) into resp.wqe. */
static void resp_resv_pop(struct mrxe_qp *qp)
{
	struct mrxe_resp_state *resp = &qp->resp;

	memcpy(resp->wqe, resp_resv_slot(qp, 0), resp->wqe_size);
	resp->resv_head = (resp->resv_head + 1) % MRXE_RESP_RESV;
	resp->resv_n--;
}

/*
 * The next receive WQE of the QP into resp.wqe: the oldest one taken early
 * from the SRQ (resp_meta_send_wqe()), else the RQ/SRQ's next; -ENOSPC
 * when there is none.
 */
static int resp_get_wqe(struct mrxe_qp *qp)
{
	struct mrxe_resp_state *resp = &qp->resp;
	u32 max_sge = qp->srq ? qp->srq->max_sge : qp->rq_max_sge;

	if ((!qp->srq && !qp->rq) || !resp->wqe)
		return -ENOSPC;
	if (resp->resv_n)
		resp_resv_pop(qp);
	else if (resp_take_wqe(qp, resp->wqe))
		return -ENOSPC;
	resp->has_wqe = true;
	resp->offset = 0;
	resp->rsn++;
	if (!resp_wqe_sane(resp_wqe(qp), max_sge, resp->wqe_size))
		resp_wqe(qp)->num_sge = 0;	/* holds nothing: LEN_ERR */
	return 0;
}

static u64 resp_wqe_len(struct mrxe_qp *qp)
{
	return resp_wqe_bytes(resp_wqe(qp));
}

static void resp_complete(struct mrxe_qp *qp, u32 status, u32 opcode,
			  u32 byte_len, u32 flags, u32 ex, u32 src_qp,
			  struct sk_buff *skb, bool solicited)
{
	struct mrxe_cqe cqe;

	memset(&cqe, 0, sizeof(cqe));
	cqe.wr_id = resp_wqe(qp)->wr_id;
	cqe.status = status;
	cqe.opcode = opcode;
	cqe.byte_len = byte_len;
	cqe.ex.invalidated_rkey = ex;
	cqe.qp_num = qp->ibqp.qp_num;
	cqe.src_qp = src_qp;
	cqe.wc_flags = flags;
	cqe.port_num = 1;
	if (skb) {
		const struct iphdr *iph = (const struct iphdr *)skb_network_header(skb);

		cqe.network_hdr_type = iph->version == 4 ? RDMA_NETWORK_IPV4 :
						      RDMA_NETWORK_IPV6;
		if (skb_mac_header_was_set(skb) &&
		    skb_mac_header_len(skb) >= ETH_HLEN)
			memcpy(cqe.smac, eth_hdr(skb)->h_source, ETH_ALEN);
	}
	if (status != IB_WC_SUCCESS && status != IB_WC_WR_FLUSH_ERR)
		mrxe_qp_counter_inc(qp, MRXE_CNT_RESPONDER_ERR);
	qp->resp.has_wqe = false;
	mrxe_cq_post(qp->rcq, &cqe, solicited);
}

/* RC class B/C/D errors (IBA 9.9.3.1): NAK, fail the WQE, QP to ERROR. */
static enum mrxe_resp_rc resp_error(struct mrxe_qp *qp, u8 nak, u32 wc_status,
				    u32 psn)
{
	mrxe_qp_counter_inc(qp, MRXE_CNT_RESPONDER_ERR);
	mrxe_err_dev(qp_dev(qp),
		     "qp %u: psn %#x nak %u status %u (last op %#x offset %u)\n",
		     qp->ibqp.qp_num, psn, nak, wc_status, qp->resp.last_opcode,
		     qp->resp.offset);
	if (!mrxe_qp_is_rc(qp)) {
		/* UC: discard the message (IBA 9.8.3), keep the QP */
		if (qp->resp.has_wqe && wc_status == IB_WC_LOC_LEN_ERR)
			resp_complete(qp, wc_status, IB_WC_RECV,
				      qp->resp.offset, 0, 0, 0, NULL, false);
		qp->resp.drop_msg = true;
		return RESP_DROP;
	}
	resp_send_nak(qp, nak, psn);
	if (qp->resp.has_wqe) {
		/*
		 * IBA 11.6.2: a receive WQE consumed by an RDMA WRITE with
		 * immediate whose R_Key/range check failed is a protection
		 * error on a local buffer: Local Access Error.  Remote Access
		 * Error is the status of the requester that gets the NAK.
		 */
		if (nak == MRXE_NAK_REM_ACCESS)
			wc_status = IB_WC_LOC_ACCESS_ERR;
		resp_complete(qp, wc_status, IB_WC_RECV, qp->resp.offset, 0, 0,
			      0, NULL, false);
	}
	resp_put_mrs(qp);
	mrxe_pipe_set_error(qp);
	return RESP_ERR;
}

/* ---- request handlers ---- */

static enum mrxe_resp_rc resp_rnr(struct mrxe_qp *qp, u32 psn)
{
	if (!mrxe_qp_is_rc(qp)) {
		qp->resp.drop_msg = true;
		mrxe_qp_counter_inc(qp, MRXE_CNT_RCV_DROPPED);
		return RESP_DROP;
	}
	mrxe_qp_counter_inc(qp, MRXE_CNT_RNR_NAKS_SENT);
	resp_flush_ack(qp);
	resp_send_ack(qp, MRXE_AETH_RNR_NAK |
		      (qp->pipe.attr.min_rnr_timer & MRXE_AETH_VAL_MASK), psn);
	qp->resp.nak_sent = true;
	return RESP_RNR;
}

static enum mrxe_resp_rc resp_send(struct mrxe_qp *qp, struct sk_buff *skb)
{
	struct mrxe_resp_state *resp = &qp->resp;
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	u32 flags = 0, ex = 0;
	int err;

	if (pi->mask & MRXE_M_FIRST) {
		if (!resp->has_wqe && resp_get_wqe(qp))
			return resp_rnr(qp, pi->psn);
		resp->offset = 0;
	} else if (!resp->has_wqe) {
		return RESP_DROP;
	}
	if (!(pi->mask & MRXE_M_LAST) && pi->paylen != qp->pipe.attr.mtu)
		return resp_error(qp, MRXE_NAK_INVALID_REQ, IB_WC_REM_INV_REQ_ERR,
				  pi->psn);
	if ((u64)resp->offset + pi->paylen > resp_wqe_len(qp))
		return resp_error(qp, MRXE_NAK_INVALID_REQ, IB_WC_LOC_LEN_ERR,
				  pi->psn);
	if (mrxe_pkt_meta(skb)->placed) {
		/* placed on arrival: in this WQE, where order puts it */
		if (mrxe_pkt_meta(skb)->offset != resp->offset ||
		    mrxe_pkt_meta(skb)->rsn != (u8)(resp->rsn - 1))
			return resp_error(qp, MRXE_NAK_INVALID_REQ,
					  IB_WC_REM_INV_REQ_ERR, pi->psn);
	} else if (pi->paylen) {
		err = mrxe_sgl_copy(qp->pd, resp_sge(qp), resp_wqe(qp)->num_sge,
				    resp->offset, mrxe_pkt_payload(skb),
				    pi->paylen, MRXE_COPY_TO_MR,
				    IB_ACCESS_LOCAL_WRITE);
		if (err)
			return resp_error(qp, MRXE_NAK_REM_OP,
					  IB_WC_LOC_PROT_ERR, pi->psn);
	}
	resp->offset += pi->paylen;
	if (!(pi->mask & MRXE_M_LAST))
		return RESP_OK;

	if (pi->mask & MRXE_HDR_IMMDT) {
		flags |= MRXE_WC_WITH_IMM;
		ex = (__force u32)mrxe_immdt_parse(mrxe_pkt_hdr(skb,
							       MRXE_HDR_IMMDT));
	}
	if (pi->mask & MRXE_HDR_IETH) {
		ex = mrxe_ieth_parse(mrxe_pkt_hdr(skb, MRXE_HDR_IETH));
		/* IBA 9.4.4.1: invalidate before completing the receive */
		if (mrxe_invalidate_key(qp, ex))
			return resp_error(qp, MRXE_NAK_INVALID_REQ,
					  IB_WC_REM_INV_REQ_ERR, pi->psn);
		flags |= MRXE_WC_WITH_INV;
	}
	resp_complete(qp, IB_WC_SUCCESS, IB_WC_RECV, resp->offset, flags, ex,
		      0, NULL, mrxe_bth_se(skb->data));
	return RESP_OK;
}

/* Target address of a MetaRoCE WRITE packet: its RETH's VA + MRH offset. */
static u64 resp_meta_write_va(struct sk_buff *skb)
{
	struct mrxe_reth reth;

	mrxe_reth_parse(mrxe_pkt_meta_reth(skb), &reth);
	return reth.va + mrxe_pkt_meta(skb)->offset;
}

/*
 * PSN-order memory for WRITEs placed on arrival (mrxe_wrorder.h): every
 * WRITE payload copy of a MetaRoCE QP is recorded, and the in-order pass
 * copies a placed packet again when an older PSN wrote over its bytes
 * after it was placed (IBA 9.5: requests execute in PSN order, so the
 * newer WRITE's bytes are what memory holds in the end).
 */
static void resp_meta_wpkt(struct mrxe_qp *qp, struct sk_buff *skb,
			   const struct mrxe_reth *reth,
			   struct mrxe_wrorder_pkt *p)
{
	u32 off = mrxe_pkt_meta(skb)->offset;

	p->psn = mrxe_pkt(skb)->psn;
	p->msg_psn = mrxe_psn_add(p->psn, -(off / qp->pipe.attr.mtu));
	p->va = reth->va + off;
	p->len = mrxe_pkt(skb)->paylen;
	p->msg_va = reth->va;
	p->msg_len = reth->len;
}

/* the in-order pass copied a MetaRoCE WRITE packet to @va */
static void resp_meta_wrote(struct mrxe_qp *qp, struct sk_buff *skb, u64 va)
{
	struct mrxe_meta_qp *m = qp->pipe.meta;
	struct mrxe_wrorder_pkt p;
	struct mrxe_reth reth;

	if (!m || !mrxe_pkt_meta(skb)->meta)
		return;
	/* every MetaRoCE WRITE packet carries its message's RETH */
	mrxe_reth_parse(mrxe_pkt_meta_reth(skb), &reth);
	resp_meta_wpkt(qp, skb, &reth, &p);
	p.va = va;	/* where PSN order put it, not the packet's own RETH */
	mrxe_wrorder_wrote(&m->wrorder, &p, false);
}

static bool resp_meta_write_stale(struct mrxe_qp *qp, struct sk_buff *skb,
				  u64 va)
{
	struct mrxe_meta_qp *m = qp->pipe.meta;

	if (!m || !mrxe_wrorder_stale(&m->wrorder, mrxe_pkt(skb)->psn, va,
				      mrxe_pkt(skb)->paylen))
		return false;
	mrxe_qp_counter_inc(qp, MRXE_CNT_META_WRITE_RECOPIED);
	return true;
}

static enum mrxe_resp_rc resp_write(struct mrxe_qp *qp, struct sk_buff *skb)
{
	struct mrxe_resp_state *resp = &qp->resp;
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	struct mrxe_reth reth;
	int err;

	/* WRITE with immediate consumes a receive WQE (IBA 9.4.2) */
	if ((pi->mask & MRXE_M_RWR) && !resp->has_wqe && resp_get_wqe(qp))
		return resp_rnr(qp, pi->psn);

	if (pi->mask & MRXE_M_FIRST) {
		mrxe_reth_parse(mrxe_pkt_hdr(skb, MRXE_HDR_RETH), &reth);
		resp_drop_mr(&resp->wr_mr);
		resp->wr_va = reth.va;
		resp->wr_len = reth.len;
		resp->wr_resid = reth.len;
		/* IBA 9.7.4.1.4: a zero-length WRITE checks no R_Key */
		if (reth.len) {
			err = mrxe_rkey_resolve(qp, reth.rkey, reth.va, reth.len,
						IB_ACCESS_REMOTE_WRITE,
						&resp->wr_mr);
			if (err) {
				resp->wr_mr = NULL;
				return resp_error(qp, MRXE_NAK_REM_ACCESS,
						  IB_WC_REM_ACCESS_ERR, pi->psn);
			}
		}
	}
	if (pi->paylen > resp->wr_resid ||
	    (!(pi->mask & MRXE_M_LAST) && pi->paylen != qp->pipe.attr.mtu) ||
	    ((pi->mask & MRXE_M_LAST) && pi->paylen != resp->wr_resid))
		return resp_error(qp, MRXE_NAK_INVALID_REQ, IB_WC_REM_INV_REQ_ERR,
				  pi->psn);
	if (pi->paylen) {
		if (!resp->wr_mr)
			return resp_error(qp, MRXE_NAK_REM_ACCESS,
					  IB_WC_REM_ACCESS_ERR, pi->psn);
		if (mrxe_pkt_meta(skb)->placed) {
			/* placed on arrival: it must be where order puts it */
			if (resp_meta_write_va(skb) != resp->wr_va)
				return resp_error(qp, MRXE_NAK_INVALID_REQ,
						  IB_WC_REM_INV_REQ_ERR,
						  pi->psn);
		}
		if (!mrxe_pkt_meta(skb)->placed ||
		    resp_meta_write_stale(qp, skb, resp->wr_va)) {
			err = mrxe_mr_copy(resp->wr_mr, resp->wr_va,
					   mrxe_pkt_payload(skb), pi->paylen,
					   MRXE_COPY_TO_MR);
			if (err)
				return resp_error(qp, MRXE_NAK_REM_ACCESS,
						  IB_WC_REM_ACCESS_ERR,
						  pi->psn);
			resp_meta_wrote(qp, skb, resp->wr_va);
		}
	}
	resp->wr_va += pi->paylen;
	resp->wr_resid -= pi->paylen;
	if (!(pi->mask & MRXE_M_LAST))
		return RESP_OK;

	resp_drop_mr(&resp->wr_mr);
	if (pi->mask & MRXE_HDR_IMMDT)
		resp_complete(qp, IB_WC_SUCCESS, IB_WC_RECV_RDMA_WITH_IMM,
			      resp->wr_len, MRXE_WC_WITH_IMM,
			      (__force u32)mrxe_immdt_parse(
				      mrxe_pkt_hdr(skb, MRXE_HDR_IMMDT)),
			      0, NULL, mrxe_bth_se(skb->data));
	return RESP_OK;
}

static struct mrxe_resp_res *resp_res_alloc(struct mrxe_qp *qp)
{
	struct mrxe_resp_state *resp = &qp->resp;
	u32 n = qp->pipe.attr.max_dest_rd_atomic;

	if (!n || n > resp->nres)
		n = resp->nres;
	return &resp->res[resp->res_next++ % n];
}

static void resp_start_read(struct mrxe_qp *qp, struct mrxe_mr *mr, u64 va,
			    u32 len, u32 psn, u32 first, u32 last)
{
	struct mrxe_resp_state *resp = &qp->resp;

	resp->rd_mr = mr;
	resp->rd_va = va;
	resp->rd_resid = len;
	resp->rd_psn = psn;
	/* one READ's responses stay on one path: in order, no reorder gaps */
	resp->rd_sport = resp_sport(qp, psn);
	resp->rd_first_psn = first;
	resp->rd_last_psn = last;
	resp->rd_active = true;
	resp->rd_replay = false;
}

static enum mrxe_resp_rc resp_read(struct mrxe_qp *qp, struct sk_buff *skb)
{
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	struct mrxe_resp_res *res;
	struct mrxe_mr *mr = NULL;
	struct mrxe_reth reth;
	u32 npkts, mtu = qp->pipe.attr.mtu;
	int err;

	mrxe_reth_parse(mrxe_pkt_hdr(skb, MRXE_HDR_RETH), &reth);
	/* a READ of 2^23 or more PSNs breaks modulo-2^24 order (IBA 9.7.1) */
	if (reth.len > MRXE_MAX_MSG_SZ ||
	    DIV_ROUND_UP(reth.len, mtu) > MRXE_MAX_MSG_PKTS)
		return resp_error(qp, MRXE_NAK_INVALID_REQ, IB_WC_REM_INV_REQ_ERR,
				  pi->psn);
	if (reth.len) {
		err = mrxe_rkey_resolve(qp, reth.rkey, reth.va, reth.len,
					IB_ACCESS_REMOTE_READ, &mr);
		if (err)
			return resp_error(qp, MRXE_NAK_REM_ACCESS,
					  IB_WC_REM_ACCESS_ERR, pi->psn);
	}
	npkts = reth.len ? DIV_ROUND_UP(reth.len, mtu) : 1;
	/* MetaRoCE answers a duplicate READ from its own RETH: no resource */
	if (!qp->pipe.meta_rx) {
		res = resp_res_alloc(qp);
		res->type = MRXE_M_READ;
		res->first_psn = pi->psn;
		res->last_psn = mrxe_psn_add(pi->psn, npkts - 1);
		res->va = reth.va;
		res->rkey = reth.rkey;
		res->len = reth.len;
	}
	resp_flush_ack(qp);
	qp->resp.msn++;
	resp_start_read(qp, mr, reth.va, reth.len, pi->psn, pi->psn,
			mrxe_psn_add(pi->psn, npkts - 1));
	qp->resp.rd_off = mrxe_pkt_meta(skb)->offset;
	qp->resp.psn = mrxe_psn_add(pi->psn, npkts);
	return RESP_OK;
}

/*
 * FLUSH and ATOMIC WRITE are answered with one RDMA READ Response Only
 * without payload (IBA 1.5 MPE; what rxe sends and expects): complete the
 * message, keep a zero-length READ resource for a duplicate (standard mode;
 * MetaRoCE replays from the request itself) and start the empty "stream".
 */
static void resp_answer_empty(struct mrxe_qp *qp, struct sk_buff *skb,
			      const struct mrxe_reth *reth)
{
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	struct mrxe_resp_res *res;

	if (!qp->pipe.meta_rx) {
		res = resp_res_alloc(qp);
		res->type = MRXE_M_READ;
		res->first_psn = pi->psn;
		res->last_psn = pi->psn;
		res->va = reth->va;
		res->rkey = reth->rkey;
		res->len = 0;
	}
	resp_flush_ack(qp);
	qp->resp.msn++;
	resp_start_read(qp, NULL, reth->va, 0, pi->psn, pi->psn, pi->psn);
	qp->resp.rd_off = mrxe_pkt_meta(skb)->offset;
	qp->resp.psn = mrxe_psn_add(pi->psn, 1);
}

/*
 * RDMA FLUSH (IBA 1.5 Memory Placement Extensions).  The FETH names the
 * placement type (global visibility and/or persistence) and the selectivity
 * level (the RETH's range, or the whole MR: then only the R_Key and its MR
 * matter, RETH's VA must still lie in it).  The QP must enable that
 * placement type (QP access FLUSH_*, else invalid request, as for the other
 * remote enables) and the MR or MW too (else remote access error).  Every
 * earlier request was executed by this responder, in PSN order, with CPU
 * stores: a full barrier makes them globally visible.  Persistence cannot
 * be asked for successfully: no mrxe MR has FLUSH_PERSISTENT access
 * (mrxe_check_access()).  The answer is one RDMA READ Response Only with no
 * payload; a duplicate is answered again the same way (a zero-length READ
 * resource), without flushing twice.
 */
static enum mrxe_resp_rc resp_flush(struct mrxe_qp *qp, struct sk_buff *skb)
{
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	struct mrxe_mr *mr = NULL;
	struct mrxe_reth reth;
	unsigned long flags;
	int access = 0, qp_access, err;
	u8 plt, sel;

	mrxe_feth_parse(mrxe_pkt_hdr(skb, MRXE_HDR_FETH), &plt, &sel);
	mrxe_reth_parse(mrxe_pkt_hdr(skb, MRXE_HDR_RETH), &reth);
	if (!plt || (plt & ~(MRXE_FETH_PLT_GLOBAL | MRXE_FETH_PLT_PERSIST)) ||
	    sel > MRXE_FETH_SEL_MR) {
		mrxe_dbg_dev(qp_dev(qp), "qp %u: FLUSH with FETH plt %#x sel %u\n",
			     qp->ibqp.qp_num, plt, sel);
		return resp_error(qp, MRXE_NAK_INVALID_REQ,
				  IB_WC_REM_INV_REQ_ERR, pi->psn);
	}
	if (plt & MRXE_FETH_PLT_GLOBAL)
		access |= MRXE_ACCESS_FLUSH_GLOBAL;
	if (plt & MRXE_FETH_PLT_PERSIST)
		access |= MRXE_ACCESS_FLUSH_PERSISTENT;
	/* modify_qp may change the enables in RTR/RTS: state_lock */
	spin_lock_irqsave(&qp->state_lock, flags);
	qp_access = qp->attr.qp_access_flags;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if ((qp_access & access) != access)
		return resp_error(qp, MRXE_NAK_INVALID_REQ,
				  IB_WC_REM_INV_REQ_ERR, pi->psn);
	err = mrxe_rkey_resolve(qp, reth.rkey, reth.va,
				sel == MRXE_FETH_SEL_RANGE ? reth.len : 0,
				access, &mr);
	if (err)
		return resp_error(qp, MRXE_NAK_REM_ACCESS,
				  IB_WC_REM_ACCESS_ERR, pi->psn);
	mrxe_mr_put(mr);
	smp_mb();	/* global visibility of every earlier placement */
	mrxe_qp_counter_inc(qp, MRXE_CNT_FLUSH_EXECUTED);
	resp_answer_empty(qp, skb, &reth);
	return RESP_OK;
}

/*
 * RDMA ATOMIC WRITE (IBA 1.5 MPE): one packet, RETH + exactly 8 payload
 * bytes for an 8-byte aligned VA (else invalid request), placed in one
 * store (mrxe_mr_atomic_write()) under the QP's and the MR's remote write
 * enables; answered like a FLUSH (resp_answer_empty(): a zero-length
 * READ Response Only).  A duplicate gets that response again and is never
 * executed twice.
 */
static enum mrxe_resp_rc resp_atomic_write(struct mrxe_qp *qp,
					   struct sk_buff *skb)
{
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	struct mrxe_reth reth;
	struct mrxe_mr *mr;
	int err;

	mrxe_reth_parse(mrxe_pkt_hdr(skb, MRXE_HDR_RETH), &reth);
	if (pi->paylen != 8 || reth.len != 8 || (reth.va & 7)) {
		mrxe_dbg_dev(qp_dev(qp), "qp %u: ATOMIC WRITE len %u/%u va %#llx\n",
			     qp->ibqp.qp_num, pi->paylen, reth.len, reth.va);
		return resp_error(qp, MRXE_NAK_INVALID_REQ,
				  IB_WC_REM_INV_REQ_ERR, pi->psn);
	}
	err = mrxe_rkey_resolve(qp, reth.rkey, reth.va, 8,
				IB_ACCESS_REMOTE_WRITE, &mr);
	if (err)
		return resp_error(qp, MRXE_NAK_REM_ACCESS,
				  IB_WC_REM_ACCESS_ERR, pi->psn);
	err = mrxe_mr_atomic_write(mr, reth.va, mrxe_pkt_payload(skb));
	mrxe_mr_put(mr);
	if (err)
		return resp_error(qp, MRXE_NAK_REM_ACCESS,
				  IB_WC_REM_ACCESS_ERR, pi->psn);
	mrxe_qp_counter_inc(qp, MRXE_CNT_ATOMIC_WRITE_EXECUTED);
	resp_answer_empty(qp, skb, &reth);
	return RESP_OK;
}

static void resp_send_atomic_ack(struct mrxe_qp *qp, u32 psn, u64 orig)
{
	struct mrxe_bth bth = {};
	struct mrxe_aeth aeth;
	struct sk_buff *skb;
	u8 opcode = MRXE_OPC(MRXE_TR_RC, MRXE_OP_ATOMIC_ACK);
	u32 hlen = resp_hlen(qp, opcode);

	skb = mrxe_pipe_alloc_pkt(qp, qp->pipe.av, hlen + MRXE_ICRC_LEN);
	if (!skb)
		return;
	bth.opcode = opcode;
	bth.pkey = MRXE_DEFAULT_PKEY;
	bth.dqpn = qp->pipe.attr.dest_qpn;
	bth.psn = psn;
	mrxe_bth_build(skb->data, &bth);
	mrxe_bth_set_meta_cap(skb->data, qp->pipe.cap_peer);
	if (qp->pipe.meta_rx)
		mrxe_meta_build_mrh(qp, skb->data, MRXE_MRH_ACK,
				    MRXE_MRH_F_TSECR, qp->resp.msn, 0,
				    qp->pipe.meta->rcv.last_tsval);
	aeth.syndrome = MRXE_AETH_ACK | MRXE_AETH_CREDIT_INVALID;
	aeth.msn = qp->resp.msn;
	mrxe_aeth_build(skb->data + resp_hoff(qp, opcode, MRXE_HDR_AETH),
			&aeth);
	mrxe_atmack_build(skb->data + resp_hoff(qp, opcode, MRXE_HDR_ATMACK),
			  orig);
	memset(skb->data + hlen, 0, MRXE_ICRC_LEN);
	mrxe_pipe_xmit(qp, qp->pipe.av, skb, resp_sport(qp, psn));
}

static enum mrxe_resp_rc resp_atomic(struct mrxe_qp *qp, struct sk_buff *skb)
{
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	struct mrxe_resp_res *res;
	struct mrxe_atmeth a;
	struct mrxe_mr *mr;
	u64 orig = 0;
	int err;

	mrxe_atmeth_parse(mrxe_pkt_hdr(skb, MRXE_HDR_ATMETH), &a);
	/* IBA 9.4.5: the VA must be 8-byte aligned, else invalid request */
	if (a.va & 7)
		return resp_error(qp, MRXE_NAK_INVALID_REQ, IB_WC_REM_INV_REQ_ERR,
				  pi->psn);
	err = mrxe_rkey_resolve(qp, a.rkey, a.va, 8, IB_ACCESS_REMOTE_ATOMIC,
				&mr);
	if (err)
		return resp_error(qp, MRXE_NAK_REM_ACCESS, IB_WC_REM_ACCESS_ERR,
				  pi->psn);
	err = mrxe_mr_atomic(mr, a.va,
			     (pi->opcode & 0x1f) == MRXE_OP_CMP_SWAP,
			     a.compare, a.swap_add, &orig);
	mrxe_mr_put(mr);
	if (err)
		return resp_error(qp, MRXE_NAK_REM_ACCESS, IB_WC_REM_ACCESS_ERR,
				  pi->psn);
	res = resp_res_alloc(qp);
	res->type = MRXE_M_ATOMIC;
	res->first_psn = pi->psn;
	res->last_psn = pi->psn;
	res->orig = orig;
	resp_flush_ack(qp);
	qp->resp.msn++;
	resp_send_atomic_ack(qp, pi->psn, orig);
	return RESP_OK;
}

/* IBA 9.7.5.1.3 / 9.7.5.2.2: duplicate requests are answered again. */
static void resp_duplicate(struct mrxe_qp *qp, struct sk_buff *skb)
{
	struct mrxe_resp_state *resp = &qp->resp;
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	u32 i, off, mtu = qp->pipe.attr.mtu;
	struct mrxe_resp_res *res;
	struct mrxe_mr *mr = NULL;

	mrxe_qp_counter_inc(qp, MRXE_CNT_RCV_DUP_REQ);
	mrxe_dbg_dev(qp_dev(qp), "qp %u: dup psn %#x mask %#x resp %#x rd %d rd_psn %#x rxq %u\n",
		     qp->ibqp.qp_num, pi->psn, pi->mask, resp->psn,
		     resp->rd_active, resp->rd_psn, skb_queue_len(&resp->rxq));
	if ((pi->mask & (MRXE_M_SEND | MRXE_M_WRITE)) &&
	    !(pi->mask & MRXE_M_ATOMIC_WRITE)) {
		/* re-ACK everything received so far */
		resp->ack_pending = true;
		resp->ack_psn = mrxe_psn_add(resp->psn, MRXE_PSN_MASK);
		return;
	}
	for (i = 0; i < resp->nres; i++) {
		res = &resp->res[i];
		if (!res->type || !mrxe_psn_in(pi->psn, res->first_psn,
					       res->last_psn))
			continue;
		if ((pi->mask & MRXE_M_ATOMIC) && res->type == MRXE_M_ATOMIC &&
		    res->first_psn == pi->psn) {
			resp_flush_ack(qp);
			resp_send_atomic_ack(qp, pi->psn, res->orig);
			return;
		}
		/* READ, and FLUSH / ATOMIC WRITE (zero-length responses) */
		if ((pi->mask & (MRXE_M_READ | MRXE_M_ATOMIC_WRITE)) &&
		    res->type == MRXE_M_READ) {
			/*
			 * The requester went back N: whatever stream is in
			 * progress is discarded there, restart from here.
			 */
			if (resp->rd_active) {
				resp->rd_active = false;
				resp_drop_mr(&resp->rd_mr);
			}
			off = (u32)mrxe_psn_diff(pi->psn, res->first_psn) * mtu;
			if (off > res->len ||
			    (res->len - off &&
			     mrxe_rkey_resolve(qp, res->rkey, res->va + off,
					       res->len - off,
					       IB_ACCESS_REMOTE_READ, &mr))) {
				mrxe_dbg_dev(qp_dev(qp), "qp %u: duplicate READ psn %#x: offset %u of %u or R_Key refused\n",
					     qp->ibqp.qp_num, pi->psn, off,
					     res->len);
				return;
			}
			resp_flush_ack(qp);
			resp_start_read(qp, mr, res->va + off, res->len - off,
					pi->psn, res->first_psn, res->last_psn);
			resp->rd_replay = true;
			return;
		}
	}
	mrxe_dbg_dev(qp_dev(qp), "qp %u: duplicate psn %#x: no response resource (of %u)\n",
		     qp->ibqp.qp_num, pi->psn, resp->nres);
}

/* Send up to *budget READ response packets (IBA 9.7.5.2.4). */
static bool resp_read_step(struct mrxe_qp *qp, int *budget)
{
	struct mrxe_resp_state *resp = &qp->resp;
	u32 mtu = qp->pipe.attr.mtu, paylen, hlen, len;
	struct mrxe_bth bth = {};
	struct mrxe_aeth aeth;
	struct sk_buff *skb;
	bool first, last, progress = false;
	u8 opcode, pad;
	int err;

	while (resp->rd_active && *budget > 0) {
		/* the QP's packets queued in the host (mrxe_task.c) */
		if (mrxe_pipe_tx_full(qp))
			break;
		paylen = min(mtu, resp->rd_resid);
		first = resp->rd_psn == resp->rd_first_psn;
		last = resp->rd_psn == resp->rd_last_psn ||
		       resp->rd_resid <= mtu;
		if (first && last)
			opcode = MRXE_OP_READ_RESP_ONLY;
		else if (first)
			opcode = MRXE_OP_READ_RESP_FIRST;
		else if (last)
			opcode = MRXE_OP_READ_RESP_LAST;
		else
			opcode = MRXE_OP_READ_RESP_MIDDLE;
		opcode = MRXE_OPC(MRXE_TR_RC, opcode);
		hlen = resp_hlen(qp, opcode);
		pad = mrxe_pad_for(paylen);
		len = hlen + paylen + pad + MRXE_ICRC_LEN;
		skb = mrxe_pipe_alloc_pkt(qp, qp->pipe.av, len);
		if (!skb)
			return true;	/* try again on the next run */
		bth.opcode = opcode;
		bth.pad = pad;
		bth.pkey = MRXE_DEFAULT_PKEY;
		bth.dqpn = qp->pipe.attr.dest_qpn;
		bth.psn = resp->rd_psn;
		mrxe_bth_build(skb->data, &bth);
		mrxe_bth_set_meta_cap(skb->data, qp->pipe.cap_peer);
		/* MetaRoCE: placed at MRH.offset of the READ, in any order */
		if (qp->pipe.meta_rx)
			mrxe_meta_build_mrh(qp, skb->data, MRXE_MRH_READ_RESP,
					    0, resp->msn, resp->rd_off, 0);
		if (mrxe_op_mask(opcode) & MRXE_HDR_AETH) {
			aeth.syndrome = MRXE_AETH_ACK | MRXE_AETH_CREDIT_INVALID;
			aeth.msn = resp->msn;
			mrxe_aeth_build(skb->data +
					resp_hoff(qp, opcode, MRXE_HDR_AETH),
					&aeth);
		}
		if (paylen) {
			/* no MR: deregistered mid-READ (mrxe_resp_release_mr) */
			err = resp->rd_mr ?
			      mrxe_mr_copy(resp->rd_mr, resp->rd_va,
					   skb->data + hlen, paylen,
					   MRXE_COPY_FROM_MR) : -EINVAL;
			if (err) {
				kfree_skb(skb);
				resp_error(qp, MRXE_NAK_REM_ACCESS,
					   IB_WC_REM_ACCESS_ERR, resp->rd_psn);
				return true;
			}
		}
		memset(skb->data + hlen + paylen, 0, pad + MRXE_ICRC_LEN);
		/*
		 * A response refused by a full local queue (the veth peer's
		 * backlog, a qdisc) never left: build it again on the next
		 * run, as the requester does with its requests (mrxe_req.c),
		 * rather than make the requester find the hole.  Dropped, it
		 * cost a gap round each and, in standard mode, a whole
		 * go-back-N of the READ (IBA 9.7.5.2.4); 4 QPs of ib_read_bw
		 * between two namespaces saw 2675-3678 such refusals a run.
		 * Bounded: a queue that never drains makes it a loss.
		 */
		err = mrxe_pipe_xmit(qp, qp->pipe.av, skb, resp->rd_sport);
		if (unlikely(err == -ENOBUFS) &&
		    resp->rd_busy < MRXE_XMIT_BUSY_MAX) {
			resp->rd_busy++;
			(*budget)--;
			return true;
		}
		resp->rd_busy = 0;
		/* what READ recovery costs the responder (bench: per lost) */
		if (resp->rd_replay)
			mrxe_qp_counter_inc(qp, MRXE_CNT_READ_RSP_REPLAYED);
		resp->rd_va += paylen;
		resp->rd_resid -= paylen;
		resp->rd_off += paylen;
		resp->rd_psn = mrxe_psn_add(resp->rd_psn, 1);
		(*budget)--;
		progress = true;
		if (last) {
			resp->rd_active = false;
			resp_drop_mr(&resp->rd_mr);
		}
	}
	return progress;
}

/*
 * IBA 10.2.4 (QP attributes): RDMA READ, RDMA WRITE (with or without
 * immediate, zero-length included) and atomic requests are only executed
 * when the QP's matching remote access enable is set, whatever the MR or MW
 * allows.  Checked once per message, on its first packet, before a receive
 * WQE, an R_Key or a length is looked at (as rxe's check_op_valid()).
 */
static int resp_qp_access(struct mrxe_qp *qp)
{
	unsigned long flags;
	int access;

	/* modify_qp may change the enables in RTR/RTS: state_lock */
	spin_lock_irqsave(&qp->state_lock, flags);
	access = qp->attr.qp_access_flags;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	return access;
}

static bool resp_qp_access_ok(struct mrxe_qp *qp, u32 mask)
{
	int need;

	/* FLUSH: its placement type decides, checked in resp_flush() */
	if (!(mask & MRXE_M_FIRST) || (mask & MRXE_M_FLUSH))
		return true;
	if (mask & MRXE_M_WRITE)
		need = IB_ACCESS_REMOTE_WRITE;
	else if (mask & MRXE_M_READ)
		need = IB_ACCESS_REMOTE_READ;
	else if (mask & MRXE_M_ATOMIC)
		need = IB_ACCESS_REMOTE_ATOMIC;
	else
		return true;
	return resp_qp_access(qp) & need;
}

/* IBA 9.7.5.2.1 / 9.8.3: the opcode must fit the previous packet. */
static bool resp_opcode_ok(struct mrxe_qp *qp, u8 opcode, u32 mask)
{
	u8 last = qp->resp.last_opcode;
	u8 lop = last & 0x1f;

	if (last != 0xff && (lop == MRXE_OP_SEND_FIRST ||
			     lop == MRXE_OP_SEND_MIDDLE))
		return (mask & MRXE_M_SEND) && !(mask & MRXE_M_FIRST);
	if (last != 0xff && (lop == MRXE_OP_WRITE_FIRST ||
			     lop == MRXE_OP_WRITE_MIDDLE))
		return (mask & MRXE_M_WRITE) && !(mask & MRXE_M_FIRST);
	return mask & MRXE_M_FIRST;
}

static void resp_ud(struct mrxe_qp *qp, struct sk_buff *skb)
{
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	const u8 *l3 = skb_network_header(skb);
	u32 qkey, flags = MRXE_WC_GRH, ex = 0;
	struct mrxe_deth deth;
	u8 grh[MRXE_GRH_LEN];
	int err;

	mrxe_deth_parse(mrxe_pkt_hdr(skb, MRXE_HDR_DETH), &deth);
	qkey = qp->ibqp.qp_type == IB_QPT_GSI ? MRXE_QP1_QKEY : qp->pipe.attr.qkey;
	if (deth.qkey != qkey) {
		/* IBA 10.2.5: silently dropped, counted */
		mrxe_qp_counter_inc(qp, MRXE_CNT_QKEY_VIOLATION);
		return;
	}
	if (resp_get_wqe(qp)) {
		mrxe_qp_counter_inc(qp, MRXE_CNT_RCV_DROPPED);
		return;
	}
	if (MRXE_GRH_LEN + (u64)pi->paylen > resp_wqe_len(qp)) {
		resp_complete(qp, IB_WC_LOC_LEN_ERR, IB_WC_RECV, 0, 0, 0,
			      deth.sqpn, skb, false);
		return;
	}
	/*
	 * IBA 11.4.1.2: the first 40 bytes receive the GRH; for RoCEv2 over
	 * IPv4 the IPv4 header sits in its last 20 bytes (as rxe does).
	 */
	memset(grh, 0, sizeof(grh));
	if ((l3[0] >> 4) == 4)
		memcpy(grh + MRXE_GRH_LEN - MRXE_IPV4_HDR_LEN, l3,
		       MRXE_IPV4_HDR_LEN);
	else
		memcpy(grh, l3, MRXE_IPV6_HDR_LEN);
	err = mrxe_sgl_copy(qp->pd, resp_sge(qp), resp_wqe(qp)->num_sge, 0,
			    grh, MRXE_GRH_LEN, MRXE_COPY_TO_MR,
			    IB_ACCESS_LOCAL_WRITE);
	if (!err && pi->paylen)
		err = mrxe_sgl_copy(qp->pd, resp_sge(qp), resp_wqe(qp)->num_sge,
				    MRXE_GRH_LEN, mrxe_pkt_payload(skb),
				    pi->paylen, MRXE_COPY_TO_MR,
				    IB_ACCESS_LOCAL_WRITE);
	if (err) {
		resp_complete(qp, IB_WC_LOC_PROT_ERR, IB_WC_RECV, 0, 0, 0,
			      deth.sqpn, skb, false);
		return;
	}
	if (pi->mask & MRXE_HDR_IMMDT) {
		flags |= MRXE_WC_WITH_IMM;
		ex = (__force u32)mrxe_immdt_parse(mrxe_pkt_hdr(skb,
							       MRXE_HDR_IMMDT));
	}
	resp_complete(qp, IB_WC_SUCCESS, IB_WC_RECV,
		      MRXE_GRH_LEN + pi->paylen, flags, ex, deth.sqpn, skb,
		      mrxe_bth_se(skb->data));
}

static void resp_packet(struct mrxe_qp *qp, struct sk_buff *skb)
{
	struct mrxe_resp_state *resp = &qp->resp;
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	bool rc = mrxe_qp_is_rc(qp);
	enum mrxe_resp_rc ret;
	s32 diff;

	if (mrxe_qp_is_ud(qp)) {
		if ((pi->opcode & MRXE_TR_MASK) != MRXE_TR_UD)
			goto drop;
		resp_ud(qp, skb);
		return;
	}
	if ((pi->opcode & MRXE_TR_MASK) != (rc ? MRXE_TR_RC : MRXE_TR_UC))
		goto drop;

	diff = mrxe_psn_diff(pi->psn, resp->psn);
	if (rc) {
		if (diff > 0) {
			/* IBA 9.7.5.2.2: one sequence NAK per gap */
			if (!resp->nak_sent) {
				resp->nak_sent = true;
				mrxe_qp_counter_inc(qp,
						    MRXE_CNT_SEQ_ERR_NAKS_SENT);
				resp_send_nak(qp, MRXE_NAK_PSN_SEQ, resp->psn);
			}
			goto drop;
		}
		if (diff < 0) {
			resp_duplicate(qp, skb);
			return;
		}
	} else if (diff != 0 || resp->drop_msg) {
		/* UC (IBA 9.8.3): a gap drops the message; resync PSN */
		if (!(pi->mask & MRXE_M_FIRST)) {
			resp->drop_msg = true;
			resp->psn = mrxe_psn_add(pi->psn, 1);
			goto drop;
		}
		resp->drop_msg = false;
		resp->last_opcode = 0xff;
		resp->psn = pi->psn;
	}
	resp->nak_sent = false;

	if (!resp_opcode_ok(qp, pi->opcode, pi->mask)) {
		mrxe_err_dev(qp_dev(qp), "qp %u: opcode %#x after %#x\n",
			     qp->ibqp.qp_num, pi->opcode, resp->last_opcode);
		if (rc) {
			resp_error(qp, MRXE_NAK_INVALID_REQ,
				   IB_WC_REM_INV_REQ_ERR, pi->psn);
			return;
		}
		resp->drop_msg = true;
		resp->psn = mrxe_psn_add(pi->psn, 1);
		goto drop;
	}

	if (!resp_qp_access_ok(qp, pi->mask)) {
		/*
		 * RC: NAK Invalid Request, class C (IBA 9.9.3), the QP goes to
		 * ERROR; UC: the message is silently dropped (IBA 9.8.3).
		 */
		ret = resp_error(qp, MRXE_NAK_INVALID_REQ,
				 IB_WC_REM_INV_REQ_ERR, pi->psn);
	} else if (pi->mask & MRXE_M_SEND) {
		ret = resp_send(qp, skb);
	} else if ((pi->mask & MRXE_M_ATOMIC_WRITE) && rc) {
		ret = resp_atomic_write(qp, skb);
	} else if (pi->mask & MRXE_M_WRITE) {
		ret = resp_write(qp, skb);
	} else if ((pi->mask & MRXE_M_FLUSH) && rc) {
		ret = resp_flush(qp, skb);
	} else if ((pi->mask & MRXE_M_READ) && rc) {
		ret = resp_read(qp, skb);
	} else if ((pi->mask & MRXE_M_ATOMIC) && rc) {
		ret = resp_atomic(qp, skb);
	} else {
		ret = RESP_DROP;
	}

	switch (ret) {
	case RESP_OK:
		resp->last_opcode = pi->opcode;
		if (pi->mask & (MRXE_M_READ | MRXE_M_ATOMIC |
				MRXE_M_ATOMIC_WRITE)) {
			if (pi->mask & MRXE_M_ATOMIC)
				resp->psn = mrxe_psn_add(pi->psn, 1);
			/* READ, FLUSH and ATOMIC WRITE advanced resp->psn */
			return;
		}
		resp->psn = mrxe_psn_add(pi->psn, 1);
		if (pi->mask & MRXE_M_LAST)
			resp->msn = (resp->msn + 1) & MRXE_MSN_MASK;
		if (qp->pipe.meta_rx) {
			qp->pipe.meta->ack_pending = true;
		} else if (rc && mrxe_bth_ackreq(skb->data)) {
			resp->ack_pending = true;
			resp->ack_psn = pi->psn;
		}
		return;
	case RESP_DROP:
		if (!rc)
			resp->psn = mrxe_psn_add(pi->psn, 1);
		goto drop;
	default:
		return;
	}
drop:
	mrxe_qp_counter_inc(qp, MRXE_CNT_RCV_DROPPED);
}

/* Dequeue the head of the request queue if it is a duplicate. */
static struct sk_buff *resp_peek_dup(struct mrxe_qp *qp)
{
	struct sk_buff_head *q = &qp->resp.rxq;
	struct sk_buff *skb;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	skb = skb_peek(q);
	/*
	 * Only a request for something before the stream's position replaces
	 * it; a retried later READ waits its turn (it would otherwise starve
	 * the replay of the earlier one).
	 */
	if (skb && mrxe_qp_is_rc(qp) &&
	    mrxe_psn_before(mrxe_pkt(skb)->psn, qp->resp.rd_psn))
		__skb_unlink(skb, q);
	else
		skb = NULL;
	spin_unlock_irqrestore(&q->lock, flags);
	return skb;
}

/* ---- MetaRoCE receive (drivers/proto/mrxe_meta.h step 4) ---- */

/*
 * Answer a duplicate READ again from its own RETH (RDMA READ is
 * idempotent; the MetaRoCE requester asks only for the missing range, so
 * the stream in progress, if any, finishes first).
 */
static void resp_meta_replay_read(struct mrxe_qp *qp, struct sk_buff *skb)
{
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	u32 mtu = qp->pipe.attr.mtu, npkts;
	struct mrxe_mr *mr = NULL;
	struct mrxe_reth reth;

	mrxe_reth_parse(mrxe_pkt_hdr(skb, MRXE_HDR_RETH), &reth);
	/* FLUSH / ATOMIC WRITE (done once) get their empty response again */
	if (pi->mask & (MRXE_M_FLUSH | MRXE_M_ATOMIC_WRITE))
		reth.len = 0;
	if (reth.len > MRXE_META_READ_CHUNK * mtu)
		return;
	if (reth.len && mrxe_rkey_resolve(qp, reth.rkey, reth.va, reth.len,
					  IB_ACCESS_REMOTE_READ, &mr))
		return;
	npkts = reth.len ? DIV_ROUND_UP(reth.len, mtu) : 1;
	resp_start_read(qp, mr, reth.va, reth.len, pi->psn, pi->psn,
			mrxe_psn_add(pi->psn, npkts - 1));
	qp->resp.rd_off = mrxe_pkt_meta(skb)->offset;
	qp->resp.rd_replay = true;
}

/*
 * Run the accepted requests in PSN order from resp.psn: the standard
 * responder executes them, so verbs semantics (receive WQE order, SEND
 * with immediate/invalidate, RNR, errors) stay exactly as in IBA.
 */
static bool resp_meta_drain(struct mrxe_qp *qp, int *budget)
{
	struct mrxe_meta_qp *m = qp->pipe.meta;
	struct mrxe_resp_state *resp = &qp->resp;
	bool progress = false;
	struct sk_buff *skb;
	u32 slot;

	while (*budget > 0 && !resp->rd_active && !qp->pipe.want_error) {
		skb = skb_dequeue(&m->replay);
		if (skb) {
			resp_meta_replay_read(qp, skb);
			kfree_skb(skb);
			progress = true;
			continue;
		}
		slot = resp->psn & (MRXE_PKT_RING - 1);
		skb = m->stash[slot];
		if (!skb)
			break;
		m->stash[slot] = NULL;
		progress = true;
		(*budget)--;
		if (mrxe_pkt(skb)->psn != resp->psn) {
			kfree_skb(skb);		/* cannot happen */
			continue;
		}
		resp->nak_sent = false;
		resp_packet(qp, skb);
		mrxe_wrorder_passed(&m->wrorder, mrxe_pkt(skb)->psn);
		kfree_skb(skb);
		if (resp->nak_sent) {
			/*
			 * RNR NAK: the requester resends everything from this
			 * PSN, so forget what was accepted after it.
			 */
			mrxe_meta_rcv_init(qp, resp->psn);
			resp->nak_sent = false;
		}
	}
	return progress;
}

/*
 * The receive WQE a MetaRoCE SEND packet ahead of ePSN is for, by its MRH
 * RSN (low 8 bits): the one being filled, or a later one.  At most 254
 * messages lie between ePSN and a packet less than 255 PSNs ahead, so the
 * 8 bits name one WQE.  A later WQE of an RQ is read in place (copied to
 * resp.peek; the in-order pass takes it as usual).  An SRQ has no WQE of
 * this QP until the QP takes one, and which one it gets is decided then:
 * the WQEs for every message up to this one are taken now, in RSN order,
 * into resp.resv (at most MRXE_RESP_RESV messages ahead), and the in-order
 * pass uses them first.  Those messages exist (their RSNs are below this
 * packet's), so nothing is taken that the QP would not take anyway; an
 * ERROR flush completes them like the WQE being filled.  NULL: no such
 * WQE (not posted yet, too far ahead).
 */
static struct mrxe_recv_wqe *resp_meta_send_wqe(struct mrxe_qp *qp,
						struct sk_buff *skb)
{
	struct mrxe_resp_state *resp = &qp->resp;
	struct mrxe_recv_wqe *wqe;
	struct mrxe_queue *q = qp->rq;
	unsigned long flags;
	u32 k, n, max_sge;

	if (mrxe_psn_diff(mrxe_pkt(skb)->psn, resp->psn) >= 255)
		return NULL;
	/* k = RSN - (resp.rsn - 1): 0 is the WQE being filled */
	k = (u8)(mrxe_pkt_meta(skb)->rsn - (u8)(resp->rsn - 1));
	if (!k)
		return resp->has_wqe ? resp_wqe(qp) : NULL;
	if (qp->srq) {
		if (!resp->resv || k > MRXE_RESP_RESV)
			return NULL;
		while (resp->resv_n < k) {
			if (resp_take_wqe(qp, resp_resv_slot(qp, resp->resv_n)))
				return NULL;
			resp->resv_n++;
		}
		wqe = (struct mrxe_recv_wqe *)resp_resv_slot(qp, k - 1);
		max_sge = qp->srq->max_sge;
	} else {
		if (!q || !resp->peek)
			return NULL;
		spin_lock_irqsave(&qp->rq_lock, flags);
		n = mrxe_ring_avail(q);
		if (k > n) {
			spin_unlock_irqrestore(&qp->rq_lock, flags);
			return NULL;
		}
		memcpy(resp->peek, mrxe_ring_slot_ptr(q, q->cons + k - 1),
		       resp->wqe_size);
		spin_unlock_irqrestore(&qp->rq_lock, flags);
		wqe = (struct mrxe_recv_wqe *)resp->peek;
		max_sge = qp->rq_max_sge;
	}
	return resp_wqe_sane(wqe, max_sge, resp->wqe_size) ? wqe : NULL;
}

/*
 * Place a MetaRoCE SEND packet ahead of ePSN in its receive WQE at its MRH
 * offset (wire-format.rst "Receiver rules for placement").  It stays held;
 * resp_send() still consumes the WQE, checks lengths and completes in
 * order, and only skips the copy.
 */
static void resp_meta_place_send(struct mrxe_qp *qp, struct sk_buff *skb)
{
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	struct mrxe_rx_meta *rm = mrxe_pkt_meta(skb);
	u32 mtu = qp->pipe.attr.mtu;
	struct mrxe_recv_wqe *wqe;

	if (!pi->paylen || rm->offset % mtu ||
	    (!(pi->mask & MRXE_M_LAST) && pi->paylen != mtu))
		return;
	wqe = resp_meta_send_wqe(qp, skb);
	if (!wqe)
		return;
	if ((u64)rm->offset + pi->paylen > resp_wqe_bytes(wqe))
		return;		/* the in-order pass reports LOC_LEN_ERR */
	if (!mrxe_sgl_copy(qp->pd, (struct mrxe_sge *)(wqe + 1), wqe->num_sge,
			   rm->offset,
			   mrxe_pkt_payload(skb), pi->paylen, MRXE_COPY_TO_MR,
			   IB_ACCESS_LOCAL_WRITE)) {
		rm->placed = 1;
		mrxe_qp_counter_inc(qp, MRXE_CNT_META_PLACED);
	}
}

/*
 * Place a MetaRoCE WRITE packet that arrived ahead of ePSN at once, at its
 * own RETH's VA + MRH offset (wire-format.rst "Header stack and
 * placement"), checked against its own R_Key for its own bytes.  It stays
 * held: the in-order pass (resp_write()) still checks the message as IBA
 * 9.7.4.1.4 does, NAKs what is wrong, completes WRITE with immediate in
 * order, and only skips the copy.  Anything that does not check out here
 * is simply not placed early; the in-order pass then decides.
 */
static void resp_meta_place(struct mrxe_qp *qp, struct sk_buff *skb)
{
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	struct mrxe_rx_meta *rm = mrxe_pkt_meta(skb);
	u32 mtu = qp->pipe.attr.mtu;
	struct mrxe_wrorder_pkt wp;
	struct mrxe_mr *mr = NULL;
	struct mrxe_reth reth;

	if (pi->mask & MRXE_M_SEND) {
		resp_meta_place_send(qp, skb);
		return;
	}
	/*
	 * A WRITE's last packet is copied in PSN order only: when its last
	 * byte shows, every byte of the WRITE and of the requests before it
	 * is in place, as on an in-order responder (IBA 9.5).  Applications
	 * poll a WRITE's last byte for its arrival (perftest's ib_write_lat,
	 * rsockets' riostream); placed early, the marker showed while earlier
	 * packets still waited for the in-order pass (known-issues.rst).
	 */
	if (!(pi->mask & MRXE_M_WRITE) || (pi->mask & MRXE_M_ATOMIC_WRITE) ||
	    (pi->mask & MRXE_M_LAST) || !pi->paylen)
		return;
	if (!(resp_qp_access(qp) & IB_ACCESS_REMOTE_WRITE))
		return;
	mrxe_reth_parse(mrxe_pkt_meta_reth(skb), &reth);
	/* an MTU-sized packet at an MTU boundary inside the message */
	if (rm->offset % mtu || (u64)rm->offset + pi->paylen > reth.len ||
	    pi->paylen != mtu)
		return;
	/* not over an older WRITE still to be executed (mrxe_wrorder.h) */
	resp_meta_wpkt(qp, skb, &reth, &wp);
	if (!mrxe_wrorder_may_place(&qp->pipe.meta->wrorder, &wp))
		return;
	if (mrxe_rkey_resolve(qp, reth.rkey, reth.va + rm->offset,
			      pi->paylen, IB_ACCESS_REMOTE_WRITE, &mr))
		return;
	if (!mrxe_mr_copy(mr, reth.va + rm->offset, mrxe_pkt_payload(skb),
			  pi->paylen, MRXE_COPY_TO_MR)) {
		rm->placed = 1;
		mrxe_wrorder_wrote(&qp->pipe.meta->wrorder, &wp, true);
		mrxe_qp_counter_inc(qp, MRXE_CNT_META_PLACED);
	}
	mrxe_mr_put(mr);
}

/*
 * PSNs a MetaRoCE READ request takes: one per response packet (IBA
 * 9.7.4.1.6); a FLUSH (and a zero-length READ) takes one.
 */
static u32 resp_meta_read_npsn(struct mrxe_qp *qp, struct sk_buff *skb)
{
	struct mrxe_reth reth;

	if (!(mrxe_pkt(skb)->mask & MRXE_M_READ) ||
	    (mrxe_pkt(skb)->mask & MRXE_M_FLUSH))
		return 1;
	mrxe_reth_parse(mrxe_pkt_hdr(skb, MRXE_HDR_RETH), &reth);
	return reth.len ? DIV_ROUND_UP(reth.len, qp->pipe.attr.mtu) : 1;
}

/*
 * A re-requested READ [@psn, @psn + @n) that starts below the execution
 * point but reaches past it.  The requester asks again for runs of the
 * PSNs its READ request took (IBA 9.7.4.1.6), cut where it already has
 * the responses, so its runs need not match the requests the responder
 * executed: after a lost request, a tail probe for one PSN at resp.psn
 * is executed as a one-PSN READ, and the timeout's run from that PSN then
 * arrives as a duplicate that also covers PSNs never executed here.  The
 * replay streams the whole run (READ is idempotent), so those PSNs are
 * answered: count them executed too.  Otherwise resp.psn stays behind,
 * every later request is held for a PSN the requester will never send
 * again, and the QP ends in a retry-exceeded error (an 8 MiB READ at 1%
 * loss, SRP's target under loss).  Requests held inside the run are
 * re-requests of parts of it (the PSNs are this READ's): dropped, unless
 * one reaches past the run; the execution point stops at that one.
 */
static void resp_meta_read_straddle(struct mrxe_qp *qp, u32 psn, u32 n)
{
	struct mrxe_meta_qp *m = qp->pipe.meta;
	struct mrxe_resp_state *resp = &qp->resp;
	u32 last = mrxe_psn_add(psn, n - 1), q, slot;
	struct sk_buff *held;

	if (mrxe_psn_before(last, resp->psn))
		return;
	mrxe_qp_counter_inc(qp, MRXE_CNT_META_READ_STRADDLE);
	for (q = resp->psn; ; q = mrxe_psn_add(q, 1)) {
		slot = q & (MRXE_PKT_RING - 1);
		held = m->stash[slot];
		if (held && mrxe_pkt(held)->psn == q) {
			/*
			 * A held request that ends past the run is executed
			 * as usual from here (the overlap is answered twice:
			 * READ is idempotent).
			 */
			if (!(mrxe_pkt(held)->mask & MRXE_M_READ) ||
			    mrxe_psn_after(mrxe_psn_add(q,
					   resp_meta_read_npsn(qp, held) - 1),
					   last)) {
				resp->psn = q;
				return;
			}
			m->stash[slot] = NULL;
			kfree_skb(held);
		}
		mrxe_reorder_accept(&m->rcv.rw, q);
		if (q == last)
			break;
	}
	resp->psn = mrxe_psn_add(last, 1);
}

/*
 * A request as the `auto` rules see it (proto/mrxe_auto.h): the receive
 * side negotiates when the QP is `auto` or fell back for an `auto` peer.
 */
static enum mrxe_auto_rx resp_auto_classify(struct mrxe_qp *qp,
					    struct sk_buff *skb)
{
	struct mrxe_auto_rsp r = {
		.is_auto = qp->pipe.meta &&
			   (qp->pipe.auto_state != MRXE_AUTO_OFF ||
			    qp->pipe.rx_fallback),
		.switched = qp->pipe.meta_rx,
		.meta_seen = qp->pipe.rx_meta_seen,
		.epsn = qp->resp.psn,
		.window = MRXE_PKT_RING,
	};

	return mrxe_auto_rx_classify(&r, mrxe_pkt_meta(skb)->meta,
				     mrxe_pkt_meta(skb)->cap,
				     mrxe_pkt(skb)->psn);
}

/*
 * A forced metaroce QP whose first request is RoCEv2 with CAP: the peer is
 * `auto`.  Its receive side answers in RoCEv2 (echoing CAP) until the
 * peer switches, as an `auto` responder's does (wire-format.rst step 2);
 * its send side stays MetaRoCE.  The caller hands the packet to the
 * standard path.
 */
static void resp_meta_fallback(struct mrxe_qp *qp, struct sk_buff *skb)
{
	qp->pipe.rx_fallback = true;
	qp->pipe.meta_rx = false;
	mrxe_meta_rcv_init(qp, qp->resp.psn);
	mrxe_dbg_dev(qp_dev(qp), "qp %u: metaroce: `auto` peer, receive side negotiates from psn %#x\n",
		     qp->ibqp.qp_num, mrxe_pkt(skb)->psn);
	mrxe_pipe_publish_mode(qp);
}

/*
 * A re-requested READ run (@psn, @n PSNs) whose tail the active response
 * stream has not sent yet: the stream sends that tail anyway, so the
 * replay asks only for what was sent before it (RETH length trimmed in the
 * held packet; every response before rd_psn is a full MTU, IBA 9.7.5.2.4),
 * and a run the stream has not reached at all is not replayed (returns
 * true: drop it).  Replayed whole after the stream, the requester got
 * those responses twice: its response deadline fires while a busy
 * responder's queue still holds them (ib_read_bw -q 4 between two
 * namespaces, lossless: up to 12000 responses sent twice a run).
 */
static bool resp_meta_read_trim(struct mrxe_qp *qp, struct sk_buff *skb,
				u32 psn, u32 n)
{
	struct mrxe_resp_state *resp = &qp->resp;
	u32 last = mrxe_psn_add(psn, n - 1);
	struct mrxe_reth reth;
	s32 sent;

	if (!resp->rd_active || mrxe_psn_before(psn, resp->rd_first_psn) ||
	    mrxe_psn_after(last, resp->rd_last_psn) ||
	    mrxe_psn_before(last, resp->rd_psn))
		return false;
	sent = mrxe_psn_diff(resp->rd_psn, psn);
	mrxe_qp_counter_add(qp, MRXE_CNT_READ_DUP_STREAMING,
			    sent > 0 ? n - sent : n);
	if (sent <= 0)
		return true;
	mrxe_reth_parse(mrxe_pkt_hdr(skb, MRXE_HDR_RETH), &reth);
	reth.len = sent * qp->pipe.attr.mtu;
	mrxe_reth_build(mrxe_pkt_hdr(skb, MRXE_HDR_RETH), &reth);
	return false;
}

/*
 * A re-requested READ run (@psn, @n PSNs) that a duplicate already waiting
 * in the replay queue covers: that one has sent nothing yet, so each PSN
 * asked for again will be sent once anyway (returns true: drop it).  The
 * requester asks again for a run it asked for more than an SRTT ago (a
 * gap round, a probe, a timeout); a responder busy with a long stream
 * may not have reached the first request by then, and both were replayed.
 * Only a run wholly inside a queued one is dropped; one reaching past it
 * is replayed (the overlap twice: READ is idempotent).
 */
static bool resp_meta_read_queued(struct mrxe_qp *qp, u32 psn, u32 n)
{
	struct sk_buff_head *q = &qp->pipe.meta->replay;
	u32 last = mrxe_psn_add(psn, n - 1), qlast;
	struct mrxe_pkt_info *qi;
	struct sk_buff *queued;
	unsigned long flags;
	bool covered = false;

	spin_lock_irqsave(&q->lock, flags);
	skb_queue_walk(q, queued) {
		qi = mrxe_pkt(queued);
		if (!(qi->mask & MRXE_M_READ))
			continue;
		qlast = mrxe_psn_add(qi->psn,
				     resp_meta_read_npsn(qp, queued) - 1);
		if (!mrxe_psn_before(psn, qi->psn) &&
		    !mrxe_psn_after(last, qlast)) {
			covered = true;
			break;
		}
	}
	spin_unlock_irqrestore(&q->lock, flags);
	if (covered)
		mrxe_qp_counter_add(qp, MRXE_CNT_READ_DUP_QUEUED, n);
	return covered;
}

/* One request packet arrived: window verdict, hold it, or answer a dup. */
static void resp_meta_rx(struct mrxe_qp *qp, struct sk_buff *skb)
{
	struct mrxe_meta_qp *m = qp->pipe.meta;
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	struct mrxe_rx_meta *rm = mrxe_pkt_meta(skb);
	u32 psn = pi->psn, n, i;

	switch (resp_auto_classify(qp, skb)) {
	case MRXE_AUTO_RX_META:
		qp->pipe.rx_meta_seen = true;
		break;
	case MRXE_AUTO_RX_DUP:
		/* a RoCEv2 duplicate from before an `auto` switch */
		mrxe_qp_counter_inc(qp, MRXE_CNT_RCV_DUP_REQ);
		goto drop;
	default:
		mrxe_meta_mismatch(qp, "RoCEv2 request on a MetaRoCE QP", psn);
		goto drop;
	}
	if ((pi->opcode & MRXE_TR_MASK) != MRXE_TR_RC)
		goto drop;
	/* every held request needs its own slot until it is executed */
	if (mrxe_psn_diff(psn, qp->resp.psn) >= MRXE_PKT_RING) {
		m->oow_local++;
		goto drop;
	}
	/* a FLUSH's RETH length is its range: one PSN, one empty response */
	n = resp_meta_read_npsn(qp, skb);
	if (n > MRXE_META_READ_CHUNK) {
		mrxe_meta_mismatch(qp, "MetaRoCE READ over a chunk", psn);
		goto drop;
	}
	m->rcv.last_tsval = rm->tsval;
	m->rcv.ack_sport = rm->sport;
	switch (mrxe_reorder_accept(&m->rcv.rw, psn)) {
	case MRXE_RX_NEW:
		/* a READ takes one PSN per response packet (IBA 9.7.4.1.6) */
		for (i = 1; i < n; i++)
			mrxe_reorder_accept(&m->rcv.rw, mrxe_psn_add(psn, i));
		if (psn != qp->resp.psn)
			resp_meta_place(qp, skb);
		m->stash[psn & (MRXE_PKT_RING - 1)] = skb;
		m->ack_pending = true;
		return;
	case MRXE_RX_DUPLICATE:
		/* at once: the SACKETH DUP flag tells the sender it was spurious */
		m->ack_pending = true;
		resp_flush_ack(qp);
		if (!mrxe_psn_before(psn, qp->resp.psn))
			goto drop;	/* held, not executed yet */
		if (pi->mask & (MRXE_M_READ | MRXE_M_ATOMIC_WRITE)) {
			if (pi->mask & MRXE_M_READ) {
				resp_meta_read_straddle(qp, psn, n);
				if (resp_meta_read_trim(qp, skb, psn, n) ||
				    resp_meta_read_queued(qp, psn,
							  resp_meta_read_npsn(qp, skb)))
					goto drop;
			}
			if (skb_queue_len(&m->replay) >= MRXE_META_REPLAY_MAX) {
				mrxe_qp_counter_inc(qp, MRXE_CNT_READ_DUP_OVERFLOW);
				goto drop;
			}
			skb_queue_tail(&m->replay, skb);
			return;
		}
		if (pi->mask & MRXE_M_ATOMIC)
			resp_duplicate(qp, skb);	/* replays the result */
		goto drop;
	default:
		goto drop;
	}
drop:
	kfree_skb(skb);
}

static bool resp_meta_run(struct mrxe_qp *qp, int *budget)
{
	struct mrxe_resp_state *resp = &qp->resp;
	bool progress = false;
	struct sk_buff *skb;

	do {
		/*
		 * What arrived goes first: holding a request is cheap, and its
		 * ACK and a duplicate READ's replay (at the next message
		 * boundary, wire-format.rst) must not wait in rxq behind the
		 * response streams of every READ queued before it.  Taking
		 * one packet per streamed READ kept a window of requests in
		 * rxq: SRTT 124-229 ms over a 12 ms path, and every
		 * re-request waited for that backlog (known-issues.rst).
		 */
		while (*budget > 0 && !qp->pipe.want_error &&
		       (skb = skb_dequeue(&resp->rxq))) {
			if (!mrxe_pkt_meta(skb)->meta &&
			    resp_auto_classify(qp, skb) ==
			    MRXE_AUTO_RX_FALLBACK) {
				resp_meta_fallback(qp, skb);
				skb_queue_head(&resp->rxq, skb);
				return true;	/* next run: standard path */
			}
			resp_meta_rx(qp, skb);
			(*budget)--;
			progress = true;
			/*
			 * Execute what is in order now, not after the backlog:
			 * taking all of rxq first spent every run's budget
			 * before anything ran, and no ACK may cover requests
			 * not executed (resp_meta_ack_ok), so while the
			 * requester kept rxq full it heard one ACK per window,
			 * 50-110 ms apart, and its RTO fired (spurious: lab,
			 * lossless ib_write_bw, 2026-12-07).
			 */
			if (!resp->rd_active)
				progress |= resp_meta_drain(qp, budget);
		}
		if (resp->rd_active)
			progress |= resp_read_step(qp, budget);
		if (!resp->rd_active)
			progress |= resp_meta_drain(qp, budget);
	} while (*budget > 0 && !qp->pipe.want_error &&
		 !skb_queue_empty(&resp->rxq));
	/* ACKs are coalesced per run: at most one run late (DELACK) */
	if (!qp->pipe.want_error)
		resp_flush_ack(qp);
	return progress;
}

bool mrxe_resp_run(struct mrxe_qp *qp, int *budget)
{
	struct mrxe_resp_state *resp = &qp->resp;
	enum ib_qp_state st = qp->pipe.state;
	bool progress = false;
	struct sk_buff *skb;

	if (st != IB_QPS_RTR && st != IB_QPS_RTS && st != IB_QPS_SQD &&
	    st != IB_QPS_SQE) {
		skb_queue_purge(&resp->rxq);
		return false;
	}
	if (qp->pipe.meta_rx)
		return resp_meta_run(qp, budget);
	/*
	 * A duplicate READ (the requester went back N) must not wait behind
	 * the stream it replaces: take it before sending more of the stream.
	 */
	while (resp->rd_active && (skb = resp_peek_dup(qp))) {
		resp_packet(qp, skb);
		kfree_skb(skb);
		progress = true;
	}
	if (resp->rd_active)
		progress |= resp_read_step(qp, budget);
	while (*budget > 0 && !resp->rd_active && !qp->pipe.want_error &&
	       (skb = skb_dequeue(&resp->rxq))) {
		if (mrxe_pkt_meta(skb)->meta) {
			/* auto: the peer switched at our ePSN (step 4) */
			if (resp_auto_classify(qp, skb) ==
			    MRXE_AUTO_RX_SWITCH) {
				skb_queue_head(&resp->rxq, skb);
				if (resp->ack_pending)
					resp_flush_ack(qp);
				mrxe_meta_upgrade_rx(qp);
				return resp_meta_run(qp, budget) || true;
			}
			mrxe_meta_mismatch(qp, "MetaRoCE request on a standard QP",
					   mrxe_pkt(skb)->psn);
			kfree_skb(skb);
			continue;
		}
		/* auto: an mrxe requester offers MetaRoCE: echo CAP */
		if (qp->pipe.meta && mrxe_pkt_meta(skb)->cap)
			qp->pipe.cap_peer = true;
		resp_packet(qp, skb);
		kfree_skb(skb);
		(*budget)--;
		progress = true;
	}
	/* ACK coalescing: one ACK for everything drained in this run */
	if (resp->ack_pending && !qp->pipe.want_error &&
	    (skb_queue_empty(&resp->rxq) || *budget <= 0))
		resp_flush_ack(qp);
	return progress;
}

/* IBA 10.3.1: receive WQEs complete with flush errors in ERROR. */
void mrxe_resp_flush(struct mrxe_qp *qp)
{
	struct mrxe_resp_state *resp = &qp->resp;
	struct mrxe_queue *q = qp->rq;
	unsigned long flags;

	skb_queue_purge(&resp->rxq);
	mrxe_meta_purge(qp);
	resp_put_mrs(qp);
	resp->ack_pending = false;
	if (!resp->wqe)
		return;
	if (resp->has_wqe)
		resp_complete(qp, IB_WC_WR_FLUSH_ERR, IB_WC_RECV, 0, 0, 0, 0,
			      NULL, false);
	/* SRQ WQEs this QP took ahead are its own now: flushed with it */
	while (resp->resv_n) {
		resp_resv_pop(qp);
		resp->has_wqe = true;
		resp_complete(qp, IB_WC_WR_FLUSH_ERR, IB_WC_RECV, 0, 0, 0, 0,
			      NULL, false);
	}
	if (qp->srq || !q)
		return;		/* other SRQ WQEs belong to the SRQ, not the QP */
	for (;;) {
		spin_lock_irqsave(&qp->rq_lock, flags);
		if (!mrxe_ring_avail(q)) {
			spin_unlock_irqrestore(&qp->rq_lock, flags);
			break;
		}
		memcpy(resp->wqe, mrxe_ring_slot_ptr(q, q->cons),
		       MRXE_RECV_WQE_HDR_SIZE);
		mrxe_queue_advance(q);
		spin_unlock_irqrestore(&qp->rq_lock, flags);
		resp->has_wqe = true;
		resp_complete(qp, IB_WC_WR_FLUSH_ERR, IB_WC_RECV, 0, 0, 0, 0,
			      NULL, false);
	}
}
