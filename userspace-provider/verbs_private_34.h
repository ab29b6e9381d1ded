/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The libibverbs *private* provider ABI of rdma-core 44: symbol version
 * IBVERBS_PRIVATE_34, entry point verbs_register_driver_34.  rdma-core 56
 * (Debian 13) exports the same IBVERBS_PRIVATE_34 with the same layouts
 * (v44.0..v56.1: IBVERBS_PABI_VERSION stays 34, kern-abi.h is unchanged,
 * driver.h only adds ibv_cmd_create_cq_ex2 and a driver argument to
 * ibv_cmd_reg_dmabuf_mr, neither used here), so this header serves both;
 * the checks for 56's public headers are at the end.
 *
 * libibverbs-dev does not install the provider headers (driver.h,
 * kern-abi.h), so this header declares what an mrxe provider needs, written
 * from the facts of rdma-core v44.0's libibverbs/driver.h, kern-abi.h,
 * cmd_*.c and libibverbs.map.in.  Every layout that can be checked against a
 * public header (infiniband/verbs.h, rdma/ib_user_verbs.h) is checked with
 * static_assert below.  The rest (verbs_sysfs_dev, verbs_device_ops,
 * verbs_context_ops) is fixed by the PABI number: rdma-core bumps
 * IBVERBS_PABI_VERSION whenever one of them changes, and the Makefile refuses
 * to build when the installed libibverbs does not export IBVERBS_PRIVATE_34.
 *
 * One versioned header per private ABI: a provider build for another
 * rdma-core line adds verbs_private_NN.h next to this one.
 */
#ifndef MRXE_VERBS_PRIVATE_34_H
#define MRXE_VERBS_PRIVATE_34_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#define MRXE_IBVERBS_PABI_VERSION 34

/* The Makefile passes the PABI version it found in the installed library. */
#if defined(MRXE_DETECTED_PABI) && MRXE_DETECTED_PABI != MRXE_IBVERBS_PABI_VERSION
#error "installed libibverbs exports another IBVERBS_PRIVATE_xx: this header declares IBVERBS_PRIVATE_34 (rdma-core 34..56)"
#endif

