// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mrxe memory windows, type 1 and type 2 (IBA 10.6.7).  Allocation only
 * reserves the rkey; binding is a send queue operation executed by the data
 * path through mrxe_bind_mw() (mrxe_mr.c).
 */
#include "mrxe.h"
#include "mrxe_verbs.h"

int mrxe_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct mrxe_dev *dev = to_mdev(ibmw->device);
	struct mrxe_mw *mw = to_mmw(ibmw);
	u32 key;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (atomic_inc_return(&dev->num_mw) > MRXE_MAX_MW) {
		err = -ENOMEM;
		goto err_count;
	}
	refcount_set(&mw->ref, 1);
	init_completion(&mw->released);
	spin_lock_init(&mw->lock);
	mw->state = MRXE_MR_FREE;

	err = mrxe_key_alloc(dev, NULL, &key);
	if (err)
		goto err_count;
	ibmw->rkey = key;
	xa_store_irq(&dev->mr_xa, key >> 8, xa_tag_pointer(mw, MRXE_MW_TAG),
		     GFP_KERNEL);
	return 0;

err_count:
	atomic_dec(&dev->num_mw);
	return err;
}

int mrxe_dealloc_mw(struct ib_mw *ibmw)
{
	struct mrxe_dev *dev = to_mdev(ibmw->device);
	struct mrxe_mw *mw = to_mmw(ibmw);
	struct mrxe_mr *mr;

	mrxe_key_free(dev, ibmw->rkey);
	/* ib_core frees mw when we return: let RCU lookups finish first. */
	synchronize_rcu();
	mrxe_wait_released(dev, &mw->ref, &mw->released, true, "MW");

	spin_lock_bh(&mw->lock);
	mr = mw->mr;
	mw->mr = NULL;
	mw->qpn = 0;
	mw->state = MRXE_MR_INVALID;
	spin_unlock_bh(&mw->lock);
	if (mr) {
		atomic_dec(&mr->num_mw);
		mrxe_mr_put(mr);
	}
	atomic_dec(&dev->num_mw);
	return 0;
}
