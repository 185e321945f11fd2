// The python rules of the `auto` classifier (risk/risk.h; reference §3.6), over the tokens of
// risk/python_tokens.h: names inside string literals and comments never count.
#include <algorithm>
#include <array>
#include <map>

#include "risk/python_tokens.h"
#include "risk/risk_detail.h"

namespace warden::risk::risk_detail {

namespace {

using kind = py_token_kind;
using names_t = std::vector<std::string_view>;

bool in(std::string_view w, const names_t& set) { return std::find(set.begin(), set.end(), w) != set.end(); }

/// Modules and attributes whose use is high risk, matched on the resolved dotted name
/// (the entry itself or anything under it).
const names_t& risky_names() {
  static const names_t names = {
      "subprocess", "socket", "socketserver", "ctypes", "cffi", "multiprocessing", "pty", "pexpect",
      "requests", "urllib.request", "urllib3", "http.client", "http.server", "aiohttp", "httpx",
      "ftplib", "smtplib", "telnetlib", "paramiko", "fabric", "importlib", "imp", "runpy",
      "webbrowser", "xmlrpc", "websocket", "websockets", "pycurl", "builtins", "posix", "nt",
      "_posixsubprocess", "winreg", "_winapi", "asyncio.subprocess", "asyncio.create_subprocess_exec",
      "asyncio.create_subprocess_shell", "asyncio.open_connection", "asyncio.start_server",
      "sys.modules", "signal.pthread_kill", "shutil.rmtree", "shutil.move", "shutil.chown", "code.interact",
      "pkgutil.resolve_name", "pydoc.locate", "operator.methodcaller", "operator.attrgetter", "io.FileIO", "_io", "timeit", "code",
      "pickle", "_pickle", "marshal", "shelve", "_socket", "ssl", "wsgiref", "logging.handlers", "imaplib", "poplib", "nntplib",
      "tarfile", "zipfile", "pathlib.Path.home", "pathlib.Path.expanduser", "os", "posixpath.expanduser", "pkgutil", "pydoc"};
  return names;
}

/// os.<attr> that runs programs, deletes, kills or changes ownership/permissions/privilege.
bool risky_os_attr(std::string_view a) {
  static const names_t attrs = {
      "system", "popen", "posix_spawn", "posix_spawnp", "remove", "unlink", "rmdir", "removedirs",
      "kill", "killpg", "fork", "forkpty", "setuid", "seteuid", "setgid", "setegid", "setreuid",
      "setregid", "setresuid", "setresgid", "chmod", "lchmod", "fchmod", "chown", "lchown", "fchown",
      "rename", "renames", "replace", "truncate", "chroot", "mknod", "symlink", "link", "startfile"};
  return in(a, attrs) || a.starts_with("exec") || a.starts_with("spawn");
}

/// The risky entry `dotted` falls under ("subprocess", "os.system"); "" when none.
bool safe_os(std::string_view dotted) {
  static const names_t safe = {"os.path", "os.getcwd", "os.listdir", "os.environ.get", "os.sep", "os.linesep", "os.name", "os.getenv", "os.curdir", "os.pardir", "os.extsep", "os.pathsep", "os.cpu_count", "os.getpid"};
  return std::any_of(safe.begin(), safe.end(), [&](std::string_view s) { return dotted == s || (dotted.starts_with(s) && dotted[s.size()] == '.'); });
}

std::string risky_match(std::string_view dotted) {
  if (dotted.starts_with("os.") && safe_os(dotted)) return "";
  if (dotted.starts_with("os.")) {
    const std::string_view attr = dotted.substr(3, dotted.find('.', 3) - 3);
    if (risky_os_attr(attr)) return "os." + std::string(attr);
  }
  for (const std::string_view r : risky_names())
    if (dotted == r || (dotted.starts_with(r) && dotted[r.size()] == '.')) return std::string(r);
  return "";
}

bool is_internal(std::string_view name) {
  return in(name, {"__builtins__", "__subclasses__", "__globals__", "__code__", "__getattribute__", "__loader__", "__self__", "__spec__", "__reduce__", "__reduce_ex__", "__class__", "__base__", "__bases__", "__mro__", "__dict__", "__import__", "__func__", "__closure__", "__wrapped__"});
}

class analysis {
 public:
  analysis(std::vector<py_token> t, findings& out, int depth) : t_(std::move(t)), out_(out), depth_(depth) {}
  void run();

