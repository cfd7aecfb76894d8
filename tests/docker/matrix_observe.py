#!/usr/bin/env python3
"""Collect one matrix case's observations, all from outside the agent.

usage: matrix_observe.py SOCKET CASE_DIR CANARY MARK COUNTS_BEFORE COUNTS_AFTER [CID]

Reads, and writes CASE_DIR/obs.json with names, booleans and counters only:
  sink      the permitted upstream's call recorder (vault.sink): did the
            control call arrive (the canary, expected there), the attack's
            report (outcome, errno, count); the denied tool's recorder
            (board.sink): calls and canary hits
  net       the loopback/abstract observers' counts, this case's delta
  archive   GET /containers/CID/archive?path=/ of the stopped container:
            files holding the canary, files named core*
  logs      GET /containers/CID/logs: canary present
  state     GET /containers/CID/json: State.OOMKilled, State.ExitCode
  procs     host processes whose argv holds MARK
  summary   the session summary's end, counters and admission verdicts
No byte of any observed content is written anywhere.
"""
import http.client
import io
import json
import os
import socket
import sys
import tarfile


class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=30)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(self.path)


def api(sock, path):
    c = UnixHTTP(sock)
    c.request("GET", "/v1.41" + path)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def read_lines(path):
    try:
        with open(path, "rb") as f:
            return f.read().splitlines()
    except OSError:
        return []


def sink_obs(case_dir, canary):
    vault = read_lines(os.path.join(case_dir, "vault.sink"))
    board = read_lines(os.path.join(case_dir, "board.sink"))
    obs = {"vault_calls": len(vault), "vault_canary": sum(canary in l for l in vault),
           "board_calls": len(board), "board_canary": sum(canary in l for l in board),
           "report": False, "outcome_done": False, "errno": 0, "count": 0}
    for line in vault:
        try:
            args = json.loads(line).get("arguments", {})
        except ValueError:
            continue
        if isinstance(args, dict) and "attack" in args:
            obs["report"] = True
            obs["outcome_done"] = args.get("outcome") == "done"
            obs["errno"] = int(args.get("errno", 0))
            obs["count"] = int(args.get("count", 0))
    return obs


def net_obs(before, after):
    def load(p):
        try:
            with open(p) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None
    b, a = load(before), load(after)
    if a is None or b is None:
        return {"net_read": False}
    obs = {"net_read": True}
    for name in a:
        obs["net_%s_events" % name] = a[name]["events"] - b[name]["events"]
        obs["net_%s_canary" % name] = a[name]["canary"] - b[name]["canary"]
    return obs


def archive_obs(sock, cid, canary):
    status, body = api(sock, "/containers/%s/archive?path=/" % cid)
    obs = {"archive_read": status == 200, "archive_files": 0, "files_with_canary": 0,
           "core_files": 0}
    if status != 200:
        return obs
    with tarfile.open(fileobj=io.BytesIO(body)) as tar:
        for m in tar:
            if not m.isfile():
                continue
            obs["archive_files"] += 1
            if os.path.basename(m.name).startswith("core"):
                obs["core_files"] += 1
            data = tar.extractfile(m).read(16 << 20)
            if canary in data:
                obs["files_with_canary"] += 1
    return obs


def logs_obs(sock, cid, canary):
    status, body = api(sock, "/containers/%s/logs?stdout=1&stderr=1" % cid)
    return {"logs_readable": status == 200, "logs_canary": canary in body}


def state_obs(sock, cid):
    status, body = api(sock, "/containers/%s/json" % cid)
    if status != 200:
        return {"state_read": False}
    st = json.loads(body).get("State", {})
    return {"state_read": True, "state_oom_killed": bool(st.get("OOMKilled")),
            "state_exit_code": int(st.get("ExitCode", -1)),
            "state_running": bool(st.get("Running"))}


def procs_obs(mark):
    n = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if mark in argv:
            n += 1
    return {"procs_with_mark": n}


def summary_obs(case_dir):
    try:
        with open(os.path.join(case_dir, "summary.json")) as f:
            s = json.load(f)
    except (OSError, ValueError):
        return {"summary_read": False}
    adm = s.get("admission", {})
    return {"summary_read": True, "ended": s.get("ended"), "calls": s.get("calls", 0),
            "allowed": s.get("allowed", 0), "denied": s.get("denied", 0),
            "exit_code": s.get("exit_code", -1), "oom_killed": bool(s.get("oom_killed")),
            "admission_first": adm.get("first"), "admission_second": adm.get("second"),
            "refused_check": adm.get("refused_check"), "session": s.get("session"),
            "pooled": s.get("pooled") is True}


def main():
    sock, case_dir, canary, mark, before, after = sys.argv[1:7]
    cid = sys.argv[7] if len(sys.argv) > 7 else ""
    canary = canary.encode()
    obs = {"container_found": bool(cid)}
    obs.update(summary_obs(case_dir))
    obs.update(sink_obs(case_dir, canary))
    obs.update(net_obs(before, after))
    obs.update(procs_obs(mark.encode()))
    if cid:
        obs.update(archive_obs(sock, cid, canary))
        obs.update(logs_obs(sock, cid, canary))
        obs.update(state_obs(sock, cid))
    with open(os.path.join(case_dir, "obs.json"), "w") as f:
        json.dump(obs, f)


main()
