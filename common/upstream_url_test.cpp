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

namespace warden {
namespace {

TEST(UrlProblem, AcceptsBaseUrlsAndRefusesWhatWouldLeakOrMislead) {
  for (const char* good : {"http://a", "http://127.0.0.1:8000/v1", "https://gw.example/openai/v1", "http://[::1]:8080/v1",
                           "http://h:65535"}) {
    EXPECT_EQ(url_problem(good), "") << good;
  }
  const std::pair<const char*, const char*> bad[] = {
      {"http://user:pw@h/v1", "user:password@"}, {"http://h/v1?x=1", "?query"}, {"http://h/v1#f", "#fragment"},
      {"http://", "no host"}, {"http://:80", "no host"}, {"http://[::1", "not closed"}, {"http://h:99999", "port"},
      {"http://h:0", "port"}, {"http://h:", "port"}, {"http://h:8x", "port"}, {"http://h /v1", "blank"},
      {"ftp://h", "not an http"}, {"http://a,http://b", ""}};
  for (const auto& [url, why] : bad) {
    if (*why == 0) continue;  // a comma is a legal URL character: the probe says it is unreachable
    EXPECT_NE(url_problem(url).find(why), std::string::npos) << url << ": " << url_problem(url);
  }
  EXPECT_NE(url_problem(std::string("http://h/v1\0x", 13)), "");
  EXPECT_NE(url_problem("http://h/" + std::string(3000, 'a')), "");
}

TEST(ParseUpstreams, RefusesCredentialsWardenKeysRepeatsAndLongModels) {
  for (const char* bad : {"http://u:p@h:1/v1\n", "http://h:1 key_env=WARDEN_API_KEY\n", "http://h:1 slots=2 slots=3\n",
                          "http://h:1?x=1\n"}) {
    auto r = parse_upstreams(bad);
    EXPECT_FALSE(r) << bad;
  }
  EXPECT_FALSE(parse_upstreams("http://h:1 model=" + std::string(300, 'm') + "\n"));
  EXPECT_FALSE(parse_upstreams("http://h:1 model=a\x01" "b\n"));
  auto ok = parse_upstreams("http://h:1 model=" + std::string(256, 'm') + "\n");
  EXPECT_TRUE(ok);
  auto empty = parse_upstreams("# nothing\n\n");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
}

}  // namespace
}  // namespace warden
