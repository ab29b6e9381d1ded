#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make deb: build mrxe's Debian packages with Debian's own tooling
# (dpkg-buildpackage, debhelper, dh-dkms) from a copy of the tree, into
# build/deb/ (never into the repository's parent directory):
#   mrxe-dkms_VER_all.deb              module source, built by DKMS per kernel
#   ibverbs-provider-mrxe_VER_ARCH.deb libibverbs provider + mrxe.driver
#   mrxectl_VER_ARCH.deb               tool, man page, bash completion
# then runs lintian on them (errors fail; warnings are printed).
#
# VER comes from git describe: tag vX.Y[-N-gHASH] -> X.Y[+N.gHASH]; with no
# tag, 0.0~gitN.gHASH (N = commits on HEAD).  Uncommitted changes add
# +dirty.  debian/changelog is generated here, not kept in git.
#
#   tools/mkdeb.sh             build + lintian
#   tools/mkdeb.sh --version   print VER
#   tools/mkdeb.sh --dkms-check 6.1 6.12   (make deb-dkms-check KVERS=...)
#       DKMS builds the module from the built mrxe-dkms package for each
#       kernel line, on this machine, with private DKMS trees under
#       build/deb/dkms-check (nothing is installed; 6.12's headers come from
#       make deps-6.12), and checks each rdma_mrxe.ko's vermagic and alias.
#   tools/mkdeb.sh --stage-install   (make deb-stage; root)
#       dpkg -i of the built packages on this machine, in a private mount
#       namespace whose /usr, /etc and /var are overlays: every write lands
#       in build/deb/install-stage/{usr,etc,var} and the host is untouched.
#       DKMS compiles the module natively there (seconds, where the lab VM's
#       TCG needs minutes); selftests/mrxe_install.sh replays those files
#       into the guest and goes on from there (autoload, traffic, purge).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${MRXE_DEB_OUT:-$REPO/build/deb}
cd "$REPO"

deb_version() {
	local d v
	if d=$(git describe --tags --long --match 'v[0-9]*' 2>/dev/null); then
		# v1.2-3-gabcdef -> 1.2+3.gabcdef (1.2 when on the tag)
		v=${d#v}
		local n=${v%-g*}
		n=${n##*-}
		v=${v%-*-g*}
		[ "$n" = 0 ] || v="$v+$n.g$(git rev-parse --short=7 HEAD)"
	else
		v="0.0~git$(git rev-list --count HEAD).g$(git rev-parse --short=7 HEAD)"
	fi
	[ -z "$(git status --porcelain --untracked-files=no)" ] || v="$v+dirty"
	echo "$v"
}

git rev-parse --git-dir > /dev/null 2>&1 ||
	{ echo "mkdeb: $REPO is not a git checkout: the version and the file list come from git" >&2; exit 1; }
VER=$(deb_version)
if [ "${1:-}" = --version ]; then
	echo "$VER"
	exit 0
fi

# ---- --dkms-check: dkms add + build against each line's headers ----
dkms_check() {
	local deb root tree kver kdir ko l rc=0
	deb=$(ls "$OUT"/mrxe-dkms_*_all.deb 2>/dev/null | tail -n1)
	[ -n "$deb" ] || { echo "mkdeb: no $OUT/mrxe-dkms_*.deb: make deb" >&2; return 1; }
	command -v dkms >/dev/null || { echo "mkdeb: dkms missing: make deps" >&2; return 1; }
	root=$OUT/dkms-check/root
	tree=$OUT/dkms-check/tree
	rm -rf "$OUT/dkms-check"
	mkdir -p "$root" "$tree"
	dpkg-deb -x "$deb" "$root"
	local ver
	ver=$(dpkg-deb -f "$deb" Version)
	dkms add --sourcetree "$root/usr/src" --dkmstree "$tree" -m mrxe -v "$ver" >/dev/null ||
		{ echo "mkdeb: dkms add failed" >&2; return 1; }
	for l in "$@"; do
		case "$l" in
		6.1) kver=$(ls -d /lib/modules/6.1.*-amd64/build 2>/dev/null | sort -V | tail -n1 | cut -d/ -f4)
		     kdir=/lib/modules/$kver/build ;;
		*) kver=$(cat "${MRXE_DEPS:-/var/cache/mrxe-deps}/linux-$l/KVER" 2>/dev/null) ||
			{ echo "dkms-check $l: FAIL (line not fetched: make deps-$l)"; rc=1; continue; }
		   kdir=${MRXE_DEPS:-/var/cache/mrxe-deps}/linux-$kver/lib/modules/$kver/build ;;
		esac
		if ! dkms build --sourcetree "$root/usr/src" --dkmstree "$tree" -m mrxe -v "$ver" \
			-k "$kver" --kernelsourcedir "$kdir" -j 2 > "$OUT/dkms-check/build-$kver.log" 2>&1; then
			tail -n 30 "$tree/mrxe/$ver/build/make.log" "$OUT/dkms-check/build-$kver.log" 2>/dev/null
			echo "dkms-check $l: FAIL (dkms build -k $kver; $OUT/dkms-check/build-$kver.log)"
			rc=1
			continue
		fi
		ko=$tree/mrxe/$ver/$kver/x86_64/module/rdma_mrxe.ko
		if [ ! -f "$ko" ]; then
			echo "dkms-check $l: FAIL (no $ko)"; rc=1; continue
		fi
		if [ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" != "$kver" ] ||
		   ! modinfo -F alias "$ko" | grep -qx rdma-link-mrxe; then
			echo "dkms-check $l: FAIL ($ko: vermagic '$(modinfo -F vermagic "$ko")', alias '$(modinfo -F alias "$ko")')"
			rc=1; continue
		fi
		echo "dkms-check $l: ok (dkms built mrxe $ver for $kver: vermagic $kver, alias rdma-link-mrxe)"
	done
	return $rc
}
# ---- --stage-install: dpkg -i into overlays, in a private mount namespace ----
# The guest replays DIR/{usr,etc,var} as the upper layers of its own
# overlays (selftests/mrxe_install.sh), so what lands here is exactly what
# dpkg -i wrote.  DIR/stamp names the packages and the kernels DKMS built for.
stage_install() {
	local stage=$OUT/install-stage debs=() p d
	[ "$(id -u)" = 0 ] || { echo "mkdeb: --stage-install needs root (overlay mounts)" >&2; return 1; }
	command -v unshare >/dev/null && command -v dkms >/dev/null ||
		{ echo "mkdeb: unshare or dkms missing: make deps" >&2; return 1; }
	for p in mrxe-dkms ibverbs-provider-mrxe mrxectl; do
		d=$(ls "$OUT/${p}_"*.deb 2>/dev/null | tail -n1)
		[ -n "$d" ] || { echo "mkdeb: no $OUT/${p}_*.deb: make deb" >&2; return 1; }
		[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" != installed ] ||
			{ echo "mkdeb: $p is installed on this machine: a staged install would not show" >&2; return 1; }
		debs+=("$d")
	done
	rm -rf "$stage"
	mkdir -p "$stage"
	# shellcheck disable=SC2016
	if ! unshare --mount --propagation private bash -euc '
		stage=$1; shift
		for d in usr etc var; do
			mkdir -p "$stage/$d" "$stage/.work/$d"
			mount -t overlay overlay \
				-o "lowerdir=/$d,upperdir=$stage/$d,workdir=$stage/.work/$d" "/$d"
		done
		findmnt -n -t overlay /var > /dev/null	# never dpkg on the real root
		# man-db rebuilds its index in its trigger: nobody reads it here
		rm -f /var/lib/man-db/auto-update
		DEBIAN_FRONTEND=noninteractive dpkg -i "$@"
		dkms status -m mrxe
	' stage-install "$stage" "${debs[@]}" > "$stage/dpkg.log" 2>&1; then
		tail -n 30 "$stage/dpkg.log" >&2
		echo "mkdeb: staged dpkg -i failed ($stage/dpkg.log)" >&2
		return 1
	fi
	rm -rf "$stage/.work"
	# the DKMS build tree (objects with debug info): dkms keeps it, nothing
	# reads it; the guest would copy it over 9p for nothing
	rm -rf "$stage"/var/lib/dkms/mrxe/*/build
	{
		echo "packages ${debs[*]##*/}"
		sed -n 's/^mrxe\/[^,]*, \([^,]*\), [^:]*: installed$/kernel \1/p' "$stage/dpkg.log"
	} > "$stage/stamp"
	grep -q '^kernel ' "$stage/stamp" ||
		{ cat "$stage/dpkg.log" >&2; echo "mkdeb: DKMS installed mrxe for no kernel" >&2; return 1; }
	echo "mkdeb: staged install in $stage: $(grep '^kernel ' "$stage/stamp" | tr '\n' ' ')"
}
if [ "${1:-}" = --stage-install ]; then
	stage_install
	exit
