// api/wire/json_prefix.h: what a client reassembles from input_json_delta always parses as
// a JSON object, and equals the model's arguments whenever those were a valid object.
#include <gtest/gtest.h>

#include <random>

#include "api/wire/json_prefix.h"
#include "common/json_util.h"

namespace warden::api::wire {
namespace {

/// Feeds `text` in pieces as the stream renderer does: sends up to the safe point, then closing().
std::string reassemble(const std::string& text, std::mt19937& rng) {
  json_object_prefix p;
  std::string accepted;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 7)(rng);
    const std::string piece = text.substr(at, n);
    at += n;
    accepted += piece.substr(0, p.feed(piece));
  }
  return accepted.substr(0, p.safe_length()) + p.closing();
}

std::string whole(const std::string& text) {
  json_object_prefix p;
  const std::size_t n = p.feed(text);
  return text.substr(0, n).substr(0, p.safe_length()) + p.closing();
}

TEST(JsonObjectPrefix, ValidObjectsPassUnchanged) {
  std::mt19937 rng(7);
  for (const char* text : {R"({})", R"({"city":"Paris"})", R"( {"a":[1,-2.5e+3,true,false,null,{"b":"\u00e9\ud83d\ude00\n"}]} )",
                           R"({"nested":{"x":[[],{}]},"s":"q\"uote"})"}) {
    json_object_prefix p;
    ASSERT_EQ(p.feed(text), std::string(text).size()) << text;
    EXPECT_TRUE(p.complete()) << text;
    EXPECT_EQ(p.closing(), "") << text;
    std::string want = text;
    want.erase(want.find_last_not_of(' ') + 1);  // trailing whitespace is never sent
    EXPECT_EQ(reassemble(text, rng), want);
  }
}

TEST(JsonObjectPrefix, CutOffArgumentsCloseWithoutInventingValues) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "{}"},
      {"   ", "{}"},
      {"{", "{}"},
      {R"({"a")", R"({})"},
      {R"({"a":)", R"({})"},
      {R"({"a":"x)", R"({"a":"x"})"},
      {R"({"a":"x\)", R"({"a":"x"})"},
      {R"({"a":"\u00)", R"({"a":""})"},
      {R"({"a":"y\ud83d)", R"({"a":"y"})"},
      {R"({"a":"\ud83d\u)", R"({"a":""})"},
      {R"({"a":1.)", R"({})"},
      {R"({"a":12)", R"({})"},
      {R"({"a":tr)", R"({})"},
      {R"({"a":true)", R"({})"},
      {R"({"a":true,"b":[1,)", R"({"a":true,"b":[1]})"},
      {R"({"a":1,)", R"({"a":1})"},
      {R"({"a":{"b":[{"c)", R"({"a":{"b":[{}]}})"},
      {R"({"a":1}{"b":2})", R"({"a":1})"},
      {R"({"a":"x"} trailing)", R"({"a":"x"})"},
      {R"({"a":"\ud800x"})", R"({"a":""})"},
      {"[1,2]", "{}"},
  };
  for (const auto& [fed, want] : cases) {
    EXPECT_EQ(whole(fed), want) << fed;
    EXPECT_TRUE(parse_json(want).has_value()) << want;
  }
}

TEST(JsonObjectPrefix, RefusesWhatCanNeverBeAnObject) {
  for (const char* text : {"[1,2]", "\"s\"", "42", R"({"a":1} trailing)", R"({"a":"\ud800x"})", R"({"a":"\udc00"})",
                           "{\"a\":\"\x01\"}", R"({"a":01})", R"({"a":tx})", R"({a:1})", R"({"a" 1})", R"({"a":1,})",
                           R"({"a":"\q"})", R"({"a":1e999})"}) {
    json_object_prefix p;
    EXPECT_LT(p.feed(text), std::string(text).size()) << text;
  }
  json_object_prefix p;  // after a refused byte nothing more is accepted
  ASSERT_EQ(p.feed(R"({"a":)"), 5u);
  EXPECT_EQ(p.feed("]1}"), 0u);
  EXPECT_EQ(p.feed("1}"), 0u);
  EXPECT_EQ(p.closing(), "}");
}

TEST(JsonObjectPrefix, NestingIsLimited) {
  std::string deep = "{\"a\":";
  for (std::size_t i = 0; i < 300; ++i) deep += "[";
  json_object_prefix p;
  EXPECT_EQ(p.feed(deep), 5 + json_object_prefix::k_max_depth - 1);  // the object itself is one level
  EXPECT_TRUE(parse_json(whole(deep)).has_value());
}

TEST(JsonObjectPrefix, AnyByteSoupReassemblesToAnObjectThatStartsWithABrace) {
  std::mt19937 rng(11);
  const std::string alphabet = "{}[]:,\"\\u0123456789abcdefDdEe.-+ truefalsn\x01";
  for (int i = 0; i < 5000; ++i) {
    std::string text = i % 2 ? "{\"k\":" : "";
    const std::size_t len = std::uniform_int_distribution<std::size_t>(0, 40)(rng);
    for (std::size_t k = 0; k < len; ++k) text += alphabet[std::uniform_int_distribution<std::size_t>(0, alphabet.size() - 1)(rng)];
    const std::string got = reassemble(text, rng);
    auto parsed = parse_json(got);
    ASSERT_TRUE(parsed.has_value() && parsed->is_object()) << "from " << json(text).dump() << " got " << json(got).dump();
    ASSERT_EQ(got.find_first_not_of(" \t\r\n"), got.find('{')) << got;
  }
}

}  // namespace
}  // namespace warden::api::wire
