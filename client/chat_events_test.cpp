// The pure half of `warden chat`: stream payloads → events, answers → decisions, settings,
// request bodies (client/chat_events.h).
#include "client/chat_events.h"

#include <gtest/gtest.h>

namespace warden::client {
namespace {

template <class T>
T only(const std::vector<stream_event>& events) {
  EXPECT_EQ(events.size(), 1u);
  return std::get<T>(events.at(0));
}

TEST(ChatStream, ContentReasoningAndFinishInOrder) {
  const auto events = parse_stream_data(
      R"({"choices":[{"index":0,"delta":{"reasoning_content":"hmm","content":"Hi"},"finish_reason":"stop"}]})");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(std::get<text_event>(events[0]).text, "hmm");
  EXPECT_TRUE(std::get<text_event>(events[0]).reasoning);
  EXPECT_EQ(std::get<text_event>(events[1]).text, "Hi");
  EXPECT_FALSE(std::get<text_event>(events[1]).reasoning);
  EXPECT_EQ(std::get<finish_event>(events[2]).reason, "stop");
}

TEST(ChatStream, NothingForRoleOnlyUsageOnlyAndJunk) {
  EXPECT_TRUE(parse_stream_data(R"({"choices":[{"delta":{"role":"assistant","content":null}}]})").empty());
  EXPECT_TRUE(parse_stream_data(R"({"choices":[],"usage":{"total_tokens":3}})").empty());
  EXPECT_TRUE(parse_stream_data("{not json").empty());
  EXPECT_TRUE(parse_stream_data(R"({"type":"tool_something_new","x":1})").empty());
  EXPECT_TRUE(parse_stream_data(R"([1,2])").empty());
  EXPECT_TRUE(parse_stream_data(R"({"choices":[{"delta":{"content":""},"finish_reason":null}]})").empty());
}

TEST(ChatStream, DoneAndInBandError) {
  EXPECT_TRUE(std::holds_alternative<done_event>(parse_stream_data("[DONE]").at(0)));
  EXPECT_EQ(only<error_event>(parse_stream_data(R"({"error":{"message":"upstream broke","type":"api_error"}})")).message,
            "upstream broke");
  EXPECT_EQ(only<error_event>(parse_stream_data(R"({"error":{}})")).message, "the server reported an error");
}

TEST(ChatStream, AwaitingToolStartCarriesEverything) {
  const auto e = only<tool_start_event>(parse_stream_data(
      R"({"type":"tool_start","tool_name":"terminal","tool_call_id":"call_1","arguments":{"command":"rm -rf x"},)"
      R"("approval_id":"Xq3abc","awaiting_confirmation":true,"provenance":{"source":"local","healed":false},)"
      R"J("risk":{"level":"high","reasons":["runs rm (destructive)",7]}})J"));
  EXPECT_EQ(e.tool, "terminal");
  EXPECT_EQ(e.call_id, "call_1");
  EXPECT_EQ(e.arguments, json::parse(R"({"command":"rm -rf x"})"));
  EXPECT_EQ(e.approval_id, "Xq3abc");
  EXPECT_TRUE(e.awaiting);
  EXPECT_FALSE(e.provisional);
  ASSERT_TRUE(e.risk.has_value());
  EXPECT_EQ(e.risk->level, "high");
  EXPECT_EQ(e.risk->reasons, std::vector<std::string>{"runs rm (destructive)"});
}

TEST(ChatStream, ProvisionalCardAndMissingRisk) {
  const auto e = only<tool_start_event>(parse_stream_data(
      R"({"type":"tool_start","tool_name":"render_html","tool_call_id":"c","arguments":{},)"
      R"("provenance":{"source":"local","healed":false,"provisional":true}})"));
  EXPECT_TRUE(e.provisional);
  EXPECT_FALSE(e.awaiting);
  EXPECT_FALSE(e.risk.has_value());
}

TEST(ChatStream, AwaitingWithoutApprovalIdIsNotAskable) {
  const auto e = only<tool_start_event>(
      parse_stream_data(R"({"type":"tool_start","tool_name":"python","awaiting_confirmation":true})"));
  EXPECT_FALSE(e.awaiting);
}

TEST(ChatStream, OtherControlFrames) {
  EXPECT_EQ(only<tool_status_event>(parse_stream_data(R"({"type":"tool_status","content":"Running Python"})")).text,
            "Running Python");
  const auto out = only<tool_output_event>(
      parse_stream_data(R"({"type":"tool_output","tool_name":"python","tool_call_id":"c","text":"42\n"})"));
  EXPECT_EQ(out.text, "42\n");
  EXPECT_EQ(out.call_id, "c");
  EXPECT_EQ(only<tool_args_event>(parse_stream_data(R"({"type":"tool_args","tool_name":"x","tool_call_id":"c","text":"{\"co"})")).text,
            "{\"co");
}

TEST(ChatStream, ToolEndWithAndWithoutWhoDecided) {
  const auto old = only<tool_end_event>(
      parse_stream_data(R"({"type":"tool_end","tool_name":"python","tool_call_id":"c","result":"42\n"})"));
  EXPECT_EQ(old.result, "42\n");
  EXPECT_FALSE(old.decided_by.has_value());
  EXPECT_FALSE(old.allowed.has_value());
  const auto now = only<tool_end_event>(parse_stream_data(
      R"({"type":"tool_end","tool_name":"python","tool_call_id":"c","result":"no","decided_by":"user","allowed":false})"));
  EXPECT_EQ(now.decided_by, "user");
  EXPECT_EQ(now.allowed, false);
}

TEST(ChatStream, ElicitationRequests) {
  struct row {
    const char* payload;
    const char* server;
    const char* mode;
    const char* message;
    const char* schema;
    const char* url;
  };
  const row rows[] = {
      {R"({"type":"elicitation_request","tool_name":"fake__ask","tool_call_id":"call_1","approval_id":"ap1",)"
       R"("server":"fake","mode":"form","message":"Who are you?",)"
       R"("requested_schema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}})",
       "fake", "form", "Who are you?",
       R"({"type":"object","properties":{"name":{"type":"string"}},"required":["name"]})", ""},
      {R"({"type":"elicitation_request","tool_name":"fake__ask_url","approval_id":"ap1","server":"fake",)"
       R"("mode":"url","message":"Sign in","url":"https://example.com/x"})",
       "fake", "url", "Sign in", "{}", "https://example.com/x"},
      // no mode: a form; a schema that is not an object: {}
      {R"({"type":"elicitation_request","approval_id":"ap1","server":"s","message":"m","requested_schema":[1]})",
       "s", "form", "m", "{}", ""},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.payload);
    const auto e = only<elicitation_event>(parse_stream_data(r.payload));
    EXPECT_EQ(e.approval_id, "ap1");
    EXPECT_EQ(e.server, r.server);
    EXPECT_EQ(e.mode, r.mode);
    EXPECT_EQ(e.message, r.message);
    EXPECT_EQ(e.schema, json::parse(r.schema));
    EXPECT_EQ(e.url, r.url);
  }
  const auto first = only<elicitation_event>(parse_stream_data(rows[0].payload));
  EXPECT_EQ(first.tool, "fake__ask");
  EXPECT_EQ(first.call_id, "call_1");
}

