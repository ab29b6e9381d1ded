/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * mrxe: soft-RoCE with a MetaRoCE transport.  Core definitions shared by
 * every pipeline stage.
 *
 * File map (one file per stage, as rxe):
 *   mrxe_main.c   module init/exit, rdma_link_ops, device register/unregister
 *   mrxe_net.c    per-netns UDP/4791 sockets, transmit, receive entry
 *   mrxe_verbs.c  ib_device_ops glue; mrxe_{pd,mr,mw,cq,qp,srq,ah}.c objects
 *   mrxe_queue.c  shared rings (mmap) and kernel-owned rings
 *   mrxe_recv.c   packet validation and dispatch to responder/completer
 *   mrxe_req.c    requester, mrxe_resp.c responder, mrxe_comp.c completer
 *   mrxe_nl.c     generic netlink family "mrxe" (mrxectl): config, QPs,
 *                 counters, events
 *   proto/        pure-C protocol logic (wire format, SACK, paths, CC)
 *
 * Ownership of the structs below: each struct is edited only by the files
 * that own the object; everyone else reads it through the helpers below.
 */
#ifndef MRXE_H
#define MRXE_H

#include <linux/module.h>
#include <linux/skbuff.h>
#include <linux/netdevice.h>
#include <linux/xarray.h>
#include <linux/refcount.h>
#include <linux/completion.h>
#include <linux/workqueue.h>
#include <linux/hrtimer.h>
#include <linux/rbtree.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>
#include <rdma/uverbs_ioctl.h>

#include <rdma/mrxe-abi.h>
#include "mrxe_shim.h"
#include "mrxe_ring.h"
#include "mrxe_param.h"
#include "mrxe_pipe.h"
#include "mrxe_cc.h"
#include "mrxe_compat.h"

#define DRV_NAME	"rdma_mrxe"

/*
 * Headroom every transmit skb gets in front of the BTH: link layer header
 * plus the larger (IPv6) network header plus UDP.
 */
#define MRXE_SKB_HEADROOM	(LL_MAX_HEADER + 40 /* ipv6hdr */ + 8 /* udphdr */)

