#include <gtest/gtest.h>

#include "api/openai/chat_request.h"

namespace warden::api::openai {
namespace {

struct reject_case {
  const char* name;
  std::string body;
  const char* param;  ///< expected `param` ("" = null)
  const char* code;   ///< expected `code`
};

class ChatRequestRejects : public ::testing::TestWithParam<reject_case> {};

TEST_P(ChatRequestRejects, With400AndParam) {
  const auto& c = GetParam();
  auto r = parse_chat_request(c.body);
  ASSERT_FALSE(r.ok()) << c.name;
  EXPECT_EQ(r.error().code, errc::invalid_request) << c.name;
  EXPECT_EQ(http_status(r.error().code), 400);
  EXPECT_EQ(r.error().param, c.param) << c.name << ": " << r.error().message;
  EXPECT_EQ(r.error().type_code, c.code) << c.name << ": " << r.error().message;
  EXPECT_FALSE(r.error().message.empty());
}

const std::string user = R"({"role":"user","content":"hi"})";

INSTANTIATE_TEST_SUITE_P(
    Table, ChatRequestRejects,
    ::testing::Values(
        reject_case{"empty body", "", "", "invalid_json"},
        reject_case{"whitespace body", "  \n", "", "invalid_json"},
        reject_case{"not json", "hello", "", "invalid_json"},
        reject_case{"truncated json", R"({"messages":[)", "", "invalid_json"},
        reject_case{"non utf8", std::string("{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}"), "",
                    "invalid_json"},
        reject_case{"array top level", "[1,2]", "", "invalid_type"},
        reject_case{"number overflow", "{\"messages\":[" + user + "],\"temperature\":1e400}", "", "invalid_json"},
        reject_case{"nested 100k deep", std::string(100000, '[') + std::string(100000, ']'), "", "invalid_json"},
        reject_case{"no messages", "{}", "messages", "missing_required_parameter"},
        reject_case{"n_probs huge", "{\"messages\":[" + user + "],\"n_probs\":100000000}", "n_probs", "invalid_value"},
        reject_case{"duplicate key at the top",
                    "{\"messages\":[" + user + "],\"bypass_permissions\":false,\"bypass_permissions\":true}",
                    "bypass_permissions", "duplicate_key"},
        reject_case{"duplicate key nested",
                    R"({"messages":[{"role":"user","content":"a","content":"b"}]})", "content", "duplicate_key"},
        reject_case{"grammar with warden's tools",
                    "{\"messages\":[" + user + "],\"enable_tools\":true,\"stream\":true,\"grammar\":\"root ::= x\"}",
                    "grammar", "unsupported_parameter"},
        reject_case{"json_schema with warden's tools",
                    "{\"messages\":[" + user + "],\"enable_tools\":true,\"stream\":true,\"json_schema\":{}}",
                    "json_schema", "unsupported_parameter"},
        reject_case{"messages not a list", R"({"messages":"hi"})", "messages", "invalid_type"},
        reject_case{"messages object", R"({"messages":{"role":"user"}})", "messages", "invalid_type"},
        reject_case{"messages empty", R"({"messages":[]})", "messages", "invalid_value"},
        reject_case{"only system", R"({"messages":[{"role":"system","content":"x"}]})", "messages",
                    "invalid_value"},
        reject_case{"message not object", R"({"messages":[42]})", "messages[0]", "invalid_type"},
        reject_case{"bad role", R"({"messages":[{"role":"wizard","content":"x"}]})", "messages[0].role",
                    "invalid_value"},
        reject_case{"role missing", R"({"messages":[{"content":"x"}]})", "messages[0].role", "invalid_value"},
        reject_case{"user without content", R"({"messages":[{"role":"user"}]})", "messages[0].content",
                    "missing_required_parameter"},
        reject_case{"content number", R"({"messages":[{"role":"user","content":5}]})",
                    "messages[0].content", "invalid_type"},
        reject_case{"content part without text",
                    R"({"messages":[{"role":"user","content":[{"type":"text"}]}]})",
                    "messages[0].content[0].text", "invalid_value"},
        reject_case{"temperature string", "{\"messages\":[" + user + "],\"temperature\":\"hot\"}",
                    "temperature", "invalid_type"},
        reject_case{"temperature range", "{\"messages\":[" + user + "],\"temperature\":3}", "temperature",
                    "invalid_value"},
        reject_case{"stream string", "{\"messages\":[" + user + "],\"stream\":\"yes\"}", "stream",
                    "invalid_type"},
        reject_case{"max_tokens zero", "{\"messages\":[" + user + "],\"max_tokens\":0}", "max_tokens",
                    "invalid_value"},
        reject_case{"max_tokens float", "{\"messages\":[" + user + "],\"max_tokens\":1.5}", "max_tokens",
                    "invalid_type"},
        reject_case{"model number", "{\"messages\":[" + user + "],\"model\":7}", "model", "invalid_type"},
        reject_case{"stop number", "{\"messages\":[" + user + "],\"stop\":7}", "stop", "invalid_type"},
        reject_case{"tools not list", "{\"messages\":[" + user + "],\"tools\":{}}", "tools", "invalid_type"},
        reject_case{"tool without name",
                    "{\"messages\":[" + user + "],\"tools\":[{\"type\":\"function\",\"function\":{}}]}", "tools",
                    "invalid_value"},
        reject_case{"tool_choice bogus", "{\"messages\":[" + user + "],\"tool_choice\":\"always\"}",
                    "tool_choice", "invalid_value"},
        reject_case{"tool_choice bogus type",
                    "{\"messages\":[" + user + "],\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\"}}],"
                    "\"tool_choice\":{\"type\":\"bogus\",\"function\":{\"name\":\"a\"}}}",
                    "tool_choice", "invalid_value"},
        reject_case{"tool_choice allowed_tools type",
                    "{\"messages\":[" + user + "],\"tool_choice\":{\"type\":\"allowed_tools\"}}", "tool_choice",
                    "invalid_value"},
        reject_case{"tool_choice without name",
                    "{\"messages\":[" + user + "],\"tool_choice\":{\"type\":\"function\"}}", "tool_choice",
                    "invalid_value"},
        reject_case{"tool_choice unknown function",
                    "{\"messages\":[" + user + "],\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\"}}],"
                    "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"b\"}}}",
                    "tool_choice", "invalid_value"},
        reject_case{"tool_choice without tools",
                    "{\"messages\":[" + user + "],\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"b\"}}}",
                    "tool_choice", "invalid_value"},
        reject_case{"stream_options without stream",
                    "{\"messages\":[" + user + "],\"stream_options\":{\"include_usage\":true}}", "stream_options",
                    "invalid_value"},
        reject_case{"n>1 streaming", "{\"messages\":[" + user + "],\"stream\":true,\"n\":2}", "n",
                    "unsupported_parameter"}),
    [](const ::testing::TestParamInfo<reject_case>& info) {
      std::string n = info.param.name;
      for (auto& ch : n) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return n;
    });

TEST(ChatRequest, AcceptsPlainAndPassesFieldsThrough) {
  auto r = parse_chat_request(R"({"model":"m","messages":[{"role":"developer","content":"be brief"},
      {"role":"user","content":[{"type":"text","text":"hi"}]}],"stream":true,
      "stream_options":{"include_usage":true},"temperature":0.2,"top_k":40,"seed":1,
      "tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}],
      "tool_choice":{"type":"function","function":{"name":"get_weather"}},"x_custom":{"kept":true}})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->stream);
  EXPECT_TRUE(r->include_usage);
  EXPECT_EQ(r->body["messages"][0]["role"], "system");  // developer → system
  EXPECT_EQ(r->body["x_custom"]["kept"], true);
  EXPECT_EQ(r->body["top_k"], 40);
}

TEST(ChatRequest, SameKeyInDifferentObjectsIsFine) {
  auto r = parse_chat_request(
      R"({"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}],"grammar":"root ::= x"})");
  ASSERT_TRUE(r.ok()) << r.error().message;  // and grammar passes through when warden's tools are off
  EXPECT_EQ(r->body["grammar"], "root ::= x");
}

TEST(ChatRequest, ToolMessageNullContentBecomesEmpty) {
  auto r = parse_chat_request(R"({"messages":[{"role":"user","content":"x"},
      {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
      {"role":"tool","tool_call_id":"c1","content":null}]})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->body["messages"][2]["content"], "");
  EXPECT_FALSE(r->stream);
}

}  // namespace
}  // namespace warden::api::openai
