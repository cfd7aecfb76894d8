#!/usr/bin/env bash
# Held calls with the real parts (issue 43, item 1): a looping agent under
# `airlock serve`, its tool held with `airlock ctl hold save --all` (an
# alias, held as its catalog tool store). Each call then waits: `ctl
# pending` shows it (names, size, hash; no canary), a view-role uid's
# approve is refused and audited, an operate-role uid's approve lets
# exactly that call reach the sink, a deny reaches nothing and the agent
# gets hold_denied. An approve --rest lets the later calls go on until the
# tool is held again. A freeze posted while a call waits applies at once
# and decides it. A session started later is held from its start, its
# config's hold_timeout of 2 s denies its calls hold_timeout by itself, and
# the time held does not count against its session_ms of 4 s.
# SIGTERM with calls waiting: each denied by the engine's stop and audited,
# serve exits, the containers are gone. The chain verifies; the canary is
# in the permitted sink only.
# Class flow holds first: `ctl hold --flow confidential>confidential` makes
# the session's calls wait (held by the flow), an approval lets one reach
# the sink, `restore --flow` lifts it; a view-role uid cannot post one. Of
# two sessions above their tool's sink ceiling (confidential>pii), the one
# whose config sets policy.declassify_by_hold waits instead of being denied
# and an approval declassifies its call (audited so, both classes, the
# hash, the author); the one without (the mutant) acks "not applicable",
# stays denied sink_ceiling, and its sink sees nothing.
# usage: hold.sh AIRLOCK AGENT_BIN UPSTREAM_BIN
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1 agent=$2 upstream=$3
scratch_dir
. "$here/../checks.sh"
. "$here/serve_lib.sh"
sock=$work/engine.sock
owner_pids() { printf '%s\n' "${helpers[@]}"; }

# --- the roles: groups made here when missing, removed after; uid 65534 in each -------
made_groups=()
group_gid() { getent group "$1" | cut -d: -f3; }
on_teardown() {
	local g
	for g in "${made_groups[@]}"; do groupdel "$g" 2>/dev/null; done
}
for g in airlock airlock-view; do
	if [ -z "$(group_gid "$g")" ]; then groupadd "$g" && made_groups+=("$g"); fi
done
og=$(group_gid airlock) vg=$(group_gid airlock-view)

canary="HOLD-CANARY-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '{"canary":"%s"}\n' "$canary" >"$work/payload.in"
image=$(scratch_image "$work/image" "$agent") || { not_ok "agent image build"; summary; exit 1; }
hold_config() {	# NAME SECONDS [SESSION-MS]: a looping session whose held calls wait SECONDS
	loop_config "$1" &&
	python3 - "$work/$1/config.json" "$2" "${3:-}" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["bounds"]["hold_timeout"] = int(sys.argv[2])
if sys.argv[3]:
    c["bounds"]["session_ms"] = int(sys.argv[3])
json.dump(c, open(sys.argv[1], "w"))
PY
}
hold_config h 60 || { not_ok "the session's config"; summary; exit 1; }
hold_config t 2 4000 || { not_ok "the timed session's config"; summary; exit 1; }
sink=$work/h/vault.sink tsink=$work/t/vault.sink
chmod 0755 "$work"	# the setpriv clients must reach the socket in it
mkdir -p "$work/bin" && install -m 0755 "$airlock" "$work/bin/airlock"

cp "$work/h/config.json" "$work/bad.json"
python3 - "$work/bad.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["bounds"]["hold_timeout"] = 0
json.dump(c, open(sys.argv[1], "w"))
PY
rc=0; "$airlock" doctor --config "$work/bad.json" >"$work/badcfg.out" 2>"$work/badcfg.err" || rc=$?
check "a hold_timeout of 0 is refused by the config check, naming its bounds" \
	bash -c '[ "$1" != 0 ] && grep -q "bounds.hold_timeout" "$2" "$3"' _ "$rc" "$work/badcfg.out" "$work/badcfg.err"

serve_start

ctl_as() {	# GID NAME ARGS...: the same as uid 65534 in group GID
	local gid=$1 name=$2
	shift 2
	rc=0
	setpriv --reuid 65534 --regid 65534 --groups "$gid" "$work/bin/airlock" ctl --socket "$sock" \
		"$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
}
lines() { if [ -e "$1" ]; then wc -l <"$1"; else echo 0; fi; }

