// api/anthropic/convert.h: Anthropic Messages bodies ↔ the typed model, both ways.
// (The OpenAI → model → Anthropic → model property test is api/conformance/roundtrip_test.cpp.)
#include <gtest/gtest.h>

#include "api/anthropic/convert.h"

namespace warden::api::anthropic {
namespace {

std::vector<model::message> convert(const std::string& system, const std::string& messages) {
  auto r = to_model_messages(system.empty() ? json() : json::parse(system), json::parse(messages));
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(*r) : std::vector<model::message>{};
}

template <class T>
const T& part(const model::message& m, std::size_t i) {
  static const T empty{};
  const T* p = i < m.content.size() ? std::get_if<T>(&m.content[i]) : nullptr;
  if (!p) {
    ADD_FAILURE() << "part " << i << " missing or of another kind";
    return empty;
  }
  return *p;
}

TEST(AnthropicToModel, SystemStringAndBlocks) {
  auto a = convert(R"("Be brief.")", R"([{"role":"user","content":"hi"}])");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].role, model::role::system);
  EXPECT_EQ(a[0].text(), "Be brief.");
  EXPECT_EQ(a[1].role, model::role::user);
  EXPECT_EQ(a[1].text(), "hi");

  auto b = convert(R"([{"type":"text","text":"One."},{"type":"text","text":"Two.","cache_control":{"type":"ephemeral"}}])",
                   R"([{"role":"user","content":"hi"}])");
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].text(), "One.\n\nTwo.");
}

TEST(AnthropicToModel, UserBlocksImagesAndDocuments) {
  auto m = convert("", R"([{"role":"user","content":[
      {"type":"text","text":"look"},
      {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
      {"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}},
      {"type":"document","source":{"type":"text","media_type":"text/plain","data":"notes"}}]}])");
  ASSERT_EQ(m.size(), 1u);
  ASSERT_EQ(m[0].content.size(), 4u);
  EXPECT_EQ(part<model::text_part>(m[0], 0).text, "look");
  EXPECT_EQ(part<model::image_part>(m[0], 1).url, "data:image/png;base64,iVBORw0KGgo=");
  EXPECT_EQ(part<model::image_part>(m[0], 2).url, "https://example.com/cat.jpg");
  EXPECT_EQ(part<model::text_part>(m[0], 3).text, "notes");
}

TEST(AnthropicToModel, AssistantToolUseThinkingAndResults) {
  auto m = convert("", R"([
    {"role":"user","content":"weather?"},
    {"role":"assistant","content":[
      {"type":"thinking","thinking":"need both","signature":"sig"},
      {"type":"redacted_thinking","data":"xxx"},
      {"type":"text","text":"Checking."},
      {"type":"tool_use","id":"toolu_a","name":"get_weather","input":{"city":"Paris"}},
      {"type":"tool_use","id":"toolu_b","name":"get_time","input":{}}]},
    {"role":"user","content":[
      {"type":"tool_result","tool_use_id":"toolu_a","content":"18C"},
      {"type":"tool_result","tool_use_id":"toolu_b","content":[{"type":"text","text":"12:00"},{"type":"text","text":"CET"}],
       "is_error":true},
      {"type":"text","text":"and tomorrow?"}]}])");
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[1].role, model::role::assistant);
  ASSERT_EQ(m[1].content.size(), 4u);  // redacted thinking dropped
  EXPECT_EQ(part<model::reasoning_part>(m[1], 0).text, "need both");
  EXPECT_EQ(part<model::text_part>(m[1], 1).text, "Checking.");
  EXPECT_EQ(part<model::tool_call_part>(m[1], 2).id, "toolu_a");
  EXPECT_EQ(part<model::tool_call_part>(m[1], 2).name, "get_weather");
  EXPECT_EQ(json::parse(part<model::tool_call_part>(m[1], 2).arguments), json::parse(R"({"city":"Paris"})"));
  EXPECT_EQ(part<model::tool_call_part>(m[1], 3).arguments, "{}");
  EXPECT_EQ(m[2].role, model::role::tool);
  EXPECT_EQ(part<model::tool_result_part>(m[2], 0).tool_call_id, "toolu_a");
  EXPECT_EQ(part<model::tool_result_part>(m[2], 0).content, "18C");
  EXPECT_FALSE(part<model::tool_result_part>(m[2], 0).is_error);
  EXPECT_EQ(part<model::tool_result_part>(m[3], 0).tool_call_id, "toolu_b");
  EXPECT_EQ(part<model::tool_result_part>(m[3], 0).content, "12:00\nCET");
  EXPECT_TRUE(part<model::tool_result_part>(m[3], 0).is_error);
  EXPECT_EQ(m[4].role, model::role::user);
  EXPECT_EQ(m[4].text(), "and tomorrow?");
}

