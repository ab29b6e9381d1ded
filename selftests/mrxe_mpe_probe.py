#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""RDMA ATOMIC WRITE and RDMA FLUSH (IBA 1.5 Memory Placement Extensions)
between two devices, requester on DEV_A, responder on DEV_B:

    mrxe_mpe_probe.py TESTS_DIR DEV_A GID_A DEV_B GID_B

TESTS_DIR is an unpacked copy of rdma-core 56's pyverbs tests (see
mrxe_pyverbs.sh); its QpExRCAtomicWrite / QpExRCFlush resources are used,
connected to the other device's GID instead of their own.  Cases:

  atomic_write   three ATOMIC WRITEs of 8 random bytes each; the
                 responder's first 8 bytes must be the last value, the rest
                 of its buffer untouched
  flush_range    RDMA WRITE, then FLUSH global visibility of that range
  flush_mr       FLUSH global visibility of the whole MR (length ignored)
  flush_persist  FLUSH persistence to an MR registered for global
                 visibility only: IBV_WC_REM_ACCESS_ERR (last: the QP
                 goes to ERROR)

Prints one line per case and exits 0, 1 if an ATOMIC WRITE (or the WRITE)
case differs, 3 if only FLUSH cases do, 4 if this pyverbs has no
ibv_wr_flush (rdma-core < 56: the caller skips).
"""
import os
import sys
from importlib.machinery import SourceFileLoader


def main():
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    tests_dir = os.path.abspath(sys.argv[1])
    dev_a, gid_a, dev_b, gid_b = (sys.argv[2], int(sys.argv[3]),
                                  sys.argv[4], int(sys.argv[5]))
    sys.path.insert(0, tests_dir)
    sys.dont_write_bytecode = True
    sys.argv = [sys.argv[0], '--dev', dev_a, '--gid', str(gid_a)]
    from args_parser import parser
    SourceFileLoader('tests', os.path.join(tests_dir, '__init__.py')).load_module()
    parser.parse_args()

    from pyverbs.qp import QPEx
    if not hasattr(QPEx, 'wr_flush'):
        print('pyverbs has no wr_flush (rdma-core < 56)')
        return 4
    from tests.test_qpex import QpExRCAtomicWrite, QpExRCFlush
    from pyverbs.addr import GlobalRoute, AHAttr
    from pyverbs.wr import SGE
    import pyverbs.enums as e
    import tests.utils as u

    def remote(cls):
        """cls connected to self.peer_gid (the other device) instead of
        its own GID (RCResources.to_rts assumes loopback)."""
        class R(cls):
            def to_rts(self):
                attr = self.create_qp_attr()
                attr.path_mtu = e.IBV_MTU_1024
                attr.max_dest_rd_atomic = 1
                attr.max_rd_atomic = 1
                attr.min_rnr_timer = 12
                attr.retry_cnt = 7
                attr.rnr_retry = 7
                attr.timeout = 14
                gr = GlobalRoute(dgid=self.peer_gid, sgid_index=self.gid_index)
                attr.ah_attr = AHAttr(port_num=self.ib_port, is_global=1,
                                      gr=gr, dlid=0)
                for i in range(self.qp_count):
                    attr.dest_qp_num = self.rqps_num[i]
                    attr.rq_psn = self.psns[i]
                    attr.sq_psn = self.rpsns[i]
                    self.qps[i].to_rts(attr)
        return R

    def pair(cls):
        c = remote(cls)(dev_name=dev_a, ib_port=1, gid_index=gid_a)
        s = remote(cls)(dev_name=dev_b, ib_port=1, gid_index=gid_b)
        c.peer_gid = s.ctx.query_gid(1, gid_b)
        s.peer_gid = c.ctx.query_gid(1, gid_a)
        c.pre_run(s.psns, s.qps_num)
        s.pre_run(c.psns, c.qps_num)
        return c, s

    def post(c, fn):
        qp = c.qps[0]
        qp.wr_start()
        qp.wr_id = 1
        qp.wr_flags = e.IBV_SEND_SIGNALED
        fn(qp)
        qp.wr_complete()
        try:
            return u._poll_cq(c.cq)[0].status
        except Exception as ex:  # no completion in time
            print('  (%s)' % ex)
            return -1

    bad = 0

    def report(name, ok, what):
        nonlocal bad
        if not ok:
            bad |= 2 if name.startswith('flush') else 1
        print('%s %s: %s' % ('ok' if ok else 'BAD', name, what))

    # ATOMIC WRITE: the bytes land, nothing around them moves
    c, s = pair(QpExRCAtomicWrite)
    n = s.msg_size
    s.mr.write('s' * n, n)
    st, val = None, b''
    for _ in range(3):
        val = os.urandom(8)
        st = post(c, lambda qp: qp.wr_atomic_write(s.mr.rkey, s.mr.buf, val))
        if st != e.IBV_WC_SUCCESS:
            break
    mem = bytes(s.mr.read(n, 0))
    report('atomic_write', st == e.IBV_WC_SUCCESS and mem[:8] == val and
           mem[8:] == b's' * (n - 8),
           'status %d, responder %r (want %r, rest untouched: %s)' %
           (st, mem[:8], val, mem[8:] == b's' * (n - 8)))
    for r in (c, s):
        r.qps[0].close()

    # FLUSH: after a WRITE, the range; the whole MR; then persistence
    c, s = pair(QpExRCFlush)
    n = c.msg_size
    c.mr.write('w' * n, n)
    qp = c.qps[0]
    qp.wr_start()
    qp.wr_id = 1
    qp.wr_flags = e.IBV_SEND_SIGNALED
    qp.wr_rdma_write(s.mr.rkey, s.mr.buf)
    qp.wr_set_sge(SGE(c.mr.buf, n, c.mr.lkey))
    qp.wr_complete()
    st = u._poll_cq(c.cq)[0].status
    report('write_before_flush', st == e.IBV_WC_SUCCESS and
           bytes(s.mr.read(n, 0)) == b'w' * n, 'status %d' % st)
    for name, plt, sel, length, want in (
            ('flush_range', e.IBV_FLUSH_GLOBAL, e.IBV_FLUSH_RANGE, n,
             e.IBV_WC_SUCCESS),
            ('flush_mr', e.IBV_FLUSH_GLOBAL, e.IBV_FLUSH_MR, 12345678,
             e.IBV_WC_SUCCESS),
            ('flush_persist', e.IBV_FLUSH_PERSISTENT, e.IBV_FLUSH_RANGE, n,
             e.IBV_WC_REM_ACCESS_ERR)):
        st = post(c, lambda qp: qp.wr_flush(s.mr.rkey, s.mr.buf, length,
                                            plt, sel))
        report(name, st == want, 'status %d (want %d)' % (st, want))
    for r in (c, s):
        r.qps[0].close()
    # 1: ATOMIC WRITE or the WRITE failed; 3: only FLUSH cases failed
    return 1 if bad & 1 else 3 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
