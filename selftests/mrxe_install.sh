#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# selftest-timeout: 1800
# The installed system (issue 13): the Debian packages of `make deb`
# (build/deb: mrxe-dkms, ibverbs-provider-mrxe, mrxectl) installed with dpkg
# into a throw-away root, used the way a user would, then purged.
#
# The throw-away root: the guest's root is the host's, read-only over 9p.
# Overlays with tmpfs upper layers (under $INST) go over /usr, /etc and /var
# in place - not in a chroot, because the kernel's request_module() runs
# /sbin/modprobe in the real root, and the autoload under test must find the
# module DKMS installed.  The overlay on /var shows the host's own
# /var/lib/dpkg (the harness's tmpfs on /var/lib hides it otherwise), so
# dpkg sees the host's installed packages (dkms, libibverbs1, perftest ...)
# and checks the packages' dependencies against them.  Nothing reaches the
# host: every write lands in $INST.
#
#   test_install_packages      dpkg -i; DKMS builds rdma_mrxe.ko for the
#                              guest's kernel (postinst) and installs it.
#                              With a staged install (make deb-stage, run
#                              by make check as root: the same dpkg -i on
#                              the host, in a private mount namespace whose
#                              overlays keep every write), its files become
#                              the overlays' upper layers here instead: the
#                              DKMS compile that takes TCG 5-7 minutes takes
#                              the host seconds.  The checks are the same.
#   test_install_link_autoload `rdma link add ... type mrxe` loads that module
#                              by its alias; no modules-load.d entry
#   test_install_ib_write_bw   ib_write_bw and ibv_rc_pingpong -c (buffer
#                              validation) between two namespaces, with no
#                              RDMAV_DRIVERS and the build tree hidden; the
#                              provider libibverbs loaded must be the
#                              installed one (LD_DEBUG=files); the bytes
#                              counted by the receiving device (mrxectl)
#   test_install_mrxectl       mrxectl from PATH, its man page and completion
#   test_install_purge         dpkg --purge: no file of the packages, no DKMS
#                              state, no module left
#   test_install_cleanup       the overlays come off again
#
# The tests share the installed root: each later one skips when
# test_install_packages did not install (that failure is reported there).
# The 6.12 line's kernel tree is bind-mounted from /var/cache/mrxe-deps, not
# an installed kernel package: there the tests skip; `make deb-dkms-check
# KVERS="6.1 6.12"` checks DKMS's build for 6.12 on the host.

# DKMS compiles the module under TCG in test_install_packages: minutes.
MRXE_TEST_TIMEOUT=${MRXE_TEST_TIMEOUT:-900}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mrxe_xfer_lib.sh"
# The point of this program: the installed provider, found through
# /etc/libibverbs.d, not the build tree's.
unset RDMAV_DRIVERS

INST=/run/mrxe-install
DEB_DIR=${MRXE_DEB_DIR:-$MRXE_REPO/build/deb}
STAGE=$DEB_DIR/install-stage
PKGS="mrxe-dkms ibverbs-provider-mrxe mrxectl"
OVL_DIRS="usr etc var"
KVER=$(uname -r)
MULTIARCH=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
PROVIDER=/usr/lib/$MULTIARCH/libibverbs/libmrxe-rdmav34.so
DKMS_KO=/lib/modules/$KVER/updates/dkms/rdma_mrxe.ko
PORT=18700
export DEBIAN_FRONTEND=noninteractive

# ----------------------------------------------------------- the root ----

ovl_mounted() { findmnt -n -t overlay "/$1" > /dev/null 2>&1; }

# install_teardown [keep]: remove the throw-away root (idempotent).  The
# overlays come off lazily: a test process started after they were mounted
# runs bash from the overlay on /usr itself.  Their directories under $INST
# are deleted only by the program's own process (the EXIT trap below), once
# no test process can use them any more; "keep" leaves them.
install_teardown() {
	local d
	set +e
	mrxe_del_all_links
	mrxe_loaded && rmmod "$MRXE_MODULE"
	unhide_build_tree
	for d in $OVL_DIRS; do
		ovl_mounted "$d" && umount -l "/$d"
	done
	[ -f "$INST/made-dev-fd" ] && rm -f /dev/fd "$INST/made-dev-fd"
	[ "${1:-}" = keep ] || rm -rf "$INST"
	return 0
}

