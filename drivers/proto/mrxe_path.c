// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * MetaRoCE path set: scheduler, per-path estimators, dead detection and
 * probing; the rules and the invariant are stated in mrxe_path.h.
 */
#include "mrxe_path.h"

#define FP(x)		((u32)(x) << MRXE_PATH_FP)

/* re-pathing (mrxe_path.h): holds and exploration intervals in epochs */
#define REPATH_HOLD_MIN		2
#define REPATH_HOLD_MAX		64
#define EXPLORE_MIN		4
#define EXPLORE_MAX		128
#define EXPLORE_EPOCHS		3	/* one to settle, two measured */

/*
 * Ports live in the IANA dynamic range 49152..65535 (0xc000 | 14 bits), as
 * the RoCEv2 flow-label derived port does (rdma_get_udp_sport).  Path 0 of
 * generation 0 keeps the QP's own RoCEv2 port; every other (path, gen)
 * gets a port spread by an integer hash (murmur3 fmix32) so that ECMP
 * hashing sees unrelated values.
 */
static u32 mix32(u32 h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bU;
	h ^= h >> 13;
	h *= 0xc2b2ae35U;
	h ^= h >> 16;
	return h;
}

u16 mrxe_path_port(u16 base, u8 idx, u8 gen)
{
	if (!idx && !gen)
		return base;
	return (u16)(0xc000 |
		     (mix32((u32)base << 16 ^ (u32)idx << 8 ^ gen) & 0x3fff));
}

static bool port_taken(const struct mrxe_path_set *ps, u8 self, u16 port)
{
	u8 i;

	for (i = 0; i < ps->n; i++)
		if (i != self && ps->p[i].port == port)
			return true;
	return false;
}

/* Next generation of @i whose port no other path uses. */
static void new_port(struct mrxe_path_set *ps, u8 i, bool bump)
{
	struct mrxe_path *p = &ps->p[i];
	u16 port;
	int tries = 0;

	if (bump)
		p->gen++;
	for (;;) {
		port = mrxe_path_port(ps->cfg.base_port, i, p->gen);
		if (!port_taken(ps, i, port) || ++tries > 64)
			break;
		p->gen++;
	}
	p->port = port;
}

void mrxe_path_init(struct mrxe_path_set *ps, const struct mrxe_path_cfg *cfg,
		    u64 now)
{
	u8 i;

	memset(ps, 0, sizeof(*ps));
	ps->cfg = *cfg;
	if (!ps->cfg.cwnd_init)
		ps->cfg.cwnd_init = 16;
	if (!ps->cfg.cwnd_min)
		ps->cfg.cwnd_min = 2;
	if (!ps->cfg.cwnd_max)
		ps->cfg.cwnd_max = MRXE_SACK_WINDOW;
	if (!ps->cfg.suspect_losses)
		ps->cfg.suspect_losses = 2;
	if (!ps->cfg.dead_losses)
		ps->cfg.dead_losses = 4;
	if (ps->cfg.probe_max_ns < ps->cfg.probe_ns)
		ps->cfg.probe_max_ns = ps->cfg.probe_ns;
	if (!ps->cfg.epoch_ns)
		ps->cfg.epoch_ns = 1000000;
	if (!ps->cfg.repath_strikes)
		ps->cfg.repath_strikes = 2;
	ps->n = cfg->num_paths;
	if (ps->n < 1)
		ps->n = 1;
	if (ps->n > MRXE_PATH_MAX)
		ps->n = MRXE_PATH_MAX;
	ps->cfg.num_paths = ps->n;
	for (i = 0; i < ps->n; i++) {
		ps->p[i].cwnd = FP(ps->cfg.cwnd_init);
		ps->p[i].ssthresh = FP(ps->cfg.cwnd_max);
		ps->p[i].last_deliver_ns = now;
		ps->p[i].state = MRXE_PST_ACTIVE;
		ps->p[i].backoff = REPATH_HOLD_MIN;
		new_port(ps, i, false);
	}
	ps->sched_ns = now;
	ps->ep_start_ns = now;
	ps->explore_every = EXPLORE_MIN;
	ps->exp_path = MRXE_PATH_NONE;
}

