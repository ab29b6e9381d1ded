#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# selftest-timeout: 900
# Issue 9: any device name works with the provider (a stock rxe device is
# left to rxe's provider), and mrxectl over the "mrxe" generic netlink
# family: every command on real devices with ib_write_bw running, JSON
# checked against sysfs hw_counters, set/show round trip, EPERM for an
# unprivileged set, clear errors for bad input, malformed raw netlink
# messages, netns isolation, and monitor seeing events a test caused.

MRXE_TEST_TIMEOUT=${MRXE_TEST_TIMEOUT:-240}
CTL_SRV=
CTL_CLI=
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mrxe_xfer_lib.sh"

CTL=$MRXE_REPO/build/mrxectl
PORT=18900

ctl_require() {
	[ "$MRXE_LINK_TYPE" = rxe ] && skip "mrxe's netlink family and provider matching (stock rxe has neither)"
	xfer_require datapath
	[ -x "$CTL" ] || skip "$CTL not built (make tool)"
	trap xfer_cleanup EXIT
}

# ctl_setup: xfer topology (DEV_A in NS_A, DEV_B in NS_B).
ctl_setup() {
	ctl_require
	xfer_setup 1500
}

ctla() { nsa "$CTL" "$@"; }

# py EXPR-FILE...: python3 with the JSON on stdin.
# ---------------------------------------------------------- any name ----

# Devices named roce0 and x: ibv_devinfo and ibv_rc_pingpong between them.
test_any_name() {
	ctl_require
	mrxe_require_module
	mrxe_netns_setup
	link_add "$NS_A" roce0 "$VETH_A"
	link_add "$NS_B" x "$VETH_B"
	DEV_A=roce0
	DEV_B=x
	cat /sys/class/infiniband/roce0/mrxe_abi_version
	xfer_wait_gid roce0 "$IP_A"
	GID_A=$REPLY
	xfer_wait_gid x "$IP_B"
	GID_B=$REPLY
	wait_for 10 port_state_is roce0 ACTIVE
	wait_for 10 port_state_is x ACTIVE
	ibv_devices
	nsa ibv_devinfo -d roce0 | grep -E "hca_id|transport|state"
	nsb ibv_devinfo -d x | grep -E "hca_id|transport|state"
	PORT=$((PORT + 1))
	xfer_pair 120 "tcp:$PORT" \
		ibv_rc_pingpong -d roce0 -g "$GID_A" -p $PORT -n 100 -s 4096 -c \
		-- \
		ibv_rc_pingpong -d x -g "$GID_B" -p $PORT -n 100 -s 4096 -c "$SRV_IP"
}

# mrxe_provider_only CMD...: CMD with libibverbs loading only mrxe's provider.
mrxe_provider_only() {
	unshare -m sh -c 'mount -t tmpfs none /etc/libibverbs.d && exec "$@"' sh "$@"
}

# A stock rxe device named mrxe1 is never claimed by mrxe's provider.
test_stock_rxe_not_claimed() {
	ctl_require
	mrxe_require_module
	modprobe rdma_rxe || skip "rdma_rxe not available"
	modprobe veth
	ip link add veth-rxe-a type veth peer name veth-rxe-b
	trap 'rdma link del mrxe1 2>/dev/null; ip link del veth-rxe-a 2>/dev/null; xfer_cleanup' EXIT
	ip addr add 192.168.79.1/24 dev veth-rxe-a
	ip link set veth-rxe-a up
	ip link set veth-rxe-b up
	rdma link add mrxe1 type rxe netdev veth-rxe-a
	mrxe_netns_setup
	link_add "$NS_A" mrxe0 "$VETH_A"
	rdma link show
	[ ! -e /sys/class/infiniband/mrxe1/mrxe_abi_version ] ||
		fail "stock rxe device has mrxe's sysfs attribute"
	# Only mrxe's provider loaded (RDMAV_DRIVERS; the system's provider
	# list /etc/libibverbs.d hidden by an empty tmpfs in a private mount
	# namespace): mrxe0 is claimed, mrxe1 is not.
	local only
	only=$(mrxe_provider_only ibv_devices 2>&1)
	echo "mrxe provider only: $only"
	printf '%s\n' "$only" | grep -qw mrxe0 || fail "mrxe0 not listed by mrxe's provider"
	if printf '%s\n' "$only" | grep -qw mrxe1; then
		fail "mrxe's provider claimed the stock rxe device mrxe1"
	fi
	# With every provider: mrxe1 is rxe's and works.
	ibv_devinfo -d mrxe1 | grep -E "hca_id|vendor_part_id|fw_ver|state"
	# mrxe's alone cannot open it
	if mrxe_provider_only ibv_devinfo -d mrxe1 >/dev/null 2>&1; then
		fail "mrxe1 opened without rxe's provider"
	fi
	mrxe_provider_only ibv_devinfo -d mrxe0 | grep -E "hca_id|state" ||
		fail "mrxe0 does not open with mrxe's provider alone"
}

