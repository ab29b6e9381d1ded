#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# selftest-timeout: 900
# A second kernel ULP end to end: NFSv4.2 over RDMA (svcrdma server,
# xprtrdma client, module rpcrdma) over one mrxe device in init_net, the
# client mounting the device's own address (the packets go through lo).
# No NFS userland is needed: the server is configured through the nfsd
# filesystem (versions, an "rdma 20049" listener, threads) and the export
# through the kernel's export caches (/proc/net/rpc/*/channel: the entries
# rpc.mountd would write), and the client mounts with the kernel's own text
# options (mount -i).  Every test writes random data through the mount with
# O_DIRECT and buffered, reads it back, and compares both the read and the
# file on the server's side of the export.
#
# The RPC/RDMA transport (RFC 8166) sends its RPC messages with SEND, moves
# bulk data with RDMA READ and WRITE chunks the server drives, registers
# client memory with fast-register MRs and invalidates it locally or
# remotely: another shape of verbs use than NVMe's.  The device default is
# `auto`, so its RC QPs upgrade to MetaRoCE; test_nfs_standard pins
# standard mode, test_nfs_loss puts netem loss and reordering on lo and
# checks that mrxe recovered what netem dropped.

MRXE_TEST_TIMEOUT=${MRXE_TEST_TIMEOUT:-300}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mrxe_xfer_lib.sh"

NDEV=mrxenf0
DEV=mrxenfs0
IP=10.232.0.1
PORT=20049
MIB=${MRXE_NFS_MIB:-32}
EXP=
MNT=

nfs_require() {
	mrxe_require_module
	local m
	for m in nfsd rpcrdma nfsv4; do
		modprobe "$m" 2>/dev/null || skip "module $m not available"
	done
	[ -e /proc/fs/nfsd/threads ] || mount -t nfsd nfsd /proc/fs/nfsd ||
		skip "cannot mount the nfsd filesystem"
	[ "$(cat /proc/fs/nfsd/threads)" = 0 ] || skip "an NFS server already runs here"
	ulp_init_net_load
}

nfs_cleanup() {
	set +e
	tc qdisc del dev lo root 2>/dev/null
	[ -n "$MNT" ] && { umount "$MNT" 2>/dev/null || umount -f "$MNT"; }
	echo 0 > /proc/fs/nfsd/threads
	# forget the export (the caches keep entries until they expire)
	echo $(( $(date +%s) + 36000 )) > /proc/net/rpc/nfsd.export/flush 2>/dev/null
	echo $(( $(date +%s) + 36000 )) > /proc/net/rpc/nfsd.fh/flush 2>/dev/null
	echo $(( $(date +%s) + 36000 )) > /proc/net/rpc/auth.unix.ip/flush 2>/dev/null
	[ -n "$MNT" ] && rmdir "$MNT"
	[ -n "$EXP" ] && rm -rf "$EXP" "$EXP.recovery" "$EXP.src" "$EXP.back"
	rdma link delete "$DEV" 2>/dev/null
	ip link del "$NDEV" 2>/dev/null
	# unregisters svcrdma's and xprtrdma's ib_clients from mrxe's devices
	modprobe -r rpcrdma 2>/dev/null
	return 0
}

# nfs_setup MODE: the mrxe device (transport MODE for new QPs), the export
# (EXP, a tmpfs directory, fsid 0: the NFSv4 root), nfsd listening for RDMA
# on $IP:$PORT, and the client's mount on MNT.
nfs_setup() {
	local mode=$1 until
	trap nfs_cleanup EXIT
	ulp_dummy_dev "$NDEV" "$IP" "$DEV" "$mode"
	EXP=$(mktemp -d /tmp/mrxe-nfs.XXXXXX)
	MNT=$(mktemp -d /tmp/mrxe-nfsmnt.XXXXXX)
	mkdir "$EXP.recovery"
	# What rpc.mountd would answer, written ahead (the channels take
	# expiry times in seconds since the epoch): client $IP is in domain
	# "*"; "*" exports $EXP with rw, insecure (0x2), no_subtree_check
	# (0x400) and fsid=0 (0x2000), no root squash; fsid 0 (type 1, FSID_NUM)
	# is $EXP.
	until=$(( $(date +%s) + 36000 ))
	echo "nfsd $IP $until *" > /proc/net/rpc/auth.unix.ip/channel ||
		fail "auth.unix.ip entry refused"
	echo "* $EXP $until $((0x2 | 0x400 | 0x2000)) 65534 65534 0" \
		> /proc/net/rpc/nfsd.export/channel || fail "export entry refused"
	echo "* 1 \\x00000000 $until $EXP" > /proc/net/rpc/nfsd.fh/channel ||
		fail "filehandle entry refused"
	# NFSv4 only; an empty recovery directory ends the grace period at once
	echo "-3 +4 +4.1 +4.2" > /proc/fs/nfsd/versions
	echo "$EXP.recovery" > /proc/fs/nfsd/nfsv4recoverydir 2>/dev/null || true
	echo 10 > /proc/fs/nfsd/nfsv4gracetime 2>/dev/null || true
	echo "rdma $PORT" > /proc/fs/nfsd/portlist || fail "nfsd refused an RDMA listener"
	echo 4 > /proc/fs/nfsd/threads || fail "nfsd did not start"
	# nothing to reclaim: end the grace period now (6.1 otherwise keeps it
	# for nfsv4gracetime and the client's OPENs retry NFS4ERR_GRACE)
	echo Y > /proc/fs/nfsd/v4_end_grace 2>/dev/null || true
	echo "nfsd listening: $(tr '\n' ' ' < /proc/fs/nfsd/portlist)"
	mount -i -t nfs4 -o "vers=4.2,proto=rdma,port=$PORT,addr=$IP,clientaddr=$IP" \
		"$IP:/" "$MNT" || { dmesg | tail -n 20; fail "NFS mount over $DEV failed"; }
	grep " $MNT " /proc/mounts
	grep -q " $MNT nfs4 .*proto=rdma" /proc/mounts || fail "the mount is not over RDMA"
}

