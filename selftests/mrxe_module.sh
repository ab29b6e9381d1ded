#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Module load/unload and module metadata.
. "$(dirname "$0")/lib.sh"

test_module_load() {
	mrxe_unload
	mrxe_require_module
	[ "$(cat /sys/module/$MRXE_MODULE/initstate)" = live ] ||
		fail "$MRXE_MODULE initstate is not live"
	echo "loaded $MRXE_MODULE"
}

test_module_unload() {
	mrxe_require_module
	rmmod "$MRXE_MODULE" || fail "rmmod $MRXE_MODULE without links failed"
	! mrxe_loaded || fail "/sys/module/$MRXE_MODULE still there after rmmod"
}

test_module_reload_cycles() {
	local i
	for i in 1 2 3 4 5; do
		mrxe_require_module
		rmmod "$MRXE_MODULE" || fail "rmmod failed in cycle $i"
	done
	! mrxe_loaded || fail "module still loaded"
}

# MODULE_ALIAS_RDMA_LINK("mrxe") lets `rdma link add ... type mrxe` autoload it.
test_module_link_alias() {
	local src=$MRXE_MODULE
	if [ "$MRXE_MODULE" = rdma_mrxe ]; then
		[ -f "$MRXE_KO" ] || skip "$MRXE_KO not built (make module)"
		src=$MRXE_KO
	fi
	modinfo -F alias "$src" | grep -qx "rdma-link-$MRXE_LINK_TYPE" ||
		fail "no alias rdma-link-$MRXE_LINK_TYPE in $src: $(modinfo -F alias "$src" | tr '\n' ' ')"
	modinfo -F license "$src" | grep -q . || fail "no MODULE_LICENSE"
	echo "alias rdma-link-$MRXE_LINK_TYPE present"
}

# `rdma link add NAME type mrxe` with the module not loaded: the rdma core's
# request_module("rdma-link-mrxe") must load it.  The guest's /lib/modules is
# the host's, read-only: an overlay with a tmpfs upper layer takes the module
# where `make install` puts it (/lib/modules/KVER/updates) and depmod's output.
ovl_cleanup() {
	set +e
	mrxe_del_all_links
	mrxe_netns_cleanup
	mrxe_loaded && rmmod "$MRXE_MODULE"
	mountpoint -q "/lib/modules/$(uname -r)" && umount "/lib/modules/$(uname -r)"
}

test_module_autoload() {
	local kver mods tmp
	kver=$(uname -r)
	mods=/lib/modules/$kver
	if [ "$MRXE_MODULE" = rdma_mrxe ]; then
		[ -f "$MRXE_KO" ] || skip "$MRXE_KO not built (make module)"
	fi
	mrxe_unload
	modprobe veth
	trap ovl_cleanup EXIT
	if [ "$MRXE_MODULE" = rdma_mrxe ]; then
		tmp=$(mktemp -d)
		mkdir -p "$tmp/upper" "$tmp/work"
		mount -t overlay overlay \
			-o "lowerdir=$mods,upperdir=$tmp/upper,workdir=$tmp/work" "$mods" ||
			skip "cannot overlay $mods"
		install -D -m 0644 "$MRXE_KO" "$mods/updates/rdma_mrxe.ko"
		# depmod -a over Debian's ~4000 modules takes minutes under TCG
		# with 2 vCPUs: index only rdma_mrxe and its dependency closure
		# (veth was loaded above: the overlay index knows nothing else).
		local files=("$mods/updates/rdma_mrxe.ko") dep
		for dep in $(modinfo -F depends "$MRXE_KO" | tr , ' '); do
			# (no process substitution: the guest has no /dev/fd)
			files+=($(modprobe --show-depends "$dep" |
				awk '$1 == "insmod" { print $2 }'))
		done
		depmod "$kver" $(printf '%s\n' "${files[@]}" | sort -u)
	fi
	modprobe -n -v "rdma-link-$MRXE_LINK_TYPE" ||
		fail "modprobe does not resolve rdma-link-$MRXE_LINK_TYPE"
	mrxe_netns_setup || fail "netns setup failed"
	! mrxe_loaded || fail "module loaded before the link add"
	link_add "$NS_A" "$MRXE_DEV" "$VETH_A" || fail "rdma link add did not autoload the module"
	mrxe_loaded || fail "link added but $MRXE_MODULE not loaded"
	dev_exists "$MRXE_DEV" || fail "no $MRXE_DEV"
	echo "rdma link add autoloaded $MRXE_MODULE"
}

# A device comes and goes with the link and leaves nothing behind.
test_module_unload_after_link() {
	mrxe_require_module
	mrxe_netns_setup
	trap mrxe_netns_cleanup EXIT
	link_add "$NS_A" "$MRXE_DEV" "$VETH_A" || fail "rdma link add failed"
	dev_exists "$MRXE_DEV" || fail "no /sys/class/infiniband/$MRXE_DEV"
	rdma link delete "$MRXE_DEV" || fail "rdma link delete failed"
	wait_for 5 dev_gone "$MRXE_DEV" || fail "$MRXE_DEV still present after delete"
	rmmod "$MRXE_MODULE" || fail "rmmod after link delete failed"
	[ -z "$(mrxe_links)" ] || fail "ib devices left behind: $(mrxe_links)"
}

mrxe_run_tests test_module_load test_module_unload test_module_reload_cycles \
	test_module_link_alias test_module_autoload test_module_unload_after_link
