#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# selftest-timeout: 1500
# Issue 14: ECN, CNP and DCQCN in standard mode, on a real bottleneck
# (selftests/mrxe_bottleneck_lib.sh: two senders -> router with tbf + RED
# ecn -> receiver, all in the lab guest).
#
#  test_cc_ctl            the congestion control parameters through mrxectl
#                         and the netlink family: defaults, set/show round
#                         trip, out-of-range values refused with EINVAL and
#                         an extack message naming the parameter, a refused
#                         set changes nothing.
#  test_cc_cnp            notification point: senders mark ECT(0), the
#                         bottleneck marks CE, the receiver sends CNPs whose
#                         format a packet capture checks (mrxe_cnp_capture.py,
#                         IBA annex A17.9.3 layout, Not-ECT), at most one per
#                         QP per cnp-interval (5 ms here, CNPs held back are
#                         counted in cnp_paced), and every CNP reaches its
#                         sender (cnp_rcvd == cnp_sent, ICRC checked there).
#  test_cc_dcqcn          4 QPs (2 per sender) of mrxe-verify RDMA WRITEs
#                         through the bottleneck: first without congestion
#                         control (ECN and DCQCN off: RED drops early, go-back-N
#                         resends), then with ECN + DCQCN: every byte verified,
#                         rate cuts happened, and the bottleneck's drop rate is
#                         far below the baseline's.
#  test_cc_metaroce       the same in MetaRoCE mode: no CNPs, CE counts echoed
#                         in SACK ACKs cut the senders' rates, data verified.
#  test_cc_priority_moves verified bulk transfer at SL 0 while verified SL 7
#                         transfers come and go: all bytes, the bulk QPs'
#                         work moved (prio_work_demoted on both devices).
#  test_cc_priority_set   a priority set with mrxedv_create_qp (mrxe-verify
#                         --priority) is the Ethernet priority of the QP's
#                         packets: a prio qdisc on the client's veth (default
#                         priomap: 6 -> band 1:1, 0 -> band 1:2) counts them
#                         in band 1:1 at --priority 6 even at SL 0, and in
#                         1:2 at --priority 0 even at SL 7; data verified.
#  test_cc_priority       QP priority: ib_write_lat p99 idle and while four
#                         ib_write_bw QPs load the same device pair, at SL 0
#                         and SL 7; the SL 7 p99 under load must stay within
#                         MRXE_PRIO_BOUND (4) x its idle p99; the bulk flow
#                         must have moved data meanwhile.

MRXE_TEST_TIMEOUT=${MRXE_TEST_TIMEOUT:-600}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mrxe_xfer_lib.sh"
. "$(dirname "$0")/mrxe_bottleneck_lib.sh"

CTL=$MRXE_REPO/build/mrxectl
CAPTURE=$MRXE_SELFTEST_DIR/mrxe_cnp_capture.py
PORT=19400
# DCQCN parameters scaled for a 30 Mbit/s bottleneck whose queue adds
# milliseconds (design.rst, "Congestion control"): the paper's 50-55 us
# timers become 4 ms (about one queueing RTT here); the line rate is the
# bottleneck's 30 Mbit/s (as a NIC's port speed equals the switch port's:
# four QPs are a 4:1 incast), T 20 ms, R_AI/R_HAI 0.1/1 Mbit/s: the
# values tests/unit/cc_sim_test.cc found stable (0.95 utilisation).
BN_DCQCN=(cc dcqcn cnp-interval 4000 rate-max 30000 rate-min 500
	  rate-timer 20000 alpha-timer 4000 ai-rate 100 hai-rate 1000
	  byte-counter 1024)

cc_require() {
	[ "$MRXE_LINK_TYPE" = rxe ] && skip "stock rxe has no ECN/CNP/DCQCN"
	xfer_require verify datapath
	[ -x "$CTL" ] || skip "$CTL not built (make tool)"
}

cc_cleanup() {
	bn_cleanup
	xfer_cleanup
}

# ----------------------------------------------------------------- ctl ----

