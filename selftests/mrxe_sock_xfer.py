#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Byte-verified transfers over the kernel's RDMA socket families.

  smc-server IP PORT       accept one AF_SMC connection, print the bytes
                           received and their SHA-256
  smc-client IP PORT SIZE  connect over AF_SMC, send SIZE random bytes, print
                           their count and SHA-256
  rds IP COUNT             two AF_RDS sockets on IP (transport forced to IB:
                           RDS over RDMA), COUNT messages of 1..60000 bytes
                           each checked as received

Python parses socket addresses by family and knows none for AF_SMC (43):
the SMC socket is wrapped as AF_INET (the kernel takes sockaddr_in on it).
"""
import hashlib
import os
import socket
import sys

AF_SMC = 43
SOL_RDS = 276
SO_RDS_TRANSPORT = 8
RDS_TRANS_IB = 0


def smc_socket():
    s = socket.socket(AF_SMC, socket.SOCK_STREAM, 0)
    return socket.socket(socket.AF_INET, socket.SOCK_STREAM, 0, fileno=s.detach())


def smc_server(ip, port):
    with smc_socket() as srv:
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind((ip, int(port)))
        srv.listen(1)
        srv.settimeout(60)
        conn, _ = srv.accept()
        conn.settimeout(60)
        h, n = hashlib.sha256(), 0
        while True:
            chunk = conn.recv(1 << 20)
            if not chunk:
                break
            h.update(chunk)
            n += len(chunk)
        conn.close()
    print("received %d bytes sha256 %s" % (n, h.hexdigest()))


def smc_client(ip, port, size):
    data = os.urandom(int(size))
    with smc_socket() as c:
        c.settimeout(60)
        c.connect((ip, int(port)))
        c.sendall(data)
    print("sent %d bytes sha256 %s" % (len(data), hashlib.sha256(data).hexdigest()))


def rds(ip, count):
    a = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
    b = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
    for s in (a, b):
        s.setsockopt(SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_IB)
    a.bind((ip, 18634))
    b.bind((ip, 18635))
    b.settimeout(20)
    total = 0
    for i in range(int(count)):
        msg = os.urandom(1 + (i * 7919) % 60000)
        a.sendto(msg, (ip, 18635))
        got, src = b.recvfrom(65536)
        if got != msg or src[1] != 18634:
            sys.exit("rds: message %d differs (%d bytes, %d sent)" % (i, len(got), len(msg)))
        total += len(msg)
    print("rds: %s messages, %d bytes, each verified" % (count, total))


if __name__ == "__main__":
    cmds = {"smc-server": smc_server, "smc-client": smc_client, "rds": rds}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[sys.argv[1]](*sys.argv[2:])
