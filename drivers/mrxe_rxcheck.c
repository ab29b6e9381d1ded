// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Receive validation helpers of mrxe_rcv() (softirq): why a packet was
 * dropped, counted by reason (Documentation/testing.rst, "Malformed packets
 * on the wire"), and the source address check of connected QPs.
 */
#include <linux/in.h>
#include <linux/in6.h>

#include "mrxe_dp.h"

/* Count a mrxe_pkt_parse()/mrxe_meta_pkt_parse() error by its reason. */
void mrxe_rx_count_parse_err(struct mrxe_dev *dev, int err)
{
	switch (err) {
	case MRXE_PARSE_SHORT:
	case MRXE_PARSE_PAD:
	case MRXE_PARSE_LEN:
		mrxe_counter_inc(dev, MRXE_CNT_RX_DROP_LENGTH);
		break;
	case MRXE_PARSE_OPCODE:
	case MRXE_PARSE_TVER:
		mrxe_counter_inc(dev, MRXE_CNT_RX_DROP_OPCODE);
		break;
	default:
		/* MRXE_PARSE_MRH: counted as mode_mismatch by the caller */
		break;
	}
}

/*
 * IBA 9.6 (transport header validation): a packet for a connected (RC/UC)
 * QP must come from the QP's remote port, i.e. from the address the QP was
 * connected to (its primary path's destination).  Checked once the QP has
 * a path (RTR and later); UD/GSI QPs take packets from anyone.  The UDP
 * source port is flow entropy (RoCEv2, and multipath), never checked.
 * @l3 is the packet's IPv4 or IPv6 header.
 */
bool mrxe_rx_src_ok(struct mrxe_qp *qp, const u8 *l3, bool ipv6)
{
	const struct iphdr *ip4 = (const struct iphdr *)l3;
	const struct ipv6hdr *ip6 = (const struct ipv6hdr *)l3;
	unsigned long flags;
	bool ok = true;

	if (qp->ibqp.qp_type != IB_QPT_RC && qp->ibqp.qp_type != IB_QPT_UC)
		return true;
	/* state_lock protects qp->state and qp->av (mrxe.h) */
	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state != IB_QPS_RTR && qp->state != IB_QPS_RTS &&
	    qp->state != IB_QPS_SQD && qp->state != IB_QPS_SQE)
		goto out;
	if (qp->av.network_type == RDMA_NETWORK_IPV4) {
		ok = !ipv6 && ip4->saddr == qp->av.daddr.v4.sin_addr.s_addr;
	} else if (qp->av.network_type == RDMA_NETWORK_IPV6) {
		ok = ipv6 && ipv6_addr_equal(&ip6->saddr,
					     &qp->av.daddr.v6.sin6_addr);
	}
out:
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (!ok)
		mrxe_err_dev(qp_dev(qp), "qpn %#x: packet from a foreign source dropped\n",
			     qp->ibqp.qp_num);
	return ok;
}
