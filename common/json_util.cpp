#include "common/json_util.h"

#include <algorithm>
#include <unordered_set>
#include <vector>

namespace warden {

std::size_t json_nesting_depth(std::string_view text, std::size_t limit) noexcept {
  std::size_t depth = 0, deepest = 0;
  walk_json_brackets(text, 0, [&](std::size_t, char c) {
    if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      return deepest <= limit;
    }
    if (depth > 0) --depth;
    return true;
  });
  return deepest;
}

std::size_t json_balanced_end(std::string_view text, std::size_t from) noexcept {
  std::size_t depth = 0;
  const json_walk_end end = walk_json_brackets(text, from, [&](std::size_t, char c) {
    if (c == '[' || c == '{') ++depth;
    else if (depth > 0 && --depth == 0) return false;
    return true;
  });
  return end.stopped_at == std::string_view::npos ? end.stopped_at : end.stopped_at + 1;
}

json parse_json_checking_keys(std::string_view text, std::string& duplicate_key) {
  duplicate_key.clear();
  std::vector<std::unordered_set<std::string>> open_objects;
  json::parser_callback_t cb = [&](int, json::parse_event_t ev, json& parsed) {
    switch (ev) {
      case json::parse_event_t::object_start: open_objects.emplace_back(); break;
      case json::parse_event_t::object_end:
        if (!open_objects.empty()) open_objects.pop_back();
        break;
      case json::parse_event_t::key:
        if (!open_objects.empty() && parsed.is_string() && !open_objects.back().insert(parsed.get<std::string>()).second &&
            duplicate_key.empty()) {
          duplicate_key = parsed.get<std::string>();
        }
        break;
      case json::parse_event_t::array_start:
      case json::parse_event_t::array_end:
      case json::parse_event_t::value: break;
    }
    return true;
  };
  return json::parse(text.begin(), text.end(), cb, /*allow_exceptions=*/false);
}

const char* json_type_name(const json& j) noexcept {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "object";
    case json::value_t::array: return "array";
    case json::value_t::string: return "string";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    case json::value_t::binary: return "binary";
    case json::value_t::discarded: return "invalid";
  }
  return "invalid";
}

}  // namespace warden
