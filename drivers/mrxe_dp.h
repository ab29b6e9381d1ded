/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Data-path internals shared by mrxe_task.c, mrxe_req.c, mrxe_resp.c,
 * mrxe_comp.c and mrxe_recv.c.  Not part of the contract with the object
 * code: everything here runs in the per-QP work item with pipe.mutex held,
 * unless marked otherwise.
 */
#ifndef MRXE_DP_H
#define MRXE_DP_H

#include "mrxe.h"
#include "mrxe_wire.h"

/* uverbs send flags (ABI: mrxe_send_wqe.send_flags are IBV_SEND_*) */
#define MRXE_SEND_FENCE		(1U << 0)
#define MRXE_SEND_SIGNALED	(1U << 1)
#define MRXE_SEND_SOLICITED	(1U << 2)
#define MRXE_SEND_INLINE	(1U << 3)

/* wc_flags in struct mrxe_cqe (ABI: IBV_WC_* values) */
#define MRXE_WC_GRH		(1U << 0)
#define MRXE_WC_WITH_IMM	(1U << 1)
#define MRXE_WC_WITH_INV	(1U << 3)

/* Kernel REG_MR WR (ib_wr_opcode, not in the uverbs enum) */
#define MRXE_WR_REG_MR		0x20

/*
 * IBA 1.5 MPE send WR opcodes and their completion opcodes (ABI: IBV_WR_ /
 * IBV_WC_ values, IB_UVERBS_WR_FLUSH/ATOMIC_WRITE and IB_UVERBS_WC_* in
 * 6.2+ uapi; spelled out so the 6.1 build has them too).
 */
#define MRXE_WR_FLUSH		14
#define MRXE_WR_ATOMIC_WRITE	15
#define MRXE_WC_FLUSH		8
#define MRXE_WC_ATOMIC_WRITE	9

enum mrxe_swqe_state {
	MRXE_SWQE_POSTED,	/* not (fully) sent */
	MRXE_SWQE_PENDING,	/* all sent, waiting for ACK/response */
	MRXE_SWQE_DONE,		/* ready to complete (status says how) */
};

/* Private copy of a send WQE plus its progress. */
struct mrxe_swqe {
	u8	state;
	bool	psn_valid;	/* first_psn/last_psn assigned */
	bool	rd_counted;	/* counted in req.rd_atomic */
	u8	pad0;
	u32	status;		/* enum ib_wc_status */
	u32	mask;		/* MRXE_M_SEND/WRITE/READ/ATOMIC, 0 = local */
	u32	first_psn;
	u32	last_psn;
	u32	offset;		/* next byte to send */
	u32	len;		/* message length */
	u32	msn;		/* MetaRoCE: MRH MSN of this message */
	u32	rsn;		/* receive WQE it consumes at the peer (RWR) */
	struct mrxe_send_wqe wr;	/* followed by sges / inline data */
};

static inline struct mrxe_sge *swqe_sge(struct mrxe_swqe *w)
{
	return (struct mrxe_sge *)(&w->wr + 1);
}

static inline u8 *swqe_inline(struct mrxe_swqe *w)
{
	return (u8 *)(&w->wr + 1);
}

static inline struct mrxe_swqe *mrxe_swqe_at(struct mrxe_qp *qp, u32 idx)
{
	return (struct mrxe_swqe *)(qp->req.wqes +
				    (size_t)(idx & (qp->req.nslots - 1)) *
				    qp->req.stride);
}

static inline bool mrxe_qp_is_rc(struct mrxe_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC;
}

