#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Add (or with --remove, remove) a user-defined SMC Enterprise ID (UEID).

SMC-Rv2 (RoCEv2: what mrxe offers; SMC-Rv1 wants RoCEv1 GIDs) is proposed
only with a UEID configured (net/smc/af_smc.c, smc_find_proposal_devices).
smc-tools' `smcd ueid add` does it but is not in Debian's archive, so this
speaks the SMC_GEN_NETLINK generic netlink family directly
(include/uapi/linux/smc.h: SMC_NETLINK_ADD_UEID = 10, REMOVE_UEID = 11,
attribute SMC_NLA_EID_TABLE_ENTRY = 1, 32 characters plus NUL).
usage: mrxe_smc_ueid.py [--remove] UEID
"""
import errno
import os
import socket
import struct
import sys

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
NLMSG_ERROR = 2
NLM_F_REQUEST = 1
NLM_F_ACK = 4
SMC_NETLINK_ADD_UEID = 10
SMC_NETLINK_REMOVE_UEID = 11
SMC_NLA_EID_TABLE_ENTRY = 1
SMC_MAX_EID_LEN = 32


def nla(kind, data):
    n = 4 + len(data)
    return struct.pack("HH", n, kind) + data + b"\0" * (-n % 4)


def request(sock, family, cmd, attrs):
    """Send one genetlink request; return (errno, reply payload)."""
    body = struct.pack("BBH", cmd, 1, 0) + attrs
    sock.send(struct.pack("IHHII", 16 + len(body), family,
                          NLM_F_REQUEST | NLM_F_ACK, 1, 0) + body)
    while True:
        reply = sock.recv(65536)
        kind = struct.unpack("IHHII", reply[:16])[1]
        if kind == NLMSG_ERROR:
            err = -struct.unpack("i", reply[16:20])[0]
            if err or cmd != CTRL_CMD_GETFAMILY:
                return err, b""
            continue	# the ACK after the family reply
        return 0, reply[20:]


def family_id(sock, name):
    err, payload = request(sock, GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                           nla(CTRL_ATTR_FAMILY_NAME, name.encode() + b"\0"))
    if err:
        raise OSError(err, "genetlink family %s: %s" % (name, os.strerror(err)))
    off = 0
    while off + 4 <= len(payload):
        n, kind = struct.unpack("HH", payload[off:off + 4])
        if kind == CTRL_ATTR_FAMILY_ID:
            return struct.unpack("H", payload[off + 4:off + 6])[0]
        off += (n + 3) & ~3
    raise OSError(errno.ENOENT, "genetlink family %s: no id" % name)


def main():
    args = sys.argv[1:]
    remove = args[:1] == ["--remove"]
    if remove:
        args = args[1:]
    if len(args) != 1 or len(args[0]) > SMC_MAX_EID_LEN:
        sys.exit(__doc__)
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC) as s:
        s.bind((0, 0))
        fam = family_id(s, "SMC_GEN_NETLINK")
        entry = args[0].ljust(SMC_MAX_EID_LEN).encode() + b"\0"
        cmd = SMC_NETLINK_REMOVE_UEID if remove else SMC_NETLINK_ADD_UEID
        err, _ = request(s, fam, cmd, nla(SMC_NLA_EID_TABLE_ENTRY, entry))
    if err and not (err == errno.EEXIST and not remove):
        sys.exit("%s UEID %s: %s" % ("remove" if remove else "add", args[0],
                                     os.strerror(err)))
    print("UEID %s %s" % (args[0], "removed" if remove else "configured"))


if __name__ == "__main__":
    main()
