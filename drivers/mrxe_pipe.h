/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Per-QP transport (pipeline) state and the API the object code
 * (mrxe_qp.c, mrxe_verbs.c) uses to drive it.  Owned by the data-path files
 * (mrxe_task.c, mrxe_req.c, mrxe_resp.c, mrxe_comp.c, mrxe_recv.c).
 *
 * Execution model: every QP has ONE work item (pipe.work) on dev->wq that
 * runs completer, responder and requester in turn.  A work item never runs
 * concurrently with itself, and the pipeline state below is only touched
 * from that work item with pipe.mutex held (modify/cleanup take the mutex
 * too), so the stages need no locks among themselves.  Softirq receive only
 * appends skbs to resp.rxq/comp.rxq and schedules the work; hrtimers only set
 * a flag and schedule the work.
 */
#ifndef MRXE_PIPE_H
#define MRXE_PIPE_H

#include "mrxe_wire.h"
#include "mrxe_meta.h"
#include "mrxe_rspwnd.h"
#include "mrxe_rsprec.h"
#include "mrxe_wrorder.h"
#include "mrxe_auto.h"

struct mrxe_qp;
struct mrxe_mr;
struct mrxe_av;
struct ib_qp_attr;
struct sk_buff;

/*
 * Per-packet send state: one entry per PSN in flight, indexed by
 * psn & (MRXE_PKT_RING - 1).  Go-back-N only needs the oldest PSN, but the
 * ring is kept so a selective-repeat (MetaRoCE) recovery can resend single
 * packets: which WQE, which byte range, when and on which UDP source port.
 */
#define MRXE_PKT_RING		4096	/* MetaRoCE's max unacked PSN window */
#define MRXE_RESP_RESV		16	/* SRQ WQEs a QP may take ahead */
/* standard mode's unacked PSN window (go-back-N resends all of it) */
#define MRXE_STD_WINDOW		256
#define MRXE_ACKREQ_EVERY	32	/* AckReq at least every N packets */
#define MRXE_RXQ_MAX		16384	/* queued rx packets per QP and side */
#define MRXE_RXQ_RC_REQ_MAX	(2 * MRXE_PKT_RING)	/* RC requests */
#define MRXE_XMIT_BUSY_MAX	1000	/* local-queue-full resends per packet */
#define MRXE_RTO_MAX_BACKOFF	6	/* RTO up to 64x the QP's timeout, */
#define MRXE_RTO_BACKOFF_CAP_NS	(1000ULL * 1000 * 1000)	/* but 1 s at most */

struct mrxe_pkt_meta {
	u64	send_ns;
	u32	psn;
	u32	wqe_idx;
	u32	offset;
	u32	len;
	u16	sport;
	u8	opcode;
	u8	retrans;	/* times this PSN was resent */
	u8	path;		/* MetaRoCE path index of the last send */
	/* a READ run asked for again: its response may jump the queue */
	bool	rsp_rt;
	bool	rsp_run_head;	/* ... and this PSN is the run's first */
};

/*
 * Loss recovery: how the requester reacts to a PSN sequence NAK, a
 * retransmit timeout or an ACK.  Standard mode plugs in go-back-N
 * (mrxe_gbn_ops, IBA 9.7.5.1 / 9.9.2); MetaRoCE will plug in SACK-based
 * selective repeat without touching requester/completer logic.
 */
struct mrxe_loss_ops {
	const char *name;
	/* responder expects @psn: everything from @psn on must be resent */
	void (*nak_seq)(struct mrxe_qp *qp, u32 psn);
	/* retransmit timer expired with comp.psn outstanding */
	void (*timeout)(struct mrxe_qp *qp);
	/* cumulative ACK up to and including @psn */
	void (*acked)(struct mrxe_qp *qp, u32 psn);
};

/*
 * MetaRoCE per-QP state (mrxe_meta.c), allocated for RC QPs whose mode is
 * metaroce or auto; all of it is pipeline state (pipe.mutex), except
 * timer_fired (any context).  Sender half (requester + completer):
 * snd.sb, rsp_got, msn, retry_left, rsprec, rsp_*; receiver half
 * (responder): rcv.rw, stash, ack_*.  Neither half touches the other's
 * fields.
 */