#define mrxe_dbg_dev(dev, fmt, ...) \
	ibdev_dbg(&(dev)->ib_dev, "%s: " fmt, __func__, ##__VA_ARGS__)
#define mrxe_err_dev(dev, fmt, ...) \
	ibdev_err_ratelimited(&(dev)->ib_dev, "%s: " fmt, __func__, ##__VA_ARGS__)

struct mrxe_net;	/* per-netns socket state, mrxe_net.c */

/* Device counters exported through rdma hw_stats (mrxe_device.c). */
enum mrxe_counter {
	MRXE_CNT_SENT_PKTS,
	MRXE_CNT_RCVD_PKTS,
	MRXE_CNT_SENT_BYTES,
	MRXE_CNT_RCVD_BYTES,
	MRXE_CNT_RETRANS_PKTS,
	MRXE_CNT_RETRANS_TIMEOUTS,
	MRXE_CNT_RCV_DUP_REQ,
	MRXE_CNT_SEQ_ERR_NAKS_SENT,
	MRXE_CNT_SEQ_ERR_NAKS_RCVD,
	MRXE_CNT_RNR_NAKS_SENT,
	MRXE_CNT_RNR_NAKS_RCVD,
	MRXE_CNT_RCV_DROPPED,		/* malformed/unknown QP/bad ICRC */
	MRXE_CNT_ICRC_ERR,
	MRXE_CNT_QKEY_VIOLATION,
	MRXE_CNT_COMPLETER_ERR,
	MRXE_CNT_RESPONDER_ERR,
	MRXE_CNT_LINK_DOWNED,
	MRXE_CNT_ECN_MARKED,
	MRXE_CNT_CNP_SENT,
	MRXE_CNT_CNP_RCVD,
	MRXE_CNT_MODE_MISMATCH,
	MRXE_CNT_META_RETRANS,		/* MetaRoCE: selective retransmits */
	MRXE_CNT_META_SPURIOUS,
	MRXE_CNT_META_OOO,
	MRXE_CNT_META_HOLES,
	MRXE_CNT_META_TLP,
	MRXE_CNT_META_RTO,
	MRXE_CNT_META_RTO_SPURIOUS,	/* RTOs F-RTO found spurious */
	MRXE_CNT_META_OUT_OF_WINDOW,
	MRXE_CNT_META_UPGRADES,
	MRXE_CNT_META_RSP_GAP,		/* responses re-requested on a gap */
	MRXE_CNT_XMIT_ORDER_WAITS,	/* sent after another CPU's backlog */
	MRXE_CNT_XMIT_ORDER_EXPIRED,	/* ... gave up waiting for it */
	MRXE_CNT_XMIT_BUSY,		/* refused by a full local queue */
	MRXE_CNT_CNP_PACED,		/* CE seen, CNP held back (interval) */
	MRXE_CNT_CC_RATE_CUTS,		/* DCQCN rate decreases */
	/* receive drops by reason (mrxe_rxcheck.c); rcvd_dropped counts all */
	MRXE_CNT_RX_DROP_LENGTH,	/* UDP length, truncated, pad, payload */
	MRXE_CNT_RX_DROP_OPCODE,	/* unknown/unsupported opcode or TVer */
	MRXE_CNT_RX_DROP_PKEY,		/* P_Key not the default partition */
	MRXE_CNT_RX_DROP_NO_QP,		/* destination QPN of no QP */
	MRXE_CNT_RX_DROP_SRC_ADDR,	/* RC/UC: not from the QP's peer */
	MRXE_CNT_RX_DROP_GHOST,		/* response/ACK for a PSN never sent */
	MRXE_CNT_XMIT_NO_ROUTE,		/* no route/address: netdev down, addr gone */
	MRXE_CNT_FLUSH_EXECUTED,	/* RDMA FLUSH requests executed */
	MRXE_CNT_ATOMIC_WRITE_EXECUTED,	/* RDMA ATOMIC WRITEs placed */
	MRXE_CNT_META_PLACED,		/* WRITE/SEND packets placed ahead of ePSN */
	MRXE_CNT_META_RSP_WND_CUTS,	/* READ response window halvings */
	MRXE_CNT_PRIO_DEMOTED,		/* work moved to normal workers */
	MRXE_CNT_META_STALE_NAK,	/* NAKs for a PSN already acknowledged */
	MRXE_CNT_META_READ_STRADDLE,	/* re-requested READs past resp.psn */
	MRXE_CNT_READ_RSP_REPLAYED,	/* READ responses sent again (dup READ) */
	MRXE_CNT_READ_DUP_STREAMING,	/* dup READ PSNs the stream still sends */
	MRXE_CNT_READ_DUP_QUEUED,	/* dup READ PSNs a queued replay sends */
	MRXE_CNT_READ_DUP_OVERFLOW,	/* dup READs over MRXE_META_REPLAY_MAX */
	MRXE_CNT_META_WRITE_RECOPIED,	/* placed WRITE packets copied again */
	MRXE_CNT_DOORBELL_RUNS,		/* pipeline runs in a user's post_send */
	MRXE_CNT_TX_QUEUE_FULL,		/* sender held at its local queue cap */
	MRXE_CNT_META_WND_FULL,		/* MetaRoCE sender held at its window */
	MRXE_NUM_COUNTERS,
};

/* Device-wide MetaRoCE defaults (netlink configuration: issue 9). */
struct mrxe_dev_cfg {
	u32	transport_mode;		/* enum mrxe_transport_mode */
	u32	num_paths;		/* 1..MRXE_MAX_PATHS */
	u32	window;			/* MetaRoCE packets in flight */
	bool	ecn;			/* mark ECT(0) */
	u32	cnp_interval_us;
	u32	cc;			/* enum mrxe_nl_cc: reaction point */
	struct mrxe_dcqcn_params dcqcn;	/* taken by QPs at create/RESET */
};

struct mrxe_dev {
	struct ib_device	ib_dev;
	struct ib_device_attr	attr;		/* constant after register */

	/*
	 * Bound netdev and its namespace.  ndev is held (netdev_hold) for the
	 * device lifetime; net is the netdev's namespace at link time, whose
	 * UDP socket (mrxe_net) carries our packets.
	 */
	struct net_device	*ndev;
	netdevice_tracker	ndev_tracker;
	struct mrxe_net		*mnet;
	struct list_head	list;		/* mrxe_dev_list, under mrxe_dev_mutex */

	/* port_lock protects port_attr (state/mtu follow the netdev) */
	spinlock_t		port_lock;
	struct ib_port_attr	port_attr;

	/*
	 * Object tables: qpn -> mrxe_qp, key index -> mrxe_mr/mrxe_mw,
	 * ah_num -> mrxe_ah, srq_num -> mrxe_srq.  xarrays carry their own
	 * locks; lookups from the packet path run under rcu_read_lock() and
	 * take a reference with refcount_inc_not_zero().
	 */
	struct xarray		qp_xa;
	struct xarray		mr_xa;		/* index = key >> 8 */
	struct xarray		ah_xa;
	struct xarray		srq_xa;
	u32			next_qpn;	/* under qp_xa's lock */
	u32			next_mr_index;	/* under mr_xa's lock */
	u32			next_ah_num;	/* under ah_xa's lock */
	u32			next_srq_num;	/* under srq_xa's lock */
	atomic_t		next_cqn;
	atomic_t		num_qp, num_cq, num_pd, num_mr, num_mw,
				num_srq, num_ah, num_ucontext;

	struct mrxe_dev_cfg	cfg;		/* under cfg_lock */
	spinlock_t		cfg_lock;

	atomic64_t		stats[MRXE_NUM_COUNTERS];

	/*
	 * QP work items (mrxe_pipe_work): wq_hi has high-priority (nice
	 * -20) workers, wq normal ones.  Every QP's work runs on wq_hi
	 * while num_prio_qp is 0; while QPs at MRXE_PRIO_HIGH or above
	 * exist (num_prio_qp counts them), only theirs does and the others'
	 * runs on wq (design.rst "QP priority").  Each QP's current queue
	 * is its pipe.wq.  wq_cpu: per-CPU high-priority workers, for a
	 * packet that finds its QP idle (mrxe_pipe_enqueue), and for all of
	 * wq_hi's work with wq_local=2; wq_mode: the wq_local the device
	 * was created with.
	 */
	struct workqueue_struct	*wq;
	struct workqueue_struct	*wq_hi;
	struct workqueue_struct	*wq_cpu;
	int			wq_mode;
	atomic_t		num_prio_qp;

	/*
	 * Multicast groups (mrxe_mcast.c): MGID -> struct mrxe_mcg.
	 * mcg_mutex serialises attach/detach/QP cleanup and the netdev's IP
	 * group joins (lock order: mcg_mutex -> rtnl_lock -> mcg_lock).
	 * mcg_lock (BH) protects mcg_tree and every group's QP array against
	 * the receive path; writers hold both.  num_mcg and num_mcg_attach
	 * are under mcg_mutex.
	 */
	struct mutex		mcg_mutex;
	spinlock_t		mcg_lock;
	struct rb_root		mcg_tree;
	u32			num_mcg;
	u32			num_mcg_attach;
};

static inline struct mrxe_dev *to_mdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct mrxe_dev, ib_dev);
}

