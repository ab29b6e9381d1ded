#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# selftest-timeout: 1200
# Malformed and hostile packets on the wire (issue 12): while verified
# transfers run (mrxe-verify, every byte checked, in a loop), tools/mrxe-inject
# learns the live connection by sniffing it (QPNs, PSNs, rkey/VA, addresses)
# and sends each class of bad input - bad ICRC, truncated headers, wrong UDP
# length, unknown opcodes and TVer, far and stale PSNs, MIDDLE without
# FIRST, wrong P_Key, unknown QPN, bad rkey / out-of-bounds RETH / VA+length
# wrap, wrong source address, forged ACKs for PSNs never sent, CNP floods,
# oversized packets, and on MetaRoCE QPs lying MRH fields and forged SACKs.
#
# A class passes when one of its expected counters moved (each is dropped or
# NAKed and counted by reason); the test fails when a class moved none, when
# a transfer failed or did not complete, or on an oops/WARNING (lib.sh).
# The table (class, packets sent, counter that moved, outcome) is printed
# and kept in $MRXE_RESULTS/inject-MODE.json.
MRXE_TEST_TIMEOUT=${MRXE_TEST_TIMEOUT:-540}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mrxe_xfer_lib.sh"

PORT=19400
INJECT=$MRXE_REPO/tools/mrxe-inject
LOOP_PID=

cleanup() {
	set +e
	[ -n "$XFER_STOP" ] && touch "$XFER_STOP"
	[ -n "$LOOP_PID" ] && kill "$LOOP_PID" 2>/dev/null
	wait 2>/dev/null
	xfer_cleanup
}

# inject_during_transfer MODE: verified transfers in MODE (standard or
# metaroce) loop in the background while every input class is injected.
inject_during_transfer() {
	local mode=$1 rc=0 lrc=0 runs
	[ "$MRXE_LINK_TYPE" = rxe ] && skip "needs two namespaces (stock rxe cannot)"
	xfer_require verify datapath
	/usr/bin/python3 -c 'import scapy.contrib.roce' 2>/dev/null ||
		skip "python3-scapy not installed (tools/deps.sh)"
	trap cleanup EXIT
	xfer_setup || fail "topology setup failed"
	XFER_STOP=$XFER_TMP/stop.$mode
	rm -f "$XFER_STOP"
	(
		n=0
		while [ ! -e "$XFER_STOP" ] || [ $n = 0 ]; do
			MRXE_VERIFY_SIZES=${MRXE_INJECT_SIZES:-16M} verify_run --mode "$mode" \
				--iters 2 --ops write,send,read > "$XFER_TMP/run.$n" 2>&1 ||
				{ echo "transfer $n FAILED:"; cat "$XFER_TMP/run.$n"; exit 1; }
			grep -q "# pass [1-9][0-9]* fail 0 " "$XFER_TMP/run.$n" ||
				{ echo "transfer $n passed nothing:"; cat "$XFER_TMP/run.$n"; exit 1; }
			n=$((n + 1))
		done
		echo "$n verified transfer(s) of 2 x ${MRXE_INJECT_SIZES:-16M} write, send and read each: all bytes verified"
	) > "$XFER_TMP/loop.$mode" 2>&1 &
	LOOP_PID=$!
	sleep 2
	/usr/bin/python3 "$INJECT" --ns-a "$NS_A" --ns-b "$NS_B" --if-a "$VETH_A" \
		--if-b "$VETH_B" --dev-a "$DEV_A" --dev-b "$DEV_B" --ip-a "$IP_A" \
		--ip-b "$IP_B" --count "${MRXE_INJECT_COUNT:-20}" \
		${MRXE_INJECT_CLASSES:+--classes "$MRXE_INJECT_CLASSES"} \
		--mrxectl "$MRXE_REPO/build/mrxectl" \
		--json "${MRXE_RESULTS:-/tmp}/inject-$mode.json" || rc=$?
	touch "$XFER_STOP"
	wait "$LOOP_PID" || lrc=$?
	LOOP_PID=
	cat "$XFER_TMP/loop.$mode"
	hw_stats "$DEV_A"
	hw_stats "$DEV_B"
	[ $rc = 2 ] && fail "mrxe-inject found no live traffic to learn from"
	[ $lrc = 0 ] || fail "a verified transfer failed while packets were injected"
	[ $rc = 0 ] || fail "an input class moved none of its expected counters"
}

test_inject_standard() { inject_during_transfer standard; }
test_inject_metaroce() { inject_during_transfer metaroce; }

mrxe_run_tests test_inject_standard test_inject_metaroce
