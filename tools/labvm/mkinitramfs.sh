#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build (or reuse) the lab VM's busybox initramfs.
#
#   tools/labvm/mkinitramfs.sh [KVER]   -> prints the path of the cpio archive
#
# The archive holds only busybox-static, the modules needed to reach the host
# root over virtio-9p (virtio_pci, 9pnet_virtio, 9p and their dependencies, in
# the order `modprobe --show-depends` gives) and a tiny /init.  It is cached
# under build/labvm/ keyed by a hash of its inputs; concurrent callers
# serialise on a lock file and the archive is renamed into place atomically.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KVER=${1:-${LABVM_KVER:-6.1.0-57-amd64}}
OUT_DIR=${LABVM_DIR:-$REPO/build/labvm}
# LABVM_MODROOT: a root holding lib/modules/KVER other than / (a kernel line
# unpacked by tools/deps-line.sh under /var/cache/mrxe-deps/linux-KVER).
MODROOT=${LABVM_MODROOT:-}
MODDIR=$MODROOT/lib/modules/$KVER
BUSYBOX=${BUSYBOX:-/bin/busybox}
INIT_SRC=$REPO/tools/labvm/initramfs-init.sh

die() { echo "mkinitramfs: $*" >&2; exit 1; }

[ -d "$MODDIR" ] || die "$MODDIR missing (apt-get install linux-image-amd64)"
[ -x "$BUSYBOX" ] || die "$BUSYBOX missing (apt-get install busybox-static)"
case "$(LC_ALL=C ldd "$BUSYBOX" 2>&1)" in *"not a dynamic"*) ;; *) false ;; esac ||
	die "$BUSYBOX is not static (apt-get install busybox-static)"
[ -r "$INIT_SRC" ] || die "$INIT_SRC missing"

# Module paths in load order, deduplicated, builtins dropped.
mods=$(modprobe ${MODROOT:+-d "$MODROOT"} -S "$KVER" -a --show-depends virtio_pci 9pnet_virtio 9p |
	awk '$1 == "insmod" && !seen[$2]++ { print $2 }')
[ -n "$mods" ] || die "modprobe -S $KVER --show-depends gave nothing"

key=$( { echo "$KVER"; sha256sum "$INIT_SRC" "$BUSYBOX" "$0"; \
	for m in $mods; do sha256sum "$m"; done; } | sha256sum | cut -c1-16)
out=$OUT_DIR/initramfs-$KVER-$key.cpio

mkdir -p "$OUT_DIR"
exec 9>"$OUT_DIR/.initramfs.lock"
flock 9
if [ -s "$out" ]; then
	echo "$out"
	exit 0
fi

tmp=$(mktemp -d "$OUT_DIR/initramfs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,dev,proc,sys,newroot,mods}
cp "$BUSYBOX" "$tmp/bin/busybox"
ln -s busybox "$tmp/bin/sh"
mknod -m 600 "$tmp/dev/console" c 5 1
mknod -m 666 "$tmp/dev/null" c 1 3
: > "$tmp/mods/order"
for m in $mods; do
	case "$m" in
	*.ko) cp "$m" "$tmp/mods/" ;;
	*.ko.xz) xz -dc "$m" > "$tmp/mods/$(basename "$m" .xz)" ;;
	*.ko.zst) zstd -qdc "$m" > "$tmp/mods/$(basename "$m" .zst)" ;;
	*) die "unknown module format: $m" ;;
	esac
	b=$(basename "$m"); echo "${b%.ko*}.ko" >> "$tmp/mods/order"
done
install -m 0755 "$INIT_SRC" "$tmp/init"
(cd "$tmp" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) > "$out.tmp"
mv -f "$out.tmp" "$out"
# Drop stale archives of older keys.
find "$OUT_DIR" -maxdepth 1 -name "initramfs-$KVER-*.cpio" ! -name "$(basename "$out")" -delete
echo "$out"
