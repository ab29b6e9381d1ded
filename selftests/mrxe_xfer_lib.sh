#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Helpers for the data-transfer selftests (mrxe_rc_integrity.sh,
# mrxe_perftest.sh, mrxe_interop.sh, mrxe_ud_cm.sh, mrxe_pyverbs.sh).
# Source after lib.sh.
#
# Topology (xfer_setup):
#   mrxe (default):  namespaces NS_A and NS_B joined by a veth pair, an mrxe
#                    device in each: DEV_A on VETH_A (IP_A), DEV_B on VETH_B
#                    (IP_B).  Servers run in A, clients in B.
#   MRXE_LINK_TYPE=rxe (validates the tests themselves against stock rxe):
#                    stock rxe cannot work across namespaces (lab notes), so
#                    one rxe device on a veth end in init_net, and both ends
#                    of every transfer use it (rxe loopback).  Tests that
#                    need a real wire (netem) skip in this mode.
#
# Prerequisites: a test skips, saying why, when something it needs has not
# been built or written yet (module, provider, mrxe-verify, the data path);
# once it exists, every failure is a failure.

XFER_VERIFY=$MRXE_REPO/build/mrxe-verify
XFER_PROVIDER=$MRXE_REPO/build/libmrxe-rdmav34.so
XFER_DATAPATH_FILES="drivers/mrxe_req.c drivers/mrxe_resp.c drivers/mrxe_comp.c drivers/mrxe_recv.c"
XFER_TMP=${MRXE_RESULTS:-/tmp}/xfer-$$
XFER_LOOP=0
[ "$MRXE_LINK_TYPE" = rxe ] && XFER_LOOP=1
DEV_A=
DEV_B=
GID_A=
GID_B=
# Address the client connects to (the server's).
SRV_IP=$IP_A

mkdir -p "$XFER_TMP" 2>/dev/null || XFER_TMP=/tmp/xfer-$$
mkdir -p "$XFER_TMP"

# libibverbs loads RDMAV_DRIVERS in addition to the system providers listed
# in /etc/libibverbs.d (rdma-core v44 libibverbs/dynamic_driver.c), so stock
# rxe keeps working next to mrxe's provider from the build tree.
if [ "$MRXE_LINK_TYPE" != rxe ]; then
	export RDMAV_DRIVERS=$MRXE_REPO/build/libmrxe
fi

# xfer_require [verify] [datapath]: skip unless the pieces exist.  Also
# makes a failing command (the test runs under set -e) say what it was.
xfer_require() {
	local what f
	set -E
	trap 'echo "command failed (exit $?): $BASH_COMMAND"' ERR
	if [ "$MRXE_LINK_TYPE" != rxe ]; then
		[ -f "$MRXE_KO" ] || skip "$MRXE_KO not built (make module)"
		[ -f "$XFER_PROVIDER" ] ||
			skip "provider $XFER_PROVIDER not built (make provider)"
	fi
	for what in "$@"; do
		case $what in
		verify)
			[ -x "$XFER_VERIFY" ] ||
				skip "$XFER_VERIFY not built (make tool)" ;;
		datapath)
			[ "$MRXE_LINK_TYPE" = rxe ] && continue
			for f in $XFER_DATAPATH_FILES; do
				[ -f "$MRXE_REPO/$f" ] ||
					skip "data path not landed yet ($f missing)"
			done ;;
		esac
	done
	command -v ibv_devinfo >/dev/null || skip "ibverbs-utils not installed"
}

run_a() {
	if [ $XFER_LOOP = 1 ] || [ "$XFER_A_IN_INIT" = 1 ]; then
		"$@"
	else
		ip netns exec "$NS_A" "$@"
	fi
}
run_b() {
	if [ $XFER_LOOP = 1 ]; then "$@"; else ip netns exec "$NS_B" "$@"; fi
}

