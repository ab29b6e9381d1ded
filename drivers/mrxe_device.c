// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mrxe device and port attributes, P_Key table, port immutable data and
 * hw counters.  Every limit comes from mrxe_param.h.
 */
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "mrxe.h"
#include "mrxe_verbs.h"

void mrxe_init_device_attr(struct mrxe_dev *dev)
{
	struct ib_device_attr *a = &dev->attr;

	memset(a, 0, sizeof(*a));
	a->vendor_id = MRXE_VENDOR_ID;
	a->max_mr_size = MRXE_MAX_MR_SIZE;
	a->page_size_cap = MRXE_PAGE_SIZE_CAP;
	a->max_qp = MRXE_MAX_QP;
	a->max_qp_wr = MRXE_MAX_QP_WR;
	a->device_cap_flags = IB_DEVICE_PORT_ACTIVE_EVENT |
			      IB_DEVICE_SYS_IMAGE_GUID |
			      IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_MEM_MGT_EXTENSIONS |
			      IB_DEVICE_MEM_WINDOW |
			      IB_DEVICE_MEM_WINDOW_TYPE_2B |
			      /* 10.2.9: modify_srq IB_SRQ_MAX_WR (mrxe_srq.c) */
			      IB_DEVICE_SRQ_RESIZE |
			      /* IBA 1.5 FLUSH and ATOMIC WRITE (6.2+ enums) */
			      MRXE_DEVICE_CAP_MPE;
	/* IBK_ALLOW_USER_UNREG: "rdma link delete" may remove us. */
	a->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	a->max_send_sge = MRXE_MAX_SGE;
	a->max_recv_sge = MRXE_MAX_SGE;
	a->max_sge_rd = MRXE_MAX_SGE;
	a->max_cq = MRXE_MAX_CQ;
	a->max_cqe = MRXE_MAX_CQE;
	a->max_mr = MRXE_MAX_MR;
	a->max_mw = MRXE_MAX_MW;
	a->max_pd = MRXE_MAX_PD;
	a->max_qp_rd_atom = MRXE_MAX_QP_RD_ATOM;
	a->max_qp_init_rd_atom = MRXE_MAX_QP_RD_ATOM;
	a->max_res_rd_atom = MRXE_MAX_RES_RD_ATOM;
	a->atomic_cap = IB_ATOMIC_HCA;
	/* UD multicast, mrxe_mcast.c enforces these */
	a->max_mcast_grp = MRXE_MAX_MCAST_GRP;
	a->max_mcast_qp_attach = MRXE_MAX_MCAST_QP_ATTACH;
	a->max_total_mcast_qp_attach = MRXE_MAX_TOT_MCAST_QP_ATTACH;
	a->max_ah = MRXE_MAX_AH;
	a->max_srq = MRXE_MAX_SRQ;
	a->max_srq_wr = MRXE_MAX_SRQ_WR;
	a->max_srq_sge = MRXE_MAX_SRQ_SGE;
	a->max_fast_reg_page_list_len = MRXE_MAX_FMR_PAGES;
	a->max_pkeys = MRXE_MAX_PKEYS;
	a->local_ca_ack_delay = 15;
	a->max_sgl_rd = 0;
	addrconf_addr_eui48((unsigned char *)&a->sys_image_guid,
			    dev->ndev->dev_addr);
}

int mrxe_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		      struct ib_udata *udata)
{
	struct mrxe_dev *dev = to_mdev(ibdev);

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	*attr = dev->attr;
	return 0;
}

int mrxe_query_port(struct ib_device *ibdev, u32 port,
		    struct ib_port_attr *attr)
{
	struct mrxe_dev *dev = to_mdev(ibdev);
	u16 speed;
	u8 width;
	int err;

	if (port != 1)
		return -EINVAL;

	/* ib_get_eth_speed() takes rtnl: query it outside port_lock. */
	err = ib_get_eth_speed(ibdev, port, &speed, &width);

	spin_lock_bh(&dev->port_lock);
	*attr = dev->port_attr;
	spin_unlock_bh(&dev->port_lock);

	if (!err) {
		attr->active_speed = speed;
		attr->active_width = width;
	} else {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	attr->qkey_viol_cntr =
		min_t(u64, atomic64_read(&dev->stats[MRXE_CNT_QKEY_VIOLATION]),
		      U32_MAX);
	return 0;
}

int mrxe_modify_port(struct ib_device *ibdev, u32 port, int mask,
		     struct ib_port_modify *attr)
{
	struct mrxe_dev *dev = to_mdev(ibdev);

