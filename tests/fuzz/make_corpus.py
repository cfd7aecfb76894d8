#!/usr/bin/env python3
"""Write the hand-made seed corpora under tests/fuzz/<target>/corpus.

Seeds are small and realistic: the fixtures the unit tests use, the
protocol examples in docs/protocol.md and the Docker/MCP transcripts seen
on a real daemon and real servers. Run it from anywhere; it rewrites only
the seeds it names (crash inputs added by hand stay). docs/fuzzing.md says
how a crash input joins a corpus.
"""
import json
import os
import struct
import tarfile
import io

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")
IMG = "sha256:0c88912505e2c6cbb2108b07acd6e30665b153e491259ab2ee8babe6578e567c"
CID = "d7df0ff6202d10325a438ca76e535cbce4a658db69f43e8d171b86e89b8ccfa4"


def put(target, name, data):
    d = os.path.join(HERE, target, "corpus")
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def fixture(name):
    with open(os.path.join(FIXTURES, name), "rb") as f:
        return f.read()


def line(obj):
    return json.dumps(obj, separators=(",", ":"))


def frame():
    put("frame", "save", line({"operation": "save", "arguments": {"note": "hello"}}))
    put("frame", "nested", '{"operation":"save","arguments":{"a":[1,{"b":"\\u00e9"}],"n":-1.5e3,"t":true,"z":null}}')
    put("frame", "reordered", '{"arguments":{},"operation":"publish"}\r')
    put("frame", "duplicate", '{"operation":"save","operation":"post","arguments":{}}')
    put("frame", "extra_key", '{"operation":"save","arguments":{},"tool":"store"}')
    put("frame", "case", '{"Operation":"save","arguments":{}}')
    put("frame", "nul_escape", '{"operation":"sa\\u0000ve","arguments":{}}')
    put("frame", "depth16", '{"operation":"x","arguments":' + '{"a":' * 14 + "1" + "}" * 14 + "}}")
    put("frame", "depth17", '{"operation":"x","arguments":' + '{"a":' * 15 + "1" + "}" * 15 + "}}")
    put("frame", "op64", line({"operation": "o" * 64, "arguments": {}}))
    put("frame", "op65", line({"operation": "o" * 65, "arguments": {}}))
    put("frame", "utf8", '{"operation":"save","arguments":{"s":"' + "caf\u00e9 \u2603 \U0001f600" + '"}}')
    put("frame", "bad_utf8", b'{"operation":"save","arguments":{"s":"\xed\xa0\x80"}}')
    put("frame", "surrogates", '{"operation":"save","arguments":{"s":"\\ud83d\\ude00\\ud800"}}')
    put("frame", "response_text", "a plain response with \"quotes\", \\ and\nnewlines\t")


def linebuf():
    reqs = "".join(line({"operation": "save", "arguments": {"i": i}}) + "\n" for i in range(3))
    put("linebuf", "pipelined", b"\x3f\x07" + reqs.encode())
    put("linebuf", "torn", b"\x10\x01" + b'{"operation":"s\n' + b"ave\"}\n" + b"tail")
    put("linebuf", "too_long", b"\x07\x1f" + b"0123456789\nab\n")
    put("linebuf", "blank_lines", b"\x20\x03" + b"\n\n\r\nx\n")


