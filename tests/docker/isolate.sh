#!/usr/bin/env bash
# An upstream in a container of its own ("isolation": "container",
# docs/operations.md; issue 41): the fixture upstream (a static build in a
# FROM scratch image) and the npm MCP servers of tests/thirdparty (in an
# image built here from this machine's Node.js, as mcp.sh builds its agent)
# run as containers with the session's hardened profile, their stdio over
# the Docker attach stream. Each is shown to:
#   - complete calls (the sink inside the container, read with docker exec,
#     and the audit's allowed entries and response hashes);
#   - be admitted twice (its admission entries in the audit, named by
#     upstream and container) and have no network (inspected, and its
#     /proc/net/dev lists loopback alone);
#   - be gone when the session ends, and stopped by its watchdog when the
#     engine is SIGKILLed (then `airlock reap` removes it);
#   - be refused by admission, before it starts, when the mutant gives it a
#     network (weak_network + weak_netns, upstream_only); with
#     admission_bypass the same mutant runs and its network is real.
# The four npm servers (filesystem, everything, memory, sequential-thinking)
# run both ways (process and container) with the same checks.
#
# usage: isolate.sh AIRLOCK AIRLOCK_MUTANTS AGENT_BIN UPSTREAM_STATIC
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1 mutants=$2 agent=$3 upstream=$4
thirdparty=$(cd "$here/../thirdparty" && pwd)
scratch_dir
. "$here/../checks.sh"
owner_pids() { printf '%s\n' "${helpers[@]}"; }

agent_image=$(scratch_image "$work/agent" "$agent") || { not_ok "agent image build"; summary; exit 1; }
up_image=$(scratch_image "$work/up" "$upstream") || { not_ok "upstream image build"; summary; exit 1; }
images+=("$agent_image" "$up_image")
up=/$(basename "$upstream")
canary="CANARY-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '{"message":"%s"}\n' "$canary" >"$work/payload.json"

