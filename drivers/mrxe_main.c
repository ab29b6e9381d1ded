// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mrxe: module init/exit, "rdma link add ... type mrxe" and the netdev
 * notifier that makes the port follow its Ethernet device.
 */
#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/rdma_netlink.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>

#include "mrxe.h"
#include "mrxe_verbs.h"

/*
 * wq_local: where a QP's work runs (design.rst "The caller runs the
 * pipeline").  0: unbound workers, placed by the scheduler.  1 (default):
 * a packet that finds its QP idle is handled by a per-CPU worker on the
 * CPU that took it, as rxe's tasklets are, and a QP that streams stays on
 * unbound workers, which spread over the CPUs.  2: every high-priority
 * run on per-CPU workers.  For comparisons (known-issues.rst has what each
 * costs in the lab); read when a device is created.
 */
static int wq_local = 1;
module_param(wq_local, int, 0444);
MODULE_PARM_DESC(wq_local, "0 unbound workers, 1 an idle QP's packet handled on its CPU (default), 2 per-CPU workers");

/*
 * mrxe_dev_mutex protects mrxe_dev_list: every mrxe_dev between the
 * successful start of newlink and its dealloc_driver.  Lock order:
 * rtnl_lock -> mrxe_dev_mutex (the netdev notifier runs under rtnl).
 */
DEFINE_MUTEX(mrxe_dev_mutex);
LIST_HEAD(mrxe_dev_list);

/* Callers hold dev->port_lock. */
static void __mrxe_set_mtu(struct mrxe_dev *dev, unsigned int ndev_mtu)
{
	enum ib_mtu mtu = iboe_get_mtu(ndev_mtu);

	/* IBA 9.7.5.1.1 / A17: RoCE path MTUs are 256..4096. */
	mtu = mtu ? min_t(enum ib_mtu, mtu, IB_MTU_4096) : IB_MTU_256;
	dev->port_attr.active_mtu = mtu;
}

void mrxe_dev_set_mtu(struct mrxe_dev *dev, unsigned int ndev_mtu)
{
	spin_lock_bh(&dev->port_lock);
	__mrxe_set_mtu(dev, ndev_mtu);
	spin_unlock_bh(&dev->port_lock);
}

