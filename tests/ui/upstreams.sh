#!/usr/bin/env bash
# Each upstream's confinement, shown (issue #41): a real session on a real
# `airlock serve` engine whose agent calls two upstreams, one under the
# default user and one with "privileged": true on the non-root user
# airlock-upstream. `airlock inspect` of its container and a console attached
# with --connect (its detail view, in tmux) both show the uid of
# airlock-upstream, the Landlock ABI, network none, and the privileged one
# marked loud; before the agent's first call an upstream shows its plan.
# Every screen and output is searched for the payload's canary (absent).
#
# usage: upstreams.sh AIRLOCK AGENT_BIN UPSTREAM_BIN
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../docker/common.sh"
require_daemon
command -v tmux >/dev/null || { echo "not ok: tmux is not installed (scripts/setup installs it)"; exit 1; }

airlock=$(readlink -f "$1") agent=$(readlink -f "$2") upstream=$(readlink -f "$3")
scratch_dir
. "$here/../checks.sh"
canary="UPSTREAMS-CANARY-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')"
tmux_sock=airlock-upstreams-$$
owner_pids() { printf '%s\n' "${helpers[@]}"; }
on_teardown() { tmux -L "$tmux_sock" kill-server 2>/dev/null; }
on_not_ok() { tail -n 40 "$work/last.screen" 2>/dev/null | sed 's/^/    | /'; }
id -u airlock-upstream >/dev/null || { not_ok "the user airlock-upstream exists (scripts/setup)"; summary; exit 1; }
landlock=$(sed -n 's/^PASS  landlock *ABI \([0-9]*\)$/\1/p' < <("$airlock" doctor 2>/dev/null))

image=$(scratch_image "$work/image" "$agent") || { not_ok "agent image build"; summary; exit 1; }
printf '{"canary":"%s"}\n' "$canary" >"$work/payload.in"
mkdir -p "$work/vault" "$work/outbox" && upstream_box "$work/vault" && upstream_box "$work/outbox"
config() {	# NAME AGENT_MODE
	cat >"$work/$1.json" <<JSON
{"profile": {"image": "$image", "cmd": ["$2"]},
 "bounds": {"session_ms": 300000, "calls": 4096, "stdout_bytes": 4194304},
 "upstreams": {"vault": {"argv": ["$upstream", "--sink", "$work/vault/$1.sink"],
                         "paths": {"rw": ["$work/vault"]}},
               "outbox": {"argv": ["$upstream", "--sink", "$work/outbox/$1.sink"],
                          "user": "airlock-upstream", "privileged": true,
                          "paths": {"rw": ["$work/outbox"]}}},
 "tools": {"store": {"upstream": "vault", "remote": "store", "data_class": "confidential",
                     "sink_ceiling": "confidential", "response_ceiling": "confidential"},
           "send": {"upstream": "outbox", "remote": "publish", "data_class": "confidential",
                    "sink_ceiling": "confidential", "response_ceiling": "confidential"}},
 "aliases": {"save": "store", "publish": "send"},
 "initial": {"file": "$work/payload.in", "class": "confidential"}}
JSON
}
config both loop_both
config idle steady

