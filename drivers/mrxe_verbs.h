/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Control-plane internals: the ib_device_ops handlers implemented by the
 * object files (mrxe_{device,verbs,pd,mr,mw,cq,qp,srq,ah}.c) and the ring
 * allocation helpers of mrxe_queue.c.  Only the object files include this;
 * the data path uses drivers/mrxe.h.
 */
#ifndef MRXE_VERBS_H
#define MRXE_VERBS_H

#include "mrxe.h"

extern const struct ib_device_ops mrxe_dev_ops;
extern const struct attribute_group mrxe_dev_attr_group;

/* ---- mrxe_main.c ---- */
void mrxe_dev_set_mtu(struct mrxe_dev *dev, unsigned int ndev_mtu);
void mrxe_dealloc(struct ib_device *ibdev);	/* ops.dealloc_driver */

/* ---- mrxe_device.c ---- */
void mrxe_init_device_attr(struct mrxe_dev *dev);
int mrxe_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		      struct ib_udata *udata);
int mrxe_query_port(struct ib_device *ibdev, u32 port,
		    struct ib_port_attr *attr);
int mrxe_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
int mrxe_modify_port(struct ib_device *ibdev, u32 port, int mask,
		     struct ib_port_modify *attr);
int mrxe_modify_device(struct ib_device *ibdev, int mask,
		       struct ib_device_modify *attr);
int mrxe_get_port_immutable(struct ib_device *ibdev, u32 port,
			    struct ib_port_immutable *immutable);
enum rdma_link_layer mrxe_get_link_layer(struct ib_device *ibdev, u32 port);
struct net_device *mrxe_get_netdev(struct ib_device *ibdev, u32 port);
void mrxe_get_dev_fw_str(struct ib_device *ibdev, char *str);
struct rdma_hw_stats *mrxe_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port);
int mrxe_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index);

/* ---- mrxe_verbs.c ---- */
/* The ucontext behind a uverbs call, NULL for kernel callers. */
/*
 * Copy the provider's command of @len bytes from @udata into @cmd (zeroed
 * by the caller).  A shorter command leaves the rest zero (an older
 * provider); a longer one must have its unknown tail cleared (a newer
 * provider asking for something this module does not know): -EINVAL.
 */
static inline int mrxe_udata_cmd(struct ib_udata *udata, void *cmd, size_t len)
{
	if (!udata || !udata->inlen)
		return 0;
	if (udata->inlen > len &&
	    !ib_is_udata_cleared(udata, len, udata->inlen - len))
		return -EINVAL;
	return ib_copy_from_udata(cmd, udata, min(udata->inlen, len));
}

static inline struct ib_ucontext *mrxe_udata_ucontext(struct ib_udata *udata)
{
	struct mrxe_ucontext *uc;

	uc = rdma_udata_to_drv_context(udata, struct mrxe_ucontext, ibuc);
	return uc ? &uc->ibuc : NULL;
}

int mrxe_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void mrxe_dealloc_ucontext(struct ib_ucontext *ibuc);
int mrxe_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void mrxe_mmap_free(struct rdma_user_mmap_entry *entry);

/* ---- mrxe_queue.c ---- */
/*
 * Allocate a ring of nslots (power of two) slots of elem_size (power of
 * two) bytes.  With a ucontext the ring gets an mmap entry (user ring);
 * without one it is kernel-only.
 */
struct mrxe_queue *mrxe_queue_alloc(struct mrxe_dev *dev, u32 nslots,
				    u32 elem_size,
				    struct ib_ucontext *ucontext);
void mrxe_queue_free(struct mrxe_queue *q);
void mrxe_queue_mmap_info(const struct mrxe_queue *q,
			  struct mrxe_mmap_info *mi);
static inline u32 mrxe_queue_slots(const struct mrxe_queue *q)
{
	return q->index_mask + 1;
}

/* Slot sizes (ABI: power-of-two slots holding header + SGEs / inline). */
static inline u32 mrxe_recv_slot_size(u32 max_sge)
{
	return roundup_pow_of_two(MRXE_RECV_WQE_HDR_SIZE +
				  max_sge * sizeof(struct mrxe_sge));
}

static inline u32 mrxe_recv_slot_sges(u32 slot_size, u32 limit)
{
	return min_t(u32, (slot_size - MRXE_RECV_WQE_HDR_SIZE) /
			  sizeof(struct mrxe_sge), limit);
}

static inline u32 mrxe_send_slot_size(u32 max_sge, u32 max_inline)
{
	return roundup_pow_of_two(MRXE_SEND_WQE_HDR_SIZE +
				  max_t(u32, max_sge * sizeof(struct mrxe_sge),
					max_inline));
}

/* Kernel producer side (kernel-posted WQEs, kernel-produced CQEs). */
void *mrxe_queue_producer_slot(struct mrxe_queue *q);	/* NULL when full */
void mrxe_queue_produce(struct mrxe_queue *q);		/* producer++ */
/* Kernel consumer of a kernel-produced ring (poll_cq of a kernel CQ). */
void *mrxe_queue_consumer_slot(struct mrxe_queue *q);	/* NULL when empty */
void mrxe_queue_consume(struct mrxe_queue *q);
u32 mrxe_queue_used(struct mrxe_queue *q);		/* produced ring */

/* ---- mrxe_pd.c ---- */
int mrxe_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int mrxe_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* ---- mrxe_ah.c ---- */
int mrxe_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata);
int mrxe_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int mrxe_destroy_ah(struct ib_ah *ibah, u32 flags);

/* ---- mrxe_mr.c ---- */
struct ib_mr *mrxe_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *mrxe_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata);
struct ib_mr *mrxe_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg);
int mrxe_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);
int mrxe_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
/* Allocate an index in mr_xa for an MR or (tagged) MW; returns the key. */
int mrxe_key_alloc(struct mrxe_dev *dev, void *entry, u32 *key);
void mrxe_key_free(struct mrxe_dev *dev, u32 key);

/* ---- mrxe_mw.c ---- */
#define MRXE_MW_TAG	1	/* xa_tag_pointer() tag of MWs in mr_xa */
int mrxe_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int mrxe_dealloc_mw(struct ib_mw *ibmw);

/* ---- mrxe_cq.c ---- */
int mrxe_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata);
int mrxe_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int mrxe_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int mrxe_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int mrxe_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);

/* ---- mrxe_srq.c ---- */
int mrxe_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata);
int mrxe_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int mrxe_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int mrxe_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int mrxe_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
/* Post one kernel recv WR into a recv ring (QP RQ or SRQ). */
int mrxe_post_one_recv(struct mrxe_queue *q, u32 max_sge,
		       const struct ib_recv_wr *wr);

/* ---- mrxe_qp.c ---- */
int mrxe_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata);
int mrxe_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int mrxe_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init);
int mrxe_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int mrxe_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);
int mrxe_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);

/* Bounded wait for a packet-path reference count to drain. */
void mrxe_wait_released(struct mrxe_dev *dev, refcount_t *ref,
			struct completion *released, bool sleepable,
			const char *what);

#endif /* MRXE_VERBS_H */