# Command prefixes for side A/B (arrays), for background jobs whose pid must
# be the real process (ip netns exec execs its command).
# XFER_A_IN_INIT=1: side A lives in init_net (interop: stock rxe there).
# XFER_SERVER_SIDE=B: xfer_pair runs the server in B and the client in A.
XFER_A_IN_INIT=0
XFER_SERVER_SIDE=A
xfer_prefix() {
	PFX_A=()
	PFX_B=()
	if [ $XFER_LOOP = 0 ]; then
		[ "$XFER_A_IN_INIT" = 1 ] || PFX_A=(ip netns exec "$NS_A")
		PFX_B=(ip netns exec "$NS_B")
	fi
	if [ "$XFER_SERVER_SIDE" = B ]; then
		PFX_SRV=("${PFX_B[@]}")
		PFX_CLI=("${PFX_A[@]}")
	else
		PFX_SRV=("${PFX_A[@]}")
		PFX_CLI=("${PFX_B[@]}")
	fi
}

# xfer_gid_index DEV IPV4: index of the RoCEv2 GID ::ffff:IPV4 (sysfs).
xfer_gid_index() {
	local dev=$1 want f n t
	want=$(gid_of_ipv4 "$2")
	# grep once over the table (no process per entry: slow under TCG)
	for f in $(grep -lx "$want" /sys/class/infiniband/"$dev"/ports/1/gids/* 2>/dev/null); do
		n=${f##*/}
		t=
		read -r t < "/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$n" 2>/dev/null
		if [ "$t" = "RoCE v2" ]; then
			echo "$n"
			return 0
		fi
	done
	return 1
}

# xfer_links_up: mrxe links DEV_A on VETH_A in NS_A and DEV_B on VETH_B in
# NS_B (IP_A / IP_B already on the netdevs), their RoCEv2 GIDs in GID_A /
# GID_B.  Shared by xfer_setup and the fabrics (mrxe_ecmp_lib.sh).
xfer_links_up() {
	DEV_A=${MRXE_DEV_PREFIX:-mrxe}0
	DEV_B=${MRXE_DEV_PREFIX:-mrxe}1
	link_add "$NS_A" "$DEV_A" "$VETH_A" || return 1
	link_add "$NS_B" "$DEV_B" "$VETH_B" || return 1
	xfer_wait_gid "$DEV_A" "$IP_A" || return 1
	GID_A=$REPLY
	xfer_wait_gid "$DEV_B" "$IP_B" || return 1
	GID_B=$REPLY
}

# xfer_wait_gid DEV IPV4: wait for the GID to appear, set REPLY to its index.
xfer_wait_gid() {
	local i
	for ((i = 0; i < 100; i++)); do
		REPLY=$(xfer_gid_index "$1" "$2") && return 0
		sleep 0.1
	done
	echo "no RoCEv2 GID for $2 on $1; GID table:"
	dump_gids "$1"
	return 1
}

# xfer_test_setup: a test's datapath topology at netdev MTU 1500, torn
# down when the test's process exits, and the next PORT for it.
xfer_test_setup() {
	xfer_require datapath
	trap xfer_cleanup EXIT
	xfer_setup 1500
	PORT=$((PORT + 1))
}

# xfer_setup [MTU]: build the topology; netdev MTU (default 1500).
xfer_setup() {
	local mtu=${1:-1500}
	mrxe_require_module
	mrxe_del_all_links || true
	if [ $XFER_LOOP = 1 ]; then
		modprobe veth
		ip link del "$VETH_A" 2>/dev/null || true
		ip link add "$VETH_A" type veth peer name "$VETH_B" || return 1
		ip link set "$VETH_A" mtu "$mtu"
		ip link set "$VETH_B" mtu "$mtu"
		ip addr add "$IP_A/24" dev "$VETH_A"
		ip link set "$VETH_A" up
		ip link set "$VETH_B" up
		DEV_A=$MRXE_DEV
		DEV_B=$MRXE_DEV
		rdma link add "$DEV_A" type rxe netdev "$VETH_A" || return 1
		xfer_wait_gid "$DEV_A" "$IP_A" || return 1
		GID_A=$REPLY
		GID_B=$REPLY
	else
		mrxe_netns_cleanup || true
		mrxe_netns_setup "$mtu" || return 1
		xfer_links_up || return 1
	fi
	wait_for 10 port_state_is "$DEV_A" ACTIVE ||
		{ echo "$DEV_A port not ACTIVE: $(port_state "$DEV_A")"; return 1; }
	wait_for 10 port_state_is "$DEV_B" ACTIVE ||
		{ echo "$DEV_B port not ACTIVE: $(port_state "$DEV_B")"; return 1; }
	SRV_IP=$IP_A
	echo "topology: $DEV_A gid[$GID_A] ($IP_A) <-> $DEV_B gid[$GID_B] ($IP_B), netdev mtu $mtu$([ $XFER_LOOP = 1 ] && echo ', rxe loopback')"
}

