/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * mrxe generic netlink family: MetaRoCE configuration and statistics,
 * spoken by tools/mrxectl.  Devices are named by MRXE_ATTR_IBDEV_NAME;
 * requests are validated against the policy in drivers/mrxe_nl.c.
 *
 * The family is network-namespace aware: a request sees only the devices
 * whose netdev lives in the requester's namespace, and events go to that
 * namespace only.  Set commands need CAP_NET_ADMIN (GENL_ADMIN_PERM).
 * Documentation/mrxectl.rst lists the attributes of every message.
 */
#ifndef MRXE_NETLINK_USER_H
#define MRXE_NETLINK_USER_H

#define MRXE_GENL_NAME		"mrxe"
#define MRXE_GENL_VERSION	1
#define MRXE_GENL_MCGRP_EVENTS	"events"	/* MRXE_CMD_EVENT messages */

enum mrxe_nl_cmd {
	MRXE_CMD_UNSPEC,
	MRXE_CMD_DEV_GET,	/* dumpable: device config + counters */
	MRXE_CMD_DEV_SET,	/* set device defaults */
	MRXE_CMD_QP_GET,	/* dumpable: per-QP state and counters */
	MRXE_CMD_QP_SET,	/* reserved: per-QP override (not implemented) */
	MRXE_CMD_PATH_GET,	/* paths of one QP: IBDEV_NAME + QPN */
	MRXE_CMD_EVENT,		/* notification on the "events" group */
	__MRXE_CMD_MAX,
};
#define MRXE_CMD_MAX (__MRXE_CMD_MAX - 1)

enum mrxe_nl_attr {
	MRXE_ATTR_UNSPEC,
	MRXE_ATTR_PAD,
	MRXE_ATTR_IBDEV_NAME,		/* string */
	MRXE_ATTR_IBDEV_INDEX,		/* u32 */
	MRXE_ATTR_NETDEV_NAME,		/* string */
	MRXE_ATTR_TRANSPORT_MODE,	/* u32, enum mrxe_nl_transport */
	MRXE_ATTR_NUM_PATHS,		/* u32, 1..MRXE_MAX_PATHS */
	MRXE_ATTR_ECN,			/* u8, mark ECT(0) when set */
	MRXE_ATTR_CNP_INTERVAL_US,	/* u32, 1..MRXE_NL_CNP_INTERVAL_MAX */
	MRXE_ATTR_QPN,			/* u32 */
	MRXE_ATTR_PATH_INDEX,		/* u32 */
	MRXE_ATTR_PATH_SPORT,		/* u16, UDP source port */
	MRXE_ATTR_PATH_STATE,		/* u32, enum mrxe_path_state */
	MRXE_ATTR_PATH_RTT_US,		/* u32 */
	MRXE_ATTR_PATH_CWND,		/* u32, packets */
	MRXE_ATTR_STATS,		/* nest of MRXE_ATTR_STAT */
	MRXE_ATTR_STAT,			/* nest: NAME + VALUE */
	MRXE_ATTR_STAT_NAME,		/* string */
	MRXE_ATTR_STAT_VALUE,		/* u64 */
	MRXE_ATTR_QP_TYPE,		/* u8, enum ib_qp_type (RC 2, UC 3, UD 4, GSI 1) */
	MRXE_ATTR_QP_STATE,		/* u8, enum ib_qp_state (RESET 0 .. ERR 6) */
	MRXE_ATTR_DEST_QPN,		/* u32 */
	MRXE_ATTR_PEER_ADDR4,		/* be32, IPv4 address of the peer */
	MRXE_ATTR_PEER_ADDR6,		/* 16 bytes, IPv6 address of the peer */
	MRXE_ATTR_SQ_PSN,		/* u32, next PSN the requester sends */
	MRXE_ATTR_COMP_PSN,		/* u32, oldest unacknowledged PSN */
	MRXE_ATTR_RQ_PSN,		/* u32, next PSN the responder expects */
	MRXE_ATTR_PATHS,		/* nest of MRXE_ATTR_PATH */
	MRXE_ATTR_PATH,			/* nest: PATH_INDEX, PATH_SPORT, ... */
	MRXE_ATTR_NUM_QPS,		/* u32, QPs of the device */
	MRXE_ATTR_PORT_STATE,		/* u8, enum ib_port_state (DOWN 1, ACTIVE 4) */
	MRXE_ATTR_EVENT_TYPE,		/* u32, enum mrxe_nl_event */
	MRXE_ATTR_QP_OLD_STATE,		/* u8, QP_ERROR event: state before */
	/* congestion control (Documentation/design.rst, "Congestion control") */
	MRXE_ATTR_CC,			/* u8, enum mrxe_nl_cc */
	MRXE_ATTR_DCQCN_RATE_MAX_KBPS,	/* u32, line rate: Rc's start and ceiling */
	MRXE_ATTR_DCQCN_RATE_MIN_KBPS,	/* u32, Rc's floor, <= RATE_MAX */
	MRXE_ATTR_DCQCN_G,		/* u32, alpha gain g in 1/65536, 1..65536 */
	MRXE_ATTR_DCQCN_ALPHA_US,	/* u32, K: alpha update period */
	MRXE_ATTR_DCQCN_TIMER_US,	/* u32, T: rate increase timer */
	MRXE_ATTR_DCQCN_BYTE_COUNTER_KB, /* u32, B in KiB, 0: byte counter off */
	MRXE_ATTR_DCQCN_AI_KBPS,	/* u32, R_AI: additive increase step */
	MRXE_ATTR_DCQCN_HAI_KBPS,	/* u32, R_HAI: hyper increase step */
	MRXE_ATTR_DCQCN_F,		/* u32, F: fast recovery stages, 1..64 */
	MRXE_ATTR_QP_RATE_KBPS,		/* u64, QP_GET: current rate (Rc), 0: CC off */
	MRXE_ATTR_QP_PRIO,		/* u8, QP_GET: priority 0-7 (SL / DSCP class) */
	/*
	 * u32, MetaRoCE packets in flight per QP at most (IRN's
	 * bandwidth-delay cap), MRXE_NL_WINDOW_MIN..MRXE_NL_WINDOW_MAX;
	 * DEV_SET/GET: the default new QPs take, QP_GET: the QP's own
	 */
	MRXE_ATTR_WINDOW,
	/*
	 * QP_GET, MetaRoCE requester: its loss-recovery estimators, a
	 * snapshot for reporting (Documentation/design.rst, "Loss recovery").
	 * u32 microseconds; SRTT and min_RTT 0 before the first sample.
	 */
	MRXE_ATTR_QP_SRTT_US,
	MRXE_ATTR_QP_MIN_RTT_US,
	MRXE_ATTR_QP_RTO_US,		/* with its backoff */
	MRXE_ATTR_QP_REO_WND_US,	/* the scoreboard's (RACK) */
	MRXE_ATTR_QP_RSP_REO_WND_US,	/* READ responses' (mrxe_rsprec.h) */
	MRXE_ATTR_QP_RSP_WND,		/* u32, READ response window, PSNs */
	__MRXE_ATTR_MAX,
};
#define MRXE_ATTR_MAX (__MRXE_ATTR_MAX - 1)

