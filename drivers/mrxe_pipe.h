/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Per-QP transport (pipeline) state: requester, responder, completer.
 * Owned by the data-path files (mrxe_req.c, mrxe_resp.c, mrxe_comp.c,
 * mrxe_recv.c).  Placeholder until the data path lands.
 */
#ifndef MRXE_PIPE_H
#define MRXE_PIPE_H

struct mrxe_qp;

struct mrxe_req_state {
	u32	psn;		/* next PSN to send */
};

struct mrxe_resp_state {
	u32	psn;		/* next expected PSN */
};

struct mrxe_comp_state {
	u32	psn;		/* oldest unacknowledged PSN */
};

/* Called by mrxe_qp.c on create/modify/destroy. */
int mrxe_pipe_init(struct mrxe_qp *qp);
void mrxe_pipe_cleanup(struct mrxe_qp *qp);

#endif /* MRXE_PIPE_H */
