#!/usr/bin/env python3
"""The python allow-list gate (run by ctest as `python_allowlist`): the attribute rule of the
`auto` classifier closes its module list (risk/python_allowlist.h).

Code that imports only safe modules can still reach other modules through their attributes
(`shutil.os`, `random._os`, `typing.sys`, `enum.bltns`). The classifier asks whenever a denied
name (or a dunder that is not allowed) appears anywhere, so this gate imports every safe module
in this Python, walks every attribute, class, instance and container reachable from them without
passing such a name, and fails when the walk reaches

  - a module that is neither on the safe list nor in REVIEWED_HARMLESS below, or
  - a dangerous built-in or os function (eval, exec, open, getattr, os.system, io.open, …) by any
    other name,

printing the path that reaches it (add a denied name that cuts it, or review the module). It also
fails when a safe package has a submodule that is neither safe, reviewed nor private, since
`from package import submodule` imports it. It reads the lists from the BEGIN/END blocks of
risk/python_allowlist.cpp. Dict values are walked whatever their key, since the classifier does
not read subscripts. Only this interpreter's modules are seen (the jail runs the host's python3).

Usage: check_python_allowlist.py [SOURCE_ROOT] [--verbose]
"""
import builtins
import collections
import importlib
import os
import pkgutil
import re
import sys
import types
import warnings

# Modules the walk may reach that are not importable as safe, each reviewed: what it offers and
# why that is harmless once the denied names are cut (3.11 sources).
REVIEWED_HARMLESS = {
    "_abc": "C part of abc",
    "_bisect": "C part of bisect",
    "_collections": "C part of collections",
    "_collections_abc": "the classes of collections.abc",
    "_csv": "C part of csv",
    "_datetime": "C part of datetime",
    "_decimal": "C part of decimal",
    "_pydecimal": "pure-Python decimal",
    "_functools": "C part of functools",
    "_hashlib": "OpenSSL hashes",
    "_heapq": "C part of heapq",
    "_json": "C part of json",
    "_markupbase": "the base class of html.parser",
    "_locale": "C part of locale: reads and sets the locale of this process",
    "_operator": "C part of operator",
    "_random": "C part of random",
    "_sha512": "a hash",
    "_sre": "C part of re",
    "_stat": "C part of stat",
    "_string": "C helpers of string.Formatter (formatter_parser, formatter_field_name_split: strings only)",
    "_struct": "C part of struct",
    "_uuid": "C part of uuid (generate_time_safe)",
    "_warnings": "C part of warnings",
    "_weakref": "weak references",
    "_weakrefset": "weak sets",
    "copyreg": "pickle registration tables; pickle itself is not safe and not reachable",
    "encodings": "text codecs by name (codecs, the module that opens files, is denied)",
    "genericpath": "path predicates (exists, isdir): reads only",
    "html.entities": "entity tables",
    "ipaddress": "address arithmetic",
    "json.decoder": "part of json",
    "json.encoder": "part of json",
    "json.scanner": "part of json",
    "json.tool": "pretty-prints JSON named on the command line (sys.argv, unreachable)",
    "locale": "formats numbers and dates for a locale; setlocale changes only this process",
    "ntpath": "Windows path strings (its os is denied)",
    "posixpath": "POSIX path strings (its os is denied); expanduser reads HOME",
    "re._casefix": "part of re",
    "re._compiler": "part of re",
    "re._constants": "part of re",
    "re._parser": "part of re",
    "stat": "constants and predicates for file modes",
    "warnings": "warning filters and formatting; _getcategory/_setoption (import by name) are denied",
    "weakref": "weak references",
    "zoneinfo": "time-zone data, read-only",
}

# A dangerous callable found under any name is a failure unless a denied name cuts the path.
DANGEROUS_BUILTINS = ["eval", "exec", "compile", "getattr", "setattr", "delattr", "__import__", "open",
                      "globals", "locals", "vars", "breakpoint", "help"]
# Reached under the name `open`, these are checked by the classifier (read modes only).
CHECKED_OPEN = {"builtins.open", "io.open"}
# os functions that only read (the rest of os's callables are dangerous wherever they appear).
OS_READ_ONLY = {"fspath", "fsencode", "fsdecode", "get_terminal_size", "cpu_count", "getcwd", "getcwdb",
                "getpid", "getppid", "urandom", "strerror", "getenv", "listdir", "stat", "lstat", "scandir",
                "walk", "fwalk", "get_exec_path", "getuid", "getgid", "geteuid", "getegid", "uname", "times",
                "device_encoding", "isatty", "fstat", "access", "PathLike", "_check_methods", "_exists",
                "getlogin", "getloadavg", "get_blocking", "get_inheritable", "sched_getaffinity"}


def block(text, name):
    m = re.search(r"// BEGIN %s\n(.*?)// END %s" % (name, name), text, re.S)
    if not m:
        sys.exit("check_python_allowlist: no %s block in risk/python_allowlist.cpp" % name)
    return m.group(1)


