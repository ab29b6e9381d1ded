/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Sender SACK scoreboard with RACK-TLP loss detection (RFC 8985) and the
 * RFC 6298 retransmission timer, for MetaRoCE selective repeat.
 *
 * Invariant: every PSN in [una, nxt) is exactly one of
 *   INFLIGHT  sent (or retransmitted) and neither delivered nor lost,
 *   SACKED    reported received by the peer,
 *   LOST      declared lost and waiting for the caller to retransmit it;
 * n_inflight + n_sacked + n_lost == nxt - una <= wnd <= MRXE_SACK_WINDOW, and una
 * is never SACKED (una advances over delivered PSNs).
 *
 * Loss is decided by time, never by a single gap (RFC 8985 6.2): a packet
 * is lost when a packet sent after it was delivered and more than
 * rack.rtt + reo_wnd passed since it was sent.  With several paths
 * (MetaRoCE multipath) RACK runs per path, since each path is about FIFO
 * and packets on different paths reorder by the paths' RTT difference: a
 * packet is lost when a later packet on its own path was delivered and
 * that path's rack.rtt + reo_wnd passed, or when a later packet on any
 * path was delivered, the largest per-path rack.rtt + reo_wnd passed and
 * its own path has delivered nothing for that long either (a black-holed
 * path goes silent; this catches it without an RTO, while a path whose
 * queue grows keeps delivering and is judged by its own RACK only).
 * With one path (nothing ever sent on a path other than 0) both rules are
 * RFC 8985's; reo_wnd = min(reo_mult *
 * min_rtt / 4, srtt) and reo_mult grows on each detected spurious
 * retransmission (RFC 8985 6.2 step 4, here with timestamp echo, the
 * duplicate flag of the ACK, or "delivered sooner than min_rtt after the
 * retransmission").  A tail-loss probe fires after PTO = 2 * SRTT (+ the
 * peer's worst-case ACK delay when one packet is in flight), RFC 8985 7.2;
 * the RTO (RFC 6298 5, RFC 8985 6.3) marks the oldest packet lost and, once
 * an ACK shows the RTO was real, the others that were in flight before it
 * (F-RTO, RFC 5682 section 3, decided with the MRH timestamp echo as in
 * Eifel, RFC 3522): if instead the first ACK that delivers anything
 * delivers an original transmission sent before the RTO (or the head's
 * original copy), the RTO was spurious (a stalled receiver, a late ACK),
 * nothing else is marked and RACK goes on as before.  A spurious RTO then
 * costs one retransmission instead of a window.
 *
 * Times are u64 nanoseconds of any monotonic clock.  No allocation: the
 * caller embeds struct mrxe_sack (4.3 KiB: 16 bytes per PSN) in its per-QP
 * state.
 */
#ifndef MRXE_SACK_H
#define MRXE_SACK_H

#include "mrxe_wire.h"
#include "mrxe_rtt.h"

enum mrxe_sack_state {
	MRXE_SK_FREE		= 0,	/* outside [una, nxt) */
	MRXE_SK_INFLIGHT	= 1,
	MRXE_SK_SACKED		= 2,
	MRXE_SK_LOST		= 3,
};

/* struct mrxe_sack_ent.flags */
#define MRXE_SKF_HOLE		0x01	/* counted as a SACK hole */
#define MRXE_SKF_SPURIOUS	0x02	/* counted as spurious */
#define MRXE_SKF_TLP		0x04	/* last (re)transmission was a TLP */
/* last retransmission went in the packet of an earlier PSN (a READ run) */
#define MRXE_SKF_CONT		0x08

struct mrxe_sack_ent {
	u64	xmit_ns;	/* time of the last (re)transmission */
	u32	len;		/* payload bytes */
	u8	state;		/* enum mrxe_sack_state */
	u8	path;		/* path of the last (re)transmission */
	u8	retx;		/* retransmissions so far */
	u8	flags;		/* MRXE_SKF_* */
};

struct mrxe_sack_cfg {
	u64	rto_floor_ns, rto_ceil_ns, rto_init_ns;
	u64	min_rtt_win_ns;	/* min_rtt filter window (e.g. 10 s) */
	u64	tlp_delack_ns;	/* peer's worst-case ACK delay, 0: ACK per packet */
	bool	no_tlp;		/* disable tail-loss probes */
	u8	reo_mult_max;	/* cap of reo_wnd / (min_rtt / 4), 0: 16 */
	/*
	 * Loss recoveries without new reordering evidence before reo_wnd
	 * shrinks back to min_rtt / 4; 0: 16 as in RFC 8985.  Multipath
	 * reorders persistently while recoveries are frequent (1% loss is one
	 * per ~100 packets): MetaRoCE wants a larger value.
	 */
	u16	reo_persist;
	/*
	 * Packets in flight at most (IRN's BDP cap), 1..MRXE_SACK_WINDOW;
	 * 0: MRXE_SACK_WINDOW.
	 */
	u32	wnd;
};

/* reo_persist for MetaRoCE QPs (see mrxe_meta.h and the simulation test) */
#define MRXE_SACK_REO_PERSIST_META	256
/*
 * reo_mult_max for MetaRoCE QPs: reo_wnd may grow to 16 min_RTT (still at
 * most SRTT).  With RFC 8985's 4 min_RTT, jitter of a few ms over a fast
 * min_RTT (netem delay 1ms 1ms in the lab) could never be covered: 2849
 * retransmissions, 2091 found spurious, in one 5 s ib_write_bw.
 */
#define MRXE_SACK_REO_MULT_META		64

struct mrxe_sack_cnt {
	u64	sent;		/* new packets */
	u64	retransmits;	/* all retransmissions, TLP probes included */
	u64	spurious;	/* retransmissions found unnecessary */
	u64	lost;		/* PSNs declared lost (RACK or RTO) */
	u64	holes;		/* PSNs seen missing below a SACKed PSN */
	u64	tlp;		/* tail-loss probes */
	u64	rto;		/* retransmission timeouts */
	u64	rto_spurious;	/* ... found spurious by F-RTO */
	u64	delivered;	/* PSNs acked or SACKed */
	u64	bad_ack;	/* ACKs beyond nxt, ignored */
	u64	reo_near;	/* reo_wnd widened by a near miss */
};

/*
 * Paths a scoreboard attributes to (ent.path < MRXE_SACK_PATHS; equal to
 * MRXE_MAX_PATHS of rdma/mrxe-abi.h).  Per-path tallies for the path
 * engine (mrxe_path.h): packets in flight on the path of their last
 * (re)transmission, and running totals (wrapping u32) of PSNs delivered
 * and declared lost there.
 */
#define MRXE_SACK_PATHS		16

/* RTT samples during which reo_wnd is at least SRTT + 4 RTTVAR */
#define MRXE_SACK_REO_WARMUP	16

struct mrxe_sack_path {
	u32	inflight;
	u32	delivered;
	u32	lost;
	u64	deliver_ns;	/* last ACK that delivered a packet of it */
	/* RACK of this path alone: its newest delivered packet */
	u32	rack_psn;
	bool	rack_valid;
	u64	rack_xmit_ns;
	u64	rack_rtt_ns;
};

struct mrxe_sack {
	u32	una, nxt;
	u32	wnd;		/* cfg.wnd: most PSNs outstanding */
	u32	n_inflight, n_sacked, n_lost;
	u32	n_retx_inflight;	/* INFLIGHT with retx > 0 */
	struct mrxe_rtt rtt;
	/* RACK (RFC 8985 6.1) */
	u64	rack_xmit_ns;	/* send time of the newest delivered packet */
	u64	rack_rtt_ns;	/* its RTT */
	u32	rack_psn;
	bool	rack_valid;
	u8	reo_mult, reo_mult_max;
	u16	reo_persist;	/* recoveries before reo_mult resets */
	u16	reo_persist_max;
	bool	in_recovery;
	u64	reo_widen_ns;	/* last reo_mult increase */
	/*
	 * Largest lateness measured on a packet found delivered after it was
	 * declared lost (its RTT minus min_RTT), + 1/8; halved by a recovery
	 * 16 SRTT later, 0 again when reo_persist runs out.  reo_wnd covers
	 * it (up to the RTO).
	 */
	u64	reo_seen_ns;
	u64	reo_seen_at_ns;	/* when it was last learnt or halved */
	u64	reo_deadline_ns;	/* RACK reordering timer, 0: off */
	/* TLP (RFC 8985 7) and RTO */
	bool	tlp_out;	/* a probe is outstanding */
	bool	no_tlp;
	u64	tlp_base_ns;	/* last new send or ACK progress */
	u64	tlp_delack_ns;
	u64	rto_base_ns;	/* RTO timer (re)started here */
	/* F-RTO (RFC 5682): the RTO at frto_ns marked only the oldest lost */
	bool	frto;
	u64	frto_ns;
	u64	frto_base_ns;	/* ... its timer's last restart (0: backed off) */
	struct mrxe_sack_cnt cnt;
	bool	multipath;	/* a packet was sent on a path other than 0 */
	struct mrxe_sack_path path[MRXE_SACK_PATHS];
	struct mrxe_sack_ent ent[MRXE_SACK_WINDOW];
};

/* What one ACK changed (mrxe_sack_on_ack). */
struct mrxe_sack_ack_res {
	u32	delivered;	/* PSNs newly acked or SACKed */
	u64	bytes;		/* their payload bytes */
	u64	rtt_ns;		/* Karn RTT sample, 0: none */
	u8	rtt_path;	/* path of that sample's packet */
	u32	lost;		/* PSNs newly declared lost */
	u32	spurious;	/* retransmissions found spurious */
	bool	una_moved;
};

/* Result bits of mrxe_sack_on_timer() */
#define MRXE_SACK_EV_LOST	0x1	/* retransmit: mrxe_sack_next_lost() */
#define MRXE_SACK_EV_PROBE	0x2	/* send a TLP: new data or *probe_psn */
#define MRXE_SACK_EV_RTO	0x4	/* an RTO happened (counted, backed off) */

/* Which timer mrxe_sack_timer() returns */
enum mrxe_sack_timer_kind {
	MRXE_SACK_T_NONE	= 0,
	MRXE_SACK_T_REO		= 1,
	MRXE_SACK_T_TLP		= 2,
	MRXE_SACK_T_RTO		= 3,
};

/* Errors (negative) */
#define MRXE_SACK_EFULL		(-1)	/* window full */
#define MRXE_SACK_EPSN		(-2)	/* not nxt / not outstanding / not lost */
#define MRXE_SACK_EACK		(-3)	/* ACK beyond nxt */

void mrxe_sack_init(struct mrxe_sack *sb, u32 isn, const struct mrxe_sack_cfg *cfg);

/*
 * A new packet @psn (must be nxt) left on @path (< MRXE_SACK_PATHS, larger
 * values count as path 0) at @now.
 */
int mrxe_sack_on_send(struct mrxe_sack *sb, u32 psn, u64 now, u8 path, u32 len);

/*
 * @psn (LOST, or INFLIGHT for a TLP probe) was retransmitted at @now.
 * Counted in cnt.retransmits.
 */
int mrxe_sack_on_retransmit(struct mrxe_sack *sb, u32 psn, u64 now, u8 path);

/*
 * @psn went again in the same packet as the PSN before it, just passed
 * to mrxe_sack_on_retransmit() or here (a READ request asks for a run of
 * PSNs): the same bookkeeping, but the packet is counted once, in
 * cnt.retransmits and, when found unnecessary, in cnt.spurious.
 */
int mrxe_sack_on_retransmit_cont(struct mrxe_sack *sb, u32 psn, u64 now,
				 u8 path);

/*
 * An ACK arrived at @now: @si from the SACKETH (epsn = cumulative),
 * @echo_ns the send time echoed for si->trigger_psn converted back to the
 * sender's clock with mrxe_mrh_ts_ns() (0: none; compared at MRH tick
 * resolution).  Runs RACK loss detection.  Returns 0 or
 * MRXE_SACK_EACK (nothing changed).
 */
int mrxe_sack_on_ack(struct mrxe_sack *sb, const struct mrxe_sack_info *si,
		     u64 echo_ns, u64 now, struct mrxe_sack_ack_res *res);

/* Oldest LOST PSN (retransmit it next); false when none. */
bool mrxe_sack_next_lost(const struct mrxe_sack *sb, u32 *psn);

/* Earliest pending timer deadline (0: none) and its kind. */
u64 mrxe_sack_timer(const struct mrxe_sack *sb, enum mrxe_sack_timer_kind *kind);

/*
 * Timer callback at @now: runs whichever timers expired and returns
 * MRXE_SACK_EV_* bits.  On EV_PROBE send new data if any (it becomes the
 * probe), else retransmit *probe_psn with mrxe_sack_on_retransmit().
 */
u32 mrxe_sack_on_timer(struct mrxe_sack *sb, u64 now, u32 *probe_psn);

/* Recount the invariant; 0 when it holds (tests, debug builds). */
int mrxe_sack_check(const struct mrxe_sack *sb);

static inline u32 mrxe_sack_outstanding(const struct mrxe_sack *sb)
{
	return (sb->nxt - sb->una) & MRXE_PSN_MASK;
}

static inline bool mrxe_sack_full(const struct mrxe_sack *sb)
{
	return mrxe_sack_outstanding(sb) >= sb->wnd;
}

static inline struct mrxe_sack_ent *mrxe_sack_ent(struct mrxe_sack *sb, u32 psn)
{
	return &sb->ent[psn & (MRXE_SACK_WINDOW - 1)];
}

/* reo_wnd = min(reo_mult * min_rtt / 4, srtt) (RFC 8985 6.2 step 4) */
u64 mrxe_sack_reo_wnd(const struct mrxe_sack *sb);
/*
 * The same window without what reo_learn measured (reo_seen, lateness
 * behind min_RTT, covered up to the RTO): RFC 8985's own, at least
 * SRTT / 4 and at most SRTT.  For READ responses (mrxe_rsprec.h).
 */
u64 mrxe_sack_reo_wnd_rack(const struct mrxe_sack *sb);
/*
 * Something this scoreboard's reordering window let the caller call lost
 * arrived after all (both copies of a re-requested READ response came
 * back): widen the window as a DSACK does (RFC 8985 6.2 step 4), at most
 * once per SRTT, and count one spurious retransmission.
 */
void mrxe_sack_reo_spurious(struct mrxe_sack *sb, u64 now);

#endif /* MRXE_SACK_H */
