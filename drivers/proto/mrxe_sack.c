// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Sender SACK scoreboard, RACK-TLP (RFC 8985) and RTO (RFC 6298); the
 * invariant and the rules are stated in mrxe_sack.h.
 */
#include "mrxe_sack.h"

#define REO_PERSIST	16	/* RFC 8985 6.2 step 4: reo_wnd_persist */

void mrxe_sack_init(struct mrxe_sack *sb, u32 isn, const struct mrxe_sack_cfg *cfg)
{
	memset(sb, 0, sizeof(*sb));
	sb->una = isn & MRXE_PSN_MASK;
	sb->nxt = sb->una;
	mrxe_rtt_init(&sb->rtt, cfg->rto_floor_ns, cfg->rto_ceil_ns,
		      cfg->rto_init_ns, cfg->min_rtt_win_ns);
	sb->reo_mult = 1;
	sb->reo_mult_max = cfg->reo_mult_max ? cfg->reo_mult_max : 16;
	sb->reo_persist_max = cfg->reo_persist ? cfg->reo_persist : REO_PERSIST;
	sb->tlp_delack_ns = cfg->tlp_delack_ns;
	sb->no_tlp = cfg->no_tlp;
	sb->wnd = cfg->wnd && cfg->wnd < MRXE_SACK_WINDOW ? cfg->wnd :
		  MRXE_SACK_WINDOW;
}

static bool sk_outstanding(const struct mrxe_sack *sb, u32 psn)
{
	s32 d = mrxe_psn_diff(psn, sb->una);

	return d >= 0 && (u32)d < mrxe_sack_outstanding(sb);
}

/*
 * RFC 8985 6.2 step 4: reo_wnd = reo_wnd_mult * min_RTT / 4, at most SRTT.
 * Deviation: at least SRTT / 4.  A sender whose own window keeps a
 * standing queue (MetaRoCE's 1024 PSNs, now 4096, in a TCG guest: SRTT many times
 * min_RTT) sees delivery and ACK-processing jitter that scales with the
 * queue, not with min_RTT; min_RTT / 4 then called delivered packets lost
 * (27% of the retransmissions at 5% loss were spurious, lab bench).
 */
u64 mrxe_sack_reo_wnd_rack(const struct mrxe_sack *sb)
{
	u64 w = ((u64)sb->reo_mult * mrxe_rtt_min(&sb->rtt)) >> 2;
	u64 srtt = mrxe_rtt_srtt(&sb->rtt);

	if (w < srtt >> 2)
		w = srtt >> 2;
	if (srtt && w > srtt)
		w = srtt;
	return w;
}

static u64 reo_wnd_learnt(const struct mrxe_sack *sb)
{
	u64 w = mrxe_sack_reo_wnd_rack(sb);

	/*
	 * Deviation: a lateness measured on a packet found delivered
	 * (reo_learn) is covered up to the RTO, not only up to SRTT: under
	 * jitter of many min_RTTs in both directions (netem "delay 1ms 1ms")
	 * SRTT follows the faster packets (Karn samples come from the newest
	 * delivery), and the later ones would still be called lost
	 * (sack_sim_test JitterFarBeyondMinRtt*, 6 x 40000 packets: 123000
	 * retransmissions capped at SRTT, 23000 at 2 SRTT, 4300 at SRTT + 4
	 * RTTVAR, under 200 at the RTO).  An outlier (a stalled guest) fades:
	 * see recovery_check().
	 */
	if (sb->reo_seen_ns > w)
		w = min_t(u64, sb->reo_seen_ns, mrxe_rtt_rto(&sb->rtt));
	return w;
}

u64 mrxe_sack_reo_wnd(const struct mrxe_sack *sb)
{
	u64 w = reo_wnd_learnt(sb), rto0 = mrxe_rtt_rto_est(&sb->rtt);

	/*
	 * Deviation: SRTT + 4 RTTVAR (RFC 6298's RTO without its floor) for
	 * the first MRXE_SACK_REO_WARMUP RTT samples, while reo_near_miss()
	 * learns what the path's reordering needs.  Before that, min_RTT / 4
	 * called the first packets of a jittery path lost: every spurious
	 * retransmission left in sack_sim_test's reordering runs was among a
	 * connection's first 20 packets.
	 */
	if (sb->rtt.samples < MRXE_SACK_REO_WARMUP && w < rto0)
		w = rto0;
	return w;
}

