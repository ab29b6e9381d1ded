// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mrxe network glue: per-network-namespace UDP/4791 sockets, transmit with
 * a per-packet UDP source port and optional ECT(0), and the receive entry.
 *
 * Each netns that holds at least one bound netdev gets its own pair of
 * udp_tunnel sockets (IPv4, IPv6), created on the first attach and released
 * on the last detach, so a device bound to a veth inside a namespace
 * receives and routes inside that namespace (stock 6.1 rxe only uses
 * init_net).
 */
#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <net/addrconf.h>
#include <net/dst.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/netns/generic.h>
#include <net/route.h>
#include <net/udp.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "mrxe.h"

struct mrxe_net {
	struct net	*net;
	/* users, sk4 and sk6 are protected by mrxe_net_mutex */
	unsigned int	users;
	struct socket	*sk4;
	struct socket	*sk6;
	/*
	 * ifindex -> mrxe_dev of the devices bound in this netns.  Written
	 * under the xarray lock, read under rcu_read_lock() by the receive
	 * path (mrxe_dev memory is RCU-freed by ib_core).
	 */
	struct xarray	devs;
};

static unsigned int mrxe_net_id __read_mostly;
static DEFINE_MUTEX(mrxe_net_mutex);

static struct mrxe_dev *mrxe_net_find_dev(struct mrxe_net *mnet,
					  struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;
	struct mrxe_dev *dev;

	dev = xa_load(&mnet->devs, ndev->ifindex);
	if (!dev && is_vlan_dev(ndev))
		dev = xa_load(&mnet->devs, vlan_dev_real_dev(ndev)->ifindex);
	if (dev || !(ndev->flags & IFF_LOOPBACK))
		return dev;

	/*
	 * Looped back to one of our own addresses: find the netdev owning
	 * the destination address.
	 */
	if (skb->protocol == htons(ETH_P_IP)) {
		ndev = __ip_dev_find(mnet->net, ip_hdr(skb)->daddr, false);
	} else if (IS_ENABLED(CONFIG_IPV6) &&
		   skb->protocol == htons(ETH_P_IPV6)) {
		ndev = ipv6_stub->ipv6_dev_find(mnet->net,
						&ipv6_hdr(skb)->daddr, NULL);
	} else {
		ndev = NULL;
	}
	if (IS_ERR_OR_NULL(ndev))
		return NULL;
	return xa_load(&mnet->devs, ndev->ifindex);
}

/* udp_tunnel encap_rcv: skb->data at the UDP header, under RCU. */
static int mrxe_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct mrxe_net *mnet = rcu_dereference_sk_user_data(sk);
	struct mrxe_dev *dev;

	if (unlikely(!mnet))
		goto drop;
	dev = mrxe_net_find_dev(mnet, skb);
	/* The reference keeps dev registered until mrxe_rcv() returns. */
	if (!dev || !ib_device_try_get(&dev->ib_dev))
		goto drop;

	if (skb_linearize(skb) || skb->len < sizeof(struct udphdr)) {
		mrxe_counter_inc(dev, MRXE_CNT_RCV_DROPPED);
		ib_device_put(&dev->ib_dev);
		goto drop;
	}
	skb_pull(skb, sizeof(struct udphdr));
	mrxe_rcv(dev, skb);
	ib_device_put(&dev->ib_dev);
	return 0;

drop:
	kfree_skb(skb);
	return 0;
}

static struct socket *mrxe_udp_sock(struct mrxe_net *mnet, bool ipv6)
{
	struct udp_port_cfg ucfg = {};
	struct udp_tunnel_sock_cfg tcfg = {};
	struct socket *sock;
	int err;

	if (ipv6) {
		ucfg.family = AF_INET6;
		ucfg.ipv6_v6only = 1;
		/* RoCEv2 senders (rxe too) leave the UDP checksum zero. */
		ucfg.use_udp6_rx_checksums = false;
	} else {
		ucfg.family = AF_INET;
	}
	ucfg.local_udp_port = htons(MRXE_UDP_PORT);

