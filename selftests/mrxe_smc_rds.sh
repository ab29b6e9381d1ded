#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# selftest-timeout: 400
# Two more kernel ULPs, driven through their socket families, not verbs:
#
# SMC-R (AF_SMC, net/smc): TCP sockets whose data moves over RDMA.  The
# server listens in namespace A, the client connects from B and sends 8 MB
# of random data; the server's SHA-256 of what arrived must match.  It must
# really be SMC-R, not SMC's silent fallback to TCP: no smc_switch_to_fallback
# tracepoint event, QPs of comm [smc] on both devices, and the client's
# device sent at least a packet per MTU of the data.  Then both links are
# deleted under the live link group (SMC keeps it for minutes): the delete
# must return, which needs the flushed receives of SMC's QPs to wake its
# receive CQ (armed "solicited" only: drivers/mrxe_cq.c).  Before that fix
# SMC never saw a completion (it arms with IB_CQ_SOLICITED_MASK) and the
# link delete hung in smc_wr_drain_cq.  mrxe offers RoCEv2 GIDs only, so
# SMC-Rv2 it is, which SMC proposes only with a UEID configured
# (mrxe_smc_ueid.py; smc-tools is not in Debian).
#
# RDS over RDMA (AF_RDS, rds_rdma): two sockets on one mrxe device's
# address in init_net (RDS' IB transport exists only there), 200 messages
# of 1..60000 bytes, each compared as received; RC QPs of comm [rdma_cm]
# must carry them (the IB transport is forced with SO_RDS_TRANSPORT).
#
# The devices stay in the default mode, auto: both ends are mrxe, so the
# ULPs' RC QPs must come up as MetaRoCE; test_smc_standard pins standard.

MRXE_TEST_TIMEOUT=${MRXE_TEST_TIMEOUT:-200}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mrxe_xfer_lib.sh"

CTL=$MRXE_REPO/build/mrxectl
XFER=$MRXE_SELFTEST_DIR/mrxe_sock_xfer.py
UEID=MRXE-SELFTEST
TRACE=/sys/kernel/tracing
SMC_BYTES=8000000
SMC_PORT=18700

smc_cleanup() {
	set +e
	[ -n "${SRV_PID:-}" ] && kill "$SRV_PID" 2>/dev/null
	[ -f "$TRACE/events/smc/smc_switch_to_fallback/enable" ] &&
		echo 0 > "$TRACE/events/smc/smc_switch_to_fallback/enable"
	mrxe_del_all_links
	python3 "$MRXE_SELFTEST_DIR/mrxe_smc_ueid.py" --remove "$UEID" >/dev/null 2>&1
	modprobe -r smc_diag smc 2>/dev/null
	xfer_cleanup
	return 0
}

smc_require() {
	xfer_require datapath
	modprobe smc 2>/dev/null || skip "module smc not available"
	[ -d "$TRACE/events" ] || mount -t tracefs nodev "$TRACE" 2>/dev/null || true
}

