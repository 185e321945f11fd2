#include <gtest/gtest.h>

#include "engine/forced_tool_call.h"

namespace warden::engine {
namespace {

const json k_body = json::parse(R"({
  "messages":[{"role":"user","content":"weather in Paris?"}],
  "tools":[{"type":"function","function":{"name":"other"}},
           {"type":"function","function":{"name":"get_weather","description":"Get weather",
            "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],
  "tool_choice":{"type":"function","function":{"name":"get_weather"}},
  "parallel_tool_calls":false})");

TEST(ForcedCall, FoundOnlyForANamedListedFunction) {
  auto f = find_forced_call(k_body);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->name, "get_weather");
  EXPECT_EQ(f->description, "Get weather");
  EXPECT_EQ(f->parameters["required"][0], "city");
  EXPECT_EQ(f->call_id.rfind("call_", 0), 0u);
  EXPECT_EQ(f->call_id.size(), 29u);

  json empty_schema = k_body;
  empty_schema["tools"][1]["function"]["parameters"] = json::object();
  EXPECT_EQ(find_forced_call(empty_schema)->parameters, json({{"type", "object"}}));

  json b = k_body;
  b["tool_choice"] = "required";
  EXPECT_FALSE(find_forced_call(b).has_value());
  b["tool_choice"] = {{"type", "function"}, {"function", {{"name", "missing"}}}};
  EXPECT_FALSE(find_forced_call(b).has_value());
  b.erase("tools");
  EXPECT_FALSE(find_forced_call(b).has_value());
}

TEST(ForcedCall, RequestAsksForTheArgumentsSchema) {
  auto f = find_forced_call(k_body);
  json r = rewrite_request(k_body, *f);
  EXPECT_FALSE(r.contains("tools"));
  EXPECT_FALSE(r.contains("tool_choice"));
  EXPECT_FALSE(r.contains("parallel_tool_calls"));
  EXPECT_EQ(r["response_format"]["type"], "json_schema");
  EXPECT_EQ(r["response_format"]["json_schema"]["schema"], f->parameters);
  ASSERT_EQ(r["messages"].size(), 2u);
  EXPECT_EQ(r["messages"][0]["role"], "system");
  EXPECT_NE(r["messages"][0]["content"].get<std::string>().find("get_weather"), std::string::npos);
  // An existing system prompt is extended, not duplicated.
  json withsys = k_body;
  withsys["messages"].insert(withsys["messages"].begin(), json{{"role", "system"}, {"content", "Be brief."}});
  json r2 = rewrite_request(withsys, *f);
  ASSERT_EQ(r2["messages"].size(), 2u);
  EXPECT_EQ(r2["messages"][0]["content"].get<std::string>().rfind("Be brief.", 0), 0u);
}

TEST(ForcedCall, CompletionBecomesToolCalls) {
  auto f = find_forced_call(k_body);
  json c = json::parse(R"({"object":"chat.completion","choices":[{"index":0,"finish_reason":"stop",
      "message":{"role":"assistant","content":"{\n  \"city\": \"Paris\"\n}"}}]})");
  json r = rewrite_completion(c, *f);
  const json& m = r["choices"][0]["message"];
  EXPECT_TRUE(m["content"].is_null());
  ASSERT_EQ(m["tool_calls"].size(), 1u);
  EXPECT_EQ(m["tool_calls"][0]["id"], f->call_id);
  EXPECT_EQ(m["tool_calls"][0]["type"], "function");
  EXPECT_EQ(m["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(m["tool_calls"][0]["function"]["arguments"], R"({"city":"Paris"})");
  EXPECT_EQ(r["choices"][0]["finish_reason"], "tool_calls");
}

TEST(ForcedCall, ACompletionCutByMaxTokensIsAPartialCallThatSaysLength) {
  auto f = find_forced_call(k_body);
  json c = json::parse(R"({"choices":[{"index":0,"finish_reason":"length",
      "message":{"role":"assistant","content":"{\n  \""}}]})");
  json r = rewrite_completion(c, *f);
  EXPECT_EQ(r["choices"][0]["finish_reason"], "length");  // the client sees the cut
  EXPECT_TRUE(r["choices"][0]["message"]["content"].is_null());
  EXPECT_EQ(r["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"], "{\n  \"");
}