static void inflight_enter(struct mrxe_sack *sb, struct mrxe_sack_ent *e)
{
	e->state = MRXE_SK_INFLIGHT;
	sb->n_inflight++;
	sb->path[e->path].inflight++;
	if (e->retx)
		sb->n_retx_inflight++;
}

static void inflight_leave(struct mrxe_sack *sb, struct mrxe_sack_ent *e)
{
	sb->n_inflight--;
	sb->path[e->path].inflight--;
	if (e->retx)
		sb->n_retx_inflight--;
}

int mrxe_sack_on_send(struct mrxe_sack *sb, u32 psn, u64 now, u8 path, u32 len)
{
	struct mrxe_sack_ent *e;

	if ((psn & MRXE_PSN_MASK) != sb->nxt)
		return MRXE_SACK_EPSN;
	if (mrxe_sack_full(sb))
		return MRXE_SACK_EFULL;
	if (!sb->n_inflight)
		sb->rto_base_ns = now;	/* RFC 6298 5.1 */
	e = mrxe_sack_ent(sb, psn);
	e->xmit_ns = now;
	e->len = len;
	e->path = path < MRXE_SACK_PATHS ? path : 0;
	if (e->path)
		sb->multipath = true;
	e->retx = 0;
	e->flags = 0;
	inflight_enter(sb, e);
	sb->nxt = mrxe_psn_add(sb->nxt, 1);
	sb->tlp_base_ns = now;
	sb->cnt.sent++;
	return 0;
}

static int retransmit(struct mrxe_sack *sb, u32 psn, u64 now, u8 path,
		      bool cont)
{
	struct mrxe_sack_ent *e;

	psn &= MRXE_PSN_MASK;
	if (!sk_outstanding(sb, psn))
		return MRXE_SACK_EPSN;
	e = mrxe_sack_ent(sb, psn);
	if (e->state == MRXE_SK_LOST)
		sb->n_lost--;
	else if (e->state == MRXE_SK_INFLIGHT)
		inflight_leave(sb, e);
	else
		return MRXE_SACK_EPSN;
	if (!sb->n_inflight)
		sb->rto_base_ns = now;
	e->xmit_ns = now;
	e->path = path < MRXE_SACK_PATHS ? path : 0;
	if (e->path)
		sb->multipath = true;
	if (e->retx < 255)
		e->retx++;
	e->flags &= ~(MRXE_SKF_TLP | MRXE_SKF_CONT);
	if (sb->tlp_out)
		e->flags |= MRXE_SKF_TLP;
	inflight_enter(sb, e);
	if (cont)
		e->flags |= MRXE_SKF_CONT;
	else
		sb->cnt.retransmits++;
	return 0;
}

/*
 * The duplicate named @psn, retransmitted at @xmit_ns, was unnecessary:
 * so were the PSNs that went again in its packet (a READ run).  Their
 * copies are not counted again (the DUP flag names only the first PSN).
 */
static void dup_cont(struct mrxe_sack *sb, u32 psn, u64 xmit_ns)
{
	struct mrxe_sack_ent *e;
	u32 n;

	for (n = 1; n < MRXE_SACK_WINDOW; n++) {
		psn = mrxe_psn_add(psn, 1);
		if (!mrxe_psn_before(psn, sb->nxt))
			break;
		e = mrxe_sack_ent(sb, psn);
		if (!(e->flags & MRXE_SKF_CONT) || e->xmit_ns != xmit_ns ||
		    (e->state != MRXE_SK_SACKED && e->state != MRXE_SK_FREE))
			break;
		e->flags |= MRXE_SKF_SPURIOUS;
	}
}

int mrxe_sack_on_retransmit(struct mrxe_sack *sb, u32 psn, u64 now, u8 path)
{
	return retransmit(sb, psn, now, path, false);
}

int mrxe_sack_on_retransmit_cont(struct mrxe_sack *sb, u32 psn, u64 now,
				 u8 path)
{
	return retransmit(sb, psn, now, path, true);
}

