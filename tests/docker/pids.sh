#!/usr/bin/env bash
# An upstream that forks without end (tests/fixtures/upstream.c, mode
# forks). `airlock serve` runs in a
# pids cgroup of its own (what the unit's TasksMax makes of the service).
#
# First the cgroup's bound comes first: root's ctl is served all the same,
# from the parsers kept ready for root and the engine's uid (status,
# freeze, thaw, and the stop that ends the session and every process of
# its uid). The mutant without them (control_no_ready_parsers): root is
# told "parser failed".
#
# Then the cgroup has room: the session's own uid holds its upstreams to
# MCP_UPSTREAM_TASKS, a second session's upstream starts and is called, an
# operate peer's ctl is served, and the stop leaves no process of that
# uid. The mutant sharing one uid (upstream_shared_uid): the second
# session's upstream cannot start.
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
loop_config s --mode forks

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
# uid_of SESSION KIND: the uid its upstream's receipt names (its first dispatch)
uid_of() {
	sqlite3 "file:$work/$2.db?mode=ro" "select json_extract(detail, '$.confinement.uid') from
		audit_entries where session_id = '$1' and decision = 'dispatch' and
		detail like '%confinement%' limit 1" 2>/dev/null
}
uid_tasks() { ps -e -o uid=,stat= | awk -v u="$1" '$1 == u && $2 !~ /^Z/' | wc -l; }	# live processes of uid
drained() { [ "$(tasks)" = 0 ]; }	# its exited tasks reaped too
near_idle() { [ "$(tasks)" -le $((idle + 8)) ]; }
no_container() { [ -z "$("$DOCKER" ps -q --filter "label=io.airlock.owner-pid=$engine")" ]; }
at_bound() { [ "$(tasks)" -ge "$(cat "$cg/pids.max")" ] && [ -s "$work/s/vault.sink" ]; }

# serve_in KIND ROOM: an engine in the cgroup, bounded at what it holds
# idle plus ROOM. Sets engine, sock, idle.
serve_in() {
	local kind=$1
	check "$kind: the cgroup is empty before: nothing left by the run before" until_true 200 drained
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
	echo $((idle + $2)) >"$cg/pids.max"
}
# bombing KIND ROOM: serve_in KIND ROOM, the bombing session started as
# root. Sets sid too.
bombing() {
	serve_in "$1" "$2"
	ctl start_$1 start "$work/s/config.json"
	sid=$(cat "$work/start_$1.out")
	check "$1: the bombing session starts (${sid:-none})" [ "$rc" = 0 -a -n "$sid" ]
}
# run KIND: bombing KIND 64; waits until its upstream has forked up to the bound.
run() {
	local kind=$1
	bombing "$kind" 64
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

# --- room in the cgroup: the session's own uid holds its upstreams ---------------
loop_config t --child yes	# a server with a helper process: it forks at start
og=$(getent group airlock | cut -d: -f3)
receipt_uid() { u1=$(uid_of "$sid" "$1"); [ -n "$u1" ]; }	# KIND: sets u1
uid_gone() { [ -n "$1" ] && [ "$(uid_tasks "$1")" = 0 ]; }	# a uid named, none of its processes
denied_unavailable() {	# KIND SESSION
	[ "$(sqlite3 "file:$work/$1.db?mode=ro" "select count(*) from audit_entries where
		session_id = '$2' and rule = 'upstream_unavailable'" 2>/dev/null)" -gt 0 ] 2>/dev/null
}
uid_full() { [ "$(uid_tasks "$u1")" = 512 ]; }	# MCP_UPSTREAM_TASKS: the fork at 512 fails
two_uids() { [ "$1" != "$2" ] && delegated_uid "$1" && delegated_uid "$2"; }
# second KIND: a bombing session, then a second one; sets sid, sid2, u1
second() {
	local kind=$1
	bombing "$kind" 4096
	check "$kind: its upstream's receipt names its uid" until_true 300 receipt_uid "$kind"
	check "$kind: its uid's processes grow to 512, the bound (uid ${u1:-none})" until_true 600 uid_full
	echo "   $kind: uid $u1 runs $(uid_tasks "$u1") processes; the cgroup $(tasks) of $(cat "$cg/pids.max")"
	ctl start2_$kind start "$work/t/config.json"
	sid2=$(cat "$work/start2_$kind.out")
}
second own
sleep 1
check "own: held at its uid's bound, $(uid_tasks "$u1") processes of at most 512 (MCP_UPSTREAM_TASKS)" \
	[ "$(uid_tasks "$u1")" -le 512 ]
check "…while the service has tasks left" [ "$(tasks)" -lt "$(cat "$cg/pids.max")" ]
check "own: a second session starts (${sid2:-none})" [ "$rc" = 0 -a -n "$sid2" ]
check "…and its upstream is called" until_true 300 test -s "$work/t/vault.sink"
u2=$(uid_of "$sid2" own)
check "…as a uid of its own (${u2:-none}, not $u1), in the range delegated to airlock-upstream" \
	two_uids "$u2" "$u1"
rc=0; setpriv --reuid 65534 --regid 65534 --groups "$og" "$airlock" ctl --socket "$sock" status \
	>"$work/op.out" 2>"$work/op.err" || rc=$?
check "an operate peer's ctl is served meanwhile (exit $rc)" said 0 'role operate' "$work/op.out"
ctl stop1 stop "$sid"
check "root stops the bombing session (exit $rc)" [ "$rc" = 0 ]
check "…and no process of its uid $u1 is left" until_true 200 uid_gone "$u1"
check "…while the second session runs on" [ "$(session_state "$sid2")" = running ]
kill -TERM "$engine"
rc=0; wait "$engine" || rc=$?
check "own: the engine exits 0 on SIGTERM" [ "$rc" = 0 ]
check "…no process of the second session's uid ${u2:-none} is left" uid_gone "$u2"

airlock=$airlock_mutants
export AIRLOCK_MUTANT=upstream_shared_uid
rm -f "$work/t/vault.sink"
second shared
check "shared: the bombing upstream runs as airlock-upstream's own uid" [ "$u1" = "$(id -u airlock-upstream)" ]
check "shared: a second session starts (${sid2:-none})" [ "$rc" = 0 -a -n "$sid2" ]
sleep 3
check "…but its upstream, of the same uid, cannot start its helper: nothing reached it in 3 s" [ ! -s "$work/t/vault.sink" ]
check "…its calls fail upstream_unavailable" until_true 100 denied_unavailable shared "$sid2"
ctl sstop stop "$sid"
kill -TERM "$engine"
rc=0; wait "$engine" || rc=$?
check "shared: the engine exits 0 on SIGTERM" [ "$rc" = 0 ]
unset AIRLOCK_MUTANT
summary
