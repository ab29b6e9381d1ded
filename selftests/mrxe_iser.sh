#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# selftest-timeout: 900
# A fourth kernel ULP end to end: iSCSI Extensions for RDMA (RFC 7145).
# The initiator is ib_iser driven by open-iscsi's iscsid/iscsiadm (the
# iSCSI login runs in userland, the full-feature phase in the kernel);
# the target is ib_isert in the kernel's LIO target core, configured
# through configfs (a fileio backstore on a tmpfs file, one LUN, an ACL
# for the initiator's IQN, an iSER network portal).  Both sit on one mrxe
# device in init_net and connect through the RDMA/CM to the device's own
# address, so the packets go through lo.
#
# iSER carries its iSCSI PDUs with SEND (the initiator's with
# SEND_WITH_INV where the target invalidates the initiator's MR), the
# target moves the data with RDMA READ (SCSI writes) and RDMA WRITE (SCSI
# reads) through the kernel's rdma_rw API, into memory the initiator
# registered with fast-register MRs.  Every test writes random data to the
# SCSI disk with O_DIRECT, reads it back and compares both the read and
# the target's backing file.  Without faults no QP may go to error (iSCSI
# would log in again and carry on: only the counters show it).  The device
# default is `auto`, so the QPs upgrade to MetaRoCE; test_iser_standard
# pins standard mode, test_iser_loss puts netem loss and reordering on
# lo, test_iser_link_delete removes the device under I/O.
#
# The guest's /etc is the host's, read-only: iscsid's configuration, the
# initiator name and its node database live on a tmpfs mounted over
# /etc/iscsi for the test's time.

MRXE_TEST_TIMEOUT=${MRXE_TEST_TIMEOUT:-300}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mrxe_xfer_lib.sh"

NDEV=mrxeis0
DEV=mrxeiser0
IP=10.234.0.1
PORTAL=$IP:3260
MIB=${MRXE_ISER_MIB:-16}
TIQN=iqn.2026-12.org.mrxe:target
IIQN=iqn.2026-12.org.mrxe:initiator
CFS=/sys/kernel/config/target
TPG=$CFS/iscsi/$TIQN/tpgt_1
ETC=/etc/iscsi
BACK=
SDEV=
ISCSID_PID=
ETC_MOUNTED=

