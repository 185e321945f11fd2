// Fuzzes POST /v1/responses bodies: api/responses/responses_request.h parse_responses_request,
// and api/responses/items.h to_model_input on the body's `input` alone (so the items are reached
// even when another field would refuse the body first).
// Invariants: every input item is listed once, with a string id; a string input is one user
// message.
#include "api/responses/items.h"
#include "api/responses/responses_request.h"
#include "common/json_util.h"
#include "fuzz/fuzz_support.h"

namespace warden::fuzz {
namespace {

void check_items(const json& input) {
  auto in = api::responses::to_model_input(input);
  if (!in) return;
  check(in->items.is_array(), "items is a list");
  check(in->items.size() == (input.is_array() ? input.size() : 1), "every input item is listed once");
  for (const auto& item : in->items) check(item.is_object() && item.value("id", json()).is_string(), "each item has an id");
  if (input.is_string()) check(in->messages.size() == 1, "a string input is one message");
  (void)dump_safe(in->items);
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace warden;
  static const std::vector<std::string> tool_names = {"python", "terminal", "render_html"};
  const std::string_view text = fuzz::as_text(data, size);
  if (auto parsed = api::responses::parse_responses_request(text, tool_names)) {
    (void)dump_safe(parsed->echo);
    (void)dump_safe(parsed->input.items);
  }
  const auto body = parse_json(text);
  if (body && body->is_object() && body->contains("input")) fuzz::check_items((*body)["input"]);
  return 0;
}
