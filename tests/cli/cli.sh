#!/usr/bin/env bash
# The command line without a daemon: the command table is what is accepted,
# repeated options are usage errors, config and audit errors name the path,
# the key and the reason, and --json errors are JSON. The man page's
# synopsis says what the table says.
# usage: cli.sh AIRLOCK MANPAGE
set -uo pipefail
airlock=$1 man=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/../checks.sh"
# try ARGS...: exit status in $rc, stdout in $work/out, stderr in $work/err
try() { rc=0; "$airlock" "$@" >"$work/out" 2>"$work/err" </dev/null || rc=$?; }
says() { [ -s "$work/$1" ] && grep -qF -- "$2" "$work/$1"; }
json_error() {	# FIELD-PART: stdout is one JSON object with ok false and an error containing it
	python3 - "$work/out" "$1" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
d = json.loads(lines[0])
assert d["ok"] is False and sys.argv[2] in d["error"], d
PY
}

image=sha256:$(printf '%064d' 7)
no_daemon=unix://$work/no-daemon.sock
export DOCKER_HOST=$no_daemon	# nothing here may need a daemon
printf '{"profile": {"image": "%s"}}\n' "$image" >"$work/good.json"
printf '{"profile": {"runtime": "runc"}}\n' >"$work/noimage.json"
printf '{"bounds": {"calls": 3}}\n' >"$work/noprofile.json"
printf '{"profile": {"image": "%s", "user": "4294967296:10001"}}\n' "$image" >"$work/biguid.json"

# --- the table: every command's options are exactly its usage line's ----------
commands=$("$airlock" --help | sed -n 's/^  \([a-z]\+\) .*/\1/p; s/^  \([a-z]\+\)$/\1/p' | grep -v '^airlock$')
check "help lists the ten commands" [ "$(echo $commands)" = "console watchdog doctor run inspect audit image reap serve ctl" ]
# Every command's description starts in one column, on its usage's line or,
# when the usage is too long for that, alone on the next.
aligned() {
	"$airlock" --help | awk '
		/^commands:/ { on = 1; next }
		on && /^$/ { exit }
		BEGIN { indent = sprintf("%47s", "") }
		on && substr($0, 1, 47) == indent && substr($0, 48, 1) ~ /[^ ]/ {
			if (!wait) bad++; wait = 0; described++; next }
		on { if (wait) bad++
		     if (substr($0, 47, 1) == " " && substr($0, 48, 1) ~ /[^ ]/) { wait = 0; described++ }
		     else wait = 1 }
		END { exit !(!bad && !wait && described == 10) }'
}
check "help: the ten descriptions start in one column" aligned
for c in $commands; do
	help=$("$airlock" "$c" --help) || help=
	usage=$(head -n 1 <<<"$help")
	check "$c --help starts with its usage line" bash -c '[[ "$1" == "usage: airlock $2"* ]]' _ "$usage" "$c"
	check "$c --help says what it does, as the command list does" \
		bash -c 'd=$(sed -n 3p <<<"$2"); [ -n "$d" ] && "$1" --help | grep -qF -- " $d"' \
		_ "$airlock" "$help"
	for opt in $(grep -oE -- '--[a-z-]+' <<<"$usage"); do
		check "$c --help says what $opt means" \
			bash -c 'sed -n "/^options:/,/^$/p" <<<"$1" | grep -qE -- "^  $2( [A-Z:]+)? +[a-z]"' _ "$help" "$opt"
	done
	try "$c" --no-such-option
	check "$c: a usage error prints the whole usage line, as --help's" \
		bash -c '[ "$1" = 2 ] && [ "$(tail -n 1 "$2")" = "$3" ]' _ "$rc" "$work/err" "$usage"
	if [ "$c" = ctl ]; then	# one a command finds after parsing, as ctl's checks of its terms
		try ctl status --since 1m
		check "ctl: a usage error found after parsing prints the whole usage line too" \
			bash -c '[ "$1" = 2 ] && [ "$(tail -n 1 "$2")" = "$3" ]' _ "$rc" "$work/err" "$usage"
	fi
	for opt in --json --config --audit --otlp --demo --read-only; do
		case $opt in --config|--audit|--otlp) args=("$opt" x) ;; *) args=("$opt") ;; esac
		try "$c" "${args[@]}" --help
		if [[ " $usage " == *" [$opt"* || " $usage " == *" $opt "* ]]; then
			check "$c takes $opt (named in its usage)" [ "$rc" = 0 ]
		else
			check "$c refuses $opt (not in its usage)" \
				bash -c '[ "$1" = 2 ] && grep -qF -- "$2 is not an option of this command" "$3"' \
				_ "$rc" "$opt" "$work/err"
		fi
	done
