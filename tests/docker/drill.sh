#!/usr/bin/env bash
# The on-call drill of issue 42, played from a script in the order a new
# operator plays it, with nothing done by hand:
#   - two engines (`airlock serve` a and b), each with its own socket,
#     state directory (its audit log in it) and two looping sessions;
#   - two consoles in tmux attached to both engines, one as a real
#     operate-group user, one as a real view-group user (setpriv), from a
#     copy of the program in a directory this script makes: the clone may
#     sit where no other uid can enter;
#   - ctl as both roles and as a uid in neither group, each refusal word
#     for word (a peer with no role, a path that is no socket, a missing
#     one, an unknown tool, an unknown, ambiguous or ended session); a
#     session stopped by the prefix the console shows; the view-only
#     console offers no change and its changes are refused, the engine's
#     refusal audited with its operation, its audit view fed by the engine
#     (the log is not its to open); a freeze's alert on both screens,
#     without '?' or U+FFFD;
#   - engine a SIGKILLed: both consoles mark a's rows lost and keep b's
#     live, the watchdogs stop a's containers (the daemon says so); a's
#     restart on the same state ends each lost session in the audit
#     (engine_lost) and audits each container it reaps (a serve with a bad
#     config before it touches none of them), and both consoles
#     find it again with no key pressed; `audit verify` leaves no session
#     of the dead engine unended;
#   - learn mode on the restarted a (issue 43): store revoked, its calls
#     denied; `audit propose` of a's log is a file restoring store, `ctl
#     apply` of that very file lets the calls reach the sinks again, and
#     `audit timeline` shows the revoke and the restore with their author
#     and both sessions' acks;
#   - the same story and the newest entries as the view user reads them
#     through `ctl timeline` and `ctl audit --follow`, the log's file
#     closed to that user: the lines root's `audit timeline` and `audit
#     tail` print from the file, no entry skipped;
#   - engine b SIGKILLed too and not restarted: `airlock reap --json` names
#     b's container and session among those it removed, a's among those it
#     kept; b's audit names its one lost session as never ended;
#   - a canary in the payload reaches the permitted sink, and no screen,
#     log, audit row or ctl output;
#   - everything it started is gone at the end, checked after the teardown.
#
# usage: drill.sh AIRLOCK AGENT_BIN UPSTREAM_BIN
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon
command -v tmux >/dev/null || { echo "not ok: tmux is not installed (scripts/setup installs it)"; exit 1; }

airlock=$(readlink -f "$1") agent=$(readlink -f "$2") upstream=$(readlink -f "$3")
scratch_dir
. "$here/../checks.sh"
. "$here/../ui/tmux_lib.sh"
tmux_sock=airlock-drill-$$
consoles="op view"
owner_pids() { printf '%s\n' "${helpers[@]}"; }	# the engines' containers are this test's
until_true() {	# SECONDS CMD...: poll CMD until it holds (wall clock; at least one try)
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}
on_not_ok() { tail -n 30 "$work/last.screen" 2>/dev/null | sed 's/^/    | /'; }

# --- the roles as real users: made here when missing, removed after ------------------
made_groups=() made_users=()
on_teardown() {
	local x u
	for x in $consoles; do tm_close "$x"; done
	for x in "${made_users[@]}"; do
		u=$(id -u "$x" 2>/dev/null) || continue
		until_true 5 eval "! pgrep -u $u >/dev/null"	# its consoles, hung up by tmux
		pgrep -u "$u" | xargs -r kill -KILL
		until_true 5 eval "! pgrep -u $u >/dev/null"
		userdel "$x" 2>/dev/null
	done
	for x in "${made_groups[@]}"; do groupdel "$x" 2>/dev/null; done
}
for g in airlock airlock-view; do
	if [ -z "$(getent group "$g")" ]; then groupadd "$g" && made_groups+=("$g"); fi
done
# The users are this test's own, removed after even when an earlier run left them.
for u in airlock-drill-op airlock-drill-view; do
	made_users+=("$u")
	getent passwd "$u" >/dev/null ||
		useradd --system --no-create-home --shell /usr/sbin/nologin --user-group "$u"
	getent group "$u" >/dev/null && made_groups+=("$u")
