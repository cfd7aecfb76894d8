#!/usr/bin/env bash
# Build the agent image, then run the cutover benchmark and the scale run
# (100 sessions for 300 s unless SCALE_SESSIONS / SCALE_SECONDS say less).
# usage: supervision_bench.sh SUPERVISE_BENCH AIRLOCK AGENT_BIN UPSTREAM_BIN
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/docker/common.sh"
require_daemon
bench=$1 airlock=$2 agent=$3 upstream=$4
scratch_dir
image=$(scratch_image "$work" "$agent")
"$bench" "$airlock" "$image" "$upstream" cutover
"$bench" "$airlock" "$image" "$upstream" scale "${SCALE_SESSIONS:-100}" "${SCALE_SECONDS:-300}"
