#!/usr/bin/env bash
# Quarantine with the real parts (issue 43, item 3): looping agents under
# `airlock serve`, one under runc and one under runsc. `ctl quarantine`
# denies every call `quarantined` (the sink sees nothing more) and pauses
# the container (docker inspect: State.Paused) under both runtimes; a
# session held past its session timeout is still there and paused; an
# unpause by hand (`docker unpause`) is undone by the engine, audited and
# announced; release unpauses and calls reach the sink again. A pause the
# daemon refuses is reported (ctl sessions, the audit) and, the container
# running, every line the agent sends is denied `quarantined` (the gate
# holds without the pause: fail closed). A view-role uid is refused and
# audited; --all and --called TOOL --within D pick the live sessions; an
# 80x24 and a 50x12 console show the mark; the audit holds each
# quarantine and release with its author, the timeline tells them, verify
# passes; a stop ends a held (paused) runsc session at once; SIGKILL of
# the engine while a runc and a runsc session are held: each watchdog
# stops its paused container within its lease. A canary in the payload reaches the sink and no other
# output.
# usage: quarantine.sh AIRLOCK AGENT_BIN UPSTREAM_BIN
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1 agent=$2 upstream=$3
scratch_dir
chmod 0755 "$work"	# the setpriv client must reach the socket in it
. "$here/../checks.sh"
. "$here/serve_lib.sh"
sock=$work/engine.sock
owner_pids() { printf '%s\n' "${helpers[@]}"; }
command -v tmux >/dev/null || { echo "not ok: tmux is not installed (scripts/setup installs it)"; exit 1; }
tmux_sock=airlock-quar-$$
. "$here/../ui/tmux_lib.sh"
made_groups=()
group_gid() { getent group "$1" | cut -d: -f3; }
on_teardown() {
	local g
	tm_close q; tm_close k
	for g in "${made_groups[@]}"; do groupdel "$g" 2>/dev/null; done
}
for g in airlock airlock-view; do
	if [ -z "$(group_gid "$g")" ]; then groupadd "$g" && made_groups+=("$g"); fi
done
vg=$(group_gid airlock-view)
mkdir -p "$work/home"

canary="QUAR-CANARY-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '{"canary":"%s"}\n' "$canary" >"$work/payload.in"
image=$(scratch_image "$work/image" "$agent") || { not_ok "agent image build"; summary; exit 1; }
# NAME RUNTIME SESSION_MS: a looping agent's config under RUNTIME.
config() {
	loop_config "$1" || return 1
	python3 - "$work/$1/config.json" "$2" "$3" <<'PY'
import json, sys
p, rt, ms = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = json.load(open(p))
c["profile"]["runtime"] = rt
c["bounds"]["session_ms"] = ms
c["tools"]["idle"] = dict(c["tools"]["store"])  # in the catalog, never called
json.dump(c, open(p, "w"))
PY
}
config a runc 300000 && config b runsc 300000 && config t runc 15000 &&
	config w runsc 300000 ||
	{ not_ok "the sessions' configs"; summary; exit 1; }

serve_start
lines() { if [ -e "$work/$1/vault.sink" ]; then wc -l <"$work/$1/vault.sink"; else echo 0; fi; }
grows() {	# NAME: the sink gets a line more within 10 s
	local n i
	n=$(lines "$1")
	for i in $(seq 100); do [ "$(lines "$1")" -gt "$n" ] && return 0; sleep 0.1; done
	return 1
}
stays() { local n; n=$(lines "$1"); sleep "$2"; [ "$(lines "$1")" = "$n" ]; }
container_of() {
	python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["snapshot"]["sessions"]:
    if r["id"] == sys.argv[2]: print(r["container"])' "$work/snap.out" "$1"
}
snap() { ctl snap sessions --json; }
paused() {	# CONTAINER: docker says State.Paused is true (within 10 s)
	local i
	for i in $(seq 100); do
		[ "$("$DOCKER" inspect -f '{{.State.Paused}}' "$1" 2>/dev/null)" = true ] && return 0
		sleep 0.1
	done
	return 1
}
unpaused() {
	local i
	for i in $(seq 100); do
		[ "$("$DOCKER" inspect -f '{{.State.Running}} {{.State.Paused}}' "$1" 2>/dev/null)" = "true false" ] &&
			return 0
		sleep 0.1
	done
	return 1
}
quar_on() {	# ID: the snapshot says quarantined
	ctl q sessions --json
	python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["snapshot"]["sessions"]:
    if r["id"] == sys.argv[2]: sys.exit(0 if r["quarantine"]["on"] else 1)
sys.exit(1)' "$work/q.out" "$1"
}
me="detail like '%\"by\":\"$(id -un)\",%\"via\":\"ctl\"%'"

