#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# selftest-timeout: 900
# MetaRoCE transport (issue 8): mrxe <-> mrxe RC QPs created with
# mrxedv_create_qp in `metaroce` mode (mrxe-verify --mode, every byte
# verified), without and with netem faults, and a forced mode mismatch.
#
# Each fault test asserts that the fault happened (netem counters) and that
# the transport reacted (MetaRoCE counters), as mrxe_rc_netem.sh does:
#   loss      netem drops > 0, retransmissions > 0, retransmissions <= 3 x
#             netem drops (go-back-N: 20-70x), the ratio and the detected
#             spurious retransmissions reported (loss on the data direction only,
#             with a fixed 10 ms delay: selective repeat resends only what
#             was lost);
#   reorder   delay 20 ms +- 1 ms both ways: packets placed out of order > 0
#             and retransmissions under 1% of them (RACK: reordering within
#             min_rtt / 4 is not loss; stall-fired probes are reported).  Without a delay, a TCG guest reorders packets
#             itself (the work item changes CPU, veth queues per CPU) by
#             more than min_rtt / 4, and RACK answers with (detected)
#             spurious retransmissions until its window widens;
#   duplicate duplicates seen by the responder > 0.
# Sized for TCG (two guests' worth of work on a shared 2-core host).

MRXE_TEST_TIMEOUT=${MRXE_TEST_TIMEOUT:-300}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mrxe_xfer_lib.sh"

PORT=17311
MRXECTL=$MRXE_REPO/build/mrxectl
META_OPS=write,write_imm,read,send,send_imm

# meta_setup [NETDEV_MTU]
meta_setup() {
	xfer_require verify datapath
	[ $XFER_LOOP = 1 ] && skip "MetaRoCE needs two mrxe devices"
	trap xfer_cleanup EXIT
	xfer_setup "${1:-1500}"
}

# expect_mode MODE: both ends printed the resolved mode MODE
expect_mode() {
	grep -q "mode: requested .*, resolved $1" "$XFER_CLIENT_OUT" ||
		{ echo "FAILED: client QP did not resolve to $1"; return 1; }
	grep -q "mode: requested .*, resolved $1" "$XFER_SERVER_OUT" ||
		{ echo "FAILED: server QP did not resolve to $1"; return 1; }
	echo "both QPs resolved to $1"
}

# dropped_on VETH_SIDE: netem drops on one veth end (a or b)
dropped_on() {
	local fn=run_$1 dev
	[ "$1" = a ] && dev=$VETH_A || dev=$VETH_B
	$fn tc -s qdisc show dev "$dev" |
		sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | awk '{ n += $1 } END { print n + 0 }'
}

# meta_all_ops MODE SIZES SPEC...: every op of META_OPS at SIZES in
# transport MODE through netem SPEC on both directions, bytes verified;
# then the counters.
meta_all_ops() {
	local mode=$1 sizes=$2
	shift 2
	meta_setup 1500
	netem_set "$@"
	verify_run --mode "$mode" --mtu 1024 --iters 1 --ops "$META_OPS" \
		--sizes "$sizes"
	meta_stats
}

meta_stats() {
	hw_stats "$DEV_A"
	hw_stats "$DEV_B"
	run_a tc -s qdisc show dev "$VETH_A"
	run_b tc -s qdisc show dev "$VETH_B"
}

test_meta_mtu256() {
	meta_setup 1500
	SECONDS=0
	verify_run --mode metaroce --mtu 256 --iters 1 --ops "$META_OPS" \
		--sizes 0,1,mtu-1,mtu+1,1M
	echo "MTU 256: ${SECONDS}s"
	expect_mode metaroce
	meta_stats
}

test_meta_mtu4096() {
	meta_setup 9000
	SECONDS=0
	verify_run --mode metaroce --mtu 4096 --iters 1 --ops "$META_OPS" \
		--sizes 0,1,mtu-1,mtu+1,1M,16M
	echo "MTU 4096: ${SECONDS}s"
	expect_mode metaroce
	meta_stats
}

# Loss on the data direction only (client B -> server A: WRITE and SEND),
# so that every retransmission answers a netem drop.
test_meta_loss_1pct() {
	meta_loss 1%
}

test_meta_loss_5pct() {
	meta_loss 5%
}

