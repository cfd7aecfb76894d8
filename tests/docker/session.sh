#!/usr/bin/env bash
# The mediated path end to end: `airlock run` with a real container (the
# adversarial agent fixture), real MCP upstreams (our fixture server and
# third-party servers from npm) and a real audit database. Observers are
# files the upstreams append to, the audit DB, the summary, the engine's
# stderr and a loopback OTLP collector; canaries are searched in all.
#
# usage: session.sh AIRLOCK AGENT_BIN UPSTREAM_BIN
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1 agent=$2 upstream=$3
thirdparty=$(cd "$here/../thirdparty" && pwd)
scratch_dir

. "$here/../checks.sh"
. "$here/cases.sh"

# --- the agent image -------------------------------------------------------
image=$(scratch_image "$work/image" "$agent") || { not_ok "agent image build"; summary; exit 1; }

canary="CANARY-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
withheld="WITHHELD-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '{"canary":"%s","note":"visible","secret":"%s","nested":{"keep":1,"hide":"%s"}}\n' \
	"$canary" "$withheld" "$withheld" >"$work/payload.json"
node_dir=$(dirname "$(command -v node || echo /usr/bin/node)")

# --- one case ----------------------------------------------------------------
# config CASE MODE [VAULT_MODE] [BOARD_SINK_CEILING] [EXTRA_TOOLS_JSON] [EXTRA_UPSTREAMS_JSON] [EXTRA_ALIASES_JSON] [BOUNDS_JSON]
config() {
	local dir=$work/$1 mode=$2 vault_mode=${3:-echo} board_ceiling=${4:-public}
	local tools=${5:-} ups=${6:-} aliases=${7:-} bounds=${8:-'{"session_ms": 15000}'}
	mkdir -p "$dir" && upstream_box "$dir"
	cat >"$dir/config.json" <<JSON
{
  "profile": {"image": "$image", "cmd": ["$mode"], "tmpfs": {"/tmp": 1048576}},
  "bounds": $bounds,
  "upstreams": {
    "vault": {"argv": ["$upstream", "--sink", "$dir/vault.sink", "--started", "$dir/vault.started",
                       "--mode", "$vault_mode"], "env": {"PATH": "/usr/bin:/bin"}, "timeout_ms": 3000,
              "paths": {"rw": ["$dir"]}},
    "board": {"argv": ["$upstream", "--sink", "$dir/board.sink", "--started", "$dir/board.started"],
              "env": {"PATH": "/usr/bin:/bin"}, "paths": {"rw": ["$dir"]}}
    $ups
  },
  "tools": {
    "store": {"upstream": "vault", "remote": "store", "data_class": "confidential",
              "sink_ceiling": "confidential", "response_ceiling": "confidential"},
    "post": {"upstream": "board", "remote": "publish", "data_class": "public",
             "sink_ceiling": "$board_ceiling", "response_ceiling": "public"}
    $tools
  },
  "aliases": {"save": "store", "publish": "post" $aliases},
  "initial": {"file": "${payload:-$work/payload.json}", "class": "confidential",
              "withhold": ["secret", "nested.hide"]}
}
JSON
}

# run CASE [extra airlock args]: summary in CASE/summary.json, stderr in CASE/stderr, rc in CASE/rc
run() {
	local dir=$work/$1; shift
	"$airlock" run --config "$dir/config.json" --audit "$dir/audit.db" --json "$@" \
		>"$dir/summary.json" 2>"$dir/stderr" </dev/null
	echo $? >"$dir/rc"
}

