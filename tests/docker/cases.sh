# Shared by the scripts that run one `airlock run` per case (session.sh,
# sealed.sh): CASE's files are in $work/CASE (config.json, summary.json,
# audit.db, stderr, the upstreams' sinks); $airlock is the binary. Sourced
# after common.sh.

field() {	# CASE KEY → the summary's value (KEY may be dotted: admission.second)
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=d
for k in sys.argv[2].split("."): v=v[k]
print(json.dumps(v) if not isinstance(v, str) else v)' "$work/$1/summary.json" "$2" 2>/dev/null
}
is() { [ "$(field "$1" "$2")" = "$3" ]; }				# CASE KEY VALUE
has() { [ -s "$work/$1/$2" ] && grep -qF -- "$3" "$work/$1/$2"; }	# CASE FILE TEXT
no_file() { [ ! -e "$work/$1/$2" ]; }					# CASE FILE
gone() { session_gone "$(field "$1" session)"; }	# CASE: no container of its session left
chain_ok() { "$airlock" audit verify "$work/$1/audit.db" >/dev/null; }	# CASE
