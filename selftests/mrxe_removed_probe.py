#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What a verbs program sees after its device was removed under it.

usage: mrxe_removed_probe.py DEV N
A loopback RC QP moves N signaled 8-byte RDMA WRITEs (each polled), then
`rdma link delete DEV` runs.  Afterwards ibv_post_send must fail with EIO
and the async event must be IBV_EVENT_DEVICE_FATAL.  ibv_poll_cq is only
reported: it returns 0 (an empty CQ) from then on, as on stock rxe
(known-issues.rst).  Exit 0 when both hold; each line says what was seen.
"""
import errno
import subprocess
import sys
import threading

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR


def main():
    dev, n = sys.argv[1], int(sys.argv[2])
    ctx = Context(name=dev)
    # the IPv4-mapped (RoCEv2) GID
    gidx = next((i for i in range(8)
                 if str(ctx.query_gid(1, i)).startswith("0000:0000:0000:0000:0000:ffff:")),
                None)
    if gidx is None:
        sys.exit("no IPv4 GID on %s" % dev)
    pd = PD(ctx)
    cq = CQ(ctx, 64)
    acc = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE
    mr = MR(pd, 4096, acc)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                           cap=QPCap(max_send_wr=16, max_recv_wr=16)))
    a = QPAttr(port_num=1)
    a.qp_access_flags = acc
    a.path_mtu = e.IBV_MTU_1024
    a.dest_qp_num = qp.qp_num
    a.rq_psn = a.sq_psn = 0
    a.ah_attr = AHAttr(port_num=1, is_global=1,
                       gr=GlobalRoute(dgid=ctx.query_gid(1, gidx), sgid_index=gidx))
    a.timeout, a.retry_cnt, a.rnr_retry = 14, 7, 7
    a.max_rd_atomic = a.max_dest_rd_atomic = 1
    a.min_rnr_timer = 12
    qp.to_rts(a)

    def post():
        wr = SendWR(opcode=e.IBV_WR_RDMA_WRITE, num_sge=1, sg=[SGE(mr.buf, 8, mr.lkey)])
        wr.set_wr_rdma(mr.rkey, mr.buf + 64)
        wr.send_flags = e.IBV_SEND_SIGNALED
        qp.post_send(wr)

    for _ in range(n):
        post()
        while True:
            k, wcs = cq.poll(1)
            if k:
                break
        if wcs[0].status != e.IBV_WC_SUCCESS:
            sys.exit("write failed before the removal: status %d" % wcs[0].status)
    print("%d writes completed" % n)
    subprocess.run(["rdma", "link", "delete", dev], check=True)
    bad = 0
    try:
        post()
        print("BAD: ibv_post_send succeeded after the removal")
        bad = 1
    except PyverbsRDMAError as ex:
        ok = ex.error_code == errno.EIO
        print("%s: ibv_post_send after the removal: %s" % ("ok" if ok else "BAD", ex))
        bad |= not ok
    try:
        k, _ = cq.poll(1)
        print("ibv_poll_cq after the removal: %d (empty: no error is reported)" % k)
    except PyverbsRDMAError as ex:
        print("ibv_poll_cq after the removal: %s" % ex)
    # the async fd is not exposed: wait for events in a thread
    seen = []

    def events():
        for _ in range(10):
            ev = ctx.get_async_event()
            seen.append(ev.event_type)
            ev.ack()
            if ev.event_type == e.IBV_EVENT_DEVICE_FATAL:
                return

    t = threading.Thread(target=events, daemon=True)
    t.start()
    t.join(5)
    fatal = e.IBV_EVENT_DEVICE_FATAL in seen
    print("%s: IBV_EVENT_DEVICE_FATAL %s" % ("ok" if fatal else "BAD", "seen" if fatal else "not seen"))
    return 1 if bad or not fatal else 0


if __name__ == "__main__":
    sys.exit(main())