/*
 * Transport modes as netlink carries them.  STANDARD and METAROCE have the
 * values of enum mrxe_transport_mode (rdma/mrxe-abi.h); AUTO (negotiate per
 * QP) exists only as a device default.
 */
enum mrxe_nl_transport {
	MRXE_NL_TRANSPORT_STANDARD = 1,
	MRXE_NL_TRANSPORT_METAROCE = 2,
	MRXE_NL_TRANSPORT_AUTO = 3,
};

#define MRXE_NL_CNP_INTERVAL_MAX	1000000	/* us */
#define MRXE_NL_WINDOW_MIN		16	/* packets */
#define MRXE_NL_WINDOW_MAX		4096	/* MRXE_SACK_WINDOW */

/* MRXE_ATTR_CC: the reaction point of standard-mode QPs. */
enum mrxe_nl_cc {
	MRXE_NL_CC_OFF = 0,
	MRXE_NL_CC_DCQCN = 1,
};

/* Ranges of the DCQCN attributes (EINVAL with an extack message outside). */
#define MRXE_NL_DCQCN_RATE_MIN		100U		/* kbit/s */
#define MRXE_NL_DCQCN_RATE_MAX		4000000000U	/* kbit/s (4 Tbit/s) */
#define MRXE_NL_DCQCN_US_MAX		1000000U	/* K and T, us */
#define MRXE_NL_DCQCN_BC_MAX_KB		(1U << 22)	/* 4 GiB */
#define MRXE_NL_DCQCN_F_MAX		64U

enum mrxe_path_state {
	MRXE_PATH_ACTIVE,
	MRXE_PATH_CONGESTED,
	MRXE_PATH_SUSPECT,
	MRXE_PATH_DEAD,
};

/* MRXE_ATTR_EVENT_TYPE of an MRXE_CMD_EVENT message. */
enum mrxe_nl_event {
	MRXE_EVENT_UNSPEC,
	MRXE_EVENT_QP_ERROR,	/* IBDEV_*, QPN, QP_OLD_STATE */
	MRXE_EVENT_DEV_CONFIG,	/* IBDEV_*, the new config attributes */
};

#endif /* MRXE_NETLINK_USER_H */
