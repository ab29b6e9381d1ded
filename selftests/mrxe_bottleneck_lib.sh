#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A congested bottleneck inside the lab guest, for the congestion control
# selftest (mrxe_cc.sh) and the bench (bench/cc-fairness.sh).  Source after
# lib.sh (and mrxe_xfer_lib.sh for the stat helpers).
#
#   S1 (mrxe BN_DEV_S1) --\
#                          R --[tbf BN_RATE + RED ecn]--> D (mrxe BN_DEV_D)
#   S2 (mrxe BN_DEV_S2) --/
#
# Four namespaces; R forwards.  R's egress toward D is the bottleneck: a
# token bucket (tbf) at BN_RATE with a RED child that marks ECT packets CE
# (RFC 3168) between BN_RED_MIN and BN_RED_MAX bytes of average queue and
# drops non-ECT ones early; beyond BN_RED_LIMIT bytes everything is dropped
# (lab notes: "a congested bottleneck").  The reverse direction (ACKs, CNPs)
# is not limited.  bn_red_stats reads drops/marks from `tc -s`.
#
# Out-of-band (TCP) exchanges of the test tools must not cross the
# bottleneck: RED drops Not-ECT TCP segments whenever its average queue is
# above max, and a control connection stalled for minutes behind an
# unthrottled RoCE load.  Each sender also has a direct management link to
# D (S1 10.78.1.2 <-> D 10.78.1.1, S2 10.78.2.2 <-> D 10.78.2.1) without an
# mrxe device: servers listen there (BN_MGMT_D1/BN_MGMT_D2), RDMA uses the
# GIDs of the bottleneck path.

BN_RATE=${BN_RATE:-30mbit}
# tbf bucket: large enough that a late qdisc watchdog in a TCG guest (ms
# late under host load) does not cap the rate: 8 KiB limited the 30 Mbit/s
# link to a few Mbit/s in a loaded guest
BN_BURST=${BN_BURST:-64kb}
BN_RED_MIN=${BN_RED_MIN:-15000}
BN_RED_MAX=${BN_RED_MAX:-60000}
BN_RED_LIMIT=${BN_RED_LIMIT:-300000}
BN_RED_PROB=${BN_RED_PROB:-0.5}

BN_NS_S1=mrxe-bn-s1-$$
BN_NS_S2=mrxe-bn-s2-$$
BN_NS_R=mrxe-bn-r-$$
BN_NS_D=mrxe-bn-d-$$
BN_IP_S1=10.77.1.2
BN_IP_S2=10.77.2.2
BN_IP_D=10.77.3.2
BN_MGMT_D1=10.78.1.1
BN_MGMT_D2=10.78.2.1
BN_DEV_S1=mrxebns1
BN_DEV_S2=mrxebns2
BN_DEV_D=mrxebnd
BN_GID_S1=
BN_GID_S2=
BN_GID_D=

bn_s1() { ip netns exec "$BN_NS_S1" "$@"; }
bn_s2() { ip netns exec "$BN_NS_S2" "$@"; }
bn_r() { ip netns exec "$BN_NS_R" "$@"; }
bn_d() { ip netns exec "$BN_NS_D" "$@"; }

# bn_link NS_X IF_X ADDR_X NS_R IF_R ADDR_R: a veth between X and the router.
bn_link() {
	ip link add "$2" netns "$1" type veth peer name "$5" netns "$4" || return 1
	ip -n "$1" addr add "$3/24" dev "$2"
	ip -n "$4" addr add "$6/24" dev "$5"
	ip -n "$1" link set "$2" up
	ip -n "$4" link set "$5" up
	ip -n "$1" route add default via "$6"
}

