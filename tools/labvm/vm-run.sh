#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run a command as root inside a throw-away QEMU guest that boots Debian's 6.1
# kernel with this machine's root filesystem shared read-only over virtio-9p.
#
#   tools/labvm/vm-run.sh [--two] [--timeout SECS] [--mem MB] [--smp N]
#                         [--live] [--cwd DIR] [--append ARGS]
#                         [--line 6.1|6.12] [--kernel VER] [--userland host|trixie]
#                         -- CMD...
#
# --line 6.12 (LABVM_LINE): Debian 13's line, i.e. --kernel 6.12 --userland
# trixie.  --kernel VER (LABVM_KVER): a release or a line (6.1, 6.12); a
# kernel unpacked by `make deps-6.12` brings its /lib/modules/VER into the
# guest.  --userland trixie (LABVM_USERLAND): CMD runs chrooted in the trixie
# userland of `make deps-6.12` (rdma-core 56, glibc 2.41).
#
# One CMD argument is run as shell text (bash -c), several are run as argv.
# Guests have 2 vCPUs by default (--smp N or LABVM_SMP; --smp 1 hides every
# race between the data-path work item and an application on another CPU).
# The vCPU model is qemu64 (LABVM_CPU): under TCG the programs compared
# ran 10-14% faster than with -cpu max (max without AVX: 4%; which other
# feature costs the rest is not isolated), the whole 6.1 suite about 5%
# (testing.rst "CI and time").
# LABVM_APPEND: more kernel command line (as --append).
# In the guest CMD runs as root, cwd = the repository (or --cwd), with
# MRXE_VM=1, MRXE_VM_ROLE=1|2, MRXE_RESULTS=<writable results dir>, and in
# --two mode MRXE_PEER_IP (guest 1 is 10.77.0.1, guest 2 10.77.0.2 on eth0).
# Host environment variables named MRXE_* and KSFT_* are passed through.
# --two joins the guests' eth0 through LABVM_NET: unix (default) a Unix
# stream socket (-netdev stream: lossless, QEMU waits when the peer is
# slow), tcp a loopback TCP socket (-netdev socket: QEMU 7.2 leaves Nagle
# on, so the second of two back-to-back frames waited for the peer's next
# frame or delayed ACK: 24 ms ib_write_lat for stock rxe, against 0.36 ms
# over unix; testing.rst "Two guests"), udp a UDP socket pair (drops what
# the receiving QEMU has no room for: 174k frames lost in 7 minutes).
#
# Exit status: CMD's status (--two: the first non-zero of guest 1, guest 2);
# 123 if CMD succeeded but the guest's dmesg shows BUG/Oops/WARNING/general
# protection/Call Trace; 124 on timeout; 125 if a guest died without an exit
# file (oops -> panic -> reboot, which QEMU turns into exit); 2 on usage or
# setup errors.  Logs stay in build/labvm/runs/<run>/vmN/: output, dmesg,
# exit, console.log, qemu.log, boot-seconds.
# The body is one brace group: bash parses it completely before running it,
# so editing this file while runs are in progress cannot break them.
{
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LABVM_DIR=${LABVM_DIR:-$REPO/build/labvm}
BAD_RE='BUG:|Oops|WARNING:|general protection|Call Trace'

usage() {
	sed -n '3,35p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
}
log() { echo "labvm: $*" >&2; }
die() { echo "labvm: error: $*" >&2; exit 2; }

two=0
timeout=${LABVM_TIMEOUT:-900}
mem=${LABVM_MEM:-1024}
smp=${LABVM_SMP:-2}
live=0
cwd=$REPO
append=${LABVM_APPEND:-}
while [ $# -gt 0 ]; do
	case "$1" in
	--two) two=1 ;;
	--timeout) timeout=${2:?}; shift ;;
	--timeout=*) timeout=${1#*=} ;;
	--mem) mem=${2:?}; shift ;;
	--mem=*) mem=${1#*=} ;;
	--smp) smp=${2:?}; shift ;;
	--smp=*) smp=${1#*=} ;;
	--live) live=1 ;;
	--cwd) cwd=$(cd "${2:?}" && pwd) || die "--cwd $2: no such directory"; shift ;;
	--append) append=${2:?}; shift ;;
	--line) LABVM_LINE=${2:?}; shift ;;
	--kernel) LABVM_KVER=${2:?}; shift ;;
	--userland) LABVM_USERLAND=${2:?}; shift ;;
	-h|--help) usage ;;
	--) shift; break ;;
	*) usage ;;
	esac
	shift
