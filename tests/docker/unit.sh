#!/usr/bin/env bash
# `airlock serve` as docs/airlock.service runs it (issue 41, section 4): the
# user, groups, capability sets, no_new_privs and umask are read from the
# unit file and given to setpriv, so the test and the unit cannot drift. A
# session started through `airlock ctl` calls the fixture upstream: its sink
# receives the call, the upstream runs as airlock-upstream with no
# capability left (its /proc and the audit's receipt say so), the container
# is gone after stop and the engine exits 0 on SIGTERM; the session's parser
# of agent lines runs as airlock-parse with no capability. The mutants: the
# same engine without CAP_SETUID (or CAP_SETGID, or CAP_SETPCAP) refuses to
# start the session's parser (the first confined process a session needs),
# naming why, and never runs it or the upstream as the engine's own user.
# The socket (0666 in the unit's 0755 RuntimeDirectory) lets a view-group and
# an operate-group uid in with their roles, no ACL; a uid in neither group is
# told both groups.
#
# usage: unit.sh AIRLOCK AGENT_BIN UPSTREAM_BIN UNIT_FILE
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1 agent=$2 upstream=$3 unit=$4
for u in airlock airlock-upstream airlock-parse; do
	getent passwd "$u" >/dev/null && continue
	[ -n "${CI:-}" ] && { echo "FAIL: CI is set but user $u is missing (run scripts/setup)" >&2; exit 1; }
	echo "## SKIPPED: user $u is missing (run scripts/setup); the unit's engine NOT verified" | tee /dev/stderr
	exit 77
done
scratch_dir
. "$here/../checks.sh"
owner_pids() { printf '%s\n' "${helpers[@]}"; }
. "$here/unit_lib.sh"

# --- what the unit says -------------------------------------------------------
user=$(unit_key User) group=$(unit_key Group)
named() { [ -n "$user" ] && [ -n "$group" ] && [ -n "$(unit_key AmbientCapabilities)" ] &&
	[ "$(unit_key NoNewPrivileges)" = yes ]; }
check "the unit names its user, group, caps and no_new_privs" named
check "the unit's ambient capabilities are within its bounding set" unit_ambient_bounded
# Removed at a stop, the directory would take a root engine's held uid locks with it.
preserved() { [ "$(unit_key RuntimeDirectoryPreserve)" = yes ]; }
check "the unit keeps the upstream uids' lock directory across its stops" preserved
amb=$(unit_key AmbientCapabilities) bnd=$(unit_key CapabilityBoundingSet)
echo "   setpriv $(unit_setpriv_args "$amb" "$bnd" | tr '\n' ' ')"

# --- the view group (made here when missing, removed after); ctl where uid 65534 runs it ---
made_groups=()
on_teardown() { local g; for g in "${made_groups[@]}"; do groupdel "$g" 2>/dev/null; done; }
if [ -z "$(getent group airlock-view)" ]; then groupadd airlock-view && made_groups+=(airlock-view); fi
vg=$(getent group airlock-view | cut -d: -f3)
mkdir -p "$work/bin" && install -m 0755 "$airlock" "$work/bin/airlock"

# --- the engine's directories, as systemd makes them -------------------------------
chmod 0711 "$work"	# the engine and the upstream pass through, no more
# The engine runs as the unit's user: its programs (airlock, and the
# watchdog and parser it runs from beside itself) and the upstream where
# that user can reach them, whatever the clone's directory lets in.
mkdir -p "$work/bin"
for p in "$airlock" "$airlock-watchdog" "$(dirname "$airlock")/airlock-parser" "$upstream"; do
	install -m 0755 "$p" "$work/bin/" || { not_ok "copy $p where $user can run it"; summary; exit 1; }
done
airlock=$work/bin/airlock upstream=$work/bin/$(basename "$upstream")
run=$work/run state=$work/state
install -d -o "$user" -g "$group" -m "$(unit_key RuntimeDirectoryMode)" "$run"
install -d -o "$user" -g "$group" -m "$(unit_key StateDirectoryMode)" "$state"
# The sessions' upstream uids are locked in /run/airlock/upstream-uids
# (engine/mcp/mcp_uids.h), which the engine makes in its RuntimeDirectory:
# the real one, as systemd would make it, $user's (root's engines still use it).
install -d -o "$user" -g "$group" -m "$(unit_key RuntimeDirectoryMode)" /run/airlock
install -d -o "$user" -g "$group" -m 0700 /run/airlock/upstream-uids
chown -R "$user:$group" /run/airlock/upstream-uids	# as systemd does at start

image=$(scratch_image "$work/image" "$agent") || { not_ok "agent image build"; summary; exit 1; }
canary="CANARY-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '{"canary":"%s"}\n' "$canary" >"$work/payload.in"
loop_config a

sock=$run/engine.sock
ctl() { "$airlock" ctl --socket "$sock" "$@"; }

# ============================================================================
check "the engine starts as the unit runs it" unit_serve serve1.err "$amb" "$bnd" ||
	{ cat "$work/serve1.err" >&2; summary; exit 1; }
