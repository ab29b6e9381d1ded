// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mrxe queue pairs: create/modify/query/destroy (IBA 10.3 state machine),
 * the qpn table used by the packet path, and kernel-consumer posting, which
 * converts ib_send_wr/ib_recv_wr into ring WQEs and kicks the pipeline.
 */
#include <linux/if_ether.h>
#include <rdma/ib_mad.h>

#include "mrxe.h"
#include "mrxe_verbs.h"

struct mrxe_qp *mrxe_qp_get(struct mrxe_dev *dev, u32 qpn)
{
	struct mrxe_qp *qp;

	rcu_read_lock();
	qp = xa_load(&dev->qp_xa, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	rcu_read_unlock();
	return qp;
}

void mrxe_qp_put(struct mrxe_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

static void mrxe_qp_event(struct mrxe_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

void mrxe_qp_error(struct mrxe_qp *qp)
{
	enum ib_qp_state old;
	unsigned long flags;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	spin_lock_irqsave(&qp->state_lock, flags);
	old = qp->state;
	qp->state = IB_QPS_ERR;
	qp->attr.qp_state = IB_QPS_ERR;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (old == IB_QPS_ERR || old == IB_QPS_RESET)
		return;
	/* IBA 11.6.3: a transport error is an affiliated async event. */
	mrxe_qp_event(qp, IB_EVENT_QP_FATAL);
	mrxe_nl_qp_error_event(qp, old);
	mrxe_pipe_modify(qp, &attr, IB_QP_STATE, old);
}

static int mrxe_qp_check_cap(struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;

	if (cap->max_send_wr > MRXE_MAX_QP_WR ||
	    cap->max_send_sge > MRXE_MAX_SGE ||
	    cap->max_inline_data > MRXE_MAX_INLINE)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > MRXE_MAX_QP_WR ||
			   cap->max_recv_sge > MRXE_MAX_SGE))
		return -EINVAL;
	return 0;
}

static int mrxe_qp_parse_cmd(struct mrxe_dev *dev, struct mrxe_qp *qp,
			     struct ib_udata *udata)
{
	struct mrxe_create_qp_cmd cmd = {};
	int err;

	err = mrxe_udata_cmd(udata, &cmd, sizeof(cmd));
	if (err)
		return err;
	if ((cmd.flags & ~(MRXE_QP_FLAG_SPRAY | MRXE_QP_FLAG_PRIORITY)) ||
	    cmd.transport_mode > MRXE_TRANSPORT_AUTO ||
	    cmd.num_paths > MRXE_MAX_PATHS)
		return -EINVAL;
	/* a priority only with its flag (the field was "reserved") */
	if (!(cmd.flags & MRXE_QP_FLAG_PRIORITY) && cmd.priority)
		return -EINVAL;
	if (cmd.priority > MRXE_MAX_QP_PRIORITY) {
		mrxe_dbg_dev(dev, "create_qp: priority %u out of 0-%u\n",
			     cmd.priority, MRXE_MAX_QP_PRIORITY);
		return -EINVAL;
	}
	qp->prio_fixed = (cmd.flags & MRXE_QP_FLAG_PRIORITY) ?
			 (s8)cmd.priority : -1;
	/*
	 * Several paths only exist for a MetaRoCE RC QP; asking for them on
	 * UC/UD or with an explicit standard/auto mode is an error (RoCEv2
	 * keeps one UDP source port per QP, IBA A17.4.2).
	 */
	if (cmd.num_paths > 1 &&
	    (qp->ibqp.qp_type != IB_QPT_RC ||
	     (cmd.transport_mode &&
	      cmd.transport_mode != MRXE_TRANSPORT_METAROCE))) {
		mrxe_dbg_dev(dev, "create_qp: %u paths need a MetaRoCE RC QP\n",
			     cmd.num_paths);
		return -EINVAL;
	}