done

# --- the README's command list: a command with one usage line there has --help's ---
readme=$(dirname "$man")/../README.md
for c in run reap inspect doctor serve ctl image; do
	check "README's usage of $c is --help's, whole" python3 - "$readme" "$c" "$("$airlock" "$c" --help | head -n 1)" <<'PY'
import re, sys
text, cmd, usage = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
block = text.split("## Commands\n", 1)[1].split("```\n", 2)[1]
lines = block.splitlines()
for i, l in enumerate(lines):
    if l.startswith("airlock %s " % cmd) or l == "airlock %s" % cmd:
        words = l.split("  ")[0].split()
        for cont in lines[i + 1:]:
            if not re.match(r"^ {2,40}\[", cont):
                break
            words += cont.split()
        got = "usage: " + " ".join(words)
        assert got == usage, (got, usage)
        break
else:
    raise SystemExit("README names no airlock %s" % cmd)
PY
done

# --- an option's value missing, or one given to a flag: said as such ---------------
try run --config
check "run --config with no value: a usage error saying the option wants one" \
	bash -c '[ "$1" = 2 ] && grep -qF -- "--config wants a value (FILE)" "$2"' _ "$rc" "$work/err"
try ctl status --json=yes
check "ctl status --json=yes: a usage error, a flag takes no value" \
	bash -c '[ "$1" = 2 ] && grep -qF -- "--json takes no value" "$2"' _ "$rc" "$work/err"

# --- a repeated option is a usage error, unless the table says it repeats -------
for argv in "reap --json --json" "doctor --config a --config b" "run --config a --config=b" \
	    "inspect c --json --json" "audit verify db --json --json" \
	    "run --config a --audit x --audit y" "console --audit a --audit b"; do
	try $argv
	opt=$(echo "$argv" | grep -o -- '--[a-z]*' | sort | uniq -d | head -1)
	check "airlock $argv: exit 2, '$opt given twice'" \
		bash -c '[ "$1" = 2 ] && grep -qF -- "$2 given twice" "$3" && grep -q "^usage: airlock " "$3"' \
		_ "$rc" "$opt" "$work/err"
done
try console --config a --config b --config c
check "console --config repeats (parsed; then it wants a terminal)" \
	bash -c '[ "$1" = 2 ] && grep -q "needs a terminal" "$2" && ! grep -q "given twice" "$2"' _ "$rc" "$work/err"
check "run without --config: usage error" bash -c "'$airlock' run >/dev/null 2>&1; [ \$? = 2 ]"

# --- image add-shim: IMAGE is an image ID or a local name[:tag], nothing else ----
for ref in 'a/../b' 'a//b' '/abs' 'name@sha256:00' 'host:5000/name' 'sha256:abc' '-x' 'a b' "$(printf 'n%.0s' $(seq 256))"; do
	try image add-shim -- "$ref"
	check "image add-shim '${ref:0:20}': exit 2, the form IMAGE must have" \
		bash -c '[ "$1" = 2 ] && grep -qF "IMAGE must be an image ID (sha256:<64 hex>) or a local name[:tag]" "$2"' \
		_ "$rc" "$work/err"
done
for argv in "image" "image add-shim" "image build x" "image add-shim a b"; do
	try $argv
	check "airlock $argv: usage error" [ "$rc" = 2 ]
done
rc=0; AIRLOCK_SHIM=relative/shim "$airlock" image add-shim "sha256:$(printf '%064d' 7)" --json \
	>"$work/out" 2>"$work/err" </dev/null || rc=$?
check "image add-shim, AIRLOCK_SHIM not absolute: exit 3, said in text and JSON" \
	bash -c '[ "$1" = 3 ] && grep -qF "AIRLOCK_SHIM is not an absolute path" "$2" &&
		 python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"ok\"] is False and \"AIRLOCK_SHIM\" in d[\"error\"]" "$3"' \
	_ "$rc" "$work/err" "$work/out"

