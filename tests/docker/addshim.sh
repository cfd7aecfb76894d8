#!/usr/bin/env bash
# `airlock image add-shim` and admission's shim_digest with the real daemon
# (docs/mcp-agents.md), and an MCP session's agent that bypasses the shim
# (docs/guarantees.md, "What the MCP shim does and does not guarantee").
#
#   add-shim      on a FROM scratch agent image, by ID and by name: the new
#                 image's /airlock/shim, read back from its export, is the
#                 engine's shim, owned 0:0, mode 0555; bad references fail
#   shim_digest   an MCP session on the add-shim image is admitted; on an
#                 image whose /airlock/shim is another build (one byte
#                 changed) or that has none it is refused naming
#                 shim_digest: no upstream started, no container left; a
#                 bridge session on the image without a shim is admitted
#   bypass        the fixture agent as the entrypoint of an MCP session,
#                 writing bridge lines itself: the same audit rules, sinks
#                 and end reasons as the same agent in a bridge session
#
# usage: addshim.sh AIRLOCK SHIM AGENT_BIN UPSTREAM_BIN
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1 shim=$2 agent=$3 upstream=$4
scratch_dir
. "$here/../checks.sh"
. "$here/cases.sh"
export AIRLOCK_SHIM=$shim
shim_sha=$(sha256sum "$shim" | cut -d' ' -f1)

# --- the images -----------------------------------------------------------------
base=$(scratch_image "$work/base" "$agent") || { not_ok "agent image build"; summary; exit 1; }
images+=("$base")
rc=0; "$airlock" image add-shim "$base" --json >"$work/add.json" 2>"$work/add.err" || rc=$?
check "add-shim by ID: exit 0" [ "$rc" = 0 ]
jget() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$work/$1" "$2"; }
good=$(jget add.json new_image 2>/dev/null)
[ -n "$good" ] && images+=("$good")
check "add-shim --json: ok, the input and its ID, the shim's SHA-256" \
	[ "$(jget add.json ok) $(jget add.json input) $(jget add.json image) $(jget add.json shim_sha256)" = \
	  "True $base $base $shim_sha" ]
check "add-shim: a new immutable ID, not the input's" \
	bash -c '[[ "$1" =~ ^sha256:[0-9a-f]{64}$ ]] && [ "$1" != "$2" ]' _ "$good" "$base"
check "add-shim: the image is labelled with the shim's SHA-256" \
	[ "$("$DOCKER" image inspect -f '{{index .Config.Labels "io.airlock.shim"}}' "$good")" = "$shim_sha" ]

# /airlock/shim as the image's export carries it: owner, mode, content.
export_entry() {	# IMAGE DIR → "uid:gid mode sha256" of airlock/shim in the top layer that has it
	mkdir -p "$2" && "$DOCKER" save -o "$2/img.tar" "$1" && tar -xf "$2/img.tar" -C "$2" &&
	python3 - "$2" <<'PY'
import hashlib, json, os, sys, tarfile
d = sys.argv[1]
found = None
for layer in json.load(open(os.path.join(d, "manifest.json")))[0]["Layers"]:
    with tarfile.open(os.path.join(d, layer)) as t:
        for m in t.getmembers():
            if m.name.lstrip("./") == "airlock/shim":
                data = t.extractfile(m).read() if m.isreg() else b""
                found = "%d:%d %04o %s" % (m.uid, m.gid, m.mode & 0o7777, hashlib.sha256(data).hexdigest())
print(found or "absent")
PY
}
check "the export: /airlock/shim is the engine's shim, 0:0, mode 0555" \
	[ "$(export_entry "$good" "$work/export-good")" = "0:0 0555 $shim_sha" ]
check "the export: the base image's files are still there (the agent)" \
	bash -c 'for l in $(python3 -c "import json;print(\" \".join(json.load(open(\"$1/manifest.json\"))[0][\"Layers\"]))"); do
		tar -tf "$1/$l"; done | grep -qx agent' _ "$work/export-good"

tag=airlock-addshim-test:$$
"$DOCKER" tag "$base" "$tag"
rc=0; "$airlock" image add-shim "$tag" >"$work/byname.out" 2>"$work/byname.err" || rc=$?
"$DOCKER" rmi "$tag" >/dev/null 2>&1
check "add-shim by name: exit 0, the same image as by ID (built FROM the resolved ID)" \
	[ "$rc $(cat "$work/byname.out")" = "0 $good" ]
check "add-shim by name: stderr names the name and the ID it resolved" \
	grep -qF "$tag is $base" "$work/byname.err"
rc=0; "$airlock" image add-shim "airlock-addshim-absent:$$" --json >"$work/absent.json" 2>/dev/null || rc=$?
check "add-shim of an image the daemon lacks: exit 1, ok false" \
	[ "$rc $(jget absent.json ok)" = "1 False" ]