	spin_lock_bh(&dev->cfg_lock);
	qp->transport_mode = cmd.transport_mode ?: dev->cfg.transport_mode;
	qp->num_paths = cmd.num_paths ?: dev->cfg.num_paths;
	qp->window = dev->cfg.window;
	spin_unlock_bh(&dev->cfg_lock);
	/*
	 * Only RC carries MetaRoCE (selective repeat needs ACKs); UC, UD and
	 * GSI are always standard, whatever was asked or the default is.
	 * `auto` starts as standard and may upgrade in-band (wire-format.rst);
	 * the mode reported at create is the one the QP starts with.
	 */
	if (qp->ibqp.qp_type != IB_QPT_RC) {
		qp->transport_mode = MRXE_TRANSPORT_STANDARD;
		qp->num_paths = 1;
	}
	if (qp->transport_mode != MRXE_TRANSPORT_METAROCE)
		qp->num_paths = 1;
	return 0;
}

int mrxe_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata)
{
	struct mrxe_dev *dev = to_mdev(ibqp->device);
	struct mrxe_qp *qp = to_mqp(ibqp);
	struct mrxe_create_qp_resp resp = {};
	struct ib_ucontext *uctx = NULL;
	u32 sq_slots, sq_slot, rq_slots = 0, rq_slot, qpn;
	int err;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (udata || init->port_num != 1)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	err = mrxe_qp_check_cap(init);
	if (err)
		return err;
	if (udata) {
		uctx = mrxe_udata_ucontext(udata);
		if (!uctx)
			return -EINVAL;
	}
	err = mrxe_qp_parse_cmd(dev, qp, udata);
	if (err)
		return err;

	if (atomic_inc_return(&dev->num_qp) > MRXE_MAX_QP) {
		err = -ENOMEM;
		goto err_count;
	}

	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	spin_lock_init(&qp->state_lock);
	qp->is_user = !!udata;
	qp->pd = to_mpd(ibqp->pd);
	qp->scq = to_mcq(init->send_cq);
	qp->rcq = to_mcq(init->recv_cq);
	qp->srq = to_msrq(init->srq);
	qp->state = IB_QPS_RESET;
	qp->attr.qp_state = IB_QPS_RESET;
	qp->attr.path_mtu = MRXE_DEFAULT_MTU;
	qp->mtu = ib_mtu_enum_to_int(MRXE_DEFAULT_MTU);
	qp->attr.port_num = 1;

	/* Ring geometry: see rdma/mrxe-abi.h. */
	sq_slots = roundup_pow_of_two(max_t(u32, init->cap.max_send_wr, 1));
	sq_slot = mrxe_send_slot_size(max_t(u32, init->cap.max_send_sge, 1),
				      init->cap.max_inline_data);
	qp->sq_max_sge = min_t(u32, (sq_slot - MRXE_SEND_WQE_HDR_SIZE) /
				    sizeof(struct mrxe_sge), MRXE_MAX_SGE);
	qp->max_inline = min_t(u32, sq_slot - MRXE_SEND_WQE_HDR_SIZE,
			       MRXE_MAX_INLINE);
	qp->sq = mrxe_queue_alloc(dev, sq_slots, sq_slot, uctx);
	if (IS_ERR(qp->sq)) {
		err = PTR_ERR(qp->sq);
		qp->sq = NULL;
		goto err_count;
	}
	if (!qp->srq) {
		rq_slots = roundup_pow_of_two(max_t(u32, init->cap.max_recv_wr,
						    1));
		rq_slot = mrxe_recv_slot_size(max_t(u32,
						    init->cap.max_recv_sge, 1));
		qp->rq_max_sge = mrxe_recv_slot_sges(rq_slot, MRXE_MAX_SGE);
		qp->rq = mrxe_queue_alloc(dev, rq_slots, rq_slot, uctx);
		if (IS_ERR(qp->rq)) {
			err = PTR_ERR(qp->rq);
			qp->rq = NULL;
			goto err_queues;
		}
	}

	/* Reserve the number; lookups see the QP only once it is set up. */
	if (init->qp_type == IB_QPT_GSI) {
		qpn = 1;
		err = xa_insert_irq(&dev->qp_xa, qpn, NULL, GFP_KERNEL);
		if (err == -EBUSY)
			err = -EEXIST;
	} else {
		err = xa_alloc_cyclic_irq(&dev->qp_xa, &qpn, NULL,
					  XA_LIMIT(MRXE_MIN_QPN, (1U << 24) - 1),
					  &dev->next_qpn, GFP_KERNEL);
	}
	if (err < 0)
		goto err_queues;
	ibqp->qp_num = qpn;

	err = mrxe_pipe_init(qp);
	if (err)
		goto err_xa;

	init->cap.max_send_wr = sq_slots;
	init->cap.max_send_sge = qp->sq_max_sge;
	init->cap.max_inline_data = qp->max_inline;
	if (!qp->srq) {
		init->cap.max_recv_wr = rq_slots;
		init->cap.max_recv_sge = qp->rq_max_sge;
	}
	qp->attr.cap = init->cap;
	qp->attr.sq_draining = 0;
	qp->attr.qkey = init->qp_type == IB_QPT_GSI ? IB_QP1_QKEY : 0;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;

	if (udata && udata->outlen) {
		mrxe_queue_mmap_info(qp->sq, &resp.sq_mi);
		mrxe_queue_mmap_info(qp->rq, &resp.rq_mi);
		resp.qpn = qpn;
		resp.sq_slots = sq_slots;
		resp.rq_slots = rq_slots;
		resp.transport_mode = qp->transport_mode ==
				      MRXE_TRANSPORT_METAROCE ?
				      MRXE_TRANSPORT_METAROCE :
				      MRXE_TRANSPORT_STANDARD;
		resp.num_paths = qp->num_paths;
		resp.max_inline = qp->max_inline;
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err)
			goto err_pipe;
	}
	xa_store_irq(&dev->qp_xa, qpn, qp, GFP_KERNEL);
	return 0;

