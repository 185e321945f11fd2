#!/usr/bin/env python3
"""The slowest tests of a run, from the test runners' own timings (used by `make test`).

Usage: slowest.py [-n N] REPORT...

Each REPORT is a JUnit XML file: ctest's (`ctest --output-junit`) or pytest's (`--junitxml`); a
missing one is skipped. ctest's entries that wrap a pytest file (named `<folder>/test_*`, see
tests/CMakeLists.txt) are left out in favour of that file's own test cases, so the list holds
single tests: C++ cases as ctest names them, Python ones as `<folder>/<file>::<test>`.
Prints the N slowest (default 15), slowest first, as `seconds  name`.
"""
import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

PYTEST_WRAPPER = re.compile(r"^[a-z0-9_]+/test_\w+$")


def cases(path):
    """(seconds, name) of each test case in one JUnit file."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"slowest: skipping {path}: {e}", file=sys.stderr)
        return
    from_pytest = any(s.get("name") == "pytest" for s in root.iter("testsuite"))
    prefix = ""
    if from_pytest:  # <build>/test-reports/<folder>-<file>.xml
        prefix = os.path.splitext(os.path.basename(path))[0].replace("-", "/", 1) + "::"
    for case in root.iter("testcase"):
        name = case.get("name", "?")
        if not from_pytest and PYTEST_WRAPPER.match(name):
            continue
        try:
            seconds = float(case.get("time", "0"))
        except ValueError:
            continue
        yield seconds, prefix + name


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=15)
    ap.add_argument("reports", nargs="*")
    args = ap.parse_args(argv)
    found = [c for path in args.reports if os.path.exists(path) for c in cases(path)]
    found.sort(key=lambda c: -c[0])
    print(f"[test] the {min(args.n, len(found))} slowest of {len(found)} tests (seconds):")
    for seconds, name in found[:args.n]:
        print(f"{seconds:9.2f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
