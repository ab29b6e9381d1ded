// SPDX-License-Identifier: GPL-2.0
// Zero-length operations, RNR and transport retries, invalidation and
// memory windows over an RC loopback pair.
#include "tt.h"

namespace tt {
namespace {

constexpr size_t kLen = 8192;
constexpr int kFullRemote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
constexpr uint32_t kBogusRkey = 0xdeadbeef;

class Ops : public RcSrcPair {
protected:
	// Posts on QP i, waits for its completion and checks id and status.
	void expect_done(int i, uint64_t id, ibv_wc_status st, ibv_wc *out = nullptr)
	{
		auto wc = poll(cq[i]);
		ASSERT_TRUE(wc) << "no completion for wr " << id << " on QP " << i;
		EXPECT_EQ(wc->wr_id, id);
		EXPECT_WC(*wc, st);
		if (out)
			*out = *wc;
	}
};

// ------------------------------------------------ zero-length ------------

// A zero-length SEND consumes a receive WQE and completes it with
// byte_len 0 (IBA 9.7.4.1.x: a message may have zero payload).
TEST_F(Ops, ZeroLengthSend)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf rb(256, 3);
	auto rmr = rb.reg(pd[1], IBV_ACCESS_LOCAL_WRITE);
	ASSERT_TRUE(rmr);
	ibv_sge rs = sge_of(rb, rmr.get(), 0, 256);
	ASSERT_EQ(post_recv(1, 20, &rs, 1), 0);
	ASSERT_EQ(post(0, IBV_WR_SEND, 1, nullptr, 0), 0);
	ASSERT_NO_FATAL_FAILURE(expect_done(0, 1, IBV_WC_SUCCESS));
	ibv_wc rwc;
	ASSERT_NO_FATAL_FAILURE(expect_done(1, 20, IBV_WC_SUCCESS, &rwc));
	EXPECT_EQ(rwc.opcode, IBV_WC_RECV);
	EXPECT_EQ(rwc.byte_len, 0u);
	EXPECT_TRUE(rb.unchanged());
}

// C9-88: a zero-length RDMA WRITE/READ need not carry a valid R_Key or VA
// and the responder does not check them.  Both complete successfully,
// nothing is written, and the QPs stay RTS.
TEST_F(Ops, ZeroLengthWriteAndReadIgnoreRkey)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2);
	auto tmr = tgt.reg(pd[1], kFullRemote);
	ASSERT_TRUE(tmr);
	ASSERT_EQ(post(0, IBV_WR_RDMA_WRITE, 1, nullptr, 0, 0x1, kBogusRkey), 0);
	ASSERT_NO_FATAL_FAILURE(expect_done(0, 1, IBV_WC_SUCCESS));
	ASSERT_EQ(post(0, IBV_WR_RDMA_READ, 2, nullptr, 0, 0x1, kBogusRkey), 0);
	ASSERT_NO_FATAL_FAILURE(expect_done(0, 2, IBV_WC_SUCCESS));
	// zero-length through a valid key as well
	ASSERT_EQ(post(0, IBV_WR_RDMA_WRITE, 3, nullptr, 0, tgt.addr(), tmr->rkey), 0);
	ASSERT_NO_FATAL_FAILURE(expect_done(0, 3, IBV_WC_SUCCESS));
	EXPECT_QPS(qp[0], IBV_QPS_RTS);
	EXPECT_QPS(qp[1], IBV_QPS_RTS);
	EXPECT_TRUE(src.unchanged());
	EXPECT_TRUE(tgt.unchanged());
	// still working: a real WRITE lands exactly
	ibv_sge w = s(0, 100);
	ASSERT_EQ(post(0, IBV_WR_RDMA_WRITE, 4, &w, 1, tgt.addr() + 1, tmr->rkey), 0);
	ASSERT_NO_FATAL_FAILURE(expect_done(0, 4, IBV_WC_SUCCESS));
	tgt.expect_write(1, src.data(), 100);
	EXPECT_TRUE(tgt.unchanged());
}

