#!/usr/bin/env bash
# `airlock serve` and `airlock ctl` with real parts: two sessions of the
# looping agent fixture against the fixture upstream, started from configs;
# clients as root, as a view-group member, an operate-group member and a
# uid in neither group (setpriv), with no ACL, again after a restart; the
# kill switch (freeze, thaw) and the audit's authors; bad
# frames and a client that never reads; a second engine on the socket;
# SIGTERM; SIGKILL with live sessions (the watchdogs stop them) and a new
# engine on the stale socket. A canary in the payload must appear in no
# captured output: ctl stdout, serve stderr, metrics, raw socket frames.
#
# usage: serve.sh AIRLOCK AGENT_BIN UPSTREAM_BIN
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1 agent=$2 upstream=$3
scratch_dir
chmod 0755 "$work"	# the setpriv clients must reach the socket in it
. "$here/../checks.sh"
client=$here/serve_client.py
sock=$work/engine.sock
# The engines are among the helpers: their containers are this suite's.
owner_pids() { printf '%s\n' "${helpers[@]}"; }

# --- the groups: made here when missing, removed after ----------------------
made_groups=()
group_gid() { getent group "$1" | cut -d: -f3; }
on_teardown() {
	local g
	for g in "${made_groups[@]}"; do groupdel "$g" 2>/dev/null; done
}
for g in airlock airlock-view; do
	if [ -z "$(group_gid "$g")" ]; then
		groupadd "$g" && made_groups+=("$g")
	fi
done
og=$(group_gid airlock) vg=$(group_gid airlock-view)

# --- the image, the payload, the configs --------------------------------------
image=$(scratch_image "$work/image" "$agent") || { not_ok "agent image build"; summary; exit 1; }
canary="CANARY-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '{"canary":"%s"}\n' "$canary" >"$work/payload.in"

for c in a b c d; do loop_config "$c"; done

ctl() { "$airlock" ctl --socket "$sock" "$@"; }
size() { stat -c %s "$1" 2>/dev/null || echo 0; }
json_get() {	# FILE PYTHON-EXPRESSION-OF-d
	python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print(eval(sys.argv[2]))' "$@"
}

# serve LOG [ARGS...]: an engine in the background; sets engine. Waits for its socket.
serve() {
	local log=$1
	shift
	"$airlock" serve --socket "$sock" --audit "$work/audit.db" "$@" 2>"$work/$log" </dev/null &
	engine=$!
	helpers+=("$engine")
	serve_ready "$work/$log" "$engine"
}