err_pipe:
	mrxe_pipe_cleanup(qp);
err_xa:
	xa_erase_irq(&dev->qp_xa, qpn);
err_queues:
	mrxe_queue_free(qp->rq);
	mrxe_queue_free(qp->sq);
	qp->rq = NULL;
	qp->sq = NULL;
err_count:
	atomic_dec(&dev->num_qp);
	return err;
}

static int mrxe_qp_check_attr(struct mrxe_qp *qp, struct ib_qp_attr *attr,
			      int mask, struct mrxe_av *av)
{
	struct mrxe_dev *dev = qp_dev(qp);
	int err;

	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= MRXE_MAX_PKEYS)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > MRXE_MAX_QP_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > MRXE_MAX_QP_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_ATOMIC |
				       IB_ACCESS_LOCAL_WRITE |
				       IB_ACCESS_MW_BIND | MRXE_QP_ACCESS_FLUSH)))
		return -EINVAL;
	/* Automatic path migration is not supported (IBA 17.2.8). */
	if (mask & (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE))
		return -EOPNOTSUPP;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num >= (1U << 24))
		return -EINVAL;
	if (mask & IB_QP_CAP)
		return -EOPNOTSUPP;
	if (mask & IB_QP_AV) {
		err = mrxe_av_from_attr(dev, av, &attr->ah_attr);
		if (err)
			return err;
	}
	return 0;
}