meta_loss() {
	local drops retx spur
	meta_setup 1500
	# a fixed delay (no jitter: no reordering) gives RACK a min_rtt to
	# size its reordering window against the guest's own reordering
	run_b tc qdisc replace dev "$VETH_B" root netem delay 10ms loss "$1"
	SECONDS=0
	verify_run --mode metaroce --mtu 1024 --iters 1 --ops write,send \
		--sizes 1,mtu+1,1M,8M
	echo "loss $1: ${SECONDS}s"
	meta_stats
	drops=$(dropped_on b)
	retx=$(pair_stat meta_retrans_pkts)
	spur=$(pair_stat meta_spurious_retrans)
	expect_gt "netem drops (data direction)" "$drops" 0 || return 1
	expect_gt "MetaRoCE retransmissions" "$retx" 0 || return 1
	echo "retransmitted/dropped: $retx/$drops, detected spurious: $spur"
	# WRITE packets behind a hole are placed when they arrive, not when
	# the hole is filled (verify_run checked every byte afterwards)
	expect_gt "WRITE packets placed on arrival" \
		"$(pair_stat meta_placed_on_arrival)" 0 || return 1
	# Selective repeat resends what was lost; go-back-N resends 20-70x the
	# loss here (bench/results).  Retransmissions the sender later found
	# unnecessary (a guest or work-item stall made a packet look lost: TCG
	# on a loaded host) are reported, not failed: on a quiet host the bench
	# measures 1.00; loaded runs here gave 1.0-1.8 (known-issues.rst).  The
	# bound below still fails any go-back-N-like behaviour.
	if [ $((retx * 100)) -gt $((drops * 300)) ]; then
		echo "FAILED: $retx retransmitted > 3 x $drops dropped"
		return 1
	fi
	[ $(((retx - spur) * 100)) -le $((drops * 105)) ] ||
		echo "NOTE: $((retx - spur)) non-spurious retransmissions > 1.05 x $drops dropped (loaded host?)"
}

# READ responses lost (1% on the server's egress): the requester re-asks
# for a missing response as soon as a later one shows the gap
# (meta_rsp_gap_rerequests), not only after a backed-off timeout.
test_meta_read_loss() {
	local drops gap rpl lost
	meta_setup 1500
	run_a tc qdisc replace dev "$VETH_A" root netem loss 1%
	SECONDS=0
	verify_run --mode metaroce --mtu 1024 --iters 1 --ops read \
		--sizes 1,mtu+1,1M,8M
	echo "READ, loss 1% on responses: ${SECONDS}s"
	meta_stats
	drops=$(dropped_on a)
	gap=$(pair_stat meta_rsp_gap_rerequests)
	expect_gt "netem drops (response direction)" "$drops" 0 || return 1
	expect_gt "responses re-requested on a gap" "$gap" 0 || return 1
	# what the repair cost the responder, in response packets, against
	# every packet A sent that B did not receive (netem's drops and the
	# receiving guest's backlog drops, which no counter names).  A
	# response timeout while responses still arrive leaves the runs the
	# responder is still streaming alone (mrxe_rsprec.c): before, it
	# asked for every missing run and 2 runs of 8 sent 1148 and 1427
	# again for 130 and 307 lost; since, 0.99-1.12 per lost packet in
	# 28 runs.  The bound leaves room for a timeout that finds the
	# responder silent and asks for everything.
	rpl=$(pair_stat read_rsp_replayed)
	lost=$(( $(stat_value "$DEV_A" sent_pkts) - $(stat_value "$DEV_B" rcvd_pkts) ))
	echo "gap re-requests $gap, response timeouts $(pair_stat retrans_timeouts), netem drops $drops, lost A->B $lost, responses sent again $rpl (dup READ PSNs left to the stream $(pair_stat read_dup_streaming), to a queued replay $(pair_stat read_dup_queued))"
	expect_gt "READ responses sent again" "$rpl" 0 || return 1
	expect_lt "READ responses sent again (2 per lost + 64)" "$rpl" $((2 * lost + 65))
}

