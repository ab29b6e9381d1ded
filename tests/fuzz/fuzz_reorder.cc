// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// libFuzzer target: the MetaRoCE receiver reorder window (mrxe_reorder).
// The input is decoded into a sequence of operations - arrivals near the
// window, arrivals anywhere in the 24-bit PSN space (wrap included), SACK
// generation with 0..6 allowed blocks - and after each one the window is
// compared with a model (a set of received PSNs as 64-bit offsets, so the
// model itself never wraps).  The model says what mrxe_reorder.h promises:
// a PSN is NEW at most once, PSNs at or beyond ePSN + window are out of
// window, ePSN is the first PSN not received, a SACK block only reports
// PSNs that were received and each SACKETH survives build/parse.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <set>

#include "fuzz_check.h"

extern "C" {
#include "mrxe_reorder.h"
}

namespace {

struct model {
	u32 isn;
	u64 epsn = 0;		// offset of ePSN from isn
	std::set<u64> held;	// received offsets above epsn

	u32 psn(u64 off) const { return (u32)((isn + off) & MRXE_PSN_MASK); }

	enum mrxe_rx_verdict accept(u32 p)
	{
		s32 d = mrxe_psn_diff(p & MRXE_PSN_MASK, psn(epsn));

		if (d >= MRXE_SACK_WINDOW)
			return MRXE_RX_OUT_OF_WINDOW;
		if (d < 0 || held.count(epsn + (u64)d))
			return MRXE_RX_DUPLICATE;
		held.insert(epsn + (u64)d);
		while (held.count(epsn)) {
			held.erase(epsn);
			epsn++;
		}
		return MRXE_RX_NEW;
	}
};

// Every held PSN is set and the window holds exactly as many bits, so no
// other bit is set; the full per-slot comparison runs on every 16th step.
void check_window(const struct mrxe_reorder &rw, const model &m, bool full = true)
{
	FUZZ_CHECK(mrxe_reorder_epsn(&rw) == m.psn(m.epsn));
	FUZZ_CHECK(mrxe_reorder_held(&rw) == m.held.size());
	FUZZ_CHECK(!mrxe_reorder_has(&rw, m.psn(m.epsn)));
	for (u64 h : m.held)
		FUZZ_CHECK(h > m.epsn && h < m.epsn + MRXE_SACK_WINDOW &&
			   mrxe_reorder_has(&rw, m.psn(h)));
	for (u32 d = 1; full && d < MRXE_SACK_WINDOW; d++)
		FUZZ_CHECK(mrxe_reorder_has(&rw, m.psn(m.epsn + d)) ==
			   (m.held.count(m.epsn + d) != 0));
	FUZZ_CHECK(!mrxe_reorder_has(&rw, m.psn(m.epsn + MRXE_SACK_WINDOW)));
	FUZZ_CHECK(mrxe_reorder_has(&rw, m.psn(m.epsn - 1)) || m.epsn == 0);
}

void check_sack(struct mrxe_reorder &rw, const model &m, u8 max_blocks)
{
	struct mrxe_sack_info si, back;
	u8 wire[MRXE_SACKETH_HDR_LEN + MRXE_SACK_MAX_BLOCKS * MRXE_SACKETH_BLK_LEN];
	u32 nonempty = 0;
	bool seen[MRXE_SACK_WIN_BLOCKS] = {};

	for (u32 k = 0; k < MRXE_SACK_WIN_BLOCKS; k++)
		for (u32 i = 0; i < 64; i++)
			if (m.held.count(m.epsn + 1 + 64 * k + i)) {
				nonempty++;
				break;
			}
	u8 n = mrxe_reorder_sack(&rw, &si, max_blocks);
	u32 cap = max_blocks < MRXE_SACK_MAX_BLOCKS ? max_blocks : MRXE_SACK_MAX_BLOCKS;
	FUZZ_CHECK(n == si.nblocks);
	FUZZ_CHECK(n == (nonempty < cap ? nonempty : cap));
	FUZZ_CHECK(si.epsn == m.psn(m.epsn));
	for (u8 b = 0; b < n; b++) {
		s32 d = mrxe_psn_diff(si.blk[b].base, si.epsn);

		FUZZ_CHECK(d > 0 && (d - 1) % 64 == 0 && d < MRXE_SACK_WINDOW);
		u32 k = (u32)(d - 1) / 64;
		FUZZ_CHECK(!seen[k]);	// no block twice
		seen[k] = true;
		FUZZ_CHECK(si.blk[b].bitmap);
		for (u32 i = 0; i < 64; i++) {
			bool bit = (si.blk[b].bitmap >> i) & 1;
			FUZZ_CHECK(bit == (m.held.count(m.epsn + (u64)d + i) != 0));
		}
	}
	// what the responder sends, the requester parses back unchanged
	mrxe_sacketh_build(wire, &si);
	FUZZ_CHECK(mrxe_sacketh_parse(wire, sizeof(wire), si.epsn, &back) ==
		   (int)mrxe_sacketh_len(n));
	FUZZ_CHECK(back.nblocks == n && back.trigger_psn == si.trigger_psn &&
		   back.trigger_dup == si.trigger_dup);
	for (u8 b = 0; b < n; b++)
		FUZZ_CHECK(back.blk[b].base == si.blk[b].base &&
			   back.blk[b].bitmap == si.blk[b].bitmap);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzedDataProvider fdp(data, size);
	struct mrxe_reorder rw;
	model m;

	m.isn = fdp.ConsumeIntegral<u32>() & MRXE_PSN_MASK;
	mrxe_reorder_init(&rw, m.isn);
	check_window(rw, m);
	for (int steps = 0; fdp.remaining_bytes() && steps < 1024; steps++) {
		u8 op = fdp.ConsumeIntegral<u8>();
		u32 psn;

		switch (op % 6) {
		case 0: case 1: case 2:	// near the window, mostly inside
			psn = m.psn(m.epsn + (u64)fdp.ConsumeIntegralInRange<int>(-16, 300));
			break;
		case 3:			// a run of in-order arrivals from ePSN
			for (int n = fdp.ConsumeIntegralInRange<int>(1, 64); n--;)
				FUZZ_CHECK(mrxe_reorder_accept(&rw, m.psn(m.epsn)) ==
					   m.accept(m.psn(m.epsn)));
			check_window(rw, m, steps % 16 == 0);
			continue;
		case 4:			// anywhere (bits above 24 too)
			psn = fdp.ConsumeIntegral<u32>();
			break;
		default:
			check_sack(rw, m, fdp.ConsumeIntegralInRange<u8>(0, 6));
			continue;
		}
		enum mrxe_rx_verdict want = m.accept(psn);
		FUZZ_CHECK(mrxe_reorder_accept(&rw, psn) == want);
		check_window(rw, m, steps % 16 == 0);
	}
	FUZZ_CHECK(rw.cnt.accepted == m.epsn + m.held.size());
	return 0;
}