xfer_cleanup() {
	mrxe_del_all_links || true
	if [ $XFER_LOOP = 1 ]; then
		ip link del "$VETH_A" 2>/dev/null || true
	else
		mrxe_netns_cleanup || true
	fi
	return 0
}

# active_mtu DEV: the port's active MTU in bytes (ibv_devinfo).
active_mtu() {
	ibv_devinfo -d "$1" 2>/dev/null | sed -n 's/.*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p' | head -n1
}

# tcp_listening PORT: something listens on TCP PORT on the server side
# (ss's output tested by the shell: a grep per poll costs a process start).
tcp_listening() {
	local out
	out=$("${PFX_SRV[@]}" ss -Hltn "sport = :$1" 2>/dev/null) && [ -n "$out" ]
}

# cm_listening PORT: an rdma_cm id listens on PORT (rdma resource).
cm_listening() {
	rdma resource show cm_id 2>/dev/null | grep -E "LISTEN" | grep -qE "[:. ]$1( |$)"
}

# xfer_pair TIMEOUT WAIT SERVER_ARGV... -- CLIENT_ARGV...
#   Runs the server in A (B if XFER_SERVER_SIDE=B) in the background and,
#   once WAIT says it is ready ("tcp:PORT", "cm:PORT" or "sleep:SECS"), the
#   client on the other side.  Both run under `timeout`.  Prints both
#   outputs; fails if either fails.
xfer_pair() {
	local to=$1 waitspec=$2 sp crc src i ready=0 tag
	shift 2
	local -a s=() c=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do s+=("$1"); shift; done
	shift
	c=("$@")
	tag=$XFER_TMP/pair.$RANDOM
	xfer_prefix
	"${PFX_SRV[@]}" timeout --kill-after=10 "$to" "${s[@]}" > "$tag.server" 2>&1 &
	sp=$!
	for ((i = 0; i < 300; i++)); do
		case $waitspec in
		tcp:*) tcp_listening "${waitspec#tcp:}" && ready=1 ;;
		cm:*) cm_listening "${waitspec#cm:}" && ready=1 ;;
		sleep:*) sleep "${waitspec#sleep:}"; ready=1 ;;
		maddr:*) run_a ip maddr show dev "$VETH_A" | grep -qw -- "${waitspec#maddr:}" && ready=1 ;;
		esac
		[ $ready = 1 ] && break
		kill -0 $sp 2>/dev/null || break
		sleep 0.1
	done
	if [ $ready != 1 ]; then
		# cm listeners are not always visible in `rdma resource`: give
		# the server a moment instead of failing the test on that.
		if [ "${waitspec%%:*}" = cm ] && kill -0 $sp 2>/dev/null; then
			ready=1
		else
			echo "server did not become ready (${s[*]}):"
			kill $sp 2>/dev/null || true
			wait $sp 2>/dev/null || true
			sed 's/^/  server: /' "$tag.server"
			return 1
		fi
	fi
	crc=0
	"${PFX_CLI[@]}" timeout --kill-after=10 "$to" "${c[@]}" > "$tag.client" 2>&1 || crc=$?
	# A server whose client failed may wait forever for it.
	for ((i = 0; i < 100; i++)); do
		kill -0 $sp 2>/dev/null || break
		sleep 0.1
	done
	kill $sp 2>/dev/null || true
	src=0
	wait $sp || src=$?
	XFER_CLIENT_OUT=$tag.client
	XFER_SERVER_OUT=$tag.server
	echo "\$ ${c[*]}  (server: ${s[*]})"
	sed 's/^/  client: /' "$tag.client"
	sed 's/^/  server: /' "$tag.server"
	if [ $crc != 0 ] || [ $src != 0 ]; then
		echo "FAILED: client exit $crc, server exit $src (124 = timeout)"
		return 1
	fi
	return 0
}