# A READ longer than the window keeps a window of 64-PSN chunk requests
# outstanding.  The responder takes each request as it arrives (an ACK
# for it, and a re-request answered at the next message boundary), not
# one per chunk it finished streaming: that kept the window's requests in
# its receive queue, and the requester's SRTT measured that queue - 124 to
# 229 ms over a 12 ms path, which set reo_wnd, the RTO and every repair's
# wait (known-issues.rst, READ).  Since: 17-23 ms.  The median of the
# requester's SRTT samples during two 64 MiB READs must stay below 100 ms
# (the old responder: median 295 ms, least 131 ms; since: 45 ms with a
# second guest loading the host).
test_meta_read_queue_rtt() {
	local snap
	meta_setup 1500
	[ -x "$MRXECTL" ] || skip "$MRXECTL not built (make tool)"
	run_a tc qdisc replace dev "$VETH_A" root netem delay 6ms
	run_b tc qdisc replace dev "$VETH_B" root netem delay 6ms
	snap=$XFER_TMP/rtt.snap
	: > "$snap"
	poll_start 0.2 win_sample "$snap"
	verify_run --mode metaroce --mtu 1024 --iters 2 --ops read --sizes 64M ||
		{ poll_stop; return 1; }
	poll_stop
	python3 - "$snap" <<'PY'
import json, sys
srtt = []
for chunk in open(sys.argv[1]).read().split("\n\n"):
    try:
        d = json.loads(chunk)
    except ValueError:
        continue
    for q in d:
        if q.get("type") == "RC" and q.get("state") == "RTS" and q.get("srtt_us"):
            srtt.append(q["srtt_us"])
print(f"{len(srtt)} samples of the requester's SRTT (us): {srtt}")
if len(srtt) < 3:
    sys.exit("FAILED: fewer than 3 samples of the requester's SRTT")
med = sorted(srtt)[len(srtt) // 2]
print(f"median SRTT {med} us over a 12 ms path")
if med >= 100000:
    sys.exit(f"FAILED: median SRTT {med} us >= 100 ms: READ requests wait at the responder")
PY
}

# READs with a client retry_cnt of 2, black-outs of the responses and
# random loss of the requests: more timeouts during the transfer than
# retry_cnt, but never retry_cnt + 1 without progress.  Found
# two bugs (test_auto_loss_1pct's 8 MiB READ and SRP's target under loss
# ended in retry-exceeded errors now and then): progress made through READ
# responses did not renew the retry budget, and a re-requested run that
# reached past the responder's execution point (after a lost request and
# one-PSN tail probes) was answered but not counted executed, so every
# later request was held for good (meta_read_straddles).  Before: 3 of 3
# runs failed; after: 3 of 3 passed (then with 3% random loss both ways).

# rb_blackouts FILE STOP: every MRXE_RB_EVERY s (0.5) the responder's
# egress drops everything for MRXE_RB_BLACKOUT s (0.1), one line in FILE
# each time, until the file STOP exists.  One tc process takes the commands (tc -batch from a pipe) and the
# waits are bash's own (read -t on a FIFO): under TCG one `ip netns exec
# tc` took about 0.4 s, so black-outs made with them lasted 0.5 s and
# more, long enough to fail a QP legitimately.
rb_blackouts() {
	# a FIFO in the guest's own /tmp (the results share has none)
	local fifo
	fifo=$(mktemp -u /tmp/mrxe-rb.XXXXXX)
	mkfifo "$fifo"
	exec 3<> "$fifo"
	rm -f "$fifo"
	while [ ! -e "$2" ]; do
		read -rt "${MRXE_RB_EVERY:-0.5}" -u 3 || true
		echo "qdisc change dev $VETH_A root netem loss 100%"
		read -rt "${MRXE_RB_BLACKOUT:-0.1}" -u 3 || true
		echo "qdisc change dev $VETH_A root netem loss 0%"
		echo >> "$1"
	done | run_a tc -force -batch -
}

test_meta_read_retry_budget() {
	local rto rto0 tmo tmo0 tlp lost n pid rc retry=${MRXE_RB_RETRY:-2}
	local marks=$XFER_TMP/rb.blackouts
	meta_setup 1500
	# Every timeout spends the budget: the request side's RTOs (the SACK
	# timer, meta_rto) and the response deadlines that found no evidence
	# (mrxe_rsprec.c); both count in retrans_timeouts.  Progress renews
	# it, so one QP outlives more timeouts than retry_cnt.  The timeouts
	# come from short black-outs of the responses (0.1 s every 0.5 s):
	# one or two timeouts each, while failing needs retry_cnt + 1
	# lost in a row, about 0.35 s of black-out with the 50 ms RTO floor.
	# Random loss made the timeouts instead until 2026-12-05: with
	# retry_cnt 2 three lost retries in a row were likely somewhere in a
	# run of 67-259 timeouts (a legitimate retry-exceeded error, CI failed
	# on it once), and once lost re-requested responses were probed and
	# found by send time (design.rst) 3 x 32 MiB at 6% and 10% loss had
	# 3 and 4 timeouts, too few to show anything.  The requests still
	# lose MRXE_RB_LOSS at random (the tail-probe check below).
	run_a tc qdisc replace dev "$VETH_A" root netem loss 0%
	run_b tc qdisc replace dev "$VETH_B" root netem loss "${MRXE_RB_LOSS:-6%}"
	rto0=$(stat_value "$DEV_B" meta_rto)
	tmo0=$(stat_value "$DEV_B" retrans_timeouts)
	: > "$marks"
	rm -f "$marks.stop"
	rb_blackouts "$marks" "$marks.stop" &
	pid=$!
	rc=0
	verify_run --mode metaroce --mtu 1024 --iters "${MRXE_RB_ITERS:-3}" --ops read \
		--sizes 32M --retry-cnt "$retry" || rc=1
	touch "$marks.stop"
	wait "$pid" || true
	[ $rc = 0 ] || { meta_stats; return 1; }
	run_a tc qdisc change dev "$VETH_A" root netem loss 0%
	rto=$(($(stat_value "$DEV_B" meta_rto) - rto0))
	tmo=$(($(stat_value "$DEV_B" retrans_timeouts) - tmo0))
	n=$(wc -l < "$marks")
	meta_stats
	echo "$n black-outs; client timeouts $tmo of which RTOs $rto (retry_cnt $retry), drops $(netem_dropped)"
	expect_gt "netem drops" "$(netem_dropped)" 0 || return 1
	expect_gt "client timeouts on one QP (more than its retry_cnt)" "$tmo" "$retry" || return 1
	# A lost READ request costs at most one tail probe: the probe's
	# response is evidence against the rest of the run, which is then
	# asked for at once (mrxe_meta_rsp_timeout).  Before, a probe
	# deadline asked for one PSN even when the loss was evident (the gap
	# waits reo_wnd, here longer than the probe's 2 SRTT): ladders of
	# one-PSN probes (up to 46 for one request), 789, 958 and 590
	# probes for 147, 148 and 150 lost requests (drops on the client's
	# side); since, 41, 47 and 48 for 164, 149 and 134.  The module
	# before fails this only where reo_wnd outgrows 2 SRTT (TCG: in
	# every run).
	tlp=$(stat_value "$DEV_B" meta_tlp)
	lost=$(dropped_on b)
	echo "client tail probes $tlp for $lost lost requests, gap re-requests $(stat_value "$DEV_B" meta_rsp_gap_rerequests)"
	expect_lt "client tail probes (2 per lost request + 10)" "$tlp" $((2 * lost + 11))
}

# win_run WINDOW|- TAG: three 64 MiB WRITEs from DEV_B with that device
# window (- keeps the default) while `mrxectl -j qp show` samples the
# client QP; prints the largest sq_psn - comp_psn seen (packets in flight).
win_sample() {
	run_b "$MRXECTL" -j qp show "$DEV_B" >> "$1" 2>/dev/null
	echo >> "$1"
}

win_run() {
	local snap=$XFER_TMP/win.$2
	[ "$1" = - ] || run_b "$MRXECTL" dev set "$DEV_B" window "$1"
	run_b "$MRXECTL" -j dev show "$DEV_B" | python3 -c 'import json,sys; print("device window:", json.load(sys.stdin)[0]["window"])' >&2
	: > "$snap"
	poll_start 0.05 win_sample "$snap"
	verify_run --mode metaroce --mtu 1024 --iters 3 --ops write --sizes 64M >&2
	poll_stop
	python3 - "$snap" "$1" <<'PY'
import json, sys
text, want = open(sys.argv[1]).read(), sys.argv[2]
worst, n, last = 0, 0, None
for chunk in text.split("\n\n"):
    try:
        d = json.loads(chunk)
    except ValueError:
        continue
    for q in d:
        if q.get("type") != "RC" or q.get("state") != "RTS" or "sq_psn" not in q:
            continue
        if want != "-":
            assert q.get("window") == int(want), q
        n += 1
        diff = (q["sq_psn"] - q["comp_psn"]) & 0xffffff
        if diff < 1 << 23:
            worst = max(worst, diff)
        if q.get("srtt_us"):
            last = q
print(f"{n} samples, at most {worst} packets in flight", file=sys.stderr)
# the MetaRoCE requester's estimators (mrxectl.rst): an RTT measured, the
# RTO at least its 50 ms floor, the READ responses' reordering window
# RFC 8985's (SRTT/4..SRTT, not above the scoreboard's), the READ
# response window open.  The work item updates the estimators while
# mrxe_meta_est_fill() reads them one after the other (on 2 vCPUs SRTT
# moved by 1% between the two reads: 5512 us beside a window of 1366 us
# computed from a SRTT of 5464 us): the SRTT bounds allow 10%.
e = {k: last[k] for k in ("srtt_us", "min_rtt_us", "rto_us", "reo_wnd_us",
                          "rsp_reo_wnd_us", "rsp_wnd")}
print("estimators:", e, file=sys.stderr)
assert 0 < e["min_rtt_us"] and e["rto_us"] >= 50000, e
assert e["srtt_us"] * 9 // 40 <= e["rsp_reo_wnd_us"] <= e["srtt_us"] * 11 // 10, e
assert e["rsp_reo_wnd_us"] <= e["reo_wnd_us"] and e["rsp_wnd"] >= 1, e
print(worst)
PY
}

# `mrxectl dev set DEV window N` caps the packets a new MetaRoCE QP keeps
# in flight: with window 16 no sample shows more than 16, with the
# default (4096) the same transfer shows more (the test can fail both ways).
# The samples also carry the requester's estimators (win_run checks them).
test_meta_window() {
	local dflt capped
	meta_setup 1500
	[ -x "$MRXECTL" ] || skip "$MRXECTL not built (make tool)"
	dflt=$(win_run - dflt) || return 1
	PORT=$((PORT + 10))	# win_run ran in a subshell: its port is taken
	capped=$(win_run 16 capped) || return 1
	echo "largest in flight: default window $dflt, window 16: $capped"
	[ "$capped" -le 16 ] || { echo "FAILED: $capped packets in flight with window 16"; return 1; }
	[ "$capped" -gt 0 ] || { echo "FAILED: no sample caught a packet in flight"; return 1; }
	[ "$dflt" -gt 16 ] ||
		{ echo "FAILED: the default window never had more than 16 in flight ($dflt): the cap is not shown"; return 1; }
	run_b "$MRXECTL" dev set "$DEV_B" window 4096
}

# lq_sample FILE: the packets queued in the tbf on the sender's veth (B)
lq_sample() {
	run_b tc -s qdisc show dev "$VETH_B" |
		sed -n 's/.*backlog [0-9.]*[KMG]*b \([0-9]*\)p.*/\1/p' >> "$1"
}

# lq_run TAG: a 16 MiB MetaRoCE WRITE (B -> A, verified) while the tbf
# queue is sampled; prints the largest queue seen, in packets
lq_run() {
	local snap=$XFER_TMP/lq.$1
	: > "$snap"
	poll_start 0.05 lq_sample "$snap"
	verify_run --mode metaroce --mtu 1024 --iters 1 --ops write --sizes 16M >&2
	poll_stop
	[ -s "$snap" ] || { echo "FAILED: no queue sample" >&2; return 1; }
	sort -n "$snap" | tail -n1
}

# The sender keeps at most tx_queue_kb of its packets in the host
# (mrxe_task.c "Local queue cap"): a 40 Mbit/s tbf on the sender's veth
# with room for 8 MB would otherwise hold most of MetaRoCE's window (4096
# packets, 4.5 MB) and delay everything behind it by up to a second.  The
# run sets the cap to 128 KiB of truesize (about 50 packets of MTU 1024),
# then turns it off (tx_queue_kb=0): that run must build a queue several
# times larger, or the check shows nothing.  The module's own value is put
# back.
test_meta_local_queue() {
	local param=/sys/module/$MRXE_MODULE/parameters/tx_queue_kb
	local orig capped open full
	meta_setup 1500
	[ -w "$param" ] || skip "module without tx_queue_kb"
	orig=$(cat "$param")
	run_b tc qdisc replace dev "$VETH_B" root tbf rate 40mbit burst 16k limit 8m
	full=$(stat_value "$DEV_B" tx_queue_full)
	echo 128 > "$param"
	capped=$(lq_run capped) || capped=
	full=$(( $(stat_value "$DEV_B" tx_queue_full) - full ))
	echo 0 > "$param"
	PORT=$((PORT + 10))	# lq_run ran in a subshell: its port is taken
	open=$(lq_run open) || open=
	echo "$orig" > "$param"
	[ -n "$capped" ] && [ -n "$open" ] || return 1
	echo "largest tbf queue: $capped packets with tx_queue_kb=128, $open without; tx_queue_full $full"
	run_b tc -s qdisc show dev "$VETH_B"
	expect_lt "queued with the cap (packets)" "$capped" 80 || return 1
	expect_gt "sender held at its cap (tx_queue_full)" "$full" 0 || return 1
	expect_gt "queued without the cap (packets)" "$open" 400 || return 1
}

# MRXE_REORDER_OPS (default write,send,read): the operations of the run,
# to tell which one retransmitted (diagnostics; the bounds are the same).
test_meta_reorder() {
	local retx spur ooo drops lost
	meta_setup 1500
	# netem holds every packet for 20 ms: its default limit of 1000
	# packets overflowed and dropped some (it was not pure reordering)
	netem_set limit 100000 delay 20ms 1ms
	SECONDS=0
	verify_run --mode metaroce --mtu 1024 --iters 1 \
		--ops "${MRXE_REORDER_OPS:-write,send,read}" --sizes 1,mtu+1,1M,8M
	echo "reorder: ${SECONDS}s"
	meta_stats
	retx=$(pair_stat meta_retrans_pkts)
	spur=$(pair_stat meta_spurious_retrans)
	ooo=$(pair_stat meta_ooo_pkts)
	drops=$(netem_dropped)
	lost=$(veth_dropped)
	echo "retransmissions under pure reordering: $retx (detected spurious: $spur), netem drops: $drops, receive backlog drops: $lost"
	expect_gt "packets accepted out of order" "$ooo" 0 || return 1
	[ "$drops" -eq 0 ] ||
		{ echo "FAILED: netem dropped $drops packets: not pure reordering"; return 1; }
	expect_gt "WRITE packets placed on arrival" \
		"$(pair_stat meta_placed_on_arrival)" 0 || return 1
	# RACK never takes in-window reordering for loss, but a guest stall
	# fires tail-loss probes and RTOs (timers, not reordering): those are
	# reported (detected spurious or not) and must stay under 1% of the
	# reordered packets; go-back-N would resend whole windows.  Packets
	# the peer's receive backlog dropped (veth_dropped: a busy guest's
	# netem burst) were really lost: their retransmissions are not
	# counted against reordering.
	[ "$retx" -eq 0 ] ||
		echo "NOTE: $retx retransmissions ($spur detected spurious) under pure reordering"
	if [ $(((retx - lost) * 100)) -gt $((ooo + 500)) ]; then
		echo "FAILED: $retx retransmissions under reordering ($lost really lost), $ooo placed out of order"
		return 1
	fi
}

# No netem at all: a 64 MiB WRITE and SEND keep MetaRoCE's whole window
# (4096 packets) queued at the responder.  The responder used to accept
# that backlog before executing any of it, and no ACK may cover requests
# not executed yet: the requester heard one ACK per window, 50-110 ms
# apart, and its RTO fired 15-18 times in a 3 s ib_write_bw (every one
# spurious).  Now the RTO may fire only for a real guest stall (one such
# 105 ms stall was seen in 3 runs); every byte is verified.
test_meta_lossless_acks() {
	local rto spur retx
	meta_setup 1500
	verify_run --mode metaroce --mtu 1024 --iters 1 --ops write,send \
		--sizes 64M || return 1
	meta_stats
	read -r rto spur retx <<< "$(pair_stats meta_rto meta_spurious_rto meta_retrans_pkts)"
	echo "lossless 2 x 64 MiB: $rto RTOs ($spur found spurious), $retx packets resent"
	[ "$rto" -le 2 ] ||
		{ echo "FAILED: $rto RTOs on a lossless link (the ACKs stalled)"; return 1; }
	[ "$retx" -le 4 ] ||
		{ echo "FAILED: $retx packets resent on a lossless link"; return 1; }
}

# meta_rsockets APP NETEM...: rsockets' APP (riostream or rstream) moves
# 200 x 64 KiB with -T v (every byte checked) from B to A and back over
# rdma_cm (default mode auto: MetaRoCE) through netem NETEM on both ends.
meta_rsockets() {
	local app=$1
	shift
	need_cmd "$app" rdmacm-utils
	meta_setup 1500
	netem_set limit 100000 "$@"
	PORT=$((PORT + 1))
	xfer_pair 240 "cm:$PORT" \
		"$app" -b "$SRV_IP" -p $PORT -S 65536 -C 200 -T v \
		-- \
		"$app" -s "$SRV_IP" -p $PORT -S 65536 -C 200 -T v
}

# rsockets' riostream (rdma-core's example) moves 200 x 64 KiB with RDMA
# WRITEs into one buffer, the same bytes each time, polls the buffer's
# last byte for the last one and then checks every byte (-T v).  Its QPs
# come from rdma_cm (the device default, auto, upgrades them to MetaRoCE)
# and netem reorders, so WRITE packets are placed on arrival: the newer
# WRITE's bytes must be what memory holds (IBA 9.5, PSN order) and a
# WRITE's last byte must show after the bytes before it (mrxe_wrorder.h).
# Before 2026-12-06 the check failed, or the marker never came and
# riostream hung (known-issues.rst).
test_meta_riostream_reorder() {
	meta_rsockets riostream delay 5ms 1ms || return 1
	meta_stats
	expect_gt "QPs upgraded to MetaRoCE" "$(pair_stat mode_upgrades)" 0 &&
	expect_gt "packets accepted out of order" \
		"$(pair_stat meta_ooo_pkts)" 0 &&
	expect_gt "WRITE packets placed on arrival" \
		"$(pair_stat meta_placed_on_arrival)" 0 || return 1
	echo "placed WRITE packets copied again (an older PSN wrote over them): $(pair_stat meta_write_recopied)"
}

# rsockets' rstream (-T v: every byte checked) through 1% loss and
# jitter: its data goes by RDMA WRITE with immediate into the peer's ring
# buffer, every WRITE to its own bytes until the ring wraps (after the
# credits came back, so after the older WRITEs executed).  The fault must
# have happened (netem drops, MetaRoCE retransmissions), packets must
# have been placed on arrival, and none copied twice: reordering and
# holes alone are no overlap (mrxe_wrorder.h; 0 in every lab run).
test_meta_rstream_loss() {
	local recopied
	meta_rsockets rstream loss 1% delay 2ms 1ms || return 1
	meta_stats
	expect_gt "netem drops" "$(netem_dropped)" 0 &&
	expect_gt "MetaRoCE retransmissions" \
		"$(pair_stat meta_retrans_pkts)" 0 &&
	expect_gt "WRITE packets placed on arrival" \
		"$(pair_stat meta_placed_on_arrival)" 0 || return 1
	recopied=$(pair_stat meta_write_recopied)
	[ "$recopied" -eq 0 ] ||
		{ echo "FAILED: $recopied placed packets copied twice (no WRITE overlaps another here)"; return 1; }
	echo "placed packets copied twice: 0"
}

# SEND only, reordered: SEND packets ahead of ePSN are placed in the
# receive WQE their MRH RSN names, at their offset, on arrival (every byte
# verified afterwards; WRITE is not in the run, so the counter is SEND's).
test_meta_send_placed() {
	local placed
	meta_setup 1500
	netem_set limit 100000 delay 20ms 1ms
	verify_run --mode metaroce --mtu 1024 --iters 2 --ops send \
		--sizes 1,mtu+1,1M,4M
	meta_stats
	placed=$(pair_stat meta_placed_on_arrival)
	echo "SEND packets placed on arrival: $placed, accepted out of order: $(pair_stat meta_ooo_pkts)"
	expect_gt "SEND packets placed on arrival" "$placed" 0
}

# SEND, SEND with immediate and WRITE with immediate into receives the
# server posts 20 ms late (mrxe-verify --recv-late: RNR NAKs, IBA
# 9.7.5.2.8) while netem reorders: every byte verified, the receive
# completions checked, and the RNR NAKs must have happened.
test_meta_rnr_late_recv() {
	meta_setup 1500
	netem_set limit 100000 delay 5ms 1ms
	MRXE_VERIFY_SERVER_ARGS="--recv-late 20" verify_run --mode metaroce \
		--mtu 1024 --iters 2 --ops send,send_imm,write_imm \
		--sizes 1,mtu+1,256K || return 1
	meta_stats
	expect_gt "RNR NAKs received" "$(stat_value "$DEV_B" rnr_naks_rcvd)" 0
}

# SENDs into an SRQ placed on arrival (wire-format.rst, "Receiver rules
# for placement"): a QP takes the SRQ's WQEs for the messages up to a SEND
# packet that arrived ahead, in RSN order, and places the packet; every
# byte verified, and the placement counter must move.
test_meta_srq_send_placed() {
	local placed
	meta_setup 1500
	netem_set limit 100000 delay 20ms 1ms
	MRXE_VERIFY_SERVER_ARGS=--srq verify_run --mode metaroce --srq \
		--mtu 1024 --iters 2 --ops send,send_imm --sizes 1,mtu+1,1M,4M
	meta_stats
	placed=$(pair_stat meta_placed_on_arrival)
	echo "SEND packets placed on arrival into an SRQ: $placed, accepted out of order: $(pair_stat meta_ooo_pkts)"
	expect_mode metaroce &&
	expect_gt "SEND packets placed on arrival (SRQ)" "$placed" 0
}

# Both ends take their receives from an SRQ, every op both ways, under
# reordering and 1% loss (SENDs and WRITEs placed on arrival).
test_meta_srq() {
	meta_setup 1500
	netem_set delay 5ms 1ms loss 1%
	MRXE_VERIFY_SERVER_ARGS=--srq verify_run --mode metaroce --srq \
		--mtu 1024 --iters 1 --ops "$META_OPS" --reverse \
		--sizes 0,1,mtu-1,mtu+1,1M,4M
	meta_stats
	expect_mode metaroce &&
	expect_gt "netem drops" "$(netem_dropped)" 0 &&
	expect_gt "MetaRoCE retransmissions" "$(pair_stat meta_retrans_pkts)" 0 &&
	expect_gt "packets accepted out of order" "$(pair_stat meta_ooo_pkts)" 0
}

test_meta_duplicate() {
	meta_all_ops metaroce 1,mtu+1,1M duplicate 5%
	expect_gt "duplicates seen" "$(pair_stat duplicate_request)" 0
}

# Bursts of loss (netem's Gilbert-Elliott model: a bad state entered with
# 0.2% per packet, left with 20%, everything lost in it: bursts of about 5
# packets, ~1% loss), both directions.  Selective repeat resends the burst,
# not the window behind it: retransmissions stay within 3x the drops
# (go-back-N resent 17x here: 8660 for 495).
test_meta_burst_loss() {
	local drops retx
	meta_all_ops metaroce 1,mtu+1,1M,8M loss gemodel 0.2% 20% 100% 0%
	drops=$(netem_dropped)
	retx=$(pair_stat meta_retrans_pkts)
	expect_gt "netem drops (bursts)" "$drops" 0 || return 1
	expect_gt "MetaRoCE retransmissions" "$retx" 0 || return 1
	[ $((retx * 100)) -le $((drops * 300)) ] ||
		fail "$retx retransmitted > 3 x $drops dropped"
}

# Corruption after the link's FCS (netem flips one bit in 1% of the
# frames): the ICRC catches it (A17.3.3) before any field is believed, the
# packet is dropped and counted as such and recovered by retransmission.
# A flipped TVer bit once counted as a mode mismatch: none may be counted.
test_meta_corrupt() {
	meta_all_ops metaroce 1,mtu+1,1M,8M corrupt 1%
	expect_gt "ICRC errors" "$(pair_stat icrc_errors)" 0 || return 1
	expect_gt "MetaRoCE retransmissions" "$(pair_stat meta_retrans_pkts)" 0 || return 1
	[ "$(pair_stat mode_mismatch)" = 0 ] ||
		fail "corrupted packets counted as mode mismatches: $(pair_stat mode_mismatch)"
}

test_meta_all_faults() {
	meta_setup 1500
	netem_set delay 1ms 500us loss 1% duplicate 1%
	SECONDS=0
	verify_run --mode metaroce --mtu 1024 --iters 1 --ops "$META_OPS" \
		--sizes 0,1,mtu-1,mtu+1,1M,8M
	echo "loss + reorder + duplicate: ${SECONDS}s"
	meta_stats
	expect_gt "netem drops" "$(netem_dropped)" 0 &&
	expect_gt "MetaRoCE retransmissions" "$(pair_stat meta_retrans_pkts)" 0
}

# auto <-> auto: both QPs start as RoCEv2 and upgrade in-band (CAP bit in
# BTH byte 8, echoed), both directions; the upgrade is visible through
# mrxedv_query_qp_mode and the mode_upgrades counter.
test_auto_upgrade() {
	meta_setup 1500
	verify_run --mode auto --mtu 1024 --iters 1 --ops "$META_OPS" --reverse \
		--sizes 0,1,mtu-1,mtu+1,1M
	meta_stats
	expect_mode standard || return 1
	grep -q "mode: after the run metaroce" "$XFER_CLIENT_OUT" &&
	grep -q "mode: after the run metaroce" "$XFER_SERVER_OUT" ||
		{ echo "FAILED: the auto QPs did not upgrade"; return 1; }
	echo "both auto QPs upgraded to metaroce"
	expect_gt "mode upgrades" "$(pair_stat mode_upgrades)" 0
}

test_auto_loss_1pct() {
	meta_all_ops auto 1,mtu+1,1M,8M loss 1%
	grep -q "mode: after the run metaroce" "$XFER_CLIENT_OUT" ||
		{ echo "FAILED: the auto QP did not upgrade"; return 1; }
	expect_gt "netem drops" "$(netem_dropped)" 0 &&
	expect_gt "MetaRoCE retransmissions" "$(pair_stat meta_retrans_pkts)" 0
}

# auto against a forced standard QP: no CAP echo, stays RoCEv2, works.
test_auto_vs_standard() {
	meta_setup 1500
	PORT=$((PORT + 1))
	xfer_pair 600 "tcp:$PORT" \
		"$XFER_VERIFY" --server --bind "$SRV_IP" --port $PORT \
			--dev "$DEV_A" --gid-index "$GID_A" --mode standard \
		-- \
		"$XFER_VERIFY" --client --connect "$SRV_IP" --port $PORT \
			--dev "$DEV_B" --gid-index "$GID_B" --mode auto \
			--timeout 120 --iters 1 --ops "$META_OPS" --reverse \
			--sizes 0,1,mtu+1,1M || return 1
	meta_stats
	grep -q "mode: after the run standard" "$XFER_CLIENT_OUT" ||
		{ echo "FAILED: auto QP left standard mode"; return 1; }
	[ "$(pair_stat mode_upgrades)" = 0 ] ||
		{ echo "FAILED: an upgrade was counted"; return 1; }
	echo "auto stayed standard against a standard peer"
}

# auto against a forced metaroce QP, both directions: the forced QP's
# receive side sees RoCEv2 with CAP first and negotiates as an auto one
# (wire-format.rst step 2), the auto QP upgrades; every byte verified.
# Before, the forced QP called the auto peer's first request a mismatch.
test_auto_vs_metaroce() {
	local side
	meta_setup 1500
	for side in client server; do
		local smode=metaroce cmode=auto
		[ $side = server ] && { smode=auto; cmode=metaroce; }
		PORT=$((PORT + 1))
		xfer_pair 600 "tcp:$PORT" \
			"$XFER_VERIFY" --server --bind "$SRV_IP" --port $PORT \
				--dev "$DEV_A" --gid-index "$GID_A" --mode $smode \
			-- \
			"$XFER_VERIFY" --client --connect "$SRV_IP" --port $PORT \
				--dev "$DEV_B" --gid-index "$GID_B" --mode $cmode \
				--timeout 120 --iters 1 --ops "$META_OPS" --reverse \
				--sizes 0,1,mtu+1,1M || return 1
		grep -q "mode: after the run metaroce" "$XFER_CLIENT_OUT" &&
		grep -q "mode: after the run metaroce" "$XFER_SERVER_OUT" ||
			{ echo "FAILED: $side auto: a QP is not metaroce after the run"; return 1; }
		echo "auto $side against forced metaroce: both metaroce"
	done
	meta_stats
	[ "$(pair_stat mode_mismatch)" = 0 ] ||
		{ echo "FAILED: mode_mismatch counted"; return 1; }
	# per run: the auto QP's send and receive sides, the forced QP's
	# receive side (3 each)
	expect_gt "mode upgrades" "$(pair_stat mode_upgrades)" 5
}

# Forced metaroce against a standard QP: the standard responder drops the
# TVer 1 packets (mode_mismatch, QP in error), the MetaRoCE requester gets
# no answer and fails with RETRY_EXC_ERR.  The run must fail, not hang.
test_meta_mismatch() {
	local rc=0
	meta_setup 1500
	PORT=$((PORT + 1))
	xfer_pair 300 "tcp:$PORT" \
		"$XFER_VERIFY" --server --bind "$SRV_IP" --port $PORT \
			--dev "$DEV_A" --gid-index "$GID_A" --mode standard \
		-- \
		"$XFER_VERIFY" --client --connect "$SRV_IP" --port $PORT \
			--dev "$DEV_B" --gid-index "$GID_B" --mode metaroce \
			--timeout 60 --iters 1 --ops write --sizes 4096 || rc=$?
	meta_stats
	[ $rc != 0 ] || { echo "FAILED: a mismatched pair transferred data"; return 1; }
	grep -qi "retry" "$XFER_CLIENT_OUT" ||
		echo "note: no retry-exceeded status in the client output"
	expect_gt "mode_mismatch" "$(pair_stat mode_mismatch)" 0
}

mrxe_run_tests \
	test_meta_mtu256 \
	test_meta_mtu4096 \
	test_meta_loss_1pct \
	test_meta_loss_5pct \
	test_meta_read_loss \
	test_meta_read_retry_budget \
	test_meta_read_queue_rtt \
	test_meta_reorder \
	test_meta_lossless_acks \
	test_meta_riostream_reorder \
	test_meta_rstream_loss \
	test_meta_send_placed \
	test_meta_rnr_late_recv \
	test_meta_srq_send_placed \
	test_meta_srq \
	test_meta_window \
	test_meta_local_queue \
	test_meta_duplicate \
	test_meta_burst_loss \
	test_meta_corrupt \
	test_meta_all_faults \
	test_auto_upgrade \
	test_auto_loss_1pct \
	test_auto_vs_standard \
	test_auto_vs_metaroce \
	test_meta_mismatch
