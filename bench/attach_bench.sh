#!/usr/bin/env bash
# Consoles attached to `airlock serve`, against the embedded console, with
# N live sessions (ATTACH_SESSIONS, default 200) in the same run:
#  1. keystroke -> acknowledgement on screen: ':revoke store all' + y, then
#     the time until the tools view shows every session acknowledged;
#     revoke and restore alternate, ATTACH_ROUNDS times (default 6). First
#     the embedded console (its own engine), then a console on the engine's
#     socket, then one through ssh to a throwaway sshd on 127.0.0.1 (when
#     sshd is installed). The screen is polled every 10 ms.
#  2. bytes a second the engine writes to the attached console (its
#     airlock_control_bytes_sent_total over 10 s: pushed snapshots and events);
#  3. the engine's CPU with 0 consoles and with 4 attached, over 20 s each:
#     per attached console, in % of one core.
# Prints sample: lines (bench/report.py).
# usage: attach_bench.sh AIRLOCK AGENT_BIN UPSTREAM_BIN
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/docker/common.sh"
airlock=$(readlink -f "$1") agent=$(readlink -f "$2") upstream=$(readlink -f "$3")
n=${ATTACH_SESSIONS:-200} rounds=${ATTACH_ROUNDS:-6}
require_daemon
scratch_dir
chmod 0755 "$work"
tmux_sock=airlock-abench-$$
owner_pids() { printf '%s\n' "${helpers[@]}"; }
tm() { local s=$1; shift; tmux -L "$tmux_sock-$s" -f /dev/null "$@"; }
on_teardown() {
	local s
	for s in embedded socket ssh c1 c2 c3 c4; do tm "$s" kill-server 2>/dev/null; done
	[ -n "${sshd_pid:-}" ] && kill "$sshd_pid" 2>/dev/null
	# The embedded console's containers: its pid is no helper.
	"$DOCKER" ps -aq --filter label=io.airlock.managed=1 --filter "label=io.airlock.owner-pid=${embedded_pid:-0}" |
		xargs -r "$DOCKER" rm -f >/dev/null 2>&1
}
image=$(scratch_image "$work/image" "$agent") || exit 1
images+=("$image")
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
done
# A command line takes at most 64 --config; the rest start as an operator
# would: :run in the embedded console, ctl start on the engine.
first=$(( n < 64 ? n : 64 ))
args=()
for i in $(seq "$first"); do args+=(--config "$work/$i.json"); done
run_rest() {	# NAME: the sessions past the first 64, by :run in the console
	local i
	for i in $(seq $((first + 1)) "$n"); do
		tm "$1" send-keys -t b ':'; tm "$1" send-keys -t b -l "run $work/$i.json"
		tm "$1" send-keys -t b Enter
	done
}