absent() { [ -s "$work/$1/audit.db" ] && ! grep -rqaF "$2" "$work/$1"/*.db* "$work/$1/summary.json" "$work/$1/stderr" 2>/dev/null; }
audit_has() {	# CASE SQL-WHERE → at least one row
	[ "$(sqlite3 "$work/$1/audit.db" "select count(*) from audit_entries where $2")" -gt 0 ]
}

common_end() {	# CASE: what holds for every session
	check "$1: container stopped and gone" gone "$1"
	check "$1: audit chain valid" chain_ok "$1"
	check "$1: no canary in audit, summary or stderr" absent "$1" "$canary"
	check "$1: no withheld canary in audit, summary or stderr" absent "$1" "$withheld"
	check "$1: session_start and session_end bracket it" \
		audit_has "$1" "type='session_end'"
}

canon_frame() {	# the canonical arguments of the payload the agent saw
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); d.pop("secret"); d["nested"].pop("hide")
sys.stdout.write(json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False))' \
		"$work/payload.json"
}
sha_of_frame() {	# CASE [plain]: the gateway's request hash of that payload: HMAC-SHA-256
	# under the key in CASE's audit log (plain: the unkeyed SHA-256 it must not be)
	canon_frame | python3 -c 'import hashlib,hmac,sqlite3,sys
data = sys.stdin.buffer.read()
if sys.argv[2] == "plain":
    print(hashlib.sha256(data).hexdigest()); sys.exit()
db = sqlite3.connect(sys.argv[1])
(key,) = db.execute("select key from audit_key where id = 1").fetchone()
assert len(key) == 32, len(key)
print(hmac.new(key, data, hashlib.sha256).hexdigest())' "$work/$1/audit.db" "${2:-keyed}"
}

# --- normal: permitted allowed, public denied, public upstream never spawned ---
config normal normal
run normal
check "normal: exit status 0" [ "$(cat "$work/normal/rc")" = 0 ]
check "normal: ended agent_exit" is normal ended agent_exit
check "normal: one allowed, one denied" is normal allowed 1
check "normal: denied counted" is normal denied 1
check "normal: both admissions passed" is normal admission.second admitted
check "normal: the permitted sink holds the canary (positive control)" has normal vault.sink "$canary"
check "normal: withheld canary absent from the sink" sh -c "! grep -qF '$withheld' '$work/normal/vault.sink'"
check "normal: the public sink received nothing" no_file normal board.sink
check "normal: the public upstream was never spawned" no_file normal board.started
check "normal: one upstream spawn" is normal upstream_spawns 1
# The start and the preflight ride on the first admission's commit (or the
# timer): in the log they still come first, in order, before any call.
lead_entries() {	# CASE → the first five entries as type/decision/rule
	sqlite3 "$work/$1/audit.db" "select group_concat(type || '/' || decision || '/' ||
		ifnull(rule, ''), ' ') from (select * from audit_entries order by seq limit 5)"
}
check "normal: start, preflight and both admissions lead the log, in order, then the first dispatch" \
	[ "$(lead_entries normal)" = "session_start/start/ admission/pass/preflight admission/admitted/first admission/admitted/second dispatch/dispatch/" ]
check "normal: request hash recorded for the allowed call, keyed by the log's key" \
	audit_has normal "tool='store' and decision='allowed' and request_hash='$(sha_of_frame normal)' and length(response_hash)=64"
check "normal: the request hash is not the plain SHA-256 of the arguments" \
	sh -c "! sqlite3 '$work/normal/audit.db' 'select request_hash from audit_entries' | grep -qxF '$(sha_of_frame normal plain)'"
canon_frame >"$work/frame.canon"
check "normal: audit hash of the arguments (stdin) is the recorded request hash" \
	bash -c '[ "$("$1" audit hash "$2" - <"$3")" = "$4" ]' _ "$airlock" "$work/normal/audit.db" \
	"$work/frame.canon" "$(sha_of_frame normal)"
check "normal: denial recorded with its rule" \
	audit_has normal "tool='post' and decision='denied' and rule='sink_ceiling' and response_hash is null"
check "normal: dispatch entry precedes the terminal entry" \
	audit_has normal "type='dispatch' and tool='store'"
check "normal: class after the call is confidential" is normal session_class confidential
common_end normal
# The log's head after the session, for the operator to record: the newest
# entry, and an anchor a later verify accepts; in the text summary too.
newest() { sqlite3 "$1" "select seq || ':' || entry_hash from audit_entries order by seq desc limit 1"; }
json_head=$(python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["audit_head"]; print("%d:%s" % (h["seq"], h["hash"]))' \
	"$work/normal/summary.json")
check "normal: the summary's audit_head is the log's newest entry ($json_head)" \
	bash -c '[ -n "$1" ] && [ "$1" = "$2" ]' _ "$json_head" "$(newest "$work/normal/audit.db")"
check "normal: that head anchors a later verify" "$airlock" audit verify --anchor "${json_head:-0:none}" "$work/normal/audit.db"
"$airlock" run --config "$work/normal/config.json" --audit "$work/normal/text.db" \
	>"$work/normal/text.out" 2>/dev/null </dev/null
text_head=$(sed -n 's/^  audit       head \([0-9]*:[0-9a-f]\{64\}\)$/\1/p' "$work/normal/text.out")
check "normal, text summary: it prints the head of its log ($text_head)" \
	bash -c '[ -n "$1" ] && [ "$1" = "$2" ]' _ "$text_head" "$(newest "$work/normal/text.db")"

# --- mutation: raise the public tool's sink ceiling: the observer must see it ---
config mutant normal echo confidential
run mutant
check "mutant: public sink now receives the canary (observer works)" has mutant board.sink "$canary"
check "mutant: two allowed" is mutant allowed 2
common_end mutant

# --- echo_initial: everything the agent got goes to the permitted tool ---
config echo echo_initial
run echo
check "echo_initial: non-withheld canary delivered" has echo vault.sink "$canary"
check "echo_initial: withheld canary not delivered" sh -c "! grep -qF '$withheld' '$work/echo/vault.sink'"
check "echo_initial: nested withheld field removed, sibling kept" has echo vault.sink '"nested":{"keep":1}'
common_end echo

# --- invalid requests: fixed error, nothing delivered ---
for mode in raw_stdout configuration duplicate case_variant unknown_alias; do
	config "$mode" "$mode"
	run "$mode"
	check "$mode: ended invalid_request" is "$mode" ended invalid_request
	check "$mode: fixed message" is "$mode" message "invalid agent request"
	check "$mode: exit status 1" [ "$(cat "$work/$mode/rc")" = 1 ]
	check "$mode: sink empty" no_file "$mode" vault.sink
	check "$mode: no upstream spawned" no_file "$mode" vault.started
	common_end "$mode"
done

# --- budgets and agent failures ---
expect_end() {	# CASE REASON: fixed message, nothing delivered
	check "$1: ended $2" is "$1" ended "$2"
	check "$1: fixed message" is "$1" message "agent exchange failed"
	check "$1: sink empty" no_file "$1" vault.sink
	common_end "$1"
}
config oversize oversize; run oversize; expect_end oversize frame_too_large
config stdout_budget oversize echo public "" "" "" '{"stdout_bytes": 2048}'
run stdout_budget; expect_end stdout_budget stdout_budget
config stderr_flood stderr_flood; run stderr_flood; expect_end stderr_flood stderr_budget
check "stderr_flood: bytes counted, never stored" [ "$(field stderr_flood stderr_bytes)" -gt 1000000 ]
config crash crash; run crash; expect_end crash agent_failed
check "crash: exit code of abort()" is crash exit_code 134
config stall stall echo public "" "" "" '{"session_ms": 2000}'
run stall; expect_end stall session_timeout
config calls too_many_calls echo public "" "" "" '{"calls": 4}'
run calls
check "too_many_calls: ended call_budget" is calls ended call_budget
check "too_many_calls: exactly 4 calls delivered" [ "$(wc -l <"$work/calls/vault.sink")" = 4 ]
common_end calls

# --- Ctrl-C on the operator's terminal: an orderly stop, nothing left behind ---
config interrupt stall echo public "" "" "" '{"session_ms": 20000}'
"$airlock" run --config "$work/interrupt/config.json" --audit "$work/interrupt/audit.db" --json \
	>"$work/interrupt/summary.json" 2>"$work/interrupt/stderr" </dev/null &
engine=$!
for _ in $(seq 100); do
	[ -n "$("$DOCKER" ps -q --filter "label=io.airlock.owner-pid=$engine")" ] && break
	sleep 0.1
done
sleep 0.5
kill -INT "$engine"
wait "$engine"
check "SIGINT: ended operator_stop" is interrupt ended operator_stop
common_end interrupt

# --- a stop while a call waits at its upstream: the call gives up at once ---
# The vault never answers (timeout 3 s). SIGINT once its call is dispatched:
# the call's terminal entry says `stopped`, not upstream_timeout, and the
# stop is the session's end.
config stopcall normal stall
"$airlock" run --config "$work/stopcall/config.json" --audit "$work/stopcall/audit.db" --json \
	>"$work/stopcall/summary.json" 2>"$work/stopcall/stderr" </dev/null &
engine=$!
for _ in $(seq 100); do
	[ "$(sqlite3 "file:$work/stopcall/audit.db?mode=ro" "select count(*) from audit_entries
	     where type='dispatch' and tool='store'" 2>/dev/null)" = 1 ] && break
	sleep 0.1
done
check "stopcall: the vault's call was dispatched" audit_has stopcall "type='dispatch' and tool='store'"
kill -INT "$engine"
wait "$engine"
check "stopcall: ended operator_stop (not upstream_timeout)" is stopcall ended operator_stop
check "stopcall: the call's terminal entry: fault, rule stopped" \
	audit_has stopcall "type='call' and tool='store' and decision='fault' and rule='stopped'"
check "stopcall: no call entry says upstream_timeout" \
	bash -c '[ "$(sqlite3 "$1" "select count(*) from audit_entries where rule=\"upstream_timeout\"")" = 0 ]' \
	_ "$work/stopcall/audit.db"
check "stopcall: no vault process left" bash -c '! pgrep -f -- "--sink $1 "' _ "$work/stopcall/vault.sink"
common_end stopcall

# --- upstream faults end the session; error messages never leave ---
config malformed normal malformed; run malformed
check "malformed upstream: ended upstream_fault" is malformed ended upstream_fault
common_end malformed
config slow normal slow; run slow
check "slow upstream: ended upstream_timeout" is slow ended upstream_timeout
common_end slow
config dead normal exit; run dead
check "exiting upstream: ended upstream_fault" is dead ended upstream_fault
common_end dead
config missing normal echo public "" ', "ghost": {"argv": ["/nonexistent/mcp-server"]}'
sed -i 's/"upstream": "vault", "remote": "store"/"upstream": "ghost", "remote": "store"/' \
	"$work/missing/config.json"
run missing
check "missing upstream: ended upstream_unavailable" is missing ended upstream_unavailable
common_end missing
check "missing upstream: the reason says why it cannot start" \
	is missing reason "upstream ghost: cannot start: program /nonexistent/mcp-server: No such file or directory"
# The text summary's first line gives the operator the same reason (not the
# fixed message the agent got).
"$airlock" run --config "$work/missing/config.json" --audit "$work/missing/text.db" \
	>"$work/missing/text.out" 2>/dev/null </dev/null
check "missing upstream, text summary: the end and its reason" bash -c \
	'head -n 1 "$1" | grep -qxE "session s-[0-9a-f]+: upstream_unavailable: upstream ghost: cannot start: program /nonexistent/mcp-server: No such file or directory"' \
	_ "$work/missing/text.out"
# An initial payload that cannot be a frame is named by its fault, and no
# part of it reaches the reason (the array holds the canary).
mkdir -p "$work/payload-dir"
printf '[1, 2, "%s"]\n' "$canary" >"$work/payload-array.json"
payload=$work/payload-dir config payload_dir normal
run payload_dir
check "payload a directory: ended initial_refused" is payload_dir ended initial_refused
check "payload a directory: the message says no exchange began" \
	is payload_dir message "session did not start: no data entered a container"
check "payload a directory: the reason says it is not a regular file" \
	is payload_dir reason "initial payload $work/payload-dir: not a regular file"
common_end payload_dir
payload=$work/payload-array.json config payload_array normal
run payload_array
check "payload an array: ended initial_refused" is payload_array ended initial_refused
check "payload an array: the reason names the array" \
	is payload_array reason "initial payload $work/payload-array.json: holds a JSON array: the payload must be an object"
common_end payload_array
# A mistyped remote name is named at first contact, before any call: not catalog_drift.
config typo normal
sed -i 's/"upstream": "vault", "remote": "store"/"upstream": "vault", "remote": "remote"/' \
	"$work/typo/config.json"
run typo
check "mistyped remote: ended upstream_unavailable" is typo ended upstream_unavailable
check "mistyped remote: the reason names the key and the tool" \
	is typo reason "tools.store.remote: upstream vault lists no tool remote"
check "mistyped remote: the upstream was contacted (tools/list) but got no call" \
	bash -c "[ -e '$work/typo/vault.started' ] && [ ! -e '$work/typo/vault.sink' ]"
check "mistyped remote: not recorded as catalog_drift" \
	bash -c "[ \"\$(sqlite3 '$work/typo/audit.db' \"select count(*) from audit_entries where rule='catalog_drift'\")\" = 0 ]"
common_end typo
config upstream_error normal error; run upstream_error
check "upstream error: session goes on (agent_exit)" is upstream_error ended agent_exit
check "upstream error: the upstream got the canary (positive control)" has upstream_error vault.sink "$canary"
check "upstream error: only the code is kept" audit_has upstream_error "decision='error' and detail='{\"code\":-32000}'"
common_end upstream_error
config upstream_stderr normal stderr; run upstream_stderr
check "upstream stderr: counted" [ "$(field upstream_stderr upstream_stderr_bytes)" -gt 0 ]
common_end upstream_stderr

# --- OTLP export to a loopback collector: spans arrive, payload does not ---
python3 "$here/otlp_collector.py" "$work/otlp.jsonl" "$work/otlp.port" &
helpers+=($!)
for _ in $(seq 50); do [ -s "$work/otlp.port" ] && break; sleep 0.1; done
config otlp normal
run otlp --otlp "http://127.0.0.1:$(cat "$work/otlp.port")"
check "otlp: spans exported (positive control)" grep -q '"airlock.call"' "$work/otlp.jsonl"
check "otlp: request hash exported" grep -qF "$(sha_of_frame otlp)" "$work/otlp.jsonl"
check "otlp: no canary in any span" sh -c "! grep -qF '$canary' '$work/otlp.jsonl'"
check "otlp: no withheld canary in any span" sh -c "! grep -qF '$withheld' '$work/otlp.jsonl'"
check "otlp: the summary counts spans sent" [ "$(field otlp otlp.sent)" -gt 0 ]
check "otlp: and no failures" is otlp otlp.failed 0
common_end otlp
# A collector that is not there: the failures are reported, the session is not stopped.
dead_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
config otlp_dead normal
run otlp_dead --otlp "http://127.0.0.1:$dead_port"
check "otlp down: session still ends normally" is otlp_dead ended agent_exit
check "otlp down: the summary counts the failures" [ "$(field otlp_dead otlp.failed)" -gt 0 ]
check "otlp down: nothing counted as sent" is otlp_dead otlp.sent 0
check "otlp down: stderr reports them, with the first one's cause" \
	grep -qE "^airlock run: OTLP export: [0-9]+ of [0-9]+ spans failed; the first: Couldn't connect to server$" \
	"$work/otlp_dead/stderr"
check "otlp down: --json names the first failure's cause" \
	is otlp_dead otlp.first_failure "Couldn't connect to server"
common_end otlp_dead

# A collector that takes connections and never answers: calls go on at
# their pace, every one delivered, and the session ends by its own bounds
# (each audit write waited for its span's 2 s timeout before: 30 calls
# came to session_timeout after a few). The failures are reported.
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1024)
open(sys.argv[1], "w").write(str(s.getsockname()[1])); time.sleep(120)' "$work/silent.port" &
helpers+=($!)
for _ in $(seq 50); do [ -s "$work/silent.port" ] && break; sleep 0.1; done
config otlp_silent too_many_calls echo public "" "" "" '{"calls": 30, "session_ms": 15000}'
run otlp_silent --otlp "http://127.0.0.1:$(cat "$work/silent.port")"
check "otlp silent: the session ends by its call budget, not its time" is otlp_silent ended call_budget
check "otlp silent: all 30 calls delivered" [ "$(wc -l <"$work/otlp_silent/vault.sink")" = 30 ]
check "otlp silent: the summary counts the failures" [ "$(field otlp_silent otlp.failed)" -gt 0 ]
check "otlp silent: --json names the first failure's cause" \
	is otlp_silent otlp.first_failure "Timeout was reached"
common_end otlp_silent

# --- third-party MCP servers from npm -----------------------------------------
# They run as airlock-upstream: from a copy it can read.
[ -d "$thirdparty/node_modules" ] && thirdparty=$(npm_reachable "$thirdparty")
if [ ! -x "$thirdparty/node_modules/.bin/mcp-server-filesystem" ]; then
	if [ -n "${CI:-}" ]; then
		not_ok "third-party MCP servers are not installed (scripts/setup runs npm ci)"
	else
		echo "#### SKIPPED: third-party MCP servers not installed; run scripts/setup"
	fi
else
	thirdparty_case() {	# CASE [PIN]
		local dir=$work/$1 pin=${2:+, \"pin\": \"$2\"}
		mkdir -p "$dir/fs" && upstream_owns "$dir/fs"
		printf '{"path":"%s","content":"%s","message":"%s"}\n' \
			"$dir/fs/out.txt" "$canary" "$canary" >"$dir/payload.json"
		payload=$dir/payload.json config "$1" normal echo public \
			", \"fswrite\": {\"upstream\": \"fs\", \"remote\": \"write_file\", \"data_class\": \"confidential\",
			   \"sink_ceiling\": \"confidential\", \"response_ceiling\": \"confidential\"$pin},
			 \"shout\": {\"upstream\": \"everything\", \"remote\": \"echo\", \"data_class\": \"public\",
			   \"sink_ceiling\": \"public\", \"response_ceiling\": \"public\"}" \
			", \"fs\": {\"argv\": [\"$thirdparty/node_modules/.bin/mcp-server-filesystem\", \"$dir/fs\"],
			   \"env\": {\"PATH\": \"$node_dir:/usr/bin:/bin\"}, \"paths\": {\"rw\": [\"$dir/fs\"]}},
			 \"everything\": {\"argv\": [\"$thirdparty/node_modules/.bin/mcp-server-everything\"],
			   \"env\": {\"PATH\": \"$node_dir:/usr/bin:/bin\"}}"
		sed -i 's/"aliases": {"save": "store", "publish": "post"/"aliases": {"save": "fswrite", "publish": "shout"/' \
			"$dir/config.json"
		run "$1"
	}
	thirdparty_case fs
	check "third-party: write_file allowed" is fs allowed 1
	check "third-party: the file exists with the canary" grep -qF "$canary" "$work/fs/fs/out.txt"
	check "third-party: echo to the public sink denied" \
		audit_has fs "tool='shout' and decision='denied' and rule='sink_ceiling'"
	check "third-party: the public server was never spawned" is fs upstream_spawns 1
	common_end fs
	thirdparty_case drift 0000000000000000000000000000000000000000000000000000000000000000
	check "third-party: a wrong pinned hash is catalog_drift" \
		audit_has drift "tool='fswrite' and decision='denied' and rule='catalog_drift'"
	check "third-party: drift wrote no file" [ ! -e "$work/drift/fs/out.txt" ]
	check "third-party: the summary counts the drift by its rule" \
		[ "$(field drift denied_by.catalog_drift)" -ge 1 ]
	check "third-party: denials by rule add up to the denials" python3 -c '
import json, sys; d = json.load(open(sys.argv[1])); assert sum(d["denied_by"].values()) == d["denied"] > 0, d' \
		"$work/drift/summary.json"
	"$airlock" run --config "$work/drift/config.json" --audit "$work/drift/text.db" \
		>"$work/drift/text.out" 2>/dev/null </dev/null
	check "third-party: the text summary names the rule of the denials" \
		grep -qE "^  denied by   (.*, )?catalog_drift [0-9]+" "$work/drift/text.out"
	common_end drift
fi

# --- audit verify catches tampering (the CLI on a real session's DB) -----------
cp "$work/normal/audit.db" "$work/tamper.db"
sqlite3 "$work/tamper.db" "drop trigger if exists audit_no_update; drop trigger if exists audit_no_delete;" 2>/dev/null
for t in $(sqlite3 "$work/tamper.db" "select name from sqlite_master where type='trigger'"); do
	sqlite3 "$work/tamper.db" "drop trigger $t"
done
sqlite3 "$work/tamper.db" "update audit_entries set decision='allowed' where rule='sink_ceiling'"
check "audit verify: a changed decision is caught" sh -c "! '$airlock' audit verify '$work/tamper.db' >/dev/null"
cp "$work/normal/audit.db" "$work/deleted.db"
for t in $(sqlite3 "$work/deleted.db" "select name from sqlite_master where type='trigger'"); do
	sqlite3 "$work/deleted.db" "drop trigger $t"
done
sqlite3 "$work/deleted.db" "delete from audit_entries where seq = 3"
check "audit verify: a deleted row is caught" sh -c "! '$airlock' audit verify '$work/deleted.db' >/dev/null"

# --- audit tail: the entries of a real session, payload-free --------------------
db=$work/normal/audit.db sid=$(field normal session)
"$airlock" audit tail "$db" >"$work/tail.txt" 2>&1
check "audit tail: the newest 50 entries (here all), session_start first, session_end last" \
	bash -c '[ "$(wc -l <"$1")" = "$(sqlite3 "$2" "select min(count(*), 50) from audit_entries")" ] &&
		 head -n 1 "$1" | grep -q " session_start " && tail -n 1 "$1" | grep -q " session_end "' \
	_ "$work/tail.txt" "$db"
"$airlock" audit tail "$db" --json --session "$sid" >"$work/tail.json" 2>&1
check "audit tail --json --session: one object a line, all of that session" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert rows and all(r["session"] == sys.argv[2] and r["seq"] > 0 for r in rows), rows[:1]' \
	"$work/tail.json" "$sid"
check "audit tail --session of another id: nothing" \
	bash -c '[ -z "$("$1" audit tail "$2" --session s-0000000000000000)" ]' _ "$airlock" "$db"
check "audit tail --since an hour ago: all of them; --since 2099-01-01T00:00: none" \
	bash -c '[ "$("$1" audit tail "$2" --since 1h | wc -l)" = "$(wc -l <"$3")" ] &&
		 [ -z "$("$1" audit tail "$2" --since 2099-01-01T00:00)" ]' _ "$airlock" "$db" "$work/tail.txt"
check "audit tail --since nonsense: a usage error (exit 2) saying what it wants" \
	bash -c '"$1" audit tail "$2" --since yesterday 2>&1 >/dev/null | grep -qF "an age (90s, 15m, 2h, 7d)";
		 [ "${PIPESTATUS[0]}" = 2 ]' _ "$airlock" "$db"
check "audit tail: no canary in its text or JSON" \
	bash -c '! grep -qF "$1" "$2" "$3"' _ "$canary" "$work/tail.txt" "$work/tail.json"
# --follow prints what is appended after it started (a row added by hand to a copy).
cp "$db" "$work/follow.db"
"$airlock" audit tail "$work/follow.db" --follow >"$work/follow.txt" 2>&1 &
helpers+=($!)
for _ in $(seq 50); do [ -s "$work/follow.txt" ] && break; sleep 0.1; done
sqlite3 "$work/follow.db" "insert into audit_entries (entry_id, ts, session_id, type, decision,
	prev_hash, entry_hash) values ('e-follow', '2026-12-05T00:00:00.000Z', 's-follow',
	'policy', 'allowed', 'x', 'y')"
for _ in $(seq 50); do grep -q " s-follow " "$work/follow.txt" && break; sleep 0.1; done
check "audit tail --follow: an entry appended later is printed" grep -q " s-follow policy " "$work/follow.txt"

# The engine's own stderr never carried a canary in any case.
check "no canary in any engine stderr" sh -c "! grep -rqaF '$canary' '$work'/*/stderr"
# Every session this suite started (its audit DBs name them all, from the
# entry written before its container was created): none left a container.
# Judged by session label, so another suite's containers on the same
# daemon neither hide nor fake a leak.
sessions=$(for db in "$work"/*/audit.db "$work"/*/*/audit.db; do
	[ -s "$db" ] && sqlite3 "$db" "select distinct session_id from audit_entries"
done | sort -u)
leftover=$(for s in $sessions; do "$DOCKER" ps -aq --filter "label=io.airlock.session=$s"; done)
check "the audit DBs name the suite's sessions ($(wc -w <<<"$sessions"))" [ "$(wc -w <<<"$sessions")" -ge 10 ]
check "no container of this suite's sessions left on the daemon${leftover:+: $leftover}" [ -z "$leftover" ]

summary
