#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch a second kernel/rdma-core line from Debian's archive WITHOUT touching
# the machine's own package set: a private apt configuration (its own
# sources, lists and cache under $MRXE_DEPS/apt; /etc/apt is never read for
# sources nor written) downloads the .debs, and dpkg-deb -x unpacks them into
# folders under $MRXE_DEPS (default /var/cache/mrxe-deps).  Nothing is
# installed, pinned or upgraded; `apt-get upgrade` on the host cannot see
# these suites.  Idempotent: a finished step leaves a stamp and is skipped.
#
#   tools/deps-line.sh 6.12       (tools/deps.sh --line 6.12, make deps-6.12)
#   tools/deps-line.sh --print 6.12   print the kernel release of the line
#
# Line 6.12 = Debian 13's kernel line and rdma-core:
#   * linux 6.12 from bookworm-backports (linux-image-*-amd64-unsigned,
#     linux-headers-*, linux-kbuild-*): built with bookworm's gcc-12 and
#     glibc, so its kbuild tools (modpost, objtool) run here.  Trixie's own
#     6.12.x cannot be used to build modules on Debian 12: its kbuild tools
#     need glibc 2.38 and its config names gcc-14.
#     -> $MRXE_DEPS/linux-KVER/{boot,lib/modules/KVER,usr/src/...}, with
#        modules.dep (depmod -b) and the headers' Makefile pointing at the
#        unpacked common headers; $MRXE_DEPS/linux-6.12/KVER names it.
#   * rdma-core 56.1 from trixie, two ways:
#     -> $MRXE_DEPS/rdma-core-56/dev: libibverbs-dev, librdmacm-dev and the
#        libraries, to build the provider against 56 (make provider-56);
#     -> $MRXE_DEPS/trixie-root: a trixie userland (libc6 2.41, bash,
#        iproute2, kmod, python3.13, python3-pyverbs, perftest, scapy,
#        rdmacm-utils, ibverbs-utils...) with its whole dependency closure:
#        trixie's binaries need glibc 2.38+, so the lab VM runs them in a
#        chroot of it (LABVM_USERLAND=trixie), never on the host.
# Host packages from bookworm itself (normal apt): dwarves (pahole, for the
# BTF that Debian's 6.12 config wants in every module).
set -euo pipefail

MRXE_DEPS=${MRXE_DEPS:-/var/cache/mrxe-deps}
APTR=$MRXE_DEPS/apt
MIRROR=${MRXE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

die() { echo "deps-line: $*" >&2; exit 1; }
say() { echo "deps-line: $*" >&2; }

print=0
if [ "${1:-}" = --print ]; then
	print=1
	shift
fi
line=${1:-}
case "$line" in
6.12) ;;
*) die "usage: $0 [--print] 6.12" ;;
esac

if [ $print = 1 ]; then
	cat "$MRXE_DEPS/linux-$line/KVER" 2>/dev/null || die "line $line not fetched: make deps-$line"
	exit 0
fi

[ "$(id -u)" = 0 ] || die "run as root (writes $MRXE_DEPS, installs dwarves)"
command -v dpkg-deb >/dev/null || die "dpkg-deb missing"
[ -r "$KEYRING" ] || die "$KEYRING missing (debian-archive-keyring)"

# Host side, from bookworm's own archive: pahole for module BTF.
if ! command -v pahole >/dev/null; then
	say "installing dwarves (pahole) from bookworm"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends dwarves \
		> /tmp/mrxe-deps-line.$$.log 2>&1 ||
		{ apt-get update -q >/dev/null 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends dwarves \
			> /tmp/mrxe-deps-line.$$.log 2>&1; } ||
		{ tail -n 20 /tmp/mrxe-deps-line.$$.log >&2; die "apt-get install dwarves failed"; }
	rm -f /tmp/mrxe-deps-line.$$.log
fi

# ---- the private apt configuration ----
mkdir -p "$APTR"/etc/apt/{apt.conf.d,preferences.d,sources.list.d} \
	"$APTR"/var/lib/apt/lists/partial "$APTR"/var/cache/apt/archives/partial \
	"$APTR"/var/lib/dpkg "$APTR"/debs
cat > "$APTR/etc/apt/sources.list.new" <<EOF
deb [signed-by=$KEYRING] $MIRROR bookworm-backports main
deb [signed-by=$KEYRING] $MIRROR trixie main
EOF
mv -f "$APTR/etc/apt/sources.list.new" "$APTR/etc/apt/sources.list"
: > "$APTR/etc/apt/sources.list.d/.keep"
[ -e "$APTR/var/lib/dpkg/status" ] || : > "$APTR/var/lib/dpkg/status"
APT_OPTS=(-o "Dir=$APTR" -o "Dir::State::status=$APTR/var/lib/dpkg/status"
	-o "Dir::Etc::trusted=/etc/apt/trusted.gpg" -o "Dir::Etc::trustedparts=/etc/apt/trusted.gpg.d"
	-o APT::Architecture=amd64 -o "APT::Architectures::=amd64" -o Acquire::Languages=none
	-o APT::Sandbox::User=root -o Debug::NoLocking=1)