// Zero-length WRITE with immediate: consumes a receive, which completes
// with IBV_WC_RECV_RDMA_WITH_IMM, byte_len 0 and the immediate.
TEST_F(Ops, ZeroLengthWriteWithImm)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf rb(256, 3);
	auto rmr = rb.reg(pd[1], IBV_ACCESS_LOCAL_WRITE);
	ASSERT_TRUE(rmr);
	ibv_sge rs = sge_of(rb, rmr.get(), 0, 256);
	ASSERT_EQ(post_recv(1, 21, &rs, 1), 0);
	ASSERT_EQ(post(0, IBV_WR_RDMA_WRITE_WITH_IMM, 1, nullptr, 0, 0, kBogusRkey), 0);
	ASSERT_NO_FATAL_FAILURE(expect_done(0, 1, IBV_WC_SUCCESS));
	ibv_wc rwc;
	ASSERT_NO_FATAL_FAILURE(expect_done(1, 21, IBV_WC_SUCCESS, &rwc));
	EXPECT_EQ(rwc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(rwc.byte_len, 0u);
	EXPECT_TRUE(rwc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(be32toh(rwc.imm_data), 0x1234abcdu);
	EXPECT_TRUE(rb.unchanged());
}

// ------------------------------------------------ RNR --------------------

// No receive posted: the responder answers RNR NAK (class B: its state
// does not change).  With rnr_retry 0 the requester gives up at the first
// RNR NAK: IBV_WC_RNR_RETRY_EXC_ERR, QP to Error (IBA 9.7.5.2.8, 11.6.2).
TEST_F(Ops, RnrRetryZeroFails)
{
	ConnOpts a;
	a.rnr_retry = 0;
	ASSERT_NO_FATAL_FAILURE(connect(a));
	ibv_sge w = s(0, 64);
	ASSERT_EQ(post(0, IBV_WR_SEND, 1, &w, 1), 0);
	ASSERT_NO_FATAL_FAILURE(expect_done(0, 1, IBV_WC_RNR_RETRY_EXC_ERR));
	EXPECT_QPS(qp[0], IBV_QPS_ERR);
	EXPECT_QPS(qp[1], IBV_QPS_RTS);
	EXPECT_TRUE(quiet(cq[1]));
}

// rnr_retry 7 retries forever: the SEND waits while no receive is posted
// and completes, with the right bytes, once one is.
TEST_F(Ops, RnrRetryInfiniteCompletesAfterRecv)
{
	ConnOpts a, b;
	a.rnr_retry = 7;
	b.min_rnr_timer = 1;	/* 0.01 ms: retry quickly */
	ASSERT_NO_FATAL_FAILURE(connect(a, b));
	GuardedBuf rb(kLen, 3);
	auto rmr = rb.reg(pd[1], IBV_ACCESS_LOCAL_WRITE);
	ASSERT_TRUE(rmr);
	ibv_sge w = s(5, 2000);
	ASSERT_EQ(post(0, IBV_WR_SEND, 1, &w, 1), 0);
	EXPECT_TRUE(quiet(cq[0], 500ms)) << "SEND completed with no receive posted";
	EXPECT_QPS(qp[0], IBV_QPS_RTS);
	ibv_sge rs = sge_of(rb, rmr.get(), 0, kLen);
	ASSERT_EQ(post_recv(1, 30, &rs, 1), 0);
	ASSERT_NO_FATAL_FAILURE(expect_done(0, 1, IBV_WC_SUCCESS));
	ibv_wc rwc;
	ASSERT_NO_FATAL_FAILURE(expect_done(1, 30, IBV_WC_SUCCESS, &rwc));
	EXPECT_EQ(rwc.byte_len, 2000u);
	rb.expect_write(0, src.data() + 5, 2000);
	EXPECT_TRUE(rb.unchanged());
}

// ------------------------------------------------ transport retry --------

// The responder QP is destroyed: packets to its QPN are silently dropped,
// no ACK ever comes, and after retry_cnt retransmissions (each after the
// local ACK timeout) the requester completes with IBV_WC_RETRY_EXC_ERR and
// moves to Error (IBA 9.7.6.1.x, 11.6.2 Transport Retry Counter Exceeded).
TEST_F(Ops, RetryExceededWhenPeerIsGone)
{
	ConnOpts a;
	a.timeout = 12;		/* 4.096 us * 2^12 = 16.8 ms */
	a.retry_cnt = 2;
	ASSERT_NO_FATAL_FAILURE(connect(a));
	GuardedBuf tgt(kLen, 2);
	auto tmr = tgt.reg(pd[1], kFullRemote);
	ASSERT_TRUE(tmr);
	ASSERT_EQ(ibv_destroy_qp(qp[1]), 0);
	qp[1] = nullptr;
	ibv_sge w = s(0, 256);
	ASSERT_EQ(post(0, IBV_WR_RDMA_WRITE, 1, &w, 1, tgt.addr(), tmr->rkey), 0);
	auto t0 = Clock::now();
	auto wc = poll(cq[0], 30s);
	ASSERT_TRUE(wc) << "no completion within 30 s";
	auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
	EXPECT_EQ(wc->wr_id, 1u);
	EXPECT_WC(*wc, IBV_WC_RETRY_EXC_ERR);
	// 3 transmissions, each followed by a >= 16.8 ms timeout.
	EXPECT_GE(ms, 40) << "gave up before retry_cnt timeouts had passed";
	EXPECT_QPS(qp[0], IBV_QPS_ERR);
	EXPECT_TRUE(tgt.unchanged());
}

// ------------------------------------------------ invalidation & MWs -----

class Mw : public Ops {
protected:
	GuardedBuf tgt{kLen, 2};
	MrPtr tmr;
	static constexpr size_t kWinOff = 1024, kWinLen = 2048;

	void SetUp() override
	{
		Ops::SetUp();
		if (HasFatalFailure() || IsSkipped())
			return;
		if (!(dev.attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW) ||
		    !dev.attr.max_mw)
			GTEST_SKIP() << dev.name << " reports no memory windows";
		ASSERT_NO_FATAL_FAILURE(connect());
		tmr = tgt.reg(pd[1], kFullRemote | IBV_ACCESS_MW_BIND);
		ASSERT_TRUE(tmr) << "reg_mr with MW_BIND: " << strerror(errno);
	}
	void TearDown() override
	{
		tmr.reset();
		Ops::TearDown();
	}

	// Binds a type 2 MW on QP 1 (the responder, IBA 10.6.7.2: a type 2
	// window is bound by a WR on a QP of its PD and used through that
	// QP).  Returns the new R_Key or 0.
	uint32_t bind2(ibv_mw *mw, size_t off, size_t len, int access)
	{
		ibv_send_wr wr{}, *bad;
		wr.wr_id = 900;
		wr.opcode = IBV_WR_BIND_MW;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
		wr.bind_mw.bind_info.mr = tmr.get();
		wr.bind_mw.bind_info.addr = tgt.addr() + off;
		wr.bind_mw.bind_info.length = len;
		wr.bind_mw.bind_info.mw_access_flags = access;
		EXPECT_EQ(ibv_post_send(qp[1], &wr, &bad), 0) << strerror(errno);
		ibv_wc wc{};
		expect_done(1, 900, IBV_WC_SUCCESS, &wc);
		if (wc.status != IBV_WC_SUCCESS)
			return 0;
		EXPECT_EQ(wc.opcode, IBV_WC_BIND_MW);
		return wr.bind_mw.rkey;
	}

	// A WRITE of `len` at window offset `off` through `rkey` must succeed
	// and land exactly.
	void write_ok(uint32_t rkey, size_t off, size_t len, uint64_t id)
	{
		ibv_sge w = s(off, len);
		ASSERT_EQ(post(0, IBV_WR_RDMA_WRITE, id, &w, 1, tgt.addr() + off, rkey), 0);
		ASSERT_NO_FATAL_FAILURE(expect_done(0, id, IBV_WC_SUCCESS));
		tgt.expect_write(off, src.data() + off, len);
		EXPECT_TRUE(tgt.unchanged());
	}

	// A WRITE through `rkey` must be refused as a remote access
	// violation: requester REM_ACCESS_ERR, both QPs to Error, nothing
	// written.
	void write_refused(uint32_t rkey, size_t off, size_t len, uint64_t id)
	{
		tgt.snapshot();
		ibv_sge w = s(0, len);
		ASSERT_EQ(post(0, IBV_WR_RDMA_WRITE, id, &w, 1, tgt.addr() + off, rkey), 0);
		ASSERT_NO_FATAL_FAILURE(expect_done(0, id, IBV_WC_REM_ACCESS_ERR));
		EXPECT_QPS(qp[0], IBV_QPS_ERR);
		EXPECT_QPS(qp[1], IBV_QPS_ERR);
		EXPECT_TRUE(tgt.unchanged());
	}
};

// SEND with Invalidate (IBA 9.4.1.x, 10.6.7.2.x): the responder invalidates
// the named R_Key (a bound type 2 MW) before completing the receive, which
// reports IBV_WC_WITH_INV and the invalidated R_Key; afterwards remote
// access through that R_Key is a remote access violation.
TEST_F(Mw, SendWithInvalidateKillsRkey)
{
	MwPtr mw(ibv_alloc_mw(pd[1], IBV_MW_TYPE_2));
	ASSERT_TRUE(mw) << "alloc_mw type 2: " << strerror(errno);
	uint32_t rkey = bind2(mw.get(), kWinOff, kWinLen,
			      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(rkey, 0u);
	ASSERT_NO_FATAL_FAILURE(write_ok(rkey, kWinOff, 512, 1));

	GuardedBuf rb(256, 3);
	auto rmr = rb.reg(pd[1], IBV_ACCESS_LOCAL_WRITE);
	ASSERT_TRUE(rmr);
	ibv_sge rs = sge_of(rb, rmr.get(), 0, 256);
	ASSERT_EQ(post_recv(1, 40, &rs, 1), 0);
	ibv_sge w = s(0, 32);
	ibv_send_wr wr{}, *bad;
	wr.wr_id = 2;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.sg_list = &w;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	ASSERT_EQ(ibv_post_send(qp[0], &wr, &bad), 0);
	ASSERT_NO_FATAL_FAILURE(expect_done(0, 2, IBV_WC_SUCCESS));
	ibv_wc rwc;
	ASSERT_NO_FATAL_FAILURE(expect_done(1, 40, IBV_WC_SUCCESS, &rwc));
	EXPECT_EQ(rwc.byte_len, 32u);
	EXPECT_TRUE(rwc.wc_flags & IBV_WC_WITH_INV) << "wc_flags " << rwc.wc_flags;
	EXPECT_EQ(rwc.invalidated_rkey, rkey);
	rb.expect_write(0, src.data(), 32);
	EXPECT_TRUE(rb.unchanged());

	ASSERT_NO_FATAL_FAILURE(write_refused(rkey, kWinOff, 64, 3));
}

// Local Invalidate (IBA 10.6.7.2.x): the owner invalidates the MW through
// its own send queue (IBV_WC_LOCAL_INV); remote access then fails.
TEST_F(Mw, LocalInvalidateKillsRkey)
{
	MwPtr mw(ibv_alloc_mw(pd[1], IBV_MW_TYPE_2));
	ASSERT_TRUE(mw) << "alloc_mw type 2: " << strerror(errno);
	uint32_t rkey = bind2(mw.get(), kWinOff, kWinLen, IBV_ACCESS_REMOTE_WRITE);
	ASSERT_NE(rkey, 0u);
	ASSERT_NO_FATAL_FAILURE(write_ok(rkey, kWinOff + 100, 300, 1));

	ibv_send_wr wr{}, *bad;
	wr.wr_id = 901;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	ASSERT_EQ(ibv_post_send(qp[1], &wr, &bad), 0);
	ibv_wc wc;
	ASSERT_NO_FATAL_FAILURE(expect_done(1, 901, IBV_WC_SUCCESS, &wc));
	EXPECT_EQ(wc.opcode, IBV_WC_LOCAL_INV);

	ASSERT_NO_FATAL_FAILURE(write_refused(rkey, kWinOff, 64, 2));
}

// Type 1 MW (IBA 10.6.7.1): bound with ibv_bind_mw on a QP of its PD;
// access inside the window works (WRITE and READ, exact bytes), access
// inside the MR but outside the window is a remote access violation.
TEST_F(Mw, Type1BindAccessAndOutOfWindow)
{
	MwPtr mw(ibv_alloc_mw(pd[1], IBV_MW_TYPE_1));
	ASSERT_TRUE(mw) << "alloc_mw type 1: " << strerror(errno);
	ibv_mw_bind b{};
	b.wr_id = 902;
	b.send_flags = IBV_SEND_SIGNALED;
	b.bind_info.mr = tmr.get();
	b.bind_info.addr = tgt.addr() + kWinOff;
	b.bind_info.length = kWinLen;
	b.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	ASSERT_EQ(ibv_bind_mw(qp[1], mw.get(), &b), 0) << strerror(errno);
	ibv_wc wc;
	ASSERT_NO_FATAL_FAILURE(expect_done(1, 902, IBV_WC_SUCCESS, &wc));
	EXPECT_EQ(wc.opcode, IBV_WC_BIND_MW);
	uint32_t rkey = mw->rkey;

	ASSERT_NO_FATAL_FAILURE(write_ok(rkey, kWinOff, kWinLen, 1));

	// READ the last 100 bytes of the window back into src[6000..]
	src.snapshot();
	ibv_sge r = s(6000, 100);
	ASSERT_EQ(post(0, IBV_WR_RDMA_READ, 2, &r, 1, tgt.addr() + kWinOff + kWinLen - 100, rkey), 0);
	ASSERT_NO_FATAL_FAILURE(expect_done(0, 2, IBV_WC_SUCCESS));
	src.expect_write(6000, tgt.data() + kWinOff + kWinLen - 100, 100);
	EXPECT_TRUE(src.unchanged());

	// 8 bytes inside the window, 8 bytes past its end (still inside the MR)
	ASSERT_NO_FATAL_FAILURE(write_refused(rkey, kWinOff + kWinLen - 8, 16, 3));
}

// Type 2 MW: a READ starting before the window (inside the MR) fails.
TEST_F(Mw, Type2OutOfWindowRead)
{
	MwPtr mw(ibv_alloc_mw(pd[1], IBV_MW_TYPE_2));
	ASSERT_TRUE(mw) << "alloc_mw type 2: " << strerror(errno);
	uint32_t rkey = bind2(mw.get(), kWinOff, kWinLen, IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(rkey, 0u);
	src.snapshot();
	tgt.snapshot();
	ibv_sge r = s(0, 64);
	ASSERT_EQ(post(0, IBV_WR_RDMA_READ, 1, &r, 1, tgt.addr() + kWinOff - 32, rkey), 0);
	ASSERT_NO_FATAL_FAILURE(expect_done(0, 1, IBV_WC_REM_ACCESS_ERR));
	EXPECT_QPS(qp[0], IBV_QPS_ERR);
	EXPECT_QPS(qp[1], IBV_QPS_ERR);
	EXPECT_TRUE(src.unchanged()) << "a NAKed READ returned payload";
	EXPECT_TRUE(tgt.unchanged());
}

// The window's own access rights apply (IBA 10.6.7): a window bound
// read-only refuses a WRITE although the underlying MR allows it.
TEST_F(Mw, Type1ReadOnlyWindowRefusesWrite)
{
	MwPtr mw(ibv_alloc_mw(pd[1], IBV_MW_TYPE_1));
	ASSERT_TRUE(mw) << "alloc_mw type 1: " << strerror(errno);
	ibv_mw_bind b{};
	b.wr_id = 903;
	b.send_flags = IBV_SEND_SIGNALED;
	b.bind_info.mr = tmr.get();
	b.bind_info.addr = tgt.addr() + kWinOff;
	b.bind_info.length = kWinLen;
	b.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	ASSERT_EQ(ibv_bind_mw(qp[1], mw.get(), &b), 0) << strerror(errno);
	ASSERT_NO_FATAL_FAILURE(expect_done(1, 903, IBV_WC_SUCCESS));
	ASSERT_NO_FATAL_FAILURE(write_refused(mw->rkey, kWinOff, 64, 1));
}

} // namespace
} // namespace tt
