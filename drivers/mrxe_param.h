/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Every device limit in one place.  query_device reports exactly these, and
 * every create/post path checks against them.
 */
#ifndef MRXE_PARAM_H
#define MRXE_PARAM_H

#define MRXE_UDP_PORT			4791	/* IANA RoCEv2, IBA A17.2 */
#define MRXE_VENDOR_ID			0xFFFFFF
#define MRXE_MAX_QP			0x10000
#define MRXE_MIN_QPN			16	/* QP0/QP1 reserved, IBA 10.2.5 */
#define MRXE_MAX_QP_WR			0x4000
#define MRXE_MAX_SGE			32
#define MRXE_MAX_INLINE			512
#define MRXE_MAX_CQ			0x4000
#define MRXE_MAX_CQE			0x8000
#define MRXE_MAX_MR			0x40000
#define MRXE_MAX_MR_SIZE		(1ULL << 36)	/* 64 GiB */
#define MRXE_MAX_FMR_PAGES		512
#define MRXE_MAX_MW			0x10000
#define MRXE_MAX_PD			0x8000
#define MRXE_MAX_AH			0x8000
#define MRXE_MAX_SRQ			0x4000
#define MRXE_MAX_SRQ_WR			0x4000
#define MRXE_MAX_SRQ_SGE		32
#define MRXE_MAX_QP_RD_ATOM		128
#define MRXE_MAX_RES_RD_ATOM		0x3f000
#define MRXE_MAX_MCAST_GRP		8192
#define MRXE_MAX_MCAST_QP_ATTACH	56
#define MRXE_MAX_TOT_MCAST_QP_ATTACH	(MRXE_MAX_MCAST_GRP * MRXE_MAX_MCAST_QP_ATTACH)
#define MRXE_MAX_PKEYS			1
#define MRXE_PAGE_SIZE_CAP		0xfffff000
#define MRXE_GID_TABLE_LEN		1024
#define MRXE_MAX_MSG_SZ			0x80000000	/* 2 GiB, IBA 9.4 */
/* RC packets (PSNs) per message: half of the 2^23 outstanding, IBA 9.7.1 */
#define MRXE_MAX_MSG_PKTS		(1U << 22)
#define MRXE_DEFAULT_MTU		IB_MTU_1024
#define MRXE_LINGER_MS			500	/* destroy_qp: UD/UC sends */
#define MRXE_FLOW_LABEL_MASK		0xfffff	/* IPv6 flow label: 20 bits */

#endif /* MRXE_PARAM_H */
