// Fuzzes POST /v1/chat/completions bodies: api/openai/chat_request.h parse_chat_request (the
// field checks and warden's loop fields), then api/openai/convert.h to_model_request, then the
// engine's encoding of the typed request (engine/chat_backend.h encode_openai_request).
// Invariants: encode_openai_request is the inverse of to_model_request for what the model holds
// (converting its output again gives the same messages); the encoded body serializes.
#include "api/openai/chat_request.h"
#include "api/openai/convert.h"
#include "engine/chat_backend.h"
#include "fuzz/conversation_canon.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace warden;
  static const std::vector<std::string> tool_names = {"python", "terminal", "render_html"};
  auto parsed = api::openai::parse_chat_request(fuzz::as_text(data, size), tool_names);
  if (!parsed) return 0;
  auto typed = api::openai::to_model_request(parsed->body);
  if (!typed) return 0;
  const json encoded = engine::encode_openai_request(*typed);
  (void)dump_safe(encoded);
  auto again = api::openai::to_model_request(encoded);
  fuzz::check(again.ok(), "the encoded request converts again");
  fuzz::check_same(fuzz::canon(typed->messages), fuzz::canon(again->messages), "encode → convert keeps the messages");
  return 0;
}
