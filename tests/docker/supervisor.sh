#!/usr/bin/env bash
# Build the agent image, then run the supervisor suite against the daemon.
# usage: supervisor.sh TEST_BINARY AGENT_BIN UPSTREAM_BIN AIRLOCK
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

suite=$1 agent=$2
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
cp "$agent" "$ctx/agent"
printf 'FROM scratch\nCOPY agent /agent\nENTRYPOINT ["/agent"]\n' >"$ctx/Dockerfile"
DOCKER_BUILDKIT=0 "$DOCKER" build -q --iidfile "$ctx/iid" "$ctx" >/dev/null
AIRLOCK_AGENT_IMAGE=$(cat "$ctx/iid") AIRLOCK_UPSTREAM=$3 AIRLOCK_BIN=$4 exec "$suite"
