// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * UD multicast: attach/detach of QPs to multicast groups (IBA 11.3.1,
 * 11.3.2) and delivery of packets sent to QPN 0xFFFFFF (IBA 10.5.2.4,
 * 9.6.1.4: a copy to every QP of the group, each subject to its own Q_Key
 * check).  For RoCEv2 the group is named by the destination IP address
 * (MGID = IPv6 address or IPv4-mapped IPv6 address) and the MLID is
 * ignored (IBA A17.5.6).
 *
 * A group exists while at least one QP is attached.  While it exists the
 * bound netdev is a member of the IP multicast group (IGMP/MLD join, which
 * also adds the mapped Ethernet address to the netdev's filter with
 * dev_mc_add), so the IP stack delivers the group's packets to our UDP
 * socket even without rdma_cm's own join.
 *
 * Locking (fields in struct mrxe_dev): mcg_mutex serialises the writers
 * (attach, detach, QP cleanup) and the IP joins; mcg_lock protects
 * mcg_tree and the groups' QP arrays against the receive path.  A QP in a
 * group's array is valid while mcg_lock is held: destroy_qp detaches it
 * (under mcg_lock) before the QP's memory can go away.
 */
#include "mrxe_compat.h"
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>

#include "mrxe_dp.h"
#include "mrxe_verbs.h"

struct mrxe_mcg {
	struct rb_node		node;		/* in dev->mcg_tree */
	struct list_head	free_link;	/* emptied, QP cleanup */
	union ib_gid		mgid;
	u32			nqp;		/* attached QPs in qp[] */
	struct mrxe_qp		*qp[MRXE_MAX_MCAST_QP_ATTACH];
};

void mrxe_mcast_init(struct mrxe_dev *dev)
{
	mutex_init(&dev->mcg_mutex);
	spin_lock_init(&dev->mcg_lock);
	dev->mcg_tree = RB_ROOT;
	dev->num_mcg = 0;
	dev->num_mcg_attach = 0;
}

/* Under mcg_mutex or mcg_lock. */
static struct mrxe_mcg *mrxe_mcg_find(struct mrxe_dev *dev,
				      const union ib_gid *mgid)
{
	struct rb_node *n = dev->mcg_tree.rb_node;

	while (n) {
		struct mrxe_mcg *mcg = rb_entry(n, struct mrxe_mcg, node);
		int c = memcmp(mgid->raw, mcg->mgid.raw, sizeof(mgid->raw));

		if (c < 0)
			n = n->rb_left;
		else if (c > 0)
			n = n->rb_right;
		else
			return mcg;
	}
	return NULL;
}

/* Under mcg_mutex and mcg_lock; the MGID is not in the tree. */
static void mrxe_mcg_insert(struct mrxe_dev *dev, struct mrxe_mcg *new)
{
	struct rb_node **link = &dev->mcg_tree.rb_node, *parent = NULL;

	while (*link) {
		struct mrxe_mcg *mcg = rb_entry(*link, struct mrxe_mcg, node);

		parent = *link;
		if (memcmp(new->mgid.raw, mcg->mgid.raw,
			   sizeof(new->mgid.raw)) < 0)
			link = &parent->rb_left;
		else
			link = &parent->rb_right;
	}
	rb_link_node(&new->node, parent, link);
	rb_insert_color(&new->node, &dev->mcg_tree);
}

static int mrxe_mcg_find_qp(const struct mrxe_mcg *mcg,
			    const struct mrxe_qp *qp)
{
	u32 i;

	for (i = 0; i < mcg->nqp; i++)
		if (mcg->qp[i] == qp)
			return i;
	return -1;
}

/*
 * Join (or leave) the IP multicast group of @mgid on the bound netdev:
 * IGMP for an IPv4-mapped MGID, MLD otherwise.  Both paths also program
 * the netdev's multicast MAC filter (ip_eth_mc_map / ipv6_eth_mc_map
 * address via dev_mc_add/dev_mc_del).  Under mcg_mutex; takes rtnl_lock.
 */
static int mrxe_mcg_ip(struct mrxe_dev *dev, const union ib_gid *mgid,
		       bool join)
{
	const struct in6_addr *a6 = (const struct in6_addr *)mgid->raw;
	struct net_device *ndev = dev->ndev;
	int err = 0;

	rtnl_lock();
	if (ipv6_addr_v4mapped(a6)) {
		struct in_device *in_dev = __in_dev_get_rtnl(ndev);

		if (!in_dev)
			err = -ENODEV;	/* no IPv4 on the netdev (any more) */
		else if (join)
			ip_mc_inc_group(in_dev, a6->s6_addr32[3]);
		else
			ip_mc_dec_group(in_dev, a6->s6_addr32[3]);
	} else if (IS_ENABLED(CONFIG_IPV6)) {
		err = join ? ipv6_dev_mc_inc(ndev, a6) :
			     ipv6_dev_mc_dec(ndev, a6);
	} else {
		err = -EAFNOSUPPORT;
	}
	rtnl_unlock();
	return err;
}

