// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mrxe generic netlink family "mrxe" (include/uapi/rdma/mrxe-netlink.h):
 * device defaults (get/set), per-QP state, per-QP paths, the device
 * counters, and an "events" multicast group.
 *
 * Namespaces: a device is visible only from the network namespace of its
 * netdev (dev_net(dev->ndev)), both for requests and for events.
 *
 * Locking: this file adds no lock of its own.  Devices are found under
 * mrxe_dev_mutex (mrxe_main.c) and pinned with ib_device_try_get(), which
 * also skips devices that are not (or no longer) registered.  Device
 * config is read and written under dev->cfg_lock.  QPs are walked under
 * rcu_read_lock() (destroy_qp erases the QP from qp_xa, then waits for RCU
 * readers); per-QP attributes are read under qp->state_lock and the
 * pipeline's PSNs as READ_ONCE() snapshots (they belong to the QP's work
 * item, see mrxe_pipe.h).
 */
#include <net/genetlink.h>
#include <rdma/mrxe-netlink.h>

#include "mrxe.h"
#include "mrxe_verbs.h"

/* mrxe_path_glue.c: a MetaRoCE sender's paths, 0 when it has none */
int mrxe_path_glue_fill(struct sk_buff *skb, struct mrxe_qp *qp);

static_assert((int)MRXE_NL_TRANSPORT_STANDARD == (int)MRXE_TRANSPORT_STANDARD);
static_assert((int)MRXE_NL_TRANSPORT_METAROCE == (int)MRXE_TRANSPORT_METAROCE);
static_assert((int)MRXE_NL_CC_OFF == (int)MRXE_CC_OFF);
static_assert((int)MRXE_NL_CC_DCQCN == (int)MRXE_CC_DCQCN);

/*
 * Size of a QP_GET/DEV_GET reply and the least a dump skb gets.  Bound of
 * the largest message: a QP with MRXE_MAX_PATHS paths (6 attributes and
 * 10 named 64-bit stats each, every stat <= 48 bytes) and every device
 * counter (name <= 31 bytes: <= 64 bytes each), plus headers.
 */
#define MRXE_NL_MSG_SIZE	16384

enum mrxe_nl_groups {
	MRXE_NL_GRP_EVENTS,
};

static const struct genl_multicast_group mrxe_nl_mcgrps[] = {
	[MRXE_NL_GRP_EVENTS] = { .name = MRXE_GENL_MCGRP_EVENTS },
};

static struct netlink_range_validation mrxe_nl_cnp_range = {
	.min = 1,
	.max = MRXE_NL_CNP_INTERVAL_MAX,
};

static struct netlink_range_validation mrxe_nl_qpn_range = {
	.min = 0,
	.max = (1U << 24) - 1,
};

/* Attributes a request may carry; everything else is refused (strict). */
static const struct nla_policy mrxe_nl_policy[MRXE_ATTR_MAX + 1] = {
	[MRXE_ATTR_IBDEV_NAME]	= { .type = NLA_NUL_STRING,
				    .len = IB_DEVICE_NAME_MAX - 1 },
	[MRXE_ATTR_TRANSPORT_MODE] =
		NLA_POLICY_RANGE(NLA_U32, MRXE_NL_TRANSPORT_STANDARD,
				 MRXE_NL_TRANSPORT_AUTO),
	[MRXE_ATTR_NUM_PATHS]	= NLA_POLICY_RANGE(NLA_U32, 1, MRXE_MAX_PATHS),
	[MRXE_ATTR_WINDOW]	= NLA_POLICY_RANGE(NLA_U32, MRXE_NL_WINDOW_MIN,
						   MRXE_NL_WINDOW_MAX),
	[MRXE_ATTR_ECN]		= NLA_POLICY_MAX(NLA_U8, 1),
	[MRXE_ATTR_CNP_INTERVAL_US] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mrxe_nl_cnp_range),
	[MRXE_ATTR_QPN]		= NLA_POLICY_FULL_RANGE(NLA_U32,
							&mrxe_nl_qpn_range),
	/* types only: ranges are checked in mrxe_nl_dcqcn_set (EINVAL) */
	[MRXE_ATTR_CC]				= { .type = NLA_U8 },
	[MRXE_ATTR_DCQCN_RATE_MAX_KBPS]		= { .type = NLA_U32 },
	[MRXE_ATTR_DCQCN_RATE_MIN_KBPS]		= { .type = NLA_U32 },
	[MRXE_ATTR_DCQCN_G]			= { .type = NLA_U32 },
	[MRXE_ATTR_DCQCN_ALPHA_US]		= { .type = NLA_U32 },
	[MRXE_ATTR_DCQCN_TIMER_US]		= { .type = NLA_U32 },
	[MRXE_ATTR_DCQCN_BYTE_COUNTER_KB]	= { .type = NLA_U32 },
	[MRXE_ATTR_DCQCN_AI_KBPS]		= { .type = NLA_U32 },
	[MRXE_ATTR_DCQCN_HAI_KBPS]		= { .type = NLA_U32 },
	[MRXE_ATTR_DCQCN_F]			= { .type = NLA_U32 },
};

