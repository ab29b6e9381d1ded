// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Packet receive (softirq, UDP encap_rcv context) and ICRC.  Validates the
 * RoCEv2 packet (IBA 9.6 header validation, A17.3.3 ICRC), finds the
 * destination QP and queues the skb for the QP's work item: requests to the
 * responder, responses to the completer.  No sleeping, no heavy work here.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include "mrxe_dp.h"

/* L3 header of @skb and whether it is IPv6; NULL when unusable. */
static const u8 *mrxe_l3(struct sk_buff *skb, bool *ipv6)
{
	const u8 *l3 = skb_network_header(skb);
	const u8 *udp = skb->data - MRXE_UDP_HDR_LEN;

	if (udp - l3 == MRXE_IPV4_HDR_LEN && (l3[0] >> 4) == 4 &&
	    (l3[0] & 0xf) == 5) {
		*ipv6 = false;
		return l3;
	}
	if (udp - l3 == MRXE_IPV6_HDR_LEN && (l3[0] >> 4) == 6) {
		*ipv6 = true;
		return l3;
	}
	return NULL;
}

/*
 * Fill the ICRC of an outgoing packet: called by mrxe_net_xmit() once the
 * IP/UDP headers are final, skb->data at the IP header, headers linear.
 */
void mrxe_icrc_generate(struct sk_buff *skb)
{
	u8 *l3 = skb_network_header(skb);
	u8 *udp = skb_transport_header(skb);
	u8 *bth = udp + MRXE_UDP_HDR_LEN;
	u8 *end = skb_tail_pointer(skb);
	bool ipv6 = (l3[0] >> 4) == 6;

	if (WARN_ON_ONCE(skb_is_nonlinear(skb) ||
			 end - bth < MRXE_BTH_LEN + MRXE_ICRC_LEN))
		return;
	mrxe_icrc_put(end - MRXE_ICRC_LEN,
		      mrxe_icrc(l3, ipv6, udp, bth,
				end - bth - MRXE_ICRC_LEN));
}

/*
 * Remove the MRH (and the RETH MetaRoCE adds to WRITE MIDDLE/LAST) of a
 * parsed TVer 1 packet: the BTH moves up over them, so the pipeline finds
 * every header at its standard offset.  The added RETH is kept in the
 * headroom right before the moved BTH (mrxe_pkt_meta_reth()): the
 * responder places a WRITE packet on arrival from it.  Returns the bytes
 * removed.
 */
static u32 mrxe_meta_strip(struct sk_buff *skb, struct mrxe_pkt_info *pi)
{
	u32 extra = mrxe_meta_hdr_len(pi->opcode) -
		    mrxe_op_hdr_len(pi->opcode);
	u8 reth[MRXE_RETH_LEN];
	bool kept = extra == MRXE_MRH_LEN + MRXE_RETH_LEN;

	if (kept)
		memcpy(reth, skb->data + MRXE_BTH_LEN + MRXE_MRH_LEN,
		       MRXE_RETH_LEN);
	memmove(skb->data + extra, skb->data, MRXE_BTH_LEN);
	__skb_pull(skb, extra);
	if (kept)
		memcpy(skb->data - MRXE_RETH_LEN, reth, MRXE_RETH_LEN);
	pi->hdr_len -= extra;
	return extra;
}

