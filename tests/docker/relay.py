#!/usr/bin/env python3
"""A Docker daemon that can vanish: a unix socket relay to the real one.

usage: relay.py LISTEN_SOCKET DAEMON_SOCKET READY_FILE

Forwards every connection made to LISTEN_SOCKET to DAEMON_SOCKET, byte for
byte. SIGUSR1 cuts it: every relayed connection is closed and the socket
file removed, so a client sees what it sees when the daemon dies (refused
or reset, at once). SIGUSR2 brings it back at the same path. The daemon
behind it goes on running: containers keep running through an outage, as
they do under containerd when dockerd dies. READY_FILE gets "up" or "cut"
after each change. Everything stays on this machine (unix sockets only).
"""
import os
import selectors
import signal
import socket
import sys

listen_path, daemon_path, ready_path = sys.argv[1:4]
sel = selectors.DefaultSelector()
peers = {}          # socket -> the socket it relays to
done = set()        # sockets whose sender shut its side: nothing more to read
listener = None
want = None         # "cut" or "up", set by a signal, acted on by the loop


def say(state):
    tmp = ready_path + ".tmp"
    with open(tmp, "w") as f:
        f.write(state + "\n")
    os.replace(tmp, ready_path)


def up():
    global listener
    if os.path.exists(listen_path):
        os.unlink(listen_path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(listen_path)
    listener.listen(128)
    listener.setblocking(False)
    sel.register(listener, selectors.EVENT_READ)
    say("up")


def drop(s):
    other = peers.pop(s, None)
    for x in (s, other):
        if x is None:
            continue
        peers.pop(x, None)
        done.discard(x)
        try:
            sel.unregister(x)
        except (KeyError, ValueError):
            pass
        x.close()


def half_close(s):
    """s's sender shut its side: pass that on, keep the other way open."""
    done.add(s)
    sel.unregister(s)
    try:
        peers[s].shutdown(socket.SHUT_WR)
    except OSError:
        pass
    if peers[s] in done:
        drop(s)


def cut():
    global listener
    if listener is not None:
        sel.unregister(listener)
        listener.close()
        listener = None
    if os.path.exists(listen_path):
        os.unlink(listen_path)
    for s in list(peers):
        drop(s)
    say("cut")


def accept():
    c, _ = listener.accept()
    d = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        d.connect(daemon_path)
    except OSError:
        c.close()
        d.close()
        return
    for s in (c, d):
        s.setblocking(True)
        sel.register(s, selectors.EVENT_READ)
    peers[c], peers[d] = d, c


def pump(s):
    try:
        data = s.recv(65536)
    except OSError:
        drop(s)
        return
    if not data:
        half_close(s)
        return
    try:
        peers[s].sendall(data)
    except (OSError, KeyError):
        drop(s)


def on_signal(signum, _frame):
    global want
    want = "cut" if signum == signal.SIGUSR1 else "up"


signal.signal(signal.SIGUSR1, on_signal)
signal.signal(signal.SIGUSR2, on_signal)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
up()
try:
    while True:
        if want == "cut" and listener is not None:
            cut()
        elif want == "up" and listener is None:
            up()
        want = None
        for key, _ in sel.select(timeout=0.05):
            if key.fileobj is listener:
                accept()
            elif key.fileobj in peers:
                pump(key.fileobj)
finally:
    if os.path.exists(listen_path):
        os.unlink(listen_path)
