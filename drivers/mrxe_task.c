// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Per-QP pipeline driver: the work item that runs responder, completer and
 * requester, the hrtimers (retransmit, RNR), QP state changes and the glue
 * to mrxe_net.  See mrxe_pipe.h for the execution model and locking.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <net/inet_ecn.h>
#include <net/sock.h>

#include "mrxe_dp.h"

#define MRXE_WORK_BUDGET	256	/* packets per work run, then requeue */
#define MRXE_INLINE_BUDGET	32	/* packets a user doorbell sends itself */

void mrxe_pipe_sched(struct mrxe_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->pipe.lock, flags);
	if (!qp->pipe.dying)
		queue_work(qp->pipe.wq, &qp->pipe.work);
	spin_unlock_irqrestore(&qp->pipe.lock, flags);
}

/*
 * QP priority (design.rst "QP priority"): a QP at MRXE_PRIO_HIGH or above
 * runs on high-priority workers; the others too, unless the device has
 * such a QP: then theirs run on normal workers, which the high-priority
 * QP's work and the applications (a latency-critical one included)
 * preempt.  Counted at modify (IB_QP_AV), under qp->state_lock.
 */
void mrxe_pipe_prio_set(struct mrxe_qp *qp, u8 prio)
{
	bool hi = prio >= MRXE_PRIO_HIGH;
	bool was_hi = qp->pipe.prio >= MRXE_PRIO_HIGH;

	WRITE_ONCE(qp->pipe.prio, prio);
	if (hi == was_hi)
		return;
	if (hi)
		atomic_inc(&qp_dev(qp)->num_prio_qp);
	else
		atomic_dec(&qp_dev(qp)->num_prio_qp);
}

/*
 * Move the QP's work to the queue its priority selects, at the end of a
 * run: the next queue_work() goes there.  Until this run returns, a run on
 * the new queue may start on another CPU (the workqueue code keeps a work
 * item from running twice only on one queue); it waits for pipe.mutex, and
 * mrxe_pipe_cleanup() flushes both queues of a QP that moved.
 */
static void mrxe_pipe_pick_wq(struct mrxe_qp *qp)
{
	struct mrxe_dev *dev = qp_dev(qp);
	struct workqueue_struct *wq = dev->wq_hi;
	unsigned long flags;

	if (READ_ONCE(qp->pipe.prio) < MRXE_PRIO_HIGH &&
	    atomic_read(&dev->num_prio_qp))
		wq = dev->wq;
	if (wq == READ_ONCE(qp->pipe.wq))
		return;
	spin_lock_irqsave(&qp->pipe.lock, flags);
	qp->pipe.wq = wq;
	qp->pipe.moved = true;
	spin_unlock_irqrestore(&qp->pipe.lock, flags);
	if (wq == dev->wq)
		mrxe_qp_counter_inc(qp, MRXE_CNT_PRIO_DEMOTED);
}

/*
 * Queue a received packet for the QP's work item and schedule it, under
 * pipe.lock so that mrxe_pipe_cleanup() cannot race us.  False (the caller
 * drops and counts it) when the QP is dying or @q already holds @qmax.
 *
 * A packet that finds the QP idle (nothing queued on either side, work not
 * pending) is handled by a per-CPU worker on this CPU, the one that took
 * it (dev->wq_mode 1, design.rst "The caller runs the pipeline"): no other
 * CPU has to be woken for a ping-pong's reply.  The run's own requeue
 * goes to pipe.wq, unbound, so a streaming QP spreads over the CPUs.  The
 * work may then be queued on two queues at once (it waits for pipe.mutex
 * either way); pipe.moved makes cleanup flush both.
 */
bool mrxe_pipe_enqueue(struct mrxe_qp *qp, struct sk_buff_head *q, u32 qmax,
		       struct sk_buff *skb)
{
	struct mrxe_dev *dev = qp_dev(qp);
	unsigned long flags;
	bool ok, idle;

	spin_lock_irqsave(&qp->pipe.lock, flags);
	ok = !qp->pipe.dying && skb_queue_len(q) < qmax;
	if (ok) {
		idle = dev->wq_mode == 1 && qp->pipe.wq == dev->wq_hi &&
		       skb_queue_empty(&qp->resp.rxq) &&
		       skb_queue_empty(&qp->comp.rxq) &&
		       !work_pending(&qp->pipe.work);
		skb_queue_tail(q, skb);
		if (idle) {
			qp->pipe.moved = true;
			queue_work_on(raw_smp_processor_id(), dev->wq_cpu,
				      &qp->pipe.work);
		} else {
			queue_work(qp->pipe.wq, &qp->pipe.work);
		}
	}
	spin_unlock_irqrestore(&qp->pipe.lock, flags);
	return ok;
}

/*
 * A transport error moves the QP to ERROR (IBA 10.3.1, 9.9.3).  The pipeline
 * stops right away; mrxe_qp_error() (object code, may sleep / re-enter
 * mrxe_pipe_modify) is called once the work drops pipe.mutex.
 */