test_cc_ctl() {
	cc_require
	trap cc_cleanup EXIT
	xfer_setup 1500
	local d
	d=$(nsa "$CTL" -j dev show "$DEV_A")
	echo "$d"
	# defaults: ECN and DCQCN on, paper values where the paper gives them
	echo "$d" | jq_py "
x=d[0]; c=x['dcqcn']
assert x['ecn'] is True and x['cc'] == 'dcqcn' and x['cnp_interval_us'] == 50, x
assert (c['g_65536'], c['alpha_timer_us'], c['f'], c['byte_counter_kb']) == (256, 55, 5, 10240), c
assert c['rate_max_kbps'] == 10000000, c"
	nsa "$CTL" dev set "$DEV_A" cc off rate-max 30000 rate-min 100 g 1024 \
		alpha-timer 100 rate-timer 2000 byte-counter 0 ai-rate 300 \
		hai-rate 3000 f 3
	nsa "$CTL" -j dev show "$DEV_A" | jq_py "
x=d[0]; c=x['dcqcn']
assert x['cc'] == 'off', x
assert c == {'rate_max_kbps': 30000, 'rate_min_kbps': 100, 'g_65536': 1024,
	     'alpha_timer_us': 100, 'rate_timer_us': 2000, 'byte_counter_kb': 0,
	     'ai_rate_kbps': 300, 'hai_rate_kbps': 3000, 'f': 3}, c"
	nsa "$CTL" dev set "$DEV_A" cc dcqcn
	# bad input: EINVAL ("Invalid argument") and the parameter's range
	expect_err "g 0" 'g: Invalid argument.*g: 1\.\.65536' nsa "$CTL" dev set "$DEV_A" g 0
	expect_err "g 65537" 'g: Invalid argument' nsa "$CTL" dev set "$DEV_A" g 65537
	expect_err "f 0" 'f: Invalid argument.*f: 1\.\.64' nsa "$CTL" dev set "$DEV_A" f 0
	expect_err "f 65" 'f: Invalid argument' nsa "$CTL" dev set "$DEV_A" f 65
	expect_err "rate-max 99" 'rate-max: Invalid argument.*100\.\.4000000000' \
		nsa "$CTL" dev set "$DEV_A" rate-max 99
	expect_err "rate-timer 0" 'rate-timer: Invalid argument' \
		nsa "$CTL" dev set "$DEV_A" rate-timer 0
	expect_err "alpha-timer 1000001" 'alpha-timer: Invalid argument' \
		nsa "$CTL" dev set "$DEV_A" alpha-timer 1000001
	expect_err "byte-counter 4194305" 'byte-counter: Invalid argument' \
		nsa "$CTL" dev set "$DEV_A" byte-counter 4194305
	expect_err "ai-rate 0" 'ai-rate: Invalid argument' nsa "$CTL" dev set "$DEV_A" ai-rate 0
	expect_err "min above max" 'Invalid argument.*rate-min must not exceed rate-max' \
		nsa "$CTL" dev set "$DEV_A" rate-min 40000
	# one bad value refuses the whole set
	expect_err "mixed" 'f: Invalid argument' nsa "$CTL" dev set "$DEV_A" g 512 f 0
	expect_err "cc bad" 'cc "fast": expected dcqcn or off' nsa "$CTL" dev set "$DEV_A" cc fast
	nsa "$CTL" -j dev show "$DEV_A" | jq_py "
x=d[0]; c=x['dcqcn']
assert x['cc'] == 'dcqcn' and c['g_65536'] == 1024 and c['f'] == 3, x
assert c['rate_min_kbps'] == 100 and c['rate_max_kbps'] == 30000, c"
	# the other device kept its defaults
	nsb "$CTL" -j dev show "$DEV_B" | jq_py "
c=d[0]['dcqcn']; assert c['g_65536'] == 256 and c['rate_max_kbps'] == 10000000, c"
}

# ------------------------------------------------------------- traffic ----

