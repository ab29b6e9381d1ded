#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Probe: RDMA WRITE / READ / ATOMIC to a responder QP whose qp_access_flags
lack the remote right, while the MR grants it (IBA 10.2.4 / C9-?: the QP's
enables are checked too; the responder NAKs Invalid Request and the
requester completes with IBV_WC_REM_INV_REQ_ERR, memory untouched).

    mrxe_qp_access_probe.py TESTS_DIR DEV GID

TESTS_DIR is an unpacked copy of rdma-core's pyverbs tests (see
mrxe_pyverbs.sh); its RCResources set up two loopback RC QPs on DEV.  Prints
one line per case with the requester's completion status and the first
bytes of the responder's buffer, and exits 1 if any case differs from the
expectation.  Stock rxe passes; see /work/prompts/kernel-bugs.md for mrxe.
"""
import os
import sys
from importlib.machinery import SourceFileLoader


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    tests_dir, dev, gid = os.path.abspath(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    sys.path.insert(0, tests_dir)
    sys.dont_write_bytecode = True
    sys.argv = [sys.argv[0], '--dev', dev, '--gid', str(gid)]
    from args_parser import parser
    SourceFileLoader('tests', os.path.join(tests_dir, '__init__.py')).load_module()
    parser.parse_args()

    from tests.base import RCResources
    from pyverbs.qp import QPAttr
    from pyverbs.mr import MR
    from pyverbs.wr import SGE, SendWR
    import pyverbs.enums as e
    import tests.utils as u

    every = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
             e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)

    class Res(RCResources):
        def __init__(self, qp_access, **kw):
            self.qp_access = qp_access
            super().__init__(**kw)

        def create_mr(self):
            self.mr = MR(self.pd, self.msg_size, every)

        def create_qp_attr(self):
            a = QPAttr(port_num=self.ib_port)
            a.qp_access_flags = self.qp_access
            return a

    local = e.IBV_ACCESS_LOCAL_WRITE
    cases = [  # name, opcode, responder QP access, expected status
        ('write, QP without REMOTE_WRITE', e.IBV_WR_RDMA_WRITE, local,
         e.IBV_WC_REM_INV_REQ_ERR),
        ('read, QP without REMOTE_READ', e.IBV_WR_RDMA_READ, local,
         e.IBV_WC_REM_INV_REQ_ERR),
        ('atomic, QP without REMOTE_ATOMIC', e.IBV_WR_ATOMIC_FETCH_AND_ADD,
         local, e.IBV_WC_REM_INV_REQ_ERR),
        ('write, QP with every right', e.IBV_WR_RDMA_WRITE, every,
         e.IBV_WC_SUCCESS),
    ]
    bad = 0
    for name, op, qacc, want in cases:
        c = Res(every, dev_name=dev, ib_port=1, gid_index=gid)
        s = Res(qacc, dev_name=dev, ib_port=1, gid_index=gid)
        c.pre_run(s.psns, s.qps_num)
        s.pre_run(c.psns, c.qps_num)
        s.mr.write('s' * s.msg_size, s.msg_size)
        c.mr.write('c' * c.msg_size, c.msg_size)
        length = 8 if op == e.IBV_WR_ATOMIC_FETCH_AND_ADD else c.msg_size
        wr = SendWR(opcode=op, num_sge=1, sg=[SGE(c.mr.buf, length, c.mr.lkey)])
        if op == e.IBV_WR_ATOMIC_FETCH_AND_ADD:
            wr.set_wr_atomic(s.mr.rkey, s.mr.buf, 1, 0)
        else:
            wr.set_wr_rdma(s.mr.rkey, s.mr.buf)
        c.qp.post_send(wr)
        st = u._poll_cq(c.cq)[0].status
        mem = bytes(s.mr.read(8, 0))
        untouched = mem == b's' * 8
        ok = st == want and (untouched if want != e.IBV_WC_SUCCESS else True)
        bad |= not ok
        print('%s %s: status %d (want %d), responder buffer %r' %
              ('ok' if ok else 'BAD', name, st, want, mem))
        for r in (c, s):
            r.qp.close()
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
