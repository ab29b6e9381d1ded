// SPDX-License-Identifier: GPL-2.0
// Unreliable transports: silently dropped bad input.
#include "tt.h"

#include <cstdlib>

namespace tt {
namespace {

constexpr size_t kLen = 4096;
constexpr size_t kGrh = 40;
constexpr uint32_t kQkey = 0x11111111;	/* what Pair::to_init sets on UD QPs */

class Ud : public Pair {
protected:
	AhPtr ah;

	void SetUp() override
	{
		Pair::SetUp();
		if (HasFatalFailure())
			return;
		ConnOpts o;
		ASSERT_NO_FATAL_FAILURE(create_qp(0, IBV_QPT_UD, o));
		ASSERT_NO_FATAL_FAILURE(create_qp(1, IBV_QPT_UD, o));
		for (auto *q : qp) {
			ASSERT_EQ(to_rtr(q, 0, o), 0) << strerror(errno);
			ASSERT_EQ(to_rts(q, o), 0) << strerror(errno);
		}
		ah = make_ah(pd[0]);
		ASSERT_TRUE(ah) << "create_ah: " << strerror(errno);
	}
	// An AH on `p` to the device's own IPv4 GID (loopback).
	AhPtr make_ah(ibv_pd *p)
	{
		ibv_ah_attr a{};
		a.is_global = 1;
		a.port_num = 1;
		a.grh.dgid = dev.gid;
		a.grh.sgid_index = uint8_t(dev.gidx);
		a.grh.hop_limit = 64;
		return AhPtr(ibv_create_ah(p, &a));
	}
	void TearDown() override
	{
		ah.reset();
		Pair::TearDown();
	}
	int ud_send(uint64_t id, ibv_sge *sg, uint32_t qkey)
	{
		ibv_send_wr wr{}, *bad;
		wr.wr_id = id;
		wr.opcode = IBV_WR_SEND;
		wr.sg_list = sg;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.ud.ah = ah.get();
		wr.wr.ud.remote_qpn = qp[1]->qp_num;
		wr.wr.ud.remote_qkey = qkey;
		return ibv_post_send(qp[0], &wr, &bad);
	}
};

// IBA 9.6 (transport header validation, C9-?: Q_Key check for UD) and
// 10.2.4 (Q_Keys): a datagram whose Q_Key differs from the destination
// QP's is silently dropped -- no receive WQE is consumed, no completion --
// and the port's Q_Key violation counter counts it.  The sender sees a
// normal successful completion (UD has no acknowledgement).
// The counter is hw_counters/$MRXE_QKEY_COUNTER (default qkey_violations);
// MRXE_QKEY_COUNTER="" skips that check (stock rxe has no such counter).
TEST_F(Ud, WrongQkeyIsDroppedAndCounted)
{
	GuardedBuf src(kLen, 1), rb(kGrh + kLen, 2);
	auto smr = src.reg(pd[0], IBV_ACCESS_LOCAL_WRITE);
	auto rmr = rb.reg(pd[1], IBV_ACCESS_LOCAL_WRITE);
	ASSERT_TRUE(smr && rmr);
	ibv_sge rs = sge_of(rb, rmr.get(), 0, kGrh + kLen);
	ASSERT_EQ(post_recv(1, 50, &rs, 1), 0);

	const char *cn = getenv("MRXE_QKEY_COUNTER");
	std::string counter = cn ? cn : "qkey_violations";
	std::optional<uint64_t> before;
	ibv_port_attr pa0{};
	if (!counter.empty()) {
		before = hw_counter(dev.name, counter);
		EXPECT_TRUE(before) << "no hw_counters/" << counter << " on " << dev.name;
		ASSERT_EQ(ibv_query_port(dev.ctx, 1, &pa0), 0);
	}

	ibv_sge s = sge_of(src, smr.get(), 0, 200);
	ASSERT_EQ(ud_send(1, &s, kQkey ^ 0x00ff0000), 0);
	auto wc = poll(cq[0]);
	ASSERT_TRUE(wc) << "no send completion";
	EXPECT_EQ(wc->wr_id, 1u);
	EXPECT_WC(*wc, IBV_WC_SUCCESS);
	EXPECT_TRUE(quiet(cq[1], 1000ms)) << "datagram with a wrong Q_Key was delivered";
	EXPECT_TRUE(rb.unchanged());
	if (before) {
		auto after = hw_counter(dev.name, counter);
		ASSERT_TRUE(after);
		EXPECT_GE(*after, *before + 1) << counter << " did not count the drop";
		// the same count as the port's Q_Key violation counter
		// (ibv_port_attr.qkey_viol_cntr: PortInfo Q_KeyViolations, IBA ch. 14)
		ibv_port_attr pa1{};
		ASSERT_EQ(ibv_query_port(dev.ctx, 1, &pa1), 0);
		EXPECT_GE(pa1.qkey_viol_cntr, pa0.qkey_viol_cntr + 1)
			<< "ibv_port_attr.qkey_viol_cntr did not count the drop";
	} else if (counter.empty()) {
		std::cout << "[ NOTE     ] Q_Key violation counter not checked (MRXE_QKEY_COUNTER=\"\")\n";
	}

	// The QP still receives, and the dropped datagram did not use up the
	// receive WQE: the right Q_Key lands in receive 50.
	s = sge_of(src, smr.get(), 300, 250);
	ASSERT_EQ(ud_send(2, &s, kQkey), 0);
	wc = poll(cq[0]);
	ASSERT_TRUE(wc);
	EXPECT_WC(*wc, IBV_WC_SUCCESS);
	auto rwc = poll(cq[1]);
	ASSERT_TRUE(rwc) << "datagram with the right Q_Key not delivered";
	EXPECT_EQ(rwc->wr_id, 50u);
	EXPECT_WC(*rwc, IBV_WC_SUCCESS);
	EXPECT_EQ(rwc->byte_len, kGrh + 250);
	EXPECT_EQ(rwc->src_qp, qp[0]->qp_num);
	EXPECT_TRUE(rwc->wc_flags & IBV_WC_GRH);
	rb.expect_write(kGrh, src.data() + 300, 250);
	EXPECT_TRUE(rb.unchanged_except(0, kGrh)) << "payload after the GRH";
	EXPECT_QPS(qp[1], IBV_QPS_RTS);
}

// IBA 10.2.1.2 / 11.4.1.1: an address handle belongs to a protection
// domain, and a UD work request may only use an AH of its QP's PD.  Here
// QP A (pd[0]) sends through an AH of pd[1]: the post is refused or the
// WR completes in error (stock rxe: IBV_WC_LOC_QP_OP_ERR); either way
// nothing reaches the receiver.
TEST_F(Ud, AhOfAnotherPdFails)
{
	GuardedBuf src(kLen, 1), rb(kGrh + kLen, 2);
	auto smr = src.reg(pd[0], IBV_ACCESS_LOCAL_WRITE);
	auto rmr = rb.reg(pd[1], IBV_ACCESS_LOCAL_WRITE);
	ASSERT_TRUE(smr && rmr);
	ibv_sge rs = sge_of(rb, rmr.get(), 0, kGrh + kLen);
	ASSERT_EQ(post_recv(1, 60, &rs, 1), 0);

	AhPtr foreign = make_ah(pd[1]);
	ASSERT_TRUE(foreign) << "create_ah: " << strerror(errno);
	ASSERT_NE(pd[0], pd[1]);

	ibv_sge s = sge_of(src, smr.get(), 0, 100);
	ibv_send_wr wr{}, *bad;
	wr.wr_id = 7;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = foreign.get();
	wr.wr.ud.remote_qpn = qp[1]->qp_num;
	wr.wr.ud.remote_qkey = kQkey;
	int ret = ibv_post_send(qp[0], &wr, &bad);
	if (ret == 0) {
		auto wc = poll(cq[0]);
		ASSERT_TRUE(wc) << "no send completion";
		EXPECT_EQ(wc->wr_id, 7u);
		EXPECT_WC(*wc, IBV_WC_LOC_QP_OP_ERR);
	} else {
		EXPECT_EQ(ret, EINVAL);
	}
	EXPECT_TRUE(quiet(cq[1], 1000ms)) << "sent through another PD's AH";
	EXPECT_TRUE(rb.unchanged());
}

class Uc : public Pair {};

// UC has no acknowledgements and no NAKs: a WRITE through a bad R_Key is
// silently dropped by the responder (IBA 9.9.3 for UC: the request is
// discarded, the QP state is unchanged), the requester completes it
// successfully when sent, both QPs stay RTS, and a following good WRITE
// still lands.
TEST_F(Uc, WriteBadRkeyIsDropped)
{
	ConnOpts o;
	o.access = IBV_ACCESS_REMOTE_WRITE;
	ASSERT_NO_FATAL_FAILURE(connect_pair(IBV_QPT_UC, o, o));
	GuardedBuf src(kLen, 1), tgt(kLen, 2);
	auto smr = src.reg(pd[0], IBV_ACCESS_LOCAL_WRITE);
	auto good = tgt.reg(pd[1], IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	auto bad = tgt.reg(pd_other, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ASSERT_TRUE(smr && good && bad);

	ibv_sge s = sge_of(src, smr.get(), 0, 2500);	/* 3 packets at MTU 1024 */
	ASSERT_EQ(post(0, IBV_WR_RDMA_WRITE, 1, &s, 1, tgt.addr(), bad->rkey), 0);
	auto wc = poll(cq[0]);
	ASSERT_TRUE(wc);
	EXPECT_EQ(wc->wr_id, 1u);
	EXPECT_WC(*wc, IBV_WC_SUCCESS);
	s = sge_of(src, smr.get(), 0, 64);
	ASSERT_EQ(post(0, IBV_WR_RDMA_WRITE, 2, &s, 1, tgt.addr() + kLen - 32, good->rkey), 0);
	wc = poll(cq[0]);
	ASSERT_TRUE(wc);
	EXPECT_WC(*wc, IBV_WC_SUCCESS);	/* out of bounds: dropped as well */
	std::this_thread::sleep_for(500ms);
	EXPECT_TRUE(tgt.unchanged());
	EXPECT_TRUE(quiet(cq[1], 100ms));
	EXPECT_QPS(qp[0], IBV_QPS_RTS);
	EXPECT_QPS(qp[1], IBV_QPS_RTS);

	s = sge_of(src, smr.get(), 100, 1500);
	ASSERT_EQ(post(0, IBV_WR_RDMA_WRITE, 3, &s, 1, tgt.addr() + 7, good->rkey), 0);
	wc = poll(cq[0]);
	ASSERT_TRUE(wc);
	EXPECT_WC(*wc, IBV_WC_SUCCESS);
	tgt.expect_write(7, src.data() + 100, 1500);
	auto end = Clock::now() + kCompletionTimeout;
	while (!tgt.unchanged() && Clock::now() < end)
		std::this_thread::sleep_for(10ms);
	EXPECT_TRUE(tgt.unchanged()) << "the good UC WRITE after the dropped ones did not land exactly";
}

} // namespace
} // namespace tt