int mrxe_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct mrxe_qp *qp = to_mqp(ibqp);
	enum ib_qp_state cur, new, old;
	unsigned long flags;
	struct mrxe_av av;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;

	err = mrxe_qp_check_attr(qp, attr, mask, &av);
	if (err)
		return err;

	spin_lock_irqsave(&qp->state_lock, flags);
	old = qp->state;
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : old;
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	/* IBA 10.3.1: allowed transitions and required/optional attributes. */
	if (cur != old || !ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask)) {
		spin_unlock_irqrestore(&qp->state_lock, flags);
		return -EINVAL;
	}

	if (mask & IB_QP_AV) {
		qp->av = av;
		if (qp->prio_fixed < 0)
			mrxe_pipe_prio_set(qp, mrxe_av_prio(&av));
	}
	/* a set priority holds from INIT on (UD QPs have no AV to give one) */
	if (qp->prio_fixed >= 0 && old == IB_QPS_RESET && new == IB_QPS_INIT)
		mrxe_pipe_prio_set(qp, qp->prio_fixed);
	if (mask & IB_QP_PATH_MTU) {
		struct mrxe_dev *dev = qp_dev(qp);
		enum ib_mtu mtu;

		spin_lock(&dev->port_lock);
		mtu = min_t(enum ib_mtu, attr->path_mtu,
			    dev->port_attr.active_mtu);
		spin_unlock(&dev->port_lock);
		qp->attr.path_mtu = mtu;
		qp->mtu = ib_mtu_enum_to_int(mtu);
	}
	if (mask & IB_QP_AV)
		qp->attr.ah_attr = attr->ah_attr;
	if (mask & IB_QP_PKEY_INDEX)
		qp->attr.pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		qp->attr.port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		qp->attr.qkey = attr->qkey;
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->attr.qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_TIMEOUT)
		qp->attr.timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->attr.retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->attr.rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->attr.min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_RQ_PSN)
		qp->attr.rq_psn = attr->rq_psn & 0xffffff;
	if (mask & IB_QP_SQ_PSN)
		qp->attr.sq_psn = attr->sq_psn & 0xffffff;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->attr.max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->attr.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		qp->attr.dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		qp->attr.en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_STATE) {
		qp->state = new;
		qp->attr.qp_state = new;
		qp->attr.cur_qp_state = new;
		qp->attr.sq_draining = new == IB_QPS_SQD;
	}
	/* The AH attribute's sgid_attr reference is not kept. */
	if (mask & IB_QP_AV)
		qp->attr.ah_attr.grh.sgid_attr = NULL;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if ((mask & IB_QP_STATE) && new == IB_QPS_ERR && old != IB_QPS_ERR)
		mrxe_nl_qp_error_event(qp, old);
	mrxe_pipe_modify(qp, attr, mask, old);
	return 0;
}

int mrxe_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init)
{
	struct mrxe_qp *qp = to_mqp(ibqp);
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	attr->cap = qp->attr.cap;
	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
					     IB_SIGNAL_REQ_WR;
	init->port_num = 1;
	return 0;
}

int mrxe_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct mrxe_dev *dev = to_mdev(ibqp->device);
	struct mrxe_qp *qp = to_mqp(ibqp);

	/* posted UD/UC sends leave before the QP goes (bounded) */
	mrxe_pipe_linger(qp, "QP");
	/* No multicast delivery to it from here on (takes no QP refs after). */
	mrxe_mcast_qp_cleanup(qp);
	/*
	 * Stop new lookups and local-queue wake-ups, then let RCU readers
	 * and packets drain.
	 */
	xa_erase_irq(&dev->qp_xa, ibqp->qp_num);
	mrxe_pipe_tx_detach(qp);
	synchronize_rcu();
	mrxe_pipe_cleanup(qp);
	mrxe_wait_released(dev, &qp->ref, &qp->released, true, "QP");
	mrxe_queue_free(qp->rq);
	mrxe_queue_free(qp->sq);
	qp->rq = NULL;
	qp->sq = NULL;
	atomic_dec(&dev->num_qp);
	return 0;
}

/* ---- kernel consumers: post_send / post_recv ---- */

static int mrxe_build_send_wqe(struct mrxe_qp *qp, const struct ib_send_wr *wr,
			       struct mrxe_send_wqe *wqe, u32 slot_size)
{
	struct mrxe_sge *sge = (struct mrxe_sge *)((u8 *)wqe +
						   MRXE_SEND_WQE_HDR_SIZE);
	enum ib_qp_type type = qp->ibqp.qp_type;
	u64 total = 0;
	u32 i;

