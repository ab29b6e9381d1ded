// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * `auto` mode negotiation rules (mrxe_auto.h, wire-format.rst "auto").
 */
#include "mrxe_auto.h"
#include "mrxe_wire.h"

enum mrxe_auto_state mrxe_auto_on_response(enum mrxe_auto_state st,
					   bool meta, bool cap)
{
	/*
	 * Only the first standard response decides.  A MetaRoCE response
	 * cannot come before the switch (the peer answers in the mode of
	 * the request): it decides nothing here, the caller reports it.
	 */
	if (st != MRXE_AUTO_PROBE || meta)
		return st;
	return cap ? MRXE_AUTO_UPGRADE : MRXE_AUTO_STANDARD;
}

bool mrxe_auto_may_start_msg(enum mrxe_auto_state st,
			     const struct mrxe_auto_req *r)
{
	if (st != MRXE_AUTO_UPGRADE || r->in_msg)
		return true;
	return r->comp_psn == r->next_new_psn;
}

bool mrxe_auto_may_switch(enum mrxe_auto_state st,
			  const struct mrxe_auto_req *r)
{
	return st == MRXE_AUTO_UPGRADE && !r->rnr_wait && !r->rd_atomic &&
	       !r->in_msg && r->comp_psn == r->next_new_psn &&
	       r->psn == r->next_new_psn;
}

enum mrxe_auto_rx mrxe_auto_rx_classify(const struct mrxe_auto_rsp *r,
					bool meta, bool cap, u32 psn)
{
	s32 d = mrxe_psn_diff(psn, r->epsn);

	if (r->switched) {
		if (meta)
			return MRXE_AUTO_RX_META;
		/* IBA 9.9.2: a duplicate is a PSN before ePSN */
		if (r->is_auto && d < 0)
			return MRXE_AUTO_RX_DUP;
		if (!r->is_auto && cap && !r->meta_seen)
			return MRXE_AUTO_RX_FALLBACK;
		return MRXE_AUTO_RX_MISMATCH;
	}
	if (!meta)
		return MRXE_AUTO_RX_STANDARD;
	if (r->is_auto && d >= 0 && (u32)d < r->window)
		return MRXE_AUTO_RX_SWITCH;
	return MRXE_AUTO_RX_MISMATCH;
}

bool mrxe_auto_late_response(enum mrxe_auto_state st, u32 psn,
			     u32 switch_psn)
{
	return st == MRXE_AUTO_META && !mrxe_psn_after(psn, switch_psn);
}
