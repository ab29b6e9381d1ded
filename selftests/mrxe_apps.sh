#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# selftest-timeout: 600
# Other rdma_cm applications, unmodified, across two mrxe devices in two
# network namespaces: the librdmacm examples rdma_server/rdma_client,
# rsockets (rstream and riostream with data verification, rcopy with the
# copied file compared byte for byte), cmtime (many connections set up and
# torn down at once), qperf over rdma_cm (its server's children crash
# holding QPs and MRs: none may hang), and ibv_xsrq_pingpong (XRC, which mrxe does not
# offer: a clear error, no hang).

MRXE_TEST_TIMEOUT=${MRXE_TEST_TIMEOUT:-150}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mrxe_xfer_lib.sh"

PORT=19100
TO=120

test_rdma_server_client() {
	need_cmd rdma_server rdmacm-utils
	xfer_test_setup
	xfer_pair $TO "cm:$PORT" \
		rdma_server -s "$SRV_IP" -p $PORT \
		-- \
		rdma_client -s "$SRV_IP" -p $PORT
	grep -q "rdma_client: end 0" "$XFER_CLIENT_OUT" ||
		fail "rdma_client did not end with 0"
}

# rsockets: a byte stream over RC QPs (inline data, RDMA WRITE with
# immediate, its own flow control); -T v verifies every byte.
test_rstream_verify() {
	need_cmd rstream rdmacm-utils
	xfer_test_setup
	xfer_pair $TO "cm:$PORT" \
		rstream -b "$SRV_IP" -p $PORT -S 65536 -C 200 -T v \
		-- \
		rstream -s "$SRV_IP" -p $PORT -S 65536 -C 200 -T v
	grep -q "^65k" "$XFER_CLIENT_OUT" || grep -q "65k\|64k" "$XFER_CLIENT_OUT" ||
		fail "rstream printed no result line"
}

test_rstream_small_nonblocking() {
	need_cmd rstream rdmacm-utils
	xfer_test_setup
	xfer_pair $TO "cm:$PORT" \
		rstream -b "$SRV_IP" -p $PORT -S 100 -C 2000 -T n -T v \
		-- \
		rstream -s "$SRV_IP" -p $PORT -S 100 -C 2000 -T n -T v
}

test_riostream_verify() {
	need_cmd riostream rdmacm-utils
	xfer_test_setup
	xfer_pair $TO "cm:$PORT" \
		riostream -b "$SRV_IP" -p $PORT -S 65536 -C 200 -T v \
		-- \
		riostream -s "$SRV_IP" -p $PORT -S 65536 -C 200 -T v
}

# forever_server PORT CMD...: a server that never exits (rcopy, cmtime of
# rdma-core 44) in A, until forever_stop; waits for its rdma_cm listener.
forever_server() {
	local port=$1 i
	shift
	xfer_prefix
	"${PFX_A[@]}" "$@" > "$XFER_TMP/forever.out" 2>&1 &
	FOREVER_PID=$!
	for ((i = 0; i < 100; i++)); do
		cm_listening "$port" && return 0
		sleep 0.1
	done
	forever_stop
	fail "$1 did not listen on $port"
}

forever_stop() {
	kill "$FOREVER_PID" 2>/dev/null || true
	wait "$FOREVER_PID" 2>/dev/null || true
	sed 's/^/  server: /' "$XFER_TMP/forever.out"
}

# rcopy's server writes the file through a shared mapping: the destination
# is on a tmpfs (the 9p-backed directories of the lab VM cannot map it).
test_rcopy() {
	local src dst i
	need_cmd rcopy rdmacm-utils
	xfer_test_setup
	RCOPY_DIR=$XFER_TMP/rcopy
	mkdir -p "$RCOPY_DIR"
	mount -t tmpfs -o size=16m none "$RCOPY_DIR"
	trap 'umount "$RCOPY_DIR" 2>/dev/null || true; xfer_cleanup' EXIT
	src=$XFER_TMP/rcopy.src
	dst=$RCOPY_DIR/rcopy.dst
	head -c $((3 * 1024 * 1024 + 123)) /dev/urandom > "$src"
	forever_server $PORT rcopy -p $PORT
	if ! run_b timeout $TO rcopy "$src" "$SRV_IP:$dst" -p $PORT; then
		forever_stop
		fail "rcopy failed"
	fi
	for ((i = 0; i < 50; i++)); do
		[ -f "$dst" ] && [ "$(stat -c %s "$dst")" = "$(stat -c %s "$src")" ] && break
		sleep 0.1
	done
	forever_stop
	cmp "$src" "$dst" || fail "the copied file differs"
	echo "rcopy: $(stat -c %s "$dst") bytes copied, identical"
}

