// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
// mrxe-fabric: an ns-3 (3.37) packet-level model of a two-tier leaf-spine
// fabric of RoCEv2 NICs whose transport logic is mrxe's own pure-C engines
// (drivers/proto/, the files the kernel module compiles):
//
//   standard RoCEv2  go-back-N (IBA 9.7.5.1.4: the responder NAKs the first
//                    PSN sequence error and drops what follows), one UDP
//                    source port per QP, DCQCN (mrxe_dcqcn.c: RP, NP CNP
//                    pacing, token-bucket pacer), RTO from mrxe_rtt.c,
//                    retry_cnt 7 (then the QP is in error)
//   MetaRoCE         SACK scoreboard + RACK-TLP (mrxe_sack.c), receiver
//                    reorder window (mrxe_reorder.c), ACKs carrying a
//                    SACKETH built and parsed by mrxe_wire.c, per-packet
//                    path scheduler over several source ports (mrxe_path.c),
//                    the MetaRoCE ECN reaction (mrxe_ecn_cc.c) + the pacer
//
// ns-3 provides the event scheduler, packets, point-to-point links (rate,
// delay, device queue).  The switches are a small model here: ECMP over
// the uplinks by a hash of the 5-tuple (src, dst, UDP sport, dport, proto)
// with a per-switch seed, RED-style ECN marking on the instantaneous egress
// queue (Kmin/Kmax/Pmax, as DCQCN's switch configuration), tail drop at a
// per-port buffer limit (no PFC), and per-port fault injection (black hole
// = gray link failure, random loss).  See Documentation/simulation.rst.
//
// One run = one (transport, scenario, workload, seed); the results are one
// CSV row on stdout plus per-message and per-link rows (--fct, --links).
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "mrxe_dcqcn.h"
#include "mrxe_ecn_cc.h"
#include "mrxe_path.h"
#include "mrxe_reorder.h"
#include "mrxe_sack.h"
#include "mrxe_wire.h"
}
// mrxe_shim.h's userspace min()/max() macros would break std::min/std::max
#undef min
#undef max

using namespace ns3;

namespace {

constexpr uint64_t kUs = 1000, kMs = 1000 * kUs;
constexpr uint32_t kPayload = 1024;	// RoCE MTU 1024
constexpr uint16_t kRoceDport = 4791;	// IBA A17.4.2
// header bytes beyond RoceHeader's own, so the wire sizes are RoCEv2's:
// Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 = 58 (+ MRH 20 for MetaRoCE;
// ACK + AETH 4; CNP + 16 reserved bytes)
constexpr uint32_t kHdrFixed = 28;	// RoceHeader without the SACKETH
constexpr uint32_t kPadData = 58 - kHdrFixed;
constexpr uint32_t kPadAck = 62 - kHdrFixed;
constexpr uint32_t kPadCnp = 74 - kHdrFixed;

struct Cfg {
	std::string transport = "meta";	// std | meta
	std::string scenario = "ecmp";	// ecmp | fail | lossy
	std::string workload = "ring";	// ring | alltoall | incast | perm
	unsigned seed = 1;
	int leaves = 4, spines = 4, hosts = 4;	// hosts per leaf
	uint64_t bytes = 4 << 20;	// per host (ring: the AllReduce buffer)
	double gbps = 100;
	uint64_t link_delay_ns = 500;
	uint64_t kmin = 100000, kmax = 400000;	// bytes
	double pmax = 0.2;
	uint64_t buffer = 1000000;	// per egress port, bytes
	int paths = 8;
	double loss = 0.005;		// lossy scenario, one spine link
	double fail_frac = 0.3;		// fail at this fraction of the ideal time
	uint64_t reconverge_us = 1000;	// failrc: ECMP groups repaired after this
	uint64_t limit_ms = 100;	// simulated time limit
	int window = 256;	// packets in flight per QP (both), <= MRXE_SACK_WINDOW
	uint64_t rto_floor_us = 200;	// both transports
	uint32_t cnp_us = 50;		// NP: at most one CNP per QP per 50 us
	// DCQCN RP (standard): T, B, R_AI, R_HAI.  B = 32 KB, not the paper's
	// 10 MB: with 10 MB the byte counter never reaches hyper increase
	// within a collective and DCQCN leaves the bottlenecks ~40% idle (the
	// sensitivity run "stdb10m" of sim/run.py shows it)
	uint32_t dcqcn_t_us = 55;
	uint64_t dcqcn_b = 32768;
	uint64_t dcqcn_ai_kbps = 100000, dcqcn_hai_kbps = 1000000;
	bool check = false;		// engine invariants after every event
	std::string fct_path, links_path;
};

Cfg g_cfg;
std::mt19937_64 g_rng;
bool g_withdrawn;	// scenario failrc: routing converged around the failure

double Uni()
{
	return std::uniform_real_distribution<double>(0, 1)(g_rng);
}

uint64_t NowNs()
{
	return (uint64_t)Simulator::Now().GetNanoSeconds();
}

uint64_t Mix64(uint64_t x)	// splitmix64 finaliser
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

// ---- the packet header: the fields the switches and NICs look at ----
class RoceHeader : public Header {
public:
	enum : uint8_t { DATA = 0, ACK = 1, NAK = 2, CNP = 3 };
	uint16_t src = 0, dst = 0;	// host ids (the IP addresses)
	uint16_t sport = 0, dport = kRoceDport;
	uint8_t type = DATA;
	uint8_t ecn = 2;		// 0 not-ECT, 2 ECT(0), 3 CE
	uint8_t path = 0;		// MRH path index
	uint32_t qp = 0;		// global QP index (the BTH DestQP)
	uint32_t psn = 0;		// DATA: PSN; ACK/NAK: ePSN
	uint32_t tsval = 0, tsecr = 0;	// MRH timestamps
	uint8_t nsack = 0;		// SACKETH bytes that follow
	uint8_t sack[MRXE_SACKETH_HDR_LEN +
		     MRXE_SACK_MAX_BLOCKS * MRXE_SACKETH_BLK_LEN] = {};

