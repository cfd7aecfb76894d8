#!/usr/bin/env bash
# A console attached to an engine that pushes snapshot deltas
# (docs/operations.md, "Snapshot deltas"), in tmux, against a scripted
# engine (delta_engine.py): the real console must draw a whole snapshot and
# a delta on it, must not draw a delta made on a base it does not hold,
# must subscribe again, and must draw the whole snapshot that follows;
# after three such misfits in a row it must ask for whole snapshots only.
# A real engine never sends a delta on another base; this one does, as a
# broken or hostile engine could.
#
# usage: deltas.sh AIRLOCK
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../docker/common.sh"
command -v tmux >/dev/null || { echo "not ok: tmux is not installed (scripts/setup installs it)"; exit 1; }

airlock=$(readlink -f "$1")
scratch_dir
. "$here/../checks.sh"
tmux_sock=airlock-deltas-$$
on_teardown() { tmux -L "$tmux_sock" kill-server 2>/dev/null; }
on_not_ok() { echo "--- the screen:"; cat "$work/last.screen" 2>/dev/null; echo "--- the engine:"; cat "$work/engine.log" 2>/dev/null; }
tm() { tmux -L "$tmux_sock" -f /dev/null "$@"; }
screen() { tm capture-pane -p -t ui >"$work/last.screen" 2>/dev/null; cat "$work/last.screen"; }
wait_for() {	# TEXT SECONDS
	local i
	for i in $(seq $(($2 * 10))); do
		screen | grep -qF -- "$1" && return 0
		sleep 0.1
	done
	return 1
}
# Until TEXT shows (SECONDS at most), no screen may show NEVER (a regex).
until_never() {	# TEXT NEVER SECONDS
	local i
	for i in $(seq $(($3 * 10))); do
		screen >"$work/now.screen"
		grep -qE -- "$2" "$work/now.screen" && { cp "$work/now.screen" "$work/last.screen"; return 1; }
		grep -qF -- "$1" "$work/now.screen" && return 0
		sleep 0.1
	done
	return 1
}

python3 "$here/delta_engine.py" "$work/engine.sock" "$work/engine.log" &
helpers+=($!)
for _ in $(seq 50); do [ -S "$work/engine.sock" ] && break; sleep 0.1; done
check "the scripted engine listens" [ -S "$work/engine.sock" ] || { summary; exit 1; }
tm new-session -d -s ui -x 120 -y 20 \
	"env TERM=tmux-256color NO_COLOR=1 TZ=UTC LANG=C.UTF-8 HOME=$work $airlock console --connect $work/engine.sock; sleep 60"

check "the whole snapshot is drawn (11 allowed calls)" wait_for " 11/0 " 10
check "a delta on it is drawn (22)" wait_for " 22/0 " 10
check "a delta on another base is never drawn (999), and the next whole one is (33)" \
	until_never " 33/0 " "999/" 20
check "no delta on another base is ever drawn (998, 997), and the whole one after the third misfit is (44)" \
	until_never " 44/0 " "99[789]/" 20
check "the console subscribed with deltas, then again after each of the first two misfits" \
	[ "$(grep -c '^subscribed deltas=True$' "$work/engine.log")" = 3 ]
check "…the second time after the misfit was pushed" \
	awk '/^pushed delta 999/ { p = NR } /^subscribed/ && ++s == 2 { q = NR }
	     END { exit !(p && q && p < q) }' "$work/engine.log"
check "after the third misfit in a row it subscribed for whole snapshots only" \
	awk '/^pushed delta 997/ { p = NR } /^subscribed/ { s++; if (s == 4) { q = NR; w = $0 } }
	     END { exit !(p && q && p < q && w == "subscribed deltas=False") }' "$work/engine.log"
summary