console() {	# NAME ARGS...
	local name=$1; shift
	tm "$name" new-session -d -s b -x 120 -y 40 \
		"env TERM=tmux-256color NO_COLOR=1 LANG=C.UTF-8 ${console_env:-} $airlock console $*"
}
pane_pid() {	# NAME: the airlock process in the pane
	local p
	p=$(tm "$1" display -p -t b '#{pane_pid}')
	local c
	c=$(pgrep -P "$p" -f "$airlock" | head -n 1)
	echo "${c:-$p}"
}
until_running() {	# NAME
	for _ in $(seq 3000); do
		tm "$1" capture-pane -p -t b | grep -q "($n running)" && return 0
		sleep 0.1
	done
	echo "   $1: never $n running" >&2
	return 1
}
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# acks NAME REV0: ATTACH_ROUNDS cutovers, revisions REV0+1…; prints the times.
acks() {
	local name=$1 rev=$2 r op t0 a
	tm "$name" send-keys -t b 3
	for r in $(seq "$rounds"); do
		op=revoke; [ $((r % 2)) = 0 ] && op=restore
		rev=$((rev + 1))
		tm "$name" send-keys -t b ':'; tm "$name" send-keys -t b -l "$op store all"
		tm "$name" send-keys -t b Enter
		for _ in $(seq 500); do tm "$name" capture-pane -p -t b | grep -q "live sessions?" && break; sleep 0.01; done
		t0=$(date +%s%N)
		tm "$name" send-keys -t b y
		a=timeout
		for _ in $(seq 3000); do
			tm "$name" capture-pane -p -t b | grep -q "$op r$rev $n/$n acked" && { a=$(ms "$t0"); break; }
			sleep 0.01
		done
		printf '%s ' "$a"
		sleep 0.5
	done
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# --- the embedded console ------------------------------------------------------
console embedded --audit "$work/embedded.db" "${args[*]}"
embedded_pid=$(pane_pid embedded)
run_rest embedded
until_running embedded || exit 1
read -r -a t_embedded <<<"$(acks embedded 0)"
echo "embedded console, $n sessions: keystroke -> all acknowledged (ms): ${t_embedded[*]}" >&2
tm embedded send-keys -t b q
sleep 0.5
tm embedded send-keys -t b y
for _ in $(seq 600); do kill -0 "$embedded_pid" 2>/dev/null || break; sleep 0.1; done

# --- the engine as a service ---------------------------------------------------
"$airlock" serve --name bench --socket "$work/engine.sock" --audit "$work/serve.db" \
	"${args[@]}" 2>"$work/serve.log" </dev/null &
engine=$!
helpers+=("$engine")
for _ in $(seq 300); do grep -q "listening on" "$work/serve.log" && break; sleep 0.1; done
for i in $(seq $((first + 1)) "$n"); do
	"$airlock" ctl --socket "$work/engine.sock" start "$work/$i.json" >/dev/null || echo "   ctl start $i failed" >&2
done

ticks0=$(cpu_ticks "$engine")
console socket --connect "$work/engine.sock"
until_running socket || exit 1
read -r -a t_socket <<<"$(acks socket 0)"
echo "console on the socket: keystroke -> all acknowledged (ms): ${t_socket[*]}" >&2
sent() { "$airlock" ctl --socket "$work/engine.sock" metrics | awk '/^airlock_control_bytes_sent_total / { print $2 }'; }
b0=$(sent); sleep 10; b1=$(sent)
bytes=$(( (b1 - b0) / 10 ))	# less one metrics reply (~3 kB over 10 s)
echo "console on the socket reads $bytes bytes/s ($n sessions)" >&2
tm socket send-keys -t b q
rev=$rounds

t_ssh=()
if command -v /usr/sbin/sshd >/dev/null && command -v ssh >/dev/null; then
	mkdir -p "$work/ssh" /run/sshd
	chmod 0700 "$work/ssh"
	ssh-keygen -q -t ed25519 -N '' -f "$work/ssh/host" && ssh-keygen -q -t ed25519 -N '' -f "$work/ssh/user"
	cp "$work/ssh/user.pub" "$work/ssh/authorized_keys"
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	printf '%s\n' "ListenAddress 127.0.0.1" "Port $port" "HostKey $work/ssh/host" \
		"AuthorizedKeysFile $work/ssh/authorized_keys" "PermitRootLogin prohibit-password" \
		"PasswordAuthentication no" "StrictModes no" "UsePAM no" "PidFile $work/ssh/pid" \
		>"$work/ssh/sshd_config"
	printf '%s\n' "Host *" "  IdentityFile $work/ssh/user" "  IdentitiesOnly yes" \
		"  UserKnownHostsFile /dev/null" "  StrictHostKeyChecking no" "  LogLevel ERROR" \
		>"$work/ssh/config"
	/usr/sbin/sshd -D -e -f "$work/ssh/sshd_config" 2>"$work/ssh/log" &
	sshd_pid=$!
	sleep 1
	console_env="AIRLOCK_SSH='ssh -F $work/ssh/config' AIRLOCK_REMOTE=$airlock"
	console ssh --connect "ssh://root@127.0.0.1:$port$work/engine.sock"
	console_env=
	if until_running ssh; then
		read -r -a t_ssh <<<"$(acks ssh "$rev")"
		echo "console through ssh: keystroke -> all acknowledged (ms): ${t_ssh[*]}" >&2
	fi
	tm ssh send-keys -t b q
fi

# --- the engine's CPU per attached console -------------------------------------
sleep 2
c0=$(cpu_ticks "$engine"); sleep 20; c1=$(cpu_ticks "$engine")
for c in c1 c2 c3 c4; do console "$c" --connect "$work/engine.sock"; done
for c in c1 c2 c3 c4; do until_running "$c"; done
c2=$(cpu_ticks "$engine"); sleep 20; c3=$(cpu_ticks "$engine")
hz=$(getconf CLK_TCK)
idle=$(python3 -c "print(round(($c1 - $c0) / $hz / 20 * 100, 2))")
per=$(python3 -c "print(round((($c3 - $c2) - ($c1 - $c0)) / $hz / 20 * 100 / 4, 2))")
echo "engine CPU with $n sessions: $idle% of a core with no console; +$per% per attached console (4 attached)" >&2
for c in c1 c2 c3 c4; do tm "$c" send-keys -t b q; done

for i in "${!t_embedded[@]}"; do
	echo "sample: attach_ack_socket baseline=${t_embedded[$i]} airlock=${t_socket[$i]:-timeout} unit=ms"
	[ ${#t_ssh[@]} -gt 0 ] &&
		echo "sample: attach_ack_ssh baseline=${t_embedded[$i]} airlock=${t_ssh[$i]:-timeout} unit=ms"
done
echo "sample: attach_socket_bytes baseline=- airlock=$bytes unit=B/s"
echo "sample: attach_engine_cpu baseline=$idle airlock=$per unit=%core"
kill -TERM "$engine"
for _ in $(seq 600); do kill -0 "$engine" 2>/dev/null || break; sleep 0.1; done
