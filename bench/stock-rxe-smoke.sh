#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stock rdma_rxe baseline / smoke test of the two-guest lab VM: boots two
# guests joined by one virtual Ethernet link, puts stock rxe on eth0 in each
# and runs ib_write_bw (and with --read, ib_read_bw) from guest 2 to guest 1.
#
#   bench/stock-rxe-smoke.sh [--read] [-s BYTES] [-D SECS]
#
# Prints the perftest report of both sides and a line
#	RESULT stock-rxe ib_write_bw size=65536 gbps=0.13
# Exit status non-zero if the transfer failed.
# The body is one brace group: bash parses it completely before running it,
# so editing this file while runs are in progress cannot break them.
{
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [ -z "${MRXE_VM_ROLE:-}" ]; then
	exec "$REPO/tools/labvm/vm-run.sh" --two --timeout 600 -- \
		"$REPO/bench/stock-rxe-smoke.sh" "$@"
fi

# ------------------------------------------------------------ in a guest --
size=65536 secs=5 tests=(ib_write_bw)
while [ $# -gt 0 ]; do
	case "$1" in
	--read) tests+=(ib_read_bw) ;;
	-s) size=$2; shift ;;
	-D) secs=$2; shift ;;
	*) echo "unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done

self=10.77.0.$MRXE_VM_ROLE
modprobe rdma_rxe || exit 1
rdma link add rxe0 type rxe netdev eth0 || exit 1
rdma link show

# GID index of our IPv4 address (RoCE v2, ::ffff:a.b.c.d).
want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${self//./ })
find_gidx() {
	local i d=/sys/class/infiniband/rxe0/ports/1
	for i in $(seq 0 15); do
		[ "$(cat $d/gids/$i 2>/dev/null)" = "$want" ] &&
			[ "$(cat $d/gid_attrs/types/$i 2>/dev/null)" = "RoCE v2" ] &&
			{ echo "$i"; return 0; }
	done
	return 1
}
gidx=
for _ in $(seq 20); do
	gidx=$(find_gidx) && break
	sleep 0.5
done
[ -n "$gidx" ] || { echo "no RoCE v2 GID for $self"; exit 1; }
echo "rxe0 GID index $gidx ($want)"

rc=0
port=18515
for t in "${tests[@]}"; do
	port=$((port + 1))
	args=(-d rxe0 -x "$gidx" -s "$size" -D "$secs" -p "$port" -F)
	if [ "$MRXE_VM_ROLE" = 1 ]; then
		echo "== $t server"
		timeout 120 "$t" "${args[@]}" || rc=1
	else
		echo "== $t client -> $MRXE_PEER_IP"
		ok=0
		for _ in $(seq 30); do
			out=$(timeout 120 "$t" "${args[@]}" "$MRXE_PEER_IP" 2>&1) && { ok=1; break; }
			# The server may not listen yet: retry only connection failures.
			echo "$out" | grep -q "Couldn't connect to" || break
			sleep 1
		done
		echo "$out"
		[ $ok = 1 ] || { rc=1; continue; }
		gbps=$(echo "$out" | awk -v size="$size" -f "$REPO/bench/perftest-bw.awk")
		echo "RESULT stock-rxe $t size=$size gbps=${gbps:-?}"
		[ -n "$gbps" ] || rc=1
	fi
done
exit $rc
}