def config():
    good = {
        "profile": {"image": IMG, "cmd": ["echo"], "tmpfs": {"/tmp": 1048576},
                    "user": "10001:10001", "pids_limit": 32, "memory": 134217728, "cpus": 1,
                    "env": {"LANG": "C"}, "runtime": "runc", "ipc": "none", "nofile": 64},
        "bounds": {"frame_bytes": 65536, "stdout_bytes": 1048576, "stderr_bytes": 1048576,
                   "calls": 16, "session_ms": 15000},
        "classes": ["public", "pii", "confidential", "restricted"],
        "upstreams": {
            "vault": {"argv": ["/usr/bin/upstream", "--mode", "echo"], "cwd": "data",
                      "env": {"PATH": "/usr/bin:/bin"}, "timeout_ms": 3000},
            "board": {"argv": ["/usr/bin/upstream"]},
        },
        "tools": {
            "store": {"upstream": "vault", "remote": "store", "data_class": "confidential",
                      "sink_ceiling": "confidential", "response_ceiling": "confidential"},
            "post": {"upstream": "board", "remote": "publish", "data_class": "public",
                     "sink_ceiling": "public", "response_ceiling": "public",
                     "pin": "0" * 64},
        },
        "aliases": {"save": "store", "publish": "post"},
        "initial": {"file": "payload.json", "class": "confidential",
                    "withhold": ["secret", "nested.hide"]},
    }
    put("config", "full", json.dumps(good, indent=2))
    put("config", "minimal", json.dumps({"profile": {"image": IMG}}))
    put("config", "empty", "{}")
    put("config", "runsc", json.dumps({"profile": {"image": IMG, "runtime": "runsc", "pids_limit": 512}}))
    put("config", "loosened", json.dumps({"profile": {"image": IMG, "memory": 1 << 40, "user": "0:0"},
                                          "bounds": {"frame_bytes": 70000}}))
    put("config", "dangling", json.dumps({"tools": {"t": {"upstream": "nope", "remote": "r",
                                          "data_class": "public", "sink_ceiling": "public",
                                          "response_ceiling": "public"}}, "aliases": {"a": "t"}}))


def admission():
    c, i = fixture("inspect-ok.json"), fixture("image-ok.json")
    put("admission", "ok", c + b"\0" + i)
    put("admission", "no_image", c)
    doc = json.loads(c)
    doc["HostConfig"]["NetworkMode"] = "host"
    doc["HostConfig"]["Binds"] = ["/var/run/docker.sock:/var/run/docker.sock"]
    put("admission", "network_host", json.dumps(doc).encode() + b"\0" + i)
    doc = json.loads(c)
    del doc["HostConfig"]
    put("admission", "no_hostconfig", json.dumps(doc).encode() + b"\0" + i)


def mux(stream, payload):
    return struct.pack(">BxxxI", stream, len(payload)) + payload


UPGRADED = (b"HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\n"
            b"Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n")


def attach():
    reqs = b"".join(mux(1, line({"operation": "save", "arguments": {"i": i}}).encode() + b"\n")
                    for i in range(2))
    put("attach", "upgraded", b"\x3f" + UPGRADED + reqs + mux(2, b"warning\n") + mux(1, b""))
    put("attach", "torn_frames", b"\x02" + UPGRADED + mux(1, b"hello\n") + mux(2, b"oops")[:6])
    put("attach", "ok_200", b"\x10" + b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\n\r\n"
        + mux(1, b"x\n"))
    put("attach", "refused_json", b"\x3f" + b"HTTP/1.1 404 Not Found\r\nApi-Version: 1.41\r\n"
        b"Content-Type: application/json\r\n\r\n" + b'{"message":"No such container: airlock-x"}\n')
    put("attach", "refused_text", b"\x05" + b"HTTP/1.1 409 Conflict\r\n\r\n"
        b"container is marked for removal and cannot be started\n")
    put("attach", "bad_header", b"\x3f" + UPGRADED + b"\x05\x00\x00\x00\x00\x00\x00\x01x")