static u64 best_srtt(const struct mrxe_path_set *ps)
{
	u64 b = 0;
	u8 i;

	for (i = 0; i < ps->n; i++)
		if (ps->p[i].state != MRXE_PST_DEAD && ps->p[i].srtt_ns &&
		    (!b || ps->p[i].srtt_ns < b))
			b = ps->p[i].srtt_ns;
	return b;
}

static bool usable(const struct mrxe_path *p)
{
	return p->state != MRXE_PST_DEAD;
}

static bool probe_due(const struct mrxe_path_set *ps, const struct mrxe_path *p,
		      u64 now)
{
	u64 srtt = p->srtt_ns ? p->srtt_ns : best_srtt(ps);

	if (p->state == MRXE_PST_DEAD)
		return !p->probe_out && now >= p->probe_at_ns;
	/*
	 * A SUSPECT path with nothing in flight would be starved by the fill
	 * rule and never judged: one packet per path RTT keeps testing it.
	 */
	return p->state == MRXE_PST_SUSPECT && !p->inflight &&
	       now - p->last_send_ns >= srtt;
}

/* The window @p is used with: a SUSPECT path gets the minimum. */
static u32 wnd(const struct mrxe_path_set *ps, const struct mrxe_path *p)
{
	return p->state == MRXE_PST_SUSPECT ? FP(ps->cfg.cwnd_min) : p->cwnd;
}

/* Fill of @p in 1/256 units: (inflight + 1) / cwnd. */
static u64 fill(const struct mrxe_path_set *ps, const struct mrxe_path *p)
{
	u32 w = wnd(ps, p);

	return ((u64)(p->inflight + 1) << (2 * MRXE_PATH_FP)) / (w ? w : 1);
}

bool mrxe_path_room(const struct mrxe_path_set *ps, u64 now)
{
	const struct mrxe_path *p;
	bool any_usable = false;
	u8 i;

	if (ps->n <= 1 || !ps->cfg.hold)
		return true;
	for (i = 0; i < ps->n; i++) {
		p = &ps->p[i];
		if (probe_due(ps, p, now))
			return true;
		if (!usable(p))
			continue;
		any_usable = true;
		if (FP(p->inflight) < wnd(ps, p))
			return true;
	}
	/* every path DEAD: mrxe_path_pick() spreads over all of them */
	return !any_usable;
}

u8 mrxe_path_pick(struct mrxe_path_set *ps, u64 now, u8 avoid)
{
	u8 best = MRXE_PATH_NONE, i, k;
	u32 healthy;
	u64 bf = 0, f;

	if (ps->n == 1)
		return 0;
	/*
	 * A dead path whose probe time came carries the next new packet.  It
	 * also carries a retransmission when no path is ACTIVE or CONGESTED:
	 * then nothing is being acked, the window is full and the only
	 * packets left to send are the ones an RTO marked lost.  Waiting for
	 * new data would leave a fresh port that works unprobed until the
	 * RTO has backed off to its ceiling.
	 */
	healthy = mrxe_path_count(ps, MRXE_PST_ACTIVE) +
		  mrxe_path_count(ps, MRXE_PST_CONGESTED);
	for (k = 0; k < ps->n; k++) {
		i = (u8)((ps->rr + k) % ps->n);
		if (avoid != MRXE_PATH_NONE &&
		    (healthy || i == avoid || ps->p[i].state != MRXE_PST_DEAD))
			continue;
		if (probe_due(ps, &ps->p[i], now))
			return i;
	}
	for (k = 0; k < ps->n; k++) {
		i = (u8)((ps->rr + k) % ps->n);
		if (!usable(&ps->p[i]) || i == avoid)
			continue;
		f = fill(ps, &ps->p[i]);
		if (best == MRXE_PATH_NONE || f < bf) {
			best = i;
			bf = f;
		}
	}
	if (best == MRXE_PATH_NONE && avoid != MRXE_PATH_NONE &&
	    avoid < ps->n && usable(&ps->p[avoid]))
		best = avoid;	/* the only usable path */
	if (best == MRXE_PATH_NONE) {
		/*
		 * Every path is DEAD: keep the QP moving over all of them, the
		 * least filled first (each went DEAD with a fresh port, so each
		 * is another ECMP draw in both directions; riding only one
		 * that also hashes onto the failure stalls the QP until RTOs
		 * back off).  The RTO and retry_cnt decide whether it fails.
		 */
		for (k = 0; k < ps->n; k++) {
			i = (u8)((ps->rr + k) % ps->n);
			f = ps->p[i].inflight;
			if (best == MRXE_PATH_NONE || f < bf) {
				best = i;
				bf = f;
			}
		}
	}
	ps->rr = (u8)((best + 1) % ps->n);
	return best;
}