ids=()
t_started=$SECONDS	# t's session clock starts later, with its bridge
for s in t a b; do
	ctl "start_$s" start "$work/$s/config.json"
	ids+=("$(cat "$work/start_$s.out")")
done
t=${ids[0]} a=${ids[1]} b=${ids[2]}
check "three sessions started (runc with a 15 s timeout, runc, runsc)" \
	bash -c '[ -n "$1" ] && [ -n "$2" ] && [ -n "$3" ]' _ "$a" "$b" "$t"

# --- t: held as soon as it calls, long before its 15 s session timeout --------
check "session t: its calls reach the sink" grows t
ctl qt quarantine "$t"
check "ctl quarantine (t): exit 0, it names the session" \
	bash -c '[ "$1" = 0 ] && grep -qx "quarantined $2" "$3"' _ "$rc" "$t" "$work/qt.out"
for s in a b; do check "session $s: its calls reach the sink" grows "$s"; done
snap
ca=$(container_of "$a") cb=$(container_of "$b") ct=$(container_of "$t")

# --- a (runc): quarantined, paused, nothing reaches the sink -------------------
ctl qa quarantine "${a#s-}"
check "ctl quarantine by an id's prefix (a): exit 0, the whole id named" \
	bash -c '[ "$1" = 0 ] && grep -qx "quarantined $2" "$3"' _ "$rc" "$a" "$work/qa.out"
check "runc: docker inspect says State.Paused true" paused "$ca"
check "a's sink sees nothing while it is held" stays a 2
ctl again quarantine "$a"
check "a second quarantine changes nothing (exit 0, 'no session changed')" \
	bash -c '[ "$1" = 0 ] && grep -q "no session changed" "$2"' _ "$rc" "$work/again.out"
check "ctl sessions marks it: quarantined (paused) by its operator" \
	bash -c 'ctl() { "$1" ctl --socket "$2" sessions; }; ctl "$1" "$2" | grep -E "^$3 .*quarantined \(paused\) by $4"' \
	_ "$airlock" "$sock" "$a" "$(id -un)"
check "the audit: 'quarantine' for a by its operator via ctl" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='$a'
	 and rule='quarantine' and decision='applied' and $me"

# A hand outside: unpaused with the daemon's own CLI, the engine pauses it
# again at its next look (every 2 s) and says so; its gate held meanwhile.
check "docker unpause by hand (a): the daemon did it" "$DOCKER" unpause "$ca"
check "…the engine pauses it again (docker: State.Paused true)" paused "$ca"
check "…audited: 'quarantine: unpaused outside airlock' on a, the engine's entry" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='$a'
	 and rule='quarantine: unpaused outside airlock'"
check "…once" [ "$(audit_q "select count(*) from audit_entries where type='policy'
	 and session_id='$a' and rule='quarantine: unpaused outside airlock'")" = 1 ]
check "…serve says it: 'quarantine: unpaused outside airlock, paused again'" \
	grep -q "session $a quarantine: unpaused outside airlock, paused again" "$work/serve.err"
check "…ctl sessions: still 'quarantined (paused)'" \
	bash -c '"$1" ctl --socket "$2" sessions | grep -qE "^$3 .*quarantined \(paused\)"' \
	_ "$airlock" "$sock" "$a"
check "…and a's sink still sees nothing" stays a 2
check "…and a is still quarantined" quar_on "$a"

# --- b (runsc) ----------------------------------------------------------------
ctl qb quarantine "$b"
check "ctl quarantine (b, runsc): exit 0" [ "$rc" = 0 ]
check "runsc: docker inspect says State.Paused true" paused "$cb"
check "b's sink sees nothing while it is held" stays b 2

# --- the console marks them: an 80x24 console in tmux -------------------------
console_size="80 24" console q --connect "$sock"
check "an attached console at 80x24 shows the held sessions as quarantined" \
	wait_re q "${a:2:8} +quarantined .*paused" 30
cp "$work/last.screen" "$work/console-sessions.out" 2>/dev/null
tm_close q
console_size="50 12" console q --connect "$sock"
check "…and at 50x12 too" wait_re q "${a:2:8} +quarantined" 30
cp "$work/last.screen" "$work/console-small.out" 2>/dev/null
tm_close q

# --- t past its session timeout -----------------------------------------------
while [ $((SECONDS - t_started)) -lt 18 ]; do sleep 0.5; done
check "t, held past its 15 s session timeout: its container still exists, paused" paused "$ct"
check "…and the session still runs, quarantined" quar_on "$t"

# --- the view role is refused and audited -------------------------------------
mkdir -p "$work/bin" && install -m 0755 "$airlock" "$work/bin/airlock"
rc=0; setpriv --reuid 65534 --regid 65534 --groups "$vg" "$work/bin/airlock" ctl --socket "$sock" \
	release "$a" >/dev/null 2>"$work/view.err" || rc=$?