# ---------------------------------------------------------- mrxectl ----

test_ctl_help() {
	[ -x "$CTL" ] || skip "$CTL not built (make tool)"
	[ "$MRXE_LINK_TYPE" = rxe ] && skip "mrxe only"
	local o
	for o in dev qp path stats monitor; do
		"$CTL" "$o" help | grep -q "Usage:" || fail "$o help"
	done
	"$CTL" help | grep -q "OBJECT"
	expect_err "no arguments" "Usage" "$CTL"
	expect_err "unknown object" 'unknown object "frob"' "$CTL" frob
	expect_err "unknown command" 'dev: unknown command "frob"' "$CTL" dev frob
	expect_err "unknown option" 'unknown option "-z"' "$CTL" -z dev show
	if command -v man >/dev/null; then
		MANWIDTH=80 man -l "$MRXE_REPO/tools/mrxectl/mrxectl.8" 2>/dev/null | head -n 5
		MANWIDTH=80 man -l "$MRXE_REPO/tools/mrxectl/mrxectl.8" 2>/dev/null | grep -q "dev set" ||
			fail "man page does not render"
	fi
	bash -n "$MRXE_REPO/tools/mrxectl/mrxectl.bash-completion"
}

# Devices of another namespace are invisible, in shows and sets.
test_ctl_netns() {
	ctl_setup
	ctla dev show
	ctla -j dev show | jq_py "
names=[x['dev'] for x in d]
assert names == ['$DEV_A'], names"
	nsb "$CTL" -j dev show | jq_py "
names=[x['dev'] for x in d]
assert names == ['$DEV_B'], names"
	"$CTL" -j dev show | jq_py "assert d == [], d"
	"$CTL" -j qp show | jq_py "assert d == [], d"
	expect_err "other netns's device" "device: No such device" ctla dev show "$DEV_B"
	expect_err "other netns's device (set)" "device: No such device" ctla dev set "$DEV_B" ecn on
	expect_err "from init_net" "No such device" "$CTL" stats "$DEV_A"
}

test_ctl_set_roundtrip() {
	ctl_setup
	ctla dev set "$DEV_A" mode standard paths 4 ecn on cnp-interval 120
	ctla dev show "$DEV_A"
	ctla -j dev show "$DEV_A" | jq_py "
x=d[0]
assert (x['mode'], x['paths'], x['ecn'], x['cnp_interval_us']) == ('standard', 4, True, 120), x
assert x['netdev'] == '$VETH_A' and x['port_state'] == 'ACTIVE', x"
	ctla dev set "$DEV_A" paths 16 ecn off window 64
	ctla -p -j dev show "$DEV_A" | jq_py "
x=d[0]
assert (x['paths'], x['ecn'], x['cnp_interval_us'], x['window']) == (16, False, 120, 64), x"
	ctla dev set "$DEV_A" cnp-interval 1
	ctla dev set "$DEV_A" cnp-interval 1000000
	ctla -j dev show "$DEV_A" | jq_py "assert d[0]['cnp_interval_us'] == 1000000, d"
	# The other device kept its defaults.
	nsb "$CTL" -j dev show "$DEV_B" | jq_py "
x=d[0]
assert (x['paths'], x['ecn'], x['cnp_interval_us'], x['window']) == (1, True, 50, 4096), x"
}

