// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// libFuzzer target: the receive-side packet parsers of drivers/proto/
// (mrxe_pkt_parse, mrxe_meta_pkt_parse with the MRH and the SACKETH, every
// extension header parser).  The input is the UDP payload as mrxe_rcv()
// sees it: BTH .. ICRC.  Besides "no out-of-bounds read, no UB" (ASan,
// UBSan), every accepted packet must be self-consistent: the headers the
// opcode claims lie inside hdr_len, hdr_len + payload + pad + ICRC is the
// packet length, and the MetaRoCE strip done by mrxe_rcv() leaves a packet
// the completer's SACKETH parse accepts again.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz_check.h"

extern "C" {
#include "mrxe_wire.h"
}

namespace {

struct hdr_desc {
	u32 bit;
	u32 len;
};

const hdr_desc kHdrs[] = {
	{ MRXE_HDR_FETH, MRXE_FETH_LEN },
	{ MRXE_HDR_DETH, MRXE_DETH_LEN },   { MRXE_HDR_RETH, MRXE_RETH_LEN },
	{ MRXE_HDR_ATMETH, MRXE_ATMETH_LEN }, { MRXE_HDR_AETH, MRXE_AETH_LEN },
	{ MRXE_HDR_ATMACK, MRXE_ATMACK_LEN }, { MRXE_HDR_IMMDT, MRXE_IMMDT_LEN },
	{ MRXE_HDR_IETH, MRXE_IETH_LEN },
};

// Parse the extension header at @p with its own parser (reads all of it).
u64 touch_hdr(u32 bit, const u8 *p)
{
	struct mrxe_deth d;
	struct mrxe_reth r;
	struct mrxe_atmeth a;
	struct mrxe_aeth k;

	u8 plt, sel;

	switch (bit) {
	case MRXE_HDR_FETH:
		mrxe_feth_parse(p, &plt, &sel);
		return plt ^ ((u64)sel << 8);
	case MRXE_HDR_DETH:
		mrxe_deth_parse(p, &d);
		return d.qkey ^ d.sqpn;
	case MRXE_HDR_RETH:
		mrxe_reth_parse(p, &r);
		return r.va ^ r.rkey ^ r.len;
	case MRXE_HDR_ATMETH:
		mrxe_atmeth_parse(p, &a);
		return a.va ^ a.rkey ^ a.swap_add ^ a.compare;
	case MRXE_HDR_AETH:
		mrxe_aeth_parse(p, &k);
		return k.syndrome ^ k.msn;
	case MRXE_HDR_ATMACK:
		return mrxe_atmack_parse(p);
	case MRXE_HDR_IMMDT:
		return mrxe_immdt_parse(p);
	case MRXE_HDR_IETH:
		return mrxe_ieth_parse(p);
	}
	FUZZ_CHECK(!"unknown header bit");
	return 0;
}

void check_common(const u8 *bth, u32 len, const struct mrxe_pkt_info &pi)
{
	FUZZ_CHECK(pi.mask & MRXE_M_VALID);
	FUZZ_CHECK(!(pi.mask & MRXE_M_CNP));
	FUZZ_CHECK(pi.opcode == mrxe_bth_opcode(bth));
	FUZZ_CHECK(pi.psn == mrxe_bth_psn(bth) && pi.psn <= MRXE_PSN_MASK);
	FUZZ_CHECK(pi.qpn == mrxe_bth_qpn(bth) && pi.qpn <= MRXE_QPN_MASK);
	FUZZ_CHECK(pi.pad == mrxe_bth_pad(bth));
	FUZZ_CHECK((u64)pi.hdr_len + pi.paylen + pi.pad + MRXE_ICRC_LEN == len);
	FUZZ_CHECK(pi.hdr_len >= MRXE_BTH_LEN);
	if (pi.paylen || pi.pad)
		FUZZ_CHECK(pi.mask & MRXE_HDR_PAYLOAD);
}

// BTH build(parse(x)) keeps every field the parser reports.
void check_bth_round_trip(const u8 *bth)
{
	struct mrxe_bth b;
	u8 out[MRXE_BTH_LEN];

	mrxe_bth_parse(bth, &b);
	mrxe_bth_build(out, &b);
	FUZZ_CHECK(out[0] == bth[0] && out[1] == bth[1]);
	FUZZ_CHECK(!memcmp(out + 2, bth + 2, 2));
	FUZZ_CHECK((out[4] & 0xc0) == (bth[4] & 0xc0));
	FUZZ_CHECK(!memcmp(out + 5, bth + 5, 3));
	FUZZ_CHECK((out[8] & 0x80) == (bth[8] & 0x80));
	FUZZ_CHECK(!memcmp(out + 9, bth + 9, 3));
}

void fuzz_standard(const u8 *bth, u32 len)
{
	struct mrxe_pkt_info pi;
	u64 sink = 0;

	if (mrxe_pkt_parse(bth, len, &pi))
		return;
	check_common(bth, len, pi);
	FUZZ_CHECK(mrxe_bth_tver(bth) == 0);
	FUZZ_CHECK(pi.hdr_len == mrxe_op_hdr_len(pi.opcode));
	check_bth_round_trip(bth);
	// Every header the opcode carries lies inside hdr_len, in IBA order.
	u32 prev_end = MRXE_BTH_LEN;
	for (const auto &h : kHdrs) {
		u32 off = mrxe_op_hdr_off(pi.opcode, h.bit);

		if (!(pi.mask & h.bit)) {
			FUZZ_CHECK(off == 0);
			continue;
		}
		FUZZ_CHECK(off == prev_end);
		FUZZ_CHECK(off + h.len <= pi.hdr_len);
		sink ^= touch_hdr(h.bit, bth + off);
		prev_end = off + h.len;
	}
	FUZZ_CHECK(prev_end == pi.hdr_len);
	// The payload and the ICRC are inside the packet.
	sink ^= mrxe_crc32_le(0, bth + pi.hdr_len, pi.paylen + pi.pad);
	sink ^= mrxe_icrc_get(bth + len - MRXE_ICRC_LEN);
	fuzz_sink(sink);
}

void fuzz_meta(const u8 *bth, u32 len)
{
	struct mrxe_pkt_info pi;
	struct mrxe_mrh mrh;
	u8 mrh_out[MRXE_MRH_LEN];
	u64 sink = 0;

	if (mrxe_meta_pkt_parse(bth, len, &pi, &mrh))
		return;
	check_common(bth, len, pi);
	FUZZ_CHECK(mrxe_bth_tver(bth) == MRXE_META_TVER);
	FUZZ_CHECK(mrh.cls == mrxe_mrh_class_of(pi.opcode) && mrh.cls);
	// The MRH is canonical: rebuilding it gives the same 20 bytes.
	mrxe_mrh_build(mrh_out, &mrh);
	FUZZ_CHECK(!memcmp(mrh_out, bth + MRXE_BTH_LEN, MRXE_MRH_LEN));

	u32 mhl = mrxe_meta_hdr_len(pi.opcode);
	u32 shl = mrxe_op_hdr_len(pi.opcode);
	FUZZ_CHECK(mhl >= shl + MRXE_MRH_LEN);
	for (const auto &h : kHdrs) {
		u32 off = mrxe_meta_hdr_off(pi.opcode, h.bit);

		if (!off)
			continue;
		FUZZ_CHECK(off >= MRXE_BTH_LEN + MRXE_MRH_LEN);
		FUZZ_CHECK(off + h.len <= mhl);
		sink ^= touch_hdr(h.bit, bth + off);
	}
	// every MetaRoCE WRITE packet carries a RETH (placement without FIRST)
	if (pi.mask & MRXE_M_WRITE)
		FUZZ_CHECK(mrxe_meta_hdr_off(pi.opcode, MRXE_HDR_RETH));

	bool is_ack = pi.opcode == MRXE_OPC(MRXE_TR_RC, MRXE_OP_ACK);
	if (!is_ack) {
		FUZZ_CHECK(pi.hdr_len == mhl);
	} else {
		struct mrxe_sack_info si;
		u8 re[MRXE_SACKETH_HDR_LEN +
		      MRXE_SACK_MAX_BLOCKS * MRXE_SACKETH_BLK_LEN];
		int n = mrxe_sacketh_parse(bth + mhl, pi.hdr_len - mhl,
					   mrxe_psn_add(pi.psn, 1), &si);

		FUZZ_CHECK(n > 0 && (u32)n == pi.hdr_len - mhl);
		FUZZ_CHECK(si.nblocks <= MRXE_SACK_MAX_BLOCKS);
		FUZZ_CHECK(si.epsn == mrxe_psn_add(pi.psn, 1));
		for (u8 i = 0; i < si.nblocks; i++) {
			s32 d = mrxe_psn_diff(si.blk[i].base, si.epsn);

			FUZZ_CHECK(d > 0 && d < MRXE_SACK_WINDOW);
		}
		// SACKETH is canonical too.
		mrxe_sacketh_build(re, &si);
		FUZZ_CHECK(!memcmp(re, bth + mhl, (size_t)n));
	}

	// mrxe_rcv() strips the MRH (and the added RETH) by moving the BTH up;
	// the pipeline then finds every header at its standard offset.
	u32 extra = mhl - shl;
	std::vector<u8> s(bth + extra, bth + len);
	memcpy(s.data(), bth, MRXE_BTH_LEN);
	u32 slen = len - extra, shdr = pi.hdr_len - extra;
	FUZZ_CHECK(shdr >= shl && shdr + pi.paylen + pi.pad + MRXE_ICRC_LEN == slen);
	for (const auto &h : kHdrs) {
		u32 off = mrxe_op_hdr_off(pi.opcode, h.bit);

		if (off) {
			FUZZ_CHECK(off + h.len <= shl);
			sink ^= touch_hdr(h.bit, s.data() + off);
		}
	}
	if (is_ack) {
		// mrxe_comp_meta_ack(): SACKETH right after BTH + AETH
		struct mrxe_sack_info si;
		u32 off = MRXE_BTH_LEN + MRXE_AETH_LEN;

		FUZZ_CHECK(mrxe_sacketh_parse(s.data() + off, shdr - off,
					      mrxe_psn_add(pi.psn, 1), &si) ==
			   (int)(shdr - off));
	}
	fuzz_sink(sink);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	// Exact-size heap copy: ASan flags any read past the packet.
	std::vector<u8> buf(data, data + size);
	const u8 *p = size ? buf.data() : nullptr;
	u32 len = (u32)size;

	if (len < MRXE_BTH_LEN) {
		// the parsers must reject a short packet before touching it
		struct mrxe_pkt_info pi;
		struct mrxe_mrh mrh;
		u8 none;

		FUZZ_CHECK(mrxe_pkt_parse(p ? p : &none, len, &pi) ==
			   MRXE_PARSE_SHORT);
		FUZZ_CHECK(mrxe_meta_pkt_parse(p ? p : &none, len, &pi, &mrh) ==
			   MRXE_PARSE_SHORT);
		return 0;
	}
	fuzz_standard(p, len);
	fuzz_meta(p, len);
	// A lone SACKETH, as the completer parses it from any offset.
	struct mrxe_sack_info si;
	(void)mrxe_sacketh_parse(p + 3, len - 3, mrxe_get24(p), &si);
	return 0;
}
