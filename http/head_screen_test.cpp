// judge_head (head_screen.h) over heads built as Beast's parser leaves them: framing first, then
// the router's screen on the head as request_head builds it, then a body on a method but POST.
#include <gtest/gtest.h>

#include "http/head_screen.h"

namespace warden::http {
namespace {

namespace bhttp = boost::beast::http;

std::string body_of(const error& e, std::string_view) { return e.message; }
std::string inband_of(const error& e) { return e.message; }
const surface k_surface{"test", &body_of, &inband_of};

router make_router() {
  std::vector<route> table = {
      {"GET", "/health", false, auth_policy::open, &k_surface, {}},
      {"POST", "/v1/chat/completions", false, auth_policy::api_key, &k_surface, {}},
      {"PUT", "/api/mcp/servers/", true, auth_policy::open, &k_surface, {}},
      {"DELETE", "/api/mcp/servers/", true, auth_policy::open, &k_surface, {}},
  };
  return router({std::string("key")}, std::move(table), k_surface);
}

beast_request head(bhttp::verb method, std::string target, std::vector<std::pair<std::string, std::string>> fields) {
  beast_request req{method, target, 11};
  req.set(bhttp::field::host, "127.0.0.1:8888");
  for (const auto& [k, v] : fields) req.insert(k, v);
  return req;
}

TEST(JudgeHead, TransferEncodingIsRefusedBeforeAnythingElse) {
  const router r = make_router();
  auto chunked = head(bhttp::verb::post, "/nowhere?x=1", {{"Transfer-Encoding", "chunked"}});
  auto v = judge_head(chunked, false, r, "peer");
  EXPECT_TRUE(v.framing);
  EXPECT_EQ(v.status, 411);
  EXPECT_EQ(v.req.path, "/nowhere");
  EXPECT_EQ(v.refused->type_code, "length_required");
  auto gzip = head(bhttp::verb::post, "/v1/chat/completions", {{"Transfer-Encoding", "gzip"}});
  v = judge_head(gzip, false, r, "peer");
  EXPECT_TRUE(v.framing);
  EXPECT_EQ(v.status, 400);
}

TEST(JudgeHead, ABodyOnGetIsFramingAndOnPutComesAfterTheRoute) {
  const router r = make_router();
  auto v = judge_head(head(bhttp::verb::get, "/health", {}), false, r, "peer");
  EXPECT_TRUE(v.framing);
  EXPECT_EQ(v.refused->type_code, "unexpected_body");
  v = judge_head(head(bhttp::verb::put, "/v1/chat/completions", {}), false, r, "peer");
  EXPECT_FALSE(v.framing);
  EXPECT_EQ(v.status, 405);
  ASSERT_EQ(v.headers.size(), 1u);
  EXPECT_EQ(v.headers[0].first, "Allow");
  v = judge_head(head(bhttp::verb::delete_, "/health", {}), false, r, "peer");
  EXPECT_EQ(v.status, 405);
}

TEST(JudgeHead, APutRouteTakesAJsonBodyAndADeleteRouteNone) {
  const router r = make_router();
  auto v = judge_head(head(bhttp::verb::put, "/api/mcp/servers/fs", {{"Content-Type", "application/json"}}), false, r, "peer");
  EXPECT_FALSE(v.refused.has_value());
  v = judge_head(head(bhttp::verb::put, "/api/mcp/servers/fs", {{"Content-Type", "text/plain"}}), false, r, "peer");
  ASSERT_TRUE(v.refused.has_value());  // the Content-Type check of a POST applies to a PUT too
  v = judge_head(head(bhttp::verb::delete_, "/api/mcp/servers/fs", {}), false, r, "peer");
  ASSERT_TRUE(v.refused.has_value());
  EXPECT_EQ(v.refused->type_code, "unexpected_body");
}

TEST(JudgeHead, TheRouterSeesLowerCasedNamesAndThePathWithoutQuery) {
  const router r = make_router();
  auto h = head(bhttp::verb::post, "/v1/chat/completions?debug=1",
                {{"Authorization", "Bearer key"}, {"Content-Type", "application/json"}});
  const auto v = judge_head(h, false, r, "peer");
  EXPECT_FALSE(v.refused) << v.refused->message;
  EXPECT_EQ(v.req.path, "/v1/chat/completions");
  EXPECT_EQ(v.req.query, "debug=1");
  EXPECT_EQ(v.req.header("authorization"), "Bearer key");
  EXPECT_EQ(v.req.remote, "peer");
  EXPECT_FALSE(v.req.request_id.empty());
}

TEST(JudgeHead, AMissingKeyIs401WithItsHeader) {
  const router r = make_router();
  const auto v = judge_head(head(bhttp::verb::post, "/v1/chat/completions", {{"Content-Type", "application/json"}}),
                            false, r, "peer");
  EXPECT_EQ(v.status, 401);
  ASSERT_EQ(v.headers.size(), 1u);
  EXPECT_EQ(v.headers[0].first, "WWW-Authenticate");
}

}  // namespace
}  // namespace warden::http
