// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// MetaRoCE multipath: the path engine (mrxe_path) driving a real scoreboard
// (mrxe_sack) and reorder window (mrxe_reorder) over a simulated set of
// paths, each with a rate (serialisation time per packet), a drop-tail
// queue, a propagation delay, random loss and an optional outage (every
// packet dropped, the "black hole" of a failed link).  After every step:
// the scoreboard invariant (mrxe_sack_check, which also recounts the
// per-path in-flight tallies) and the path set invariant (mrxe_path_check);
// at the end every PSN was delivered exactly once.  Reported: per-path
// traffic shares per phase, DEAD detection and recovery times.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <queue>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "mrxe_path.h"
#include "mrxe_reorder.h"
#include "mrxe_sack.h"
#include "sim_seeds.h"
}

namespace {

constexpr u64 kUs = 1000, kMs = 1000 * kUs;

struct LinkCfg {
	u64 ser = 10 * kUs;	// serialisation time per packet (1/rate)
	u64 delay = 20 * kUs;	// propagation
	u32 qlimit = 128;	// drop-tail queue, packets
	double loss = 0;
	u64 down_from = 0, down_to = 0;	// black hole
};

struct PathSimCfg {
	u32 npkts = 20000;
	u32 isn = MRXE_PSN_MASK - 3000;	// crosses the 2^24 wrap
	u8 num_paths = 2;
	u16 base_port = 0xc123;
	std::vector<LinkCfg> links;	// links.size() distinct links
	// path -> link: the ECMP hash of the path's port; default i % links
	bool hash_ports = false;
	u64 gap = 1 * kUs;		// sender pacing (faster than any link)
	u64 ack_delay = 20 * kUs;
	// the QP's in-flight cap (IRN's BDP cap): the two links' buffers
	// (2 x qlimit) plus what is on the wire, as the device's default
	// window would be set for such a fabric
	u32 wnd = 256;
	std::vector<u64> marks;		// phase boundaries for the shares
	bool repath_off = false;	// the engine's re-pathing (collisions)
	bool hold = true;		// path windows hold new data back
					// (the module's path_hold default)
	// the ACK direction: an ACK carries the port of the data packet it
	// answers (the responder reflects the newest request's port) and
	// hashes onto one of rev_links reverse links; ACKs hashed onto
	// rev_down drop in [rev_down_from, rev_down_to) (0 links: no model)
	size_t rev_links = 0;
	u8 rev_down = 0;
	u64 rev_down_from = 0, rev_down_to = 0;
};

struct PathSimResult {
	std::vector<std::vector<u64>> sent;	// [phase][link] packets sent
	std::vector<std::vector<u64>> delivered;	// [phase][link]
	u64 end_ns = 0;
	u64 dead_ns = 0;	// first time a path was DEAD
	u64 revived_ns = 0;	// first time after dead_ns all were usable
	u64 probes = 0, deaths = 0, retransmits = 0, repaths = 0, reverts = 0;
	u64 retx_same_path = 0, retx_total = 0;
	u64 acks_dropped = 0;	// by the reverse black hole
	u64 longest_gap_ns = 0;	// longest time without a new delivery
};

struct Pkt {
	u32 psn;
	u64 abs;
	u8 link;
	u32 tsval;	// MRH tsval of this transmission (echoed)
	u16 port;	// UDP source port (reflected by its ACK)
};

struct Ev {
	u64 t, seq;
	bool is_ack;
	size_t idx;
	bool operator>(const Ev &o) const
	{
		return t != o.t ? t > o.t : seq > o.seq;
	}
};

class PathSim {
public:
	PathSim(const PathSimCfg &c, unsigned seed) : c_(c), rng_(seed)
	{
		struct mrxe_sack_cfg sc = {};
		struct mrxe_path_cfg pc = {};

		sc.rto_floor_ns = 1 * kMs;
		sc.rto_ceil_ns = 100 * kMs;
		sc.rto_init_ns = 2 * kMs;
		sc.min_rtt_win_ns = 10000 * kMs;
		sc.reo_persist = MRXE_SACK_REO_PERSIST_META;
		sc.wnd = c.wnd;
		mrxe_sack_init(&sb_, c.isn, &sc);
		mrxe_reorder_init(&rw_, c.isn);
		pc.num_paths = c.num_paths;
		pc.base_port = c.base_port;
		pc.cwnd_max = c.wnd;
		pc.dead_ns = 1 * kMs;
		pc.probe_ns = 2 * kMs;
		pc.probe_max_ns = 16 * kMs;
		pc.repath_off = c.repath_off;
		pc.hold = c.hold;
		mrxe_path_init(&ps_, &pc, 0);
		delivered_.assign(c.npkts, 0);
		busy_.assign(c.links.size(), 0);
		res_.sent.assign(c.marks.size() + 1,
				 std::vector<u64>(c.links.size(), 0));
		res_.delivered = res_.sent;
	}

	// a stand-in for ECMP: a hash of the port picks one of @links
	static u8 hash_link(u16 port, size_t links)
	{
		u32 h = port * 2654435761u;

		return (u8)((h >> 16) % links);
	}

	// the reverse direction's ECMP hash: another seed than the forward
	static u8 hash_rev_link(u16 port, size_t links)
	{
		u32 h = (port ^ 0x5bd1u) * 2246822519u;

		return (u8)((h >> 16) % links);
	}

	u8 link_of(u8 path)
	{
		if (!c_.hash_ports)
			return path % c_.links.size();
		return hash_link(ps_.p[path].port, c_.links.size());
	}

	size_t phase() const
	{
		size_t i = 0;

		while (i < c_.marks.size() && now_ >= c_.marks[i])
			i++;
		return i;
	}