static void mrxe_port_event(struct mrxe_dev *dev, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &dev->ib_dev,
		.element.port_num = 1,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

/*
 * Re-read the netdev's state and MTU.  The port is ACTIVE while the netdev
 * is running with carrier; state changes raise PORT_ACTIVE / PORT_ERR.
 */
void mrxe_port_update(struct mrxe_dev *dev)
{
	struct net_device *ndev = dev->ndev;
	enum ib_port_state new_state, old_state;

	new_state = (netif_running(ndev) && netif_carrier_ok(ndev)) ?
		    IB_PORT_ACTIVE : IB_PORT_DOWN;

	spin_lock_bh(&dev->port_lock);
	old_state = dev->port_attr.state;
	dev->port_attr.state = new_state;
	dev->port_attr.phys_state = new_state == IB_PORT_ACTIVE ?
		IB_PORT_PHYS_STATE_LINK_UP : IB_PORT_PHYS_STATE_DISABLED;
	__mrxe_set_mtu(dev, ndev->mtu);
	spin_unlock_bh(&dev->port_lock);

	if (old_state == new_state)
		return;
	if (new_state == IB_PORT_ACTIVE) {
		mrxe_port_event(dev, IB_EVENT_PORT_ACTIVE);
		ibdev_info(&dev->ib_dev, "port active on %s\n", ndev->name);
	} else {
		mrxe_counter_inc(dev, MRXE_CNT_LINK_DOWNED);
		mrxe_port_event(dev, IB_EVENT_PORT_ERR);
		ibdev_info(&dev->ib_dev, "port down on %s\n", ndev->name);
	}
}

static void mrxe_init_port_attr(struct mrxe_dev *dev)
{
	struct ib_port_attr *pa = &dev->port_attr;

	pa->state = IB_PORT_DOWN;
	pa->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	pa->max_mtu = IB_MTU_4096;
	pa->active_mtu = MRXE_DEFAULT_MTU;
	pa->gid_tbl_len = MRXE_GID_TABLE_LEN;
	pa->port_cap_flags = IB_PORT_CM_SUP;
	pa->max_msg_sz = MRXE_MAX_MSG_SZ;
	pa->pkey_tbl_len = MRXE_MAX_PKEYS;
	pa->lid = 0;
	pa->sm_lid = 0;
	pa->lmc = 0;
	pa->max_vl_num = 1;
	pa->ip_gids = true;
}

/* ib_device_ops.dealloc_driver: undo everything newlink set up. */
void mrxe_dealloc(struct ib_device *ibdev)
{
	struct mrxe_dev *dev = to_mdev(ibdev);

	mutex_lock(&mrxe_dev_mutex);
	if (!list_empty(&dev->list))
		list_del_init(&dev->list);
	mutex_unlock(&mrxe_dev_mutex);

	if (dev->mnet)
		mrxe_net_detach(dev);
	if (dev->wq)
		destroy_workqueue(dev->wq);
	if (dev->wq_hi && dev->wq_hi != dev->wq_cpu)
		destroy_workqueue(dev->wq_hi);
	if (dev->wq_cpu)
		destroy_workqueue(dev->wq_cpu);

	WARN_ON(!xa_empty(&dev->qp_xa));
	WARN_ON(!xa_empty(&dev->mr_xa));
	WARN_ON(!xa_empty(&dev->ah_xa));
	WARN_ON(!xa_empty(&dev->srq_xa));
	xa_destroy(&dev->qp_xa);
	xa_destroy(&dev->mr_xa);
	xa_destroy(&dev->ah_xa);
	xa_destroy(&dev->srq_xa);
	mrxe_mcast_cleanup(dev);

	if (dev->ndev) {
		netdev_put(dev->ndev, &dev->ndev_tracker);
		dev->ndev = NULL;
	}
}

static struct mrxe_dev *mrxe_find_by_ndev(struct net_device *ndev)
{
	struct mrxe_dev *dev;

	list_for_each_entry(dev, &mrxe_dev_list, list)
		if (dev->ndev == ndev)
			return dev;
	return NULL;
}

static int mrxe_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct ib_device *exist;
	struct mrxe_dev *dev;
	bool gone;
	int err;

	/* RoCEv2 runs over Ethernet only (IBA A17.2). */
	if (ndev->type != ARPHRD_ETHER) {
		pr_err_ratelimited(DRV_NAME ": %s is not an Ethernet device (type %u)\n",
				   ndev->name, ndev->type);
		return -EINVAL;
	}

	exist = ib_device_get_by_name(ibdev_name, RDMA_DRIVER_UNKNOWN);
	if (exist) {
		ib_device_put(exist);
		pr_err_ratelimited(DRV_NAME ": device %s already exists\n",
				   ibdev_name);
		return -EEXIST;
	}

	dev = ib_alloc_device(mrxe_dev, ib_dev);
	if (!dev)
		return -ENOMEM;

	/* First: from here on ib_dealloc_device() runs mrxe_dealloc(). */
	ib_set_device_ops(&dev->ib_dev, &mrxe_dev_ops);
	INIT_LIST_HEAD(&dev->list);
	spin_lock_init(&dev->port_lock);
	spin_lock_init(&dev->cfg_lock);
	mrxe_mcast_init(dev);
	xa_init_flags(&dev->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->mr_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->ah_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->srq_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	dev->next_qpn = MRXE_MIN_QPN;
	dev->cfg.transport_mode = MRXE_TRANSPORT_AUTO;	/* issue 8 */
	dev->cfg.num_paths = 1;
	dev->cfg.window = MRXE_SACK_WINDOW;
	/* ECN and DCQCN on, as RoCEv2 NICs ship (design.rst: defaults) */
	dev->cfg.ecn = true;
	dev->cfg.cnp_interval_us = 50;		/* DCQCN paper: N = 50 us */
	dev->cfg.cc = MRXE_CC_DCQCN;
	mrxe_dcqcn_params_default(&dev->cfg.dcqcn, 10ULL * 1000 * 1000);

	dev->ndev = ndev;
	netdev_hold(ndev, &dev->ndev_tracker, GFP_KERNEL);

	mutex_lock(&mrxe_dev_mutex);
	if (mrxe_find_by_ndev(ndev)) {
		mutex_unlock(&mrxe_dev_mutex);
		pr_err_ratelimited(DRV_NAME ": %s already has an mrxe device\n",
				   ndev->name);
		err = -EEXIST;
		goto err_dealloc;
	}
	list_add_tail(&dev->list, &mrxe_dev_list);
	mutex_unlock(&mrxe_dev_mutex);

	/*
	 * wq_hi: high-priority workers, every QP's while the device has no
	 * high-priority QP.  wq: normal workers (as upstream rxe's since
	 * 6.4), the others' while it has (design.rst "QP priority").
	 */
	dev->wq = alloc_workqueue("mrxe_%s", WQ_UNBOUND | WQ_MEM_RECLAIM, 0,
				  ibdev_name);
	dev->wq_mode = clamp(wq_local, 0, 2);
	dev->wq_cpu = alloc_workqueue("mrxe_%s_cpu", WQ_MEM_RECLAIM | WQ_HIGHPRI,
				      0, ibdev_name);
	dev->wq_hi = dev->wq_mode == 2 ? dev->wq_cpu :
		     alloc_workqueue("mrxe_%s_hi", WQ_UNBOUND | WQ_MEM_RECLAIM |
				     WQ_HIGHPRI, 0, ibdev_name);
	if (!dev->wq || !dev->wq_hi || !dev->wq_cpu) {
		err = -ENOMEM;
		goto err_dealloc;
	}

	err = mrxe_net_attach(dev);
	if (err)
		goto err_dealloc;

	mrxe_init_device_attr(dev);
	mrxe_init_port_attr(dev);
	mrxe_dev_set_mtu(dev, ndev->mtu);

	dev->ib_dev.node_type = RDMA_NODE_IB_CA;
	dev->ib_dev.phys_port_cnt = 1;
	dev->ib_dev.num_comp_vectors = num_possible_cpus();
	dev->ib_dev.local_dma_lkey = 0;
	addrconf_addr_eui48((unsigned char *)&dev->ib_dev.node_guid,
			    ndev->dev_addr);
	strscpy(dev->ib_dev.node_desc, "mrxe", sizeof(dev->ib_dev.node_desc));
	dev->ib_dev.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				       BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				       BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);

	/* ib_core's roce_gid_mgmt fills the RoCEv2 GIDs from this netdev. */
	err = ib_device_set_netdev(&dev->ib_dev, ndev, 1);
	if (err)
		goto err_dealloc;

	err = ib_register_device(&dev->ib_dev, ibdev_name, NULL);
	if (err) {
		pr_err_ratelimited(DRV_NAME ": registering %s failed: %d\n",
				   ibdev_name, err);
		if (err == -ENFILE)
			err = -EEXIST;	/* name taken meanwhile */
		goto err_dealloc;
	}

	/*
	 * The netdev may have started unregistering before we were
	 * registered, when the notifier could not see us yet.
	 */
	rtnl_lock();
	gone = ndev->reg_state != NETREG_REGISTERED;
	if (!gone)
		mrxe_port_update(dev);
	rtnl_unlock();
	if (gone)
		ib_unregister_device_queued(&dev->ib_dev);

	ibdev_info(&dev->ib_dev, "added on %s (netns %u)\n", ndev->name,
		   dev_net(ndev)->ns.inum);
	/*
	 * ib_core takes a port's IP GIDs from its netdev and the VLANs over
	 * it, never from the lower device of a VLAN: on a VLAN netdev only
	 * the default (link-local) GID appears.  Allowed, as in stock rxe,
	 * but say what works (known-issues.rst "VLANs").
	 */
	if (is_vlan_dev(ndev))
		ibdev_warn(&dev->ib_dev,
			   "%s is a VLAN device: only the link-local GID will be usable; attach to %s and use the VLAN's GID\n",
			   ndev->name, vlan_dev_real_dev(ndev)->name);
	return 0;

err_dealloc:
	/* Calls mrxe_dealloc(), which copes with a partial setup. */
	ib_dealloc_device(&dev->ib_dev);
	return err;
}