# bn_verify_4qp TIMEOUT OPTIONS...: four mrxe-verify pairs at once, servers
# in D, two clients in S1 and two in S2 (four RC QPs through the
# bottleneck).  Prints every output; returns the number of failed pairs.
bn_verify_4qp() {
	local to=$1 i p failed=0 tag=$XFER_TMP/bn.$RANDOM
	shift
	local -a spid=() cpid=() cli_ns=("$BN_NS_S1" "$BN_NS_S1" "$BN_NS_S2" "$BN_NS_S2")
	local -a cli_dev=("$BN_DEV_S1" "$BN_DEV_S1" "$BN_DEV_S2" "$BN_DEV_S2")
	local -a cli_gid=("$BN_GID_S1" "$BN_GID_S1" "$BN_GID_S2" "$BN_GID_S2")
	local -a mgmt=("$BN_MGMT_D1" "$BN_MGMT_D1" "$BN_MGMT_D2" "$BN_MGMT_D2")
	for i in 0 1 2 3; do
		p=$((PORT + i))
		# control connection on the management link of the client's sender
		ip netns exec "$BN_NS_D" timeout --kill-after=10 "$to" "$XFER_VERIFY" \
			--server --bind "${mgmt[$i]}" --port $p --dev "$BN_DEV_D" \
			--gid-index "$BN_GID_D" > "$tag.s$i" 2>&1 &
		spid+=($!)
	done
	for i in 0 1 2 3; do
		wait_for 20 bn_d_listening $((PORT + i)) || { echo "server $i not listening"; cat "$tag.s$i"; }
	done
	SECONDS=0
	for i in 0 1 2 3; do
		ip netns exec "${cli_ns[$i]}" timeout --kill-after=10 "$to" "$XFER_VERIFY" \
			--client --connect "${mgmt[$i]}" --port $((PORT + i)) \
			--dev "${cli_dev[$i]}" --gid-index "${cli_gid[$i]}" "$@" \
			> "$tag.c$i" 2>&1 &
		cpid+=($!)
	done
	for i in 0 1 2 3; do
		wait "${cpid[$i]}" || { failed=$((failed + 1)); echo "client $i failed"; }
	done
	BN_SECS=$SECONDS
	for i in 0 1 2 3; do
		wait "${spid[$i]}" || { failed=$((failed + 1)); echo "server $i failed"; }
	done
	for i in 0 1 2 3; do
		sed "s/^/  client $i: /" "$tag.c$i" | grep -v "^  client $i: ok" | tail -n 8
		grep -c "^ok" "$tag.c$i" | sed "s/^/  client $i ok lines: /"
		sed "s/^/  server $i: /" "$tag.s$i" | tail -n 3
	done
	PORT=$((PORT + 4))
	return $failed
}

bn_d_listening() { local out; out=$(bn_d ss -Hltn "sport = :$1" 2>/dev/null) && [ -n "$out" ]; }

# bn_devstats: the CC counters of the three devices.
bn_devstats() {
	local d n
	for d in "$BN_DEV_S1" "$BN_DEV_S2" "$BN_DEV_D"; do
		printf '%s:' "$d"
		for n in sent_pkts retrans_pkts ecn_marked_pkts cnp_sent cnp_paced cnp_rcvd cc_rate_cuts icrc_errors; do
			printf ' %s=%s' "$n" "$(bn_stat "$d" "$n")"
		done
		echo
	done
}