	::testing::AssertionResult run(PathSimResult *out)
	{
		u64 next_send = 0, steps = 0;

		while (ndelivered_ < c_.npkts || mrxe_sack_outstanding(&sb_)) {
			if (++steps > 100ull * c_.npkts + 100000)
				return ::testing::AssertionFailure() << "no progress";
			if (next_send <= now_ && send_one()) {
				next_send = now_ + c_.gap;
				continue;
			}
			u64 t = UINT64_MAX;
			if (!q_.empty())
				t = q_.top().t;
			u64 tm = mrxe_sack_timer(&sb_, nullptr);
			if (tm && tm < t)
				t = tm;
			if (has_work() && next_send < t)
				t = next_send;
			// a dead path's probe time is an event too
			for (u8 i = 0; i < ps_.n; i++)
				if (ps_.p[i].state == MRXE_PST_DEAD &&
				    ps_.p[i].probe_at_ns > now_ &&
				    ps_.p[i].probe_at_ns < t && sent_new_ < c_.npkts)
					t = ps_.p[i].probe_at_ns;
			if (t == UINT64_MAX)
				return ::testing::AssertionFailure() << "deadlock";
			if (t > now_)
				now_ = t;
			if (!q_.empty() && q_.top().t <= now_) {
				Ev e = q_.top();
				q_.pop();
				auto r = e.is_ack ? on_ack(e.idx) : on_data(e.idx);
				if (!r)
					return r;
			} else if (tm && tm <= now_) {
				on_timer();
			}
			int ck = mrxe_sack_check(&sb_);
			if (ck)
				return ::testing::AssertionFailure() << "scoreboard check " << ck;
			ck = mrxe_path_check(&ps_);
			if (ck)
				return ::testing::AssertionFailure() << "path check " << ck;
			track_states();
		}
		for (u32 i = 0; i < c_.npkts; i++)
			if (delivered_[i] != 1)
				return ::testing::AssertionFailure() << "abs " << i << " delivered "
					<< (int)delivered_[i] << " times";
		res_.end_ns = now_;
		for (u8 i = 0; i < ps_.n; i++) {
			res_.probes += ps_.p[i].cnt.probes;
			res_.deaths += ps_.p[i].cnt.dead;
			res_.repaths += ps_.p[i].cnt.repaths;
			res_.reverts += ps_.p[i].cnt.reverts;
		}
		res_.retransmits = sb_.cnt.retransmits;
		*out = res_;
		return ::testing::AssertionSuccess();
	}

	void dump() const
	{
		for (u8 i = 0; i < ps_.n; i++) {
			const struct mrxe_path *p = &ps_.p[i];

			printf("[ pathsim]   path %u: st %u sent %llu retx %llu del %llu lost %llu "
			       "dead %llu probes %llu cuts %llu srtt %.3fms cwnd %u\n",
			       i, p->state, (unsigned long long)p->cnt.sent,
			       (unsigned long long)p->cnt.retx,
			       (unsigned long long)p->cnt.delivered,
			       (unsigned long long)p->cnt.lost,
			       (unsigned long long)p->cnt.dead,
			       (unsigned long long)p->cnt.probes,
			       (unsigned long long)p->cnt.cwnd_cuts, p->srtt_ns / 1e6,
			       p->cwnd >> MRXE_PATH_FP);
		}
		printf("[ pathsim]   taildrops %llu\n", (unsigned long long)taildrops_);
		printf("[ pathsim]   sack: rto %llu tlp %llu spurious %llu lost %llu\n",
		       (unsigned long long)sb_.cnt.rto, (unsigned long long)sb_.cnt.tlp,
		       (unsigned long long)sb_.cnt.spurious,
		       (unsigned long long)sb_.cnt.lost);
	}

	const struct mrxe_path_set &paths() const
	{
		return ps_;
	}

private:
	PathSimCfg c_;
	std::mt19937_64 rng_;
	struct mrxe_sack sb_;
	struct mrxe_reorder rw_;
	struct mrxe_path_set ps_;
	std::vector<u8> delivered_;
	std::vector<u64> busy_;	// link transmitter busy until
	u32 ndelivered_ = 0;
	u64 taildrops_ = 0;
	u64 sent_new_ = 0, now_ = 0, seq_ = 0, last_new_ = 0;
	bool probe_pending_ = false;
	u32 probe_psn_ = 0;
	const bool trace_ = getenv("PATH_SIM_TRACE") != nullptr;
	u8 tr_st_[MRXE_PATH_MAX] = {};
	u16 tr_port_[MRXE_PATH_MAX] = {};
	std::vector<Pkt> pkts_;
	std::vector<u32> acks_;	// index of the data packet acked
	std::vector<struct mrxe_sack_info> ack_si_;
	std::vector<u32> ack_tsecr_;
	std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> q_;
	PathSimResult res_;

	double uni()
	{
		return std::uniform_real_distribution<double>(0, 1)(rng_);
	}

	bool has_work()
	{
		return sb_.n_lost || probe_pending_ ||
		       (sent_new_ < c_.npkts && !mrxe_sack_full(&sb_) &&
			mrxe_path_room(&ps_, now_));
	}

	void track_states()
	{
		u32 dead = mrxe_path_count(&ps_, MRXE_PST_DEAD);

		if (trace_) {
			for (u8 i = 0; i < ps_.n; i++) {
				const struct mrxe_path *p = &ps_.p[i];

				if (p->state == tr_st_[i] && p->port == tr_port_[i])
					continue;
				printf("[ trace] %8.3fms path %u st %u->%u port %u rev %u probe_at %.3f rto %.3f\n",
				       now_ / 1e6, i, tr_st_[i], p->state, p->port,
				       c_.rev_links ? hash_rev_link(p->port, c_.rev_links) : 0,
				       p->probe_at_ns / 1e6, mrxe_sack_timer(&sb_, nullptr) / 1e6);
				tr_st_[i] = p->state;
				tr_port_[i] = p->port;
			}
		}

		if (dead && !res_.dead_ns)
			res_.dead_ns = now_;
		if (res_.dead_ns && !dead && !res_.revived_ns)
			res_.revived_ns = now_;
	}

	void xmit(u32 psn, u64 abs, u8 path)
	{
		u8 l = link_of(path);
		const LinkCfg &lk = c_.links[l];
		u64 start = busy_[l] > now_ ? busy_[l] : now_;

		res_.sent[phase()][l]++;
		if ((u64)(start - now_) / lk.ser >= lk.qlimit) {
			taildrops_++;
			return;		// tail drop
		}
		busy_[l] = start + lk.ser;
		if (uni() < lk.loss)
			return;
		if (now_ >= lk.down_from && now_ < lk.down_to)
			return;		// black hole
		pkts_.push_back({ psn, abs, l, mrxe_mrh_ts(now_), ps_.p[path].port });
		q_.push({ busy_[l] + lk.delay, seq_++, false, pkts_.size() - 1 });
	}

