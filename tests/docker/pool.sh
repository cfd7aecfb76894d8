#!/usr/bin/env bash
# Build the agent image, then run the warm pool suite against the daemon.
# usage: pool.sh TEST_BINARY AGENT_BIN UPSTREAM_BIN AIRLOCK
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

suite=$1 agent=$2
scratch_dir
image=$(scratch_image "$work" "$agent") || { echo "FAIL: agent image build" >&2; exit 1; }
AIRLOCK_AGENT_IMAGE=$image AIRLOCK_UPSTREAM=$3 AIRLOCK_BIN=$4 "$suite"
