#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rdma link add/delete over a veth pair split across two network namespaces;
# device and port attributes, GID table, port state following the netdev,
# netdev unregister while the link exists.
. "$(dirname "$0")/lib.sh"

DEV0=$MRXE_DEV
DEV1=${MRXE_DEV%0}1

cleanup() {
	set +e
	mrxe_del_all_links
	mrxe_netns_cleanup
}

# setup: module, namespaces, DEV0 on VETH_A inside NS_A.
setup_one() {
	mrxe_require_module
	trap cleanup EXIT
	mrxe_netns_setup || fail "netns/veth setup failed"
	link_add "$NS_A" "$DEV0" "$VETH_A" || fail "rdma link add $DEV0 netdev $VETH_A failed"
	wait_for 5 dev_exists "$DEV0" || fail "no /sys/class/infiniband/$DEV0"
}

test_link_add_delete() {
	setup_one
	rdma system show
	local show
	show=$(nsa rdma link show "$DEV0/1") || fail "rdma link show $DEV0/1 failed"
	echo "$show"
	echo "$show" | grep -qw "netdev $VETH_A" || fail "link not bound to $VETH_A"
	rdma link delete "$DEV0" || fail "rdma link delete failed"
	wait_for 5 dev_gone "$DEV0" || fail "$DEV0 still present after delete"
	! rdma link show "$DEV0/1" >/dev/null 2>&1 || fail "rdma link show still lists $DEV0"
}

test_link_two_namespaces() {
	setup_one
	link_add "$NS_B" "$DEV1" "$VETH_B" || fail "rdma link add $DEV1 netdev $VETH_B failed"
	wait_for 5 dev_exists "$DEV1" || fail "no $DEV1"
	nsa rdma link show "$DEV0/1" | grep -qw "netdev $VETH_A" || fail "$DEV0 not on $VETH_A"
	nsb rdma link show "$DEV1/1" | grep -qw "netdev $VETH_B" || fail "$DEV1 not on $VETH_B"
	rdma link show
	rdma link delete "$DEV1"
	wait_for 5 dev_gone "$DEV1" || fail "$DEV1 still present"
	dev_exists "$DEV0" || fail "deleting $DEV1 removed $DEV0"
}

test_link_attributes() {
	setup_one
	local d=/sys/class/infiniband/$DEV0 guid
	grep -q 'CA' "$d/node_type" || fail "node_type: $(cat "$d/node_type")"
	guid=$(cat "$d/node_guid")
	echo "node_guid $guid node_type $(cat "$d/node_type")"
	[ "$guid" != 0000:0000:0000:0000 ] || fail "node_guid is zero"
	[ "$(cat "$d/ports/1/link_layer")" = Ethernet ] ||
		fail "link_layer: $(cat "$d/ports/1/link_layer")"
	wait_for 5 port_state_is "$DEV0" ACTIVE || fail "port state $(port_state "$DEV0"), want ACTIVE"
	grep -q LinkUp "$d/ports/1/phys_state" || fail "phys_state: $(cat "$d/ports/1/phys_state")"
	echo "state $(cat "$d/ports/1/state"), phys_state $(cat "$d/ports/1/phys_state"), rate $(cat "$d/ports/1/rate" 2>/dev/null)"
}

test_link_gids() {
	setup_one
	local g4 g6 gll ll
	g4=$(gid_of_ipv4 "$IP_A")
	g6=$(gid_of_ipv6 "$IP6_A")
	ll=$(nsa ip -6 -o addr show dev "$VETH_A" scope link | awk '{ print $4 }' | cut -d/ -f1)
	[ -n "$ll" ] || fail "no IPv6 link-local address on $VETH_A"
	gll=$(gid_of_ipv6 "$ll")
	wait_for 5 has_gid "$DEV0" "$g4" "RoCE v2" || { dump_gids "$DEV0"; fail "no RoCE v2 GID $g4 for $IP_A"; }
	wait_for 5 has_gid "$DEV0" "$g6" "RoCE v2" || { dump_gids "$DEV0"; fail "no RoCE v2 GID $g6 for $IP6_A"; }
	wait_for 5 has_gid "$DEV0" "$gll" "RoCE v2" || { dump_gids "$DEV0"; fail "no RoCE v2 GID $gll for $ll"; }
	# Addresses added and removed while the link exists.
	nsa ip addr add 192.168.78.1/24 dev "$VETH_A"
	wait_for 5 has_gid "$DEV0" "$(gid_of_ipv4 192.168.78.1)" "RoCE v2" ||
		{ dump_gids "$DEV0"; fail "GID for a new address 192.168.78.1 missing"; }
	nsa ip addr del 192.168.78.1/24 dev "$VETH_A"
	wait_for 5 eval '! has_gid "$DEV0" "$(gid_of_ipv4 192.168.78.1)" "RoCE v2"' ||
		{ dump_gids "$DEV0"; fail "GID of a removed address 192.168.78.1 still present"; }
	dump_gids "$DEV0"
}

