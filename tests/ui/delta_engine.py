#!/usr/bin/env python3
"""A scripted engine on a unix socket for tests/ui/deltas.sh: it speaks the
control protocol (docs/operations.md) to one console, offers deltas, and
pushes one session whose allowed calls go 11 (whole), 22 (a delta on it),
999 (a delta on a base the console does not hold: it must not be drawn),
then, once the console subscribes again, 33 (whole). Two more misfits
follow, 998 and 997, each answered by a whole snapshot (34, then 44) once
the console subscribes again: after the third misfit in a row it must ask
for whole snapshots only.

  delta_engine.py SOCKET LOG

LOG gets one line per thing worth checking: "subscribed deltas=BOOL",
"pushed N". Every wait is bounded; it exits after 60 s.
"""
import json
import os
import socket
import sys
import time

ROW = {"id": "s-d317a5e5c0ffee00", "state": "running", "container": "c" * 64,
       "image": "sha256:" + "9" * 64, "runtime": "runc", "class": "internal",
       "revision": 1, "gate_open": True, "uptime_ms": 5000, "started_ms": 1700000000000,
       "counters": {"calls": 11, "allowed": 11, "denied": 0},
       "lease": {"armed": True, "pulses": 5, "acks": 5, "ack_us": [300]},
       "call": {"active": False}, "tools": [], "frozen": False,
       "admission_first": "admitted", "admission_second": "admitted"}


def snapshot(taken, allowed):
    row = json.loads(json.dumps(ROW))
    row["counters"]["calls"] = row["counters"]["allowed"] = allowed
    return {"generation": taken, "taken_ms": taken, "revision": 1, "live": 1,
            "started_total": 1, "standing": [], "standing_by": [], "standing_revision": [],
            "frozen": False, "pools": [], "sessions": [row]}


def delta(base, taken, allowed):
    return {"base": base, "patch": {"taken_ms": taken, "generation": taken},
            "rows": {ROW["id"]: {"counters": {"calls": allowed, "allowed": allowed}}}}


class Conn:
    def __init__(self, s, log):
        self.s, self.log, self.buf, self.seq, self.subs = s, log, b"", 0, 0

    def send(self, obj):
        self.s.sendall((json.dumps(obj, separators=(",", ":")) + "\n").encode())

    def push(self, key, body, note):
        self.seq += 1
        self.send({"seq": self.seq, key: body})
        self.say("pushed " + note)

    def say(self, text):
        self.log.write(text + "\n")
        self.log.flush()

    def serve(self, until, current):
        """Answer requests until the time until; True when it subscribed again."""
        while time.monotonic() < until:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                req = json.loads(line)
                op, rid = req.get("op"), req.get("id")
                if op == "events":
                    self.subs += 1
                    self.say("subscribed deltas=%s" % bool(req.get("deltas")))
                    self.send({"id": rid, "ok": True, "events": []})
                    if self.subs > 1:
                        return True
                    self.push("snapshot", current, "whole 11")
                elif op == "snapshot":
                    self.send({"id": rid, "ok": True, "snapshot": current})
                elif op == "host":
                    self.send({"id": rid, "ok": True, "host": {}})
                elif op == "hello":
                    self.send({"id": rid, "ok": True})
                else:
                    self.send({"id": rid, "ok": False, "error": "view only"})
            self.s.settimeout(max(0.01, until - time.monotonic()))
            try:
                chunk = self.s.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                sys.exit(0)
            self.buf += chunk
        return False


def main(path, log_path):
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    srv.settimeout(60)
    s, _ = srv.accept()
    with open(log_path, "w") as log:
        c = Conn(s, log)
        c.send({"airlock": 1, "engine": "fake", "role": "view", "uid": os.getuid(),
                "user": "root", "deltas": True})
        c.serve(time.monotonic() + 2, snapshot(1000, 11))
        c.push("snapshot_delta", delta(1000, 1250, 22), "delta 22")
        c.serve(time.monotonic() + 2, snapshot(1250, 22))
        c.push("snapshot_delta", delta(999, 1500, 999), "delta 999 on another base")
        if not c.serve(time.monotonic() + 10, snapshot(1250, 22)):
            return
        c.push("snapshot", snapshot(2000, 33), "whole 33")
        current = snapshot(2000, 33)
        for bad, taken, good in ((998, 2250, 34), (997, 2750, 44)):
            c.serve(time.monotonic() + 2, current)
            c.push("snapshot_delta", delta(999, taken, bad), "delta %d on another base" % bad)
            current = snapshot(taken + 250, good)
            if not c.serve(time.monotonic() + 10, current):
                return
            c.push("snapshot", current, "whole %d" % good)
        c.serve(time.monotonic() + 40, current)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
