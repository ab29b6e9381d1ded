#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise bench/run.sh results: medians over repeats, ratios, plots.

    bench/report.py RESULTS.csv [--out PREFIX] [--meta "text"]

RESULTS.csv is the combined raw file bench/run.sh writes (one row per
measurement, a leading `repeat` column).  Writes PREFIX-ratio.csv (one row
per test and loss: each transport's median goodput with min/max, the ratios
MetaRoCE/standard, MetaRoCE/stock, standard/stock, the kept fractions and
retransmitted/lost), PREFIX-summary.md (the headline table the README
quotes) and PREFIX-<plot>.png (goodput vs loss per test, retransmitted per
lost packet, write latency).  Every ratio is computed from measurements of
the same run.  Only rows with status "ok" count.
"""
import argparse
import csv
import statistics
import sys

TRANSPORTS = [("rxe", "stock rdma_rxe"), ("mrxe", "mrxe standard"),
              ("mrxe-meta", "mrxe MetaRoCE")]
COLORS = {"rxe": "tab:gray", "mrxe": "tab:blue", "mrxe-meta": "tab:red"}


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def load(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r.get("status") != "ok":
                continue
            rows.append(r)
    return rows


def group(rows, field):
    """(transport, test, loss) -> list of float values of @field."""
    g = {}
    for r in rows:
        v = num(r.get(field))
        if v is None:
            continue
        g.setdefault((r["transport"], r["test"], float(r["loss_pct"])),
                     []).append(v)
    return g


def med(vals):
    return statistics.median(vals) if vals else None


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt(v, nd=3):
    return "" if v is None else f"{v:.{nd}g}" if nd else str(v)


def us(v):
    return "-" if v is None else f"{v:.0f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--out", required=True)
    ap.add_argument("--meta", default="")
    a = ap.parse_args()

    rows = load(a.csv)
    if not rows:
        print("report: no ok rows in", a.csv, file=sys.stderr)
        return 1
    bw = group(rows, "bw_avg_gbps")
    rpl = group(rows, "retrans_per_lost")
    p50 = group(rows, "lat_p50_us")
    p99 = group(rows, "lat_p99_us")
    tests = sorted({r["test"] for r in rows})
    losses = sorted({float(r["loss_pct"]) for r in rows})
    nrep = len({r.get("repeat", "1") for r in rows})

    def m(d, t, test, loss):
        return med(d.get((t, test, loss), []))

    # ratio CSV
    hdr = ["test", "loss_pct"]
    for t, _ in TRANSPORTS:
        hdr += [f"{t}_gbps_median", f"{t}_gbps_min", f"{t}_gbps_max",
                f"{t}_n", f"kept_{t}", f"rpl_{t}", f"p50_{t}_us",
                f"p99_{t}_us"]
    hdr += ["meta_over_std", "meta_over_rxe", "std_over_rxe"]
    out_rows = []
    for test in tests:
        for loss in losses:
            row = [test, f"{loss:g}"]
            have = False
            for t, _ in TRANSPORTS:
                v = bw.get((t, test, loss), [])
                base = m(bw, t, test, 0.0)
                mv = med(v)
                have |= bool(v) or bool(p50.get((t, test, loss)))
                row += [fmt(mv), fmt(min(v) if v else None),
                        fmt(max(v) if v else None), str(len(v)),
                        fmt(ratio(mv, base), 2), fmt(m(rpl, t, test, loss)),
                        fmt(m(p50, t, test, loss)),
                        fmt(m(p99, t, test, loss))]
            s = m(bw, "mrxe", test, loss)
            x = m(bw, "mrxe-meta", test, loss)
            r = m(bw, "rxe", test, loss)
            row += [fmt(ratio(x, s), 3), fmt(ratio(x, r), 3),
                    fmt(ratio(s, r), 3)]
            if have:
                out_rows.append(row)
    with open(a.out + "-ratio.csv", "w", newline="") as f:
        f.write(f"# {a.meta}\n# medians over {nrep} repeat(s); kept = "
                "goodput / the same transport's lossless goodput; rpl = "
                "retransmitted / netem-dropped packets\n")
        w = csv.writer(f)
        w.writerow(hdr)
        w.writerows(out_rows)

    # markdown summary: the headline ratios
    md = [f"Medians over {nrep} repeat(s); {a.meta}", ""]
    for test in [t for t in tests if t.endswith("_bw")]:
        md.append(f"| {test} 64 KiB, Gb/s (kept) | " +
                  " | ".join(f"{l:g}% loss" for l in losses) + " |")
        md.append("|---" * (len(losses) + 1) + "|")
        for t, name in TRANSPORTS:
            cells = []
            for loss in losses:
                v = m(bw, t, test, loss)
                k = ratio(v, m(bw, t, test, 0.0))
                cells.append("-" if v is None else
                             f"{v:.3g}" + ("" if loss == 0 or k is None
                                           else f" ({k:.2f})"))
            md.append(f"| {name} | " + " | ".join(cells) + " |")
        cells = []
        for loss in losses:
            q = ratio(m(bw, "mrxe-meta", test, loss),
                      m(bw, "mrxe", test, loss))
            cells.append("-" if q is None else f"**{q:.2f}**")
        md.append("| MetaRoCE / standard | " + " | ".join(cells) + " |")
        if test == "ib_write_bw":
            for t, name in TRANSPORTS[1:]:
                cells = [("" if loss == 0 or m(rpl, t, test, loss) is None
                          else f"{m(rpl, t, test, loss):.2f}")
                         for loss in losses]
                md.append(f"| retransmitted / lost, {name} | " +
                          " | ".join(cells) + " |")
        md.append("")
    lat = [t for t in tests if t.endswith("_lat")]
    for test in lat:
        md.append(f"| {test} 64 B | " + " | ".join(
            f"p50 / p99 us, {l:g}% loss" for l in losses
            if any(p50.get((t, test, l)) for t, _ in TRANSPORTS)) + " |")
        cols = [l for l in losses
                if any(p50.get((t, test, l)) for t, _ in TRANSPORTS)]
        md.append("|---" * (len(cols) + 1) + "|")
        for t, name in TRANSPORTS:
            md.append(f"| {name} | " + " | ".join(
                f"{us(m(p50, t, test, l))} / {us(m(p99, t, test, l))}"
                for l in cols) + " |")
        md.append("")
    with open(a.out + "-summary.md", "w") as f:
        f.write("\n".join(md))
    print("\n".join(md))

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: python3-matplotlib missing, no plots (make deps)",
              file=sys.stderr)
        return 0
    pngs = []

    def save(fig, name):
        fig.tight_layout()
        p = f"{a.out}-{name}.png"
        fig.savefig(p, dpi=100)
        plt.close(fig)
        pngs.append(p)

    for test in [t for t in tests if t.endswith("_bw")]:
        fig, ax = plt.subplots(figsize=(6, 4))
        for t, name in TRANSPORTS:
            xs = [l for l in losses if bw.get((t, test, l))]
            if not xs:
                continue
            ys = [m(bw, t, test, l) for l in xs]
            lo = [y - min(bw[(t, test, l)]) for y, l in zip(ys, xs)]
            hi = [max(bw[(t, test, l)]) - y for y, l in zip(ys, xs)]
            ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3,
                        color=COLORS[t], label=name)
        ax.set_xscale("symlog", linthresh=0.1)
        ax.set_xlabel("netem loss on the data direction (%)")
        ax.set_ylabel("goodput (Gb/s, median, min-max bars)")
        ax.set_title(f"{test}, 64 KiB messages: goodput vs loss")
        ax.grid(True, alpha=0.3)
        ax.legend()
        save(fig, test)
    if "ib_write_bw" in tests:
        fig, ax = plt.subplots(figsize=(6, 4))
        for t, name in TRANSPORTS[1:]:
            xs = [l for l in losses if l > 0 and rpl.get((t, "ib_write_bw", l))]
            if xs:
                ax.plot(xs, [m(rpl, t, "ib_write_bw", l) for l in xs],
                        marker="o", color=COLORS[t], label=name)
        ax.axhline(1.0, color="black", lw=0.8, ls="--",
                   label="1 retransmission per loss")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("netem loss on the data direction (%)")
        ax.set_ylabel("packets retransmitted / packets lost")
        ax.set_title("ib_write_bw: retransmissions per lost packet")
        ax.grid(True, alpha=0.3)
        ax.legend()
        save(fig, "retransmissions")
    for test in lat:
        cols = [l for l in losses
                if any(p50.get((t, test, l)) for t, _ in TRANSPORTS)]
        fig, ax = plt.subplots(figsize=(6, 4))
        width = 0.8 / len(TRANSPORTS)
        for i, (t, name) in enumerate(TRANSPORTS):
            x = [j + i * width for j in range(len(cols))]
            ax.bar(x, [m(p99, t, test, l) or 0 for l in cols], width,
                   color=COLORS[t], alpha=0.45, label=f"{name} p99")
            ax.bar(x, [m(p50, t, test, l) or 0 for l in cols], width,
                   color=COLORS[t], label=f"{name} p50")
        ax.set_xticks([j + width for j in range(len(cols))])
        ax.set_xticklabels([f"{l:g}% loss" for l in cols])
        ax.set_ylabel("latency (us)")
        ax.set_title(f"{test}, 64 B: p50 (solid) and p99 (light)")
        ax.legend(fontsize=7)
        save(fig, test)
    for p in pngs:
        print("plot:", p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