#define MRXE_META_READ_CHUNK	MRXE_RSPREC_CHUNK	/* PSNs per READ request */
/*
 * Duplicate READs waiting to be answered again, at most: the window's
 * chunks twice over (a re-request may be split into runs, and a probe
 * asks for one PSN of a run).  The requester asks for at most 32 runs a
 * round and a queued replay drops the duplicates it covers, so only a
 * broken or hostile peer gets further (counted in read_dup_overflow).
 */
#define MRXE_META_REPLAY_MAX	(2 * MRXE_PKT_RING / MRXE_META_READ_CHUNK)
/* WQEs that complete with responses (READ, FLUSH, atomics, ATOMIC WRITE) */
#define MRXE_META_RSP_MASK	(MRXE_M_READ | MRXE_M_ATOMIC | MRXE_M_ATOMIC_WRITE)

/* Engine counters already added to the device counters. */
struct mrxe_meta_synced {
	u64	retrans, spurious, holes, tlp, rto, rto_spurious, ooo, dup, oow;
};

struct mrxe_meta_qp {
	struct mrxe_qp		*qp;
	/* sender half (requester + completer) */
	struct mrxe_meta_snd	snd;
	struct mrxe_sack_cfg	cfg;
	u32	msn;		/* MSN of the next new message */
	u32	switch_psn;	/* auto: first MetaRoCE PSN sent */
	bool	sync_pending;	/* auto: next packet carries MRH SYNC */
	u8	retry_left;	/* RTOs without progress left (retry_cnt) */
	bool	ever_acked;	/* the peer answered at least once */
	/*
	 * First PSN the responder has not executed: ACK cumulative PSN, NAK
	 * PSN, or a READ/atomic response (the responder executes in PSN
	 * order).  A SACK says "held", and an RNR NAK drops what was held, so
	 * a WQE without responses completes only below this point.
	 */
	u32	exec_psn;
	/* READ/atomic response recovery: deadline, evidence (mrxe_rsprec.h) */
	struct mrxe_rsprec	rsprec;
	u64	rsp_retrans;	/* READ/atomic re-requests sent */
	struct mrxe_rspwnd	rspwnd;	/* responses in flight (mrxe_rspwnd.h) */
	/* PSN (mod MRXE_PKT_RING) of a READ/atomic whose response arrived */
	DECLARE_BITMAP(rsp_got, MRXE_PKT_RING);
	struct hrtimer		timer;	/* SACK timer (RACK, TLP, RTO) */
	atomic_t		timer_fired;
	u64	grace_until_ns;	/* late RTO: ACKs get this long to land */

	/* receiver half (responder) */
	struct mrxe_meta_rcv	rcv;
	/* accepted requests not executed yet, slot psn % MRXE_PKT_RING */
	struct sk_buff		*stash[MRXE_PKT_RING];
	struct sk_buff_head	replay;	/* duplicate READs to answer again */
	/* WRITE bytes placed ahead and written over by older PSNs */
	struct mrxe_wrorder	wrorder;
	bool	ack_pending;	/* an ACK with SACKETH is owed */
	u64	oow_local;	/* dropped: beyond the execution window */

	struct mrxe_meta_synced	synced;
};

/* Snapshot of the QP attributes the pipeline uses (taken in modify). */
struct mrxe_pipe_attr {
	u32	dest_qpn;
	u32	qkey;
	u32	mtu;
	u8	timeout;
	u8	retry_cnt;
	u8	rnr_retry;
	u8	min_rnr_timer;
	u32	max_rd_atomic;
	u32	max_dest_rd_atomic;
};

