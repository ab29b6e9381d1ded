#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# selftest-timeout: 900
# A kernel ULP end to end: NVMe over RDMA (nvme-rdma host, nvmet-rdma
# target) over one mrxe device in init_net, which is where both create their
# rdma_cm IDs; the host connects to the device's own address (loopback: the
# packets go through lo).  The namespace is a loop device over a file.  Every
# test writes random data through /dev/nvmeXnY (O_DIRECT), reads it back, and
# also compares the backing file itself, so the bytes that reached the target
# are checked, not only what the host reads.
#
# nvme-rdma registers its data with fast-register MRs (IB_WR_REG_MR),
# invalidates them remotely (SEND with invalidate) and locally (LOCAL_INV),
# and sends small writes inline: verbs the user-space tests reach only in
# part.  The device default is `auto`, so the kernel's RC QPs upgrade to
# MetaRoCE; test_nvme_standard pins standard mode, test_nvme_loss puts netem
# loss and reordering on lo and checks that mrxe recovered (retransmitted)
# what netem dropped.

MRXE_TEST_TIMEOUT=${MRXE_TEST_TIMEOUT:-300}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mrxe_xfer_lib.sh"

NDEV=mrxenv0
DEV=mrxenvme0
IP=10.231.0.1
NQN=nqn.2026-12.org.mrxe:selftest
CFG=/sys/kernel/config/nvmet
MIB=32
IMG=
LOOPDEV=
CTRL=

nvme_require() {
	mrxe_require_module
	local m
	for m in nvmet nvmet-rdma nvme-rdma loop; do
		modprobe "$m" 2>/dev/null || skip "module $m not available"
	done
	[ -d "$CFG" ] || mount -t configfs none /sys/kernel/config 2>/dev/null || true
	[ -d "$CFG" ] || skip "nvmet configfs not available"
	[ -c /dev/nvme-fabrics ] || skip "/dev/nvme-fabrics missing"
	ulp_init_net_load
}

nvme_cleanup() {
	set +e
	[ -n "$CTRL" ] && [ -e "/sys/class/nvme/$CTRL/delete_controller" ] &&
		echo 1 > "/sys/class/nvme/$CTRL/delete_controller"
	tc qdisc del dev lo root 2>/dev/null
	rm -f "$CFG/ports/1/subsystems/$NQN" 2>/dev/null
	rmdir "$CFG/ports/1" 2>/dev/null
	[ -d "$CFG/subsystems/$NQN/namespaces/1" ] &&
		echo 0 > "$CFG/subsystems/$NQN/namespaces/1/enable" 2>/dev/null
	rmdir "$CFG/subsystems/$NQN/namespaces/1" 2>/dev/null
	rmdir "$CFG/subsystems/$NQN" 2>/dev/null
	[ -n "$LOOPDEV" ] && losetup -d "$LOOPDEV" 2>/dev/null
	[ -n "$IMG" ] && rm -f "$IMG" "$IMG.in" "$IMG.out"
	rdma link delete "$DEV" 2>/dev/null
	ip link del "$NDEV" 2>/dev/null
	# unregisters their ib_client from mrxe's devices
	modprobe -r nvme-rdma nvmet-rdma 2>/dev/null
	return 0
}