TEST(AnthropicToModel, ServerToolUseAndItsResultSplitTheAssistantTurn) {
  auto m = convert("", R"j([
    {"role":"user","content":"compute"},
    {"role":"assistant","content":[
      {"type":"server_tool_use","id":"srvtoolu_1","name":"python","input":{"code":"print(6*7)"}},
      {"type":"python_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"text","text":"42"}]},
      {"type":"text","text":"It is 42."}]}])j");
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(part<model::tool_call_part>(m[1], 0).name, "python");
  EXPECT_EQ(m[2].role, model::role::tool);
  EXPECT_EQ(part<model::tool_result_part>(m[2], 0).content, "42");
  EXPECT_EQ(part<model::tool_result_part>(m[2], 0).tool_call_id, "srvtoolu_1");
  EXPECT_EQ(m[3].role, model::role::assistant);
  EXPECT_EQ(m[3].text(), "It is 42.");
}

TEST(AnthropicToModel, UnsupportedBlocksAreNamed) {
  auto r = to_model_messages(json(), json::parse(R"([{"role":"user","content":[{"type":"container_upload","file_id":"f"}]}])"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().param, "messages[0].content[0].type");
  auto pdf = to_model_messages(
      json(), json::parse(R"([{"role":"user","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBE"}}]}])"));
  ASSERT_FALSE(pdf.ok());
  EXPECT_EQ(pdf.error().param, "messages[0].content[0].source");
  auto img = to_model_messages(json(), json::parse(R"([{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}])"));
  ASSERT_FALSE(img.ok());
}

TEST(ModelToAnthropic, ToolsResultsAndSystem) {
  std::vector<model::message> msgs(5);
  msgs[0].role = model::role::system;
  msgs[0].content.emplace_back(model::text_part{"sys"});
  msgs[1].role = model::role::user;
  msgs[1].content.emplace_back(model::text_part{"q"});
  msgs[2].role = model::role::assistant;
  msgs[2].content.emplace_back(model::reasoning_part{"hmm"});
  msgs[2].content.emplace_back(model::tool_call_part{"toolu_1", "f", R"({"a":1})"});
  msgs[2].content.emplace_back(model::tool_call_part{"toolu_2", "g", "not json"});
  msgs[3].role = model::role::tool;
  msgs[3].content.emplace_back(model::tool_result_part{"toolu_1", "r1", false});
  msgs[4].role = model::role::tool;
  msgs[4].content.emplace_back(model::tool_result_part{"toolu_2", "r2", true});
  const json a = to_anthropic(msgs);
  EXPECT_EQ(a["system"], "sys");
  ASSERT_EQ(a["messages"].size(), 3u);
  EXPECT_EQ(a["messages"][0], json::parse(R"({"role":"user","content":"q"})"));
  EXPECT_EQ(a["messages"][1]["content"][0], json::parse(R"({"type":"thinking","thinking":"hmm","signature":""})"));
  EXPECT_EQ(a["messages"][1]["content"][1]["input"], json::parse(R"({"a":1})"));
  EXPECT_EQ(a["messages"][1]["content"][2]["input"], json::object());  // invalid arguments → {}
  EXPECT_EQ(a["messages"][2], json::parse(R"({"role":"user","content":[
      {"type":"tool_result","tool_use_id":"toolu_1","content":"r1"},
      {"type":"tool_result","tool_use_id":"toolu_2","content":"r2","is_error":true}]})"));
}

TEST(ModelToAnthropic, ImagesBackToSources) {
  model::message m;
  m.role = model::role::user;
  m.content.emplace_back(model::image_part{"data:image/jpeg;base64,AAAA", ""});
  m.content.emplace_back(model::image_part{"https://x.test/a.png", ""});
  const json blocks = content_blocks(m);
  EXPECT_EQ(blocks[0], json::parse(R"({"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"AAAA"}})"));
  EXPECT_EQ(blocks[1], json::parse(R"({"type":"image","source":{"type":"url","url":"https://x.test/a.png"}})"));
}

}  // namespace
}  // namespace warden::api::anthropic
