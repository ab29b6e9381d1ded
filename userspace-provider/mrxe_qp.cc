// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Queue pairs and shared receive queues.  Posting writes WQEs straight into
 * the rings mapped from the kernel and publishes the producer index with a
 * release store; the send queue then gets a zero-WR post_send as doorbell.
 * Receive queues need no doorbell: the responder reads the RQ when a packet
 * arrives, and a peer that got an RNR NAK retries after its RNR timer
 * (IBA 9.7.5.2.8), so a later post_recv is found without a kick.
 */
#include "mrxe_provider.h"

#include <mutex>

namespace mrxe {

static constexpr unsigned kSendFlags = IBV_SEND_FENCE | IBV_SEND_SIGNALED |
				       IBV_SEND_SOLICITED | IBV_SEND_INLINE;

/* Opcodes per transport service, IBA 9.2 / table 38 (RC, UC, UD columns). */
static bool opcode_ok(ibv_qp_type t, unsigned op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
	case IBV_WR_SEND_WITH_INV:
		return t == IBV_QPT_RC || t == IBV_QPT_UC;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return t == IBV_QPT_RC;
	default:
		return false;
	}
}

/*
 * Access rights of a memory window bind: IBA 10.6.7.2 lets a window grant
 * remote read, write and atomic access only; local access always goes
 * through the MR's L_Key.  IBV_ACCESS_LOCAL_WRITE is meaningless for a
 * window, but applications pass it (rdma-core's own pyverbs tests do) and
 * other providers ignore it, so it is dropped here; anything else unknown is
 * refused.  Returns -1 for a bad set.
 */
static int mw_bind_access(unsigned int access)
{
	constexpr unsigned int remote = IBV_ACCESS_REMOTE_READ |
					IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_ATOMIC |
					IBV_ACCESS_ZERO_BASED;

	access &= ~unsigned(IBV_ACCESS_LOCAL_WRITE);
	if (access & ~remote)
		return -1;
	return int(access);
}

