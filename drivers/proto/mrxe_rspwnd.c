// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * READ response window (additive increase, loss-proportional decrease).  See mrxe_rspwnd.h for the
 * rules and the invariant.
 */
#include "mrxe_rspwnd.h"

void mrxe_rspwnd_init(struct mrxe_rspwnd *w, u32 min, u32 max, u32 step)
{
	memset(w, 0, sizeof(*w));
	w->min = min ? min : 1;
	w->max = max < w->min ? w->min : max;
	w->step = step ? step : 1;
	w->cwnd = w->max;
}

bool mrxe_rspwnd_may_ask(const struct mrxe_rspwnd *w, u32 n)
{
	return !w->pending || (u64)w->pending + n <= w->cwnd;
}

void mrxe_rspwnd_asked(struct mrxe_rspwnd *w, u32 n)
{
	w->pending = (u64)w->pending + n > 0xffffffffULL ? 0xffffffffU :
		     w->pending + n;
}

void mrxe_rspwnd_got(struct mrxe_rspwnd *w)
{
	if (w->pending)
		w->pending--;
	if (++w->acc < w->cwnd)
		return;
	w->acc = 0;
	w->cwnd = w->max - w->cwnd < w->step ? w->max : w->cwnd + w->step;
}

bool mrxe_rspwnd_loss(struct mrxe_rspwnd *w, u64 now_ns, u64 hold_ns,
		      u32 n)
{
	bool fresh = !w->cuts || now_ns - w->cut_ns >= hold_ns;
	u32 room;

	if (fresh) {
		w->floor = w->cwnd / 2 < w->min ? w->min : w->cwnd / 2;
		w->cut_ns = now_ns;
		w->cuts++;
	}
	/*
	 * acc is kept: with a loss period every round trip (5% of 400
	 * responses) a reset here stopped all growth, and cwnd fell to min.
	 */
	room = w->cwnd > w->floor ? w->cwnd - w->floor : 0;
	if (!n)
		n = 1;
	w->cwnd -= n < room ? n : room;
	return fresh;
}

void mrxe_rspwnd_idle(struct mrxe_rspwnd *w)
{
	w->pending = 0;
}
