#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# selftest-timeout: 900
# Transport error paths (issue 4 "bad input"): build/transport-tests, a
# GoogleTest binary on ONE device with two QPs connected to each other
# (loopback through the device's own RoCEv2 IPv4 GID): foreign-PD rkeys,
# out-of-bounds addresses, forbidden access, misaligned atomics, posting in
# the wrong QP state, flush order, zero-length ops, RNR, retry exceeded,
# SEND with invalidate / local invalidate, memory windows type 1 and 2,
# UD wrong Q_Key, UC bad rkey.  See tests/transport/*.cc for the rule
# behind every expected status.
#
# One TAP line per GoogleTest case; each case runs in its own process (a
# hang or crash costs one case) with the per-case dmesg checked.
#
#	MRXE_LINK_TYPE=rxe	the same binary against stock rdma_rxe (in
#				init_net: stock rxe's socket lives only there);
#				skips the Q_Key counter check (rxe has none)
#	MRXE_TT_FILTER=GLOB	gtest filter (default '*')
#	MRXE_TT_CASE_TIMEOUT	seconds per case (default 120)
#	MRXE_TT_MODE=metaroce|auto	the device default transport mode of the cases
. "$(dirname "$0")/lib.sh"

GTEST=$MRXE_REPO/build/transport-tests
PROVIDER_SO=$MRXE_REPO/build/libmrxe-rdmav34.so
FILTER=${MRXE_TT_FILTER:-*}
CASE_TIMEOUT=${MRXE_TT_CASE_TIMEOUT:-120}
TT_VETH=veth-tt0
TT_PEER=veth-tt1
TT_IP=192.168.78.1
# ib_core shows non-init network namespaces a compat device without
# hw_counters: the init_net directory is bind-mounted here for the binary.
HWC_DIR=/run/mrxe-tt-hwc-$$

# skip_all REASON: a plan of one skipped case.
skip_all() {
	ktap_header
	ktap_plan 1
	echo "ok 1 mrxe_transport_errors # SKIP $1"
	exit $KSFT_SKIP
}

# fail_all REASON: setup failed, no case could run.
fail_all() {
	ktap_header
	ktap_plan 1
	diag "$1"
	echo "not ok 1 mrxe_transport_errors setup"
	exit $KSFT_FAIL
}

cleanup() {
	umount "$HWC_DIR" 2>/dev/null && rmdir "$HWC_DIR"
	rdma link delete "$MRXE_DEV" 2>/dev/null
	ip link del "$TT_VETH" 2>/dev/null
	mrxe_netns_cleanup
	return 0
}

in_lab_vm || skip_all "not inside the lab VM (run via tools/labvm/vm-run.sh)"
[ "$(id -u)" = 0 ] || skip_all "needs root"
[ -x "$GTEST" ] || skip_all "$GTEST not built (make -C tests/transport)"

if [ "$MRXE_LINK_TYPE" = mrxe ]; then
	[ -f "$PROVIDER_SO" ] || skip_all "$PROVIDER_SO not built (make provider)"
	[ -f "$MRXE_KO" ] || skip_all "$MRXE_KO not built (make module)"
	# libibverbs loads <path>-rdmav34.so for RDMAV_DRIVERS=<path>.
	export RDMAV_DRIVERS=$MRXE_REPO/build/libmrxe
else
	# stock rxe has no Q_Key violation counter
	export MRXE_QKEY_COUNTER=${MRXE_QKEY_COUNTER-}
fi
export MRXE_DEV MRXE_LINK_TYPE