# Until N sessions run and each sink in the list has grown (60 s at most).
running_sessions() { ctl sessions --json 2>/dev/null | python3 -c '
import json,sys; print(sum(1 for s in json.load(sys.stdin)["snapshot"]["sessions"] if s["state"] == "running"))'; }
wait_running() {
	local n=$1 i
	shift
	for i in $(seq 600); do
		if [ "$(running_sessions)" = "$n" ]; then
			local f all=1
			for f in "$@"; do [ -s "$f" ] || all=0; done
			[ $all = 1 ] && return 0
		fi
		sleep 0.1
	done
	return 1
}

# ============================================================================
# Without a running engine and its sessions nothing after this means anything.
fatal() { cat "$work/serve1.err" >&2; summary; exit 1; }
check "serve starts with two configs" serve serve1.err --config "$work/a/config.json" --config "$work/b/config.json" || fatal
engine1=$engine
check "both sessions run and call the upstream" wait_running 2 "$work/a/vault.sink" "$work/b/vault.sink" || fatal
check "the socket is 0666: the engine is the gate" [ "$(stat -c %a "$sock")" = 666 ]
check "serve logged both session starts" [ "$(grep -c 'session .* started (config ' "$work/serve1.err")" = 2 ]
check "readiness line names the socket" grep -qF "listening on $sock" "$work/serve1.err"

ctl status >"$work/status.out"
check "ctl status: exit 0, role operate" grep -q 'role operate' "$work/status.out"
ctl sessions --json >"$work/sessions.json"
check "ctl sessions --json lists the two sessions" [ "$(json_get "$work/sessions.json" 'len(d["snapshot"]["sessions"])')" = 2 ]
ids=$(json_get "$work/sessions.json" '" ".join(s["id"] for s in d["snapshot"]["sessions"])')
echo "   sessions: $ids"
ctl sessions >"$work/sessions.out"
check "ctl sessions (text) names both" bash -c 'for i in $1; do grep -q "^$i " "$2" || exit 1; done' _ "$ids" "$work/sessions.out"

# --- revoke on all: every session acknowledges; the sinks see nothing new -----
rc=0; ctl revoke store --all --json >"$work/revoke.json" || rc=$?
check "ctl revoke store --all: exit 0" [ "$rc" = 0 ]
check "revoke: acknowledged by both sessions, none pending" \
	[ "$(json_get "$work/revoke.json" '(len(d["acks"]), len(d["pending"]), sorted(a["result"] for a in d["acks"]))')" = "(2, 0, ['applied', 'applied'])" ]
sa=$(size "$work/a/vault.sink") sb=$(size "$work/b/vault.sink")
sleep 2	# the agents call every 0.2 s
check "after the ack, sink a saw nothing new (2 s of agent calls)" [ "$(size "$work/a/vault.sink")" = "$sa" ]
check "after the ack, sink b saw nothing new" [ "$(size "$work/b/vault.sink")" = "$sb" ]
ctl tools >"$work/tools.out"
check "ctl tools: store revoked on both" [ "$(grep -c ' store .* revoked$' "$work/tools.out")" = 2 ]
ctl sessions --json >"$work/denied.json"
check "the agents' calls are denied meanwhile" \
	[ "$(json_get "$work/denied.json" 'min(s["counters"]["denied"] for s in d["snapshot"]["sessions"]) > 0')" = True ]

rc=0; ctl restore store --all --json >"$work/restore.json" || rc=$?
check "ctl restore store --all: exit 0, two acks" \
	[ "$rc:$(json_get "$work/restore.json" 'len(d["acks"])')" = "0:2" ]
grows() { local i; for i in $(seq 100); do [ "$(size "$1")" -gt "$2" ] && return 0; sleep 0.1; done; return 1; }
check "after restore, sink a grows again" grows "$work/a/vault.sink" "$sa"
check "after restore, sink b grows again" grows "$work/b/vault.sink" "$sb"
first=${ids%% *}
rc=0; ctl revoke store --session "$first" --wait 3000 >"$work/revoke1.out" || rc=$?
check "ctl revoke --session: exit 0, one ack" bash -c '[ "$1" = 0 ] && grep -q "1 of 1 sessions acknowledged" "$2"' _ "$rc" "$work/revoke1.out"
ctl restore store --session "$first" >/dev/null
ctl events --json >"$work/events.jsonl"
check "ctl events --json: NDJSON with the cutover acks" \
	[ "$(grep -c '"kind":"cutover_ack"' "$work/events.jsonl")" -ge 6 ]
ctl events >"$work/events.out"
check "ctl events: a line each, read as declared (an ack names its session, tool and result)" \
	bash -c '[ "$(grep -cE "^ *[0-9]+ cutover_ack +s-[0-9a-f]+ +store applied$" "$1")" -ge 6 ] &&
		grep -qE "^ *[0-9]+ state +s-[0-9a-f]+ +running$" "$1" && ! grep -q "cannot read" "$1"' _ "$work/events.out"
# --- pushed snapshots as deltas: the same snapshots, fewer bytes --------------
python3 "$client" deltas "$sock" 4 "$work/deltas.frames" >"$work/deltas.json"
cat "$work/deltas.json"
check "the hello offers snapshot deltas" [ "$(json_get "$work/deltas.json" 'd["hello_offers"]')" = True ]
check "deltas applied by the client equal the whole snapshots of the same pushes (4 or more, none differ or refused)" \
	[ "$(json_get "$work/deltas.json" 'd["matched"] >= 4 and d["mismatched"] == 0 and d["refused"] == 0')" = True ]
check "a delta is under half a whole snapshot's bytes (two looping sessions)" \
	[ "$(json_get "$work/deltas.json" 'd["delta_bytes"] / d["deltas"] * 2 < d["whole_bytes"] / d["pushes_seen"]')" = True ]
rc=0; ctl stop no-such-session 2>"$work/stop.err" || rc=$?
check "ctl stop of an unknown session: exit 1, 'no such session'" bash -c '[ "$1" = 1 ] && grep -q "no such session" "$2"' _ "$rc" "$work/stop.err"
says() {	# RC FILE TEXT: exit 1, and FILE is that one line word for word
	[ "$1" = 1 ] && [ "$(cat "$2")" = "$3" ]
}
check "…and says the id names nothing" says "$rc" "$work/stop.err" \
	"airlock ctl: stop: no such session: no session id starts with 'no-such-session'"
# Sessions by any unique prefix, as the console shows them (8 hex digits, no s-).
short=${first#s-}; short=${short:0:8}
rc=0; ctl revoke store --session "$short" --wait 3000 >"$work/revoke_short.out" || rc=$?
check "ctl revoke --session $short (the console's form): exit 0, one ack" \
	bash -c '[ "$1" = 0 ] && grep -q "1 of 1 sessions acknowledged" "$2" && grep -q "^  $3 " "$2"' \
	_ "$rc" "$work/revoke_short.out" "$first"
ctl restore store --session "s-${short:0:6}" >/dev/null
rc=0; ctl stop s- 2>"$work/stop_ambiguous.err" || rc=$?
check "ctl stop of a prefix both sessions have: refused, saying so" says "$rc" "$work/stop_ambiguous.err" \
	"airlock ctl: stop: no such session: ambiguous session id prefix 's-': 2 sessions match"
rc=0; ctl revoke store --session zz9 2>"$work/revoke_nosession.err" || rc=$?
check "ctl revoke --session of an unknown session: refused in the same words" \
	says "$rc" "$work/revoke_nosession.err" "airlock ctl: revoke: no such session: no session id starts with 'zz9'"
# A tool no config of the engine has: refused before any revision, the
# console's words (the engine's) word for word.
rev_before=$(ctl status | awk '$1 == "revision" { print $2 }')
rc=0; ctl revoke nosuchtool --all 2>"$work/revoke_unknown.err" || rc=$?
check "ctl revoke nosuchtool --all: refused, the tool named" says "$rc" "$work/revoke_unknown.err" \
	"airlock ctl: revoke: cutover refused: no config this engine holds has a tool 'nosuchtool'"
rc=0; ctl restore nosuchtool --session "$short" 2>"$work/restore_unknown.err" || rc=$?
check "ctl restore nosuchtool --session: refused alike" says "$rc" "$work/restore_unknown.err" \
	"airlock ctl: restore: cutover refused: no config this engine holds has a tool 'nosuchtool'"
check "the refusals bumped no revision (still $rev_before)" \
	[ "$(ctl status | awk '$1 == "revision" { print $2 }')" = "$rev_before" ]
ctl sessions --json >"$work/standing.json"
check "nosuchtool does not stand revoked for later sessions" \
	[ "$(json_get "$work/standing.json" '"nosuchtool" in d["snapshot"].get("standing", [])')" = False ]
rc=0; ctl revoke store >/dev/null 2>&1 || rc=$?
check "ctl revoke without --all or --session: usage error" [ "$rc" = 2 ]

ctl metrics >"$work/metrics.txt"
check "metrics: two running sessions" grep -qx 'airlock_sessions{state="running"} 2' "$work/metrics.txt"
check "metrics: allowed calls counted" grep -qE '^airlock_calls_total\{decision="allowed"\} [1-9]' "$work/metrics.txt"
check "metrics: six cutovers (none for the refused ones)" grep -qx 'airlock_cutovers_total 6' "$work/metrics.txt"
pushed() { awk -v f="$2" '$1 == "airlock_snapshots_pushed_total{form=\"" f "\"}" { print $2 }' "$1"; }
check "metrics count the deltas pushed (at least the subscriber's $(json_get "$work/deltas.json" 'd["deltas"]')) and the whole snapshots (at least both subscribers' firsts)" \
	bash -c '[ "$2" -ge "$1" ] && [ "$1" -ge 1 ] && [ "$3" -ge 2 ]' _ \
	"$(json_get "$work/deltas.json" 'd["deltas"]')" "$(pushed "$work/metrics.txt" delta)" "$(pushed "$work/metrics.txt" whole)"
check "metrics: RSS and # EOF" bash -c 'grep -qE "^airlock_engine_rss_bytes [1-9]" "$1" && [ "$(tail -n 1 "$1")" = "# EOF" ]' _ "$work/metrics.txt"

# --- each connection's lines parsed by its own parser ---------------------------
# An operate-group peer's (uid 65534): root's come from those kept ready.
python3 "$client" parser "$sock" "$work/parser.frames" 65534 "$og" >"$work/parser.json"
parse_uid=$(id -u airlock-parse 2>/dev/null || echo none)
check "an operate peer's first request started one airlock-parser of its own, as airlock-parse ($parse_uid)" \
	bash -c '[ "$1" = True ] && [ "$2" = 1 ] && [ "$3" = "[$4]" ]' _ \
	"$(json_get "$work/parser.json" 'd["first_ok"]')" "$(json_get "$work/parser.json" 'd["new_parsers"]')" \
	"$(json_get "$work/parser.json" 'd["uids"]')" "$parse_uid"
check "its parser killed: the next request refused 'parser failed', the connection closed" \
	bash -c '[ "$1" = "parser failed" ] && [ "$2" = True ]' _ \
	"$(json_get "$work/parser.json" 'd["after_kill"]')" "$(json_get "$work/parser.json" 'd["closed"]')"
check "the engine logged it and serves a new connection" \
	bash -c '[ "$1" = True ] && grep -q "parser failed, disconnected" "$2"' _ \
	"$(json_get "$work/parser.json" 'd["again_ok"]')" "$work/serve1.err"
python3 "$client" kept "$sock" "$work/kept.frames" >"$work/kept.json"
check "root's request: parsed by one of the parsers kept ready (none started), which is stopped after and another started in its place" \
	[ "$(json_get "$work/kept.json" '(d["ok"], d["started"], d["before"] >= 4, d["gone"], d["new_after"])')" = "(True, 0, True, 1, 1)" ]
check "both sessions still run" [ "$(running_sessions)" = 2 ]

# --- roles from the kernel -----------------------------------------------------
# No ACL, no chmod: what serve sets up lets both roles reach the socket, and
# the kernel's credentials decide. Run from a copy nobody can execute.
mkdir -p "$work/bin" && install -m 0755 "$airlock" "$work/bin/airlock"
nobody() { setpriv --reuid 65534 --regid 65534 "$@"; }
as_ctl() { local groups=$1; shift; nobody $groups "$work/bin/airlock" ctl --socket "$sock" "$@"; }
refusal="not allowed: uid 65534 is in neither 'airlock' (operate) nor 'airlock-view' (view)"
roles_reach() {	# TAG: a view uid, an operate uid and one in neither, as the kernel sees them
	local tag=$1 rc
	check "$tag: no ACL on the socket (file mode 0666, nothing else)" \
		bash -c '[ "$(stat -c %a "$1")" = 666 ] && ls -ld "$1" | grep -q "^srw-rw-rw- "' _ "$sock"
	rc=0; as_ctl "--groups $vg" status >"$work/$tag.view.out" 2>"$work/$tag.view.err" || rc=$?
	check "$tag: a view-group uid connects and gets role view" \
		bash -c '[ "$1" = 0 ] && grep -q "(uid 65534), role view" "$2"' _ "$rc" "$work/$tag.view.out"
	rc=0; as_ctl "--groups $og" status >"$work/$tag.op.out" 2>"$work/$tag.op.err" || rc=$?
	check "$tag: an operate-group uid connects and gets role operate" \
		bash -c '[ "$1" = 0 ] && grep -q "(uid 65534), role operate" "$2"' _ "$rc" "$work/$tag.op.out"
	rc=0; as_ctl --clear-groups status >"$work/$tag.none.out" 2>"$work/$tag.none.err" || rc=$?
	check "$tag: a uid in neither group is refused (exit 1), told both groups" \
		bash -c '[ "$1" = 1 ] && grep -qxF "airlock ctl: the engine refused this connection: $2" "$3"' \
		_ "$rc" "$refusal" "$work/$tag.none.err"
}
roles_reach first
check "serve logged the refusal with the same words" grep -qF "client refused: uid 65534 pid" "$work/serve1.err"
check "…naming both groups" grep -qF "$refusal" "$work/serve1.err"
: >"$work/plain.file"
rc=0; "$airlock" ctl --socket "$work/plain.file" status >/dev/null 2>"$work/plain.err" || rc=$?
check "a regular file as --socket: 'not a socket', not 'Connection refused'" \
	bash -c '[ "$1" != 0 ] && grep -qxF "airlock ctl: $2: not a socket" "$3"' _ "$rc" "$work/plain.file" "$work/plain.err"
rc=0; "$airlock" ctl --socket "$work/absent.sock" status >/dev/null 2>"$work/absent.err" || rc=$?
check "a missing --socket: 'does not exist'" \
	bash -c '[ "$1" != 0 ] && grep -qxF "airlock ctl: $2: does not exist" "$3"' _ "$rc" "$work/absent.sock" "$work/absent.err"
rc=0; as_ctl "--groups $vg" sessions --json >"$work/view.json" 2>"$work/view.err" || rc=$?
check "a view-group member reads the sessions" \
	[ "$rc:$(json_get "$work/view.json" 'len(d["snapshot"]["sessions"])' 2>/dev/null)" = "0:2" ]
rc=0; as_ctl "--groups $vg" revoke store --all 2>"$work/view_revoke.err" >/dev/null || rc=$?
check "a view-group member's revoke: exit 1, 'view only'" \
	bash -c '[ "$1" = 1 ] && grep -q "view only" "$2"' _ "$rc" "$work/view_revoke.err"
rc=0; as_ctl "--groups $vg" stop-all 2>/dev/null >/dev/null || rc=$?
check "a view-group member's stop-all: exit 1" [ "$rc" = 1 ]
check "the sessions still run after the view client's attempts" [ "$(running_sessions)" = 2 ]
rc=0; as_ctl "--groups $vg" freeze 2>"$work/view_freeze.err" >/dev/null || rc=$?
check "a view-group member's freeze: exit 1, 'view only'" \
	bash -c '[ "$1" = 1 ] && grep -q "freeze: view only" "$2"' _ "$rc" "$work/view_freeze.err"

# --- the audit names who asked, as the kernel says ---------------------------------
audit_q() { sqlite3 "file:$work/audit.db?mode=ro" "$1" 2>/dev/null; }
audit_has() {	# SQL-COUNT: until it is > 0 (the writer thread is asynchronous)
	local i
	for i in $(seq 50); do [ "$(audit_q "$1")" -gt 0 ] 2>/dev/null && return 0; sleep 0.1; done
	return 1
}
check "the refused peer left a policy entry 'rejected' naming uid 65534" audit_has \
	"select count(*) from audit_entries where type='policy' and decision='rejected'
	 and rule='peer refused: no role' and detail like '%\"uid\":65534%'"
check "the view client's freeze left a policy entry 'freeze refused: view only' naming uid 65534" audit_has \
	"select count(*) from audit_entries where type='policy' and decision='rejected'
	 and rule='freeze refused: view only' and detail like '%\"uid\":65534%'"
me=$(id -un) myuid=$(id -u)
check "the revokes' policy entries name the ctl's user and uid" audit_has \
	"select count(*) from audit_entries where type='policy' and rule like 'revoke%'
	 and detail like '%\"by\":\"$me\",\"uid\":$myuid,\"via\":\"ctl\"%'"

# --- a view peer cannot crowd the operators out -------------------------------------
install -m 0755 "$client" "$work/bin/serve_client.py"
install -m 0666 /dev/null "$work/pester.frames"	# uid 65534 writes it (below)
hog() {	# GROUP NAME: a uid of GROUP asks for 64 connections and holds what it got
	# until hog_release; $work/NAME.json says how many were admitted and refused
	rm -f "$work/hog.go" && install -m 0666 /dev/null "$work/$2.frames"
	nobody --groups "$1" /usr/bin/python3 "$work/bin/serve_client.py" hog "$sock" 64 "$work/hog.go" \
		"$work/$2.frames" >"$work/$2.json" 2>"$work/$2.err" &
	hog_pid=$!
	for _ in $(seq 100); do [ -s "$work/$2.json" ] && break; sleep 0.1; done
}
hog_release() { touch "$work/hog.go"; wait "$hog_pid"; }

# 64 connections held by a view uid: it gets 48, the rest stay for operate.
hog "$vg" hog
check "a view uid asking for 64 connections holds 48; 16 refused 'too many clients'" \
	[ "$(json_get "$work/hog.json" '(d["admitted"], d["refused"] == ["too many clients"] * 16)')" = "(48, True)" ]
rc=0; ctl status >/dev/null 2>&1 || rc=$?
check "…while it holds them, root's ctl still connects" [ "$rc" = 0 ]
rc=0; as_ctl "--groups $og" status >"$work/hog_op.out" 2>&1 || rc=$?
check "…and so does an operate-group uid" \
	bash -c '[ "$1" = 0 ] && grep -q "role operate" "$2"' _ "$rc" "$work/hog_op.out"
hog_release
# …nor an operate-group uid root: it gets 60, the last 4 stay for root and
# the engine's uid (it got all 64 before, and root's freeze was refused).
hog "$og" hogop
check "an operate-group uid asking for 64 connections holds 60; 4 refused 'too many clients'" \
	[ "$(json_get "$work/hogop.json" '(d["admitted"], d["refused"] == ["too many clients"] * 4)')" = "(60, True)" ]
rc=0; ctl status >/dev/null 2>&1 || rc=$?
check "…while it holds them, root's ctl still connects" [ "$rc" = 0 ]
hog_release

# A view uid may have the host checks run again, but not with a runtime of
# its choosing: that one would be every console's (a false FAIL).
host_rt() {	# RUNTIME [SETPRIV-ARGS]: a host refresh with RUNTIME, then the runtime a plain one reports
	local rt=$1; shift
	"$@" /usr/bin/python3 -c 'import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rwb")
f.readline()
for i, req in enumerate(({"op": "host", "refresh": True, "runtime": sys.argv[2]}, {"op": "host"}), 1):
    req["id"] = i; f.write((json.dumps(req) + "\n").encode()); f.flush()
    reply = json.loads(f.readline())
print(reply["host"]["runtime"])' "$sock" "$rt"
}
check "a view uid's host refresh naming runtime bogus-rt: the engine's runtime stays" \
	bash -c '[ "$1" != bogus-rt ] && [ -n "$1" ]' _ "$(host_rt bogus-rt nobody --groups "$vg")"
# 2000 freezes a view uid asks for: refused, audited 32 a minute, counted; the
# operators' changes meanwhile are not held up behind the log ('engine busy').
view_rows() { audit_q "select count(*) from audit_entries where type='policy' and
	rule='freeze refused: view only' and detail like '%\"uid\":65534%'"; }
before=$(view_rows)
nobody --groups "$vg" /usr/bin/python3 "$work/bin/serve_client.py" pester "$sock" 2000 \
	"$work/pester.frames" >"$work/pester.json" 2>"$work/pester.err" &
pester=$!
rc=0; ctl revoke store --all >/dev/null 2>"$work/pester_revoke.err" || rc=$?
rc2=0; ctl restore store --all >/dev/null 2>>"$work/pester_revoke.err" || rc2=$?
wait "$pester"
check "a view uid's 2000 freezes: every one refused 'view only'" \
	[ "$(json_get "$work/pester.json" '(d["sent"], d["refused"])')" = "(2000, 2000)" ]
check "…root's revoke and restore meanwhile: exit 0, not 'engine busy'" \
	bash -c '[ "$1:$2" = 0:0 ] && ! grep -q busy "$3"' _ "$rc" "$rc2" "$work/pester_revoke.err"
sleep 1	# the writer is asynchronous
check "…at most 32 of them audited a minute (64: the run may span two)" \
	bash -c 'n=$(( $2 - $1 )); [ "$n" -ge 1 ] && [ "$n" -le 64 ]' _ "$before" "$(view_rows)"
check "…the log says the rest are counted" \
	grep -q "more than 32 view-only changes refused this minute: counted" "$work/serve1.err"
check "…and the metrics count every one" bash -c '"$1" ctl --socket "$2" metrics |
	awk "/^airlock_view_changes_refused_total /{exit !(\$2 >= 2000)}"' _ "$airlock" "$sock"

# --- the kill switch: every call denied 'frozen', acknowledged by every session -------
check "not frozen before: metrics say 0" bash -c '"$1" ctl --socket "$2" metrics | grep -qx "airlock_frozen 0"' _ "$airlock" "$sock"
rc=0; ctl freeze --json >"$work/freeze.json" || rc=$?
check "ctl freeze --json: exit 0, acknowledged by both sessions, none pending" \
	[ "$rc:$(json_get "$work/freeze.json" '(len(d["acks"]), len(d["pending"]), sorted(a["result"] for a in d["acks"]))')" = "0:(2, 0, ['applied', 'applied'])" ]
frev=$(json_get "$work/freeze.json" 'd["revision"]')
sa=$(size "$work/a/vault.sink") sb=$(size "$work/b/vault.sink")
sleep 2	# the agents call every 0.2 s
check "frozen: sink a saw nothing new (2 s of agent calls)" [ "$(size "$work/a/vault.sink")" = "$sa" ]
check "frozen: sink b saw nothing new" [ "$(size "$work/b/vault.sink")" = "$sb" ]
check "frozen: the audit has call entries with rule 'frozen'" audit_has \
	"select count(*) from audit_entries where type='call' and decision='denied' and rule='frozen'"
check "the freeze's policy entries name the ctl's user and uid" audit_has \
	"select count(*) from audit_entries where type='policy' and revision=$frev
	 and detail like '%\"by\":\"$me\",\"uid\":$myuid,%'"
ctl status >"$work/status_frozen.out"
check "ctl status says frozen, and by whom" grep -q "^frozen   yes, by $me (uid $myuid, ctl), revision $frev" "$work/status_frozen.out"
ctl sessions --json >"$work/frozen.json"
check "ctl sessions --json: the engine and every session frozen" \
	[ "$(json_get "$work/frozen.json" 'd["snapshot"]["frozen"] and d["snapshot"]["frozen_by"]["uid"] == '"$myuid"' and all(s["frozen"] for s in d["snapshot"]["sessions"])')" = True ]
check "metrics: airlock_frozen 1" bash -c '"$1" ctl --socket "$2" metrics | grep -qx "airlock_frozen 1"' _ "$airlock" "$sock"
rc=0; ctl freeze >/dev/null 2>"$work/freeze2.err" || rc=$?
check "a second freeze: exit 1 with the engine's reason" \
	bash -c '[ "$1" = 1 ] && grep -q "freeze: cutover refused: freeze: the engine is frozen already" "$2"' _ "$rc" "$work/freeze2.err"
check "the refused freeze left a policy entry 'freeze refused'" audit_has \
	"select count(*) from audit_entries where type='policy' and decision='rejected' and rule='freeze refused'"
rc=0; ctl thaw --json >"$work/thaw.json" || rc=$?
check "ctl thaw --json: exit 0, two acks" [ "$rc:$(json_get "$work/thaw.json" 'len(d["acks"])')" = "0:2" ]
check "after thaw, sink a grows again" grows "$work/a/vault.sink" "$sa"
check "after thaw, sink b grows again" grows "$work/b/vault.sink" "$sb"
ctl status >"$work/status_thawed.out"
check "ctl status: no longer frozen" grep -qx "frozen   no" "$work/status_thawed.out"
rc=0; ctl thaw >/dev/null 2>"$work/thaw2.err" || rc=$?
check "a thaw of an engine not frozen: exit 1 with the reason" \
	bash -c '[ "$1" = 1 ] && grep -q "the engine is not frozen" "$2"' _ "$rc" "$work/thaw2.err"

# --- bad frames; a client that never reads ------------------------------------
python3 "$client" bad "$sock" "$canary" "$work/bad.frames" >"$work/bad.json"
bad_is() { [ "$(json_get "$work/bad.json" "d[\"$1\"]")" = "$2" ]; }
check "oversized line: 'frame too long', then closed" bad_is oversized "['frame too long']"
check "not JSON: 'not json'" bad_is not_json "['not json']"
check "unknown op: 'unknown op' with its id" bad_is unknown_op "[[7, 'unknown op']]"
check "a session id that is not a word: 'bad argument'" bad_is bad_session "[[8, 'bad argument']]"
check "duplicate key: 'duplicate key'" bad_is duplicate "['duplicate key']"
check "invalid UTF-8: 'invalid utf-8'" bad_is bad_utf8 "['invalid utf-8']"
check "a line cut off at EOF: 'truncated frame'" bad_is truncated "['truncated frame']"

python3 "$client" slow "$sock" "$work/go" "$work/slow.frames" >"$work/slow.json" &
slow=$!
helpers+=("$slow")
sleep 1
t0=$(date +%s%N)
python3 "$client" flood "$sock" 1200 "$work/flood.frames" >"$work/flood.json"
t1=$(date +%s%N)
echo "   measured: 1200 cutovers over one connection in $(( (t1 - t0) / 1000000 )) ms"
cat "$work/flood.json"
check "the flood's 1200 requests all got their reply: done, or 'engine busy' while the audit writer catches up" \
	[ "$(json_get "$work/flood.json" 'd["replies"] == d["ok"] + d["busy"] == 1200 and d["ok"] > 0')" = True ]
rc=0; timeout 5 "$airlock" ctl --socket "$sock" status >/dev/null 2>&1 || rc=$?
check "while a client reads nothing, the engine answers another at once" [ "$rc" = 0 ]
touch "$work/go"
sleep 1
ctl restore store --all --wait 0 >/dev/null	# one more event: the frame that carries the gap
wait "$slow"
check "the slow client's frames were dropped and counted (a gap), or it was disconnected" \
	[ "$(json_get "$work/slow.json" 'd["gap"] > 0 or d["closed"]')" = True ]
cat "$work/slow.json"
# Every reader of pushed snapshots has left: the engine sleeps in poll. (A push
# that fell due as its last reader left once kept it polling with a zero
# timeout: ~90% of a core.)
python3 "$client" leave "$sock" "$work/leave.frames" >"$work/leave.json"
check "a subscriber took a snapshot, made a change and left" \
	[ "$(json_get "$work/leave.json" 'd["frames"] > 0')" = True ]
sleep 0.5
ticks() { awk '{ print $14 + $15 }' "/proc/$engine1/stat"; }
k0=$(ticks); sleep 3; k1=$(ticks)
echo "   measured: the engine used $(( (k1 - k0) * 100 / $(getconf CLK_TCK) / 3 ))% of a core over 3 s with no console"
check "with no subscriber left, the engine does not spin (< 30% of a core over 3 s)" \
	[ $(( (k1 - k0) * 100 / $(getconf CLK_TCK) )) -lt 90 ]
ctl metrics >"$work/metrics2.txt"
check "metrics count the dropped frames" grep -qE '^airlock_frames_dropped_total [1-9]' "$work/metrics2.txt"
check "metrics count the bytes sent to clients (more than the flood's replies)" \
	[ "$(awk '/^airlock_control_bytes_sent_total / { print $2 }' "$work/metrics2.txt")" -gt "$(stat -c %s "$work/flood.frames")" ]
check "both sessions still run" [ "$(running_sessions)" = 2 ]
check "the audit log refused nothing" grep -qx 'airlock_audit_failures_total 0' "$work/metrics2.txt"

# --- a second engine on the socket: refused --------------------------------------
rc=0; "$airlock" serve --socket "$sock" --audit "$work/audit2.db" 2>"$work/second.err" </dev/null || rc=$?
check "a second serve on the live socket: exit 3" \
	bash -c '[ "$1" = 3 ] && grep -q "another engine answers on" "$2"' _ "$rc" "$work/second.err"
ln -s "$sock" "$work/link.sock"
rc=0; "$airlock" serve --socket "$work/link.sock" --audit "$work/audit2.db" 2>"$work/link.err" </dev/null || rc=$?
check "serve on a symlinked socket path: exit 3, 'is a symlink'" \
	bash -c '[ "$1" = 3 ] && grep -q "is a symlink" "$2"' _ "$rc" "$work/link.err"

# --- SIGHUP, then SIGTERM: every session stopped, nothing left ---------------------
kill -HUP "$engine1"
sleep 0.5
check "SIGHUP logs a status line" grep -q "status: 2 sessions (2 live)" "$work/serve1.err"
kill -TERM "$engine1"
rc=0; wait "$engine1" || rc=$?
check "SIGTERM: serve exits 0" [ "$rc" = 0 ] || tail -n 5 "$work/serve1.err"
check "SIGTERM: 0 containers of that engine left" \
	[ -z "$("$DOCKER" ps -aq --filter label=io.airlock.managed=1 --filter "label=io.airlock.owner-pid=$engine1")" ]
check "SIGTERM: it said so" grep -q "stopped; 0 containers left" "$work/serve1.err"
check "SIGTERM: the socket file is gone" [ ! -e "$sock" ]

# --- SIGKILL with live sessions: the watchdogs stop them; a new engine starts --------
check "a new serve with two sessions" serve serve2.err --config "$work/c/config.json" --config "$work/d/config.json"
engine2=$engine
check "its sessions run" wait_running 2 "$work/c/vault.sink" "$work/d/vault.sink"
ids2=$(ctl sessions --json | python3 -c 'import json,sys; print(" ".join(s["id"] for s in json.load(sys.stdin)["snapshot"]["sessions"]))')
# What stands on every session outlives the engine: revoked, a flow held, frozen.
rc=0
ctl revoke store --all >/dev/null || rc=$?
ctl hold --flow 'confidential>public' --all >/dev/null || rc=$?
ctl freeze >/dev/null || rc=$?
check "before the SIGKILL: store revoked, confidential>public held, the engine frozen (exit 0 each)" [ "$rc" = 0 ]
kill -KILL "$engine2"
wait "$engine2" 2>/dev/null
all_stopped() { local s; for s in $ids2; do session_stopped "$s" || return 1; done; }
t0=$(date +%s%N)
for _ in $(seq 300); do all_stopped && break; sleep 0.1; done
t1=$(date +%s%N)
check "SIGKILL: the watchdogs stopped both containers" all_stopped
echo "   measured: serve SIGKILL -> containers stopped in $(( (t1 - t0) / 1000000 )) ms"
check "SIGKILL left a stale socket" [ -S "$sock" ]
# With no engine running, audit verify tells what the next one takes up.
check "audit verify with the engine down: 'standing at entry N (revision R): standing: 1 revoked, 1 flows, frozen'" \
	bash -c '"$1" audit verify "$2" | grep -qE "^audit $2: standing at entry [1-9][0-9]* \(revision [1-9][0-9]*\): standing: 1 revoked, 1 flows, frozen$"' \
	_ "$airlock" "$work/audit.db"
# One container goes another way before the next engine starts (`docker rm`,
# `airlock reap`, another engine's reaper): its session still gets its end,
# which its start's owner tells (the old engine waited for a reap of its own).
s_rm=$(awk '{ print $2 }' <<<"$ids2")
c_rm=$("$DOCKER" ps -aq --filter label=io.airlock.managed=1 --filter "label=io.airlock.session=$s_rm")
check "the second session's container removed by hand before the next engine" \
	bash -c '[ -n "$1" ] && [ -n "$2" ] && "$3" rm -f "$2" >/dev/null' _ "$s_rm" "$c_rm" "$DOCKER"
check "a new serve starts on the stale socket" serve serve3.err
engine3=$engine
check "and answers" bash -c '"$1" ctl --socket "$2" status >/dev/null' _ "$airlock" "$sock"
ctl sessions --json >"$work/standing.json"
check "the new engine starts with what stood: store revoked, the flow held, frozen, each by its author" \
	python3 -c '
import json, pwd, os, sys
d = json.load(open(sys.argv[1]))["snapshot"]
me = pwd.getpwuid(os.getuid()).pw_name
sys.exit(0 if d["standing"] == ["store"] and d["standing_flows"] == ["confidential>public"]
         and d["frozen"] and d["frozen_by"]["by"] == me and d["frozen_by"]["via"] == "ctl"
         and d["standing_by"][0]["by"] == me else 1)' "$work/standing.json"
check "…and says so as it starts" grep -qE \
	'^airlock serve: standing from the audit log \(revision [1-9][0-9]*\): revoked 1, held 0, flows held 1, frozen$' \
	"$work/serve3.err"
check "…as the killed engine's last saved entry told it: 'standing: 1 revoked, 1 flows, frozen'" \
	[ "$(sqlite3 "$work/audit.db" "select rule from audit_entries where session_id = 'engine'
		and type = 'policy' and rule like 'standing:%' order by seq desc limit 1")" = "standing: 1 revoked, 1 flows, frozen" ]
ctl status >"$work/standing_status.out"
check "…and ctl status lists them" bash -c 'grep -qx "revoked  on every session: store" "$1" &&
	grep -qx "held     none" "$1" && grep -qx "flows    held confidential>public" "$1" &&
	grep -q "^frozen   yes, by " "$1"' _ "$work/standing_status.out"
check "…its log says it restored them, once" \
	[ "$(sqlite3 "$work/audit.db" "select count(*) from audit_entries where session_id = 'engine'
		and type = 'policy' and rule = 'standing restored' and detail like '%\"revoked\":[{%\"tool\":\"store\"%'
		and detail like '%\"frozen\":{%'")" = 1 ]
check "…and audit verify tells that entry by what stands, not 'standing restored'" \
	bash -c '"$1" audit verify "$2" | grep -qE "^audit $2: standing at entry [1-9][0-9]* \(revision [1-9][0-9]*\): standing: 1 revoked, 1 flows, frozen$" &&
	[ "$(sqlite3 "$2" "select max(seq) from audit_entries where session_id = '"'engine'"' and rule like '"'standing%'"'")" = \
	  "$(sqlite3 "$2" "select max(seq) from audit_entries where rule = '"'standing restored'"'")" ]' _ "$airlock" "$work/audit.db"
roles_reach restarted
gone2() { [ -z "$("$DOCKER" ps -aq --filter label=io.airlock.managed=1 --filter "label=io.airlock.owner-pid=$engine2")" ]; }
for _ in $(seq 100); do gone2 && break; sleep 0.1; done
check "the killed engine's containers are gone (reaped at start)" gone2
# The audit loses no session end: each session of the killed engine ends in
# the new engine's log, abnormal, engine_lost; each container's reap is there.
ended_lost() {	# SESSION REAPS: its session_end by the new engine, and REAPS of its containers
	[ "$(sqlite3 "$work/audit.db" "select count(*) from audit_entries where session_id = '$1'
		and type = 'session_end' and decision = 'abnormal' and rule = 'engine_lost'")" = 1 ] &&
	[ "$(sqlite3 "$work/audit.db" "select count(*) from audit_entries where session_id = '$1'
		and type = 'reap' and decision = 'reaped' and rule = 'owner_gone'")" "$2" 1 ]
}
check "the killed engine had two sessions ($ids2)" [ "$(wc -w <<<"$ids2")" = 2 ]
s_kept=$(awk '{ print $1 }' <<<"$ids2")
check "the killed engine's session $s_kept: ended engine_lost, its container's reap audited" \
	ended_lost "$s_kept" -ge
check "the killed engine's session $s_rm, its container removed by hand: ended engine_lost all the same" \
	ended_lost "$s_rm" -lt
check "audit verify: the chain holds, and no session is left without an end" \
	bash -c '"$1" audit verify "$2" >"$3" && ! grep -q "never ended" "$3"' _ "$airlock" "$work/audit.db" "$work/verify3.txt"
check "the new serve counted the killed engine's containers as orphans, reaped" \
	grep -qE '^airlock serve: [0-9]+ airlock containers? at start: [1-9][0-9]* orphans of gone engines \([1-9][0-9]* reaped, 0 failed\), [0-9]+ of live engines left alone$' "$work/serve3.err"

# --- a second engine beside a live one: a bad config touches nothing; a good one
# counts the live engine's container apart from orphans, and leaves it alone ----
sid3=$(ctl start "$work/c/config.json" 2>"$work/start3.err" | awk '{ print $NF }')
check "the third serve runs a session" wait_running 1
denied3() {	# RULE: a call of sid3 denied by it
	[ "$(sqlite3 "$work/audit.db" "select count(*) from audit_entries where session_id = '$sid3'
		and type = 'call' and decision = 'denied' and rule = '$1'")" -gt 0 ]
}
until3() { local i; for i in $(seq 300); do "$@" && return 0; sleep 0.1; done; return 1; }
check "its calls are denied frozen: the freeze of the killed engine holds" until3 denied3 frozen
sink3=$(size "$work/c/vault.sink")
ctl thaw >/dev/null
check "thawed, its calls are denied revoked: the revoke of the killed engine holds" until3 denied3 revoked
check "…and its sink saw nothing" [ "$(size "$work/c/vault.sink")" = "$sink3" ]
ctl restore store --all >/dev/null
ctl restore --flow 'confidential>public' --all >/dev/null
check "store restored on every session: its sink grows again" grows "$work/c/vault.sink" "$sink3"
box3() { "$DOCKER" ps -q --filter label=io.airlock.managed=1 --filter "label=io.airlock.owner-pid=$engine3"; }
check "its container runs" [ -n "$(box3)" ]
# A session whose image is gone: its line in ctl sessions says how it ended and the daemon's words.
sed "s/\"image\": \"[^\"]*\"/\"image\": \"sha256:$(printf '%064d' 1)\"/" "$work/c/config.json" \
	>"$work/missing.json"
sid_missing=$(ctl start "$work/missing.json" 2>"$work/start_missing.err" | awk '{ print $NF }')
ended_line() {
	[ -n "$sid_missing" ] && ctl sessions | grep -F "$sid_missing" |
		grep -qE " ended +.*  container_failed: create: docker: .*No such image"
}
check "ctl sessions: a session whose image is gone ends its line 'container_failed: create: docker: … No such image'" \
	until3 ended_line
check "…and serve's log says the same of its end" until3 grep -qE \
	"^airlock serve: session $sid_missing ended container_failed: create: docker: POST /containers/create: HTTP 404: No such image: sha256:0{63}1$" \
	"$work/serve3.err"
t0=$SECONDS
rc=0; ctl revoke store --session "$sid_missing" --wait 8000 >"$work/revoke_ended.out" \
	2>"$work/revoke_ended.err" || rc=$?
check "a revoke naming a session that ended answers at once (not after its wait), saying so" \
	bash -c '[ "$1" = 0 ] && [ "$2" -lt 4 ] && grep -q "0 of 0 sessions acknowledged" "$3" &&
		grep -qx "airlock ctl: ended before acknowledging: $4" "$5"' \
	_ "$rc" "$((SECONDS - t0))" "$work/revoke_ended.out" "$sid_missing" "$work/revoke_ended.err"
# A start's config is read off the loop: a snapshot sent after it in one write is
# answered first; a start whose client left at once still starts, audited and logged.
starts() { sqlite3 "$work/audit.db" "select count(*) from audit_entries where type = 'policy'
	and rule = 'start by request'"; }
starts0=$(starts) logged0=$(grep -c ', inline config$' "$work/serve3.err")
python3 "$client" overtake "$sock" "$work/missing.json" "$work/overtake.frames" >"$work/overtake.json"
cat "$work/overtake.json"
check "a snapshot sent after a start in one write is answered first; the start then, with its session" \
	[ "$(json_get "$work/overtake.json" '(d["order"], d["start"]["ok"], d["start"]["session"][:2])')" = "([2, 1], True, 's-')" ]
started_both() { [ "$(starts)" = $((starts0 + 2)) ] &&
	[ "$(grep -c ', inline config$' "$work/serve3.err")" = $((logged0 + 2)) ]; }
check "…and the start of a client that left before its answer ran too: audited, logged" until3 started_both
refusals() { sqlite3 "$work/audit.db" "select count(*) from audit_entries where type = 'policy'
	and rule = 'start refused'"; }
refusals0=$(refusals)
python3 "$client" crowd "$sock" 20 "$work/crowd.frames" >"$work/crowd.json"
cat "$work/crowd.json"
check "20 starts in one write: each waits its turn, is read and refused for what it says, in the order sent" \
	[ "$(json_get "$work/crowd.json" '(d["refused"], d["busy"], d["other"], d["refused_ids"] == list(range(1, 21)))')" = "(20, 0, 0, True)" ]
check "…each refusal audited" [ "$(refusals)" = $((refusals0 + 20)) ]
printf '{"profile": 3}\n' >"$work/bad.json"
rc=0; "$airlock" serve --socket "$work/other.sock" --audit "$work/other.db" --config "$work/bad.json" \
	2>"$work/serve_bad.err" </dev/null || rc=$?
check "serve with a bad config exits 3, naming it" \
	bash -c '[ "$1" = 3 ] && grep -qx "airlock serve: config $2: profile: expected an object" "$3"' \
	_ "$rc" "$work/bad.json" "$work/serve_bad.err"
check "and touched no container first (no reaper line, no socket)" \
	bash -c '! grep -q "airlock containers\? at start" "$1" && [ ! -e "$2" ]' _ "$work/serve_bad.err" "$work/other.sock"
check "the live engine's container still runs" [ -n "$(box3)" ]
"$airlock" serve --socket "$work/other.sock" --audit "$work/other.db" 2>"$work/serve_other.err" </dev/null &
other=$!
helpers+=("$other")
serve_ready "$work/serve_other.err" "$other"
check "a second engine beside it counts the live engine's container apart, left alone" \
	grep -qE '^airlock serve: [0-9]+ airlock containers? at start: 0 orphans of gone engines \(0 reaped, 0 failed\), [1-9][0-9]* of live engines left alone$' "$work/serve_other.err"
# ctl audit --follow through a burst: 200 entries committed at once (by
# this test, beside the idle engine), more than one answer holds: each
# printed once, in order, none skipped, up to the log's head.
"$airlock" ctl --socket "$work/other.sock" audit --follow >"$work/burst.out" 2>"$work/burst.err" &
follower=$!
for _ in $(seq 50); do [ -s "$work/burst.out" ] && break; sleep 0.1; done
python3 - "$work/other.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
with db:
    db.executemany("INSERT INTO audit_entries (entry_id, ts, session_id, type, decision, rule,"
                   " prev_hash, entry_hash) VALUES (?, '2026-12-07T00:00:00.000Z', 'engine',"
                   " 'policy', 'applied', 'burst', '', '')",
                   [("burst-%d" % i,) for i in range(200)])
PY
head=$(sqlite3 "file:$work/other.db?mode=ro" "select max(seq) from audit_entries")
for _ in $(seq 100); do [ "$(tail -n 1 "$work/burst.out" | cut -d' ' -f1)" = "$head" ] && break; sleep 0.1; done
kill "$follower"; wait "$follower" 2>/dev/null
check "ctl audit --follow through a burst of 200 at once: every seq up to the head ($head), once, in order" \
	python3 - "$work/burst.out" "$head" <<'PY'
import sys
seqs = [int(l.split()[0]) for l in open(sys.argv[1])]
head = int(sys.argv[2])
assert len(seqs) >= 200 and seqs[-1] == head, (seqs[:3], seqs[-3:], head)
assert seqs == list(range(seqs[0], head + 1)), [b for a, b in zip(seqs, seqs[1:]) if b != a + 1][:5]
PY
kill -TERM "$other"; wait "$other" 2>/dev/null
check "the live engine's container still runs after it" [ -n "$(box3)" ]
echo "   session $sid3"

kill -TERM "$engine3"
rc=0; wait "$engine3" || rc=$?
check "the third serve exits 0 on SIGTERM" [ "$rc" = 0 ]

# --- out of descriptors: peers told, none left waiting --------------------------
# An engine under `ulimit -n 40` (a connection holds its socket, and its
# parser's pipes while one runs): a view uid asking for 64 connections
# runs it out, 48 being a view uid's share. Those
# beyond are answered at once (the loop spun on the readable listener at a
# full core, and they, root's ctl too, waited without a word); root's ctl
# meanwhile is answered and exits 1; once they are let go it is served.
(ulimit -n 40 && exec "$airlock" serve --socket "$work/nofd.sock" --audit "$work/nofd.db") \
	2>"$work/serve_nofd.err" </dev/null &
nofd=$!
helpers+=("$nofd")
check "a serve under ulimit -n 40" serve_ready "$work/serve_nofd.err" "$nofd"
main_sock=$sock sock=$work/nofd.sock
hog "$vg" hognofd
sock=$main_sock
check "a view uid asking for 64 there: some held, every other answered, 'engine out of descriptors' among them" \
	[ "$(json_get "$work/hognofd.json" '(0 < d["admitted"] < 48, len(d["refused"]) == 64 - d["admitted"], "engine out of descriptors" in d["refused"], set(d["refused"]) <= {"engine out of descriptors", "parser failed", "too many clients"})')" = "(True, True, True, True)" ]
rc=0; timeout 10 "$airlock" ctl --socket "$work/nofd.sock" status >"$work/nofd_root.out" 2>"$work/nofd_root.err" || rc=$?
check "…while it holds them, root's ctl is answered (exit $rc): out of descriptors" \
	bash -c '[ "$1" = 1 ] && grep -qE "engine out of descriptors|parser failed" "$2"' _ "$rc" "$work/nofd_root.err"
hog_release
rc=0; timeout 10 "$airlock" ctl --socket "$work/nofd.sock" status >/dev/null 2>&1 || rc=$?
check "…let go, root's ctl is served again" [ "$rc" = 0 ]
kill -TERM "$nofd"; wait "$nofd" 2>/dev/null

# --- the canary: in the permitted sink, nowhere else ----------------------------
check "positive control: the permitted sink holds the canary" grep -qF "$canary" "$work/a/vault.sink"
outputs=("$work"/*.out "$work"/*.err "$work"/*.json "$work"/*.jsonl "$work"/*.txt "$work"/*.frames)
check "the canary is in no output (${#outputs[@]} files: ctl, serve logs, metrics, socket frames)" \
	bash -c '! grep -lF -- "$1" "${@:2}"' _ "$canary" "${outputs[@]}"
summary
