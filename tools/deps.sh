#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install everything building and testing mrxe needs from Debian 12's archive.
# Idempotent and quiet: does nothing when all packages are present, runs
# `apt-get update` only when something is missing (and once more if the first
# install attempt fails on a stale index).
#
#   tools/deps.sh            install what is missing
#   tools/deps.sh --list     print the package list
#   tools/deps.sh --check    exit 1 (and name them) if packages are missing
#   tools/deps.sh --line 6.12  also Debian 13's line (kernel 6.12, rdma-core 56),
#                            unpacked under /var/cache/mrxe-deps without
#                            upgrading anything (tools/deps-line.sh)
set -euo pipefail

PKGS=(
	# build
	build-essential gcc g++ make git pkg-config
	linux-headers-amd64 libibverbs-dev librdmacm-dev libnl-3-dev libnl-genl-3-dev libmnl-dev
	libgtest-dev linux-source-6.1	# checkpatch.pl for make checkpatch
	# make deb: Debian's packaging tools, DKMS, lintian
	dpkg-dev debhelper dh-dkms dkms fakeroot lintian
	clang-14 libclang-rt-14-dev llvm-14	# make fuzz (libFuzzer, ASan, UBSan), fuzz coverage
	# lab VM
	linux-image-amd64 qemu-system-x86 busybox-static kmod cpio
	# tests and tools used inside the VM
	iproute2 iputils-ping ethtool procps psmisc util-linux python3
	python3-matplotlib iperf3	# make bench: plots (bench/report.py), the TCP reference (bench/netns.sh)
	rdma-core ibverbs-utils perftest rdmacm-utils python3-pyverbs qperf
	python3-scapy	# tools/mrxe-inject (mrxe_wire_inject.sh)
	open-iscsi	# iscsid, iscsiadm: the iSER initiator (mrxe_iser.sh)
	libns3-dev	# make sim: ns-3 3.37 leaf-spine simulation (sim/, Documentation/simulation.rst)
	xz-utils zstd
)

missing() {
	local p st
	for p in "${PKGS[@]}"; do
		st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
		[ "$st" = installed ] || echo "$p"
	done
}

case "${1:-}" in
--line) exec bash "$(dirname "${BASH_SOURCE[0]}")/deps-line.sh" "${2:?--line wants a line, e.g. 6.12}" ;;
--list) printf '%s\n' "${PKGS[@]}"; exit 0 ;;
--check)
	m=$(missing)
	[ -z "$m" ] && exit 0
	echo "missing packages:" $m >&2
	exit 1 ;;
"") ;;
*) echo "usage: $0 [--list|--check|--line 6.12]" >&2; exit 2 ;;
esac

mapfile -t todo < <(missing)
[ ${#todo[@]} -eq 0 ] && exit 0

SUDO=
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "deps.sh: need root (or sudo) to install: ${todo[*]}" >&2; exit 1; }
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
echo "deps.sh: installing ${todo[*]}" >&2
apt_install() {
	$SUDO apt-get install -y -q --no-install-recommends \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
		"${todo[@]}" > /tmp/mrxe-deps.$$.log 2>&1
}
# A fresh machine's package index may be empty or stale: update when needed.
if ! apt_install; then
	$SUDO apt-get update -q > /tmp/mrxe-deps.$$.log 2>&1 || { cat /tmp/mrxe-deps.$$.log >&2; exit 1; }
	if ! apt_install; then
		tail -n 40 /tmp/mrxe-deps.$$.log >&2
		rm -f /tmp/mrxe-deps.$$.log
		exit 1
	fi
fi
rm -f /tmp/mrxe-deps.$$.log
m=$(missing)
if [ -n "$m" ]; then
	echo "deps.sh: still missing after install: $m" >&2
	exit 1
fi
