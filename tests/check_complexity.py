#!/usr/bin/env python3
"""Complexity gate (run by ctest as `complexity`): no function over 100 lines or with a
cyclomatic complexity over 40, in C++ and JavaScript, over every folder the top CMakeLists.txt
names with add_subdirectory() (tests/source_tree.py), so a new module is covered without editing
a list here.

Usage: check_complexity.py [SOURCE_ROOT] [--print-scope]
  --print-scope  print the folders and the limits and exit (docs/architecture.md quotes them)

Runs lizard (tests/requirements.txt) with -w: prints only the offenders and exits non-zero when
there is one. Split the function; do not raise the limit. Python (bench/, tests/) is not read.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import source_tree  # noqa: E402

MAX_LINES = 100
MAX_CCN = 40
LANGUAGES = ["cpp", "javascript"]
# never ours: npm installs (web/node_modules, tests/node/node_modules are git-ignored)
EXCLUDED = ["*/node_modules/*"]


def lizard_argv(root):
    argv = [sys.executable, "-m", "lizard", "-L", str(MAX_LINES), "-C", str(MAX_CCN), "-w"]
    for language in LANGUAGES:
        argv += ["-l", language]
    for pattern in EXCLUDED:
        argv += ["-x", pattern]
    return argv + source_tree.complexity_folders(root)


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    root = os.path.abspath(args[0] if args else source_tree.repo_root())
    folders = source_tree.complexity_folders(root)
    if "--print-scope" in argv:
        print(" ".join(["lizard"] + lizard_argv(root)[3:]))
        return 0
    print(f"complexity: {len(folders)} folders: {' '.join(folders)}", flush=True)
    rc = subprocess.call(lizard_argv(root), cwd=root)
    print("complexity: ok" if rc == 0 else "complexity: the functions above are over the limits")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
