// api/anthropic/json_prefix.h: what a client reassembles from input_json_delta always parses as
// a JSON object, and equals the model's arguments whenever those were a valid object.
#include <gtest/gtest.h>

#include <random>

#include "api/anthropic/json_prefix.h"
#include "common/json_util.h"

namespace warden::api::anthropic {
namespace {

/// Feeds `text` in pieces; returns accepted pieces + closing().
std::string reassemble(const std::string& text, std::mt19937& rng) {
  json_object_prefix p;
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 7)(rng);
    const std::string piece = text.substr(at, n);
    at += n;
    if (p.feed(piece)) out += piece;
  }
  return out + p.closing();
}

TEST(JsonObjectPrefix, ValidObjectsPassUnchanged) {
  std::mt19937 rng(7);
  for (const char* text : {R"({})", R"({"city":"Paris"})", R"( {"a":[1,-2.5e+3,true,false,null,{"b":"\u00e9\ud83d\ude00\n"}]} )",
                           R"({"nested":{"x":[[],{}]},"s":"q\"uote"})"}) {
    json_object_prefix p;
    ASSERT_TRUE(p.feed(text)) << text;
    EXPECT_TRUE(p.complete()) << text;
    EXPECT_EQ(p.closing(), "") << text;
    EXPECT_EQ(reassemble(text, rng), text);
  }
}

TEST(JsonObjectPrefix, CutOffArgumentsAreClosed) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "{}"},
      {"{", "{}"},
      {R"({"a")", R"({"a":null})"},
      {R"({"a":)", R"({"a":null})"},
      {R"({"a":"x)", R"({"a":"x"})"},
      {R"({"a":"x\)", R"({"a":"x\n"})"},
      {R"({"a":"\u00)", R"({"a":"\u0000"})"},
      {R"({"a":"\ud83d)", R"({"a":"\ud83d\udc00"})"},
      {R"({"a":"\ud83d\u)", R"({"a":"\ud83d\udc00"})"},
      {R"({"a":1.)", R"({"a":1.0})"},
      {R"({"a":-)", R"({"a":-0})"},
      {R"({"a":tr)", R"({"a":true})"},
      {R"({"a":[1,)", R"({"a":[1,null]})"},
      {R"({"a":1,)", R"({"a":1,"_":null})"},
      {R"({"a":{"b":[{"c)", R"({"a":{"b":[{"c":null}]}})"},
  };
  for (const auto& [fed, want] : cases) {
    json_object_prefix p;
    ASSERT_TRUE(p.feed(fed)) << fed;
    EXPECT_EQ(std::string(fed) + p.closing(), want) << fed;
    EXPECT_TRUE(parse_json(want).has_value()) << want;
  }
}

TEST(JsonObjectPrefix, RefusesWhatCanNeverBeAnObject) {
  for (const char* text : {"[1,2]", "\"s\"", "42", R"({"a":1} trailing)", R"({"a":"\ud800x"})", R"({"a":"\udc00"})",
                           "{\"a\":\"\x01\"}", R"({"a":01})", R"({"a":tx})", R"({a:1})", R"({"a" 1})", R"({"a":1,})",
                           R"({"a":"\q"})"}) {
    json_object_prefix p;
    EXPECT_FALSE(p.feed(text)) << text;
  }
  json_object_prefix p;  // a refused feed changes nothing
  ASSERT_TRUE(p.feed(R"({"a":)"));
  EXPECT_FALSE(p.feed("]"));
  EXPECT_TRUE(p.feed("1}"));
  EXPECT_TRUE(p.complete());
}

TEST(JsonObjectPrefix, AnyByteSoupReassemblesToAnObject) {
  std::mt19937 rng(11);
  const std::string alphabet = "{}[]:,\"\\u0123456789abcdefDdEe.-+ truefalsn\x01";
  for (int i = 0; i < 5000; ++i) {
    std::string text = i % 2 ? "{\"k\":" : "";
    const std::size_t len = std::uniform_int_distribution<std::size_t>(0, 40)(rng);
    for (std::size_t k = 0; k < len; ++k) text += alphabet[std::uniform_int_distribution<std::size_t>(0, alphabet.size() - 1)(rng)];
    const std::string got = reassemble(text, rng);
    auto parsed = parse_json(got);
    ASSERT_TRUE(parsed.has_value() && parsed->is_object()) << "from " << json(text).dump() << " got " << json(got).dump();
  }
}

}  // namespace
}  // namespace warden::api::anthropic
