#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# selftest-timeout: 900
# A third kernel ULP end to end: SCSI RDMA Protocol (ib_srp initiator,
# ib_srpt target in the kernel's LIO target core) over one mrxe device in
# init_net, logged in through the RDMA/CM (the way SRP runs on RoCE; the
# initiator connects to the device's own address, so the packets go
# through lo).  No userland is needed: the target is configured through
# configfs (a fileio backstore on a tmpfs file, one LUN, an ACL for the
# initiator's address) and the initiator through ib_srp's add_target.
#
# SRP sends its commands and responses with SEND; the target moves the
# data with RDMA READ (writes) and RDMA WRITE (reads) into memory the
# initiator registered with fast-register MRs, which the initiator
# invalidates with LOCAL_INV once the command completed: one more shape
# of verbs use.  Every test writes random data to the SCSI disk with
# O_DIRECT, reads it back and compares both the read and the target's
# backing file.  Without faults no QP may go to error: SRP reconnects
# and carries on, so only the counters show it (test_srp_auto and
# _standard caught a fast-register key race that way: LOCAL_INVs failed,
# 11-28 reconnects per test, 6x slower).  The device default is `auto`,
# so the QPs upgrade to MetaRoCE; test_srp_standard pins standard mode,
# test_srp_loss puts netem loss and reordering on lo, and
# test_srp_link_delete removes the device under I/O.

MRXE_TEST_TIMEOUT=${MRXE_TEST_TIMEOUT:-300}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mrxe_xfer_lib.sh"

NDEV=mrxesr0
DEV=mrxesrp0
IP=10.233.0.1
CM_PORT=5555
MIB=${MRXE_SRP_MIB:-32}
CFS=/sys/kernel/config/target
BACK=
TPORT=
SDEV=

srp_require() {
	local m
	mrxe_require_module
	for m in target_core_mod target_core_file ib_srpt ib_srp sd_mod; do
		modinfo "$m" > /dev/null 2>&1 || skip "module $m not available"
	done
	[ -d /sys/kernel/config ] || modprobe configfs 2>/dev/null
	[ -d /sys/kernel/config ] || skip "no configfs"
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config ||
		skip "cannot mount configfs"
	modprobe target_core_mod || skip "cannot load target_core_mod"
	for m in "$CFS"/core/*_[0-9]* "$CFS/srpt"; do
		[ -e "$m" ] && skip "the LIO target is already configured here ($m)"
	done
	ulp_init_net_load
}

# srp_logout: every SRP remote port deleted (the SCSI hosts go with them).
srp_logout() {
	local p
	for p in /sys/class/srp_remote_ports/*; do
		[ -e "$p/delete" ] && echo 1 > "$p/delete"
	done
	return 0
}

srp_cleanup() {
	set +e
	tc qdisc del dev lo root 2>/dev/null
	srp_logout
	if [ -n "$TPORT" ] && [ -d "$CFS/srpt/$TPORT" ]; then
		echo 0 > "$CFS/srpt/$TPORT/$TPORT/enable"
		rm -f "$CFS/srpt/$TPORT/$TPORT/acls/$IP/lun_0/lun_0"
		rmdir "$CFS/srpt/$TPORT/$TPORT/acls/$IP/lun_0" "$CFS/srpt/$TPORT/$TPORT/acls/$IP"
		rm -f "$CFS/srpt/$TPORT/$TPORT/lun/lun_0/disk0"
		rmdir "$CFS/srpt/$TPORT/$TPORT/lun/lun_0" "$CFS/srpt/$TPORT/$TPORT" \
			"$CFS/srpt/$TPORT"
	fi
	[ -d "$CFS/srpt" ] && rmdir "$CFS/srpt"
	rmdir "$CFS/core/fileio_0/disk0" "$CFS/core/fileio_0" 2>/dev/null
	modprobe -r ib_srp ib_srpt 2>/dev/null
	rdma link delete "$DEV" 2>/dev/null
	ip link del "$NDEV" 2>/dev/null
	[ -n "$BACK" ] && rm -f "$BACK" "$BACK.src" "$BACK.back"
	modprobe -r target_core_file target_core_mod scsi_transport_srp 2>/dev/null
	return 0
}

# srp_setup MODE: the mrxe device (transport MODE for new QPs), the target
# (a $((MIB * 2)) MiB fileio LUN, RDMA/CM listener on $CM_PORT) and the
# initiator logged in to it; SDEV is the SCSI disk that appeared.
srp_setup() {
	local mode=$1 gid guid host p
	trap srp_cleanup EXIT
	ulp_dummy_dev "$NDEV" "$IP" "$DEV" "$mode"
	# the target port's name is GID 0's interface ID (ib_srpt's guid_name)
	gid=$(cat "/sys/class/infiniband/$DEV/ports/1/gids/0")
	TPORT=${gid#fe80:0000:0000:0000:}
	[ "$TPORT" != "$gid" ] || fail "GID 0 of $DEV is not link-local: $gid"
	BACK=$(mktemp /tmp/mrxe-srp.XXXXXX)
	truncate -s $((MIB * 2 << 20)) "$BACK"
	modprobe target_core_file || fail "cannot load target_core_file"
	mkdir -p "$CFS/core/fileio_0/disk0" || fail "fileio backstore"
	echo "fd_dev_name=$BACK,fd_dev_size=$((MIB * 2 << 20))" > "$CFS/core/fileio_0/disk0/control" &&
		echo 1 > "$CFS/core/fileio_0/disk0/enable" || fail "fileio backstore refused"
	modprobe ib_srpt || fail "cannot load ib_srpt"
	mkdir "$CFS/srpt" || fail "srpt fabric"
	echo $CM_PORT > "$CFS/srpt/discovery_auth/rdma_cm_port" ||
		fail "ib_srpt refused RDMA/CM port $CM_PORT"
	mkdir "$CFS/srpt/$TPORT" || { dmesg | tail -n 5; fail "ib_srpt has no port $TPORT ($DEV)"; }
	mkdir "$CFS/srpt/$TPORT/$TPORT" "$CFS/srpt/$TPORT/$TPORT/lun/lun_0" || fail "srpt TPG/LUN"
	ln -s "$CFS/core/fileio_0/disk0" "$CFS/srpt/$TPORT/$TPORT/lun/lun_0/disk0" || fail "LUN link"
	# RDMA/CM logins are matched by address ("%pIS" of the connection)
	mkdir -p "$CFS/srpt/$TPORT/$TPORT/acls/$IP/lun_0" &&
		ln -s "$CFS/srpt/$TPORT/$TPORT/lun/lun_0" "$CFS/srpt/$TPORT/$TPORT/acls/$IP/lun_0/lun_0" ||
		fail "ACL"
	echo 1 > "$CFS/srpt/$TPORT/$TPORT/enable" || fail "enabling the TPG"
	# the lab guest has no udev to load the SCSI disk driver on demand
	modprobe sd_mod || fail "cannot load sd_mod"
	modprobe ib_srp || fail "cannot load ib_srp"
	wait_for 10 test -e "/sys/class/infiniband_srp/srp-$DEV-1/add_target" ||
		fail "ib_srp did not add $DEV"
	guid=$(cat /sys/module/ib_srpt/parameters/srpt_service_guid)
	guid=${guid#0x}
	echo "id_ext=$guid,ioc_guid=$guid,dest=$IP:$CM_PORT" \
		> "/sys/class/infiniband_srp/srp-$DEV-1/add_target" ||
		{ dmesg | tail -n 20; fail "SRP login over $DEV refused"; }
	host=
	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p" ] && host=${p##*/port-} && host=${host%%:*}
	done
	[ -n "$host" ] || fail "no SRP remote port"
	wait_for 10 scsi_disk_of "/sys/class/scsi_host/host$host/device" ||
		fail "no SCSI disk on SRP host $host"
	SDEV=/dev/$SCSI_DISK
	echo "SRP host $host: $SDEV, $(cat "/sys/class/block/${SDEV#/dev/}/size") sectors"
}