static void mark_lost(struct mrxe_sack *sb, struct mrxe_sack_ent *e)
{
	inflight_leave(sb, e);
	e->state = MRXE_SK_LOST;
	sb->path[e->path].lost++;
	sb->n_lost++;
	sb->cnt.lost++;
	sb->in_recovery = true;
}

/* RFC 8985 RACK_sent_after(): sent later, PSN order breaks ties. */
static bool sent_after(u64 t1, u32 p1, u64 t2, u32 p2)
{
	return t1 > t2 || (t1 == t2 && mrxe_psn_after(p1, p2));
}

/* RACK's newest delivery (all paths) was sent after @e (PSN @psn). */
static bool rack_after(const struct mrxe_sack *sb, u32 psn,
		       const struct mrxe_sack_ent *e)
{
	return sb->rack_valid &&
	       sent_after(sb->rack_xmit_ns, sb->rack_psn, e->xmit_ns, psn);
}

/* ... the newest delivery on path @sp was. */
static bool path_rack_after(const struct mrxe_sack_path *sp, u32 psn,
			    const struct mrxe_sack_ent *e)
{
	return sp->rack_valid &&
	       sent_after(sp->rack_xmit_ns, sp->rack_psn, e->xmit_ns, psn);
}

/* Reordering beyond reo_wnd was seen: widen it, at most once per SRTT. */
static void reo_widen(struct mrxe_sack *sb, u64 now)
{
	if (sb->reo_widen_ns && now - sb->reo_widen_ns < mrxe_rtt_srtt(&sb->rtt))
		return;
	sb->reo_widen_ns = now;
	if (sb->reo_mult < sb->reo_mult_max)
		sb->reo_mult++;
	sb->reo_persist = sb->reo_persist_max;
}

void mrxe_sack_reo_spurious(struct mrxe_sack *sb, u64 now)
{
	sb->cnt.spurious++;
	reo_widen(sb, now);
}

/*
 * A packet declared lost was delivered @rtt after it was sent: it was
 * rtt - min_RTT later than the fastest, and reo_wnd must cover that.  One
 * such measurement learns the reordering's extent at once, where reo_mult
 * grows by min_RTT / 4 per SRTT: jitter of many min_RTTs (netem "delay 1ms
 * 1ms" over a fast loopback) kept half the packets retransmitted while it
 * grew (sack_sim_test JitterFarBeyondMinRtt*).
 */
static void reo_learn(struct mrxe_sack *sb, u64 rtt, u64 now)
{
	u64 min_rtt = mrxe_rtt_min(&sb->rtt), late;

	if (!min_rtt || rtt <= min_rtt)
		return;
	late = rtt - min_rtt;
	late += late >> 3;
	if (late > sb->reo_seen_ns)
		sb->reo_seen_ns = late;
	sb->reo_seen_at_ns = now;
}

/*
 * A packet never retransmitted nor declared lost arrived after one sent
 * later (on its own path, for a multipath QP: paths of different RTTs
 * deliver out of order by design).  It missed being called lost by
 * reo_wnd minus its lateness behind that packet's RTT.  When it came
 * within half of reo_wnd, the reordering's tail is about to cross it:
 * cover 1.5 x the lateness now, before a spurious retransmission has to
 * teach it (reo_learn).  Deviation from RFC 8985, which learns only from
 * DSACKs; Linux TCP likewise grows its reordering degree from SACKs of
 * holes that fill without a retransmission (tcp_check_sack_reordering).
 * Same fading as reo_learn (recovery_check).
 */
static void reo_near_miss(struct mrxe_sack *sb, u32 psn,
			  const struct mrxe_sack_ent *e, u64 now)
{
	const struct mrxe_sack_path *sp = &sb->path[e->path];
	u64 rack_rtt, late;

	if (sb->multipath ? !path_rack_after(sp, psn, e) :
			    !rack_after(sb, psn, e))
		return;
	rack_rtt = sb->multipath ? sp->rack_rtt_ns : sb->rack_rtt_ns;
	if (now - e->xmit_ns <= rack_rtt)
		return;
	late = now - e->xmit_ns - rack_rtt;
	if (late * 2 < reo_wnd_learnt(sb))
		return;
	late += late >> 1;
	/* reordering this close to reo_wnd goes on: keep what was learnt */
	sb->reo_seen_at_ns = now;
	if (late > sb->reo_seen_ns) {
		sb->reo_seen_ns = late;
		sb->cnt.reo_near++;
	}
}

