#include <gtest/gtest.h>

#include <string>

#include "engine/http_client.h"
#include "engine/llama_server.h"

namespace warden::engine {
namespace {

TEST(HttpClientGetBlocking, NoAnswerIsATypedUnreachable) {
  auto port = pick_free_port();  // nothing listens there
  ASSERT_TRUE(port.ok());
  const auto r = http_client::get_blocking("http://127.0.0.1:" + std::to_string(*port) + "/health", {}, 2000);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, errc::upstream_unavailable);
  EXPECT_EQ(r.error().type_code, k_unreachable);
  EXPECT_FALSE(r.error().message.empty());
}

}  // namespace
}  // namespace warden::engine
