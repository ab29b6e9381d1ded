// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * MetaRoCE multipath glue: the QP's path set (drivers/proto/mrxe_path.h,
 * embedded in the sender half, qp->pipe.meta->snd.paths) and the calls the
 * requester makes into it.  Pipeline state: touched only from the QP's
 * work item with pipe.mutex held (drivers/mrxe_pipe.h), except the netlink
 * snapshot in mrxe_path_glue_fill() (copied under pipe.lock, see
 * mrxe_path_snapshot()).
 *
 * Per packet (Documentation/design.rst "Multipath"):
 *   mrxe_path_glue_pick()  before the packet goes out: sync the path set
 *                          with the scoreboard's per-path tallies, choose a
 *                          path (a retransmission avoids the path the PSN
 *                          was lost on), write MRH path/path_gen;
 *   mrxe_path_glue_sport() its UDP source port (ECMP entropy);
 *   mrxe_path_glue_sent()  after the scoreboard recorded it: which path,
 *                          counted once per packet.
 * The responder answers (ACK, READ response, atomic ACK) from its own
 * fixed port, path 0 of its own set (the RoCEv2 port): see design.rst.
 */
#include <net/netlink.h>
#include <rdma/mrxe-netlink.h>

#include "mrxe_dp.h"

/*
 * Nothing delivered on a path for 20 ms after dead_losses losses in a row
 * (or 4x the best path's SRTT when longer) makes it DEAD; it is re-probed
 * on a fresh port after one MetaRoCE RTO floor (50 ms), then doubling up
 * to 800 ms.  The lab's RTTs are a few ms, TCG stalls tens of ms.
 */
#define MRXE_PATH_DEAD_NS	(20ULL * NSEC_PER_MSEC)
#define MRXE_PATH_PROBE_NS	(50ULL * NSEC_PER_MSEC)
#define MRXE_PATH_PROBE_MAX_NS	(800ULL * NSEC_PER_MSEC)
/*
 * Re-pathing epochs (ECMP collisions, mrxe_path.h): at least 20 ms, so an
 * epoch holds enough packets per path on the lab's 16 Mbit/s links.
 */
#define MRXE_PATH_EPOCH_NS	(20ULL * NSEC_PER_MSEC)

/*
 * Path windows hold new data back (mrxe_path.h, cfg.hold; MP-RDMA's
 * per-path congestion windows): on by default; 0 restores the windows that
 * only split traffic, for comparisons (bench/multipath.sh).  Read when a
 * QP's path set is created.
 */
static bool path_hold = true;
module_param(path_hold, bool, 0644);
MODULE_PARM_DESC(path_hold, "MetaRoCE multipath: per-path windows hold new packets back (default on)");

static_assert(MRXE_PATH_MAX == MRXE_MAX_PATHS);
static_assert((int)MRXE_PST_ACTIVE == (int)MRXE_PATH_ACTIVE &&
	      (int)MRXE_PST_CONGESTED == (int)MRXE_PATH_CONGESTED &&
	      (int)MRXE_PST_SUSPECT == (int)MRXE_PATH_SUSPECT &&
	      (int)MRXE_PST_DEAD == (int)MRXE_PATH_DEAD);

static bool mrxe_path_glue_on(struct mrxe_qp *qp)
{
	return qp->pipe.meta && qp->pipe.meta_tx;
}

/*
 * The scoreboard was (re)initialised (mrxe_meta_snd_init): a new path set
 * when the QP's base port or path count changed (RTS, a new AV), else only
 * the tallies restart (RNR rewind keeps what was learnt about the paths).
 */
