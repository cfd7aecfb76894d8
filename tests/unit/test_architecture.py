#!/usr/bin/env python3
"""The architecture check can fail: each fault planted in a copy of the tree
(a module dropped from the table, an include up a layer, a circle, I/O in a
pure room, a missing table, an empty tree) makes it fail and name the fault,
and the untouched copy passes. Usage: test_architecture.py ROOT"""

import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import architecture  # noqa: E402

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
results = []


def copy_tree(dst):
    for top in architecture.SOURCE_ROOTS + ("docs",):
        shutil.copytree(os.path.join(ROOT, top), os.path.join(dst, top),
                        ignore=shutil.ignore_patterns("*.png", "node_modules"))


def edit(dst, rel, fn):
    path = os.path.join(dst, rel)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(fn(text))


def expect(name, plant, words):
    with tempfile.TemporaryDirectory() as dst:
        copy_tree(dst)
        plant(dst)
        problems = architecture.check(dst)[0]
    said = "\n".join(problems)
    if plant is None or words is None:
        ok = not problems
    else:
        ok = bool(problems) and all(w in said for w in words)
    results.append(ok)
    print(f"{'ok' if ok else 'not ok'} - {name}")
    if not ok:
        print("# said: " + (said or "nothing").replace("\n", "\n#       "))


def prepend(line):
    return lambda text: line + "\n" + text


expect("the tree as it is passes", lambda d: None, None)
expect("a module missing from the table fails",
       lambda d: edit(d, "docs/architecture.md", lambda t: t.replace("`tar_stream` ", "", 1)),
       ["engine/base/tar_stream: a module missing from the table"])
expect("a module in the table the tree lacks fails",
       lambda d: os.remove(os.path.join(d, "engine/lease/watchdog_exe.c")),
       ["engine/lease/watchdog_exe: in the table, not in the tree"])
expect("a room the table does not name fails",
       lambda d: (os.makedirs(os.path.join(d, "engine/extra")),
                  open(os.path.join(d, "engine/extra/x.c"), "w").close()),
       ["engine/extra/: a room the table does not name"])
expect("an include up a layer fails",
       lambda d: edit(d, "engine/base/err.c", prepend('#include "supervisor.h"')),
       ["engine/base/err.c -> engine/supervisor/supervisor.h", "not below it"])
expect("an include between rooms of one layer fails",
       lambda d: edit(d, "engine/docker/docker.c", prepend('#include "mcp.h"')),
       ["engine/docker/docker.c -> engine/mcp/mcp.h"])
expect("a circle inside a room fails",
       lambda d: edit(d, "engine/base/ids.h", prepend('#include "hash.h"'))
       or edit(d, "engine/base/hash.h", prepend('#include "ids.h"')),
       ["a circle of includes", "engine/base/hash", "engine/base/ids"])
expect("I/O in a pure room fails",
       lambda d: edit(d, "engine/protocol/control_delta.c", prepend("#include <sys/socket.h>")),
       ["engine/protocol/control_delta.c: includes <sys/socket.h>"])
expect("a tree without the table fails",
       lambda d: os.remove(os.path.join(d, "docs/architecture.md")) or
       open(os.path.join(d, "docs/architecture.md"), "w").close(),
       ["no table"])
expect("a tree without sources fails",
       lambda d: [shutil.rmtree(os.path.join(d, t)) for t in architecture.SOURCE_ROOTS],
       ["no source files"])

print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
sys.exit(0 if all(results) else 1)
