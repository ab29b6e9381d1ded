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
summary
}
