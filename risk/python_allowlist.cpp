// The python lists of the `auto` classifier (risk/python_allowlist.h), one entry a line, each with
// the source of its safety or danger. "docs:" is https://docs.python.org/3/library/<page>; "3.11
// source" is CPython 3.11's Lib/<module>.py, read for what the module imports and calls.
// tests/check_python_allowlist.py parses the blocks between the BEGIN/END lines below: keep one
// entry a line, the name as the first string literal.
//
// Why a module is safe: it computes, parses, formats or reads, and nothing it offers writes or
// deletes files, runs programs or code, opens connections or reaches other modules, except
// through a name on the denied list (e.g. `random._os`, `typing.sys`, `dataclasses._thread`,
// `enum.bltns` are reachable and denied). What the classifier checks beyond the lists, in code
// (risk/risk_python.cpp): open()/io.open()/`.open(` with a mode that is not a literal read mode,
// a one-argument `.replace(x)` (Path.replace moves a file over another; str.replace takes two),
// and the private names (`_x`) of imported modules.
#include "risk/python_allowlist.h"

#include <array>

namespace warden::risk::python_lists {

namespace {

// clang-format off
// BEGIN safe_modules
constexpr std::array k_safe_modules = std::to_array<safe_module>({
    {"__future__", "docs: __future__.html: compiler directives (annotations); no run-time behaviour"},
    {"abc", "docs: abc.html: abstract base classes; defines classes only"},
    {"array", "docs: array.html: typed arrays in memory; tofile() needs a file object opened for writing, which open() checks"},
    {"base64", "docs: base64.html: encodes and decodes bytes; main() reads only the files named on the command line"},
    {"binascii", "docs: binascii.html: conversions between binary and ASCII; pure functions"},
    {"bisect", "docs: bisect.html: binary search in sorted lists; pure functions"},
    {"calendar", "docs: calendar.html: calendars as text; 3.11 source: locale is reached only as calendar._locale (private)"},
    {"cmath", "docs: cmath.html: complex-number math; C module, pure functions"},
    {"collections", "docs: collections.html: containers; namedtuple's generated code takes validated identifiers only (3.11 source)"},
    {"collections.abc", "docs: collections.abc.html: abstract container classes"},
    {"contextlib", "docs: contextlib.html: context-manager helpers; redirect_stdout/chdir change only this process"},
    {"copy", "docs: copy.html: shallow and deep copies of objects the code already holds"},
    {"csv", "docs: csv.html: reads and writes CSV through file objects; writing needs open(…, 'w'), which asks"},
    {"dataclasses", "docs: dataclasses.html: class generation; its exec() takes validated field names (3.11 source); _create_fn, inspect, types, _thread and builtins are denied"},
    {"datetime", "docs: datetime.html: dates and times; pure computation"},
    {"decimal", "docs: decimal.html: decimal arithmetic; pure computation"},
    {"difflib", "docs: difflib.html: sequence and text diffs; pure functions"},
    {"enum", "docs: enum.html: enumerations; enum.bltns (builtins), global_enum and _convert_ are denied"},
    {"fnmatch", "docs: fnmatch.html: shell-style pattern matching of strings"},
    {"fractions", "docs: fractions.html: rational numbers; pure computation"},
    {"functools", "docs: functools.html: higher-order functions; singledispatch (evaluates string annotations) is denied"},
    {"glob", "docs: glob.html: lists file names matching a pattern; reads directories only"},
    {"graphlib", "docs: graphlib.html: topological sort; pure computation"},
    {"hashlib", "docs: hashlib.html: hashes; file_digest() reads a file object"},
    {"heapq", "docs: heapq.html: heap queue on lists; pure functions"},
    {"hmac", "docs: hmac.html: keyed hashes; pure functions"},
    {"html", "docs: html.html: escape() and unescape() of text"},
    {"html.parser", "docs: html.parser.html: an HTML parser that calls the code's own handler methods"},
    {"io", "docs: io.html: in-memory streams (StringIO, BytesIO); io.open() is checked like open(), FileIO is denied"},
    {"itertools", "docs: itertools.html: iterator building blocks; C module, pure functions"},
    {"json", "docs: json.html: JSON encoding and decoding; json.codecs is denied"},
    {"keyword", "docs: keyword.html: the list of Python keywords"},
    {"math", "docs: math.html: mathematical functions; C module, pure functions"},
    {"numbers", "docs: numbers.html: numeric abstract base classes"},
    {"operator", "docs: operator.html: operators as functions; attrgetter and methodcaller (attributes by a computed name) are denied"},
    {"pathlib", "docs: pathlib.html: path objects; reading is low, and every method that changes files (unlink, rmdir, write_text, write_bytes, touch, mkdir, rename, chmod, symlink_to, …) is denied, replace() and open() are checked"},
    {"pprint", "docs: pprint.html: pretty-printing of data to a stream"},
    {"random", "docs: random.html: pseudo-random numbers; random._os is denied"},
    {"re", "docs: re.html: regular expressions; pure matching"},
    {"reprlib", "docs: reprlib.html: size-limited repr()"},
    {"secrets", "docs: secrets.html: random tokens from the system's generator"},
    {"shlex", "docs: shlex.html: shell-like splitting and quoting of strings; runs nothing (shlex.os is denied)"},
    {"statistics", "docs: statistics.html: statistics over numbers; pure computation"},
    {"string", "docs: string.html: string constants, Template and Formatter; Formatter.get_field (attributes by a computed name) is denied"},
    {"struct", "docs: struct.html: packing of binary records; pure functions"},
    {"textwrap", "docs: textwrap.html: wrapping and filling of text; pure functions"},
    {"time", "docs: time.html: clocks and sleep(); a long sleep ends at the call's time limit like any loop"},
    {"types", "docs: types.html: names of built-in types (SimpleNamespace, MappingProxyType); CodeType, FunctionType and LambdaType (functions from code objects) are denied"},
    {"typing", "docs: typing.html: type hints; get_type_hints and ForwardRef (they eval() strings) are denied, and typing.sys by the name sys"},
    {"unicodedata", "docs: unicodedata.html: the Unicode database; C module, pure functions"},
    {"urllib.parse", "docs: urllib.parse.html: splitting and quoting of URLs; no network (urllib.request is not on this list)"},
    {"uuid", "docs: uuid.html: UUIDs; uuid1()/getnode() may run ip/ifconfig with fixed arguments (3.11 source); _get_command_stdout is denied"},
});
// END safe_modules

// BEGIN denied_names
constexpr std::array k_denied_names = std::to_array<denied_name>({
    // modules that run programs or reach the system, wherever they are reached from
    {"os", "runs programs or reaches the system", place::anywhere, "docs: os.html (system, exec*, spawn*, remove, …); reachable as random._os, shutil.os, tempfile._os, glob.os"},
    {"posix", "runs programs or reaches the system", place::anywhere, "docs: os.html: posix is os's implementation on POSIX"},
    {"nt", "runs programs or reaches the system", place::anywhere, "docs: os.html: nt is os's implementation on Windows"},
    {"sys", "reaches the interpreter's modules and import path", place::anywhere, "docs: sys.html; reachable as typing.sys, statistics.sys, collections._sys"},
    {"modules", "reaches every loaded module", place::anywhere, "docs: sys.html#sys.modules"},
    {"subprocess", "runs programs", place::anywhere, "docs: subprocess.html"},
    {"pipes", "runs shell commands", place::anywhere, "docs: pipes.html: pipelines of shell commands"},
    {"platform", "runs programs to describe the system", place::anywhere, "3.11 source: platform runs uname/file; reachable as uuid.platform"},
    {"shutil", "deletes and moves files", place::anywhere, "docs: shutil.html (rmtree, move)"},
    {"builtins", "reaches every built-in, eval and open included", place::anywhere, "docs: builtins.html; reachable as dataclasses.builtins"},
    {"bltns", "reaches every built-in, eval and open included", place::anywhere, "3.11 source: enum.py imports builtins as bltns"},
    {"gc", "reaches every live object", place::anywhere, "docs: gc.html#gc.get_objects"},
    {"ctypes", "calls any C function", place::anywhere, "docs: ctypes.html"},
    {"importlib", "imports modules named at run time", place::anywhere, "docs: importlib.html#importlib.import_module"},
    {"imp", "imports modules named at run time", place::anywhere, "docs: imp.html (removed in 3.12)"},
    {"inspect", "reaches any object's namespace and the running frames", place::anywhere, "docs: inspect.html (currentframe, getmodule); reachable as dataclasses.inspect"},
    {"CodeType", "builds functions from code objects", place::anywhere, "docs: types.html#types.CodeType"},
    {"FunctionType", "builds functions from code objects", place::anywhere, "docs: types.html#types.FunctionType"},
    {"LambdaType", "builds functions from code objects", place::anywhere, "docs: types.html#types.LambdaType"},
    {"codecs", "opens files for writing with codecs.open", place::anywhere, "docs: codecs.html#codecs.open; reachable as json.codecs"},
    {"FileIO", "opens files for writing", place::anywhere, "docs: io.html#io.FileIO"},
    {"thread", "starts threads", place::anywhere, "docs: _thread.html (start_new_thread); reachable as dataclasses._thread"},
    {"threading", "starts threads", place::anywhere, "docs: threading.html"},
    {"multiprocessing", "starts processes", place::anywhere, "docs: multiprocessing.html"},
    // what those modules offer, in case they are reached by another spelling
    {"system", "runs programs", place::anywhere, "docs: os.html#os.system"},
    {"popen", "runs programs", place::anywhere, "docs: os.html#os.popen"},
    {"Popen", "runs programs", place::anywhere, "docs: subprocess.html#subprocess.Popen"},
    {"fork", "starts processes", place::anywhere, "docs: os.html#os.fork"},
    {"forkpty", "starts processes", place::anywhere, "docs: os.html#os.forkpty"},
    {"kill", "stops processes", place::anywhere, "docs: os.html#os.kill"},
    {"killpg", "stops processes", place::anywhere, "docs: os.html#os.killpg"},
    {"execl", "runs programs", place::anywhere, "docs: os.html#os.execl"},
    {"execle", "runs programs", place::anywhere, "docs: os.html#os.execle"},
    {"execlp", "runs programs", place::anywhere, "docs: os.html#os.execlp"},
    {"execlpe", "runs programs", place::anywhere, "docs: os.html#os.execlpe"},
    {"execv", "runs programs", place::anywhere, "docs: os.html#os.execv"},
    {"execve", "runs programs", place::anywhere, "docs: os.html#os.execve"},
    {"execvp", "runs programs", place::anywhere, "docs: os.html#os.execvp"},
    {"execvpe", "runs programs", place::anywhere, "docs: os.html#os.execvpe"},
    {"spawnl", "runs programs", place::anywhere, "docs: os.html#os.spawnl"},
    {"spawnle", "runs programs", place::anywhere, "docs: os.html#os.spawnle"},
    {"spawnlp", "runs programs", place::anywhere, "docs: os.html#os.spawnlp"},
    {"spawnlpe", "runs programs", place::anywhere, "docs: os.html#os.spawnlpe"},
    {"spawnv", "runs programs", place::anywhere, "docs: os.html#os.spawnv"},
    {"spawnve", "runs programs", place::anywhere, "docs: os.html#os.spawnve"},
    {"spawnvp", "runs programs", place::anywhere, "docs: os.html#os.spawnvp"},
    {"spawnvpe", "runs programs", place::anywhere, "docs: os.html#os.spawnvpe"},
    {"posix_spawn", "runs programs", place::anywhere, "docs: os.html#os.posix_spawn"},
    {"posix_spawnp", "runs programs", place::anywhere, "docs: os.html#os.posix_spawnp"},
    // methods that change files, on whatever object (pathlib.Path, os, shutil)
    {"unlink", "deletes files", place::anywhere, "docs: pathlib.html#pathlib.Path.unlink, os.html#os.unlink"},
    {"rmdir", "deletes directories", place::anywhere, "docs: pathlib.html#pathlib.Path.rmdir"},
    {"rmtree", "deletes directory trees", place::anywhere, "docs: shutil.html#shutil.rmtree"},
    {"removedirs", "deletes directories", place::anywhere, "docs: os.html#os.removedirs"},
    {"write_text", "writes files", place::anywhere, "docs: pathlib.html#pathlib.Path.write_text"},
    {"write_bytes", "writes files", place::anywhere, "docs: pathlib.html#pathlib.Path.write_bytes"},
    {"touch", "creates files or changes their times", place::anywhere, "docs: pathlib.html#pathlib.Path.touch"},
    {"mkdir", "creates directories", place::anywhere, "docs: pathlib.html#pathlib.Path.mkdir"},
    {"makedirs", "creates directories", place::anywhere, "docs: os.html#os.makedirs"},
    {"rename", "moves files", place::anywhere, "docs: pathlib.html#pathlib.Path.rename"},
    {"renames", "moves files", place::anywhere, "docs: os.html#os.renames"},
    {"chmod", "changes file permissions", place::anywhere, "docs: pathlib.html#pathlib.Path.chmod"},
    {"lchmod", "changes file permissions", place::anywhere, "docs: pathlib.html#pathlib.Path.lchmod"},
    {"chown", "changes file owners", place::anywhere, "docs: os.html#os.chown"},
    {"lchown", "changes file owners", place::anywhere, "docs: os.html#os.lchown"},
    {"symlink_to", "creates links", place::anywhere, "docs: pathlib.html#pathlib.Path.symlink_to"},
    {"hardlink_to", "creates links", place::anywhere, "docs: pathlib.html#pathlib.Path.hardlink_to"},
    {"link_to", "creates links", place::anywhere, "docs: pathlib.html#pathlib.Path.link_to (3.8-3.11)"},
    {"truncate", "truncates files", place::anywhere, "docs: io.html#io.IOBase.truncate, os.html#os.truncate"},
    // the raw file object under a file opened for reading: type(f.raw)('x', 'w') is io.FileIO
    {"raw", "reaches a raw file object, whose type opens files for writing", place::attribute, "docs: io.html#io.BufferedIOBase.raw"},
    {"detach", "reaches a raw file object, whose type opens files for writing", place::attribute, "docs: io.html#io.BufferedIOBase.detach"},
    // frames and code objects: every namespace of the running program
    {"f_globals", "reaches a frame's namespace", place::anywhere, "docs: reference/datamodel.html (frame objects)"},
    {"f_locals", "reaches a frame's namespace", place::anywhere, "docs: reference/datamodel.html (frame objects)"},
    {"f_builtins", "reaches a frame's namespace", place::anywhere, "docs: reference/datamodel.html (frame objects)"},
    {"f_back", "reaches the calling frame", place::anywhere, "docs: reference/datamodel.html (frame objects)"},
    {"f_code", "reaches a code object", place::anywhere, "docs: reference/datamodel.html (frame objects)"},
    {"tb_frame", "reaches a frame from a traceback", place::anywhere, "docs: reference/datamodel.html (traceback objects)"},
    {"gi_frame", "reaches a generator's frame", place::anywhere, "docs: inspect.html (generator attributes)"},
    {"gi_code", "reaches a code object", place::anywhere, "docs: inspect.html (generator attributes)"},
    {"cr_frame", "reaches a coroutine's frame", place::anywhere, "docs: inspect.html (coroutine attributes)"},
    {"cr_code", "reaches a code object", place::anywhere, "docs: inspect.html (coroutine attributes)"},
    {"ag_frame", "reaches a generator's frame", place::anywhere, "docs: inspect.html (async generator attributes)"},
    {"ag_code", "reaches a code object", place::anywhere, "docs: inspect.html (async generator attributes)"},
    {"co_code", "reaches a code object's bytecode", place::anywhere, "docs: reference/datamodel.html (code objects)"},
    {"_getframe", "reaches the running frames", place::anywhere, "docs: sys.html#sys._getframe"},
    // functions of safe modules that reach attributes by a computed name or run strings as code
    {"attrgetter", "reaches attributes by a computed name", place::anywhere, "docs: operator.html#operator.attrgetter"},
    {"methodcaller", "calls methods by a computed name", place::anywhere, "docs: operator.html#operator.methodcaller"},
    {"get_field", "reaches attributes by a computed name", place::anywhere, "docs: string.html#string.Formatter.get_field (returns the object)"},
    {"get_type_hints", "evaluates strings in type hints as code", place::anywhere, "docs: typing.html#typing.get_type_hints (eval() of string annotations)"},
    {"ForwardRef", "evaluates strings in type hints as code", place::anywhere, "3.11 source: typing.ForwardRef._evaluate calls eval()"},
    {"_eval_type", "evaluates strings in type hints as code", place::anywhere, "3.11 source: typing._eval_type"},
    {"_evaluate", "evaluates strings in type hints as code", place::anywhere, "3.11 source: typing.ForwardRef._evaluate"},
    {"singledispatch", "evaluates strings in type hints as code", place::anywhere, "3.11 source: functools.singledispatch.register calls get_type_hints"},
    {"singledispatchmethod", "evaluates strings in type hints as code", place::anywhere, "3.11 source: uses singledispatch"},
    {"_create_fn", "runs generated code", place::anywhere, "3.11 source: dataclasses._create_fn calls exec() on its text"},
    {"_get_command_stdout", "runs programs", place::anywhere, "3.11 source: uuid._get_command_stdout runs subprocess.Popen"},
    {"_getcategory", "imports modules named in a string", place::anywhere, "3.11 source: warnings._getcategory calls __import__"},
    {"_setoption", "imports modules named in a string", place::anywhere, "3.11 source: warnings._setoption calls _getcategory"},
    {"global_enum", "writes into another module's namespace", place::anywhere, "3.11 source: enum.global_enum updates sys.modules[cls.__module__].__dict__"},
    {"_convert_", "writes into another module's namespace", place::anywhere, "3.11 source: enum.EnumType._convert_"},
    // built-ins, as bare names (a method of the same name on an object is not the built-in)
    {"eval", "runs code built at run time", place::bare, "docs: functions.html#eval"},
    {"exec", "runs code built at run time", place::bare, "docs: functions.html#exec"},
    {"compile", "builds code at run time", place::bare, "docs: functions.html#compile"},
    {"getattr", "reaches attributes by a computed name", place::bare, "docs: functions.html#getattr"},
    {"setattr", "changes attributes by a computed name", place::bare, "docs: functions.html#setattr"},
    {"delattr", "deletes attributes by a computed name", place::bare, "docs: functions.html#delattr"},
    {"globals", "reaches a namespace as a dictionary", place::bare, "docs: functions.html#globals"},
    {"locals", "reaches a namespace as a dictionary", place::bare, "docs: functions.html#locals"},
    {"vars", "reaches a namespace as a dictionary", place::bare, "docs: functions.html#vars"},
    {"breakpoint", "starts the debugger, which runs any command", place::bare, "docs: functions.html#breakpoint"},
    {"help", "imports modules named in a string", place::bare, "docs: functions.html#help (pydoc imports the topic)"},
    // dunders that reach interpreter internals (any other dunder not allowed below also asks)
    {"__import__", "imports modules named at run time", place::anywhere, "docs: functions.html#import__"},
    {"__builtins__", "reaches interpreter internals", place::anywhere, "docs: builtins.html"},
    {"__subclasses__", "reaches interpreter internals", place::anywhere, "docs: stdtypes.html#class.__subclasses__"},
    {"__globals__", "reaches interpreter internals", place::anywhere, "docs: reference/datamodel.html (function.__globals__)"},
    {"__dict__", "reaches interpreter internals", place::anywhere, "docs: stdtypes.html#object.__dict__"},
    {"__class__", "reaches interpreter internals", place::anywhere, "docs: stdtypes.html#instance.__class__"},
    {"__bases__", "reaches interpreter internals", place::anywhere, "docs: stdtypes.html#class.__bases__"},
    {"__base__", "reaches interpreter internals", place::anywhere, "docs: reference/datamodel.html (type.__base__)"},
    {"__mro__", "reaches interpreter internals", place::anywhere, "docs: stdtypes.html#class.__mro__"},
    {"__code__", "reaches interpreter internals", place::anywhere, "docs: reference/datamodel.html (function.__code__)"},
    {"__closure__", "reaches interpreter internals", place::anywhere, "docs: reference/datamodel.html (function.__closure__)"},
    {"__defaults__", "reaches interpreter internals", place::anywhere, "docs: reference/datamodel.html (function.__defaults__)"},
    {"__kwdefaults__", "reaches interpreter internals", place::anywhere, "docs: reference/datamodel.html (function.__kwdefaults__)"},
    {"__self__", "reaches interpreter internals", place::anywhere, "docs: reference/datamodel.html (method.__self__; print.__self__ is builtins)"},
    {"__func__", "reaches interpreter internals", place::anywhere, "docs: reference/datamodel.html (method.__func__)"},
    {"__wrapped__", "reaches interpreter internals", place::anywhere, "docs: functools.html#functools.update_wrapper"},
    {"__getattribute__", "reaches interpreter internals", place::anywhere, "docs: reference/datamodel.html#object.__getattribute__"},
    {"__getattr__", "reaches interpreter internals", place::anywhere, "docs: reference/datamodel.html#object.__getattr__"},
    {"__setattr__", "reaches interpreter internals", place::anywhere, "docs: reference/datamodel.html#object.__setattr__"},
    {"__delattr__", "reaches interpreter internals", place::anywhere, "docs: reference/datamodel.html#object.__delattr__"},
    {"__loader__", "reaches interpreter internals", place::anywhere, "docs: reference/import.html#loader__"},
    {"__spec__", "reaches interpreter internals", place::anywhere, "docs: reference/import.html#spec__"},
    {"__reduce__", "reaches interpreter internals", place::anywhere, "docs: pickle.html#object.__reduce__ (calls any callable on copy)"},
    {"__reduce_ex__", "reaches interpreter internals", place::anywhere, "docs: pickle.html#object.__reduce_ex__"},
    {"__traceback__", "reaches interpreter internals", place::anywhere, "docs: exceptions.html#BaseException.__traceback__ (frames)"},
    {"__annotations__", "reaches interpreter internals", place::anywhere, "docs: howto/annotations.html (strings that typing evaluates)"},
});
// END denied_names

// BEGIN known_unsafe_modules
constexpr std::array k_unsafe_modules = std::to_array<unsafe_module>({
    {"asyncio", "runs programs and opens connections", "docs: asyncio-subprocess.html, asyncio-stream.html"},
    {"cProfile", "runs code given as a string", "docs: profile.html#profile.run"},
    {"profile", "runs code given as a string", "docs: profile.html#profile.run"},
    {"code", "runs code given as a string", "docs: code.html"},
    {"codeop", "builds code from strings", "docs: codeop.html"},
    {"concurrent", "starts threads or processes", "docs: concurrent.futures.html"},
    {"logging", "its configuration imports and calls any named factory", "docs: logging.config.html#logging.config.dictConfig ('()' factories)"},
    {"marshal", "loads code objects", "docs: marshal.html"},
    {"pdb", "runs any command typed to it", "docs: pdb.html"},
    {"pickle", "runs code while loading data", "docs: pickle.html (the warning at its top)"},
    {"pty", "runs programs", "docs: pty.html#pty.spawn"},
    {"runpy", "runs modules and files", "docs: runpy.html"},
    {"signal", "sends signals to processes", "docs: signal.html (pthread_kill, raise_signal)"},
    {"shelve", "runs code while loading pickled data", "docs: shelve.html"},
    {"tempfile", "creates and deletes files", "docs: tempfile.html; tempfile._os is os"},
    {"timeit", "runs code given as a string", "docs: timeit.html"},
    {"trace", "runs code given as a string", "docs: trace.html"},
    {"webbrowser", "runs programs", "docs: webbrowser.html"},
    {"zipimport", "imports code from archives", "docs: zipimport.html"},
    {"pkgutil", "imports modules named at run time", "docs: pkgutil.html#pkgutil.resolve_name"},
    {"pydoc", "imports modules named at run time", "docs: pydoc.html (pydoc.locate)"},
});
// END known_unsafe_modules

// BEGIN allowed_dunders
constexpr auto k_allowed_dunders = std::to_array<std::string_view>({
    // module and class metadata
    "__name__", "__main__", "__doc__", "__file__", "__qualname__", "__module__", "__all__", "__version__",
    "__slots__", "__debug__", "__future__", "__match_args__", "__post_init__",
    // the data model methods a class defines (docs: reference/datamodel.html#special-method-names)
    "__init__", "__new__", "__del__", "__repr__", "__str__", "__bytes__", "__format__", "__hash__", "__bool__",
    "__lt__", "__le__", "__eq__", "__ne__", "__gt__", "__ge__",
    "__len__", "__length_hint__", "__getitem__", "__setitem__", "__delitem__", "__missing__", "__iter__",
    "__reversed__", "__contains__", "__next__", "__call__", "__enter__", "__exit__",
    "__aenter__", "__aexit__", "__aiter__", "__anext__", "__await__",
    "__add__", "__sub__", "__mul__", "__matmul__", "__truediv__", "__floordiv__", "__mod__", "__divmod__",
    "__pow__", "__lshift__", "__rshift__", "__and__", "__xor__", "__or__",
    "__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rfloordiv__", "__rmod__", "__rpow__",
    "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__",
    "__neg__", "__pos__", "__abs__", "__invert__", "__complex__", "__int__", "__float__", "__index__",
    "__round__", "__trunc__", "__floor__", "__ceil__", "__copy__", "__deepcopy__", "__sizeof__",
    "__set_name__", "__class_getitem__", "__init_subclass__", "__get__", "__set__", "__delete__",
});
// END allowed_dunders
// clang-format on

}  // namespace

std::span<const safe_module> safe_modules() { return k_safe_modules; }
std::span<const denied_name> denied_names() { return k_denied_names; }
std::span<const unsafe_module> known_unsafe_modules() { return k_unsafe_modules; }
std::span<const std::string_view> allowed_dunders() { return k_allowed_dunders; }

}  // namespace warden::risk::python_lists
