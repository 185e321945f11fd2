#!/usr/bin/env python3
"""Layering gate (run by ctest as `layering`): which module folders may include which.

Usage: check_layering.py [SOURCE_ROOT]               check the tree (default: this script's repository)
       check_layering.py --doc                       print the rules as Markdown
       check_layering.py [SOURCE_ROOT] --check-doc   exit 1 when docs/architecture.md's generated
                                                     block differs from --doc (ctest: `layering_doc`)
       check_layering.py [SOURCE_ROOT] --write-doc   rewrite that block

RULES below is the one source of truth: every module of DESIGN.md §3 (the target layout, including
modules whose folder does not exist yet) has an allow-list, the modules its files may include
besides its own. A file belongs to the longest module folder that holds it; its tests
(`*_test.cpp`, `*/testing/*.h`) follow the module's rule. Every quoted include, and every
angle-bracket one whose first component is a module folder's, is judged; system headers
(<vector>, <gtest/gtest.h>, <nlohmann/json.hpp>) never are. A quoted include that names no module
is a violation, and so is a source file in a folder no rule covers, or a module of the top
CMakeLists.txt without a rule: a new module needs a row here.
EXCEPTIONS lists single (file, include) pairs the rules do not allow yet, each with its reason.

Prints each violation as `file:line: ...` and exits 1 when there is any, 0 otherwise.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import source_tree  # noqa: E402

SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".cxx", ".ipp")
SKIPPED_DIRS = {"node_modules", "__pycache__"}

LIBRARIES = ["api/openai", "api/anthropic", "api/responses", "api/control", "api/wire", "http", "agent", "risk",
             "engine", "tools", "sandbox", "store", "model", "secrets", "common", "web", "client"]
SURFACE = ["api/wire", "agent", "engine", "store", "model", "common"]

# module: (may include besides itself, why). Order and rows: DESIGN.md §3, top to bottom, then the
# folders that are not libraries (api/conformance, bench, tests, fuzz).
RULES = {
    "app": (LIBRARIES, "the composition root: every library (never bench/ or tests/)"),
    "client": (["api/wire", "common"], "`warden chat`: speaks the server's wire vocabulary"),
    "web": ([], "static UI files, embedded at build time: a leaf"),
    "api/openai": (SURFACE, "one surface; never another dialect"),
    "api/anthropic": (SURFACE, "one surface; never another dialect"),
    "api/responses": (SURFACE, "one surface; never another dialect"),
    "api/control": (SURFACE + ["web", "tools"], "control routes; serves web/'s files (web/ includes nothing, so no "
                    "cycle); the knowledge-base routes read documents through tools' fetcher and converters"),
    "api/wire": (["agent", "model", "common"], "what every surface shares"),
    "http": (["common"], "transport; meets the surfaces in common/http_types.h"),
    "agent": (["risk", "engine", "tools", "model", "common"], "the loop; programs run only through tools::tool"),
    "risk": (["common"], "pure classification"),
    "engine": (["model", "secrets", "common"], "upstreams; knows nothing of tools, agent or serving"),
    "tools": (["sandbox", "store", "model", "secrets", "common"], "tool interface, registry, one file per tool; "
              "MCP entries refuse literal secrets with the one detector (secrets/)"),
    "sandbox": (["secrets", "common"], "the jail"),
    "store": (["secrets", "common"], "SQLite"),
    "model": (["common"], "the typed conversation"),
    "secrets": (["common"], "secret detection and redaction"),
    "common": ([], "the base: includes only itself"),
    "api/conformance": (["api/openai", "api/anthropic", "api/responses", "api/wire", "agent", "model", "common"],
                        "tests across dialects"),
    "bench": ([m for m in LIBRARIES if m != "client"], "benchmarks: any library, never app/"),
    "tests": (LIBRARIES, "test drivers: any library, never app/"),
    "fuzz": ([m for m in LIBRARIES if m not in ("client", "web", "api/control")],
             "libFuzzer harnesses: the libraries that parse untrusted input, never app/"),
}

# (file, include prefix, reason): includes the rules above forbid that the tree still has. Each
# TEMPORARY one goes when the named move lands; an unused one is reported (not failed).
EXCEPTIONS = [
    ("api/control/routes_test.cpp", "api/openai/chat_handler.h",
     "the control test drives the real router with a chat route (api_control_test links warden_http)"),
    ("api/control/routes_test.cpp", "http/",
     "the control test drives the real router (api_control_test links warden_http)"),
    ("api/control/audit_routes_test.cpp", "http/",
     "the control test drives the real router (api_control_test links warden_http)"),
    ("api/control/mcp_routes_test.cpp", "http/",
     "the MCP registry test drives the real router with named keys (api_control_test links warden_http)"),
    ("api/control/owners_test.cpp", "http/",
     "the owners test drives the real router with named keys (api_control_test links warden_http)"),
]

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
DOC_BEGIN = "<!-- BEGIN layering rules: generated by `tests/check_layering.py --write-doc`; do not edit -->"
DOC_END = "<!-- END layering rules -->"
DOC_PATH = os.path.join("docs", "architecture.md")


def module_of(path):
    """The longest module folder that is a prefix of `path` (a repository-relative path), or None."""
    best = None
    for module in RULES:
        if path.startswith(module + "/") and (best is None or len(module) > len(best)):
            best = module
    return best


def project_includes(path):
    """(line number, include path, quoted) of each project include in `path`."""
    tops = {m.split("/", 1)[0] for m in RULES}
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            quote, target = m.group(1), m.group(2).strip()
            if quote == '"' or target.split("/", 1)[0] in tops:
                yield number, target


def source_files(root):
    """Repository-relative paths of the C++ sources under root, sorted."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if not d.startswith(".") and not d.startswith("build") and d not in SKIPPED_DIRS)
        for name in sorted(filenames):
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")


