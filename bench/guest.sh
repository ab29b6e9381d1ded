#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside each of the two lab-VM guests started by bench/run.sh.
# Guest 1 (10.77.0.1) runs the perftest servers, guest 2 the clients and
# writes the CSVs.  For each transport (stock rdma_rxe, mrxe in standard
# RoCEv2 mode, mrxe in MetaRoCE mode: `mrxectl dev set mrxe0 mode ...`
# before any QP exists) it measures the points that points() lists for
# MRXE_BENCH_SCENARIOS (loss sweep on the data direction, ACK/response
# direction, reordering and duplication, latency, message sizes, QP
# counts).  netem goes on one end: the data sender's egress (the client for
# WRITE/SEND, the server for READ) or, for "ack" points, the other end.
# Bandwidth points use -s SIZE -D $BENCH_DURATION -q QPS, latency points
# -s 64 -n $BENCH_LAT_ITERS -H (every sample goes to lat.csv for CDFs).
# Each row has netem's drops on both ends (the server's come with a
# barrier) and, for mrxe, the packets sent again: the client's
# retrans_pkts delta (the requester retransmits) for WRITE/SEND, the
# server's read_rsp_replayed delta (READ responses streamed again; a
# re-request packet asks for a run of them) for READ, with the drops.
# `bench/guest.sh --count` prints the number of points per transport.
#
# Steps are synchronised with TCP barriers on port 19000 (barrier()).
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
TESTS=${MRXE_BENCH_TESTS:-ib_write_bw ib_read_bw ib_send_bw}
SCENARIOS=${MRXE_BENCH_SCENARIOS:-loss ack reorder lat size qps}
ACK_TESTS=${MRXE_BENCH_ACK_TESTS:-ib_write_bw ib_read_bw}
ACK_LOSSES=${MRXE_BENCH_ACK_LOSS:-1 5}
LAT_TESTS=${MRXE_BENCH_LAT_TESTS:-ib_write_lat ib_read_lat}
LAT_ITERS=${MRXE_BENCH_LAT_ITERS:-1000}
LAT_LOSSES=${MRXE_BENCH_LAT_LOSS:-0 1}
SIZES=${MRXE_BENCH_SIZES:-4096 1048576 4194304}	# plus SIZE from "loss"
QPS=${MRXE_BENCH_QPS:-4 16}			# plus 1 from "loss"
CLOCK_TRIES=3
CSV=$OUT/bench.csv
LAT_CSV=$OUT/lat.csv
step=0

log() { echo "[vm$ROLE ${SECONDS}s] $*"; }
# MRXE_BENCH_TRACE=1: where a point's time goes (phase timestamps)
trace() { [ -z "${MRXE_BENCH_TRACE:-}" ] || echo "[vm$ROLE $EPOCHREALTIME] $*"; }

# stats TAG: the device's cumulative counters after a step (diagnostics:
# retransmits, NAKs, drops), in $OUT/TAG.stats next to perftest's output.
stats() {
	[ -n "${DEV:-}" ] || return 0
	# the hw_counters that `rdma statistic show link` prints, in its
	# format, read by the shell (rdma took 0.2-0.4 s a call under TCG)
	local f v line="link $DEV/1"
	for f in /sys/class/infiniband/"$DEV"/ports/1/hw_counters/*; do
		[ -f "$f" ] && read -r v < "$f" && line+=" ${f##*/} $v"
	done
	echo "$line " > "$OUT/$1.stats"
	tc -s qdisc show dev eth0 >> "$OUT/$1.stats" 2>&1 || true
	[ -z "${MRXE_BENCH_INSMOD_ARGS:-}" ] || dmesg > "$OUT/$1.$step.dmesg" 2>&1 || true
}

