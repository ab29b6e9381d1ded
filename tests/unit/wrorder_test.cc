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

// a packet of the message whose first PSN is @msg at [@mva, @mva + @mlen)
struct mrxe_wrorder_pkt pk(u32 psn, u32 msg, u64 mva, u32 mlen, u64 va,
			   u32 len)
{
	return { psn, msg, va, len, mva, mlen };
}

void wrote(struct mrxe_wrorder *w, const struct mrxe_wrorder_pkt &p,
	   bool ahead)
{
	mrxe_wrorder_wrote(w, &p, ahead);
}

TEST(WrOrder, RecordsOnlyOlderWritesOverANewerMessage)
{
	struct mrxe_wrorder w;

	mrxe_wrorder_init(&w);
	// in order, nothing ahead: nothing recorded
	wrote(&w, pk(10, 10, 0x1000, 64, 0x1000, 64), false);
	EXPECT_EQ(w.n, 0u);
	// message 12 placed ahead at 0x1000, then 11 (older) copied over it
	wrote(&w, pk(12, 12, 0x1000, 64, 0x1000, 64), true);
	wrote(&w, pk(11, 11, 0x1020, 64, 0x1020, 64), false);
	EXPECT_EQ(w.n, 1u);
	EXPECT_TRUE(mrxe_wrorder_stale(&w, 12, 0x1000, 64));
	// not overlapping, or not newer than the record: not stale
	EXPECT_FALSE(mrxe_wrorder_stale(&w, 12, 0x1060, 64));
	EXPECT_FALSE(mrxe_wrorder_stale(&w, 11, 0x1000, 64));
	EXPECT_FALSE(mrxe_wrorder_stale(&w, 12, 0x1000, 0x20));
	// an older write outside every newer message: no record
	wrote(&w, pk(11, 11, 0x1020, 0x2000, 0x2000, 64), false);
	EXPECT_EQ(w.n, 1u);
	mrxe_wrorder_passed(&w, 11);
	EXPECT_TRUE(w.ahead);
	mrxe_wrorder_passed(&w, 12);
	EXPECT_FALSE(w.ahead);
	EXPECT_EQ(w.n, 0u);
	EXPECT_FALSE(mrxe_wrorder_stale(&w, 12, 0x1000, 64));
}

TEST(WrOrder, OwnMessageIsNoOverlap)
{
	struct mrxe_wrorder w;

	mrxe_wrorder_init(&w);
	// packets 2..3 of a 4-packet WRITE placed, then the hole (PSN 1)
	wrote(&w, pk(2, 0, 0, 256, 128, 64), true);
	wrote(&w, pk(3, 0, 0, 256, 192, 64), true);
	wrote(&w, pk(1, 0, 0, 256, 64, 64), false);
	EXPECT_EQ(w.n, 0u);
	EXPECT_FALSE(mrxe_wrorder_stale(&w, 2, 128, 64));
}

TEST(WrOrder, OverflowMarksEverythingAfterTheOldestRecord)
{
	struct mrxe_wrorder w;
	u32 i;

	mrxe_wrorder_init(&w);
	// one newer message over all of it, placed ahead
	wrote(&w, pk(1000, 1000, 0, 1 << 20, 0, 8), true);
	for (i = 0; i < MRXE_WRORDER_RANGES + 1; i++)
		wrote(&w, pk(900 + i, 900 + i, 0x10000 + 64 * i, 8,
			     0x10000 + 64 * i, 8), false);
	EXPECT_TRUE(w.all);
	EXPECT_EQ(w.all_psn, 900u);
	// a packet far from every range is stale now, one before 900 not
	EXPECT_TRUE(mrxe_wrorder_stale(&w, 950, 0x90000, 8));
	EXPECT_FALSE(mrxe_wrorder_stale(&w, 899, 0x90000, 8));
	wrote(&w, pk(800, 800, 0x90000, 8, 0x90000, 8), false);
	EXPECT_EQ(w.all_psn, 800u);
	mrxe_wrorder_passed(&w, 1000);
	EXPECT_FALSE(w.all);
}

TEST(WrOrder, RecordsNoLiveMessageOverlapsArePruned)
{
	struct mrxe_wrorder w;
	u32 i;

	mrxe_wrorder_init(&w);
	// message 100 placed ahead over [0, 4096), and 200 far away
	wrote(&w, pk(100, 100, 0, 4096, 0, 8), true);
	wrote(&w, pk(200, 200, 0x100000, 64, 0x100000, 8), true);
	for (i = 0; i < MRXE_WRORDER_RANGES; i++)
		wrote(&w, pk(50 + i, 50 + i, 64 * i, 8, 64 * i, 8), false);
	EXPECT_EQ(w.n, (u32)MRXE_WRORDER_RANGES);
	// the pass executed 100: its extent is dead, its records go
	mrxe_wrorder_passed(&w, 100);
	wrote(&w, pk(150, 150, 0x100000, 8, 0x100000, 8), false);
	EXPECT_FALSE(w.all);
	EXPECT_EQ(w.n, 1u);
	EXPECT_TRUE(mrxe_wrorder_stale(&w, 200, 0x100000, 8));
}