/* Per-ACK scratch state of mrxe_sack_on_ack(). */
struct ack_ctx {
	u64	now, echo_ns;
	u32	echo_psn;
	u64	karn_xmit;	/* newest never-retransmitted delivery */
	u8	karn_path;	/* ... and its path */
	bool	karn;
	u64	rack_xmit;	/* newest delivery valid for RACK */
	u32	rack_psn;
	bool	rack;
	u32	prack_mask;	/* paths with a RACK candidate */
	u64	prack_xmit[MRXE_SACK_PATHS];
	u32	prack_psn[MRXE_SACK_PATHS];
	bool	pre_rto;	/* F-RTO: a copy sent before the RTO arrived */
	struct mrxe_sack_ack_res *res;
};

static void deliver(struct mrxe_sack *sb, u32 psn, struct mrxe_sack_ent *e,
		    struct ack_ctx *c)
{
	u64 min_rtt = mrxe_rtt_min(&sb->rtt);
	bool was_lost = e->state == MRXE_SK_LOST;
	bool spur = false;

	if (was_lost) {
		sb->n_lost--;
	} else {
		if (!e->retx)
			reo_near_miss(sb, psn, e, c->now);
		inflight_leave(sb, e);
	}
	e->state = MRXE_SK_SACKED;
	sb->n_sacked++;

	if (e->retx) {
		/*
		 * RFC 8985 6.2 step 2: is this the ACK of an older copy?  The
		 * echoed send time says so exactly; without it, a delivery
		 * sooner than 3/4 min_rtt after the retransmission cannot be
		 * the retransmission's (the margin absorbs min_rtt noise).
		 */
		if (c->echo_ns && psn == c->echo_psn) {
			spur = mrxe_mrh_ts(c->echo_ns) < mrxe_mrh_ts(e->xmit_ns);
			if (spur)
				reo_learn(sb, c->now - c->echo_ns, c->now);
		} else
			spur = min_rtt &&
			       c->now - e->xmit_ns < min_rtt - (min_rtt >> 2);
		if (spur && !(e->flags & MRXE_SKF_SPURIOUS)) {
			e->flags |= MRXE_SKF_SPURIOUS;
			/* a packet's further PSNs: counted with its first */
			if (!(e->flags & MRXE_SKF_CONT)) {
				sb->cnt.spurious++;
				c->res->spurious++;
				reo_widen(sb, c->now);
			}
		}
	} else if (was_lost) {
		/* declared lost, arrived before its retransmission */
		reo_learn(sb, c->now - e->xmit_ns, c->now);
		reo_widen(sb, c->now);
	}
	if (!spur && (!c->rack || sent_after(e->xmit_ns, psn, c->rack_xmit,
					     c->rack_psn))) {
		c->rack = true;
		c->rack_xmit = e->xmit_ns;
		c->rack_psn = psn;
	}
	/*
	 * Per-path RACK only trusts a delivery it can attribute to one copy
	 * (Karn): never retransmitted, or the echo names this transmission;
	 * otherwise the first copy's arrival on its own path would count as
	 * a fast delivery on the retransmission's path.
	 */
	if (!spur && (!e->retx || (c->echo_ns && psn == c->echo_psn)) &&
	    (!(c->prack_mask & BIT(e->path)) ||
		      sent_after(e->xmit_ns, psn, c->prack_xmit[e->path],
				 c->prack_psn[e->path]))) {
		c->prack_mask |= BIT(e->path);
		c->prack_xmit[e->path] = e->xmit_ns;
		c->prack_psn[e->path] = psn;
	}
	if (!e->retx && (!c->karn || e->xmit_ns > c->karn_xmit)) {
		c->karn = true;
		c->karn_xmit = e->xmit_ns;
		c->karn_path = e->path;
	}
	/* F-RTO: the pipe delivered what it held before the RTO */
	if (sb->frto && (spur || e->xmit_ns < sb->frto_ns))
		c->pre_rto = true;
	sb->cnt.delivered++;
	sb->path[e->path].delivered++;
	sb->path[e->path].deliver_ns = c->now;
	c->res->delivered++;
	c->res->bytes += e->len;
}