static inline void mrxe_counter_inc(struct mrxe_dev *dev, enum mrxe_counter c)
{
	atomic64_inc(&dev->stats[c]);
}

static inline void mrxe_counter_add(struct mrxe_dev *dev, enum mrxe_counter c,
				    s64 v)
{
	atomic64_add(v, &dev->stats[c]);
}

/* Shared (mmap'able) or kernel-only ring. */
struct mrxe_queue {
	struct mrxe_dev		*dev;
	struct mrxe_ring_hdr	*buf;		/* vmalloc_user() memory */
	size_t			buf_size;
	u32			log2_elem_size;
	u32			index_mask;
	bool			is_user;
	struct rdma_user_mmap_entry *mmap_entry;	/* NULL for kernel rings */
	/*
	 * Private copies of the index we own; the shared copy in buf is only
	 * ever written by its owner, the other one is re-read and validated.
	 */
	u32			prod;		/* kernel-produced rings */
	u32			cons;		/* kernel-consumed rings */
	spinlock_t		lock;		/* serialises kernel producers */
};

struct mrxe_ucontext {
	struct ib_ucontext	ibuc;
};

struct mrxe_pd {
	struct ib_pd		ibpd;
	atomic_t		num_mr;		/* MRs/MWs/AHs on this PD */
};