def docker_answer():
    # first byte: endpoint (byte % 9): 0 info, 1 inspect, 2 list, 3 create,
    # 4 images by label, 5 build, 6 wait, 7 ping, 8 archive; second byte:
    # status (byte % 10): 0 200, 1 201, 2 204, 3 304, 4 400, 5 404, 6 409, 7 500
    def seed(name, which, status, body):
        put("docker_answer", name, bytes([which, status]) + (body.encode() if isinstance(body, str) else body))
    seed("info", 0, 0, json.dumps({"OSType": "linux", "SecurityOptions": ["name=seccomp,profile=builtin"],
                                    "Runtimes": {"runc": {"path": "runc"}, "runsc": {"path": "/usr/bin/runsc"}},
                                    "DefaultRuntime": "runc", "NCPU": 2}))
    seed("inspect", 1, 0, fixture("inspect-ok.json"))
    seed("list", 2, 0, json.dumps([{"Id": CID, "Names": ["/airlock-x"], "State": "running",
                                    "Labels": {"io.airlock.managed": "1"}}]))
    seed("create", 3, 1, json.dumps({"Id": CID, "Warnings": []}))
    seed("create_short_id", 3, 1, json.dumps({"Id": CID[:12], "Warnings": None}))
    seed("images", 4, 0, json.dumps([{"Id": IMG, "Created": 1764489580}, {"Id": IMG, "Created": 1}]))
    seed("images_empty", 4, 0, "[]")
    seed("build_stream", 5, 0, '{"stream":"' + IMG + '\\n"}\r\n')
    seed("build_aux", 5, 0, '{"aux":{"ID":"' + IMG + '"}}\n{"stream":"Successfully built"}\n')
    seed("build_empty", 5, 0, "")  # crashed before: arithmetic on the NULL body
    seed("build_error", 5, 0, '{"errorDetail":{"message":"COPY failed"},"error":"COPY failed"}\n')
    seed("wait", 6, 0, json.dumps({"StatusCode": 137, "Error": None}))
    seed("wait_error", 6, 0, json.dumps({"StatusCode": 0, "Error": {"Message": "container gone"}}))
    seed("ping", 7, 0, "OK")
    seed("not_found", 1, 5, '{"message":"No such container: airlock-fuzz"}')
    seed("plain_error", 2, 7, "internal error\r\nmore\n")
    seed("not_modified", 6, 3, "")
    tar = io.BytesIO()
    with tarfile.open(fileobj=tar, mode="w", format=tarfile.USTAR_FORMAT) as t:
        data = b"canary-free file\n"
        info = tarfile.TarInfo("out")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    seed("archive", 8, 0, tar.getvalue()[:2048])


def events():
    ev = {"status": "die", "id": CID, "from": IMG, "Type": "container", "Action": "die",
          "Actor": {"ID": CID, "Attributes": {"exitCode": "0", "io.airlock.managed": "1",
                                              "io.airlock.session": "s1"}},
          "scope": "local", "time": 1764489580, "timeNano": 1764489580056524169}
    lines = "".join(line(dict(ev, status=a, Action=a)) + "\n" for a in ("create", "start", "die", "destroy"))
    put("events", "stream", b"\x3f\x00\x00" + lines.encode())
    put("events", "stop_after_two", b"\x07\x00\x02" + lines.encode())
    put("events", "crlf_blank", b"\x01\x00\x00" + b"\r\n \r\n" + line(ev).encode() + b" \r\n")
    put("events", "not_object", b"\x10\x00\x00" + b"[1,2]\n")
    put("events", "refused", b"\x3f\x03\x00" + b'{"message":"invalid filter"}')


