// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DCQCN reaction point, CNP pacing and the pacer.  See mrxe_dcqcn.h for the
 * equations (Zhu et al., SIGCOMM 2015, Figure 7) and the invariant.
 */
#include "mrxe_dcqcn.h"

#define US	1000ULL
/* A timer that fell this many periods behind skips the rest. */
#define MRXE_DCQCN_MAX_CATCHUP	4096

void mrxe_dcqcn_params_default(struct mrxe_dcqcn_params *p, u64 line_kbps)
{
	p->line_kbps = line_kbps;
	p->min_kbps = 100;		/* 100 kbit/s */
	p->g = MRXE_DCQCN_G_ONE / 256;	/* paper: g = 1/256 */
	p->alpha_us = 55;		/* paper: K = 55 us */
	p->timer_us = 300;		/* lab: T = 300 us */
	p->byte_counter = 10ULL << 20;	/* paper: B = 10 MB */
	p->ai_kbps = 1000;		/* lab: R_AI = 1 Mbit/s */
	p->hai_kbps = 5000;		/* lab: R_HAI = 5 Mbit/s */
	p->f = 5;			/* paper: F = 5 */
}

void mrxe_dcqcn_init(struct mrxe_dcqcn *d, const struct mrxe_dcqcn_params *p)
{
	memset(d, 0, sizeof(*d));
	d->p = *p;
	if (!d->p.line_kbps)
		d->p.line_kbps = 1;
	if (d->p.min_kbps > d->p.line_kbps)
		d->p.min_kbps = d->p.line_kbps;
	if (!d->p.min_kbps)
		d->p.min_kbps = 1;
	if (!d->p.g || d->p.g > MRXE_DCQCN_G_ONE)
		d->p.g = MRXE_DCQCN_G_ONE / 256;
	if (!d->p.alpha_us)
		d->p.alpha_us = 1;
	if (!d->p.timer_us)
		d->p.timer_us = 1;
	if (!d->p.ai_kbps)		/* Rt must be able to grow */
		d->p.ai_kbps = 1;
	d->rc_kbps = d->p.line_kbps;
	d->rt_kbps = d->p.line_kbps;
	d->alpha = MRXE_DCQCN_ONE;
}

/* alpha = (1 - g) alpha, at least one unit down so it reaches 0 */
static void dcqcn_alpha_decay(struct mrxe_dcqcn *d)
{
	u64 dec = ((u64)d->alpha * d->p.g) >> 16;

	if (!dec)
		dec = 1;
	d->alpha = d->alpha > dec ? d->alpha - (u32)dec : 0;
}

static bool dcqcn_limited(const struct mrxe_dcqcn *d)
{
	return d->rc_kbps < d->p.line_kbps;
}

void mrxe_dcqcn_cnp(struct mrxe_dcqcn *d, u64 now_ns)
{
	u64 rc = d->rc_kbps;
	u64 a;

	/* Rt = Rc; Rc = Rc (1 - alpha / 2) */
	d->rt_kbps = rc;
	rc = (rc * (2ULL * MRXE_DCQCN_ONE - d->alpha)) >> 21;
	d->rc_kbps = max_t(u64, rc, d->p.min_kbps);
	if (d->rc_kbps > d->rt_kbps)	/* rt was already at the floor */
		d->rc_kbps = d->rt_kbps;
	/* alpha = (1 - g) alpha + g */
	a = (u64)d->alpha * (MRXE_DCQCN_G_ONE - d->p.g) +
	    (u64)MRXE_DCQCN_ONE * d->p.g;
	d->alpha = (u32)min_t(u64, a >> 16, MRXE_DCQCN_ONE);
	/* the byte counter, the timer and the stage counts restart */
	d->t_cnt = 0;
	d->bc_cnt = 0;
	d->bytes = 0;
	d->alpha_next_ns = now_ns + d->p.alpha_us * US;
	d->rate_next_ns = now_ns + d->p.timer_us * US;
	d->cuts++;
}

static void dcqcn_increase(struct mrxe_dcqcn *d)
{
	u32 hi = max(d->t_cnt, d->bc_cnt), lo = min(d->t_cnt, d->bc_cnt);
	u64 rt = d->rt_kbps;

	if (!d->p.byte_counter)		/* only the timer counts stages */
		hi = lo = d->t_cnt;
	if (hi < d->p.f)
		;				/* fast recovery: Rt stays */
	else if (lo > d->p.f)
		rt += (u64)(lo - d->p.f) * d->p.hai_kbps;	/* hyper */
	else
		rt += d->p.ai_kbps;		/* additive */
	d->rt_kbps = min(rt, d->p.line_kbps);
	/* Rc = (Rt + Rc) / 2, rounded up so that Rc reaches Rt */
	d->rc_kbps = (d->rt_kbps + d->rc_kbps + 1) / 2;
}

