#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside each of the two lab-VM guests started by bench/run.sh.
# Guest 1 (10.77.0.1) runs the perftest servers, guest 2 the clients and
# writes the CSV.  For each transport (stock rdma_rxe, mrxe in standard
# RoCEv2 mode, mrxe in MetaRoCE mode: `mrxectl dev set mrxe0 mode ...`
# before any QP exists) and each netem loss rate, the bandwidth tests run
# with -s $BENCH_SIZE -D $BENCH_DURATION and the latency tests with
# -s 64 -n $BENCH_LAT_ITERS.  Loss is applied on the data direction only:
# the client's egress for WRITE, the server's egress for READ.  For
# ib_write_bw the client also records netem's drop count and its device's
# retrans_pkts delta (the requester is the data sender): retransmitted
# packets per lost packet.
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
TRANSPORTS=${MRXE_BENCH_TRANSPORTS:-rxe mrxe mrxe-meta}
TESTS=${MRXE_BENCH_TESTS:-ib_write_bw ib_read_bw}
LAT_ITERS=${MRXE_BENCH_LAT_ITERS:-1000}
LAT_LOSSES=${MRXE_BENCH_LAT_LOSS:-0 1}	# latency tests only at these
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
	mrxe|mrxe-meta)
		[ -f "$REPO/build/rdma_mrxe.ko" ] && [ -f "$REPO/build/libmrxe-rdmav34.so" ] &&
			[ -x "$REPO/build/mrxectl" ] || { log "mrxe not built"; return 1; }
		for m in ib_core ib_uverbs udp_tunnel ip6_udp_tunnel; do modprobe $m; done
		insmod "$REPO/build/rdma_mrxe.ko" ${MRXE_BENCH_INSMOD_ARGS:-} || return 1
		rdma link add mrxe0 type mrxe netdev eth0 || return 1
		DEV=mrxe0
		# the device default decides the mode of perftest's QPs
		local mode=standard
		[ "$1" = mrxe-meta ] && mode=metaroce
		"$REPO/build/mrxectl" dev set mrxe0 mode "$mode" || return 1
		log "$1: $("$REPO/build/mrxectl" dev show mrxe0 | head -n 3 | tr '\n' ' ')"
		export RDMAV_DRIVERS=$REPO/build/libmrxe ;;
	esac
	GID=$(gid_index "$DEV") || { log "no RoCEv2 GID on $DEV"; return 1; }
	log "$1: $DEV gid[$GID]"
}

transport_down() {
	rdma link delete "$DEV" 2>/dev/null
	case $1 in
	rxe) rmmod rdma_rxe 2>/dev/null ;;
	mrxe|mrxe-meta) rmmod rdma_mrxe 2>/dev/null ;;
	esac
	return 0
}

netem() {
	tc qdisc del dev eth0 root 2>/dev/null
	[ "$1" = 0 ] && return 0
	modprobe sch_netem
	tc qdisc add dev eth0 root netem loss "$1%"
}

# counter NAME: the device's counter (0 when absent)
counter() {
	rdma statistic show link "$DEV/1" 2>/dev/null | tr ' ' '\n' |
		awk -v n="$1" 'prev == n { print; f = 1; exit } { prev = $0 } END { if (!f) print 0 }'
}

# netem_dropped: packets dropped by the netem qdisc on eth0 (this step's)
netem_dropped() {
	tc -s qdisc show dev eth0 | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | head -n1
}

# perftest ARGS for test $1
test_args() {
	case $1 in
	*_lat) echo "-s 64 -n $LAT_ITERS" ;;
	*) echo "-s $SIZE -D $DUR --report_gbits" ;;
	esac
}

[ "$ROLE" = 2 ] && echo "transport,test,loss_pct,size,duration_s,bw_avg_gbps,msg_rate_mpps,lat_p50_us,lat_p99_us,netem_dropped,retrans_pkts,retrans_per_lost,status" > "$CSV"
ip link set eth0 mtu 1500
port=18600
for tr in $TRANSPORTS; do
	ok=1
	transport_up "$tr" || ok=0
	barrier
	for t in $TESTS; do
		for loss in $LOSSES; do
			case $t in
			*_lat) case " $LAT_LOSSES " in *" $loss "*) ;; *) continue ;; esac ;;
			esac
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
					# shellcheck disable=SC2046
					timeout $((DUR * 20 + 60)) $t -d "$DEV" -x "$GID" -p $port -F \
						$(test_args "$t") > "$OUT/$tr-$t-$loss.server" 2>&1 &
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
				lat=, drops= rtx= rpl=
				if [ $ok = 1 ]; then
					sleep 0.5
					rtx0=$(counter retrans_pkts)
					# shellcheck disable=SC2046
					timeout $((DUR * 20 + 60)) $t -d "$DEV" -x "$GID" -p $port -F \
						$(test_args "$t") "$PEER" > "$OUT/$tr-$t-$loss.client" 2>&1 ||
						status="exit $?"
					case $t in
					*_lat)
						# bytes iters t_min t_max t_typical t_avg t_stdev 99% 99.9%
						lat=$(awk '$1 == 64 && NF >= 8 { print $5 "," $8 }' "$OUT/$tr-$t-$loss.client" | tail -n1)
						res=,
						[ -n "$lat" ] || { lat=,; [ "$status" = ok ] && status="no result"; } ;;
					*)
						# data row: bytes iterations peak avg msgrate
						res=$(awk -v s="$SIZE" '$1 == s && NF >= 5 { print $4 "," $5 }' "$OUT/$tr-$t-$loss.client" | tail -n1) ;;
					esac
					# stock rxe has no retrans_pkts counter
					if [ "$t" = ib_write_bw ] && [ "$tr" != rxe ]; then
						drops=$(netem_dropped)
						rtx=$(( $(counter retrans_pkts) - rtx0 ))
						[ "${drops:-0}" -gt 0 ] &&
							rpl=$(awk -v r="$rtx" -v d="$drops" 'BEGIN { printf "%.3f", r / d }')
					fi
				else
					status="transport unavailable"
				fi
				[ -n "$res" ] || { res=","; [ "$status" = ok ] && status="no result"; }
				# perftest prints 0 Gb/s when its cycle-clock estimate
				# failed under TCG (it says "Correlation coefficient"),
				# or when nothing completed in the window (a stall):
				# not "ok" either way, and told apart
				if [ "$status" = ok ] && [ "$res" != , ] &&
				   awk -v b="${res%%,*}" 'BEGIN { exit !(b + 0 == 0) }'; then
					if grep -q "Correlation coefficient" "$OUT/$tr-$t-$loss.client"; then
						status="perftest clock estimate failed (0 Gb/s)"
					else
						status="stalled (0 Gb/s)"
					fi
				fi
				echo "$tr,$t,$loss,$SIZE,$DUR,$res,$lat,$drops,$rtx,$rpl,$status" >> "$CSV"
				stats "$tr-$t-$loss"
				log "$tr $t loss $loss%: ${res%%,*} Gb/s lat p50,p99 $lat us drops $drops retrans $rtx ($status)"
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
