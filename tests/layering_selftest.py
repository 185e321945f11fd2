#!/usr/bin/env python3
"""Self-test of the layering gate (run by ctest as `layering_selftest`).

Usage: layering_selftest.py [SOURCE_ROOT]

Copies the sources (C++ files and CMakeLists.txt, nothing built) into a scratch folder, checks that
the untouched copy passes tests/check_layering.py, then, once per module of its RULES whose folder
exists, injects ONE include the module may not use into one of its .cpp files (after its last
#include) and expects the check to fail naming exactly that file and line. Prints each injection and
the check's line for it. A module of RULES without an entry in INJECTIONS is a failure: a new rule
gets its injection here. Exits 0 when every expectation holds.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_layering  # noqa: E402

# module: (the .cpp to inject into, or None for its first non-test .cpp; the include injected).
INJECTIONS = {
    "app": ("app/cli.cpp", "bench/bench_util.h"),
    "client": (None, "app/cli.h"),
    "web": ("web/assets.cpp", "app/cli.h"),
    "api/openai": ("api/openai/chat_handler.cpp", "app/cli.h"),
    "api/anthropic": ("api/anthropic/messages_handler.cpp", "api/openai/convert.h"),
    "api/responses": ("api/responses/responses_handler.cpp", "api/control/routes.h"),
    "api/control": ("api/control/routes.cpp", "app/cli.h"),
    "api/wire": (None, "api/openai/errors.h"),
    "http": ("http/server.cpp", "api/openai/errors.h"),
    "agent": ("agent/tool_loop.cpp", "api/openai/chat_handler.h"),
    "risk": (None, "agent/gate.h"),
    "engine": ("engine/chat_service.cpp", "agent/tool_loop.h"),
    "tools": ("tools/registry.cpp", "agent/gate.h"),
    "sandbox": ("sandbox/bwrap.cpp", "store/database.h"),
    "store": ("store/database.cpp", "tools/tool.h"),
    "model": ("model/serialize.cpp", "engine/chat_backend.h"),
    "secrets": (None, "store/database.h"),
    "common": ("common/sse.cpp", "engine/http_client.h"),
    "api/conformance": ("api/conformance/roundtrip_test.cpp", "api/control/routes.h"),
    "bench": ("bench/sandbox_bench.cpp", "app/cli.h"),
    "tests": (None, "app/cli.h"),
    "fuzz": ("fuzz/http_head.cpp", "api/control/routes.h"),
}


def copy_sources(src, dst):
    def ignore(folder, names):
        skipped = []
        for name in names:
            full = os.path.join(folder, name)
            if os.path.isdir(full):
                if name.startswith(".") or name.startswith("build") or name in check_layering.SKIPPED_DIRS:
                    skipped.append(name)
            elif not (name.endswith(check_layering.SOURCE_SUFFIXES) or name == "CMakeLists.txt"):
                skipped.append(name)
        return skipped
    shutil.copytree(src, dst, ignore=ignore)


def run_check(root):
    done = subprocess.run([sys.executable, os.path.join(HERE, "check_layering.py"), root],
                          capture_output=True, text=True)
    return done.returncode, done.stdout


def first_cpp(root, module):
    folder = os.path.join(root, module)
    if not os.path.isdir(folder):
        return None
    names = sorted(n for n in os.listdir(folder) if n.endswith(".cpp"))
    plain = [n for n in names if not n.endswith("_test.cpp")] or names
    return f"{module}/{plain[0]}" if plain else None


def inject(root, rel, include):
    """Adds `#include "include"` after the last #include of root/rel; returns its line number."""
    path = os.path.join(root, rel)
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    last = max((i for i, line in enumerate(lines) if check_layering.INCLUDE.match(line)), default=-1)
    lines.insert(last + 1, f'#include "{include}"\n')
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(lines)
    return last + 2


def one_module(src, scratch, module):
    """Runs one injection; returns True when the check failed on exactly the injected line."""
    rel, include = INJECTIONS[module]
    rel = rel or first_cpp(src, module)
    if rel is None or not os.path.isfile(os.path.join(src, rel)):
        print(f"{module}/: skipped, no .cpp file there (yet)")
        return True
    tree = os.path.join(scratch, module.replace("/", "_"))
    copy_sources(src, tree)
    line = inject(tree, rel, include)
    rc, out = run_check(tree)
    wanted = f"{rel}:{line}:"
    named = [v for v in out.splitlines() if v.startswith(wanted) and include in v]
    others = [v for v in out.splitlines() if ":" in v and not v.startswith("layering:") and v not in named]
    ok = rc == 1 and len(named) == 1 and not others
    print(f'{module}/: injected `#include "{include}"` at {rel}:{line}')
    print(f"    check: {named[0] if named else out.strip()}  ->  {'FAILS as expected' if ok else 'NOT CAUGHT'}")
    shutil.rmtree(tree)
    return ok


def main(argv):
    src = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(HERE, ".."))
    missing = [m for m in check_layering.RULES if m not in INJECTIONS]
    if missing:
        print(f"layering_selftest: no injection for {', '.join(missing)} (add one to INJECTIONS)")
        return 1
    with tempfile.TemporaryDirectory(prefix="layering-selftest-") as scratch:
        clean = os.path.join(scratch, "clean")
        copy_sources(src, clean)
        rc, out = run_check(clean)
        print(f"untouched copy: {out.strip().splitlines()[-1]} (exit {rc})")
        failures = 0 if rc == 0 else 1
        for module in check_layering.RULES:
            if not one_module(src, scratch, module):
                failures += 1
    print("layering_selftest: ok" if failures == 0 else f"layering_selftest: {failures} expectation(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