/* Remove qp[idx] from @mcg; under mcg_mutex and mcg_lock. */
static void mrxe_mcg_del_qp(struct mrxe_dev *dev, struct mrxe_mcg *mcg,
			    u32 idx)
{
	mcg->qp[idx] = mcg->qp[--mcg->nqp];
	mcg->qp[mcg->nqp] = NULL;
	dev->num_mcg_attach--;
	if (!mcg->nqp) {
		rb_erase(&mcg->node, &dev->mcg_tree);
		dev->num_mcg--;
	}
}

/* An emptied group, already out of the tree: leave the IP group, free. */
static void mrxe_mcg_free(struct mrxe_dev *dev, struct mrxe_mcg *mcg)
{
	int err = mrxe_mcg_ip(dev, &mcg->mgid, false);

	/* the netdev may have lost its address family meanwhile */
	if (err && err != -ENODEV)
		mrxe_err_dev(dev, "leaving %pI6: %d\n", mcg->mgid.raw, err);
	kfree(mcg);
}

static int mrxe_mcast_check(struct ib_qp *ibqp, const union ib_gid *mgid)
{
	/* IBA 10.8.4 / 11.3.1: only unreliable datagram QPs join groups */
	if (ibqp->qp_type != IB_QPT_UD)
		return -EINVAL;
	if (!rdma_is_multicast_addr((struct in6_addr *)mgid->raw))
		return -EINVAL;
	return 0;
}

/*
 * ib_device_ops.attach_mcast (IBA 11.3.1).  Attaching a QP that is already
 * attached succeeds without a second attachment, as stock rxe does (and
 * uverbs never passes a duplicate down).
 */
int mrxe_attach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid)
{
	struct mrxe_dev *dev = to_mdev(ibqp->device);
	struct mrxe_qp *qp = to_mqp(ibqp);
	struct mrxe_mcg *mcg, *new = NULL;
	int err;

	err = mrxe_mcast_check(ibqp, mgid);
	if (err)
		return err;

	mutex_lock(&dev->mcg_mutex);
	if (dev->num_mcg_attach >= MRXE_MAX_TOT_MCAST_QP_ATTACH) {
		err = -ENOMEM;
		goto out;
	}
	mcg = mrxe_mcg_find(dev, mgid);
	if (mcg) {
		if (mrxe_mcg_find_qp(mcg, qp) >= 0)
			goto out;
		if (mcg->nqp >= MRXE_MAX_MCAST_QP_ATTACH) {
			err = -ENOMEM;
			goto out;
		}
		spin_lock_bh(&dev->mcg_lock);
		mcg->qp[mcg->nqp++] = qp;
		dev->num_mcg_attach++;
		spin_unlock_bh(&dev->mcg_lock);
		goto out;
	}

	if (dev->num_mcg >= MRXE_MAX_MCAST_GRP) {
		err = -ENOMEM;
		goto out;
	}
	new = kzalloc(sizeof(*new), GFP_KERNEL);
	if (!new) {
		err = -ENOMEM;
		goto out;
	}
	new->mgid = *mgid;
	err = mrxe_mcg_ip(dev, mgid, true);
	if (err)
		goto err_free;
	new->qp[0] = qp;
	new->nqp = 1;
	spin_lock_bh(&dev->mcg_lock);
	mrxe_mcg_insert(dev, new);
	dev->num_mcg++;
	dev->num_mcg_attach++;
	spin_unlock_bh(&dev->mcg_lock);
	goto out;

err_free:
	kfree(new);
out:
	mutex_unlock(&dev->mcg_mutex);
	return err;
}

/* ib_device_ops.detach_mcast (IBA 11.3.2): -EINVAL if not attached. */
int mrxe_detach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid)
{
	struct mrxe_dev *dev = to_mdev(ibqp->device);
	struct mrxe_qp *qp = to_mqp(ibqp);
	struct mrxe_mcg *mcg;
	int err, idx;

	err = mrxe_mcast_check(ibqp, mgid);
	if (err)
		return err;

	mutex_lock(&dev->mcg_mutex);
	mcg = mrxe_mcg_find(dev, mgid);
	idx = mcg ? mrxe_mcg_find_qp(mcg, qp) : -1;
	if (idx < 0) {
		err = -EINVAL;
		goto out;
	}
	spin_lock_bh(&dev->mcg_lock);
	mrxe_mcg_del_qp(dev, mcg, idx);
	spin_unlock_bh(&dev->mcg_lock);
	if (!mcg->nqp)
		mrxe_mcg_free(dev, mcg);
out:
	mutex_unlock(&dev->mcg_mutex);
	return err;
}

/*
 * destroy_qp: detach @qp from every group.  uverbs detaches user QPs
 * itself and ib_destroy_qp refuses kernel QPs that are still attached, so
 * this normally finds nothing; it guarantees that no group keeps a pointer
 * to a destroyed QP.
 */
