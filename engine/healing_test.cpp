// engine/healing.h: the decorator over a scripted turn — healed calls become structured call
// events with the turn ending as a tool turn; text, reasoning and undeclared markup pass as written.
#include <gtest/gtest.h>

#include "engine/healing.h"
#include "engine/testing/scripted_backend.h"

namespace warden::engine {
namespace {

using testing::drain;
using testing::scripted_backend;
using testing::text_of;

model::chat_request with_tools(std::vector<std::string> names) {
  model::chat_request req;
  for (auto& n : names) req.tools.push_back({n, "", json::object()});
  return req;
}

struct seen_call {
  std::size_t index;
  std::string id, name, arguments;
  bool healed;
  bool finished;
};

std::vector<seen_call> calls_of(const std::vector<model::stream_event>& evs) {
  std::vector<seen_call> out;
  for (const auto& e : evs) {
    if (const auto* s = std::get_if<model::tool_call_started>(&e)) out.push_back({s->index, s->id, s->name, "", s->healed, false});
    if (const auto* a = std::get_if<model::tool_call_arguments_delta>(&e)) {
      for (auto& c : out) {
        if (c.index == a->index) c.arguments += a->fragment;
      }
    }
    if (const auto* f = std::get_if<model::tool_call_finished>(&e)) {
      for (auto& c : out) {
        if (c.index == f->index) c.finished = true;
      }
    }
  }
  return out;
}

std::optional<model::finish_reason> finish_of(const std::vector<model::stream_event>& evs) {
  std::optional<model::finish_reason> r;
  for (const auto& e : evs) {
    if (const auto* f = std::get_if<model::finish_event>(&e)) r = f->reason;
  }
  return r;
}

TEST(HealingBackend, TwoHermesCallsBecomeTwoStructuredCallsAndAToolTurn) {
  scripted_backend inner;
  inner.events = {model::reasoning_delta{"<tool_call>not this</tool_call>"},
                  model::text_delta{"Let me check.\n<tool_"},
                  model::text_delta{"call>{\"name\": \"get-weather\", \"arguments\": {\"city\": \"東京\"}}</tool_call>\n<tool_call>"},
                  model::text_delta{"{\"name\": \"search.web_query\", \"arguments\": {\"q\": \"a \\\"b\\\"\"}}</tool_call>"},
                  model::finish_event{model::finish_reason::stop},
                  model::usage_event{{3, 4, 7}}};
  healing_backend heal(inner, {"get-weather", "search.web_query"});
  const auto evs = drain(heal, with_tools({"get-weather", "search.web_query"}));
  EXPECT_EQ(text_of(evs), "Let me check.\n");
  const auto calls = calls_of(evs);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].name, "get-weather");
  EXPECT_EQ(*parse_json(calls[0].arguments), (json{{"city", "東京"}}));
  EXPECT_EQ(calls[1].name, "search.web_query");
  EXPECT_EQ(*parse_json(calls[1].arguments), (json{{"q", "a \"b\""}}));
  EXPECT_NE(calls[0].id, calls[1].id);
  EXPECT_EQ(calls[0].id.rfind("call_", 0), 0u);
  EXPECT_NE(calls[0].index, calls[1].index);
  EXPECT_TRUE(calls[0].healed && calls[0].finished && calls[1].finished);
  EXPECT_EQ(finish_of(evs), model::finish_reason::tool_calls);
  // reasoning is untouched and comes first; usage still follows the finish
  ASSERT_TRUE(std::holds_alternative<model::reasoning_delta>(evs.front()));
  EXPECT_EQ(std::get<model::reasoning_delta>(evs.front()).text, "<tool_call>not this</tool_call>");
  EXPECT_TRUE(std::holds_alternative<model::usage_event>(evs.back()));
}

TEST(HealingBackend, PlainTextPassesDeltaByDelta) {
  scripted_backend inner;
  inner.events = {model::text_delta{"Hello"}, model::text_delta{", world"}, model::finish_event{model::finish_reason::stop}};
  healing_backend heal(inner, {"lookup"});
  const auto evs = drain(heal, with_tools({"lookup"}));
  ASSERT_EQ(evs.size(), 3u);
  EXPECT_EQ(std::get<model::text_delta>(evs[0]).text, "Hello");
  EXPECT_EQ(std::get<model::text_delta>(evs[1]).text, ", world");
  EXPECT_EQ(finish_of(evs), model::finish_reason::stop);
}