static struct rdma_link_ops mrxe_link_ops = {
	.type = "mrxe",
	.newlink = mrxe_newlink,
};

static int mrxe_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct mrxe_dev *dev;

	mutex_lock(&mrxe_dev_mutex);
	dev = mrxe_find_by_ndev(ndev);
	/* Not registered yet (newlink re-checks) or already going away. */
	if (!dev || !ib_device_try_get(&dev->ib_dev)) {
		mutex_unlock(&mrxe_dev_mutex);
		return NOTIFY_DONE;
	}
	mutex_unlock(&mrxe_dev_mutex);

	switch (event) {
	case NETDEV_UNREGISTER:
		/* Also on a move to another netns: the socket stays behind. */
		ibdev_info(&dev->ib_dev, "%s unregistering, removing device\n",
			   ndev->name);
		ib_unregister_device_queued(&dev->ib_dev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		mrxe_port_update(dev);
		break;
	default:
		break;
	}
	ib_device_put(&dev->ib_dev);
	return NOTIFY_OK;
}

static struct notifier_block mrxe_netdev_nb = {
	.notifier_call = mrxe_netdev_event,
};

/*
 * Unregister every mrxe device, synchronously.  Each ib_unregister_device()
 * fences a concurrent queued unregistration (unregistration_lock), and our
 * dealloc_driver removes the device from the list.  We walk our own list
 * rather than ib_unregister_driver(RDMA_DRIVER_UNKNOWN), which would also
 * take down other drivers' devices that report the same id.
 */