	memset(wqe, 0, MRXE_SEND_WQE_HDR_SIZE);
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->send_flags = wr->send_flags;
	if (qp->ibqp.qp_type == IB_QPT_GSI || qp->sq_sig_all)
		wqe->send_flags |= IB_SEND_SIGNALED;

	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		wqe->ex.imm_data = wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		wqe->ex.invalidate_rkey = wr->ex.invalidate_rkey;
		break;
	default:
		break;
	}

	switch (wr->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		if (type == IB_QPT_UD || type == IB_QPT_GSI) {
			const struct ib_ud_wr *ud = ud_wr(wr);

			if (!ud->ah || ud->ah->pd != qp->ibqp.pd)
				return -EINVAL;
			wqe->wr.ud.ah_num = to_mah(ud->ah)->ah_num;
			wqe->wr.ud.remote_qpn = ud->remote_qpn;
			wqe->wr.ud.remote_qkey = ud->remote_qkey;
		}
		break;
	case IB_WR_SEND_WITH_INV:
		if (type != IB_QPT_RC)
			return -EINVAL;
		break;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		if (type != IB_QPT_RC &&
		    !(type == IB_QPT_UC && wr->opcode != IB_WR_RDMA_READ))
			return -EINVAL;
		wqe->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		wqe->wr.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		if (type != IB_QPT_RC)
			return -EINVAL;
		wqe->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		wqe->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		wqe->wr.atomic.swap = atomic_wr(wr)->swap;
		wqe->wr.atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_LOCAL_INV:
		if (type != IB_QPT_RC && type != IB_QPT_UC)
			return -EINVAL;
		return 0;
	case IB_WR_REG_MR: {
		const struct ib_reg_wr *reg = reg_wr(wr);
		struct mrxe_mr *mr = to_mmr(reg->mr);

		if (type != IB_QPT_RC && type != IB_QPT_UC)
			return -EINVAL;
		wqe->wr.mw.addr = mr->ibmr.iova;
		wqe->wr.mw.length = mr->ibmr.length;
		wqe->wr.mw.mr_lkey = mr->ibmr.lkey;
		wqe->wr.mw.rkey = reg->key;
		wqe->wr.mw.access = reg->access;
		return 0;
	}
	default:
		return -EINVAL;
	}

	if (wr->num_sge < 0)
		return -EINVAL;
	if (wr->send_flags & IB_SEND_INLINE) {
		u8 *p = (u8 *)wqe + MRXE_SEND_WQE_HDR_SIZE;

		/*
		 * Inline data is gathered from at most MRXE_MAX_SGE buffers
		 * (the SQ's SGE limit may be smaller than what fits inline);
		 * the u64 sum of u32 lengths cannot wrap below max_inline.
		 */
		if (wr->num_sge > MRXE_MAX_SGE)
			return -EINVAL;
		for (i = 0; i < wr->num_sge; i++)
			total += wr->sg_list[i].length;
		if (total > qp->max_inline ||
		    MRXE_SEND_WQE_HDR_SIZE + total > slot_size)
			return -EINVAL;
		/* Kernel inline data: sg addresses are kernel addresses. */
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(p, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			p += wr->sg_list[i].length;
		}
		wqe->inline_len = total;
		wqe->num_sge = 0;
		return 0;
	}
	if (wr->num_sge > qp->sq_max_sge)
		return -EINVAL;
	wqe->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

int mrxe_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct mrxe_qp *qp = to_mqp(ibqp);
	enum ib_qp_state state;
	unsigned long flags;
	int err = 0;

	if (qp->is_user) {
		/* A user post_send without WRs is the SQ doorbell. */
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		mrxe_pipe_doorbell(qp);
		return 0;
	}

	spin_lock_irqsave(&qp->state_lock, flags);
	state = qp->state;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	/* IBA 10.8.2.2 / 11.4.1.1: no posting before RTS (ERR flushes). */
	if (state == IB_QPS_RESET || state == IB_QPS_INIT ||
	    state == IB_QPS_RTR) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&qp->sq_lock, flags);
	for (; wr; wr = wr->next) {
		void *slot = mrxe_queue_producer_slot(qp->sq);

		if (!slot) {
			err = -ENOMEM;
			*bad_wr = wr;
			break;
		}
		err = mrxe_build_send_wqe(qp, wr, slot,
					  mrxe_queue_elem_size(qp->sq));
		if (err) {
			*bad_wr = wr;
			break;
		}
		mrxe_queue_produce(qp->sq);
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	mrxe_pipe_kick_sq(qp);
	return err;
}

int mrxe_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct mrxe_qp *qp = to_mqp(ibqp);
	unsigned long flags;
	int err = 0;

	if (qp->is_user) {
		/* A user post_recv without WRs is the RQ doorbell. */
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		mrxe_pipe_kick_rq(qp);
		return 0;
	}
	if (qp->srq) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&qp->rq_lock, flags);
	for (; wr; wr = wr->next) {
		err = mrxe_post_one_recv(qp->rq, qp->rq_max_sge, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	mrxe_pipe_kick_rq(qp);
	return err;
}
