#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the lab VM initramfs (busybox sh).  Loads the virtio-9p modules,
# mounts the host root read-only, puts tmpfs on the writable places and
# switch_roots into the stage-2 script named by labvm_init= on the cmdline.
/bin/busybox mkdir -p /proc /sys /dev /bin
/bin/busybox --install -s /bin
export PATH=/bin

fail() {
	echo "labvm-initramfs: $*" > /dev/console
	echo o > /proc/sysrq-trigger
	sleep 5
	poweroff -f
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null

stage2=
repo=
modroot=
msize=262144
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	labvm_init=*) stage2=${arg#labvm_init=} ;;
	labvm_msize=*) msize=${arg#labvm_msize=} ;;
	labvm_repo=*) repo=${arg#labvm_repo=} ;;
	labvm_modroot=*) modroot=${arg#labvm_modroot=} ;;
	esac
done

for m in $(cat /mods/order); do
	insmod /mods/$m || fail "insmod $m failed"
done

# cache=loose: the root is read-only for the guest and a VM lives for one run.
# The virtio-9p channel can show up a moment after virtio_pci's probe.
i=0
until mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=$msize,cache=loose \
		hostroot /newroot 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "mounting the host root over 9p failed"
	sleep 0.05
done
for d in tmp run var/tmp var/lib; do
	mount -t tmpfs -o mode=1777 tmpfs /newroot/$d || fail "tmpfs on /$d failed"
done
chmod 0755 /newroot/run /newroot/var/lib
# A repository under one of those tmpfs paths comes as its own read-only share,
# mounted at the same path (vm-run.sh passes labvm_repo=PATH).
if [ -n "$repo" ]; then
	mkdir -p "/newroot$repo" || fail "mkdir $repo failed"
	mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=$msize,cache=loose \
		repo "/newroot$repo" || fail "mounting the repository share failed"
fi

# A kernel that is not installed on the host (vm-run.sh --kernel 6.12): its
# unpacked /lib/modules/KVER (labvm_modroot=ROOT) appears at /lib/modules/KVER,
# on a tmpfs that hides the host's other module trees.
if [ -n "$modroot" ]; then
	kver=$(uname -r)
	[ -d "/newroot$modroot/lib/modules/$kver" ] || fail "no $modroot/lib/modules/$kver"
	mount -t tmpfs -o mode=0755 tmpfs /newroot/lib/modules || fail "tmpfs on /lib/modules failed"
	mkdir -p "/newroot/lib/modules/$kver"
	mount -o bind "/newroot$modroot/lib/modules/$kver" "/newroot/lib/modules/$kver" ||
		fail "binding $modroot/lib/modules/$kver failed"
fi

[ -n "$stage2" ] && [ -x "/newroot$stage2" ] || fail "no stage-2 init '$stage2'"
umount /dev 2>/dev/null
umount /sys
umount /proc
exec switch_root /newroot "$stage2"
