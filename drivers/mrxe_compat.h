/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The one place where kernel-API differences between supported lines
 * (6.1 now, 6.12 next) are bridged.  Everything else calls these wrappers.
 */
#ifndef MRXE_COMPAT_H
#define MRXE_COMPAT_H

#include <linux/version.h>

#endif /* MRXE_COMPAT_H */
