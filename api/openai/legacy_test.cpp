#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <vector>

#include "api/openai/legacy_handler.h"

namespace warden::api::openai {
namespace {

struct reject_case {
  std::string body;
  const char* param;  ///< expected `param`
  const char* code;   ///< expected `type_code`
};

void expect_rejected(const result<completion_request>& r, const reject_case& c) {
  ASSERT_FALSE(r.ok()) << c.body;
  EXPECT_EQ(r.error().code, errc::invalid_request) << c.body;
  EXPECT_EQ(r.error().param, c.param) << c.body << ": " << r.error().message;
  EXPECT_EQ(r.error().type_code, c.code) << c.body << ": " << r.error().message;
  EXPECT_FALSE(r.error().message.empty());
}

void expect_rejected(const result<embedding_request>& r, const reject_case& c) {
  ASSERT_FALSE(r.ok()) << c.body;
  EXPECT_EQ(r.error().code, errc::invalid_request) << c.body;
  EXPECT_EQ(r.error().param, c.param) << c.body << ": " << r.error().message;
  EXPECT_EQ(r.error().type_code, c.code) << c.body << ": " << r.error().message;
}

TEST(CompletionRequest, RejectsBadBodiesWith400AndParam) {
  const std::vector<reject_case> cases = {
      {"", "", "invalid_json"},
      {"[1]", "", "invalid_type"},
      {R"({"prompt":"a","prompt":"b"})", "prompt", "duplicate_key"},
      {"{}", "prompt", "missing_required_parameter"},
      {R"({"prompt":null})", "prompt", "missing_required_parameter"},
      {R"({"prompt":5})", "prompt", "invalid_type"},
      {R"({"prompt":{"text":"x"}})", "prompt", "invalid_type"},
      {R"({"prompt":[]})", "prompt", "invalid_value"},
      {R"({"prompt":["a",1]})", "prompt", "invalid_type"},
      {R"({"prompt":[1,"a"]})", "prompt", "invalid_value"},
      {R"({"prompt":[1,-2]})", "prompt", "invalid_value"},
      {R"({"prompt":[1.5]})", "prompt", "invalid_value"},
      {R"({"prompt":[[1],[]]})", "prompt", "invalid_value"},
      {R"({"prompt":[[1],"a"]})", "prompt", "invalid_type"},
      {R"({"prompt":[true]})", "prompt", "invalid_type"},
      {R"({"prompt":"x","stream":"yes"})", "stream", "invalid_type"},
      {R"({"prompt":"x","max_tokens":-1})", "max_tokens", "invalid_value"},
      {R"({"prompt":"x","max_tokens":1.5})", "max_tokens", "invalid_type"},
      {R"({"prompt":"x","temperature":3})", "temperature", "invalid_value"},
      {R"({"prompt":"x","model":7})", "model", "invalid_type"},
      {R"({"prompt":"x","stop":[1]})", "stop", "invalid_type"},
      {R"({"prompt":"x","echo":"no"})", "echo", "invalid_type"},
      {R"({"prompt":"x","logprobs":21})", "logprobs", "invalid_value"},
      {R"({"prompt":"x","n_probs":1000})", "n_probs", "invalid_value"},
      {R"({"prompt":"x","stream_options":{"include_usage":true}})", "stream_options", "invalid_value"},
      {R"({"prompt":"x","stream":true,"stream_options":{"include_usage":1}})", "stream_options.include_usage",
       "invalid_type"},
      {R"({"prompt":"x","stream":true,"n":2})", "n", "unsupported_parameter"},
  };
  for (const auto& c : cases) expect_rejected(parse_completion_request(c.body), c);
}

TEST(CompletionRequest, AcceptsEveryPromptShapeAndPassesFieldsThrough) {
  for (const char* body : {R"({"prompt":""})", R"({"prompt":"Once upon"})", R"({"prompt":["a",""]})",
                           R"({"prompt":[1,2,3]})", R"({"prompt":[[1,2],[3]]})", R"({"prompt":[0,2147483647]})"}) {
    EXPECT_TRUE(parse_completion_request(body).ok()) << body;
  }
  auto r = parse_completion_request(
      R"({"prompt":"hi","model":"any","max_tokens":0,"stream":true,"stream_options":{"include_usage":true},)"
      R"("top_k":40,"mirostat":2,"stop":["\n"],"seed":-1})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->stream);
  EXPECT_TRUE(r->include_usage);
  EXPECT_EQ(r->body["mirostat"], 2);  // llama.cpp extras pass through
  EXPECT_EQ(r->body["prompt"], "hi");
  auto plain = parse_completion_request(R"({"prompt":"hi","n":2})");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->stream);
  EXPECT_FALSE(plain->include_usage);
}

TEST(EmbeddingRequest, RejectsBadBodiesWith400AndParam) {
  const std::vector<reject_case> cases = {
      {"  ", "", "invalid_json"},
      {"{}", "input", "missing_required_parameter"},
      {R"({"input":""})", "input", "invalid_value"},
      {R"({"input":["a",""]})", "input", "invalid_value"},
      {R"({"input":[]})", "input", "invalid_value"},
      {R"({"input":[[]]})", "input", "invalid_value"},
      {R"({"input":3})", "input", "invalid_type"},
      {R"({"input":[{"text":"a"}]})", "input", "invalid_type"},
      {R"({"input":"a","encoding_format":"int8"})", "encoding_format", "invalid_value"},
      {R"({"input":"a","encoding_format":1})", "encoding_format", "invalid_type"},
      {R"({"input":"a","dimensions":0})", "dimensions", "invalid_value"},
      {R"({"input":"a","dimensions":"8"})", "dimensions", "invalid_type"},
      {R"({"input":"a","user":5})", "user", "invalid_type"},
  };
  for (const auto& c : cases) expect_rejected(parse_embedding_request(c.body), c);
  std::string many = R"({"input":[)";
  for (int i = 0; i < 2049; ++i) many += i ? ",\"x\"" : "\"x\"";
  many += "]}";
  expect_rejected(parse_embedding_request(many), {many, "input", "invalid_value"});
}

TEST(EmbeddingRequest, CountsInputsAndAsksTheUpstreamForFloats) {
  struct {
    const char* body;
    std::size_t count;
  } cases[] = {{R"({"input":"a"})", 1}, {R"({"input":["a","b","c"]})", 3}, {R"({"input":[5,6,7]})", 1},
               {R"({"input":[[5],[6,7]]})", 2}};
  for (const auto& c : cases) {
    auto r = parse_embedding_request(c.body);
    ASSERT_TRUE(r.ok()) << c.body << ": " << r.error().message;
    EXPECT_EQ(r->input_count, c.count) << c.body;
    EXPECT_FALSE(r->base64);
    EXPECT_EQ(r->body["encoding_format"], "float");
  }
  auto r = parse_embedding_request(R"({"input":"a","encoding_format":"base64","dimensions":640,"model":"m"})");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->base64);
  ASSERT_TRUE(r->dimensions.has_value());
  EXPECT_EQ(*r->dimensions, 640);
  EXPECT_FALSE(r->body.contains("dimensions"));
  EXPECT_EQ(r->body["encoding_format"], "float");
}

/// Decodes standard base64 (the test's own, independent of the encoder).
std::vector<unsigned char> decode_base64(const std::string& s) {
  std::vector<unsigned char> out;
  unsigned buf = 0;
  int bits = 0;
  for (char c : s) {
    if (c == '=') break;
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char* at = std::strchr(alphabet, c);
    EXPECT_NE(at, nullptr) << c;
    buf = (buf << 6) | static_cast<unsigned>(at - alphabet);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<unsigned char>((buf >> bits) & 0xFFu));
    }
  }
  return out;
}