# perf_result_check FILE...: the client's (and server's) output of a perftest
# or ibverbs-utils pingpong run must report a result, and every result row
# of at least one FILE must be non-zero: a perftest row "bytes iterations
# ..." with a non-zero message rate (bw: last column) or average latency
# (lat: 6th column), or pingpong's "= N Mbit/sec" and "= N usec/iter".
# Exit status alone would pass a run that moved nothing.  Either side may
# be the one that measures (perftest 4.5's ib_send_bw client prints zeros
# for long runs; the receiving server has the numbers).
perf_result_check() {
	local f ok=1 clock
	for f in "$@"; do
		# perftest converts cycles with a clock rate it estimates at
		# start; under TCG that can fail ("Correlation coefficient r^2
		# ... < 0.9") and a finished run then prints 0 Gb/s.  Its result
		# line (iterations done) still counts; the zero is only noted.
		clock=0
		grep -q "Correlation coefficient" "$f" && clock=1
		awk -v clock=$clock '
		/t_min\[usec\]/ { lat = 1 }
		/^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+/ {
			v = lat ? $6 : $NF
			n++
			if (v + 0 <= 0 && clock && $2 + 0 > 0)
				print "NOTE: 0 after " $2 " iterations: perftest clock estimate failed (TCG)"
			else if (v + 0 <= 0) { bad++; print "zero result: " $0 }
		}
		/ bytes in .* = [0-9.]+ Mbit\/sec/ { n++; if ($(NF - 1) + 0 <= 0) { bad++; print "zero result: " $0 } }
		/ iters in .* = [0-9.]+ usec\/iter/ { n++; if ($(NF - 1) + 0 <= 0) { bad++; print "zero result: " $0 } }
		END { exit (n && !bad) ? 0 : 1 }' "$f" && ok=0
	done
	[ $ok = 0 ] || echo "no non-zero result in: $*"
	return $ok
}

# netem_set SPEC...: apply netem on both veth ends (data and ACK direction);
# netem_clear removes it.
netem_set() {
	modprobe sch_netem 2>/dev/null || true
	run_a tc qdisc replace dev "$VETH_A" root netem "$@" || return 1
	run_b tc qdisc replace dev "$VETH_B" root netem "$@" || return 1
	echo "netem on both directions: $*"
}

netem_clear() {
	run_a tc qdisc del dev "$VETH_A" root 2>/dev/null || true
	run_b tc qdisc del dev "$VETH_B" root 2>/dev/null || true
	return 0
}

# rc_qp_modes DEV [NS]: the transport mode of each of DEV's RC QPs, sorted,
# on one line (mrxectl -j qp show, run in network namespace NS if given:
# mrxectl sees the devices of its own namespace).
rc_qp_modes() {
	${2:+ip netns exec "$2"} "$MRXE_REPO/build/mrxectl" -j qp show "$1" |
		jq_py 'print(" ".join(sorted(q.get("mode","?") for q in d if q.get("type")=="RC")))'
}

# ulp_init_net_load: kernel ULPs create their rdma_cm IDs in init_net,
# where stock rdma_rxe (loaded by the interop tests) holds UDP 4791 from
# module load on: unload it (skip if busy), then load mrxe.
ulp_init_net_load() {
	if [ -d /sys/module/rdma_rxe ]; then
		mrxe_del_all_links
		modprobe -r rdma_rxe ||
			skip "rdma_rxe is loaded and busy (it holds UDP 4791 in init_net)"
	fi
	mrxe_load || fail "cannot load $MRXE_KO"
}

# ulp_dummy_dev NDEV IP DEV MODE: a dummy netdev NDEV with IP/24, up, and
# the mrxe device DEV on it in transport MODE (auto|standard|metaroce):
# where a kernel ULP's initiator and target meet in init_net (through lo).
ulp_dummy_dev() {
	ip link add "$1" type dummy
	ip addr add "$2/24" dev "$1"
	ip link set "$1" up
	rdma link add "$3" type mrxe netdev "$1" || fail "rdma link add $3 on $1"
	"$MRXE_REPO/build/mrxectl" dev set "$3" mode "$4" ||
		fail "mrxectl dev set $3 mode $4"
}

