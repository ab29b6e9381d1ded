// SPDX-License-Identifier: GPL-2.0
// RC bad input on the wire: foreign rkeys, out-of-bounds addresses,
// forbidden access, misaligned atomics, bad local keys, receive-side
// errors.  Each case states the rule that gives its expected result.
//
// Rules used throughout:
//  [REQ-NAK] IBA 9.9.2 (requester side errors) with 11.6.2 (completion
//    status): a NAK with a non-retryable code (Remote Access Error, Invalid
//    Request, Remote Operational Error) completes the WR with the matching
//    status (IBV_WC_REM_ACCESS_ERR / REM_INV_REQ_ERR / REM_OP_ERR) and moves
//    the requester QP to Error; WRs behind it are flushed (IBA 10.3.1).
//  [RESP-C] IBA 9.9.3 (responder side errors), class C (remote access
//    violation, invalid request) and class A (malformed receive WQE): the
//    responder NAKs and its RC QP enters the Error state.  Stock rdma_rxe
//    implements the same classes (rxe_resp.c, do_class_ac_error).
//  [NO-DATA] a refused request executes nothing: the responder validates
//    R_Key, access rights and the whole VA..VA+DMA length range of the RETH
//    or AtomicETH before placing data (IBA 9.7.4 / 10.6.3.x memory
//    protection); a NAKed RDMA READ returns no payload (IBA 9.7.5.1.x).
#include "tt.h"

namespace tt {
namespace {

constexpr size_t kLen = 8192;
constexpr int kFullRemote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

class RcErr : public RcSrcPair {
protected:
	// One signaled WR on A; returns its completion (fails the test if none).
	ibv_wc run(ibv_wr_opcode op, ibv_sge s, uint64_t raddr, uint32_t rkey, int nsge = 1)
	{
		EXPECT_EQ(post(0, op, 77, &s, nsge, raddr, rkey), 0) << strerror(errno);
		auto wc = poll(cq[0]);
		EXPECT_TRUE(wc) << "no requester completion";
		if (!wc)
			return ibv_wc{ .wr_id = 0, .status = ibv_wc_status(-1) };
		EXPECT_EQ(wc->wr_id, 77u);
		return *wc;
	}

	ibv_wc run_atomic(ibv_wr_opcode op, uint64_t raddr, uint32_t rkey)
	{
		ibv_sge s = sge_of(src, src_mr.get(), 0, 8);
		EXPECT_EQ(post_atomic(0, op, 78, &s, raddr, rkey, 1, 2), 0) << strerror(errno);
		auto wc = poll(cq[0]);
		EXPECT_TRUE(wc) << "no requester completion";
		if (!wc)
			return ibv_wc{ .wr_id = 0, .status = ibv_wc_status(-1) };
		EXPECT_EQ(wc->wr_id, 78u);
		return *wc;
	}

	// [REQ-NAK] + [RESP-C]: both QPs end in Error.
	void both_in_error()
	{
		EXPECT_QPS(qp[0], IBV_QPS_ERR);
		EXPECT_QPS(qp[1], IBV_QPS_ERR);
	}
};

// ---------------------------------------------------- foreign PD ---------

// IBA 10.6.3.x / 9.9.3: an R_Key is valid only on QPs of the MR's PD; a
// request through an R_Key of another PD is a remote access violation.
TEST_F(RcErr, WriteRkeyOfAnotherPd)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2);
	auto mr = tgt.reg(pd_other, kFullRemote);
	ASSERT_TRUE(mr);
	auto wc = run(IBV_WR_RDMA_WRITE, sge_of(src, src_mr.get(), 0, 256), tgt.addr(), mr->rkey);
	EXPECT_WC(wc, IBV_WC_REM_ACCESS_ERR);
	both_in_error();
	EXPECT_TRUE(tgt.unchanged());
}

TEST_F(RcErr, ReadRkeyOfAnotherPd)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2);
	auto mr = tgt.reg(pd_other, kFullRemote);
	ASSERT_TRUE(mr);
	auto wc = run(IBV_WR_RDMA_READ, sge_of(src, src_mr.get(), 0, 256), tgt.addr(), mr->rkey);
	EXPECT_WC(wc, IBV_WC_REM_ACCESS_ERR);
	both_in_error();
	EXPECT_TRUE(tgt.unchanged());
	EXPECT_TRUE(src.unchanged()) << "a NAKed READ returned payload";	// [NO-DATA]
}

