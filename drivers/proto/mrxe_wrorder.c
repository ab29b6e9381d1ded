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

void mrxe_wrorder_wrote(struct mrxe_wrorder *w, u32 psn, u64 va, u32 len,
			bool ahead)
{
	struct mrxe_wrorder_range *r;

	if (!len)
		return;
	if (w->ahead && mrxe_psn_before(psn, w->hi) && !w->all) {
		if (w->n < MRXE_WRORDER_RANGES) {
			r = &w->r[w->n++];
			r->va = va;
			r->end = va + len;
			r->psn = psn;
		} else {
			u32 i, oldest = psn;

			for (i = 0; i < w->n; i++)
				if (mrxe_psn_before(w->r[i].psn, oldest))
					oldest = w->r[i].psn;
			w->all = true;
			w->all_psn = oldest;
		}
	} else if (w->all && mrxe_psn_before(psn, w->all_psn)) {
		w->all_psn = psn;
	}
	if (ahead && (!w->ahead || mrxe_psn_after(psn, w->hi))) {
		w->hi = psn;
		w->ahead = true;
	}
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
		    w->r[i].va < end && va < w->r[i].end)
			return true;
	return false;
}

void mrxe_wrorder_passed(struct mrxe_wrorder *w, u32 psn)
{
	if (w->ahead && !mrxe_psn_before(psn, w->hi))
		mrxe_wrorder_init(w);
}
