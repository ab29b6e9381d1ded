/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * PSN-order memory for MetaRoCE WRITE packets placed on arrival.
 *
 * A MetaRoCE responder places a WRITE packet that arrives ahead of ePSN
 * at once, and the in-order pass copies only the packets that were not
 * placed.  IBA 9.5 has the responder execute requests in PSN order, so
 * when two WRITEs cover the same bytes, memory must end up holding the
 * later one.  Placement on arrival breaks that when a byte range is
 * written by an older PSN after a newer PSN already wrote it: the older
 * packet was the hole (copied late by the in-order pass) or arrived late
 * itself (a retransmission placed on arrival).  Such a write is recorded
 * here; when the in-order pass reaches a packet placed on arrival whose
 * bytes overlap a recorded write of an older PSN, the caller copies that
 * packet again (from the skb it still holds), so memory ends in PSN order.
 *
 * Rules:
 *   - mrxe_wrorder_may_place(): a packet is not placed over the extent of
 *     an older message that has packets placed and not executed;
 *   - mrxe_wrorder_wrote(): every WRITE payload copy into memory, with
 *     @ahead for a placement on arrival.  A placement adds its message's
 *     extent (RETH VA and length, keyed by the message's first PSN) with
 *     the newest PSN placed in it;
 *   - a copy by a PSN before the newest PSN placed ahead (hi) is recorded
 *     (range, PSN) only if it overlaps the extent of another message that
 *     has a newer PSN placed: reordering alone (every WRITE to its own
 *     bytes, a ring buffer) records nothing and copies nothing twice;
 *   - mrxe_wrorder_stale(): a packet placed on arrival must be copied
 *     again if a recorded write of an older PSN overlaps its bytes (a
 *     record older than its placement only costs a needless copy);
 *   - mrxe_wrorder_passed(): extents whose newest placed PSN the in-order
 *     pass has executed are dropped when room is needed, records that no
 *     live extent overlaps too; once the pass has executed hi, everything;
 *   - no room: more than MRXE_WRORDER_MSGS messages with packets placed
 *     ahead make every older copy a record; more than MRXE_WRORDER_RANGES
 *     live records make every placed packet after the oldest one stale
 *     (more copies, never a wrong byte).
 *
 * Overlap is judged by virtual address: two MRs that map the same pages
 * at different addresses are not seen (known-issues.rst).  No allocation,
 * no locking (the responder's context owns it).
 */
#ifndef MRXE_WRORDER_H
#define MRXE_WRORDER_H

#include "mrxe_shim.h"

#define MRXE_WRORDER_RANGES	32
#define MRXE_WRORDER_MSGS	256

struct mrxe_wrorder_range {
	u64	va, end;	/* [va, end) */
	u32	psn;		/* record: the PSN; extent: newest placed */
	u32	msg;		/* extent: the message's first PSN */
};

/* One WRITE payload copy: the packet and its message (RETH). */
struct mrxe_wrorder_pkt {
	u32	psn;
	u32	msg_psn;	/* the message's first PSN */
	u64	va;		/* the packet's bytes: [va, va + len) */
	u32	len;
	u64	msg_va;		/* the message's bytes (RETH) */
	u32	msg_len;
};

struct mrxe_wrorder {
	u32	hi;		/* newest PSN placed ahead (valid if ahead) */
	u32	passed;		/* last PSN the in-order pass executed */
	bool	passed_ok;	/* passed is set (since the last reset) */
	bool	ahead;		/* something placed ahead is not executed */
	bool	ext_full;	/* a message placed ahead has no extent */
	bool	all;		/* records overflowed: all after all_psn stale */
	u32	all_psn;
	u32	n;		/* records in r[] */
	u32	last_x;		/* x[] index of the last extent added to */
	struct mrxe_wrorder_range r[MRXE_WRORDER_RANGES];	/* records */
	struct mrxe_wrorder_range x[MRXE_WRORDER_MSGS];		/* extents */
};

void mrxe_wrorder_init(struct mrxe_wrorder *w);
/*
 * May @p be placed on arrival?  Not over an older message that still has
 * packets placed ahead of the pass (so it is not executed yet): its holes
 * would be copied over @p later and @p copied twice; held, @p is copied
 * once, in order.  A WRITE into one buffer again and again (perftest)
 * then places only what follows no unexecuted overlapping WRITE.
 */
bool mrxe_wrorder_may_place(const struct mrxe_wrorder *w,
			    const struct mrxe_wrorder_pkt *p);
/* @p was copied into memory: placed on arrival (@ahead) or in order */
void mrxe_wrorder_wrote(struct mrxe_wrorder *w,
			const struct mrxe_wrorder_pkt *p, bool ahead);
/* Must the packet @psn, placed on arrival at [@va, @va + @len), be copied again? */
bool mrxe_wrorder_stale(const struct mrxe_wrorder *w, u32 psn, u64 va,
			u32 len);
/* The in-order pass executed @psn. */
void mrxe_wrorder_passed(struct mrxe_wrorder *w, u32 psn);

#endif
