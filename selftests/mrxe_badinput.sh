#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bad input to `rdma link add/delete` and rmmod: each gets a clear error or
# the one documented outcome (Documentation/testing.rst), never an oops
# (lib.sh checks dmesg after every test).
. "$(dirname "$0")/lib.sh"

DEV0=$MRXE_DEV
DEV1=${MRXE_DEV%0}1

cleanup() {
	set +e
	mrxe_del_all_links
	ip link del mrxetun0 2>/dev/null
	mrxe_netns_cleanup
}

setup() {
	mrxe_require_module
	trap cleanup EXIT
	mrxe_netns_setup || fail "netns/veth setup failed"
}

test_bad_unknown_netdev() {
	setup
	expect_fail "unknown netdev" link_add "$NS_A" "$DEV0" nosuchdev0
	dev_gone "$DEV0" || fail "$DEV0 exists after a failed add"
}

# A netdev of another namespace is as unknown as a missing one.
test_bad_netdev_of_other_netns() {
	setup
	expect_fail "netdev of another netns" link_add "$NS_A" "$DEV0" "$VETH_B"
	dev_gone "$DEV0" || fail "$DEV0 exists after a failed add"
}

test_bad_duplicate_name() {
	setup
	link_add "$NS_A" "$DEV0" "$VETH_A" || fail "first add failed"
	expect_fail "duplicate name" link_add "$NS_B" "$DEV0" "$VETH_B"
	nsa rdma link show "$DEV0/1" | grep -qw "netdev $VETH_A" ||
		fail "$DEV0 no longer bound to $VETH_A after the duplicate add"
	dev_gone "$DEV1" || fail "unexpected $DEV1"
}

# Same netdev twice under another name: refused with EEXIST ("File exists"),
# as stock rxe does (its newlink refuses a netdev that already has a device):
# two devices on one netdev would share its GIDs and its UDP 4791 traffic.
# The first device stays bound and working.
test_bad_same_netdev_twice() {
	local out
	setup
	link_add "$NS_A" "$DEV0" "$VETH_A" || fail "first add failed"
	if out=$(link_add "$NS_A" "$DEV1" "$VETH_A" 2>&1); then
		fail "second link on $VETH_A accepted"
	fi
	echo "second link on $VETH_A refused: $out"
	echo "$out" | grep -q "File exists" || fail "expected EEXIST (File exists), got: $out"
	dev_gone "$DEV1" || fail "$DEV1 exists after the refused add"
	nsa rdma link show "$DEV0/1" | grep -qw "netdev $VETH_A" ||
		fail "$DEV0 no longer bound to $VETH_A"
	wait_for 5 port_state_is "$DEV0" ACTIVE || fail "$DEV0 not ACTIVE"
}

# IBA Annex A16/A17: RoCE runs over Ethernet only.
test_bad_loopback_netdev() {
	[ "$MRXE_LINK_TYPE" = rxe ] && skip "stock rxe accepts any netdev (mrxe must not)"
	setup
	expect_fail "loopback (ARPHRD_LOOPBACK) netdev" link_add "$NS_A" "$DEV0" lo
	dev_gone "$DEV0" || fail "$DEV0 exists after a failed add on lo"
}

test_bad_tun_netdev() {
	[ "$MRXE_LINK_TYPE" = rxe ] && skip "stock rxe accepts any netdev (mrxe must not)"
	setup
	modprobe tun 2>/dev/null
	ip tuntap add dev mrxetun0 mode tun || skip "cannot create a tun device"
	ip link set mrxetun0 up
	expect_fail "tun (ARPHRD_NONE) netdev" \
		rdma link add "$DEV0" type "$MRXE_LINK_TYPE" netdev mrxetun0
	dev_gone "$DEV0" || fail "$DEV0 exists after a failed add on tun"
}

