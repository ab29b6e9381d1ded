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
	if (!(x->end && x->msg == p->msg_psn)) {
		for (i = 0; i < MRXE_WRORDER_MSGS; i++) {
			x = &w->x[i];
			if (x->end && x->msg == p->msg_psn)
				break;
			if (!free && !extent_live(w, x)) {
				free = x;
				w->last_x = i;
			}
		}
		if (i == MRXE_WRORDER_MSGS)
			x = NULL;
	}
	if (x) {
		if (mrxe_psn_after(p->psn, x->psn))
			x->psn = p->psn;
		w->last_x = x - w->x;
		return;
	}
	if (!free) {
		w->ext_full = true;
		return;
	}
	free->va = p->msg_va;
	free->end = p->msg_va + (p->msg_len ? p->msg_len : 1);
	free->psn = p->psn;
	free->msg = p->msg_psn;
}

/* does a newer placed packet of another message overlap @p? */
static bool newer_overlap(const struct mrxe_wrorder *w,
			  const struct mrxe_wrorder_pkt *p)
{
	u64 end = p->va + p->len;
	u32 i;

	if (w->ext_full)
		return true;
	for (i = 0; i < MRXE_WRORDER_MSGS; i++) {
		const struct mrxe_wrorder_range *x = &w->x[i];

		if (extent_live(w, x) && x->msg != p->msg_psn &&
		    mrxe_psn_after(x->psn, p->psn) && overlaps(x, p->va, end))
			return true;
	}
	return false;
}

/* drop records no live extent overlaps; true if one is free now */
static bool records_prune(struct mrxe_wrorder *w)
{
	u32 i, j, k = 0;

	if (w->ext_full)
		return false;
	for (i = 0; i < w->n; i++) {
		for (j = 0; j < MRXE_WRORDER_MSGS; j++)
			if (extent_live(w, &w->x[j]) &&
			    mrxe_psn_after(w->x[j].psn, w->r[i].psn) &&
			    overlaps(&w->x[j], w->r[i].va, w->r[i].end))
				break;
		if (j < MRXE_WRORDER_MSGS)
			w->r[k++] = w->r[i];
	}
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
	if (w->ahead && mrxe_psn_before(p->psn, w->hi) && newer_overlap(w, p))
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