# config CASE AGENT_MODE: the agent saves to "vault", the fixture upstream in a container.
config() {
	mkdir -p "$work/$1"
	cat >"$work/$1/config.json" <<JSON
{
  "profile": {"image": "$agent_image", "cmd": ["$2"], "tmpfs": {"/tmp": 1048576}},
  "bounds": {"session_ms": 60000, "calls": 4096},
  "upstreams": {
    "vault": {"isolation": "container", "image": "$up_image", "network": "none",
              "argv": ["$up", "--sink", "/tmp/vault.sink"], "timeout_ms": 5000}
  },
  "tools": {
    "store": {"upstream": "vault", "remote": "store", "data_class": "confidential",
              "sink_ceiling": "confidential", "response_ceiling": "confidential"}
  },
  "aliases": {"save": "store", "publish": "store"},
  "initial": {"file": "$work/payload.json", "class": "confidential"}
}
JSON
}
# start CASE [AIRLOCK]: airlock run in the background; $engine its pid.
start() {
	local dir=$work/$1
	"${2:-$airlock}" run --config "$dir/config.json" --audit "$dir/audit.db" --json \
		>"$dir/summary.json" 2>"$dir/stderr" </dev/null &
	engine=$!
	helpers+=("$engine")
}
finish() { wait "$engine" 2>/dev/null; echo $? >"$work/$1/rc"; }
field() { python3 -c 'import json,sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): v = v[k]
print(v if not isinstance(v, bool) else str(v).lower())' "$work/$1/summary.json" "$2" 2>/dev/null; }
is() { [ "$(field "$1" "$2")" = "$3" ]; }
count() { sqlite3 "$work/$1/audit.db" "select count(*) from audit_entries where $2"; }
audit_has() { [ "$(count "$1" "$2")" -gt 0 ]; }
sid_of() { sqlite3 "$work/$1/audit.db" "select session_id from audit_entries limit 1" 2>/dev/null; }
# box_of PID NAME: the container of upstream NAME that engine PID created.
box_of() { "$DOCKER" ps -aq --no-trunc --filter label=io.airlock.managed=1 \
	--filter "label=io.airlock.owner-pid=$1" --filter "label=io.airlock.upstream=$2" | head -n1; }
sink_lines() { "$DOCKER" exec "$1" "$up" --cat /tmp/vault.sink 2>/dev/null | grep -c .; }
calls_seen() { [ "$(sink_lines "$1")" -ge 2 ]; }
gone() { ! "$DOCKER" inspect "$1" >/dev/null 2>&1; }
wait_for() {	# TENTHS COMMAND...
	local n=$1; shift
	while [ "$n" -gt 0 ]; do "$@" && return 0; sleep 0.1; n=$((n - 1)); done
	return 1
}
find_box() {	# CASE: $box once the engine's vault container exists and runs
	box=$(box_of "$engine" vault)
	running "$box"
}
no_canary() { ! grep -rqaF "$canary" "$work/$1"/*.db* "$work/$1/summary.json" "$work/$1/stderr"; }
# interfaces ID: the names in the container's /proc/net/dev (read from inside it).
interfaces() { "$DOCKER" exec "$1" "$up" --cat /proc/net/dev | awk -F: 'NR > 2 { gsub(/ /, "", $1); print $1 }'; }
only_loopback() { [ "$(interfaces "$1")" = lo ]; }
has_network() { interfaces "$1" | grep -qvx lo; }
admitted_entries() {	# CASE: both admissions of the vault's container, durable, named
	[ "$(count "$1" "decision='admitted' and detail like '%\"upstream\":\"vault\"%'
		and detail like '%\"container\":\"${2:0:12}\"%'")" -eq 2 ]
}

# ============================================================================
# 1. The fixture upstream in a container: calls reach it, no network, gone after.
config steady steady
start steady
check "steady: the vault's container runs" wait_for 300 find_box steady
check "steady: its sink (inside it, read by docker exec) sees the agent's calls" \
	wait_for 300 calls_seen "$box"
check "steady: the calls carry the payload to it" \
	sh -c "'$DOCKER' exec '$box' '$up' --cat /tmp/vault.sink | grep -qF '$canary'"
check "steady: inspected: NetworkMode none, networking disabled" \
	[ "$("$DOCKER" inspect -f '{{.HostConfig.NetworkMode}} {{.Config.NetworkDisabled}}' "$box")" = "none true" ]
check "steady: inside it, no interface but loopback" only_loopback "$box"
check "steady: the hardened profile (read-only root, no caps, non-root, limits)" \
	[ "$("$DOCKER" inspect -f '{{.HostConfig.ReadonlyRootfs}} {{.HostConfig.CapDrop}} {{.Config.User}} {{.HostConfig.PidsLimit}}' "$box")" = "true [ALL] 10001:10001 32" ]
check "steady: labelled with the session and the upstream's name" \
	[ "$("$DOCKER" inspect -f '{{index .Config.Labels "io.airlock.upstream"}}' "$box")" = vault ]
kill -TERM "$engine"
finish steady
check "steady: the session ends on the operator's stop" is steady ended operator_stop
check "steady: allowed calls in the audit" [ "$(count steady "tool='store' and decision='allowed'")" -ge 2 ]
check "steady: both admissions of its container in the audit" admitted_entries steady "$box"
check "steady: the first dispatch's receipt says isolation container and its id" \
	audit_has steady "decision='dispatch' and detail like '%\"isolation\":\"container\"%'
		and detail like '%\"container\":\"${box:0:12}\"%' and detail like '%\"network\":\"none\"%'"
check "steady: its container is gone after the session" gone "$box"
check "steady: no container of the session left" session_gone "$(sid_of steady)"
check "steady: no canary in audit, summary or stderr" no_canary steady

# 2. An agent that exits: the session ends normally, the container is gone.
config normal normal
start normal
finish normal
check "normal: ends agent_exit" is normal ended agent_exit
check "normal: two calls allowed through the container" is normal allowed 2
check "normal: one upstream started" is normal upstream_spawns 1
check "normal: its admissions in the audit" \
	[ "$(count normal "decision='admitted' and detail like '%\"upstream\":\"vault\"%'")" -eq 2 ]
check "normal: no container of the session left" session_gone "$(sid_of normal)"
check "normal: audit chain valid" "$airlock" audit verify "$work/normal/audit.db"

# 3. The engine SIGKILLed mid-session: the upstream's own watchdog stops its container.
config crash steady
start crash
crash_ready() { wait_for 300 find_box crash && wait_for 300 calls_seen "$box"; }
check "crash: the vault's container runs and has calls" crash_ready
kill -KILL "$engine"
wait "$engine" 2>/dev/null
check "crash: the watchdog stopped the upstream's container" wait_for 150 stopped "$box"
check "crash: and the agent's (no container of the session runs)" \
	wait_for 150 session_stopped "$(sid_of crash)"
"$airlock" reap >/dev/null 2>&1
check "crash: airlock reap removed them" wait_for 100 session_gone "$(sid_of crash)"

# 4. A weakened upstream container (a network): refused before it starts.
config weak normal
AIRLOCK_MUTANT=weak_network,weak_netns,upstream_only start weak "$mutants"
finish weak
check "weak: the agent's container was admitted (the mutant spares it)" \
	is weak admission.second admitted
check "weak: the upstream's first admission refused it (network_mode)" \
	audit_has weak "decision='refused' and rule='network_mode' and detail like '%\"phase\":\"first\"%'
		and detail like '%\"upstream\":\"vault\"%'"
check "weak: no second admission of it, no dispatch, no call allowed" \
	[ "$(count weak "(decision='admitted' and detail like '%\"upstream\"%') or decision in ('dispatch', 'allowed')")" -eq 0 ]
check "weak: the session ends on the unavailable upstream" is weak ended upstream_unavailable
check "weak: nothing of the session left" session_gone "$(sid_of weak)"
# The mutant is real: let through (admission_bypass), the container has a network.
config bypass steady
AIRLOCK_MUTANT=weak_network,weak_netns,upstream_only,admission_bypass start bypass "$mutants"
check "bypass: the weakened container runs" wait_for 300 find_box bypass
check "bypass: inspected, it has the host's network" \
	[ "$("$DOCKER" inspect -f '{{.HostConfig.NetworkMode}} {{.Config.NetworkDisabled}}' "$box")" = "host false" ]
check "bypass: inside it, interfaces besides loopback (the leak admission prevents)" \
	has_network "$box"
kill -TERM "$engine"
finish bypass
check "bypass: gone after the session" wait_for 100 session_gone "$(sid_of bypass)"

# ============================================================================
# The four npm MCP servers, both ways: filesystem and everything in one
# session, memory and sequential-thinking in another.
if [ ! -d "$thirdparty/node_modules/@modelcontextprotocol/server-sequential-thinking" ]; then
	if [ -n "${CI:-}" ]; then
		not_ok "the npm MCP servers are not installed (scripts/setup runs npm ci in tests/thirdparty)"
	else
		echo "## SKIPPED: npm MCP servers not installed in tests/thirdparty (npm ci)" | tee /dev/stderr
	fi
	summary
	exit
fi
node_image() {
	local ctx=$work/nodeimg
	node_root "$ctx/root" || return 1
	printf 'FROM scratch\nCOPY root/ /\n' >"$ctx/Dockerfile"
	DOCKER_BUILDKIT=0 "$DOCKER" build -q --iidfile "$ctx/iid" "$ctx" >/dev/null || return 1
	cat "$ctx/iid"
}
node_img=$(node_image) || { not_ok "node image build"; summary; exit 1; }
images+=("$node_img")
# The process upstreams run as airlock-upstream: from a copy it can read.
npm=$(npm_reachable "$thirdparty") || { not_ok "copy of the npm servers"; summary; exit 1; }
node_dir=$(dirname "$(command -v node)")
# npm_upstream ISOLATION SERVER WORKDIR [ENV_JSON] [ARG]: an upstream's JSON
# members. In a container the server's writable place is the container's
# /tmp; as a process, WORKDIR (owned by airlock-upstream, its only rw path).
npm_upstream() {
	local iso=$1 server=$2 dir=$3 env=${4:-} arg=${5:-}
	if [ "$iso" = container ]; then
		printf '"isolation": "container", "image": "%s", "argv": ["/usr/bin/node", "%s"%s]' \
			"$node_img" "/app/node_modules/@modelcontextprotocol/server-$server/dist/index.js" \
			"${arg:+, \"/tmp\"}"
		[ -z "$env" ] || printf ', "env": {%s}' "${env//@DIR@//tmp}"
	else
		upstream_owns "$dir"
		printf '"argv": ["%s"%s], "paths": {"rw": ["%s"]}' \
			"$npm/node_modules/.bin/mcp-server-$server" "${arg:+, \"$dir\"}" "$dir"
		printf ', "env": {"PATH": "%s:/usr/bin:/bin"%s}' "$node_dir" "${env:+, ${env//@DIR@/$dir}}"
	fi
	printf ', "timeout_ms": 30000'
}
# npm_config CASE ISOLATION PAIR: PAIR "fs" saves with filesystem's write_file
# and publishes with everything's echo; "mind" saves with memory's
# create_entities and publishes with sequential-thinking. The payload carries
# every server's arguments (each keeps the fields of its schema).
npm_config() {
	local dir=$work/$1 iso=$2 a b save publish out
	mkdir -p "$dir/a" "$dir/b"
	out=$([ "$iso" = container ] && echo /tmp/out.txt || echo "$dir/a/out.txt")
	printf '{"path":"%s","content":"%s","message":"%s","entities":[{"name":"%s","entityType":"secret","observations":["%s"]}],"thought":"%s","nextThoughtNeeded":false,"thoughtNumber":1,"totalThoughts":1}\n' \
		"$out" "$canary" "$canary" "$canary" "$canary" "$canary" >"$dir/payload.json"
	if [ "$3" = fs ]; then
		a=$(npm_upstream "$iso" filesystem "$dir/a" "" dir)
		b=$(npm_upstream "$iso" everything "$dir/b")
		save=write_file publish=echo
	else
		a=$(npm_upstream "$iso" memory "$dir/a" '"MEMORY_FILE_PATH": "@DIR@/memory.jsonl"')
		b=$(npm_upstream "$iso" sequential-thinking "$dir/b")
		save=create_entities publish=sequentialthinking
	fi
	cat >"$dir/config.json" <<JSON
{
  "profile": {"image": "$agent_image", "cmd": ["normal"], "tmpfs": {"/tmp": 4194304},
              "memory": 536870912, "pids_limit": 256},
  "bounds": {"session_ms": 90000},
  "upstreams": {"a": {$a}, "b": {$b}},
  "tools": {
    "keep": {"upstream": "a", "remote": "$save", "data_class": "confidential",
             "sink_ceiling": "confidential", "response_ceiling": "confidential"},
    "shout": {"upstream": "b", "remote": "$publish", "data_class": "confidential",
              "sink_ceiling": "confidential", "response_ceiling": "confidential"}
  },
  "aliases": {"save": "keep", "publish": "shout"},
  "initial": {"file": "$dir/payload.json", "class": "confidential"}
}
JSON
}
# The answers whose text the agent's payload decides: everything's echo and
# memory's list of the entities it created (JSON.stringify(…, null, 2)),
# hashed as the gateway hashes them: HMAC-SHA-256 under the case's log key.
keyed() {	# CASE: stdin's bytes
	python3 -c 'import hashlib,hmac,sqlite3,sys
(key,) = sqlite3.connect(sys.argv[1]).execute("select key from audit_key where id = 1").fetchone()
print(hmac.new(key, sys.stdin.buffer.read(), hashlib.sha256).hexdigest())' "$work/$1/audit.db"
}
echo_hash() { printf 'Echo: %s' "$canary" | keyed "$1"; }
entities_hash() {
	python3 -c 'import json,sys
c = sys.argv[1]
sys.stdout.write(json.dumps([{"name": c, "entityType": "secret", "observations": [c]}], indent=2))' \
		"$canary" | keyed "$1"
}
for iso in process container; do
	for pair in fs mind; do
		c=npm_${pair}_$iso
		npm_config "$c" "$iso" "$pair"
		start "$c"
		finish "$c"
		check "$c: ends agent_exit" is "$c" ended agent_exit
		check "$c: both servers listed their tools and took one call each (2 allowed)" is "$c" allowed 2
		check "$c: two upstreams started" is "$c" upstream_spawns 2
		check "$c: the save allowed" audit_has "$c" "tool='keep' and decision='allowed'"
		check "$c: the publish allowed" audit_has "$c" "tool='shout' and decision='allowed'"
		check "$c: the receipts say isolation $iso" \
			[ "$(count "$c" "decision='dispatch' and detail like '%\"isolation\":\"$iso\"%'")" -eq 2 ]
		check "$c: no container of the session left" session_gone "$(sid_of "$c")"
		check "$c: upstream admissions: two each in containers, none as processes" \
			[ "$(count "$c" "decision='admitted' and detail like '%\"upstream\":%'")" -eq \
			  "$([ "$iso" = container ] && echo 4 || echo 0)" ]
		check "$c: no canary in audit, summary or stderr" no_canary "$c"
	done
	check "npm_fs_$iso: echo answered with the payload's message (its response hash)" \
		audit_has "npm_fs_$iso" "tool='shout' and response_hash='$(echo_hash "npm_fs_$iso")'"
	check "npm_mind_$iso: memory answered with the entity it created (its response hash)" \
		audit_has "npm_mind_$iso" "tool='keep' and response_hash='$(entities_hash "npm_mind_$iso")'"
done
check "npm_fs_process: the file exists with the payload" grep -qF "$canary" "$work/npm_fs_process/a/out.txt"
check "npm_mind_process: memory's file holds the entity" \
	grep -qF "$canary" "$work/npm_mind_process/a/memory.jsonl"

summary
