#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Benchmarks (not tests): `make bench`.  One run measures, side by side,
# stock rdma_rxe, mrxe standard RoCEv2 and mrxe MetaRoCE, in these parts
# (--parts), each writing bench/results/<stamp>-<part>.csv:
#   netns      scenario 0: two namespaces over a veth, netem loss 0.05%
#              delay 2ms, TCP (iperf3 -P 1/-P 4) beside mrxe (bench/netns.sh)
#   perftest   two guests (tools/labvm/vm-run.sh --two, bench/guest.sh):
#              loss sweep on the data and ACK directions (scenario 1),
#              reordering and duplication (2), write/read latency with every
#              sample for CDFs (3), message-size and QP-count sweeps (6)
#   multipath  scenario 4: 1/2/4 paths over an ECMP fabric, a black-holed
#              path mid-run (bench/multipath.sh)
#   cc         scenario 5: 4 QPs at an ECN bottleneck, no CC / DCQCN /
#              MetaRoCE (bench/cc-fairness.sh)
# then bench/report.py: medians over the repeats with min/max, ratio CSVs,
# <stamp>-summary.md (the README's table) and the PNG plots.
#
#   bench/run.sh [--quick] [--parts "netns perftest multipath cc"]
#                [--repeat N] [--duration SECS] [--transports "rxe mrxe mrxe-meta"]
#                [--loss "0 0.1 0.5 1 2 5"] [--scenarios "loss ack reorder lat size qps"]
#                [--mtu BYTES]  (the guests' eth0 MTU, default 1500: RoCE MTU 1024;
#                               9000 gives RoCE MTU 4096)
#                [--no-readme]   (experiments: leave README's results alone)
# --repeat N boots the perftest guests N times (default 3).
# --quick (make bench QUICK=1, about 10 min): netns and perftest only;
# ib_write_bw at 0 and 1% loss and ib_write_lat (1000 iterations: about 4
# ms an exchange between two TCG guests over the Unix-socket link; it was
# 45 ms over the TCP link with Nagle, testing.rst "Two guests"), 3 s, 2
# repeats.
# MRXE_BENCH_REV names the measured revision (default: git HEAD).
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export MRXE_BENCH_LOSS="0 0.1 0.5 1 2 5"
export MRXE_BENCH_SIZE=65536
export MRXE_BENCH_MTU=${MRXE_BENCH_MTU:-1500}
# 2 s: perftest spends about 2 s of a point on its own setup either way,
# and 3 s points kept the full run at 52 minutes (issue 15 asks for 45)
export MRXE_BENCH_DURATION=2
export MRXE_BENCH_TRANSPORTS="rxe mrxe mrxe-meta"
export MRXE_BENCH_TESTS="ib_write_bw ib_read_bw ib_send_bw"
export MRXE_BENCH_SCENARIOS="loss ack reorder lat size qps"
export MRXE_BENCH_LAT_TESTS="ib_write_lat ib_read_lat"
export MRXE_BENCH_LAT_ITERS=${MRXE_BENCH_LAT_ITERS:-1000}
export MRXE_BENCH_LAT_LOSS=${MRXE_BENCH_LAT_LOSS:-0 1}
PARTS="netns perftest multipath cc"
REPEAT=3
quick=0
readme=1

while [ $# -gt 0 ]; do
	case $1 in
	--loss) MRXE_BENCH_LOSS=$2; shift ;;
	--size) MRXE_BENCH_SIZE=$2; shift ;;
	--mtu) MRXE_BENCH_MTU=$2; shift ;;
	--duration) MRXE_BENCH_DURATION=$2; shift ;;
	--transports) MRXE_BENCH_TRANSPORTS=$2; shift ;;
	--tests) MRXE_BENCH_TESTS=$2; shift ;;
	--scenarios) MRXE_BENCH_SCENARIOS=$2; shift ;;
	--parts) PARTS=$2; shift ;;
	--repeat) REPEAT=$2; shift ;;
	--no-readme) readme=0 ;;
	--quick)
		MRXE_BENCH_LOSS="0 1"; MRXE_BENCH_DURATION=3; REPEAT=2
		MRXE_BENCH_TESTS="ib_write_bw"; MRXE_BENCH_LAT_TESTS=ib_write_lat
		MRXE_BENCH_LAT_ITERS=1000
		MRXE_BENCH_SCENARIOS="loss lat"; PARTS="netns perftest"; quick=1
		export MRXE_NS_REPEAT=2 MRXE_NS_DURATION=3 ;;
	-h|--help) sed -n '3,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
[[ "$MRXE_BENCH_SIZE" =~ ^[0-9]+$ ]] || { echo "--size wants bytes" >&2; exit 2; }
[[ "$MRXE_BENCH_MTU" =~ ^[0-9]+$ ]] && [ "$MRXE_BENCH_MTU" -ge 1280 ] && [ "$MRXE_BENCH_MTU" -le 9000 ] ||
	{ echo "--mtu wants 1280..9000 bytes" >&2; exit 2; }
[[ "$MRXE_BENCH_DURATION" =~ ^[0-9]+$ ]] || { echo "--duration wants seconds" >&2; exit 2; }
[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || { echo "--repeat wants a count >= 1" >&2; exit 2; }
for p in $PARTS; do
	case $p in netns|perftest|multipath|cc) ;;
	*) echo "unknown part $p (netns perftest multipath cc)" >&2; exit 2 ;;
	esac