# --- config errors fail closed, naming the path, the key and the reason --------
mkfifo "$work/fifo"
for c in run doctor "inspect box"; do
	try $c --config "$work"
	check "$c --config DIR: exit 3, 'not a regular file' with the path" \
		bash -c '[ "$1" = 3 ] && grep -qF "config $2: not a regular file" "$3"' _ "$rc" "$work" "$work/err"
	# No writer ever opens it: reading it would wait for ever.
	rc=0; timeout 10 "$airlock" $c --config "$work/fifo" >"$work/out" 2>"$work/err" </dev/null || rc=$?
	check "$c --config FIFO: exit 3 at once, 'not a regular file'" \
		bash -c '[ "$1" = 3 ] && grep -qF "config $2: not a regular file" "$3"' _ "$rc" "$work/fifo" "$work/err"
	try $c --config "$work/noimage.json"
	check "$c: no profile.image: exit 3, the key named" \
		bash -c '[ "$1" = 3 ] && grep -qF "profile.image: required" "$2"' _ "$rc" "$work/err"
	try $c --config "$work/noprofile.json"
	check "$c: no profile: exit 3, the key named" \
		bash -c '[ "$1" = 3 ] && grep -qF "profile: required" "$2"' _ "$rc" "$work/err"
	try $c --config "$work/noimage.json" --json
	check "$c --json: a config error is a JSON error object" json_error "profile.image: required"
	try $c --config "$work/missing.json" --json
	check "$c --json: a missing file is a JSON error naming the reason" json_error "No such file or directory"
done
try run --config "$work/biguid.json"
check "a uid of 2^32 is refused, naming profile.user" \
	bash -c '[ "$1" = 3 ] && grep -qF "profile.user: uid and gid must be at most 4294967294" "$2"' _ "$rc" "$work/err"

# --- audit paths: named with the reason -----------------------------------------
try run --config "$work/good.json" --audit "$work/none/audit.db"
check "run --audit in a missing directory: exit 3, path and reason" \
	bash -c '[ "$1" = 3 ] && grep -qF "audit $2/none/audit.db: cannot open database: $2/none: No such file or directory" "$3"' \
	_ "$rc" "$work" "$work/err"
try run --config "$work/good.json" --audit "$work" --json
check "run --audit DIR --json: a JSON error, 'is a directory'" json_error "audit $work: cannot open database: is a directory"
try audit verify "$work/absent.db" --anchor 12:abc
check "audit verify --anchor that is not SEQ:HASH: usage error, says what it wants" \
	bash -c '[ "$1" = 2 ] && grep -qF -- "--anchor wants SEQ:HASH" "$2"' _ "$rc" "$work/err"
try audit verify "$work/absent.db"
check "audit verify of a missing file: exit 3, path and reason" \
	bash -c '[ "$1" = 3 ] && grep -qF "audit $2/absent.db: cannot open database: No such file or directory" "$3"' \
	_ "$rc" "$work" "$work/err"
check "audit verify did not create the file" [ ! -e "$work/absent.db" ]
try audit verify "$work/absent.db" --json
check "audit verify --json: a JSON error" json_error "No such file or directory"
# An audit log that is a FIFO would hold SQLite in its first read for ever.
for c in "audit verify $work/fifo" "run --config $work/good.json --audit $work/fifo"; do
	rc=0; timeout 10 "$airlock" $c >"$work/out" 2>"$work/err" </dev/null || rc=$?
	check "${c%% *} with a FIFO for its log: exit 3 at once, 'not a regular file'" \
		bash -c '[ "$1" = 3 ] && grep -qF "audit $2: cannot open database: not a regular file" "$3"' \
		_ "$rc" "$work/fifo" "$work/err"
done

# --- ctl's and audit's own commands: each listed, one line, the rest refused ----
# verbs CMD: the names in CMD --help's "commands:" section
verbs() { "$airlock" "$1" --help | sed -n '/^commands:/,/^$/s/^  \([a-z-]\+\).*/\1/p'; }
check "ctl --help lists its twenty-two commands" \
	[ "$(verbs ctl | wc -l)" = 22 ]
