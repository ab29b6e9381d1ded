/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * mrxe kernel <-> user ABI: the one header both the kernel module and the
 * rdma-core provider include.  Every structure here crosses the boundary
 * either through uverbs udata (create commands/responses) or through rings
 * mmap()ed into the process (send/recv/completion queues).
 *
 * Rules:
 *  - fixed-width types only, explicit padding, 8-byte aligned u64s;
 *  - any change to a layout bumps MRXE_ABI_VERSION;
 *  - the kernel never trusts ring contents: it copies a WQE into private
 *    memory before it validates and uses it (see Documentation/design.rst).
 */
#ifndef MRXE_ABI_USER_H
#define MRXE_ABI_USER_H

#include <linux/types.h>

#define MRXE_ABI_VERSION	1

/* Device name prefix the provider matches (driver id is RDMA_DRIVER_UNKNOWN). */
#define MRXE_DEVICE_NAME_PREFIX	"mrxe"

/* Transport mode of a QP (and the device default). */
enum mrxe_transport_mode {
	MRXE_TRANSPORT_DEFAULT	= 0,	/* create: use the device default */
	MRXE_TRANSPORT_STANDARD	= 1,	/* plain RoCEv2 (IBA + Annex A17) */
	MRXE_TRANSPORT_METAROCE	= 2,	/* multipath, OOO placement, SACK */
	MRXE_TRANSPORT_AUTO	= 3,	/* RoCEv2, in-band upgrade to MetaRoCE */
};

#define MRXE_MAX_PATHS		16

/*
 * Shared ring.  One page-aligned mapping: this 256-byte header followed by
 * (index_mask + 1) slots of (1 << log2_elem_size) bytes each.
 *
 * producer_index and consumer_index are free-running 32-bit counters; the
 * slot of index i is (i & index_mask).  The ring is empty when
 * producer == consumer and full when producer - consumer == index_mask + 1,
 * so every slot is usable.  Each index has its own cache line and exactly one
 * writer:
 *   send/recv/srq ring: user produces, kernel consumes;
 *   completion ring:    kernel produces, user consumes.
 * The writer publishes with a release store after filling the slot; the
 * reader uses an acquire load before reading it.
 */
struct mrxe_ring_hdr {
	__u32	log2_elem_size;
	__u32	index_mask;
	/*
	 * SQ ring only, written by the kernel: the QP's current transport
	 * mode (enum mrxe_transport_mode; STANDARD or METAROCE, 0 before the
	 * kernel knows).  An `auto` QP changes it from STANDARD to METAROCE
	 * when it upgrades in-band; mrxedv_query_qp_mode() reads it.
	 */
	__u32	transport_mode;
	__u32	pad0[13];
	__u32	producer_index;
	__u32	pad1[15];
	__u32	consumer_index;
	__u32	pad2[15];
	__u32	pad3[16];
};

#define MRXE_RING_HDR_SIZE	256

struct mrxe_sge {
	__aligned_u64	addr;
	__u32		length;
	__u32		lkey;
};

/*
 * Send WQE: a 64-byte header followed by num_sge mrxe_sge entries or, when
 * send_flags has IB_SEND_INLINE, by inline_len bytes of payload.
 * opcode takes enum ib_uverbs_wr_opcode values, send_flags enum
 * ib_uverbs_send_flags (IBV_SEND_*) values.
 */
struct mrxe_send_wqe {
	__aligned_u64	wr_id;
	__u32		opcode;
	__u32		send_flags;
	__u32		num_sge;
	__u32		inline_len;
	union {
		__be32	imm_data;
		__u32	invalidate_rkey;
	} ex;
	__u32		reserved;
	union {
		struct {
			__aligned_u64	remote_addr;
			__u32		rkey;
			__u32		reserved;
		} rdma;
		struct {
			__aligned_u64	remote_addr;
			__aligned_u64	compare_add;
			__aligned_u64	swap;
			__u32		rkey;
			__u32		reserved;
		} atomic;
		/*
		 * IBV_WR_FLUSH (IBA 1.5 MPE): remote_addr and rkey where
		 * rdma has them; type is the placement type (IBV_FLUSH_GLOBAL
		 * and/or IBV_FLUSH_PERSISTENT), level the selectivity level
		 * (IBV_FLUSH_RANGE or IBV_FLUSH_MR), length the range.
		 * IBV_WR_ATOMIC_WRITE uses rdma and carries its 8 bytes as
		 * inline data (send_flags IBV_SEND_INLINE, inline_len 8).
		 */
		struct {
			__aligned_u64	remote_addr;
			__u32		rkey;
			__u8		type;
			__u8		level;
			__u16		reserved;
			__aligned_u64	length;
		} flush;
		struct {
			__u32		remote_qpn;
			__u32		remote_qkey;
			__u32		ah_num;
			__u32		reserved[5];
		} ud;
		struct {
			__aligned_u64	addr;
			__aligned_u64	length;
			__u32		mr_lkey;
			__u32		mw_rkey;
			__u32		rkey;
			__u32		access;
		} mw;
	} wr;
	/* followed by struct mrxe_sge sge[num_sge] or inline bytes */
};

