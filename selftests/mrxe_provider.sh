#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The rdma-core provider (build/libmrxe-rdmav34.so) against a live mrxe
# device: ibv_devinfo through unmodified libibverbs, the provider's
# GoogleTest suite (build/provider-tests), module unload after a process
# holding verbs objects was SIGKILLed, and what a program sees when its
# device is deleted under it (mrxe_removed_probe.py).
. "$(dirname "$0")/lib.sh"

PROVIDER_SO=$MRXE_REPO/build/libmrxe-rdmav34.so
GTEST=$MRXE_REPO/build/provider-tests
# libibverbs loads <path>-rdmav34.so for RDMAV_DRIVERS=<path>.
export RDMAV_DRIVERS=$MRXE_REPO/build/libmrxe

cleanup() {
	mrxe_del_all_links
	mrxe_netns_cleanup
}

setup_dev() {
	[ "$MRXE_LINK_TYPE" = mrxe ] || skip "the mrxe provider only drives mrxe devices"
	[ -f "$PROVIDER_SO" ] || skip "$PROVIDER_SO not built (make provider)"
	mrxe_require_module
	trap cleanup EXIT
	mrxe_netns_setup || fail "netns/veth setup failed"
	link_add "$NS_A" "$MRXE_DEV" "$VETH_A" || fail "rdma link add $MRXE_DEV failed"
	wait_for 5 dev_exists "$MRXE_DEV" || fail "no $MRXE_DEV"
	wait_for 5 port_state_is "$MRXE_DEV" ACTIVE || fail "port not ACTIVE"
}

test_provider_devinfo() {
	setup_dev
	local out
	out=$(nsa ibv_devinfo -v -d "$MRXE_DEV" 2>&1) || { echo "$out"; fail "ibv_devinfo failed"; }
	echo "$out"
	echo "$out" | grep -Eq "hca_id:[[:space:]]+$MRXE_DEV" || fail "ibv_devinfo does not show $MRXE_DEV"
	echo "$out" | grep -Eq "link_layer:[[:space:]]+Ethernet" || fail "link_layer is not Ethernet"
	echo "$out" | grep -Eq "max_qp_wr:[[:space:]]+16384" || fail "max_qp_wr is not MRXE_MAX_QP_WR"
	echo "$out" | grep -Eq "state:[[:space:]]+PORT_ACTIVE" || fail "port not PORT_ACTIVE"
	echo "$out" | grep -q "GID\[" || fail "no GID table in ibv_devinfo -v"
	# the device must not be claimed by another provider
	nsa ibv_devices | grep -qw "$MRXE_DEV" || fail "ibv_devices does not list $MRXE_DEV"
}

test_provider_gtest() {
	[ -x "$GTEST" ] || skip "$GTEST not built (make -C userspace-provider tests)"
	setup_dev
	local rc=0
	MRXE_DEV=$MRXE_DEV nsa "$GTEST" --gtest_color=no --gtest_filter='Mrxe.*' || rc=$?
	[ $rc = 0 ] || fail "provider-tests exited $rc"
}

# Bytes through the rings end to end: two RC QPs on one device (loopback),
# SEND with 2 SGEs / inline+imm, WRITE, READ, atomics, ibv_wr_* + cq_ex.
test_provider_datapath() {
	[ -x "$GTEST" ] || skip "$GTEST not built"
	setup_dev
	local rc=0
	MRXE_DEV=$MRXE_DEV nsa timeout 120 "$GTEST" --gtest_color=no --gtest_filter='DataPath.*' || rc=$?
	[ $rc = 0 ] || fail "provider-tests (DataPath) exited $rc"
}

# A stock tool holding PD/MR/CQ/QP is SIGKILLed: the kernel must free
# everything, so the link can be deleted and the module unloaded.
test_provider_kill_then_rmmod() {
	setup_dev
	# not through nsa(): a backgrounded function would make $! a subshell
	ip netns exec "$NS_A" ibv_rc_pingpong -d "$MRXE_DEV" -g 1 -p 18515 >/dev/null 2>&1 &
	local pid=$!
	wait_for 10 sh -c "rdma resource show qp 2>/dev/null | grep -q 'pid $pid comm ibv_rc_pingpong'" ||
		{ kill -9 $pid; fail "ibv_rc_pingpong created no QP"; }
	rdma resource show qp
	rdma resource show "$MRXE_DEV"
	kill -9 $pid
	wait $pid 2>/dev/null || true	# 137: killed, as intended
	wait_for 5 sh -c "! rdma resource show qp 2>/dev/null | grep -q 'pid $pid '" ||
		fail "QP of the killed process still listed"
	rdma link delete "$MRXE_DEV" || fail "rdma link delete after kill failed"
	wait_for 5 dev_gone "$MRXE_DEV" || fail "$MRXE_DEV still present"
	rmmod "$MRXE_MODULE" || fail "rmmod after a killed verbs process failed"
}

# The device is deleted under a live verbs program: its next post fails
# with EIO and IBV_EVENT_DEVICE_FATAL arrives (its polls find the CQ empty:
# known-issues.rst).
test_provider_device_removed() {
	setup_dev
	/usr/bin/python3 -c "import pyverbs" 2>/dev/null || skip "python3-pyverbs not installed"
	nsa timeout 60 /usr/bin/python3 "$MRXE_SELFTEST_DIR/mrxe_removed_probe.py" "$MRXE_DEV" 20 ||
		fail "the program did not see its device go (above)"
	dev_gone "$MRXE_DEV" || fail "$MRXE_DEV still present"
}

mrxe_run_tests test_provider_devinfo test_provider_gtest test_provider_datapath \
	test_provider_kill_then_rmmod test_provider_device_removed
