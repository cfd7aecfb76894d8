#!/usr/bin/env python3
"""Raw clients of `airlock serve`'s control socket for tests/docker/serve.sh.

  serve_client.py bad SOCK CANARY OUT     bad frames, one connection each; the
                                          frames the engine sent go to OUT
  serve_client.py slow SOCK GO OUT        subscribe to events and snapshots,
                                          ask for 400 metrics texts, then read
                                          nothing until the file GO exists;
                                          then read for up to 5 s into OUT
  serve_client.py flood SOCK N OUT        N revoke/restore pairs of tool
                                          "store" on every session, wait 0
  serve_client.py leave SOCK OUT          subscribe to snapshots, take the
                                          first, revoke and restore "store"
                                          (a snapshot falls due), and leave at
                                          once
  serve_client.py parser SOCK OUT UID GID a connection's own parser, the
                                          connection made as UID in group GID
                                          (an operate peer, not root): the
                                          airlock-parser process its first
                                          request started (its uid), killed;
                                          the next request is refused and the
                                          connection closed; a new one works
  serve_client.py kept SOCK OUT           root's: no parser started for its
                                          request (one kept ready was lent);
                                          after, that one stopped and another
                                          started in its place
  serve_client.py overtake SOCK CONFIG OUT a start of the inline CONFIG and a
                                          snapshot in one write: the order of
                                          the replies; then a start sent by a
                                          client that leaves at once
  serve_client.py crowd SOCK N OUT [CONFIG]
                                          N starts in one write, each of a config
                                          refused once read (CONFIG: that one's
                                          tools moved to an upstream it lacks):
                                          how many were refused so, how many
                                          busy, and whether in order
  serve_client.py hog SOCK N GO OUT       N connections, each its hello read,
                                          held open sending nothing until the
                                          file GO exists: prints how many got
                                          a role and the refusals, at once
  serve_client.py pester SOCK N OUT       N freezes on one connection, in
                                          rounds of 200: how many were refused
                                          "view only"
  serve_client.py deltas SOCK SECONDS OUT two subscribers at once, one taking
                                          deltas, one whole snapshots; the
                                          deltas applied here (RFC 7386) must
                                          give the whole one of each push

Each prints one JSON object of findings on stdout. Every wait is bounded.
"""
import json
import os
import socket
import sys
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    return s


def connect_as(path, uid, gid):
    """A connection made by a child as uid in group gid (the engine reads
    the peer's credentials at connect), handed back here, where the test
    keeps root's power to kill that connection's parser."""
    a, b = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        try:
            a.close()
            os.setgroups([gid])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            s = connect(path)
            socket.send_fds(b, [b"s"], [s.fileno()])
        finally:
            os._exit(0)
    b.close()
    _, fds, _, _ = socket.recv_fds(a, 1, 1)
    a.close()
    os.waitpid(pid, 0)
    s = socket.socket(fileno=fds[0])
    s.settimeout(10)
    return s


class Reader:
    """Lines from a socket, each appended raw to the file out."""

    def __init__(self, s, out):
        self.s, self.out, self.buf = s, out, b""

    def lines(self, limit, until_eof=False):
        got = []
        while len(got) < limit:
            while b"\n" in self.buf and len(got) < limit:
                line, self.buf = self.buf.split(b"\n", 1)
                self.out.write(line + b"\n")
                got.append(json.loads(line))
            if len(got) >= limit or (got and not until_eof):
                break
            try:
                chunk = self.s.recv(65536)
            except (socket.timeout, ConnectionResetError):
                break
            if not chunk:
                break
            self.buf += chunk
        return got


def exchange(path, payload, out):
    """Connect, take the hello, send payload and end the input; (hello, replies)."""
    s = connect(path)
    r = Reader(s, out)
    hello = r.lines(1)
    try:
        s.sendall(payload)
        s.shutdown(socket.SHUT_WR)
    except (BrokenPipeError, ConnectionResetError, socket.timeout):
        pass
    replies = r.lines(5, until_eof=True)
    s.close()
    return hello, replies


