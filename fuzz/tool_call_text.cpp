// Fuzzes engine/tool_call_text.h: every family's parser at every opener (and at the start),
// repair_truncated_json, heal_text and the streaming text_call_scanner.
// Invariants: a parsed block lies inside the text; the scanner's result does not depend on how
// the content is split; what it shows is a prefix of the content; with no call healed the text
// comes back exactly as written; a healed call names a declared tool and its arguments are a
// JSON object; a repair is never empty.
#include "common/json_util.h"
#include "engine/tool_call_text.h"
#include "fuzz/fuzz_support.h"

namespace warden::fuzz {
namespace {

const std::set<std::string> k_declared = {"get_weather", "lookup", "python", "a"};

struct scanned {
  std::string shown;
  std::vector<engine::healed_piece> rest;
};

scanned scan(const std::vector<std::string_view>& parts) {
  engine::text_call_scanner s(k_declared);
  scanned out;
  for (auto p : parts) out.shown += s.feed(p);
  out.rest = s.finish();
  return out;
}

bool same(const scanned& a, const scanned& b) {
  if (a.shown != b.shown || a.rest.size() != b.rest.size()) return false;
  for (std::size_t i = 0; i < a.rest.size(); ++i) {
    const auto &x = a.rest[i], &y = b.rest[i];
    if (x.text != y.text || x.call.has_value() != y.call.has_value()) return false;
    if (x.call && (x.call->name != y.call->name || x.call->arguments != y.call->arguments)) return false;
  }
  return true;
}

void check_scanner(std::string_view text, std::uint8_t seed) {
  const scanned whole = scan({text});
  const scanned split = scan(pieces(text, seed));
  check(same(whole, split), "the result does not depend on the split");
  check(text.substr(0, whole.shown.size()) == whole.shown, "the shown text is a prefix of the content");
  std::string all = whole.shown;
  bool healed = false;
  for (const auto& p : whole.rest) {
    if (!p.call) {
      all += p.text;
      continue;
    }
    healed = true;
    check(k_declared.count(p.call->name) == 1, "a healed call names a declared tool");
    auto args = parse_json(p.call->arguments);
    check(args && args->is_object(), "a healed call's arguments are a JSON object");
  }
  if (!healed) check(all == text, "with no call healed the text comes back as written");
}

void check_parsers(std::string_view text) {
  for (const auto& f : engine::text_call_families()) {
    for (std::string_view o : f.openers) {
      const std::string with = std::string(o) + std::string(text);
      if (auto b = f.parse(with, 0)) check(b->begin == 0 && b->end <= with.size(), "a block lies inside the text");
    }
    if (f.openers.empty() && !text.empty()) {
      if (auto b = f.parse(text, 0)) check(b->end <= text.size(), "a block lies inside the text");
    }
  }
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace warden;
  if (size == 0) return 0;
  const std::string_view text = fuzz::as_text(data + 1, size - 1);
  fuzz::check_parsers(text);
  if (auto fixed = engine::repair_truncated_json(text)) fuzz::check(!fixed->empty(), "a repair is not empty");
  fuzz::check_scanner(text, data[0]);
  return 0;
}