	static TypeId GetTypeId()
	{
		static TypeId tid = TypeId("mrxe::RoceHeader")
					    .SetParent<Header>()
					    .AddConstructor<RoceHeader>();
		return tid;
	}
	TypeId GetInstanceTypeId() const override
	{
		return GetTypeId();
	}
	uint32_t GetSerializedSize() const override
	{
		return kHdrFixed + nsack;
	}
	void Serialize(Buffer::Iterator i) const override
	{
		i.WriteHtonU16(src);
		i.WriteHtonU16(dst);
		i.WriteHtonU16(sport);
		i.WriteHtonU16(dport);
		i.WriteU8(type);
		i.WriteU8(ecn);
		i.WriteU8(path);
		i.WriteHtonU32(qp);
		i.WriteHtonU32(psn);
		i.WriteHtonU32(tsval);
		i.WriteHtonU32(tsecr);
		i.WriteU8(nsack);
		i.Write(sack, nsack);
	}
	uint32_t Deserialize(Buffer::Iterator start) override
	{
		Buffer::Iterator i = start;

		src = i.ReadNtohU16();
		dst = i.ReadNtohU16();
		sport = i.ReadNtohU16();
		dport = i.ReadNtohU16();
		type = i.ReadU8();
		ecn = i.ReadU8();
		path = i.ReadU8();
		qp = i.ReadNtohU32();
		psn = i.ReadNtohU32();
		tsval = i.ReadNtohU32();
		tsecr = i.ReadNtohU32();
		nsack = std::min<uint8_t>(i.ReadU8(), sizeof(sack));
		i.Read(sack, nsack);
		return GetSerializedSize();
	}
	void Print(std::ostream &os) const override
	{
		os << "roce t=" << (int)type << " " << src << "->" << dst << " psn=" << psn;
	}
};

NS_OBJECT_ENSURE_REGISTERED(RoceHeader);

// ---- global counters of one run ----
struct Stats {
	uint64_t data_sent = 0, retx = 0, acks = 0, naks = 0, cnps = 0;
	uint64_t rtos = 0, tlps = 0, spurious = 0;
	uint64_t drop_buffer = 0, drop_fail = 0, drop_loss = 0, marks = 0;
	uint64_t lost_data = 0;	// DATA packets among the drops
	uint64_t dup_rx = 0, ooo_rx = 0, qp_errors = 0, bad_ack = 0;
	uint64_t path_dead = 0, path_probes = 0;
	std::vector<uint64_t> qhist;	// egress queue at enqueue, 1 KiB buckets
};
Stats g_st;

void QSample(uint64_t bytes)
{
	size_t b = std::min<size_t>(bytes / 1024, g_st.qhist.size() - 1);

	g_st.qhist[b]++;
}

uint64_t QPct(double pct)
{
	uint64_t tot = 0, acc = 0;

	for (uint64_t c : g_st.qhist)
		tot += c;
	for (size_t i = 0; i < g_st.qhist.size(); i++) {
		acc += g_st.qhist[i];
		if (acc && acc >= pct / 100.0 * tot)
			return i * 1024;
	}
	return 0;
}

// ---- switches ----
struct Port {
	Ptr<PointToPointNetDevice> dev;
	Ptr<Queue<Packet>> q;
	bool fabric = false;	// a leaf-spine link (utilisation spread)
	std::string name;
	bool blackhole = false;
	double loss = 0;
	uint64_t tx_bytes = 0, maxq = 0;
};

class Switch {
public:
	Switch(bool leaf, int id) : leaf_(leaf), id_(id), seed_(Mix64(g_rng()))
	{
		node = CreateObject<Node>();
	}

	Ptr<Node> node;
	std::vector<Port> ports;
	std::vector<int> host_port;	// leaf: local host index -> port
	std::vector<int> up;		// leaf: uplink ports (to spine s)
	std::vector<int> leaf_port;	// spine: leaf -> port

	void Start()
	{
		node->RegisterProtocolHandler(MakeCallback(&Switch::Receive, this), 0x0800,
					      nullptr);
	}

	void Receive(Ptr<NetDevice>, Ptr<const Packet> p, uint16_t, const Address &,
		     const Address &, NetDevice::PacketType)
	{
		RoceHeader h;
		Ptr<Packet> c = p->Copy();
		int out;

		c->PeekHeader(h);
		int dleaf = h.dst / g_cfg.hosts;
		if (!leaf_) {
			out = leaf_port[dleaf];
		} else if (dleaf == id_) {
			out = host_port[h.dst % g_cfg.hosts];
		} else {
			// ECMP: a hash of the 5-tuple (proto UDP) picks the uplink
			uint64_t k = (uint64_t)h.src << 48 | (uint64_t)h.dst << 32 |
				     (uint64_t)h.sport << 16 | h.dport;
			uint64_t hv = Mix64(k ^ seed_ ^ 17);

			// after routing converged around the failed leaf 0 <-> spine 0
			// link, the ECMP groups toward and from leaf 0 lack spine 0
			// (the group shrinks: every flow of it is hashed again)
			if (g_withdrawn && (id_ == 0 || dleaf == 0))
				out = up[1 + hv % (up.size() - 1)];
			else
				out = up[hv % up.size()];
		}
		Egress(ports[out], c, h);
	}

private:
	bool leaf_;
	int id_;
	uint64_t seed_;