/* Congestion control attributes: [min, max] of each (uapi header). */
static const struct {
	u16	attr;
	u32	min, max;
	const char *msg;
} mrxe_nl_cc_ranges[] = {
	{ MRXE_ATTR_CC, MRXE_NL_CC_OFF, MRXE_NL_CC_DCQCN,
	  "cc: 0 (off) or 1 (dcqcn)" },
	{ MRXE_ATTR_DCQCN_RATE_MAX_KBPS, MRXE_NL_DCQCN_RATE_MIN,
	  MRXE_NL_DCQCN_RATE_MAX, "rate-max: 100..4000000000 kbit/s" },
	{ MRXE_ATTR_DCQCN_RATE_MIN_KBPS, MRXE_NL_DCQCN_RATE_MIN,
	  MRXE_NL_DCQCN_RATE_MAX, "rate-min: 100..4000000000 kbit/s" },
	{ MRXE_ATTR_DCQCN_G, 1, MRXE_DCQCN_G_ONE, "g: 1..65536 (1/65536 units)" },
	{ MRXE_ATTR_DCQCN_ALPHA_US, 1, MRXE_NL_DCQCN_US_MAX,
	  "alpha-timer: 1..1000000 us" },
	{ MRXE_ATTR_DCQCN_TIMER_US, 1, MRXE_NL_DCQCN_US_MAX,
	  "rate-timer: 1..1000000 us" },
	{ MRXE_ATTR_DCQCN_BYTE_COUNTER_KB, 0, MRXE_NL_DCQCN_BC_MAX_KB,
	  "byte-counter: 0..4194304 KiB" },
	{ MRXE_ATTR_DCQCN_AI_KBPS, 1, MRXE_NL_DCQCN_RATE_MAX,
	  "ai-rate: 1..4000000000 kbit/s" },
	{ MRXE_ATTR_DCQCN_HAI_KBPS, 1, MRXE_NL_DCQCN_RATE_MAX,
	  "hai-rate: 1..4000000000 kbit/s" },
	{ MRXE_ATTR_DCQCN_F, 1, MRXE_NL_DCQCN_F_MAX, "f: 1..64" },
};

/* Any congestion control attribute in the request? */
static bool mrxe_nl_has_cc(struct nlattr **tb)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(mrxe_nl_cc_ranges); i++)
		if (tb[mrxe_nl_cc_ranges[i].attr])
			return true;
	return false;
}

/*
 * Range-check every congestion control attribute, then apply them to
 * @cfg (a copy).  -EINVAL with an extack message naming the attribute.
 */
static int mrxe_nl_cc_set(struct nlattr **tb, struct mrxe_dev_cfg *cfg,
			  struct netlink_ext_ack *extack)
{
	struct mrxe_dcqcn_params *p = &cfg->dcqcn;
	unsigned int i;
	u32 v;

