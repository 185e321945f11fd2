// Arithmetic contexts, resource shapes and the sed script parser of the allow-list half of the
// terminal rules (risk/shell_allow.h).
//
// Why arithmetic: bash evaluates an array subscript inside arithmetic by expanding it, so text
// like a[$(cmd)] runs cmd when it reaches (( )), $(( )), let, declare -i, [[ -eq ]], test -v or an
// indexed assignment, even from a single-quoted word or a variable's value (bash manual,
// 'Shell Arithmetic' and 'Arrays'). Only literal arithmetic is known to be safe.
#include <algorithm>
#include <cctype>

#include "risk/shell_allow.h"

namespace warden::risk::risk_detail {

namespace {

constexpr reason_kind k_hazard = reason_kind::hazard;

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

/// The body of a bracketed construct starting at `open` (the index just past the opener), up to
/// the matching `close`; npos when unbalanced.
std::size_t matching(std::string_view s, std::size_t open, char opener, char closer) {
  int depth = 0;
  for (std::size_t k = open; k < s.size(); ++k) {
    if (s[k] == '\\') {
      ++k;
    } else if (s[k] == opener) {
      ++depth;
    } else if (s[k] == closer) {
      if (depth == 0) return k;
      --depth;
    }
  }
  return std::string_view::npos;
}

/// A ${…} body: indirect ${!x}, @P prompt expansion, a subscript or an offset that is not literal.
void parameter_body(std::string_view body, findings& out) {
  if (body.starts_with("!")) return out.add("indirect expansion ${!...} can evaluate arithmetic", k_hazard);
  if (body.find("@P") != std::string_view::npos) out.add("uses ${...@P} prompt expansion", k_hazard);
  std::size_t i = 0;
  while (i < body.size() && name_char(body[i])) ++i;
  const std::size_t eq = body.find('=', i);
  if (i > 0 && (eq == i || (eq == i + 1 && body[i] == ':')))
    out.add("assigns " + std::string(body.substr(0, i)) + " inside ${...}", k_hazard);
  if (i < body.size() && body[i] == '[') {
    const std::size_t close = body.find(']', i);
    const std::string_view sub = body.substr(i + 1, close == std::string_view::npos ? std::string_view::npos : close - i - 1);
    if (sub != "@" && sub != "*" && !literal_arithmetic(sub)) out.add("an array subscript that is not a literal number is evaluated as arithmetic", k_hazard);
    i = close == std::string_view::npos ? body.size() : close + 1;
  }
  if (i + 1 < body.size() && body[i] == ':' && std::string_view("-=?+").find(body[i + 1]) == std::string_view::npos) {
    const std::string_view rest = body.substr(i + 1);
    const bool literal = std::all_of(rest.begin(), rest.end(), [](char c) { return is_digit(c) || c == ':' || c == ' ' || c == '-'; });
    if (!literal) out.add("a substring offset that is not a literal number is evaluated as arithmetic", k_hazard);
  }
}

/// |a - b| + 1, at most `cap`: strtoll saturates a huge bound at LLONG_MAX or LLONG_MIN, so the
/// difference is taken in unsigned arithmetic (exact for any two long longs) before it is capped.
long long range_size(long long a, long long b, long long cap) {
  const auto ua = static_cast<unsigned long long>(a), ub = static_cast<unsigned long long>(b);
  const unsigned long long d = a > b ? ua - ub : ub - ua;
  return d >= static_cast<unsigned long long>(cap) ? cap : static_cast<long long>(d) + 1;
}

/// Words a word's brace ranges expand to, at most k_max_brace_words * 1000 (each factor is capped
/// before it multiplies, so the product cannot overflow).
long long brace_range_words(std::string_view w) {
  constexpr long long cap = k_max_brace_words * 1000;
  long long total = 1;
  for (std::size_t open = w.find('{'); open != std::string_view::npos; open = w.find('{', open + 1)) {
    const std::size_t close = w.find('}', open);
    if (close == std::string_view::npos) break;
    const std::string_view body = w.substr(open + 1, close - open - 1);
    const std::size_t dots = body.find("..");
    if (dots == std::string_view::npos) continue;
    const std::string from(body.substr(0, dots));
    const std::string_view rest = body.substr(dots + 2);
    const std::string to(rest.substr(0, rest.find("..")));
    char* e1 = nullptr;
    char* e2 = nullptr;
    const long long a = std::strtoll(from.c_str(), &e1, 10), b = std::strtoll(to.c_str(), &e2, 10);
    const bool numeric = !from.empty() && !to.empty() && *e1 == '\0' && *e2 == '\0';
    const long long n = numeric ? range_size(a, b, cap) : 26;
    total = std::min(total * n, cap);
  }
  return total;
}

void check_loop(const shell_loop& l, findings& out) {
  if (l.keyword == "while" || l.keyword == "until") return out.add("loops with " + l.keyword + " (it may not end)", k_hazard);
  if (l.keyword == "select") return out.add("loops with select (reads choices from input)", k_hazard);
  if (l.words.size() < 2 || l.words[1] != "in") return out.add("loops without a literal word list (" + l.keyword + ")", k_hazard);
  for (std::size_t i = 2; i < l.words.size(); ++i) {
    if (l.words[i].find('\0') != std::string::npos) return out.add("loops over words computed at run time (" + l.keyword + ")", k_hazard);
    if (brace_range_words(l.words[i]) > 1 && l.words[i].find("..") != std::string::npos)
      return out.add("loops over a range (" + l.keyword + ")", k_hazard);
  }
}

// ---- sed -------------------------------------------------------------------------------------

struct sed_reader {
  std::string_view s;
  std::size_t i = 0;

