// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// libFuzzer target: the sender SACK scoreboard (mrxe_sack: RACK-TLP, RTO)
// fed arbitrary sequences of sends, retransmissions, timer runs and ACKs -
// well-formed ones, forged ones (cumulative or SACKed PSNs never sent,
// blocks far away, lying duplicate flags and echoed timestamps) and raw
// SACKETH bytes through mrxe_sacketh_parse() as the completer does.  After
// every operation: mrxe_sack_check() (the state invariant of mrxe_sack.h),
// una only moves forward and never past nxt, an ACK delivers exactly the
// outstanding PSNs it covers, a SACKed PSN stays SACKed (no reneging), an
// ACK beyond nxt changes nothing, the timers are consistent.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz_check.h"

extern "C" {
#include "mrxe_sack.h"
}

namespace {

constexpr u64 kUs = 1000, kMs = 1000 * kUs;

u8 state(struct mrxe_sack *sb, u32 psn)
{
	return mrxe_sack_ent(sb, psn)->state;
}

// Is @psn in [una, nxt)?
bool outstanding(const struct mrxe_sack *sb, u32 psn)
{
	s32 d = mrxe_psn_diff(psn, sb->una);

	return d >= 0 && (u32)d < mrxe_sack_outstanding(sb);
}

// How many PSNs would this ACK newly deliver?
u32 expect_delivered(struct mrxe_sack *sb, const struct mrxe_sack_info &si)
{
	std::vector<bool> hit(MRXE_SACK_WINDOW);
	u32 n = mrxe_sack_outstanding(sb), cnt = 0;

	for (u32 i = 0; i < n; i++) {
		u32 p = mrxe_psn_add(sb->una, i);

		if (mrxe_psn_before(p, si.epsn))
			hit[i] = true;
	}
	for (u8 b = 0; b < si.nblocks && b < MRXE_SACK_MAX_BLOCKS; b++)
		for (u32 i = 0; i < 64; i++)
			if ((si.blk[b].bitmap >> i) & 1) {
				u32 p = mrxe_psn_add(si.blk[b].base, i);

				if (outstanding(sb, p))
					hit[(u32)mrxe_psn_diff(p, sb->una)] = true;
			}
	for (u32 i = 0; i < n; i++)
		if (hit[i] && state(sb, mrxe_psn_add(sb->una, i)) != MRXE_SK_SACKED)
			cnt++;
	return cnt;
}

struct fuzz_sb {
	struct mrxe_sack sb;
	u64 now = 1000 * kMs;
	u64 sent = 0;		// packets sent (model)

	void check(u32 una_before, const std::vector<u8> &before)
	{
		FUZZ_CHECK(mrxe_sack_check(&sb) == 0);
		FUZZ_CHECK(mrxe_psn_diff(sb.una, una_before) >= 0);
		FUZZ_CHECK(mrxe_sack_outstanding(&sb) <= MRXE_SACK_WINDOW);
		FUZZ_CHECK(sb.cnt.sent == sent);
		FUZZ_CHECK(sb.cnt.delivered <= sb.cnt.sent);
		// no reneging: what was SACKed and is still outstanding stays so
		for (u32 i = 0; i < before.size(); i++) {
			u32 p = mrxe_psn_add(una_before, i);

			if (before[i] == MRXE_SK_SACKED && outstanding(&sb, p))
				FUZZ_CHECK(state(&sb, p) == MRXE_SK_SACKED);
		}
		enum mrxe_sack_timer_kind kind;
		u64 t = mrxe_sack_timer(&sb, &kind);
		FUZZ_CHECK((t == 0) == (kind == MRXE_SACK_T_NONE));
		if (sb.n_inflight)	// something in flight always has a timer
			FUZZ_CHECK(t != 0);
		if (!sb.n_inflight)
			FUZZ_CHECK(t == 0);
		u32 lp;
		FUZZ_CHECK(mrxe_sack_next_lost(&sb, &lp) == (sb.n_lost != 0));
		if (sb.n_lost)
			FUZZ_CHECK(outstanding(&sb, lp) && state(&sb, lp) == MRXE_SK_LOST);
	}

	std::vector<u8> snapshot()
	{
		std::vector<u8> v(mrxe_sack_outstanding(&sb));

		for (u32 i = 0; i < v.size(); i++)
			v[i] = state(&sb, mrxe_psn_add(sb.una, i));
		return v;
	}

