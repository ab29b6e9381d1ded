#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test), scenario 0 of `make bench`: the experiment users
# start from.  In ONE lab guest, two network namespaces over a veth pair
# (selftests/mrxe_xfer_lib.sh's topology), netem on the data direction only
# (B -> A: client to server), and side by side:
#   - TCP, iperf3 -P 1 and -P 4 (the reference; goodput and retransmits);
#   - mrxe standard RoCEv2 and mrxe MetaRoCE, ib_write_bw -s 65536 -D DUR
#     (the device default decides the mode of perftest's QPs);
# each lossless and with `loss 0.05% delay 2ms`, the device counters
# (retransmits, ECN marks, CNPs, drops by reason) and netem's drops read
# before and after every run.  Stock rdma_rxe is not in this scenario: on
# 6.1 it binds its UDP socket in init_net only and cannot connect two
# namespaces (bench/stock-rxe-netns.sh shows it); it is measured between
# two guests by bench/run.sh.
#
#   bench/netns.sh [--duration SECS] [--repeat N]
# Output: bench/results/netns-<stamp>.csv (one row per run, with commit and
# kernel) and the summary printed by bench/report.py --netns.
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export MRXE_NS_DURATION=${MRXE_NS_DURATION:-5}
export MRXE_NS_REPEAT=${MRXE_NS_REPEAT:-3}
export MRXE_NS_NETEM=${MRXE_NS_NETEM:-loss 0.05% delay 2ms}
while [ $# -gt 0 ]; do
	case $1 in
	--duration) MRXE_NS_DURATION=$2; shift ;;
	--repeat) MRXE_NS_REPEAT=$2; shift ;;
	-h|--help) sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done

if [ "${MRXE_VM:-0}" != 1 ]; then
	. "$REPO/bench/lib.sh"
	bench_in_guest "$REPO/bench/netns.sh" \
		$((MRXE_NS_REPEAT * 8 * (MRXE_NS_DURATION * 6 + 40) + 300)) netns
	exit
fi

# ---- inside the lab guest ----
. "$REPO/selftests/lib.sh"
. "$REPO/selftests/mrxe_xfer_lib.sh"
OUT=${MRXE_RESULTS:-/tmp}
CSV=$OUT/netns.csv
DUR=$MRXE_NS_DURATION
COUNTERS="retrans_pkts meta_retrans_pkts ecn_marked_pkts cnp_sent cnp_rcvd rcvd_seq_err"
trap 'xfer_cleanup' EXIT

mrxe_load || { echo "module load failed"; exit 1; }
xfer_setup || { echo "topology setup failed"; exit 1; }
xfer_prefix
MRXECTL=$REPO/build/mrxectl
kver=$(uname -r)
hdr="kernel,repeat,transport,netem,streams,gbps,tcp_retransmits,netem_dropped"
for c in $COUNTERS; do hdr="$hdr,$c"; done
echo "$hdr,status" > "$CSV"

# netem_one SPEC: netem on the data direction only (B's egress), set anew
# for each run so that its drop count is the run's; "" for none
netem_one() {
	run_b tc qdisc del dev "$VETH_B" root 2>/dev/null
	[ -n "$1" ] || return 0
	modprobe sch_netem 2>/dev/null
	# shellcheck disable=SC2086
	run_b tc qdisc add dev "$VETH_B" root netem $1
}

# counters: COUNTERS of both devices summed, one line
counters() { pair_stats $COUNTERS; }

# row REP TRANSPORT NETEM STREAMS GBPS TCPRETRANS STATUS BEFORE...: one CSV row
row() {
	local rep=$1 tr=$2 spec=$3 st=$4 g=$5 tr_rtx=$6 status=$7 drops i=0 c
	shift 7
	local before=("$@") after
	read -ra after <<< "$(counters)"
	drops=$(netem_dropped)
	local line="$kver,$rep,$tr,$spec,$st,$g,$tr_rtx,$drops"
	for c in $COUNTERS; do
		line="$line,$(( ${after[$i]:-0} - ${before[$i]:-0} ))"
		i=$((i + 1))
	done
	echo "$line,$status" >> "$CSV"
	echo "[netns] rep $rep $tr ${spec:-lossless} P$st: $g Gb/s tcp_retrans $tr_rtx netem_dropped $drops ($status)"
}

