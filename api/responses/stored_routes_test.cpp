// api/responses/stored_routes.h: paging of GET /v1/responses/{id}/input_items.
#include <gtest/gtest.h>

#include "api/responses/stored_routes.h"

namespace warden::api::responses {
namespace {

json items(int n) {
  json a = json::array();
  for (int i = 1; i <= n; ++i) a.push_back({{"id", "msg_" + std::to_string(i)}, {"type", "message"}});
  return a;
}

std::vector<std::string> ids(const json& page) {
  std::vector<std::string> out;
  for (const auto& it : page["data"]) out.push_back(it["id"]);
  return out;
}

TEST(InputItemsPaging, DefaultsAreTwentyNewestFirst) {
  auto p = parse_page("");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->limit, 20u);
  EXPECT_FALSE(p->asc);
  const json page = page_items(items(25), *p);
  EXPECT_EQ(page["object"], "list");
  ASSERT_EQ(page["data"].size(), 20u);
  EXPECT_EQ(page["first_id"], "msg_25");
  EXPECT_EQ(page["last_id"], "msg_6");
  EXPECT_EQ(page["has_more"], true);
}

TEST(InputItemsPaging, LimitOrderAndAfter) {
  auto p = parse_page("limit=2&order=asc&after=msg_1");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(ids(page_items(items(4), *p)), (std::vector<std::string>{"msg_2", "msg_3"}));
  EXPECT_EQ(page_items(items(4), *p)["has_more"], true);
  auto last = parse_page("limit=2&order=asc&after=msg_3");
  EXPECT_EQ(ids(page_items(items(4), *last)), (std::vector<std::string>{"msg_4"}));
  EXPECT_EQ(page_items(items(4), *last)["has_more"], false);
  auto desc = parse_page("order=desc&after=msg_3");
  EXPECT_EQ(ids(page_items(items(4), *desc)), (std::vector<std::string>{"msg_2", "msg_1"}));
}

TEST(InputItemsPaging, UnknownAfterAndEmptyPages) {
  auto p = parse_page("after=nope");
  const json page = page_items(items(3), *p);
  EXPECT_TRUE(page["data"].empty());
  EXPECT_TRUE(page["first_id"].is_null());
  EXPECT_TRUE(page["last_id"].is_null());
  EXPECT_EQ(page["has_more"], false);
  EXPECT_TRUE(page_items(json("not a list"), page_request{})["data"].empty());
}

TEST(InputItemsPaging, BadParametersNameThemselves) {
  for (const char* q : {"limit=0", "limit=101", "limit=", "limit=2x", "limit=-1"}) {
    auto p = parse_page(q);
    ASSERT_FALSE(p.ok()) << q;
    EXPECT_EQ(p.error().param, "limit") << q;
    EXPECT_EQ(p.error().message, "'limit' must be 1 to 100");
  }
  auto order = parse_page("order=up");
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.error().param, "order");
  auto malformed = parse_page("after=%G1");
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.error().param, "query");
  EXPECT_EQ(parse_page("limit=100")->limit, 100u);
}

}  // namespace
}  // namespace warden::api::responses
