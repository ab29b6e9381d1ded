#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A real ECMP fabric inside one lab guest, for the multipath tests
# (mrxe_multipath.sh) and bench/multipath.sh.  Source after lib.sh and
# mrxe_xfer_lib.sh.
#
#   NS_B (client, mrxe1) -- R1 ==== N parallel veth links ==== R2 -- NS_A
#   10.77.2.1        .254  p1..pN  10.78.i.1 <-> 10.78.i.2  q1..qN  (mrxe0)
#                                                         .254  10.77.1.1
#
# R1 holds an IPv4 multipath route to 10.77.1.0/24 over every link with
# L4 hashing (net.ipv4.fib_multipath_hash_policy=1, per netns), so UDP
# flows with different source ports take different links (Linux's own
# ECMP: the hash is seeded at random per boot, so which port takes which
# link is found out with probes, ecmp_ports_links).  R2 returns everything
# over link 1.  Every link direction R1 -> R2 gets a tbf (ECMP_RATE) so the
# link, not the guest's CPU, is the bottleneck; per-link counters are R1's
# pN tx_packets.
#
# Sets the variables mrxe_xfer_lib.sh uses (NS_A/NS_B, IP_A/IP_B, DEV_A/
# DEV_B, GID_A/GID_B, SRV_IP), so verify_run and xfer_pair work unchanged:
# the server (A) is the far end, the client (B) sends its requests over
# the fabric.

ECMP_R1=mrxe-r1-$$
ECMP_R2=mrxe-r2-$$
ECMP_RATE=${MRXE_ECMP_RATE:-16mbit}
ECMP_QUEUE=${MRXE_ECMP_QUEUE:-100ms}
ECMP_N=0
MRXECTL=$MRXE_REPO/build/mrxectl

# ecmp_link_qdisc I: the link's normal qdisc (tbf at ECMP_RATE; with
# MRXE_ECMP_AQM=ecn its queue is an fq_codel that marks CE on ECT packets,
# as a datacenter switch marks ECN, instead of tbf's 100 ms drop-tail FIFO)
ecmp_link_qdisc() {
	ip netns exec "$ECMP_R1" tc qdisc replace dev "p$1" root handle 1: \
		tbf rate "$ECMP_RATE" burst 16kb latency "$ECMP_QUEUE" || return 1
	[ "${MRXE_ECMP_AQM:-}" = ecn ] || return 0
	ip netns exec "$ECMP_R1" tc qdisc replace dev "p$1" parent 1:1 handle 10: \
		fq_codel ecn target 2ms interval 20ms
}

# ecmp_setup N [NETDEV_MTU]: the fabric with N links and both mrxe devices.
ecmp_setup() {
	local n=$1 mtu=${2:-1500} i nh=()
	ECMP_N=$n
	IP_A=10.77.1.1
	IP_B=10.77.2.1
	mrxe_require_module
	mrxe_del_all_links || true
	modprobe veth 2>/dev/null
	modprobe sch_tbf 2>/dev/null || true
	modprobe sch_fq_codel 2>/dev/null || true
	modprobe sch_netem 2>/dev/null || true
	for ns in "$NS_A" "$NS_B" "$ECMP_R1" "$ECMP_R2"; do
		ip netns add "$ns" || return 1
		ip -n "$ns" link set lo up
	done
	ip link add "$VETH_A" netns "$NS_A" type veth peer name ra netns "$ECMP_R2" || return 1
	ip link add "$VETH_B" netns "$NS_B" type veth peer name rb netns "$ECMP_R1" || return 1
	ip -n "$NS_A" addr add "$IP_A/24" dev "$VETH_A"
	ip -n "$ECMP_R2" addr add 10.77.1.254/24 dev ra
	ip -n "$NS_B" addr add "$IP_B/24" dev "$VETH_B"
	ip -n "$ECMP_R1" addr add 10.77.2.254/24 dev rb
	for i in $(seq 1 "$n"); do
		ip link add "p$i" netns "$ECMP_R1" type veth peer name "q$i" netns "$ECMP_R2" || return 1
		ip -n "$ECMP_R1" addr add "10.78.$i.1/24" dev "p$i"
		ip -n "$ECMP_R2" addr add "10.78.$i.2/24" dev "q$i"
		ip -n "$ECMP_R1" link set "p$i" mtu "$mtu" up
		ip -n "$ECMP_R2" link set "q$i" mtu "$mtu" up
		nh+=(nexthop via "10.78.$i.2" dev "p$i")
	done
	ip -n "$NS_A" link set "$VETH_A" mtu "$mtu" up
	ip -n "$NS_B" link set "$VETH_B" mtu "$mtu" up
	ip -n "$ECMP_R2" link set ra mtu "$mtu" up
	ip -n "$ECMP_R1" link set rb mtu "$mtu" up
	# forwarding, and L4 hashing for the routes' ECMP in both directions
	# (one sysctl per router: each namespace exec costs a process start)
	ip netns exec "$ECMP_R1" sysctl -qw net.ipv4.ip_forward=1 \
		net.ipv4.fib_multipath_hash_policy=1 || return 1
	ip netns exec "$ECMP_R2" sysctl -qw net.ipv4.ip_forward=1 \
		net.ipv4.fib_multipath_hash_policy=1 || return 1
	if [ "$n" -gt 1 ]; then
		ip -n "$ECMP_R1" route add 10.77.1.0/24 "${nh[@]}" || return 1
	else
		ip -n "$ECMP_R1" route add 10.77.1.0/24 via 10.78.1.2 dev p1 || return 1
	fi
	# the reverse direction (ACKs, READ responses) is ECMP as well, as in
	# a Clos fabric; no rate limit there (the data direction is measured)
	if [ "$n" -gt 1 ]; then
		ip -n "$ECMP_R2" route add 10.77.2.0/24 $(for i in $(seq 1 "$n"); do
			echo nexthop via "10.78.$i.1" dev "q$i"; done) || return 1
	else
		ip -n "$ECMP_R2" route add 10.77.2.0/24 via 10.78.1.1 dev q1 || return 1
	fi
	ip -n "$NS_A" route add default via 10.77.1.254
	ip -n "$NS_B" route add default via 10.77.2.254
	for i in $(seq 1 "$n"); do
		ecmp_link_qdisc "$i" || return 1
	done
	xfer_links_up || return 1
	wait_for 10 port_state_is "$DEV_A" ACTIVE || return 1
	wait_for 10 port_state_is "$DEV_B" ACTIVE || return 1
	SRV_IP=$IP_A
	ip netns exec "$NS_B" ping -c1 -W5 "$IP_A" > /dev/null ||
		{ echo "no IP connectivity over the fabric"; return 1; }
	echo "ECMP fabric: $DEV_B ($IP_B) -> R1 => $n x $ECMP_RATE links => R2 -> $DEV_A ($IP_A)"
}