void mrxe_path_on_send(struct mrxe_path_set *ps, u8 path, bool retx, u64 now)
{
	struct mrxe_path *p;

	if (path >= ps->n)
		return;
	p = &ps->p[path];
	p->last_send_ns = now;
	if (retx)
		p->cnt.retx++;
	else
		p->cnt.sent++;
	if (p->state == MRXE_PST_DEAD && ps->n > 1) {
		/* this packet is the probe (mrxe_path_pick chose it) */
		p->probe_out = true;
		p->cnt.probes++;
	}
}

static void rtt_sample(struct mrxe_path *p, u64 r)
{
	u64 d;

	if (!p->srtt_ns) {
		p->srtt_ns = r;		/* RFC 6298 2.2 */
		p->rttvar_ns = r / 2;
		return;
	}
	d = p->srtt_ns > r ? p->srtt_ns - r : r - p->srtt_ns;
	p->rttvar_ns = p->rttvar_ns - (p->rttvar_ns >> 2) + (d >> 2);
	p->srtt_ns = p->srtt_ns - (p->srtt_ns >> 3) + (r >> 3);
}

static void on_delivered(struct mrxe_path_set *ps, struct mrxe_path *p,
			 u32 n, u32 was_inflight, u64 now)
{
	u32 cmax = FP(ps->cfg.cwnd_max), i;

	p->cnt.delivered += n;
	p->ep_delivered += n;
	ps->ep_total += n;
	p->consec_lost = 0;
	p->last_deliver_ns = now;
	if (p->state == MRXE_PST_DEAD) {
		/*
		 * A delivered probe (or a late packet) revives the path: a
		 * fresh port, whose capacity is not known, starts over.
		 */
		p->state = MRXE_PST_ACTIVE;
		p->probe_out = false;
		p->probe_backoff_ns = 0;
		p->cwnd = FP(ps->cfg.cwnd_init);
		p->ssthresh = cmax;
	} else if (p->state == MRXE_PST_SUSPECT) {
		/*
		 * Losses in a row, then a delivery: a drop-tail queue's burst
		 * loss, not a failure.  The path keeps the window its losses
		 * cut (restarting slow start towards the QP's whole window
		 * overshot the queue again at once).
		 */
		p->state = MRXE_PST_ACTIVE;
		p->probe_out = false;
	}
	/*
	 * Window validation (RFC 7661 4.1): a path that had less than half
	 * its window in flight was not limited by it, and these deliveries
	 * say nothing about a larger one.  The scheduler gives new packets to
	 * the lowest fill, so a path whose window ran ahead of what it
	 * carries would take every packet once the QP's window frees up.
	 */
	if (FP(was_inflight) * 2 < p->cwnd)
		return;
	for (i = 0; i < n && p->cwnd < cmax; i++) {
		if (p->cwnd < p->ssthresh)
			p->cwnd += FP(1);		/* slow start */
		else
			p->cwnd += FP(FP(1)) / p->cwnd;	/* +1 per window */
	}
	if (p->cwnd > cmax)
		p->cwnd = cmax;
}

