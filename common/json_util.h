// JSON helpers shared by every module.
//
// `dump_safe` serializes with invalid UTF-8 replaced by U+FFFD (nlohmann's default throws on
// invalid UTF-8, dependencies.md §3), so text from a model or a client can never crash a handler.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/utf8.h"  // is_valid_utf8 lived here; callers of json_util still get it

namespace warden {

using json = nlohmann::json;

/// Compact serialization that never throws on bad UTF-8.
inline std::string dump_safe(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

/// Where a walk by walk_json_brackets ended.
struct json_walk_end {
  std::size_t stopped_at;  ///< index of the bracket the visitor stopped at; npos when it reached the end
  bool in_string;          ///< the text ended inside a string literal
  bool escaped;            ///< ... right after its backslash
};

/// The one lexical walker over JSON text that every bracket scanner in warden uses: visits the
/// brackets `[ ] { }` of `text` from byte `from` on (`from` must not be inside a string
/// literal), skipping string literals (a `"` opens one, an unescaped `"` closes it, a backslash
/// escapes the next byte). It validates nothing else (numbers, literals, commas and mismatched
/// brackets are the caller's business), so it also serves text that is not JSON yet: cut short,
/// or with prose around it (RFC 8259 §7: a quote or backslash inside a string is always escaped).
/// `visit(std::size_t index, char bracket) -> bool` returns false to stop the walk there.
template <class Visit>
json_walk_end walk_json_brackets(std::string_view text, std::size_t from, Visit&& visit) {
  bool in_string = false, escaped = false;
  for (std::size_t i = from; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == ']' || c == '{' || c == '}') {
      if (!visit(i, c)) return {i, false, false};
    }
  }
  return {std::string_view::npos, in_string, escaped};
}

/// Deepest nesting of arrays/objects in `text` (strings and escapes skipped; a closer with
/// nothing open is ignored), stopping early once `limit` is exceeded. Lets callers refuse
/// pathological input before the recursive parser could exhaust the stack.
std::size_t json_nesting_depth(std::string_view text, std::size_t limit) noexcept;

/// One past the bracket that closes the first array/object opening at or after `from`
/// (strings skipped, closers before the first opener ignored, bracket kinds not matched:
/// `{]` counts as closed); npos when the text ends first. Finds where a JSON value embedded in
/// text ends, e.g. the arguments after a tool-call marker.
std::size_t json_balanced_end(std::string_view text, std::size_t from = 0) noexcept;

/// Nesting limit for any JSON warden parses; far above any real chat request.
inline constexpr std::size_t k_max_json_depth = 256;

/// Parses `text`; nullopt when it is not one complete JSON value or nests deeper than
/// k_max_json_depth. Never throws.
inline std::optional<json> parse_json(std::string_view text) {
  if (json_nesting_depth(text, k_max_json_depth) > k_max_json_depth) return std::nullopt;
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

/// Most values (objects, arrays and scalars, each counted once) one request body may hold. A
/// 32 MiB body of `[0,0,…]` would otherwise become ~16 M nodes (~0.5 GiB); a long real chat
/// (10,000 messages with content parts and tool calls) holds under 200,000.
inline constexpr std::size_t k_max_json_elements = 1'000'000;

/// What parse_json_checking_keys found.
struct checked_json {
  json value;                      ///< the parsed value; discarded when anything below is set
  std::string duplicate_key;       ///< the first key an object repeats ("" when none)
  bool too_many_elements = false;  ///< more than `max_elements` values
  std::string syntax_error;        ///< "" or why the text is not JSON, to follow "not valid
                                   ///< JSON": " at byte 17", ": a number is too large"
  bool ok() const noexcept { return !value.is_discarded(); }
};

/// Parses `text` in linear time: one SAX pass (nlohmann's parser, no DOM) finds the first key an
/// object repeats, counts the values and stops past `max_elements`; only then is the text parsed
/// into a value, without a callback (nlohmann 3.11's callback path is quadratic in an array's
/// length: 100,000 items took 18.8 s against 0.07 s, issue 23). Request bodies with a duplicate
/// must be refused: RFC 8259 §4 leaves duplicates to the parser, so validation and the code that
/// acts on a body could otherwise read `{"x":false,"x":true}` two ways. Never throws.
checked_json parse_json_checking_keys(std::string_view text, std::size_t max_elements = k_max_json_elements);

/// Name of a JSON value's type as the OpenAI docs spell it ("string", "array", "object", …).
const char* json_type_name(const json& j) noexcept;

}  // namespace warden