test_cc_cnp() {
	cc_require
	trap cc_cleanup EXIT
	# Nothing reacts to the marks here, so the queue holds whatever the
	# four QPs have in flight (4 x MRXE_STD_WINDOW 256 packets, 1.13 MB,
	# twice that if an early drop made each resend its window): a limit
	# above that means no tail drop, and an ACK timeout (2.1 s) above
	# that queue's 670 ms means no spurious timeout.  With the default
	# 300 KB limit and 67 ms, go-back-N under tail drop spent the retry
	# count (a repeated NAK-sequence error spends one, mrxe_comp.c) in
	# a lab run (3 of 4 QPs: retry exceeded), and with them the test.
	BN_RED_LIMIT=2500000
	bn_setup
	local cap=$XFER_TMP/cnp.$RANDOM pid sent rcvd paced marked
	# Notification point only: ECN on, no reaction (the queue stays
	# congested, CE marks keep coming), CNPs at most every 2 ms per QP.
	bn_ctl ecn on cc off cnp-interval 5000
	# not through bn_d: a backgrounded function is a subshell, and the
	# TERM must reach python itself (ip netns exec execs it)
	ip netns exec "$BN_NS_D" python3 "$CAPTURE" bnd --min-gap-us 4000 --expect-cnps 10 \
		--ready "$cap.ready" > "$cap.json" 2> "$cap.err" &
	pid=$!
	wait_for 10 test -e "$cap.ready" || fail "capture did not start: $(cat "$cap.err")"
	bn_verify_4qp 300 --mode standard --ops write --sizes 1M --iters 2 --mtu 1024 \
		--ack-timeout 19 || { bn_devstats; fail "transfers failed"; }
	sleep 0.5
	kill -TERM $pid
	local rc=0
	wait $pid || rc=$?
	cat "$cap.json" "$cap.err"
	bn_devstats
	echo "red: sent dropped marked early tail = $(bn_red_stats)"
	[ $rc = 0 ] || fail "CNP capture check failed"
	# the senders marked ECT(0), the bottleneck marked CE
	jq_py "
i=d['data_ecn_in']
assert i['ect0'] > 0 and i['ce'] > 0, i
assert i['not_ect'] == 0, i" < "$cap.json"
	sent=$(bn_stat "$BN_DEV_D" cnp_sent)
	rcvd=$(( $(bn_stat "$BN_DEV_S1" cnp_rcvd) + $(bn_stat "$BN_DEV_S2" cnp_rcvd) ))
	paced=$(bn_stat "$BN_DEV_D" cnp_paced)
	marked=$(bn_stat "$BN_DEV_D" ecn_marked_pkts)
	# the capture may miss packets (AF_PACKET under TCG on a loaded host:
	# 634 of 709 seen once), never add; the receivers' cnp_rcvd below is
	# the exact count
	jq_py "assert $sent * 0.75 <= d['cnps'] <= $sent, (d['cnps'], $sent)" < "$cap.json" ||
		fail "captured CNPs do not match cnp_sent $sent"
	[ "$rcvd" = "$sent" ] || fail "cnp_rcvd $rcvd != cnp_sent $sent (lost or refused)"
	expect_gt "CE-marked packets at the receiver" "$marked" "$sent"
	expect_gt "CNPs held back by the interval" "$paced" 0
	[ "$(bn_stat "$BN_DEV_S1" icrc_errors)$(bn_stat "$BN_DEV_S2" icrc_errors)" = 00 ] ||
		fail "ICRC errors at the senders"
	[ "$(bn_stat "$BN_DEV_S1" cc_rate_cuts)$(bn_stat "$BN_DEV_S2" cc_rate_cuts)" = 00 ] ||
		fail "rate cuts with cc off"
}

# bn_run LABEL TIMEOUT CTL-ARGS...: one 4-QP run with the given device
# settings on a fresh bottleneck queue; sets BN_FAILED, BN_DROP_PCT (drops
# per 100 packets offered to the bottleneck), BN_DROPS, BN_MARKS.
BN_VERIFY_ARGS=()
bn_run() {
	local label=$1 to=$2 s
	shift 2
	bn_ctl "$@"
	bn_qdisc
	BN_FAILED=0
	bn_verify_4qp "$to" --ops write --sizes 1M --iters 4 --mtu 1024 "${BN_VERIFY_ARGS[@]}" ||
		BN_FAILED=$?
	s=($(bn_red_stats))
	BN_DROPS=${s[1]}
	BN_MARKS=${s[2]}
	BN_DROP_PCT=$(awk -v p="${s[0]}" -v d="${s[1]}" 'BEGIN { printf "%.3f", 100 * d / (p + d + 1e-9) }')
	echo "$label: ${BN_SECS}s ($(awk -v t="$BN_SECS" 'BEGIN { printf "%.1f", 4 * 4 * 8.389 / (t ? t : 1) }') Mbit/s of 16 MiB), failed pairs $BN_FAILED, bottleneck sent ${s[0]} dropped $BN_DROPS ($BN_DROP_PCT%) marked $BN_MARKS early ${s[3]} tail ${s[4]}"
	bn_devstats
}

