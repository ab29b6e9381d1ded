#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run each libFuzzer target for FUZZ_SECONDS, one after the other, and print
# one summary line per target: executions, coverage (edges), corpus size,
# crashes.  Exit 1 if any target crashed (its input is kept in
# $OUT/crash/TARGET-*; reproduce with `$OUT/fuzz_TARGET FILE`).
set -uo pipefail
: "${OUT:?}" "${FUZZ_SECONDS:=60}"
mkdir -p "$OUT/work" "$OUT/crash" "$OUT/log"
fail=0
printf '%-8s %10s %8s %8s %6s %s\n' target execs cov ft corpus result
for t in "$@"; do
	log=$OUT/log/$t.log
	mkdir -p "$OUT/work/$t"
	"$OUT/fuzz_$t" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
		-max_len=8192 -print_final_stats=1 -artifact_prefix="$OUT/crash/$t-" \
		"$OUT/work/$t" "$OUT/corpus/$t" > "$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
	last=$(grep -E '^#[0-9]+' "$log" | tail -n1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
	if [ $rc = 0 ]; then res=ok; else res="CRASH (rc $rc, see $log)"; fail=1; fi
	printf '%-8s %10s %8s %8s %6s %s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$res"
	[ $rc = 0 ] || grep -E 'ERROR|invariant failed|runtime error|Test unit written' "$log" | head -n5
done
exit $fail
