#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test): MetaRoCE multipath over the ECMP fabric of
# selftests/mrxe_ecmp_lib.sh (client -> R1 => N tbf-limited veth links =>
# R2 -> server, Linux ECMP with L4 hashing), in one lab guest.
#
# 1. Goodput of one QP with unmodified ib_write_bw (-s 65536 -D DUR,
#    REPEATS runs per case, each a fresh QP with fresh ports; the median,
#    the lower middle run for an even count): the
#    paths come from the device default (`mrxectl dev set DEV mode metaroce
#    paths N` on both devices before any QP exists).  For 2 and 4 links:
#    standard mode, MetaRoCE with 1 path, with N paths (one per link) and
#    with 4N paths; ratios to MetaRoCE with 1 path on the same fabric.  The
#    ECMP hash decides which link a port takes (random seed per boot), so
#    N paths may share links: each row reports how many links the QP's
#    ports cover at the end of the median run (probed).  Re-pathing needs
#    a few seconds on this fabric (epochs of 4 SRTT, about 90 ms of tbf
#    queue): a collided start repaired in 4 s (median) to 12 s (worst of
#    18 seeds, PathSim.CollisionRepairTime), so DUR is 15 s.
# 2. Black hole: 2 links, MetaRoCE, 4 paths, ib_write_bw -D 20; link 1
#    gets netem loss 100% after 6 s for 4 s.  The fabric's goodput (R2 ->
#    server bytes, sampled every 100 ms) gives the time from the black hole
#    until a 300 ms average is back to >= 0.9x one link's rate, in ms and
#    in MetaRoCE RTO floors (50 ms).
#
#   bench/multipath.sh [--rate 16mbit] [--duration 20] [--repeats 3]
#                      [--window N]
# --window N (MRXE_MP_WINDOW): the MetaRoCE in-flight cap of every case
# (`mrxectl dev set DEV window N`; default: the device's, 1024).  IRN caps
# a QP at the fabric's BDP; 1024 packets overflow the links' 100 ms tbf
# queues (about 190 packets each), so every case then runs at heavy loss.
# MRXE_MP_LINKS (default "2 4"; " " skips part 1), MRXE_MP_BLACKHOLE=0
# (skip part 2), MRXE_MP_BH_NOHOLD=1 (part 2 with path_hold off),
# MRXE_MP_SPECS (cases MODE:PATHS[:nohold], N = the link count; default
# "standard:1 metaroce:1 metaroce:N metaroce:4N"; add metaroce:N:nohold
# for the ablation: the module's path_hold off, path windows that only
# split traffic), MRXE_ECMP_QUEUE (tbf latency, default 100ms) and
# MRXE_ECMP_AQM=ecn (fq_codel ECN marking under each tbf) narrow or vary
# a run.
# Output: bench/results/multipath-<stamp>.csv and a summary on stdout.
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export MRXE_ECMP_RATE=${MRXE_ECMP_RATE:-16mbit}
export MRXE_MP_DURATION=${MRXE_MP_DURATION:-15}
export MRXE_MP_REPEATS=${MRXE_MP_REPEATS:-3}
while [ $# -gt 0 ]; do
	case $1 in
	--rate) MRXE_ECMP_RATE=$2; shift ;;
	--duration) MRXE_MP_DURATION=$2; shift ;;
	--repeats) MRXE_MP_REPEATS=$2; shift ;;
	--window) export MRXE_MP_WINDOW=$2; shift ;;
	-h|--help) sed -n '3,33p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done

if [ "${MRXE_VM:-0}" != 1 ]; then
	. "$REPO/bench/lib.sh"
	bench_in_guest "$REPO/bench/multipath.sh" \
		$((8 * MRXE_MP_REPEATS * (MRXE_MP_DURATION + 25) + 600)) multipath timeline
	exit
fi

