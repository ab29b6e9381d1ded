// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mrxe protection domains.  ib_core allocates the object and counts its
 * users (destroying a PD with live MRs/QPs/AHs fails in ib_uverbs with
 * -EBUSY); we only enforce the device limit.
 */
#include "mrxe.h"
#include "mrxe_verbs.h"

int mrxe_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct mrxe_dev *dev = to_mdev(ibpd->device);

	if (atomic_inc_return(&dev->num_pd) > MRXE_MAX_PD) {
		atomic_dec(&dev->num_pd);
		return -ENOMEM;
	}
	atomic_set(&to_mpd(ibpd)->num_mr, 0);
	return 0;
}

int mrxe_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_mdev(ibpd->device)->num_pd);
	return 0;
}