check "audit --help lists its five commands" [ "$(echo $(verbs audit))" = "verify tail timeline propose hash" ]
for c in ctl audit; do
	check "$c --help: each command on a line of its own, within 80 columns" \
		bash -c '"$1" "$2" --help | sed -n "/^commands:/,/^$/p" | awk "length(\$0) > 80 { bad = 1 } END { exit bad }"' _ "$airlock" "$c"
	for v in $(verbs "$c"); do
		# "[ID]": an operand or an option instead (quarantine ID | --all)
		operand=$("$airlock" "$c" --help | sed -n "/^commands:/,/^\$/s/^  $v \[\?\([A-Z]\+\)\]\? .*/\1/p")
		if [ "$c" = ctl ]; then
			scope=; case $v in revoke|restore|hold) scope=--all ;; esac
			try ctl "$v" ${operand:+x} $scope --socket "$work/no-engine.sock"
			check "ctl $v is a command: it goes on to the socket (exit 3, named)" \
				bash -c '[ "$1" = 3 ] && grep -qF "$2: does not exist" "$3"' _ "$rc" "$work/no-engine.sock" "$work/err"
		else
			file=; [ "$v" = hash ] && file=-	# hash DB FILE
			try audit "$v" "$work/no-log.db" $file
			check "audit $v is a command: it goes on to the log (exit 3, named)" \
				bash -c '[ "$1" = 3 ] && grep -qF "$2" "$3"' _ "$rc" "$work/no-log.db" "$work/err"
		fi
		# ctl's paragraph lists `.B status`, `.BI start " FILE"`; audit's have `.B audit verify`
		prefix=; [ "$c" = audit ] && prefix='audit '
		check "the man page names $c $v" grep -qE "^\.BI? \"?$prefix${v//-/\\\\-}([\" ]|\$)" "$man"
		if [ -n "$operand" ]; then
			try "$c" "$v" --socket "$work/no-engine.sock"
			[ "$c" = audit ] && try audit "$v"
			check "$c $v without its $operand: a usage error naming it, nothing dialled" \
				bash -c '[ "$1" = 2 ] && grep -qF "$2 wants $3" "$4" && ! grep -q "does not exist" "$4"' \
				_ "$rc" "$v" "$operand" "$work/err"
		fi
	done
	try "$c" frobnicate x --socket "$work/no-engine.sock"
	[ "$c" = audit ] && try audit frobnicate "$work/no-log.db"
	check "$c frobnicate: unknown, a usage error before any socket or file" \
		bash -c '[ "$1" = 2 ] && grep -qF "unknown command '"'"'frobnicate'"'"' (airlock $2 --help lists them)" "$3" &&
			 ! grep -q "does not exist\|cannot open" "$3"' _ "$rc" "$c" "$work/err"
done
# --- audit timeline and propose: a log as the engine's writers leave it ----------
# Rows as audit.c stores them (the chain is not what these read); a canary in
# every place payload could leak from: a call's detail and hashes, a policy
# entry's detail beyond its author, a reap's detail, the classes.
python3 - "$work/story.db" <<'PY'
import hashlib, json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("CREATE TABLE audit_entries (seq INTEGER PRIMARY KEY, entry_id TEXT NOT NULL,"
           " ts TEXT NOT NULL, session_id TEXT NOT NULL, call_id TEXT, type TEXT NOT NULL,"
           " tool TEXT, decision TEXT, rule TEXT, revision INTEGER, latency_us INTEGER,"
           " request_hash TEXT, response_hash TEXT, class_before TEXT, class_after TEXT,"
           " detail TEXT, prev_hash TEXT NOT NULL, entry_hash TEXT NOT NULL)")
C = "Qz7CNRY"
alice = '{"by":"alice","uid":1001,"via":"ctl","x":"%s"}' % C
rows = [
    ("s-1", "session_start", None, "start", None, 0, None),
    ("s-1", "policy", "store", "applied", "revoke applied", 1, alice),
    ("s-1", "call", "store", "denied", "revoked", 1, '{"t":"%s"}' % C),
    ("s-1", "call", "store", "denied", "revoked", 1, '{"t":"%s"}' % C),
    ("s-1", "call", "mail.send", "denied", "sink_ceiling", 1, '{"t":"%s"}' % C),
    ("s-1", "policy", "store", "applied", "restore applied", 2, alice),
    ("s-1", "reap", None, "reaped", "owner_gone", 2, '{"container":"%s"}' % C),
    ("s-1", "session_end", None, "abnormal", "engine_lost", 2, '{"x":"%s"}' % C),
]
# chained as the writer chains them (audit_row.c): an entry's hash is the
# SHA-256 of its first 17 columns as a compact JSON array (propose reads
# only a log that verifies)
prev = "0" * 64
for i, (sid, typ, tool, dec, rule, rev, detail) in enumerate(rows, 1):
    row = [i, "%032x" % i, "2026-12-05T13:00:%02d.000000Z" % i, sid,
           "call-" + C if typ == "call" else None, typ, tool, dec, rule, rev, 5,
           C * 9 if typ == "call" else None, C * 9 if typ == "call" else None, C, C,
           detail, prev]
    prev = hashlib.sha256(json.dumps(row, separators=(",", ":"), ensure_ascii=False)
                          .encode()).hexdigest()
    db.execute("INSERT INTO audit_entries VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
               row + [prev])
