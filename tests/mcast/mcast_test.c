// SPDX-License-Identifier: GPL-2.0
/*
 * UD multicast through plain libibverbs (ibv_attach_mcast/ibv_detach_mcast
 * are not wrapped by pyverbs v44).
 *
 * usage: mrxe-mcast-test SRC_DEV SRC_GIDX DST_DEV DST_GIDX DST_NETDEV
 *
 * Run inside the network namespace of DST_NETDEV (it reads that
 * namespace's /proc/net/igmp, igmp6 and dev_mcast).  Steps, each printing
 * "ok: ..." or "FAIL: ...":
 *  1. query_device reports the multicast limits (non-zero).
 *  2. bad input: attach of an RC QP, attach to a unicast GID, detach of a
 *     QP that is not attached, detach twice: each fails with EINVAL;
 *     duplicate attach succeeds (idempotent, as rxe and uverbs).
 *  3. the netdev joins the IP group while a QP is attached (IGMP for
 *     ::ffff:239.1.2.4, MLD for ff0e::4d:1, their MACs in dev_mcast) and
 *     leaves it after the last detach.
 *  4. traffic: QPs q0, q1 (Q_Key QKEY) and q2 (another Q_Key) attached to
 *     239.1.2.4, q3 not attached; the sender on SRC_DEV posts N UD sends
 *     to QPN 0xFFFFFF: q0 and q1 each receive exactly N datagrams with the
 *     right bytes, GRH (destination 239.1.2.4) and source QPN; q2 and q3
 *     receive nothing.
 *  5. after detaching q1, another N sends reach q0 only.
 *  6. destroying an attached QP is refused (EBUSY, uverbs); after the last
 *     detach the netdev left the groups and later sends reach nobody.
 *  7. a sender QP posts N unsignaled sends, then its AH and the QP are
 *     destroyed at once (mckey), in ROUNDS rounds: q1 (attached again)
 *     receives all N each time.
 *
 * mrxe-mcast-test exit-attached DEV NETDEV: attach a QP to both groups and
 * exit without detaching (the kernel's cleanup must detach and leave).
 * Exit status 0 when every step passed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define QKEY		0x11111111u
#define OTHER_QKEY	0x22222222u
#define GRH_LEN		40
#define MSG		200
#define N		20
#define DEPTH		64
#define ROUNDS		5
#define SLOT		(GRH_LEN + MSG)

static int failures;

static void okf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("ok: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

static void failf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failures++;
}

static void die(const char *what)
{
	printf("FAIL: %s: %s\n", what, strerror(errno));
	exit(1);
}

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int gidx;
};

struct uqp {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;		/* DEPTH slots of SLOT bytes */
};

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; l && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), name))
			ctx = ibv_open_device(l[i]);
	if (l)
		ibv_free_device_list(l);
	if (!ctx) {
		printf("FAIL: cannot open %s\n", name);
		exit(1);
	}
	return ctx;
}

static uint8_t pat(unsigned int msg, unsigned int i)
{
	return (uint8_t)(i * 131 + msg * 29 + 0x5c);
}

static void post_recv(struct uqp *u, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(u->buf + (size_t)slot * SLOT),
		.length = SLOT,
		.lkey = u->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(u->qp, &wr, &bad))
		die("ibv_post_recv");
}