	err = udp_sock_create(mnet->net, &ucfg, &sock);
	if (err < 0)
		return ERR_PTR(err);

	tcfg.sk_user_data = mnet;
	tcfg.encap_type = 1;
	tcfg.encap_rcv = mrxe_udp_encap_recv;
	setup_udp_tunnel_sock(mnet->net, sock, &tcfg);
	/*
	 * setup_udp_tunnel_sock() turns IPv4 multicast loopback off.  This
	 * socket is also the sender of our packets: a UD send to a multicast
	 * group must reach the QPs of this host attached to it too (IBA
	 * 10.5.2.4, as rxe), which needs ip_mc_output()'s local loopback.
	 */
	if (!ipv6)
		mrxe_inet_set_mc_loop(sock->sk);
	return sock;
}

/* Under mrxe_net_mutex. */
static void mrxe_net_release_socks(struct mrxe_net *mnet)
{
	if (mnet->sk6)
		udp_tunnel_sock_release(mnet->sk6);
	if (mnet->sk4)
		udp_tunnel_sock_release(mnet->sk4);
	mnet->sk6 = NULL;
	mnet->sk4 = NULL;
	/* encap_rcv runs under RCU: let running receivers finish. */
	synchronize_net();
}

/* Under mrxe_net_mutex. */
static int mrxe_net_create_socks(struct mrxe_net *mnet)
{
	struct socket *sock;

	sock = mrxe_udp_sock(mnet, false);
	if (IS_ERR(sock)) {
		pr_err_ratelimited(DRV_NAME ": UDP/%u socket in netns %u: %ld\n",
				   MRXE_UDP_PORT, mnet->net->ns.inum,
				   PTR_ERR(sock));
		return PTR_ERR(sock);
	}
	mnet->sk4 = sock;

	if (!IS_ENABLED(CONFIG_IPV6))
		return 0;
	sock = mrxe_udp_sock(mnet, true);
	if (PTR_ERR_OR_ZERO(sock) == -EAFNOSUPPORT) {
		pr_warn_ratelimited(DRV_NAME ": no IPv6, IPv4 only in netns %u\n",
				    mnet->net->ns.inum);
		return 0;
	}
	if (IS_ERR(sock)) {
		pr_err_ratelimited(DRV_NAME ": UDPv6/%u socket in netns %u: %ld\n",
				   MRXE_UDP_PORT, mnet->net->ns.inum,
				   PTR_ERR(sock));
		mrxe_net_release_socks(mnet);
		return PTR_ERR(sock);
	}
	mnet->sk6 = sock;
	return 0;
}

int mrxe_net_attach(struct mrxe_dev *dev)
{
	struct mrxe_net *mnet = net_generic(dev_net(dev->ndev), mrxe_net_id);
	int err;

	mutex_lock(&mrxe_net_mutex);
	if (!mnet->users) {
		err = mrxe_net_create_socks(mnet);
		if (err)
			goto out;
	}
	err = xa_insert(&mnet->devs, dev->ndev->ifindex, dev, GFP_KERNEL);
	if (err) {
		if (err == -EBUSY)
			err = -EEXIST;
		if (!mnet->users)
			mrxe_net_release_socks(mnet);
		goto out;
	}
	mnet->users++;
	dev->mnet = mnet;
out:
	mutex_unlock(&mrxe_net_mutex);
	return err;
}

void mrxe_net_detach(struct mrxe_dev *dev)
{
	struct mrxe_net *mnet = dev->mnet;
	unsigned long index;
	struct mrxe_dev *d;

	mutex_lock(&mrxe_net_mutex);
	/* ifindex may have changed meanwhile: erase by value. */
	xa_for_each(&mnet->devs, index, d)
		if (d == dev)
			xa_erase(&mnet->devs, index);
	if (!--mnet->users)
		mrxe_net_release_socks(mnet);
	dev->mnet = NULL;
	mutex_unlock(&mrxe_net_mutex);
}