void mrxe_dcqcn_sent(struct mrxe_dcqcn *d, u64 bytes, u64 now_ns)
{
	if (!d->p.byte_counter || !dcqcn_limited(d))
		return;
	d->bytes += bytes;
	while (d->bytes >= d->p.byte_counter && dcqcn_limited(d)) {
		d->bytes -= d->p.byte_counter;
		d->bc_cnt++;
		dcqcn_increase(d);
	}
}

void mrxe_dcqcn_tick(struct mrxe_dcqcn *d, u64 now_ns)
{
	u64 k = d->p.alpha_us * US, t = d->p.timer_us * US;
	u32 n;

	for (n = 0; d->alpha_next_ns && d->alpha_next_ns <= now_ns; n++) {
		if (n == MRXE_DCQCN_MAX_CATCHUP) {
			d->alpha_next_ns = now_ns + k;
			break;
		}
		dcqcn_alpha_decay(d);
		/* the alpha timer stops once alpha is 0 and nothing limits */
		d->alpha_next_ns = d->alpha || dcqcn_limited(d) ?
				   d->alpha_next_ns + k : 0;
	}
	for (n = 0; d->rate_next_ns && d->rate_next_ns <= now_ns; n++) {
		if (n == MRXE_DCQCN_MAX_CATCHUP) {
			d->rate_next_ns = now_ns + t;
			break;
		}
		d->t_cnt++;
		dcqcn_increase(d);
		d->rate_next_ns = dcqcn_limited(d) ? d->rate_next_ns + t : 0;
	}
	if (!dcqcn_limited(d))
		d->bytes = 0;
}

u64 mrxe_dcqcn_next(const struct mrxe_dcqcn *d)
{
	if (!d->alpha_next_ns)
		return d->rate_next_ns;
	if (!d->rate_next_ns)
		return d->alpha_next_ns;
	return min(d->alpha_next_ns, d->rate_next_ns);
}

bool mrxe_cnp_np_may_send(struct mrxe_cnp_np *np, u64 now_ns,
			  u64 interval_ns)
{
	if (np->sent && now_ns - np->last_ns < interval_ns)
		return false;
	np->sent = true;
	np->last_ns = now_ns;
	return true;
}

/* ---- pacer ---- */

/* bytes that @dt_ns at @kbps is worth: kbit/s * ns / 8e6 */
static u64 pacer_bytes(u64 kbps, u64 dt_ns)
{
	/* cap dt so the product cannot overflow (kbps < 2^34) */
	if (dt_ns > 1000ULL * 1000 * 1000)
		dt_ns = 1000ULL * 1000 * 1000;
	return mrxe_div64(kbps * dt_ns, 8ULL * 1000 * 1000);
}

void mrxe_pacer_init(struct mrxe_pacer *pc, u64 rate_kbps, u64 burst_bytes,
		     u64 now_ns)
{
	pc->rate_kbps = rate_kbps;
	pc->burst_bytes = burst_bytes;
	pc->tokens = (s64)burst_bytes;
	pc->last_ns = now_ns;
}

static void pacer_refill(struct mrxe_pacer *pc, u64 now_ns)
{
	u64 add;
	s64 t;

	if (now_ns <= pc->last_ns)
		return;
	add = pacer_bytes(pc->rate_kbps, now_ns - pc->last_ns);
	if (!add)
		return;		/* keep last_ns: the fraction accumulates */
	t = pc->tokens + (s64)add;
	if (t >= (s64)pc->burst_bytes) {
		pc->tokens = (s64)pc->burst_bytes;
		pc->last_ns = now_ns;
		return;
	}
	pc->tokens = t;
	/*
	 * Advance by what @add is worth, rounded up: the fraction left over
	 * is credited later, never twice.
	 */
	pc->last_ns += mrxe_div64(add * 8ULL * 1000 * 1000 + pc->rate_kbps - 1,
				  pc->rate_kbps);
}

void mrxe_pacer_set_rate(struct mrxe_pacer *pc, u64 rate_kbps, u64 now_ns)
{
	if (pc->rate_kbps)
		pacer_refill(pc, now_ns);
	else
		pc->last_ns = now_ns;
	pc->rate_kbps = rate_kbps;
}

u64 mrxe_pacer_admit(struct mrxe_pacer *pc, u32 len, u64 now_ns)
{
	u64 need;

	if (!pc->rate_kbps)
		return 0;
	pacer_refill(pc, now_ns);
	if (pc->tokens > 0) {
		pc->tokens -= len;
		return 0;
	}
	/* time until the bucket holds one byte: (1 - tokens) * 8e6 / kbps */
	need = (u64)(1 - pc->tokens);
	return now_ns + 1 + mrxe_div64(need * 8ULL * 1000 * 1000 +
				       pc->rate_kbps - 1, pc->rate_kbps);
}
