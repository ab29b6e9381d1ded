// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mrxe ib_device_ops table, user contexts and the shared helper that waits
 * for packet-path references to drain.
 */
#include <linux/delay.h>

#include "mrxe.h"
#include "mrxe_verbs.h"

int mrxe_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct mrxe_dev *dev = to_mdev(ibuc->device);
	struct mrxe_alloc_context_resp resp = {};
	int err;

	/* No input is defined for this ABI version: anything set is unknown. */
	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;

	resp.abi_version = MRXE_ABI_VERSION;
	resp.caps = MRXE_CAP_METAROCE;	/* RC: SACK selective repeat */
	resp.max_inline = MRXE_MAX_INLINE;
	resp.max_sge = MRXE_MAX_SGE;
	spin_lock_bh(&dev->cfg_lock);
	resp.default_transport = dev->cfg.transport_mode;
	spin_unlock_bh(&dev->cfg_lock);

	if (udata->outlen) {
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err)
			return err;
	}
	atomic_inc(&dev->num_ucontext);
	return 0;
}

void mrxe_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	atomic_dec(&to_mdev(ibuc->device)->num_ucontext);
}

/*
 * Device removal with live user contexts: ib_uverbs has already zapped
 * every rdma_user_mmap_entry mapping when this runs, and destroys the
 * objects through our destroy paths; nothing device-specific is left.
 * Providing this lets "rdma link delete" and rmmod proceed while a process
 * still holds the device open.
 */
static void mrxe_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * Wait until the packet path dropped every reference but the base one,
 * which the caller already put.  Destroy calls that may not sleep
 * (destroy_ah without RDMA_DESTROY_AH_SLEEPABLE) poll for a bounded time:
 * packet-path holders only keep references for one packet.
 */
void mrxe_wait_released(struct mrxe_dev *dev, refcount_t *ref,
			struct completion *released, bool sleepable,
			const char *what)
{
	unsigned long timeout = jiffies + msecs_to_jiffies(1000);

	if (refcount_dec_and_test(ref))
		return;
	if (sleepable) {
		wait_for_completion(released);
		return;
	}
	while (!completion_done(released)) {
		if (time_after(jiffies, timeout)) {
			mrxe_err_dev(dev, "%s still referenced at destroy\n",
				     what);
			return;
		}
		udelay(10);
	}
}

const struct ib_device_ops mrxe_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = MRXE_ABI_VERSION,
	.device_group = &mrxe_dev_attr_group,

	.alloc_hw_port_stats = mrxe_alloc_hw_port_stats,
	.alloc_mr = mrxe_alloc_mr,
	.alloc_mw = mrxe_alloc_mw,
	.alloc_pd = mrxe_alloc_pd,
	.alloc_ucontext = mrxe_alloc_ucontext,
	.attach_mcast = mrxe_attach_mcast,
	.create_ah = mrxe_create_ah,
	.create_cq = mrxe_create_cq_op,
	.create_qp = mrxe_create_qp,
	.create_srq = mrxe_create_srq,
	.create_user_ah = mrxe_create_ah,
	.dealloc_driver = mrxe_dealloc,
	.dealloc_mw = mrxe_dealloc_mw,
	.dealloc_pd = mrxe_dealloc_pd,
	.dealloc_ucontext = mrxe_dealloc_ucontext,
	.dereg_mr = mrxe_dereg_mr,
	.destroy_ah = mrxe_destroy_ah,
	.destroy_cq = mrxe_destroy_cq,
	.destroy_qp = mrxe_destroy_qp,
	.destroy_srq = mrxe_destroy_srq,
	.detach_mcast = mrxe_detach_mcast,
	.disassociate_ucontext = mrxe_disassociate_ucontext,
	.get_dev_fw_str = mrxe_get_dev_fw_str,
	.get_dma_mr = mrxe_get_dma_mr,
	.get_hw_stats = mrxe_get_hw_stats,
	.get_link_layer = mrxe_get_link_layer,
	.get_netdev = mrxe_get_netdev,
	.get_port_immutable = mrxe_get_port_immutable,
	.map_mr_sg = mrxe_map_mr_sg,
	.mmap = mrxe_mmap,
	.mmap_free = mrxe_mmap_free,
	.modify_device = mrxe_modify_device,
	.modify_port = mrxe_modify_port,
	.modify_qp = mrxe_modify_qp,
	.modify_srq = mrxe_modify_srq,
	.poll_cq = mrxe_poll_cq,
	.post_recv = mrxe_post_recv,
	.post_send = mrxe_post_send,
	.post_srq_recv = mrxe_post_srq_recv,
	.query_ah = mrxe_query_ah,
	.query_device = mrxe_query_device,
	.query_pkey = mrxe_query_pkey,
	.query_port = mrxe_query_port,
	.query_qp = mrxe_query_qp,
	.query_srq = mrxe_query_srq,
	.reg_user_mr = mrxe_reg_user_mr,
	.req_notify_cq = mrxe_req_notify_cq,
	.resize_cq = mrxe_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, mrxe_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, mrxe_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, mrxe_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, mrxe_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, mrxe_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, mrxe_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_mw, mrxe_mw, ibmw),
};
