#!/usr/bin/env python3
"""Layering check: which module folders may include which (run by ctest as `layering`).

Usage: check_layering.py [SOURCE_ROOT]   (default: the repository holding this script)

Each rule names a folder, and either the include prefixes its files must not use (deny) or the
only ones they may use (allow). Only project includes are judged: quoted ones, and angle-bracket
ones whose first component is a module folder; system headers (<vector>, <nlohmann/json.hpp>)
are never a violation. Every file under the folder counts, tests included.
Prints each violation as `file:line: ...` and exits 1 when there is any, 0 otherwise.
"""
import os
import re
import sys

MODULES = {"agent", "api", "app", "bench", "client", "common", "engine", "http", "model", "risk", "sandbox", "secrets",
           "store", "tools", "web"}
SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".cxx", ".ipp")

# folder: ("deny", prefixes) or ("allow", prefixes); a prefix is matched against the include path.
RULES = {
    "http": ("deny", ["agent/"]),
    "api": ("deny", ["tools/", "sandbox/"]),
    # a surface never re-parses another dialect's output (DESIGN §3)
    "api/anthropic": ("deny", ["api/openai/", "api/control/", "api/responses/"]),
    "api/openai": ("deny", ["api/anthropic/", "api/control/", "api/responses/"]),
    # the Responses dialect shares only OpenAI's error envelope (api/openai/errors.h)
    "api/responses": ("deny", ["api/anthropic/", "api/control/", "api/openai/chat", "api/openai/convert",
                               "api/openai/stream_render", "api/openai/legacy"]),
    "agent": ("deny", ["sandbox/", "store/"]),
    "model": ("allow", ["common/", "model/"]),
    "engine": ("deny", ["agent/", "tools/", "sandbox/", "api/", "http/"]),
    "store": ("allow", ["common/", "secrets/", "store/"]),
    "risk": ("allow", ["common/", "risk/"]),
    "secrets": ("allow", ["common/", "secrets/"]),
    # the terminal client speaks the server's wire vocabulary, never its internals (DESIGN §3)
    "client": ("allow", ["common/", "api/wire/", "client/"]),
    "web": ("allow", ["web/"]),
}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


def project_includes(path):
    """(line number, include path) of each project include in `path`."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            quote, target = m.group(1), m.group(2).strip()
            if quote == '"' or target.split("/", 1)[0] in MODULES:
                yield number, target


def violations(root):
    for folder, (mode, prefixes) in sorted(RULES.items()):
        top = os.path.join(root, folder)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(dirpath, name)
                shown = os.path.relpath(path, root)
                for number, target in project_includes(path):
                    hit = any(target.startswith(p) for p in prefixes)
                    if mode == "deny" and hit:
                        yield f'{shown}:{number}: {folder}/ must not include "{target}" (no {", ".join(prefixes)})'
                    elif mode == "allow" and not hit:
                        yield f'{shown}:{number}: {folder}/ may include only {" and ".join(prefixes)}, not "{target}"'


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    if not os.path.isdir(os.path.join(root, "common")):
        print(f"layering: {root} is not a warden source tree (no common/)")
        return 2
    found = list(violations(root))
    for v in found:
        print(v)
    print(f"layering: {len(found)} violation(s)" if found else "layering: ok")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
