#!/usr/bin/env python3
"""A loopback TCP observer for confinement tests.

usage: tcp_observer.py PORT_FILE COUNT_FILE
Listens on 127.0.0.1 and ::1 (the same ephemeral port), writes the port to
PORT_FILE, and rewrites COUNT_FILE with the number of connections accepted
so far (bytes received are counted, never stored). Exits after 600 s.
"""
import socket
import sys
import threading
import time

count = 0
lock = threading.Lock()


def record():
    with open(sys.argv[2], "w") as f:
        f.write(str(count))


def serve(sock):
    global count
    while True:
        conn, _ = sock.accept()
        with lock:
            count += 1
            record()
        conn.close()


v4 = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
v4.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
v4.bind(("127.0.0.1", 0))
port = v4.getsockname()[1]
v4.listen(16)
socks = [v4]
try:
    v6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    v6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    v6.bind(("::1", port))
    v6.listen(16)
    socks.append(v6)
except OSError:
    pass
record()
for s in socks:
    threading.Thread(target=serve, args=(s,), daemon=True).start()
with open(sys.argv[1], "w") as f:
    f.write(str(port))
time.sleep(600)
