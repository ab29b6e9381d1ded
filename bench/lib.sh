# SPDX-License-Identifier: GPL-2.0
# Host side of the one-guest benchmarks (bench/netns.sh, bench/multipath.sh):
# run the calling script inside one lab guest and collect its CSVs.

# bench_in_guest SCRIPT TIMEOUT NAME [EXTRA...]: run SCRIPT in one lab
# guest (tools/labvm/vm-run.sh --live), then copy the guest's NAME.csv to
# bench/results/NAME-<stamp>.csv with a leading commit column, and each
# EXTRA.csv (optional) to bench/results/NAME-<stamp>-EXTRA.csv.  The stamp
# is MRXE_BENCH_STAMP (bench/run.sh sets one per run) or now.
bench_in_guest() {
	local script=$1 timeout=$2 name=$3 repo stamp log rundir csv rev x
	shift 3
	repo=$(cd "$(dirname "$script")/.." && pwd)
	stamp=${MRXE_BENCH_STAMP:-$(date +%Y%m%d-%H%M%S)}
	rev=${MRXE_BENCH_REV:-$(git -C "$repo" rev-parse --short HEAD 2>/dev/null)}
	mkdir -p "$repo/bench/results"
	log=$(mktemp)
	"$repo/tools/labvm/vm-run.sh" --live --timeout "$timeout" -- \
		bash "$script" 2>&1 | tee "$log"
	rundir=$(sed -n 's/.*logs[: ]* \(\/.*\)$/\1/p' "$log" | tail -n1)
	rm -f "$log"
	csv=$rundir/vm1/$name.csv
	[ -s "$csv" ] || { echo "bench: no $name results (logs: ${rundir:-?})" >&2; return 1; }
	sed "1s/^/commit,/; 2,\$s/^/$rev,/" "$csv" > "$repo/bench/results/$name-$stamp.csv"
	for x in "$@"; do
		[ -s "$rundir/vm1/$name-$x.csv" ] &&
			cp "$rundir/vm1/$name-$x.csv" "$repo/bench/results/$name-$stamp-$x.csv"
	done
	echo "bench: bench/results/$name-$stamp.csv"
}
