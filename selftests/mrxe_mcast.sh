#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# selftest-timeout: 400
# UD multicast across two mrxe devices in two network namespaces (issue 5):
# mckey (rdmacm-utils) sender in B, receivers in A, IPv4 (IPv6: rdma_cm of
# 6.1 refuses it, skipped), each receiver QP must get every message; plain-verbs attach/detach with bad
# input, IGMP/MLD membership of the netdev, fan-out to several attached QPs
# with byte, GRH and Q_Key checks (build/mrxe-mcast-test), also with sender
# and receivers on one device (IP multicast loopback); a process that
# exits with attached QPs leaves the groups.

MRXE_TEST_TIMEOUT=${MRXE_TEST_TIMEOUT:-150}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mrxe_xfer_lib.sh"

MCAST_TEST=$MRXE_REPO/build/mrxe-mcast-test
TO=120
COUNT=20

setup() {
	xfer_require datapath
	trap xfer_cleanup EXIT
	xfer_setup 1500
}

# Where a lost datagram went: both devices' counters, the veths' packet
# counts, the receiver namespace's IP/UDP drop counters and its groups.
mcast_diag() {
	echo "receiver $DEV_A: $(hw_stats "$DEV_A")"
	echo "sender $DEV_B: $(hw_stats "$DEV_B")"
	run_a ip -s link show "$VETH_A" | sed 's/^/  A: /'
	run_b ip -s link show "$VETH_B" | sed 's/^/  B: /'
	run_a nstat -az 2>/dev/null | grep -E 'InDiscards|InHdrErrors|InAddrErrors|InNoRoutes|InMcast|UdpInErrors|UdpRcvbufErrors|UdpNoPorts|InDatagrams' | sed 's/^/  A nstat: /' || true
	run_a cat /proc/net/igmp | sed 's/^/  A igmp: /'
}

# mckey_pair GROUP BIND_A BIND_B: receiver (one QP joined) in A, sender in B.
# mckey's receiver polls until each of its QPs completed COUNT receives, so
# a lost or undelivered copy ends it in a timeout.
mckey_pair() {
	local group=$1 bind_a=$2 bind_b=$3 before after
	before=$(stat_value "$DEV_A" rcvd_pkts)
	# the receiver joins, posts its receives and sleeps 3 s before polling;
	# the sender joins and sleeps 3 s before sending.  Start the sender once
	# the receiver's QP is attached (its netdev joined the group: the
	# attach does the IGMP/MLD join); a fixed delay lost the race on a
	# loaded 2-vCPU guest.  One receiver QP: with -c 2 the netdev joins the
	# group at the first QP's attach, and under load the second QP attached
	# after the sender's 3 s, missed datagrams and the receiver waited
	# forever (fan-out to several QPs is test_verbs_same_device_loopback's).
	# A missing datagram is a bug, not UD's unreliability: nothing in one
	# guest drops them.  Lost ones were mckey's last sends, still queued
	# when it destroyed its AH and QP (mrxe_pipe_linger).  So no retry;
	# on failure, say where the datagrams stopped.
	if ! xfer_pair $TO "maddr:$group" \
		mckey -m "$group" -b "$bind_a" -c 1 -C $COUNT -S 512 \
		-- \
		mckey -m "$group" -b "$bind_b" -s -c 1 -C $COUNT -S 512; then
		mcast_diag
		fail "the receiver did not get all $COUNT datagrams"
	fi
	after=$(stat_value "$DEV_A" rcvd_pkts)
	echo "$DEV_A rcvd_pkts: $before -> $after"
	grep -q "data transfers complete" "$(ls -t "$XFER_TMP"/pair.*.server | head -n1)" ||
		fail "receiver did not complete its transfers"
	if [ "$MRXE_LINK_TYPE" != rxe ] && [ $((after - before)) -lt $COUNT ]; then
		hw_stats "$DEV_A"
		fail "receiver device counted fewer than $COUNT packets"
	fi
}

