#include "secrets/redact.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "common/json_util.h"
#include "secrets/secret_detect.h"

namespace warden::secrets {
namespace {

/// A byte range [begin, end) to replace.
struct span {
  std::size_t begin, end;
};

/// Names longer than this are not looked at (keeps the backward scans bounded).
constexpr std::size_t k_max_name = 128;

// ASCII character classes (locale-independent).
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
constexpr bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
constexpr bool is_alnum(char c) { return is_digit(c) || is_lower(c) || is_upper(c); }
constexpr bool is_blank(char c) { return c == ' ' || c == '\t'; }
constexpr bool is_space(char c) { return is_blank(c) || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
constexpr bool is_quote(char c) { return c == '"' || c == '\'' || c == '`'; }
constexpr bool is_name_char(char c) { return is_alnum(c) || c == '_' || c == '-' || c == '.'; }
constexpr bool is_flag_char(char c) { return is_alnum(c) || c == '_' || c == '-'; }

/// Where an unquoted value ends.
constexpr bool ends_value(char c) {
  switch (c) {
    case ';': case '&': case '|': case ',': case '}': case ')': case ']': case '<': case '>': return true;
    default: return is_space(c) || is_quote(c);
  }
}
/// Where a URL ends, and where its authority ends.
constexpr bool ends_url(char c) { return is_space(c) || is_quote(c) || c == '<' || c == '>'; }
constexpr bool ends_authority(char c) { return ends_url(c) || c == '/' || c == '?' || c == '#'; }
/// The byte before `=` of an operator (`==`, `!=`, `<=`, `+=`, …), not an assignment.
constexpr bool is_operator(char c) {
  switch (c) {
    case '=': case '!': case '<': case '>': case '+': case '-': case '*': case '/': case '%': case '&': case '|':
    case '^': case '~': return true;
    default: return false;
  }
}

char ascii_lower(char c) { return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return ascii_lower(x) == ascii_lower(y);
         });
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = ascii_lower(c);
  return out;
}

int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  const char l = ascii_lower(c);
  return l >= 'a' && l <= 'f' ? l - 'a' + 10 : -1;
}

// ---------------------------------------------------------------------------------------------
// Decoding: the rules run on text with its backslash escapes decoded, so `\"` inside a JSON
// string is a quote to them; every decoded byte remembers where its escape starts, so a span
// found in decoded text maps back to whole escapes.

struct decoded {
  std::string text;
  std::vector<std::size_t> at;  ///< at[i]: raw offset of the escape (or byte) text[i] came from
  std::size_t raw_end = 0;
  std::size_t raw_of(std::size_t i) const { return i < at.size() ? at[i] : raw_end; }
};

char unescape(char c) {
  switch (c) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case 'b': return '\b';
    case 'f': return '\f';
    default: return c;  // \" \\ \/ and anything else: the byte itself
  }
}

/// The value of `\uXXXX` at `i`, or -1 when the four hex digits are not all there.
int unicode_escape(std::string_view raw, std::size_t i, std::size_t end) {
  if (i + 6 > end || raw[i + 1] != 'u') return -1;
  int cp = 0;
  for (std::size_t k = i + 2; k < i + 6; ++k) {
    const int h = hex_value(raw[k]);
    if (h < 0) return -1;
    cp = cp * 16 + h;
  }
  return cp;
}