tcp_run() {
	local rep=$1 spec=$2 st=$3 before js g rtx status=ok
	netem_one "$spec"
	read -ra before <<< "$(counters)"
	run_a iperf3 -s -1 -p 5201 > "$OUT/iperf3.server" 2>&1 &
	wait_for 10 tcp_listening 5201
	js=$(run_b timeout $((DUR + 30)) iperf3 -c "$IP_A" -p 5201 -t "$DUR" -P "$st" -J 2>/dev/null)
	wait
	g=$(python3 -c 'import json,sys; d=json.load(sys.stdin)["end"]; print("%.6f" % (d["sum_received"]["bits_per_second"] / 1e9)); print(d["sum_sent"].get("retransmits", ""))' <<< "$js" 2>/dev/null)
	[ -n "$g" ] || status="no result"
	rtx=$(sed -n 2p <<< "$g")
	row "$rep" tcp "$spec" "$st" "$(sed -n 1p <<< "$g")" "$rtx" "$status" "${before[@]}"
}

rdma_run() {
	local rep=$1 mode=$2 spec=$3 before g status=ok port=$((18000 + RANDOM % 500 * 2))
	run_a "$MRXECTL" dev set "$DEV_A" mode "$mode" || return 1
	run_b "$MRXECTL" dev set "$DEV_B" mode "$mode" || return 1
	netem_one "$spec"
	read -ra before <<< "$(counters)"
	rdma_bw "$port"
	# perftest's TCG clock estimate fails now and then (0 Gb/s, says
	# "Correlation coefficient"): that is perftest's, run it again
	for _ in 1 2; do
		grep -q "Correlation coefficient" "$OUT/bw.client" &&
			awk '$1 == 65536 && NF >= 5 { z = ($4 + 0 == 0) } END { exit !z }' "$OUT/bw.client" ||
			break
		port=$((port + 1))
		netem_one "$spec"
		read -ra before <<< "$(counters)"
		rdma_bw "$port"
	done
	g=$(awk -v size=65536 -f "$REPO/bench/perftest-bw.awk" "$OUT/bw.client")
	[ -n "$g" ] || { g=; [ "$status" = ok ] && status="no result"; }
	if [ "$status" = ok ] && awk -v b="$g" 'BEGIN { exit !(b + 0 == 0) }'; then
		grep -q "Correlation coefficient" "$OUT/bw.client" &&
			status="perftest clock estimate failed (0 Gb/s)" || status="stalled (0 Gb/s)"
	fi
	local tr=mrxe
	[ "$mode" = metaroce ] && tr=mrxe-meta
	row "$rep" "$tr" "$spec" 1 "$g" "" "$status" "${before[@]}"
}

# rdma_bw PORT: one ib_write_bw between the namespaces; sets status
rdma_bw() {
	local port=$1
	status=ok
	run_a timeout $((DUR * 10 + 60)) ib_write_bw -d "$DEV_A" -x "$GID_A" -p $port -F \
		-s 65536 -D "$DUR" > "$OUT/bw.server" 2>&1 &
	wait_for 10 tcp_listening $port
	run_b timeout $((DUR * 10 + 60)) ib_write_bw -d "$DEV_B" -x "$GID_B" -p $port -F \
		-s 65536 -D "$DUR" "$IP_A" > "$OUT/bw.client" 2>&1 || status="exit $?"
	wait
}

for rep in $(seq "$MRXE_NS_REPEAT"); do
	for spec in "" "$MRXE_NS_NETEM"; do
		tcp_run "$rep" "$spec" 1
		tcp_run "$rep" "$spec" 4
		rdma_run "$rep" standard "$spec"
		rdma_run "$rep" metaroce "$spec"
	done
done
netem_one ""
cat "$CSV"