done

case " $MRXE_BENCH_TRANSPORTS " in
*" mrxe "*)
	if [ ! -f "$REPO/build/rdma_mrxe.ko" ] || [ ! -f "$REPO/build/libmrxe-rdmav34.so" ]; then
		echo "bench: mrxe not built (make); measuring stock rxe only" >&2
	fi ;;
esac

# the number of perftest points per transport and repeat (bench/guest.sh)
npoints=$(MRXE_VM_ROLE=0 MRXE_PEER_IP=- bash "$REPO/bench/guest.sh" --count)
ntr=$(wc -w <<< "$MRXE_BENCH_TRANSPORTS")
nsteps=$((npoints * ntr))
# latency points: about 4 ms an exchange between two TCG guests (1000
# iterations: a point took 10-14 s start to start on 2026-12-06; 55-65 s
# over the old TCP link), plus perftest's setup
nlat=0
case " $MRXE_BENCH_SCENARIOS " in
*" lat "*) nlat=$(( $(wc -w <<< "$MRXE_BENCH_LAT_TESTS") * $(wc -w <<< "$MRXE_BENCH_LAT_LOSS") * ntr )) ;;
esac
timeout=$(( nsteps * (MRXE_BENCH_DURATION * 20 + 90) + 300 ))
export MRXE_BENCH_STAMP=${MRXE_BENCH_STAMP:-$(date +%Y%m%d-%H%M%S)}
stamp=$MRXE_BENCH_STAMP
mkdir -p "$REPO/bench/results"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
res=$REPO/bench/results/$stamp
export MRXE_BENCH_REV=${MRXE_BENCH_REV:-$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null)}
rev=$MRXE_BENCH_REV
kver=$(ls /boot/vmlinuz-6.1.*-amd64 2>/dev/null | sort -V | tail -n1 | sed 's,.*vmlinuz-,,')
start=$SECONDS
rc_all=0

# estimate of each part's seconds (measured on the 2-core lab host, TCG)
est_part() {
	case $1 in
	netns) echo $(( ${MRXE_NS_REPEAT:-3} * 8 * (${MRXE_NS_DURATION:-5} + 3) + 40 )) ;;
	perftest) echo $(( REPEAT * ((nsteps - nlat) * (MRXE_BENCH_DURATION + 3) +
		nlat * (MRXE_BENCH_LAT_ITERS * 4 / 1000 + 1) + 60) )) ;;
	multipath) echo $(( 8 * ${MRXE_MP_REPEATS:-3} * (${MRXE_MP_DURATION:-15} + 6) + 90 )) ;;
	cc) echo 360 ;;
	esac
}
total=0
for p in $PARTS; do total=$((total + $(est_part "$p"))); done
progress() {
	local el=$((SECONDS - start))
	printf '=== bench [%dm%02ds elapsed, about %dm left]: %s\n' $((el / 60)) $((el % 60)) \
		$(( (total > el ? total - el : 0) / 60 )) "$*"
}
progress "parts: $PARTS; perftest: $npoints points x $ntr transports x $REPEAT repeats; results bench/results/$stamp-*"

part_perftest() {
	local out=$res-perftest.csv lat=$res-lat.csv rep rc rundir csv
	for rep in $(seq "$REPEAT"); do
		progress "perftest repeat $rep of $REPEAT ($nsteps points)"
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
		# raw tool output of both guests next to the CSVs
		mkdir -p "$res-raw/perftest-$rep"
		cp -r "$rundir"/vm1 "$rundir"/vm2 "$res-raw/perftest-$rep/" 2>/dev/null
		[ -s "$out" ] || sed -n '1s/^/commit,kernel,repeat,/p' "$csv" > "$out"
		tail -n +2 "$csv" | sed "s/^/$rev,$kver,$rep,/" >> "$out"
		[ -s "$lat" ] || sed -n '1s/^/repeat,/p' "$rundir/vm2/lat.csv" > "$lat"
		tail -n +2 "$rundir/vm2/lat.csv" | sed "s/^/$rep,/" >> "$lat"
	done
	[ -s "$out" ]
}

for p in $PARTS; do
	progress "part $p"
	case $p in
	perftest) part_perftest || { echo "bench: no perftest results" >&2; rc_all=1; } ;;
	netns) bash "$REPO/bench/netns.sh" || rc_all=1 ;;
	multipath) bash "$REPO/bench/multipath.sh" || rc_all=1 ;;
	cc) bash "$REPO/bench/cc-fairness.sh" || rc_all=1 ;;
	esac
done
echo
meta="$(date -u +%F) ($( [ "$quick" = 1 ] && echo "make bench QUICK=1" || echo "make bench")), git $rev, kernel $kver, QEMU TCG, 2 vCPUs per guest, perftest -s $MRXE_BENCH_SIZE -D $MRXE_BENCH_DURATION, eth0 MTU $MRXE_BENCH_MTU"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
progress "report"
"$PY" "$REPO/bench/report.py" --stamp "$res" --meta "$meta" \
	$( [ "$readme" = 1 ] && echo --readme "$REPO/README.md") ||
	echo "bench: report failed" >&2
progress "done: bench/results/$stamp-summary.md"
[ "$rc_all" = 0 ] || echo "bench: a part exited non-zero ($rc_all; see above)" >&2
exit 0