void mrxe_rcv(struct mrxe_dev *dev, struct sk_buff *skb)
{
	struct mrxe_rx_meta *rm = mrxe_pkt_meta(skb);
	struct mrxe_mrh mrh;
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	struct sk_buff_head *q;
	const u8 *udp, *l3;
	struct mrxe_qp *qp;
	u32 len, icrc, qmax;
	bool queued;
	bool ipv6, ce;
	int err;

	BUILD_BUG_ON(sizeof(struct mrxe_pkt_info) > sizeof(skb->cb));

	if (unlikely(skb_linearize(skb)))
		goto drop;
	l3 = mrxe_l3(skb, &ipv6);
	if (unlikely(!l3))
		goto drop;
	udp = skb->data - MRXE_UDP_HDR_LEN;
	len = mrxe_get16(udp + 4);
	/* UDP length covers BTH..ICRC; the frame may carry padding */
	if (unlikely(len < MRXE_UDP_HDR_LEN ||
		     len - MRXE_UDP_HDR_LEN > skb->len)) {
		mrxe_counter_inc(dev, MRXE_CNT_RX_DROP_LENGTH);
		goto drop;
	}
	len -= MRXE_UDP_HDR_LEN;

	/*
	 * A17.3.3: the ICRC first, so that no field of a corrupted packet is
	 * believed (a flipped TVer would otherwise count as a mode mismatch,
	 * a flipped opcode as a malformed packet).
	 */
	if (unlikely(len < MRXE_BTH_LEN + MRXE_ICRC_LEN)) {
		mrxe_counter_inc(dev, MRXE_CNT_RX_DROP_LENGTH);
		goto drop;
	}
	icrc = mrxe_icrc(l3, ipv6, udp, skb->data, len - MRXE_ICRC_LEN);
	if (unlikely(icrc != mrxe_icrc_get(skb->data + len - MRXE_ICRC_LEN))) {
		mrxe_counter_inc(dev, MRXE_CNT_ICRC_ERR);
		goto drop;
	}

	BUILD_BUG_ON(sizeof(struct mrxe_rx_cb) > sizeof(skb->cb));
	memset(rm, 0, sizeof(*rm));
	if (mrxe_bth_tver(skb->data) == MRXE_META_TVER) {
		/* MetaRoCE (wire-format.rst): TVer 1, MRH after the BTH */
		err = mrxe_meta_pkt_parse(skb->data, len, pi, &mrh);
		if (unlikely(err)) {
			mrxe_counter_inc(dev, MRXE_CNT_MODE_MISMATCH);
			mrxe_rx_count_parse_err(dev, err);
			mrxe_err_dev(dev, "malformed MetaRoCE packet (%d), opcode %#x qpn %#x dropped\n",
				     err, mrxe_bth_opcode(skb->data),
				     mrxe_bth_qpn(skb->data));
			goto drop;
		}
		rm->meta = 1;
		rm->flags = mrh.flags;
		rm->sport = mrxe_get16(udp);
		rm->msn = mrh.msn;
		rm->rsn = mrh.rsn;
		rm->offset = mrh.offset;
		rm->tsval = mrh.tsval;
		rm->tsecr = mrh.tsecr;
	} else {
		err = mrxe_pkt_parse(skb->data, len, pi);
		if (!err)
			rm->cap = mrxe_bth_meta_cap(skb->data);
	}
	if (unlikely(err)) {
		if (err == MRXE_PARSE_TVER)
			mrxe_counter_inc(dev, MRXE_CNT_MODE_MISMATCH);
		if (mrxe_bth_opcode(skb->data) == MRXE_OPC_CNP) {
			/* A17.9: congestion notification, DCQCN reaction */
			mrxe_cc_cnp_rcv(dev, skb, len);
			return;
		}
		mrxe_rx_count_parse_err(dev, err);
		goto drop;
	}
	/* IBA 9.6.1.1: P_Key must match the default partition (full or limited) */
	if (unlikely((mrxe_bth_pkey(skb->data) & 0x7fff) != 0x7fff)) {
		mrxe_counter_inc(dev, MRXE_CNT_RX_DROP_PKEY);
		goto drop;
	}
	if (unlikely(pi->qpn == MRXE_QPN_MASK)) {
		/* IBA 10.5.2.4: a copy to each QP attached to the group */
		mrxe_mcast_rcv(dev, skb, l3, ipv6, len);
		return;
	}
	/* RFC 3168 5: ECN field CE (11), IPv4 TOS / IPv6 traffic class */
	ce = ipv6 ? (l3[1] & 0x30) == 0x30 : (l3[1] & 3) == 3;
	if (ce)
		mrxe_counter_inc(dev, MRXE_CNT_ECN_MARKED);

	qp = mrxe_qp_get(dev, pi->qpn);
	if (unlikely(!qp)) {
		mrxe_counter_inc(dev, MRXE_CNT_RX_DROP_NO_QP);
		goto drop;
	}
	if (unlikely(!mrxe_rx_src_ok(qp, l3, ipv6))) {
		mrxe_counter_inc(dev, MRXE_CNT_RX_DROP_SRC_ADDR);
		mrxe_qp_put(qp);
		goto drop;
	}
	if (ce)		/* notification point: the QP's work sends a CNP */
		mrxe_cc_ce_rcvd(&qp->cc);

	mrxe_qp_counter_inc(qp, MRXE_CNT_RCVD_PKTS);
	mrxe_qp_counter_add(qp, MRXE_CNT_RCVD_BYTES, skb->len);
	if (pskb_trim(skb, len)) {
		mrxe_qp_put(qp);
		goto drop;
	}
	if (rm->meta) {
		/* a netem/tc duplicate shares its data: strip a private copy */
		if (skb_unclone(skb, GFP_ATOMIC)) {
			mrxe_qp_put(qp);
			goto drop;
		}
		len -= mrxe_meta_strip(skb, pi);
	}

	/*
	 * RC requests are bounded near the sender's window: a longer queue only
	 * delays the ACK past the retransmit timeout (bufferbloat turns into
	 * spurious go-back-N rounds).  UC/UD have no retransmission and
	 * responses must not be lost to a burst, they get the large bound.
	 */
	if (pi->mask & MRXE_M_REQ) {
		q = &qp->resp.rxq;
		qmax = (pi->opcode & MRXE_TR_MASK) == MRXE_TR_RC ?
		       MRXE_RXQ_RC_REQ_MAX : MRXE_RXQ_MAX;
	} else {
		q = &qp->comp.rxq;
		qmax = MRXE_RXQ_MAX;
	}
	/* a dying QP, or its work is behind: drop, the sender recovers */
	queued = mrxe_pipe_enqueue(qp, q, qmax, skb);
	mrxe_qp_put(qp);
	if (unlikely(!queued))
		goto drop;
	return;

drop:
	mrxe_counter_inc(dev, MRXE_CNT_RCV_DROPPED);
	kfree_skb(skb);
}