#ifdef __cplusplus
#define MRXE_STATIC_ASSERT(c, m) static_assert(c, m)
extern "C" {
#else
#define MRXE_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

/* ccan/list.h node as embedded in libibverbs structures. */
struct mrxe_ccan_list_node {
	struct mrxe_ccan_list_node *next, *prev;
};

/* ---- driver.h: match table ---- */
enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

/* A device detected in sysfs (libibverbs owns it; providers read it). */
struct verbs_sysfs_dev {
	struct mrxe_ccan_list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;
	struct timespec time_created;
};

struct verbs_device;

struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

struct verbs_device {
	struct ibv_device device;	/* must be first */
	const struct verbs_device_ops *ops;
	int refcount;			/* atomic_int in libibverbs */
	struct mrxe_ccan_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/* ---- driver.h: provider-visible object wrappers ---- */
enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

enum verbs_qp_mask {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

/*
 * Every op a provider can implement (v44 driver.h, kept sorted there and
 * here: the order IS the ABI).
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(
		struct ibv_context *context,
		struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(
		struct ibv_context *context,
		struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(
		struct ibv_context *context,
		struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *qp_init_attr_ex);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context,
		struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *srq_init_attr);
	struct ibv_srq *(*create_srq_ex)(
		struct ibv_context *context,
		struct ibv_srq_init_attr_ex *srq_init_attr_ex);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *wq_init_attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/* ---- kern-abi.h: write() command layouts (header + kernel payload) ---- */
struct ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

struct ibv_get_context {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
};

struct ibv_query_port {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u8 port_num;
	__u8 reserved[7];
};

struct ibv_alloc_pd {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
};

struct ibv_reg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__aligned_u64 start;
	__aligned_u64 length;
	__aligned_u64 hca_va;
	__u32 pd_handle;
	__u32 access_flags;
};

struct ibv_rereg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 mr_handle;
	__u32 flags;
	__aligned_u64 start;
	__aligned_u64 length;
	__aligned_u64 hca_va;
	__u32 pd_handle;
	__u32 access_flags;
};

struct ibv_alloc_mw {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 pd_handle;
	__u8 mw_type;
	__u8 reserved[3];
};

struct ibv_create_cq {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__aligned_u64 user_handle;
	__u32 cqe;
	__u32 comp_vector;
	__s32 comp_channel;
	__u32 reserved;
};

struct ibv_resize_cq {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 cq_handle;
	__u32 cqe;
};

struct ibv_create_cq_ex {
	struct ex_hdr hdr;
	__aligned_u64 user_handle;
	__u32 cqe;
	__u32 comp_vector;
	__s32 comp_channel;
	__u32 comp_mask;
	__u32 flags;
	__u32 reserved;
};

struct ibv_create_srq {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__aligned_u64 user_handle;
	__u32 pd_handle;
	__u32 max_wr;
	__u32 max_sge;
	__u32 srq_limit;
};

struct ibv_create_xsrq {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__aligned_u64 user_handle;
	__u32 srq_type;
	__u32 pd_handle;
	__u32 max_wr;
	__u32 max_sge;
	__u32 srq_limit;
	__u32 max_num_tags;
	__u32 xrcd_handle;
	__u32 cq_handle;
};

struct ibv_modify_srq {
	struct ib_uverbs_cmd_hdr hdr;
	__u32 srq_handle;
	__u32 attr_mask;
	__u32 max_wr;
	__u32 srq_limit;
};

struct ibv_query_srq {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 srq_handle;
	__u32 reserved;
};

#define MRXE_CREATE_QP_COMMON_FIELDS                                          \
	__aligned_u64 user_handle;                                             \
	__u32 pd_handle;                                                       \
	__u32 send_cq_handle;                                                  \
	__u32 recv_cq_handle;                                                  \
	__u32 srq_handle;                                                      \
	__u32 max_send_wr;                                                     \
	__u32 max_recv_wr;                                                     \
	__u32 max_send_sge;                                                    \
	__u32 max_recv_sge;                                                    \
	__u32 max_inline_data;                                                 \
	__u8 sq_sig_all;                                                       \
	__u8 qp_type;                                                          \
	__u8 is_srq;                                                           \
	__u8 reserved

struct ibv_create_qp {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	MRXE_CREATE_QP_COMMON_FIELDS;
};

struct ibv_create_qp_ex {
	struct ex_hdr hdr;
	MRXE_CREATE_QP_COMMON_FIELDS;
	__u32 comp_mask;
	__u32 create_flags;
	__u32 rwq_ind_tbl_handle;
	__u32 source_qpn;
};

struct ibv_query_qp {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 qp_handle;
	__u32 attr_mask;
};

#define MRXE_MODIFY_QP_FIELDS                                                 \
	struct ib_uverbs_qp_dest dest;                                         \
	struct ib_uverbs_qp_dest alt_dest;                                     \
	__u32 qp_handle;                                                       \
	__u32 attr_mask;                                                       \
	__u32 qkey;                                                            \
	__u32 rq_psn;                                                          \
	__u32 sq_psn;                                                          \
	__u32 dest_qp_num;                                                     \
	__u32 qp_access_flags;                                                 \
	__u16 pkey_index;                                                      \
	__u16 alt_pkey_index;                                                  \
	__u8 qp_state;                                                         \
	__u8 cur_qp_state;                                                     \
	__u8 path_mtu;                                                         \
	__u8 path_mig_state;                                                   \
	__u8 en_sqd_async_notify;                                              \
	__u8 max_rd_atomic;                                                    \
	__u8 max_dest_rd_atomic;                                               \
	__u8 min_rnr_timer;                                                    \
	__u8 port_num;                                                         \
	__u8 timeout;                                                          \
	__u8 retry_cnt;                                                        \
	__u8 rnr_retry;                                                        \
	__u8 alt_port_num;                                                     \
	__u8 alt_timeout;                                                      \
	__u8 reserved[2]

struct ibv_modify_qp {
	struct ib_uverbs_cmd_hdr hdr;
	MRXE_MODIFY_QP_FIELDS;
};

struct ibv_modify_qp_ex {
	struct ex_hdr hdr;
	struct {
		MRXE_MODIFY_QP_FIELDS;
	} base;
	__u32 rate_limit;
	__u32 reserved;
};

#define MRXE_POST_FIELDS(handle)                                              \
	__aligned_u64 response;                                                \
	__u32 handle;                                                          \
	__u32 wr_count;                                                        \
	__u32 sge_count;                                                       \
	__u32 wqe_size

struct ibv_post_send {
	struct ib_uverbs_cmd_hdr hdr;
	MRXE_POST_FIELDS(qp_handle);
};

struct ibv_post_recv {
	struct ib_uverbs_cmd_hdr hdr;
	MRXE_POST_FIELDS(qp_handle);
};

struct ibv_post_srq_recv {
	struct ib_uverbs_cmd_hdr hdr;
	MRXE_POST_FIELDS(srq_handle);
};

/* ---- libibverbs.map.in: IBVERBS_PRIVATE_34 functions used by mrxe ---- */
void verbs_register_driver_34(const struct verbs_device_ops *ops);
void __verbs_log(struct verbs_context *ctx, uint32_t level, const char *fmt,
		 ...) __attribute__((format(printf, 3, 4)));
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);
int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...)
	__attribute__((format(printf, 4, 5)));