static bool carries_payload(unsigned op)
{
	return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM ||
	       op == IBV_WR_SEND_WITH_INV || op == IBV_WR_RDMA_WRITE ||
	       op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

/* IBA C10-?: no Send WRs may be posted before the QP reaches RTS. */
static bool sq_state_ok(const ibv_qp *qp)
{
	return qp->state != IBV_QPS_RESET && qp->state != IBV_QPS_INIT &&
	       qp->state != IBV_QPS_RTR;
}

static void kick_sq(Qp *qp)
{
	ibv_send_wr *bad = nullptr;
	int ret = ibv_cmd_post_send(&qp->qp, nullptr, &bad);

	if (ret)
		qp->wr_err = ret;
}

/* Validate one ibv_send_wr and write it at producer index idx. */
static int write_send_wqe(Qp *qp, const ibv_send_wr *wr, uint32_t idx)
{
	ibv_qp *ibqp = &qp->qp;
	unsigned op = wr->opcode;

	if (!opcode_ok(ibqp->qp_type, op) || wr->num_sge < 0)
		return EINVAL;
	if (wr->send_flags & ~kSendFlags)
		return EINVAL;
	bool inl = (wr->send_flags & IBV_SEND_INLINE) && carries_payload(op);
	uint64_t len = 0;
	for (int i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (inl ? len > qp->sq_max_inline : uint32_t(wr->num_sge) > qp->sq_max_sge)
		return EINVAL;
	if (op == IBV_WR_BIND_MW) {
		const ibv_mw *mw = wr->bind_mw.mw;
		const ibv_mr *mr = wr->bind_mw.bind_info.mr;
		if (!mw || mw->context != ibqp->context || wr->num_sge ||
		    (mr && mr->context != ibqp->context) ||
		    mw_bind_access(wr->bind_mw.bind_info.mw_access_flags) < 0)
			return EINVAL;
	}
	const Ah *ah = nullptr;
	if (ibqp->qp_type == IBV_QPT_UD) {
		ah = to_ah(wr->wr.ud.ah);
		if (!ah || ah->ah.context != ibqp->context)
			return EINVAL;
	}

	auto *w = static_cast<mrxe_send_wqe *>(qp->sq.slot(idx));
	std::memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->opcode = op;
	w->send_flags = inl ? wr->send_flags : wr->send_flags & ~IBV_SEND_INLINE;
	if (op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM)
		w->ex.imm_data = wr->imm_data;
	else if (op == IBV_WR_SEND_WITH_INV || op == IBV_WR_LOCAL_INV)
		w->ex.invalidate_rkey = wr->invalidate_rkey;

	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		w->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		w->wr.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		w->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		w->wr.atomic.swap = wr->wr.atomic.swap;
		w->wr.atomic.rkey = wr->wr.atomic.rkey;
		break;
	case IBV_WR_BIND_MW: {
		const ibv_mw_bind_info &bi = wr->bind_mw.bind_info;
		w->wr.mw.addr = bi.addr;
		w->wr.mw.length = bi.length;
		w->wr.mw.mr_lkey = bi.mr ? bi.mr->lkey : 0;
		w->wr.mw.mw_rkey = wr->bind_mw.mw->rkey;
		w->wr.mw.rkey = wr->bind_mw.rkey;
		w->wr.mw.access = uint32_t(mw_bind_access(bi.mw_access_flags));
		break;
	}
	default:
		break;
	}
	if (ah) {
		w->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
		w->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
		w->wr.ud.ah_num = ah->ah_num;
	}

	auto *payload = reinterpret_cast<uint8_t *>(w + 1);
	if (inl) {
		for (int i = 0; i < wr->num_sge; i++) {
			std::memcpy(payload,
				    reinterpret_cast<const void *>(
					    uintptr_t(wr->sg_list[i].addr)),
				    wr->sg_list[i].length);
			payload += wr->sg_list[i].length;
		}
		w->inline_len = uint32_t(len);
		w->num_sge = 0;
	} else {
		std::memcpy(payload, wr->sg_list,
			    size_t(wr->num_sge) * sizeof(mrxe_sge));
		w->num_sge = uint32_t(wr->num_sge);
	}
	return 0;
}

int post_send(ibv_qp *ibqp, ibv_send_wr *wr, ibv_send_wr **bad)
{
	Qp *qp = to_qp(ibqp);
	int ret = 0;

	if (!bad)
		return EINVAL;
	*bad = nullptr;
	if (!wr)
		return 0;
	if (!sq_state_ok(ibqp)) {
		*bad = wr;
		return EINVAL;
	}
	if (!qp->sq.mapped()) {
		*bad = wr;
		return ENOMEM;
	}

	std::lock_guard<SpinLock> g(qp->sq_lock);
	uint32_t prod = qp->sq.own();
	uint32_t cons = qp->sq.peer();
	if (!mrxe_ring_valid(prod, cons, qp->sq.mask())) {
		*bad = wr;
		return EIO;
	}
	for (; wr; wr = wr->next) {
		if (mrxe_ring_full(prod, cons, qp->sq.mask())) {
			ret = ENOMEM;
			break;
		}
		ret = write_send_wqe(qp, wr, prod);
		if (ret)
			break;
		prod++;
	}
	if (ret)
		*bad = wr;
	if (prod != qp->sq.own()) {
		qp->sq.publish(prod);
		qp->wr_err = 0;
		kick_sq(qp);
		if (!ret)
			ret = qp->wr_err;
	}
	return ret;
}

/* Write one receive WQE (QP RQ or SRQ ring). */
static int write_recv_wqe(Ring &ring, uint32_t max_sge, const ibv_recv_wr *wr,
			  uint32_t idx)
{
	if (wr->num_sge < 0 || uint32_t(wr->num_sge) > max_sge)
		return EINVAL;
	auto *w = static_cast<mrxe_recv_wqe *>(ring.slot(idx));
	w->wr_id = wr->wr_id;
	w->num_sge = uint32_t(wr->num_sge);
	w->reserved = 0;
	std::memcpy(w + 1, wr->sg_list, size_t(wr->num_sge) * sizeof(mrxe_sge));
	return 0;
}

static int post_recv_ring(Ring &ring, SpinLock &lock, uint32_t max_sge,
			  ibv_recv_wr *wr, ibv_recv_wr **bad)
{
	int ret = 0;
	std::lock_guard<SpinLock> g(lock);
	uint32_t prod = ring.own();
	uint32_t cons = ring.peer();

	if (!mrxe_ring_valid(prod, cons, ring.mask())) {
		*bad = wr;
		return EIO;
	}
	for (; wr; wr = wr->next) {
		if (mrxe_ring_full(prod, cons, ring.mask())) {
			ret = ENOMEM;
			break;
		}
		ret = write_recv_wqe(ring, max_sge, wr, prod);
		if (ret)
			break;
		prod++;
	}
	if (ret)
		*bad = wr;
	if (prod != ring.own())
		ring.publish(prod);
	return ret;
}

int post_recv(ibv_qp *ibqp, ibv_recv_wr *wr, ibv_recv_wr **bad)
{
	Qp *qp = to_qp(ibqp);

	if (!bad)
		return EINVAL;
	*bad = nullptr;
	if (!wr)
		return 0;
	/* C10-49: receive WRs may be posted from INIT on, not in RESET. */
	if (ibqp->state == IBV_QPS_RESET || ibqp->srq) {
		*bad = wr;
		return EINVAL;
	}
	if (!qp->rq.mapped()) {
		*bad = wr;
		return ENOMEM;
	}
	return post_recv_ring(qp->rq, qp->rq_lock, qp->rq_max_sge, wr, bad);
}

/* ibv_bind_mw (type 1 MW): a BIND_MW send WR with the next key tag. */
int bind_mw(ibv_qp *ibqp, ibv_mw *mw, ibv_mw_bind *b)
{
	/* IBA 10.6.7.2.1: zero-based windows are not supported here */
	if (!mw || !b || b->bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED)
		return EINVAL;
	ibv_send_wr wr{};
	ibv_send_wr *bad = nullptr;
	uint32_t rkey = (mw->rkey & 0xffffff00u) | ((mw->rkey + 1) & 0xffu);

	wr.wr_id = b->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = b->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = b->bind_info;
	int ret = post_send(ibqp, &wr, &bad);
	if (ret)
		return ret;
	mw->rkey = rkey;	/* undone by the user on an error completion */
	return 0;
}

/* ---- ibv_wr_* (extended send API) ---- */

static mrxe_send_wqe *wr_begin(ibv_qp_ex *x, unsigned op)
{
	Qp *qp = to_qp(x);

	if (qp->wr_err)
		return nullptr;
	if (!opcode_ok(x->qp_base.qp_type, op) || (x->wr_flags & ~kSendFlags)) {
		qp->wr_err = EINVAL;
		return nullptr;
	}
	if (!qp->sq.mapped() ||
	    mrxe_ring_full(qp->wr_next, qp->sq.peer(), qp->sq.mask())) {
		qp->wr_err = ENOMEM;
		return nullptr;
	}
	auto *w = static_cast<mrxe_send_wqe *>(qp->sq.slot(qp->wr_next++));
	std::memset(w, 0, sizeof(*w));
	w->wr_id = x->wr_id;
	w->opcode = op;
	w->send_flags = x->wr_flags & ~IBV_SEND_INLINE;
	qp->wr_cur = w;
	return w;
}

static void wr_start(ibv_qp_ex *x)
{
	Qp *qp = to_qp(x);

	qp->sq_lock.lock();
	qp->wr_err = sq_state_ok(&x->qp_base) ? 0 : EINVAL;
	qp->wr_next = qp->sq.own();
	qp->wr_cur = nullptr;
}

static int wr_complete(ibv_qp_ex *x)
{
	Qp *qp = to_qp(x);
	int ret = qp->wr_err;

	if (!ret && qp->wr_next != qp->sq.own()) {
		qp->sq.publish(qp->wr_next);
		kick_sq(qp);
		ret = qp->wr_err;
	}
	qp->wr_cur = nullptr;
	qp->sq_lock.unlock();
	return ret;
}

static void wr_abort(ibv_qp_ex *x)
{
	Qp *qp = to_qp(x);

	qp->wr_cur = nullptr;
	qp->sq_lock.unlock();
}

static void wr_send(ibv_qp_ex *x) { wr_begin(x, IBV_WR_SEND); }

static void wr_send_imm(ibv_qp_ex *x, __be32 imm)
{
	if (auto *w = wr_begin(x, IBV_WR_SEND_WITH_IMM))
		w->ex.imm_data = imm;
}

static void wr_send_inv(ibv_qp_ex *x, uint32_t rkey)
{
	if (auto *w = wr_begin(x, IBV_WR_SEND_WITH_INV))
		w->ex.invalidate_rkey = rkey;
}

static void wr_rdma(ibv_qp_ex *x, unsigned op, uint32_t rkey, uint64_t addr)
{
	if (auto *w = wr_begin(x, op)) {
		w->wr.rdma.remote_addr = addr;
		w->wr.rdma.rkey = rkey;
	}
}

static void wr_rdma_write(ibv_qp_ex *x, uint32_t rkey, uint64_t addr)
{
	wr_rdma(x, IBV_WR_RDMA_WRITE, rkey, addr);
}

static void wr_rdma_read(ibv_qp_ex *x, uint32_t rkey, uint64_t addr)
{
	wr_rdma(x, IBV_WR_RDMA_READ, rkey, addr);
}

static void wr_rdma_write_imm(ibv_qp_ex *x, uint32_t rkey, uint64_t addr,
			      __be32 imm)
{
	wr_rdma(x, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr);
	if (Qp *qp = to_qp(x); !qp->wr_err)
		qp->wr_cur->ex.imm_data = imm;
}

static void wr_atomic(ibv_qp_ex *x, unsigned op, uint32_t rkey, uint64_t addr,
		      uint64_t cmp_add, uint64_t swap)
{
	if (auto *w = wr_begin(x, op)) {
		w->wr.atomic.remote_addr = addr;
		w->wr.atomic.rkey = rkey;
		w->wr.atomic.compare_add = cmp_add;
		w->wr.atomic.swap = swap;
	}
}

static void wr_atomic_cmp_swp(ibv_qp_ex *x, uint32_t rkey, uint64_t addr,
			      uint64_t compare, uint64_t swap)
{
	wr_atomic(x, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}

static void wr_atomic_fetch_add(ibv_qp_ex *x, uint32_t rkey, uint64_t addr,
				uint64_t add)
{
	wr_atomic(x, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

/*
 * IBA 1.5 Memory Placement Extensions, RC only and only through ibv_wr_*
 * (ibv_send_wr has no fields for them, so post_send's opcode_ok() refuses
 * both).  The kernel refuses them on other QP types as well.
 */
static mrxe_send_wqe *wr_begin_rc(ibv_qp_ex *x, unsigned op)
{
	Qp *qp = to_qp(x);

	if (!qp->wr_err && x->qp_base.qp_type != IBV_QPT_RC) {
		qp->wr_err = EINVAL;
		return nullptr;
	}
	/* wr_begin's opcode check is post_send's: ask it about a WRITE */
	auto *w = wr_begin(x, IBV_WR_RDMA_WRITE);
	if (w)
		w->opcode = op;
	return w;
}

/* The 8 bytes travel as inline data (mrxe-abi.h): one packet, one store. */
static void wr_atomic_write(ibv_qp_ex *x, uint32_t rkey, uint64_t addr,
			    const void *atomic_wr)
{
	if (auto *w = wr_begin_rc(x, IBV_WR_ATOMIC_WRITE)) {
		w->wr.rdma.remote_addr = addr;
		w->wr.rdma.rkey = rkey;
		std::memcpy(w + 1, atomic_wr, 8);
		w->inline_len = 8;
		w->send_flags |= IBV_SEND_INLINE;
	}
}

#if MRXE_HAVE_WR_FLUSH
static void wr_flush(ibv_qp_ex *x, uint32_t rkey, uint64_t addr, size_t len,
		     uint8_t type, uint8_t level)
{
	Qp *qp = to_qp(x);

	/* the RETH carries a 32-bit length (IBA 9.3.3.3) */
	if (!qp->wr_err &&
	    (!type || (type & ~(IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT)) ||
	     level > IBV_FLUSH_MR || len > UINT32_MAX)) {
		qp->wr_err = EINVAL;
		return;
	}
	if (auto *w = wr_begin_rc(x, IBV_WR_FLUSH)) {
		w->wr.flush.remote_addr = addr;
		w->wr.flush.rkey = rkey;
		w->wr.flush.type = type;
		w->wr.flush.level = level;
		w->wr.flush.length = len;
	}
}
#endif

static void wr_local_inv(ibv_qp_ex *x, uint32_t rkey)
{
	if (auto *w = wr_begin(x, IBV_WR_LOCAL_INV))
		w->ex.invalidate_rkey = rkey;
}

static void wr_bind_mw(ibv_qp_ex *x, ibv_mw *mw, uint32_t rkey,
		       const ibv_mw_bind_info *bi)
{
	Qp *qp = to_qp(x);
	const ibv_context *c = x->qp_base.context;

	if (!qp->wr_err && (!mw || !bi || mw->context != c ||
			    (bi->mr && bi->mr->context != c) ||
			    mw_bind_access(bi->mw_access_flags) < 0)) {
		qp->wr_err = EINVAL;
		return;
	}
	if (auto *w = wr_begin(x, IBV_WR_BIND_MW)) {
		w->wr.mw.addr = bi->addr;
		w->wr.mw.length = bi->length;
		w->wr.mw.mr_lkey = bi->mr ? bi->mr->lkey : 0;
		w->wr.mw.mw_rkey = mw->rkey;
		w->wr.mw.rkey = rkey;
		w->wr.mw.access = uint32_t(mw_bind_access(bi->mw_access_flags));
	}
}

/* Setters apply to the WQE begun by the last op; no-ops after an error. */
static mrxe_send_wqe *wr_target(ibv_qp_ex *x)
{
	Qp *qp = to_qp(x);

	if (qp->wr_err)
		return nullptr;
	if (!qp->wr_cur) {
		qp->wr_err = EINVAL;
		return nullptr;
	}
	return qp->wr_cur;
}

static void wr_set_ud_addr(ibv_qp_ex *x, ibv_ah *ibah, uint32_t qpn,
			   uint32_t qkey)
{
	Qp *qp = to_qp(x);
	auto *w = wr_target(x);

	if (!w)
		return;
	if (x->qp_base.qp_type != IBV_QPT_UD || !ibah ||
	    ibah->context != x->qp_base.context) {
		qp->wr_err = EINVAL;
		return;
	}
	w->wr.ud.remote_qpn = qpn;
	w->wr.ud.remote_qkey = qkey;
	w->wr.ud.ah_num = to_ah(ibah)->ah_num;
}

static void wr_set_sge_list(ibv_qp_ex *x, size_t n, const ibv_sge *sg)
{
	Qp *qp = to_qp(x);
	auto *w = wr_target(x);

	if (!w)
		return;
	if (n > qp->sq_max_sge) {
		qp->wr_err = EINVAL;
		return;
	}
	std::memcpy(w + 1, sg, n * sizeof(mrxe_sge));
	w->num_sge = uint32_t(n);
	w->inline_len = 0;
	w->send_flags &= ~IBV_SEND_INLINE;
}

static void wr_set_sge(ibv_qp_ex *x, uint32_t lkey, uint64_t addr, uint32_t len)
{
	ibv_sge sge = { addr, len, lkey };

	wr_set_sge_list(x, 1, &sge);
}

static void wr_set_inline_data_list(ibv_qp_ex *x, size_t n,
				    const ibv_data_buf *bufs)
{
	Qp *qp = to_qp(x);
	auto *w = wr_target(x);

	if (!w)
		return;
	uint64_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += bufs[i].length;
	if (len > qp->sq_max_inline || !carries_payload(w->opcode)) {
		qp->wr_err = EINVAL;
		return;
	}
	auto *p = reinterpret_cast<uint8_t *>(w + 1);
	for (size_t i = 0; i < n; i++) {
		std::memcpy(p, bufs[i].addr, bufs[i].length);
		p += bufs[i].length;
	}
	w->num_sge = 0;
	w->inline_len = uint32_t(len);
	w->send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(ibv_qp_ex *x, void *addr, size_t len)
{
	ibv_data_buf b = { addr, len };

	wr_set_inline_data_list(x, 1, &b);
}

static void set_wr_ops(Qp *qp)
{
	ibv_qp_ex &x = qp->qp_ex;

	x.wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	x.wr_atomic_fetch_add = wr_atomic_fetch_add;
	x.wr_atomic_write = wr_atomic_write;
#if MRXE_HAVE_WR_FLUSH
	x.wr_flush = wr_flush;
#endif
	x.wr_bind_mw = wr_bind_mw;
	x.wr_local_inv = wr_local_inv;
	x.wr_rdma_read = wr_rdma_read;
	x.wr_rdma_write = wr_rdma_write;
	x.wr_rdma_write_imm = wr_rdma_write_imm;
	x.wr_send = wr_send;
	x.wr_send_imm = wr_send_imm;
	x.wr_send_inv = wr_send_inv;
	x.wr_set_ud_addr = wr_set_ud_addr;
	x.wr_set_inline_data = wr_set_inline_data;
	x.wr_set_inline_data_list = wr_set_inline_data_list;
	x.wr_set_sge = wr_set_sge;
	x.wr_set_sge_list = wr_set_sge_list;
	x.wr_start = wr_start;
	x.wr_complete = wr_complete;
	x.wr_abort = wr_abort;
}

/* ---- QP create/destroy ---- */

static constexpr uint64_t kQpCompMask = IBV_QP_INIT_ATTR_PD |
					IBV_QP_INIT_ATTR_CREATE_FLAGS |
					IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
static constexpr uint64_t kUdOps = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
static constexpr uint64_t kUcOps = kUdOps | IBV_QP_EX_WITH_RDMA_WRITE |
				   IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				   IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW |
				   IBV_QP_EX_WITH_SEND_WITH_INV;
static constexpr uint64_t kRcOps = kUcOps | IBV_QP_EX_WITH_RDMA_READ |
				   IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				   IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
				   IBV_QP_EX_WITH_ATOMIC_WRITE
#if MRXE_HAVE_WR_FLUSH
				   | IBV_QP_EX_WITH_FLUSH
#endif
				   ;

static bool same_ctx(const ibv_context *c, const void *obj_ctx)
{
	return obj_ctx == c;
}

static int check_qp_attr(ibv_context *ibctx, const ibv_qp_init_attr_ex *a)
{
	const Context *ctx = to_ctx(ibctx);

	if (a->comp_mask & ~kQpCompMask)
		return EOPNOTSUPP;
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd)
		return EINVAL;
	if ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && a->create_flags)
		return EOPNOTSUPP;
	uint64_t ops;
	switch (a->qp_type) {
	case IBV_QPT_RC: ops = kRcOps; break;
	case IBV_QPT_UC: ops = kUcOps; break;
	case IBV_QPT_UD: ops = kUdOps; break;
	default: return EOPNOTSUPP;
	}
	if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (a->send_ops_flags & ~ops))
		return EOPNOTSUPP;
	/* Every object must come from this context (uverbs handles are
	 * per-file: a foreign handle could name one of ours). */
	if (!same_ctx(ibctx, a->pd->context) || !a->send_cq || !a->recv_cq ||
	    !same_ctx(ibctx, a->send_cq->context) ||
	    !same_ctx(ibctx, a->recv_cq->context) ||
	    (a->srq && !same_ctx(ibctx, a->srq->context)))
		return EINVAL;
	const ibv_qp_cap &c = a->cap;
	if (c.max_send_wr > ctx->max_qp_wr || c.max_send_sge > ctx->max_sge ||
	    c.max_inline_data > ctx->max_inline)
		return EINVAL;
	if (!a->srq && (c.max_recv_wr > ctx->max_qp_wr ||
			c.max_recv_sge > ctx->max_sge))
		return EINVAL;
	return 0;
}

struct CreateQpCmd {
	struct ibv_create_qp_ex ibv_cmd;
	mrxe_create_qp_cmd drv;
};
static_assert(sizeof(struct ibv_create_qp_ex) % 8 == 0);
static_assert(sizeof(CreateQpCmd) == sizeof(struct ibv_create_qp_ex) + sizeof(mrxe_create_qp_cmd));

static ibv_qp *create_common(ibv_context *ctx, ibv_qp_init_attr_ex *attr,
			     const mrxe_create_qp_cmd &drv, bool ex)
{
	int ret = check_qp_attr(ctx, attr);
	if (ret) {
		errno = ret;
		return nullptr;
	}
	auto *qp = new (std::nothrow) Qp();
	if (!qp) {
		errno = ENOMEM;
		return nullptr;
	}
	CreateQpCmd cmd{};
	cmd.drv = drv;
	RespBuf<ib_uverbs_ex_create_qp_resp, mrxe_create_qp_resp> resp;

	ret = ibv_cmd_create_qp_ex2(ctx, qp, attr, &cmd.ibv_cmd, sizeof(cmd),
				    resp.core(), resp.size());
	if (ret) {
		delete qp;
		errno = ret;
		return nullptr;
	}
	mrxe_create_qp_resp r = resp.drv();
	int fd = ctx->cmd_fd;
	if (r.sq_mi.size) {
		ret = qp->sq.map(fd, r.sq_mi, Ring::Role::Producer, r.sq_slots,
				 MRXE_SEND_WQE_HDR_SIZE);
		if (!ret) {
			uint32_t room = qp->sq.elem_size() - MRXE_SEND_WQE_HDR_SIZE;
			qp->sq_max_sge = std::min<uint32_t>(attr->cap.max_send_sge,
							    room / sizeof(mrxe_sge));
			qp->sq_max_inline = std::min<uint32_t>(r.max_inline, room);
		}
	}
	if (!ret && !attr->srq && r.rq_mi.size) {
		ret = qp->rq.map(fd, r.rq_mi, Ring::Role::Producer, r.rq_slots,
				 MRXE_RECV_WQE_HDR_SIZE);
		if (!ret)
			qp->rq_max_sge = std::min<uint32_t>(
				attr->cap.max_recv_sge,
				(qp->rq.elem_size() - MRXE_RECV_WQE_HDR_SIZE) /
					sizeof(mrxe_sge));
	}
	if (ret) {
		mrxe_err(verbs_get_ctx(ctx), "QP %u: ring map failed: %d\n",
			 r.qpn, ret);
		ibv_cmd_destroy_qp(&qp->qp);
		delete qp;
		errno = ret;
		return nullptr;
	}
	attr->cap.max_inline_data = qp->sq_max_inline;
	qp->transport_mode = r.transport_mode;
	qp->num_paths = r.num_paths;
	qp->flags = drv.flags;
	qp->parent = pd_get_parent(attr->pd);
	if (ex) {
		qp->comp_mask |= VERBS_QP_EX;
		set_wr_ops(qp);
	}
	return &qp->qp;
}

ibv_qp *create_qp(ibv_pd *pd, ibv_qp_init_attr *attr)
{
	ibv_qp_init_attr_ex ax{};

	ax.qp_context = attr->qp_context;
	ax.send_cq = attr->send_cq;
	ax.recv_cq = attr->recv_cq;
	ax.srq = attr->srq;
	ax.cap = attr->cap;
	ax.qp_type = attr->qp_type;
	ax.sq_sig_all = attr->sq_sig_all;
	ax.comp_mask = IBV_QP_INIT_ATTR_PD;
	ax.pd = pd;
	ibv_qp *qp = create_common(pd->context, &ax, mrxe_create_qp_cmd{}, false);
	if (qp)
		attr->cap = ax.cap;
	return qp;
}

ibv_qp *create_qp_ex(ibv_context *ctx, ibv_qp_init_attr_ex *attr)
{
	return create_common(ctx, attr, mrxe_create_qp_cmd{}, true);
}

int query_qp(ibv_qp *qp, ibv_qp_attr *attr, int mask, ibv_qp_init_attr *init)
{
	struct ibv_query_qp cmd{};

	return ibv_cmd_query_qp(qp, attr, mask, init, &cmd, sizeof(cmd));
}

int modify_qp(ibv_qp *qp, ibv_qp_attr *attr, int mask)
{
	struct ibv_modify_qp cmd{};

	return ibv_cmd_modify_qp(qp, attr, mask, &cmd, sizeof(cmd));
}

int destroy_qp(ibv_qp *ibqp)
{
	int ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	pd_put(to_qp(ibqp)->parent);
	delete to_qp(ibqp);
	return 0;
}

/* ---- SRQ ---- */

static int check_srq_attr(ibv_context *ibctx, const ibv_srq_attr &a)
{
	const Context *ctx = to_ctx(ibctx);

	/* IBA 11.2.3.1 (Create SRQ): depth >= 1; limit <= depth */
	if (a.max_wr < 1 || a.max_wr > ctx->max_srq_wr ||
	    a.max_sge > ctx->max_srq_sge || a.srq_limit > a.max_wr)
		return EINVAL;
	return 0;
}

static int finish_srq(ibv_context *ctx, Srq *srq, const ibv_srq_attr &a,
		      const mrxe_create_srq_resp &r)
{
	int ret = srq->ring.map(ctx->cmd_fd, r.mi, Ring::Role::Producer,
				r.num_slots, MRXE_RECV_WQE_HDR_SIZE);
	if (ret) {
		mrxe_err(verbs_get_ctx(ctx), "SRQ ring map failed: %d\n", ret);
		ibv_cmd_destroy_srq(&srq->srq);
		return ret;
	}
	srq->max_sge = std::min<uint32_t>(
		a.max_sge, (srq->ring.elem_size() - MRXE_RECV_WQE_HDR_SIZE) /
				   sizeof(mrxe_sge));
	srq->srq_num_ = r.srq_num;
	srq->srq_num = r.srq_num;
	return 0;
}

ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr *attr)
{
	int ret = check_srq_attr(pd->context, attr->attr);
	if (ret) {
		errno = ret;
		return nullptr;
	}
	auto *srq = new (std::nothrow) Srq();
	if (!srq) {
		errno = ENOMEM;
		return nullptr;
	}
	struct ibv_create_srq cmd{};
	RespBuf<ib_uverbs_create_srq_resp, mrxe_create_srq_resp> resp;

	ret = ibv_cmd_create_srq(pd, &srq->srq, attr, &cmd, sizeof(cmd),
				 resp.core(), resp.size());
	if (!ret)
		ret = finish_srq(pd->context, srq, attr->attr, resp.drv());
	if (ret) {
		delete srq;
		errno = ret;
		return nullptr;
	}
	srq->parent = pd_get_parent(pd);
	return &srq->srq;
}

ibv_srq *create_srq_ex(ibv_context *ctx, ibv_srq_init_attr_ex *attr)
{
	if (attr->comp_mask & ~uint32_t(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD) ||
	    ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	     attr->srq_type != IBV_SRQT_BASIC)) {
		errno = EOPNOTSUPP;
		return nullptr;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != ctx) {
		errno = EINVAL;
		return nullptr;
	}
	ibv_srq_init_attr plain{};
	plain.srq_context = attr->srq_context;
	plain.attr = attr->attr;
	ibv_srq *srq = create_srq(attr->pd, &plain);
	if (srq) {
		attr->attr = plain.attr;
		to_srq(srq)->srq_type = IBV_SRQT_BASIC;
	}
	return srq;
}

