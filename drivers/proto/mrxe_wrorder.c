// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * PSN-order memory for WRITE packets placed on arrival.  See
 * mrxe_wrorder.h for the rules.
 */
#include "mrxe_wrorder.h"
#include "mrxe_wire.h"

void mrxe_wrorder_init(struct mrxe_wrorder *w)
{
	memset(w, 0, sizeof(*w));
}

static bool overlaps(const struct mrxe_wrorder_range *r, u64 va, u64 end)
{
	return r->va < end && va < r->end;
}

/* an extent still has placed packets the pass has not executed */
static bool extent_live(const struct mrxe_wrorder *w,
			const struct mrxe_wrorder_range *x)
{
	return x->end && (!w->passed_ok || mrxe_psn_after(x->psn, w->passed));
}

static void extent_add(struct mrxe_wrorder *w,
		       const struct mrxe_wrorder_pkt *p)
{
	struct mrxe_wrorder_range *x = &w->x[w->last_x], *free = NULL;
	u32 i;

	/* the packets of one message are mostly placed one after another */
	if (!x->end || x->msg != p->msg_psn) {
		x = NULL;
		for (i = 0; i < MRXE_WRORDER_MSGS && !x; i++) {
			if (w->x[i].end && w->x[i].msg == p->msg_psn)
				x = &w->x[i];
			else if (!free && !extent_live(w, &w->x[i]))
				free = &w->x[i];
		}
	}
	if (!x) {
		if (!free) {
			w->ext_full = true;
			return;
		}
		x = free;
		x->va = p->msg_va;
		x->end = p->msg_va + (p->msg_len ? p->msg_len : 1);
		x->psn = p->psn;
		x->msg = p->msg_psn;
	} else if (mrxe_psn_after(p->psn, x->psn)) {
		x->psn = p->psn;
	}
	w->last_x = x - w->x;
}

/*
 * Has a live extent placed a PSN newer than @psn over [@va, @end)?  The
 * extent of message @own (a message never overlaps itself) is skipped
 * when @skip_own.
 */
static bool newer_overlap(const struct mrxe_wrorder *w, u32 psn, u64 va,
			  u64 end, bool skip_own, u32 own)
{
	u32 i;

	for (i = 0; i < MRXE_WRORDER_MSGS; i++) {
		const struct mrxe_wrorder_range *x = &w->x[i];

		if (extent_live(w, x) && !(skip_own && x->msg == own) &&
		    mrxe_psn_after(x->psn, psn) && overlaps(x, va, end))
			return true;
	}
	return false;
}

/* drop records no live extent overlaps; true if one is free now */
static bool records_prune(struct mrxe_wrorder *w)
{
	u32 i, k = 0;

	if (w->ext_full)
		return false;
	for (i = 0; i < w->n; i++)
		if (newer_overlap(w, w->r[i].psn, w->r[i].va, w->r[i].end,
				  false, 0))
			w->r[k++] = w->r[i];
	w->n = k;
	return k < MRXE_WRORDER_RANGES;
}

static void record(struct mrxe_wrorder *w, const struct mrxe_wrorder_pkt *p)
{
	struct mrxe_wrorder_range *r;
	u32 i, oldest = p->psn;

	if (w->all) {
		if (mrxe_psn_before(p->psn, w->all_psn))
			w->all_psn = p->psn;
		return;
	}
	if (w->n == MRXE_WRORDER_RANGES && !records_prune(w)) {
		for (i = 0; i < w->n; i++)
			if (mrxe_psn_before(w->r[i].psn, oldest))
				oldest = w->r[i].psn;
		w->all = true;
		w->all_psn = oldest;
		return;
	}
	r = &w->r[w->n++];
	r->va = p->va;
	r->end = p->va + p->len;
	r->psn = p->psn;
}

void mrxe_wrorder_wrote(struct mrxe_wrorder *w,
			const struct mrxe_wrorder_pkt *p, bool ahead)
{
	if (!p->len)
		return;
	if (w->ahead && mrxe_psn_before(p->psn, w->hi) &&
	    (w->ext_full || newer_overlap(w, p->psn, p->va, p->va + p->len,
					  true, p->msg_psn)))
		record(w, p);
	if (!ahead)
		return;
	if (!w->ahead || mrxe_psn_after(p->psn, w->hi)) {
		w->hi = p->psn;
		w->ahead = true;
	}
	extent_add(w, p);
}

bool mrxe_wrorder_may_place(const struct mrxe_wrorder *w,
			    const struct mrxe_wrorder_pkt *p)
{
	u64 end = p->va + p->len;
	u32 i;

	if (!w->ahead)
		return true;
	for (i = 0; i < MRXE_WRORDER_MSGS; i++) {
		const struct mrxe_wrorder_range *x = &w->x[i];

		if (extent_live(w, x) && mrxe_psn_before(x->msg, p->msg_psn) &&
		    overlaps(x, p->va, end))
			return false;
	}
	return true;
}

bool mrxe_wrorder_stale(const struct mrxe_wrorder *w, u32 psn, u64 va,
			u32 len)
{
	u64 end = va + len;
	u32 i;

	if (!w->ahead || !len)
		return false;
	if (w->all)
		return mrxe_psn_after(psn, w->all_psn);
	for (i = 0; i < w->n; i++)
		if (mrxe_psn_before(w->r[i].psn, psn) &&
		    overlaps(&w->r[i], va, end))
			return true;
	return false;
}

void mrxe_wrorder_passed(struct mrxe_wrorder *w, u32 psn)
{
	if (!w->ahead)
		return;
	if (!mrxe_psn_before(psn, w->hi)) {
		mrxe_wrorder_init(w);
		return;
	}
	w->passed = psn;
	w->passed_ok = true;
}
