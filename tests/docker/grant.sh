#!/usr/bin/env bash
# Time-boxed grants with the real parts (issue 43, item 2): a looping agent
# under `airlock serve`, its tool revoked with `airlock ctl revoke --all`,
# then granted back with `ctl restore --all --calls 2`. While the engine is
# frozen nothing spends the budget and `ctl tools` shows the two calls
# left; after the thaw exactly two calls reach the upstream's sink, the
# next is denied `revoked`, and the audit holds the grant by its operator,
# the lapse and the session's acknowledgement by the expiry. Then a
# `--for 2s` grant lapses by itself ("time up"). An attached console in
# tmux at 80x24 shows the grant's calls left in its tools view; a second
# makes a grant itself (`:restore store --calls 2`, on all sessions, asked
# first): two calls through, the third denied, the grant audited by the
# console's user via console, bad terms refused in ctl's words. A third
# shows its timeline view (6) at 80x24 and 50x12: a revoke, a grant and a
# restore by ctl with their author, the grant's lapse by the expiry, the
# rows in the order `airlock audit timeline` prints them. A canary in the
# payload reaches the permitted sink and no output (every screen kept).
# usage: grant.sh AIRLOCK AGENT_BIN UPSTREAM_BIN
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
command -v tmux >/dev/null || { echo "not ok: tmux is not installed (scripts/setup installs it)"; exit 1; }
tmux_sock=airlock-grant-$$
. "$here/../ui/tmux_lib.sh"
on_teardown() { tm_close g; tm_close c; tm_close t; }
on_not_ok() { cat "$work/last.screen" 2>/dev/null | sed 's/^/    | /'; }
mkdir -p "$work/home"

canary="GRANT-CANARY-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '{"canary":"%s"}\n' "$canary" >"$work/payload.in"
image=$(scratch_image "$work/image" "$agent") || { not_ok "agent image build"; summary; exit 1; }
loop_config g || { not_ok "the session's config"; summary; exit 1; }
sink=$work/g/vault.sink

serve_start
lines() { if [ -e "$sink" ]; then wc -l <"$sink"; else echo 0; fi; }
by_expiry="detail like '%\"by\":\"expiry\",%\"via\":\"grant\"%'"

ctl start start "$work/g/config.json"
sid=$(cat "$work/start.out")
check "ctl start: a session" bash -c '[ "$1" = 0 ] && [ -n "$2" ]' _ "$rc" "$sid"
for _ in $(seq 600); do [ -s "$sink" ] && break; sleep 0.1; done
check "its calls reach the upstream" [ -s "$sink" ]

ctl revoke revoke store --all
check "ctl revoke store --all: acknowledged" \
	bash -c '[ "$1" = 0 ] && grep -q "^revoke store: revision [0-9]*, 1 of 1 sessions acknowledged" "$2"' _ "$rc" "$work/revoke.out"
ctl freeze freeze
check "ctl freeze: acknowledged" [ "$rc" = 0 ]
ctl grant restore store --all --calls 2
check "ctl restore store --all --calls 2: acknowledged" \
	bash -c '[ "$1" = 0 ] && grep -q "^restore store: revision [0-9]*, 1 of 1 sessions acknowledged" "$2"' _ "$rc" "$work/grant.out"
grant_rev=$(sed -n 's/^restore store: revision \([0-9]*\),.*/\1/p' "$work/grant.out")
ctl tools tools
check "ctl tools: the grant's two calls left, before any is spent" \
	grep -qE "^$sid +store +confidential +allowed \(grant: 2 calls left\)$" "$work/tools.out"
ctl toolsjson tools --json
check "ctl tools --json: granted, grant_calls 2, grant_ms null" \
	python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["snapshot"]["sessions"][0]["tools"][0]
