#!/usr/bin/env bash
# Bad input names its fault: one row a case — the file it gives airlock,
# the command, the exit status and the words the message must hold, in
# text (stderr, or doctor's report) and in --json's error or check. No
# daemon is needed (none is reachable here): each case fails before one
# would be asked, or in doctor's catalog check, which asks none.
# usage: messages.sh AIRLOCK
set -uo pipefail
airlock=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/../checks.sh"
export DOCKER_HOST=unix://$work/no-daemon.sock

image=sha256:$(printf '%064d' 7)
upper=sha256:$(printf 'A%.0s' $(seq 64))
canary=MESSAGES-CANARY-51c7

# The inputs, by name: $work/NAME.json, or as the row says.
printf '{"secret": "%s"}\n' "$canary" >"$work/payload.json"
profile() { printf '{"profile": {"image": "%s"%s}, "initial": {"class": "public", "file": "payload.json"}}\n' \
	"${2:-$image}" "${3:-}" >"$work/$1.json"; }
profile good
profile entrypoint "" ', "entrypoint": []'
profile entrypoint_cmd "" ', "entrypoint": [], "cmd": []'
profile upper "$upper"
profile tmpfs_relative "" ', "tmpfs": {"tmp": 4096}'
profile tmpfs_proc "" ', "tmpfs": {"/proc/x": 4096}'
printf '\xef\xbb\xbf' >"$work/bom.json"; cat "$work/good.json" >>"$work/bom.json"
printf '[{"profile": {"image": "%s"}}]\n' "$image" >"$work/array.json"
printf 'SQLite format 2? no: %s\n' "$canary" >"$work/notdb.db"
# An upstream for doctor --config's catalog check (it starts the server and
# lists its tools; no daemon needed): PROGRAM [EXTRA KEYS].
upstream() { printf '{"profile": {"image": "%s"}, "upstreams": {"vault": {"argv": ["%s"]%s}},
 "tools": {"store": {"upstream": "vault", "remote": "store", "data_class": "public",
  "sink_ceiling": "public", "response_ceiling": "public"}}}\n' "$image" "$2" "${3:-}" >"$work/$1.json"; }
upstream up_cwd /bin/cat ', "cwd": "/nonexistent/dir"'
upstream up_missing /nonexistent/mcp-server
upstream up_dir /tmp
upstream up_echo /bin/cat
upstream up_exits /bin/true

# name | exit | words the message holds | the command after "airlock"
while IFS='|' read -r name want words args; do
	[ -n "$name" ] || continue
	# shellcheck disable=SC2086  # the row's command is words
	set -- ${args//@/$work/}
	words=${words//@/$work/}
	rc=0; "$airlock" "$@" >"$work/out" 2>"$work/err" </dev/null || rc=$?
	check "$name: exit $want" [ "$rc" = "$want" ]
	check "$name: says '$words'" grep -qF -- "$words" "$work/err" "$work/out"
	check "$name: no payload in what it says" bash -c '! grep -qF "$1" "$2" "$3"' _ "$canary" "$work/err" "$work/out"
	rc=0; "$airlock" "$@" --json >"$work/out" 2>"$work/err" </dev/null || rc=$?
	check "$name --json: exit $want, the same words in error" python3 - "$work/out" "$words" "$rc" "$want" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).read())
said = [d.get("error", "")] + [c["observed"] for c in d.get("checks", [])]
assert sys.argv[3] == sys.argv[4] and d["ok"] is False and any(sys.argv[2] in t for t in said), d
PY
done <<'ROWS'
empty entrypoint, no cmd|3|profile.entrypoint: an empty list runs nothing unless profile.cmd names the program|run --config @entrypoint.json
empty entrypoint, empty cmd|3|profile.entrypoint: an empty list runs nothing unless profile.cmd names the program|run --config @entrypoint_cmd.json
image ID in upper case|3|profile.image: write the image ID in lower-case hex|run --config @upper.json
tmpfs target not absolute|3|profile.tmpfs: target tmp is not allowed: it must be an absolute path|run --config @tmpfs_relative.json
tmpfs target under /proc|3|profile.tmpfs: target /proc/x is not allowed: it may not be under /proc, /sys or /dev|run --config @tmpfs_proc.json
config with a byte order mark|3|starts with a UTF-8 byte order mark (BOM)|run --config @bom.json
config that is an array|3|the top level: expected an object|run --config @array.json
doctor, config that is an array|3|the top level: expected an object|doctor --config @array.json
audit log that is not SQLite|3|audit @notdb.db: not an audit database|run --config @good.json --audit @notdb.db
upstream cwd missing|1|upstream vault: cannot start: its cwd /nonexistent/dir: No such file or directory|doctor --config @up_cwd.json
upstream program missing|1|upstream vault: cannot start: program /nonexistent/mcp-server: No such file or directory|doctor --config @up_missing.json
upstream program a directory|1|upstream vault: cannot start: program /tmp is a directory|doctor --config @up_dir.json
upstream that echoes|1|upstream vault: not an MCP server: it sent our initialize request back|doctor --config @up_echo.json
image add-shim, no daemon|3|docker: GET /_ping: cannot connect to|image add-shim sha256:0000000000000000000000000000000000000000000000000000000000000007
upstream that exits at once|1|upstream vault: exited with status 0 before answering initialize|doctor --config @up_exits.json
ROWS
summary