void mrxe_path_glue_init(struct mrxe_qp *qp)
{
	struct mrxe_path_set *ps = &qp->pipe.meta->snd.paths;
	struct mrxe_path_cfg cfg = {};

	cfg.num_paths = clamp_t(u32, qp->num_paths, 1, MRXE_PATH_MAX);
	cfg.base_port = qp->pipe.sport;
	if (ps->n == cfg.num_paths && ps->cfg.base_port == cfg.base_port) {
		mrxe_path_sb_reset(ps);
		return;
	}
	cfg.dead_ns = MRXE_PATH_DEAD_NS;
	cfg.probe_ns = MRXE_PATH_PROBE_NS;
	cfg.probe_max_ns = MRXE_PATH_PROBE_MAX_NS;
	cfg.epoch_ns = MRXE_PATH_EPOCH_NS;
	cfg.hold = READ_ONCE(path_hold);
	mrxe_path_init(ps, &cfg, ktime_get_ns());
}

/*
 * May a new (not READ/atomic) packet go out on some path?  False only for a
 * multipath QP whose usable paths all have their windows full.
 */
bool mrxe_path_glue_room(struct mrxe_qp *qp)
{
	struct mrxe_path_set *ps;
	u64 now;

	if (!mrxe_path_glue_on(qp))
		return true;
	ps = &qp->pipe.meta->snd.paths;
	if (ps->n <= 1 || !ps->cfg.hold)
		return true;
	now = ktime_get_ns();
	mrxe_path_sync(ps, &qp->pipe.meta->snd.sb, now);
	return mrxe_path_room(ps, now);
}

/*
 * Path for the packet of @psn about to be sent (@retx: a retransmission);
 * writes MRH path and path_gen at @bth + BTH.  Standard mode: path 0.
 */
u8 mrxe_path_glue_pick(struct mrxe_qp *qp, u32 psn, bool retx, u8 *bth)
{
	struct mrxe_meta_qp *m = qp->pipe.meta;
	struct mrxe_path_set *ps;
	u8 avoid = MRXE_PATH_NONE, path;
	u64 now;

	if (!mrxe_path_glue_on(qp))
		return 0;
	ps = &m->snd.paths;
	if (ps->n <= 1) {
		mrxe_mrh_set_path(bth + MRXE_BTH_LEN, 0, ps->p[0].gen);
		return 0;
	}
	now = ktime_get_ns();
	mrxe_path_sync(ps, &m->snd.sb, now);
	if (retx && mrxe_psn_diff(psn, m->snd.sb.una) >= 0 &&
	    mrxe_psn_before(psn, m->snd.sb.nxt))
		avoid = mrxe_sack_ent(&m->snd.sb, psn)->path;
	path = mrxe_path_pick(ps, now, avoid);
	mrxe_mrh_set_path(bth + MRXE_BTH_LEN, path, ps->p[path].gen);
	return path;
}

u16 mrxe_path_glue_sport(struct mrxe_qp *qp, u8 path)
{
	if (!mrxe_path_glue_on(qp) || path >= qp->pipe.meta->snd.paths.n)
		return qp->pipe.sport;
	return qp->pipe.meta->snd.paths.p[path].port;
}

/* The packet of @psn left (recorded in req.meta by mrxe_req_xmit). */
u8 mrxe_path_glue_sent(struct mrxe_qp *qp, u32 psn, bool retx)
{
	const struct mrxe_pkt_meta *pm = &qp->req.meta[psn & (MRXE_PKT_RING - 1)];
	u8 path = pm->psn == psn ? pm->path : 0;

	if (mrxe_path_glue_on(qp))
		mrxe_path_on_send(&qp->pipe.meta->snd.paths, path, retx,
				  ktime_get_ns());
	return path;
}

/*
 * Netlink: one MRXE_ATTR_PATH nest per path of a MetaRoCE sender, with
 * its port, state, SRTT and window and the per-path counters as
 * MRXE_ATTR_STATS; 0 when the QP has no path set (the caller then reports
 * the standard single path).
 */