TEST(ForcedCall, StreamAnnouncesOnceThenSendsFragments) {
  auto f = find_forced_call(k_body);
  stream_rewriter rw(*f);
  json role = json::parse(R"({"choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]})");
  rw.rewrite(role);
  EXPECT_EQ(role["choices"][0]["delta"]["role"], "assistant");
  EXPECT_FALSE(role["choices"][0]["delta"].contains("tool_calls"));
  json c1 = json::parse(R"({"choices":[{"index":0,"delta":{"content":"{\"ci"},"finish_reason":null}]})");
  rw.rewrite(c1);
  const json& t1 = c1["choices"][0]["delta"]["tool_calls"][0];
  EXPECT_EQ(t1["index"], 0);
  EXPECT_EQ(t1["id"], f->call_id);
  EXPECT_EQ(t1["function"]["name"], "get_weather");
  EXPECT_EQ(t1["function"]["arguments"], "{\"ci");
  EXPECT_FALSE(c1["choices"][0]["delta"].contains("content"));
  json c2 = json::parse(R"({"choices":[{"index":0,"delta":{"content":"ty\":\"Paris\"}"},"finish_reason":null}]})");
  rw.rewrite(c2);
  const json& t2 = c2["choices"][0]["delta"]["tool_calls"][0];
  EXPECT_FALSE(t2.contains("id"));
  EXPECT_EQ(t2["function"]["arguments"], "ty\":\"Paris\"}");
  json fin = json::parse(R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})");
  rw.rewrite(fin);
  EXPECT_EQ(fin["choices"][0]["finish_reason"], "tool_calls");
}

json required_body() {
  json b = k_body;
  b["tool_choice"] = "required";
  return b;
}

TEST(ForcedCall, RequiredIsForcedOnlyWhenAsked) {
  EXPECT_FALSE(find_forced_call(required_body()).has_value());
  EXPECT_FALSE(find_forced_call(required_body(), false).has_value());
  json b = required_body();
  b["tool_choice"] = "auto";
  EXPECT_FALSE(find_forced_call(b, true).has_value());
  b["tool_choice"] = "none";
  EXPECT_FALSE(find_forced_call(b, true).has_value());
  // One declared function: `required` is that function's named call.
  json one = required_body();
  one["tools"].erase(0);
  auto f = find_forced_call(one, true);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->name, "get_weather");
  EXPECT_FALSE(f->any_of());
}

TEST(ForcedCall, RequiredAmongSeveralIsAnAnyOfOverNameAndArguments) {
  auto f = find_forced_call(required_body(), true);
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(f->any_of());
  EXPECT_EQ(f->names, (std::vector<std::string>{"other", "get_weather"}));
  const json& any = f->parameters["anyOf"];
  ASSERT_EQ(any.size(), 2u);
  EXPECT_EQ(any[0]["properties"]["name"]["const"], "other");
  EXPECT_EQ(any[0]["properties"]["parameters"], json({{"type", "object"}}));
  EXPECT_EQ(any[1]["properties"]["name"]["const"], "get_weather");
  EXPECT_EQ(any[1]["properties"]["parameters"]["required"][0], "city");
  EXPECT_EQ(any[1]["required"], json({"name", "parameters"}));
  // the grammar writes keys in the order the schema text has them, which is sorted: name first
  const std::string text = dump_safe(any[1]);
  EXPECT_LT(text.find("\"name\""), text.find("\"parameters\""));
  json r = rewrite_request(required_body(), *f);
  EXPECT_FALSE(r.contains("tools"));
  EXPECT_EQ(r["response_format"]["json_schema"]["schema"], f->parameters);
  const std::string sys = r["messages"][0]["content"];
  EXPECT_NE(sys.find("`other`; `get_weather` (Get weather)"), std::string::npos) << sys;
}

TEST(ForcedCall, RequiredOverManyFunctionsOrBigSchemasConstrainsTheNameOnly) {
  auto body_with = [](std::size_t n, const json& params) {
    json b = json::parse(R"({"messages":[{"role":"user","content":"hi"}],"tool_choice":"required","tools":[]})");
    for (std::size_t i = 0; i < n; ++i) {
      b["tools"].push_back({{"type", "function"}, {"function", {{"name", "f" + std::to_string(i)}, {"parameters", params}}}});
    }
    return b;
  };
  const json small = {{"type", "object"}, {"properties", {{"q", {{"type", "string"}}}}}};
  auto at_limit = find_forced_call(body_with(k_any_of_max_functions, small), true);
  ASSERT_TRUE(at_limit.has_value());
  EXPECT_EQ(at_limit->parameters["anyOf"].size(), k_any_of_max_functions);
  for (auto many : {body_with(k_any_of_max_functions + 1, small),
                    body_with(2, {{"type", "object"}, {"description", std::string(k_any_of_max_schema_bytes, 'x')}})}) {
    auto f = find_forced_call(many, true);
    ASSERT_TRUE(f.has_value());
    EXPECT_FALSE(f->parameters.contains("anyOf"));
    EXPECT_EQ(f->parameters["properties"]["name"]["enum"], json(f->names));
    EXPECT_EQ(f->parameters["properties"]["parameters"], json({{"type", "object"}}));
    EXPECT_EQ(f->parameters["required"], json({"name", "parameters"}));
  }
}