TEST_F(RcErr, AtomicRkeyOfAnotherPd)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2);
	auto mr = tgt.reg(pd_other, kFullRemote);
	ASSERT_TRUE(mr);
	auto wc = run_atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, tgt.addr(), mr->rkey);
	EXPECT_WC(wc, IBV_WC_REM_ACCESS_ERR);
	both_in_error();
	EXPECT_TRUE(tgt.unchanged());
	EXPECT_TRUE(src.unchanged());
}

// An R_Key that names no MR at all.
TEST_F(RcErr, WriteUnknownRkey)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2);
	auto mr = tgt.reg(pd[1], kFullRemote);
	ASSERT_TRUE(mr);
	auto wc = run(IBV_WR_RDMA_WRITE, sge_of(src, src_mr.get(), 0, 64), tgt.addr(),
		      mr->rkey ^ 0x00ffff00);
	EXPECT_WC(wc, IBV_WC_REM_ACCESS_ERR);
	both_in_error();
	EXPECT_TRUE(tgt.unchanged());
}

// ------------------------------------------------ out of bounds ----------

// [NO-DATA]: VA..VA+len must lie inside the MR; 8 bytes in, 8 bytes out
// is refused as a whole (nothing of the in-range half is written).
TEST_F(RcErr, WriteStraddlingMrEnd)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2);
	auto mr = tgt.reg(pd[1], kFullRemote);
	ASSERT_TRUE(mr);
	auto wc = run(IBV_WR_RDMA_WRITE, sge_of(src, src_mr.get(), 0, 16), tgt.addr() + kLen - 8,
		      mr->rkey);
	EXPECT_WC(wc, IBV_WC_REM_ACCESS_ERR);
	both_in_error();
	EXPECT_TRUE(tgt.unchanged());
}

// Multi-packet WRITE (4 KiB at MTU 1024) whose last 2 KiB are past the
// MR: the RETH's DMA length is checked on the first packet, so not even
// the first, in-bounds packets may be placed.
TEST_F(RcErr, MultiPacketWriteStraddlingMrEnd)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2);
	auto mr = tgt.reg(pd[1], kFullRemote);
	ASSERT_TRUE(mr);
	auto wc = run(IBV_WR_RDMA_WRITE, sge_of(src, src_mr.get(), 0, 4096),
		      tgt.addr() + kLen - 2048, mr->rkey);
	EXPECT_WC(wc, IBV_WC_REM_ACCESS_ERR);
	both_in_error();
	EXPECT_TRUE(tgt.unchanged());
}

TEST_F(RcErr, WriteBeforeMrStart)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2);
	auto mr = tgt.reg(pd[1], kFullRemote);
	ASSERT_TRUE(mr);
	auto wc = run(IBV_WR_RDMA_WRITE, sge_of(src, src_mr.get(), 0, 64), tgt.addr() - 8,
		      mr->rkey);
	EXPECT_WC(wc, IBV_WC_REM_ACCESS_ERR);
	both_in_error();
	EXPECT_TRUE(tgt.unchanged());
}

// A VA so large that VA + length wraps around 2^64.
TEST_F(RcErr, WriteAddressWraps)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2);
	auto mr = tgt.reg(pd[1], kFullRemote);
	ASSERT_TRUE(mr);
	auto wc = run(IBV_WR_RDMA_WRITE, sge_of(src, src_mr.get(), 0, 64), ~0ull - 15, mr->rkey);
	EXPECT_WC(wc, IBV_WC_REM_ACCESS_ERR);
	both_in_error();
	EXPECT_TRUE(tgt.unchanged());
}

