/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * mrxe generic netlink family: MetaRoCE configuration and statistics,
 * spoken by tools/mrxectl.  Devices are named by MRXE_ATTR_IBDEV_NAME;
 * requests are validated against the policy in drivers/mrxe_nl.c.
 */
#ifndef MRXE_NETLINK_USER_H
#define MRXE_NETLINK_USER_H

#define MRXE_GENL_NAME		"mrxe"
#define MRXE_GENL_VERSION	1

enum mrxe_nl_cmd {
	MRXE_CMD_UNSPEC,
	MRXE_CMD_DEV_GET,	/* dumpable: device config + counters */
	MRXE_CMD_DEV_SET,	/* set device defaults */
	MRXE_CMD_QP_GET,	/* dumpable: per-QP state and counters */
	MRXE_CMD_QP_SET,	/* per-QP override (mode only before RTR) */
	MRXE_CMD_PATH_GET,	/* dumpable: per-path state of one QP */
	__MRXE_CMD_MAX,
};
#define MRXE_CMD_MAX (__MRXE_CMD_MAX - 1)

enum mrxe_nl_attr {
	MRXE_ATTR_UNSPEC,
	MRXE_ATTR_PAD,
	MRXE_ATTR_IBDEV_NAME,		/* string */
	MRXE_ATTR_IBDEV_INDEX,		/* u32 */
	MRXE_ATTR_NETDEV_NAME,		/* string */
	MRXE_ATTR_TRANSPORT_MODE,	/* u32, enum mrxe_transport_mode */
	MRXE_ATTR_NUM_PATHS,		/* u32, 1..MRXE_MAX_PATHS */
	MRXE_ATTR_ECN,			/* u8, mark ECT(0) when set */
	MRXE_ATTR_CNP_INTERVAL_US,	/* u32 */
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
	__MRXE_ATTR_MAX,
};
#define MRXE_ATTR_MAX (__MRXE_ATTR_MAX - 1)

enum mrxe_path_state {
	MRXE_PATH_ACTIVE,
	MRXE_PATH_CONGESTED,
	MRXE_PATH_SUSPECT,
	MRXE_PATH_DEAD,
};

#endif /* MRXE_NETLINK_USER_H */