/* Whole-pipeline state (mrxe_task.c), shared by every stage. */
struct mrxe_pipe_state {
	struct work_struct	work;
	struct mutex		mutex;	/* all pipeline state, see above */
	/*
	 * lock protects dying, wq and moved, and orders queue_work() against
	 * cleanup: the work is only queued under lock, with !dying, on wq
	 * or, for a packet that found the QP idle, on dev->wq_cpu
	 * (mrxe_pipe_enqueue).  wq is dev->wq_hi or dev->wq
	 * (mrxe_pipe_pick_wq); moved: the work was ever queued elsewhere
	 * than on its first wq.
	 */
	spinlock_t		lock;
	bool			dying;
	bool			moved;
	struct workqueue_struct	*wq;
	bool			want_error;	/* move QP to ERROR after unlock */
	enum ib_qp_state	state;		/* snapshot of qp->state */
	struct mrxe_pipe_attr	attr;
	struct mrxe_av		*av;		/* snapshot of qp->av */
	u16			sport;		/* standard mode: fixed per QP */
	/*
	 * Priority 0-7 (mrxe_av_prio() of the QP's AV at modify): shown by
	 * netlink, selects wq; a QP at MRXE_PRIO_HIGH or above is counted
	 * in dev->num_prio_qp.  Written under qp->state_lock
	 * (mrxe_pipe_prio_set, which keeps the count), read locklessly
	 * (READ_ONCE).
	 */
	u8			prio;
	/*
	 * MetaRoCE (Documentation/wire-format.rst): meta_tx, the requester
	 * sends TVer 1 packets and the completer takes TVer 1 responses;
	 * meta_rx, the responder runs the reorder window and answers with
	 * TVer 1.  Forced metaroce sets both at RTR/RTS.  meta is NULL for
	 * standard QPs.
	 */
	bool			meta_tx;
	bool			meta_rx;
	u8			auto_state;	/* enum mrxe_auto_state */
	bool			cap_peer;	/* auto responder: CAP seen */
	/*
	 * rx_fallback: a forced metaroce QP's receive side negotiates like
	 * an `auto` one, its first request having been RoCEv2 with CAP
	 * (proto/mrxe_auto.h); rx_meta_seen: a TVer 1 request was taken.
	 * Both written by the work item only (pipe.mutex), cleared at RESET.
	 */
	bool			rx_fallback;
	bool			rx_meta_seen;
	struct mrxe_meta_qp	*meta;
	/*
	 * Transmit order (mrxe_task.c): the CPU whose netif_rx() backlog took
	 * the QP's last packet and that backlog's input_queue_tail after it.
	 */
	bool			xmit_queued;
	int			xmit_cpu;
	unsigned int		xmit_qtail;
	/*
	 * Bytes in the host (mrxe_task.c, "Local queue cap"): tx_sock owns
	 * every packet the QP hands to IP (sk_wmem_alloc) until the device,
	 * or a qdisc that holds it for a delay, lets it go.  tx_wait: the
	 * sender stopped at the cap and tx_sock's write_space schedules
	 * the work once half of it left.  tx_write_space: the socket's own
	 * callback, put back at destroy.
	 */
	struct socket		*tx_sock;
	atomic_t		tx_wait;
	void			(*tx_write_space)(struct sock *sk);
};

/* `auto` negotiation: enum mrxe_auto_state, proto/mrxe_auto.h */

/* Requester (mrxe_req.c); the completer advances head and rd_atomic. */
struct mrxe_req_state {
	bool	sq_drained_sent;	/* SQD: IB_EVENT_SQ_DRAINED reported */
	u32	psn;		/* PSN of the next packet to send */
	u32	head;		/* oldest uncompleted WQE (== SQ consumer) */
	u32	cur;		/* WQE being sent */
	u32	fetched;	/* WQEs copied out of the SQ ring */
	u32	nslots;		/* SQ ring slots (power of 2) */
	u32	stride;		/* bytes per private WQE copy */
	u8	*wqes;		/* private WQE copies, nslots * stride */
	u32	rd_atomic;	/* reads/atomics outstanding */
	u32	pkts_since_ack;
	u32	pace;		/* packets since the last pacing check */
	u32	xmit_busy;	/* same packet refused by a full local queue */
	/* one past the highest PSN ever sent: PSNs before it are resends */
	u32	next_new_psn;
	/* messages started that consume a receive WQE (RSN, MRH byte 4) */
	u32	rsn;
	bool	rnr_wait;	/* RNR NAK: wait for rnr_timer */
	atomic_t rnr_fired;
	struct hrtimer		rnr_timer;
	struct mrxe_pkt_meta	*meta;	/* MRXE_PKT_RING entries */
	const struct mrxe_loss_ops *loss;
};

/* Responder read/atomic resource (IBA 9.7.5.1.3 replay of duplicates). */
struct mrxe_resp_res {
	u32	type;		/* 0, MRXE_M_READ or MRXE_M_ATOMIC */
	u32	first_psn;
	u32	last_psn;
	u64	va;
	u32	rkey;
	u32	len;
	u64	orig;		/* atomic: original value returned */
};

struct mrxe_resp_state {
	struct sk_buff_head	rxq;	/* requests from mrxe_rcv */
	u32	psn;		/* next expected PSN */
	u32	msn;		/* completed messages (AETH MSN) */
	u8	last_opcode;	/* of the previous in-order packet, 0xff none */
	bool	nak_sent;	/* one NAK per sequence error (9.7.5.2.2) */
	bool	drop_msg;	/* UC: discard until the next FIRST/ONLY */
	bool	ack_pending;
	u32	ack_psn;