TEST(HealingBackend, AnUndeclaredNameStaysTextAsWritten) {
  const std::string t = "<tool_call>{\"name\": \"rm\", \"arguments\": {}}</tool_call> ok";
  scripted_backend inner;
  inner.events = {model::text_delta{t}, model::finish_event{model::finish_reason::stop}};
  healing_backend heal(inner, {"lookup"});
  const auto evs = drain(heal, with_tools({"lookup"}));
  EXPECT_EQ(text_of(evs), t);
  EXPECT_TRUE(calls_of(evs).empty());
  EXPECT_EQ(finish_of(evs), model::finish_reason::stop);
}

TEST(HealingBackend, ATurnWithStructuredCallsIsNotHealed) {
  const std::string t = "<tool_call>{\"name\": \"lookup\", \"arguments\": {}}</tool_call>";
  scripted_backend inner;
  inner.events = {model::tool_call_started{0, "call_up", "lookup"}, model::tool_call_arguments_delta{0, "{}"},
                  model::tool_call_finished{0}, model::text_delta{t}, model::finish_event{model::finish_reason::tool_calls}};
  healing_backend heal(inner, {"lookup"});
  const auto evs = drain(heal, with_tools({"lookup"}));
  EXPECT_EQ(text_of(evs), t);
  ASSERT_EQ(calls_of(evs).size(), 1u);
  EXPECT_FALSE(calls_of(evs)[0].healed);
}

TEST(HealingBackend, NoDeclaredToolsNoHealing) {
  const std::string t = "<tool_call>{\"name\": \"lookup\", \"arguments\": {}}</tool_call>";
  scripted_backend inner;
  inner.events = {model::text_delta{t}, model::finish_event{model::finish_reason::stop}};
  healing_backend heal(inner, {});
  const auto evs = drain(heal, model::chat_request{});
  EXPECT_EQ(text_of(evs), t);
  EXPECT_EQ(finish_of(evs), model::finish_reason::stop);
}

TEST(HealingBackend, AnErrorReleasesWhatWasHeldAsText) {
  scripted_backend inner;
  inner.events = {model::text_delta{"a <tool_call>{\"name\": \"lookup\""},
                  model::error_event{make_error(errc::upstream_error, "broke")}};
  healing_backend heal(inner, {"lookup"});
  const auto evs = drain(heal, with_tools({"lookup"}));
  EXPECT_EQ(text_of(evs), "a <tool_call>{\"name\": \"lookup\"");
  EXPECT_TRUE(calls_of(evs).empty());
  EXPECT_TRUE(std::holds_alternative<model::error_event>(evs.back()));
}

TEST(HealingBackend, ATurnCutByMaxTokensIsNotHealed) {
  // Its call was cut short: running the repaired half is not what the model meant.
  const std::string t = "<tool_call>{\"name\": \"lookup\", \"arguments\": {\"q\": \"rm -rf /home/us";
  scripted_backend inner;
  inner.events = {model::text_delta{t}, model::finish_event{model::finish_reason::length}};
  healing_backend heal(inner, {"lookup"});
  const auto evs = drain(heal, with_tools({"lookup"}));
  EXPECT_EQ(text_of(evs), t);
  EXPECT_TRUE(calls_of(evs).empty());
  EXPECT_EQ(finish_of(evs), model::finish_reason::length);
}

TEST(HealingBackend, ACallCutShortWithoutAFinishStillEndsAsAToolTurn) {
  scripted_backend inner;
  inner.events = {model::text_delta{"<tool_call>{\"name\": \"lookup\", \"arguments\": {\"q\": \"x"}};
  healing_backend heal(inner, {"lookup"});
  const auto evs = drain(heal, with_tools({"lookup"}));
  ASSERT_EQ(calls_of(evs).size(), 1u);
  EXPECT_EQ(*parse_json(calls_of(evs)[0].arguments), (json{{"q", "x"}}));
  EXPECT_EQ(finish_of(evs), model::finish_reason::tool_calls);
}

}  // namespace
}  // namespace warden::engine
