#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the mrxe selftests (sourced, bash).
#
# A test script defines functions named test_* and ends with
#	mrxe_run_tests test_a test_b ...
# which prints a KTAP header and plan, runs each function in a subshell with
# `set -e`, prints "ok N name", "not ok N name" or "ok N name # SKIP reason",
# checks the new dmesg lines after every test, and exits 0 (all passed or
# skipped), 1 (a failure) or 4 (KSFT_SKIP: everything skipped).
#
# Inside a test: `skip "reason"` ends it as skipped, `fail "reason"` (or any
# failing command under set -e) ends it as failed.  Diagnostics go to stdout
# and are printed as "# ..." lines.
#
# These tests load kernel modules and create devices: they refuse to run
# anywhere but inside the lab VM (MRXE_VM=1, set by tools/labvm/vm-run.sh).
#
# Each test runs in a fresh process of the script (MRXE_RUN_ONE=test_name)
# killed after MRXE_TEST_TIMEOUT seconds (default 90; a program may set it
# after sourcing this file).  `MRXE_RUN_ONE=test_x ./prog.sh` runs one test.
#
# Environment:
#	MRXE_KO		module to insmod (default: build/rdma_mrxe.ko)
#	MRXE_INSMOD_ARGS  module parameters for that insmod (e.g. wq_local=1)
#	MRXE_LINK_TYPE	rdma link type (default mrxe).  MRXE_LINK_TYPE=rxe runs
#			the same tests against stock rdma_rxe (modprobe'd), which
#			validates the tests themselves.

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

MRXE_SELFTEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MRXE_REPO=$(cd "$MRXE_SELFTEST_DIR/.." && pwd)
# build/KVER/rdma_mrxe.ko when built for another line (make module KVER=6.12)
MRXE_KO=${MRXE_KO:-$(k=$MRXE_REPO/build/$(uname -r)/rdma_mrxe.ko; [ -f "$k" ] && echo "$k" || echo "$MRXE_REPO/build/rdma_mrxe.ko")}
MRXE_LINK_TYPE=${MRXE_LINK_TYPE:-mrxe}
if [ "$MRXE_LINK_TYPE" = rxe ]; then
	MRXE_MODULE=rdma_rxe
	MRXE_DEV=${MRXE_DEV:-rxetest0}
else
	MRXE_MODULE=rdma_mrxe
	MRXE_DEV=${MRXE_DEV:-mrxe0}
fi
MRXE_DMESG_BAD='BUG:|Oops|WARNING:|general protection|Call Trace'
IB_DEVICE_NAME_MAX=64
MRXE_TEST_TIMEOUT=${MRXE_TEST_TIMEOUT:-90}

# Unique per script run so that leftovers of one test never confuse another.
NS_A=mrxe-a-$$
NS_B=mrxe-b-$$
VETH_A=veth-mrxe-a
VETH_B=veth-mrxe-b
IP_A=192.168.77.1
IP_B=192.168.77.2
IP6_A=fd77::1
IP6_B=fd77::2

# ---------------------------------------------------------------- TAP ----

ktap_header() { echo "TAP version 13"; }
ktap_plan() { echo "1..$1"; }
diag() { echo "# $*"; }
skip() { echo "SKIP: $*"; exit $KSFT_SKIP; }
fail() { echo "FAIL: $*"; exit $KSFT_FAIL; }
# need_cmd CMD PACKAGE: skip the test unless CMD is installed
need_cmd() { command -v "$1" >/dev/null || skip "$1 not installed ($2)"; }

# ------------------------------------------------------------ helpers ----

# jq_py PYTHON: run PYTHON with d = the JSON document on stdin.
jq_py() { python3 -c "import json,sys; d=json.load(sys.stdin); $1"; }

# expect_err DESC PATTERN CMD...: CMD fails (non-zero) and its stderr
# matches PATTERN (extended regex).
expect_err() {
	local desc=$1 pat=$2 out rc=0
	shift 2
	out=$("$@" 2>&1 >/dev/null) || rc=$?
	echo "$desc: exit $rc: $out"
	[ $rc != 0 ] || fail "$desc: succeeded"
	printf '%s\n' "$out" | grep -Eq "$pat" || fail "$desc: error does not match /$pat/"
}