  bool end() const { return i >= s.size(); }
  char peek() const { return end() ? '\0' : s[i]; }
  void blanks() {
    while (!end() && (s[i] == ' ' || s[i] == '\t')) ++i;
  }
  void digits() {
    while (!end() && is_digit(s[i])) ++i;
  }
  /// Past the next unescaped `delim`; false at the end of the script.
  bool delimited(char delim) {
    for (; !end(); ++i) {
      if (s[i] == '\\') ++i;
      else if (s[i] == delim) return ++i, true;
    }
    return false;
  }
  void to_line_end() {
    while (!end() && s[i] != '\n') ++i;
  }
  void label() {
    blanks();
    while (!end() && s[i] != ';' && s[i] != '\n' && s[i] != '}' && s[i] != ' ' && s[i] != '\t') ++i;
  }
  /// a/i/c text: to the end of the line, continued by a backslash before the newline.
  void text() {
    blanks();
    if (peek() == '\\') ++i;
    if (peek() == '\n') ++i;
    while (!end()) {
      if (s[i] == '\\') i += 2;
      else if (s[i] == '\n') return;
      else ++i;
    }
  }
  bool address() {
    if (is_digit(peek())) {
      digits();
      if (peek() == '~') ++i, digits();
    } else if (peek() == '$') {
      ++i;
    } else if (peek() == '/' || peek() == '\\') {
      if (peek() == '\\') ++i;
      if (end()) return false;
      const char delim = s[i++];
      if (!delimited(delim)) return false;
      while (peek() == 'I' || peek() == 'M') ++i;
    } else if (peek() == '+' || peek() == '~') {
      ++i;
      digits();
    }
    return true;
  }
  sed_verdict substitute() {
    if (end() || s[i] == '\n' || s[i] == '\\') return sed_verdict::unknown;
    const char delim = s[i++];
    if (!delimited(delim) || !delimited(delim)) return sed_verdict::unknown;
    while (!end() && std::string_view("gpiImM0123456789").find(s[i]) != std::string_view::npos) ++i;
    if (peek() == 'e' || peek() == 'w') return sed_verdict::runs;
    return sed_verdict::safe;
  }
  sed_verdict transliterate() {
    if (end() || s[i] == '\n' || s[i] == '\\') return sed_verdict::unknown;
    const char delim = s[i++];
    return delimited(delim) && delimited(delim) ? sed_verdict::safe : sed_verdict::unknown;
  }
  sed_verdict command();
};

sed_verdict sed_reader::command() {
  const char c = s[i++];
  const auto one_of = [c](std::string_view set) { return set.find(c) != std::string_view::npos; };
  if (one_of("{}")) return sed_verdict::safe;
  if (one_of("wWe")) return sed_verdict::runs;  // w/W write a file, e runs a command
  if (one_of(":btT")) return label(), sed_verdict::safe;
  if (one_of("aic")) return text(), sed_verdict::safe;
  if (one_of("rRv#")) return to_line_end(), sed_verdict::safe;  // r/R read a file, as cat does
  if (one_of("lLqQ")) {
    blanks();
    digits();
  } else if (c == 's' || c == 'y') {
    const sed_verdict v = c == 's' ? substitute() : transliterate();
    if (v != sed_verdict::safe) return v;
  } else if (!one_of("=dDgGhHnNpPxzF")) {
    return sed_verdict::unknown;
  }
  blanks();
  return end() || std::string_view(";\n}#").find(s[i]) != std::string_view::npos ? sed_verdict::safe : sed_verdict::unknown;
}

}  // namespace

bool literal_arithmetic(std::string_view s) {
  const bool any_digit = std::any_of(s.begin(), s.end(), is_digit);
  return any_digit && std::all_of(s.begin(), s.end(), [](char c) {
           return is_digit(c) || std::string_view(" \t\n+-*/%()<>=!&|^~?:,").find(c) != std::string_view::npos;
         });
}

void check_arithmetic_text(std::string_view s, findings& out) {
  bool in_double = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\\') {
      ++i;
      continue;
    }
    if (c == '$' && !in_double && i + 1 < s.size() && s[i + 1] == '\'') {  // $'…' honours \' inside
      for (i += 2; i < s.size() && s[i] != '\''; ++i)
        if (s[i] == '\\') ++i;
      continue;
    }
    if (c == '\'' && !in_double) {
      const std::size_t close = s.find('\'', i + 1);
      if (close == std::string_view::npos) return;
      i = close;
      continue;
    }
    if (c == '"') in_double = !in_double;
    const bool dollar = c == '$' && i + 1 < s.size();
    if (dollar && s[i + 1] == '[') {
      out.add("uses $[ ] arithmetic", k_hazard);
    } else if (dollar && s[i + 1] == '{') {
      const std::size_t close = matching(s, i + 2, '{', '}');
      parameter_body(s.substr(i + 2, close == std::string_view::npos ? std::string_view::npos : close - i - 2), out);
    } else if (c == '(' && i + 1 < s.size() && s[i + 1] == '(') {
      const std::size_t close = matching(s, i + 2, '(', ')');
      const std::string_view body = s.substr(i + 2, close == std::string_view::npos ? std::string_view::npos : close - i - 2);
      if (!literal_arithmetic(body)) out.add("arithmetic on variables can run commands", k_hazard);
      i += 1;
    }
  }
}

