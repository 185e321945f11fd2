// The allow-list judge of one simple command (risk/shell_allow.h) against the read-only list
// (risk/shell_allowlist.h).
#include "risk/shell_allow.h"

#include <algorithm>
#include <cctype>

#include "risk/shell_allowlist.h"

namespace warden::risk::risk_detail {

namespace {

namespace al = shell_allowlist;
using argv_t = std::vector<std::string>;
constexpr reason_kind k_unknown = reason_kind::unknown;
constexpr reason_kind k_hazard = reason_kind::hazard;

bool has_dyn(std::string_view w) { return w.find('\0') != std::string_view::npos; }
bool is_option(std::string_view w) { return w.size() > 1 && w[0] == '-'; }
bool has_letter(std::string_view set, char c) { return set.find(c) != std::string_view::npos; }
std::string_view option_name(std::string_view w) { return w.substr(0, w.find('=')); }

bool listed(std::string_view names, std::string_view name) {
  std::size_t start = 0;
  while (start < names.size()) {
    const std::size_t end = std::min(names.find(' ', start), names.size());
    if (names.substr(start, end - start) == name) return true;
    start = end + 1;
  }
  return false;
}

std::string not_safe(std::string_view what) { return std::string(what) + " is not known to be safe"; }

void add_not_safe(findings& out, std::string_view prog, std::string_view what = {}) {
  out.add(not_safe(what.empty() ? std::string(prog) : std::string(prog) + " " + shorten(what)), k_unknown);
}

void add_computed(findings& out, std::string_view prog) {
  out.add(not_safe(std::string(prog) + " with an argument computed at run time"), k_unknown);
}

bool plain_name(std::string_view w) {
  if (w.empty() || !(std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '_')) return false;
  return std::all_of(w.begin(), w.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

bool integer_literal(std::string_view w) {
  if (!w.empty() && (w[0] == '-' || w[0] == '+')) w.remove_prefix(1);
  return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

/// The subscript of NAME[SUB]… (nullopt without one); `ok` says whether it is a literal index.
bool literal_subscript(std::string_view w) {
  std::size_t i = 0;
  while (i < w.size() && (std::isalnum(static_cast<unsigned char>(w[i])) || w[i] == '_')) ++i;
  if (i == 0 || i >= w.size() || w[i] != '[') return true;
  const std::size_t close = w.find(']', i);
  if (close == std::string_view::npos) return false;
  const std::string_view sub = w.substr(i + 1, close - i - 1);
  return sub == "@" || sub == "*" || integer_literal(sub);
}

const char* k_subscript = "an array subscript that is not a literal number is evaluated as arithmetic";

// ---- options ---------------------------------------------------------------------------------

/// Whether the entry's judgement depends on every word (an option computed at run time could be
/// a denied one, or an operand past the limit).
bool strict_words(const al::entry& e) {
  return !e.denied.empty() || !e.any_option || e.max_operands >= 0 || !e.subcommands.empty() || !e.operand_prefix.empty();
}

/// What an option word does to the walk over the words.
enum class step { next, takes_value, denied };

/// The denied long option that `name` (no "--") names: exactly, or as a unique abbreviation.
const al::denied_option* denied_long(const al::entry& e, std::string_view name) {
  const al::denied_option* prefix = nullptr;
  for (const al::denied_option& d : e.denied) {
    if (!d.option.starts_with("--") || name.empty()) continue;
    if (d.option.substr(2) == name) return &d;
    if (prefix == nullptr && d.option.substr(2).starts_with(name)) prefix = &d;
  }
  return prefix;
}

step long_option(const al::entry& e, std::string_view prog, std::string_view w, findings& out) {
  const std::string_view name = option_name(w).substr(2);
  if (const al::denied_option* d = denied_long(e, name)) {
    out.add(std::string(prog) + " " + std::string(d->option) + " " + std::string(d->why), k_hazard);
    return step::denied;
  }
  if (listed(e.long_valued, name)) return w.find('=') == std::string_view::npos ? step::takes_value : step::next;
  if (!e.any_option && !listed(e.long_flags, name)) add_not_safe(out, prog, option_name(w));
  return step::next;
}

/// A cluster of short options (-la, -n5, -k 2).
step short_options(const al::entry& e, std::string_view prog, std::string_view w, findings& out) {
  for (std::size_t k = 1; k < w.size(); ++k) {
    const char c = w[k];
    const auto denied = std::find_if(e.denied.begin(), e.denied.end(), [&](const al::denied_option& d) {
      return d.option.size() == 2 && d.option[0] == '-' && d.option[1] == c;
    });
    if (denied != e.denied.end()) {
      out.add(std::string(prog) + " " + std::string(denied->option) + " " + std::string(denied->why), k_hazard);
      return step::denied;
    }
    if (has_letter(e.optional, c)) return step::next;
    if (has_letter(e.valued, c)) return k + 1 == w.size() ? step::takes_value : step::next;
    if (!e.any_option && !has_letter(e.flags, c)) {
      add_not_safe(out, prog, std::string("-") + c);
      return step::next;
    }
  }
  return step::next;
}

void judge_operands(const al::entry& e, std::string_view prog, const argv_t& operands, findings& out) {
  if (e.max_operands >= 0 && operands.size() > static_cast<std::size_t>(e.max_operands)) {
    const std::string what = e.max_operands == 0 ? "with an operand" : "with more than " + std::to_string(e.max_operands) + " operand";
    add_not_safe(out, prog, what);
  }
  if (!e.subcommands.empty() && !operands.empty() && !listed(e.subcommands, operands[0])) add_not_safe(out, prog, operands[0]);
  if (!e.operand_prefix.empty())
    for (const std::string& o : operands)
      if (!o.starts_with(e.operand_prefix)) add_not_safe(out, prog, o);
}

void judge_options(const al::entry& e, const argv_t& a, findings& out) {
  const std::string& prog = a[0];
  const bool strict = strict_words(e);
  argv_t operands;
  bool ended = false;
  for (std::size_t j = 1; j < a.size(); ++j) {
    const std::string& w = a[j];
    if (has_dyn(w) && strict) return add_computed(out, prog);
    if (ended || !is_option(w) || has_dyn(w)) {
      operands.push_back(w);
    } else if (w == "--") {
      ended = true;
    } else {
      const step s = w.starts_with("--") ? long_option(e, prog, w, out) : short_options(e, prog, w, out);
      if (s == step::denied) return;  // the named danger says enough
      j += s == step::takes_value ? 1 : 0;
    }
  }
  judge_operands(e, prog, operands, out);
}

// ---- test, [[ ]], let, declare, unset, seq ----------------------------------------------------

void judge_text(const argv_t& a, findings& out) {
  if (a[0] == "printf" && a.size() > 1 && a[1].starts_with('\0'))
    out.add(not_safe("printf with a first word computed at run time"), k_unknown);
}

void judge_test(const argv_t& a, findings& out) {
  for (std::size_t j = 1; j < a.size(); ++j) {
    if (has_dyn(a[j])) return out.add(not_safe(a[0] + " with text computed at run time"), k_unknown);
    if ((a[j] == "-v" || a[j] == "-R") && j + 1 < a.size() && !plain_name(a[j + 1]))
      out.add(a[0] + " -v on an array element evaluates arithmetic", k_hazard);
  }
}

void judge_cond(const argv_t& a, findings& out) {
  static const char* const arith[] = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"};
  for (std::size_t j = 1; j + 1 < a.size(); ++j) {
    const bool op = std::any_of(std::begin(arith), std::end(arith), [&](const char* o) { return a[j] == o; });
    if (op && (!integer_literal(a[j - 1]) || !integer_literal(a[j + 1])))
      out.add("[[ " + a[j] + " evaluates arithmetic on text that is not a literal number", k_hazard);
    if ((a[j] == "-v" || a[j] == "-R") && !plain_name(a[j + 1])) out.add("[[ -v on an array element evaluates arithmetic", k_hazard);
  }
}

void judge_let(const argv_t& a, findings& out) {
  for (std::size_t j = 1; j < a.size(); ++j)
    if (!literal_arithmetic(a[j])) return out.add("let evaluates arithmetic on text that is not literal", k_hazard);
}

void judge_declare(const argv_t& a, findings& out) {
  for (std::size_t j = 1; j < a.size(); ++j) {
    const std::string& w = a[j];
    const std::size_t eq = w.find('=');
    if (w.find('\0') < eq) return add_computed(out, a[0]);
    if ((w[0] == '-' || w[0] == '+') && w.size() > 1 && eq == std::string::npos) {
      for (std::size_t k = 1; k < w.size(); ++k) {
        if (w[k] == 'i' && w[0] == '-') out.add(a[0] + " -i makes assignments arithmetic", k_hazard);
        else if (!has_letter("aAfFglprtuxn", w[k])) add_not_safe(out, a[0], std::string("-") + w[k]);
      }
      continue;
    }
    if (!literal_subscript(w)) out.add(k_subscript, k_hazard);
  }
}

void judge_unset(const argv_t& a, findings& out) {
  for (std::size_t j = 1; j < a.size(); ++j) {
    if (has_dyn(a[j])) return add_computed(out, a[0]);
    if (!is_option(a[j]) && !literal_subscript(a[j])) out.add(k_subscript, k_hazard);
  }
}

void judge_seq(const argv_t& a, findings& out) {
  std::vector<double> nums;
  for (std::size_t j = 1; j < a.size(); ++j) {
    const std::string& w = a[j];
    if (has_dyn(w)) return add_computed(out, "seq");
    if (w == "-f" || w == "-s" || w == "--format" || w == "--separator") {
      ++j;
      continue;
    }
    if (w == "-w" || w == "--equal-width" || w.starts_with("--format=") || w.starts_with("--separator=") || w.starts_with("-f") || w.starts_with("-s")) continue;
    char* end = nullptr;
    const double v = std::strtod(w.c_str(), &end);
    if (end == w.c_str() || *end != '\0') return add_not_safe(out, "seq", w);
    nums.push_back(v);
  }
  if (nums.empty() || nums.size() > 3) return;
  const double first = nums.size() > 1 ? nums[0] : 1, last = nums.back(), step = nums.size() == 3 ? nums[1] : 1;
  if (step == 0 || (last - first) / step + 1 > static_cast<double>(al::k_max_seq_count))
    out.add("seq prints more than " + std::to_string(al::k_max_seq_count) + " numbers", k_hazard);
}

// ---- python, shells, source ------------------------------------------------------------------

void judge_python(const argv_t& a, findings& out) {
  bool version = false;
  for (std::size_t j = 1; j < a.size(); ++j) {
    const std::string& w = a[j];
    if (has_dyn(w)) return add_computed(out, a[0]);
    if (w == "--version" || w == "-V" || w == "-VV") {
      version = true;
      continue;
    }
    if (!is_option(w) || w == "-") return out.add(a[0] + " runs a script file (" + shorten(w) + ")", k_unknown);
    for (std::size_t k = 1; k < w.size(); ++k) {
      if (w[k] == 'c') return;  // the code: judged by the Python rules (risk_shell.cpp)
      if (w[k] == 'm') return add_not_safe(out, a[0] + " -m", k + 1 < w.size() ? w.substr(k + 1) : (j + 1 < a.size() ? a[j + 1] : ""));
      if (!has_letter("BEIOqsSubRV", w[k])) return add_not_safe(out, a[0], std::string("-") + w[k]);
    }
  }
  if (!version) add_not_safe(out, a[0] + " without -c");
}

void judge_shell(const argv_t& a, findings& out) {
  bool dash_c = false;
  std::size_t j = 1;
  for (; j < a.size() && a[j].size() > 1 && (a[j][0] == '-' || a[j][0] == '+'); ++j) {
    const std::string& w = a[j];
    if (has_dyn(w)) return add_computed(out, a[0]);
    if (w == "--") break;
    if (w.starts_with("--")) {
      if (!listed("norc noprofile posix", w.substr(2))) add_not_safe(out, a[0], w);
      continue;
    }
    for (std::size_t k = 1; k < w.size(); ++k) {
      if (w[k] == 'c') dash_c = true;
      else if (w[k] == 'o' && j + 1 < a.size() && listed("pipefail errexit nounset xtrace noglob", a[j + 1])) ++j;
      else if (!has_letter("eluxvf", w[k])) return add_not_safe(out, a[0], std::string(1, w[0]) + w[k]);
    }
  }
  if (dash_c) return;  // the code after -c is parsed as nested commands and judged there
  if (j < a.size() && a[j] != "--") return out.add(a[0] + " runs a script file (" + shorten(a[j]) + ")", k_unknown);
  add_not_safe(out, a[0] + " without -c");
}

void judge_source(const argv_t& a, findings& out) {
  if (a.size() > 1) out.add("sources a script file (" + shorten(a[1]) + ")", k_unknown);
}

// ---- find ------------------------------------------------------------------------------------

void judge_find(const argv_t& a, findings& out) {
  static constexpr std::string_view zero =
      "-print -print0 -ls -prune -quit -true -false -empty -readable -writable -executable -nouser -nogroup -depth -xdev "
      "-mount -follow -noleaf -ignore_readdir_race -noignore_readdir_race -daystart -warn -nowarn -not -a -and -o -or ! ( ) ,";
  static constexpr std::string_view one =
      "-name -iname -path -ipath -wholename -iwholename -regex -iregex -regextype -type -xtype -size -newer -anewer "
      "-cnewer -mtime -mmin -atime -amin -ctime -cmin -used -perm -user -group -uid -gid -links -inum -samefile -lname "
      "-ilname -fstype -maxdepth -mindepth -printf -context";
  for (std::size_t j = 1; j < a.size(); ++j) {
    const std::string& w = a[j];
    if (has_dyn(w)) return add_computed(out, "find");
    if (listed("-exec -execdir -ok -okdir", w)) return out.add("find " + w + " runs programs", k_hazard);
    if (w == "-delete") return out.add("find -delete removes files", k_hazard);
    if (listed("-fprint -fprint0 -fprintf -fls", w)) return out.add("find " + w + " writes a file", k_hazard);
    const bool expression = w.starts_with("-") || w == "!" || w == "(" || w == ")" || w == ",";
    if (!expression || listed(zero, w) || listed("-H -L -P", w)) continue;
    if (listed(one, w) || (w.starts_with("-newer") && w.size() == 8) || w == "-D") {
      ++j;
      continue;
    }
    if (w.starts_with("-O") && integer_literal(w.substr(2))) continue;
    add_not_safe(out, "find", w);
  }
}

// ---- sed, awk ----------------------------------------------------------------------------------

void judge_sed(const argv_t& a, findings& out) {
  std::string script;
  bool have_script = false, ended = false;
  for (std::size_t j = 1; j < a.size(); ++j) {
    const std::string& w = a[j];
    if (has_dyn(w)) return add_computed(out, "sed");
    const auto add_script = [&](const std::string& s) {
      script += (have_script ? "\n" : "") + s;
      have_script = true;
    };
    if (ended || !is_option(w)) {
      if (!have_script) add_script(w);
      continue;
    }
    if (w == "--") {
      ended = true;
    } else if (w.starts_with("--in-place")) {
      out.add("sed -i edits files in place", k_hazard);
    } else if (w.starts_with("--expression")) {
      add_script(w.find('=') != std::string::npos ? w.substr(w.find('=') + 1) : (j + 1 < a.size() ? a[++j] : ""));
    } else if (w.starts_with("--")) {
      if (option_name(w) == "--line-length") j += w.find('=') == std::string::npos ? 1 : 0;
      else if (option_name(w) == "--file") add_not_safe(out, "sed --file");
      else if (!listed("quiet silent regexp-extended separate null-data unbuffered posix debug sandbox", w.substr(2)))
        add_not_safe(out, "sed", option_name(w));
    } else {
      for (std::size_t k = 1; k < w.size(); ++k) {
        if (w[k] == 'i') {
          out.add("sed -i edits files in place", k_hazard);
          break;
        }
        if (w[k] == 'e' || w[k] == 'l' || w[k] == 'f') {
          const std::string value = k + 1 < w.size() ? w.substr(k + 1) : (j + 1 < a.size() ? a[++j] : "");
          if (w[k] == 'e') add_script(value);
          if (w[k] == 'f') add_not_safe(out, "sed -f", value), have_script = true;
          break;
        }
        if (!has_letter("nErszu", w[k])) {
          add_not_safe(out, "sed", std::string("-") + w[k]);
          break;
        }
      }
    }
  }
  switch (judge_sed_script(script)) {
    case sed_verdict::safe: return;
    case sed_verdict::runs: return out.add("sed runs a command or writes a file (e/w)", k_hazard);
    case sed_verdict::unknown: return out.add(not_safe("sed script " + shorten(script)), k_unknown);
  }
}

/// What in an awk program may run a command or write a file: "" when nothing. Strings and regular
/// expressions are not skipped (a quote inside /…/ would hide what follows), so `|` or `>` in them
/// asks too.
std::string awk_danger(std::string_view p) {
  bool action = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '{') action = true;
    if (c == '|') {
      if (i + 1 < p.size() && p[i + 1] == '|') {
        ++i;
        continue;
      }
      return "|";
    }
    if (c == '>' && action) return ">";
    if (c == '@') return "@";
    const bool word_start = i == 0 || !(std::isalnum(static_cast<unsigned char>(p[i - 1])) || p[i - 1] == '_');
    if (word_start && p.substr(i, 6) == "system") return "system";
  }
  return "";
}

void judge_awk(const argv_t& a, findings& out) {
  std::vector<std::string> programs;
  bool ended = false, named = false;  // named: a program came from -e/--source, so operands are files
  for (std::size_t j = 1; j < a.size(); ++j) {
    const std::string& w = a[j];
    if (has_dyn(w)) return add_computed(out, a[0]);
    if (ended || !is_option(w)) {
      if (!named && programs.empty()) programs.push_back(w);
      ended = true;  // after the program: files and var=value
      continue;
    }
    const std::string_view name = option_name(w);
    if (w == "--") {
      ended = true;
    } else if (name == "--source" || w.starts_with("-e")) {
      const std::size_t cut = w.starts_with("-e") ? 2 : w.find('=') + 1;
      programs.push_back(cut > 0 && cut < w.size() ? w.substr(cut) : (j + 1 < a.size() ? a[++j] : ""));
      named = true;
    } else if (name == "--field-separator" || name == "--assign") {
      j += w.find('=') == std::string::npos ? 1 : 0;
    } else if (name == "--profile" || name == "--pretty-print" || w.starts_with("-o") || w.starts_with("-p")) {
      out.add(a[0] + " " + std::string(w.starts_with("--") ? name : w.substr(0, 2)) + " writes a file", k_hazard);
    } else if (w.starts_with("--")) {
      if (!listed("--posix --traditional --sandbox --characters-as-bytes --re-interval --lint", name)) add_not_safe(out, a[0], name);
    } else if (w[1] == 'F' || w[1] == 'v') {
      j += w.size() == 2 ? 1 : 0;
    } else if (!std::all_of(w.begin() + 1, w.end(), [](char c) { return has_letter("bcnNMOPrsStV", c); })) {
      add_not_safe(out, a[0], w.substr(0, 2));
    }
  }
  for (const std::string& p : programs) {
    const std::string what = awk_danger(p);
    if (!what.empty()) out.add(a[0] + " program may run a command or write a file (" + what + ")", k_hazard);
  }
}

// ---- git -------------------------------------------------------------------------------------

/// Options whose exact name is a git option although it abbreviates a denied one (--text is diff's
/// -a, not --textconv; --filter is rev-list's object filter, not cat-file's --filters).
bool exact_git_option(std::string_view name) { return name == "--text" || name == "--filter"; }

void git_denied_options(const std::string& sub, const argv_t& rest, findings& out) {
  for (const std::string& w : rest) {
    if (w == "--") return;
    if (sub == "grep" && w.starts_with("-O")) out.add("git grep -O runs a pager", k_hazard);
    if (!w.starts_with("--") || w.size() < 3) continue;
    const std::string_view name = option_name(w);
    if (exact_git_option(name)) continue;
    const auto& denied = al::git_denied();
    auto d = std::find_if(denied.begin(), denied.end(), [&](const al::denied_option& x) { return x.option == name; });
    if (d == denied.end()) d = std::find_if(denied.begin(), denied.end(), [&](const al::denied_option& x) { return x.option.starts_with(name); });
    if (d != denied.end()) out.add("git " + sub + " " + std::string(d->option) + " " + std::string(d->why), k_hazard);
  }
}

/// Whether every word of `rest` is one of `options` (exact, or NAME= for those ending in '='),
/// a cluster of `letters`, or (when `positional`) a non-option word.
bool only(const argv_t& rest, std::string_view options, std::string_view letters, bool positional, std::string* bad) {
  for (const std::string& w : rest) {
    const bool long_ok = w.starts_with("--") && (listed(options, w) || (w.find('=') != std::string::npos && listed(options, w.substr(0, w.find('=') + 1))));
    const bool short_ok = !w.starts_with("--") && is_option(w) && std::all_of(w.begin() + 1, w.end(), [&](char c) { return has_letter(letters, c); });
    if (long_ok || short_ok || (positional && !is_option(w)) || (listed(options, w) && is_option(w))) continue;
    *bad = w;
    return false;
  }
  return true;
}

bool git_shape_ok(al::git_shape shape, const argv_t& r, std::string* bad) {
  const auto has = [&](std::string_view set) { return std::any_of(r.begin(), r.end(), [&](const std::string& w) { return listed(set, option_name(w)); }); };
  static constexpr std::string_view listing =
      "--list --all --remotes --verbose --show-current --ignore-case --no-color --no-column --contains --no-contains "
      "--merged --no-merged --points-at --color --color= --column --column= --format= --sort= --abbrev= --no-abbrev";
  switch (shape) {
    case al::git_shape::any: return true;
    case al::git_shape::branch_list:
      return only(r, listing, "alrvi", has("-l --list --contains --no-contains --merged --no-merged --points-at"), bad);
    case al::git_shape::tag_list: return only(r, listing, "li0123456789n", has("-l --list"), bad);
    case al::git_shape::remote_list:
      if (!r.empty() && r[0] == "get-url") return only(argv_t(r.begin() + 1, r.end()), "--push --all", "", true, bad);
      return only(r, "--verbose", "v", false, bad);
    case al::git_shape::config_read: {
      static constexpr std::string_view writes = "--unset --unset-all --add --replace-all --rename-section --remove-section --edit -e";
      const auto w = std::find_if(r.begin(), r.end(), [](const std::string& x) { return listed(writes, option_name(x)); });
      if (w != r.end()) return *bad = *w, false;
      const bool reads = has("--get --get-all --get-regexp --get-urlmatch --list -l") || (!r.empty() && listed("get list", r[0]));
      if (!reads) *bad = r.empty() ? "" : r[0];
      return reads;
    }
    case al::git_shape::stash_list:
      if (!r.empty() && listed("list show", r[0])) return true;
      return *bad = r.empty() ? "" : r[0], false;
    case al::git_shape::reflog_show: {
      const auto p = std::find_if(r.begin(), r.end(), [](const std::string& x) { return !is_option(x); });
      if (p == r.end() || !listed("expire delete drop", *p)) return true;
      return *bad = *p, false;
    }
    case al::git_shape::worktree_list:
      if (!r.empty() && r[0] == "list") return true;
      return *bad = r.empty() ? "" : r[0], false;
  }
  return false;
}

void judge_git(const argv_t& a, findings& out) {
  std::size_t j = 1;
  for (; j < a.size() && is_option(a[j]); ++j) {
    if (has_dyn(a[j])) return add_computed(out, "git");
    if (listed(al::git_global_valued(), a[j])) ++j;
    else if (!listed(al::git_global_flags(), a[j])) return add_not_safe(out, "git", option_name(a[j]));
  }
  if (j >= a.size()) return;
  const std::string& sub = a[j];
  if (has_dyn(sub)) return add_computed(out, "git");
  const auto& subs = al::git_subcommands();
  const auto it = std::find_if(subs.begin(), subs.end(), [&](const al::git_subcommand& s) { return s.name == sub; });
  if (it == subs.end()) return add_not_safe(out, "git", sub);
  const argv_t rest(a.begin() + static_cast<std::ptrdiff_t>(j + 1), a.end());
  if (std::any_of(rest.begin(), rest.end(), [](const std::string& w) { return has_dyn(w); })) return add_computed(out, "git " + sub);
  git_denied_options(sub, rest, out);
  std::string bad;
  if (!git_shape_ok(it->shape, rest, &bad)) add_not_safe(out, "git " + sub, bad);
}

void judge(const al::entry& e, const argv_t& a, findings& out) {
  switch (e.how) {
    case al::check::options: return judge_options(e, a, out);
    case al::check::text: return judge_text(a, out);
    case al::check::find: return judge_find(a, out);
    case al::check::git: return judge_git(a, out);
    case al::check::sed: return judge_sed(a, out);
    case al::check::awk: return judge_awk(a, out);
    case al::check::test: return judge_test(a, out);
    case al::check::cond: return judge_cond(a, out);
    case al::check::let: return judge_let(a, out);
    case al::check::declare: return judge_declare(a, out);
    case al::check::unset: return judge_unset(a, out);
    case al::check::seq: return judge_seq(a, out);
    case al::check::python: return judge_python(a, out);
    case al::check::shell: return judge_shell(a, out);
    case al::check::source: return judge_source(a, out);
  }
}

}  // namespace

void check_allowed(const argv_t& a, std::string_view program_word, findings& out) {
  if (a.empty()) return;
  if (!al::system_program_path(program_word)) return add_not_safe(out, shorten(program_word));
  const al::entry* e = al::find(a[0]);
  if (e == nullptr) return add_not_safe(out, a[0]);
  judge(*e, a, out);
}

void check_allowed_wrappers(const argv_t& wrappers, const argv_t& prefix, findings& out) {
  for (const std::string& w : wrappers)
    if (!al::safe_wrapper(w) && w != "sudo" && w != "doas") add_not_safe(out, w);  // sudo/doas: a named danger already
  for (const std::string& w : prefix)
    if (w.find('/') != std::string::npos && al::safe_wrapper(program_name(w)) && !al::system_program_path(w)) add_not_safe(out, shorten(w));
  if (std::find(wrappers.begin(), wrappers.end(), "time") == wrappers.end()) return;
  for (const std::string& w : prefix)
    if (w == "-o" || w == "-a" || w.starts_with("--output") || w.starts_with("--append")) out.add("time -o writes a file", k_hazard);
}

}  // namespace warden::risk::risk_detail
