// Property: the one request-level gate (api/wire/admission.h) gives the same verdict whichever
// surface a request came through. The same warden loop fields, sent in an OpenAI chat body, an
// Anthropic messages body and a Responses body, are read by each surface's own parser and judged
// by each surface's own admission entry (admit_chat, admit_messages, admit_create): verdicts
// (status, code, param, message, parking, folding) are equal, except where a surface's
// documented rule differs, which is asserted explicitly:
//   - Anthropic Messages (server_tools.h messages_gate): no confirmation channel, so tool
//     requests that could ask a person are refused even when they stream;
//   - Responses with a store: a request that does not stream parks the turn instead of being
//     refused (admission.h step 4); approval_format "mcp" parks a streaming one too.
#include <gtest/gtest.h>

#include "agent/agent_fakes.h"
#include "api/anthropic/messages_handler.h"
#include "api/openai/chat_handler.h"
#include "api/responses/responses_handler.h"

namespace warden::api {
namespace {

using pm = agent::permission_mode;

struct server {
  agent::testing::fake_registry tools;  // python, terminal (run code), render_html
  agent::approval_registry approvals{std::chrono::milliseconds(60000)};
  agent::cancel_registry cancels;
  agent::tool_runtime rt;
  explicit server(pm ceiling) : rt{approvals, cancels, tools.reg, "/tmp/unused", std::chrono::milliseconds(1000), ceiling} {}
  std::vector<std::string> names() const { return tools.reg.names(); }
};

/// `base` with the loop fields and stream flag merged in.
std::string body(json base, const json& fields, bool stream) {
  for (const auto& [k, v] : fields.items()) base[k] = v;
  base["stream"] = stream;
  return base.dump();
}

json chat_base() { return {{"model", "m"}, {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}}; }
json messages_base() { return {{"model", "m"}, {"max_tokens", 16}, {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}}; }
json responses_base(bool store) { return {{"model", "m"}, {"input", "hi"}, {"store", store}}; }

/// A verdict as one comparable value.
json verdict(const wire::admission& a) {
  if (a.admitted()) return {{"admitted", true}, {"park", a.park_approvals}, {"stream", a.stream}};
  const error& e = *a.refusal;
  return {{"status", http_status(e.code)}, {"code", e.type_code}, {"param", e.param}, {"message", e.message}};
}

json chat_verdict(const server& s, const agent::tool_runtime* rt, const json& fields, bool stream) {
  auto r = openai::parse_chat_request(body(chat_base(), fields, stream), s.names());
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? verdict(openai::admit_chat(*r, rt)) : json();
}
json messages_verdict(const server& s, const agent::tool_runtime* rt, const json& fields, bool stream) {
  auto r = anthropic::parse_messages_request(body(messages_base(), fields, stream), s.names());
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? verdict(anthropic::admit_messages(*r, rt)) : json();
}
json responses_verdict(const server& s, const agent::tool_runtime* rt, const json& fields, bool stream, bool store,
                       const json& extra = json::object()) {
  json base = responses_base(store);
  for (const auto& [k, v] : extra.items()) base[k] = v;
  auto r = responses::parse_responses_request(body(base, fields, stream), s.names());
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? verdict(responses::admit_create(*r, rt, /*store_available=*/true, /*resuming=*/false)) : json();
}

const char* const k_fields[] = {
    R"({})",
    R"({"enable_tools":true})",
    R"({"enable_tools":true,"confirm_tool_calls":true})",
    R"({"enable_tools":true,"confirm_tool_calls":false})",
    R"({"enable_tools":true,"permission_mode":"ask"})",
    R"({"enable_tools":true,"permission_mode":"auto","enabled_tools":["render_html"]})",
    R"({"enable_tools":true,"permission_mode":"off"})",
    R"({"enable_tools":true,"permission_mode":"full"})",
    R"({"enable_tools":true,"bypass_permissions":true})",
    R"({"enable_tools":true,"permission_mode":"off","confirm_code_execution":true})",
    R"({"enable_tools":true,"permission_mode":"off","confirm_code_execution":true,"enabled_tools":["render_html"]})",
    R"({"enable_tools":true,"confirm_tool_calls":true,"max_tool_calls_per_message":0})",
    R"({"enable_tools":true,"permission_mode":"bogus"})",
};

/// True when Anthropic's no-confirmation-channel rule (server_tools.h) refused.
bool anthropic_rule_refused(const json& v) {
  return v.contains("message") && v["message"].get<std::string>().find("Anthropic Messages server tools") != std::string::npos;
}

TEST(AdmissionAcrossSurfaces, SameFieldsSameVerdict) {
  int compared = 0, anthropic_differs = 0;
  for (pm ceiling : {pm::full, pm::off, pm::auto_, pm::ask}) {
    server s(ceiling);
    for (const agent::tool_runtime* rt : {static_cast<const agent::tool_runtime*>(&s.rt), static_cast<const agent::tool_runtime*>(nullptr)}) {
      for (const char* f : k_fields) {
        for (bool stream : {false, true}) {
          SCOPED_TRACE(std::string(f) + " stream=" + (stream ? "true" : "false") + " ceiling=" + agent::to_string(ceiling) +
                       (rt ? "" : " no runtime"));
          const json fields = json::parse(f);
          const json chat = chat_verdict(s, rt, fields, stream);
          // Responses without a store (store: false) cannot park: exactly chat's rule.
          EXPECT_EQ(responses_verdict(s, rt, fields, stream, /*store=*/false), chat);
          const json msg = messages_verdict(s, rt, fields, stream);
          ++compared;
          if (msg == chat) continue;
          // The one documented difference: the server-tool rule refuses before the shared steps.
          ++anthropic_differs;
          EXPECT_TRUE(anthropic_rule_refused(msg)) << msg.dump() << " vs chat " << chat.dump();
          EXPECT_EQ(msg["status"], 400);
        }
      }
    }
  }
  EXPECT_EQ(compared, 4 * 2 * 13 * 2);
  EXPECT_GT(anthropic_differs, 0);
}

// Anthropic's rule, case by case: it refuses what could ask a person, streaming or not.
TEST(AdmissionAcrossSurfaces, AnthropicRefusesWhatCouldAskEvenWhenStreaming) {
  server s(pm::full);
  const json confirm = json::parse(R"({"enable_tools":true,"confirm_tool_calls":true})");
  EXPECT_EQ(chat_verdict(s, &s.rt, confirm, true), (json{{"admitted", true}, {"park", false}, {"stream", true}}));
  const json m = messages_verdict(s, &s.rt, confirm, true);
  EXPECT_EQ(m["status"], 400);
  EXPECT_EQ(m["param"], "confirm_tool_calls");
  const json unset = json::parse(R"({"enable_tools":true})");
  EXPECT_EQ(messages_verdict(s, &s.rt, unset, true)["param"], "permission_mode");
  const json code = json::parse(R"({"enable_tools":true,"permission_mode":"off","confirm_code_execution":true})");
  EXPECT_EQ(messages_verdict(s, &s.rt, code, true)["param"], "confirm_code_execution");
  // Nothing asked: the same verdict as chat.
  const json off = json::parse(R"({"enable_tools":true,"permission_mode":"off"})");
  EXPECT_EQ(messages_verdict(s, &s.rt, off, false), chat_verdict(s, &s.rt, off, false));
}

// Responses with a store parks what chat refuses, and mcp approvals park a streaming request.
TEST(AdmissionAcrossSurfaces, ResponsesWithAStoreParks) {
  server s(pm::full);
  const json confirm = json::parse(R"({"enable_tools":true,"confirm_tool_calls":true})");
  EXPECT_EQ(chat_verdict(s, &s.rt, confirm, false)["status"], 400);
  EXPECT_EQ(responses_verdict(s, &s.rt, confirm, false, true), (json{{"admitted", true}, {"park", true}, {"stream", true}}));
  EXPECT_EQ(responses_verdict(s, &s.rt, confirm, true, true), chat_verdict(s, &s.rt, confirm, true));
  const json mcp = {{"approval_format", "mcp"}};
  EXPECT_EQ(responses_verdict(s, &s.rt, confirm, true, true, mcp), (json{{"admitted", true}, {"park", true}, {"stream", true}}));
  EXPECT_EQ(responses_verdict(s, &s.rt, confirm, true, false, mcp)["param"], "approval_format");
  // The ceiling holds whatever the surface: parking does not widen it.
  server strict(pm::off);
  const json bypass = json::parse(R"({"enable_tools":true,"bypass_permissions":true})");
  EXPECT_EQ(responses_verdict(strict, &strict.rt, bypass, false, true), chat_verdict(strict, &strict.rt, bypass, false));
  EXPECT_EQ(messages_verdict(strict, &strict.rt, bypass, false), chat_verdict(strict, &strict.rt, bypass, false));
}

}  // namespace
}  // namespace warden::api
