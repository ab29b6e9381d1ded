#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Analyse bench/cc-sample.py samples of one configuration (bench/cc-fairness.sh).

usage: cc-analyse.py SAMPLES_CSV LINK_MBPS
Prints one CSV line: jain,utilisation,link_utilisation,p99_queue_bytes,fair_s
- the steady state is from 2 s after the last QP became active to the end;
  Jain and utilisation from each QP's received bytes over it (RoCE
  payload and transport headers: at most about 0.96 of the link with
  1 KiB packets); link_utilisation from the frames the bottleneck's tbf
  sent over it (0 in samples without link_bytes);
- p99_queue_bytes: 99th percentile of the bottleneck backlog over it;
- fair_s: from the moment all four QPs are active until every 1 s window
  from then on has each QP's goodput within 0.8-1.25x of the mean (as
  tests/unit/cc_sim_test.cc, with 1 s windows for the guest's noise);
  -1 if never held.
"""
import sys


def main():
    path, link_mbps = sys.argv[1], float(sys.argv[2])
    rows = []
    with open(path) as f:
        has_link = "link_bytes" in next(f)
        for line in f:
            if has_link:
                t, backlog, link, qps = line.rstrip("\n").split(",", 3)
            else:
                t, backlog, qps = line.rstrip("\n").split(",", 2)
                link = 0
            d = {}
            for item in filter(None, qps.split(";")):
                qpn, b = item.split(":")
                d[qpn] = int(b)
            rows.append((float(t), int(backlog), d, int(link)))
    # the four QPs: those that moved most bytes (the last samples may come
    # after perftest destroyed its QPs)
    most = {}
    for r in rows:
        for q, v in r[2].items():
            most[q] = max(most.get(q, 0), v)
    qpns = sorted(most, key=lambda q: -most[q])[:4]
    active = [r for r in rows if all(r[2].get(q, 0) > 0 for q in qpns)]
    if len(qpns) < 4 or len(active) < 3:
        print("0,0,0,0,-1")
        return
    t_start = active[0][0]
    steady = [r for r in active if r[0] >= t_start + 2]
    if len(steady) < 2:
        steady = active
    a, b = steady[0], steady[-1]
    secs = b[0] - a[0]
    mbps = [(b[2][q] - a[2][q]) * 8 / secs / 1e6 for q in qpns]
    s, sq = sum(mbps), sum(m * m for m in mbps)
    jain = s * s / (4 * sq) if sq else 0
    util = s / link_mbps
    link_util = (b[3] - a[3]) * 8 / secs / 1e6 / link_mbps
    q = sorted(r[1] for r in steady)
    p99 = q[min(len(q) - 1, len(q) * 99 // 100)]
    # 1 s windows from t_start
    fair = []
    w0 = active[0]
    for r in active[1:]:
        if r[0] - w0[0] >= 1.0:
            d = [r[2][qq] - w0[2][qq] for qq in qpns]
            mean = sum(d) / 4
            fair.append((w0[0] - t_start, mean > 0 and min(d) >= 0.8 * mean
                         and max(d) <= 1.25 * mean))
            w0 = r
    held = len(fair)
    while held > 0 and fair[held - 1][1]:
        held -= 1
    fair_s = fair[held][0] if held < len(fair) else -1
    print("%.3f,%.3f,%.3f,%d,%.1f" % (jain, util, link_util, p99, fair_s))


if __name__ == "__main__":
    main()