test_ctl_bad_input() {
	ctl_setup
	expect_err "unknown device" 'dev set nosuch: device: No such device .*kernel: no mrxe device' \
		ctla dev set nosuch ecn on
	expect_err "unknown device (show)" 'device: No such device' ctla dev show nosuch
	expect_err "bad mode" 'mode "fast": expected standard, metaroce or auto' \
		ctla dev set "$DEV_A" mode fast
	# MetaRoCE exists since issue 8: both modes are accepted
	ctla dev set "$DEV_A" mode metaroce
	ctla -j dev show "$DEV_A" | jq_py "assert d[0]['mode'] == 'metaroce', d"
	ctla dev set "$DEV_A" mode auto
	expect_err "paths 0" 'paths: Numerical result out of range' ctla dev set "$DEV_A" paths 0
	expect_err "paths 17" 'paths: Numerical result out of range' ctla dev set "$DEV_A" paths 17
	expect_err "paths -1" 'paths "-1": not an unsigned' ctla dev set "$DEV_A" paths -1
	expect_err "paths x" 'paths "x": not an unsigned' ctla dev set "$DEV_A" paths x
	expect_err "ecn maybe" 'ecn "maybe": expected on or off' ctla dev set "$DEV_A" ecn maybe
	expect_err "window 15" 'window: Numerical result out of range' ctla dev set "$DEV_A" window 15
	expect_err "window 4097" 'window: Numerical result out of range' ctla dev set "$DEV_A" window 4097
	expect_err "window x" 'window "x": not an unsigned' ctla dev set "$DEV_A" window x
	expect_err "cnp-interval 0" 'cnp-interval: Numerical result out of range' \
		ctla dev set "$DEV_A" cnp-interval 0
	expect_err "cnp-interval 1000001" 'cnp-interval: Numerical result out of range' \
		ctla dev set "$DEV_A" cnp-interval 1000001
	expect_err "nothing to set" 'nothing to set' ctla dev set "$DEV_A"
	expect_err "unknown qpn" 'qpn: No such file or directory' ctla qp show "$DEV_A" qpn 999999
	expect_err "qpn out of range" 'qpn: Numerical result out of range' \
		ctla qp show "$DEV_A" qpn 16777216
	expect_err "path without qpn" 'needs a device and "qpn N"' ctla path show "$DEV_A"
	# A refused set changed nothing.
	ctla -j dev show "$DEV_A" | jq_py "
x=d[0]
assert (x['mode'], x['paths'], x['ecn'], x['cnp_interval_us'], x['window']) == ('auto', 1, True, 50, 4096), x"
}

test_ctl_unprivileged() {
	ctl_setup
	local priv=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	"${priv[@]}" id
	nsa "${priv[@]}" "$CTL" dev show "$DEV_A"
	nsa "${priv[@]}" "$CTL" -j stats "$DEV_A" >/dev/null
	expect_err "unprivileged set" 'Operation not permitted' \
		nsa "${priv[@]}" "$CTL" dev set "$DEV_A" ecn off
	ctla -j dev show "$DEV_A" | jq_py "assert d[0]['ecn'] is True, d"
}

test_ctl_raw_netlink() {
	ctl_setup
	nsa python3 "$MRXE_SELFTEST_DIR/mrxe_ctl_raw.py" "$DEV_A"
	# Unprivileged raw set: EPERM before any parsing.
	ctla -j dev show "$DEV_A" | jq_py "assert d[0]['paths'] == 1, d"
}