# wait_for TIMEOUT_SECS CMD...: poll CMD every 0.1 s until it succeeds.
wait_for() {
	local t=$1 i
	shift
	for ((i = 0; i < t * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}

# expect_fail DESC CMD...: CMD must fail; shows its error message.
expect_fail() {
	local desc=$1 out rc
	shift
	out=$("$@" 2>&1) && rc=0 || rc=$?
	if [ $rc = 0 ]; then
		echo "expected failure but succeeded: $desc: $*"
		[ -n "$out" ] && echo "$out"
		return 1
	fi
	echo "$desc: refused (rc=$rc): ${out:-<no message>}"
	if [ -z "$out" ]; then
		echo "no error message for: $*"
		return 1
	fi
	return 0
}

in_lab_vm() { [ "${MRXE_VM:-0}" = 1 ]; }

# sleep SECS without a process: under TCG starting one costs about half a
# second, more than the 0.1 s that polling loops (wait_for) mean to wait.
# read -t on a pipe whose write end this shell holds itself never gets
# data, so it returns after SECS.  Falls back to sleep(1) if that fails.
if { exec {MRXE_SLEEP_FD}<> <(:); } 2>/dev/null; then
	sleep() {
		local s
		for s in "$@"; do
			[[ $s =~ ^[0-9]*\.?[0-9]+$ ]] || { command sleep "$@"; return; }
		done
		read -r -t "$1" -u "$MRXE_SLEEP_FD" _ || return 0
	}
fi

# ------------------------------------------------------------- module ----

mrxe_modprobe_deps() {
	local m
	for m in ib_core ib_uverbs udp_tunnel ip6_udp_tunnel; do
		modprobe "$m" || { echo "modprobe $m failed"; return 1; }
	done
}

mrxe_loaded() { [ -d /sys/module/$MRXE_MODULE ]; }

# mrxe_load: load the module under test (no-op when loaded).
mrxe_load() {
	mrxe_loaded && return 0
	mrxe_modprobe_deps || return 1
	if [ "$MRXE_MODULE" = rdma_mrxe ]; then
		# shellcheck disable=SC2086 # MRXE_INSMOD_ARGS: module parameters
		insmod "$MRXE_KO" ${MRXE_INSMOD_ARGS:-} ||
			{ echo "insmod $MRXE_KO ${MRXE_INSMOD_ARGS:-} failed"; return 1; }
	else
		modprobe "$MRXE_MODULE" || return 1
	fi
	mrxe_loaded
}

# mrxe_links: names of all ib devices.  The lab VM has no RDMA hardware, so
# every ib device there was created by a test.
mrxe_links() {
	local d
	for d in /sys/class/infiniband/*; do
		[ -e "$d" ] && echo "${d##*/}"
	done
	return 0
}

# mrxe_del_all_links: delete every device of our type (best effort).
mrxe_del_all_links() {
	local d
	for d in $(mrxe_links); do
		rdma link delete "$d" 2>/dev/null || true
	done
	return 0
}

mrxe_unload() {
	mrxe_loaded || return 0
	mrxe_del_all_links
	rmmod "$MRXE_MODULE"
}

dev_exists() { [ -e "/sys/class/infiniband/$1" ]; }
dev_gone() { ! dev_exists "$1"; }

# port_state DEV: "ACTIVE", "DOWN", ... from sysfs ("4: ACTIVE").
port_state() {
	local s
	read -r s < "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null || return 1
	echo "${s#*: }"
}
port_state_is() { [ "$(port_state "$1")" = "$2" ]; }

# ------------------------------------------------------------- netns ----

# mrxe_netns_setup [MTU]: two namespaces joined by a veth pair (netdev MTU
# if given), addresses only inside them (the traffic never leaves the VM).
# Three `ip -batch` runs instead of a dozen ip processes: under TCG every
# process start costs about half a second, on every test.  The MTU is set
# after the addresses: IPv6 refuses an address on a link below 1280 bytes,
# and a link lowered below that afterwards just drops IPv6.
mrxe_netns_setup() {
	local mtu=${1:-}
	[ -d /sys/module/veth ] || modprobe veth 2>/dev/null
	ip -b - <<-EOF || return 1
		netns add $NS_A
		netns add $NS_B
		link add $VETH_A netns $NS_A type veth peer name $VETH_B netns $NS_B
	EOF
	ip -n "$NS_A" -b - <<-EOF || return 1
		link set lo up
		addr add $IP_A/24 dev $VETH_A
		addr add $IP6_A/64 dev $VETH_A nodad
		${mtu:+link set $VETH_A mtu $mtu}
		link set $VETH_A up
	EOF
	ip -n "$NS_B" -b - <<-EOF || return 1
		link set lo up
		addr add $IP_B/24 dev $VETH_B
		addr add $IP6_B/64 dev $VETH_B nodad
		${mtu:+link set $VETH_B mtu $mtu}
		link set $VETH_B up
	EOF
}

# netns_del NAME...: delete those of the named namespaces that exist, in
# one ip process.
netns_del() {
	local ns cmds=
	for ns in "$@"; do
		[ -e "/run/netns/$ns" ] && cmds="${cmds}netns del $ns
"
	done
	[ -z "$cmds" ] || printf '%s' "$cmds" | ip -force -b - 2>/dev/null
	return 0
}

# mrxe_netns_cleanup: delete this run's namespaces.
mrxe_netns_cleanup() { netns_del "$NS_A" "$NS_B"; }

# nsa/nsb CMD...: run CMD inside namespace A/B.
nsa() { ip netns exec "$NS_A" "$@"; }
nsb() { ip netns exec "$NS_B" "$@"; }

# link_add NS NAME NETDEV: `rdma link add` from inside namespace NS.
link_add() {
	ip netns exec "$1" rdma link add "$2" type "$MRXE_LINK_TYPE" netdev "$3"
}

# ---------------------------------------------------------------- GIDs ----

# gid_of_ipv4 A.B.C.D -> sysfs form of ::ffff:A.B.C.D
gid_of_ipv4() {
	local IFS=.
	# shellcheck disable=SC2086
	set -- $1
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "$1" "$2" "$3" "$4"
}

# gid_of_ipv6 ADDR -> fully expanded sysfs form
gid_of_ipv6() {
	python3 -c 'import ipaddress,sys; print(ipaddress.IPv6Address(sys.argv[1]).exploded)' "$1"
}

# gid_types_of DEV GID: prints the type of every entry holding GID.  One grep
# over the table: forking per entry is slow under TCG (rxe has 1024 entries).
gid_types_of() {
	local dev=$1 gid=$2 f
	for f in $(grep -lx "$gid" /sys/class/infiniband/"$dev"/ports/1/gids/* 2>/dev/null); do
		cat "/sys/class/infiniband/$dev/ports/1/gid_attrs/types/${f##*/}" 2>/dev/null
	done
}

# has_gid DEV GID TYPE: the GID table holds GID with TYPE ("RoCE v2").
has_gid() { gid_types_of "$1" "$2" | grep -qx "$3"; }

dump_gids() {
	local dev=$1 line f g n
	grep -H -v -x '0000:0000:0000:0000:0000:0000:0000:0000' \
		/sys/class/infiniband/"$dev"/ports/1/gids/* 2>/dev/null |
	while IFS= read -r line; do
		f=${line%%:*}
		g=${line#*:}
		n=${f##*/}
		echo "gid[$n] $g $(cat "/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$n" 2>/dev/null) $(cat "/sys/class/infiniband/$dev/ports/1/gid_attrs/ndevs/$n" 2>/dev/null)"
	done
}

