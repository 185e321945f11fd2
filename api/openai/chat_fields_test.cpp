// The chat field table (chat_request.cpp) answers each faulty field with the same 400 as the
// if-chain it replaced: message, param and code byte for byte, first fault first.
#include <gtest/gtest.h>

#include <string>

#include "api/openai/chat_request.h"

namespace warden::api::openai {
namespace {

struct row {
  const char* extra;    ///< fields added to a valid body
  const char* message;
  const char* param;
  const char* code;
};

const row k_rows[] = {
    {R"("model":7)", "'model' must be a string, not integer", "model", "invalid_type"},
    {R"("temperature":3)", "'temperature' must be between 0.0 and 2.0, got 3", "temperature", "invalid_value"},
    {R"("top_p":1.5)", "'top_p' must be between 0.0 and 1.0, got 1.5", "top_p", "invalid_value"},
    {R"("min_p":-0.1)", "'min_p' must be between 0.0 and 1.0, got -0.1", "min_p", "invalid_value"},
    {R"("presence_penalty":"x")", "'presence_penalty' must be a number, not string", "presence_penalty", "invalid_type"},
    {R"("frequency_penalty":-2.5)", "'frequency_penalty' must be between -2.0 and 2.0, got -2.5", "frequency_penalty",
     "invalid_value"},
    {R"("repetition_penalty":2.5)", "'repetition_penalty' must be between 0.0 and 2.0, got 2.5", "repetition_penalty",
     "invalid_value"},
    {R"("max_tokens":0)", "'max_tokens' must be between 1 and 2147483647, got 0", "max_tokens", "invalid_value"},
    {R"("max_completion_tokens":-1)", "'max_completion_tokens' must be between 1 and 2147483647, got -1",
     "max_completion_tokens", "invalid_value"},
    {R"("max_completion_tokens":4294967296)", "'max_completion_tokens' must be at most 2147483647",
     "max_completion_tokens", "invalid_value"},
    {R"("n":200)", "'n' must be at most 128", "n", "invalid_value"},
    {R"("top_k":-2)", "'top_k' must be between -1 and 100000, got -2", "top_k", "invalid_value"},
    {R"("seed":"x")", "'seed' must be an integer, not string", "seed", "invalid_type"},
    {R"("logprobs":1)", "'logprobs' must be a boolean, not integer", "logprobs", "invalid_type"},
    {R"("top_logprobs":21)", "'top_logprobs' must be at most 20", "top_logprobs", "invalid_value"},
    {R"("n_probs":101)", "'n_probs' must be at most 100", "n_probs", "invalid_value"},
    {R"("parallel_tool_calls":"no")", "'parallel_tool_calls' must be a boolean, not string", "parallel_tool_calls",
     "invalid_type"},
    {R"("user":5)", "'user' must be a string, not integer", "user", "invalid_type"},
    {R"("response_format":"json")", "'response_format' must be an object, not string", "response_format",
     "invalid_type"},
    {R"("logit_bias":[])", "'logit_bias' must be an object, not array", "logit_bias", "invalid_type"},
    {R"("stream_options":true)", "'stream_options' must be an object, not boolean", "stream_options", "invalid_type"},
    {R"("stop":[1])", "'stop' must be a string or a list of strings, not array", "stop", "invalid_type"},
    // the first fault in table order wins
    {R"("top_p":2,"temperature":3)", "'temperature' must be between 0.0 and 2.0, got 3", "temperature", "invalid_value"},
    {R"("max_completion_tokens":0,"max_tokens":0)", "'max_tokens' must be between 1 and 2147483647, got 0", "max_tokens",
     "invalid_value"},
    {R"("tools":7,"stop":7)", "'stop' must be a string or a list of strings, not integer", "stop", "invalid_type"},
};

TEST(ChatFieldTable, EachFieldAnswersAsBefore) {
  for (const auto& r : k_rows) {
    const std::string body = std::string(R"({"messages":[{"role":"user","content":"hi"}],)") + r.extra + "}";
    auto parsed = parse_chat_request(body);
    ASSERT_FALSE(parsed.ok()) << body;
    EXPECT_EQ(parsed.error().code, errc::invalid_request) << body;
    EXPECT_EQ(parsed.error().message, r.message) << body;
    EXPECT_EQ(parsed.error().param, r.param) << body;
    EXPECT_EQ(parsed.error().type_code, r.code) << body;
  }
}

TEST(ChatFieldTable, MessagesAreCheckedFirstAndNulledFieldsPass) {
  auto r = parse_chat_request(R"({"temperature":3})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().param, "messages");
  r = parse_chat_request(
      R"({"messages":[{"role":"user","content":"hi"}],"temperature":null,"max_completion_tokens":null,"seed":null})");
  EXPECT_TRUE(r.ok());
}

}  // namespace
}  // namespace warden::api::openai