srp_verify() { scsi_disk_verify "$SDEV" "$BACK" "$MIB"; }

srp_no_qp_errors() {
	ulp_no_qp_errors "$DEV" "$(dmesg | grep -c 'ib_srp: reconnect') SRP reconnects"
}

test_srp_auto() {
	srp_require
	srp_setup auto
	srp_verify
	expect_rc_modes "$DEV" auto
	srp_no_qp_errors
}

test_srp_standard() {
	srp_require
	srp_setup standard
	srp_verify
	expect_rc_modes "$DEV" standard
	srp_no_qp_errors
}

# netem on lo: loss and reordering both ways.  The fault must have
# happened (netem dropped) and mrxe must have recovered it, before SCSI's
# command timeout (30 s) would have aborted anything.
test_srp_loss() {
	srp_require
	srp_setup auto
	# shellcheck disable=SC2086
	ulp_lo_netem "$DEV" srp_verify ${MRXE_SRP_NETEM:-loss 1% delay 1ms 1ms}
}

# The device goes away under a busy SRP initiator and target (`rdma link
# delete`): ib_core removes it from ib_srp (its SCSI host goes) and ib_srpt
# (its channels close): the delete must return and the writer must end.
test_srp_link_delete() {
	srp_require
	srp_setup auto
	disk_writer_start "$SDEV" $((MIB * 2 - 2))
	link_delete_busy "$DEV" "SRP" || return 1
	disk_writer_ended 60 "its SCSI host went"
	[ -z "$(ls /sys/class/srp_remote_ports 2>/dev/null)" ] ||
		fail "an SRP remote port outlived the device"
	echo "device gone, writer ended $((SECONDS - LINK_DELETED_AT)) s after the delete"
}

mrxe_run_tests test_srp_auto test_srp_standard test_srp_loss test_srp_link_delete
