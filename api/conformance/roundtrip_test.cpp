// Property: OpenAI → model → Anthropic → model is stable (issue 11). For conversations an
// OpenAI client sends (system prompt, user text and images, assistant text / reasoning /
// parallel tool calls, tool results, in any realistic order), converting the typed model to
// Anthropic's wire format and back gives the same typed model, and a second round trip gives
// the same Anthropic body. Seeded, so a failure names a reproducible case.
#include <gtest/gtest.h>

#include <random>

#include "api/anthropic/convert.h"
#include "api/openai/convert.h"

namespace warden::api {
namespace {

/// A model conversation as plain JSON, for comparison and readable failures.
json canon(const std::vector<model::message>& msgs) {
  json out = json::array();
  for (const auto& m : msgs) {
    json parts = json::array();
    for (const auto& p : m.content) {
      if (const auto* t = std::get_if<model::text_part>(&p)) parts.push_back({{"text", t->text}});
      else if (const auto* r = std::get_if<model::reasoning_part>(&p)) parts.push_back({{"reasoning", r->text}});
      else if (const auto* c = std::get_if<model::tool_call_part>(&p)) parts.push_back({{"call", {c->id, c->name, c->arguments}}});
      else if (const auto* res = std::get_if<model::tool_result_part>(&p)) parts.push_back({{"result", {res->tool_call_id, res->content, res->is_error}}});
      else if (const auto* i = std::get_if<model::image_part>(&p)) parts.push_back({{"image", i->url}});
      else parts.push_back({{"opaque", std::get<model::opaque_part>(p).value}});
    }
    out.push_back({{"role", model::to_string(m.role)}, {"parts", std::move(parts)}});
  }
  return out;
}

class generator {
 public:
  explicit generator(unsigned seed) : rng_(seed) {}

  json conversation() {
    json msgs = json::array();
    if (coin()) msgs.push_back({{"role", "system"}, {"content", text()}});
    const int exchanges = pick(1, 4);
    for (int e = 0; e < exchanges; ++e) {
      msgs.push_back(user());
      const int turns = pick(1, 3);
      for (int t = 0; t < turns; ++t) {
        const bool last = t == turns - 1;
        json a = assistant(!last);
        const json calls = a.value("tool_calls", json::array());
        msgs.push_back(std::move(a));
        for (const auto& c : calls) msgs.push_back({{"role", "tool"}, {"tool_call_id", c["id"]}, {"content", text()}});
      }
    }
    if (coin()) msgs.push_back(user());
    return json{{"model", "m"}, {"messages", std::move(msgs)}};
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool coin() { return pick(0, 1) == 1; }
  std::string text() {
    static const char* words[] = {"hello", "world", "ünïcødé", "{\"json\": 1}", "line\nbreak", "tab\there", "42", "😀"};
    std::string s;
    const int n = pick(1, 5);
    for (int i = 0; i < n; ++i) s += (i ? " " : "") + std::string(words[pick(0, 7)]);
    return s;
  }
  json user() {
    if (coin()) return {{"role", "user"}, {"content", text()}};
    json parts = json::array();
    const int n = pick(1, 3);
    for (int i = 0; i < n; ++i) {
      switch (pick(0, 2)) {
        case 0: parts.push_back({{"type", "text"}, {"text", text()}}); break;
        case 1: parts.push_back({{"type", "image_url"}, {"image_url", {{"url", "data:image/png;base64,iVBORw0KGgo" + std::to_string(i)}}}}); break;
        default: parts.push_back({{"type", "image_url"}, {"image_url", {{"url", "https://img.test/" + std::to_string(i) + ".jpg"}}}});
      }
    }
    return {{"role", "user"}, {"content", std::move(parts)}};
  }
  json assistant(bool with_calls) {
    json a = {{"role", "assistant"}};
    if (coin()) a["reasoning_content"] = text();
    a["content"] = with_calls && coin() ? json() : json(text());
    if (with_calls) {
      json calls = json::array();
      const int n = pick(1, 3);
      for (int i = 0; i < n; ++i) {
        json args = json::object();
        if (coin()) args["city"] = text();
        if (coin()) args["n"] = pick(0, 100);
        if (coin()) args["nested"] = {{"list", {1, 2, 3}}, {"flag", true}};
        calls.push_back({{"id", "call_" + std::to_string(next_id_++)}, {"type", "function"},
                         {"function", {{"name", i % 2 ? "get_time" : "get_weather"}, {"arguments", args.dump()}}}});
      }
      a["tool_calls"] = std::move(calls);
    }
    return a;
  }
  std::mt19937 rng_;
  int next_id_ = 0;
};

std::vector<model::message> from_anthropic(const json& body) {
  auto r = anthropic::to_model_messages(body.value("system", json()), body["messages"]);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message) << "\n" << body.dump(2);
  return r.ok() ? std::move(*r) : std::vector<model::message>{};
}

TEST(OpenaiAnthropicRoundTrip, IsStableOverManySeededConversations) {
  for (unsigned seed = 1; seed <= 500; ++seed) {
    generator g(seed);
    const json openai_body = g.conversation();
    auto m1 = openai::to_model_request(openai_body);
    ASSERT_TRUE(m1.ok()) << "seed " << seed << ": " << m1.error().message;
    const json a1 = anthropic::to_anthropic(m1->messages);
    const auto m2 = from_anthropic(a1);
    const json a2 = anthropic::to_anthropic(m2);
    const auto m3 = from_anthropic(a2);
    ASSERT_EQ(canon(m2), canon(m1->messages)) << "seed " << seed << "\nopenai: " << openai_body.dump(2)
                                              << "\nanthropic: " << a1.dump(2);
    ASSERT_EQ(a2, a1) << "seed " << seed;
    ASSERT_EQ(canon(m3), canon(m2)) << "seed " << seed;
  }
}

TEST(OpenaiAnthropicRoundTrip, ToolCallIdsPairAcrossDialects) {
  const json body = json::parse(R"({"model":"m","messages":[
    {"role":"user","content":"both"},
    {"role":"assistant","content":null,"tool_calls":[
      {"id":"call_a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}},
      {"id":"call_b","type":"function","function":{"name":"g","arguments":"{}"}}]},
    {"role":"tool","tool_call_id":"call_a","content":"one"},
    {"role":"tool","tool_call_id":"call_b","content":"two"},
    {"role":"user","content":"thanks"}]})");
  auto m = openai::to_model_request(body);
  ASSERT_TRUE(m.ok());
  const json a = anthropic::to_anthropic(m->messages);
  ASSERT_EQ(a["messages"].size(), 3u);
  const json& calls = a["messages"][1]["content"];
  const json& results = a["messages"][2]["content"];
  ASSERT_EQ(results.size(), 3u);  // both results, then the user's text, in one user message
  EXPECT_EQ(results[0]["tool_use_id"], calls[0]["id"]);
  EXPECT_EQ(results[1]["tool_use_id"], calls[1]["id"]);
  EXPECT_EQ(results[2], json::parse(R"({"type":"text","text":"thanks"})"));
}

}  // namespace
}  // namespace warden::api
