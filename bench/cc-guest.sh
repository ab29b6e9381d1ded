#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside one lab-VM guest started by bench/cc-fairness.sh.  Builds the
# bottleneck of selftests/mrxe_bottleneck_lib.sh (two senders -> router with
# tbf + RED ecn -> receiver) and, for each congestion control setting, runs
# four ib_write_bw QPs at once (two per sender, one process and port each,
# so every QP's goodput is its own line) for $BENCH_DURATION seconds.
# Writes $MRXE_RESULTS/cc.csv: one line per setting and QP, plus the
# bottleneck's RED counters (sent, dropped, marked) per setting, and
# $MRXE_RESULTS/<setting>.samples (bench/cc-sample.py: the bottleneck's
# backlog and each receiving QP's bytes every 0.2 s).
set -u
REPO=$(cd "$(dirname "$0")/.." && pwd)
export MRXE_VM=${MRXE_VM:-1}
. "$REPO/selftests/lib.sh"
. "$REPO/selftests/mrxe_xfer_lib.sh"
. "$REPO/selftests/mrxe_bottleneck_lib.sh"
OUT=${MRXE_RESULTS:-/tmp}
DUR=${MRXE_BENCH_DURATION:-15}
SIZE=${MRXE_BENCH_SIZE:-65536}
CONFIGS=${MRXE_BENCH_CC:-nocc ecn dcqcn meta}
CSV=$OUT/cc.csv
CTL=$REPO/build/mrxectl
# lab-scaled DCQCN (as selftests/mrxe_cc.sh)
DCQCN=${MRXE_BENCH_DCQCN:-cc dcqcn cnp-interval 4000 rate-max 30000 rate-min 500 rate-timer 20000 alpha-timer 4000 ai-rate 100 hai-rate 1000 byte-counter 1024}
port=18800

mrxe_load || exit 1
bn_setup || exit 1
echo "config,qp,sender,gbps,red_sent,red_dropped,red_marked,retrans_pkts,cnp_sent,cc_rate_cuts,secs" > "$CSV"

for cfg in $CONFIGS; do
	case $cfg in
	# perftest creates plain QPs: the device default mode decides
	nocc) bn_ctl mode standard ecn off cc off ;;
	ecn) bn_ctl mode standard ecn on cc off ;;
	# shellcheck disable=SC2086
	dcqcn) bn_ctl mode standard ecn on $DCQCN ;;
	# shellcheck disable=SC2086
	meta) bn_ctl mode metaroce ecn on $DCQCN ;;
	*) echo "unknown config $cfg"; continue ;;
	esac
	bn_qdisc
	r0=$(( $(stat_value "$BN_DEV_S1" retrans_pkts) + $(stat_value "$BN_DEV_S2" retrans_pkts) ))
	c0=$(stat_value "$BN_DEV_D" cnp_sent)
	k0=$(( $(stat_value "$BN_DEV_S1" cc_rate_cuts) + $(stat_value "$BN_DEV_S2" cc_rate_cuts) ))
	pids=()
	for i in 0 1 2 3; do
		bn_d ib_write_bw -d "$BN_DEV_D" -x "$BN_GID_D" -p $((port + i)) \
			-D "$DUR" -s "$SIZE" > "$OUT/$cfg.s$i" 2>&1 &
	done
	sleep 2
	# the sampler at nice -5: it must keep sampling in a saturated guest
	# MRXE_BENCH_SENDERS=1: also the senders' QP rates and SRTTs
	# ($cfg.samples.senders), at the cost of two programs per sample
	snd=()
	[ "${MRXE_BENCH_SENDERS:-0}" = 1 ] &&
		snd=("$BN_NS_S1=$BN_DEV_S1" "$BN_NS_S2=$BN_DEV_S2")
	ip netns exec "$BN_NS_D" nice -n -5 python3 "$REPO/bench/cc-sample.py" \
		"$OUT/$cfg.samples" 0.2 "$BN_NS_R" "$BN_DEV_D" "$CTL" "${snd[@]}" &
	sampler=$!
	SECONDS=0
	for i in 0 1 2 3; do
		# perftest's TCP exchange on the management link, RDMA via the GIDs
		if [ $i -lt 2 ]; then ns=$BN_NS_S1 dev=$BN_DEV_S1 gid=$BN_GID_S1 srv=$BN_MGMT_D1
		else ns=$BN_NS_S2 dev=$BN_DEV_S2 gid=$BN_GID_S2 srv=$BN_MGMT_D2; fi
		ip netns exec "$ns" timeout $((DUR * 4 + 60)) ib_write_bw -d "$dev" -x "$gid" \
			-p $((port + i)) -D "$DUR" -s "$SIZE" "$srv" \
			> "$OUT/$cfg.c$i" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	secs=$SECONDS
	kill "$sampler" 2>/dev/null
	sleep 1
	pkill -f "ib_write_bw -d $BN_DEV_D" 2>/dev/null
	wait 2>/dev/null
	read -r rs rd rm re rp <<< "$(bn_red_stats)"
	r1=$(( $(stat_value "$BN_DEV_S1" retrans_pkts) + $(stat_value "$BN_DEV_S2" retrans_pkts) ))
	c1=$(stat_value "$BN_DEV_D" cnp_sent)
	k1=$(( $(stat_value "$BN_DEV_S1" cc_rate_cuts) + $(stat_value "$BN_DEV_S2" cc_rate_cuts) ))
	for i in 0 1 2 3; do
		# perftest result row: bytes iterations peak avg msgrate; avg Gb/s;
		# empty when perftest printed none (under TCG its clock estimate
		# can fail: "Correlation coefficient r^2 ... Can't produce a
		# report"); the samples still have the QP's bytes
		g=$(awk -f "$REPO/bench/perftest-bw.awk" "$OUT/$cfg.c$i")
		echo "$cfg,$i,$((i / 2 + 1)),$g,$rs,$rd,$rm,$((r1 - r0)),$((c1 - c0)),$((k1 - k0)),$secs" >> "$CSV"
	done
	echo "$cfg: $(grep "^$cfg," "$CSV" | cut -d, -f4 | paste -sd' ') Gb/s; red sent $rs dropped $rd (early $re, queue limit $rp) marked $rm"
	port=$((port + 10))
done
bn_cleanup
cat "$CSV"