# ---- inside the lab guest ----
# shellcheck source=../selftests/lib.sh
. "$REPO/selftests/lib.sh"
. "$REPO/selftests/mrxe_xfer_lib.sh"
. "$REPO/selftests/mrxe_ecmp_lib.sh"
OUT=${MRXE_RESULTS:-/tmp}
CSV=$OUT/multipath.csv
DUR=$MRXE_MP_DURATION
echo "case,links,mode,paths,gbps,links_covered" > "$CSV"
trap 'ecmp_cleanup' EXIT

# srv_wait PORT: the perftest server in A listens on TCP PORT
srv_wait() {
	local i
	for ((i = 0; i < 200; i++)); do
		ip netns exec "$NS_A" ss -Hltn "sport = :$1" 2>/dev/null | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

# bw MODE PATHS DURATION: one ib_write_bw run over the fabric; prints Gb/s
# (a run whose perftest clock estimate failed under TCG - 0 Gb/s and
# "Correlation coefficient" - is run again, up to 5 times)
bw() {
	local mode=$1 paths=$2 d=$3 so=$OUT/bw.server co=$OUT/bw.client sp g try
	local -a win=()
	[ -n "${MRXE_MP_WINDOW:-}" ] && win=(window "$MRXE_MP_WINDOW")
	ip netns exec "$NS_A" "$MRXECTL" dev set "$DEV_A" mode "$mode" paths "$paths" "${win[@]}" || return 1
	ip netns exec "$NS_B" "$MRXECTL" dev set "$DEV_B" mode "$mode" paths "$paths" "${win[@]}" || return 1
	for try in 1 2 3 4 5; do
		ip netns exec "$NS_A" timeout $((d + 60)) ib_write_bw -d "$DEV_A" -x "$GID_A" \
			-s 65536 -D "$d" -p 18515 > "$so" 2>&1 &
		sp=$!
		srv_wait 18515
		ip netns exec "$NS_B" timeout $((d + 60)) ib_write_bw -d "$DEV_B" -x "$GID_B" \
			-s 65536 -D "$d" -p 18515 "$IP_A" > "$co" 2>&1
		wait $sp
		g=$(awk -v size=65536 -v none=0 -f "$REPO/bench/perftest-bw.awk" "$co")
		awk -v g="$g" 'BEGIN { exit !(g == 0) }' && grep -q "Correlation coefficient" "$co" ||
			break
		echo "links: perftest clock estimate failed (try $try), again" >&2
	done
	echo "$g"
}

# covered: links the client QP's ports (last snapshot) take
covered() {
	local snap=$1 m l ports seen=""
	[ -s "$snap" ] || { echo 0; return; }
	ports=$(python3 -c 'import json,sys
for q in json.load(open(sys.argv[1])):
    for p in q.get("path_list", []): print(p["sport"])' "$snap")
	[ -n "$ports" ] || { echo 0; return; }
	# shellcheck disable=SC2086
	for m in $(ecmp_ports_links $ports); do
		l=${m#*:}
		[ "$l" != 0 ] && case " $seen " in *" $l "*) ;; *) seen="$seen $l" ;; esac
	done
	wc -w <<< "$seen"
}

declare -A res
HOLD_PARAM=/sys/module/$MRXE_MODULE/parameters/path_hold
for n in ${MRXE_MP_LINKS:-2 4}; do
	ecmp_setup "$n" || exit 1
	specs=${MRXE_MP_SPECS:-"standard:1 metaroce:1 metaroce:N metaroce:4N"}
	for spec in $specs; do
		# MODE:PATHS[:nohold]: nohold creates the QPs with the module's
		# path_hold off (path windows split traffic but never hold it);
		# PATHS may be N or kN (k times the link count)
		IFS=: read -r mode np hold <<< "$spec"
		case $np in
		N) np=$n ;;
		*N) np=$((${np%N} * n)) ;;
		esac
		set -- "$mode${hold:+-$hold}" "$np"
		runs=()
		for ((r = 1; r <= MRXE_MP_REPEATS; r++)); do
			snap=$OUT/snap.$n.$1.$2.$r
			rm -f "$snap"
			ecmp_paths_poll "$snap"
			if [ -n "$hold" ]; then echo N; else echo Y; fi > "$HOLD_PARAM"
			g=$(bw "$mode" "$np" "$DUR")
			echo Y > "$HOLD_PARAM"
			ecmp_paths_stop
			c=$(covered "$snap")
			runs+=("$g $c")
			echo "goodput_run,$n,$1,$2,$g,$c" >> "$CSV"
			echo "links $n: $1 paths $2 run $r: $g Gb/s (ports on $c of $n links)"
		done
		# the median run (by goodput) stands for the case; a run that
		# measured nothing (perftest's clock estimate failed five
		# times under TCG: 0 Gb/s) is left out of it
		ok=$(printf '%s\n' "${runs[@]}" | awk '$1 > 0' | sort -g)
		[ -n "$ok" ] || ok="0 0"
		set -- "$1" "$2" $(sed -n "$(( ($(wc -l <<< "$ok") + 1) / 2 ))p" <<< "$ok")
		res[$n.$1.$2]=$3
		echo "goodput,$n,$1,$2,$3,$4" >> "$CSV"
		echo "links $n: $1 paths $2: median $3 Gb/s (ports on $4 of $n links)"
	done
	ecmp_cleanup
