#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Run the mrxe-fabric matrix, summarise it, plot it and check it.

    sim/run.py [--quick] [--seeds N] [--jobs 2] [--out build/sim]

Every run is one process of build/sim/mrxe-fabric (one transport, scenario,
workload and seed); standard RoCEv2 and MetaRoCE run on the same fabric,
ECMP hash seeds and source ports (same seed), so each ratio compares runs
of the same matrix.  Writes OUT/runs.csv (one row per run), OUT/fct.csv
(per message), OUT/links.csv (per leaf-spine link), OUT/summary.csv,
OUT/summary.md and OUT/sim-*.png.

Exit status 1 when a run failed its engine invariants (--check: the
scoreboard and path set invariants after every ACK, every message
completed exactly once), when a MetaRoCE ring AllReduce did not complete
(no fault, spine link failed, failed then rerouted,
lossy link), or when MetaRoCE's p99 ring
completion time with ECMP collisions is not below standard RoCEv2's.
Documentation/simulation.rst describes the model and the parameters.
"""
import argparse
import csv
import io
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(TOP, "bench"))
import report  # noqa: E402  (bench/report.py: colours and helpers)

LABEL = {"std": "standard RoCEv2 (GBN, 1 port, DCQCN)",
         "stdb10m": "standard RoCEv2, DCQCN B = 10 MB (sensitivity)",
         "meta": "MetaRoCE (SACK, multipath, ECN reaction)",
         "meta1": "MetaRoCE, 1 path (ablation)"}
COLOR = {"std": report.COLORS["mrxe"], "stdb10m": "tab:cyan",
         "meta": report.COLORS["mrxe-meta"],
         "meta1": "tab:orange"}
SCEN = {"ecmp": "ECMP collisions", "fail": "spine link failed",
        "failrc": "failed, rerouted 1 ms later",
        "lossy": "lossy spine link"}


def pct(vals, p):
    """Linear-interpolated percentile (numpy's default)."""
    v = sorted(vals)
    if not v:
        return None
    k = (len(v) - 1) * p / 100.0
    i = int(k)
    j = min(i + 1, len(v) - 1)
    return v[i] + (v[j] - v[i]) * (k - i)


def matrix(a):
    topo = a.topo
    runs = []
    for seed in range(1, a.seeds + 1):
        for scen in a.scenarios:
            for tr in ("std", "meta"):
                runs.append((tr, scen, "ring", seed))
        if not a.ring_only:
            runs.append(("meta1", "ecmp", "ring", seed))
            runs.append(("stdb10m", "ecmp", "ring", seed))
    for wl in () if a.ring_only else ("alltoall", "incast", "perm"):
        for seed in range(1, min(a.seeds, 2) + 1):
            for tr in ("std", "meta"):
                runs.append((tr, "ecmp", wl, seed))
    return topo, runs


def run_one(a, topo, r, tmp):
    tr, scen, wl, seed = r
    args = [a.bin, "--transport", "meta" if tr.startswith("meta") else "std",
            "--scenario", scen, "--workload", wl, "--seed", str(seed),
            "--leaves", str(topo[0]), "--spines", str(topo[1]),
            "--hosts", str(topo[2]), "--bytes", str(a.bytes),
            "--paths", "1" if tr == "meta1" else str(a.paths),
            "--loss", str(a.loss),
            "--fct", os.path.join(tmp, f"fct-{tr}-{scen}-{wl}-{seed}.csv"),
            "--links", os.path.join(tmp, f"links-{tr}-{scen}-{wl}-{seed}.csv")]
    if tr == "stdb10m":
        args += ["--dcqcn-b", str(10 << 20)]
    if a.check:
        args.append("--check")
    t0 = time.time()
    p = subprocess.run(args, capture_output=True, text=True)
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    row = rows[-1] if rows else {}
    row["transport"] = tr
    row["rc"] = str(p.returncode)
    row["wall_s"] = f"{time.time() - t0:.1f}"
    if p.returncode:
        sys.stderr.write(f"sim: {' '.join(args)}: rc {p.returncode}\n"
                         f"{p.stderr[-2000:]}")
    print(f"sim: {tr:5} {scen:5} {wl:8} seed {seed}: "
          f"{'done' if row.get('completed') == '1' else 'DID NOT COMPLETE'} "
          f"{row.get('cct_us', '?')} us (ideal {row.get('ideal_us', '?')}), "
          f"retx {row.get('retx_pkts', '?')}, wall {row['wall_s']} s",
          flush=True)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(TOP, "build", "sim"))
    ap.add_argument("--bin", default=os.path.join(TOP, "build", "sim",
                                                  "mrxe-fabric"))
    ap.add_argument("--loss", type=float, default=0.005)
    ap.add_argument("--topo", help="LEAVES,SPINES,HOSTS (default: 4,4,4 "
                    "with --quick, else 8,8,8)")
    ap.add_argument("--mib", type=int, help="AllReduce buffer per host, MiB")
    ap.add_argument("--paths", type=int, help="MetaRoCE paths per QP")
    ap.add_argument("--scenarios", default="ecmp,fail,failrc,lossy")
    ap.add_argument("--ring-only", action="store_true",
                    help="no 1-path ablation, no other workloads")
    a = ap.parse_args()
    a.scenarios = a.scenarios.split(",")
    if a.quick:
        topo, mib, paths, a.check = (4, 4, 4), 4, 8, True
        a.seeds = a.seeds or 3
    else:
        topo, mib, paths, a.check = (8, 8, 8), 8, 16, False
        a.seeds = a.seeds or 5
    a.topo = tuple(int(x) for x in a.topo.split(",")) if a.topo else topo
    a.bytes = (a.mib or mib) << 20
    a.paths = a.paths or paths
    os.makedirs(a.out, exist_ok=True)
    tmp = os.path.join(a.out, "runs")
    os.makedirs(tmp, exist_ok=True)
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    topo, runs = matrix(a)
    print(f"sim: {len(runs)} runs, fabric {topo[0]} leaves x {topo[1]} spines"
          f" x {topo[2]} hosts, {a.bytes >> 20} MiB per host, {a.jobs} jobs",
          flush=True)
    t0 = time.time()
    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        rows = list(ex.map(lambda r: run_one(a, topo, r, tmp), runs))
    wall = time.time() - t0

    fields = list(rows[0].keys())
    for r in rows:
        for k in r:
            if k not in fields:
                fields.append(k)
    with open(os.path.join(a.out, "runs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    fct, links = [], []
    for name in sorted(os.listdir(tmp)):
        tr = name.split("-")[1]
        with open(os.path.join(tmp, name)) as f:
            for line in f:
                v = line.strip().split(",")
                if name.startswith("fct-"):
                    fct.append((tr, v[1], v[2], int(v[3]), int(v[4]),
                                float(v[5])))
                else:
                    links.append((tr, v[1], v[2], int(v[3]), v[4],
                                  int(v[5]), float(v[6]), int(v[7])))
    with open(os.path.join(a.out, "fct.csv"), "w") as f:
        f.write("transport,scenario,workload,seed,bytes,fct_us\n")
        for x in fct:
            f.write(",".join(map(str, x)) + "\n")
    with open(os.path.join(a.out, "links.csv"), "w") as f:
        f.write("transport,scenario,workload,seed,link,tx_bytes,util,max_queue\n")
        for x in links:
            f.write(",".join(map(str, x)) + "\n")

    # summary per (transport, scenario, workload)
    groups = {}
    for r in rows:
        groups.setdefault((r["transport"], r["scenario"], r["workload"]),
                          []).append(r)
    summ = []
    for (tr, sc, wl), rs in sorted(groups.items()):
        done = [float(r["cct_us"]) for r in rs if r.get("completed") == "1"]

        def mean(k):
            v = [float(r[k]) for r in rs if r.get(k) not in (None, "")]
            return sum(v) / len(v) if v else 0
        summ.append({
            "transport": tr, "scenario": sc, "workload": wl,
            "runs": len(rs), "completed": len(done),
            "cct_p50_us": pct(done, 50) if len(done) == len(rs) else None,
            "cct_p99_us": pct(done, 99) if len(done) == len(rs) else None,
            "ideal_us": mean("ideal_us"),
            "retx_pkts": mean("retx_pkts"),
            "lost_pkts": mean("lost_data"),
            "dropped_all": mean("drop_buffer") + mean("drop_fail") +
            mean("drop_loss"),
            "ecn_marks": mean("ecn_marks"), "cnps": mean("cnps"),
            "rtos": mean("rtos"), "qp_errors": mean("qp_errors"),
            "util_cv": mean("util_cv"), "util_min": mean("util_min"),
            "util_max": mean("util_max"), "q_p99": mean("q_p99"),
            "q_max": mean("q_max")})
    with open(os.path.join(a.out, "summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(summ[0].keys()))
        w.writeheader()
        w.writerows(summ)

    def get(tr, sc, wl="ring"):
        for s in summ:
            if (s["transport"], s["scenario"], s["workload"]) == (tr, sc, wl):
                return s
        return None

    def f0(v):
        return "DNF" if v is None else f"{v:.0f}"
    md = [f"fabric {topo[0]}x{topo[1]}x{topo[2]} (leaves x spines x hosts), "
          f"100 Gbit/s, {a.bytes >> 20} MiB AllReduce buffer per host, "
          f"{a.seeds} seeds, MetaRoCE {a.paths} paths", "",
          "| workload | scenario | transport | completed | p50 us | p99 us |"
          " ideal us | retx | lost data | dropped (all) | fabric util CV |"
          " queue p99 B |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in summ:
        md.append(f"| {s['workload']} | {s['scenario']} | {s['transport']} | "
                  f"{s['completed']}/{s['runs']} | {f0(s['cct_p50_us'])} | "
                  f"{f0(s['cct_p99_us'])} | {s['ideal_us']:.0f} | "
                  f"{s['retx_pkts']:.0f} | {s['lost_pkts']:.0f} | "
                  f"{s['dropped_all']:.0f} | "
                  f"{s['util_cv']:.3f} | {s['q_p99']:.0f} |")
    md.append("")
    ratios = {}
    for sc in a.scenarios:
        s, m = get("std", sc), get("meta", sc)
        if s and m and s["cct_p99_us"] and m["cct_p99_us"]:
            ratios[sc] = s["cct_p99_us"] / m["cct_p99_us"]
            md.append(f"ring {sc}: p99 standard / MetaRoCE = "
                      f"{ratios[sc]:.2f}x, p50 = "
                      f"{s['cct_p50_us'] / m['cct_p50_us']:.2f}x")
        elif s and m:
            md.append(f"ring {sc}: standard completed {s['completed']}/"
                      f"{s['runs']}, MetaRoCE {m['completed']}/{m['runs']}")
    m1, m = get("meta1", "ecmp"), get("meta", "ecmp")
    if m1 and m and m1["cct_p99_us"] and m["cct_p99_us"]:
        md.append(f"ring ecmp: p99 MetaRoCE 1 path / MetaRoCE {a.paths} paths"
                  f" = {m1['cct_p99_us'] / m['cct_p99_us']:.2f}x")
    sb = get("stdb10m", "ecmp")
    if sb and m and sb["cct_p99_us"] and m["cct_p99_us"]:
        md.append(f"ring ecmp: p99 standard with DCQCN B = 10 MB / MetaRoCE"
                  f" = {sb['cct_p99_us'] / m['cct_p99_us']:.2f}x")
    md.append(f"\n{len(runs)} runs in {wall:.0f} s wall")
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))

    plots(a, summ, fct, links)

    # checks
    bad = []
    for r in rows:
        if r["rc"] != "0" or r.get("check_failed") != "0":
            bad.append(f"{r['transport']} {r.get('scenario')} "
                       f"{r.get('workload')} seed {r.get('seed')}: "
                       f"rc {r['rc']} check_failed {r.get('check_failed')}")
        if r["transport"] == "meta" and r.get("workload") == "ring" and \
                r.get("completed") != "1":
            bad.append(f"MetaRoCE ring {r.get('scenario')} seed "
                       f"{r.get('seed')} did not complete")
    if "ecmp" not in ratios or ratios["ecmp"] <= 1.0:
        bad.append("MetaRoCE p99 ring completion time with ECMP collisions "
                   "is not below standard RoCEv2's")
    for b in bad:
        print(f"sim: FAIL: {b}")
    print(f"sim: {'FAILED' if bad else 'passed'} ({len(runs)} runs, "
          f"{wall:.0f} s); results in {a.out}")
    return 1 if bad else 0


def plots(a, summ, fct, links):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("sim: python3-matplotlib missing, no plots (make deps)")
        return

    def save(fig, name):
        p = os.path.join(a.out, f"sim-{name}.png")
        fig.tight_layout()
        fig.savefig(p, dpi=100)
        plt.close(fig)
        print(f"sim: wrote {p}")

    trs = ["std", "meta", "meta1", "stdb10m"]
    # 1. ring completion time p50/p99 per scenario
    fig, ax = plt.subplots(figsize=(7, 4))
    scs = [x for x in ("ecmp", "fail", "failrc", "lossy") if x in a.scenarios]
    w = 0.1
    for i, tr in enumerate(trs):
        for j, (q, hatch) in enumerate((("cct_p50_us", ""), ("cct_p99_us",
                                                               "//"))):
            xs, ys = [], []
            for k, sc in enumerate(scs):
                s = next((s for s in summ if s["transport"] == tr and
                          s["scenario"] == sc and s["workload"] == "ring"),
                         None)
                if s is None:
                    continue
                x = k + (i * 2 + j - 3.5) * w
                if s[q] is None:
                    ax.text(x, 0, "DNF", rotation=90, ha="center",
                            va="bottom", fontsize=8, color=COLOR[tr])
                    continue
                xs.append(x)
                ys.append(s[q] / 1e3)
            ax.bar(xs, ys, w, color=COLOR[tr], hatch=hatch,
                   label=f"{LABEL[tr]} {'p50' if not j else 'p99'}")
    ax.set_xticks(range(len(scs)), [SCEN[s] for s in scs], fontsize=8)
    ax.set_ylabel("ring AllReduce completion (ms)")
    ax.set_title("AllReduce completion time across seeds")
    ax.legend(fontsize=6)
    save(fig, "allreduce")

    # 2. per-message completion time CDF (ring chunks, ECMP; other workloads)
    wls = sorted({x[2] for x in fct})
    fig, axs = plt.subplots(1, len(wls), figsize=(4 * len(wls), 3.6),
                            squeeze=False)
    for ax, wl in zip(axs[0], wls):
        for tr in trs:
            v = sorted(x[5] for x in fct if x[0] == tr and x[1] == "ecmp" and
                       x[2] == wl)
            if not v:
                continue
            ax.plot(v, [(i + 1) / len(v) for i in range(len(v))],
                    color=COLOR[tr], label=tr)
        ax.set_xscale("log")
        ax.set_xlabel("message completion time (us)")
        ax.set_title(f"{wl} (ECMP)")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    axs[0][0].set_ylabel("CDF")
    save(fig, "fct-cdf")

    # 3. fabric link utilisation spread (ring, ECMP)
    fig, ax = plt.subplots(figsize=(6, 4))
    data, names = [], []
    for tr in trs:
        v = [x[6] for x in links if x[0] == tr and x[1] == "ecmp" and
             x[2] == "ring"]
        if v:
            data.append(v)
            names.append(tr)
    ax.boxplot(data, labels=names, whis=(0, 100))
    ax.set_ylabel("leaf-spine link utilisation")
    ax.set_title("Spine link utilisation spread (ring, ECMP, all seeds)")
    save(fig, "util")

    # 4. retransmitted / lost, 5. queue occupancy, per scenario
    for name, keys, ylabel in (
            ("retx", (("retx_pkts", ""), ("lost_pkts", "//")),
             "packets per run, mean (0 drawn as 0.5)"),
            ("queue", (("q_p99", ""), ("q_max", "//")),
             "egress queue bytes, mean over runs of p99 / max")):
        fig, ax = plt.subplots(figsize=(7, 4))
        for i, tr in enumerate(trs):
            for j, (k, hatch) in enumerate(keys):
                xs, ys = [], []
                for n, sc in enumerate(scs):
                    s = next((s for s in summ if s["transport"] == tr and
                              s["scenario"] == sc and
                              s["workload"] == "ring"), None)
                    if s:
                        xs.append(n + (i * 2 + j - 3.5) * w)
                        ys.append(max(s[k], 0.5))
                ax.bar(xs, ys, w, color=COLOR[tr], hatch=hatch,
                       label=f"{tr} {k}")
        ax.set_yscale("log")
        ax.set_xticks(range(len(scs)), [SCEN[s] for s in scs], fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.legend(fontsize=6)
        save(fig, name)


if __name__ == "__main__":
    sys.exit(main())