done
[ $# -gt 0 ] || usage
[[ "$timeout" =~ ^[0-9]+$ ]] || die "--timeout wants seconds"
# The guest puts tmpfs on these: the host's files there are invisible to it.
# A repository there (a CI clone under /tmp, say) is shared on its own and
# mounted at the same path; any other --cwd there is refused.
repo_share=()
repo_arg=
for hidden in /tmp /run /var/tmp /var/lib; do
	case "$REPO/" in
	"$hidden"/*)
		case "$REPO" in
		*[[:space:]]*) die "the repository path '$REPO' contains blanks" ;;
		esac
		repo_share=(-virtfs "local,path=$REPO,mount_tag=repo,security_model=none,readonly=on,multidevs=remap")
		repo_arg="labvm_repo=$REPO" ;;
	esac
	case "$cwd/" in
	"$REPO"/*) ;;
	"$hidden"/*) die "--cwd $cwd is under $hidden, which the guest cannot see" ;;
	esac
done
[[ "$mem" =~ ^[0-9]+$ ]] || die "--mem wants MiB"
[[ "$smp" =~ ^[1-9][0-9]*$ ]] || die "--smp wants a vCPU count"

# Lines: 6.1 = Debian 12 (installed kernel, host userland); 6.12 = Debian 13's
# kernel line and rdma-core 56 (tools/deps-line.sh, unpacked under MRXE_DEPS).
MRXE_DEPS=${MRXE_DEPS:-/var/cache/mrxe-deps}
case "${LABVM_LINE:-}" in
"") ;;
6.1) LABVM_KVER=${LABVM_KVER:-}; LABVM_USERLAND=${LABVM_USERLAND:-host} ;;
6.12) LABVM_KVER=${LABVM_KVER:-6.12}; LABVM_USERLAND=${LABVM_USERLAND:-trixie} ;;
*) die "--line: 6.1 or 6.12" ;;
esac
case "${LABVM_KVER:-}" in
6.1) LABVM_KVER= ;;
6.12) LABVM_KVER=$(cat "$MRXE_DEPS/linux-6.12/KVER" 2>/dev/null) ||
	die "kernel line 6.12 not fetched: make deps-6.12" ;;
esac
# Kernel: Debian's 6.1 line (newest installed 6.1.*-amd64 with its modules).
if [ -z "${LABVM_KVER:-}" ]; then
	for k in $(ls /boot/vmlinuz-6.1.*-amd64 2>/dev/null | sort -V); do
		k=${k#/boot/vmlinuz-}
		[ -d "/lib/modules/$k/kernel" ] && LABVM_KVER=$k
	done
fi
KVER=${LABVM_KVER:-6.1.0-57-amd64}
# A kernel that is not installed: its unpacked root (tools/deps-line.sh).
MODROOT=
if [ ! -d "/lib/modules/$KVER/kernel" ] && [ -d "$MRXE_DEPS/linux-$KVER/lib/modules/$KVER/kernel" ]; then
	MODROOT=$MRXE_DEPS/linux-$KVER
fi
export LABVM_MODROOT=$MODROOT
KERNEL=${LABVM_KERNEL:-$MODROOT/boot/vmlinuz-$KVER}
# tsc=reliable on every kernel.  Under TCG the clocksource watchdog finds
# the TSC off by tens of ms against the HPET and marks it unstable; 6.12
# then flips sched_clock's static key, and patching the kernel text with
# int3 under TCG killed the guest ("Oops: int3" in sched_clock_cpu): early
# in boot one boot in four on 2026-12-02, and 33 s into mrxe_perftest.sh on
# 2026-12-06 (testing.rst).  6.1 kept the HPET until 2026-12-07: every
# clock read was then an emulated MMIO read (read_hpet was 14% of a
# guest's CPU in ib_write_lat, perf), which made ib_write_lat in one guest
# about 2x slower in both modes, MetaRoCE (more clock reads a packet) 1.5-2x
# standard mode instead of 1.25x.  The TSC is all a TCG guest has that is
# fast to read; nothing in the suite needs it checked.
kernel_args=tsc=reliable
userland_arg=
case "${LABVM_USERLAND:-host}" in
host) ;;
trixie)
	[ -e "$MRXE_DEPS/trixie-root/.done" ] || die "trixie userland missing: make deps-6.12"
	# the guest swaps in the provider built against rdma-core 56 and keeps
	# build/'s (rdma-core 44) when there is none: that one's private verbs
	# layout is 44's, and libibverbs 56 crashed in it (ibv_rc_pingpong -N,
	# the extended QP's send API, segfaulted)
	p44=$REPO/build/libmrxe-rdmav34.so p56=$REPO/build/rdma-core-56/libmrxe-rdmav34.so
	if [ -f "$p44" ] && [ ! -f "$p56" ]; then
		die "$p56 missing: make provider-56 (the rdma-core 44 build crashes libibverbs 56)"
	fi
	[ -f "$p56" ] && [ "$p44" -nt "$p56" ] &&
		echo "labvm: warning: $p56 is older than $p44: make provider-56" >&2
	userland_arg="labvm_userland=$MRXE_DEPS/trixie-root" ;;
*) die "--userland: host or trixie" ;;
esac
[ -r "$KERNEL" ] || die "$KERNEL missing (bash tools/deps.sh installs linux-image-amd64)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (bash tools/deps.sh)"

mkdir -p "$LABVM_DIR/runs"
INITRD=$("$REPO/tools/labvm/mkinitramfs.sh" "$KVER") || die "building the initramfs failed"

# Keep the 40 newest run directories; never touch one younger than 3 hours
# (it may belong to a run still going on).
ls -1dt "$LABVM_DIR"/runs/*/ 2>/dev/null | tail -n +41 |
	while read -r old; do
		[ -n "$(find "$old" -maxdepth 0 -mmin +180)" ] && rm -rf "$old"
	done

RUN=$(mktemp -d "$LABVM_DIR/runs/$(date +%Y%m%d-%H%M%S)-XXXX") || die "mktemp failed"
nvm=$((two + 1))

cmdtext=
if [ $# -eq 1 ]; then
	cmdtext=$1
else
	cmdtext=$(printf '%q ' "$@")
fi

for i in $(seq $nvm); do
	d=$RUN/vm$i
	mkdir -p "$d"
	printf '%s\n' "$cmdtext" > "$d/cmd.sh"
	{
		printf 'export MRXE_VM=1 MRXE_VM_ROLE=%d MRXE_RESULTS=/run/labvm\n' "$i"
		printf 'export LABVM_CWD=%q LABVM_RUN_DIR=%q LABVM_REPO=%q\n' "$cwd" "$d" "$REPO"
		if [ $two = 1 ]; then
			printf 'export LABVM_SELF_IP=10.77.0.%d MRXE_PEER_IP=10.77.0.%d\n' \
				"$i" $((3 - i))
		fi
		# Pass MRXE_* / KSFT_* from the host (except the ones set above).
		while IFS='=' read -r name _; do
			case "$name" in
			MRXE_VM|MRXE_VM_ROLE|MRXE_PEER_IP|MRXE_RESULTS) ;;
			MRXE_*|KSFT_*) printf 'export %s=%q\n' "$name" "${!name}" ;;
			esac
		done < <(env)
	} > "$d/env.sh"