# barrier [VALUE | --after CMD | --send WORD]: both guests call it in the
# same order; guest 1 serves, guest 2 connects (retrying) - returns when
# both reached the same step.  Guest 1's VALUE (one word) ends up in
# guest 2's BARRIER_OUT; with --after, guest 1 runs the bash command CMD
# once guest 2 has arrived and sends what it prints (a value read after
# the other guest's step, in one barrier instead of two).  Guest 2's WORD
# (--send) ends up in guest 1's BARRIER_OUT.  Not in a subshell ($(...)):
# the steps are counted here.
#
# No process starts per step (a perl start cost 0.3-1 s under TCG, two
# barriers a point): guest 1 keeps one perl server (a coprocess) listening
# on BARRIER_PORT for the whole run and bash hands it each step; guest 2
# connects with bash's /dev/tcp and sends "STEP WORD", so a connection
# left over from a step guest 2 gave up on is told apart and dropped.  The
# connection crosses the point's netem: a lost SYN is resent by the
# kernel (a blocking connect), a refused one retried.
BARRIER_PORT=19000
BARRIER_TIMEOUT=300
barrier_server() {
	# shellcheck disable=SC2016
	coproc BARSRV { exec perl -MIO::Socket::INET -e '
$| = 1;
my $s = IO::Socket::INET->new(LocalPort => $ARGV[0], Listen => 16, ReuseAddr => 1)
	or die "barrier: listen on $ARGV[0]: $!\n";
# one request a step from bash: STEP US VALUE US CMD (US: 0x1f)
while (my $req = <STDIN>) {
	chomp $req;
	my ($step, $v, $cmd) = split /\x1f/, $req, 3;
	my ($c, $w);
	while (1) {
		$c = $s->accept or die "barrier: accept: $!\n";
		$w = <$c>;
		# guest 2 sends "STEP WORD\n"; anything else (no line, an older
		# step) is a connection it gave up on: take the next one
		if (defined $w && $w =~ /\A(\d+) ?(.*)\n\z/ && $1 == $step) {
			$w = $2;
			last;
		}
		close $c;
	}
	if (length $cmd) {
		open(my $p, "-|", "bash", "-c", $cmd)
			or die "barrier: bash: $!\n";
		local $/;
		$v = <$p> // "";
		close $p;
		$v =~ s/\s+$//;
	}
	print $c "go $v";
	close $c;
	print "ok $w\n";
}' "$BARRIER_PORT"; } 2>&1
}

barrier() {
	step=$((step + 1))
	local t0=$SECONDS rc=0 val="" cmd="" word="" reply="" conn=0
	BARRIER_OUT=
	case ${1:-} in
	--after) cmd=${2:-true} ;;
	--send) word=${2:-} ;;
	*) val=${1:-} ;;
	esac
	if [ "$ROLE" = 1 ]; then
		[ -n "${BARSRV_PID:-}" ] && kill -0 "$BARSRV_PID" 2>/dev/null || barrier_server
		printf '%s\x1f%s\x1f%s\n' "$step" "$val" "$cmd" >&"${BARSRV[1]}" || rc=$?
		if [ $rc = 0 ] && IFS= read -r -t "$BARRIER_TIMEOUT" reply <&"${BARSRV[0]}" &&
		   [ "${reply:0:2}" = ok ]; then
			BARRIER_OUT=${reply:3}
		else
			[ $rc = 0 ] && rc=1
			# the server still waits for this step: a new one next time
			[ -n "$reply" ] && echo "[vm$ROLE ${SECONDS}s] barrier server: $reply" >&2
			kill "$BARSRV_PID" 2>/dev/null
			wait "$BARSRV_PID" 2>/dev/null
			BARSRV_PID=
		fi
	else
		while :; do
			# shellcheck disable=SC2094
			{
				conn=1
				printf '%s %s\n' "$step" "$word" >&0
				IFS= read -r -d '' -t "$BARRIER_TIMEOUT" reply
			} 2>/dev/null <>"/dev/tcp/$PEER/$BARRIER_PORT"
			[ $conn = 1 ] && break
			[ $((SECONDS - t0)) -lt "$BARRIER_TIMEOUT" ] || { rc=124; break; }
			nap	# refused: guest 1's server is not up yet
		done
		if [ $rc = 0 ]; then
			# no "go": guest 1 did not finish this step (it failed)
			if [ "${reply:0:2}" = go ]; then
				BARRIER_OUT=${reply:3}
			else
				rc=3
			fi
		fi
	fi
	# a barrier that timed out or failed leaves the guests a step apart
	# until the other side's times out too: say so (stderr, not the value)
	[ $rc = 0 ] || echo "[vm$ROLE ${SECONDS}s] barrier $step failed (exit $rc) after $((SECONDS - t0)) s" >&2
	return $rc
}

