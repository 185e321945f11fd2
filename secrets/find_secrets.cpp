// The detector of secrets/find_secrets.h: the shared helpers of scan_text.h, the decoding of
// backslash escapes, the well-known token and URL rules, and the JSON mode that scans each
// string literal on its own. The other rule families live in name_rules.cpp, key_blocks.cpp,
// shapes.cpp and command_shapes.cpp.
#include "secrets/find_secrets.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "common/json_util.h"
#include "secrets/redact.h"
#include "secrets/scan_text.h"
#include "secrets/secret_detect.h"

namespace warden::secrets {
namespace detail {

char ascii_lower(char c) { return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return ascii_lower(x) == ascii_lower(y);
         });
}

bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

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

std::size_t skip_string_prefix(std::string_view s, std::size_t k) {
  std::size_t p = k;
  while (p < s.size() && p < k + 2 && std::string_view("bBrRfFuU").find(s[p]) != std::string_view::npos) ++p;
  return p > k && p < s.size() && (s[p] == '"' || s[p] == '\'') ? p : k;
}

std::optional<span> string_literal_at(std::string_view s, std::size_t k, std::size_t& end) {
  k = skip_string_prefix(s, k);
  if (k >= s.size() || (s[k] != '"' && s[k] != '\'')) return std::nullopt;
  const std::size_t e = quote_end(s, k);
  if (e >= s.size() || s[e] != s[k]) return std::nullopt;
  end = e + 1;
  return span{k + 1, e};
}

bool is_expansion_at(std::string_view s, std::size_t k) {
  if (k >= s.size()) return false;
  if (s[k] == '`') return true;
  if (s[k] != '$' || k + 1 >= s.size()) return false;
  const char n = s[k + 1];
  return n == '(' || n == '{' || is_alpha(n) || n == '_' || is_digit(n);
}

namespace {

/// Where a URL ends, and where its authority ends.
constexpr bool ends_url(char c) { return is_space(c) || is_quote(c) || c == '<' || c == '>'; }
constexpr bool ends_authority(char c) { return ends_url(c) || c == '/' || c == '?' || c == '#'; }

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
// Rule 4: values that are secrets whatever their name (the rest: key_blocks.cpp, shapes.cpp).

void find_tokens(std::string_view s, std::vector<span>& out) {
  for (auto t = find_secret_token(s, 0); t; t = find_secret_token(s, t->second)) out.push_back({t->first, t->second});
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
    find_command_shapes(d.text, found);
    find_tokens(d.text, found);
    find_urls(d.text, found);
    find_value_shapes(d.text, found);
    find_key_blocks(d.text, found);
    if (is_hex32_key(d.text)) found.push_back({0, d.text.size()});
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

}  // namespace
}  // namespace detail

std::vector<secret_span> find_secrets(std::string_view text) {
  std::vector<secret_span> spans;
  if (json::accept(text.begin(), text.end())) {
    detail::scan_json(text, spans);
  } else {
    detail::scanner().scan(text, 0, text.size(), spans);
  }
  return spans;
}

}  // namespace warden::secrets
