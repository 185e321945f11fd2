// The Responses dialect's pure parts: input items → model, request validation, and the events
// and objects response_builder produces.
#include <gtest/gtest.h>

#include "api/responses/items.h"
#include "api/responses/response_builder.h"
#include "api/responses/responses_request.h"

namespace warden::api::responses {
namespace {

const std::vector<std::string> k_tools = {"python", "terminal", "web_search"};

result<responses_request> parse(const json& body) { return parse_responses_request(body.dump(), k_tools); }

TEST(ResponsesItems, AStringIsOneUserMessage) {
  auto in = to_model_input("hello");
  ASSERT_TRUE(in.ok());
  ASSERT_EQ(in->messages.size(), 1u);
  EXPECT_EQ(in->messages[0].role, model::role::user);
  EXPECT_EQ(in->messages[0].text(), "hello");
  ASSERT_EQ(in->items.size(), 1u);
  EXPECT_EQ(in->items[0]["content"][0], json({{"type", "input_text"}, {"text", "hello"}}));
  EXPECT_EQ(in->items[0]["id"].get<std::string>().rfind("msg_", 0), 0u);
}

TEST(ResponsesItems, EveryItemKindMapsToTheModel) {
  const json input = json::parse(R"([
    {"role":"developer","content":"rules"},
    {"type":"message","role":"user","content":[{"type":"input_text","text":"look"},
                                               {"type":"input_image","image_url":"data:image/png;base64,AA","detail":"low"}]},
    {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"s"}],"content":[{"type":"reasoning_text","text":"full"}]},
    {"type":"function_call","id":"fc_1","call_id":"c1","name":"f","arguments":"{}"},
    {"type":"function_call","call_id":"c2","name":"g","arguments":"{\"a\":1}"},
    {"type":"function_call_output","call_id":"c1","output":"r1"},
    {"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"r2"}]},
    {"type":"mcp_approval_request","id":"mcpr_x","name":"python","arguments":"{}","server_label":"warden"},
    {"type":"mcp_approval_response","approval_request_id":"mcpr_x","approve":true,"reason":"fine"}
  ])");
  auto in = to_model_input(input);
  ASSERT_TRUE(in.ok()) << in.error().message;
  ASSERT_EQ(in->messages.size(), 5u);
  EXPECT_EQ(in->messages[0].role, model::role::system);
  EXPECT_EQ(std::get<model::image_part>(in->messages[1].content[1]).detail, "low");
  const auto& a = in->messages[2];
  EXPECT_EQ(a.role, model::role::assistant);
  EXPECT_EQ(std::get<model::reasoning_part>(a.content[0]).text, "full");
  ASSERT_EQ(a.tool_calls().size(), 2u);  // consecutive calls join one assistant message
  EXPECT_EQ(a.tool_calls()[1]->arguments, R"({"a":1})");
  EXPECT_EQ(std::get<model::tool_result_part>(in->messages[4].content[0]).content, "r2");
  ASSERT_EQ(in->approvals.size(), 1u);
  EXPECT_TRUE(in->approvals[0].approve);
  EXPECT_EQ(in->approvals[0].reason, "fine");
  EXPECT_EQ(in->items.size(), 9u);
  EXPECT_EQ(in->items[3]["id"], "fc_1");  // the client's ids are kept
  // A response that is not stored lists no items: the same messages, no item list built
  auto unlisted = to_model_input(input, false);
  ASSERT_TRUE(unlisted.ok());
  EXPECT_EQ(unlisted->messages.size(), 5u);
  EXPECT_EQ(unlisted->approvals.size(), 1u);
  EXPECT_TRUE(unlisted->items.empty());
}

