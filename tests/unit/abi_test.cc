// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// Layout checks for include/uapi/rdma/mrxe-abi.h as seen by a userspace
// compiler (the provider's view).  The kernel asserts the same on its side.
#include <gtest/gtest.h>

#include <cstddef>

extern "C" {
#include <rdma/mrxe-abi.h>
}

namespace {

TEST(Abi, RingHeader)
{
	EXPECT_EQ(sizeof(struct mrxe_ring_hdr), (size_t)MRXE_RING_HDR_SIZE);
	// Each index on its own 64-byte cache line.
	EXPECT_EQ(offsetof(struct mrxe_ring_hdr, producer_index), 64u);
	EXPECT_EQ(offsetof(struct mrxe_ring_hdr, consumer_index), 128u);
}

TEST(Abi, WqeAndCqeSizes)
{
	EXPECT_EQ(sizeof(struct mrxe_send_wqe), (size_t)MRXE_SEND_WQE_HDR_SIZE);
	EXPECT_EQ(sizeof(struct mrxe_recv_wqe), (size_t)MRXE_RECV_WQE_HDR_SIZE);
	EXPECT_EQ(sizeof(struct mrxe_cqe), (size_t)MRXE_CQE_SIZE);
	EXPECT_EQ(sizeof(struct mrxe_sge), 16u);
	EXPECT_EQ(offsetof(struct mrxe_send_wqe, wr), 32u);
	/* FLUSH shares remote_addr/rkey with rdma (the RETH is built from them) */
	EXPECT_EQ(offsetof(struct mrxe_send_wqe, wr.flush.remote_addr),
		  offsetof(struct mrxe_send_wqe, wr.rdma.remote_addr));
	EXPECT_EQ(offsetof(struct mrxe_send_wqe, wr.flush.rkey),
		  offsetof(struct mrxe_send_wqe, wr.rdma.rkey));
	EXPECT_EQ(offsetof(struct mrxe_send_wqe, wr.flush.length), 48u);
	EXPECT_EQ(alignof(struct mrxe_send_wqe), 8u);
}

TEST(Abi, ResponsesAre8ByteMultiples)
{
	// uverbs copies responses by length; keep them padded to u64.
	EXPECT_EQ(sizeof(struct mrxe_mmap_info) % 8, 0u);
	EXPECT_EQ(sizeof(struct mrxe_alloc_context_resp) % 8, 0u);
	EXPECT_EQ(sizeof(struct mrxe_create_cq_resp) % 8, 0u);
	EXPECT_EQ(sizeof(struct mrxe_resize_cq_resp) % 8, 0u);
	EXPECT_EQ(sizeof(struct mrxe_create_qp_cmd) % 8, 0u);
	EXPECT_EQ(sizeof(struct mrxe_create_qp_resp) % 8, 0u);
	EXPECT_EQ(sizeof(struct mrxe_create_srq_resp) % 8, 0u);
	EXPECT_EQ(sizeof(struct mrxe_modify_srq_cmd), 8u);
	EXPECT_EQ(sizeof(struct mrxe_resize_srq_resp) % 8, 0u);
	EXPECT_EQ(sizeof(struct mrxe_create_ah_resp) % 8, 0u);
}

} // namespace
