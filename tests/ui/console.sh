#!/usr/bin/env bash
# The operator console end to end, in tmux, against the real engine on the
# real daemon: what an on-call operator does during an incident, judged by
# what the screen shows and what the observers saw. Every captured screen
# is kept and searched for the agents' canary (absent), with the positive
# control that the canary did reach the permitted sink.
#
# usage: console.sh AIRLOCK AGENT_BIN UPSTREAM_BIN [FAKE_NOTIFYD]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../docker/common.sh"
require_daemon
command -v tmux >/dev/null || { echo "not ok: tmux is not installed (scripts/setup installs it)"; exit 1; }

airlock=$(readlink -f "$1") agent=$(readlink -f "$2") upstream=$(readlink -f "$3")
fake_notifyd=${4:-}
demo_canary=DEMO-SECRET-4929-7731-0458
work=$(mktemp -d)
sockname=airlock-ui-$$
canary=CONSOLE-CANARY-5e1f0c

tm() { tmux -L "$sockname" -f /dev/null "$@"; }
cleanup() {
	[ -n "${relay_pid:-}" ] && kill "$relay_pid" 2>/dev/null
	tm kill-server 2>/dev/null
	for s in /tmp/tmux-"$(id -u)"/airlock-ui-$$-*; do [ -S "$s" ] && tmux -S "$s" kill-server 2>/dev/null; done
	"$DOCKER" ps -aq --filter label=io.airlock.managed=1 --filter "label=io.airlock.test=ui" |
		xargs -r "$DOCKER" rm -f >/dev/null 2>&1
	for p in $(cat "$work"/pids 2>/dev/null); do
		"$DOCKER" ps -aq --filter "label=io.airlock.owner-pid=$p" | xargs -r "$DOCKER" rm -f >/dev/null 2>&1
	done
	rm -rf "$work"
}
trap cleanup EXIT

. "$here/../checks.sh"
on_not_ok() { tail -n 40 "$work/last.screen" 2>/dev/null | sed 's/^/    | /'; }

# ---- the console in a pane of a private tmux server ----

# console NAME ARGS...: start airlock console in a 100x30 pane ($cmdline:
# "console --audit …" unless set; $console_wrap: a command it runs under).
console() {
	local name=$1; shift
	local cmd=${cmdline:-console --audit $work/$name.db}
	tm kill-server 2>/dev/null
	sockname=airlock-ui-$$-$name	# a fresh server: the old one may still be going away
	tm new-session -d -s ui -x 100 -y 30 \
		"env -u DBUS_SESSION_BUS_ADDRESS ${bus_env:-} ${console_env:-} TERM=tmux-256color NO_COLOR=1 TZ=UTC LANG=C.UTF-8 \
		 HOME=$work/home AIRLOCK_KEYS=${keys_file:-$work/no-keys} ${console_wrap:-} $airlock $cmd $*; \
		 echo \"exit status \$?\"; sleep 30"
	tm set-option -t ui remain-on-exit on >/dev/null
	pane_pid=$(tm display -p -t ui '#{pane_pid}')
	for _ in $(seq 50); do
		cpid=$(pgrep -P "$pane_pid" -f "$airlock" | head -n 1)
		[ -n "$cpid" ] && break
		sleep 0.1
	done
	echo "$cpid" >>"$work/pids"
}

# The screen now; every capture is kept for the canary search (named by
# time: screen often runs in a subshell).
screen() {
	local f
	f="$work/shot-$(date +%s%N).screen"
	tm capture-pane -p -t ui >"$f" 2>/dev/null
	cp "$f" "$work/last.screen"
	cat "$f"
}

# wait_for TEXT [SECONDS]: poll the screen until it shows TEXT (never "").
wait_for() {
	local text=$1 secs=${2:-20} i
	[ -n "$text" ] || return 1
	for i in $(seq $((secs * 10))); do
		screen | grep -qF -- "$text" && return 0
		sleep 0.1
	done
	return 1
}

# wait_gone TEXT [SECONDS]: poll until the screen no longer shows TEXT.
wait_gone() {
	local text=$1 secs=${2:-20} i
	for i in $(seq $((secs * 10))); do
		screen | grep -qF -- "$text" || return 0
		sleep 0.1
	done
	return 1
}

# wait_re REGEX [SECONDS]: the same for an extended regular expression.
wait_re() {
	local re=$1 secs=${2:-20} i
	for i in $(seq $((secs * 10))); do
		screen | grep -Eq -- "$re" && return 0
		sleep 0.1
	done
	return 1
}

keys() { tm send-keys -t ui "$@"; }
# A ':' command, typed and entered.
command_line() { keys ':'; keys -l "$1"; keys Enter; }

lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }
grows() {	# FILE SECONDS: the sink records more within SECONDS
	local n; n=$(lines "$1")
	for _ in $(seq $(($2 * 10))); do [ "$(lines "$1")" -gt "$n" ] && return 0; sleep 0.1; done
	return 1
}
still() {	# FILE SECONDS: the sink, which did record calls, records nothing for SECONDS
	local n; n=$(lines "$1"); [ "$n" -gt 0 ] || return 1
	sleep "$2"; [ "$(lines "$1")" = "$n" ]
}