TEST(Base64Float32, KnownVectorsAndRoundTrip) {
  EXPECT_EQ(base64_float32({}), "");
  const float one[] = {1.0f};  // 0x3F800000 little-endian: 00 00 80 3F
  EXPECT_EQ(base64_float32(one), "AACAPw==");
  const float two[] = {1.0f, -2.0f};  // ... 00 00 00 C0
  EXPECT_EQ(base64_float32(two), "AACAPwAAAMA=");
  const float three[] = {0.0f, 0.5f, -0.25f};
  EXPECT_EQ(base64_float32(three), "AAAAAAAAAD8AAIC+");
  std::vector<float> v = {0.1f, -3.5e-8f, 123456.789f, std::numeric_limits<float>::denorm_min(), -0.0f};
  const auto bytes = decode_base64(base64_float32(v));
  ASSERT_EQ(bytes.size(), v.size() * 4);
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::uint32_t bits = 0;
    for (int k = 3; k >= 0; --k) bits = (bits << 8) | bytes[i * 4 + static_cast<std::size_t>(k)];
    float f = 0;
    std::memcpy(&f, &bits, sizeof f);
    EXPECT_EQ(std::memcmp(&f, &v[i], sizeof f), 0) << i;
  }
}

embedding_request request_for(const char* body) {
  auto r = parse_embedding_request(body);
  EXPECT_TRUE(r.ok());
  return *r;
}

