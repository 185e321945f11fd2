// api/wire/errors.h: the OpenAI and Anthropic envelopes and the one send_error.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include "api/wire/errors.h"

namespace warden::api::wire {
namespace {

TEST(OpenAIErrorEnvelope, HasAllFourFieldsWithNulls) {
  const json j = openai_error_envelope(make_error(errc::not_found, "nope"));
  ASSERT_TRUE(j["error"].is_object());
  EXPECT_EQ(j["error"]["message"], "nope");
  EXPECT_EQ(j["error"]["type"], "not_found_error");
  EXPECT_TRUE(j["error"].contains("param"));
  EXPECT_TRUE(j["error"]["param"].is_null());
  EXPECT_TRUE(j["error"]["code"].is_null());
}

TEST(OpenAIErrorEnvelope, TypeFollowsStatus) {
  EXPECT_STREQ(openai_error_type(400), "invalid_request_error");
  EXPECT_STREQ(openai_error_type(413), "invalid_request_error");
  EXPECT_STREQ(openai_error_type(401), "authentication_error");
  EXPECT_STREQ(openai_error_type(403), "permission_error");
  EXPECT_STREQ(openai_error_type(404), "not_found_error");
  EXPECT_STREQ(openai_error_type(409), "conflict_error");
  EXPECT_STREQ(openai_error_type(429), "rate_limit_error");
  EXPECT_STREQ(openai_error_type(500), "api_error");
  EXPECT_STREQ(openai_error_type(503), "api_error");
  const json j = openai_error_envelope(make_error(errc::invalid_request, "bad", "messages", "invalid_value"));
  EXPECT_EQ(j["error"]["param"], "messages");
  EXPECT_EQ(j["error"]["code"], "invalid_value");
}

TEST(OpenAIErrorEnvelope, InBandFramesEndWithDone) {
  const std::string f = openai_inband_error_frames(make_error(errc::upstream_error, "broke"));
  EXPECT_EQ(f.rfind("data: {\"error\":", 0), 0u);
  EXPECT_NE(f.find("\"type\":\"api_error\""), std::string::npos);
  EXPECT_TRUE(f.ends_with("\n\ndata: [DONE]\n\n"));
}

TEST(AnthropicErrorEnvelope, TypeFollowsAnthropicsTable) {
  EXPECT_STREQ(anthropic_error_type(400), "invalid_request_error");
  EXPECT_STREQ(anthropic_error_type(401), "authentication_error");
  EXPECT_STREQ(anthropic_error_type(403), "permission_error");
  EXPECT_STREQ(anthropic_error_type(404), "not_found_error");
  EXPECT_STREQ(anthropic_error_type(409), "conflict_error");
  EXPECT_STREQ(anthropic_error_type(413), "request_too_large");
  EXPECT_STREQ(anthropic_error_type(429), "rate_limit_error");
  EXPECT_STREQ(anthropic_error_type(500), "api_error");
  EXPECT_STREQ(anthropic_error_type(503), "overloaded_error");
  EXPECT_STREQ(anthropic_error_type(529), "overloaded_error");
}

TEST(AnthropicErrorEnvelope, BodyCarriesRequestIdAndInBandDropsIt) {
  const error e = make_error(errc::invalid_request, "bad", "messages", "invalid_value");
  EXPECT_EQ(anthropic_error_body(e, "req_1"),
            R"({"error":{"message":"bad","type":"invalid_request_error"},"request_id":"req_1","type":"error"})");
  EXPECT_TRUE(anthropic_error_envelope(e, "")["request_id"].is_null());
  EXPECT_EQ(anthropic_inband_error_frames(e),
            "event: error\ndata: {\"error\":{\"message\":\"bad\",\"type\":\"invalid_request_error\"},\"type\":\"error\"}\n\n");
}

TEST(AnthropicErrorEnvelope, ThreadCodesGoInDetailsWhereTheSdksReadThem) {
  const error e = make_error(errc::not_found, "gone", "thread", "thread_not_found");
  EXPECT_EQ(anthropic_error_envelope(e, "")["error"]["details"], json({{"error_code", "thread_not_found"}}));
  EXPECT_EQ(anthropic_error_envelope(e, "")["error"]["type"], "not_found_error");
}

/// Records what a handler sent.
class recording_writer : public response_writer {
 public:
  int status = 0;
  std::string content_type, body;
  boost::asio::awaitable<bool> send(int s, std::string type, std::string b) override {
    status = s;
    content_type = std::move(type);
    body = std::move(b);
    co_return true;
  }
  boost::asio::awaitable<bool> begin_stream() override { co_return true; }
  boost::asio::awaitable<bool> write_stream(std::string) override { co_return true; }
  boost::asio::awaitable<bool> end_stream() override { co_return true; }
  bool started() const override { return false; }
  void add_header(std::string, std::string) override {}
};

std::string anthropic_body(const error& e, std::string_view rid) { return anthropic_error_body(e, rid); }
const surface k_anthropic{"anthropic", &anthropic_body, &anthropic_inband_error_frames};

TEST(SendError, WritesTheSurfacesEnvelopeWithTheCodesStatus) {
  boost::asio::io_context io;
  recording_writer out;
  const error e = make_error(errc::forbidden, "no", "bypass_permissions", "permission_mode_not_allowed");
  auto done = boost::asio::co_spawn(io, send_error(out, k_anthropic, e, "req_9"), boost::asio::use_future);
  io.run();
  done.get();
  EXPECT_EQ(out.status, 403);
  EXPECT_EQ(out.content_type, "application/json");
  EXPECT_EQ(out.body, anthropic_error_body(e, "req_9"));
}

}  // namespace
}  // namespace warden::api::wire
