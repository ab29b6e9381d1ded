// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// Unit tests for drivers/proto/mrxe_wrorder.{h,c}: PSN-order memory for
// WRITE packets placed on arrival.  The simulation drives a responder model
// shaped like mrxe_resp.c (place ahead of ePSN on arrival, hold, an
// in-order pass that lags behind arrival and copies only what was not
// placed) with overlapping WRITEs into a small buffer, random arrival
// order, duplicates and a lagging pass, and checks the bytes:
//   - after the last packet, memory equals the WRITEs applied in PSN order
//     (IBA 9.5: the responder executes requests in PSN order);
//   - when the pass copies a WRITE's last packet, every byte holds what
//     PSN order up to that WRITE put there, or newer data (an application
//     that polls a WRITE's last byte sees the WRITE and all before it).
// Each rule of the engine and of the responder is switched off once to
// show the checks fail without it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <vector>

#include "sim_seeds.h"

extern "C" {
#include "mrxe_wrorder.h"
}

namespace {

TEST(WrOrder, RecordsOnlyOlderWritesAfterANewerPlacement)
{
	struct mrxe_wrorder w;

	mrxe_wrorder_init(&w);
	// in order, nothing ahead: nothing recorded
	mrxe_wrorder_wrote(&w, 10, 0x1000, 64, false);
	EXPECT_EQ(w.n, 0u);
	// 12 placed ahead at 0x1000, then 11 (older) copied over it
	mrxe_wrorder_wrote(&w, 12, 0x1000, 64, true);
	mrxe_wrorder_wrote(&w, 11, 0x1020, 64, false);
	EXPECT_EQ(w.n, 1u);
	EXPECT_TRUE(mrxe_wrorder_stale(&w, 12, 0x1000, 64));
	// not overlapping, or not newer than the record: not stale
	EXPECT_FALSE(mrxe_wrorder_stale(&w, 12, 0x1060, 64));
	EXPECT_FALSE(mrxe_wrorder_stale(&w, 11, 0x1000, 64));
	EXPECT_FALSE(mrxe_wrorder_stale(&w, 12, 0x1000, 0x20));
	mrxe_wrorder_passed(&w, 11);
	EXPECT_TRUE(w.ahead);
	mrxe_wrorder_passed(&w, 12);
	EXPECT_FALSE(w.ahead);
	EXPECT_EQ(w.n, 0u);
	EXPECT_FALSE(mrxe_wrorder_stale(&w, 12, 0x1000, 64));
}

TEST(WrOrder, OverflowMarksEverythingAfterTheOldestRecord)
{
	struct mrxe_wrorder w;
	u32 i;

	mrxe_wrorder_init(&w);
	mrxe_wrorder_wrote(&w, 1000, 0, 8, true);
	for (i = 0; i < MRXE_WRORDER_RANGES + 1; i++)
		mrxe_wrorder_wrote(&w, 900 + i, 0x10000 + 64 * i, 8, false);
	EXPECT_TRUE(w.all);
	EXPECT_EQ(w.all_psn, 900u);
	// a packet far from every range is stale now, one before 900 not
	EXPECT_TRUE(mrxe_wrorder_stale(&w, 950, 0x900000, 8));
	EXPECT_FALSE(mrxe_wrorder_stale(&w, 899, 0x900000, 8));
	mrxe_wrorder_wrote(&w, 800, 0x900000, 8, false);
	EXPECT_EQ(w.all_psn, 800u);
	mrxe_wrorder_passed(&w, 1000);
	EXPECT_FALSE(w.all);
}

TEST(WrOrder, PsnWrap)
{
	struct mrxe_wrorder w;

	mrxe_wrorder_init(&w);
	mrxe_wrorder_wrote(&w, 2, 0, 64, true);			// after the wrap
	mrxe_wrorder_wrote(&w, 0xfffffe, 0, 64, false);		// before it
	EXPECT_TRUE(mrxe_wrorder_stale(&w, 2, 0, 64));
	mrxe_wrorder_passed(&w, 0xffffff);
	EXPECT_TRUE(w.ahead);
	mrxe_wrorder_passed(&w, 2);
	EXPECT_FALSE(w.ahead);
}

struct SimCfg {
	bool recopy = true;	// the in-order pass copies stale packets again
	bool hold_last = true;	// a WRITE's last packet is not placed ahead
	u32 mem = 96;		// buffer bytes (small: WRITEs overlap a lot)
	u32 mtu = 8;
	u32 nmsg = 60;
	double dup = 0.05;	// a packet arrives twice
	u32 reorder = 24;	// arrival order: PSN + uniform(0, reorder)
	double pass_p = 0.3;	// the pass runs after an arrival
};

struct SimResult {
	u64 final_bad = 0;	// bytes not in PSN order at the end
	u64 last_bad = 0;	// bytes older than PSN order at a LAST copy
	u64 recopies = 0;
	u64 placed = 0;
};

// One WRITE message: bytes [va, va + len), packets of mtu, PSNs from psn.
struct Msg {
	u32 va, len, psn, npkt;
};

struct Pkt {
	u32 psn, msg, off, len;
	bool last;
};

class Sim {
public:
	Sim(const SimCfg &c, unsigned seed) : c_(c), rng_(seed)
	{
		// PSNs start just below the 24-bit wrap
		u32 psn = 0xffffff - 40;

		for (u32 i = 0; i < c_.nmsg; i++) {
			u32 len = 1 + rng_() % (c_.mem / 2);
			u32 va = rng_() % (c_.mem - len + 1);
			Msg m = { va, len, psn, (len + c_.mtu - 1) / c_.mtu };

			for (u32 k = 0; k < m.npkt; k++) {
				u32 off = k * c_.mtu;

				pkts_.push_back({ (psn + k) & 0xffffff, i, off,
						  (std::min)(c_.mtu, len - off),
						  k == m.npkt - 1 });
			}
			psn = (psn + m.npkt) & 0xffffff;
			msgs_.push_back(m);
		}
	}

