#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run mrxe selftest programs (default: TEST_PROGS of the Makefile), nest
# their KTAP output, and end with exactly one summary line:
#	selftests: N passed, N failed, N skipped
# counting the individual test cases ("ok"/"not ok" lines of each program).
# A program that times out, crashes, or fails without printing a failed case
# counts as one failed case.  Exit status: 1 if anything failed, else 0.
cd "$(dirname "$0")" || exit 2

if [ $# -eq 0 ]; then
	# shellcheck disable=SC2046
	set -- $(sed -n 's/^TEST_PROGS[[:space:]]*:=//p' Makefile)
fi

timeout=45
[ -r settings ] && timeout=$(sed -n 's/^timeout=//p' settings)
timeout=${KSFT_TIMEOUT:-$timeout}

passed=0 failed=0 skipped=0 n=0
echo "TAP version 13"
echo "1..$#"
for prog in "$@"; do
	n=$((n + 1))
	echo "# selftests: mrxe: $prog"
	out=$(mktemp)
	timeout --foreground -k 10 "$timeout" "./$prog" 2>&1 < /dev/null |
		tee "$out" | sed -u 's/^/# /'
	rc=${PIPESTATUS[0]}
	p=$(grep -c -E '^ok [0-9]+' "$out" | head -1)
	s=$(grep -c -E '^ok [0-9]+ .*# SKIP' "$out" | head -1)
	f=$(grep -c -E '^not ok [0-9]+' "$out" | head -1)
	p=$((p - s))
	rm -f "$out"
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "# $prog: TIMEOUT after ${timeout}s"
		f=$((f + 1))
	elif [ "$rc" != 0 ] && [ "$rc" != 4 ] && [ "$f" = 0 ]; then
		echo "# $prog: exited $rc without reporting a failed case"
		f=$((f + 1))
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	if [ "$f" -gt 0 ]; then
		echo "not ok $n selftests: mrxe: $prog # exit=$rc"
	elif [ "$rc" = 4 ] || { [ "$p" = 0 ] && [ "$s" -gt 0 ]; }; then
		echo "ok $n selftests: mrxe: $prog # SKIP"
	else
		echo "ok $n selftests: mrxe: $prog"
	fi
done
echo "selftests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