static void go_dead(struct mrxe_path_set *ps, u8 i, u64 now)
{
	struct mrxe_path *p = &ps->p[i];
	u64 b;

	if (p->state != MRXE_PST_DEAD)
		p->cnt.dead++;
	p->state = MRXE_PST_DEAD;
	p->probe_out = false;
	p->dead_at_ns = now;
	b = p->probe_backoff_ns ? p->probe_backoff_ns * 2 : ps->cfg.probe_ns;
	if (b > ps->cfg.probe_max_ns)
		b = ps->cfg.probe_max_ns;
	p->probe_backoff_ns = b;
	p->probe_at_ns = now + b;
	p->cwnd = FP(ps->cfg.cwnd_min);
	/* new entropy: the next probe tries another ECMP choice */
	new_port(ps, i, true);
}

/* Nothing delivered on @p for this long means it may be dead. */
static u64 quiet_ns(const struct mrxe_path_set *ps, const struct mrxe_path *p)
{
	u64 q = ps->cfg.dead_ns, b = best_srtt(ps);

	/*
	 * Longer than this path's RTT, and long enough for a first delivery
	 * on a path whose RTT is not known yet.
	 */
	if (q < 2 * p->srtt_ns)
		q = 2 * p->srtt_ns;
	if (q < 4 * b)
		q = 4 * b;
	return q;
}

static void on_lost(struct mrxe_path_set *ps, u8 i, u32 n, u64 now)
{
	struct mrxe_path *p = &ps->p[i];
	u32 cmin = FP(ps->cfg.cwnd_min);

	p->cnt.lost += n;
	p->consec_lost += n;
	if (p->state == MRXE_PST_DEAD) {
		if (p->probe_out)
			go_dead(ps, i, now);	/* the probe was lost */
		return;
	}
	/* multiplicative decrease, once per path RTT (RFC 5681 3.1 style) */
	if (!p->cut_ns || now - p->cut_ns >= (p->srtt_ns ? p->srtt_ns : 1)) {
		p->cut_ns = now;
		p->ssthresh = p->cwnd / 2 > cmin ? p->cwnd / 2 : cmin;
		p->cwnd = p->ssthresh;
		p->cnt.cwnd_cuts++;
	}
	if (ps->n > 1 && p->consec_lost >= ps->cfg.suspect_losses)
		p->state = MRXE_PST_SUSPECT;
}

/* SUSPECT -> DEAD: dead_losses in a row and nothing delivered for quiet_ns. */
static void judge(struct mrxe_path_set *ps, u8 i, u64 now)
{
	struct mrxe_path *p = &ps->p[i];

	if (p->state != MRXE_PST_SUSPECT || p->probe_out || ps->n == 1)
		return;
	if (p->consec_lost >= ps->cfg.dead_losses &&
	    now - p->last_deliver_ns >= quiet_ns(ps, p))
		go_dead(ps, i, now);
}

/* ACTIVE <-> CONGESTED: a recent window cut, or RTT far above the best. */
static void classify(struct mrxe_path_set *ps, struct mrxe_path *p, u64 best,
		     u64 now)
{
	bool cong;

	if (p->state != MRXE_PST_ACTIVE && p->state != MRXE_PST_CONGESTED)
		return;
	cong = (p->cut_ns && now - p->cut_ns < (p->srtt_ns ? p->srtt_ns : 1)) ||
	       (best && p->srtt_ns > 2 * best);
	p->state = cong ? MRXE_PST_CONGESTED : MRXE_PST_ACTIVE;
}

/* A fresh port for a path that keeps its state (imbalance, exploration). */
static void repath(struct mrxe_path_set *ps, u8 i)
{
	struct mrxe_path *p = &ps->p[i];

	p->prev_port = p->port;
	new_port(ps, i, true);
	p->cnt.repaths++;
	p->strikes = 0;
	ps->calm = 0;
	/*
	 * The fresh port may hash onto an idle link: the path keeps its
	 * window but slow-starts from it (no threshold), so it fills a free
	 * link in a few RTTs instead of one packet per RTT.
	 */
	p->ssthresh = FP(ps->cfg.cwnd_max);
}

static bool busy_epoch(const struct mrxe_path_set *ps)
{
	u32 usable_n = ps->n - mrxe_path_count(ps, MRXE_PST_DEAD);

	return ps->ep_total >= 16 * (usable_n ? usable_n : 1);
}