void mrxe_mcast_qp_cleanup(struct mrxe_qp *qp)
{
	struct mrxe_dev *dev = qp_dev(qp);
	struct mrxe_mcg *mcg, *tmp;
	LIST_HEAD(empty);
	struct rb_node *n;
	int idx;

	if (qp->ibqp.qp_type != IB_QPT_UD)
		return;

	mutex_lock(&dev->mcg_mutex);
	if (!dev->num_mcg_attach)
		goto out;
	spin_lock_bh(&dev->mcg_lock);
	for (n = rb_first(&dev->mcg_tree); n; ) {
		mcg = rb_entry(n, struct mrxe_mcg, node);
		n = rb_next(n);
		idx = mrxe_mcg_find_qp(mcg, qp);
		if (idx < 0)
			continue;
		mrxe_mcg_del_qp(dev, mcg, idx);
		if (!mcg->nqp)
			list_add(&mcg->free_link, &empty);
	}
	spin_unlock_bh(&dev->mcg_lock);
	/* IP leave may sleep (rtnl): outside mcg_lock */
	list_for_each_entry_safe(mcg, tmp, &empty, free_link)
		mrxe_mcg_free(dev, mcg);
out:
	mutex_unlock(&dev->mcg_mutex);
}

/*
 * dealloc_driver: every QP is gone, so every group is gone too; free what
 * a bug may have left behind (no IP leave: the netdev's groups are torn
 * down with the netdev or by the QP cleanup that already ran).
 */
void mrxe_mcast_cleanup(struct mrxe_dev *dev)
{
	struct rb_node *n;

	WARN_ON(!RB_EMPTY_ROOT(&dev->mcg_tree));
	while ((n = rb_first(&dev->mcg_tree))) {
		rb_erase(n, &dev->mcg_tree);
		kfree(rb_entry(n, struct mrxe_mcg, node));
	}
	mutex_destroy(&dev->mcg_mutex);
}

/* Queue a request for the QP's responder, as mrxe_rcv() does for UD. */
static void mrxe_mcast_queue(struct mrxe_dev *dev, struct mrxe_qp *qp,
			     struct sk_buff *skb)
{
	if (unlikely(!mrxe_pipe_enqueue(qp, &qp->resp.rxq, MRXE_RXQ_MAX,
					skb))) {
		mrxe_counter_inc(dev, MRXE_CNT_RCV_DROPPED);
		kfree_skb(skb);
	}
}

void mrxe_mcast_rcv(struct mrxe_dev *dev, struct sk_buff *skb, const u8 *l3,
		    bool ipv6, u32 len)
{
	struct mrxe_qp *qps[MRXE_MAX_MCAST_QP_ATTACH];
	struct mrxe_pkt_info *pi = mrxe_pkt(skb);
	struct mrxe_mcg *mcg;
	struct sk_buff *s;
	union ib_gid mgid;
	u32 i, n = 0;

	/* IBA 9.6.1.4 / 10.5.2.4: QPN 0xFFFFFF is for UD packets only */
	if (unlikely((pi->opcode & MRXE_TR_MASK) != MRXE_TR_UD))
		goto drop;
	if (ipv6)
		memcpy(mgid.raw, l3 + offsetof(struct ipv6hdr, daddr),
		       sizeof(mgid.raw));
	else
		ipv6_addr_set_v4mapped(get_unaligned((__be32 *)
				(l3 + offsetof(struct iphdr, daddr))),
				(struct in6_addr *)mgid.raw);
	/* QPN 0xFFFFFF to a unicast address is malformed */
	if (unlikely(!rdma_is_multicast_addr((struct in6_addr *)mgid.raw)))
		goto drop;
	if (unlikely(pskb_trim(skb, len)))
		goto drop;

	spin_lock_bh(&dev->mcg_lock);
	mcg = mrxe_mcg_find(dev, &mgid);
	for (i = 0; mcg && i < mcg->nqp; i++)
		if (refcount_inc_not_zero(&mcg->qp[i]->ref))
			qps[n++] = mcg->qp[i];
	spin_unlock_bh(&dev->mcg_lock);
	if (!n)
		goto drop;	/* no member here (any more) */

	mrxe_counter_inc(dev, MRXE_CNT_RCVD_PKTS);
	mrxe_counter_add(dev, MRXE_CNT_RCVD_BYTES, skb->len);
	for (i = 0; i < n; i++) {
		/* clones share the (read-only) data and keep skb->cb */
		s = i == n - 1 ? skb : skb_clone(skb, GFP_ATOMIC);
		if (likely(s))
			mrxe_mcast_queue(dev, qps[i], s);
		else
			mrxe_counter_inc(dev, MRXE_CNT_RCV_DROPPED);
		mrxe_qp_put(qps[i]);
	}
	return;

drop:
	mrxe_counter_inc(dev, MRXE_CNT_RCV_DROPPED);
	kfree_skb(skb);
}
