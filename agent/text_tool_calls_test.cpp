#include <gtest/gtest.h>

#include "agent/text_tool_calls.h"
#include "common/json_util.h"

namespace warden::agent {
namespace {

struct parse_row {
  const char* format;
  const char* text;
  std::vector<std::pair<std::string, std::string>> want;  // name, arguments (compact JSON or raw)
};

std::vector<text_call> parse_with(const char* format, std::string_view text) {
  for (const auto& f : text_call_formats()) {
    if (std::string(f.name) == format) return f.parse(text);
  }
  ADD_FAILURE() << "no format " << format;
  return {};
}

TEST(TextToolCalls, EveryFormatTable) {
  const parse_row rows[] = {
      {"hermes", R"j(<tool_call>{"name": "python", "arguments": {"code": "print(1)"}}</tool_call>)j",
       {{"python", R"j({"code":"print(1)"})j"}}},
      {"hermes", "<tool_call>\n{\"name\": \"terminal\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>\n"
                 "<tool_call>{\"name\": \"python\", \"parameters\": {\"code\": \"1\"}}</tool_call>",
       {{"terminal", R"({"command":"ls"})"}, {"python", R"({"code":"1"})"}}},
      // cut short by max_tokens: no closing tag, JSON unterminated
      {"hermes", R"j(<tool_call>{"name": "python", "arguments": {"code": "print('cut')")j", {{"python", R"j({"code":"print('cut')"})j"}}},
      {"hermes", R"j(<tool_call>{"name": "python", "arguments": {"code": "x", "extra":)j", {{"python", R"j({"code":"x"})j"}}},
      {"hermes", R"(<tool_call>{"name": "python", "arguments": "{\"code\": \"1\"}"}</tool_call>)", {{"python", R"({"code": "1"})"}}},
      {"hermes", "<tool_call>garbage</tool_call>", {{"", "garbage"}}},
      {"hermes", "<tool_call>\n<function=python>\n<parameter=code>\nprint(2)\n</parameter>\n</function>\n</tool_call>",
       {{"python", R"j({"code":"print(2)"})j"}}},
      {"qwen_xml", "<function=terminal><parameter=command>echo hi</parameter></function>",
       {{"terminal", R"({"command":"echo hi"})"}}},
      {"qwen_xml", "<function=python>\n<parameter=code>\nprint(3)\n", {{"python", R"j({"code":"print(3)"})j"}}},
      {"qwen_xml", R"(<function name="terminal"><parameter name="command">pwd</parameter></function>)",
       {{"terminal", R"({"command":"pwd"})"}}},
      {"mistral", R"([TOOL_CALLS] [{"name": "python", "arguments": {"code": "1"}}, {"name": "terminal", "arguments": {"command": "2"}}])",
       {{"python", R"({"code":"1"})"}, {"terminal", R"({"command":"2"})"}}},
      {"mistral", R"([TOOL_CALLS]python[ARGS]{"code": "5"})", {{"python", R"({"code":"5"})"}}},
      {"mistral", R"([TOOL_CALLS]terminal{"command": "ls"})", {{"terminal", R"({"command":"ls"})"}}},
      {"mistral", R"j([TOOL_CALLS] [{"name": "python", "arguments": {"code": "tru)j", {{"python", R"j({"code":"tru"})j"}}},
      {"llama3", R"(<|python_tag|>{"name": "python", "parameters": {"code": "6"}})", {{"python", R"({"code":"6"})"}}},
      {"llama3", R"j(<|python_tag|>{"name": "python", "parameters": {"code": "6")j", {{"python", R"j({"code":"6"})j"}}},
  };
  for (const auto& r : rows) {
    auto got = parse_with(r.format, r.text);
    ASSERT_EQ(got.size(), r.want.size()) << r.text;
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].name, r.want[i].first) << r.text;
      EXPECT_EQ(got[i].arguments, r.want[i].second) << r.text;
    }
  }
}

TEST(TextToolCalls, RepairTruncatedJson) {
  EXPECT_EQ(repair_truncated_json(R"({"a": "b)"), R"({"a": "b"})");
  EXPECT_EQ(repair_truncated_json(R"j({"a": [1, 2)j"), R"j({"a": [1, 2]})j");
  EXPECT_EQ(repair_truncated_json(R"({"a": 1, )"), R"({"a": 1})");
  EXPECT_EQ(repair_truncated_json(R"({"a": 1, "b":)"), R"({"a": 1})");
  EXPECT_EQ(repair_truncated_json(R"({"a": "x\)"), R"({"a": "x"})");
  EXPECT_EQ(repair_truncated_json("plain"), std::nullopt);
  EXPECT_EQ(repair_truncated_json("{]"), std::nullopt);
}

/// Feeds `text` split at every position; the shown text never contains markup.
TEST(TextToolCalls, ScannerHidesMarkupAtEverySplit) {
  const std::string text = "Sure, running it. <tool_call>{\"name\": \"python\", \"arguments\": {\"code\": \"print(1)\"}}</tool_call> trailing";
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    text_call_scanner sc;
    std::string shown = sc.feed(text.substr(0, cut));
    shown += sc.feed(text.substr(cut));
    auto out = sc.finish();
    shown += out.text;
    EXPECT_EQ(shown, "Sure, running it. ") << "cut " << cut;
    ASSERT_EQ(out.calls.size(), 1u) << "cut " << cut;
    EXPECT_EQ(out.calls[0].name, "python");
  }
}

TEST(TextToolCalls, ScannerPassesPlainTextAndHoldsOnlyMarkerPrefixes) {
  text_call_scanner sc;
  EXPECT_EQ(sc.feed("a < b and [x] "), "a < b and [x] ");
  EXPECT_EQ(sc.feed("then <tool"), "then ");  // could be a marker
  EXPECT_EQ(sc.feed("box>"), "<toolbox>");    // was not
  EXPECT_EQ(sc.feed(" end <"), " end ");
  auto out = sc.finish();
  EXPECT_EQ(out.text, "<");  // a held prefix at the end of the turn is just text
  EXPECT_TRUE(out.calls.empty());
  EXPECT_FALSE(sc.draining());
}

TEST(TextToolCalls, ScannerMarkerWithoutCallIsABrokenCallNotText) {
  text_call_scanner sc;
  EXPECT_EQ(sc.feed("x [TOOL_CALLS]"), "x ");
  auto out = sc.finish();
  EXPECT_TRUE(out.text.empty());
  ASSERT_EQ(out.calls.size(), 1u);
}

}  // namespace
}  // namespace warden::agent
