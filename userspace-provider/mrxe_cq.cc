// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Completion queues: the kernel produces struct mrxe_cqe into a ring mapped
 * into this process; poll_cq and the extended poll API consume it without a
 * system call.  Ordering: acquire-load the producer index, copy the entry
 * out, then release-store the consumer index so the kernel may reuse the slot.
 */
#include "mrxe_provider.h"

#include <mutex>

namespace mrxe {

static void cqe_to_wc(const mrxe_cqe &c, ibv_wc *wc)
{
	wc->wr_id = c.wr_id;
	wc->status = static_cast<ibv_wc_status>(c.status);
	wc->opcode = static_cast<ibv_wc_opcode>(c.opcode);
	wc->vendor_err = c.vendor_err;
	wc->byte_len = c.byte_len;
	wc->imm_data = c.ex.imm_data;	/* union with invalidated_rkey */
	wc->qp_num = c.qp_num;
	wc->src_qp = c.src_qp;
	wc->wc_flags = c.wc_flags;
	wc->pkey_index = c.pkey_index;
	wc->slid = c.slid;
	wc->sl = c.sl;
	wc->dlid_path_bits = c.dlid_path_bits;
}

/* Copy the next entry out of the ring; false when empty. Lock held. */
static bool cq_next(Cq *cq, uint32_t &cons, mrxe_cqe &out)
{
	uint32_t prod = cq->ring.peer();

	if (prod == cons)
		return false;
	if (!mrxe_ring_valid(prod, cons, cq->ring.mask()))
		return false;	/* corrupt producer index: treat as empty */
	std::memcpy(&out, cq->ring.slot(cons), sizeof(out));
	cons++;
	return true;
}

int poll_cq(ibv_cq *ibcq, int ne, ibv_wc *wc)
{
	Cq *cq = to_cq(ibcq);
	std::lock_guard<SpinLock> g(cq->lock);

	if (cq->broken)
		return -EIO;
	uint32_t cons = cq->ring.own();
	int n = 0;
	mrxe_cqe c;

	while (n < ne && cq_next(cq, cons, c))
		cqe_to_wc(c, &wc[n++]);
	if (n)
		cq->ring.publish(cons);
	return n;
}

/* ---- extended poll (ibv_start_poll/next_poll/end_poll + read_*) ---- */

static int start_poll(ibv_cq_ex *ex, ibv_poll_cq_attr *attr)
{
	Cq *cq = to_cq(ex);

	if (attr && attr->comp_mask)
		return EINVAL;
	cq->lock.lock();
	uint32_t cons = cq->ring.own();
	if (cq->broken || !cq_next(cq, cons, cq->cur)) {
		cq->lock.unlock();	/* caller must not call end_poll */
		return ENOENT;
	}
	cq->ring.publish(cons);
	ex->wr_id = cq->cur.wr_id;
	ex->status = static_cast<ibv_wc_status>(cq->cur.status);
	return 0;
}

static int next_poll(ibv_cq_ex *ex)
{
	Cq *cq = to_cq(ex);
	uint32_t cons = cq->ring.own();

	if (!cq_next(cq, cons, cq->cur))
		return ENOENT;	/* lock stays held until end_poll */
	cq->ring.publish(cons);
	ex->wr_id = cq->cur.wr_id;
	ex->status = static_cast<ibv_wc_status>(cq->cur.status);
	return 0;
}

static void end_poll(ibv_cq_ex *ex)
{
	to_cq(ex)->lock.unlock();
}

static ibv_wc_opcode read_opcode(ibv_cq_ex *ex)
{
	return static_cast<ibv_wc_opcode>(to_cq(ex)->cur.opcode);
}
static uint32_t read_vendor_err(ibv_cq_ex *ex) { return to_cq(ex)->cur.vendor_err; }
static uint32_t read_byte_len(ibv_cq_ex *ex) { return to_cq(ex)->cur.byte_len; }
static __be32 read_imm_data(ibv_cq_ex *ex) { return to_cq(ex)->cur.ex.imm_data; }
static uint32_t read_qp_num(ibv_cq_ex *ex) { return to_cq(ex)->cur.qp_num; }
static uint32_t read_src_qp(ibv_cq_ex *ex) { return to_cq(ex)->cur.src_qp; }
static unsigned int read_wc_flags(ibv_cq_ex *ex) { return to_cq(ex)->cur.wc_flags; }
static uint32_t read_slid(ibv_cq_ex *ex) { return to_cq(ex)->cur.slid; }
static uint8_t read_sl(ibv_cq_ex *ex) { return to_cq(ex)->cur.sl; }
static uint8_t read_dlid_path_bits(ibv_cq_ex *ex) { return to_cq(ex)->cur.dlid_path_bits; }

static constexpr uint64_t kSupWcFlags =
	IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
	IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
	IBV_WC_EX_WITH_DLID_PATH_BITS;

static void set_ex_ops(Cq *cq)
{
	ibv_cq_ex &x = cq->cq_ex;

	x.start_poll = start_poll;
	x.next_poll = next_poll;
	x.end_poll = end_poll;
	x.read_opcode = read_opcode;
	x.read_vendor_err = read_vendor_err;
	x.read_byte_len = read_byte_len;
	x.read_imm_data = read_imm_data;
	x.read_qp_num = read_qp_num;
	x.read_src_qp = read_src_qp;
	x.read_wc_flags = read_wc_flags;
	x.read_slid = read_slid;
	x.read_sl = read_sl;
	x.read_dlid_path_bits = read_dlid_path_bits;
}

static int check_depth(ibv_context *ibctx, int cqe)
{
	const Context *ctx = to_ctx(ibctx);

	if (cqe < 1 || uint32_t(cqe) > ctx->max_cqe)
		return EINVAL;
	return 0;
}

/* Map the ring the kernel described; destroys the CQ on failure. */
static int finish_create(ibv_context *ctx, Cq *cq, const mrxe_create_cq_resp &r)
{
	int ret = cq->ring.map(ctx->cmd_fd, r.mi, Ring::Role::Consumer,
			       r.num_slots, sizeof(mrxe_cqe));
	if (ret) {
		mrxe_err(verbs_get_ctx(ctx), "CQ ring map failed: %d\n", ret);
		ibv_cmd_destroy_cq(&cq->cq);
		return ret;
	}
	cq->cqn = r.cqn;
	set_ex_ops(cq);
	return 0;
}

ibv_cq *create_cq(ibv_context *ctx, int cqe, ibv_comp_channel *ch, int vec)
{
	int ret = check_depth(ctx, cqe);
	if (ret) {
		errno = ret;
		return nullptr;
	}
	auto *cq = new (std::nothrow) Cq();
	if (!cq) {
		errno = ENOMEM;
		return nullptr;
	}
	struct ibv_create_cq cmd{};
	RespBuf<ib_uverbs_create_cq_resp, mrxe_create_cq_resp> resp;

	ret = ibv_cmd_create_cq(ctx, cqe, ch, vec, &cq->cq, &cmd, sizeof(cmd),
				resp.core(), resp.size());
	if (!ret)
		ret = finish_create(ctx, cq, resp.drv());
	if (ret) {
		delete cq;
		errno = ret;
		return nullptr;
	}
	return &cq->cq;
}

ibv_cq_ex *create_cq_ex(ibv_context *ctx, ibv_cq_init_attr_ex *attr)
{
	if (attr->comp_mask & ~uint32_t(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					IBV_CQ_INIT_ATTR_MASK_PD) ||
	    (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS &&
	     attr->flags & ~uint32_t(IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;
		return nullptr;
	}
	/* A CQ belongs to no PD: only a parent domain (its allocators) fits. */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain || attr->parent_domain->context != ctx ||
	     !to_pd(attr->parent_domain)->is_parent())) {
		errno = EINVAL;
		return nullptr;
	}
	if (attr->wc_flags & ~kSupWcFlags) {
		errno = EOPNOTSUPP;
		return nullptr;
	}
	int ret = check_depth(ctx, int(attr->cqe));
	if (ret || attr->cqe > uint32_t(INT32_MAX)) {
		errno = EINVAL;
		return nullptr;
	}
	auto *cq = new (std::nothrow) Cq();
	if (!cq) {
		errno = ENOMEM;
		return nullptr;
	}
	RespBuf<ib_uverbs_ex_create_cq_resp, mrxe_create_cq_resp> resp;

	ret = ibv_cmd_create_cq_ex(ctx, attr, cq, nullptr, 0, resp.core(),
				   resp.size(), 0);
	if (!ret)
		ret = finish_create(ctx, cq, resp.drv());
	if (ret) {
		delete cq;
		errno = ret;
		return nullptr;
	}
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD)
		cq->parent = pd_get_parent(attr->parent_domain);
	return &cq->cq_ex;
}