# ----------------------------------------------------------- runner ----

# dmesg_since MARKER [BAD]: the kernel log after the last line containing
# MARKER (all of it if the marker has left the ring buffer); with BAD (an
# extended regexp) it exits 1 when one of those lines matches BAD.
dmesg_since() {
	dmesg | awk -v m="$1" -v bad="${2:-}" '
		{ line[NR] = $0; if (index($0, m)) start = NR }
		END {
			for (i = start + 1; i <= NR; i++) {
				print line[i]
				if (bad != "" && line[i] ~ bad)
					b = 1
			}
			exit b
		}'
}

# mrxe_sweep: remove what a killed test may have left: namespaces of this
# suite and ib devices (the module stays loaded).
mrxe_sweep() {
	local ns names=()
	for ns in /run/netns/mrxe-*; do
		names+=("${ns##*/}")
	done
	netns_del "${names[@]}"
	mrxe_del_all_links
	[ ! -e /sys/class/net/mrxetun0 ] || ip link del mrxetun0 2>/dev/null
	return 0
}

# mrxe_run_tests FUNC...: run each test function, print KTAP.
mrxe_run_tests() {
	if [ -n "${MRXE_RUN_ONE:-}" ]; then
		in_lab_vm || exit $KSFT_SKIP
		trap 'exit 143' TERM	# so that the test's EXIT trap cleans up
		# MRXE_TRACE=1: every command of the test with a timestamp, into
		# $MRXE_RESULTS/trace/PROG.TEST (the run's logs on the host;
		# tools/labvm/trace-gaps.sh lists where the time went)
		if [ "${MRXE_TRACE:-0}" = 1 ] && mkdir -p "${MRXE_RESULTS:-/tmp}/trace" &&
		   exec {BASH_XTRACEFD}>> "${MRXE_RESULTS:-/tmp}/trace/$(basename "$0" .sh).$MRXE_RUN_ONE"; then
			PS4='+ $EPOCHREALTIME ${FUNCNAME[0]:-main} '
			set -x
		fi
		set -e
		"$MRXE_RUN_ONE"
		exit 0
	fi
	local n=0 t t0 rc out failed=0 passed=0 skipped=0 msg
	if [ -n "${MRXE_TEST_FILTER:-}" ]; then
		# MRXE_TEST_FILTER=REGEX: run only the matching tests
		local -a sel=()
		for t in "$@"; do
			[[ $t =~ $MRXE_TEST_FILTER ]] && sel+=("$t")
		done
		set -- "${sel[@]}"
	fi
	ktap_header
	ktap_plan $#
	if ! in_lab_vm; then
		for t in "$@"; do
			n=$((n + 1))
			echo "ok $n $t # SKIP not inside the lab VM (run via tools/labvm/vm-run.sh)"
		done
		exit $KSFT_SKIP
	fi
	if [ "$(id -u)" != 0 ]; then
		for t in "$@"; do
			n=$((n + 1))
			echo "ok $n $t # SKIP needs root"
		done
		exit $KSFT_SKIP
	fi
	local tmp
	tmp=$(mktemp)
	for t in "$@"; do
		n=$((n + 1))
		# A marker in the kernel log: the dmesg check looks only at what
		# follows it (robust against the log ring wrapping).
		echo "mrxe-selftest: begin $n $t ($$)" > /dev/kmsg 2>/dev/null
		# A fresh process per test, so that a hung test is killed alone.
		t0=$SECONDS
		MRXE_RUN_ONE=$t timeout -k 5 "$MRXE_TEST_TIMEOUT" bash "$0" > "$tmp" 2>&1 < /dev/null
		rc=$?
		echo "$t took $((SECONDS - t0))s" >> "$tmp"
		out=$(< "$tmp")
		if [ $rc = 124 ] || [ $rc = 137 ]; then
			out="$out
TIMEOUT: $t did not finish in ${MRXE_TEST_TIMEOUT}s"
			rc=$KSFT_FAIL
		fi
		[ -n "$out" ] && printf '# %s\n' "${out//$'\n'/$'\n'# }"
		mrxe_sweep
		if ! dmesg_since "mrxe-selftest: begin $n $t ($$)" \
			"$MRXE_DMESG_BAD" > "$tmp.dmesg"; then
			echo "# dmesg shows kernel problems during $t:"
			grep -E -A10 "$MRXE_DMESG_BAD" "$tmp.dmesg" | head -n 60 | sed 's/^/#   /'
			rc=$KSFT_FAIL
		fi
		case $rc in
		0) echo "ok $n $t"; passed=$((passed + 1)) ;;
		"$KSFT_SKIP")
			msg=$(printf '%s\n' "$out" | sed -n 's/^SKIP: //p' | tail -n1)
			echo "ok $n $t # SKIP ${msg:-skipped}"
			skipped=$((skipped + 1)) ;;
		*) echo "not ok $n $t"; failed=$((failed + 1)) ;;
		esac
	done
	rm -f "$tmp" "$tmp.dmesg"
	echo "# $(basename "$0"): $passed passed, $failed failed, $skipped skipped"
	[ $failed -gt 0 ] && exit $KSFT_FAIL
	[ $passed = 0 ] && [ $skipped -gt 0 ] && exit $KSFT_SKIP
	exit $KSFT_PASS
}

# mrxe_require_module: skip unless the module under test can be loaded.
mrxe_require_module() {
	if [ "$MRXE_MODULE" = rdma_mrxe ] && [ ! -f "$MRXE_KO" ]; then
		skip "$MRXE_KO not built (make module)"
	fi
	mrxe_load || fail "loading $MRXE_MODULE failed"
}