/*
 * IBV_SRQ_MAX_WR resizes (IBA 11.2.3.3): the kernel moves the posted WQEs
 * to a new ring and writes its mmap info to resp_addr (mrxe-abi.h); the
 * posting lock is held across, so no WQE is written to the old ring after
 * the kernel copied it.  The limit arms the SRQ_LIMIT event.
 */
int modify_srq(ibv_srq *ibsrq, ibv_srq_attr *attr, int mask)
{
	Srq *srq = to_srq(ibsrq);
	struct {
		struct ibv_modify_srq ibv;
		mrxe_modify_srq_cmd drv;
	} cmd{};
	mrxe_resize_srq_resp r{};

	if (mask & ~(IBV_SRQ_LIMIT | IBV_SRQ_MAX_WR))
		return EINVAL;
	if (!(mask & IBV_SRQ_MAX_WR)) {
		if (attr->srq_limit > srq->ring.slots())
			return EINVAL;
		return ibv_cmd_modify_srq(ibsrq, attr, mask, &cmd.ibv,
					  sizeof(cmd.ibv));
	}
	const Context *ctx = to_ctx(ibsrq->context);
	if (attr->max_wr < 1 || attr->max_wr > ctx->max_srq_wr)
		return EINVAL;

	std::lock_guard<SpinLock> g(srq->lock);
	cmd.drv.resp_addr = reinterpret_cast<uintptr_t>(&r);
	int ret = ibv_cmd_modify_srq(ibsrq, attr, mask, &cmd.ibv, sizeof(cmd));
	if (ret)
		return ret;
	Ring fresh;
	ret = fresh.map(ibsrq->context->cmd_fd, r.mi, Ring::Role::Producer,
			r.num_slots, srq->ring.elem_size());
	if (ret) {
		mrxe_err(verbs_get_ctx(ibsrq->context),
			 "SRQ %u: remap after resize failed: %d\n", srq->srq_num_,
			 ret);
		srq->ring.reset();	/* post_srq_recv: ENOMEM from now on */
		return ret;
	}
	srq->ring.swap(fresh);	/* old mapping unmapped with fresh */
	return 0;
}

