#!/usr/bin/env bash
# An unmodified MCP agent, confined (docs/mcp-agents.md): the official MCP
# TypeScript SDK's Client (tests/thirdparty/sdk_agent.mjs, the SDK pinned in
# tests/thirdparty/package-lock.json) runs in a FROM scratch image built here
# from this machine's Node.js and its shared libraries, with airlock-shim
# added by `airlock image add-shim` (admission's shim_digest checks it), under
# `airlock serve` with an MCP session profile, against the fixture upstream
# and the third-party server-everything. It lists the aliases, reads the
# payload resource, is denied above the sink ceiling, calls a permitted tool,
# and sees a revoke and a restore from `airlock ctl` as
# notifications/tools/list_changed. The agent reports what it saw through
# the `save` tool, so its sink is where the test reads it. Canaries are
# searched in every other sink.
#
# usage: mcp.sh AIRLOCK SHIM UPSTREAM_BIN [RUNTIME]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1 shim=$2 upstream=$3 runtime=${4:-runc}
thirdparty=$(cd "$here/../thirdparty" && pwd)
scratch_dir
. "$here/../checks.sh"
sock=$work/engine.sock
owner_pids() { printf '%s\n' "${helpers[@]}"; }

if [ ! -d "$thirdparty/node_modules/@modelcontextprotocol/sdk" ]; then
	if [ -n "${CI:-}" ]; then
		not_ok "the MCP SDK is not installed (scripts/setup runs npm ci in tests/thirdparty)"
		summary; exit 1
	fi
	echo "## SKIPPED: the MCP SDK is not installed in tests/thirdparty (npm ci)" | tee /dev/stderr
	exit 77
fi

# The npm server runs as airlock-upstream: from a copy it can read.
npm=$(npm_reachable "$thirdparty") || { not_ok "copy of the npm servers"; summary; exit 1; }

# --- the image: node, its libraries, the SDK, the agent; then add-shim --------
node_image() {
	local ctx=$work/nodeimg root=$work/nodeimg/root
	node_root "$root" || return 1
	cp "$thirdparty/sdk_agent.mjs" "$root/app/agent.mjs" || return 1
	printf 'FROM scratch\nCOPY root/ /\nENTRYPOINT ["/airlock/shim", "--"]\n' >"$ctx/Dockerfile"
	DOCKER_BUILDKIT=0 "$DOCKER" build -q --iidfile "$ctx/iid" "$ctx" >/dev/null || return 1
	cat "$ctx/iid"
}
export AIRLOCK_SHIM=$shim
t0=$(date +%s%N)
base=$(node_image) || { not_ok "node image build"; summary; exit 1; }
images+=("$base")
image=$("$airlock" image add-shim "$base" 2>/dev/null) || { not_ok "airlock image add-shim"; summary; exit 1; }
images+=("$image")
echo "   node image built in $(( ($(date +%s%N) - t0) / 1000000 )) ms: $image"

canary="CANARY-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
withheld="WITHHELD-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '{"canary":"%s","secret":"%s"}\n' "$canary" "$withheld" >"$work/payload.in"
node_dir=$(dirname "$(command -v node)")

upstream_box "$work"
cat >"$work/config.json" <<JSON
{
  "profile": {"image": "$image", "runtime": "$runtime",
              "entrypoint": ["/airlock/shim", "--"], "cmd": ["/usr/bin/node", "/app/agent.mjs"],
              "env": {"HOME": "/tmp"}, "tmpfs": {"/tmp": 4194304},
              "memory": 536870912, "pids_limit": 256},
  "bounds": {"session_ms": 120000, "calls": 64},
  "agent": {"mcp": true},
  "upstreams": {
    "vault": {"argv": ["$upstream", "--sink", "$work/vault.sink"], "env": {"PATH": "/usr/bin:/bin"},
              "paths": {"rw": ["$work"]}},
    "board": {"argv": ["$upstream", "--sink", "$work/board.sink"], "env": {"PATH": "/usr/bin:/bin"},
              "paths": {"rw": ["$work"]}},
    "everything": {"argv": ["$npm/node_modules/.bin/mcp-server-everything"],
                   "env": {"PATH": "$node_dir:/usr/bin:/bin"}}
  },
  "tools": {
    "store": {"upstream": "vault", "remote": "store", "data_class": "confidential",
              "sink_ceiling": "confidential", "response_ceiling": "confidential"},
    "post": {"upstream": "board", "remote": "publish", "data_class": "public",
             "sink_ceiling": "public", "response_ceiling": "public"},
    "echo": {"upstream": "everything", "remote": "echo", "data_class": "public",
             "sink_ceiling": "confidential", "response_ceiling": "public"}
  },
  "aliases": {"save": "store", "publish": "post",
              "shout": {"tool": "echo", "description": "Say it back (operator text)."},
              "stash": {"tool": "store", "hidden": true}},
  "initial": {"file": "$work/payload.in", "class": "confidential", "withhold": ["secret"]}
}
JSON