	u64 abs_of(u32 psn)
	{
		return (u64)mrxe_psn_diff(psn, c_.isn) & 0xffffff;
	}

	void retransmit(u32 psn)
	{
		u8 old = mrxe_sack_ent(&sb_, psn)->path;
		u8 path = mrxe_path_pick(&ps_, now_, old);

		res_.retx_total++;
		if (path == old)
			res_.retx_same_path++;
		EXPECT_EQ(mrxe_sack_on_retransmit(&sb_, psn, now_, path), 0);
		mrxe_path_on_send(&ps_, path, true, now_);
		xmit(psn, abs_of(psn), path);
	}

	bool send_one()
	{
		u32 psn;

		if (mrxe_sack_next_lost(&sb_, &psn)) {
			retransmit(psn);
			return true;
		}
		if (sent_new_ < c_.npkts && !mrxe_sack_full(&sb_) &&
		    mrxe_path_room(&ps_, now_)) {
			u8 path = mrxe_path_pick(&ps_, now_, MRXE_PATH_NONE);

			psn = mrxe_psn_add(c_.isn, (u32)sent_new_);
			EXPECT_EQ(mrxe_sack_on_send(&sb_, psn, now_, path, 1024), 0);
			mrxe_path_on_send(&ps_, path, false, now_);
			xmit(psn, sent_new_++, path);
			probe_pending_ = false;
			return true;
		}
		if (probe_pending_) {
			probe_pending_ = false;
			if (mrxe_sack_ent(&sb_, probe_psn_)->state == MRXE_SK_INFLIGHT &&
			    mrxe_psn_diff(probe_psn_, sb_.una) >= 0) {
				retransmit(probe_psn_);
				return true;
			}
		}
		return false;
	}

	::testing::AssertionResult on_data(size_t idx)
	{
		Pkt p = pkts_[idx];
		bool had = delivered_[p.abs] != 0;
		auto v = mrxe_reorder_accept(&rw_, p.psn);

		if (v == MRXE_RX_OUT_OF_WINDOW)
			return ::testing::AssertionFailure() << "PSN " << p.psn << " out of window";
		if (v == MRXE_RX_NEW) {
			if (had)
				return ::testing::AssertionFailure() << "duplicate accepted";
			delivered_[p.abs] = 1;
			ndelivered_++;
			if (now_ - last_new_ > res_.longest_gap_ns)
				res_.longest_gap_ns = now_ - last_new_;
			last_new_ = now_;
			res_.delivered[phase()][p.link]++;
		} else if (!had) {
			return ::testing::AssertionFailure() << "new PSN called duplicate";
		}
		struct mrxe_sack_info si;

		mrxe_reorder_sack(&rw_, &si, MRXE_SACK_MAX_BLOCKS);
		if (c_.rev_links &&
		    hash_rev_link(p.port, c_.rev_links) == c_.rev_down &&
		    now_ >= c_.rev_down_from && now_ < c_.rev_down_to) {
			res_.acks_dropped++;
			return ::testing::AssertionSuccess();
		}
		ack_si_.push_back(si);
		ack_tsecr_.push_back(p.tsval);
		q_.push({ now_ + c_.ack_delay, seq_++, true, ack_si_.size() - 1 });
		return ::testing::AssertionSuccess();
	}

	::testing::AssertionResult on_ack(size_t idx)
	{
		struct mrxe_sack_ack_res r;
		int ret = mrxe_sack_on_ack(&sb_, &ack_si_[idx],
					   mrxe_mrh_ts_ns(ack_tsecr_[idx], now_), now_, &r);

		if (ret)
			return ::testing::AssertionFailure() << "on_ack " << ret;
		mrxe_path_sync(&ps_, &sb_, now_);
		return ::testing::AssertionSuccess();
	}

