#!/usr/bin/env python3
"""The confinement matrix's network observers, all outside the agent.

usage: observers.py STATE_DIR TOKEN

Listens, on this host only, on:
  tcp4   127.0.0.1:PORT       accepts, reads what arrives
  tcp6   [::1]:PORT           the same port
  dns4   UDP 127.0.0.1:PORT   receives DNS questions, never answers or forwards
  dns6   UDP [::1]:PORT
  unix   the abstract unix socket @airlock-matrix-<pid> in this network namespace
Writes STATE_DIR/port and STATE_DIR/abstract at start, then after every event
rewrites STATE_DIR/counts.json: per observer, how many connections or
datagrams arrived and how many carried TOKEN (raw, or hex-encoded across DNS
labels). Received bytes are searched, never stored. Exits after 900 s.
"""
import binascii
import json
import os
import socket
import sys
import threading
import time

state_dir, token = sys.argv[1], sys.argv[2].encode()
token_hex = binascii.hexlify(token)
names = ("tcp4", "tcp6", "dns4", "dns6", "unix")
counts = {n: {"events": 0, "canary": 0} for n in names}
lock = threading.Lock()


def write_state():
    tmp = os.path.join(state_dir, "counts.json.tmp")
    with open(tmp, "w") as f:
        json.dump(counts, f)
    os.replace(tmp, os.path.join(state_dir, "counts.json"))


def carries(data):
    return token in data or token_hex in data.lower()


def record(name, data):
    with lock:
        counts[name]["events"] += 1
        if carries(data):
            counts[name]["canary"] += 1
        write_state()


def qname_text(packet):
    """The concatenated labels of the first question (without length bytes)."""
    out, i = b"", 12
    while i < len(packet) and packet[i] != 0:
        n = packet[i]
        out += packet[i + 1:i + 1 + n]
        i += 1 + n
    return out


def read_stream(conn, name):
    data = b""
    conn.settimeout(2)
    try:
        while len(data) < (1 << 20):
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    conn.close()
    record(name, data)


def serve_stream(sock, name):
    while True:
        conn, _ = sock.accept()
        threading.Thread(target=read_stream, args=(conn, name), daemon=True).start()


def serve_dgram(sock, name):
    while True:
        packet, _ = sock.recvfrom(65536)
        record(name, packet + b" " + qname_text(packet))


def bind_pair(kind):
    """A v4 and a v6 socket of kind on the same free loopback port."""
    for _ in range(50):
        v4 = socket.socket(socket.AF_INET, kind)
        v4.bind(("127.0.0.1", 0))
        port = v4.getsockname()[1]
        v6 = socket.socket(socket.AF_INET6, kind)
        v6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            v6.bind(("::1", port))
            return port, v4, v6
        except OSError:
            v4.close()
            v6.close()
    raise SystemExit("observers: no free loopback port pair")


def bind_all():
    for _ in range(50):
        port, t4, t6 = bind_pair(socket.SOCK_STREAM)
        u4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        u6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            u4.bind(("127.0.0.1", port))
            u6.bind(("::1", port))
            return port, t4, t6, u4, u6
        except OSError:
            for s in (t4, t6, u4, u6):
                s.close()
    raise SystemExit("observers: no free port for TCP and UDP together")


def main():
    port, t4, t6, u4, u6 = bind_all()
    abstract = "airlock-matrix-%d" % os.getpid()
    ux = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ux.bind("\0" + abstract)
    for s in (t4, t6, ux):
        s.listen(16)
    write_state()
    for target, args in ((serve_stream, (t4, "tcp4")), (serve_stream, (t6, "tcp6")),
                         (serve_dgram, (u4, "dns4")), (serve_dgram, (u6, "dns6")),
                         (serve_stream, (ux, "unix"))):
        threading.Thread(target=target, args=args, daemon=True).start()
    with open(os.path.join(state_dir, "abstract"), "w") as f:
        f.write(abstract)
    with open(os.path.join(state_dir, "port"), "w") as f:
        f.write(str(port))
    time.sleep(900)


main()