	void Egress(Port &pt, Ptr<Packet> c, RoceHeader &h)
	{
		uint64_t q = pt.q->GetNBytes();
		uint32_t sz = c->GetSize();

		bool data = h.type == RoceHeader::DATA;

		if (pt.blackhole) {
			g_st.drop_fail++;
			g_st.lost_data += data;
			return;
		}
		if (pt.loss > 0 && Uni() < pt.loss) {
			g_st.drop_loss++;
			g_st.lost_data += data;
			return;
		}
		QSample(q);
		pt.maxq = std::max(pt.maxq, q);
		if (q + sz > g_cfg.buffer) {
			g_st.drop_buffer++;
			g_st.lost_data += data;
			return;
		}
		if (h.type == RoceHeader::DATA && h.ecn >= 2 && h.ecn != 3 && q > g_cfg.kmin) {
			double pr = q >= g_cfg.kmax ? 1.0 :
				    g_cfg.pmax * (double)(q - g_cfg.kmin) /
					    (double)(g_cfg.kmax - g_cfg.kmin);
			if (Uni() < pr) {
				c->RemoveHeader(h);
				h.ecn = 3;
				c->AddHeader(h);
				g_st.marks++;
			}
		}
		pt.tx_bytes += sz;
		pt.dev->Send(c, pt.dev->GetBroadcast(), 0x0800);
	}
};

// ---- messages (the workload) ----
struct Msg {
	int qp = -1;
	uint32_t first = 0, npkts = 0;	// PSN range [first, first + npkts)
	uint64_t bytes = 0;
	std::vector<int> dependents;	// messages waiting for this one
	int deps_left = 0;
	uint64_t ready_ns = 0, done_ns = 0;
	bool done = false;
};

class Host;

struct Qp {
	int id = 0, src = 0, dst = 0;
	bool meta = false;
	uint16_t sport = 0;
	std::vector<int> msgs;		// in posting order
	size_t next_post = 0, rx_next = 0;
	uint32_t limit = 0;		// PSNs posted (sendable)
	uint32_t total = 0;
	// standard sender (go-back-N)
	uint32_t una = 0, nxt = 0, max_sent = 0;
	std::vector<uint64_t> sent_at;
	std::vector<uint8_t> retxd;
	struct mrxe_rtt rtt;
	EventId rto_ev;
	uint64_t rto_at = 0;
	int retries = 0;
	bool error = false;
	// MetaRoCE sender
	struct mrxe_sack sb;
	struct mrxe_path_set ps;
	uint32_t sent_new = 0;
	bool probe_pending = false;
	uint32_t probe_psn = 0;
	EventId sack_ev;
	uint64_t sack_at = 0;
	// congestion control + pacer
	struct mrxe_dcqcn dc;
	struct mrxe_ecn_cc ecc;
	struct mrxe_pacer pacer;
	uint64_t pacer_rate = 0;
	// receiver
	uint32_t epsn = 0;
	bool nak_sent = false;
	struct mrxe_reorder rw;
	struct mrxe_cnp_np np = {};
	uint8_t ce_since_ack = 0;
};

std::vector<Msg> g_msgs;
std::vector<std::unique_ptr<Qp>> g_qps;
std::vector<std::unique_ptr<Host>> g_hosts;
size_t g_done_msgs = 0;
uint64_t g_start_ns = 0, g_end_ns = 0;
bool g_check_failed = false;

void CheckFail(const char *what, int qp, int code)
{
	if (!g_check_failed)
		fprintf(stderr, "mrxe-fabric: invariant %s failed on QP %d (%d)\n", what, qp,
			code);
	g_check_failed = true;
}

class Host {
public:
	Host(int id) : id(id)
	{
		node = CreateObject<Node>();
	}

	int id;
	Ptr<Node> node;
	Ptr<PointToPointNetDevice> dev;
	std::vector<Qp *> tx;	// QPs this host sends on

	void Start()
	{
		node->RegisterProtocolHandler(MakeCallback(&Host::Receive, this), 0x0800,
					      nullptr);
	}

	// something may be sendable now
	void Kick()
	{
		uint64_t now = NowNs();
		uint64_t at = std::max(now, free_at_);

		if (pump_.IsRunning() && pump_at_ <= at)
			return;
		pump_.Cancel();
		pump_at_ = at;
		pump_ = Simulator::Schedule(NanoSeconds(at - now), &Host::Pump, this);
	}

	void SendCtrl(RoceHeader &h, uint32_t pad)
	{
		Ptr<Packet> p = Create<Packet>(pad);

		p->AddHeader(h);
		dev->Send(p, dev->GetBroadcast(), 0x0800);
	}

	void Receive(Ptr<NetDevice>, Ptr<const Packet> p, uint16_t, const Address &,
		     const Address &, NetDevice::PacketType);

private:
	EventId pump_;
	uint64_t pump_at_ = 0, free_at_ = 0;
	size_t rr_ = 0;