def bad(path, canary, out_path):
    found = {}
    with open(out_path, "ab") as out:
        hello, r = exchange(path, b'{"id":1,"op":"' + b"x" * 70000 + b'"}\n', out)
        found["hello_role"] = hello[0].get("role") if hello else None
        found["oversized"] = [x.get("error") for x in r]
        _, r = exchange(path, b"not json " + canary.encode() + b"\n", out)
        found["not_json"] = [x.get("error") for x in r]
        _, r = exchange(path, b'{"id":7,"op":"' + canary.encode() + b'"}\n', out)
        found["unknown_op"] = [(x.get("id"), x.get("error")) for x in r]
        _, r = exchange(path, b'{"id":8,"op":"stop","session":"' + canary.encode() + b' x"}\n', out)
        found["bad_session"] = [(x.get("id"), x.get("error")) for x in r]
        _, r = exchange(path, b'{"id":9,"op":"hello","id":10}\n', out)
        found["duplicate"] = [x.get("error") for x in r]
        _, r = exchange(path, b'{"id":11,"op":"stop","session":"\xc3\x28"}\n', out)
        found["bad_utf8"] = [x.get("error") for x in r]
        _, r = exchange(path, b'{"id":12,"op":"snapshot"', out)
        found["truncated"] = [x.get("error") for x in r]
    print(json.dumps(found))


def slow(path, go, out_path):
    """Subscribe, ask for much it never reads (metrics texts), then read nothing."""
    s = connect(path)
    s.sendall(b'{"id":1,"op":"events","follow":true,"snapshots":true}\n' +
              b"".join(b'{"id":%d,"op":"metrics"}\n' % (i + 2) for i in range(400)))
    deadline = time.time() + 300
    while not os.path.exists(go) and time.time() < deadline:
        time.sleep(0.1)
    s.settimeout(2)
    frames, gaps, buf, closed = 0, 0, b"", False
    end = time.time() + 5
    with open(out_path, "wb") as out:
        while time.time() < end:
            try:
                chunk = s.recv(1 << 20)
            except socket.timeout:
                break
            except ConnectionResetError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            out.write(chunk)
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                f = json.loads(line)
                frames += 1
                gaps += f.get("gap", 0)
    print(json.dumps({"frames": frames, "gap": gaps, "closed": closed}))


def flood(path, n, out_path):
    s = connect(path)
    reqs = []
    for i in range(n):
        op = "revoke" if i % 2 == 0 else "restore"
        reqs.append(json.dumps({"id": i + 1, "op": op, "tool": "store", "all": True,
                                "wait_ms": 0}).encode() + b"\n")
    s.sendall(b"".join(reqs))
    with open(out_path, "wb") as out:
        replies = Reader(s, out).lines(n + 1, until_eof=True)
    ok = sum(1 for r in replies if r.get("ok") is True and "id" in r)
    busy = sum(1 for r in replies if r.get("error") == "engine busy")
    print(json.dumps({"replies": len(replies) - 1, "ok": ok, "busy": busy}))


def leave(path, out_path):
    """Leave just after a change, while the snapshot that shows it is still due."""
    s = connect(path)
    frames = []

    def until(pred):
        while True:
            got = r.lines(1)
            if not got:
                return False
            frames.extend(got)
            if pred(got[0]):
                return True

    with open(out_path, "wb") as out:
        r = Reader(s, out)
        r.lines(1)                       # the hello
        s.sendall(b'{"id":1,"op":"events","follow":true,"snapshots":true}\n')
        until(lambda f: "snapshot" in f)
        s.sendall(b'{"id":2,"op":"revoke","tool":"store","all":true,"wait_ms":0}\n')
        until(lambda f: "event" in f)
        until(lambda f: "snapshot" in f)  # pushed: the next push waits 250 ms
        s.sendall(b'{"id":3,"op":"restore","tool":"store","all":true,"wait_ms":0}\n')
        until(lambda f: "event" in f)     # its snapshot is now due; gone before it
    s.close()
    print(json.dumps({"frames": len(frames)}))


def parsers():
    """pid -> uid of every airlock-parser process."""
    found = {}
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{pid}/status") as f:
                uid = next(int(l.split()[1]) for l in f if l.startswith("Uid:"))
        except (OSError, ValueError, StopIteration):
            continue
        if pid.isdigit() and os.path.basename(argv[0]).startswith(b"airlock-parser"):
            found[int(pid)] = uid
    return found


