#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run mrxe selftest programs (default: TEST_PROGS of the Makefile), nest
# their KTAP output, and end with exactly one summary line:
#	selftests: N passed, N failed, N skipped
# counting the individual test cases ("ok"/"not ok" lines of each program).
# A program that times out, crashes, or fails without printing a failed case
# counts as one failed case.  Exit status: 1 if anything failed, else 0.
# Each program gets settings' timeout= seconds, or the value of a
# "# selftest-timeout: SECS" line in its header.
# The whole run is limited to MRXE_SUITE_BUDGET seconds (default 3000):
# programs get at most what is left, and programs not started in time count
# as failed - unless MRXE_SUITE_BUDGET_SKIP=1 (CI's second kernel line,
# which gets what the first left of CI's hour): then a program not started
# is skipped, and one the budget cut short keeps the results it printed
# (its failed cases still fail) and counts the cut as a skip, said so.
#	run.sh --total-timeout [PROG...]   prints the sum of the timeouts
# The body is one brace group: bash parses it completely before running it,
# so editing this file while runs are in progress cannot break them.
{
cd "$(dirname "$0")" || exit 2

if [ $# -eq 0 ]; then
	# shellcheck disable=SC2046
	set -- $(make -s --no-print-directory list)
fi

default_timeout=45
[ -r settings ] && default_timeout=$(sed -n 's/^timeout=//p' settings)
default_timeout=${KSFT_TIMEOUT:-$default_timeout}

# timeout_of PROG: the program's own "# selftest-timeout: SECS" header line,
# else settings' timeout=.
timeout_of() {
	local t
	t=$(sed -n 's/^# selftest-timeout:[[:space:]]*\([0-9][0-9]*\).*/\1/p' "$1" 2>/dev/null | head -n1)
	echo "${t:-$default_timeout}"
}
if [ "${1:-}" = --total-timeout ]; then
	shift
	[ $# -gt 0 ] || set -- $(make -s --no-print-directory list)
	total=0
	for prog in "$@"; do
		total=$((total + $(timeout_of "$prog")))
	done
	echo $total
	exit 0
fi

# The whole suite's wall-clock budget (CI must stay far under an hour).
budget=${MRXE_SUITE_BUDGET:-3000}
budget_skip=${MRXE_SUITE_BUDGET_SKIP:-0}
SECONDS=0
passed=0 failed=0 skipped=0 n=0 times=
failed_cases=$(mktemp)
echo "TAP version 13"
echo "1..$#"
for prog in "$@"; do
	n=$((n + 1))
	echo "# selftests: mrxe: $prog"
	out=$(mktemp)
	timeout=$(timeout_of "$prog")
	left=$((budget - SECONDS))
	if [ $left -lt 10 ]; then
		echo "# $prog: not run, the suite's time budget (${budget}s) is used up"
		rm -f "$out"
		if [ "$budget_skip" = 1 ]; then
			echo "ok $n selftests: mrxe: $prog # SKIP not run: time budget"
			skipped=$((skipped + 1))
			times="$times $prog=budget"
			continue
		fi
		echo "not ok $n selftests: mrxe: $prog # not run: time budget"
		echo "#   $prog: not run (time budget)" >> "$failed_cases"
		failed=$((failed + 1))
		continue
	fi
	cut=0
	[ "$timeout" -gt $left ] && timeout=$left && cut=1
	t0=$SECONDS
	timeout --foreground -k 10 "$timeout" "./$prog" 2>&1 < /dev/null |
		tee "$out" | sed -u 's/^/# /'
	rc=${PIPESTATUS[0]}
	p=$(grep -c -E '^ok [0-9]+' "$out" | head -1)
	s=$(grep -c -E '^ok [0-9]+ .*# SKIP' "$out" | head -1)
	f=$(grep -c -E '^not ok [0-9]+' "$out" | head -1)
	p=$((p - s))
	# each failed case with the few lines that say why (error lines
	# of its own output, else its last lines), cut to fit CI's tail
	awk -v prog="$prog" '
		/^(not )?ok [0-9]+/ {
			if ($1 == "not") {
				print "#   " prog ": " $0
				# the first GoogleTest "file:line: Failure" with
				# the 3 lines that say what differed, then the
				# last error lines (else the last lines)
				g = 0
				for (i = 1; i <= nb && !g; i++)
					if (buf[i] ~ /: Failure$/) {
						for (j = i; j <= nb && j < i + 4; j++)
							print "#     " substr(buf[j], 1, 170)
						g = 1
					}
				k = 0
				for (i = 1; i <= nb; i++)
					if (buf[i] !~ /: Failure$/ &&
					    tolower(buf[i]) ~ /error|fail|couldn|unable|status|timed? ?out|exceed|mismatch|abort|wc_|killed/)
						why[++k] = buf[i]
				if (k == 0)
					for (i = (nb > 3 ? nb - 2 : 1); i <= nb; i++)
						why[++k] = buf[i]
				for (i = (k > 5 ? k - 4 : 1); i <= k; i++)
					print "#     " substr(why[i], 1, 170)
			}
			nb = 0
			next
		}
		{ buf[++nb] = $0 }
	' "$out" >> "$failed_cases"
	rm -f "$out"
	if { [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && [ $cut = 1 ] &&
	   [ "$budget_skip" = 1 ]; then
		echo "# $prog: cut after ${timeout}s by the suite's time budget: its remaining tests count as skipped"
		s=$((s + 1))
		[ "$f" = 0 ] && rc=4
	elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "# $prog: TIMEOUT after ${timeout}s"
		echo "#   $prog: TIMEOUT after ${timeout}s" >> "$failed_cases"
		f=$((f + 1))
	elif [ "$rc" != 0 ] && [ "$rc" != 4 ] && [ "$f" = 0 ]; then
		echo "# $prog: exited $rc without reporting a failed case"
		echo "#   $prog: exited $rc" >> "$failed_cases"
		f=$((f + 1))
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	times="$times $prog=$((SECONDS - t0))s"
	if [ "$f" -gt 0 ]; then
		echo "not ok $n selftests: mrxe: $prog # exit=$rc"
	elif [ "$rc" = 4 ] || { [ "$p" = 0 ] && [ "$s" -gt 0 ]; }; then
		echo "ok $n selftests: mrxe: $prog # SKIP$([ $cut = 1 ] && [ "$budget_skip" = 1 ] && echo " cut by the time budget after $p passed")"
	else
		echo "ok $n selftests: mrxe: $prog"
	fi
done
# CI shows only the log's tail: name the failed cases and the time each
# program took right above the summary.
echo "# time per program:$times (suite ${SECONDS}s)"
if [ -s "$failed_cases" ]; then
	echo "# failed:"
	cat "$failed_cases"
fi
rm -f "$failed_cases"
echo "selftests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
}