fi

if [ "${1:-}" = --dkms-check ]; then
	shift
	[ $# -gt 0 ] || set -- 6.1
	dkms_check "$@"
	exit
fi

command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null && command -v dh_dkms >/dev/null ||
	{ echo "mkdeb: dpkg-dev, debhelper and dh-dkms are missing: make deps" >&2; exit 1; }

# The tree as git sees it (tracked files plus untracked, not ignored ones),
# copied to build/deb/mrxe-VER: dpkg-buildpackage writes its results into
# the parent of the source directory, which is then build/deb.
rm -rf "$OUT"
SRC=$OUT/mrxe-$VER
mkdir -p "$SRC"
git ls-files -z --cached --others --exclude-standard |
	xargs -0 -I{} sh -c 'test -e "$1" && printf "%s\0" "$1"' _ {} |
	tar --null -T - -cf - | tar -xf - -C "$SRC"

{
	echo "mrxe ($VER) unstable; urgency=medium"
	echo
	echo "  * Built from git $(git describe --tags --always --dirty)"
	echo "    (commit $(git rev-parse HEAD))."
	echo
	echo " -- mrxe developers <mrxe-devel@example.org>  $(git log -1 --format=%aD HEAD)"
} > "$SRC/debian/changelog"

echo "mkdeb: building mrxe $VER in $SRC" >&2
(cd "$SRC" && dpkg-buildpackage -b -us -uc -j2) > "$OUT/build.log" 2>&1 ||
	{ tail -n 40 "$OUT/build.log" >&2; echo "mkdeb: dpkg-buildpackage failed (log: $OUT/build.log)" >&2; exit 1; }
rm -rf "$SRC"

ls "$OUT"/*.deb
if command -v lintian >/dev/null; then
	# --fail-on error: warnings and pedantic notes are reported, not fatal.
	lintian --fail-on error "$OUT"/*.changes | tee "$OUT/lintian.log" ||
		{ echo "mkdeb: lintian found errors (above; $OUT/lintian.log)" >&2; exit 1; }
	echo "mkdeb: lintian: $(grep -c '^E:' "$OUT/lintian.log" || true) errors," \
		"$(grep -c '^W:' "$OUT/lintian.log" || true) warnings ($OUT/lintian.log)"
else
	echo "mkdeb: lintian not installed (make deps): packages not checked" >&2
	exit 1
fi
