// The storage form of the typed conversation round-trips every part exactly.
#include "model/serialize.h"

#include <gtest/gtest.h>

namespace warden::model {
namespace {

std::vector<message> every_part() {
  message sys;
  sys.role = role::system;
  sys.content.emplace_back(text_part{"rules"});
  message user;
  user.name = "alice";
  user.content.emplace_back(text_part{"look \xC3\xA9"});
  user.content.emplace_back(image_part{"data:image/png;base64,AAAA", "high"});
  user.content.emplace_back(opaque_part{json{{"type", "input_audio"}, {"data", "x"}}});
  message asst;
  asst.role = role::assistant;
  asst.extra = json{{"refusal", nullptr}};
  asst.content.emplace_back(reasoning_part{"thinking"});
  asst.content.emplace_back(text_part{"calling"});
  asst.content.emplace_back(tool_call_part{"call_1", "python", R"({"code":"1"})"});
  message tool;
  tool.role = role::tool;
  tool.content.emplace_back(tool_result_part{"call_1", "1\n", true});
  return {sys, user, asst, tool};
}

TEST(Serialize, EveryPartRoundTrips) {
  const auto original = every_part();
  const json stored = to_json(original);
  auto back = messages_from_json(json::parse(stored.dump()));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(to_json(*back), stored);
  ASSERT_EQ(back->size(), 4u);
  EXPECT_EQ((*back)[1].name, "alice");
  EXPECT_EQ(std::get<image_part>((*back)[1].content[1]).detail, "high");
  EXPECT_EQ(std::get<opaque_part>((*back)[1].content[2]).value["type"], "input_audio");
  EXPECT_EQ((*back)[2].extra, json({{"refusal", nullptr}}));
  EXPECT_EQ(std::get<tool_call_part>((*back)[2].content[2]).arguments, R"({"code":"1"})");
  EXPECT_TRUE(std::get<tool_result_part>((*back)[3].content[0]).is_error);
  EXPECT_FALSE(stored[0].contains("name"));  // omitted when empty
  EXPECT_FALSE(stored[0].contains("extra"));
}

TEST(Serialize, DamagedDataIsAnInternalErrorNamingTheMessage) {
  for (const char* bad : {R"({"a":1})", R"([{"role":"user"}])", R"([{"role":"robot","content":[]}])",
                          R"([{"role":"user","content":[]},{"role":"user","content":[{"type":"video"}]}])",
                          R"([{"role":"user","content":[42]}])"}) {
    auto r = messages_from_json(json::parse(bad));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, errc::internal);
  }
  auto r = messages_from_json(json::parse(R"([{"role":"user","content":[]},{"role":"user","content":[{"type":"video"}]}])"));
  EXPECT_NE(r.error().message.find("message 1"), std::string::npos);
}

}  // namespace
}  // namespace warden::model