gid_index() {
	local dev=$1 want f n
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${SELF//./ })
	for _ in $(seq 50); do
		# one grep over the table: a process per entry is slow under TCG
		for f in $(grep -lx "$want" /sys/class/infiniband/"$dev"/ports/1/gids/* 2>/dev/null); do
			n=${f##*/}
			[ "$(< /sys/class/infiniband/$dev/ports/1/gid_attrs/types/$n)" = "RoCE v2" ] &&
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
	mrxe|mrxe-meta|mrxe-auto)
		# MRXE_BENCH_KO: another build of the module (experiments)
		local ko=${MRXE_BENCH_KO:-$REPO/build/rdma_mrxe.ko}
		[ -f "$ko" ] && [ -f "$REPO/build/libmrxe-rdmav34.so" ] &&
			[ -x "$REPO/build/mrxectl" ] || { log "mrxe not built"; return 1; }
		for m in ib_core ib_uverbs udp_tunnel ip6_udp_tunnel; do modprobe $m; done
		insmod "$ko" ${MRXE_BENCH_INSMOD_ARGS:-} || return 1
		rdma link add mrxe0 type mrxe netdev eth0 || return 1
		DEV=mrxe0
		# the device default decides the mode of perftest's QPs
		local mode=standard
		[ "$1" = mrxe-meta ] && mode=metaroce
		[ "$1" = mrxe-auto ] && mode=auto
		# MRXE_BENCH_DEV_ARGS: more device settings (e.g. "window 256")
		# shellcheck disable=SC2086
		"$REPO/build/mrxectl" dev set mrxe0 mode "$mode" ${MRXE_BENCH_DEV_ARGS:-} || return 1
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
	mrxe|mrxe-meta|mrxe-auto) rmmod rdma_mrxe 2>/dev/null ;;
	esac
	return 0
}

# netem SPEC: netem on eth0 with SPEC's arguments ('_' for ' '); for -
# (lossless) a netem that does nothing, so that every point sends through
# the same qdisc: eth0's default fq_codel marks ECT packets CE when its
# own queue is 5 ms long, as TCG's virtio often makes it, and lossless
# points alone were cut by that (a MetaRoCE write_bw point ran at half
# rate after one mark, cc_rate_cuts 1, 2026-12-07); "del" restores it
netem() {
	tc qdisc del dev eth0 root 2>/dev/null
	[ "$1" = del ] && return 0
	# once: modprobe costs up to a second and a half a point under TCG
	[ -d /sys/module/sch_netem ] || modprobe sch_netem
	# shellcheck disable=SC2046
	tc qdisc add dev eth0 root netem $( [ "$1" = - ] || echo "${1//_/ }")
}

# counter NAME: the device's counter (0 when absent), from the port's
# hw_counters in sysfs (the values rdma statistic shows): read by the
# shell, not by three programs (about a second a call under TCG, two or
# three calls a point)
counter() {
	local v=0 f=/sys/class/infiniband/$DEV/ports/1/hw_counters/$1

	[ -r "$f" ] && read -r v < "$f"
	echo "${v:-0}"
}

# netem_dropped [STATS]: packets the netem qdisc on eth0 dropped (it is set
# up anew for every point, so this is the point's count); from the `tc -s`
# output that stats() saved in STATS when it is there (the traffic has
# stopped by then), else from tc
netem_dropped() {
	local out re='\(dropped ([0-9]+),'

	# one process (tc) at most, parsed by the shell: a pipe of four cost
	# about half a second a call under TCG
	if [ -n "${1:-}" ] && [ -r "$1" ]; then
		out=$(< "$1")
	else
		out=$(tc -s qdisc show dev eth0)
	fi
	[[ $out =~ $re ]] && echo "${BASH_REMATCH[1]}" || echo 0
}

# nap: 0.1 s without a process (sleep(1) is one fork and exec a call under
# TCG, ten a second while the perftest server it waits for starts): a read
# with a timeout on a FIFO that nobody writes.  In the guest's tmpfs:
# mkfifo on the 9p results share fails (ENXIO), and every nap was a sleep
NAP_FIFO=/dev/shm/.mrxe-bench-nap.$ROLE
rm -f "$NAP_FIFO"
mkfifo "$NAP_FIFO" && exec {NAP_FD}<>"$NAP_FIFO"
nap() {
	if [ -n "${NAP_FD:-}" ]; then
		read -r -t 0.1 -u "$NAP_FD" _
	else
		sleep 0.1
	fi
	return 0
}

