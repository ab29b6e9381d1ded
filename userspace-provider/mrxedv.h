/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * mrxedv.h - mrxe direct verbs.
 *
 * Plain libibverbs programs run unmodified on mrxe devices and get the
 * device's default transport (set with mrxectl).  This header is for
 * programs that want to choose per QP:
 *
 *   MRXEDV_TRANSPORT_STANDARD  plain RoCEv2 (IBA + Annex A17), talks to any
 *                              RoCEv2 peer including stock rdma_rxe;
 *   MRXEDV_TRANSPORT_METAROCE  multipath (per-packet UDP source port),
 *                              out-of-order placement, SACK retransmit.
 *                              Both ends of a connection must use it.
 *   MRXEDV_TRANSPORT_AUTO      starts as RoCEv2 and upgrades to MetaRoCE
 *                              in-band when the peer is an mrxe QP in auto
 *                              mode; stays RoCEv2 with anything else.
 *
 * Link with the provider itself (-lmrxe-rdmav34 from the libibverbs provider
 * directory, or -l:libmrxe-rdmav34.so).  Every function is safe to call on a
 * non-mrxe device or QP: it fails with EOPNOTSUPP.
 *
 * Example:
 *	struct mrxedv_qp_init_attr dv = {
 *		.comp_mask = MRXEDV_QP_INIT_ATTR_TRANSPORT |
 *			     MRXEDV_QP_INIT_ATTR_NUM_PATHS,
 *		.transport_mode = MRXEDV_TRANSPORT_METAROCE,
 *		.num_paths = 4,
 *	};
 *	qp = mrxedv_create_qp(ctx, &attr_ex, &dv);
 */
#ifndef MRXEDV_H
#define MRXEDV_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Values equal enum mrxe_transport_mode of <rdma/mrxe-abi.h>. */
enum mrxedv_transport_mode {
	MRXEDV_TRANSPORT_DEFAULT = 0,	/* the device default (mrxectl) */
	MRXEDV_TRANSPORT_STANDARD = 1,
	MRXEDV_TRANSPORT_METAROCE = 2,
	MRXEDV_TRANSPORT_AUTO = 3,	/* RoCEv2, upgrades in-band */
};

#define MRXEDV_MAX_PATHS 16

/* Which fields of struct mrxedv_qp_init_attr are valid. */
enum mrxedv_qp_init_attr_mask {
	MRXEDV_QP_INIT_ATTR_TRANSPORT = 1 << 0,
	MRXEDV_QP_INIT_ATTR_NUM_PATHS = 1 << 1,
	MRXEDV_QP_INIT_ATTR_FLAGS = 1 << 2,
	MRXEDV_QP_INIT_ATTR_PRIORITY = 1 << 3,
};

#define MRXEDV_MAX_PRIORITY 7

enum mrxedv_qp_flags {
	/* MetaRoCE: spray packets over num_paths UDP source ports. */
	MRXEDV_QP_FLAG_SPRAY = 1 << 0,
};

struct mrxedv_qp_init_attr {
	uint64_t comp_mask;		/* enum mrxedv_qp_init_attr_mask */
	uint32_t transport_mode;	/* enum mrxedv_transport_mode */
	/*
	 * 1..16 UDP source ports (paths) a MetaRoCE RC QP sprays its requests
	 * over; without MRXEDV_QP_INIT_ATTR_NUM_PATHS the device default.
	 * More than 1 on UC/UD or with a STANDARD/AUTO mode: EINVAL.
	 */
	uint32_t num_paths;
	uint32_t flags;			/* enum mrxedv_qp_flags */
	/*
	 * With MRXEDV_QP_INIT_ATTR_PRIORITY: 0..MRXEDV_MAX_PRIORITY, the QP's
	 * priority instead of the one its address vector gives (the larger
	 * of the SL and the traffic class's DSCP >> 3).  From 4 on, while
	 * the device is busy, the QP's work runs before that of lower ones;
	 * it is also the Ethernet priority (skb->priority) of its packets.
	 * The DSCP stays the traffic class's.  Without the bit: 0.
	 * (This field was "reserved, must be 0": old programs are unchanged.)
	 */
	uint32_t priority;
};

/*
 * Create an RC, UC or UD QP like ibv_create_qp_ex() with MetaRoCE controls.
 * dv may be NULL (same as ibv_create_qp_ex).  Returns NULL with errno:
 * EINVAL for an unknown comp_mask bit, mode or flag, a priority above
 * MRXEDV_MAX_PRIORITY (or non-zero without its comp_mask bit),
 * num_paths 0 or > MRXEDV_MAX_PATHS, or num_paths > 1 for anything but a
 * MetaRoCE RC QP; EOPNOTSUPP when ctx is not an mrxe
 * device or the device lacks MetaRoCE; otherwise as ibv_create_qp_ex().
 */
struct ibv_qp *mrxedv_create_qp(struct ibv_context *ctx,
				struct ibv_qp_init_attr_ex *attr,
				struct mrxedv_qp_init_attr *dv);

/*
 * The QP's current transport mode: resolved at creation, and for an `auto`
 * QP METAROCE once it upgraded in-band (the kernel publishes it in the
 * mapped SQ ring header; no system call).
 */
struct mrxedv_qp_mode {
	uint32_t transport_mode;	/* STANDARD or METAROCE, never DEFAULT/AUTO */
	uint32_t num_paths;
	uint32_t flags;
	uint32_t reserved;
};

/* 0 or EOPNOTSUPP (not an mrxe QP) / EINVAL (NULL argument). */
int mrxedv_query_qp_mode(struct ibv_qp *qp, struct mrxedv_qp_mode *mode);

/* Capabilities of an open mrxe device. */
enum mrxedv_context_caps {
	MRXEDV_CAP_METAROCE = 1 << 0,
	MRXEDV_CAP_MULTIPATH = 1 << 1,
};

struct mrxedv_context_attr {
	uint32_t abi_version;		/* kernel <-> provider ABI */
	uint32_t caps;			/* enum mrxedv_context_caps */
	uint32_t default_transport;	/* enum mrxedv_transport_mode */
	uint32_t max_inline;
	uint32_t max_sge;
	uint32_t reserved;
};

/* 0, or EOPNOTSUPP when ctx is not an mrxe device. */
int mrxedv_query_context(struct ibv_context *ctx,
			 struct mrxedv_context_attr *attr);

/* True when device is driven by this provider. */
bool mrxedv_is_supported(struct ibv_device *device);

#ifdef __cplusplus
}
#endif

#endif /* MRXEDV_H */