	void on_timer()
	{
		u32 probe = 0;
		u32 ev = mrxe_sack_on_timer(&sb_, now_, &probe);

		mrxe_path_sync(&ps_, &sb_, now_);
		if (ev & MRXE_SACK_EV_PROBE) {
			probe_pending_ = true;
			probe_psn_ = probe;
		}
	}
};

double share(const std::vector<u64> &v, size_t i)
{
	u64 t = 0;

	for (u64 x : v)
		t += x;
	return t ? (double)v[i] / t : 0;
}

void print(const char *name, const PathSimResult &r)
{
	printf("[ pathsim] %-18s end=%.1fms gap=%.1fms deaths=%llu probes=%llu retx=%llu "
	       "repaths=%llu reverts=%llu "
	       "retx_same_path=%llu/%llu dead_at=%.2fms revived_at=%.2fms\n",
	       name, r.end_ns / 1e6, r.longest_gap_ns / 1e6,
	       (unsigned long long)r.deaths,
	       (unsigned long long)r.probes, (unsigned long long)r.retransmits,
	       (unsigned long long)r.repaths, (unsigned long long)r.reverts,
	       (unsigned long long)r.retx_same_path,
	       (unsigned long long)r.retx_total, r.dead_ns / 1e6,
	       r.revived_ns / 1e6);
	for (size_t ph = 0; ph < r.delivered.size(); ph++) {
		printf("[ pathsim]   phase %zu delivered share:", ph);
		for (size_t l = 0; l < r.delivered[ph].size(); l++)
			printf(" %.3f", share(r.delivered[ph], l));
		printf("  sent:");
		for (size_t l = 0; l < r.sent[ph].size(); l++)
			printf(" %llu", (unsigned long long)r.sent[ph][l]);
		printf("\n");
	}
}

std::vector<unsigned> seeds()
{
	return sim_seeds({ 1, 2, 3 }, 2);
}

TEST(PathPort, DerivationSpreadsAndKeepsPath0)
{
	std::vector<u16> seen;

	EXPECT_EQ(mrxe_path_port(0xc555, 0, 0), 0xc555);
	for (u8 i = 0; i < MRXE_PATH_MAX; i++)
		for (u8 g = 0; g < 4; g++) {
			u16 p = mrxe_path_port(0xc555, i, g);

			if (i || g) {
				EXPECT_GE(p, 0xc000);
			}
			seen.push_back(p);
		}
	std::sort(seen.begin(), seen.end());
	// 64 values from a 14-bit space: at most a couple of collisions
	EXPECT_GE(std::unique(seen.begin(), seen.end()) - seen.begin(), 60);
	EXPECT_NE(mrxe_path_port(0xc555, 1, 0), mrxe_path_port(0xc556, 1, 0));
}

// The formula wire-format.rst gives, computed independently.
TEST(PathPort, MatchesTheDocumentedFormula)
{
	auto fmix32 = [](uint32_t h) {
		h ^= h >> 16;
		h *= 0x85ebca6bu;
		h ^= h >> 13;
		h *= 0xc2b2ae35u;
		h ^= h >> 16;
		return h;
	};
	std::mt19937 rng(11);

	for (int k = 0; k < 1000; k++) {
		uint16_t base = (uint16_t)rng();
		uint8_t i = (uint8_t)(rng() % MRXE_PATH_MAX), g = (uint8_t)rng();

		if (!i && !g)
			continue;
		uint32_t want = 0xc000 |
				(fmix32((uint32_t)base << 16 ^ (uint32_t)i << 8 ^ g) & 0x3fff);
		ASSERT_EQ(mrxe_path_port(base, i, g), want);
	}
}

TEST(PathSet, InitPortsDistinctAndRoundRobinWhenIdle)
{
	struct mrxe_path_set ps;
	struct mrxe_path_cfg pc = {};
	std::mt19937 rng(7);

	for (int n = 1; n <= MRXE_PATH_MAX; n++) {
		pc.num_paths = (u8)n;
		pc.base_port = (u16)(0xc000 | (rng() & 0x3fff));
		mrxe_path_init(&ps, &pc, 0);
		ASSERT_EQ(mrxe_path_check(&ps), 0) << n;
		EXPECT_EQ(ps.p[0].port, pc.base_port);
		// equal, empty paths: one packet each before any repeats
		std::vector<int> hits(n, 0);
		for (int k = 0; k < n; k++)
			hits[mrxe_path_pick(&ps, 0, MRXE_PATH_NONE)]++;
		for (int k = 0; k < n; k++)
			EXPECT_EQ(hits[k], 1) << n;
	}
	pc.num_paths = 0;
	mrxe_path_init(&ps, &pc, 0);
	EXPECT_EQ(ps.n, 1);
	pc.num_paths = 200;
	mrxe_path_init(&ps, &pc, 0);
	EXPECT_EQ(ps.n, MRXE_PATH_MAX);
}

// cfg.hold: a new packet waits while every usable path's window is full;
// one path, hold off, a due probe, or every path DEAD never wait.
TEST(PathSet, RoomHoldsNewDataOnlyWhenEveryWindowIsFull)
{
	struct mrxe_path_set ps;
	struct mrxe_path_cfg pc = {};
	const u64 now = 1000000000ull;

	pc.num_paths = 3;
	pc.base_port = 0xd200;
	pc.cwnd_init = 4;
	pc.hold = true;
	mrxe_path_init(&ps, &pc, 0);
	EXPECT_TRUE(mrxe_path_room(&ps, now));
	for (int i = 0; i < 3; i++)
		ps.p[i].inflight = 4;
	EXPECT_FALSE(mrxe_path_room(&ps, now));
	ps.p[1].inflight = 3;
	EXPECT_TRUE(mrxe_path_room(&ps, now));
	// a SUSPECT path has the minimum window (2)
	ps.p[1].state = MRXE_PST_SUSPECT;
	EXPECT_FALSE(mrxe_path_room(&ps, now));
	ps.p[1].inflight = 1;
	EXPECT_TRUE(mrxe_path_room(&ps, now));
	ps.p[1].inflight = 3;
	// a DEAD path: no room of its own, but a due probe goes out
	ps.p[2].state = MRXE_PST_DEAD;
	ps.p[2].probe_at_ns = now + 1;
	EXPECT_FALSE(mrxe_path_room(&ps, now));
	ps.p[2].probe_at_ns = now - 1;
	EXPECT_TRUE(mrxe_path_room(&ps, now));
	ps.p[2].probe_out = true;
	EXPECT_FALSE(mrxe_path_room(&ps, now));
	// every path DEAD (no probe due): the pick spreads over all of them
	ps.p[0].state = ps.p[1].state = MRXE_PST_DEAD;
	ps.p[0].probe_at_ns = ps.p[1].probe_at_ns = now + 1;
	EXPECT_TRUE(mrxe_path_room(&ps, now));
	// without hold, or with one path, nothing waits
	pc.hold = false;
	mrxe_path_init(&ps, &pc, 0);
	for (int i = 0; i < 3; i++)
		ps.p[i].inflight = 100;
	EXPECT_TRUE(mrxe_path_room(&ps, now));
	pc.hold = true;
	pc.num_paths = 1;
	mrxe_path_init(&ps, &pc, 0);
	ps.p[0].inflight = 100;
	EXPECT_TRUE(mrxe_path_room(&ps, now));
}

// RFC 7661 window validation: deliveries grow a path's window only while
// the path had at least half of it in flight.  A path the QP keeps far
// below its window (the QP's own window or rate is the limit) must not run
// ahead, or the lowest-fill pick would hand it every packet later.
TEST(PathSet, WindowGrowsOnlyWhenItLimits)
{
	struct mrxe_path_set ps;
	struct mrxe_path_cfg pc = {};
	struct mrxe_sack sb;
	u64 now = 1000000;

	memset(&sb, 0, sizeof(sb));
	pc.num_paths = 2;
	pc.base_port = 0xd300;
	pc.cwnd_init = 16;
	pc.repath_off = true;
	mrxe_path_init(&ps, &pc, 0);
	// 4 in flight of 16: 1000 deliveries leave the window alone
	for (int k = 0; k < 1000; k++) {
		now += 1000;
		sb.path[0].delivered += 1;
		sb.path[0].inflight = 4;
		mrxe_path_sync(&ps, &sb, now);
	}
	EXPECT_EQ(ps.p[0].cwnd, 16u << MRXE_PATH_FP);
	// a full window slow-starts (+1 per delivery below ssthresh)
	for (int k = 0; k < 10; k++) {
		now += 1000;
		sb.path[0].delivered += 1;
		sb.path[0].inflight = ps.p[0].cwnd >> MRXE_PATH_FP;
		mrxe_path_sync(&ps, &sb, now);
	}
	EXPECT_EQ(ps.p[0].cwnd, 26u << MRXE_PATH_FP);
	// half the window in flight (13 of 26) counts as limited
	now += 1000;
	sb.path[0].delivered += 1;
	sb.path[0].inflight = 12;
	mrxe_path_sync(&ps, &sb, now);
	EXPECT_EQ(ps.p[0].cwnd, 27u << MRXE_PATH_FP);
}

TEST(PathSet, RetransmissionAvoidsTheLosingPath)
{
	struct mrxe_path_set ps;
	struct mrxe_path_cfg pc = {};

	pc.num_paths = 3;
	pc.base_port = 0xd000;
	mrxe_path_init(&ps, &pc, 0);
	for (int k = 0; k < 30; k++)
		EXPECT_NE(mrxe_path_pick(&ps, 0, 1), 1);
	pc.num_paths = 1;
	mrxe_path_init(&ps, &pc, 0);
	EXPECT_EQ(mrxe_path_pick(&ps, 0, 0), 0);
}

// A DEAD path whose probe is due carries a retransmission only when no
// path is ACTIVE or CONGESTED (then nothing is acked, the window is full
// and the RTO's retransmissions are all there is to send); otherwise
// retransmissions go to healthy paths and new data carries the probe.
TEST(PathSet, DueProbeRidesRetransmissionOnlyWhenNoPathIsHealthy)
{
	struct mrxe_path_set ps;
	struct mrxe_path_cfg pc = {};
	const u64 now = 1000000000ull;

	pc.num_paths = 3;
	pc.base_port = 0xd100;
	mrxe_path_init(&ps, &pc, 0);
	ps.p[0].state = MRXE_PST_SUSPECT;	// the PSN was last sent here
	ps.p[1].state = MRXE_PST_SUSPECT;
	ps.p[2].state = MRXE_PST_DEAD;
	ps.p[2].probe_at_ns = now - 1;		// due
	ps.p[2].probe_out = false;
	EXPECT_EQ(mrxe_path_pick(&ps, now, 0), 2);
	mrxe_path_on_send(&ps, 2, true, now);
	EXPECT_TRUE(ps.p[2].probe_out);
	// one probe at a time: the next retransmission takes a SUSPECT path
	EXPECT_NE(mrxe_path_pick(&ps, now, 0), 2);
	// not due yet: not probed
	ps.p[2].probe_out = false;
	ps.p[2].probe_at_ns = now + 1;
	EXPECT_NE(mrxe_path_pick(&ps, now, 0), 2);
	// a healthy path: retransmissions go there, the probe waits for data
	ps.p[2].probe_at_ns = now - 1;
	ps.p[1].state = MRXE_PST_ACTIVE;
	for (int k = 0; k < 10; k++)
		EXPECT_EQ(mrxe_path_pick(&ps, now, 0), 1);
	EXPECT_EQ(mrxe_path_pick(&ps, now, MRXE_PATH_NONE), 2);
	// the probe never takes the PSN's own path back
	ps.p[1].state = MRXE_PST_SUSPECT;
	ps.p[0].state = MRXE_PST_DEAD;
	ps.p[0].probe_at_ns = now - 1;
	ps.p[2].state = MRXE_PST_SUSPECT;
	EXPECT_NE(mrxe_path_pick(&ps, now, 0), 0);
}

// A randomized walk of the public API: invariants hold whatever happens.
TEST(PathSet, RandomEventsKeepInvariant)
{
	std::mt19937_64 rng(42);

	for (int run = 0; run < 50; run++) {
		struct mrxe_path_set ps;
		struct mrxe_path_cfg pc = {};
		struct mrxe_sack sb;
		u64 now = 0;

		memset(&sb, 0, sizeof(sb));
		pc.num_paths = (u8)(1 + rng() % MRXE_PATH_MAX);
		pc.base_port = (u16)rng();
		pc.probe_ns = 1000;
		pc.dead_ns = 500;
		mrxe_path_init(&ps, &pc, 0);
		for (int k = 0; k < 5000; k++) {
			now += rng() % 300;
			u8 p = mrxe_path_pick(&ps, now, rng() % 3 ? MRXE_PATH_NONE :
					     (u8)(rng() % 20));
			ASSERT_LT(p, ps.n);
			mrxe_path_on_send(&ps, p, rng() & 1, now);
			u8 q = (u8)(rng() % ps.n);
			if (rng() % 3)
				sb.path[q].delivered += rng() % 4;
			else
				sb.path[q].lost += rng() % 4;
			sb.path[q].inflight = rng() % 64;
			sb.path[q].rack_valid = true;
			sb.path[q].rack_xmit_ns = now;
			sb.path[q].rack_rtt_ns = rng() % 100000;
			mrxe_path_sync(&ps, &sb, now);
			ASSERT_EQ(mrxe_path_check(&ps), 0);
		}
	}
}

LinkCfg link(u64 ser_us, u64 delay_us = 20)
{
	LinkCfg l;

	l.ser = ser_us * kUs;
	l.delay = delay_us * kUs;
	return l;
}

TEST(PathSim, EqualLinksShareEvenly)
{
	for (int n : { 2, 4 }) {
		for (unsigned s : seeds()) {
			PathSimCfg c;
			PathSimResult r;

			c.num_paths = (u8)n;
			c.links.assign(n, link(10));
			PathSim sim(c, s);
			ASSERT_TRUE(sim.run(&r)) << "seed " << s;
			for (int l = 0; l < n; l++) {
				EXPECT_NEAR(share(r.delivered[0], l), 1.0 / n, 0.1 / n)
					<< "paths " << n << " seed " << s;
			}
			// n links of equal rate: about n times one link's rate
			EXPECT_LT(r.end_ns, (u64)c.npkts * 10 * kUs / n * 13 / 10);
			if (s == 1)
				print(n == 2 ? "equal-2" : "equal-4", r);
		}
	}
}

TEST(PathSim, ShareFollowsCapacity)
{
	for (unsigned s : seeds()) {
		PathSimCfg c;
		PathSimResult r;

		c.num_paths = 2;
		c.links = { link(10), link(30) };	// 3:1
		PathSim sim(c, s);
		ASSERT_TRUE(sim.run(&r)) << "seed " << s;
		EXPECT_NEAR(share(r.delivered[0], 0), 0.75, 0.08) << "seed " << s;
		// queues of different depth: the cross-path RACK rule must not
		// take the slow path's growing RTT for loss (no retransmission
		// storm, no death).  With path windows that hold (the default)
		// the slow path's AIMD window probes its 128-packet queue and
		// loses what overflows it, as a TCP flow does: 290 of 20000
		// (1.5%) here; without hold the QP's 256-packet window never
		// filled the queues (under 1%).
		EXPECT_LT(r.retransmits, c.npkts * 2 / 100) << "seed " << s;
		EXPECT_EQ(r.deaths, 0u) << "seed " << s;
		// 4/3 of the fast link's rate, within 20%
		EXPECT_LT(r.end_ns, (u64)c.npkts * 10 * kUs * 3 / 4 * 12 / 10);
		if (s == 1)
			print("capacity-3:1", r);
	}
}

TEST(PathSim, LossyPathGetsLess)
{
	for (unsigned s : seeds()) {
		PathSimCfg c;
		PathSimResult r;

		c.num_paths = 2;
		c.links = { link(10), link(10) };
		c.links[1].loss = 0.05;
		PathSim sim(c, s);
		ASSERT_TRUE(sim.run(&r)) << "seed " << s;
		// With windows that hold, each link is used up to what it
		// delivers: a link that loses 5% still delivers 95% of its
		// rate, so the lossy path gets less, but only a little less
		// (0.44-0.46 here; 0.41-0.43 when the windows only split
		// traffic)
		EXPECT_LT(share(r.delivered[0], 1), 0.47) << "seed " << s;
		if (s == 1)
			print("loss-5%", r);
	}
}

TEST(PathSim, LongerDelayPathGetsLess)
{
	for (unsigned s : seeds()) {
		PathSimCfg c;
		PathSimResult r;

		c.num_paths = 2;
		c.links = { link(10), link(10, 2000) };	// +2 ms one way
		c.links[0].qlimit = c.links[1].qlimit = 256;
		PathSim sim(c, s);
		ASSERT_TRUE(sim.run(&r)) << "seed " << s;
		EXPECT_LT(share(r.delivered[0], 1), 0.45) << "seed " << s;
		if (s == 1) {
			print("delay+2ms", r);
			sim.dump();
		}
	}
}

// One of n links black-holed from 20 to 60 ms, then restored.
TEST(PathSim, BlackHoleDeadThenBack)
{
	for (int n : { 2, 4 }) {
		for (unsigned s : seeds()) {
			PathSimCfg c;
			PathSimResult r;

			c.npkts = 30000;
			c.num_paths = (u8)n;
			c.links.assign(n, link(10));
			c.links[1].down_from = 20 * kMs;
			c.links[1].down_to = 60 * kMs;
			// phases: before, detection, dead, after restore+probe, end
			c.marks = { 20 * kMs, 30 * kMs, 60 * kMs, 75 * kMs };
			PathSim sim(c, s);
			ASSERT_TRUE(sim.run(&r)) << "n " << n << " seed " << s;
			ASSERT_GT(r.dead_ns, 20 * kMs) << "n " << n << " seed " << s;
			// detected within 10 ms (the dead_ns/SRTT rule plus RACK)
			EXPECT_LT(r.dead_ns, 30 * kMs) << "seed " << s;
			// while dead: only probes (sent, not delivered) on link 1
			EXPECT_LT(share(r.sent[2], 1), 0.01) << "n " << n << " seed " << s;
			// back after the restore, within a probe backoff cap
			EXPECT_GT(r.revived_ns, 60 * kMs);
			EXPECT_LT(r.revived_ns, 60 * kMs + 40 * kMs) << "seed " << s;
			// and it carries a real share again in the last phase
			ASSERT_EQ(r.delivered.size(), 5u);
			EXPECT_GT(share(r.delivered[4], 1), 0.5 / n) << "n " << n << " seed " << s;
			if (s == 1)
				print(n == 2 ? "blackhole-2" : "blackhole-4", r);
		}
	}
}

// 20000 packets, 4 paths by port hash over 2 equal links
PathSimCfg four_paths_two_links()
{
	PathSimCfg c;

	c.npkts = 20000;
	c.num_paths = 4;
	c.hash_ports = true;
	c.links.assign(2, link(10));
	return c;
}

// The first base port from a seed-chosen start whose @n paths all hash
// onto link 1 of 2 (forward, or with @rev the ACK direction's hash).
u16 base_all_on_link1(u8 n, unsigned seed, bool rev)
{
	struct mrxe_path_set ps;
	struct mrxe_path_cfg pc = {};

	pc.num_paths = n;
	for (u16 base = 0xc000 + (u16)(seed % 4096);; base++) {
		bool all = true;

		pc.base_port = base;
		mrxe_path_init(&ps, &pc, 0);
		for (u8 i = 0; i < n; i++)
			all &= (rev ? PathSim::hash_rev_link(ps.p[i].port, 2) :
				      PathSim::hash_link(ps.p[i].port, 2)) == 1;
		if (all)
			return base;
	}
}

// Every path's port hashes onto the link that is black-holed (for good,
// from 20 ms): no path delivers, an RTO marks their packets lost, they go
// DEAD and each re-probe draws a fresh port; one that lands on the live
// link revives and carries the transfer to the end.
TEST(PathSim, AllPathsOnTheDeadLinkReroll)
{
	for (unsigned s : seeds()) {
		PathSimCfg c = four_paths_two_links();
		PathSimResult r;

		c.links[1].down_from = 20 * kMs;
		c.links[1].down_to = 100000 * kMs;
		c.marks = { 20 * kMs, 80 * kMs };
		// a base port whose four paths all hash onto link 1
		c.base_port = base_all_on_link1(c.num_paths, s, false);
		PathSim sim(c, s);
		ASSERT_TRUE(sim.run(&r)) << "seed " << s;
		EXPECT_GE(r.deaths, 4u) << "seed " << s;
		// after the first 60 ms of the black hole link 0 carries it all
		ASSERT_EQ(r.delivered.size(), 3u);
		EXPECT_GT(share(r.delivered[2], 0), 0.99) << "seed " << s;
		EXPECT_GT(r.delivered[2][0], c.npkts / 2) << "seed " << s;
		if (s == 1)
			print("all-on-dead-link", r);
	}
}

// The ACK direction black-holed: every path's ACKs hash onto reverse link
// 1, which drops everything from 20 ms on, while the forward links work.
// The requester hears nothing, its RTO marks the window lost, the paths go
// DEAD and re-roll; a fresh port whose ACKs take reverse link 0 revives
// its path.  Its ACKs then carry the cumulative and selective state of
// every path (the forward links deliver all of them), so the paths not
// yet dead need not die: how many die depends on the timing (seed
// 3610684010: 2 of 4, once a due probe could ride a retransmission and
// revive a path sooner), so the test asks for at least one death and the
// revival, not for four.  While every path is DEAD the re-probes must
// spread over the paths' fresh ports (not all ride the one that died
// first): the stall is bounded by a few RTOs and probe backoffs, not by
// luck.
TEST(PathSim, ReverseBlackHoleAllPaths)
{
	for (unsigned s : seeds()) {
		PathSimCfg c = four_paths_two_links();
		PathSimResult r;

		c.rev_links = 2;
		c.rev_down = 1;
		c.rev_down_from = 20 * kMs;
		c.rev_down_to = 100000 * kMs;
		c.marks = { 20 * kMs };
		c.repath_off = true;	// the premise: the ports of 20 ms
		c.base_port = base_all_on_link1(c.num_paths, s, true);
		PathSim sim(c, s);
		ASSERT_TRUE(sim.run(&r)) << "seed " << s;
		EXPECT_GT(r.acks_dropped, 0u) << "seed " << s;
		EXPECT_GE(r.deaths, 1u) << "seed " << s;
		EXPECT_GT(r.revived_ns, r.dead_ns) << "seed " << s;
		// RTO ceiling 100 ms, probe backoff cap 16 ms: riding one dead
		// path reached the ceiling (102 ms, seeds 1 and 2); spread over
		// all (and a due probe riding the RTO retransmissions), the
		// longest gap over seeds 1-4096 was 51 ms
		EXPECT_LT(r.longest_gap_ns, 80 * kMs) << "seed " << s;
		if (s == 1 || getenv("PATH_SIM_ALL") || r.longest_gap_ns >= 80 * kMs) {
			print("reverse-black-hole", r);
			sim.dump();
		}
	}
}

// The first base port from @from whose paths hash onto the links with
// exactly the per-link path counts @want (sorted, largest first).
u16 base_with_spread(u8 n, size_t links, std::vector<int> want, u16 from)
{
	struct mrxe_path_set ps;
	struct mrxe_path_cfg pc = {};

	pc.num_paths = n;
	for (u32 b = from; b < from + 16384u; b++) {
		std::vector<int> cnt(links, 0);

		pc.base_port = (u16)(0xc000 | (b & 0x3fff));
		mrxe_path_init(&ps, &pc, 0);
		for (u8 i = 0; i < n; i++)
			cnt[PathSim::hash_link(ps.p[i].port, links)]++;
		std::sort(cnt.rbegin(), cnt.rend());
		if (cnt == want)
			return pc.base_port;
	}
	ADD_FAILURE() << "no base port with that spread";
	return 0xc123;
}

// ECMP collisions without any failure: the hash puts several paths on one
// link and leaves another unused.  Unequal shares ({2,1,1,0}, {3,1,0,0})
// are found by the imbalance rule, an even split of fewer links
// ({2,2,0,0}, and 2 paths on 1 of 2 links) only by exploring.  With
// re-pathing every link carries its share after the first 150 ms; without
// it (the same seed and ports) a link stays unused, which shows that the
// collision is real.
TEST(PathSim, CollidedPathsSpreadOverLinks)
{
	struct Case {
		u8 paths;
		size_t links;
		std::vector<int> spread;
	};
	const Case cases[] = {
		{ 4, 4, { 2, 1, 1, 0 } },
		{ 4, 4, { 3, 1, 0, 0 } },
		{ 4, 4, { 2, 2, 0, 0 } },
		{ 2, 2, { 2, 0 } },
	};

	for (const Case &k : cases) {
		for (unsigned s : { 1u, 2u, 3u }) {
			PathSimCfg c;
			PathSimResult on, off;
			std::string name = std::to_string(k.paths) + " paths {";

			for (int x : k.spread)
				name += std::to_string(x) + ",";
			name += "} seed " + std::to_string(s);
			c.npkts = 60000 * (u32)k.links;
			c.num_paths = k.paths;
			c.hash_ports = true;
			c.links.assign(k.links, link(10));
			c.marks = { 150 * kMs };
			c.base_port = base_with_spread(k.paths, k.links, k.spread,
						       (u16)(s * 977));
			PathSim a(c, s);
			ASSERT_TRUE(a.run(&on)) << name;
			c.repath_off = true;
			PathSim b(c, s);
			ASSERT_TRUE(b.run(&off)) << name;
			double least = 1;

			for (size_t l = 0; l < k.links; l++) {
				EXPECT_GT(share(on.delivered[1], l), 0.6 / k.links)
					<< name << " link " << l;
				least = (std::min)(least, share(off.delivered[1], l));
			}
			EXPECT_LT(least, 0.01) << name << ": no collision without re-pathing";
			// within 15% of every link's full rate (finding an even split costs
			// an exploration or two)
			EXPECT_LT(on.end_ns, (u64)c.npkts * 10 * kUs / k.links * 23 / 20)
				<< name;
			EXPECT_GT(on.repaths, 0u) << name;
			if (s == 1 || ::testing::Test::HasFailure()) {
				print(("collide " + name).c_str(), on);
				print(("no-repath " + name).c_str(), off);
			}
		}
	}
}

// How long a collision takes to repair, in re-pathing epochs.  With L
// links a fresh port finds the empty link with probability about 1/L, so
// a collided path may need several re-rolls; each costs repath_strikes
// epochs to judge plus its hold.  In the lab (SRTT ~90 ms, epochs ~360 ms)
// every epoch is a third of a second, so the hold schedule decides whether
// a 20 s transfer runs collided for most of its life.  5 ms phases; the
// repair time is the start of the first phase in which every link carried
// at least 0.6/L of the deliveries; reported in epochs (4 x the measured
// SRTT).
TEST(PathSim, CollisionRepairTime)
{
	const std::vector<std::vector<int>> spreads = { { 3, 1, 0, 0 }, { 2, 1, 1, 0 },
							 { 2, 2, 0, 0 } };
	std::vector<double> epochs;
	double worst = 0;
	unsigned unrepaired = 0;

	for (const auto &sp : spreads) {
		for (unsigned s = 1; s <= (unsigned)(getenv("MRXE_REPAIR_SEEDS") ? atoi(getenv("MRXE_REPAIR_SEEDS")) : 6); s++) {
			PathSimCfg c;
			PathSimResult r;
			const size_t L = 4, nphase = 80;
			const u64 ph = 5 * kMs;

			c.npkts = 4 * 100 * 400;	// 400 ms at 4 x 100 kpps
			c.num_paths = 4;
			c.hash_ports = true;
			c.links.assign(L, link(10));
			for (size_t m = 1; m < nphase; m++)
				c.marks.push_back(m * ph);
			c.base_port = base_with_spread(4, L, sp, (u16)(s * 1231 + sp[0] * 7));
			PathSim sim(c, s);
			ASSERT_TRUE(sim.run(&r));
			size_t first = r.delivered.size();
			for (size_t m = 0; m + 1 < r.delivered.size() && first == r.delivered.size(); m++) {
				bool ok = true;

				for (size_t l = 0; l < L; l++)
					ok &= share(r.delivered[m], l) >= 0.6 / L;
				if (ok)
					first = m;
			}
			u64 srtt = 0;
			for (u8 i = 0; i < 4; i++)
				srtt = (std::max)(srtt, sim.paths().p[i].srtt_ns);
			double ep = 4.0 * (double)(srtt ? srtt : kMs);
			double t = first < r.delivered.size() ? (double)(first * ph) : (double)r.end_ns;

			unrepaired += first == r.delivered.size();
			epochs.push_back(t / ep);
			worst = (std::max)(worst, t / ep);
			printf("  repair {%d,%d,%d,%d} seed %u: %.0f ms, %.1f epochs, %llu repaths\n",
			       sp[0], sp[1], sp[2], sp[3], s, t / kMs, t / ep,
			       (unsigned long long)r.repaths);
		}
	}
	std::sort(epochs.begin(), epochs.end());
	double med = epochs[epochs.size() / 2];
	printf("collision repair: median %.1f epochs, worst %.1f (%zu runs)\n", med, worst,
	       epochs.size());
	// 2026-12-02, 60 runs: 3 strikes median 13.8 epochs, 2 strikes 7.8.
	// 2026-12-04, 18 runs: path windows that hold (the default) 13.7
	// (35 ms; 9.8 epochs / 25 ms without hold): a re-rolled path has to
	// grow its own window on the link it found, where before it took
	// the QP's spare window at once.  In the lab hold still won: 4 paths
	// on 4 links 3.72x one path against 3.49x without (bench/multipath.sh)
	EXPECT_LT(med, 16.0);
	EXPECT_EQ(unrepaired, 0u);
}

// Paths already spread one per link: exploring costs little (most tries
// are undone, the interval backs off) and nothing else moves.
TEST(PathSim, SpreadPathsStayCheap)
{
	for (unsigned s : { 1u, 2u, 3u }) {
		PathSimCfg c;
		PathSimResult on, off;

		c.npkts = 240000;
		c.num_paths = 4;
		c.hash_ports = true;
		c.links.assign(4, link(10));
		c.base_port = base_with_spread(4, 4, { 1, 1, 1, 1 }, (u16)(s * 977));
		PathSim a(c, s);
		ASSERT_TRUE(a.run(&on)) << "seed " << s;
		c.repath_off = true;
		PathSim b(c, s);
		ASSERT_TRUE(b.run(&off)) << "seed " << s;
		EXPECT_EQ(off.repaths, 0u);
		EXPECT_LT(on.end_ns, off.end_ns * 21 / 20) << "seed " << s;
		EXPECT_LT(on.repaths, 12u) << "seed " << s;
		if (s == 1)
			print("spread-4", on);
	}
}

TEST(PathSim, OnePathNeverDead)
{
	PathSimCfg c;
	PathSimResult r;

	c.npkts = 5000;
	c.num_paths = 1;
	c.links = { link(10) };
	c.links[0].down_from = 10 * kMs;
	c.links[0].down_to = 20 * kMs;
	PathSim sim(c, 5);
	ASSERT_TRUE(sim.run(&r));
	EXPECT_EQ(r.deaths, 0u);
	EXPECT_EQ(sim.paths().p[0].port, c.base_port);
}

TEST(PathSim, RetransmissionsPreferAnotherPath)
{
	PathSimCfg c;
	PathSimResult r;

	c.num_paths = 4;
	c.links.assign(4, link(10));
	for (auto &l : c.links)
		l.loss = 0.02;
	PathSim sim(c, 9);
	ASSERT_TRUE(sim.run(&r));
	ASSERT_GT(r.retx_total, 100u);
	EXPECT_LT(r.retx_same_path, r.retx_total / 20);
	print("retx-4x2%", r);
}

} // namespace