/* Highest SACKED PSN as an offset from una, -1 when none. */
static int highest_sacked(const struct mrxe_sack *sb)
{
	int i;

	if (!sb->n_sacked)
		return -1;
	for (i = (int)mrxe_sack_outstanding(sb) - 1; i >= 0; i--)
		if (sb->ent[(sb->una + i) & (MRXE_SACK_WINDOW - 1)].state ==
		    MRXE_SK_SACKED)
			return i;
	return -1;
}

/*
 * RFC 8985 6.2 step 5, RACK_detect_loss(): mark lost what was sent before
 * the newest delivered packet and is older than rack.rtt + reo_wnd; arm
 * the reordering timer for the earliest of the others.  Also counts holes.
 */
static u32 detect_loss(struct mrxe_sack *sb, u64 now)
{
	int hi = highest_sacked(sb);
	u32 n = mrxe_sack_outstanding(sb), lost = 0, i, psn;
	u64 reo = mrxe_sack_reo_wnd(sb), dl, d2, max_rtt = sb->rack_rtt_ns;
	const struct mrxe_sack_path *sp;
	struct mrxe_sack_ent *e;

	for (i = 0; i < MRXE_SACK_PATHS; i++)
		if (sb->path[i].rack_valid && sb->path[i].rack_rtt_ns > max_rtt)
			max_rtt = sb->path[i].rack_rtt_ns;
	sb->reo_deadline_ns = 0;
	for (i = 0; i < n; i++) {
		psn = mrxe_psn_add(sb->una, i);
		e = mrxe_sack_ent(sb, psn);
		if (e->state == MRXE_SK_SACKED)
			continue;
		if ((int)i < hi && !(e->flags & MRXE_SKF_HOLE)) {
			e->flags |= MRXE_SKF_HOLE;
			sb->cnt.holes++;
		}
		if (e->state != MRXE_SK_INFLIGHT || !rack_after(sb, psn, e))
			continue;
		/*
		 * A later packet on any path: the slowest path's RTT, and
		 * (multipath) only once the packet's own path went silent
		 * that long.
		 */
		sp = &sb->path[e->path];
		dl = e->xmit_ns + max_rtt + reo;
		if (sb->multipath && sp->deliver_ns + max_rtt + reo > dl)
			dl = sp->deliver_ns + max_rtt + reo;
		/* a later packet on its own path: that path's RTT */
		if (path_rack_after(sp, psn, e)) {
			d2 = e->xmit_ns + sp->rack_rtt_ns + reo;
			if (d2 < dl)
				dl = d2;
		}
		if (dl <= now) {
			mark_lost(sb, e);
			lost++;
		} else if (!sb->reo_deadline_ns || dl < sb->reo_deadline_ns) {
			sb->reo_deadline_ns = dl;
		}
	}
	return lost;
}

static void advance_una(struct mrxe_sack *sb, struct mrxe_sack_ack_res *res)
{
	struct mrxe_sack_ent *e;

	while (sb->una != sb->nxt) {
		e = mrxe_sack_ent(sb, sb->una);
		if (e->state != MRXE_SK_SACKED)
			break;
		e->state = MRXE_SK_FREE;
		sb->n_sacked--;
		sb->una = mrxe_psn_add(sb->una, 1);
		res->una_moved = true;
	}
}

/* End of a loss recovery episode: RFC 8985 6.2 step 4 reo_wnd_persist. */
static void recovery_check(struct mrxe_sack *sb, u64 now)
{
	if (!sb->in_recovery || sb->n_lost || sb->n_retx_inflight)
		return;
	sb->in_recovery = false;
	/*
	 * A recovery 256 SRTT after the last lateness was learnt: halve it, so
	 * that one outlier does not slow loss detection for long; persistent
	 * reordering teaches it again (one spurious retransmission).
	 */
	if (sb->reo_seen_ns &&
	    now - sb->reo_seen_at_ns > 256 * mrxe_rtt_srtt(&sb->rtt)) {
		sb->reo_seen_ns >>= 1;
		sb->reo_seen_at_ns = now;
	}
	if (sb->reo_persist) {
		sb->reo_persist--;
	} else {
		sb->reo_mult = 1;
		sb->reo_seen_ns = 0;
	}
}

