#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside each of the two lab-VM guests started by bench/run.sh.
# Guest 1 (10.77.0.1) runs the perftest servers, guest 2 the clients and
# writes the CSV.  For each transport (stock rdma_rxe, then mrxe standard
# mode) and each netem loss rate, ib_write_bw and ib_read_bw run with
# -s $BENCH_SIZE -D $BENCH_DURATION.  Loss is applied on the data direction
# only: the client's egress for WRITE, the server's egress for READ.
#
# Steps are synchronised with one-shot TCP barriers on port 19000+N.
set -u
REPO=$(cd "$(dirname "$0")/.." && pwd)
ROLE=${MRXE_VM_ROLE:?run by bench/run.sh inside the lab VM}
PEER=${MRXE_PEER_IP:?two-guest mode needed}
SELF=10.77.0.$ROLE
OUT=${MRXE_RESULTS:-/tmp}
SIZE=${MRXE_BENCH_SIZE:-65536}
DUR=${MRXE_BENCH_DURATION:-5}
LOSSES=${MRXE_BENCH_LOSS:-0 0.1 1}
TRANSPORTS=${MRXE_BENCH_TRANSPORTS:-rxe mrxe}
TESTS=${MRXE_BENCH_TESTS:-ib_write_bw ib_read_bw}
CSV=$OUT/bench.csv
step=0

log() { echo "[vm$ROLE] $*"; }

# stats TAG: the device's cumulative counters after a step (diagnostics:
# retransmits, NAKs, drops), in $OUT/TAG.stats next to perftest's output.
stats() {
	[ -n "${DEV:-}" ] || return 0
	rdma statistic show link "$DEV/1" > "$OUT/$1.stats" 2>&1 || true
	tc -s qdisc show dev eth0 >> "$OUT/$1.stats" 2>&1 || true
	[ -z "${MRXE_BENCH_INSMOD_ARGS:-}" ] || dmesg > "$OUT/$1.$step.dmesg" 2>&1 || true
}

# barrier: both guests call it in the same order; guest 1 serves, guest 2
# connects (retrying) - returns when both reached the same step.
barrier() {
	step=$((step + 1))
	local port=$((19000 + step))
	if [ "$ROLE" = 1 ]; then
		timeout 300 python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(1)
c, _ = s.accept(); c.sendall(b"go"); c.close()' "$port"
	else
		timeout 300 python3 -c '
import socket, sys, time
while True:
    try:
        c = socket.create_connection((sys.argv[1], int(sys.argv[2])), 1)
        c.recv(2); break
    except OSError:
        time.sleep(0.1)' "$PEER" "$port"
	fi
}

gid_index() {
	local dev=$1 want f n
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${SELF//./ })
	for _ in $(seq 50); do
		for f in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
			[ "$(cat "$f" 2>/dev/null)" = "$want" ] || continue
			n=$(basename "$f")
			[ "$(cat /sys/class/infiniband/$dev/ports/1/gid_attrs/types/$n)" = "RoCE v2" ] &&
				{ echo "$n"; return 0; }
		done
		sleep 0.1
	done
	return 1
}

transport_up() {
	case $1 in
	rxe)
		modprobe rdma_rxe || return 1
		rdma link add rxe0 type rxe netdev eth0 || return 1
		DEV=rxe0
		unset RDMAV_DRIVERS ;;
	mrxe)
		[ -f "$REPO/build/rdma_mrxe.ko" ] && [ -f "$REPO/build/libmrxe-rdmav34.so" ] ||
			{ log "mrxe not built"; return 1; }
		for m in ib_core ib_uverbs udp_tunnel ip6_udp_tunnel; do modprobe $m; done
		insmod "$REPO/build/rdma_mrxe.ko" ${MRXE_BENCH_INSMOD_ARGS:-} || return 1
		rdma link add mrxe0 type mrxe netdev eth0 || return 1
		DEV=mrxe0
		export RDMAV_DRIVERS=$REPO/build/libmrxe ;;
	esac
	GID=$(gid_index "$DEV") || { log "no RoCEv2 GID on $DEV"; return 1; }
	log "$1: $DEV gid[$GID]"
}

transport_down() {
	rdma link delete "$DEV" 2>/dev/null
	case $1 in
	rxe) rmmod rdma_rxe 2>/dev/null ;;
	mrxe) rmmod rdma_mrxe 2>/dev/null ;;
	esac
	return 0
}

netem() {
	tc qdisc del dev eth0 root 2>/dev/null
	[ "$1" = 0 ] && return 0
	modprobe sch_netem
	tc qdisc add dev eth0 root netem loss "$1%"
}

[ "$ROLE" = 2 ] && echo "transport,test,loss_pct,size,duration_s,bw_avg_gbps,msg_rate_mpps,status" > "$CSV"
ip link set eth0 mtu 1500
port=18600
for tr in $TRANSPORTS; do
	ok=1
	transport_up "$tr" || ok=0
	barrier
	for t in $TESTS; do
		for loss in $LOSSES; do
			port=$((port + 1))
			# data direction: client sends WRITE data, server sends READ data
			if { [ "$t" = ib_read_bw ] && [ "$ROLE" = 1 ]; } ||
			   { [ "$t" != ib_read_bw ] && [ "$ROLE" = 2 ]; }; then
				netem "$loss"
			else
				netem 0
			fi
			if [ "$ROLE" = 1 ]; then
				spid=
				if [ $ok = 1 ]; then
					timeout $((DUR * 20 + 60)) $t -d "$DEV" -x "$GID" -p $port -F \
						-s "$SIZE" -D "$DUR" --report_gbits > "$OUT/$tr-$t-$loss.server" 2>&1 &
					spid=$!
					for _ in $(seq 100); do
						ss -Hltn "sport = :$port" | grep -q . && break
						sleep 0.1
					done
				fi
				barrier		# server ready
				barrier		# client done
				if [ -n "$spid" ]; then
					# give it a moment to finish on its own
					for _ in $(seq 50); do
						kill -0 $spid 2>/dev/null || break
						sleep 0.1
					done
					kill $spid 2>/dev/null
					wait $spid 2>/dev/null
				fi
				stats "$tr-$t-$loss"
			else
				barrier
				res=
				status=ok
				if [ $ok = 1 ]; then
					sleep 0.5
					timeout $((DUR * 20 + 60)) $t -d "$DEV" -x "$GID" -p $port -F \
						-s "$SIZE" -D "$DUR" --report_gbits "$PEER" > "$OUT/$tr-$t-$loss.client" 2>&1 ||
						status="exit $?"
					# data row: bytes iterations peak avg msgrate
					res=$(awk -v s="$SIZE" '$1 == s && NF >= 5 { print $4 "," $5 }' "$OUT/$tr-$t-$loss.client" | tail -n1)
				else
					status="transport unavailable"
				fi
				[ -n "$res" ] || { res=","; [ "$status" = ok ] && status="no result"; }
				# perftest -D prints 0 when nothing completed in the
				# measuring window (a stall): not "ok"
				if [ "$status" = ok ] &&
				   awk -v b="${res%%,*}" 'BEGIN { exit !(b + 0 == 0) }'; then
					status="stalled (0 Gb/s)"
				fi
				echo "$tr,$t,$loss,$SIZE,$DUR,$res,$status" >> "$CSV"
				stats "$tr-$t-$loss"
				log "$tr $t loss $loss%: ${res%%,*} Gb/s ($status)"
				barrier		# client done
			fi
		done
	done
	netem 0
	transport_down "$tr"
	barrier
done
[ "$ROLE" = 2 ] && cat "$CSV"
exit 0
