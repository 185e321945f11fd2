// Table tests of the python allow-list (issue 22 part 1): every Python shape of the issue asks,
// with its reason and kind, and a corpus of everyday snippets runs without a question.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "risk/python_allowlist.h"
#include "risk/risk.h"

namespace warden::risk {
namespace {

risk_assessment classify(std::string_view code) {
  const tool_profile python{"python", code_language::python, "code", false, false, true};
  return classify_call(python, json{{"code", std::string(code)}});
}

std::string listed(const risk_assessment& r) {
  std::string s;
  for (const std::string& reason : r.reasons) s += "\n  [" + reason + "]";
  return s;
}

struct shape {
  std::string_view code;
  std::string_view reason;  ///< one of the reasons given, exactly
  bool hazard;              ///< a named danger (else only "not known to be safe")
};

// clang-format off
const shape k_issue_shapes[] = {
    // names matched anywhere in a dotted chain, not only from the import root
    {"import shutil\nshutil.os.system('rm -rf .')", "uses the name os (runs programs or reaches the system)", true},
    {"import os.path\nos.path.os.system('id')", "uses the name os (runs programs or reaches the system)", true},
    {"from shutil import os as o\no.remove('a.txt')", "uses the name os (runs programs or reaches the system)", true},
    {"import tempfile\ntempfile._os.unlink('a.txt')", "uses the name _os (runs programs or reaches the system)", true},
    {"import typing\ntyping.sys.modules['os'].system('id')", "uses the name sys (reaches the interpreter's modules and import path)", true},
    {"import typing\ntyping.sys.modules['os'].system('id')", "uses the name modules (reaches every loaded module)", true},
    {"import gc\nfor o in gc.get_objects():\n    pass", "uses the name gc (reaches every live object)", true},
    // code runners
    {"import pipes\nt = pipes.Template()\nt.append('rm -rf .', '--')", "uses the name pipes (runs shell commands)", true},
    {"import asyncio\nasync def main():\n    p = await asyncio.create_subprocess_shell('rm -rf .')\nasyncio.run(main())",
     "imports asyncio (runs programs and opens connections)", true},
    {"import cProfile\ncProfile.run('print(1)')", "imports cProfile (runs code given as a string)", true},
    {"import logging.config\nlogging.config.dictConfig({'version': 1, 'root': {'()': 'os.system'}})",
     "imports logging.config (its configuration imports and calls any named factory)", true},
    // write-then-run
    {"import sys\nopen('m.py', 'w').write('print(1)')\nsys.path.insert(0, '.')\nimport m",
     "uses the name sys (reaches the interpreter's modules and import path)", true},
    {"import sys\nopen('m.py', 'w').write('print(1)')\nsys.path.insert(0, '.')\nimport m", "imports m, which is not known to be safe", false},
    {"import sys\nopen('m.py', 'w').write('print(1)')\nsys.path.insert(0, '.')\nimport m", "opens a file for writing (mode 'w')", true},
    // destruction without rm
    {"from pathlib import Path\nfor p in Path('.').rglob('*'):\n    p.unlink()", "uses the name unlink (deletes files)", true},
    {"open('notes.txt', 'w')", "opens a file for writing (mode 'w')", true},
    {"from pathlib import Path\nPath('a.txt').write_text('')", "uses the name write_text (writes files)", true},
    {"from pathlib import Path\nPath('b.txt').replace('a.txt')", "may move a file over another (pathlib's replace)", true},
    {"from pathlib import Path\nPath.replace(Path('b.txt'), 'a.txt')", "may move a file over another (pathlib's replace)", true},
    {"import pathlib\np = pathlib.Path('b.txt')\ntype(p).replace(p, 'a.txt')", "may move a file over another (pathlib's replace)", true},
    // resource floods
    {"x = bytearray(7*2**30)", "allocates about 7 GiB (bytearray)", true},
    {"import threading\ndef spin():\n    while True:\n        pass\nfor _ in range(10000):\n    threading.Thread(target=spin).start()",
     "uses the name threading (starts threads)", true},
    {"s = 'x' * 10**10", "allocates at least 9 GiB (a sequence repeated about 10^10 times)", true},
    {"a = [0] * 10**9", "allocates at least 954 MiB (a sequence repeated about 10^9 times)", true},
    {"for i in range(10**12):\n    pass", "counts to about 10^12 (range)", true},
    {"n = 10**10\nb = [0] * n", "allocates at least 9 GiB (a sequence repeated about 10^10 times)", true},
    {"print(10**10**10)", "computes a number of about 10^10 digits", true},
    // the brief's named dangers
    {"eval('1 + 2')", "calls eval (runs code built at run time)", true},
    {"exec('print(1)')", "calls exec (runs code built at run time)", true},
    {"c = compile('1', 'x', 'eval')", "calls compile (builds code at run time)", true},
    {"import json\nf = getattr(json, 'codecs')", "calls getattr (reaches attributes by a computed name)", true},
    {"__import__('os').system('id')", "uses __import__ (imports modules named at run time)", true},
    {"print(globals())", "calls globals (reaches a namespace as a dictionary)", true},
    {"import json\nprint(vars(json)['codecs'])", "calls vars (reaches a namespace as a dictionary)", true},
    {"breakpoint()", "calls breakpoint (starts the debugger, which runs any command)", true},
    {"if False:\n    from json import loads as eval\neval('1')", "calls eval (runs code built at run time)", true},
    {"help('os')", "calls help (imports modules named in a string)", true},
    {"().__class__.__bases__[0].__subclasses__()", "uses __subclasses__ (reaches interpreter internals)", true},
    {"def f():\n    pass\nprint(f.__globals__)", "uses __globals__ (reaches interpreter internals)", true},
    {"import ctypes", "uses the name ctypes (calls any C function)", true},
    {"import importlib\nimportlib.import_module('os')", "uses the name importlib (imports modules named at run time)", true},
    {"import subprocess\nsubprocess.run(['ls'])", "uses the name subprocess (runs programs)", true},
    {"import socket", "imports socket, which is not known to be safe", false},
    {"import numpy as np", "imports numpy, which is not known to be safe", false},
    {"from urllib import request", "imports urllib, which is not known to be safe", false},
    // reachable through safe modules by other names (tests/check_python_allowlist.py found them)
    {"import random\nrandom._os.system('id')", "uses the name _os (runs programs or reaches the system)", true},
    {"import enum\nenum.bltns.eval('1')", "uses the name bltns (reaches every built-in, eval and open included)", true},
    {"import json\njson.codecs.open('a.txt', 'w')", "uses the name codecs (opens files for writing with codecs.open)", true},
    {"import dataclasses\ndataclasses._thread.start_new_thread(print, ())", "uses the name _thread (starts threads)", true},
    {"import uuid\nuuid._get_command_stdout('sh', '-c', 'id')", "uses the name _get_command_stdout (runs programs)", true},
    {"def g(m):\n    return m._get_command_stdout('sh', '-c', 'id')\nimport uuid\ng(uuid)", "uses the name _get_command_stdout (runs programs)", true},
    {"import string\nstring.Formatter().get_field('0.os', [None], {})", "uses the name get_field (reaches attributes by a computed name)", true},
    {"import operator\noperator.attrgetter('codecs')", "uses the name attrgetter (reaches attributes by a computed name)", true},
    {"from functools import singledispatch", "uses the name singledispatch (evaluates strings in type hints as code)", true},
    {"import typing\ntyping.get_type_hints(f)", "uses the name get_type_hints (evaluates strings in type hints as code)", true},
    {"import calendar\nprint(calendar._locale)", "uses _locale, a private name of calendar", false},
    {"import json as j\nx = j\nx._default_decoder", "uses _default_decoder, a private name of x", false},
    {"from random import _inst", "imports the private name _inst from random", false},
    {"try:\n    1 / 0\nexcept Exception as e:\n    print(e.__traceback__.tb_frame.f_globals)", "uses the name tb_frame (reaches a frame from a traceback)", true},
    {"def g():\n    yield 1\nprint(g().gi_frame.f_globals)", "uses the name f_globals (reaches a frame's namespace)", true},
    {"t = type('T', (), {'__getattr__': print})", "names __getattr__ in a string (reaches interpreter internals)", true},
    // open with a mode that is not a literal read mode
    {"open('a.txt', 'a').write('x')", "opens a file for writing (mode 'a')", true},
    {"open('a.txt', 'r+')", "opens a file for writing (mode 'r+')", true},
    {"open('a.txt', mode='wb')", "opens a file for writing (mode 'wb')", true},
    {"m = 'w'\nopen('a.txt', m)", "opens a file in a mode computed at run time", true},
    {"args = ('a.txt', 'w')\nopen(*args)", "opens a file with arguments computed at run time", true},
    {"import io\nio.open('a.txt', 'w')", "opens a file for writing (mode 'w')", true},
    {"from pathlib import Path\nPath('a.txt').open('w')", "opens a file for writing (mode 'w')", true},
    {"import functools\nw = functools.partial(open, mode='w')", "passes open around (its mode cannot be checked)", true},
    {"from io import open as o\no('a.txt', 'w')", "imports open under another name (its mode cannot be checked)", true},
    {"import io as x\nx.open('a.txt', 'w')", "opens a file in a mode not known to be read-only ('a.txt')", true},
    // a file opened for reading leads to io.FileIO through its raw object: type(raw)('b.txt', 'w')
    {"type(open('a.txt', 'rb').raw)('b.txt', 'w')", "uses the name raw (reaches a raw file object, whose type opens files for writing)", true},
    {"type(open('a.txt', 'rb').detach())('b.txt', 'w')", "uses the name detach (reaches a raw file object, whose type opens files for writing)", true},
    {"type(open('a.txt', 'rb', buffering=0))('b.txt', 'w')", "opens a file unbuffered, as a raw file object whose type opens files for writing", true},
    {"type(open('a.txt', 'rb', 0))('b.txt', 'w')", "opens a file unbuffered, as a raw file object whose type opens files for writing", true},
    // evasions the tokenizer sees through
    {"# harmless\rimport os", "uses the name os (runs programs or reaches the system)", true},
    {"x = 1\x0b", "contains control characters", true},
    {"# coding: utf-7\n+AGk-mport os", "declares the source encoding utf-7, which hides what the code says", true},
    {"#!/usr/bin/env python3\n# -*- coding: unicode_escape -*-\n\\x69mport os", "declares the source encoding unicode_escape, which hides what the code says", true},
    {"# vim: set fileencoding=raw_unicode_escape :\n\\u0069mport os", "declares the source encoding raw_unicode_escape, which hides what the code says", true},
    {"print(f\"{__import__('os').system('id')}\")", "uses __import__ (imports modules named at run time)", true},
    {"\xef\xbd\x85\xef\xbd\x96\xef\xbd\x81\xef\xbd\x8c('1')", "uses a non-ASCII identifier", true},
    {"s = \"unterminated", "the code cannot be tokenized (an unterminated string)", false},
};
// clang-format on

TEST(PythonAllowlist, EveryShapeOfTheIssueAsksWithItsReason) {
  for (const shape& s : k_issue_shapes) {
    const risk_assessment r = classify(s.code);
    EXPECT_EQ(r.level, risk_level::high) << s.code;
    EXPECT_NE(std::find(r.reasons.begin(), r.reasons.end(), s.reason), r.reasons.end())
        << s.code << "\n want [" << s.reason << "], got:" << listed(r);
    if (s.hazard) {
      EXPECT_TRUE(r.hazard) << s.code << listed(r);
    }
  }
}

TEST(PythonAllowlist, OnlyNotKnownToBeSafeIsNoHazard) {
  for (const std::string_view code : {"import socket", "import numpy as np\nprint(np.zeros(3))", "import requests",
                                      "from urllib import request", "import json as j\nj._default_decoder", "from . import x",
                                      "print(x.__foo__)"}) {
    const risk_assessment r = classify(code);
    EXPECT_EQ(r.level, risk_level::high) << code;
    EXPECT_FALSE(r.hazard) << code << listed(r);
  }
  EXPECT_TRUE(classify("import socket\nimport os").hazard);
}

// clang-format off
/// Everyday Python, as a model writes it for the python tool.
const std::string_view k_corpus[] = {
    // arithmetic and printing
    "print(1 + 1)",
    "print(6 * 7)",
    "print(2 ** 64)",
    "x = 17 % 5\nprint(x)",
    "print(divmod(17, 5))",
    "print(round(3.14159, 2))",
    "print(abs(-3), max(1, 2, 3), min([4, 5]))",
    "MOD = 10**9 + 7\nprint(pow(3, 200, MOD))",
    "print(sum(range(1, 101)))",
    "print(0.1 + 0.2 == 0.3)",
    "print(int('42') + float('1.5'))",
    "print(hex(255), bin(10), oct(8))",
    "total = 0\nfor i in range(10):\n    total += i * i\nprint(total)",
    // math, statistics, fractions, decimal, random
    "import math\nprint(math.sqrt(2))",
    "import math\nprint(math.pi * 3 ** 2)",
    "import math\nprint(math.factorial(20), math.comb(10, 3), math.gcd(12, 18))",
    "import math\nprint([math.sin(x / 10) for x in range(5)])",
    "import statistics\ndata = [2, 4, 4, 4, 5, 5, 7, 9]\nprint(statistics.mean(data), statistics.stdev(data))",
    "import statistics as st\nprint(st.median([3, 1, 2]))",
    "from fractions import Fraction\nprint(Fraction(1, 3) + Fraction(1, 6))",
    "from decimal import Decimal, getcontext\ngetcontext().prec = 30\nprint(Decimal(1) / Decimal(7))",
    "import random\nrandom.seed(0)\nprint(random.randint(1, 6), random.choice('abc'))",
    "import random\nxs = list(range(10))\nrandom.shuffle(xs)\nprint(sorted(xs))",
    "import cmath\nprint(cmath.sqrt(-1))",
    // strings and f-strings
    "name = 'Ada'\nprint(f'Hello, {name}!')",
    "s = 'hello world'\nprint(s.upper(), s.title(), s.split())",
    "print('a,b,c'.split(','))",
    "print(' '.join(['x', 'y', 'z']))",
    "s = 'banana'\nprint(s.count('a'), s.find('n'), s.replace('a', 'o'))",
    "print('racecar' == 'racecar'[::-1])",
    "print(f'{3.14159:.2f} {42:05d} {1234567:,}')",
    "print('-' * 40)",
    "word = 'Mississippi'\nprint({c: word.count(c) for c in set(word)})",
    "import textwrap\nprint(textwrap.fill('lorem ipsum dolor sit amet ' * 5, width=30))",
    "import string\nprint(string.ascii_lowercase)",
    "text = '  padded  '\nprint(repr(text.strip()))",
    "print('Python'.center(20, '*'))",
    "print(''.join(reversed('stressed')))",
    // json, re, csv, base64, hashlib
    "import json\nprint(json.dumps({'a': 1, 'b': [1, 2]}, indent=2))",
    "import json\ndata = json.loads('{\"x\": 1}')\nprint(data['x'])",
    "import re\nprint(re.findall(r'\\d+', 'a1b22c333'))",
    "import re\nm = re.match(r'(\\w+)@(\\w+)\\.com', 'ada@example.com')\nprint(m.groups())",
    "import re\nprint(re.sub(r'\\s+', ' ', 'a   b \\t c'))",
    "import csv\nwith open('data.csv', newline='') as f:\n    for row in csv.reader(f):\n        print(row)",
    "import csv, io\nrows = list(csv.DictReader(io.StringIO('a,b\\n1,2\\n')))\nprint(rows)",
    "import base64\nprint(base64.b64encode(b'hello').decode())",
    "import hashlib\nprint(hashlib.sha256(b'abc').hexdigest())",
    "import uuid\nprint(uuid.uuid4())",
    // dates and times
    "from datetime import datetime\nprint(datetime.now().isoformat())",
    "from datetime import date, timedelta\nprint(date(2024, 1, 31) + timedelta(days=30))",
    "import datetime\nd = datetime.date(2000, 2, 29)\nprint(d.strftime('%A %d %B %Y'))",
    "from datetime import datetime\nprint(datetime.strptime('2024-03-01', '%Y-%m-%d').weekday())",
    "import calendar\nprint(calendar.month(2024, 2))",
    "import time\nstart = time.perf_counter()\nsum(range(10000))\nprint(time.perf_counter() - start)",
    "import time\ntime.sleep(0.5)\nprint('done')",
    // collections, itertools, functools, sorting, comprehensions
    "from collections import Counter\nprint(Counter('abracadabra').most_common(3))",
    "from collections import defaultdict\nd = defaultdict(list)\nfor k, v in [('a', 1), ('a', 2)]:\n    d[k].append(v)\nprint(dict(d))",
    "from collections import namedtuple\nPoint = namedtuple('Point', 'x y')\nprint(Point(1, 2))",
    "from collections import deque\nq = deque([1, 2, 3])\nq.rotate(1)\nprint(q)",
    "import itertools\nprint(list(itertools.permutations('abc', 2)))",
    "from itertools import groupby\nfor k, g in groupby('aaabbc'):\n    print(k, len(list(g)))",
    "from functools import reduce\nprint(reduce(lambda a, b: a * b, range(1, 6)))",
    "from functools import lru_cache\n@lru_cache(maxsize=None)\ndef fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nprint(fib(80))",
    "import heapq\nprint(heapq.nlargest(3, [5, 1, 8, 3, 9]))",
    "import bisect\nxs = [1, 3, 5]\nbisect.insort(xs, 4)\nprint(xs)",
    "people = [('bob', 25), ('ada', 36)]\nprint(sorted(people, key=lambda p: p[1], reverse=True))",
    "print(sorted({'b': 2, 'a': 1}.items()))",
    "squares = [x * x for x in range(10) if x % 2 == 0]\nprint(squares)",
    "matrix = [[1, 2], [3, 4]]\nprint([list(row) for row in zip(*matrix)])",
    "print({x: x ** 2 for x in range(5)})",
    "print(list(map(str, [1, 2, 3])), list(filter(None, [0, 1, 2])))",
    "print(any(x > 3 for x in [1, 5]), all([True, 1]))",
    "for i, c in enumerate('abc'):\n    print(i, c)",
    "import operator\nprint(sorted([(1, 'b'), (0, 'a')], key=operator.itemgetter(1)))",
    // reading files
    "with open('a.txt') as f:\n    print(f.read())",
    "print(open('a.txt').read())",
    "with open('data/input.txt', encoding='utf-8') as f:\n    lines = f.readlines()\nprint(len(lines))",
    "with open('image.png', 'rb') as f:\n    print(len(f.read()))",
    "for line in open('log.txt'):\n    if 'ERROR' in line:\n        print(line.rstrip())",
    "from pathlib import Path\nprint(Path('notes.txt').read_text())",
    "from pathlib import Path\nprint(sorted(p.name for p in Path('.').glob('*.py')))",
    "import glob\nprint(glob.glob('*.csv'))",
    "import json\nwith open('config.json') as f:\n    cfg = json.load(f)\nprint(cfg.get('name'))",
    // small functions and classes
    "def is_prime(n):\n    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))\nprint([n for n in range(30) if is_prime(n)])",
    "def fact(n):\n    return 1 if n == 0 else n * fact(n - 1)\nprint(fact(10))",
    "class Stack:\n    def __init__(self):\n        self._items = []\n    def push(self, x):\n        self._items.append(x)\n    def pop(self):\n        return self._items.pop()\ns = Stack()\ns.push(1)\nprint(s.pop())",
    "from dataclasses import dataclass\n@dataclass\nclass Point:\n    x: float\n    y: float\nprint(Point(1, 2))",
    "from enum import Enum\nclass Color(Enum):\n    RED = 1\n    GREEN = 2\nprint(Color.RED.name)",
    "class Vector:\n    def __init__(self, x, y):\n        self.x, self.y = x, y\n    def __add__(self, o):\n        return Vector(self.x + o.x, self.y + o.y)\n    def __repr__(self):\n        return f'Vector({self.x}, {self.y})'\nprint(Vector(1, 2) + Vector(3, 4))",
    "from typing import List, Optional\ndef first(xs: List[int]) -> Optional[int]:\n    return xs[0] if xs else None\nprint(first([3]))",
    "def gen(n):\n    for i in range(n):\n        yield i * 2\nprint(list(gen(5)))",
    "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    print('error:', e)",
    "if __name__ == '__main__':\n    print('main')",
    "from difflib import SequenceMatcher\nprint(SequenceMatcher(None, 'kitten', 'sitting').ratio())",
    "import copy\na = [[1], [2]]\nb = copy.deepcopy(a)\nb[0].append(9)\nprint(a, b)",
    "from pprint import pprint\npprint({'a': list(range(20)), 'b': {'c': 1}})",
    "x = 5\nwhile x > 0:\n    x -= 1\nprint(x)",
    // everyday code that asks: the measured share counts these as misses
    "import os\nprint(os.listdir('.'))",
    "import os\nprint(os.path.exists('a.txt'))",
    "import sys\nprint(sys.version)",
    "import numpy as np\nprint(np.arange(10).mean())",
    "import pandas as pd\nprint(pd.read_csv('data.csv').head())",
    "with open('out.txt', 'w') as f:\n    f.write('hello')",
    "class A:\n    def __repr__(self):\n        return self.__class__.__name__\nprint(A())",
};
// clang-format on

TEST(PythonAllowlist, EverydayCorpusMostlyRunsWithoutAQuestion) {
  std::size_t low = 0;
  for (const std::string_view code : k_corpus) {
    const risk_assessment r = classify(code);
    if (r.level == risk_level::low) ++low;
    else {
      std::string one(code.substr(0, 60));
      std::replace(one.begin(), one.end(), '\n', ';');
      std::printf("  asks: %s%s\n", one.c_str(), listed(r).c_str());
    }
  }
  const double share = static_cast<double>(low) / static_cast<double>(std::size(k_corpus));
  std::printf("python corpus: %zu of %zu snippets low (%.1f %%)\n", low, std::size(k_corpus), 100 * share);
  EXPECT_GE(std::size(k_corpus), 70u);
  EXPECT_GE(share, 0.90);
}

TEST(PythonAllowlist, SizesAskOnlyAboveTheBound) {
  const std::pair<std::string_view, risk_level> rows[] = {
      {"x = bytearray(10**8)", risk_level::low},
      {"x = bytearray(10**8 + 1)", risk_level::high},
      {"x = bytes(1 << 30)", risk_level::high},
      {"x = bytes(0x10000000)", risk_level::high},
      {"x = b'\\0' * (1 << 20)", risk_level::low},
      {"x = [None] * 1_000_000_000", risk_level::high},
      {"x = 10**9 * [0]", risk_level::high},
      {"x = (0,) * 10**9", risk_level::high},
      {"print('=' * 80)", risk_level::low},
      {"print(1e10 * 3)", risk_level::low},
      {"print(10**9 * 3)", risk_level::low},
      {"t = 1_700_000_000\nprint(t)", risk_level::low},
      {"for i in range(0, 10**9, 2):\n    pass", risk_level::high},
      {"for i in range(10**6):\n    pass", risk_level::low},
      {"print(' '.ljust(10**9))", risk_level::high},
      {"import math\nprint(math.factorial(10**9))", risk_level::high},
      {"import itertools\nfor x in itertools.repeat(1, 10**10):\n    pass", risk_level::high},
      {"print(2**100000)", risk_level::low},
      {"print(2**(10**9))", risk_level::high},
      {"print(pow(10, 10**9))", risk_level::high},
      {"print(pow(3, 10**18, 10**9 + 7))", risk_level::low},
      {"print(pow(2, 64))", risk_level::low},
      {"while True:\n    break", risk_level::low},
  };
  for (const auto& [code, want] : rows) {
    const risk_assessment r = classify(code);
    EXPECT_EQ(r.level, want) << code << listed(r);
  }
}

TEST(PythonAllowlist, OpenIsLowOnlyForReading) {
  const std::pair<std::string_view, risk_level> rows[] = {
      {"open('a.txt')", risk_level::low},
      {"open('a.txt', 'r')", risk_level::low},
      {"open('a.txt', 'rb')", risk_level::low},
      {"open('a.txt', 'rt', encoding='utf-8')", risk_level::low},
      {"open('a.txt', mode='r')", risk_level::low},
      {"open(file='a.txt')", risk_level::low},
      {"p = 'data.txt'\nprint(open(p).read())", risk_level::low},
      {"from pathlib import Path\nPath('a.txt').open()", risk_level::low},
      {"from pathlib import Path\nPath('a.txt').open('rb')", risk_level::low},
      {"open('a.txt', 'w')", risk_level::high},
      {"open('a.txt', 'x')", risk_level::high},
      {"open('a.txt', 'ab')", risk_level::high},
      {"open('a.txt', 'w+')", risk_level::high},
      {"open('a.txt', 'r', 1, None, None, None, True, opener)", risk_level::low},
      {"open('a.txt', 'r', -1)", risk_level::low},
      {"open('a.txt', buffering=1)", risk_level::low},
      {"raw = open('a.txt').read()\nprint(raw)", risk_level::low},
      {"open('a.txt', 'rb', n)", risk_level::high},
      {"open('a.txt', **kw)", risk_level::high},
      {"open('/etc/shadow')", risk_level::high},
      {"open('../secret.txt')", risk_level::high},
  };
  for (const auto& [code, want] : rows) {
    const risk_assessment r = classify(code);
    EXPECT_EQ(r.level, want) << code << listed(r);
  }
}

TEST(PythonAllowlist, EverydayNamesThatLookLikeDangersStayLow) {
  for (const std::string_view code : {
           "model.eval()", "print(s.replace('a', 'b'))", "d = datetime.now().replace(microsecond=0)",
           "xs = [1, 2]\nxs.remove(1)", "import re\nprint(re.compile('a+').match('aa'))",
           "print('os.system and eval and __import__ are words')", "# import os\nprint(1)",
           "s = \"import subprocess\"", "def exec_step(x):\n    return x", "print(f'{1 + 1}')",
           "import collections.abc\nprint(isinstance([], collections.abc.Sequence))",
           "from urllib.parse import quote\nprint(quote('a b'))", "from __future__ import annotations",
           "from types import SimpleNamespace\nprint(SimpleNamespace(a=1))", "print(__name__, __doc__)",
           "class T:\n    def touch(self):\n        pass", "d = dict(mode='w')\nprint(d)",
           "# -*- coding: utf-8 -*-\nprint('ok')", "#!/usr/bin/env python3\n# coding=latin-1\nprint(1)",
           "print(1)  # coding: utf-7"}) {
    const risk_assessment r = classify(code);
    EXPECT_EQ(r.level, risk_level::low) << code << listed(r);
  }
}

// Code built to make the rules slow or deep: nothing crashes, and each is judged in one pass (a
// quadratic rule would take minutes here; ctest's timeout is the bound, no clock is read).
TEST(PythonAllowlist, HostileShapesAreJudgedWithoutBlowingUp) {
  const auto repeat = [](std::string_view s, std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) out += s;
    return out;
  };
  EXPECT_EQ(classify(repeat("(", 300) + "1" + repeat(")", 300)).reasons,
            std::vector<std::string>{"nests brackets deeper than Python allows"});
  EXPECT_EQ(classify(repeat("bytes(", 10000) + "1" + repeat(")", 10000)).level, risk_level::high);
  EXPECT_EQ(classify(repeat("-", 50000) + "1").level, risk_level::low);
  EXPECT_EQ(classify("from pathlib import Path\n" + repeat("s.replace('a', 'b')\n", 10000)).reasons,
            std::vector<std::string>{"may move a file over another (pathlib's replace)"});
  EXPECT_EQ(classify(repeat("2**-", 20000) + "2").level, risk_level::low);
  std::string chain = repeat("._a", 20000);
  EXPECT_EQ(classify(chain.insert(0, "x")).level, risk_level::low);
  EXPECT_EQ(classify(chain.insert(0, "import json as x\n")).reasons, std::vector<std::string>{"uses _a, a private name of x"});
  std::string imports = "import m0";
  for (int i = 1; i < 5000; ++i) imports += ", m" + std::to_string(i);
  const risk_assessment many = classify(imports);
  ASSERT_EQ(many.reasons.size(), 17u);
  EXPECT_EQ(many.reasons.back(), "and more reasons not listed");
  EXPECT_FALSE(many.hazard);
  EXPECT_TRUE(classify(imports + "\nimport os").hazard);  // a danger past the cap still counts
}

TEST(PythonAllowlist, TheListsAreConsistent) {
  std::set<std::string_view> seen;
  for (const auto& m : python_lists::safe_modules()) {
    EXPECT_TRUE(seen.insert(m.name).second) << "twice: " << m.name;
    EXPECT_FALSE(m.source.empty()) << m.name;
    for (const auto& d : python_lists::denied_names()) EXPECT_NE(m.name, d.name) << "safe and denied: " << m.name;
    for (const auto& u : python_lists::known_unsafe_modules()) EXPECT_NE(m.name, u.name) << "safe and unsafe: " << m.name;
    EXPECT_EQ(classify("import " + std::string(m.name)).level, risk_level::low) << m.name;
  }
  seen.clear();
  for (const auto& d : python_lists::denied_names()) {
    EXPECT_TRUE(seen.insert(d.name).second) << "twice: " << d.name;
    EXPECT_FALSE(d.source.empty()) << d.name;
    EXPECT_FALSE(d.what.empty()) << d.name;
    const bool bare = d.where == python_lists::place::bare;
    const std::string code = bare ? std::string(d.name) + "(x)" : "x." + std::string(d.name);
    EXPECT_TRUE(classify(code).hazard) << code;
  }
  for (const std::string_view dunder : python_lists::allowed_dunders()) {
    EXPECT_TRUE(seen.insert(dunder).second) << "allowed and denied, or twice: " << dunder;
    EXPECT_EQ(classify("x." + std::string(dunder)).level, risk_level::low) << dunder;
  }
  for (const auto& u : python_lists::known_unsafe_modules()) {
    const risk_assessment r = classify("import " + std::string(u.name));
    EXPECT_TRUE(r.hazard) << u.name << listed(r);
  }
}

}  // namespace
}  // namespace warden::risk
