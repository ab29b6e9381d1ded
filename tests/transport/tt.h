// SPDX-License-Identifier: GPL-2.0
// Transport error-path tests: shared fixture and helpers.
//
// One RDMA device (MRXE_DEV, default: the first device), two QPs on it
// connected to each other through the device's own RoCEv2 IPv4 GID
// (loopback).  QP 0 ("A") is the requester, QP 1 ("B") the responder in
// most cases.  Every buffer a peer may touch is a GuardedBuf: a page of
// guard bytes on each side of the target range, the MR covering only the
// target range, and a snapshot of the whole area so that a test can prove
// that nothing outside the expected bytes changed (or nothing at all).
//
// Plain libibverbs only: the same binary runs against stock rdma_rxe,
// which separates test bugs from driver bugs.
#pragma once

#include <infiniband/verbs.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace tt {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Under TCG a loopback round trip takes milliseconds; a normal completion
// gets this long before a test calls it missing.
constexpr auto kCompletionTimeout = 10s;

const char *status_name(int s);
const char *qp_state_name(int s);

// ---------------------------------------------------------- RAII ---------

struct MrDel {
	void operator()(ibv_mr *m) const { if (m) ibv_dereg_mr(m); }
};
using MrPtr = std::unique_ptr<ibv_mr, MrDel>;
struct MwDel {
	void operator()(ibv_mw *m) const { if (m) ibv_dealloc_mw(m); }
};
using MwPtr = std::unique_ptr<ibv_mw, MwDel>;
struct AhDel {
	void operator()(ibv_ah *a) const { if (a) ibv_destroy_ah(a); }
};
using AhPtr = std::unique_ptr<ibv_ah, AhDel>;

// A target buffer with guard pages around it.  Layout (page aligned):
//   [kGuard guard][len target][kGuard guard]
// data() is the start of the target; the MR of a test normally covers
// exactly [data(), data() + len).  The trailing guard starts right after
// the target, inside the same page when len is not a page multiple: an
// off-by-one write past an MR lands in it.
class GuardedBuf {
public:
	static constexpr size_t kGuard = 4096;

	explicit GuardedBuf(size_t len, uint8_t seed = 1);
	~GuardedBuf();
	GuardedBuf(const GuardedBuf &) = delete;
	GuardedBuf &operator=(const GuardedBuf &) = delete;

	uint8_t *data() const { return base_ + kGuard; }
	uint64_t addr() const { return reinterpret_cast<uintptr_t>(data()); }
	size_t len() const { return len_; }

	// Refill target and guards with a seeded pattern and take a snapshot.
	void fill(uint8_t seed);
	// Remember the current contents as the reference.
	void snapshot();
	// Overwrite [off, off+n) of the target with `bytes` in the reference
	// (what a successful operation is expected to have written).
	void expect_write(size_t off, const void *bytes, size_t n);
	// Every byte of guards + target equals the reference.
	::testing::AssertionResult unchanged() const;
	// Every byte equals the reference except [off, off+n) of the target,
	// which may hold anything (undefined contents after an error).
	::testing::AssertionResult unchanged_except(size_t off, size_t n) const;

	MrPtr reg(ibv_pd *pd, int access, size_t off = 0, size_t n = SIZE_MAX);

private:
	uint8_t *base_ = nullptr;
	size_t len_, total_;
	std::vector<uint8_t> ref_;
};

// Deterministic byte pattern (never all equal, differs per seed).
inline uint8_t pat(uint8_t seed, size_t i)
{
	return uint8_t((i * 131 + seed * 29 + (i >> 8) * 7) ^ 0x5c);
}

// ------------------------------------------------------- device -----------

struct Device {
	ibv_context *ctx = nullptr;
	std::string name;
	ibv_device_attr attr{};
	ibv_port_attr port{};
	ibv_gid gid{};
	int gidx = -1;

	// Opens MRXE_DEV (or the first device) and finds its RoCEv2 GID for an
	// IPv4 address.  Returns a message on failure.
	std::string open();
	~Device();
};

// Reads /sys/class/infiniband/<dev>/ports/1/hw_counters/<name>, or
// $MRXE_HW_COUNTERS_DIR/<name> when that is set.
std::optional<uint64_t> hw_counter(const std::string &dev, const std::string &name);

// ------------------------------------------------------- fixture ----------

struct ConnOpts {
	int access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_ATOMIC;
	uint8_t timeout = 14;		// 4.096 us * 2^14 = 67 ms
	uint8_t retry_cnt = 7;
	uint8_t rnr_retry = 7;		// 7 = retry forever (IBA 9.7.5.2.8, ibv_modify_qp(3))
	uint8_t min_rnr_timer = 1;	// 0.01 ms
	ibv_mtu mtu = IBV_MTU_1024;
	// address: the device's IPv4 GID (dev.gid/gidx) unless gidx >= 0
	int gidx = -1;
	ibv_gid gid{};
	uint32_t flow_label = 0;
};