int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex,
			  struct ibv_create_xsrq *cmd, size_t cmd_size,
			  struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr, struct ibv_create_qp *cmd,
		      size_t cmd_size, struct ib_uverbs_create_qp_resp *resp,
		      size_t resp_size);
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr,
			  struct ibv_create_qp_ex *cmd, size_t cmd_size,
			  struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int ibv_cmd_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);

#ifdef __cplusplus
}
#endif

/* ---- layout checks against the public headers ---- */
#define MRXE_PABI_HDR(ours, kern, hsz)                                        \
	MRXE_STATIC_ASSERT(sizeof(struct ours) == (hsz) + sizeof(struct kern),  \
			   #ours " size differs from " #kern)
#define MRXE_PABI_FIELD(ours, kern, f, hsz)                                   \
	MRXE_STATIC_ASSERT(offsetof(struct ours, f) ==                          \
				   (hsz) + offsetof(struct kern, f),            \
			   #ours "." #f " offset differs from " #kern)
#define MRXE_HSZ sizeof(struct ib_uverbs_cmd_hdr)
#define MRXE_EXHSZ sizeof(struct ex_hdr)

MRXE_STATIC_ASSERT(sizeof(struct ib_uverbs_cmd_hdr) == 8, "cmd hdr");
MRXE_STATIC_ASSERT(sizeof(struct ex_hdr) == 24, "ex hdr");
MRXE_PABI_HDR(ibv_get_context, ib_uverbs_get_context, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_get_context, ib_uverbs_get_context, response, MRXE_HSZ);
MRXE_PABI_HDR(ibv_query_port, ib_uverbs_query_port, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_query_port, ib_uverbs_query_port, port_num, MRXE_HSZ);
MRXE_PABI_HDR(ibv_alloc_pd, ib_uverbs_alloc_pd, MRXE_HSZ);
MRXE_PABI_HDR(ibv_reg_mr, ib_uverbs_reg_mr, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_reg_mr, ib_uverbs_reg_mr, hca_va, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_reg_mr, ib_uverbs_reg_mr, access_flags, MRXE_HSZ);
MRXE_PABI_HDR(ibv_rereg_mr, ib_uverbs_rereg_mr, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_rereg_mr, ib_uverbs_rereg_mr, start, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_rereg_mr, ib_uverbs_rereg_mr, access_flags, MRXE_HSZ);
MRXE_PABI_HDR(ibv_alloc_mw, ib_uverbs_alloc_mw, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_alloc_mw, ib_uverbs_alloc_mw, mw_type, MRXE_HSZ);
MRXE_PABI_HDR(ibv_create_cq, ib_uverbs_create_cq, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_create_cq, ib_uverbs_create_cq, comp_channel, MRXE_HSZ);
MRXE_PABI_HDR(ibv_resize_cq, ib_uverbs_resize_cq, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_resize_cq, ib_uverbs_resize_cq, cqe, MRXE_HSZ);
MRXE_PABI_HDR(ibv_create_cq_ex, ib_uverbs_ex_create_cq, MRXE_EXHSZ);
MRXE_PABI_FIELD(ibv_create_cq_ex, ib_uverbs_ex_create_cq, flags, MRXE_EXHSZ);
MRXE_PABI_HDR(ibv_create_srq, ib_uverbs_create_srq, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_create_srq, ib_uverbs_create_srq, srq_limit, MRXE_HSZ);
MRXE_PABI_HDR(ibv_create_xsrq, ib_uverbs_create_xsrq, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_create_xsrq, ib_uverbs_create_xsrq, cq_handle, MRXE_HSZ);
MRXE_PABI_HDR(ibv_modify_srq, ib_uverbs_modify_srq, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_modify_srq, ib_uverbs_modify_srq, srq_limit, MRXE_HSZ);
MRXE_PABI_HDR(ibv_query_srq, ib_uverbs_query_srq, MRXE_HSZ);
MRXE_PABI_HDR(ibv_create_qp, ib_uverbs_create_qp, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_create_qp, ib_uverbs_create_qp, max_inline_data, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_create_qp, ib_uverbs_create_qp, is_srq, MRXE_HSZ);
MRXE_PABI_HDR(ibv_create_qp_ex, ib_uverbs_ex_create_qp, MRXE_EXHSZ);
MRXE_PABI_FIELD(ibv_create_qp_ex, ib_uverbs_ex_create_qp, pd_handle, MRXE_EXHSZ);
MRXE_PABI_FIELD(ibv_create_qp_ex, ib_uverbs_ex_create_qp, source_qpn, MRXE_EXHSZ);
MRXE_PABI_HDR(ibv_query_qp, ib_uverbs_query_qp, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_query_qp, ib_uverbs_query_qp, attr_mask, MRXE_HSZ);
MRXE_PABI_HDR(ibv_modify_qp, ib_uverbs_modify_qp, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_modify_qp, ib_uverbs_modify_qp, qp_handle, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_modify_qp, ib_uverbs_modify_qp, pkey_index, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_modify_qp, ib_uverbs_modify_qp, alt_timeout, MRXE_HSZ);
MRXE_PABI_HDR(ibv_modify_qp_ex, ib_uverbs_ex_modify_qp, MRXE_EXHSZ);
MRXE_PABI_FIELD(ibv_modify_qp_ex, ib_uverbs_ex_modify_qp, rate_limit, MRXE_EXHSZ);
MRXE_PABI_HDR(ibv_post_send, ib_uverbs_post_send, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_post_send, ib_uverbs_post_send, wqe_size, MRXE_HSZ);
MRXE_PABI_HDR(ibv_post_recv, ib_uverbs_post_recv, MRXE_HSZ);
MRXE_PABI_HDR(ibv_post_srq_recv, ib_uverbs_post_srq_recv, MRXE_HSZ);
MRXE_PABI_FIELD(ibv_post_srq_recv, ib_uverbs_post_srq_recv, srq_handle, MRXE_HSZ);

/* Provider object wrappers: public members first, as libibverbs casts them. */
MRXE_STATIC_ASSERT(offsetof(struct verbs_device, device) == 0, "verbs_device");
MRXE_STATIC_ASSERT(offsetof(struct verbs_mr, ibv_mr) == 0, "verbs_mr");
MRXE_STATIC_ASSERT(offsetof(struct verbs_qp, qp) == 0, "verbs_qp");
MRXE_STATIC_ASSERT(offsetof(struct ibv_qp_ex, qp_base) == 0, "ibv_qp_ex");
MRXE_STATIC_ASSERT(offsetof(struct verbs_cq, cq) == 0, "verbs_cq");
MRXE_STATIC_ASSERT(offsetof(struct verbs_srq, srq) == 0, "verbs_srq");
MRXE_STATIC_ASSERT(offsetof(struct verbs_xrcd, xrcd) == 0, "verbs_xrcd");
/* ibv_cq and the ibv_cq_ex prefix overlay each other (verbs.h contract). */
MRXE_STATIC_ASSERT(offsetof(struct ibv_cq, handle) ==
			   offsetof(struct ibv_cq_ex, handle) &&
		   offsetof(struct ibv_cq, async_events_completed) ==
			   offsetof(struct ibv_cq_ex, async_events_completed),
		   "ibv_cq/ibv_cq_ex prefix");
/* verbs_context ends with the public ibv_context (verbs_get_ctx()). */
MRXE_STATIC_ASSERT(offsetof(struct verbs_context, context) +
				   sizeof(struct ibv_context) ==
			   sizeof(struct verbs_context),
		   "verbs_context layout");
/*
 * v44 layouts with nothing public to compare against: pinned to the
 * values obtained by compiling v44.0 driver.h's own struct text on x86-64
 * (cross-checked when this header was written), so an edit is caught.
 */
#if defined(__x86_64__) && !defined(MRXE_NO_PINS)
MRXE_STATIC_ASSERT(sizeof(struct verbs_match_ent) == 24, "verbs_match_ent");
MRXE_STATIC_ASSERT(offsetof(struct verbs_sysfs_dev, sysfs_name) == 36,
		   "verbs_sysfs_dev.sysfs_name");
MRXE_STATIC_ASSERT(offsetof(struct verbs_sysfs_dev, ibdev_name) == 112,
		   "verbs_sysfs_dev.ibdev_name");
MRXE_STATIC_ASSERT(offsetof(struct verbs_sysfs_dev, driver_id) == 952,
		   "verbs_sysfs_dev.driver_id");
MRXE_STATIC_ASSERT(offsetof(struct verbs_sysfs_dev, abi_ver) == 968,
		   "verbs_sysfs_dev.abi_ver");
MRXE_STATIC_ASSERT(sizeof(struct verbs_device_ops) == 72, "verbs_device_ops");
MRXE_STATIC_ASSERT(sizeof(struct verbs_context_ops) == 76 * sizeof(void *),
		   "verbs_context_ops has 76 ops in v44");
MRXE_STATIC_ASSERT(sizeof(struct verbs_device) ==
			   sizeof(struct ibv_device) + 48,
		   "verbs_device");
#endif

/*
 * rdma-core 56 (MRXE_RDMA_CORE_MAJOR comes from the library the Makefile
 * found): the private layouts above are pinned for it too; its public
 * verbs.h grew only at the ends of extensible structs and in new flag bits.
 * mrxe's allowlists (send_ops_flags, MR access) refuse what they do not
 * name.  RDMA FLUSH (ibv_wr_flush, IBV_QP_EX_WITH_FLUSH, IBV_ACCESS_FLUSH_*)
 * is offered when the headers have it (MRXE_HAVE_WR_FLUSH: rdma-core 56 of
 * the lines built here; 44 has ibv_wr_atomic_write but no FLUSH).
 */
#if defined(MRXE_RDMA_CORE_MAJOR) && MRXE_RDMA_CORE_MAJOR >= 56
#define MRXE_HAVE_WR_FLUSH 1
#else
#define MRXE_HAVE_WR_FLUSH 0
#endif
MRXE_STATIC_ASSERT(IBV_QP_EX_WITH_ATOMIC_WRITE == 1 << 12 &&
			   IBV_WR_ATOMIC_WRITE == 15 && IBV_WC_ATOMIC_WRITE == 9,
		   "ATOMIC WRITE values (mrxe-abi.h, drivers/mrxe_dp.h)");
#if MRXE_HAVE_WR_FLUSH
MRXE_STATIC_ASSERT(IBV_WR_FLUSH == 14 && IBV_WC_FLUSH == 8 &&
			   IBV_FLUSH_GLOBAL == 1 && IBV_FLUSH_PERSISTENT == 2 &&
			   IBV_FLUSH_RANGE == 0 && IBV_FLUSH_MR == 1,
		   "FLUSH values (mrxe-abi.h, drivers/proto/mrxe_wire.h FETH)");
#endif
#if defined(MRXE_RDMA_CORE_MAJOR) && MRXE_RDMA_CORE_MAJOR >= 56
MRXE_STATIC_ASSERT(IBV_QP_EX_WITH_FLUSH == 1 << 11 &&
			   IBV_QP_EX_WITH_ATOMIC_WRITE == 1 << 12,
		   "rdma-core 56 send_ops_flags");
MRXE_STATIC_ASSERT(offsetof(struct ibv_qp_ex, wr_flush) + sizeof(void *) ==
			   sizeof(struct ibv_qp_ex),
		   "rdma-core 56: ibv_qp_ex grew at its end (wr_flush)");
MRXE_STATIC_ASSERT(offsetof(struct ibv_port_attr, active_speed_ex) >=
			   offsetof(struct ibv_port_attr, port_cap_flags2),
		   "rdma-core 56: ibv_port_attr grew at its end");
#endif

#endif /* MRXE_VERBS_PRIVATE_34_H */
