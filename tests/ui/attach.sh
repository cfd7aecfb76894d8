#!/usr/bin/env bash
# Consoles attached to running engines (`airlock console --connect`), in
# tmux, against two real `airlock serve` engines on the real daemon, and
# one console through a real sshd on 127.0.0.1:
#   - a console on an idle engine (no session): fresh, never STALE
#   - two consoles on engine A: a revoke in one shows in the other with its
#     author, and in its audit view (engine A's own log, over the link);
#     quitting one asks nothing, detaches, and the sessions go on
#   - one console over engines A and B: an ENGINE column, each engine in
#     the header, a revoke on all answered per engine; the kill switch (F)
#     stops the sink of A's looping agent, a thaw (T, y) lets it go again
#   - as uid 65534 with no ACL and no chmod (serve's own 0666 socket): a
#     view-group console is view only and its revoke is refused; one in
#     neither group shows the engine's refusal, naming both groups, on the
#     status line
#   - engine A SIGKILLed: the console shows it lost, never freezes (a key
#     still answers), the watchdogs stop A's container; a new engine on the
#     same socket is found again on its own
#   - ssh://root@127.0.0.1:PORT/SOCKET: a console through sshd sees B's
#     session and revokes on it; the engine acknowledges
# Every screen is kept and searched for the payload's canary (absent), with
# the positive control that the canary reached the permitted sink.
#
# usage: attach.sh AIRLOCK AGENT_BIN UPSTREAM_BIN
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../docker/common.sh"
require_daemon
command -v tmux >/dev/null || { echo "not ok: tmux is not installed (scripts/setup installs it)"; exit 1; }

airlock=$(readlink -f "$1") agent=$(readlink -f "$2") upstream=$(readlink -f "$3")
scratch_dir
chmod 0755 "$work"
. "$here/../checks.sh"
. "$here/tmux_lib.sh"
canary="ATTACH-CANARY-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')"
tmux_sock=airlock-attach-$$
# The engines are among the helpers: their containers are this suite's.
owner_pids() { printf '%s\n' "${helpers[@]}"; }
made_groups=()
on_teardown() {
	local s g
	for s in idle one two many view none lostq solo far; do tm_close "$s"; done
	[ -n "${sshd_pid:-}" ] && kill "$sshd_pid" 2>/dev/null
	for g in "${made_groups[@]}"; do groupdel "$g" 2>/dev/null; done
}
# The view group: made here when missing, removed after.
if [ -z "$(getent group airlock-view)" ]; then
	groupadd airlock-view && made_groups+=(airlock-view)
fi
vg=$(getent group airlock-view | cut -d: -f3)
on_not_ok() { tail -n 30 "$work/last.screen" 2>/dev/null | sed 's/^/    | /'; }

# --- the image, the payload, the configs ---------------------------------------
image=$(scratch_image "$work/image" "$agent") || { not_ok "agent image build"; summary; exit 1; }
printf '{"canary":"%s"}\n' "$canary" >"$work/payload.in"
loop_config a
loop_config b

# serve NAME: engine NAME on $work/NAME.sock, its audit $work/NAME.db; sets pid_NAME.
serve() {
	local name=$1 i
	"$airlock" serve --name "$name" --socket "$work/$name.sock" --audit "$work/$name.db" \
		--config "$work/$name/config.json" 2>>"$work/$name.log" </dev/null &
	eval "pid_$name=$!"
	helpers+=("$!")
	for i in $(seq 300); do
		[ "$(grep -c "listening on" "$work/$name.log" 2>/dev/null)" -ge "${2:-1}" ] && return 0
		kill -0 "$!" 2>/dev/null || { sed 's/^/    | /' "$work/$name.log"; return 1; }
		sleep 0.1
	done
	return 1
}
sid_of() { "$airlock" ctl --socket "$work/$1.sock" --json sessions | python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    for s in d.get("snapshot", d).get("sessions", []):
        if s["state"] == "running": print(s["id"]); sys.exit(0)'; }
container_of() { "$DOCKER" ps -q --no-trunc --filter "label=io.airlock.session=$1" | head -n 1; }
lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }
grows() {	# FILE SECONDS
	local n; n=$(lines "$1")
	for _ in $(seq $(($2 * 10))); do [ "$(lines "$1")" -gt "$n" ] && return 0; sleep 0.1; done
	return 1
}
still() {	# FILE SECONDS: the sink, which did record calls, records nothing for SECONDS
	local n; n=$(lines "$1"); [ "$n" -gt 0 ] || return 1
	sleep "$2"; [ "$(lines "$1")" = "$n" ]
}