# expect_rc_modes DEV auto|standard: DEV's RC QPs all upgraded to MetaRoCE
# (auto) or all stayed standard, and there is at least one.
expect_rc_modes() {
	local modes
	modes=$(rc_qp_modes "$1")
	echo "RC QP modes: $modes"
	[ -n "$modes" ] || fail "no RC QP listed"
	if [ "$2" = auto ]; then
		! echo "$modes" | grep -qw standard || fail "an RC QP stayed standard"
		echo "mode_upgrades $(stat_value "$1" mode_upgrades), meta_placed_on_arrival $(stat_value "$1" meta_placed_on_arrival)"
	else
		! echo "$modes" | grep -qw metaroce || fail "an RC QP is MetaRoCE in standard mode"
	fi
}

# ulp_lo_netem DEV VERIFY SPEC...: netem SPEC on lo (a kernel ULP over one
# device in init_net loops through it) while the function VERIFY moves and
# checks data; the fault must have happened (netem dropped) and DEV must
# have retransmitted, at most 8 times the drops.
ulp_lo_netem() {
	local dev=$1 verify=$2 drops retr
	shift 2
	tc qdisc add dev lo root netem "$@" || skip "netem not available"
	"$verify"
	drops=$(tc -s qdisc show dev lo | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n1)
	tc qdisc del dev lo root
	retr=$(stat_value "$dev" retrans_pkts)	# MetaRoCE's are counted in it too
	echo "netem dropped $drops, mrxe retransmitted $retr"
	"$MRXE_REPO/build/mrxectl" stats "$dev" -s
	[ "${drops:-0}" -gt 0 ] || fail "netem dropped nothing"
	[ "$retr" -gt 0 ] || fail "nothing retransmitted"
	# netem drops requests, ACKs and READ responses alike; a lost response
	# is asked for again with its run.  NVMe measured 2.2-4.4 x (16-33 x
	# before RACK learnt the jitter's lateness), NFS 1.7 x.
	[ "$retr" -le $((8 * drops)) ] ||
		fail "retransmitted $retr > 8 x the $drops netem drops (spurious: $(stat_value "$dev" meta_spurious_retrans))"
}

# link_delete_busy DEV WHAT: once DEV has received 2000 packets (WHAT's
# I/O is flowing), `rdma link delete DEV` must return within 60 s and DEV
# must be gone.  LINK_DELETED_AT: $SECONDS when the delete began.
link_delete_busy() {
	local dev=$1 what=$2 rc=0
	wait_for 10 stat_gt "$dev" rcvd_pkts 2000 || true
	expect_gt "packets received before the delete" "$(stat_value "$dev" rcvd_pkts)" 2000 || return 1
	LINK_DELETED_AT=$SECONDS
	timeout 60 rdma link delete "$dev" || rc=$?
	echo "rdma link delete: exit $rc after $((SECONDS - LINK_DELETED_AT)) s"
	[ $rc = 0 ] || fail "rdma link delete under busy $what failed or hung (exit $rc)"
	! rdma link show | grep -q "$dev" || fail "$dev still listed"
}

# disk_writer_start DEV MIB: dd writes MIB MiB of random data to the block
# device DEV with O_DIRECT from MiB 1 on, in the background (WRITER_PID).
disk_writer_start() {
	dd if=/dev/urandom of="$1" bs=1M count="$2" seek=1 oflag=direct status=none &
	WRITER_PID=$!
}

# disk_writer_ended SECS WHY: the writer must exit within SECS (it is
# killed and the test fails otherwise); a failed write is expected (WHY).
disk_writer_ended() {
	wait_for "$1" pid_gone "$WRITER_PID" ||
		{ kill -9 "$WRITER_PID"; fail "the writer did not end after the device went"; }
	wait "$WRITER_PID" || echo "writer ended with exit $? (expected: $2)"
}