	void Pump();
};

uint64_t TxNs(uint32_t bytes)
{
	return (uint64_t)std::ceil((bytes + 2) * 8.0 / g_cfg.gbps);	// + PPP header
}

void MsgDone(int mi);

// ---- per-QP transport ----
uint64_t CcRate(Qp *q, uint64_t now)
{
	if (q->meta)
		return mrxe_ecn_cc_rate(&q->ecc);
	mrxe_dcqcn_tick(&q->dc, now);
	return mrxe_dcqcn_rate(&q->dc);
}

void Post(Qp *q)
{
	uint64_t now = NowNs();

	while (q->next_post < q->msgs.size() && g_msgs[q->msgs[q->next_post]].deps_left == 0) {
		Msg &m = g_msgs[q->msgs[q->next_post++]];

		m.ready_ns = now;
		q->limit = m.first + m.npkts;
	}
}

void ArmRto(Qp *q)
{
	if (q->error || q->una == q->nxt) {
		q->rto_ev.Cancel();
		q->rto_at = 0;
		return;
	}
	uint64_t at = q->rto_at;

	if (!at) {
		at = NowNs() + mrxe_rtt_rto(&q->rtt);
		q->rto_at = at;
		q->rto_ev = Simulator::Schedule(NanoSeconds(at - NowNs()), [q]() {
			q->rto_at = 0;
			if (q->una == q->nxt || q->error)
				return;
			g_st.rtos++;
			if (++q->retries > 7) {	// IBA retry_cnt 7: the QP goes to error
				q->error = true;
				g_st.qp_errors++;
				return;
			}
			mrxe_rtt_backoff(&q->rtt);
			q->nxt = q->una;	// go back N
			ArmRto(q);
			g_hosts[q->src]->Kick();
		});
	}
}

void ArmSack(Qp *q)
{
	enum mrxe_sack_timer_kind kind;
	uint64_t at = mrxe_sack_timer(&q->sb, &kind);

	if (at == q->sack_at)
		return;
	q->sack_ev.Cancel();
	q->sack_at = at;
	if (!at)
		return;
	uint64_t now = NowNs();

	q->sack_ev = Simulator::Schedule(NanoSeconds(at > now ? at - now : 0), [q]() {
		uint32_t probe = 0;
		uint64_t now = NowNs();

		q->sack_at = 0;
		uint32_t ev = mrxe_sack_on_timer(&q->sb, now, &probe);

		mrxe_path_sync(&q->ps, &q->sb, now);
		if (ev & MRXE_SACK_EV_PROBE) {
			q->probe_pending = true;
			q->probe_psn = probe;
		}
		ArmSack(q);
		g_hosts[q->src]->Kick();
	});
}

bool HasWork(Qp *q)
{
	if (q->meta)
		return q->sb.n_lost || q->probe_pending ||
		       (q->sent_new < q->limit && !mrxe_sack_full(&q->sb));
	return !q->error && q->nxt < q->limit && q->nxt - q->una < (uint32_t)g_cfg.window;
}

// Build and send the next packet of @q (HasWork was true, the pacer agreed).
void SendOne(Qp *q, Host *h)
{
	uint64_t now = NowNs();
	RoceHeader hd;
	uint32_t pad = kPadData;
	bool retx = false;

	hd.src = q->src;
	hd.dst = q->dst;
	hd.qp = q->id;
	hd.sport = q->sport;
	if (q->meta) {
		uint32_t psn;
		uint8_t path;

		pad += MRXE_MRH_LEN;
		if (mrxe_sack_next_lost(&q->sb, &psn)) {
			retx = true;
		} else if (q->sent_new < q->limit && !mrxe_sack_full(&q->sb)) {
			psn = q->sent_new;
		} else {
			q->probe_pending = false;
			psn = q->probe_psn;
			if (mrxe_sack_ent(&q->sb, psn)->state != MRXE_SK_INFLIGHT ||
			    mrxe_psn_diff(psn, q->sb.una) < 0)
				return;
			retx = true;
		}
		if (retx) {
			uint8_t old = mrxe_sack_ent(&q->sb, psn)->path;

			path = mrxe_path_pick(&q->ps, now, old);
			if (mrxe_sack_on_retransmit(&q->sb, psn, now, path))
				CheckFail("sack_on_retransmit", q->id, 0);
		} else {
			path = mrxe_path_pick(&q->ps, now, MRXE_PATH_NONE);
			if (mrxe_sack_on_send(&q->sb, psn, now, path, kPayload))
				CheckFail("sack_on_send", q->id, 0);
			q->sent_new++;
			q->probe_pending = false;
		}
		mrxe_path_on_send(&q->ps, path, retx, now);
		hd.path = path;
		hd.sport = q->ps.p[path].port;
		hd.psn = psn;
		hd.tsval = mrxe_mrh_ts(now);
		ArmSack(q);
	} else {
		hd.psn = q->nxt++;
		retx = hd.psn < q->max_sent;
		q->max_sent = std::max(q->max_sent, q->nxt);
		q->sent_at[hd.psn] = now;
		q->retxd[hd.psn] |= retx;
		ArmRto(q);
		mrxe_dcqcn_sent(&q->dc, kPayload + 58, now);
	}
	if (retx)
		g_st.retx++;
	else
		g_st.data_sent++;
	Ptr<Packet> p = Create<Packet>(kPayload + pad);

	p->AddHeader(hd);
	h->dev->Send(p, h->dev->GetBroadcast(), 0x0800);
}

void Host::Pump()
{
	uint64_t now = NowNs();
	uint64_t wake = UINT64_MAX;
	size_t n = tx.size();
	uint32_t backlog = dev->GetQueue()->GetNBytes();

	// ACKs/NAKs/CNPs go straight to the device queue: data waits for them,
	// so the host link is never oversubscribed and its queue stays short
	if (backlog) {
		free_at_ = now + TxNs(backlog);
		pump_at_ = free_at_;
		pump_ = Simulator::Schedule(NanoSeconds(free_at_ - now), &Host::Pump, this);
		return;
	}
	for (size_t k = 0; k < n; k++) {
		Qp *q = tx[(rr_ + k) % n];

		if (!HasWork(q))
			continue;
		uint64_t rate = CcRate(q, now);

		if (rate != q->pacer_rate) {
			mrxe_pacer_set_rate(&q->pacer, rate >= g_cfg.gbps * 1e6 ? 0 : rate, now);
			q->pacer_rate = rate;
		}
		uint64_t t = mrxe_pacer_admit(&q->pacer, kPayload + 58, now);

		if (t) {
			wake = std::min(wake, t);
			continue;
		}
		SendOne(q, this);
		rr_ = (rr_ + k + 1) % n;
		free_at_ = now + TxNs(kPayload + kHdrFixed + kPadData);
		pump_at_ = free_at_;
		pump_ = Simulator::Schedule(NanoSeconds(free_at_ - now), &Host::Pump, this);
		return;
	}
	if (wake != UINT64_MAX) {
		pump_at_ = wake;
		pump_ = Simulator::Schedule(NanoSeconds(wake - now), &Host::Pump, this);
	}
}

void RxAdvance(Qp *q, uint32_t epsn)
{
	while (q->rx_next < q->msgs.size()) {
		Msg &m = g_msgs[q->msgs[q->rx_next]];

		if (epsn < m.first + m.npkts)
			break;
		q->rx_next++;
		MsgDone(q->msgs[q->rx_next - 1]);
	}
}

void OnData(Host *h, Qp *q, const RoceHeader &d)
{
	uint64_t now = NowNs();
	RoceHeader a;

	a.src = q->dst;
	a.dst = q->src;
	a.qp = q->id;
	a.sport = d.sport;	// responses reuse the requester's entropy
	a.ecn = 0;
	if (d.ecn == 3) {
		if (!q->meta && mrxe_cnp_np_may_send(&q->np, now, g_cfg.cnp_us * kUs)) {
			RoceHeader c = a;

			c.type = RoceHeader::CNP;
			g_st.cnps++;
			h->SendCtrl(c, kPadCnp);
		}
		if (q->meta && q->ce_since_ack < 15)
			q->ce_since_ack++;
	}
	if (q->meta) {
		enum mrxe_rx_verdict v = mrxe_reorder_accept(&q->rw, d.psn);
		struct mrxe_sack_info si;

		if (v == MRXE_RX_DUPLICATE)
			g_st.dup_rx++;
		if (v == MRXE_RX_NEW && d.psn != mrxe_reorder_epsn(&q->rw) - 1)
			g_st.ooo_rx++;
		memset(&si, 0, sizeof(si));
		mrxe_reorder_sack(&q->rw, &si, MRXE_SACK_MAX_BLOCKS);
		si.ce = q->ce_since_ack;
		q->ce_since_ack = 0;
		a.type = RoceHeader::ACK;
		a.psn = si.epsn;
		a.tsecr = d.tsval;
		a.path = d.path;
		a.nsack = (uint8_t)mrxe_sacketh_len(si.nblocks);
		mrxe_sacketh_build(a.sack, &si);
		g_st.acks++;
		h->SendCtrl(a, kPadAck + MRXE_MRH_LEN);
		RxAdvance(q, mrxe_reorder_epsn(&q->rw));
		return;
	}
	// go-back-N responder (IBA 9.7.5.1.4 / C9-112): in order or NAK once
	if (d.psn == q->epsn) {
		q->epsn++;
		q->nak_sent = false;
		a.type = RoceHeader::ACK;
	} else if (d.psn < q->epsn) {
		g_st.dup_rx++;
		a.type = RoceHeader::ACK;	// duplicate: ACK again
	} else {
		g_st.ooo_rx++;
		if (q->nak_sent)
			return;
		q->nak_sent = true;
		a.type = RoceHeader::NAK;
		g_st.naks++;
	}
	a.psn = q->epsn;
	if (a.type == RoceHeader::ACK)
		g_st.acks++;
	h->SendCtrl(a, kPadAck);
	RxAdvance(q, q->epsn);
}

void OnAckStd(Qp *q, const RoceHeader &a)
{
	uint64_t now = NowNs();
	uint32_t e = a.psn;

	if (e > q->max_sent) {
		g_st.bad_ack++;
		return;
	}
	if (e > q->una) {
		if (!q->retxd[e - 1])	// Karn
			mrxe_rtt_sample(&q->rtt, now - q->sent_at[e - 1], now);
		q->una = e;
		q->retries = 0;
		q->rto_ev.Cancel();
		q->rto_at = 0;
	}
	if (q->nxt < q->una)
		q->nxt = q->una;
	if (a.type == RoceHeader::NAK)
		q->nxt = q->una;	// go back to the NAKed PSN
	ArmRto(q);
	g_hosts[q->src]->Kick();
}

void OnAckMeta(Qp *q, const RoceHeader &a)
{
	uint64_t now = NowNs();
	struct mrxe_sack_info si;
	struct mrxe_sack_ack_res res;

	memset(&si, 0, sizeof(si));
	if (mrxe_sacketh_parse(a.sack, a.nsack, a.psn, &si) < 0) {
		g_st.bad_ack++;
		return;
	}
	uint8_t tpath = MRXE_PATH_NONE;

	if (mrxe_psn_diff(si.trigger_psn, q->sb.una) >= 0 &&
	    mrxe_psn_diff(si.trigger_psn, q->sb.nxt) < 0)
		tpath = mrxe_sack_ent(&q->sb, si.trigger_psn)->path;
	if (mrxe_sack_on_ack(&q->sb, &si, mrxe_mrh_ts_ns(a.tsecr, now), now, &res)) {
		g_st.bad_ack++;
		return;
	}
	mrxe_path_sync(&q->ps, &q->sb, now);
	if (si.ce && tpath != MRXE_PATH_NONE)
		mrxe_path_on_ecn(&q->ps, tpath);
	uint64_t ce = std::min<uint64_t>((uint64_t)si.ce * kPayload, res.bytes);

	mrxe_ecn_cc_ack(&q->ecc, res.bytes, ce, now,
			std::max<uint64_t>(mrxe_rtt_srtt(&q->sb.rtt), 1));
	if (g_cfg.check) {
		int ck = mrxe_sack_check(&q->sb);

		if (ck)
			CheckFail("mrxe_sack_check", q->id, ck);
		ck = mrxe_path_check(&q->ps);
		if (ck)
			CheckFail("mrxe_path_check", q->id, ck);
	}
	ArmSack(q);
	g_hosts[q->src]->Kick();
}

void Host::Receive(Ptr<NetDevice>, Ptr<const Packet> p, uint16_t, const Address &,
		   const Address &, NetDevice::PacketType)
{
	RoceHeader h;

	p->PeekHeader(h);
	if (h.qp >= g_qps.size())
		return;
	Qp *q = g_qps[h.qp].get();

	switch (h.type) {
	case RoceHeader::DATA:
		OnData(this, q, h);
		break;
	case RoceHeader::ACK:
	case RoceHeader::NAK:
		if (q->meta)
			OnAckMeta(q, h);
		else
			OnAckStd(q, h);
		break;
	case RoceHeader::CNP:
		if (!q->meta) {
			mrxe_dcqcn_cnp(&q->dc, NowNs());
			Kick();
		}
		break;
	}
}

void MsgDone(int mi)
{
	Msg &m = g_msgs[mi];

	if (m.done) {
		CheckFail("message completed twice", m.qp, mi);
		return;
	}
	m.done = true;
	m.done_ns = NowNs();
	if (++g_done_msgs == g_msgs.size()) {
		g_end_ns = m.done_ns;
		Simulator::Stop();
		return;
	}
	for (int d : m.dependents) {
		Msg &n = g_msgs[d];

		if (--n.deps_left == 0) {
			Qp *q = g_qps[n.qp].get();

			Post(q);
			g_hosts[q->src]->Kick();
		}
	}
}

// ---- setup ----
int QpFor(int src, int dst, std::vector<std::vector<int>> &idx)
{
	if (idx[src][dst] >= 0)
		return idx[src][dst];
	auto q = std::make_unique<Qp>();

	q->id = (int)g_qps.size();
	q->src = src;
	q->dst = dst;
	q->meta = g_cfg.transport == "meta";
	q->sport = (uint16_t)(0xc000 | (g_rng() & 0x3fff));	// RoCEv2 entropy
	idx[src][dst] = q->id;
	g_qps.push_back(std::move(q));
	return idx[src][dst];
}

int AddMsg(int qp, uint64_t bytes)
{
	Msg m;
	Qp *q = g_qps[qp].get();

	m.qp = qp;
	m.bytes = bytes;
	m.npkts = (uint32_t)((bytes + kPayload - 1) / kPayload);
	m.first = q->total;
	q->total += m.npkts;
	q->msgs.push_back((int)g_msgs.size());
	g_msgs.push_back(m);
	return (int)g_msgs.size() - 1;
}

void BuildWorkload(int n)
{
	std::vector<std::vector<int>> idx(n, std::vector<int>(n, -1));
	const Cfg &c = g_cfg;

	if (c.workload == "ring") {
		// ring order interleaves the leaves, so every ring edge crosses
		// the spine layer (the ECMP-sensitive case; a leaf-local ring
		// would not touch the fabric)
		std::vector<int> order(n);

		for (int k = 0; k < n; k++)
			order[k] = (k % c.leaves) * c.hosts + k / c.leaves;
		uint64_t chunk = std::max<uint64_t>(c.bytes / n, kPayload);
		std::vector<std::vector<int>> step(n);	// [ring pos][step] -> msg

		for (int s = 0; s < 2 * (n - 1); s++)
			for (int k = 0; k < n; k++) {
				int qp = QpFor(order[k], order[(k + 1) % n], idx);

				step[k].push_back(AddMsg(qp, chunk));
			}
		// step s of position k needs step s-1 of position k-1 received
		for (int s = 1; s < 2 * (n - 1); s++)
			for (int k = 0; k < n; k++) {
				int prev = step[(k + n - 1) % n][s - 1];

				g_msgs[prev].dependents.push_back(step[k][s]);
				g_msgs[step[k][s]].deps_left++;
			}
	} else if (c.workload == "alltoall") {
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				if (i != j)
					AddMsg(QpFor(i, j, idx), std::max<uint64_t>(c.bytes / n, kPayload));
	} else if (c.workload == "incast") {
		// hosts on other leaves, one per leaf-position, send to host 0
		for (int i = 1; i < n; i++)
			if (i / c.hosts != 0)
				AddMsg(QpFor(i, 0, idx), c.bytes / 16);
	} else {	// perm: a random permutation without fixed points
		std::vector<int> p(n);

		for (int i = 0; i < n; i++)
			p[i] = i;
		do
			std::shuffle(p.begin(), p.end(), g_rng);
		while ([&]() {
			for (int i = 0; i < n; i++)
				if (p[i] == i)
					return true;
			return false;
		}());
		for (int i = 0; i < n; i++)
			AddMsg(QpFor(i, p[i], idx), c.bytes);
	}
}

void InitQp(Qp *q)
{
	const Cfg &c = g_cfg;
	uint64_t line = (uint64_t)(c.gbps * 1e6);	// kbit/s

	mrxe_rtt_init(&q->rtt, c.rto_floor_us * kUs, 100 * kMs, 4 * c.rto_floor_us * kUs,
		      10000 * kMs);
	q->sent_at.assign(q->total, 0);
	q->retxd.assign(q->total, 0);
	if (q->meta) {
		struct mrxe_sack_cfg sc = {};
		struct mrxe_path_cfg pc = {};

		sc.rto_floor_ns = c.rto_floor_us * kUs;
		sc.rto_ceil_ns = 100 * kMs;
		sc.rto_init_ns = 4 * c.rto_floor_us * kUs;
		sc.min_rtt_win_ns = 10000 * kMs;
		sc.reo_persist = MRXE_SACK_REO_PERSIST_META;
		sc.wnd = (u32)g_cfg.window;
		mrxe_sack_init(&q->sb, 0, &sc);
		mrxe_reorder_init(&q->rw, 0);
		pc.num_paths = (uint8_t)c.paths;
		pc.cwnd_max = (u32)g_cfg.window;
		pc.base_port = q->sport;
		pc.dead_ns = 200 * kUs;
		pc.probe_ns = 500 * kUs;
		pc.probe_max_ns = 8 * kMs;
		mrxe_path_init(&q->ps, &pc, 0);
		q->sport = q->ps.p[0].port;
	}
	struct mrxe_dcqcn_params dp;

	mrxe_dcqcn_params_default(&dp, line);
	dp.min_kbps = line / 1000;
	dp.timer_us = c.dcqcn_t_us;	// paper's T (55 us)
	dp.alpha_us = 55;		// paper's K
	dp.byte_counter = c.dcqcn_b;	// 32 KB (paper: 10 MB)
	dp.ai_kbps = c.dcqcn_ai_kbps;	// 100 Mbit/s
	dp.hai_kbps = c.dcqcn_hai_kbps;	// 1 Gbit/s
	mrxe_dcqcn_init(&q->dc, &dp);
	struct mrxe_ecn_cc_params ep;

	mrxe_ecn_cc_params_default(&ep, line);
	ep.min_kbps = line / 1000;
	ep.ai_kbps = 100000;
	ep.min_round_us = 10;
	mrxe_ecn_cc_init(&q->ecc, &ep);
	mrxe_pacer_init(&q->pacer, 0, 2 * (kPayload + 58), 0);
	q->pacer_rate = line;
}

void Usage()
{
	fprintf(stderr,
		"usage: mrxe-fabric [--transport std|meta] [--scenario ecmp|fail|failrc|lossy]\n"
		"  [--workload ring|alltoall|incast|perm] [--seed N] [--leaves N] [--spines N]\n"
		"  [--hosts N] [--bytes N] [--gbps X] [--delay-ns N] [--paths N] [--loss P]\n"
		"  [--kmin B] [--kmax B] [--pmax P] [--buffer B] [--limit-ms N] [--check]\n"
		"  [--reconverge-us N] [--dcqcn-t-us N] [--dcqcn-b BYTES] [--dcqcn-ai-kbps N] [--dcqcn-hai-kbps N]\n"
		"  [--fct FILE] [--links FILE]\n");
	exit(2);
}

}  // namespace