test_cc_dcqcn() {
	cc_require
	trap cc_cleanup EXIT
	bn_setup
	local off_pct off_drops
	# standard RoCEv2 QPs (the device default `auto` would upgrade to
	# MetaRoCE, which reacts to ECN echoes instead of CNPs)
	BN_VERIFY_ARGS=(--mode standard)
	# baseline: no ECN, no CC (RED drops non-ECT early; may end in retry
	# exhaustion, lab notes: its drop rate is what is compared)
	bn_run "no cc" 120 ecn off cc off
	off_pct=$BN_DROP_PCT
	off_drops=$BN_DROPS
	expect_gt "baseline drops" "$off_drops" 50
	# ECN + DCQCN (QPs take the parameters at creation)
	bn_run "dcqcn" 300 ecn on "${BN_DCQCN[@]}"
	[ "$BN_FAILED" = 0 ] || fail "DCQCN run: $BN_FAILED transfers failed"
	expect_gt "rate cuts" $(( $(bn_stat "$BN_DEV_S1" cc_rate_cuts) + $(bn_stat "$BN_DEV_S2" cc_rate_cuts) )) 4
	expect_gt "CE marks" "$BN_MARKS" 0
	# far fewer drops per packet than without congestion control
	awk -v on="$BN_DROP_PCT" -v off="$off_pct" 'BEGIN { exit !(on * 5 < off) }' ||
		fail "drop rate with DCQCN $BN_DROP_PCT% not below a fifth of $off_pct% without"
	echo "drop rate: $BN_DROP_PCT% with DCQCN, $off_pct% without"
}

# MetaRoCE: the same 4 QPs in MetaRoCE mode with ECN on: no CNP at all,
# the responders echo CE counts in their SACK ACKs and the requesters cut
# their rate from those (cc_rate_cuts), every byte verified.
test_cc_metaroce() {
	cc_require
	trap cc_cleanup EXIT
	bn_setup
	BN_VERIFY_ARGS=(--mode metaroce)
	bn_run "metaroce ecn echo" 300 ecn on "${BN_DCQCN[@]}"
	[ "$BN_FAILED" = 0 ] || fail "MetaRoCE run: $BN_FAILED transfers failed"
	[ "$(bn_stat "$BN_DEV_D" cnp_sent)" = 0 ] || fail "a MetaRoCE responder sent CNPs"
	expect_gt "CE marks at the receiver" "$(bn_stat "$BN_DEV_D" ecn_marked_pkts)" 0
	expect_gt "rate cuts from ECN echoes" \
		$(( $(bn_stat "$BN_DEV_S1" cc_rate_cuts) + $(bn_stat "$BN_DEV_S2" cc_rate_cuts) )) 2
}

# ------------------------------------------------------------ priority ----
#
# QP priority: ib_write_lat on one QP while ib_write_bw (-q 4, 64 KiB
# writes) keeps four bulk QPs of the same device pair busy, over the plain
# veth pair of mrxe_xfer_lib.sh (no bottleneck: the contended resources are
# the devices' transmit scheduling and the guest's two vCPUs).  Side by side
# in one run: the latency QP idle and loaded, at SL 0 (the bulk QPs'
# priority) and at SL 7 (perftest --sl: the AV's service level, design.rst
# "QP priority").  Latencies in CPU cycles (perftest -C): under TCG
# perftest's estimate of the clock rate fails often ("Correlation
# coefficient") and its microseconds are then wrong or inf; cycles are not
# converted, and only ratios are used.  The latency programs run at nice
# -10 (MRXE_PRIO_NICE): in the lab the soft device's work shares the two
# vCPUs with the busy-polling applications; a latency-critical application
# is given the CPU it would have on its own core with a hardware NIC.

PRIO_ITERS=${MRXE_PRIO_ITERS:-2000}
# the bulk flow's perftest program and extra arguments (experiments:
# ib_send_bw with -e waits for completion events instead of polling;
# perftest refuses -e for WRITE)
PRIO_BULK_TEST=${MRXE_PRIO_BULK_TEST:-ib_write_bw}
PRIO_BULK_ARGS=${MRXE_PRIO_BULK_ARGS:-}
# until killed: duration mode does not take -e, a huge count does
PRIO_BULK_RUN="--run_infinitely -D 5"
case " $PRIO_BULK_ARGS " in *" -e "*) PRIO_BULK_RUN="-n 100000000" ;; esac
PRIO_BOUND=${MRXE_PRIO_BOUND:-4}	# loaded SL 7 p99 <= BOUND x idle SL 7 p99
PRIO_PORT=19700
PRIO_NICE=()
[ "${MRXE_PRIO_NICE:--10}" != 0 ] && PRIO_NICE=(nice -n "${MRXE_PRIO_NICE:--10}")