# IB_DEVICE_NAME_MAX (64) counts the NUL.  The rdma core (nldev policy plus
# nla_strscpy) refuses names of 65+ characters and truncates a 64-character
# name to 63 before the driver sees it, so for 64 either outcome is accepted
# as long as no device has a name longer than 63.
test_bad_name_too_long() {
	setup
	local n63 n64 n100 d
	n63=${MRXE_LINK_TYPE}$(printf 'x%.0s' $(seq $((63 - ${#MRXE_LINK_TYPE}))))
	n64=${n63}y
	n100=${n64}$(printf 'z%.0s' $(seq 36))
	expect_fail "name of 100 chars" link_add "$NS_A" "$n100" "$VETH_A"
	[ -z "$(mrxe_links)" ] || fail "devices after a failed add: $(mrxe_links)"
	if link_add "$NS_A" "$n64" "$VETH_A" 2>&1; then
		d=$(mrxe_links)
		echo "64-char name: created as '$d' (${#d} chars)"
		[ "$d" = "$n63" ] || fail "64-char name became '$d', want the 63-char prefix"
		rdma link delete "$d" || fail "deleting $d failed"
	else
		echo "64-char name: refused"
	fi
	wait_for 5 eval '[ -z "$(mrxe_links)" ]' || fail "devices left: $(mrxe_links)"
	# The longest legal name (IB_DEVICE_NAME_MAX - 1) works.
	link_add "$NS_A" "$n63" "$VETH_A" || fail "a 63-character name was refused"
	dev_exists "$n63" || fail "no device $n63"
	rdma link delete "$n63" || fail "deleting $n63 failed"
}

test_bad_name_format() {
	setup
	expect_fail "name with %d" link_add "$NS_A" "${MRXE_LINK_TYPE}%d" "$VETH_A"
	[ -z "$(mrxe_links)" ] || fail "devices after failed adds: $(mrxe_links)"
}

test_bad_delete_twice() {
	setup
	link_add "$NS_A" "$DEV0" "$VETH_A" || fail "add failed"
	rdma link delete "$DEV0" || fail "first delete failed"
	expect_fail "second delete" rdma link delete "$DEV0"
	expect_fail "delete of a never-created link" rdma link delete "${DEV0}nosuch"
}

# rmmod with live links succeeds and removes them all, as for stock rxe
# (module exit unregisters every device of the driver: ib_unregister_driver);
# nothing is left in `rdma link`.
test_bad_rmmod_with_links() {
	setup
	link_add "$NS_A" "$DEV0" "$VETH_A" || fail "add $DEV0 failed"
	link_add "$NS_B" "$DEV1" "$VETH_B" || fail "add $DEV1 failed"
	rmmod "$MRXE_MODULE" 2>&1 || fail "rmmod with live links refused"
	! mrxe_loaded || fail "rmmod succeeded but module still loaded"
	wait_for 5 dev_gone "$DEV0" || fail "$DEV0 survived rmmod"
	wait_for 5 dev_gone "$DEV1" || fail "$DEV1 survived rmmod"
	! nsa rdma link show 2>/dev/null | grep -qw "$DEV0/1" || fail "rdma link lists $DEV0"
	! nsb rdma link show 2>/dev/null | grep -qw "$DEV1/1" || fail "rdma link lists $DEV1"
	# The system is consistent: load again, add again, remove again.
	mrxe_load || fail "reload failed"
	link_add "$NS_A" "$DEV0" "$VETH_A" || fail "add after reload failed"
	wait_for 5 port_state_is "$DEV0" ACTIVE || fail "$DEV0 not ACTIVE after reload"
	rdma link delete "$DEV0" || fail "delete after reload failed"
	rmmod "$MRXE_MODULE" || fail "final rmmod failed"
}

mrxe_run_tests test_bad_unknown_netdev test_bad_netdev_of_other_netns \
	test_bad_duplicate_name test_bad_same_netdev_twice test_bad_loopback_netdev \
	test_bad_tun_netdev test_bad_name_too_long test_bad_name_format \
	test_bad_delete_twice test_bad_rmmod_with_links
