// Fuzzes api/wire/json_prefix.h, the validator the Anthropic stream sends tool-call arguments
// through (api/anthropic/stream_render.h): fed in pieces as a model streams them.
// Invariants (json_prefix.h): what it accepts does not depend on the split; the accepted text up
// to the last safe point, closed with closing(), parses as one JSON object (after the UTF-8
// repair every stream write gets); a complete() object parses as it is; nothing is accepted
// after a refused byte.
#include "api/wire/json_prefix.h"
#include "common/json_util.h"
#include "common/utf8.h"
#include "fuzz/fuzz_support.h"

namespace warden::fuzz {
namespace {

void check_closes(std::string_view text, const api::wire::json_object_prefix& p, std::size_t accepted) {
  check(p.safe_length() <= accepted, "the safe point is within what was accepted");
  const std::string closed = to_valid_utf8(std::string(text.substr(0, p.safe_length())) + p.closing());
  const auto j = parse_json(closed);
  check(j.has_value() && j->is_object(), "the safe prefix plus closing() is a JSON object");
  if (p.complete()) {
    const auto whole = parse_json(to_valid_utf8(text.substr(0, accepted)));
    check(whole.has_value() && whole->is_object(), "a complete object parses as it is");
  }
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace warden;
  if (size == 0) return 0;
  const std::string_view text = fuzz::as_text(data + 1, size - 1);
  api::wire::json_object_prefix whole;
  const std::size_t at_once = whole.feed(text);
  api::wire::json_object_prefix split;
  std::size_t accepted = 0;
  bool refused = false;
  for (auto piece : fuzz::pieces(text, data[0])) {
    const std::size_t n = split.feed(piece);
    fuzz::check(!refused || n == 0, "nothing is accepted after a refused byte");
    if (n < piece.size()) refused = true;
    accepted += n;
  }
  fuzz::check(accepted == at_once, "the accepted length does not depend on the split");
  fuzz::check(split.safe_length() == whole.safe_length() && split.closing() == whole.closing(),
              "the safe point and closing do not depend on the split");
  fuzz::check_closes(text, whole, at_once);
  return 0;
}
