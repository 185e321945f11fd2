// scan_text — what the detector's rule files share (secrets/find_secrets.cpp, name_rules.cpp,
// key_blocks.cpp, shapes.cpp, command_shapes.cpp): ASCII character classes (locale-independent), the span type,
// and the value readers of the name rules. Internal to secrets/: the rules themselves are
// documented in secrets/find_secrets.h.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "secrets/find_secrets.h"

namespace warden::secrets::detail {

using span = secret_span;

/// Names longer than this are not looked at (keeps the backward scans bounded).
inline constexpr std::size_t k_max_name = 128;
/// How far back a rule looks for the command or the line it is in.
inline constexpr std::size_t k_max_look_back = 256;

constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
constexpr bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
constexpr bool is_alpha(char c) { return is_lower(c) || is_upper(c); }
constexpr bool is_alnum(char c) { return is_digit(c) || is_alpha(c); }
constexpr bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
constexpr bool is_blank(char c) { return c == ' ' || c == '\t'; }
constexpr bool is_space(char c) { return is_blank(c) || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
constexpr bool is_quote(char c) { return c == '"' || c == '\'' || c == '`'; }
constexpr bool is_ident(char c) { return is_alnum(c) || c == '_'; }
constexpr bool is_name_char(char c) { return is_alnum(c) || c == '_' || c == '-' || c == '.'; }
constexpr bool is_b64(char c) { return is_alnum(c) || c == '+' || c == '/' || c == '='; }
constexpr bool is_b64url(char c) { return is_alnum(c) || c == '_' || c == '-'; }

/// Where an unquoted value ends.
constexpr bool ends_value(char c) {
  switch (c) {
    case ';': case '&': case '|': case ',': case '}': case ')': case ']': case '<': case '>': return true;
    default: return is_space(c) || is_quote(c);
  }
}

char ascii_lower(char c);
bool iequals(std::string_view a, std::string_view b);
/// True when `s` starts with `prefix`, ASCII case ignored.
bool istarts_with(std::string_view s, std::string_view prefix);

/// Where the quoted string opening at `open` ends: its closing quote (a backslash escapes the
/// next byte), else the end of the line or of the text.
std::size_t quote_end(std::string_view s, std::size_t open);

/// A Python string prefix (`b`, `r`, `f`, `u`, `rb`, …) of at most two letters before a quote
/// at `k`: where the quote is, else `k`.
std::size_t skip_string_prefix(std::string_view s, std::size_t k);

/// The content span of the string literal at `k` (a Python prefix allowed) when it closes on its
/// line; nullopt when there is none. `end` gets the offset after the closing quote.
std::optional<span> string_literal_at(std::string_view s, std::size_t k, std::size_t& end);

/// True when the text at `k` is an expansion rather than a literal: `$(`, `${`, `$NAME`, `$1`
/// or a backquote (a command substitution or a variable, whose value is not in the text).
bool is_expansion_at(std::string_view s, std::size_t k);

/// Does the value after `name` have to be hidden? `before` is the byte before the name (a
/// URL query's `?`, `&` or `#` applies the credential-parameter rule instead of the name rule).
bool secret_pair_name(std::string_view name, char before);

/// The value starting at `from` (after blanks), recorded in `out`; returns where it ends, or
/// nullopt when there is none. A bare value is taken only when `bare` is set (find_secrets.cpp).
std::optional<std::size_t> value_at(std::string_view s, std::size_t from, bool bare, std::vector<span>& out);

// The rule families of find_secrets.h, each appending the spans it finds in decoded text `s`.
void find_pairs(std::string_view s, std::vector<span>& out);           // name_rules.cpp
void find_key_blocks(std::string_view s, std::vector<span>& out);      // key_blocks.cpp
void find_value_shapes(std::string_view s, std::vector<span>& out);    // shapes.cpp
void find_command_shapes(std::string_view s, std::vector<span>& out);  // command_shapes.cpp
/// The code shapes that start at one separator byte (shapes.cpp): `(` of a credential call,
/// ` or '…'` after an environment read, `${NAME:-default}`. Returns where to go on scanning.
std::size_t code_shape_at(std::string_view s, std::size_t i, std::vector<span>& out);
/// The whole piece is a bare 32-hex key (shapes.cpp).
bool is_hex32_key(std::string_view piece);

}  // namespace warden::secrets::detail