	if (port != 1)
		return -EINVAL;
	if (mask & ~(IB_PORT_SHUTDOWN | IB_PORT_INIT_TYPE |
		     IB_PORT_RESET_QKEY_CNTR))
		return -EOPNOTSUPP;
	if (mask & IB_PORT_SHUTDOWN)
		return -EOPNOTSUPP;
	if (mask & IB_PORT_RESET_QKEY_CNTR)
		atomic64_set(&dev->stats[MRXE_CNT_QKEY_VIOLATION], 0);
	spin_lock_bh(&dev->port_lock);
	dev->port_attr.port_cap_flags |= attr->set_port_cap_mask;
	dev->port_attr.port_cap_flags &= ~attr->clr_port_cap_mask;
	spin_unlock_bh(&dev->port_lock);
	return 0;
}

int mrxe_modify_device(struct ib_device *ibdev, int mask,
		       struct ib_device_modify *attr)
{
	if (mask & ~(IB_DEVICE_MODIFY_SYS_IMAGE_GUID |
		     IB_DEVICE_MODIFY_NODE_DESC))
		return -EOPNOTSUPP;
	if (mask & IB_DEVICE_MODIFY_SYS_IMAGE_GUID)
		to_mdev(ibdev)->attr.sys_image_guid =
			cpu_to_be64(attr->sys_image_guid);
	if (mask & IB_DEVICE_MODIFY_NODE_DESC)
		memcpy(ibdev->node_desc, attr->node_desc,
		       sizeof(ibdev->node_desc));
	return 0;
}

/* One P_Key, the default full-membership key (IBA 10.9.1.1). */
int mrxe_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (port != 1 || index >= MRXE_MAX_PKEYS)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

int mrxe_get_port_immutable(struct ib_device *ibdev, u32 port,
			    struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr;
	int err;

	if (port != 1)
		return -EINVAL;
	/* RoCEv2 only: GIDs are IPv4-mapped or IPv6 addresses (IBA A17). */
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

enum rdma_link_layer mrxe_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

/*
 * The port's netdev, held for the caller.  ib_core finds it through
 * ib_device_set_netdev() alone, but some ULPs call this op directly: on
 * 6.1, SMC-R pairs an RDMA port with a socket's route netdev only through
 * it (smc_pnet_find_rdma_dev(); without a PNET ID configured), and falls
 * back to TCP without it.  dev->ndev is held from link add until
 * mrxe_dealloc(), after the device is unregistered.
 */
struct net_device *mrxe_get_netdev(struct ib_device *ibdev, u32 port)
{
	struct net_device *ndev = to_mdev(ibdev)->ndev;

	if (port != 1 || !ndev)
		return NULL;
	dev_hold(ndev);
	return ndev;
}

void mrxe_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "mrxe-abi-%d", MRXE_ABI_VERSION);
}

/*
 * /sys/class/infiniband/DEV/mrxe_abi_version: how the userspace provider
 * recognises an mrxe device whatever its name (a stock rxe device has no
 * such attribute).
 */
static ssize_t mrxe_abi_version_show(struct device *device,
				     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", MRXE_ABI_VERSION);
}
static DEVICE_ATTR_RO(mrxe_abi_version);

static struct attribute *mrxe_dev_attrs[] = {
	&dev_attr_mrxe_abi_version.attr,
	NULL,
};

const struct attribute_group mrxe_dev_attr_group = {
	.attrs = mrxe_dev_attrs,
};

