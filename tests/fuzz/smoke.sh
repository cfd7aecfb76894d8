#!/usr/bin/env bash
# One fuzz target's smoke run: FUZZER CORPUS DICT ARTIFACTS. Runs the
# target over its seed corpus for AIRLOCK_FUZZ_SECONDS (default 5) with its
# dictionary. New inputs go to a scratch directory, never into the source
# tree; a crash input is kept in ARTIFACTS (under the build directory) and
# fails the test. An empty corpus or a run that executed nothing fails too.
set -uo pipefail

fuzzer=$1 corpus=$2 dict=$3 artifacts=$4
seconds=${AIRLOCK_FUZZ_SECONDS:-5}
name=$(basename "$fuzzer")

die() { printf '%s: %s\n' "$name" "$*" >&2; exit 1; }

[ -x "$fuzzer" ] || die "no fuzzer at $fuzzer"
[ -f "$dict" ] || die "no dictionary at $dict"
# libFuzzer skips empty files (it runs the empty input first anyway).
seeds=$(find "$corpus" -type f -size +0 2>/dev/null | wc -l)
[ "$seeds" -gt 0 ] || die "no seed inputs in $corpus"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/airlock-fuzz-XXXXXX") || die "mktemp failed"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$artifacts" "$scratch/new" || die "cannot make $artifacts"
log=$scratch/log

"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
	-dict="$dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
	"$scratch/new" "$corpus" >"$log" 2>&1
rc=$?
tail -n 40 "$log"
[ $rc -eq 0 ] || die "exit status $rc: see the input kept in $artifacts/"

# The seeds were all read, and the target ran.
grep -q "INFO: seed corpus: files: $seeds " "$log" ||
	die "libFuzzer did not read the $seeds seed inputs"
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
[ "${runs:-0}" -gt "$seeds" ] || die "executed ${runs:-0} inputs, expected more than the $seeds seeds"
echo "$name: $runs inputs in ${seconds} s, $seeds seeds, no crash"