# require_installed: later tests need what test_install_packages set up.
require_installed() {
	[ -f "$INST/installed" ] ||
		skip "packages not installed (test_install_packages did not succeed)"
}

# hide_build_tree: an empty read-only tmpfs over build/ for this test, so
# that nothing of the build tree can be used by accident.
hide_build_tree() {
	mount -t tmpfs -o ro,size=4k tmpfs "$MRXE_REPO/build" ||
		fail "cannot hide $MRXE_REPO/build"
	[ -z "$(ls -A "$MRXE_REPO/build")" ] || fail "build tree still visible"
}

unhide_build_tree() {
	if findmnt -n -t tmpfs "$MRXE_REPO/build" > /dev/null; then
		umount "$MRXE_REPO/build"
	fi
	return 0
}

# deb_of PKG: the package file in DEB_DIR (exactly one).
deb_of() {
	local f n=0 found=
	for f in "$DEB_DIR/$1"_*.deb; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		found=$f
	done
	[ $n = 1 ] || { echo "want one $DEB_DIR/$1_*.deb, found $n"; return 1; }
	echo "$found"
}

# links_up: namespaces and one mrxe device in each, by `rdma link add` alone
# (the module comes from the alias), GIDs and ports ready (xfer_lib names).
links_up() {
	mrxe_netns_setup || return 1
	DEV_A=pkg0
	DEV_B=pkg1
	link_add "$NS_A" "$DEV_A" "$VETH_A" || { echo "rdma link add $DEV_A failed"; return 1; }
	link_add "$NS_B" "$DEV_B" "$VETH_B" || { echo "rdma link add $DEV_B failed"; return 1; }
	xfer_wait_gid "$DEV_A" "$IP_A" || return 1
	GID_A=$REPLY
	xfer_wait_gid "$DEV_B" "$IP_B" || return 1
	GID_B=$REPLY
	wait_for 10 port_state_is "$DEV_A" ACTIVE || { echo "$DEV_A not ACTIVE"; return 1; }
	wait_for 10 port_state_is "$DEV_B" ACTIVE || { echo "$DEV_B not ACTIVE"; return 1; }
}

# provider_loaded_from LOGPREFIX: the LD_DEBUG=files log of a verbs program
# shows the installed provider being loaded (and none from elsewhere).
provider_loaded_from() {
	local loaded
	loaded=$(cat "$1".* 2>/dev/null | grep -o 'file=[^ ]*libmrxe[^ ]*' | sort -u)
	if [ "$loaded" != "file=$PROVIDER" ]; then
		echo "want exactly the installed provider $PROVIDER loaded; libmrxe objects loaded:"
		echo "${loaded:-<none>}"
		return 1
	fi
	echo "provider: $PROVIDER (LD_DEBUG=files)"
}

# build_id_of_loaded MODULE / build_id_of_file KO: the GNU build ID of the
# module in the kernel (its notes in sysfs) and of a .ko file.
build_id_of_loaded() {
	# an ELF note: namesz, descsz, type (4 bytes each), "GNU\0", the ID
	od -An -tx1 -v "/sys/module/$1/notes/.note.gnu.build-id" | tr -d ' \n' | cut -c 33-
}
build_id_of_file() {
	readelf -n "$1" | sed -n 's/^ *Build ID: *//p'
}

# stage_usable DEB...: build/deb/install-stage holds a staged install of
# exactly these packages, with DKMS's module for the guest's kernel.
stage_usable() {
	local have want
	[ -f "$STAGE/stamp" ] || return 1
	have=$(sed -n 's/^packages //p' "$STAGE/stamp" | tr ' ' '\n' | grep . | sort)
	want=$(printf '%s\n' "${@##*/}" | sort)
	[ "$have" = "$want" ] && grep -qx "kernel $KVER" "$STAGE/stamp"
}