	/* receive WQE being filled (copied out of RQ/SRQ) */
	bool	has_wqe;
	u32	offset;
	u32	rsn;		/* receive WQEs taken (RSN of the next one) */
	u8	*peek;		/* MetaRoCE: a later WQE, read for placement */
	u8	*wqe;		/* struct mrxe_recv_wqe + sges, wqe_size */
	u32	wqe_size;
	/*
	 * MetaRoCE on an SRQ: WQEs taken out of the SRQ early, in RSN order,
	 * for SENDs that arrived ahead of ePSN (placed on arrival); the
	 * in-order pass uses them before taking more.  MRXE_RESP_RESV slots
	 * of wqe_size; the next WQE of the QP is slot resv_head.
	 */
	u8	*resv;
	u8	resv_head;
	u8	resv_n;

	/* RDMA WRITE in progress */
	struct mrxe_mr *wr_mr;
	u64	wr_va;
	u32	wr_resid;
	u32	wr_len;

	/* RDMA READ being answered */
	struct mrxe_mr *rd_mr;
	bool	rd_active;
	u64	rd_va;
	u32	rd_resid;
	u32	rd_psn;
	u32	rd_first_psn;
	u32	rd_last_psn;
	u32	rd_off;		/* MetaRoCE: MRH offset of the next response */
	bool	rd_replay;	/* answering a duplicate READ again */
	u16	rd_sport;	/* UDP source port of this READ's responses */
	u32	rd_busy;	/* rd_psn refused by a full local queue */

	struct mrxe_resp_res *res;	/* max_dest_rd_atomic entries */
	u32	nres;
	u32	res_next;
};

struct mrxe_comp_state {
	struct sk_buff_head	rxq;	/* ACKs/responses from mrxe_rcv */
	u32	psn;		/* oldest unacknowledged PSN */
	u8	retry_left;
	u8	rnr_left;
	bool	gap;		/* rewound for a missing response: wait */
	u8	rto_backoff;	/* consecutive timeouts without progress */
	atomic_t timer_fired;
	struct hrtimer		rto_timer;	/* retransmit, IBA 9.7.6.1 */
	u64	rto_ns;		/* 0 = infinite (timeout attr 0) */
};

/* create_qp, after queues exist; destroy_qp before queues go away (sync). */
int mrxe_pipe_init(struct mrxe_qp *qp);
void mrxe_pipe_cleanup(struct mrxe_qp *qp);
/* destroy_qp, before its synchronize_rcu(): no more write_space wake-ups */
void mrxe_pipe_tx_detach(struct mrxe_qp *qp);
/* destroy of a UD/UC QP or an AH: let posted sends leave first (may sleep) */
void mrxe_pipe_linger(struct mrxe_qp *qp, const char *what);
/*
 * modify_qp, called with the new attributes already stored in qp->attr and
 * qp->state (outside state_lock, process context).  Handles PSN init on
 * RTR/RTS, flush on ERROR, drain on SQD, reset on RESET.
 */
void mrxe_pipe_modify(struct mrxe_qp *qp, const struct ib_qp_attr *attr,
		      int mask, enum ib_qp_state old_state);
/* SQ doorbell (user kick through post_send with no WRs, or kernel post). */
void mrxe_pipe_kick_sq(struct mrxe_qp *qp);
/* a user QP's SQ doorbell: process context, may run the pipeline */
void mrxe_pipe_doorbell(struct mrxe_qp *qp);
void mrxe_pipe_prio_set(struct mrxe_qp *qp, u8 prio);	/* qp->state_lock */
/* RQ/SRQ got new WQEs (RNR recovery may continue). */
void mrxe_pipe_kick_rq(struct mrxe_qp *qp);

/*
 * REQUESTED BY DATA PATH (to mrxe_net.c): fill the ICRC (IBA A17.3.3) of an
 * outgoing RoCEv2 packet.  mrxe_net_xmit() must call this once the IP and
 * UDP headers are final (network and transport header offsets set, IPv4 ID
 * chosen, lengths set; TTL/TOS/checksums are masked so they may change
 * later) and before ip_local_out()/ip6_local_out().  The data path reserves
 * the last 4 bytes of the skb for it.  Implemented in mrxe_recv.c.
 */
void mrxe_icrc_generate(struct sk_buff *skb);

#endif /* MRXE_PIPE_H */