/* End an exploration by returning the path to its old port. */
static void explore_revert(struct mrxe_path_set *ps)
{
	struct mrxe_path *p = &ps->p[ps->exp_path];

	/* a path that died meanwhile already has a fresh port */
	if (p->state != MRXE_PST_DEAD &&
	    !port_taken(ps, ps->exp_path, p->prev_port)) {
		p->port = p->prev_port;
		p->gen++;
		p->cnt.reverts++;
	}
	ps->exp_path = MRXE_PATH_NONE;
	ps->calm = 0;
	if (ps->explore_every < EXPLORE_MAX)
		ps->explore_every *= 2;
}

/* The exploration of ps->exp_path after one more counted epoch. */
static void explore_step(struct mrxe_path_set *ps, u64 len)
{

	if (ps->exp_left-- < EXPLORE_EPOCHS) {
		ps->exp_pkts += ps->ep_total;
		ps->exp_ns += len;
	}
	if (ps->exp_left)
		return;
	/* rate after < 15/16 of before (cross-multiplied: no division) */
	if (ps->exp_pkts * ps->ref_ns * 16 < ps->ref_pkts * ps->exp_ns * 15) {
		explore_revert(ps);
		return;
	}
	ps->exp_path = MRXE_PATH_NONE;
	ps->calm = 0;
	/*
	 * A gain: keep looking often.  No change (the fresh port took the
	 * same link, or one as good) cost nothing, so it does not slow the
	 * next exploration down either; only a revert (a loss) doubles the
	 * interval.  A collided QP whose fresh port drew its old link again
	 * tries again soon; a spread QP pays for its explorations with
	 * reverts and so explores rarely.
	 */
	if (ps->exp_pkts * ps->ref_ns * 8 > ps->ref_pkts * ps->exp_ns * 9)
		ps->explore_every = EXPLORE_MIN;
}

/* Imbalance: the worst path with enough strikes takes a fresh port. */
static void imbalance_step(struct mrxe_path_set *ps)
{
	u32 top = 0;
	u8 i, worst = MRXE_PATH_NONE;
	struct mrxe_path *p;

	for (i = 0; i < ps->n; i++)
		if (usable(&ps->p[i]) && ps->p[i].ep_delivered > top)
			top = ps->p[i].ep_delivered;
	for (i = 0; i < ps->n; i++) {
		p = &ps->p[i];
		if (!usable(p)) {
			p->strikes = 0;
			continue;
		}
		if (p->hold) {
			p->hold--;
			continue;
		}
		if ((u64)p->ep_delivered * 8 >= (u64)top * 5) {
			p->strikes = 0;
			p->backoff = REPATH_HOLD_MIN;
			continue;
		}
		if (p->strikes < 255)
			p->strikes++;
		if (p->strikes >= ps->cfg.repath_strikes &&
		    (worst == MRXE_PATH_NONE ||
		     p->ep_delivered < ps->p[worst].ep_delivered))
			worst = i;
	}
	if (worst == MRXE_PATH_NONE)
		return;
	p = &ps->p[worst];
	repath(ps, worst);
	p->hold = p->backoff;
	if (p->backoff < REPATH_HOLD_MAX)
		p->backoff *= 2;
	ps->explore_every = EXPLORE_MIN;
}

/* Start exploring: one path in turn takes a fresh port. */
static void explore_start(struct mrxe_path_set *ps, u64 len)
{
	u8 i = ps->exp_rr % ps->n;

	ps->exp_rr = (u8)((i + 1) % ps->n);
	if (!usable(&ps->p[i]))
		return;
	ps->ref_pkts = ps->last_pkts + ps->ep_total;
	ps->ref_ns = ps->last_ns + len;
	ps->exp_pkts = 0;
	ps->exp_ns = 0;
	ps->exp_left = EXPLORE_EPOCHS;
	ps->exp_path = i;
	repath(ps, i);
}

static u64 epoch_len(const struct mrxe_path_set *ps)
{
	u64 e = 4 * best_srtt(ps);

	return e > ps->cfg.epoch_ns ? e : ps->cfg.epoch_ns;
}

