#include <gtest/gtest.h>

#include "engine/chat_service.h"

namespace warden::engine {
namespace {

TEST(UpstreamStatusError, AContextOverflowWithCountsSaysThemAndWhatToDo) {
  // llama-server's answer, recorded (tests/e2e/test_context_overflow.py sees it live).
  auto e = upstream_status_error(400, R"({"error":{"code":400,"message":"request (431 tokens) exceeds the available context size (256 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":431,"n_ctx":256}})");
  EXPECT_EQ(e.code, errc::invalid_request);
  EXPECT_EQ(e.type_code, "context_length_exceeded");
  EXPECT_EQ(e.param, "messages");
  EXPECT_NE(e.message.find("needs 431 prompt tokens"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("context size is 256 tokens per slot"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("truncate_oldest"), std::string::npos) << e.message;
}

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

  // The engine refusing warden's own key is the server's fault (502, a pool fails over); a rate
  // limit stays a 429.
  for (const long status : {401L, 403L}) {
    e = upstream_status_error(status, R"({"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}})");
    EXPECT_EQ(e.code, errc::upstream_error) << status;
    EXPECT_NE(e.message.find("HTTP " + std::to_string(status)), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("Incorrect API key provided"), std::string::npos) << e.message;
  }
  e = upstream_status_error(429, R"({"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}})");
  EXPECT_EQ(e.code, errc::too_many_requests);
  EXPECT_NE(e.message.find("Rate limit reached"), std::string::npos) << e.message;

  e = upstream_status_error(404, R"({"detail":"Not Found"})");
  EXPECT_EQ(e.code, errc::invalid_request);
  EXPECT_EQ(e.message, "Not Found");
}

TEST(WithoutUpstreamKey, CutsTheKeyInAnyCaseAndOfAnyLength) {
  const std::vector<std::string> headers = {"Authorization: Bearer sk-LongSecret-0123456789"};
  auto e = without_upstream_key(make_error(errc::upstream_error, "bad key sk-LongSecret-0123456789, and "
                                                                 "again SK-LONGSECRET-0123456789 or sk-longsecret-0123456789"),
                                headers);
  EXPECT_EQ(e.message, "bad key [REDACTED], and again [REDACTED] or [REDACTED]");
  e = without_upstream_key(make_error(errc::upstream_error, "Incorrect API key provided: Bearer Sh0rt7k"),
                           {"Authorization: Bearer Sh0rt7k"});
  EXPECT_EQ(e.message, "Incorrect API key provided: Bearer [REDACTED]");
  e = without_upstream_key(make_error(errc::upstream_error, "no key here"), {});
  EXPECT_EQ(e.message, "no key here");
}

TEST(UpstreamStatusError, RecognisesAContextOverflowByItsCode) {
  struct row {
    const char* body;
    const char* type_code;
  };
  const row rows[] = {
      // llama-server: the type says it, whatever the wording
      {R"({"error":{"code":400,"message":"prompt too long","type":"exceed_context_size_error"}})", "context_length_exceeded"},
      // OpenAI and compatible servers: the code says it
      {R"({"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}})",
       "context_length_exceeded"},
      // no string code: the wording is the fallback
      {R"({"error":{"code":400,"message":"the prompt exceeds the context window"}})", "context_length_exceeded"},
      {R"({"detail":"request exceeds the context size"})", "context_length_exceeded"},
      // another code: the wording alone does not make it an overflow
      {R"({"error":{"message":"the context would exceed a quota","code":"rate_limit_exceeded"}})", ""},
      {R"({"error":{"code":400,"message":"bad temperature","type":"invalid_request_error"}})", ""},
  };
  for (const auto& r : rows) {
    const auto e = upstream_status_error(400, r.body);
    EXPECT_EQ(e.code, errc::invalid_request) << r.body;
    EXPECT_EQ(e.type_code, r.type_code) << r.body;
  }
}

}  // namespace
}  // namespace warden::engine

namespace warden::engine {
namespace {

std::deque<chat_event> read_in_pieces(std::string_view body, std::size_t piece) {
  chunk_reader reader;
  std::deque<chat_event> out;
  for (std::size_t i = 0; i < body.size(); i += piece) reader.take(body.substr(i, piece), out);
  return out;
}

TEST(ChunkReader, ChunksDoneAndErrorFramesWhateverTheSplit) {
  const std::string body = "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\r\n\r\n: ping\n\n"
                           "data: {\"error\":{\"code\":400,\"message\":\"too long\"}}\n\n"
                           "data: {\"choices\":[]}\n\n";
  for (std::size_t piece : {1u, 7u, 1000u}) {
    const auto events = read_in_pieces(body, piece);
    ASSERT_EQ(events.size(), 2u) << piece;
    EXPECT_EQ(events[0].type, chat_event::kind::chunk);
    EXPECT_EQ(events[0].raw, R"({"choices":[{"delta":{"content":"hi"}}]})");
    EXPECT_EQ(events[1].type, chat_event::kind::failed);
    EXPECT_EQ(events[1].failure->code, errc::invalid_request);
    EXPECT_NE(events[1].failure->message.find("too long"), std::string::npos);
  }
}

TEST(ChunkReader, AMalformedFrameFailsAndDoneEndsTheStream) {
  chunk_reader reader;
  std::deque<chat_event> out;
  reader.take("data: [DONE]\n\ndata: {}\n\n", out);
  EXPECT_TRUE(reader.saw_done());
  EXPECT_TRUE(out.empty());
  chunk_reader bad;
  bad.take("data: {\"choices\":\n\n", out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type, chat_event::kind::failed);
  EXPECT_TRUE(bad.saw_done());
}

}  // namespace
}  // namespace warden::engine