# listening PORT: a TCP socket listens on PORT (IPv4 or IPv6), from
# /proc/net/tcp* by the shell: ss | grep ten times a second took CPU
# from the server it waited for (two processes a poll under TCG)
listening() {
	local hex f l st
	printf -v hex '%04X' "$1"
	for f in /proc/net/tcp /proc/net/tcp6; do
		[ -r "$f" ] || continue
		# sl local_address rem_address st ...; LISTEN is 0A
		while read -r _ l _ st _; do
			[ "${l##*:}" = "$hex" ] && [ "$st" = 0A ] && return 0
		done < "$f"
	done
	return 1
}

# start_server K: perftest server of the current point for clock try K
# (port + K), in the background (its PID goes to spids); returns once it
# listens
start_server() {
	local p=$((port + $1)) w

	# shellcheck disable=SC2086
	timeout $((DUR * 20 + 60)) $t -d "$DEV" -x "$GID" -p $p -F \
		$args > "$OUT/$tag.server.$1" 2>&1 &
	spids+=($!)
	for ((w = 0; w < 100; w++)); do
		listening "$p" && return 0
		nap
	done
	# not listening after 10 s: say where the processes are (the client
	# will fail to connect; this is what explains it)
	log "$tag: server $1 not listening on $p after 10 s; load $(< /proc/loadavg)"
	ps -eo pid,stat,pcpu,wchan:32,args --sort=-pcpu | head -n 12 | sed "s/^/[vm$ROLE] ps: /"
	local pid
	for pid in $(pgrep -x "$t"); do
		sed "s/^/[vm$ROLE] stack $pid: /" "/proc/$pid/stack" 2>/dev/null
	done
	return 1
}

# test_args TEST SIZE QPS: perftest arguments of one point
test_args() {
	case $1 in
	*_lat) echo "-s $2 -n $LAT_ITERS -H" ;;
	*) echo "-s $2 -D $DUR -q $3" ;;
	esac
}

# points: one line per measurement of a transport, in run order:
#   SCENARIO TEST DIR NETEM SIZE QPS
# DIR is where netem goes: data (the data sender's egress: client for
# WRITE/SEND, server for READ) or ack (the other end: ACKs of WRITE/SEND,
# READ requests); NETEM is netem's arguments with '_' for ' ' (- for none).
points() {
	local t l s q
	for s in $SCENARIOS; do
		case $s in
		loss)	# scenario 1: loss sweep on the data direction
			for t in $TESTS; do
				case $t in *_lat) continue ;; esac
				for l in $LOSSES; do
					echo "loss $t data $( [ "$l" = 0 ] && echo - || echo "loss_$l%") $SIZE 1"
				done
			done ;;
		ack)	# scenario 1, the ACK/response direction
			for t in $ACK_TESTS; do
				for l in $ACK_LOSSES; do echo "ack $t ack loss_$l% $SIZE 1"; done
			done ;;
		reorder) # scenario 2: reordering (jitter) and duplication
			echo "reorder ib_write_bw data delay_1ms_1ms $SIZE 1"
			echo "reorder ib_write_bw data duplicate_2% $SIZE 1" ;;
		lat)	# scenario 3: latency, lossless and at 1%
			for t in $LAT_TESTS; do
				for l in $LAT_LOSSES; do
					echo "lat $t data $( [ "$l" = 0 ] && echo - || echo "loss_$l%") 64 1"
				done
			done ;;
		size)	# scenario 6: message sizes, lossless
			for q in $SIZES; do echo "size ib_write_bw data - $q 1"; done ;;
		qps)	# scenario 6: QP count, lossless
			for q in $QPS; do echo "qps ib_write_bw data - $SIZE $q"; done ;;
		esac
	done
}

# loss_of NETEM: the loss percentage in a netem spec (0 when none)
loss_of() {
	local re='loss_([0-9.]+)%'

	[[ $1 =~ $re ]] && echo "${BASH_REMATCH[1]}" || echo 0
}

if [ "${1:-}" = --count ]; then
	points | wc -l
	exit 0
