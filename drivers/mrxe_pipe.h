/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Per-QP transport (pipeline) state and the API the object code
 * (mrxe_qp.c, mrxe_verbs.c) uses to drive it.  Owned by the data-path files
 * (mrxe_req.c, mrxe_resp.c, mrxe_comp.c, mrxe_recv.c); the structs below are
 * placeholders until the data path lands and will grow.
 */
#ifndef MRXE_PIPE_H
#define MRXE_PIPE_H

struct mrxe_qp;
struct ib_qp_attr;

struct mrxe_req_state {
	u32	psn;		/* next PSN to send */
};

struct mrxe_resp_state {
	u32	psn;		/* next expected PSN */
};

struct mrxe_comp_state {
	u32	psn;		/* oldest unacknowledged PSN */
};

/* create_qp, after queues exist; destroy_qp before queues go away (sync). */
int mrxe_pipe_init(struct mrxe_qp *qp);
void mrxe_pipe_cleanup(struct mrxe_qp *qp);
/*
 * modify_qp, called with the new attributes already stored in qp->attr and
 * qp->state (outside state_lock).  Handles PSN init on RTR/RTS, flush on
 * ERROR, drain on SQD, reset on RESET.
 */
void mrxe_pipe_modify(struct mrxe_qp *qp, const struct ib_qp_attr *attr,
		      int mask, enum ib_qp_state old_state);
/* SQ doorbell (user kick through post_send with no WRs, or kernel post). */
void mrxe_pipe_kick_sq(struct mrxe_qp *qp);
/* RQ/SRQ got new WQEs (RNR recovery may continue). */
void mrxe_pipe_kick_rq(struct mrxe_qp *qp);

#endif /* MRXE_PIPE_H */