static inline bool mrxe_qp_is_ud(struct mrxe_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

/* Slot @idx of a ring (the ring owner validated the count). */
static inline void *mrxe_ring_slot_ptr(struct mrxe_queue *q, u32 idx)
{
	return (u8 *)q->buf + MRXE_RING_HDR_SIZE +
	       ((size_t)(idx & q->index_mask) << q->log2_elem_size);
}

/* Entries available to the consumer, 0 for an inconsistent ring. */
static inline u32 mrxe_ring_avail(struct mrxe_queue *q)
{
	u32 n = mrxe_queue_count(q);

	return n > q->index_mask + 1 ? 0 : n;
}

/* Per-packet info of a received skb, kept in skb->cb by mrxe_rcv(). */
static inline struct mrxe_pkt_info *mrxe_pkt(struct sk_buff *skb)
{
	return (struct mrxe_pkt_info *)skb->cb;
}

/*
 * What mrxe_rcv() learnt from the MetaRoCE header of a TVer 1 packet, kept
 * in skb->cb after struct mrxe_pkt_info.  The MRH (and the RETH a WRITE
 * MIDDLE/LAST carries in MetaRoCE mode) is stripped before the packet is
 * queued, so the pipeline sees the standard header layout of its opcode
 * (plus the SACKETH after an ACK's AETH, counted in hdr_len).
 */
struct mrxe_rx_meta {
	u8	meta;		/* TVer 1 packet, MRH stripped */
	u8	cap;		/* BTH MRXE_BTH_META_CAP (TVer 0) */
	u8	flags;		/* MRH flags */
	u8	placed;		/* WRITE/SEND payload placed on arrival */
	u16	sport;		/* UDP source port (the sender's path entropy) */
	u8	rsn;		/* MRH RSN (SEND/WRITE), low 8 bits */
	u32	msn;
	u32	offset;
	u32	tsval;
	u32	tsecr;
};

struct mrxe_rx_cb {
	struct mrxe_pkt_info	pi;
	struct mrxe_rx_meta	m;
};

static inline struct mrxe_rx_meta *mrxe_pkt_meta(struct sk_buff *skb)
{
	return &((struct mrxe_rx_cb *)skb->cb)->m;
}

static inline u8 *mrxe_pkt_hdr(struct sk_buff *skb, u32 hdr)
{
	return skb->data + mrxe_op_hdr_off(mrxe_pkt(skb)->opcode, hdr);
}

/*
 * The RETH of a MetaRoCE WRITE: FIRST/ONLY carry it at its standard
 * offset; the one MetaRoCE adds to MIDDLE/LAST is kept by the receive
 * path in the headroom right before the BTH (mrxe_meta_strip()).
 */
static inline u8 *mrxe_pkt_meta_reth(struct sk_buff *skb)
{
	if (mrxe_pkt(skb)->mask & MRXE_HDR_RETH)
		return mrxe_pkt_hdr(skb, MRXE_HDR_RETH);
	return skb->data - MRXE_RETH_LEN;
}

static inline u8 *mrxe_pkt_payload(struct sk_buff *skb)
{
	return skb->data + mrxe_pkt(skb)->hdr_len;
}

/* mrxe_task.c */
void mrxe_pipe_sched(struct mrxe_qp *qp);	/* any context */
bool mrxe_pipe_enqueue(struct mrxe_qp *qp, struct sk_buff_head *q, u32 qmax,
		       struct sk_buff *skb);	/* softirq receive */
void mrxe_pipe_set_error(struct mrxe_qp *qp);
u16 mrxe_pipe_sport(struct mrxe_qp *qp, u32 psn);
void mrxe_pipe_publish_mode(struct mrxe_qp *qp);
u8 mrxe_pipe_ecn(struct mrxe_qp *qp);
struct sk_buff *mrxe_pipe_alloc_pkt(struct mrxe_qp *qp,
				    const struct mrxe_av *av, u32 len);
int mrxe_pipe_xmit(struct mrxe_qp *qp, const struct mrxe_av *av,
		   struct sk_buff *skb, u16 sport);
bool mrxe_pipe_tx_full(struct mrxe_qp *qp);	/* local queue cap reached */
void mrxe_rto_arm(struct mrxe_qp *qp);
void mrxe_rto_stop(struct mrxe_qp *qp);

/* mrxe_meta.c: MetaRoCE glue (engines in drivers/proto/) */
int mrxe_meta_alloc(struct mrxe_qp *qp);
void mrxe_meta_free(struct mrxe_qp *qp);
void mrxe_meta_snd_init(struct mrxe_qp *qp, u32 psn);
void mrxe_meta_rcv_init(struct mrxe_qp *qp, u32 psn);
void mrxe_meta_purge(struct mrxe_qp *qp);
void mrxe_meta_arm(struct mrxe_qp *qp);
void mrxe_meta_timer_stop(struct mrxe_qp *qp);
void mrxe_meta_sync_counters(struct mrxe_qp *qp);
void mrxe_meta_mismatch(struct mrxe_qp *qp, const char *why, u32 psn);
void mrxe_meta_upgrade_tx(struct mrxe_qp *qp);
bool mrxe_meta_rto_grace(struct mrxe_qp *qp);
void mrxe_meta_upgrade_rx(struct mrxe_qp *qp);
void mrxe_meta_build_mrh(struct mrxe_qp *qp, u8 *bth, u8 cls, u8 flags,
			 u32 msn, u32 offset, u32 tsecr);
static inline bool mrxe_meta_is_rsp_op(u8 opcode)
{
	return mrxe_op_mask(opcode) & (MRXE_M_READ | MRXE_M_ATOMIC);
}

/* mrxe_path_glue.c: MetaRoCE multipath (engine in drivers/proto/) */
void mrxe_path_glue_init(struct mrxe_qp *qp);
bool mrxe_path_glue_room(struct mrxe_qp *qp);
u8 mrxe_path_glue_pick(struct mrxe_qp *qp, u32 psn, bool retx, u8 *bth);
u16 mrxe_path_glue_sport(struct mrxe_qp *qp, u8 path);
u8 mrxe_path_glue_sent(struct mrxe_qp *qp, u32 psn, bool retx);
int mrxe_path_glue_fill(struct sk_buff *skb, struct mrxe_qp *qp);

/* mrxe_req.c */
bool mrxe_req_meta_timer(struct mrxe_qp *qp);
u32 mrxe_meta_chunk_last(struct mrxe_qp *qp, struct mrxe_swqe *w, u32 psn);
int mrxe_req_meta_rerequest(struct mrxe_qp *qp, u32 psn, bool one, u32 *last);
bool mrxe_req_run(struct mrxe_qp *qp, int *budget);
void mrxe_req_rewind(struct mrxe_qp *qp, u32 psn);
void mrxe_req_acked(struct mrxe_qp *qp, u32 psn);
void mrxe_req_flush(struct mrxe_qp *qp);
void mrxe_req_reset(struct mrxe_qp *qp);
extern const struct mrxe_loss_ops mrxe_gbn_ops;

/* mrxe_comp.c */
bool mrxe_comp_run(struct mrxe_qp *qp, int *budget);
void mrxe_comp_post_send(struct mrxe_qp *qp, struct mrxe_swqe *w);

/* mrxe_resp.c */
bool mrxe_resp_run(struct mrxe_qp *qp, int *budget);
void mrxe_resp_flush(struct mrxe_qp *qp);
void mrxe_resp_reset(struct mrxe_qp *qp);
void mrxe_resp_release_mr(struct mrxe_qp *qp, struct mrxe_mr *mr);
int mrxe_resp_send_meta_ack(struct mrxe_qp *qp, u8 syndrome, u32 psn);

#endif /* MRXE_DP_H */
