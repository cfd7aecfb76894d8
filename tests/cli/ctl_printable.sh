#!/usr/bin/env bash
# ctl prints what an engine says to a terminal: a control character in it
# (an escape sequence, BEL, a C1 CSI) or an invisible one (a right-to-left
# override) reaches the operator's screen as '?',
# never as itself; a reply whose key holds one is not believed. The engine
# here is a stand-in on a socket of this test's own, which says what a
# hostile or broken one could.
# usage: ctl_printable.sh AIRLOCK
set -uo pipefail
airlock=$1
work=$(mktemp -d)
trap 'kill "${engine_pid:-}" 2>/dev/null; rm -rf "$work"' EXIT
. "$(dirname "$0")/../checks.sh"
sock=$work/engine.sock

# engine MODE: serve one connection on $sock as MODE says, in the background.
engine() {
	python3 - "$sock" "$1" <<'PY' &
import json, socket, sys
path, mode = sys.argv[1], sys.argv[2]
evil = "\u001b[2J\u001b]0;owned\u0007\u009b31m\u202edi"
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(1)
c, _ = s.accept()
def say(obj):
    c.sendall(json.dumps(obj).encode() + b"\n")
if mode == "hello":
    say({"airlock": 1, "ok": False, "error": "refused" + evil})
else:
    say({"airlock": 1, "ok": True, "engine": "stand-in", "role": "operate"})
    req = json.loads(c.makefile().readline())
    if mode == "reply":
        say({"id": req["id"], "ok": False, "error": "no_such" + evil, "reason": "why" + evil})
    elif mode == "metrics":
        say({"id": req["id"], "ok": True, "text": "airlock_sessions 2\n\tairlock_frozen 0" + evil + "\n"})
    else:
        say({"id": req["id"], "ok": False, ("error" + evil): "x"})
c.recv(1)
PY
	engine_pid=$!
	for _ in $(seq 50); do [ -S "$sock" ] && return 0; sleep 0.1; done
	return 1
}

# run MODE [VERB]: ctl VERB (status) against it, its stdout and stderr in $work/out.
run() {
	rm -f "$sock"
	engine "$1" || { not_ok "the stand-in engine listens ($1)"; return 1; }
	"$airlock" ctl --socket "$sock" "${2:-status}" >"$work/out" 2>&1
	echo "$?" >"$work/rc"
	wait "$engine_pid" 2>/dev/null
	return 0
}
controls() { LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]\|\xc2[\x80-\x9f]\|\xe2\x80\xae' "$work/out"; }
no_controls() { [ -s "$work/out" ] && ! controls; }
says() { grep -qF -- "$1" "$work/out"; }

run hello
check "a refused hello's error reaches the terminal without its controls" no_controls
check "... shown as '?'" says 'refused?[2J?]0;owned??31m?di'
check "... and ctl exits refused" test "$(cat "$work/rc")" = 1

run reply
check "a refusal's error and reason reach the terminal without controls" no_controls
check "... the reason shown as '?'" says 'why?[2J?]0;owned??31m?di'

run metrics metrics
check "a metrics page reaches the terminal without controls" no_controls
check "... its lines and tabs kept" grep -qxF $'\tairlock_frozen 0?[2J?]0;owned??31m?di' "$work/out"
check "... and its first line" grep -qx 'airlock_sessions 2' "$work/out"

run key
check "a reply whose key holds a control is not believed" says 'the engine did not answer'
check "... and nothing of it is printed" no_controls
summary
