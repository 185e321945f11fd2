// Fuzzes POST /v1/messages and /v1/messages/count_tokens bodies: api/anthropic/messages_request.h
// parse_messages_request (field checks, tool_use / tool_result pairing, server tools, loop
// fields) and api/anthropic/convert.h both ways.
// Invariant (convert.h): for a conversation to_model_messages produced,
// to_model_messages(to_anthropic(m)) == m, and a second trip gives the same Anthropic body.
#include "api/anthropic/convert.h"
#include "api/anthropic/messages_request.h"
#include "common/json_util.h"
#include "fuzz/conversation_canon.h"
#include "fuzz/fuzz_support.h"

namespace warden::fuzz {
namespace {

void check_round_trip(const std::vector<model::message>& m1) {
  const json a1 = api::anthropic::to_anthropic(m1);
  (void)dump_safe(a1);
  auto m2 = api::anthropic::to_model_messages(a1.value("system", json()), a1["messages"]);
  check(m2.ok(), "to_anthropic's output converts back");
  check_same(canon(m1), canon(*m2), "to_model_messages(to_anthropic(m)) == m");
  check_same(a1, api::anthropic::to_anthropic(*m2), "a second round trip gives the same body");
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace warden;
  static const std::vector<std::string> tool_names = {"python", "terminal", "render_html"};
  const std::string_view text = fuzz::as_text(data, size);
  const auto kind = size % 2 == 0 ? api::anthropic::body_kind::messages : api::anthropic::body_kind::count_tokens;
  auto parsed = api::anthropic::parse_messages_request(text, tool_names, kind);
  if (!parsed) return 0;
  // The messages as the client sent them, converted alone (parse_messages_request may add to
  // the conversation it returns).
  const auto body = parse_json(text);
  fuzz::check(body.has_value() && body->is_object(), "an accepted body is a JSON object");
  auto m1 = api::anthropic::to_model_messages(body->value("system", json()), (*body)["messages"]);
  fuzz::check(m1.ok(), "accepted messages convert");
  fuzz::check_round_trip(*m1);
  return 0;
}