	void run(SimResult *res)
	{
		std::vector<std::pair<double, u32>> order;
		std::uniform_real_distribution<double> u(0, 1);

		res_ = res;
		mrxe_wrorder_init(&w_);
		mem_.assign(c_.mem, ~0u);
		for (u32 i = 0; i < pkts_.size(); i++) {
			order.push_back({ i + u(rng_) * c_.reorder, i });
			if (u(rng_) < c_.dup)
				order.push_back({ i + u(rng_) * 3 * c_.reorder, i });
		}
		std::sort(order.begin(), order.end());
		for (auto &[t, i] : order) {
			arrive(i);
			if (u(rng_) < c_.pass_p)
				pass();
		}
		pass();
		ASSERT_EQ(epsn_, pkts_.size());
		expect_ = inorder(c_.nmsg);
		for (u32 b = 0; b < c_.mem; b++)
			res_->final_bad += mem_[b] != expect_[b];
	}

private:
	// the value of each byte after messages [0, n) in PSN order
	std::vector<u32> inorder(u32 n) const
	{
		std::vector<u32> m(c_.mem, ~0u);

		for (u32 i = 0; i < n; i++)
			for (u32 b = 0; b < msgs_[i].len; b++)
				m[msgs_[i].va + b] = i;
		return m;
	}

	void copy(const Pkt &p)
	{
		const Msg &m = msgs_[p.msg];

		for (u32 b = 0; b < p.len; b++)
			mem_[m.va + p.off + b] = p.msg;
		if (p.last)
			check_last(p.msg);
	}

	// resp_meta_rx: a duplicate (executed or held) is dropped; a packet
	// ahead of ePSN is placed at once (not a WRITE's last one)
	void arrive(u32 i)
	{
		const Pkt &p = pkts_[i];

		if (i < epsn_ || held_.count(i))
			return;
		held_[i] = false;
		if (i == epsn_ || (c_.hold_last && p.last))
			return;
		copy(p);
		mrxe_wrorder_wrote(&w_, p.psn, msgs_[p.msg].va + p.off, p.len,
				   true);
		held_[i] = true;
		res_->placed++;
	}