#define MRXE_SEND_WQE_HDR_SIZE	64

/* Receive WQE (also SRQ): a 16-byte header followed by num_sge mrxe_sge. */
struct mrxe_recv_wqe {
	__aligned_u64	wr_id;
	__u32		num_sge;
	__u32		reserved;
	/* followed by struct mrxe_sge sge[num_sge] */
};

#define MRXE_RECV_WQE_HDR_SIZE	16

/*
 * Completion entry, 64 bytes.  status: enum ib_uverbs_wc_status
 * (IBV_WC_*), opcode: enum ib_uverbs_wc_opcode, wc_flags: IBV_WC_* flags.
 */
struct mrxe_cqe {
	__aligned_u64	wr_id;
	__u32		status;
	__u32		opcode;
	__u32		vendor_err;
	__u32		byte_len;
	union {
		__be32	imm_data;
		__u32	invalidated_rkey;
	} ex;
	__u32		qp_num;
	__u32		src_qp;
	__u32		wc_flags;
	__u16		pkey_index;
	__u16		slid;
	__u8		sl;
	__u8		dlid_path_bits;
	__u8		port_num;
	__u8		network_hdr_type;
	__u8		smac[6];
	__u16		vlan_id;
	__u32		reserved[2];	/* pads the CQE to MRXE_CQE_SIZE (64) */
};

#define MRXE_CQE_SIZE		64

/* Where a ring lives in the device file: pass offset to mmap(). */
struct mrxe_mmap_info {
	__aligned_u64	offset;
	__u32		size;
	__u32		reserved;
};

/* alloc_ucontext */
enum mrxe_context_caps {
	MRXE_CAP_METAROCE	= 1 << 0,
	MRXE_CAP_MULTIPATH	= 1 << 1,
};

struct mrxe_alloc_context_resp {
	__u32	abi_version;
	__u32	caps;		/* enum mrxe_context_caps */
	__u32	max_inline;
	__u32	max_sge;
	__u32	default_transport;	/* enum mrxe_transport_mode */
	__u32	reserved;
};

/* create_cq / resize_cq */
struct mrxe_create_cq_resp {
	struct mrxe_mmap_info	mi;
	__u32			cqn;
	__u32			num_slots;
};

struct mrxe_resize_cq_resp {
	struct mrxe_mmap_info	mi;
	__u32			num_slots;
	__u32			reserved;
};

/* create_qp: udata in is optional; a shorter (or absent) command means defaults. */
enum mrxe_create_qp_flags {
	MRXE_QP_FLAG_SPRAY	= 1 << 0,	/* MetaRoCE: spray over num_paths */
	MRXE_QP_FLAG_PRIORITY	= 1 << 1,	/* priority below is valid */
};

/* a QP's priority: 0-7, as the service level (design.rst "QP priority") */
#define MRXE_MAX_QP_PRIORITY	7

struct mrxe_create_qp_cmd {
	__u32	transport_mode;	/* enum mrxe_transport_mode */
	__u32	num_paths;	/* 0 = device default, else 1..MRXE_MAX_PATHS */
	__u32	flags;		/* enum mrxe_create_qp_flags */
	/*
	 * With MRXE_QP_FLAG_PRIORITY: 0..MRXE_MAX_QP_PRIORITY, the QP's
	 * priority from then on instead of the one its address vector's SL
	 * and traffic class give; without it 0.  (Was "reserved", must be
	 * 0: older providers still send 0 and no flag.)
	 */
	__u32	priority;
};

struct mrxe_create_qp_resp {
	struct mrxe_mmap_info	sq_mi;	/* size 0 when the QP has no SQ ring */
	struct mrxe_mmap_info	rq_mi;	/* size 0 when the QP uses an SRQ */
	__u32			qpn;
	__u32			sq_slots;
	__u32			rq_slots;
	__u32			transport_mode;	/* resolved mode */
	__u32			num_paths;
	__u32			max_inline;
};

/* create_srq */
struct mrxe_create_srq_resp {
	struct mrxe_mmap_info	mi;
	__u32			srq_num;
	__u32			num_slots;
};

/*
 * modify_srq with IBV_SRQ_MAX_WR (resize).  uverbs' MODIFY_SRQ has no
 * response buffer, so the command names where the kernel writes struct
 * mrxe_resize_srq_resp (resp_addr, user memory).  The kernel moves the
 * posted WQEs to a new ring (slots 0..n-1, producer_index n); the provider
 * maps mi, holding its posting lock across the call, and unmaps the old.
 * A plain limit change may send the command with resp_addr 0, or none.
 */
struct mrxe_modify_srq_cmd {
	__aligned_u64	resp_addr;
};

struct mrxe_resize_srq_resp {
	struct mrxe_mmap_info	mi;
	__u32			num_slots;
	__u32			reserved;
};

/* create_ah: the UD send WQE names the AH by ah_num. */
struct mrxe_create_ah_resp {
	__u32	ah_num;
	__u32	reserved;
};

#endif /* MRXE_ABI_USER_H */
