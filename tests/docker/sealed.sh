#!/usr/bin/env bash
# Sealed material end to end (profile.sealed; engine/admission/sealed.h): images built
# FROM scratch whose sealed files hold a canary, with owners and modes set
# by the tar the image is made from; `airlock run` with the agent fixture in
# read_sealed mode, which opens the sealed path and reports to the permitted
# tool what it got (only the errno's name when it fails). Observers: the
# permitted tool's call recorder (the sink), the audit database, the
# summary and the engine's stderr. The container has no log driver.
#
#   protected   admission passes, the agent gets EACCES, no canary anywhere
#   refused     admission refuses under "sealed", naming the path
#   mutant      airlock-mutants with sealed_unchecked: the same image runs and
#               the canary reaches the sink (the refusal is what protects)
#
# usage: sealed.sh AIRLOCK AIRLOCK_MUTANTS AGENT_BIN UPSTREAM_BIN
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1 mutants=$2 agent=$3 upstream=$4
scratch_dir

. "$here/../checks.sh"
. "$here/cases.sh"

canary="SEALED-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
echo '{"note":"nothing secret in the frame"}' >"$work/payload.json"

# rootfs CASE ENTRY...: CASE's rootfs.tar, the agent plus entries "TYPE PATH MODE UID GID
# [XATTR]", TYPE d (directory), f (file holding the canary), g (/etc/group text),
# p (/etc/passwd); XATTR is the name of an extended attribute the entry carries (a
# PAX SCHILY.xattr record): security.capability gets cap_net_raw+ep,
# system.posix_acl_access an ACL granting user 10001 r-x, any other "x".
rootfs() {
	local case=$1; shift
	mkdir -p "$work/$case/ctx"
	python3 - "$work/$case/ctx/rootfs.tar" "$agent" "$canary" "$@" <<'PY'
import io, struct, sys, tarfile
out, agent, canary, specs = sys.argv[1], sys.argv[2], sys.argv[3].encode(), sys.argv[4:]
t = tarfile.open(out, "w", format=tarfile.PAX_FORMAT)
# Bytes below 0x80 only: tarfile writes PAX values as UTF-8.
values = {"security.capability": struct.pack("<IIIII", 0x02000001, 1 << 13, 0, 0, 0),
          "system.posix_acl_access": struct.pack("<I", 2) + b"".join(
              struct.pack("<HHI", tag, perm, uid) for tag, perm, uid in
              ((1, 7, 0), (2, 5, 10001), (4, 0, 0), (0x10, 5, 0), (0x20, 0, 0)))}
def add(name, kind, mode, uid, gid, data=b"", xattr=None):
    ti = tarfile.TarInfo(name)
    ti.type = tarfile.DIRTYPE if kind == "d" else tarfile.REGTYPE
    ti.mode, ti.uid, ti.gid = mode, uid, gid
    ti.size = 0 if kind == "d" else len(data)
    if xattr:
        ti.pax_headers = {"SCHILY.xattr." + xattr: values.get(xattr, b"x").decode("ascii")}
    t.addfile(ti, None if kind == "d" else io.BytesIO(data))
add("agent", "f", 0o755, 0, 0, open(agent, "rb").read())
texts = {"f": canary + b"\n",
         "g": b"root:x:0:\nsealers:x:5000:agent\n",
         "p": b"root:x:0:0::/:/agent\nagent:x:10001:10001::/:/agent\n"}
for spec in specs:
    kind, path, mode, uid, gid, *xattr = spec.split()
    add(path.lstrip("/"), kind, int(mode, 8), int(uid), int(gid), texts.get(kind, b""),
        xattr[0] if xattr else None)
t.close()
PY
}

# image CASE ENTRY...: built from rootfs.tar (ADD: the daemon unpacks it and makes the
# layer anew from the files)
image() {
	local case=$1
	rootfs "$@" || return 1
	printf 'FROM scratch\nADD rootfs.tar /\nENTRYPOINT ["/agent"]\n' >"$work/$case/ctx/Dockerfile"
	DOCKER_BUILDKIT=0 "$DOCKER" build -q --iidfile "$work/$case/iid" "$work/$case/ctx" \
		>/dev/null 2>&1 || return 1
	images+=("$(cat "$work/$case/iid")")
}

