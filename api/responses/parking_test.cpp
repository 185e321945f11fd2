// api/responses/parking.h: the parked turn's round trip through the store's text (typed loop
// options included), the fallback for rows written before, answer matching, and the rule that
// a resume runs under the parked request's options (it cannot widen the gate).
#include <gtest/gtest.h>

#include "agent/agent_fakes.h"
#include "api/responses/parking.h"
#include "api/responses/responses_request.h"
#include "api/wire/admission.h"

namespace warden::api::responses {
namespace {

const std::vector<std::string> k_names = {"python", "terminal", "render_html"};

parked_state sample() {
  parked_state p;
  p.turn.text = "I will run two things.";
  p.turn.calls.push_back(agent::parked_call{"call_1", "python", R"j({"code":"print(1)"})j", true, json{{"code", "print(1)"}}});
  p.turn.calls.push_back(agent::parked_call{"call_2", "render_html", "{not json", false, json::object()});
  p.requests = {{"mcpr_a", "call_1"}};
  p.expires_at_ms = 1'900'000'000'000;
  p.loop.enable_tools = true;
  p.loop.enabled_tools = std::vector<std::string>{"python", "render_html"};
  p.loop.gate.confirm_tool_calls = true;
  p.loop.gate.permission_mode = "ask";
  p.loop.gate.confirm_code_execution = true;
  p.loop.max_tool_calls_per_message = 3;
  p.loop.tool_call_timeout_s = 42;
  p.loop.session_id = "s-1";
  p.loop.surface = "openai.responses";
  return p;
}

json calls_of(const agent::parked_turn& t) {
  json out = json::array();
  for (const auto& c : t.calls) out.push_back({c.id, c.name, c.arguments, c.needs_approval, c.card_arguments});
  return out;
}

void expect_same_options(const agent::loop_options& a, const agent::loop_options& b) {
  EXPECT_EQ(a.enable_tools, b.enable_tools);
  EXPECT_EQ(a.enabled_tools, b.enabled_tools);
  EXPECT_EQ(a.gate.confirm_tool_calls, b.gate.confirm_tool_calls);
  EXPECT_EQ(a.gate.permission_mode, b.gate.permission_mode);
  EXPECT_EQ(a.gate.confirm_code_execution, b.gate.confirm_code_execution);
  EXPECT_EQ(a.gate.bypass_permissions, b.gate.bypass_permissions);
  EXPECT_EQ(a.max_tool_calls_per_message, b.max_tool_calls_per_message);
  EXPECT_EQ(a.tool_call_timeout_s, b.tool_call_timeout_s);
  EXPECT_EQ(a.session_id, b.session_id);
  EXPECT_EQ(a.surface, b.surface);
}

TEST(ParkedTurn, RoundTripsThroughTheStoredText) {
  const parked_state p = sample();
  const std::string text = encode_parked(p);
  EXPECT_EQ(json::parse(text)["version"], 2);
  EXPECT_EQ(json::parse(text)["message"]["role"], "assistant");  // model/serialize's shape
  // request_json is not needed (nor read) for a version 2 row.
  auto back = decode_parked(text, "", k_names);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(back->has_value());
  const parked_state& q = **back;
  EXPECT_EQ(q.turn.text, p.turn.text);
  EXPECT_EQ(calls_of(q.turn), calls_of(p.turn));
  EXPECT_EQ(q.requests, p.requests);
  EXPECT_EQ(q.expires_at_ms, p.expires_at_ms);
  expect_same_options(q.loop, p.loop);
  EXPECT_EQ(encode_parked(q), text);  // and again, byte for byte
}

TEST(ParkedTurn, UnsetOptionsStayUnset) {
  parked_state p = sample();
  p.loop.enabled_tools.reset();
  p.loop.gate.confirm_tool_calls.reset();
  p.loop.gate.permission_mode.reset();
  p.turn.text = "";
  auto back = decode_parked(encode_parked(p), "", k_names);
  ASSERT_TRUE(back.ok() && back->has_value());
  EXPECT_FALSE((*back)->loop.enabled_tools);
  EXPECT_FALSE((*back)->loop.gate.confirm_tool_calls);
  EXPECT_FALSE((*back)->loop.gate.permission_mode);
  EXPECT_EQ((*back)->turn.text, "");
}

TEST(ParkedTurn, NothingParkedIsNoTurn) {
  for (const char* text : {"", "not json", "[]"}) {
    auto back = decode_parked(text, "", k_names);
    ASSERT_TRUE(back.ok()) << text;
    EXPECT_FALSE(back->has_value()) << text;
  }
}

TEST(ParkedTurn, ADamagedRowIsAnInternalError) {
  json j = json::parse(encode_parked(sample()));
  j["loop"]["enable_tools"] = "yes";
  auto bad_loop = decode_parked(j.dump(), "", k_names);
  ASSERT_FALSE(bad_loop.ok());
  EXPECT_EQ(bad_loop.error().code, errc::internal);
  j = json::parse(encode_parked(sample()));
  j["calls"] = json::array();  // the message's calls have no metadata
  auto bad_calls = decode_parked(j.dump(), "", k_names);
  ASSERT_FALSE(bad_calls.ok());
  EXPECT_EQ(bad_calls.error().code, errc::internal);
}

// Rows written before version 2: pending_json {"text","calls",…} and the loop fields as sent.
TEST(ParkedTurn, RowsOfTheOldFormatAreStillRead) {
  const std::string pending =
      R"({"text":"t","calls":[{"id":"call_1","name":"python","arguments":"{}","needs_approval":true,"card":{}}],)"
      R"("requests":{"mcpr_a":"call_1"},"expires_at_ms":123})";
  const std::string fields = R"({"enable_tools":true,"permission_mode":"ask","enabled_tools":["python"],"session_id":"s"})";
  auto back = decode_parked(pending, fields, k_names);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(back->has_value());
  const parked_state& p = **back;
  EXPECT_EQ(p.turn.text, "t");
  ASSERT_EQ(p.turn.calls.size(), 1u);
  EXPECT_TRUE(p.turn.calls[0].needs_approval);
  EXPECT_EQ(p.requests.at("mcpr_a"), "call_1");
  EXPECT_EQ(p.expires_at_ms, 123);
  EXPECT_TRUE(p.loop.enable_tools);
  EXPECT_EQ(p.loop.gate.permission_mode, std::optional<std::string>("ask"));
  EXPECT_EQ(p.loop.session_id, "s");
  EXPECT_EQ(p.loop.surface, "openai.responses");
  // Unreadable fields of an old row: the error resumes answered before.
  auto unreadable = decode_parked(pending, "nope", k_names);
  ASSERT_FALSE(unreadable.ok());
  EXPECT_EQ(unreadable.error().message, "the parked request's tool fields could not be read");
}

model_input answers(std::vector<std::pair<std::string, bool>> list) {
  model_input in;
  for (auto& [id, yes] : list) in.approvals.push_back(approval_answer{id, yes, ""});
  return in;
}

TEST(AnswerMatching, AnsweredUnansweredAndExpired) {
  parked_state p = sample();
  p.turn.calls[1].needs_approval = true;  // two questions, one answered
  p.requests["mcpr_b"] = "call_2";
  auto r = match_answers(answers({{"mcpr_a", true}}), "resp_1", p, p.expires_at_ms - 1);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->decisions.at("call_1"), agent::approval_outcome::allowed);
  EXPECT_EQ(r->decisions.at("call_2"), agent::approval_outcome::denied);  // unanswered: declined
  EXPECT_EQ(r->turn.text, p.turn.text);
  auto late = match_answers(answers({{"mcpr_a", true}}), "resp_1", p, p.expires_at_ms + 1);
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->decisions.at("call_1"), agent::approval_outcome::timed_out);
  EXPECT_EQ(late->decisions.at("call_2"), agent::approval_outcome::timed_out);
  p.expires_at_ms = 0;  // never expires
  auto never = match_answers(answers({{"mcpr_a", false}}), "resp_1", p, 1'000'000'000'000'000);
  ASSERT_TRUE(never.ok());
  EXPECT_EQ(never->decisions.at("call_1"), agent::approval_outcome::denied);
}

TEST(AnswerMatching, Refusals) {
  const parked_state p = sample();
  auto none = match_answers(answers({{"mcpr_a", true}}), "resp_1", std::nullopt, 0);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "'input' answers an approval request, but response 'resp_1' has none pending");
  EXPECT_EQ(none.error().param, "input");
  model_input mixed = answers({{"mcpr_a", true}});
  mixed.messages.emplace_back();
  auto m = match_answers(mixed, "resp_1", p, 0);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("may hold only mcp_approval_response items"), std::string::npos);
  auto unknown = match_answers(answers({{"mcpr_zz", true}}), "resp_1", p, 0);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "'approval_request_id' 'mcpr_zz' is not one of response 'resp_1''s approval requests");
  auto twice = match_answers(answers({{"mcpr_a", true}, {"mcpr_a", false}}), "resp_1", p, 0);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().message, "'approval_request_id' 'mcpr_a' is answered twice");
}