enum mrxe_mr_type {
	MRXE_MR_USER,
	MRXE_MR_DMA,
	MRXE_MR_FAST_REG,
};

enum mrxe_mr_state {
	MRXE_MR_INVALID,
	MRXE_MR_FREE,
	MRXE_MR_VALID,
};

#define MRXE_MR_DEREG		INT_MIN	/* mrxe_mr.num_mw: deregistering */

struct mrxe_mr {
	struct ib_mr		ibmr;
	refcount_t		ref;		/* packet-path users + 1 */
	struct completion	released;
	enum mrxe_mr_type	type;
	enum mrxe_mr_state	state;		/* fast-reg/invalidate */
	int			access;
	u64			iova;
	u64			length;
	struct ib_umem		*umem;		/* MRXE_MR_USER */
	struct page		**pages;	/* page per PAGE_SIZE of iova range */
	u32			npages;
	u64			*fr_pages;	/* fast-reg page list (dma addrs) */
	u32			fr_max, fr_n;
	u32			page_shift;
	/* bound MWs; MRXE_MR_DEREG once deregistration has begun */
	atomic_t		num_mw;
	u32			page_offset;	/* of iova in pages[0] / fr_pages[0] */
	struct mrxe_pd		*pd;
	/*
	 * The keys as the device holds them.  Not ibmr.lkey/rkey: a kernel
	 * consumer changes those when it posts a fast-reg WR
	 * (ib_update_fast_reg_key), while the key changes for the device
	 * only when that WR executes (IBA 10.6.3.5, 10.8.2.2); until then
	 * the old key stays valid and a LOCAL_INV of it must succeed.
	 */
	u32			lkey;
	u32			rkey;
	/*
	 * lock protects state, iova, length, access and the keys of a
	 * fast-reg MR against concurrent fast-reg/invalidate/lookup.
	 */
	spinlock_t		lock;
	struct rcu_head		rcu;		/* freed after an RCU grace period */
};

struct mrxe_mw {
	struct ib_mw		ibmw;
	refcount_t		ref;
	struct completion	released;
	spinlock_t		lock;		/* state, mr, qp, addr, length, access */
	enum mrxe_mr_state	state;
	struct mrxe_mr		*mr;		/* bound MR (ref held) */
	u32			qpn;		/* type 2: bound QP, else 0 */
	int			access;
	u64			addr;
	u64			length;
};

struct mrxe_cq {
	struct ib_cq		ibcq;
	struct mrxe_queue	*queue;
	spinlock_t		cq_lock;	/* producers of queue, notify */
	u8			notify;		/* IB_CQ_SOLICITED / NEXT_COMP */
	bool			is_user;
	bool			is_dying;
	struct work_struct	comp_work;	/* runs comp_handler */
};

