#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test): stock rdma_rxe vs mrxe standard mode, measured in
# the same run on the same two-guest lab-VM topology (tools/labvm/vm-run.sh
# --two), with ib_write_bw and ib_read_bw -s 65536 -D 5, optionally under
# netem loss on the data direction.  Writes bench/results/<stamp>.csv (raw)
# and bench/results/<stamp>-ratio.csv (mrxe/stock), prints the ratio table.
#
#   bench/run.sh [--loss "0 0.1 1"] [--size BYTES] [--duration SECS]
#                [--transports "rxe mrxe"] [--tests "ib_write_bw ib_read_bw"]
# MRXE_BENCH_REV names the measured revision in the ratio file (default: the
# repository's git HEAD; set it when running from an exported tree).
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export MRXE_BENCH_LOSS="0 0.1 1 5"
export MRXE_BENCH_SIZE=65536
export MRXE_BENCH_DURATION=5
export MRXE_BENCH_TRANSPORTS="rxe mrxe mrxe-meta"
export MRXE_BENCH_TESTS="ib_write_bw ib_read_bw ib_write_lat"

while [ $# -gt 0 ]; do
	case $1 in
	--loss) MRXE_BENCH_LOSS=$2; shift ;;
	--size) MRXE_BENCH_SIZE=$2; shift ;;
	--duration) MRXE_BENCH_DURATION=$2; shift ;;
	--transports) MRXE_BENCH_TRANSPORTS=$2; shift ;;
	--tests) MRXE_BENCH_TESTS=$2; shift ;;
	-h|--help) sed -n '3,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
[[ "$MRXE_BENCH_SIZE" =~ ^[0-9]+$ ]] || { echo "--size wants bytes" >&2; exit 2; }
[[ "$MRXE_BENCH_DURATION" =~ ^[0-9]+$ ]] || { echo "--duration wants seconds" >&2; exit 2; }

case " $MRXE_BENCH_TRANSPORTS " in
*" mrxe "*)
	if [ ! -f "$REPO/build/rdma_mrxe.ko" ] || [ ! -f "$REPO/build/libmrxe-rdmav34.so" ]; then
		echo "bench: mrxe not built (make); measuring stock rxe only" >&2
	fi ;;
esac

nsteps=$(( $(wc -w <<< "$MRXE_BENCH_TRANSPORTS") * $(wc -w <<< "$MRXE_BENCH_TESTS") * $(wc -w <<< "$MRXE_BENCH_LOSS") ))
timeout=$(( nsteps * (MRXE_BENCH_DURATION * 20 + 90) + 300 ))
stamp=$(date +%Y%m%d-%H%M%S)
mkdir -p "$REPO/bench/results"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

"$REPO/tools/labvm/vm-run.sh" --two --live --timeout "$timeout" -- \
	bash "$REPO/bench/guest.sh" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
rundir=$(sed -n 's/.*logs: \(.*\)$/\1/p' "$log" | tail -n1)
csv=$rundir/vm2/bench.csv
if [ ! -s "$csv" ]; then
	echo "bench: no results (vm-run exit $rc; logs: ${rundir:-?})" >&2
	exit 1
fi
out=$REPO/bench/results/$stamp.csv
cp "$csv" "$out"
{
	echo "# $(date -u +%FT%TZ) kernel $(ls /boot/vmlinuz-6.1.*-amd64 | sort -V | tail -n1 | sed 's,.*vmlinuz-,,') tcg 2 vcpu/guest, git ${MRXE_BENCH_REV:-$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null)}"
	echo "# kept = goodput at this loss / the same transport's lossless goodput; rpl = retransmitted / netem-dropped packets (ib_write_bw)"
	echo "test,loss_pct,stock_rxe_gbps,mrxe_std_gbps,mrxe_meta_gbps,meta_over_std,meta_over_rxe,std_over_rxe,kept_rxe,kept_std,kept_meta,rpl_rxe,rpl_std,rpl_meta,p50_rxe_us,p99_rxe_us,p50_std_us,p99_std_us,p50_meta_us,p99_meta_us"
	awk -F, 'NR > 1 {
		key = $2 "," $3; t = $1
		bw[t "," key] = $6; p50[t "," key] = $8; p99[t "," key] = $9; rpl[t "," key] = $12
		if ($3 + 0 == 0) base[t "," $2] = $6
		if (!(key in seen)) { seen[key] = 1; order[n++] = key }
	}
	function r(a, b) { return (a != "" && b != "" && b > 0) ? sprintf("%.2f", a / b) : "" }
	END {
		for (i = 0; i < n; i++) {
			k = order[i]; split(k, kk, ","); tst = kk[1]
			s = bw["rxe," k]; m = bw["mrxe," k]; x = bw["mrxe-meta," k]
			printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", k, s, m, x,
				r(x, m), r(x, s), r(m, s),
				r(s, base["rxe," tst]), r(m, base["mrxe," tst]), r(x, base["mrxe-meta," tst]),
				rpl["rxe," k], rpl["mrxe," k], rpl["mrxe-meta," k],
				p50["rxe," k], p99["rxe," k], p50["mrxe," k], p99["mrxe," k],
				p50["mrxe-meta," k], p99["mrxe-meta," k]
		}
	}' "$csv"
} > "$REPO/bench/results/$stamp-ratio.csv"
echo
echo "raw:   $out"
echo "ratio: $REPO/bench/results/$stamp-ratio.csv"
grep '^#' "$REPO/bench/results/$stamp-ratio.csv"
grep -v '^#' "$REPO/bench/results/$stamp-ratio.csv" | column -t -s, 2>/dev/null ||
	grep -v '^#' "$REPO/bench/results/$stamp-ratio.csv"
[ "$rc" = 0 ] || echo "bench: vm-run exited $rc (a guest reported a problem; logs: $rundir)" >&2
exit 0
