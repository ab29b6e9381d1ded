// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mrxe rings (see struct mrxe_ring_hdr in rdma/mrxe-abi.h).  A ring is one
 * vmalloc_user() buffer: the 256-byte header, then the slots.  User rings
 * are exported through an rdma_user_mmap_entry; the buffer then belongs to
 * the entry and is freed by mmap_free once the object is gone and the last
 * mapping is unmapped, so a process can never see freed memory.
 *
 * Each index has exactly one writer.  The kernel keeps a private copy of
 * the index it owns (q->prod / q->cons) and never trusts the other index:
 * an inconsistent pair (more than nslots apart) reads as empty (consumer)
 * or full (producer).
 */
#include <linux/vmalloc.h>

#include "mrxe.h"
#include "mrxe_verbs.h"

struct mrxe_mmap_entry {
	struct rdma_user_mmap_entry	rdma_entry;
	void				*buf;
	size_t				size;
};

static inline struct mrxe_mmap_entry *
to_mentry(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct mrxe_mmap_entry, rdma_entry);
}

static inline void *mrxe_queue_slot(struct mrxe_queue *q, u32 index)
{
	return (u8 *)q->buf + MRXE_RING_HDR_SIZE +
	       ((size_t)mrxe_ring_slot(index, q->index_mask) <<
		q->log2_elem_size);
}

struct mrxe_queue *mrxe_queue_alloc(struct mrxe_dev *dev, u32 nslots,
				    u32 elem_size,
				    struct ib_ucontext *ucontext)
{
	struct mrxe_mmap_entry *entry;
	struct mrxe_queue *q;
	size_t size;
	int err;

	if (!nslots || !is_power_of_2(nslots) || !is_power_of_2(elem_size))
		return ERR_PTR(-EINVAL);
	size = PAGE_ALIGN(MRXE_RING_HDR_SIZE + (size_t)nslots * elem_size);
	if (size > SZ_1G)
		return ERR_PTR(-EINVAL);

	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return ERR_PTR(-ENOMEM);
	q->dev = dev;
	spin_lock_init(&q->lock);
	q->log2_elem_size = ilog2(elem_size);
	q->index_mask = nslots - 1;
	q->buf_size = size;
	q->buf = vmalloc_user(size);
	if (!q->buf) {
		err = -ENOMEM;
		goto err_free;
	}
	q->buf->log2_elem_size = q->log2_elem_size;
	q->buf->index_mask = q->index_mask;

	if (!ucontext)
		return q;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry) {
		err = -ENOMEM;
		goto err_vfree;
	}
	entry->buf = q->buf;
	entry->size = size;
	err = rdma_user_mmap_entry_insert(ucontext, &entry->rdma_entry, size);
	if (err) {
		kfree(entry);
		goto err_vfree;
	}
	q->is_user = true;
	q->mmap_entry = &entry->rdma_entry;
	return q;

err_vfree:
	vfree(q->buf);
err_free:
	kfree(q);
	return ERR_PTR(err);
}

void mrxe_queue_free(struct mrxe_queue *q)
{
	if (!q)
		return;
	if (q->mmap_entry)
		/* mrxe_mmap_free() vfree()s the buffer after the last munmap */
		rdma_user_mmap_entry_remove(q->mmap_entry);
	else
		vfree(q->buf);
	kfree(q);
}

void mrxe_mmap_free(struct rdma_user_mmap_entry *e)
{
	struct mrxe_mmap_entry *entry = to_mentry(e);

	vfree(entry->buf);
	kfree(entry);
}

int mrxe_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *e;
	struct mrxe_mmap_entry *entry;
	int err;

	e = rdma_user_mmap_entry_get(ibuc, vma);
	if (!e)
		return -EINVAL;
	entry = to_mentry(e);
	if (vma->vm_end - vma->vm_start > entry->size) {
		err = -EINVAL;
		goto out;
	}
	err = remap_vmalloc_range(vma, entry->buf, 0);
out:
	rdma_user_mmap_entry_put(e);
	return err;
}

void mrxe_queue_mmap_info(const struct mrxe_queue *q,
			  struct mrxe_mmap_info *mi)
{
	memset(mi, 0, sizeof(*mi));
	if (!q || !q->mmap_entry)
		return;
	mi->offset = rdma_user_mmap_get_offset(q->mmap_entry);
	mi->size = q->buf_size;
}

/* ---- kernel consumer of a user/kernel produced ring (SQ, RQ, SRQ) ---- */

void mrxe_queue_advance(struct mrxe_queue *q)
{
	q->cons++;
	/* release: slot contents visible before consumer_index moves */
	smp_store_release(&q->buf->consumer_index, q->cons);
}

u32 mrxe_queue_count(struct mrxe_queue *q)
{
	/* acquire: pairs with the other side's release of producer_index */
	u32 prod = smp_load_acquire(&q->buf->producer_index);

	if (!mrxe_ring_valid(prod, q->cons, q->index_mask))
		return 0;
	return mrxe_ring_count(prod, q->cons);
}

/* ---- kernel producer (kernel-posted WQEs, CQEs) ---- */

void *mrxe_queue_producer_slot(struct mrxe_queue *q)
{
	/* acquire: pairs with the other side's release of consumer_index */
	u32 cons = smp_load_acquire(&q->buf->consumer_index);

	/* A hostile consumer index makes the ring look full, never overrun. */
	if (!mrxe_ring_valid(q->prod, cons, q->index_mask) ||
	    mrxe_ring_full(q->prod, cons, q->index_mask))
		return NULL;
	return mrxe_queue_slot(q, q->prod);
}

void mrxe_queue_produce(struct mrxe_queue *q)
{
	q->prod++;
	/* release: slot contents visible before producer_index moves */
	smp_store_release(&q->buf->producer_index, q->prod);
}

/* ---- kernel consumer of a kernel-produced ring (kernel CQ poll) ---- */

void *mrxe_queue_consumer_slot(struct mrxe_queue *q)
{
	/* acquire: pairs with the other side's release of producer_index */
	u32 prod = smp_load_acquire(&q->buf->producer_index);

	if (mrxe_ring_empty(prod, q->cons))
		return NULL;
	return mrxe_queue_slot(q, q->cons);
}

void mrxe_queue_consume(struct mrxe_queue *q)
{
	q->cons++;
	/* release: slot contents visible before consumer_index moves */
	smp_store_release(&q->buf->consumer_index, q->cons);
}

u32 mrxe_queue_used(struct mrxe_queue *q)
{
	/* acquire: pairs with the other side's release of consumer_index */
	u32 cons = smp_load_acquire(&q->buf->consumer_index);

	if (!mrxe_ring_valid(q->prod, cons, q->index_mask))
		return 0;
	return mrxe_ring_count(q->prod, cons);
}