done

pids=()
tails=()
cleanup() {
	local p
	for p in "${pids[@]}" "${tails[@]}"; do
		kill "$p" 2>/dev/null
	done
	[ -z "${sockdir:-}" ] || rm -rf "$sockdir"
}
trap cleanup EXIT
trap 'log "interrupted; logs in $RUN"; exit 130' INT TERM

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_vm INDEX [NETDEV-ARGS]: boots guest INDEX in the background.
start_vm() {
	local i=$1 net=${2:-} d=$RUN/vm$1
	local -a nic=()
	if [ -n "$net" ]; then
		nic=(-netdev "${net%%,*},id=n0,${net#*,}"
		     -device "virtio-net-pci,netdev=n0,mac=52:54:00:77:00:0$i")
	fi
	qemu-system-x86_64 \
		-name "mrxe-labvm-$i" \
		-accel tcg,thread=multi -cpu "${LABVM_CPU:-qemu64}" -smp "$smp" -m "$mem" \
		-nodefaults -no-user-config -display none -monitor none \
		-no-reboot \
		-serial "file:$d/console.log" \
		-kernel "$KERNEL" -initrd "$INITRD" \
		-append "console=ttyS0 panic=-1 oops=panic log_buf_len=4M labvm_role=$i labvm_init=$REPO/tools/labvm/guest-init.sh $repo_arg ${MODROOT:+labvm_modroot=$MODROOT} $userland_arg $kernel_args $append" \
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$d,mount_tag=results,security_model=none,multidevs=remap" \
		"${repo_share[@]}" \
		-device virtio-rng-pci \
		"${nic[@]}" \
		> "$d/qemu.log" 2>&1 < /dev/null &
	pids+=($!)
}

