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
 *   - mrxe_wrorder_wrote(): every WRITE payload copy into memory, with
 *     @ahead for a placement on arrival.  A copy by a PSN before the
 *     newest PSN placed ahead (hi) is recorded (range, PSN);
 *   - mrxe_wrorder_stale(): a packet placed on arrival must be copied
 *     again if a recorded write of an older PSN overlaps its bytes (a
 *     record older than its placement only costs a needless copy);
 *   - mrxe_wrorder_passed(): once the in-order pass has executed hi,
 *     nothing placed ahead remains and the records are dropped;
 *   - more than MRXE_WRORDER_RANGES records: every packet after the
 *     oldest recorded PSN counts as stale until then (more copies, never
 *     a wrong byte).
 *
 * Overlap is judged by virtual address: two MRs that map the same pages
 * at different addresses are not seen (known-issues.rst).  No allocation,
 * no locking (the responder's context owns it).
 */
#ifndef MRXE_WRORDER_H
#define MRXE_WRORDER_H

#include "mrxe_shim.h"

#define MRXE_WRORDER_RANGES	32

struct mrxe_wrorder_range {
	u64	va, end;	/* [va, end) */
	u32	psn;
};

struct mrxe_wrorder {
	u32	hi;		/* newest PSN placed ahead (valid if ahead) */
	bool	ahead;		/* something placed ahead is not executed */
	bool	all;		/* records overflowed: all after all_psn stale */
	u32	all_psn;
	u32	n;
	struct mrxe_wrorder_range r[MRXE_WRORDER_RANGES];
};

void mrxe_wrorder_init(struct mrxe_wrorder *w);
/* @psn wrote [@va, @va + @len): placed on arrival (@ahead) or in order */
void mrxe_wrorder_wrote(struct mrxe_wrorder *w, u32 psn, u64 va, u32 len,
			bool ahead);
/* Must the packet @psn, placed on arrival at [@va, @va + @len), be copied again? */
bool mrxe_wrorder_stale(const struct mrxe_wrorder *w, u32 psn, u64 va,
			u32 len);
/* The in-order pass executed @psn. */
void mrxe_wrorder_passed(struct mrxe_wrorder *w, u32 psn);

#endif