# prio_lat TAG ARGS...: ib_write_lat A <-> B, 64 B; PRIO_P50/PRIO_P99 (cycles).
prio_lat() {
	local tag=$1 try f
	shift
	for try in 1 2 3; do
		PRIO_PORT=$((PRIO_PORT + 1))
		xfer_pair 300 "tcp:$PRIO_PORT" \
			"${PRIO_NICE[@]}" ib_write_lat -d "$DEV_A" -x "$GID_A" -p $PRIO_PORT -F -C -s 64 -n "$PRIO_ITERS" "$@" \
			-- \
			"${PRIO_NICE[@]}" ib_write_lat -d "$DEV_B" -x "$GID_B" -p $PRIO_PORT -F -C -s 64 -n "$PRIO_ITERS" "$@" "$SRV_IP" \
			> "$XFER_TMP/lat-$tag.log" 2>&1 || { cat "$XFER_TMP/lat-$tag.log"; return 1; }
		f=$XFER_CLIENT_OUT
		# bytes iters t_min t_max t_typical t_avg t_stdev 99% 99.9%
		# (no process substitution: the lab guest has no /dev/fd)
		read -r PRIO_P50 PRIO_P99 <<< "$(awk '$1 == 64 && NF >= 8 { print $5, $8 }' "$f" | tail -n1)"
		if [[ "$PRIO_P99" =~ ^[0-9.]+$ ]] && awk -v v="$PRIO_P99" 'BEGIN { exit !(v > 0) }'; then
			echo "latency $tag: p50 $PRIO_P50 p99 $PRIO_P99 cycles ($*)"
			return 0
		fi
		echo "latency $tag: no result, run $try:"
		cat "$XFER_TMP/lat-$tag.log"
	done
	return 1
}

# prio_bulk_start / prio_bulk_stop: ib_write_bw -q 4 B -> A in the
# background, until stopped; stop checks it was still running (no QP error)
# and moved data while the latency test ran (PRIO_BULK_BYTES).
prio_bulk_start() {
	PRIO_PORT=$((PRIO_PORT + 1))
	xfer_prefix
	"${PFX_SRV[@]}" "$PRIO_BULK_TEST" -d "$DEV_A" -x "$GID_A" -p $PRIO_PORT -F -q 4 \
		-s 65536 $PRIO_BULK_RUN $PRIO_BULK_ARGS > "$XFER_TMP/bulk.server" 2>&1 &
	PRIO_BULK_SRV=$!
	wait_for 20 tcp_listening $PRIO_PORT || { cat "$XFER_TMP/bulk.server"; return 1; }
	"${PFX_CLI[@]}" "$PRIO_BULK_TEST" -d "$DEV_B" -x "$GID_B" -p $PRIO_PORT -F -q 4 \
		-s 65536 $PRIO_BULK_RUN $PRIO_BULK_ARGS "$@" "$SRV_IP" > "$XFER_TMP/bulk.client" 2>&1 &
	PRIO_BULK_CLI=$!
	sleep 4
	PRIO_BULK_B0=$(stat_value "$DEV_B" sent_bytes)
}

prio_bulk_stop() {
	local ok=0 b1
	b1=$(stat_value "$DEV_B" sent_bytes)
	PRIO_BULK_BYTES=$((b1 - PRIO_BULK_B0))
	kill -0 "$PRIO_BULK_CLI" 2>/dev/null && kill -0 "$PRIO_BULK_SRV" 2>/dev/null || ok=1
	kill "$PRIO_BULK_CLI" "$PRIO_BULK_SRV" 2>/dev/null || true
	wait "$PRIO_BULK_CLI" "$PRIO_BULK_SRV" 2>/dev/null || true
	if [ $ok != 0 ]; then
		echo "bulk ib_write_bw ended early:"
		sed 's/^/  client: /' "$XFER_TMP/bulk.client"
		sed 's/^/  server: /' "$XFER_TMP/bulk.server"
		return 1
	fi
	echo "bulk: $PRIO_BULK_BYTES bytes sent by $DEV_B meanwhile"
}

