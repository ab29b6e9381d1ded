// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mrxe shared receive queues (IBA 10.2.9) and the kernel receive-post
 * helper shared with QP receive queues.
 */
#include "mrxe.h"
#include "mrxe_verbs.h"
#include "mrxe_dp.h"

/* Caller serialises posters of q. */
int mrxe_post_one_recv(struct mrxe_queue *q, u32 max_sge,
		       const struct ib_recv_wr *wr)
{
	struct mrxe_recv_wqe *wqe;
	struct mrxe_sge *sge;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > max_sge)
		return -EINVAL;
	wqe = mrxe_queue_producer_slot(q);
	if (!wqe)
		return -ENOMEM;
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	wqe->reserved = 0;
	sge = (struct mrxe_sge *)(wqe + 1);
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	mrxe_queue_produce(q);
	return 0;
}

int mrxe_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata)
{
	struct mrxe_dev *dev = to_mdev(ibsrq->device);
	struct mrxe_srq *srq = to_msrq(ibsrq);
	struct mrxe_create_srq_resp resp = {};
	struct ib_ucontext *uctx = NULL;
	u32 nslots, slot;
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!init->attr.max_wr || init->attr.max_wr > MRXE_MAX_SRQ_WR ||
	    init->attr.max_sge > MRXE_MAX_SRQ_SGE ||
	    init->attr.srq_limit > init->attr.max_wr)
		return -EINVAL;
	if (udata) {
		if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
			return -EINVAL;
		uctx = mrxe_udata_ucontext(udata);
		if (!uctx)
			return -EINVAL;
	}
	if (atomic_inc_return(&dev->num_srq) > MRXE_MAX_SRQ) {
		err = -ENOMEM;
		goto err_count;
	}

	nslots = roundup_pow_of_two(init->attr.max_wr);
	slot = mrxe_recv_slot_size(max_t(u32, init->attr.max_sge, 1));
	refcount_set(&srq->ref, 1);
	init_completion(&srq->released);
	spin_lock_init(&srq->rq_lock);
	mutex_init(&srq->resize_mutex);
	srq->is_user = !!udata;
	srq->wqe_size = slot;
	srq->max_sge = mrxe_recv_slot_sges(slot, MRXE_MAX_SRQ_SGE);
	srq->limit = init->attr.srq_limit;
	srq->rq = mrxe_queue_alloc(dev, nslots, slot, uctx);
	if (IS_ERR(srq->rq)) {
		err = PTR_ERR(srq->rq);
		srq->rq = NULL;
		goto err_count;
	}

	err = xa_alloc_cyclic_irq(&dev->srq_xa, &srq->srq_num, NULL,
				  XA_LIMIT(1, (1U << 24) - 1),
				  &dev->next_srq_num, GFP_KERNEL);
	if (err < 0)
		goto err_queue;

	init->attr.max_wr = nslots;
	init->attr.max_sge = srq->max_sge;

	if (udata && udata->outlen) {
		mrxe_queue_mmap_info(srq->rq, &resp.mi);
		resp.srq_num = srq->srq_num;
		resp.num_slots = nslots;
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err)
			goto err_xa;
	}
	xa_store_irq(&dev->srq_xa, srq->srq_num, srq, GFP_KERNEL);
	return 0;

err_xa:
	xa_erase_irq(&dev->srq_xa, srq->srq_num);
err_queue:
	mrxe_queue_free(srq->rq);
	srq->rq = NULL;
err_count:
	atomic_dec(&dev->num_srq);
	return err;
}

/*
 * IBA 11.2.3.3 (Modify SRQ), IB_SRQ_MAX_WR: move the SRQ to a ring of at
 * least max_wr slots while QPs keep taking WQEs from it.  The posted WQEs
 * (oldest first) are copied to slots 0..n-1 of the new ring and srq->rq is
 * swapped under rq_lock, which every consumer (resp_get_wqe()) and kernel
 * poster takes, so a WQE is taken from exactly one ring.  The new size must
 * hold every posted WQE and the limit, else -EINVAL and nothing changes.
 * A user SRQ's producer is the provider, which holds its posting lock over
 * the command; the kernel writes the new ring's mmap info to resp_addr
 * before the swap (a fault leaves the old ring in place) and the old
 * buffer lives until the provider unmaps it (mrxe_queue_free()).
 */