	for (i = 0; i < ARRAY_SIZE(mrxe_nl_cc_ranges); i++) {
		struct nlattr *a = tb[mrxe_nl_cc_ranges[i].attr];

		if (!a)
			continue;
		v = mrxe_nl_cc_ranges[i].attr == MRXE_ATTR_CC ?
		    nla_get_u8(a) : nla_get_u32(a);
		if (v < mrxe_nl_cc_ranges[i].min ||
		    v > mrxe_nl_cc_ranges[i].max) {
			/* NL_SET_ERR_MSG wants a literal: the table's is static */
			if (extack)
				extack->_msg = mrxe_nl_cc_ranges[i].msg;
			NL_SET_BAD_ATTR(extack, a);
			return -EINVAL;
		}
	}
	if (tb[MRXE_ATTR_CC])
		cfg->cc = nla_get_u8(tb[MRXE_ATTR_CC]);
	if (tb[MRXE_ATTR_DCQCN_RATE_MAX_KBPS])
		p->line_kbps = nla_get_u32(tb[MRXE_ATTR_DCQCN_RATE_MAX_KBPS]);
	if (tb[MRXE_ATTR_DCQCN_RATE_MIN_KBPS])
		p->min_kbps = nla_get_u32(tb[MRXE_ATTR_DCQCN_RATE_MIN_KBPS]);
	if (tb[MRXE_ATTR_DCQCN_G])
		p->g = nla_get_u32(tb[MRXE_ATTR_DCQCN_G]);
	if (tb[MRXE_ATTR_DCQCN_ALPHA_US])
		p->alpha_us = nla_get_u32(tb[MRXE_ATTR_DCQCN_ALPHA_US]);
	if (tb[MRXE_ATTR_DCQCN_TIMER_US])
		p->timer_us = nla_get_u32(tb[MRXE_ATTR_DCQCN_TIMER_US]);
	if (tb[MRXE_ATTR_DCQCN_BYTE_COUNTER_KB])
		p->byte_counter = 1024ULL *
			nla_get_u32(tb[MRXE_ATTR_DCQCN_BYTE_COUNTER_KB]);
	if (tb[MRXE_ATTR_DCQCN_AI_KBPS])
		p->ai_kbps = nla_get_u32(tb[MRXE_ATTR_DCQCN_AI_KBPS]);
	if (tb[MRXE_ATTR_DCQCN_HAI_KBPS])
		p->hai_kbps = nla_get_u32(tb[MRXE_ATTR_DCQCN_HAI_KBPS]);
	if (tb[MRXE_ATTR_DCQCN_F])
		p->f = nla_get_u32(tb[MRXE_ATTR_DCQCN_F]);
	if (p->min_kbps > p->line_kbps) {
		NL_SET_ERR_MSG(extack, "rate-min must not exceed rate-max");
		return -EINVAL;
	}
	return 0;
}

static struct genl_family mrxe_nl_family;

static bool mrxe_nl_dev_in_net(struct mrxe_dev *dev, struct net *net)
{
	return net_eq(dev_net(dev->ndev), net);
}

/*
 * Find a registered device by name in @net and pin it (ib_device_put()
 * when done).  ERR_PTR(-EINVAL) without a name, ERR_PTR(-ENODEV) when
 * there is no such device here; both with an extack message.
 */
static struct mrxe_dev *mrxe_nl_dev_get(struct net *net, struct nlattr *name,
					struct netlink_ext_ack *extack)
{
	struct mrxe_dev *dev, *found = NULL;

	if (!name) {
		NL_SET_ERR_MSG(extack, "device name (MRXE_ATTR_IBDEV_NAME) is required");
		return ERR_PTR(-EINVAL);
	}
	mutex_lock(&mrxe_dev_mutex);
	list_for_each_entry(dev, &mrxe_dev_list, list) {
		/* Registered devices only: they have a name. */
		if (!mrxe_nl_dev_in_net(dev, net) ||
		    !ib_device_try_get(&dev->ib_dev))
			continue;
		if (!nla_strcmp(name, dev_name(&dev->ib_dev.dev))) {
			found = dev;
			break;
		}
		ib_device_put(&dev->ib_dev);
	}
	mutex_unlock(&mrxe_dev_mutex);
	if (!found) {
		NL_SET_ERR_MSG_ATTR(extack, name,
				    "no mrxe device of this name in this network namespace");
		return ERR_PTR(-ENODEV);
	}
	return found;
}

static void mrxe_nl_cfg_read(struct mrxe_dev *dev, struct mrxe_dev_cfg *cfg)
{
	spin_lock_bh(&dev->cfg_lock);
	*cfg = dev->cfg;
	spin_unlock_bh(&dev->cfg_lock);
}

static int mrxe_nl_put_dev_id(struct sk_buff *skb, struct mrxe_dev *dev)
{
	if (nla_put_string(skb, MRXE_ATTR_IBDEV_NAME,
			   dev_name(&dev->ib_dev.dev)) ||
	    nla_put_u32(skb, MRXE_ATTR_IBDEV_INDEX, dev->ib_dev.index))
		return -EMSGSIZE;
	return 0;
}

