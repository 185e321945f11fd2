// Fuzzes the upstream's stream as warden decodes it: common/sse.h's parser (any split of the
// bytes), engine/chat_service.h's chunk_reader (frames → chunks, [DONE], error and malformed
// frames, the forced-call rewriter of engine/forced_tool_call.h) and engine/chat_backend.h's
// openai_chunk_decoder (chunks → model events).
// Invariants: the parser's events do not depend on how the bytes are split; data_frame(p) parses
// back to one event holding p (p without \r); a comment frame is no event; no chunk follows a
// failed event (chat_stream stops at the first); the decoder's tool-call indexes are dense,
// every delta names a started call and finish() closes the calls still open.
#include <deque>

#include "common/sse.h"
#include "engine/chat_backend.h"
#include "engine/chat_service.h"
#include "fuzz/fuzz_support.h"

namespace warden::fuzz {
namespace {

bool same_events(const std::vector<sse::event>& a, const std::vector<sse::event>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].data != b[i].data) return false;
  }
  return true;
}

void check_parser(std::string_view text, std::uint8_t seed) {
  sse::parser whole(512);
  const auto at_once = whole.feed(text);
  sse::parser split(512);
  std::vector<sse::event> in_pieces;
  for (auto p : pieces(text, seed)) {
    for (auto& e : split.feed(p)) in_pieces.push_back(std::move(e));
  }
  check(same_events(at_once, in_pieces), "sse events do not depend on the split");
  check(whole.failed() == split.failed() && whole.has_partial() == split.has_partial(), "same parser state");
  if (text.find('\r') == std::string_view::npos) {
    sse::parser back;
    const auto events = back.feed(sse::data_frame(text));
    check(events.size() == 1 && events[0].data == text && !back.has_partial(), "data_frame parses back");
  }
  sse::parser comment;
  check(comment.feed(sse::comment_frame(text)).empty() && !comment.has_partial(), "a comment is no event");
}

/// Decodes the chunks as the tool loop would and checks the tool-call bookkeeping.
void decode_chunks(const std::deque<engine::chat_event>& events) {
  engine::openai_chunk_decoder decoder;
  std::size_t started = 0;
  std::vector<bool> open;
  auto track = [&](const model::stream_event& e) {
    if (const auto* s = std::get_if<model::tool_call_started>(&e)) {
      check(s->index <= started, "tool-call indexes are dense");
      if (s->index == started) ++started, open.push_back(true);
    } else if (const auto* d = std::get_if<model::tool_call_arguments_delta>(&e)) {
      check(d->index < started, "arguments belong to a started call");
    } else if (const auto* f = std::get_if<model::tool_call_finished>(&e)) {
      check(f->index < started && open[f->index], "a finished call was open");
      open[f->index] = false;
    }
  };
  bool failed = false;
  for (const auto& ev : events) {
    check(!failed || ev.type == engine::chat_event::kind::failed, "no chunk follows a failed event");
    if (ev.type == engine::chat_event::kind::failed) failed = true;
    if (ev.type != engine::chat_event::kind::chunk) continue;
    for (const auto& e : decoder.decode(ev.parsed)) track(e);
  }
  for (const auto& e : decoder.finish()) track(e);
  for (bool o : open) check(!o, "finish() closes every open call");
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace warden;
  if (size == 0) return 0;
  const std::uint8_t seed = data[0];
  const std::string_view text = fuzz::as_text(data + 1, size - 1);
  fuzz::check_parser(text, seed);
  std::optional<engine::forced_call> forced;
  if (seed & 1) forced = engine::forced_call{"get_weather", "", json::object(), "call_fuzz"};
  engine::chunk_reader reader(std::move(forced));
  std::deque<engine::chat_event> events;
  for (auto p : fuzz::pieces(text, seed)) reader.take(p, events);
  fuzz::decode_chunks(events);
  return 0;
}