# The CALLS cell "allowed/denied" of the session row whose id starts with $1.
denied_of() { screen | awk -v id="$1" '$0 ~ id { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\/[0-9]+$/) { split($i, c, "/"); print c[2]; exit } }'; }

# Containers of the console process; "none" when there is no console pid to ask about.
containers_of_console() {
	[ -n "${cpid:-}" ] || { echo none; return; }
	"$DOCKER" ps -aq --filter "label=io.airlock.owner-pid=$cpid" | wc -l
}
# The container of the session whose short id is $1.
container_of() {
	[ -n "$1" ] || return 0
	"$DOCKER" ps -aq --no-trunc --filter "label=io.airlock.owner-pid=$cpid" \
		--format '{{.ID}} {{.Label "io.airlock.session"}}' | awk -v s="s-$1" 'index($2, s) == 1 { print $1 }'
}

# The short id (8 hex) of the first session row in state $1.
short_id() { [ ${#1} = 8 ] && [ -z "${1//[0-9a-f]/}" ]; }
short_id_in() {
	local a b c
	while read -r a b c _; do
		if [ "$b" = "$1" ] && short_id "${a#\*}"; then echo "${a#\*}"; return; fi
		if [ "$c" = "$1" ] && short_id "${b#\*}"; then echo "${b#\*}"; return; fi
	done < <(screen)
}

# ---- images and configs ----

mkdir -p "$work/home"
scratch_image "$work/image" "$agent" >/dev/null || { not_ok "agent image build"; summary; exit 1; }
scratch_image "$work/volume" "$agent" 'VOLUME /data' >/dev/null ||
	{ not_ok "volume image build"; summary; exit 1; }
echo "{\"note\":\"$canary\"}" >"$work/payload.json"

config() {	# NAME IMAGE AGENT_MODE UPSTREAM_MODE
	upstream_box "$work"
	cat >"$work/$1.json" <<JSON
{"profile": {"image": "$(cat "$work/$2/iid")", "cmd": ["$3"]},
 "bounds": {"session_ms": 300000, "calls": 4096, "stdout_bytes": 4194304},
 "upstreams": {"vault": {"argv": ["$upstream", "--sink", "$work/$1.sink", "--mode", "$4"],
                         "timeout_ms": 20000, "paths": {"rw": ["$work"]}}},
 "tools": {"store": {"upstream": "vault", "remote": "store", "data_class": "confidential",
                     "sink_ceiling": "confidential", "response_ceiling": "confidential"}},
 "aliases": {"save": "store"},
 "initial": {"file": "$work/payload.json", "class": "confidential"}}
JSON
}
config loop image loop echo
config slow image loop slow
config quick image normal echo
config volume volume loop echo
config full image loop echo

# ---- an incident, start to end ----

console main --config "$work/loop.json"
check "the console starts and shows the sessions view" wait_for "Sessions" 20
# A session row in state running (not the header's "(1 running)").
wait_row() {
	local i
	for i in $(seq $(($2 * 10))); do
		sid=$(short_id_in "$1")
		[ -n "$sid" ] && return 0
		sleep 0.1
	done
	return 1
}
check "the session's row shows it running" wait_row running 60
check "the permitted tool's calls reach the sink" grows "$work/loop.sink" 10
d0=$(denied_of "$sid")

keys r		# no tool selected in the sessions view: opens the session's tools
check "revoke on a session opens its tools" wait_for "select a tool" 5
keys r
check "the revoke is acknowledged on screen" wait_for "REVOKED r" 10
check "revoked: the sink records nothing more" still "$work/loop.sink" 2
keys 1
sleep 1
d1=$(denied_of "$sid")
check "revoked: the session's denied counter rose ($d0 -> $d1)" test "${d1:-0}" -gt "${d0:-0}"
keys r; wait_for "select a tool" 5; keys R
check "restored: calls are allowed again" grows "$work/loop.sink" 10
keys 1

keys '?' PageDown
check "help lists the incident requests" wait_for " Incident" 5
check "help is generated from the keymap (X is force-stop)" wait_re "^ +X +force-stop" 5
keys Escape
keys /; keys -l zzz-no-such; keys Enter
check "filter: no row matches" wait_for 'no session matches "zzz-no-such"' 5
keys Escape
check "filter cleared" wait_for "$sid" 5

# laid_out LINES: with no key pressed, the key bar has moved to the
# second-to-last of LINES rows (a layout left at the old size keeps it
# where it was).
laid_out() {
	local i
	for i in $(seq 50); do
		screen | sed -n "$(($1 - 1))p" | grep -qF -- "] help" && return 0
		sleep 0.1
	done
	return 1
}
# The host view's rows are checks, not sessions: its key bar offers what
# works there, and what does not work there says so.
row_is() {	# ROW REGEX: that row of the screen matches it (within 5 s)
	local i
	for i in $(seq 50); do
		screen | sed -n "$1p" | grep -Eq -- "$2" && return 0
		sleep 0.1
	done
	return 1
}
keybar_is() { row_is 29 "$1"; }	# REGEX: the key bar (row 29 of 30) matches it
keys 5
check "host view: the key bar offers the checks' refresh" keybar_is '\[h\] refresh'
check "host view: no revoke, restore, force-stop, open or filter on offer" \
	keybar_is '^ \[j\] move \[h\] refresh \[:\] cmd \[\?\] help \[q\] quit *$'
keys r
check "host view: r says there is nothing to revoke" wait_for "no session or tool selected" 5
keys /
check "host view: / says the view has no filter" wait_for "the host view has no filter" 5
# The tools list across sessions acts on tools: nothing to open or stop.
keys 3
check "tools view: revoke and restore on offer, open and force-stop not" \
	keybar_is '^ \[j\] move \[r\] revoke \[R\] restore \[/\] filter \[:\] cmd \[\?\] help \[q\] quit *$'
keys X
check "tools view: X says no session is selected" wait_for "no live session selected" 5
# A session's detail does not offer to open itself.
keys 1 2
check "detail view: stop on offer, open not" \
	keybar_is '^ \[j\] move \[r\] revoke \[R\] restore \[X\] force-stop \[:\] cmd \[\?\] help \[q\] quit *$'
keys 1
check "sessions view: the key bar offers the incident keys again" \
	keybar_is '^ \[j\] move \[<Enter>\] open \[r\] revoke .*\[X\] force-stop \[/\] filter '
# Help lists a request bound only in another view's section with that
# view's name, not as unbound.
keys '?'
check "help: the host view's refresh is listed with its view and keys" \
	wait_re '^ +host: h <F5> +host-refresh '
help_bound() {	# the help is on screen and lists no request as unbound
	local s; s=$(screen)
	grep -qF -- "─ Help ─" <<<"$s" && ! grep -qF -- "(unbound)" <<<"$s"
}
check "help: no request on its first page is listed as unbound" help_bound
keys PageDown
check "help: the tools view's revoke-all is listed with its view and key" \
	wait_re '^ +tools: r +revoke-all '
check "help: no request on its second page is listed as unbound" help_bound
keys g
check "help: g goes to its top, its first group right under its title" row_is 3 '^ +Navigation *$'
check "…its ':' commands, at its end, not on screen" eval '! screen | grep -qE "^ +Commands: "'
keys G
check "help: G goes to its end, the ':' commands on screen" wait_re '^ +Commands: '
check "…and the help stays open" help_bound
keys Escape

tm resize-window -t ui -x 80 -y 24
check "resize to 80x24: laid out again without a key" laid_out 24
check "resize to 80x24: still drawn" wait_for "airlock" 5
# Too narrow for every key: the least needed are left out whole, never
# help and quit.
check "80 columns: the key bar leaves out move and filter, cuts nothing" \
	row_is 23 '^ \[<Enter>\] open \[r\] revoke \[R\] restore \[X\] force-stop \[:\] cmd \[\?\] help \[q\] quit *$'
tm resize-window -t ui -x 20 -y 5
check "resize to 20x5: laid out again without a key" laid_out 5
check "20 columns: the key bar keeps help and quit" row_is 4 '^ \[\?\] help \[q\] quit *$'
check "resize to 20x5: the console is still alive" kill -0 "$cpid"
tm resize-window -t ui -x 100 -y 30
check "resize back to 100x30: laid out again without a key" laid_out 30
check "resize back to 100x30" wait_for "Sessions" 5

# A revoke while a call is in flight: pending, then acknowledged.
command_line "run $work/slow.json"
check ":run starts a second session" wait_for "started from" 5
for _ in $(seq 300); do [ -s "$work/slow.sink" ] && break; sleep 0.1; done
check "the slow upstream holds a call in flight" test -s "$work/slow.sink"
keys 3
command_line "revoke store all"
check "a revoke across all sessions asks first" wait_for "on all 2 live sessions?" 5
keys y
check "the tools view shows an acknowledgement still pending" wait_for "1 wait" 5
check "then every session acknowledged" wait_for "2/2 acked" 20
check "the tools view says later sessions start without it" wait_for "2/2 acked, new sessions too" 5
check "the sinks record nothing after the acknowledgements" still "$work/loop.sink" 1
command_line "restore store all"; wait_for "live sessions?" 5; keys y
check "restore across all acknowledged" wait_for "restore r4 2/2 acked" 20
check "restored on all: later sessions start with it again" wait_gone "new sessions too" 5

# A prepared incident policy: confirmed, then acknowledged by every session.
echo '{"revoke": ["store"]}' >"$work/incident.json"
echo '{"revoke": ["store"], "shutdown": true}' >"$work/bad-incident.json"
command_line "apply $work/bad-incident.json"
check ":apply refuses a policy with other keys, naming the key" \
	wait_for 'bad-incident.json: a key "shutdown": none of revoke' 5
# A FIFO nobody writes would hold the console in open: refused at once
# (the screen answers the next command).
mkfifo "$work/incident.fifo"
command_line "apply $work/incident.fifo"
check ":apply refuses a FIFO without waiting on it" wait_for "incident.fifo: not a regular file" 5
command_line "apply $work/no-such-incident.json"
check ":apply of a missing file says it cannot open it" \
	wait_for "no-such-incident.json: cannot open: No such file or directory" 5
# The command line recalls what was entered (Up, Down, back to the draft),
# and Ctrl-U and Ctrl-W edit it.
status_is() { row_is 30 "$1"; }	# REGEX: the status line (row 30 of 30) matches it
keys ':'; keys -l "rev"; keys Up
check "command line: Up recalls the last command" status_is "^:apply $work/no-such-incident\.json *\$"
keys Up
check "command line: Up again, the one before" status_is "^:apply $work/incident\.fifo *\$"
keys Down Down
check "command line: Down past the last, the draft again" status_is '^:rev *$'
keys -l " store  all"; keys C-w
check "command line: Ctrl-W deletes the last word" status_is '^:rev store *$'
keys C-u
check "command line: Ctrl-U clears it" status_is '^: *$'
# Tab completes what can stand there: a command, a tool, a scope.
keys -l "rev"; keys Tab
check "command line: Tab completes a command" status_is '^:revoke *$'
keys -l "sto"; keys Tab
check "command line: Tab completes a live session's tool" status_is '^:revoke store *$'
keys -l "mar"; keys Tab
check "command line: Tab completes the scope" status_is '^:revoke store marked *$'
keys C-u; keys -l "re"; keys Tab
check "command line: Tab on re (revoke, restore) adds nothing" status_is '^:re *$'
keys C-u; keys -l "apply $work/incident.j"; keys Tab
check "command line: Tab completes a file's path" status_is "^:apply $work/incident\.json *\$"
keys Escape
command_line "apply $work/incident.json"
check ":apply asks first" wait_for "revoke 1, restore 0 tools on all 2 sessions?" 5
keys y
check ":apply: every session acknowledged" wait_for "revoke r5 2/2 acked" 20
check ":apply: the sink records nothing more" still "$work/loop.sink" 2
command_line "restore store all"; wait_for "live sessions?" 5; keys y
wait_for "restore r6 2/2 acked" 20
# A prepared hold: the question names it, every session acknowledges, each
# call waits for an operator; a restore lifts it and the calls go on.
echo '{"hold": ["store"], "why": {"store": "under review"}}' >"$work/hold-incident.json"
command_line "apply $work/hold-incident.json"
check ":apply of a hold asks first, naming it" \
	wait_for "revoke 0, hold 1, restore 0 tools on all 2 sessions?" 5
keys y
check ":apply: the hold acknowledged by every session" wait_for "hold r7 2/2 acked" 20
check ":apply: held, the sink records nothing more" still "$work/loop.sink" 2
command_line "restore store all"; wait_for "live sessions?" 5; keys y
wait_for "restore r8 2/2 acked" 20
check "restored: the calls reach the sink again" grows "$work/loop.sink" 10

# An alias names its catalog tool on every session: on all, asked first
# like the tool's own name (the snapshot names no alias); n changes nothing.
rev_now() { screen | grep -oE '│ rev [0-9]+ │' | head -n 1; }
rev_before=$(rev_now)
command_line "revoke save all"
check "revoke of an alias on all asks first, as of its tool" wait_for "revoke save on all 2 live sessions? [y/N]" 5
keys n
sleep 1
check "…n: no revision taken" [ "$(rev_now)" = "$rev_before" ]
command_line "restore save all"
check "restore of an alias on all asks first too" wait_for "restore save on all 2 live sessions? [y/N]" 5
keys n
# A tool no config of the engine has (a typo) is the engine's to refuse, in
# the words ctl prints (tests/docker/serve.sh): on all, asked first (it might
# be an alias), then refused; no revision.
command_line "restore no.such.a"
check "restore of a tool no config has, on all: asked first" \
	wait_for "restore no.such.a on all 2 live sessions? [y/N]" 5
keys y
check "…y: the engine's refusal, word for word" \
	wait_for "no config this engine holds has a tool 'no.such.a'" 5
command_line "revoke no.such.b $sid"
check "revoke of it on one session: the same words" \
	wait_for "no config this engine holds has a tool 'no.such.b'" 5
command_line "revoke no.such.c all"
check "revoke of it on all: asked first" wait_for "revoke no.such.c on all 2 live sessions? [y/N]" 5
keys y
check "…then refused in the same words" \
	wait_for "no config this engine holds has a tool 'no.such.c'" 5
check "the refusals took no revision" [ "$(rev_now)" = "$rev_before" ]
# ':' while a question is shown: the question cancelled, the ':' line open,
# so what the operator goes on typing is a command, not the view's keys.
command_line "revoke store all"
wait_for "revoke store on all 2 live sessions? [y/N]" 5
keys ':'
check "':' on a question: cancelled, and the ':' line opens for the command" status_is '^: *$'
keys -l "revoke store"
check "…what follows is typed on that line" status_is '^:revoke store *$'
keys Escape
sleep 1
check "…nothing done: no revision" [ "$(rev_now)" = "$rev_before" ]
# Sessions by the engine's rule: a unique prefix, else its words.
command_line "revoke store zz9"
check ":revoke on an unknown session: 'no such session', the engine's words" \
	wait_for "revoke: no such session: no session id starts with 'zz9'" 5
command_line "stop s-"
check ":stop of a prefix every session has: refused as ambiguous, with the count" \
	wait_re "stop: no such session: ambiguous session id prefix 's-': [0-9]+ sessions match" 5

# The kill switch: F freezes at once (no question), the header and the
# session's row say so, the upstream's observer sees nothing after it; a
# second F is refused; T asks, then thaws.
keys 1 g
keys F
check "freeze: the header names it, its revision and its author (from the kernel)" \
	wait_re "FROZEN since r[0-9]+ by $(id -un) " 10
check "freeze: the session's row shows its gate frozen" wait_re "$sid .* frozen *$" 5
check "frozen: the sink records nothing more" still "$work/loop.sink" 2
# (The slow session acknowledges once its call in flight is over: the
# loop session's entry is there at once, and every one names the author.)
freezes() { sqlite3 "file:$work/main.db?mode=ro" "select count(*) from audit_entries
	where type='policy' and rule='freeze applied' $1"; }
check "frozen: the policy entries name their author" bash -c '[ "$1" -ge 1 ] && [ "$2" = 0 ]' _ \
	"$(freezes "and detail like '%\"by\":\"$(id -un)\"%\"via\":\"console\"%'")" \
	"$(freezes "and (detail is null or detail not like '%\"by\":\"$(id -un)\"%')")"
keys F
check "freeze again: refused, naming since when and by whom" wait_for "frozen already since r" 5
keys T
check "thaw asks first" wait_for "thaw: let calls through again on all" 5
keys y
check "thawed: the header no longer says FROZEN" wait_gone "FROZEN since" 10
check "thawed: calls are allowed again" grows "$work/loop.sink" 10

# An admission refusal, read in the session's detail.
command_line "run $work/volume.json"
keys 1
check "the refused session ends admission_refused" wait_for "admission_refused" 30
keys G Enter
check "its detail shows the refusing check, itemised" wait_for "REFUSE image_volumes" 5

# Force-stop, confirmed; the container is gone within 1 s.
keys 1 g
cid=$(container_of "$sid")
check "the first session's container is known" test -n "$cid"
keys X
check "force-stop asks first" wait_for "force-stop session" 5
t0=$(date +%s%N)
keys y
gone=no stopped=
[ -n "$cid" ] && for _ in $(seq 100); do
	[ -z "$stopped" ] && [ -z "$("$DOCKER" ps -q --filter "id=$cid")" ] && stopped=$(( ($(date +%s%N) - t0) / 1000000 ))
	"$DOCKER" ps -aq --no-trunc --filter label=io.airlock.managed=1 | grep -q "^$cid" || { gone=yes; break; }
	sleep 0.01
done
t1=$(date +%s%N)
stopped=${stopped:-$(( (t1 - t0) / 1000000 ))}	# stopped and removed between two polls
echo "   measured: force-stop confirmed -> container not running in ${stopped} ms, gone from the label list in $(( (t1 - t0) / 1000000 )) ms"
check "force-stop: the container is gone (re-listed by label) within 1 s" test "$gone" = yes
check "force-stop: the session ends operator_stop" wait_for "operator_stop" 15

# 50 sessions started and ended while the console runs.
ends() { sqlite3 "file:$work/main.db?mode=ro" "select count(*) from audit_entries where type='session_end'" 2>/dev/null || echo 0; }
e0=$(ends)
for i in $(seq 50); do command_line "run $work/quick.json"; sleep 0.05; done
for _ in $(seq 1200); do
	[ "$(ends)" -ge $((e0 + 50)) ] && break
	sleep 0.1
done
check "50 sessions started and ended (audit: $(( $(ends) - e0 )) ends)" test "$(ends)" -ge $((e0 + 50))
check "50 sessions later the console is alive" kill -0 "$cpid"
check "50 sessions later the header still draws" wait_for "airlock │" 5

keys q
check "quit asks while sessions are live" wait_for "stop them all and quit?" 5
keys y
check "quit: the console exits 0" wait_for "exit status 0" 60
check "quit: 0 containers left" test "$(containers_of_console)" = 0
# The log's head, printed at quit (joined: the line is wider than the pane).
printed_head() { tm capture-pane -p -J -t ui | sed -n "s|^airlock console: audit $1: head \([0-9]*:[0-9a-f]\{64\}\)[[:space:]]*\$|\1|p" | tail -n 1; }
head_main=$(printed_head "$work/main.db")
check "quit: the console prints the log's head" test -n "$head_main"
check "quit: it is the head audit verify reads ($head_main)" \
	bash -c "'$airlock' audit verify '$work/main.db' | grep -qx 'audit $work/main.db: head ${head_main:-none}'"
check "quit: it anchors a later verify" "$airlock" audit verify --anchor "${head_main:-0:none}" "$work/main.db"

# ---- read-only ----

# Read-only, with the operator's own keys: one rebinding, one bad line.
printf '# mine\nbind generic K force-stop\nbind generic x revok\nunbind generic X\n' >"$work/keys"
keys_file=$work/keys
console ro --read-only --config "$work/loop.json"
keys_file=
check "keys: a bad line is reported with its line number" wait_for "keys:3: unknown request 'revok'" 10
check "read-only: the session's row shows it running" wait_row running 60
keys r
check "read-only: revoke refused on the status line" wait_for "read-only: revoke refused" 5
keys K
check "read-only: force-stop (rebound to K) refused" wait_for "read-only: force-stop refused" 5
tm resize-window -t ui -x 60 -y 30
check "read-only, 60 columns: the refused keys leave the key bar first" \
	keybar_is '^ \[<Enter>\] open \[/\] filter \[:\] cmd \[\?\] help \[q\] quit *$'
tm resize-window -t ui -x 100 -y 30
command_line "run $work/quick.json"
check "read-only: :run refused" wait_for "read-only: run refused" 5
keys '?' PageDown
check "read-only: help greys the destructive requests" wait_for "(read-only)" 5
check "keys: help shows the rebinding, not the unbound X" wait_re "^ +K +force-stop" 5
keys Escape q y
check "read-only: quit leaves 0 containers" wait_for "exit status 0" 60
test "$(containers_of_console)" = 0 || { echo "not ok: read-only containers left"; failed=$((failed + 1)); }

# ---- alerts on a desktop bus ----

bus_pid= monitor_pid= fake_pid=
start_bus() {
	cat >"$work/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:dir=$work</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
<allow own="*"/></policy></busconfig>
EOF
	local out
	out=$(dbus-daemon --config-file="$work/bus.conf" --fork --nopidfile --print-address=1 --print-pid=1) || return 1
	bus_addr=$(sed -n 1p <<<"$out") bus_pid=$(sed -n 2p <<<"$out")
	dbus-monitor --address "$bus_addr" "interface='org.freedesktop.Notifications'" >"$work/monitor.log" 2>&1 &
	monitor_pid=$!
	"$fake_notifyd" "$bus_addr" >"$work/fake.log" 2>&1 &
	fake_pid=$!
	for _ in $(seq 100); do grep -q '^ready$' "$work/fake.log" && return 0; sleep 0.1; done
	return 1
}
if [ -n "$fake_notifyd" ] && command -v dbus-daemon >/dev/null; then
	check "a private session bus with a notification server" start_bus
	bus_env="DBUS_SESSION_BUS_ADDRESS=$bus_addr"
	console bus --config "$work/loop.json"
	bus_env=
	wait_row running 60
	command_line "revoke store all"; wait_for "live sessions?" 5; keys y
	check "bus: the cutover alert sticks on the status line" wait_for "! cutover r1: revoke store on 1 session" 10
	for _ in $(seq 100); do grep -q 'cutover r1: revoke store on 1 session' "$work/monitor.log" && break; sleep 0.1; done
	check "bus: the desktop got the same fixed text (Notify seen on the bus)" \
		grep -q 'string "cutover r1: revoke store on 1 session"' "$work/monitor.log"
	keys d
	check "bus: d dismisses the alert" wait_gone "! cutover r1" 5
	for op in restore revoke restore; do
		command_line "$op store all"; wait_for "live sessions?" 5; keys y
		wait_re "$op r[0-9]+ 1/1 acked" 10
	done
	check "bus: three alerts wait: the status line counts them and names D for all" \
		wait_re '^! cutover r2: .*\(1 of 3, d: dismiss, D: all\)' 15
	keys D
	check "bus: D dismisses every one" wait_gone "! cutover r" 5
	keys q y
	check "bus: quit leaves 0 containers" wait_for "exit status 0" 60
	check "bus: no canary on the bus" bash -c "! grep -q '$canary' '$work/monitor.log'"
	kill "$fake_pid" "$monitor_pid" 2>/dev/null; kill "$bus_pid" 2>/dev/null
else
	echo "# no fake notification server or dbus-daemon: the bus phase did not run"
	failed=$((failed + 1))
fi

# ---- plain airlock on a terminal: the console, its audit log in $HOME ----

cmdline=" " console bare
check "bare airlock: the console opens, empty" wait_for "no sessions yet" 20
keys q
check "bare airlock: q quits at once with no live session" wait_for "exit status 0" 10
check "bare airlock: the audit log went to the state directory" test -s "$work/home/.local/state/airlock/audit.db"

# ---- the audit view cannot read the log: it says so, and does not look empty ----
# The table dropped under an idle console: every read of the tail fails.
console tailgone
check "tail gone: the console opens" wait_for "no sessions yet" 20
keys 4
check "tail gone: the audit view is empty while the log reads" wait_for "no audit entries yet" 5
sqlite3 "$work/tailgone.db" "DROP TABLE audit_entries"
check "tail gone: an alert says the view cannot read the log" \
	wait_for "! audit view: the log cannot be read (audit tail: cannot read entries): not following it" 10
check "tail gone: the view says why it shows nothing" \
	wait_for "the audit log cannot be read: audit tail: cannot read entries" 5
check "tail gone: its title says it is not following" wait_for "not following: the log cannot be read" 5
# The table back (empty, as created): the view reads and follows again.
sqlite3 "$work/tailgone.db" "$(sqlite3 "$work/main.db" .schema)"
check "tail back: the view follows again" wait_for "no audit entries yet" 10
check "tail back: its title no longer says it is not following" wait_gone "not following: the log cannot be read" 5
sqlite3 "$work/tailgone.db" "DROP TABLE audit_entries"
check "tail gone again: the view says so again" wait_for "the audit log cannot be read" 10
keys q
check "tail gone: quitting says the log's head cannot be read" \
	wait_for "airlock console: audit $work/tailgone.db: its head cannot be read" 10

# ---- the built-in demo ----

console demo --demo
check "demo: a session is running within 60 s" wait_row running 90
check "demo: a second kind of agent shows up (pester's denials)" wait_re "[0-9]+/[1-9][0-9]* " 30
keys q
wait_for "stop them all and quit?" 10
keys y
check "demo: quit exits 0" wait_for "exit status 0" 60
check "demo: 0 containers left" test "$(containers_of_console)" = 0
check "demo: no screen shows the demo's secret" bash -c "! grep -l '$demo_canary' '$work'/shot-*.screen"
# The log named with --audit is the one the demo's sessions wrote, and it stays.
check "demo: its sessions' entries are in the --audit log, kept after quit" \
	test "$(sqlite3 "$work/demo.db" "SELECT count(DISTINCT session_id) FROM audit_entries WHERE type = 'call'" 2>/dev/null || echo 0)" -ge 2
check "demo: that log verifies" "$airlock" audit verify "$work/demo.db"
check "demo: that log does not hold the demo's secret" bash -c "test -s '$work/demo.db' && ! grep -qa '$demo_canary' '$work'/demo.db*"

# ---- the audit log's disk fills up: fail closed, and the operator is told ----
# The log alone is on a small tmpfs of the console's own mount namespace.
mkdir -p "$work/small"
console_wrap="$here/small-disk $work/small 256" cmdline="console --audit $work/small/audit.db" \
	console full --config "$work/full.json"
check "audit full: the session runs and its calls reach the sink" grows "$work/full.sink" 60
check "audit full: the header says audit FAIL once the log refuses a write" wait_for "audit FAIL" 120
check "audit full: an alert says the log refused the session's writes" \
	wait_re "^! audit log refused [1-9][0-9]* writes? of session [0-9a-f]{8}: the log is incomplete" 5
check "audit full: the session ended audit_failed" wait_re "^[ ▶*]+[0-9a-f]{8} +ended .* audit_failed$" 10
check "audit full: nothing more reaches the sink" still "$work/full.sink" 2
keys Enter
check "audit full: the detail counts the refused writes" \
	wait_re "audit incomplete: the log refused [1-9][0-9]* of this session's writes" 10
keys q
check "audit full: quitting says the log is incomplete" wait_re "^airlock console: the audit log refused [1-9][0-9]* writes" 20
check "audit full: and exits 1" wait_for "exit status 1" 5
check "audit full: 0 containers left" test "$(containers_of_console)" = 0

# ---- a daemon outage: the console says so, and the engine cleans up after it ----
# The console reaches the daemon through a relay that the test cuts: the
# daemon (and the container) go on running, as they do under containerd
# when dockerd dies, but the engine can neither remove nor stop it.

relay_state() { [ "$(cat "$work/relay.state" 2>/dev/null)" = "$1" ]; }
relay_to() {	# STATE: cut or up
	local i
	kill -"$([ "$1" = cut ] && echo USR1 || echo USR2)" "$relay_pid"
	for i in $(seq 50); do relay_state "$1" && return 0; sleep 0.1; done
	return 1
}
gone_from_daemon() {	# CONTAINER SECONDS
	local i
	[ -n "$1" ] || return 1
	for i in $(seq $(($2 * 10))); do
		[ -z "$("$DOCKER" ps -aq --no-trunc --filter "id=$1")" ] && return 0
		sleep 0.1
	done
	return 1
}
python3 "$here/../docker/relay.py" "$work/relay.sock" "$sock" "$work/relay.state" &
relay_pid=$!
for _ in $(seq 50); do relay_state up && break; sleep 0.1; done
check "outage: the relay to the daemon is up" relay_state up
console_env="DOCKER_HOST=unix://$work/relay.sock" console outage --config "$work/loop.json"
check "outage: the session runs through the relay" wait_row running 60
box=$(container_of "$sid")
check "outage: its container is known ($box)" test -n "$box"
check "outage: the daemon is cut off" relay_to cut
check "outage: the session ends" wait_re "^[ ▶*]+$sid +ended" 30
check "outage: the header says the daemon is unreachable" wait_for "daemon unreachable" 20
check "outage: the header counts the container left" wait_for "│ 1 container left" 10
check "outage, control: the container still runs at the daemon" \
	test "$("$DOCKER" inspect -f '{{.State.Running}}' "$box" 2>/dev/null)" = true
keys Enter
check "outage: the session's detail says its container was not removed" \
	wait_for "container not removed: the daemon did not answer" 10
check "outage: and that its exit is unknown, not that it never ran" wait_re "exit unknown" 5
keys 1
check "outage: the daemon is back" relay_to up
check "outage: the container left is removed once the daemon answers" gone_from_daemon "$box" 45
check "outage: the header shows the daemon again" wait_for "dockerd " 30
check "outage: and no container left" wait_gone "container left" 10
keys q
check "outage: quit exits 0" wait_for "exit status 0" 30
check "outage: 0 containers left" test "$(containers_of_console)" = 0

# Quit while the daemon is still gone: the console cannot know what it
# left, and says so; the session's watchdog, on its own, stops the
# container once the daemon is back.
stopped_at_daemon() {	# CONTAINER SECONDS
	local i
	[ -n "$1" ] || return 1
	for i in $(seq $(($2 * 10))); do
		[ "$("$DOCKER" inspect -f '{{.State.Running}}' "$1" 2>/dev/null)" = false ] && return 0
		sleep 0.1
	done
	return 1
}
console_env="DOCKER_HOST=unix://$work/relay.sock" console outage-quit --config "$work/loop.json"
check "outage quit: the session runs" wait_row running 60
box=$(container_of "$sid")
check "outage quit: the daemon is cut off" relay_to cut
check "outage quit: the session ends" wait_re "^[ ▶*]+$sid +ended" 30
keys q
check "outage quit: the console says it cannot know what is left" \
	wait_for "airlock console: stopped 0 live sessions; the daemon did not answer: containers left unknown" 30
check "outage quit: and exits with a failing status" wait_re "^exit status [1-9]" 10
check "outage quit, control: the container still runs at the daemon" \
	test "$("$DOCKER" inspect -f '{{.State.Running}}' "$box" 2>/dev/null)" = true
check "outage quit: the daemon is back" relay_to up
check "outage quit: the watchdog stops the container once the daemon answers" \
	stopped_at_daemon "$box" 10

# The demo through the same outage: it backs off instead of filling the
# list with refused starts every second, and refills once the daemon is back.
refused() { screen | grep -cE "^[ ▶*]+[0-9a-f]{8} +ended .* preflight_refused$"; }	# rows only
console_env="DOCKER_HOST=unix://$work/relay.sock" console demo-outage --demo
check "demo outage: a session is running" wait_row running 90
check "demo outage: the daemon is cut off" relay_to cut
check "demo outage: its starts are refused" wait_for " preflight_refused" 20
sleep 20
n=$(refused)
# Four slots refused at once, then one slot at a time after 2, 4 and 8 s:
# seven, one more for a slot that ended a tick later. Without the back-off
# the refusals fill every kept row (twelve) within seconds.
check "demo outage: few refused starts in 20 s ($n, at most 8)" test "$n" -le 8
check "demo outage: the daemon is back" relay_to up
check "demo outage: a session runs again" wait_row running 60
keys q
wait_for "stop them all and quit?" 10
keys y
check "demo outage: quit exits 0" wait_for "exit status 0" 60
check "demo outage: 0 containers left" test "$(containers_of_console)" = 0
kill "$relay_pid" 2>/dev/null; relay_pid=

# ---- the demo with no daemon to reach: one clear error, a failing status ----

console_env="DOCKER_HOST=unix://$work/no-daemon.sock" console nodaemon --demo
check "demo, no daemon: it exits with a failing status" wait_re "^exit status [1-9]" 20
check "demo, no daemon: the error says what it could not reach, prefixed once" \
	wait_re "^airlock console: demo: cannot look for the agent image: .*cannot conn" 2

# ---- payload never on a screen ----
check "positive control: the canary reached the permitted sink" grep -q "$canary" "$work/loop.sink"
shots=$(ls "$work"/shot-*.screen 2>/dev/null | wc -l)
check "screens were captured ($shots)" test "$shots" -gt 100
check "no captured screen shows the canary" bash -c "! grep -l '$canary' '$work'/shot-*.screen"

summary
