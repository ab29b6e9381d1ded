// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mrxe address handles.  Each AH gets an ah_num in dev->ah_xa so that a UD
 * send WQE (user or kernel) names it by number.  Lookups take the xarray
 * lock (AHs may be destroyed in atomic context, where we cannot wait for an
 * RCU grace period) and a reference with refcount_inc_not_zero().
 */
#include "mrxe.h"
#include "mrxe_verbs.h"

int mrxe_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata)
{
	struct mrxe_dev *dev = to_mdev(ibah->device);
	struct mrxe_ah *ah = to_mah(ibah);
	struct mrxe_create_ah_resp resp = {};
	gfp_t gfp = (init_attr->flags & RDMA_CREATE_AH_SLEEPABLE) ?
		    GFP_KERNEL : GFP_ATOMIC;
	unsigned long flags;
	int err;

	err = mrxe_av_from_attr(dev, &ah->av, init_attr->ah_attr);
	if (err)
		return err;
	if (atomic_inc_return(&dev->num_ah) > MRXE_MAX_AH) {
		err = -ENOMEM;
		goto err_count;
	}

	refcount_set(&ah->ref, 1);
	init_completion(&ah->released);
	ah->is_user = !!udata;

	xa_lock_irqsave(&dev->ah_xa, flags);
	err = __xa_alloc_cyclic(&dev->ah_xa, &ah->ah_num, ah,
				XA_LIMIT(1, U32_MAX), &dev->next_ah_num, gfp);
	xa_unlock_irqrestore(&dev->ah_xa, flags);
	if (err < 0)
		goto err_count;

	if (udata && udata->outlen) {
		resp.ah_num = ah->ah_num;
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err)
			goto err_erase;
	}
	return 0;

err_erase:
	xa_erase_irq(&dev->ah_xa, ah->ah_num);
err_count:
	atomic_dec(&dev->num_ah);
	return err;
}

int mrxe_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	struct mrxe_ah *ah = to_mah(ibah);

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_grh(attr, &ah->av.grh.dgid, ah->av.grh.flow_label,
			ah->av.grh.sgid_index, ah->av.grh.hop_limit,
			ah->av.grh.traffic_class);
	rdma_ah_set_ah_flags(attr, IB_AH_GRH);
	rdma_ah_set_sl(attr, ah->av.sl);
	memcpy(attr->roce.dmac, ah->av.dmac, ETH_ALEN);
	return 0;
}

/*
 * A UD WQE names its AH by number; the requester resolves it when it sends
 * (mrxe_req.c).  A NIC captures the address vector at post time, so
 * destroying an AH right after posting through it is harmless there (mckey
 * does it).  So let the UD QPs of the AH's PD send what was posted before
 * the AH goes (mrxe_pipe_linger, bounded).  A QP found in qp_xa under
 * rcu_read_lock() is not freed before its reference is taken.
 */
static void mrxe_ah_linger(struct mrxe_dev *dev, struct mrxe_pd *pd)
{
	unsigned long idx;
	struct mrxe_qp *qp;

	rcu_read_lock();
	xa_for_each(&dev->qp_xa, idx, qp) {
		if (qp->pd != pd || qp->ibqp.qp_type != IB_QPT_UD ||
		    !refcount_inc_not_zero(&qp->ref))
			continue;
		rcu_read_unlock();
		mrxe_pipe_linger(qp, "AH");
		mrxe_qp_put(qp);
		rcu_read_lock();
	}
	rcu_read_unlock();
}

int mrxe_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct mrxe_dev *dev = to_mdev(ibah->device);
	struct mrxe_ah *ah = to_mah(ibah);
	unsigned long irqflags;

	if (flags & RDMA_DESTROY_AH_SLEEPABLE)
		mrxe_ah_linger(dev, to_mpd(ibah->pd));
	xa_lock_irqsave(&dev->ah_xa, irqflags);
	__xa_erase(&dev->ah_xa, ah->ah_num);
	xa_unlock_irqrestore(&dev->ah_xa, irqflags);
	mrxe_wait_released(dev, &ah->ref, &ah->released,
			   flags & RDMA_DESTROY_AH_SLEEPABLE, "AH");
	atomic_dec(&dev->num_ah);
	return 0;
}

struct mrxe_ah *mrxe_ah_get(struct mrxe_dev *dev, u32 ah_num)
{
	struct mrxe_ah *ah;
	unsigned long flags;

	xa_lock_irqsave(&dev->ah_xa, flags);
	ah = xa_load(&dev->ah_xa, ah_num);
	if (ah && !refcount_inc_not_zero(&ah->ref))
		ah = NULL;
	xa_unlock_irqrestore(&dev->ah_xa, flags);
	return ah;
}

void mrxe_ah_put(struct mrxe_ah *ah)
{
	if (refcount_dec_and_test(&ah->ref))
		complete(&ah->released);
}
