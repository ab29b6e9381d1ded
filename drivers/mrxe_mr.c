// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mrxe memory regions and the memory access functions of the data path.
 *
 * Keys: lkey == rkey == (index << 8) | key byte; index is the slot in
 * dev->mr_xa, which holds MRs and (tagged with 1) MWs.  A fast-register WR
 * or an MW bind changes only the key byte (IBA 10.6.3.5 / 10.6.7.2).
 *
 * Lifetime: lookups run under rcu_read_lock() and take mr->ref with
 * refcount_inc_not_zero(); dereg erases the index, drops the base
 * reference, waits for the packet path and frees the MR after an RCU grace
 * period (kfree_rcu).  MWs live in ib_core-allocated memory, so their
 * destroy waits for a grace period before returning.
 */
#include <linux/highmem.h>
#include <linux/random.h>
#include <linux/vmalloc.h>

#include "mrxe.h"
#include "mrxe_dp.h"
#include "mrxe_verbs.h"

/* Serialises atomic operations against each other (IBA 9.4.5 atomicity). */
static DEFINE_SPINLOCK(mrxe_atomic_lock);

/*
 * MRXE_ACCESS_FLUSH_GLOBAL: the MR may be the target of an RDMA FLUSH with
 * placement type global visibility (IBA 1.5 MPE).  FLUSH_PERSISTENT is
 * refused in mrxe_check_access(): no mrxe MR is persistent memory.
 */
static const int mrxe_mr_access_mask = IB_ACCESS_LOCAL_WRITE |
	IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
	IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_MW_BIND |
	MRXE_ACCESS_FLUSH_GLOBAL;

int mrxe_key_alloc(struct mrxe_dev *dev, void *entry, u32 *key)
{
	u32 index;
	int err;

	err = xa_alloc_cyclic_irq(&dev->mr_xa, &index, entry,
				  XA_LIMIT(1, (1U << 24) - 1),
				  &dev->next_mr_index, GFP_KERNEL);
	if (err < 0)
		return err;
	*key = (index << 8) | get_random_u8();
	return 0;
}

void mrxe_key_free(struct mrxe_dev *dev, u32 key)
{
	xa_erase_irq(&dev->mr_xa, key >> 8);
}

/* IBA 10.6.3.1: remote write/atomic require local write. */
static int mrxe_check_access(int access)
{
	if (access & ~(mrxe_mr_access_mask | IB_ACCESS_ON_DEMAND |
		       IB_ACCESS_HUGETLB | IB_ACCESS_OPTIONAL | IB_ZERO_BASED))
		return -EINVAL;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (access & (IB_ACCESS_ON_DEMAND | IB_ZERO_BASED))
		return -EOPNOTSUPP;
	/*
	 * Persistence needs persistent memory behind every page; mrxe
	 * registers ordinary memory only (as rxe refuses a non-pmem page).
	 */
	if (access & MRXE_ACCESS_FLUSH_PERSISTENT)
		return -EINVAL;
	return 0;
}

static struct mrxe_mr *mrxe_mr_new(struct ib_pd *ibpd, enum mrxe_mr_type type,
				   int access)
{
	struct mrxe_dev *dev = to_mdev(ibpd->device);
	struct mrxe_mr *mr;
	u32 key;
	int err;

	if (atomic_inc_return(&dev->num_mr) > MRXE_MAX_MR) {
		err = -ENOMEM;
		goto err_count;
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		err = -ENOMEM;
		goto err_count;
	}
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	spin_lock_init(&mr->lock);
	atomic_set(&mr->num_mw, 0);
	mr->type = type;
	mr->access = access & mrxe_mr_access_mask;
	mr->pd = to_mpd(ibpd);
	mr->page_shift = PAGE_SHIFT;
	mr->state = type == MRXE_MR_FAST_REG ? MRXE_MR_FREE : MRXE_MR_VALID;

	/* Not visible to lookups until the caller publishes it. */
	err = mrxe_key_alloc(dev, NULL, &key);
	if (err)
		goto err_free;
	mr->lkey = key;
	mr->rkey = key;
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	mr->ibmr.device = ibpd->device;
	mr->ibmr.pd = ibpd;
	return mr;

err_free:
	kfree(mr);
err_count:
	atomic_dec(&dev->num_mr);
	return ERR_PTR(err);
}

