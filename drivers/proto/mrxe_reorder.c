// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Receiver reorder window; invariant and reference in mrxe_reorder.h.
 * Slot of a PSN: psn % MRXE_SACK_WINDOW (a power of two); the bitmap is
 * circular, so advancing ePSN clears the slots it passes.
 */
#include "mrxe_reorder.h"

#define RW_WORDS	(MRXE_SACK_WINDOW / 64)
#define RW_SLOT(psn)	((psn) & (MRXE_SACK_WINDOW - 1))

static bool slot_test(const struct mrxe_reorder *rw, u32 s)
{
	return (rw->bits[s >> 6] >> (s & 63)) & 1;
}

/* A new arrival above ePSN: held, and not reported in an ACK yet. */
static void slot_set(struct mrxe_reorder *rw, u32 s)
{
	rw->bits[s >> 6] |= 1ULL << (s & 63);
	rw->fresh[s >> 6] |= 1ULL << (s & 63);
}

static void slot_clear(struct mrxe_reorder *rw, u32 s)
{
	rw->bits[s >> 6] &= ~(1ULL << (s & 63));
	rw->fresh[s >> 6] &= ~(1ULL << (s & 63));
}

void mrxe_reorder_init(struct mrxe_reorder *rw, u32 epsn)
{
	memset(rw, 0, sizeof(*rw));
	rw->epsn = epsn & MRXE_PSN_MASK;
	rw->last_psn = mrxe_psn_add(rw->epsn, MRXE_PSN_MASK);
}

bool mrxe_reorder_has(const struct mrxe_reorder *rw, u32 psn)
{
	s32 d = mrxe_psn_diff(psn, rw->epsn);

	if (d < 0)
		return true;
	if (d >= MRXE_SACK_WINDOW)
		return false;
	return slot_test(rw, RW_SLOT(psn));
}

enum mrxe_rx_verdict mrxe_reorder_accept(struct mrxe_reorder *rw, u32 psn)
{
	s32 d;

	psn &= MRXE_PSN_MASK;
	d = mrxe_psn_diff(psn, rw->epsn);
	if (d >= MRXE_SACK_WINDOW) {
		rw->cnt.out_of_window++;
		return MRXE_RX_OUT_OF_WINDOW;
	}
	rw->last_psn = psn;
	if (d < 0 || slot_test(rw, RW_SLOT(psn))) {
		rw->last_dup = true;
		rw->cnt.duplicate++;
		return MRXE_RX_DUPLICATE;
	}
	rw->last_dup = false;
	rw->cnt.accepted++;
	if (d > 0) {
		rw->cnt.ooo++;
		slot_set(rw, RW_SLOT(psn));
		return MRXE_RX_NEW;
	}
	/* d == 0: advance over everything held contiguously */
	rw->epsn = mrxe_psn_add(rw->epsn, 1);
	while (slot_test(rw, RW_SLOT(rw->epsn))) {
		slot_clear(rw, RW_SLOT(rw->epsn));
		rw->epsn = mrxe_psn_add(rw->epsn, 1);
	}
	return MRXE_RX_NEW;
}

u32 mrxe_reorder_held(const struct mrxe_reorder *rw)
{
	u32 i, n = 0;

	for (i = 0; i < RW_WORDS; i++)
		n += mrxe_hweight64(rw->bits[i]);
	return n;
}

/* 64 bits of @map (bits or fresh) for PSNs base .. base + 63 (base after ePSN). */
static u64 window_bits(const u64 *map, u32 base)
{
	u32 s = RW_SLOT(base), w = s >> 6, b = s & 63;
	u64 v = map[w] >> b;

	/*
	 * Blocks start at ePSN + 1, so only the last bit of the last block
	 * (ePSN + WINDOW) lies outside the window; it aliases the ePSN slot,
	 * which is always clear.
	 */
	if (b)
		v |= map[(w + 1) % RW_WORDS] << (64 - b);
	return v;
}