sys.exit(0 if t["granted"] is True and t["grant_calls"] == 2 and t["grant_ms"] is None else 1)' "$work/toolsjson.out"
console_size="80 24" console g --connect "$sock"
check "an attached console at 80x24 comes up" wait_for g "$(echo "$sid" | cut -c3-10)" 30
keys g 3
check "its tools view shows the grant: 2 calls left" wait_re g "store .*grant: 2 calls left" 20
cp "$work/last.screen" "$work/console-tools.out"
before=$(lines)
sleep 1
check "frozen: nothing reaches the sink, nothing is spent" [ "$(lines)" = "$before" ]

ctl thaw thaw
check "ctl thaw: acknowledged" [ "$rc" = 0 ]
check "the lapse: a policy entry 'grant lapsed: calls spent' by the expiry" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='engine'
	 and tool='store' and rule='grant lapsed: calls spent' and $by_expiry"
lapse_rev=$(audit_q "select revision from audit_entries where type='policy' and session_id='engine'
	 and rule='grant lapsed: calls spent'")
check "the session acknowledged the lapse: 'revoke applied' at its revision, by the expiry" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='$sid'
	 and tool='store' and rule='revoke applied' and revision=$lapse_rev and decision='applied' and $by_expiry"
check "the next call is denied revoked" \
	audit_has "select count(*) from audit_entries where type='call' and session_id='$sid'
	 and tool='store' and decision='denied' and rule='revoked' and revision>$grant_rev"
sleep 1
check "exactly two calls reached the upstream's sink" [ "$(lines)" = "$((before + 2))" ]
check "the audit: two calls allowed under the grant" \
	[ "$(audit_q "select count(*) from audit_entries where type='call' and session_id='$sid'
	 and tool='store' and decision='allowed' and revision>=$grant_rev")" = 2 ]
check "the grant itself: 'grant: 2 calls' by its operator, at the restore's revision" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='engine'
	 and tool='store' and rule='grant: 2 calls' and revision=$grant_rev
	 and detail like '%\"by\":\"$(id -un)\",%\"via\":\"ctl\"%'"
lapsed_on_screen() { gone_from g "grant: " 20 && wait_re g "store +confidential" 5; }
check "the console's tools view: the grant gone once it lapsed, the tool still listed" lapsed_on_screen

tm_close g
ctl after tools
check "ctl tools after the lapse: revoked" grep -qE "^$sid +store +confidential +revoked$" "$work/after.out"
ctl status tools --json
check "the lapse stands for later sessions, by the expiry" \
	python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["snapshot"]
sys.exit(0 if s["standing"] == ["store"] and s["standing_by"][0]["by"] == "expiry" else 1)' "$work/status.out"

# --- the console makes the grant: :restore store --calls 2, on all sessions ----------------
ctl cfreeze freeze
check "ctl freeze (the console's grant): acknowledged" [ "$rc" = 0 ]
console_size="80 24" console c --connect "$sock"
check "a console attached at 80x24 again" wait_for c "$(echo "$sid" | cut -c3-10)" 30
keys c 3
check "its tools view: store under the lapse's revoke, no grant" wait_re c "store +confidential .*revoke r[0-9]+" 20 ||
	cat "$work/last.screen"
command_line c "restore store --calls 0"
check ":restore --calls 0 refused on the status line in ctl's words" \
	wait_for c "restore: --calls wants a number from 1 to 1000000" 10
command_line c "revoke store --for 15m"
check ":revoke --for refused: a grant is restore's only" \
	wait_for c "revoke: --for and --calls are restore's only (a grant)" 10
command_line c "restore store --calls 2"
check ":restore store --calls 2 asks first, on all live sessions, naming the grant" \
	wait_for c "restore store (grant: 2 calls) on all 1 live sessions?" 10
keys c y
check "the engine's answer names the grant" \
	wait_re c "r[0-9]+: restore store \(grant: 2 calls\) on 1 session" 15
check "its tools view shows the console's grant: 2 calls left" wait_re c "store .*grant: 2 calls left" 20
cp "$work/last.screen" "$work/console-grant.out"
check "the grant by the console's author: 'grant: 2 calls' by $(id -un) via console" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='engine'
	 and tool='store' and rule='grant: 2 calls' and revision>$lapse_rev
	 and detail like '%\"by\":\"$(id -un)\",%\"via\":\"console\"%'"
cgrant_rev=$(audit_q "select revision from audit_entries where type='policy' and session_id='engine'
	 and rule='grant: 2 calls' and detail like '%\"via\":\"console\"%'")
cbefore=$(lines)
sleep 1
check "frozen: nothing reaches the sink under the console's grant" [ "$(lines)" = "$cbefore" ]
ctl cthaw thaw
check "ctl thaw (the console's grant): acknowledged" [ "$rc" = 0 ]
check "the console's grant lapses: 'grant lapsed: calls spent' by the expiry after it" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='engine'
	 and tool='store' and rule='grant lapsed: calls spent' and revision>$cgrant_rev and $by_expiry"
check "the third call under it is denied revoked" \
	audit_has "select count(*) from audit_entries where type='call' and session_id='$sid'
	 and tool='store' and decision='denied' and rule='revoked' and revision>$cgrant_rev"
sleep 1
check "exactly two calls reached the upstream's sink under the console's grant" \
	[ "$(lines)" = "$((cbefore + 2))" ]
check "the audit: two calls allowed under the console's grant" \
	[ "$(audit_q "select count(*) from audit_entries where type='call' and session_id='$sid'
	 and tool='store' and decision='allowed' and revision>=$cgrant_rev")" = 2 ]
clapsed_on_screen() { gone_from c "grant: " 20 && wait_re c "store +confidential" 5; }
check "the console's tools view: its grant gone once it lapsed" clapsed_on_screen
tm_close c
before=$(lines)

# --- a grant for a time: lapses by itself -----------------------------------------------
ctl timed restore store --all --for 2s
check "ctl restore store --all --for 2s: acknowledged" [ "$rc" = 0 ]
ctl timedtools tools
check "ctl tools: the time left, at most 2 s" \
	grep -qE "^$sid +store +confidential +allowed \(grant: 0m0[12]s left\)$" "$work/timedtools.out"
check "it lapses by itself: 'grant lapsed: time up' by the expiry" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='engine'
	 and tool='store' and rule='grant lapsed: time up' and $by_expiry"
timed_rev=$(audit_q "select revision from audit_entries where type='policy' and session_id='engine'
	 and rule='grant lapsed: time up'")
# On time: the keeper slept up to 10 s past a grant's end (calls passed meanwhile).
late=$(audit_q "select (julianday(l.ts) - julianday(g.ts)) * 86400 from audit_entries l, audit_entries g
	 where l.rule='grant lapsed: time up' and g.seq = (select max(seq) from audit_entries
	 where type='policy' and session_id='engine' and rule like 'grant: %' and seq < l.seq)")
check "the lapse came on time: its entry 2 to 3 s after the grant's ($late s)" \
	python3 -c 'import sys; sys.exit(0 if 1.5 <= float(sys.argv[1]) < 3.0 else 1)' "${late:-0}"
check "the session acknowledged it" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='$sid'
	 and rule='revoke applied' and revision=$timed_rev and $by_expiry"
after_time=$(lines)
sleep 1
check "nothing reaches the sink after the lapse" [ "$(lines)" = "$after_time" ]
check "calls reached it while the grant ran" [ "$after_time" -gt "$before" ]

# --- the timeline view: what ctl did, by its author, in `audit timeline`'s order ---------
me=$(id -un)
ctl trevoke revoke store --all
check "ctl revoke store --all (the timeline's): acknowledged" [ "$rc" = 0 ]
t_revoke=$(sed -n 's/^revoke store: revision \([0-9]*\),.*/\1/p' "$work/trevoke.out")
ctl tgrant restore store --all --calls 1
check "ctl restore store --all --calls 1 (the timeline's grant): acknowledged" [ "$rc" = 0 ]
check "…its one call spent: 'grant lapsed: calls spent' again" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='engine'
	 and rule='grant lapsed: calls spent' and revision>$t_revoke"
ctl trestore restore store --all
check "ctl restore store --all (the timeline's): acknowledged" [ "$rc" = 0 ]
t_restore=$(sed -n 's/^restore store: revision \([0-9]*\),.*/\1/p' "$work/trestore.out")
check "…every entry of it written" audit_has "select count(*) from audit_entries where
	 type='policy' and session_id='$sid' and rule='restore applied' and revision=$t_restore"
console_size="80 24" console t --connect "$sock"
check "a console attached at 80x24 for the timeline" wait_for t "$(echo "$sid" | cut -c3-10)" 30
keys t 6
check "its timeline view (6): the restore by $me via ctl, r$t_restore, acknowledged, the newest" \
	wait_re t "restore +$me via ctl +store r$t_restore: 1 applied *$" 20
cp "$work/last.screen" "$work/timeline-80x24.out"
check "…the revoke by $me via ctl before it, r$t_revoke: 1 applied" \
	grep -qE "revoke +$me via ctl +store r$t_revoke: 1 applied" "$work/timeline-80x24.out"
check "…the grant by $me via ctl: 'grant: 1 call', and its lapse by the expiry" \
	bash -c 'grep -qE "grant +$1 via ctl +grant: 1 call" "$2" &&
		 grep -qE "grant +expiry via grant +grant lapsed: calls spent" "$2"' _ "$me" "$work/timeline-80x24.out"
"$airlock" audit timeline "$work/audit.db" --json >"$work/timeline-cli.out" 2>"$work/timeline-cli.err"
check "the screen's rows are the last events 'airlock audit timeline' prints, in its order" \
	python3 "$here/timeline_order.py" "$work/timeline-cli.out" "$work/timeline-80x24.out"
keys t /
keys t -l ctl
keys t Enter
check "/ctl keeps the changes made through ctl, and says it filters" \
	wait_re t "Timeline .* of .*filter: ctl" 10
check "…every row shown is by an author via ctl" \
	python3 "$here/timeline_order.py" --only-by "via ctl" "$work/last.screen"
keys t Escape
check "Esc: the whole timeline again" gone_from t "filter: ctl" 10
keys t '['
# The cursor's row is the one drawn with the glyph: no other row starts with one.
jumped_back() {
	wait_re t "scrolled back" 10 &&
		grep -E "^[^ ]+ [0-9:]{8} [a-z]+ +$me via ctl " "$work/last.screen" | grep -vq "r$t_restore:"
}
check "[: scrolled back, the cursor on an earlier change by $me via ctl (the expiry's skipped)" jumped_back
tm t resize-window -x 50 -y 12
keys t G
check "at 50x12, G: following again, the restore by $me via ctl on the last row (WHAT cut, BY kept)" \
	wait_re t "^[^ ]+ [0-9:]{8} restore +$me via ctl +store r$t_restore: 1" 10
cp "$work/last.screen" "$work/timeline-50x12.out"
check "…the rows there are still the CLI's last, in its order" \
	python3 "$here/timeline_order.py" "$work/timeline-cli.out" "$work/timeline-50x12.out"
check "…no line of it past 50 columns" \
	python3 "$here/timeline_order.py" --width 50 "$work/timeline-50x12.out"
tm_close t

# --- the canary: in the permitted sink, nowhere else ------------------------------------
check "positive control: the permitted sink holds the canary" grep -qF "$canary" "$sink"
outputs=("$work"/*.out "$work"/*.err "$work"/shot-*.screen)
check "the canary is in no output (ctl's, serve's log, the console's screens)" \
	bash -c '! grep -lF -- "$1" "${@:2}"' _ "$canary" "${outputs[@]}"
check "the canary is in no audit row" [ "$(audit_q "select count(*) from audit_entries where
	 coalesce(detail,'') like '%$canary%' or coalesce(rule,'') like '%$canary%'")" = 0 ]

kill -TERM "$engine"
rc=0; wait "$engine" || rc=$?
check "SIGTERM: serve exits 0, nothing left" [ "$rc" = 0 ]
check "the session's container is gone" session_gone "$sid"
summary
