#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Packet-level check of RoCEv2 CNPs and ECN codepoints on one interface.

Captures (AF_PACKET, kernel timestamps) every IPv4 UDP/4791 packet on IFACE
until SIGTERM/SIGINT or --duration, then prints a JSON summary and checks:

  * every CNP (BTH opcode 0x81) has the IBA annex A17.9.3 layout: UDP
    length 8 + BTH 12 + 16 reserved + ICRC 4, SE/M/PadCnt/TVer 0,
    P_Key 0xffff, B (BECN) set, A 0, PSN 0, reserved bytes zero, and is
    sent Not-ECT (IP ECN 00);
  * --min-gap-us N: two CNPs to the same destination QP (address and QPN:
    QPNs are per device) leave at least N us apart (the notification
    point's per-QP pacing);
  * --expect-cnps N: at least N CNPs were seen.

Data packets are counted by IP ECN codepoint and direction, so a caller can
check that the senders mark ECT(0) and that the bottleneck marked CE.
Exit status 0 when every check passed, 1 otherwise.
"""
import argparse
import json
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
SO_TIMESTAMPNS = 35
PACKET_OUTGOING = 4
ROCE_PORT = 4791
SO_RCVBUFFORCE = 33
SOL_PACKET = 263
PACKET_STATISTICS = 6
CAPTURE_BUF = 64 << 20
CNP_UDP_LEN = 8 + 12 + 16 + 4

stop = False


def on_signal(_sig, _frm):
    global stop
    stop = True


def parse_cnp(bth, udp_len):
    """Fields of a CNP BTH and the problems found in it."""
    opcode, b1, pkey, b4, dqpn_hi, dqpn_lo, b8, psn_hi, psn_lo = struct.unpack(
        "!BBHBBHBBH", bth[:12])
    f = {
        "se": b1 >> 7, "m": (b1 >> 6) & 1, "pad": (b1 >> 4) & 3,
        "tver": b1 & 0xf, "pkey": pkey, "fecn": b4 >> 7,
        "becn": (b4 >> 6) & 1, "dqpn": (dqpn_hi << 16) | dqpn_lo,
        "ackreq": b8 >> 7, "psn": (psn_hi << 16) | psn_lo,
    }
    bad = []
    if udp_len != CNP_UDP_LEN:
        bad.append("udp length %d != %d" % (udp_len, CNP_UDP_LEN))
    for k, want in (("se", 0), ("m", 0), ("pad", 0), ("tver", 0),
                    ("pkey", 0xffff), ("becn", 1), ("ackreq", 0), ("psn", 0)):
        if f[k] != want:
            bad.append("%s %#x != %#x" % (k, f[k], want))
    if len(bth) >= 28 and any(bth[12:28]):
        bad.append("reserved bytes not zero")
    return f, bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("iface")
    ap.add_argument("--duration", type=float, default=0)
    ap.add_argument("--min-gap-us", type=float, default=0)
    ap.add_argument("--expect-cnps", type=int, default=0)
    ap.add_argument("--ready", help="touch this file once capturing")
    a = ap.parse_args()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((a.iface, 0))
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    # Every packet on the interface queues here until this loop reads it;
    # on a loaded TCG host the default buffer overflowed and the capture
    # missed most CNPs (35 of 259 on 6.12): root may force a larger one.
    try:
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, CAPTURE_BUF)
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, CAPTURE_BUF)
    s.settimeout(0.2)
    if a.ready:
        open(a.ready, "w").close()
    end = time.monotonic() + a.duration if a.duration else None
    cnps, problems = [], []
    ecn = {"in": [0, 0, 0, 0], "out": [0, 0, 0, 0]}
    while not stop and (end is None or time.monotonic() < end):
        try:
            data, anc, _fl, addr = s.recvmsg(2048, 64)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        except OSError as e:
            # the namespace is going away (ENETDOWN): report what we have
            problems.append("capture ended early: %s" % e)
            break
        if len(data) < 14 + 20 + 8 + 12 or data[12:14] != b"\x08\x00":
            continue
        ip = data[14:]
        ihl = (ip[0] & 0xf) * 4
        if ip[0] >> 4 != 4 or ip[9] != 17:
            continue
        udp = ip[ihl:]
        dport = struct.unpack("!H", udp[2:4])[0]
        if dport != ROCE_PORT:
            continue
        udp_len = struct.unpack("!H", udp[4:6])[0]
        bth = udp[8:]
        ts = None
        for lvl, typ, val in anc:
            if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", val[:16])
                ts = sec * 1e6 + nsec / 1e3
        direction = "out" if addr[2] == PACKET_OUTGOING else "in"
        if bth[0] != 0x81:
            ecn[direction][ip[1] & 3] += 1
            continue
        f, bad = parse_cnp(bth, udp_len)
        # QPNs are per device: a QP is its address and its number
        f.update({"t_us": ts, "dir": direction, "ecn": ip[1] & 3,
                  "dst": socket.inet_ntoa(ip[16:20])})
        if f["ecn"] != 0:
            bad.append("CNP sent with ECN %d (must be Not-ECT)" % f["ecn"])
        cnps.append(f)
        problems += ["CNP %d: %s" % (len(cnps), b) for b in bad]

    # packets the kernel dropped because this socket's buffer was full
    try:
        _seen, cap_drops = struct.unpack(
            "II", s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
    except OSError:
        cap_drops = None
    gaps = {}
    last = {}
    close = 0
    for c in cnps:
        if c["t_us"] is None:
            continue
        k = (c["dir"], c["dst"], c["dqpn"])
        if k in last:
            g = c["t_us"] - last[k]
            gaps[k] = min(gaps.get(k, g), g)
            if a.min_gap_us and g < a.min_gap_us:
                close += 1
        last[k] = c["t_us"]
    min_gap = min(gaps.values()) if gaps else None
    # A QPN is reused when a test tool replaces its QP (mrxe-verify does per
    # case): the new QP's first CNP may follow the old QP's last one at
    # once.  That is a handful at most; pacing that does not work shows up
    # on every pair.
    if close > max(2, len(cnps) // 100):
        problems.append("%d CNP pairs to one QP closer than %.1f us (min %.1f)"
                        % (close, a.min_gap_us, min_gap))
    if len(cnps) < a.expect_cnps:
        problems.append("%d CNPs seen, expected at least %d (capture "
                        "dropped %s packets)" % (len(cnps), a.expect_cnps,
                                                  cap_drops))
    per_qp = {}
    for c in cnps:
        k = "%s:%s:%#x" % (c["dir"], c["dst"], c["dqpn"])
        per_qp[k] = per_qp.get(k, 0) + 1
    summary = {
        "cnps": len(cnps), "cnps_per_qp": per_qp,
        "min_gap_us": min_gap, "close_pairs": close,
        "data_ecn_in": dict(zip(("not_ect", "ect1", "ect0", "ce"), ecn["in"])),
        "data_ecn_out": dict(zip(("not_ect", "ect1", "ect0", "ce"), ecn["out"])),
        "capture_drops": cap_drops,
        "problems": problems[:20], "n_problems": len(problems),
    }
    json.dump(summary, sys.stdout)
    print()
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