# host_status PKG: PKG's dpkg status in the host's own database (the
# read-only view test_install_packages mounts on $INST/hostvar).
host_status() {
	dpkg-query --admindir="$INST/hostvar/lib/dpkg" -W -f='${db:Status-Status}' "$1" 2>/dev/null || true
}

# counter DEV NAME: one counter of DEV (namespace A or B), read with mrxectl.
counter() {
	local ns=$NS_A
	[ "$1" = "$DEV_B" ] && ns=$NS_B
	ip netns exec "$ns" mrxectl -j stats "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d[0]["counters"][sys.argv[1]])' "$2"
}

# The 6.12 line: the kernel's tree is bind-mounted from /var/cache/mrxe-deps
# and the tests run chrooted in the trixie userland (no /var/lib mount).
kernel_tree_mounted() {
	mountpoint -q /lib/modules || mountpoint -q "/lib/modules/$KVER"
}

# --------------------------------------------------------------- tests ----

test_install_packages() {
	local d p debs=() out rc st staged
	install_teardown	# what a killed earlier run left
	[ "$MRXE_LINK_TYPE" = mrxe ] || skip "installs mrxe's packages (MRXE_LINK_TYPE=$MRXE_LINK_TYPE)"
	if kernel_tree_mounted; then
		skip "kernel $KVER's tree is mounted from /var/cache/mrxe-deps, not an installed package (the 6.12 line): make deb-dkms-check KVERS=\"6.1 6.12\" checks DKMS there"
	fi
	command -v dpkg > /dev/null || skip "no dpkg"
	command -v dkms > /dev/null || skip "dkms is not installed on the host (make deps)"
	[ -e "/lib/modules/$KVER/build" ] ||
		skip "no headers for the guest's kernel $KVER (linux-headers-amd64)"
	for p in $PKGS; do
		d=$(deb_of "$p") || skip "no package $p in $DEB_DIR: make deb ($d)"
		debs+=("$d")
	done
	! modprobe -n rdma-link-mrxe 2> /dev/null ||
		fail "the host root already resolves rdma-link-mrxe ($(modprobe -n -v rdma-link-mrxe)): make install on the host? the test cannot tell"

	mkdir -p "$INST/debs"
	cp "${debs[@]}" "$INST/debs/" || fail "copying the packages failed"
	trap '[ -f "$INST/installed" ] || install_teardown keep' EXIT
	# The host's own dpkg database, read-only, before anything is replayed
	# (the harness's tmpfs on /var/lib hides it; an overlay of /var shows
	# the 9p directory underneath).
	mkdir -p "$INST/hostvar" "$INST/empty"
	mount -t overlay overlay -o "ro,lowerdir=/var:$INST/empty" "$INST/hostvar" ||
		fail "cannot show the host's /var"
	[ -s "$INST/hostvar/lib/dpkg/status" ] || fail "the host's dpkg database is not visible"
	[ "$(host_status dkms)" = installed ] ||
		{ umount "$INST/hostvar"; skip "dkms is not installed on the host (make deps)"; }
	for p in $PKGS; do
		[ "$(host_status "$p")" != installed ] || { umount "$INST/hostvar";
			fail "$p is installed on the host itself: this test cannot tell its install from that one"; }
	done
	umount "$INST/hostvar"
	staged=
	if stage_usable "${debs[@]}"; then
		staged=1
	elif [ -e "$STAGE/stamp" ]; then
		echo "the staged install in $STAGE is not of these packages or not for $KVER: dpkg -i here"
	fi
	for d in $OVL_DIRS; do
		mkdir -p "$INST/$d/upper" "$INST/$d/work"
		if [ -n "$staged" ]; then
			cp -a "$STAGE/$d/." "$INST/$d/upper/" ||
				fail "copying the staged /$d failed"
		fi
		mount -t overlay overlay \
			-o "lowerdir=/$d,upperdir=$INST/$d/upper,workdir=$INST/$d/work" "/$d" ||
			fail "cannot put an overlay over /$d"
	done
	[ -s /var/lib/dpkg/status ] || fail "the host's dpkg database is not visible under the overlay"
	# dkms uses <(...), which needs /dev/fd; the harness's devtmpfs has no
	# udev to make it.
	if [ ! -e /dev/fd ]; then
		ln -s /proc/self/fd /dev/fd && touch "$INST/made-dev-fd"
	fi
	# man-db's trigger rebuilds its index over 9p (minutes under TCG);
	# in this throw-away root nobody reads that index.
	rm -f /var/lib/man-db/auto-update

	if [ -n "$staged" ]; then
		echo "dpkg -i ${debs[*]##*/}: staged on the host (tools/mkdeb.sh --stage-install), its files replayed here:"
		sed 's/^/  dpkg: /' "$STAGE/dpkg.log"
	else
		echo "dpkg -i ${debs[*]##*/}"
		SECONDS=0
		rc=0
		out=$(timeout 840 dpkg -i "$INST"/debs/*.deb 2>&1) || rc=$?
		printf '%s\n' "$out" | sed 's/^/  dpkg: /'
		echo "dpkg -i took ${SECONDS}s (DKMS build included)"
		if [ $rc != 0 ]; then
			tail -n 20 /var/lib/dkms/mrxe/*/build/make.log 2>/dev/null | sed 's/^/  make.log: /'
			fail "dpkg -i failed (exit $rc)"
		fi
	fi
	for p in $PKGS; do
		st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		[ "$st" = "install ok installed" ] || fail "$p: status '$st'"
	done
	out=$(dkms status -m mrxe -k "$KVER" 2>&1)
	echo "dkms status: $out"
	printf '%s\n' "$out" | grep -q ", $KVER, .*: installed" ||
		fail "DKMS did not install mrxe for $KVER"
	[ -f "$DKMS_KO" ] || fail "no $DKMS_KO"
	[ "$(modinfo -n rdma_mrxe)" = "$DKMS_KO" ] ||
		fail "modinfo resolves rdma_mrxe to '$(modinfo -n rdma_mrxe)', not $DKMS_KO"
	[ "$(modinfo -F vermagic rdma_mrxe | cut -d' ' -f1)" = "$KVER" ] ||
		fail "vermagic '$(modinfo -F vermagic rdma_mrxe)' is not $KVER"
	touch "$INST/installed"
}

test_install_link_autoload() {
	local out want got
	require_installed
	trap 'mrxe_netns_cleanup; unhide_build_tree' EXIT
	hide_build_tree
	mrxe_unload || fail "rmmod $MRXE_MODULE failed"
	! mrxe_loaded || fail "$MRXE_MODULE still loaded"
	out=$(modprobe -n -v rdma-link-mrxe 2>&1) || fail "modprobe does not resolve rdma-link-mrxe: $out"
	echo "modprobe rdma-link-mrxe: $out"
	printf '%s\n' "$out" | grep -q "insmod $DKMS_KO" || fail "rdma-link-mrxe is not DKMS's module"
	if grep -rqs mrxe /etc/modules-load.d /usr/lib/modules-load.d /etc/modules; then
		fail "a modules-load.d entry loads mrxe: $(grep -rls mrxe /etc/modules-load.d /usr/lib/modules-load.d /etc/modules)"
	fi
	links_up || fail "links"
	mrxe_loaded || fail "links added but $MRXE_MODULE not loaded"
	want=$(build_id_of_file "$DKMS_KO")
	got=$(build_id_of_loaded rdma_mrxe)
	[ -n "$want" ] && [ "$got" = "$want" ] ||
		fail "the loaded module's build ID '$got' is not that of $DKMS_KO ('$want')"
	echo "rdma link add loaded $DKMS_KO (build ID $got)"
}

test_install_ib_write_bw() {
	local n=200 s=65536 before after out
	require_installed
	command -v ib_write_bw > /dev/null || skip "perftest not installed"
	trap 'mrxe_netns_cleanup; unhide_build_tree' EXIT
	hide_build_tree
	[ -z "${RDMAV_DRIVERS:-}" ] || fail "RDMAV_DRIVERS is set"
	links_up || fail "links"

	# ibv_devices finds the devices through /etc/libibverbs.d/mrxe.driver.
	out=$(nsa env LD_DEBUG=files LD_DEBUG_OUTPUT="$XFER_TMP/ld-devices" ibv_devices 2>&1)
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -qw "$DEV_A" || fail "ibv_devices does not list $DEV_A"
	provider_loaded_from "$XFER_TMP/ld-devices" || fail "ibv_devices did not use the installed provider"

	before=$(counter "$DEV_A" rcvd_bytes)
	PORT=$((PORT + 1))
	xfer_pair 300 "tcp:$PORT" \
		ib_write_bw -d "$DEV_A" -x "$GID_A" -p $PORT -F -n $n -s $s --report_gbits \
		-- \
		env LD_DEBUG=files LD_DEBUG_OUTPUT="$XFER_TMP/ld-bw" \
		ib_write_bw -d "$DEV_B" -x "$GID_B" -p $PORT -F -n $n -s $s --report_gbits "$IP_A" ||
		fail "ib_write_bw failed"
	perf_result_check "$XFER_CLIENT_OUT" "$XFER_SERVER_OUT" || fail "no result"
	provider_loaded_from "$XFER_TMP/ld-bw" || fail "ib_write_bw did not use the installed provider"
	after=$(counter "$DEV_A" rcvd_bytes)
	echo "$DEV_A rcvd_bytes: $before -> $after (mrxectl)"
	[ $((after - before)) -ge $((n * s)) ] ||
		fail "$DEV_A received $((after - before)) bytes, want >= $((n * s))"

	# ibv_rc_pingpong -c checks every received buffer's contents.
	PORT=$((PORT + 1))
	xfer_pair 300 "tcp:$PORT" \
		ibv_rc_pingpong -d "$DEV_A" -g "$GID_A" -p $PORT -n 200 -s 4096 -m 1024 -c \
		-- \
		env LD_DEBUG=files LD_DEBUG_OUTPUT="$XFER_TMP/ld-pp" \
		ibv_rc_pingpong -d "$DEV_B" -g "$GID_B" -p $PORT -n 200 -s 4096 -m 1024 -c "$IP_A" ||
		fail "ibv_rc_pingpong -c failed"
	perf_result_check "$XFER_CLIENT_OUT" "$XFER_SERVER_OUT" || fail "no result"
	provider_loaded_from "$XFER_TMP/ld-pp" || fail "ibv_rc_pingpong did not use the installed provider"
}

test_install_mrxectl() {
	local out
	require_installed
	trap 'mrxe_netns_cleanup; unhide_build_tree' EXIT
	hide_build_tree
	[ "$(command -v mrxectl)" = /usr/sbin/mrxectl ] ||
		fail "mrxectl on PATH is '$(command -v mrxectl)', not /usr/sbin/mrxectl"
	dpkg -S /usr/sbin/mrxectl | grep -q '^mrxectl:' || fail "/usr/sbin/mrxectl is not the mrxectl package's"
	links_up || fail "links"
	out=$(nsa mrxectl -j dev show) || fail "mrxectl -j dev show failed"
	echo "mrxectl -j dev show: $out"
	printf '%s\n' "$out" | python3 -c '
import json, sys
devs = json.load(sys.stdin)
assert [d["dev"] for d in devs] == [sys.argv[1]], devs
assert devs[0]["netdev"] == sys.argv[2], devs' "$DEV_A" "$VETH_A" ||
		fail "mrxectl does not show $DEV_A on $VETH_A (alone) in its namespace"
	nsa mrxectl dev set "$DEV_A" mode metaroce || fail "mrxectl dev set failed"
	nsa mrxectl dev show "$DEV_A" | grep -qw metaroce || fail "mode not changed"
	nsa mrxectl dev show "$DEV_A"
	[ -f /usr/share/man/man8/mrxectl.8.gz ] || fail "no man page"
	if command -v man > /dev/null; then
		[ "$(man -w mrxectl 2>/dev/null)" = /usr/share/man/man8/mrxectl.8.gz ] ||
			fail "man -w mrxectl: '$(man -w mrxectl 2>&1)'"
	fi
	out=$(bash -c '. /usr/share/bash-completion/completions/mrxectl && complete -p mrxectl' 2>&1) ||
		fail "bash completion: $out"
	echo "completion: $out"
}

test_install_purge() {
	local files=() f p left out
	require_installed
	mrxe_del_all_links
	if mrxe_loaded; then
		rmmod "$MRXE_MODULE" || fail "rmmod failed"
	fi
	for p in $PKGS; do
		while IFS= read -r f; do
			[ -d "$f" ] || files+=("$f")
		done <<< "$(dpkg -L "$p")"
	done
	echo "${#files[@]} files installed by the packages"
	[ ${#files[@]} -gt 0 ] || fail "dpkg -L lists no files"
	out=$(timeout 300 dpkg --purge $PKGS 2>&1) || { printf '%s\n' "$out"; fail "dpkg --purge failed"; }
	printf '%s\n' "$out" | sed 's/^/  dpkg: /'
	left=0
	for p in $PKGS; do
		if dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qv not-installed; then
			echo "$p: still known to dpkg: $(dpkg-query -W -f='${Status}' "$p")"
			left=1
		fi
	done
	for f in "${files[@]}"; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		echo "left behind: $f"
		left=1
	done
	out=$(dkms status -m mrxe 2>&1 | grep -v '^Warning' || true)
	[ -z "$out" ] || { echo "dkms status: $out"; left=1; }
	for f in /var/lib/dkms/mrxe /usr/src/mrxe-*; do
		if [ -e "$f" ]; then
			echo "left behind: $f"
			left=1
		fi
	done
	out=$(find "/lib/modules/$KVER" -name 'rdma_mrxe.ko*' 2>/dev/null)
	[ -z "$out" ] || { echo "module files left: $out"; left=1; }
	! modprobe -n rdma-link-mrxe 2> /dev/null || { echo "rdma-link-mrxe still resolves"; left=1; }
	! grep -q rdma_mrxe "/lib/modules/$KVER/modules.dep" || { echo "rdma_mrxe still in modules.dep"; left=1; }
	! mrxe_loaded || { echo "$MRXE_MODULE loaded"; left=1; }
	# Whatever the install wrote that is still there sits in an upper layer.
	out=$(find "$INST/usr/upper" "$INST/etc/upper" "$INST/var/upper" -iname '*mrxe*' 2>/dev/null)
	[ -z "$out" ] || { echo "written by the packages and still there: $out"; left=1; }
	[ $left = 0 ] || fail "the purge left things behind"
	echo "purged: no files, no DKMS state, no module left"
}

test_install_cleanup() {
	local d
	install_teardown keep
	for d in $OVL_DIRS; do
		! ovl_mounted "$d" || fail "overlay on /$d still mounted"
	done
	! findmnt -n -t tmpfs "$MRXE_REPO/build" > /dev/null || fail "build tree still hidden"
	[ -d /var/lib ] || fail "/var/lib is gone"
	# 6.1: the harness's tmpfs on /var/lib; the 6.12 chroot mounts none
	kernel_tree_mounted || mountpoint -q /var/lib ||
		fail "the harness's /var/lib is not back"
}

# A run killed between the tests must not leave the overlays behind for the
# programs that follow in the same VM.
if [ -z "${MRXE_RUN_ONE:-}" ] && in_lab_vm; then
	trap install_teardown EXIT
fi

mrxe_run_tests test_install_packages test_install_link_autoload test_install_ib_write_bw \
	test_install_mrxectl test_install_purge test_install_cleanup