rows_of_both() {	# NAME: soon, a row of a's session marked a, and one of b's marked b
	local s i
	[ -n "$short_a" ] && [ -n "$short_b" ] || return 1
	for i in $(seq 200); do
		s=$(screen "$1")
		grep -Eq "^. *a +$short_a " <<<"$s" && grep -Eq "^. *b +$short_b " <<<"$s" && return 0
		sleep 0.1
	done
	return 1
}

# --- two engines, each with one looping session --------------------------------
if ! check "engine a listens" serve a || ! check "engine b listens" serve b; then
	summary
	exit 1
fi
for _ in $(seq 100); do sid_a=$(sid_of a); sid_b=$(sid_of b); [ -n "$sid_a" ] && [ -n "$sid_b" ] && break; sleep 0.2; done
both_ids() { [ -n "$sid_a" ] && [ -n "$sid_b" ]; }
check "a session runs on each engine" both_ids
# The console shows an id without its "s-", cut to 8.
short_a=${sid_a#s-} short_b=${sid_b#s-}
short_a=${short_a:0:8} short_b=${short_b:0:8}
check "a's agent reaches its sink" grows "$work/a/vault.sink" 15

# --- an idle engine: no session, and its console's snapshot is fresh ------------
"$airlock" serve --name idle --socket "$work/idle.sock" --audit "$work/idle.db" \
	2>>"$work/idle.log" </dev/null &
pid_idle=$!
helpers+=("$pid_idle")
for _ in $(seq 300); do grep -q "listening on" "$work/idle.log" 2>/dev/null && break; sleep 0.1; done
console idle --connect "$work/idle.sock"
check "an idle engine's console: its name and 0 sessions" wait_re idle "│ idle r0 │ 0 sessions" 20
check "…and the header drops STALE once the engine answers (no rows is fresh too)" \
	gone_from idle STALE 10
sleep 3	# past the 1.5 s after which a snapshot not renewed is marked stale
check "…and stays fresh" eval '! screen idle | grep -q STALE'
tm_close idle
# The same where the locale is not UTF-8 (an operator's `su -`): ASCII only.
console_env=LANG=C console idle-c --connect "$work/idle.sock"
check "LANG=C: the header in ASCII (' airlock | idle r0 | 0 sessions')" \
	wait_re idle-c "^ airlock [|] idle r0 [|] 0 sessions" 20
check "…and no glyph it cannot show in it (no '?', no '│')" eval '! screen idle-c | head -1 | grep -qE "[?│]"'
tm_close idle-c
console_env=
kill "$pid_idle" && wait "$pid_idle"

# --- two consoles on engine a ---------------------------------------------------
console one --connect "$work/a.sock"
console two --connect "$work/a.sock"
check "console one shows a's session" wait_for one "$short_a" 20
check "console two shows a's session" wait_for two "$short_a" 20
check "the header names the engine" wait_re one "│ a r[0-9]+ │" 10
command_line one "revoke store all"
check "a revoke on all asks first" wait_for one "revoke store on all 1 live sessions?" 5
keys one y
check "console one: the engine's answer, acknowledged" wait_re one "r[0-9]+: revoke store on 1 session: 1 acknowledged" 10
keys two 3
check "console two: the revoke shows with its author" wait_re two "by root at r[0-9]+" 10
command_line two "restore store all"
keys two y
check "console two: the restore is acknowledged" wait_re two "restore store on 1 session: 1 acknowledged" 10
command_line two "revoke save all"
keys two y
check "console two: a revoke by alias says the catalog tool it acted on" \
	wait_re two "revoke save \(store\) on 1 session: 1 acknowledged" 10
command_line two "restore save all"
keys two y
check "…and so does its restore" wait_re two "restore save \(store\) on 1 session: 1 acknowledged" 10
keys two 4
check "console two: the audit view shows engine a's own log, through the link" \
	wait_re two "Audit.* [1-9][0-9]* entr(y|ies)" 10
check "…with the revoke's policy entry (tool store)" wait_re two "policy .*store" 10
keys two 1
keys one q
check "quitting an attached console asks nothing and detaches" wait_re one "detached from 1 engine; their 1 live session goes on" 10
check "exit status 0" wait_for one "exit status 0" 5
check "a's session still runs after the console left" running "$(container_of "$sid_a")"
check "and still reaches its sink" grows "$work/a/vault.sink" 10
keys two q
wait_for two "exit status" 5 >/dev/null

# --- one console over both engines ------------------------------------------------
console many --connect "$work/a.sock" --connect "$work/b.sock"
check "the ENGINE column" wait_re many "ENGINE +ID" 20
check "both engines' sessions, each with its engine" rows_of_both many
check "the header shows each engine" wait_re many "a r[0-9]+ · b r[0-9]+" 10
command_line many "revoke store all"
keys many y
check "a revoke on all is answered per engine, in the engines' order" \
	wait_re many "a: r[0-9]+: revoke store on 1 session: 1 acknowledged · b: r[0-9]+: revoke store on 1 session: 1 acknowledged" 15
command_line many "restore store all"
keys many y
check "the restore likewise" wait_re many "b: r[0-9]+: restore store" 15
check "b's agent reaches its sink" grows "$work/b/vault.sink" 10
keys many F
check "F freezes every engine: each one FROZEN in the header, by name, its own revision" \
	wait_re many "FROZEN a since r[0-9]+ by root │ FROZEN b since r[0-9]+ by root" 10
sleep 1
check "frozen: a's sink sees nothing more" still "$work/a/vault.sink" 3
check "frozen: b's sink sees nothing more" still "$work/b/vault.sink" 2
keys many T
check "a thaw asks first" wait_for many "thaw: let calls through again" 5
keys many y
check "thawed: a's sink records again" grows "$work/a/vault.sink" 10
check "thawed: the header no longer says FROZEN" gone_from many "FROZEN " 10

# --- a view-only peer: the engine refuses its changes, whatever its console offers ----
# No chmod, no ACL: serve's own socket (0666) lets it in; the kernel's credentials decide.
# Its own copy of the program, where uid 65534 can reach it: the build may
# sit in a clone no other user can enter (a mktemp -d, root's home).
mkdir -p "$work/bin" && install -m 0755 "$airlock" "$work/bin/airlock"
console_as="setpriv --reuid 65534 --regid 65534 --groups $vg" console_bin=$work/bin/airlock \
	console view --connect "$work/b.sock"
check "a view-group member's console: the header says view only" wait_for view "b r" 20 &&
	check "…(view only)" wait_for view "(view only)" 5
offers_changes() { screen "$1" | grep -qE '\] (revoke|restore|force-stop) '; }
check "a view-only console's key bar offers no change: no revoke, restore or force-stop" \
	eval '! offers_changes view'
keys view X
check "X is refused at once, without a question: 'view only: force-stop refused'" \
	wait_for view "view only: force-stop refused" 5
check "…and nothing asks y/N" eval '! screen view | grep -qF "[y/N]"'
command_line view "revoke store all"
check ":revoke is refused at once: 'view only: revoke refused'" \
	wait_for view "view only: revoke refused" 5
check "…without the question a revoke on all asks" eval '! screen view | grep -qF "live sessions?"'
check "b's agent still reaches its sink" grows "$work/b/vault.sink" 10
keys view q

# --- a uid in neither group: the status line says the engine's reason, not a bare LOST ----
console_as="setpriv --reuid 65534 --regid 65534 --clear-groups" console_bin=$work/bin/airlock \
	console none --connect "$work/b.sock"
check "a console of a uid in neither group: LOST in the header" wait_for none "engine LOST" 20
check "…and the engine's refusal, naming both groups, on the status line" wait_for none \
	"engine: refused: not allowed: uid 65534 is in neither 'airlock' (operate) nor 'airlock-view' (view)" 10
keys none q

# --- engine a dies ------------------------------------------------------------------
console lostq --connect "$work/a.sock" --connect "$work/b.sock"
check "a second console over both engines" wait_re lostq "a r[0-9]+ · b r[0-9]+" 20
console solo --connect "$work/a.sock"
check "a console attached to a alone shows its session running" \
	wait_re solo "^. *$short_a +running " 20
ca=$(container_of "$sid_a")
kill -KILL "$pid_a"
check "a lost engine shows in the header" wait_re many "a (LOST|connecting)" 10
lost_and_live() { wait_re many "^. *a +$short_a +lost " 10 && screen many | grep -Eq "^. *b +$short_b +running "; }
check "staleness is each engine's: a's row says lost, b's still running" lost_and_live
check "a console of a alone: its row says lost, not running" wait_re solo "^. *$short_a +lost " 10
check "…its title counts it lost, not live" wait_re solo "Sessions .* [0-9]+, 0 live, 1 of lost engines" 5
check "…and its header counts no session running" wait_re solo "[0-9]+ sessions? \(0 running\)" 5
keys solo q
check "…quitting it names a as lost" \
	wait_re solo "detached from 1 engine; .*\(lost, not counted: a\)" 10
sleep 2
check "…and the header is not STALE while b answers" eval '! screen many | grep -q STALE'
keys lostq q
check "quitting counts b's live session alone and names a as lost" \
	wait_re lostq "detached from 2 engines; their 1 live session goes on \(lost, not counted: a\)" 10
keys many j
check "the console still answers keys while an engine is lost" wait_re many "a (LOST|connecting)" 2
for _ in $(seq 150); do stopped "$ca" && break; sleep 0.2; done
check "the watchdog stopped a's container" stopped "$ca"
check "a new engine on a's socket" serve a 2
check "the console finds it again on its own" wait_re many "· b r[0-9]+" 20
check "…and shows engine a connected again" wait_re many "a r[0-9]+ · b" 30
keys many q
wait_for many "exit status" 5 >/dev/null

# --- through ssh ----------------------------------------------------------------------
if command -v /usr/sbin/sshd >/dev/null && command -v ssh >/dev/null; then
	mkdir -p "$work/ssh" /run/sshd
	chmod 0700 "$work/ssh"
	ssh-keygen -q -t ed25519 -N '' -f "$work/ssh/host" && ssh-keygen -q -t ed25519 -N '' -f "$work/ssh/user"
	cp "$work/ssh/user.pub" "$work/ssh/authorized_keys"
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cat >"$work/ssh/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $port
HostKey $work/ssh/host
AuthorizedKeysFile $work/ssh/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
StrictModes no
UsePAM no
PidFile $work/ssh/sshd.pid
EOF
	cat >"$work/ssh/config" <<EOF
Host *
  IdentityFile $work/ssh/user
  IdentitiesOnly yes
  UserKnownHostsFile /dev/null
  StrictHostKeyChecking no
  LogLevel ERROR
EOF
	/usr/sbin/sshd -D -e -f "$work/ssh/sshd_config" 2>"$work/ssh/sshd.log" &
	sshd_pid=$!
	for _ in $(seq 50); do ssh -F "$work/ssh/config" -p "$port" root@127.0.0.1 true 2>/dev/null && break; sleep 0.1; done
	check "sshd answers on 127.0.0.1" ssh -F "$work/ssh/config" -p "$port" root@127.0.0.1 true
	console_env="AIRLOCK_SSH='ssh -F $work/ssh/config' AIRLOCK_REMOTE=$airlock"
	console far --connect "ssh://root@127.0.0.1:$port$work/b.sock"
	console_env=
	check "through ssh: b's session" wait_for far "$short_b" 20
	command_line far "revoke store all"
	keys far y
	check "through ssh: the revoke is acknowledged" wait_re far "r[0-9]+: revoke store on 1 session: 1 acknowledged" 15
	check "b's audit names the author, via console" \
		bash -c "sqlite3 '$work/b.db' \"select detail from audit_entries where type='policy'\" | grep -q '\"via\":\"console\"'"
	keys far q
	check "through ssh: quitting detaches" wait_for far "detached from 1 engine" 10
else
	not_ok "sshd or ssh missing (scripts/setup installs openssh-server and openssh-client)"
fi

# --- no payload on any screen ------------------------------------------------------
check "the canary reached a permitted sink (positive control)" grep -qF "$canary" "$work/a/vault.sink"
check "no screen shows the canary" bash -c "! grep -lF '$canary' '$work'/shot-*.screen"
check "no engine log holds the canary" bash -c "! grep -lF '$canary' '$work'/*.log"
summary
