#!/usr/bin/env bash
# The console's pending view with the real parts (issue 43, item 1): a
# looping agent under `airlock serve`, its tool held (`ctl hold save
# --all`). Two consoles attached: one as an operate-role uid at 80x24, one
# as a view-role uid at 50x12 (uid 65534 in each group, as drill.sh's).
# The operate console alerts when a call begins waiting (id, session,
# tool), counts it in the header, lists it in the pending view (7) and
# approves it with a y: exactly that call reaches the sink, audited by
# its uid via console. The next call, denied with d y, reaches nothing
# and the agent gets hold_denied. The view console lists the call too,
# and its a is refused in the engine's words (view only), deciding
# nothing. A approves the next and the tool's later calls in the session:
# they go on without a wait. A quarantine and its release by ctl: each an
# alert on the consoles naming the session and who, and a line in serve's log. A console with its own engine holds a tool
# with :hold (120x30), lists the waiting call and approves it: exactly it reaches
# its session's sink. A canary in the agent's request is in the
# permitted sink and on no screen, no output, no audit row.
# usage: pending.sh AIRLOCK AGENT_BIN UPSTREAM_BIN
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon
command -v tmux >/dev/null || { echo "not ok: tmux is not installed (scripts/setup installs it)"; exit 1; }

airlock=$1 agent=$2 upstream=$3
scratch_dir
. "$here/../checks.sh"
. "$here/serve_lib.sh"
tmux_sock=airlock-pending-$$
. "$here/../ui/tmux_lib.sh"
sock=$work/engine.sock
owner_pids() { printf '%s\n' "${helpers[@]}"; }

made_groups=()
group_gid() { getent group "$1" | cut -d: -f3; }
on_teardown() {
	local g
	tm_close op
	tm_close view
	tm_close local
	for g in "${made_groups[@]}"; do groupdel "$g" 2>/dev/null; done
}
for g in airlock airlock-view; do
	if [ -z "$(group_gid "$g")" ]; then groupadd "$g" && made_groups+=("$g"); fi
done
og=$(group_gid airlock) vg=$(group_gid airlock-view)

canary="PENDING-CANARY-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '{"canary":"%s"}\n' "$canary" >"$work/payload.in"
image=$(scratch_image "$work/image" "$agent") || { not_ok "agent image build"; summary; exit 1; }
loop_config h || { not_ok "the session's config"; summary; exit 1; }
sink=$work/h/vault.sink
chmod 0755 "$work"	# the setpriv consoles must reach the socket in it
mkdir -p "$work/bin" "$work/home" && install -m 0755 "$airlock" "$work/bin/airlock"
chmod 0777 "$work/home"

serve_start

lines() { if [ -e "$1" ]; then wc -l <"$1"; else echo 0; fi; }
# The sessions view's alerts dismissed (d) until TEXT is the one shown, within 20 s
# (a long alert, or a narrow screen, cuts its "(1 of 4, d: dismiss)" short: an
# alert on the status line, "! …", is enough; in the sessions view d dismisses).
alert_shown() {	# NAME TEXT
	local end=$((SECONDS + 20))
	until screen "$1" | grep -qF -- "$2"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		tail -n 1 "$work/last.screen" | grep -qE "d: dismiss|^! " && keys "$1" d
		sleep 0.2
	done
}

ctl start start "$work/h/config.json"
sid=$(cat "$work/start.out")
short=$(echo "$sid" | cut -c3-10)
check "ctl start: a session" bash -c '[ "$1" = 0 ] && [ -n "$2" ]' _ "$rc" "$sid"
for _ in $(seq 600); do [ -s "$sink" ] && break; sleep 0.1; done
check "its calls reach the upstream" [ -s "$sink" ]

as_op="setpriv --reuid 65534 --regid 65534 --groups $og"
as_view="setpriv --reuid 65534 --regid 65534 --groups $vg"
console_size="80 24" console_as=$as_op console_bin=$work/bin/airlock console op --connect "$sock"
console_size="50 12" console_as=$as_view console_bin=$work/bin/airlock console view --connect "$sock"
check "the operate-role console at 80x24 shows the session" wait_for op "$short" 30
check "the view-role console at 50x12 is view only" wait_for view "(view only)" 30