iser_require() {
	local m
	mrxe_require_module
	if ! command -v iscsid > /dev/null || ! command -v iscsiadm > /dev/null; then
		skip "open-iscsi (iscsid, iscsiadm) not installed"
	fi
	for m in target_core_mod target_core_file iscsi_target_mod ib_isert ib_iser sd_mod; do
		modinfo "$m" > /dev/null 2>&1 || skip "module $m not available"
	done
	[ -d /sys/kernel/config ] || modprobe configfs 2>/dev/null
	[ -d /sys/kernel/config ] || skip "no configfs"
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config ||
		skip "cannot mount configfs"
	modprobe target_core_mod || skip "cannot load target_core_mod"
	for m in "$CFS"/core/*_[0-9]* "$CFS/iscsi"; do
		[ -e "$m" ] && skip "the LIO target is already configured here ($m)"
	done
	pgrep -x iscsid > /dev/null && skip "an iscsid is already running"
	ulp_init_net_load
}

# iscsid_up: iscsid listens on its control socket (abstract: no file;
# `iscsiadm -m session` reads sysfs and works without it).
iscsid_up() { grep -q '@ISCSIADM_ABSTRACT_NAMESPACE' /proc/net/unix; }

iscsiadm_node() { iscsiadm -m node -T "$TIQN" -p "$PORTAL" -I iser "$@"; }

iser_logout() {
	iscsiadm_node --logout > /dev/null 2>&1
	iscsiadm_node -o delete > /dev/null 2>&1
	return 0
}

iser_cleanup() {
	set +e
	tc qdisc del dev lo root 2>/dev/null
	[ -n "$ISCSID_PID" ] && iser_logout
	if [ -n "$ISCSID_PID" ]; then
		kill "$ISCSID_PID" 2>/dev/null
		wait_for 10 pid_gone "$ISCSID_PID" || kill -9 "$ISCSID_PID"
		wait "$ISCSID_PID" 2>/dev/null
	fi
	if [ -d "$TPG" ]; then
		echo 0 > "$TPG/enable"
		rm -f "$TPG/acls/$IIQN/lun_0/lun_0"
		rmdir "$TPG/acls/$IIQN/lun_0" "$TPG/acls/$IIQN"
		rm -f "$TPG/lun/lun_0/disk0"
		rmdir "$TPG/lun/lun_0"
		rmdir "$TPG/np/$PORTAL"
		rmdir "$TPG" "$CFS/iscsi/$TIQN"
	fi
	[ -d "$CFS/iscsi" ] && rmdir "$CFS/iscsi"
	rmdir "$CFS/core/fileio_0/disk0" "$CFS/core/fileio_0" 2>/dev/null
	modprobe -r ib_iser ib_isert 2>/dev/null
	rdma link delete "$DEV" 2>/dev/null
	ip link del "$NDEV" 2>/dev/null
	[ -n "$ETC_MOUNTED" ] && umount "$ETC"
	[ -n "$BACK" ] && rm -f "$BACK" "$BACK.src" "$BACK.back"
	modprobe -r iscsi_target_mod target_core_file target_core_mod \
		libiscsi scsi_transport_iscsi 2>/dev/null
	return 0
}

# iser_target: a $((MIB * 2)) MiB fileio LUN exported as $TIQN on an iSER
# portal $PORTAL (the TCP portal configfs creates first stays: discovery
# would use it; the login here goes to the iSER one), ACL for $IIQN.
iser_target() {
	BACK=$(mktemp /tmp/mrxe-iser.XXXXXX)
	truncate -s $((MIB * 2 << 20)) "$BACK"
	modprobe target_core_file || fail "cannot load target_core_file"
	mkdir -p "$CFS/core/fileio_0/disk0" || fail "fileio backstore"
	echo "fd_dev_name=$BACK,fd_dev_size=$((MIB * 2 << 20))" > "$CFS/core/fileio_0/disk0/control" &&
		echo 1 > "$CFS/core/fileio_0/disk0/enable" || fail "fileio backstore refused"
	modprobe iscsi_target_mod || fail "cannot load iscsi_target_mod"
	mkdir -p "$TPG/np/$PORTAL" || { dmesg | tail -n 5; fail "iSCSI TPG/portal"; }
	echo 1 > "$TPG/np/$PORTAL/iser" ||
		{ dmesg | tail -n 10; fail "ib_isert refused the iSER portal $PORTAL"; }
	mkdir "$TPG/lun/lun_0" || fail "LUN"
	ln -s "$CFS/core/fileio_0/disk0" "$TPG/lun/lun_0/disk0" || fail "LUN link"
	mkdir -p "$TPG/acls/$IIQN/lun_0" &&
		ln -s "$TPG/lun/lun_0" "$TPG/acls/$IIQN/lun_0/lun_0" || fail "ACL"
	echo 0 > "$TPG/attrib/authentication" || fail "TPG authentication"
	echo 1 > "$TPG/enable" || fail "enabling the TPG"
}

# iser_initiator: iscsid on a tmpfs /etc/iscsi (initiator $IIQN, short
# timeouts so that a dead connection fails I/O in seconds, not minutes).
iser_initiator() {
	mount -t tmpfs -o size=4m mrxe-iscsi "$ETC" || fail "tmpfs over $ETC"
	ETC_MOUNTED=1
	echo "InitiatorName=$IIQN" > "$ETC/initiatorname.iscsi"
	cat > "$ETC/iscsid.conf" <<-EOF
	node.startup = manual
	node.session.timeo.replacement_timeout = 10
	node.conn[0].timeo.login_timeout = 15
	node.conn[0].timeo.logout_timeout = 10
	node.conn[0].timeo.noop_out_interval = 5
	node.conn[0].timeo.noop_out_timeout = 10
	node.session.initial_login_retry_max = 2
	EOF
	mkdir -p /run/lock/iscsi /var/lib/iscsi
	# the lab guest has no udev to load the SCSI disk driver on demand
	modprobe sd_mod || fail "cannot load sd_mod"
	modprobe ib_iser || fail "cannot load ib_iser"
	# its own session: iscsid signals its process group when it stops
	setsid iscsid -f -c "$ETC/iscsid.conf" -i "$ETC/initiatorname.iscsi" > "$XFER_TMP/iscsid.log" 2>&1 &
	ISCSID_PID=$!
	wait_for 10 iscsid_up || { cat "$XFER_TMP/iscsid.log"; fail "iscsid did not start"; }
}

# iser_setup MODE: the mrxe device (transport MODE for new QPs), the target
# and the initiator logged in to it over iSER; SDEV is the disk that
# appeared.
iser_setup() {
	local mode=$1 s
	trap iser_cleanup EXIT
	ulp_dummy_dev "$NDEV" "$IP" "$DEV" "$mode"
	iser_target
	iser_initiator
	iscsiadm_node -o new > /dev/null || fail "iscsiadm: node record for $TIQN"
	iscsiadm_node --login ||
		{ cat "$XFER_TMP/iscsid.log"; dmesg | tail -n 20; fail "iSER login over $DEV refused"; }
	iscsiadm -m session | grep -q "^iser: .*$TIQN" ||
		{ iscsiadm -m session; fail "no iSER session to $TIQN"; }
	for s in /sys/class/iscsi_session/session*; do
		[ -e "$s" ] && break
	done
	wait_for 10 scsi_disk_of "$s/device" || fail "no SCSI disk in ${s##*/}"
	SDEV=/dev/$SCSI_DISK
	echo "iSER ${s##*/}: $SDEV, $(cat "/sys/class/block/$SCSI_DISK/size") sectors"
	# the session really is iSER over $DEV: its QPs are listed there
	[ -n "$(rc_qp_modes "$DEV")" ] || fail "no RC QP on $DEV: the session is not over $DEV"
}

