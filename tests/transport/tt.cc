// SPDX-License-Identifier: GPL-2.0
// Transport error-path tests: fixture and helper implementations.
#include "tt.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tt {

const char *status_name(int s)
{
	return ibv_wc_status_str(ibv_wc_status(s));
}

const char *qp_state_name(int s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };
	return s >= 0 && s < int(sizeof(n) / sizeof(n[0])) ? n[s] : "?";
}

// ------------------------------------------------------- GuardedBuf -------

GuardedBuf::GuardedBuf(size_t len, uint8_t seed) : len_(len)
{
	size_t pg = size_t(sysconf(_SC_PAGESIZE));
	total_ = kGuard + ((len + pg - 1) / pg) * pg + kGuard;
	if (total_ < kGuard * 2 + pg)
		total_ = kGuard * 2 + pg;
	void *p = mmap(nullptr, total_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		abort();
	}
	base_ = static_cast<uint8_t *>(p);
	fill(seed);
}

GuardedBuf::~GuardedBuf()
{
	munmap(base_, total_);
}

void GuardedBuf::fill(uint8_t seed)
{
	for (size_t i = 0; i < total_; i++)
		base_[i] = pat(seed, i);
	snapshot();
}

void GuardedBuf::snapshot()
{
	ref_.assign(base_, base_ + total_);
}

void GuardedBuf::expect_write(size_t off, const void *bytes, size_t n)
{
	memcpy(ref_.data() + kGuard + off, bytes, n);
}

static std::string where(size_t i, size_t len)
{
	std::ostringstream o;
	if (i < GuardedBuf::kGuard)
		o << "leading guard, " << GuardedBuf::kGuard - i << " bytes before the target";
	else if (i - GuardedBuf::kGuard < len)
		o << "target offset " << i - GuardedBuf::kGuard;
	else
		o << "trailing guard, " << i - GuardedBuf::kGuard - len << " bytes after the target end";
	return o.str();
}

::testing::AssertionResult GuardedBuf::unchanged_except(size_t off, size_t n) const
{
	size_t lo = kGuard + off, hi = kGuard + off + n, bad = 0, first = SIZE_MAX;
	for (size_t i = 0; i < total_; i++) {
		if (i >= lo && i < hi)
			continue;
		if (base_[i] != ref_[i]) {
			if (first == SIZE_MAX)
				first = i;
			bad++;
		}
	}
	if (!bad)
		return ::testing::AssertionSuccess();
	char b[64];
	snprintf(b, sizeof(b), "0x%02x (expected 0x%02x)", base_[first], ref_[first]);
	return ::testing::AssertionFailure()
	       << bad << " byte(s) changed that must not; first at " << where(first, len_)
	       << ": " << b;
}

::testing::AssertionResult GuardedBuf::unchanged() const
{
	return unchanged_except(0, 0);
}

MrPtr GuardedBuf::reg(ibv_pd *pd, int access, size_t off, size_t n)
{
	if (n == SIZE_MAX)
		n = len_ - off;
	return MrPtr(ibv_reg_mr(pd, data() + off, n, access));
}

// ------------------------------------------------------- Device -----------

static bool ipv4_mapped(const ibv_gid &g)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	return !memcmp(g.raw, pfx, sizeof(pfx));
}

std::string Device::open()
{
	int n = 0;
	ibv_device **list = ibv_get_device_list(&n);
	if (!list)
		return std::string("ibv_get_device_list: ") + strerror(errno);
	const char *want = getenv("MRXE_DEV");
	ibv_device *d = nullptr;
	for (int i = 0; i < n && !d; i++)
		if (!want || !*want || !strcmp(want, ibv_get_device_name(list[i])))
			d = list[i];
	if (!d) {
		ibv_free_device_list(list);
		return std::string("no RDMA device ") + (want ? want : "(any)") +
		       " (RDMAV_DRIVERS set? module loaded?)";
	}
	name = ibv_get_device_name(d);
	ctx = ibv_open_device(d);
	ibv_free_device_list(list);
	if (!ctx)
		return "ibv_open_device(" + name + "): " + strerror(errno);
	if (ibv_query_device(ctx, &attr) || ibv_query_port(ctx, 1, &port))
		return "query device/port failed";
	if (port.state != IBV_PORT_ACTIVE)
		return name + ": port 1 is not ACTIVE";
	for (int i = 0; i < port.gid_tbl_len && gidx < 0; i++) {
		ibv_gid_entry e{};
		if (ibv_query_gid_ex(ctx, 1, i, &e, 0))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 && ipv4_mapped(e.gid)) {
			gid = e.gid;
			gidx = i;
		}
	}
	if (gidx < 0)
		return name + ": no RoCEv2 GID of an IPv4 address";
	return {};
}