check "a view-role uid's release: exit 1, 'view only'" \
	bash -c '[ "$1" = 1 ] && grep -q "release: view only" "$2"' _ "$rc" "$work/view.err"
check "…audited: 'release refused: view only' naming uid 65534" \
	audit_has "select count(*) from audit_entries where type='policy'
	 and rule='release refused: view only' and detail like '%\"uid\":65534%'"
check "…and a is still held" quar_on "$a"

# --- release ------------------------------------------------------------------
ctl ra release "$a"
check "ctl release (a): exit 0" bash -c '[ "$1" = 0 ] && grep -qx "released $2" "$3"' _ "$rc" "$a" "$work/ra.out"
check "runc: unpaused" unpaused "$ca"
check "a's calls reach the sink again" grows a
check "the audit: 'release' for a by its operator" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='$a'
	 and rule='release' and decision='applied' and $me"
ctl rb release "$b"
check "ctl release (b, runsc): exit 0" [ "$rc" = 0 ]
check "runsc: unpaused" unpaused "$cb"
check "b's calls reach the sink again" grows b
ctl rt release "$t"
check "t released: it ends (its time was given back, then spent)" \
	bash -c 'for i in $(seq 300); do "$1" ctl --socket "$2" sessions | grep -E "^$3 +ended" && exit 0; sleep 0.1; done; exit 1' \
	_ "$airlock" "$sock" "$t"

# --- --all and --called -------------------------------------------------------
ctl all quarantine --all
check "quarantine --all: both live sessions named" \
	bash -c '[ "$1" = 0 ] && [ "$(grep -c "^quarantined s-" "$2")" = 2 ]' _ "$rc" "$work/all.out"
check "--all: a paused" paused "$ca"
check "--all: b paused" paused "$cb"
ctl rall release --all
check "release --all: both" bash -c '[ "$1" = 0 ] && [ "$(grep -c "^released s-" "$2")" = 2 ]' _ "$rc" "$work/rall.out"
check "a unpaused" unpaused "$ca"
check "a calls again" grows a
# --- a pause the daemon refuses: reported, and the gate holds anyway ---------
"$DOCKER" pause "$ca" >/dev/null 2>&1	# paused already: the daemon refuses another
ctl pf quarantine "$a"
check "a pause the daemon refuses: quarantined all the same (exit 0)" [ "$rc" = 0 ]
check "…ctl sessions says 'quarantined (pause failed)'" \
	bash -c 'for i in $(seq 100); do "$1" ctl --socket "$2" sessions | grep -E "^$3 .*quarantined \(pause failed\)" && exit 0; sleep 0.1; done; exit 1' \
	_ "$airlock" "$sock" "$a"
check "…audited: 'quarantine: pause failed' on a" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='$a'
	 and rule='quarantine: pause failed'"
denied=$(audit_q "select count(*) from audit_entries where type='call' and session_id='$a' and rule='quarantined'")
"$DOCKER" unpause "$ca" >/dev/null 2>&1
check "…running again, its calls are denied 'quarantined'" \
	audit_has "select count(*) - $denied from audit_entries where type='call' and session_id='$a'
	 and rule='quarantined'"
check "…and a's sink sees nothing" stays a 2
ctl pfr release "$a"
check "…released: a calls again" grows a

# --- the console's key: Q on the selected session, asked y/N first -----------
console_size="80 24" console k --connect "$sock"
check "a console at 80x24 attached" wait_for k "${a:2:8}" 30
keys k /; keys k -l "${a:2:8}"; keys k Enter
keys k Q
check "Q asks first: 'quarantine session ${a:0:10}…?'" wait_for k "quarantine session ${a:0:10}" 10
keys k n
not_held() { sleep 0.5; ! quar_on "$1"; }
check "…n cancels: a is not held" not_held "$a"
keys k Q
wait_for k "quarantine session ${a:0:10}" 10
keys k y
check "…y: the console shows a quarantined" wait_re k "${a:2:8} +quarantined" 20
check "runc: a paused by the console's request" paused "$ca"
check "the audit: 'quarantine' for a by the console's user via console" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='$a'
	 and rule='quarantine' and detail like '%\"by\":\"$(id -un)\",%\"via\":\"console\"%'"
keys k Q
check "Q on a held session asks to release it" wait_for k "release session ${a:0:10}" 10
keys k y
check "…y: unpaused" unpaused "$ca"
check "…and a calls again" grows a
tm_close k

ctl bad quarantine --called store --all
check "--called with --all: refused before the socket (exit 2)" [ "$rc" = 2 ]
ctl nocall quarantine --called idle
check "--called a tool no one called: no session changed" \
	bash -c '[ "$1" = 0 ] && grep -q "no session changed" "$2"' _ "$rc" "$work/nocall.out"