TEST(ChatAnswers, MapToDecisions) {
  struct row {
    const char* line;
    std::optional<decision> want;
  };
  const row rows[] = {
      {"y", decision::allow},          {" y ", decision::allow},       {"Y", decision::allow},
      {"yes", decision::allow},        {"YES", decision::allow},       {"a", decision::allow_session},
      {"A", decision::allow_always},   {"n", decision::deny},          {"N", decision::deny},
      {"no", decision::deny},          {"", std::nullopt},             {"maybe", std::nullopt},
      {"ya", std::nullopt},            {"always", std::nullopt},       {"aA", std::nullopt},
  };
  for (const auto& r : rows) EXPECT_EQ(parse_answer(r.line), r.want) << "'" << r.line << "'";
  EXPECT_STREQ(wire_name(decision::allow), "allow");
  EXPECT_STREQ(wire_name(decision::allow_session), "allow_session");
  EXPECT_STREQ(wire_name(decision::allow_always), "allow_always");
  EXPECT_STREQ(wire_name(decision::deny), "deny");
}

TEST(ChatSettings, Modes) {
  EXPECT_EQ(parse_mode("ask"), permission_mode::ask);
  EXPECT_EQ(parse_mode(" AUTO "), permission_mode::auto_);
  EXPECT_EQ(parse_mode("off"), permission_mode::off);
  EXPECT_EQ(parse_mode("full"), permission_mode::full);
  EXPECT_EQ(parse_mode("bypass"), std::nullopt);
  EXPECT_EQ(parse_mode(""), std::nullopt);
  EXPECT_STREQ(to_string(permission_mode::auto_), "auto");
}

TEST(ChatSettings, ToolSelections) {
  std::string why;
  EXPECT_EQ(parse_tool_selection("all", why), std::nullopt);
  EXPECT_TRUE(why.empty());
  EXPECT_EQ(parse_tool_selection("none", why), std::vector<std::string>{});
  EXPECT_EQ(parse_tool_selection("python,terminal", why), (std::vector<std::string>{"python", "terminal"}));
  EXPECT_EQ(parse_tool_selection(" python  terminal,python ", why), (std::vector<std::string>{"python", "terminal"}));
  parse_tool_selection("python,rm -rf", why);
  EXPECT_NE(why.find("unknown tool 'rm'"), std::string::npos) << why;  // well-formed, but not a tool
  parse_tool_selection("pythn", why);
  EXPECT_NE(why.find("unknown tool 'pythn'"), std::string::npos) << why;
  parse_tool_selection("py$thon", why);
  EXPECT_NE(why.find("py$thon"), std::string::npos);
  parse_tool_selection("  ", why);
  EXPECT_FALSE(why.empty());
  EXPECT_EQ(describe_tools(std::nullopt), "all");
  EXPECT_EQ(describe_tools(std::vector<std::string>{}), "none");
  EXPECT_EQ(describe_tools(std::vector<std::string>{"python", "terminal"}), "python, terminal");
}