void check_shapes(const shell_parse& p, findings& out) {
  if (p.defines_function) out.add("defines a shell function", k_hazard);
  for (const shell_loop& l : p.loops) check_loop(l, out);
  for (const shell_command& c : p.commands) {
    if (c.background) out.add("runs a command in the background (&)", k_hazard);
    for (const std::string& w : c.argv) {
      const long long n = brace_range_words(w);
      if (n > k_max_brace_words) out.add("a brace range expands to more than " + std::to_string(k_max_brace_words) + " words", k_hazard);
    }
    for (const std::string& w : c.argv) {
      if (!is_assignment_word(w)) break;
      const std::size_t open = w.find('['), eq = w.find('=');
      if (open == std::string::npos || open > eq) continue;
      const std::string_view sub = std::string_view(w).substr(open + 1, w.find(']') - open - 1);
      if (sub.empty() || sub.find_first_not_of("0123456789") != std::string_view::npos)
        out.add("an array subscript that is not a literal number is evaluated as arithmetic", k_hazard);
    }
  }
}

sed_verdict judge_sed_script(std::string_view script) {
  sed_reader r{script};
  while (true) {
    while (!r.end() && (std::isspace(static_cast<unsigned char>(r.peek())) != 0 || r.peek() == ';')) ++r.i;
    if (r.end()) return sed_verdict::safe;
    if (!r.address()) return sed_verdict::unknown;
    r.blanks();
    if (r.peek() == ',') {
      ++r.i;
      r.blanks();
      if (!r.address()) return sed_verdict::unknown;
    }
    r.blanks();
    while (r.peek() == '!') ++r.i, r.blanks();
    if (r.end()) return sed_verdict::unknown;
    const sed_verdict v = r.command();
    if (v != sed_verdict::safe) return v;
  }
}

}  // namespace warden::risk::risk_detail