struct mrxe_srq {
	struct ib_srq		ibsrq;
	refcount_t		ref;
	struct completion	released;
	/*
	 * rq_lock protects the rq pointer (a resize swaps it: every reader
	 * takes the lock), kernel posters of rq, its consumer (responders)
	 * and limit.  resize_mutex serialises resizes.
	 */
	struct mrxe_queue	*rq;
	spinlock_t		rq_lock;
	struct mutex		resize_mutex;
	u32			srq_num;
	u32			limit;		/* 0 = disarmed, under rq_lock */
	u32			max_sge;
	u32			wqe_size;	/* ring slot size, never changes */
	bool			is_user;
};

/* Resolved address vector (RoCEv2: IPv4 or IPv6 over UDP). */
struct mrxe_av {
	/*
	 * Egress netdev of the SGID (its gid_attr's): ours, or a VLAN over
	 * ours, whose IPs ib_core puts in our GID table; 0: ours.
	 */
	int			ifindex;
	u8			network_type;	/* RDMA_NETWORK_IPV4/IPV6 */
	u8			sl;		/* service level, 0-7 (prio) */
	u8			dmac[ETH_ALEN];
	struct ib_global_route	grh;
	union {
		struct sockaddr_in	v4;
		struct sockaddr_in6	v6;
	} saddr, daddr;
};

/*
 * QP priority (design.rst "QP priority").  IBA 7.6.5: the SL selects a
 * service level; RoCE has no SL on the wire, so as on RoCE NICs it
 * becomes the Ethernet priority (skb->priority, which a VLAN egress map
 * turns into the 802.1Q PCP, as annex A16 maps the SL for RoCE) while the
 * GRH traffic class is written into the IP DS field (A17.4.5.1).  The priority is the
 * larger of the SL and the traffic class's DSCP class selector (DSCP >> 3,
 * RFC 2474 4.2.2): perftest --sl 5 and --tclass 184 (DSCP 46, EF) both
 * give 5.  The priority goes to skb->priority of every packet (the
 * netdev's qdisc and a NIC's traffic classes order by it), and from
 * MRXE_PRIO_HIGH on the QP's work runs on high-priority workers
 * (design.rst "QP priority").
 */
#define MRXE_PRIO_MAX		7
/* from this priority on a QP's work runs on the device's WQ_HIGHPRI queue */
#define MRXE_PRIO_HIGH		4

static inline u8 mrxe_av_prio(const struct mrxe_av *av)
{
	return max_t(u8, av->sl & MRXE_PRIO_MAX, av->grh.traffic_class >> 5);
}

/*
 * CNPs leave at this Ethernet priority whatever their QP's, as RoCE NICs
 * send them on a priority of their own (6 by default) so that the
 * congestion signal is not queued behind the traffic it is about.
 */
#define MRXE_CNP_PRIO		6

struct mrxe_ah {
	struct ib_ah		ibah;
	refcount_t		ref;		/* packet-path users + 1 */
	struct completion	released;
	struct mrxe_av		av;
	u32			ah_num;
	bool			is_user;
};

struct mrxe_qp {
	struct ib_qp		ibqp;
	refcount_t		ref;		/* packet-path users + 1 */
	struct completion	released;
	bool			is_user;
	struct mrxe_pd		*pd;
	struct mrxe_cq		*scq, *rcq;
	struct mrxe_srq		*srq;
	struct mrxe_queue	*sq, *rq;
	spinlock_t		sq_lock;	/* kernel posters of sq */
	spinlock_t		rq_lock;	/* kernel posters/consumers of rq */
	u32			sq_max_sge, rq_max_sge, max_inline;
	bool			sq_sig_all;	/* IB_SIGNAL_ALL_WR at create */

	/*
	 * state_lock protects attr, state and av: written by modify_qp and by
	 * the pipeline moving the QP to ERROR, read by everyone, including
	 * kernel ULPs posting from hard-IRQ context: always taken with
	 * spin_lock_irqsave().
	 */
	spinlock_t		state_lock;
	enum ib_qp_state	state;
	struct ib_qp_attr	attr;
	struct mrxe_av		av;		/* primary path */
	u32			mtu;		/* bytes, from path_mtu */