static struct dst_entry *mrxe_route4(struct mrxe_dev *dev,
				     const struct mrxe_av *av, u8 tos)
{
	struct flowi4 fl = {};
	struct rtable *rt;

	fl.flowi4_oif = av->ifindex ?: dev->ndev->ifindex;
	fl.saddr = av->saddr.v4.sin_addr.s_addr;
	fl.daddr = av->daddr.v4.sin_addr.s_addr;
	fl.flowi4_proto = IPPROTO_UDP;
	fl.flowi4_tos = RT_TOS(tos);

	rt = ip_route_output_key(dev->mnet->net, &fl);
	if (IS_ERR(rt))
		return NULL;
	return &rt->dst;
}

static struct dst_entry *mrxe_route6(struct mrxe_dev *dev,
				     const struct mrxe_av *av)
{
#if IS_ENABLED(CONFIG_IPV6)
	struct flowi6 fl6 = {};
	struct dst_entry *dst;

	if (!dev->mnet->sk6)
		return NULL;
	fl6.flowi6_oif = av->ifindex ?: dev->ndev->ifindex;
	fl6.saddr = av->saddr.v6.sin6_addr;
	fl6.daddr = av->daddr.v6.sin6_addr;
	fl6.flowi6_proto = IPPROTO_UDP;

	dst = ipv6_stub->ipv6_dst_lookup_flow(dev->mnet->net,
					      dev->mnet->sk6->sk, &fl6, NULL);
	if (IS_ERR(dst))
		return NULL;
	if (dst->error) {
		dst_release(dst);
		return NULL;
	}
	return dst;
#else
	return NULL;
#endif
}

static void mrxe_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *uh;

	__skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = htons(sport);
	uh->dest = htons(MRXE_UDP_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;	/* ICRC protects the payload (IBA A17.4.3) */
}

/*
 * Per-packet UDP source port: the caller chooses it (multipath entropy,
 * IBA A17.4.2 lets the source port carry flow entropy).  ecn is the ECN
 * codepoint for the IP header, the rest of the traffic class comes from the
 * address vector.  prio becomes skb->priority (mrxe.h, "QP priority").
 */
int mrxe_net_xmit(struct mrxe_dev *dev, const struct mrxe_av *av,
		  struct sk_buff *skb, u16 sport, u8 ecn, u8 prio)
{
	u8 tos = (av->grh.traffic_class & ~INET_ECN_MASK) |
		 (ecn & INET_ECN_MASK);
	struct mrxe_net *mnet = dev->mnet;
	struct dst_entry *dst;
	int err;

	if (unlikely(!mnet || !mnet->sk4))
		goto drop;

