#!/usr/bin/env bash
# The console's frame and its answer to a revoke keystroke:
#  1. render_bench: CPU per frame for every view with 200 sessions, beside
#     an empty frame (the floor);
#  2. in tmux against the real engine: N live sessions (CONSOLE_SESSIONS,
#     default 20), ':revoke store all' + y, then the time until the screen
#     shows the first acknowledgement and all of them; revoke and restore
#     alternate, CONSOLE_ROUNDS times (default 10). The screen is polled
#     every 10 ms, so each figure is up to 10 ms late.
# usage: console_bench.sh RENDER_BENCH AIRLOCK AGENT_BIN UPSTREAM_BIN
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/docker/common.sh"
render=$(readlink -f "$1") airlock=$(readlink -f "$2") agent=$(readlink -f "$3") upstream=$(readlink -f "$4")
n=${CONSOLE_SESSIONS:-20} rounds=${CONSOLE_ROUNDS:-10}

"$render" 200 400
require_daemon
scratch_dir
tmux_sock=airlock-bench-$$
tm() { tmux -L "$tmux_sock" -f /dev/null "$@"; }
on_teardown() { tm send-keys -t b q y 2>/dev/null; sleep 5; tm kill-server 2>/dev/null; }
image=$(scratch_image "$work/image" "$agent")
args=()
mkdir -p "$work/sinks" && upstream_box "$work/sinks" || exit 1	# the upstreams', confined
for i in $(seq "$n"); do
	cat >"$work/$i.json" <<JSON
{"profile": {"image": "$image", "cmd": ["loop"]},
 "bounds": {"session_ms": 600000, "calls": 4096, "stdout_bytes": 4194304},
 "upstreams": {"u": {"argv": ["$upstream", "--sink", "$work/sinks/$i.sink"],
                     "paths": {"rw": ["$work/sinks"]}}},
 "tools": {"store": {"upstream": "u", "remote": "store", "data_class": "public",
                     "sink_ceiling": "public", "response_ceiling": "public"}},
 "aliases": {"save": "store"}, "initial": {"class": "public"}}
JSON
	args+=(--config "$work/$i.json")
done
tm new-session -d -s b -x 120 -y 40 "env TERM=tmux-256color NO_COLOR=1 LANG=C.UTF-8 $airlock console --audit $work/a.db ${args[*]}"
for _ in $(seq 1200); do
	tm capture-pane -p -t b | grep -q "($n running)" && break
	sleep 0.1
done
tm send-keys -t b 3
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
first=() all=()
for r in $(seq "$rounds"); do
	op=revoke; [ $((r % 2)) = 0 ] && op=restore
	tm send-keys -t b ':'; tm send-keys -t b -l "$op store all"; tm send-keys -t b Enter
	for _ in $(seq 500); do tm capture-pane -p -t b | grep -q "live sessions?" && break; sleep 0.01; done
	t0=$(date +%s%N)
	tm send-keys -t b y
	f= a=
	for _ in $(seq 2000); do
		s=$(tm capture-pane -p -t b)
		[ -z "$f" ] && echo "$s" | grep -Eq "$op r$r [1-9][0-9]*/$n acked" && f=$(ms "$t0")
		echo "$s" | grep -q "$op r$r $n/$n acked" && { a=$(ms "$t0"); [ -n "$f" ] || f=$a; break; }
		sleep 0.01
	done
	first+=("${f:-timeout}") all+=("${a:-timeout}")
done
echo "console: $n live sessions, ${rounds} cutovers across all (keystroke y -> on screen)"
echo "  first acknowledgement on screen (ms): ${first[*]}"
echo "  all $n acknowledged on screen (ms):   ${all[*]}"
echo "  (engine updates are drawn every 250 ms at most; a key is answered once 50 ms passed since the last frame)"
