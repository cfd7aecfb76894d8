#!/usr/bin/env bash
# Build the agent image, then drive the engine seam as the console does:
# SEAM_SESSIONS live sessions (default 200), snapshots at 4 Hz for
# SEAM_SECONDS (default 10), one revoke across all with a call in flight.
# usage: seam_bench.sh SEAM_BENCH AIRLOCK AGENT_BIN UPSTREAM_BIN
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/docker/common.sh"
require_daemon
bench=$(readlink -f "$1") airlock=$(readlink -f "$2") agent=$(readlink -f "$3") upstream=$(readlink -f "$4")
scratch_dir
image=$(scratch_image "$work" "$agent")
"$bench" "$airlock" "$image" "$upstream" "${SEAM_SESSIONS:-200}" "${SEAM_SECONDS:-10}"