static int mrxe_nl_put_cfg(struct sk_buff *skb, const struct mrxe_dev_cfg *cfg)
{
	if (nla_put_u32(skb, MRXE_ATTR_TRANSPORT_MODE, cfg->transport_mode) ||
	    nla_put_u32(skb, MRXE_ATTR_NUM_PATHS, cfg->num_paths) ||
	    nla_put_u32(skb, MRXE_ATTR_WINDOW, cfg->window) ||
	    nla_put_u8(skb, MRXE_ATTR_ECN, cfg->ecn) ||
	    nla_put_u32(skb, MRXE_ATTR_CNP_INTERVAL_US, cfg->cnp_interval_us) ||
	    nla_put_u8(skb, MRXE_ATTR_CC, cfg->cc) ||
	    nla_put_u32(skb, MRXE_ATTR_DCQCN_RATE_MAX_KBPS,
			(u32)cfg->dcqcn.line_kbps) ||
	    nla_put_u32(skb, MRXE_ATTR_DCQCN_RATE_MIN_KBPS,
			(u32)cfg->dcqcn.min_kbps) ||
	    nla_put_u32(skb, MRXE_ATTR_DCQCN_G, cfg->dcqcn.g) ||
	    nla_put_u32(skb, MRXE_ATTR_DCQCN_ALPHA_US, cfg->dcqcn.alpha_us) ||
	    nla_put_u32(skb, MRXE_ATTR_DCQCN_TIMER_US, cfg->dcqcn.timer_us) ||
	    nla_put_u32(skb, MRXE_ATTR_DCQCN_BYTE_COUNTER_KB,
			(u32)(cfg->dcqcn.byte_counter >> 10)) ||
	    nla_put_u32(skb, MRXE_ATTR_DCQCN_AI_KBPS, (u32)cfg->dcqcn.ai_kbps) ||
	    nla_put_u32(skb, MRXE_ATTR_DCQCN_HAI_KBPS,
			(u32)cfg->dcqcn.hai_kbps) ||
	    nla_put_u32(skb, MRXE_ATTR_DCQCN_F, cfg->dcqcn.f))
		return -EMSGSIZE;
	return 0;
}

/*
 * Every counter of the hw_counters table, by the same names: a device's
 * (@stats = dev->stats) or what one QP contributed to them (qp->stats).
 */
static int mrxe_nl_put_stats(struct sk_buff *skb, const atomic64_t *st)
{
	struct nlattr *stats, *stat;
	unsigned int i;

	stats = nla_nest_start(skb, MRXE_ATTR_STATS);
	if (!stats)
		return -EMSGSIZE;
	for (i = 0; i < MRXE_NUM_COUNTERS; i++) {
		stat = nla_nest_start(skb, MRXE_ATTR_STAT);
		if (!stat)
			goto err;
		if (nla_put_string(skb, MRXE_ATTR_STAT_NAME,
				   mrxe_counter_name(i)) ||
		    nla_put_u64_64bit(skb, MRXE_ATTR_STAT_VALUE,
				      atomic64_read(&st[i]),
				      MRXE_ATTR_PAD)) {
			nla_nest_cancel(skb, stat);
			goto err;
		}
		nla_nest_end(skb, stat);
	}
	nla_nest_end(skb, stats);
	return 0;
err:
	nla_nest_cancel(skb, stats);
	return -EMSGSIZE;
}

static int mrxe_nl_fill_dev(struct sk_buff *skb, struct mrxe_dev *dev,
			    u32 portid, u32 seq, int flags)
{
	struct mrxe_dev_cfg cfg;
	u8 port_state;
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &mrxe_nl_family, flags,
			  MRXE_CMD_DEV_GET);
	if (!hdr)
		return -EMSGSIZE;
	mrxe_nl_cfg_read(dev, &cfg);
	spin_lock_bh(&dev->port_lock);
	port_state = dev->port_attr.state;
	spin_unlock_bh(&dev->port_lock);

	if (mrxe_nl_put_dev_id(skb, dev) ||
	    nla_put_string(skb, MRXE_ATTR_NETDEV_NAME, dev->ndev->name) ||
	    nla_put_u8(skb, MRXE_ATTR_PORT_STATE, port_state) ||
	    nla_put_u32(skb, MRXE_ATTR_NUM_QPS, atomic_read(&dev->num_qp)) ||
	    mrxe_nl_put_cfg(skb, &cfg) ||
	    mrxe_nl_put_stats(skb, dev->stats))
		goto err;
	genlmsg_end(skb, hdr);
	return 0;
err:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int mrxe_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mrxe_dev *dev;
	struct sk_buff *msg;
	int err;

	dev = mrxe_nl_dev_get(genl_info_net(info),
			      info->attrs[MRXE_ATTR_IBDEV_NAME], info->extack);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	msg = nlmsg_new(MRXE_NL_MSG_SIZE, GFP_KERNEL);
	if (!msg) {
		NL_SET_ERR_MSG(info->extack, "out of memory for the reply");
		err = -ENOMEM;
		goto out;
	}
	err = mrxe_nl_fill_dev(msg, dev, info->snd_portid, info->snd_seq, 0);
	if (err) {
		NL_SET_ERR_MSG(info->extack, "reply does not fit a message");
		nlmsg_free(msg);
		goto out;
	}
	err = genlmsg_reply(msg, info);
out:
	ib_device_put(&dev->ib_dev);
	return err;
}

/*
 * Dumps get skbs of at least MRXE_NL_MSG_SIZE: netlink otherwise falls
 * back to NLMSG_GOODSIZE (one page) when the larger allocation it tries
 * first (__GFP_NORETRY) fails, and a QP with 8 paths does not fit a page:
 * the dump then ended without that QP, so `qp show` missed it at random.
 */
static int mrxe_nl_dump_start(struct netlink_callback *cb)
{
	BUILD_BUG_ON(256 + MRXE_MAX_PATHS * (64 + 10 * 48) +
		     MRXE_NUM_COUNTERS * 64 > MRXE_NL_MSG_SIZE);
	cb->min_dump_alloc = MRXE_NL_MSG_SIZE;
	return 0;
}

/* cb->args[0]: position in mrxe_dev_list of the next device to dump. */
static int mrxe_nl_dev_get_dumpit(struct sk_buff *skb,
				  struct netlink_callback *cb)
{
	struct net *net = sock_net(skb->sk);
	struct mrxe_dev *dev;
	long idx = 0;
	int err;

	mutex_lock(&mrxe_dev_mutex);
	list_for_each_entry(dev, &mrxe_dev_list, list) {
		if (idx < cb->args[0] || !mrxe_nl_dev_in_net(dev, net)) {
			idx++;
			continue;
		}
		if (!ib_device_try_get(&dev->ib_dev)) {
			idx++;
			continue;
		}
		err = mrxe_nl_fill_dev(skb, dev, NETLINK_CB(cb->skb).portid,
				       cb->nlh->nlmsg_seq, NLM_F_MULTI);
		ib_device_put(&dev->ib_dev);
		if (err)
			break;
		idx++;
	}
	mutex_unlock(&mrxe_dev_mutex);
	cb->args[0] = idx;
	return skb->len;
}

static int mrxe_nl_dev_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **tb = info->attrs;
	struct mrxe_dev_cfg cfg;
	struct mrxe_dev *dev;
	int err;

	if (!tb[MRXE_ATTR_TRANSPORT_MODE] && !tb[MRXE_ATTR_NUM_PATHS] &&
	    !tb[MRXE_ATTR_WINDOW] &&
	    !tb[MRXE_ATTR_ECN] && !tb[MRXE_ATTR_CNP_INTERVAL_US] &&
	    !mrxe_nl_has_cc(tb)) {
		NL_SET_ERR_MSG(extack, "nothing to set: give mode, paths, window, ecn, cnp-interval or a cc parameter");
		return -EINVAL;
	}
	dev = mrxe_nl_dev_get(genl_info_net(info), tb[MRXE_ATTR_IBDEV_NAME],
			      extack);
	if (IS_ERR(dev))
		return PTR_ERR(dev);

	/* check everything before changing anything: a refused set is a no-op */
	spin_lock_bh(&dev->cfg_lock);
	cfg = dev->cfg;
	err = mrxe_nl_cc_set(tb, &cfg, extack);
	if (err) {
		spin_unlock_bh(&dev->cfg_lock);
		ib_device_put(&dev->ib_dev);
		return err;
	}
	dev->cfg.cc = cfg.cc;
	dev->cfg.dcqcn = cfg.dcqcn;
	if (tb[MRXE_ATTR_TRANSPORT_MODE])
		dev->cfg.transport_mode =
			nla_get_u32(tb[MRXE_ATTR_TRANSPORT_MODE]);
	if (tb[MRXE_ATTR_NUM_PATHS])
		dev->cfg.num_paths = nla_get_u32(tb[MRXE_ATTR_NUM_PATHS]);
	if (tb[MRXE_ATTR_WINDOW])
		dev->cfg.window = nla_get_u32(tb[MRXE_ATTR_WINDOW]);
	if (tb[MRXE_ATTR_ECN])
		dev->cfg.ecn = nla_get_u8(tb[MRXE_ATTR_ECN]);
	if (tb[MRXE_ATTR_CNP_INTERVAL_US])
		dev->cfg.cnp_interval_us =
			nla_get_u32(tb[MRXE_ATTR_CNP_INTERVAL_US]);
	cfg = dev->cfg;
	spin_unlock_bh(&dev->cfg_lock);

	mrxe_nl_dev_config_event(dev, &cfg);
	ib_device_put(&dev->ib_dev);
	return 0;
}