done

# black hole
[ "${MRXE_MP_BLACKHOLE:-1}" = 1 ] || exit 0
ecmp_setup 2 || exit 1
# MRXE_MP_BH_NOHOLD=1: the black hole with the module's path_hold off
[ "${MRXE_MP_BH_NOHOLD:-0}" = 1 ] && echo N > "$HOLD_PARAM"
ip netns exec "$NS_A" "$MRXECTL" dev set "$DEV_A" mode metaroce paths 4
ip netns exec "$NS_B" "$MRXECTL" dev set "$DEV_B" mode metaroce paths 4
samples=$OUT/bh.samples
# R2 -> server bytes every 100 ms from one process inside R2 (an `ip netns
# exec` per sample took seconds under TCG while the QP ran: samples 3 s
# apart made the recovery time a multiple of 3 s)
python3 - "$ECMP_R2" ra > "$samples" <<'EOF' &
import ctypes, os, sys, time

libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("/run/netns/" + sys.argv[1], os.O_RDONLY)
if libc.setns(fd, 0x40000000) != 0:	# CLONE_NEWNET
    sys.exit("setns %s failed" % sys.argv[1])
os.close(fd)
while True:
    with open("/proc/self/net/dev") as f:
        for line in f.readlines()[2:]:
            name, rest = line.split(":", 1)
            if name.strip() == sys.argv[2]:
                print("%.6f %s" % (time.time(), rest.split()[8]), flush=True)
    time.sleep(0.1)
EOF
smp=$!
ip netns exec "$NS_A" timeout 90 ib_write_bw -d "$DEV_A" -x "$GID_A" -s 65536 -D 20 \
	-p 18516 > "$OUT/bh.server" 2>&1 &
sp=$!
srv_wait 18516
ip netns exec "$NS_B" timeout 90 ib_write_bw -d "$DEV_B" -x "$GID_B" -s 65536 -D 20 \
	-p 18516 "$IP_A" > "$OUT/bh.client" 2>&1 &