/* The block at @base was reported: its arrivals are no longer fresh. */
static void report_block(struct mrxe_reorder *rw, u32 base)
{
	u32 s = RW_SLOT(base), w = s >> 6, b = s & 63;

	rw->fresh[w] &= b ? ~(~0ULL << b) : 0;
	if (b)
		rw->fresh[(w + 1) % RW_WORDS] &= ~0ULL << b;
}

u8 mrxe_reorder_sack(struct mrxe_reorder *rw, struct mrxe_sack_info *si,
		     u8 max_blocks)
{
	struct mrxe_sack_blk cand[MRXE_SACK_WIN_BLOCKS];
	bool fresh[MRXE_SACK_WIN_BLOCKS], taken[MRXE_SACK_WIN_BLOCKS] = { 0 };
	u8 ncand = 0, nfresh = 0, first = MRXE_SACK_WIN_BLOCKS, k, i;
	s32 dl;

	si->epsn = rw->epsn;
	si->trigger_psn = rw->last_psn;
	si->trigger_dup = rw->last_dup;
	rw->last_dup = false;	/* told once: a later ACK is not about it */
	si->nblocks = 0;
	if (!max_blocks)
		return 0;
	if (max_blocks > MRXE_SACK_MAX_BLOCKS)
		max_blocks = MRXE_SACK_MAX_BLOCKS;
	dl = mrxe_psn_diff(rw->last_psn, rw->epsn);
	for (k = 0; k < MRXE_SACK_WIN_BLOCKS; k++) {
		u32 base = mrxe_psn_add(rw->epsn, 1 + 64 * k);
		u64 v = window_bits(rw->bits, base);

		if (!v)
			continue;
		if (dl > 0 && (u32)(dl - 1) / 64 == k)
			first = ncand;
		fresh[ncand] = window_bits(rw->fresh, base) != 0;
		nfresh += fresh[ncand];
		cand[ncand].base = base;
		cand[ncand].bitmap = v;
		ncand++;
	}
	if (ncand <= max_blocks) {
		memcpy(si->blk, cand, ncand * sizeof(cand[0]));
		si->nblocks = ncand;
		goto reported;
	}
	/*
	 * More blocks with unreported arrivals than fit: this ACK is the
	 * first of a burst (mrxe_reorder_unreported() says another is owed).
	 * Report them lowest first and the newest arrival's block last: the
	 * sender's RACK runs per ACK, and if it learnt of the newest delivery
	 * before the older ones of the same burst it would call those lost.
	 */
	if (nfresh > max_blocks) {
		for (i = 0; i < ncand && si->nblocks < max_blocks; i++)
			if (fresh[i])
				si->blk[si->nblocks++] = cand[i];
		goto reported;
	}
	/*
	 * Too many: the newest arrival's block first (it tells the sender's
	 * RACK what was delivered last) unless only one block fits, then
	 * blocks with unreported arrivals, then the others from a cursor
	 * that moves one block per ACK.
	 */
	if (max_blocks < 2)
		first = MRXE_SACK_WIN_BLOCKS;
	if (first < ncand) {
		si->blk[si->nblocks++] = cand[first];
		taken[first] = true;
	}
	for (i = 0; i < ncand && si->nblocks < max_blocks; i++) {
		if (fresh[i] && !taken[i]) {
			si->blk[si->nblocks++] = cand[i];
			taken[i] = true;
		}
	}
	for (i = 0; i < ncand && si->nblocks < max_blocks; i++) {
		k = (rw->rot + i) % ncand;
		if (!taken[k]) {
			si->blk[si->nblocks++] = cand[k];
			taken[k] = true;
		}
	}
	rw->rot = (rw->rot + 1) % MRXE_SACK_WIN_BLOCKS;
reported:
	for (i = 0; i < si->nblocks; i++)
		report_block(rw, si->blk[i].base);
	return si->nblocks;
}

bool mrxe_reorder_unreported(const struct mrxe_reorder *rw)
{
	u32 i;

	for (i = 0; i < RW_WORDS; i++)
		if (rw->fresh[i])
			return true;
	return false;
}