/*
 * The QP's current mode: an `auto` QP reports standard until one of its
 * directions upgraded in-band (pipeline flags, read as a snapshot).
 */
static u32 mrxe_nl_qp_mode(struct mrxe_qp *qp)
{
	return READ_ONCE(qp->pipe.meta_tx) || READ_ONCE(qp->pipe.meta_rx) ?
	       MRXE_NL_TRANSPORT_METAROCE : MRXE_NL_TRANSPORT_STANDARD;
}

static int mrxe_nl_put_paths(struct sk_buff *skb, struct mrxe_qp *qp)
{
	struct nlattr *paths, *path;
	int n;

	paths = nla_nest_start(skb, MRXE_ATTR_PATHS);
	if (!paths)
		return -EMSGSIZE;
	/* MetaRoCE sender: its path set (mrxe_path_glue.c) */
	n = mrxe_path_glue_fill(skb, qp);
	if (n < 0) {
		nla_nest_cancel(skb, paths);
		return n;
	}
	if (n) {
		nla_nest_end(skb, paths);
		return 0;
	}
	/* Standard mode: one path, the QP's fixed UDP source port. */
	path = nla_nest_start(skb, MRXE_ATTR_PATH);
	if (!path ||
	    nla_put_u32(skb, MRXE_ATTR_PATH_INDEX, 0) ||
	    nla_put_u16(skb, MRXE_ATTR_PATH_SPORT, READ_ONCE(qp->pipe.sport)) ||
	    nla_put_u32(skb, MRXE_ATTR_PATH_STATE, MRXE_PATH_ACTIVE)) {
		nla_nest_cancel(skb, paths);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, path);
	nla_nest_end(skb, paths);
	return 0;
}

static int mrxe_nl_put_peer(struct sk_buff *skb, const struct mrxe_av *av)
{
	if (av->network_type == RDMA_NETWORK_IPV4)
		return nla_put_in_addr(skb, MRXE_ATTR_PEER_ADDR4,
				       av->daddr.v4.sin_addr.s_addr);
	if (av->network_type == RDMA_NETWORK_IPV6)
		return nla_put_in6_addr(skb, MRXE_ATTR_PEER_ADDR6,
					&av->daddr.v6.sin6_addr);
	return 0;	/* no address vector (UD, or before RTR) */
}

/*
 * One QP message; @cmd is MRXE_CMD_QP_GET (state) or MRXE_CMD_PATH_GET.
 * Caller keeps the QP alive (RCU or a reference).
 */