	if (av->network_type == RDMA_NETWORK_IPV4) {
		struct iphdr *iph;

		dst = mrxe_route4(dev, av, tos);
		if (!dst)
			goto noroute;
		mrxe_push_udp(skb, sport);
		skb_scrub_packet(skb, false);
		skb_clear_hash(skb);
		skb_dst_set(skb, dst);
		memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
		skb_push(skb, sizeof(*iph));
		skb_reset_network_header(skb);
		iph = ip_hdr(skb);
		iph->version = IPVERSION;
		iph->ihl = sizeof(*iph) >> 2;
		iph->tot_len = htons(skb->len);
		iph->frag_off = htons(IP_DF);
		iph->protocol = IPPROTO_UDP;
		iph->tos = tos;
		iph->saddr = av->saddr.v4.sin_addr.s_addr;
		iph->daddr = av->daddr.v4.sin_addr.s_addr;
		iph->ttl = av->grh.hop_limit ?: ip4_dst_hoplimit(dst);
		__ip_select_ident(mnet->net, iph, 1);
		skb->protocol = htons(ETH_P_IP);
		skb->priority = prio;
		/* ICRC covers the final IP/UDP headers (IBA A17.3.3). */
		mrxe_icrc_generate(skb);
		err = ip_local_out(mnet->net, mnet->sk4->sk, skb);
	} else if (av->network_type == RDMA_NETWORK_IPV6) {
		struct ipv6hdr *ip6h;

		dst = mrxe_route6(dev, av);
		if (!dst)
			goto noroute;
		mrxe_push_udp(skb, sport);
		skb_scrub_packet(skb, false);
		skb_clear_hash(skb);
		skb_dst_set(skb, dst);
		memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
		skb_push(skb, sizeof(*ip6h));
		skb_reset_network_header(skb);
		ip6h = ipv6_hdr(skb);
		ip6_flow_hdr(ip6h, tos,
			     htonl(av->grh.flow_label & MRXE_FLOW_LABEL_MASK));
		ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
		ip6h->nexthdr = IPPROTO_UDP;
		ip6h->hop_limit = av->grh.hop_limit ?:
				  ip6_dst_hoplimit(dst);
		ip6h->saddr = av->saddr.v6.sin6_addr;
		ip6h->daddr = av->daddr.v6.sin6_addr;
		skb->protocol = htons(ETH_P_IPV6);
		skb->priority = prio;
		mrxe_icrc_generate(skb);
		err = ip6_local_out(mnet->net, mnet->sk6->sk, skb);
	} else {
		goto drop;
	}
	/*
	 * NET_XMIT_DROP: a full local queue (veth peer backlog, qdisc) threw
	 * the packet away before it left: -ENOBUFS, worth sending again.
	 * NET_XMIT_CN (queued, congestion) is success; a negative errno
	 * (netfilter, device) is passed on.
	 */
	err = net_xmit_eval(err);
	return err > 0 ? -ENOBUFS : err;

noroute:
	/*
	 * netdev down or address removed: the packet is lost like on the
	 * wire; the requester's retry timer resends it, and a lasting fault
	 * ends in a retry-exceeded completion (retry_cnt).
	 */
	mrxe_counter_inc(dev, MRXE_CNT_XMIT_NO_ROUTE);
	mrxe_err_dev(dev, "no route from %s\n", dev->ndev->name);
drop:
	kfree_skb(skb);
	return -EHOSTUNREACH;
}

/*
 * A kernel socket in the device's namespace for a QP to own its packets
 * with (mrxe_task.c, "Local queue cap"): never bound or connected, it only
 * carries the sk_wmem_alloc accounting of sock_wfree().
 */
struct socket *mrxe_net_qp_sock(struct mrxe_dev *dev)
{
	struct socket *sock;
	int err;

	if (!dev->mnet)
		return ERR_PTR(-ENODEV);
	err = sock_create_kern(dev->mnet->net, AF_INET, SOCK_DGRAM,
			       IPPROTO_UDP, &sock);
	return err ? ERR_PTR(err) : sock;
}

struct sk_buff *mrxe_net_alloc_skb(struct mrxe_dev *dev,
				   const struct mrxe_av *av, int payload_len)
{
	struct sk_buff *skb;

	if (payload_len < 0)
		return NULL;
	skb = alloc_skb(payload_len + MRXE_SKB_HEADROOM, GFP_ATOMIC);
	if (unlikely(!skb))
		return NULL;
	skb_reserve(skb, MRXE_SKB_HEADROOM);
	skb->protocol = av->network_type == RDMA_NETWORK_IPV6 ?
			htons(ETH_P_IPV6) : htons(ETH_P_IP);
	skb_put(skb, payload_len);
	return skb;
}

/*
 * Resolve a RoCEv2 address vector from an AH attribute: the source address
 * comes from the SGID's attribute (a GID entry of our port), the
 * destination from the DGID (IPv4-mapped or IPv6, IBA A17.4.5.1).
 */