def mcp():
    init = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18",
            "capabilities": {"tools": {"listChanged": True}}, "serverInfo": {"name": "fixture", "version": "1"}}}
    echo = {"name": "echo", "description": "Echo the text", "inputSchema": {"type": "object",
            "properties": {"text": {"type": "string"}}, "required": ["text"]}}
    lst = {"jsonrpc": "2.0", "id": 2, "result": {"tools": [echo]}}
    ok = {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "hello"},
          {"type": "image", "data": "AA==", "mimeType": "image/png"}]}}
    err = {"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "echoes the input: hello"}}
    tool_err = {"jsonrpc": "2.0", "id": 5, "result": {"isError": True, "content": [{"type": "text", "text": "no"}]}}
    j = lambda *m: "".join(line(x) + "\n" for x in m)
    put("mcp", "session", j(init, lst, ok, err, tool_err))
    changed = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    roots = {"jsonrpc": "2.0", "id": 0, "method": "roots/list"}
    put("mcp", "chatty", j(init, changed, roots, lst) + "\r\n\n" + j(dict(ok, id=3)))
    page1 = {"jsonrpc": "2.0", "id": 2, "result": {"tools": [echo], "nextCursor": "p2"}}
    page2 = {"jsonrpc": "2.0", "id": 3, "result": {"tools": [dict(echo, name="other")], "nextCursor": None}}
    put("mcp", "paged", j(init, page1, page2, dict(ok, id=4)))
    put("mcp", "old_version", j(dict(init, result={"protocolVersion": "2024-11-05"}), lst))
    put("mcp", "bad_version", j(dict(init, result={"protocolVersion": "1999-01-01"})))
    put("mcp", "refused_init", j({"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "x"}}))
    put("mcp", "late_and_malformed", j(init, lst, {"jsonrpc": "2.0", "id": 99, "result": {}}) + "not json\n" + j(dict(ok, id=3)))
    # No empty seed: libFuzzer skips empty files and always runs the empty input first.


def digest_body(kind, flags=0, fields=(), id_=0, code=0, others=0, tools=0):
    """A digest as engine/mcp/mcp_digest.h lays it out (x86-64: little-endian, no padding)."""
    body = b"".join(struct.pack("<II", t, len(v)) + v for t, v in fields)
    return struct.pack("<IIqqQII", kind, flags, id_, code, others, len(fields), tools) + body


def mcp_digest():
    # an even first byte: a line for the parser's side
    put("mcp_digest", "line_answer", b"\x00" + line({"jsonrpc": "2.0", "id": 3, "result": {
        "content": [{"type": "text", "text": "hi"}, {"type": "image", "data": "AA=="}]}}).encode())
    put("mcp_digest", "line_tools", b"\x00" + line({"jsonrpc": "2.0", "id": 2, "result": {
        "tools": [{"name": "echo", "description": "d", "inputSchema": {"type": "object"}}],
        "nextCursor": "p2"}}).encode())
    put("mcp_digest", "line_request", b"\x00" + line({"jsonrpc": "2.0", "id": "srv-1",
        "method": "roots/list"}).encode())
    # an odd first byte: a digest for the engine's side
    put("mcp_digest", "digest_answer", b"\x01" + digest_body(1, 0x1 | 0x2 | 0x20, [(3, b"hi")],
        id_=3, others=1))
    put("mcp_digest", "digest_tools", b"\x01" + digest_body(1, 0x1 | 0x2 | 0x40 | 0x100, [
        (6, b"echo"), (7, b'{"name":"echo"}'), (8, b"d"), (9, b'{"type":"object"}'), (5, b"p2")],
        id_=2, tools=1))
    put("mcp_digest", "digest_request", b"\x01" + digest_body(3, 0, [(1, b"roots/list"),
        (2, b'"srv-1"')]))
    put("mcp_digest", "digest_error", b"\x01" + digest_body(1, 0x4 | 0x8, [], id_=4, code=-32602))


# --- sealed_export: image exports (docker save format) and bare layers ---------------
# File content always holds CANARY and names under a sealed directory "hidden"
# (fuzz_sealed_export.c checks that no verdict or error ever shows either).
SEP = b"\n%%airlock-layer%%\n"


def tar_of(entries, fmt=tarfile.PAX_FORMAT):
    """entries: (type, name, mode, uid, gid, extra) with extra a dict of
    data=bytes, link=str, pax={key: value}."""
    out = io.BytesIO()
    saved = tarfile.RECORDSIZE
    tarfile.RECORDSIZE = 512  # no padding to 10 KiB records: Docker's Go writer has none
    try:
        with tarfile.open(fileobj=out, mode="w", format=fmt) as t:
            for kind, name, mode, uid, gid, extra in entries:
                ti = tarfile.TarInfo(name)
                ti.type = {"f": tarfile.REGTYPE, "d": tarfile.DIRTYPE, "l": tarfile.SYMTYPE,
                           "h": tarfile.LNKTYPE}[kind]
                ti.mode, ti.uid, ti.gid, ti.mtime = mode, uid, gid, 1764489580
                ti.linkname = extra.get("link", "")
                ti.pax_headers = extra.get("pax", {})
                data = extra.get("data", b"CANARY-" + name.encode() if kind == "f" else b"")
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data) if data else None)
    finally:
        tarfile.RECORDSIZE = saved
    return out.getvalue()


def sha(b):
    import hashlib
    return hashlib.sha256(b).hexdigest()


def export_of(layers, wrong_digest=False, tags=None):
    diff_ids = ["sha256:" + sha(l) for l in layers]
    if wrong_digest:
        diff_ids[0] = "sha256:" + "0" * 64
    doc = {"architecture": "amd64", "os": "linux",
           "config": {"User": "10001:10001", "Entrypoint": ["/agent"]},
           "rootfs": {"type": "layers", "diff_ids": diff_ids}}
    if tags:  # a config and a manifest past one 512-byte block, as real ones are
        doc["history"] = [{"created_by": "/bin/sh -c #(nop) ADD file:%s in / " % sha(t.encode())}
                          for t in tags]
    config = json.dumps(doc, separators=(",", ":")).encode()
    files, names = [], []
    for i, l in enumerate(layers):
        d = sha(("%d:" % i).encode() + diff_ids[i].encode())
        names.append(d + "/layer.tar")
        files += [("d", d + "/", 0o755, 0, 0, {}),
                  ("f", d + "/VERSION", 0o644, 0, 0, {"data": b"1.0"}),
                  ("f", d + "/json", 0o644, 0, 0, {"data": json.dumps({"id": d}).encode()}),
                  ("f", d + "/layer.tar", 0o644, 0, 0, {"data": l})]
    cfg = sha(config) + ".json"
    manifest = json.dumps([{"Config": cfg, "RepoTags": tags, "Layers": names}]).encode()
    files = [("f", cfg, 0o644, 0, 0, {"data": config})] + files
    files.append(("f", "manifest.json", 0o644, 0, 0, {"data": manifest}))
    return tar_of(files, tarfile.USTAR_FORMAT)


def base_layer(key_mode=0o600, secret_gid=0, extra=()):
    long_name = "srv/vault/hidden-" + "n" * 120
    return tar_of([
        ("d", "./", 0o755, 0, 0, {}),
        ("d", "srv/", 0o755, 0, 0, {}),
        ("f", "srv/key", key_mode, 0, 0, {}),
        ("f", "srv/old", 0o644, 0, 0, {}),
        ("d", "srv/vault/", 0o700, 0, 0, {}),
        ("f", "srv/vault/hidden-a", 0o644, 0, 0, {}),
        ("d", "srv/vault/hidden-dir/", 0o755, 0, 0, {}),
        ("f", long_name, 0o600, 0, 0, {}),
        ("h", "srv/vault/hidden-link", 0o644, 0, 0, {"link": "srv/vault/hidden-a"}),
        ("d", "opt/", 0o755, 0, 0, {}),
        ("d", "opt/app/", 0o755, 0, 0, {}),
        ("f", "opt/app/secret", 0o640, 0, secret_gid, {}),
        ("f", "opt/app/readme", 0o644, 0, 0, {}),
        ("d", "usr/bin/", 0o755, 0, 0, {}),
        ("f", "usr/bin/tool", 0o755, 0, 0, {"pax": {"uid": "4294967296"}}),
        ("l", "srv/link", 0o777, 0, 0, {"link": "vault/hidden-a"}),
    ] + list(extra))


def upper_layer():
    return tar_of([
        ("d", "srv/", 0o755, 0, 0, {}),
        ("f", "srv/.wh.old", 0, 0, 0, {"data": b""}),
        ("f", "srv/vault/.wh.hidden-gone", 0, 0, 0, {"data": b""}),
        ("d", "opt/app/", 0o755, 0, 0, {}),
        ("f", "opt/app/.wh..wh..opq", 0, 0, 0, {"data": b""}),
        ("f", "opt/app/secret", 0o600, 0, 0, {}),
    ])


def raw_header(name, kind, size=0, mode=0o644, magic=b"ustar\x0000"):
    """One 512-byte header written by hand, for what tarfile will not write."""
    h = bytearray(512)
    h[0:len(name)] = name.encode()
    for off, width, v in ((100, 8, mode), (108, 8, 0), (116, 8, 0), (124, 12, size), (136, 12, 0)):
        h[off:off + width - 1] = b"%0*o" % (width - 1, v)
    h[156:157] = kind
    h[257:265] = magic
    h[148:156] = b" " * 8
    h[148:155] = b"%06o\0" % sum(h)
    return bytes(h)


def raw_data(b):
    return b + b"\0" * ((512 - len(b) % 512) % 512)


def pax_record(key, value):
    n = len(key) + len(value) + 3
    size = n + len(str(n))
    size = n + len(str(size))
    return b"%d %s=%s\n" % (size, key.encode(), value.encode())


def go_readings_layer():
    """Archives Docker's unpacker (Go's archive/tar) reads in its own way."""
    rec = pax_record("path", "srv/vault/hidden-pax")
    gnu = b"srv/vault/hidden-gnu\0"
    glob = pax_record("mtime", "1")
    return b"".join([
        raw_header("srv/", b"5", mode=0o755),
        raw_header("srv/vault", b"5", size=1024, mode=0o711),  # no data: the next header follows
        raw_header("srv/vault/hidden-k", b"0", mode=0o644),
        raw_header("srv/vault/hidden-d/", b"\0", mode=0o311),  # '\0' and a slash: a directory
        raw_header("././@LongLink", b"L", size=len(gnu)), raw_data(gnu),
        raw_header("PaxHeaders/x", b"x", size=len(rec)), raw_data(rec),
        raw_header("pub/a", b"0"),  # the GNU name wins
        raw_header("PaxHeaders/x", b"x", size=len(rec)), raw_data(rec),
        raw_header("pax_global_header", b"g", size=len(glob)), raw_data(glob),
        raw_header("pub/b", b"0"),  # the global header dropped the path
        raw_header("srv/key", b"0", mode=0o600, magic=b"ustar  \0"),
        b"\0" * 1024])


def sealed_export():
    put("sealed_export", "export_protected", b"\x2a\x00" + export_of([base_layer(), upper_layer()]))
    tags = ["registry.example/airlock/agent-%d:%s" % (i, "v" * 40) for i in range(12)]
    put("sealed_export", "export_large_json", b"\x3d\x00" + export_of([base_layer(), upper_layer()], tags=tags))
    put("sealed_export", "export_readable", b"\x07\x00" + export_of([base_layer(key_mode=0o644)]))
    # With group 5000 (flags bit 1) the 0640 root:5000 secret is readable.
    put("sealed_export", "export_group", b"\x11\x02" + export_of([base_layer(secret_gid=5000)]))
    acl = {"SCHILY.xattr.system.posix_acl_access": "CANARY-acl"}
    sel = {"SCHILY.xattr.security.selinux": "CANARY-label"}
    cap = {"SCHILY.xattr.security.capability": "CANARY-caps"}
    put("sealed_export", "export_xattrs", b"\x03\x00" + export_of([base_layer(), tar_of([
        ("f", "srv/key", 0o600, 0, 0, {"pax": acl}),
        ("f", "srv/vault/hidden-a", 0o600, 0, 0, {"pax": sel}),
        ("f", "usr/bin/ping", 0o755, 0, 0, {"pax": cap}),
        ("f", "usr/share/note", 0o644, 0, 0, {"pax": {"SCHILY.xattr.user.note": "x"}}),
    ])]))
    put("sealed_export", "export_overlay_attr", b"\x05\x00" + export_of([tar_of([
        ("d", "./", 0o755, 0, 0, {}),
        ("d", "pub/", 0o755, 0, 0, {"pax": {"SCHILY.xattr.trusted.overlay.redirect": "/srv/vault"}}),
    ]), base_layer()]))
    gnu = tar_of([
        ("d", "srv/", 0o755, 0, 0, {}),
        ("d", "srv/vault/", 0o700, 0, 0, {}),
        ("f", "srv/vault/hidden-" + "g" * 150, 0o600, 0, 0, {}),
        ("l", "srv/vault/hidden-sym", 0o777, 0, 0, {"link": "x" * 130}),
        ("f", "srv/key", 0o600, 0, 0, {}),
        ("d", "opt/app/", 0o755, 0, 0, {}),
        ("f", "opt/app/secret", 0o600, 0, 0, {}),
    ], tarfile.GNU_FORMAT)
    put("sealed_export", "export_gnu_long_names", b"\x19\x00" + export_of([gnu]))
    put("sealed_export", "export_hard_link_out", b"\x23\x00" + export_of([base_layer(extra=[
        ("d", "pub/", 0o755, 0, 0, {}),
        ("h", "pub/copy", 0o644, 0, 0, {"link": "srv/vault/hidden-a"})])]))
    put("sealed_export", "export_empty_layer", b"\x31\x00" + export_of([b"\0" * 1024, base_layer()]))
    put("sealed_export", "export_wrong_digest", b"\x0d\x00" + export_of([base_layer()], wrong_digest=True))
    put("sealed_export", "layers_three", b"\x2c\x01" + base_layer() + SEP + upper_layer() + SEP + tar_of([
        ("f", "srv/.wh.vault", 0, 0, 0, {"data": b""}),
        ("d", "srv/vault/", 0o711, 0, 0, {}),
        ("f", "srv/vault/hidden-b", 0o600, 10001, 0, {}),
    ]))
    put("sealed_export", "layers_go_readings", b"\x17\x01" + go_readings_layer())
    # Flags bit 2: checksums rewritten, so mutated header fields get past them.
    put("sealed_export", "layers_fixed_sums", b"\x21\x05" + base_layer() + SEP + upper_layer())
    put("sealed_export", "layers_fixed_sums_go", b"\x33\x07" + go_readings_layer())
    put("sealed_export", "export_go_readings", b"\x29\x00" + export_of([go_readings_layer()]))
    put("sealed_export", "layers_symlinked", b"\x3b\x03" + tar_of([
        ("d", "srv/", 0o755, 0, 0, {}),
        ("l", "srv/vault", 0o777, 0, 0, {"link": "/data"}),
        ("d", "opt/", 0o700, 0, 0, {}),
        ("f", "opt/app/secret", 0o644, 0, 0, {}),
    ]))


def control():
    """Requests of the control socket (engine/protocol/control.h), one line each."""
    seeds = {
        "hello": {"id": 1, "op": "hello"},
        "snapshot": {"id": 2, "op": "snapshot"},
        "detail": {"id": 3, "op": "detail", "session": "s-0123456789abcdef"},
        "events": {"id": 4, "op": "events", "follow": True, "snapshots": True},
        "events_deltas": {"id": 14, "op": "events", "snapshots": True, "deltas": True},
        "host": {"id": 5, "op": "host", "refresh": True, "runtime": "runc"},
        "metrics": {"id": 6, "op": "metrics"},
        "start_path": {"id": 7, "op": "start", "path": "/etc/airlock/agent.json"},
        "start_inline": {"id": 8, "op": "start", "config": {"profile": {"image": "sha256:" + "0" * 64}}},
        "stop": {"id": 9, "op": "stop", "session": "s-1"},
        "revoke_all": {"id": 10, "op": "revoke", "tool": "store", "all": True, "wait_ms": 5000},
        "restore_some": {"id": 11, "op": "restore", "tool": "store", "sessions": ["s-1", "s-2"]},
        "forget": {"id": 12, "op": "forget", "sessions": ["s-1"]},
        "stop_all": {"id": 13, "op": "stop-all"},
    }
    for name, obj in seeds.items():
        put("control", name, line(obj))
    put("control", "duplicate", '{"id":1,"op":"hello","op":"stop"}')
    put("control", "bad_utf8", b'{"id":1,"op":"stop","session":"\xc3\x28"}')
    put("control", "unknown_op", '{"id":1,"op":"launch"}')


def snapshot_delta():
    """A base snapshot, NUL, a delta as `airlock serve` pushes it (docs/operations.md)."""
    row = {"id": "s-1", "state": "running", "uptime_ms": 4000, "runtime": "runc",
           "lease": {"armed": True, "pulses": 10, "ack_us": [300, 310]},
           "counters": {"calls": 4, "allowed": 4, "denied_by": [0, 0, 1]},
           "call": {"active": True, "tool": "store", "age_ms": 3},
           "tools": [{"name": "store", "class": "confidential", "allowed": True}]}
    ended = {"id": "s-2", "state": "ended", "end": "exit", "exit_code": 0}
    base = {"taken_ms": 1700000001000, "generation": 7, "live": 1, "frozen": True,
            "frozen_by": {"by": "root", "uid": 0, "via": "ctl"}, "standing": ["send_mail"],
            "pools": [], "sessions": [row, ended]}
    seeds = {
        "counters": {"base": 1700000001000, "patch": {"taken_ms": 1700000001250},
                     "rows": {"s-1": {"uptime_ms": 4250, "lease": {"pulses": 11,
                              "ack_us": [300, 310, 290]}, "counters": {"calls": 5},
                              "call": {"active": False, "tool": None, "age_ms": None}}}},
        "new_row": {"base": 1700000001000, "patch": {"taken_ms": 1700000001500, "live": 2},
                    "rows": {"s-3": {"id": "s-3", "state": "creating"}},
                    "order": ["s-3", "s-1", "s-2"]},
        "forgotten_thawed": {"base": 1700000001000,
                             "patch": {"taken_ms": 1700000001750, "frozen": False,
                                       "frozen_by": None}, "order": ["s-1"]},
        "other_base": {"base": 1700000000999, "patch": {"taken_ms": 1}},
    }
    for name, d in seeds.items():
        put("snapshot_delta", name, line(base) + "\0" + line(d))
    put("snapshot_delta", "fixed_base", line(seeds["counters"]))


def answers():
    """An engine's answers to changes, as ctl and a console read them: byte 0 the reading."""
    seeds = {
        "cutover": (0, {"id": 3, "ok": True, "revision": 7, "targets": 3, "tool": "create_entities",
                        "acks": [{"session": "s-1", "result": "applied", "waited_us": 42},
                                 {"session": "s-2", "result": "not_applicable", "waited_us": 9}],
                        "pending": ["s-3"], "ended": []}),
        "cutover_unknown_word": (0, {"id": 4, "ok": True, "revision": 8, "targets": 1, "tool": "",
                                     "acks": [{"session": "s-1", "result": "maybe"}, 5, "s-2"],
                                     "pending": [1, "s-2"], "ended": ["s-9" * 20]}),
        "start": (1, {"id": 5, "ok": True, "session": "s-0603c0ed0ccaf45f"}),
        "stop": (2, {"id": 6, "ok": True, "session": "caf\u00e9" * 12}),
        "stop_all": (3, {"id": 7, "ok": True, "stopped": 4}),
        "forget": (4, {"id": 8, "ok": True, "forgotten": ["s-1", "s-2"], "not_ended": ["s-3"]}),
        "quarantine": (5, {"id": 9, "ok": True, "sessions": ["s-1"]}),
        "release_none": (6, {"id": 10, "ok": True, "sessions": []}),
        "snapshot_asked": (7, {"id": 11, "ok": True, "session": "s-1"}),
    }
    for name, (reading, obj) in seeds.items():
        put("answers", name, bytes([reading]) + line(obj).encode())
    put("answers", "not_object", b"\x00[1,2]")


def leb128(n):
    out = bytearray()
    while True:
        b = n & 0x7f
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def tree(v):
    """A value in json_tree's form (engine/base/json_tree.h)."""
    if v is None:
        return b"n"
    if v is True or v is False:
        return b"t" if v else b"f"
    if isinstance(v, int):
        return b"i" + leb128(v << 1 if v >= 0 else ((-v) << 1) - 1)
    if isinstance(v, float):
        return b"r" + struct.pack("=d", v)
    if isinstance(v, str):
        b = v.encode()
        return b"s" + leb128(len(b)) + b
    if isinstance(v, list):
        return b"a" + leb128(len(v)) + b"".join(tree(x) for x in v)
    out = b"o" + leb128(len(v))
    for k, x in v.items():
        out += leb128(len(k.encode())) + k.encode() + tree(x)
    return out


def json_tree():
    """Trees and JSON texts: fuzz_json_tree tries every input both ways."""
    cfg = {"profile": {"image": "sha256:" + "0" * 64}, "bounds": {"session_ms": 600000, "ratio": 0.75},
           "upstreams": {"memory": {"argv": ["/opt/m/server"], "env": {"PATH": "/usr/bin"},
                                    "paths": {"rw": ["/srv/m"]}, "timeout_ms": 30000}},
           "aliases": {"remember": {"tool": "t", "description": "caf\u00e9 \u2603 \"q\"\t"}},
           "initial": {"withhold": [], "none": None, "yes": True, "no": False,
                       "neg": -9223372036854775808, "max": 9223372036854775807}}
    put("json_tree", "tree_config", tree(cfg))
    put("json_tree", "tree_nested", tree([1, [2, [3, {"k": [True, False, None]}]], "s", -0.0]))
    put("json_tree", "tree_empty", tree({}))
    put("json_tree", "tree_duplicate", b"o\x02\x01an\x01at")
    put("json_tree", "tree_nul_key", b"o\x01\x01\x00n")
    put("json_tree", "tree_long_number", b"i\x80\x00")
    put("json_tree", "tree_deep", b"a\x01" * 65 + b"n")
    put("json_tree", "text_config", line(cfg))
    put("json_tree", "text_escapes", '{"s":"\\u00e9\\ud83d\\ude00\\"\\\\","k\\n":[1e300,-0.0,5e-324]}')
    put("json_tree", "text_deep", "[" * 65 + "]" * 65)


for f in (control, frame, json_tree, linebuf, config, admission, attach, docker_answer, events, mcp, mcp_digest,
          sealed_export,
          snapshot_delta, answers):
    f()