engine1=$engine
check "the engine runs as $user, in the unit's groups" proc_ids_are "$engine1" "$user" "$(unit_gids)"
check "the engine holds exactly the unit's capabilities (effective, ambient, bounding), no_new_privs" \
	proc_caps_are "$engine1" "$amb" "$bnd" 1
check "the socket is 0666, owned by $user, in a 0755 directory (the engine is the gate)" \
	[ "$(stat -c '%a %U' "$sock"):$(stat -c %a "$run")" = "666 $user:755" ]
# Both roles reach it by what the unit and serve set up, no ACL; one in neither is told why.
as_nobody() { local g=$1; shift; setpriv --reuid 65534 --regid 65534 $g "$work/bin/airlock" ctl --socket "$sock" "$@"; }
as_nobody "--groups $vg" status >"$work/view.out" 2>&1
check "a view-group uid gets role view" grep -q "(uid 65534), role view" "$work/view.out"
as_nobody "--groups $(getent group "$group" | cut -d: -f3)" status >"$work/op.out" 2>&1
check "an operate-group ($group) uid gets role operate" grep -q "(uid 65534), role operate" "$work/op.out"
as_nobody --clear-groups status >/dev/null 2>"$work/none.err"
check "a uid in neither group is told both groups" grep -qF \
	"not allowed: uid 65534 is in neither '$group' (operate) nor 'airlock-view' (view)" "$work/none.err"

sid=$(ctl start "$work/a/config.json" 2>"$work/start_a.err" | awk '{ print $NF }')
echo "   session: $sid"
check "ctl start: a session" [ -n "$sid" ]
check "the session runs and its upstream's sink receives the call" sink_has "$work/a/vault.sink" "$canary"
up=$(upstream_pid "$engine1")
check "the upstream runs as its session's own uid, in airlock-upstream's group (its /proc)" \
	proc_session_ids "$up"
check "the upstream holds no capability (effective, permitted, ambient, bounding), no_new_privs" \
	proc_caps_are "$up" "" "" 1
parser=$(exe_child "$engine1" "$(dirname "$airlock")/airlock-parser")
check "the session's parser runs as airlock-parse (its /proc)" \
	proc_ids_are "$parser" airlock-parse ""
check "the parser holds no capability (effective, permitted, ambient, bounding), no_new_privs" \
	proc_caps_are "$parser" "" "" 1
wd=$(pgrep -u "$user" -f "^$airlock-watchdog watchdog " | head -n 1)
check "the session's watchdog, $user too, holds CAP_KILL alone (permitted, effective, ambient)" \
	proc_holds_only "$wd" CAP_KILL
check "the audit's receipt: the upstream ran as airlock-upstream, uid changed to its session's" \
	receipt_session_uid "$state/audit.db"
check "the audit log is the engine's, 0600 (UMask)" [ "$(stat -c '%a %U' "$state/audit.db")" = "600 $user" ]

# An upstream as the engine's own user would be taken for the engine by its socket.
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))
for u in c["upstreams"].values(): u["user"] = sys.argv[2]
json.dump(c, open(sys.argv[3], "w"))' "$work/a/config.json" "$user" "$work/a/own_user.json"
chmod 0644 "$work/a/own_user.json"
rc=0; ctl start "$work/a/own_user.json" >/dev/null 2>"$work/own_user.err" || rc=$?
check "an upstream as $user, the engine's own user: refused at load, naming why" \
	bash -c '[ "$1" != 0 ] && grep -q "user: the engine'"'"'s own user is not allowed" "$2"' _ "$rc" "$work/own_user.err"

ctl stop "$sid" >/dev/null 2>&1
for _ in $(seq 300); do session_gone "$sid" && break; sleep 0.1; done
check "after ctl stop the session's container is gone" session_gone "$sid"

# An upstream that ignores EOF and SIGTERM (the fixture's hang mode): the
# stop's SIGKILL reaches it, another uid's process, by CAP_KILL alone.
loop_config h
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))
c["upstreams"]["vault"]["argv"] += ["--mode", "hang"]
json.dump(c, open(sys.argv[1], "w"))' "$work/h/config.json"
chmod 0644 "$work/h/config.json"
sid=$(ctl start "$work/h/config.json" 2>"$work/start_h.err" | awk '{ print $NF }')
check "a session whose upstream ignores EOF and SIGTERM: its sink receives the call" \
	sink_has "$work/h/vault.sink" "$canary"
up=$(upstream_pid "$engine1")
check "its upstream runs as its session's uid" proc_session_ids "$up"
ctl stop "$sid" >/dev/null 2>&1
for _ in $(seq 300); do session_gone "$sid" && break; sleep 0.1; done
gone() { for _ in $(seq 100); do [ ! -d "/proc/$1" ] || grep -q '^State:.*Z' "/proc/$1/status" && return 0; sleep 0.1; done; return 1; }
check "after ctl stop that upstream is gone too (pid $up)" gone "$up"
kill -TERM "$engine1"
rc=0; wait "$engine1" || rc=$?
check "SIGTERM: the engine exits 0, 0 containers left" \
	bash -c '[ "$1" = 0 ] && grep -q "stopped; 0 containers left" "$2"' _ "$rc" "$work/serve1.err"