test_mckey_ipv4() {
	need_cmd mckey rdmacm-utils
	setup
	mckey_pair 239.1.2.3 "$IP_A" "$IP_B"
}

# Linux 6.1's rdma_cm refuses IPv6 multicast joins on RoCEv2 ports
# (drivers/infiniband/core/cma.c, cma_iboe_join_multicast: -ENOTSUPP, 524)
# before any driver is involved: that refusal is a skip, anything else a
# failure.  IPv6 groups through plain verbs (MLD join) are covered above.
test_mckey_ipv6() {
	local out rc try
	need_cmd mckey rdmacm-utils
	setup
	# The probe is what tells the kernel's refusal apart, so it must reach
	# the join: right after setup the veth may not have carrier yet and
	# route resolution of the group says "Network is unreachable" (seen
	# once in CI, after which the real pair hit the 524 as a failure).
	for try in 1 2 3 4 5 6 7 8 9 10; do
		out=$(run_b timeout 60 mckey -m ff0e::1:2:3 -b "$IP6_B" -s -C 1 2>&1) && rc=0 || rc=$?
		echo "$out" | grep -q "Network is unreachable" || break
		echo "  probe $try: group not routable yet, retrying"
		sleep 1
	done
	echo "$out" | sed 's/^/  /'
	if [ $rc != 0 ] && echo "$out" | grep -q "failure joining: Unknown error 524"; then
		skip "rdma_cm of this kernel refuses IPv6 multicast on RoCEv2 (ENOTSUPP in cma_iboe_join_multicast)"
	fi
	mckey_pair ff0e::1:2:3 "$IP6_A" "$IP6_B"
}

# Plain verbs: bad input, membership, fan-out, Q_Key, detach.
test_verbs_attach_detach_traffic() {
	local before after
	[ -x "$MCAST_TEST" ] || skip "$MCAST_TEST not built (make tool)"
	setup
	before=$(stat_value "$DEV_A" qkey_violations)
	# runs in A: it reads A's /proc/net/igmp, igmp6 and dev_mcast
	run_a "$MCAST_TEST" "$DEV_B" "$GID_B" "$DEV_A" "$GID_A" "$VETH_A"
	after=$(stat_value "$DEV_A" qkey_violations)
	echo "$DEV_A qkey_violations: $before -> $after"
	if [ "$MRXE_LINK_TYPE" != rxe ] && [ $((after - before)) -lt 20 ]; then
		fail "the QP with another Q_Key: drops not counted (want >= 20)"
	fi
}

# Sender and receivers on one device: the multicast copy for the local
# members comes back through IP multicast loopback (ip_mc_output).
test_verbs_same_device_loopback() {
	[ -x "$MCAST_TEST" ] || skip "$MCAST_TEST not built (make tool)"
	setup
	run_a "$MCAST_TEST" "$DEV_A" "$GID_A" "$DEV_A" "$GID_A" "$VETH_A"
}

# A process exiting with an attached QP: uverbs detaches it, the group goes.
test_exit_attached() {
	[ -x "$MCAST_TEST" ] || skip "$MCAST_TEST not built (make tool)"
	setup
	run_a "$MCAST_TEST" exit-attached "$DEV_A" "$VETH_A"
	if run_a grep -qi 040201EF /proc/net/igmp; then
		run_a cat /proc/net/igmp
		fail "239.1.2.4 still joined after the process exited"
	fi
	if run_a grep -qi ff0e000000000000000000000000004d /proc/net/igmp6; then
		fail "ff0e::4d still joined after the process exited"
	fi
	echo "groups left after the process exited"
	[ -z "$(rdma resource show qp link "$DEV_A/1" 2>/dev/null | grep -w UD)" ] ||
		fail "UD QP left behind"
}

mrxe_run_tests \
	test_verbs_attach_detach_traffic \
	test_verbs_same_device_loopback \
	test_exit_attached \
	test_mckey_ipv4 \
	test_mckey_ipv6