	/* MetaRoCE: resolved at create (DEFAULT -> device cfg). */
	u32			transport_mode;
	u32			num_paths;
	u32			window;		/* MetaRoCE in-flight cap */
	/*
	 * Priority set at create (mrxedv_create_qp, MRXE_QP_FLAG_PRIORITY):
	 * 0-7, used instead of mrxe_av_prio() of the QP's AV for its work
	 * (pipe.prio) and for skb->priority of its packets; -1: none.
	 * Constant after create.
	 */
	s8			prio_fixed;

	struct mrxe_pipe_state	pipe;
	struct mrxe_req_state	req;
	struct mrxe_resp_state	resp;
	struct mrxe_comp_state	comp;

	/*
	 * The device counters this QP moved (mrxe_qp_counter_*), for the
	 * netlink family's per-QP statistics; atomic: softirq receive and
	 * the work item both count.
	 */
	atomic64_t		stats[MRXE_NUM_COUNTERS];
	struct mrxe_cc_qp	cc;		/* congestion control, mrxe_cc.c */
};

static inline struct mrxe_pd *to_mpd(struct ib_pd *pd)
{
	return pd ? container_of(pd, struct mrxe_pd, ibpd) : NULL;
}

static inline struct mrxe_mr *to_mmr(struct ib_mr *mr)
{
	return mr ? container_of(mr, struct mrxe_mr, ibmr) : NULL;
}

static inline struct mrxe_mw *to_mmw(struct ib_mw *mw)
{
	return mw ? container_of(mw, struct mrxe_mw, ibmw) : NULL;
}

static inline struct mrxe_cq *to_mcq(struct ib_cq *cq)
{
	return cq ? container_of(cq, struct mrxe_cq, ibcq) : NULL;
}

static inline struct mrxe_srq *to_msrq(struct ib_srq *srq)
{
	return srq ? container_of(srq, struct mrxe_srq, ibsrq) : NULL;
}

static inline struct mrxe_ah *to_mah(struct ib_ah *ah)
{
	return ah ? container_of(ah, struct mrxe_ah, ibah) : NULL;
}

static inline struct mrxe_qp *to_mqp(struct ib_qp *qp)
{
	return qp ? container_of(qp, struct mrxe_qp, ibqp) : NULL;
}

static inline struct mrxe_dev *qp_dev(struct mrxe_qp *qp)
{
	return to_mdev(qp->ibqp.device);
}

/* Count for the device and for the QP (per-QP netlink statistics). */
static inline void mrxe_qp_counter_add(struct mrxe_qp *qp,
				       enum mrxe_counter c, s64 v)
{
	mrxe_counter_add(qp_dev(qp), c, v);
	atomic64_add(v, &qp->stats[c]);
}

static inline void mrxe_qp_counter_inc(struct mrxe_qp *qp,
				       enum mrxe_counter c)
{
	mrxe_qp_counter_add(qp, c, 1);
}

/* ---- mrxe_main.c ---- */
extern struct mutex mrxe_dev_mutex;	/* protects mrxe_dev_list */
extern struct list_head mrxe_dev_list;
void mrxe_port_update(struct mrxe_dev *dev);	/* netdev state/MTU changed */

/* ---- mrxe_net.c ---- */
int mrxe_net_init(void);
void mrxe_net_exit(void);
int mrxe_net_attach(struct mrxe_dev *dev);	/* get/create netns socket */
struct socket *mrxe_net_qp_sock(struct mrxe_dev *dev);
void mrxe_net_detach(struct mrxe_dev *dev);
/*
 * Transmit one RoCEv2 packet: skb->data points at the BTH and the skb has
 * MRXE_SKB_HEADROOM of headroom; ecn is the IP ECN codepoint to set
 * (INET_ECN_NOT_ECT or INET_ECN_ECT_0); routing uses the netdev's netns;
 * mrxe_net adds UDP/IP/Ethernet.  sport is the
 * per-packet UDP source port (multipath entropy).  Consumes skb.
 */
