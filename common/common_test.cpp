#include <gtest/gtest.h>

#include "common/config.h"
#include "common/error.h"
#include "common/json_util.h"
#include "common/sse.h"

namespace warden {
namespace {

const option_spec& spec(const std::string& key) {
  for (const auto& s : config_table()) {
    if (key == s.key) return s;
  }
  throw std::runtime_error("no spec " + key);
}

TEST(ErrorStatus, MapsEveryCode) {
  EXPECT_EQ(http_status(errc::invalid_request), 400);
  EXPECT_EQ(http_status(errc::payload_too_large), 413);
  EXPECT_EQ(http_status(errc::unauthorized), 401);
  EXPECT_EQ(http_status(errc::not_found), 404);
  EXPECT_EQ(http_status(errc::method_not_allowed), 405);
  EXPECT_EQ(http_status(errc::upstream_unavailable), 503);
  EXPECT_EQ(http_status(errc::upstream_error), 502);
  EXPECT_EQ(http_status(errc::internal), 500);
  EXPECT_EQ(http_status(errc::forbidden), 403);
  EXPECT_EQ(http_status(errc::unsupported_media_type), 415);
  EXPECT_STREQ(to_string(errc::upstream_unavailable), "upstream_unavailable");
}

TEST(ConfigTable, EveryRowHasFlagEnvAndHelp) {
  for (const auto& s : config_table()) {
    EXPECT_EQ(std::string(s.flag).rfind("--", 0), 0u) << s.key;
    EXPECT_EQ(std::string(s.env).rfind("WARDEN_", 0), 0u) << s.key;
    EXPECT_FALSE(std::string(s.help).empty()) << s.key;
  }
}

TEST(ConfigTable, AppliesGoodValues) {
  config c;
  ASSERT_TRUE(apply_option(c, spec("port"), "9000").ok());
  ASSERT_TRUE(apply_option(c, spec("parallel"), "8").ok());
  ASSERT_TRUE(apply_option(c, spec("upstream"), "http://127.0.0.1:8080/v1").ok());
  ASSERT_TRUE(apply_option(c, spec("log_level"), "debug").ok());
  EXPECT_EQ(c.port, 9000);
  EXPECT_EQ(c.parallel_slots, 8);
  EXPECT_EQ(c.upstream_url, "http://127.0.0.1:8080/v1");
  EXPECT_EQ(c.log_level, "debug");
}

TEST(ConfigTable, ListsFlagsAndPermission) {
  config c;
  ASSERT_TRUE(apply_option(c, spec("allowed_hosts"), " Warden.LAN, box:7000 ,,[::1]:9").ok());
  EXPECT_EQ(c.allowed_hosts, (std::vector<std::string>{"warden.lan", "box:7000", "[::1]:9"}));
  ASSERT_TRUE(apply_option(c, spec("allowed_origins"), "http://localhost:3000,HTTPS://App.Example").ok());
  EXPECT_EQ(c.allowed_origins, (std::vector<std::string>{"http://localhost:3000", "https://app.example"}));
  EXPECT_FALSE(c.insecure_no_auth);
  ASSERT_TRUE(apply_option(c, spec("insecure_no_auth"), "yes").ok());
  EXPECT_TRUE(c.insecure_no_auth);
  ASSERT_TRUE(apply_option(c, spec("insecure_no_auth"), "0").ok());
  EXPECT_FALSE(c.insecure_no_auth);
  EXPECT_EQ(c.max_permission, "full");  // the reference's behaviour is the default
  ASSERT_TRUE(apply_option(c, spec("max_permission"), "ask").ok());
  EXPECT_EQ(c.max_permission, "ask");
}

struct bad_case {
  const char* key;
  const char* value;
};

TEST(ConfigTable, RejectsBadValuesNamingFlagAndVariable) {
  const bad_case cases[] = {{"port", "abc"},      {"port", "70000"},     {"port", "-1"},
                            {"port", "80x"},      {"port", ""},          {"parallel", "0"},
                            {"parallel", "65"},   {"ctx", "12"},         {"upstream", "ftp://x"},
                            {"log_level", "loud"}, {"load_timeout_s", "0"}, {"host", ""},
                            {"max_permission", "everything"}, {"max_permission", "FULL"},
                            {"insecure_no_auth", "maybe"}, {"allowed_hosts", "http://x"},
                            {"allowed_hosts", "a/b"}, {"allowed_hosts", "x:0"}, {"allowed_hosts", "ok, bad host"},
                            {"allowed_origins", "null"}, {"allowed_origins", "*"},
                            {"allowed_origins", "localhost:3000"}, {"allowed_origins", "http://x:3000/path"}};
  for (const auto& bc : cases) {
    config c;
    auto r = apply_option(c, spec(bc.key), bc.value);
    ASSERT_FALSE(r.ok()) << bc.key << "=" << bc.value;
    EXPECT_EQ(r.error().code, errc::invalid_request);
    EXPECT_NE(r.error().message.find(spec(bc.key).flag), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(spec(bc.key).env), std::string::npos) << r.error().message;
  }
}

TEST(ConfigFinalize, DerivesDefaultsAndRejectsModelWithUpstream) {
  config c;
  ASSERT_TRUE(finalize(c, "/home/u").ok());
  EXPECT_EQ(c.home, "/home/u/.cache/warden");
  EXPECT_EQ(c.model_path, "/home/u/.cache/warden/models/SmolLM2-135M-Instruct.Q4_1.gguf");
  EXPECT_EQ(c.model_id, "SmolLM2-135M-Instruct.Q4_1");
  EXPECT_EQ(c.llama_server_path, "/home/u/.cache/warden/llama.cpp/3.21.1/bin/llama-server");

  config both;
  both.model_path = "/m.gguf";
  both.upstream_url = "http://x/v1";
  auto r = finalize(both, "/home/u");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().param, "upstream");