# --- a call begins waiting: the alert, the header, the list --------------------------
ctl hold hold save --all
check "ctl hold save --all: acknowledged" [ "$rc" = 0 ]
id1=$(pending_id "$sid")
check "a call waits (ctl pending)" [ -n "$id1" ]
before=$(lines "$sink")
check "the operate console's alert names the call's id, session and tool" \
	alert_shown op "hold $id1: session $short, store waits for approve or deny"
check "its header counts the call: 1 HELD" wait_for op "│ 1 HELD │" 10
keys op 7
check "the pending view lists it: id, session, tool and alias, class>sink" \
	wait_re op "▶ +$id1 $short store +save +confidential→confidential" 10
check "…its size, request hash prefix and age (live)" \
	wait_re op "$id1 $short .* [0-9.]+[BK] [0-9a-f]{8} +[0-9.]+s" 5
cp "$work/last.screen" "$work/pending-80x24.out"
keys view 7
check "the view-role console at 50x12 lists the same call" wait_re view "▶ +$id1 $short store" 10
cp "$work/last.screen" "$work/pending-50x12.out"

# --- approve: a, y -------------------------------------------------------------------
keys op a
check "a asks first, naming the call" wait_for op "approve hold $id1: store in session $short? [y/N]" 10
check "nothing decided before the y" [ "$(pending_id "$sid")" = "$id1" ]
keys op y
check "the answer on the status line: approved" wait_for op "hold $id1 approved" 10
id2=$(pending_id "$sid" "$id1")
check "the agent's next call waits in turn" [ -n "$id2" ]
sleep 0.5
check "exactly the approved call reached the sink" [ "$(lines "$sink")" = "$((before + 1))" ]
check "the decision audited: 'hold $id1 approved' by uid 65534 via console" \
	audit_has "select count(*) from audit_entries where type='policy' and session_id='$sid'
	 and tool='store' and rule='hold $id1 approved' and detail like '%\"uid\":65534,\"via\":\"console\"%'"

# --- the view role: its a refused in the engine's words, nothing decided ------------------
check "the view console's list moves on to the next call" wait_re view "▶ +$id2 $short store" 10
keys view a
check "its a is refused at once: 'view only: approve refused'" \
	wait_for view "view only: approve refused" 5
check "no question was asked" bash -c '! grep -q "y/N" "$1"' _ "$work/last.screen"
check "the call still waits" [ "$(pending_id "$sid")" = "$id2" ]

# --- deny: d, y ------------------------------------------------------------------------
before=$(lines "$sink")
check "the operate console's cursor is on the next call" wait_re op "▶ +$id2 $short store" 10
keys op d
check "d asks first, naming the call" wait_for op "deny hold $id2: store in session $short? [y/N]" 10
keys op y
check "the answer on the status line: denied" wait_for op "hold $id2 denied" 10
id3=$(pending_id "$sid" "$id2")
check "the agent goes on: its next call waits" [ -n "$id3" ]
check "the denied call: denied hold_denied in the audit" \
	audit_has "select count(*) from audit_entries where type='call' and session_id='$sid'
	 and tool='store' and decision='denied' and rule='hold_denied'"
check "the decision audited: 'hold $id2 denied' by uid 65534 via console" \
	audit_has "select count(*) from audit_entries where type='policy' and rule='hold $id2 denied'
	 and detail like '%\"uid\":65534,\"via\":\"console\"%'"
check "the denied call reached nothing" [ "$(lines "$sink")" = "$before" ]

# --- A: approve for the rest of the session -----------------------------------------------
check "the cursor on the third call" wait_re op "▶ +$id3 $short store" 10
keys op A
check "A asks first" wait_for op "approve hold $id3 and every later store call in session $short" 10
keys op y
check "the answer: approved with the tool's later calls" \
	wait_for op "hold $id3 approved with its tool's later calls in the session" 10