ctl start start "$work/h/config.json"
sid=$(cat "$work/start.out")
check "ctl start: a session" bash -c '[ "$1" = 0 ] && [ -n "$2" ]' _ "$rc" "$sid"
for _ in $(seq 600); do [ -s "$sink" ] && break; sleep 0.1; done
check "its calls reach the upstream" [ -s "$sink" ]

# --- a class flow hold (CLASS>SINK), not a tool: an allowed flow waits --------------
grows() {	# FILE N: FILE has at least N lines, within 10 s
	local i
	for i in $(seq 100); do [ "$(lines "$1")" -ge "$2" ] && return 0; sleep 0.1; done
	return 1
}
flows_held_is() {	# SESSION N: its snapshot row (ctl sessions --json) counts N flows held
	ctl fsessions sessions --json
	python3 -c 'import json, sys
rows = json.load(open(sys.argv[1]))["snapshot"]["sessions"]
sys.exit(0 if [r["flows_held"] for r in rows if r["id"] == sys.argv[2]] == [int(sys.argv[3])] else 1)' \
		"$work/fsessions.out" "$1" "$2"
}
ctl_as "$vg" vflow hold --flow 'confidential>confidential' --all
check "a view-role uid's flow hold: exit 1, view only" \
	bash -c '[ "$1" = 1 ] && grep -q "hold: view only" "$2"' _ "$rc" "$work/vflow.err"
ctl fhold hold --flow 'confidential>confidential' --session "$sid"
check "ctl hold --flow confidential>confidential: applied on the session" \
	bash -c '[ "$1" = 0 ] && grep -q "^hold confidential>confidential: revision [0-9]*, 1 of 1" "$2" &&
	 grep -qE "^  $3 +applied" "$2"' _ "$rc" "$work/fhold.out" "$sid"
check "the session's row counts the flow it holds (what the console's detail shows)" \
	flows_held_is "$sid" 1
fid=$(pending_id "$sid")
check "a call of the held flow waits" [ -n "$fid" ]
ctl flist pending
check "ctl pending: held by the flow, approving it declassifies nothing" \
	grep -qE "^ +$fid +$sid +store \(save\) +confidential->confidential .* flow$" "$work/flist.out"
before=$(lines "$sink")
sleep 1
check "while it waits nothing reaches the sink" [ "$(lines "$sink")" = "$before" ]
ctl frest approve "$fid" --rest
check "a flow's call is approved one at a time: --rest refused" \
	bash -c '[ "$1" = 1 ] && grep -q "approved one at a time" "$2"' _ "$rc" "$work/frest.err"
ctl fapprove approve "$fid"
fid2=$(pending_id "$sid" "$fid")
sleep 0.5
check "approved: exactly that call reached the sink, the next one waits" \
	bash -c '[ "$1" = "$(($2 + 1))" ] && [ -n "$3" ]' _ "$(lines "$sink")" "$before" "$fid2"
check "the decision audited with the flow and hash, not declassified" \
	audit_has "select count(*) from audit_entries where type='policy' and rule='hold $fid approved'
	 and detail like '%\"flow\":\"confidential>confidential\",\"request_hash\":\"%\",\"declassified\":false}'"
ctl frestore restore --flow 'confidential>confidential' --session "$sid"
check "ctl restore --flow: acknowledged" [ "$rc" = 0 ]
check "restored: the session's row counts no flow held" flows_held_is "$sid" 0
check "the waiting call and the later ones go on" grows "$sink" "$((before + 3))"
ctl sflow hold --flow 'pii>public' --all
ctl sstatus status
check "a flow hold on every session stands for later ones: ctl status lists it" \
	bash -c '[ "$1" = 0 ] && grep -q "^flows    held pii>public$" "$2"' _ "$rc" "$work/sstatus.out"
ctl sunflow restore --flow 'pii>public' --all
ctl sstatus2 status
check "restore --flow --all ends it: ctl status lists none" \
	bash -c '[ "$1" = 0 ] && grep -q "^flows    none held$" "$2"' _ "$rc" "$work/sstatus2.out"