  config up;
  up.upstream_url = "http://x:1/v1///";
  ASSERT_TRUE(finalize(up, "/h").ok());
  EXPECT_EQ(up.upstream_url, "http://x:1/v1");
  EXPECT_TRUE(up.model_path.empty());
}

TEST(Utf8, ValidatesStrictly) {
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9 \xf0\x9f\x9a\x80"));
  EXPECT_FALSE(is_valid_utf8("\xff\xfe"));
  EXPECT_FALSE(is_valid_utf8("\xc3"));                  // truncated
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));              // overlong
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));          // surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));      // > U+10FFFF
}

TEST(JsonUtil, DumpSafeReplacesInvalidUtf8) {
  json j = {{"t", std::string("a\xff" "b")}};
  EXPECT_EQ(dump_safe(j), "{\"t\":\"a\xef\xbf\xbd" "b\"}");
  EXPECT_FALSE(parse_json("{").has_value());
  EXPECT_TRUE(parse_json("{\"a\":1}").has_value());
}

TEST(JsonUtil, NestingDepthSkipsStringsAndStopsAtTheLimit) {
  EXPECT_EQ(json_nesting_depth("{}", 10), 1u);
  EXPECT_EQ(json_nesting_depth(R"({"a":[1,{"b":[]}]})", 10), 4u);
  EXPECT_EQ(json_nesting_depth(R"({"s":"[[[[\"[[["})", 10), 1u);
  EXPECT_EQ(json_nesting_depth(std::string(1000, '['), 5), 6u);
  EXPECT_FALSE(parse_json(std::string(5000, '[') + std::string(5000, ']')).has_value());
}

TEST(SseFrame, DataCommentDone) {
  EXPECT_EQ(sse::data_frame("{\"a\":1}"), "data: {\"a\":1}\n\n");
  EXPECT_EQ(sse::data_frame("l1\nl2"), "data: l1\ndata: l2\n\n");
  EXPECT_EQ(sse::data_frame(""), "data: \n\n");
  EXPECT_EQ(sse::comment_frame("ping"), ": ping\n\n");
  EXPECT_EQ(sse::comment_frame("a\nb"), ": a b\n\n");
  EXPECT_EQ(sse::done_frame(), "data: [DONE]\n\n");
}

TEST(SseParser, SplitsAtAnyByteAndHandlesCrlfCommentsAndMultiline) {
  const std::string stream =
      ": keep-alive\r\n\r\n"
      "data: {\"a\":1}\r\n\r\n"
      "event: message\ndata: x\ndata: y\n\n"
      "data:nospace\n\n"
      "data: [DONE]\n\n";
  // Feed the same bytes split at every position: the result must not depend on the split.
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    sse::parser p;
    auto ev = p.feed(std::string_view(stream).substr(0, cut));
    auto rest = p.feed(std::string_view(stream).substr(cut));
    ev.insert(ev.end(), rest.begin(), rest.end());
    ASSERT_EQ(ev.size(), 4u) << "cut at " << cut;
    EXPECT_EQ(ev[0].data, "{\"a\":1}");
    EXPECT_EQ(ev[1].name, "message");
    EXPECT_EQ(ev[1].data, "x\ny");
    EXPECT_EQ(ev[2].data, "nospace");
    EXPECT_EQ(ev[3].data, "[DONE]");
    EXPECT_FALSE(p.has_partial());
  }
}

TEST(SseParser, ReportsPartialAndOversizedEvents) {
  sse::parser p;
  EXPECT_TRUE(p.feed("data: {\"trunc").empty());
  EXPECT_TRUE(p.has_partial());

  sse::parser small(16);
  small.feed("data: 0123456789abcdefghijklmnop\n\n");
  EXPECT_TRUE(small.failed());
}

}  // namespace
}  // namespace warden
