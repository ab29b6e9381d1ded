// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mrxe completion queues.  The completion ring is produced by the kernel
 * (mrxe_cq_post, under cq_lock) and consumed by the process that maps it,
 * or by poll_cq for kernel consumers.
 */
#include "mrxe.h"
#include "mrxe_verbs.h"
#include "mrxe_dp.h"

static void mrxe_cq_comp_work(struct work_struct *work)
{
	struct mrxe_cq *cq = container_of(work, struct mrxe_cq, comp_work);

	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

static int mrxe_cq_check_depth(int cqe)
{
	if (cqe <= 0 || cqe > MRXE_MAX_CQE)
		return -EINVAL;
	return 0;
}

int mrxe_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata)
{
	struct mrxe_dev *dev = to_mdev(ibcq->device);
	struct mrxe_cq *cq = to_mcq(ibcq);
	struct mrxe_create_cq_resp resp = {};
	struct ib_ucontext *uctx = NULL;
	u32 nslots;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	err = mrxe_cq_check_depth(attr->cqe);
	if (err)
		return err;
	if (attr->comp_vector >= dev->ib_dev.num_comp_vectors)
		return -EINVAL;
	if (udata) {
		if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
			return -EINVAL;
		uctx = mrxe_udata_ucontext(udata);
		if (!uctx)
			return -EINVAL;
	}
	if (atomic_inc_return(&dev->num_cq) > MRXE_MAX_CQ) {
		err = -ENOMEM;
		goto err_count;
	}

	nslots = roundup_pow_of_two(attr->cqe);
	spin_lock_init(&cq->cq_lock);
	INIT_WORK(&cq->comp_work, mrxe_cq_comp_work);
	cq->is_user = !!udata;
	cq->queue = mrxe_queue_alloc(dev, nslots, MRXE_CQE_SIZE, uctx);
	if (IS_ERR(cq->queue)) {
		err = PTR_ERR(cq->queue);
		cq->queue = NULL;
		goto err_count;
	}
	ibcq->cqe = nslots;

	if (udata && udata->outlen) {
		mrxe_queue_mmap_info(cq->queue, &resp.mi);
		resp.cqn = atomic_inc_return(&dev->next_cqn);
		resp.num_slots = nslots;
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err)
			goto err_queue;
	}
	return 0;

err_queue:
	mrxe_queue_free(cq->queue);
	cq->queue = NULL;
err_count:
	atomic_dec(&dev->num_cq);
	return err;
}

int mrxe_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct mrxe_dev *dev = to_mdev(ibcq->device);
	struct mrxe_cq *cq = to_mcq(ibcq);

	spin_lock_irq(&cq->cq_lock);
	cq->is_dying = true;
	spin_unlock_irq(&cq->cq_lock);
	cancel_work_sync(&cq->comp_work);
	mrxe_queue_free(cq->queue);
	cq->queue = NULL;
	atomic_dec(&dev->num_cq);
	return 0;
}

