// Rule 1 of secrets/find_secrets.h: values of secret names (NAME=value, --name value, 'NAME':
// 'value', .netrc's password, INI lines, …), and the credential flags found by looking back
// at the command (-u user:pass, mysql -pPASS, sshpass/docker login/az login -p PASS).
#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "secrets/redact.h"
#include "secrets/scan_text.h"
#include "secrets/secret_detect.h"

namespace warden::secrets::detail {
namespace {

constexpr bool is_flag_char(char c) { return is_alnum(c) || c == '_' || c == '-'; }
/// The byte before `=` of an operator (`==`, `!=`, `<=`, `+=`, …), not an assignment.
constexpr bool is_operator(char c) {
  switch (c) {
    case '=': case '!': case '<': case '>': case '+': case '-': case '*': case '/': case '%': case '&': case '|':
    case '^': case '~': return true;
    default: return false;
  }
}

struct name_ref {
  std::string_view name;
  std::size_t start;  ///< first byte of the name (its opening quote when quoted)
  bool spaced;        ///< blanks between the name and the separator
};

/// A quoted name ending with the quote at `close`.
std::optional<name_ref> quoted_name_before(std::string_view s, std::size_t close, bool spaced) {
  std::size_t open = close;
  for (std::size_t steps = 0; open > 0 && steps <= k_max_name; ++steps) {
    if (s[--open] != s[close]) continue;
    if (open + 1 == close) return std::nullopt;
    return name_ref{s.substr(open + 1, close - open - 1), open, spaced};
  }
  return std::nullopt;
}

/// The name before the separator at `sep`: a bare run of name characters (leading dashes of
/// `--name` dropped) or a quoted string, with blanks and one `]` (os.environ["NAME"]) between.
std::optional<name_ref> name_before(std::string_view s, std::size_t sep) {
  std::size_t j = sep;
  while (j > 0 && is_space(s[j - 1])) --j;
  if (j > 0 && !is_quote(s[j - 1])) {  // a line break only between a quoted name and its `:`
    j = sep;
    while (j > 0 && is_blank(s[j - 1])) --j;
  }
  const bool spaced = j != sep;
  const bool bracket = j > 0 && s[j - 1] == ']';
  if (bracket) --j;
  if (j > 0 && is_quote(s[j - 1])) return quoted_name_before(s, j - 1, spaced);
  if (bracket) return std::nullopt;
  std::size_t k = j;
  while (k > 0 && j - k <= k_max_name && is_name_char(s[k - 1])) --k;
  if (j - k > k_max_name) return std::nullopt;
  std::string_view name = s.substr(k, j - k);
  while (!name.empty() && name.front() == '-') name.remove_prefix(1);
  if (name.empty()) return std::nullopt;
  return name_ref{name, k, spaced};
}

bool auth_scheme(std::string_view word) {
  return iequals(word, "bearer") || iequals(word, "basic") || iequals(word, "token") || iequals(word, "digest");
}

/// Where a bare value starting at `k` ends; an earlier `[REDACTED]` is one value (idempotence).
std::size_t bare_end(std::string_view s, std::size_t k) {
  if (s.substr(k).starts_with(k_redacted)) return k + k_redacted.size();
  while (k < s.size() && !ends_value(s[k])) {
    k += s[k] == '[' && s.substr(k).starts_with(k_redacted) ? k_redacted.size() : 1;  // `user:[REDACTED]`
  }
  return k;
}

/// `${NAME<op>default}` at `k` (the `$`), op one of `:-` `-` `:=` `=`: the default's span (when
/// it is not empty and not itself an expansion) and where the expansion ends.
struct expansion {
  std::string_view name;
  std::optional<span> fallback;
  std::size_t end;
};
std::optional<expansion> braced_expansion(std::string_view s, std::size_t k) {
  if (k + 2 >= s.size() || s[k] != '$' || s[k + 1] != '{') return std::nullopt;
  std::size_t n = k + 2;
  while (n < s.size() && n - k <= k_max_name && is_ident(s[n])) ++n;
  if (n == k + 2 || n >= s.size()) return std::nullopt;
  expansion x{s.substr(k + 2, n - k - 2), std::nullopt, 0};
  std::size_t d = n;
  if (s[d] == ':') ++d;
  const bool has_default = d < s.size() && (s[d] == '-' || s[d] == '=');
  if (has_default) ++d;
  std::size_t e = d;
  while (e < s.size() && e - d <= k_max_look_back && s[e] != '}' && s[e] != '\n') ++e;
  if (e >= s.size() || s[e] != '}') return std::nullopt;
  if (has_default && e > d && !is_expansion_at(s, d)) x.fallback = span{d, e};
  x.end = e + 1;
  return x;
}

/// The pieces of one value from `k` on: a quoted string (`$'…'` too), then more quoted
/// strings that touch it and close on the line (`'a'"b"` is one shell word) and, when `bare`
/// is set, a bare run; a bare run ends the value (its quote may be an outer one:
/// `-H 'Authorization: Bearer x'`). Each piece's content is recorded on its own, so the quotes
/// stay and a second pass finds the same pieces; a piece in double quotes or backquotes that
/// begins with an expansion is not a literal and is not recorded (a default inside it is).
/// Returns where the value ends, if anywhere.
std::optional<std::size_t> value_pieces(std::string_view s, std::size_t k, bool bare, std::vector<span>& out) {
  std::optional<std::size_t> end;
  while (k < s.size()) {
    if (s[k] == '$' && k + 1 < s.size() && (s[k + 1] == '\'' || s[k + 1] == '"')) ++k;  // $'…' of bash
    if (is_quote(s[k])) {
      const std::size_t e = std::min(quote_end(s, k), s.size());
      const bool closed = e < s.size() && s[e] == s[k];
      if (end && !closed) break;  // an unclosed quote after a value is not part of it
      const bool literal = s[k] == '\'' || !is_expansion_at(s, k + 1);
      if (!literal) {
        if (const auto x = braced_expansion(s, k + 1); x && x->fallback) out.push_back(*x->fallback);
      } else if (e > k + 1) {
        out.push_back({k + 1, e});
      }
      end = e;
      if (!closed) break;  // it ran to the end of the line
      k = e + 1;
    } else if (bare && !ends_value(s[k]) && !is_expansion_at(s, k)) {
      const std::size_t e = bare_end(s, k);
      out.push_back({k, e});
      return e;
    } else {
      break;
    }
  }
  return end;
}

/// A tuple or list value `('user', 'pw')` / `[a, "pw"]` at `k` (its bracket): every string
/// literal after the first element; a lone string literal. Elements are string literals or
/// (dotted) names; anything else is code, and nothing is recorded. Returns where it ends.
std::optional<std::size_t> tuple_value(std::string_view s, std::size_t k, std::vector<span>& out) {
  const char close = s[k] == '(' ? ')' : ']';
  std::vector<std::optional<span>> elements;  // a string literal's content, or nullopt for a name
  std::size_t i = k + 1;
  while (elements.size() < 16) {
    while (i < s.size() && is_space(s[i])) ++i;
    std::size_t end = i;
    if (const auto lit = string_literal_at(s, i, end)) {
      elements.push_back(lit);
    } else {
      while (end < s.size() && end - i <= k_max_name && (is_ident(s[end]) || s[end] == '.')) ++end;
      if (end == i) break;
      elements.push_back(std::nullopt);
    }
    i = end;
    while (i < s.size() && is_blank(s[i])) ++i;
    if (i >= s.size() || s[i] != ',') break;
    ++i;
  }
  while (i < s.size() && is_space(s[i])) ++i;
  if (elements.empty() || i >= s.size() || s[i] != close) return std::nullopt;
  for (std::size_t n = elements.size() == 1 ? 0 : 1; n < elements.size(); ++n) {
    if (elements[n]) out.push_back(*elements[n]);
  }
  return i + 1;
}

}  // namespace

bool secret_pair_name(std::string_view name, char before) {
  if (name != "PWD" && iequals(name, "pwd")) return true;  // Pwd= of a connection string
  if (before == '?' || before == '&' || before == '#') return is_credential_parameter_name(name);
  if (is_secret_name(name)) return true;
  return before == ';' && is_credential_parameter_name(name);
}

std::optional<std::size_t> value_at(std::string_view s, std::size_t from, bool bare, std::vector<span>& out) {
  std::size_t k = from;
  while (k < s.size() && is_blank(s[k])) ++k;
  if (k >= s.size()) return std::nullopt;
  k = skip_string_prefix(s, k);
  if (is_expansion_at(s, k)) {  // not a literal; a default written into it is
    const auto x = braced_expansion(s, k);
    if (!x) return std::nullopt;
    if (x->fallback) out.push_back(*x->fallback);
    return x->end;
  }
  if (is_quote(s[k]) || s[k] == '$') return value_pieces(s, k, bare, out);
  const bool redacted = s.substr(k).starts_with(k_redacted);
  if ((s[k] == '(' || s[k] == '[') && !redacted) return tuple_value(s, k, out);
  if (!bare || (s[k] == '{' && !redacted) || ends_value(s[k])) return std::nullopt;
  std::size_t e = bare_end(s, k);
  if (auth_scheme(s.substr(k, e - k))) {  // `Bearer <token>`: the scheme stays
    std::size_t t = e;
    while (t < s.size() && t < e + 8 && is_blank(s[t])) ++t;
    if (t > e && t < s.size() && !ends_value(s[t])) k = t;
  }
  return value_pieces(s, k, true, out);
}

namespace {

/// The span of a value recorded by value_at (for rules that redact part of it).
std::optional<span> single_value(std::string_view s, std::size_t from) {
  std::vector<span> v;
  if (!value_at(s, from, true, v) || v.empty()) return std::nullopt;
  return v.front();
}

/// The first two words of the shell command that s[i] belongs to (it starts after a newline,
/// `;`, `|`, `&`, `(` or a backquote at most 256 bytes back; `sudo` and NAME=value words are
/// skipped), the first without its directory: {"docker", "login"}. Empty when too far back.
std::pair<std::string_view, std::string_view> command_words(std::string_view s, std::size_t i) {
  std::size_t b = i;
  while (b > 0 && i - b < k_max_look_back && std::string_view("\n;|&(`").find(s[b - 1]) == std::string_view::npos) --b;
  if (b > 0 && i - b >= k_max_look_back) return {};
  std::string_view words[2];
  int n = 0;
  for (std::size_t k = b; k < i && n < 2;) {
    while (k < i && is_space(s[k])) ++k;  // a \r or \f too: each pass must move on
    std::size_t e = k;
    while (e < i && !is_space(s[e])) ++e;
    const std::string_view w = s.substr(k, e - k);
    if (!w.empty() && w != "sudo" && (n > 0 || w.find('=') == std::string_view::npos)) words[n++] = w;
    k = e;
  }
  if (const auto slash = words[0].rfind('/'); slash != std::string_view::npos) words[0].remove_prefix(slash + 1);
  return {words[0], words[1]};
}

/// The part of `v` after its first `:` (curl's user:password), if any.
void after_colon(std::string_view s, span v, std::vector<span>& out) {
  const auto colon = s.substr(v.begin, v.end - v.begin).find(':');
  if (colon != std::string_view::npos && v.begin + colon + 1 < v.end) out.push_back({v.begin + colon + 1, v.end});
}

/// Commands whose `-p PASS` (spaced) is a password: sshpass, and `docker|podman|nerdctl login`
/// and `az login`.
bool spaced_p_is_password(std::string_view cmd, std::string_view second) {
  if (cmd == "sshpass") return true;
  if (second != "login") return false;
  return cmd == "docker" || cmd == "podman" || cmd == "nerdctl" || cmd == "az";
}

/// A short credential flag at `i` (a dash at a word start): `-u user:pass` (any command),
/// `-pPASS` of mysql/mariadb, `-p PASS` of sshpass, `docker|podman login` and `az login`.
/// Returns where to go on scanning.
std::size_t short_flag_at(std::string_view s, std::size_t i, std::vector<span>& out) {
  if (i + 2 >= s.size() || (s[i + 1] != 'u' && s[i + 1] != 'p')) return i + 1;
  const bool spaced = is_blank(s[i + 2]);
  if (!spaced && s[i + 1] == 'u') return i + 1;
  std::size_t k = i + 2;
  while (k < s.size() && is_blank(s[k])) ++k;
  if (k >= s.size() || s[k] == '-') return i + 2;  // the next flag
  if (s[i + 1] == 'u') {
    if (const auto v = single_value(s, k)) {
      after_colon(s, *v, out);
      return v->end;
    }
    return i + 2;
  }
  const auto [cmd, second] = command_words(s, i);
  const bool mysql = cmd.starts_with("mysql") || cmd.starts_with("mariadb");
  if (spaced ? !spaced_p_is_password(cmd, second) : !mysql) return i + 2;
  const auto v = value_at(s, i + 2, true, out);
  return v ? std::max(*v, i + 2) : i + 2;
}

/// `--name value` at `i` (the first dash): the value when the name is secret (`--user u:p`:
/// the part after the colon). Returns where to go on scanning.
std::size_t flag_at(std::string_view s, std::size_t i, std::vector<span>& out) {
  if (i > 0 && !is_space(s[i - 1]) && !is_quote(s[i - 1])) return i + 1;
  if (i + 1 < s.size() && s[i + 1] != '-') return short_flag_at(s, i, out);
  std::size_t e = i + 2;
  while (e < s.size() && e - i <= k_max_name && is_flag_char(s[e])) ++e;
  if (e == i + 2 || e >= s.size() || !is_blank(s[e])) return e;  // `--name=value`: the `=` rule
  const std::string_view name = s.substr(i + 2, e - i - 2);
  const bool user = name == "user";
  if (!user && !is_secret_name(name)) return e;
  std::size_t k = e;
  while (k < s.size() && is_blank(s[k])) ++k;
  if (k >= s.size() || s[k] == '-') return e;
  if (user) {
    const auto v = single_value(s, k);
    if (v) after_colon(s, *v, out);
    return v ? v->end : e;
  }
  const auto v = value_at(s, k, true, out);
  return v ? *v : e;
}

/// `name: type = value` (a Python annotation) after the `:` at `i`: where the `=` is, when a
/// quoted value follows it.
std::optional<std::size_t> annotation_eq(std::string_view s, std::size_t i) {
  std::size_t k = i + 1;
  while (k < s.size() && is_blank(s[k])) ++k;
  if (k >= s.size() || !(is_alpha(s[k]) || s[k] == '_')) return std::nullopt;
  const std::size_t type = k;
  while (k < s.size() && k - type <= k_max_name &&
         (is_name_char(s[k]) || is_blank(s[k]) || s[k] == '[' || s[k] == ']' || s[k] == '|')) {
    ++k;
  }
  if (k + 1 >= s.size() || s[k] != '=' || s[k + 1] == '=') return std::nullopt;
  std::size_t q = k + 1;
  while (q < s.size() && is_blank(s[q])) ++q;
  if (q >= s.size()) return std::nullopt;
  q = skip_string_prefix(s, q);
  return is_quote(s[q]) ? std::optional<std::size_t>(k) : std::nullopt;
}

/// A bare value after ` = ` counts for an all-capitals name (`PGPASSWORD = pw`, .env style)
/// unless it looks like code (a call, an index, a literal).
bool spaced_bare_ok(std::string_view s, const name_ref& name, std::size_t from) {
  if (std::any_of(name.name.begin(), name.name.end(), [](char c) { return is_lower(c); })) return false;
  std::size_t k = from;
  while (k < s.size() && is_blank(s[k])) ++k;
  std::size_t e = k;
  while (e < s.size() && !ends_value(s[e])) {
    if (s[e] == '(' || s[e] == '[' || s[e] == '{') return s.substr(k).starts_with(k_redacted);
    ++e;
  }
  return true;
}

/// True when only blanks stand between the start of its line and `at` (at most 256 bytes back).
bool starts_line(std::string_view s, std::size_t at) {
  std::size_t b = at;
  while (b > 0 && at - b < k_max_look_back && is_blank(s[b - 1])) --b;
  return b == 0 || s[b - 1] == '\n';
}

/// `a` ends with `b` at a component boundary (`args.password` / `password`, `api_key` / `key`),
/// ASCII case ignored.
bool ends_with_component(std::string_view a, std::string_view b) {
  if (b.empty() || a.size() < b.size() || !iequals(a.substr(a.size() - b.size()), b)) return false;
  const std::size_t at = a.size() - b.size();
  return at == 0 || a[at - 1] == '.' || a[at - 1] == '_';
}

/// The value of `name = value` is a variable related to the name (`password = args.password`,
/// `token = api_token`, `api_key = key`): code, not a secret.
bool names_a_variable(std::string_view value, std::string_view name) {
  if (value.empty() || !(is_alpha(value[0]) || value[0] == '_')) return false;
  if (!std::all_of(value.begin(), value.end(), [](char c) { return is_ident(c) || c == '.'; })) return false;
  return ends_with_component(value, name) || ends_with_component(name, value);
}

/// Whether a character that ends a shell command or starts another one (`;` `|` `&` and the
/// backquote) is at `e` (> `k`, the value's start): `password = x;rm -rf y` runs `rm`, so the
/// value ends there and the command stays visible. The price: a bare INI value holding one of
/// these characters is redacted only up to it (a quoted value is redacted whole).
bool shell_operator_at(std::string_view s, std::size_t k, std::size_t e) {
  return e > k && (s[e] == ';' || s[e] == '|' || s[e] == '&' || s[e] == '`');
}

/// `name = value` of an INI, .env or config file (the name unquoted, without a dot, starting its
/// line; the value bare): the rest of the line, up to a shell operator (shell_operator_at), unless it is code or a non-secret constant
/// (holds ( [ {, is None/True/False/null, or names a related variable: names_a_variable).
/// Returns where the value ends, or nullopt.
std::optional<std::size_t> ini_value(std::string_view s, const name_ref& name, std::size_t from,
                                     std::vector<span>& out) {
  if (is_quote(s[name.start]) || name.name.find('.') != std::string_view::npos || !starts_line(s, name.start)) {
    return std::nullopt;
  }
  std::size_t k = from;
  while (k < s.size() && is_blank(s[k])) ++k;
  if (k >= s.size() || is_quote(s[skip_string_prefix(s, k)]) || s[k] == '$' || is_space(s[k])) return std::nullopt;
  std::size_t e = k;
  while (e < s.size() && s[e] != '\n' && !shell_operator_at(s, k, e)) {
    if (s[e] == '(' || s[e] == '[' || s[e] == '{') return std::nullopt;
    ++e;
  }
  std::size_t t = e;
  while (t > k && is_space(s[t - 1])) --t;
  const std::string_view v = s.substr(k, t - k);
  for (std::string_view constant : {"None", "True", "False", "null", "nil", "true", "false"}) {
    if (v == constant) return std::nullopt;
  }
  if (names_a_variable(v, name.name) || v.starts_with(k_redacted)) return std::nullopt;
  out.push_back({k, t});
  return e;
}

/// A configuration keyword followed by its password at `i`: .netrc's `password PASS` (the word at
/// the start of a line, or after `login`/`machine` on the same line), LDAP's `bindpw PASS` and
/// `rootpw PASS` (at the start of a line). Returns where to go on scanning.
std::size_t keyword_at(std::string_view s, std::size_t i, std::vector<span>& out) {
  if (i > 0 && !is_space(s[i - 1])) return i + 1;
  std::string_view word;
  for (std::string_view w : {"password", "bindpw", "rootpw"}) {
    if (s.size() > i + w.size() && iequals(s.substr(i, w.size()), w) && is_blank(s[i + w.size()])) word = w;
  }
  if (word.empty()) return i + 1;
  const std::size_t after = i + word.size();
  bool ok = starts_line(s, i);
  if (!ok && word == "password") {
    std::size_t b = i;
    while (b > 0 && i - b < k_max_look_back && s[b - 1] != '\n') --b;
    const std::string_view line = s.substr(b, i - b);
    ok = line.find("login ") != std::string_view::npos || line.find("machine ") != std::string_view::npos;
  }
  if (!ok) return after;
  std::size_t k = after;
  while (k < s.size() && is_blank(s[k])) ++k;
  if (k < s.size() && (s[k] == '=' || s[k] == ':')) return after;  // the `=`/`:` rules
  const auto v = value_at(s, k, true, out);
  return v ? *v : after;
}

/// `,` after a quoted secret name that opens a call's arguments (`setdefault('API_KEY', 'pw')`):
/// the string literal after it.
std::size_t call_pair_at(std::string_view s, std::size_t i, std::vector<span>& out) {
  const auto name = name_before(s, i);
  if (!name || !is_quote(s[name->start])) return i + 1;
  std::size_t b = name->start;
  while (b > 0 && is_blank(s[b - 1])) --b;
  if (b == 0 || s[b - 1] != '(' || !is_secret_name(name->name)) return i + 1;
  const auto v = value_at(s, i + 1, false, out);
  return v ? std::max(*v, i + 1) : i + 1;
}

/// The separator `=` (or `=>`, `:=`) at `i`. Returns where to go on scanning.
std::size_t assignment_at(std::string_view s, std::size_t i, std::vector<span>& out) {
  const char prev = i > 0 ? s[i - 1] : ' ';
  const char next = i + 1 < s.size() ? s[i + 1] : ' ';
  if (next == '=' || next == '~') return i + 2;
  std::size_t value_from = i + 1;
  if (next == '>') {
    value_from = i + 2;  // 'name' => 'value'
  } else if (is_operator(prev)) {
    return i + 1;
  }
  const auto name = name_before(s, prev == ':' ? i - 1 : i);  // name = value, name := value
  if (!name) return i + 1;
  const char before = name->start > 0 ? s[name->start - 1] : ' ';
  if (!secret_pair_name(name->name, before)) return i + 1;
  const bool glued = !name->spaced && value_from < s.size() && !is_blank(s[value_from]);
  const bool bare = glued || spaced_bare_ok(s, *name, value_from);
  if (!bare && name->spaced) {
    if (const auto e = ini_value(s, *name, value_from, out)) return *e;
  }
  const auto v = value_at(s, value_from, bare, out);
  return v ? std::max(*v, i + 1) : i + 1;
}

/// The separator `:` at `i`. Returns where to go on scanning.
std::size_t colon_at(std::string_view s, std::size_t i, std::vector<span>& out) {
  const char prev = i > 0 ? s[i - 1] : ' ';
  const char next = i + 1 < s.size() ? s[i + 1] : ' ';
  if (next == '/' || next == ':' || next == '=' || prev == ':') return i + 1;  // scheme://, ::, :=
  const auto name = name_before(s, i);
  if (!name) return i + 1;
  std::size_t value_from = i + 1;
  bool bare = true;
  if (const auto eq = annotation_eq(s, i)) {
    value_from = *eq + 1;  // token: str = "value"
    bare = false;
  }
  const char before = name->start > 0 ? s[name->start - 1] : ' ';
  if (!secret_pair_name(name->name, before)) return i + 1;
  const auto v = value_at(s, value_from, bare, out);
  return v ? std::max(*v, i + 1) : i + 1;
}

/// One separator or rule start at `i`: records a secret value and returns where to go on
/// scanning (past the value), or i + 1.
std::size_t pair_at(std::string_view s, std::size_t i, std::vector<span>& out) {
  switch (s[i]) {
    case '=': return assignment_at(s, i, out);
    case ':': return colon_at(s, i, out);
    case '-': return flag_at(s, i, out);
    case ',': return call_pair_at(s, i, out);
    case 'p': case 'P': case 'b': case 'B': case 'r': case 'R': return keyword_at(s, i, out);
    case '(': case '$': case 'o': return code_shape_at(s, i, out);
    default: return i + 1;
  }
}

}  // namespace

void find_pairs(std::string_view s, std::vector<span>& out) {
  for (std::size_t i = 0; i < s.size();) i = pair_at(s, i, out);
}

}  // namespace warden::secrets::detail