static int mrxe_nl_fill_qp(struct sk_buff *skb, struct mrxe_dev *dev,
			   struct mrxe_qp *qp, u8 cmd, u32 portid, u32 seq,
			   int flags)
{
	enum ib_qp_state state;
	unsigned long irqf;
	struct mrxe_av av;
	u32 dest_qpn;
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &mrxe_nl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	spin_lock_irqsave(&qp->state_lock, irqf);
	state = qp->state;
	dest_qpn = qp->attr.dest_qp_num;
	av = qp->av;
	spin_unlock_irqrestore(&qp->state_lock, irqf);

	if (mrxe_nl_put_dev_id(skb, dev) ||
	    nla_put_u32(skb, MRXE_ATTR_QPN, qp->ibqp.qp_num) ||
	    nla_put_u32(skb, MRXE_ATTR_NUM_PATHS, qp->num_paths))
		goto err;
	if (cmd == MRXE_CMD_QP_GET && qp->pipe.meta &&
	    nla_put_u32(skb, MRXE_ATTR_WINDOW, qp->window))
		goto err;
	if (cmd == MRXE_CMD_QP_GET &&
	    (nla_put_u8(skb, MRXE_ATTR_QP_TYPE, qp->ibqp.qp_type) ||
	     nla_put_u8(skb, MRXE_ATTR_QP_STATE, state) ||
	     nla_put_u32(skb, MRXE_ATTR_TRANSPORT_MODE,
			 mrxe_nl_qp_mode(qp)) ||
	     nla_put_u32(skb, MRXE_ATTR_DEST_QPN, dest_qpn) ||
	     mrxe_nl_put_peer(skb, &av) ||
	     nla_put_u32(skb, MRXE_ATTR_SQ_PSN, READ_ONCE(qp->req.psn)) ||
	     nla_put_u32(skb, MRXE_ATTR_COMP_PSN, READ_ONCE(qp->comp.psn)) ||
	     nla_put_u32(skb, MRXE_ATTR_RQ_PSN, READ_ONCE(qp->resp.psn)) ||
	     nla_put_u64_64bit(skb, MRXE_ATTR_QP_RATE_KBPS,
			       READ_ONCE(qp->cc.rate_kbps), MRXE_ATTR_PAD) ||
	     nla_put_u8(skb, MRXE_ATTR_QP_PRIO, READ_ONCE(qp->pipe.prio))))
		goto err;
	if (cmd == MRXE_CMD_QP_GET && mrxe_meta_est_fill(skb, qp))
		goto err;
	if (mrxe_nl_put_paths(skb, qp))
		goto err;
	if (cmd == MRXE_CMD_QP_GET && mrxe_nl_put_stats(skb, qp->stats))
		goto err;
	genlmsg_end(skb, hdr);
	return 0;
err:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* QP_GET and PATH_GET with a QPN: one QP. */
static int mrxe_nl_qp_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **tb = info->attrs;
	struct mrxe_dev *dev;
	struct mrxe_qp *qp;
	struct sk_buff *msg;
	int err;

	if (!tb[MRXE_ATTR_QPN]) {
		NL_SET_ERR_MSG(info->extack, "QP number (MRXE_ATTR_QPN) is required");
		return -EINVAL;
	}
	dev = mrxe_nl_dev_get(genl_info_net(info), tb[MRXE_ATTR_IBDEV_NAME],
			      info->extack);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	qp = mrxe_qp_get(dev, nla_get_u32(tb[MRXE_ATTR_QPN]));
	if (!qp) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[MRXE_ATTR_QPN],
				    "no QP with this number on the device");
		err = -ENOENT;
		goto out_dev;
	}
	msg = nlmsg_new(MRXE_NL_MSG_SIZE, GFP_KERNEL);
	if (!msg) {
		NL_SET_ERR_MSG(info->extack, "out of memory for the reply");
		err = -ENOMEM;
		goto out_qp;
	}
	err = mrxe_nl_fill_qp(msg, dev, qp, info->genlhdr->cmd,
			      info->snd_portid, info->snd_seq, 0);
	if (err) {
		NL_SET_ERR_MSG(info->extack, "reply does not fit a message");
		nlmsg_free(msg);
		goto out_qp;
	}
	err = genlmsg_reply(msg, info);
out_qp:
	mrxe_qp_put(qp);
out_dev:
	ib_device_put(&dev->ib_dev);
	return err;
}

/*
 * Every QP of every device in the caller's namespace, or of the device
 * named by MRXE_ATTR_IBDEV_NAME.  cb->args[0]: device position in
 * mrxe_dev_list, cb->args[1]: next QPN on that device.
 */
static int mrxe_nl_qp_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	const struct genl_dumpit_info *info = genl_dumpit_info(cb);
	struct nlattr *name = mrxe_genl_dump_attrs(info)[MRXE_ATTR_IBDEV_NAME];
	struct net *net = sock_net(skb->sk);
	unsigned long qpn;
	struct mrxe_dev *dev;
	struct mrxe_qp *qp;
	long idx = 0;
	int err = 0;

	mutex_lock(&mrxe_dev_mutex);
	list_for_each_entry(dev, &mrxe_dev_list, list) {
		if (idx < cb->args[0] || !mrxe_nl_dev_in_net(dev, net) ||
		    !ib_device_try_get(&dev->ib_dev)) {
			idx++;
			continue;
		}
		if (name && nla_strcmp(name, dev_name(&dev->ib_dev.dev))) {
			ib_device_put(&dev->ib_dev);
			idx++;
			continue;
		}
		rcu_read_lock();
		xa_for_each_start(&dev->qp_xa, qpn, qp, cb->args[1]) {
			if (!refcount_inc_not_zero(&qp->ref))
				continue;
			err = mrxe_nl_fill_qp(skb, dev, qp, MRXE_CMD_QP_GET,
					      NETLINK_CB(cb->skb).portid,
					      cb->nlh->nlmsg_seq, NLM_F_MULTI);
			mrxe_qp_put(qp);
			if (err) {
				cb->args[1] = qpn;
				break;
			}
		}
		rcu_read_unlock();
		ib_device_put(&dev->ib_dev);
		if (err)
			break;
		cb->args[1] = 0;
		idx++;
	}
	mutex_unlock(&mrxe_dev_mutex);
	cb->args[0] = idx;
	/* one QP larger than an empty skb: fail the dump, never skip it */
	if (err && !skb->len)
		return err;
	return skb->len;
}