TEST_F(RcErr, ReadStraddlingMrEnd)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2);
	auto mr = tgt.reg(pd[1], kFullRemote);
	ASSERT_TRUE(mr);
	auto wc = run(IBV_WR_RDMA_READ, sge_of(src, src_mr.get(), 0, 3000),
		      tgt.addr() + kLen - 1000, mr->rkey);
	EXPECT_WC(wc, IBV_WC_REM_ACCESS_ERR);
	both_in_error();
	EXPECT_TRUE(tgt.unchanged());
	EXPECT_TRUE(src.unchanged()) << "a NAKed READ returned payload";
}

// The 8 bytes of an atomic must lie inside the MR (first byte past the end).
TEST_F(RcErr, AtomicPastMrEnd)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2);
	auto mr = tgt.reg(pd[1], kFullRemote);
	ASSERT_TRUE(mr);
	auto wc = run_atomic(IBV_WR_ATOMIC_CMP_AND_SWP, tgt.addr() + kLen, mr->rkey);
	EXPECT_WC(wc, IBV_WC_REM_ACCESS_ERR);
	both_in_error();
	EXPECT_TRUE(tgt.unchanged());
	EXPECT_TRUE(src.unchanged());
}

// ------------------------------------------------ MR access flags --------

// IBA 10.6.3.x: the MR's remote access rights must allow the operation;
// otherwise a remote access violation (Remote Access Error NAK).
TEST_F(RcErr, WriteToMrWithoutRemoteWrite)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2);
	auto mr = tgt.reg(pd[1], IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	ASSERT_TRUE(mr);
	auto wc = run(IBV_WR_RDMA_WRITE, sge_of(src, src_mr.get(), 0, 128), tgt.addr(), mr->rkey);
	EXPECT_WC(wc, IBV_WC_REM_ACCESS_ERR);
	both_in_error();
	EXPECT_TRUE(tgt.unchanged());
}

TEST_F(RcErr, ReadFromMrWithoutRemoteRead)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2);
	auto mr = tgt.reg(pd[1], IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ASSERT_TRUE(mr);
	auto wc = run(IBV_WR_RDMA_READ, sge_of(src, src_mr.get(), 0, 128), tgt.addr(), mr->rkey);
	EXPECT_WC(wc, IBV_WC_REM_ACCESS_ERR);
	both_in_error();
	EXPECT_TRUE(tgt.unchanged());
	EXPECT_TRUE(src.unchanged());
}

TEST_F(RcErr, AtomicOnMrWithoutRemoteAtomic)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2);
	auto mr = tgt.reg(pd[1], IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ);
	ASSERT_TRUE(mr);
	auto wc = run_atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, tgt.addr(), mr->rkey);
	EXPECT_WC(wc, IBV_WC_REM_ACCESS_ERR);
	both_in_error();
	EXPECT_TRUE(tgt.unchanged());
	EXPECT_TRUE(src.unchanged());
}

// ------------------------------------------------ QP access flags --------

// The responder QP's qp_access_flags do not enable the operation: the
// request is not supported by that receive queue, NAK Invalid Request
// (IBA 9.7.5.1.x / 9.9.3 class C; verbs: IBV_WC_REM_INV_REQ_ERR "the
// operation is not supported by this receive queue (qp_access_flags)").
// The MR itself allows everything, so this is the QP-level check alone.
TEST_F(RcErr, WriteToQpWithoutRemoteWrite)
{
	ConnOpts b;
	b.access = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	ASSERT_NO_FATAL_FAILURE(connect({}, b));
	GuardedBuf tgt(kLen, 2);
	auto mr = tgt.reg(pd[1], kFullRemote);
	ASSERT_TRUE(mr);
	auto wc = run(IBV_WR_RDMA_WRITE, sge_of(src, src_mr.get(), 0, 128), tgt.addr(), mr->rkey);
	EXPECT_WC(wc, IBV_WC_REM_INV_REQ_ERR);
	both_in_error();
	EXPECT_TRUE(tgt.unchanged());
}

TEST_F(RcErr, ReadFromQpWithoutRemoteRead)
{
	ConnOpts b;
	b.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
	ASSERT_NO_FATAL_FAILURE(connect({}, b));
	GuardedBuf tgt(kLen, 2);
	auto mr = tgt.reg(pd[1], kFullRemote);
	ASSERT_TRUE(mr);
	auto wc = run(IBV_WR_RDMA_READ, sge_of(src, src_mr.get(), 0, 128), tgt.addr(), mr->rkey);
	EXPECT_WC(wc, IBV_WC_REM_INV_REQ_ERR);
	both_in_error();
	EXPECT_TRUE(src.unchanged());
}

