// The python rules of the `auto` classifier (risk/risk.h; issue 22 part 1: `auto` by
// allow-list), over the tokens of risk/python_tokens.h: names inside string literals and
// comments never count. Code is low only when every import is a safe module and nothing else
// below asks; the lists are data (risk/python_allowlist.h), the argument-dependent rules are here:
//   imports        a module off the safe list asks: a hazard when it is a known danger
//                  (subprocess, asyncio, …), otherwise "not known to be safe".
//   names          a denied name anywhere outside strings, at any place of a dotted chain
//                  (`shutil.os.system`, `typing.sys.modules`); a dunder that is not allowed; a
//                  private name (`_x`) of an imported module (`uuid._get_command_stdout`).
//   open           open()/io.open() with a mode that is not a literal read mode ('r', 'rb',
//                  'rt'), `.open(…)` likewise (pathlib's mode is its first argument), and open
//                  passed around uncalled.
//   replace        `.replace(x)` with one argument, or any `.replace(…)` in code that names
//                  pathlib or its path classes: Path.replace moves a file over another
//                  (str.replace and bytes.replace take two, datetime.replace keywords: low).
//   strings        a string naming a denied dunder ('__builtins__'); a sensitive path.
//   encoding       a PEP 263 cookie naming an encoding that does not read ASCII as ASCII
//                  (`# coding: utf-7` turns `+AGk-mport os` into `import os`) asks unread.
//   sizes          risk/python_rules.h: large literal sizes.
// An infinite loop (`while True:`) is not judged: it only spends the call's own time limit.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "risk/python_allowlist.h"
#include "risk/python_rules.h"

namespace warden::risk::risk_detail {

namespace {

using kind = py_token_kind;

bool is_dunder(std::string_view n) { return n.size() > 4 && n.starts_with("__") && n.ends_with("__"); }

/// The entry of the denied list named exactly `n`; nullptr if none.
const python_lists::denied_name* denied_exactly(std::string_view n) {
  static const std::map<std::string_view, const python_lists::denied_name*> index = [] {
    std::map<std::string_view, const python_lists::denied_name*> m;
    for (const auto& d : python_lists::denied_names()) m.emplace(d.name, &d);
    return m;
  }();
  const auto it = index.find(n);
  return it == index.end() ? nullptr : it->second;
}

/// The denied entry for `n` (also `_os`, `__os` for an entry "os" that is not a bare built-in);
/// nullptr if none.
const python_lists::denied_name* denied(std::string_view n) {
  if (const auto* d = denied_exactly(n)) return d;
  const std::size_t u = n.find_first_not_of('_');
  if (u == 0 || u == std::string_view::npos || is_dunder(n)) return nullptr;
  const auto* d = denied_exactly(n.substr(u));
  return d != nullptr && d->where != python_lists::place::bare ? d : nullptr;
}

bool safe_module(std::string_view dotted) {
  const auto list = python_lists::safe_modules();
  return std::any_of(list.begin(), list.end(), [&](const auto& m) { return m.name == dotted; });
}

bool allowed_dunder(std::string_view n) {
  const auto list = python_lists::allowed_dunders();
  return std::find(list.begin(), list.end(), n) != list.end();
}

/// "imports socket, which is not known to be safe" or "imports asyncio (runs programs …)".
void unsafe_import(std::string_view dotted, python_findings& out) {
  const std::string_view root = dotted.substr(0, dotted.find('.'));
  const auto list = python_lists::known_unsafe_modules();
  const auto it = std::find_if(list.begin(), list.end(), [&](const auto& m) { return m.name == root; });
  if (it != list.end()) return out.add("imports " + std::string(dotted) + " (" + std::string(it->what) + ")");
  out.add("imports " + std::string(dotted) + ", which is not known to be safe", reason_kind::unknown);
}

/// Whether a dotted module name has a part the name rule reports (`os.path`, `shutil.os`).
bool has_denied_part(std::string_view dotted) {
  std::size_t start = 0;
  while (start <= dotted.size()) {
    const std::size_t dot = std::min(dotted.find('.', start), dotted.size());
    if (denied(dotted.substr(start, dot - start))) return true;
    start = dot + 1;
  }
  return false;
}

bool read_mode(std::string_view m) { return !m.empty() && m.find_first_not_of("rbtU") == std::string_view::npos; }

class analysis {
 public:
  analysis(std::vector<py_token> t, python_findings& out) : t_(std::move(t)), out_(out) {}
  void run();