cp=$!
sleep 6
# the paths' smoothed RTT just before the hole: the QP's RTO is at least
# max(50 ms floor, SRTT), so recovery / that is an upper bound in RTOs
srtt_us=$(ip netns exec "$NS_B" "$MRXECTL" -j qp show "$DEV_B" 2>/dev/null | python3 -c 'import json,sys
d = [q for q in json.load(sys.stdin) if q.get("type") == "RC" and q.get("path_list")]
print(max([p.get("rtt_us") or 0 for q in d for p in q["path_list"]] or [0]))' 2>/dev/null || echo 0)
t_bh=$(date +%s.%N)
ecmp_blackhole 1
sleep 4
ecmp_restore 1
t_rs=$(date +%s.%N)
wait $cp; crc=$?
wait $sp
kill $smp 2>/dev/null
bhg=$(awk -v size=65536 -v none=0 -f "$REPO/bench/perftest-bw.awk" "$OUT/bh.client")
python3 - "$samples" "$t_bh" "$t_rs" "$ECMP_RATE" "$CSV" "$bhg" "$crc" "${srtt_us:-0}" \
	"metaroce$([ "${MRXE_MP_BH_NOHOLD:-0}" = 1 ] && echo -nohold)" <<'EOF'
import sys
samples = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if len(l.split()) == 2]
mode = sys.argv[9]
t_bh, t_rs = float(sys.argv[2]), float(sys.argv[3])
rate = sys.argv[4].lower()
mult = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
link_bps = next(float(rate[:-len(k)]) * v for k, v in mult.items() if rate.endswith(k))
def rate_at(i):
    """bits/s over the 300 ms from sample i, None at the end"""
    t = samples[i][0]
    j = next((k for k in range(i, len(samples)) if samples[k][0] >= t + 0.3), None)
    if j is None:
        return None
    return (samples[j][1] - samples[i][1]) * 8 / (samples[j][0] - t)
# the dip: first 300 ms window after the black hole below 0.9x one link;
# recovery: the first window after the dip back at >= 0.9x one link
dip = rec = None
for i in range(len(samples)):
    if samples[i][0] < t_bh:
        continue
    r = rate_at(i)
    if r is None:
        break
    if dip is None and r < 0.9 * link_bps:
        dip = samples[i][0] - t_bh
    elif dip is not None and r >= 0.9 * link_bps:
        rec = samples[i][0] - t_bh
        break
if dip is None:
    rec = 0.0
# the failover timeline: goodput over 300 ms windows, time from the black hole
with open(sys.argv[5].replace("multipath.csv", "multipath-timeline.csv"), "w") as f:
    f.write("t_s,gbps,blackhole_s,restore_s,link_gbps\n")
    for i in range(0, len(samples), 3):
        r = rate_at(i)
        if r is None:
            break
        f.write(f"{samples[i][0] - t_bh:.2f},{r / 1e9:.6f},0,{t_rs - t_bh:.2f},{link_bps / 1e9:.6f}\n")
with open(sys.argv[5], "a") as f:
    f.write(f"blackhole,2,{mode},4,{sys.argv[6]},\n")
    f.write(f"blackhole_recovery_ms,2,{mode},4,{'' if rec is None else round(rec * 1000)},\n")
    f.write(f"blackhole_srtt_ms,2,{mode},4,{int(sys.argv[8]) / 1000:.1f},\n")
print(f"black hole: ib_write_bw exit {sys.argv[7]}, {sys.argv[6]} Gb/s over 20 s; "
      + ("goodput never below 0.9x one link; " if dip is None else
         f"goodput below 0.9x one link from {dip * 1000:.0f} ms; ")
      + ("never back" if rec is None else
         f"back to >= 0.9x one link {rec * 1000:.0f} ms after the black hole "
         f"({rec / 0.05:.1f} RTO floors of 50 ms; at most "
         f"{rec / max(0.05, int(sys.argv[8]) / 1e6):.1f} RTOs with the paths' "
         f"SRTT {int(sys.argv[8]) / 1000:.0f} ms before the hole)"))
EOF
ecmp_cleanup

python3 - "$CSV" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
g = {(r["case"], r["links"], r["mode"], r["paths"]): r for r in rows}
print("\nlinks  mode      paths  Gb/s     x(1 path)  links covered")
for r in rows:
    if r["case"] != "goodput":
        continue
    base = float(g[("goodput", r["links"], "metaroce", "1")]["gbps"] or 0)
    x = float(r["gbps"]) / base if base else 0
    print(f"{r['links']:>5}  {r['mode']:<9} {r['paths']:>5}  {float(r['gbps']):.4f}   {x:5.2f}      {r['links_covered']}")
EOF
