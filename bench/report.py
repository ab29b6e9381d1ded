#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise one `make bench` run: medians over repeats, ratios, plots.

    bench/report.py --stamp bench/results/STAMP [--meta "text"]

Reads what bench/run.sh's parts wrote for STAMP (each optional):
  STAMP-perftest.csv   two guests, one row per measurement (bench/guest.sh)
  STAMP-lat.csv        every latency sample (perftest -H) for the CDFs
  STAMP-netns.csv      scenario 0: TCP (iperf3) beside mrxe (bench/netns.sh)
  multipath-STAMP.csv, multipath-STAMP-timeline.csv   (bench/multipath.sh)
  cc-STAMP.csv, cc-STAMP-summary.csv                  (bench/cc-fairness.sh)
and writes STAMP-ratio.csv (one row per perftest point: each transport's
median with min/max and count, kept fraction, retransmitted/lost, latency
percentiles, and the ratios MetaRoCE/standard, MetaRoCE/stock,
standard/stock), STAMP-summary.md (the tables the README quotes) and
STAMP-<plot>.png.  Every ratio is computed from measurements of the same
run.  Only rows with status "ok" count.
"""
import argparse
import csv
import os
import statistics
import sys

TRANSPORTS = [("rxe", "stock rdma_rxe"), ("mrxe", "mrxe standard"),
              ("mrxe-meta", "mrxe MetaRoCE")]
NAMES = dict(TRANSPORTS + [("tcp", "TCP (iperf3)")])
COLORS = {"rxe": "tab:gray", "mrxe": "tab:blue", "mrxe-meta": "tab:red",
          "tcp": "tab:green", "mrxe-auto": "tab:purple"}
# mrxe-auto (the device default `auto`: RoCEv2 until the peer echoes the
# MetaRoCE capability) is measured only when asked for (--transports);
# main() appends it after the three above, so their positions stay
AUTO = ("mrxe-auto", "mrxe auto")


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def read_csv(path, ok_only=True):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
    return [r for r in rows if not ok_only or r.get("status", "ok") == "ok"]


def med(vals):
    return statistics.median(vals) if vals else None


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt(v, nd=3):
    return "" if v is None else f"{v:.{nd}g}"


def cell(vals, nd=3):
    """median (min-max) of a list, '-' when empty"""
    if not vals:
        return "-"
    m = med(vals)
    if len(vals) == 1:
        return f"{m:.{nd}g}"
    return f"{m:.{nd}g} ({min(vals):.{nd}g}-{max(vals):.{nd}g})"


class Perftest:
    """perftest points, keyed (scenario, transport, test, dir, netem, size, qps)."""

    def __init__(self, rows):
        self.rows = rows
        self.g = {}
        for r in rows:
            k = (r["scenario"], r["transport"], r["test"], r["dir"],
                 r["netem"], int(r["size"]), int(r["qps"]))
            self.g.setdefault(k, []).append(r)
        self.nrep = len({r.get("repeat", "1") for r in rows})

    def vals(self, field, *key):
        return [v for v in (num(r.get(field)) for r in self.g.get(key, []))
                if v is not None]

    def m(self, field, *key):
        return med(self.vals(field, *key))

    def keys(self, scenario):
        return sorted({k for k in self.g if k[0] == scenario},
                      key=lambda k: (k[2], k[3], num(k[4].split("loss ")[-1]
                                                     .rstrip("%")) or 0,
                                     k[4], k[5], k[6]))

    def points(self, scenario):
        """the distinct (test, dir, netem, size, qps) of a scenario"""
        seen = []
        for k in self.keys(scenario):
            p = (k[2],) + k[3:]
            if p not in seen:
                seen.append(p)
        return seen


def loss_of(netem):
    if netem.startswith("loss "):
        return num(netem.split()[1].rstrip("%"))
    return 0.0 if netem in ("", "-") else None


def ratio_csv(pt, path, meta):
    hdr = ["scenario", "test", "dir", "netem", "size", "qps"]
    for t, _ in TRANSPORTS:
        hdr += [f"{t}_gbps_median", f"{t}_gbps_min", f"{t}_gbps_max",
                f"{t}_n", f"kept_{t}", f"rpl_{t}", f"p50_{t}_us",
                f"p99_{t}_us", f"p999_{t}_us"]
    hdr += ["meta_over_std", "meta_over_rxe", "std_over_rxe"]
    out = []
    for scen in ("loss", "ack", "reorder", "lat", "size", "qps"):
        for test, d, netem, size, qps in pt.points(scen):
            row = [scen, test, d, netem, size, qps]
            for t, _ in TRANSPORTS:
                k = (scen, t, test, d, netem, size, qps)
                v = pt.vals("bw_avg_gbps", *k)
                base = pt.m("bw_avg_gbps", "loss", t, test, "data", "-",
                            size, qps)
                row += [fmt(med(v)), fmt(min(v) if v else None),
                        fmt(max(v) if v else None), str(len(v)),
                        fmt(ratio(med(v), base), 2),
                        fmt(pt.m("retrans_per_lost", *k)),
                        fmt(pt.m("lat_p50_us", *k)),
                        fmt(pt.m("lat_p99_us", *k)),
                        fmt(pt.m("lat_p999_us", *k))]
            s, x, r = (pt.m("bw_avg_gbps", scen, t, test, d, netem, size, qps)
                       for t in ("mrxe", "mrxe-meta", "rxe"))
            row += [fmt(ratio(x, s)), fmt(ratio(x, r)), fmt(ratio(s, r))]
            out.append(row)
    with open(path, "w", newline="") as f:
        f.write(f"# {meta}\n# medians over {pt.nrep} repeat(s); kept = "
                "goodput / the same transport's lossless goodput; rpl = "
                "retransmitted / netem-dropped packets\n")
        w = csv.writer(f)
        w.writerow(hdr)
        w.writerows(out)


def md_perftest(pt, md):
    """markdown tables of the perftest scenarios"""
    if not pt.rows:
        return
    size0 = 65536
    # 1. loss sweep, data direction
    for test in sorted({p[0] for p in pt.points("loss")}):
        nets = [p[2] for p in pt.points("loss") if p[0] == test]
        md.append(f"**{test}, 64 KiB, loss on the data direction**: "
                  "goodput Gb/s, median (min-max), and kept fraction of "
                  "the transport's own lossless goodput")
        md.append("")
        md.append("| transport | " + " | ".join(
            "lossless" if n == "-" else n for n in nets) + " |")
        md.append("|---" * (len(nets) + 1) + "|")
        for t, name in TRANSPORTS:
            base = pt.m("bw_avg_gbps", "loss", t, test, "data", "-", size0, 1)
            cells = []
            for n in nets:
                v = pt.vals("bw_avg_gbps", "loss", t, test, "data", n, size0, 1)
                k = ratio(med(v), base)
                cells.append(cell(v) + ("" if n == "-" or k is None
                                        else f" kept {k:.2f}"))
            md.append(f"| {name} | " + " | ".join(cells) + " |")
        def ratio_row(title, num_t, den_t):
            cells = []
            for n in nets:
                q = ratio(*(pt.m("bw_avg_gbps", "loss", t, test, "data", n,
                                 size0, 1) for t in (num_t, den_t)))
                cells.append("-" if q is None else f"**{q:.2f}**")
            md.append(f"| {title} | " + " | ".join(cells) + " |")
        ratio_row("MetaRoCE / standard", "mrxe-meta", "mrxe")
        if AUTO in TRANSPORTS:
            ratio_row("auto / MetaRoCE", "mrxe-auto", "mrxe-meta")
        for t in [t for t, _ in TRANSPORTS if t != "rxe"]:
            cells = [fmt(pt.m("retrans_per_lost", "loss", t, test, "data", n,
                              size0, 1)) or "-" if n != "-" else ""
                     for n in nets]
            if any(c not in ("", "-") for c in cells):
                md.append(f"| retransmitted / lost, {NAMES[t]} | " +
                          " | ".join(cells) + " |")
        md.append("")
    # 1b, 2: ACK direction, reordering and duplication
    for scen, title in (("ack", "loss on the ACK/response direction"),
                        ("reorder", "reordering and duplication")):
        pts = pt.points(scen)
        if not pts:
            continue
        md.append(f"**{title}**: goodput Gb/s, median (min-max)")
        md.append("")
        md.append("| point | " + " | ".join(n for _, n in TRANSPORTS) +
                  " | MetaRoCE / standard |")
        md.append("|---" * (len(TRANSPORTS) + 2) + "|")
        for test, d, netem, size, qps in pts:
            vs = [pt.vals("bw_avg_gbps", scen, t, test, d, netem, size, qps)
                  for t, _ in TRANSPORTS]
            q = ratio(med(vs[2]), med(vs[1]))
            md.append(f"| {test} {d} `{netem}` | " +
                      " | ".join(cell(v) for v in vs) +
                      f" | {'-' if q is None else f'**{q:.2f}**'} |")
        md.append("")
    # 3. latency
    pts = pt.points("lat")
    if pts:
        md.append("**Latency, 64 B**: p50 / p99 / p99.9 us (medians over "
                  "repeats)")
        md.append("")
        md.append("| point | " + " | ".join(n for _, n in TRANSPORTS) + " |")
        md.append("|---" * (len(TRANSPORTS) + 1) + "|")
        for test, d, netem, size, qps in pts:
            cells = []
            for t, _ in TRANSPORTS:
                k = ("lat", t, test, d, netem, size, qps)
                ps = [pt.m(f, *k) for f in ("lat_p50_us", "lat_p99_us",
                                            "lat_p999_us")]
                cells.append("-" if ps[0] is None else
                             " / ".join("-" if p is None else f"{p:.0f}"
                                        for p in ps))
            md.append(f"| {test} {'lossless' if netem == '-' else netem} | "
                      + " | ".join(cells) + " |")
        md.append("")
    # 6. sizes and QP counts (with the lossless 64 KiB, 1 QP point)
    for scen, title, idx in (("size", "message size, lossless", 4),
                             ("qps", "QP count, lossless (-q)", 5)):
        pts = [p for p in pt.points(scen)]
        if not pts:
            continue
        md.append(f"**ib_write_bw, {title}**: goodput Gb/s, median "
                  "(min-max)")
        md.append("")
        md.append("| " + ("bytes" if scen == "size" else "QPs") + " | " +
                  " | ".join(n for _, n in TRANSPORTS) +
                  " | MetaRoCE / standard | standard / stock |")
        md.append("|---" * (len(TRANSPORTS) + 3) + "|")
        for k in sweep_keys(pt, scen):
            vs = [pt.vals("bw_avg_gbps", *k[0], t, *k[1]) for t, _ in
                  TRANSPORTS]
            q1 = ratio(med(vs[2]), med(vs[1]))
            q2 = ratio(med(vs[1]), med(vs[0]))
            md.append(f"| {k[1][idx - 1]} | " +
                      " | ".join(cell(v) for v in vs) +
                      f" | {fmt(q1) or '-'} | {fmt(q2) or '-'} |")
        md.append("")


def sweep_keys(pt, scen):
    """((scenario,), (test, dir, netem, size, qps)) of a sweep, with the
    lossless 64 KiB 1-QP point of the loss scenario in its place"""
    ks = [((scen,), p) for p in pt.points(scen)]
    base = ("ib_write_bw", "data", "-", 65536, 1)
    if base in pt.points("loss"):
        ks.append((("loss",), base))
    i = 3 if scen == "size" else 4
    return sorted(ks, key=lambda k: k[1][i])


def md_netns(rows, md):
    if not rows:
        return
    nets = []
    for r in rows:
        if r["netem"] not in nets:
            nets.append(r["netem"])
    g = {}
    for r in rows:
        g.setdefault((r["transport"], r["streams"], r["netem"]), []).append(r)

    def vals(tr, st, n, f="gbps"):
        return [v for v in (num(r[f]) for r in g.get((tr, st, n), []))
                if v is not None]

    md.append("**Scenario 0: two namespaces over a veth** (one guest; netem "
              "on the data direction only); goodput Gb/s, median (min-max)")
    md.append("")
    md.append("| transport | " + " | ".join(n or "lossless" for n in nets)
              + " | retransmits (median, lossy) |")
    md.append("|---" * (len(nets) + 2) + "|")
    lines = [("tcp", "1", "TCP, iperf3 -P 1"), ("tcp", "4", "TCP, iperf3 -P 4"),
             ("mrxe", "1", "mrxe standard, ib_write_bw"),
             ("mrxe-meta", "1", "mrxe MetaRoCE, ib_write_bw")]
    for tr, st, name in lines:
        f = "tcp_retransmits" if tr == "tcp" else (
            "meta_retrans_pkts" if tr == "mrxe-meta" else "retrans_pkts")
        rt = med(vals(tr, st, nets[-1], f)) if len(nets) > 1 else None
        md.append(f"| {name} | " + " | ".join(cell(vals(tr, st, n))
                                              for n in nets) +
                  f" | {'-' if rt is None else f'{rt:.0f}'} |")
    tcp0 = med(vals("tcp", "1", nets[0]))
    cells = []
    for tr in ("mrxe", "mrxe-meta"):
        for n in nets:
            q = ratio(med(vals(tr, "1", n)), med(vals("tcp", "1", n)))
            cells.append(f"{NAMES[tr]} / TCP -P 1, {n or 'lossless'}: "
                         f"**{'-' if q is None else f'{q:.2f}'}**")
    md.append("")
    md.append("Ratios: " + "; ".join(cells) +
              (f" (TCP -P 1 lossless: {tcp0:.3g} Gb/s)." if tcp0 else "."))
    md.append("")


def md_multipath(rows, md):
    if not rows:
        return
    md.append("**Scenario 4: multipath over an ECMP fabric** (one guest, "
              "tbf-limited links; ib_write_bw, paths from the device "
              "default)")
    md.append("")
    md.append("| links | mode | paths | Gb/s | x MetaRoCE 1 path | links "
              "covered |")
    md.append("|---|---|---|---|---|---|")
    base = {r["links"]: num(r["gbps"]) for r in rows
            if r["case"] == "goodput" and r["mode"] == "metaroce" and
            r["paths"] == "1"}
    for r in rows:
        if r["case"] == "goodput":
            q = ratio(num(r["gbps"]), base.get(r["links"]))
            md.append(f"| {r['links']} | {r['mode']} | {r['paths']} | "
                      f"{fmt(num(r['gbps']))} | "
                      f"{'-' if q is None else f'**{q:.2f}**'} | "
                      f"{r['links_covered']} |")
    c = {r["case"]: num(r["gbps"]) for r in rows}
    if "blackhole_recovery_ms" in c:
        rec, srtt = c["blackhole_recovery_ms"], c.get("blackhole_srtt_ms")
        md.append("")
        if rec is None:
            md.append("Black hole on one of 2 links (4 paths): goodput never "
                      "came back to 0.9x one link.")
        else:
            rto = max(50.0, srtt or 0)
            md.append(f"Black hole on one of 2 links (4 paths): goodput back "
                      f"to >= 0.9x one link {rec:.0f} ms after the black "
                      f"hole: {rec / 50:.1f} RTO floors (50 ms), at most "
                      f"**{rec / rto:.1f} RTOs** (RTO >= max(floor, SRTT), "
                      f"SRTT {srtt or 0:.0f} ms before the hole).")
    md.append("")


def md_cc(rows, md):
    if not rows:
        return
    md.append("**Scenario 5: ECN bottleneck, 4 QPs** (one guest, tbf "
              "30 Mbit/s + RED with ECN)")
    md.append("")
    keys = [k for k in rows[0].keys() if k != "config"]
    md.append("| config | " + " | ".join(keys) + " |")
    md.append("|---" * (len(keys) + 1) + "|")
    for r in rows:
        md.append(f"| {r['config']} | " + " | ".join(r[k] for k in keys) +
                  " |")
    md.append("")


def plots(prefix, pt, lat, netns, mp, mpt, ccraw):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: python3-matplotlib missing, no plots (make deps)",
              file=sys.stderr)
        return []
    pngs = []

    def save(fig, name):
        fig.tight_layout()
        p = f"{prefix}-{name}.png"
        fig.savefig(p, dpi=100)
        plt.close(fig)
        pngs.append(p)

    # goodput vs loss, data direction (solid) and ACK direction (dashed)
    for test in sorted({p[0] for p in pt.points("loss")}):
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for t, name in TRANSPORTS:
            for scen, d, ls in (("loss", "data", "-"), ("ack", "ack", "--")):
                xs, ys, lo, hi = [], [], [], []
                for p in pt.points(scen):
                    if p[0] != test or p[1] != d:
                        continue
                    v = pt.vals("bw_avg_gbps", scen, t, *p)
                    if not v:
                        continue
                    xs.append(loss_of(p[2]))
                    ys.append(med(v))
                    lo.append(med(v) - min(v))
                    hi.append(max(v) - med(v))
                if xs:
                    ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3,
                                ls=ls, color=COLORS[t],
                                label=name + ("" if d == "data" else
                                              ", loss on ACKs"))
        ax.set_xscale("symlog", linthresh=0.1)
        ax.set_xlabel("netem loss (%)")
        ax.set_ylabel("goodput (Gb/s, median, min-max bars)")
        ax.set_title(f"{test}, 64 KiB: goodput vs loss")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        save(fig, test)
    # retransmitted / lost
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    have = False
    for t, name in TRANSPORTS[1:]:
        for test in sorted({p[0] for p in pt.points("loss")}):
            xs, ys = [], []
            for p in pt.points("loss"):
                v = pt.m("retrans_per_lost", "loss", t, *p)
                if p[0] == test and v:
                    xs.append(loss_of(p[2]))
                    ys.append(v)
            if xs:
                have = True
                ax.plot(xs, ys, marker="o", color=COLORS[t],
                        ls="-" if test == "ib_write_bw" else ":",
                        label=f"{name}, {test}")
    if have:
        ax.axhline(1.0, color="black", lw=0.8, ls="--",
                   label="1 retransmission per loss")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("netem loss on the data direction (%)")
        ax.set_ylabel("packets retransmitted / packets lost")
        ax.set_title("Retransmissions per lost packet")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        save(fig, "retransmissions")
    else:
        plt.close(fig)
    # latency CDFs
    for test in sorted({r["test"] for r in lat}):
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for t, name in TRANSPORTS:
            for loss, ls in (("0", "-"), ("1", "--")):
                xs = sorted(v for v in (num(r["usec"]) for r in lat
                                        if r["transport"] == t and
                                        r["test"] == test and
                                        num(r["loss_pct"]) == num(loss))
                            if v is not None)
                if xs:
                    ys = [(i + 1) / len(xs) for i in range(len(xs))]
                    ax.plot(xs, ys, ls=ls, color=COLORS[t],
                            label=f"{name}, {loss}% loss")
        ax.set_xscale("log")
        ax.set_xlabel("latency (us, log scale)")
        ax.set_ylabel("fraction of samples (CDF)")
        ax.set_title(f"{test}, 64 B: latency CDF, all repeats")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        save(fig, f"{test}-cdf")
    # sweeps
    for scen, xl, idx, name in (("size", "message size (bytes)", 3, "sizes"),
                                ("qps", "QPs (perftest -q)", 4, "qps")):
        ks = sweep_keys(pt, scen)
        if len(ks) < 2:
            continue
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for t, tn in TRANSPORTS:
            xs, ys = [], []
            for k in ks:
                v = pt.m("bw_avg_gbps", *k[0], t, *k[1])
                if v is not None:
                    xs.append(k[1][idx])
                    ys.append(v)
            if xs:
                ax.plot(xs, ys, marker="o", color=COLORS[t], label=tn)
        ax.set_xscale("log", base=2)
        ax.set_xlabel(xl)
        ax.set_ylabel("goodput (Gb/s, median)")
        ax.set_title(f"ib_write_bw lossless: goodput vs {name}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        save(fig, f"sweep-{name}")
    # scenario 0
    if netns:
        nets = []
        for r in netns:
            if r["netem"] not in nets:
                nets.append(r["netem"])
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        lines = [("tcp", "1", "TCP -P 1"), ("tcp", "4", "TCP -P 4"),
                 ("mrxe", "1", "mrxe standard"),
                 ("mrxe-meta", "1", "mrxe MetaRoCE")]
        w = 0.8 / len(lines)
        for i, (tr, st, name) in enumerate(lines):
            ys = [med([v for v in (num(r["gbps"]) for r in netns
                                   if r["transport"] == tr and
                                   r["streams"] == st and r["netem"] == n)
                       if v is not None]) or 0 for n in nets]
            ax.bar([j + i * w for j in range(len(nets))], ys, w,
                   color=COLORS[tr], alpha=1.0 if st == "1" else 0.5,
                   label=name)
        ax.set_xticks([j + 0.4 - w / 2 for j in range(len(nets))])
        ax.set_xticklabels([n or "lossless" for n in nets])
        ax.set_ylabel("goodput (Gb/s, median)")
        ax.set_title("Scenario 0: two namespaces over a veth, TCP vs mrxe")
        ax.legend(fontsize=7)
        save(fig, "netns")
    # multipath
    if mp:
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for links, mk in (("2", "o"), ("4", "s")):
            rs = [r for r in mp if r["case"] == "goodput" and
                  r["links"] == links and r["mode"] == "metaroce"]
            if rs:
                ax.plot([int(r["paths"]) for r in rs],
                        [num(r["gbps"]) for r in rs], marker=mk,
                        color=COLORS["mrxe-meta"],
                        ls="-" if links == "2" else "--",
                        label=f"MetaRoCE, {links} links")
            rs = [r for r in mp if r["case"] == "goodput" and
                  r["links"] == links and r["mode"] == "standard"]
            if rs:
                ax.plot([1], [num(rs[0]["gbps"])], marker=mk, ls="none",
                        color=COLORS["mrxe"],
                        label=f"standard, {links} links")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("paths per QP (UDP source ports)")
        ax.set_ylabel("goodput (Gb/s)")
        ax.set_title("Scenario 4: one QP over an ECMP fabric")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        save(fig, "multipath")
    if mpt:
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        ax.plot([num(r["t_s"]) for r in mpt], [num(r["gbps"]) for r in mpt],
                color=COLORS["mrxe-meta"], label="MetaRoCE, 4 paths, 2 links")
        ax.axvspan(0, num(mpt[0]["restore_s"]), color="black", alpha=0.1,
                   label="link 1 black-holed")
        ax.axhline(0.9 * num(mpt[0]["link_gbps"]), color="black", ls="--",
                   lw=0.8, label="0.9 x one link")
        ax.set_xlabel("time from the black hole (s)")
        ax.set_ylabel("goodput (Gb/s, 300 ms windows)")
        ax.set_title("Scenario 4: failover timeline")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        save(fig, "multipath-timeline")
    # ECN bottleneck: per-QP goodput per setting
    if ccraw:
        cfgs = []
        for r in ccraw:
            if r["config"] not in cfgs:
                cfgs.append(r["config"])
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        qps = sorted({r["qp"] for r in ccraw})
        w = 0.8 / max(len(qps), 1)
        for i, q in enumerate(qps):
            ys = [next((num(r["gbps"]) * 1000 for r in ccraw
                        if r["config"] == c and r["qp"] == q), 0)
                  for c in cfgs]
            ax.bar([j + i * w for j in range(len(cfgs))], ys, w,
                   label=f"QP {q}")
        ax.set_xticks([j + 0.4 - w / 2 for j in range(len(cfgs))])
        ax.set_xticklabels(cfgs)
        ax.set_ylabel("goodput per QP (Mb/s)")
        ax.set_title("Scenario 5: 4 QPs at a 30 Mbit/s ECN bottleneck")
        ax.legend(fontsize=7)
        save(fig, "cc")
    return pngs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stamp", required=True,
                    help="bench/results/STAMP (the prefix of the run's files)")
    ap.add_argument("--meta", default="")
    ap.add_argument("--readme", help="replace this file's section between "
                    "<!-- bench-results:begin/end --> with the summary")
    a = ap.parse_args()
    d, st = os.path.split(a.stamp)
    pt = Perftest(read_csv(a.stamp + "-perftest.csv"))
    if any(r.get("transport") == AUTO[0] for r in pt.rows):
        TRANSPORTS.append(AUTO)
        NAMES[AUTO[0]] = AUTO[1]
    lat = read_csv(a.stamp + "-lat.csv", ok_only=False)
    netns = read_csv(os.path.join(d, f"netns-{st}.csv"))
    mp = read_csv(os.path.join(d, f"multipath-{st}.csv"), ok_only=False)
    mpt = read_csv(os.path.join(d, f"multipath-{st}-timeline.csv"),
                   ok_only=False)
    cc = read_csv(os.path.join(d, f"cc-{st}-summary.csv"), ok_only=False)
    ccraw = read_csv(os.path.join(d, f"cc-{st}.csv"), ok_only=False)
    if not (pt.rows or netns or mp or cc):
        print("report: no results for", a.stamp, file=sys.stderr)
        return 1
    if pt.rows:
        ratio_csv(pt, a.stamp + "-ratio.csv", a.meta)
    md = [a.meta + (f"; perftest medians over {pt.nrep} repeat(s)"
                    if pt.rows else ""), ""]
    md_netns(netns, md)
    md_perftest(pt, md)
    md_multipath(mp, md)
    md_cc(cc, md)
    with open(a.stamp + "-summary.md", "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    pngs = plots(a.stamp, pt, lat, netns, mp, mpt, ccraw)
    for p in pngs:
        print("plot:", p)
    if a.readme:
        readme_section(a.readme, a.stamp, md, pngs)
    return 0


def readme_section(path, stamp, md, pngs):
    """The README's results: this run's tables and plots, between markers."""
    begin, end = "<!-- bench-results:begin -->", "<!-- bench-results:end -->"
    with open(path) as f:
        text = f.read()
    if begin not in text or end not in text:
        print(f"report: no {begin} ... {end} in {path}", file=sys.stderr)
        return
    top = os.path.dirname(os.path.abspath(path))
    rel = os.path.relpath(os.path.abspath(stamp), top)
    body = [begin, "",
            f"Generated by `make bench` (`bench/report.py --readme`) from "
            f"`{rel}-*`: {md[0]}.  Absolute numbers are QEMU TCG; read the "
            "ratios, which come from the same run.", ""]
    body += md[2:]
    for p in pngs:
        r = os.path.relpath(os.path.abspath(p), top)
        body.append(f"![{os.path.basename(p)}]({r})")
    body += ["", end]
    i, j = text.index(begin), text.index(end) + len(end)
    with open(path, "w") as f:
        f.write(text[:i] + "\n".join(body) + text[j:])
    print("report: README results section regenerated:", path)


if __name__ == "__main__":
    sys.exit(main())