# Every show command with ib_write_bw running between A and B.  The
# commands run while the traffic flows and keep what they print; one
# python3 checks it all after the traffic stopped (each python3 start
# takes seconds under TCG with perftest on both vCPUs; the snapshots are
# what is checked, and sysfs counters only grow, so "le" against sysfs
# read later holds as it did read right away).
test_ctl_traffic() {
	ctl_setup
	command -v ib_write_bw >/dev/null || skip "perftest not installed"
	local j=$XFER_TMP/ctl.$$ qpn
	PORT=$((PORT + 1))
	# Traffic for longer than the checks can take (TCG speed varies with
	# the host's load); stopped once they are done.  ip netns exec execs
	# timeout, so $! is timeout's pid, which passes SIGTERM on.
	ip netns exec "$NS_A" timeout 200 ib_write_bw -d "$DEV_A" -x "$GID_A" \
		-p $PORT -F -D 150 -s 65536 > "$j.srv" 2>&1 &
	CTL_SRV=$!
	trap 'kill $CTL_CLI $CTL_SRV 2>/dev/null || true; xfer_cleanup' EXIT
	wait_for 20 tcp_listening_a $PORT || { cat "$j.srv"; fail "server not ready"; }
	ip netns exec "$NS_B" timeout 200 ib_write_bw -d "$DEV_B" -x "$GID_B" \
		-p $PORT -F -D 150 -s 65536 "$IP_A" > "$j.cli" 2>&1 &
	CTL_CLI=$!
	# Wait until traffic flows (the client's QP in RTS; a write_bw server
	# stays in RTR).
	wait_for 30 ctl_rc_rts || { cat "$j.srv" "$j.cli"; fail "no RC QP in RTS"; }
	nsb "$CTL" -j qp show "$DEV_B" > "$j.qpb1"
	nsb "$CTL" -j stats "$DEV_B" > "$j.st"
	nsb "$CTL" -j stats "$DEV_B" --watch 1 --count 2 > "$j.w"
	nsb "$CTL" -j qp show "$DEV_B" > "$j.qpb2"
	ctla -j qp show "$DEV_A" > "$j.qp"
	ctla dev show
	ctla qp show "$DEV_A"
	nsb "$CTL" qp show "$DEV_B"
	nsb "$CTL" stats "$DEV_B" -s
	# the server's RC QP (compact JSON: "qpn", "type" and "state" lead)
	qpn=$(grep -oE '"qpn":[0-9]+,"type":"RC","state":"RT[RS]"' "$j.qp" | head -n1 | grep -oE '[0-9]+' | head -n1)
	[ -n "$qpn" ] || fail "no RC QP in RTR/RTS on $DEV_A: $(cat "$j.qp")"
	echo "server RC QP $qpn"
	ctla path show "$DEV_A" qpn "$qpn"
	ctla -j path show "$DEV_A" qpn "$qpn" > "$j.path"
	ctla qp show "$DEV_A" qpn "$qpn"
	ctla -j qp show "$DEV_A" qpn "$qpn" > "$j.qp1"
	ctla -j qp show > "$j.qpall"
	cat "$j.w"
	nsb "$CTL" stats "$DEV_B" --watch 1 --count 1 -s
	# The traffic ran all along: stop it, both ends go away.
	kill -0 $CTL_CLI 2>/dev/null || { cat "$j.cli"; fail "client ended early"; }
	kill $CTL_CLI $CTL_SRV
	wait $CTL_CLI $CTL_SRV 2>/dev/null || true
	wait_for 20 ctl_no_rc || fail "RC QPs left after the traffic stopped"
	# Quiet now (the QPs are gone): the snapshots above, then exact
	# equality of the counters with sysfs (a few tries: the last ACKs may
	# still be counted), same names as rdma statistic.
	python3 - "$j" "$qpn" "$IP_A" "$IP_B" "$DEV_A" "$DEV_B" "$NS_B" "$CTL" <<'PY' ||
import json, os, subprocess, sys, time
j, qpn, ip_a, ip_b, dev_a, dev_b, ns_b, ctl = sys.argv[1:9]
qpn = int(qpn)
ld = lambda suffix: json.load(open(j + suffix))


def sysfs(dev):
    hw = "/sys/class/infiniband/%s/ports/1/hw_counters" % dev
    return {n: int(open(os.path.join(hw, n)).read())
            for n in os.listdir(hw) if n != "lifespan"}


def match(stats, mode):
    c = [x for x in stats if x["dev"] == dev_b][0]["counters"]
    s = sysfs(dev_b)
    assert sorted(c) == sorted(s), ("names differ", sorted(c), sorted(s))
    bad = [(n, v, s[n]) for n, v in c.items()
           if (v != s[n] if mode == "eq" else v > s[n])]
    print("%d counters vs sysfs (%s): %s; sent_pkts %d" %
          (len(c), mode, "match" if not bad else bad, c["sent_pkts"]))
    return not bad


# netlink counters under traffic, never above sysfs read after them
assert match(ld(".st"), "le")
# the server's QP: its peer, one path, default auto (an mrxe pair
# upgrades to metaroce, issue 8)
rc = [x for x in ld(".qp") if x["type"] == "RC" and x["state"] in ("RTR", "RTS")]
assert rc, ld(".qp")
x = rc[0]
assert x["qpn"] == qpn and x["peer"] == ip_b, x
assert x["mode"] in ("standard", "metaroce") and x["paths"] == 1, x
assert x["dest_qpn"] > 0 and len(x["path_list"]) == 1, x
assert 0 < x["path_list"][0]["sport"] < 65536, x
d = ld(".path")
assert len(d) == 1 and d[0]["path"] == 0 and d[0]["state"] == "active", d
assert d[0]["sport"] >= 1, d
d = ld(".qp1")
assert d[0]["qpn"] == qpn, d
d = ld(".qpall")
assert all(x["dev"] == dev_a for x in d), d
# the client's PSNs and per-QP counters moved between the two snapshots,
# the QP's counters never above the device's (taken between them)
rts = lambda d: [x for x in d if x["type"] == "RC" and x["state"] == "RTS"][0]
x, y = rts(ld(".qpb1")), rts(ld(".qpb2"))
assert x["peer"] == ip_a, x
print("client sq_psn %d -> %d, comp_psn %d -> %d" % (x["sq_psn"], y["sq_psn"], x["comp_psn"], y["comp_psn"]))
assert x["sq_psn"] != y["sq_psn"], (x, y)
# a MetaRoCE requester lists its loss-recovery estimators (checked in
# mrxe_metaroce.sh test_meta_window, where the QP is MetaRoCE for sure;
# auto resolves either way here), a QP of another mode none
assert ("srtt_us" in y) == (y["mode"] == "metaroce"), y
gsi = [q for q in ld(".qpb2") if q["type"] == "GSI"]
assert gsi and "srtt_us" not in gsi[0], gsi
cx, cy = x.get("counters", {}), y.get("counters", {})
print("client QP sent_pkts %d -> %d" % (cx.get("sent_pkts", 0), cy.get("sent_pkts", 0)))
assert 0 < cx.get("sent_pkts", 0) < cy["sent_pkts"], (cx, cy)
assert cy["sent_bytes"] >= cy["sent_pkts"] * 64, cy
dev = [s for s in ld(".st") if s["dev"] == dev_b][0]["counters"]
for n, v in cx.items():
    assert v <= dev[n], ("QP counter above the device's", n, v, dev[n])
print("QP counters <= device counters:", sorted(cx))
# stats --watch 1 --count 2: two lines, each a second's delta and rate
lines = [l for l in open(j + ".w") if l.strip()]
assert len(lines) == 2, lines
for l in lines:
    w = json.loads(l)[0]
    s = w["counters"]["sent_pkts"]
    assert w["interval_s"] == 1 and s["delta"] > 0 and s["rate"] > 0, w
print("watch: sent_pkts deltas", [json.loads(l)[0]["counters"]["sent_pkts"]["delta"] for l in lines])
# quiet: exact equality
for i in range(3):
    time.sleep(0.5)
    out = subprocess.run(["ip", "netns", "exec", ns_b, ctl, "-j", "stats", dev_b],
                         check=True, capture_output=True, text=True).stdout
    if match(json.loads(out), "eq"):
        break
else:
    sys.exit("netlink counters differ from sysfs on a quiet device")
PY
		fail "checks of the snapshots failed"
	# Same names as rdma statistic.
	rdma statistic show link "$DEV_B/1" | grep -q sent_pkts
}

