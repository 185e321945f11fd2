// common/upstream_url.h: an --upstream without a path means its /v1; one with a path is kept.
#include <gtest/gtest.h>

#include "common/upstream_url.h"

namespace warden {
namespace {

TEST(UpstreamBaseUrl, NoPathMeansV1AndAPathIsKeptAsWritten) {
  const std::pair<const char*, const char*> cases[] = {
      {"http://127.0.0.1:8080", "http://127.0.0.1:8080/v1"},
      {"http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1"},
      {"https://host", "https://host/v1"},
      {"http://[::1]:9000//", "http://[::1]:9000/v1"},
      {"http://user:pw@host:1", "http://user:pw@host:1/v1"},
      {"http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"},
      {"http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1"},
      {"https://gw.example/openai/v1", "https://gw.example/openai/v1"},
      {"http://host:8080/api", "http://host:8080/api"},
      {"http://host:8080?x=1", "http://host:8080?x=1"},
      {"", ""},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(upstream_base_url(in), want) << in;
}

}  // namespace
}  // namespace warden

namespace warden {
namespace {

TEST(ParseUpstreams, ReadsEnginesAndTheirOptions) {
  auto r = parse_upstreams("# the fleet\n\nhttp://a:8000  model=m1 slots=4\n  https://b/v1/ key_env=B_KEY\n");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].url, "http://a:8000/v1");
  EXPECT_EQ((*r)[0].model_id, "m1");
  EXPECT_EQ((*r)[0].slots, 4);
  EXPECT_EQ((*r)[0].key_env, "");
  EXPECT_EQ((*r)[1].url, "https://b/v1");
  EXPECT_EQ((*r)[1].slots, 0);
  EXPECT_EQ((*r)[1].key_env, "B_KEY");
}

TEST(ParseUpstreams, RejectsBadLinesNamingTheLine) {
  for (const char* bad : {"ftp://x\n", "http://a slots=0\n", "http://a slots=4x\n", "http://a key_env=lower\n",
                          "http://a color=red\n", "http://a model=\n", "http://a model\n"}) {
    auto r = parse_upstreams(std::string("# c\n") + bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("line 2"), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().param, "upstreams_file");
  }
  EXPECT_FALSE(read_upstreams_file("/nonexistent/upstreams.txt"));
}

}  // namespace
}  // namespace warden
