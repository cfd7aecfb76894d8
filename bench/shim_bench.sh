#!/usr/bin/env bash
# Per call through airlock-shim against the raw bridge, in the same run
# (issue #29). One image holds bench/mcp_agent.c's agent and the shim; each
# round runs two sessions with `airlock run`, the same upstream fixture and
# alias: a bridge agent doing K raw requests (the baseline), then the same
# agent as an MCP client of `/airlock/shim --mcp` under `/airlock/shim --`,
# doing K tools/call (airlock). Each agent times its own calls, write to
# answer, after 50 untimed ones, and reports p50/p99 through its last call,
# which the test reads in the upstream's sink; the MCP agent also reports
# both shims' Pss and Private_Dirty from /proc/PID/smaps_rollup (its parent
# and its child, read from inside the container). A third session has the
# same client on the parent shim's socket itself, with no --mcp child: the
# child hands its stdio to the parent, so the two should cost the same (the
# relay it replaced cost about 44 us a call). The audit log and the
# sink live on a tmpfs (/dev/shm when there is one), as gateway_bench's do:
# syncs cost nearly nothing there, so what is left is the path itself.
# Prints "sample:" lines (bench/report.py); asserts nothing.
#
# usage: shim_bench.sh AIRLOCK SHIM MCP_AGENT UPSTREAM_BIN [ROUNDS] [CALLS]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/docker/common.sh"
require_daemon
airlock=$(readlink -f "$1") shim=$(readlink -f "$2") agent=$(readlink -f "$3")
upstream=$(readlink -f "$4") rounds=${5:-5} calls=${6:-1000}
# the engine checks the image's shim against its own: the one given here
export AIRLOCK_SHIM=$shim
scratch_dir
run=$work
[ -d /dev/shm ] && run=$(mktemp -d /dev/shm/airlock-shim-bench.XXXXXX)
on_teardown() { [ "$run" = "$work" ] || rm -rf "$run"; }
# The sinks: a drop box of the confined upstream's (common.sh's upstream_box).
chmod 0711 "$work" "$run" && mkdir -p "$run/sinks" && chmod 1733 "$run/sinks" || exit 1

mkdir -p "$work/image" && install -m 0555 "$shim" "$work/image/airlock-shim" &&
	image=$(scratch_image "$work/image" "$agent" 'COPY airlock-shim /airlock/shim') ||
	{ echo "shim_bench: the image build failed" >&2; exit 1; }
images+=("$image")
echo '{"x":1}' >"$work/payload.json"

config() {	# MODE -> the session's config file
	local entry
	if [ "$1" != raw ]; then
		entry='"entrypoint": ["/airlock/shim", "--"], "cmd": ["/mcp_agent", "'$1'", "'$calls'"]'
	else
		entry='"entrypoint": ["/mcp_agent"], "cmd": ["raw", "'$calls'"]'
	fi
	cat >"$work/$1.json" <<-JSON
	{"profile": {"image": "$image", $entry},
	 "bounds": {"calls": 4096, "session_ms": 300000},
	 "agent": {"mcp": $([ "$1" != raw ] && echo true || echo false)},
	 "upstreams": {"vault": {"argv": ["$upstream", "--sink", "$run/sinks/$1.sink"],
	                         "paths": {"rw": ["$run/sinks"]}}},
	 "tools": {"store": {"upstream": "vault", "remote": "store", "data_class": "public",
	                     "sink_ceiling": "public", "response_ceiling": "public"}},
	 "aliases": {"save": "store"}, "initial": {"file": "$work/payload.json", "class": "public"}}
	JSON
	echo "$work/$1.json"
}

# session MODE -> the agent's report line, KEY=VALUE words; empty on failure.
session() {
	rm -f "$run/sinks/$1.sink"
	"$airlock" run --config "$(config "$1")" --audit "$run/audit.db" --json \
		>"$work/$1.out" 2>"$work/$1.err" </dev/null || return 1
	python3 - "$run/sinks/$1.sink" <<-'PY' 2>/dev/null
	import json, sys
	for line in open(sys.argv[1]):
	    a = json.loads(line).get("arguments", {})
	    if "report" in a:
	        print(a["report"])
	PY
}
value() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

for _ in $(seq "$rounds"); do
	raw=$(session raw) mcp=$(session mcp) direct=$(session socket)
	if [ -z "$raw" ] || [ -z "$mcp" ] || [ -z "$direct" ]; then
		echo "shim_bench: a session gave no report (raw: ${raw:-none}; mcp: ${mcp:-none};" \
			"socket: ${direct:-none})" >&2
		tail -n 5 "$work"/*.err >&2
		continue
	fi
	if [ "$(value "$raw" errors)$(value "$mcp" errors)$(value "$direct" errors)" != 000 ]; then
		echo "shim_bench: calls answered other than allowed: raw $(value "$raw" errors)," \
			"mcp $(value "$mcp" errors), socket $(value "$direct" errors)" >&2
	fi
	rb50=$(value "$raw" p50) rb99=$(value "$raw" p99)
	sm50=$(value "$mcp" p50) sm99=$(value "$mcp" p99)
	echo "sample: shim_call_p50 baseline=$rb50 airlock=$sm50 unit=us"
	echo "sample: shim_call_p99 baseline=$rb99 airlock=$sm99 unit=us"
	echo "sample: shim_added_p50 baseline=- airlock=$(awk "BEGIN { print $sm50 - $rb50 }") unit=us"
	echo "sample: shim_added_p99 baseline=- airlock=$(awk "BEGIN { print $sm99 - $rb99 }") unit=us"
	echo "sample: shim_socket_call_p50 baseline=$rb50 airlock=$(value "$direct" p50) unit=us"
	for side in parent child; do
		echo "sample: shim_${side}_private_dirty baseline=- airlock=$(value "$mcp" "${side}_private_dirty") unit=kB"
		echo "sample: shim_${side}_pss baseline=- airlock=$(value "$mcp" "${side}_pss") unit=kB"
	done
done