# nfs_verify: $MIB MiB written with O_DIRECT and read back with O_DIRECT, a
# second file written buffered (cp + sync); both compared with the source
# and with the server's files.
nfs_verify() {
	head -c $((MIB << 20)) /dev/urandom > "$EXP.src"
	dd if="$EXP.src" of="$MNT/direct" bs=1M oflag=direct status=none ||
		fail "O_DIRECT write through the mount failed"
	dd if="$MNT/direct" of="$EXP.back" bs=1M iflag=direct status=none ||
		fail "O_DIRECT read through the mount failed"
	cmp "$EXP.src" "$EXP.back" || fail "data read back differs"
	cmp "$EXP.src" "$EXP/direct" || fail "the server's file differs"
	cp "$EXP.src" "$MNT/buffered" && sync || fail "buffered write failed"
	cmp "$EXP.src" "$EXP/buffered" || fail "the server's buffered file differs"
	echo 3 > /proc/sys/vm/drop_caches
	cmp "$EXP.src" "$MNT/buffered" || fail "buffered read back differs"
	echo "$MIB MiB O_DIRECT and $MIB MiB buffered: identical on both sides"
}

test_nfs_auto() {
	nfs_require
	nfs_setup auto
	nfs_verify
	expect_rc_modes "$DEV" auto
}

test_nfs_standard() {
	nfs_require
	nfs_setup standard
	nfs_verify
	expect_rc_modes "$DEV" standard
}

# netem on lo: loss and reordering both ways.  The fault must have
# happened (netem dropped) and mrxe must have recovered it.
test_nfs_loss() {
	nfs_require
	nfs_setup auto
	# shellcheck disable=SC2086
	ulp_lo_netem "$DEV" nfs_verify ${MRXE_NFS_NETEM:-loss 1% delay 1ms 1ms}
}

# The device goes away under a mounted, busy NFS client and server
# (`rdma link delete`, as an admin or a netdev unregister would): ib_core
# removes it from svcrdma and xprtrdma (DEVICE_REMOVAL on their rdma_cm
# IDs), which must let go of it: the delete must return.  A hard mount
# then waits for its server, so the device comes back (`rdma link add`)
# and the writer must finish over it, its file identical on the server.
test_nfs_link_bounce() {
	local wp
	nfs_require
	nfs_setup auto
	head -c $((MIB * 4 << 20)) /dev/urandom > "$EXP.src"
	dd if="$EXP.src" of="$MNT/busy" bs=1M oflag=direct status=none &
	wp=$!
	link_delete_busy "$DEV" "NFS/RDMA" || return 1
	kill -0 $wp 2>/dev/null || echo "NOTE: the writer ended before the device came back"
	sleep 2
	rdma link add "$DEV" type mrxe netdev "$NDEV" || fail "rdma link add (again)"
	wait_for 120 pid_gone $wp || { kill -9 $wp; fail "the writer did not finish within 120 s of the device's return"; }
	wait $wp || fail "the writer failed (exit $?)"
	echo "writer done $((SECONDS - LINK_DELETED_AT)) s after the delete; $(stat_value "$DEV" rcvd_pkts) packets over the new device"
	cmp "$EXP.src" "$EXP/busy" || fail "the server's file differs"
	echo "$((MIB * 4)) MiB identical on the server"
}

mrxe_run_tests test_nfs_auto test_nfs_standard test_nfs_loss test_nfs_link_bounce