TEST(ChatSettings, Commands) {
  EXPECT_EQ(parse_command("/mode full").name, "mode");
  EXPECT_EQ(parse_command("/mode full").args, "full");
  EXPECT_EQ(parse_command("  /rules   revoke rule_1 ").args, "revoke rule_1");
  EXPECT_EQ(parse_command("/new").name, "new");
  EXPECT_EQ(parse_command("/new").args, "");
  EXPECT_EQ(parse_command("what is /etc").name, "");
  EXPECT_EQ(parse_command("/").name, "");
}

TEST(ChatRequests, BodyCarriesTheRun) {
  run_settings s;
  s.model = "m";
  s.mode = permission_mode::auto_;
  s.session_id = "chat-1";
  const std::vector<chat_message> msgs = {{"user", "hi"}, {"assistant", "hello"}, {"user", "again"}};
  json body = chat_request_body(s, msgs, "run-1");
  EXPECT_EQ(body, json::parse(R"({"model":"m","stream":true,"enable_tools":true,"permission_mode":"auto",
    "session_id":"chat-1","cancel_id":"run-1","messages":[{"role":"user","content":"hi"},
    {"role":"assistant","content":"hello"},{"role":"user","content":"again"}]})"));
  s.system_prompt = "Be brief.";
  EXPECT_EQ(chat_request_body(s, msgs, "run-1")["messages"][0], json::parse(R"({"role":"system","content":"Be brief."})"));
  EXPECT_EQ(chat_request_body(s, msgs, "run-1")["messages"].size(), 4u);
  s.system_prompt.clear();
  s.tools = std::vector<std::string>{"python"};
  EXPECT_EQ(chat_request_body(s, msgs, "run-1")["enabled_tools"], json::parse(R"(["python"])"));
  s.tools = std::vector<std::string>{};  // "/tools none"
  EXPECT_EQ(chat_request_body(s, msgs, "run-1")["enable_tools"], false);
  EXPECT_FALSE(chat_request_body(s, msgs, "run-1").contains("enabled_tools"));
  EXPECT_FALSE(chat_request_body(s, msgs, "run-1").contains("mcp_enabled"));
  s.mcp = true;  // --mcp
  EXPECT_EQ(chat_request_body(s, msgs, "run-1")["mcp_enabled"], true);
  EXPECT_EQ(confirm_body("ap", decision::allow_session, "chat-1"),
            json::parse(R"({"approval_id":"ap","decision":"allow_session","session_id":"chat-1"})"));
}

TEST(ChatRequests, ErrorMessages) {
  EXPECT_EQ(http_error_message(401, R"({"error":{"message":"invalid API key","type":"authentication_error"}})"),
            "HTTP 401: invalid API key");
  EXPECT_EQ(http_error_message(500, "upstream exploded\nmore"), "HTTP 500: upstream exploded");
  EXPECT_EQ(http_error_message(502, ""), "HTTP 502");
}

TEST(ChatSettings, SessionIds) {
  EXPECT_TRUE(valid_session_id("chat-AZaz09_-"));
  EXPECT_TRUE(valid_session_id(std::string(64, 'x')));
  EXPECT_FALSE(valid_session_id(std::string(65, 'x')));
  EXPECT_FALSE(valid_session_id(""));
  EXPECT_FALSE(valid_session_id("bad id"));
  EXPECT_FALSE(valid_session_id("../x"));
  EXPECT_FALSE(valid_session_id("é"));
}

TEST(ChatRequests, ModelsUrlsAndEncoding) {
  EXPECT_EQ(first_model_id(R"({"object":"list","data":[{"id":"fake-model"},{"id":"b"}]})"), "fake-model");
  EXPECT_EQ(first_model_id(R"({"data":[]})"), std::nullopt);
  EXPECT_EQ(first_model_id("nope"), std::nullopt);
  EXPECT_EQ(normalize_base_url("http://127.0.0.1:8888/v1/"), "http://127.0.0.1:8888");
  EXPECT_EQ(normalize_base_url("http://h:1/"), "http://h:1");
  EXPECT_EQ(normalize_base_url(" http://h:1 "), "http://h:1");
  EXPECT_EQ(url_encode("chat-a_b.c~"), "chat-a_b.c~");
  EXPECT_EQ(url_encode("a b&c/d"), "a%20b%26c%2Fd");
}

}  // namespace
}  // namespace warden::client
