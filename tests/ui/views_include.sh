#!/bin/sh
# Fails when a file under views/ includes an engine header other than
# snapshot.h. The engine's headers are listed afresh each run, so a new
# one is covered without editing this script. Usage: views_include.sh ROOT
root=${1:-.}
found=0
for h in "$root"/engine/*/*.h; do
	name=$(basename "$h")
	[ "$name" = snapshot.h ] && continue
	hits=$(grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"<]([^\">]*/)?$name[\">]" \
		"$root"/views/*.c "$root"/views/*.h 2>/dev/null)
	if [ -n "$hits" ]; then
		printf '%s\n' "$hits" | sed "s|^$root/||; s|\$|  (engine/.../$name)|"
		found=1
	fi
done
if [ "$found" -ne 0 ]; then
	echo "views-include: views/ may include engine/base/snapshot.h only"
	exit 1
fi
echo "views-include: views/ includes no engine header but snapshot.h ($(ls "$root"/engine/*/*.h | wc -l) engine headers checked)"