int mrxe_av_from_attr(struct mrxe_dev *dev, struct mrxe_av *av,
		      const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;
	struct net_device *ndev;
	union {
		struct sockaddr _s;
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} s, d;
	int type;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	if (rdma_ah_get_port_num(attr) != 1)
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	sgid_attr = grh->sgid_attr;
	if (!sgid_attr)
		return -EINVAL;
	if (sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;		/* RoCEv1 is not supported */

	type = rdma_gid_attr_network_type(sgid_attr);
	if (type != RDMA_NETWORK_IPV4 && type != RDMA_NETWORK_IPV6)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	av->network_type = type;
	/*
	 * A GID of a VLAN device over ours (ib_core adds the IPs of upper
	 * VLAN devices to our table) leaves through that VLAN device, so the
	 * frames carry its 802.1Q tag; routing through our netdev would send
	 * them untagged.
	 */
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(sgid_attr);
	if (!IS_ERR(ndev) && is_vlan_dev(ndev) &&
	    vlan_dev_real_dev(ndev) == dev->ndev)
		av->ifindex = ndev->ifindex;
	rcu_read_unlock();
	/* RoCE carries no SL on the wire: it only selects a priority */
	av->sl = rdma_ah_get_sl(attr) & MRXE_PRIO_MAX;
	av->grh = *grh;
	av->grh.sgid_attr = NULL;	/* not held beyond this call */
	/*
	 * The flow label is 20 bits (RFC 8200, IBA A17.4.5.1); callers may
	 * pass more (UCX sets ~0): the rest would land in the IPv6 version
	 * and traffic class bits and the peer would drop every packet.
	 */
	av->grh.flow_label &= MRXE_FLOW_LABEL_MASK;
	memcpy(av->dmac, attr->roce.dmac, ETH_ALEN);

	rdma_gid2ip(&s._s, &sgid_attr->gid);
	rdma_gid2ip(&d._s, &grh->dgid);
	if (type == RDMA_NETWORK_IPV4) {
		if (s.v4.sin_family != AF_INET || d.v4.sin_family != AF_INET)
			return -EINVAL;
		av->saddr.v4 = s.v4;
		av->daddr.v4 = d.v4;
	} else {
		if (s.v6.sin6_family != AF_INET6 ||
		    d.v6.sin6_family != AF_INET6)
			return -EINVAL;
		av->saddr.v6 = s.v6;
		av->daddr.v6 = d.v6;
	}
	return 0;
}

static int __net_init mrxe_net_ns_init(struct net *net)
{
	struct mrxe_net *mnet = net_generic(net, mrxe_net_id);

	mnet->net = net;
	xa_init(&mnet->devs);
	return 0;
}

/*
 * The namespace is going away.  Its netdevs were unregistered (or moved
 * out) before subsystem exit runs, which queued the unregistration of their
 * mrxe devices; finish those synchronously so the sockets are released
 * while the namespace still exists.
 */
static void __net_exit mrxe_net_ns_exit(struct net *net)
{
	struct mrxe_net *mnet = net_generic(net, mrxe_net_id);
	struct ib_device *ibdev, *last = NULL;
	struct mrxe_dev *dev;

	for (;;) {
		ibdev = NULL;
		mutex_lock(&mrxe_dev_mutex);
		list_for_each_entry(dev, &mrxe_dev_list, list) {
			if (dev->mnet == mnet && &dev->ib_dev != last) {
				ibdev = &dev->ib_dev;
				get_device(&ibdev->dev);
				break;
			}
		}
		mutex_unlock(&mrxe_dev_mutex);
		if (!ibdev)
			break;
		ib_unregister_device(ibdev);
		put_device(&ibdev->dev);
		/* never spin on a device that unregistering did not remove */
		last = ibdev;
	}

	mutex_lock(&mrxe_net_mutex);
	if (WARN_ON(mnet->users)) {
		mnet->users = 0;
		mrxe_net_release_socks(mnet);
	}
	mutex_unlock(&mrxe_net_mutex);
	xa_destroy(&mnet->devs);
}

static struct pernet_operations mrxe_net_ops = {
	.init = mrxe_net_ns_init,
	.exit = mrxe_net_ns_exit,
	.id = &mrxe_net_id,
	.size = sizeof(struct mrxe_net),
};

int mrxe_net_init(void)
{
	return register_pernet_subsys(&mrxe_net_ops);
}

void mrxe_net_exit(void)
{
	unregister_pernet_subsys(&mrxe_net_ops);
}
