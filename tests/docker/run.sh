#!/usr/bin/env bash
# Build the FROM scratch fixture images, then run the Docker suite.
# usage: run.sh TEST_BINARY ECHOER_BINARY
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

suite=$1 echoer=$2
scratch_dir

build_image() {	# name, extra Dockerfile lines
	local dir=$work/$1
	mkdir -p "$dir"
	cp "$echoer" "$dir/echoer"
	# /work belongs to the agent's uid: only the read-only root keeps it
	# from being written (the rootfs leak proof needs that).
	mkdir -p "$dir/work"
	printf 'FROM scratch\nCOPY echoer /echoer\nCOPY --chown=10001:10001 work /work\n%bENTRYPOINT ["/echoer"]\n' \
		"$2" >"$dir/Dockerfile"
	DOCKER_BUILDKIT=0 "$DOCKER" build -q --iidfile "$dir/iid" \
		-t "airlock-test-$1:latest" "$dir" >/dev/null
	cat "$dir/iid"
}

AIRLOCK_TEST_IMAGE=$(build_image echoer '')
AIRLOCK_TEST_IMAGE_VOLUME=$(build_image volume 'VOLUME /scratchvol\n')
export AIRLOCK_TEST_IMAGE AIRLOCK_TEST_IMAGE_VOLUME AIRLOCK_TEST_SOCKET=$sock
"$suite"