int mrxe_net_xmit(struct mrxe_dev *dev, const struct mrxe_av *av,
		  struct sk_buff *skb, u16 sport, u8 ecn, u8 prio);
/*
 * Allocate a transmit skb: skb->data at the BTH, skb->len == payload_len
 * (BTH through ICRC, to be filled by the caller), MRXE_SKB_HEADROOM of
 * headroom.  GFP_ATOMIC; NULL on failure.
 */
struct sk_buff *mrxe_net_alloc_skb(struct mrxe_dev *dev,
				   const struct mrxe_av *av, int payload_len);
int mrxe_av_from_attr(struct mrxe_dev *dev, struct mrxe_av *av,
		      const struct rdma_ah_attr *attr);
/* Receive hook, implemented by mrxe_recv.c: skb->data at the BTH. */
void mrxe_rcv(struct mrxe_dev *dev, struct sk_buff *skb);
/* mrxe_rxcheck.c: receive validation helpers of mrxe_rcv() */
void mrxe_rx_count_parse_err(struct mrxe_dev *dev, int err);
bool mrxe_rx_src_ok(struct mrxe_qp *qp, const u8 *l3, bool ipv6);

/* ---- object lookups (mrxe_qp.c, mrxe_mr.c, ...) ---- */
struct mrxe_qp *mrxe_qp_get(struct mrxe_dev *dev, u32 qpn);
void mrxe_qp_put(struct mrxe_qp *qp);
struct mrxe_mr *mrxe_mr_get(struct mrxe_dev *dev, u32 key);
void mrxe_mr_put(struct mrxe_mr *mr);
struct mrxe_ah *mrxe_ah_get(struct mrxe_dev *dev, u32 ah_num);
void mrxe_ah_put(struct mrxe_ah *ah);
struct mrxe_mw *mrxe_mw_get(struct mrxe_dev *dev, u32 rkey);
void mrxe_mw_put(struct mrxe_mw *mw);


/* ---- mrxe_queue.c: rings ---- */
/*
 * Consumer side (kernel consumes SQ/RQ/SRQ rings).  Returns the slot at the
 * consumer index, or NULL when empty.  Re-reads the user-written producer
 * index with acquire semantics and treats an inconsistent one as empty
 * (and counts it).  Callers copy the WQE out before validating it.
 */
void mrxe_queue_advance(struct mrxe_queue *q);		/* consumer++ */
u32 mrxe_queue_count(struct mrxe_queue *q);
static inline u32 mrxe_queue_elem_size(const struct mrxe_queue *q)
{
	return 1U << q->log2_elem_size;
}

/* ---- mrxe_cq.c ---- */
/*
 * Post one completion; -EOVERFLOW raises IB_EVENT_CQ_ERR. Any context.
 * For user CQs status/opcode/wc_flags carry the uverbs values (IBV_WC_*);
 * for kernel CQs (cq->is_user false) they carry enum ib_wc_status,
 * enum ib_wc_opcode and enum ib_wc_flags, which poll_cq passes through.
 */
int mrxe_cq_post(struct mrxe_cq *cq, const struct mrxe_cqe *cqe, bool solicited);

/* ---- mrxe_srq.c ---- */
/*
 * Call after consuming SRQ WQEs: raises IB_EVENT_SRQ_LIMIT_REACHED once
 * (and disarms the limit) when fewer than srq->limit WQEs remain.
 */

/* ---- mrxe_mr.c: memory access for the data path ---- */
enum mrxe_copy_dir {
	MRXE_COPY_TO_MR,	/* buf -> memory */
	MRXE_COPY_FROM_MR,	/* memory -> buf */
};