# ratio A B: A / B, two decimals
prio_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# prio_measure: p99s idle and loaded at SL 0 and SL 7 (PRIO_*).
prio_measure() {
	local b0 p
	command -v ib_write_lat >/dev/null || skip "perftest not installed"
	# experiment: MRXE_PRIO_KSOFTIRQD_NICE renices the softirq threads
	if [ -n "${MRXE_PRIO_KSOFTIRQD_NICE:-}" ]; then
		for p in $(pgrep ksoftirqd); do renice -n "$MRXE_PRIO_KSOFTIRQD_NICE" -p "$p" > /dev/null; done
		echo "ksoftirqd at nice $MRXE_PRIO_KSOFTIRQD_NICE"
	fi
	prio_lat idle-sl0
	PRIO_IDLE0=$PRIO_P99
	prio_lat idle-sl7 --sl 7
	PRIO_IDLE7=$PRIO_P99
	prio_bulk_start
	prio_lat loaded-sl0
	PRIO_LOAD0=$PRIO_P99
	prio_bulk_stop
	b0=$PRIO_BULK_BYTES
	prio_bulk_start
	prio_lat loaded-sl7 --sl 7
	PRIO_LOAD7=$PRIO_P99
	prio_bulk_stop
	for p in "$DEV_A" "$DEV_B"; do
		echo "scheduling counters: $p: $(hw_stats_nonzero "$p" | grep -oE '(prio|xmit)_[a-z_]+=[0-9]+' | tr '\n' ' ')"
	done
	expect_gt "bulk bytes during the SL 0 latency run" "$b0" 0
	expect_gt "bulk bytes during the SL 7 latency run" "$PRIO_BULK_BYTES" 0
	echo "PRIO_RESULT idle_sl0_p99=$PRIO_IDLE0 idle_sl7_p99=$PRIO_IDLE7" \
		"loaded_sl0_p99=$PRIO_LOAD0 loaded_sl7_p99=$PRIO_LOAD7" \
		"ratio_sl0=$(prio_ratio "$PRIO_LOAD0" "$PRIO_IDLE0")" \
		"ratio_sl7=$(prio_ratio "$PRIO_LOAD7" "$PRIO_IDLE7")" \
		"sl7_vs_sl0_loaded=$(prio_ratio "$PRIO_LOAD7" "$PRIO_LOAD0")"
}

test_cc_priority() {
	cc_require
	trap xfer_cleanup EXIT
	xfer_setup 1500
	prio_measure
	awk -v l="$PRIO_LOAD7" -v i="$PRIO_IDLE7" -v k="$PRIO_BOUND" 'BEGIN { exit !(l <= k * i) }' ||
		fail "SL 7 p99 under bulk load ($PRIO_LOAD7 cycles) is above $PRIO_BOUND x its idle p99 ($PRIO_IDLE7)"
}