# loaded CASE ENTRY...: rootfs.tar as the one layer of an export given to `docker load`
# (the daemon keeps the layer's bytes as they are, and exports them so)
loaded() {
	local case=$1
	rootfs "$@" || return 1
	python3 - "$work/$case/ctx/rootfs.tar" "$work/$case/export.tar" "$work/$case/iid" <<'PY' || return 1
import hashlib, io, json, sys, tarfile
layer = open(sys.argv[1], "rb").read()
sha = lambda b: hashlib.sha256(b).hexdigest()
config = json.dumps({"architecture": "amd64", "os": "linux", "config": {"Entrypoint": ["/agent"]},
                     "rootfs": {"type": "layers", "diff_ids": ["sha256:" + sha(layer)]}}).encode()
files = [(sha(config) + ".json", config), ("l1/layer.tar", layer),
         ("manifest.json", json.dumps([{"Config": sha(config) + ".json", "RepoTags": None,
                                        "Layers": ["l1/layer.tar"]}]).encode())]
with tarfile.open(sys.argv[2], "w") as t:
    for name, data in files:
        ti = tarfile.TarInfo(name)
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
open(sys.argv[3], "w").write("sha256:" + sha(config))
PY
	"$DOCKER" load -q -i "$work/$case/export.tar" >/dev/null 2>&1 || return 1
	images+=("$(cat "$work/$case/iid")")
}

# exported_xattrs CASE PATH: the extended attribute names PATH carries in CASE's image export
exported_xattrs() {
	"$DOCKER" save -o "$work/$1/saved.tar" "$(cat "$work/$1/iid")" || return 1
	python3 - "$work/$1/saved.tar" "$2" <<'PY'
import sys, tarfile
s = tarfile.open(sys.argv[1])
for m in s.getmembers():
    if m.name.endswith("layer.tar"):
        for e in tarfile.open(fileobj=s.extractfile(m)).getmembers():
            if e.name == sys.argv[2].lstrip("/"):
                print(" ".join(sorted(k[len("SCHILY.xattr."):] for k in e.pax_headers
                                      if k.startswith("SCHILY.xattr."))))
PY
	rm -f "$work/$1/saved.tar"
}

# config CASE READ_PATH SEALED_JSON [IMAGE_CASE]: IMAGE_CASE's image (default CASE's),
# under $RUNTIME (default runc)
config() {
	mkdir -p "$work/$1"
	[ -n "${4:-}" ] && cp "$work/$4/iid" "$work/$1/iid"
	upstream_box "$work/$1"
	cat >"$work/$1/config.json" <<JSON
{
  "profile": {"image": "$(cat "$work/$1/iid")", "cmd": ["read_sealed", "$2"], "sealed": $3,
              "runtime": "${RUNTIME:-runc}"},
  "bounds": {"session_ms": 15000},
  "upstreams": {"vault": {"argv": ["$upstream", "--sink", "$work/$1/vault.sink"],
                          "env": {"PATH": "/usr/bin:/bin"}, "paths": {"rw": ["$work/$1"]}}},
  "tools": {"store": {"upstream": "vault", "remote": "store", "data_class": "confidential",
                      "sink_ceiling": "confidential", "response_ceiling": "confidential"}},
  "aliases": {"save": "store"},
  "initial": {"file": "$work/payload.json", "class": "confidential"}
}
JSON
}

# run CASE [MUTANT]: airlock (or airlock-mutants with MUTANT set) on CASE's config
run() {
	local dir=$work/$1 bin=$airlock
	[ -n "${2:-}" ] && bin=$mutants
	AIRLOCK_MUTANT=${2:-} "$bin" run --config "$dir/config.json" --audit "$dir/audit.db" \
		--json >"$dir/summary.json" 2>"$dir/stderr" </dev/null
	echo $? >"$dir/rc"
}

reason_has() { field "$1" reason | grep -qF -- "$2"; }
# Nothing but the sink may hold the canary: audit DB (and WAL), summary, stderr.
clean() {
	[ -s "$work/$1/audit.db" ] && [ -s "$work/$1/summary.json" ] &&
		! grep -rqaF -- "$canary" "$work/$1"/audit.db* "$work/$1/summary.json" "$work/$1/stderr"
}
sink_clean() { [ -s "$work/$1/vault.sink" ] && ! grep -qaF -- "$canary" "$work/$1/vault.sink"; }
ended_ok() {	# CASE: common to every case
	check "$1: container stopped and gone" gone "$1"
	check "$1: audit chain valid" chain_ok "$1"
	check "$1: no canary in audit, summary or stderr" clean "$1"
}