# its append-only triggers, as the writer makes them (audit_row.h): without
# them a log with entries is one altered by hand, which every reader refuses
for op in ("update", "delete"):
    db.execute("CREATE TRIGGER audit_entries_no_%s BEFORE %s ON audit_entries"
               " BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END" % (op, op.upper()))
db.commit()
PY
no_canary() { ! grep -q Qz7CNRY "$work/out" "$work/err"; }
try audit timeline "$work/story.db"
check "audit timeline: one line an event, the revoke with its author and acks" \
	bash -c '[ "$1" = 0 ] && [ "$(wc -l <"$2")" = 5 ] &&
		 grep -qF "policy revoke store r1 by alice (uid 1001, via ctl): 1 applied, 0 not_applicable, 0 rejected" "$2" &&
		 grep -qF "session_end s-1 abnormal engine_lost" "$2"' _ "$rc" "$work/out"
check "audit timeline: no payload, no detail beyond the author, no hash" no_canary
try audit timeline "$work/story.db" --json
check "audit timeline --json: JSON lines, one object an event, in sequence order" \
	python3 - "$work/out" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
assert [l["event"] for l in lines] == ["session_start", "policy", "policy", "reap", "session_end"], lines
assert lines[1]["by"] == {"user": "alice", "uid": 1001, "via": "ctl"}, lines[1]
assert lines[1]["acks"] == {"applied": 1, "not_applicable": 0, "rejected": 0}, lines[1]
assert [l["seq"] for l in lines] == sorted(l["seq"] for l in lines)
PY
check "audit timeline --json: no canary" no_canary
try audit timeline "$work/story.db" --since 2026-12-05T13:00:06
check "audit timeline --since: the events from then on" \
	bash -c '[ "$1" = 0 ] && [ "$(wc -l <"$2")" = 3 ] && head -n 1 "$2" | grep -qF "policy restore store r2"' _ "$rc" "$work/out"
try audit timeline "$work/story.db" --since yesterday
check "audit timeline --since that is not a time: usage error" \
	bash -c '[ "$1" = 2 ] && grep -qF -- "--since wants a UTC time" "$2"' _ "$rc" "$work/err"
try audit timeline "$work/story.db" --session s-1
check "audit timeline --session: not its option, a usage error" \
	bash -c '[ "$1" = 2 ] && grep -qF -- "--session is not an option of audit timeline" "$2"' _ "$rc" "$work/err"
try audit propose "$work/story.db"
check "audit propose: a file that restores what was denied revoked, with its note; exit 0" \
	python3 - "$rc" "$work/out" <<'PY'
import json, sys
assert sys.argv[1] == "0", sys.argv[1]
f = json.load(open(sys.argv[2]))
assert f == {"restore": ["store"], "why": {"store": "2 calls in 1 session denied revoked, "
             "2026-12-05T13:00:03Z to 2026-12-05T13:00:04Z"}}, f
PY
check "audit propose: the sink_ceiling denial named on stderr with what would change it" \
	says err "not proposed: 1 call of mail.send in 1 session denied sink_ceiling; what would change it: the tool's sink_ceiling in the session's config"
check "audit propose: what apply reaches beyond the calls seen, said on stderr" \
	says err "proposed: ctl apply restores each tool on every session, those started later too, and lifts its holds there; the calls were denied in at least 1 session"
check "audit propose: no canary" no_canary
try audit propose "$work/story.db" --since 2026-12-05T13:00:05
check "audit propose with nothing an incident file can express: exit 1, said, no file" \
	bash -c '[ "$1" = 1 ] && [ ! -s "$2" ] && grep -qF "nothing to propose: no call was denied by a rule an incident file can change" "$3"' \
	_ "$rc" "$work/out" "$work/err"
try audit propose "$work/story.db" --session s-9
check "audit propose of a session with no denial: exit 1, 'no call was denied'" \
	bash -c '[ "$1" = 1 ] && grep -qF "nothing to propose: no call was denied" "$2"' _ "$rc" "$work/err"
try audit propose "$work/story.db" --json
check "audit propose --json: not its option (it prints a file), a usage error" \
	bash -c '[ "$1" = 2 ] && grep -qF -- "--json is not an option of audit propose" "$2"' _ "$rc" "$work/err"