// The resuming request's own tool fields are ignored: it runs under the parked options, so the
// answers it gives cannot come with a wider gate (bypass, mode full, more tools).
TEST(ResumeWidening, TheResumingRequestsOwnFieldsAreIgnored) {
  const parked_state p = sample();
  auto wide = parse_responses_request(
      R"({"model":"m","previous_response_id":"resp_1","enable_tools":true,"bypass_permissions":true,)"
      R"("permission_mode":"full","enabled_tools":["python","terminal","render_html"],"max_tool_calls_per_message":9999,)"
      R"("input":[{"type":"mcp_approval_response","approval_request_id":"mcpr_a","approve":true}]})",
      k_names);
  ASSERT_TRUE(wide.ok()) << wide.error().message;
  auto o = resumed_options(p, wide->client_tools);
  ASSERT_TRUE(o.ok());
  expect_same_options(*o, p.loop);
  EXPECT_FALSE(o->gate.bypass_permissions);
  // Under --max-permission ask the wide request would be refused; the resume is admitted as parked.
  agent::testing::fake_registry tools;
  agent::approval_registry approvals{std::chrono::milliseconds(60000)};
  agent::cancel_registry cancels;
  agent::tool_runtime rt{approvals, cancels, tools.reg, "/tmp/unused", std::chrono::milliseconds(1000),
                         agent::permission_mode::ask};
  wire::admission_options resuming;
  resuming.can_park = true;
  resuming.resuming = true;
  EXPECT_FALSE(wire::admit(wide->loop, &rt, resuming).admitted());
  EXPECT_TRUE(wire::admit(*o, &rt, resuming).admitted());
}

TEST(ResumeWidening, FunctionToolsCannotResume) {
  auto o = resumed_options(sample(), /*client_tools=*/true);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().message, "'tools' (function tools) cannot resume a turn of warden's tools");
  EXPECT_EQ(o.error().param, "tools");
}

}  // namespace
}  // namespace warden::api::responses
