// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * TEMPORARY: weak stand-ins for the data path (mrxe_recv.c, mrxe_req.c,
 * mrxe_resp.c, mrxe_comp.c) so the control plane links and loads before the
 * data path lands.  They move no data.  The real, strong definitions
 * override these; delete this file once the data-path files exist.
 */
#include "mrxe.h"

void __weak mrxe_rcv(struct mrxe_dev *dev, struct sk_buff *skb)
{
	mrxe_counter_inc(dev, MRXE_CNT_RCV_DROPPED);
	kfree_skb(skb);
}

int __weak mrxe_pipe_init(struct mrxe_qp *qp)
{
	return 0;
}

void __weak mrxe_pipe_cleanup(struct mrxe_qp *qp)
{
}

void __weak mrxe_pipe_modify(struct mrxe_qp *qp, const struct ib_qp_attr *attr,
			     int mask, enum ib_qp_state old_state)
{
}

void __weak mrxe_pipe_kick_sq(struct mrxe_qp *qp)
{
}

void __weak mrxe_pipe_kick_rq(struct mrxe_qp *qp)
{
}