for v in timeline propose; do
	try audit "$v" "$work/absent.db"
	check "audit $v of a missing file: exit 3, path and reason, not created" \
		bash -c '[ "$1" = 3 ] && grep -qF "audit $2 $3/absent.db: cannot open database: No such file or directory" "$4" && [ ! -e "$3/absent.db" ]' \
		_ "$rc" "$v" "$work" "$work/err"
	try audit "$v" "$work/good.json"
	check "audit $v of a file that is not a log: exit 3, said" \
		bash -c '[ "$1" = 3 ] && grep -qF "not an audit database" "$2"' _ "$rc" "$work/err"
done
try audit timeline "$work/absent.db" --json
check "audit timeline --json of a missing file: a JSON error" json_error "No such file or directory"

# --- audit hash: a payload checked against a log the real writer made ------------
# run with no daemon still writes its log (start, refused admission, end).
for l in k1 k2; do try run --config "$work/good.json" --audit "$work/$l.db"; done
printf '{"pin":"4821"}' >"$work/pin.json"
keyed() {	# DB FILE: HMAC-SHA-256 of FILE under DB's stored key, by Python
	python3 -c 'import hashlib, hmac, sqlite3, sys
(key,) = sqlite3.connect(sys.argv[1]).execute("select key from audit_key").fetchone()
assert len(key) == 32
print(hmac.new(key, open(sys.argv[2], "rb").read(), hashlib.sha256).hexdigest())' "$1" "$2"
}
try audit hash "$work/k1.db" "$work/pin.json"
check "audit hash: HMAC-SHA-256 of the file under the log's key, exit 0" \
	bash -c '[ "$1" = 0 ] && [ "$(cat "$2")" = "$3" ]' _ "$rc" "$work/out" "$(keyed "$work/k1.db" "$work/pin.json")"
check "audit hash: not the plain SHA-256 of the bytes" \
	bash -c '[ "$(cat "$1")" != "$(sha256sum <"$2" | cut -d" " -f1)" ]' _ "$work/out" "$work/pin.json"
cp "$work/out" "$work/k1.hash"
rc=0; "$airlock" audit hash "$work/k1.db" - <"$work/pin.json" >"$work/out" 2>"$work/err" || rc=$?
check "audit hash DB -: stdin's bytes, the same hash" \
	bash -c '[ "$1" = 0 ] && cmp -s "$2" "$3"' _ "$rc" "$work/out" "$work/k1.hash"
try audit hash "$work/k2.db" "$work/pin.json"
check "audit hash: another log, another key, another hash" \
	bash -c '[ "$1" = 0 ] && [ -s "$2" ] && ! cmp -s "$2" "$3"' _ "$rc" "$work/out" "$work/k1.hash"
try audit hash "$work/story.db" "$work/pin.json"
check "audit hash of a log no engine of this version opened: exit 3, no key, nothing made" \
	bash -c '[ "$1" = 3 ] && grep -qF "no payload key" "$2" &&
		 [ -z "$(sqlite3 "$3" "select name from sqlite_master where name = '"'audit_key'"'")" ]' \
	_ "$rc" "$work/err" "$work/story.db"
try audit hash "$work/k1.db" "$work/no-payload"
check "audit hash of a missing FILE: exit 3, the file and the reason" \
	bash -c '[ "$1" = 3 ] && grep -qF "audit hash $2: cannot read: No such file or directory" "$3"' \
	_ "$rc" "$work/no-payload" "$work/err"
try audit hash "$work/k1.db"
check "audit hash without its FILE: a usage error" \
	bash -c '[ "$1" = 2 ] && grep -qF "hash wants DB FILE" "$2"' _ "$rc" "$work/err"
try audit verify "$work/k1.db" "$work/pin.json"
check "audit verify with a FILE: a usage error, the operand named" \
	bash -c '[ "$1" = 2 ] && grep -qF "unexpected argument" "$2"' _ "$rc" "$work/err"
try audit hash "$work/k1.db" "$work/pin.json" --json
check "audit hash --json: not its option, a usage error" \
	bash -c '[ "$1" = 2 ] && grep -qF -- "--json is not an option of audit hash" "$2"' _ "$rc" "$work/err"

try ctl status extra --socket "$work/no-engine.sock"
check "ctl status with an operand: a usage error, nothing dialled" \
	bash -c '[ "$1" = 2 ] && grep -qF "status takes no operand" "$2" && ! grep -q "does not exist" "$2"' _ "$rc" "$work/err"
