#!/usr/bin/env bash
# An engine whose tasks run out: `airlock serve` in a pids cgroup of its own
# (what the unit's TasksMax makes of the service), and a session whose
# upstream forks until the bound answers EAGAIN (tests/fixtures/upstream.c,
# mode forks). Root's ctl is served all the same, from the parsers kept
# ready for root and the engine's uid: status, sessions, freeze, thaw, and
# the stop that ends the session and its upstream's children. The mutant
# without them (control_no_ready_parsers) shows what they are for: root is
# told "parser failed" for every command.
#
# usage: pids.sh AIRLOCK AIRLOCK_MUTANTS AGENT_BIN UPSTREAM_BIN
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock_plain=$1 airlock_mutants=$2 agent=$3 upstream=$4
scratch_dir
. "$here/../checks.sh"
owner_pids() { printf '%s\n' "${helpers[@]}"; }

# --- a pids cgroup: v1's controller, else v2's -----------------------------------
cg=
if [ -w /sys/fs/cgroup/pids ]; then
	cg=/sys/fs/cgroup/pids/airlock-pids-$$
elif grep -qw pids /sys/fs/cgroup/cgroup.controllers 2>/dev/null &&
	{ grep -qw pids /sys/fs/cgroup/cgroup.subtree_control ||
	  echo +pids >/sys/fs/cgroup/cgroup.subtree_control; } 2>/dev/null; then
	cg=/sys/fs/cgroup/airlock-pids-$$
fi
if [ -z "$cg" ] || ! mkdir "$cg" 2>/dev/null; then
	if [ -n "${CI:-}" ]; then
		echo "FAIL: CI is set but no pids cgroup can be made here (need root and a pids controller)" >&2
		exit 1
	fi
	echo "## SKIPPED: no pids cgroup can be made here; the engine out of tasks NOT verified" | tee /dev/stderr
	exit 77
fi
on_teardown() {
	local p
	for _ in 1 2 3 4 5; do
		for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		rmdir "$cg" 2>/dev/null && return
		sleep 0.2
	done
}

image=$(scratch_image "$work/image" "$agent") || { not_ok "agent image build"; summary; exit 1; }
printf '{"note":"forks"}\n' >"$work/payload.in"
mkdir -p "$work/s" && upstream_box "$work/s"
cat >"$work/s/config.json" <<JSON
{"profile": {"image": "$image", "cmd": ["loop"]},
 "bounds": {"session_ms": 300000, "calls": 4096, "stdout_bytes": 4194304},
 "upstreams": {"vault": {"argv": ["$upstream", "--sink", "$work/s/vault.sink", "--mode", "forks"],
                         "env": {"PATH": "/usr/bin:/bin"}, "paths": {"rw": ["$work/s"]}}},
 "tools": {"store": {"upstream": "vault", "remote": "store", "data_class": "confidential",
                     "sink_ceiling": "confidential", "response_ceiling": "confidential"}},
 "aliases": {"save": "store"},
 "initial": {"file": "$work/payload.in", "class": "confidential"}}
JSON

tasks() { cat "$cg/pids.current"; }
ctl() {	# NAME ARGS...: rc in $rc, output in $work/NAME.out and .err
	local name=$1
	shift
	rc=0
	timeout 20 "$airlock" ctl --socket "$sock" "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
}
session_state() {
	"$airlock" ctl --socket "$sock" sessions --json 2>/dev/null | python3 -c '
import json, sys
s = [x for x in json.load(sys.stdin)["snapshot"]["sessions"] if x["id"] == sys.argv[1]]
print(s[0]["state"] if s else "")' "$1"
}
said() { [ "$rc" = "$1" ] && grep -q "$2" "$3"; }	# RC TEXT FILE: the last ctl's
until_true() {	# TENTHS COMMAND...
	local n=$1 i
	shift
	for i in $(seq "$n"); do "$@" && return 0; sleep 0.1; done
	return 1
}
ended() { [ "$(session_state "$sid")" != running ]; }
near_idle() { [ "$(tasks)" -le $((idle + 8)) ]; }
no_container() { [ -z "$("$DOCKER" ps -q --filter "label=io.airlock.owner-pid=$engine")" ]; }
at_bound() { [ "$(tasks)" -ge "$(cat "$cg/pids.max")" ] && [ -s "$work/s/vault.sink" ]; }

# run KIND: an engine in the cgroup, bounded at what it holds idle plus 64;
# the session started as root; waits until its upstream has forked up to
# the bound. Sets engine, sock, sid, idle.
run() {
	local kind=$1 i
	sock=$work/$kind.sock
	echo max >"$cg/pids.max"
	bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' _ "$cg" \
		"$airlock" serve --socket "$sock" --audit "$work/$kind.db" \
		2>"$work/serve_$kind.err" </dev/null &
	engine=$!
	helpers+=("$engine")
	check "$kind: serve listens, in the cgroup" serve_ready "$work/serve_$kind.err" "$engine" ||
		{ cat "$work/serve_$kind.err"; summary; exit 1; }
	check "$kind: the engine's tasks are counted there" grep -qx "$engine" "$cg/cgroup.procs"
	idle=$(tasks)
	echo $((idle + 64)) >"$cg/pids.max"
	ctl start_$kind start "$work/s/config.json"
	sid=$(cat "$work/start_$kind.out")
	check "$kind: a session starts (${sid:-none})" [ "$rc" = 0 -a -n "$sid" ]
	check "$kind: its upstream forked up to the bound (idle $idle, max $((idle + 64)))" \
		until_true 300 at_bound
	echo "   $kind: $(tasks) tasks of $(cat "$cg/pids.max")"
}

# --- the engine as built: root is served -----------------------------------------
airlock=$airlock_plain
run ready
ctl status status
check "ready: root's ctl status is served (exit $rc)" said 0 'role operate' "$work/status.out"
check "…and the engine still has no task to spare" at_bound
ctl freeze freeze
check "ready: root's freeze is served (exit $rc)" [ "$rc" = 0 ]
ctl thaw thaw
check "ready: root's thaw is served (exit $rc)" [ "$rc" = 0 ]
ctl stop stop "$sid"
check "ready: root's stop of the session is served (exit $rc)" [ "$rc" = 0 ]
check "…the session ends" until_true 200 ended
check "…and its upstream's children with it: the tasks back near idle ($idle)" until_true 200 near_idle
check "…its container is gone" until_true 200 no_container
ctl status_after status
check "ready: root's ctl served again after (exit $rc)" [ "$rc" = 0 ]
kill -TERM "$engine"
rc=0; wait "$engine" || rc=$?
check "ready: the engine exits 0 on SIGTERM" [ "$rc" = 0 ]

# --- the mutant without them: root is locked out ----------------------------------
airlock=$airlock_mutants
export AIRLOCK_MUTANT=control_no_ready_parsers
run mutant
ctl mstatus status
check "mutant: root's ctl status is refused (exit $rc): parser failed" \
	said 1 'parser failed' "$work/mstatus.err"
ctl mstop stop "$sid"
check "mutant: root's stop is refused too (exit $rc)" said 1 'parser failed' "$work/mstop.err"
echo max >"$cg/pids.max"	# room again: the engine stops its session on SIGTERM
kill -TERM "$engine"
rc=0; wait "$engine" || rc=$?
check "mutant: with room again the engine stops on SIGTERM (exit $rc)" [ "$rc" = 0 ]
check "…its container is gone" no_container
unset AIRLOCK_MUTANT
summary