ecmp_cleanup() {
	mrxe_del_all_links || true
	local ns
	for ns in "$NS_A" "$NS_B" "$ECMP_R1" "$ECMP_R2"; do
		ip netns del "$ns" 2>/dev/null || true
	done
	return 0
}

# ecmp_counters: "tx1 tx2 ... txN", the packets R1 sent on each link
# (towards A), read in one process
ecmp_counters() {
	local i out files=()
	for ((i = 1; i <= ECMP_N; i++)); do
		files+=("/sys/class/net/p$i/statistics/tx_packets")
	done
	out=$(ip netns exec "$ECMP_R1" cat "${files[@]}") || return 1
	echo "${out//$'\n'/ }"
}

# ecmp_delta BEFORE AFTER: per-link difference of two ecmp_counters lines
ecmp_delta() {
	local -a a b d=()
	local i
	read -r -a a <<< "$1"
	read -r -a b <<< "$2"
	for i in "${!a[@]}"; do
		d+=($((b[i] - a[i])))
	done
	echo "${d[*]}"
}

# ecmp_ports_links SPORT...: "SPORT:LINK ..." - the link (1..N) that UDP
# SPORT -> A:4791 takes, found with 40 probe datagrams from B per port while
# the fabric is otherwise idle (mrxe on A drops them as malformed); LINK is
# 0 when no link moved 40 within 2 s.  One python process for all ports: it
# enters B's namespace to send and R1's to read the links' counters
# (/proc/self/net/dev follows the caller's namespace), instead of a
# namespace exec, a python start and a fixed sleep per port and counter
# read (about 1.8 s per port under TCG, 0.1-0.3 s so).
ecmp_ports_links() {
	python3 - "$NS_B" "$ECMP_R1" "$ECMP_N" "$IP_B" "$IP_A" "$@" <<'EOF'
import ctypes, os, socket, sys, time

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000


def enter(ns):
    fd = os.open("/run/netns/" + ns, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), ns)
    finally:
        os.close(fd)


ns_b, r1, n, ip_b, ip_a = sys.argv[1:6]
links = ["p%d" % i for i in range(1, int(n) + 1)]


def tx():
    enter(r1)
    c = {}
    with open("/proc/self/net/dev") as f:
        for line in f.readlines()[2:]:
            name, rest = line.split(":", 1)
            c[name.strip()] = int(rest.split()[9])
    return [c[l] for l in links]


out = []
for port in map(int, sys.argv[6:]):
    enter(ns_b)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((ip_b, port))
    before = tx()
    for _ in range(40):
        s.sendto(b"mrxe-ecmp-probe", (ip_a, 4791))
    s.close()
    link, end = 0, time.monotonic() + 2
    while not link and time.monotonic() < end:
        time.sleep(0.02)
        d = [a - b for a, b in zip(tx(), before)]
        link = next((i + 1 for i, x in enumerate(d) if x >= 40), 0)
    out.append("%d:%d" % (port, link))
