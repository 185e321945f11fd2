// The /v1/messages field table (messages_request.cpp) answers each faulty field with the same
// 400 as the if-chain it replaced: message, param and code byte for byte, first fault first;
// its rows for /v1/messages only are skipped for /v1/messages/count_tokens.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/anthropic/messages_request.h"

namespace warden::api::anthropic {
namespace {

const std::vector<std::string> k_no_tools;

struct row {
  const char* body;
  const char* message;
  const char* param;
  const char* code;
};

#define WARDEN_HI R"("messages":[{"role":"user","content":"hi"}])"

const row k_rows[] = {
    {"{\"max_tokens\":5," WARDEN_HI "}", "'model' is required", "model", "missing_required_parameter"},
    {"{\"model\":5,\"max_tokens\":5," WARDEN_HI "}", "'model' must be a string, not integer", "model", "invalid_type"},
    {"{\"model\":\"m\"," WARDEN_HI "}", "'max_tokens' is required", "max_tokens", "missing_required_parameter"},
    {"{\"model\":\"m\",\"max_tokens\":0," WARDEN_HI "}", "'max_tokens' must be between 1 and 2147483647, got 0",
     "max_tokens", "invalid_value"},
    {"{\"model\":\"m\",\"max_tokens\":5,\"temperature\":1.5," WARDEN_HI "}",
     "'temperature' must be between 0.0 and 1.0, got 1.5", "temperature", "invalid_value"},
    {"{\"model\":\"m\",\"max_tokens\":5,\"top_k\":-1," WARDEN_HI "}", "'top_k' must be between 0 and 100000, got -1",
     "top_k", "invalid_value"},
    {"{\"model\":\"m\",\"max_tokens\":5,\"metadata\":\"x\"," WARDEN_HI "}", "'metadata' must be an object, not string",
     "metadata", "invalid_type"},
    {"{\"model\":\"m\",\"max_tokens\":5,\"stream\":\"y\"," WARDEN_HI "}", "'stream' must be a boolean, not string",
     "stream", "invalid_type"},
    {"{\"model\":\"m\",\"max_tokens\":5,\"mcp_servers\":[{}]," WARDEN_HI "}",
     "'mcp_servers' is not supported by warden's /v1/messages", "mcp_servers", "unsupported_parameter"},
    {"{\"model\":\"m\",\"max_tokens\":5,\"container\":\"c\"," WARDEN_HI "}",
     "'container' is not supported by warden (tools run in warden's own sandbox)", "container",
     "unsupported_parameter"},
    // the scalars come before the messages, the messages before the system prompt
    {R"({"model":"m","max_tokens":5,"messages":[],"temperature":3})", "'temperature' must be between 0.0 and 1.0, got 3",
     "temperature", "invalid_value"},
    {R"({"model":"m","max_tokens":5,"messages":[],"system":7})", "'messages' must contain at least one message",
     "messages", "invalid_value"},
};

#undef WARDEN_HI

TEST(MessagesFieldTable, EachFieldAnswersAsBefore) {
  for (const auto& r : k_rows) {
    auto parsed = parse_messages_request(r.body, k_no_tools);
    ASSERT_FALSE(parsed.ok()) << r.body;
    EXPECT_EQ(parsed.error().code, errc::invalid_request) << r.body;
    EXPECT_EQ(parsed.error().message, r.message) << r.body;
    EXPECT_EQ(parsed.error().param, r.param) << r.body;
    EXPECT_EQ(parsed.error().type_code, r.code) << r.body;
  }
}

TEST(MessagesFieldTable, CountTokensSkipsTheMaxTokensRow) {
  const std::string body = R"({"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":"many"})";
  EXPECT_FALSE(parse_messages_request(body, k_no_tools).ok());
  EXPECT_TRUE(parse_messages_request(body, k_no_tools, body_kind::count_tokens).ok());
  EXPECT_TRUE(parse_messages_request(R"({"model":"m","max_tokens":5,"mcp_servers":[],)"
                                     R"("messages":[{"role":"user","content":"hi"}]})",
                                     k_no_tools)
                  .ok());
}

}  // namespace
}  // namespace warden::api::anthropic