/*
 * The kernel moves outstanding entries into a new ring and tells us where it
 * is; pollers are held off by the CQ lock while we remap.
 */
int resize_cq(ibv_cq *ibcq, int cqe)
{
	Cq *cq = to_cq(ibcq);
	int ret = check_depth(ibcq->context, cqe);
	if (ret)
		return ret;

	std::lock_guard<SpinLock> g(cq->lock);
	struct ibv_resize_cq cmd{};
	RespBuf<ib_uverbs_resize_cq_resp, mrxe_resize_cq_resp> resp;

	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), resp.core(),
				resp.size());
	if (ret)
		return ret;
	mrxe_resize_cq_resp r = resp.drv();
	Ring fresh;
	ret = fresh.map(ibcq->context->cmd_fd, r.mi, Ring::Role::Consumer,
			r.num_slots, sizeof(mrxe_cqe));
	if (ret) {
		mrxe_err(verbs_get_ctx(ibcq->context),
			 "CQ %u: remap after resize failed: %d\n", cq->cqn, ret);
		cq->ring.reset();
		cq->broken = true;
		return ret;
	}
	cq->ring.swap(fresh);	/* old mapping unmapped with fresh */
	return 0;
}

/* EBUSY while a QP or SRQ still uses it. */
int destroy_cq(ibv_cq *ibcq)
{
	int ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	pd_put(to_cq(ibcq)->parent);
	delete to_cq(ibcq);
	return 0;
}

} /* namespace mrxe */
