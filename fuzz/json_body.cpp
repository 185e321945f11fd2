// Fuzzes how warden reads a JSON request body (common/json_fields.h parse_request_body, the
// screen every surface's parser starts with) and the helpers under it (common/json_util.h:
// parse_json_checking_keys, parse_json, json_nesting_depth, json_balanced_end; common/utf8.h).
// Invariants: a value parse_json_checking_keys accepts has no duplicate key, is what parse_json
// reads and survives dump_safe → parse unchanged; a refusal says why; parse_request_body gives
// only objects; to_valid_utf8 is valid UTF-8, keeps valid text unchanged and keeps utf8_length;
// utf8_prefix is a prefix of at most the asked code points.
#include "common/json_fields.h"
#include "common/json_util.h"
#include "common/utf8.h"
#include "fuzz/fuzz_support.h"

namespace warden::fuzz {
namespace {

void check_checked_json(std::string_view text) {
  const checked_json c = parse_json_checking_keys(text);
  if (!c.ok()) {
    check(!c.duplicate_key.empty() || !c.syntax_error.empty() || c.too_many_elements, "a refusal says why");
    return;
  }
  check(c.duplicate_key.empty() && c.syntax_error.empty() && !c.too_many_elements, "accepted with a reason to refuse");
  if (json_nesting_depth(text, k_max_json_depth) > k_max_json_depth) return;  // parse_json refuses those
  const auto plain = parse_json(text);
  check(plain.has_value() && *plain == c.value, "parse_json reads the same value");
  const auto again = parse_json(dump_safe(c.value));
  check(again.has_value() && *again == c.value, "dump_safe then parse gives the value back");
}

void check_utf8(std::string_view text) {
  const std::string valid = to_valid_utf8(text);
  check(is_valid_utf8(valid), "to_valid_utf8 gives valid UTF-8");
  check(!is_valid_utf8(text) || valid == text, "valid text is kept");
  check(utf8_length(valid) == utf8_length(text), "repair keeps the code point count");
  check(incomplete_utf8_tail(text) <= 3, "an incomplete tail is at most 3 bytes");
  const std::size_t n = utf8_length(text);
  const std::string_view half = utf8_prefix(text, n / 2);
  check(text.substr(0, half.size()) == half, "utf8_prefix is a prefix");
  check(utf8_length(half) == n / 2, "utf8_prefix holds the asked code points");
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace warden;
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::check_checked_json(text);
  fuzz::check_utf8(text);
  if (auto body = parse_request_body(text, "messages")) fuzz::check(body->is_object(), "a request body is an object");
  const std::size_t end = json_balanced_end(text);
  fuzz::check(end == std::string_view::npos || (end >= 1 && end <= text.size()), "json_balanced_end within the text");
  return 0;
}
