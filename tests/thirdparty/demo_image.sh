#!/usr/bin/env bash
# The console demo's MCP agent image (tui/demo.c, docs/console.md): FROM
# scratch, this machine's Node.js and its shared libraries, the MCP SDK
# installed here (npm ci, as scripts/setup does), demo_agent.mjs and
# airlock-shim, as tests/docker/mcp.sh builds its own. Found again by the
# label io.airlock.demo-mcp=<sha256 of what went in: node's path, size and
# time, the lockfile, the agent script, the shim>, so a second demo reuses
# it. Prints "sha256:<id> built" or "sha256:<id> reused".
#
# Exit 0; 77 when node or the SDK is not installed (no MCP session, not an
# error); 1 when the build failed. Nothing is printed but that line.
#
# usage: demo_image.sh SHIM
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shim=${1:?usage: demo_image.sh SHIM}
DOCKER=/usr/bin/docker
[ -x "$DOCKER" ] || DOCKER=$(command -v docker) || exit 77
node=$(command -v node) && node=$(readlink -f "$node") || exit 77
[ -d "$here/node_modules/@modelcontextprotocol/sdk" ] || exit 77
[ -r "$shim" ] || exit 1

hash=$( { stat -c '%n %s %Y' "$node"; cat "$here/package-lock.json" "$here/demo_agent.mjs" "$shim"; } |
	sha256sum | cut -d' ' -f1)
id=$("$DOCKER" images -q --no-trunc --filter "label=io.airlock.demo-mcp=$hash" 2>/dev/null | head -n 1)
if [ -n "$id" ]; then
	echo "$id reused"
	exit 0
fi
ctx=$(mktemp -d) || exit 1
trap 'rm -rf "$ctx"' EXIT
root=$ctx/root
mkdir -p "$root/usr/bin" "$root/app" "$root/airlock" || exit 1
cp "$node" "$root/usr/bin/node" || exit 1
for lib in $(ldd "$node" | awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }'); do
	cp -L --parents "$lib" "$root" || exit 1
done
mkdir -p "$root/app/node_modules" && cp -a "$here/node_modules/." "$root/app/node_modules/" && cp "$here/demo_agent.mjs" "$root/app/agent.mjs" &&
	install -m 0555 "$shim" "$root/airlock/shim" || exit 1
printf 'FROM scratch\nCOPY root/ /\nLABEL io.airlock.demo-mcp=%s\nENTRYPOINT ["/airlock/shim", "--"]\n' \
	"$hash" >"$ctx/Dockerfile"
DOCKER_BUILDKIT=0 "$DOCKER" build -q --iidfile "$ctx/iid" "$ctx" >/dev/null 2>&1 || exit 1
echo "$(cat "$ctx/iid") built"