TEST_F(RcErr, AtomicOnQpWithoutRemoteAtomic)
{
	ConnOpts b;
	b.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	ASSERT_NO_FATAL_FAILURE(connect({}, b));
	GuardedBuf tgt(kLen, 2);
	auto mr = tgt.reg(pd[1], kFullRemote);
	ASSERT_TRUE(mr);
	auto wc = run_atomic(IBV_WR_ATOMIC_CMP_AND_SWP, tgt.addr(), mr->rkey);
	EXPECT_WC(wc, IBV_WC_REM_INV_REQ_ERR);
	both_in_error();
	EXPECT_TRUE(tgt.unchanged());
	EXPECT_TRUE(src.unchanged());
}

// ------------------------------------------------ misaligned atomics -----

// IBA 9.4.5: the atomic VA must be naturally aligned (8 bytes).  Two
// correct outcomes, both with nothing written:
//  - the provider refuses the WR at post time (ibv_post_send -> EINVAL,
//    IBA 11.4.1.1 immediate error; stock rxe does this), QP stays RTS;
//  - the WR goes on the wire and the responder NAKs it Invalid Request
//    (class C, IBA 9.9.3; rxe's responder: RESPST_ERR_MISALIGNED_ATOMIC):
//    IBV_WC_REM_INV_REQ_ERR, both QPs to Error.
// The second path is the one a foreign peer exercises; which one ran is
// printed.
class RcErrAtomic : public RcErr {
protected:
	void misaligned(ibv_wr_opcode op, size_t off)
	{
		ASSERT_NO_FATAL_FAILURE(connect());
		GuardedBuf tgt(kLen, 2);
		auto mr = tgt.reg(pd[1], kFullRemote);
		ASSERT_TRUE(mr);
		ibv_sge s = sge_of(src, src_mr.get(), 0, 8);
		int ret = post_atomic(0, op, 78, &s, tgt.addr() + off, mr->rkey, 1, 2);
		if (ret) {
			std::cout << "[ NOTE     ] refused at post time (" << strerror(ret) << ")\n";
			EXPECT_EQ(ret, EINVAL);
			EXPECT_TRUE(quiet(cq[0]));
			EXPECT_QPS(qp[0], IBV_QPS_RTS);
			EXPECT_QPS(qp[1], IBV_QPS_RTS);
		} else {
			std::cout << "[ NOTE     ] sent; the responder must NAK it\n";
			auto wc = poll(cq[0]);
			ASSERT_TRUE(wc) << "no requester completion";
			EXPECT_EQ(wc->wr_id, 78u);
			EXPECT_WC(*wc, IBV_WC_REM_INV_REQ_ERR);
			both_in_error();
		}
		EXPECT_TRUE(tgt.unchanged());
		EXPECT_TRUE(src.unchanged());
	}
};

TEST_F(RcErrAtomic, MisalignedCompareSwap)
{
	misaligned(IBV_WR_ATOMIC_CMP_AND_SWP, 4);
}

TEST_F(RcErrAtomic, MisalignedFetchAdd)
{
	misaligned(IBV_WR_ATOMIC_FETCH_AND_ADD, 1);
}

// ------------------------------------------------ responder status -------

