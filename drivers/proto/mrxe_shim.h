/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The tiny shim that lets drivers/proto/ build both in the kernel and in
 * userspace (GoogleTest).  Only types, byte order and a few helpers: the
 * protocol files must not need anything else from the kernel.
 */
#ifndef MRXE_SHIM_H
#define MRXE_SHIM_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/bitops.h>
#include <linux/minmax.h>
#include <linux/math64.h>
#include <asm/byteorder.h>

#define mrxe_hweight64(x)	hweight64(x)
#define mrxe_div64(a, b)	div64_u64(a, b)
#define mrxe_ffs64(x)		__ffs64(x)	/* x != 0 */
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <endian.h>
/*
 * Take __u64/__be64 & co from the uapi header so that this shim can be
 * combined with <linux/types.h> (pulled in by rdma/mrxe-abi.h and by
 * libc/gtest headers): a second, different typedef would not compile.
 */
#include <linux/types.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;

#define cpu_to_be16(x) htobe16(x)
#define cpu_to_be32(x) htobe32(x)
#define cpu_to_be64(x) htobe64(x)
#define be16_to_cpu(x) be16toh(x)
#define be32_to_cpu(x) be32toh(x)
#define be64_to_cpu(x) be64toh(x)

#ifndef min
#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#endif
#ifndef min_t
#define min_t(t, a, b) ((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define max_t(t, a, b) ((t)(a) > (t)(b) ? (t)(a) : (t)(b))
#endif
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#ifndef BIT
#define BIT(n) (1UL << (n))
#endif

#define mrxe_hweight64(x)	__builtin_popcountll(x)
#define mrxe_div64(a, b)	((u64)(a) / (u64)(b))
#define mrxe_ffs64(x)		__builtin_ctzll(x)	/* x != 0 */
#endif /* __KERNEL__ */

#endif /* MRXE_SHIM_H */
