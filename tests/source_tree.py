#!/usr/bin/env python3
"""The one list of warden's source folders, read from the top CMakeLists.txt.

Used by the source gates (check_complexity.py, check_layering.py) and the drift test
(test_docs_drift.py), so that a module added with `add_subdirectory()` is covered by all of
them without editing a hand-written list.

    cmake_modules(root)       -> ["common", "web", ..., "api/openai", ..., "app", "tests", "bench"]
                                 every add_subdirectory() argument, in file order
    complexity_folders(root)  -> the folders the `complexity` gate reads (all of them but
                                 GATE_EXCLUDED, which is empty)

Run as a script it prints complexity_folders(root), one per line.
"""
import os
import re
import sys

ADD_SUBDIRECTORY = re.compile(r"^\s*add_subdirectory\(\s*([^\s)]+)", re.MULTILINE)

# Folders add_subdirectory() names that the complexity gate does not read. None today: every
# module, bench/ (its C++ programs) and tests/ (the JavaScript drivers of tests/node and
# tests/browser) are read. Add a folder here only with a reason next to it.
GATE_EXCLUDED = set()


def repo_root():
    return os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def cmake_modules(root):
    """Every folder named by add_subdirectory() in root/CMakeLists.txt, in file order."""
    with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as f:
        text = re.sub(r"#[^\n]*", "", f.read())
    seen = []
    for name in ADD_SUBDIRECTORY.findall(text):
        name = name.strip("\"'").rstrip("/")
        if name not in seen:
            seen.append(name)
    return seen


def complexity_folders(root):
    """The folders the complexity gate reads: every CMake module but GATE_EXCLUDED."""
    return [m for m in cmake_modules(root) if m not in GATE_EXCLUDED and os.path.isdir(os.path.join(root, m))]


if __name__ == "__main__":
    for folder in complexity_folders(os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else repo_root()):
        print(folder)
