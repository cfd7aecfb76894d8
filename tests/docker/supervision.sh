#!/usr/bin/env bash
# Supervision with real processes and the real daemon: a live session whose
# permitted call was already observed at the sink, then the engine or the
# watchdog is killed or paused. The container must be stopped within the
# lease plus stop time; two mutants (built into airlock-mutants only) show
# that without the watchdog, or without the ack check, it survives. A TCP
# observer on the host's 127.0.0.1 and ::1 must never see a connection,
# although the agent tries one on every loop.
#
# usage: supervision.sh AIRLOCK AIRLOCK_MUTANTS AGENT_BIN UPSTREAM_BIN
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1 mutants=$2 agent=$3 upstream=$4
scratch_dir
# The engines are among the helpers; their containers are this suite's, and
# so are the watchdogs a killed or paused engine left behind.
owner_pids() { printf '%s\n' "${helpers[@]}"; }
on_teardown() { pkill -KILL -f "watchdog $sock [0-9a-f]{64}" 2>/dev/null; }

. "$here/../checks.sh"

scratch_image "$work/image" "$agent" >/dev/null || { not_ok "agent image build"; summary; exit 1; }

python3 "$here/tcp_observer.py" "$work/port" "$work/connections" &
helpers+=($!)
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")
echo '{"canary":"SUPERVISION-CANARY"}' >"$work/payload.json"

config() {	# CASE
	mkdir -p "$work/$1" && upstream_box "$work/$1"
	cat >"$work/$1/config.json" <<JSON
{"profile": {"image": "$(cat "$work/image/iid")", "cmd": ["loop", "$port"]},
 "bounds": {"session_ms": 120000, "calls": 4096, "stdout_bytes": 4194304},
 "upstreams": {"vault": {"argv": ["$upstream", "--sink", "$work/$1/vault.sink"],
                         "paths": {"rw": ["$work/$1"]}}},
 "tools": {"store": {"upstream": "vault", "remote": "store", "data_class": "confidential",
                     "sink_ceiling": "confidential", "response_ceiling": "confidential"}},
 "aliases": {"save": "store"},
 "initial": {"file": "$work/payload.json", "class": "confidential"}}
JSON
}

# live CASE BIN [MUTANT]: a session in the background; sets engine and cid.
live() {
	local case=$1 bin=$2 i
	config "$case"
	AIRLOCK_MUTANT=${3:-} "$bin" run --config "$work/$case/config.json" \
		--audit "$work/$case/audit.db" --json >"$work/$case/summary.json" 2>&1 </dev/null &
	engine=$!
	helpers+=("$engine")
	cid=
	for i in $(seq 200); do
		if [ -s "$work/$case/vault.sink" ]; then
			cid=$("$DOCKER" ps -q --no-trunc --filter "label=io.airlock.owner-pid=$engine")
			[ -n "$cid" ] && break
		fi
		sleep 0.1
	done
	[ -n "$cid" ]
}

watchdog_pid() { [ -n "$cid" ] && pgrep -f "watchdog $sock $cid" | head -n 1; }

# Poll until the container stops (at most 15 s); print the time taken.
# Fails when no container was found to begin with.
stopped_within() {
	local t0 t1 i
	[ -n "$cid" ] || { echo "   no container id: nothing was observed"; return 1; }
	t0=$(date +%s%N)
	for i in $(seq 300); do
		running "$cid" || break
		sleep 0.05
	done
	t1=$(date +%s%N)
	elapsed=$(( (t1 - t0) / 1000000 ))
	! running "$cid"
}

check "observer listening" test -n "$port"

live engine_kill "$airlock" && kill -KILL "$engine"
check "engine SIGKILL: the live session's call was observed first" test -n "$cid"
check "engine SIGKILL: container stopped by the watchdog" stopped_within
echo "   measured: engine SIGKILL -> container stopped in ${elapsed} ms"

live engine_stop "$airlock" && kill -STOP "$engine"
check "engine SIGSTOP: container stopped by the watchdog" stopped_within
echo "   measured: engine SIGSTOP -> container stopped in ${elapsed} ms"
kill -CONT "$engine" 2>/dev/null

live watchdog_kill "$airlock" && kill -KILL "$(watchdog_pid)"
check "watchdog SIGKILL: the engine stops the container" stopped_within
echo "   measured: watchdog SIGKILL -> container stopped in ${elapsed} ms"
wait "$engine" 2>/dev/null
check "watchdog SIGKILL: session ended watchdog_failed" grep -q '"ended":"watchdog_failed"' "$work/watchdog_kill/summary.json"

live watchdog_stop "$airlock" && wd=$(watchdog_pid) && kill -STOP "$wd"
check "watchdog SIGSTOP: the engine stops the container (missing ack)" stopped_within
echo "   measured: watchdog SIGSTOP -> container stopped in ${elapsed} ms"
wait "$engine" 2>/dev/null
check "watchdog SIGSTOP: session ended watchdog_failed" grep -q '"ended":"watchdog_failed"' "$work/watchdog_stop/summary.json"
kill -CONT "$wd" 2>/dev/null

live noop "$mutants" watchdog_noop && kill -KILL "$engine"
sleep 3
check "mutant no-op watchdog: after engine SIGKILL the container still runs (3 s)" running "$cid"
"$DOCKER" rm -f "$cid" >/dev/null 2>&1

live noack "$mutants" no_ack_check && kill -STOP "$(watchdog_pid)"
sleep 3
check "mutant no ack check: after watchdog SIGSTOP the container still runs (3 s)" running "$cid"
kill -KILL "$engine" 2>/dev/null
"$DOCKER" rm -f "$cid" >/dev/null 2>&1

check "no network delivery at the host observers" test "$(cat "$work/connections")" = 0
summary
