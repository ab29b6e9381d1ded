#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# selftest-timeout: 1100
# Soak (issue 12; `make soak`, not in `make check`): MRXE_SOAK_SECONDS
# (default 600) of mixed operations - write, write_imm, read, send, send_imm
# of 1 B .. 1 MiB, every byte verified by mrxe-verify - over 4 QPs at once
# (2 MetaRoCE, 2 standard), through netem on both veth ends: 1% loss,
# reordering and 1% duplication.  Each minute the kernel's slab memory,
# MemAvailable and the device counters are sampled.  One summary line:
# seconds, runs, operations and bytes verified, errors (must be 0), slab
# growth (must stay under MRXE_SOAK_SLAB_SLACK_KB, default 4096).
MRXE_TEST_TIMEOUT=${MRXE_TEST_TIMEOUT:-1050}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mrxe_xfer_lib.sh"

SOAK=${MRXE_SOAK_SECONDS:-600}
NETEM=${MRXE_SOAK_NETEM:-loss 1% delay 1ms 1ms reorder 10% 50% duplicate 1%}

slab_kb() {
	awk 'NR > 2 { s += $2 * $4 } END { printf "%d\n", s / 1024 }' /proc/slabinfo
}

memavail_kb() {
	awk '/^MemAvailable:/ { print $2 }' /proc/meminfo
}

# bytes_of FILE: payload bytes of the passed cases of an mrxe-verify client
# output ("ok N - QPN op dir size=64K iter=0").
bytes_of() {
	sed -n 's/.*client: ok [0-9]* - .* size=\([0-9]*\)\([KMG]\{0,1\}\) .*/\1 \2/p' "$1" |
		awk '{ m = $2 == "K" ? 1024 : $2 == "M" ? 1048576 : $2 == "G" ? 1073741824 : 1
		       b += $1 * m; n++ } END { printf "%d %d\n", n, b }'
}

# soak_qp Q MODE END: verified runs on one QP pair until SECONDS >= END.
soak_qp() {
	local q=$1 mode=$2 end=$3 n=0 ok=0 err=0 ops=0 bytes=0 r
	PORT=$((21000 + 1000 * q))
	while [ $SECONDS -lt "$end" ]; do
		if MRXE_VERIFY_SIZES=1,4K,64K,1M verify_run --mode "$mode" --mtu 1024 --iters 2 \
			--timeout 120 > "$XFER_TMP/soak.$q.$n" 2>&1 &&
		   grep -q "# pass [1-9][0-9]* fail 0 " "$XFER_TMP/soak.$q.$n"; then
			ok=$((ok + 1))
		else
			err=$((err + 1))
			echo "qp$q ($mode) run $n FAILED:"
			tail -n 30 "$XFER_TMP/soak.$q.$n"
		fi
		read -r o b <<< "$(bytes_of "$XFER_TMP/soak.$q.$n")"
		ops=$((ops + o))
		bytes=$((bytes + b))
		rm -f "$XFER_TMP/soak.$q.$n"
		n=$((n + 1))
	done
	echo "$q $mode $n $ok $err $ops $bytes" > "$XFER_TMP/soak.$q.sum"
}

test_soak() {
	local end q pids=() s0 s1 m0 t0 runs=0 errs=0 ops=0 bytes=0 line
	xfer_require verify datapath
	[ $XFER_LOOP = 1 ] && skip "netem needs a real wire"
	modprobe sch_netem 2>/dev/null || skip "sch_netem not available"
	trap xfer_cleanup EXIT
	xfer_setup 1500 || fail "topology setup failed"
	# shellcheck disable=SC2086
	netem_set $NETEM || fail "netem"
	sync
	echo 2 > /proc/sys/vm/drop_caches
	s0=$(slab_kb)
	m0=$(memavail_kb)
	t0=$SECONDS
	end=$((SECONDS + SOAK))
	for q in 0 1 2 3; do
		if [ $q -lt 2 ]; then m=metaroce; else m=standard; fi
		soak_qp $q $m $end > "$XFER_TMP/soak.$q.log" 2>&1 &
		pids+=($!)
	done
	while [ $SECONDS -lt $end ]; do
		sleep 60
		echo "t=$((SECONDS - t0))s slab=$(slab_kb)KiB memavail=$(memavail_kb)KiB" \
			"retrans=$(pair_stat retrans_pkts) meta_retrans=$(pair_stat meta_retrans_pkts)" \
			"dup=$(pair_stat duplicate_request) netem_drops=$(netem_dropped)"
	done
	for q in "${pids[@]}"; do wait "$q" || true; done
	for q in 0 1 2 3; do
		cat "$XFER_TMP/soak.$q.log"
		read -r _ m n _ e o b < "$XFER_TMP/soak.$q.sum" || fail "qp$q left no summary"
		echo "qp$q $m: $n runs, $e failed, $o ops, $b bytes verified"
		runs=$((runs + n))
		errs=$((errs + e))
		ops=$((ops + o))
		bytes=$((bytes + b))
	done
	hw_stats "$DEV_A"
	hw_stats "$DEV_B"
	expect_gt "netem drops" "$(netem_dropped)" 0 || fail "netem dropped nothing"
	netem_clear
	sync
	echo 2 > /proc/sys/vm/drop_caches
	s1=$(slab_kb)
	line="soak: $((SECONDS - t0)) s, 4 QPs (2 MetaRoCE, 2 standard), netem '$NETEM': $runs runs, $ops ops, $bytes bytes verified, $errs errors, slab ${s0} -> ${s1} KiB ($((s1 - s0)) KiB), MemAvailable ${m0} -> $(memavail_kb) KiB"
	echo "$line"
	[ -n "${MRXE_RESULTS:-}" ] && echo "$line" >> "$MRXE_RESULTS/soak.txt"
	[ "$errs" = 0 ] || fail "$errs run(s) failed"
	[ "$ops" -gt 0 ] || fail "nothing was verified"
	[ $((s1 - s0)) -le "${MRXE_SOAK_SLAB_SLACK_KB:-4096}" ] ||
		fail "slab memory grew by $((s1 - s0)) KiB"
}

mrxe_run_tests test_soak