// A RoCEv2 GID of a global IPv6 address on port 1 (not link-local, not
// IPv4-mapped), or nullopt; the selftest adds one (nodad) to the netdev.
std::optional<std::pair<int, ibv_gid>> global_ipv6_gid(ibv_context *ctx);

class Pair : public ::testing::Test {
protected:
	static constexpr int kDepth = 64;

	Device dev;
	ibv_pd *pd[2] = {};	// pd[i] is QP i's PD
	ibv_pd *pd_other = nullptr;	// a third PD, used by no QP
	ibv_cq *cq[2] = {};	// send + recv CQ of QP i
	ibv_qp *qp[2] = {};
	ibv_qp_type type_ = IBV_QPT_RC;
	ibv_srq *srq_[2] = {};	// set before create_qp: QP i receives from it

	void SetUp() override;
	void TearDown() override;

	// Creates QP i (type) and moves it to INIT with opts.access.
	void create_qp(int i, ibv_qp_type type, const ConnOpts &o = {});
	// Creates both QPs and brings them to RTS, connected to each other.
	void connect_pair(ibv_qp_type type, const ConnOpts &a = {}, const ConnOpts &b = {});
	int to_init(ibv_qp *q, const ConnOpts &o);
	int to_rtr(ibv_qp *q, uint32_t dqpn, const ConnOpts &o);
	int to_rts(ibv_qp *q, const ConnOpts &o);
	int to_state(ibv_qp *q, ibv_qp_state s);
	ibv_qp_state qp_state(ibv_qp *q);

	// Polls one completion from cq within `t`; nullopt on timeout.
	std::optional<ibv_wc> poll(ibv_cq *c, std::chrono::milliseconds t =
				   std::chrono::duration_cast<std::chrono::milliseconds>(kCompletionTimeout));
	// True when no completion shows up on c for `t`.
	bool quiet(ibv_cq *c, std::chrono::milliseconds t = 300ms);

	// Posts one send WR on QP i; returns ibv_post_send's value.
	int post(int i, ibv_wr_opcode op, uint64_t wr_id, ibv_sge *sge, int nsge,
		 uint64_t raddr = 0, uint32_t rkey = 0, unsigned flags = IBV_SEND_SIGNALED);
	int post_atomic(int i, ibv_wr_opcode op, uint64_t wr_id, ibv_sge *sge,
			uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap);
	int post_recv(int i, uint64_t wr_id, ibv_sge *sge, int nsge);
};

inline ibv_sge sge_of(const GuardedBuf &b, const ibv_mr *mr, size_t off, size_t len)
{
	return ibv_sge{ .addr = b.addr() + off, .length = uint32_t(len), .lkey = mr->lkey };
}

// An RC pair with a registered requester-side buffer on A (pd[0]): the WRITE
// source / READ sink that the operation and error suites share.
class RcSrcPair : public Pair {
protected:
	static constexpr size_t kSrcLen = 8192;

	GuardedBuf src{kSrcLen, 11};
	MrPtr src_mr;

	void connect(const ConnOpts &a = {}, const ConnOpts &b = {})
	{
		ASSERT_NO_FATAL_FAILURE(connect_pair(IBV_QPT_RC, a, b));
		src_mr = src.reg(pd[0], IBV_ACCESS_LOCAL_WRITE);
		ASSERT_TRUE(src_mr);
	}
	void TearDown() override
	{
		src_mr.reset();
		Pair::TearDown();
	}
	ibv_sge s(size_t off, size_t len) { return sge_of(src, src_mr.get(), off, len); }
};

// gtest helpers: the status/state by name in failure messages.
#define EXPECT_WC(wc, st)                                                    \
	EXPECT_EQ((wc).status, (st)) << "got " << ::tt::status_name((wc).status) \
				     << ", want " << ::tt::status_name(st)
// A responder moves to ERR right after it sends the NAK that completes the
// requester's WR: allow the data path up to 2 s to get there.
#define EXPECT_QPS(q, st)                                                    \
	do {                                                                 \
		ibv_qp_state got_ = qp_state(q);                            \
		for (int n_ = 0; got_ != (st) && n_ < 200; n_++) {          \
			std::this_thread::sleep_for(std::chrono::milliseconds(10)); \
			got_ = qp_state(q);                                  \
		}                                                            \
		EXPECT_EQ(got_, (st)) << "QP state " << ::tt::qp_state_name(got_) \
				      << ", want " << ::tt::qp_state_name(st); \
	} while (0)

} // namespace tt