 private:
  bool is(std::size_t i, kind k, std::string_view text) const {
    return i < t_.size() && t_[i].kind == k && t_[i].text == text;
  }
  bool op(std::size_t i, std::string_view text) const { return is(i, kind::op, text); }
  bool name(std::size_t i) const { return i < t_.size() && t_[i].kind == kind::name; }
  bool statement_start(std::size_t i) const { return i == 0 || op(i - 1, ";") || op(i - 1, ":"); }
  std::string chain(std::size_t i, std::size_t* end) const;
  std::string resolve(const std::string& dotted) const;
  std::size_t module_of(std::size_t j, std::string& dotted) const;
  std::vector<std::pair<std::size_t, std::size_t>> call_args(std::size_t open) const;
  std::optional<std::string> literal_arg(const std::pair<std::size_t, std::size_t>& a) const;
  bool module_like(const std::string& dotted) const;

  void fold_strings();
  void imports();
  std::size_t import_stmt(std::size_t j);
  std::size_t from_stmt(std::size_t j);
  void module_import(const std::string& dotted);
  void aliases();
  void references();
  void calls();
  void call(const std::string& callee, std::size_t open);
  void code_call(const std::string& callee, std::size_t open);
  void getattr_call(std::size_t open);
  void open_call(std::size_t open);
  void path_call(std::size_t open);
  void literals();

