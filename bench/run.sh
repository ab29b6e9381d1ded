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
#                [--repeat N] [--quick]
# --repeat N boots the guests N times (default 3): medians with min/max.
# --quick: ib_write_bw and ib_write_lat at 0 and 1% loss, 4 s, 2 repeats.
# bench/report.py then writes the ratio CSV, a markdown summary and plots.
# MRXE_BENCH_REV names the measured revision in the ratio file (default: the
# repository's git HEAD; set it when running from an exported tree).
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export MRXE_BENCH_LOSS="0 0.1 1 5"
export MRXE_BENCH_SIZE=65536
export MRXE_BENCH_DURATION=5
export MRXE_BENCH_TRANSPORTS="rxe mrxe mrxe-meta"
export MRXE_BENCH_TESTS="ib_write_bw ib_read_bw ib_write_lat"
REPEAT=3

while [ $# -gt 0 ]; do
	case $1 in
	--loss) MRXE_BENCH_LOSS=$2; shift ;;
	--size) MRXE_BENCH_SIZE=$2; shift ;;
	--duration) MRXE_BENCH_DURATION=$2; shift ;;
	--transports) MRXE_BENCH_TRANSPORTS=$2; shift ;;
	--tests) MRXE_BENCH_TESTS=$2; shift ;;
	--repeat) REPEAT=$2; shift ;;
	--quick)
		MRXE_BENCH_LOSS="0 1"; MRXE_BENCH_DURATION=4; REPEAT=2
		MRXE_BENCH_TESTS="ib_write_bw ib_write_lat" ;;
	-h|--help) sed -n '3,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
[[ "$MRXE_BENCH_SIZE" =~ ^[0-9]+$ ]] || { echo "--size wants bytes" >&2; exit 2; }
[[ "$MRXE_BENCH_DURATION" =~ ^[0-9]+$ ]] || { echo "--duration wants seconds" >&2; exit 2; }
[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || { echo "--repeat wants a count >= 1" >&2; exit 2; }

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
out=$REPO/bench/results/$stamp.csv
rev=${MRXE_BENCH_REV:-$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null)}
kver=$(ls /boot/vmlinuz-6.1.*-amd64 2>/dev/null | sort -V | tail -n1 | sed 's,.*vmlinuz-,,')
start=$SECONDS
rc_all=0
for rep in $(seq "$REPEAT"); do
	echo "=== bench: repeat $rep of $REPEAT ($nsteps steps; $((SECONDS - start)) s so far)"
	"$REPO/tools/labvm/vm-run.sh" --two --live --timeout "$timeout" -- \
		bash "$REPO/bench/guest.sh" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	[ "$rc" = 0 ] || rc_all=$rc
	rundir=$(sed -n 's/.*logs: \(.*\)$/\1/p' "$log" | tail -n1)
	csv=$rundir/vm2/bench.csv
	if [ ! -s "$csv" ]; then
		echo "bench: repeat $rep gave no results (vm-run exit $rc; logs: ${rundir:-?})" >&2
		continue
	fi
	[ -s "$out" ] || sed -n '1s/^/repeat,/p' "$csv" > "$out"
	tail -n +2 "$csv" | sed "s/^/$rep,/" >> "$out"
	echo "=== bench: repeat $rep done after $((SECONDS - start)) s (logs: $rundir)"
done
[ -s "$out" ] || { echo "bench: no results" >&2; exit 1; }
echo
echo "raw: $out"
meta="$(date -u +%FT%TZ), kernel $kver, TCG, 2 vCPUs per guest, git $rev, -s $MRXE_BENCH_SIZE -D $MRXE_BENCH_DURATION, loss on the data direction"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" "$REPO/bench/report.py" "$out" --out "$REPO/bench/results/$stamp" --meta "$meta" ||
	echo "bench: report failed" >&2
echo "bench: $((SECONDS - start)) s in all"
[ "$rc_all" = 0 ] || echo "bench: a vm-run exited $rc_all (a guest reported a problem)" >&2
exit 0
