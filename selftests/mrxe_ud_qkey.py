#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""UD Q_Key check between two devices (pyverbs, one process).

usage: mrxe_ud_qkey.py SRC_DEV SRC_GID_INDEX DST_DEV DST_GID_INDEX

The destination UD QP has Q_Key 0x11111111.  A send with Q_Key 0x22222222
must be dropped by the receiver (IBA 10.2.4: a datagram whose Q_Key does not
match the QP's is silently discarded), i.e. produce no receive completion;
a send with the right Q_Key afterwards must arrive with the right payload
(proving the path works and the first one was really dropped).

Also an oversized datagram (larger than the port's active MTU): IBA
C10-93.1.1 says the CI emits no packet for it and generates no error, so the
sender gets a successful completion and the receiver nothing.

Prints a line per step; exit 0 on success, 1 on failure.
"""
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

QKEY = 0x11111111
BAD_QKEY = 0x22222222
GRH = 40
SIZE = 256
BUF = 8192


class Side:
    def __init__(self, dev, gid_index):
        self.ctx = Context(name=dev)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 32)
        cap = QPCap(max_send_wr=8, max_recv_wr=8)
        init = QPInitAttr(qp_type=e.IBV_QPT_UD, scq=self.cq, rcq=self.cq,
                          cap=cap)
        attr = QPAttr(port_num=1)
        attr.qkey = QKEY
        self.qp = QP(self.pd, init, attr)
        self.mr = MR(self.pd, GRH + BUF, e.IBV_ACCESS_LOCAL_WRITE)
        mtu = self.ctx.query_port(1).active_mtu
        self.mtu = 128 << mtu   # enum ibv_mtu: 1 = 256 ... 5 = 4096
        self.gid_index = gid_index
        self.gid = self.ctx.query_gid(1, gid_index)


def poll(cq, timeout):
    end = time.time() + timeout
    while time.time() < end:
        n, wcs = cq.poll(1)
        if n:
            return wcs[0]
        time.sleep(0.005)
    return None


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    src = Side(sys.argv[1], int(sys.argv[2]))
    dst = Side(sys.argv[3], int(sys.argv[4]))
    gr = GlobalRoute(dgid=dst.gid, sgid_index=src.gid_index, hop_limit=64)
    ah = AH(src.pd, attr=AHAttr(is_global=1, port_num=1, gr=gr))

    failed = False

    def send(qkey, fill, wr_id, size=SIZE, fatal=True):
        src.mr.write(bytes([fill]) * size, size)
        wr = SendWR(wr_id=wr_id, num_sge=1,
                    sg=[SGE(src.mr.buf, size, src.mr.lkey)])
        wr.set_wr_ud(ah, dst.qp.qp_num, qkey)
        src.qp.post_send(wr)
        wc = poll(src.cq, 10)
        if wc is None or wc.status != e.IBV_WC_SUCCESS:
            msg = (f'FAIL: send completion status '
                   f'{wc.status if wc else "missing"} (size {size})')
            if fatal or wc is None:
                raise SystemExit(msg)
            print(msg)
            return False
        return True

    dst.qp.post_recv(RecvWR(wr_id=1, num_sge=1,
                            sg=[SGE(dst.mr.buf, GRH + BUF, dst.mr.lkey)]))
    send(BAD_QKEY, 0xbb, 10)
    wc = poll(dst.cq, 3)
    if wc is not None:
        print(f'FAIL: datagram with wrong Q_Key 0x{BAD_QKEY:x} was delivered '
              f'(status {wc.status}, byte_len {wc.byte_len})')
        return 1
    print(f'ok: datagram with wrong Q_Key 0x{BAD_QKEY:x} dropped '
          f'(no receive completion in 3 s)')

    # A failed status here is reported, and the last step still runs: it
    # shows whether the QP survived the oversized datagram.
    big = min(src.mtu, dst.mtu) + 1
    ok_status = send(QKEY, 0xcc, 12, big, fatal=False)
    wc = poll(dst.cq, 3)
    if wc is not None:
        print(f'FAIL: {big}-byte datagram (MTU {src.mtu}) was delivered')
        return 1
    if ok_status:
        print(f'ok: {big}-byte datagram above the MTU: successful send '
              f'completion, nothing delivered (IBA C10-93.1.1)')
    else:
        print(f'FAIL: {big}-byte datagram above the MTU: nothing delivered, '
              f'but IBA C10-93.1.1 forbids an error completion for it')
        failed = True

    send(QKEY, 0x5a, 11)
    wc = poll(dst.cq, 10)
    if wc is None:
        print('FAIL: datagram with the right Q_Key did not arrive')
        return 1
    if wc.status != e.IBV_WC_SUCCESS or wc.byte_len != GRH + SIZE:
        print(f'FAIL: receive status {wc.status} byte_len {wc.byte_len}, '
              f'expected success and {GRH + SIZE}')
        return 1
    if wc.src_qp != src.qp.qp_num:
        print(f'FAIL: src_qp {wc.src_qp}, expected {src.qp.qp_num}')
        return 1
    data = dst.mr.read(SIZE, GRH)
    if data != bytes([0x5a]) * SIZE:
        bad = next(i for i, b in enumerate(data) if b != 0x5a)
        print(f'FAIL: payload byte {bad} is 0x{data[bad]:02x}, expected 0x5a')
        return 1
    if not wc.wc_flags & e.IBV_WC_GRH:
        print('FAIL: IBV_WC_GRH not set on a UD receive')
        return 1
    print(f'ok: datagram with Q_Key 0x{QKEY:x} arrived intact '
          f'(byte_len {wc.byte_len}, src_qp 0x{wc.src_qp:x})')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