/// Decodes raw[b, e) into `out`. A non-ASCII `\u` escape becomes 0x80, which no rule matches.
void decode(std::string_view raw, std::size_t b, std::size_t e, decoded& out) {
  out.text.clear();
  out.at.clear();
  out.raw_end = e;
  std::size_t i = b;
  while (i < e) {
    out.at.push_back(i);
    if (raw[i] != '\\' || i + 1 >= e) {
      out.text.push_back(raw[i++]);
    } else if (const int cp = unicode_escape(raw, i, e); cp >= 0) {
      out.text.push_back(cp < 0x80 ? static_cast<char>(cp) : static_cast<char>(0x80));
      i += 6;
    } else {
      out.text.push_back(unescape(raw[i + 1]));
      i += 2;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Rule 1: values of secret names.

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

/// Does the value after `name` have to be hidden? `before` is the byte before the name.
bool secret_pair_name(std::string_view name, char before) {
  if (is_secret_name(name)) return true;
  if (name != "PWD" && iequals(name, "pwd")) return true;  // Pwd= of a connection string
  const bool in_query = before == '?' || before == '&' || before == '#' || before == ';';
  return in_query && is_credential_parameter_name(name);
}

bool auth_scheme(std::string_view word) {
  return iequals(word, "bearer") || iequals(word, "basic") || iequals(word, "token") || iequals(word, "digest");
}

/// Where the quoted value opening at `open` ends: its closing quote (a backslash escapes the
/// next byte), else the end of the line or of the text.
std::size_t quote_end(std::string_view s, std::size_t open) {
  for (std::size_t i = open + 1; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == s[open] || s[i] == '\n') {
      return i;
    }
  }
  return s.size();
}

/// Where a bare value starting at `k` ends; an earlier `[REDACTED]` is one value (idempotence).
std::size_t bare_end(std::string_view s, std::size_t k) {
  if (s.substr(k).starts_with(k_redacted)) return k + k_redacted.size();
  while (k < s.size() && !ends_value(s[k])) {
    k += s[k] == '[' && s.substr(k).starts_with(k_redacted) ? k_redacted.size() : 1;  // `user:[REDACTED]`
  }
  return k;
}

/// A Python string prefix (`b`, `r`, `f`, `u`, `rb`, …) of at most two letters before a quote
/// at `k`: where the quote is, else `k`.
std::size_t skip_string_prefix(std::string_view s, std::size_t k) {
  std::size_t p = k;
  while (p < s.size() && p < k + 2 && std::string_view("bBrRfFuU").find(s[p]) != std::string_view::npos) ++p;
  return p > k && p < s.size() && (s[p] == '"' || s[p] == '\'') ? p : k;
}

/// The pieces of one value from `k` on: a quoted string (`$'…'` too), then more quoted
/// strings that touch it and close on the line (`'a'"b"` is one shell word) and, when `bare`
/// is set, a bare run; a bare run ends the value (its quote may be an outer one:
/// `-H 'Authorization: Bearer x'`). Each piece's content is recorded on its own, so the quotes
/// stay and a second pass finds the same pieces. Returns where the value ends, if anywhere.
std::optional<std::size_t> value_pieces(std::string_view s, std::size_t k, bool bare, std::vector<span>& out) {
  std::optional<std::size_t> end;
  while (k < s.size()) {
    if (s[k] == '$' && k + 1 < s.size() && (s[k + 1] == '\'' || s[k + 1] == '"')) ++k;  // $'…' of bash
    if (is_quote(s[k])) {
      const std::size_t e = std::min(quote_end(s, k), s.size());
      const bool closed = e < s.size() && s[e] == s[k];
      if (end && !closed) break;  // an unclosed quote after a value is not part of it
      if (e > k + 1) out.push_back({k + 1, e});
      end = e;
      if (!closed) break;  // it ran to the end of the line
      k = e + 1;
    } else if (bare && !ends_value(s[k])) {
      const std::size_t e = bare_end(s, k);
      out.push_back({k, e});
      return e;
    } else {
      break;
    }
  }
  return end;
}

/// The value starting at `from` (after blanks), recorded in `out`; returns where it ends. A bare
/// value is taken only when `bare` is set, and not when it opens a structure (`(`, `[`, `{`: a
/// call or a literal, not a secret).
std::optional<std::size_t> value_at(std::string_view s, std::size_t from, bool bare, std::vector<span>& out) {
  std::size_t k = from;
  while (k < s.size() && is_blank(s[k])) ++k;
  if (k >= s.size()) return std::nullopt;
  k = skip_string_prefix(s, k);
  if (is_quote(s[k]) || s[k] == '$') return value_pieces(s, k, bare, out);
  const bool structure = (s[k] == '(' || s[k] == '[' || s[k] == '{') && !s.substr(k).starts_with(k_redacted);
  if (!bare || structure || ends_value(s[k])) return std::nullopt;
  std::size_t e = bare_end(s, k);
  if (auth_scheme(s.substr(k, e - k))) {  // `Bearer <token>`: the scheme stays
    std::size_t t = e;
    while (t < s.size() && t < e + 8 && is_blank(s[t])) ++t;
    if (t > e && t < s.size() && !ends_value(s[t])) k = t;
  }
  return value_pieces(s, k, true, out);
}

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
  constexpr std::size_t k_back = 256;
  std::size_t b = i;
  while (b > 0 && i - b < k_back && std::string_view("\n;|&(`").find(s[b - 1]) == std::string_view::npos) --b;
  if (b > 0 && i - b >= k_back) return {};
  std::string_view words[2];
  int n = 0;
  for (std::size_t k = b; k < i && n < 2;) {
    while (k < i && is_blank(s[k])) ++k;
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

/// A short credential flag at `i` (a dash at a word start): `-u user:pass` (any command),
/// `-pPASS` of mysql/mariadb, `-p PASS` of sshpass and of `docker|podman login`. Returns where
/// to go on scanning.
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
  const bool login = (cmd == "docker" || cmd == "podman" || cmd == "nerdctl") && second == "login";
  if (spaced ? !(cmd == "sshpass" || login) : !mysql) return i + 2;
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
  if (k >= s.size() || !(is_lower(s[k]) || is_upper(s[k]) || s[k] == '_')) return std::nullopt;
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

/// `password <value>` of a .netrc: the word at the start of a line or after `login`/`machine`
/// on the same line (at most 256 bytes back). `i` is the `p`.
std::size_t netrc_at(std::string_view s, std::size_t i, std::vector<span>& out) {
  constexpr std::string_view word = "password";
  if (i > 0 && !is_space(s[i - 1])) return i + 1;
  if (i + word.size() + 1 >= s.size() || !iequals(s.substr(i, word.size()), word)) return i + 1;
  const std::size_t after = i + word.size();
  if (!is_blank(s[after])) return i + 1;
  std::size_t b = i;
  while (b > 0 && i - b < 256 && s[b - 1] != '\n') --b;
  const std::string_view line = s.substr(b, i - b);
  const bool at_start = std::all_of(line.begin(), line.end(), [](char c) { return is_blank(c); });
  const bool netrc = at_start ? (b == 0 || s[b - 1] == '\n') : (line.find("login ") != std::string_view::npos ||
                                                                 line.find("machine ") != std::string_view::npos);
  if (!netrc) return after;
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

/// One separator at `i` (`=`, `=>`, `:=`, `:`, `,` or a flag): records a secret value and
/// returns where to go on scanning (past the value), or i + 1.
std::size_t pair_at(std::string_view s, std::size_t i, std::vector<span>& out) {
  const char c = s[i];
  const char prev = i > 0 ? s[i - 1] : ' ';
  const char next = i + 1 < s.size() ? s[i + 1] : ' ';
  std::optional<name_ref> name;
  std::size_t value_from = i + 1;
  bool bare = true;
  if (c == '-') return flag_at(s, i, out);
  if (c == ',') return call_pair_at(s, i, out);
  if (c == 'p' || c == 'P') return netrc_at(s, i, out);
  if (c == '=') {
    if (next == '=' || next == '~') return i + 2;
    if (next == '>') {
      value_from = i + 2;  // 'name' => 'value'
    } else if (is_operator(prev)) {
      return i + 1;
    }
    name = name_before(s, prev == ':' ? i - 1 : i);  // name = value, name := value
    bare = name && ((!name->spaced && value_from < s.size() && !is_blank(s[value_from])) ||
                    spaced_bare_ok(s, *name, value_from));
  } else if (c == ':') {
    if (next == '/' || next == ':' || next == '=' || prev == ':') return i + 1;  // scheme://, ::, :=
    name = name_before(s, i);
    if (const auto eq = annotation_eq(s, i); eq && name) {
      value_from = *eq + 1;  // token: str = "value"
      bare = false;
    }
  } else {
    return i + 1;
  }
  if (!name) return i + 1;
  const char before = name->start > 0 ? s[name->start - 1] : ' ';
  if (!secret_pair_name(name->name, before)) return i + 1;
  const auto v = value_at(s, value_from, bare, out);
  if (!v) return i + 1;
  return std::max(*v, i + 1);
}

void find_pairs(std::string_view s, std::vector<span>& out) {
  for (std::size_t i = 0; i < s.size();) i = pair_at(s, i, out);
}

// ---------------------------------------------------------------------------------------------
// Rule 2: values the scrubber flags whatever their name.

void find_tokens(std::string_view s, std::vector<span>& out) {
  for (auto t = find_secret_token(s, 0); t; t = find_secret_token(s, t->second)) out.push_back({t->first, t->second});
}

void find_key_blocks(std::string_view s, std::vector<span>& out) {
  constexpr std::string_view end_marker = "-----END";
  std::size_t from = 0;
  while (const auto m = find_private_key_block(s, from)) {
    if (s.substr(m->second).starts_with(k_redacted)) {  // redacted before
      from = m->second + k_redacted.size();
      continue;
    }
    const std::size_t end = s.find(end_marker, m->second);
    if (end == std::string_view::npos) {
      if (s.size() > m->second) out.push_back({m->second, s.size()});  // no END: the rest is key
      return;
    }
    if (end > m->second) out.push_back({m->second, end});
    from = end + end_marker.size();
  }
}

/// Letters and digits (and - _ .), at least 20, mixing two of lowercase, uppercase and digits.
bool looks_like_key(std::string_view v) {
  if (v.size() < 20) return false;
  bool lo = false, up = false, dg = false;
  for (char c : v) {
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.') return false;
    lo = lo || is_lower(c);
    up = up || is_upper(c);
    dg = dg || is_digit(c);
  }
  return static_cast<int>(lo) + static_cast<int>(up) + static_cast<int>(dg) >= 2;
}

/// userinfo = s[from, at): its password, or all of it when it looks like a key (a DSN).
void userinfo_span(std::string_view s, std::size_t from, std::size_t at, std::vector<span>& out) {
  const std::string_view info = s.substr(from, at - from);
  const auto colon = info.find(':');
  if (colon != std::string_view::npos) {
    if (from + colon + 1 < at) out.push_back({from + colon + 1, at});
  } else if (looks_like_key(info)) {
    out.push_back({from, at});
  }
}

/// The path of a webhook URL: host s[host, path) and path from `path`. The path ends at its
/// query, the URL's end or the next "://", so no byte is scanned for two URLs.
void webhook_span(std::string_view s, std::size_t host, std::size_t path, std::vector<span>& out) {
  std::size_t end = path;
  while (end < s.size() && !ends_url(s[end]) && s[end] != '?' && s[end] != '#' && s.compare(end, 3, "://") != 0) {
    ++end;
  }
  if (end <= path + 1) return;
  if (lower(s.substr(host, std::min<std::size_t>(path - host, 6))) == "hooks.") {
    out.push_back({path + 1, end});
    return;
  }
  const std::string p = lower(s.substr(path, end - path));
  for (std::string_view marker : {std::string_view("/webhooks/"), std::string_view("/hooks/")}) {
    const auto m = p.find(marker);
    if (m != std::string::npos && m + marker.size() < p.size()) {
      out.push_back({path + m + marker.size(), end});
      return;
    }
  }
}

void find_urls(std::string_view s, std::vector<span>& out) {
  for (auto p = s.find("://"); p != std::string_view::npos; p = s.find("://", p + 3)) {
    const std::size_t from = p + 3;
    std::size_t a = from, at = std::string_view::npos;
    for (; a < s.size() && !ends_authority(s[a]); ++a) {
      if (s[a] == '@') at = a;
    }
    if (at != std::string_view::npos) userinfo_span(s, from, at, out);
    if (a < s.size() && s[a] == '/') webhook_span(s, at == std::string_view::npos ? from : at + 1, a, out);
  }
}

// ---------------------------------------------------------------------------------------------
// Putting it together.

/// Scratch space reused across the pieces of one text.
struct scanner {
  decoded d;
  std::vector<span> found;

  /// Finds the secrets of raw[b, e), decoded, and appends their raw spans to `out`.
  void scan(std::string_view raw, std::size_t b, std::size_t e, std::vector<span>& out) {
    if (e <= b) return;
    decode(raw, b, e, d);
    found.clear();
    find_pairs(d.text, found);
    find_tokens(d.text, found);
    find_urls(d.text, found);
    find_key_blocks(d.text, found);
    for (const span& f : found) out.push_back({d.raw_of(f.begin), d.raw_of(f.end)});
  }
};

constexpr bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::size_t skip_json_space(std::string_view t, std::size_t i) {
  while (i < t.size() && is_json_space(t[i])) ++i;
  return i;
}

/// The closing quote of the JSON string literal opening at `open`.
std::size_t string_end(std::string_view t, std::size_t open) {
  std::size_t i = open + 1;
  while (i < t.size() && t[i] != '"') i += t[i] == '\\' ? 2 : 1;
  return std::min(i, t.size());
}

/// The JSON value at `v` (a string, array or object) of a secret key: every string literal in
/// it redacted whole. Returns the offset of its last byte.
std::size_t redact_json_value(std::string_view t, std::size_t v, std::vector<span>& out) {
  int depth = 0;
  for (std::size_t i = v; i < t.size(); ++i) {
    if (t[i] == '"') {
      const std::size_t close = string_end(t, i);
      if (close > i + 1) out.push_back({i + 1, close});
      i = close;
    } else if (t[i] == '[' || t[i] == '{') {
      ++depth;
    } else if (t[i] == ']' || t[i] == '}') {
      --depth;
    }
    if (depth == 0) return i;
  }
  return t.size();
}

/// Valid JSON: each string literal is scanned on its own; a secret key's string value is
/// redacted whole.
void scan_json(std::string_view t, std::vector<span>& out) {
  scanner sc;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '"') continue;
    const std::size_t close = string_end(t, i);
    const std::size_t colon = skip_json_space(t, close + 1);
    if (colon < t.size() && t[colon] == ':') {
      const std::size_t v = skip_json_space(t, colon + 1);
      decode(t, i + 1, close, sc.d);
      if (v < t.size() && (t[v] == '"' || t[v] == '[' || t[v] == '{') && secret_pair_name(sc.d.text, ' ')) {
        i = redact_json_value(t, v, out);
        continue;
      }
    }
    sc.scan(t, i + 1, close, out);
    i = close;
  }
}

/// `text` with the union of `spans` replaced.
std::string apply(std::string_view text, std::vector<span>& spans) {
  std::sort(spans.begin(), spans.end(), [](const span& a, const span& b) { return a.begin < b.begin; });
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0, i = 0;
  while (i < spans.size()) {
    const std::size_t b = std::max(spans[i].begin, pos);
    std::size_t e = spans[i].end;
    for (++i; i < spans.size() && spans[i].begin <= e; ++i) e = std::max(e, spans[i].end);
    if (e <= b) continue;
    out.append(text.substr(pos, b - pos));
    out.append(k_redacted);
    pos = e;
  }
  out.append(text.substr(pos));
  return out;
}

}  // namespace

std::string redact_secrets(std::string_view text) {
  std::vector<span> spans;
  if (json::accept(text.begin(), text.end())) {
    scan_json(text, spans);
  } else {
    scanner().scan(text, 0, text.size(), spans);
  }
  if (spans.empty()) return std::string(text);
  return apply(text, spans);
}

}  // namespace warden::secrets