 private:
  using range = std::pair<std::size_t, std::size_t>;
  bool is(std::size_t i, kind k, std::string_view text) const { return i < t_.size() && t_[i].kind == k && t_[i].text == text; }
  bool op(std::size_t i, std::string_view text) const { return is(i, kind::op, text); }
  bool name(std::size_t i) const { return i < t_.size() && t_[i].kind == kind::name; }
  bool after_dot(std::size_t i) const { return i > 0 && op(i - 1, "."); }
  bool statement_start(std::size_t i) const { return i == 0 || op(i - 1, ";") || op(i - 1, ":"); }
  bool definition(std::size_t i) const { return i > 0 && (is(i - 1, kind::name, "def") || is(i - 1, kind::name, "class")); }
  std::string chain(std::size_t i, std::size_t* end) const;
  std::size_t chain_root(std::size_t i) const;
  std::vector<range> call_args(std::size_t open) const;
  std::optional<std::string> literal(const range& a) const;

  void fold_strings();
  void depths();
  void imports();
  std::size_t import_stmt(std::size_t j);
  std::size_t from_stmt(std::size_t j);
  void from_names(const std::string& mod, std::size_t& j);
  void aliases();
  void names();
  void name_at(std::size_t i);
  void calls();
  void open_call(std::size_t i, bool method);
  bool uses_pathlib() const;
  bool buffered(const range& a) const;
  void strings();

