#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage-2 init of the lab VM: runs as PID 1 on the host root (read-only 9p)
# after switch_root.  Mounts the pseudo filesystems and the read-write results
# share, configures networking for two-guest runs, runs the command that
# vm-run.sh left in the results share, stores its output, exit status and
# dmesg there, and powers off.
# The body is one brace group: bash parses it completely before running it,
# so editing this file while runs are in progress cannot break them.
{
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8 LC_ALL=C.UTF-8
OUT=/run/labvm

say() { echo "labvm-guest: $*" > /dev/console; }
poweroff_now() {
	sync
	echo o > /proc/sysrq-trigger
	sleep 10
	exit 1
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# what udev would add: bash's process substitution uses /dev/fd
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
[ -e /dev/stdin ] || ln -s /proc/self/fd/0 /dev/stdin
[ -e /dev/stdout ] || ln -s /proc/self/fd/1 /dev/stdout
[ -e /dev/stderr ] || ln -s /proc/self/fd/2 /dev/stderr
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t configfs configfs /sys/kernel/config 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null

msize=262144
userland=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	labvm_msize=*) msize=${arg#labvm_msize=} ;;
	labvm_userland=*) userland=${arg#labvm_userland=} ;;
	esac
done
mkdir -p $OUT
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=$msize,cache=none results $OUT; then
	say "cannot mount the results share"
	poweroff_now
fi
if [ ! -r $OUT/env.sh ] || [ ! -r $OUT/cmd.sh ]; then
	say "results share lacks env.sh/cmd.sh"
	poweroff_now
fi
# shellcheck disable=SC1091
. $OUT/env.sh

hostname "mrxe-vm${MRXE_VM_ROLE:-1}"
ip link set lo up

if [ -n "${MRXE_PEER_IP:-}" ]; then
	modprobe virtio_net
	for _ in $(seq 50); do
		[ -e /sys/class/net/eth0 ] && break
		sleep 0.1
	done
	ip link set eth0 up
	ip addr add "$LABVM_SELF_IP/24" dev eth0
	# Barrier: wait until the peer guest answers, so that CMD can start
	# talking to it right away.
	ok=0
	for _ in $(seq "${LABVM_PEER_WAIT:-120}"); do
		if ping -c1 -W1 "$MRXE_PEER_IP" >/dev/null 2>&1; then
			ok=1
			break
		fi
		sleep 0.2
	done
	[ $ok = 1 ] || say "peer $MRXE_PEER_IP did not answer; running CMD anyway"
fi

# labvm_userland=ROOT (vm-run.sh --userland trixie): CMD runs chrooted in
# ROOT (another Debian release's userland, unpacked by tools/deps-line.sh)
# made writable by a tmpfs overlay, with /proc, /sys, /dev, /tmp, the results
# share, /lib/modules and the repository (same path) mounted in.  In it the
# provider files of build/ are replaced by the ones built against that
# userland's libibverbs (build/rdma-core-56/, make provider-56).
UL=/run/labvm-userland
userland_setup() {
	local f
	mkdir -p $UL/upper $UL/work $UL/root
	mount -t overlay overlay -o "lowerdir=$userland,upperdir=$UL/upper,workdir=$UL/work" $UL/root ||
		return 1
	# Shared, so that what CMD mounts on /lib/modules/KVER in the chroot
	# (mrxe_module.sh's overlay) is what the kernel's modprobe sees too.
	mountpoint -q /lib/modules || mount --bind /lib/modules /lib/modules
	mount --make-rshared /lib/modules
	mount -t proc proc $UL/root/proc &&
	mount --rbind /sys $UL/root/sys &&
	mount --rbind /dev $UL/root/dev &&
	mount -t tmpfs -o mode=1777 tmpfs $UL/root/tmp &&
	mkdir -p $UL/root/run/labvm $UL/root/usr/lib/modules "$UL/root$LABVM_REPO" &&
	mount --bind $OUT $UL/root/run/labvm &&
	mount --rbind /lib/modules $UL/root/usr/lib/modules &&
	mount --rbind "$LABVM_REPO" "$UL/root$LABVM_REPO" || return 1
	case "$LABVM_CWD/" in
	"$LABVM_REPO"/*) ;;
	*) mkdir -p "$UL/root$LABVM_CWD" && mount --rbind "$LABVM_CWD" "$UL/root$LABVM_CWD" ;;
	esac
	for f in libmrxe-rdmav34.so provider-tests; do
		[ -f "$LABVM_REPO/build/rdma-core-56/$f" ] && [ -f "$LABVM_REPO/build/$f" ] &&
			mount --bind "$LABVM_REPO/build/rdma-core-56/$f" "$UL/root$LABVM_REPO/build/$f"
	done
	return 0
}

cut -d' ' -f1 /proc/uptime > $OUT/boot-seconds
cd "$LABVM_CWD" || cd /
if [ -n "$userland" ]; then
	if userland_setup; then
		say "running command in the userland $userland (role ${MRXE_VM_ROLE:-1}, uptime $(cat $OUT/boot-seconds)s)"
		echo "$userland" > $OUT/userland
		chroot $UL/root /bin/bash -c 'cd "$LABVM_CWD" 2>/dev/null || cd /; exec bash /run/labvm/cmd.sh' \
			< /dev/null > $OUT/output 2>&1
		rc=$?
	else
		say "setting up the userland $userland failed"
		echo "labvm: setting up the userland $userland failed" > $OUT/output
		rc=2
	fi
else
	say "running command (role ${MRXE_VM_ROLE:-1}, uptime $(cat $OUT/boot-seconds)s)"
	bash $OUT/cmd.sh < /dev/null > $OUT/output 2>&1
	rc=$?
fi
dmesg > $OUT/dmesg 2>&1
echo $rc > $OUT/exit
say "command exited with $rc"
poweroff_now
}