print(" ".join(out))
EOF
}

# ecmp_blackhole I / ecmp_restore I: netem loss 100% on link I (R1 -> R2),
# the route stays up; back to the tbf.
ecmp_blackhole() {
	ip netns exec "$ECMP_R1" tc qdisc replace dev "p$1" root netem loss 100%
}

ecmp_restore() {
	ecmp_link_qdisc "$1"
}

# ecmp_blackhole_rev I / ecmp_restore_rev I: the same for link I's reverse
# direction (R2 -> R1: the server's ACKs and READ responses)
ecmp_blackhole_rev() {
	ip netns exec "$ECMP_R2" tc qdisc replace dev "q$1" root netem loss 100%
}

ecmp_restore_rev() {
	ip netns exec "$ECMP_R2" tc qdisc del dev "q$1" root 2>/dev/null || true
}

# ecmp_dropped_rev I: packets the reverse black hole of link I dropped
ecmp_dropped_rev() {
	ip netns exec "$ECMP_R2" tc -s qdisc show dev "q$1" |
		sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | awk '{ n += $1 } END { print n + 0 }'
}

# ecmp_a_rx_bytes: bytes R2 forwarded to the server (A) so far
ecmp_a_rx_bytes() {
	ip netns exec "$ECMP_R2" cat /sys/class/net/ra/statistics/tx_bytes
}

# ecmp_dropped I: packets the qdisc of link I dropped
ecmp_dropped() {
	ip netns exec "$ECMP_R1" tc -s qdisc show dev "p$1" |
		sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | awk '{ n += $1 } END { print n + 0 }'
}

# ecmp_paths_poll FILE: in the background, keep FILE.raw the newest
# `mrxectl -j qp show DEV_B` that lists a QP with paths while a transfer
# runs, and FILE.sawdead.raw the newest one showing a DEAD path;
# ecmp_paths_stop ends it and writes FILE and FILE.sawdead: those
# restricted to the RC QPs with paths (ecmp_paths_filter).  No python in
# the loop: under TCG and host load one start takes seconds, and the last
# snapshot of a short transfer was then taken long before its end.
ecmp_paths_poll() {
	local f=$1
	ECMP_POLL_FILE=$f
	rm -f "$f" "$f.raw" "$f.sawdead" "$f.sawdead.raw" "$f.failed"
	poll_start 0.2 ecmp_paths_poll_once "$f"
	ECMP_POLL_PID=$POLL_PID
	ECMP_POLL_STOP=$POLL_STOP
}

ecmp_paths_poll_once() {
	local f=$1 rc=0
	ip netns exec "$NS_B" "$MRXECTL" -j qp show "$DEV_B" > "$f.new" 2>"$f.err" || rc=$?
	# for a failure report: what the last poll saw
	{ echo "poll at $(date +%T.%N) rc $rc"; head -c 2000 "$f.new" "$f.err"; } > "$f.last"
	[ $rc = 0 ] || cp "$f.last" "$f.failed"
	# an RC QP with its paths (the GSI QP lists its one path too, and an
	# RC QP being destroyed lists none: a snapshot taken after the
	# transfer's QP went must not replace the last one with it; 6.12 lab
	# run: "no path snapshot" after a transfer that passed)
	if grep -Eq '"type": ?"RC"[^]]*"path_list": ?\[\{' "$f.new"; then
		grep -Eq '"state": ?"dead"' "$f.new" && cp "$f.new" "$f.sawdead.raw"
		mv "$f.new" "$f.raw"
	fi
	return 0
}

# ecmp_paths_filter RAW: the RC QPs with paths of a snapshot (JSON list;
# the device also lists its GSI QP)
ecmp_paths_filter() {
	python3 -c 'import json,sys
d = [q for q in json.load(open(sys.argv[1])) if q.get("type") == "RC" and q.get("path_list")]
if d: print(json.dumps(d))' "$1"
}

ecmp_paths_stop() {
	local f=${ECMP_POLL_FILE:-}
	POLL_PID=${ECMP_POLL_PID:-}
	POLL_STOP=${ECMP_POLL_STOP:-}
	poll_stop
	ECMP_POLL_PID=
	[ -n "$f" ] || return 0
	ECMP_POLL_FILE=
	[ -s "$f.raw" ] && ecmp_paths_filter "$f.raw" > "$f"
	[ -s "$f.sawdead.raw" ] && ecmp_paths_filter "$f.sawdead.raw" > "$f.sawdead"
	if [ ! -s "$f" ]; then
		rm -f "$f"
		echo "path poller: no snapshot with an RC QP's paths; last poll:"
		sed 's/^/  /' "$f.last" 2>/dev/null
	fi
	if [ -s "$f.failed" ]; then
		echo "path poller: a poll failed (the last such):"
		sed 's/^/  /' "$f.failed"
	fi
	[ -s "$f.sawdead" ] || rm -f "$f.sawdead"
	return 0
}