// WRITE with immediate through a bad R_Key: the requester gets Remote
// Access Error; the responder's receive WQE, consumed by the immediate,
// completes with IBV_WC_LOC_ACCESS_ERR (IBA 11.6.2 "Local Access Error:
// protection error on a local data buffer during the processing of an
// RDMA Write with Immediate").
TEST_F(RcErr, WriteImmBadRkeyResponderStatus)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2), rb(256, 3);
	auto mr = tgt.reg(pd_other, kFullRemote);
	auto rmr = rb.reg(pd[1], IBV_ACCESS_LOCAL_WRITE);
	ASSERT_TRUE(mr && rmr);
	ibv_sge rs = sge_of(rb, rmr.get(), 0, 256);
	ASSERT_EQ(post_recv(1, 500, &rs, 1), 0);
	auto wc = run(IBV_WR_RDMA_WRITE_WITH_IMM, sge_of(src, src_mr.get(), 0, 128), tgt.addr(),
		      mr->rkey);
	EXPECT_WC(wc, IBV_WC_REM_ACCESS_ERR);
	auto rwc = poll(cq[1]);
	ASSERT_TRUE(rwc) << "no responder completion";
	EXPECT_EQ(rwc->wr_id, 500u);
	EXPECT_WC(*rwc, IBV_WC_LOC_ACCESS_ERR);
	both_in_error();
	EXPECT_TRUE(tgt.unchanged());
	EXPECT_TRUE(rb.unchanged());
}

// ------------------------------------------------ local key errors -------

// IBA 10.6.3.x / 11.6.2: an SGE whose L_Key belongs to another PD is a
// local protection error on the requester: IBV_WC_LOC_PROT_ERR, QP to
// Error (IBA 10.8.3.x: a WR completing in error puts the QP in Error).
// Nothing reaches the responder, which stays RTS.
TEST_F(RcErr, SendLkeyOfAnotherPd)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2), other(kLen, 4);
	auto mr = tgt.reg(pd[1], kFullRemote);
	auto omr = other.reg(pd_other, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_TRUE(mr && omr);
	auto wc = run(IBV_WR_RDMA_WRITE, sge_of(other, omr.get(), 0, 256), tgt.addr(), mr->rkey);
	EXPECT_WC(wc, IBV_WC_LOC_PROT_ERR);
	EXPECT_QPS(qp[0], IBV_QPS_ERR);
	EXPECT_QPS(qp[1], IBV_QPS_RTS);
	EXPECT_TRUE(tgt.unchanged());
}

// An SGE reaching past the end of its (own PD's) MR.
TEST_F(RcErr, SendSgePastLocalMr)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2);
	auto mr = tgt.reg(pd[1], kFullRemote);
	ASSERT_TRUE(mr);
	auto wc = run(IBV_WR_RDMA_WRITE, sge_of(src, src_mr.get(), kLen - 100, 200), tgt.addr(),
		      mr->rkey);
	EXPECT_WC(wc, IBV_WC_LOC_PROT_ERR);
	EXPECT_QPS(qp[0], IBV_QPS_ERR);
	EXPECT_QPS(qp[1], IBV_QPS_RTS);
	EXPECT_TRUE(tgt.unchanged());
}

// A READ whose local sink MR lacks Local Write: the response cannot be
// placed (IBA 10.6.3.x: Local Write is required to write local memory).
// Either a local protection error before sending, or one when the
// response arrives; both are IBV_WC_LOC_PROT_ERR. The sink is untouched.
TEST_F(RcErr, ReadIntoMrWithoutLocalWrite)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2), sink(kLen, 5);
	auto mr = tgt.reg(pd[1], kFullRemote);
	auto smr = sink.reg(pd[0], IBV_ACCESS_REMOTE_READ);	/* no LOCAL_WRITE */
	ASSERT_TRUE(mr && smr);
	auto wc = run(IBV_WR_RDMA_READ, sge_of(sink, smr.get(), 0, 256), tgt.addr(), mr->rkey);
	EXPECT_WC(wc, IBV_WC_LOC_PROT_ERR);
	EXPECT_QPS(qp[0], IBV_QPS_ERR);
	EXPECT_TRUE(sink.unchanged());
	EXPECT_TRUE(tgt.unchanged());
}