done
og=$(getent group airlock | cut -d: -f3) vg=$(getent group airlock-view | cut -d: -f3)
ou=$(id -u airlock-drill-op) vu=$(id -u airlock-drill-view)
as_op="setpriv --reuid $ou --regid $(id -g airlock-drill-op) --groups $og"
as_view="setpriv --reuid $vu --regid $(id -g airlock-drill-view) --groups $vg"
as_none="setpriv --reuid 65534 --regid 65534 --clear-groups"
# What the other uids run, where they can reach it ($work: 0711, by upstream_box).
mkdir -p "$work/bin" && install -m 0755 "$airlock" "$work/bin/airlock"
bin=$work/bin/airlock
ctl_as() {	# ROLE ENGINE ARGS...: ctl as op, view or none on ENGINE's socket
	local who=as_$1 sock=$work/$2.sock
	shift 2
	${!who} "$bin" ctl --socket "$sock" "$@"
}
says() {	# RC FILE TEXT [EXIT]: exited EXIT (1: refused), FILE is that one line word for word
	[ "$1" = "${4:-1}" ] && [ "$(cat "$2")" = "$3" ]
}

# --- the image, the payload, the configs: a1 a2 for engine a, b1 b2 for b ----------------
image=$(scratch_image "$work/image" "$agent") || { not_ok "agent image build"; summary; exit 1; }
canary="DRILL-CANARY-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '{"canary":"%s"}\n' "$canary" >"$work/payload.in"
for c in a1 a2 b1 b2; do loop_config "$c"; done