def read_lists(root):
    with open(os.path.join(root, "risk", "python_allowlist.cpp"), encoding="utf-8") as f:
        text = f.read()
    first = re.compile(r'^\s*\{"([^"]+)"', re.M)
    safe = first.findall(block(text, "safe_modules"))
    denied = {}
    for line in block(text, "denied_names").splitlines():
        m = re.match(r'\s*\{"([^"]+)", "[^"]*", place::(anywhere|bare|attribute)', line)
        if m:
            denied[m.group(1)] = m.group(2)
    dunders = set(re.findall(r'"(__\w+__)"', block(text, "allowed_dunders")))
    return safe, denied, dunders


class Walk:
    def __init__(self, safe, denied, dunders, verbose):
        self.safe = set(safe)
        self.denied = denied
        self.dunders = dunders
        self.verbose = verbose
        self.found = {}
        self.seen = set()
        self.dangerous = {id(getattr(builtins, n)): "builtins." + n for n in DANGEROUS_BUILTINS}
        for n in dir(os):
            v = getattr(os, n)
            if callable(v) and not isinstance(v, type) and n not in OS_READ_ONLY:
                self.dangerous.setdefault(id(v), "os." + n)
        import _io
        import codecs
        self.dangerous[id(_io.open)] = "io.open"
        self.dangerous[id(_io.FileIO)] = "io.FileIO"
        self.dangerous[id(codecs.open)] = "codecs.open"

    def cut(self, name):
        """Whether the classifier asks on an attribute of this spelling (so the walk stops)."""
        if name.startswith("__") and name.endswith("__") and len(name) > 4:
            return name not in self.dunders or name in self.denied
        if self.denied.get(name) in ("anywhere", "attribute"):
            return True  # a bare built-in (eval) does not cut: `x.eval` is not the built-in
        stripped = name.lstrip("_")
        return stripped != name and self.denied.get(stripped) in ("anywhere", "attribute")

    def harmless(self, module_name):
        return any(module_name == h or module_name.startswith(h + ".") for h in REVIEWED_HARMLESS)

    def children(self, obj, path):
        if isinstance(obj, dict):
            return [(None, v, "%s[%r]" % (path, k)) for k, v in list(obj.items())]
        if isinstance(obj, (list, tuple, set, frozenset)):
            return [(None, v, "%s[%d]" % (path, i)) for i, v in enumerate(obj)]
        if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
            return []
        try:
            names = list(vars(obj))
        except TypeError:
            return []
        out = []
        for n in names:
            if self.cut(n):
                continue
            try:
                out.append((n, getattr(obj, n), path + "." + n))
            except Exception:  # noqa: BLE001 - a property that fails is not a path
                continue
        return out

    def run(self, max_depth=10):
        queue = collections.deque()
        for m in sorted(self.safe):
            root = m.split(".")[0]
            queue.append((sys.modules[root], root, 0))
        leaves = (int, float, complex, str, bytes, bool, type(None))
        while queue:
            obj, path, depth = queue.popleft()
            if id(obj) in self.seen or depth > max_depth:
                continue
            self.seen.add(id(obj))
            for _, value, p in self.children(obj, path):
                if isinstance(value, leaves):
                    continue
                if id(value) in self.dangerous:
                    if self.dangerous[id(value)] in CHECKED_OPEN and p.endswith(".open"):
                        continue  # every call named open is checked for its mode; passing it around asks
                    self.found.setdefault(self.dangerous[id(value)], p)
                    continue
                if isinstance(value, types.ModuleType):
                    name = value.__name__
                    if name not in self.safe and not self.harmless(name):
                        self.found.setdefault(name, p)
                        continue
                queue.append((value, p, depth + 1))


def unreviewed_submodules(safe):
    out = []
    for m in sorted(safe):
        mod = sys.modules[m]
        for info in pkgutil.iter_modules(getattr(mod, "__path__", []) or []):
            full = m + "." + info.name
            if info.name.startswith("_") or full in safe or full in REVIEWED_HARMLESS:
                continue
            out.append(full)
    return out


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    safe, denied, dunders = read_lists(root)
    warnings.simplefilter("ignore")
    for m in safe:
        importlib.import_module(m)
    walk = Walk(safe, denied, dunders, "--verbose" in argv)
    walk.run()
    problems = ["%s is reachable as %s" % (k, p) for k, p in sorted(walk.found.items())]
    problems += ["%s can be imported from a safe package and is not reviewed" % s for s in unreviewed_submodules(safe)]
    if "--verbose" in argv or problems:
        print("python %s: %d safe modules, %d denied names, %d objects walked"
              % (sys.version.split()[0], len(safe), len(denied), len(walk.seen)))
    for p in problems:
        print("check_python_allowlist: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