TEST(ResponsesItems, BadItemsNameTheirPlace) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"([{"type":"item_reference","id":"x"}])", "input[0].type"},
      {R"([{"role":"tool","content":"x"}])", "input[0].role"},
      {R"([{"role":"user","content":[{"type":"input_file","file_id":"f"}]}])", "input[0].content[0].type"},
      {R"([{"role":"user","content":[{"type":"input_image","file_id":"f"}]}])", "input[0].content[0].image_url"},
      {R"([{"role":"assistant","content":[{"type":"input_image","image_url":"http://x"}]}])", "input[0].content[0].type"},
      {R"(["text"])", "input[0]"},
      {R"([{"type":"function_call","name":"f","arguments":"{}"}])", "input[0].call_id"},
      {R"([{"type":"function_call_output","call_id":"c","output":5}])", "input[0].output"},
      {R"([{"type":"mcp_approval_response","approval_request_id":"m","approve":"yes"}])", "input[0].approve"},
      {R"(5)", "input"},
  };
  for (const auto& [text, param] : cases) {
    auto in = to_model_input(json::parse(text));
    ASSERT_FALSE(in.ok()) << text;
    EXPECT_EQ(in.error().code, errc::invalid_request);
    EXPECT_EQ(in.error().param, param) << text;
  }
}

TEST(ResponsesRequest, FieldsMapToTheModelAndTheUpstream) {
  auto r = parse({{"model", "m"},
                  {"input", "hi"},
                  {"instructions", "be brief"},
                  {"tools", {{{"type", "function"}, {"name", "f"}, {"parameters", {{"type", "object"}}}}}},
                  {"tool_choice", {{"type", "function"}, {"name", "f"}}},
                  {"parallel_tool_calls", false},
                  {"max_output_tokens", 64},
                  {"temperature", 0.5},
                  {"top_p", 0.9},
                  {"text", {{"format", {{"type", "json_schema"}, {"name", "n"}, {"schema", {{"type", "object"}}}}}}},
                  {"reasoning", {{"effort", "none"}}},
                  {"store", false},
                  {"metadata", {{"k", "v"}}},
                  {"previous_response_id", "resp_1"}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->instructions, "be brief");
  EXPECT_FALSE(r->store);
  EXPECT_EQ(r->previous_response_id, "resp_1");
  ASSERT_EQ(r->conv.tools.size(), 1u);
  EXPECT_TRUE(r->client_tools);
  EXPECT_EQ(r->conv.tool_choice->kind, model::tool_choice::mode::named);
  EXPECT_EQ(r->conv.parallel_tool_calls, false);
  EXPECT_EQ(r->conv.sampling.max_tokens, 64);
  EXPECT_EQ(r->conv.sampling.temperature, 0.5);
  EXPECT_EQ(r->conv.sampling.extra["response_format"]["json_schema"]["name"], "n");
  EXPECT_EQ(r->conv.sampling.extra["chat_template_kwargs"]["enable_thinking"], false);
  EXPECT_EQ(r->echo["metadata"], json({{"k", "v"}}));
  EXPECT_EQ(r->loop.surface, "openai.responses");
}

TEST(ResponsesRequest, TheReferencesChecksComeFirst) {
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"model", "m"}}, "input"},
      {{{"model", "m"}, {"input", ""}}, "input"},
      {{{"model", "m"}, {"input", json::array({{{"role", "system"}, {"content", "x"}}})}}, "input"},
      {{{"model", "m"}, {"input", "x"}, {"tools", {{{"type", "function"}}}}}, "tools"},
      {{{"model", "m"}, {"input", "x"}, {"tools", {{{"type", "namespace"}, {"tools", json::array()}}}}}, "tools"},
      {{{"model", "m"}, {"input", "x"}, {"tools", {{{"type", "namespace"}, {"name", "n"}, {"tools", "x"}}}}}, "tools[0].tools"},
      {{{"model", "m"}, {"input", "x"}, {"reasoning", {{"summary", "short"}}}}, "reasoning.summary"},
      {{{"model", "m"}, {"input", "x"}, {"tool_choice", {{"type", "function"}}}}, "tool_choice"},
      {{{"model", "m"}, {"input", "x"}, {"background", true}, {"store", false}}, "background"},
      {{{"model", "m"}, {"input", "x"}, {"approval_format", "email"}}, "approval_format"},
      {{{"model", "m"}, {"input", "x"}, {"reasoning", {{"effort", "max"}}}}, "reasoning.effort"},
      {{{"model", "m"}, {"input", "x"}, {"metadata", {{"k", 1}}}}, "metadata.k"},
      {{{"model", "m"}, {"input", "x"}, {"enabled_tools", {"nope"}}}, "enabled_tools"},
      {{{"input", "x"}}, "model"},
  };
  for (const auto& [body, param] : cases) {
    auto r = parse(body);
    ASSERT_FALSE(r.ok()) << body.dump();
    EXPECT_EQ(r.error().param, param) << body.dump();
  }
  auto unnamed = parse({{"model", "m"}, {"input", "x"}, {"tools", {{{"type", "function"}}}}});
  EXPECT_EQ(unnamed.error().type_code, "invalid_value");
  auto empty = parse({{"model", "m"}, {"input", json::array()}});
  EXPECT_EQ(empty.error().message, "No input provided.");
  EXPECT_FALSE(parse_responses_request("{not json", k_tools).ok());
}