Device::~Device()
{
	if (ctx)
		ibv_close_device(ctx);
}

std::optional<uint64_t> hw_counter(const std::string &dev, const std::string &name)
{
	// In a non-init network namespace ib_core shows a compat device
	// without hw_counters; the selftest then bind-mounts the init_net
	// directory and names it in MRXE_HW_COUNTERS_DIR.
	const char *dir = getenv("MRXE_HW_COUNTERS_DIR");
	std::ifstream f(dir && *dir ? std::string(dir) + "/" + name :
			"/sys/class/infiniband/" + dev + "/ports/1/hw_counters/" + name);
	uint64_t v;
	if (!(f >> v))
		return std::nullopt;
	return v;
}

// ------------------------------------------------------- Pair -------------

void Pair::SetUp()
{
	std::string err = dev.open();
	ASSERT_TRUE(err.empty()) << err;
	for (int i = 0; i < 2; i++) {
		pd[i] = ibv_alloc_pd(dev.ctx);
		ASSERT_NE(pd[i], nullptr);
		cq[i] = ibv_create_cq(dev.ctx, 4 * kDepth, nullptr, nullptr, 0);
		ASSERT_NE(cq[i], nullptr);
	}
	pd_other = ibv_alloc_pd(dev.ctx);
	ASSERT_NE(pd_other, nullptr);
}

void Pair::TearDown()
{
	for (auto &q : qp)
		if (q) {
			EXPECT_EQ(ibv_destroy_qp(q), 0);
			q = nullptr;
		}
	for (auto &s : srq_)
		if (s) {
			EXPECT_EQ(ibv_destroy_srq(s), 0);
			s = nullptr;
		}
	for (auto &c : cq) {
		if (c) {
			EXPECT_EQ(ibv_destroy_cq(c), 0);
		}
	}
	for (auto &p : pd) {
		if (p) {
			EXPECT_EQ(ibv_dealloc_pd(p), 0) << "a test leaked an MR/MW/AH";
		}
	}
	if (pd_other) {
		EXPECT_EQ(ibv_dealloc_pd(pd_other), 0) << "a test leaked an MR/MW";
	}
}

int Pair::to_init(ibv_qp *q, const ConnOpts &o)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (q->qp_type == IBV_QPT_UD) {
		a.qkey = 0x11111111;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = o.access;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return ibv_modify_qp(q, &a, mask);
}

std::optional<std::pair<int, ibv_gid>> global_ipv6_gid(ibv_context *ctx)
{
	static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const uint8_t zero[16] = {};
	for (int i = 0; i < 64; i++) {
		ibv_gid_entry e{};
		if (ibv_query_gid_ex(ctx, 1, i, &e, 0))
			continue;
		const uint8_t *r = e.gid.raw;
		if (e.gid_type != IBV_GID_TYPE_ROCE_V2 || !memcmp(r, zero, 16) ||
		    !memcmp(r, v4mapped, 12) || (r[0] == 0xfe && (r[1] & 0xc0) == 0x80))
			continue;
		return std::make_pair(i, e.gid);
	}
	return std::nullopt;
}