// Path windows that hold new data back (cfg.hold, the module's default):
// 4 paths on 4 equal links with shallow drop-tail queues (40 packets)
// behind a window of 1024 packets (no ECN in the fabric).  Without hold
// the QP keeps its whole window in flight and the queues overflow: the
// sender resends about as many packets as it sends new ones, which costs
// a soft device CPU time it would need for goodput.  With hold each path's
// AIMD window keeps its queue near full instead: fewer retransmissions,
// no slower finish, every PSN still delivered once (run() checks).
TEST(PathSim, HoldCutsRetransmissionsOnShallowQueues)
{
	for (unsigned s : seeds()) {
		PathSimResult off, on;
		PathSimCfg c;

		c.num_paths = 4;
		c.npkts = 40000;
		c.links.assign(4, link(10));
		for (auto &l : c.links)
			l.qlimit = 40;
		c.wnd = 1024;
		c.hold = false;
		{
			PathSim sim(c, s);
			ASSERT_TRUE(sim.run(&off)) << "seed " << s;
		}
		c.hold = true;
		{
			PathSim sim(c, s);
			ASSERT_TRUE(sim.run(&on)) << "seed " << s;
		}
		EXPECT_LT(on.retransmits * 10, off.retransmits * 6) << "seed " << s;
		EXPECT_LE(on.end_ns, off.end_ns * 105 / 100) << "seed " << s;
		if (s == 1) {
			print("hold-off-q40", off);
			print("hold-on-q40", on);
		}
	}
}
