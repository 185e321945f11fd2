// tool_call_text: one recorded-looking sample per family (and the hard cases: truncation, CJK,
// escaped quotes, nested JSON, several calls, undeclared names), healed whole and streamed with
// the text split at every byte position.
#include <gtest/gtest.h>

#include "common/json_util.h"
#include "engine/tool_call_text.h"

namespace warden::engine {
namespace {

const std::set<std::string> k_declared = {"get_weather", "get-weather", "search.web_query", "python", "brave_search",
                                          "lookup"};

struct sample {
  const char* what;
  std::string text;
  std::vector<std::pair<std::string, std::string>> calls;  ///< name, arguments (compared as JSON)
  std::string text_out;                                     ///< what stays text, joined
};

std::vector<sample> hermes_samples() {
  return {
      {"hermes", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
       {{"get_weather", R"({"city":"Paris"})"}}, ""},
      {"hermes two calls, CJK and escaped quotes",
       "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"東京\"}}\n</tool_call>\n"
       "<tool_call>\n{\"name\": \"lookup\", \"arguments\": {\"q\": \"say \\\"hi\\\"\"}}\n</tool_call>",
       {{"get_weather", R"({"city":"東京"})"}, {"lookup", R"({"q":"say \"hi\""})"}}, "Checking.\n"},
      {"hermes nested JSON", "<tool_call>{\"name\":\"lookup\",\"arguments\":{\"f\":{\"a\":[1,{\"b\":\"}\"}]}}}</tool_call>",
       {{"lookup", R"({"f":{"a":[1,{"b":"}"}]}})"}}, ""},
      {"hermes cut short (max_tokens)", "<tool_call>\n{\"name\": \"python\", \"arguments\": {\"code\": \"print(1",
       {{"python", R"({"code":"print(1"})"}}, ""},
      {"hermes arguments as a string", "<tool_call>{\"name\":\"lookup\",\"arguments\":\"{\\\"q\\\":1}\"}</tool_call>",
       {{"lookup", R"({"q":1})"}}, ""},
      {"hermes names with - and .",
       "<tool_call>{\"name\":\"get-weather\",\"arguments\":{}}</tool_call><tool_call>{\"name\":\"search.web_query\","
       "\"arguments\":{\"q\":\"x\"}}</tool_call>",
       {{"get-weather", "{}"}, {"search.web_query", R"({"q":"x"})"}}, ""},
      {"hermes unclosed, then words: the words stay",
       "<tool_call>{\"name\":\"lookup\",\"arguments\":{\"q\":1}}\nI looked it up.",
       {{"lookup", R"({"q":1})"}}, "\nI looked it up."},
      {"hermes two objects in one block", "<tool_call>\n{\"name\":\"lookup\",\"arguments\":{\"q\":1}}\n"
       "{\"name\":\"python\",\"arguments\":{\"code\":\"1\"}}\n</tool_call>",
       {{"lookup", R"({"q":1})"}, {"python", R"({"code":"1"})"}}, ""},
      {"hermes unclosed before the next block",
       "<tool_call>{\"name\":\"lookup\",\"arguments\":{}}\n<tool_call>{\"name\":\"python\",\"arguments\":{}}</tool_call>",
       {{"lookup", "{}"}, {"python", "{}"}}, ""},
      {"hermes closer and opener inside an argument string",
       "<tool_call>{\"name\":\"python\",\"arguments\":{\"code\":\"print(1)\\n#</tool_call>\\nprint(2) <tool_call>\"}}</tool_call> ok",
       {{"python", R"({"code":"print(1)\n#</tool_call>\nprint(2) <tool_call>"})"}}, " ok"},
      {"undeclared name stays text", "<tool_call>{\"name\":\"rm_rf\",\"arguments\":{}}</tool_call>", {},
       "<tool_call>{\"name\":\"rm_rf\",\"arguments\":{}}</tool_call>"},
      {"similar name is not renamed", "<tool_call>{\"name\":\"get_weathr\",\"arguments\":{}}</tool_call>", {},
       "<tool_call>{\"name\":\"get_weathr\",\"arguments\":{}}</tool_call>"},
  };
}

std::vector<sample> xml_samples() {
  return {
      {"glm", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>days</arg_key>"
              "<arg_value>3</arg_value>\n</tool_call>",
       {{"get_weather", R"({"city":"Beijing","days":3})"}}, ""},
      {"qwen xml", "<function=python>\n<parameter=code>\nprint(\"a\")\n</parameter>\n</function>",
       {{"python", "{\"code\":\"print(\\\"a\\\")\"}"}}, ""},
      {"qwen xml in tool_call, name= form",
       "<tool_call>\n<function name=\"lookup\">\n<parameter name=\"q\">\n中文\n</parameter>\n</function>\n</tool_call>",
       {{"lookup", R"({"q":"中文"})"}}, ""},
      {"seed-oss", "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Rome</parameter>\n</function>\n</seed:tool_call>",
       {{"get_weather", R"({"city":"Rome"})"}}, ""},
      {"minimax",
       "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Oslo</parameter>\n<parameter "
       "name=\"days\">2</parameter>\n</invoke>\n</minimax:tool_call>",
       {{"get_weather", R"({"city":"Oslo","days":2})"}}, ""},
  };
}

std::vector<sample> json_and_mistral_samples() {
  return {
      {"llama3 json", "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Lima\"}}",
       {{"get_weather", R"({"city":"Lima"})"}}, ""},
      {"llama3 built-in call", "<|python_tag|>brave_search.call(query=\"weather in \\\"SF\\\"\", n=3, safe=True)",
       {{"brave_search", R"({"query":"weather in \"SF\"","n":3,"safe":true})"}}, ""},
      {"llama3 call, Python escapes", "<|python_tag|>lookup.call(q=\"caf\\u00e9\\r\\x41\\U0001F600\\\\\")",
       {{"lookup", "{\"q\":\"café\\rA😀\\\\\"}"}}, ""},
      {"llama3.2 bare JSON at the start", "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Kyiv\"}}",
       {{"get_weather", R"({"city":"Kyiv"})"}}, ""},
      {"bare JSON that is an answer stays text", "{\"name\": \"Ada\", \"age\": 36}", {},
       "{\"name\": \"Ada\", \"age\": 36}"},
      {"mistral array", "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Nice\"}}, {\"name\": "
                        "\"lookup\", \"arguments\": {\"q\": \"x\"}}]",
       {{"get_weather", R"({"city":"Nice"})"}, {"lookup", R"({"q":"x"})"}}, ""},
      {"mistral NAME[ARGS]", "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Bern\"}", {{"get_weather", R"({"city":"Bern"})"}}, ""},
      {"mistral [CALL_ID]", "[TOOL_CALLS]lookup[CALL_ID]a1b2c3d4e[ARGS]{\"q\": \"y\"}", {{"lookup", R"({"q":"y"})"}}, ""},
      {"mistral NAME{…}", "[TOOL_CALLS]lookup{\"q\": \"z\"}", {{"lookup", R"({"q":"z"})"}}, ""},
      {"mistral [THINK] stays", "[THINK]plan[/THINK][TOOL_CALLS]lookup[ARGS]{\"q\": 1}", {{"lookup", R"({"q":1})"}},
       "[THINK]plan[/THINK]"},
      {"mistral bare rehearsal", "Sure: get_weather[ARGS]{\"city\": \"Graz\"}", {{"get_weather", R"({"city":"Graz"})"}},
       "Sure: "},
  };
}

std::vector<sample> other_samples() {
  return {
      {"gemma 4", "<|tool_call>call:get_weather{city:<|\"|>São Paulo<|\"|>,days:2,opts:{metric:true}}<tool_call|>",
       {{"get_weather", R"({"city":"São Paulo","days":2,"opts":{"metric":true}})"}}, ""},
      {"gemma bare at the start", "call:lookup{q:<|\"|>a, b}<|\"|>}", {{"lookup", R"({"q":"a, b}"})"}}, ""},
      {"deepseek r1",
       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Hanoi\"}\n```"
       "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
       {{"get_weather", R"({"city":"Hanoi"})"}}, ""},
      {"deepseek v3.1 two calls",
       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>lookup<｜tool▁sep｜>{\"q\": 1}<｜tool▁call▁end｜><｜tool▁call▁begin｜>"
       "get_weather<｜tool▁sep｜>{\"city\": \"Seoul\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
       {{"lookup", R"({"q":1})"}, {"get_weather", R"({"city":"Seoul"})"}}, ""},
      {"deepseek underscore spelling",
       "<｜tool_calls_begin｜><｜tool_call_begin｜>lookup<｜tool_sep｜>{\"q\": 2}<｜tool_call_end｜><｜tool_calls_end｜>",
       {{"lookup", R"({"q":2})"}}, ""},
      {"kimi k2",
       "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": "
       "\"Lagos\"}<|tool_call_end|><|tool_calls_section_end|>",
       {{"get_weather", R"({"city":"Lagos"})"}}, ""},
      {"kimi k2, end marker inside the arguments",
       "<|tool_calls_section_begin|><|tool_call_begin|>functions.lookup:0<|tool_call_argument_begin|>{\"q\": "
       "\"a<|tool_call_end|>b\"}<|tool_call_end|><|tool_calls_section_end|>",
       {{"lookup", R"({"q":"a<|tool_call_end|>b"})"}}, ""},
      {"deepseek, end markers inside the arguments",
       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>lookup<｜tool▁sep｜>{\"q\": \"a<｜tool▁call▁end｜><｜tool▁calls▁end｜>b\"}"
       "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
       {{"lookup", R"({"q":"a<｜tool▁call▁end｜><｜tool▁calls▁end｜>b"})"}}, ""},
      {"granite", "<|tool_call|>[{\"name\": \"lookup\", \"arguments\": {\"q\": \"g\"}}]", {{"lookup", R"({"q":"g"})"}}, ""},
      {"lfm2", "<|tool_call_start|>[get_weather(city=\"Quito\"), lookup(q='x', n=None)]<|tool_call_end|>",
       {{"get_weather", R"({"city":"Quito"})"}, {"lookup", R"({"q":"x","n":null})"}}, ""},
      {"phi-4", "functools[{\"name\": \"lookup\", \"arguments\": {\"q\": \"p\"}}]", {{"lookup", R"({"q":"p"})"}}, ""},
      {"apertus", "<|tools_prefix|>[{\"get_weather\": {\"city\": \"Bonn\"}}]<|tools_suffix|>",
       {{"get_weather", R"({"city":"Bonn"})"}}, ""},
      {"a call in fenced code is an example: text",
       "The format is:\n```\n<tool_call>{\"name\":\"python\",\"arguments\":{\"code\":\"print(1)\"}}</tool_call>\n```\nThat is all.",
       {}, "The format is:\n```\n<tool_call>{\"name\":\"python\",\"arguments\":{\"code\":\"print(1)\"}}</tool_call>\n```\nThat is all."},
      {"a call after a closed fence is a call",
       "  ```python\nx = 1\n  ```\n<tool_call>{\"name\":\"lookup\",\"arguments\":{}}</tool_call>",
       {{"lookup", "{}"}}, "  ```python\nx = 1\n  ```\n"},
      {"text around a call is kept", "Let me look.<tool_call>{\"name\":\"lookup\",\"arguments\":{}}</tool_call>Done?",
       {{"lookup", "{}"}}, "Let me look.Done?"},
      {"no markup", "Just an answer, with <b>tags</b> and [brackets].", {}, "Just an answer, with <b>tags</b> and [brackets]."},
  };
}

std::vector<sample> samples() {
  std::vector<sample> all;
  for (auto part : {hermes_samples(), xml_samples(), json_and_mistral_samples(), other_samples()}) {
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

/// The calls and the text of healed pieces, for comparison.
void check(const sample& s, const std::vector<healed_piece>& pieces, const std::string& shown, const std::string& how) {
  std::string text = shown;
  std::vector<std::pair<std::string, std::string>> calls;
  for (const auto& p : pieces) {
    if (p.call) calls.emplace_back(p.call->name, p.call->arguments);
    else text += p.text;
  }
  ASSERT_EQ(calls.size(), s.calls.size()) << s.what << " " << how;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].first, s.calls[i].first) << s.what << " " << how;
    auto got = parse_json(calls[i].second);
    ASSERT_TRUE(got && got->is_object()) << s.what << " " << how << ": " << calls[i].second;
    EXPECT_EQ(*got, *parse_json(s.calls[i].second)) << s.what << " " << how;
  }
  EXPECT_EQ(text, s.text_out) << s.what << " " << how;
}

TEST(ToolCallText, EveryFamilyHealsWhole) {
  for (const auto& s : samples()) check(s, heal_text(s.text, k_declared, true), "", "whole");
}

TEST(ToolCallText, AtLeastFourteenFamilies) { EXPECT_GE(text_call_families().size(), 14u); }

TEST(ToolCallText, StreamedSplitAtEveryBytePositionHealsTheSame) {
  for (const auto& s : samples()) {
    for (std::size_t cut = 0; cut <= s.text.size(); ++cut) {
      text_call_scanner sc(k_declared);
      std::string shown = sc.feed(std::string_view(s.text).substr(0, cut));
      shown += sc.feed(std::string_view(s.text).substr(cut));
      check(s, sc.finish(), shown, "cut at " + std::to_string(cut));
    }
  }
}

TEST(ToolCallText, StreamedByteByByteHealsTheSame) {
  for (const auto& s : samples()) {
    text_call_scanner sc(k_declared);
    std::string shown;
    for (char c : s.text) shown += sc.feed(std::string_view(&c, 1));
    check(s, sc.finish(), shown, "byte by byte");
  }
}

TEST(ToolCallText, PlainTextIsShownAtOnceButForAPossibleOpenerPrefix) {
  text_call_scanner sc(k_declared);
  EXPECT_EQ(sc.feed("Hello there, "), "Hello there, ");
  EXPECT_EQ(sc.feed("see <tool"), "see ");  // "<tool" may open <tool_call>
  EXPECT_EQ(sc.feed("s> here"), "<tools> here");
  EXPECT_FALSE(sc.draining());
  EXPECT_EQ(sc.feed(" and <tool_call>{"), " and ");
  EXPECT_TRUE(sc.draining());
}

TEST(ToolCallText, NothingDeclaredNothingHealedAndNothingHeld) {
  text_call_scanner sc({});
  const std::string t = "{\"name\": \"get_weather\", \"parameters\": {}}";
  EXPECT_EQ(sc.feed(t), t);  // no start-anchored hold without declared tools
  auto rest = sc.finish();
  EXPECT_TRUE(rest.empty());
  EXPECT_EQ(heal_text("<tool_call>{\"name\":\"x\",\"arguments\":{}}</tool_call>", {}, true).size(), 1u);
}

TEST(ToolCallText, AnAnswerThatStartsLikeJsonIsReleasedOnceItCannotBeACall) {
  text_call_scanner sc(k_declared);
  EXPECT_EQ(sc.feed("{\"na"), "");   // may be {"name"
  EXPECT_EQ(sc.feed("me\": \"Ada\""), "");  // still may be a call: held
  EXPECT_EQ(sc.feed(", \"age\": 3}"), "{\"name\": \"Ada\", \"age\": 3}");  // closed, not a call
  EXPECT_EQ(sc.feed(" more"), " more");
  EXPECT_TRUE(sc.finish().empty());
  text_call_scanner other(k_declared);
  EXPECT_EQ(other.feed("{\"x\": 1}"), "{\"x\": 1}");  // not {"name": released at once
}

TEST(ToolCallText, ABareCallHeldPastTheLimitIsText) {
  text_call_scanner sc(k_declared);
  std::string big = "{\"name\": \"lookup\", \"parameters\": {\"q\": \"" + std::string(text_call_scanner::k_max_bare_call, 'x');
  const std::string shown = sc.feed(big);
  EXPECT_EQ(shown, big);
  EXPECT_FALSE(sc.draining());
}

TEST(ToolCallText, ANameInsideAnotherIsNotANameOpener) {
  const auto out = heal_text("call my_lookup[ARGS]{\"q\":1}", k_declared, false);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].call);
}

TEST(ToolCallText, ABlockWithOneUndeclaredCallStaysTextWhole) {
  const std::string t = "[TOOL_CALLS] [{\"name\": \"lookup\", \"arguments\": {}}, {\"name\": \"rm\", \"arguments\": {}}]";
  const auto out = heal_text(t, k_declared, false);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text, t);
}

TEST(ToolCallText, HostileMarkupEndsAndStaysText) {
  // Found by the fuzz harness: a closer where a Gemma value belongs looped forever; deep nesting.
  for (const std::string& t : std::vector<std::string>{"<|tool_call>call:lookup{a:[}]}<tool_call|>", "call:lookup{a:[}]}",
                              "<|tool_call>call:lookup{a:" + std::string(5000, '[') + "}",
                              "<|tool_call_start|>[lookup(q=)]<|tool_call_end|>", "<|python_tag|>lookup.call(=1)"}) {
    const auto out = heal_text(t, k_declared, true);
    std::string text;
    for (const auto& p : out) {
      ASSERT_FALSE(p.call) << t;
      text += p.text;
    }
    EXPECT_EQ(text, t);
  }
}

TEST(ToolCallText, AStartAnchoredCandidateIsReadOnlyToItsFirstClose) {
  // The stream decides at the first close, so the whole text must be read the same way.
  const std::string t = "call:lookup{ql:<|S] [{\"name\": \"get_weather\", \"arguments\": {}}]";
  text_call_scanner sc(k_declared);
  std::string shown;
  for (char c : t) shown += sc.feed(std::string_view(&c, 1));
  auto rest = sc.finish();
  for (const auto& p : rest) shown += p.call ? "<call>" : p.text;
  std::string whole;
  for (const auto& p : heal_text(t, k_declared, true)) whole += p.call ? "<call>" : p.text;
  EXPECT_EQ(shown, whole);
}

TEST(ToolCallText, AModelRepeatingAnOpenerCostsLinearWork) {
  // A small model stuck writing "<tool_call>" until max_tokens (each block unreadable): every
  // block used to be searched to the end for its closer.
  std::string t;
  for (int i = 0; i < 20000; ++i) t += "<tool_call>x ";
  t += "<tool_call>{\"name\":\"lookup\",\"arguments\":{}}</tool_call>";
  const auto out = heal_text(t, k_declared, true);
  ASSERT_EQ(out.size(), 1u);  // past the unhealed-block limit the rest stays text
  EXPECT_EQ(out[0].text, t);
}

TEST(ToolCallText, AnUnclosedBlockEndsAtTheNextOneWhichIsStillRead) {
  const std::string t = "<tool_call>{\"name\":\"lookup\",\"arguments\":{\"q\":1}}\n"
                        "<tool_call>{\"name\":\"get_weather\",\"arguments\":{}}</tool_call>";
  const auto out = heal_text(t, k_declared, false);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].call->name, "lookup");
  EXPECT_EQ(out[1].call->name, "get_weather");
}

TEST(ToolCallText, MarkupInFencedCodeIsAnExampleAndStaysText) {
  const std::string example = "To call it, write:\n```\n<tool_call>{\"name\":\"lookup\",\"arguments\":{}}</tool_call>\n```\n";
  const auto out = heal_text(example, k_declared, false);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text, example);
  // a real call after the example is still healed
  const auto both = heal_text(example + "<tool_call>{\"name\":\"lookup\",\"arguments\":{\"q\":2}}</tool_call>", k_declared, false);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].text, example);
  ASSERT_TRUE(both[1].call);
  EXPECT_EQ(both[1].call->arguments, "{\"q\":2}");
  // an unclosed fence runs to the end
  const std::string open = "  ```json\n[TOOL_CALLS]lookup[ARGS]{\"q\": 1}";
  ASSERT_EQ(heal_text(open, k_declared, false).size(), 1u);
  EXPECT_FALSE(heal_text(open, k_declared, false)[0].call);
}

TEST(ToolCallText, RepairsJsonCutShort) {
  EXPECT_EQ(repair_truncated_json("{\"a\": [1, {\"b\": \"x"), "{\"a\": [1, {\"b\": \"x\"}]}");
  EXPECT_EQ(repair_truncated_json("{\"a\": 1, \"b\":"), "{\"a\": 1}");
  EXPECT_EQ(repair_truncated_json("not json"), std::nullopt);
}

}  // namespace
}  // namespace warden::engine