int Pair::to_rtr(ibv_qp *q, uint32_t dqpn, const ConnOpts &o)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_RTR;
	int mask = IBV_QP_STATE;
	if (q->qp_type != IBV_QPT_UD) {
		a.path_mtu = o.mtu;
		a.dest_qp_num = dqpn;
		a.rq_psn = 0x1000 + dqpn % 0x1000;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.dgid = o.gidx >= 0 ? o.gid : dev.gid;
		a.ah_attr.grh.sgid_index = uint8_t(o.gidx >= 0 ? o.gidx : dev.gidx);
		a.ah_attr.grh.flow_label = o.flow_label;
		a.ah_attr.grh.hop_limit = 64;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (q->qp_type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = 4;
			a.min_rnr_timer = o.min_rnr_timer;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	return ibv_modify_qp(q, &a, mask);
}

int Pair::to_rts(ibv_qp *q, const ConnOpts &o)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_RTS;
	/* the peer's rq_psn (to_rtr) is derived from this QP's number */
	a.sq_psn = 0x1000 + q->qp_num % 0x1000;
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (q->qp_type == IBV_QPT_RC) {
		a.timeout = o.timeout;
		a.retry_cnt = o.retry_cnt;
		a.rnr_retry = o.rnr_retry;
		a.max_rd_atomic = 4;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(q, &a, mask);
}

int Pair::to_state(ibv_qp *q, ibv_qp_state s)
{
	ibv_qp_attr a{};
	a.qp_state = s;
	return ibv_modify_qp(q, &a, IBV_QP_STATE);
}

ibv_qp_state Pair::qp_state(ibv_qp *q)
{
	ibv_qp_attr a{};
	ibv_qp_init_attr ia{};
	if (ibv_query_qp(q, &a, IBV_QP_STATE, &ia)) {
		ADD_FAILURE() << "ibv_query_qp: " << strerror(errno);
		return ibv_qp_state(-1);
	}
	return a.qp_state;
}

void Pair::create_qp(int i, ibv_qp_type type, const ConnOpts &o)
{
	ibv_qp_init_attr ia{};
	ia.send_cq = cq[i];
	ia.recv_cq = cq[i];
	ia.qp_type = type;
	ia.cap.max_send_wr = kDepth;
	ia.cap.max_recv_wr = kDepth;
	ia.cap.max_send_sge = 2;
	ia.cap.max_recv_sge = 2;
	ia.cap.max_inline_data = 0;
	ia.srq = srq_[i];
	qp[i] = ibv_create_qp(pd[i], &ia);
	ASSERT_NE(qp[i], nullptr) << "ibv_create_qp: " << strerror(errno);
	ASSERT_EQ(to_init(qp[i], o), 0) << "INIT: " << strerror(errno);
}

void Pair::connect_pair(ibv_qp_type type, const ConnOpts &a, const ConnOpts &b)
{
	type_ = type;
	ASSERT_NO_FATAL_FAILURE(create_qp(0, type, a));
	ASSERT_NO_FATAL_FAILURE(create_qp(1, type, b));
	ASSERT_EQ(to_rtr(qp[0], qp[1]->qp_num, a), 0) << "RTR: " << strerror(errno);
	ASSERT_EQ(to_rtr(qp[1], qp[0]->qp_num, b), 0) << "RTR: " << strerror(errno);
	ASSERT_EQ(to_rts(qp[0], a), 0) << "RTS: " << strerror(errno);
	ASSERT_EQ(to_rts(qp[1], b), 0) << "RTS: " << strerror(errno);
}

std::optional<ibv_wc> Pair::poll(ibv_cq *c, std::chrono::milliseconds t)
{
	auto end = Clock::now() + t;
	ibv_wc wc{};
	for (;;) {
		int n = ibv_poll_cq(c, 1, &wc);
		if (n < 0) {
			ADD_FAILURE() << "ibv_poll_cq returned " << n;
			return std::nullopt;
		}
		if (n == 1)
			return wc;
		if (Clock::now() > end)
			return std::nullopt;
		std::this_thread::sleep_for(200us);
	}
}

bool Pair::quiet(ibv_cq *c, std::chrono::milliseconds t)
{
	auto wc = poll(c, t);
	if (wc)
		ADD_FAILURE() << "unexpected completion: wr_id " << wc->wr_id << " status "
			      << status_name(wc->status) << " opcode " << wc->opcode;
	return !wc;
}

int Pair::post(int i, ibv_wr_opcode op, uint64_t wr_id, ibv_sge *sge, int nsge,
	       uint64_t raddr, uint32_t rkey, unsigned flags)
{
	ibv_send_wr wr{}, *bad = nullptr;
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.sg_list = sge;
	wr.num_sge = nsge;
	wr.send_flags = flags;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (op == IBV_WR_RDMA_WRITE_WITH_IMM || op == IBV_WR_SEND_WITH_IMM)
		wr.imm_data = htobe32(0x1234abcd);
	return ibv_post_send(qp[i], &wr, &bad);
}

int Pair::post_atomic(int i, ibv_wr_opcode op, uint64_t wr_id, ibv_sge *sge,
		      uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	ibv_send_wr wr{}, *bad = nullptr;
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	return ibv_post_send(qp[i], &wr, &bad);
}

int Pair::post_recv(int i, uint64_t wr_id, ibv_sge *sge, int nsge)
{
	ibv_recv_wr wr{}, *bad = nullptr;
	wr.wr_id = wr_id;
	wr.sg_list = sge;
	wr.num_sge = nsge;
	return ibv_post_recv(qp[i], &wr, &bad);
}

} // namespace tt