# A grant's terms are restore's only, and bounded: refused before any socket.
for args in "revoke x --all --calls 2" "tools --for 15m" "freeze --calls 1"; do
	try ctl $args --socket "$work/no-engine.sock"
	check "ctl $args: a usage error, nothing dialled" \
		bash -c '[ "$1" = 2 ] && grep -qF "are restore'"'"'s only" "$2" && ! grep -q "does not exist" "$2"' _ "$rc" "$work/err"
done
for bad in "--for 25h" "--for 0s" "--for 90" "--for 1.5h" "--calls 0" "--calls 1000001" "--calls two"; do
	try ctl restore x --all $bad --socket "$work/no-engine.sock"
	check "ctl restore $bad: out of bounds, a usage error naming them, nothing dialled" \
		bash -c '[ "$1" = 2 ] && grep -qE "(--for wants 90s, 15m or 2h: 1 s to 24 h|--calls wants a number from 1 to 1000000)" "$2" &&
			 ! grep -q "does not exist" "$2"' _ "$rc" "$work/err"
done
# A class flow takes TOOL's place in hold and restore only, never a grant: refused before any socket.
for args in "revoke x --flow pii>public --all:is hold's and restore's only" \
	    "pending --flow pii>public:is hold's and restore's only" \
	    "hold x --flow pii>public --all:hold wants TOOL or --flow CLASS>SINK (not both)" \
	    "restore --flow pii>public --all --for 15m:grant a tool, not a class flow" \
	    "hold --all:hold wants TOOL" \
	    "hold --flow pii --all:--flow wants CLASS>SINK, quoted for the shell ('confidential>public'), not 'pii'" \
	    `# An option the verb does not take, or a cutover without its scope, too.` \
	    "timeline --session s-1:--session is not an option of ctl timeline" \
	    "status --follow:--follow is not an option of ctl status" \
	    "stop s-1 --wait 10:--wait is not an option of ctl stop" \
	    "freeze --all:--all is not an option of ctl freeze" \
	    "revoke x:revoke wants --all or --session ID" \
	    "restore x --all --session s-1:restore wants --all or --session ID, not both"; do
	try ctl ${args%%:*} --socket "$work/no-engine.sock"
	check "ctl ${args%%:*}: a usage error, nothing dialled" \
		bash -c '[ "$1" = 2 ] && grep -qF -- "$3" "$2" && ! grep -q "does not exist" "$2"' _ "$rc" "$work/err" "${args#*:}"
done
try ctl hold --flow 'pii>public' --all --socket "$work/no-engine.sock"
check "ctl hold --flow pii>public --all: no TOOL needed, it goes on to the socket" \
	bash -c '[ "$1" = 3 ] && grep -qF "does not exist" "$2"' _ "$rc" "$work/err"
try ctl restore x --all --for 24h --calls 1000000 --socket "$work/no-engine.sock"
check "ctl restore --for 24h --calls 1000000: within bounds, it goes on to the socket" \
	bash -c '[ "$1" = 3 ] && grep -qF "does not exist" "$2"' _ "$rc" "$work/err"

# --- the man page's synopsis is the table's usage lines --------------------------
python3 - "$man" >"$work/synopsis" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
syn = text.split(".SH SYNOPSIS\n", 1)[1].split("\n.SH ", 1)[0]
def words(line):
    m, _, rest = line.partition(" ")
    args = re.findall(r'"[^"]*"|\S+', rest)
    args = [a.strip('"').replace("\\-", "-") for a in args]
    return "".join(args) if m in (".RB", ".IR", ".BR", ".RI") else " ".join(args)
for group in syn.split("\n.br\n"):
    out = " ".join(words(l) for l in group.splitlines() if l.startswith("."))
    print(re.sub(r"^airlock \[console\]", "airlock console", out))
PY
for c in $commands; do
	usage=$("$airlock" "$c" --help | sed -n '1s/^usage: //p')
	if "$airlock" --help | grep -qE "^  $c .* internal: "; then
		check "the internal $c is not in the man page" bash -c '! grep -q "^airlock watchdog" "$1"' _ "$work/synopsis"
	else
		check "man page synopsis has: $usage" grep -qxF -- "$usage" "$work/synopsis"
	fi