def parser(path, out_path, uid, gid):
    """Each connection's lines go to a parser of its own; killed, the connection ends."""
    found = {}
    with open(out_path, "wb") as out:
        before = parsers()
        s = connect_as(path, uid, gid)
        r = Reader(s, out)
        r.lines(1)                       # the hello
        s.sendall(b'{"id":1,"op":"snapshot"}\n')
        first = r.lines(1)
        found["first_ok"] = bool(first) and first[0].get("ok") is True
        new = {p: u for p, u in parsers().items() if p not in before}
        found["new_parsers"] = len(new)
        found["uids"] = sorted(set(new.values()))
        for p in new:
            os.kill(p, 9)
        time.sleep(0.2)
        s.sendall(b'{"id":2,"op":"snapshot"}\n')
        after = r.lines(1)
        found["after_kill"] = after[0].get("error") if after else None
        found["closed"] = not r.lines(1, until_eof=True)
        s.close()
        s = connect_as(path, uid, gid)
        r = Reader(s, out)
        r.lines(1)
        s.sendall(b'{"id":3,"op":"snapshot"}\n')
        again = r.lines(1)
        found["again_ok"] = bool(again) and again[0].get("ok") is True
        s.close()
    print(json.dumps(found))


def kept(path, out_path):
    """Root's request parsed by a parser kept ready: none started; after, it is replaced."""
    found = {}
    with open(out_path, "wb") as out:
        before = parsers()
        s = connect(path)
        r = Reader(s, out)
        r.lines(1)
        s.sendall(b'{"id":1,"op":"snapshot"}\n')
        first = r.lines(1)
        found["ok"] = bool(first) and first[0].get("ok") is True
        found["started"] = len(set(parsers()) - set(before))
        s.close()
        time.sleep(0.3)
        after = set(parsers())
        found["before"] = len(before)
        found["gone"] = len(set(before) - after)
        found["new_after"] = len(after - set(before))
    print(json.dumps(found))