static void mrxe_mr_publish(struct mrxe_dev *dev, struct mrxe_mr *mr)
{
	xa_store_irq(&dev->mr_xa, mr->lkey >> 8, mr, GFP_KERNEL);
	atomic_inc(&mr->pd->num_mr);
}

static void mrxe_mr_release_mem(struct mrxe_mr *mr)
{
	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->pages);
	kfree(mr->fr_pages);
}

struct ib_mr *mrxe_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct mrxe_mr *mr;
	int err;

	err = mrxe_check_access(access);
	if (err)
		return ERR_PTR(err);
	mr = mrxe_mr_new(ibpd, MRXE_MR_DMA, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->iova = 0;
	mr->length = U64_MAX;
	mrxe_mr_publish(to_mdev(ibpd->device), mr);
	return &mr->ibmr;
}

struct ib_mr *mrxe_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata)
{
	struct mrxe_dev *dev = to_mdev(ibpd->device);
	struct sg_page_iter sg_iter;
	struct ib_umem *umem;
	struct mrxe_mr *mr;
	u32 n = 0;
	int err;

	err = mrxe_check_access(access);
	if (err)
		return ERR_PTR(err);
	if (!length || length > MRXE_MAX_MR_SIZE)
		return ERR_PTR(-EINVAL);
	if (iova + length < iova || start + length < start)
		return ERR_PTR(-EINVAL);
	/* The in-page offset of iova must match that of start (IBA 10.6.2). */
	if ((start & ~PAGE_MASK) != (iova & ~PAGE_MASK))
		return ERR_PTR(-EINVAL);

	umem = ib_umem_get(&dev->ib_dev, start, length, access);
	if (IS_ERR(umem)) {
		mrxe_dbg_dev(dev, "ib_umem_get failed %ld\n", PTR_ERR(umem));
		return ERR_CAST(umem);
	}

	mr = mrxe_mr_new(ibpd, MRXE_MR_USER, access);
	if (IS_ERR(mr)) {
		ib_umem_release(umem);
		return ERR_CAST(mr);
	}
	mr->umem = umem;
	mr->npages = ib_umem_num_pages(umem);
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		err = -ENOMEM;
		goto err;
	}
	for_each_sgtable_page(&umem->sgt_append.sgt, &sg_iter, 0) {
		if (n >= mr->npages) {
			err = -EFAULT;
			goto err;
		}
		mr->pages[n++] = sg_page_iter_page(&sg_iter);
	}
	if (n != mr->npages) {
		err = -EFAULT;
		goto err;
	}
	mr->iova = iova;
	mr->length = length;
	mr->page_offset = ib_umem_offset(umem);
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	mrxe_mr_publish(dev, mr);
	return &mr->ibmr;

err:
	mrxe_key_free(dev, mr->lkey);
	mrxe_mr_release_mem(mr);
	kfree(mr);
	atomic_dec(&dev->num_mr);
	return ERR_PTR(err);
}

struct ib_mr *mrxe_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg)
{
	struct mrxe_dev *dev = to_mdev(ibpd->device);
	struct mrxe_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EINVAL);
	if (!max_num_sg || max_num_sg > MRXE_MAX_FMR_PAGES)
		return ERR_PTR(-EINVAL);

	mr = mrxe_mr_new(ibpd, MRXE_MR_FAST_REG, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->fr_pages = kcalloc(max_num_sg, sizeof(u64), GFP_KERNEL);
	if (!mr->fr_pages) {
		mrxe_key_free(dev, mr->lkey);
		kfree(mr);
		atomic_dec(&dev->num_mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->fr_max = max_num_sg;
	mrxe_mr_publish(dev, mr);
	return &mr->ibmr;
}

static int mrxe_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct mrxe_mr *mr = to_mmr(ibmr);

	if (mr->fr_n >= mr->fr_max)
		return -ENOMEM;
	mr->fr_pages[mr->fr_n++] = addr;
	return 0;
}

/*
 * Stage a page list for the next IB_WR_REG_MR.  mrxe is a software device
 * (ib_uses_virt_dma): DMA addresses are kernel virtual addresses.
 */
int mrxe_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct mrxe_mr *mr = to_mmr(ibmr);
	int n;

	if (mr->type != MRXE_MR_FAST_REG)
		return -EINVAL;
	if (ibmr->page_size < SZ_4K || !is_power_of_2(ibmr->page_size))
		return -EINVAL;
	mr->fr_n = 0;
	mr->page_shift = ilog2(ibmr->page_size);
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, mrxe_set_page);
	return n;
}