rc=0; AIRLOCK_SHIM=$work/no-such-shim "$airlock" image add-shim "$base" >/dev/null 2>"$work/noshim.err" || rc=$?
check "add-shim without a shim file: exit 3, naming AIRLOCK_SHIM" \
	bash -c '[ "$1" = 3 ] && grep -qF "AIRLOCK_SHIM" "$2"' _ "$rc" "$work/noshim.err"

# Another build of the shim: one byte changed, added the ordinary way.
mkdir -p "$work/stale"
cp "$shim" "$work/stale/shim"
python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(-1, 2); b = f.read(1)[0]; f.seek(-1, 2); f.write(bytes([b ^ 0xff]))' "$work/stale/shim"
printf 'FROM %s\nCOPY shim /airlock/shim\n' "$base" >"$work/stale/Dockerfile"
stale=$(DOCKER_BUILDKIT=0 "$DOCKER" build -q "$work/stale" 2>/dev/null) || stale=
[ -n "$stale" ] && images+=("$stale")
check "the stale image's /airlock/shim differs from the engine's (the fixture is what it claims)" \
	bash -c '[ -n "$1" ] && e=$2 && [ "${e%% *}" = "0:0" ] && [ "${e##* }" != "$3" ] && [ "${e##* }" != absent ]' \
	_ "$stale" "$(export_entry "$stale" "$work/export-stale")" "$shim_sha"

# --- sessions ---------------------------------------------------------------------
canary="CANARY-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '{"canary":"%s"}\n' "$canary" >"$work/payload.json"

# config CASE IMAGE MCP MODE
config() {
	local dir=$work/$1
	mkdir -p "$dir" && upstream_box "$dir"
	cat >"$dir/config.json" <<JSON
{
  "profile": {"image": "$2", "cmd": ["$4"], "tmpfs": {"/tmp": 1048576}},
  "bounds": {"session_ms": 20000},
  "agent": {"mcp": $3},
  "upstreams": {
    "vault": {"argv": ["$upstream", "--sink", "$dir/vault.sink", "--started", "$dir/vault.started"],
              "env": {"PATH": "/usr/bin:/bin"}, "paths": {"rw": ["$dir"]}},
    "board": {"argv": ["$upstream", "--sink", "$dir/board.sink", "--started", "$dir/board.started"],
              "env": {"PATH": "/usr/bin:/bin"}, "paths": {"rw": ["$dir"]}}
  },
  "tools": {
    "store": {"upstream": "vault", "remote": "store", "data_class": "confidential",
              "sink_ceiling": "confidential", "response_ceiling": "confidential"},
    "post": {"upstream": "board", "remote": "publish", "data_class": "public",
             "sink_ceiling": "public", "response_ceiling": "public"}
  },
  "aliases": {"save": "store", "publish": "post"},
  "initial": {"file": "$work/payload.json", "class": "confidential"}
}
JSON
}
run() {	# CASE: summary in CASE/summary.json, rc in CASE/rc
	local dir=$work/$1
	"$airlock" run --config "$dir/config.json" --audit "$dir/audit.db" --json \
		>"$dir/summary.json" 2>"$dir/stderr" </dev/null
	echo $? >"$dir/rc"
}
sql() { sqlite3 "$work/$1/audit.db" "$2"; }
clean() {	# CASE: nothing but a sink holds the canary
	[ -s "$work/$1/audit.db" ] && ! grep -rqaF -- "$canary" "$work/$1"/audit.db* "$work/$1/summary.json" "$work/$1/stderr"
}
ended_ok() {
	check "$1: no container of its session left" gone "$1"
	check "$1: audit chain valid" chain_ok "$1"
	check "$1: no canary in audit, summary or stderr" clean "$1"
}
# inspect_shim NAME IMAGE MCP → "verdict observed" of the shim_digest row that
# `airlock inspect --config` gives container NAME (planted by the caller),
# created (never started) from IMAGE.
inspect_shim() {
	local name=$1
	config "inspect-$name" "$2" "$3" normal
	"$DOCKER" create --name "$name" "$2" >/dev/null || return 1
	"$airlock" inspect "$name" --config "$work/inspect-$name/config.json" --json 2>/dev/null | python3 -c '
import json, sys
for c in json.load(sys.stdin)["report"]:
    if c["check"] == "shim_digest":
        print(c["verdict"], c["observed"]); sys.exit(0)
sys.exit(1)'
	"$DOCKER" rm -f "$name" >/dev/null 2>&1
}

# refused CASE IMAGE WORDS: an MCP session refused at the first admission under shim_digest
refused() {
	config "$1" "$2" true normal
	run "$1"
	check "$1: exit status 1, ended admission_refused" \
		[ "$(cat "$work/$1/rc") $(field "$1" ended)" = "1 admission_refused" ]
	check "$1: refused at the first admission, naming shim_digest (got $(field "$1" admission.refused_check))" \
		[ "$(field "$1" admission.first) $(field "$1" admission.refused_check)" = "refused shim_digest" ]
	check "$1: the reason says '$3'" bash -c 'field "$1" reason | grep -qF -- "$2"' _ "$1" "$3"
	check "$1: the audit's first admission entry is refused under shim_digest" \
		[ "$(sql "$1" "select decision || ' ' || rule from audit_entries where type='admission' and detail like '%\"first\"%'")" = "refused shim_digest" ]
	check "$1: the container never started (no second admission, no output)" \
		[ "$(field "$1" admission.second) $(field "$1" stdout_bytes)" = "not_run 0" ]
	check "$1: no upstream was started, no sink written" \
		bash -c '! ls "$1"/*.started "$1"/*.sink >/dev/null 2>&1' _ "$work/$1"
	check "$1: no call entry in the audit" [ "$(sql "$1" "select count(*) from audit_entries where tool is not null")" = 0 ]
	ended_ok "$1"
}
export -f field sql
export work