# bn_setup: namespaces, links, router qdiscs and the three mrxe devices.
bn_setup() {
	local ns
	mrxe_require_module
	modprobe veth 2>/dev/null
	modprobe sch_tbf 2>/dev/null
	modprobe sch_red 2>/dev/null
	for ns in "$BN_NS_S1" "$BN_NS_S2" "$BN_NS_R" "$BN_NS_D"; do
		ip netns add "$ns" || return 1
		ip -n "$ns" link set lo up
	done
	bn_link "$BN_NS_S1" bns1 "$BN_IP_S1" "$BN_NS_R" bnr1 10.77.1.1 || return 1
	bn_link "$BN_NS_S2" bns2 "$BN_IP_S2" "$BN_NS_R" bnr2 10.77.2.1 || return 1
	bn_link "$BN_NS_D" bnd "$BN_IP_D" "$BN_NS_R" bnrd 10.77.3.1 || return 1
	# management links (no route to the 10.77 nets through them)
	ip link add bnm1 netns "$BN_NS_S1" type veth peer name bnmd1 netns "$BN_NS_D" || return 1
	ip link add bnm2 netns "$BN_NS_S2" type veth peer name bnmd2 netns "$BN_NS_D" || return 1
	ip -n "$BN_NS_S1" addr add 10.78.1.2/24 dev bnm1
	ip -n "$BN_NS_S2" addr add 10.78.2.2/24 dev bnm2
	ip -n "$BN_NS_D" addr add "$BN_MGMT_D1/24" dev bnmd1
	ip -n "$BN_NS_D" addr add "$BN_MGMT_D2/24" dev bnmd2
	ip -n "$BN_NS_S1" link set bnm1 up
	ip -n "$BN_NS_S2" link set bnm2 up
	ip -n "$BN_NS_D" link set bnmd1 up
	ip -n "$BN_NS_D" link set bnmd2 up
	bn_r sysctl -qw net.ipv4.ip_forward=1
	bn_qdisc || return 1
	bn_s1 rdma link add "$BN_DEV_S1" type mrxe netdev bns1 || return 1
	bn_s2 rdma link add "$BN_DEV_S2" type mrxe netdev bns2 || return 1
	bn_d rdma link add "$BN_DEV_D" type mrxe netdev bnd || return 1
	xfer_wait_gid "$BN_DEV_S1" "$BN_IP_S1" || return 1
	BN_GID_S1=$REPLY
	xfer_wait_gid "$BN_DEV_S2" "$BN_IP_S2" || return 1
	BN_GID_S2=$REPLY
	xfer_wait_gid "$BN_DEV_D" "$BN_IP_D" || return 1
	BN_GID_D=$REPLY
	wait_for 10 port_state_is "$BN_DEV_S1" ACTIVE || return 1
	wait_for 10 port_state_is "$BN_DEV_S2" ACTIVE || return 1
	wait_for 10 port_state_is "$BN_DEV_D" ACTIVE || return 1
	echo "bottleneck: $BN_DEV_S1 ($BN_IP_S1), $BN_DEV_S2 ($BN_IP_S2) -> R -> $BN_DEV_D ($BN_IP_D): tbf $BN_RATE burst $BN_BURST, red min $BN_RED_MIN max $BN_RED_MAX limit $BN_RED_LIMIT ecn"
}

# bn_qdisc: (re)build the bottleneck qdiscs, zeroing their counters.
bn_qdisc() {
	bn_r tc qdisc del dev bnrd root 2>/dev/null || true
	bn_r tc qdisc add dev bnrd root handle 1: tbf rate "$BN_RATE" \
		burst "$BN_BURST" latency 1s || return 1
	bn_r tc qdisc add dev bnrd parent 1:1 handle 10: red \
		limit "$BN_RED_LIMIT" min "$BN_RED_MIN" max "$BN_RED_MAX" \
		avpkt 1100 burst $(((2 * BN_RED_MIN + BN_RED_MAX) / 3300 + 1)) \
		probability "$BN_RED_PROB" bandwidth "$BN_RATE" ecn || return 1
}

bn_cleanup() {
	local ns
	for ns in "$BN_NS_S1" "$BN_NS_S2" "$BN_NS_R" "$BN_NS_D"; do
		ip netns del "$ns" 2>/dev/null || true
	done
	return 0
}

# bn_red_stats: "sent_pkts dropped marked early_drops tail_drops" of the RED
# qdisc on the bottleneck (tc -s: "Sent B bytes P pkt (dropped D, ...)" and
# "marked M early E pdrop P other O").
bn_red_stats() {
	bn_r tc -s qdisc show dev bnrd | awk '
		/^qdisc red/ { red = 1; next }
		/^qdisc/ { red = 0 }
		red && /Sent/ { for (i = 1; i <= NF; i++) if ($i == "pkt") p = $(i - 1);
				for (i = 1; i <= NF; i++) if ($i == "(dropped") { d = $(i + 1); sub(",", "", d) } }
		red && /marked/ { for (i = 1; i <= NF; i++) {
				if ($i == "marked") m = $(i + 1)
				if ($i == "early") e = $(i + 1)
				if ($i == "pdrop") t = $(i + 1) } }
		END { print p + 0, d + 0, m + 0, e + 0, t + 0 }'
}

# bn_ctl ARGS...: `mrxectl dev set DEV ARGS` on all three devices.
bn_ctl() {
	local ctl=$MRXE_REPO/build/mrxectl
	bn_s1 "$ctl" dev set "$BN_DEV_S1" "$@" || return 1
	bn_s2 "$ctl" dev set "$BN_DEV_S2" "$@" || return 1
	bn_d "$ctl" dev set "$BN_DEV_D" "$@" || return 1
}

# bn_stat DEV NAME: device counter (the device lives in its namespace, the
# rdma statistic is global).
bn_stat() { stat_value "$1" "$2"; }
