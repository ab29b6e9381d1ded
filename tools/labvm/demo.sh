#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The README's main job: boot the lab VM and show mrxe at work.
#
#   tools/labvm/demo.sh            (make demo / bash tools/bootstrap.sh demo)
#
# In the VM: load build/rdma_mrxe.ko, create two network namespaces joined by a
# veth pair, `rdma link add` an mrxe device in each, show them (rdma link,
# sysfs GIDs), and, when the provider build/libmrxe-rdmav34.so exists, show
# ibv_devices/ibv_devinfo and run ib_write_bw from one namespace to the other.
# Every step says whether it ran or why it was skipped.
# The body is one brace group: bash parses it completely before running it,
# so editing this file while runs are in progress cannot break them.
{
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

if [ "${MRXE_VM:-0}" != 1 ]; then
	exec "$REPO/tools/labvm/vm-run.sh" --timeout 900 -- "$REPO/tools/labvm/demo.sh" "$@"
fi

# ------------------------------------------------------------ in the VM --
. "$REPO/selftests/lib.sh"
DEV_A=mrxe0
DEV_B=mrxe1
PROVIDER=$REPO/build/libmrxe-rdmav34.so
ran=()
skipped=()

step() { printf '\n=== %s\n' "$*"; }
die() { echo "demo: FAILED: $*"; summary; exit 1; }
summary() {
	printf '\n=== demo summary\n'
	local s
	for s in "${ran[@]}"; do echo "ran:     $s"; done
	for s in "${skipped[@]}"; do echo "skipped: $s"; done
}
gid_index() {	# DEV IPV4 -> index of its RoCE v2 GID
	local f want
	want=$(gid_of_ipv4 "$2")
	for f in $(grep -lx "$want" /sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null); do
		[ "$(cat "/sys/class/infiniband/$1/ports/1/gid_attrs/types/${f##*/}")" = "RoCE v2" ] &&
			{ echo "${f##*/}"; return 0; }
	done
	return 1
}
cleanup() {
	set +e
	ip netns pids "$NS_A" 2>/dev/null | xargs -r kill 2>/dev/null
	mrxe_del_all_links
	mrxe_netns_cleanup
	mrxe_loaded && rmmod "$MRXE_MODULE"
}
trap cleanup EXIT

step "kernel $(uname -r), lab VM guest"
[ -f "$MRXE_KO" ] || die "$MRXE_KO not built (make module)"
step "load $MRXE_KO"
mrxe_load || die "loading the module failed"
modinfo -F version "$MRXE_KO" 2>/dev/null | sed 's/^/version: /'
ran+=("insmod rdma_mrxe.ko")

step "two network namespaces joined by a veth pair"
mrxe_netns_setup || die "netns setup failed"
echo "$NS_A: $VETH_A $IP_A   <->   $NS_B: $VETH_B $IP_B"
ran+=("netns $NS_A/$NS_B + veth")

step "ip netns exec $NS_A rdma link add $DEV_A type mrxe netdev $VETH_A"
link_add "$NS_A" "$DEV_A" "$VETH_A" || die "rdma link add $DEV_A failed"
step "ip netns exec $NS_B rdma link add $DEV_B type mrxe netdev $VETH_B"
link_add "$NS_B" "$DEV_B" "$VETH_B" || die "rdma link add $DEV_B failed"
ran+=("rdma link add $DEV_A, $DEV_B")

step "rdma link (seen from each namespace)"
nsa rdma link show
nsb rdma link show
step "rdma dev"
rdma dev show
step "RoCE v2 GIDs (sysfs)"
wait_for 5 has_gid "$DEV_A" "$(gid_of_ipv4 "$IP_A")" "RoCE v2"
wait_for 5 has_gid "$DEV_B" "$(gid_of_ipv4 "$IP_B")" "RoCE v2"
echo "$DEV_A:"; dump_gids "$DEV_A"
echo "$DEV_B:"; dump_gids "$DEV_B"
ran+=("rdma link / rdma dev / GID table")

if [ ! -f "$PROVIDER" ]; then
	skipped+=("ibv_devices, ibv_devinfo, ib_write_bw: $PROVIDER not built")
	summary
	exit 0
fi
export RDMAV_DRIVERS=$REPO/build/libmrxe
step "ibv_devices (RDMAV_DRIVERS=$RDMAV_DRIVERS)"
ibv_devices || die "ibv_devices failed"
step "ibv_devinfo -d $DEV_A"
ibv_devinfo -d "$DEV_A" || die "ibv_devinfo failed"
ran+=("ibv_devices, ibv_devinfo")

if ! command -v ib_write_bw >/dev/null; then
	skipped+=("ib_write_bw: perftest not installed")
	summary
	exit 0
fi
gid_a=$(gid_index "$DEV_A" "$IP_A") || die "no RoCE v2 GID for $IP_A"
gid_b=$(gid_index "$DEV_B" "$IP_B") || die "no RoCE v2 GID for $IP_B"
args=(-s 65536 -n ${MRXE_DEMO_ITERS:-500} --report_gbits -F -p 18515)
step "ib_write_bw: server in $NS_A on $DEV_A (GID $gid_a), client in $NS_B on $DEV_B (GID $gid_b)"
nsa timeout 120 ib_write_bw -d "$DEV_A" -x "$gid_a" "${args[@]}" > /tmp/srv.log 2>&1 &
srv=$!
out=
ok=0
for _ in $(seq 30); do
	if out=$(nsb timeout 120 ib_write_bw -d "$DEV_B" -x "$gid_b" "${args[@]}" "$IP_A" 2>&1); then
		ok=1
		break
	fi
	# Retry only while the server is not listening yet.
	echo "$out" | grep -q "Couldn't connect to" || break
	sleep 1
done
wait $srv
srv_rc=$?
echo "$out"
if [ $ok = 1 ] && [ $srv_rc = 0 ]; then
	gbps=$(echo "$out" | awk '$1 == 65536 { print $4 }' | tail -n1)
	echo
	echo "RESULT mrxe ib_write_bw $NS_B -> $NS_A, 64 KiB messages: ${gbps:-?} Gb/s"
	ran+=("ib_write_bw between namespaces: ${gbps:-?} Gb/s")
else
	echo "--- server log"; cat /tmp/srv.log
	die "ib_write_bw failed (client ok=$ok, server rc=$srv_rc)"
fi
CTL=$REPO/build/mrxectl
if [ -x "$CTL" ]; then
	step "what the transport did: ip netns exec $NS_B mrxectl dev show; mrxectl stats $DEV_B -s"
	nsb "$CTL" dev show
	nsb "$CTL" stats "$DEV_B" -s
	ran+=("mrxectl dev show / stats")
else
	skipped+=("mrxectl: $CTL not built (make tool)")
fi

# ---- the headline: what MetaRoCE is for, measured in this run ----
# ib_write_bw -D SECS from B to A at 0% and 1% netem loss on B's egress (the
# data direction), the device default set to standard RoCEv2 and then to
# MetaRoCE before each perftest creates its QPs.  Goodput, the fraction of
# its own lossless goodput each mode keeps, and packets retransmitted per
# packet netem dropped (selective repeat resends about one per loss,
# go-back-N a whole window).
stat_of() {	# NS DEV NAME
	ip netns exec "$1" rdma statistic show link "$2/1" 2>/dev/null |
		tr ' ' '\n' | awk -v n="$3" 'p == n { print; f = 1; exit } { p = $0 } END { if (!f) print 0 }'
}
netem_drops() {
	nsb tc -s qdisc show dev "$VETH_B" |
		sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | awk '{ n += $1 } END { print n + 0 }'
}
# perftest estimates the CPU clock from cycle counts; under TCG that can
# fail ("Correlation coefficient r^2 ... < 0.9") and it then prints a BW of
# 0.000000 for a run that moved data: such a run is repeated (up to 3 times).
headline_run() {	# MODE LOSS PORT -> "gbps retrans drops"
	local mode=$1 loss=$2 port=$3 r0 r1 d g o sp try
	local a
	nsa "$CTL" dev set "$DEV_A" mode "$mode" || return 1
	nsb "$CTL" dev set "$DEV_B" mode "$mode" || return 1
	for try in 1 2 3; do
		port=$((port + 10))
		a=(-s 65536 -D "${MRXE_DEMO_SECS:-4}" --report_gbits -F -p "$port")
		nsb tc qdisc del dev "$VETH_B" root 2>/dev/null
		[ "$loss" = 0 ] ||
			nsb tc qdisc add dev "$VETH_B" root netem loss "$loss%" || return 1
		r0=$(stat_of "$NS_B" "$DEV_B" retrans_pkts)
		nsa timeout 60 ib_write_bw -d "$DEV_A" -x "$gid_a" "${a[@]}" > /tmp/hsrv.log 2>&1 &
		sp=$!
		for _ in $(seq 30); do
			o=$(nsb timeout 60 ib_write_bw -d "$DEV_B" -x "$gid_b" "${a[@]}" "$IP_A" 2>&1) && break
			echo "$o" | grep -q "Couldn't connect to" || break
			sleep 1
		done
		wait $sp
		[ -n "${MRXE_DEMO_DEBUG:-}" ] && { echo "--- client"; echo "$o"; echo "--- server"; cat /tmp/hsrv.log; } >&2
		g=$(echo "$o" | awk '$1 == 65536 { print $4 }' | tail -n1)
		r1=$(stat_of "$NS_B" "$DEV_B" retrans_pkts)
		d=$(netem_drops)
		nsb tc qdisc del dev "$VETH_B" root 2>/dev/null
		[ -n "$g" ] || return 1
		awk -v g="$g" 'BEGIN { exit !(g + 0 > 0) }' && break
		echo "  ($mode, loss $loss%: perftest reported $g Gb/s, its clock estimate failed: again)" >&2
	done
	echo "$g $((r1 - r0)) $d"
}
if [ -x "$CTL" ] && [ "${MRXE_DEMO_HEADLINE:-1}" = 1 ]; then
	step "headline: standard RoCEv2 vs MetaRoCE, ib_write_bw 64 KiB at 0% and 1% loss (${MRXE_DEMO_SECS:-4} s each)"
	declare -A H
	port=18600
	for mode in standard metaroce; do
		for loss in 0 1; do
			port=$((port + 100))
			H[$mode.$loss]=$(headline_run "$mode" "$loss" "$port") ||
				H[$mode.$loss]="- - -"
			echo "  $mode, loss $loss%: Gb/s retransmitted dropped = ${H[$mode.$loss]}"
		done
	done
	nsa "$CTL" dev set "$DEV_A" mode auto
	nsb "$CTL" dev set "$DEV_B" mode auto
	echo
	printf '| %-9s | %-13s | %-13s | %-8s | %-27s |\n' mode "Gb/s, 0% loss" "Gb/s, 1% loss" "kept" "retransmitted / lost at 1%"
	printf '|%s|%s|%s|%s|%s|\n' ----------- --------------- --------------- ---------- -----------------------------
	for mode in standard metaroce; do
		read -r g0 _ _ <<< "${H[$mode.0]}"
		read -r g1 rt dr <<< "${H[$mode.1]}"
		kept=$(awk -v a="$g1" -v b="$g0" 'BEGIN { if (b + 0 > 0 && a != "-") printf "%.2f", a / b; else print "-" }')
		ratio=$(awk -v r="$rt" -v d="$dr" 'BEGIN { if (d + 0 > 0) printf "%d / %d = %.2f", r, d, r / d; else print "-" }')
		printf '| %-9s | %-13s | %-13s | %-8s | %-27s |\n' "$mode" "$g0" "$g1" "$kept" "$ratio"
	done
	echo "(one run in this VM under TCG: absolute Gb/s mean little, the ratios are the point)"
	ran+=("headline: standard vs MetaRoCE at 0% / 1% loss")
fi
summary
}