	void ack(const struct mrxe_sack_info &si, u64 echo)
	{
		struct mrxe_sack_ack_res res;
		u32 want = expect_delivered(&sb, si);
		bool beyond = mrxe_psn_after(si.epsn & MRXE_PSN_MASK, sb.nxt);
		std::vector<u8> copy(sizeof(sb));
		memcpy(copy.data(), &sb, sizeof(sb));
		u32 una = sb.una;

		int r = mrxe_sack_on_ack(&sb, &si, echo, now, &res);
		if (beyond) {
			// ignored: only the bad_ack counter moved
			FUZZ_CHECK(r == MRXE_SACK_EACK);
			sb.cnt.bad_ack--;
			FUZZ_CHECK(!memcmp(copy.data(), &sb, sizeof(sb)));
			sb.cnt.bad_ack++;
			return;
		}
		FUZZ_CHECK(r == 0);
		FUZZ_CHECK(res.delivered == want);
		FUZZ_CHECK(res.una_moved == (sb.una != una));
		FUZZ_CHECK(res.lost <= sb.n_lost);
		if (res.rtt_ns)
			FUZZ_CHECK(res.delivered);
	}
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzedDataProvider fdp(data, size);
	struct mrxe_sack_cfg cfg = {};
	fuzz_sb f;

	cfg.rto_floor_ns = fdp.ConsumeIntegralInRange<u64>(1, 1000) * kUs;
	cfg.rto_ceil_ns = cfg.rto_floor_ns + fdp.ConsumeIntegralInRange<u64>(0, 1000) * kMs;
	cfg.rto_init_ns = fdp.ConsumeIntegralInRange<u64>(1, 2000) * kUs;
	cfg.min_rtt_win_ns = fdp.ConsumeIntegralInRange<u64>(0, 20000) * kMs;
	cfg.tlp_delack_ns = fdp.ConsumeIntegralInRange<u64>(0, 1000) * kUs;
	cfg.no_tlp = fdp.ConsumeBool();
	cfg.reo_mult_max = fdp.ConsumeIntegral<u8>();
	cfg.reo_persist = fdp.ConsumeIntegral<u16>();
	mrxe_sack_init(&f.sb, fdp.ConsumeIntegral<u32>(), &cfg);