# smc_run MODE: an 8 MB transfer over SMC-R with the devices in MODE.
smc_run() {
	local mode=$1 s0 sent srv cli fb modes want d
	smc_require
	trap smc_cleanup EXIT
	xfer_setup || fail "topology setup failed"
	xfer_prefix
	if [ "$mode" != auto ]; then
		ip netns exec "$NS_A" "$CTL" dev set "$DEV_A" mode "$mode" || fail "mode $mode on $DEV_A"
		ip netns exec "$NS_B" "$CTL" dev set "$DEV_B" mode "$mode" || fail "mode $mode on $DEV_B"
	fi
	python3 "$MRXE_SELFTEST_DIR/mrxe_smc_ueid.py" "$UEID" || fail "cannot configure an SMC UEID"
	fb=
	if [ -f "$TRACE/events/smc/smc_switch_to_fallback/enable" ]; then
		echo > "$TRACE/trace"
		echo 1 > "$TRACE/events/smc/smc_switch_to_fallback/enable"
		fb=$TRACE/trace
	fi
	s0=$(stat_value "$DEV_B" sent_pkts)
	ip netns exec "$NS_A" timeout 90 python3 "$XFER" smc-server "$IP_A" $SMC_PORT \
		> "$XFER_TMP/smc.server" 2>&1 &
	SRV_PID=$!
	wait_for 10 tcp_listening $SMC_PORT || fail "the SMC server did not listen"
	ip netns exec "$NS_B" timeout 90 python3 "$XFER" smc-client "$IP_A" $SMC_PORT $SMC_BYTES \
		> "$XFER_TMP/smc.client" 2>&1 || { cat "$XFER_TMP/smc.client"; fail "the SMC client failed"; }
	wait "$SRV_PID" || { cat "$XFER_TMP/smc.server"; fail "the SMC server failed"; }
	SRV_PID=
	cli=$(sed -n 's/^sent \([0-9]*\) bytes sha256 \([0-9a-f]*\)$/\1 \2/p' "$XFER_TMP/smc.client")
	srv=$(sed -n 's/^received \([0-9]*\) bytes sha256 \([0-9a-f]*\)$/\1 \2/p' "$XFER_TMP/smc.server")
	echo "client: $cli"
	echo "server: $srv"
	[ -n "$cli" ] && [ "$cli" = "$srv" ] || fail "the server did not receive what the client sent"
	if [ -n "$fb" ]; then
		grep smc_switch_to_fallback "$fb" && fail "SMC fell back to TCP (fallback_rsn above)"
		echo "no SMC fallback to TCP (tracepoint smc_switch_to_fallback silent)"
	fi
	rdma resource show qp | grep "comm \[smc\]"
	rdma resource show qp | grep -q "link $DEV_A/1 .*comm \[smc\]" || fail "no SMC QP on $DEV_A"
	rdma resource show qp | grep -q "link $DEV_B/1 .*comm \[smc\]" || fail "no SMC QP on $DEV_B"
	sent=$(( $(stat_value "$DEV_B" sent_pkts) - s0 ))
	expect_gt "packets $DEV_B sent" "$sent" $((SMC_BYTES / 1024)) || fail "the data did not go over $DEV_B"
	modes=$(rc_qp_modes "$DEV_A" "$NS_A")
	echo "$DEV_A RC QP modes: $modes"
	want=metaroce
	[ "$mode" = standard ] && want=standard
	[ -n "$modes" ] && ! echo "$modes" | tr ' ' '\n' | grep -qvx "$want" ||
		fail "$DEV_A's RC QPs are not all $want"
	# The link group outlives the connection: delete the links under it.
	for d in "$DEV_A" "$DEV_B"; do
		SECONDS=0
		timeout 60 rdma link delete "$d" || fail "rdma link delete $d under a live SMC link group: exit $? (hung?)"
		echo "rdma link delete $d: ${SECONDS} s"
	done
	dmesg | grep -E "blocked for more than|smc_wr_drain_cq" && fail "a task hung"
	return 0
}

test_smc_auto() { smc_run auto; }
test_smc_standard() { smc_run standard; }

NDEV=mrxerds0
RDS_DEV=mrxerds
RDS_IP=10.232.0.1

rds_cleanup() {
	set +e
	modprobe -r rds_rdma rds 2>/dev/null
	rdma link delete "$RDS_DEV" 2>/dev/null
	ip link del "$NDEV" 2>/dev/null
	return 0
}

test_rds() {
	local s0 sent
	mrxe_require_module
	modprobe rds_rdma 2>/dev/null || skip "module rds_rdma not available"
	ulp_init_net_load
	trap rds_cleanup EXIT
	ulp_dummy_dev "$NDEV" "$RDS_IP" "$RDS_DEV" auto
	wait_for 10 port_state_is "$RDS_DEV" ACTIVE || fail "$RDS_DEV port not ACTIVE"
	wait_for 10 xfer_gid_index "$RDS_DEV" "$RDS_IP" >/dev/null || fail "no RoCEv2 GID for $RDS_IP"
	s0=$(stat_value "$RDS_DEV" sent_pkts)
	timeout 120 python3 "$XFER" rds "$RDS_IP" 200 || fail "RDS transfer failed"
	rdma resource show qp | grep "link $RDS_DEV/"
	[ "$(rdma resource show qp | grep -c "link $RDS_DEV/1 .*type RC state RTS .*comm \[rdma_cm\]")" -ge 2 ] ||
		fail "RDS' two RC QPs (rdma_cm) are not on $RDS_DEV in RTS"
	sent=$(( $(stat_value "$RDS_DEV" sent_pkts) - s0 ))
	expect_gt "packets $RDS_DEV sent" "$sent" 4000 || fail "the messages did not go over $RDS_DEV"
	expect_rc_modes "$RDS_DEV" auto
}

mrxe_run_tests test_smc_auto test_smc_standard test_rds