# protected CASE READ_PATH SEALED_JSON [IMAGE_CASE]: admitted, EACCES at run time, nothing leaks
protected() {
	config "$1" "$2" "$3" "${4:-}"
	run "$1"
	check "$1: both admissions passed" is "$1" admission.second admitted
	check "$1: ended agent_exit" is "$1" ended agent_exit
	check "$1: the agent got EACCES and said so through the permitted tool" \
		has "$1" vault.sink "\"errno\":\"EACCES\""
	check "$1: the sink holds no canary byte" sink_clean "$1"
	ended_ok "$1"
}

# refused CASE IMAGE_CASE READ_PATH SEALED_JSON WORD...: refused under "sealed", naming the path
refused() {
	local case=$1 img=$2 path=$3 sealed=$4 word
	shift 4
	config "$case" "$path" "$sealed" "$img"
	run "$case"
	check "$case: refused at the first admission" is "$case" admission.first refused
	check "$case: the refusing check is sealed (got $(field "$case" admission.refused_check))" \
		is "$case" admission.refused_check sealed
	check "$case: exit status 1" [ "$(cat "$work/$case/rc")" = 1 ]
	for word in "$@"; do
		check "$case: the reason says '$word'" reason_has "$case" "$word" ||
			echo "   reason: $(field "$case" reason)"
	done
	check "$case: nothing reached the sink" no_file "$case" vault.sink
	ended_ok "$case"
}

# leaks CASE IMAGE_CASE READ_PATH SEALED_JSON: with sealed_unchecked the canary reaches the sink
leaks() {
	config "$1" "$3" "$4" "$2"
	run "$1" sealed_unchecked
	check "$1 (mutant sealed_unchecked): admitted" is "$1" admission.second admitted
	check "$1 (mutant sealed_unchecked): the canary reached the sink" has "$1" vault.sink "$canary"
	ended_ok "$1"
}

# held_anyway CASE IMAGE_CASE READ_PATH SEALED_JSON: with the check bypassed the
# runtime itself still denies the read (EACCES at the sink, no canary).
held_anyway() {
	config "$1" "$3" "$4" "$2"
	run "$1" sealed_unchecked
	check "$1 (mutant sealed_unchecked): admitted" is "$1" admission.second admitted
	check "$1: the agent got EACCES all the same" has "$1" vault.sink "\"errno\":\"EACCES\""
	check "$1: the sink holds no canary byte" sink_clean "$1"
	ended_ok "$1"
}

build() { image "$@" || { echo "not ok: image $1"; failed=$((failed + 1)); }; }

# --- a root-owned 0700 file ----------------------------------------------------
build file0700 "f /secret 0700 0 0"
protected file0700 /secret '["/secret"]'
check "file0700: the audit records the sealed check passed" \
	[ "$(sqlite3 "$work/file0700/audit.db" "select count(*) from audit_entries where type='admission' and decision='admitted'")" -ge 2 ]

# --- a root-owned 0700 directory holding a 0644 file: no search bit -------------
build dir0700 "d /vault 0700 0 0" "f /vault/key 0644 0 0"
protected dir0700 /vault/key '["/vault"]'

# --- the 0644 mutant: refused; run anyway, it leaks ------------------------------
build file0644 "f /secret 0644 0 0"
refused file0644 file0644 /secret '["/secret"]' "/secret" "readable by 10001:10001" "mode 0644"
leaks file0644_bypassed file0644 /secret '["/secret"]'

# --- a parent that grants search (0711) but not read: the name is reachable -------
build parent0711 "d /vault 0711 0 0" "f /vault/key 0644 0 0"
refused parent0711 parent0711 /vault/key '["/vault/key"]' "/vault/key" "readable"
leaks parent0711_bypassed parent0711 /vault/key '["/vault/key"]'
refused parent0711_dir parent0711 /vault/key '["/vault"]' "/vault" "an entry 1 level below"

# --- group bits: the container's gid is 10001; 0640 root:10001 is readable -------
build group "f /secret 0640 0 10001"
refused group group /secret '["/secret"]' "/secret" "mode 0640"
leaks group_bypassed group /secret '["/secret"]'

# --- the image's /etc/group lists the agent in group 5000: with an explicit
#     uid:gid Docker adds no such group, so 0640 root:5000 stays unreadable --------
build etcgroup "d /etc 0755 0 0" "p /etc/passwd 0644 0 0" "g /etc/group 0644 0 0" \
	"f /secret 0640 0 5000"
protected etcgroup /secret '["/secret"]'