listening() {
	ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}

# A guest that dies before it runs the command (no boot-seconds, no exit
# status: the module under test is not loaded yet) boots once more.  Seen
# with the 6.12 kernel under TCG: an int3 oops in sched_clock_cpu while
# static keys are patched early in boot (one boot in four on 2026-12-02).
link=${LABVM_NET:-unix}
case $link in
unix|tcp|udp) ;;
*) die "LABVM_NET=$link: unix, tcp or udp" ;;
esac
for boot in 1 2; do
	start_ms=$(($(date +%s%N) / 1000000))
	if [ $two = 1 ] && [ "$link" = udp ]; then
		p1=$(free_port) && p2=$(free_port) || die "cannot pick a free port (python3)"
		start_vm 1 "socket,udp=127.0.0.1:$p2,localaddr=127.0.0.1:$p1"
		start_vm 2 "socket,udp=127.0.0.1:$p1,localaddr=127.0.0.1:$p2"
	elif [ $two = 1 ] && [ "$link" = unix ]; then
		# short path: sun_path holds 108 bytes, a clone's $RUN may not fit
		[ -z "${sockdir:-}" ] || rm -rf "$sockdir"
		sockdir=$(mktemp -d /tmp/mrxe-link.XXXXXX) || die "mktemp failed"
		sock=$sockdir/s
		start_vm 1 "stream,server=on,addr.type=unix,addr.path=$sock"
		for _ in $(seq 100); do
			[ -S "$sock" ] && break
			kill -0 "${pids[0]}" 2>/dev/null || break
			sleep 0.05
		done
		[ -S "$sock" ] || die "guest 1 could not listen on $sock: $(cat "$RUN/vm1/qemu.log")"
		start_vm 2 "stream,server=off,addr.type=unix,addr.path=$sock"
	elif [ $two = 1 ]; then
		started=0
		for attempt in 1 2 3 4 5; do
			port=$(free_port) || die "cannot pick a free port (python3)"
			start_vm 1 "socket,listen=127.0.0.1:$port"
			for _ in $(seq 100); do
				listening "$port" && break
				kill -0 "${pids[0]}" 2>/dev/null || break
				sleep 0.05
			done
			if listening "$port"; then
				started=1
				break
			fi
			kill "${pids[0]}" 2>/dev/null; wait "${pids[0]}" 2>/dev/null
			pids=()
			log "port $port taken (attempt $attempt), retrying"
		done
		[ $started = 1 ] || die "guest 1 could not listen: $(cat "$RUN/vm1/qemu.log")"
		start_vm 2 "socket,connect=127.0.0.1:$port"
	else
		start_vm 1
	fi

	if [ $live = 1 ]; then
		for i in $(seq $nvm); do
			touch "$RUN/vm$i/output"
			if [ $two = 1 ]; then
				tail -n +1 -F "$RUN/vm$i/output" 2>/dev/null | sed -u "s/^/[vm$i] /" &
			else
				tail -n +1 -F "$RUN/vm$i/output" 2>/dev/null &
			fi
			tails+=($!)
		done
	fi

	timed_out=0
	deadline=$(( $(date +%s) + timeout ))
	while :; do
		alive=0
		for p in "${pids[@]}"; do
			kill -0 "$p" 2>/dev/null && alive=1
		done
		[ $alive = 0 ] && break
		if [ "$(date +%s)" -ge $deadline ]; then
			timed_out=1
			for p in "${pids[@]}"; do
				kill "$p" 2>/dev/null
			done
			break
		fi
		sleep 0.2
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	pids=()
	sleep 0.3
	for p in "${tails[@]}"; do
		kill "$p" 2>/dev/null
	done
	tails=()
	died_booting=0
	for i in $(seq $nvm); do
		[ -s "$RUN/vm$i/boot-seconds" ] || [ -s "$RUN/vm$i/exit" ] || died_booting=1
	done
	[ $boot = 1 ] && [ $timed_out = 0 ] && [ $died_booting = 1 ] || break
	for i in $(seq $nvm); do
		mv "$RUN/vm$i/console.log" "$RUN/vm$i/console-boot1.log" 2>/dev/null
		rm -f "$RUN/vm$i/output" "$RUN/vm$i/exit" "$RUN/vm$i/boot-seconds" "$RUN/vm$i/dmesg"
	done
	log "a guest died while booting, before the command ($(grep -E -m1 "Oops|Kernel panic" "$RUN"/vm*/console-boot1.log | head -n1)): booting again"
