#!/usr/bin/env bash
# examples/ as docs/operations.md's quick start uses it: make.sh builds the
# example agent's image and three configs, `airlock serve` starts the three
# sessions, each agent's notes reach the pinned MCP memory server through
# the gateway, `ctl` lists them, and SIGTERM leaves no container.
#
# usage: examples.sh AIRLOCK
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1
scratch_dir
chmod 0711 "$work"	# the upstreams' user reaches the example's directory in it
. "$here/../checks.sh"
ex=$work/example sock=$work/engine.sock
owner_pids() { printf '%s\n' "${helpers[@]}"; }	# the engine's containers are this test's

check "examples/make.sh builds the image and three configs" \
	"$here/../../examples/make.sh" "$ex" || { summary; exit 1; }
images+=("$(cat "$ex/iid")")
"$airlock" serve --socket "$sock" --audit "$work/audit.db" \
	--config "$ex/a.json" --config "$ex/b.json" --config "$ex/c.json" 2>"$work/serve.err" </dev/null &
engine=$!
helpers+=("$engine")

check "serve listens" serve_ready "$work/serve.err" "$engine"
check "on its socket" grep -qF "listening on $sock" "$work/serve.err"

# Each session's memory file, once its agent's first note is in it (90 s at most).
noted() {
	local i name all
	for i in $(seq 900); do
		all=1
		for name in a b c; do grep -qsE '"[0-9]+-step-1"' "$ex/$name/memory.jsonl" || all=0; done
		[ "$all" = 1 ] && return 0
		sleep 0.1
	done
	return 1
}
check "all three agents' notes reached their memory servers" noted
"$airlock" ctl --socket "$sock" sessions --json >"$work/sessions.json" 2>"$work/ctl.err" ||
	cat "$work/ctl.err" >&2
check "ctl lists three running sessions" python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["snapshot"]["sessions"]
sys.exit(0 if sum(r["state"] == "running" for r in rows) == 3 else 1)' "$work/sessions.json"
check "the audit holds their allowed calls" \
	bash -c '"$1" audit tail "$2" --json | grep -q "\"decision\":\"allowed\""' _ "$airlock" "$work/audit.db"
check "the payloads are in no output (serve's log, ctl's, the audit's tail)" bash -c '
	"$1" audit tail "$2" --json >"$3/tail.json" 2>&1
	! grep -lF "stays in this session" "$3/serve.err" "$3/sessions.json" "$3/ctl.err" "$3/tail.json"' \
	_ "$airlock" "$work/audit.db" "$work"
kill -TERM "$engine"
rc=0; wait "$engine" || rc=$?
check "serve exits 0 on SIGTERM" [ "$rc" = 0 ]
check "no airlock container is left" \
	[ -z "$("$DOCKER" ps -aq --filter label=io.airlock.managed=1 --filter "label=io.airlock.owner-pid=$engine")" ]
summary