apt_() { apt-get "${APT_OPTS[@]}" "$@"; }
acache() { apt-cache "${APT_OPTS[@]}" "$@"; }

# Refresh the private index when it is missing or older than a day.
lists_fresh() {
	[ -n "$(find "$APTR/var/lib/apt/lists" -maxdepth 1 -name '*_trixie_InRelease' -mmin -1440 2>/dev/null)" ] &&
	[ -n "$(find "$APTR/var/lib/apt/lists" -maxdepth 1 -name '*_bookworm-backports_InRelease' -mmin -1440 2>/dev/null)" ]
}
if ! lists_fresh; then
	say "apt-get update (private: bookworm-backports, trixie)"
	apt_ update -q > "$APTR/update.log" 2>&1 || { tail -n 20 "$APTR/update.log" >&2; die "apt-get update failed"; }
fi

# newest_deb NAME: the newest downloaded .deb of package NAME.
newest_deb() {
	local f
	f=$(find "$APTR/debs" -maxdepth 1 -name "${1}_*.deb" | sort -V | tail -n1)
	[ -n "$f" ] || die "no downloaded .deb of $1"
	echo "$f"
}

# dl_unpack DEST PKG...: download PKG (NAME or NAME/SUITE) into the cache
# and unpack each into DEST.
dl_unpack() {
	local dest=$1 p
	shift
	mkdir -p "$dest"
	(cd "$APTR/debs" && apt_ download -q "$@" > "$APTR/download.log" 2>&1) ||
		{ tail -n 20 "$APTR/download.log" >&2; die "apt-get download $* failed"; }
	for p in "$@"; do
		dpkg-deb -x "$(newest_deb "${p%%/*}")" "$dest"
	done
}

# ---- kernel 6.12 from bookworm-backports ----
kver_of_line() {
	# linux-image-amd64 in bookworm-backports depends on the versioned image.
	acache show "linux-image-amd64/bookworm-backports" 2>/dev/null |
		sed -n 's/^Depends: linux-image-\([0-9.]*+deb12-amd64\) .*/\1/p' | head -n1
}
KVER=$(kver_of_line)
[ -n "$KVER" ] || die "no linux-image-amd64 in bookworm-backports"
KROOT=$MRXE_DEPS/linux-$KVER
if [ ! -e "$KROOT/.done" ]; then
	say "fetching linux $KVER (bookworm-backports) into $KROOT"
	rm -rf "$KROOT"
	kv=${KVER%-amd64}
	dl_unpack "$KROOT" "linux-image-$KVER-unsigned" "linux-headers-$KVER" \
		"linux-headers-$kv-common" "linux-kbuild-$kv"
	# merged-/usr packages may put modules under usr/lib/modules
	if [ ! -d "$KROOT/lib/modules/$KVER" ] && [ -d "$KROOT/usr/lib/modules/$KVER" ]; then
		mkdir -p "$KROOT/lib/modules"
		mv "$KROOT/usr/lib/modules/$KVER" "$KROOT/lib/modules/"
	fi
	[ -r "$KROOT/boot/vmlinuz-$KVER" ] || die "no vmlinuz-$KVER in the image package"
	[ -d "$KROOT/lib/modules/$KVER/kernel" ] || die "no modules for $KVER"
	# The headers' Makefile includes the common headers by absolute path.
	sed -i "s|^include /usr/src/|include $KROOT/usr/src/|" \
		"$KROOT/usr/src/linux-headers-$KVER/Makefile"
	ln -sfn "$KROOT/usr/src/linux-headers-$KVER" "$KROOT/lib/modules/$KVER/build"
	depmod -b "$KROOT" "$KVER" || die "depmod -b $KROOT $KVER failed"
	touch "$KROOT/.done"
fi
mkdir -p "$MRXE_DEPS/linux-$line"
echo "$KVER" > "$MRXE_DEPS/linux-$line/KVER.new"
mv -f "$MRXE_DEPS/linux-$line/KVER.new" "$MRXE_DEPS/linux-$line/KVER"

# ---- rdma-core 56 from trixie ----
RDMA_PKGS=(libibverbs1 libibverbs-dev librdmacm1t64 librdmacm-dev)
DEV=$MRXE_DEPS/rdma-core-56/dev
if [ ! -e "$DEV/.done" ]; then
	say "fetching rdma-core 56 headers and libraries into $DEV"
	rm -rf "$DEV"
	pk=()
	for p in "${RDMA_PKGS[@]}"; do pk+=("$p/trixie"); done
	dl_unpack "$DEV" "${pk[@]}"
	# The kernel uapi (rdma/ib_user_verbs.h...) that rdma-core 56 is built
	# with: trixie's linux-libc-dev, only its rdma/ headers (next to
	# librdmacm-dev's), so the provider's static_asserts check those.
	dl_unpack "$DEV/.libc-dev" linux-libc-dev/trixie
	cp -n "$DEV"/.libc-dev/usr/include/rdma/*.h "$DEV/usr/include/rdma/"
	rm -rf "$DEV/.libc-dev"
	ls "$DEV"/usr/lib/x86_64-linux-gnu/libibverbs.so.1.*.56.* >/dev/null ||
		die "rdma-core 56's libibverbs missing in $DEV"
	touch "$DEV/.done"
fi

# The trixie userland for the lab VM: the dependency closure of what the
# selftests run, resolved by apt against an empty status (so libc6 and
# everything else come from trixie), downloaded and unpacked.
USER_PKGS=(bash coreutils dash libc-bin grep sed gawk findutils diffutils gzip xz-utils
	tar procps psmisc util-linux kmod iproute2 iputils-ping ethtool
	python3 rdma-core ibverbs-utils ibverbs-providers perftest rdmacm-utils
	python3-pyverbs libibverbs1 librdmacm1t64 libstdc++6 libgcc-s1
	python3-scapy qperf open-iscsi)
TROOT=$MRXE_DEPS/trixie-root
# The stamp holds the package list: a root made from an older list is remade.
want_pkgs=$(printf '%s\n' "${USER_PKGS[@]}")
if [ ! -e "$TROOT/.done" ] || [ "$(cat "$TROOT/.done")" != "$want_pkgs" ]; then
	say "fetching a trixie userland (rdma-core 56, python3.13, glibc 2.41) into $TROOT"
	rm -rf "$TROOT"
	# Resolve with an empty status: the full closure, trixie versions only.
	urls=$(apt_ install -q --print-uris -y -t trixie --no-install-recommends \
		-o APT::Default-Release=trixie "${USER_PKGS[@]/%//trixie}" 2>"$APTR/resolve.log" |
		sed -n "s/^'\([^']*\)' \([^ ]*\) .*/\2/p")
	[ -n "$urls" ] || { tail -n 20 "$APTR/resolve.log" >&2; die "resolving the trixie userland failed"; }
	names=$(for f in $urls; do echo "${f%%_*}"; done | sort -u)
	pk=()
	for n in $names; do pk+=("$n/trixie"); done
	(cd "$APTR/debs" && apt_ download -q "${pk[@]}" > "$APTR/download.log" 2>&1) ||
		{ tail -n 20 "$APTR/download.log" >&2; die "apt-get download (trixie userland) failed"; }
	mkdir -p "$TROOT"
	for f in $urls; do
		[ -r "$APTR/debs/$f" ] || f=$(ls "$APTR/debs/${f%%_*}_"*.deb | sort -V | tail -n1)
		dpkg-deb -x "$APTR/debs/${f##*/}" "$TROOT" 2>/dev/null || dpkg-deb -x "$f" "$TROOT"
	done
	# merged /usr: bin, sbin, lib, lib64 are links into usr/
	for d in bin sbin lib lib64; do
		if [ -d "$TROOT/$d" ] && [ ! -L "$TROOT/$d" ]; then
			cp -a "$TROOT/$d/." "$TROOT/usr/$d/" 2>/dev/null || true
			rm -rf "${TROOT:?}/$d"
		fi
		[ -e "$TROOT/$d" ] || ln -s "usr/$d" "$TROOT/$d"
	done
	ln -sfn python3.13 "$TROOT/usr/bin/python3"
	[ -e "$TROOT/usr/bin/sh" ] || ln -s dash "$TROOT/usr/bin/sh"
	# What the chroot needs as mount points and plain files.
	mkdir -p "$TROOT"/{proc,sys,dev,run,tmp,root,var/tmp,var/lib,etc/libibverbs.d}
	printf 'root:x:0:0:root:/root:/bin/bash\n' > "$TROOT/etc/passwd"
	printf 'root:x:0:\n' > "$TROOT/etc/group"
	cp /etc/nsswitch.conf "$TROOT/etc/" 2>/dev/null || true
	"$TROOT/lib64/ld-linux-x86-64.so.2" --version >/dev/null 2>&1 ||
		say "note: trixie's ld.so cannot run on this host's kernel? (only the VM uses it)"
	printf '%s\n' "$want_pkgs" > "$TROOT/.done"
fi
# What dpkg's maintainer scripts would have made (update-alternatives).
for alt in awk:gawk which:which.debianutils pager:less; do
	[ -e "$TROOT/usr/bin/${alt#*:}" ] && [ ! -e "$TROOT/usr/bin/${alt%%:*}" ] &&
		ln -s "${alt#*:}" "$TROOT/usr/bin/${alt%%:*}"
done
say "line $line ready: kernel $KVER ($KROOT), rdma-core 56 ($DEV, $TROOT)"
