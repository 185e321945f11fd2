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
