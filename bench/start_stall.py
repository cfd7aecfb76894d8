#!/usr/bin/env python3
"""A client's requests while another client starts installed upstreams.

  start_stall.py AIRLOCK PROGRAM ROUNDS SAMPLES

Runs `airlock serve` as root with a catalog of one installed upstream whose
program is PROGRAM (an npm server's .bin link: its whole node_modules tree
is walked at every start). Each round, interleaved: a view client sends
SAMPLES snapshot requests one after the other and times each round trip,
first with nothing else going on (the baseline), then while an operate
client starts that upstream back to back (airlock). The start is refused
after the walk (its tool names an upstream the config lacks): no session,
no container, only the checks a real start makes first.

Prints sample: lines (bench/report.py): the round trip's p50 and p99 with
and without the starts, in microseconds; a start's round trip in ms, while
the view client asks and alone (30 starts).
Nothing here asserts a figure.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

# The raw control-socket client the tests use: connect() and its line Reader.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "docker"))
from serve_client import Reader, connect  # noqa: E402


class Client:
    """One connection: a request, then lines until its reply."""

    def __init__(self, path):
        self.s, self.next = connect(path), 0
        self.r = Reader(self.s, open(os.devnull, "wb"))
        self.line()  # the hello

    def line(self):
        got = self.r.lines(1)
        if not got:
            raise EOFError("the engine closed the connection or did not answer")
        return got[0]

    def call(self, req):
        self.next += 1
        req["id"] = self.next
        self.s.sendall(json.dumps(req).encode() + b"\n")
        while True:
            f = self.line()
            if f.get("id") == self.next:
                return f


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]


def round_trips(path, n):
    c, out = Client(path), []
    for _ in range(n):
        t0 = time.perf_counter()
        c.call({"op": "snapshot"})
        out.append((time.perf_counter() - t0) * 1e6)
    c.s.close()
    return out


def starter(path, config, stop, took, refused, n=None):
    c = Client(path)
    while not stop.is_set() and (n is None or len(took) < n):
        t0 = time.perf_counter()
        r = c.call({"op": "start", "config": config})
        took.append((time.perf_counter() - t0) * 1e3)
        refused.append(r.get("error") == "config refused" and "nosuch" in r.get("reason", ""))
    c.s.close()


def catalog(work, program):
    d = os.path.join(work, "upstreams.d")
    os.mkdir(d)
    for p in (work, d):
        os.chmod(p, 0o755)
    with open(os.path.join(d, "everything.json"), "w") as f:
        json.dump({"argv": [program], "env": {"PATH": "/usr/bin:/bin"}}, f)
    os.chmod(os.path.join(d, "everything.json"), 0o644)
    return d


def main():
    airlock, program = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    rounds, samples = int(sys.argv[3]), int(sys.argv[4])
    work = tempfile.mkdtemp(prefix="airlock-stall-")
    sock = os.path.join(work, "engine.sock")
    err = open(os.path.join(work, "serve.err"), "w")
    engine = subprocess.Popen([airlock, "serve", "--socket", sock, "--audit",
                               os.path.join(work, "audit.db"), "--upstreams-dir",
                               catalog(work, program)], stdin=subprocess.DEVNULL, stderr=err)
    config = {"profile": {"image": "sha256:" + "0" * 63 + "1", "cmd": ["x"]},
              "upstreams": {"e": {"installed": "everything"}},
              "tools": {"t": {"upstream": "nosuch", "remote": "t", "data_class": "public",
                              "sink_ceiling": "public", "response_ceiling": "public"}}}
    try:
        for _ in range(300):
            if os.path.exists(sock):
                break
            time.sleep(0.1)
        round_trips(sock, 50)  # warm
        for _ in range(rounds):
            idle = round_trips(sock, samples)
            stop, took, refused = threading.Event(), [], []
            t = threading.Thread(target=starter, args=(sock, config, stop, took, refused))
            t.start()
            time.sleep(0.05)  # the first walk is under way
            busy = round_trips(sock, samples)
            stop.set()
            t.join()
            if not refused or not all(refused):
                print("start_stall: a start was not refused after its checks", file=sys.stderr)
                return 1
            print("sample: control_during_starts_p50 baseline=%.1f airlock=%.1f unit=us"
                  % (statistics.median(idle), statistics.median(busy)))
            print("sample: control_during_starts_p99 baseline=%.1f airlock=%.1f unit=us"
                  % (pct(idle, 99), pct(busy, 99)))
            print("sample: control_start_installed_busy baseline=- airlock=%.2f unit=ms"
                  % statistics.median(took))
            alone, refused = [], []
            starter(sock, config, threading.Event(), alone, refused, 30)
            print("sample: control_start_installed baseline=- airlock=%.2f unit=ms"
                  % statistics.median(alone))
            sys.stdout.flush()
    finally:
        engine.terminate()
        engine.wait()
        err.close()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
