// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// Seed corpus for the libFuzzer targets, generated at build time (nothing
// binary is committed): valid standard and MetaRoCE packets of every opcode
// built with drivers/proto's own builders (as the wire unit tests do),
// MetaRoCE ACKs with 0..4 SACK blocks, IPv4/IPv6 ICRC inputs, and
// pseudo-random operation streams for the reorder and scoreboard targets.
//
//   gen_corpus OUTDIR    writes OUTDIR/{pkt,icrc,reorder,sack}/NNNN
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <sys/stat.h>
#include <vector>

extern "C" {
#include "mrxe_reorder.h"
#include "mrxe_wire.h"
}

namespace {

std::string g_out;
int g_n;

void emit(const char *dir, const std::vector<u8> &v)
{
	std::string d = g_out + "/" + dir;
	char name[32];

	mkdir(d.c_str(), 0755);
	snprintf(name, sizeof(name), "/%04d", g_n++);
	FILE *f = fopen((d + name).c_str(), "wb");
	if (!f || fwrite(v.data(), 1, v.size(), f) != v.size() || fclose(f)) {
		perror((d + name).c_str());
		exit(1);
	}
}

// One packet, BTH .. ICRC (ICRC left zero: the parsers do not check it).
std::vector<u8> packet(u8 opcode, bool meta, u32 paylen, u32 psn)
{
	u32 hl = meta ? mrxe_meta_hdr_len(opcode) : mrxe_op_hdr_len(opcode);
	u8 pad = mrxe_pad_for(paylen);
	std::vector<u8> v(hl + paylen + pad + MRXE_ICRC_LEN);
	struct mrxe_bth b = {};
	u32 m = mrxe_op_mask(opcode);

	b.opcode = opcode;
	b.pad = pad;
	b.tver = meta ? MRXE_META_TVER : 0;
	b.pkey = MRXE_DEFAULT_PKEY;
	b.dqpn = 0x11;
	b.ackreq = m & MRXE_M_LAST;
	b.psn = psn;
	mrxe_bth_build(v.data(), &b);
	if (meta) {
		struct mrxe_mrh h = {};

		h.cls = mrxe_mrh_class_of(opcode);
		h.msn = 3;
		h.offset = 4096;
		h.tsval = 12345;
		mrxe_mrh_build(v.data() + MRXE_BTH_LEN, &h);
	}
	auto off = [&](u32 hdr) {
		return meta ? mrxe_meta_hdr_off(opcode, hdr) : mrxe_op_hdr_off(opcode, hdr);
	};
	if (u32 o = off(MRXE_HDR_RETH)) {
		struct mrxe_reth r = { 0x7f0000001000ull, 0x1234, paylen };
		mrxe_reth_build(v.data() + o, &r);
	}
	if (u32 o = off(MRXE_HDR_DETH)) {
		struct mrxe_deth d = { MRXE_QP1_QKEY, 1 };
		mrxe_deth_build(v.data() + o, &d);
	}
	if (u32 o = off(MRXE_HDR_ATMETH)) {
		struct mrxe_atmeth a = { 0x7f0000002000ull, 0x1234, 1, 0 };
		mrxe_atmeth_build(v.data() + o, &a);
	}
	if (u32 o = off(MRXE_HDR_AETH)) {
		struct mrxe_aeth a = { MRXE_AETH_ACK | MRXE_AETH_CREDIT_INVALID, 3 };
		mrxe_aeth_build(v.data() + o, &a);
	}
	if (u32 o = off(MRXE_HDR_IMMDT))
		mrxe_immdt_build(v.data() + o, 0x11223344);
	if (u32 o = off(MRXE_HDR_IETH))
		mrxe_ieth_build(v.data() + o, 0x5678);
	for (u32 i = 0; i < paylen; i++)
		v[hl + i] = (u8)(i * 7 + 1);
	return v;
}

void gen_pkt(std::mt19937 &rng)
{
	const u32 lens[] = { 0, 1, 3, 4, 57, 256, 1024 };

	for (u32 op = 0; op < 256; op++) {
		u32 m = mrxe_op_mask((u8)op);

		if (!(m & MRXE_M_VALID) || (m & MRXE_M_CNP))
			continue;
		for (u32 l : lens) {
			if (l && !(m & MRXE_HDR_PAYLOAD))
				continue;
			if (l > 57 && (rng() & 1))
				continue;
			emit("pkt", packet((u8)op, false, l, rng() & MRXE_PSN_MASK));
			if (mrxe_mrh_class_of((u8)op))
				emit("pkt", packet((u8)op, true, l, rng() & MRXE_PSN_MASK));
		}
	}
	// MetaRoCE ACKs with a SACKETH of 0..4 blocks
	for (u8 n = 0; n <= MRXE_SACK_MAX_BLOCKS; n++) {
		u32 psn = rng() & MRXE_PSN_MASK;
		std::vector<u8> v = packet(MRXE_OPC(MRXE_TR_RC, MRXE_OP_ACK), true, 0, psn);
		struct mrxe_sack_info si = {};
		u32 at = (u32)v.size() - MRXE_ICRC_LEN;

		si.epsn = mrxe_psn_add(psn, 1);
		si.trigger_psn = mrxe_psn_add(psn, 5);
		si.nblocks = n;
		for (u8 b = 0; b < n; b++) {
			si.blk[b].base = mrxe_psn_add(si.epsn, 1 + 64 * b);
			si.blk[b].bitmap = ((u64)rng() << 32) | rng() | 1;
		}
		v.insert(v.begin() + at, mrxe_sacketh_len(n), 0);
		mrxe_sacketh_build(v.data() + at, &si);
		emit("pkt", v);
	}
	// CNP (A17.9.2)
	std::vector<u8> cnp(MRXE_BTH_LEN + MRXE_CNP_PAYLOAD_LEN + MRXE_ICRC_LEN);
	struct mrxe_bth b = {};
	b.opcode = MRXE_OPC_CNP;
	b.pkey = MRXE_DEFAULT_PKEY;
	b.dqpn = 0x11;
	b.becn = true;
	mrxe_bth_build(cnp.data(), &b);
	emit("pkt", cnp);
}

// ICRC target input: packet || flip (u32) || ipv6 flag (FuzzedDataProvider
// takes integers from the end).
void gen_icrc(std::mt19937 &rng)
{
	for (int ipv6 = 0; ipv6 < 2; ipv6++) {
		for (u32 l : { 0u, 8u, 256u }) {
			std::vector<u8> roce = packet(MRXE_OPC(MRXE_TR_RC, MRXE_OP_SEND_ONLY),
						      false, l, rng() & MRXE_PSN_MASK);
			std::vector<u8> v(ipv6 ? MRXE_IPV6_HDR_LEN : MRXE_IPV4_HDR_LEN);
			u32 udplen = MRXE_UDP_HDR_LEN + (u32)roce.size();

			v[0] = ipv6 ? 0x60 : 0x45;
			for (size_t i = 1; i < v.size(); i++)
				v[i] = (u8)rng();
			u8 udp[8] = { 0xc0, 0x00, 0x12, 0xb7, (u8)(udplen >> 8), (u8)udplen, 0, 0 };
			v.insert(v.end(), udp, udp + 8);
			v.insert(v.end(), roce.begin(), roce.end() - MRXE_ICRC_LEN);
			for (int i = 0; i < 4; i++)
				v.push_back((u8)rng());
			v.push_back((u8)ipv6);
			emit("icrc", v);
		}
	}
}

void gen_random(const char *dir, std::mt19937 &rng, int count)
{
	for (int i = 0; i < count; i++) {
		std::vector<u8> v(16 + rng() % 1024);

		for (auto &x : v)
			x = (u8)rng();
		emit(dir, v);
	}
}

} // namespace

int main(int argc, char **argv)
{
	std::mt19937 rng(0x6d727865);	// fixed: the corpus is reproducible

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
		return 2;
	}
	g_out = argv[1];
	mkdir(g_out.c_str(), 0755);
	gen_pkt(rng);
	gen_icrc(rng);
	gen_random("reorder", rng, 16);
	gen_random("sack", rng, 16);
	printf("gen_corpus: %d seeds in %s\n", g_n, g_out.c_str());
	return 0;
}