TEST(ResponsesRequest, NamespacesAreFlattenedAndHostedToolsLeftOutWithANote) {
  // The shape Codex CLI 0.171 sends (tests/integration/test_codex_cli.py runs Codex itself).
  auto r = parse({{"model", "m"}, {"input", "x"}, {"reasoning", {{"summary", "auto"}}},
                  {"tools", {{{"type", "function"}, {"name", "exec_command"}, {"strict", false}},
                             {{"type", "namespace"}, {"name", "multi_agent_v1"}, {"description", "d"},
                              {"tools", {{{"type", "function"}, {"name", "spawn_agent"}, {"description", "spawn"}},
                                         {{"type", "custom"}, {"name", "free"}}}}},
                             {{"type", "web_search"}, {"external_web_access", false}}}}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->conv.tools.size(), 2u);
  EXPECT_EQ(r->conv.tools[1].name, "multi_agent_v1__spawn_agent");
  EXPECT_EQ(r->conv.tools[1].description, "spawn");
  EXPECT_EQ(r->namespaced.at("multi_agent_v1__spawn_agent"), (std::pair<std::string, std::string>{"multi_agent_v1", "spawn_agent"}));
  ASSERT_EQ(r->notes.size(), 2u);
  EXPECT_NE(r->notes[0].find("tools[1].tools[1]' (custom)"), std::string::npos) << r->notes[0];
  EXPECT_NE(r->notes[1].find("tools[2]' (web_search)"), std::string::npos) << r->notes[1];
  EXPECT_EQ(r->echo["warden_notes"].size(), 2u);
  EXPECT_TRUE(r->client_tools);
  // A flat name declared twice is refused.
  auto twice = parse({{"model", "m"}, {"input", "x"},
                      {"tools", {{{"type", "function"}, {"name", "a__b"}},
                                 {{"type", "namespace"}, {"name", "a"}, {"tools", {{{"type", "function"}, {"name", "b"}}}}}}}});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().param, "tools");
}

TEST(ResponsesRequest, AHostedMcpToolNamingWardenTurnsItsToolsOn) {
  // The Agents SDK's HostedMCPTool (tests/integration/test_responses_agents.py runs it).
  auto r = parse({{"model", "m"}, {"input", "x"},
                  {"tools", {{{"type", "mcp"}, {"server_label", "warden"}, {"server_url", "http://x"},
                              {"require_approval", "always"}, {"allowed_tools", {"python"}}},
                             {{"type", "mcp"}, {"server_label", "github"}, {"server_url", "http://y"}}}}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->loop.enable_tools);
  EXPECT_EQ(r->loop.enabled_tools, std::optional<std::vector<std::string>>({"python"}));
  EXPECT_EQ(r->loop.gate.permission_mode, std::optional<std::string>("ask"));
  EXPECT_TRUE(r->approval_mcp);
  EXPECT_EQ(r->loop_fields["enable_tools"], true);
  EXPECT_FALSE(r->client_tools);
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("mcp server 'github'"), std::string::npos) << r->notes[0];
  auto never = parse({{"model", "m"}, {"input", "x"},
                      {"tools", {{{"type", "mcp"}, {"server_label", "warden"}, {"require_approval", "never"},
                                  {"allowed_tools", {{"tool_names", {"terminal"}}}}}}}});
  ASSERT_TRUE(never.ok()) << never.error().message;
  EXPECT_EQ(never->loop.gate.permission_mode, std::optional<std::string>("off"));
  EXPECT_FALSE(never->approval_mcp);  // nothing can be asked: no parking, so store: false is fine
  EXPECT_EQ(never->loop.enabled_tools, std::optional<std::vector<std::string>>({"terminal"}));
  auto twice = parse({{"model", "m"}, {"input", "x"},
                      {"tools", {{{"type", "mcp"}, {"server_label", "warden"}, {"require_approval", "always"}},
                                 {{"type", "mcp"}, {"server_label", "warden"}, {"require_approval", "never"}}}}});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().param, "tools");
  auto off = parse({{"model", "m"}, {"input", "x"}, {"enable_tools", false},
                    {"tools", {{{"type", "mcp"}, {"server_label", "warden"}}}}});
  ASSERT_FALSE(off.ok());
  EXPECT_EQ(off.error().param, "enable_tools");
  auto not_names = parse({{"model", "m"}, {"input", "x"},
                          {"tools", {{{"type", "mcp"}, {"server_label", "warden"}, {"allowed_tools", {1, nullptr}}}}}});
  ASSERT_FALSE(not_names.ok());
  EXPECT_EQ(not_names.error().message, "'tools[0].allowed_tools' must hold tool names (strings)");
  auto unknown = parse({{"model", "m"}, {"input", "x"},
                        {"tools", {{{"type", "mcp"}, {"server_label", "warden"}, {"allowed_tools", {"rm_rf"}}}}}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().param, "tools");
}