# While a verified bulk transfer (64 MiB WRITE, SEND, READ, 4 times) runs
# at SL 0, short verified transfers at SL 7 come and go three times: each
# time the bulk QPs' work moves to the normal workers (prio_work_demoted)
# and back to the high-priority ones once the SL 7 QPs are destroyed (design.rst "QP priority": a QP's work on two
# workqueues in turn, under load, on 2 vCPUs).  Every byte of both is
# verified, and the moves must have happened.
test_cc_priority_moves() {
	cc_require
	trap xfer_cleanup EXIT
	xfer_setup 1500
	local da0 db0 i bulk tag=$XFER_TMP/moves
	da0=$(stat_value "$DEV_A" prio_work_demoted)
	db0=$(stat_value "$DEV_B" prio_work_demoted)
	PORT=$((PORT + 50))
	xfer_prefix
	"${PFX_SRV[@]}" timeout -k 5 300 "$XFER_VERIFY" --server --bind "$SRV_IP" \
		--port $PORT --dev "$DEV_A" --gid-index "$GID_A" > "$tag.server" 2>&1 &
	local spid=$!
	wait_for 10 tcp_listening $PORT || { cat "$tag.server"; fail "bulk server did not listen"; }
	"${PFX_CLI[@]}" timeout -k 5 300 "$XFER_VERIFY" --client --connect "$SRV_IP" \
		--port $PORT --dev "$DEV_B" --gid-index "$GID_B" --timeout 120 \
		--sizes 64M --iters 4 --ops write,send,read > "$tag.client" 2>&1 &
	bulk=$!
	for i in 1 2 3; do
		sleep 1
		kill -0 $bulk 2>/dev/null || { cat "$tag.client"; fail "the bulk transfer ended before SL 7 run $i"; }
		MRXE_VERIFY_SERVER_ARGS="--sl 7" verify_run --sl 7 --sizes 4096,256K --iters 2 \
			--ops write,send,read || fail "SL 7 transfer $i failed"
	done
	wait $bulk || { cat "$tag.client"; fail "bulk transfer failed"; }
	wait $spid || true
	grep -q "^# pass [1-9][0-9]* fail 0" "$tag.client" || { cat "$tag.client"; fail "bulk transfer: not every case passed"; }
	echo "bulk: $(grep '^# pass' "$tag.client")"
	expect_gt "prio_work_demoted on $DEV_A" "$(stat_value "$DEV_A" prio_work_demoted)" "$da0" || fail "the bulk QPs of $DEV_A were never moved"
	expect_gt "prio_work_demoted on $DEV_B" "$(stat_value "$DEV_B" prio_work_demoted)" "$db0" || fail "the bulk QPs of $DEV_B were never moved"
}

# prio_band_pkts CLASS: packets the prio qdisc on $VETH_B sent in CLASS
prio_band_pkts() {
	run_b tc -s class show dev "$VETH_B" |
		awk -v c="$1" '$1 == "class" && $3 == c { f = 1; next }
			f && $1 == "Sent" { print $4; exit }'
}

test_cc_priority_set() {
	cc_require
	trap xfer_cleanup EXIT
	xfer_setup 1500
	run_b tc qdisc replace dev "$VETH_B" root handle 1: prio ||
		skip "no prio qdisc (sch_prio)"
	local hi0 lo0 hi1 lo1 hi2 lo2 min=$((2 * 1024 * 1024 / 1500))
	hi0=$(prio_band_pkts 1:1) lo0=$(prio_band_pkts 1:2)
	verify_run --priority 6 --sizes 1M --iters 2 --ops write,send ||
		fail "verified transfer at --priority 6 failed"
	grep -q "^# priority: 6" "$XFER_CLIENT_OUT" || fail "mrxe-verify did not set the priority"
	hi1=$(prio_band_pkts 1:1) lo1=$(prio_band_pkts 1:2)
	echo "--priority 6 (SL 0): band 1:1 +$((hi1 - hi0)) packets, band 1:2 +$((lo1 - lo0))"
	expect_gt "band 1:1 (priority 6) packets" $((hi1 - hi0)) $min ||
		fail "the QP's packets did not leave at priority 6"
	expect_lt "band 1:2 (priority 0) packets" $((lo1 - lo0)) $((min / 4)) ||
		fail "priority-0 packets from a priority-6 QP"
	verify_run --priority 0 --sl 7 --sizes 1M --iters 2 --ops write,send ||
		fail "verified transfer at --priority 0 --sl 7 failed"
	hi2=$(prio_band_pkts 1:1) lo2=$(prio_band_pkts 1:2)
	echo "--priority 0 (SL 7): band 1:1 +$((hi2 - hi1)) packets, band 1:2 +$((lo2 - lo1))"
	expect_gt "band 1:2 (priority 0) packets" $((lo2 - lo1)) $min ||
		fail "the set priority 0 did not override SL 7"
	expect_lt "band 1:1 (priority 6/7) packets" $((hi2 - hi1)) $((min / 4)) ||
		fail "SL 7 packets from a priority-0 QP"
}

# test_cc_priority only with MRXE_CC_PRIORITY=1: its bound is not met yet
# (SL 7 about 22x, design.rst "QP priority", known-issues.rst)
mrxe_run_tests \
	test_cc_ctl \
	test_cc_cnp \
	test_cc_dcqcn \
	test_cc_metaroce \
	test_cc_priority_moves \
	test_cc_priority_set \
	${MRXE_CC_PRIORITY:+test_cc_priority}