# --- a flow the sink ceiling denies: declassified by an approval, with the opt-in only ---
flow_config() {	# NAME OPT-IN: class confidential, its tool's sink ceiling pii
	loop_config "$1" &&
	python3 - "$work/$1/config.json" "$2" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["tools"]["store"]["sink_ceiling"] = "pii"
if sys.argv[2] == "yes":
    c["policy"] = {"declassify_by_hold": True}
json.dump(c, open(sys.argv[1], "w"))
PY
}
flow_config d yes && flow_config m no || not_ok "the flow sessions' configs"
ctl dstart start "$work/d/config.json"
dsid=$(cat "$work/dstart.out")
ctl mstart start "$work/m/config.json"
msid=$(cat "$work/mstart.out")
check "two sessions above their tool's sink ceiling, one opted in to declassification" \
	bash -c '[ "$1" = 0 ] && [ -n "$2" ] && [ -n "$3" ]' _ "$rc" "$dsid" "$msid"
for s in "$dsid" "$msid"; do
	check "unheld, its calls are denied sink_ceiling ($s)" \
		audit_has "select count(*) from audit_entries where type='call' and session_id='$s'
		 and rule='sink_ceiling'"
done
ctl dhold hold --flow 'confidential>pii' --session "$dsid" --session "$msid"
check "ctl hold --flow confidential>pii: applied where opted in, not applicable, said why, elsewhere" \
	bash -c '[ "$1" = 0 ] && grep -qE "^  $2 +applied" "$4" && grep -qE "^  $3 +not_applicable" "$4" &&
	 grep -q "not applicable: no declassification" "$4"' _ "$rc" "$dsid" "$msid" "$work/dhold.out"
check "the session without the opt-in audits it: 'hold no declassification'" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='$msid'
	 and tool='confidential>pii' and rule='hold no declassification' and decision='not_applicable'"
