#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Does stock rdma_rxe work across network namespaces on the booted kernel?
# Inside ONE lab guest: namespaces A and B joined by a veth pair, rxe0 on
# the A end and rxe1 on the B end, then ibv_rc_pingpong (RC SEND) and
# ibv_ud_pingpong from A to B.  Also prints the device capabilities that
# differ between kernel lines (ODP, atomic write, flush).
#
#   tools/labvm/vm-run.sh [--line 6.12] -- bench/stock-rxe-netns.sh
#
# Prints "RESULT stock-rxe netns rc=PASS|FAIL ud=PASS|FAIL".
set -uo pipefail
[ "${MRXE_VM:-}" = 1 ] || { echo "run inside the lab VM (tools/labvm/vm-run.sh)" >&2; exit 2; }

modprobe rdma_rxe || exit 1
ip netns add rxa && ip netns add rxb || exit 1
ip link add va netns rxa type veth peer name vb netns rxb
ip -n rxa addr add 192.168.79.1/24 dev va
ip -n rxb addr add 192.168.79.2/24 dev vb
ip -n rxa link set va up; ip -n rxb link set vb up
ip -n rxa link set lo up; ip -n rxb link set lo up
ip netns exec rxa rdma link add rxe0 type rxe netdev va || exit 1
ip netns exec rxb rdma link add rxe1 type rxe netdev vb || exit 1
rdma link show
sleep 1
gid_of() {	# DEV IPV4 -> GID index of ::ffff:IPV4
	local d=/sys/class/infiniband/$1/ports/1/gids i
	for i in $(seq 0 15); do
		case "$(cat "$d/$i" 2>/dev/null)" in
		*"$(printf '%02x%02x:%02x%02x' $(echo "$2" | tr . ' '))") echo "$i"; return ;;
		esac
	done
	echo 1
}
ga=$(gid_of rxe0 192.168.79.1)
gb=$(gid_of rxe1 192.168.79.2)
echo "gid index: rxe0 $ga, rxe1 $gb"
ibv_devinfo -d rxe0 -v | grep -iE 'odp|atomic|flush|fw_ver|max_mr_size' | head -20

pingpong() {	# NAME PROG ARGS...
	local name=$1 prog=$2 rc
	shift 2
	ip netns exec rxb timeout 30 "$prog" -d rxe1 -g "$gb" "$@" > /tmp/srv.log 2>&1 &
	local srv=$!
	sleep 2
	ip netns exec rxa timeout 25 "$prog" -d rxe0 -g "$ga" "$@" 192.168.79.2 > /tmp/cli.log 2>&1
	rc=$?
	wait "$srv"
	[ $? = 0 ] && [ $rc = 0 ] && { echo PASS; return; }
	echo "$name: client rc $rc" >&2
	tail -n 3 /tmp/cli.log /tmp/srv.log >&2
	echo FAIL
}
rc=$(pingpong rc ibv_rc_pingpong -n 100)
ud=$(pingpong ud ibv_ud_pingpong -n 100)
echo "RESULT stock-rxe netns rc=$rc ud=$ud"
ip netns del rxa; ip netns del rxb
