// The responses field tables (responses_request.cpp) answer each faulty field with the same 400
// as the code they replaced: message, param and code byte for byte, first fault first.
#include <gtest/gtest.h>

#include <string>

#include "api/responses/responses_request.h"

namespace warden::api::responses {
namespace {

struct row {
  const char* extra;  ///< fields added to a valid body
  const char* message;
  const char* param;
  const char* code;
};

const row k_rows[] = {
    {R"("store":"yes")", "'store' must be a boolean, not string", "store", "invalid_type"},
    {R"("stream":1)", "'stream' must be a boolean, not integer", "stream", "invalid_type"},
    {R"("parallel_tool_calls":[])", "'parallel_tool_calls' must be a boolean, not array", "parallel_tool_calls",
     "invalid_type"},
    {R"("background":true,"store":false)", "'background' requires 'store': true (a background run is kept to be polled)",
     "background", "invalid_value"},
    {R"("approval_format":"sse")", "'approval_format' must be 'mcp' or 'stream'", "approval_format", "invalid_value"},
    {R"("approval_format":1)", "'approval_format' must be 'mcp' or 'stream'", "approval_format", "invalid_value"},
    {R"("previous_response_id":"")", "'previous_response_id' must be a response id, not string",
     "previous_response_id", "invalid_type"},
    {R"("conversation":"c1")", "'conversation' is not supported; chain responses with 'previous_response_id'",
     "conversation", "invalid_value"},
    {R"("prompt":{})", "'prompt' is not supported; chain responses with 'previous_response_id'", "prompt",
     "invalid_value"},
    {R"("instructions":5)", "'instructions' must be a string, not integer", "instructions", "invalid_type"},
    {R"("metadata":{"a":1})", "'metadata.a' must be a string, not integer", "metadata.a", "invalid_type"},
    {R"("temperature":2.5)", "'temperature' must be between 0.0 and 2.0, got 2.5", "temperature", "invalid_value"},
    {R"("max_output_tokens":0)", "'max_output_tokens' must be between 1 and 1099511627776, got 0", "max_output_tokens",
     "invalid_value"},
    // order: the flags before the input, the input before the sampling fields
    {R"("store":1,"conversation":"c")", "'store' must be a boolean, not integer", "store", "invalid_type"},
    {R"("background":true,"store":false,"approval_format":"x")",
     "'background' requires 'store': true (a background run is kept to be polled)", "background", "invalid_value"},
    {R"("temperature":9,"tools":7)", "'tools' must be a list of tools, not integer", "tools", "invalid_type"},
};

TEST(ResponsesFieldTable, EachFieldAnswersAsBefore) {
  for (const auto& r : k_rows) {
    const std::string body = std::string(R"({"model":"m","input":"hi",)") + r.extra + "}";
    auto parsed = parse_responses_request(body, {});
    ASSERT_FALSE(parsed.ok()) << body;
    EXPECT_EQ(parsed.error().code, errc::invalid_request) << body;
    EXPECT_EQ(parsed.error().message, r.message) << body;
    EXPECT_EQ(parsed.error().param, r.param) << body;
    EXPECT_EQ(parsed.error().type_code, r.code) << body;
  }
}

TEST(ResponsesFieldTable, FlagsAreReadAfterTheyPass) {
  auto r = parse_responses_request(
      R"({"model":"m","input":"hi","store":false,"stream":true,"parallel_tool_calls":false,"approval_format":"mcp",)"
      R"("previous_response_id":"resp_1","instructions":"be brief","temperature":0.5,"max_output_tokens":9})",
      {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->store);
  EXPECT_TRUE(r->stream);
  EXPECT_FALSE(r->background);
  EXPECT_EQ(r->conv.parallel_tool_calls, std::optional<bool>(false));
  EXPECT_TRUE(r->approval_mcp);
  EXPECT_EQ(r->previous_response_id, "resp_1");
  EXPECT_EQ(r->instructions, "be brief");
  EXPECT_EQ(r->conv.sampling.temperature, std::optional<double>(0.5));
  EXPECT_EQ(r->conv.sampling.max_tokens, std::optional<std::int64_t>(9));
  r = parse_responses_request(R"({"model":"m","input":"hi"})", {});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->store);
  EXPECT_FALSE(r->stream);
  EXPECT_FALSE(r->approval_mcp);
}

}  // namespace
}  // namespace warden::api::responses
