#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot ONE lab VM and run the mrxe selftests in it (all of TEST_PROGS, or the
# programs named as arguments).  Prints their TAP output as it comes and ends
# with "selftests: N passed, N failed, N skipped"; exits non-zero if any test
# failed, the VM timed out/oopsed, or dmesg showed a kernel problem.
#
#   tools/labvm/run-selftests.sh [PROG.sh...]
#   MRXE_LINK_TYPE=rxe tools/labvm/run-selftests.sh   (validate against stock rxe)
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 2

progs=("$@")
[ ${#progs[@]} -gt 0 ] || read -r -a progs <<< "$(make -s --no-print-directory -C selftests list)"
# MRXE_SUITE_ROTATE=K: start at program K mod N and wrap around.  CI's
# later kernel lines, whose time budget cuts the tail of the list, rotate
# by the commit count (make check-lines), so that over successive
# submissions every program runs on them, not always the same first ones.
if [ -n "${MRXE_SUITE_ROTATE:-}" ] && [ ${#progs[@]} -gt 1 ]; then
	[[ "$MRXE_SUITE_ROTATE" =~ ^[0-9]+$ ]] ||
		{ echo "run-selftests: MRXE_SUITE_ROTATE wants a number, not '$MRXE_SUITE_ROTATE'" >&2; exit 2; }
	k=$((MRXE_SUITE_ROTATE % ${#progs[@]}))
	progs=("${progs[@]:k}" "${progs[@]:0:k}")
	echo "run-selftests: programs rotated by $k (MRXE_SUITE_ROTATE=$MRXE_SUITE_ROTATE): ${progs[*]}"
fi
total=$(selftests/run.sh --total-timeout "${progs[@]}")
# CI (.ci/run) sets MRXE_CI_DEADLINE (epoch seconds): the suite gets what
# is left of CI's hour, less boot and power-off, instead of a fixed budget.
# With MRXE_SUITE_BUDGET_SKIP=1 (CI's second line) what does not fit is
# skipped (selftests/run.sh), and less than 3 minutes left skips the line.
if [ -n "${MRXE_CI_DEADLINE:-}" ] && [ -z "${MRXE_SUITE_BUDGET:-}" ]; then
	MRXE_SUITE_BUDGET=$((MRXE_CI_DEADLINE - $(date +%s) - 90))
	if [ "${MRXE_SUITE_BUDGET_SKIP:-0}" = 1 ]; then
		if [ "$MRXE_SUITE_BUDGET" -lt 180 ]; then
			echo "run-selftests: CI deadline in $((MRXE_CI_DEADLINE - $(date +%s))) s: no time left for this line, not run"
			echo "selftests: 0 passed, 0 failed, ${#progs[@]} skipped"
			exit 0
		fi
	elif [ "$MRXE_SUITE_BUDGET" -lt 600 ]; then
		MRXE_SUITE_BUDGET=600
	fi
	export MRXE_SUITE_BUDGET
	echo "run-selftests: CI deadline in $((MRXE_CI_DEADLINE - $(date +%s))) s: suite budget $MRXE_SUITE_BUDGET s"
fi
budget=${MRXE_SUITE_BUDGET:-3000}
[ "$total" -gt "$budget" ] && total=$budget
total=$((total + 240))	# boot, power-off, slack

exec "$REPO/tools/labvm/vm-run.sh" --live --timeout "$total" -- \
	"$REPO/selftests/run.sh" "${progs[@]}"