// Receive WQE with an L_Key of another PD: the responder cannot place the
// SEND.  Responder: IBV_WC_LOC_PROT_ERR on the receive (IBA 11.6.2);
// requester: NAK Remote Operational Error -> IBV_WC_REM_OP_ERR ("a
// malformed WQE on the receive queue", IBA 9.9.3 class A); both to Error.
TEST_F(RcErr, RecvLkeyOfAnotherPd)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf rb(kLen, 3);
	auto rmr = rb.reg(pd_other, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_TRUE(rmr);
	ibv_sge rs = sge_of(rb, rmr.get(), 0, kLen);
	ASSERT_EQ(post_recv(1, 600, &rs, 1), 0);
	auto wc = run(IBV_WR_SEND, sge_of(src, src_mr.get(), 0, 100), 0, 0);
	EXPECT_WC(wc, IBV_WC_REM_OP_ERR);
	auto rwc = poll(cq[1]);
	ASSERT_TRUE(rwc) << "no responder completion";
	EXPECT_EQ(rwc->wr_id, 600u);
	EXPECT_WC(*rwc, IBV_WC_LOC_PROT_ERR);
	both_in_error();
	EXPECT_TRUE(rb.unchanged());
}

// A SEND longer than the posted receive buffer: responder
// IBV_WC_LOC_LEN_ERR (IBA 11.6.2 Local Length Error), requester NAK
// Invalid Request -> IBV_WC_REM_INV_REQ_ERR (IBA 9.9.3 class C); both to
// Error.  The receive buffer's content is undefined, but nothing past it.
TEST_F(RcErr, SendLongerThanRecvBuffer)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf rb(64, 3);
	auto rmr = rb.reg(pd[1], IBV_ACCESS_LOCAL_WRITE);
	ASSERT_TRUE(rmr);
	ibv_sge rs = sge_of(rb, rmr.get(), 0, 64);
	ASSERT_EQ(post_recv(1, 700, &rs, 1), 0);
	auto wc = run(IBV_WR_SEND, sge_of(src, src_mr.get(), 0, 128), 0, 0);
	EXPECT_WC(wc, IBV_WC_REM_INV_REQ_ERR);
	auto rwc = poll(cq[1]);
	ASSERT_TRUE(rwc) << "no responder completion";
	EXPECT_EQ(rwc->wr_id, 700u);
	EXPECT_WC(*rwc, IBV_WC_LOC_LEN_ERR);
	both_in_error();
	EXPECT_TRUE(rb.unchanged_except(0, 64));
}

// ------------------------------------------------ error then flush -------

// [REQ-NAK]: the WR that got the NAK completes with its error, the WRs
// behind it are flushed in order (IBV_WC_WR_FLUSH_ERR, IBA 10.3.1 /
// 10.8.3.x), and the good WRITE behind the bad one is never executed:
// after a NAK the responder's expected PSN does not advance (IBA
// 9.7.5.1.x), and its QP is in Error anyway.
TEST_F(RcErr, WrsBehindNakAreFlushedInOrder)
{
	ASSERT_NO_FATAL_FAILURE(connect());
	GuardedBuf tgt(kLen, 2);
	auto bad = tgt.reg(pd_other, kFullRemote);
	auto good = tgt.reg(pd[1], kFullRemote);
	ASSERT_TRUE(bad && good);
	ibv_sge s = sge_of(src, src_mr.get(), 0, 512);
	ASSERT_EQ(post(0, IBV_WR_RDMA_WRITE, 1, &s, 1, tgt.addr(), bad->rkey), 0);
	ASSERT_EQ(post(0, IBV_WR_RDMA_WRITE, 2, &s, 1, tgt.addr() + 1024, good->rkey), 0);
	ASSERT_EQ(post(0, IBV_WR_RDMA_WRITE, 3, &s, 1, tgt.addr() + 2048, good->rkey), 0);
	ibv_wc want[] = { { .wr_id = 1, .status = IBV_WC_REM_ACCESS_ERR },
			  { .wr_id = 2, .status = IBV_WC_WR_FLUSH_ERR },
			  { .wr_id = 3, .status = IBV_WC_WR_FLUSH_ERR } };
	for (auto &w : want) {
		auto wc = poll(cq[0]);
		ASSERT_TRUE(wc) << "missing completion for wr_id " << w.wr_id;
		EXPECT_EQ(wc->wr_id, w.wr_id);
		EXPECT_WC(*wc, w.status);
	}
	EXPECT_TRUE(quiet(cq[0]));
	both_in_error();
	EXPECT_TRUE(tgt.unchanged());
}

} // namespace
} // namespace tt