static void mrxe_cq_event(struct mrxe_cq *cq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = type,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

int mrxe_cq_post(struct mrxe_cq *cq, const struct mrxe_cqe *cqe,
		 bool solicited)
{
	struct mrxe_dev *dev = to_mdev(cq->ibcq.device);
	bool notify = false;
	unsigned long flags;
	void *slot;

	spin_lock_irqsave(&cq->cq_lock, flags);
	if (unlikely(cq->is_dying)) {
		spin_unlock_irqrestore(&cq->cq_lock, flags);
		return -EIO;
	}
	slot = mrxe_queue_producer_slot(cq->queue);
	if (unlikely(!slot)) {
		spin_unlock_irqrestore(&cq->cq_lock, flags);
		/* IBA 11.4.2.1: CQ overrun is an affiliated async error. */
		mrxe_err_dev(dev, "CQ overrun\n");
		mrxe_cq_event(cq, IB_EVENT_CQ_ERR);
		return -EOVERFLOW;
	}
	memcpy(slot, cqe, sizeof(*cqe));
	mrxe_queue_produce(cq->queue);

	/*
	 * IBA 11.4.2.2: a CQ armed for solicited completions also gets an
	 * event for an unsuccessful one (ibv_req_notify_cq(3): "solicited"
	 * covers any error status).  SMC-R arms its receive CQ solicited
	 * only and waits for the flushed receives before freeing a link.
	 */
	if (cqe->status != IB_WC_SUCCESS)
		solicited = true;
	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED && solicited)) {
		cq->notify = 0;
		notify = true;
	}
	spin_unlock_irqrestore(&cq->cq_lock, flags);

	if (!notify)
		return 0;
	/*
	 * ib_uverbs' handler only queues an event and is safe anywhere; a
	 * kernel ULP's handler may post to the QP whose completion we are
	 * producing, so it runs from a work item, away from pipeline locks.
	 */
	if (cq->is_user && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	else
		queue_work(system_highpri_wq, &cq->comp_work);
	return 0;
}

int mrxe_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct mrxe_cq *cq = to_mcq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->cq_lock, irqflags);
	/*
	 * NEXT_COMP is the stronger request: never downgrade it.  Only
	 * IB_CQ_SOLICITED alone arms for solicited completions; both bits
	 * (IB_CQ_SOLICITED_MASK, what SMC-R passes) arm for any completion,
	 * as siw and mlx5 read them.
	 */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
			     IB_CQ_SOLICITED : IB_CQ_NEXT_COMP;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    mrxe_queue_used(cq->queue))
		ret = 1;
	spin_unlock_irqrestore(&cq->cq_lock, irqflags);
	return ret;
}


static void mrxe_cqe_to_wc(struct mrxe_dev *dev, const struct mrxe_cqe *cqe,
			   struct ib_wc *wc)
{
	struct mrxe_qp *qp;

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->ex.imm_data = cqe->ex.imm_data;
	wc->src_qp = cqe->src_qp;
	/*
	 * CQEs carry the uverbs flag values (the ring ABI); they equal the
	 * kernel's except for "with invalidate" (IBV 1 << 3, IB 1 << 2).
	 */
	wc->wc_flags = cqe->wc_flags & (IB_WC_GRH | IB_WC_WITH_IMM);
	if (cqe->wc_flags & MRXE_WC_WITH_INV)
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
	wc->port_num = cqe->port_num;
	wc->network_hdr_type = cqe->network_hdr_type;
	memcpy(wc->smac, cqe->smac, ETH_ALEN);
	wc->vlan_id = cqe->vlan_id;

	/*
	 * Kernel consumers expect wc->qp.  The QP outlives its completions
	 * for every sane consumer; a stale qp_num just yields NULL.
	 */
	qp = mrxe_qp_get(dev, cqe->qp_num);
	if (qp) {
		wc->qp = &qp->ibqp;
		mrxe_qp_put(qp);
	}
}

int mrxe_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct mrxe_dev *dev = to_mdev(ibcq->device);
	struct mrxe_cq *cq = to_mcq(ibcq);
	struct mrxe_cqe cqe;
	unsigned long flags;
	int n = 0;
	void *slot;

	if (cq->is_user)
		return -EINVAL;
	while (n < num_entries) {
		spin_lock_irqsave(&cq->cq_lock, flags);
		slot = mrxe_queue_consumer_slot(cq->queue);
		if (slot) {
			memcpy(&cqe, slot, sizeof(cqe));
			mrxe_queue_consume(cq->queue);
		}
		spin_unlock_irqrestore(&cq->cq_lock, flags);
		if (!slot)
			break;
		mrxe_cqe_to_wc(dev, &cqe, &wc[n++]);
	}
	return n;
}