static int mrxe_srq_resize(struct mrxe_srq *srq, u32 max_wr, u32 limit,
			   u64 resp_addr, struct ib_udata *udata)
{
	struct mrxe_dev *dev = to_mdev(srq->ibsrq.device);
	struct mrxe_resize_srq_resp resp = {};
	struct ib_ucontext *uctx = NULL;
	struct mrxe_queue *nq, *oq;
	u32 nslots, n, i;
	int err = 0;

	if (!max_wr || max_wr > MRXE_MAX_SRQ_WR)
		return -EINVAL;
	if (srq->is_user) {
		uctx = mrxe_udata_ucontext(udata);
		/* the provider must say where the new ring's info goes */
		if (!uctx || !resp_addr)
			return -EINVAL;
	}
	nslots = roundup_pow_of_two(max_wr);
	if (limit > nslots)
		return -EINVAL;

	mutex_lock(&srq->resize_mutex);
	nq = mrxe_queue_alloc(dev, nslots, srq->wqe_size, uctx);
	if (IS_ERR(nq)) {
		err = PTR_ERR(nq);
		goto out;
	}
	if (srq->is_user) {
		mrxe_queue_mmap_info(nq, &resp.mi);
		resp.num_slots = nslots;
		if (copy_to_user(u64_to_user_ptr(resp_addr), &resp,
				 sizeof(resp))) {
			err = -EFAULT;
			goto err_free;
		}
	}

	spin_lock_irq(&srq->rq_lock);
	oq = srq->rq;
	/* 0 for an inconsistent user ring: nothing posted to carry over */
	n = mrxe_ring_avail(oq);
	if (n > nslots) {
		spin_unlock_irq(&srq->rq_lock);
		err = -EINVAL;
		goto err_free;
	}
	for (i = 0; i < n; i++) {
		memcpy(mrxe_queue_producer_slot(nq),
		       mrxe_ring_slot_ptr(oq, oq->cons + i), srq->wqe_size);
		mrxe_queue_produce(nq);
	}
	srq->rq = nq;
	spin_unlock_irq(&srq->rq_lock);
	mrxe_queue_free(oq);
	goto out;

err_free:
	mrxe_queue_free(nq);
out:
	mutex_unlock(&srq->resize_mutex);
	return err;
}

int mrxe_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct mrxe_srq *srq = to_msrq(ibsrq);
	struct mrxe_modify_srq_cmd cmd = {};
	u32 limit;
	int err = 0;

	if (mask & ~(IB_SRQ_LIMIT | IB_SRQ_MAX_WR))
		return -EINVAL;
	err = mrxe_udata_cmd(udata, &cmd, sizeof(cmd));
	if (err)
		return err;
	if (mask & IB_SRQ_MAX_WR) {
		spin_lock_irq(&srq->rq_lock);
		limit = (mask & IB_SRQ_LIMIT) ? attr->srq_limit : srq->limit;
		spin_unlock_irq(&srq->rq_lock);
		err = mrxe_srq_resize(srq, attr->max_wr, limit, cmd.resp_addr,
				      udata);
		if (err)
			return err;
	}
	if (mask & IB_SRQ_LIMIT) {
		spin_lock_irq(&srq->rq_lock);
		/* IBA 10.2.9.4: the limit must not exceed the capacity. */
		if (attr->srq_limit > mrxe_queue_slots(srq->rq))
			err = -EINVAL;
		else
			srq->limit = attr->srq_limit;
		spin_unlock_irq(&srq->rq_lock);
	}
	return err;
}

int mrxe_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct mrxe_srq *srq = to_msrq(ibsrq);

	attr->max_sge = srq->max_sge;
	spin_lock_irq(&srq->rq_lock);
	attr->max_wr = mrxe_queue_slots(srq->rq);
	attr->srq_limit = srq->limit;
	spin_unlock_irq(&srq->rq_lock);
	return 0;
}

int mrxe_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct mrxe_dev *dev = to_mdev(ibsrq->device);
	struct mrxe_srq *srq = to_msrq(ibsrq);

	xa_erase_irq(&dev->srq_xa, srq->srq_num);
	synchronize_rcu();
	mrxe_wait_released(dev, &srq->ref, &srq->released, true, "SRQ");
	mrxe_queue_free(srq->rq);
	srq->rq = NULL;
	atomic_dec(&dev->num_srq);
	return 0;
}

int mrxe_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct mrxe_srq *srq = to_msrq(ibsrq);
	unsigned long flags;
	int err = 0;

	if (srq->is_user) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->rq_lock, flags);
	for (; wr; wr = wr->next) {
		err = mrxe_post_one_recv(srq->rq, srq->max_sge, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&srq->rq_lock, flags);
	return err;
}