done
check "man page synopsis has nothing else" \
	[ "$(grep -c '^airlock [a-z]' "$work/synopsis")" = "$("$airlock" --help | grep -E '^  [a-z]+ ' | grep -v '^  airlock ' | grep -vc ' internal: ')" ]

# --- an airlock copied alone: serve refuses before it listens, saying where it looked ---
# Its helpers are neither beside it nor (in a mount namespace of its own,
# with an empty libexecdir over any installed copy) in libexecdir.
libexec=$(sed -n 's/^#define AIRLOCK_LIBEXECDIR "\(.*\)"$/\1/p' "$(dirname "$airlock")/airlock-config.h")
mkdir -p "$work/alone" && cp "$airlock" "$work/alone/airlock"
rc=0
unshare -r -m sh -c '[ ! -d "$1" ] || mount -t tmpfs tmpfs "$1" || exit 99
	[ ! -e "$1/airlock-watchdog" ] || exit 98; shift; exec "$@"' _ "$libexec" \
	timeout 20 "$work/alone/airlock" serve --socket "$work/alone.sock" --audit "$work/alone.db" \
	>"$work/out" 2>"$work/err" </dev/null || rc=$?
check "libexecdir known ($libexec) and emptied for the lone copy" \
	bash -c '[ -n "$1" ] && [ "$2" -lt 98 ]' _ "$libexec" "$rc"
check "serve of a lone copy: refused (exit 3), naming the watchdog and both places" \
	bash -c '[ "$1" = 3 ] && grep -qxF "airlock serve: supervisor: airlock-watchdog is neither beside $2 nor in $3 (install airlock whole, with meson install, or run the airlock of its build tree)" "$4"' \
	_ "$rc" "$work/alone/airlock" "$libexec" "$work/err"
check "... and its socket is gone" [ ! -e "$work/alone.sock" ]

# --- ctl talks only to an engine it would have asked for ---------------------------------
# fake DIR NAME [HELLO]: uid 65534 binds DIR/NAME.sock, says HELLO (a line) to the one
# client it takes, and writes how many bytes it got to DIR/NAME.got.
fake() {
	setpriv --reuid 65534 --regid 65534 --clear-groups /usr/bin/python3 -c '
import os, socket, sys
d, name, hello = sys.argv[1], sys.argv[2], sys.argv[3].encode()
s = socket.socket(socket.AF_UNIX)
s.bind(os.path.join(d, name + ".sock"))
s.listen(1)
s.settimeout(20)
open(os.path.join(d, name + ".ready"), "w").close()
got = b""
try:
    c, _ = s.accept()
    c.settimeout(3)
    if hello:
        c.sendall(hello + b"\n")
    while True:
        b = c.recv(4096)
        if not b:
            break
        got += b
except OSError:
    pass
open(os.path.join(d, name + ".got"), "w").write(str(len(got)))' "$1" "$2" "${3:-}" &
	for _ in $(seq 100); do [ -e "$1/$2.ready" ] && return 0; sleep 0.05; done
	return 1
}
if [ "$(id -u)" = 0 ]; then
	chmod 0711 "$work"
	mkdir -m 1777 "$work/anyone"	# as /tmp: anyone may bind there
	hello='{"airlock": 1, "engine": "fake", "role": "operate", "uid": 0, "user": "root"}'
	fake "$work/anyone" engine "$hello"	# it even says hello as an engine does
	try ctl status --socket "$work/anyone/engine.sock"
	check "ctl refuses a socket another uid bound where anyone may write: exit 3, naming the uid" \
		bash -c '[ "$1" = 3 ] && grep -qF "$2: answered by uid 65534, neither root, you, nor the owner of its directory" "$3"' \
		_ "$rc" "$work/anyone/engine.sock" "$work/err"
	wait
	check "…and that socket got not one byte" [ "$(cat "$work/anyone/engine.got" 2>/dev/null)" = 0 ]
	# Positive control: the same uid in a directory only it may write (the unit's airlock in /run/airlock).
	install -d -o 65534 -g 65534 -m 0755 "$work/own"
	fake "$work/own" engine "$hello"
	try ctl status --socket "$work/own/engine.sock"
	wait
	check "…one of the owner of a directory only it may write is talked to (its socket got a request)" \
		bash -c '! grep -q "answered by uid" "$1" && [ "$(cat "$2" 2>/dev/null)" -gt 0 ]' _ "$work/err" "$work/own/engine.got"
else
	echo "## SKIPPED: ctl's check of who answers needs root (another uid to bind a socket)" | tee /dev/stderr
fi

summary
