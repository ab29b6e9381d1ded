#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# One entry point for a fresh Debian 12 machine:
#
#   bash tools/bootstrap.sh demo     build, boot the lab VM, show mrxe at work
#   bash tools/bootstrap.sh check    build and run the whole test suite
#   bash tools/bootstrap.sh TARGET   any other make target (default: all)
#
# Installs the build/test dependencies first (tools/deps.sh) when any tool or
# package is missing, then hands over to make.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

need_deps=0
for t in make gcc g++ qemu-system-x86_64 cpio modprobe ip rdma python3; do
	command -v "$t" >/dev/null 2>&1 || need_deps=1
done
[ -x /bin/busybox ] || need_deps=1
ls -d /lib/modules/6.1.*-amd64/build >/dev/null 2>&1 || need_deps=1
ls /boot/vmlinuz-6.1.*-amd64 >/dev/null 2>&1 || need_deps=1
if [ $need_deps = 0 ] && command -v dpkg-query >/dev/null; then
	bash tools/deps.sh --check 2>/dev/null || need_deps=1
fi
if [ $need_deps = 1 ]; then
	echo "bootstrap: installing dependencies (tools/deps.sh)" >&2
	bash tools/deps.sh
fi

[ $# -gt 0 ] || set -- all
exec make "$@"
