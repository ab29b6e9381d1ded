#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Where a traced selftest spent its time: the commands after which the
# next one started latest (a command's own time, or what it waited for).
#   MRXE_TRACE=1 tools/labvm/run-selftests.sh PROG.sh
#   tools/labvm/trace-gaps.sh build/labvm/runs/RUN/vm1/trace/PROG.TEST [N]
# Background jobs interleave their lines, so a gap is "until the next line
# of any process": good for finding slow steps, not exact per command.
set -euo pipefail
[ $# -ge 1 ] || { sed -n '3,8p' "$0"; exit 2; }
awk '
	/^\++ [0-9]+\.[0-9]+ / {
		t = $2
		if (prev != "")
			printf "%8.3f  %s\n", t - pt, prev
		if (first == "")
			first = t
		pt = t
		$1 = $2 = ""
		prev = substr($0, 3, 160)
		last = t
	}
	END { printf "%8.3f  total traced\n", last - first }
' "$1" | sort -rn | head -n "$((${2:-25} + 1))"