TEST(ResponsesItems, ANamespacedCallGoesBackToTheModelByItsFlatName) {
  auto r = parse({{"model", "m"},
                  {"input", {{{"type", "function_call"}, {"call_id", "c1"}, {"namespace", "ns"}, {"name", "f"}, {"arguments", "{}"}},
                             {{"type", "function_call_output"}, {"call_id", "c1"}, {"output", "ok"}}}}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->conv.messages[0].tool_calls()[0]->name, "ns__f");
  auto bad = parse({{"model", "m"}, {"input", {{{"type", "function_call"}, {"call_id", "c1"}, {"namespace", 3}, {"name", "f"}, {"arguments", "{}"}}}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().param, "input[0].namespace");
}

std::vector<std::string> types(const std::vector<json>& events);

TEST(ResponseBuilder, ANamespacedCallCarriesItsNamespaceAndReasoningGetsASummary) {
  response_settings s{"m", "", true, false, json{{"reasoning", {{"summary", "auto"}}}}};
  s.namespaced["ns__f"] = {"ns", "f"};
  response_builder b("resp_n", 1, s);
  std::vector<json> all = b.start();
  auto add = [&](const model::stream_event& ev) {
    for (auto& e : b.on_model_event(ev)) all.push_back(e);
  };
  add(model::reasoning_delta{"think"});
  add(model::tool_call_started{0, "c1", "ns__"});
  add(model::tool_call_started{0, "", "f"});  // a split name
  add(model::tool_call_arguments_delta{0, "{}"});
  add(model::tool_call_finished{0});
  add(model::tool_call_started{1, "c2", "plain"});
  add(model::tool_call_finished{1});
  for (auto& e : b.finish(model::usage{1, 1, 2}, false, std::nullopt)) all.push_back(e);
  const json r = b.response();
  EXPECT_EQ(r["output"][0]["summary"], json::array({{{"type", "summary_text"}, {"text", "think"}}}));
  EXPECT_EQ(r["output"][1]["name"], "f");
  EXPECT_EQ(r["output"][1]["namespace"], "ns");
  EXPECT_EQ(r["output"][2]["name"], "plain");
  EXPECT_FALSE(r["output"][2].contains("namespace"));
  const auto t = types(all);
  EXPECT_NE(std::find(t.begin(), t.end(), "response.reasoning_summary_text.delta"), t.end());
  EXPECT_NE(std::find(t.begin(), t.end(), "response.reasoning_summary_part.done"), t.end());
  EXPECT_EQ(b.assistant_message().tool_calls()[0]->name, "ns__f");  // the history keeps the flat name
  // without reasoning.summary: no summary
  response_builder plain("resp_p", 1, response_settings{"m", "", true, false, json::object()});
  plain.on_model_event(model::reasoning_delta{"x"});
  plain.finish(model::usage{}, false, std::nullopt);
  EXPECT_TRUE(plain.response()["output"][0]["summary"].empty());
}

TEST(ResponsesRequest, LoopFieldsAreKeptToResume) {
  auto r = parse({{"model", "m"}, {"input", "x"}, {"enable_tools", true}, {"enabled_tools", {"python"}},
                  {"permission_mode", "ask"}, {"approval_format", "mcp"}});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->loop.enable_tools);
  EXPECT_TRUE(r->loop_fields_sent);
  EXPECT_TRUE(r->approval_mcp);
  EXPECT_EQ(r->loop_fields["enabled_tools"], json({"python"}));
  EXPECT_EQ(r->loop_fields["permission_mode"], "ask");
}

std::vector<std::string> types(const std::vector<json>& events) {
  std::vector<std::string> t;
  for (const auto& e : events) t.push_back(e["type"]);
  return t;
}

TEST(ResponseBuilder, TextReasoningAndCallsBecomeItemsWithOrderedEvents) {
  response_builder b("resp_1", 100, response_settings{"model-x", "", true, false, json::object()});
  std::vector<json> all = b.start();
  auto add = [&](const model::stream_event& ev) {
    for (auto& e : b.on_model_event(ev)) all.push_back(e);
  };
  add(model::reasoning_delta{"hm"});
  add(model::text_delta{"Hel"});
  add(model::text_delta{"lo"});
  add(model::tool_call_started{0, "", "f"});
  add(model::tool_call_arguments_delta{0, "{\"a\":"});
  add(model::tool_call_arguments_delta{0, "1}"});
  add(model::tool_call_finished{0});
  for (auto& e : b.finish(model::usage{5, 3, 8}, false, std::nullopt)) all.push_back(e);
  EXPECT_EQ(types(all), (std::vector<std::string>{
                            "response.created", "response.in_progress", "response.output_item.added",
                            "response.content_part.added", "response.reasoning_text.delta", "response.reasoning_text.done",
                            "response.content_part.done", "response.output_item.done", "response.output_item.added",
                            "response.content_part.added", "response.output_text.delta", "response.output_text.delta",
                            "response.output_text.done", "response.content_part.done", "response.output_item.done",
                            "response.output_item.added", "response.function_call_arguments.delta",
                            "response.function_call_arguments.delta", "response.function_call_arguments.done",
                            "response.output_item.done", "response.completed"}));
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i]["sequence_number"], i);
  const json r = b.response();
  EXPECT_EQ(r["status"], "completed");
  ASSERT_EQ(r["output"].size(), 3u);
  EXPECT_EQ(r["output"][0]["content"][0]["text"], "hm");
  EXPECT_EQ(r["output"][1]["content"][0]["text"], "Hello");
  EXPECT_EQ(r["output"][2]["arguments"], "{\"a\":1}");
  EXPECT_EQ(r["output"][2]["call_id"].get<std::string>().rfind("call_", 0), 0u);  // assigned when missing
  EXPECT_EQ(r["usage"]["input_tokens"], 5);
  EXPECT_EQ(r["usage"]["total_tokens"], 8);
  const auto msg = b.assistant_message();
  ASSERT_EQ(msg.content.size(), 3u);
  EXPECT_EQ(msg.tool_calls()[0]->id, r["output"][2]["call_id"]);
}