# --- /etc 0700 in the image: /etc is also Docker's init layer's directory, so
#     its image mode is not relied on (refused). Whether the container shows
#     the image's mode depends on the storage driver: reported, not asserted ---
build etc0700 "d /etc 0700 0 0" "f /etc/key 0644 0 0"
refused etc0700 etc0700 /etc/key '["/etc/key"]' "/etc/key" "readable"
config etc0700_bypassed /etc/key '["/etc/key"]' etc0700
run etc0700_bypassed sealed_unchecked
if has etc0700_bypassed vault.sink "$canary"; then
	echo "info: etc0700 run anyway: the init layer's /etc (0755) showed; the canary was read"
else
	echo "info: etc0700 run anyway: the image's /etc mode held on this daemon ($(grep -o '"errno":"[A-Z]*"' "$work/etc0700_bypassed/vault.sink"))"
fi
ended_ok etc0700_bypassed

# --- extended attributes (docs/guarantees.md). Built with ADD, the daemon makes the
#     layer anew from the unpacked files and keeps only security.capability: file
#     capabilities are understood (exec only, voided by no-new-privileges and
#     CapDrop ALL), so 0700 root with them is admitted and unreadable. What else the
#     daemon keeps is reported, not assumed -----------------------------------------
build xcaps "f /secret 0700 0 0 security.capability"
check "xcaps: the export keeps security.capability on /secret" \
	[ "$(exported_xattrs xcaps /secret)" = security.capability ]
protected xcaps /secret '["/secret"]'
build xselinux_built "f /secret 0700 0 0 security.selinux"
echo "info: built with ADD, /secret's security.selinux is $( [ -n "$(exported_xattrs xselinux_built /secret)" ] && echo kept || echo dropped) by this daemon"

# --- `docker load` keeps a layer's bytes, attributes and ids as written -----------
build_loaded() { loaded "$@" || { echo "not ok: loaded image $1"; failed=$((failed + 1)); }; }
build_loaded xselinux "f /secret 0700 0 0 security.selinux"
check "xselinux: the loaded image's export keeps security.selinux" \
	[ "$(exported_xattrs xselinux /secret)" = security.selinux ]
refused xselinux xselinux /secret '["/secret"]' "/secret" "a security.* xattr"
# /vault 0750 root:0 (with an ACL the group bits are its mask; the owning group has
# nothing), but the ACL lets 10001 search it: the 0644 key below is readable. Modes
# alone say the agent may not search /vault.
build_loaded xacl_dir "d /vault 0750 0 0 system.posix_acl_access" "f /vault/key 0644 0 0"
refused xacl_dir xacl_dir /vault/key '["/vault/key"]' "/vault/key" \
	"a parent carries a POSIX ACL"
leaks xacl_dir_bypassed xacl_dir /vault/key '["/vault/key"]'

# --- a uid past 32 bits: chown keeps the low 32, so 2^32 + 10001 is the agent ------
build_loaded uid32 "f /secret 0600 $(((1 << 32) + 10001)) 0"
refused uid32 uid32 /secret '["/secret"]' "past 32 bits"
leaks uid32_bypassed uid32 /secret '["/secret"]'

# --- a sealed path the image does not have -------------------------------------
refused missing file0700 /nothing '["/nothing"]' "/nothing" "not in the image"

# --- the same under gVisor: its own file system server, the same modes -------
if "$DOCKER" info --format '{{json .Runtimes}}' | grep -q '"runsc"'; then
	RUNTIME=runsc protected file0700_runsc /secret '["/secret"]' file0700
	RUNTIME=runsc protected dir0700_runsc /vault/key '["/vault"]' dir0700
	RUNTIME=runsc refused file0644_runsc file0644 /secret '["/secret"]' "/secret" "readable"
	RUNTIME=runsc leaks file0644_runsc_bypassed file0644 /secret '["/secret"]'
	RUNTIME=runsc refused xacl_dir_runsc xacl_dir /vault/key '["/vault/key"]' "/vault/key" \
		"a parent carries a POSIX ACL"
	# gVisor's file system applies no POSIX ACL: bypassed, the parent's
	# modes alone hold and the read gets EACCES. Admission refuses it all
	# the same (it judges what the image says, for either runtime).
	RUNTIME=runsc held_anyway xacl_dir_runsc_bypassed xacl_dir /vault/key '["/vault/key"]'
	RUNTIME=runsc refused uid32_runsc uid32 /secret '["/secret"]' "past 32 bits"
	RUNTIME=runsc leaks uid32_runsc_bypassed uid32 /secret '["/secret"]'
elif [ -n "${CI:-}" ]; then
	check "runsc is on the daemon (scripts/daemon.json registers it)" false
else
	echo "#### SKIPPED: runsc is not on the daemon; the gVisor cases did not run"
fi

summary