static void mrxe_unregister_all(void)
{
	struct mrxe_dev *dev;
	struct ib_device *ibdev;

	for (;;) {
		mutex_lock(&mrxe_dev_mutex);
		dev = list_first_entry_or_null(&mrxe_dev_list, struct mrxe_dev,
					       list);
		if (!dev) {
			mutex_unlock(&mrxe_dev_mutex);
			break;
		}
		ibdev = &dev->ib_dev;
		get_device(&ibdev->dev);
		mutex_unlock(&mrxe_dev_mutex);

		ib_unregister_device(ibdev);
		/* Registered-but-failed devices never reach dealloc here. */
		mutex_lock(&mrxe_dev_mutex);
		if (!list_empty(&dev->list) && !refcount_read(&ibdev->refcount))
			list_del_init(&dev->list);
		mutex_unlock(&mrxe_dev_mutex);
		put_device(&ibdev->dev);
	}
}

static int __init mrxe_module_init(void)
{
	int err;

	err = mrxe_net_init();
	if (err)
		return err;

	err = mrxe_nl_init();
	if (err) {
		pr_err(DRV_NAME ": netlink family registration failed: %d\n",
		       err);
		goto err_net;
	}

	err = register_netdevice_notifier(&mrxe_netdev_nb);
	if (err) {
		pr_err(DRV_NAME ": netdev notifier registration failed: %d\n",
		       err);
		goto err_nl;
	}

	rdma_link_register(&mrxe_link_ops);
	pr_info(DRV_NAME ": loaded (ABI %d)\n", MRXE_ABI_VERSION);
	return 0;

err_nl:
	mrxe_nl_exit();
err_net:
	mrxe_net_exit();
	return err;
}

static void __exit mrxe_module_exit(void)
{
	rdma_link_unregister(&mrxe_link_ops);
	mrxe_unregister_all();
	/* Last: unregistering replays NETDEV_UNREGISTER for every netdev. */
	unregister_netdevice_notifier(&mrxe_netdev_nb);
	mrxe_nl_exit();
	mrxe_net_exit();
	pr_info(DRV_NAME ": unloaded\n");
}

late_initcall(mrxe_module_init);
module_exit(mrxe_module_exit);

/* The ABI of rdma/mrxe-abi.h, as tests/unit/abi_test.cc checks it in C++. */
static_assert(sizeof(struct mrxe_ring_hdr) == MRXE_RING_HDR_SIZE);
static_assert(offsetof(struct mrxe_ring_hdr, producer_index) == 64);
static_assert(offsetof(struct mrxe_ring_hdr, consumer_index) == 128);
static_assert(sizeof(struct mrxe_send_wqe) == MRXE_SEND_WQE_HDR_SIZE);
static_assert(sizeof(struct mrxe_recv_wqe) == MRXE_RECV_WQE_HDR_SIZE);
static_assert(sizeof(struct mrxe_cqe) == MRXE_CQE_SIZE);
static_assert(sizeof(struct mrxe_sge) == 16);
static_assert(offsetof(struct mrxe_send_wqe, wr) == 32);
static_assert(sizeof(struct mrxe_create_qp_cmd) % 8 == 0);
static_assert(sizeof(struct mrxe_create_qp_resp) % 8 == 0);
static_assert(sizeof(struct mrxe_alloc_context_resp) % 8 == 0);

MODULE_AUTHOR("mrxe authors");
MODULE_DESCRIPTION("mrxe: soft-RoCE with per-netns sockets and MetaRoCE");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("mrxe");