# nvme_setup MODE: the mrxe device (transport MODE for new QPs), the target
# (subsystem, namespace on a loop device, RDMA port on $IP:4420) and the
# host's controller; sets CTRL and BLK.
nvme_setup() {
	local mode=$1 i out b
	trap nvme_cleanup EXIT
	ulp_dummy_dev "$NDEV" "$IP" "$DEV" "$mode"
	IMG=$(mktemp /tmp/mrxe-nvme.XXXXXX)
	truncate -s $((MIB * 2))M "$IMG"
	LOOPDEV=$(losetup -f --show "$IMG") || fail "losetup"
	mkdir "$CFG/subsystems/$NQN"
	echo 1 > "$CFG/subsystems/$NQN/attr_allow_any_host"
	mkdir "$CFG/subsystems/$NQN/namespaces/1"
	echo "$LOOPDEV" > "$CFG/subsystems/$NQN/namespaces/1/device_path"
	echo 1 > "$CFG/subsystems/$NQN/namespaces/1/enable"
	mkdir "$CFG/ports/1"
	echo rdma > "$CFG/ports/1/addr_trtype"
	echo ipv4 > "$CFG/ports/1/addr_adrfam"
	echo "$IP" > "$CFG/ports/1/addr_traddr"
	echo 4420 > "$CFG/ports/1/addr_trsvcid"
	ln -s "$CFG/subsystems/$NQN" "$CFG/ports/1/subsystems/$NQN"
	# the fabrics device answers "instance=N,cntlid=M" on the same fd
	out=$(exec 3<>/dev/nvme-fabrics
	      echo "transport=rdma,traddr=$IP,trsvcid=4420,nqn=$NQN" >&3 &&
	      head -n1 <&3) || { dmesg | tail -n 20; fail "nvme connect over $DEV failed"; }
	CTRL=nvme$(echo "$out" | sed -n 's/.*instance=\([0-9]*\).*/\1/p')
	echo "connected: $out ($CTRL)"
	# the namespace's block device (with native multipath the head node
	# nvmeXnY, not the per-controller path nvmeXcZnY): the one whose
	# subsystem is ours
	BLK=
	for ((i = 0; i < 100; i++)); do
		for b in /sys/block/nvme*n*; do
			[[ ${b##*/} =~ ^nvme[0-9]+n[0-9]+$ ]] || continue
			[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$NQN" ] && BLK=$b
		done
		[ -n "$BLK" ] && [ -b "/dev/${BLK##*/}" ] && break
		sleep 0.1
	done
	[ -n "$BLK" ] || fail "no namespace block device of $NQN"
	BLK=/dev/${BLK##*/}
	echo "namespace: $BLK over $(cat /sys/class/nvme/"$CTRL"/transport) $(cat /sys/class/nvme/"$CTRL"/address)"
}

# nvme_verify: write $MIB MiB of random data at offset 1 MiB with O_DIRECT,
# read it back, and compare both the read and the backing file.
nvme_verify() {
	local bs=1M
	head -c $((MIB << 20)) /dev/urandom > "$IMG.in"
	dd if="$IMG.in" of="$BLK" bs=$bs seek=1 oflag=direct conv=fsync status=none ||
		fail "write through $BLK failed"
	dd if="$BLK" of="$IMG.out" bs=$bs skip=1 count=$MIB iflag=direct status=none ||
		fail "read through $BLK failed"
	cmp "$IMG.in" "$IMG.out" || fail "data read back through $BLK differs"
	# small and unaligned-length I/O: 4 KiB blocks (inline data)
	dd if="$IMG.in" of="$BLK" bs=4k count=256 seek=$(((MIB + 2) * 256)) \
		oflag=direct status=none || fail "4 KiB writes failed"
	# the loop device writes through the file's page cache
	cmp -n $((MIB << 20)) "$IMG.in" "$IMG" 0 $((1 << 20)) ||
		fail "the target's backing file differs from what was written"
	cmp -n $((1 << 20)) "$IMG.in" "$IMG" 0 $(((MIB + 2) << 20)) ||
		fail "4 KiB writes: the target's backing file differs"
	echo "$MIB MiB + 256 x 4 KiB written, read back and found on the target: identical"
}

test_nvme_auto() {
	nvme_require
	nvme_setup auto
	nvme_verify
	expect_rc_modes "$DEV" auto
}

test_nvme_standard() {
	nvme_require
	nvme_setup standard
	nvme_verify
	expect_rc_modes "$DEV" standard
}

# netem on lo: loss and reordering both ways (loopback).  The fault must
# have happened (netem dropped) and mrxe must have recovered it.
test_nvme_loss() {
	nvme_require
	nvme_setup auto
	# shellcheck disable=SC2086
	ulp_lo_netem "$DEV" nvme_verify ${MRXE_NVME_NETEM:-loss 1% delay 1ms 1ms}
}

# The device goes away under busy NVMe/RDMA I/O (`rdma link delete`):
# ib_core removes it from nvme-rdma and nvmet-rdma (DEVICE_REMOVAL on
# their rdma_cm IDs), which must let go of it.  The delete must return,
# the writer must end, the host's controller must go (deleted or
# reconnecting: there is no device to reconnect over) and no QP may stay.
test_nvme_link_delete() {
	nvme_require
	nvme_setup auto
	disk_writer_start "$BLK" $((MIB * 2 - 1))
	link_delete_busy "$DEV" "NVMe/RDMA" || return 1
	# the host gives up on the controller (no device): delete it now
	[ -e "/sys/class/nvme/$CTRL/delete_controller" ] &&
		timeout 60 sh -c "echo 1 > /sys/class/nvme/$CTRL/delete_controller"
	disk_writer_ended 30 "its controller went"
	CTRL=
	echo "device gone, controller deleted in $((SECONDS - LINK_DELETED_AT)) s"
}

mrxe_run_tests test_nvme_auto test_nvme_standard test_nvme_loss test_nvme_link_delete