int query_srq(ibv_srq *srq, ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd{};

	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

int destroy_srq(ibv_srq *ibsrq)
{
	int ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	pd_put(to_srq(ibsrq)->parent);
	delete to_srq(ibsrq);
	return 0;
}

int post_srq_recv(ibv_srq *ibsrq, ibv_recv_wr *wr, ibv_recv_wr **bad)
{
	Srq *srq = to_srq(ibsrq);

	if (!bad)
		return EINVAL;
	*bad = nullptr;
	if (!wr)
		return 0;
	if (!srq->ring.mapped()) {	/* a resize failed to remap it */
		*bad = wr;
		return ENOMEM;
	}
	return post_recv_ring(srq->ring, srq->lock, srq->max_sge, wr, bad);
}

int get_srq_num(ibv_srq *srq, uint32_t *num)
{
	*num = to_srq(srq)->srq_num_;
	return 0;
}

} /* namespace mrxe */

/* ---- direct verbs ---- */

extern "C" MRXE_EXPORT ibv_qp *mrxedv_create_qp(ibv_context *ctx,
						ibv_qp_init_attr_ex *attr,
						mrxedv_qp_init_attr *dv)
{
	if (!ctx || !attr) {
		errno = EINVAL;
		return nullptr;
	}
	if (!mrxe::is_mrxe_context(ctx)) {
		errno = EOPNOTSUPP;
		return nullptr;
	}
	mrxe_create_qp_cmd drv{};
	if (dv) {
		constexpr uint64_t known = MRXEDV_QP_INIT_ATTR_TRANSPORT |
					   MRXEDV_QP_INIT_ATTR_NUM_PATHS |
					   MRXEDV_QP_INIT_ATTR_FLAGS |
					   MRXEDV_QP_INIT_ATTR_PRIORITY;
		if (dv->comp_mask & ~known ||
		    (dv->priority &&
		     !(dv->comp_mask & MRXEDV_QP_INIT_ATTR_PRIORITY))) {
			errno = EINVAL;
			return nullptr;
		}
		if (dv->comp_mask & MRXEDV_QP_INIT_ATTR_TRANSPORT) {
			if (dv->transport_mode > MRXEDV_TRANSPORT_AUTO) {
				errno = EINVAL;
				return nullptr;
			}
			if ((dv->transport_mode == MRXEDV_TRANSPORT_METAROCE ||
			     dv->transport_mode == MRXEDV_TRANSPORT_AUTO) &&
			    !(mrxe::to_ctx(ctx)->uresp.caps & MRXE_CAP_METAROCE)) {
				errno = EOPNOTSUPP;
				return nullptr;
			}
			drv.transport_mode = dv->transport_mode;
		}
		if (dv->comp_mask & MRXEDV_QP_INIT_ATTR_NUM_PATHS) {
			/* 0 paths is no path: omit the bit for the default */
			if (!dv->num_paths || dv->num_paths > MRXEDV_MAX_PATHS) {
				errno = EINVAL;
				return nullptr;
			}
			drv.num_paths = dv->num_paths;
		}
		if (dv->comp_mask & MRXEDV_QP_INIT_ATTR_FLAGS) {
			if (dv->flags & ~uint32_t(MRXEDV_QP_FLAG_SPRAY)) {
				errno = EINVAL;
				return nullptr;
			}
			drv.flags = dv->flags;
		}
		if (dv->comp_mask & MRXEDV_QP_INIT_ATTR_PRIORITY) {
			if (dv->priority > MRXEDV_MAX_PRIORITY) {
				errno = EINVAL;
				return nullptr;
			}
			drv.flags |= MRXE_QP_FLAG_PRIORITY;
			drv.priority = dv->priority;
		}
	}
	return mrxe::create_common(ctx, attr, drv, true);
}

extern "C" MRXE_EXPORT int mrxedv_query_qp_mode(ibv_qp *ibqp,
						mrxedv_qp_mode *mode)
{
	if (!ibqp || !mode)
		return EINVAL;
	if (!mrxe::is_mrxe_context(ibqp->context))
		return EOPNOTSUPP;
	const mrxe::Qp *qp = mrxe::to_qp(ibqp);
	*mode = {};
	/* an `auto` QP upgrades in-band: the kernel keeps the SQ ring's copy */
	uint32_t cur = qp->sq.transport_mode();
	mode->transport_mode = cur ? cur : qp->transport_mode;
	mode->num_paths = qp->num_paths;
	mode->flags = qp->flags;
	return 0;
}
