#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Move an RC QP to ERROR by a transport error, for `mrxectl monitor`.

    mrxe_ctl_qp_error.py DEV GID_INDEX

The QP is connected to a QP number that does not exist, through the device's
own RoCEv2 GID (loopback): the requests are dropped by the receiver, the
retransmit timer fires (timeout 10, retry_cnt 1) and the requester completes
with IBV_WC_RETRY_EXC_ERR, moving the QP to ERROR from the data path
(mrxe_qp_error()).  Exits 0 when that completion arrives."""
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR


def main():
    dev, gidx = sys.argv[1], int(sys.argv[2])
    ctx = Context(name=dev)
    pd = PD(ctx)
    cq = CQ(ctx, 8)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                           cap=QPCap(max_send_wr=4, max_recv_wr=4)), QPAttr())
    gid = ctx.query_gid(1, gidx)
    a = QPAttr()
    a.qp_state = e.IBV_QPS_RTR
    a.ah_attr = AHAttr(gr=GlobalRoute(dgid=gid, sgid_index=gidx), is_global=1,
                       port_num=1)
    a.path_mtu = e.IBV_MTU_1024
    a.dest_qp_num = 0xfffff0          # no such QP
    a.rq_psn = 0
    a.max_dest_rd_atomic = 1
    a.min_rnr_timer = 1
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU |
              e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN |
              e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER)
    a = QPAttr()
    a.qp_state = e.IBV_QPS_RTS
    a.timeout = 10
    a.retry_cnt = 1
    a.rnr_retry = 1
    a.sq_psn = 0
    a.max_rd_atomic = 1
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT |
              e.IBV_QP_RNR_RETRY | e.IBV_QP_SQ_PSN | e.IBV_QP_MAX_QP_RD_ATOMIC)
    print("qpn", qp.qp_num, "in RTS, sending to QPN 0xfffff0")
    mr = MR(pd, 64, e.IBV_ACCESS_LOCAL_WRITE)
    qp.post_send(SendWR(opcode=e.IBV_WR_SEND, num_sge=1,
                        sg=[SGE(mr.buf, 64, mr.lkey)]))
    end = time.time() + 30
    while time.time() < end:
        n, wcs = cq.poll()
        if n > 0:
            print("completion status", wcs[0].status)
            sys.exit(0 if wcs[0].status == e.IBV_WC_RETRY_EXC_ERR else 1)
        time.sleep(0.05)
    print("no completion in 30 s")
    sys.exit(1)


if __name__ == "__main__":
    main()