TEST(EmbeddingResponse, OrdersByIndexAndHasOpenAIsShape) {
  const json up = json::parse(R"({"model":"x","object":"list","usage":{"prompt_tokens":5,"total_tokens":5},
      "data":[{"index":1,"embedding":[0.5,0.25]},{"index":0,"embedding":[1,-2]}]})");
  auto r = embedding_response(up, request_for(R"({"input":["a","b"]})"), "served");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)["object"], "list");
  EXPECT_EQ((*r)["model"], "served");
  EXPECT_EQ((*r)["usage"], json::parse(R"({"prompt_tokens":5,"total_tokens":5})"));
  ASSERT_EQ((*r)["data"].size(), 2u);
  EXPECT_EQ((*r)["data"][0], json::parse(R"({"object":"embedding","index":0,"embedding":[1,-2]})"));
  EXPECT_EQ((*r)["data"][1]["embedding"], json::parse("[0.5,0.25]"));

  auto b = embedding_response(up, request_for(R"({"input":["a","b"],"encoding_format":"base64"})"), "served");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)["data"][0]["embedding"], "AACAPwAAAMA=");
  const json no_usage = json::parse(R"({"data":[{"embedding":[1]}]})");
  auto n = embedding_response(no_usage, request_for(R"({"input":"a"})"), "m");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ((*n)["usage"]["prompt_tokens"], 0);
}

TEST(EmbeddingResponse, DimensionsMustBeTheModelsLength) {
  const json up = json::parse(R"({"data":[{"index":0,"embedding":[1,2,3]}]})");
  EXPECT_TRUE(embedding_response(up, request_for(R"({"input":"a","dimensions":3})"), "m").ok());
  auto r = embedding_response(up, request_for(R"({"input":"a","dimensions":2})"), "m");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, errc::invalid_request);
  EXPECT_EQ(r.error().param, "dimensions");
  EXPECT_NE(r.error().message.find("3"), std::string::npos);
}

TEST(EmbeddingResponse, MalformedUpstreamAnswersAre502) {
  const char* bad[] = {
      R"([])",
      R"({"data":{}})",
      R"({"data":[]})",
      R"({"data":[{"embedding":[1]},{"embedding":[2]}]})",
      R"({"data":[{"embedding":[[1,2]]}]})",
      R"({"data":[{"embedding":[]}]})",
      R"({"data":[{"embedding":"AAAA"}]})",
      R"({"data":[{"index":3,"embedding":[1]}]})",
      R"({"data":[{"index":-1,"embedding":[1]}]})",
  };
  for (const char* b : bad) {
    auto r = embedding_response(json::parse(b), request_for(R"({"input":"a"})"), "m");
    ASSERT_FALSE(r.ok()) << b;
    EXPECT_EQ(r.error().code, errc::upstream_error) << b;
  }
  const json dup = json::parse(R"({"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]})");
  EXPECT_FALSE(embedding_response(dup, request_for(R"({"input":["a","b"]})"), "m").ok());
  const json ragged = json::parse(R"({"data":[{"index":1,"embedding":[1]},{"index":0,"embedding":[2,3]}]})");
  EXPECT_FALSE(embedding_response(ragged, request_for(R"({"input":["a","b"]})"), "m").ok());
}

}  // namespace
}  // namespace warden::api::openai