fi
# what a barrier --after command runs (bash -c)
export -f netem_dropped counter
[ "$ROLE" = 2 ] && echo "scenario,transport,test,dir,netem,loss_pct,size,qps,duration_s,bw_avg_gbps,msg_rate_mpps,lat_p50_us,lat_p99_us,lat_p999_us,netem_dropped,retrans_pkts,retrans_per_lost,status" > "$CSV"
[ "$ROLE" = 2 ] && echo "transport,test,loss_pct,usec" > "$LAT_CSV"
ip link set eth0 mtu "${MRXE_BENCH_MTU:-1500}"
port=18600
npoints=$(points | wc -l)
for tr in $TRANSPORTS; do
	ok=1
	transport_up "$tr" || ok=0
	barrier
	i=0
	while read -r scen t dir spec size qps; do
		i=$((i + 1))
		port=$((port + CLOCK_TRIES))	# one port per try
		loss=$(loss_of "$spec")
		tag="$tr-$scen-$t-$dir-$spec-$size-$qps"
		# netem on this guest when it is the DIR end: the client (guest 2)
		# sends WRITE/SEND data and READ requests
		mine=0
		if [ "$t" = ib_read_bw ] || [ "$t" = ib_read_lat ]; then
			{ [ "$dir" = data ] && [ "$ROLE" = 1 ]; } || { [ "$dir" = ack ] && [ "$ROLE" = 2 ]; } && mine=1
		else
			{ [ "$dir" = data ] && [ "$ROLE" = 2 ]; } || { [ "$dir" = ack ] && [ "$ROLE" = 1 ]; } && mine=1
		fi
		trace "point $i start"
		if [ $mine = 1 ]; then netem "$spec"; else netem -; fi
		trace "netem set"
		args=$(test_args "$t" "$size" "$qps")
		if [ "$ROLE" = 1 ]; then
			spids=()
			# One server per clock try, one port each: when
			# perftest's clock estimate failed the client says
			# "retry" at the "client done" barrier, this end starts
			# the next server and both meet at "ready" again.  (A
			# retry against a server restarted on the same port hung
			# once, the old server still in the failed session;
			# three servers started up front cost 2-3 s a point
			# under TCG, and started while the client set up they
			# took the host CPU its clock estimate needed: 5 of 10
			# estimates failed.)
			[ $ok = 1 ] && start_server 0
			trace "servers listening"
			# READ responses this end streams again (mrxe; 0 for
			# rxe): a delta over the point
			after='netem_dropped'
			case $t in ib_read_*)
				after="DEV=$DEV; echo \$(netem_dropped):\$((\$(counter read_rsp_replayed) - $(counter read_rsp_replayed)))" ;;
			esac
			k=0
			while :; do
				barrier		# server ready
				trace "barrier ready"
				# client done (or "retry"); this end's drops and READ
				# responses sent again go back with it
				barrier --after "$after"
				trace "barrier client done"
				if [ "$BARRIER_OUT" != "retry $i" ]; then
					# anything but this point's retry or done
					# leaves the guests a step apart: say so
					[ "$BARRIER_OUT" = "done $i" ] ||
						log "$tag: barrier $step: expected 'done $i' or 'retry $i', got '$BARRIER_OUT'"
					break
				fi
				k=$((k + 1))
				[ $ok = 1 ] && start_server "$k"
			done
			if [ ${#spids[@]} -gt 0 ]; then
				# The servers the client used exited with it.  By PID,
				# with builtins (timeout(1) passes the TERM on to its
				# perftest): the pkill/ss calls this replaces cost 4-5
				# s a point under TCG.
				kill "${spids[@]}" 2>/dev/null
				wait "${spids[@]}" 2>/dev/null
				cat "$OUT/$tag".server.* > "$OUT/$tag.server" 2>/dev/null
				rm -f "$OUT/$tag".server.*
			fi
			trace "servers ended"
			stats "$tag"
			trace "stats"
		else
			barrier
			trace "barrier ready"
			res=
			status=ok
			lat=,, drops= rtx= rpl=
			if [ $ok = 1 ]; then
				rtx0=$(counter retrans_pkts)
				# perftest prints 0 Gb/s when its cycle-clock estimate
				# failed under TCG ("Correlation coefficient"): run
				# again against the next server (guest 1 starts it when
				# told "retry"), as bench/multipath.sh does; drops and
				# retransmissions count over all tries
				for try in $(seq $CLOCK_TRIES); do
					status=ok
					if [ "$try" != 1 ]; then
						log "$tag: perftest clock estimate failed, try $try"
						barrier --send "retry $i"
						barrier		# the next server is ready
					fi
					# shellcheck disable=SC2086
					timeout $((DUR * 20 + 60)) $t -d "$DEV" -x "$GID" -p $((port + try - 1)) -F \
						$args "$PEER" > "$OUT/$tag.client" 2>&1 ||
						status="exit $?"
					grep -q "Correlation coefficient" "$OUT/$tag.client" || break
					# a latency test then prints inf: always again
					case $t in *_lat) ;; *)
						awk -v s="$size" '$1 == s && NF >= 5 && $4 + 0 == 0 { z = 1 } END { exit !z }' \
							"$OUT/$tag.client" || break ;;
					esac
				done
				trace "perftest done"
				case $t in
				*_lat)
					# bytes iters t_min t_max t_typical t_avg t_stdev 99% 99.9%
					lat=$(awk '$1 == 64 && NF >= 9 { print $5 "," $8 "," $9 }' "$OUT/$tag.client" | tail -n1)
					res=,
					[ -n "$lat" ] || { lat=,,; [ "$status" = ok ] && status="no result"; }
					case $lat in *inf*)
						grep -q "Correlation coefficient" "$OUT/$tag.client" &&
							[ "$status" = ok ] && status="perftest clock estimate failed (inf)" ;;
					esac
					# -H: every sample ("N, usec") for the CDF plots
					awk -v p="$tr,$t,$loss," -F', *' 'NF == 2 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9.]+$/ { print p $2 }' \
						"$OUT/$tag.client" >> "$LAT_CSV" ;;
				*)
					# data row: bytes iterations peak avg msgrate, in
					# MB/s (2^20 bytes) for 5 significant digits: with
					# --report_gbits perftest prints 0.21, a 5% step
					res=$(awk -v size="$size" -v rate=1 -f "$REPO/bench/perftest-bw.awk" "$OUT/$tag.client") ;;
				esac
				# the requester (this guest) retransmits; stock rxe
				# has no retrans_pkts counter
				[ "$tr" != rxe ] && rtx=$(( $(counter retrans_pkts) - rtx0 ))
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
				if grep -q "Correlation coefficient" "$OUT/$tag.client"; then
					status="perftest clock estimate failed (0 Gb/s)"
				else
					status="stalled (0 Gb/s)"
				fi
			fi
			stats "$tag"
			trace "stats"
			# client done; netem drops of both ends (the server's
			# come with this barrier; not in a subshell: barrier
			# counts the steps)
			barrier --send "done $i"
			trace "barrier client done"
			pv=
			while read -r l; do
				[[ $l =~ ^[0-9]+(:-?[0-9]+)?$ ]] && pv=$l
			done <<< "$BARRIER_OUT"
			pd=${pv%%:*}
			# READ: what the responder sent again, not the requests
			case $pv in *:*) case $t in ib_read_*)
				[ -n "$rtx" ] && rtx=${pv#*:} ;; esac ;; esac
			drops=$(( $(netem_dropped "$OUT/$tag.stats") + ${pd:-0} ))
			[ "$loss" != 0 ] && [ -n "$rtx" ] && [ "$drops" -gt 0 ] &&
				rpl=$(awk -v r="$rtx" -v d="$drops" 'BEGIN { printf "%.3f", r / d }')
			[ "$spec" = - ] && drops=
			echo "$scen,$tr,$t,$dir,${spec//_/ },$loss,$size,$qps,$DUR,$res,$lat,$drops,$rtx,$rpl,$status" >> "$CSV"
			log "[$i/$npoints] $tr $scen $t $dir ${spec//_/ } -s $size -q $qps: ${res%%,*} Gb/s lat p50,p99,p99.9 $lat us drops $drops retrans $rtx ($status)"
		fi
	done <<< "$(points)"
	netem del
	transport_down "$tr"
	barrier
done
[ "$ROLE" = 2 ] && cat "$CSV"
exit 0