/* End of an epoch (mrxe_path.h, "Re-pathing"). */
static void epoch_end(struct mrxe_path_set *ps, u64 now)
{
	u64 len = now - ps->ep_start_ns;
	bool troubled = mrxe_path_count(ps, MRXE_PST_DEAD);
	u8 i;

	if (ps->exp_path != MRXE_PATH_NONE &&
	    (!busy_epoch(ps) || troubled)) {
		/*
		 * Idle, application-limited, or a path died: no fair
		 * comparison.  The old port is the known one.
		 */
		explore_revert(ps);
	} else if (!busy_epoch(ps)) {
		/* nothing to judge */
	} else if (ps->exp_path != MRXE_PATH_NONE) {
		explore_step(ps, len);
	} else {
		ps->calm++;
		imbalance_step(ps);
		if (ps->calm >= ps->explore_every && !troubled)
			explore_start(ps, len);
	}
	if (busy_epoch(ps)) {
		ps->last_pkts = ps->ep_total;
		ps->last_ns = len;
	}
	for (i = 0; i < ps->n; i++)
		ps->p[i].ep_delivered = 0;
	ps->ep_total = 0;
	ps->ep_start_ns = now;
}

void mrxe_path_sync(struct mrxe_path_set *ps, const struct mrxe_sack *sb,
		    u64 now)
{
	const struct mrxe_sack_path *t;
	struct mrxe_path *p;
	u32 d, l;
	u64 best;
	u8 i;

	for (i = 0; i < ps->n; i++) {
		p = &ps->p[i];
		t = &sb->path[i];
		/* a newer per-path RACK delivery: its RTT is this path's */
		if (t->rack_valid && t->rack_xmit_ns != p->seen_rack_ns) {
			p->seen_rack_ns = t->rack_xmit_ns;
			rtt_sample(p, t->rack_rtt_ns);
		}
		d = t->delivered - p->seen_delivered;
		l = t->lost - p->seen_lost;
		p->seen_delivered = t->delivered;
		p->seen_lost = t->lost;
		p->inflight = t->inflight;
		/* a loss and a later delivery in one ACK: the path works */
		if (l)
			on_lost(ps, i, l, now);
		if (d)
			on_delivered(ps, p, d, t->inflight + d + l, now);
	}
	best = best_srtt(ps);
	for (i = 0; i < ps->n; i++) {
		judge(ps, i, now);
		classify(ps, &ps->p[i], best, now);
	}
	if (ps->n > 1 && !ps->cfg.repath_off &&
	    now - ps->ep_start_ns >= epoch_len(ps))
		epoch_end(ps, now);
	ps->sched_ns = now;
}

/* The scoreboard was re-initialised (mrxe_sack_init): its tallies are 0. */
void mrxe_path_sb_reset(struct mrxe_path_set *ps)
{
	u8 i;

	for (i = 0; i < MRXE_PATH_MAX; i++) {
		ps->p[i].seen_delivered = 0;
		ps->p[i].seen_lost = 0;
		ps->p[i].seen_rack_ns = 0;
		ps->p[i].inflight = 0;
	}
}

void mrxe_path_on_ecn(struct mrxe_path_set *ps, u8 path)
{
	if (path < ps->n)
		ps->p[path].cnt.ecn++;
}

u32 mrxe_path_count(const struct mrxe_path_set *ps, u8 state)
{
	u32 n = 0;
	u8 i;

	for (i = 0; i < ps->n; i++)
		n += ps->p[i].state == state;
	return n;
}

int mrxe_path_check(const struct mrxe_path_set *ps)
{
	u8 i, j;

	if (ps->n < 1 || ps->n > MRXE_PATH_MAX)
		return -1;
	for (i = 0; i < ps->n; i++) {
		const struct mrxe_path *p = &ps->p[i];

		if (p->cwnd < FP(ps->cfg.cwnd_min) ||
		    p->cwnd > FP(ps->cfg.cwnd_max))
			return -2;
		if (p->state > MRXE_PST_DEAD)
			return -3;
		if (p->port < 0xc000 && (i || p->gen))
			return -4;
		for (j = 0; j < i; j++)
			if (ps->p[j].port == p->port)
				return -5;
	}
	return 0;
}
