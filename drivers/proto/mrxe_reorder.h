/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Receiver reorder window for MetaRoCE (out-of-order placement with
 * selective repeat; the receiver half of IRN / UET-style SACK).
 *
 * State: ePSN, the first PSN not yet received, and a bitmap of the PSNs
 * received in (ePSN, ePSN + MRXE_SACK_WINDOW).  Invariants:
 *  - every PSN before ePSN was accepted exactly once, the ePSN bit is
 *    clear and no bit outside the window is set;
 *  - mrxe_reorder_accept() returns MRXE_RX_NEW at most once per PSN, so a
 *    packet is placed at most once; a duplicate or a PSN outside
 *    [ePSN, ePSN + MRXE_SACK_WINDOW) is never new.
 * SACK information: the cumulative ePSN plus up to MRXE_SACK_MAX_BLOCKS
 * 64-bit bitmaps at 64-PSN strides above ePSN; when the caller allows fewer
 * blocks than are non-empty, the block of the newest arrival goes first and
 * the others rotate over successive ACKs, so every hole gets described.
 */
#ifndef MRXE_REORDER_H
#define MRXE_REORDER_H

#include "mrxe_wire.h"

enum mrxe_rx_verdict {
	MRXE_RX_NEW		= 0,	/* place it */
	MRXE_RX_DUPLICATE	= 1,	/* already received: drop, count, ACK */
	MRXE_RX_OUT_OF_WINDOW	= 2,	/* beyond the window: drop, count */
};

struct mrxe_reorder_cnt {
	u64	accepted;	/* MRXE_RX_NEW */
	u64	ooo;		/* ... of which above ePSN (out of order) */
	u64	duplicate;
	u64	out_of_window;
};

struct mrxe_reorder {
	u64	bits[MRXE_SACK_WINDOW / 64];	/* slot psn % WINDOW */
	/* subset of bits not reported in an ACK yet: reported first */
	u64	fresh[MRXE_SACK_WINDOW / 64];
	u32	epsn;
	u32	last_psn;	/* newest arrival, for the next ACK */
	bool	last_dup;
	u8	rot;		/* rotation cursor over the SACK blocks */
	struct mrxe_reorder_cnt cnt;
};

void mrxe_reorder_init(struct mrxe_reorder *rw, u32 epsn);
enum mrxe_rx_verdict mrxe_reorder_accept(struct mrxe_reorder *rw, u32 psn);
/* Was @psn received (before ePSN, or its bit set)? */
bool mrxe_reorder_has(const struct mrxe_reorder *rw, u32 psn);

static inline u32 mrxe_reorder_epsn(const struct mrxe_reorder *rw)
{
	return rw->epsn;
}

/* Number of PSNs received above ePSN (0: nothing out of order). */
u32 mrxe_reorder_held(const struct mrxe_reorder *rw);

/*
 * Fill @si for the next ACK with at most @max_blocks (1..MRXE_SACK_MAX_BLOCKS)
 * non-empty blocks; block k covers ePSN + 1 + 64k .. ePSN + 64 + 64k.
 * When more blocks are non-empty than fit: the newest arrival's block,
 * then the blocks with arrivals no ACK reported yet (lowest first), then
 * the others in rotation.  When more than @max_blocks blocks have
 * unreported arrivals, only those, lowest first, and the caller sends
 * another ACK while mrxe_reorder_unreported(): a burst whose last ACK
 * carries the newest arrival.  So a sender's RACK never learns of a
 * delivery before the older ones, nor waits for a rotation.  Returns
 * si->nblocks.
 */
u8 mrxe_reorder_sack(struct mrxe_reorder *rw, struct mrxe_sack_info *si,
		     u8 max_blocks);

/*
 * Are there arrivals no ACK reported yet?  After an ACK, when more blocks
 * got arrivals than one ACK holds: send another ACK right away.
 */
bool mrxe_reorder_unreported(const struct mrxe_reorder *rw);

#endif /* MRXE_REORDER_H */
