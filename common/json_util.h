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

namespace warden {

using json = nlohmann::json;

/// Compact serialization that never throws on bad UTF-8.
inline std::string dump_safe(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

/// Deepest nesting of arrays/objects in `text` (strings and escapes skipped), stopping early once
/// `limit` is exceeded. Lets callers refuse pathological input before the recursive parser
/// could exhaust the stack.
std::size_t json_nesting_depth(std::string_view text, std::size_t limit) noexcept;

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

/// Parses `text` like json::parse (without exceptions: a discarded value on error), and also
/// records the first key that an object repeats in `duplicate_key` ("" when none). Request
/// bodies must be refused then: RFC 8259 §4 leaves duplicates to the parser, so validation and
/// the code that acts on a body could otherwise read `{"x":false,"x":true}` two ways.
json parse_json_checking_keys(std::string_view text, std::string& duplicate_key);

/// True when `bytes` is well-formed UTF-8 (no overlongs, no surrogates, max U+10FFFF).
bool is_valid_utf8(std::string_view bytes) noexcept;

/// Name of a JSON value's type as the OpenAI docs spell it ("string", "array", "object", …).
const char* json_type_name(const json& j) noexcept;

}  // namespace warden