iser_verify() { scsi_disk_verify "$SDEV" "$BACK" "$MIB"; }

iser_no_qp_errors() {
	ulp_no_qp_errors "$DEV" "$(dmesg | grep -ci 'iser.*\(error\|reconnect\)') iSER error lines"
}

test_iser_auto() {
	iser_require
	iser_setup auto
	iser_verify
	expect_rc_modes "$DEV" auto
	iser_no_qp_errors
}

test_iser_standard() {
	iser_require
	iser_setup standard
	iser_verify
	expect_rc_modes "$DEV" standard
	iser_no_qp_errors
}

# netem on lo: loss and reordering both ways.  The fault must have
# happened (netem dropped) and mrxe must have recovered it, before the
# SCSI command timeout (30 s) would have aborted anything.
test_iser_loss() {
	iser_require
	iser_setup auto
	# shellcheck disable=SC2086
	ulp_lo_netem "$DEV" iser_verify ${MRXE_ISER_NETEM:-loss 1% delay 1ms 1ms}
}

# The device goes away under a busy initiator and target (`rdma link
# delete`): the RDMA/CM tells ib_iser and ib_isert (DEVICE_REMOVAL), the
# delete must return, the session's I/O fails after the replacement
# timeout (10 s here) and the writer ends.
test_iser_link_delete() {
	iser_require
	iser_setup auto
	disk_writer_start "$SDEV" $((MIB * 2 - 2))
	link_delete_busy "$DEV" "iSER" || return 1
	disk_writer_ended 90 "the session lost its connection"
	echo "device gone, writer ended $((SECONDS - LINK_DELETED_AT)) s after the delete"
}

mrxe_run_tests test_iser_auto test_iser_standard test_iser_loss test_iser_link_delete