# --- the engine SIGKILLed: nothing of its upstream's outlives it ------------------
# The upstream starts a child that ignores SIGTERM (--child yes). The
# engine killed outright runs no stop: the upstream dies with its thread
# (the kernel's signal, which needs CAP_KILL to reach another uid), and the
# session's watchdog, the engine's uid with CAP_KILL alone, kills its group.
loop_config k
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))
c["upstreams"]["vault"]["argv"] += ["--child", "yes"]
json.dump(c, open(sys.argv[1], "w"))' "$work/k/config.json"
chmod 0644 "$work/k/config.json"
check "the engine starts again as the unit runs it" unit_serve serve-k.err "$amb" "$bnd" ||
	{ cat "$work/serve-k.err" >&2; summary; exit 1; }
sid=$(ctl start "$work/k/config.json" 2>"$work/start_k.err" | awk '{ print $NF }')
check "a session whose upstream started a child: the call reaches the sink" \
	sink_has "$work/k/vault.sink" "$canary"
runs_k() { pgrep -f "[-]-sink $work/k/vault.sink" | wc -l; }
check "the upstream and its child run ($(runs_k) processes)" [ "$(runs_k)" = 2 ]
check "…as the session's own uid" proc_session_ids "$(pgrep -f "[-]-sink $work/k/vault.sink" | head -n 1)"
kill -KILL "$engine"
wait "$engine" 2>/dev/null
none_k() { [ "$(runs_k)" = 0 ]; }
for _ in $(seq 50); do none_k && break; sleep 0.1; done
check "the engine SIGKILLed: neither the upstream nor its child runs (within 5 s)" none_k
for _ in $(seq 150); do session_stopped "$sid" && break; sleep 0.1; done
check "the watchdog stopped the session's container" session_stopped "$sid"
"$airlock" reap >/dev/null 2>&1

# --- the mutants: the same unit without one of its capabilities --------------------
# Each is needed: without CAP_SETUID or CAP_SETGID the engine cannot switch
# the upstream's user (and must not run it as its own, in the docker
# group); without CAP_SETPCAP it cannot empty the upstream's bounding set;
# without CAP_KILL it could not stop it (test_confine's
# test_engine_without_cap_kill shows such an upstream outliving its stop).
# The same holds for its parsers, a connection's first: nothing is parsed.
without() { tr ' ' '\n' <<<"$1" | grep -vx "$2" | tr '\n' ' ' | sed 's/ $//'; }
mutant() {	# CAP CONFIG WHY
	local cap=$1 cfg=$2 why=$3 less lessb sid rc
	less=$(without "$amb" "$cap") lessb=$(without "$bnd" "$cap")
	check "the engine without $cap starts" unit_serve "serve-$cfg.err" "$less" "$lessb" ||
		{ cat "$work/serve-$cfg.err" >&2; return 1; }
	check "without $cap: it holds the rest, not $cap" proc_caps_are "$engine" "$less" "$lessb" 1
	# Every connection's lines go to a parser of its own (privsep): with
	# none to be had, ctl is refused before any request is read.
	rc=0; ctl start "$work/$cfg/config.json" >/dev/null 2>"$work/start_$cfg.err" || rc=$?
	check "without $cap: ctl start refused, its connection's parser not started ('parser failed')" \
		bash -c '[ "$1" != 0 ] && grep -q "parser failed" "$2"' _ "$rc" "$work/start_$cfg.err"
	check "without $cap: the engine's log names why" grep -qF "parser: $why" "$work/serve-$cfg.err"
	check "without $cap: the upstream never ran (no sink)" [ ! -e "$work/$cfg/vault.sink" ]
	check "without $cap: no process of $user runs the upstream program" upstream_not_run_as "$user"
	check "without $cap: no process of $user runs the parser" \
		not_run_as "$user" "$(dirname "$airlock")/airlock-parser"
	check "without $cap: no container of the engine's" \
		[ -z "$("$DOCKER" ps -aq --filter label=io.airlock.managed=1 --filter "label=io.airlock.owner-pid=$engine")" ]
	kill -TERM "$engine"
	rc=0; wait "$engine" || rc=$?
	check "without $cap: SIGTERM, exit 0" [ "$rc" = 0 ]
}
loop_config b && loop_config c && loop_config d && loop_config e
nocaps="the engine is in the docker group without CAP_SETUID and CAP_SETGID"
mutant CAP_SETUID b "$nocaps"
mutant CAP_SETGID c "$nocaps"
mutant CAP_SETPCAP d "the engine holds CAP_SETUID but not CAP_SETPCAP"
mutant CAP_KILL e "the engine holds CAP_SETUID but not CAP_KILL"
check "no receipt of an upstream that ran as $user" \
	[ "$(receipt_count "$state/audit.db" "$(id -u "$user")")" = 0 ]

outputs=("$work"/*.err)
check "the canary is in no output (serve logs, ctl errors)" \
	bash -c '! grep -lF -- "$1" "${@:2}"' _ "$canary" "${outputs[@]}"
summary