/*
 * A responder keeps the MR of an unfinished WRITE or READ between packets.
 * When a process dies, uverbs may deregister that MR before it destroys
 * the QP (it destroys objects in creation order), and a peer that stopped
 * mid-message never finishes it: take the MR back from the PD's QPs.  The
 * key is already gone, so no QP can pick the MR up again after its turn.
 * A QP found in qp_xa under rcu_read_lock() is not freed before its
 * reference is taken.
 */
static void mrxe_mr_reclaim(struct mrxe_dev *dev, struct mrxe_mr *mr)
{
	unsigned long idx;
	struct mrxe_qp *qp;

	rcu_read_lock();
	xa_for_each(&dev->qp_xa, idx, qp) {
		if (qp->pd != mr->pd || (READ_ONCE(qp->resp.wr_mr) != mr &&
					 READ_ONCE(qp->resp.rd_mr) != mr) ||
		    !refcount_inc_not_zero(&qp->ref))
			continue;
		rcu_read_unlock();
		mrxe_resp_release_mr(qp, mr);
		mrxe_qp_put(qp);
		rcu_read_lock();
	}
	rcu_read_unlock();
}

int mrxe_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct mrxe_dev *dev = to_mdev(ibmr->device);
	struct mrxe_mr *mr = to_mmr(ibmr);

	/*
	 * IBA 10.6.7.2.6: an MR with bound MWs cannot be deregistered.  The
	 * check and the start of deregistration are one step: num_mw goes
	 * from 0 to MRXE_MR_DEREG (negative), and a bind only takes the MR
	 * with atomic_inc_unless_negative(), so no bind can slip in between
	 * (and leave its reference for the wait below to wait on forever).
	 */
	if (atomic_cmpxchg(&mr->num_mw, 0, MRXE_MR_DEREG) != 0)
		return -EBUSY;

	mrxe_key_free(dev, mr->lkey);
	/*
	 * Drop the base reference, then wait for the packet path.  A
	 * responder that looked the key up just before it went may keep the
	 * MR a moment later: look again every 100 ms.
	 */
	if (!refcount_dec_and_test(&mr->ref)) {
		do {
			mrxe_mr_reclaim(dev, mr);
		} while (!wait_for_completion_timeout(&mr->released, HZ / 10));
	}
	atomic_dec(&mr->pd->num_mr);
	mrxe_mr_release_mem(mr);
	atomic_dec(&dev->num_mr);
	kfree_rcu(mr, rcu);
	return 0;
}

/* ---- lookups ---- */

static void *mrxe_key_lookup(struct mrxe_dev *dev, u32 key, bool *is_mw)
{
	void *entry = xa_load(&dev->mr_xa, key >> 8);

	*is_mw = xa_pointer_tag(entry) == MRXE_MW_TAG;
	return xa_untag_pointer(entry);
}

/*
 * The MR in @key's slot whatever its key's low byte: fast-reg looks up its
 * MR by the consumer's new key, which the device does not hold yet.
 */
static struct mrxe_mr *mrxe_mr_get_slot(struct mrxe_dev *dev, u32 key)
{
	struct mrxe_mr *mr;
	bool is_mw;

