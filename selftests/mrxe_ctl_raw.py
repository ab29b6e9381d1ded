#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Malformed generic netlink requests to the "mrxe" family, sent with a raw
socket (no library to tidy them up).  Every one must get an NLMSG_ERROR with
a negative errno (and no oops: the caller checks dmesg).

Usage: mrxe_ctl_raw.py DEV   (run in the device's network namespace, as root)
Prints one line per case; exits 1 if any case got no error reply."""
import errno
import os
import socket
import struct
import sys

NETLINK_GENERIC = 16
NLMSG_ERROR = 2
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 1, 4, 0x300
GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 16, 3, 1, 2
SOL_NETLINK, NETLINK_EXT_ACK = 270, 11
NLMSGERR_ATTR_MSG = 1

# include/uapi/rdma/mrxe-netlink.h
CMD_DEV_GET, CMD_DEV_SET, CMD_QP_GET = 1, 2, 3
A_IBDEV_NAME, A_TRANSPORT_MODE, A_NUM_PATHS, A_ECN, A_CNP, A_QPN = 2, 5, 6, 7, 8, 9


def attr(t, payload):
    a = struct.pack("=HH", 4 + len(payload), t) + payload
    return a + b"\0" * ((4 - len(a) % 4) % 4)


def msg(family, cmd, body, flags=NLM_F_REQUEST | NLM_F_ACK, seq=1):
    g = struct.pack("=BBH", cmd, 1, 0) + body
    return struct.pack("=IHHII", 16 + len(g), family, flags, seq, 0) + g


def request(sock, data):
    """Send, return (errno, extack message) of the first error/ack."""
    sock.send(data)
    while True:
        buf = sock.recv(65536)
        off = 0
        while off + 16 <= len(buf):
            ln, typ, flags, seq, pid = struct.unpack_from("=IHHII", buf, off)
            if ln < 16:
                return (None, "bad reply length")
            if typ == NLMSG_ERROR:
                err = struct.unpack_from("=i", buf, off + 16)[0]
                text = ""
                # extack TLVs after nlmsgerr (+ the echoed request unless capped)
                olen = struct.unpack_from("=I", buf, off + 20)[0]
                tlv = off + 16 + 4 + (16 if flags & 0x100 else olen)
                while tlv + 4 <= off + ln:
                    alen, atyp = struct.unpack_from("=HH", buf, tlv)
                    if alen < 4:
                        break
                    if atyp == NLMSGERR_ATTR_MSG:
                        text = buf[tlv + 4:tlv + alen].split(b"\0")[0].decode()
                    tlv += (alen + 3) & ~3
                return (-err, text)
            off += (ln + 3) & ~3
        # data message (e.g. a reply before the ack): keep reading


def family_id(sock):
    sock.send(msg(GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                  attr(CTRL_ATTR_FAMILY_NAME, b"mrxe\0"), NLM_F_REQUEST))
    buf = sock.recv(65536)
    off = 16 + 4
    while off + 4 <= len(buf):
        alen, atyp = struct.unpack_from("=HH", buf, off)
        if atyp == CTRL_ATTR_FAMILY_ID:
            return struct.unpack_from("=H", buf, off + 4)[0]
        off += (alen + 3) & ~3
    raise SystemExit("mrxe family not found")


def main():
    dev = sys.argv[1].encode() + b"\0"
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
    s.bind((0, 0))
    s.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
    s.settimeout(5)
    fam = family_id(s)
    u32 = lambda v: struct.pack("=I", v)
    name = attr(A_IBDEV_NAME, dev)
    cases = [
        ("unknown attribute type 200", CMD_DEV_SET, name + attr(200, u32(1)), 0),
        ("attribute without policy (PATH_SPORT)", CMD_DEV_SET,
         name + attr(11, struct.pack("=H", 1)), 0),
        ("num_paths with a 2-byte payload", CMD_DEV_SET,
         name + attr(A_NUM_PATHS, struct.pack("=H", 4)), 0),
        ("num_paths 0", CMD_DEV_SET, name + attr(A_NUM_PATHS, u32(0)), errno.ERANGE),
        ("num_paths 17", CMD_DEV_SET, name + attr(A_NUM_PATHS, u32(17)), errno.ERANGE),
        ("num_paths 0xffffffff", CMD_DEV_SET, name + attr(A_NUM_PATHS, u32(0xffffffff)),
         errno.ERANGE),
        ("mode 0", CMD_DEV_SET, name + attr(A_TRANSPORT_MODE, u32(0)), errno.ERANGE),
        ("mode 4", CMD_DEV_SET, name + attr(A_TRANSPORT_MODE, u32(4)), errno.ERANGE),
        ("mode metaroce", CMD_DEV_SET, name + attr(A_TRANSPORT_MODE, u32(2)), 0),
        ("mode auto (the default)", CMD_DEV_SET, name + attr(A_TRANSPORT_MODE, u32(3)), 0),
        ("ecn 2", CMD_DEV_SET, name + attr(A_ECN, b"\x02"), errno.ERANGE),
        ("cnp_interval 0", CMD_DEV_SET, name + attr(A_CNP, u32(0)), errno.ERANGE),
        ("cnp_interval 2000000", CMD_DEV_SET, name + attr(A_CNP, u32(2000000)), errno.ERANGE),
        ("set without device", CMD_DEV_SET, attr(A_ECN, b"\x01"), errno.EINVAL),
        ("set with nothing to set", CMD_DEV_SET, name, errno.EINVAL),
        ("device name not NUL-terminated", CMD_DEV_GET,
         attr(A_IBDEV_NAME, sys.argv[1].encode()), 0),
        ("device name of 200 bytes", CMD_DEV_GET, attr(A_IBDEV_NAME, b"x" * 199 + b"\0"), 0),
        ("unknown device", CMD_DEV_GET, attr(A_IBDEV_NAME, b"nosuchdev\0"), errno.ENODEV),
        ("qp get without qpn", CMD_QP_GET, name, errno.EINVAL),
        ("qpn 2^24", CMD_QP_GET, name + attr(A_QPN, u32(1 << 24)), errno.ERANGE),
        ("qpn that does not exist", CMD_QP_GET, name + attr(A_QPN, u32(0xfffff0)), errno.ENOENT),
        ("unknown command 99", 99, name, errno.EOPNOTSUPP),
        ("truncated attribute (nla_len past the end)", CMD_DEV_GET,
         struct.pack("=HH", 64, A_IBDEV_NAME) + dev, 0),
        ("attribute length below the header", CMD_DEV_GET, struct.pack("=HH", 2, A_IBDEV_NAME), 0),
    ]
    bad = 0
    for seq, (what, cmd, body, want) in enumerate(cases, 2):
        err, text = request(s, msg(fam, cmd, body, seq=seq))
        ok = err is not None and err > 0 and (want == 0 or err == want)
        print("%-4s %-45s -> %s%s" % ("ok" if ok else "BAD", what,
              errno.errorcode.get(err, err) if err else "no error (success)",
              " (%s)" % text if text else ""))
        bad += not ok
    # A dump with a malformed filter attribute.
    err, text = request(s, msg(fam, CMD_QP_GET, attr(A_QPN, struct.pack("=H", 1)),
                               NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP, seq=100))
    ok = err is not None and err > 0
    print("%-4s %-45s -> %s%s" % ("ok" if ok else "BAD", "dump with a 2-byte qpn",
          errno.errorcode.get(err, err) if err else "no error", " (%s)" % text if text else ""))
    bad += not ok
    # The socket still works: a good request succeeds.
    err, text = request(s, msg(fam, CMD_DEV_GET, name, seq=200))
    print("%-4s %-45s -> %s" % ("ok" if err == 0 else "BAD", "good request afterwards",
                                 "ack" if err == 0 else errno.errorcode.get(err, err)))
    bad += err != 0
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