TEST(ForcedCall, RequiredCompletionBecomesTheChosenCallOrStaysText) {
  auto f = find_forced_call(required_body(), true);
  json c = json::parse(R"({"choices":[{"index":0,"finish_reason":"stop",
      "message":{"role":"assistant","content":"{\"arguments\": {\"city\": \"東京 \\\"x\\\"\"}, \"name\": \"get_weather\"}"}}]})");
  json r = rewrite_completion(c, *f);
  const json& tc = r["choices"][0]["message"]["tool_calls"][0];
  EXPECT_EQ(tc["function"]["name"], "get_weather");
  EXPECT_EQ(json::parse(tc["function"]["arguments"].get<std::string>())["city"], "東京 \"x\"");
  EXPECT_EQ(r["choices"][0]["finish_reason"], "tool_calls");
  // Cut by max_tokens, or naming an undeclared function: the text stays, finish unchanged.
  for (const char* text : {R"({"name": "get_weather", "argu)", R"({"name":"rm","arguments":{}})"}) {
    json cut = json::parse(R"({"choices":[{"index":0,"finish_reason":"length","message":{"role":"assistant"}}]})");
    cut["choices"][0]["message"]["content"] = text;
    json same = rewrite_completion(cut, *f);
    EXPECT_EQ(same, cut) << text;
  }
}

TEST(ForcedCall, RequiredStreamIsBufferedAndSentWithTheFinish) {
  auto f = find_forced_call(required_body(), true);
  const std::string answer = R"({"name":"other","arguments":{"k":[1,{"n":2}]}})";
  for (std::size_t cut = 0; cut <= answer.size(); ++cut) {
    stream_rewriter rw(*f);
    json c1 = {{"choices", {{{"index", 0}, {"delta", {{"content", answer.substr(0, cut)}}}, {"finish_reason", nullptr}}}}};
    json c2 = {{"choices", {{{"index", 0}, {"delta", {{"content", answer.substr(cut)}}}, {"finish_reason", nullptr}}}}};
    json fin = json::parse(R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})");
    rw.rewrite(c1);
    rw.rewrite(c2);
    rw.rewrite(fin);
    EXPECT_FALSE(c1["choices"][0]["delta"].contains("content"));
    EXPECT_FALSE(c2["choices"][0]["delta"].contains("tool_calls"));
    const json& tc = fin["choices"][0]["delta"]["tool_calls"][0];
    EXPECT_EQ(tc["index"], 0);
    EXPECT_EQ(tc["id"], f->call_id);
    EXPECT_EQ(tc["function"]["name"], "other");
    EXPECT_EQ(tc["function"]["arguments"], R"({"k":[1,{"n":2}]})");
    EXPECT_EQ(fin["choices"][0]["finish_reason"], "tool_calls");
  }
  stream_rewriter rw(*f);
  json c = json::parse(R"({"choices":[{"index":0,"delta":{"content":"{\"name\":\"oth"},"finish_reason":null}]})");
  json fin = json::parse(R"({"choices":[{"index":0,"delta":{},"finish_reason":"length"}]})");
  rw.rewrite(c);
  rw.rewrite(fin);
  EXPECT_EQ(fin["choices"][0]["delta"]["content"], "{\"name\":\"oth");
  EXPECT_EQ(fin["choices"][0]["finish_reason"], "length");
}

TEST(JsonMode, JsonObjectBecomesAnObjectSchema) {
  json b = {{"response_format", {{"type", "json_object"}}}};
  enforce_json_object(b);
  EXPECT_EQ(b["response_format"]["type"], "json_schema");
  EXPECT_EQ(b["response_format"]["json_schema"]["schema"], json({{"type", "object"}}));
  for (json other : {json{{"response_format", {{"type", "text"}}}}, json{{"messages", json::array()}},
                     json{{"response_format", {{"type", "json_schema"}, {"json_schema", {{"schema", {{"type", "array"}}}}}}}}}) {
    json before = other;
    enforce_json_object(other);
    EXPECT_EQ(other, before);
  }
}

TEST(ChatmlStop, ImEndIsAddedOnce) {
  json none = json::object();
  add_chatml_stop(none);
  EXPECT_EQ(none["stop"], json({"<|im_end|>"}));
  json str = {{"stop", "END"}};
  add_chatml_stop(str);
  EXPECT_EQ(str["stop"], json({"END", "<|im_end|>"}));
  json arr = {{"stop", {"a", "<|im_end|>"}}};
  add_chatml_stop(arr);
  EXPECT_EQ(arr["stop"], json({"a", "<|im_end|>"}));
  json same = {{"stop", "<|im_end|>"}};
  add_chatml_stop(same);
  EXPECT_EQ(same["stop"], "<|im_end|>");
}

}  // namespace
}  // namespace warden::engine