void mrxe_pipe_set_error(struct mrxe_qp *qp)
{
	mrxe_dbg_dev(qp_dev(qp), "qp %u: to ERROR (%pS)\n", qp->ibqp.qp_num,
		     __builtin_return_address(0));
	qp->pipe.want_error = true;
	qp->pipe.state = IB_QPS_ERR;
}

u16 mrxe_pipe_sport(struct mrxe_qp *qp, u32 psn)
{
	/*
	 * Standard RoCEv2: one flow, the QP's port (IBA A17.4.2).  MetaRoCE
	 * chooses per packet elsewhere: the requester's path set
	 * (mrxe_path_glue_sport) and the responder's reflected port
	 * (resp_sport in mrxe_resp.c).
	 */
	return qp->pipe.sport;
}

u8 mrxe_pipe_ecn(struct mrxe_qp *qp)
{
	return READ_ONCE(qp_dev(qp)->cfg.ecn) ? INET_ECN_ECT_0 : INET_ECN_NOT_ECT;
}

struct sk_buff *mrxe_pipe_alloc_pkt(struct mrxe_qp *qp,
				    const struct mrxe_av *av, u32 len)
{
	struct sk_buff *skb;

	skb = mrxe_net_alloc_skb(qp_dev(qp), av, len);
	if (unlikely(!skb))
		return NULL;
	if (skb->len == 0 && len)
		skb_put(skb, len);
	if (unlikely(skb->len != len || skb_is_nonlinear(skb))) {
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

/*
 * Transmit pacing against our own CPU's softirq backlog.  The work item
 * sends from process context; normally every dev_queue_xmit() runs the
 * NET_RX softirq on bh-enable, which drains a local receiver (veth peer).
 * Once softirq processing has been deferred to ksoftirqd, process context no
 * longer runs it (kernel/softirq.c ksoftirqd_running()) and a tight send
 * loop overruns netdev_max_backlog: every packet beyond it is lost.  Give
 * ksoftirqd the CPU when softirqs are pending.
 */
#define MRXE_PACE_EVERY		16

static void mrxe_pipe_pace(struct mrxe_qp *qp)
{
	if (++qp->req.pace < MRXE_PACE_EVERY)
		return;
	qp->req.pace = 0;
	if (!(local_softirq_pending() & BIT(NET_RX_SOFTIRQ)))
		return;
	if (!cond_resched())
		usleep_range(10, 20);
}

/*
 * Transmit order across CPUs.  A device that hands transmitted packets to
 * netif_rx() (veth, the usual lab link between namespaces) queues each one
 * on the backlog of the CPU that sent it.  The QP's work item is unbound, so
 * one run may send PSN n on CPU A and the next PSN n+1 on CPU B; if A's
 * backlog is still waiting (NET_RX deferred to ksoftirqd), the receiver
 * sees n+1 first.  IBA's transports assume that a QP's packets stay in order
 * on a path: UC then discards the rest of the message (IBA 9.8.3), RC sends
 * a sequence NAK and goes back N (9.7.5.2.2), MetaRoCE counts a hole.  So the
 * pipeline remembers where its last packet was queued (the backlog's
 * input_queue_tail, an RPS field, right after the send) and, before sending
 * from another CPU, waits until that backlog has passed it.  Waiting costs
 * little: the receiver cannot use our next packet before the old backlog
 * delivered the previous one anyway.  A TCG vCPU can stall for several
 * milliseconds (2 ms was measured too short), so the bound is generous; it
 * only exists so that a CPU that never drains costs MRXE_ORDER_WAIT_US per
 * packet (counted in xmit_order_expired), never a hang.  An offlined CPU's
 * backlog is handed on and its head advanced (dev_cpu_dead()).
 */
#define MRXE_ORDER_WAIT_US	100000

#ifdef CONFIG_RPS
static bool mrxe_pipe_order_passed(const struct mrxe_pipe_state *p)
{
	const struct softnet_data *sd = &per_cpu(softnet_data, p->xmit_cpu);

	return (int)(READ_ONCE(sd->input_queue_head) - p->xmit_qtail) >= 0;
}

/*
 * Returns with BH disabled and this CPU's backlog tail before the send; the
 * caller sends, then mrxe_pipe_order_end() with that tail.
 */
static unsigned int mrxe_pipe_order_begin(struct mrxe_qp *qp)
{
	struct mrxe_pipe_state *p = &qp->pipe;
	u64 deadline = 0;

	for (;;) {
		local_bh_disable();
		if (!p->xmit_queued || p->xmit_cpu == smp_processor_id())
			break;
		if (mrxe_pipe_order_passed(p)) {
			p->xmit_queued = false;
			break;
		}
		if (!deadline) {
			mrxe_qp_counter_inc(qp, MRXE_CNT_XMIT_ORDER_WAITS);
			deadline = ktime_get_ns() +
				   MRXE_ORDER_WAIT_US * NSEC_PER_USEC;
		} else if (ktime_get_ns() > deadline) {
			mrxe_qp_counter_inc(qp, MRXE_CNT_XMIT_ORDER_EXPIRED);
			p->xmit_queued = false;
			break;
		}
		local_bh_enable();
		usleep_range(5, 20);
	}
	/* same CPU as a still queued packet: that state stays (FIFO) */
	return READ_ONCE(this_cpu_ptr(&softnet_data)->input_queue_tail);
}

static void mrxe_pipe_order_end(struct mrxe_qp *qp, unsigned int before)
{
	struct mrxe_pipe_state *p = &qp->pipe;
	unsigned int tail = READ_ONCE(this_cpu_ptr(&softnet_data)->input_queue_tail);

	/* the packet (and maybe others) went into this CPU's backlog */
	if (tail != before) {
		p->xmit_cpu = smp_processor_id();
		p->xmit_qtail = tail;
		p->xmit_queued = true;
	}
	local_bh_enable();
}
#else
static unsigned int mrxe_pipe_order_begin(struct mrxe_qp *qp)
{
	return 0;
}

static void mrxe_pipe_order_end(struct mrxe_qp *qp, unsigned int before)
{
}
#endif

/*
 * Local queue cap (design.rst "Bytes in the host").  A sender with a large
 * window (MetaRoCE's default is 4096 packets) handed all of it to IP at
 * once: it waited in the egress qdisc or the device's ring and added its
 * queueing delay to every packet behind it, a latency-critical QP's too,
 * and an ECN-marking qdisc (fq_codel, Debian's default) marked the QP's
 * packets for a queue it had built itself, so a lossless MetaRoCE sender
 * cut its own rate (known-issues.rst).  TCP bounds the same queue with
 * TSQ (tcp_limit_output_bytes, 1 MiB), rxe with
 * RXE_INFLIGHT_SKBS_PER_QP_HIGH.  Each QP owns its packets through a
 * kernel socket: sock_wfree() (core code) accounts them in sk_wmem_alloc
 * until the device sends them or a qdisc that delays them orphans them,
 * so a packet that outlives its QP or the module is safe.  New requests
 * and READ responses wait while the QP has tx_queue_kb of them in the
 * host; ACKs and NAKs never do.  The socket's write_space callback
 * schedules the work once half has left.  The default is TCP's: a virtio
 * NIC frees sent packets late (128 KiB cost a third of the goodput
 * between two lab guests), and 1 MiB is above standard mode's whole
 * window (256 packets of about 2.3 KiB truesize at MTU 1024).
 */
static unsigned int tx_queue_kb = 1024;
module_param(tx_queue_kb, uint, 0644);
MODULE_PARM_DESC(tx_queue_kb, "per-QP cap on packet memory (truesize) queued in the host, KiB; 0: none (default 1024)");

static u32 mrxe_tx_cap(void)
{
	return min(READ_ONCE(tx_queue_kb), 1U << 20) << 10;
}

/* sock_wfree(), any context: a packet of the QP left the host */
static void mrxe_tx_write_space(struct sock *sk)
{
	struct mrxe_qp *qp;

	/* pairs with mrxe_pipe_tx_full(): the decrement, then tx_wait */
	smp_mb();
	rcu_read_lock();
	qp = rcu_dereference_sk_user_data(sk);
	if (qp && atomic_read(&qp->pipe.tx_wait) &&
	    sk_wmem_alloc_get(sk) <= mrxe_tx_cap() / 2 &&
	    atomic_xchg(&qp->pipe.tx_wait, 0))
		mrxe_pipe_sched(qp);
	rcu_read_unlock();
}

/*
 * The work item, before it sends a new packet: has the QP reached its cap?
 * Then it stops until write_space schedules it (counted in tx_queue_full).
 */
bool mrxe_pipe_tx_full(struct mrxe_qp *qp)
{
	u32 cap = mrxe_tx_cap();
	struct sock *sk;

	if (!cap || !qp->pipe.tx_sock)
		return false;
	sk = qp->pipe.tx_sock->sk;
	if (sk_wmem_alloc_get(sk) < cap)
		return false;
	atomic_set(&qp->pipe.tx_wait, 1);
	/*
	 * The flag, then the count; write_space does the reverse (its
	 * smp_mb()): one of us sees the other's write.  What left between
	 * the test and the flag found no waiter.
	 */
	smp_mb();
	if (sk_wmem_alloc_get(sk) <= cap / 2) {
		atomic_set(&qp->pipe.tx_wait, 0);
		return false;
	}
	mrxe_qp_counter_inc(qp, MRXE_CNT_TX_QUEUE_FULL);
	return true;
}

static int mrxe_pipe_tx_init(struct mrxe_qp *qp)
{
	struct socket *sock = mrxe_net_qp_sock(qp_dev(qp));
	struct sock *sk;

	if (IS_ERR(sock))
		return PTR_ERR(sock);
	sk = sock->sk;
	atomic_set(&qp->pipe.tx_wait, 0);
	write_lock_bh(&sk->sk_callback_lock);
	qp->pipe.tx_write_space = sk->sk_write_space;
	rcu_assign_sk_user_data(sk, qp);
	sk->sk_write_space = mrxe_tx_write_space;
	write_unlock_bh(&sk->sk_callback_lock);
	qp->pipe.tx_sock = sock;
	return 0;
}

/*
 * No write_space call reaches the QP after this and the caller's
 * synchronize_rcu(); packets still queued keep the socket (not the QP)
 * alive and call the socket's own write_space.
 */
void mrxe_pipe_tx_detach(struct mrxe_qp *qp)
{
	struct sock *sk;

	if (!qp->pipe.tx_sock)
		return;
	sk = qp->pipe.tx_sock->sk;
	write_lock_bh(&sk->sk_callback_lock);
	if (rcu_dereference_protected(sk->sk_user_data, 1)) {
		rcu_assign_sk_user_data(sk, NULL);
		sk->sk_write_space = qp->pipe.tx_write_space;
	}
	write_unlock_bh(&sk->sk_callback_lock);
}

static void mrxe_pipe_tx_release(struct mrxe_qp *qp)
{
	if (!qp->pipe.tx_sock)
		return;
	mrxe_pipe_tx_detach(qp);
	sock_release(qp->pipe.tx_sock);
	qp->pipe.tx_sock = NULL;
}

int mrxe_pipe_xmit(struct mrxe_qp *qp, const struct mrxe_av *av,
		   struct sk_buff *skb, u16 sport)
{
	struct mrxe_dev *dev = qp_dev(qp);
	unsigned int qtail;
	u32 len = skb->len;
	int err;

	mrxe_pipe_pace(qp);

	/* in the QP's local queue until the device lets it go */
	if (qp->pipe.tx_sock)
		skb_set_owner_w(skb, qp->pipe.tx_sock->sk);
	qtail = mrxe_pipe_order_begin(qp);
	/* UD: the AH's AV for each packet, unless the QP has a set priority */
	err = mrxe_net_xmit(dev, av, skb, sport, mrxe_pipe_ecn(qp),
			    qp->prio_fixed >= 0 ? qp->prio_fixed :
						  mrxe_av_prio(av));
	mrxe_pipe_order_end(qp, qtail);
	if (likely(!err)) {
		mrxe_qp_counter_inc(qp, MRXE_CNT_SENT_PKTS);
		mrxe_qp_counter_add(qp, MRXE_CNT_SENT_BYTES, len);
	} else if (err == -ENOBUFS) {
		/* give the full queue's softirq a moment before a resend */
		mrxe_qp_counter_inc(qp, MRXE_CNT_XMIT_BUSY);
		usleep_range(20, 50);
	}
	return err;
}

/* ---- timers: hardirq context, only flag + schedule ---- */

static enum hrtimer_restart mrxe_rto_fn(struct hrtimer *t)
{
	struct mrxe_qp *qp = container_of(t, struct mrxe_qp, comp.rto_timer);

	atomic_set(&qp->comp.timer_fired, 1);
	mrxe_pipe_sched(qp);
	return HRTIMER_NORESTART;
}

static enum hrtimer_restart mrxe_rnr_fn(struct hrtimer *t)
{
	struct mrxe_qp *qp = container_of(t, struct mrxe_qp, req.rnr_timer);

	atomic_set(&qp->req.rnr_fired, 1);
	mrxe_pipe_sched(qp);
	return HRTIMER_NORESTART;
}

/*
 * (Re)start the retransmit timer: 4.096 us * 2^timeout (IBA 9.7.6.1.3),
 * doubled for each consecutive timeout without progress (at most
 * 2^MRXE_RTO_MAX_BACKOFF times, and to no more than 1 s: a long timeout
 * is not stretched, so a dead peer is still found in about retry_cnt
 * timeouts).  IBA's Local ACK Timeout is the least a
 * requester waits; backing off (as TCP does, RFC 6298 5.5) keeps the
 * retry_cnt budget from being spent within one stall of the peer or of the
 * network (a loaded host stalls a guest for 300-400 ms; 7 retries of 67 ms
 * would end the QP).  Progress resets the backoff (mrxe_comp_progress).
 */
void mrxe_rto_arm(struct mrxe_qp *qp)
{
	u32 shift = min_t(u32, qp->comp.rto_backoff, MRXE_RTO_MAX_BACKOFF);
	u64 ns = qp->comp.rto_ns;

	if (!ns || qp->pipe.dying)
		return;
	/* back off up to 1 s, never below the QP's own timeout */
	ns = max(min_t(u64, ns << shift, MRXE_RTO_BACKOFF_CAP_NS), ns);
	hrtimer_start(&qp->comp.rto_timer, ns_to_ktime(ns), HRTIMER_MODE_REL);
}

void mrxe_rto_stop(struct mrxe_qp *qp)
{
	hrtimer_try_to_cancel(&qp->comp.rto_timer);
	atomic_set(&qp->comp.timer_fired, 0);
}

/* ---- the work item ---- */

static void mrxe_pipe_snapshot_state(struct mrxe_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->pipe.state != IB_QPS_ERR || qp->state == IB_QPS_RESET)
		qp->pipe.state = qp->state;
	spin_unlock_irqrestore(&qp->state_lock, flags);
}

/*
 * One pipeline run of up to @budget packets, pipe.mutex held by the
 * caller and released here.  True when work is left (the caller queues
 * the work item again).
 */
static bool mrxe_pipe_run(struct mrxe_qp *qp, int budget)
{
	bool more, err;

	mrxe_pipe_snapshot_state(qp);
	mrxe_cc_run(qp);	/* CNPs owed and received, DCQCN timers */
	do {
		more = false;
		if (qp->pipe.state == IB_QPS_ERR) {
			/* IBA 10.3.1: flush everything outstanding */
			mrxe_resp_flush(qp);
			mrxe_req_flush(qp);
			break;
		}
		if (qp->pipe.state == IB_QPS_RESET ||
		    qp->pipe.state == IB_QPS_INIT) {
			skb_queue_purge(&qp->resp.rxq);
			skb_queue_purge(&qp->comp.rxq);
			break;
		}
		/*
		 * Completer before responder: an ACK that arrived before a
		 * request completes the send first, as on the wire.  IBA
		 * orders nothing across CQs, but a ping-pong waits for its
		 * peer's reply only after its own send completed, and
		 * perftest's event mode (one event, one poll) hung when the
		 * reply's receive completion came first (design.rst).
		 */
		more |= mrxe_comp_run(qp, &budget);
		more |= mrxe_resp_run(qp, &budget);
		more |= mrxe_req_run(qp, &budget);
	} while (more && budget > 0 && !qp->pipe.want_error);

	err = qp->pipe.want_error;
	qp->pipe.want_error = false;
	if (err) {
		/* complete the failed WQE and flush the rest right away */
		mrxe_resp_flush(qp);
		mrxe_req_flush(qp);
	}
	if (qp->pipe.meta) {
		if (qp->pipe.state == IB_QPS_RTS || qp->pipe.state == IB_QPS_SQD)
			mrxe_meta_arm(qp);
		else
			mrxe_meta_timer_stop(qp);
		mrxe_meta_sync_counters(qp);
	}
	mutex_unlock(&qp->pipe.mutex);

	mrxe_pipe_pick_wq(qp);
	if (err) {
		mrxe_qp_error(qp);
		return false;
	}
	return more;
}

static void mrxe_pipe_work(struct work_struct *work)
{
	struct mrxe_qp *qp = container_of(work, struct mrxe_qp, pipe.work);

	mutex_lock(&qp->pipe.mutex);
	if (mrxe_pipe_run(qp, MRXE_WORK_BUDGET))
		mrxe_pipe_sched(qp);
}

/*
 * A user QP's send doorbell (its post_send system call, process context)
 * runs the pipeline right there when nobody else does, as stock rxe runs
 * its requester in the caller's context: the first packets of the new WQE
 * leave without waking a worker and waiting for the scheduler to place
 * it, which on a small machine is most of a ping-pong's latency
 * (known-issues.rst).  At most MRXE_INLINE_BUDGET packets, so a large post
 * returns soon; the rest, and any doorbell that finds the pipeline busy,
 * go to the work item as before.  Kernel consumers may post from atomic
 * context and always use the work item.
 */
void mrxe_pipe_doorbell(struct mrxe_qp *qp)
{
	bool dying;

	if (!in_task() || !mutex_trylock(&qp->pipe.mutex)) {
		mrxe_pipe_sched(qp);
		return;
	}
	/* cleanup sets dying before it takes pipe.mutex (mrxe_pipe_cleanup) */
	spin_lock_irq(&qp->pipe.lock);
	dying = qp->pipe.dying;
	spin_unlock_irq(&qp->pipe.lock);
	if (dying) {
		mutex_unlock(&qp->pipe.mutex);
		return;
	}
	mrxe_qp_counter_inc(qp, MRXE_CNT_DOORBELL_RUNS);
	if (mrxe_pipe_run(qp, MRXE_INLINE_BUDGET))
		mrxe_pipe_sched(qp);
}

/*
 * Tell the application the QP's current mode (SQ ring header, read by
 * mrxedv_query_qp_mode): metaroce once either direction switched.
 */
void mrxe_pipe_publish_mode(struct mrxe_qp *qp)
{
	u32 mode = qp->pipe.meta_tx || qp->pipe.meta_rx ?
		   MRXE_TRANSPORT_METAROCE : MRXE_TRANSPORT_STANDARD;

	if (!qp->sq || !qp->sq->buf)
		return;
	/* release: pairs with the provider's acquire load (mrxe_provider.h) */
	smp_store_release(&qp->sq->buf->transport_mode, mode);
}

/* ---- API used by the object code ---- */

int mrxe_pipe_init(struct mrxe_qp *qp)
{
	struct mrxe_req_state *req = &qp->req;
	struct mrxe_queue *rq;
	int err = -ENOMEM;

	INIT_WORK(&qp->pipe.work, mrxe_pipe_work);
	mutex_init(&qp->pipe.mutex);
	spin_lock_init(&qp->pipe.lock);
	qp->pipe.dying = false;
	qp->pipe.wq = qp_dev(qp)->wq_hi;
	qp->pipe.moved = false;
	qp->pipe.prio = 0;
	qp->pipe.state = IB_QPS_RESET;
	skb_queue_head_init(&qp->resp.rxq);
	skb_queue_head_init(&qp->comp.rxq);
	hrtimer_init(&qp->comp.rto_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	qp->comp.rto_timer.function = mrxe_rto_fn;
	hrtimer_init(&req->rnr_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	req->rnr_timer.function = mrxe_rnr_fn;
	atomic_set(&qp->comp.timer_fired, 0);
	atomic_set(&req->rnr_fired, 0);
	mrxe_cc_init(qp);
	/*
	 * Standard QPs run go-back-N; a MetaRoCE RC QP runs SACK selective
	 * repeat (mrxe_meta.c, engines in drivers/proto/), set up below.
	 */
	req->loss = &mrxe_gbn_ops;
	qp->pipe.meta = NULL;
	qp->pipe.meta_tx = false;
	qp->pipe.meta_rx = false;
	qp->pipe.auto_state = MRXE_AUTO_OFF;
	qp->pipe.cap_peer = false;
	qp->pipe.rx_fallback = false;
	qp->pipe.rx_meta_seen = false;
	if (mrxe_qp_is_rc(qp) &&
	    (qp->transport_mode == MRXE_TRANSPORT_METAROCE ||
	     qp->transport_mode == MRXE_TRANSPORT_AUTO)) {
		err = mrxe_meta_alloc(qp);
		if (err)
			goto err;
		if (qp->transport_mode == MRXE_TRANSPORT_METAROCE) {
			qp->pipe.meta_tx = true;
			qp->pipe.meta_rx = true;
		} else {
			qp->pipe.auto_state = MRXE_AUTO_PROBE;
		}
		err = -ENOMEM;
	}
	mrxe_pipe_publish_mode(qp);

	qp->pipe.av = kzalloc(sizeof(*qp->pipe.av), GFP_KERNEL);
	if (!qp->pipe.av)
		goto err;
	req->meta = kvcalloc(MRXE_PKT_RING, sizeof(*req->meta), GFP_KERNEL);
	if (!req->meta)
		goto err;
	if (qp->sq) {
		req->nslots = qp->sq->index_mask + 1;
		req->stride = ALIGN(offsetof(struct mrxe_swqe, wr) +
				    mrxe_queue_elem_size(qp->sq), 8);
		req->wqes = kvcalloc(req->nslots, req->stride, GFP_KERNEL);
		if (!req->wqes)
			goto err;
	}
	/* an SRQ's ring may be swapped by a resize: its slot size stays */
	rq = qp->rq;
	if (rq || qp->srq) {
		qp->resp.wqe_size = qp->srq ? qp->srq->wqe_size :
				    mrxe_queue_elem_size(rq);
		qp->resp.wqe = kzalloc(qp->resp.wqe_size, GFP_KERNEL);
		if (!qp->resp.wqe)
			goto err;
	}
	/*
	 * MetaRoCE SEND placement on arrival reads ahead in an RQ, or takes
	 * WQEs early out of an SRQ
	 */
	if (rq && !qp->srq) {
		qp->resp.peek = kzalloc(qp->resp.wqe_size, GFP_KERNEL);
		if (!qp->resp.peek)
			goto err;
	}
	if (qp->srq) {
		qp->resp.resv = kcalloc(MRXE_RESP_RESV, qp->resp.wqe_size,
					GFP_KERNEL);
		if (!qp->resp.resv)
			goto err;
	}
	qp->resp.nres = MRXE_MAX_QP_RD_ATOM;
	qp->resp.res = kcalloc(qp->resp.nres, sizeof(*qp->resp.res),
			       GFP_KERNEL);
	if (!qp->resp.res)
		goto err;
	err = mrxe_pipe_tx_init(qp);
	if (err)
		goto err;
	mrxe_req_reset(qp);
	mrxe_resp_reset(qp);
	return 0;

err:
	mrxe_meta_free(qp);
	kvfree(req->wqes);
	req->wqes = NULL;
	kvfree(req->meta);
	req->meta = NULL;
	kfree(qp->pipe.av);
	qp->pipe.av = NULL;
	kfree(qp->resp.wqe);
	qp->resp.wqe = NULL;
	kfree(qp->resp.peek);
	qp->resp.peek = NULL;
	kfree(qp->resp.resv);
	qp->resp.resv = NULL;
	kfree(qp->resp.res);
	qp->resp.res = NULL;
	return err;
}

/*
 * Everything posted to an RTS send queue has left as packets (pipe.mutex
 * held).  Any other state sends nothing more: SQD starts no new WQE,
 * ERROR flushes.
 */
static bool mrxe_pipe_sq_sent(struct mrxe_qp *qp)
{
	struct mrxe_req_state *req = &qp->req;

	if (qp->pipe.state != IB_QPS_RTS || !qp->sq || !req->wqes)
		return true;
	return req->cur == req->fetched &&
	       req->fetched - req->head >= mrxe_ring_avail(qp->sq);
}

/*
 * Before a UD or UC QP or an AH it may use is destroyed: send what the
 * application posted first.  Posting unsignaled datagrams and destroying
 * the AH and the QP at once is common (mckey, most UD tools): a NIC has
 * long sent them when its doorbell returns (and captured the address
 * vector at post time), but our work item may not have run yet on another
 * CPU, and the datagrams still queued were dropped (QP destroyed) or failed
 * with IB_WC_LOC_QP_OP_ERR (AH gone), flushing the rest.  IBA 11.2.4.4
 * leaves outstanding WRs of a destroyed QP undefined; nothing waits for a
 * peer here (no ACKs on UD/UC), so this is bounded by the local send time,
 * capped at MRXE_LINGER_MS.  RC is not lingered: its WQEs need the peer,
 * which may be gone.  @what names the object being destroyed in the
 * warning.
 */
void mrxe_pipe_linger(struct mrxe_qp *qp, const char *what)
{
	unsigned long end = jiffies + msecs_to_jiffies(MRXE_LINGER_MS);
	enum ib_qp_type type = qp->ibqp.qp_type;
	bool sent;

	if (type != IB_QPT_UD && type != IB_QPT_UC)
		return;
	for (;;) {
		mutex_lock(&qp->pipe.mutex);
		sent = mrxe_pipe_sq_sent(qp);
		mutex_unlock(&qp->pipe.mutex);
		if (sent)
			return;
		if (time_after(jiffies, end))
			break;
		mrxe_pipe_sched(qp);
		flush_work(&qp->pipe.work);
		/* a full local queue (xmit_busy) frees up with time */
		usleep_range(50, 200);
	}
	ibdev_warn_ratelimited(qp->ibqp.device,
			       "%s destroyed while QP %u still had unsent WQEs after %u ms\n",
			       what, qp->ibqp.qp_num, MRXE_LINGER_MS);
}

void mrxe_pipe_cleanup(struct mrxe_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->pipe.lock, flags);
	qp->pipe.dying = true;
	spin_unlock_irqrestore(&qp->pipe.lock, flags);

	spin_lock_irqsave(&qp->state_lock, flags);
	mrxe_pipe_prio_set(qp, 0);
	spin_unlock_irqrestore(&qp->state_lock, flags);

	/*
	 * Teardown order: only the work item arms the timers, and a timer
	 * callback only schedules the work, which pipe.dying now refuses.  So
	 * stop the work first (nothing can arm a timer after it), then wait
	 * for any running timer callback: no timer can fire after this.
	 */
	cancel_work_sync(&qp->pipe.work);
	/* a run on another queue may still be ending (pick_wq, enqueue) */
	if (qp->pipe.moved) {
		flush_workqueue(qp_dev(qp)->wq);
		flush_workqueue(qp_dev(qp)->wq_hi);
		if (qp_dev(qp)->wq_cpu != qp_dev(qp)->wq_hi)
			flush_workqueue(qp_dev(qp)->wq_cpu);
	}
	hrtimer_cancel(&qp->comp.rto_timer);
	hrtimer_cancel(&qp->req.rnr_timer);
	mrxe_cc_cleanup(qp);
	if (qp->pipe.meta)
		hrtimer_cancel(&qp->pipe.meta->timer);

	mutex_lock(&qp->pipe.mutex);
	if (qp->pipe.av) {
		mrxe_resp_reset(qp);
		mrxe_req_reset(qp);
	}
	skb_queue_purge(&qp->resp.rxq);
	skb_queue_purge(&qp->comp.rxq);
	mrxe_meta_purge(qp);
	mutex_unlock(&qp->pipe.mutex);

	/* packets still queued keep the socket, not the QP */
	mrxe_pipe_tx_release(qp);
	mrxe_meta_free(qp);
	kvfree(qp->req.wqes);
	qp->req.wqes = NULL;
	kvfree(qp->req.meta);
	qp->req.meta = NULL;
	kfree(qp->pipe.av);
	qp->pipe.av = NULL;
	kfree(qp->resp.wqe);
	qp->resp.wqe = NULL;
	kfree(qp->resp.peek);
	qp->resp.peek = NULL;
	kfree(qp->resp.resv);
	qp->resp.resv = NULL;
	kfree(qp->resp.res);
	qp->resp.res = NULL;
}

static u32 mrxe_port_mtu(struct mrxe_qp *qp)
{
	struct mrxe_dev *dev = qp_dev(qp);
	unsigned long flags;
	int mtu;

	spin_lock_irqsave(&dev->port_lock, flags);
	mtu = ib_mtu_enum_to_int(dev->port_attr.active_mtu);
	spin_unlock_irqrestore(&dev->port_lock, flags);
	return mtu > 0 ? mtu : 1024;
}

void mrxe_pipe_modify(struct mrxe_qp *qp, const struct ib_qp_attr *attr,
		      int mask, enum ib_qp_state old_state)
{
	struct mrxe_pipe_attr *pa = &qp->pipe.attr;
	enum ib_qp_state state;
	unsigned long flags;

	if (!qp->pipe.av)
		return;
	mutex_lock(&qp->pipe.mutex);
	spin_lock_irqsave(&qp->state_lock, flags);
	state = qp->state;
	pa->dest_qpn = qp->attr.dest_qp_num & MRXE_QPN_MASK;
	pa->qkey = qp->attr.qkey;
	pa->mtu = qp->mtu;
	pa->timeout = qp->attr.timeout;
	pa->retry_cnt = qp->attr.retry_cnt;
	pa->rnr_retry = qp->attr.rnr_retry;
	pa->min_rnr_timer = qp->attr.min_rnr_timer;
	pa->max_rd_atomic = qp->attr.max_rd_atomic;
	pa->max_dest_rd_atomic = qp->attr.max_dest_rd_atomic;
	*qp->pipe.av = qp->av;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (!pa->mtu || mrxe_qp_is_ud(qp))
		pa->mtu = mrxe_port_mtu(qp);
	pa->mtu = clamp_t(u32, pa->mtu, 256, 4096);
	if (!pa->max_rd_atomic)
		pa->max_rd_atomic = 1;
	pa->max_dest_rd_atomic = clamp_t(u32, pa->max_dest_rd_atomic, 1,
					 qp->resp.nres);
	qp->comp.rto_ns = mrxe_ack_timeout_ns(pa->timeout);
	qp->pipe.sport = rdma_get_udp_sport(qp->pipe.av->grh.flow_label,
					   qp->ibqp.qp_num, pa->dest_qpn);

	if (state == IB_QPS_RESET || old_state == IB_QPS_RESET) {
		/* rings may have been reset too: resync with the consumer */
		mrxe_resp_reset(qp);
		mrxe_req_reset(qp);
		skb_queue_purge(&qp->resp.rxq);
		skb_queue_purge(&qp->comp.rxq);
		mrxe_meta_purge(qp);
		mrxe_meta_timer_stop(qp);
		mrxe_cc_reset(qp);
		if (qp->pipe.auto_state != MRXE_AUTO_OFF) {
			/* a reused `auto` QP negotiates again */
			qp->pipe.meta_tx = false;
			qp->pipe.meta_rx = false;
			qp->pipe.auto_state = MRXE_AUTO_PROBE;
			qp->pipe.cap_peer = false;
			mrxe_pipe_publish_mode(qp);
		}
		if (qp->pipe.rx_fallback) {
			/* forced metaroce: the receive side starts TVer 1 */
			qp->pipe.rx_fallback = false;
			qp->pipe.meta_rx = true;
			qp->pipe.cap_peer = false;
			mrxe_pipe_publish_mode(qp);
		}
		qp->pipe.rx_meta_seen = false;
		qp->pipe.state = IB_QPS_RESET;
	}
	if (mask & IB_QP_RQ_PSN) {
		qp->resp.psn = attr->rq_psn & MRXE_PSN_MASK;
		qp->resp.ack_psn = mrxe_psn_add(qp->resp.psn, MRXE_PSN_MASK);
		mrxe_meta_rcv_init(qp, qp->resp.psn);
	}
	if (mask & IB_QP_SQ_PSN) {
		qp->req.psn = attr->sq_psn & MRXE_PSN_MASK;
		qp->req.next_new_psn = qp->req.psn;
		qp->comp.psn = qp->req.psn;
		mrxe_meta_snd_init(qp, qp->req.psn);
	}
	if (mask & IB_QP_RETRY_CNT) {
		qp->comp.retry_left = pa->retry_cnt;
		if (qp->pipe.meta)
			qp->pipe.meta->retry_left = pa->retry_cnt;
	}
	if (mask & (IB_QP_SQ_PSN | IB_QP_TIMEOUT))
		qp->comp.rto_backoff = 0;
	if (mask & IB_QP_RNR_RETRY)
		qp->comp.rnr_left = pa->rnr_retry;
	if (state == IB_QPS_SQD)
		qp->req.sq_drained_sent = false;
	if (qp->pipe.state != IB_QPS_ERR || state == IB_QPS_RESET)
		qp->pipe.state = state;
	mutex_unlock(&qp->pipe.mutex);

	mrxe_pipe_sched(qp);
}

void mrxe_pipe_kick_sq(struct mrxe_qp *qp)
{
	mrxe_pipe_sched(qp);
}

void mrxe_pipe_kick_rq(struct mrxe_qp *qp)
{
	mrxe_pipe_sched(qp);
}