static int mrxe_path_put_stat(struct sk_buff *skb, const char *name, u64 v)
{
	struct nlattr *st = nla_nest_start(skb, MRXE_ATTR_STAT);

	if (!st || nla_put_string(skb, MRXE_ATTR_STAT_NAME, name) ||
	    nla_put_u64_64bit(skb, MRXE_ATTR_STAT_VALUE, v, MRXE_ATTR_PAD))
		return -EMSGSIZE;
	nla_nest_end(skb, st);
	return 0;
}

static int mrxe_path_put_one(struct sk_buff *skb, const struct mrxe_path *p,
			     u32 idx)
{
	const struct mrxe_path_cnt *c = &p->cnt;
	struct nlattr *nest, *stats;

	nest = nla_nest_start(skb, MRXE_ATTR_PATH);
	if (!nest ||
	    nla_put_u32(skb, MRXE_ATTR_PATH_INDEX, idx) ||
	    nla_put_u16(skb, MRXE_ATTR_PATH_SPORT, p->port) ||
	    nla_put_u32(skb, MRXE_ATTR_PATH_STATE, p->state) ||
	    nla_put_u32(skb, MRXE_ATTR_PATH_RTT_US,
			(u32)min_t(u64, p->srtt_ns / NSEC_PER_USEC,
				   U32_MAX)) ||
	    nla_put_u32(skb, MRXE_ATTR_PATH_CWND,
			p->cwnd >> MRXE_PATH_FP))
		return -EMSGSIZE;
	stats = nla_nest_start(skb, MRXE_ATTR_STATS);
	if (!stats ||
	    mrxe_path_put_stat(skb, "gen", p->gen) ||
	    mrxe_path_put_stat(skb, "inflight", p->inflight) ||
	    mrxe_path_put_stat(skb, "sent", c->sent) ||
	    mrxe_path_put_stat(skb, "retransmitted", c->retx) ||
	    mrxe_path_put_stat(skb, "delivered", c->delivered) ||
	    mrxe_path_put_stat(skb, "lost", c->lost) ||
	    mrxe_path_put_stat(skb, "ecn", c->ecn) ||
	    mrxe_path_put_stat(skb, "dead", c->dead) ||
	    mrxe_path_put_stat(skb, "probes", c->probes) ||
	    mrxe_path_put_stat(skb, "cwnd_cuts", c->cwnd_cuts) ||
	    mrxe_path_put_stat(skb, "repaths", c->repaths) ||
	    mrxe_path_put_stat(skb, "repath_reverts", c->reverts))
		return -EMSGSIZE;
	nla_nest_end(skb, stats);
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * Copy path @i of @qp under pipe.lock: cleanup sets pipe.dying under that
 * lock before it frees pipe.meta, so a copy made with !dying is of live
 * memory.  The values may be mid-update (the work item does not take
 * pipe.lock): a snapshot for reporting only.  False: no such path.
 */
static bool mrxe_path_snapshot(struct mrxe_qp *qp, u32 i, struct mrxe_path *out)
{
	unsigned long flags;
	bool ok = false;

	spin_lock_irqsave(&qp->pipe.lock, flags);
	if (!qp->pipe.dying && qp->pipe.meta && READ_ONCE(qp->pipe.meta_tx) &&
	    i < min_t(u32, READ_ONCE(qp->pipe.meta->snd.paths.n),
		      MRXE_PATH_MAX)) {
		*out = qp->pipe.meta->snd.paths.p[i];
		ok = true;
	}
	spin_unlock_irqrestore(&qp->pipe.lock, flags);
	return ok;
}

/* Returns the number of paths put (0: no path set), or -EMSGSIZE. */
int mrxe_path_glue_fill(struct sk_buff *skb, struct mrxe_qp *qp)
{
	struct mrxe_path p;
	u32 i;
	int err;

	for (i = 0; i < MRXE_PATH_MAX && mrxe_path_snapshot(qp, i, &p); i++) {
		err = mrxe_path_put_one(skb, &p, i);
		if (err)
			return err;
	}
	return i;
}