static void sack_one(struct mrxe_sack *sb, u32 psn, struct ack_ctx *c)
{
	struct mrxe_sack_ent *e;

	if (!sk_outstanding(sb, psn))
		return;
	e = mrxe_sack_ent(sb, psn);
	if (e->state != MRXE_SK_SACKED)
		deliver(sb, psn, e, c);
}

/*
 * F-RTO (RFC 5682 3, with timestamps): the first ACK after the RTO that
 * delivers anything decides.  A delivered copy sent before the RTO: it was
 * spurious, the rest is still in flight.  Only the retransmission of the
 * oldest: the RTO was real, everything sent before it is lost (RFC 5682
 * step 3 / RFC 8985 6.3).  Returns the PSNs newly marked lost.
 */
static u32 frto_ack(struct mrxe_sack *sb, const struct ack_ctx *c)
{
	u32 n = mrxe_sack_outstanding(sb), lost = 0, i;
	struct mrxe_sack_ent *e;

	if (!sb->frto || !c->res->delivered)
		return 0;
	sb->frto = false;
	if (c->pre_rto) {
		sb->cnt.rto_spurious++;
		/*
		 * RFC 4015 4: an RTO this ACK's silence fired must not fire
		 * again.  Only when the ACK itself is old (it answers a packet
		 * sent before the RTO: a stall held it) - after lost ACKs the
		 * first one back answers the retransmission, and the outage
		 * teaches nothing about delay; nor does an RTO backed off by
		 * earlier ones (an outage, not one stall).
		 */
		if (sb->frto_base_ns && c->echo_ns && c->echo_ns < sb->frto_ns)
			mrxe_rtt_spurious(&sb->rtt, c->now - sb->frto_base_ns,
					  c->now);
		return 0;
	}
	for (i = 0; i < n; i++) {
		e = mrxe_sack_ent(sb, mrxe_psn_add(sb->una, i));
		if (e->state == MRXE_SK_INFLIGHT && e->xmit_ns < sb->frto_ns) {
			mark_lost(sb, e);
			lost++;
		}
	}
	return lost;
}

int mrxe_sack_on_ack(struct mrxe_sack *sb, const struct mrxe_sack_info *si,
		     u64 echo_ns, u64 now, struct mrxe_sack_ack_res *res)
{
	struct mrxe_sack_ack_res dummy;
	struct ack_ctx c = { .now = now, .echo_ns = echo_ns };
	u32 cum = si->epsn & MRXE_PSN_MASK, psn;
	struct mrxe_sack_ent *e;
	s32 back;
	u64 bm;
	u8 b;

	if (!res)
		res = &dummy;
	memset(res, 0, sizeof(*res));
	c.res = res;
	c.echo_psn = si->trigger_psn & MRXE_PSN_MASK;
	if (mrxe_psn_after(cum, sb->nxt)) {
		sb->cnt.bad_ack++;
		return MRXE_SACK_EACK;
	}
	/* cumulative part: [una, cum) */
	for (psn = sb->una; mrxe_psn_before(psn, cum); psn = mrxe_psn_add(psn, 1))
		sack_one(sb, psn, &c);
	for (b = 0; b < si->nblocks && b < MRXE_SACK_MAX_BLOCKS; b++) {
		for (bm = si->blk[b].bitmap; bm; bm &= bm - 1)
			sack_one(sb, mrxe_psn_add(si->blk[b].base,
						  mrxe_ffs64(bm)), &c);
	}
	/*
	 * A duplicate of a retransmitted PSN (DSACK-like): one of its copies
	 * was unnecessary.  A slot is only reused MRXE_SACK_WINDOW PSNs
	 * later, so a PSN acked a moment ago still has its record.
	 */
	back = mrxe_psn_diff(sb->nxt, c.echo_psn);
	if (si->trigger_dup && back > 0 && back <= MRXE_SACK_WINDOW) {
		e = mrxe_sack_ent(sb, c.echo_psn);
		if ((e->state == MRXE_SK_SACKED || e->state == MRXE_SK_FREE) &&
		    e->retx && !(e->flags & MRXE_SKF_SPURIOUS)) {
			e->flags |= MRXE_SKF_SPURIOUS;
			sb->cnt.spurious++;
			res->spurious++;
			reo_widen(sb, now);
			dup_cont(sb, c.echo_psn, e->xmit_ns);
		}
	}
	if (c.karn) {
		res->rtt_ns = now - c.karn_xmit;
		res->rtt_path = c.karn_path;
		mrxe_rtt_sample(&sb->rtt, res->rtt_ns, now);
	}
	/* RFC 8985 6.2 step 2: RACK.rtt and RACK.xmit_ts */
	if (c.rack) {
		sb->rack_rtt_ns = now - c.rack_xmit;
		if (!sb->rack_valid || sent_after(c.rack_xmit, c.rack_psn,
						  sb->rack_xmit_ns, sb->rack_psn)) {
			sb->rack_xmit_ns = c.rack_xmit;
			sb->rack_psn = c.rack_psn;
			sb->rack_valid = true;
		}
	}
	for (b = 0; b < MRXE_SACK_PATHS; b++) {
		struct mrxe_sack_path *sp = &sb->path[b];

		if (!(c.prack_mask & BIT(b)))
			continue;
		sp->rack_rtt_ns = now - c.prack_xmit[b];
		if (!sp->rack_valid || sent_after(c.prack_xmit[b], c.prack_psn[b],
						  sp->rack_xmit_ns, sp->rack_psn)) {
			sp->rack_xmit_ns = c.prack_xmit[b];
			sp->rack_psn = c.prack_psn[b];
			sp->rack_valid = true;
		}
	}
	if (res->delivered) {
		sb->rto_base_ns = now;	/* RFC 6298 5.3 */
		sb->tlp_base_ns = now;
		sb->tlp_out = false;
	}
	advance_una(sb, res);
	res->lost = frto_ack(sb, &c);
	res->lost += detect_loss(sb, now);
	recovery_check(sb, now);
	return 0;
}

