// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * RFC 6298 RTO estimator and windowed min RTT.  See mrxe_rtt.h for the
 * invariant.  K = 4, alpha = 1/8, beta = 1/4 as in RFC 6298 2.3; the clock
 * granularity G is folded into the floor.
 */
#include "mrxe_rtt.h"

void mrxe_rtt_init(struct mrxe_rtt *r, u64 floor_ns, u64 ceil_ns,
		   u64 init_rto_ns, u64 min_win_ns)
{
	memset(r, 0, sizeof(*r));
	r->floor_ns = floor_ns;
	r->ceil_ns = ceil_ns < floor_ns ? floor_ns : ceil_ns;
	r->init_rto_ns = init_rto_ns;
	r->min_win_ns = min_win_ns;
}

static void minmax_reset(struct mrxe_rtt *r, u64 t, u64 v)
{
	r->min[0].t = t;
	r->min[0].v = v;
	r->min[1] = r->min[0];
	r->min[2] = r->min[0];
}

/* Running windowed min, as lib/win_minmax.c minmax_running_min(). */
static void minmax_update(struct mrxe_rtt *r, u64 t, u64 v)
{
	struct mrxe_minmax_sample *s = r->min;
	struct mrxe_minmax_sample val = { .t = t, .v = v };
	u64 win = r->min_win_ns;
	u64 dt;

	if (!r->samples || v <= s[0].v || t - s[2].t > win) {
		minmax_reset(r, t, v);
		return;
	}
	if (v <= s[1].v) {
		s[1] = val;
		s[2] = val;
	} else if (v <= s[2].v) {
		s[2] = val;
	}
	dt = t - s[0].t;
	if (dt > win) {
		s[0] = s[1];
		s[1] = s[2];
		s[2] = val;
		if (t - s[0].t > win) {
			s[0] = s[1];
			s[1] = s[2];
			s[2] = val;
		}
	} else if (s[1].t == s[0].t && dt > (win >> 2)) {
		s[1] = val;
		s[2] = val;
	} else if (s[2].t == s[1].t && dt > (win >> 1)) {
		s[2] = val;
	}
}

void mrxe_rtt_sample(struct mrxe_rtt *r, u64 rtt_ns, u64 now_ns)
{
	u64 err;

	minmax_update(r, now_ns, rtt_ns);
	r->latest_ns = rtt_ns;
	/* a learnt stall fades: halved every min_win_ns without a new one */
	if (r->stall_ns && now_ns - r->stall_at_ns > r->min_win_ns) {
		r->stall_ns >>= 1;
		r->stall_at_ns = now_ns;
		if (r->stall_ns <= r->floor_ns)
			r->stall_ns = 0;
	}
	if (!r->srtt_ns) {
		/* RFC 6298 2.2 */
		r->srtt_ns = rtt_ns ? rtt_ns : 1;
		r->rttvar_ns = rtt_ns >> 1;
	} else {
		/* RFC 6298 2.3: RTTVAR first, with the old SRTT */
		err = r->srtt_ns > rtt_ns ? r->srtt_ns - rtt_ns :
					    rtt_ns - r->srtt_ns;
		r->rttvar_ns = (3 * r->rttvar_ns + err) >> 2;
		r->srtt_ns = (7 * r->srtt_ns + rtt_ns) >> 3;
		if (!r->srtt_ns)
			r->srtt_ns = 1;
	}
	r->samples++;
	r->backoff = 0;
}

static u64 clamp_rto(const struct mrxe_rtt *r, u64 rto)
{
	if (rto < r->floor_ns)
		return r->floor_ns;
	if (rto > r->ceil_ns)
		return r->ceil_ns;
	return rto;
}

u64 mrxe_rtt_rto(const struct mrxe_rtt *r)
{
	u64 rto = r->srtt_ns ? mrxe_rtt_rto_est(r) : r->init_rto_ns;
	u32 i;

	if (rto < r->stall_ns)
		rto = r->stall_ns;
	rto = clamp_rto(r, rto);
	for (i = 0; i < r->backoff && rto < r->ceil_ns; i++)
		rto <<= 1;
	return clamp_rto(r, rto);
}

void mrxe_rtt_backoff(struct mrxe_rtt *r)
{
	/* Stop counting once the ceiling is reached: no shift overflow. */
	if (r->backoff < 63 && mrxe_rtt_rto(r) < r->ceil_ns)
		r->backoff++;
}

void mrxe_rtt_spurious(struct mrxe_rtt *r, u64 silence_ns, u64 now_ns)
{
	u64 want = silence_ns + (silence_ns >> 2);

	if (want > r->ceil_ns)
		want = r->ceil_ns;
	if (want > r->stall_ns)
		r->stall_ns = want;
	r->stall_at_ns = now_ns;
}