def exception_for(shown, target):
    for index, (file, prefix, _) in enumerate(EXCEPTIONS):
        if file == shown and target.startswith(prefix):
            return index
    return None


def judge(shown, number, target, used):
    """The violation text for one include of file `shown`, or None when it is allowed."""
    module = module_of(shown)
    allowed, _ = RULES[module]
    target_module = module_of(target)
    if target_module is not None and (target_module == module or target_module in allowed):
        return None
    index = exception_for(shown, target)
    if index is not None:
        used.add(index)
        return None
    if target_module is None:
        return f'{shown}:{number}: "{target}" is not under a module folder (quote only project headers)'
    may = ", ".join(m + "/" for m in allowed) or "nothing else"
    return f'{shown}:{number}: {module}/ must not include "{target}" ({module}/ may include {may})'


def violations(root, used):
    for shown in source_files(root):
        if module_of(shown) is None:
            yield f"{shown}: no layering rule covers this folder (add its module to RULES in tests/check_layering.py)"
            continue
        for number, target in project_includes(os.path.join(root, shown)):
            found = judge(shown, number, target, used)
            if found:
                yield found
    for module in source_tree.cmake_modules(root):
        if module not in RULES:
            yield f"CMakeLists.txt: module {module}/ has no layering rule (add it to RULES in tests/check_layering.py)"


def doc_block():
    """The Markdown block docs/architecture.md holds between DOC_BEGIN and DOC_END."""
    lines = [DOC_BEGIN,
             "| module | may include, besides itself | why |",
             "|---|---|---|"]
    for module, (allowed, why) in RULES.items():
        may = ", ".join(f"`{m}/`" for m in allowed) or "nothing"
        lines.append(f"| `{module}/` | {may} | {why} |")
    lines += ["", "Exceptions, one file and one include each (TEMPORARY ones go when their move lands):", ""]
    lines += [f'- `{file}` → `{prefix}`: {reason}' for file, prefix, reason in EXCEPTIONS]
    lines.append(DOC_END)
    return "\n".join(lines) + "\n"


def doc_check(root, write):
    path = os.path.join(root, DOC_PATH)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    begin, end = text.find(DOC_BEGIN), text.find(DOC_END)
    if begin < 0 or end < begin:
        print(f"layering: {DOC_PATH} has no generated block ({DOC_BEGIN!r} … {DOC_END!r})")
        return 1
    current = text[begin:end + len(DOC_END) + 1]
    wanted = doc_block()
    if current == wanted:
        print(f"layering: {DOC_PATH} states the rules of tests/check_layering.py")
        return 0
    if write:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text[:begin] + wanted + text[end + len(DOC_END) + 1:])
        print(f"layering: rewrote the rules block of {DOC_PATH}")
        return 0
    print(f"layering: {DOC_PATH} differs from the rules; run tests/check_layering.py --write-doc")
    return 1


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    root = os.path.abspath(args[0] if args else source_tree.repo_root())
    if "--doc" in argv:
        sys.stdout.write(doc_block())
        return 0
    if "--check-doc" in argv or "--write-doc" in argv:
        return doc_check(root, "--write-doc" in argv)
    if not os.path.isdir(os.path.join(root, "common")):
        print(f"layering: {root} is not a warden source tree (no common/)")
        return 2
    used = set()
    found = list(violations(root, used))
    for v in found:
        print(v)
    for index, (file, prefix, reason) in enumerate(EXCEPTIONS):
        if index not in used:
            print(f'layering: note: unused exception {file} → "{prefix}" ({reason}); remove it')
    print(f"layering: {len(found)} violation(s)" if found else "layering: ok")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
