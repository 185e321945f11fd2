#include <gtest/gtest.h>

#include "engine/chat_service.h"

namespace warden::engine {
namespace {

TEST(UpstreamStatusError, MapsStatusesAndKeepsTheMessage) {
  auto e = upstream_status_error(400, R"({"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}})");
  EXPECT_EQ(e.code, errc::invalid_request);
  EXPECT_EQ(e.message, "the request exceeds the available context size");
  EXPECT_EQ(e.type_code, "context_length_exceeded");

  e = upstream_status_error(503, R"({"error":{"code":503,"message":"Loading model"}})");
  EXPECT_EQ(e.code, errc::upstream_unavailable);
  EXPECT_NE(e.message.find("Loading model"), std::string::npos);

  e = upstream_status_error(500, "<html>boom</html>");
  EXPECT_EQ(e.code, errc::upstream_error);
  EXPECT_NE(e.message.find("500"), std::string::npos);
  EXPECT_NE(e.message.find("boom"), std::string::npos);

  e = upstream_status_error(404, R"({"detail":"Not Found"})");
  EXPECT_EQ(e.code, errc::invalid_request);
  EXPECT_EQ(e.message, "Not Found");
}

}  // namespace
}  // namespace warden::engine