	for (int steps = 0; fdp.remaining_bytes() && steps < 1024; steps++) {
		u32 una = f.sb.una;
		std::vector<u8> before = f.snapshot();
		u8 op = fdp.ConsumeIntegral<u8>();

		switch (op % 9) {
		case 0: case 1: {	// send a burst of new packets
			int n = fdp.ConsumeIntegralInRange<int>(1, 32);
			while (n--) {
				bool full = mrxe_sack_full(&f.sb);
				int r = mrxe_sack_on_send(&f.sb, f.sb.nxt, f.now,
							  fdp.ConsumeIntegral<u8>(), 4096);
				FUZZ_CHECK(r == (full ? MRXE_SACK_EFULL : 0));
				if (!r)
					f.sent++;
				f.now += fdp.ConsumeIntegralInRange<u64>(0, 2000);
			}
			break;
		}
		case 2: {		// send with a PSN that is not nxt
			u32 p = mrxe_psn_add(f.sb.nxt, fdp.ConsumeIntegralInRange<u32>(1, MRXE_PSN_MASK));
			FUZZ_CHECK(mrxe_sack_on_send(&f.sb, p, f.now, 0, 1) == MRXE_SACK_EPSN);
			break;
		}
		case 3:			// time passes
			f.now += fdp.ConsumeBool() ?
				 fdp.ConsumeIntegralInRange<u64>(0, 200 * kUs) :
				 fdp.ConsumeIntegralInRange<u64>(0, 2000 * kMs);
			break;
		case 4: case 5: {	// a structured ACK, honest or forged
			struct mrxe_sack_info si = {};
			u32 out = mrxe_sack_outstanding(&f.sb);
			u64 echo = 0;

			if (fdp.ConsumeIntegralInRange<int>(0, 15))
				si.epsn = mrxe_psn_add(f.sb.una, fdp.ConsumeIntegralInRange<u32>(0, out + 2));
			else
				si.epsn = fdp.ConsumeIntegral<u32>() & MRXE_PSN_MASK;
			si.nblocks = fdp.ConsumeIntegralInRange<u8>(0, MRXE_SACK_MAX_BLOCKS);
			for (u8 b = 0; b < si.nblocks; b++) {
				si.blk[b].base = mrxe_psn_add(si.epsn,
					fdp.ConsumeIntegralInRange<u32>(1, MRXE_SACK_WINDOW + 64));
				si.blk[b].bitmap = fdp.ConsumeIntegral<u64>();
			}
			si.trigger_psn = mrxe_psn_add(f.sb.una,
				fdp.ConsumeIntegralInRange<u32>(0, out + 4) - 2);
			si.trigger_dup = fdp.ConsumeBool();
			if (fdp.ConsumeBool())	// tsecr from the wire, any value
				echo = mrxe_mrh_ts_ns(fdp.ConsumeIntegral<u32>(), f.now);
			f.ack(si, echo);
			break;
		}
		case 6: {		// raw SACKETH bytes, as the completer parses them
			struct mrxe_sack_info si;
			u32 epsn = mrxe_psn_add(f.sb.una,
				fdp.ConsumeIntegralInRange<u32>(0, MRXE_SACK_WINDOW + 2));
			std::vector<u8> raw = fdp.ConsumeBytes<u8>(
				fdp.ConsumeIntegralInRange<size_t>(0, 60));
			int n = mrxe_sacketh_parse(raw.data(), (u32)raw.size(), epsn, &si);

			if (n >= 0) {
				FUZZ_CHECK((u32)n <= raw.size() && si.nblocks <= MRXE_SACK_MAX_BLOCKS);
				f.ack(si, 0);
			}
			break;
		}
		case 7: {		// retransmit: what the kernel does, or a bogus PSN
			u32 p;
			if (fdp.ConsumeBool()) {
				if (mrxe_sack_next_lost(&f.sb, &p)) {
					u64 before = f.sb.cnt.retransmits;
					u32 run = fdp.ConsumeIntegralInRange<u32>(0, 8);

					FUZZ_CHECK(mrxe_sack_on_retransmit(&f.sb, p, f.now, 1) == 0);
					// a READ run in the same packet: counted once
					for (u32 i = 0; i < run; i++) {
						p = mrxe_psn_add(p, 1);
						if (!outstanding(&f.sb, p) ||
						    state(&f.sb, p) != MRXE_SK_LOST)
							break;
						FUZZ_CHECK(mrxe_sack_on_retransmit_cont(&f.sb, p, f.now, 1) == 0);
					}
					FUZZ_CHECK(f.sb.cnt.retransmits == before + 1);
				}
			} else {
				p = mrxe_psn_add(f.sb.una, fdp.ConsumeIntegralInRange<u32>(0, 300) - 20);
				bool ok = outstanding(&f.sb, p) &&
					  (state(&f.sb, p) == MRXE_SK_LOST ||
					   state(&f.sb, p) == MRXE_SK_INFLIGHT);
				int r = mrxe_sack_on_retransmit(&f.sb, p, f.now, 2);
				FUZZ_CHECK(ok ? r == 0 : r == MRXE_SACK_EPSN);
			}
			break;
		}
		default: {		// the QP timer fires (on time, early or late)
			u32 probe = 0xffffffff;
			u64 t = mrxe_sack_timer(&f.sb, nullptr);

			if (t && fdp.ConsumeBool() && t > f.now)
				f.now = t;
			u32 ev = mrxe_sack_on_timer(&f.sb, f.now, &probe);
			if ((ev & MRXE_SACK_EV_PROBE) && probe != 0xffffffff) {
				FUZZ_CHECK(outstanding(&f.sb, probe));
				FUZZ_CHECK(state(&f.sb, probe) == MRXE_SK_INFLIGHT);
				if (fdp.ConsumeBool())
					FUZZ_CHECK(mrxe_sack_on_retransmit(&f.sb, probe, f.now, 3) == 0);
			}
			if (ev & MRXE_SACK_EV_LOST)
				FUZZ_CHECK(f.sb.n_lost);
			break;
		}
		}
		f.check(una, before);
	}
	return 0;
}