static struct uqp make_qp(struct side *s, enum ibv_qp_type type, uint32_t qkey,
			  bool to_rts)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = type,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {};
	struct uqp u = {};

	u.cq = ibv_create_cq(s->ctx, 2 * DEPTH, NULL, NULL, 0);
	if (!u.cq)
		die("ibv_create_cq");
	ia.send_cq = u.cq;
	ia.recv_cq = u.cq;
	u.qp = ibv_create_qp(s->pd, &ia);
	if (!u.qp)
		die("ibv_create_qp");
	u.buf = calloc(DEPTH, SLOT);
	u.mr = ibv_reg_mr(s->pd, u.buf, DEPTH * SLOT, IBV_ACCESS_LOCAL_WRITE);
	if (!u.buf || !u.mr)
		die("ibv_reg_mr");
	if (!to_rts)
		return u;
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = qkey;
	if (ibv_modify_qp(u.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		die("modify INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(u.qp, &a, IBV_QP_STATE))
		die("modify RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(u.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("modify RTS");
	for (unsigned int i = 0; i < DEPTH; i++)
		post_recv(&u, i);
	return u;
}

static void free_qp(struct uqp *u)
{
	if (u->qp && ibv_destroy_qp(u->qp))
		failf("ibv_destroy_qp: %s", strerror(errno));
	ibv_dereg_mr(u->mr);
	ibv_destroy_cq(u->cq);
	free(u->buf);
	memset(u, 0, sizeof(*u));
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* errno of a verbs call returning an errno value (0 = success) */
static void expect_err(const char *what, int ret, int want)
{
	if (ret == want)
		okf("%s: %s", what, want ? strerror(want) : "success");
	else
		failf("%s: got %d (%s), want %d (%s)", what, ret,
		      ret ? strerror(ret) : "success", want,
		      want ? strerror(want) : "success");
}

/* Whole-line-insensitive search of needle in a /proc file. */
static bool file_has(const char *path, const char *needle)
{
	char line[512];
	bool found = false;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strcasestr(line, needle) != NULL;
	fclose(f);
	return found;
}

/* /proc/net/igmp: "<tab><tab>GROUP ..." lines after the device's line. */
static bool igmp_has(const char *ndev, const char *group_hex)
{
	char line[512];
	bool in_dev = false, found = false;
	FILE *f = fopen("/proc/net/igmp", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (line[0] != '\t' && line[0] != ' ')
			in_dev = strstr(line, ndev) != NULL;
		else if (in_dev && strcasestr(line, group_hex))
			found = true;
	}
	fclose(f);
	return found;
}

static void check_membership(const char *ndev, bool want, const char *when)
{
	/* 239.1.2.4 as the raw __be32 printed "%08X" on little endian */
	bool v4 = igmp_has(ndev, "040201EF");
	bool v4mac = file_has("/proc/net/dev_mcast", "01005e010204");
	bool v6 = file_has("/proc/net/igmp6", "ff0e000000000000000000000000004d");
	bool v6mac = file_has("/proc/net/dev_mcast", "33330000004d");

	if (v4 == want && v4mac == want && v6 == want && v6mac == want)
		okf("%s: %s IGMP 239.1.2.4 / MLD ff0e::4d and their MACs %s",
		    when, ndev, want ? "joined" : "left");
	else
		failf("%s: %s membership igmp=%d mac=%d igmp6=%d mac6=%d, want %d",
		      when, ndev, v4, v4mac, v6, v6mac, want);
}

/*
 * Poll every receiver for up to `secs`; count[i] completions, each checked:
 * status, length, GRH flag and destination, source QP, payload.  Once every
 * receiver has what want[] expects (and something is expected), polling
 * goes on for GRACE seconds more, to see a datagram that should not come
 * (they travel in the same burst), instead of the whole `secs`: an
 * all-zero want[] waits the whole time.
 */
#define GRACE	0.5
static void collect(struct uqp *rx, int nrx, unsigned int *count,
		    uint32_t src_qpn, unsigned int first_msg, double secs,
		    const unsigned int *want)
{
	double end = now() + secs;
	bool settled = false, want_any = false;
	struct ibv_wc wc;

	memset(count, 0, sizeof(*count) * nrx);
	for (int i = 0; i < nrx; i++)
		want_any |= want[i] > 0;
	while (now() < end) {
		if (want_any && !settled) {
			bool all = true;

			for (int i = 0; i < nrx; i++)
				all &= count[i] >= want[i];
			if (all) {
				settled = true;
				if (now() + GRACE < end)
					end = now() + GRACE;
			}
		}
		for (int i = 0; i < nrx; i++) {
			if (!rx[i].qp || ibv_poll_cq(rx[i].cq, 1, &wc) != 1)
				continue;
			uint8_t *b = rx[i].buf + wc.wr_id * SLOT;
			unsigned int msg = first_msg + count[i];
			struct in_addr d;

			count[i]++;
			if (wc.status != IBV_WC_SUCCESS ||
			    wc.opcode != IBV_WC_RECV ||
			    wc.byte_len != GRH_LEN + MSG) {
				failf("q%d: status %s opcode %d byte_len %u", i,
				      ibv_wc_status_str(wc.status), wc.opcode,
				      wc.byte_len);
				continue;
			}
			if (!(wc.wc_flags & IBV_WC_GRH) || wc.src_qp != src_qpn)
				failf("q%d: wc_flags 0x%x src_qp 0x%x (want GRH, 0x%x)",
				      i, wc.wc_flags, wc.src_qp, src_qpn);
			/* RoCEv2/IPv4: IPv4 header in the GRH's last 20 bytes */
			memcpy(&d, b + GRH_LEN - 20 + 16, 4);
			if (d.s_addr != inet_addr("239.1.2.4"))
				failf("q%d: GRH destination %s", i, inet_ntoa(d));
			for (unsigned int k = 0; k < MSG; k++) {
				if (b[GRH_LEN + k] != pat(msg, k)) {
					failf("q%d: message %u byte %u = 0x%02x, want 0x%02x",
					      i, msg, k, b[GRH_LEN + k], pat(msg, k));
					break;
				}
			}
			post_recv(&rx[i], wc.wr_id);
		}
	}
}

static void send_n(struct uqp *tx, struct ibv_ah *ah, unsigned int first_msg)
{
	struct ibv_wc wc;

	for (unsigned int m = first_msg; m < first_msg + N; m++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)tx->buf, .length = MSG,
			.lkey = tx->mr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = m, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *bad;
		double end = now() + 10;
		int n;

		for (unsigned int k = 0; k < MSG; k++)
			tx->buf[k] = pat(m, k);
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = 0xffffff;	/* IBA 10.5.2.4 multicast QPN */
		wr.wr.ud.remote_qkey = QKEY;
		if (ibv_post_send(tx->qp, &wr, &bad))
			die("ibv_post_send");
		while ((n = ibv_poll_cq(tx->cq, 1, &wc)) == 0 && now() < end)
			usleep(1000);
		if (n != 1 || wc.status != IBV_WC_SUCCESS) {
			failf("send %u: %s", m, n == 1 ?
			      ibv_wc_status_str(wc.status) : "no completion");
			return;
		}
		usleep(2000);	/* pace: a datagram lost to a full rxq is lost */
	}
}

/*
 * A fresh UD QP and AH on @s: N unsignaled sends (messages first..first+N-1,
 * each from its own buffer slot), then, right after the last post, the AH
 * and the QP are destroyed (mckey's order).  Returns the QPN.
 */
static uint32_t burst_and_destroy(struct side *s,
				  const struct ibv_ah_attr *aa,
				  unsigned int first)
{
	struct uqp tx = make_qp(s, IBV_QPT_UD, QKEY, true);
	uint32_t qpn = tx.qp->qp_num;
	struct ibv_ah *ah = ibv_create_ah(s->pd, (struct ibv_ah_attr *)aa);

	if (!ah)
		die("ibv_create_ah");

	for (unsigned int i = 0; i < N; i++) {
		uint8_t *b = tx.buf + i * SLOT;
		struct ibv_sge sge = {
			.addr = (uintptr_t)b, .length = MSG,
			.lkey = tx.mr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND,
		}, *bad;

		for (unsigned int k = 0; k < MSG; k++)
			b[k] = pat(first + i, k);
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = 0xffffff;
		wr.wr.ud.remote_qkey = QKEY;
		if (ibv_post_send(tx.qp, &wr, &bad))
			die("ibv_post_send");
	}
	if (ibv_destroy_ah(ah))
		failf("ibv_destroy_ah: %s", strerror(errno));
	free_qp(&tx);
	return qpn;
}

static void expect_counts(const char *step, const unsigned int *count,
			  const unsigned int *want, int n)
{
	bool good = true;

	for (int i = 0; i < n; i++)
		good &= count[i] == want[i];
	if (good) {
		okf("%s: received q0..q3 = %u %u %u %u (bytes, GRH, src QPN checked)",
		    step, count[0], count[1], count[2], count[3]);
	} else {
		failf("%s: received q0..q3 = %u %u %u %u, want %u %u %u %u", step,
		      count[0], count[1], count[2], count[3],
		      want[0], want[1], want[2], want[3]);
	}
}

int main(int argc, char **argv)
{
	union ibv_gid mgid4 = {}, mgid6 = {}, ucast = {};
	struct ibv_device_attr da;
	struct side src, dst;
	struct uqp rc, tx, rx[4];
	unsigned int count[4];
	struct ibv_ah_attr aa = {};
	struct ibv_ah *ah;
	const char *ndev;

	if (argc == 4 && !strcmp(argv[1], "exit-attached")) {
		/* attach one UD QP to both groups and exit without cleanup */
		dst.ctx = open_dev(argv[2]);
		dst.pd = ibv_alloc_pd(dst.ctx);
		if (!dst.pd)
			die("ibv_alloc_pd");
		mgid4.raw[10] = 0xff;
		mgid4.raw[11] = 0xff;
		mgid4.raw[12] = 239;
		mgid4.raw[13] = 1;
		mgid4.raw[14] = 2;
		mgid4.raw[15] = 4;
		mgid6.raw[0] = 0xff;
		mgid6.raw[1] = 0x0e;
		mgid6.raw[15] = 0x4d;
		rx[0] = make_qp(&dst, IBV_QPT_UD, QKEY, true);
		expect_err("attach", ibv_attach_mcast(rx[0].qp, &mgid4, 0), 0);
		expect_err("attach", ibv_attach_mcast(rx[0].qp, &mgid6, 0), 0);
		check_membership(argv[3], true, "attached, exiting");
		_exit(failures ? 1 : 0);
	}
	if (argc != 6) {
		fprintf(stderr, "usage: %s SRC_DEV SRC_GIDX DST_DEV DST_GIDX DST_NETDEV\n",
			argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	src.ctx = open_dev(argv[1]);
	src.gidx = atoi(argv[2]);
	dst.ctx = open_dev(argv[3]);
	dst.gidx = atoi(argv[4]);
	ndev = argv[5];
	src.pd = ibv_alloc_pd(src.ctx);
	dst.pd = ibv_alloc_pd(dst.ctx);
	if (!src.pd || !dst.pd)
		die("ibv_alloc_pd");

	/* ::ffff:239.1.2.4 and ff0e::4d */
	mgid4.raw[10] = 0xff;
	mgid4.raw[11] = 0xff;
	mgid4.raw[12] = 239;
	mgid4.raw[13] = 1;
	mgid4.raw[14] = 2;
	mgid4.raw[15] = 4;
	mgid6.raw[0] = 0xff;
	mgid6.raw[1] = 0x0e;
	mgid6.raw[15] = 0x4d;
	if (ibv_query_gid(dst.ctx, 1, dst.gidx, &ucast))
		die("ibv_query_gid");

	/* 1. limits */
	if (ibv_query_device(dst.ctx, &da))
		die("ibv_query_device");
	if (da.max_mcast_grp > 0 && da.max_mcast_qp_attach > 0 &&
	    da.max_total_mcast_qp_attach >= da.max_mcast_qp_attach)
		okf("max_mcast_grp %d max_mcast_qp_attach %d max_total_mcast_qp_attach %d",
		    da.max_mcast_grp, da.max_mcast_qp_attach,
		    da.max_total_mcast_qp_attach);
	else
		failf("multicast limits %d/%d/%d", da.max_mcast_grp,
		      da.max_mcast_qp_attach, da.max_total_mcast_qp_attach);

	/* 2. bad input */
	rc = make_qp(&dst, IBV_QPT_RC, 0, false);
	expect_err("attach of an RC QP", ibv_attach_mcast(rc.qp, &mgid4, 0),
		   EINVAL);
	free_qp(&rc);
	rx[0] = make_qp(&dst, IBV_QPT_UD, QKEY, true);
	rx[1] = make_qp(&dst, IBV_QPT_UD, QKEY, true);
	rx[2] = make_qp(&dst, IBV_QPT_UD, OTHER_QKEY, true);
	rx[3] = make_qp(&dst, IBV_QPT_UD, QKEY, true);
	expect_err("attach to a unicast GID",
		   ibv_attach_mcast(rx[0].qp, &ucast, 0), EINVAL);
	expect_err("detach of a QP that is not attached",
		   ibv_detach_mcast(rx[0].qp, &mgid4, 0), EINVAL);
	check_membership(ndev, false, "before attach");
	expect_err("attach q0 to ::ffff:239.1.2.4",
		   ibv_attach_mcast(rx[0].qp, &mgid4, 0), 0);
	expect_err("attach q0 again (idempotent)",
		   ibv_attach_mcast(rx[0].qp, &mgid4, 0), 0);
	expect_err("attach q0 to ff0e::4d", ibv_attach_mcast(rx[0].qp, &mgid6, 0),
		   0);
	check_membership(ndev, true, "attached");
	expect_err("detach q0 from ff0e::4d",
		   ibv_detach_mcast(rx[0].qp, &mgid6, 0), 0);
	expect_err("detach q0 from ff0e::4d again",
		   ibv_detach_mcast(rx[0].qp, &mgid6, 0), EINVAL);
	expect_err("detach q0 from ::ffff:239.1.2.4",
		   ibv_detach_mcast(rx[0].qp, &mgid4, 0), 0);
	check_membership(ndev, false, "after the last detach");

	/* 4. traffic */
	tx = make_qp(&src, IBV_QPT_UD, QKEY, true);
	aa.is_global = 1;
	aa.port_num = 1;
	aa.grh.dgid = mgid4;
	aa.grh.sgid_index = src.gidx;
	aa.grh.hop_limit = 8;
	ah = ibv_create_ah(src.pd, &aa);
	if (!ah)
		die("ibv_create_ah (multicast DGID)");
	for (int i = 0; i < 3; i++)
		expect_err("attach", ibv_attach_mcast(rx[i].qp, &mgid4, 0), 0);
	send_n(&tx, ah, 0);
	const unsigned int w_all[] = { N, N, 0, 0 };
	collect(rx, 4, count, tx.qp->qp_num, 0, 3, w_all);
	expect_counts("all attached", count, w_all, 4);

	/* 5. detach q1 */
	expect_err("detach q1", ibv_detach_mcast(rx[1].qp, &mgid4, 0), 0);
	send_n(&tx, ah, N);
	const unsigned int w_q1_out[] = { N, 0, 0, 0 };
	collect(rx, 4, count, tx.qp->qp_num, N, 3, w_q1_out);
	expect_counts("q1 detached", count, w_q1_out, 4);

	/*
	 * 6. uverbs refuses to destroy an attached QP (EBUSY, the user must
	 * detach first); process exit detaches by itself ("exit-attached").
	 */
	expect_err("destroy of an attached QP", ibv_destroy_qp(rx[0].qp) ? errno : 0,
		   EBUSY);
	expect_err("detach q0", ibv_detach_mcast(rx[0].qp, &mgid4, 0), 0);
	expect_err("detach q2", ibv_detach_mcast(rx[2].qp, &mgid4, 0), 0);
	free_qp(&rx[0]);
	free_qp(&rx[2]);
	check_membership(ndev, false, "last member detached");
	send_n(&tx, ah, 2 * N);
	const unsigned int w_none[] = { 0, 0, 0, 0 };
	collect(rx, 4, count, tx.qp->qp_num, 2 * N, 2, w_none);
	expect_counts("no member left", count, w_none, 4);

	/*
	 * 7. a sender that posts unsignaled datagrams and destroys its AH and
	 * QP at once (mckey, most UD tools): every datagram still leaves.
	 * Several rounds, each with a fresh sender QP and AH.
	 */
	expect_err("attach q1", ibv_attach_mcast(rx[1].qp, &mgid4, 0), 0);
	for (unsigned int r = 0; r < ROUNDS; r++) {
		unsigned int first = (3 + r) * N;
		uint32_t qpn = burst_and_destroy(&src, &aa, first);
		char step[64];

		const unsigned int w_q1[] = { 0, N, 0, 0 };

		collect(rx, 4, count, qpn, first, 2, w_q1);
		snprintf(step, sizeof(step), "sender destroyed after posting, round %u", r);
		expect_counts(step, count, w_q1, 4);
	}
	expect_err("detach q1", ibv_detach_mcast(rx[1].qp, &mgid4, 0), 0);

	ibv_destroy_ah(ah);
	free_qp(&tx);
	free_qp(&rx[1]);
	free_qp(&rx[3]);
	ibv_dealloc_pd(src.pd);
	ibv_dealloc_pd(dst.pd);
	ibv_close_device(src.ctx);
	ibv_close_device(dst.ctx);
	printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
	return failures ? 1 : 0;
}