# 50 connections set up and torn down at once; the client reports each
# step for all of them.
test_cmtime() {
	local out rc=0
	need_cmd cmtime rdmacm-utils
	xfer_test_setup
	forever_server $PORT cmtime -b "$SRV_IP" -p $PORT -c 50
	out=$(run_b timeout $TO cmtime -s "$SRV_IP" -p $PORT -c 50 2>&1) || rc=$?
	forever_stop
	echo "$out"
	[ $rc = 0 ] || fail "cmtime client exit $rc"
	# rdma-core 44: "connect      :", 56: "cm connect   ..."
	echo "$out" | grep -Eq "^[[:space:]]*(cm )?connect[[:space:]]" ||
		fail "cmtime printed no connect timing"
}

# qperf over rdma_cm (-cm1: without it qperf sets no GRH, which ib_core
# refuses for RoCE at RTR with EINVAL, on any RoCE device): RC SEND, READ,
# WRITE bandwidth and latency, both atomics, 1 s each; each must report a non-zero
# result.  qperf 0.4.11's server runs each test in a forked child that
# crashes in its rdma_cm cleanup (ibv_destroy_qp(NULL)), so every test also
# kills a process that holds QPs and MRs: when rc_rdma_write_bw's child
# died while the client still wrote, its exit hung in D state (dereg_mr
# waited for a QP keeping the unfinished WRITE's MR, and uverbs destroys
# that MR first: mrxe_mr_reclaim()).  No qperf may be left in D state.
test_qperf_cm() {
	local out rc=0 ok st
	need_cmd qperf qperf
	xfer_test_setup
	xfer_prefix
	"${PFX_A[@]}" qperf -lp $PORT > "$XFER_TMP/forever.out" 2>&1 &
	FOREVER_PID=$!
	wait_for 10 tcp_listening $PORT || true
	out=$(run_b timeout $TO qperf -lp $PORT -cm1 -t 1 "$SRV_IP" \
		rc_bw rc_lat rc_rdma_read_bw rc_rdma_write_bw rc_rdma_write_lat \
		rc_rdma_read_lat rc_compare_swap_mr rc_fetch_add_mr 2>&1) || rc=$?
	echo "$out"
	sleep 1
	st=$(ps -o pid=,stat=,comm= -C qperf | awk '$2 ~ /^D/ { print $1, $2, $3 }')
	[ -z "$st" ] || cat /proc/"${st%% *}"/stack 2>/dev/null || true
	forever_stop
	[ -z "$st" ] || fail "qperf stuck in D state: $st"
	[ $rc = 0 ] || fail "qperf client exit $rc"
	# one non-zero "bw", "latency" or "msg_rate" per test
	ok=$(echo "$out" | awk '/^[a-z_]+:$/ { t = $1 }
		t != "" && $1 ~ /^(bw|latency|msg_rate)$/ && $3 + 0 > 0 { n++; t = "" }
		END { print n + 0 }')
	[ "$ok" = 8 ] || fail "$ok of 8 qperf tests reported a non-zero result"
}

# XRC is not offered (no IBV_DEVICE_XRC): the program must fail at once
# with a clear message, not hang or crash.
test_xsrq_refused() {
	local out rc=0
	need_cmd ibv_xsrq_pingpong ibverbs-utils
	xfer_test_setup
	out=$(run_a timeout 60 ibv_xsrq_pingpong -d "$DEV_A" -g "$GID_A" -p $PORT 2>&1) || rc=$?
	echo "$out"
	[ $rc != 124 ] || fail "ibv_xsrq_pingpong hung"
	[ $rc != 0 ] || fail "ibv_xsrq_pingpong succeeded without a peer"
	echo "$out" | grep -qi "xrc\|domain\|couldn't\|failed" ||
		fail "no clear error message"
}

mrxe_run_tests test_rdma_server_client test_rstream_verify \
	test_rstream_small_nonblocking test_riostream_verify test_rcopy \
	test_cmtime test_qperf_cm test_xsrq_refused
