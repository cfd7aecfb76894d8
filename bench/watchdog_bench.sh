#!/usr/bin/env bash
# Watchdog benchmark: SIGKILL the engine of a live session and time until
# the daemon reports the container stopped, over N trials, side by side
# with the floor: `docker stop -t 0` of the same kind of container.
#
# usage: watchdog_bench.sh AIRLOCK AGENT_BIN UPSTREAM_BIN [TRIALS]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/docker/common.sh"
require_daemon
airlock=$1 agent=$2 upstream=$3 trials=${4:-20}
scratch_dir
image=$(scratch_image "$work/image" "$agent")
echo '{"x":1}' >"$work/payload.json"
mkdir -p "$work/sinks" && upstream_box "$work/sinks" || exit 1	# the upstream's, confined
cat >"$work/config.json" <<JSON
{"profile": {"image": "$image", "cmd": ["loop"]},
 "bounds": {"session_ms": 120000, "calls": 4096, "stdout_bytes": 4194304},
 "upstreams": {"vault": {"argv": ["$upstream", "--sink", "$work/sinks/sink"],
                         "paths": {"rw": ["$work/sinks"]}}},
 "tools": {"store": {"upstream": "vault", "remote": "store", "data_class": "public",
                     "sink_ceiling": "public", "response_ceiling": "public"}},
 "aliases": {"save": "store"}, "initial": {"file": "$work/payload.json", "class": "public"}}
JSON

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
until_stopped() {	# CID → ms until not running
	local t0; t0=$(now_ms)
	while running "$1"; do sleep 0.01; done
	echo $(( $(now_ms) - t0 ))
}

stats() {	# label, values…
	local label=$1; shift
	printf '%s\n' "$@" | sort -n | awk -v l="$label" '{v[NR]=$1} END {
		printf "  %-34s n=%-3d min %5d  p50 %5d  p90 %5d  max %5d ms\n", l, NR, v[1],
			v[int((NR+1)/2)], v[int(NR*0.9+0.5)], v[NR] }'
}

killed=() floor=()
for i in $(seq "$trials"); do
	rm -f "$work/sinks/sink"	# the upstream makes it again at its first call
	"$airlock" run --config "$work/config.json" --audit "$work/audit.db" >/dev/null 2>&1 </dev/null &
	engine=$!
	cid= waited=0
	while [ -z "$cid" ]; do
		[ -s "$work/sinks/sink" ] && cid=$("$DOCKER" ps -q --no-trunc --filter "label=io.airlock.owner-pid=$engine")
		if [ -z "$cid" ] && { [ $((waited += 1)) -gt 600 ] || ! kill -0 "$engine" 2>/dev/null; }; then
			echo "watchdog_bench: no call reached the upstream's sink in 30 s (or the engine ended)" >&2
			kill -KILL "$engine" 2>/dev/null
			exit 1
		fi
		sleep 0.05
	done
	kill -KILL "$engine"
	killed+=("$(until_stopped "$cid")")
	wait "$engine" 2>/dev/null
	"$DOCKER" rm -f "$cid" >/dev/null
	# The floor: the same image, hardened, stopped directly with t=0.
	cid=$("$DOCKER" run -d -i --init --network none --read-only --cap-drop ALL \
		--entrypoint /agent "$image" loop)
	t0=$(now_ms)
	"$DOCKER" stop -t 0 "$cid" >/dev/null
	floor+=("$(( $(now_ms) - t0 ))")
	"$DOCKER" rm -f "$cid" >/dev/null
done
echo "engine SIGKILL -> container stopped ($trials trials)"
stats "airlock (watchdog on lease EOF)" "${killed[@]}"
stats "docker stop -t 0 (the floor)" "${floor[@]}"
p50() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
a=$(p50 "${killed[@]}") b=$(p50 "${floor[@]}")
awk -v a="$a" -v b="$b" 'BEGIN { printf "  %-34s %.2fx\n", "ratio p50 airlock / floor", (b > 0 ? a / b : 0) }'
# bench/run: one line per trial; each trial ran the two side by side.
for i in "${!killed[@]}"; do
	echo "sample: watchdog_stop baseline=${floor[$i]} airlock=${killed[$i]} unit=ms"
done