done
ms=$(( $(date +%s%N) / 1000000 - start_ms ))
elapsed=$((ms / 1000)).$(printf '%03d' $((ms % 1000)))

status=0
set_status() { [ $status = 0 ] && status=$1; }
for i in $(seq $nvm); do
	d=$RUN/vm$i
	tag=vm$i
	if [ $live = 0 ] && [ -e "$d/output" ]; then
		[ $two = 1 ] && echo "===== $tag output ====="
		cat "$d/output"
	fi
	if [ -s "$d/boot-seconds" ]; then
		log "$tag: booted to CMD in $(cat "$d/boot-seconds") s (guest uptime)"
	fi
	if [ ! -s "$d/exit" ]; then
		if [ $timed_out = 1 ]; then
			log "$tag: TIMEOUT after $timeout s; console log: $d/console.log"
			set_status 124
		else
			log "$tag: guest died without an exit status (oops/panic?); console log: $d/console.log"
			grep -E -m 40 "$BAD_RE|Kernel panic|RIP:" "$d/console.log" >&2
			[ -s "$d/qemu.log" ] && sed 's/^/qemu: /' "$d/qemu.log" >&2
			set_status 125
		fi
		continue
	fi
	rc=$(cat "$d/exit")
	if [ -f "$d/dmesg" ] && grep -E -q "$BAD_RE" "$d/dmesg"; then
		log "$tag: kernel problems in dmesg ($d/dmesg):"
		grep -E -B2 -A12 "$BAD_RE" "$d/dmesg" | head -n 80 >&2
		[ "$rc" = 0 ] && rc=123
	fi
	[ "$rc" != 0 ] && log "$tag: exit status $rc"
	set_status "$rc"
done
log "run took ${elapsed}s; logs: $RUN"
exit $status
}
