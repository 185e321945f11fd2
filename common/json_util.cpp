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

namespace {

/// SAX handler of parse_json_checking_keys: the keys of each open object (a vector while small,
/// a hash set past 16 keys, so one object with many keys stays linear), and a value count.
class key_checker {
 public:
  explicit key_checker(std::size_t max_elements) : max_(max_elements) {}

  bool null() { return count(); }
  bool boolean(bool) { return count(); }
  bool number_integer(json::number_integer_t) { return count(); }
  bool number_unsigned(json::number_unsigned_t) { return count(); }
  bool number_float(json::number_float_t, const json::string_t&) { return count(); }
  bool string(json::string_t&) { return count(); }
  bool binary(json::binary_t&) { return count(); }
  bool start_object(std::size_t) {
    if (depth_ == frames_.size()) frames_.emplace_back();
    frames_[depth_].keys.clear();
    frames_[depth_].large.clear();
    ++depth_;
    return count();
  }
  bool end_object() {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) { return count(); }
  bool end_array() { return true; }
  bool key(json::string_t& k) {
    if (duplicate.empty() && depth_ > 0 && !frames_[depth_ - 1].insert(k)) duplicate = k;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    syntax_error = e.id == 406 ? ": a number is too large" : " at byte " + std::to_string(position);
    return false;
  }

  std::string duplicate;
  std::string syntax_error;
  bool too_many = false;

 private:
  struct frame {
    std::vector<std::string> keys;
    std::unordered_set<std::string> large;
    bool insert(const std::string& k) {
      if (!large.empty()) return large.insert(k).second;
      if (std::find(keys.begin(), keys.end(), k) != keys.end()) return false;
      keys.push_back(k);
      if (keys.size() > 16) {
        large.insert(std::make_move_iterator(keys.begin()), std::make_move_iterator(keys.end()));
        keys.clear();
      }
      return true;
    }
  };
  bool count() {
    if (++elements_ <= max_) return true;
    too_many = true;
    return false;
  }
  std::size_t max_;
  std::size_t elements_ = 0;
  std::size_t depth_ = 0;
  std::vector<frame> frames_;
};

}  // namespace

checked_json parse_json_checking_keys(std::string_view text, std::size_t max_elements) {
  checked_json out;
  out.value = json(json::value_t::discarded);
  key_checker checker(max_elements);
  const bool well_formed = json::sax_parse(text.begin(), text.end(), &checker);
  out.duplicate_key = std::move(checker.duplicate);
  out.too_many_elements = checker.too_many;
  out.syntax_error = std::move(checker.syntax_error);
  if (!well_formed && out.syntax_error.empty() && !out.too_many_elements) out.syntax_error = " at its end";
  if (!well_formed || !out.duplicate_key.empty()) return out;
  out.value = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  return out;
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
