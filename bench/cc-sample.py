#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Sampler for bench/cc-guest.sh (runs in the lab guest until killed).

Every INTERVAL seconds appends to OUT one line
    t,backlog_bytes,link_bytes,qpn:rcvd_bytes;qpn:rcvd_bytes;...
t: seconds since start; backlog: the bottleneck RED qdisc's queue (tc -s
qdisc show dev bnrd in the router namespace); link_bytes: what the
bottleneck's tbf sent (frames with their Ethernet, IP and UDP headers, as
the link carries them); the receiver device's
connected RC QPs (RTR or RTS: perftest's WRITE server stays in RTR) with the
bytes each received (mrxectl -j qp show, per-QP counters).  Run it in the
receiver's namespace (mrxectl there, tc -n ROUTER_NS): two programs per
sample, which under TCG with the bench running take a good part of a second.
With SENDER_NS=DEV arguments after MRXECTL it also appends to OUT.senders
    t,ns:qpn:rate_kbps:srtt_us;...
for every RC QP in RTS on those devices (the rate the congestion control
engines let the pacer run, and the smoothed RTT the reaction rounds use):
one more program per sender per sample.  OUT.red gets
    t,dropped,marked,early,pdrop
of the RED qdisc (cumulative, as tc -s counts them): when the drops came
(a start of four QPs at the line rate, or the steady state) and which kind
(early: RED's own, for Not-ECT packets or above max without ecn; pdrop:
the queue limit).
usage: cc-sample.py OUT INTERVAL ROUTER_NS DEV MRXECTL [SENDER_NS=DEV ...]
"""
import json
import re
import subprocess
import sys
import time


def rc_qps(cmd, states):
    """The RC QPs in one of @states that `mrxectl -j qp show` (@cmd) lists."""
    j = subprocess.run(cmd, capture_output=True, text=True).stdout
    try:
        return [qp for qp in json.loads(j or "[]")
                if qp.get("type") == "RC" and qp.get("state") in states and "qpn" in qp]
    except (ValueError, TypeError):
        return []


def sender_qps(ctl, senders):
    """ns:qpn:rate_kbps:srtt_us of every RC QP in RTS on the senders."""
    return ["%s:%d:%d:%d" % (ns, qp["qpn"], qp.get("rate_kbps", 0), qp.get("srtt_us", 0))
            for ns, sdev in senders
            for qp in rc_qps(["ip", "netns", "exec", ns, ctl, "-j", "qp", "show", sdev],
                             ("RTS",))]


def main():
    out, interval, ns_r, dev, ctl = sys.argv[1:6]
    senders = [a.split("=", 1) for a in sys.argv[6:]]
    interval = float(interval)
    t0 = time.monotonic()
    sf = open(out + ".senders", "w", buffering=1) if senders else None
    if sf:
        sf.write("t,qps\n")
    rf = open(out + ".red", "w", buffering=1)
    rf.write("t,dropped,marked,early,pdrop\n")
    with open(out, "w", buffering=1) as f:
        f.write("t,backlog_bytes,link_bytes,qps\n")
        while True:
            t = time.monotonic() - t0
            q = subprocess.run(["tc", "-n", ns_r, "-s", "qdisc", "show", "dev", "bnrd"],
                               capture_output=True, text=True).stdout
            backlog = link = 0
            rstat = {"dropped": 0, "marked": 0, "early": 0, "pdrop": 0}
            red = tbf = False
            for line in q.splitlines():
                if line.startswith("qdisc"):
                    red = line.startswith("qdisc red")
                    tbf = line.startswith("qdisc tbf")
                m = re.search(r"backlog (\d+)b", line)
                if red and m:
                    backlog = int(m.group(1))
                if red:
                    for k in rstat:
                        m = re.search(r"\b%s (\d+)" % k, line)
                        if m:
                            rstat[k] = int(m.group(1))
                m = re.search(r"Sent (\d+) bytes", line)
                if tbf and m:
                    link = int(m.group(1))
            qps = ["%d:%d" % (qp["qpn"], qp.get("counters", {}).get("rcvd_bytes", 0))
                   for qp in rc_qps([ctl, "-j", "qp", "show", dev], ("RTR", "RTS"))]
            f.write("%.3f,%d,%d,%s\n" % (t, backlog, link, ";".join(qps)))
            rf.write("%.3f,%d,%d,%d,%d\n" % (t, rstat["dropped"], rstat["marked"],
                                            rstat["early"], rstat["pdrop"]))
            if sf:
                sf.write("%.3f,%s\n" % (t, ";".join(sender_qps(ctl, senders))))
            time.sleep(max(0.0, interval - (time.monotonic() - t0 - t)))


if __name__ == "__main__":
    main()