more=$((before + 3))
for _ in $(seq 100); do [ "$(lines "$sink")" -ge "$more" ] && break; sleep 0.1; done
check "the later calls go on without a wait: three more reached the sink" [ "$(lines "$sink")" -ge "$more" ]
check "the pending view empties: no call is waiting" wait_for op "no call is waiting for an operator" 10
check "the decision audited: 'hold $id3 approved for the session' via console" \
	audit_has "select count(*) from audit_entries where rule='hold $id3 approved for the session'
	 and detail like '%\"via\":\"console\"%'"

# --- a quarantine and its release: an alert each, naming the session and who ------------
keys op 1	# the sessions view, where d dismisses the alerts before
keys view 1
ctl quarantine quarantine "$sid"
check "ctl quarantine: exit 0" [ "$rc" = 0 ]
check "the operate console alerts: 'session $short quarantined by $(id -un)'" \
	alert_shown op "session $short quarantined by $(id -un)"
check "the view console alerts too" alert_shown view "$short quarantined by"
check "serve logs it: 'session $sid quarantined by $(id -un) via ctl'" \
	grep -qF "session $sid quarantined by $(id -un) via ctl" "$work/serve.err"
ctl release release "$sid"
check "ctl release: exit 0" [ "$rc" = 0 ]
check "the operate console alerts: 'session $short released by $(id -un)'" \
	alert_shown op "session $short released by $(id -un)"
check "no pause failed" bash -c '! grep -q "pause failed" "$1"' _ "$work/serve.err"

# --- the console's own engine: :hold, its pending view, a y --------------------------------
loop_config l || not_ok "the local session's config"
lsink=$work/l/vault.sink
console local --audit "$work/local.db" --config "$work/l/config.json"
check "a console with its own engine runs a session" wait_for local "(1 running)" 60
for _ in $(seq 600); do [ -s "$lsink" ] && break; sleep 0.1; done
command_line local "hold store all"
check ":hold store all asks first" wait_for local "hold store on all 1 live sessions? [y/N]" 10
keys local y
check "the local console's alert names the waiting call of store" \
	alert_shown local "store waits for approve or deny"
lid=$(grep -oE "hold [0-9]+: session [0-9a-f]{8}, store waits" "$work/last.screen" | head -n 1 |
	cut -d' ' -f2 | tr -d :)
keys local 7
check "its pending view lists the call" wait_re local "▶ +$lid [0-9a-f]{8} store" 10
check "the status line does not offer d to dismiss here (d denies)" \
	wait_re local "dismiss on another view\)|\[alerts: another view\]" 5
lbefore=$(lines "$lsink")
keys local a
check "a asks first" wait_for local "approve hold $lid: store in session" 10
keys local y
check "a y approves it: the answer on the status line" wait_for local "hold $lid approved" 10
sleep 0.5
check "exactly that call reached the local session's sink" [ "$(lines "$lsink")" = "$((lbefore + 1))" ]
keys local q
wait_for local "stop them all and quit?" 10 && keys local y
check "the console quits: exit status 0" wait_for local "exit status 0" 60

# --- the end, and the canary --------------------------------------------------------------
keys op q
keys view q
kill -TERM "$engine"
rc=0; timeout 60 tail --pid="$engine" -f /dev/null || rc=$?
check "serve stops within 60 s" [ "$rc" = 0 ]
check "the session's container is gone" session_gone "$sid"
"$airlock" audit verify "$work/audit.db" >"$work/verify.out" 2>"$work/verify.err"
check "audit verify: the chain holds" [ $? = 0 ]
check "positive control: the permitted sink holds the canary" grep -qF "$canary" "$sink"
shots=("$work"/shot-*.screen)
check "screens were kept (${#shots[@]})" [ "${#shots[@]}" -gt 10 ]
check "the canary is on no screen of either console" bash -c '! grep -lF -- "$1" "${@:2}"' _ "$canary" "${shots[@]}"
check "the canary is in no output (ctl's, serve's log)" \
	bash -c '! grep -lF -- "$1" "${@:2}"' _ "$canary" "$work"/*.out "$work"/*.err "$work"/pending.json
check "the canary is in no audit row" [ "$(audit_q "select count(*) from audit_entries where
	 coalesce(detail,'') like '%$canary%' or coalesce(rule,'') like '%$canary%'")" = 0 ]
summary