bool mrxe_sack_next_lost(const struct mrxe_sack *sb, u32 *psn)
{
	u32 n = mrxe_sack_outstanding(sb), i, p;

	if (!sb->n_lost)
		return false;
	for (i = 0; i < n; i++) {
		p = mrxe_psn_add(sb->una, i);
		if (sb->ent[p & (MRXE_SACK_WINDOW - 1)].state == MRXE_SK_LOST) {
			*psn = p;
			return true;
		}
	}
	return false;
}

static u64 rto_deadline(const struct mrxe_sack *sb)
{
	return sb->n_inflight ? sb->rto_base_ns + mrxe_rtt_rto(&sb->rtt) : 0;
}

/* RFC 8985 7.2: PTO = 2 * SRTT (+ worst-case delayed ACK with one packet). */
static u64 tlp_deadline(const struct mrxe_sack *sb)
{
	u64 srtt = mrxe_rtt_srtt(&sb->rtt), pto, dl, rto;

	if (sb->no_tlp || sb->tlp_out || sb->n_lost || sb->n_retx_inflight ||
	    !sb->n_inflight || !srtt)
		return 0;
	pto = 2 * srtt;
	if (sb->n_inflight == 1)
		pto += sb->tlp_delack_ns;
	dl = sb->tlp_base_ns + pto;
	rto = rto_deadline(sb);
	return dl < rto ? dl : 0;
}

u64 mrxe_sack_timer(const struct mrxe_sack *sb, enum mrxe_sack_timer_kind *kind)
{
	u64 t = 0, d;
	enum mrxe_sack_timer_kind k = MRXE_SACK_T_NONE;

	d = rto_deadline(sb);
	if (d) {
		t = d;
		k = MRXE_SACK_T_RTO;
	}
	d = tlp_deadline(sb);
	if (d && (!t || d < t)) {
		t = d;
		k = MRXE_SACK_T_TLP;
	}
	d = sb->n_inflight ? sb->reo_deadline_ns : 0;
	if (d && (!t || d < t)) {
		t = d;
		k = MRXE_SACK_T_REO;
	}
	if (kind)
		*kind = k;
	return t;
}