# scsi_disk_verify SDEV BACK MIB: MIB MiB of random data written to the
# SCSI disk SDEV (exported by a kernel ULP target from the file BACK) with
# O_DIRECT in 1 MiB writes, and again at an offset of MIB MiB by four
# writers at once in 64 KiB ones (four commands in flight on the one
# connection); read back with O_DIRECT the same ways and compared, and
# compared with the target's backing file.  Scratch: BACK.src, BACK.back.
scsi_disk_verify() {
	local sdev=$1 back=$2 mib=$3 q=$(($3 * 4)) i pids=()
	head -c $((mib << 20)) /dev/urandom > "$back.src"
	dd if="$back.src" of="$sdev" bs=1M oflag=direct status=none ||
		fail "O_DIRECT write to $sdev failed"
	for i in 0 1 2 3; do
		dd if="$back.src" of="$sdev" bs=64K skip=$((i * q)) seek=$((mib * 16 + i * q)) \
			count=$q oflag=direct status=none &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || fail "O_DIRECT 64 KiB writes to $sdev (4 at once) failed"
	done
	dd if="$sdev" of="$back.back" bs=1M count="$mib" iflag=direct status=none ||
		fail "O_DIRECT read from $sdev failed"
	cmp "$back.src" "$back.back" || fail "data read back differs"
	pids=()
	for i in 0 1 2 3; do
		dd if="$sdev" of="$back.back" bs=64K skip=$((mib * 16 + i * q)) seek=$((i * q)) \
			count=$q iflag=direct conv=notrunc status=none &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || fail "O_DIRECT 64 KiB reads from $sdev (4 at once) failed"
	done
	cmp "$back.src" "$back.back" || fail "data read back at the offset differs"
	cmp -n $((mib << 20)) "$back.src" "$back" || fail "the target's backing file differs"
	cmp -n $((mib << 20)) "$back.src" "$back" 0 $((mib << 20)) ||
		fail "the target's backing file differs at the offset"
	echo "$mib MiB twice (1 MiB I/O; 64 KiB I/O by 4 at once): identical read back and on the target"
}

# scsi_disk_of DIR: SCSI_DISK is the name of the first disk under the SCSI
# host or session directory DIR (its target*/*/block/*), whose device node
# exists (with wait_for, until the disk appeared).
scsi_disk_of() {
	local b
	for b in "$1"/target*/*/block/*; do
		[ -b "/dev/${b##*/}" ] && SCSI_DISK=${b##*/} && return 0
	done
	return 1
}

# ulp_no_qp_errors DEV WHAT: without faults no QP of DEV failed a work
# request or a request it received (a ULP that reconnects and carries on,
# WHAT, would only be slower: the counters show it).
ulp_no_qp_errors() {
	local n c
	for n in completer_errors responder_errors; do
		c=$(stat_value "$1" $n)
		[ "$c" = 0 ] || fail "$n $c: a QP went to error ($2)"
	done
}

# pid_gone PID: PID has exited (with wait_for: wait_for SECS pid_gone PID).
pid_gone() { ! kill -0 "$1" 2>/dev/null; }

# stat_gt DEV NAME N: DEV's counter NAME is above N.
stat_gt() { [ "$(stat_value "$1" "$2")" -gt "$3" ]; }

# rx_packets a|b NETDEV: packets NETDEV received, in namespace A or B.
rx_packets() { "run_$1" cat "/sys/class/net/$2/statistics/rx_packets"; }

# hw_stats DEV: the device's counters (rdma statistic), for diagnostics.
hw_stats() {
	rdma statistic show link "$1/1" 2>/dev/null
}

# hw_stats_nonzero DEV: "name=value " for each of the device's non-zero
# counters, on one line.
hw_stats_nonzero() {
	hw_stats "$1" | tr ' ' '\n' |
		awk 'prev != "" && $0 ~ /^[0-9]+$/ && $0 != 0 { printf "%s=%s ", prev, $0 } { prev = $0 }'
}

# stat_value DEV NAME: one counter (0 when absent).
stat_value() {
	hw_stats "$1" | tr ' ' '\n' | awk -v n="$2" 'prev == n { print; found = 1; exit } { prev = $0 } END { if (!found) print 0 }'
}

# poll_start INTERVAL CMD [ARGS...]: run CMD every INTERVAL seconds in the
# background until poll_stop.  Tests run under set -e: errexit is off in
# the loop, so one failed poll does not end it (it once ended a path poller
# at its first failure, and a test then saw no snapshot at all).
#
# poll_stop lets the poll in progress finish (up to 15 s) before it kills
# the loop: under TCG one poll of a busy guest can take seconds, and a
# poller killed between writing a snapshot and keeping it had kept none
# in a whole transfer (6.12 lab, test_spread_4: "no path snapshot", and
# the snapshots that were kept came from the first 5% of the transfer).
poll_start() {
	local iv=$1 stop
	shift
	stop=$(mktemp -u "${XFER_TMP:-/tmp}/poll.stop.XXXXXX")
	( set +e; while [ ! -e "$stop" ]; do "$@"; [ -e "$stop" ] || sleep "$iv"; done ) &
	POLL_PID=$!
	POLL_STOP=$stop
}

