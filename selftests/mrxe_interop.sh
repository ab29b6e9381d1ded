#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# selftest-timeout: 500
# Interoperability with stock rdma_rxe: stock rxe on one end of a veth pair
# in init_net (stock rxe only works there), mrxe on the other end inside a
# network namespace.  ibv_rc_pingpong (with buffer validation), ib_write_bw,
# ib_read_bw and mrxe-verify (every byte checked), each in both directions.
# Both providers load: RDMAV_DRIVERS adds mrxe's to the system ones.

MRXE_TEST_TIMEOUT=${MRXE_TEST_TIMEOUT:-240}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mrxe_xfer_lib.sh"

PORT=18700
TO=900
RXE_DEV=rxeint0

interop_cleanup() {
	mrxe_del_all_links || true
	ip link del "$VETH_A" 2>/dev/null || true
	mrxe_netns_cleanup || true
}

interop_setup() {
	[ "$MRXE_LINK_TYPE" = rxe ] &&
		skip "interop pairs mrxe with stock rxe (MRXE_LINK_TYPE=rxe given)"
	xfer_require "$@"
	mrxe_require_module
	modprobe rdma_rxe 2>/dev/null || skip "stock rdma_rxe module not available"
	trap interop_cleanup EXIT
	interop_cleanup
	ip netns add "$NS_B"
	ip -n "$NS_B" link set lo up
	ip link add "$VETH_A" type veth peer name "$VETH_B" netns "$NS_B"
	ip addr add "$IP_A/24" dev "$VETH_A"
	ip -n "$NS_B" addr add "$IP_B/24" dev "$VETH_B"
	ip link set "$VETH_A" up
	ip -n "$NS_B" link set "$VETH_B" up
	XFER_A_IN_INIT=1
	DEV_A=$RXE_DEV
	DEV_B=${MRXE_DEV_PREFIX:-mrxe}1
	rdma link add "$DEV_A" type rxe netdev "$VETH_A"
	link_add "$NS_B" "$DEV_B" "$VETH_B"
	xfer_wait_gid "$DEV_A" "$IP_A"
	GID_A=$REPLY
	xfer_wait_gid "$DEV_B" "$IP_B"
	GID_B=$REPLY
	wait_for 10 port_state_is "$DEV_B" ACTIVE ||
		fail "$DEV_B port not ACTIVE: $(port_state "$DEV_B")"
	echo "stock $DEV_A gid[$GID_A] $IP_A (init_net) <-> $DEV_B gid[$GID_B] $IP_B ($NS_B)"
}

# both_ways NAME: set the server side for direction NAME.
#   rxe2mrxe: server (passive side) on mrxe, client (initiator) on stock rxe
#   mrxe2rxe: server on stock rxe, client on mrxe
side_for() {
	if [ "$1" = rxe2mrxe ]; then
		XFER_SERVER_SIDE=B
		SRV_DEV=$DEV_B SRV_GID=$GID_B SRV_IP=$IP_B
		CLI_DEV=$DEV_A CLI_GID=$GID_A
	else
		XFER_SERVER_SIDE=A
		SRV_DEV=$DEV_A SRV_GID=$GID_A SRV_IP=$IP_A
		CLI_DEV=$DEV_B CLI_GID=$GID_B
	fi
}

pingpong() {
	interop_setup datapath
	side_for "$1"
	PORT=$((PORT + 1))
	xfer_pair $TO "tcp:$PORT" \
		ibv_rc_pingpong -d "$SRV_DEV" -g "$SRV_GID" -p $PORT -n 200 -s 4096 -m 1024 -c \
		-- \
		ibv_rc_pingpong -d "$CLI_DEV" -g "$CLI_GID" -p $PORT -n 200 -s 4096 -m 1024 -c "$SRV_IP"
}

perf() {
	local prog=$1 dir=$2
	need_cmd "$prog" perftest
	interop_setup datapath
	side_for "$dir"
	PORT=$((PORT + 1))
	xfer_pair $TO "tcp:$PORT" \
		"$prog" -d "$SRV_DEV" -x "$SRV_GID" -p $PORT -F -n 200 -s 65536 --report_gbits \
		-- \
		"$prog" -d "$CLI_DEV" -x "$CLI_GID" -p $PORT -F -n 200 -s 65536 --report_gbits "$SRV_IP"
	hw_stats "$DEV_B"
}

verify() {
	interop_setup datapath verify
	side_for "$1"
	PORT=$((PORT + 1))
	# --reverse: every op is also initiated by the server, so each
	# implementation acts as requester and as responder for each op.
	xfer_pair $TO "tcp:$PORT" \
		"$XFER_VERIFY" --server --bind "$SRV_IP" --port $PORT \
			--dev "$SRV_DEV" --gid-index "$SRV_GID" \
		-- \
		"$XFER_VERIFY" --client --connect "$SRV_IP" --port $PORT \
			--dev "$CLI_DEV" --gid-index "$CLI_GID" --mtu 1024 \
			--iters 1 --reverse --sizes "${MRXE_VERIFY_SIZES:-0,1,mtu-1,mtu,mtu+1,1M,16M}"
	hw_stats "$DEV_B"
}

