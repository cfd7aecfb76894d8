#!/usr/bin/env bash
# Build the agent image, then run the supervisor suite against the daemon.
# usage: supervisor.sh TEST_BINARY AGENT_BIN UPSTREAM_BIN AIRLOCK
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

suite=$1 agent=$2
scratch_dir
image=$(scratch_image "$work" "$agent") || { echo "FAIL: agent image build" >&2; exit 1; }
# A collector on loopback for the policy entries' spans, for the suite's life.
python3 "$here/otlp_collector.py" "$work/spans.jsonl" "$work/otlp.port" 900 &
helpers+=($!)
for _ in $(seq 50); do [ -s "$work/otlp.port" ] && break; sleep 0.1; done
[ -s "$work/otlp.port" ] || { echo "FAIL: the OTLP collector did not start" >&2; exit 1; }
AIRLOCK_AGENT_IMAGE=$image AIRLOCK_UPSTREAM=$3 AIRLOCK_BIN=$4 \
AIRLOCK_OTLP_URL="http://127.0.0.1:$(cat "$work/otlp.port")" AIRLOCK_OTLP_SPANS="$work/spans.jsonl" \
	"$suite"