	// resp_meta_drain + resp_write
	void pass()
	{
		for (auto it = held_.find(epsn_); it != held_.end();
		     it = held_.find(epsn_)) {
			const Pkt &p = pkts_[epsn_];
			u64 va = msgs_[p.msg].va + p.off;

			if (!it->second || (c_.recopy &&
					    mrxe_wrorder_stale(&w_, p.psn, va,
							       p.len))) {
				if (it->second)
					res_->recopies++;
				copy(p);
				mrxe_wrorder_wrote(&w_, p.psn, va, p.len,
						   false);
			}
			mrxe_wrorder_passed(&w_, p.psn);
			held_.erase(it);
			epsn_++;
		}
	}

	// an application polling this WRITE's last byte reads now (its
	// last packet was just copied)
	void check_last(u32 k)
	{
		std::vector<u32> e = inorder(k + 1);

		for (u32 b = 0; b < c_.mem; b++)
			res_->last_bad += mem_[b] != e[b] &&
					  (mem_[b] == ~0u || mem_[b] <= k);
	}

	SimCfg c_;
	std::mt19937 rng_;
	std::vector<Msg> msgs_;
	std::vector<Pkt> pkts_;
	std::map<u32, bool> held_;	// index -> placed
	u32 epsn_ = 0;
	struct mrxe_wrorder w_;
	std::vector<u32> mem_, expect_;
	SimResult *res_ = nullptr;
};

std::vector<unsigned> seeds(std::vector<unsigned> fixed, int nrandom = 4)
{
	return sim_seeds(std::move(fixed), nrandom);
}

SimResult run_many(const SimCfg &c, const std::vector<unsigned> &ss)
{
	SimResult sum;

	for (unsigned s : ss) {
		SimResult r;

		Sim(c, s).run(&r);
		sum.final_bad += r.final_bad;
		sum.last_bad += r.last_bad;
		sum.recopies += r.recopies;
		sum.placed += r.placed;
	}
	return sum;
}

// The engine and the responder's rules together: memory ends in PSN order
// and a WRITE's last byte never shows before the bytes it follows, over
// random overlap, reordering, duplicates and a lagging pass, with few and
// with many overlapping WRITEs in flight (the latter overflows the
// records).
TEST(WrOrderSim, MemoryEndsInPsnOrder)
{
	for (u32 reorder : { 4u, 24u, 200u }) {
		SimCfg c;
		u64 placed = 0, recopies = 0;

		c.reorder = reorder;
		for (unsigned s : seeds({ 1, 2, 3, 4, 5, 6, 7, 8 })) {
			SCOPED_TRACE("seed " + std::to_string(s) + " reorder " +
				     std::to_string(reorder));
			SimResult r;

			Sim(c, s).run(&r);
			EXPECT_EQ(r.final_bad, 0u);
			EXPECT_EQ(r.last_bad, 0u);
			placed += r.placed;
			recopies += r.recopies;
		}
		printf("[ sim    ] reorder %u: %llu packets placed on arrival, %llu copied again\n",
		       reorder, (unsigned long long)placed,
		       (unsigned long long)recopies);
		EXPECT_GT(placed, 0u);
	}
}

// Without the second copy, overlapping WRITEs end in arrival order; with
// a WRITE's last packet placed on arrival, its last byte shows before
// bytes it follows.  Fixed seeds: both must be seen.
TEST(WrOrderSim, EachRuleIsNeeded)
{
	const std::vector<unsigned> ss = { 1, 2, 3, 4, 5, 6, 7, 8 };
	SimCfg c;
	SimResult r;

	c.recopy = false;
	r = run_many(c, ss);
	printf("[ sim    ] no second copy: %llu bytes out of PSN order at the end\n",
	       (unsigned long long)r.final_bad);
	EXPECT_GT(r.final_bad, 0u);

	c = SimCfg();
	c.hold_last = false;
	r = run_many(c, ss);
	printf("[ sim    ] last packet placed on arrival: %llu bytes older than its WRITE when its last packet landed\n",
	       (unsigned long long)r.last_bad);
	EXPECT_GT(r.last_bad, 0u);
}

} // namespace