ctl() { "$airlock" ctl --socket "$sock" "$@"; }
serve() {
	"$airlock" serve --socket "$sock" --audit "$work/audit.db" --config "$work/config.json" \
		2>"$work/serve.err" </dev/null &
	engine=$!
	helpers+=("$engine")
	serve_ready "$work/serve.err" "$engine"
}
# report STEP: the agent's report of that step, as JSON, from the vault's sink.
report() {
	python3 - "$work/vault.sink" "$1" <<'PY' 2>/dev/null
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    a = m.get("arguments", m)
    if "report" in a:
        r = json.loads(a["report"])
        if r.get("step") == sys.argv[2]:
            print(json.dumps(r, sort_keys=True)); sys.exit(0)
sys.exit(1)
PY
}
wait_report() {	# STEP: up to 60 s by the clock (a report's parse takes time too)
	local end=$((SECONDS + 60))
	while [ "$SECONDS" -lt "$end" ]; do
		report "$1" >"$work/$1.report" && return 0
		sleep 0.2
	done
	return 1
}
field() { python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))[sys.argv[2]]))' "$work/$1.report" "$2"; }
audit_has() { [ "$(sqlite3 "$work/audit.db" "select count(*) from audit_entries where $1")" -gt 0 ]; }
fatal() { tail -n 30 "$work/serve.err" >&2; summary; exit 1; }

# ============================================================================
check "serve starts with the MCP session" serve || fatal
check "the agent reports its start" wait_report start || fatal
check "tools/list: exactly the aliases, the hidden one left out" \
	[ "$(field start tools)" = '["publish", "save", "shout"]' ]
check "the operator's description replaces the upstream's" \
	[ "$(field start shout_description)" = '"Say it back (operator text)."' ]
check "the input schema is the upstream's (everything's echo: message)" \
	[ "$(field start shout_schema)" = '["message"]' ]
check "resources/read airlock://payload: the canary" [ "$(field start canary)" = "\"$canary\"" ]
check "resources/read: the withheld field is absent" [ "$(field start withheld)" = false ]
check "the agent reports its calls" wait_report calls || fatal
check "a call above the sink ceiling is an error result with the fixed text" \
	[ "$(field calls publish_error) $(field calls publish_text)" = 'true "denied by the airlock gateway"' ]
check "the board (public sink) saw nothing" [ ! -s "$work/board.sink" ]
check "audit: publish denied sink_ceiling" \
	audit_has "tool='post' and decision='denied' and rule='sink_ceiling'"
check "a permitted call through a third-party server answers" \
	[ "$(field calls shout) $(field calls shout_error)" = '"Echo: hello" false' ]
check "a catalog name instead of an alias: JSON-RPC -32602 from the shim" \
	[ "$(field calls unknown)" = -32602 ]

rc=0; ctl revoke echo --all --json >"$work/revoke.json" || rc=$?
check "ctl revoke echo: exit 0" [ "$rc" = 0 ]
check "the agent saw list_changed and reports the revoke" wait_report revoked || fatal
check "after the revoke tools/list omits shout" [ "$(field revoked tools)" = '["publish", "save"]' ]
check "a call to the revoked tool is an error result" [ "$(field revoked shout_error)" = true ]
check "audit: the call to the revoked tool denied revoked" \
	audit_has "tool='echo' and decision='denied' and rule='revoked'"
rc=0; ctl restore echo --all --json >"$work/restore.json" || rc=$?
check "ctl restore echo: exit 0" [ "$rc" = 0 ]
check "the agent saw list_changed again and reports the restore" wait_report restored || fatal
check "after the restore tools/list has shout again" \
	[ "$(field restored tools)" = '["publish", "save", "shout"]' ]

ended() { audit_has "type='session_end'"; }
wait_ended() { local i; for i in $(seq 300); do ended && return 0; sleep 0.1; done; return 1; }
check "the session ends once the agent exits" wait_ended
check "it ended normally (the agent's exit 0)" \
	audit_has "type='session_end' and decision='normal' and detail like '%\"exit_code\":0%'"
ctl sessions --json >"$work/sessions.json" 2>&1
ctl events --json >"$work/events.jsonl" 2>&1 || true
kill -TERM "$engine" 2>/dev/null
wait "$engine" 2>/dev/null

check "audit chain valid" "$airlock" audit verify "$work/audit.db"
check "the canary reached the permitted upstream's sink" grep -qF "$canary" "$work/vault.sink"
check "no canary in the audit, serve's stderr, ctl's output" \
	bash -c '! grep -qaF "$1" "$2"/audit.db* "$2"/serve.err "$2"/*.json "$2"/events.jsonl' _ "$canary" "$work"
check "no withheld canary anywhere, the permitted sink included" \
	bash -c '! grep -qaF "$1" "$2"/audit.db* "$2"/serve.err "$2"/*.json "$2"/*.sink "$2"/events.jsonl' _ "$withheld" "$work"
check "the session's container is gone" \
	[ -z "$("$DOCKER" ps -aq --filter label=io.airlock.managed=1 --filter "label=io.airlock.owner-pid=$engine")" ]
summary
