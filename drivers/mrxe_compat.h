/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The one place where kernel-API differences between supported lines
 * (Debian 12's 6.1 and Debian 13's / bookworm-backports' 6.12) are bridged.
 * Version checks live here only; everything else calls these wrappers.
 */
#ifndef MRXE_COMPAT_H
#define MRXE_COMPAT_H

#include <linux/version.h>
#include <net/inet_sock.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <net/genetlink.h>

/* 6.12 moved <asm/unaligned.h> to <linux/unaligned.h>. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * ib_device_ops.create_cq: 6.11 passes the uverbs attribute bundle (NULL
 * for kernel users) instead of the driver udata.  The ops table points at
 * mrxe_create_cq_op, which hands mrxe_create_cq() its udata either way.
 */
int mrxe_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata);
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
static inline int mrxe_create_cq_op(struct ib_cq *ibcq,
				    const struct ib_cq_init_attr *attr,
				    struct uverbs_attr_bundle *attrs)
{
	return mrxe_create_cq(ibcq, attr, attrs ? &attrs->driver_udata : NULL);
}
#else
#define mrxe_create_cq_op mrxe_create_cq
#endif

/* 6.6 turned inet_sock's bitfields (mc_loop, ...) into atomic flag bits. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
static inline void mrxe_inet_set_mc_loop(struct sock *sk)
{
	inet_set_bit(MC_LOOP, sk);
}
#else
static inline void mrxe_inet_set_mc_loop(struct sock *sk)
{
	inet_sk(sk)->mc_loop = 1;
}
#endif

/*
 * FLUSH and ATOMIC WRITE (IBA 1.5 Memory Placement Extensions).  The access
 * bits IB_ACCESS_FLUSH_GLOBAL/PERSISTENT (bits 8 and 9) are named since 6.2,
 * uverbs passes them through on 6.1 too; the device capability bits
 * IB_DEVICE_FLUSH_GLOBAL/PERSISTENT and IB_DEVICE_ATOMIC_WRITE (uverbs bits
 * 38..40) only exist since 6.2, so 6.1 advertises nothing: there rdma-core
 * 44 has no ibv_wr_flush/ibv_wr_atomic_write either, and the kernel core
 * of 6.1 does not check MR FLUSH access against device caps.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define MRXE_ACCESS_FLUSH_GLOBAL	IB_ACCESS_FLUSH_GLOBAL
#define MRXE_ACCESS_FLUSH_PERSISTENT	IB_ACCESS_FLUSH_PERSISTENT
#define MRXE_DEVICE_CAP_MPE	(IB_DEVICE_FLUSH_GLOBAL | \
				 IB_DEVICE_FLUSH_PERSISTENT | \
				 IB_DEVICE_ATOMIC_WRITE)
#else
#define MRXE_ACCESS_FLUSH_GLOBAL	BIT(8)
#define MRXE_ACCESS_FLUSH_PERSISTENT	BIT(9)
#define MRXE_DEVICE_CAP_MPE	0
#endif
#define MRXE_QP_ACCESS_FLUSH	(MRXE_ACCESS_FLUSH_GLOBAL | \
				 MRXE_ACCESS_FLUSH_PERSISTENT)

/* 6.2: a dump's genl_dumpit_info carries a genl_info (attrs in ->info). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
static inline struct nlattr **
mrxe_genl_dump_attrs(const struct genl_dumpit_info *info)
{
	return info->info.attrs;
}
#else
static inline struct nlattr **
mrxe_genl_dump_attrs(const struct genl_dumpit_info *info)
{
	return info->attrs;
}
#endif

#endif /* MRXE_COMPAT_H */
