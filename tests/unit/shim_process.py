#!/usr/bin/env python3
"""The airlock-shim program without Docker: this script is the engine (the
shim's stdin/stdout is the bridge) and the agent is this script again, in
agent mode, which launches two `airlock-shim --mcp` clients as an MCP agent
would. Checks: one bridge line per well-formed tools/call and nothing else
(malformed JSON-RPC, unknown names, a flood of bad lines never reach the
bridge), calls from two clients serialised, list_changed to both clients
after tools_changed, the agent's stdout kept off the bridge, the agent's
exit status passed on, and the payload on the agent's stdin when asked.
The --mcp child hands its stdio to the parent: it exits when its client
closes stdin, the client's stdout ends when the child is killed, a child
whose stdio cannot be handed over relays instead, and hand-overs that are
not one NUL byte with two pipes or sockets are refused without harm.

usage: shim_process.py SHIM
"""
import array, json, os, select, signal, socket, subprocess, sys, tempfile, threading, time

FRAME = {"payload": {"canary": "C-42"}, "tools": [
    {"name": "save", "description": "Save.", "inputSchema": {"type": "object"}},
    {"name": "publish", "description": "", "inputSchema": {"type": "object"}}]}


def rpc(i, method, params=None):
    m = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        m["params"] = params
    return json.dumps(m)


class Client:
    def __init__(self, shim):
        self.p = subprocess.Popen([shim, "--mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def send(self, line):
        self.p.stdin.write(line.encode() + b"\n")
        self.p.stdin.flush()

    def read(self):
        line = self.p.stdout.readline()
        assert line, "shim closed the client"
        return json.loads(line)

    def ask(self, i, method, params=None):
        self.send(rpc(i, method, params))
        return self.read()


INIT = ("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                      "clientInfo": {"name": "t", "version": "1"}})


def readable(f, seconds):
    return bool(select.select([f], [], [], seconds)[0])


def lifetime(shim):
    """The child lives while the parent serves its stdio, and no longer."""
    c = Client(shim)
    assert "result" in c.ask(1, *INIT)
    c.p.stdin.close()		# the client's EOF: the parent drops it, the child exits
    assert c.p.wait(5) == 0
    assert readable(c.p.stdout, 5) and c.p.stdout.read() == b""
    c = Client(shim)
    assert "result" in c.ask(1, *INIT)
    c.p.send_signal(signal.SIGKILL)	# the child gone: the parent stops serving its stdio
    c.p.wait(5)
    assert readable(c.p.stdout, 5) and c.p.stdout.read() == b"", "stdout still open"
    c.p.stdin.close()


def relayed(shim):
    """Stdout a regular file: no hand-over; the child relays, as before."""
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen([shim, "--mcp"], stdin=subprocess.PIPE, stdout=out)
        p.stdin.write(rpc(1, *INIT).encode() + b"\n")
        p.stdin.flush()
        for _ in range(500):
            if out.tell() or os.fstat(out.fileno()).st_size:
                break
            time.sleep(0.01)
        p.stdin.close()
        assert p.wait(5) == 0
        out.seek(0)
        assert "result" in json.loads(out.readline())


def bad_handovers():
    """Wrong hand-overs close that connection and every descriptor it sent."""
    name = "\0" + os.environ["AIRLOCK_SHIM_SOCKET"]
    r, w = os.pipe()
    f = tempfile.TemporaryFile()
    for byte, fds in ((b"\0", [r]), (b"\0", [r, w, r]), (b"\0", [f.fileno(), w]),
                      (b"x", [r, w]), (b"\0", [])):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(name)
        anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
        s.sendmsg([byte], anc)
        if not fds:	# a NUL with nothing: a stream whose first line is bad JSON
            s.sendall(b"\n")
            assert json.loads(s.makefile().readline())["error"]["code"] == -32700
        else:
            s.settimeout(5)
            assert s.recv(1) == b"", (byte, len(fds))
        s.close()
    os.close(r); os.close(w); f.close()


def agent(shim):
    """Runs inside the shim: prints to stdout (must not reach the bridge)."""
    print("agent stdout chatter {\"operation\":\"save\",\"arguments\":{}}", flush=True)
    payload = sys.stdin.readline()
    a, b = Client(shim), Client(shim)
    r = a.ask(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "a", "version": "1"}})
    assert r["result"]["capabilities"]["tools"]["listChanged"] is True, r
    a.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
    b.ask(1, "initialize", {"protocolVersion": "2024-11-05"})
    b.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
    # malformed and refused: answered locally
    for bad, code in (("{", -32700), ("[]", -32600), (rpc(5, "nope/x"), -32601),
                      (rpc(6, "tools/call", {"name": "store"}), -32602)):
        a.send(bad)
        r = a.read()
        assert r["error"]["code"] == code, (bad, r)
    for _ in range(200):
        a.send("{not json")
    for _ in range(200):
        assert a.read()["error"]["code"] == -32700
    a.send("x" * 70000)
    assert a.read()["error"]["code"] == -32700
    names = [t["name"] for t in a.ask(7, "tools/list")["result"]["tools"]]
    assert names == ["save", "publish"], names
    text = a.ask(8, "resources/read", {"uri": "airlock://payload"})["result"]["contents"][0]["text"]
    assert json.loads(text) == {"canary": "C-42"}
    # two clients, calls in flight together: each gets its own answer
    a.send(rpc(10, "tools/call", {"name": "save", "arguments": {"n": "a"}}))
    b.send(rpc(10, "tools/call", {"name": "save", "arguments": {"n": "b"}}))
    ra, rb = a.read(), b.read()
    assert ra["result"]["content"][0]["text"] == "echo a", ra
    assert rb["result"]["content"][0]["text"] == "echo b", rb
    r = a.ask(11, "tools/call", {"name": "publish", "arguments": {}})
    assert r["result"]["isError"] is True and r["result"]["content"][0]["text"] == "denied by the airlock gateway", r
    # the engine revokes publish: both clients hear list_changed
    a.ask(12, "tools/call", {"name": "save", "arguments": {"n": "revoke-now"}})
    for c in (a, b):
        n = c.read()
        assert n == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}, n
    names = [t["name"] for t in b.ask(13, "tools/list")["result"]["tools"]]
    assert names == ["save"], names
    assert json.loads(payload) == {"canary": "C-42"}
    lifetime(shim)
    relayed(shim)
    bad_handovers()
    assert "result" in a.ask(14, "ping")
    a.p.stdin.close(); b.p.stdin.close()
    a.p.wait(5); b.p.wait(5)
    sys.exit(7)