trap cleanup EXIT
setup_log=$(
	set -e
	mrxe_load
	if [ "$MRXE_LINK_TYPE" = mrxe ]; then
		# mrxe works per network namespace: its link lives in NS_A.
		mrxe_netns_setup
		link_add "$NS_A" "$MRXE_DEV" "$VETH_A"
		# a global IPv6 GID for the IPv6 cases (no DAD: usable at once)
		ip netns exec "$NS_A" ip -6 addr add fd00:78::1/64 dev "$VETH_A" nodad
		# MRXE_TT_MODE=metaroce|auto: every RC QP of the cases in that
		# transport mode (the device default, set before any QP exists)
		if [ -n "${MRXE_TT_MODE:-}" ]; then
			ip netns exec "$NS_A" "$MRXE_REPO/build/mrxectl" dev set "$MRXE_DEV" mode "$MRXE_TT_MODE"
			echo "$MRXE_DEV device default mode $MRXE_TT_MODE"
		fi
	else
		modprobe veth
		ip link add "$TT_VETH" type veth peer name "$TT_PEER"
		ip addr add "$TT_IP/24" dev "$TT_VETH"
		ip -6 addr add fd00:78::1/64 dev "$TT_VETH" nodad
		ip link set "$TT_VETH" up
		ip link set "$TT_PEER" up
		rdma link add "$MRXE_DEV" type "$MRXE_LINK_TYPE" netdev "$TT_VETH"
	fi
	wait_for 10 port_state_is "$MRXE_DEV" ACTIVE
	echo "$MRXE_DEV port ACTIVE"
	mkdir -p "$HWC_DIR"
	mount --bind "/sys/class/infiniband/$MRXE_DEV/ports/1/hw_counters" "$HWC_DIR"
	dump_gids "$MRXE_DEV"
	ls /sys/class/infiniband/"$MRXE_DEV"/ports/1/hw_counters 2>/dev/null | tr '\n' ' '
	echo
) 2>&1 || fail_all "setup failed: $setup_log"

export MRXE_HW_COUNTERS_DIR=$HWC_DIR

# run_in_ns CMD...: where the device's netdev lives.
run_in_ns() {
	if [ "$MRXE_LINK_TYPE" = mrxe ]; then
		ip netns exec "$NS_A" "$@"
	else
		"$@"
	fi
}

# (no process substitution: the lab VM has no /dev/fd)
list=$("$GTEST" --gtest_list_tests --gtest_filter="$FILTER" |
	awk '/^[^ ]/ { s = $1; next } /^  / { print s $1 }')
mapfile -t cases <<< "$list"
[ -n "$list" ] || cases=()
[ ${#cases[@]} -gt 0 ] || fail_all "no test cases listed by $GTEST"

ktap_header
ktap_plan ${#cases[@]}
printf '%s\n' "$setup_log" | sed 's/^/# /'
n=0 passed=0 failed=0 skipped=0
tmp=$(mktemp)
for c in "${cases[@]}"; do
	n=$((n + 1))
	marker="mrxe-tt-case-$n-$$"
	echo "$marker" > /dev/kmsg
	rc=0
	run_in_ns timeout -k 5 "$CASE_TIMEOUT" "$GTEST" --gtest_color=no \
		--gtest_filter="$c" > "$tmp" 2>&1 < /dev/null || rc=$?
	# the gtest body without its banner lines
	sed -n '/^\[ RUN /,/^\[ *\(OK\|FAILED\|SKIPPED\) /p' "$tmp" | sed 's/^/# /'
	[ $rc = 124 ] || [ $rc = 137 ] && echo "# TIMEOUT: $c did not finish in ${CASE_TIMEOUT}s"
	if [ $rc != 0 ] && ! grep -q '^\[ RUN' "$tmp"; then
		sed 's/^/# /' "$tmp"
	fi
	bad=$(dmesg_since "$marker" | grep -E "$MRXE_DMESG_BAD")
	if [ -n "$bad" ]; then
		echo "# dmesg shows kernel problems during $c:"
		dmesg_since "$marker" | grep -E -A10 "$MRXE_DMESG_BAD" |
			head -n 60 | sed 's/^/#   /'
		rc=1
	fi
	if [ $rc = 0 ] && grep -q '^\[  SKIPPED \]' "$tmp"; then
		echo "ok $n $c # SKIP $(grep -m1 -A1 'Skipped$' "$tmp" | tail -n1)"
		skipped=$((skipped + 1))
	elif [ $rc = 0 ]; then
		echo "ok $n $c"
		passed=$((passed + 1))
	else
		echo "not ok $n $c"
		failed=$((failed + 1))
	fi
	# a case may leave the device unusable only if the driver is broken;
	# say so once, the following cases will show it
	port_state_is "$MRXE_DEV" ACTIVE || echo "# $MRXE_DEV port no longer ACTIVE after $c"
done
rm -f "$tmp"
echo "# $(basename "$0") ($MRXE_LINK_TYPE): $passed passed, $failed failed, $skipped skipped"
[ $failed -gt 0 ] && exit $KSFT_FAIL
[ $passed = 0 ] && [ $skipped -gt 0 ] && exit $KSFT_SKIP
exit $KSFT_PASS