# serve NAME [N]: engine NAME, its state under $work/NAME/state, until its Nth
# readiness line (a restart appends to the same log); sets pid_NAME.
serve() {
	local name=$1
	XDG_STATE_HOME=$work/$name/state "$airlock" serve --name "$name" --socket "$work/$name.sock" \
		--config "$work/${name}1/config.json" --config "$work/${name}2/config.json" \
		2>>"$work/$name.log" </dev/null &
	eval "pid_$name=$!"
	helpers+=("$!")
	serve_ready "$work/$name.log" "$!" "${2:-1}" || { sed 's/^/    | /' "$work/$name.log"; return 1; }
}
db() { echo "$work/$1/state/airlock/audit.db"; }
running_ids() {	# ENGINE: its running sessions' ids, by root's ctl
	"$airlock" ctl --socket "$work/$1.sock" sessions --json 2>/dev/null | python3 -c '
import json, sys
print(" ".join(s["id"] for s in json.load(sys.stdin)["snapshot"]["sessions"] if s["state"] == "running"))'
}
state_of() {	# ENGINE SESSION
	"$airlock" ctl --socket "$work/$1.sock" sessions --json 2>/dev/null | python3 -c '
import json, sys
print(" ".join(s["state"] for s in json.load(sys.stdin)["snapshot"]["sessions"] if s["id"] == sys.argv[1]))' "$2"
}
two_running() {	# ENGINE: until two sessions run, each with a sink that grew; sets ids_ENGINE
	local end=$((SECONDS + 60)) ids
	until ids=$(running_ids "$1") && [ "$(wc -w <<<"$ids")" = 2 ] &&
		[ -s "$work/${1}1/vault.sink" ] && [ -s "$work/${1}2/vault.sink" ]; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
	eval "ids_$1=\$ids"
}
short() { local s=${1#s-}; echo "${s:0:8}"; }	# the id as the console shows it
container_of() { "$DOCKER" ps -aq --no-trunc --filter "label=io.airlock.session=$1" | head -n 1; }

# ============================================================================
# 1. Two engines, two looping sessions each.
fatal() { sed 's/^/    | /' "$work"/*.log; summary; exit 1; }
check "engine a listens" serve a || fatal
check "engine b listens" serve b || fatal
check "engine a runs two sessions, both calling their upstream" two_running a || fatal
check "engine b runs two sessions, both calling their upstream" two_running b || fatal
check "each engine keeps its audit log in its own state directory" \
	bash -c '[ -s "$1" ] && [ -s "$2" ] && [ "$1" != "$2" ]' _ "$(db a)" "$(db b)"
read -r a1 a2 <<<"$ids_a"
read -r b1 b2 <<<"$ids_b"
echo "   engine a: $a1 $a2; engine b: $b1 $b2"

# 2. Two consoles on both engines: an operate-group user and a view-group user.
both="--connect $work/a.sock --connect $work/b.sock"
console_as=$as_op console_bin=$bin console op $both
console_as=$as_view console_bin=$bin console view $both
check "the operate user's console: both engines in the header, neither view only" \
	wait_re op "│ a r[0-9]+ · b r[0-9]+ │"
check "the view user's console: both engines in the header, each view only" \
	wait_re view "│ a r[0-9]+ \(view only\) · b r[0-9]+ \(view only\) │"
rows() {	# CONSOLE STATE ENGINE:SESSION...: each session's row, with its engine, in STATE
	local name=$1 st=$2 s
	shift 2
	s=$(screen "$name")
	for e in "$@"; do grep -Eq "^. *${e%%:*} +$(short "${e#*:}") +$st " <<<"$s" || return 1; done
}
for c in $consoles; do
	check "console $c: the four sessions, each with its engine, running" \
		until_true 20 rows "$c" running "a:$a1" "a:$a2" "b:$b1" "b:$b2" || fatal
done
offers_changes() { screen "$1" | grep -qE '\] (revoke|restore|force-stop) '; }
check "the operate console's key bar offers revoke, restore, force-stop" offers_changes op
check "the view-only console's key bar offers none of them" eval '! offers_changes view'

# 3. ctl as each role; every refusal in the engine's words.
ctl_as op a status >"$work/op.status.out" 2>&1
check "ctl status as the operate user: role operate, by its uid" \
	grep -qF "you      airlock-drill-op (uid $ou), role operate" "$work/op.status.out"
ctl_as view a status >"$work/view.status.out" 2>&1
check "ctl status as the view user: role view, by its uid" \
	grep -qF "you      airlock-drill-view (uid $vu), role view" "$work/view.status.out"
rc=0; ctl_as none a status >"$work/none.out" 2>"$work/none.err" || rc=$?
check "a uid in neither group: refused, told which groups would let it in" says "$rc" "$work/none.err" \
	"airlock ctl: the engine refused this connection: not allowed: uid 65534 is in neither 'airlock' (operate) nor 'airlock-view' (view)"
: >"$work/plain.file"
rc=0; $as_op "$bin" ctl --socket "$work/plain.file" status >/dev/null 2>"$work/plain.err" || rc=$?
check "a regular file as the socket: 'not a socket' (exit 3)" says "$rc" "$work/plain.err" \
	"airlock ctl: $work/plain.file: not a socket" 3
rc=0; $as_op "$bin" ctl --socket "$work/absent.sock" status >/dev/null 2>"$work/absent.err" || rc=$?
check "a missing socket: 'does not exist' (exit 3)" says "$rc" "$work/absent.err" \
	"airlock ctl: $work/absent.sock: does not exist" 3

# The kill switch on a, by the operate user: its alert on both screens.
rc=0; ctl_as op a freeze --json >"$work/freeze.json" 2>"$work/freeze.err" || rc=$?
frev=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["revision"] if len(d["acks"]) == 2 and not d["pending"] else "")' "$work/freeze.json" 2>/dev/null)
check "ctl freeze on a as the operate user: both sessions acknowledge (r$frev)" \
	bash -c '[ "$1" = 0 ] && [ -n "$2" ]' _ "$rc" "$frev"
alert="a: cutover r$frev: freeze all calls on 2 sessions"
for c in $consoles; do
	check "console $c: the alert '$alert'" wait_for "$c" "! $alert  (" 10
	check "console $c: the alert's line has no '?'" bash -c '! grep -F "cutover r" "$1" | grep -qF "?"' _ "$work/last.screen"
	check "console $c: no U+FFFD anywhere on screen" bash -c '! grep -qF "$(printf "\xef\xbf\xbd")" "$1"' _ "$work/last.screen"
	check "console $c: the header says which engine is frozen, since its revision, by whom" \
		wait_for "$c" "FROZEN a since r$frev by airlock-drill-op" 5
done
keys view T
check "the view-only console's thaw is refused at once" wait_for view "view only: thaw refused" 5
rc=0; ctl_as op a thaw >/dev/null 2>"$work/thaw.err" || rc=$?
check "ctl thaw as the operate user: exit 0" [ "$rc" = 0 ]
for c in $consoles; do
	check "console $c: FROZEN gone from the header" gone_from "$c" "FROZEN a" 10
done

# Tools and sessions: what the console refuses, ctl refuses in the same words.
revision() { "$airlock" ctl --socket "$work/$1.sock" status | awk '$1 == "revision" { print $2 }'; }
rev=$(revision a)
rc=0; ctl_as op a revoke nosuchtool --all 2>"$work/nosuchtool.err" || rc=$?
check "ctl revoke of an unknown tool: refused, the tool named" says "$rc" "$work/nosuchtool.err" \
	"airlock ctl: revoke: cutover refused: no config this engine holds has a tool 'nosuchtool'"
check "…and no revision spent on it (still r$rev)" bash -c '[ -n "$1" ] && [ "$1" = "$2" ]' _ "$rev" "$(revision a)"
rc=0; ctl_as op a stop zz9 2>"$work/zz9.err" || rc=$?
check "ctl stop of an unknown session" says "$rc" "$work/zz9.err" \
	"airlock ctl: stop: no such session: no session id starts with 'zz9'"
rc=0; ctl_as op a stop s- 2>"$work/ambiguous.err" || rc=$?
check "ctl stop of a prefix both of a's sessions have: ambiguous, counted" says "$rc" "$work/ambiguous.err" \
	"airlock ctl: stop: no such session: ambiguous session id prefix 's-': 2 sessions match"
check "…and both of a's sessions still run" [ "$(wc -w <<<"$(running_ids a)")" = 2 ]
rc=0; ctl_as view b revoke store --all >/dev/null 2>"$work/view_revoke.err" || rc=$?
check "ctl revoke as the view user: refused by the engine" says "$rc" "$work/view_revoke.err" \
	"airlock ctl: revoke: view only"
view_refused() {	# b's audit: the refusal, the op named in its rule, by the view user
	"$airlock" audit tail "$(db b)" --json --session engine 2>/dev/null | python3 -c '
import json, sys
sys.exit(0 if any(r["type"] == "policy" and r["decision"] == "rejected" and
                  r["rule"] == "revoke refused: view only" for r in map(json.loads, sys.stdin)) else 1)' &&
	[ "$(sqlite3 "file:$(db b)?mode=ro" "select count(*) from audit_entries where type='policy'
		and rule='revoke refused: view only' and detail like '%\"uid\":$vu,%'")" = 1 ]
}
check "b's audit: 'revoke refused: view only', by the view user's uid" until_true 5 view_refused
keys view X
check "the view-only console's force-stop is refused at once" \
	wait_for view "view only: force-stop refused" 5
check "…and nothing asks y/N" eval '! screen view | grep -qF "[y/N]"'
command_line view "revoke store all"
check "the view-only console's :revoke is refused at once" wait_for view "view only: revoke refused" 5

# The audit view of the view user's console: rows from the engine, not the file.
check "the audit log is not the view user's to open (the subject of the next check)" \
	eval "! $as_view test -r $(db b)"
keys view 4
check "the view user's audit view lists the engines' entries, through the link" \
	wait_re view "Audit.* [1-9][0-9]* entr(y|ies)" 10
check "…and says nothing of a database it cannot open" eval '! grep -q "cannot open" "$work/last.screen"'
keys view 1
check "…back to the sessions" wait_re view "ENGINE +ID" 5

# b2 stopped by its id as the operate console shows it.
shown=$(screen op | grep -Eo "^. *b +$(short "$b2") " | awk '{ print $NF }')
rc=0; ctl_as op b stop "$shown" >"$work/stop_short.out" 2>"$work/stop_short.err" || rc=$?
check "ctl stop '$shown' (b2 as the console shows it): exit 0" bash -c '[ "$1" = 0 ] && [ -n "$2" ]' _ "$rc" "$shown"
b2_ended() { [ "$(state_of b "$b2")" = ended ]; }
check "b2 ended" until_true 30 b2_ended
check "b2's container is gone" until_true 30 session_gone "$b2"
check "b1 still runs" [ "$(running_ids b)" = "$b1" ]
rc=0; ctl_as op b stop "$b2" 2>"$work/stop_ended.err" || rc=$?
check "ctl stop of the ended b2: 'has ended'" says "$rc" "$work/stop_ended.err" \
	"airlock ctl: stop: no such session: session $b2 has ended"

# 4. Engine a SIGKILLed.
ca1=$(container_of "$a1") ca2=$(container_of "$a2")
check "a's two sessions have their containers" bash -c '[ -n "$1" ] && [ -n "$2" ] && [ "$1" != "$2" ]' _ "$ca1" "$ca2"
kill -KILL "$pid_a"
wait "$pid_a" 2>/dev/null
for c in $consoles; do
	check "console $c: a's rows lost, b's running" until_true 15 rows "$c" lost "a:$a1" "a:$a2"
	check "console $c: …b1 still running" rows "$c" running "b:$b1"
	check "console $c: the title counts a's sessions apart" wait_re "$c" "[0-9]+, 1 live, 2 of lost engines" 5
	check "console $c: the header says a is lost" wait_re "$c" "│ a (LOST|connecting)[^·]* · b r[0-9]+" 5
done
a_stopped() { session_stopped "$a1" && session_stopped "$a2"; }
check "the watchdogs stopped a's containers (none of its sessions runs)" until_true 30 a_stopped
both_stopped() { stopped "$ca1" && stopped "$ca2"; }
check "…which are still there for the reaper (stopped, not removed)" both_stopped
for c in $consoles; do
	check "console $c: not STALE while b answers" eval "! screen $c | grep -q STALE"
done

printf '{"profile": 3}\n' >"$work/bad.json"
rc=0; XDG_STATE_HOME=$work/bad "$airlock" serve --socket "$work/bad.sock" --config "$work/bad.json" \
	>/dev/null 2>"$work/serve_bad.err" </dev/null || rc=$?
check "serve with a bad config: exit 3, the config and its fault named" says "$rc" "$work/serve_bad.err" \
	"airlock serve: config $work/bad.json: profile: expected an object" 3
check "…having touched no container: a's stopped ones are still there" both_stopped

check "engine a restarted on the same socket and state" serve a 2 || fatal
check "its reaper counts a's containers as orphans, reaped, and b's as live" grep -qE \
	'^airlock serve: [0-9]+ airlock containers? at start: ([2-9]|[1-9][0-9]+) orphans of gone engines \(([2-9]|[1-9][0-9]+) reaped, 0 failed\), [1-9][0-9]* of live engines left alone$' \
	"$work/a.log"
check "the restarted engine runs two sessions" two_running a || fatal
read -r n1 n2 <<<"$ids_a"
check "…new ones" bash -c '[ -n "$1" ] && [ -n "$2" ] && [[ " $3 $4 " != *" $1 "* ]] && [[ " $3 $4 " != *" $2 "* ]]' _ "$n1" "$n2" "$a1" "$a2"
for c in $consoles; do
	check "console $c: found a again by itself (no key sent)" \
		wait_re "$c" "│ a r[0-9]+( \(view only\))? · b r[0-9]+" 30
	check "console $c: a's new sessions running" until_true 20 rows "$c" running "a:$n1" "a:$n2"
done

# The audit of a: each lost session ended by the new engine, each reaped container there.
tail_a() { "$airlock" audit tail "$(db a)" --json --session "$1"; }
ended_lost() {	# SESSION CONTAINER
	tail_a "$1" >"$work/tail-$1.json" 2>&1 || return 1
	python3 - "$work/tail-$1.json" <<'PY' || return 1
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ends = [r for r in rows if r["type"] == "session_end"]
reaps = [r for r in rows if r["type"] == "reap"]
ok = (len(ends) == 1 and ends[0]["decision"] == "abnormal" and ends[0]["rule"] == "engine_lost"
      and len(reaps) == 1 and reaps[0]["decision"] == "reaped" and reaps[0]["rule"] == "owner_gone")
sys.exit(0 if ok else 1)
PY
	[ "$(sqlite3 "file:$(db a)?mode=ro" "select count(*) from audit_entries where session_id = '$1'
		and type = 'reap' and detail like '%\"container\":\"${2:0:12}\"%'")" = 1 ]
}
check "a's audit: $a1 ended engine_lost, its container ${ca1:0:12} reaped, once each" ended_lost "$a1" "$ca1"
check "a's audit: $a2 ended engine_lost, its container ${ca2:0:12} reaped, once each" ended_lost "$a2" "$ca2"
# The session as the console shows it (8 hex digits, no "s-"): the same entries.
"$airlock" audit tail "$(db a)" --json --session "$(short "$a1")" >"$work/tail-short-a1.json" 2>&1
check "audit tail --session with the console's short id: the very entries of the whole id" \
	bash -c '[ -s "$1" ] && cmp -s "$1" "$2"' _ "$work/tail-short-a1.json" "$work/tail-$a1.json"
rc=0; "$airlock" audit tail "$(db a)" --session s- >"$work/tail-ambiguous.out" 2>&1 || rc=$?
check "audit tail --session s-: refused, exit 1, the sessions it could be counted" \
	bash -c '[ "$1" = 1 ] && grep -qE "session: ambiguous session id prefix .s-.: [0-9]+ sessions match$" "$2"' \
	_ "$rc" "$work/tail-ambiguous.out"
rc=0; "$airlock" audit tail "$(db a)" --session zz9 >"$work/tail-none.out" 2>"$work/tail-none.err" || rc=$?
check "audit tail --session of no started session: nothing printed, and stderr says why" \
	bash -c '[ "$1" = 0 ] && [ ! -s "$2" ] && grep -qF -- "--session zz9: no session that started here has such an id" "$3"' \
	_ "$rc" "$work/tail-none.out" "$work/tail-none.err"
"$airlock" audit verify "$(db a)" --json >"$work/verify_a.json" 2>&1
check "audit verify of a: chain ok; the only sessions without an end are the new, running ones" \
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
unended = sorted(u["session"] for u in d["unended_sessions"])
sys.exit(0 if d["ok"] and unended == sorted(sys.argv[2:]) else 1)' "$work/verify_a.json" "$n1" "$n2"

# Engine b SIGKILLed, not restarted: the operator reaps what is left.
cb1=$(container_of "$b1")
check "b1 has its container" [ -n "$cb1" ]
kill -KILL "$pid_b"
wait "$pid_b" 2>/dev/null
for c in $consoles; do
	check "console $c: b's row lost, a's new rows running" until_true 15 rows "$c" lost "b:$b1"
	check "console $c: …a's still running" rows "$c" running "a:$n1" "a:$n2"
done
check "the watchdog stopped b1's container" until_true 30 session_stopped "$b1"
cn1=$(container_of "$n1") cn2=$(container_of "$n2")
"$airlock" reap --json >"$work/reap.json" 2>"$work/reap.err"
check "airlock reap --json names b1's container and session among those it removed" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if {"container": sys.argv[2], "session": sys.argv[3]}.items() <= next(
    (c for c in d["reaped_containers"] if c.get("container") == sys.argv[2]), {}).items() else 1)' \
	"$work/reap.json" "$cb1" "$b1"
check "…and a's two containers with their sessions among those it kept, not removed" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
kept = {c.get("container"): c.get("session") for c in d["kept_containers"]}
gone = {c.get("container") for c in d["reaped_containers"]}
pairs = list(zip(sys.argv[2::2], sys.argv[3::2]))
sys.exit(0 if all(c and kept.get(c) == s and c not in gone for c, s in pairs) else 1)' \
	"$work/reap.json" "$cn1" "$n1" "$cn2" "$n2"
check "b1's container is gone" session_gone "$b1"
check "a's new sessions still run" [ "$(running_ids a)" = "$n1 $n2" ]
"$airlock" audit verify "$(db b)" >"$work/verify_b.txt" 2>&1
check "audit verify of b: chain ok, and b1 (its engine gone, unrestarted) never ended" \
	bash -c 'grep -qE "^audit .*: [0-9]+ entries, chain ok$" "$1" && [ "$(grep -c "^never ended: " "$1")" = 1 ] &&
		grep -qE "^never ended: session $2 \(session_start entry [0-9]+\)$" "$1"' _ "$work/verify_b.txt" "$b1"
keys op q
check "quitting the operate console counts a's live sessions, b named as lost" \
	wait_for op "detached from 2 engines; their 2 live sessions go on (lost, not counted: b)" 10
check "…exit status 0" wait_for op "exit status 0" 5

# Learn mode on the restarted a: a revoke denies its sessions' calls, `audit
# propose` turns the denials into the incident file that restores the tool,
# `ctl apply` of that very file lets the calls through, and `audit timeline`
# tells it: the revoke and the restore, by the operate user, acked by both.
rc=0; ctl_as op a revoke store --all >"$work/learn_revoke.out" 2>&1 || rc=$?
check "ctl revoke store --all on a as the operate user: exit 0" [ "$rc" = 0 ]
denied_revoked() {	# both of a's new sessions have a call denied revoked
	[ "$(sqlite3 "file:$(db a)?mode=ro" "select count(distinct session_id) from audit_entries
		where type = 'call' and decision = 'denied' and rule = 'revoked'
		and session_id in ('$n1', '$n2')")" = 2 ]
}
check "a's audit: a call of each new session denied revoked" until_true 30 denied_revoked
rc=0; "$airlock" audit propose "$(db a)" >"$work/proposed.json" 2>"$work/propose.err" || rc=$?
chmod 0644 "$work/proposed.json"
check "audit propose of a: exit 0, a file that restores store and says why, and nothing else" \
	python3 - "$rc" "$work/proposed.json" <<'PY'
import json, re, sys
assert sys.argv[1] == "0", sys.argv[1]
f = json.load(open(sys.argv[2]))
assert set(f) == {"restore", "why"} and f["restore"] == ["store"], f
assert re.fullmatch(r"[0-9]+ calls? in 2 sessions denied revoked, \S+Z to \S+Z", f["why"]["store"]), f
PY
sizes() { stat -c %s "$work/a1/vault.sink" "$work/a2/vault.sink" | tr '\n' ' '; }
before=$(sizes)
rc=0; ctl_as op a apply "$work/proposed.json" >"$work/learn_apply.out" 2>&1 || rc=$?
check "ctl apply of that very file as the operate user: exit 0" [ "$rc" = 0 ]
sinks_grew() {	# both sinks past their size when the file was applied
	read -r s1 s2 <<<"$(sizes)"
	read -r b1s b2s <<<"$before"
	[ "$s1" -gt "$b1s" ] && [ "$s2" -gt "$b2s" ]
}
check "…and the next calls go through: both upstreams' sinks grow" until_true 30 sinks_grew
"$airlock" audit timeline "$(db a)" --json >"$work/timeline_a.json" 2>"$work/timeline_a.err"
check "audit timeline of a: the revoke then the restore of store, each by the operate user via ctl, acked applied by both sessions" \
	python3 - "$work/timeline_a.json" "$ou" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
uid = int(sys.argv[2])
pol = [e for e in ev if e["event"] == "policy" and e["tool"] == "store"]
rv = [e for e in pol if e["op"] == "revoke"][-1]
rs = [e for e in pol if e["op"] == "restore"][-1]
for e in (rv, rs):
    assert e["by"] == {"user": "airlock-drill-op", "uid": uid, "via": "ctl"}, e
    assert e["acks"] == {"applied": 2, "not_applicable": 0, "rejected": 0}, e
assert rv["seq"] < rs["seq"] and rv["revision"] < rs["revision"], (rv, rs)
PY
"$airlock" audit timeline "$(db a)" >"$work/timeline_a.txt" 2>&1
check "…and in its text: the restore's line with its author and acks" grep -qE \
	" policy restore store r[0-9]+ by airlock-drill-op \(uid $ou, via ctl\): 2 applied, 0 not_applicable, 0 rejected$" \
	"$work/timeline_a.txt"

# The same story and entries as an operator without root reads them: over
# the socket, as the view user, who may not open the log's file.
rc=0; $as_view head -c 1 "$(db a)" >/dev/null 2>&1 || rc=$?
check "the view user cannot read a's audit log file (what ctl timeline and ctl audit stand in for)" \
	[ "$rc" != 0 ]
rc=0; ctl_as view a timeline >"$work/ctl_timeline_a.txt" 2>"$work/ctl_timeline_a.err" || rc=$?
"$airlock" audit timeline "$(db a)" >"$work/timeline_a2.txt" 2>&1
check "ctl timeline as the view user: exit 0, the lines root's audit timeline of the file prints, the restore's among them" \
	bash -c '[ "$1" = 0 ] && [ -s "$2" ] && [ "$(cat "$2")" = "$(head -n "$(wc -l <"$2")" "$3")" ] &&
		grep -qE " policy restore store r[0-9]+ by airlock-drill-op .*: 2 applied" "$2"' \
	_ "$rc" "$work/ctl_timeline_a.txt" "$work/timeline_a2.txt"
rc=0; timeout 3 $as_view "$bin" ctl --socket "$work/a.sock" audit --follow \
	>"$work/ctl_audit_a.txt" 2>"$work/ctl_audit_a.err" || rc=$?
"$airlock" audit tail "$(db a)" --since 1d >"$work/tail_a2.txt" 2>&1
check "ctl audit --follow as the view user: the newest 64 entries, then each new one, no seq skipped, each line as root's audit tail of the file prints it" \
	python3 - "$rc" "$work/ctl_audit_a.txt" "$work/tail_a2.txt" <<'PY'
import sys
rc, got, tail = int(sys.argv[1]), open(sys.argv[2]).read().splitlines(), open(sys.argv[3]).read().splitlines()
assert rc == 124, rc  # still following when timeout stopped it
assert len(got) > 64, len(got)  # the sessions loop: entries came while it followed
seqs = [int(l.split()[0]) for l in got]
assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
assert set(got) <= set(tail), set(got) - set(tail)
PY

# a stopped as an operator would: every session ended, none left unended.
kill -TERM "$pid_a"
rc=0; wait "$pid_a" || rc=$?
check "engine a exits 0 on SIGTERM" [ "$rc" = 0 ]
check "…leaving none of its containers" bash -c '[ -z "$1$2" ]' _ "$(container_of "$n1")" "$(container_of "$n2")"
"$airlock" audit verify "$(db a)" >"$work/verify_a2.txt" 2>&1
check "audit verify of a: chain ok, no session left unended" \
	bash -c 'grep -qE "^audit .*: [0-9]+ entries, chain ok$" "$1" && ! grep -q "never ended" "$1"' _ "$work/verify_a2.txt"

# 5. The canary: in the permitted sink, nowhere else.
check "the canary reached a permitted sink (positive control)" grep -qF "$canary" "$work/b1/vault.sink"
for e in a b; do "$airlock" audit tail "$(db "$e")" --json --since 1d >"$work/tail-$e.json" 2>&1; done
# The search below has a subject: each tail lists an allowed call of each
# session its engine ran from the start (their request hashes), whatever the
# machine's speed made of their number.
check "the audit tails list entries: an allowed call of each session, with its request hash" \
	python3 - "$work/tail-a.json" "$work/tail-b.json" $ids_a $ids_b <<'PY'
import json, sys
a, b, ids = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = [json.loads(l) for f in (a, b) for l in open(f)]
called = {r["session"] for r in rows
          if r["type"] == "call" and r["decision"] == "allowed" and len(r["request_hash"]) >= 8}
assert len(ids) == 4 and set(ids) <= called, (ids, called)
PY
outputs=("$work"/shot-*.screen "$work"/*.log "$work"/*.out "$work"/*.err "$work"/*.json "$work"/*.txt
	"$work"/*/state/airlock/audit.db*)
check "the canary is in none of ${#outputs[@]} files: screens, engine logs, ctl output, audit tails, the audit databases" \
	bash -c '! grep -alF -- "$1" "${@:2}"' _ "$canary" "${outputs[@]}"

# 6. Everything taken down, then checked gone.
engines="$pid_a $pid_b ${helpers[*]}" tmp=$work
teardown
left=$(for p in $engines; do "$DOCKER" ps -aq --filter label=io.airlock.managed=1 --filter "label=io.airlock.owner-pid=$p"; done)
check "after the teardown: no container of the drill's engines" [ -z "$left" ]
check "…none of its sessions' containers" bash -c 'for s; do [ -z "$(docker ps -aq --filter "label=io.airlock.session=$s")" ] || exit 1; done' \
	_ "$a1" "$a2" "$b1" "$b2" "$n1" "$n2"
check "…no engine process" bash -c 'for p; do ! kill -0 "$p" 2>/dev/null || exit 1; done' _ $engines
check "…no tmux server, nor its socket file" bash -c 'for s in op view; do
	! tmux -L "$1-$s" has-session 2>/dev/null && [ ! -e "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$1-$s" ] || exit 1; done' _ "$tmux_sock"
check "…its temporary directory removed" [ ! -e "$tmp" ]
check "…the users it made removed" bash -c 'for u; do ! getent passwd "$u" >/dev/null || exit 1; done' _ "${made_users[@]}"
summary
