// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// Unit tests for the MetaRoCE additions to drivers/proto/mrxe_wire.{h,c}:
// MRH, the MetaRoCE header stack, SACKETH, the `auto` capability bit and
// packet validation (Documentation/wire-format.rst, "MetaRoCE mode").
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

extern "C" {
#include "mrxe_wire.h"
}

namespace {

constexpr u8 RC(u8 op)
{
	return MRXE_OPC(MRXE_TR_RC, op);
}

TEST(WireMeta, MrhRoundTripAndLayout)
{
	struct mrxe_mrh h = {};
	u8 p[MRXE_MRH_LEN];

	h.cls = MRXE_MRH_WRITE;
	h.flags = MRXE_MRH_F_ECE | MRXE_MRH_F_TSECR;
	h.path = 13;
	h.path_gen = 2;
	h.rsn = 0x5a;
	h.msn = 0xabcdef;
	h.offset = 0x12345678;
	h.tsval = 0xdeadbeef;
	h.tsecr = 0x01020304;
	mrxe_mrh_build(p, &h);
	const u8 want[] = { 0x02, 0x90, 13, 2, 0x5a, 0xab, 0xcd, 0xef,
			    0x12, 0x34, 0x56, 0x78, 0xde, 0xad, 0xbe, 0xef,
			    1, 2, 3, 4 };
	EXPECT_EQ(std::vector<u8>(p, p + MRXE_MRH_LEN),
		  std::vector<u8>(want, want + sizeof(want)));
	struct mrxe_mrh g;
	ASSERT_EQ(mrxe_mrh_parse(p, &g), 0);
	EXPECT_EQ(g.cls, h.cls);
	EXPECT_EQ(g.flags, h.flags);
	EXPECT_EQ(g.path, 13);
	EXPECT_EQ(g.path_gen, 2);
	EXPECT_EQ(g.rsn, 0x5a);
	EXPECT_EQ(g.msn, 0xabcdefu);
	EXPECT_EQ(g.offset, 0x12345678u);
	EXPECT_EQ(g.tsval, 0xdeadbeefu);
	EXPECT_EQ(g.tsecr, 0x01020304u);
}

TEST(WireMeta, MrhRejectsUnknownVersionClassAndReservedBits)
{
	struct mrxe_mrh h = {}, g;
	u8 p[MRXE_MRH_LEN];

	h.cls = MRXE_MRH_SEND;
	mrxe_mrh_build(p, &h);
	ASSERT_EQ(mrxe_mrh_parse(p, &g), 0);
	p[0] = 0x11;	// version 1
	EXPECT_EQ(mrxe_mrh_parse(p, &g), MRXE_PARSE_MRH);
	p[0] = 0x07;	// class 7
	EXPECT_EQ(mrxe_mrh_parse(p, &g), MRXE_PARSE_MRH);
	p[0] = 0x00;	// class 0
	EXPECT_EQ(mrxe_mrh_parse(p, &g), MRXE_PARSE_MRH);
	p[0] = 0x01;
	p[1] = 0x01;	// reserved flag bit
	EXPECT_EQ(mrxe_mrh_parse(p, &g), MRXE_PARSE_MRH);
	p[1] = 0;
	p[4] = 1;	// RSN of a SEND
	ASSERT_EQ(mrxe_mrh_parse(p, &g), 0);
	EXPECT_EQ(g.rsn, 1);
	p[0] = MRXE_MRH_READ_REQ;	// byte 4 is reserved on other classes
	EXPECT_EQ(mrxe_mrh_parse(p, &g), MRXE_PARSE_MRH);
	p[4] = 0;
	EXPECT_EQ(mrxe_mrh_parse(p, &g), 0);
	h.cls = MRXE_MRH_ACK;	// ... and built as 0 there
	h.rsn = 7;
	mrxe_mrh_build(p, &h);
	EXPECT_EQ(p[4], 0);
}

TEST(WireMeta, ClassAndHeaderStack)
{
	EXPECT_EQ(mrxe_mrh_class_of(RC(MRXE_OP_SEND_MIDDLE)), MRXE_MRH_SEND);
	EXPECT_EQ(mrxe_mrh_class_of(MRXE_OPC(MRXE_TR_UC, MRXE_OP_WRITE_LAST)),
		  MRXE_MRH_WRITE);
	EXPECT_EQ(mrxe_mrh_class_of(RC(MRXE_OP_READ_REQ)), MRXE_MRH_READ_REQ);
	EXPECT_EQ(mrxe_mrh_class_of(RC(MRXE_OP_READ_RESP_MIDDLE)), MRXE_MRH_READ_RESP);
	EXPECT_EQ(mrxe_mrh_class_of(RC(MRXE_OP_FETCH_ADD)), MRXE_MRH_ATOMIC);
	EXPECT_EQ(mrxe_mrh_class_of(RC(MRXE_OP_ACK)), MRXE_MRH_ACK);
	EXPECT_EQ(mrxe_mrh_class_of(RC(MRXE_OP_ATOMIC_ACK)), MRXE_MRH_ACK);
	EXPECT_EQ(mrxe_mrh_class_of(MRXE_OPC(MRXE_TR_UD, MRXE_OP_SEND_ONLY)), 0);
	EXPECT_EQ(mrxe_mrh_class_of(MRXE_OPC_CNP), 0);
	EXPECT_EQ(mrxe_mrh_class_of(0x15), 0);

	// SEND: BTH + MRH; every WRITE packet carries RETH.
	EXPECT_EQ(mrxe_meta_hdr_len(RC(MRXE_OP_SEND_MIDDLE)), 32u);
	EXPECT_EQ(mrxe_meta_hdr_len(RC(MRXE_OP_WRITE_FIRST)), 48u);
	EXPECT_EQ(mrxe_meta_hdr_len(RC(MRXE_OP_WRITE_MIDDLE)), 48u);
	EXPECT_EQ(mrxe_meta_hdr_len(RC(MRXE_OP_WRITE_LAST_IMM)), 52u);
	EXPECT_EQ(mrxe_meta_hdr_off(RC(MRXE_OP_WRITE_MIDDLE), MRXE_HDR_RETH), 32u);
	EXPECT_EQ(mrxe_meta_hdr_off(RC(MRXE_OP_WRITE_LAST_IMM), MRXE_HDR_RETH), 32u);
	EXPECT_EQ(mrxe_meta_hdr_off(RC(MRXE_OP_WRITE_LAST_IMM), MRXE_HDR_IMMDT), 48u);
	EXPECT_EQ(mrxe_meta_hdr_off(RC(MRXE_OP_WRITE_ONLY_IMM), MRXE_HDR_IMMDT), 48u);
	EXPECT_EQ(mrxe_meta_hdr_off(RC(MRXE_OP_SEND_LAST_INV), MRXE_HDR_IETH), 32u);
	EXPECT_EQ(mrxe_meta_hdr_off(RC(MRXE_OP_SEND_MIDDLE), MRXE_HDR_RETH), 0u);
	EXPECT_EQ(mrxe_meta_hdr_len(RC(MRXE_OP_ACK)), 36u);	// + SACKETH
	EXPECT_EQ(mrxe_meta_hdr_off(RC(MRXE_OP_ACK), MRXE_HDR_AETH), 32u);
	EXPECT_EQ(mrxe_meta_hdr_len(MRXE_OPC(MRXE_TR_UD, MRXE_OP_SEND_ONLY)), 0u);
}

TEST(WireMeta, SackethRoundTripAcrossWrap)
{
	struct mrxe_sack_info s = {}, g;
	u8 p[MRXE_SACKETH_HDR_LEN + MRXE_SACK_MAX_BLOCKS * MRXE_SACKETH_BLK_LEN];

	s.epsn = 0xfffff0;
	s.trigger_psn = 0x000005;
	s.trigger_dup = true;
	s.nblocks = 2;
	s.blk[0].base = 0xfffff1;
	s.blk[0].bitmap = 0x8000000000000001ull;
	s.blk[1].base = 0x000031;
	s.blk[1].bitmap = 0x00ff;
	mrxe_sacketh_build(p, &s);
	EXPECT_EQ(p[0], 0x82);
	EXPECT_EQ(mrxe_sacketh_len(2), 28u);
	EXPECT_EQ(p[4 + 4], 0x80);	// bitmap big-endian: bit 63 first
	EXPECT_EQ(p[4 + 11], 0x01);
	ASSERT_EQ(mrxe_sacketh_parse(p, sizeof(p), 0xfffff0, &g), 28);
	EXPECT_EQ(g.epsn, 0xfffff0u);
	EXPECT_EQ(g.trigger_psn, 5u);
	EXPECT_TRUE(g.trigger_dup);
	ASSERT_EQ(g.nblocks, 2);
	EXPECT_EQ(g.blk[0].base, 0xfffff1u);
	EXPECT_EQ(g.blk[0].bitmap, s.blk[0].bitmap);
	EXPECT_EQ(g.blk[1].base, 0x31u);
	EXPECT_EQ(g.blk[1].bitmap, 0xffull);
	// Empty SACKETH: just the cumulative ACK.
	s.nblocks = 0;
	mrxe_sacketh_build(p, &s);
	EXPECT_EQ(mrxe_sacketh_parse(p, 4, 0xfffff0, &g), 4);
	EXPECT_EQ(g.nblocks, 0);
}

TEST(WireMeta, SackethRejectsBadInput)
{
	struct mrxe_sack_info s = {}, g;
	u8 p[64] = {};

	s.epsn = 100;
	s.nblocks = 1;
	s.blk[0].base = 101;
	s.blk[0].bitmap = 1;
	mrxe_sacketh_build(p, &s);
	EXPECT_EQ(mrxe_sacketh_parse(p, 3, 100, &g), MRXE_PARSE_SHORT);
	EXPECT_EQ(mrxe_sacketh_parse(p, 15, 100, &g), MRXE_PARSE_SHORT);
	EXPECT_EQ(mrxe_sacketh_parse(p, 16, 100, &g), 16);
	// block at or below ePSN, or beyond the window
	EXPECT_EQ(mrxe_sacketh_parse(p, 16, 101, &g), MRXE_PARSE_MRH);
	EXPECT_EQ(mrxe_sacketh_parse(p, 16, 101 - MRXE_SACK_WINDOW, &g),
		  MRXE_PARSE_MRH);
	p[0] = 5;	// five blocks
	EXPECT_EQ(mrxe_sacketh_parse(p, 64, 100, &g), MRXE_PARSE_MRH);
	p[0] = 0x41;	// bits 6..3: CE count 8, one block
	EXPECT_EQ(mrxe_sacketh_parse(p, 64, 100, &g), 16);
	EXPECT_EQ(g.ce, 8);
}

// ECN echo: the CE count travels in SACKETH byte 0 bits 6..3, saturating.
TEST(WireMeta, SackethCeCount)
{
	u8 p[64] = {};
	struct mrxe_sack_info s = {}, g = {};

	s.trigger_psn = 7;
	s.trigger_dup = true;
	for (u8 ce : { 0, 1, 9, 15, 16, 200 }) {
		s.ce = ce;
		mrxe_sacketh_build(p, &s);
		ASSERT_EQ(mrxe_sacketh_parse(p, sizeof(p), 100, &g), 4);
		EXPECT_EQ(g.ce, ce > 15 ? 15 : ce);
		EXPECT_TRUE(g.trigger_dup);
		EXPECT_EQ(g.nblocks, 0);
	}
}

// Build a MetaRoCE packet: BTH(TVer 1) + MRH + ext + payload + ICRC space.
std::vector<u8> meta_pkt(u8 opcode, u32 psn, u32 paylen, u8 cls)
{
	std::vector<u8> v(mrxe_meta_hdr_len(opcode) + paylen + MRXE_ICRC_LEN);
	struct mrxe_bth b = {};
	struct mrxe_mrh m = {};

	b.opcode = opcode;
	b.tver = MRXE_META_TVER;
	b.pkey = 0xffff;
	b.dqpn = 0x11;
	b.psn = psn;
	mrxe_bth_build(v.data(), &b);
	m.cls = cls;
	m.msn = 7;
	m.offset = 4096;
	mrxe_mrh_build(v.data() + MRXE_BTH_LEN, &m);
	return v;
}

TEST(WireMeta, PacketParse)
{
	struct mrxe_pkt_info info;
	struct mrxe_mrh m;

	auto w = meta_pkt(RC(MRXE_OP_WRITE_MIDDLE), 0x123, 256, MRXE_MRH_WRITE);
	ASSERT_EQ(mrxe_meta_pkt_parse(w.data(), w.size(), &info, &m), MRXE_PARSE_OK);
	EXPECT_EQ(info.hdr_len, 48);
	EXPECT_EQ(info.paylen, 256u);
	EXPECT_EQ(info.psn, 0x123u);
	EXPECT_EQ(m.offset, 4096u);
	EXPECT_EQ(m.msn, 7u);
	// A standard receiver rejects it (TVer), so does a MetaRoCE one for
	// a standard packet: the mode_mismatch path.
	EXPECT_EQ(mrxe_pkt_parse(w.data(), w.size(), &info), MRXE_PARSE_TVER);
	auto bad = w;
	bad[1] &= 0xf0;
	EXPECT_EQ(mrxe_meta_pkt_parse(bad.data(), bad.size(), &info, &m), MRXE_PARSE_TVER);
	// MRH class must match the opcode.
	auto wc = meta_pkt(RC(MRXE_OP_WRITE_MIDDLE), 1, 256, MRXE_MRH_SEND);
	EXPECT_EQ(mrxe_meta_pkt_parse(wc.data(), wc.size(), &info, &m), MRXE_PARSE_MRH);
	// Too short for the RETH every MetaRoCE WRITE carries.
	EXPECT_EQ(mrxe_meta_pkt_parse(w.data(), 40, &info, &m), MRXE_PARSE_SHORT);
	auto ud = meta_pkt(RC(MRXE_OP_SEND_ONLY), 1, 0, MRXE_MRH_SEND);
	ud[0] = MRXE_OPC(MRXE_TR_UD, MRXE_OP_SEND_ONLY);
	EXPECT_EQ(mrxe_meta_pkt_parse(ud.data(), ud.size(), &info, &m), MRXE_PARSE_OPCODE);
}

TEST(WireMeta, AckWithSackethParse)
{
	struct mrxe_sack_info s = {};
	struct mrxe_pkt_info info;
	struct mrxe_mrh m;

	s.epsn = 0x1000;
	s.trigger_psn = 0x1005;
	s.nblocks = 1;
	s.blk[0].base = 0x1001;
	s.blk[0].bitmap = 0x10;
	auto a = meta_pkt(RC(MRXE_OP_ACK), 0x0fff, 0, MRXE_MRH_ACK);
	size_t off = a.size() - MRXE_ICRC_LEN;
	a.insert(a.begin() + off, mrxe_sacketh_len(1), 0);
	mrxe_sacketh_build(a.data() + off, &s);
	ASSERT_EQ(mrxe_meta_pkt_parse(a.data(), a.size(), &info, &m), MRXE_PARSE_OK);
	EXPECT_EQ(info.hdr_len, 36 + 16);
	EXPECT_EQ(info.paylen, 0u);
	struct mrxe_sack_info g;
	EXPECT_EQ(mrxe_sacketh_parse(a.data() + 36, 16, info.psn + 1, &g), 16);
	EXPECT_EQ(g.blk[0].bitmap, 0x10u);
	// Truncated SACKETH
	EXPECT_EQ(mrxe_meta_pkt_parse(a.data(), a.size() - 4, &info, &m), MRXE_PARSE_SHORT);
}

// The `auto` capability: BTH byte 8 bit 6.  Standard parsing ignores it
// (as stock rxe does), and the ICRC covers it (byte 8 is not masked).
TEST(WireMeta, AutoCapabilityBit)
{
	struct mrxe_bth b = {};
	struct mrxe_pkt_info info;
	std::vector<u8> p(MRXE_BTH_LEN + MRXE_ICRC_LEN + 8, 0);
	std::vector<u8> ip(20, 0), udp(8, 0);

	b.opcode = RC(MRXE_OP_SEND_ONLY);
	b.ackreq = true;
	b.psn = 0xabcdef;
	mrxe_bth_build(p.data(), &b);
	u32 icrc0 = mrxe_icrc(ip.data(), false, udp.data(), p.data(), p.size() - 4);
	EXPECT_FALSE(mrxe_bth_meta_cap(p.data()));
	mrxe_bth_set_meta_cap(p.data(), true);
	EXPECT_TRUE(mrxe_bth_meta_cap(p.data()));
	EXPECT_EQ(p[8], 0xc0);
	EXPECT_TRUE(mrxe_bth_ackreq(p.data()));
	EXPECT_EQ(mrxe_bth_psn(p.data()), 0xabcdefu);
	ASSERT_EQ(mrxe_pkt_parse(p.data(), p.size(), &info), MRXE_PARSE_OK);
	EXPECT_EQ(info.psn, 0xabcdefu);
	EXPECT_NE(mrxe_icrc(ip.data(), false, udp.data(), p.data(), p.size() - 4), icrc0);
	mrxe_bth_set_meta_cap(p.data(), false);
	EXPECT_EQ(p[8], 0x80);
	EXPECT_EQ(mrxe_icrc(ip.data(), false, udp.data(), p.data(), p.size() - 4), icrc0);
}

} // namespace

namespace {

TEST(WireMeta, TimestampTicksAndEcho)
{
	const u64 now = 5000000123ull;	// 5 s
	u32 ts = mrxe_mrh_ts(now - 20000);	// sent 20 us ago

	EXPECT_EQ(mrxe_mrh_ts(1023), 0u);
	EXPECT_EQ(mrxe_mrh_ts(1024), 1u);
	u64 back = mrxe_mrh_ts_ns(ts, now);
	EXPECT_LE(back, now - 20000);
	EXPECT_GT(back + 1024, now - 20000);
	// Across the 32-bit tick wrap.
	const u64 big = (1ull << (32 + MRXE_MRH_TS_SHIFT)) + 5000;
	u32 t2 = mrxe_mrh_ts(big - 10000);
	EXPECT_GT(t2, 0xfffffff0u);
	EXPECT_EQ(mrxe_mrh_ts_ns(t2, big), ((big - 10000) >> 10) << 10);
	// Older than the clock itself: 0 (no echo).
	EXPECT_EQ(mrxe_mrh_ts_ns(100, 50 * 1024), 0u);
}

} // namespace