  std::vector<py_token> t_;
  findings& out_;
  int depth_;
  std::map<std::string, std::string> alias_;  ///< local name → dotted name it stands for
  std::vector<bool> in_import_;               ///< tokens of import statements
  bool decoder_ = false;                      ///< the code decodes data (b64decode, marshal.loads, …)
};

void analysis::run() {
  fold_strings();
  in_import_.assign(t_.size(), false);
  imports();
  aliases();
  for (const py_token& tok : t_) {
    if (tok.kind != kind::name) continue;
    if (std::any_of(tok.text.begin(), tok.text.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; }))
      out_.add("uses a non-ASCII identifier");
    if (is_internal(tok.text)) out_.add("reaches interpreter internals (" + tok.text + ")");
    if (in(tok.text, {"extractall", "create_server", "open_connection", "start_server", "expanduser", "methodcaller", "attrgetter", "resolve_name", "FileIO"}))
      out_.add("uses " + tok.text + ", which runs, reaches or writes anything");
    if (in(tok.text, {"b64decode", "b32decode", "b16decode", "a85decode", "b85decode", "urlsafe_b64decode", "standard_b64decode",
                      "decodebytes", "unhexlify", "a2b_base64", "a2b_hex", "fromhex", "decompress", "loads", "decode"}))
      decoder_ = true;
  }
  references();
  calls();
  literals();
}

/// Adjacent literals ("a" "b") and "a" + "b" become one token, as Python evaluates them.
void analysis::fold_strings() {
  std::vector<py_token> out;
  for (std::size_t i = 0; i < t_.size(); ++i) {
    const bool str = t_[i].kind == kind::string;
    if (str && !out.empty() && out.back().kind == kind::string && out.back().literal && t_[i].literal) {
      out.back().text += t_[i].text;
      continue;
    }
    const bool plus = op(i, "+") && i + 1 < t_.size() && t_[i + 1].kind == kind::string && t_[i + 1].literal &&
                      !out.empty() && out.back().kind == kind::string && out.back().literal;
    if (plus) {
      out.back().text += t_[++i].text;
      continue;
    }
    out.push_back(std::move(t_[i]));
  }
  t_ = std::move(out);
}

/// The dotted name NAME(.NAME)* starting at i; *end is the index after it.
std::string analysis::chain(std::size_t i, std::size_t* end) const {
  std::string d = t_[i].text;
  std::size_t j = i + 1;
  while (op(j, ".") && name(j + 1)) {
    d += "." + t_[j + 1].text;
    j += 2;
  }
  if (end) *end = j;
  return d;
}

std::string analysis::resolve(const std::string& dotted) const {
  const std::size_t dot = dotted.find('.');
  const auto it = alias_.find(dotted.substr(0, dot));
  if (it == alias_.end()) return dotted;
  return dot == std::string::npos ? it->second : it->second + dotted.substr(dot);
}

bool analysis::module_like(const std::string& dotted) const {
  static const names_t modules = {"os", "sys", "subprocess", "shutil", "builtins", "__builtins__", "socket", "importlib", "posix", "nt", "pathlib", "ctypes", "signal", "io"};
  const std::string root = dotted.substr(0, dotted.find('.'));
  return alias_.count(root) > 0 || in(root, modules);
}

void analysis::imports() {
  for (std::size_t i = 0; i < t_.size(); ++i) {
    if (!statement_start(i)) continue;
    std::size_t end = i;
    if (is(i, kind::name, "import")) end = import_stmt(i + 1);
    else if (is(i, kind::name, "from")) end = from_stmt(i + 1);
    for (std::size_t k = i; k < end && k < t_.size(); ++k) in_import_[k] = true;
  }
}

void analysis::module_import(const std::string& dotted) {
  if (dotted == "os" || dotted == "os.path" || (dotted.starts_with("os.") && safe_os(dotted))) return;
  const std::string hit = risky_match(dotted);
  if (!hit.empty()) out_.add("imports " + hit);
}

/// import a.b [as c], d …
std::size_t analysis::import_stmt(std::size_t j) {
  while (name(j)) {
    std::size_t end = j;
    const std::string dotted = chain(j, &end);
    if (is(end, kind::name, "as") && name(end + 1)) {
      alias_[t_[end + 1].text] = dotted;
      end += 2;
    } else {
      const std::string root = dotted.substr(0, dotted.find('.'));
      alias_[root] = root;
    }
    module_import(dotted);
    if (!op(end, ",")) return end;
    j = end + 1;
  }
  return j;
}

/// The module of a from-import starting at j (leading dots kept); returns the index after it.
std::size_t analysis::module_of(std::size_t j, std::string& dotted) const {
  while (op(j, ".")) dotted += ".", ++j;
  if (name(j) && !is(j, kind::name, "import")) {
    std::size_t end = j;
    dotted += chain(j, &end);
    j = end;
  }
  return j;
}

/// from m import x [as y], … | from m import (x, y) | from m import *
std::size_t analysis::from_stmt(std::size_t j) {
  std::string mod;
  j = module_of(j, mod);
  if (!is(j, kind::name, "import")) return j;
  module_import(mod);
  ++j;
  if (op(j, "(")) ++j;
  while (j < t_.size() && !op(j, ";")) {
    if (op(j, "*")) {
      if (in(mod, {"os", "posix", "nt", "shutil", "subprocess", "builtins"})) out_.add("imports everything from " + mod);
    } else if (name(j)) {
      const std::string full = mod + "." + t_[j].text;
      const bool renamed = is(j + 1, kind::name, "as") && name(j + 2);
      alias_[renamed ? t_[j + 2].text : t_[j].text] = full;
      module_import(full);
      if (renamed) j += 2;
    }
    ++j;
  }
  return j;
}

/// x = os / x = os.path: later x.… resolves like os.….
void analysis::aliases() {
  for (std::size_t i = 0; i + 2 < t_.size(); ++i) {
    if (!name(i) || !op(i + 1, "=") || !name(i + 2) || (i > 0 && op(i - 1, "."))) continue;
    std::size_t end = 0;
    const std::string rhs = chain(i + 2, &end);
    if (end < t_.size() && !op(end, ";") && !op(end, ",") && !op(end, ")")) continue;
    if (module_like(rhs) || is_internal(rhs) || in(rhs, {"eval", "exec", "compile", "getattr", "open"})) alias_[t_[i].text] = resolve(rhs);
  }
}

void analysis::references() {
  for (std::size_t i = 0; i < t_.size(); ++i) {
    if (!name(i) || in_import_[i] || (i > 0 && op(i - 1, "."))) continue;
    std::size_t end = i;
    const std::string dotted = chain(i, &end);
    const std::string full = resolve(dotted);
    const std::string hit = risky_match(full);
    if (!hit.empty()) out_.add("uses " + hit);
    if (full.find(".__dict__") != std::string::npos && module_like(full)) out_.add("reads a module's namespace (__dict__)");
    if (in(full, {"getattr", "__import__", "extractall", "create_server", "open_connection", "start_server", "methodcaller", "attrgetter", "resolve_name", "builtins", "__builtins__", "FileIO"}))
      out_.add("uses " + full + ", which can reach anything");
    const bool callable = in(full, {"eval", "exec", "compile", "__import__"});
    if (callable && !op(end, "(") && !(i > 0 && is(i - 1, kind::name, "def"))) out_.add("passes " + full + " around without calling it");
  }
}

/// Top-level argument token ranges [first, last) of the call whose '(' is at `open`.
std::vector<std::pair<std::size_t, std::size_t>> analysis::call_args(std::size_t open) const {
  std::vector<std::pair<std::size_t, std::size_t>> args;
  int depth = 0;
  std::size_t start = open + 1;
  for (std::size_t j = open + 1; j < t_.size(); ++j) {
    const std::string_view x = t_[j].kind == kind::op ? std::string_view(t_[j].text) : std::string_view();
    if (x == "(" || x == "[" || x == "{") ++depth;
    const bool close = x == ")" || x == "]" || x == "}";
    if ((close && depth == 0) || (x == "," && depth == 0)) {
      if (j > start) args.emplace_back(start, j);
      start = j + 1;
      if (close) break;
      continue;
    }
    if (close) --depth;
  }
  return args;
}

std::optional<std::string> analysis::literal_arg(const std::pair<std::size_t, std::size_t>& a) const {
  if (a.second != a.first + 1 || t_[a.first].kind != kind::string || !t_[a.first].literal) return std::nullopt;
  return t_[a.first].text;
}

void analysis::calls() {
  for (std::size_t i = 0; i < t_.size(); ++i) {
    if (!name(i) || in_import_[i] || (i > 0 && (op(i - 1, ".") || is(i - 1, kind::name, "def")))) continue;
    std::size_t end = i;
    const std::string full = resolve(chain(i, &end));
    if (op(end, "(")) call(full, end);
  }
}

void analysis::call(const std::string& callee, std::size_t open) {
  if (in(callee, {"eval", "exec", "compile", "builtins.eval", "builtins.exec", "builtins.compile", "__import__", "importlib.import_module"}))
    code_call(callee, open);
  else if (callee == "getattr" || callee == "builtins.getattr") getattr_call(open);
  else if (in(callee, {"open", "io.open", "codecs.open", "builtins.open"})) open_call(open);
  else if (callee.starts_with("shutil.copy")) {
    for (const auto& a : call_args(open))
      if (const auto v = literal_arg(a); v && outside_writable(*v)) out_.add("copies to or from " + shorten(*v) + " outside the workspace");
  } else if (in(callee, {"Path", "pathlib.Path", "pathlib.PosixPath", "pathlib.PurePath", "pathlib.PurePosixPath"})) path_call(open);
  else if (callee == "vars" || callee == "dir") {
    const auto args = call_args(open);
    if (!args.empty() && name(args[0].first) && module_like(chain(args[0].first, nullptr))) out_.add("reads a module's namespace (" + callee + ")");
  }
}

/// eval/exec/compile/__import__: a literal argument is inspected, anything else is high.
void analysis::code_call(const std::string& callee, std::size_t open) {
  const auto args = call_args(open);
  if (args.empty()) return;
  const auto text = literal_arg(args[0]);
  const bool import = callee == "__import__" || callee == "importlib.import_module";
  if (import) {
    if (!text) return out_.add("imports a module named at run time");
    if (module_like(*text) || !risky_match(*text).empty()) out_.add("imports " + *text + " dynamically");
    return;
  }
  if (!text) return out_.add(decoder_ ? "decoded payload cannot be inspected" : "runs code computed at run time (" + callee + ")");
  if (depth_ + 1 > k_max_depth) return out_.add("nesting is too deep to inspect");
  check_python(*text, out_, depth_ + 1);
}

/// getattr(module, "name") is module.name; getattr(module, computed) is high.
void analysis::getattr_call(std::size_t open) {
  const auto args = call_args(open);
  if (args.size() < 2 || !name(args[0].first)) return;
  std::size_t end = 0;
  const std::string target = resolve(chain(args[0].first, &end));
  if (end != args[0].second) return;
  const auto attr = literal_arg(args[1]);
  if (attr) {
    const std::string hit = risky_match(target + "." + *attr);
    if (!hit.empty()) out_.add("uses " + hit);
    if (is_internal(*attr)) out_.add("reaches interpreter internals (" + *attr + ")");
  } else if (module_like(target)) {
    out_.add("getattr with a computed name on " + target);
  }
}

/// open("literal", mode): a write outside /workspace and /tmp is high.
void analysis::open_call(std::size_t open) {
  const auto args = call_args(open);
  if (args.empty()) return;
  const bool file_kw = name(args[0].first) && op(args[0].first + 1, "=");
  if (file_kw || std::any_of(args.begin(), args.end(), [&](const auto& a) { return is(a.first, kind::name, "file") && op(a.first + 1, "="); }))
    return out_.add("opens a file through keyword arguments");
  const auto path = literal_arg(args[0]);
  std::optional<std::string> mode = std::string("r");
  bool computed_mode = false;
  for (std::size_t k = 1; k < args.size(); ++k) {
    const bool keyword = name(args[k].first) && op(args[k].first + 1, "=");
    if (keyword && t_[args[k].first].text != "mode") continue;
    if (!keyword && k != 1) continue;
    mode = literal_arg(keyword ? std::pair{args[k].first + 2, args[k].second} : args[k]);
    computed_mode = !mode;
  }
  const bool writes = computed_mode || (mode && mode->find_first_of("wax+") != std::string::npos);
  if (writes && !path) return out_.add("writes a file whose path is computed");
  if (!path) return;
  if (writes && outside_writable(*path)) out_.add("writes " + shorten(*path) + " outside the workspace");
}

/// Path("literal").unlink()/rmdir()/write_text()/…: a change outside /workspace and /tmp is high.
void analysis::path_call(std::size_t open) {
  const auto args = call_args(open);
  if (args.empty()) return;
  const auto path = literal_arg(args[0]);
  std::size_t close = args[0].second;
  while (close < t_.size() && !op(close, ")")) ++close;
  if (!path || !op(close + 1, ".") || !name(close + 2)) return;
  static const names_t changes = {"open", "unlink", "rmdir", "write_text", "write_bytes", "touch", "mkdir", "rename", "replace", "chmod", "lchmod", "symlink_to", "hardlink_to"};
  const std::string& method = t_[close + 2].text;
  if (in(method, changes) && outside_writable(*path)) out_.add("changes " + shorten(*path) + " outside the workspace (Path." + method + ")");
}

/// String literals that are sensitive paths or `..` escapes, or name interpreter internals.
void analysis::literals() {
  for (const py_token& tok : t_) {
    if (tok.kind != kind::string) continue;
    if (is_internal(tok.text) || tok.text == "__import__") out_.add("reaches interpreter internals (" + tok.text + ")");
    if (tok.text.find_first_of(" \t\n") != std::string::npos) continue;  // prose, not a path
    if (const auto r = sensitive_path(tok.text)) out_.add(*r);
  }
}

}  // namespace

void check_python(std::string_view code, findings& out, int depth) {
  const bool control = std::any_of(code.begin(), code.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f') || u == 0x7f;
  });
  if (control) out.add("contains control characters");
  py_lex_result lex = lex_python(code);
  if (!lex.ok) return out.add("the code cannot be tokenized (" + lex.why + ")");
  analysis(std::move(lex.tokens), out, depth).run();
}

}  // namespace warden::risk::risk_detail