static const struct genl_ops mrxe_nl_ops[] = {
	{
		.cmd = MRXE_CMD_DEV_GET,
		.doit = mrxe_nl_dev_get_doit,
		.start = mrxe_nl_dump_start,
		.dumpit = mrxe_nl_dev_get_dumpit,
	},
	{
		.cmd = MRXE_CMD_DEV_SET,
		.flags = GENL_ADMIN_PERM,
		.doit = mrxe_nl_dev_set_doit,
	},
	{
		.cmd = MRXE_CMD_QP_GET,
		.doit = mrxe_nl_qp_doit,
		.start = mrxe_nl_dump_start,
		.dumpit = mrxe_nl_qp_dumpit,
	},
	{
		.cmd = MRXE_CMD_PATH_GET,
		.doit = mrxe_nl_qp_doit,
	},
};

static struct genl_family mrxe_nl_family __ro_after_init = {
	.name = MRXE_GENL_NAME,
	.version = MRXE_GENL_VERSION,
	.maxattr = MRXE_ATTR_MAX,
	.policy = mrxe_nl_policy,
	.netnsok = true,
	.module = THIS_MODULE,
	.ops = mrxe_nl_ops,
	.n_ops = ARRAY_SIZE(mrxe_nl_ops),
	.mcgrps = mrxe_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(mrxe_nl_mcgrps),
};

/* ---- events ---- */

static struct sk_buff *mrxe_nl_event_new(struct mrxe_dev *dev, u32 type,
					 gfp_t gfp, void **hdr)
{
	struct sk_buff *msg;

	if (!genl_has_listeners(&mrxe_nl_family, dev_net(dev->ndev),
				MRXE_NL_GRP_EVENTS))
		return NULL;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, gfp);
	if (!msg)
		return NULL;
	*hdr = genlmsg_put(msg, 0, 0, &mrxe_nl_family, 0, MRXE_CMD_EVENT);
	if (!*hdr || nla_put_u32(msg, MRXE_ATTR_EVENT_TYPE, type) ||
	    mrxe_nl_put_dev_id(msg, dev)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static void mrxe_nl_event_send(struct mrxe_dev *dev, struct sk_buff *msg,
			       void *hdr, gfp_t gfp)
{
	genlmsg_end(msg, hdr);
	genlmsg_multicast_netns(&mrxe_nl_family, dev_net(dev->ndev), msg, 0,
				MRXE_NL_GRP_EVENTS, gfp);
}

void mrxe_nl_qp_error_event(struct mrxe_qp *qp, enum ib_qp_state old)
{
	struct mrxe_dev *dev = qp_dev(qp);
	struct sk_buff *msg;
	void *hdr;

	msg = mrxe_nl_event_new(dev, MRXE_EVENT_QP_ERROR, GFP_ATOMIC, &hdr);
	if (!msg)
		return;
	if (nla_put_u32(msg, MRXE_ATTR_QPN, qp->ibqp.qp_num) ||
	    nla_put_u8(msg, MRXE_ATTR_QP_TYPE, qp->ibqp.qp_type) ||
	    nla_put_u8(msg, MRXE_ATTR_QP_OLD_STATE, old)) {
		nlmsg_free(msg);
		return;
	}
	mrxe_nl_event_send(dev, msg, hdr, GFP_ATOMIC);
}

void mrxe_nl_dev_config_event(struct mrxe_dev *dev,
			      const struct mrxe_dev_cfg *cfg)
{
	struct sk_buff *msg;
	void *hdr;

	msg = mrxe_nl_event_new(dev, MRXE_EVENT_DEV_CONFIG, GFP_KERNEL, &hdr);
	if (!msg)
		return;
	if (mrxe_nl_put_cfg(msg, cfg)) {
		nlmsg_free(msg);
		return;
	}
	mrxe_nl_event_send(dev, msg, hdr, GFP_KERNEL);
}

int __init mrxe_nl_init(void)
{
	return genl_register_family(&mrxe_nl_family);
}

void mrxe_nl_exit(void)
{
	genl_unregister_family(&mrxe_nl_family);
}
