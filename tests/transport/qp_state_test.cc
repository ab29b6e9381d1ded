// SPDX-License-Identifier: GPL-2.0
// Posting to a QP in the wrong state, and the Error state's flush.
#include "tt.h"

namespace tt {
namespace {

constexpr size_t kLen = 4096;
constexpr int kFullRemote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

class QpState : public Pair {};

// IBA 11.4.1.1 (Post Send Request): a send WR posted to a QP in Reset,
// Init or RTR is an immediate error (EINVAL from ibv_post_send), and the
// WR is not queued: after the QP reaches RTS nothing is sent or completed.
TEST_F(QpState, PostSendBeforeRtsIsRefused)
{
	ASSERT_NO_FATAL_FAILURE(create_qp(0, IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(create_qp(1, IBV_QPT_RC));
	GuardedBuf src(kLen, 1), tgt(kLen, 2);
	auto smr = src.reg(pd[0], IBV_ACCESS_LOCAL_WRITE);
	auto tmr = tgt.reg(pd[1], kFullRemote);
	ASSERT_TRUE(smr && tmr);
	ibv_sge s = sge_of(src, smr.get(), 0, 256);
	ConnOpts o;

	ASSERT_EQ(to_state(qp[0], IBV_QPS_RESET), 0);
	EXPECT_QPS(qp[0], IBV_QPS_RESET);
	EXPECT_EQ(post(0, IBV_WR_RDMA_WRITE, 1, &s, 1, tgt.addr(), tmr->rkey), EINVAL) << "RESET";

	ASSERT_EQ(to_init(qp[0], o), 0);
	EXPECT_EQ(post(0, IBV_WR_RDMA_WRITE, 2, &s, 1, tgt.addr(), tmr->rkey), EINVAL) << "INIT";

	ASSERT_EQ(to_rtr(qp[0], qp[1]->qp_num, o), 0);
	ASSERT_EQ(to_rtr(qp[1], qp[0]->qp_num, o), 0);
	EXPECT_EQ(post(0, IBV_WR_RDMA_WRITE, 3, &s, 1, tgt.addr(), tmr->rkey), EINVAL) << "RTR";

	ASSERT_EQ(to_rts(qp[0], o), 0);
	ASSERT_EQ(to_rts(qp[1], o), 0);
	EXPECT_TRUE(quiet(cq[0], 500ms)) << "a refused WR was queued after all";
	EXPECT_TRUE(tgt.unchanged());

	// The QP works normally afterwards: one WRITE lands exactly.
	ASSERT_EQ(post(0, IBV_WR_RDMA_WRITE, 4, &s, 1, tgt.addr() + 8, tmr->rkey), 0);
	auto wc = poll(cq[0]);
	ASSERT_TRUE(wc);
	EXPECT_EQ(wc->wr_id, 4u) << "a WR refused before RTS was executed later";
	EXPECT_WC(*wc, IBV_WC_SUCCESS);
	EXPECT_TRUE(quiet(cq[0]));
	tgt.expect_write(8, src.data(), 256);
	EXPECT_TRUE(tgt.unchanged());
}

// IBA 11.4.1.2 (Post Receive Request): Reset refuses receive WRs
// (C10-97.2.1, quoted by rdma-core's rxe provider), Init accepts them, and
// a receive posted in Init is consumed by the first SEND after RTS.
TEST_F(QpState, PostRecvInResetRefusedInInitAccepted)
{
	ASSERT_NO_FATAL_FAILURE(create_qp(0, IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(create_qp(1, IBV_QPT_RC));
	GuardedBuf src(kLen, 1), rb(kLen, 2);
	auto smr = src.reg(pd[0], IBV_ACCESS_LOCAL_WRITE);
	auto rmr = rb.reg(pd[1], IBV_ACCESS_LOCAL_WRITE);
	ASSERT_TRUE(smr && rmr);
	ibv_sge rs = sge_of(rb, rmr.get(), 0, kLen);
	ConnOpts o;

	ASSERT_EQ(to_state(qp[1], IBV_QPS_RESET), 0);
	EXPECT_EQ(post_recv(1, 10, &rs, 1), EINVAL) << "post_recv in RESET";
	ASSERT_EQ(to_init(qp[1], o), 0);
	EXPECT_EQ(post_recv(1, 11, &rs, 1), 0) << "post_recv in INIT: " << strerror(errno);

	ASSERT_EQ(to_rtr(qp[0], qp[1]->qp_num, o), 0);
	ASSERT_EQ(to_rtr(qp[1], qp[0]->qp_num, o), 0);
	ASSERT_EQ(to_rts(qp[0], o), 0);
	ASSERT_EQ(to_rts(qp[1], o), 0);
	ibv_sge s = sge_of(src, smr.get(), 0, 300);
	ASSERT_EQ(post(0, IBV_WR_SEND, 1, &s, 1), 0);
	auto wc = poll(cq[0]);
	ASSERT_TRUE(wc);
	EXPECT_WC(*wc, IBV_WC_SUCCESS);
	auto rwc = poll(cq[1]);
	ASSERT_TRUE(rwc);
	EXPECT_EQ(rwc->wr_id, 11u) << "the RESET receive must not have been queued";
	EXPECT_WC(*rwc, IBV_WC_SUCCESS);
	EXPECT_EQ(rwc->byte_len, 300u);
	rb.expect_write(0, src.data(), 300);
	EXPECT_TRUE(rb.unchanged());
}

// IBA 10.3.1 / 11.4.1.1: in the Error state, posting is allowed and every
// WR completes with IBV_WC_WR_FLUSH_ERR, in posting order, without being
// executed.
TEST_F(QpState, PostSendInErrorIsFlushed)
{
	ASSERT_NO_FATAL_FAILURE(connect_pair(IBV_QPT_RC));
	GuardedBuf src(kLen, 1), tgt(kLen, 2);
	auto smr = src.reg(pd[0], IBV_ACCESS_LOCAL_WRITE);
	auto tmr = tgt.reg(pd[1], kFullRemote);
	ASSERT_TRUE(smr && tmr);
	ASSERT_EQ(to_state(qp[0], IBV_QPS_ERR), 0);
	EXPECT_QPS(qp[0], IBV_QPS_ERR);
	ibv_sge s = sge_of(src, smr.get(), 0, 128);
	for (uint64_t id = 1; id <= 4; id++)
		ASSERT_EQ(post(0, id == 3 ? IBV_WR_SEND : IBV_WR_RDMA_WRITE, id, &s, 1,
			       tgt.addr(), tmr->rkey), 0) << "post in ERR, wr " << id;
	for (uint64_t id = 1; id <= 4; id++) {
		auto wc = poll(cq[0]);
		ASSERT_TRUE(wc) << "no flush completion for wr " << id;
		EXPECT_EQ(wc->wr_id, id);
		EXPECT_WC(*wc, IBV_WC_WR_FLUSH_ERR);
	}
	EXPECT_TRUE(quiet(cq[0]));
	EXPECT_TRUE(quiet(cq[1]));
	EXPECT_TRUE(tgt.unchanged());
	EXPECT_QPS(qp[1], IBV_QPS_RTS);
}

// IBA 10.3.1: moving a QP to Error flushes its posted receive WRs with
// IBV_WC_WR_FLUSH_ERR, in order; none of the buffers is written.
TEST_F(QpState, ModifyToErrorFlushesReceivesInOrder)
{
	ASSERT_NO_FATAL_FAILURE(connect_pair(IBV_QPT_RC));
	GuardedBuf rb(kLen, 2);
	auto rmr = rb.reg(pd[1], IBV_ACCESS_LOCAL_WRITE);
	ASSERT_TRUE(rmr);
	for (uint64_t id = 10; id < 15; id++) {
		ibv_sge rs = sge_of(rb, rmr.get(), (id - 10) * 512, 512);
		ASSERT_EQ(post_recv(1, id, &rs, 1), 0);
	}
	EXPECT_TRUE(quiet(cq[1], 100ms));
	ASSERT_EQ(to_state(qp[1], IBV_QPS_ERR), 0);
	for (uint64_t id = 10; id < 15; id++) {
		auto wc = poll(cq[1]);
		ASSERT_TRUE(wc) << "no flush completion for recv " << id;
		EXPECT_EQ(wc->wr_id, id);
		EXPECT_WC(*wc, IBV_WC_WR_FLUSH_ERR);
	}
	EXPECT_TRUE(quiet(cq[1]));
	EXPECT_TRUE(rb.unchanged());
}

// Outstanding send WRs: SENDs stuck behind RNR NAKs (no receive posted,
// rnr_retry 7 = retry forever) are flushed in order when the requester QP
// is moved to Error (IBA 10.3.1), and the responder never places data.
TEST_F(QpState, ModifyToErrorFlushesOutstandingSendsInOrder)
{
	ConnOpts a;
	a.rnr_retry = 7;
	ASSERT_NO_FATAL_FAILURE(connect_pair(IBV_QPT_RC, a));
	GuardedBuf src(kLen, 1);
	auto smr = src.reg(pd[0], IBV_ACCESS_LOCAL_WRITE);
	ASSERT_TRUE(smr);
	ibv_sge s = sge_of(src, smr.get(), 0, 64);
	for (uint64_t id = 1; id <= 3; id++)
		ASSERT_EQ(post(0, IBV_WR_SEND, id, &s, 1), 0);
	EXPECT_TRUE(quiet(cq[0], 300ms)) << "a SEND completed without a receive";
	ASSERT_EQ(to_state(qp[0], IBV_QPS_ERR), 0);
	for (uint64_t id = 1; id <= 3; id++) {
		auto wc = poll(cq[0]);
		ASSERT_TRUE(wc) << "no flush completion for send " << id;
		EXPECT_EQ(wc->wr_id, id);
		EXPECT_WC(*wc, IBV_WC_WR_FLUSH_ERR);
	}
	EXPECT_TRUE(quiet(cq[0]));
	EXPECT_TRUE(quiet(cq[1]));
}

} // namespace
} // namespace tt
