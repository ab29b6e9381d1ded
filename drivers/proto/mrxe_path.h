/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * MetaRoCE path set: per-path state, the per-packet path scheduler, dead
 * path detection and re-probing for a multipath QP (num_paths 1..16).
 *
 * A path is a UDP source port (ECMP entropy, IBA A17.4.2; MP-RDMA NSDI
 * 2018 "virtual paths", AWS SRD).  Path i of generation g uses
 * mrxe_path_port(base, i, g); a path judged dead bumps its generation, so
 * it gets a fresh port (new entropy: PLB in Google Falcon) and carries only
 * one probe packet until a probe is delivered.
 *
 * Attribution: the SACK scoreboard (mrxe_sack.h) records the path of every
 * (re)transmission and keeps per-path tallies (in flight, delivered, lost)
 * and a per-path RACK (its newest delivered packet and that RTT);
 * mrxe_path_sync() turns their growth into per-path delivery, loss and RTT
 * samples.  No per-ACK path echo is needed.
 *
 * Scheduling: every usable path has a window cwnd (AIMD on its own
 * deliveries and losses: slow start, +1/cwnd per delivered packet, halved
 * at most once per path RTT on loss; deliveries grow it only while the path
 * had at least half of it in flight, RFC 7661).  The next packet goes to
 * the usable path with the lowest fill (inflight + 1) / cwnd; equal fills
 * rotate.
 * Without cfg.hold the path windows only split traffic, they never hold it
 * back (the QP's window and congestion control do).  With cfg.hold
 * (MP-RDMA's per-path congestion windows) a new packet waits while no
 * usable path has room (mrxe_path_room()); retransmissions and probes never
 * wait, so a path whose packets are all lost still collects the losses
 * that judge it, and a READ request (whose responses the responder sends)
 * is not held.  In steady state a path's in-flight
 * share follows its cwnd, so a path that drains slower (less capacity,
 * more delay) keeps more in flight and receives fewer new packets, and a
 * lossy path's window shrinks.  Retransmissions avoid the path that lost
 * the packet when any other usable path exists.
 *
 * States (values equal enum mrxe_path_state of rdma/mrxe-netlink.h):
 *   ACTIVE     delivering;
 *   CONGESTED  its window was cut within the last path RTT, or its
 *              smoothed RTT is above 2x the best path's; still used;
 *   SUSPECT    >= suspect_losses losses in a row without a delivery, or a
 *              probe in flight; used with the minimum window;
 *   DEAD       >= dead_losses losses in a row and nothing delivered for
 *              dead_ns (or a failed probe): no data; after probe_ns (doubled
 *              per failed probe, up to probe_max_ns) the next packet is a
 *              probe on a fresh port; a delivered probe makes it ACTIVE.
 *              Every path DEAD: packets spread over all of them, the
 *              least in flight first (each port is a new ECMP draw).
 * A QP with one path never marks it DEAD (there is nowhere else to go; the
 * RTO and retry_cnt handle it, as in single-path MetaRoCE).
 *
 * Re-pathing (ECMP collisions; Google PLB, SIGCOMM 2022, re-hashes a flow
 * whose path stays congested): the hash may put two paths on one link
 * while another link carries none, and nothing fails.  Time is cut into
 * epochs of max(epoch_ns, 4 best SRTT); an epoch counts when the QP
 * delivered at least 16 packets per usable path in it.
 *   imbalance  a usable path that delivers under 5/8 of the best path's
 *              packets in repath_strikes counted epochs in a row shares
 *              its bottleneck: it takes a fresh port (one path per epoch)
 *              and is not judged again for a hold of 2 epochs, doubled
 *              (up to 64) while its re-rolls do not help;
 *   explore    paths that split one link evenly look alike, so after
 *              explore_every calm epochs (no port change; 4, doubled up to
 *              128 by every revert, back to 4 after a gain) one path (in
 *              turn) takes a fresh port; the QP's delivery rate over the
 *              two epochs after the next is compared with the two before:
 *              more than 1/16 lower and the path returns to its old port.
 * Both keep the path's state, window and counters; its generation counts
 * every port change (a reverted port comes back under a new generation).
 *
 * Invariant (mrxe_path_check): every path index < num_paths; cwnd within
 * [cwnd_min, cwnd_max]; a DEAD path never returned by mrxe_path_pick()
 * before its probe time unless every path is DEAD; the ports of the
 * current generations are pairwise distinct.
 *
 * Times are u64 nanoseconds of any monotonic clock.  No allocation, no
 * locking: the caller serialises (the QP's pipeline work item).
 */
#ifndef MRXE_PATH_H
#define MRXE_PATH_H

#include "mrxe_sack.h"

#define MRXE_PATH_MAX		MRXE_SACK_PATHS	/* == MRXE_MAX_PATHS (uapi) */
#define MRXE_PATH_FP		8	/* cwnd fixed point: 1/256 packet */
#define MRXE_PATH_NONE		0xff	/* "no path" for mrxe_path_pick() */

enum mrxe_path_st {
	MRXE_PST_ACTIVE		= 0,
	MRXE_PST_CONGESTED	= 1,
	MRXE_PST_SUSPECT	= 2,
	MRXE_PST_DEAD		= 3,
};

struct mrxe_path_cfg {
	u8	num_paths;	/* 1..MRXE_PATH_MAX */
	u16	base_port;	/* path 0 generation 0 (the QP's RoCEv2 port) */
	u32	cwnd_init;	/* packets, 0: 16 */
	u32	cwnd_min;	/* packets, 0: 2 */
	u32	cwnd_max;	/* packets, 0: MRXE_SACK_WINDOW */
	u8	suspect_losses;	/* 0: 2 */
	u8	dead_losses;	/* 0: 4 */
	u64	dead_ns;	/* no delivery for this long (and 2 path SRTT) */
	u64	probe_ns;	/* first re-probe delay after DEAD */
	u64	probe_max_ns;	/* cap of the doubled delay */
	u64	epoch_ns;	/* shortest re-path epoch, 0: 1 ms */
	u8	repath_strikes;	/* 0: 2 */
	bool	repath_off;	/* no re-pathing (tests, comparisons) */
	bool	hold;		/* path windows hold new data back */
};

struct mrxe_path_cnt {
	u64	sent;		/* new packets */
	u64	retx;		/* retransmissions sent on it */
	u64	delivered;	/* PSNs delivered whose last copy used it */
	u64	lost;		/* PSNs declared lost on it */
	u64	ecn;		/* CE echoes attributed to it */
	u64	dead;		/* times judged DEAD */
	u64	probes;		/* probe packets */
	u64	cwnd_cuts;
	u64	repaths;	/* fresh ports for imbalance or exploration */
	u64	reverts;	/* explorations undone (the QP got slower) */
};

struct mrxe_path {
	u32	cwnd;		/* << MRXE_PATH_FP */
	u32	ssthresh;	/* << MRXE_PATH_FP */
	u32	inflight;	/* from the scoreboard tally */
	u32	seen_delivered, seen_lost;	/* tally at the last sync */
	u64	seen_rack_ns;	/* per-path RACK xmit time at the last sync */
	u32	consec_lost;	/* losses since the last delivery */
	u64	srtt_ns, rttvar_ns;	/* RFC 6298 2.2/2.3, 0: no sample */
	u64	last_deliver_ns;
	u64	last_send_ns;
	u64	cut_ns;		/* last window cut */
	u64	probe_at_ns;	/* DEAD: next probe allowed */
	u64	probe_backoff_ns;
	u64	dead_at_ns;	/* last time judged DEAD */
	u16	port;		/* UDP source port of the current gen */
	u8	state;		/* enum mrxe_path_st */
	u8	gen;		/* MRH path_gen */
	bool	probe_out;	/* a probe is in flight */
	u8	strikes;	/* counted epochs in a row under 5/8 of best */
	u8	hold;		/* epochs before the imbalance rule judges it */
	u8	backoff;	/* hold after its next imbalance re-path */
	u16	prev_port;	/* exploration: the port to return to */
	u32	ep_delivered;	/* delivered in the current epoch */
	struct mrxe_path_cnt cnt;
};

struct mrxe_path_set {
	struct mrxe_path_cfg cfg;
	u8	n;		/* num_paths */
	u8	rr;		/* tie-break cursor */
	u64	sched_ns;	/* last mrxe_path_sync() */
	/* re-pathing (see above) */
	u64	ep_start_ns;
	u32	ep_total;	/* delivered by all paths in this epoch */
	u32	calm;		/* counted epochs since the last port change */
	u32	explore_every;
	u64	last_pkts, last_ns;	/* the previous counted epoch */
	u64	ref_pkts, ref_ns;	/* exploration: the rate before */
	u64	exp_pkts, exp_ns;	/* exploration: the rate after */
	u8	exp_path;	/* path being explored, MRXE_PATH_NONE */
	u8	exp_left;	/* epochs of the exploration left */
	u8	exp_rr;		/* next path to explore */
	struct mrxe_path p[MRXE_PATH_MAX];
};

/* UDP source port of path @idx, generation @gen, from the QP's @base. */
u16 mrxe_path_port(u16 base, u8 idx, u8 gen);

void mrxe_path_init(struct mrxe_path_set *ps, const struct mrxe_path_cfg *cfg,
		    u64 now);

/*
 * Path for the next packet: a new one (@avoid MRXE_PATH_NONE) or the
 * retransmission of a packet last sent on @avoid.  Never MRXE_PATH_NONE.
 */
u8 mrxe_path_pick(struct mrxe_path_set *ps, u64 now, u8 avoid);

/*
 * May a new packet go out (cfg.hold; mrxe_path_room() below)?  True with one
 * path, without cfg.hold, when a usable path's in-flight is below its
 * window, when a probe is due, or when every path is DEAD.
 */
bool mrxe_path_room(const struct mrxe_path_set *ps, u64 now);

/* The caller sent a packet on @path (after mrxe_sack_on_send/_retransmit). */
void mrxe_path_on_send(struct mrxe_path_set *ps, u8 path, bool retx, u64 now);

/*
 * Pull the scoreboard's per-path tallies and per-path RACK RTTs (any time:
 * after ACKs and timers, or lazily before mrxe_path_pick()).
 */
void mrxe_path_sync(struct mrxe_path_set *ps, const struct mrxe_sack *sb,
		    u64 now);

/* The scoreboard was re-initialised (mrxe_sack_init): tallies restart. */
void mrxe_path_sb_reset(struct mrxe_path_set *ps);

/* A CE-marked packet's echo attributed to @path (ECN, when it lands). */
void mrxe_path_on_ecn(struct mrxe_path_set *ps, u8 path);

/* Number of paths in @state. */
u32 mrxe_path_count(const struct mrxe_path_set *ps, u8 state);

/* Recount the invariant; 0 when it holds. */
int mrxe_path_check(const struct mrxe_path_set *ps);

#endif /* MRXE_PATH_H */