TEST(WrOrder, PsnWrap)
{
	struct mrxe_wrorder w;

	mrxe_wrorder_init(&w);
	wrote(&w, pk(2, 2, 0, 64, 0, 64), true);		// after the wrap
	wrote(&w, pk(0xfffffe, 0xfffffe, 0, 64, 0, 64), false);	// before it
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
	bool ring = false;	// each WRITE to its own bytes (no overlap)
	bool same = false;	// every WRITE to the whole buffer (perftest)
	bool may_place = true;	// honour mrxe_wrorder_may_place()
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

		if (c_.ring)
			c_.mem = c_.nmsg * 48;
		for (u32 i = 0; i < c_.nmsg; i++) {
			u32 len = 1 + rng_() % (c_.ring ? 48 : c_.mem / 2);
			u32 va = c_.ring ? i * 48 : rng_() % (c_.mem - len + 1);

			if (c_.same) {
				len = c_.mem;
				va = 0;
			}
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

	struct mrxe_wrorder_pkt wpkt(const Pkt &p) const
	{
		const Msg &m = msgs_[p.msg];

		return pk(p.psn, m.psn, m.va, m.len, m.va + p.off, p.len);
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
		if (c_.may_place) {
			struct mrxe_wrorder_pkt wp = wpkt(p);

			if (!mrxe_wrorder_may_place(&w_, &wp))
				return;
		}
		copy(p);
		wrote(&w_, wpkt(p), true);
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
				wrote(&w_, wpkt(p), false);
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
	const struct {
		u32 reorder, nmsg, mem;
	} cases[] = { { 4, 60, 96 }, { 24, 60, 96 }, { 200, 60, 96 },
		      // more messages ahead than extents, records pruned
		      { 600, 300, 1024 } };

	for (const auto &k : cases) {
		SimCfg c;
		u64 placed = 0, recopies = 0;
		u32 reorder = k.reorder;

		c.reorder = reorder;
		c.nmsg = k.nmsg;
		c.mem = k.mem;
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
		printf("[ sim    ] %u WRITEs into %u bytes, reorder %u: %llu packets placed on arrival, %llu copied again\n",
		       k.nmsg, k.mem, reorder, (unsigned long long)placed,
		       (unsigned long long)recopies);
		EXPECT_GT(placed, 0u);
	}
}

// Every WRITE to its own bytes (a ring buffer, a stream): reordering and
// duplicates place packets ahead, holes are filled late, and nothing is
// copied twice (an older copy only counts when another, newer message
// that has packets placed overlaps it).
TEST(WrOrderSim, ReorderingAloneCopiesNothingTwice)
{
	for (u32 reorder : { 24u, 200u }) {
		SimCfg c;
		u64 placed = 0;

		c.ring = true;
		c.reorder = reorder;
		for (unsigned s : seeds({ 1, 2, 3, 4 })) {
			SCOPED_TRACE("seed " + std::to_string(s) + " reorder " +
				     std::to_string(reorder));
			SimResult r;

			Sim(c, s).run(&r);
			EXPECT_EQ(r.final_bad, 0u);
			EXPECT_EQ(r.last_bad, 0u);
			EXPECT_EQ(r.recopies, 0u);
			placed += r.placed;
		}
		printf("[ sim    ] own bytes, reorder %u: %llu packets placed on arrival, none copied again\n",
		       reorder, (unsigned long long)placed);
		EXPECT_GT(placed, 0u);
	}
}

// perftest's ib_write_bw writes one buffer again and again: a packet is
// not placed over an older WRITE that is not executed yet, so few packets
// are copied twice (measured over seeds 1..8: see the printout).
TEST(WrOrderSim, OneBufferAgainAndAgainIsMostlyCopiedOnce)
{
	const std::vector<unsigned> ss = { 1, 2, 3, 4, 5, 6, 7, 8 };
	SimCfg c;
	SimResult with, without;

	c.same = true;
	c.mem = 64;
	c.reorder = 24;
	for (unsigned s : seeds(ss)) {
		SCOPED_TRACE("seed " + std::to_string(s));
		SimResult r;

		Sim(c, s).run(&r);
		EXPECT_EQ(r.final_bad, 0u);
		EXPECT_EQ(r.last_bad, 0u);
	}
	with = run_many(c, ss);
	c.may_place = false;
	without = run_many(c, ss);
	EXPECT_EQ(without.final_bad + without.last_bad, 0u);
	printf("[ sim    ] one buffer: %llu placed, %llu copied twice; placing over unexecuted WRITEs: %llu placed, %llu copied twice\n",
	       (unsigned long long)with.placed,
	       (unsigned long long)with.recopies,
	       (unsigned long long)without.placed,
	       (unsigned long long)without.recopies);
	EXPECT_LT(with.recopies * 4, without.recopies);
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