serve() {	# the engine on $work/e.sock, its audit $work/e.db
	local i
	"$airlock" serve --name e --socket "$work/e.sock" --audit "$work/e.db" \
		--config "$work/both.json" 2>>"$work/e.log" </dev/null &
	helpers+=("$!")
	for i in $(seq 300); do
		grep -q "listening on" "$work/e.log" 2>/dev/null && return 0
		kill -0 "$!" 2>/dev/null || { sed 's/^/    | /' "$work/e.log"; return 1; }
		sleep 0.1
	done
	return 1
}
sid_running() { "$airlock" ctl --socket "$work/e.sock" --json sessions | python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    for s in d.get("snapshot", d).get("sessions", []):
        if s["state"] == "running" and s["id"] != sys.argv[1]: print(s["id"]); sys.exit(0)' "${1:-}"; }
container_of() { "$DOCKER" ps -q --no-trunc --filter "label=io.airlock.session=$1" | head -n 1; }
lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }
grows() {	# FILE SECONDS
	local n; n=$(lines "$1")
	for _ in $(seq $(($2 * 10))); do [ "$(lines "$1")" -gt "$n" ] && return 0; sleep 0.1; done
	return 1
}
no_canary() { ! grep -rqF "$canary" "$work"/*.screen "$work"/*.out 2>/dev/null; }

check "the engine listens" serve || { summary; exit 1; }
for _ in $(seq 100); do sid=$(sid_running); [ -n "$sid" ] && break; sleep 0.2; done
check "a session runs" test -n "$sid"
check "its agent reaches the default upstream's sink" grows "$work/vault/both.sink" 15
check "and the privileged upstream's" grows "$work/outbox/both.sink" 15
ctr=$(container_of "$sid")
check "its container is found by its session label" test -n "$ctr"

# --- airlock inspect: the admission report, then the engine's upstreams ----------
"$airlock" inspect "$ctr" --socket "$work/e.sock" >"$work/inspect.out" 2>&1
cp "$work/inspect.out" "$work/last.screen"
check "inspect names the container's session" grep -qF "upstreams of session $sid:" "$work/inspect.out"
# Both upstreams are airlock-upstream's: they run as the session's own uid.
uid=$(sed -n 's/^  vault \+uid \([0-9]*\) .*/\1/p' "$work/inspect.out")
check "inspect: they run as the session's own uid (${uid:-none}), delegated to airlock-upstream" \
	delegated_uid "$uid"
check "inspect: the default upstream runs as that uid of airlock-upstream under Landlock ABI $landlock, network none" \
	grep -qE "^  vault +uid $uid \(airlock-upstream\)  landlock ABI $landlock, [0-9]+ rules \(ro 0, rw 1\)  seccomp [0-9a-f]{16}  network none  isolation process$" "$work/inspect.out"
check "inspect: privileged on a non-root user: its uid, marked PRIVILEGED" \
	grep -qE "^  outbox +uid $uid \(airlock-upstream\)  landlock ABI $landlock, .*network none  isolation process  PRIVILEGED$" "$work/inspect.out"
"$airlock" inspect "$ctr" --socket "$work/e.sock" --json >"$work/inspect-json.out" 2>&1
check "inspect --json: the same fields, as the detail op carries them" python3 - "$work/inspect-json.out" "$uid" "$landlock" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
u = {x["name"]: x for x in d["engine"]["upstreams"]}
v, o = u["vault"], u["outbox"]
assert v["started"] and v["uid"] == int(sys.argv[2]) and v["user"] == "airlock-upstream", v
assert v["landlock_abi"] == int(sys.argv[3]) and v["network"] == "none", v
assert len(v["seccomp"]) == 16 and v["isolation"] == "process" and not v["privileged"], v
assert o["privileged"] and o["uid"] == int(sys.argv[2]), o
PY
"$airlock" inspect "$ctr" --socket "$work/none.sock" >"$work/nosock.out" 2>&1
check "inspect without its engine: the report still, the upstreams not, and why" bash -c "
	grep -q '^container ' '$work/nosock.out' && grep -q '^upstreams: not shown: ' '$work/nosock.out'"

# --- a console attached with --connect: the session's detail ----------------------
tm() { tmux -L "$tmux_sock" -f /dev/null "$@"; }
screen() {
	local f="$work/shot-$(date +%s%N).screen"
	tm capture-pane -p -t ui >"$f" 2>/dev/null
	cp "$f" "$work/last.screen"
	cat "$f"
}
wait_re() {	# REGEX [SECONDS]
	local i
	for i in $(seq $((${2:-20} * 10))); do
		screen | grep -Eq -- "$1" && return 0
		sleep 0.1
	done
	return 1
}
keys() { tm send-keys -t ui "$@"; }
tm new-session -d -s ui -x 120 -y 45 \
	"env TERM=tmux-256color NO_COLOR=1 TZ=UTC LANG=C.UTF-8 HOME=$work \
	 AIRLOCK_KEYS=$work/no-keys $airlock console --connect $work/e.sock; echo \"exit status \$?\"; sleep 60"
tm set-option -t ui remain-on-exit on >/dev/null
short=${sid#s-}; short=${short:0:8}
check "the console shows the session" wait_re "$short" 20
keys 2
check "its detail lists the upstreams" wait_re "^ Upstreams" 10
check "console: the default upstream's uid is the session's" \
	wait_re "^  vault +uid $uid \(airlock-upstream\) +isolation process *$" 10
check "console: its Landlock ABI and network none" \
	wait_re "^    landlock ABI $landlock, [0-9]+ rules +paths ro 0 rw 1 +seccomp [0-9a-f]{16} +network none" 10
check "console: the privileged upstream marked loud" \
	wait_re "^  outbox +uid $uid \(airlock-upstream\) +isolation process +PRIVILEGED *$" 10
keys q
wait_re "exit status" 10 >/dev/null

# --- before the first call: the plan --------------------------------------------------
"$airlock" ctl --socket "$work/e.sock" start "$work/idle.json" >"$work/start.out" 2>&1
for _ in $(seq 100); do sid2=$(sid_running "$sid"); [ -n "$sid2" ] && break; sleep 0.2; done
check "a second session (its agent calls only save)" test -n "$sid2"
grows "$work/vault/idle.sink" 15 >/dev/null
"$airlock" inspect "$(container_of "$sid2")" --socket "$work/e.sock" >"$work/idle.out" 2>&1
check "an upstream not called yet shows its plan, still marked loud" grep -qE \
	"^  outbox +not started \(user airlock-upstream\)  landlock - \(ro 0, rw 1\)  seccomp -  network none  isolation process  PRIVILEGED$" \
	"$work/idle.out"

check "no screen and no output shows the payload's canary" no_canary
check "the positive control: the canary reached the permitted sink" grep -rqF "$canary" "$work/vault"
summary