/*
 * Local access through an SGE list (IBA 10.6.3.1 lkey checks: same PD,
 * access rights, bounds).  Copies len bytes starting offset bytes into the
 * list.  Returns 0, -EINVAL (bad lkey/bounds) or -EACCES (access rights).
 */
int mrxe_sgl_copy(struct mrxe_pd *pd, const struct mrxe_sge *sge, u32 num_sge,
		  u32 offset, void *buf, u32 len, enum mrxe_copy_dir dir,
		  int access);

/*
 * Remote access (IBA 9.7.4.1.4 / 10.6.3.2): resolve an rkey (MR or bound
 * MW) for [va, va+len) with the IB_ACCESS_REMOTE_* bits in access, on qp's
 * PD.  On success returns 0 and a referenced MR in *mrp (release with
 * mrxe_mr_put()); -EACCES/-EINVAL otherwise (caller NAKs remote access
 * error).
 */
int mrxe_rkey_resolve(struct mrxe_qp *qp, u32 rkey, u64 va, u32 len,
		      int access, struct mrxe_mr **mrp);
int mrxe_mr_copy(struct mrxe_mr *mr, u64 iova, void *buf, u32 len,
		 enum mrxe_copy_dir dir);
/* RDMA ATOMIC WRITE: 8 bytes at iova (8-aligned) in one store. */
int mrxe_mr_atomic_write(struct mrxe_mr *mr, u64 iova, const u8 *data);
/* 8-byte atomic at iova (must be 8-aligned): IB_WR_ATOMIC_* semantics. */
int mrxe_mr_atomic(struct mrxe_mr *mr, u64 iova, bool cmp_swap, u64 compare,
		   u64 swap_add, u64 *orig);
/* Local invalidate / fast-reg / MW bind executed from the send queue. */
int mrxe_invalidate_key(struct mrxe_qp *qp, u32 key);
int mrxe_fast_reg(struct mrxe_qp *qp, const struct mrxe_send_wqe *wqe);
int mrxe_bind_mw(struct mrxe_qp *qp, const struct mrxe_send_wqe *wqe);

/* ---- mrxe_qp.c ---- */
/* Move the QP to ERROR (async event, flush happens in the pipeline). */
void mrxe_qp_error(struct mrxe_qp *qp);

/* ---- mrxe_nl.c: generic netlink family "mrxe" ---- */
int mrxe_nl_init(void);
void mrxe_nl_exit(void);
/* QP entered ERROR from @old (any context). */
void mrxe_nl_qp_error_event(struct mrxe_qp *qp, enum ib_qp_state old);
void mrxe_nl_dev_config_event(struct mrxe_dev *dev,
			      const struct mrxe_dev_cfg *cfg);
/* mrxe_meta.c: a MetaRoCE requester's estimators, nothing for others */
int mrxe_meta_est_fill(struct sk_buff *skb, struct mrxe_qp *qp);
/* ---- mrxe_device.c ---- */
const char *mrxe_counter_name(unsigned int i);	/* hw_counters name */

/* ---- mrxe_mcast.c: UD multicast (IBA 10.5.2.4, 11.3.1, A17.5.6) ---- */
void mrxe_mcast_init(struct mrxe_dev *dev);
void mrxe_mcast_cleanup(struct mrxe_dev *dev);	/* dealloc: frees leftovers */
int mrxe_attach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid);
int mrxe_detach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid);
/* destroy_qp, before the QP leaves qp_xa: detach it from every group. */
void mrxe_mcast_qp_cleanup(struct mrxe_qp *qp);
/*
 * Receive of a validated packet (ICRC and P_Key checked) with destination
 * QPN 0xFFFFFF: a copy to every QP attached to the group named by the
 * destination IP address.  l3 is the IP header, len the BTH..ICRC length.
 * Softirq context; consumes skb.
 */
void mrxe_mcast_rcv(struct mrxe_dev *dev, struct sk_buff *skb, const u8 *l3,
		    bool ipv6, u32 len);

#endif /* MRXE_H */