	rcu_read_lock();
	mr = mrxe_key_lookup(dev, key, &is_mw);
	if (!mr || is_mw || !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/* The MR whose current lkey or rkey (as the device holds it) is @key. */
struct mrxe_mr *mrxe_mr_get(struct mrxe_dev *dev, u32 key)
{
	struct mrxe_mr *mr = mrxe_mr_get_slot(dev, key);

	if (mr && READ_ONCE(mr->lkey) != key && READ_ONCE(mr->rkey) != key) {
		mrxe_mr_put(mr);
		mr = NULL;
	}
	return mr;
}

void mrxe_mr_put(struct mrxe_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
}

struct mrxe_mw *mrxe_mw_get(struct mrxe_dev *dev, u32 rkey)
{
	struct mrxe_mw *mw;
	bool is_mw;

	rcu_read_lock();
	mw = mrxe_key_lookup(dev, rkey, &is_mw);
	if (!mw || !is_mw || READ_ONCE(mw->ibmw.rkey) != rkey ||
	    !refcount_inc_not_zero(&mw->ref))
		mw = NULL;
	rcu_read_unlock();
	return mw;
}

void mrxe_mw_put(struct mrxe_mw *mw)
{
	if (refcount_dec_and_test(&mw->ref))
		complete(&mw->released);
}

/* ---- memory access ---- */

static bool mrxe_mr_in_range(const struct mrxe_mr *mr, u64 iova, u64 len)
{
	if (mr->type == MRXE_MR_DMA)
		return iova + len >= iova;
	return iova >= mr->iova && iova + len >= iova &&
	       iova + len <= mr->iova + mr->length;
}

/*
 * Map the bytes at iova: returns a kernel address valid for *avail bytes
 * (within one page / fast-reg page) and sets *page when it must be
 * kunmap_local()ed.
 */
static void *mrxe_mr_map(struct mrxe_mr *mr, u64 iova, u32 *avail,
			 bool *mapped)
{
	u64 off, psz, idx;

	*mapped = false;
	switch (mr->type) {
	case MRXE_MR_DMA:
		*avail = U32_MAX;
		return (void *)(uintptr_t)iova;
	case MRXE_MR_USER:
		off = iova - mr->iova + mr->page_offset;
		idx = off >> PAGE_SHIFT;
		if (idx >= mr->npages)
			return NULL;
		*avail = PAGE_SIZE - (off & ~PAGE_MASK);
		*mapped = true;
		return (u8 *)kmap_local_page(mr->pages[idx]) +
		       (off & ~PAGE_MASK);
	case MRXE_MR_FAST_REG:
		psz = 1ULL << mr->page_shift;
		off = iova - mr->iova + mr->page_offset;
		idx = off >> mr->page_shift;
		if (idx >= mr->fr_n)
			return NULL;
		*avail = min_t(u64, psz - (off & (psz - 1)), U32_MAX);
		return (void *)(uintptr_t)(mr->fr_pages[idx] +
					   (off & (psz - 1)));
	}
	return NULL;
}

int mrxe_mr_copy(struct mrxe_mr *mr, u64 iova, void *buf, u32 len,
		 enum mrxe_copy_dir dir)
{
	u8 *p = buf;
	bool mapped;
	u32 avail, n;
	void *va;

	if (!len)
		return 0;
	if (READ_ONCE(mr->state) != MRXE_MR_VALID ||
	    !mrxe_mr_in_range(mr, iova, len))
		return -EINVAL;

	while (len) {
		va = mrxe_mr_map(mr, iova, &avail, &mapped);
		if (!va)
			return -EINVAL;
		n = min(len, avail);
		if (dir == MRXE_COPY_TO_MR)
			memcpy(va, p, n);
		else
			memcpy(p, va, n);
		if (mapped)
			kunmap_local(va);
		p += n;
		iova += n;
		len -= n;
	}
	return 0;
}

/*
 * The 8 bytes at @iova of a valid @mr, mapped (kunmap_local() when
 * *@mapped), for an atomic; NULL when not 8-byte aligned (IBA 9.4.5:
 * atomic operands are) or not inside the MR.
 */
static u64 *mrxe_mr_map8(struct mrxe_mr *mr, u64 iova, bool *mapped)
{
	u32 avail;
	u64 *va;

	if (iova & 7)
		return NULL;
	if (READ_ONCE(mr->state) != MRXE_MR_VALID ||
	    !mrxe_mr_in_range(mr, iova, 8))
		return NULL;
	va = mrxe_mr_map(mr, iova, &avail, mapped);
	if (va && avail < 8) {
		if (*mapped)
			kunmap_local(va);
		return NULL;
	}
	return va;
}

int mrxe_mr_atomic(struct mrxe_mr *mr, u64 iova, bool cmp_swap, u64 compare,
		   u64 swap_add, u64 *orig)
{
	bool mapped;
	u64 *va;

	va = mrxe_mr_map8(mr, iova, &mapped);
	if (!va)
		return -EINVAL;
	spin_lock_bh(&mrxe_atomic_lock);
	*orig = *va;
	if (cmp_swap) {
		if (*va == compare)
			*va = swap_add;
	} else {
		*va += swap_add;
	}
	spin_unlock_bh(&mrxe_atomic_lock);
	if (mapped)
		kunmap_local(va);
	return 0;
}

/*
 * RDMA ATOMIC WRITE (IBA 1.5 MPE): the 8 payload bytes land at the 8-byte
 * aligned iova as one store, never torn, and ordered against the atomics
 * above (the same lock).  The bytes are copied as they came off the wire.
 */
int mrxe_mr_atomic_write(struct mrxe_mr *mr, u64 iova, const u8 *data)
{
	bool mapped;
	u64 *va, v;

	va = mrxe_mr_map8(mr, iova, &mapped);
	if (!va)
		return -EINVAL;
	memcpy(&v, data, sizeof(v));
	spin_lock_bh(&mrxe_atomic_lock);
	WRITE_ONCE(*va, v);
	spin_unlock_bh(&mrxe_atomic_lock);
	if (mapped)
		kunmap_local(va);
	return 0;
}

/* IBA 10.6.3.1: lkey checks for every SGE. */
int mrxe_sgl_copy(struct mrxe_pd *pd, const struct mrxe_sge *sge, u32 num_sge,
		  u32 offset, void *buf, u32 len, enum mrxe_copy_dir dir,
		  int access)
{
	struct mrxe_dev *dev = to_mdev(pd->ibpd.device);
	u8 *p = buf;
	u32 i, n;
	int err;

	for (i = 0; i < num_sge && len; i++) {
		struct mrxe_mr *mr;

		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		n = min(sge[i].length - offset, len);

		mr = mrxe_mr_get(dev, sge[i].lkey);
		if (!mr)
			return -EINVAL;
		if (READ_ONCE(mr->lkey) != sge[i].lkey || mr->pd != pd) {
			mrxe_mr_put(mr);
			return -EINVAL;
		}
		if ((access & ~mr->access) & mrxe_mr_access_mask) {
			mrxe_mr_put(mr);
			return -EACCES;
		}
		err = mrxe_mr_copy(mr, sge[i].addr + offset, p, n, dir);
		mrxe_mr_put(mr);
		if (err)
			return err;
		p += n;
		len -= n;
		offset = 0;
	}
	return len ? -EINVAL : 0;
}

/* IBA 9.7.4.1.4 / 10.6.3.2 / 10.6.7.2.3: rkey of an MR or a bound MW. */
int mrxe_rkey_resolve(struct mrxe_qp *qp, u32 rkey, u64 va, u32 len,
		      int access, struct mrxe_mr **mrp)
{
	struct mrxe_dev *dev = qp_dev(qp);
	struct mrxe_mr *mr = NULL;
	struct mrxe_mw *mw;
	int err = 0;

	*mrp = NULL;
	mw = mrxe_mw_get(dev, rkey);
	if (mw) {
		spin_lock_bh(&mw->lock);
		if (mw->state != MRXE_MR_VALID || !mw->mr) {
			err = -EINVAL;
		} else if (mw->ibmw.type == IB_MW_TYPE_2 ?
			   mw->qpn != qp->ibqp.qp_num :
			   to_mpd(mw->ibmw.pd) != qp->pd) {
			err = -EACCES;
		} else if (access & ~mw->access) {
			err = -EACCES;
		} else if (va < mw->addr || va + len < va ||
			   va + len > mw->addr + mw->length) {
			err = -EINVAL;
		} else {
			mr = mw->mr;
			if (!refcount_inc_not_zero(&mr->ref))
				err = -EINVAL;
		}
		spin_unlock_bh(&mw->lock);
		mrxe_mw_put(mw);
		if (err)
			return err;
		*mrp = mr;
		return 0;
	}

	mr = mrxe_mr_get(dev, rkey);
	if (!mr)
		return -EINVAL;
	if (READ_ONCE(mr->rkey) != rkey || READ_ONCE(mr->state) != MRXE_MR_VALID)
		err = -EINVAL;
	else if (mr->pd != qp->pd)
		err = -EACCES;
	else if (access & ~mr->access)
		err = -EACCES;
	else if (!mrxe_mr_in_range(mr, va, len))
		err = -EINVAL;
	if (err) {
		mrxe_mr_put(mr);
		return err;
	}
	*mrp = mr;
	return 0;
}

/* Local invalidate or send-with-invalidate (IBA 10.6.5, 10.6.7.2.5). */
int mrxe_invalidate_key(struct mrxe_qp *qp, u32 key)
{
	struct mrxe_dev *dev = qp_dev(qp);
	struct mrxe_mr *mr, *unbound = NULL;
	struct mrxe_mw *mw;
	int err = 0;

	mw = mrxe_mw_get(dev, key);
	if (mw) {
		spin_lock_bh(&mw->lock);
		/* Only type 2 MWs can be invalidated, on their QP's PD. */
		if (mw->ibmw.type != IB_MW_TYPE_2 ||
		    mw->state != MRXE_MR_VALID) {
			err = -EINVAL;
		} else if (to_mpd(mw->ibmw.pd) != qp->pd) {
			err = -EACCES;
		} else {
			unbound = mw->mr;
			mw->mr = NULL;
			mw->qpn = 0;
			mw->state = MRXE_MR_FREE;
		}
		spin_unlock_bh(&mw->lock);
		mrxe_mw_put(mw);
		if (unbound) {
			atomic_dec(&unbound->num_mw);
			mrxe_mr_put(unbound);
		}
		return err;
	}

	mr = mrxe_mr_get(dev, key);
	if (!mr)
		return -EINVAL;
	spin_lock_bh(&mr->lock);
	if (mr->type != MRXE_MR_FAST_REG || mr->rkey != key)
		err = -EINVAL;
	else if (mr->pd != qp->pd)
		err = -EACCES;
	else if (atomic_read(&mr->num_mw))
		err = -EINVAL;
	else
		WRITE_ONCE(mr->state, MRXE_MR_FREE);
	spin_unlock_bh(&mr->lock);
	mrxe_mr_put(mr);
	return err;
}

/* IB_WR_REG_MR executed from the send queue (IBA 10.6.3.5 FRMR). */
int mrxe_fast_reg(struct mrxe_qp *qp, const struct mrxe_send_wqe *wqe)
{
	struct mrxe_dev *dev = qp_dev(qp);
	u32 key = wqe->wr.mw.rkey;
	int access = wqe->wr.mw.access;
	struct mrxe_mr *mr;
	u64 psz;
	int err = 0;

	if (mrxe_check_access(access))
		return -EINVAL;
	/*
	 * By slot: the consumer gave the MR its new key when it posted this
	 * WR (ib_update_fast_reg_key), the device still holds the old one.
	 */
	mr = mrxe_mr_get_slot(dev, wqe->wr.mw.mr_lkey);
	if (!mr)
		return -EINVAL;
	spin_lock_bh(&mr->lock);
	psz = 1ULL << mr->page_shift;
	if (mr->type != MRXE_MR_FAST_REG || mr->state != MRXE_MR_FREE ||
	    (key >> 8) != (mr->lkey >> 8)) {
		err = -EINVAL;
	} else if (mr->pd != qp->pd) {
		err = -EACCES;
	} else if (wqe->wr.mw.addr + wqe->wr.mw.length < wqe->wr.mw.addr ||
		   (wqe->wr.mw.addr & (psz - 1)) + wqe->wr.mw.length >
		   (u64)mr->fr_n << mr->page_shift) {
		err = -EINVAL;
	} else {
		mr->access = access & mrxe_mr_access_mask;
		mr->iova = wqe->wr.mw.addr;
		mr->length = wqe->wr.mw.length;
		mr->page_offset = wqe->wr.mw.addr & (psz - 1);
		WRITE_ONCE(mr->lkey, key);
		WRITE_ONCE(mr->rkey, key);
		WRITE_ONCE(mr->state, MRXE_MR_VALID);
	}
	spin_unlock_bh(&mr->lock);
	mrxe_mr_put(mr);
	return err;
}

/* IB_WR_BIND_MW executed from the send queue (IBA 10.6.7.2). */
int mrxe_bind_mw(struct mrxe_qp *qp, const struct mrxe_send_wqe *wqe)
{
	struct mrxe_dev *dev = qp_dev(qp);
	struct mrxe_mr *mr = NULL, *old = NULL;
	u32 new_rkey = wqe->wr.mw.rkey;
	int access = wqe->wr.mw.access;
	u64 addr = wqe->wr.mw.addr, len = wqe->wr.mw.length;
	struct mrxe_mw *mw;
	int err = 0;

	mw = mrxe_mw_get(dev, wqe->wr.mw.mw_rkey);
	if (!mw)
		return -EINVAL;
	if (to_mpd(mw->ibmw.pd) != qp->pd) {
		err = -EACCES;
		goto out_mw;
	}
	if ((new_rkey >> 8) != (mw->ibmw.rkey >> 8)) {
		err = -EINVAL;
		goto out_mw;
	}
	if (access & ~(IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE |
		       IB_ACCESS_REMOTE_ATOMIC | IB_ZERO_BASED)) {
		err = -EINVAL;
		goto out_mw;
	}
	if (access & IB_ZERO_BASED) {
		err = -EOPNOTSUPP;
		goto out_mw;
	}

	/* A zero-length type 1 bind unbinds (IBA 10.6.7.2.4). */
	if (len || mw->ibmw.type == IB_MW_TYPE_2) {
		mr = mrxe_mr_get(dev, wqe->wr.mw.mr_lkey);
		if (!mr || READ_ONCE(mr->lkey) != wqe->wr.mw.mr_lkey) {
			err = -EINVAL;
			goto out_mr;
		}
		if (mr->pd != qp->pd || !(mr->access & IB_ACCESS_MW_BIND) ||
		    mr->type == MRXE_MR_DMA) {
			err = -EACCES;
			goto out_mr;
		}
		if ((access & (IB_ACCESS_REMOTE_WRITE |
			       IB_ACCESS_REMOTE_ATOMIC)) &&
		    !(mr->access & IB_ACCESS_LOCAL_WRITE)) {
			err = -EACCES;
			goto out_mr;
		}
		if (READ_ONCE(mr->state) != MRXE_MR_VALID ||
		    !mrxe_mr_in_range(mr, addr, len)) {
			err = -EINVAL;
			goto out_mr;
		}
		/* fails once mrxe_dereg_mr() has started */
		if (!atomic_inc_unless_negative(&mr->num_mw)) {
			err = -EINVAL;
			goto out_mr;
		}
	}

	spin_lock_bh(&mw->lock);
	if (mw->ibmw.type == IB_MW_TYPE_2 && mw->state == MRXE_MR_VALID) {
		/* type 2 must be invalidated before it is bound again */
		spin_unlock_bh(&mw->lock);
		if (mr)
			atomic_dec(&mr->num_mw);
		err = -EINVAL;
		goto out_mr;
	}
	old = mw->mr;
	mw->mr = mr;		/* takes over our reference */
	/*
	 * A type 2 window is bound to the QP by number, not by pointer: the
	 * QP may be destroyed while the window stays bound, and QPNs are
	 * allocated cyclically, so a stale number matches no live QP.
	 */
	mw->qpn = mw->ibmw.type == IB_MW_TYPE_2 ? qp->ibqp.qp_num : 0;
	mw->addr = addr;
	mw->length = len;
	mw->access = access;
	mw->state = mr ? MRXE_MR_VALID : MRXE_MR_FREE;
	WRITE_ONCE(mw->ibmw.rkey, new_rkey);
	spin_unlock_bh(&mw->lock);
	mr = NULL;
	if (old) {
		atomic_dec(&old->num_mw);
		mrxe_mr_put(old);
	}
out_mr:
	if (mr)
		mrxe_mr_put(mr);
out_mw:
	mrxe_mw_put(mw);
	return err;
}
