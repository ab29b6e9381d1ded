// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// Unit tests for drivers/proto/mrxe_wire.{h,c}: header round-trips, the
// opcode table, PSN serial arithmetic, packet validation and the ICRC.
#include <gtest/gtest.h>
#include <vector>
#include <cstdint>

extern "C" {
#include "mrxe_wire.h"
}

namespace {

std::vector<uint8_t> hex(const char *s)
{
	std::vector<uint8_t> v;
	for (; s[0] && s[1]; s += 2)
		v.push_back(static_cast<uint8_t>(std::stoi(std::string(s, 2), nullptr, 16)));
	return v;
}

TEST(Wire, Crc32MatchesZlib)
{
	const char *s = "123456789";
	// zlib/IEEE check value 0xCBF43926 == ~crc32_le(~0, s)
	EXPECT_EQ(~mrxe_crc32_le(~0u, s, 9), 0xcbf43926u);
	uint8_t ff[8];
	memset(ff, 0xff, sizeof(ff));
	EXPECT_EQ(mrxe_crc32_le(~0u, ff, 8), (uint32_t)MRXE_ICRC_SEED);
}

// Vector derived independently with Python zlib.crc32 over
// 8*0xff + masked IPv4/UDP/BTH + payload (IBA A17.3.3).
TEST(Wire, IcrcKnownVectorIpv4)
{
	auto ip = hex("45020034123440004011beef0a0000010a000002");
	auto udp = hex("c01112b700205555");
	auto roce = hex("0430ffff000000118012345668656c6c6f000000");
	EXPECT_EQ(mrxe_icrc(ip.data(), false, udp.data(), roce.data(), roce.size()),
		  0xa9003b37u);
	// Masked fields do not matter: TTL, TOS, checksums, BTH byte 4.
	ip[1] = 0x00; ip[8] = 1; ip[10] = 0; udp[6] = 0; roce[4] = 0x80;
	EXPECT_EQ(mrxe_icrc(ip.data(), false, udp.data(), roce.data(), roce.size()),
		  0xa9003b37u);
	// Any other byte does.
	roce[13] ^= 1;
	EXPECT_NE(mrxe_icrc(ip.data(), false, udp.data(), roce.data(), roce.size()),
		  0xa9003b37u);
	uint8_t b[4];
	mrxe_icrc_put(b, 0xa9003b37u);
	EXPECT_EQ(b[0], 0x37);
	EXPECT_EQ(mrxe_icrc_get(b), 0xa9003b37u);
}

TEST(Wire, Ipv6MaskCoversTrafficClassAndFlowLabel)
{
	std::vector<uint8_t> ip6(40, 0), udp(8, 0), bth(12, 0);
	ip6[0] = 0x60;
	bth[0] = 0x11;
	uint32_t a = mrxe_icrc(ip6.data(), true, udp.data(), bth.data(), 12);
	ip6[0] = 0x6a; ip6[1] = 0x12; ip6[3] = 0x77; ip6[7] = 3;
	EXPECT_EQ(a, mrxe_icrc(ip6.data(), true, udp.data(), bth.data(), 12));
	ip6[8] = 1;	// source address
	EXPECT_NE(a, mrxe_icrc(ip6.data(), true, udp.data(), bth.data(), 12));
}

TEST(Wire, BthRoundTrip)
{
	struct mrxe_bth b = {};
	b.opcode = 0x0a; b.se = true; b.pad = 3; b.pkey = 0xffff;
	b.dqpn = 0xabcdef; b.ackreq = true; b.psn = 0xfffffe;
	uint8_t p[12];
	mrxe_bth_build(p, &b);
	EXPECT_EQ(p[0], 0x0a);
	EXPECT_EQ(p[1], 0xb0);
	EXPECT_EQ(p[5], 0xab);
	EXPECT_EQ(p[8], 0x80);
	EXPECT_EQ(p[11], 0xfe);
	struct mrxe_bth c;
	mrxe_bth_parse(p, &c);
	EXPECT_EQ(c.opcode, b.opcode); EXPECT_TRUE(c.se); EXPECT_FALSE(c.mig);
	EXPECT_EQ(c.pad, 3); EXPECT_EQ(c.pkey, 0xffff); EXPECT_EQ(c.dqpn, 0xabcdefu);
	EXPECT_TRUE(c.ackreq); EXPECT_EQ(c.psn, 0xfffffeu);
	EXPECT_EQ(mrxe_bth_psn(p), 0xfffffeu);
	EXPECT_EQ(mrxe_bth_qpn(p), 0xabcdefu);
}

TEST(Wire, ExtHeadersRoundTrip)
{
	uint8_t p[32];
	struct mrxe_reth r = { 0x0102030405060708ull, 0x11223344, 0x55667788 }, r2;
	mrxe_reth_build(p, &r);
	EXPECT_EQ(p[0], 0x01); EXPECT_EQ(p[8], 0x11); EXPECT_EQ(p[15], 0x88);
	mrxe_reth_parse(p, &r2);
	EXPECT_EQ(r2.va, r.va); EXPECT_EQ(r2.rkey, r.rkey); EXPECT_EQ(r2.len, r.len);

	struct mrxe_atmeth a = { 0x1000, 7, 0xaaaabbbbccccddddull, 0x1111222233334444ull }, a2;
	mrxe_atmeth_build(p, &a);
	EXPECT_EQ(p[12], 0xaa); EXPECT_EQ(p[20], 0x11);
	mrxe_atmeth_parse(p, &a2);
	EXPECT_EQ(a2.va, a.va); EXPECT_EQ(a2.rkey, a.rkey);
	EXPECT_EQ(a2.swap_add, a.swap_add); EXPECT_EQ(a2.compare, a.compare);

	struct mrxe_aeth e = { MRXE_AETH_NAK | MRXE_NAK_REM_ACCESS, 0x123456 }, e2;
	mrxe_aeth_build(p, &e);
	EXPECT_EQ(p[0], 0x62);
	mrxe_aeth_parse(p, &e2);
	EXPECT_EQ(e2.syndrome, e.syndrome); EXPECT_EQ(e2.msn, e.msn);

	struct mrxe_deth d = { 0x80010000, 0x000001 }, d2;
	mrxe_deth_build(p, &d);
	EXPECT_EQ(p[0], 0x80); EXPECT_EQ(p[4], 0); EXPECT_EQ(p[7], 1);
	mrxe_deth_parse(p, &d2);
	EXPECT_EQ(d2.qkey, d.qkey); EXPECT_EQ(d2.sqpn, d.sqpn);
}

TEST(Wire, OpcodeTable)
{
	EXPECT_EQ(mrxe_op_hdr_len(0x04), 12u);		// RC SEND_ONLY
	EXPECT_EQ(mrxe_op_hdr_len(0x0b), 32u);		// WRITE_ONLY_IMM: RETH+ImmDt
	EXPECT_EQ(mrxe_op_hdr_len(0x0c), 28u);		// READ_REQ
	EXPECT_EQ(mrxe_op_hdr_len(0x12), 24u);		// ATOMIC_ACK
	EXPECT_EQ(mrxe_op_hdr_len(0x13), 40u);		// CMP_SWAP
	EXPECT_EQ(mrxe_op_hdr_len(0x65), 24u);		// UD SEND_ONLY_IMM
	EXPECT_EQ(mrxe_op_hdr_off(0x0b, MRXE_HDR_IMMDT), 28u);
	EXPECT_EQ(mrxe_op_hdr_off(0x65, MRXE_HDR_IMMDT), 20u);
	EXPECT_EQ(mrxe_op_hdr_off(0x65, MRXE_HDR_DETH), 12u);
	EXPECT_EQ(mrxe_op_hdr_off(0x12, MRXE_HDR_ATMACK), 16u);
	EXPECT_EQ(mrxe_op_hdr_off(0x04, MRXE_HDR_RETH), 0u);
	EXPECT_FALSE(mrxe_op_mask(0x15) & MRXE_M_VALID);	// reserved
	EXPECT_FALSE(mrxe_op_mask(0x40) & MRXE_M_VALID);	// RD unsupported
	EXPECT_FALSE(mrxe_op_mask(0x2c) & MRXE_M_VALID);	// UC has no READ
	for (int op = 0; op < 256; op++) {
		uint32_t m = mrxe_op_mask(op);
		if (!(m & MRXE_M_VALID) || (m & MRXE_M_CNP))
			continue;
		EXPECT_NE(!!(m & MRXE_M_REQ), !!(m & MRXE_M_RESP)) << op;
		EXPECT_TRUE(m & (MRXE_M_FIRST | MRXE_M_MIDDLE | MRXE_M_LAST)) << op;
	}
}

// IBA 1.5 MPE: FLUSH = BTH + FETH + RETH (rxe on 6.12 lays it out the same),
// ATOMIC WRITE = BTH + RETH + 8 payload bytes; RC only.
TEST(Wire, MpeOpcodes)
{
	EXPECT_EQ(mrxe_op_hdr_len(0x1c), 32u);
	EXPECT_EQ(mrxe_op_hdr_off(0x1c, MRXE_HDR_FETH), 12u);
	EXPECT_EQ(mrxe_op_hdr_off(0x1c, MRXE_HDR_RETH), 16u);
	EXPECT_TRUE(mrxe_op_mask(0x1c) & MRXE_M_FLUSH);
	EXPECT_TRUE(mrxe_op_mask(0x1c) & MRXE_M_READ);
	EXPECT_FALSE(mrxe_op_mask(0x1c) & MRXE_HDR_PAYLOAD);
	EXPECT_EQ(mrxe_op_hdr_len(0x1d), 28u);
	EXPECT_EQ(mrxe_op_hdr_off(0x1d, MRXE_HDR_RETH), 12u);
	EXPECT_TRUE(mrxe_op_mask(0x1d) & MRXE_M_ATOMIC_WRITE);
	EXPECT_TRUE(mrxe_op_mask(0x1d) & MRXE_HDR_PAYLOAD);
	EXPECT_FALSE(mrxe_op_mask(0x3c) & MRXE_M_VALID);	// UC: no FLUSH
	EXPECT_FALSE(mrxe_op_mask(0x3d) & MRXE_M_VALID);
	// MetaRoCE: MRH after BTH, the rest in order
	EXPECT_EQ(mrxe_meta_hdr_off(0x1c, MRXE_HDR_FETH), 12u + MRXE_MRH_LEN);
	EXPECT_EQ(mrxe_meta_hdr_off(0x1c, MRXE_HDR_RETH), 16u + MRXE_MRH_LEN);

	uint8_t b[4];
	uint8_t plt, sel;
	mrxe_feth_build(b, MRXE_FETH_PLT_GLOBAL | MRXE_FETH_PLT_PERSIST,
			MRXE_FETH_SEL_MR);
	EXPECT_EQ(b[0], 0);
	EXPECT_EQ(b[3], 0x13);
	mrxe_feth_parse(b, &plt, &sel);
	EXPECT_EQ(plt, 3);
	EXPECT_EQ(sel, 1);
}

TEST(Wire, Psn)
{
	EXPECT_EQ(mrxe_psn_add(0xffffff, 1), 0u);
	EXPECT_EQ(mrxe_psn_diff(0, 0xffffff), 1);
	EXPECT_EQ(mrxe_psn_diff(0xffffff, 0), -1);
	EXPECT_TRUE(mrxe_psn_before(0xfffff0, 5));
	EXPECT_TRUE(mrxe_psn_after(5, 0xfffff0));
	EXPECT_TRUE(mrxe_psn_in(1, 0xfffffe, 3));
	EXPECT_FALSE(mrxe_psn_in(4, 0xfffffe, 3));
	EXPECT_EQ(mrxe_psn_diff(0x7fffff, 0), 0x7fffff);
	EXPECT_EQ(mrxe_psn_diff(0x800000, 0), -0x800000);
}

TEST(Wire, PacketParse)
{
	auto roce = hex("0430ffff000000118012345668656c6c6f00000000000000");
	struct mrxe_pkt_info pi;
	ASSERT_EQ(mrxe_pkt_parse(roce.data(), roce.size(), &pi), 0);
	EXPECT_EQ(pi.paylen, 5u); EXPECT_EQ(pi.pad, 3); EXPECT_EQ(pi.psn, 0x123456u);
	EXPECT_EQ(pi.qpn, 0x11u); EXPECT_EQ(pi.hdr_len, 12);
	EXPECT_EQ(mrxe_pkt_parse(roce.data(), 15, &pi), MRXE_PARSE_SHORT);
	roce[0] = 0x15;
	EXPECT_EQ(mrxe_pkt_parse(roce.data(), roce.size(), &pi), MRXE_PARSE_OPCODE);
	roce[0] = 0x04; roce[1] = 0x01;
	EXPECT_EQ(mrxe_pkt_parse(roce.data(), roce.size(), &pi), MRXE_PARSE_TVER);
	// ACK with payload is malformed
	auto ack = hex("1100ffff000000110012345600000001aabbccdd11223344");
	EXPECT_EQ(mrxe_pkt_parse(ack.data(), ack.size() - 4, &pi), 0);
	EXPECT_EQ(pi.paylen, 0u);
	EXPECT_EQ(mrxe_pkt_parse(ack.data(), ack.size() - 8, &pi), MRXE_PARSE_SHORT);
	EXPECT_EQ(mrxe_pkt_parse(ack.data(), ack.size(), &pi), MRXE_PARSE_LEN);
	// pad larger than payload
	auto bad = hex("0430ffff0000001180123456aabbccdd");
	EXPECT_EQ(mrxe_pkt_parse(bad.data(), bad.size(), &pi), MRXE_PARSE_PAD);
	EXPECT_EQ(mrxe_rnr_timer_us(0), 655360u);
	EXPECT_EQ(mrxe_rnr_timer_us(14), 1280u);
	EXPECT_EQ(mrxe_ack_timeout_ns(14), 4096ull << 14);
}

} // namespace