/* Names as "rdma statistic show link DEV/1" prints them. */
static const struct rdma_stat_desc mrxe_counter_descs[] = {
	[MRXE_CNT_SENT_PKTS].name		= "sent_pkts",
	[MRXE_CNT_RCVD_PKTS].name		= "rcvd_pkts",
	[MRXE_CNT_SENT_BYTES].name		= "sent_bytes",
	[MRXE_CNT_RCVD_BYTES].name		= "rcvd_bytes",
	[MRXE_CNT_RETRANS_PKTS].name		= "retrans_pkts",
	[MRXE_CNT_RETRANS_TIMEOUTS].name	= "retrans_timeouts",
	[MRXE_CNT_RCV_DUP_REQ].name		= "duplicate_request",
	[MRXE_CNT_SEQ_ERR_NAKS_SENT].name	= "seq_err_naks_sent",
	[MRXE_CNT_SEQ_ERR_NAKS_RCVD].name	= "seq_err_naks_rcvd",
	[MRXE_CNT_RNR_NAKS_SENT].name		= "rnr_naks_sent",
	[MRXE_CNT_RNR_NAKS_RCVD].name		= "rnr_naks_rcvd",
	[MRXE_CNT_RCV_DROPPED].name		= "rcvd_dropped",
	[MRXE_CNT_ICRC_ERR].name		= "icrc_errors",
	[MRXE_CNT_QKEY_VIOLATION].name		= "qkey_violations",
	[MRXE_CNT_COMPLETER_ERR].name		= "completer_errors",
	[MRXE_CNT_RESPONDER_ERR].name		= "responder_errors",
	[MRXE_CNT_LINK_DOWNED].name		= "link_downed",
	[MRXE_CNT_ECN_MARKED].name		= "ecn_marked_pkts",
	[MRXE_CNT_CNP_SENT].name		= "cnp_sent",
	[MRXE_CNT_CNP_RCVD].name		= "cnp_rcvd",
	[MRXE_CNT_MODE_MISMATCH].name		= "mode_mismatch",
	[MRXE_CNT_META_RETRANS].name		= "meta_retrans_pkts",
	[MRXE_CNT_META_SPURIOUS].name		= "meta_spurious_retrans",
	[MRXE_CNT_META_OOO].name		= "meta_ooo_pkts",
	[MRXE_CNT_META_HOLES].name		= "meta_sack_holes",
	[MRXE_CNT_META_TLP].name		= "meta_tlp",
	[MRXE_CNT_META_RTO].name		= "meta_rto",
	[MRXE_CNT_META_RTO_SPURIOUS].name	= "meta_spurious_rto",
	[MRXE_CNT_META_OUT_OF_WINDOW].name	= "meta_out_of_window",
	[MRXE_CNT_META_UPGRADES].name		= "mode_upgrades",
	[MRXE_CNT_META_RSP_GAP].name		= "meta_rsp_gap_rerequests",
	[MRXE_CNT_XMIT_ORDER_WAITS].name	= "xmit_order_waits",
	[MRXE_CNT_XMIT_ORDER_EXPIRED].name	= "xmit_order_expired",
	[MRXE_CNT_XMIT_BUSY].name		= "xmit_busy",
	[MRXE_CNT_CNP_PACED].name		= "cnp_paced",
	[MRXE_CNT_CC_RATE_CUTS].name		= "cc_rate_cuts",
	[MRXE_CNT_RX_DROP_LENGTH].name		= "rx_drop_length",
	[MRXE_CNT_RX_DROP_OPCODE].name		= "rx_drop_opcode",
	[MRXE_CNT_RX_DROP_PKEY].name		= "rx_drop_pkey",
	[MRXE_CNT_RX_DROP_NO_QP].name		= "rx_drop_no_qp",
	[MRXE_CNT_RX_DROP_SRC_ADDR].name	= "rx_drop_src_addr",
	[MRXE_CNT_RX_DROP_GHOST].name		= "rx_drop_ghost_resp",
	[MRXE_CNT_XMIT_NO_ROUTE].name		= "xmit_no_route",
	[MRXE_CNT_FLUSH_EXECUTED].name		= "flush_executed",
	[MRXE_CNT_ATOMIC_WRITE_EXECUTED].name	= "atomic_write_executed",
	[MRXE_CNT_META_PLACED].name		= "meta_placed_on_arrival",
	[MRXE_CNT_META_RSP_WND_CUTS].name	= "meta_rsp_wnd_cuts",
	[MRXE_CNT_PRIO_DEMOTED].name		= "prio_work_demoted",
	[MRXE_CNT_META_STALE_NAK].name		= "meta_stale_naks",
	[MRXE_CNT_META_READ_STRADDLE].name	= "meta_read_straddles",
	[MRXE_CNT_READ_RSP_REPLAYED].name	= "read_rsp_replayed",
	[MRXE_CNT_READ_DUP_STREAMING].name	= "read_dup_streaming",
	[MRXE_CNT_READ_DUP_QUEUED].name		= "read_dup_queued",
	[MRXE_CNT_READ_DUP_OVERFLOW].name	= "read_dup_overflow",
	[MRXE_CNT_META_WRITE_RECOPIED].name	= "meta_write_recopied",
	[MRXE_CNT_DOORBELL_RUNS].name		= "doorbell_runs",
	[MRXE_CNT_TX_QUEUE_FULL].name		= "tx_queue_full",
	[MRXE_CNT_META_WND_FULL].name		= "meta_window_full",
};

static_assert(ARRAY_SIZE(mrxe_counter_descs) == MRXE_NUM_COUNTERS);

/* The one name table: hw_counters and the netlink family both use it. */
const char *mrxe_counter_name(unsigned int i)
{
	return i < MRXE_NUM_COUNTERS ? mrxe_counter_descs[i].name : NULL;
}

struct rdma_hw_stats *mrxe_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port)
{
	return rdma_alloc_hw_stats_struct(mrxe_counter_descs,
					  ARRAY_SIZE(mrxe_counter_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int mrxe_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index)
{
	struct mrxe_dev *dev = to_mdev(ibdev);
	int i;

	if (!port || !stats)
		return -EINVAL;
	for (i = 0; i < MRXE_NUM_COUNTERS; i++)
		stats->value[i] = atomic64_read(&dev->stats[i]);
	return MRXE_NUM_COUNTERS;
}