/*
 * RFC 8985 6.3: on RTO the oldest outstanding packet is lost, the others
 * only if older than rack.rtt + reo_wnd; then RFC 6298 5.5 backoff.  The
 * first RTO of an episode marks only the oldest and lets the next ACK
 * decide the rest (F-RTO, frto_ack()); an RTO while that is pending
 * (nothing came back) marks as RFC 8985 does.
 */
static void rto_fire(struct mrxe_sack *sb, u64 now)
{
	u64 rrtt = sb->rack_valid ? sb->rack_rtt_ns : mrxe_rtt_srtt(&sb->rtt);
	u32 n = mrxe_sack_outstanding(sb), i;
	u64 reo = mrxe_sack_reo_wnd(sb);
	bool first = true, frto = !sb->frto;
	struct mrxe_sack_ent *e;

	for (i = 0; i < n; i++) {
		e = mrxe_sack_ent(sb, mrxe_psn_add(sb->una, i));
		if (e->state != MRXE_SK_INFLIGHT)
			continue;
		if (first || (!frto && e->xmit_ns + rrtt + reo <= now))
			mark_lost(sb, e);
		first = false;
	}
	sb->frto = frto;
	sb->frto_ns = now;
	/* a stall to learn from ends at the episode's first RTO (no backoff) */
	if (frto)
		sb->frto_base_ns = sb->rtt.backoff ? 0 : sb->rto_base_ns;
	mrxe_rtt_backoff(&sb->rtt);
	sb->rto_base_ns = now;
	sb->tlp_out = false;
	sb->reo_deadline_ns = 0;
	sb->cnt.rto++;
}

u32 mrxe_sack_on_timer(struct mrxe_sack *sb, u64 now, u32 *probe_psn)
{
	u32 ev = 0, i;
	u64 d;

	if (sb->reo_deadline_ns && sb->reo_deadline_ns <= now)
		detect_loss(sb, now);
	d = rto_deadline(sb);
	if (d && d <= now) {
		rto_fire(sb, now);
		ev |= MRXE_SACK_EV_RTO;
	} else {
		d = tlp_deadline(sb);
		if (d && d <= now) {
			/* RFC 8985 7.3: probe with the highest PSN in flight */
			for (i = mrxe_sack_outstanding(sb); i-- > 0;) {
				u32 p = mrxe_psn_add(sb->una, i);

				if (mrxe_sack_ent(sb, p)->state == MRXE_SK_INFLIGHT) {
					if (probe_psn)
						*probe_psn = p;
					break;
				}
			}
			sb->tlp_out = true;
			sb->cnt.tlp++;
			ev |= MRXE_SACK_EV_PROBE;
		}
	}
	if (sb->n_lost)
		ev |= MRXE_SACK_EV_LOST;
	return ev;
}

int mrxe_sack_check(const struct mrxe_sack *sb)
{
	u32 n = mrxe_sack_outstanding(sb), cnt[4] = { 0 }, retx = 0, i;
	u32 pin[MRXE_SACK_PATHS] = { 0 };
	const struct mrxe_sack_ent *e;

	if (n > MRXE_SACK_WINDOW)
		return -1;
	for (i = 0; i < MRXE_SACK_WINDOW; i++) {
		u32 off = (i - sb->una) & (MRXE_SACK_WINDOW - 1);

		e = &sb->ent[i];
		if (off >= n) {
			if (e->state != MRXE_SK_FREE)
				return -2;
			continue;
		}
		if (e->state == MRXE_SK_FREE || e->state > MRXE_SK_LOST)
			return -3;
		cnt[e->state]++;
		if (e->state == MRXE_SK_INFLIGHT && e->retx)
			retx++;
		if (e->state == MRXE_SK_INFLIGHT)
			pin[e->path]++;
	}
	for (i = 0; i < MRXE_SACK_PATHS; i++)
		if (pin[i] != sb->path[i].inflight)
			return -6;
	if (cnt[MRXE_SK_INFLIGHT] != sb->n_inflight ||
	    cnt[MRXE_SK_SACKED] != sb->n_sacked ||
	    cnt[MRXE_SK_LOST] != sb->n_lost || retx != sb->n_retx_inflight)
		return -4;
	if (n && mrxe_sack_ent((struct mrxe_sack *)sb, sb->una)->state ==
		 MRXE_SK_SACKED)
		return -5;
	return 0;
}