test_link_port_down_up() {
	setup_one
	wait_for 5 port_state_is "$DEV0" ACTIVE || fail "initial state $(port_state "$DEV0")"
	nsa ip link set "$VETH_A" down
	wait_for 5 port_state_is "$DEV0" DOWN || fail "after link down: $(port_state "$DEV0"), want DOWN"
	echo "netdev down -> $(port_state "$DEV0")"
	nsa ip link set "$VETH_A" up
	wait_for 5 port_state_is "$DEV0" ACTIVE || fail "after link up: $(port_state "$DEV0"), want ACTIVE"
	echo "netdev up -> $(port_state "$DEV0")"
	# Carrier loss: the veth peer going down takes our carrier away.
	nsb ip link set "$VETH_B" down
	wait_for 5 port_state_is "$DEV0" DOWN || fail "after peer down: $(port_state "$DEV0"), want DOWN"
	nsb ip link set "$VETH_B" up
	wait_for 5 port_state_is "$DEV0" ACTIVE || fail "after peer up: $(port_state "$DEV0"), want ACTIVE"
	echo "carrier off/on -> DOWN/ACTIVE"
}

# The active MTU is only visible through verbs: needs a provider.
test_link_mtu_change() {
	setup_one
	local prov=$MRXE_REPO/build/libmrxe-rdmav34.so
	if [ "$MRXE_LINK_TYPE" = mrxe ]; then
		[ -f "$prov" ] || skip "no provider ($prov) to query the active MTU"
		export RDMAV_DRIVERS=$MRXE_REPO/build/libmrxe
	fi
	local m
	active_mtu() { ibv_devinfo -d "$DEV0" | awk '/active_mtu/ { print $2; exit }'; }
	nsa ip link set "$VETH_A" mtu 1500
	wait_for 5 eval '[ "$(active_mtu)" = 1024 ]' || fail "mtu 1500: active_mtu $(active_mtu), want 1024"
	nsa ip link set "$VETH_A" mtu 9000
	nsb ip link set "$VETH_B" mtu 9000
	wait_for 5 eval '[ "$(active_mtu)" = 4096 ]' || fail "mtu 9000: active_mtu $(active_mtu), want 4096"
	nsa ip link set "$VETH_A" mtu 2200
	wait_for 5 eval '[ "$(active_mtu)" = 2048 ]' || fail "mtu 2200: active_mtu $(active_mtu), want 2048"
	nsa ip link set "$VETH_A" mtu 1500
	wait_for 5 eval '[ "$(active_mtu)" = 1024 ]' || fail "back to 1500: active_mtu $(active_mtu), want 1024"
	m=$(active_mtu)
	echo "mtu 1500/9000/2200/1500 -> active_mtu 1024/4096/2048/$m"
}

test_link_netdev_unregister() {
	setup_one
	nsa ip link del "$VETH_A" || fail "deleting $VETH_A failed"
	wait_for 10 dev_gone "$DEV0" || fail "$DEV0 survived the unregister of $VETH_A"
	! rdma link show "$DEV0/1" >/dev/null 2>&1 || fail "rdma link still lists $DEV0"
	echo "deleting $VETH_A removed $DEV0"
}

test_link_netns_delete() {
	setup_one
	link_add "$NS_B" "$DEV1" "$VETH_B" || fail "rdma link add $DEV1 failed"
	# Deleting a namespace destroys its veth end (and so the pair).
	ip netns del "$NS_A"
	wait_for 10 dev_gone "$DEV0" || fail "$DEV0 survived deleting $NS_A"
	wait_for 10 dev_gone "$DEV1" || fail "$DEV1 survived its veth peer's destruction"
	echo "netns delete removed $DEV0 and $DEV1"
}

test_link_readd_after_delete() {
	setup_one
	local i
	for i in 1 2 3; do
		rdma link delete "$DEV0" || fail "delete $i failed"
		wait_for 5 dev_gone "$DEV0" || fail "$DEV0 still present ($i)"
		link_add "$NS_A" "$DEV0" "$VETH_A" || fail "re-add $i failed"
	done
	wait_for 5 port_state_is "$DEV0" ACTIVE || fail "state $(port_state "$DEV0") after re-adds"
}

test_link_module_unload() {
	mrxe_require_module
	mrxe_del_all_links
	rmmod "$MRXE_MODULE" || fail "rmmod after the link tests failed"
}

mrxe_run_tests test_link_add_delete test_link_two_namespaces test_link_attributes \
	test_link_gids test_link_port_down_up test_link_mtu_change \
	test_link_netdev_unregister test_link_netns_delete test_link_readd_after_delete \
	test_link_module_unload
