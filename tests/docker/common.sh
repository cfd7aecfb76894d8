# Shared by the Docker suite's scripts: find the daemon or decide loudly.
sock=/var/run/docker.sock
case "${DOCKER_HOST:-}" in unix://*) sock=${DOCKER_HOST#unix://} ;; esac
DOCKER=/usr/bin/docker
[ -x "$DOCKER" ] || DOCKER=$(command -v docker || echo docker)

daemon_answers() {
	curl -fsS --max-time 5 --unix-socket "$sock" http://localhost/_ping >/dev/null 2>&1
}

# Exit 77 (meson: skipped) with a banner when no daemon answers and CI is
# unset; fail when CI is set.
require_daemon() {
	daemon_answers && return 0
	if [ -n "${CI:-}" ]; then
		echo "FAIL: CI is set but no Docker daemon answers on $sock (run scripts/setup)" >&2
		exit 1
	fi
	{
		echo "################################################################"
		echo "## SKIPPED: no Docker daemon answers on $sock; confinement NOT verified"
		echo "## (run scripts/setup; with CI set this is a failure)"
		echo "################################################################"
	} | tee /dev/stderr
	exit 77
}

# scratch_image DIR BINARY [DOCKERFILE_LINES]: build a FROM scratch image
# holding BINARY as /NAME (its entrypoint), plus any extra Dockerfile lines
# (before the ENTRYPOINT), in build context DIR; print its image ID. Fails,
# printing nothing, when the build fails.
scratch_image() {
	local dir=$1 bin=$2 extra=${3:-} name
	name=$(basename "$bin")
	mkdir -p "$dir" || return 1
	cp "$bin" "$dir/$name" || return 1
	printf 'FROM scratch\nCOPY %s /%s\n%bENTRYPOINT ["/%s"]\n' "$name" "$name" \
		"${extra:+$extra\n}" "$name" >"$dir/Dockerfile"
	DOCKER_BUILDKIT=0 "$DOCKER" build -q --iidfile "$dir/iid" "$dir" >/dev/null || return 1
	cat "$dir/iid"
}
