# The checks every test script counts, sourced by each of them.
#
#   check WHAT CMD...   run CMD: "ok: WHAT" or "not ok: WHAT"; CMD's status back
#   ok WHAT / not_ok WHAT   count one outcome decided by the script itself
#   summary             the closing "N passed, N failed" line the test runner
#                       counts; fails when any check failed
#
# A script that wants more on a failure (a screen, a log tail) defines
# on_not_ok; it runs after each "not ok" line.
passed=0 failed=0

ok() {
	passed=$((passed + 1))
	printf 'ok: %s\n' "$*"
}

not_ok() {
	failed=$((failed + 1))
	printf 'not ok: %s\n' "$*"
	if declare -F on_not_ok >/dev/null; then on_not_ok; fi
	return 0
}

check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; return 0; fi
	not_ok "$what"
	return 1
}

summary() {
	printf '%d passed, %d failed\n' "$passed" "$failed"
	[ "$failed" -eq 0 ]
}