# rxe's "bad ICRC" warnings in dmesg so far (grep -c exits 1 on none)
bad_icrc_count() { dmesg | grep -c 'bad ICRC from' || true; }

# mpe DIR: IBA 1.5 ATOMIC WRITE and FLUSH, requester on the client side of
# DIR (one pyverbs process opens both devices).  mrxe as the responder must
# have executed them (its counters move).
mpe() {
	interop_setup datapath
	python3 -c 'import pyverbs.qp as q; assert hasattr(q.QPEx, "wr_flush")' 2>/dev/null ||
		skip "pyverbs without ibv_wr_flush (rdma-core < 56: the 6.12 line has it)"
	[ -d /usr/share/doc/rdma-core/tests ] || skip "pyverbs test suite not installed"
	local tests=$XFER_TMP/pyverbs-tests rc=0 aw0 fl0
	rm -rf "$tests"
	cp -r /usr/share/doc/rdma-core/tests "$tests" && gunzip -f "$tests"/*.gz
	side_for "$1"
	# mrxe's debug messages (NAK reasons) into dmesg, when debugfs is there
	echo 'module rdma_mrxe +p' > /sys/kernel/debug/dynamic_debug/control 2>/dev/null || true
	aw0=$(stat_value "$DEV_B" atomic_write_executed)
	fl0=$(stat_value "$DEV_B" flush_executed)
	local ic0 bad0 flush_gap=0
	ic0=$(stat_value "$DEV_B" icrc_errors)
	bad0=$(bad_icrc_count)
	timeout 120 python3 "$MRXE_SELFTEST_DIR/mrxe_mpe_probe.py" "$tests" \
		"$CLI_DEV" "$CLI_GID" "$SRV_DEV" "$SRV_GID" > "$XFER_TMP/mpe.log" 2>&1 || rc=$?
	cat "$XFER_TMP/mpe.log"
	[ $rc = 4 ] && skip "pyverbs without ibv_wr_flush"
	if [ $rc = 3 ]; then
		# Stock rxe's opcode table has no payload offset for FLUSH, so
		# its ICRC covers the FLUSH headers twice: each side drops the
		# other's FLUSH as corrupt (known-issues.rst).  Only accepted
		# with that evidence: mrxe counted ICRC errors (rxe requester)
		# or rxe logged "bad ICRC" or never answered the FLUSH (mrxe
		# requester: retry exceeded, status 12; 6.12's rxe drops a bad
		# ICRC without a message).
		if [ $(( $(stat_value "$DEV_B" icrc_errors) - ic0 )) -gt 0 ] ||
		   [ $(( $(bad_icrc_count) - bad0 )) -gt 0 ] ||
		   { [ "$1" = mrxe2rxe ] &&
		     grep -q '^BAD flush_range: status 12 ' "$XFER_TMP/mpe.log"; }; then
			echo "NOTE: FLUSH with stock rxe fails on rxe's FLUSH ICRC (icrc_errors +$(( $(stat_value "$DEV_B" icrc_errors) - ic0 )), rxe 'bad ICRC' +$(( $(bad_icrc_count) - bad0 )))"
			rc=0 flush_gap=1
		fi
	fi
	if [ $rc != 0 ]; then
		hw_stats "$DEV_B"
		hw_stats "$DEV_A"
		dmesg | grep -i 'mrxe\|rxe' | tail -n 20
		fail "mrxe_mpe_probe.py exited $rc"
	fi
	if [ "$1" = rxe2mrxe ]; then
		expect_gt "mrxe atomic_write_executed" \
			$(( $(stat_value "$DEV_B" atomic_write_executed) - aw0 )) 2 || fail "counter"
		[ $flush_gap = 0 ] || return 0
		expect_gt "mrxe flush_executed" \
			$(( $(stat_value "$DEV_B" flush_executed) - fl0 )) 1 || fail "counter"
	fi
}

test_rc_pingpong_rxe_to_mrxe() { pingpong rxe2mrxe; }
test_rc_pingpong_mrxe_to_rxe() { pingpong mrxe2rxe; }
test_ib_write_bw_rxe_to_mrxe() { perf ib_write_bw rxe2mrxe; }
test_ib_write_bw_mrxe_to_rxe() { perf ib_write_bw mrxe2rxe; }
test_ib_read_bw_rxe_to_mrxe() { perf ib_read_bw rxe2mrxe; }
test_ib_read_bw_mrxe_to_rxe() { perf ib_read_bw mrxe2rxe; }
test_verify_rxe_client() { verify rxe2mrxe; }
test_verify_mrxe_client() { verify mrxe2rxe; }
test_mpe_rxe_to_mrxe() { mpe rxe2mrxe; }
test_mpe_mrxe_to_rxe() { mpe mrxe2rxe; }

mrxe_run_tests \
	test_rc_pingpong_rxe_to_mrxe \
	test_rc_pingpong_mrxe_to_rxe \
	test_ib_write_bw_rxe_to_mrxe \
	test_ib_write_bw_mrxe_to_rxe \
	test_ib_read_bw_rxe_to_mrxe \
	test_ib_read_bw_mrxe_to_rxe \
	test_verify_rxe_client \
	test_verify_mrxe_client \
	test_mpe_rxe_to_mrxe \
	test_mpe_mrxe_to_rxe