  std::vector<py_token> t_;
  python_findings& out_;
  std::vector<bool> in_import_;  ///< tokens of import statements
  std::vector<int> depth_;       ///< bracket depth at each token
  std::vector<std::size_t> root_;  ///< the first token of the dotted chain each token ends
  std::set<std::string> bound_;  ///< local names bound to imported modules or their members
};

void analysis::run() {
  fold_strings();
  depths();
  in_import_.assign(t_.size(), false);
  imports();
  aliases();
  names();
  calls();
  strings();
  check_python_sizes(t_, out_);
}

/// Adjacent literals ("a" "b") and "a" + "b" become one token, as Python evaluates them.
void analysis::fold_strings() {
  std::vector<py_token> out;
  for (std::size_t i = 0; i < t_.size(); ++i) {
    const bool last_literal = !out.empty() && out.back().kind == kind::string && out.back().literal;
    if (t_[i].kind == kind::string && t_[i].literal && last_literal) {
      out.back().text += t_[i].text;
      continue;
    }
    if (op(i, "+") && i + 1 < t_.size() && t_[i + 1].kind == kind::string && t_[i + 1].literal && last_literal) {
      out.back().text += t_[++i].text;
      continue;
    }
    out.push_back(std::move(t_[i]));
  }
  t_ = std::move(out);
}

/// Bracket depths and chain roots, in one pass (so no rule walks back over a long chain).
void analysis::depths() {
  depth_.assign(t_.size(), 0);
  root_.resize(t_.size());
  int d = 0;
  for (std::size_t i = 0; i < t_.size(); ++i) {
    root_[i] = (name(i) && i >= 2 && op(i - 1, ".") && name(i - 2)) ? root_[i - 2] : i;
    if (op(i, ")") || op(i, "]") || op(i, "}")) d = std::max(0, d - 1);
    depth_[i] = d;
    if (op(i, "(") || op(i, "[") || op(i, "{")) ++d;
  }
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

/// The first name of the dotted chain that name token i belongs to (i itself when it starts one).
std::size_t analysis::chain_root(std::size_t i) const { return root_[i]; }

void analysis::imports() {
  for (std::size_t i = 0; i < t_.size(); ++i) {
    const bool keyword = is(i, kind::name, "import") || is(i, kind::name, "from");
    if (!keyword) continue;
    if (!statement_start(i)) {
      // `yield from x`, `raise E from e`: not imports; `import` anywhere else cannot be read
      if (is(i, kind::name, "import")) out_.add("has an import the classifier cannot read", reason_kind::unknown);
      continue;
    }
    const std::size_t end = std::min(is(i, kind::name, "import") ? import_stmt(i + 1) : from_stmt(i + 1), t_.size());
    for (std::size_t k = i; k < end; ++k) in_import_[k] = true;
    i = std::max(i, end == 0 ? 0 : end - 1);
  }
}

/// import a.b [as c], d …
std::size_t analysis::import_stmt(std::size_t j) {
  while (name(j)) {
    std::size_t end = j;
    const std::string dotted = chain(j, &end);
    if (is(end, kind::name, "as") && name(end + 1)) {
      bound_.insert(t_[end + 1].text);
      end += 2;
    } else {
      bound_.insert(dotted.substr(0, dotted.find('.')));
    }
    if (!has_denied_part(dotted) && !safe_module(dotted)) unsafe_import(dotted, out_);
    if (!op(end, ",")) return end;
    j = end + 1;
  }
  return j;
}

/// from m import x [as y], … | from m import (x, y) | from m import *
std::size_t analysis::from_stmt(std::size_t j) {
  std::string mod;
  while (op(j, ".")) mod += ".", ++j;
  if (name(j) && !is(j, kind::name, "import")) {
    std::size_t end = j;
    mod += chain(j, &end);
    j = end;
  }
  if (!is(j, kind::name, "import")) {
    out_.add("has an import the classifier cannot read", reason_kind::unknown);
    return j;
  }
  ++j;
  if (mod.starts_with(".")) out_.add("imports from a relative package, which is not known to be safe", reason_kind::unknown);
  from_names(mod, j);
  return j;
}

/// The names of a from-import starting at j (a submodule `from urllib import parse` counts as
/// importing urllib.parse); j ends after them.
void analysis::from_names(const std::string& mod, std::size_t& j) {
  const bool relative = mod.starts_with(".");
  const bool checked = relative || has_denied_part(mod);
  bool reported = false;
  if (op(j, "(")) ++j;
  while (j < t_.size() && !op(j, ";")) {
    if (name(j)) {
      const std::string& n = t_[j].text;
      const bool renamed = is(j + 1, kind::name, "as") && name(j + 2);
      bound_.insert(renamed ? t_[j + 2].text : n);
      if (!checked && !safe_module(mod) && !safe_module(mod + "." + n) && !reported) {
        unsafe_import(mod, out_);
        reported = true;
      }
      if (n.starts_with("_") && !is_dunder(n) && !denied(n))
        out_.add("imports the private name " + n + " from " + mod, reason_kind::unknown);
      if (renamed) j += 2;
    }
    ++j;
  }
}

/// x = json / x = json.decoder: later x._private resolves like json._private.
void analysis::aliases() {
  for (std::size_t i = 0; i + 2 < t_.size(); ++i) {
    if (!name(i) || !op(i + 1, "=") || op(i + 2, "=") || !name(i + 2) || after_dot(i)) continue;
    if (bound_.count(t_[i + 2].text) > 0) bound_.insert(t_[i].text);
  }
}

void analysis::names() {
  for (std::size_t i = 0; i < t_.size(); ++i)
    if (name(i)) name_at(i);
}

void analysis::name_at(std::size_t i) {
  const std::string& n = t_[i].text;
  if (std::any_of(n.begin(), n.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; }))
    out_.add("uses a non-ASCII identifier");
  if (definition(i)) return;  // def touch(self): a definition reaches nothing by itself
  const bool keyword_arg = depth_[i] > 0 && op(i + 1, "=") && !op(i + 2, "=") && !after_dot(i);
  if (keyword_arg) return;  // f(mode='r'): the name of a parameter
  if (const auto* d = denied(n)) {
    using python_lists::place;
    if (d->where == place::attribute && !after_dot(i)) return;  // a variable named raw
    const bool bare = d->where == place::bare;
    // model.eval() is someone's method. An import of the same name does not help: it may sit in
    // another scope (`if False: from json import loads as eval`) while the built-in is called here.
    if (bare && after_dot(i)) return;
    if (bare) return out_.add((op(i + 1, "(") ? "calls " : "uses ") + n + " (" + std::string(d->what) + ")");
    if (is_dunder(n)) return out_.add("uses " + n + " (" + std::string(d->what) + ")");
    return out_.add("uses the name " + n + " (" + std::string(d->what) + ")");
  }
  if (is_dunder(n)) {
    if (!allowed_dunder(n)) out_.add("uses " + n + ", which is not known to be safe", reason_kind::unknown);
    return;
  }
  if (!n.starts_with("_") || !after_dot(i) || in_import_[i]) return;
  const std::size_t root = chain_root(i);
  if (!after_dot(root) && bound_.count(t_[root].text) > 0)
    out_.add("uses " + n + ", a private name of " + t_[root].text, reason_kind::unknown);
}

/// Top-level argument token ranges [first, last) of the call whose '(' is at `open`.
std::vector<analysis::range> analysis::call_args(std::size_t open) const {
  std::vector<range> args;
  int depth = 0;
  std::size_t start = open + 1;
  for (std::size_t j = open + 1; j < t_.size(); ++j) {
    const bool opener = op(j, "(") || op(j, "[") || op(j, "{");
    const bool close = op(j, ")") || op(j, "]") || op(j, "}");
    if (opener) ++depth;
    if ((close && depth == 0) || (op(j, ",") && depth == 0)) {
      if (j > start) args.emplace_back(start, j);
      start = j + 1;
      if (close) break;
      continue;
    }
    if (close) --depth;
  }
  return args;
}

std::optional<std::string> analysis::literal(const range& a) const {
  if (a.second != a.first + 1 || t_[a.first].kind != kind::string || !t_[a.first].literal) return std::nullopt;
  return t_[a.first].text;
}

/// Whether the code names pathlib or one of its path classes: then any `.replace(…)` may be
/// Path.replace, also called unbound as Path.replace(p, target) or on type(p).
bool analysis::uses_pathlib() const {
  static constexpr std::string_view names[] = {"pathlib", "Path", "PosixPath", "PurePath", "PurePosixPath", "WindowsPath", "PureWindowsPath"};
  return std::any_of(t_.begin(), t_.end(), [](const py_token& t) {
    return t.kind == kind::name && std::find(std::begin(names), std::end(names), t.text) != std::end(names);
  });
}

void analysis::calls() {
  const bool pathlib = uses_pathlib();
  for (std::size_t i = 0; i < t_.size(); ++i) {
    if (is(i, kind::name, "open") && in_import_[i] && is(i + 1, kind::name, "as"))
      out_.add("imports open under another name (its mode cannot be checked)");
    if (!name(i) || in_import_[i] || definition(i)) continue;
    const std::string& n = t_[i].text;
    const bool called = op(i + 1, "(");
    if (n == "open" && !called) {
      out_.add("passes open around (its mode cannot be checked)");
    } else if (n == "open") {
      const std::size_t root = chain_root(i);
      const bool io_open = root + 2 == i && (t_[root].text == "io" || t_[root].text == "_io");
      open_call(i, after_dot(i) && !io_open);
    } else if (n == "replace" && called && after_dot(i)) {
      const auto args = call_args(i + 1);
      const bool one = args.size() == 1 && !op(args[0].first, "*") && !(name(args[0].first) && op(args[0].first + 1, "="));
      if (one || pathlib) out_.add("may move a file over another (pathlib's replace)");
    }
  }
}

/// Whether the tokens of `a` are a literal buffering size other than 0 (unbuffered binary files
/// are io.FileIO objects, whose type opens files for writing).
bool analysis::buffered(const range& a) const {
  std::size_t k = a.first;
  if (op(k, "-")) ++k;
  return k + 1 == a.second && t_[k].kind == kind::number && t_[k].text.find_first_not_of("0_") != std::string::npos;
}

/// open(file, mode, buffering) and io.open(…): the mode is the second argument; a method
/// `.open(mode, buffering)` (pathlib) takes it first. Only a literal read mode is low.
void analysis::open_call(std::size_t i, bool method) {
  const auto args = call_args(i + 1);
  const std::size_t mode_at = method ? 0 : 1;
  std::size_t positional = 0;
  for (const range& a : args) {
    if (op(a.first, "*")) return out_.add("opens a file with arguments computed at run time");
    const bool keyword = name(a.first) && op(a.first + 1, "=");
    const std::size_t at = keyword ? 99 : positional++;
    const bool buffering = keyword ? t_[a.first].text == "buffering" : at == mode_at + 1;
    if (buffering && !buffered(keyword ? range{a.first + 2, a.second} : a))
      return out_.add("opens a file unbuffered, as a raw file object whose type opens files for writing");
    if (keyword && t_[a.first].text != "mode") continue;
    const bool is_mode = keyword || at == mode_at;
    if (!is_mode) continue;
    const auto m = literal(keyword ? range{a.first + 2, a.second} : a);
    if (!m) return out_.add("opens a file in a mode computed at run time");
    if (read_mode(*m)) continue;
    if (m->find_first_not_of("rwxabtU+") == std::string::npos) return out_.add("opens a file for writing (mode '" + *m + "')");
    return out_.add("opens a file in a mode not known to be read-only ('" + shorten(*m) + "')");
  }
}

/// String literals naming interpreter internals ('__builtins__'), and sensitive paths.
void analysis::strings() {
  for (const py_token& tok : t_) {
    if (tok.kind != kind::string || !tok.literal) continue;
    if (is_dunder(tok.text) && (denied(tok.text) || !allowed_dunder(tok.text)))
      out_.add("names " + shorten(tok.text) + " in a string (reaches interpreter internals)");
    if (tok.text.find_first_of(" \t\n") != std::string::npos) continue;  // prose, not a path
    if (const auto r = sensitive_path(tok.text)) out_.add(*r);
  }
}

/// The encoding a PEP 263 cookie on the first two lines declares ("# -*- coding: utf-7 -*-");
/// empty when none. Python decodes a source file with it before reading a single token.
std::string coding_cookie(std::string_view code) {
  for (int line = 0; line < 2 && !code.empty(); ++line) {
    const std::size_t end = std::min(code.find_first_of("\r\n"), code.size());
    const std::string_view text = code.substr(0, end);
    code.remove_prefix(std::min(code.size(), end + 1));
    const std::size_t hash = text.find_first_not_of(" \t\f");
    if (hash == std::string_view::npos || text[hash] != '#') continue;  // Python reads the cookie from a comment line only
    const std::size_t at = text.find("coding", hash);
    if (at == std::string_view::npos || at + 6 >= text.size() || (text[at + 6] != ':' && text[at + 6] != '=')) continue;
    std::size_t k = text.find_first_not_of(" \t", at + 7);
    std::string name;
    while (k < text.size() && (std::isalnum(static_cast<unsigned char>(text[k])) || text[k] == '-' || text[k] == '_' || text[k] == '.'))
      name += static_cast<char>(std::tolower(static_cast<unsigned char>(text[k++])));
    return name;
  }
  return "";
}

/// Whether a declared source encoding reads ASCII text as ASCII (utf-8, latin-1, ascii): then the
/// tokens seen here are the tokens Python sees. utf-7 or unicode_escape would not be.
bool plain_coding(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  static constexpr std::string_view plain[] = {"utf-8", "utf8", "utf-8-sig", "ascii", "us-ascii", "latin-1", "latin1",
                                               "iso-8859-1", "iso8859-1", "iso-latin-1", "l1"};
  return name.empty() || std::find(std::begin(plain), std::end(plain), name) != std::end(plain);
}

}  // namespace

void check_python(std::string_view code, findings& out, int depth) {
  (void)depth;  // the python rules no longer look inside eval/exec strings: calling them asks
  const bool control = std::any_of(code.begin(), code.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f') || u == 0x7f;
  });
  if (control) out.add("contains control characters");
  if (const std::string coding = coding_cookie(code); !plain_coding(coding))
    return out.add("declares the source encoding " + shorten(coding) + ", which hides what the code says");
  py_lex_result lex = lex_python(code);
  if (!lex.ok) return out.add("the code cannot be tokenized (" + lex.why + ")", reason_kind::unknown);
  // Python's parser refuses more than 200 nested brackets ("too many nested parentheses"); the
  // bound also keeps every rule here linear in the code's length.
  int depth_now = 0, deepest = 0;
  for (const py_token& t : lex.tokens) {
    if (t.kind != py_token_kind::op || t.text.size() != 1) continue;
    if (t.text[0] == '(' || t.text[0] == '[' || t.text[0] == '{') deepest = std::max(deepest, ++depth_now);
    if (t.text[0] == ')' || t.text[0] == ']' || t.text[0] == '}') depth_now = std::max(0, depth_now - 1);
  }
  if (deepest > k_max_python_nesting) return out.add("nests brackets deeper than Python allows", reason_kind::unknown);
  python_findings capped(out);
  analysis(std::move(lex.tokens), capped).run();
}

}  // namespace warden::risk::risk_detail