def merge(target, patch):
    """RFC 7386, written here from the RFC, not from the engine's code."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge(out.get(k), v)
    return out


def apply_delta(base, d):
    if d["base"] != base["taken_ms"]:
        raise ValueError("another base")
    rows = {r["id"]: r for r in base["sessions"]}
    order = d.get("order", [r["id"] for r in base["sessions"]])
    patches = d.get("rows", {})
    new = dict(merge(base, d.get("patch", {})))
    new["sessions"] = [merge(rows.get(i), patches[i]) if i in patches else rows[i] for i in order]
    return new


def subscriber(path, deltas, out):
    s = connect(path)
    s.settimeout(0.5)
    r = Reader(s, out)
    hello = r.lines(1)[0]
    ask = {"id": 1, "op": "events", "snapshots": True}
    if deltas:
        ask["deltas"] = True
    s.sendall((json.dumps(ask) + "\n").encode())
    return s, r, hello


def deltas(path, seconds, out_path):
    """Both subscribers read the same pushes: the rebuilt one must equal the whole."""
    found = {"hello_offers": False, "deltas": 0, "wholes": 0, "matched": 0, "mismatched": 0,
             "delta_bytes": 0, "whole_bytes": 0, "refused": 0}
    whole_by_taken, rebuilt_by_taken, base = {}, {}, None
    with open(out_path, "wb") as out:
        sd, rd, hello = subscriber(path, True, out)
        sw, rw, _ = subscriber(path, False, out)
        found["hello_offers"] = hello.get("deltas") is True
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for f in rw.lines(16):
                if "snapshot" in f and "seq" in f:
                    whole_by_taken[f["snapshot"]["taken_ms"]] = f["snapshot"]
                    found["whole_bytes"] += len(json.dumps(f, separators=(",", ":")))
            for f in rd.lines(16):
                if "snapshot" in f and "seq" in f:
                    base = f["snapshot"]
                    found["wholes"] += 1
                elif "snapshot_delta" in f:
                    found["deltas"] += 1
                    found["delta_bytes"] += len(json.dumps(f, separators=(",", ":")))
                    try:
                        base = apply_delta(base, f["snapshot_delta"])
                    except (ValueError, KeyError, TypeError):
                        found["refused"] += 1
                        continue
                    rebuilt_by_taken[base["taken_ms"]] = base
                elif f.get("ok") is False:
                    found["refused"] += 1
        sd.close()
        sw.close()
    for taken, snap in rebuilt_by_taken.items():
        if taken in whole_by_taken:
            key = "matched" if whole_by_taken[taken] == snap else "mismatched"
            found[key] += 1
    # The whole bytes of the pushes both saw, for a like-for-like ratio.
    found["pushes_seen"] = len(whole_by_taken)
    print(json.dumps(found))


def overtake(path, config_path, out_path):
    """A start and a snapshot in one write; then a start whose client leaves."""
    with open(config_path) as f:
        config = json.load(f)
    start = json.dumps({"id": 1, "op": "start", "config": config}).encode() + b"\n"
    found = {"order": [], "start": None}
    with open(out_path, "wb") as out:
        s = connect(path)
        r = Reader(s, out)
        r.lines(1)                       # the hello
        s.sendall(start + b'{"id":2,"op":"snapshot"}\n')
        deadline = time.time() + 30
        while len(found["order"]) < 2 and time.time() < deadline:
            for f in r.lines(2 - len(found["order"])):
                found["order"].append(f.get("id"))
                if f.get("id") == 1:
                    found["start"] = {"ok": f.get("ok"), "session": f.get("session"),
                                      "error": f.get("error")}
        s.close()
        s = connect(path)
        Reader(s, out).lines(1)
        s.sendall(start)
        s.close()                        # gone before its answer
    print(json.dumps(found))


def crowd(path, n, out_path, config_path=None):
    """N starts in one write: each is read and refused, or refused busy; in the order sent."""
    config = {"profile": {"image": "sha256:" + "0" * 63 + "1", "cmd": ["x"]},
              "upstreams": {"u": {"argv": ["/bin/true"]}},
              "tools": {"t": {"upstream": "nosuch", "remote": "t", "data_class": "public",
                              "sink_ceiling": "public", "response_ceiling": "public"}}}
    if config_path:
        with open(config_path) as f:
            config = json.load(f)
        for tool in config["tools"].values():
            tool["upstream"] = "nosuch"
    lines = b"".join(json.dumps({"id": i + 1, "op": "start", "config": config},
                                separators=(",", ":")).encode() + b"\n" for i in range(n))
    found = {"bytes": len(lines), "refused": 0, "busy": 0, "other": 0, "refused_ids": []}
    with open(out_path, "wb") as out:
        s = connect(path)
        r = Reader(s, out)
        r.lines(1)                       # the hello
        s.sendall(lines)
        got, deadline = [], time.time() + 30
        while len(got) < n and time.time() < deadline:
            got += r.lines(n - len(got))
        for f in got:
            if f.get("error") == "config refused" and "nosuch" in f.get("reason", ""):
                found["refused"] += 1
                found["refused_ids"].append(f.get("id"))
            elif f.get("error") == "engine busy":
                found["busy"] += 1
            else:
                found["other"] += 1
        s.close()
    print(json.dumps(found))


def hog(path, n, go, out_path):
    held, refused = [], []
    with open(out_path, "ab") as out:
        for _ in range(n):
            s = connect(path)
            hello = Reader(s, out).lines(1)
            if hello and hello[0].get("role"):
                held.append(s)
            else:
                refused.append(hello[0].get("error") if hello else None)
                s.close()
    print(json.dumps({"admitted": len(held), "refused": refused}), flush=True)
    deadline = time.time() + 120
    while not os.path.exists(go) and time.time() < deadline:
        time.sleep(0.1)
    for s in held:
        s.close()


def pester(path, n, out_path):
    s = connect(path)
    refused, sent = 0, 0
    with open(out_path, "wb") as out:
        r = Reader(s, out)
        r.lines(1)
        while sent < n:
            k = min(200, n - sent)
            s.sendall(b"".join(b'{"id":%d,"op":"freeze"}\n' % (sent + i + 1) for i in range(k)))
            sent += k
            got = r.lines(k)
            while len(got) < k:
                more = r.lines(k - len(got))
                if not more:
                    break
                got += more
            refused += sum(1 for x in got if x.get("error") == "view only")
    s.close()
    print(json.dumps({"sent": sent, "refused": refused}))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "bad":
        bad(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "slow":
        slow(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "flood":
        flood(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif cmd == "leave":
        leave(sys.argv[2], sys.argv[3])
    elif cmd == "parser":
        parser(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif cmd == "kept":
        kept(sys.argv[2], sys.argv[3])
    elif cmd == "overtake":
        overtake(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "crowd":
        crowd(sys.argv[2], int(sys.argv[3]), sys.argv[4], *sys.argv[5:6])
    elif cmd == "hog":
        hog(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
    elif cmd == "pester":
        pester(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif cmd == "deltas":
        deltas(sys.argv[2], float(sys.argv[3]), sys.argv[4])