did=$(pending_id "$dsid")
check "the opted-in session's call waits instead of being denied" [ -n "$did" ]
dhash=$(python3 -c 'import json, sys
print([h["request_hash"] for h in json.load(open(sys.argv[1]))["pending"] if str(h["id"]) == sys.argv[2]][0])' \
	"$work/pending.json" "$did" 2>/dev/null)
ctl dlist pending
check "ctl pending: held by the flow, approving it declassifies" \
	grep -qE "^ +$did +$dsid +store \(save\) +confidential->pii .* flow declassify$" "$work/dlist.out"
ctl_as "$og" dapprove approve "$did"
check "an operate-role uid approves it" [ "$rc" = 0 ]
check "the declassified call reached the sink" grows "$work/d/vault.sink" 1
check "the decision audited: declassified, both classes, the hash, the author and the wait" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='$dsid'
	 and tool='store' and rule='hold $did approved, declassified' and detail like
	 '{\"by\":\"%\",\"uid\":65534,\"via\":\"ctl\",\"wait_ms\":%,\"flow\":\"confidential>pii\",\"request_hash\":\"$dhash\",\"declassified\":true}'"
check "then the call's own entry: allowed" \
	audit_has "select count(*) from audit_entries where type='call' and session_id='$dsid'
	 and decision='allowed' and seq > (select seq from audit_entries where rule='hold $did approved, declassified')"
check "the mutant, no opt-in: still denied sink_ceiling after the approval" \
	audit_has "select count(*) from audit_entries where type='call' and session_id='$msid'
	 and rule='sink_ceiling' and seq > (select seq from audit_entries
	 where rule='hold $did approved, declassified')"
check "and its sink saw nothing" [ "$(lines "$work/m/vault.sink")" = 0 ]
check "and none of its calls ever waited" \
	[ "$(audit_q "select count(*) from audit_entries where session_id='$msid' and rule glob 'hold [0-9]* *'")" = 0 ]
ctl dstop stop "$dsid"
ctl mstop stop "$msid"
gone_soon() { local i; for i in $(seq 150); do session_gone "$1" && return 0; sleep 0.1; done; return 1; }
check "both flow sessions stopped, their containers gone" \
	bash -c '[ "$1" = 0 ] && [ -n "$2" ]' _ "$rc" "$dsid"
check "the opted-in session's container is gone" gone_soon "$dsid"
check "the other's container is gone" gone_soon "$msid"

# --- hold: an alias, held as its catalog tool ---------------------------------------
ctl_as "$vg" vhold hold save --all
check "a view-role uid's hold: exit 1, view only" \
	bash -c '[ "$1" = 1 ] && grep -q "hold: view only" "$2"' _ "$rc" "$work/vhold.err"
ctl hold hold save --all
check "ctl hold save --all: acknowledged, and the answer names the catalog tool it held" \
	bash -c '[ "$1" = 0 ] && grep -q "^hold save (store): revision [0-9]*, 1 of 1 sessions acknowledged" "$2"' _ "$rc" "$work/hold.out"
hold_rev=$(sed -n 's/^hold save (store): revision \([0-9]*\),.*/\1/p' "$work/hold.out")
check "the alias held as its catalog tool: the session's 'hold applied' names store, at the revision" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='$sid'
	 and tool='store' and rule='hold applied' and revision=$hold_rev"
ctl tools tools
check "ctl tools: store held" grep -qE "^$sid +store +confidential +held$" "$work/tools.out"

id1=$(pending_id "$sid")
check "a call waits: ctl pending --json lists it" [ -n "$id1" ]
ctl list pending
check "ctl pending: the call by id, session, tool and alias, classes, size and hash" \
	grep -qE "^ +$id1 +$sid +store \(save\) +confidential->confidential +[0-9]+B [0-9a-f]{12} " "$work/list.out"
ctl_as "$vg" vlist pending
check "a view-role uid reads the pending list" \
	bash -c '[ "$1" = 0 ] && grep -qE "^ +$2 +$3 " "$4"' _ "$rc" "$id1" "$sid" "$work/vlist.out"
check "the wait's start audited: 'hold $id1 waiting'" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='$sid'
	 and tool='store' and rule='hold $id1 waiting'"
before=$(lines "$sink")
sleep 1
check "while it waits nothing reaches the sink" [ "$(lines "$sink")" = "$before" ]

ctl_as "$vg" vapprove approve "$id1"
check "a view-role uid's approve: exit 1, view only" \
	bash -c '[ "$1" = 1 ] && grep -q "approve: view only" "$2"' _ "$rc" "$work/vapprove.err"
check "its refusal audited: 'approve refused: view only', uid 65534" \
	audit_has "select count(*) from audit_entries where type='policy'
	 and rule='approve refused: view only' and detail like '%\"uid\":65534%'"
check "the call still waits" [ "$(pending_id "$sid")" = "$id1" ]

ctl_as "$og" approve approve "$id1"
check "an operate-role uid's approve: exit 0" bash -c '[ "$1" = 0 ] && grep -q "^approved $2$" "$3"' _ "$rc" "$id1" "$work/approve.out"
id2=$(pending_id "$sid" "$id1")
check "the agent's next call waits in turn" [ -n "$id2" ]
sleep 0.5
check "exactly the approved call reached the sink" [ "$(lines "$sink")" = "$((before + 1))" ]
check "the decision audited: 'hold $id1 approved' by uid 65534 via ctl, with the wait" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='$sid'
	 and tool='store' and rule='hold $id1 approved' and detail like '%\"uid\":65534,\"via\":\"ctl\",\"wait_ms\":%'"
check "then the call's own entries: allowed" \
	audit_has "select count(*) from audit_entries where type='call' and session_id='$sid'
	 and tool='store' and decision='allowed' and seq > (select seq from audit_entries
	 where rule='hold $id1 approved')"
ctl again approve "$id1"
check "the same id again: refused, it no longer waits" \
	bash -c '[ "$1" = 1 ] && grep -q "hold refused: hold: no call $2 is waiting" "$3"' _ "$rc" "$id1" "$work/again.err"

# --- deny -------------------------------------------------------------------------
before=$(lines "$sink")
ctl deny deny "$id2"
check "ctl deny: exit 0" [ "$rc" = 0 ]
id3=$(pending_id "$sid" "$id2")
check "the agent goes on: its next call waits" [ -n "$id3" ]
check "the denied call: denied hold_denied in the audit" \
	audit_has "select count(*) from audit_entries where type='call' and session_id='$sid'
	 and tool='store' and decision='denied' and rule='hold_denied'"
check "the decision audited: 'hold $id2 denied' by $(id -un) via ctl" \
	audit_has "select count(*) from audit_entries where type='policy' and rule='hold $id2 denied'
	 and detail like '%\"by\":\"$(id -un)\",%\"via\":\"ctl\",\"wait_ms\":%'"
check "the denied call reached nothing" [ "$(lines "$sink")" = "$before" ]

# --- ctl pending --follow: a new waiting call and a decision show within ~1 s ---------
# Followed, ctl lists again when the engine's hold event comes, and only every 5 s
# without one. Three rounds, each a deny and the agent's next call: the decision's
# line after the deny, and the new call's after it began waiting (its since_ms), are
# measured and printed; each under 2 s, which the 5 s safety re-list alone would
# meet for all six only by chance. Each line is stamped as it arrives.
(echo "$BASHPID" >"$work/follow.pid"
 exec "$airlock" ctl --socket "$sock" pending --follow 2>"$work/follow.err") |
	while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done >"$work/follow.out" &
follower=$!
helpers+=("$follower")
for _ in $(seq 50); do [ -s "$work/follow.pid" ] && break; sleep 0.1; done
stamp_of() {	# REGEX: the arrival stamp of follow.out's first line matching, within 10 s
	local i
	for i in $(seq 100); do
		grep -m1 -E "^[0-9.]+ $1" "$work/follow.out" | cut -d' ' -f1 | grep . && return 0
		sleep 0.1
	done
	return 1
}
since_of() {	# ID: when the call began waiting, s (ctl pending --json's since_ms)
	python3 -c '
import json, sys
p = [h for h in json.load(open(sys.argv[1]))["pending"] if str(h["id"]) == sys.argv[2]]
print(p[0]["since_ms"] / 1000 if p else "")' "$work/pending.json" "$1"
}
check "ctl pending --follow lists the call waiting now" stamp_of " +$id3 +$sid +store "
slow=0 lat=()
for round in 1 2 3; do
	t0=$(date +%s.%N)
	ctl fdeny deny "$id3"
	t_dec=$(stamp_of " +$id3 decided$") || t_dec=999999999999
	next=$(pending_id "$sid" "$id3")
	since=$(since_of "$next")
	t_new=$(stamp_of " +$next +$sid +store ") || t_new=999999999999
	d1=$(python3 -c "print(round($t_dec - $t0, 2))") d2=$(python3 -c "print(round($t_new - ${since:-0}, 2))")
	lat+=("decided ${d1}s, new ${d2}s")
	python3 -c "import sys; sys.exit(0 if $d1 < 2 and $d2 < 2 else 1)" || slow=$((slow + 1))
	id3=$next
done
echo "# ctl pending --follow latencies: ${lat[*]}"
check "ctl pending --follow: each decision and new waiting call within 2 s, 3 rounds (${lat[*]})" [ "$slow" = 0 ]
check "serve logs each call that begins to wait: 'session $sid hold $id3 waiting: store'" \
	grep -qF "session $sid hold $id3 waiting: store" "$work/serve.err"
check "serve logs each decision, its author and wait: 'hold N denied: store by $(id -un) via ctl'" \
	grep -qE "session $sid hold [0-9]+ denied: store by $(id -un) via ctl after [0-9]+ ms" "$work/serve.err"
kill "$(cat "$work/follow.pid")" "$follower" 2>/dev/null

# --- approve for the rest of the session, then held again ---------------------------
before=$(lines "$sink")
ctl rest approve "$id3" --rest
check "ctl approve --rest: exit 0, saying the tool's later calls go on too" \
	bash -c '[ "$1" = 0 ] && [ "$(cat "$2")" = "approved $3, and its tool'"'"'s later calls in its session" ]' \
	_ "$rc" "$work/rest.out" "$id3"
grown() { local i; for i in $(seq 100); do [ "$(lines "$sink")" -ge "$1" ] && return 0; sleep 0.1; done; return 1; }
check "the session's later calls go on without a wait: three more reach the sink" grown "$((before + 4))"
check "the decision audited: 'hold $id3 approved for the session'" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='$sid'
	 and rule='hold $id3 approved for the session'"
check "none of its calls waits" \
	bash -c '"$1" ctl --socket "$2" pending --json | python3 -c "import json,sys; sys.exit(1 if json.load(sys.stdin)[\"pending\"] else 0)"' _ "$airlock" "$sock"
# Held again by a prepared incident file, as `ctl apply` posts it.
printf '{"hold": ["store"], "why": {"store": "under review"}}\n' >"$work/hold-incident.json"
ctl rehold apply "$work/hold-incident.json"
check "ctl apply of {\"hold\": [\"store\"]}: the hold acknowledged" \
	bash -c '[ "$1" = 0 ] && grep -q "^hold store: revision [0-9]*, 1 of 1 sessions acknowledged" "$2"' \
	_ "$rc" "$work/rehold.out"
id3=$(pending_id "$sid" "$id3")
check "held again, its calls wait again: the approval for the session is gone" [ -n "$id3" ]

# --- a freeze while a call waits: at once, and it denies the call --------------------
ctl freeze freeze --wait 2000
check "ctl freeze with a call waiting: acknowledged at once (the gate is not busy)" \
	bash -c '[ "$1" = 0 ] && grep -q "1 of 1 sessions acknowledged" "$2"' _ "$rc" "$work/freeze.out"
check "the waiting call leaves the list: 'hold $id3 lifted' by the cutover" \
	audit_has "select count(*) from audit_entries where type='policy' and rule='hold $id3 lifted'
	 and detail like '%\"by\":\"engine\",%\"via\":\"cutover\"%'"
check "its call entry: denied frozen" \
	audit_has "select count(*) from audit_entries where type='call' and session_id='$sid'
	 and tool='store' and rule='frozen'"
ctl thaw thaw
check "ctl thaw: acknowledged" [ "$rc" = 0 ]

# --- a later session: held from its start, its call timed out by itself ---------------
ctl tstart start "$work/t/config.json"
tsid=$(cat "$work/tstart.out")
check "a second session, its config's hold_timeout 2 s, its session_ms 4 s" bash -c '[ "$1" = 0 ] && [ -n "$2" ]' _ "$rc" "$tsid"
check "the standing hold covers it from its start: 'hold at start'" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='$tsid'
	 and tool='store' and rule='hold at start'"
tid=$(pending_id "$tsid")
check "its call waits" [ -n "$tid" ]
check "no one decides: after 2 s, 'hold $tid timed out' by the expiry" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='$tsid'
	 and rule='hold $tid timed out' and detail like '%\"by\":\"expiry\",%\"wait_ms\":%'"
check "not before its time: the wait audited is at least 2000 ms" \
	python3 -c 'import json,sys; sys.exit(0 if json.loads(sys.argv[1])["wait_ms"] >= 2000 else 1)' \
	"$(audit_q "select detail from audit_entries where rule='hold $tid timed out'")"
check "its call entry: denied hold_timeout" \
	audit_has "select count(*) from audit_entries where type='call' and session_id='$tsid'
	 and decision='denied' and rule='hold_timeout'"
check "nothing of the timed session reached its sink" [ "$(lines "$tsink")" = 0 ]

timed_out() {	# SESSION N: N of its calls timed out, within 15 s
	local i
	for i in $(seq 150); do
		[ "$(audit_q "select count(*) from audit_entries where session_id='$1'
		 and rule glob 'hold [0-9]* timed out'")" -ge "$2" ] 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
check "three of its calls timed out in turn: 6 s held, past its session_ms of 4 s" timed_out "$tsid" 3

# --- the engine stops with calls waiting ------------------------------------------
id4=$(pending_id "$sid" "$id3")
check "a call of the first session waits again" [ -n "$id4" ]
before=$(lines "$sink")
kill -TERM "$engine"
rc=0
timeout 60 tail --pid="$engine" -f /dev/null || rc=$?
check "SIGTERM with calls waiting: serve is gone within 60 s" [ "$rc" = 0 ]
rc=0; wait "$engine" || rc=$?
check "serve exits 0" [ "$rc" = 0 ]
check "the waiting call denied by the engine's stop, audited by the engine" \
	[ "$(audit_q "select count(*) from audit_entries where type='policy' and session_id='$sid'
	 and rule='hold $id4 denied: engine stop' and detail like '%\"by\":\"engine\",%'")" = 1 ]
check "its call entry: denied hold_denied" \
	[ "$(audit_q "select count(*) from audit_entries where type='call' and session_id='$sid'
	 and decision='denied' and rule='hold_denied'")" -ge 2 ]
check "nothing more reached the sink" [ "$(lines "$sink")" = "$before" ]
check "every wait audited has one decision" \
	[ "$(audit_q "select count(*) from audit_entries where rule glob 'hold [0-9]* waiting'")" = \
	  "$(audit_q "select count(*) from audit_entries where rule glob 'hold [0-9]*'
	   and rule not glob 'hold [0-9]* waiting'")" ]
outlived() {	# SESSION: three waits of 2 s timed out (its session_ms is 4 s), no session_timeout end
	[ "$(audit_q "select count(*) from audit_entries where session_id='$1'
	 and rule glob 'hold [0-9]* timed out'")" -ge 3 ] &&
	[ "$(audit_q "select count(*) from audit_entries where session_id='$1'
	 and type='session_end' and rule='session_timeout'")" = 0 ] &&
	[ "$(audit_q "select count(*) from audit_entries where session_id='$1'
	 and type='session_end'")" = 1 ]
}
check "time held does not count against session_ms: the timed session outlived it, not ended by it" \
	outlived "$tsid"
check "the first session's container is gone" session_gone "$sid"
check "the timed session's container is gone" session_gone "$tsid"
"$airlock" audit verify "$work/audit.db" >"$work/verify.out" 2>"$work/verify.err"
check "audit verify: the chain holds" [ $? = 0 ]
"$airlock" audit timeline "$work/audit.db" >"$work/timeline.out" 2>"$work/timeline.err"
check "audit timeline shows the holds and their decisions" \
	bash -c 'grep -q "hold $1 waiting" "$3" && grep -q "hold $2 denied" "$3"' _ "$id1" "$id2" "$work/timeline.out"
check "audit timeline shows the flow holds, their restore and the declassified approval" \
	bash -c 'grep -qE "hold +confidential>pii" "$2" && grep -qE "restore +confidential>confidential" "$2" &&
	 grep -q "hold $1 approved, declassified" "$2"' _ "$did" "$work/timeline.out"

# --- a restarted engine: its held calls' ids go on past the log's ------------------------
# (each engine began at 1: an on-call's `ctl approve 1` could name two calls in one log)
last=$(audit_q "select max(cast(substr(rule, 6) as integer)) from audit_entries
	where type='policy' and rule glob 'hold [0-9]*'")
mv "$work/serve.err" "$work/serve1.err"
serve_start
ctl restart start "$work/h/config.json"
rsid=$(cat "$work/restart.out")
ctl rhold hold store --all
rid=$(pending_id "$rsid")
check "a restarted engine's first held call: id $rid, past the log's highest ($last)" \
	bash -c '[ "$1" -ge 1 ] && [ -n "$2" ] && [ "$2" -gt "$1" ]' _ "${last:-0}" "$rid"
# SIGKILLed with that call waiting: the next engine decides the wait the dead
# one left open and ends its session (before, the wait stayed open for good).
check "audited: 'hold $rid waiting'" \
	audit_has "select count(*) from audit_entries where rule='hold $rid waiting'"
kill -KILL "$engine"
wait "$engine" 2>/dev/null
check "SIGKILL with the call waiting: its wait has no decision in the log" \
	[ "$(audit_q "select count(*) from audit_entries where rule glob 'hold $rid *'
	 and rule <> 'hold $rid waiting'")" = 0 ]
mv "$work/serve.err" "$work/serve2.err"
serve_start
check "the next engine decides it: 'hold $rid denied: engine lost', by the engine" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='$rsid'
	 and rule='hold $rid denied: engine lost' and detail like '%\"by\":\"engine\",%\"via\":\"lost\"%'"
check "…and ends its session engine_lost" \
	audit_has "select count(*) from audit_entries where type='session_end' and session_id='$rsid'
	 and rule='engine_lost'"
check "every wait in the log has one decision" \
	[ "$(audit_q "select count(*) from audit_entries where rule glob 'hold [0-9]* waiting'")" = \
	  "$(audit_q "select count(*) from audit_entries where rule glob 'hold [0-9]*'
	   and rule not glob 'hold [0-9]* waiting'")" ]
kill -TERM "$engine"
rc=0; wait "$engine" || rc=$?
check "the third serve exits 0" [ "$rc" = 0 ]
check "…the killed engine's session's container is gone" session_gone "$rsid"

# --- the canary: in the permitted sink, nowhere else ------------------------------------
check "positive control: the permitted sink holds the canary" grep -qF "$canary" "$sink"
outputs=("$work"/*.out "$work"/*.err "$work"/pending.json)
check "the canary is in no output (ctl's, the pending lists, serve's log)" \
	bash -c '! grep -lF -- "$1" "${@:2}"' _ "$canary" "${outputs[@]}"
check "the canary is in no audit row" [ "$(audit_q "select count(*) from audit_entries where
	 coalesce(detail,'') like '%$canary%' or coalesce(rule,'') like '%$canary%'")" = 0 ]
summary
