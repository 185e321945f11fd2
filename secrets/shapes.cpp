// Rules 3 and 4 of secrets/find_secrets.h that are shapes rather than names: credential calls
// in code (`HTTPBasicAuth(u, 'pw')`, `Client(sid, 'token')`, `os.environ.get('X') or 'pw'`,
// `${SECRET:-pw}`), and values that are secrets whatever their name (a Telegram bot token,
// HTTP Basic credentials, Twilio `AC…:token`, a Mailgun key, a .pgpass line, a bare 32-hex key).
//
// Every rule starts at a word boundary and reads at most its format's length, so the scan is
// linear; the backward looks (the call's name, the line of an `or`) are bounded.
#include <optional>
#include <string_view>
#include <vector>

#include "secrets/scan_text.h"
#include "secrets/secret_detect.h"

namespace warden::secrets::detail {
namespace {

/// The run of `accept` characters at `i`, at most `max` long.
template <class F>
std::size_t run(std::string_view s, std::size_t i, std::size_t max, F accept) {
  std::size_t n = 0;
  while (i + n < s.size() && n < max && accept(s[i + n])) ++n;
  return n;
}

/// Bit 1 lowercase, 2 uppercase, 4 digit.
unsigned classes_of(std::string_view v) {
  unsigned c = 0;
  for (char x : v) c |= is_lower(x) ? 1u : is_upper(x) ? 2u : is_digit(x) ? 4u : 0u;
  return c;
}
bool mixed(std::string_view v) {
  const unsigned c = classes_of(v);
  return (c & (c - 1)) != 0;  // two bits or more
}

// ---------------------------------------------------------------------------------------------
// Values that are secrets whatever their name.

/// A Telegram bot token at `i`: 6 to 12 digits, `:`, at least 30 of [A-Za-z0-9_-] (mixed).
std::size_t telegram_at(std::string_view s, std::size_t i) {
  const std::size_t digits = run(s, i, 13, is_digit);
  if (digits < 6 || digits > 12 || i + digits >= s.size() || s[i + digits] != ':') return 0;
  const std::size_t from = i + digits + 1;
  const std::size_t body = run(s, from, 128, is_b64url);
  if (body < 30 || !mixed(s.substr(from, body))) return 0;
  return digits + 1 + body;
}

int base64_value(char c) {
  if (is_upper(c)) return c - 'A';
  if (is_lower(c)) return c - 'a' + 26;
  if (is_digit(c)) return c - '0' + 52;
  return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/// Base64 `v` (padding stripped) decodes to printable text (UTF-8 allowed) holding a `:`.
bool decodes_to_user_password(std::string_view v) {
  if (v.size() % 4 == 1) return false;
  bool colon = false;
  unsigned acc = 0;
  int bits = 0;
  for (char c : v) {
    acc = (acc << 6) | static_cast<unsigned>(base64_value(c));
    bits += 6;
    if (bits < 8) continue;
    bits -= 8;
    const auto byte = static_cast<unsigned char>((acc >> bits) & 0xffu);
    if (byte < 0x20 || byte == 0x7f) return false;
    colon = colon || byte == ':';
  }
  return colon;
}

/// `Basic <base64 of user:password>` at `i`: the base64's span.
std::optional<span> basic_at(std::string_view s, std::size_t i) {
  constexpr std::string_view word = "basic";
  if (!istarts_with(s.substr(i), word)) return std::nullopt;
  std::size_t k = i + word.size();
  const std::size_t blanks = run(s, k, 8, is_blank);
  if (blanks == 0) return std::nullopt;
  k += blanks;
  const std::size_t body = run(s, k, 1024, [](char c) { return base64_value(c) >= 0; });
  const std::size_t pad = run(s, k + body, 2, [](char c) { return c == '='; });
  if (body < 8 || (k + body + pad < s.size() && is_b64url(s[k + body + pad]))) return std::nullopt;
  if (!decodes_to_user_password(s.substr(k, body))) return std::nullopt;
  return span{k, k + body + pad};
}

/// Twilio `AC` (account) or `SK` (API key) + 32 hex, `:`, then its secret (32 letters and
/// digits or more): the secret's span.
std::optional<span> twilio_at(std::string_view s, std::size_t i) {
  if (i + 35 >= s.size()) return std::nullopt;
  if (!((s[i] == 'A' && s[i + 1] == 'C') || (s[i] == 'S' && s[i + 1] == 'K'))) return std::nullopt;
  if (run(s, i + 2, 33, is_hex) != 32 || s[i + 34] != ':') return std::nullopt;
  const std::size_t body = run(s, i + 35, 128, is_alnum);
  if (body < 32) return std::nullopt;
  return span{i + 35, i + 35 + body};
}

/// Mailgun's newer key form at `i`: 32 hex, `-`, 8 hex, `-`, 8 hex (nothing alphanumeric after).
std::size_t mailgun_at(std::string_view s, std::size_t i) {
  if (run(s, i, 33, is_hex) != 32) return 0;
  std::size_t k = i + 32;
  for (int part = 0; part < 2; ++part) {
    if (k >= s.size() || s[k] != '-' || run(s, k + 1, 9, is_hex) != 8) return 0;
    k += 9;
  }
  if (k < s.size() && is_alnum(s[k])) return 0;
  return mixed(s.substr(i, 32)) ? k - i : 0;
}

constexpr bool pgpass_host_char(char c) { return is_alnum(c) || c == '.' || c == '-' || c == '_' || c == '*'; }
constexpr bool pgpass_field_char(char c) { return c != ':' && !is_space(c) && !is_quote(c); }
constexpr bool pgpass_password_char(char c) { return !is_space(c) && !is_quote(c); }

/// A .pgpass line `host:port:database:user:password` at `i` (the start of a word): the
/// password's span. The host holds a letter, a dot or `*` (not `12:34:56:78:90`).
std::optional<span> pgpass_at(std::string_view s, std::size_t i) {
  const std::size_t host = run(s, i, 254, pgpass_host_char);
  if (host == 0 || host > 253 || i + host >= s.size() || s[i + host] != ':') return std::nullopt;
  const std::string_view h = s.substr(i, host);
  if (h.find_first_not_of("0123456789") == std::string_view::npos) return std::nullopt;
  std::size_t k = i + host + 1;
  const std::size_t port = k < s.size() && s[k] == '*' ? 1 : run(s, k, 6, is_digit);
  if (port == 0 || port > 5 || k + port >= s.size() || s[k + port] != ':') return std::nullopt;
  k += port + 1;
  for (int field = 0; field < 2; ++field) {  // database, user
    const std::size_t n = run(s, k, 257, pgpass_field_char);
    if (n == 0 || n > 256 || k + n >= s.size() || s[k + n] != ':') return std::nullopt;
    k += n + 1;
  }
  const std::size_t pw = run(s, k, 257, pgpass_password_char);
  if (pw == 0 || pw > 256) return std::nullopt;
  return span{k, k + pw};
}

/// Where a .pgpass line may start: the text's start, or after a blank, a line break, a quote,
/// `=`, `(` or `>`.
bool word_start(std::string_view s, std::size_t i) {
  if (i == 0) return true;
  const char b = s[i - 1];
  return is_space(b) || is_quote(b) || b == '=' || b == '(' || b == '>';
}

/// The shapes that start at `i` (a word boundary): records one and returns its length, or 0.
std::size_t value_shape_at(std::string_view s, std::size_t i, std::vector<span>& out) {
  const char c = s[i];
  if (is_digit(c)) {
    if (const std::size_t n = telegram_at(s, i)) {
      out.push_back({i, i + n});
      return n;
    }
  }
  if (c == 'A' || c == 'S') {
    if (const auto t = twilio_at(s, i)) {
      out.push_back(*t);
      return t->end - i;
    }
  }
  if (c == 'B' || c == 'b') {
    if (const auto b = basic_at(s, i)) {
      out.push_back(*b);
      return b->end - i;
    }
  }
  if (is_hex(c)) {
    if (const std::size_t n = mailgun_at(s, i)) {
      out.push_back({i, i + n});
      return n;
    }
  }
  if (word_start(s, i)) {
    if (const auto p = pgpass_at(s, i)) {
      out.push_back(*p);
      return p->end - i;
    }
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Credentials in code.

bool ends_with(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

/// `bind`/`bind_s` as a whole word at the end of a call's name (`conn.simple_bind_s`).
bool ldap_bind(std::string_view name) {
  for (std::string_view suffix : {std::string_view("bind_s"), std::string_view("bind")}) {
    if (!ends_with(name, suffix)) continue;
    const std::size_t at = name.size() - suffix.size();
    if (at == 0 || !is_alnum(name[at - 1])) return true;
  }
  return false;
}

/// The first argument of a call at `k`: a string literal or a (dotted) name; where it ends.
std::optional<std::size_t> simple_argument(std::string_view s, std::size_t k) {
  std::size_t end = k;
  if (string_literal_at(s, k, end)) return end;
  const std::size_t n = run(s, k, k_max_name, [](char c) { return is_ident(c) || c == '.'; });
  if (n == 0) return std::nullopt;
  return k + n;
}

/// `(` at `i` of a credential call: `…Auth(a, 'pw')`, `…bind_s(dn, 'pw')`, `…Client(a, 'token')`
/// (the token at least 16 characters, no blanks): the second argument's content.
std::size_t credential_call_at(std::string_view s, std::size_t i, std::vector<span>& out) {
  std::size_t b = i;
  while (b > 0 && i - b <= k_max_name && (is_ident(s[b - 1]) || s[b - 1] == '.')) --b;
  const std::string_view name = s.substr(b, i - b);
  const bool client = ends_with(name, "Client");
  if (!client && !ends_with(name, "Auth") && !ldap_bind(name)) return i + 1;
  std::size_t k = i + 1;
  while (k < s.size() && is_space(s[k])) ++k;
  const auto first = simple_argument(s, k);
  if (!first) return i + 1;
  k = *first;
  while (k < s.size() && is_blank(s[k])) ++k;
  if (k >= s.size() || s[k] != ',') return i + 1;
  ++k;
  while (k < s.size() && is_space(s[k])) ++k;
  std::size_t end = k;
  const auto second = string_literal_at(s, k, end);
  if (!second || second->end == second->begin) return i + 1;
  const std::string_view v = s.substr(second->begin, second->end - second->begin);
  if (client && (v.size() < 16 || v.find_first_of(" \t") != std::string_view::npos)) return i + 1;
  out.push_back(*second);
  return end;
}

/// The line of `i`: where it starts (at most k_max_look_back back; npos when further).
std::size_t line_start(std::string_view s, std::size_t i) {
  std::size_t b = i;
  while (b > 0 && i - b < k_max_look_back && s[b - 1] != '\n') --b;
  return b > 0 && s[b - 1] != '\n' ? std::string_view::npos : b;
}

/// The name a line assigns to (`name = …`, `self.name = …`), or "".
std::string_view assigned_name(std::string_view line) {
  std::size_t k = run(line, 0, line.size(), is_blank);
  const std::size_t n = run(line, k, k_max_name, [](char c) { return is_ident(c) || c == '.'; });
  std::size_t e = k + n;
  e += run(line, e, 8, is_blank);
  if (n == 0 || e >= line.size() || line[e] != '=' || (e + 1 < line.size() && line[e + 1] == '=')) return {};
  return line.substr(k, n);
}

/// The name read by the last environment read on `line` (`getenv('X')`, `environ.get("X")`,
/// `environ['X']`), or nullopt when there is none.
std::optional<std::string_view> environment_read(std::string_view line) {
  std::size_t best = std::string_view::npos, after = 0;
  for (std::string_view call : {"getenv(", "environ.get(", "environ["}) {
    const auto at = line.rfind(call);
    if (at != std::string_view::npos && (best == std::string_view::npos || at > best)) {
      best = at;
      after = at + call.size();
    }
  }
  if (best == std::string_view::npos) return std::nullopt;
  std::size_t end = after;
  const auto lit = string_literal_at(line, after, end);
  if (!lit) return std::string_view();
  return line.substr(lit->begin, lit->end - lit->begin);
}

/// `or` at `i` followed by a string literal, after an environment read on the same line: the
/// literal, when the variable read or the name assigned is secret.
std::size_t env_fallback_at(std::string_view s, std::size_t i, std::vector<span>& out) {
  if (i == 0 || !is_blank(s[i - 1]) || i + 3 >= s.size() || s[i + 1] != 'r' || !is_blank(s[i + 2])) return i + 1;
  std::size_t k = i + 3;
  while (k < s.size() && is_blank(s[k])) ++k;
  std::size_t end = k;
  const auto lit = string_literal_at(s, k, end);
  if (!lit || lit->end == lit->begin) return i + 1;
  const std::size_t b = line_start(s, i);
  if (b == std::string_view::npos) return i + 1;
  const std::string_view line = s.substr(b, i - b);
  const auto env = environment_read(line);
  if (!env) return i + 1;
  if (!is_secret_name(*env) && !is_secret_name(assigned_name(line))) return i + 1;
  out.push_back(*lit);
  return end;
}

/// `${NAME:-default}` (also `-`, `:=`, `=`) with a secret NAME at `i`: the default.
std::size_t secret_default_at(std::string_view s, std::size_t i, std::vector<span>& out) {
  if (i + 2 >= s.size() || s[i + 1] != '{') return i + 1;
  std::vector<span> found;
  std::size_t k = i + 2;
  const std::size_t n = run(s, k, k_max_name + 1, is_ident);
  if (n == 0 || n > k_max_name || !is_secret_name(s.substr(k, n))) return i + 1;
  // value_at reads `${…}` as an expansion and records its default
  const auto end = value_at(s, i, false, found);
  for (const auto& f : found) out.push_back(f);
  return end ? *end : i + 1;
}

}  // namespace

void find_value_shapes(std::string_view s, std::vector<span>& out) {
  for (std::size_t i = 0; i < s.size();) {
    const char before = i == 0 ? ' ' : s[i - 1];
    const bool after_bot = i >= 3 && is_digit(s[i]) && s.compare(i - 3, 3, "bot") == 0 && (i == 3 || !is_alnum(s[i - 4]));
    if (is_alnum(before) && !after_bot) {
      ++i;
      continue;
    }
    const std::size_t n = value_shape_at(s, i, out);
    i += n > 0 ? n : 1;
  }
}

std::size_t code_shape_at(std::string_view s, std::size_t i, std::vector<span>& out) {
  switch (s[i]) {
    case '(': return credential_call_at(s, i, out);
    case '$': return secret_default_at(s, i, out);
    case 'o': return env_fallback_at(s, i, out);
    default: return i + 1;
  }
}

bool is_hex32_key(std::string_view piece) {
  const std::size_t b = run(piece, 0, piece.size(), is_space);
  std::size_t e = piece.size();
  while (e > b && is_space(piece[e - 1])) --e;
  const std::string_view v = piece.substr(b, e - b);
  if (v.size() != 32 || run(v, 0, 32, is_hex) != 32) return false;
  const bool digit = v.find_first_of("0123456789") != std::string_view::npos;
  const bool letter = v.find_first_not_of("0123456789") != std::string_view::npos;
  return digit && letter;
}

}  // namespace warden::secrets::detail