# ctl_no_rc / ctl_rc_rts: B lists no RC QP / an RC QP in RTS (one mrxectl,
# a grep of its compact JSON: a python3 per poll costs seconds under load)
ctl_no_rc() {
	local out
	out=$(nsb "$CTL" -j qp show "$DEV_B" 2>/dev/null) || return 1
	! grep -q '"type":"RC"' <<< "$out"
}
tcp_listening_a() { local out; out=$(nsa ss -Hltn "sport = :$1" 2>/dev/null) && [ -n "$out" ]; }
ctl_rc_rts() {
	local out
	out=$(nsb "$CTL" -j qp show "$DEV_B" 2>/dev/null) || return 1
	grep -q '"type":"RC","state":"RTS"' <<< "$out"
}

# monitor sees a dev set and a QP moved to ERROR, in the device's netns only.
test_ctl_monitor() {
	ctl_setup
	local j=$XFER_TMP/mon.$$ m mb
	nsa timeout 90 "$CTL" -j monitor --count 3 > "$j.a" 2>&1 &
	m=$!
	nsb timeout 60 "$CTL" -j monitor > "$j.b" 2>&1 &
	mb=$!
	sleep 1.5
	ctla dev set "$DEV_A" paths 3
	nsa python3 - "$DEV_A" <<'PY'
import sys
import pyverbs.enums as e
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.cq import CQ
from pyverbs.qp import QP, QPInitAttr, QPCap, QPAttr
ctx = Context(name=sys.argv[1])
pd = PD(ctx)
cq = CQ(ctx, 8)
qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                       cap=QPCap(max_send_wr=4, max_recv_wr=4)), QPAttr())
print("qpn", qp.qp_num, "state", qp.qp_state)
a = QPAttr()
a.qp_state = e.IBV_QPS_ERR
qp.modify(a, e.IBV_QP_STATE)
print("moved to ERR")
PY
	# A transport error: retry exceeded on a QP sending to nobody.
	nsa python3 "$MRXE_SELFTEST_DIR/mrxe_ctl_qp_error.py" "$DEV_A" "$GID_A"
	local i
	for ((i = 0; i < 100; i++)); do
		kill -0 $m 2>/dev/null || break
		sleep 0.1
	done
	kill $m 2>/dev/null && { cat "$j.a"; fail "monitor did not see three events"; }
	wait $m || true
	kill $mb 2>/dev/null || true
	wait $mb 2>/dev/null || true
	echo "monitor in A:"; cat "$j.a"
	echo "monitor in B:"; cat "$j.b"
	python3 - "$j.a" "$DEV_A" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
