#!/usr/bin/env python3
"""Lets cargo build a fresh clone incrementally against a kept target dir.

A fresh clone's files are all newer than any build, so cargo would compile
every crate of the workspace again. `record LIST` writes, after a successful
build, each tracked file's path with the hash of its content. `restore LIST`
gives every file whose content is unchanged since then an old modification
time, and so every directory none of whose files was added, removed or
changed (a build script may watch a directory: `rerun-if-changed`). Cargo
then rebuilds only the crates whose sources changed, and those above them.
The caller removes LIST before a build and records it only after the build
succeeded, so after a failed or interrupted build no file counts as built.
bench/ is left out: it builds in a target dir of its own, which this list
does not describe.

The list also names the checkout it was built in. The root crate bakes that
path in where cargo does not see it (its debug build serves the demo's and
the console's files from there; its tests read docs/ and tests/oidc/ from
there), so in another checkout its `src/lib.rs` keeps its new time, and the
root crate, its binary and its tests build again; the other crates of the
workspace and the dependencies do not.
"""

import os
import subprocess
import sys

OLD = 946684800  # 2000-01-01T00:00:00Z, older than any build
ROOT = "# checkout"
ROOT_CRATE_FILE = "src/lib.rs"


def tracked():
    """{path: hash of its content in the working tree} of the files git
    tracks, but bench/'s."""
    out = subprocess.run(["git", "ls-files", "-z"], check=True, capture_output=True).stdout
    paths = [p.decode() for p in out.split(b"\0") if p]
    paths = [p for p in paths if not p.startswith("bench/") and os.path.isfile(p)]
    hashes = subprocess.run(["git", "hash-object", "--no-filters", "--stdin-paths"], check=True,
                            capture_output=True, input="\n".join(paths).encode()).stdout.split()
    return {path: blob.decode() for path, blob in zip(paths, hashes)}


def record(list_path):
    with open(list_path, "w") as out:
        out.write(f"{ROOT}\t{os.getcwd()}\n")
        for path, blob in sorted(tracked().items()):
            out.write(f"{blob}\t{path}\n")


def parents(path):
    parts = path.split("/")[:-1]
    return {"/".join(parts[:i]) or "." for i in range(len(parts) + 1)}


def restore(list_path):
    if not os.path.exists(list_path):
        print("no list of built files: every crate of the workspace builds")
        return
    built = {}
    with open(list_path) as f:
        for line in f:
            blob, path = line.rstrip("\n").split("\t", 1)
            built[path] = blob
    # The checkout's line reads as a blob named ROOT of a file at its path.
    checkout = next((path for path, blob in built.items() if blob == ROOT), None)
    built.pop(checkout, None)
    now = tracked()
    unchanged = [p for p, blob in now.items() if built.get(p) == blob]
    if checkout != os.getcwd() and ROOT_CRATE_FILE in unchanged:
        unchanged.remove(ROOT_CRATE_FILE)
        print(f"built in another checkout ({checkout}): the root crate builds again")
    changed = (set(now) | set(built)) - set(unchanged)
    touched_dirs = set().union(*(parents(p) for p in changed)) if changed else set()
    dirs = set().union(*(parents(p) for p in now)) - touched_dirs
    for path in unchanged + sorted(dirs):
        if os.path.lexists(path):
            os.utime(path, (OLD, OLD), follow_symlinks=False)
    print(f"files unchanged since the last build of this target dir: {len(unchanged)} of {len(now)}"
          f" ({len(changed)} added, removed or changed)")


if __name__ == "__main__":
    {"record": record, "restore": restore}[sys.argv[1]](sys.argv[2])