/*
 * Send completions this CQ is already committed to: signaled WQEs posted to
 * the SQs that complete here and not completed yet.  The pipeline produces
 * them after post_send returned, so the ring alone undercounts, and a resize
 * below what is committed would end in a CQ overrun (IBA 11.4.2.1).  An
 * upper bound: a failing unsignaled WQE also completes, rarely.  A QP found
 * in qp_xa under rcu_read_lock() cannot be freed (destroy_qp erases it and
 * waits for an RCU grace period before freeing its queues).
 */
static u32 mrxe_cq_committed_sends(struct mrxe_dev *dev, struct mrxe_cq *cq)
{
	const struct mrxe_send_wqe *wqe;
	struct mrxe_queue *q;
	struct mrxe_qp *qp;
	unsigned long idx;
	u32 n = 0, prod, cons, i;

	rcu_read_lock();
	xa_for_each(&dev->qp_xa, idx, qp) {
		q = qp->sq;
		if (qp->scq != cq || !q)
			continue;
		/* acquire: pairs with the poster's release of producer_index */
		prod = smp_load_acquire(&q->buf->producer_index);
		/* acquire: pairs with the completer's release of consumer_index */
		cons = smp_load_acquire(&q->buf->consumer_index);
		if (!mrxe_ring_valid(prod, cons, q->index_mask))
			continue;
		for (i = cons; i != prod; i++) {
			wqe = mrxe_ring_slot_ptr(q, i);
			if (qp->sq_sig_all ||
			    (READ_ONCE(wqe->send_flags) & MRXE_SEND_SIGNALED))
				n++;
		}
	}
	rcu_read_unlock();
	return n;
}

int mrxe_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct mrxe_dev *dev = to_mdev(ibcq->device);
	struct mrxe_cq *cq = to_mcq(ibcq);
	struct mrxe_resize_cq_resp resp = {};
	struct mrxe_queue *nq, *oq;
	u32 nslots, cons, prod, i, committed;
	int err;

	err = mrxe_cq_check_depth(cqe);
	if (err)
		return err;
	if (!!udata != cq->is_user)
		return -EINVAL;
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	nslots = roundup_pow_of_two(cqe);
	committed = mrxe_cq_committed_sends(dev, cq);

	nq = mrxe_queue_alloc(dev, nslots, MRXE_CQE_SIZE,
			      mrxe_udata_ucontext(udata));
	if (IS_ERR(nq))
		return PTR_ERR(nq);

	spin_lock_irq(&cq->cq_lock);
	oq = cq->queue;
	/* acquire: pairs with the other side's release of consumer_index */
	cons = smp_load_acquire(&oq->buf->consumer_index);
	prod = oq->prod;
	if (!mrxe_ring_valid(prod, cons, oq->index_mask) ||
	    (u64)mrxe_ring_count(prod, cons) + committed > nslots) {
		spin_unlock_irq(&cq->cq_lock);
		mrxe_queue_free(nq);
		return -EINVAL;
	}
	/* Move the unconsumed entries, oldest first, to the new ring. */
	for (i = cons; i != prod; i++) {
		memcpy(mrxe_queue_producer_slot(nq),
		       (u8 *)oq->buf + MRXE_RING_HDR_SIZE +
		       ((size_t)(i & oq->index_mask) << oq->log2_elem_size),
		       MRXE_CQE_SIZE);
		mrxe_queue_produce(nq);
	}
	nq->cons = 0;
	cq->queue = nq;
	ibcq->cqe = nslots;
	spin_unlock_irq(&cq->cq_lock);

	if (udata && udata->outlen) {
		mrxe_queue_mmap_info(nq, &resp.mi);
		resp.num_slots = nslots;
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err) {
			/* The old ring is still valid: keep using it. */
			spin_lock_irq(&cq->cq_lock);
			cq->queue = oq;
			ibcq->cqe = mrxe_queue_slots(oq);
			spin_unlock_irq(&cq->cq_lock);
			mrxe_queue_free(nq);
			return err;
		}
	}
	mrxe_queue_free(oq);
	return 0;
}
