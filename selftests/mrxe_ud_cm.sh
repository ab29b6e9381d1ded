#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# selftest-timeout: 480
# UD QPs, address handles and rdma_cm across two mrxe devices in two
# network namespaces: ibv_ud_pingpong, rping with data validation, ucmatose,
# udaddy, perftest over rdma_cm (-R); a UD datagram with a wrong Q_Key is
# dropped and counted, an oversized one is not sent (IBA C10-93.1.1);
# connecting to an address without a listener gives a
# clear rdma_cm error.

MRXE_TEST_TIMEOUT=${MRXE_TEST_TIMEOUT:-120}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mrxe_xfer_lib.sh"

PORT=18800
TO=600

test_ibv_ud_pingpong() {
	need_cmd ibv_ud_pingpong ibverbs-utils
	xfer_test_setup
	xfer_pair $TO "tcp:$PORT" \
		ibv_ud_pingpong -d "$DEV_A" -g "$GID_A" -p $PORT -n 200 -s 512 \
		-- \
		ibv_ud_pingpong -d "$DEV_B" -g "$GID_B" -p $PORT -n 200 -s 512 "$SRV_IP"
}

test_rping_validate() {
	need_cmd rping rdmacm-utils
	xfer_test_setup
	xfer_pair $TO "cm:$PORT" \
		rping -s -a "$SRV_IP" -p $PORT -C 10 -S 4000 -V \
		-- \
		rping -c -a "$SRV_IP" -p $PORT -C 10 -S 4000 -V -v
}

test_ucmatose() {
	need_cmd ucmatose rdmacm-utils
	xfer_test_setup
	xfer_pair $TO "cm:$PORT" \
		ucmatose -b "$SRV_IP" -p $PORT -c 2 -C 20 -S 1000 \
		-- \
		ucmatose -s "$SRV_IP" -p $PORT -c 2 -C 20 -S 1000
}

test_udaddy() {
	need_cmd udaddy rdmacm-utils
	xfer_test_setup
	# udaddy always uses port 7174
	xfer_pair $TO "cm:7174" \
		udaddy -b "$SRV_IP" -c 2 -C 20 -S 512 \
		-- \
		udaddy -s "$SRV_IP" -c 2 -C 20 -S 512
}

perf_cm() {
	local prog=$1
	shift
	need_cmd "$prog" perftest
	xfer_test_setup
	xfer_pair $TO "cm:$PORT" \
		"$prog" -R -d "$DEV_A" -x "$GID_A" -p $PORT -F "$@" \
		-- \
		"$prog" -R -d "$DEV_B" -x "$GID_B" -p $PORT -F "$@" "$SRV_IP"
}

test_ib_write_bw_rdma_cm() { perf_cm ib_write_bw -n 200 -s 65536; }
test_ib_send_bw_rdma_cm() { perf_cm ib_send_bw -n 200 -s 65536; }
test_ib_read_lat_rdma_cm() { perf_cm ib_read_lat -n 200 -s 64; }

test_ud_wrong_qkey_and_oversized() {
	local before after
	python3 -c 'import pyverbs' 2>/dev/null || skip "python3-pyverbs not installed"
	xfer_test_setup
	before=$(stat_value "$DEV_A" qkey_violations)
	python3 "$MRXE_SELFTEST_DIR/mrxe_ud_qkey.py" "$DEV_B" "$GID_B" "$DEV_A" "$GID_A"
	after=$(stat_value "$DEV_A" qkey_violations)
	echo "$DEV_A qkey_violations: $before -> $after"
	if [ "$MRXE_LINK_TYPE" = rxe ]; then
		echo "(stock rxe has no Q_Key counter: count not checked)"
		return 0
	fi
	[ "$after" -gt "$before" ] || {
		hw_stats "$DEV_A"
		fail "dropped datagram not counted in qkey_violations"
	}
}

# rdma_cm to an address/port with no listener: the client must fail, quickly,
# and name the rdma_cm event (REJECTED or UNREACHABLE).
test_cm_no_listener() {
	local out rc
	need_cmd rping rdmacm-utils
	xfer_test_setup
	out=$(run_b timeout 60 rping -c -a "$SRV_IP" -p 19999 -C 1 -v 2>&1) && rc=0 || rc=$?
	echo "rping: exit $rc"
	echo "$out" | sed 's/^/  /'
	[ $rc != 124 ] || fail "rping hung connecting to a port without a listener"
	echo "$out" | grep -Eq "REJECTED|UNREACHABLE|ADDR_ERROR|ROUTE_ERROR" ||
		fail "no rdma_cm error event reported"
	need_cmd ucmatose rdmacm-utils
	out=$(run_b timeout 60 ucmatose -s "$SRV_IP" -p 19998 -c 1 -C 1 2>&1) && rc=0 || rc=$?
	echo "ucmatose: exit $rc"
	echo "$out" | sed 's/^/  /'
	[ $rc != 0 ] || fail "ucmatose reported success without a listener"
	[ $rc != 124 ] || fail "ucmatose hung connecting to a port without a listener"
	echo "$out" | grep -Eq "REJECTED|UNREACHABLE|ADDR_ERROR|ROUTE_ERROR" ||
		fail "no rdma_cm error event reported"
}

mrxe_run_tests \
	test_ibv_ud_pingpong \
	test_rping_validate \
	test_ucmatose \
	test_udaddy \
	test_ib_write_bw_rdma_cm \
	test_ib_send_bw_rdma_cm \
	test_ib_read_lat_rdma_cm \
	test_ud_wrong_qkey_and_oversized \
	test_cm_no_listener