def engine(shim):
    p = subprocess.Popen([shim, "--payload-stdin", "--", sys.executable, __file__, "agent", shim],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = []
    reader = threading.Thread(target=lambda: err.append(p.stderr.read()), daemon=True)
    reader.start()
    p.stdin.write(json.dumps(FRAME).encode() + b"\n")
    p.stdin.flush()
    seen = []
    while True:
        line = p.stdout.readline()
        if not line:
            break
        req = json.loads(line)
        assert set(req) == {"operation", "arguments"}, req
        seen.append(req)
        if req["operation"] == "publish":
            reply = {"allowed": False, "response": None}
        else:
            reply = {"allowed": True, "response": "echo " + req["arguments"]["n"]}
        p.stdin.write(json.dumps(reply).encode() + b"\n")
        if req["arguments"].get("n") == "revoke-now":
            p.stdin.write(b'{"tools_changed":1,"tools":["save"]}\n')
        p.stdin.flush()
    rc = p.wait(10)
    reader.join(10)	# the shim gone is not the reader done: stderr is read to its end first
    ops = sorted(r["operation"] + ":" + str(r["arguments"].get("n")) for r in seen)
    ok = True
    for what, cond in (
            ("the agent's exit status is the shim's", rc == 7),
            ("exactly the four well-formed calls reached the bridge",
             ops == ["publish:None", "save:a", "save:b", "save:revoke-now"]),
            ("the agent's stdout went to stderr, not the bridge", b"agent stdout chatter" in err[0] if err else False)):
        print(("ok - " if cond else "not ok - ") + what)
        ok &= cond
    if not ok:
        sys.stderr.write((err[0] if err else b"").decode(errors="replace")[-3000:])
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1] == "agent":
        agent(sys.argv[2])
    # One abstract name per run (the shim and its clients inherit it): two
    # runs at once, of this build or another, never meet on one socket.
    os.environ["AIRLOCK_SHIM_SOCKET"] = "%s-%d" % (
        os.environ.get("AIRLOCK_SHIM_SOCKET", "airlock-shim-test"), os.getpid())
    sys.exit(engine(sys.argv[1]))
