#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# selftest-timeout: 700
# mrxe_rc_integrity.sh's data-integrity run (build/mrxe-verify, every byte
# checked on the receiving side) between two mrxe devices in two network
# namespaces, through netem on the veth pair, both directions (so data,
# READ responses and ACKs are all hit): 1% loss, reordering (1 ms delay,
# 25% of packets sent early), 1% duplication.  Every byte must be right.
#
# MRXE_VERIFY_SIZES / MRXE_VERIFY_ARGS as in mrxe_rc_integrity.sh.

# one test moves 64 MiB five times through go-back-N recovery under TCG
MRXE_TEST_TIMEOUT=${MRXE_TEST_TIMEOUT:-290}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mrxe_xfer_lib.sh"

PORT=17111
VERIFY_TIMEOUT=${MRXE_VERIFY_TIMEOUT:-300}

# verify_run TAG MRXE-VERIFY-OPTIONS...: one server/client run across A/B.
verify_run() {
	local sizes=()
	[ -n "${MRXE_VERIFY_SIZES:-}" ] && sizes=(--sizes "$MRXE_VERIFY_SIZES")
	PORT=$((PORT + 1))
	# shellcheck disable=SC2086
	xfer_pair 1800 "tcp:$PORT" \
		"$XFER_VERIFY" --server --bind "$SRV_IP" --port $PORT \
			--dev "$DEV_A" --gid-index "$GID_A" \
		-- \
		"$XFER_VERIFY" --client --connect "$SRV_IP" --port $PORT \
			--dev "$DEV_B" --gid-index "$GID_B" \
			--timeout "$VERIFY_TIMEOUT" "${sizes[@]}" "$@" \
			${MRXE_VERIFY_ARGS:-}
}

# under_netem SPEC...: RC at MTU 1024 with netem on both directions.
under_netem() {
	xfer_require verify datapath
	[ $XFER_LOOP = 1 ] && skip "netem needs a real wire (rxe loopback bypasses qdiscs)"
	modprobe sch_netem 2>/dev/null || skip "sch_netem not available"
	trap xfer_cleanup EXIT
	xfer_setup 1500
	netem_set "$@"
	verify_run --mtu 1024 --iters 1
	hw_stats "$DEV_A"
	hw_stats "$DEV_B"
	run_a tc -s qdisc show dev "$VETH_A"
	run_b tc -s qdisc show dev "$VETH_B"
}

test_rc_netem_loss_1pct() {
	under_netem loss 1%
}

test_rc_netem_reorder() {
	under_netem delay 1ms reorder 25% 50%
}

test_rc_netem_duplicate_1pct() {
	under_netem duplicate 1%
}

mrxe_run_tests \
	test_rc_netem_loss_1pct \
	test_rc_netem_reorder \
	test_rc_netem_duplicate_1pct