TEST(ResponseBuilder, LengthIsIncompleteAndAFailureIsFailed) {
  response_builder a("resp_a", 1, response_settings{"m", "", true, false, json::object()});
  a.on_model_event(model::text_delta{"cut"});
  auto ev = a.finish(std::nullopt, true, std::nullopt);
  EXPECT_EQ(ev.back()["type"], "response.incomplete");
  EXPECT_EQ(a.response()["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(a.response()["output"][0]["status"], "incomplete");
  response_builder f("resp_f", 1, response_settings{"m", "", true, false, json::object()});
  auto fe = f.finish(std::nullopt, false, make_error(errc::upstream_error, "broke"));
  EXPECT_EQ(fe.back()["type"], "response.failed");
  EXPECT_EQ(f.response()["error"]["message"], "broke");
}

TEST(ResponseBuilder, LoopToolsAreMcpCallsAndParkedCallsAreApprovalRequests) {
  response_builder b("resp_l", 1, response_settings{"m", "resp_prev", true, false, json::object()});
  std::vector<json> all;
  agent::tool_start s;
  s.tool = "python";
  s.call_id = "call_1";
  s.arguments = json{{"code", "1"}};
  for (auto& e : b.on_loop_event(s)) all.push_back(e);
  for (auto& e : b.on_loop_event(agent::end_event("python", "call_1", "1\n", false))) all.push_back(e);
  EXPECT_EQ(types(all), (std::vector<std::string>{"response.output_item.added", "tool_start", "tool_end",
                                                  "response.output_item.done"}));
  EXPECT_EQ(all[3]["item"]["type"], "mcp_call");
  EXPECT_EQ(all[3]["item"]["output"], "1\n");
  EXPECT_EQ(all[3]["item"]["server_label"], "warden");
  agent::parked_turn t;
  t.calls.push_back(agent::parked_call{"call_2", "terminal", "{\"command\":\"ls\"}", true, json{{"command", "ls"}}});
  t.calls.push_back(agent::parked_call{"call_3", "web_search", "{}", false, json::object()});
  std::map<std::string, std::string> ids;
  auto asks = b.approval_requests(t, ids);
  ASSERT_EQ(asks.size(), 2u);  // added + done for the one call that needs a person
  EXPECT_EQ(asks[1]["item"]["type"], "mcp_approval_request");
  EXPECT_EQ(asks[1]["item"]["arguments"], "{\"command\":\"ls\"}");
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids.begin()->second, "call_2");
  EXPECT_EQ(ids.begin()->first, asks[1]["item"]["id"]);
  EXPECT_EQ(b.response()["previous_response_id"], "resp_prev");
  EXPECT_EQ(sse(asks[0]).rfind("event: response.output_item.added\ndata: {", 0), 0u);
}

}  // namespace
}  // namespace warden::api::responses

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <thread>

