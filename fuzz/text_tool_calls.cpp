// Fuzzes agent/text_tool_calls.h: every format's parser (hermes, qwen_xml, mistral, llama3) on
// the text after its marker, repair_truncated_json, and the streaming text_call_scanner.
// Invariants: the scanner's result does not depend on how the content is split; what it shows is
// a prefix of the content, all of it when no marker appears, and otherwise the rest starts with
// a format's marker, and a marker gives at least one call; a repair is never empty.
#include "agent/text_tool_calls.h"
#include "fuzz/fuzz_support.h"

namespace warden::fuzz {
namespace {

struct scanned {
  std::string shown;
  std::vector<agent::text_call> calls;
  bool draining = false;
};

scanned scan(const std::vector<std::string_view>& parts) {
  agent::text_call_scanner s;
  scanned out;
  for (auto p : parts) out.shown += s.feed(p);
  out.draining = s.draining();
  auto end = s.finish();
  out.shown += end.text;
  out.calls = std::move(end.calls);
  return out;
}

bool same_calls(const std::vector<agent::text_call>& a, const std::vector<agent::text_call>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].arguments != b[i].arguments) return false;
  }
  return true;
}

void check_scanner(std::string_view text, std::uint8_t seed) {
  const scanned whole = scan({text});
  const scanned split = scan(pieces(text, seed));
  check(whole.shown == split.shown && whole.draining == split.draining, "the shown text does not depend on the split");
  check(same_calls(whole.calls, split.calls), "the calls do not depend on the split");
  check(text.substr(0, whole.shown.size()) == whole.shown, "the shown text is a prefix of the content");
  if (!whole.draining) {
    check(whole.shown == text && whole.calls.empty(), "without a marker everything is shown");
    return;
  }
  bool marker = false;
  for (const auto& f : agent::text_call_formats()) marker = marker || text.substr(whole.shown.size()).starts_with(f.marker);
  check(marker, "what is held starts with a marker");
  check(!whole.calls.empty(), "a marker gives at least one call");
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace warden;
  if (size == 0) return 0;
  const std::string_view text = fuzz::as_text(data + 1, size - 1);
  const auto& formats = agent::text_call_formats();
  const auto& format = formats[data[0] % formats.size()];
  (void)format.parse(text);
  (void)format.parse(std::string(format.marker) + std::string(text));
  if (auto fixed = agent::repair_truncated_json(text)) fuzz::check(!fixed->empty(), "a repair is not empty");
  fuzz::check_scanner(text, data[0]);
  return 0;
}
