#!/usr/bin/env bash
# examples/make.sh DIR: everything three sessions under `airlock serve` need,
# made in DIR (a directory the upstreams' user can reach; run as root):
#   - the example agent (agent.c), built static, in an image FROM scratch
#     built on this machine (no registry is needed or asked);
#   - the pinned MCP memory server (tests/thirdparty, npm ci) copied to
#     DIR/npm, where airlock-upstream can run it;
#   - DIR/a.json, DIR/b.json, DIR/c.json: one session each, its own
#     payload and memory file under DIR/NAME, owned by airlock-upstream.
# It prints the serve command. docs/operations.md, "Quick start", walks
# through it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: examples/make.sh DIR}
mkdir -p "$dir" && chmod 0755 "$dir" && dir=$(cd "$dir" && pwd)

cc -static -O2 -Wall -Wextra -Werror -o "$dir/agent" "$here/agent.c"
printf 'FROM scratch\nCOPY agent /agent\nUSER 10001:10001\nENTRYPOINT ["/agent"]\n' \
	>"$dir/Dockerfile"
DOCKER_BUILDKIT=0 docker build -q --iidfile "$dir/iid" "$dir" >/dev/null
image=$(cat "$dir/iid")

npm=$here/../tests/thirdparty
[ -d "$npm/node_modules" ] || npm ci --prefix "$npm" --no-audit --no-fund --loglevel=error >/dev/null
rm -rf "$dir/npm" && mkdir -p "$dir/npm"
cp -a "$npm/node_modules" "$dir/npm/"
node_dir=$(dirname "$(readlink -f "$(command -v node)")")

for name in a b c; do
	mkdir -p "$dir/$name"
	printf '{"customer":"example-%s","note":"confidential: stays in this session"}\n' \
		"$name" >"$dir/$name/payload.json"
	[ "$(id -u)" != 0 ] || { chown airlock-upstream: "$dir/$name" && chmod 2770 "$dir/$name"; }
	sed -e "s|@IMAGE@|$image|g" -e "s|@DIR@|$dir|g" -e "s|@NAME@|$name|g" \
		-e "s|@NODE_DIR@|$node_dir|g" "$here/session.json.in" >"$dir/$name.json"
done
echo "examples: image $image; configs $dir/a.json $dir/b.json $dir/c.json"
echo "run: airlock serve --config $dir/a.json --config $dir/b.json --config $dir/c.json"