#include "api/responses/background.h"

namespace warden::api::responses {
namespace {

TEST(RunChannel, FollowersReadFromAnyPointAndSeeTheEnd) {
  run_channel ch("resp_x");
  ch.publish({json{{"sequence_number", 0}}, json{{"sequence_number", 1}}}, json{{"status", "in_progress"}});
  EXPECT_EQ(ch.read_from(0).events.size(), 2u);
  EXPECT_EQ(ch.read_from(1).events[0]["sequence_number"], 1);
  EXPECT_TRUE(ch.read_from(2).events.empty());
  EXPECT_FALSE(ch.read_from(2).done);
  ch.publish({json{{"sequence_number", 2}}});  // a delta: the object stays as it was
  EXPECT_EQ(ch.snapshot()["status"], "in_progress");
  ch.finish(json{{"status", "completed"}});
  EXPECT_TRUE(ch.read_from(3).done);
  EXPECT_EQ(ch.snapshot()["status"], "completed");
  EXPECT_EQ(ch.all_events().size(), 3u);
}

TEST(RunChannel, AWaitingFollowerWakesOnPublishNotOnItsTimeout) {
  boost::asio::io_context ioc;
  run_channel ch("resp_y");
  auto waited = boost::asio::co_spawn(
      ioc,
      [&ch]() -> boost::asio::awaitable<std::chrono::milliseconds> {
        const auto t0 = std::chrono::steady_clock::now();
        co_await ch.wait(0, std::chrono::milliseconds(20000));
        co_return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
      },
      boost::asio::use_future);
  std::thread io([&ioc] { ioc.run(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ch.publish({json{{"sequence_number", 0}}});
  const auto took = waited.get();
  io.join();
  EXPECT_LT(took.count(), 10000);  // woken by the event (a lost wake-up would wait the full 20 s)
}

TEST(RunRegistry, StartFindEnd) {
  run_registry runs;
  auto ch = runs.start("resp_z");
  EXPECT_EQ(runs.find("resp_z"), ch);
  EXPECT_EQ(runs.active(), 1u);
  runs.end("resp_z");
  EXPECT_EQ(runs.find("resp_z"), nullptr);
}

}  // namespace
}  // namespace warden::api::responses
