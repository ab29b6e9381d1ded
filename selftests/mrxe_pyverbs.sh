#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rdma-core's own pyverbs test suite (python3-pyverbs ships it gzipped under
# /usr/share/doc/rdma-core/tests) on an mrxe device inside a network
# namespace.  First the same suite runs on stock rdma_rxe (init_net) as the
# baseline; then on mrxe, which must have no failures or errors and must pass
# every test that passes on stock rxe.  Pass/fail/skip counts are printed;
# skipped tests are listed with the reason the suite gives.
#
# MRXE_PYVERBS_FILTER: optional unittest -k pattern to run a subset.

MRXE_TEST_TIMEOUT=${MRXE_TEST_TIMEOUT:-290}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mrxe_xfer_lib.sh"

SUITE=/usr/share/doc/rdma-core/tests

# suite_copy DIR: an unpacked copy of the suite (never touch /usr/share).
suite_copy() {
	rm -rf "$1"
	cp -r "$SUITE" "$1"
	gunzip -f "$1"/*.gz
}

# suite_run OUTFILE DEV GID [RUNNER...]: run it, verbose, into OUTFILE.
suite_run() {
	local out=$1 dev=$2 gid=$3 rc
	shift 3
	local -a k=()
	[ -n "${MRXE_PYVERBS_FILTER:-}" ] && k=(-k "$MRXE_PYVERBS_FILTER")
	rc=0
	if [ -f "$MRXE_SELFTEST_DIR/mrxe_pyverbs_run.py" ]; then
		# same suite and output, plus a per-test timeout (SIGALRM) so
		# one hung test cannot eat the whole budget
		MRXE_PYVERBS_TEST_TIMEOUT=${MRXE_PYVERBS_TEST_TIMEOUT:-30} \
		"$@" timeout 240 python3 "$MRXE_SELFTEST_DIR/mrxe_pyverbs_run.py" \
			"$XFER_TMP/pyverbs" "$out.tsv" \
			--dev "$dev" --gid "$gid" -v "${k[@]}" > "$out" 2>&1 || rc=$?
	else
		"$@" timeout 240 python3 "$XFER_TMP/pyverbs/run_tests.py" \
			--dev "$dev" --gid "$gid" -v "${k[@]}" > "$out" 2>&1 || rc=$?
	fi
	echo "$rc" > "$out.rc"
}

# counts FILE: "ran N pass N fail N error N skip N" from unittest output.
counts() {
	local f=$1 ran fails errs skips
	ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in.*/\1/p' "$f" | tail -n1)
	fails=$(grep -Ec ' \.\.\. FAIL$' "$f" || true)
	errs=$(grep -Ec ' \.\.\. ERROR$' "$f" || true)
	skips=$(grep -Ec " \.\.\. skipped" "$f" || true)
	echo "ran ${ran:-0} pass $(( ${ran:-0} - fails - errs - skips )) fail $fails error $errs skip $skips"
}

# passed FILE: names of passed tests, sorted.
passed() {
	sed -n 's/^\(test[^ ]* ([^)]*)\) \.\.\. ok$/\1/p' "$1" | sort
}

test_pyverbs_suite() {
	local base=$XFER_TMP/pyverbs-rxe.out mine=$XFER_TMP/pyverbs-mrxe.out
	local missing
	[ -f "$SUITE/run_tests.py" ] || skip "pyverbs test suite not installed (python3-pyverbs)"
	python3 -c 'import pyverbs' 2>/dev/null || skip "python3-pyverbs not installed"
	[ "$MRXE_LINK_TYPE" = rxe ] && skip "this test compares mrxe with stock rxe (MRXE_LINK_TYPE=rxe)"
	xfer_require datapath
	trap 'xfer_cleanup; rdma link delete rxepyv0 2>/dev/null; ip link del veth-pyv0 2>/dev/null' EXIT
	suite_copy "$XFER_TMP/pyverbs"

	# Baseline: stock rxe on its own veth in init_net.
	modprobe rdma_rxe || skip "stock rdma_rxe not available for the baseline"
	ip link add veth-pyv0 type veth peer name veth-pyv1
	ip addr add 192.168.78.1/24 dev veth-pyv0
	ip link set veth-pyv0 up
	ip link set veth-pyv1 up
	rdma link add rxepyv0 type rxe netdev veth-pyv0
	xfer_wait_gid rxepyv0 192.168.78.1
	suite_run "$base" rxepyv0 "$REPLY"
	echo "stock rxe baseline: $(counts "$base") (exit $(cat "$base.rc"))"
	rdma link delete rxepyv0
	ip link del veth-pyv0

	# mrxe in namespace A.
	xfer_setup 1500
	suite_run "$mine" "$DEV_A" "$GID_A" ip netns exec "$NS_A"
	echo "mrxe: $(counts "$mine") (exit $(cat "$mine.rc"))"
	echo "skipped on mrxe (reason as given by the suite):"
	grep -E " \.\.\. skipped" "$mine" | sed 's/^/  /'
	if grep -Eq ' \.\.\. (FAIL|ERROR)$' "$mine"; then
		echo "failures/errors on mrxe:"
		grep -E ' \.\.\. (FAIL|ERROR)$' "$mine" | sed 's/^/  /'
		sed -n '/^=\{20,\}$/,$p' "$mine" | head -n 200 | sed 's/^/  /'
		fail "pyverbs suite has failures or errors on mrxe"
	fi
	missing=$(comm -23 <(passed "$base") <(passed "$mine"))
	if [ -n "$missing" ]; then
		echo "pass on stock rxe but not on mrxe:"
		echo "$missing" | sed 's/^/  /'
		fail "mrxe passes fewer tests than stock rxe"
	fi
	grep -q '^Ran [1-9]' "$mine" || { tail -n 50 "$mine"; fail "the suite did not run"; }
}

mrxe_run_tests test_pyverbs_suite