poll_stop() {
	local i
	[ -n "${POLL_PID:-}" ] || return 0
	: > "$POLL_STOP"
	for i in $(seq 150); do
		kill -0 "$POLL_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill "$POLL_PID" 2>/dev/null || true
	wait "$POLL_PID" 2>/dev/null || true
	rm -f "$POLL_STOP"
	POLL_PID=
}

# pair_stat NAME: counter NAME summed over both devices (DEV_A + DEV_B).
pair_stat() { pair_stats "$1"; }

# pair_stats NAME...: each counter summed over both devices (0 when
# absent), in the order given, on one line; two `rdma` calls in all (a
# stat_value per device and name costs three processes, a second or more
# for a handful under TCG).  %.0f, not %d: mawk's %d stops at 2^31 - 1,
# and byte counters pass it.
pair_stats() {
	{ hw_stats "$DEV_A"; echo; hw_stats "$DEV_B"; } | tr ' ' '\n' |
		awk -v names="$*" 'BEGIN { n = split(names, k, " ") }
			{ for (i = 1; i <= n; i++) if (prev == k[i]) s[i] += $0; prev = $0 }
			END { for (i = 1; i <= n; i++) printf "%.0f%s", s[i], i < n ? " " : "\n" }'
}

# netem_dropped: packets netem dropped on both veth ends (tc -s "dropped N").
netem_dropped() {
	{ run_a tc -s qdisc show dev "$VETH_A"; run_b tc -s qdisc show dev "$VETH_B"; } |
		sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | awk '{ n += $1 } END { print n + 0 }'
}

# veth_dropped: packets the veth pair threw away without netem (tx_dropped
# of both ends: the peer's receive backlog, netdev_max_backlog, was full).
# netem's bursts overflow it in a busy guest (reorder 50% delay 3ms: 12%
# of the packets), a loss netem's own counter does not show.
veth_dropped() {
	local a b
	a=$(run_a cat "/sys/class/net/$VETH_A/statistics/tx_dropped" 2>/dev/null)
	b=$(run_b cat "/sys/class/net/$VETH_B/statistics/tx_dropped" 2>/dev/null)
	echo $(( ${a:-0} + ${b:-0} ))
}

# expect_gt WHAT VALUE MIN: fail (return 1, say why) unless VALUE > MIN.
expect_gt() {
	if [ "$2" -gt "$3" ]; then
		echo "$1: $2 (> $3)"
		return 0
	fi
	echo "FAILED: $1 is $2, expected more than $3"
	return 1
}

# expect_lt WHAT VALUE MAX: fail (return 1, say why) unless VALUE < MAX.
expect_lt() {
	if [ "$2" -lt "$3" ]; then
		echo "$1: $2 (< $3)"
		return 0
	fi
	echo "FAILED: $1 is $2, expected less than $3"
	return 1
}

# verify_run MRXE-VERIFY-OPTIONS...: one mrxe-verify server (A) / client (B)
# run on TCP port PORT+1 (PORT advances; the caller sets its base).  Honours
# MRXE_VERIFY_SIZES, MRXE_VERIFY_TIMEOUT and MRXE_VERIFY_ARGS.
verify_run() {
	local sizes=()
	[ -n "${MRXE_VERIFY_SIZES:-}" ] && sizes=(--sizes "$MRXE_VERIFY_SIZES")
	PORT=$((PORT + 1))
	# shellcheck disable=SC2086
	xfer_pair 1800 "tcp:$PORT" \
		"$XFER_VERIFY" --server --bind "$SRV_IP" --port $PORT \
			--dev "$DEV_A" --gid-index "$GID_A" \
			${MRXE_VERIFY_SERVER_ARGS:-} \
		-- \
		"$XFER_VERIFY" --client --connect "$SRV_IP" --port $PORT \
			--dev "$DEV_B" --gid-index "$GID_B" \
			--timeout "${MRXE_VERIFY_TIMEOUT:-300}" "${sizes[@]}" "$@" \
			${MRXE_VERIFY_ARGS:-}
}
