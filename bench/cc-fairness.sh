#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test): congestion control at a 30 Mbit/s bottleneck in
# one lab guest (bench/cc-guest.sh, topology of
# selftests/mrxe_bottleneck_lib.sh).  Four ib_write_bw QPs from two
# senders, per setting: no ECN/no CC, ECN without reaction, ECN + DCQCN.
# Prints per setting: Jain's fairness index over the four QPs' goodput,
# bottleneck utilisation (sum / 30 Mbit/s) - both from the receiving QPs'
# byte counters sampled every 0.2 s (bench/cc-sample.py, analysed by
# bench/cc-analyse.py), steady state from 2 s after all four started -,
# the p99 of the bottleneck queue, the time to a held fair share, the
# bottleneck's drops and CE marks, and writes bench/results/cc-<stamp>.csv
# (raw, per QP), cc-<stamp>-samples.csv.gz and cc-<stamp>-summary.csv.
#
#   bench/cc-fairness.sh [--duration SECS] [--configs "nocc ecn dcqcn meta"]
#                        [--from-run DIR]  (analyse a finished guest run
#                        whose results (cc.csv, *.samples) are in DIR)
# Run it under the lab VM lock: flock /tmp/mrxe-vm.lock bench/cc-fairness.sh
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export MRXE_BENCH_DURATION=15
export MRXE_BENCH_CC="nocc ecn dcqcn meta"
from_run=
while [ $# -gt 0 ]; do
	case $1 in
	--duration) MRXE_BENCH_DURATION=$2; shift ;;
	--configs) MRXE_BENCH_CC=$2; shift ;;
	--from-run) from_run=$2; shift ;;
	-h|--help) sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
stamp=${MRXE_BENCH_STAMP:-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$REPO/bench/results"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
n=$(wc -w <<< "$MRXE_BENCH_CC")
if [ -n "$from_run" ]; then
	rundir=$from_run
else
	"$REPO/tools/labvm/vm-run.sh" --live --timeout $(( n * (MRXE_BENCH_DURATION * 4 + 120) + 240 )) -- \
		bash "$REPO/bench/cc-guest.sh" 2>&1 | tee "$log"
	rundir=$(sed -n 's/.*logs: \(.*\)$/\1/p' "$log" | tail -n1)
fi
csv=$(ls "$rundir"/cc.csv "$rundir"/*/cc.csv 2>/dev/null | head -n1)
[ -s "$csv" ] || { echo "bench: no results (logs: ${rundir:-?})" >&2; exit 1; }
cp "$csv" "$REPO/bench/results/cc-$stamp.csv"
sdir=$(dirname "$csv")
ana=$(mktemp)
trap 'rm -f "$log" "$ana"' EXIT
echo "config,jain,utilisation,link_utilisation,p99_queue_bytes,fair_share_s" > "$ana"
for c in $MRXE_BENCH_CC; do
	[ -s "$sdir/$c.samples" ] || continue
	echo "$c,$(python3 "$REPO/bench/cc-analyse.py" "$sdir/$c.samples" 30)" >> "$ana"
	sed "1d; s/^/$c,/" "$sdir/$c.samples"
done | gzip -9 > "$REPO/bench/results/cc-$stamp-samples.csv.gz"
{
	echo "# $(date -u +%FT%TZ) bottleneck tbf 30mbit + red ecn, 4 QPs ib_write_bw, git ${MRXE_BENCH_REV:-$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null)}"
	echo "config,jain,utilisation,link_utilisation,p99_queue_bytes,fair_share_s,perftest_jain,perftest_sum_gbps,min_gbps,max_gbps,red_dropped,red_drop_pct,red_marked,retrans_pkts,cnp_sent,cc_rate_cuts"
	awk -F, 'FNR == NR { a[$1] = $2 "," $3 "," $4 "," $5 "," $6; next }
	FNR > 1 {
		c = $1; g = $4 + 0
		# a QP whose perftest printed no result: no perftest_jain, and
		# the sum, min and max of the others
		if ($4 == "") {
			miss[c]++
		} else {
			s[c] += g; q[c] += g * g; k[c]++
			if (!(c in mn) || g < mn[c]) mn[c] = g
			if (!(c in mx) || g > mx[c]) mx[c] = g
		}
		rs[c] = $5; rd[c] = $6; rm[c] = $7; rt[c] = $8; cn[c] = $9; cu[c] = $10
		if (!(c in seen)) { seen[c] = 1; order[n++] = c }
	}
	END {
		for (i = 0; i < n; i++) {
			c = order[i]
			jain = q[c] > 0 && !miss[c] ? sprintf("%.3f", s[c] * s[c] / (k[c] * q[c])) : ""
			printf "%s,%s,%s,%.4f,%.4f,%.4f,%d,%.2f,%d,%d,%d,%d\n", c,
				(c in a) ? a[c] : "0,0,0,0,-1", jain,
				s[c], mn[c], mx[c], rd[c], 100 * rd[c] / (rs[c] + rd[c] + 1e-9), rm[c], rt[c], cn[c], cu[c]
		}
	}' "$ana" "$csv"
} > "$REPO/bench/results/cc-$stamp-summary.csv"
echo
column -t -s, "$REPO/bench/results/cc-$stamp-summary.csv" 2>/dev/null || cat "$REPO/bench/results/cc-$stamp-summary.csv"