ctl notool quarantine --called nosuchtool
check "--called a tool no config has: refused, exit 1, in revoke's words" \
	bash -c '[ "$1" = 1 ] && grep -qF "quarantine: quarantine refused: no config this engine holds has a tool '"'"'nosuchtool'"'"'" "$2"' \
	_ "$rc" "$work/notool.err"
# A call waiting on a hold named its tool just now: --called picks its
# session, though the call is not decided (its row's counters come after).
ctl ah hold store --session "$a"
check "ctl hold store --session a: exit 0" [ "$rc" = 0 ]
aid=$(pending_id "$a")
check "a's call waits on the hold" [ -n "$aid" ]
sleep 1.5	# a's latest decided call is older than the window now
ctl calledheld quarantine --called store --within 1s
check "--called store --within 1s: a, whose call waits on the hold" \
	bash -c '[ "$1" = 0 ] && grep -qx "quarantined $2" "$3"' _ "$rc" "$a" "$work/calledheld.out"
ctl calledrel release --all
check "…released (all)" [ "$rc" = 0 ]
ctl arestore restore store --session "$a"
check "…a's hold lifted: a calls again" grows a
ctl called quarantine --called store --within 1m
check "--called store --within 1m: both sessions (each called it just now)" \
	bash -c '[ "$1" = 0 ] && [ "$(grep -c "^quarantined s-" "$2")" = 2 ]' _ "$rc" "$work/called.out"
check "--called: b paused" paused "$cb"

# --- the audit ----------------------------------------------------------------
"$airlock" audit timeline "$work/audit.db" >"$work/timeline.out" 2>"$work/timeline.err"
check "audit timeline tells the quarantine and the release of a, with their author" \
	bash -c 'grep -qE "request $2 \"quarantine\" applied by $3 " "$1" &&
		 grep -qE "request $2 \"release\" applied by $3 " "$1"' _ "$work/timeline.out" "$a" "$(id -un)"
"$airlock" audit verify "$work/audit.db" >"$work/verify.out" 2>&1
check "audit verify passes" [ $? = 0 ]

# --- a stop ends a held session: b (runsc, paused) ---------------------------
gone_or_exited() {	# CONTAINER SECONDS: not running within SECONDS
	local i
	for i in $(seq $(($2 * 10))); do
		[ "$("$DOCKER" inspect -f '{{.State.Running}}' "$1" 2>/dev/null || echo gone)" != true ] && return 0
		sleep 0.1
	done
	return 1
}
ctl sb stop "$b"
check "ctl stop of the held b: exit 0" [ "$rc" = 0 ]
check "runsc: b's paused container is stopped within 8 s" gone_or_exited "$cb" 8
check "…and the session ended by the operator" \
	bash -c 'for i in $(seq 100); do "$1" ctl --socket "$2" sessions | grep -E "^$3 +ended" && exit 0; sleep 0.1; done; exit 1' \
	_ "$airlock" "$sock" "$b"

# --- the engine dies while a (runc) and w (runsc) are held: each watchdog -----
# stops its paused container within its lease (it unpauses first: runsc
# takes the daemon some 12 s to stop a paused sandbox)
ctl start_w start "$work/w/config.json"
w=$(cat "$work/start_w.out")
check "session w (runsc) started" [ -n "$w" ]
check "session w: its calls reach the sink" grows w
ctl qw quarantine "$w"
snap
cw=$(container_of "$w")
check "w is held: the snapshot names its container" [ -n "$cw" ]
check "…paused" paused "$cw"
check "a is held (--called)" quar_on "$a"
kill -KILL "$engine"
wait "$engine" 2>/dev/null
killed_at=$SECONDS
# The lease's bound: 2 s of silence (none here: EOF at once) and one stop
# request of 5 s (watchdog.h). Without the unpause, runsc took 12 s.
lease_s=7
check "engine SIGKILLed while a is held: the watchdog stops a's paused container (runc) within $lease_s s" \
	gone_or_exited "$ca" $lease_s
left=$((lease_s - (SECONDS - killed_at)))
check "…and w's paused container (runsc) within $lease_s s of the SIGKILL" \
	gone_or_exited "$cw" $((left > 0 ? left : 0))
echo "# both held containers stopped $((SECONDS - killed_at)) s after the engine's SIGKILL"
for c in "$cb" "$ct" "$cw"; do [ -n "$c" ] && "$DOCKER" rm -f "$c" >/dev/null 2>&1; done

# --- the canary ---------------------------------------------------------------
check "the canary reached the permitted sink" grep -q "$canary" "$work/a/vault.sink"
for f in "$work"/*.out "$work"/*.err "$work"/*.screen "$work/serve.err"; do
	check "no canary in $(basename "$f")" bash -c '! grep -q "$1" "$2"' _ "$canary" "$f"
done
check "no canary in the audit log" bash -c '! grep -aq "$1" "$2"' _ "$canary" "$work/audit.db"
summary