int main(int argc, char **argv)
{
	Cfg &c = g_cfg;

	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		auto val = [&]() -> std::string {
			if (i + 1 >= argc)
				Usage();
			return argv[++i];
		};
		if (a == "--transport")
			c.transport = val();
		else if (a == "--scenario")
			c.scenario = val();
		else if (a == "--workload")
			c.workload = val();
		else if (a == "--seed")
			c.seed = std::stoul(val());
		else if (a == "--leaves")
			c.leaves = std::stoi(val());
		else if (a == "--spines")
			c.spines = std::stoi(val());
		else if (a == "--hosts")
			c.hosts = std::stoi(val());
		else if (a == "--bytes")
			c.bytes = std::stoull(val());
		else if (a == "--gbps")
			c.gbps = std::stod(val());
		else if (a == "--delay-ns")
			c.link_delay_ns = std::stoull(val());
		else if (a == "--paths")
			c.paths = std::stoi(val());
		else if (a == "--loss")
			c.loss = std::stod(val());
		else if (a == "--kmin")
			c.kmin = std::stoull(val());
		else if (a == "--kmax")
			c.kmax = std::stoull(val());
		else if (a == "--pmax")
			c.pmax = std::stod(val());
		else if (a == "--buffer")
			c.buffer = std::stoull(val());
		else if (a == "--limit-ms")
			c.limit_ms = std::stoull(val());
		else if (a == "--dcqcn-t-us")
			c.dcqcn_t_us = std::stoul(val());
		else if (a == "--dcqcn-b")
			c.dcqcn_b = std::stoull(val());
		else if (a == "--dcqcn-ai-kbps")
			c.dcqcn_ai_kbps = std::stoull(val());
		else if (a == "--dcqcn-hai-kbps")
			c.dcqcn_hai_kbps = std::stoull(val());
		else if (a == "--reconverge-us")
			c.reconverge_us = std::stoull(val());
		else if (a == "--check")
			c.check = true;
		else if (a == "--fct")
			c.fct_path = val();
		else if (a == "--links")
			c.links_path = val();
		else
			Usage();
	}
	if ((c.transport != "std" && c.transport != "meta") || c.paths < 1 ||
	    c.paths > MRXE_PATH_MAX || c.leaves < 2 || c.spines < 1 || c.hosts < 1)
		Usage();
	g_rng.seed(c.seed * 7919 + 1);
	g_st.qhist.assign(4096, 0);

	const int n = c.leaves * c.hosts;
	std::vector<std::unique_ptr<Switch>> leaves, spines;
	PointToPointHelper p2p;
	char rate[32];

	snprintf(rate, sizeof(rate), "%.3fGbps", c.gbps);
	p2p.SetDeviceAttribute("DataRate", StringValue(rate));
	p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(c.link_delay_ns)));
	p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1000000p"));
	for (int l = 0; l < c.leaves; l++)
		leaves.push_back(std::make_unique<Switch>(true, l));
	for (int s = 0; s < c.spines; s++) {
		spines.push_back(std::make_unique<Switch>(false, s));
		spines.back()->leaf_port.assign(c.leaves, -1);
	}
	auto port = [](Ptr<NetDevice> d, bool fabric, std::string name) {
		Port p;

		p.dev = DynamicCast<PointToPointNetDevice>(d);
		p.q = p.dev->GetQueue();
		p.fabric = fabric;
		p.name = name;
		return p;
	};
	for (int i = 0; i < n; i++) {
		g_hosts.push_back(std::make_unique<Host>(i));
		Switch *lf = leaves[i / c.hosts].get();
		NetDeviceContainer d = p2p.Install(g_hosts[i]->node, lf->node);

		g_hosts[i]->dev = DynamicCast<PointToPointNetDevice>(d.Get(0));
		lf->host_port.push_back((int)lf->ports.size());
		lf->ports.push_back(port(d.Get(1), false, "down"));
	}
	for (int l = 0; l < c.leaves; l++)
		for (int s = 0; s < c.spines; s++) {
			NetDeviceContainer d = p2p.Install(leaves[l]->node, spines[s]->node);
			char nm[32];

			snprintf(nm, sizeof(nm), "L%d>S%d", l, s);
			leaves[l]->up.push_back((int)leaves[l]->ports.size());
			leaves[l]->ports.push_back(port(d.Get(0), true, nm));
			snprintf(nm, sizeof(nm), "S%d>L%d", s, l);
			spines[s]->leaf_port[l] = (int)spines[s]->ports.size();
			spines[s]->ports.push_back(port(d.Get(1), true, nm));
		}
	for (auto &h : g_hosts)
		h->Start();
	for (auto &s : leaves)
		s->Start();
	for (auto &s : spines)
		s->Start();

	BuildWorkload(n);
	for (auto &q : g_qps) {
		InitQp(q.get());
		g_hosts[q->src]->tx.push_back(q.get());
	}
	uint64_t total_bytes = 0;

	for (auto &m : g_msgs)
		total_bytes += m.bytes;
	// ideal time: the busiest host link (either direction) at line rate
	std::vector<uint64_t> host_tx(n, 0), host_rx(n, 0);
	for (auto &m : g_msgs) {
		host_tx[g_qps[m.qp]->src] += (uint64_t)m.npkts * (kPayload + 60);
		host_rx[g_qps[m.qp]->dst] += (uint64_t)m.npkts * (kPayload + 60);
	}
	uint64_t ideal_ns = (uint64_t)(std::max(*std::max_element(host_tx.begin(), host_tx.end()),
						*std::max_element(host_rx.begin(), host_rx.end())) *
				       8.0 / c.gbps);

	// faults on one spine link, leaf 0 <-> spine 0, both directions
	Port &f_up = leaves[0]->ports[leaves[0]->up[0]];
	Port &f_dn = spines[0]->ports[spines[0]->leaf_port[0]];
	if (c.scenario == "lossy") {
		f_up.loss = c.loss;
		f_dn.loss = c.loss;
	} else if (c.scenario == "fail" || c.scenario == "failrc") {
		uint64_t at = (uint64_t)(c.fail_frac * ideal_ns);

		Simulator::Schedule(NanoSeconds(at), [&]() {
			f_up.blackhole = true;
			f_dn.blackhole = true;
		});
		if (c.scenario == "failrc" && c.spines > 1)
			Simulator::Schedule(NanoSeconds(at + c.reconverge_us * kUs),
					    []() { g_withdrawn = true; });
	} else if (c.scenario != "ecmp") {
		Usage();
	}

	for (auto &q : g_qps)
		Post(q.get());
	for (auto &h : g_hosts)
		h->Kick();
	g_start_ns = 0;
	Simulator::Stop(MilliSeconds(c.limit_ms));
	Simulator::Run();
	bool completed = g_done_msgs == g_msgs.size();
	uint64_t end = completed ? g_end_ns : NowNs();

	// MetaRoCE engine counters
	for (auto &q : g_qps) {
		if (!q->meta)
			continue;
		g_st.rtos += q->sb.cnt.rto;
		g_st.tlps += q->sb.cnt.tlp;
		g_st.spurious += q->sb.cnt.spurious;
		for (int i = 0; i < q->ps.n; i++) {
			g_st.path_dead += q->ps.p[i].cnt.dead;
			g_st.path_probes += q->ps.p[i].cnt.probes;
		}
		if (c.check) {
			int ck = mrxe_sack_check(&q->sb);
			if (ck)
				CheckFail("mrxe_sack_check (end)", q->id, ck);
		}
	}
	// fabric link utilisation over the run: spread across the leaf-spine links
	std::vector<double> util;
	FILE *lf = c.links_path.empty() ? nullptr : fopen(c.links_path.c_str(), "a");
	auto all_sw = [&](auto fn) {
		for (auto &s : leaves)
			for (auto &p : s->ports)
				fn(p);
		for (auto &s : spines)
			for (auto &p : s->ports)
				fn(p);
	};
	all_sw([&](Port &p) {
		if (!p.fabric)
			return;
		double u = end ? p.tx_bytes * 8.0 / (c.gbps * end) : 0;

		util.push_back(u);
		if (lf)
			fprintf(lf, "%s,%s,%s,%u,%s,%" PRIu64 ",%.4f,%" PRIu64 "\n",
				c.transport.c_str(), c.scenario.c_str(), c.workload.c_str(),
				c.seed, p.name.c_str(), p.tx_bytes, u, p.maxq);
	});
	if (lf)
		fclose(lf);
	double um = 0, us = 0;

	for (double u : util)
		um += u;
	um /= util.size();
	for (double u : util)
		us += (u - um) * (u - um);
	us = std::sqrt(us / util.size());
	double umax = *std::max_element(util.begin(), util.end());
	double umin = *std::min_element(util.begin(), util.end());

	if (!c.fct_path.empty()) {
		FILE *ff = fopen(c.fct_path.c_str(), "a");

		if (ff) {
			for (auto &m : g_msgs)
				if (m.done)
					fprintf(ff, "%s,%s,%s,%u,%" PRIu64 ",%.3f\n",
						c.transport.c_str(), c.scenario.c_str(),
						c.workload.c_str(), c.seed, m.bytes,
						(m.done_ns - m.ready_ns) / 1e3);
			fclose(ff);
		}
	}
	printf("transport,scenario,workload,seed,leaves,spines,hosts,paths,bytes,completed,"
	       "cct_us,ideal_us,msgs_done,msgs,data_pkts,retx_pkts,drop_buffer,drop_fail,"
	       "drop_loss,ecn_marks,cnps,naks,rtos,tlps,spurious,qp_errors,path_dead,"
	       "path_probes,ooo_rx,dup_rx,bad_ack,util_mean,util_cv,util_min,util_max,"
	       "q_p50,q_p99,q_max,check_failed,lost_data\n");
	uint64_t qmax = 0;

	all_sw([&](Port &p) { qmax = std::max(qmax, p.maxq); });
	printf("%s,%s,%s,%u,%d,%d,%d,%d,%" PRIu64 ",%d,%.3f,%.3f,%zu,%zu,%" PRIu64 ",%" PRIu64
	       ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
	       ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
	       ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.4f,%.4f,%.4f,%.4f,%" PRIu64 ",%" PRIu64
	       ",%" PRIu64 ",%d,%" PRIu64 "\n",
	       c.transport.c_str(), c.scenario.c_str(), c.workload.c_str(), c.seed, c.leaves,
	       c.spines, c.hosts, c.transport == "meta" ? c.paths : 1, c.bytes, completed,
	       end / 1e3, ideal_ns / 1e3, g_done_msgs, g_msgs.size(), g_st.data_sent,
	       g_st.retx, g_st.drop_buffer, g_st.drop_fail, g_st.drop_loss, g_st.marks,
	       g_st.cnps, g_st.naks, g_st.rtos, g_st.tlps, g_st.spurious, g_st.qp_errors,
	       g_st.path_dead, g_st.path_probes, g_st.ooo_rx, g_st.dup_rx, g_st.bad_ack, um,
	       um > 0 ? us / um : 0, umin, umax, QPct(50), QPct(99), qmax, g_check_failed, g_st.lost_data);
	Simulator::Destroy();
	(void)total_bytes;
	return g_check_failed ? 1 : 0;
}