dev = sys.argv[2]
assert ev[0]["event"] == "dev_config" and ev[0]["dev"] == dev and ev[0]["paths"] == 3, ev
assert ev[1]["event"] == "qp_error" and ev[1]["dev"] == dev and ev[1]["type"] == "RC", ev
assert ev[1]["old_state"] == "INIT", ev
assert ev[2]["event"] == "qp_error" and ev[2]["type"] == "RC", ev
assert ev[2]["old_state"] == "RTS" and ev[2]["qpn"] != ev[1]["qpn"], ev
PY
	[ ! -s "$j.b" ] || fail "monitor in B saw A's events"
	# Text form
	nsa timeout 20 "$CTL" monitor --count 1 > "$j.t" 2>&1 &
	m=$!
	sleep 1.5
	ctla dev set "$DEV_A" ecn on
	wait $m || true
	cat "$j.t"
	grep -Eq "dev_config: dev $DEV_A mode (standard|auto) paths 3 ecn on" "$j.t" ||
		fail "text event line"
}

mrxe_run_tests \
	test_any_name \
	test_stock_rxe_not_claimed \
	test_ctl_help \
	test_ctl_netns \
	test_ctl_set_roundtrip \
	test_ctl_bad_input \
	test_ctl_unprivileged \
	test_ctl_raw_netlink \
	test_ctl_traffic \
	test_ctl_monitor
