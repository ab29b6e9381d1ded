#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run rdma-core's pyverbs test suite and record every test's outcome.

    mrxe_pyverbs_run.py TESTS_DIR RESULT_TSV [run_tests.py arguments...]

TESTS_DIR is an unpacked copy of /usr/share/doc/rdma-core/tests.  The suite
is loaded exactly as its own run_tests.py loads it (the 'tests' package, its
args_parser for --dev/--port/--gid), and run with unittest's verbose text
runner, so the console output is the familiar one.  In addition RESULT_TSV
gets one line per test:

    <test id> TAB <ok|skip|fail|error|xfail|xpass> TAB <seconds> TAB <reason>

MRXE_PYVERBS_GID_NETDEV=1 lets the rdma_cm tests find the device's address
through the GID's netdev (see netdev_from_gid).

MRXE_PYVERBS_TEST_TIMEOUT (seconds, default 180) bounds one test: SIGALRM
raises in the test's Python code (pyverbs' poll loops are Python loops), so
a hung test is reported as an error instead of stalling the whole suite.
"""
import os
import signal
import subprocess
import sys
import time
import unittest
from importlib.machinery import SourceFileLoader


def netdev_from_gid(base):
    """MRXE_PYVERBS_GID_NETDEV=1: let the rdma_cm tests find their address.

    The suite looks for a device's netdev only under
    /sys/class/infiniband/DEV/device/net/, which software RDMA devices (rxe,
    mrxe: no parent device) do not have, so its rdma_cm tests always skip
    on them.  This falls back to the netdev the kernel lists for the GID
    (ports/P/gid_attrs/ndevs/IDX) and keeps everything else as it is.
    """
    orig = base.RDMATestCase._get_ip_mac

    def _get_ip_mac(self, dev, port, idx):
        if idx is None or os.path.exists(
                '/sys/class/infiniband/%s/device/net/' % dev):
            return orig(self, dev, port, idx)
        ip = mac = None
        try:
            path = '/sys/class/infiniband/%s/ports/%s/gid_attrs/ndevs/%s' % (
                dev, port, idx)
            with open(path) as f:
                ndev = f.read().strip()
            ip, mac = self.get_ip_mac_address(ndev)
        except (OSError, KeyError, IndexError,
                subprocess.CalledProcessError):
            pass
        self.args.append([dev, port, idx, ip, mac])

    base.RDMATestCase._get_ip_mac = _get_ip_mac


class TestTimeout(Exception):
    pass


def on_alarm(signum, frame):
    raise TestTimeout('test exceeded MRXE_PYVERBS_TEST_TIMEOUT')


class RecordingResult(unittest.TextTestResult):
    """TextTestResult that also keeps (id, status, seconds, reason)."""
    out = None		# result file, one line written (and flushed) per test
    per_test_timeout = 180

    running = None	# path: id of the test in progress (crash resume)

    def startTest(self, test):
        self._t0 = time.monotonic()
        if self.running:
            with open(self.running, 'w') as r:
                r.write(test.id())
        signal.alarm(self.per_test_timeout)
        super().startTest(test)

    def stopTest(self, test):
        signal.alarm(0)
        super().stopTest(test)

    def _rec(self, test, status, reason=''):
        dt = time.monotonic() - getattr(self, '_t0', time.monotonic())
        reason = ' '.join(str(reason).split())[:300]
        if self.out:
            # as it happens: a suite killed from outside keeps what ran
            self.out.write('\t'.join((test.id(), status, '%.2f' % dt,
                                      reason)) + '\n')
            self.out.flush()

    @staticmethod
    def _last_line(err):
        exc = err[1]
        return '%s: %s' % (type(exc).__name__, exc)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._rec(test, 'ok')

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._rec(test, 'skip', reason)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._rec(test, 'fail', self._last_line(err))

    def addError(self, test, err):
        super().addError(test, err)
        self._rec(test, 'error', self._last_line(err))

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._rec(test, 'xfail', self._last_line(err))

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._rec(test, 'xpass')


class ResumeLoader(unittest.TestLoader):
    """Leaves out the tests already in the result file (MRXE_PYVERBS_RESUME)."""
    done = set()

    def _filter(self, suite):
        if not isinstance(suite, unittest.TestSuite):
            return suite
        return unittest.TestSuite(
            [self._filter(t) for t in suite
             if not (isinstance(t, unittest.TestCase) and t.id() in self.done)])

    def loadTestsFromModule(self, *args, **kw):
        return self._filter(super().loadTestsFromModule(*args, **kw))


def resume_state(out_path):
    """MRXE_PYVERBS_RESUME=1 after the process died (a provider segfault):
    the tests recorded so far are left out, and the one that was running is
    recorded as an error."""
    running = out_path + '.running'
    if os.environ.get('MRXE_PYVERBS_RESUME') != '1':
        return 'w', set()
    done = set()
    if os.path.exists(out_path):
        with open(out_path) as f:
            done = {line.split('\t', 1)[0] for line in f if line.strip()}
    if os.path.exists(running):
        with open(running) as r:
            crashed = r.read().strip()
        if crashed and crashed not in done:
            with open(out_path, 'a') as f:
                f.write('\t'.join((crashed, 'error', '0.00',
                                   'the test process died during this test '
                                   '(resumed after it)')) + '\n')
            done.add(crashed)
    return 'a', done


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    tests_dir = os.path.abspath(sys.argv[1])
    out_path = sys.argv[2]
    sys.argv = [os.path.join(tests_dir, 'run_tests.py')] + sys.argv[3:]
    sys.path.insert(0, tests_dir)
    sys.dont_write_bytecode = True

    RecordingResult.per_test_timeout = int(
        os.environ.get('MRXE_PYVERBS_TEST_TIMEOUT', '180'))
    signal.signal(signal.SIGALRM, on_alarm)

    from args_parser import parser
    tests = SourceFileLoader(
        'tests', os.path.join(tests_dir, '__init__.py')).load_module()
    parser.parse_args()
    if os.environ.get('MRXE_PYVERBS_GID_NETDEV') == '1':
        netdev_from_gid(sys.modules['tests.base'])
    runner = unittest.TextTestRunner(verbosity=2, stream=sys.stdout,
                                     resultclass=RecordingResult)
    mode, ResumeLoader.done = resume_state(out_path)
    RecordingResult.running = out_path + '.running'
    with open(out_path, mode) as f:
        RecordingResult.out = f
        prog = unittest.main(module=tests, testRunner=runner, exit=False,
                             testLoader=ResumeLoader())
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == '__main__':
    sys.exit(main())