refused stale "$stale" "shim_digest observed sha256:"
refused absent "$base" "absent from the image"

config bridge_noshim "$base" false normal
run bridge_noshim
check "bridge session on the image without a shim: admitted twice, ended agent_exit" \
	[ "$(field bridge_noshim admission.second) $(field bridge_noshim ended)" = "admitted agent_exit" ]
ended_ok bridge_noshim

# The same rows in `airlock inspect --config` (an MCP profile, or not).
box=airlock-addshim-$$
planted+=("$box-good" "$box-stale" "$box-absent" "$box-bridge")
row_good=$(inspect_shim "$box-good" "$good" true)
row_stale=$(inspect_shim "$box-stale" "$stale" true)
row_absent=$(inspect_shim "$box-absent" "$base" true)
row_bridge=$(inspect_shim "$box-bridge" "$base" false)
check "inspect, MCP profile, the add-shim image: shim_digest passes, naming the engine's shim" \
	[ "$row_good" = "pass sha256:$shim_sha, mode 0555, owner 0:0" ]
check "inspect, MCP profile, the stale image: shim_digest refuses (another build)" \
	bash -c '[[ "$1" == "refuse sha256:"*" (another build)" && "$1" != *"$2"* ]]' _ "$row_stale" "$shim_sha"
check "inspect, MCP profile, no shim: shim_digest refuses (absent)" \
	[ "$row_absent" = "refuse absent from the image" ]
check "inspect, bridge profile, no shim: shim_digest not applicable" \
	[ "$row_bridge" = "pass not applicable: not an MCP session" ]

# --- bypass: the agent writes bridge lines itself, the shim unused ----------------
# Each call entry as "tool/decision/rule", in order (the operation as the agent named it for unknown ones).
calls() { sql "$1" "select group_concat(ifnull(tool, '-') || '/' || decision || '/' || ifnull(rule, ''), ' ')
	from (select * from audit_entries where type='call' order by seq)"; }
export -f calls
for m in true false; do
	case=bypass_mcp_$m
	config "$case" "$good" "$m" catalog_name
	run "$case"
	check "$case: admitted twice (shim_digest passes on the add-shim image)" is "$case" admission.second admitted
	ended_ok "$case"
done
check "bypass (MCP): the permitted alias reached the vault, once, with the payload" \
	bash -c '[ "$(wc -l <"$1/vault.sink")" = 1 ] && grep -qF "$2" "$1/vault.sink"' _ "$work/bypass_mcp_true" "$canary"
check "bypass (MCP): the public board was never started" no_file bypass_mcp_true board.started
check "bypass (MCP): save allowed, publish denied sink_ceiling, in the audit with their rules" \
	[ "$(calls bypass_mcp_true)" = "store/allowed/allowed post/denied/sink_ceiling" ]
check "bypass (MCP): the catalog name instead of an alias ends it invalid_request (audited), nothing called" \
	[ "$(sql bypass_mcp_true "select decision || '/' || rule from audit_entries where type='session_end'") $(field bypass_mcp_true allowed) $(field bypass_mcp_true denied)" = \
	  "abnormal/invalid_request 1 1" ]
check "bypass (MCP): the fixed message, exit status 1" \
	[ "$(field bypass_mcp_true message) $(cat "$work/bypass_mcp_true/rc")" = "invalid agent request 1" ]
check "bypass: the same call entries as the same agent in a bridge session" \
	[ "$(calls bypass_mcp_true)" = "$(calls bypass_mcp_false)" ]
check "bypass: the same end as in a bridge session" \
	[ "$(field bypass_mcp_false ended) $(field bypass_mcp_false message) $(field bypass_mcp_false denied_by)" = \
	  "invalid_request invalid agent request {\"sink_ceiling\": 1}" ]

# A line the bridge rejects ends an MCP session as it ends a bridge session.
for m in true false; do
	config "invalid_$m" "$good" "$m" configuration
	run "invalid_$m"
	check "invalid_$m: a request with extra keys ends it invalid_request, nothing called" \
		[ "$(field "invalid_$m" ended) $(field "invalid_$m" allowed)" = "invalid_request 0" ]
	check "invalid_$m: no upstream sink written" bash -c '! ls "$1"/*.sink >/dev/null 2>&1' _ "$work/invalid_$m"
	ended_ok "invalid_$m"
done
summary
