# SPDX-License-Identifier: GPL-2.0
# The goodput of a perftest bandwidth run (ib_write_bw, ib_read_bw,
# ib_send_bw) from its result rows: #bytes #iterations BW peak[MB/sec]
# BW average[MB/sec] MsgRate[Mpps].  Prints the last row's average in Gb/s
# with six decimals: perftest's MB/s are 2^20 bytes and have five
# significant digits here, its --report_gbits two decimals (a 5% step at
# 0.2 Gb/s).  Used by every bench script that runs perftest.
#
#   awk -f bench/perftest-bw.awk [-v size=BYTES] [-v rate=1] [-v none=V] FILE
# size: only rows of that message size; rate=1: ",MsgRate" after the
# goodput; none: printed when no row matched (default: nothing).
$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 5 && $4 ~ /^[0-9.]+$/ &&
    (size == "" || $1 == size) {
	gbps = $4 * 8 * 1048576 / 1e9
	mpps = $5
	n++
}
END {
	if (!n) {
		if (none != "")
			print none
		exit
	}
	if (rate)
		printf "%.6f,%s\n", gbps, mpps
	else
		printf "%.6f\n", gbps
}
